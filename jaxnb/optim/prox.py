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
from .projections import _PAIRWISE_MAX, _check_n_states, _cpt_blocks, _cpt_unblocks

__all__ = [
    "prox_group_l2",
    "prox_group_l2_box",
    "prox_group_l2_simplex",
    "group_norms",
    "prox_dykstra",
    "DykstraInfo",
]


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


def _shifted_simplex_step(d, c, valid, u):
    r"""``w = P(d)`` onto ``{w : sum_k w_k = 0, w_k >= -c_k / u}`` per column, and ``c + u w``.

    The projection is ``max(d - tau, -c / u)``. Written in the offset ``w`` rather than as
    ``P_simplex(c + u d) - c``, so it stays exact as ``u -> 0`` (where that difference would
    cancel). With ``x = d + c / u``, ``tau`` is the simplex-projection threshold for mass ``1 / u``
    (Duchi et al. 2008): the largest over the prefixes ``S`` of ``x`` sorted decreasingly of
    ``(sum_S d - (sum_{not S} c) / u) / |S|``; entries with ``x <= tau`` sit on their bound (theta
    0). Up to ``_PAIRWISE_MAX`` states the prefixes are enumerated without a sort (every prefix is
    ``{l : x_l >= x_i}`` for some i, as in `jaxnb.optim.projections`), otherwise by a sort.

    Shapes: d, c (q, C, M), zero at padding; valid (q, 1, M); u (q, 1, 1). Returns ``(w, theta)``.
    """
    M = d.shape[-1]
    x = jnp.where(valid, d + c / u, -jnp.inf)
    if M <= _PAIRWISE_MAX:
        cols = lambda a: [a[..., i : i + 1] for i in range(M)]
        xs, ds, cs, vs = cols(x), cols(d), cols(c), cols(jnp.broadcast_to(valid, x.shape))
        tau = None
        for i in range(M):
            n = jnp.zeros_like(xs[i])
            sd = jnp.zeros_like(xs[i])
            rest = jnp.zeros_like(xs[i])
            for j in range(M):
                ge = vs[j] & (xs[j] >= xs[i])
                n = n + ge.astype(d.dtype)
                sd = sd + jnp.where(ge, ds[j], 0.0)
                rest = rest + jnp.where(ge, 0.0, cs[j])
            f = jnp.where(vs[i], (sd - rest / u) / jnp.maximum(n, 1.0), -jnp.inf)
            tau = f if tau is None else jnp.maximum(tau, f)
    else:
        order = jnp.argsort(-x, axis=-1)
        take = lambda a: jnp.take_along_axis(jnp.broadcast_to(a, x.shape), order, axis=-1)
        ds, cs, vs = take(d), take(c), take(valid)
        ranks = jnp.arange(1, M + 1, dtype=d.dtype).reshape((1, 1, M))
        after = jnp.flip(jnp.cumsum(jnp.flip(cs, -1), -1), -1) - cs  # sum of c after the prefix
        tau_k = (jnp.cumsum(ds, -1) - after / u) / ranks
        tau = jnp.max(jnp.where(vs, tau_k, -jnp.inf), axis=-1, keepdims=True)
    free = valid & (x > tau)
    w = jnp.where(free, d - tau, jnp.where(valid, -c / u, 0.0))
    theta = jnp.where(free, c + u * (d - tau), 0.0)
    return w, theta


