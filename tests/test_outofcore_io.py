"""Out-of-core reading: direct (O_DIRECT) reads into aligned pool buffers, recycled buffers, the
fast (validation folded into the sums) chunk step and its fallback, several devices."""

import jax
import numpy as np
import pytest

from jaxnb import NaiveBayes
from jaxnb.outofcore import _NpyFile, fit_stats_out_of_core


def _table(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n).astype(np.int32)
    X = np.empty((n, 8), np.float32)
    X[:, :4] = rng.integers(0, 3, (n, 4))
    X[:, 4:] = rng.normal(size=(n, 4)) + y[:, None]
    return X, y


@pytest.mark.parametrize("start,stop", [(0, 1024), (1024, 2048), (3072, 5000), (17, 999)])
def test_aligned_buffers_read_exactly(tmp_path, start, stop):
    X, _ = _table(5000)
    path = tmp_path / "X.npy"
    np.save(path, X)
    f = _NpyFile(path)
    try:
        out = f.alloc((stop - start, 8), np.float32)
        assert out.flags.c_contiguous and not out.flags.owndata
        out[:] = np.nan
        f.read_into(start, stop, out)
        np.testing.assert_array_equal(out, X[start:stop])
        plain = np.empty((stop - start, 8), np.float32)  # not an alloc buffer: buffered read
        f.read_into(start, stop, plain)
        np.testing.assert_array_equal(plain, X[start:stop])
    finally:
        f.close()


def test_npy_fit_with_recycled_aligned_buffers_equals_in_memory(tmp_path):
    # 1024 rows x 32 bytes per chunk: every chunk starts on a 4 KiB boundary of the data, so the
    # direct path is taken where the file system allows it; 5000 rows: a partial last chunk.
    X, y = _table(5000, seed=1)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    kw = dict(classes=[0, 1, 2], discrete=[0, 1, 2, 3], n_states=[3] * 4, progress=False)
    stats = fit_stats_out_of_core(tmp_path / "X.npy", tmp_path / "y.npy", chunk_rows=1024, **kw)
    ref = NaiveBayes(discrete=[0, 1, 2, 3], n_states=[3] * 4).fit(X, y)
    for a, b in zip(jax.tree.leaves(stats), jax.tree.leaves(ref.stats_), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-9)
    np.testing.assert_array_equal(np.asarray(stats.class_weight), np.bincount(y, minlength=3))
    np.testing.assert_array_equal(np.asarray(stats.counts), np.asarray(ref.stats_.counts))


@pytest.mark.parametrize("bad", ["fraction", "too_large", "nan_code", "inf_value", "label"])
def test_fast_path_falls_back_and_names_the_row(tmp_path, bad):
    X, y = _table(3000, seed=2)
    row = 2345
    if bad == "fraction":
        X[row, 1] = 1.5
    elif bad == "too_large":
        X[row, 2] = 3
    elif bad == "nan_code":
        X[row, 0] = np.nan
    elif bad == "inf_value":
        X[row, 5] = np.inf
    else:
        y[row] = 7
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    kw = dict(classes=[0, 1, 2], discrete=[0, 1, 2, 3], n_states=[3] * 4, progress=False)
    with pytest.raises(ValueError, match=f"first offending row {row:,}"):
        fit_stats_out_of_core(tmp_path / "X.npy", tmp_path / "y.npy", chunk_rows=1024, **kw)


def test_array_source_with_weights_uses_the_pool_and_matches(tmp_path):
    X, y = _table(4100, seed=3)
    w = np.random.default_rng(4).uniform(0.0, 2.0, len(y))
    kw = dict(classes=[0, 1, 2], discrete=[0, 1, 2, 3], n_states=[3] * 4, progress=False)
    stats = fit_stats_out_of_core(X, y, sample_weight=w, chunk_rows=1024, **kw)
    ref = NaiveBayes(discrete=[0, 1, 2, 3], n_states=[3] * 4).fit(X, y, sample_weight=w)
    for a, b in zip(jax.tree.leaves(stats), jax.tree.leaves(ref.stats_), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-9)
    # independent float64 NumPy reference of the weighted class moments
    Xc = X[:, 4:].astype(np.float64)
    cw = np.array([w[y == c].sum() for c in range(3)])
    mean = np.array([w[y == c] @ Xc[y == c] for c in range(3)]) / cw[:, None]
    m2 = np.array([w[y == c] @ (Xc[y == c] - mean[c]) ** 2 for c in range(3)])
    np.testing.assert_allclose(np.asarray(stats.class_weight), cw, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(stats.weight), np.tile(cw[:, None], (1, 4)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(stats.mean), mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(stats.m2), m2, rtol=1e-10)
