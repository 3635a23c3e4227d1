r"""Sufficient statistics of naive Bayes: accumulate, merge, subtract.

Everything NB needs from a data set is a handful of weighted sums per class:

* ``class_weight[j]``  :math:`N_j = \sum_r w_r [y_r = j]`;
* ``counts[o_i + k, j]``  :math:`N_{ijk} = \sum_r w_r [y_r = j][x_{ri} = k]` for discrete predictors
  (flattened over predictor and state, ``o_i`` = offset of predictor i);
* ``weight, mean, m2`` per class and continuous predictor: weighted count, mean and sum of squared
  deviations from the class mean (the "parallel" form of Chan, Golub & LeVeque 1979, which merges
  and subtracts stably).

Statistics merge (streams, shards, chunks of data larger than memory) and subtract (K-fold CV: the
training statistics of fold k are total minus fold k). Every function here is pure and works under
``jit`` and ``vmap``; folds and subsets are expressed as 0/1 sample weights.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._batch import any_in_batch, fast_or_fallback
from ._checks import concrete
from ._dtypes import float_dtype
from ._matmul import einsum, matmul

__all__ = [
    "SuffStats",
    "accumulate",
    "merge",
    "subtract",
    "empty_stats",
    "has_spread",
    "log_pooled_sd",
    "pooled_gaussian",
    "pooled_moments",
    "state_offsets",
    "state_segments",
    "stats_from_sums",
]


class SuffStats(eqx.Module):
    """Weighted sufficient statistics of a mixed discrete/continuous data set.

    Attributes:
      class_weight: (c,) weighted class counts N_j.
      counts: (K, c) weighted counts N_ijk, rows ``offsets[i]:offsets[i]+n_states[i]`` for
        predictor i.
      weight: (c, r) weighted count of observed (non-missing) values per class and continuous
        predictor.
      mean: (c, r) weighted class means of the continuous predictors.
      m2: (c, r) weighted sums of squared deviations from the class mean.
      n_states: static tuple, number of states of each discrete predictor.
    """

    class_weight: jax.Array
    counts: jax.Array
    weight: jax.Array
    mean: jax.Array
    m2: jax.Array
    n_states: tuple[int, ...] = eqx.field(static=True)

    @property
    def n_classes(self) -> int:
        return self.class_weight.shape[-1]

    @property
    def n_discrete(self) -> int:
        return len(self.n_states)

    @property
    def n_continuous(self) -> int:
        return self.mean.shape[-1]


def state_offsets(n_states: tuple[int, ...]) -> np.ndarray:
    """Row offset of each discrete predictor's block in a flattened CPT (static, NumPy)."""
    return (
        np.concatenate([[0], np.cumsum(n_states)[:-1]]).astype(np.int32)
        if n_states
        else (np.zeros((0,), np.int32))
    )


def state_segments(n_states: tuple[int, ...]) -> np.ndarray:
    """Predictor index of each row of a flattened CPT (static, NumPy), shape (K,)."""
    return np.repeat(np.arange(len(n_states), dtype=np.int32), n_states)


def empty_stats(n_states, n_continuous: int, n_classes: int, dtype=None) -> SuffStats:
    """All-zero statistics: the identity element of `merge`."""
    dtype = dtype or float_dtype()
    n_states = tuple(int(m) for m in n_states)
    K = int(sum(n_states))
    z = lambda *s: jnp.zeros(s, dtype)
    return SuffStats(
        z(n_classes),
        z(K, n_classes),
        z(n_classes, n_continuous),
        z(n_classes, n_continuous),
        z(n_classes, n_continuous),
        n_states,
    )


def _onehot_layout(n_states: tuple[int, ...]):
    """Static layout of the float one-hot of a block of codes (NumPy), shared with `likelihood`.

    Returns ``(M, rows)``. With ``M > 0`` (padded, state-major layout, used when padding every
    predictor to the largest state count at most doubles the width) column ``k * q + i`` is
    ``[x_i = k]``: the comparison runs along contiguous codes of a row, which XLA:CPU vectorizes;
    otherwise (``M == 0``, flat layout) column ``offsets[i] + k`` is ``[x_i = k]``. ``rows`` (K,)
    maps the flattened CPT rows to their columns.
    """
    q, K = len(n_states), int(sum(n_states))
    M = max(n_states) if q else 0
    if q and q * M <= 2 * K:
        return M, np.concatenate([np.arange(m) * q + i for i, m in enumerate(n_states)])
    return 0, np.arange(K)


