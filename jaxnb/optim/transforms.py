r"""Optax transformations for per-class weight models (online weighted NB, Stream eq 2).

A weighted NB scores class k by ``b_k + Σ_i w_ik log P(x_i | k)``. With weak predictors the per-
class log-likelihoods are nearly equal, so the gradient's useful direction (the weight shared by the
classes) is small next to the class-contrast direction. Diagonal optimizers (Adam, AdaGrad) scale
each coordinate (w_i0, w_i1, ...) separately and cannot see that rotation. `contrast_basis` runs any
optax optimizer on the weights expressed in an orthonormal class-mean + Helmert-contrast basis and
maps the updates back: the model and its gradient are unchanged (an orthogonal change of variables,
so plain SGD gives identical updates); only a diagonal method's per-coordinate scaling changes.
``experiments/stream_tables.py`` documents the choice it made with it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .._matmul import matmul

__all__ = ["contrast_basis", "helmert_basis", "inv_sqrt_schedule"]


def helmert_basis(n_classes: int) -> np.ndarray:
    """``(c, c)`` orthonormal rows: the class mean ``1/sqrt(c)``, then the Helmert contrasts."""
    if not isinstance(n_classes, (int, np.integer)) or isinstance(n_classes, bool) or n_classes < 1:
        raise ValueError(f"n_classes must be an int >= 1; got n_classes={n_classes!r}")
    c = int(n_classes)
    Q = np.zeros((c, c))
    Q[0] = 1 / np.sqrt(c)
    for k in range(1, c):
        Q[k, :k], Q[k, k] = 1.0, -k
        Q[k] /= np.sqrt(k * (k + 1))
    return Q


def contrast_basis(
    inner: optax.GradientTransformation, n_classes: int = 2, freeze_contrast: bool = False
) -> optax.GradientTransformation:
    """Run ``inner`` on every leaf rotated to the class basis (class axis last) and rotate back.

    Each leaf ``a`` (last axis = classes, e.g. weights (p, c) and bias (c,)) is seen by ``inner`` as
    ``a @ Q.T`` with ``Q = helmert_basis(n_classes)``; the update is mapped back by ``@ Q``.

    Args:
      inner: any optax transformation (e.g. ``optax.adam(1e-3)``).
      n_classes: size of the last axis of every leaf.
      freeze_contrast: zero the contrast components of the gradient, so weights that start tied
        across classes stay tied (one weight per predictor, the form of averaged NB).
    """
    if not isinstance(inner, optax.GradientTransformation):
        raise TypeError(
            f"inner must be an optax.GradientTransformation; got {type(inner).__name__}"
        )
    Qn = helmert_basis(n_classes)

    def rot(t):
        return jax.tree.map(lambda a: matmul(a, jnp.asarray(Qn.T, a.dtype)), t)

    def unrot(t):
        return jax.tree.map(lambda a: matmul(a, jnp.asarray(Qn, a.dtype)), t)

    def init(params):
        return inner.init(rot(params))

    def update(g, state, params=None):
        g = rot(g)
        if freeze_contrast:
            g = jax.tree.map(lambda a: a.at[..., 1:].set(0.0), g)
        u, state = inner.update(g, state, None if params is None else rot(params))
        return unrot(u), state

    return optax.GradientTransformation(init, update)


def inv_sqrt_schedule(rate: float, t0: float):
    """Step size ``rate / sqrt(1 + t / t0)`` at optimizer step t (an anytime schedule)."""
    if not rate > 0 or not t0 > 0:
        raise ValueError(f"rate and t0 must be > 0; got rate={rate!r}, t0={t0!r}")
    return lambda t: rate / jnp.sqrt(1.0 + t / t0)
