"""Tests for jaxnb.methods.filters against float64 NumPy loop references."""

import itertools
import math

import jax
import jax.numpy as jnp
import jax.test_util
import numpy as np
import pytest

from jaxnb.methods import filters as F

# --------------------------------------------------------------------------------------------------
# NumPy references (loops, written from the definitions)
# --------------------------------------------------------------------------------------------------


def _ref_mi_table(table):
    """MI of a 2-D joint count table (nats)."""
    p = table / table.sum()
    pa, pb = p.sum(1), p.sum(0)
    out = 0.0
    for a in range(p.shape[0]):
        for b in range(p.shape[1]):
            if p[a, b] > 0:
                out += p[a, b] * math.log(p[a, b] / (pa[a] * pb[b]))
    return out


def _ref_mi(x, y, w, ma, mb):
    table = np.zeros((ma, mb))
    for xi, yi, wi in zip(x, y, w, strict=True):
        if xi >= 0 and yi >= 0:
            table[xi, yi] += wi
    return _ref_mi_table(table) if table.sum() > 0 else 0.0


def _ref_cmi(a, b, c, w, ma, mb, mc):
    """I(A; B | C) with rows where all three observed."""
    t = np.zeros((ma, mb, mc))
    for ai, bi, ci, wi in zip(a, b, c, w, strict=True):
        if ai >= 0 and bi >= 0:
            t[ai, bi, ci] += wi
    p = t / t.sum()
    out = 0.0
    for k in range(mc):
        pc = p[:, :, k].sum()
        if pc > 0:
            out += pc * _ref_mi_table(p[:, :, k])
    return out


def _ref_cmi_class_given(a, cls, b, w, ma, mc, mb):
    """I(A; C | B)."""
    return _ref_cmi(a, cls, b, w, ma, mc, mb)


def _data(seed, n=120, states=(2, 3, 4, 3), n_classes=3, missing=True):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    cols = []
    for m in states:
        noise = rng.integers(0, m, n)
        cols.append(np.where(rng.random(n) < 0.5, (y + rng.integers(0, 2, n)) % m, noise))
    codes = np.stack(cols, 1).astype(np.int32)
    if missing:
        codes[rng.random(codes.shape) < 0.05] = -1
    w = rng.uniform(0.5, 2.0, n)
    return codes, y.astype(np.int32), w


# --------------------------------------------------------------------------------------------------
# discrete measures
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mutual_information_discrete_matches_reference(seed):
    states = (2, 3, 4, 3)
    codes, y, w = _data(seed, states=states)
    got = np.asarray(F.mutual_information_discrete(codes, y, states, 3, w))
    ref = [_ref_mi(codes[:, i], y, w, states[i], 3) for i in range(len(states))]
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    jit_got = jax.jit(F.mutual_information_discrete, static_argnums=(2, 3))(codes, y, states, 3, w)
    np.testing.assert_allclose(jit_got, got, rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 3])
