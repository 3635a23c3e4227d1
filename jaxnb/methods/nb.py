r"""Classical naive Bayes over mixed discrete and Gaussian predictors, as pure jitted functions."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import concrete
from .._dtypes import float_dtype
from ..params import NBParams, fit_marginal, fit_mle
from ..suffstats import SuffStats, accumulate

__all__ = ["fit_stats", "fit_nb", "fit_reference_params"]


def fit_stats(
    codes, values, y, weight=None, *, n_states, n_classes, block_size=None, check_input=True
) -> SuffStats:
    """Sufficient statistics from integer class codes ``y`` (n,) in one jitted pass.

    Args:
      codes: (n, q) int discrete codes (negative = missing).
      values: (n, r) float continuous values (NaN = missing).
      y: (n,) int class codes in [0, n_classes).
      weight: optional (n,) sample weights.
      n_states, n_classes: static shape information.
      block_size: optional rows per scanned block (see `jaxnb.suffstats.accumulate`).
      check_input: check shapes, code and label ranges and weights in NumPy first when the
        inputs are concrete (skipped under ``jit``/``vmap``, where they are traced, and by
        callers that validated the rows already). One-hot counting would otherwise drop a code
        >= n_states or a label >= n_classes silently.
    """
    n_states = _static_n_states(n_states)
    if check_input and concrete(codes, values, y, weight):
        _check_stats_inputs(codes, values, y, weight, n_states, n_classes)
    return _fit_stats(
        codes, values, y, weight, n_states=n_states, n_classes=n_classes, block_size=block_size
    )


def _static_n_states(n_states):
    if isinstance(n_states, int | np.integer) or not hasattr(n_states, "__len__"):
        raise TypeError(
            f"n_states must be a tuple with one state count per discrete column; got {n_states!r}"
        )
    return tuple(int(m) for m in n_states)


def _check_stats_inputs(codes, values, y, weight, n_states, n_classes):
    codes, values, y = np.asarray(codes), np.asarray(values), np.asarray(y)
    n = y.shape[0] if y.ndim == 1 else None
    if y.ndim != 1:
        raise ValueError(f"y must have shape (n,); got {y.shape}")
    if codes.shape != (n, len(n_states)):
        raise ValueError(
            f"codes must have shape (n, len(n_states)) = ({n}, {len(n_states)}); got {codes.shape}"
        )
    if values.ndim != 2 or values.shape[0] != n:
        raise ValueError(f"values must have shape ({n}, r); got {values.shape}")
    if codes.size and codes.dtype.kind not in "iu":
        raise TypeError(f"codes must be integers; got dtype {codes.dtype}")
    if codes.size and (codes >= np.asarray(n_states)[None, :]).any():
        col = int(np.flatnonzero((codes >= np.asarray(n_states)[None, :]).any(0))[0])
        raise ValueError(
            f"codes[:, {col}] holds {int(codes[:, col].max())} but n_states[{col}] = "
            f"{n_states[col]}; codes must lie in [0, n_states) (negative = missing)"
        )
    if y.dtype.kind not in "iu" or (y.size and (y.min() < 0 or y.max() >= n_classes)):
        raise ValueError(
            f"y must hold integer class codes in [0, n_classes={n_classes}); got dtype {y.dtype}"
            + (f", range [{y.min()}, {y.max()}]" if y.size and y.dtype.kind in "iuf" else "")
        )
    if values.size and np.isinf(values).any():
        raise ValueError("values contain inf; remove or clip them (NaN marks a missing value)")
    if weight is not None:
        w = np.asarray(weight)
        if w.shape != (n,):
            raise ValueError(f"weight must have shape ({n},); got {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("weight must be finite and >= 0")


@partial(jax.jit, static_argnames=("n_states", "n_classes", "block_size"))
def _fit_stats(codes, values, y, weight=None, *, n_states, n_classes, block_size=None):
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
    stats = _fit_stats(
        codes, values, y, weight, n_states=n_states, n_classes=n_classes, block_size=block_size
    )
    return fit_mle(stats, alpha, var_smoothing)


@jax.jit
def fit_reference_params(stats: SuffStats, alpha=1.0, var_smoothing=1e-9):
    """Both reference parameter sets (Ω⁽¹⁾, Ω⁽⁰⁾) from statistics."""
    return fit_mle(stats, alpha, var_smoothing), fit_marginal(stats, alpha, var_smoothing)
