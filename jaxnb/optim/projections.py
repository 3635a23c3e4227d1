r"""Euclidean projections onto simple convex sets: simplex, flattened CPT blocks, boxes.

All functions are pure, shape-stable and work under ``jit``, ``vmap`` and ``grad`` (the projections
are piecewise linear, so their derivatives exist almost everywhere).

References:
  Held, Wolfe & Crowder (1974); Duchi, Shalev-Shwartz, Singer & Chandra, "Efficient projections onto
  the l1-ball for learning in high dimensions", ICML 2008, Fig. 1 (the sort-based algorithm);
  Condat, "Fast projection onto the simplex and the l1 ball", Math. Program. 158 (2016).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np
from jax import lax

from .blocks import block_expand, block_sum, uniform_states

__all__ = ["project_simplex", "project_cpt", "project_cpt_affine", "project_box"]


_PAIRWISE_MAX = 8  # simplices up to this size use the sort-free threshold


def _simplex_threshold_small(v, axis, valid=None):
    r"""The threshold of `_simplex_threshold` without a sort, for short simplices along ``axis``
    (m <= ``_PAIRWISE_MAX``, static); returned with ``axis`` kept (size 1).

    With f(k) = (sum_{l<=k} u_l - 1) / k over the decreasingly sorted u, the sort-based rule's
    tau = f(rho) is also max_k f(k): f(k) is the running mean of f(k-1) and u_k, so it increases
    exactly while u_k > f(k-1), i.e. for k <= rho, and does not increase after. Every prefix
    {l : u_l >= v_i} of the sorted order is reached from an entry i without sorting (a tie group
    contributes its end, where f is extremal within the group), so
    ``tau = max_i (sum_{j: v_j >= v_i} v_j - 1) / #{j : v_j >= v_i}`` over valid i and j.

    The O(m^2) comparisons are written out over the m slices along ``axis``: only elementwise
    operations, which XLA fuses into one loop (a sort custom call, or an (..., m, m) comparison
    tensor reduced over a tiny minor axis, are separate kernels that dominate small and batched
    solver steps on CPU). ``valid`` (same shape as ``v``, optional) masks out padding entries.
    """
    m = v.shape[axis]
    xs = [lax.index_in_dim(v, i, axis, keepdims=True) for i in range(m)]
    oks = (
        None
        if valid is None
        else [lax.index_in_dim(valid, i, axis, keepdims=True) for i in range(m)]
    )
    tau = None
    for i, xi in enumerate(xs):
        count = jnp.zeros_like(xi)
        total = jnp.zeros_like(xi)
        for j, xj in enumerate(xs):
            ge = xj >= xi if oks is None else oks[j] & (xj >= xi)
            count = count + ge.astype(v.dtype)
            total = total + jnp.where(ge, xj, 0.0)
        f = (total - 1.0) / jnp.maximum(count, 1.0)  # count >= 1 for a valid i (xi >= xi)
        if oks is not None:
            f = jnp.where(oks[i], f, -jnp.inf)
        tau = f if tau is None else jnp.maximum(tau, f)
    return tau


def _simplex_threshold(v, valid):
    r"""Threshold tau of the sort-based simplex projection along the last axis.

    The projection is ``max(v - tau, 0)`` with ``tau = (sum_{k<=rho} u_k - 1) / rho`` where ``u`` is
    ``v`` sorted in decreasing order and ``rho = max{k : u_k - (sum_{l<=k} u_l - 1) / k > 0}``
    (Duchi et al. 2008, Fig. 1). Entries with ``valid == False`` are excluded: they sort last (as
    ``-inf``) and are masked out of the cumulative sum and of the choice of ``rho``, so a ragged set
    of simplices can share one padded array. Short simplices (m <= ``_PAIRWISE_MAX``) take the
    equivalent sort-free form `_simplex_threshold_small`.
    """
    if v.shape[-1] <= _PAIRWISE_MAX:
        return _simplex_threshold_small(v, -1, valid)
    return _simplex_threshold_sorted(v, valid)


def _simplex_threshold_sorted(v, valid):
    """The sort-based threshold (any m); see `_simplex_threshold`."""
    m = v.shape[-1]
    u = jnp.where(valid, v, -jnp.inf)
    u = -jnp.sort(-u, axis=-1)  # decreasing; invalid (-inf) entries last
    n_valid = jnp.sum(valid, axis=-1, keepdims=True)
    ranks = jnp.arange(1, m + 1, dtype=v.dtype).reshape((1,) * (v.ndim - 1) + (m,))
    in_range = ranks <= n_valid
    u = jnp.where(in_range, u, 0.0)
    css = jnp.cumsum(u, axis=-1)
    cond = in_range & (u - (css - 1.0) / ranks > 0)
    # rho >= 1 always holds for a non-empty simplex (k = 1 satisfies the condition).
    rho = jnp.maximum(jnp.sum(cond, axis=-1, keepdims=True), 1)
    css_rho = jnp.take_along_axis(css, rho - 1, axis=-1)
    return (css_rho - 1.0) / rho.astype(v.dtype)


def project_simplex(v, axis: int = 0):
    r"""Project every slice of ``v`` along ``axis`` onto the probability simplex.

    Computes ``argmin_{x >= 0, sum(x) = 1} ||x - v||_2`` independently for each slice, by the exact
    sort-based algorithm (O(m log m) per slice, batched): ``x = max(v - tau, 0)``.

    Args:
      v: float array; the simplex dimension is ``axis`` (default 0, the state axis of a CPT column
        block of shape (k, c)).
      axis: axis along which entries must sum to one.

    Returns:
      Array of the same shape and dtype as ``v``; each slice along ``axis`` is non-negative and
      sums to one (up to rounding).
    """
    v = jnp.asarray(v)
    if v.ndim == 0:
        raise ValueError("project_simplex needs at least 1-D input; got a scalar")
    if v.shape[axis] <= _PAIRWISE_MAX:
        return jnp.maximum(v - _simplex_threshold_small(v, axis), 0.0)
    w = jnp.moveaxis(v, axis, -1)
    tau = _simplex_threshold(w, jnp.ones(w.shape, bool))
    return jnp.moveaxis(jnp.maximum(w - tau, 0.0), -1, axis)


@functools.lru_cache(maxsize=128)
def _cpt_layout(n_states: tuple[int, ...]):
    """Static gather indices between a flattened CPT (K rows) and a padded (q, M) layout."""
    q = len(n_states)
    M = max(n_states)
    offsets = np.concatenate([[0], np.cumsum(n_states)[:-1]]).astype(np.int64)
    local = np.arange(M)[None, :]
    valid = local < np.asarray(n_states)[:, None]  # (q, M)
    # Padded position (i, k) reads row offsets[i] + k; padding reads row 0 and is masked out.
    rows = np.where(valid, offsets[:, None] + local, 0).astype(np.int32)
    seg = np.repeat(np.arange(q), n_states)
    back = (seg * M + np.concatenate([np.arange(m) for m in n_states])).astype(np.int32)  # (K,)
    return rows, valid, back


def _cpt_blocks(a, n_states):
    """(K, ...) flattened CPT -> (q, ..., M) padded blocks (state axis last) and the validity
    mask (q, 1, ..., 1, M); padding entries read row 0 and must be masked by the caller."""
    q, M = len(n_states), max(n_states)
    if uniform_states(n_states) is not None:  # no padding: a reshape instead of a gather
        blocks = a.reshape((q, M) + a.shape[1:])
        valid = np.ones((q, M), bool)
    else:
        rows, valid, _ = _cpt_layout(n_states)
        blocks = a[rows]
    blocks = jnp.moveaxis(blocks, 1, -1)
    return blocks, jnp.asarray(valid).reshape((q,) + (1,) * (blocks.ndim - 2) + (M,))


def _cpt_unblocks(blocks, n_states):
    """Inverse of `_cpt_blocks`: (q, ..., M) -> (K, ...)."""
    q, M = blocks.shape[0], blocks.shape[-1]
    flat = jnp.moveaxis(blocks, -1, 1).reshape((q * M,) + blocks.shape[1:-1])
    return flat if uniform_states(n_states) is not None else flat[_cpt_layout(n_states)[2]]


def _check_n_states(cpt, n_states):
    n_states = tuple(int(m) for m in n_states)
    if any(m < 1 for m in n_states):
        raise ValueError(f"n_states entries must be >= 1; got {n_states=}")
    if cpt.shape[0] != sum(n_states):
        raise ValueError(
            f"cpt has {cpt.shape[0]} rows but sum(n_states) = {sum(n_states)}; pass the flattened"
            " CPT of shape (K, c) with K = sum(n_states)"
        )
    return n_states


def project_cpt(cpt, n_states):
    r"""Project each predictor's column block of a flattened CPT onto the simplex.

    For every discrete predictor i and column j, ``cpt[o_i:o_i + n_states[i], j]`` (``o_i`` the
    offset of predictor i) is replaced by its Euclidean projection onto the probability simplex. No
    Python loop over predictors: the K rows are gathered into a padded ``(q, M, c)`` array (``M =
    max(n_states)``), the padding is masked out of the sort-based projection (it sorts last as
    ``-inf`` and never enters the threshold), and the result is gathered back to ``(K, c)``.

    Args:
      cpt: float (K, c) or (K,) flattened CPT (conventions: rows grouped by predictor).
      n_states: static tuple, number of states of each predictor; ``K = sum(n_states)``.

    Returns:
      Array shaped like ``cpt`` whose blocks lie on the simplex.
    """
    cpt = jnp.asarray(cpt)
    n_states = _check_n_states(cpt, n_states)
    if not n_states:
        return cpt
    M = uniform_states(n_states)
    if M is not None:  # no padding: a reshape instead of the two gathers
        q = len(n_states)
        return project_simplex(cpt.reshape((q, M) + cpt.shape[1:]), axis=1).reshape(cpt.shape)
    padded, mask = _cpt_blocks(cpt, n_states)  # (q, ..., M)
    tau = _simplex_threshold(padded, jnp.broadcast_to(mask, padded.shape))
    return _cpt_unblocks(jnp.maximum(padded - tau, 0.0), n_states)


def project_cpt_affine(cpt, n_states):
    r"""Project each CPT column block onto its affine hull ``{x : sum_k x_k = 1}``.

    ``x_k <- x_k - (sum_l x_l - 1) / n_states[i]`` within predictor i's block of every column. This
    is the exact projection onto the equality constraints of Eq. (9) in fsNB (ignoring ``x >= 0``);
    it is the first step of the group-lasso prox of the discrete groups and builds
    tangent-space gradients for the KKT condition (with ``sum = 0`` via ``cpt -
    project_cpt_affine(0)``).

    Args:
      cpt: float (K, c) or (K,) flattened CPT.
      n_states: static tuple of states per predictor.

    Returns:
      Array shaped like ``cpt``.
    """
    cpt = jnp.asarray(cpt)
    n_states = _check_n_states(cpt, n_states)
    if not n_states:
        return cpt
    sums = block_sum(cpt, n_states)
    sizes = jnp.asarray(np.asarray(n_states, dtype=np.float64), dtype=cpt.dtype)
    sizes = sizes.reshape((-1,) + (1,) * (cpt.ndim - 1))
    return cpt - block_expand((sums - 1.0) / sizes, n_states)


def project_box(v, lower=None, upper=None):
    r"""Project onto the box ``lower <= x <= upper`` (element-wise clip; either bound may be None).

    Args:
      v: float array.
      lower, upper: bounds broadcastable to ``v`` (None for no bound); ``lower <= upper``
        is assumed.

    Returns:
      ``clip(v, lower, upper)``.
    """
    v = jnp.asarray(v)
    if not jnp.issubdtype(v.dtype, jnp.floating):  # an int array would truncate float bounds
        v = v.astype(jnp.result_type(float))
    if lower is not None:
        v = jnp.maximum(v, jnp.broadcast_to(jnp.asarray(lower, v.dtype), v.shape))
    if upper is not None:
        v = jnp.minimum(v, jnp.broadcast_to(jnp.asarray(upper, v.dtype), v.shape))
    return v
