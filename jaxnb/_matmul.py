"""Contractions at full float32 precision on every backend.

XLA's default precision for a float32 matrix product lets GPUs and TPUs round the operands to
fewer mantissa bits (TF32's 10 on NVIDIA Ampere and later, bfloat16 passes on TPU). For this package
that is wrong, not just less precise: sufficient statistics are contractions of one-hot indicators
with weights, and on an H200 in float32 they gave class counts of 3.0007 for 3 rows and CPT cells
2e-4 away from float64, where float32 arithmetic is good to 1e-7. Every matrix product and einsum
of the package therefore goes through `einsum` / `matmul` below, which ask for
``Precision.HIGHEST`` (true float32 products). XLA:CPU computes float32 products in float32 either
way, so on CPU nothing changes; float64 is unaffected everywhere.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

HIGHEST = jax.lax.Precision.HIGHEST


def einsum(subscripts: str, *operands, **kwargs):
    """`jnp.einsum` with ``precision=HIGHEST``."""
    return jnp.einsum(subscripts, *operands, precision=HIGHEST, **kwargs)


def matmul(a, b):
    """``a @ b`` (`jnp.matmul`) with ``precision=HIGHEST``."""
    return jnp.matmul(a, b, precision=HIGHEST)
