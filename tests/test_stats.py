"""Tests for jaxnb.stats: Friedman, Nemenyi, Holm, Bergmann–Hommel, paired tests, table markers."""

import itertools
import math

import numpy as np
import pytest

from jaxnb import stats

# Demšar (2006), JMLR 7, §3.2.2 worked example (four C4.5 variants on 14 data sets, AUC): published
# average ranks, chi^2_F = 9.28, F_F = 3.69, q_0.05 = 2.569 and CD = 1.25.
DEMSAR_AVG_RANKS = [3.143, 2.000, 2.893, 1.964]
# Demšar (2006) Table 5(a): q_0.05 and q_0.10 for k = 2..10 (rounded to 3 decimals in the paper).
DEMSAR_Q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
DEMSAR_Q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]


def test_friedman_reproduces_demsar_example():
    res = stats.friedman_from_ranks(DEMSAR_AVG_RANKS, 14)
    assert round(res.statistic, 2) == 9.28
    assert round(res.f_statistic, 2) == 3.69
    # F(3, 39) critical value at 0.05 is 2.85 in Demšar's text, so p < 0.05
    assert 0.01 < res.f_pvalue < 0.05
    assert stats.nemenyi_cd(4, 14, 0.05) == pytest.approx(1.25, abs=5e-3)


def test_nemenyi_q_matches_demsar_table_and_scipy():
    for k, q05, q10 in zip(range(2, 11), DEMSAR_Q05, DEMSAR_Q10, strict=True):
        se = math.sqrt(k * (k + 1) / 6.0)
        # the paper truncates/rounds to 3 decimals (2.343 for 2.34370...), hence 1.5e-3
        assert stats.nemenyi_cd(k, 1, 0.05) / se == pytest.approx(q05, abs=1.5e-3)
        assert stats.nemenyi_cd(k, 1, 0.10) / se == pytest.approx(q10, abs=1.5e-3)
    sp = pytest.importorskip("scipy.stats")
    for k in (2, 4, 7):
        ref = sp.studentized_range.ppf(0.95, k, np.inf)
        assert stats.studentized_range_quantile(0.95, k) == pytest.approx(ref, rel=1e-9)


def test_rank_scores_ties_and_orientation():
    scores = np.array([[0.9, 0.8, 0.8, 0.7], [0.5, 0.5, 0.5, 0.5], [0.1, 0.3, 0.2, 0.4]])
    ranks = stats.rank_scores(scores, higher_is_better=True)
    np.testing.assert_allclose(
        ranks, [[1.0, 2.5, 2.5, 4.0], [2.5, 2.5, 2.5, 2.5], [4.0, 2.0, 3.0, 1.0]]
    )
    np.testing.assert_allclose(stats.rank_scores(scores, higher_is_better=False), 5.0 - ranks)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_friedman_matches_scipy_with_ties(seed):
    sp = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(seed)
    n, k = 12, 5
    # integer scores make ties frequent; a method effect makes the test non-trivial
    table = rng.integers(0, 6, size=(n, k)) + np.arange(k)[None, :] * (seed % 2)
    res = stats.friedman_test(table, tie_correction=True)
    ref = sp.friedmanchisquare(*table.T)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    plain = stats.friedman_test(table)
    ff = (n - 1) * plain.statistic / (n * (k - 1) - plain.statistic)
    assert plain.f_statistic == pytest.approx(ff, rel=1e-12)
    assert plain.f_pvalue == pytest.approx(sp.f.sf(ff, k - 1, (k - 1) * (n - 1)), rel=1e-9)
    np.testing.assert_allclose(plain.avg_ranks, sp.rankdata(-table, axis=1).mean(0), rtol=1e-12)


def test_friedman_degenerate_rankings():
    table = np.tile([0.9, 0.8, 0.7], (5, 1))  # identical rankings: chi^2 = N (k - 1)
    res = stats.friedman_test(table)
    assert res.statistic == pytest.approx(10.0)
    assert res.f_statistic == math.inf and res.f_pvalue == 0.0
    flat = stats.friedman_test(np.ones((5, 3)))
    assert flat.statistic == 0.0 and flat.pvalue == 1.0 and flat.f_pvalue == 1.0


