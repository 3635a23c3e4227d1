"""Tests for jaxnb.stream.summaries: Gaussian, GKClass, cPiD, categorical counts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.discretize import apply_cuts, modl_cuts_from_counts
from jaxnb.stream.summaries import (
    CategoricalCounts,
    CPiD,
    GaussianSummary,
    GKClass,
    update_cpid,
    update_gkclass,
)


def _stream(order, n, p, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    x = rng.normal(size=(n, p)) + y[:, None]
    x[:, -1] = np.round(x[:, -1], 1)  # last predictor has many ties
    if order == "sorted":
        x = np.sort(x, axis=0)
    elif order == "reversed":
        x = np.sort(x, axis=0)[::-1].copy()
    return x, y


def _nbytes(module):
    return [leaf.nbytes for leaf in jax.tree_util.tree_leaves(module)]


# ------------------------------------------------------------------------------ Gaussian
def test_gaussian_batches_and_merge_equal_two_pass_float64():
    rng = np.random.default_rng(0)
    x = rng.normal(loc=1e3, scale=2.0, size=(500, 4))
    x[rng.random(x.shape) < 0.05] = np.nan
    y = rng.integers(0, 3, 500)
    w = rng.uniform(0.5, 2.0, 500)
    a = GaussianSummary.init(3, 4)
    for s in range(0, 300, 37):
        a = a.update(x[s : min(s + 37, 300)], y[s : min(s + 37, 300)], w[s : min(s + 37, 300)])
    b = GaussianSummary.init(3, 4).update(x[300:], y[300:], w[300:])
    m = a.merge(b)
    for j in range(3):
        for i in range(4):
            keep = (y == j) & ~np.isnan(x[:, i])
            xv, wv = x[keep, i], w[keep]
            mean = np.sum(wv * xv) / np.sum(wv)
            m2 = np.sum(wv * (xv - mean) ** 2)
            assert float(m.count[j, i]) == pytest.approx(np.sum(wv), rel=1e-12)
            assert abs(float(m.mean[j, i]) - mean) <= 1e-10 * abs(mean)
            assert abs(float(m.m2[j, i]) - m2) <= 1e-10 * m2


def test_gaussian_log_prob_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)
    s = GaussianSummary.init(2, 2).update(x, y)
    q = rng.normal(size=(5, 2))
    lp = np.asarray(s.log_prob(q))
    lp0 = np.asarray(s.log_prob(q, var_smoothing=0.0))
    for j in range(2):
        for i in range(2):
            xv = x[y == j, i]
            ref = stats.norm.logpdf(q[:, i], xv.mean(), xv.std())
            np.testing.assert_allclose(lp0[:, i, j], ref, rtol=1e-12)
            var = xv.var() + 1e-9 * x[:, i].var()  # NaiveBayes' floor: relative to the column
            ref = stats.norm.logpdf(q[:, i], xv.mean(), np.sqrt(var))
            np.testing.assert_allclose(lp[:, i, j], ref, rtol=1e-12)
    cuts, counts = s.bins(20)
    np.testing.assert_allclose(np.asarray(counts.sum(axis=1)), np.asarray(s.count.T), rtol=1e-12)


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_gaussian_log_prob_keeps_small_unit_columns_and_equals_naive_bayes(scale):
    """The variance floor is relative (var_smoothing x the column's pooled variance), as in
    NaiveBayes and OnlineNB: an absolute floor of 1e-9 (the default until 2026-11-29) swamped a
    column in micro-units (variance ~1e-12) and left its classes almost indistinguishable. A
    class not seen yet scores with the pooled mean and variance (it had mean 0 and variance
    1e-9), and rescaling a column only shifts its log densities by -log(scale)."""
    from jaxnb import NaiveBayes
    from jaxnb.stream.online import log_contributions
    from jaxnb.stream.summaries import log_prob_gaussian

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    x = (rng.normal(size=(400, 2)) + np.c_[y, -y]) * scale
    q = x[:7]
    s = GaussianSummary.init(3, 2).update(x, y)  # class 2 never seen
    lp = np.asarray(s.log_prob(q))
    nb = NaiveBayes(discrete="none").fit(x, y)
    joint = lp[:, :, :2].sum(1) + np.log(np.bincount(y) / 400)
    post = np.exp(joint - joint.max(1, keepdims=True))
    np.testing.assert_allclose(post / post.sum(1, keepdims=True), nb.predict_proba(q), rtol=1e-9)
    # the unseen class: the pooled normal of each column
    ref = -0.5 * (np.log(2 * np.pi * x.var(0)) + (q - x.mean(0)) ** 2 / x.var(0))
    np.testing.assert_allclose(lp[:, :, 2], ref, rtol=1e-7)
    # scale-equivariant: the same densities as the unit-scale column, shifted by -log(scale)
    s1 = GaussianSummary.init(3, 2).update(x / scale, y)
    np.testing.assert_allclose(
        lp + np.log(scale), np.asarray(s1.log_prob(q / scale)), rtol=1e-9, atol=1e-9
    )
    # one density in the library: OnlineNB's scores and the pure function agree
    np.testing.assert_allclose(
        lp, np.asarray(log_contributions(s, None, jnp.asarray(q))), rtol=1e-13
    )
    np.testing.assert_allclose(lp, np.asarray(jax.jit(log_prob_gaussian)(s, q, 1e-9)), rtol=1e-13)
    # an absolute floor still applies on request: every variance raised to 100 * scale**2
    floored = np.asarray(s.log_prob(q, var_floor=100 * scale**2))
    for j in range(2):
        mu = x[y == j].mean(0)
        ref = -0.5 * (np.log(2 * np.pi * 100 * scale**2) + (q - mu) ** 2 / (100 * scale**2))
        np.testing.assert_allclose(floored[:, :, j], ref, rtol=1e-9)


# ------------------------------------------------------------------------------ GKClass
@pytest.mark.parametrize("order", ["sorted", "reversed", "random"])
@pytest.mark.parametrize("epsilon", [0.02, None])
def test_gkclass_rank_error_within_bound(order, epsilon):
    n, p = 6000, 3
    x, y = _stream(order, n, p)
    s = GKClass.init(2, p, capacity=100, epsilon=epsilon, chunk_size=32)
    for start in range(0, n, 1500):
        s = s.update(x[start : start + 1500], y[start : start + 1500])
    bound = np.asarray(s.rank_error_bound())
    # predictors 0, 1 are continuous; predictor 2 has heavy ties, which (in total-order GK) can
    # overflow the capacity on sorted orders: its bound grows, but it must still hold
    if epsilon is not None:
        assert not np.asarray(s.overflowed())[:2].any()
        assert (bound[:2] <= epsilon * n).all()  # GK guarantee g + Delta <= 2 eps n
    qs = np.linspace(0.0, 1.0, 201)
    got = np.asarray(s.quantile(qs))
    for i in range(p):
        xs = np.sort(x[:, i])
        r = np.maximum(np.ceil(qs * n), 1)
        lo = np.searchsorted(xs, got[i], "left") + 1  # rank range of the returned value
        hi = np.searchsorted(xs, got[i], "right")
        err = np.maximum(np.maximum(lo - r, r - hi), 0)
        assert err.max() <= bound[i]
        if i < 2:
            assert bound[i] < 0.05 * n  # not a vacuous bound
    # per-class counts: totals exact, cumulated counts within Delta_i of the exact ones
    cc = np.asarray(s.class_counts)
    np.testing.assert_array_equal(cc.sum(axis=1), np.tile(np.bincount(y, minlength=2), (p, 1)))
    np.testing.assert_array_equal(cc.sum(axis=2), np.asarray(s.g))
    for i in range(p):
        used = np.asarray(s.g[i]) > 0
        v, d = np.asarray(s.values[i])[used], np.asarray(s.delta[i])[used]
        cum = np.cumsum(cc[i][used], axis=0)
        le = np.stack([(x[y == j, i][None, :] <= v[:, None]).sum(1) for j in range(2)], 1)
        lt = np.stack([(x[y == j, i][None, :] < v[:, None]).sum(1) for j in range(2)], 1)
        # tuples <= i cover only values <= v_i; values < v_i left to later tuples are <= Delta_i
        assert (cum <= le).all() and (lt - cum <= d[:, None]).all()


def test_gkclass_chunk_one_is_classic_gk():
    x, y = _stream("random", 400, 2, seed=5)
    s = GKClass.init(2, 2, capacity=60, epsilon=0.05, chunk_size=1)
    s = update_gkclass(s, jnp.asarray(x), jnp.asarray(y, jnp.int32))
    # GK invariant g + Delta <= floor(2 eps n) after every insert-and-compress
    assert (np.asarray(s.g + s.delta).max(axis=1) <= np.floor(2 * 0.05 * 400)).all()
    assert not np.asarray(s.overflowed()).any()
    assert (np.asarray(s.count) == 400).all()


def test_gkclass_small_capacity_overflows_but_stays_correct():
    x, y = _stream("random", 3000, 1, seed=2)
    s = GKClass.init(2, 1, capacity=10, epsilon=0.001).update(x, y)
    assert bool(s.overflowed()[0]) and int(s.n_tuples[0]) <= 10
    bound = float(s.rank_error_bound()[0])
    xs = np.sort(x[:, 0])
    for q, v in zip(
        np.linspace(0, 1, 11), np.asarray(s.quantile(np.linspace(0, 1, 11)))[0], strict=True
    ):
        r = max(np.ceil(q * 3000), 1)
        lo, hi = np.searchsorted(xs, v, "left") + 1, np.searchsorted(xs, v, "right")
        assert max(lo - r, r - hi, 0) <= bound


def test_gkclass_bins_log_prob_and_modl_second_level():
    x, y = _stream("random", 4000, 2, seed=3)
    x[:, 1] = np.where(y == 1, x[:, 1] + 3, x[:, 1])  # strongly informative
    x[::50, 0] = np.nan  # missing values are skipped
    s = GKClass.init(2, 2).update(x, y)
    assert int(s.count[0]) == 4000 - 80 and int(s.count[1]) == 4000
    cuts, counts = s.bins()
    lp = np.asarray(s.log_prob(np.array([[0.0, 0.0], [np.nan, 4.0]])))
    code = apply_cuts(np.array([0.0]), np.asarray(cuts[0]))[0]
    c = np.asarray(counts[0], dtype=float)
    ref = np.log(c[code] + 1.0) - np.log(c.sum(0) + np.count_nonzero(c.sum(1)))
    np.testing.assert_allclose(lp[0, 0], ref, rtol=1e-12)
    np.testing.assert_array_equal(lp[1, 0], [0.0, 0.0])
    assert lp[1, 1, 1] > lp[1, 1, 0]
    # probabilities over the bins sum to one per class
    mids = np.unique(np.asarray(s.values[1])[: int(s.n_tuples[1])])  # predictor 1 has ties
    total = np.exp(np.asarray(s.log_prob(np.stack([mids, mids], 1)))[:, 1, :]).sum(0)
    np.testing.assert_allclose(total, [1.0, 1.0], rtol=1e-12)
    second = modl_cuts_from_counts(np.asarray(cuts), np.asarray(counts))
    assert len(second) == 2 and second[1].size >= 1 and second[1].size < 20


# ------------------------------------------------------------------------------ cPiD
@pytest.mark.parametrize("order", ["sorted", "reversed", "random"])
def test_cpid_constant_intervals_exact_totals(order):
    x, y = _stream(order, 5000, 2, seed=4)
    s = CPiD.init(2, 2, n_intervals=30, chunk_size=16)
    shapes = [leaf.shape for leaf in jax.tree_util.tree_leaves(s)]
    for start in range(0, 5000, 1000):
        s = s.update(x[start : start + 1000], y[start : start + 1000])
        assert [leaf.shape for leaf in jax.tree_util.tree_leaves(s)] == shapes
    counts = np.asarray(s.counts)
    np.testing.assert_array_equal(counts.sum(axis=1), np.tile(np.bincount(y), (2, 1)))
    breaks = np.asarray(s.breaks)
    assert (np.diff(breaks, axis=1) >= 0).all()
    # intervals are reasonably balanced: none holds a large part of the data
    assert counts.sum(axis=2).max() <= 0.2 * 5000
    # log P(x in interval b | j) = log (N_bj + 1) - log (N_j + B), B = 30 intervals; interval b is
    # (breaks[b-1], breaks[b]], values beyond the range fall in the outer intervals
    q = np.concatenate([x[:200], [[-50.0, -50.0], [50.0, 50.0], [np.nan, 0.0]], breaks[:, :3].T])
    lp = np.asarray(s.log_prob(q))
    assert lp.shape == (206, 2, 2)
    for i in range(2):
        c = counts[i].astype(float)
        code = np.searchsorted(breaks[i], q[:, i], side="left")
        ref = np.log(c[code] + 1.0) - np.log(c.sum(0) + 30.0)
        ref[np.isnan(q[:, i])] = 0.0  # missing values contribute 0
        np.testing.assert_allclose(lp[:, i], ref, rtol=1e-12, atol=1e-14)
    # one value per interval (each break tops its own interval): probabilities sum to one per class
    tops = np.concatenate([breaks, breaks[:, -1:] + 1.0], axis=1).T  # (30, 2)
    assert all((np.searchsorted(breaks[i], tops[:, i]) == np.arange(30)).all() for i in range(2))
    total = np.exp(np.asarray(s.log_prob(tops))).sum(0)
    np.testing.assert_allclose(total, np.ones((2, 2)), rtol=1e-12)


def test_cpid_chunk_one_matches_jit_and_row_order():
    x, y = _stream("random", 300, 2, seed=6)
    s = CPiD.init(2, 2, n_intervals=10, chunk_size=1)
    a = update_cpid(s, jnp.asarray(x), jnp.asarray(y, jnp.int32))
    b = s
    for start in range(0, 300, 100):
        b = b.update(x[start : start + 100], y[start : start + 100])
    np.testing.assert_array_equal(np.asarray(a.counts), np.asarray(b.counts))
    np.testing.assert_allclose(np.asarray(a.breaks), np.asarray(b.breaks))


# ------------------------------------------------------------------------------ memory
def test_memory_constant_1e4_vs_1e6_examples():
    p = 2
    rng = np.random.default_rng(7)
    big = jnp.asarray(rng.normal(size=(250_000, p)))
    ybig = jnp.asarray(rng.integers(0, 2, 250_000), jnp.int32)
    for make, upd in [
        (lambda: GKClass.init(2, p, chunk_size=512), update_gkclass),
        (lambda: CPiD.init(2, p, chunk_size=512), update_cpid),
        (lambda: GaussianSummary.init(2, p), None),
    ]:
        small = make()
        large = make()
        if upd is None:
            w = jnp.ones(250_000)
            small = small.update(np.asarray(big[:10_000]), np.asarray(ybig[:10_000]))
            for _ in range(4):
                large = large.update(big, ybig, w, check_input=False)
        else:
            small = upd(small, big[:10_000], ybig[:10_000])
            for _ in range(4):
                large = upd(large, big, ybig)
        assert _nbytes(small) == _nbytes(large)
        if upd is not None:
            total = large.count
            np.testing.assert_array_equal(np.asarray(total), [1_000_000] * p)


# ------------------------------------------------------------------------------ categorical
def test_categorical_counts_exact_and_log_prob():
    rng = np.random.default_rng(8)
    codes = np.stack([rng.integers(-1, 3, 100), rng.integers(0, 2, 100)], 1)
    y = rng.integers(0, 2, 100)
    s = CategoricalCounts.init(2, (3, 2)).update(codes[:60], y[:60]).update(codes[60:], y[60:])
    ref = np.zeros((5, 2))
    for r in range(100):
        if codes[r, 0] >= 0:
            ref[codes[r, 0], y[r]] += 1
        ref[3 + codes[r, 1], y[r]] += 1
    np.testing.assert_array_equal(np.asarray(s.counts), ref)
    lp = np.asarray(s.log_prob(np.array([[-1, 1]])))
    assert lp[0, 0, 0] == 0.0
    np.testing.assert_allclose(lp[0, 1], np.log((ref[4] + 1) / (ref[3:5].sum(0) + 2)))
    with pytest.raises(ValueError, match="codes"):
        s.update(np.array([[3, 0]]), np.array([0]))


def test_validation_names_the_argument():
    s = GKClass.init(2, 2)
    with pytest.raises(ValueError, match="values must have 2 columns"):
        s.update(np.zeros((3, 3)), np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="y codes"):
        s.update(np.zeros((3, 2)), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="epsilon"):
        GKClass.init(2, 2, epsilon=1.5)
    with pytest.raises(ValueError, match="split_fraction"):
        CPiD.init(2, 2, split_fraction=0.0)
    with pytest.raises(ValueError, match="values must be finite"):
        GaussianSummary.init(2, 1).update(np.array([[np.inf]]), np.array([0]))


def test_gaussian_float32_large_offset_batches_stay_accurate():
    # a plain float32 batch sum of 65536 values near 1e6 put the mean 47 off and the variance
    # at 2228; sums about a pivot with the two-pass correction keep float32 close to float64
    rng = np.random.default_rng(21)
    n = 65536
    y = rng.integers(0, 2, n)
    x = (np.where(y[:, None] == 0, 1e6, -3e6) + rng.normal(size=(n, 2)) * [1.0, 5.0]).astype(
        np.float32
    )
    s = GaussianSummary.init(2, 2, dtype=jnp.float32)
    s = s.update(x[: n // 2], y[: n // 2]).update(x[n // 2 :], y[n // 2 :])  # pivot: running mean
    assert s.mean.dtype == jnp.float32
    x64 = x.astype(np.float64)
    for k in range(2):
        xk = x64[y == k]
        # at most one float32 ulp from the correctly rounded mean (0.0625 at 1e6, 0.25 at 3e6):
        # XLA:CPU gives the rounded mean itself, an H200's reduction order one ulp off
        rounded = xk.mean(0).astype(np.float32)
        ulp = np.spacing(np.abs(rounded))
        assert np.all(np.abs(np.asarray(s.mean[k]) - rounded) <= ulp), (s.mean[k], rounded)
        np.testing.assert_allclose(np.asarray(s.variance[k]), xk.var(0), rtol=1e-3)


def test_empty_batches_weight_dtype_and_merge_dtype():
    for summary in (GKClass.init(2, 1), CPiD.init(2, 1)):
        out = summary.update(np.zeros((0, 1)), np.zeros(0, np.int64))
        for a, b in zip(jax.tree.leaves(out), jax.tree.leaves(summary), strict=True):
            np.testing.assert_array_equal(a, b)
    x = np.random.default_rng(22).normal(size=(10, 2))
    y = np.arange(10) % 2
    s32 = GaussianSummary.init(2, 2, dtype=jnp.float32)
    assert s32.update(x, y, np.ones(10)).mean.dtype == jnp.float32  # weights follow the summary
    with pytest.raises(TypeError, match="same init"):
        s32.merge(GaussianSummary.init(2, 2, dtype=jnp.float64))
    with pytest.raises(ValueError, match="finite"):
        s32.update(x, y).log_prob(np.array([[np.inf, 0.0]]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("value", [3.7, 1e6 + 0.1, -123.456])
def test_a_constant_column_has_no_spread_through_rounding(dtype, value):
    """Streamed in batches (and merged), a constant column's pooled mean Σ w mean / Σ w rounds,
    so its pooled sd came out at ~1 eps |mean| > 0 in 30-40% of the states: it got a variance
    floor of var_smoothing x that (a huge class-independent log density) and a standardized
    offset of about -35. Pooled as offsets from one class's mean it is exactly constant: unit
    variance (log density -0.919 at the value) and offset 0 in every state. The test stays
    exact: a column that varies by 1e-4 of its magnitude, and epoch seconds spread over five
    minutes (float32 keeps them in steps of 128 s: an sd below eps |mean|), keep their spread."""
    from jaxnb.stream.online import standardized_offset
    from jaxnb.suffstats import has_spread, pooled_moments

    rng = np.random.default_rng(0)
    n, c = 600, 3
    y = rng.integers(0, c, n)
    x = np.c_[
        np.full(n, value),
        value * (1 + 1e-4 * rng.normal(size=n)),
        1.7e9 + rng.uniform(0, 300, n),
    ].astype(dtype)
    with jax.enable_x64(dtype == np.float64):
        s = GaussianSummary.init(c, 3, dtype=dtype)
        spread, offset, lp = [], [], []
        for lo in range(0, n, 7):  # ragged batches: merges of per-batch moments
            s = s.update(x[lo : lo + 7], y[lo : lo + 7])
            tot, _, pm2 = pooled_moments(s.count, s.mean, s.m2)
            spread.append(np.asarray(has_spread(tot, pm2)))
            offset.append(float(standardized_offset(s)[0]))
            lp.append(np.asarray(s.log_prob(x[:1]))[0, 0])
        assert np.asarray(s.mean).dtype == dtype
        assert not np.any(np.array(spread)[:, 0]) and np.all(np.array(spread)[2:, 1:])
        np.testing.assert_array_equal(offset, 0.0)
        np.testing.assert_allclose(np.array(lp), -0.5 * np.log(2 * np.pi), rtol=1e-5)


def _summary_cases():
    return [
        ("gaussian", lambda: GaussianSummary.init(3, 4), True),
        ("gkclass", lambda: GKClass.init(3, 4, capacity=30, chunk_size=8), False),
        ("cpid", lambda: CPiD.init(3, 4, n_intervals=12, chunk_size=8), False),
        ("categorical", lambda: CategoricalCounts.init(3, (3, 2, 4, 3)), True),
    ]


def _stream_rows(name, seed, n):
    """(rng, X, y): n rows of 3 classes, 4 predictors for the `_summary_cases` summary ``name``:
    codes in [-1, k) (-1 missing) for the categorical one, else class-shifted normal values with
    10% NaN."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    if name == "categorical":
        X = np.stack([rng.integers(-1, k, n) for k in (3, 2, 4, 3)], axis=1)
    else:
        X = rng.normal(size=(n, 4)) + y[:, None]
        X[rng.random(X.shape) < 0.1] = np.nan
    return rng, X, y


@pytest.mark.parametrize(("name", "make", "weighted"), _summary_cases(), ids=lambda c: c)
def test_host_batches_are_padded_and_change_nothing(name, make, weighted, compiles):
    """A host batch is padded (missing rows, weight 0) to a bucket of rows (of whole chunks for
    GKClass and CPiD), so 20 batch sizes compile at most two update programs, where each size
    compiled its own (0.25-1.5 s each). The summary equals, bit for bit, the one updated with the
    same rows as device arrays (not padded)."""
    rng, X, y = _stream_rows(name, 7, 400)
    w = rng.uniform(0.5, 2.0, 400)
    kw = (lambda a, b: {"weight": w[a:b]}) if weighted else (lambda a, b: {})
    host = make().update(X[:10], y[:10], **kw(0, 10))
    dev = make().update(jnp.asarray(X[:10]), jnp.asarray(y[:10]), **kw(0, 10))
    before = compiles.n
    start = 10
    for size in range(11, 31):
        stop = start + size
        host = host.update(X[start:stop], y[start:stop], **kw(start, stop))
        start = stop
    assert compiles.n - before <= 2, compiles.n - before
    start = 10
    for size in range(11, 31):
        stop = start + size
        extra = {k: jnp.asarray(v) for k, v in kw(start, stop).items()}
        dev = dev.update(jnp.asarray(X[start:stop]), jnp.asarray(y[start:stop]), **extra)
        start = stop
    for a, b in zip(jax.tree.leaves(host), jax.tree.leaves(dev), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize(("name", "make", "weighted"), _summary_cases(), ids=lambda c: c)
def test_log_prob_is_one_program_per_bucket_of_query_rows(name, make, weighted, compiles):
    """`log_prob` runs as one jitted program: eagerly, GKClass's compiled ~30 small programs on a
    first call (11 for each new query size) and dispatched one each on every call (1.3-1.7 ms
    per call for GKClass, CPiD and CategoricalCounts on a 2-core Xeon; ~0.2 ms now). Host queries
    are padded with missing rows to a bucket of row counts, so 20 query sizes compile at most
    two programs; the result is a device array equal, bit for bit, to that of the same rows as a
    device array (not padded), and the padded rows change no row's value."""
    _, X, y = _stream_rows(name, 8, 300)
    summary = make().update(X[:200], y[:200])
    full = np.asarray(summary.log_prob(jnp.asarray(X[200:])))
    summary.log_prob(X[200:210])
    before = compiles.n
    for size in range(11, 31):
        got = summary.log_prob(X[200 : 200 + size])
        assert isinstance(got, jax.Array) and got.shape == (size,) + full.shape[1:]
        np.testing.assert_array_equal(np.asarray(got), full[:size])
    assert compiles.n - before <= 2, compiles.n - before
    assert np.isfinite(full).all() and (full <= 0).all()


def test_gk_quantile_and_bins_are_one_program_each(compiles):
    """`GKClass.quantile` and `.bins` are one jitted program each: `quantile` put its levels on
    the device and masked predictors with no value after its program (eager steps: 5 programs on
    a first call, 2 per new number of levels), `bins` sliced its cuts eagerly (2 programs per
    new capacity). A predictor with no value still has NaN quantiles, and the values are those
    of the jitted parts. On the previous code this test counts 4 programs here."""
    _, X, y = _stream_rows("gkclass", 9, 200)
    X[:, 3] = np.nan  # no value ever summarized for the last predictor
    s = GKClass.init(3, 4, capacity=17, chunk_size=8).update(X, y)
    s.quantile([0.5])
    before = compiles.n
    got = np.asarray(s.quantile(np.linspace(0, 1, 7)))  # a new number of levels
    cuts, counts = s.bins()  # a capacity bins has not seen in this module
    assert compiles.n - before <= 2, compiles.n - before
    assert np.isnan(got[3]).all() and np.isfinite(got[:3]).all()
    assert (np.diff(got[:3], axis=1) >= 0).all()
    for j in range(3):  # the extremes are exact in GK (the first and the last tuple)
        col = X[:, j][~np.isnan(X[:, j])]
        assert got[j, 0] == col.min() and got[j, -1] == col.max()
    np.testing.assert_array_equal(np.asarray(cuts), np.asarray(s.values)[:, :-1])
    assert counts.shape == (4, 17, 3)
    np.testing.assert_allclose(np.asarray(counts).sum(1)[:3], np.asarray(s.class_counts).sum(1)[:3])
    before = compiles.n
    s.quantile(np.linspace(0.1, 0.9, 7))
    s.bins()
    assert compiles.n == before


@pytest.mark.parametrize(
    "make",
    [
        lambda: GKClass.init(3, 4, capacity=20, chunk_size=8),
        lambda: CPiD.init(3, 4, n_intervals=12, chunk_size=4),
        lambda: CPiD.init(3, 4),
    ],
    ids=["gkclass", "cpid-chunk4", "cpid"],
)
def test_trailing_chunks_of_missing_rows_change_nothing(make):
    """What lets `update` pad a batch to a bucket of chunks: rows that are all missing, in whole
    chunks after the batch, leave the summary as it is, bit for bit. CPiD used to go on with the
    splits a chunk left pending (at most chunk_size per chunk) in such a chunk: with 4-row chunks
    a batch of 37 rows plus 5 missing ones gave other intervals."""
    rng = np.random.default_rng(0)
    for _ in range(2):
        X = rng.normal(size=(200, 4))
        X[rng.random(X.shape) < 0.1] = np.nan
        y = rng.integers(0, 3, 200)
        start = make().update(X[:60], y[:60])
        for n in (37, 100):
            plain = start.update(jnp.asarray(X[60 : 60 + n]), jnp.asarray(y[60 : 60 + n]))
            for extra in (5, 64):
                Xp = np.concatenate([X[60 : 60 + n], np.full((extra, 4), np.nan)])
                yp = np.concatenate([y[60 : 60 + n], np.zeros(extra, int)])
                padded = start.update(jnp.asarray(Xp), jnp.asarray(yp))  # device: not re-padded
                for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(padded), strict=True):
                    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
