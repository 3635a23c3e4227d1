r"""Per-predictor reductions over a flattened CPT (K rows grouped by predictor), scatter-free when
every predictor has the same number of states.

A flattened CPT stacks predictor i's ``n_states[i]`` rows one after the other (docs/CONVENTIONS.md).
Reducing rows per predictor is a segment reduction (an XLA scatter) and broadcasting a per-predictor
value back to its rows is a gather. When all predictors have M states -- the usual case (binary
data, a fixed discretization, the Table-1 generator) -- the same results come from reshaping to
``(q, M, ...)``: plain reductions and broadcasts that XLA fuses with the surrounding arithmetic.
On CPU the scatter and gather are separate, serial kernels, and under ``vmap`` they become batched
scatters, several times slower per element than a fused reduction; the reshape form removes them
from the group-lasso solver's inner loop. Results are identical up to the order of the additions
(at most a few ulps).

All functions take ``n_states`` as a static tuple and work under ``jit``, ``vmap`` and ``grad``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["uniform_states", "segment_ids", "block_sum", "block_max", "block_expand"]


def uniform_states(n_states) -> int | None:
    """M if every predictor has M states (and there is at least one), else None (static)."""
    n_states = tuple(int(m) for m in n_states)
    if n_states and all(m == n_states[0] for m in n_states):
        return n_states[0]
    return None


def segment_ids(n_states):
    """(K,) int32 predictor index of each row of the flattened CPT (a constant)."""
    return jnp.asarray(np.repeat(np.arange(len(n_states), dtype=np.int32), n_states))


def block_sum(x, n_states):
    """Sum the rows of each predictor: (K, ...) -> (q, ...)."""
    q, M = len(n_states), uniform_states(n_states)
    if M is not None:
        return jnp.sum(x.reshape((q, M) + x.shape[1:]), axis=1)
    return jax.ops.segment_sum(x, segment_ids(n_states), num_segments=q)


def block_max(x, n_states):
    """Maximum over the rows of each predictor: (K, ...) -> (q, ...)."""
    q, M = len(n_states), uniform_states(n_states)
    if M is not None:
        return jnp.max(x.reshape((q, M) + x.shape[1:]), axis=1)
    return jax.ops.segment_max(x, segment_ids(n_states), num_segments=q)


def block_expand(g, n_states):
    """Repeat each predictor's value over its rows: (q, ...) -> (K, ...)."""
    q, M = len(n_states), uniform_states(n_states)
    if M is not None:
        return jnp.broadcast_to(g[:, None], (q, M) + g.shape[1:]).reshape((q * M,) + g.shape[1:])
    return g[segment_ids(n_states)]
