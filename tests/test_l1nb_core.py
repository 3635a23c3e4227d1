"""Tests for jaxnb.methods.l1nb: posteriors, B, bounded LARS path, AIC/validation, Eq. (14).

The reference for the path is an independent float64 NumPy solver of Eq. (15) at fixed s:
accelerated projected gradient (FISTA with restart) with an exact projection onto
{0 <= beta <= 1, sum beta <= s}.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.methods import l1nb

# Most tests share one shape so that the jitted path compiles a few times only.
N, P = 60, 6

# ------------------------------------------------------------------------------------------------
# Data and float64 NumPy references written from the paper's equations.


def _nb_data(seed, n, p, n_informative, n_classes=3, n_states=3, n_copies=0, copy_noise=0.1):
    """Discrete NB data; B from ML one-predictor posteriors (Eqs. 6, 11) computed in NumPy.

    The first ``n_informative`` predictors depend on the class; the next ``n_copies`` are noisy
    copies of predictor 0 (redundant); the rest are irrelevant.
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=n)
    X = np.empty((n, p), dtype=np.int64)
    for i in range(p):
        if i < n_informative:
            cpt = rng.dirichlet(np.ones(n_states) * 0.7, size=n_classes)  # (c, k)
            u = rng.random(n)
            X[:, i] = (u[:, None] > np.cumsum(cpt[y], axis=1)).sum(axis=1)
        elif i < n_informative + n_copies:
            flip = rng.random(n) < copy_noise
            X[:, i] = np.where(flip, rng.integers(0, n_states, size=n), X[:, 0])
        else:
            X[:, i] = rng.integers(0, n_states, size=n)
    X = np.minimum(X, n_states - 1)
    log_prior = np.log(np.bincount(y, minlength=n_classes) / n)
    L = np.empty((n, p, n_classes))
    for i in range(p):
        counts = np.zeros((n_states, n_classes))
        np.add.at(counts, (X[:, i], y), 1.0)
        cpt = (counts + 1.0) / (counts.sum(axis=0, keepdims=True) + n_states)  # Lidstone 1
        L[:, i, :] = np.log(cpt[X[:, i]])
    joint = L + log_prior[None, None, :]
    P = np.exp(joint - joint.max(axis=2, keepdims=True))
    P /= P.sum(axis=2, keepdims=True)
    B = P[np.arange(n), :, y]
    return L, log_prior, P, B, y


def _sigmoid_b(seed, n, p):
    """Correlated B in (0, 1) (not from an NB fit): many CAP and RELEASE events."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, p)) @ rng.normal(size=(p, p)) * 0.5 + rng.normal(size=p) * 1.5
    return 1.0 / (1.0 + np.exp(-Z))


def _project(v, s):
    """Exact Euclidean projection onto {0 <= b <= 1, sum b <= s}: clip(v - tau, 0, 1), tau >= 0."""
    x = np.clip(v, 0.0, 1.0)
    if x.sum() <= s:
        return x
    knots = np.unique(np.concatenate([v, v - 1.0, [0.0]]))
    knots = knots[knots >= 0.0]
    g = np.array([np.clip(v - t, 0.0, 1.0).sum() for t in knots])  # non-increasing in tau
    hi = np.searchsorted(-g, -s, side="left")  # first knot with g <= s
    t0, t1, g0, g1 = knots[hi - 1], knots[hi], g[hi - 1], g[hi]
    tau = t0 + (g0 - s) / (g0 - g1) * (t1 - t0) if g0 != g1 else t1
    return np.clip(v - tau, 0.0, 1.0)


def _reference_qp(B, s, iters=200_000, tol=1e-15):
    """min ||1 - B beta||^2 s.t. 0 <= beta <= 1, sum beta <= s, by FISTA with adaptive restart."""
    G, b1 = B.T @ B, B.sum(axis=0)
    step = 1.0 / np.linalg.eigvalsh(G).max()
    x = z = np.zeros(B.shape[1])
    t = 1.0
    for _ in range(iters):
        x_new = _project(z - step * (G @ z - b1), s)
        if np.max(np.abs(x_new - x)) < tol:
            return x_new
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        restart = (z - x_new) @ (x_new - x) > 0
        z = x_new if restart else x_new + (t - 1.0) / t_new * (x_new - x)
        t = 1.0 if restart else t_new
        x = x_new
    return x


def _kkt_residual(B, beta, lam):
    """Largest violation of the KKT conditions of Eq. (15) (module docstring), scaled by max B'1."""
    c = B.T @ (1.0 - B @ beta)
    free = (beta > 0) & (beta < 1)
    viol = max(
        np.abs(c[free] - lam).max(initial=0.0),
        (c[beta == 0] - lam).max(initial=0.0),
        (lam - c[beta == 1]).max(initial=0.0),
    )
    return viol / B.sum(axis=0).max()


