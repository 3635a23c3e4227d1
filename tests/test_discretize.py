"""Tests for jaxnb.discretize: MODL against brute force, Fayyad–Irani textbook cases, helpers."""

import itertools

import numpy as np
import pytest

from jaxnb.discretize import (
    Discretizer,
    apply_cuts,
    equal_frequency_cuts,
    equal_width_cuts,
    fayyad_irani_cuts,
    fayyad_irani_cuts_from_counts,
    modl_cost,
    modl_cuts,
    modl_cuts_from_counts,
)


def _brute_force_modl(counts):
    """Least MODL cost over all 2^(m-1) partitions of the elementary bins (float64 reference)."""
    m = counts.shape[0]
    best = np.inf
    for mask in itertools.product([False, True], repeat=m - 1):
        ends = [i + 1 for i, cut in enumerate(mask) if cut] + [m]
        starts = [0] + ends[:-1]
        intervals = np.array([counts[s:e].sum(axis=0) for s, e in zip(starts, ends, strict=True)])
        best = min(best, modl_cost(intervals))
    return best


def _manual_cost(interval_counts):
    """MODL criterion written with explicit factorials (Boullé 2006a), integer counts only."""
    from math import comb, factorial, log, prod

    counts = np.asarray(interval_counts, dtype=np.int64)
    n, (n_int, n_cls) = counts.sum(), counts.shape
    cost = log(n) + log(comb(n + n_int - 1, n_int - 1))
    for row in counts:
        ni = int(row.sum())
        cost += log(comb(ni + n_cls - 1, n_cls - 1))
        cost += log(factorial(ni) / prod(factorial(int(v)) for v in row))
    return cost


def test_modl_cost_matches_factorial_formula():
    counts = np.array([[3, 0, 1], [0, 4, 2], [5, 1, 0]])
    assert modl_cost(counts) == pytest.approx(_manual_cost(counts), rel=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_modl_dp_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 11))  # <= 10 distinct values
    n_classes = int(rng.integers(2, 4))
    n = int(rng.integers(m, 60))
    values = rng.integers(0, m, n).astype(float)
    # class depends on the value in some seeds, pure noise in others
    signal = rng.integers(0, n_classes, m) if seed % 2 else rng.integers(0, n_classes, n)
    y = np.where(rng.random(n) < 0.8, signal[values.astype(int)] if seed % 2 else signal, 0)
    y = y.astype(np.int64)
    cuts, cost = modl_cuts(values, y, return_cost=True)
    distinct = np.unique(values)
    counts = np.zeros((distinct.size, y.max() + 1))
    np.add.at(counts, (np.searchsorted(distinct, values), y), 1.0)
    assert cost == pytest.approx(_brute_force_modl(counts), rel=1e-12, abs=1e-12)
    # the returned cuts realise the returned cost
    codes = apply_cuts(values, cuts)
    intervals = np.zeros((cuts.size + 1, y.max() + 1))
    np.add.at(intervals, (codes, y), 1.0)
    assert modl_cost(intervals) == pytest.approx(cost, rel=1e-12)


def test_modl_weighted_counts_equal_duplicated_rows():
    rng = np.random.default_rng(3)
    values = rng.integers(0, 8, 40).astype(float)
    y = (values > 3).astype(np.int64) ^ (rng.random(40) < 0.1)
    w = rng.integers(1, 4, 40).astype(float)
    cuts_w, cost_w = modl_cuts(values, y, sample_weight=w, return_cost=True)
    rep = w.astype(int)
    cuts_r, cost_r = modl_cuts(np.repeat(values, rep), np.repeat(y, rep), return_cost=True)
    np.testing.assert_allclose(cuts_w, cuts_r)
    assert cost_w == pytest.approx(cost_r, rel=1e-12)


def test_modl_finds_clear_boundary_and_none_in_noise():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 400)
    cuts = modl_cuts(x, (x > 0.5).astype(np.int64))
    assert cuts.size == 1 and abs(cuts[0] - 0.5) < 0.01
    assert modl_cuts(x, rng.integers(0, 2, 400)).size == 0


