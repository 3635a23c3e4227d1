"""Tests for jaxnb.model_selection: AIC, one-pass K-fold statistics, selection rules, splits."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb import model_selection as ms
from jaxnb.methods.nb import fit_stats


def _data(seed=0, n=50):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n).astype(np.int32)
    codes = rng.integers(0, 3, (n, 2)).astype(np.int32)
    values = rng.normal(size=(n, 2)) + y[:, None]
    return codes, values, y


def test_kfold_stats_equal_direct_fits():
    codes, values, y = _data()
    folds = ms.stratified_folds(y, 4, seed=1)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    train, fold = ms.kfold_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(folds),
        jnp.asarray(w),
        n_states=(3, 3),
        n_classes=3,
        n_folds=4,
    )
    direct = lambda rows: fit_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w * rows),
        n_states=(3, 3),
        n_classes=3,
    )
    for k in range(4):
        # train[k]: the rows outside fold k; fold[k]: the rows of fold k
        for got, rows in ((train, folds != k), (fold, folds == k)):
            want = direct(rows)
            for name in ("class_weight", "counts", "weight", "mean", "m2"):
                np.testing.assert_allclose(
                    np.asarray(getattr(got, name)[k]),
                    np.asarray(getattr(want, name)),
                    rtol=1e-10,
                    atol=1e-10,
                    err_msg=name,
                )
        # the weighted class totals against NumPy directly
        np.testing.assert_allclose(
            np.asarray(fold.class_weight[k]),
            np.bincount(y[folds == k], w[folds == k], minlength=3),
            rtol=1e-12,
        )


def test_aic_formula():
    rng = np.random.default_rng(0)
    lp = np.log(rng.dirichlet(np.ones(3), 20))
    y = rng.integers(0, 3, 20)
    got = float(ms.aic(jnp.asarray(lp), jnp.asarray(y), 4))
    assert got == pytest.approx(-2 * lp[np.arange(20), y].mean() + 8 / 20, rel=1e-12)
    assert int(ms.degrees_of_freedom(jnp.asarray([0.0, 0.3, 1.0, 0.0]))) == 2


def test_select_along_path_rules():
    s = [0.3, 0.2, 0.25, 0.2, 0.1, 0.1]
    assert ms.select_along_path(s, "min") == 4
    assert ms.select_along_path(s, "min_smallest", sizes=[0, 1, 2, 3, 5, 4]) == 5
    assert ms.select_along_path(s, "min", n_valid=4) == 1
    assert ms.select_along_path(s, "last", n_valid=3) == 2
    with pytest.raises(ValueError, match="rule"):
        ms.select_along_path(s, "median")
    with pytest.raises(ValueError, match="sizes"):
        ms.select_along_path(s, "min_smallest")


def test_stratified_folds_and_validation_split():
    y = np.repeat([0, 1, 2], [30, 20, 10])
    f = ms.stratified_folds(y, 5, seed=3)
    assert np.array_equal(f, ms.stratified_folds(y, 5, seed=3))
    for cls in range(3):
        counts = np.bincount(f[y == cls], minlength=5)
        assert counts.max() - counts.min() <= 1
    assert np.bincount(f).max() - np.bincount(f).min() <= 1
    v = ms.validation_split(y, 0.5, seed=0)
    assert [int(v[y == c].sum()) for c in range(3)] == [15, 10, 5]
    with pytest.raises(ValueError, match="fraction"):
        ms.validation_split(y, 1.0)
    with pytest.raises(ValueError, match="n_folds"):
        ms.stratified_folds(y, 1)


def test_fold_weights_times_the_row_weights():
    """``weight=`` gives each fold's validation weights (the indicators times the rows' weights)
    in the requested dtype; a weight of another shape is refused."""
    folds = np.array([0, 1, 0, 1, 2])
    w = np.array([0.5, 2.0, 0.0, 1.0, 3.0])
    got = ms.fold_weights(folds, 3, np.float32, weight=w)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(
        np.asarray(got), [[0.5, 0, 0, 0, 0], [0, 2.0, 0, 1.0, 0], [0, 0, 0, 0, 3.0]]
    )
    with pytest.raises(ValueError, match=r"weight must have the shape of folds \(5,\)"):
        ms.fold_weights(folds, 3, weight=w[:4])


def test_fold_weights_and_kfold_stats_check_the_number_of_folds():
    """n_folds = 0 gave an empty (0, n) indicator (every row in no fold); a fold index >= n_folds
    silently dropped its rows."""
    folds = np.array([0, 1, 0, 1, 2])
    np.testing.assert_array_equal(
        np.asarray(ms.fold_weights(folds, 3)),
        [[1, 0, 1, 0, 0], [0, 1, 0, 1, 0], [0, 0, 0, 0, 1]],
    )
    with pytest.raises(ValueError, match="n_folds must be >= 1; got 0"):
        ms.fold_weights(folds, 0)
    with pytest.raises(TypeError, match="n_folds must be an int"):
        ms.fold_weights(folds, 2.0)
    with pytest.raises(ValueError, match=r"fold indices in \[0, n_folds=2\)"):
        ms.fold_weights(folds, 2)
    codes = np.zeros((5, 0), np.int32)
    values = np.arange(5.0)[:, None]
    y = np.array([0, 1, 0, 1, 0])
    with pytest.raises(ValueError, match="n_folds must be >= 1; got 0"):
        ms.kfold_stats(codes, values, y, folds, n_states=(), n_classes=2, n_folds=0)


def test_splits_leave_zero_weight_rows_out_of_the_draw():
    """Rows of weight 0 take no part in the draw: the others get the folds / split they get when
    the zero-weight rows are dropped."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 50)
    w = rng.integers(0, 3, 50).astype(float)  # about a third of the rows at weight 0
    keep = w > 0
    folds = ms.stratified_folds(y, 4, 7, sample_weight=w)
    np.testing.assert_array_equal(folds[keep], ms.stratified_folds(y[keep], 4, 7))
    assert (folds[~keep] == 0).all()
    val = ms.validation_split(y, 0.3, 7, sample_weight=w)
    np.testing.assert_array_equal(val[keep], ms.validation_split(y[keep], 0.3, 7))
    assert not val[~keep].any()
    # positive weights everywhere: the unweighted draw
    np.testing.assert_array_equal(
        ms.stratified_folds(y, 4, 7, sample_weight=np.full(50, 2.5)), ms.stratified_folds(y, 4, 7)
    )
    with pytest.raises(ValueError, match=r"sample_weight must have shape \(50,\)"):
        ms.validation_split(y, 0.3, sample_weight=np.ones(49))
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        ms.stratified_folds(y, 4, sample_weight=np.r_[-1.0, np.ones(49)])


