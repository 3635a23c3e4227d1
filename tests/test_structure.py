"""Tests for jaxnb.methods.structure: TAN trees, Gaussian and discrete TAN, semi-naive Bayes."""

import itertools
import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.methods import structure as S

# --------------------------------------------------------------------------------------------------
# NumPy references
# --------------------------------------------------------------------------------------------------


def _ref_class_moments(x, y, w, c):
    mean, cov, nc = [], [], []
    for k in range(c):
        s = y == k
        wk = w[s]
        m = (wk[:, None] * x[s]).sum(0) / wk.sum()
        d = x[s] - m
        cov.append((wk[:, None, None] * d[:, :, None] * d[:, None, :]).sum(0) / wk.sum())
        mean.append(m)
        nc.append(wk.sum())
    return np.array(nc), np.array(mean), np.array(cov)


def _all_spanning_trees(p):
    """Every labelled tree on p nodes as a set of edges, from Prüfer sequences."""
    if p == 1:
        yield frozenset()
        return
    if p == 2:
        yield frozenset({(0, 1)})
        return
    for seq in itertools.product(range(p), repeat=p - 2):
        degree = [1] * p
        for v in seq:
            degree[v] += 1
        edges = []
        seq = list(seq)
        for v in seq:
            leaf = min(i for i in range(p) if degree[i] == 1)
            edges.append((min(leaf, v), max(leaf, v)))
            degree[leaf] -= 1
            degree[v] -= 1
        u, v = [i for i in range(p) if degree[i] == 1]
        edges.append((u, v))
        yield frozenset(edges)


def _edges_from_parent(parent):
    return frozenset((min(i, int(q)), max(i, int(q))) for i, q in enumerate(parent) if q >= 0)


def _gaussian_data(seed, n=400, p=4, c=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n).astype(np.int32)
    a = rng.normal(size=(c, p, p))
    mu = rng.normal(size=(c, p))
    z = rng.normal(size=(n, p))
    x = mu[y] + np.einsum("nij,nj->ni", a[y], z)
    return x, y


# --------------------------------------------------------------------------------------------------
# Gaussian conditional mutual information
# --------------------------------------------------------------------------------------------------
def test_conditional_mutual_information_gaussian_matches_reference():
    x, y = _gaussian_data(0)
    w = np.random.default_rng(1).uniform(0.5, 2, len(y))
    got = np.asarray(S.conditional_mutual_information_gaussian(x, y, 2, w))
    nc, _, cov = _ref_class_moments(x, y, w, 2)
    p = x.shape[1]
    ref = np.zeros((p, p))
    for i, j in itertools.product(range(p), range(p)):
        if i != j:
            for k in range(2):
                rho = cov[k, i, j] / math.sqrt(cov[k, i, i] * cov[k, j, j])
                ref[i, j] -= 0.5 * nc[k] / nc.sum() * math.log(1 - rho**2)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(got, got.T, rtol=1e-12)


# --------------------------------------------------------------------------------------------------
# Chow-Liu tree
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [2, 3, 4, 5, 6])
def test_maximum_spanning_tree_vs_brute_force(p):
    trees = list(_all_spanning_trees(p))
    assert len(trees) == p ** (p - 2)  # Cayley's formula checks the enumeration
    mst = jax.jit(S.maximum_spanning_tree)
    rng = np.random.default_rng(p)
    for trial in range(4):
        w = rng.normal(size=(p, p))
        w = w + w.T
        best = max(trees, key=lambda t, w=w: sum(w[e] for e in t))
        root = trial % p
        parent = np.asarray(mst(w, root))
        assert parent[root] == -1 and (parent >= 0).sum() == p - 1
        # walking up from any node reaches the root: a tree rooted at `root`
        for i in range(p):
            seen, v = 0, i
            while v != root:
                v = parent[v]
                seen += 1
                assert seen < p
        assert _edges_from_parent(parent) == best
        np.testing.assert_allclose(S.tree_weight(parent, w), sum(w[e] for e in best), rtol=1e-12)


