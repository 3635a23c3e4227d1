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


def _check_supervised(values, y, sample_weight):
    values = _check_values(values)
    y = np.asarray(y)
    if y.shape != values.shape:
        raise ValueError(f"y must have shape {values.shape}; got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer) or (y.size and y.min() < 0):
        raise ValueError("y must hold non-negative integer class codes (encode labels first)")
    if sample_weight is None:
        w = np.ones(values.shape)
    else:
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.shape != values.shape:
            raise ValueError(f"sample_weight must have shape {values.shape}; got {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("sample_weight must be finite and >= 0")
    keep = ~np.isnan(values) & (w > 0)
    return values[keep], y[keep].astype(np.int64), w[keep]


def _check_n_bins(n_bins):
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be an integer >= 1; got {n_bins=}")


def _distinct_value_counts(values, y, w):
    """Per-class weighted counts of each distinct value (elementary bins) and midpoint cuts."""
    n_classes = int(y.max()) + 1 if y.size else 1
    order = np.argsort(values, kind="stable")
    xs, ys, ws = values[order], y[order], w[order]
    distinct, start = np.unique(xs, return_index=True)
    group = np.searchsorted(distinct, xs)
    counts = np.zeros((distinct.size, n_classes))
    np.add.at(counts, (group, ys), ws)
    cuts = (distinct[:-1] + distinct[1:]) / 2.0
    # the midpoint of two adjacent floats may round onto the upper one; keep x <= cut -> lower bin
    cuts = np.where(cuts >= distinct[1:], distinct[:-1], cuts)
    return cuts, counts


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


def _modl_dp(counts):
    """Exact MODL optimum over the m elementary bins `counts` (m, J). Returns (ends, cost)."""
    m, n_classes = counts.shape
    n = counts.sum()
    cum = np.vstack([np.zeros((1, n_classes)), np.cumsum(counts, axis=0)])  # (m + 1, J)
    single = _prior_cost(n, 1) + _interval_cost(cum[-1] - cum[0])
    # Lower bound for I intervals: every interval with n_i >= 1 costs at least log J
    # (log C(n_i + J - 1, J - 1) >= log J, multinomial term >= 0), so once
    # log n + log C(n + I - 1, I - 1) + I * per exceeds the one-interval cost, no I' >= I can win.
    integral = np.allclose(counts, np.round(counts)) and (counts.sum(axis=1) >= 1).all()
    per = math.log(n_classes) if integral else 0.0
    i_max = m
    for i in range(2, m + 1):
        if _prior_cost(n, i) + i * per > single:
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
      bin): O(m² I*) time, O((I* + 1) m) memory, where I* <= m is the largest number of intervals
      that a lower bound cannot rule out.
    """
    cuts_arr = np.asarray(cuts, dtype=np.float64)
    if cuts_arr.ndim == 2:
        counts_arr = np.asarray(counts)
        if counts_arr.ndim != 3 or counts_arr.shape[0] != cuts_arr.shape[0]:
            raise ValueError("batched cuts (p, m - 1) need counts of shape (p, m, c)")
        out = [
            modl_cuts_from_counts(c, k, return_cost=return_cost)
            for c, k in zip(cuts_arr, counts_arr, strict=True)
        ]
        return out
    cand, counts = _check_counts(cuts, counts)
    if counts.shape[0] == 0:
        return (np.zeros(0), float("nan")) if return_cost else np.zeros(0)
    ends, cost = _modl_dp(counts)
    chosen = cand[np.asarray(ends[:-1], dtype=np.int64) - 1]
    return (chosen, cost) if return_cost else chosen


def modl_cuts(values, y, *, sample_weight=None, return_cost: bool = False):
    r"""MODL supervised discretization of raw values (Boullé 2006a), exact optimum.

    Candidate boundaries are the midpoints between consecutive distinct values (equal values are
    never separated); NaN values and zero weights are ignored. See `modl_cuts_from_counts`.

    Args:
      values: `(n,)` floats. y: `(n,)` integer class codes. sample_weight: optional `(n,)` >= 0.
      return_cost: also return the optimal MODL cost.
    """
    values, y, w = _check_supervised(values, y, sample_weight)
    if values.size == 0:
        return (np.zeros(0), float("nan")) if return_cost else np.zeros(0)
    cuts, counts = _distinct_value_counts(values, y, w)
    return modl_cuts_from_counts(cuts, counts, return_cost=return_cost)


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
        delta = math.log2(3.0**k - 2.0) - (k * ent_s - k1 * ent_l[best] - k2 * ent_r[best])
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


def fayyad_irani_cuts(values, y, *, sample_weight=None) -> np.ndarray:
    """Fayyad–Irani MDLP on raw values (midpoints between distinct values are the candidates)."""
    values, y, w = _check_supervised(values, y, sample_weight)
    if values.size == 0:
        return np.zeros(0)
    cuts, counts = _distinct_value_counts(values, y, w)
    return fayyad_irani_cuts_from_counts(cuts, counts)


# --------------------------------------------------------------------------------------------------
# Unsupervised.
# --------------------------------------------------------------------------------------------------
def equal_width_cuts(values, n_bins: int) -> np.ndarray:
    """`n_bins - 1` cuts lo + (hi - lo) b / n_bins over the observed range (none if constant)."""
    values = _check_values(values)
    _check_n_bins(n_bins)
    values = values[~np.isnan(values)]
    if values.size == 0 or values.min() == values.max():
        return np.zeros(0)
    lo, hi = values.min(), values.max()
    return lo + (hi - lo) * np.arange(1, n_bins) / n_bins


def equal_frequency_cuts(values, n_bins: int) -> np.ndarray:
    """Cuts at the order statistics x_(ceil(b n / n_bins)), b = 1..n_bins - 1, deduplicated.

    With right-closed bins, bin b holds the ranks up to ceil((b + 1) n / n_bins); ties can merge
    bins, so fewer than `n_bins` bins may come back."""
    values = _check_values(values)
    _check_n_bins(n_bins)
    xs = np.sort(values[~np.isnan(values)])
    if xs.size == 0:
        return np.zeros(0)
    ranks = np.ceil(np.arange(1, n_bins) * xs.size / n_bins).astype(np.int64)
    cuts = np.unique(xs[np.clip(ranks - 1, 0, xs.size - 1)])
    return cuts[cuts < xs[-1]]


# --------------------------------------------------------------------------------------------------
# Estimator.
# --------------------------------------------------------------------------------------------------
class Discretizer:
    r"""Per-column discretization of a 2-D array.

    Args:
      method: "modl" (supervised, parameter-free), "fayyad_irani" (supervised), "equal_width" or
        "equal_frequency" (unsupervised, use `n_bins`).
      n_bins: number of bins of the unsupervised methods (ignored by the supervised ones).

    Attributes (after `fit`):
      cuts_: list of `(b_i - 1,)` cut arrays, one per column.
      n_bins_: `(p,)` number of bins per column (the `n_states` of the codes).
    """

    def __init__(self, method: str = "modl", n_bins: int = 10):
        self.method = method
        self.n_bins = n_bins

    def get_params(self, deep: bool = True) -> dict:
        return {"method": self.method, "n_bins": self.n_bins}

    def set_params(self, **params) -> Discretizer:
        for key, value in params.items():
            if key not in ("method", "n_bins"):
                raise ValueError(f"unknown parameter {key!r}; expected 'method' or 'n_bins'")
            setattr(self, key, value)
        return self

    def fit(self, X, y=None, sample_weight=None) -> Discretizer:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got method={self.method!r}")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n, p); got shape {X.shape}")
        supervised = self.method in ("modl", "fayyad_irani")
        if supervised and y is None:
            raise ValueError(f"y is required for the supervised method {self.method!r}")
        if not supervised:
            _check_n_bins(self.n_bins)
        cuts = []
        for col in X.T:
            if self.method == "modl":
                cuts.append(modl_cuts(col, y, sample_weight=sample_weight))
            elif self.method == "fayyad_irani":
                cuts.append(fayyad_irani_cuts(col, y, sample_weight=sample_weight))
            elif self.method == "equal_width":
                cuts.append(equal_width_cuts(col, self.n_bins))
            else:
                cuts.append(equal_frequency_cuts(col, self.n_bins))
        self.cuts_ = cuts
        self.n_bins_ = np.array([c.size + 1 for c in cuts], dtype=np.int64)
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X) -> np.ndarray:
        """`(n, p)` int32 codes in [0, n_bins_[i]); NaN -> -1."""
        if not hasattr(self, "cuts_"):
            raise ValueError("this Discretizer is not fitted; call fit(X, y) first")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n, {self.n_features_in_}); got {X.shape}")
        return np.stack([apply_cuts(col, c) for col, c in zip(X.T, self.cuts_, strict=True)], 1)

    def fit_transform(self, X, y=None, sample_weight=None) -> np.ndarray:
        return self.fit(X, y, sample_weight).transform(X)
