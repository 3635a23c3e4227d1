r"""Per-class online summaries of predictors at memory bounded independently of the stream length.

The first level of the two-level conditional density estimators of Salperwyck, Lemaire & Hue,
*Incremental weighted naive Bayes classifiers for data stream* (Stream paper, §3): every summary
keeps one fixed-shape record per predictor, all predictors are updated together by one jit-compiled
function, and the arrays never grow with the number of examples seen.

* `GaussianSummary`: per class count, mean and M2 (Stream §3.3), merged with Chan et al.'s formula.
* `GKClass`: Greenwald–Khanna (2001) epsilon-approximate quantile summary whose tuples also carry
  per-class counts (Stream §3.2), in a fixed-capacity array.
* `CPiD`: the first layer of Gama & Pinto's (2006) PiD kept at a constant number of intervals by
  merging the two adjacent intervals with the lowest total count after every split (Stream §3.1).
* `CategoricalCounts`: exact per-class counts of discrete predictors (the flattened `(K, c)` layout
  of docs/CONVENTIONS.md).

Every numeric summary offers `bins()` -> (cut points, per-class counts per bin), the input of a
second level such as MODL (`jaxnb.discretize.modl_cuts_from_counts`), and `log_prob(values)` ->
`L[r, i, j]`, shape `(n, p, c)`, the naive Bayes log-contribution of docs/CONVENTIONS.md (NaN, i.e.
a missing value, contributes 0). Bins are right-closed: bin b is `(cuts[b-1], cuts[b]]`, the code
of x is the number of cut points strictly below x (`jaxnb.discretize.apply_cuts` uses the same
rule).

Summaries are immutable `eqx.Module`s; `update` returns a new summary. The public methods validate
their input eagerly in NumPy (`check_input=True`); the jitted cores (`update_gaussian`,
`update_gkclass`, `update_cpid`, ...) skip that for speed. Counts of the quantile summaries are
int32, so a summary holds at most 2**31 - 1 examples.
"""

from __future__ import annotations

import math
import numbers
from functools import partial

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._batch import size_bucket
from .._checks import check_int, check_real
from .._dtypes import float_dtype
from .._matmul import matmul
from ..suffstats import pooled_moments

__all__ = [
    "CPiD",
    "CategoricalCounts",
    "GKClass",
    "GaussianSummary",
    "gk_capacity_for_epsilon",
    "log_prob_gaussian",
    "merge_gaussian",
    "update_cpid",
    "update_gaussian",
    "update_gkclass",
]

_LOG_2PI = math.log(2.0 * math.pi)


# --------------------------------------------------------------------------------------------------
# Eager validation (NumPy, before any jit).
# --------------------------------------------------------------------------------------------------
def _check_batch(values, y, n_predictors, n_classes, weight=None, *, name="values"):
    values = np.asarray(values)
    if values.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n, p); got shape {values.shape}")
    if values.shape[1] != n_predictors:
        raise ValueError(
            f"{name} must have {n_predictors} columns (one per predictor); got {values.shape[1]}"
        )
    if values.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be real numbers; got dtype {values.dtype}")
    if not np.issubdtype(values.dtype, np.floating):
        values = values.astype(np.float64)
    if np.isinf(values).any():
        raise ValueError(f"{name} must be finite (NaN marks a missing value); got +/-inf")
    y = np.asarray(y)
    if y.shape != (values.shape[0],):
        raise ValueError(f"y must have shape ({values.shape[0]},); got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"y must hold integer class codes; got dtype {y.dtype}")
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"y codes must lie in [0, {n_classes}); got range [{y.min()}, {y.max()}]")
    if weight is not None:
        weight = np.asarray(weight, dtype=np.float64)
        if weight.shape != y.shape:
            raise ValueError(f"weight must have shape {y.shape}; got {weight.shape}")
        if not np.isfinite(weight).all() or (weight < 0).any():
            raise ValueError("weight must be finite and >= 0")
    return values, y.astype(np.int32), weight


def _check_positive_int(name, value, minimum=1):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {name}={value!r}")


def _filled(shape, value, dtype):
    """A new device array of ``shape`` filled with ``value``, built in NumPy and put on the device:
    an eager `jnp.zeros` / `jnp.full` compiles a small program per shape and dtype on its first
    call (~20 ms each, three to five on an online estimator's first fit)."""
    return jax.device_put(np.full(shape, value, dtype))


def _on_host(*arrays) -> bool:
    """Whether a batch is host data (padded to a bucket); device arrays, and tracers inside a
    caller's jit, go to the update as they are."""
    return not any(isinstance(a, jax.Array) for a in arrays)


def _host_padded(rows: int, values, y, weight=None, *, fill=np.nan, value_dtype=None):
    """A host batch padded to ``rows`` rows: ``fill`` values (NaN: missing, skipped; -1 for codes),
    class 0 and weight 0, as NumPy arrays, which the jitted update takes without a staging
    program per shape (`jnp.asarray` compiles one)."""
    values = _pad_to(np.asarray(values, value_dtype), rows, fill)
    y = _pad_to(np.asarray(y, np.int32), rows, 0)
    weight = None if weight is None else _pad_to(np.asarray(weight, np.float64), rows, 0)
    return values, y, weight


def _pad_to(a, rows, fill):
    """Host array ``a`` (n, ...) followed by rows - n rows of ``fill`` (``a`` if n >= rows)."""
    n = a.shape[0]
    if rows <= n:
        return a
    return np.concatenate([a, np.full((rows - n,) + a.shape[1:], fill, a.dtype)])


def _weighted_rows(values, y, weight, dtype, value_dtype, fill):
    """The (values, y, weight) arguments of a weighted jitted update (Gaussian, categorical):
    device arrays as they are (weight 1 if None); a host batch padded to a bucket of row counts
    (`_batch.size_bucket`) with ``fill`` values of weight 0 (the same summary bit for bit, tests
    check it), as NumPy."""
    if not _on_host(values, y, weight):
        weight = jnp.ones(jnp.shape(y), dtype) if weight is None else jnp.asarray(weight, dtype)
        return jnp.asarray(values, value_dtype), jnp.asarray(y), weight
    n = np.shape(y)[0]
    weight = np.ones(n) if weight is None else weight
    values, y, weight = _host_padded(
        size_bucket(n), values, y, weight, fill=fill, value_dtype=value_dtype
    )
    return values, y, weight.astype(dtype)