def test_modl_from_counts_drops_empty_padding_bins():
    edges = np.array([1.0, 2.0, 3.0, np.inf, np.inf])
    counts = np.array([[10, 0], [9, 1], [0, 10], [1, 9], [0, 0], [0, 0]], dtype=float)
    cuts = modl_cuts_from_counts(edges, counts)
    np.testing.assert_array_equal(cuts, [2.0])
    batched = modl_cuts_from_counts(np.stack([edges, edges]), np.stack([counts, counts]))
    assert len(batched) == 2 and np.array_equal(batched[1], [2.0])


def test_fayyad_irani_textbook_split_and_noise():
    rng = np.random.default_rng(1)
    x = np.arange(100, dtype=float)
    y = (x >= 60).astype(np.int64)
    np.testing.assert_allclose(fayyad_irani_cuts(x, y), [59.5])
    # three pure blocks -> two cuts
    y3 = np.digitize(x, [30, 70]).astype(np.int64)
    np.testing.assert_allclose(fayyad_irani_cuts(x, y3), [29.5, 69.5])
    assert fayyad_irani_cuts(rng.normal(size=300), rng.integers(0, 2, 300)).size == 0


def test_fayyad_irani_mdl_rule_by_hand():
    # S = 4 x class 0 then 4 x class 1: Ent(S) = 1 bit, both halves pure, gain = 1 bit;
    # k = 2, k1 = k2 = 1: Delta = log2(7) - 2, threshold = (log2(7) + log2(7) - 2) / 8 = 0.45 < 1
    counts = np.array([[4, 0], [0, 4]], dtype=float)
    assert fayyad_irani_cuts_from_counts([0.5], counts).tolist() == [0.5]
    # a 3:1 vs 1:3 mix: gain = 0.19 bit < threshold (log2(7) + log2(7) - 2 + 4 * 0.81) / 8 = 0.86
    counts = np.array([[3, 1], [1, 3]], dtype=float)
    assert fayyad_irani_cuts_from_counts([0.5], counts).size == 0


def test_unsupervised_cuts_and_apply_cuts():
    x = np.arange(1.0, 11.0)
    np.testing.assert_allclose(equal_width_cuts(x, 3), [4.0, 7.0])
    np.testing.assert_allclose(equal_frequency_cuts(x, 5), [2.0, 4.0, 6.0, 8.0])
    codes = apply_cuts(x, equal_frequency_cuts(x, 5))
    np.testing.assert_array_equal(np.bincount(codes), [2, 2, 2, 2, 2])
    np.testing.assert_array_equal(apply_cuts([1.0, 1.5, np.nan, 9.0], [1.0, 2.0]), [0, 1, -1, 2])
    assert equal_width_cuts(np.ones(5), 4).size == 0


def test_discretizer_per_column_and_validation():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(300, 3))
    y = (X[:, 0] > 0.3).astype(np.int64)
    d = Discretizer("modl").fit(X, y)
    codes = d.transform(X)
    assert codes.dtype == np.int32 and codes.shape == (300, 3)
    assert d.n_bins_[0] == 2 and d.n_bins_[1] == 1 and (codes < d.n_bins_[None, :]).all()
    ew = Discretizer("equal_width", n_bins=4).fit_transform(X)
    assert ew.max() == 3
    with pytest.raises(ValueError, match="method"):
        Discretizer("kmeans").fit(X, y)
    with pytest.raises(ValueError, match="y is required"):
        Discretizer("fayyad_irani").fit(X)
    with pytest.raises(ValueError, match="n_bins"):
        Discretizer("equal_frequency", n_bins=0).fit(X)
    with pytest.raises(ValueError, match="values must be finite"):
        modl_cuts(np.array([1.0, np.inf]), np.array([0, 1]))
    with pytest.raises(ValueError, match="sample_weight"):
        modl_cuts(np.ones(3), np.zeros(3, np.int64), sample_weight=-np.ones(3))