def _segment_midpoints(path):
    k = int(path.n_steps)
    s = np.asarray(path.s[: k + 1])
    mids = 0.5 * (s[:-1] + s[1:])
    return mids[np.diff(s) > 1e-9]


def _first_event_s(path, event):
    k = int(path.n_steps)
    ev = np.asarray(path.event[: k + 1])
    hits = np.flatnonzero(ev == event)
    return float(path.s[hits[0]]) if hits.size else np.inf


# ------------------------------------------------------------------------------------------------
# Step 1: posteriors and B.


def test_one_predictor_posteriors_matches_numpy():
    L, log_prior, P_ref, B_ref, y = _nb_data(0, 40, 5, 2)
    P = l1nb.one_predictor_posteriors(jnp.asarray(L), jnp.asarray(log_prior))
    np.testing.assert_allclose(P, P_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(P).sum(axis=2), 1.0, rtol=1e-12)
    B = l1nb.b_matrix(P, jnp.asarray(y, jnp.int32))
    B_loop = np.array([[P_ref[r, i, y[r]] for i in range(5)] for r in range(40)])
    np.testing.assert_allclose(B, B_loop, rtol=1e-12)
    np.testing.assert_allclose(B, B_ref, rtol=1e-12)


def test_missing_contribution_gives_prior():
    L, log_prior, *_ = _nb_data(1, 10, 3, 2)
    L[4, 1, :] = 0.0  # CONVENTIONS.md: missing entries hold 0
    P = l1nb.one_predictor_posteriors(jnp.asarray(L), jnp.asarray(log_prior))
    np.testing.assert_allclose(P[4, 1], np.exp(log_prior), rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# Step 2–3: the path against the reference QP.


@pytest.mark.parametrize("seed", [0, 3])
def test_exact_path_matches_reference_everywhere(seed):
    *_, B, _ = _nb_data(seed, N, P, 3, n_copies=1)
    path = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    assert bool(path.converged)
    s_last = float(path.s[int(path.n_steps)])
    s_values = np.concatenate([_segment_midpoints(path), [s_last + 0.5]])
    assert s_values.size >= 5
    for s in s_values:
        ref = _reference_qp(B, s)
        np.testing.assert_allclose(l1nb.coef_at(path, s), ref, atol=1e-5, err_msg=f"s={s}")


def test_exact_path_with_release_events_matches_reference():
    # Correlated B with several CAP and RELEASE events (checked below, so the test bites).
    B = _sigmoid_b(1, N, P)
    path = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    events = np.asarray(path.event[: int(path.n_steps) + 1])
    assert (events == l1nb.EVENT_RELEASE).any() and (events == l1nb.EVENT_CAP).any()
    s_values = _segment_midpoints(path)
    assert s_values.size >= 5
    for s in s_values:
        np.testing.assert_allclose(
            l1nb.coef_at(path, s), _reference_qp(B, s), atol=1e-5, err_msg=f"s={s}"
        )


def test_paper_variant_agrees_before_first_cap_and_departs_after_release():
    B = _sigmoid_b(1, N, P)
    paper = l1nb.bounded_lars_path(jnp.asarray(B), variant="paper")
    exact = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    s_cap = _first_event_s(paper, l1nb.EVENT_CAP)
    s_release = _first_event_s(exact, l1nb.EVENT_RELEASE)
    assert 0 < s_cap < s_release < np.inf
    assert not (np.asarray(paper.event) == l1nb.EVENT_RELEASE).any()
    # The paper's rule: once a coefficient hits 1 it stays at 1.
    k = int(paper.n_steps)
    for row in np.flatnonzero(np.asarray(paper.event[: k + 1]) == l1nb.EVENT_CAP):
        j = int(paper.index[row])
        np.testing.assert_array_equal(np.asarray(paper.beta[row:, j]), 1.0)
    # Before the first cap: the reference QP (the brief's requirement) ...
    for s in np.linspace(0.05, s_cap, 5):
        np.testing.assert_allclose(l1nb.coef_at(paper, s), _reference_qp(B, s), atol=1e-5)
    # ... and, more strongly, paper == exact up to the first release of the exact path.
    for s in np.linspace(s_cap, s_release, 6):
        np.testing.assert_allclose(l1nb.coef_at(paper, s), l1nb.coef_at(exact, s), atol=1e-10)
    # After the release the paper's approximation is no longer the solution of Eq. (15).
    s_end = float(paper.s[int(paper.n_steps)])
    gap = np.abs(np.asarray(l1nb.coef_at(paper, s_end)) - _reference_qp(B, s_end)).max()
    assert gap > 1e-2


@pytest.mark.parametrize("variant", ["paper", "exact"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_breakpoints_feasible_monotone_and_kkt(variant, seed):
    B = _sigmoid_b(seed, N, P) if seed else _nb_data(seed, N, P, 3, n_copies=2)[3]
    path = l1nb.bounded_lars_path(jnp.asarray(B), variant=variant)
    k = int(path.n_steps)
    beta = np.asarray(path.beta)
    assert bool(path.converged) and k < 3 * P
    assert beta.min() >= 0.0 and beta.max() <= 1.0
    np.testing.assert_allclose(path.s, beta.sum(axis=1), rtol=1e-12, atol=1e-12)
    assert np.all(np.diff(np.asarray(path.s)) >= -1e-12)
    assert np.all(np.diff(np.asarray(path.lam)[: k + 1]) <= 1e-12)
    assert float(path.lam[k]) == 0.0 and int(path.event[k]) == l1nb.EVENT_END
    assert np.all(np.asarray(path.event[k + 1 :]) == l1nb.EVENT_PAD)
    np.testing.assert_allclose(beta[k + 1 :], np.broadcast_to(beta[k], beta[k + 1 :].shape))
    # KKT at every breakpoint (exact), or up to the first release point (paper).
    s_release = _first_event_s(
        l1nb.bounded_lars_path(jnp.asarray(B), variant="exact"), l1nb.EVENT_RELEASE
    )
    for row in range(k + 1):
        if variant == "paper" and float(path.s[row]) > s_release:
            break
        assert _kkt_residual(B, beta[row], float(path.lam[row])) < 1e-10, row


def test_duplicate_columns_never_both_free():
    # Section 4: a duplicated predictor gives a duplicated column of B. The two coefficients are not
    # identifiable, only their sum; the path must never make both free (a singular active system),
    # may use the copy once the original is capped at 1, and must still satisfy the KKT conditions.
    *_, B, _ = _nb_data(5, N, P - 1, 3)
    B = np.concatenate([B, B[:, :1]], axis=1)  # predictor 5 duplicates predictor 0
    path = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    k = int(path.n_steps)
    beta = np.asarray(path.beta[: k + 1])
    free = (beta > 0) & (beta < 1)
    assert bool(path.converged)
    assert not np.any(free[:, 0] & free[:, P - 1])
    for row in range(k + 1):
        assert _kkt_residual(B, beta[row], float(path.lam[row])) < 1e-10
    s = float(_segment_midpoints(path)[-1])
    ref = _reference_qp(B, s)
    np.testing.assert_allclose(B @ np.asarray(l1nb.coef_at(path, s)), B @ ref, atol=1e-6)


def test_truncated_path_reports_not_converged():
    B = _sigmoid_b(1, N, P)
    path = l1nb.bounded_lars_path(jnp.asarray(B), max_steps=3, variant="exact")
    assert int(path.n_steps) == 3 and not bool(path.converged)
    full = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    np.testing.assert_allclose(path.beta[:4], full.beta[:4], atol=1e-14)


def test_coef_at_interpolates():
    B = _sigmoid_b(2, N, P)
    path = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    k = int(path.n_steps)
    s = np.asarray(path.s)
    beta = np.asarray(path.beta)
    j = int(np.flatnonzero(np.diff(s[: k + 1]) > 1e-6)[1])
    np.testing.assert_allclose(l1nb.coef_at(path, s[j + 1]), beta[j + 1], atol=1e-12)
    mid = 0.25 * s[j] + 0.75 * s[j + 1]
    np.testing.assert_allclose(
        l1nb.coef_at(path, mid), 0.25 * beta[j] + 0.75 * beta[j + 1], atol=1e-12
    )
    np.testing.assert_allclose(l1nb.coef_at(path, 0.0), 0.0)
    np.testing.assert_allclose(l1nb.coef_at(path, s[k] + 10.0), beta[k])
    many = l1nb.coef_at(path, jnp.asarray([0.0, mid, s[k] + 1.0]))
    assert many.shape == (3, P)
    np.testing.assert_allclose(many[1], l1nb.coef_at(path, mid))


def test_weight_two_equals_duplicated_row():
    # Same shape and both weighted (one compilation): rows 0..6 weighted 2 plus 7 zero-weight rows,
    # against the 7 rows duplicated with weight 1.
    *_, B, _ = _nb_data(4, N - 7, P, 2)
    Bd = np.concatenate([B, B[:7]], axis=0)
    w2 = np.concatenate([np.where(np.arange(N - 7) < 7, 2.0, 1.0), np.zeros(7)])
    pw = l1nb.bounded_lars_path(jnp.asarray(Bd), variant="exact", weight=jnp.asarray(w2))
    pd = l1nb.bounded_lars_path(jnp.asarray(Bd), variant="exact", weight=jnp.ones(N))
    assert int(pw.n_steps) == int(pd.n_steps)
    np.testing.assert_allclose(pw.beta, pd.beta, atol=1e-10)
    np.testing.assert_allclose(
        l1nb.path_criteria(pw, jnp.asarray(Bd), weight=jnp.asarray(w2)),
        l1nb.path_criteria(pd, jnp.asarray(Bd)),
        rtol=1e-10,
    )


def test_permuting_predictors_permutes_path():
    *_, B, _ = _nb_data(6, N, P, 3)
    perm = np.array([3, 0, 5, 1, 4, 2])
    p0 = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    p1 = l1nb.bounded_lars_path(jnp.asarray(B[:, perm]), variant="exact")
    np.testing.assert_allclose(p1.beta, p0.beta[:, perm], atol=1e-12)


# ------------------------------------------------------------------------------------------------
# Step 4: AIC, validation, Eq. (14).


def _aic_loop(path, B, likelihood):
    out = []
    for k in range(path.beta.shape[0]):
        beta = np.asarray(path.beta[k])
        if k > int(path.n_steps) or beta.sum() == 0:
            out.append(np.inf)
            continue
        fit = np.array([sum(beta[i] * B[r, i] for i in range(B.shape[1])) for r in range(len(B))])
        if likelihood == "classifier":
            ll = np.sum(np.log(fit / beta.sum()))
        else:
            rss = np.sum((1 - fit) ** 2)
            ll = -0.5 * len(B) * (np.log(2 * np.pi * rss / len(B)) + 1)
        out.append(2 * np.count_nonzero(beta) - 2 * ll)
    return np.array(out)


@pytest.mark.parametrize("likelihood", ["classifier", "gaussian"])
def test_aic_matches_loop_and_select_is_argmin(likelihood):
    _, _, Pr, B, y = _nb_data(7, N, P, 3, n_copies=1)
    path = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    aic = l1nb.path_criteria(path, jnp.asarray(B), likelihood=likelihood)
    np.testing.assert_allclose(aic, _aic_loop(path, B, likelihood), rtol=1e-10)
    sel = l1nb.aic_select(path, jnp.asarray(Pr), jnp.asarray(y, jnp.int32), likelihood=likelihood)
    assert int(sel.index) == int(np.argmin(_aic_loop(path, B, likelihood)))
    np.testing.assert_allclose(sel.beta, path.beta[int(sel.index)])
    np.testing.assert_allclose(sel.criterion, aic, rtol=1e-12)


def test_predict_scores_eq14_and_validation_select():
    # Parameters fit on all rows (the mechanics are under test, not the selection's quality).
    _, _, Pa, Ba, ya = _nb_data(8, N + 50, P, 3, n_copies=2)
    B, Pv, yv = Ba[:N], Pa[N:], ya[N:]
    path = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    beta = np.asarray(path.beta[3])
    scores = l1nb.predict_scores(jnp.asarray(Pv), jnp.asarray(beta))
    loop = np.array(
        [[sum(beta[i] * Pv[r, i, j] for i in range(P)) for j in range(3)] for r in range(50)]
    )
    np.testing.assert_allclose(scores, loop, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(scores).sum(axis=1), beta.sum(), rtol=1e-12)
    np.testing.assert_array_equal(
        l1nb.predict_classes(jnp.asarray(Pv), jnp.asarray(beta)), loop.argmax(axis=1)
    )
    sel = l1nb.validation_select(path, jnp.asarray(Pv), jnp.asarray(yv, jnp.int32))
    acc = []
    for k in range(path.beta.shape[0]):
        b = np.asarray(path.beta[k])
        valid = k <= int(path.n_steps) and b.sum() > 0
        pred = np.einsum("rij,i->rj", Pv, b).argmax(axis=1)
        acc.append(np.mean(pred == yv) if valid else -np.inf)
    np.testing.assert_allclose(sel.criterion, acc, rtol=1e-12)
    assert int(sel.index) == int(np.argmax(acc))
    # 0/1 weights select a subset of validation rows.
    w = np.zeros(50)
    w[:20] = 1.0
    sub = l1nb.validation_select(path, jnp.asarray(Pv[:20]), jnp.asarray(yv[:20], jnp.int32))
    wsel = l1nb.validation_select(
        path, jnp.asarray(Pv), jnp.asarray(yv, jnp.int32), weight=jnp.asarray(w)
    )
    np.testing.assert_allclose(wsel.criterion, sub.criterion, rtol=1e-12)


def test_each_selection_is_one_program(compiles):
    """`aic_select` and `validation_select` compile one program each on new shapes (the row mask,
    argmin/argmax and gathers ran eagerly before: ten small programs, ~0.25 s of a first L1NB
    fit), and give the selection the reference loops give."""
    _, _, Pa, Ba, ya = _nb_data(9, 83, 6, 3, n_copies=1)
    path = l1nb.bounded_lars_path(jnp.asarray(Ba[:61]), variant="exact")
    jax.clear_caches()  # counted as in a fresh process, whatever ran before in this one
    B, Pv, yv = jnp.asarray(Ba[:61]), jnp.asarray(Pa[61:]), jnp.asarray(ya[61:], jnp.int32)
    before = compiles.n
    sel = l1nb.aic_select(path, B)
    assert compiles.n - before == 1
    want = _aic_loop(path, Ba[:61], "classifier")
    assert int(sel.index) == int(np.argmin(want))
    np.testing.assert_array_equal(sel.beta, path.beta[int(np.argmin(want))])
    assert float(sel.s) == float(path.s[int(np.argmin(want))])
    before = compiles.n
    val = l1nb.validation_select(path, Pv, yv)
    assert compiles.n - before == 1
    acc = np.asarray(val.criterion)
    assert int(val.index) == int(np.argmax(acc)) and np.isfinite(acc[int(val.index)])
    np.testing.assert_array_equal(val.beta, path.beta[int(val.index)])


def test_end_to_end_selects_informative_and_drops_redundant():
    # n = 1000, p = 100 (the paper's timing size): 4 informative predictors, 6 noisy copies of
    # predictor 0 (redundant, Section 4) and 90 irrelevant ones.
    _, _, Pr, B, y = _nb_data(10, 1000, 100, 4, n_copies=6, copy_noise=0.05)
    path = l1nb.bounded_lars_path(jnp.asarray(B), variant="paper")
    assert bool(path.converged)
    sel = l1nb.aic_select(path, jnp.asarray(B))
    chosen = set(np.flatnonzero(np.asarray(sel.beta)).tolist())
    assert len(chosen & {0, 1, 2, 3}) >= 2
    assert len(chosen & {0, 4, 5, 6, 7, 8, 9}) <= 1  # predictor 0 and its copies: one at most
    assert len(chosen & set(range(10, 100))) <= 2  # irrelevant ones
    acc = np.mean(np.asarray(l1nb.predict_classes(jnp.asarray(Pr), sel.beta)) == y)
    assert acc > 0.6


# ------------------------------------------------------------------------------------------------
# Transforms, dtypes, validation.


def test_vmap_equals_loop_and_jit_traces_once():
    Bs = np.stack([_sigmoid_b(s, N, P) for s in range(3)])
    batched = jax.vmap(lambda b: l1nb.bounded_lars_path(b, variant="exact"))(jnp.asarray(Bs))
    for i in range(3):
        single = l1nb.bounded_lars_path(jnp.asarray(Bs[i]), variant="exact")
        np.testing.assert_allclose(batched.beta[i], single.beta, atol=1e-12)
        assert int(batched.n_steps[i]) == int(single.n_steps)
    before = l1nb._lars_jit._cache_size()
    l1nb.bounded_lars_path(jnp.asarray(Bs[0] * 0.9), variant="exact")
    l1nb.bounded_lars_path(jnp.asarray(Bs[1] * 0.8), variant="exact")
    assert l1nb._lars_jit._cache_size() == before  # same shapes: no retrace
    jitted = jax.jit(lambda b: l1nb.bounded_lars_path(b, variant="exact").beta)
    np.testing.assert_allclose(jitted(jnp.asarray(Bs[2])), batched.beta[2], atol=1e-12)


def test_gradients():
    from jax.test_util import check_grads

    L, log_prior, Pr, B, _ = _nb_data(11, N, P, 2)
    check_grads(
        lambda x: l1nb.one_predictor_posteriors(x, jnp.asarray(log_prior)),
        (jnp.asarray(L),),
        order=1,
    )
    beta = jnp.asarray([0.3, 0.0, 0.7, 0.1, 0.2, 0.0])
    check_grads(lambda b: l1nb.predict_scores(jnp.asarray(Pr), b), (beta,), order=1)
    path = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    s = float(_segment_midpoints(path)[1])
    check_grads(lambda t: l1nb.coef_at(path, t), (jnp.asarray(s),), order=1, eps=1e-6)


def test_float32_dtypes_survive():
    *_, B, _ = _nb_data(12, N, P, 3)
    p64 = l1nb.bounded_lars_path(jnp.asarray(B), variant="exact")
    p32 = l1nb.bounded_lars_path(jnp.asarray(B, jnp.float32), variant="exact")
    assert p32.beta.dtype == jnp.float32 and p32.s.dtype == jnp.float32
    assert int(p32.n_steps) == int(p64.n_steps)
    np.testing.assert_allclose(p32.beta, p64.beta, atol=2e-4)


def test_input_validation():
    B = jnp.asarray(_sigmoid_b(0, N, P))
    with pytest.raises(ValueError, match="variant"):
        l1nb.bounded_lars_path(B, variant="approx")
    with pytest.raises(ValueError, match="max_steps"):
        l1nb.bounded_lars_path(B, max_steps=0)
    with pytest.raises(ValueError, match="B must hold"):
        l1nb.bounded_lars_path(B + 1.0)
    with pytest.raises(ValueError, match="dimensions"):
        l1nb.bounded_lars_path(B[0])
    with pytest.raises(ValueError, match="class codes"):
        l1nb.b_matrix(jnp.ones((N, P, 2)) / 2, jnp.full((N,), 2, jnp.int32))
    with pytest.raises(ValueError, match="y is required"):
        l1nb.aic_select(l1nb.bounded_lars_path(B), jnp.ones((N, P, 2)) / 2)
    with pytest.raises(ValueError, match="s must be"):
        l1nb.coef_at(l1nb.bounded_lars_path(B), -1.0)


@pytest.mark.parametrize("variant", ["paper", "exact"])
def test_fewer_rows_than_predictors_end_where_the_target_is_interpolated(variant):
    # with n < p, an ENTER could win the tie with END by rounding at λ ≈ 0; the END step then
    # moved β along a direction from a singular system (s 1.93 -> 3.54, RSS 4e-9 -> 5.8)
    n, p, bad = 8, 12, []
    for seed in range(30):
        rng = np.random.default_rng(seed)
        Z = rng.normal(size=(n, p)) @ rng.normal(size=(p, p)) * 0.5 + rng.normal(size=p) * 1.5
        B = 1.0 / (1.0 + np.exp(-Z))
        path = l1nb.bounded_lars_path(jnp.asarray(B), variant=variant)
        k = int(path.n_steps)
        beta, s = np.asarray(path.beta), np.asarray(path.s)
        rss = ((1.0 - B @ beta[: k + 1].T) ** 2).sum(axis=0)
        assert bool(path.converged) and int(path.event[k]) == l1nb.EVENT_END
        if not (np.all(np.diff(s[: k + 1]) >= -1e-12) and rss[k] <= rss[k - 1] + 1e-9):
            bad.append(seed)
        if variant == "exact":
            for row in range(k + 1):
                assert _kkt_residual(B, beta[row], float(path.lam[row])) < 1e-9, (seed, row)
    assert bad == []


def test_l1nb_validation_with_a_state_only_in_the_validation_rows():
    # alpha = 0 and a state absent from the training part: log θ = -inf for every class gave NaN
    # posteriors (B rejected, fit crashed); such a value carries no evidence and gets the prior
    from jaxnb.estimators_penalized import L1NB

    rng = np.random.default_rng(0)
    n = 60
    y = rng.integers(0, 2, n)
    X = rng.integers(0, 3, (n, 4))
    X[:, 0] = (X[:, 0] + y) % 3
    X[:2, 3] = 3  # seed 5 puts both rows in the validation part
    for seed in (0, 5):
        m = L1NB(alpha=0.0, selection="validation", random_state=seed, discrete="all").fit(X, y)
        assert np.isfinite(m.coef_).all() and m.coef_[0] > 0.2
        assert np.isfinite(m.criterion_path_[1:]).all()  # β = 0 scores -inf by design
        assert np.isfinite(m.predict_proba(X)).all()


def test_max_steps_bool_is_refused():
    with pytest.raises(ValueError, match="max_steps must be a positive int"):
        l1nb.bounded_lars_path(jnp.ones((4, 2)) * 0.5, max_steps=True)