def _onehot_block(codes, n_states: tuple[int, ...], dtype):
    """(b, width) float one-hot of a block of codes in the `_onehot_layout`.

    Negative (missing) codes and codes >= n_states give all-zero entries.
    """
    M, _ = _onehot_layout(n_states)
    b = codes.shape[0]
    top = max(M, max(n_states, default=1)) - 1
    if not jnp.issubdtype(codes.dtype, jnp.signedinteger) or jnp.iinfo(codes.dtype).max < top:
        codes = codes.astype(jnp.int32)  # so that every state (and -1) is representable
    if M:
        hit = codes[:, None, :] == jnp.arange(M, dtype=codes.dtype)[None, :, None]  # (b, M, q)
        return hit.astype(dtype).reshape(b, M * codes.shape[1])
    seg = state_segments(n_states)
    st = np.concatenate([np.arange(m) for m in n_states])
    return (codes[:, seg] == jnp.asarray(st, codes.dtype)[None, :]).astype(dtype)


def _rows_dot(Yw, z):
    """Yw^T @ z, the contraction over the rows of a block.

    Written as a contraction over (8, b/8) sub-blocks when b allows: XLA:CPU then runs it as a
    YNNPACK dot, 20-30% faster on the 2-core test machine than the transposed-operand product.
    """
    b = z.shape[0]
    if b % 8 or b < 64:
        return matmul(Yw.T, z)
    return einsum(
        "kbc,kbr->cr", Yw.reshape(8, b // 8, Yw.shape[1]), z.reshape(8, b // 8, z.shape[1])
    )


def _block_sums(codes, values, Yw, n_states, shift, masked=True):
    """Counts (in the `_onehot_layout`) and shifted power sums of one block of rows.

    Everything is a float matrix product over the block's rows (no scatter, no integer sums, which
    XLA:CPU runs an order of magnitude slower): counts^T = Yw^T @ one-hot(b, width) (this operand
    order keeps the one-hot in its row-major layout), and S0, S1, S2 = Yw^T @ [observed, x - shift,
    (x - shift)^2]. With ``masked=False`` non-finite values are not masked and S0 is not computed
    (zeros): a non-finite value then makes its column of S1 non-finite for every class (0 * NaN and
    0 * inf are NaN), which `accumulate` detects.
    """
    dtype = Yw.dtype
    if n_states:
        counts = matmul(Yw.T, _onehot_block(codes, n_states, dtype))  # (c, width)
    else:
        counts = jnp.zeros((Yw.shape[1], 0), dtype)
    if not masked:
        s1, s2 = _unmasked_sums(Yw, values, shift)
        return counts, jnp.zeros((Yw.shape[1], values.shape[1]), dtype), s1, s2
    obs, x = _centred_observed(values, shift, dtype)
    s0 = _rows_dot(Yw, obs.astype(dtype))
    s1 = _rows_dot(Yw, x)
    s2 = _rows_dot(Yw, x * x)
    return counts, s0, s1, s2


def _centred_observed(values, shift, dtype):
    """(observed mask, values − shift with missing entries 0) of a block."""
    obs = jnp.isfinite(values)
    return obs, jnp.where(obs, values - shift[None, :], 0.0).astype(dtype)


@jax.custom_jvp
def _unmasked_sums(Yw, values, shift):
    """S1 = Yw^T (x - shift) and S2 = Yw^T (x - shift)^2 without masking: a missing value makes
    them non-finite, which `accumulate` detects (and then discards them for the masked pass).

    The derivative is taken with missing entries set to 0. Plain differentiation would give
    0 * NaN = NaN through the discarded pass, so every gradient of the statistics was NaN on
    data with one missing value; with the rule, the discarded pass contributes 0 and the masked
    pass the gradient. On finite data the rule is the plain derivative. The forward pass is
    unchanged (no mask, so no cost when nothing is differentiated)."""
    x = (values - shift[None, :]).astype(Yw.dtype)
    return _rows_dot(Yw, x), _rows_dot(Yw, x * x)


@_unmasked_sums.defjvp
def _unmasked_sums_jvp(primals, tangents):
    Yw, values, shift = primals
    dYw, dvalues, _ = tangents  # shift is a stop_gradient reference value
    out = _unmasked_sums(Yw, values, shift)
    obs, x = _centred_observed(values, shift, Yw.dtype)
    dx = jnp.where(obs, dvalues, 0.0).astype(Yw.dtype)
    ds1 = _rows_dot(dYw, x) + _rows_dot(Yw, dx)
    ds2 = _rows_dot(dYw, x * x) + _rows_dot(Yw, 2.0 * x * dx)
    return out, (ds1, ds2)


def _blocked_sums(codes, values, Yw, n_states, shift, block_size, masked=True):
    """`_block_sums` of all rows, accumulated over row blocks sliced in place (no reshape copy of
    the data; a ragged tail is one more block), so that the one-hot and the squared block stay in
    cache.
    """
    n = Yw.shape[0]
    if block_size is None or block_size >= n:
        return _block_sums(codes, values, Yw, n_states, shift, masked)
    bs = int(block_size)
    nb = n // bs

    def body(i, carry):
        blk = [lax.dynamic_slice_in_dim(a, i * bs, bs, 0) for a in (codes, values, Yw)]
        return jax.tree.map(jnp.add, carry, _block_sums(*blk, n_states, shift, masked))

    init = _block_sums(codes[:0], values[:0], Yw[:0], n_states, shift, masked)
    acc = lax.fori_loop(0, nb, body, init)
    if n - nb * bs:
        tail = _block_sums(
            codes[nb * bs :], values[nb * bs :], Yw[nb * bs :], n_states, shift, masked
        )
        acc = jax.tree.map(jnp.add, acc, tail)
    return acc


def accumulate(
    codes, values, Y, weight=None, *, n_states, block_size: int | None = None
) -> SuffStats:
    r"""Sufficient statistics of one data set.

    Args:
      codes: int (n, q) discrete codes in ``[0, n_states[i])``; negative codes are missing (not
        counted).
      values: float (n, r) continuous values; non-finite entries are missing (not counted).
      Y: float (n, c) one-hot (or soft) class indicator.
      weight: optional (n,) sample weights (0/1 weights select folds or subsets).
      n_states: static tuple of state counts of the discrete predictors.
      block_size: rows per block of the scanned accumulation (None: one block). Blocks keep the
        (rows x states) one-hot in cache instead of materializing it for all n rows.

    Returns:
      `SuffStats`. Class means and m2 come from sums shifted by a per-predictor reference value (the
      first block's observed mean), which keeps the float32 cancellation in m2 = S2 - S1^2/S0 small.
    """
    n_states = tuple(int(m) for m in n_states)
    if codes.ndim != 2 or values.ndim != 2 or Y.ndim != 2:
        raise ValueError("codes, values and Y must be 2-D arrays")
    if codes.shape[1] != len(n_states):
        raise ValueError(f"codes has {codes.shape[1]} columns but n_states has {len(n_states)}")
    dtype = jnp.result_type(values.dtype, Y.dtype)
    if not jnp.issubdtype(dtype, jnp.floating):
        dtype = float_dtype()
    Y = Y.astype(dtype)
    Yw = Y if weight is None else Y * weight.astype(dtype)[:, None]
    n = Y.shape[0]
    head = values[: min(n, block_size or n)]
    obs = jnp.isfinite(head)
    shift = jnp.sum(jnp.where(obs, head, 0.0), 0) / jnp.maximum(jnp.sum(obs, 0), 1)
    shift = lax.stop_gradient(shift.astype(dtype))

    if block_size is None or block_size >= n or not values.shape[1]:
        counts, s0, s1, s2 = _blocked_sums(codes, values, Yw, n_states, shift, block_size)
    else:
        # Blocked (large) data: one pass without masking non-finite values (two products per block
        # instead of three, and no mask), S0 from the class weights; if that pass meets a missing
        # value (its sums are not finite) the continuous sums are redone with masking. Small data
        # (one block, e.g. vmapped sweeps) always takes the masked pass.
        counts, _, s1, s2 = _blocked_sums(
            codes, values, Yw, n_states, shift, block_size, masked=False
        )
        s0 = jnp.broadcast_to(Yw.sum(0)[:, None], s1.shape)

        ok = jnp.isfinite(s1).all() & jnp.isfinite(s2).all()
        s0, s1, s2 = fast_or_fallback(
            ok,
            lambda: (s0, s1, s2),
            lambda: _blocked_sums(codes[:, :0], values, Yw, (), shift, block_size)[1:],
        )
    stats = stats_from_sums(Yw.sum(0), counts, s0, s1, s2, shift, n_states)
    if not values.shape[1]:
        return stats
    return _refine_far_classes(stats, values, Yw, shift, block_size)


def _refine_far_classes(stats: SuffStats, values, Yw, shift, block_size) -> SuffStats:
    """Class means and M2 again, centred on each class's own mean, where one shift for all
    classes loses too much: M2 = S2 - S1^2 / S0 cancels with a relative error of about
    eps * (mean_j - shift)^2 / var_j, e.g. every digit in float32 for classes 1e4 sigma apart.
    One more pass per class (`lax.cond`: only when some class is that far; under vmap only when
    some class of some batch element is, and then only that element takes the refined values),
    centred on the first pass's class mean, where the cancellation is gone."""
    far = _far_classes(stats, shift).any()

    def refine():
        none = jnp.zeros((values.shape[0], 0), jnp.int32)

        def one_class(yw, centre):  # the sums of one class, centred on its first-pass mean
            _, s0, s1, s2 = _blocked_sums(none, values, yw[:, None], (), centre, block_size)
            return s0[0], s1[0], s2[0]

        s0, s1, s2 = jax.vmap(one_class)(Yw.T, stats.mean)  # (c, r) each
        mean, m2 = _recentred(stats, s0, s1, s2)
        return jnp.where(far, mean, stats.mean), jnp.where(far, m2, stats.m2)

    mean, m2 = lax.cond(any_in_batch(far), refine, lambda: (stats.mean, stats.m2))
    return SuffStats(stats.class_weight, stats.counts, stats.weight, mean, m2, stats.n_states)


def _far_classes(stats: SuffStats, shift) -> jax.Array:
    """(c, r) bool: where the sums centred on ``shift`` lose more than ~1e-4 of M2 (relative
    error about eps * (mean - shift)^2 / var; var = 0 included)."""
    eps = float(jnp.finfo(stats.mean.dtype).eps)
    has = stats.weight > 0
    var = stats.m2 / jnp.where(has, stats.weight, 1.0)
    return has & (eps * (stats.mean - shift[None, :]) ** 2 > 1e-4 * var)


def _recentred(stats: SuffStats, s0, s1, s2):
    """Means and M2 from sums s0 = Σw, s1 = Σw(x − mean), s2 = Σw(x − mean)² centred on the
    first pass's class means: (mean, m2), unchanged where a class has no weight."""
    has = stats.weight > 0
    d = s1 / jnp.where(s0 > 0, s0, 1.0)
    mean = jnp.where(has, stats.mean + d, stats.mean)
    return mean, jnp.where(has, jnp.maximum(s2 - s1 * d, 0.0), stats.m2)


def stats_from_sums(class_weight, counts, s0, s1, s2, shift, n_states) -> SuffStats:
    """`SuffStats` from the raw block sums of `_blocked_sums`: counts in the one-hot layout
    (transposed, (c, width)) reordered to the flat CPT rows, and the shifted power sums
    s0 = Σw, s1 = Σw(x − shift), s2 = Σw(x − shift)² turned into means and centred M2."""
    _, rows = _onehot_layout(n_states)
    counts = counts.T
    if counts.shape[0] != len(rows) or np.any(rows != np.arange(len(rows))):
        counts = counts[rows]
    safe = jnp.where(s0 > 0, s0, 1.0)
    d = s1 / safe
    mean = jnp.where(s0 > 0, shift[None, :] + d, 0.0)
    m2 = jnp.maximum(jnp.where(s0 > 0, s2 - s1 * d, 0.0), 0.0)
    return SuffStats(class_weight, counts, s0, mean, m2, n_states)


def _chan(na, ma, qa, nb, mb, qb):
    n = na + nb
    safe = jnp.where(n > 0, n, 1.0)
    delta = mb - ma
    mean = jnp.where(n > 0, ma + delta * nb / safe, 0.0)
    m2 = qa + qb + delta * delta * na * nb / safe
    return n, mean, m2


def merge(a: SuffStats, b: SuffStats) -> SuffStats:
    """Statistics of the union of two disjoint data sets (Chan et al. pairwise update)."""
    _check_compatible(a, b)
    w, mean, m2 = _chan(a.weight, a.mean, a.m2, b.weight, b.mean, b.m2)
    return SuffStats(a.class_weight + b.class_weight, a.counts + b.counts, w, mean, m2, a.n_states)


def _check_contained(total: SuffStats, part: SuffStats, tol: float) -> None:
    """Concrete statistics only: ``part`` holds no more weight than ``total`` in any cell (beyond
    round-off). The remainder's negative cells would otherwise be clamped to 0 silently."""
    for name in ("class_weight", "counts", "weight"):
        t = np.asarray(getattr(total, name), np.float64)
        p = np.asarray(getattr(part, name), np.float64)
        over = p - t > tol * np.maximum(np.abs(t), np.abs(p))
        if over.any():
            at = tuple(int(i) for i in np.argwhere(over)[0])
            raise ValueError(
                f"part holds more weight than total in {name}[{', '.join(map(str, at))}] "
                f"({p[at]:g} > {t[at]:g}): subtract(total, part) removes rows that total "
                "contains (total = merge(part, rest)); pass the statistics in that order"
            )


def subtract(total: SuffStats, part: SuffStats) -> SuffStats:
    """Statistics of ``total`` with the rows of ``part`` removed (inverse of `merge`).

    Used for K-fold CV: training statistics of fold k = total - fold k, so all folds cost one pass.
    Eager calls check that ``part`` is no larger than ``total`` in any cell.
    """
    _check_compatible(total, part)
    na = total.weight - part.weight
    # an empty remainder (up to the dtype's round-off of the total, e.g. float32 weights summed in
    # another order) gets weight 0, mean 0 and m2 0. The test is relative to each total: weights
    # of any scale (e.g. normalised to sum 1) keep every training cell they have
    tol = max(1e-12, 64 * float(jnp.finfo(jnp.result_type(na)).eps))
    if concrete(*jax.tree.leaves((total, part))):
        _check_contained(total, part, tol)
    pos = na > tol * total.weight
    safe = jnp.where(pos, na, 1.0)
    mean = jnp.where(pos, (total.weight * total.mean - part.weight * part.mean) / safe, 0.0)
    delta = part.mean - mean
    m2 = (
        total.m2
        - part.m2
        - delta * delta * na * part.weight / jnp.where(total.weight > 0, total.weight, 1.0)
    )
    m2 = jnp.where(pos, jnp.maximum(m2, 0.0), 0.0)
    cw = total.class_weight - part.class_weight
    cw = jnp.where(cw > tol * total.class_weight, cw, 0.0)  # never negative
    counts = total.counts - part.counts
    counts = jnp.where(counts > tol * total.counts, counts, 0.0)
    return SuffStats(
        cw,
        counts,
        jnp.where(pos, na, 0.0),
        mean,
        m2,
        total.n_states,
    )


def pooled_gaussian(stats: SuffStats):
    """Weight, mean and m2 of each continuous predictor pooled over classes, shapes (r,)."""
    return pooled_moments(stats.weight, stats.mean, stats.m2)


def pooled_moments(weight, mean, m2):
    """Per-class (..., c, r) weight, mean and m2 pooled over the class axis: (..., r) each (the
    Chan et al. merge of the classes; `pooled_gaussian` of a `SuffStats`, and of the stream's
    `GaussianSummary`).

    The mean is pooled as an offset from the heaviest class's mean, so a constant column (every
    class mean the same value) pools to exactly that value with m2 exactly 0; the plain
    ``Σ w mean / Σ w`` rounds (a column of 3.7 streamed in batches: m2 > 0 in 30-40 of 86
    states), and that noise looked like spread (`has_spread`)."""
    w = weight.sum(-2)
    safe = jnp.where(w > 0, w, 1.0)
    ref = jnp.take_along_axis(mean, jnp.argmax(weight, axis=-2)[..., None, :], axis=-2)
    d = jnp.where(weight > 0, mean - ref, 0.0)
    pmean = jnp.where(w > 0, ref[..., 0, :] + (weight * d).sum(-2) / safe, 0.0)
    pm2 = m2.sum(-2) + (weight * (mean - pmean[..., None, :]) ** 2).sum(-2)
    return w, pmean, pm2


def has_spread(weight, m2):
    """Whether pooled moments (weight, m2), shapes (..., r), show any spread: m2 / weight > 0
    (False with no weight, or for a constant column, which `pooled_moments` pools exactly).

    An exact test on purpose: a relative threshold (sd > k eps |mean|) would also take a column
    that float32 stores as a few distinct values (epoch seconds over a few minutes: steps of
    128 s, an sd below eps |mean|) for a constant one and drop its information."""
    return m2 / jnp.where(weight > 0, weight, 1.0) > 0


def log_pooled_sd(weight, m2):
    """log s = 0.5 log(m2 / weight) of pooled moments, 0 without spread (`has_spread`: no value,
    or a constant column): the offset that makes a Gaussian log density that of the
    standardized value x / s."""
    var = m2 / jnp.where(weight > 0, weight, 1.0)
    ok = has_spread(weight, m2)
    return jnp.where(ok, 0.5 * jnp.log(jnp.where(ok, var, 1.0)), 0.0)


def _check_compatible(a: SuffStats, b: SuffStats) -> None:
    if a.n_states != b.n_states:
        raise ValueError(f"cannot combine statistics with n_states {a.n_states} and {b.n_states}")
    if a.counts.shape != b.counts.shape or a.mean.shape != b.mean.shape:
        raise ValueError(
            f"cannot combine statistics of shapes {a.counts.shape}/{a.mean.shape} and "
            f"{b.counts.shape}/{b.mean.shape}"
        )