def test_chow_liu_on_gaussian_cmi_recovers_chain():
    # X0 -> X1 -> X2 -> X3 chain within each class: the max-CMI tree is the chain
    rng = np.random.default_rng(3)
    n = 2000
    y = rng.integers(0, 2, n).astype(np.int32)
    x = np.zeros((n, 4))
    x[:, 0] = rng.normal(size=n) + y
    for j in range(1, 4):
        x[:, j] = 0.8 * x[:, j - 1] + 0.6 * rng.normal(size=n)
    parent = np.asarray(S.maximum_spanning_tree(S.conditional_mutual_information_gaussian(x, y, 2)))
    np.testing.assert_array_equal(parent, [-1, 0, 1, 2])


# --------------------------------------------------------------------------------------------------
# Gaussian TAN
# --------------------------------------------------------------------------------------------------
def _ref_gaussian_tan_log_joint(x_train, y_train, w, parent, c, x_test):
    nc, mean, cov = _ref_class_moments(x_train, y_train, w, c)
    out = np.zeros((x_test.shape[0], c))
    for k in range(c):
        out[:, k] = math.log(nc[k] / nc.sum())
        for i, par in enumerate(parent):
            if par < 0:
                loc = np.full(x_test.shape[0], mean[k, i])
                var = cov[k, i, i]
            else:
                # weighted least squares of X_i on X_par within class k
                s = y_train == k
                design = np.stack([np.ones(s.sum()), x_train[s, par]], 1)
                sw = np.sqrt(w[s])
                coef = np.linalg.lstsq(design * sw[:, None], x_train[s, i] * sw, rcond=None)[0]
                resid = x_train[s, i] - design @ coef
                var = (w[s] * resid**2).sum() / w[s].sum()
                loc = coef[0] + coef[1] * x_test[:, par]
            out[:, k] += -0.5 * (np.log(2 * np.pi * var) + (x_test[:, i] - loc) ** 2 / var)
    return out


def test_gaussian_tan_log_joint_matches_reference():
    x, y = _gaussian_data(4, p=4, c=3)
    w = np.random.default_rng(5).uniform(0.5, 2, len(y))
    parent = np.array([2, -1, 1, 2], np.int32)
    params = S.fit_gaussian_tan(x, y, parent, 3, w, var_floor=0.0)
    got = np.asarray(S.gaussian_tan_log_joint(params, x[:50]))
    ref = _ref_gaussian_tan_log_joint(x, y, w, parent, 3, x[:50])
    np.testing.assert_allclose(got, ref, rtol=1e-9)
    contrib = S.gaussian_tan_log_contributions(params, x[:50])
    assert contrib.shape == (50, 4, 3)
    # the all-roots tree is Gaussian NB
    nb = S.fit_gaussian_tan(x, y, np.full(4, -1, np.int32), 3, w, var_floor=0.0)
    ref_nb = _ref_gaussian_tan_log_joint(x, y, w, [-1] * 4, 3, x[:50])
    np.testing.assert_allclose(S.gaussian_tan_log_joint(nb, x[:50]), ref_nb, rtol=1e-10)


