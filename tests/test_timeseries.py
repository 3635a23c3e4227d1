"""Tests for jaxnb.datasets.timeseries: ESANN simulator, sliding-window p-values, indicators."""

import math

import jax
import numpy as np
import pytest

from jaxnb.datasets import timeseries as ts

N_SERIES = 240  # small: the suite must stay quick on 2 shared cores
# Compilation dominates the run time, and every distinct (shape, window grid) compiles anew: the
# tests reuse the (N_SERIES, 200) shape, the windows of `test_window_pvalues_match_scipy` and the
# default grid of the `esann` fixture wherever they can, so that most calls hit the jit cache.
P_WINDOWS = (10, 20, 60)


@pytest.fixture(scope="module")
def series():
    return ts.simulate_series(jax.random.key(7), N_SERIES)


@pytest.fixture(scope="module")
def esann():
    # the full 810-indicator graph is compiled once for the module (compilation dominates run time)
    return ts.make_esann_dataset(jax.random.key(7), N_SERIES)


def test_simulator_classes_and_shapes(series):
    values = np.asarray(series.values)
    lengths = np.asarray(series.lengths)
    labels = np.asarray(series.labels)
    tau = np.asarray(series.change_point)
    amp = np.asarray(series.amplitude)
    assert values.shape == (N_SERIES, 200)
    np.testing.assert_array_equal(np.bincount(labels, minlength=4), [120, 40, 40, 40])
    np.testing.assert_array_equal(np.asarray(series.is_anomaly), labels > 0)
    assert lengths.min() >= 100 and lengths.max() <= 200
    for i in range(N_SERIES):
        assert np.all(values[i, lengths[i] :] == 0.0)
    anomalous = labels > 0
    assert np.all(tau[~anomalous] == -1) and np.all(amp[~anomalous] == 0.0)
    lo = np.ceil(0.2 * lengths - 1e-9)
    hi = np.floor(0.8 * lengths + 1e-9)
    assert np.all((tau[anomalous] >= lo[anomalous]) & (tau[anomalous] <= hi[anomalous]))
    assert np.all((amp[labels == 1] >= 1) & (amp[labels == 1] <= 5))
    assert np.all((amp[labels == 2] >= 2) & (amp[labels == 2] <= 6))
    assert np.all((amp[labels == 3] >= 1) & (amp[labels == 3] <= 5))

    # segment statistics, pooled over the series of each class (standardized residuals)
    def pooled(cls, fn):
        out = [
            fn(values[i, : lengths[i]], tau[i], lengths[i], amp[i])
            for i in np.flatnonzero(labels == cls)
        ]
        return np.concatenate(out)

    normal = np.concatenate([values[i, : lengths[i]] for i in np.flatnonzero(labels == 0)])
    assert abs(normal.mean()) < 0.02 and abs(normal.std() - 1.0) < 0.02
    before = pooled(1, lambda x, t, n, a: x[:t])
    assert abs(before.mean()) < 0.05 and abs(before.std() - 1) < 0.05
    shifted = pooled(1, lambda x, t, n, a: x[t:] - a)  # after the change the mean is exactly μ
    assert abs(shifted.mean()) < 0.05 and abs(shifted.std() - 1) < 0.05
    scaled = pooled(2, lambda x, t, n, a: x[t:] / a)  # after the change the std is exactly σ
    assert abs(scaled.mean()) < 0.05 and abs(scaled.std() - 1) < 0.05
    assert abs(pooled(2, lambda x, t, n, a: x[:t]).std() - 1) < 0.05
    detrended = pooled(3, lambda x, t, n, a: x[t:] - a * (np.arange(t, n) - t + 1) / (n - t))
    assert abs(detrended.mean()) < 0.05 and abs(detrended.std() - 1) < 0.05
    # trend reaches its final amplitude at the last sample: check the noiseless value there
    i = np.flatnonzero(labels == 3)[0]
    assert (lengths[i] - 1 - tau[i] + 1) / (lengths[i] - tau[i]) == 1.0


def test_simulator_is_deterministic_from_key():
    a = ts.simulate_series(jax.random.key(3), N_SERIES)  # same shape as `series`: no new compile
    b = ts.simulate_series(jax.random.key(3), N_SERIES)
    c = ts.simulate_series(jax.random.key(4), N_SERIES)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert not np.array_equal(np.asarray(a.values), np.asarray(c.values))