def test_modl_number_of_classes_is_the_problems_not_the_kept_rows():
    """J enters the MODL prior; rows dropped for a zero weight (a fold) or a NaN value must not
    lower it: the raw-value call equals the counts call with an empty class column."""
    x = np.r_[np.arange(1, 11.0), 5.5, 6.5]
    y = np.array([0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 2, 2])  # class 2 only on the two dropped rows
    w = np.r_[np.ones(10), 0.0, 0.0]
    cuts, cost = modl_cuts(x, y, sample_weight=w, return_cost=True)
    counts = np.zeros((10, 3))
    counts[np.arange(10), y[:10]] = 1.0
    ref_cuts, ref_cost = modl_cuts_from_counts(
        (x[:10][:-1] + x[:10][1:]) / 2, counts, return_cost=True
    )
    np.testing.assert_array_equal(cuts, ref_cuts)
    assert cost == pytest.approx(ref_cost, rel=1e-12)
    # the two-class problem (the same kept rows) is a different prior: it cuts at 4.5
    two, cost2 = modl_cuts(x[:10], y[:10], return_cost=True)
    np.testing.assert_array_equal(two, [4.5])
    assert cost2 < cost
    # an explicit n_classes gives the same; a NaN in the dropped rows instead of a zero weight too
    np.testing.assert_array_equal(modl_cuts(x[:10], y[:10], n_classes=3), ref_cuts)
    xn = x.copy()
    xn[10:] = np.nan
    np.testing.assert_array_equal(modl_cuts(xn, y), ref_cuts)
    # Discretizer: one J for every column, whatever each column's NaNs drop
    X = np.c_[xn, x]
    d = Discretizer("modl").fit(X, y, sample_weight=w)
    for c in d.cuts_:
        np.testing.assert_array_equal(c, ref_cuts)
    with pytest.raises(ValueError, match="n_classes=2 but y holds class code 2"):
        modl_cuts(x, y, n_classes=2)
    with pytest.raises(TypeError, match="n_classes must be an int"):
        fayyad_irani_cuts(x, y, n_classes=3.0)


def test_unsupervised_cuts_use_sample_weight():
    """Zero weights drop rows (a fold); positive weights give weighted quantiles; unit weights
    give the unweighted cuts; a wrong-shaped weight is an error, never ignored."""
    x = np.arange(10.0)
    w = np.r_[np.zeros(5), np.ones(5)]
    np.testing.assert_array_equal(equal_frequency_cuts(x, 2, sample_weight=w), [7.0])
    np.testing.assert_array_equal(
        equal_frequency_cuts(x, 2, sample_weight=w), equal_frequency_cuts(x[5:], 2)
    )
    np.testing.assert_allclose(equal_width_cuts(x, 2, sample_weight=w), [7.0])
    # integer weights = repeated rows
    rng = np.random.default_rng(0)
    v = rng.normal(size=30)
    k = rng.integers(0, 4, 30)
    for n_bins in (2, 3, 5):
        np.testing.assert_array_equal(
            equal_frequency_cuts(v, n_bins, sample_weight=k),
            equal_frequency_cuts(np.repeat(v, k), n_bins),
        )
    r = rng.normal(size=101)
    for n_bins in (2, 3, 7, 10):
        np.testing.assert_array_equal(
            equal_frequency_cuts(r, n_bins, sample_weight=np.ones(101)),
            equal_frequency_cuts(r, n_bins),
        )
    d = Discretizer("equal_frequency", n_bins=2).fit(x[:, None], sample_weight=w)
    np.testing.assert_array_equal(d.cuts_[0], [7.0])
    for method in ("equal_width", "equal_frequency", "modl"):
        with pytest.raises(ValueError, match=r"sample_weight must have shape \(10,\)"):
            Discretizer(method, n_bins=2).fit(
                x[:, None], (x > 4).astype(int), sample_weight=np.ones(3)
            )
    with pytest.raises(ValueError, match="sample_weight must be finite and >= 0"):
        equal_width_cuts(x, 2, sample_weight=-w)


