r"""Discretization of continuous predictors: MODL, Fayyad–Irani MDL, equal width, equal frequency.

All methods return sorted cut points; `apply_cuts` turns values into integer codes with right-closed
bins: the code of x is the number of cut points strictly below x, so bin b is (cuts[b-1], cuts[b]]
(-1 for NaN, the missing code of docs/CONVENTIONS.md). The same rule is used by the bins of the
streaming summaries (`jaxnb.stream.summaries`), so a second level can run on a summary's pre-binned
per-class counts (`modl_cuts_from_counts`, `fayyad_irani_cuts_from_counts`), as in the two-level
estimators of the Stream paper (Salperwyck, Lemaire & Hue, §3).

Departure from STYLE.md ("core functions are pure JAX"): these are eager NumPy functions in float64.
Their outputs have data-dependent length (the number of cuts) and MODL's dynamic programme is a
preprocessing step run once per predictor, so nothing is gained by tracing them.

References:
  M. Boullé (2006). MODL: a Bayes optimal discretization method for continuous attributes. Machine
  Learning 65(1):131–165.
  U. M. Fayyad & K. B. Irani (1993). Multi-interval discretization of continuous-valued attributes
  for classification learning. IJCAI-93, 1022–1027.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import gammaln

__all__ = [
    "Discretizer",
    "apply_cuts",
    "equal_frequency_cuts",
    "equal_width_cuts",
    "fayyad_irani_cuts",
    "fayyad_irani_cuts_from_counts",
    "modl_cost",
    "modl_cuts",
    "modl_cuts_from_counts",
    "modl_cuts_from_counts_many",
    "modl_grouping",
    "modl_grouping_cost",
]

METHODS = ("modl", "fayyad_irani", "equal_width", "equal_frequency")


# --------------------------------------------------------------------------------------------------
# Validation and shared helpers.
# --------------------------------------------------------------------------------------------------
def _check_values(values, name="values"):
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {values.shape}")
    if np.isinf(values).any():
        raise ValueError(f"{name} must be finite (NaN marks a missing value); got +/-inf")
    return values


def _check_weight(sample_weight, shape):
    if sample_weight is None:
        return np.ones(shape)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != shape:
        raise ValueError(f"sample_weight must have shape {shape}; got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("sample_weight must be finite and >= 0")
    return w


def _check_n_classes(n_classes, y):
    """The number of classes J: ``max(y) + 1`` over *all* rows by default (before rows with NaN
    values or zero weight are dropped: J is a property of the problem, not of the rows left)."""
    top = int(y.max()) + 1 if y.size else 1
    if n_classes is None:
        return top
    if isinstance(n_classes, bool) or not isinstance(n_classes, int | np.integer):
        raise TypeError(f"n_classes must be an int; got {n_classes!r}")
    if n_classes < top:
        raise ValueError(f"n_classes={n_classes} but y holds class code {top - 1}")
    return int(n_classes)


def _check_supervised(values, y, sample_weight, n_classes=None):
    """Checked rows with a value and a positive weight, and the number of classes J."""
    values = _check_values(values)
    y = np.asarray(y)
    if y.shape != values.shape:
        raise ValueError(f"y must have shape {values.shape}; got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer) or (y.size and y.min() < 0):
        raise ValueError("y must hold non-negative integer class codes (encode labels first)")
    n_classes = _check_n_classes(n_classes, y)
    w = _check_weight(sample_weight, values.shape)
    keep = ~np.isnan(values) & (w > 0)
    return values[keep], y[keep].astype(np.int64), w[keep], n_classes


def _check_n_bins(n_bins):
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be an integer >= 1; got {n_bins=}")


def _distinct_value_counts(values, y, w, n_classes):
    """Per-class weighted counts of each distinct value (elementary bins) and midpoint cuts."""
    order = np.argsort(values, kind="stable")
    xs, ys, ws = values[order], y[order], w[order]
    distinct, start = np.unique(xs, return_index=True)
    group = np.searchsorted(distinct, xs)
    counts = np.zeros((distinct.size, n_classes))
    np.add.at(counts, (group, ys), ws)
    return _midpoints(distinct), counts


def _midpoints(distinct):
    """Cuts between sorted distinct finite-or-inf values: midpoints, else the lower value.

    Halving before adding keeps the midpoint of two values near the float range finite (the sum
    would overflow to ±inf). A midpoint that rounds onto the upper value, or is not finite, is
    replaced by the lower value, which keeps ``lower <= cut < upper`` (x <= cut -> lower bin)."""
    lower, upper = distinct[:-1], distinct[1:]
    with np.errstate(invalid="ignore"):  # inf / 2 + -inf / 2 -> NaN, replaced below
        mid = lower / 2.0 + upper / 2.0
    ok = np.isfinite(mid) & (mid >= lower) & (mid < upper)
    return np.where(ok, mid, lower)


def _check_counts(cuts, counts):
    cuts = np.asarray(cuts, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or cuts.ndim != 1 or cuts.shape[0] != counts.shape[0] - 1:
        raise ValueError(
            "cuts must be 1-D (m - 1,) and counts 2-D (m, c) per-class counts per bin; "
            f"got cuts {cuts.shape}, counts {counts.shape}"
        )
    if not np.isfinite(counts).all() or (counts < 0).any():
        raise ValueError("counts must be finite and >= 0")
    if np.isnan(cuts).any() or (cuts[1:] < cuts[:-1]).any():  # inf padding edges are fine
        raise ValueError("cuts must be sorted in increasing order with no NaN")
    # empty bins carry no information: each is merged into the preceding non-empty bin, so the
    # candidate cut after a non-empty bin is its own upper edge (trailing padding vanishes)
    nonempty = np.flatnonzero(counts.sum(axis=1) > 0)
    if nonempty.size == 0:
        return np.zeros(0), np.zeros((0, counts.shape[1]))
    return cuts[nonempty[:-1]], counts[nonempty]


def apply_cuts(values, cuts) -> np.ndarray:
    """Integer codes: number of `cuts` strictly below each value (right-closed bins); NaN -> -1."""
    values = np.asarray(values, dtype=np.float64)
    cuts = np.asarray(cuts, dtype=np.float64)
    if cuts.ndim != 1:
        raise ValueError(f"cuts must be 1-D; got shape {cuts.shape}")
    if np.isnan(cuts).any():
        raise ValueError(
            "cuts must not contain NaN (a NaN cut point would put every value in bin 0); pass "
            "sorted real cut points, e.g. from modl_cuts / equal_width_cuts"
        )
    if cuts.size > 1 and (cuts[1:] < cuts[:-1]).any():
        raise ValueError("cuts must be sorted in increasing order")
    codes = np.searchsorted(cuts, values, side="left").astype(np.int32)
    return np.where(np.isnan(values), -1, codes).astype(np.int32)


# --------------------------------------------------------------------------------------------------
# MODL (Boullé 2006a).
# --------------------------------------------------------------------------------------------------
def _interval_cost(counts):
    r"""log C(n_i + J - 1, J - 1) + log (n_i! / prod_j n_ij!) for rows of `counts` (..., J).

    Simplifies to lgamma(n_i + J) - lgamma(J) - sum_j lgamma(n_ij + 1); lgamma makes it defined for
    weighted (non-integer) counts."""
    n_classes = counts.shape[-1]
    n_i = counts.sum(axis=-1)
    return gammaln(n_i + n_classes) - gammaln(n_classes) - gammaln(counts + 1.0).sum(axis=-1)


def _interval_cost_table(counts):
    """`_interval_cost`, with lgamma looked up in a table when the counts are small integers
    (unweighted data): the same values, several times faster than scipy's gammaln."""
    n_classes = counts.shape[-1]
    top = counts.sum(axis=-1).max(initial=0.0) + n_classes
    if top > 1 << 24 or not np.array_equal(counts, np.round(counts)):
        return _interval_cost(counts)
    lg = gammaln(np.arange(int(top) + 1, dtype=np.float64))
    ic = counts.astype(np.int64)
    n_i = ic.sum(axis=-1)
    return lg[n_i + n_classes] - gammaln(n_classes) - lg[ic + 1].sum(axis=-1)