# --------------------------------------------------------------------------------------------------
# discrete TAN
# --------------------------------------------------------------------------------------------------
def test_discrete_tan_cpts_and_log_joint_match_reference():
    rng = np.random.default_rng(6)
    n, states, c, alpha = 300, (2, 3, 4), 2, 0.5
    y = rng.integers(0, c, n).astype(np.int32)
    x0 = (y + rng.integers(0, 2, n)) % 2
    x1 = (x0 + rng.integers(0, 2, n)) % 3
    x2 = (x1 + y + rng.integers(0, 2, n)) % 4
    codes = np.stack([x0, x1, x2], 1).astype(np.int32)
    w = rng.uniform(0.5, 2, n)
    parent = np.array([-1, 0, 1], np.int32)
    params = S.fit_discrete_tan(codes, y, parent, states, c, w, alpha)
    cpt = np.exp(np.asarray(params.log_cpt))
    # child states stacked (rows off[i] + a, K = 9), parent states padded to M = 4 columns
    off = np.array([0, 2, 5])
    assert cpt.shape == (9, 4, c) and params.log_marginal.shape == (9, c)
    # reference CPTs
    for i, par in enumerate(parent):
        for k in range(c):
            for b in range(states[par] if par >= 0 else 1):
                sel = (y == k) & ((codes[:, par] == b) if par >= 0 else True)
                counts = np.array([w[sel & (codes[:, i] == a)].sum() for a in range(states[i])])
                ref = (counts + alpha) / (counts.sum() + alpha * states[i])
                np.testing.assert_allclose(cpt[off[i] : off[i] + states[i], b, k], ref, rtol=1e-12)
            # a parent state that never occurs: the uniform distribution
            for b in range(states[par] if par >= 0 else 1, 4):
                np.testing.assert_allclose(cpt[off[i] : off[i] + states[i], b, k], 1 / states[i])
    # log joint vs a direct NumPy evaluation
    got = np.asarray(S.discrete_tan_log_joint(params, codes[:40]))
    class_w = np.array([w[y == k].sum() for k in range(c)])
    ref = np.tile(np.log(class_w / class_w.sum()), (40, 1))
    for r in range(40):
        for i, par in enumerate(parent):
            b = codes[r, par] if par >= 0 else 0
            ref[r] += np.log(cpt[off[i] + codes[r, i], b, :])
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    # missing child drops its term; missing parent uses P(X_i | C)
    miss = codes[:2].copy()
    miss[0, 2] = -1
    miss[1, 1] = -1  # parent of X2 and child of X0
    contrib = np.asarray(S.discrete_tan_log_contributions(params, miss))
    assert np.all(contrib[0, 2] == 0) and np.all(contrib[1, 1] == 0)
    np.testing.assert_allclose(contrib[1, 2], params.log_marginal[off[2] + miss[1, 2]], rtol=1e-12)


def test_discrete_tan_with_a_many_state_column_scatters_the_same_counts():
    rng = np.random.default_rng(8)
    n, c, alpha = 300, 2, 0.5
    states = (2, 3, 900)  # 3 * 900^2 * 2 CPT entries: above the contraction's limit
    assert 3 * 900 * 900 * c > S._DENSE_CPT_MAX
    y = rng.integers(0, c, n).astype(np.int32)
    x0 = (y + rng.integers(0, 2, n)) % 2
    x1 = (x0 + rng.integers(0, 2, n)) % 3
    x2 = (x1 * 300 + rng.integers(0, 300, n)) % 900
    codes = np.stack([x0, x1, x2], 1).astype(np.int32)
    w = rng.uniform(0.5, 2, n)
    parent = np.array([-1, 0, 1], np.int32)
    cpt = np.exp(np.asarray(S.fit_discrete_tan(codes, y, parent, states, c, w, alpha).log_cpt))
    off = np.array([0, 2, 5])
    assert cpt.shape == (905, 900, c)  # not (3, 900, 900, c): no padded child states
    for i, par in enumerate(parent):
        for k in range(c):
            for b in range(states[par] if par >= 0 else 1):
                sel = (y == k) & ((codes[:, par] == b) if par >= 0 else True)
                counts = np.bincount(codes[sel, i], weights=w[sel], minlength=states[i])
                ref = (counts + alpha) / (counts.sum() + alpha * states[i])
                np.testing.assert_allclose(cpt[off[i] : off[i] + states[i], b, k], ref, rtol=1e-12)
    # both count builders, with missing children and parents (a root's parent code is 0)
    codes[rng.random(codes.shape) < 0.1] = -1
    par_codes = np.where(parent[None, :] >= 0, codes[:, np.clip(parent, 0, None)], 0)
    wy = jax.nn.one_hot(y, c) * w[:, None]
    onehot = jax.nn.one_hot(codes[:, :2], 3)
    par_oh = jax.nn.one_hot(par_codes[:, :2], 3)
    dense = S._tan_counts_dense(onehot, par_oh, wy)  # (q, M, M, c)
    scattered = S._tan_counts_scatter(
        jnp.asarray(codes[:, :2]), jnp.asarray(par_codes[:, :2]), wy, off[:2], 5, 3
    )  # (K, M, c): rows off[i] + a
    seg, local = np.array([0, 0, 1, 1, 1]), np.array([0, 1, 0, 1, 2])
    np.testing.assert_allclose(scattered, dense[seg, local], rtol=1e-12, atol=1e-12)
    assert float(jnp.sum(dense[0, 2:])) == 0  # predictor 0 has 2 states: no count past them
    assert float(jnp.sum(dense)) > 0