@pytest.mark.parametrize("window", P_WINDOWS)
def test_window_pvalues_match_scipy(series, window):
    sp = pytest.importorskip("scipy.stats")
    pvals, positions, valid = ts.window_pvalues(series.values, series.lengths, window)
    h = window // 2
    assert pvals.shape == (N_SERIES, 3, 200 - window + 1)
    np.testing.assert_array_equal(positions, np.arange(h, 200 - h + 1))
    lengths = np.asarray(series.lengths)
    np.testing.assert_array_equal(valid, positions[None, :] + h <= lengths[:, None])
    rng = np.random.default_rng(window)
    values = np.asarray(series.values)
    pvals = np.asarray(pvals)
    for i in rng.choice(N_SERIES, size=6, replace=False):
        for k in rng.choice(np.flatnonzero(np.asarray(valid[i])), size=4, replace=False):
            t = positions[k]
            before, after = values[i, t - h : t], values[i, t : t + h]
            p_mw, p_ks, p_f = pvals[i, :, k]
            ref_mw = sp.mannwhitneyu(before, after, method="asymptotic").pvalue
            assert p_mw == pytest.approx(ref_mw, abs=1e-6)
            d = sp.ks_2samp(before, after, method="asymp").statistic
            e = h / 2.0
            ref_ks = sp.kstwobign.sf((math.sqrt(e) + 0.12 + 0.11 / math.sqrt(e)) * d)
            assert p_ks == pytest.approx(ref_ks, abs=1e-6)
            f = np.var(after, ddof=1) / np.var(before, ddof=1)
            ref_f = min(1.0, 2 * min(sp.f.cdf(f, h - 1, h - 1), sp.f.sf(f, h - 1, h - 1)))
            assert p_f == pytest.approx(ref_f, rel=1e-6, abs=1e-12)


def _padded(rows, size=200):
    """`rows` (k, m) placed in the first rows of a zero (N_SERIES, size) array (shared shape)."""
    out = np.zeros((N_SERIES, size))
    out[: rows.shape[0], : rows.shape[1]] = rows
    return out


def test_window_pvalues_with_ties():
    sp = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=(3, 60)), 0)  # heavy ties
    lengths = np.full(N_SERIES, 60)
    pvals, positions, _ = ts.window_pvalues(_padded(x), lengths, 20)  # cached: P_WINDOWS has 20
    for i in range(3):
        for k in (0, 10, 40):
            t = positions[k]
            before, after = x[i, t - 10 : t], x[i, t : t + 10]
            ref = sp.mannwhitneyu(before, after, method="asymptotic").pvalue
            assert float(pvals[i, 0, k]) == pytest.approx(ref, abs=1e-9)
            d = sp.ks_2samp(before, after, method="asymp").statistic
            ref_ks = sp.kstwobign.sf((math.sqrt(5) + 0.12 + 0.11 / math.sqrt(5)) * d)
            assert float(pvals[i, 1, k]) == pytest.approx(ref_ks, abs=1e-9)


def test_scores_confirmation_semantics(esann):
    # one strong mean change at t = 100 in a length-200 series; a pure-noise series beside it
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 200))
    x[0, 100:] += 4.0
    lengths = np.full(N_SERIES, 200)
    lengths[1] = 150
    # the default grid on the (N_SERIES, 200) shape reuses the graph compiled for `esann`;
    # window 20 is DEFAULT_WINDOWS[1], confirmations 1 and 3 are DEFAULT_CONFIRMATIONS[:2]
    assert ts.DEFAULT_WINDOWS[1] == 20 and ts.DEFAULT_CONFIRMATIONS[:2] == (1, 3)
    conf, pos = ts.compute_scores(_padded(x), lengths)
    conf, pos = np.asarray(conf)[:2, 1:2, :, :2], np.asarray(pos)[:2, 1:2]
    pvals, positions, valid = ts.window_pvalues(_padded(x), lengths, 20)
    p = np.where(np.asarray(valid)[:2, None, :], np.asarray(pvals)[:2], 1.0)
    np.testing.assert_allclose(conf[:, 0, :, 0], p.min(-1), rtol=1e-12)
    run3 = np.stack([p[..., i : i + 3].max(-1) for i in range(p.shape[-1] - 2)], -1).min(-1)
    np.testing.assert_allclose(conf[:, 0, :, 1], run3, rtol=1e-12)
    assert np.all(np.asarray(conf)[:, :, :, 1] >= np.asarray(conf)[:, :, :, 0])
    # mean change: MW and KS minima sit at the change point
    assert abs(float(pos[0, 0, 0]) * 200 - 100) <= 2 and abs(float(pos[0, 0, 1]) * 200 - 100) <= 3
    # h = 10: the smallest attainable MW p is about 1.6e-4 (all after > all before)
    assert float(conf[0, 0, 0, 0]) < 5e-4 and float(conf[1, 0, 0, 0]) > 1e-3


