"""Batch helpers: one `lax.cond` branch for a whole `jax.vmap` batch, and the size buckets that
let batches of nearby sizes share one compiled program.

Under `jax.vmap` a `lax.cond` whose predicate is batched becomes a select that runs both branches
for every batch element. Where the two branches are two ways to compute the same result (a fast
one, and an exact fallback that is right everywhere but costs more), `any_in_batch` turns the
predicate into one flag for the batch, so the cond stays a cond: the fallback runs for the whole
batch when one element needs it, and not at all otherwise.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp


def size_bucket(n: int, granule: int = 16) -> int:
    """The size a batch of n rows (or chunks) is padded to: a multiple of ``granule``, then 8 sizes
    per octave (at most 1/8 of padding; 0 stays 0). Compiled functions are specialized to their
    shapes, so padding to these sizes bounds the programs that varying batch sizes compile."""
    g = max(granule, 1 << max(0, n.bit_length() - 4))
    return -(-n // g) * g


@jax.custom_batching.custom_vmap
def any_in_batch(flag):
    """``flag`` (a bool scalar) itself; under `jax.vmap`, one unbatched flag: any of the batch's.

    Callers that need each element's own branch exactly (bit for bit as without vmap) can select
    with their own, still batched, flag inside the taken branch."""
    return flag


@any_in_batch.def_vmap
def _any_in_batch_vmap(axis_size, in_batched, flag):
    # the call again: under nested vmaps the result is then one flag for all their axes
    return any_in_batch(jnp.any(flag)), False


def fast_or_fallback(use_fast, fast, fallback):
    """``fast()`` where ``use_fast`` (a bool scalar), else ``fallback()``, as one `lax.cond`.

    Under `jax.vmap` the fallback branch runs (for the whole batch) only when some element needs
    it, and there each element still selects its own result, so a batched call equals its
    unbatched calls bit for bit. ``fast`` should be cheap, or values already computed: the
    fallback branch evaluates it again for the elements that keep it."""
    return jax.lax.cond(
        ~any_in_batch(~use_fast),
        fast,
        lambda: jax.tree.map(partial(jnp.where, use_fast), fast(), fallback()),
    )
