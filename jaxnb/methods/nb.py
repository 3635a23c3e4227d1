r"""Classical naive Bayes over mixed discrete and Gaussian predictors, as pure jitted functions."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from .._dtypes import float_dtype
from ..params import NBParams, fit_marginal, fit_mle
from ..suffstats import SuffStats, accumulate

__all__ = ["fit_stats", "fit_nb", "fit_reference_params"]


@partial(jax.jit, static_argnames=("n_states", "n_classes", "block_size"))
def fit_stats(codes, values, y, weight=None, *, n_states, n_classes, block_size=None) -> SuffStats:
    """Sufficient statistics from integer class codes ``y`` (n,) in one jitted pass.

    Args:
      codes: (n, q) int discrete codes (negative = missing).
      values: (n, r) float continuous values (NaN = missing).
      y: (n,) int class codes in [0, n_classes).
      weight: optional (n,) sample weights.
      n_states, n_classes: static shape information.
      block_size: optional rows per scanned block (see `jaxnb.suffstats.accumulate`).
    """
    dtype = values.dtype if jnp.issubdtype(values.dtype, jnp.floating) else float_dtype()
    Y = jax.nn.one_hot(y, n_classes, dtype=dtype)
    return accumulate(codes, values, Y, weight, n_states=n_states, block_size=block_size)


@partial(jax.jit, static_argnames=("n_states", "n_classes", "block_size"))
def fit_nb(
    codes,
    values,
    y,
    weight=None,
    alpha=1.0,
    var_smoothing=1e-9,
    *,
    n_states,
    n_classes,
    block_size=None,
) -> NBParams:
    r"""Naive Bayes MLE Ω⁽¹⁾ (Lidstone ``alpha``, variance floor) from raw data in one jitted
    call."""
    stats = fit_stats(
        codes, values, y, weight, n_states=n_states, n_classes=n_classes, block_size=block_size
    )
    return fit_mle(stats, alpha, var_smoothing)


@jax.jit
def fit_reference_params(stats: SuffStats, alpha=1.0, var_smoothing=1e-9):
    """Both reference parameter sets (Ω⁽¹⁾, Ω⁽⁰⁾) from statistics."""
    return fit_mle(stats, alpha, var_smoothing), fit_marginal(stats, alpha, var_smoothing)
