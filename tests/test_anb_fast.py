"""AveragedNB fast paths: Python-driven search vs the single-program one, batched preprocessing."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.discretize import apply_cuts
from jaxnb.stream.anb import (
    AveragedNB,
    _category_codes,
    _elementary_bins,
    ffwbw_average,
    ffwbw_search,
    modl_prebinned_cuts,
    search_orders,
)


def _orders_of_key(key, n_starts, max_passes, p):
    """The visit orders `ffwbw_average` draws from `key` (same splits, eagerly)."""
    out = np.zeros((n_starts, max_passes, 2, p), np.int32)
    for s, k in enumerate(jax.random.split(key, n_starts)):
        for t in range(max_passes):
            k, kf, kb = jax.random.split(k, 3)
            out[s, t, 0] = np.asarray(jax.random.permutation(kf, p))
            out[s, t, 1] = np.asarray(jax.random.permutation(kb, p))
    return out


def _data(n_classes, seed=0, n=1500, p=7):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = rng.normal(size=(n, p))
    X[:, :3] += y[:, None] * np.array([1.0, 0.6, 0.3])
    X[:, 3] = X[:, 2] + 0.2 * rng.normal(size=n)  # redundant
    X[:, 4] = np.where(rng.random(n) < 0.7, y, rng.integers(0, n_classes, n))  # categorical
    X[rng.random((n, p)) < 0.03] = np.nan
    return X, y


@pytest.mark.parametrize("n_classes", [2, 3])
def test_python_search_equals_jit_search(n_classes):
    X, y = _data(n_classes)
    m = AveragedNB(mode="nb", discrete=[4]).fit(X, y)
    codes = m._codes(X)
    p, width = X.shape[1], m._table.shape[1]
    table_s = jnp.concatenate([m._table, jnp.zeros((p, 1, n_classes), m._table.dtype)], axis=1)
    codes_t = np.where(codes >= 0, codes, width).T.astype(np.int32)
    key = jax.random.key(3)
    ref = ffwbw_average(
        jnp.asarray(codes_t),
        table_s,
        m._log_prior,
        jnp.asarray(y, jnp.int32),
        key,
        n_starts=2,
        max_passes=4,
    )
    got = ffwbw_search(codes_t, table_s, m._log_prior, y, _orders_of_key(key, 2, 4, p))
    np.testing.assert_allclose(got[0], np.asarray(ref[0]), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(got[1], np.asarray(ref[1]))
    np.testing.assert_allclose([got[2], got[3]], [float(ref[2]), float(ref[3])], rtol=1e-10)
    assert got[4] == int(ref[4])


def test_fit_preprocessing_equals_per_column_reference():
    X, y = _data(2, seed=1, n=3000)
    X[:5, 1] = np.nan
    m = AveragedNB(mode="nb", discrete=[4], max_bins=64).fit(X, y)
    for i in (0, 1, 2, 3, 5, 6):
        np.testing.assert_array_equal(m.cuts_[i], modl_prebinned_cuts(X[:, i], y, 2, 64))
    codes = m._codes(X)
    for i in (0, 1, 2, 3, 5, 6):
        np.testing.assert_array_equal(codes[:, i], apply_cuts(X[:, i], m.cuts_[i]))
    # counts behind the table: the fitted log-probabilities of the previous np.add.at version
    c = 2
    for i in range(X.shape[1]):
        ok = codes[:, i] >= 0
        cnt = np.zeros((m.n_intervals_[i], c))
        np.add.at(cnt, (codes[ok, i], y[ok]), 1.0)
        ref = np.log(cnt + 1.0) - np.log(cnt.sum(0) + m.n_intervals_[i])[None, :]
        np.testing.assert_allclose(np.asarray(m._table)[i, : m.n_intervals_[i]], ref, rtol=1e-12)


def test_elementary_bins_are_lower_quantiles():
    rng = np.random.default_rng(2)
    v = np.round(rng.normal(size=5000), 2)  # ties
    v[rng.random(5000) < 0.05] = np.nan
    y = rng.integers(0, 3, 5000)
    grid, codes, counts = _elementary_bins(v, y, 3, 50)
    ok = ~np.isnan(v)
    ref = np.unique(np.quantile(v[ok], np.arange(1, 50) / 50, method="lower"))
    np.testing.assert_array_equal(grid, ref[ref < v[ok].max()])
    np.testing.assert_array_equal(codes, apply_cuts(v, grid))
    ref_counts = np.zeros((grid.size + 1, 3))
    np.add.at(ref_counts, (codes[ok], y[ok]), 1.0)
    np.testing.assert_array_equal(counts, ref_counts)


@pytest.mark.parametrize(
    "values",
    [
        [3.0, 1.0, np.nan, 3.0, 0.0, 7.0],
        [-1.0, 2.5, 2.5, np.nan, -1.0],
        [np.nan, np.nan],
        [1e6, 2.0, 1e6],
    ],
)
def test_category_codes_match_unique(values):
    col = np.asarray(values, dtype=np.float64)
    cats, codes = _category_codes(col)
    ok = ~np.isnan(col)
    np.testing.assert_array_equal(cats, np.unique(col[ok]))
    np.testing.assert_array_equal(codes[~ok], -1)
    np.testing.assert_array_equal(cats[codes[ok]], col[ok])


def test_search_orders_are_permutations_and_seeded():
    o = search_orders(5, 2, 3, 9)
    assert o.shape == (2, 3, 2, 9)
    np.testing.assert_array_equal(np.sort(o, axis=-1), np.broadcast_to(np.arange(9), o.shape))
    np.testing.assert_array_equal(o, search_orders(5, 2, 3, 9))
    assert not np.array_equal(o, search_orders(6, 2, 3, 9))