def test_information_matrices_match_reference(seed):
    states = (2, 3, 4, 3)
    codes, y, w = _data(seed, states=states)
    info = F.information_matrices(codes, y, states, 3, w)
    q = len(states)
    red = np.zeros((q, q))
    cred = np.zeros((q, q))
    crel = np.zeros((q, q))
    for i, k in itertools.product(range(q), range(q)):
        both = (codes[:, i] >= 0) & (codes[:, k] >= 0)
        a, b, c, ww = codes[both, i], codes[both, k], y[both], w[both]
        red[i, k] = _ref_mi(a, b, ww, states[i], states[k])
        cred[i, k] = _ref_cmi(a, b, c, ww, states[i], states[k], 3)
        crel[i, k] = 0.0 if i == k else _ref_cmi_class_given(a, c, b, ww, states[i], 3, states[k])
    np.testing.assert_allclose(info.redundancy, red, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(info.conditional_redundancy, cred, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(info.conditional_relevance, crel, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        info.relevance, F.mutual_information_discrete(codes, y, states, 3, w), rtol=1e-12
    )
    np.testing.assert_allclose(
        F.pairwise_mutual_information_discrete(codes, states, w), red, rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(
        F.conditional_mutual_information_pairs(codes, y, states, 3, w), cred, rtol=1e-12
    )
    np.testing.assert_allclose(
        F.conditional_relevance_pairs(codes, y, states, 3, w), crel, rtol=1e-10, atol=1e-12
    )
    # chain rule on complete rows: I(X_i; C | X_k) = I(X_i, X_k; C) - I(X_k; C) (check on
    # no-missing)
    codes2, y2, w2 = _data(seed, states=states, missing=False)
    info2 = F.information_matrices(codes2, y2, states, 3, w2)
    joint_code = codes2[:, 0] * states[1] + codes2[:, 1]
    lhs = float(info2.conditional_relevance[0, 1])
    rhs = _ref_mi(joint_code, y2, w2, states[0] * states[1], 3) - float(info2.relevance[1])
    assert abs(lhs - rhs) < 1e-10


@pytest.mark.parametrize("seed", [0, 3])
def test_pair_measures_from_sorted_rows_match_reference(seed):
    # the path for columns with many states: entropies of each pair's sorted rows
    states = (2, 3, 4, 3)
    codes, y, w = _data(seed, states=states)
    w[::7] = 0.0  # zero-weight rows count for nothing
    rel, red, cred, crel, ent = F._information_sorted(jnp.asarray(codes), jnp.asarray(y), 3, w)
    q = len(states)
    for i, k in itertools.product(range(q), range(q)):
        both = (codes[:, i] >= 0) & (codes[:, k] >= 0)
        a, b, c, ww = codes[both, i], codes[both, k], y[both], w[both]
        assert float(red[i, k]) == pytest.approx(_ref_mi(a, b, ww, states[i], states[k]), abs=1e-12)
        ref = _ref_cmi(a, b, c, ww, states[i], states[k], 3)
        assert float(cred[i, k]) == pytest.approx(ref, abs=1e-12)
        ref = 0.0 if i == k else _ref_cmi_class_given(a, c, b, ww, states[i], 3, states[k])
        assert float(crel[i, k]) == pytest.approx(ref, abs=1e-12)
    dense = F.information_matrices(codes, y, states, 3, w)
    np.testing.assert_allclose(rel, dense.relevance, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ent, dense.entropy, rtol=1e-12)
    # differentiable in the weights, with the dense path's gradient (at rows of positive weight:
    # at 0, a cell emptied by the row makes -p log p non-differentiable)
    g_sorted = jax.grad(lambda v: jnp.sum(F._information_sorted(codes, y, 3, v)[3]))(w)
    g_dense = jax.grad(lambda v: jnp.sum(F.information_matrices(codes, y, states, 3, v)[3]))(w)
    pos = w > 0
    assert np.abs(np.asarray(g_dense)[pos]).max() > 1e-3
    np.testing.assert_allclose(np.asarray(g_sorted)[pos], np.asarray(g_dense)[pos], atol=1e-12)


def test_a_column_with_many_states_does_not_build_the_dense_pair_tensor():
    # 31 columns, one with 600 states (an identifier), 8 classes: the dense joint tensor would
    # hold 31^2 * 600^2 * 8 = 2.8e9 entries; the sorted path agrees with the dense one on the
    # other columns, whose own tensor is small
    assert not F._dense_pairs(31, 600, 8) and F._dense_pairs(20, 3, 2)
    codes, y, w = _data(11, n=600, states=(2, 3, 4, 3) * 7 + (5, 2), n_classes=8)
    ident = np.arange(600, dtype=np.int32)[:, None]
    states = (600,) + (2, 3, 4, 3) * 7 + (5, 2)
    big = F.information_matrices(np.concatenate([ident, codes], 1), y, states, 8, w)
    small = F.information_matrices(codes, y, states[1:], 8, w)
    for u, v in zip(big[:4], small[:4], strict=True):
        v = np.asarray(v)
        np.testing.assert_allclose(np.asarray(u)[1:, 1:] if v.ndim == 2 else u[1:], v, atol=1e-12)
    assert float(big.relevance[0]) == pytest.approx(float(big.class_entropy), rel=1e-12)
    share = w / w.sum()  # one row per state
    assert float(big.entropy[0]) == pytest.approx(-np.sum(share * np.log(share)), rel=1e-12)
    red = F.pairwise_mutual_information_discrete(np.concatenate([ident, codes], 1), states, w)
    np.testing.assert_allclose(red[1:, 1:], small.redundancy, atol=1e-12)
    # no rows at all: zeros, as on the dense path (an IndexError before)
    none = F.information_matrices(np.zeros((0, 31), np.int32), np.zeros(0, np.int32), states, 8)
    assert all(np.all(np.asarray(a) == 0) for a in none[:5])


def test_weight_two_equals_duplicated_rows_and_grad():
    codes, y, w = _data(5, missing=False)
    states = (2, 3, 4, 3)
    w2 = np.ones(len(y))
    w2[:10] = 2.0
    dup_codes = np.concatenate([codes, codes[:10]])
    dup_y = np.concatenate([y, y[:10]])
    a = F.information_matrices(codes, y, states, 3, w2)
    b = F.information_matrices(dup_codes, dup_y, states, 3)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-13)
    f = lambda ww: jnp.sum(F.mutual_information_discrete(codes, y, states, 3, ww))
    jax.test_util.check_grads(f, (jnp.asarray(w),), order=1, modes=["rev"])


def test_symmetric_uncertainty_range_and_copy():
    codes, y, w = _data(7, missing=False)
    codes[:, 3] = codes[:, 1]
    states = (2, 3, 4, 3)
    su_c, su_f = F.symmetric_uncertainty_discrete(codes, y, states, 3, w)
    assert np.all((np.asarray(su_c) >= 0) & (np.asarray(su_c) <= 1))
    np.testing.assert_allclose(su_f[1, 3], 1.0, rtol=1e-12)
    info = F.information_matrices(codes, y, states, 3, w)
    h = np.asarray(info.entropy)
    np.testing.assert_allclose(
        su_c, 2 * np.asarray(info.relevance) / (h + float(info.class_entropy)), rtol=1e-12
    )


# --------------------------------------------------------------------------------------------------
# continuous measures
# --------------------------------------------------------------------------------------------------
def _gaussian_data(seed, n=300):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n).astype(np.int32)
    mu = np.array([[0.0, 0.0, 1.0], [0.5, 0.0, -1.0], [1.0, 0.0, 0.0]])
    sd = np.array([[1.0, 1.0, 0.5], [1.5, 1.0, 1.0], [0.7, 1.0, 2.0]])
    x = mu[y] + sd[y] * rng.normal(size=(n, 3))
    return x, y


def test_mutual_information_gaussian_closed_form():
    x, y = _gaussian_data(0)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    got = np.asarray(F.mutual_information_gaussian(x, y, 3, w))
    ref = []
    for j in range(3):
        m = np.average(x[:, j], weights=w)
        var = np.average((x[:, j] - m) ** 2, weights=w)
        within = 0.0
        for c in range(3):
            s = y == c
            pc = w[s].sum() / w.sum()
            mc = np.average(x[s, j], weights=w[s])
            within += pc * math.log(np.average((x[s, j] - mc) ** 2, weights=w[s]))
        ref.append(0.5 * (math.log(var) - within))
    np.testing.assert_allclose(got, ref, rtol=1e-10)


def test_mutual_information_gaussian_vs_numerical_integration():
    """Closed form = H(Gaussian with the mixture's variance) - H(X|C), both by quadrature, to 1e-6.

    The closed form upper-bounds the exact MI of the fitted class-conditional mixture (their gap is
    the mixture's negentropy), which we also integrate numerically.
    """
    integrate = pytest.importorskip("scipy.integrate")
    stats = pytest.importorskip("scipy.stats")
    x, y = _gaussian_data(2)
    got = np.asarray(F.mutual_information_gaussian(x, y, 3))
    for j in range(3):
        pcs = np.array([np.mean(y == c) for c in range(3)])
        mus = np.array([x[y == c, j].mean() for c in range(3)])
        sds = np.array([x[y == c, j].std() for c in range(3)])  # MLE
        lo, hi = mus.min() - 12 * sds.max(), mus.max() + 12 * sds.max()

        def mix(t, pcs=pcs, mus=mus, sds=sds):
            return float(np.sum(pcs * stats.norm.pdf(t, mus, sds)))

        def quad(f, lo=lo, hi=hi):
            return integrate.quad(f, lo, hi, limit=400, epsabs=1e-12, epsrel=1e-12)[0]

        m1 = quad(lambda t, mix=mix: t * mix(t))
        var = quad(lambda t, mix=mix, m1=m1: (t - m1) ** 2 * mix(t))
        h_cond = 0.0
        for c in range(3):

            def ent(t, c=c, mus=mus, sds=sds):
                f = stats.norm.pdf(t, mus[c], sds[c])
                return -f * math.log(f) if f > 0 else 0.0

            h_cond += pcs[c] * quad(ent)
        closed = 0.5 * math.log(2 * math.pi * math.e * var) - h_cond
        assert abs(got[j] - closed) < 1e-6
        h_mix = quad(lambda t, mix=mix: -mix(t) * math.log(mix(t)) if mix(t) > 0 else 0.0)
        exact = h_mix - h_cond
        assert exact <= got[j] + 1e-9
    # predictor 1 has no class signal: both the closed form and the exact MI are near 0
    assert got[1] < 0.02


def test_equal_frequency_codes_and_binned_mi():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(200, 2))
    y = (x[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(np.int32)
    codes = np.asarray(F.equal_frequency_codes(x, 4))
    for j in range(2):
        np.testing.assert_array_equal(np.bincount(codes[:, j], minlength=4), [50, 50, 50, 50])
        order = np.argsort(x[:, j])
        ref = np.empty(200, int)
        ref[order] = np.arange(200) // 50
        np.testing.assert_array_equal(codes[:, j], ref)
    mi = np.asarray(F.mutual_information_binned(x, y, 4, 2))
    ref_mi = [_ref_mi(codes[:, j], y, np.ones(200), 4, 2) for j in range(2)]
    np.testing.assert_allclose(mi, ref_mi, rtol=1e-12)
    assert mi[0] > 0.3 and mi[1] < 0.05
    xn = x.copy()
    xn[0, 0] = np.nan
    assert int(F.equal_frequency_codes(xn, 4)[0, 0]) == -1


def test_pearson_correlations():
    x, y = _gaussian_data(4)
    rcf = np.asarray(F.class_correlation_continuous(x, y, 3))
    ref = np.zeros(3)
    for j in range(3):
        for c in range(3):
            ind = (y == c).astype(float)
            ref[j] += ind.mean() * abs(np.corrcoef(x[:, j], ind)[0, 1])
    np.testing.assert_allclose(rcf, ref, rtol=1e-10)
    np.testing.assert_allclose(
        F.feature_correlation_continuous(x), np.abs(np.corrcoef(x.T)), rtol=1e-10
    )


# --------------------------------------------------------------------------------------------------
# selection rules
# --------------------------------------------------------------------------------------------------
def _redundant_case(seed=0, n=2000, strength2=0.70):
    """X0 strong, X1 = copy of X0, X2 weaker but complementary, X3 noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    x0 = np.where(rng.random(n) < 0.85, y // 2, rng.integers(0, 2, n))  # high bit of y
    x2 = np.where(rng.random(n) < strength2, y % 2, rng.integers(0, 2, n))  # low bit of y
    x3 = rng.integers(0, 2, n)
    codes = np.stack([x0, x0, x2, x3], 1).astype(np.int32)
    return codes, y.astype(np.int32)


def test_mrmr_and_cmim_skip_redundant_copy():
    codes, y = _redundant_case()
    info = F.information_matrices(codes, y, 2, 4)
    assert float(info.relevance[2]) < float(info.relevance[0])
    picks = np.asarray(F.mrmr(info.relevance, info.redundancy, 3))
    assert picks[0] in (0, 1) and picks[1] == 2
    picks = np.asarray(F.cmim(info.relevance, info.conditional_relevance, 3))
    assert picks[0] in (0, 1) and picks[1] == 2
    assert picks[2] == 3  # the copy has I(X1; C | X0) = 0 < noise's tiny positive score


def _ref_mrmr(rel, red, k):
    chosen = [int(np.argmax(rel))]
    while len(chosen) < k:
        best, best_s = None, -np.inf
        for i in range(len(rel)):
            if i in chosen:
                continue
            s = rel[i] - np.mean([red[i, j] for j in chosen])
            if s > best_s:
                best, best_s = i, s
        chosen.append(best)
    return chosen


def _ref_cmim(rel, cond, k):
    chosen = []
    while len(chosen) < k:
        scores = [
            -np.inf if i in chosen else min([rel[i]] + [cond[i, s] for s in chosen])
            for i in range(len(rel))
        ]
        chosen.append(int(np.argmax(scores)))
    return chosen


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_mrmr_cmim_match_reference_and_jit(seed):
    rng = np.random.default_rng(seed)
    rel = rng.random(8)
    red = rng.random((8, 8))
    red = red + red.T
    cond = rng.random((8, 8))
    assert list(np.asarray(F.mrmr(rel, red, 6))) == _ref_mrmr(rel, red, 6)
    assert list(np.asarray(F.cmim(rel, cond, 6))) == _ref_cmim(rel, cond, 6)
    jm = jax.jit(F.mrmr, static_argnums=2)(rel, red, 6)
    np.testing.assert_array_equal(jm, F.mrmr(rel, red, 6))


def test_cfs_merit_and_search():
    # X2 almost as strong as X0: CFS's merit then rejects the copy X1 (with a much weaker X2,
    # adding a
    # copy of a strong feature can raise Hall's merit, which is CFS's behaviour, not a bug)
    codes, y = _redundant_case(strength2=0.80)
    su_c, su_f = F.symmetric_uncertainty_discrete(codes, y, 2, 4)
    su_c, su_f = np.asarray(su_c), np.asarray(su_f)
    # merit formula vs brute force on every subset; the search finds the exhaustive optimum here
    subsets = [list(s) for k in range(1, 5) for s in itertools.combinations(range(4), k)]
    masks = np.zeros((len(subsets), 4), bool)
    ref = np.zeros(len(subsets))
    for row, s in enumerate(subsets):
        k = len(s)
        rcf = su_c[s].mean()
        rff = np.mean([su_f[i, j] for i in s for j in s if i != j]) if k > 1 else 0.0
        ref[row] = k * rcf / math.sqrt(k + k * (k - 1) * rff)
        masks[row, s] = True
    np.testing.assert_allclose(F.cfs_merit(masks, su_c, su_f), ref, rtol=1e-12)
    selected, merit = F.cfs(su_c, su_f)
    assert list(selected) == subsets[int(np.argmax(ref))]
    np.testing.assert_allclose(merit, ref.max(), rtol=1e-12)
    assert not {0, 1} <= set(selected.tolist())  # never both copies
    assert 2 in selected


def test_cfs_stops_after_stale_expansions():
    # merit peaks at {0}; every expansion afterwards is non-improving
    rcf = np.array([0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])
    rff = np.full((8, 8), 0.9)
    selected, merit = F.cfs(rcf, rff, max_stale=5)
    assert list(selected) == [0]
    np.testing.assert_allclose(merit, 0.9)


def _ref_cfs(rcf, rff, max_stale=5, max_features=None):
    """Hall's best-first CFS with a heap and a seen set, float64 NumPy merits from the subset
    sums: (sorted subset, merit, expansions)."""
    import heapq

    rcf, rff = np.asarray(rcf, np.float64), np.asarray(rff, np.float64)
    p = rcf.shape[0]
    cap = p if max_features is None else max_features

    def merit(subset):
        s = list(subset)
        block = rff[np.ix_(s, s)]
        return rcf[s].sum() / math.sqrt(len(s) + block.sum() - np.trace(block))

    best, best_merit = frozenset(), 0.0
    heap, seen, stale, n_exp = [(-0.0, 0, (), frozenset())], {frozenset()}, 0, 0
    while heap and stale < max_stale:
        node = heapq.heappop(heap)[3]
        n_exp += 1
        improved = False
        if len(node) < cap:
            for j in range(p):
                child = node | {j}
                if j in node or child in seen:
                    continue
                seen.add(child)
                m = merit(child)
                heapq.heappush(heap, (-m, len(child), tuple(sorted(child)), child))
                if m > best_merit + 1e-12:
                    best, best_merit, improved = child, m, True
        stale = 0 if improved else stale + 1
    return sorted(best), best_merit, n_exp


@pytest.mark.parametrize("seed", range(6))
def test_cfs_search_matches_heap_reference(seed):
    rng = np.random.default_rng(seed)
    for trial in range(5):
        p = int(rng.integers(3, 24))
        rcf = rng.random(p)
        a = rng.random((p, p)) * (0.3 if trial % 2 else 1.0)
        rff = (a + a.T) / 2
        max_stale = int(rng.integers(1, 6))
        max_features = None if trial < 3 else int(rng.integers(1, p + 1))
        subset, merit, n_exp = _ref_cfs(rcf, rff, max_stale, max_features)
        res = F.cfs_search(rcf, rff, max_stale, max_features, max_expansions=128)
        assert np.flatnonzero(np.asarray(res.mask)).tolist() == subset
        np.testing.assert_allclose(float(res.merit), merit, rtol=1e-12)
        assert int(res.n_expansions) == n_exp
        assert not bool(res.truncated)
        got, got_merit = F.cfs(rcf, rff, max_stale, max_features)
        assert got.tolist() == subset and got_merit == float(res.merit)


def test_cfs_search_exact_ties_follow_heap_order():
    # identical features: every subset of a size has the same merit, so the pop order is decided
    # by size and then by the sorted index tuple, as in the heap reference
    p = 7
    rcf = np.full(p, 0.5)
    rff = np.full((p, p), 0.25)
    for max_stale in (1, 3, 8):
        subset, merit, n_exp = _ref_cfs(rcf, rff, max_stale)
        res = F.cfs_search(rcf, rff, max_stale, max_expansions=200)
        assert np.flatnonzero(np.asarray(res.mask)).tolist() == subset
        assert int(res.n_expansions) == n_exp
        np.testing.assert_allclose(float(res.merit), merit, rtol=1e-12)


def test_cfs_search_truncation_and_rerun():
    # max_stale above the number of subsets: the search runs until the open list is empty
    # (2^8 expansions), more than the first table of `cfs` (128) holds
    rng = np.random.default_rng(7)
    p = 8
    rcf = rng.random(p)
    rff = rng.random((p, p)) * 0.2
    subset, merit, n_exp = _ref_cfs(rcf, rff, max_stale=1000)
    assert n_exp == 2**p > 128
    small = F.cfs_search(rcf, rff, 1000, max_expansions=10)
    assert bool(small.truncated) and int(small.n_expansions) == 10
    full = F.cfs_search(rcf, rff, 1000, max_expansions=2**p)
    assert not bool(full.truncated) and int(full.n_expansions) == n_exp
    assert np.flatnonzero(np.asarray(full.mask)).tolist() == subset
    # `cfs` continues the truncated search in a larger table: same subset and merit
    got, got_merit = F.cfs(rcf, rff, max_stale=1000)
    assert got.tolist() == subset
    np.testing.assert_allclose(got_merit, merit, rtol=1e-12)


def test_cfs_search_jit_vmap_and_input_checks():
    rng = np.random.default_rng(3)
    B, p = 4, 9
    rcf = rng.random((B, p))
    a = rng.random((B, p, p))
    rff = (a + np.swapaxes(a, 1, 2)) / 2
    batched = jax.vmap(lambda c, f: F.cfs_search(c, f, 3, max_expansions=40))(rcf, rff)
    for b in range(B):
        subset, merit, _ = _ref_cfs(rcf[b], rff[b], 3)
        assert np.flatnonzero(np.asarray(batched.mask[b])).tolist() == subset
        np.testing.assert_allclose(float(batched.merit[b]), merit, rtol=1e-12)
    jitted = jax.jit(lambda c, f, k: F.cfs_search(c, f, 3, k, max_expansions=40))
    one = jitted(rcf[0], rff[0], 2)
    assert int(np.asarray(one.mask).sum()) <= 2
    with pytest.raises(ValueError, match="feature_correlation"):
        F.cfs_search(rcf[0], rff[0][:3])
    with pytest.raises(ValueError, match="max_stale"):
        F.cfs_search(rcf[0], rff[0], 0)
    with pytest.raises(ValueError, match="max_features"):
        F.cfs(rcf[0], rff[0], max_features=0)
    with pytest.raises(ValueError, match="max_expansions"):
        F.cfs_search(rcf[0], rff[0], max_expansions=0)
    with pytest.raises(ValueError, match="absolute values"):
        F.cfs(rcf[0] - 0.5, rff[0])
    with pytest.raises(ValueError, match="feature_correlation must hold finite"):
        F.cfs_search(rcf[0], np.full((p, p), np.nan))


def test_mi_prefilter_drops_noise_keeps_signal():
    rng = np.random.default_rng(0)
    n = 500
    y = rng.integers(0, 3, n).astype(np.int32)
    signal = np.where(rng.random((n, 3)) < 0.6, y[:, None], rng.integers(0, 3, (n, 3)))
    noise = rng.integers(0, 5, (n, 20))
    codes = np.concatenate([signal, noise], 1).astype(np.int32)
    key = jax.random.key(42)
    keep, mi, thr = F.mi_prefilter(codes, y, key, 3 * (3,) + 20 * (5,), 3)
    keep = np.asarray(keep)
    assert keep[:3].all()
    assert keep[3:].sum() <= 10  # noise predictors survive only if they beat every probe
    probes = jax.random.randint(key, (n, 3), 0, 5, dtype=jnp.int32)
    probe_mi = [_ref_mi(np.asarray(probes[:, j]), y, np.ones(n), 5, 3) for j in range(3)]
    np.testing.assert_allclose(thr, max(probe_mi), rtol=1e-10)
    np.testing.assert_array_equal(keep, np.asarray(mi) >= max(probe_mi))
    keep_min, _, thr_min = F.mi_prefilter(codes, y, key, 3 * (3,) + 20 * (5,), 3, rule="min")
    np.testing.assert_allclose(thr_min, min(probe_mi), rtol=1e-10)
    assert np.asarray(keep_min).sum() >= keep.sum()
    with pytest.raises(ValueError, match="rule"):
        F.mi_prefilter(codes, y, key, 5, 3, rule="any")


def test_threshold_filter_and_filter_wrapper():
    scores = np.array([0.1, 0.5, 0.3, 0.05])
    np.testing.assert_array_equal(F.threshold_filter(scores, 0.2), [False, True, True, False])
    masks, order = F.ranking_masks(scores)
    np.testing.assert_array_equal(order, [1, 2, 0, 3])
    np.testing.assert_array_equal(np.asarray(masks).sum(1), [0, 1, 2, 3, 4])
    # an evaluator whose error is lowest with {1, 2}: error = #missing good + 0.5 * #bad
    good = np.array([False, True, True, False])

    def evaluate(mask):
        mask = np.asarray(mask)
        return float(np.sum(good & ~mask) + 0.5 * np.sum(~good & mask))

    mask, errors, order = F.filter_wrapper_forward(scores, evaluate)
    np.testing.assert_array_equal(mask, good)
    np.testing.assert_allclose(errors, [2.0, 1.0, 0.0, 0.5, 1.0])
    g = good[None, :]
    batched = lambda m: jnp.sum(g & ~m, axis=1) + 0.5 * jnp.sum(~g & m, axis=1)
    mask_b, errors_b, _ = F.filter_wrapper_forward(scores, batched, batched=True)
    np.testing.assert_array_equal(mask_b, mask)
    np.testing.assert_allclose(errors_b, errors)
    mask_c, errors_c, _ = F.filter_wrapper_forward(scores, evaluate, max_features=1)
    assert errors_c.shape == (2,) and np.asarray(mask_c).sum() == 1


def test_input_errors():
    with pytest.raises(ValueError, match="n_states"):
        F.mutual_information_discrete(np.zeros((4, 2), np.int32), np.zeros(4, np.int32), (2,), 2)
    with pytest.raises(ValueError, match="k must be"):
        F.mrmr(np.ones(3), np.ones((3, 3)), 4)


def test_gaussian_mi_of_a_constant_column_is_zero_and_rankings_never_pick_nan():
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=40)
    X = np.c_[x0, np.full(40, 2.0), rng.normal(size=40)]
    y = (x0 > 0).astype(np.int32)
    mi = np.asarray(F.mutual_information_gaussian(X, y, 2))
    assert mi[1] == 0.0 and np.isfinite(mi).all() and mi[0] > mi[2] > 0
    assert list(np.asarray(F.mrmr(mi, np.zeros((3, 3)), 3))) == [0, 2, 1]
    no_redundancy = np.tile(mi[:, None], (1, 3))  # I(X_i; C | X_k) = I(X_i; C)
    assert list(np.asarray(F.cmim(mi, no_redundancy, 3))) == [0, 2, 1]
    # a varying column with a one-row class: +inf (the formula's limit), finite with var_floor
    X1 = np.c_[x0, np.r_[np.zeros(39), 5.0]]
    y1 = np.r_[np.zeros(39, np.int32), 1]
    assert np.isposinf(np.asarray(F.mutual_information_gaussian(X1[:, 1:], y1, 2))[0])
    assert np.isfinite(F.mutual_information_gaussian(X1[:, 1:], y1, 2, var_floor=1e-6)).all()
    with pytest.raises(ValueError, match="relevance contains NaN"):
        F.mrmr(np.array([np.nan, 1.0, 0.0]), np.zeros((3, 3)), 1)
    with pytest.raises(ValueError, match="conditional_relevance contains NaN"):
        F.cmim(np.ones(2), np.array([[0.0, np.nan], [0.0, 0.0]]), 1)
    for k in (2.5, True, "2"):
        with pytest.raises(TypeError, match="k must be an int"):
            F.mrmr(mi, np.zeros((3, 3)), k)
    assert list(np.asarray(F.mrmr(mi, np.zeros((3, 3)), np.int64(2)))) == [0, 2]


def test_negative_or_nan_weights_are_rejected():
    codes = np.array([[0], [1], [0], [1], [0], [1]])
    y = np.array([0, 1, 0, 1, 1, 0])
    for bad, what in (
        (np.array([1, 1, 1, 1, -1, -1.0]), "negative"),
        (np.r_[np.ones(5), np.nan], "non-finite"),
    ):
        with pytest.raises(ValueError, match=f"weight must be finite and >= 0.*{what}"):
            F.mutual_information_discrete(codes, y, 2, 2, weight=bad)
        with pytest.raises(ValueError, match="weight must be finite and >= 0"):
            F.mutual_information_gaussian(codes.astype(float), y, 2, weight=bad)
        with pytest.raises(ValueError, match="weight must be finite and >= 0"):
            F.mi_prefilter(codes, y, jax.random.PRNGKey(0), 2, 2, weight=bad)
    # valid weights inside a caller's jit are not checked eagerly (tracers) and still work
    w = np.array([1, 2, 0, 1, 1, 1.0])
    ref = F.mutual_information_discrete(codes, y, 2, 2, weight=w)
    out = jax.jit(lambda w: F.mutual_information_discrete(codes, y, 2, 2, weight=w))(w)
    np.testing.assert_allclose(out, ref, rtol=1e-12)


def test_counts_and_probe_arguments_name_themselves():
    with pytest.raises(TypeError, match="n_states must be an int or a sequence of ints"):
        F.as_state_tuple(3.0, 2)
    with pytest.raises(TypeError, match="n_states entries must be ints"):
        F.as_state_tuple([3, 2.0], 2)
    codes = np.zeros((4, 2), np.int32)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(TypeError, match="n_probes must be an int"):
        F.mi_prefilter(codes, y, jax.random.PRNGKey(0), 2, 2, n_probes=2.5)
    with pytest.raises(TypeError, match="probe_states must be an int"):
        F.mi_prefilter(codes, y, jax.random.PRNGKey(0), 2, 2, probe_states=5.0)


def test_constant_columns_score_exactly_zero():
    # an ulp-sized residue of s1 / wc gave a constant column a spurious Gaussian MI (1.05 nats in
    # float32, ranked first; +inf or 0.35 in float64 with var_floor=0), and a weighted constant
    # discrete column MI = 1e-16 > 0, which threshold=0 kept
    rng = np.random.default_rng(3)
    for n in (50, 77, 100):
        y = (np.arange(n) % 3).astype(np.int32)
        X = np.c_[y + rng.normal(size=n), np.full(n, 12345.6), np.full(n, 3.7)]
        w = rng.random(n)
        for dtype in (np.float32, np.float64):
            with jax.enable_x64(dtype == np.float64):
                for weight in (None, w):
                    mi = np.asarray(F.mutual_information_gaussian(X.astype(dtype), y, 3, weight))
                    assert mi[1] == 0.0 and mi[2] == 0.0 and mi[0] > 0.1, (n, dtype, mi)
                    r = np.asarray(F.feature_correlation_continuous(X.astype(dtype), weight))
                    assert r[1, 2] == 0.0 and r[2, 1] == 0.0 and r[0, 1] == 0.0, (n, dtype)
                    codes = np.c_[y, np.zeros(n, np.int32)]
                    mid = np.asarray(F.mutual_information_discrete(codes, y, 3, 3, weight))
                    assert mid[1] == 0.0 and mid[0] > 0.5, (n, dtype, mid)
    jaxnb = pytest.importorskip("jaxnb")
    with jax.enable_x64(False):
        e = jaxnb.FilterNB("mi", k=2).fit(X.astype(np.float32), y)
        assert e.ranking_.tolist()[0] == 0 and e.scores_[1] == 0.0
    assert jaxnb.FilterNB("threshold").fit(X, y).support_.tolist() == [True, False, False]
    d = np.c_[y, np.zeros(n, np.int64)]
    got = jaxnb.FilterNB("threshold", discrete="all").fit(d, y, sample_weight=w).support_
    assert got.tolist() == [True, False]


def test_rankings_never_repeat_a_pick_with_infinite_scores():
    rel = np.array([1.0, 1.0, 0.5])
    red = np.full((3, 3), np.inf)
    np.fill_diagonal(red, 0.0)
    assert sorted(np.asarray(F.mrmr(rel, red, 3)).tolist()) == [0, 1, 2]
    cond = np.full((3, 3), -np.inf)
    assert sorted(np.asarray(F.cmim(rel, cond, 3)).tolist()) == [0, 1, 2]
    assert sorted(np.asarray(F.mrmr(np.array([np.inf, np.inf, 0.0]), red, 3)).tolist()) == [0, 1, 2]


def test_cfs_ranking_is_sorted_in_user_order_and_prefilter_takes_float_codes():
    jaxnb = pytest.importorskip("jaxnb")
    rng = np.random.default_rng(5)
    n = 200
    y = rng.integers(0, 2, n)
    X = np.c_[y + 0.3 * rng.normal(size=n), np.where(rng.random(n) < 0.8, y, 1 - y)]
    e = jaxnb.FilterNB("cfs", discrete=[1]).fit(X, y)
    assert e.ranking_.tolist() == [0, 1]
    codes = np.c_[y, rng.integers(0, 3, n)]
    key = jax.random.key(0)
    keep_i, mi_i, _ = F.mi_prefilter(codes.astype(np.int32), y, key, (2, 3), 2)
    keep_f, mi_f, _ = F.mi_prefilter(codes.astype(float), y, key, (2, 3), 2)
    np.testing.assert_array_equal(keep_f, keep_i)
    np.testing.assert_allclose(mi_f, mi_i, rtol=1e-12)