def _estimators_with_a_split():
    from jaxnb.estimators_penalized import L1NB, GroupLassoNB
    from jaxnb.estimators_search import SelectiveNB, StagewiseNB
    from jaxnb.estimators_structure import FilterWrapperNB, GaussianSemiNaiveNB

    return {
        # name: (estimator, the attribute that holds its criterion on the folds / split)
        "StagewiseNB cv": (lambda: StagewiseNB(selection="cv", n_folds=3), "cv_error_"),
        "SelectiveNB validation": (
            lambda: SelectiveNB(validation_fraction=0.4),
            "path_/criterion",
        ),
        "GroupLassoNB cv": (
            lambda: GroupLassoNB(selection="cv", cv=3, n_penalties=6),
            "path_/cv_log_loss",
        ),
        "L1NB validation": (lambda: L1NB(selection="validation"), "criterion_path_"),
        "GaussianSemiNaiveNB": (lambda: GaussianSemiNaiveNB(), "validation_error_"),
        "FilterWrapperNB": (lambda: FilterWrapperNB(cv=3), "cv_error_"),
    }


@pytest.mark.parametrize("name", list(_estimators_with_a_split()))
def test_zero_sample_weight_equals_dropping_the_row_with_a_split(name):
    """Estimators that draw folds or a validation split give a row of weight 0 the fit without
    it. They used to draw over every row, so a zero weight moved the others between parts
    (GaussianSemiNaiveNB's probabilities by up to 0.93)."""
    make, attr = _estimators_with_a_split()[name]
    rng = np.random.default_rng(1)
    n = 90
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) + np.c_[y, 0.5 * y, np.zeros(n), -y]
    w = np.ones(n)
    w[rng.choice(n, 20, replace=False)] = 0.0
    keep = w > 0
    a = make().fit(X, y, sample_weight=w)
    b = make().fit(X[keep], y[keep])
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-6)
    if attr is not None:
        get = lambda m: m.path_[attr.split("/")[1]] if "/" in attr else getattr(m, attr)
        np.testing.assert_allclose(get(a), get(b), rtol=1e-6, atol=1e-9)