def _pair_interval_costs(cum, hi, lo):
    """`_interval_cost` of the intervals (lo, hi] of prefix counts ``cum`` `(p, M + 1, J)`:
    `(p, len(hi))`. Unweighted counts of fewer than 8 classes take integer prefix differences
    one class at a time and look lgamma up in a table (6x faster than differencing the (p, pairs,
    J) float tensor first; the same values, additions in the same order)."""
    n_classes = cum.shape[-1]
    top = cum[:, -1].sum(axis=-1).max(initial=0.0) + n_classes
    if n_classes >= 8 or top > 1 << 24 or not np.array_equal(cum, np.round(cum)):
        return _interval_cost_table(cum[:, hi, :] - cum[:, lo, :])
    lg = gammaln(np.arange(int(top) + 1, dtype=np.float64))
    ic = np.rint(cum).astype(np.intp)

    def counts_of(j):  # class j's count in each interval
        cj = ic[:, :, j]
        dj = np.take(cj, hi, axis=1)
        dj -= np.take(cj, lo, axis=1)
        return dj

    n_i = counts_of(0)
    terms = np.take(lg, n_i + 1)
    for j in range(1, n_classes):
        dj = counts_of(j)
        n_i += dj
        dj += 1
        terms += np.take(lg, dj)
    n_i += n_classes
    return np.take(lg, n_i) - gammaln(n_classes) - terms


def _prior_cost(n, n_intervals):
    r"""log n + log C(n + I - 1, I - 1)."""
    n_intervals = np.asarray(n_intervals, dtype=np.float64)
    return math.log(n) + gammaln(n + n_intervals) - gammaln(n + 1.0) - gammaln(n_intervals)


