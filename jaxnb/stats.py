r"""Statistical comparison of classifiers over data sets and runs (NumPy, float64).

Everything here post-processes result tables, so it is plain NumPy/`math` in float64, independent of
JAX's x64 flag, and needs no SciPy (SciPy is a test-only extra; the tests compare against it).

Contents
  * Friedman test over data sets (Demšar 2006, §3.2.2) with the Iman–Davenport F version.
  * Nemenyi critical difference (Demšar 2006, Eq. after Table 5), q_alpha computed, not tabulated.
  * Pairwise rank z statistics z = (R_i - R_j) / sqrt(k (k+1) / (6 N)) and their two-sided p-values.
  * Holm's step-down adjustment and the Bergmann–Hommel procedure over all pairwise hypotheses with
    adjusted p-values as in García & Herrera (2008, §5), used by fsNB Table 4 (Vidaurre et al.
    2011).
  * Per-cell markers for result tables: the best method per row, and the methods not significantly
    worse than it by a paired t-test or a Wilcoxon signed-rank test (normal approximation) over
    runs.
  * `mean_std` and `format_mean_std` ("0.076 (±0.03)", fsNB Tables 1–3 style).

Distribution tails are evaluated with self-contained regularized incomplete gamma and beta functions
(series / Lentz continued fractions, Numerical Recipes §6.2 and §6.4); the tests check them against
SciPy to ~1e-12.

References:
  J. Demšar. Statistical comparisons of classifiers over multiple data sets. JMLR 7 (2006) 1–30.
  S. García, F. Herrera. An extension on "Statistical comparisons of classifiers over multiple data
    sets" for all pairwise comparisons. JMLR 9 (2008) 2677–2694.
  G. Bergmann, G. Hommel. Improvements of general multiple test procedures for redundant systems of
    hypotheses. In: Multiple Hypotheses Testing, Springer (1988) 100–115.
  S. Holm. A simple sequentially rejective multiple test procedure. Scand. J. Stat. 6 (1979) 65–70.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

__all__ = [
    "FriedmanResult",
    "MultipleTestResult",
    "PairwiseComparison",
    "BergmannHommelResult",
    "MarkerResult",
    "rank_scores",
    "friedman_test",
    "friedman_from_ranks",
    "studentized_range_quantile",
    "nemenyi_cd",
    "pairwise_rank_pvalues",
    "holm",
    "bergmann_hommel",
    "bergmann_hommel_adjust",
    "exhaustive_sets",
    "paired_ttest",
    "paired_mean_interval",
    "wilcoxon_signed_rank",
    "mean_std",
    "significance_markers",
    "format_mean_std",
    "chi2_sf",
    "f_sf",
    "t_sf_two_sided",
    "normal_sf",
]

_EPS = 1e-16
_TINY = 1e-300
_MAX_ITER = 10_000
_MAX_BH_METHODS = 10  # Bell(10) = 115,975 exhaustive sets x 45 pairs: still instant in NumPy.


# ----------------------------------------------------------------------------------------------
# Special functions (scalar, float64)
# ----------------------------------------------------------------------------------------------
def _gammainc_pair(a: float, x: float) -> tuple[float, float]:
    """Regularized lower and upper incomplete gamma (P, Q); NR §6.2 series / continued fraction."""
    if x <= 0.0:
        return 0.0, 1.0
    log_prefactor = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:  # series for P converges fast here
        term = total = 1.0 / a
        ap = a
        for _ in range(_MAX_ITER):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * _EPS:
                break
        p = total * math.exp(log_prefactor)
        return p, 1.0 - p
    # modified Lentz continued fraction for Q
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    q = math.exp(log_prefactor) * h
    return 1.0 - q, q


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (NR §6.4, modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = _TINY if abs(d) < _TINY else d
    d = 1.0 / d
    h = d
    for m in range(1, _MAX_ITER):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1.0 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1.0 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_bt = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_bt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_bt) * _betacf(b, a, 1.0 - x) / b


def normal_sf(z: float) -> float:
    r"""Standard normal upper tail 1 - Φ(z) = erfc(z / sqrt 2) / 2."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def chi2_sf(x: float, df: float) -> float:
    r"""Chi-squared survival function Q(df/2, x/2) (regularized upper incomplete gamma)."""
    if x <= 0.0:
        return 1.0
    return _gammainc_pair(0.5 * df, 0.5 * x)[1]