# --------------------------------------------------------------------------------------------------
# Gaussian semi-naive Bayes
# --------------------------------------------------------------------------------------------------
def test_group_log_density_matches_per_group_gaussians():
    stats = pytest.importorskip("scipy.stats")
    x, y = _gaussian_data(7, p=5, c=2)
    params = S.fit_gaussian_joint(x, y, 2, ridge=0.0)
    nc, mean, cov = _ref_class_moments(x, y, np.ones(len(y)), 2)
    groups = np.array([1, -1, 1, 0, 2], np.int32)
    got = np.asarray(S.group_log_density(params, groups, x[:30]))
    ref = np.zeros((30, 2))
    for k in range(2):
        for g in (0, 1, 2):
            idx = np.flatnonzero(groups == g)
            ref[:, k] += stats.multivariate_normal(mean[k, idx], cov[k][np.ix_(idx, idx)]).logpdf(
                x[:30][:, idx]
            )
    np.testing.assert_allclose(got, ref, rtol=1e-8)
    # one compiled function serves many structures (vmap over group arrays, traced groups)
    structures = np.array([groups, np.arange(5), np.zeros(5), np.full(5, -1)], np.int32)
    many = jax.jit(jax.vmap(S.seminaive_log_joint, in_axes=(None, 0, None)))(
        params, jnp.asarray(structures), x[:30]
    )
    for row, g in enumerate(structures):
        np.testing.assert_allclose(many[row], S.seminaive_log_joint(params, g, x[:30]), rtol=1e-10)
    np.testing.assert_allclose(many[3], np.tile(params.log_prior, (30, 1)), rtol=1e-12)


def test_one_group_semi_naive_is_scikit_learns_qda():
    """All predictors in one group is quadratic discriminant analysis: with QDA's parameters
    plugged in, the posteriors equal scikit-learn's; and the fitted means and covariances are
    QDA's (its covariance is the MLE in current versions, the unbiased one, N_c / (N_c - 1)
    times larger, in older ones), so the fitted model predicts as QDA does."""
    qda_mod = pytest.importorskip("sklearn.discriminant_analysis")
    x, y = _gaussian_data(3, p=4, c=3)
    qda = qda_mod.QuadraticDiscriminantAnalysis(store_covariance=True).fit(x, y)
    plugged = S.GaussianJointParams(
        log_prior=jnp.log(qda.priors_),
        mean=jnp.asarray(qda.means_),
        cov=jnp.asarray(np.stack(qda.covariance_)),
    )
    one = np.zeros(4, np.int32)
    joint = np.asarray(S.seminaive_log_joint(plugged, one, x))
    post = joint - np.logaddexp.reduce(joint, axis=1, keepdims=True)
    np.testing.assert_allclose(post, qda.predict_log_proba(x), rtol=1e-8, atol=1e-8)

    params = S.fit_gaussian_joint(x, y, 3, ridge=0.0)
    np.testing.assert_allclose(params.mean, qda.means_, rtol=1e-12, atol=1e-13)
    nc = np.bincount(y, minlength=3)
    ratio = np.stack(qda.covariance_) / np.asarray(params.cov)  # (c, p, p): one factor per class
    factor = ratio[:, 0, 0]
    assert np.allclose(factor, 1.0, rtol=1e-12) or np.allclose(factor, nc / (nc - 1), rtol=1e-12)
    # the diagonal also holds the floor f_j = 16 eps x pooled variance (relative ~4e-15)
    np.testing.assert_allclose(
        ratio, np.broadcast_to(factor[:, None, None], ratio.shape), rtol=1e-11
    )
    if np.allclose(factor, 1.0):
        own = np.asarray(S.seminaive_log_joint(params, one, x))
        own = own - np.logaddexp.reduce(own, axis=1, keepdims=True)
        np.testing.assert_allclose(own, qda.predict_log_proba(x), rtol=1e-8, atol=1e-8)