def modl_cost(interval_counts) -> float:
    r"""MODL criterion of a discretization given its per-interval class counts `(I, J)`.

    cost = log n + log C(n + I - 1, I - 1) + sum_i log C(n_i + J - 1, J - 1)
           + sum_i log (n_i! / (n_i1! ... n_iJ!))

    (Boullé 2006a, Theorem 1 / Eq. (2)): the negative log of the prior of the number of intervals,
    of their bounds, of the class distribution in each interval, and of the multinomial likelihood.
    Factorials are lgamma(. + 1), so weighted counts are allowed.
    """
    counts = np.asarray(interval_counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] < 1:
        raise ValueError(f"interval_counts must be 2-D (I, J) with I >= 1; got {counts.shape}")
    n = counts.sum()
    if not n > 0:
        raise ValueError("interval_counts must hold a positive total count")
    return float(_prior_cost(n, counts.shape[0]) + _interval_cost(counts).sum())


def _cum_counts(counts):
    """`(..., m + 1, J)` prefix sums of per-bin class counts, a zero row first."""
    zero = np.zeros(counts.shape[:-2] + (1, counts.shape[-1]))
    return np.concatenate([zero, np.cumsum(counts, axis=-2)], axis=-2)


def _unconstrained_bound(cum):
    r"""L = least sum of interval costs over all partitions, whatever their number of intervals.

    `cum` `(..., m + 1, J)`. Every MODL partition into I intervals costs at least
    prior(I) + L, and prior(I) increases with I, so once prior(I) + L exceeds the best total found
    no partition with I or more intervals can win (the stopping rule of the exact DP). O(m²)."""
    m = cum.shape[-2] - 1
    low = np.zeros(cum.shape[:-2] + (m + 1,))
    for k in range(1, m + 1):
        cost_lk = _interval_cost(cum[..., k : k + 1, :] - cum[..., :k, :])  # (..., k)
        low[..., k] = np.min(low[..., :k] + cost_lk, axis=-1)
    return low[..., m]


def _modl_dp(counts):
    """Exact MODL optimum over the m elementary bins `counts` (m, J). Returns (ends, cost).

    DP over (last bin, number of intervals) with O(m) memory per interval count: the reference
    used for long inputs (raw distinct values); `_modl_dp_many` is the faster batched version."""
    m, n_classes = counts.shape
    n = counts.sum()
    cum = _cum_counts(counts)  # (m + 1, J)
    single = _prior_cost(n, 1) + _interval_cost(cum[-1] - cum[0])
    # Lower bounds for I intervals: (a) every interval with n_i >= 1 costs at least log J
    # (log C(n_i + J - 1, J - 1) >= log J, multinomial term >= 0); (b) the least sum of interval
    # costs over all partitions. Once log n + log C(n + I - 1, I - 1) + bound exceeds the
    # one-interval cost, no I' >= I can win.
    integral = np.allclose(counts, np.round(counts)) and (counts.sum(axis=1) >= 1).all()
    per = math.log(n_classes) if integral else 0.0
    low = float(_unconstrained_bound(cum)) if m > 1 else 0.0
    i_max = m
    for i in range(2, m + 1):
        if _prior_cost(n, i) + max(i * per, low) > single:
            i_max = i - 1
            break
    # D[I, k]: least sum of interval costs splitting bins [0, k) into exactly I intervals.
    big = np.inf
    dp = np.full((i_max + 1, m + 1), big)
    arg = np.zeros((i_max + 1, m + 1), dtype=np.int64)
    dp[0, 0] = 0.0
    for k in range(1, m + 1):
        cost_lk = _interval_cost(cum[k][None, :] - cum[:k])  # (k,) interval (l, k]
        cand = dp[:-1, :k] + cost_lk[None, :]  # (i_max, k): from I - 1 intervals ending at l
        arg[1:, k] = np.argmin(cand, axis=1)
        dp[1:, k] = cand[np.arange(i_max), arg[1:, k]]
    totals = _prior_cost(n, np.arange(1, i_max + 1)) + dp[1:, m]
    best_i = int(np.argmin(totals)) + 1
    ends, k = [], m
    for i in range(best_i, 0, -1):
        ends.append(k)
        k = int(arg[i, k])
    return sorted(ends), float(totals[best_i - 1])


# Batched DP: the (m + 1)^2 interval-cost matrix of every predictor of a chunk is held at once.
_BATCH_MAX_BINS = 1024
_BATCH_ELEMENTS = 1 << 23  # elements of the (chunk, m + 1, m + 1, J) difference tensor