def f_sf(x: float, df1: float, df2: float) -> float:
    r"""F(df1, df2) survival function I_{df2/(df2 + df1 x)}(df2/2, df1/2)."""
    if x <= 0.0:
        return 1.0
    return _betainc(0.5 * df2, 0.5 * df1, df2 / (df2 + df1 * x))


def t_sf_two_sided(t: float, df: float) -> float:
    r"""Two-sided Student-t tail P(|T| >= |t|) = I_{df/(df + t^2)}(df/2, 1/2)."""
    return _betainc(0.5 * df, 0.5, df / (df + t * t))


def _normal_cdf_array(z: np.ndarray) -> np.ndarray:
    return 0.5 * np.vectorize(math.erfc, otypes=[float])(-z / math.sqrt(2.0))


# ----------------------------------------------------------------------------------------------
# Ranks and the Friedman test
# ----------------------------------------------------------------------------------------------
def _as_table(scores, name: str) -> np.ndarray:
    table = np.asarray(scores, dtype=float)
    if table.ndim != 2:
        raise ValueError(f"{name} must be 2-D (data sets x methods); got shape {table.shape}")
    if table.shape[0] < 2 or table.shape[1] < 2:
        raise ValueError(f"{name} needs >= 2 data sets and >= 2 methods; got shape {table.shape}")
    if not np.all(np.isfinite(table)):
        raise ValueError(f"{name} must be finite; drop or impute missing results first")
    return table


def rank_scores(scores, *, higher_is_better: bool = True) -> np.ndarray:
    r"""Rank methods within each data set (row); rank 1 is the best, ties get the average rank.

    rank[r, j] = 1 + #{l : s_rl better than s_rj} + (#{l : s_rl = s_rj} - 1) / 2 (Demšar 2006,
    §3.2.2).

    Args:
      scores: array (N data sets, k methods).
      higher_is_better: True for accuracy/AUC, False for error rates.

    Returns:
      float array (N, k) of ranks in [1, k]; each row sums to k (k + 1) / 2.
    """
    table = _as_table(scores, "scores")
    oriented = -table if higher_is_better else table
    better = (oriented[:, None, :] < oriented[:, :, None]).sum(-1)
    equal = (oriented[:, None, :] == oriented[:, :, None]).sum(-1)
    return 1.0 + better + (equal - 1) / 2.0


class FriedmanResult(NamedTuple):
    """Friedman test output; `avg_ranks[j]` is method j's average rank (1 = best)."""

    avg_ranks: np.ndarray
    statistic: float  # chi^2_F
    pvalue: float  # chi^2 with k - 1 degrees of freedom
    f_statistic: float  # Iman–Davenport F_F
    f_pvalue: float  # F with (k - 1, (k - 1)(N - 1)) degrees of freedom
    n_datasets: int
    n_methods: int


def _friedman_chi2(avg_ranks: np.ndarray, n: int) -> float:
    k = avg_ranks.size
    return float(12.0 * n / (k * (k + 1)) * (np.sum(avg_ranks**2) - k * (k + 1) ** 2 / 4.0))


def _friedman_result(avg: np.ndarray, n: int, chi2: float) -> FriedmanResult:
    k = avg.size
    chi2 = float(max(chi2, 0.0))
    df1, df2 = k - 1.0, (k - 1.0) * (n - 1.0)
    denom = n * (k - 1.0) - chi2
    if denom <= 1e-12 * n * k:
        f_stat, f_p = math.inf, 0.0
    else:
        f_stat = (n - 1.0) * chi2 / denom
        f_p = f_sf(f_stat, df1, df2)
    return FriedmanResult(avg, chi2, chi2_sf(chi2, df1), float(f_stat), float(f_p), n, k)