def test_indicators_shapes_names_and_determinism(esann, series):
    data = esann
    np.testing.assert_array_equal(np.asarray(data.series.values), np.asarray(series.values))
    assert data.indicators.shape == (N_SERIES, 810) and data.indicators.dtype == np.uint8
    assert len(data.names) == 810 == len(set(data.names))
    assert data.names[0] == "mw_w10_c1_p0.1" and data.names[44] == "mw_w10_argmin_central"
    assert data.names[-1] == "f_w60_argmin_central"
    again = ts.make_esann_dataset(jax.random.key(7), N_SERIES)
    np.testing.assert_array_equal(np.asarray(data.indicators), np.asarray(again.indicators))
    ind = np.asarray(data.indicators).reshape(N_SERIES, 6, 3, 45)
    nested = ind[..., :44].reshape(N_SERIES, 6, 3, 4, 11)
    # nested levels and nested confirmation lengths: smaller λ or longer run implies fewer ones
    assert np.all(np.diff(nested.astype(int), axis=-1) <= 0)
    assert np.all(np.diff(nested.astype(int), axis=-2) <= 0)
    np.testing.assert_array_equal(data.is_anomaly, np.asarray(data.labels) > 0)
    # a custom grid: count = windows x 3 x (confirmations x levels + 1)
    small = ts.compute_indicators(
        data.series.values[:8],
        data.series.lengths[:8],
        windows=(20, 40),
        levels=(0.05, 1e-3),
        confirmations=(1,),
    )
    assert small.indicators.shape == (8, 2 * 3 * 3)
    full = ind.reshape(N_SERIES, 6, 3, 45)[:8]
    # same cells as in the full grid: (w, test, m=1, λ in {.05, 1e-3})
    np.testing.assert_array_equal(
        np.asarray(small.indicators).reshape(8, 2, 3, 3)[..., :2],
        full[:, [1, 3], :, :][..., [1, 3]],
    )
    assert small.names == ts.indicator_names((20, 40), (0.05, 1e-3), (1,))


def test_indicators_separate_classes(esann, series):
    data = esann
    ind = np.asarray(data.indicators).astype(float)
    labels = np.asarray(series.labels)
    col = {name: i for i, name in enumerate(data.names)}
    rate = lambda name, cls: ind[labels == cls, col[name]].mean()
    # normal series rarely reach p <= 1e-5 even at the minimum over positions; anomalies usually do
    assert rate("mw_w40_c1_p1e-05", 0) < 0.05 and rate("mw_w40_c1_p1e-05", 1) > 0.8
    assert rate("f_w40_c1_p1e-05", 0) < 0.05 and rate("f_w40_c1_p1e-05", 2) > 0.8
    assert rate("mw_w60_c1_p1e-05", 3) > 0.5


def test_validation():
    x = np.zeros((2, 50))
    with pytest.raises(ValueError, match="even"):
        ts.window_pvalues(x, np.array([50, 50]), 11)
    with pytest.raises(ValueError, match="max_length"):
        ts.window_pvalues(x, np.array([50, 50]), 60)
    with pytest.raises(ValueError, match="lengths"):
        ts.window_pvalues(x, np.array([50]), 10)
    with pytest.raises(ValueError, match="n_series"):
        ts.simulate_series(jax.random.key(0), 2)
    with pytest.raises(ValueError, match="levels"):
        ts.compute_indicators(x, np.array([50, 50]), windows=(10,), levels=(0.0,))