def _modl_dp_many(counts_list):
    r"""Exact MODL optimum of several predictors' elementary-bin counts; [(ends, cost), ...].

    The same optimum as `_modl_dp`, organized for speed: predictors are padded with empty bins to
    one width M and processed together; the interval costs C[l, k] of all (l, k] are computed once
    as a `(p, M + 1, M + 1)` matrix; the DP then runs over the number of intervals,
        D_I[k] = min_{l < k} D_{I-1}[l] + C[l, k],
    each step one batched min-plus product, and stops per predictor as soon as
    prior(I) + L > best total so far (L: `_unconstrained_bound`), which for MODL happens a few
    steps after the optimal number of intervals I*. O(p M² (I* + few)) time, vectorized.
    Padding bins lie after each predictor's last bin, so they never enter its D_I[m_j].
    Predictors longer than `_BATCH_MAX_BINS` bins, or whose own tensor exceeds `_BATCH_ELEMENTS`,
    go to `_modl_dp`.
    """
    out = [None] * len(counts_list)
    small = []
    for j, counts in enumerate(counts_list):
        m, n_classes = counts.shape
        # a predictor whose own (m + 1)^2 J tensor exceeds the cap goes alone to the O(m J) DP
        if m > _BATCH_MAX_BINS or (m + 1) ** 2 * n_classes > _BATCH_ELEMENTS:
            out[j] = _modl_dp(counts)
        else:
            small.append(j)
    if not small:
        return out
    small.sort(key=lambda j: counts_list[j].shape[0])
    n_classes = counts_list[small[0]].shape[1]
    start = 0
    while start < len(small):
        width = counts_list[small[start]].shape[0]
        stop = start + 1
        while stop < len(small):  # grow the chunk while the padded tensor stays small
            w = counts_list[small[stop]].shape[0]
            if (stop + 1 - start) * (w + 1) ** 2 * n_classes > _BATCH_ELEMENTS:
                break
            width, stop = w, stop + 1
        idx = small[start:stop]
        for j, res in zip(idx, _modl_dp_chunk([counts_list[j] for j in idx], width), strict=True):
            out[j] = res
        start = stop
    return out


def _modl_dp_chunk(counts_list, width):
    p, n_classes = len(counts_list), counts_list[0].shape[1]
    m = np.array([c.shape[0] for c in counts_list])
    padded = np.zeros((p, width, n_classes))
    for j, c in enumerate(counts_list):
        padded[j, : c.shape[0]] = c
    cum = _cum_counts(padded)  # (p, M + 1, J)
    n = cum[:, -1].sum(axis=-1)  # (p,)
    rows = np.arange(p)
    # C[j, k, l]: cost of the interval made of bins l..k-1 (inf unless l < k), stored with the
    # start l last so that the DP's minimum over l reads contiguous memory
    hi, lo = np.tril_indices(width + 1, -1)
    cost = np.full((p, width + 1, width + 1), np.inf)
    cost[:, hi, lo] = _pair_interval_costs(cum, hi, lo)
    low = _bound_from_cost(cost, m)  # (p,)
    # I = 1
    d = cost[:, :, 0].copy()  # (p, M + 1): D_1[k]
    best_cost = np.array([_prior_cost(n[j], 1) for j in range(p)]) + d[rows, m]
    best_i = np.ones(p, dtype=np.int64)
    args = [None, None]  # args[I][j, k]: the l of the best D_I[k] (I >= 2)
    active = np.flatnonzero(m > 1)
    i = 1
    while active.size:
        i += 1
        prior = np.array([_prior_cost(n[j], i) for j in active])
        keep = (prior + low[active] <= best_cost[active]) & (i <= m[active])
        active = active[keep]
        if not active.size:
            break
        # (a, k, l); every predictor is active in the first steps: no copy of C then
        cand = (cost if active.size == p else cost[active]) + d[active][:, None, :]
        a = np.argmin(cand, axis=2)  # (a, M + 1)
        arg = np.zeros((p, width + 1), dtype=np.int64)
        arg[active] = a
        args.append(arg)
        d_new = np.full_like(d, np.inf)
        d_new[active] = np.take_along_axis(cand, a[:, :, None], axis=2)[:, :, 0]
        d = d_new
        total = prior[keep] + d[active, m[active]]
        better = total < best_cost[active]
        best_cost[active[better]] = total[better]
        best_i[active[better]] = i
    res = []
    for j in range(p):
        ends, k = [], int(m[j])
        for i in range(int(best_i[j]), 0, -1):
            ends.append(k)
            k = int(args[i][j, k]) if i > 1 else 0
        res.append((sorted(ends), float(best_cost[j])))
    return res


def _bound_from_cost(cost, m):
    """`_unconstrained_bound` from a precomputed `(p, M + 1, M + 1)` interval-cost matrix
    C[j, k, l] (`_modl_dp_chunk`'s layout: end k, start l)."""
    p, width = cost.shape[0], cost.shape[1] - 1
    low = np.zeros((p, width + 1))
    for k in range(1, width + 1):
        low[:, k] = np.min(low[:, :k] + cost[:, k, :k], axis=-1)
    return low[np.arange(p), m]