def friedman_from_ranks(avg_ranks, n_datasets: int) -> FriedmanResult:
    r"""Friedman chi^2_F and Iman–Davenport F_F from published average ranks (no tie correction).

    Same formulas as `friedman_test`; useful to check a paper's numbers from its reported ranks.
    """
    avg = np.asarray(avg_ranks, dtype=float)
    if avg.ndim != 1 or avg.size < 2:
        raise ValueError(f"avg_ranks must be 1-D with >= 2 methods; got shape {avg.shape}")
    if n_datasets < 2:
        raise ValueError(f"n_datasets must be >= 2; got {n_datasets=}")
    return _friedman_result(avg, int(n_datasets), _friedman_chi2(avg, int(n_datasets)))


def friedman_test(
    scores, *, higher_is_better: bool = True, tie_correction: bool = False
) -> FriedmanResult:
    r"""Friedman test of equal average ranks, and the Iman–Davenport correction.

    With R_j the average rank of method j over N data sets (Demšar 2006, Eqs. in §3.2.2):
      chi^2_F = 12 N / (k (k+1)) [sum_j R_j^2 - k (k+1)^2 / 4]   ~ chi^2_{k-1},
      F_F = (N - 1) chi^2_F / (N (k - 1) - chi^2_F)              ~ F_{k-1, (k-1)(N-1)}.

    Demšar's formula has no tie correction, and his worked example (chi^2_F = 9.28, F_F = 3.69) uses
    none, so that is the default. `tie_correction=True` divides chi^2_F by
    1 - sum (t^3 - t) / (N k (k^2 - 1)) over tie groups t within rows, as
    `scipy.stats.friedmanchisquare`.

    Args:
      scores: array (N data sets, k methods).
      higher_is_better: orientation of the scores (only the average ranks depend on it).
      tie_correction: see above.

    Returns:
      `FriedmanResult`. When chi^2_F reaches its maximum N (k - 1) (all rows ranked identically),
      F_F is +inf and its p-value 0.
    """
    ranks = rank_scores(scores, higher_is_better=higher_is_better)
    n, k = ranks.shape
    avg = ranks.mean(axis=0)
    chi2 = _friedman_chi2(avg, n)
    if tie_correction:
        equal = (ranks[:, None, :] == ranks[:, :, None]).sum(-1)
        # every member of a tie group of size t has t - 1 equals: sum over members of (t^2 - 1) =
        # t^3 - t
        ties = float(np.sum(equal.astype(float) ** 2 - 1.0))
        denom = 1.0 - ties / (n * k * (k * k - 1.0))
        chi2 = chi2 / denom if denom > 0 else 0.0
    return _friedman_result(avg, n, chi2)


# ----------------------------------------------------------------------------------------------
# Nemenyi critical difference
# ----------------------------------------------------------------------------------------------
def _studentized_range_cdf_inf(w: float, k: int, grid: np.ndarray, phi: np.ndarray) -> float:
    # P(range of k iid N(0,1) <= w) = k ∫ φ(z) [Φ(z + w) - Φ(z)]^{k-1} dz (infinite df)
    inner = np.clip(_normal_cdf_array(grid + w) - _normal_cdf_array(grid), 0.0, 1.0)
    return float(k * np.trapezoid(phi * inner ** (k - 1), grid))


def studentized_range_quantile(prob: float, n_groups: int) -> float:
    r"""Quantile of the studentized range of `n_groups` standard normals (infinite df).

    Solves k ∫ φ(z) [Φ(z + w) - Φ(z)]^{k-1} dz = prob for w with the Illinois (regula falsi) method.
    The integral uses the trapezoid rule on [-12, 12] with step 0.01, which converges geometrically
    for this smooth, Gaussian-tailed integrand (agrees with SciPy's `studentized_range` to ~1e-12).
    """
    if not 0.0 < prob < 1.0:
        raise ValueError(f"prob must lie in (0, 1); got {prob=}")
    if n_groups < 2:
        raise ValueError(f"n_groups must be >= 2; got {n_groups=}")
    grid = np.linspace(-12.0, 12.0, 2401)
    phi = np.exp(-0.5 * grid**2) / math.sqrt(2.0 * math.pi)
    residual = lambda w: _studentized_range_cdf_inf(w, n_groups, grid, phi) - prob
    lo, hi = 0.0, 20.0
    f_lo, f_hi = residual(lo), residual(hi)
    side = 0
    w = lo
    for _ in range(200):
        w = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        f_w = residual(w)
        if abs(f_w) < 1e-14 or hi - lo < 1e-13:
            break
        if f_w * f_hi > 0:
            hi, f_hi = w, f_w
            if side == -1:
                f_lo *= 0.5
            side = -1
        else:
            lo, f_lo = w, f_w
            if side == 1:
                f_hi *= 0.5
            side = 1
    return w