def test_cuts_between_values_near_the_float_limits_stay_between_them():
    # the plain midpoint (a + b) / 2 overflows to -inf here, a cut that separates nothing
    for lo, hi in [(-1.7e308, -1e308), (1e308, 1.7e308), (-1.7e308, 1.7e308)]:
        x = np.array([lo] * 5 + [hi] * 5)
        y = np.array([0] * 5 + [1] * 5)
        for cut_fn in (modl_cuts, fayyad_irani_cuts):
            cuts = cut_fn(x, y)
            assert cuts.size == 1 and lo <= cuts[0] < hi, (cut_fn.__name__, lo, hi, cuts)
            np.testing.assert_array_equal(apply_cuts(x, cuts), y)
    # equal-width cuts over a range wider than the float maximum
    cuts = equal_width_cuts(np.array([-1.7e308, 1.7e308]), 4)
    np.testing.assert_allclose(cuts, [-0.85e308, 0.0, 0.85e308], atol=1e295)


def test_fayyad_irani_cuts_with_hundreds_of_classes():
    # 3.0**k overflows from k = 647 and made the MDL threshold infinite: no cut at all
    for n_classes in (20, 700):
        y = np.repeat(np.arange(n_classes), 3)
        x = y.astype(float)
        cuts = fayyad_irani_cuts(x, y, n_classes=n_classes)
        np.testing.assert_allclose(cuts, np.arange(n_classes - 1) + 0.5)


def test_cuts_from_counts_reject_unsorted_or_nan_cuts():
    counts = np.array([[30, 0], [0, 30], [30, 0]], dtype=float)
    for fn in (modl_cuts_from_counts, fayyad_irani_cuts_from_counts):
        for bad in ([np.nan, 1.0], [2.0, 1.0]):
            with pytest.raises(ValueError, match="cuts must be sorted"):
                fn(bad, counts)
        assert fn([1.0, 2.0], counts).tolist() == [1.0, 2.0]


def test_discretizer_takes_class_labels_not_codes():
    """`Discretizer.fit(X, y)` takes labels as an estimator's fit does: labels 1/2 (or text) give
    the cuts of 0/1. Taken as codes, 1/2 had J = 3 classes in the MODL prior, which cut this data
    nowhere where the two-class prior cuts once."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    X = rng.normal(size=(300, 3)) + 0.35 * y[:, None]
    ref = Discretizer("modl").fit(X, y)
    assert [c.size for c in ref.cuts_] == [1, 0, 0]
    np.testing.assert_array_equal(ref.cuts_[0], modl_cuts(X[:, 0], y))
    for labels in (y + 1, 2 * y, np.where(y > 0, "yes", "no"), y.astype(np.float64)):
        for method in ("modl", "fayyad_irani"):
            d = Discretizer(method).fit(X, labels)
            want = Discretizer(method).fit(X, y).cuts_
            for got, exp in zip(d.cuts_, want, strict=True):
                np.testing.assert_array_equal(got, exp)
        assert len(d.classes_) == 2
    # three labels with only two present: J = 2 (the distinct labels), as for codes 0 and 1
    np.testing.assert_array_equal(Discretizer("modl").fit(X, 3 * y).cuts_[0], ref.cuts_[0])
    assert repr(ref) == "Discretizer()"
    assert (
        repr(Discretizer("equal_width", n_bins=4)) == "Discretizer(method='equal_width', n_bins=4)"
    )
    # a refit without labels keeps no classes_ of the last fit
    assert not hasattr(ref.set_params(method="equal_width").fit(X), "classes_")
    with pytest.raises(ValueError, match="non-integer floats"):
        Discretizer("modl").fit(X, y + 0.5)


def test_discretizer_refuses_complex_and_text_tables():
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1] * 3)
    with pytest.raises(ValueError, match="Complex data not supported: X"):
        Discretizer("equal_width", n_bins=2).fit(X + 1j)  # used to drop the imaginary part
    with pytest.raises(TypeError, match="X must hold numbers .* code them"):
        Discretizer("modl").fit(np.where(X > 3, "a", "b"), y)
    d = Discretizer("equal_width", n_bins=2).fit(X)
    with pytest.raises(ValueError, match="Complex data not supported: X"):
        d.transform(X + 1j)
    with pytest.raises(ValueError, match=r"X must be 2-D \(n, p\); got shape \(6,\)"):
        d.transform(X[:, 0])
    # a NaN (missing) and an object table of numbers are fine
    Xo = X.astype(object)
    Xo[0, 0] = np.nan
    np.testing.assert_array_equal(d.transform(Xo)[:, 0], [-1, 0, 0, 1, 1, 1])