def modl_cuts_from_counts(cuts, counts, *, return_cost: bool = False):
    r"""MODL discretization of pre-binned per-class counts (a summary's `bins()`).

    Args:
      cuts: `(m - 1,)` sorted edges between the m elementary bins (bin b = (cuts[b-1], cuts[b]]).
        A 2-D `(p, m - 1)` array with 3-D `counts` runs each predictor and returns lists.
      counts: `(m, J)` per-class (possibly weighted) counts per bin. Empty bins are merged into the
        preceding non-empty bin first.
      return_cost: also return the optimal MODL cost (`modl_cost` of the chosen intervals).

    Returns:
      The chosen subset of `cuts` (sorted), and the cost if asked. Exact optimum over all
      partitions of the elementary bins, by dynamic programming over (number of intervals, last
      bin): O(m² I*) time, where I* is the largest number of intervals that the lower bound
      prior(I) + (least sum of interval costs over all partitions) cannot rule out.
    """
    cuts_arr = np.asarray(cuts, dtype=np.float64)
    if cuts_arr.ndim == 2:
        counts_arr = np.asarray(counts)
        if counts_arr.ndim != 3 or counts_arr.shape[0] != cuts_arr.shape[0]:
            raise ValueError("batched cuts (p, m - 1) need counts of shape (p, m, c)")
        return modl_cuts_from_counts_many(list(cuts_arr), list(counts_arr), return_cost=return_cost)
    return modl_cuts_from_counts_many([cuts_arr], [counts], return_cost=return_cost)[0]


def modl_cuts_from_counts_many(cuts_list, counts_list, *, return_cost: bool = False):
    r"""`modl_cuts_from_counts` of several predictors at once (ragged: one `(m_j - 1,)` cut array
    and one `(m_j, J)` count array each, the same J); returns a list. The exact DP runs batched
    over the predictors (`_modl_dp_many`)."""
    if len(cuts_list) != len(counts_list):
        raise ValueError("cuts_list and counts_list must have the same length")
    checked = [_check_counts(cu, co) for cu, co in zip(cuts_list, counts_list, strict=True)]
    todo = [j for j, (_, co) in enumerate(checked) if co.shape[0] > 0]
    if len({checked[j][1].shape[1] for j in todo}) > 1:
        raise ValueError("all counts must have the same number of classes")
    dp = _modl_dp_many([checked[j][1] for j in todo])
    out = [(np.zeros(0), float("nan"))] * len(checked)
    for j, (ends, cost) in zip(todo, dp, strict=True):
        chosen = checked[j][0][np.asarray(ends[:-1], dtype=np.int64) - 1]
        out[j] = (chosen, cost)
    return out if return_cost else [c for c, _ in out]


def modl_cuts(values, y, *, sample_weight=None, n_classes=None, return_cost: bool = False):
    r"""MODL supervised discretization of raw values (Boullé 2006a), exact optimum.

    Candidate boundaries are the midpoints between consecutive distinct values (equal values are
    never separated); NaN values and zero weights are ignored. See `modl_cuts_from_counts`.

    Args:
      values: `(n,)` floats. y: `(n,)` integer class codes. sample_weight: optional `(n,)` >= 0.
      n_classes: the number of classes J of the MODL prior (``log C(n_i + J - 1, J - 1)`` per
        interval); default ``max(y) + 1`` over all rows, including rows dropped for a NaN value
        or a zero weight (so a fold that lacks the top class keeps the problem's J).
      return_cost: also return the optimal MODL cost.
    """
    values, y, w, n_classes = _check_supervised(values, y, sample_weight, n_classes)
    if values.size == 0:
        return (np.zeros(0), float("nan")) if return_cost else np.zeros(0)
    cuts, counts = _distinct_value_counts(values, y, w, n_classes)
    return modl_cuts_from_counts(cuts, counts, return_cost=return_cost)


# --------------------------------------------------------------------------------------------------
# MODL value grouping of categorical predictors (Boullé 2005).
# --------------------------------------------------------------------------------------------------
_GROUPING_EXACT_MAX = 8  # Bell(8) = 4140 partitions: enumerated; more values: greedy merges


def _log_bell_partial(n_values, n_groups):
    r"""log B(V, I) = log sum_{k=1}^{I} S(V, k) (partitions of V values into at most I groups),
    Stirling numbers of the second kind by their recurrence in log space; vectorized over I."""
    n_groups = np.asarray(n_groups)
    top = int(n_groups.max(initial=1))
    log_s = np.full(top + 1, -np.inf)  # log S(v, k), k = 0..top, for v = 0 first
    log_s[0] = 0.0
    for _ in range(n_values):
        prev = log_s.copy()
        log_s[0] = -np.inf
        k = np.arange(1, top + 1)
        log_s[1:] = np.logaddexp(np.log(k) + prev[1:], prev[:-1])
    cum = np.logaddexp.accumulate(log_s[1:])  # log B(V, I), I = 1..top
    return cum[n_groups - 1]


def modl_grouping_cost(group_counts, n_values) -> float:
    r"""MODL criterion of a grouping of `n_values` categorical values, given the per-group class
    counts `(I, J)` (Boullé 2005, *A Bayes optimal approach for partitioning the values of
    categorical attributes*, JMLR 6, Eq. (1)):

    cost = log V + log B(V, I) + sum_i log C(n_i + J - 1, J - 1) + sum_i log (n_i! / prod_j n_ij!)

    with B(V, I) the number of partitions of V values into at most I groups."""
    counts = np.asarray(group_counts, dtype=np.float64)
    if counts.ndim != 2 or not 1 <= counts.shape[0] <= n_values:
        raise ValueError(f"group_counts must be (I, J) with 1 <= I <= n_values; got {counts.shape}")
    prior = math.log(n_values) + float(_log_bell_partial(n_values, counts.shape[0]))
    return prior + float(_interval_cost(counts).sum())