@functools.lru_cache(maxsize=128)
def _nemenyi_q(alpha: float, k: int) -> float:
    return studentized_range_quantile(1.0 - alpha, k) / math.sqrt(2.0)


def nemenyi_cd(n_methods: int, n_datasets: int, alpha: float = 0.05) -> float:
    r"""Nemenyi critical difference CD = q_alpha sqrt(k (k+1) / (6 N)) (Demšar 2006, §3.2.2).

    q_alpha is the studentized range quantile (infinite df) divided by sqrt 2, computed here rather
    than read from Demšar's Table 5(a) (which it reproduces: 2.569 for k = 4, alpha = 0.05).
    Two methods whose average ranks differ by at least CD are significantly different.
    """
    if n_methods < 2 or n_datasets < 1:
        raise ValueError(
            f"need n_methods >= 2 and n_datasets >= 1; got {n_methods=}, {n_datasets=}"
        )
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha=}")
    q = _nemenyi_q(float(alpha), int(n_methods))
    return q * math.sqrt(n_methods * (n_methods + 1) / (6.0 * n_datasets))


# ----------------------------------------------------------------------------------------------
# Pairwise rank comparisons and multiple-testing adjustments
# ----------------------------------------------------------------------------------------------
class PairwiseComparison(NamedTuple):
    """Pairwise comparisons; row m of `pairs` is (i, j) with i < j, in lexicographic order."""

    pairs: np.ndarray  # (m, 2) int
    statistic: np.ndarray  # (m,) z = (R_i - R_j) / SE
    pvalues: np.ndarray  # (m,) two-sided, unadjusted


class MultipleTestResult(NamedTuple):
    """Adjusted p-values (same order as the input) and rejections at `alpha`."""

    adjusted_pvalues: np.ndarray
    reject: np.ndarray


def _pairs(k: int) -> np.ndarray:
    i, j = np.triu_indices(k, 1)
    return np.stack([i, j], axis=1)


def pairwise_rank_pvalues(avg_ranks, n_datasets: int) -> PairwiseComparison:
    r"""z statistics and two-sided normal p-values for all pairs of average ranks.

    z = (R_i - R_j) / sqrt(k (k+1) / (6 N)),  p = 2 (1 - Φ(|z|)) (Demšar 2006, §3.2.2; García &
    Herrera 2008, §2). These unadjusted p-values feed `holm` and `bergmann_hommel_adjust`.
    """
    ranks = np.asarray(avg_ranks, dtype=float)
    if ranks.ndim != 1 or ranks.size < 2:
        raise ValueError(f"avg_ranks must be 1-D with >= 2 methods; got shape {ranks.shape}")
    if n_datasets < 1:
        raise ValueError(f"n_datasets must be >= 1; got {n_datasets=}")
    k = ranks.size
    pairs = _pairs(k)
    se = math.sqrt(k * (k + 1) / (6.0 * n_datasets))
    z = (ranks[pairs[:, 0]] - ranks[pairs[:, 1]]) / se
    p = np.array([math.erfc(abs(v) / math.sqrt(2.0)) for v in z])
    return PairwiseComparison(pairs, z, p)