def prox_group_l2_simplex(x, center, threshold, *, n_states, max_bisect=None):
    r"""Exact prox of ``t_i ||theta_i - c_i||_2`` plus the simplex constraints of a flattened CPT.

    For each predictor i (rows ``o_i .. o_i + n_states[i] - 1`` of ``x``, all columns), returns
    ``argmin 0.5 ||theta - x||^2 + t_i ||theta - c||`` over CPT blocks whose columns lie on the
    probability simplex, with ``c`` (``center``) on it too. ``x``'s columns must already sum to 1
    per block (`jaxnb.optim.project_cpt_affine`).

    The optimality conditions give ``theta(u) = P_simplex(c + u (x - c))`` column by column with
    one scalar ``u`` in (0, 1] per group solving ``h(u) = (1 - u) / u ||theta(u) - c|| = t``. ``h``
    is non-increasing with ``h(1) = 0`` (``||P(c + u d) - c||`` is non-decreasing and
    ``||P(c + u d) - c|| / u`` non-increasing in u), so:

    * the group is exactly at ``c`` when ``h(0+) <= t`` (``h(0+)`` is the norm of ``d = x - c``
      projected onto the simplex's tangent cone at ``c``, evaluated at ``u = eps^2``);
    * if ``c + u_0 d >= 0`` with ``u_0 = 1 - t / ||d||`` (the plain group soft-threshold), that is
      the solution (no bound is active; one pass, the usual case with smoothed CPTs);
    * otherwise ``u`` is found by bisection on ``log u`` to a relative precision of a few ulps
      (about 30 passes in float32, 60 in float64, only for the groups that need it).

    This replaces Dykstra's alternating algorithm for the discrete groups, which needs hundreds of
    passes where a group is near its removal threshold and some counts are zero.

    Args:
      x: (K, c) flattened CPT, columns summing to 1 per block.
      center: (K, c) prox centre on the simplex (Omega^(0)).
      threshold: (q,) ``t_i >= 0`` (penalty x step size).
      n_states: static tuple of block sizes.
      max_bisect: cap on bisection passes (static; default from the dtype's precision).

    Returns:
      ``(theta, removed)``: the (K, c) prox and a (q,) bool, True where the group is exactly at
      ``c``. A group holding NaN or inf comes back NaN (not removed).
    """
    x = jnp.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"x must be a (K, c) flattened CPT; got shape {x.shape}")
    n_states = _check_n_states(x, n_states)
    if not n_states:
        raise ValueError("n_states is empty: there is no discrete group to take the prox of")
    dtype = x.dtype
    eps = float(jnp.finfo(dtype).eps)
    d, valid = _cpt_blocks(x - jnp.asarray(center, dtype), n_states)
    c, _ = _cpt_blocks(jnp.broadcast_to(jnp.asarray(center, dtype), x.shape), n_states)
    d = jnp.where(valid, d, 0.0)
    c = jnp.where(valid, c, 0.0)
    thr = jnp.broadcast_to(jnp.asarray(threshold, dtype), (len(n_states),))
    norm = lambda a: jnp.sqrt(jnp.sum(a * a, axis=(1, 2)))
    dn = norm(d)
    # The plain soft-threshold, exact when it stays non-negative.
    u0 = 1.0 - thr / jnp.where(dn > 0, dn, 1.0)
    theta0 = c + u0[:, None, None] * d
    fast = (dn > thr) & jnp.all(~valid | (theta0 >= 0), axis=(1, 2))
    log_min = 2.0 * np.log(eps)
    h = lambda logu: (
        (1.0 - jnp.exp(logu))
        * norm(_shifted_simplex_step(d, c, valid, jnp.exp(logu)[:, None, None])[0])
    )
    removed = (~(h(jnp.full_like(thr, log_min)) > thr) | (dn <= thr)) & ~fast
    n_max = int(np.ceil(np.log2(-log_min / eps))) + 2 if max_bisect is None else int(max_bisect)
    # h(u) <= (1 - u) ||d|| (w is a projection of d onto a convex set holding 0), so u* <= u0.
    hi0 = jnp.where(u0 > 0, jnp.log(jnp.maximum(u0, float(np.exp(log_min)))), 0.0)
    lo0 = jnp.full_like(thr, log_min)
    need0 = ~(fast | removed)

    def cond(s):
        lo, hi, k = s
        return (k < n_max) & jnp.any(need0 & (hi - lo > 4.0 * eps * jnp.maximum(1.0, -lo)))

    def body(s):
        lo, hi, k = s
        mid = 0.5 * (lo + hi)
        above = h(mid) > thr
        lo = jnp.where(need0 & above, mid, lo)
        hi = jnp.where(need0 & ~above, mid, hi)
        return lo, hi, k + 1

    _, hi, _ = lax.while_loop(cond, body, (lo0, hi0, jnp.asarray(0, jnp.int32)))
    theta_b = _shifted_simplex_step(d, c, valid, jnp.exp(hi)[:, None, None])[1]
    theta = jnp.where(fast[:, None, None], theta0, theta_b)
    theta = jnp.where(removed[:, None, None], c, theta)
    # NaN / inf input: NaN out (the comparisons above would otherwise hide it), not removed
    bad = ~jnp.isfinite(dn)
    theta = jnp.where(bad[:, None, None], jnp.nan, theta)
    return _cpt_unblocks(theta, n_states), removed & ~bad