@functools.lru_cache(maxsize=16)
def _set_partitions(n):
    """All partitions of n items as restricted growth strings `(Bell(n), n)` (labels 0..I-1)."""
    labels = np.zeros((1, 1), dtype=np.int64)
    for _ in range(1, n):
        top = labels.max(axis=1)
        reps = top + 2  # each string extends with 0..max+1
        rows = np.repeat(labels, reps, axis=0)
        nxt = np.concatenate([np.arange(r) for r in reps])
        labels = np.column_stack([rows, nxt])
    labels.flags.writeable = False
    return labels


def modl_grouping(counts, *, return_cost: bool = False):
    r"""MODL grouping of the values of a categorical predictor from per-value class counts `(V, J)`.

    Returns `(V,)` int group labels (0..I-1, numbered in order of first appearance), and the
    cost (`modl_grouping_cost`) if asked. Values with zero count are put in group 0.
    Exact (all set partitions enumerated) for up to `_GROUPING_EXACT_MAX` observed values;
    beyond, Boullé's greedy bottom-up heuristic: merge the pair of groups that lowers the cost most,
    down to one group, and keep the best grouping met (not guaranteed optimal).
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] < 1:
        raise ValueError(f"counts must be 2-D (V, J) with V >= 1; got {counts.shape}")
    if not np.isfinite(counts).all() or (counts < 0).any():
        raise ValueError("counts must be finite and >= 0")
    seen = np.flatnonzero(counts.sum(axis=1) > 0)
    labels = np.zeros(counts.shape[0], dtype=np.int64)
    if seen.size <= 1:
        cost = modl_grouping_cost(counts.sum(0, keepdims=True), 1) if seen.size else float("nan")
        return (labels, cost) if return_cost else labels
    c, v = counts[seen], seen.size
    if v <= _GROUPING_EXACT_MAX:
        parts = _set_partitions(v)  # (B, V)
        onehot = parts[:, :, None] == np.arange(v)[None, None, :]  # (B, V, I)
        grouped = np.einsum("bvi,vj->bij", onehot.astype(np.float64), c)
        n_groups = parts.max(axis=1) + 1
        total = (
            math.log(v) + _log_bell_partial(v, n_groups) + _interval_cost(grouped).sum(axis=1)
        )  # empty groups cost 0
        best = int(np.argmin(total))
        lab, cost = parts[best], float(total[best])
    else:
        lab, cost = _greedy_grouping(c)
    labels[seen] = lab
    return (labels, cost) if return_cost else labels


def _greedy_grouping(c):
    v = c.shape[0]
    groups = [[i] for i in range(v)]
    g_counts = [c[i] for i in range(v)]
    log_b = _log_bell_partial(v, np.arange(1, v + 1))

    def total(gc):
        return math.log(v) + log_b[len(gc) - 1] + float(_interval_cost(np.array(gc)).sum())

    best_cost, best_groups = total(g_counts), [list(g) for g in groups]
    while len(groups) > 1:
        k = len(groups)
        gc = np.array(g_counts)
        own = _interval_cost(gc)
        a, b = np.triu_indices(k, 1)
        delta = _interval_cost(gc[a] + gc[b]) - own[a] - own[b]  # change of the interval terms
        t = int(np.argmin(delta))
        i, j = int(a[t]), int(b[t])
        groups[i] += groups.pop(j)
        g_counts[i] = g_counts[i] + g_counts.pop(j)
        cost = total(g_counts)
        if cost < best_cost:
            best_cost, best_groups = cost, [list(g) for g in groups]
    lab = np.zeros(v, dtype=np.int64)
    for g, members in enumerate(sorted(best_groups, key=min)):
        lab[members] = g
    return lab, float(best_cost)


# --------------------------------------------------------------------------------------------------
# Fayyad–Irani MDL (1993).
# --------------------------------------------------------------------------------------------------
def _entropy_bits(counts):
    n = counts.sum(axis=-1, keepdims=True)
    p = counts / np.where(n > 0, n, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return terms.sum(axis=-1)


def _fayyad_irani(counts):
    """Recursive MDLP over elementary bins; returns the sorted bin indices after which to cut."""
    cum = np.vstack([np.zeros((1, counts.shape[1])), np.cumsum(counts, axis=0)])
    chosen, stack = [], [(0, counts.shape[0])]
    while stack:
        lo, hi = stack.pop()
        if hi - lo < 2:
            continue
        total = cum[hi] - cum[lo]
        n = total.sum()
        left = cum[lo + 1 : hi] - cum[lo]  # (hi - lo - 1, J): split after bin lo..hi-2
        right = total[None, :] - left
        nl, nr = left.sum(axis=1), right.sum(axis=1)
        ent_s, ent_l, ent_r = _entropy_bits(total), _entropy_bits(left), _entropy_bits(right)
        e = (nl * ent_l + nr * ent_r) / n
        best = int(np.argmin(e))
        gain = ent_s - e[best]
        k = np.count_nonzero(total > 0)
        k1 = np.count_nonzero(left[best] > 0)
        k2 = np.count_nonzero(right[best] > 0)
        # integer power: 3.0**k overflows from k = 647 classes and would forbid every cut
        delta = math.log2(3 ** int(k) - 2) - (k * ent_s - k1 * ent_l[best] - k2 * ent_r[best])
        if n > 1 and gain > (math.log2(n - 1.0) + delta) / n:
            cut = lo + best + 1
            chosen.append(cut)
            stack.extend([(lo, cut), (cut, hi)])
    return sorted(chosen)


def fayyad_irani_cuts_from_counts(cuts, counts) -> np.ndarray:
    r"""Fayyad–Irani MDLP on pre-binned per-class counts `(m, J)` with edges `cuts` `(m - 1,)`.

    Recursively picks the boundary minimizing the class-information entropy
    E(T; S) = |S1|/|S| Ent(S1) + |S2|/|S| Ent(S2) and keeps it iff
    Gain(T; S) > log2(N - 1)/N + Delta(T; S)/N, with
    Delta = log2(3^k - 2) - [k Ent(S) - k1 Ent(S1) - k2 Ent(S2)], entropies in bits, k the number of
    classes present (Fayyad & Irani 1993, §3). N is the (weighted) count of S.
    """
    cand, counts = _check_counts(cuts, counts)
    if counts.shape[0] < 2:
        return np.zeros(0)
    idx = np.asarray(_fayyad_irani(counts), dtype=np.int64)
    return cand[idx - 1]


def fayyad_irani_cuts(values, y, *, sample_weight=None, n_classes=None) -> np.ndarray:
    """Fayyad–Irani MDLP on raw values (midpoints between distinct values are the candidates).

    ``n_classes`` only sizes the count table (MDLP counts the classes present in each interval)."""
    values, y, w, n_classes = _check_supervised(values, y, sample_weight, n_classes)
    if values.size == 0:
        return np.zeros(0)
    cuts, counts = _distinct_value_counts(values, y, w, n_classes)
    return fayyad_irani_cuts_from_counts(cuts, counts)


# --------------------------------------------------------------------------------------------------
# Unsupervised.
# --------------------------------------------------------------------------------------------------
def equal_width_cuts(values, n_bins: int, *, sample_weight=None) -> np.ndarray:
    """`n_bins - 1` cuts lo + (hi - lo) b / n_bins over the observed range (none if constant).

    With ``sample_weight``, rows of weight 0 (e.g. outside a fold) do not count towards the range;
    positive weights do not matter."""
    values = _check_values(values)
    _check_n_bins(n_bins)
    w = _check_weight(sample_weight, values.shape)
    values = values[~np.isnan(values) & (w > 0)]
    if values.size == 0 or values.min() == values.max():
        return np.zeros(0)
    lo, hi = values.min(), values.max()
    frac = np.arange(1, n_bins) / n_bins
    with np.errstate(over="ignore"):
        width = hi - lo
    if np.isfinite(width):
        return lo + width * frac
    return lo * (1.0 - frac) + hi * frac  # a range wider than the float maximum


def equal_frequency_cuts(values, n_bins: int, *, sample_weight=None) -> np.ndarray:
    """Cuts at the order statistics x_(ceil(b n / n_bins)), b = 1..n_bins - 1, deduplicated.

    With right-closed bins, bin b holds the ranks up to ceil((b + 1) n / n_bins); ties can merge
    bins, so fewer than `n_bins` bins may come back. With ``sample_weight`` the cut b is the
    smallest value whose cumulative weight fraction reaches b / n_bins (the rule of
    `jaxnb.methods.filters.equal_frequency_codes`; unit weights give the order statistics above);
    rows of weight 0 do not move the cuts."""
    values = _check_values(values)
    _check_n_bins(n_bins)
    if sample_weight is None:
        xs = np.sort(values[~np.isnan(values)])
        if xs.size == 0:
            return np.zeros(0)
        ranks = np.ceil(np.arange(1, n_bins) * xs.size / n_bins).astype(np.int64)
        cuts = np.unique(xs[np.clip(ranks - 1, 0, xs.size - 1)])
        return cuts[cuts < xs[-1]]
    w = _check_weight(sample_weight, values.shape)
    keep = ~np.isnan(values) & (w > 0)
    order = np.argsort(values[keep], kind="stable")
    xs, ws = values[keep][order], w[keep][order]
    if xs.size == 0:
        return np.zeros(0)
    cw = np.cumsum(ws)
    cw = cw / cw[-1]
    # the same tolerance as equal_frequency_codes: b / n_bins in floating point must not miss an
    # exact cumulative fraction
    pos = np.searchsorted(cw, np.arange(1, n_bins) / n_bins - 1e-12, side="left")
    cuts = np.unique(xs[np.clip(pos, 0, xs.size - 1)])
    return cuts[cuts < xs[-1]]


# --------------------------------------------------------------------------------------------------
# Estimator.
# --------------------------------------------------------------------------------------------------
def _float_table(X, name: str = "X") -> np.ndarray:
    """``X`` as a 2-D float64 array of real numbers (NaN = missing), or a ValueError/TypeError
    naming the problem: complex values lost their imaginary part, and text raised NumPy's bare
    "could not convert string to float"."""
    arr = np.asarray(X)
    if arr.dtype.kind == "c":
        raise ValueError(
            f"Complex data not supported: {name} holds complex numbers; the cuts are on real values"
        )
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"{name} must hold numbers (NaN for a missing value); got dtype {arr.dtype} ({e}). "
                "Text columns are categories already: code them instead of discretizing them"
            ) from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n, p); got shape {arr.shape}")
    return arr.astype(np.float64)


class Discretizer:
    r"""Per-column discretization of a 2-D array.

    Args:
      method: "modl" (supervised, parameter-free), "fayyad_irani" (supervised), "equal_width" or
        "equal_frequency" (unsupervised, use `n_bins`).
      n_bins: number of bins of the unsupervised methods (ignored by the supervised ones).

    Attributes (after `fit`):
      cuts_: list of `(b_i - 1,)` cut arrays, one per column.
      n_bins_: `(p,)` number of bins per column (the `n_states` of the codes).
      classes_: the distinct labels of ``y`` (supervised methods only).
    """

    def __init__(self, method: str = "modl", n_bins: int = 10):
        self.method = method
        self.n_bins = n_bins

    def __repr__(self) -> str:
        defaults = {"method": "modl", "n_bins": 10}
        changed = [f"{k}={v!r}" for k, v in self.get_params().items() if v != defaults[k]]
        return f"Discretizer({', '.join(changed)})"

    def get_params(self, deep: bool = True) -> dict:
        """The constructor parameters (scikit-learn's estimator protocol)."""
        return {"method": self.method, "n_bins": self.n_bins}

    def set_params(self, **params) -> Discretizer:
        """Set constructor parameters by name (``method``, ``n_bins``); returns ``self``."""
        for key, value in params.items():
            if key not in ("method", "n_bins"):
                raise ValueError(f"unknown parameter {key!r}; expected 'method' or 'n_bins'")
            setattr(self, key, value)
        return self

    def fit(self, X, y=None, sample_weight=None) -> Discretizer:
        """Cut points of every column of ``X`` (n, p) of real numbers; NaN values are ignored.

        ``y`` (n,), class labels of any kind (integers, strings, ...), is required by the
        supervised methods; their number of classes J is the number of distinct labels in ``y``
        (``classes_``), the same for every column. To keep a problem's J on a subset of its rows
        that lacks a class (a CV fold), call `modl_cuts` / `fayyad_irani_cuts` with class codes
        and ``n_classes``. ``sample_weight`` (n,) >= 0 weights every method: the supervised
        criteria count weighted rows, ``equal_frequency`` takes weighted quantiles and
        ``equal_width`` the range of the rows with a positive weight.
        """
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got method={self.method!r}")
        X = _float_table(X)
        supervised = self.method in ("modl", "fayyad_irani")
        if supervised and y is None:
            raise ValueError(f"y is required for the supervised method {self.method!r}")
        if not supervised:
            _check_n_bins(self.n_bins)
        _check_weight(sample_weight, X.shape[:1])
        n_classes = None
        self.__dict__.pop("classes_", None)  # a refit without labels keeps none of the last
        if supervised:
            from .data import encode_labels

            # labels of any kind, as an estimator's fit takes them: J is the number of distinct
            # labels, so labels 1 and 2 give the cuts of 0 and 1 (taken as codes, 1 and 2 had
            # J = 3 and a costlier MODL prior); one J for every column, counted over all rows
            # (a column's NaN rows must not change the MODL prior)
            self.classes_, y = encode_labels(y, n_samples=X.shape[0])
            n_classes = len(self.classes_)
        cuts = []
        for col in X.T:
            if self.method == "modl":
                cuts.append(modl_cuts(col, y, sample_weight=sample_weight, n_classes=n_classes))
            elif self.method == "fayyad_irani":
                cuts.append(
                    fayyad_irani_cuts(col, y, sample_weight=sample_weight, n_classes=n_classes)
                )
            elif self.method == "equal_width":
                cuts.append(equal_width_cuts(col, self.n_bins, sample_weight=sample_weight))
            else:
                cuts.append(equal_frequency_cuts(col, self.n_bins, sample_weight=sample_weight))
        self.cuts_ = cuts
        self.n_bins_ = np.array([c.size + 1 for c in cuts], dtype=np.int64)
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X) -> np.ndarray:
        """`(n, p)` int32 codes in [0, n_bins_[i]); NaN -> -1."""
        if not hasattr(self, "cuts_"):
            raise ValueError("this Discretizer is not fitted; call fit(X, y) first")
        X = _float_table(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n, {self.n_features_in_}); got {X.shape}")
        return np.stack([apply_cuts(col, c) for col, c in zip(X.T, self.cuts_, strict=True)], 1)

    def fit_transform(self, X, y=None, sample_weight=None) -> np.ndarray:
        """`fit` then `transform` of the same ``X``: its `(n, p)` int32 codes."""
        return self.fit(X, y, sample_weight).transform(X)