def _check_pvalues(pvalues) -> np.ndarray:
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"pvalues must be a non-empty 1-D array; got shape {p.shape}")
    if np.any(~np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ValueError("pvalues must lie in [0, 1]")
    return p


def holm(pvalues, alpha: float = 0.05) -> MultipleTestResult:
    r"""Holm's step-down procedure with adjusted p-values.

    With p_(1) <= ... <= p_(m): APV_(i) = min(1, max_{j <= i} (m - j + 1) p_(j)) (García & Herrera
    2008, §5); H_(i) is rejected iff APV_(i) <= alpha.
    """
    p = _check_pvalues(pvalues)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return MultipleTestResult(adjusted, adjusted <= alpha)


def _set_partitions(k: int) -> np.ndarray:
    """All set partitions of range(k) as restricted growth strings, shape (Bell(k), k)."""
    out: list[list[int]] = []

    def extend(prefix: list[int], n_blocks: int) -> None:
        if len(prefix) == k:
            out.append(prefix.copy())
            return
        for block in range(n_blocks + 1):
            prefix.append(block)
            extend(prefix, max(n_blocks, block + 1))
            prefix.pop()

    extend([0], 1)
    return np.asarray(out, dtype=np.int8)


@functools.lru_cache(maxsize=16)
def exhaustive_sets(n_methods: int) -> np.ndarray:
    r"""Exhaustive sets of pairwise-equality hypotheses for `n_methods` methods.

    A set of hypotheses H_ij: "methods i and j perform equally" can all be true at once exactly
    when it
    is closed under transitivity, i.e. when it is the set of within-block pairs of a partition of
    the
    methods (Bergmann & Hommel 1988; García & Herrera 2008, §5). The partition into singletons
    gives the
    empty set and is dropped.

    Returns:
      bool array (Bell(k) - 1, k (k-1) / 2); column order as in `pairwise_rank_pvalues`.
    """
    k = int(n_methods)
    if not 2 <= k <= _MAX_BH_METHODS:
        raise ValueError(
            f"Bergmann–Hommel enumerates all set partitions; n_methods must be in "
            f"[2, {_MAX_BH_METHODS}], got {n_methods}. Use `holm` for more methods."
        )
    blocks = _set_partitions(k)
    pairs = _pairs(k)
    mask = blocks[:, pairs[:, 0]] == blocks[:, pairs[:, 1]]
    mask = mask[mask.any(axis=1)]
    mask.setflags(write=False)
    return mask


def bergmann_hommel_adjust(pvalues, n_methods: int, alpha: float = 0.05) -> MultipleTestResult:
    r"""Bergmann–Hommel adjusted p-values for all k (k-1)/2 pairwise hypotheses.

    Procedure: reject H_i iff H_i is not in A = ∪{I exhaustive : min_{j in I} p_j > alpha / |I|}.
    Adjusted p-value (García & Herrera 2008, §5): APV_i = min(1, max{|I| min_{j in I} p_j :
    I exhaustive, H_i in I}); H_i is rejected iff APV_i <= alpha, which is the same rule. Because
    the
    full set of m hypotheses is itself exhaustive and Holm's multipliers are the largest possible,
    every
    APV is <= Holm's.

    The fsNB paper's Table 4 prints unclipped values above 1 (2.210, 2.424); we clip at 1, as
    García &
    Herrera define it.

    Args:
      pvalues: (m,) unadjusted p-values, pairs in lexicographic order (i < j) as
      `pairwise_rank_pvalues`.
      n_methods: k, with m = k (k - 1) / 2 and 2 <= k <= 10.
      alpha: level for `reject`.
    """
    p = _check_pvalues(pvalues)
    k = int(n_methods)
    if p.size != k * (k - 1) // 2:
        raise ValueError(f"pvalues needs k (k-1)/2 = {k * (k - 1) // 2} entries; got {p.size}")
    sets = exhaustive_sets(k)
    min_p = np.where(sets, p[None, :], np.inf).min(axis=1)
    value = sets.sum(axis=1) * min_p  # |I| min_{j in I} p_j, one per exhaustive set
    adjusted = np.where(sets, value[:, None], -np.inf).max(axis=0)
    adjusted = np.minimum(adjusted, 1.0)
    return MultipleTestResult(adjusted, adjusted <= alpha)


class BergmannHommelResult(NamedTuple):
    pairs: np.ndarray  # (m, 2)
    statistic: np.ndarray  # (m,) rank z statistics
    pvalues: np.ndarray  # (m,) unadjusted
    adjusted_pvalues: np.ndarray  # (m,)
    reject: np.ndarray  # (m,) bool


def bergmann_hommel(avg_ranks, n_datasets: int, alpha: float = 0.05) -> BergmannHommelResult:
    r"""All pairwise comparisons of average ranks with the Bergmann–Hommel dynamic procedure.

    Rank z-tests from `pairwise_rank_pvalues`, adjusted by `bergmann_hommel_adjust` (the post-hoc of
    fsNB Table 4, after García & Herrera 2008). Pairs are (i, j), i < j, lexicographic.
    """
    comp = pairwise_rank_pvalues(avg_ranks, n_datasets)
    adj = bergmann_hommel_adjust(comp.pvalues, len(np.asarray(avg_ranks)), alpha)
    return BergmannHommelResult(comp.pairs, comp.statistic, comp.pvalues, *adj)


# ----------------------------------------------------------------------------------------------
# Paired tests over runs / folds, and table markers
# ----------------------------------------------------------------------------------------------
def _check_paired(x, y) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(f"x and y must be 1-D of equal length >= 2; got {a.shape} and {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("x and y must be finite")
    return a, b


def paired_ttest(x, y) -> tuple[float, float]:
    r"""Two-sided paired t-test: t = mean(d) / (sd(d) / sqrt n), d = x - y, n - 1 df.

    Returns (t, p). All-zero differences give (0, 1); constant non-zero differences give (±inf, 0).
    """
    a, b = _check_paired(x, y)
    d = a - b
    n = d.size
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return (0.0, 1.0) if mean == 0.0 else (math.copysign(math.inf, mean), 0.0)
    t = mean / (sd / math.sqrt(n))
    return t, t_sf_two_sided(t, n - 1.0)


def paired_mean_interval(x, y, z: float = 1.96) -> tuple[float, float, float]:
    r"""Mean of the paired differences d = x - y and its normal-approximation interval
    ``mean ± z sd(d) / sqrt n`` (z = 1.96: 95%), e.g. two methods' errors on the same data sets.

    Returns (mean, low, high).
    """
    a, b = _check_paired(x, y)
    d = a - b
    half = z * float(d.std(ddof=1)) / math.sqrt(d.size)
    mean = float(d.mean())
    return mean, mean - half, mean + half


def wilcoxon_signed_rank(x, y, *, continuity: bool = False) -> tuple[float, float]:
    r"""Two-sided Wilcoxon signed-rank test, normal approximation.

    Zero differences are dropped (Wilcoxon's convention, SciPy's `zero_method="wilcox"`); |d| is
    ranked
    with ties averaged; T = min(R+, R-), z = (T - n(n+1)/4 [+ 0.5]) / sqrt(n(n+1)(2n+1)/24 -
    sum(t^3 - t)/48), p = 2 Φ(z) (Demšar 2006, §3.1.3). The approximation is poor for n < ~10 runs.

    Returns (T, p); with no non-zero difference, (0, 1).
    """
    a, b = _check_paired(x, y)
    d = a - b
    d = d[d != 0.0]
    n = d.size
    if n == 0:
        return 0.0, 1.0
    mag = np.abs(d)
    less = (mag[None, :] < mag[:, None]).sum(1)
    equal = (mag[None, :] == mag[:, None]).sum(1)
    ranks = 1.0 + less + (equal - 1) / 2.0
    r_plus = float(ranks[d > 0].sum())
    r_minus = float(ranks[d < 0].sum())
    t_stat = min(r_plus, r_minus)
    mean = n * (n + 1) / 4.0
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float(np.sum(equal.astype(float) ** 2 - 1.0)) / 48.0
    if var <= 0.0:
        return t_stat, 1.0
    z = (t_stat - mean + (0.5 if continuity else 0.0)) / math.sqrt(var)
    return t_stat, min(1.0, 2.0 * normal_sf(-z))


def mean_std(runs, axis: int = -1, ddof: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation (ddof=1 by default, the sample std) along `axis`."""
    arr = np.asarray(runs, dtype=float)
    return arr.mean(axis=axis), arr.std(axis=axis, ddof=ddof)


MARK_WORSE, MARK_TIE, MARK_BEST = 0, 1, 2


class MarkerResult(NamedTuple):
    """`markers[r, j]`: 2 best of row r, 1 not significantly worse than the best, 0 worse."""

    markers: np.ndarray  # (rows, methods) int8
    pvalues: np.ndarray  # (rows, methods) p of best vs j (1 on the best itself)
    best: np.ndarray  # (rows,) index of the best method


def significance_markers(
    runs, *, higher_is_better: bool = False, test: str = "wilcoxon", alpha: float = 0.05
) -> MarkerResult:
    r"""Mark, per table row, the best method and those not significantly worse than it.

    For row r, the best method b has the best mean over runs (lowest index on ties); each other
    method
    j is compared with b by a paired test over the runs/folds (runs must be paired: same split for
    all
    methods), two-sided at level alpha. Marker 2 = best, 1 = p >= alpha (not significantly worse),
    0 = significantly worse.

    Args:
      runs: (rows, methods, runs) results, e.g. error per data set, method and fold.
      higher_is_better: False for errors (the default), True for accuracies.
      test: "wilcoxon" (`wilcoxon_signed_rank`, normal approximation) or "ttest" (`paired_ttest`).
      alpha: significance level.
    """
    arr = np.asarray(runs, dtype=float)
    if arr.ndim != 3 or arr.shape[2] < 2:
        raise ValueError(f"runs must have shape (rows, methods, runs >= 2); got {arr.shape}")
    if test not in ("wilcoxon", "ttest"):
        raise ValueError(f"test must be 'wilcoxon' or 'ttest'; got {test=}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha=}")
    test_fn = wilcoxon_signed_rank if test == "wilcoxon" else paired_ttest
    means = arr.mean(axis=2)
    best = np.argmax(means, axis=1) if higher_is_better else np.argmin(means, axis=1)
    rows, methods = means.shape
    pvalues = np.ones((rows, methods))
    markers = np.zeros((rows, methods), dtype=np.int8)
    for r in range(rows):  # tables are small; clarity beats vectorization here
        for j in range(methods):
            if j == best[r]:
                markers[r, j] = MARK_BEST
                continue
            pvalues[r, j] = test_fn(arr[r, best[r]], arr[r, j])[1]
            markers[r, j] = MARK_TIE if pvalues[r, j] >= alpha else MARK_WORSE
    return MarkerResult(markers, pvalues, best)


def format_mean_std(
    mean,
    std,
    markers=None,
    *,
    digits: int = 3,
    std_digits: int = 2,
    latex: bool = True,
) -> np.ndarray:
    r"""Format cells as "0.076 (±0.03)" (fsNB Tables 1–3), optionally marked.

    With `latex=True` the best cell (marker 2) is wrapped in \textbf{...}, a not-significantly-worse
    cell (marker 1) in \underline{...}, and ± is written $\pm$. With `latex=False`, "**" and "*" are
    appended instead. Returns an array of str with the broadcast shape of the inputs.
    """
    mean_a, std_a = np.broadcast_arrays(np.asarray(mean, float), np.asarray(std, float))
    marks = np.zeros(mean_a.shape, np.int8) if markers is None else np.asarray(markers)
    marks = np.broadcast_to(marks, mean_a.shape)
    pm = "$\\pm$" if latex else "±"
    out = np.empty(mean_a.shape, dtype=object)
    for idx in np.ndindex(mean_a.shape):
        cell = f"{mean_a[idx]:.{digits}f} ({pm}{std_a[idx]:.{std_digits}f})"
        if marks[idx] == MARK_BEST:
            cell = f"\\textbf{{{cell}}}" if latex else cell + " **"
        elif marks[idx] == MARK_TIE:
            cell = f"\\underline{{{cell}}}" if latex else cell + " *"
        out[idx] = cell
    return out.astype(str)
