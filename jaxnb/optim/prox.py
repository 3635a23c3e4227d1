r"""Proximal operators: group soft-thresholding and Dykstra's algorithm for the prox of a sum.

References:
  Yuan & Lin, "Model selection and estimation in regression with grouped variables", JRSS B 68
  (2006) (group lasso); Bauschke & Combettes, "A Dykstra-like algorithm for two monotone
  operators", Pacific J. Optim. 4 (2008); Combettes & Pesquet, "Proximal splitting methods in
  signal processing" (2011), Sect. 10.5 (the Dykstra-like proximal algorithm).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax.tree_utils as otu
from jax import lax

from .blocks import block_expand, block_sum

__all__ = ["prox_group_l2", "group_norms", "prox_dykstra", "DykstraInfo"]


def _row_sq(d):
    """Sum of squares over every axis but the leading one: (m, ...) -> (m,)."""
    return jnp.sum(d * d, axis=tuple(range(1, d.ndim))) if d.ndim > 1 else d * d


def _group_sq(d, segment_ids, num_segments, n_states):
    """Squared norm per group of the rows of d (layouts of `prox_group_l2`)."""
    if n_states is not None:
        return block_sum(_row_sq(d), n_states)
    if segment_ids is None:
        return _row_sq(d)
    if num_segments is None:
        raise ValueError("num_segments is required with segment_ids (it fixes the output shape)")
    return jax.ops.segment_sum(_row_sq(d), segment_ids, num_segments=num_segments)


def group_norms(x, center, *, segment_ids=None, num_segments=None, n_states=None):
    r"""Euclidean norm of ``x - center`` per group (same group layout as `prox_group_l2`).

    Returns:
      (g,) array of ``||x_G - center_G||_2``.
    """
    d = jnp.asarray(x) - jnp.asarray(center)
    return safe_norm_from_sq(_group_sq(d, segment_ids, num_segments, n_states))


def safe_norm_from_sq(sq):
    """``sqrt(sq)`` whose gradient at 0 is 0 (a subgradient of the norm there), not NaN: the
    square root's infinite slope at 0 times the zero slope of ``sq`` would give 0 * inf."""
    pos = sq > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, sq, 1.0)), 0.0)


def prox_group_l2(x, center, threshold, *, segment_ids=None, num_segments=None, n_states=None):
    r"""Group soft-thresholding centred at ``center``: the prox of ``t * sum_G ||x_G - c_G||_2``.

    For each group G, with ``d_G = x_G - c_G``::

        out_G = c_G + max(0, 1 - t_G / ||d_G||_2) * d_G,

    and ``out_G = c_G`` *exactly* (bit for bit) when ``||d_G||_2 <= t_G``.

    Groups are given in one of three ways (``n_states``, ``segment_ids`` or neither):

    * leading axis (default): ``x`` has shape ``(g, ...)``; slice ``x[i]`` (all trailing entries) is
      group i.  Example: continuous predictors as ``(r, 2c)`` rows of ``[mu_i; sigma_i]``.
    * segments: ``segment_ids`` of shape ``(m,)`` labels each row of ``x`` (shape ``(m, ...)``)
      with its group in ``[0, num_segments)``; all rows with the same id (and all their trailing
      entries) form one group.  Example: a flattened CPT ``(K, c)`` with
      ``segment_ids[o_i + k] = i``.
    * CPT blocks: ``n_states`` (static tuple) says that rows ``o_i .. o_i + n_states[i] - 1`` form
      group i, the flattened-CPT layout; reduced without a scatter when all blocks have the same
      size (`jaxnb.optim.blocks`).

    Args:
      x: float array, ``(g, ...)`` or ``(m, ...)``.
      center: array broadcastable to ``x`` (the prox centre, e.g. Omega^(0)).
      threshold: ``t_G >= 0``, scalar or shape ``(g,)`` / ``(num_segments,)`` (penalty x step size);
        ``jnp.inf`` forces the group to the centre.
      segment_ids: optional int ``(m,)`` group id of each row (static length).
      num_segments: number of groups when ``segment_ids`` is given (static).
      n_states: static block sizes of a flattened CPT (instead of ``segment_ids``).

    Returns:
      Array shaped like ``x``. With ``threshold = 0`` it equals ``x`` (up to one rounding of
      ``c + (x - c)``).
    """
    if not isinstance(threshold, jax.core.Tracer) and (np.asarray(threshold) < 0).any():
        raise ValueError(f"threshold must be >= 0 (penalty x step size); got {threshold!r}")
    x = jnp.asarray(x)
    center = jnp.broadcast_to(jnp.asarray(center, x.dtype), x.shape)
    d = x - center
    sq = _group_sq(d, segment_ids, num_segments, n_states)
    thr = jnp.broadcast_to(jnp.asarray(threshold, x.dtype), sq.shape)
    # "not <=" rather than ">": a NaN group (or threshold) stays NaN instead of looking removed
    keep = ~(sq <= thr * thr)
    # Safe norm: avoids 0/0 (and NaN gradients) for groups already at the centre.
    norm = jnp.sqrt(jnp.where(keep, sq, 1.0))
    scale = jnp.where(keep, 1.0 - thr / norm, 0.0)
    if n_states is not None:
        scale, keep = block_expand(scale, n_states), block_expand(keep, n_states)
    elif segment_ids is not None:
        scale, keep = scale[segment_ids], keep[segment_ids]
    shape = scale.shape + (1,) * (x.ndim - 1)
    scale, keep = scale.reshape(shape), keep.reshape(shape)
    return jnp.where(keep, center + scale * d, center)