def _correlated_pair_data(seed, n):
    """X0 shifts with the class, X1 has no shift but correlates 0.9 with X0 within each class,
    X2 is a weak independent predictor, X3 is noise. Joining {X0, X1} removes X0's noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(np.int32)
    rho = 0.9
    z0 = rng.normal(size=n)
    z1 = rho * z0 + math.sqrt(1 - rho**2) * rng.normal(size=n)
    x = np.stack([z0 + 1.0 * y, z1, rng.normal(size=n) + 0.5 * y, rng.normal(size=n)], 1)
    return x, y


def test_fssj_joins_the_correlated_pair():
    xt, yt = _correlated_pair_data(0, 1500)
    xv, yv = _correlated_pair_data(1, 1500)
    result = S.forward_sequential_selection_joining(xt, yt, xv, yv, 2)
    g = result.groups
    assert g[0] >= 0 and g[0] == g[1], g  # X0 and X1 in one joint Gaussian
    errors = [h[1] for h in result.history]
    assert all(b < a for a, b in zip(errors, errors[1:], strict=False))
    # the joined model beats Gaussian NB on the same predictors
    params = S.fit_gaussian_joint(xt, yt, 2)
    nb_groups = np.where(g >= 0, np.arange(4), -1)
    err = lambda grp: np.mean(
        np.argmax(np.asarray(S.seminaive_log_joint(params, grp, xv)), 1) != yv
    )
    assert err(g) < err(nb_groups) - 0.03
    np.testing.assert_allclose(result.error, err(g), rtol=1e-12)


def _scratch_search(search, xt, yt, xv, yv, n_classes):
    """Reference search: every candidate structure built and scored from scratch (one
    Cholesky of the whole structure each), in the documented candidate order."""
    params = S.fit_gaussian_joint(xt, yt, n_classes)
    score = S._make_scorer(params, xv, yv, n_classes, None)
    p = xt.shape[1]
    groups = np.full(p, -1, np.int32) if search == "fssj" else np.zeros(p, np.int32)
    err, loss = score(groups[None])
    history = [(groups, float(err[0]), float(loss[0]))]
    while True:
        cands = []
        for i in range(p):
            if search == "fssj" and groups[i] < 0:
                ids = np.unique(groups[groups >= 0]).tolist()
                for g in (max(ids, default=-1) + 1, *ids):
                    cands.append(np.where(np.arange(p) == i, g, groups))
            elif search == "backward" and groups[i] >= 0:
                cands.append(np.where(np.arange(p) == i, -1, groups))
        if not cands:
            break
        cands = np.stack(cands).astype(np.int32)
        err, loss = score(cands)
        best = S._best_candidate(err, loss, score.tie)
        if not err[best] < history[-1][1] - score.tie:
            break
        groups = S.canonical_groups(cands[best])
        history.append((groups, float(err[best]), float(loss[best])))
    return history


@pytest.mark.parametrize("search", ["fssj", "backward"])
def test_semi_naive_incremental_step_scores_equal_scoring_each_structure(search):
    """A step's candidates are scored incrementally (one factorization per target group and
    class, a conditional Gaussian per predictor), not by one Cholesky of each whole structure:
    2000 rows x 200 predictors x 5 classes took minutes per step that way. The search, its
    history and its scores equal the from-scratch reference."""
    xt, yt = _correlated_pair_data(5, 300)
    xv, yv = _correlated_pair_data(6, 300)
    rng = np.random.default_rng(7)
    noise = rng.normal(size=(600, 3))
    xt = np.concatenate([xt, noise[:300], xt[:, :1] + 0.5 * noise[:300, :1]], 1)
    xv = np.concatenate([xv, noise[300:], xv[:, :1] + 0.5 * noise[300:, :1]], 1)
    run = {
        "fssj": S.forward_sequential_selection_joining,
        "backward": S.backward_condensed_search,
    }[search]
    fast = run(xt, yt, xv, yv, 2)
    ref = _scratch_search(search, xt, yt, xv, yv, 2)
    assert len(fast.history) == len(ref) >= 3
    for a, b in zip(fast.history, ref, strict=True):
        np.testing.assert_array_equal(a[0], b[0])
        # 1e-9: a GPU's float64 Cholesky put one log loss 4e-10 from the reference (CPU: 1e-14)
        np.testing.assert_allclose(a[1:], b[1:], rtol=1e-9)


def test_semi_naive_incremental_scores_match_each_structure_everywhere():
    """Every join from a structure with two multi-predictor groups, and every removal from one
    group, scores as the whole structure does: the error exactly (the same predictions), the
    log loss to 1e-10 in float64 and 1e-4 in float32."""
    rng = np.random.default_rng(11)
    n, p, c = 400, 7, 3
    y = rng.integers(0, c, n).astype(np.int32)
    x = rng.normal(size=(n, p)) @ rng.normal(size=(p, p)) + 0.6 * y[:, None]
    groups = np.array([0, 0, -1, 1, 1, 1, -1], np.int32)
    for dtype, rtol in ((np.float64, 1e-10), (np.float32, 1e-4)):
        params = S.fit_gaussian_joint(x.astype(dtype), y, c)
        score = S._make_scorer(params, x[::2].astype(dtype), y[::2], c, None)
        targets = np.array([-2, 0, 1], np.int32)
        err, loss = score.joins(groups, targets)
        unused = np.flatnonzero(groups < 0)
        new_id = groups.max() + 1
        cands = np.array(
            [
                np.where(np.arange(p) == i, (new_id, 0, 1)[k], groups)
                for i in unused
                for k in range(3)
            ]
        )
        ref_err, ref_loss = score(cands)
        np.testing.assert_allclose(err[:, unused].T.ravel(), ref_err, rtol=0, atol=1e-12)
        np.testing.assert_allclose(loss[:, unused].T.ravel(), ref_loss, rtol=rtol)
        one = np.where(groups >= 0, 0, -1).astype(np.int32)
        err, loss = score.removals(one)
        used = np.flatnonzero(one >= 0)
        cands = np.array([np.where(np.arange(p) == i, -1, one) for i in used])
        ref_err, ref_loss = score(cands)
        np.testing.assert_allclose(err[used], ref_err, rtol=0, atol=1e-12)
        np.testing.assert_allclose(loss[used], ref_loss, rtol=rtol)


def test_backward_condensed_search_improves_monotonically():
    xt, yt = _correlated_pair_data(2, 400)
    xv, yv = _correlated_pair_data(3, 400)
    # add four pure-noise predictors that a joint Gaussian over 400 rows only overfits
    rng = np.random.default_rng(4)
    xt = np.concatenate([xt, rng.normal(size=(400, 4))], 1)
    xv = np.concatenate([xv, rng.normal(size=(400, 4))], 1)
    result = S.backward_condensed_search(xt, yt, xv, yv, 2)
    g = result.groups
    assert set(np.unique(g[g >= 0]).tolist()) <= {0}  # one condensed group
    assert g[0] == 0 and g[1] == 0  # the informative correlated pair is kept
    errors = [h[1] for h in result.history]
    assert all(b < a for a, b in zip(errors, errors[1:], strict=False))
    assert result.error <= errors[0]


def test_canonical_groups_and_input_errors():
    np.testing.assert_array_equal(S.canonical_groups([5, -1, 5, 2]), [0, -1, 0, 1])
    with pytest.raises(ValueError, match="val_y"):
        S.forward_sequential_selection_joining(
            np.zeros((4, 2)), np.zeros(4, int), np.zeros((3, 2)), np.zeros(4, int), 2
        )


def test_semi_naive_searches_with_a_class_without_training_rows():
    # a class with no training weight has prior log 0 = -inf in every structure's scores; that
    # column is valid and must not disqualify every candidate (the search stayed at its start)
    xt, yt = _correlated_pair_data(0, 600)
    xv, yv = _correlated_pair_data(1, 600)
    for search in (S.forward_sequential_selection_joining, S.backward_condensed_search):
        two = search(xt, yt, xv, yv, 2)
        three = search(xt, yt, xv, yv, 3)
        np.testing.assert_array_equal(three.groups, two.groups)
        assert np.isfinite(three.error) and three.error == pytest.approx(two.error, rel=1e-12)
        assert len(three.history) == len(two.history)
    # a validation row of that class is always wrong (finite error) and has infinite log loss
    xv3, yv3 = np.concatenate([xv, xv[:1]]), np.concatenate([yv, [2]]).astype(np.int32)
    res = S.forward_sequential_selection_joining(xt, yt, xv3, yv3, 3)
    g = res.groups
    assert g[0] >= 0 and g[0] == g[1], g
    params = S.fit_gaussian_joint(xt, yt, 3)
    pred = np.argmax(np.asarray(S.seminaive_log_joint(params, g, xv3)), 1)
    assert res.error == pytest.approx(np.mean(pred != yv3), rel=1e-12)


def _primitive_counts(jaxpr, names, counts=None):
    """How often each primitive in ``names`` occurs in ``jaxpr`` and all its sub-jaxprs."""
    counts = dict.fromkeys(names, 0) if counts is None else counts
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in counts:
            counts[eqn.primitive.name] += 1
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(sub, "eqns") or hasattr(getattr(sub, "jaxpr", None), "eqns"):
                    _primitive_counts(getattr(sub, "jaxpr", sub), names, counts)
    return counts


def test_semi_naive_step_scorers_keep_one_chain_of_lapack_calls():
    """Two independent batched LAPACK calls in one program deadlocked XLA's CPU thread pool on
    2 cores (each waited for pool threads that the other held; 8 of 10 processes running
    backward fits at p = 120 hung, and later a p = 40 FSSJ fit whose join program solved for the
    current structure beside the targets). Each step scorer holds one Cholesky and one
    triangular solve: the join scorer takes the current structure's scores as an input."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 5))
    y = rng.integers(0, 3, 40).astype(np.int32)
    params = S.fit_gaussian_joint(x, y, 3)
    data = (x, y, np.full(40, 1 / 40), np.eye(3)[y])
    names = ("cholesky", "triangular_solve", "lu")
    one_chain = {"cholesky": 1, "triangular_solve": 1, "lu": 0}
    one = np.array([0, 0, 0, -1, 0], np.int32)
    removal = jax.make_jaxpr(S._removal_scores)(params, one, *data).jaxpr
    assert _primitive_counts(removal, names) == one_chain
    groups = np.array([0, 0, -1, 1, -1], np.int32)
    base = S.seminaive_log_joint(params, groups, x)
    members = np.array([[-1, -1], [0, 1], [3, -1]], np.int32)  # new, group 0, group 1
    for batch, rows in ((1, members), (2, np.concatenate([members, [[-1, -1]]]))):
        joins = jax.make_jaxpr(partial(S._join_scores, batch_size=batch))(
            params, base, rows.astype(np.int32), *data
        ).jaxpr
        assert _primitive_counts(joins, names) == one_chain
