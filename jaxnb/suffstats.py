r"""Sufficient statistics of naive Bayes: accumulate, merge, subtract.

Everything NB needs from a data set is a handful of weighted sums per class:

* ``class_weight[j]``  :math:`N_j = \sum_r w_r [y_r = j]`;
* ``counts[o_i + k, j]``  :math:`N_{ijk} = \sum_r w_r [y_r = j][x_{ri} = k]` for discrete predictors
  (flattened over predictor and state, ``o_i`` = offset of predictor i);
* ``weight, mean, m2`` per class and continuous predictor: weighted count, mean and sum of squared
  deviations from the class mean (the "parallel" form of Chan, Golub & LeVeque 1979, which merges and
  subtracts stably).

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

__all__ = [
    "SuffStats",
    "accumulate",
    "merge",
    "subtract",
    "empty_stats",
    "pooled_gaussian",
    "state_offsets",
    "state_segments",
]


class SuffStats(eqx.Module):
    """Weighted sufficient statistics of a mixed discrete/continuous data set.

    Attributes:
      class_weight: (c,) weighted class counts N_j.
      counts: (K, c) weighted counts N_ijk, rows ``offsets[i]:offsets[i]+n_states[i]`` for predictor i.
      weight: (c, r) weighted count of observed (non-missing) values per class and continuous predictor.
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
    return np.concatenate([[0], np.cumsum(n_states)[:-1]]).astype(np.int32) if n_states else (
        np.zeros((0,), np.int32)
    )


def state_segments(n_states: tuple[int, ...]) -> np.ndarray:
    """Predictor index of each row of a flattened CPT (static, NumPy), shape (K,)."""
    return np.repeat(np.arange(len(n_states), dtype=np.int32), n_states)


def empty_stats(n_states, n_continuous: int, n_classes: int, dtype=None) -> SuffStats:
    """All-zero statistics: the identity element of `merge`."""
    dtype = dtype or jnp.zeros(()).dtype
    n_states = tuple(int(m) for m in n_states)
    K = int(sum(n_states))
    z = lambda *s: jnp.zeros(s, dtype)
    return SuffStats(z(n_classes), z(K, n_classes), z(n_classes, n_continuous),
                     z(n_classes, n_continuous), z(n_classes, n_continuous), n_states)


def _block_sums(codes, values, Yw, n_states, shift):
    """Counts and shifted power sums of one block of rows (float matrix products, no scatter)."""
    dtype = Yw.dtype
    q = len(n_states)
    if q:
        M = max(n_states)
        # (b, q, M) one-hot in float; contracting over rows is one matmul (q*M, b) @ (b, c).
        onehot = (codes[:, :, None] == jnp.arange(M, dtype=codes.dtype)[None, None, :]).astype(dtype)
        padded = jnp.einsum("bqm,bc->qmc", onehot, Yw)
        valid = np.concatenate([np.arange(m) + i * M for i, m in enumerate(n_states)])
        counts = padded.reshape(q * M, -1)[valid]
    else:
        counts = jnp.zeros((0, Yw.shape[1]), dtype)
    obs = jnp.isfinite(values)
    x = jnp.where(obs, values - shift[None, :], 0.0).astype(dtype)
    obs_f = obs.astype(dtype)
    s0 = Yw.T @ obs_f
    s1 = Yw.T @ x
    s2 = Yw.T @ (x * x)
    return counts, s0, s1, s2


def accumulate(codes, values, Y, weight=None, *, n_states, block_size: int | None = None) -> SuffStats:
    r"""Sufficient statistics of one data set.

    Args:
      codes: int (n, q) discrete codes in ``[0, n_states[i])``; negative codes are missing (not counted).
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
    dtype = jnp.result_type(values.dtype, Y.dtype, jnp.zeros(()).dtype)
    if not jnp.issubdtype(dtype, jnp.floating):
        dtype = jnp.zeros(()).dtype
    Y = Y.astype(dtype)
    Yw = Y if weight is None else Y * weight.astype(dtype)[:, None]
    n = Y.shape[0]
    head = values[: min(n, block_size or n)]
    obs = jnp.isfinite(head)
    shift = jnp.sum(jnp.where(obs, head, 0.0), 0) / jnp.maximum(jnp.sum(obs, 0), 1)
    shift = lax.stop_gradient(shift.astype(dtype))

    if block_size is None or block_size >= n:
        counts, s0, s1, s2 = _block_sums(codes, values, Yw, n_states, shift)
    else:
        nb, rem = divmod(n, block_size)

        def body(carry, blk):
            out = _block_sums(*blk, n_states, shift)
            return jax.tree.map(jnp.add, carry, out), None

        main = (codes[: nb * block_size].reshape(nb, block_size, -1),
                values[: nb * block_size].reshape(nb, block_size, -1),
                Yw[: nb * block_size].reshape(nb, block_size, -1))
        init = _block_sums(codes[:0], values[:0], Yw[:0], n_states, shift)
        acc, _ = lax.scan(body, init, main)
        if rem:
            tail = _block_sums(codes[nb * block_size:], values[nb * block_size:],
                               Yw[nb * block_size:], n_states, shift)
            acc = jax.tree.map(jnp.add, acc, tail)
        counts, s0, s1, s2 = acc

    safe = jnp.where(s0 > 0, s0, 1.0)
    d = s1 / safe
    mean = jnp.where(s0 > 0, shift[None, :] + d, 0.0)
    m2 = jnp.maximum(jnp.where(s0 > 0, s2 - s1 * d, 0.0), 0.0)
    return SuffStats(Yw.sum(0), counts, s0, mean, m2, n_states)


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


def subtract(total: SuffStats, part: SuffStats) -> SuffStats:
    """Statistics of ``total`` with the rows of ``part`` removed (inverse of `merge`).

    Used for K-fold CV: training statistics of fold k = total - fold k, so all folds cost one pass.
    """
    _check_compatible(total, part)
    na = total.weight - part.weight
    # tolerate tiny negative round-off; an empty remainder gets mean 0 and m2 0.
    pos = na > 1e-12 * jnp.maximum(total.weight, 1.0)
    safe = jnp.where(pos, na, 1.0)
    mean = jnp.where(pos, (total.weight * total.mean - part.weight * part.mean) / safe, 0.0)
    delta = part.mean - mean
    m2 = total.m2 - part.m2 - delta * delta * na * part.weight / jnp.where(
        total.weight > 0, total.weight, 1.0)
    m2 = jnp.where(pos, jnp.maximum(m2, 0.0), 0.0)
    return SuffStats(total.class_weight - part.class_weight, total.counts - part.counts,
                     jnp.where(pos, na, 0.0), mean, m2, total.n_states)


def pooled_gaussian(stats: SuffStats):
    """Weight, mean and m2 of each continuous predictor pooled over classes, shapes (r,)."""
    w = stats.weight.sum(-2)
    safe = jnp.where(w > 0, w, 1.0)
    mean = (stats.weight * stats.mean).sum(-2) / safe
    m2 = stats.m2.sum(-2) + (stats.weight * (stats.mean - mean[..., None, :]) ** 2).sum(-2)
    return w, mean, m2


def _check_compatible(a: SuffStats, b: SuffStats) -> None:
    if a.n_states != b.n_states:
        raise ValueError(f"cannot combine statistics with n_states {a.n_states} and {b.n_states}")
    if a.counts.shape != b.counts.shape or a.mean.shape != b.mean.shape:
        raise ValueError(
            f"cannot combine statistics of shapes {a.counts.shape}/{a.mean.shape} and "
            f"{b.counts.shape}/{b.mean.shape}")