def test_special_functions_match_scipy():
    sp = pytest.importorskip("scipy.stats")
    for x, df in itertools.product([1e-3, 0.5, 3.0, 9.28, 40.0, 150.0], [1, 2, 3, 7, 30]):
        assert stats.chi2_sf(x, df) == pytest.approx(sp.chi2.sf(x, df), rel=1e-10, abs=1e-300)
    for x, d1, d2 in itertools.product([0.05, 0.9, 3.69, 25.0, 400.0], [1, 3, 9], [2, 39, 120]):
        assert stats.f_sf(x, d1, d2) == pytest.approx(sp.f.sf(x, d1, d2), rel=1e-10, abs=1e-300)
    for t, df in itertools.product([0.0, 0.3, 2.0, -4.5, 12.0], [1, 4, 9, 60]):
        assert stats.t_sf_two_sided(t, df) == pytest.approx(2 * sp.t.sf(abs(t), df), rel=1e-10)


def test_pairwise_rank_pvalues_formula():
    sp = pytest.importorskip("scipy.stats")
    comp = stats.pairwise_rank_pvalues(DEMSAR_AVG_RANKS, 14)
    se = math.sqrt(4 * 5 / (6 * 14))
    np.testing.assert_array_equal(comp.pairs, [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])
    assert comp.statistic[2] == pytest.approx((3.143 - 1.964) / se)
    np.testing.assert_allclose(comp.pvalues, 2 * sp.norm.sf(np.abs(comp.statistic)), rtol=1e-12)


