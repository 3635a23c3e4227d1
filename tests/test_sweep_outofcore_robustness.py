"""Out-of-core fits and sweeps on edge cases: data far from 0 in partly filled chunks, iterables
of mismatched chunks, zero total weight, padded data sets with random folds, bad fold / seed
arguments."""

import jax
import numpy as np
import pytest

from jaxnb import NaiveBayes
from jaxnb import outofcore as oc
from jaxnb import sweep as swm


def test_out_of_core_variances_of_data_far_from_zero_in_partly_filled_chunks():
    """The centring shift comes from the real rows of a chunk, not its zero padding (which
    pulled it to ~0 and made the float32 sums of squares cancel)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 1000)
    X = np.column_stack([1e4 + rng.normal(size=1000) + y, rng.normal(size=1000)])
    X = X.astype(np.float32)
    with jax.enable_x64(False):
        ref = np.asarray(NaiveBayes(discrete="none").fit(X, y).params_.std)
        for source, kw in (
            (X, dict(chunk_rows=300)),
            (iter([(X[i : i + 400], y[i : i + 400]) for i in range(0, 1000, 400)]), {}),
        ):
            yy = y if source is X else None
            m = oc.fit_nb_out_of_core(
                source, yy, classes=[0, 1], discrete="none", progress=False, **kw
            )
            np.testing.assert_allclose(np.asarray(m.params_.std), ref, rtol=2e-3)


@pytest.mark.parametrize("case", ["fast", "ignore-missing", "weighted-mixed"])
def test_out_of_core_float32_class_variances_with_far_apart_classes(case):
    """Classes far apart relative to their spread: one shift per chunk cancelled the float32 sums
    of squares (stds 1.39 / 1.24 / 1.05 against ~1); each chunk is now re-centred per class, as
    the in-memory fit is, and the out-of-core model equals it."""
    rng = np.random.default_rng(1)
    n = 3000
    y = rng.integers(0, 3, n)
    x = np.array([0.0, 1e4, 1e4 + 2])[y] + rng.normal(size=n)
    cols, kw, fit_kw = [x], dict(discrete="none"), {}
    if case == "ignore-missing":
        x[rng.random(n) < 0.1] = np.nan
        kw["missing"] = "ignore"
    if case == "weighted-mixed":
        cols.append(rng.integers(0, 3, n))
        kw = dict(discrete=[1], n_states=[3])
        fit_kw["sample_weight"] = rng.uniform(0.5, 2.0, n)
    X = np.column_stack(cols).astype(np.float32)
    with jax.enable_x64(False):
        ref = NaiveBayes(**kw).fit(X, y, **fit_kw).params_
        m = oc.fit_nb_out_of_core(
            X, y, classes=[0, 1, 2], chunk_rows=1000, progress=False, **kw, **fit_kw
        )
    got = m.params_
    np.testing.assert_allclose(np.asarray(got.std), np.asarray(ref.std), rtol=1e-3)
    np.testing.assert_allclose(np.asarray(got.mean), np.asarray(ref.mean), rtol=1e-6, atol=1e-5)
    w = fit_kw.get("sample_weight", np.ones(n))
    ok = np.isfinite(x)
    floor = 1e-9 * np.nanvar(x)  # var_smoothing x pooled variance (weighting moves it < 1e-3)
    for j in range(3):
        sel = (y == j) & ok
        mu = np.average(x[sel], weights=w[sel])
        var = np.average((x[sel] - mu) ** 2, weights=w[sel]) + floor
        assert abs(float(got.std[j, 0]) ** 2 / var - 1) < 5e-3  # was off by up to 93 %


def test_out_of_core_iterables_must_agree():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = rng.integers(0, 2, 60)
    chunks = [X[:20], X[20:40], X[40:]]
    ys = [y[:20], y[20:40], y[40:]]
    with pytest.raises(ValueError, match="y_source ran out of chunks at chunk 2"):
        oc.fit_nb_out_of_core(
            iter(chunks), iter(ys[:2]), classes=[0, 1], discrete="none", progress=False
        )
    with pytest.raises(ValueError, match="y_source yields more chunks than source"):
        oc.fit_nb_out_of_core(
            iter(chunks[:2]), iter(ys), classes=[0, 1], discrete="none", progress=False
        )
    ints = [np.rint(X[:20]).astype(np.int64), X[20:40]]
    with pytest.raises(ValueError, match="chunk 1 of source has dtype float64 but the first"):
        oc.fit_nb_out_of_core(
            iter(ints), iter(ys[:2]), classes=[0, 1], discrete="none", progress=False
        )
    with pytest.raises(
        ValueError, match=r"sample_weight is zero for every sample \(it sums to 0\)"
    ):
        oc.fit_nb_out_of_core(
            X, y, classes=[0, 1], sample_weight=np.zeros(60), discrete="none", progress=False
        )


def _small(rng, n):
    y = rng.integers(0, 2, n)
    codes = (y[:, None] + rng.integers(0, 2, (n, 1))) % 3
    return dict(codes_train=codes, values_train=rng.normal(size=(n, 1)), y_train=y)


def test_random_folds_are_dealt_over_the_real_rows_of_padded_data_sets():
    rng = np.random.default_rng(6)
    data = swm.stack_datasets([_small(rng, 5), _small(rng, 60)])
    r = swm.sweep_nb(data, {"alpha": [1.0]}, n_states=(3,), folds=3, seeds=[0, 1, 2, 3])
    assert np.isfinite(r.arrays["valid_error"]).all()  # no fold made of padding only
    # with every row real, the folds are still fold_ids(seed, n, K)
    one = _small(rng, 40)
    a = swm.sweep_nb(one, {"alpha": [1.0]}, n_states=(3,), folds=4, seeds=[3])
    b = swm.sweep_nb(one, {"alpha": [1.0]}, n_states=(3,), folds=swm.fold_ids(3, 40, 4))
    np.testing.assert_array_equal(a.arrays["valid_error"], b.arrays["valid_error"])


def test_sweep_fold_and_seed_arguments_are_checked():
    rng = np.random.default_rng(7)
    one = _small(rng, 30)
    data = swm.stack_datasets([_small(rng, 5), _small(rng, 30)])
    gap = np.zeros(30, int)
    gap[15:] = 2
    cases = [
        (dict(folds=gap), ValueError, "leave fold 1 without a row"),
        (dict(seeds=[1.7]), ValueError, "seeds must be a non-empty list of ints"),
        (dict(folds=3.0), TypeError, "folds must be None, an int K"),
    ]
    for kw, err, msg in cases:
        with pytest.raises(err, match=msg):
            swm.sweep_nb(one, {"alpha": [1.0]}, n_states=(3,), **kw)
    with pytest.raises(ValueError, match=r"folds must be an int in \[2, 5\]"):
        swm.sweep_nb(data, {"alpha": [1.0]}, n_states=(3,), folds=6)