def test_resolve_folds_takes_a_count_a_splitter_or_index_pairs_that_partition_the_rows():
    """An estimator's ``cv`` may be a fold count, a splitter or a list of (train, test) index
    pairs; given splits must partition the rows (each fold's training statistics are the total
    minus its test part), and anything else is refused with the split that breaks it."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 23)
    folds, k = ms.resolve_folds(4, y, 5)
    assert k == 4
    np.testing.assert_array_equal(folds, ms.stratified_folds(y, 4, 5))
    rows = np.arange(23)
    pairs = [(rows[folds != j], rows[folds == j]) for j in range(4)]
    got, k = ms.resolve_folds(pairs, y)
    assert k == 4
    np.testing.assert_array_equal(got, folds)
    masks = [(folds != j, folds == j) for j in (2, 0, 3, 1)]  # boolean masks, any order
    got, _ = ms.resolve_folds(masks, y)
    np.testing.assert_array_equal(got, np.argsort([2, 0, 3, 1])[folds])  # split j: fold order[j]

    class Splitter:  # the splitter protocol: split(X, y) yields (train, test)
        def split(self, X, y):
            assert X.shape == (23, 1) and y.shape == (23,)
            yield from pairs

    got, k = ms.resolve_folds(Splitter(), y)
    assert k == 4
    np.testing.assert_array_equal(got, folds)

    bad = {
        "test sets of splits 0 and 1": [(rows[5:], rows[:5]), (rows[3:], rows[:3])],
        "not the complement": [(rows[:10], rows[10:15]), (rows[15:], rows[:15])],
        "row 20 is in no test set": [
            (rows[10:], rows[:10]),
            (np.r_[rows[:10], rows[20:]], rows[10:20]),
        ],
        "split 1 has an empty test set": [(rows[:10], rows[10:]), (rows, rows[:0])],
        "gives 1 split": [(rows[:10], rows[10:])],
        r"outside \[0, 23\)": [(rows[:10], rows[10:]), (rows[10:], np.r_[rows[:10], 23])],
        "repeats a row index": [(rows[:10], rows[10:]), (rows[10:], np.r_[rows[:10], 0])],
        "not a \\(train, test\\) pair": [(rows[:10], rows[10:]), rows],
    }
    for match, splits in bad.items():
        with pytest.raises(ValueError, match=match):
            ms.resolve_folds(splits, y)
    w = np.ones(23)
    w[folds == 2] = 0.0
    with pytest.raises(ValueError, match="split 2's test set has only rows of weight 0"):
        ms.resolve_folds(pairs, y, sample_weight=w)
    with pytest.raises(ValueError, match="cv must be an int >= 2; got cv=1"):
        ms.resolve_folds(1, y)
    with pytest.raises(ValueError, match="cv must be an int >= 2; got cv=2.5"):
        ms.check_cv(2.5)
    with pytest.raises(TypeError, match=r"generator is used up by one fit: pass list"):
        ms.check_cv(iter(pairs))


@pytest.mark.parametrize("name", ["StagewiseNB cv", "GroupLassoNB cv", "FilterWrapperNB"])
def test_explicit_folds_equal_the_seeded_folds_they_list(name):
    """The same folds given as (train, test) pairs, or by a splitter, give the fit of the
    seeded count: methods compared side by side can share one list of folds."""
    make, attr = _estimators_with_a_split()[name]
    rng = np.random.default_rng(2)
    n = 80
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) + np.c_[y, 0.5 * y, np.zeros(n), -y]
    key = "n_folds" if name.startswith("Stagewise") else "cv"
    a = make().set_params(random_state=6).fit(X, y)
    folds = ms.stratified_folds(y, 3, 6)  # y is 0..2 here: its codes are the labels
    rows = np.arange(n)
    pairs = [(rows[folds != j], rows[folds == j]) for j in range(3)]
    b = make().set_params(**{key: pairs}).fit(X, y)
    get = lambda m: m.path_[attr.split("/")[1]] if "/" in attr else getattr(m, attr)
    np.testing.assert_allclose(get(b), get(a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), rtol=1e-12, atol=1e-12)
    sk = pytest.importorskip("sklearn.model_selection")
    c = make().set_params(**{key: sk.PredefinedSplit(folds)}).fit(X, y)
    np.testing.assert_allclose(get(c), get(a), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=f"{key}: split 0's training set is not the complement"):
        make().set_params(**{key: list(sk.TimeSeriesSplit(3).split(X))}).fit(X, y)