def prox_group_l2_box(x, center, threshold, lower, *, metric=None, max_iter=None):
    r"""Exact prox of ``t_i ||x_i - c_i||_2`` plus the bounds ``x >= lower``, in a diagonal metric.

    Groups are the rows of ``x`` (shape ``(g, m)``). For each row returns::

        argmin_w  t ||w - c||_2 + (1/2) sum_k D_k (w_k - x_k)^2   s.t.  w >= lower,

    with ``D = metric`` (positive, default ones: the Euclidean prox). ``center`` must be feasible
    (``c >= lower``). The variational form ``t ||v|| = min_rho t (||v||^2 / (2 rho) + rho / 2)``
    separates the entries for a fixed ``rho``: with ``v = w - c``, ``z = x - c`` and
    ``a_k = t / D_k``, ``v_k(rho) = max(z_k rho / (rho + a_k), lower_k - c_k)``, and the solution
    has ``rho = ||v(rho)||``. ``||v(rho)|| / rho`` is decreasing, so:

    * the row is exactly at ``c`` when ``||D z|| <= t`` (entries with ``lower_k = c_k`` and
      ``z_k < 0`` left out: the bound absorbs them);
    * otherwise ``rho`` is the one root of ``phi(rho) = rho / ||v(rho)|| - 1`` in
      ``(0, ||max(z, lower - c)||]``, found by Newton's method safeguarded by bisection. ``phi``
      is linear when every ``a_k`` is equal and no bound is active (then one Newton step from the
      right end gives the plain group soft-threshold), and nearly so otherwise.

    It replaces Dykstra's alternating algorithm for the continuous groups of group-lasso NB (the
    bounds are the floor on sigma) and makes a preconditioned FISTA possible (``metric`` is the
    solver's diagonal scaling, `jaxnb.optim.solve_fista`).

    Args:
      x: (g, m) points, one group per row.
      center: prox centre, broadcastable to ``x`` and feasible.
      threshold: (g,) or scalar ``t >= 0`` (penalty x step size); ``inf`` forces the centre.
      lower: lower bounds broadcastable to ``x`` (``-inf`` where there is none).
      metric: optional positive diagonal metric ``D`` broadcastable to ``x``.
      max_iter: cap on Newton/bisection passes (static; default enough for bisection alone to
        reach the dtype's precision).

    Returns:
      ``(w, removed)``: the (g, m) prox and a (g,) bool, True where the row is exactly at ``c``.
      A row holding NaN or inf comes back NaN (not removed).
    """
    x = jnp.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"x must be a (g, m) array with one group per row; got shape {x.shape}")
    dtype = x.dtype
    eps = float(jnp.finfo(dtype).eps)
    c = jnp.broadcast_to(jnp.asarray(center, dtype), x.shape)
    lb = jnp.broadcast_to(jnp.asarray(lower, dtype), x.shape) - c
    d = (
        jnp.ones_like(x)
        if metric is None
        else jnp.broadcast_to(jnp.asarray(metric, dtype), x.shape)
    )
    thr = jnp.broadcast_to(jnp.asarray(threshold, dtype), x.shape[:1])
    z = x - c
    bad = ~jnp.all(jnp.isfinite(z), axis=1)
    dz = jnp.where((lb >= 0) & (z < 0), 0.0, d * z)
    removed = (jnp.sum(dz * dz, axis=1) <= thr * thr) & ~bad
    need = ~removed & ~bad
    a = jnp.where(need[:, None], thr[:, None] / d, 1.0)
    zc = jnp.maximum(z, lb)
    hi0 = jnp.sqrt(jnp.sum(jnp.where(bad[:, None], 0.0, zc * zc), axis=1))

    def shrunk(rho):  # z rho / (rho + a) and where it clears its bound
        r = rho[:, None]
        u = z * (r / (r + a))
        return r, u, u > lb

    def v_of(rho):
        r, u, free = shrunk(rho)
        return jnp.where(free, u, lb), jnp.where(free, z * a / ((r + a) * (r + a)), 0.0)

    def phi(rho):
        v, dv = v_of(rho)
        n = jnp.sqrt(jnp.sum(v * v, axis=1))
        n_safe = jnp.where(n > 0, n, 1.0)
        dn = jnp.sum(v * dv, axis=1) / n_safe
        return rho / n_safe - 1.0, (n - rho * dn) / (n_safe * n_safe)

    n_max = int(np.ceil(-np.log2(eps))) + 8 if max_iter is None else int(max_iter)

    def cond(s):
        rho, lo, hi, done, k = s
        return (k < n_max) & jnp.any(need & ~done)

    def body(s):
        rho, lo, hi, done, k = s
        f, df = phi(rho)
        lo = jnp.where(f < 0, rho, lo)
        hi = jnp.where(f >= 0, rho, hi)
        step = rho - f / jnp.where(df > 0, df, 1.0)
        inside = (df > 0) & (step > lo) & (step < hi)
        nxt = jnp.where(inside, step, 0.5 * (lo + hi))
        done = done | (jnp.abs(f) <= 4.0 * eps) | (hi - lo <= 4.0 * eps * hi)
        return jnp.where(need & ~done, nxt, rho), lo, hi, done, k + 1

    start = jnp.where(need, hi0, 1.0)
    rho, *_ = lax.while_loop(
        cond, body, (start, jnp.zeros_like(thr), start, ~need, jnp.asarray(0, jnp.int32))
    )
    # c + v(rho), written as x minus the shrink where that is the smaller term: with a large
    # metric entry (a << rho) the solution sits next to x, and c + v would carry the rounding
    # of c (a float32 ulp of mu0 in the mean of a class whose sigma is at its floor is a
    # gradient-mapping error ~0.1, far above the solver's tolerance)
    r, u, free = shrunk(rho)
    w = jnp.where(a <= r, x - z * (a / (r + a)), c + u)
    w = jnp.where(free, w, jnp.broadcast_to(jnp.asarray(lower, dtype), x.shape))
    w = jnp.where(removed[:, None], c, w)
    w = jnp.where(bad[:, None], jnp.nan, w)
    return w, removed