def test_holm_hand_example():
    # sorted: 0.005 x4 = 0.02, 0.01 x3 = 0.03, 0.03 x2 = 0.06, 0.04 x1 = 0.04 -> running max 0.06
    res = stats.holm([0.01, 0.04, 0.03, 0.005], alpha=0.05)
    np.testing.assert_allclose(res.adjusted_pvalues, [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_array_equal(res.reject, [True, False, False, True])
    # monotone step-down: the larger p inherits the clipped 1.0 of the smaller one
    np.testing.assert_allclose(stats.holm([0.5, 0.6]).adjusted_pvalues, [1.0, 1.0])


BELL = {2: 2, 3: 5, 4: 15, 5: 52, 6: 203, 7: 877, 8: 4140}


def test_exhaustive_sets_are_transitively_closed_partitions():
    for k, bell in BELL.items():
        sets = stats.exhaustive_sets(k)
        assert sets.shape == (bell - 1, k * (k - 1) // 2)
        assert len({row.tobytes() for row in sets}) == sets.shape[0]
    # Shaffer (1986): with k = 4 the possible numbers of simultaneously true hypotheses are 1, 2,
    # 3, 6
    assert set(stats.exhaustive_sets(4).sum(1)) == {1, 2, 3, 6}
    pairs = [tuple(p) for p in np.stack(np.triu_indices(5, 1), 1)]
    for row in stats.exhaustive_sets(5):  # closed under transitivity
        eq = {pairs[m] for m in np.flatnonzero(row)}
        for (a, b), (c, d) in itertools.product(eq, eq):
            shared = {a, b} & {c, d}
            if len(shared) == 1 and {a, b} != {c, d}:
                assert tuple(sorted(({a, b} | {c, d}) - shared)) in eq
    with pytest.raises(ValueError, match="holm"):
        stats.exhaustive_sets(11)


def test_bergmann_hommel_hand_example_beats_holm():
    # k = 3: exhaustive sets {all three pairs} and each single pair.
    # APV(01) = max(3*.01, .01) = .03; APV(02) = max(.03, .02) = .03; APV(12) = max(.03, .04) = .04.
    # Holm: .03, max(.03, 2*.02) = .04, max(.04, .04) = .04.
    p = [0.01, 0.02, 0.04]
    bh = stats.bergmann_hommel_adjust(p, 3, alpha=0.035)
    hm = stats.holm(p, alpha=0.035)
    np.testing.assert_allclose(bh.adjusted_pvalues, [0.03, 0.03, 0.04])
    np.testing.assert_allclose(hm.adjusted_pvalues, [0.03, 0.04, 0.04])
    np.testing.assert_array_equal(bh.reject, [True, True, False])
    np.testing.assert_array_equal(hm.reject, [True, False, False])


def _bh_reject_reference(p, k, alpha):
    """Direct Bergmann–Hommel rule: reject H_i iff i not in the union of accepted exhaustive
    sets."""
    accepted = np.zeros(len(p), bool)
    for row in stats.exhaustive_sets(k):
        if p[row].min() > alpha / row.sum():
            accepted |= row
    return ~accepted


@pytest.mark.parametrize("k", [4, 5, 6, 7])
def test_bergmann_hommel_at_least_as_powerful_as_holm(k):
    rng = np.random.default_rng(k)
    n_strict = 0
    for _ in range(20):
        avg = rng.uniform(1, k, size=k)
        res = stats.bergmann_hommel(avg, n_datasets=12, alpha=0.05)
        hm = stats.holm(res.pvalues, alpha=0.05)
        assert np.all(res.adjusted_pvalues <= hm.adjusted_pvalues + 1e-15)
        assert np.all(res.adjusted_pvalues >= res.pvalues - 1e-15)
        assert np.all(res.reject[hm.reject])
        np.testing.assert_array_equal(res.reject, _bh_reject_reference(res.pvalues, k, 0.05))
        n_strict += int(np.sum(res.reject & ~hm.reject))
    assert n_strict > 0  # the gain in power shows up on these random rankings


def test_paired_tests_match_scipy():
    sp = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    x = rng.normal(size=15)
    y = x + rng.normal(0.3, 0.5, size=15)
    t, p = stats.paired_ttest(x, y)
    ref = sp.ttest_rel(x, y)
    assert t == pytest.approx(ref.statistic, rel=1e-12)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)
    assert stats.paired_ttest(x, x) == (0.0, 1.0)
    # Wilcoxon with ties among |d| and a zero difference (dropped, zero_method="wilcox")
    a = np.round(rng.normal(size=20), 1)
    b = np.round(a + rng.normal(0.2, 0.4, size=20), 1)
    b[0] = a[0]
    for continuity in (False, True):
        w, pw = stats.wilcoxon_signed_rank(a, b, continuity=continuity)
        ref = sp.wilcoxon(a, b, zero_method="wilcox", correction=continuity, method="approx")
        assert w == pytest.approx(ref.statistic)
        assert pw == pytest.approx(ref.pvalue, rel=1e-9)


def test_significance_markers_and_formatting():
    rng = np.random.default_rng(0)
    base = rng.normal(0.10, 0.01, size=20)
    runs = np.stack(
        [
            np.stack([base, base + rng.normal(0.0005, 0.01, 20), base + 0.05]),  # row 0: best = 0
            np.stack([base + 0.05, base + rng.normal(0.0005, 0.01, 20), base]),  # row 1: best = 2
        ]
    )
    for test in ("wilcoxon", "ttest"):
        res = stats.significance_markers(runs, higher_is_better=False, test=test, alpha=0.05)
        np.testing.assert_array_equal(res.best, [0, 2])
        np.testing.assert_array_equal(res.markers, [[2, 1, 0], [0, 1, 2]])
        assert res.pvalues[0, 2] < 1e-3 and res.pvalues[0, 1] > 0.05
    flipped = stats.significance_markers(-runs, higher_is_better=True, test="ttest")
    np.testing.assert_array_equal(flipped.markers, [[2, 1, 0], [0, 1, 2]])

    mean, std = stats.mean_std([[0.07, 0.08, 0.09]])
    np.testing.assert_allclose(mean, [0.08])
    np.testing.assert_allclose(std, [0.01])
    cells = stats.format_mean_std([0.0762, 0.1521, 0.5], [0.031, 0.07, 0.1], [2, 1, 0])
    assert list(cells) == [
        r"\textbf{0.076 ($\pm$0.03)}",
        r"\underline{0.152 ($\pm$0.07)}",
        r"0.500 ($\pm$0.10)",
    ]
    plain = stats.format_mean_std(0.076, 0.03, 2, latex=False)
    assert str(plain) == "0.076 (±0.03) **"


def test_validation_errors():
    with pytest.raises(ValueError, match="2-D"):
        stats.friedman_test([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="finite"):
        stats.friedman_test([[1.0, np.nan], [1.0, 2.0]])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        stats.holm([0.1, 1.5])
    with pytest.raises(ValueError, match="entries"):
        stats.bergmann_hommel_adjust([0.1, 0.2], 3)
    with pytest.raises(ValueError, match="test must be"):
        stats.significance_markers(np.zeros((1, 2, 3)), test="sign")


def test_paired_mean_interval():
    rng = np.random.default_rng(8)
    x = rng.normal(0.1, 0.05, size=100)
    y = x - rng.normal(0.02, 0.01, size=100)
    m, lo, hi = stats.paired_mean_interval(x, y)
    d = x - y
    half = 1.96 * d.std(ddof=1) / 10.0
    assert m == pytest.approx(d.mean(), rel=1e-12)
    assert (lo, hi) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-12)
    # the paired t statistic is the mean over the same standard error
    t, _ = stats.paired_ttest(x, y)
    assert t == pytest.approx(m / (half / 1.96), rel=1e-12)
    with pytest.raises(ValueError, match="equal length"):
        stats.paired_mean_interval(x, y[:-1])