def _chunked_update(update, state, values, y, dtype):
    """``update(state, values, y)`` of a summary that scans chunks of ``state.chunk_size`` rows
    (GKClass, CPiD). A host batch is padded with missing rows to a bucket of whole chunks: chunks
    of missing rows after the batch change nothing (tests check it bit for bit), and nearby batch
    sizes share one program. Device arrays go in as they are."""
    if not _on_host(values, y):
        return update(state, jnp.asarray(values, dtype), jnp.asarray(y))
    chunks = size_bucket(-(-np.shape(y)[0] // state.chunk_size), granule=1)
    values, y, _ = _host_padded(chunks * state.chunk_size, values, y, value_dtype=dtype)
    return update(state, values, y)


def _float_dtype(dtype):
    """The summary's float dtype: JAX's default float, or a floating ``dtype`` (an integer dtype
    would truncate every running mean / value)."""
    if dtype is None:
        return float_dtype()
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"dtype must be a floating dtype (e.g. jnp.float32); got {dtype!r}")
    return dtype


def _query(density, state, values, dtype, *args, fill=np.nan):
    """``density(state, rows, *args)`` of query rows (n, p) -> (n, ...).

    Host rows go in as a NumPy array of ``dtype`` (a jitted call takes it without the staging
    program per shape that `jnp.asarray` compiles), padded to a bucket of row counts
    (`_batch.size_bucket`) with ``fill`` rows (missing: NaN values, code -1), so nearby query sizes
    share one compiled program; the padded rows are cut off on the host and the result is put
    back on the device. Device arrays and tracers go in as they are."""
    if not _on_host(values):
        return density(state, jnp.asarray(values, dtype), *args)
    values = np.asarray(values, jax.dtypes.canonicalize_dtype(dtype))
    n = values.shape[0]
    rows = size_bucket(n)
    if rows == n:
        return density(state, values, *args)
    out = density(state, _pad_to(values, rows, fill), *args)
    return jax.device_put(np.asarray(out)[:n])


def _check_query(values, n_predictors, name="values"):
    values = np.asarray(values)
    if values.ndim != 2 or values.shape[1] != n_predictors:
        raise ValueError(f"{name} must have shape (n, {n_predictors}); got {values.shape}")
    if values.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be real numbers; got dtype {values.dtype}")
    return values


def _check_codes(codes, n_states):
    """Concrete discrete codes: whole numbers in [-1, n_states[i]) (-1 = missing) -> int32."""
    if np.issubdtype(codes.dtype, np.floating):
        if not (np.isfinite(codes) & (codes == np.round(codes))).all():
            raise ValueError(
                "codes must be whole numbers in [-1, n_states[i]) (-1 marks a missing value); got "
                "NaN or fractional entries"
            )
    bad = (codes < -1) | (codes >= np.asarray(n_states)[None, :])
    if bad.any():
        i = int(np.argmax(bad.any(axis=0)))
        raise ValueError(
            f"codes must lie in [-1, n_states[i]) (-1 = missing); column {i} has "
            f"{codes[:, i][bad[:, i]][0]} with n_states[{i}]={n_states[i]}"
        )
    return codes.astype(np.int32)


# --------------------------------------------------------------------------------------------------
# Gaussian summary (Stream §3.3).
# --------------------------------------------------------------------------------------------------
class GaussianSummary(eqx.Module):
    r"""Per-class weighted count, mean and M2 of every numeric predictor.

    Attributes:
      count: `(c, p)` weighted count per class (missing values are not counted).
      mean: `(c, p)` per-class weighted mean.
      m2: `(c, p)` per-class weighted sum of squared deviations from the class mean.

    The batch update computes the batch's own count/mean/M2 by two passes over the batch and merges
    it into the running summary with Chan, Golub & LeVeque's (1979) pairwise formula
    (`merge_gaussian`); with batches of one row this is exactly Welford's (1962) update. Memory is
    3·c·p numbers whatever the stream length.
    """

    count: jax.Array
    mean: jax.Array
    m2: jax.Array

    @classmethod
    def init(cls, n_classes: int, n_predictors: int, dtype=None) -> GaussianSummary:
        """Empty summary for `n_classes` classes and `n_predictors` numeric predictors."""
        _check_positive_int("n_classes", n_classes, 2)
        _check_positive_int("n_predictors", n_predictors)
        dtype = _float_dtype(dtype)
        z = _filled((n_classes, n_predictors), 0, dtype)
        return cls(z, z, z)

    @property
    def n_classes(self) -> int:
        return self.count.shape[0]

    @property
    def n_predictors(self) -> int:
        return self.count.shape[1]

    @property
    def variance(self) -> jax.Array:
        """`(c, p)` per-class MLE variance M2 / count (0 where the count is 0)."""
        return jnp.where(self.count > 0, self.m2 / jnp.where(self.count > 0, self.count, 1), 0.0)

    def update(self, values, y, weight=None, *, check_input: bool = True) -> GaussianSummary:
        """Adds a batch `values` `(n, p)` with class codes `y` `(n,)` and optional weights.

        A host (NumPy) batch is padded with weight-0 missing rows to a bucket of sizes
        (`_batch.size_bucket`: 8 per octave), so batches of nearby sizes share one compiled
        update; device arrays go in as they are (one program per shape). The result is the same
        bit for bit."""
        if check_input:
            values, y, weight = _check_batch(values, y, self.n_predictors, self.n_classes, weight)
        dtype = self.mean.dtype
        # padded rows: missing values, weight 0
        return update_gaussian(self, *_weighted_rows(values, y, weight, dtype, dtype, np.nan))

    def merge(self, other: GaussianSummary) -> GaussianSummary:
        """Summary of the union of both streams (Chan et al.)."""
        if not isinstance(other, GaussianSummary) or other.count.shape != self.count.shape:
            raise ValueError("other must be a GaussianSummary of the same shape")
        if other.mean.dtype != self.mean.dtype:
            raise TypeError(
                f"other has dtype {other.mean.dtype}, this summary {self.mean.dtype}; build both "
                "with the same init(..., dtype=)"
            )
        return merge_gaussian(self, other)

    def log_prob(
        self,
        values,
        *,
        var_smoothing: float = 1e-9,
        var_floor: float = 0.0,
        check_input: bool = True,
    ) -> jax.Array:
        r"""`(n, p, c)` Gaussian log density log N(x_i; mean_ij, v_ij) of every predictor i and
        class j.

        v_ij = M2_ij / N_ij + `var_smoothing` · s²_i, with s²_i the pooled variance of predictor
        i over all classes: the variance floor of `jaxnb.NaiveBayes` and `jaxnb.OnlineNB`,
        relative to the column's own scale, so a predictor in small units (spread 1e-5, variance
        1e-10) keeps its variances (an absolute floor of 1e-9, this method's default until
        2026-11-29, swamped them and flattened the class differences). `var_floor` (default 0)
        adds an absolute lower bound on v_ij. A class not seen yet uses the pooled mean and
        variance; a predictor without spread so far (constant) gets the floor 1, as in
        `NaiveBayes`. Missing (NaN) values, and a predictor with no value seen yet, contribute 0.
        Equal to `jaxnb.stream.online.log_contributions` (what `OnlineNB` scores with).
        """
        if check_input:
            check_real("var_smoothing", var_smoothing, low=0)
            check_real("var_floor", var_floor, low=0)
            values = _check_query(values, self.n_predictors)
            if np.isinf(values).any():  # every class would score -inf: NaN posteriors
                raise ValueError("values must be finite (NaN marks a missing value); got +/-inf")
        dt = self.mean.dtype
        scalars = np.asarray(var_smoothing, dt), np.asarray(var_floor, dt)
        return _query(_log_prob_gaussian_jit, self, values, dt, *scalars)

    def bins(self, n_bins: int = 100) -> tuple[jax.Array, jax.Array]:
        r"""Expected per-class counts on an equal-width grid.

        The Gaussian summary has no bins of its own; this discretizes the fitted per-class
        normals: `n_bins - 1` equal-width cut points spanning
        [min_j(mean_j - 4 sd_j), max_j(mean_j + 4 sd_j)] and expected counts
        count_j · (Phi(upper) - Phi(lower)) per bin (open outer bins), so that a
        second level (MODL) can run on it as on the other summaries. Counts are not integers.

        Returns:
          cuts `(p, n_bins - 1)` and counts `(p, n_bins, c)`.
        """
        _check_positive_int("n_bins", n_bins, 2)
        return _bins_gaussian(self, n_bins)


@jax.jit
def merge_gaussian(a: GaussianSummary, b: GaussianSummary) -> GaussianSummary:
    r"""Chan et al. (1979) merge: n = n_a + n_b, d = mean_b - mean_a,
    mean = mean_a + d n_b / n, M2 = M2_a + M2_b + d² n_a n_b / n (entries with n = 0 stay 0)."""
    n = a.count + b.count
    safe_n = jnp.where(n > 0, n, 1)
    delta = b.mean - a.mean
    mean = jnp.where(n > 0, a.mean + delta * (b.count / safe_n), 0.0)
    m2 = a.m2 + b.m2 + delta * delta * (a.count * b.count / safe_n)
    return GaussianSummary(n, mean, jnp.where(n > 0, m2, 0.0))


@jax.jit
def update_gaussian(state: GaussianSummary, values, y, weight) -> GaussianSummary:
    """Jitted core of `GaussianSummary.update` (no validation): two-pass batch stats, then merge.

    Sums are taken about a pivot per class and column (the running mean once there is one, else
    the value in the class's first row of the batch, else the column's first present value), and
    the second pass corrects both the mean (+ Σ w d / n) and M2 (Σ w d² − (Σ w d)² / n), so
    float32 stays accurate on large batches of offset data (a plain float32 sum of 65536 values
    near 1e6 put the mean 47 off and the variance at 2228, not 1)."""
    c, p = state.count.shape
    present = ~jnp.isnan(values)
    w = jax.nn.one_hot(y, c, dtype=values.dtype) * weight[:, None]  # (n, c)
    wp = present.astype(values.dtype)
    count = matmul(w.T, wp)  # (c, p)
    safe = jnp.where(count > 0, count, 1)
    cols = jnp.arange(p)
    first = jnp.argmax(present, axis=0)  # (p,) first present row of each column
    col_pivot = jnp.where(jnp.any(present, axis=0), values[first, cols], 0.0)
    first_of_class = jnp.argmax(y[:, None] == jnp.arange(c)[None, :], axis=0)  # (c,)
    class_pivot = values[first_of_class]  # (c, p); NaN where that row misses the value
    pivot = jnp.where(jnp.isnan(class_pivot), col_pivot[None, :], class_pivot)
    pivot = jnp.where(state.count > 0, state.mean, pivot)
    shifted = jnp.where(present, values - pivot[y], 0.0)  # gathered, no (n, c, p) tensor
    rough = pivot + matmul(w.T, shifted) / safe
    # second pass: deviations from each row's own class mean, with the rounding corrections
    dev = jnp.where(present, values - rough[y], 0.0)
    s1 = matmul(w.T, dev)
    mean = rough + s1 / safe
    m2 = jnp.maximum(matmul(w.T, dev * dev) - s1 * s1 / safe, 0.0)
    batch = GaussianSummary(count, jnp.where(count > 0, mean, 0.0), jnp.where(count > 0, m2, 0.0))
    return merge_gaussian(state, batch)


def _pooled_gaussian(state: GaussianSummary):
    """`(p,)` total count, pooled mean and pooled variance of every predictor over all classes
    (0 where no value has been seen)."""
    tot, pmean, pm2 = pooled_moments(state.count, state.mean, state.m2)
    return tot, pmean, pm2 / jnp.where(tot > 0, tot, 1)


def _effective_gaussian(state: GaussianSummary, var_smoothing):
    """The per-class mean and floored variance `(c, p)` that `GaussianSummary.log_prob` scores
    with, and whether each predictor has any value yet `(p,)` (see `log_prob`)."""
    count = state.count
    tot, pmean, pvar = _pooled_gaussian(state)
    has = count > 0
    var = jnp.where(has, state.m2 / jnp.where(has, count, 1), pvar[None, :])
    mean = jnp.where(has, state.mean, pmean[None, :])
    # the floor of `jaxnb.params.fit_mle`: var_smoothing x the pooled variance, or 1 for a
    # predictor without spread (constant so far: `has_spread`), whose tiny variance would swamp
    # every other term
    floor = jnp.where(pvar > 0, var_smoothing * pvar, 1.0)
    var = jnp.maximum(var + floor[None, :], jnp.finfo(var.dtype).tiny)  # no absolute scale
    return mean, var, tot > 0


def log_prob_gaussian(state: GaussianSummary, values, var_smoothing, var_floor=0.0):
    """`GaussianSummary.log_prob` without the eager checks (pure; jit/vmap/grad-friendly)."""
    mean, var, seen = _effective_gaussian(state, var_smoothing)
    var = jnp.maximum(var, var_floor)
    x = values[:, :, None]
    out = -0.5 * (_LOG_2PI + jnp.log(var.T)[None] + (x - mean.T[None]) ** 2 / var.T[None])
    # a predictor with no value seen yet (e.g. all missing so far) carries no information: 0, as a
    # missing value (its floored variance would give a huge class-independent term that swamps the
    # other predictors' contributions in floating point)
    return jnp.where(jnp.isnan(x) | ~seen[None, :, None], 0.0, out)


_log_prob_gaussian_jit = jax.jit(log_prob_gaussian)


@partial(jax.jit, static_argnums=1)
def _bins_gaussian(state: GaussianSummary, n_bins):
    sd = jnp.sqrt(state.variance)
    seen = state.count > 0
    lo = jnp.min(jnp.where(seen, state.mean - 4 * sd, jnp.inf), axis=0)
    hi = jnp.max(jnp.where(seen, state.mean + 4 * sd, -jnp.inf), axis=0)
    lo = jnp.where(jnp.isfinite(lo), lo, 0.0)
    hi = jnp.where(jnp.isfinite(hi), jnp.maximum(hi, lo), 1.0)
    frac = jnp.arange(1, n_bins, dtype=state.mean.dtype) / n_bins
    cuts = lo[:, None] + (hi - lo)[:, None] * frac[None, :]  # (p, n_bins - 1)
    z = (cuts[:, :, None] - state.mean.T[:, None, :]) / jnp.where(sd > 0, sd, 1.0).T[:, None, :]
    cdf = jax.scipy.stats.norm.cdf(z)
    # a zero-variance class is a point mass at its mean
    point = (cuts[:, :, None] >= state.mean.T[:, None, :]).astype(cdf.dtype)
    cdf = jnp.where((sd > 0).T[:, None, :], cdf, point)
    ones = jnp.ones_like(cdf[:, :1])
    cdf = jnp.concatenate([jnp.zeros_like(ones), cdf, ones], axis=1)  # (p, n_bins + 1, c)
    counts = jnp.diff(cdf, axis=1) * state.count.T[:, None, :]
    return cuts, counts


# --------------------------------------------------------------------------------------------------
# Helpers shared by the binned summaries.
# --------------------------------------------------------------------------------------------------
def _bin_log_prob(cuts, counts, n_bins, values, smoothing):
    r"""log P(x in bin b | class j) = log (N_bj + a) - log (N_j + a B), B = non-empty-slot bins."""
    code = _count_below(cuts, values)  # (n, p)
    counts = counts.astype(values.dtype)
    class_total = counts.sum(axis=1)  # (p, c)
    denom = class_total + smoothing * n_bins[:, None].astype(values.dtype)
    picked = jnp.take_along_axis(counts[None], code[:, :, None, None], axis=2)[:, :, 0, :]
    out = jnp.log(picked + smoothing) - jnp.log(denom)[None]
    return jnp.where(jnp.isnan(values)[:, :, None], 0.0, out)


def _count_below(cuts, values):
    """`(n, p)` number of cut points strictly below each value: `cuts` `(p, m)` sorted per row
    (+inf padded), `values` `(n, p)` (NaN: any code in [0, m], masked by the callers).

    A binary search per predictor (log2 m steps) instead of the n·p·m comparisons of
    `sum(cuts < x)`."""
    search = lambda cu, v: jnp.searchsorted(cu, v, side="left", method="scan_unrolled")
    return jax.vmap(search, in_axes=(0, 1), out_axes=1)(cuts, values).astype(jnp.int32)


def _pad_rows(values, y, chunk):
    """Pads a batch to a multiple of `chunk` rows with NaN (missing, hence ignored) rows."""
    n = values.shape[0]
    pad = (-n) % chunk
    if pad:
        values = jnp.concatenate([values, jnp.full((pad, values.shape[1]), jnp.nan, values.dtype)])
        y = jnp.concatenate([y, jnp.zeros((pad,), y.dtype)])
    steps = values.shape[0] // chunk
    return values.reshape(steps, chunk, values.shape[1]), y.reshape(steps, chunk)  # 0 rows too


# --------------------------------------------------------------------------------------------------
# GKClass (Stream §3.2; Greenwald & Khanna 2001).
# --------------------------------------------------------------------------------------------------
def gk_capacity_for_epsilon(epsilon: float, n_max: int, chunk_size: int = 1) -> int:
    r"""Capacity that guarantees `epsilon` for streams up to `n_max` examples.

    GK's worst case (Greenwald & Khanna 2001, Theorem 2) is (11 / (2 eps)) log(2 eps n) tuples
    after a COMPRESS with bands; we compress without bands (see `GKClass`) and count the chunk of
    new tuples waiting for the next compress, so this is an indicative, not a proven, size. In
    practice GK keeps far fewer tuples (about 1/eps to 2/eps on sorted or random orders; see the
    tests), and when the
    capacity is too small the summary stays correct: it raises its merge threshold and reports the
    larger guaranteed error through `rank_error_bound()`.

    `epsilon` must lie in (0, 1) (as for `GKClass.init`), `n_max` and `chunk_size` are ints >= 1.
    """
    check_real("epsilon", epsilon, 0.0, 1.0, low_open=True, high_open=True)
    check_int("n_max", n_max, 1)
    check_int("chunk_size", chunk_size, 1)
    return int(math.ceil(11.0 / (2.0 * epsilon) * max(1.0, math.log(2.0 * epsilon * n_max)))) + 1


class GKClass(eqx.Module):
    r"""Greenwald–Khanna quantile summary with per-class counts, one per predictor, fixed capacity.

    Each tuple (Stream §3.2) is <v, g, Delta, (g_j)_j>: `v` a value seen,
    `g` = rmin(v) - rmin(v_prev),
    `Delta` = rmax(v) - rmin(v), `g_j` the number of the g covered examples that belong to class j.
    With rmin_i = sum_{k<=i} g_k and rmax_i = rmin_i + Delta_i, the true rank of v_i lies in
    [rmin_i, rmax_i] (ties broken by arrival order). Consequently (GK 2001, Prop. 1) every rank r is
    answered by a stored value whose rank is within

        e = max_i (g_i + Delta_i) / 2        (`rank_error_bound()`)

    of r. GK keep g_i + Delta_i <= floor(2 eps n), so e <= eps n.

    Insertion (`update`): rows are processed in order by `lax.scan` over chunks of `chunk_size`
    rows. A chunk is merged into the sorted tuple array; a new value gets g = 1 and the tight
    Delta = g_s + Delta_s - 1 of its successor tuple s (0 for a new minimum or maximum), which is
    the exact rmax - rmin after insertion and never exceeds GK's floor(2 eps n) - 1. Then COMPRESS
    (right to left, a `lax.scan` vectorized over predictors) merges tuple i into its right
    neighbour when
    g_i + g_{i+1} + Delta_{i+1} <= floor(2 eps n), adding the class counts. `chunk_size=1` is GK's
    insert-then-compress; a larger chunk is GK with compress run every `chunk_size` inserts (the
    invariant and hence the guarantee are unchanged; only the transient array is larger).

    Departures from GK 2001, all documented here: (i) COMPRESS has no bands (the bands serve only
    the worst-case space proof; correctness only needs the merge condition); (ii) the array has a
    fixed `capacity`: if a compress leaves more tuples than that, the threshold is raised by 25 %
    until they fit — the summary stays correct, its guarantee `rank_error_bound()` becomes larger
    than eps n and `overflowed()` is True. `epsilon=None` means "capacity mode" (the paper's 100
    tuples, Stream §3): eps = 1.25 / capacity is tried first and raised as needed. See
    `gk_capacity_for_epsilon`.

    Per-class counts: the examples counted in tuple i are all <= v_i and at most Delta_i examples
    <= v_i are counted in later tuples, so cumulated class counts are within Delta_i of the exact
    per-class counts; class totals are exact.

    Attributes:
      values: `(p, capacity)` sorted tuple values, +inf in empty slots.
      g: `(p, capacity)` int32; 0 marks an empty slot.
      delta: `(p, capacity)` int32.
      class_counts: `(p, capacity, c)` int32.
      threshold: `(p,)` int32, the merge threshold used by the last compress.
      epsilon: static target error (None: capacity mode).
      chunk_size: static number of rows inserted between two compressions.
    """

    values: jax.Array
    g: jax.Array
    delta: jax.Array
    class_counts: jax.Array
    threshold: jax.Array
    epsilon: float | None = eqx.field(static=True, default=None)
    chunk_size: int = eqx.field(static=True, default=64)

    @classmethod
    def init(
        cls,
        n_classes: int,
        n_predictors: int,
        *,
        capacity: int = 100,
        epsilon: float | None = None,
        chunk_size: int = 64,
        dtype=None,
    ) -> GKClass:
        """Empty summary; `capacity` tuples per predictor (Stream §3 uses 100)."""
        _check_positive_int("n_classes", n_classes, 2)
        _check_positive_int("n_predictors", n_predictors)
        _check_positive_int("capacity", capacity, 3)
        _check_positive_int("chunk_size", chunk_size)
        check_real("epsilon", epsilon, 0.0, 1.0, low_open=True, high_open=True, allow_none=True)
        dtype = _float_dtype(dtype)
        p, k = n_predictors, capacity
        zi = _filled((p, k), 0, np.int32)
        return cls(
            values=_filled((p, k), np.inf, dtype),
            g=zi,
            delta=zi,
            class_counts=_filled((p, k, n_classes), 0, np.int32),
            threshold=_filled((p,), 0, np.int32),
            epsilon=None if epsilon is None else float(epsilon),
            chunk_size=int(chunk_size),
        )

    @property
    def capacity(self) -> int:
        return self.values.shape[1]

    @property
    def n_classes(self) -> int:
        return self.class_counts.shape[2]

    @property
    def n_predictors(self) -> int:
        return self.values.shape[0]

    @property
    def count(self) -> jax.Array:
        """`(p,)` number of (non-missing) examples summarized."""
        return self.g.sum(axis=1)

    @property
    def n_tuples(self) -> jax.Array:
        """`(p,)` number of tuples in use."""
        return (self.g > 0).sum(axis=1)

    def update(self, values, y, *, check_input: bool = True) -> GKClass:
        """Inserts the rows of `values` `(n, p)` (class codes `y`) in order; NaN is skipped.

        A host batch is padded with missing rows to a bucket of whole chunks (the same summary:
        chunks of missing rows change nothing), so nearby batch sizes share one program."""
        if check_input:
            values, y, _ = _check_batch(values, y, self.n_predictors, self.n_classes)
        return _chunked_update(update_gkclass, self, values, y, self.values.dtype)

    def rank_error_bound(self) -> jax.Array:
        r"""`(p,)` guaranteed absolute rank error e = max_i (g_i + Delta_i) / 2 of `quantile`."""
        return jnp.max(jnp.where(self.g > 0, self.g + self.delta, 0), axis=1) / 2.0

    def epsilon_achieved(self) -> jax.Array:
        """`(p,)` guaranteed relative rank error e / n (0 for an empty summary)."""
        n = self.count
        return self.rank_error_bound() / jnp.maximum(n, 1)

    def overflowed(self) -> jax.Array:
        """`(p,)` True where GK's invariant ``g + Delta <= max(floor(2 eps n), 1)`` fails for some
        tuple, so ``rank_error_bound()`` may exceed eps n: the capacity forced a larger threshold
        at some point of the stream (tuples merged then keep their larger g + Delta even after n
        has grown past them)."""
        eps = _gk_epsilon(self.epsilon, self.capacity)
        base = jnp.maximum(jnp.floor(2.0 * eps * self.count), 1.0)
        return 2.0 * self.rank_error_bound() > base

    def quantile(self, q) -> jax.Array:
        r"""`(p, len(q))` values whose rank is within `rank_error_bound()` of r = max(1, ceil(q n)).

        Picks the tuple minimizing max(r - rmin_i, rmax_i - r) (GK 2001, §2.1 query); NaN for a
        predictor with no value summarized yet."""
        q = np.atleast_1d(np.asarray(q, dtype=np.float64))
        if q.ndim != 1 or not ((q >= 0) & (q <= 1)).all():
            raise ValueError(f"q must be quantile levels in [0, 1]; got {q}")
        return _gk_quantile(self, q.astype(self.values.dtype))

    def bins(self) -> tuple[jax.Array, jax.Array]:
        r"""(cuts `(p, capacity - 1)`, counts `(p, capacity, c)`): bin b = (v_{b-1}, v_b].

        The cut points are the tuple values but the last. Tuples holding the same value (ties)
        give empty bins (v, v]: their counts are moved to the first bin of the run, where a value
        equal to v falls. Empty slots give +inf cuts and zero counts; both kinds of empty bin are
        dropped by `jaxnb.discretize.modl_cuts_from_counts`."""
        return _gk_bins(self)

    def log_prob(self, values, *, smoothing: float = 1.0, check_input: bool = True) -> jax.Array:
        r"""`(n, p, c)` log P(x in its bin | class j) = log (N_bj + a) - log (N_j + a B).

        Laplace smoothing `a = smoothing` (Lidstone for a != 1) over the B non-empty bins (distinct
        tuple values); a value above the largest tuple falls in the last bin; NaN contributes 0."""
        if check_input:
            values = _check_query(values, self.n_predictors)
            if not smoothing > 0:
                raise ValueError(f"smoothing must be > 0; got {smoothing=}")
        return _query(_gk_log_prob, self, values, self.values.dtype, smoothing)


@jax.jit
def _gk_log_prob(state, values, smoothing):
    """`GKClass.log_prob` in one program (eagerly, its steps compiled ~30 small programs on a
    first call and dispatched one each on every call)."""
    cuts, counts = _gk_bins(state)
    # "above the largest tuple -> the last bin": cuts at or above the largest tuple value
    # become +inf, so such a value lands in the bin of the last run of tuples (where its
    # counts are) and not in an empty slot after it (a summary below capacity has some)
    top = jnp.max(jnp.where(state.g > 0, state.values, -jnp.inf), axis=1)
    cuts = jnp.where(cuts >= top[:, None], jnp.inf, cuts)
    # a predictor with no value seen yet (empty summary, e.g. all missing so far) counts as one
    # empty bin: log (0 + a) - log (0 + a) = 0 for every class, like a missing value (B = 0
    # would give log a - log 0 = +inf in every class, hence NaN probabilities)
    n_bins = jnp.maximum((counts.sum(axis=2) > 0).sum(axis=1), 1)
    return _bin_log_prob(cuts, counts, n_bins, values, smoothing)


def _gk_epsilon(epsilon, capacity):
    # capacity mode: GK settles near 0.8 / eps tuples on random and sorted orders (measured), so
    # eps = 1.25 / capacity fills about 2/3 of the array and leaves room for the early stream,
    # where floor(2 eps n) is tiny and fewer merges are allowed
    return epsilon if epsilon is not None else 1.25 / capacity


@jax.jit
def _gk_bins(state):
    """`GKClass.bins` in one program (the cut slice ran as an eager step of its own)."""
    return state.values[:, :-1], _gk_bin_counts(state.values, state.class_counts)


@jax.jit
def _gk_bin_counts(values, class_counts):
    # first tuple of each run of equal values (values are sorted): a running max of run starts
    m = values.shape[1]
    idx = jnp.broadcast_to(jnp.arange(m, dtype=jnp.int32), values.shape)
    starts = jnp.concatenate(
        [jnp.ones_like(values[:, :1], bool), values[:, 1:] != values[:, :-1]], axis=1
    )
    first = lax.cummax(jnp.where(starts, idx, 0), axis=1)
    rows = jnp.arange(values.shape[0])[:, None]
    return jnp.zeros_like(class_counts).at[rows, first].add(class_counts)


def _gk_sort_chunk(xs, ys, c):
    """Stable ascending sort of a chunk `xs` `(b, p)` per predictor, NaN as +inf placed after the
    real +inf values (as `argsort(stable=True)` of the NaN -> +inf column, ties by row).

    Returns the sorted values, valid flags (not NaN) and class codes, each `(p, b)`. A bitonic
    network on (value, tag) pairs, tag = row index (unique, so the order is total and stable) with
    the class code and valid flag packed below it: XLA's CPU sort calls its comparator per
    element pair and costs about 2x more here."""
    b, p = xs.shape
    valid = ~jnp.isnan(xs).T  # (p, b)
    key = jnp.where(valid, xs.T, jnp.inf)
    n = 1 << max(b - 1, 0).bit_length()  # padded to a power of two (+inf, after every row)
    w = 2 * c
    packed = n * w < 2**31
    rowi = jnp.arange(n, dtype=jnp.int32)[None, :]
    code = 2 * ys.astype(jnp.int32)[None, :] + valid.astype(jnp.int32)  # (p, b), < 2c
    tag = rowi[:, :b] * w + code if packed else jnp.broadcast_to(rowi[:, :b], (p, b))
    if n > b:
        key = jnp.concatenate([key, jnp.full((p, n - b), jnp.inf, key.dtype)], axis=1)
        tag = jnp.concatenate(
            [tag, jnp.broadcast_to(rowi[:, b:] * (w if packed else 1), (p, n - b))], axis=1
        )
    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:  # compare-exchange of i with i + j (i & j == 0), descending where i & k
            q = n // (2 * j)
            kr, tr = key.reshape(p, q, 2, j), tag.reshape(p, q, 2, j)
            ak, bk, at, bt = kr[:, :, 0], kr[:, :, 1], tr[:, :, 0], tr[:, :, 1]
            desc = jnp.asarray(((np.arange(q) * 2 * j) & k) != 0)[None, :, None]
            swap = ((ak > bk) | ((ak == bk) & (at > bt))) ^ desc
            key = jnp.stack([jnp.where(swap, bk, ak), jnp.where(swap, ak, bk)], 2).reshape(p, n)
            tag = jnp.stack([jnp.where(swap, bt, at), jnp.where(swap, at, bt)], 2).reshape(p, n)
            j //= 2
        k *= 2
    key, tag = key[:, :b], tag[:, :b]
    if packed:
        code = tag % w
        return key, code % 2 == 1, code // 2
    return key, jnp.take_along_axis(valid, tag, axis=1), ys.astype(jnp.int32)[tag]


def _gk_searchsorted(sorted_rows, v, side):
    """`(p, k)` insertion indices of `v` `(p, k)` in the sorted rows `(p, m)` (binary search)."""
    f = lambda a, x: jnp.searchsorted(a, x, side=side, method="scan_unrolled")
    return jax.vmap(f)(sorted_rows, v).astype(jnp.int32)


def _gk_compress_keep(g, delta, threshold):
    """Right-to-left GK COMPRESS (no bands) over the merged tuples (`g` = 0: empty position,
    transparent). Returns keep flags `(p, m)`.

    Position 0 never merges into its right neighbour, so the scan covers positions 1.. m-1 and
    position 0 is kept iff used. Carry (g, Delta) of the current right neighbour; g = 0 means none
    yet. g and Delta are fed as one `(m, 2, p)` array (one slice per step)."""
    gd = jnp.stack([g.T, delta.T], axis=1)  # (m, 2, p)

    def step(carry, x):
        acc_g, acc_d = carry
        gi, di = x[0], x[1]
        vi = gi > 0
        merge = (acc_g > 0) & vi & (gi + acc_g + acc_d <= threshold)
        keep = vi & ~merge
        return (jnp.where(keep, gi, acc_g + gi), jnp.where(keep, di, acc_d)), keep

    zero = jnp.zeros((g.shape[0],), g.dtype)
    _, keep = lax.scan(step, (zero, zero), gd[1:], reverse=True, unroll=8)
    return jnp.concatenate([g[:, :1] > 0, keep.T], axis=1)


def _gk_insert_chunk(state: GKClass, xs, ys):
    """Merges one chunk (`xs` `(b, p)`, `ys` `(b,)`) into the summary and compresses.

    Same result as a stable sort of [old tuples, chunk] (ties: old first, then by row): only the
    chunk is sorted (`_gk_sort_chunk`) and the two sorted lists are merged by rank arithmetic
    (old i goes to i + #new < v_i, new j to j + #old <= v_j), one scatter of the packed
    (g, class counts, Delta) and one of the values."""
    p, cap = state.g.shape
    c = state.class_counts.shape[2]
    b = xs.shape[0]
    m = cap + b
    sv, svalid, sy = _gk_sort_chunk(xs, ys, c)
    n_le = _gk_searchsorted(state.values, sv, "right")  # (p, b) old tuples <= new value
    n_lt = _gk_searchsorted(sv, state.values, "left")  # (p, cap) new values < old tuple
    pos = jnp.concatenate(
        [
            jnp.arange(cap, dtype=jnp.int32)[None] + n_lt,
            jnp.arange(b, dtype=jnp.int32)[None] + n_le,
        ],
        axis=1,
    )
    # successor old tuple of a new value is old tuple n_le: Delta_new = g_s + Delta_s - 1, or 0
    s = jnp.minimum(n_le, cap - 1)
    g_s = jnp.take_along_axis(state.g, s, axis=1)
    d_s = jnp.take_along_axis(state.delta, s, axis=1)
    d_new = jnp.where(svalid & (n_le < cap) & (g_s > 0), g_s + d_s - 1, 0)
    new_g = svalid.astype(jnp.int32)
    new_cc = jax.nn.one_hot(sy, c, dtype=jnp.int32) * new_g[:, :, None]
    src = jnp.concatenate(
        [
            jnp.concatenate([state.g[:, :, None], state.class_counts, state.delta[:, :, None]], 2),
            jnp.concatenate([new_g[:, :, None], new_cc, d_new[:, :, None]], 2),
        ],
        axis=1,
    )
    rows = jnp.arange(p)[:, None]
    pack = jnp.zeros((p, m, 2 + c), jnp.int32).at[rows, pos].set(src, unique_indices=True)
    v = (
        jnp.zeros((p, m), state.values.dtype)
        .at[rows, pos]
        .set(jnp.concatenate([state.values, sv], axis=1), unique_indices=True)
    )
    g, d = pack[:, :, 0], pack[:, :, 1 + c]

    n = g.sum(axis=1)
    eps = _gk_epsilon(state.epsilon, cap)
    # every compress restarts from GK's floor(2 eps n): keeping a raised threshold would ratchet
    # (new tuples inherit Delta from their successors, so the next compress overflows again)
    base = jnp.maximum(jnp.floor(2.0 * eps * n), 1).astype(jnp.int32)

    def too_many(carry):
        _, keep = carry
        return jnp.any(keep.sum(axis=1) > cap)

    def raise_threshold(carry):
        thr, keep = carry
        over = keep.sum(axis=1) > cap
        thr = jnp.where(over, thr + thr // 4 + 1, thr)
        return thr, _gk_compress_keep(g, d, thr)

    thr, keep = lax.while_loop(too_many, raise_threshold, (base, _gk_compress_keep(g, d, base)))

    # compaction: kept tuple k absorbs the g and class counts of the dropped tuples before it;
    # one scatter of [cumsum (g, counts), Delta, kept] to cumsum(keep) - 1 (dropped tuples go
    # out of bounds) and one of the values
    dest = jnp.where(keep, jnp.cumsum(keep, axis=1) - 1, cap)
    out = jnp.concatenate(
        [jnp.cumsum(pack[:, :, : 1 + c], axis=1), d[:, :, None], jnp.ones((p, m, 1), jnp.int32)],
        axis=2,
    )
    put = jnp.zeros((p, cap, 3 + c), jnp.int32).at[rows, dest].set(out, mode="drop")
    kept = put[:, :, -1] > 0
    diff = jnp.diff(put[:, :, : 1 + c], axis=1, prepend=jnp.zeros((p, 1, 1 + c), jnp.int32))
    g_out = jnp.where(kept, diff[:, :, 0], 0)
    cc_out = jnp.where(kept[:, :, None], diff[:, :, 1:], 0)
    v_out = jnp.full((p, cap), jnp.inf, v.dtype).at[rows, dest].set(v, mode="drop")
    return GKClass(v_out, g_out, put[:, :, 1 + c], cc_out, thr, state.epsilon, state.chunk_size)


@jax.jit
def update_gkclass(state: GKClass, values, y) -> GKClass:
    """Jitted core of `GKClass.update`: `lax.scan` over chunks of rows, in order."""
    xs, ys = _pad_rows(values, y, state.chunk_size)
    state, _ = lax.scan(lambda s, a: (_gk_insert_chunk(s, *a), None), state, (xs, ys))
    return state


@jax.jit
def _gk_quantile(state: GKClass, q):
    n = state.count
    valid = state.g > 0
    rmin = jnp.cumsum(state.g, axis=1)
    rmax = rmin + state.delta
    r = jnp.maximum(jnp.ceil(q[None, :] * n[:, None]), 1)  # (p, s)
    score = jnp.maximum(r[:, :, None] - rmin[:, None, :], rmax[:, None, :] - r[:, :, None])
    score = jnp.where(valid[:, None, :], score, jnp.inf)
    best = jnp.argmin(score, axis=2)
    out = jnp.take_along_axis(state.values, best, axis=1)
    # a predictor with no value summarized has no quantiles (not the +inf of an empty slot)
    return jnp.where((n == 0)[:, None], jnp.nan, out)


# --------------------------------------------------------------------------------------------------
# cPiD (Stream §3.1; Gama & Pinto 2006, PiD layer 1).
# --------------------------------------------------------------------------------------------------
class CPiD(eqx.Module):
    r"""PiD's first layer at constant memory: `n_intervals` intervals with per-class counts.

    PiD layer 1 (Gama & Pinto 2006, §2.1, "Update-Layer1"): start from equal-width intervals, count
    each value in its interval, and split an interval in two (half the counts each) when its count
    exceeds `split_fraction` · n; splitting an inner interval inserts its midpoint. cPiD
    (Stream §3.1) then merges the two adjacent intervals with the lowest total count, so the
    number of intervals stays
    `n_intervals`. Totals per class are exact; where an interval's counts are split, each class
    count c goes floor(c/2) left and the rest right (integer counts, so totals stay exact).

    Choices (documented departures): (i) the initial breaks are equal width over the first chunk's
    range (PiD takes a user guess), and an outer (open) interval is split halfway between its
    inner break and the most extreme value seen (`low` / `high`), where PiD adds a break one fixed
    step further out — on sorted streams PiD's step crawls, bisection reaches the range in
    O(log) splits; (ii) an interval holding fewer than 2 examples is never split;
    (iii) the two halves just created are not merged back together; (iv) rows are counted by
    chunks of `chunk_size` (`lax.scan` over chunks, in order) and the splits (at most one per row,
    as in PiD) are made after each chunk — `chunk_size=1` is PiD's row-by-row order; a chunk
    with no value at all (every row missing) makes no split, so splits left pending by a chunk
    wait for the next value, and padding a batch with missing rows changes nothing.

    Limitation (PiD's split rule): a value repeated many times (a discrete or zero-inflated
    predictor) keeps its interval over the split threshold, and every split moves half its count
    into a new interval that holds none of its rows, so per-interval counts near such a point mass
    can be far off (4000 rows, half of them 0, 30 intervals row by row: the interval of 0 kept 265
    of its 2031 rows). Class totals stay exact. `GKClass` stores data values and has no such bias.

    Attributes:
      breaks: `(p, n_intervals - 1)` sorted inner break points; interval b is
        (breaks[b-1], breaks[b]].
      counts: `(p, n_intervals, c)` int32 per-class counts.
      low, high: `(p,)` smallest and largest value seen.
      split_fraction: static; default 2 / n_intervals (twice the equal-frequency share).
      chunk_size: static.
    """

    breaks: jax.Array
    counts: jax.Array
    low: jax.Array
    high: jax.Array
    split_fraction: float = eqx.field(static=True, default=0.02)
    chunk_size: int = eqx.field(static=True, default=64)

    @classmethod
    def init(
        cls,
        n_classes: int,
        n_predictors: int,
        *,
        n_intervals: int = 100,
        split_fraction: float | None = None,
        chunk_size: int = 64,
        dtype=None,
    ) -> CPiD:
        """Empty summary; the breaks are set from the first chunk of data."""
        _check_positive_int("n_classes", n_classes, 2)
        _check_positive_int("n_predictors", n_predictors)
        _check_positive_int("n_intervals", n_intervals, 3)
        _check_positive_int("chunk_size", chunk_size)
        if split_fraction is None:
            split_fraction = 2.0 / n_intervals
        check_real("split_fraction", split_fraction, 0.0, 1.0, low_open=True)
        dtype = _float_dtype(dtype)
        return cls(
            breaks=_filled((n_predictors, n_intervals - 1), 0, dtype),
            counts=_filled((n_predictors, n_intervals, n_classes), 0, np.int32),
            low=_filled((n_predictors,), np.inf, dtype),
            high=_filled((n_predictors,), -np.inf, dtype),
            split_fraction=float(split_fraction),
            chunk_size=int(chunk_size),
        )

    @property
    def n_intervals(self) -> int:
        return self.counts.shape[1]

    @property
    def n_classes(self) -> int:
        return self.counts.shape[2]

    @property
    def n_predictors(self) -> int:
        return self.counts.shape[0]

    @property
    def count(self) -> jax.Array:
        """`(p,)` number of (non-missing) examples summarized."""
        return self.counts.sum(axis=(1, 2))

    def update(self, values, y, *, check_input: bool = True) -> CPiD:
        """Counts the rows of `values` `(n, p)` (class codes `y`) in order; NaN is skipped.

        A host batch is padded with missing rows to a bucket of whole chunks (the same summary:
        a chunk without values changes nothing), so nearby batch sizes share one program."""
        if check_input:
            values, y, _ = _check_batch(values, y, self.n_predictors, self.n_classes)
        return _chunked_update(update_cpid, self, values, y, self.breaks.dtype)

    def bins(self) -> tuple[jax.Array, jax.Array]:
        """(cuts `(p, n_intervals - 1)`, counts `(p, n_intervals, c)`)."""
        return self.breaks, self.counts

    def log_prob(self, values, *, smoothing: float = 1.0, check_input: bool = True) -> jax.Array:
        r"""`(n, p, c)` log P(x in its interval | class j) = log (N_bj + a) - log (N_j + a B).

        Laplace smoothing `a = smoothing` over the B = n_intervals intervals; NaN contributes 0."""
        if check_input:
            values = _check_query(values, self.n_predictors)
            if not smoothing > 0:
                raise ValueError(f"smoothing must be > 0; got {smoothing=}")
        return _query(_cpid_log_prob, self, values, self.breaks.dtype, smoothing)


@jax.jit
def _cpid_log_prob(state, values, smoothing):
    """`CPiD.log_prob` in one program."""
    nb = jnp.full((state.breaks.shape[0],), state.n_intervals)
    return _bin_log_prob(state.breaks, state.counts, nb, values, smoothing)


def _insert_at(a, k, val):
    """Row-wise insert `val[r]` at position `k[r]` of `a[r]` (length grows by one)."""
    p, m = a.shape[:2]
    i = jnp.arange(m + 1)[None, :]
    k = k[:, None]
    src = jnp.clip(jnp.where(i <= k, i, i - 1), 0, m - 1)
    out = jnp.take_along_axis(a, src.reshape((p, m + 1) + (1,) * (a.ndim - 2)), axis=1)
    hit = (i == k).reshape((p, m + 1) + (1,) * (a.ndim - 2))
    return jnp.where(hit, val[:, None], out)


def _remove_at(a, j):
    """Row-wise removal of position `j[r]` of `a[r]` (length shrinks by one)."""
    p, m = a.shape[:2]
    i = jnp.arange(m - 1)[None, :]
    src = jnp.where(i < j[:, None], i, i + 1)
    return jnp.take_along_axis(a, src.reshape((p, m - 1) + (1,) * (a.ndim - 2)), axis=1)


def _cpid_split_merge(breaks, counts, low, high, do):
    """One PiD split of the fullest interval, then cPiD's merge of the lowest adjacent pair."""
    p, m, _ = counts.shape
    rows = jnp.arange(p)
    total = counts.sum(axis=2)
    k = jnp.argmax(total, axis=1)
    # new break position
    # outer intervals are bisected towards the extreme value seen (PiD extends by a fixed step)
    lower = jnp.where(
        k == 0, jnp.minimum(low, breaks[:, 0]), breaks[rows, jnp.clip(k - 1, 0, m - 2)]
    )
    upper = jnp.where(
        k == m - 1, jnp.maximum(high, breaks[:, -1]), breaks[rows, jnp.clip(k, 0, m - 2)]
    )
    new_break = (lower + upper) / 2
    # breaks: interval k = (breaks[k-1], breaks[k]] becomes (.., new] and (new, ..]
    breaks2 = _insert_at(breaks, jnp.where(k == m - 1, m - 1, k), new_break)
    ck = counts[rows, k]  # (p, c)
    left = ck // 2
    counts2 = _insert_at(counts.at[rows, k].set(ck - left), k, left)  # (p, m + 1, c)
    # merge the adjacent pair (j, j + 1) with the lowest total, not the pair just split
    t2 = counts2.sum(axis=2)
    pair = t2[:, :-1] + t2[:, 1:]  # (p, m)
    pair = jnp.where(jnp.arange(m)[None, :] == k[:, None], jnp.iinfo(pair.dtype).max, pair)
    j = jnp.argmin(pair, axis=1)
    merged = counts2[rows, j] + counts2[rows, j + 1]
    counts3 = _remove_at(counts2.at[rows, j + 1].set(merged), j)
    breaks3 = _remove_at(breaks2, j)
    do = do[:, None]
    return jnp.where(do, breaks3, breaks), jnp.where(do[:, :, None], counts3, counts)


def _cpid_chunk(state: CPiD, xs, ys):
    p, m, c = state.counts.shape
    present = ~jnp.isnan(xs)  # (b, p)
    b = xs.shape[0]
    # lazy initialisation from the first chunk with data: equal width over its range
    fresh = state.counts.sum(axis=(1, 2)) == 0
    lo = jnp.min(jnp.where(present, xs, jnp.inf), axis=0)
    hi = jnp.max(jnp.where(present, xs, -jnp.inf), axis=0)
    has = jnp.isfinite(lo)
    lo = jnp.where(has, lo, 0.0)
    hi = jnp.where(has, hi, 1.0)
    width = jnp.where(hi > lo, hi - lo, 1.0)
    frac = jnp.arange(1, m, dtype=xs.dtype) / m
    init_breaks = lo[:, None] + width[:, None] * frac[None, :]
    breaks = jnp.where((fresh & has)[:, None], init_breaks, state.breaks)
    low = jnp.minimum(state.low, jnp.where(has, lo, jnp.inf))
    high = jnp.maximum(state.high, jnp.where(has, hi, -jnp.inf))
    # count the chunk
    code = _count_below(breaks, xs)  # (b, p)
    counts = state.counts.at[jnp.arange(p)[None, :], code, ys[:, None]].add(
        present.astype(jnp.int32)
    )
    n = counts.sum(axis=(1, 2))
    limit = jnp.maximum(jnp.floor(state.split_fraction * n), 1).astype(jnp.int32)

    def need(counts):
        return counts.sum(axis=2).max(axis=1) > limit

    # a chunk without a single value changes nothing (no counts, so no split is due to it, as in
    # PiD's update of one value at a time): splits the previous chunk left pending (each chunk
    # runs at most b) wait for the next value. Padding a batch with missing rows is then exact.
    any_value = jnp.any(present)

    def cond(carry):
        it, _, counts = carry
        return (it < b) & any_value & jnp.any(need(counts))

    def body(carry):
        it, breaks, counts = carry
        breaks, counts = _cpid_split_merge(breaks, counts, low, high, need(counts))
        return it + 1, breaks, counts

    _, breaks, counts = lax.while_loop(cond, body, (0, breaks, counts))
    return CPiD(breaks, counts, low, high, state.split_fraction, state.chunk_size)


@jax.jit
def update_cpid(state: CPiD, values, y) -> CPiD:
    """Jitted core of `CPiD.update`: `lax.scan` over chunks of rows, in order."""
    xs, ys = _pad_rows(values, y, state.chunk_size)
    state, _ = lax.scan(lambda s, a: (_cpid_chunk(s, *a), None), state, (xs, ys))
    return state


# --------------------------------------------------------------------------------------------------
# Categorical predictors: exact per-class counts.
# --------------------------------------------------------------------------------------------------
class CategoricalCounts(eqx.Module):
    r"""Exact weighted per-class counts of discrete predictors, flattened as `(K, c)`.

    Rows `offsets[i] : offsets[i] + n_states[i]` belong to predictor i (docs/CONVENTIONS.md); code
    -1 (missing) is not counted. Memory K·c, independent of the stream length.
    """

    counts: jax.Array
    n_states: tuple[int, ...] = eqx.field(static=True)

    @classmethod
    def init(cls, n_classes: int, n_states, dtype=None) -> CategoricalCounts:
        """Empty counts for `n_classes` classes; `n_states`: a sequence of ints >= 1, one per
        discrete predictor (its number of states), e.g. `(3,)` for a single predictor."""
        _check_positive_int("n_classes", n_classes, 2)
        if isinstance(n_states, (str, bytes)) or not hasattr(n_states, "__iter__"):
            raise TypeError(
                f"n_states must be a sequence of ints, one per predictor (e.g. (3,) for one "
                f"predictor with 3 states); got n_states={n_states!r}"
            )
        n_states = tuple(n_states)
        bad = [k for k in n_states if isinstance(k, bool) or not isinstance(k, numbers.Integral)]
        if bad or not n_states or min(n_states) < 1:
            raise ValueError(
                f"n_states must be a non-empty sequence of ints >= 1, one per predictor; got "
                f"n_states={n_states!r}"
            )
        n_states = tuple(int(k) for k in n_states)
        dtype = _float_dtype(dtype)
        return cls(_filled((sum(n_states), n_classes), 0, dtype), n_states)

    @property
    def offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.n_states)[:-1]]).astype(np.int32)

    def update(self, codes, y, weight=None, *, check_input: bool = True) -> CategoricalCounts:
        """Adds `codes` `(n, q)` int in [-1, n_states[i]) with class codes `y`.

        A host batch is padded with missing (-1), weight-0 rows to a bucket of sizes, as in
        `GaussianSummary.update`."""
        c = self.counts.shape[1]
        if check_input:
            codes, y, weight = _check_batch(codes, y, len(self.n_states), c, weight, name="codes")
            codes = _check_codes(codes, self.n_states)
        # padded rows: missing codes (-1), weight 0
        args = _weighted_rows(codes, y, weight, self.counts.dtype, np.int32, -1)
        counts = _update_categorical(self.counts, *args, self.offsets)
        return CategoricalCounts(counts, self.n_states)

    def log_prob(self, codes, *, smoothing: float = 1.0, check_input: bool = True) -> jax.Array:
        r"""`(n, q, c)` log (N_ijk + a) - log (N_j(i) + a M_i); code -1 contributes 0."""
        if check_input:
            codes = _check_codes(_check_query(codes, len(self.n_states), "codes"), self.n_states)
            if not smoothing > 0:
                raise ValueError(f"smoothing must be > 0; got {smoothing=}")
        return _query(_categorical_log_prob, self, codes, np.int32, smoothing, fill=-1)


@jax.jit
def _categorical_log_prob(state, codes, smoothing):
    """`CategoricalCounts.log_prob` in one program (eagerly, ~18 small programs on a first call
    and one dispatch each on every call)."""
    k = np.repeat(np.arange(len(state.n_states)), state.n_states)
    m = jnp.asarray(state.n_states, state.counts.dtype)
    tot = jax.ops.segment_sum(state.counts, k, num_segments=len(state.n_states))  # (q, c)
    rows = jnp.asarray(state.offsets)[None, :] + jnp.maximum(codes, 0)
    out = jnp.log(state.counts[rows] + smoothing) - jnp.log(tot + smoothing * m[:, None])[None]
    return jnp.where((codes < 0)[:, :, None], 0.0, out)


@jax.jit
def _update_categorical(counts, codes, y, weight, offsets):
    w = jnp.where(codes >= 0, weight[:, None], 0.0).astype(counts.dtype)
    rows = offsets[None, :] + jnp.maximum(codes, 0)
    return counts.at[rows, y[:, None]].add(w)