class DykstraInfo(NamedTuple):
    """Outcome of `prox_dykstra`: iterations used and the last change / gap (max-abs)."""

    num_steps: jax.Array
    change: jax.Array
    converged: jax.Array


def prox_dykstra(
    z, prox_g_fn, project_fn, *, max_steps: int = 100, tol: float = 1e-12, rtol: float | None = None
):
    r"""Prox of a sum ``g + i_C`` by the Dykstra-like proximal algorithm.

    Computes ``argmin_x 0.5 ||x - z||^2 + g(x) + i_C(x)`` from the two simple maps ``prox_g`` and
    ``P_C`` (Bauschke & Combettes 2008; Combettes & Pesquet 2011, Alg. 10.x)::

        x_0 = z, p_0 = q_0 = 0
        y_n     = prox_g(x_n + p_n);   p_{n+1} = x_n + p_n - y_n
        x_{n+1} = P_C(y_n + q_n);      q_{n+1} = y_n + q_n - x_{n+1}

    Both ``x_n`` and ``y_n`` converge to the prox of the sum; composing the two maps once
    (``P_C(prox_g(z))``) is *not* that prox in general.  The loop stops when the max-abs change of
    ``x`` and the gap ``|x - y|`` are both ``<= tol + rtol * max|x|`` or after ``max_steps``
    iterations; after the first pass the gap alone decides (``prox_g(z)`` already in C is the
    prox of the sum). The relative term is the rounding floor of the iteration: once the change is
    a few ulps of ``x`` it cannot shrink further, and an absolute ``tol`` below that floor (e.g.
    the float64 default ``1e-12`` under float32) would otherwise run every call to ``max_steps``.

    Args:
      z: pytree, the point to evaluate the prox at.
      prox_g_fn: ``x -> prox_g(x)`` (pytree to pytree).
      project_fn: ``x -> P_C(x)``, the projection onto a closed convex set (applied last, so
        ``x`` is always feasible).
      max_steps: iteration cap (static).
      tol: absolute stopping tolerance on the max-abs change and gap.
      rtol: relative stopping tolerance (times ``max|x|``); default ``8 * eps`` of the dtype of
        ``z``, i.e. a few ulps (negligible against ``tol`` in float64, decisive in float32).

    Returns:
      ``(x, y, info)``: ``x`` the last projected iterate (in C), ``y`` the last ``prox_g`` iterate
      (exactly at the prox centre for groups the penalty removed), and a `DykstraInfo`.
    """
    zeros = otu.tree_zeros_like(z)

    def body(carry):
        x, p, q, _, k, _ = carry
        xp = otu.tree_add(x, p)
        y = prox_g_fn(xp)
        p = otu.tree_sub(xp, y)
        yq = otu.tree_add(y, q)
        x_new = project_fn(yq)
        q = otu.tree_sub(yq, x_new)
        gap = otu.tree_max(
            jax.tree.map(lambda a, b: jnp.max(jnp.abs(a - b), initial=0.0), x_new, y)
        )
        moved = otu.tree_max(
            jax.tree.map(lambda a, b: jnp.max(jnp.abs(a - b), initial=0.0), x_new, x)
        )
        # First pass (p = q = 0): y = prox_g(z); if it is already in C (gap within tolerance) it
        # satisfies the optimality condition of the sum, z - y in ∂g(y) and 0 in N_C(y), so it is
        # the prox and the loop may stop; a second pass would only reproduce it.
        change = jnp.where(k == 0, gap, jnp.maximum(moved, gap))
        return x_new, p, q, y, k + 1, change

    dtype = jax.tree.leaves(z)[0].dtype
    if rtol is None:
        rtol = 8.0 * float(jnp.finfo(dtype).eps)

    def cond(carry):
        x, *_, k, change = carry
        scale = otu.tree_max(jax.tree.map(lambda a: jnp.max(jnp.abs(a), initial=0.0), x))
        return (k < max_steps) & (change > tol + rtol * scale)

    init = (z, zeros, zeros, z, jnp.asarray(0, jnp.int32), jnp.asarray(jnp.inf, dtype))
    x, _, _, y, k, change = lax.while_loop(cond, body, init)
    scale = otu.tree_max(jax.tree.map(lambda a: jnp.max(jnp.abs(a), initial=0.0), x))
    return x, y, DykstraInfo(k, change, change <= tol + rtol * scale)
