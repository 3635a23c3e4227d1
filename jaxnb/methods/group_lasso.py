r"""L1/L2 group-lasso naive Bayes (L1/L2-NB and adaptive aL1/L2-NB) on sufficient statistics.

Each predictor's parameters Omega_i form one group, penalized by its Euclidean distance from the
"predictor removed" parameters Omega_i^(0) (the marginal MLE, equal for every class), so whole
predictors drop out of the classifier (Vidaurre, Bielza & Larrañaga 2011, "Forward stagewise naive
Bayes" [fsNB], Sect. 3.1-3.2, Eqs. (8)-(9); continuous case from van Gerven & Heskes 2008).

Objective (minimized jointly over a mixed discrete/continuous model)::

    F(Omega) = (1/N) NLL(Omega)
             + lambda_d * sum_{i discrete}   w_i * sqrt( sum_{k,j} (theta_ikj - theta0_ik)^2 )
             + lambda_c * sum_{i continuous} w_i
                          * sqrt( sum_j (mu_ij - mu0_i)^2 + (sigma_ij - sigma0_i)^2 )

    s.t. every CPT column block theta_i.j on the simplex;  sigma_ij >= min_std_i (> 0),

with the negative log-likelihood computed from sufficient statistics (A = counts + alpha)::

    NLL = - sum_{ijk} A_ijk log theta_ikj
          + sum_{ij} [ N_ij log sigma_ij + (m2_ij + N_ij (xbar_ij - mu_ij)^2) / (2 sigma_ij^2) ]
          (+ const)

Documented choices (departures from the paper):

* **Scaling.** The NLL is divided by N = sum_j class_weight_j, so lambda is comparable across sample
  sizes and a lambda grid transfers between folds; the paper's lambda equals ``N * penalty``.
* **Two penalties.** The paper notes the discrete and continuous penalties scale differently; we
  take ``penalty_discrete`` and ``penalty_continuous`` separately (the path uses
  ``penalty_continuous = continuous_scale * penalty``).
* **Group weights** ``w_i``: ones (Eqs. 8-9) by default; ``adaptive=True`` gives aL1/L2-NB,
  ``w_i = 1 / ||Omega_i^(1) - Omega_i^(0)||_2`` (the paper's w_i is that norm; it scales the
  penalty by its inverse). A norm below 1e-12 (x sigma0 for a continuous group, in its units)
  is floored there (such a predictor is removed for any positive penalty) so ``penalty = 0``
  never meets ``0 * inf``.
* **Smoothing.** ``alpha`` adds Lidstone pseudo-counts to every N_ijk inside the NLL (a Dirichlet
  MAP); Omega^(1) and Omega^(0) are the exact minimizers of that NLL (class-wise, resp. pooled:
  ``theta0_ik ∝ sum_j (N_ijk + alpha)``), so ``penalty = 0`` returns Omega^(1) and every removed
  group equals Omega^(0) exactly.
* **sigma > 0.** The open constraint of Eq. (8) becomes ``sigma_ij >= min_std_i``, default
  ``1e-3 * sigma0_i``.
* **Solvers.** Not the paper's per-predictor line search. F is a sum over predictors, so each
  group can be solved alone. ``solver="exact"`` (default) solves every *discrete* group directly
  (`_discrete_exact`): it is at Omega_i^(0) iff ``lambda <= lambda_i`` (`lambda_max`); otherwise
  its solution also minimizes the ridge problem ``f_i + (rho/2) ||theta - theta0||^2`` with
  ``rho = tau_i / ||theta - theta0||``, explicit per entry up to a multiplier per simplex column,
  so two scalar Newton iterations (multipliers, then log rho) give it to rounding accuracy in
  about 5-15 steps, for every grid point at once. The continuous groups (the likelihood is not
  convex in (mu, sigma)) and every group with ``solver="fista"`` use FISTA with backtracking
  (`jaxnb.optim.solve_fista`). Its prox of ``penalty + constraints`` is separable too. For a
  discrete group it is exact (`jaxnb.optim.prox_group_l2_simplex`): the CPT input is first
  projected onto the affine hull ``sum_k theta_ikj = 1`` (exact, because the prox of a function
  whose domain lies in an affine set A satisfies ``prox(z) = prox(P_A z)``); then the group is at
  Omega_i^(0) by a zero test, or is the plain centred soft-threshold when that stays
  non-negative, or else solves one monotone scalar equation (bisection on log u, where
  ``theta = P_simplex(center + u d)``). A continuous group's prox, the centred group shrink
  with the floor on sigma, is exact too (`jaxnb.optim.prox_group_l2_box`: a zero test, then one
  monotone scalar equation in the norm of the solution, Newton safeguarded by bisection). (Until
  2026-11-26 Dykstra's alternating algorithm served the discrete groups, and until 2026-11-27
  the continuous ones: it needed hundreds of passes near a group's removal threshold against a
  cap of 100, and FISTA stalled on the inexact prox.)
* **Preconditioning.** FISTA runs in the diagonal metric ``D`` of `_metric`: ones for the CPT,
  ``n_ij / sigma_ij^2`` for mu_ij and ``2 n_ij / sigma_ij^2`` for sigma_ij (the diagonal of the
  Hessian of NLL/N at the class MLE, ``n_ij = N_ij / N``), so a step of about 1 suits every
  coordinate. Without it a class whose values in a column are (nearly) constant, with sigma at
  the floor ``1e-3 sigma0``, set one step about 1e-6 times too short for every other parameter:
  float32 could not resolve the updates and stopped one step into each solve, far from the
  optimum, and float64 ran every such solve to ``max_steps``. The metric is computed at the
  start point of a round and kept fixed through it (the convergence theory of FISTA needs a
  fixed metric); a round ends when it converges, when some sigma has moved by a factor of
  `_METRIC_DRIFT` (4) from that point, or when backtracking has cut the step below
  `_METRIC_MIN_STEP` (1/16; the natural step is ~1); the next round recomputes the metric there
  and starts at a step of 1 at least (every round takes one step before that test applies).
  All rounds share the budget ``max_steps``. The Gaussian parameters are solved for in
  standardized units, ``(mu - xbar) / sigma0`` and ``sigma / sigma0`` (`_standardize`, also used
  by `lambda_max`): their float32 rounding is that of the distance from xbar, not of the
  column's offset, and gradients, residuals and ``tol`` do not depend on the column's units.
* **Stopping tests are scale-aware.** The bisections stop at a few ulps, and FISTA at ``tol``
  *or* the rounding floor of its residual (`jaxnb.optim.fista`). Its residual is the norm of
  the gradient mapping ``D (x - x+) / s``, in the units of the gradient with or without the
  metric. Under float32 (JAX's default) the absolute float64-style tolerances are below what
  the arithmetic can resolve; before the floor every solve ran all ``max_steps`` iterations
  (about 50 s for one 20-point discrete Table-1 path; now well under 0.1 s after compilation,
  with the same solutions as a tight float64 run).

Predictor order in every per-predictor array (weights, active masks) is ``[discrete 0..q-1,
continuous 0..r-1]`` (docs/CONVENTIONS.md).
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax.tree_utils as otu
from jax import lax

from jaxnb._checks import check_array_range, concrete, jit_entry
from jaxnb.optim.blocks import block_expand, block_sum
from jaxnb.optim.fista import SolverInfo, solve_fista
from jaxnb.optim.projections import project_cpt_affine
from jaxnb.optim.prox import (
    group_norms,
    prox_group_l2_box,
    prox_group_l2_simplex,
    safe_norm_from_sq,
)
from jaxnb.suffstats import has_spread, pooled_moments


def _check_values(name, value, *, low_open=False):
    """Concrete ``value`` (tracers skipped): every entry finite and >= 0 (> 0 with ``low_open``)."""
    if value is not None and concrete(value):
        check_array_range(name, value, 0.0, low_open=low_open)


__all__ = [
    "GroupLassoParams",
    "GroupLassoProblem",
    "GroupLassoPath",
    "make_group_lasso_problem",
    "negative_log_likelihood",
    "path_score_shift",
    "group_penalty",
    "group_lasso_objective",
    "prox_group_lasso",
    "active_predictors",
    "lambda_max",
    "penalty_grid",
    "penalty_fractions",
    "fit_group_lasso",
    "group_lasso_path",
    "kkt_residual",
    "SOLVERS",
]

_NORM_FLOOR = 1e-12


class GroupLassoParams(eqx.Module):
    """Group-lasso NB parameters (class prior is not penalized and is not part of the problem).

    Attributes:
      cpt: (K, c) flattened CPT, each predictor/class block on the simplex.
      mean: (c, r) Gaussian means.
      std: (c, r) Gaussian standard deviations (``>= min_std``).
    """

    cpt: jax.Array
    mean: jax.Array
    std: jax.Array


class GroupLassoProblem(eqx.Module):
    """Constants of one group-lasso NB problem (built once by `make_group_lasso_problem`).

    Attributes:
      counts: (K, c) smoothed counts A = N_ijk + alpha.
      weight: (c, r) per-class observed weight N_ij of each continuous predictor.
      xbar: (c, r) class means; m2: (c, r) class sums of squared deviations.
      total: scalar N (sum of class weights) used to scale the NLL.
      center: Omega^(0) as `GroupLassoParams` (marginal MLE, identical columns).
      mle: Omega^(1) as `GroupLassoParams` (class-conditional MLE under the same smoothing and
      floor). group_weight: (p,) penalty weights w_i, order [discrete, continuous].
      min_std: (r,) floor on sigma.
      n_states: static tuple.
    """

    counts: jax.Array
    weight: jax.Array
    xbar: jax.Array
    m2: jax.Array
    total: jax.Array
    center: GroupLassoParams
    mle: GroupLassoParams
    group_weight: jax.Array
    min_std: jax.Array
    n_states: tuple[int, ...] = eqx.field(static=True)

    @property
    def n_discrete(self) -> int:
        return len(self.n_states)

    @property
    def n_continuous(self) -> int:
        return self.xbar.shape[1]


class GroupLassoPath(NamedTuple):
    """Output of `group_lasso_path` (leading axis s = grid point).

    Attributes:
      penalties: (s,) the grid (discrete penalty; continuous = ``continuous_scale`` x this).
      params: `GroupLassoParams` with leaves (s, ...).
      active: (s, p) bool, predictor i not exactly at Omega_i^(0).
      n_active: (s,) int, number of active predictors (the fsNB eq 14 degrees of freedom).
      objective: (s,) objective value at each solution.
      info: `SolverInfo` with (s,) leaves.
    """

    penalties: jax.Array
    params: GroupLassoParams
    active: jax.Array
    n_active: jax.Array
    objective: jax.Array
    info: SolverInfo


def _block_normalize(a, n_states):
    """Divide each predictor/class block of (K, c) by its sum; empty blocks become uniform."""
    sums = block_expand(block_sum(a, n_states), n_states)
    size = jnp.asarray(np.repeat(np.asarray(n_states, np.float64), n_states), a.dtype)[:, None]
    return jnp.where(sums > 0, a / jnp.where(sums > 0, sums, 1.0), 1.0 / size)


def _stats_arrays(stats):
    try:
        return (
            stats.class_weight,
            stats.counts,
            stats.weight,
            stats.mean,
            stats.m2,
            tuple(int(m) for m in stats.n_states),
        )
    except AttributeError as err:
        raise TypeError(
            "stats must carry class_weight (c,), counts (K, c), weight/mean/m2 (c, r) and n_states "
            f"(e.g. jaxnb.suffstats.SuffStats); got {type(stats).__name__}"
        ) from err


def _group_distance(problem: GroupLassoProblem, params: GroupLassoParams):
    """(p,) Euclidean distance of each predictor's parameters from Omega^(0)."""
    q = problem.n_discrete
    parts = []
    if q:
        parts.append(group_norms(params.cpt, problem.center.cpt, n_states=problem.n_states))
    if problem.n_continuous:
        dm = params.mean - problem.center.mean
        ds = params.std - problem.center.std
        parts.append(safe_norm_from_sq(jnp.sum(dm * dm, axis=0) + jnp.sum(ds * ds, axis=0)))
    return jnp.concatenate(parts) if parts else jnp.zeros((0,), params.mean.dtype)


def make_group_lasso_problem(
    stats, *, alpha=0.0, adaptive: bool = False, group_weight=None, min_std=None
) -> GroupLassoProblem:
    r"""Build the constants of the group-lasso NB problem from sufficient statistics.

    Args:
      stats: sufficient statistics with ``class_weight (c,)``, ``counts (K, c)``, ``weight, mean, m2
        (c, r)`` and static ``n_states`` (e.g. `jaxnb.suffstats.SuffStats`).
      alpha: Lidstone pseudo-count added to every N_ijk in the NLL (>= 0; 0 = plain ML, Eq. 9).
      adaptive: if True, aL1/L2-NB weights ``w_i = 1 / ||Omega_i^(1) - Omega_i^(0)||_2``
        (fsNB Sect. 3.2); multiplied into ``group_weight`` when both are given.
      group_weight: optional (p,) base weights (default ones), order [discrete, continuous].
      min_std: optional floor on sigma, scalar or (r,); default ``1e-3 * sigma0_i``.

    Returns:
      A `GroupLassoProblem` (a pytree; n_states static).
    """
    _check_values("alpha", alpha)
    _check_values("min_std", min_std, low_open=True)
    class_weight, counts, weight, mean, m2, n_states = _stats_arrays(stats)
    counts = jnp.asarray(counts)
    dtype = jnp.result_type(counts.dtype, jnp.asarray(mean).dtype, jnp.float32)
    counts = counts.astype(dtype)
    weight, xbar, m2 = (jnp.asarray(a, dtype) for a in (weight, mean, m2))
    class_weight = jnp.asarray(class_weight, dtype)
    if counts.ndim != 2 or counts.shape[0] != sum(n_states):
        raise ValueError(
            f"counts must have shape (sum(n_states), c); got {counts.shape} for {n_states=}"
        )
    if xbar.ndim != 2 or weight.shape != xbar.shape or m2.shape != xbar.shape:
        raise ValueError(
            f"weight, mean, m2 must share shape (c, r); got {weight.shape}, {xbar.shape}, "
            f"{m2.shape}"
        )
    if isinstance(alpha, int | float) and alpha < 0:
        raise ValueError(f"alpha must be >= 0; got {alpha=}")
    q, r = len(n_states), xbar.shape[1]
    total = jnp.sum(class_weight)
    total = jnp.where(total > 0, total, 1.0)

    a = counts + jnp.asarray(alpha, dtype)
    if q:
        theta1 = _block_normalize(a, n_states)
        theta0 = _block_normalize(
            jnp.broadcast_to(jnp.sum(a, axis=1, keepdims=True), a.shape), n_states
        )
    else:
        theta1 = theta0 = a

    # Pooled (marginal) Gaussian: the constrained MLE with equal parameters in every class.
    w_tot, mu0, m2_0 = pooled_moments(weight, xbar, m2)  # exact for a constant column
    w_safe = jnp.where(w_tot > 0, w_tot, 1.0)
    sigma0 = jnp.where(w_tot > 0, jnp.sqrt(m2_0 / w_safe), 1.0)
    # no spread at all (constant over the weighted rows, or no row): scale 1 in Omega^(0) and in
    # every class of Omega^(1), so Omega^(1) = Omega^(0) and the predictor is never active (a
    # floored class scale would make it look informative and move lambda_max)
    flat = ~has_spread(w_tot, m2_0)
    sigma0 = jnp.where(flat, 1.0, sigma0)
    if min_std is None:
        floor = 1e-3 * sigma0
    else:
        floor = jnp.broadcast_to(jnp.asarray(min_std, dtype), (r,))
        sigma0 = jnp.maximum(sigma0, floor)
    has = weight > 0
    mu1 = jnp.where(has, xbar, mu0[None, :])
    sigma1 = jnp.where(has, jnp.sqrt(m2 / jnp.where(has, weight, 1.0)), sigma0[None, :])
    sigma1 = jnp.maximum(sigma1, floor[None, :])
    sigma1 = jnp.where(flat[None, :], sigma0[None, :], sigma1)
    # ... and its likelihood term is dropped: sum_j N_ij log sigma_ij would otherwise pull every
    # class's sigma from 1 down to the floor (the same in every class, so no information), which
    # makes the predictor active and sets lambda_max (plain L1/L2-NB; the adaptive weight of a
    # zero distance already held it at Omega^(0))
    weight = jnp.where(flat[None, :], 0.0, weight)
    c = counts.shape[1]
    center = GroupLassoParams(
        theta0, jnp.broadcast_to(mu0[None, :], (c, r)), jnp.broadcast_to(sigma0[None, :], (c, r))
    )
    mle = GroupLassoParams(theta1, mu1, sigma1)

    base = jnp.ones((q + r,), dtype) if group_weight is None else jnp.asarray(group_weight, dtype)
    if base.shape != (q + r,):
        raise ValueError(f"group_weight must have shape (p,) = ({q + r},); got {base.shape}")
    problem = GroupLassoProblem(a, weight, xbar, m2, total, center, mle, base, floor, n_states)
    if adaptive:
        dist = _group_distance(problem, mle)
        # the floor in each group's units (a continuous group's distance is in sigma0's), so
        # that rescaling a column leaves its weight x distance, and lambda_max, unchanged
        unit = jnp.concatenate([jnp.ones((q,), dtype), sigma0])
        base = base / jnp.maximum(dist, _NORM_FLOOR * unit)
        problem = eqx.tree_at(lambda p: p.group_weight, problem, base)
    return problem


def negative_log_likelihood(problem: GroupLassoProblem, params: GroupLassoParams):
    r"""(1/N) x negative log-likelihood of the class-conditional model (constants dropped).

    ``(1/N) [ -sum A_ijk log theta_ikj + sum_ij N_ij log sigma_ij
    + (m2_ij + N_ij (xbar_ij - mu_ij)^2) / (2 sigma_ij^2) ]`` (fsNB Eqs. 1-3 from statistics).
    Terms with zero count are dropped (0 log 0 = 0); ``+inf`` outside the domain.
    """
    a = problem.counts
    pos = a > 0
    # log of a safe argument keeps gradients finite where a == 0 (the term is dropped anyway).
    log_theta = jnp.log(jnp.where(pos, params.cpt, 1.0))
    disc = -jnp.sum(jnp.where(pos, a * log_theta, 0.0))
    # Outside the domain (theta <= 0 with a > 0): +inf, which backtracking rejects.
    disc = jnp.where(jnp.any(pos & (params.cpt <= 0)), jnp.inf, disc)
    sigma = params.std
    w = problem.weight
    resid = problem.xbar - params.mean
    quad = (problem.m2 + w * resid * resid) / (2.0 * sigma * sigma)
    cont = jnp.sum(jnp.where(w > 0, w * jnp.log(sigma) + quad, 0.0))
    cont = jnp.where(jnp.any((w > 0) & (sigma <= 0)), jnp.inf, cont)
    return (disc + cont) / problem.total


def _penalty_vector(problem, penalty_discrete, penalty_continuous):
    q, r = problem.n_discrete, problem.n_continuous
    dtype = problem.group_weight.dtype
    lam = jnp.concatenate(
        [
            jnp.broadcast_to(jnp.asarray(penalty_discrete, dtype), (q,)),
            jnp.broadcast_to(jnp.asarray(penalty_continuous, dtype), (r,)),
        ]
    )
    return lam * problem.group_weight


def group_penalty(
    problem: GroupLassoProblem, params: GroupLassoParams, penalty_discrete, penalty_continuous
):
    r"""``lambda_d sum_{disc} w_i ||Omega_i - Omega_i^(0)|| + lambda_c sum_{cont} w_i ||...||``."""
    lam = _penalty_vector(problem, penalty_discrete, penalty_continuous)
    dist = _group_distance(problem, params)
    # 0 * large weight at distance 0 must give 0, not nan.
    return jnp.sum(jnp.where(dist > 0, lam * dist, 0.0))


def group_lasso_objective(problem, params, penalty_discrete, penalty_continuous):
    """Full objective F = NLL/N + group penalty (see module docstring)."""
    return negative_log_likelihood(problem, params) + group_penalty(
        problem, params, penalty_discrete, penalty_continuous
    )


def prox_group_lasso(
    problem: GroupLassoProblem,
    params: GroupLassoParams,
    step,
    penalty_discrete,
    penalty_continuous,
    *,
    metric: GroupLassoParams | None = None,
):
    r"""Prox of ``step x (group penalty + constraints)`` at ``params`` (module docstring).

    Both kinds of group are exact: discrete groups by `jaxnb.optim.prox_group_l2_simplex`,
    continuous groups (the centred group shrink with the floor ``sigma >= min_std``) by
    `jaxnb.optim.prox_group_l2_box`.

    Args:
      metric: optional diagonal metric (`GroupLassoParams` of positive arrays) for a
        preconditioned solver: the continuous groups' prox is then taken in ``||.||_D``. Its
        ``cpt`` part must be ones (the discrete prox is Euclidean).

    Returns:
      `GroupLassoParams`: CPT blocks on the simplex, ``std >= min_std``, and removed groups exactly
      at Omega^(0).
    """
    q, r = problem.n_discrete, problem.n_continuous
    thr = step * _penalty_vector(problem, penalty_discrete, penalty_continuous)
    center = problem.center
    cpt = params.cpt
    if q:  # exact, group by group (`prox_group_l2_simplex`); removed groups exactly Omega^(0)
        cpt, _ = prox_group_l2_simplex(
            project_cpt_affine(params.cpt, problem.n_states),
            center.cpt,
            thr[:q],
            n_states=problem.n_states,
        )
    mean, std = params.mean, params.std
    if r:
        # Continuous group i = column i of [mean; std]  ->  row i of the (r, 2c) stack.
        c = mean.shape[0]
        stack = lambda m, s: jnp.concatenate([m, s], axis=0).T
        lower = jnp.concatenate(
            [jnp.full((c, r), -jnp.inf, std.dtype), jnp.broadcast_to(problem.min_std, (c, r))]
        )
        out, _ = prox_group_l2_box(
            stack(mean, std),
            stack(center.mean, center.std),
            thr[q:],
            lower.T,
            metric=None if metric is None else stack(metric.mean, metric.std),
        )
        mean, std = out[:, :c].T, out[:, c:].T
    return GroupLassoParams(cpt, mean, std)


def path_score_shift(problem: GroupLassoProblem):
    """(r,) centring of the continuous values shared by every point of a path (the removed-predictor
    means, equal along the path): pass it as `jaxnb.likelihood.log_joint`'s ``shift`` so that a vmap
    over the path's parameters centres the rows once and scores them with one matrix product per
    term."""
    return problem.center.mean.mean(0)


def active_predictors(problem: GroupLassoProblem, params: GroupLassoParams):
    """(p,) bool: predictor i's parameters differ (anywhere) from Omega_i^(0)."""
    return _group_distance(problem, params) > 0


def _tangent_gradient(problem: GroupLassoProblem, params: GroupLassoParams):
    """NLL/N gradient with each CPT block's column centred over the support of Omega^(0).

    This is the minimum-norm element of ``grad + normal cone`` of the simplex constraints at a point
    with the support of Omega^(0) (derivation in `lambda_max`).
    """
    g = jax.grad(lambda p: negative_log_likelihood(problem, p))(params)
    cpt = g.cpt
    if problem.n_discrete:
        ns = problem.n_states
        support = (params.cpt > 0).astype(cpt.dtype)
        s = block_sum(cpt * support, ns)
        n = block_sum(support, ns)
        mean_g = s / jnp.where(n > 0, n, 1.0)
        cpt = (cpt - block_expand(mean_g, ns)) * support
    return GroupLassoParams(cpt, g.mean, g.std)


def _standardize(problem: GroupLassoProblem):
    """The same problem in standardized Gaussian coordinates, and the map back.

    ``mu' = (mu - xbar) / sigma0`` and ``sigma' = sigma / sigma0`` (sigma0 the pooled scale of
    Omega^(0), > 0 by construction), with each continuous group weight multiplied by sigma0: the
    penalty is unchanged and the NLL only shifts by the constant sum N_ij log sigma0_j / N, so the
    optimum maps to the given problem's (``mu = xbar + sigma0 mu'``, ``sigma = sigma0 sigma'``)
    and lambda_max is the same. Gradients, residuals and tolerances are then free of the
    columns' units (in a column's own units the gradient scales as 1 / sigma0 and its sigma-part
    as 1 / sigma0^3, which overflows float32 for a column of spread ~1e-13).

    Returns ``(standardized problem, shift (c, r), scale (c, r))``; the problem as is without
    continuous predictors.
    """
    shift, scale = problem.mle.mean, problem.center.std
    if not problem.n_continuous:
        return problem, shift, scale
    sigma0 = scale[0]
    q = problem.n_discrete
    group_weight = jnp.concatenate([problem.group_weight[:q], problem.group_weight[q:] * sigma0])
    standardized = eqx.tree_at(
        lambda p: (
            p.xbar,
            p.m2,
            p.center.mean,
            p.center.std,
            p.mle.mean,
            p.mle.std,
            p.min_std,
            p.group_weight,
        ),
        problem,
        (
            (problem.xbar - shift) / scale,
            problem.m2 / (scale * scale),
            (problem.center.mean - shift) / scale,
            jnp.ones_like(scale),
            jnp.zeros_like(shift),
            problem.mle.std / scale,
            problem.min_std / sigma0,
            group_weight,
        ),
    )
    return standardized, shift, scale


def lambda_max(problem: GroupLassoProblem, *, continuous_scale=1.0, per_predictor: bool = False):
    r"""Smallest penalty at which every predictor is removed (Omega = Omega^(0) is optimal).

    KKT at Omega^(0) (convex problem, so sufficient): ``0 in grad_i f + lambda w_i B_2 + N_i`` for
    every group i, with B_2 the unit ball and N_i the normal cone of predictor i's constraints
    there.

    * Discrete i: N_i = {nu_j 1 - mu : mu >= 0, mu_k = 0 on the support S of theta0_i}. With
      f = NLL/N, grad_ikj = -A_ijk / (N theta0_ik) <= 0 on S and 0 off S. Minimizing
      ||grad + nu 1 - mu|| gives nu_j = -mean_{k in S} grad_ikj >= 0 and zero entries off S, i.e.
      the gradient centred column by column over S (its projection onto the tangent space).
    * Continuous i: sigma0_i > min_std, so N_i = {0}; the plain gradient in (mu_i., sigma_i.).

    Hence ``lambda_i = ||P_T grad_i f(Omega^(0))||_2 / (w_i s_i)`` with ``s_i = 1`` (discrete) or
    ``continuous_scale`` (continuous), and ``lambda_max = max_i lambda_i``: for every
    ``penalty >= lambda_max`` (and continuous penalty ``continuous_scale * penalty``) the solution
    is Omega^(0) exactly.

    Args:
      problem: a `GroupLassoProblem`.
      continuous_scale: ratio lambda_c / lambda_d (> 0).
      per_predictor: also return the (p,) vector lambda_i (static flag).

    Returns:
      Scalar lambda_max, or ``(lambda_max, lambda_i)`` with ``per_predictor=True``.
    """
    _check_values("continuous_scale", continuous_scale, low_open=True)
    # in standardized units (`_standardize`): the same lambda_i, a gradient without overflow
    problem, _, _ = _standardize(problem)
    g = _tangent_gradient(problem, problem.center)
    q = problem.n_discrete
    parts = []
    if q:
        parts.append(group_norms(g.cpt, 0.0, n_states=problem.n_states))
    if problem.n_continuous:
        parts.append(
            jnp.sqrt(jnp.sum(g.mean**2, axis=0) + jnp.sum(g.std**2, axis=0)) / continuous_scale
        )
    gn = jnp.concatenate(parts)
    lam_i = gn / problem.group_weight
    lam = jnp.max(lam_i, initial=0.0)
    return (lam, lam_i) if per_predictor else lam


def penalty_fractions(num: int = 20, ratio=1e-3, dtype=None):
    """The grid of `penalty_grid` as fractions of ``lambda_max``: ``num`` geometric values from 1
    down to ``ratio`` (e.g. a sweep's ``relative=True`` group-lasso grid)."""
    if isinstance(num, bool) or not isinstance(num, int | np.integer) or num < 1:
        raise ValueError(f"num must be an int >= 1 (the number of penalties); got {num!r}")
    if not isinstance(ratio, jax.core.Tracer) and not 0.0 < float(ratio) <= 1.0:
        raise ValueError(
            f"ratio must lie in (0, 1]: the smallest penalty as a fraction of lambda_max; got "
            f"{ratio!r}"
        )
    return jnp.logspace(0.0, jnp.log10(ratio), num, dtype=dtype)


def penalty_grid(problem: GroupLassoProblem, num: int = 20, *, ratio=1e-3, continuous_scale=1.0):
    """Geometric grid of ``num`` penalties from ``lambda_max`` down to ``ratio * lambda_max``."""
    lmax = lambda_max(problem, continuous_scale=continuous_scale)
    return lmax * penalty_fractions(num, ratio, dtype=lmax.dtype)


# ------------------------------------------------------------------------------------------------
# Exact solver of the discrete groups (the objective is separable over predictors)


def _ridge_cpt(a, center, rho, nu):
    r"""Minimizer of ``-a log theta + (rho/2)(theta - center)^2 + nu theta`` per entry (theta >= 0).

    The positive root of ``rho theta^2 + (nu - rho center) theta - a = 0``; with
    ``u = rho center - nu`` and ``s = sqrt(u^2 + 4 rho a)`` it is ``(u + s) / (2 rho)``, written
    as ``2a / (s - u)`` for u < 0 (no cancellation). ``a = 0`` gives ``max(u, 0) / rho``.

    Returns:
      ``(theta, s)``; ``d theta / d u = theta / s`` (0 where s = 0, i.e. a = u = 0).
    """
    u = rho * center - nu
    s = jnp.sqrt(u * u + 4.0 * rho * a)
    pos = u >= 0
    theta = jnp.where(pos, (u + s) / (2.0 * rho), 2.0 * a / jnp.where(pos, 1.0, s - u))
    return theta, s


def _safe_div(x, y):
    return jnp.where(y != 0, x / jnp.where(y != 0, y, 1.0), 0.0)


def _discrete_exact(problem: GroupLassoProblem, penalty, *, tol, max_iter):
    r"""Discrete groups of the group-lasso NB problem solved group by group (no prox iterations).

    The objective is a sum over predictors, so each discrete group i is the small problem
    ``min f_i(theta) + tau_i ||theta - theta0||`` over its simplex columns (``f_i`` = its part of
    NLL/N, ``tau_i = penalty w_i``). If ``penalty >= lambda_i`` (`lambda_max`'s per-predictor
    threshold) the solution is theta0 exactly. Otherwise the solution theta* != theta0 is also the
    minimizer of the ridge problem ``f_i + (rho/2) ||theta - theta0||^2`` with
    ``rho = tau_i / ||theta* - theta0||`` (same optimality conditions), whose solution is explicit
    per entry (`_ridge_cpt`) up to one multiplier nu_j per simplex column. So:

    * inner: for a given rho, Newton's method on each column's ``sum_k theta_kj(nu_j) = 1``
      (decreasing and convex in nu_j, warm-started);
    * outer: Newton's method on ``psi(s) = s + log t(e^s) - log tau_i`` (s = log rho,
      ``t(rho) = ||theta(rho) - theta0||``; psi is increasing and, for this likelihood, concave,
      so Newton steps from the left end ``log(tau_i / ||theta^(1) - theta0||)``, where psi <= 0,
      increase monotonically to the root), with the derivative of t from the implicit function
      theorem and a bisection fallback inside a bracket.

    Every group, column and penalty is updated at once in fixed-shape arrays; the loop stops
    when every group meets ``|psi| <= tol`` and ``|sum_k theta_kj - 1| <= tol`` (each tolerance
    raised to its rounding floor, as FISTA's), or after ``max_iter`` outer steps.

    Returns:
      ``(cpt, n_iter, residual, converged)``.
    """
    ns = problem.n_states
    dtype = problem.counts.dtype
    eps = jnp.finfo(dtype).eps
    tol = jnp.asarray(tol, dtype)
    # Rounding floors: a column sum carries ~M ulps; log t carries ~ulps x ||theta|| / t (t is a
    # difference of nearly equal probabilities when the penalty is just below lambda_i).
    size = jnp.asarray(ns, dtype)
    tol_h = jnp.maximum(tol, 16.0 * eps * size)[:, None]
    a = problem.counts / problem.total
    c0 = problem.center.cpt
    theta1 = problem.mle.cpt
    q = problem.n_discrete
    tau = jnp.asarray(penalty, dtype) * problem.group_weight[:q]
    _, lam_i = lambda_max(problem, per_predictor=True)
    # A penalty within a few ulps of lambda_i counts as lambda_i (the group moves by O(ulps) at
    # most there), so that lambda_max, however it was rounded, removes every group.
    active = jnp.asarray(penalty, dtype) < lam_i[:q] * (1.0 - 16.0 * eps)
    ridge = active & (tau > 0)  # tau == 0: the MLE theta^(1)
    t1 = group_norms(theta1, c0, n_states=ns)
    log_tau = jnp.log(jnp.where(ridge, tau, 1.0))
    lo = log_tau - jnp.log(jnp.where(ridge, t1, 1.0))
    # e^60 above the start; clipped so that rho stays finite in float32
    cap = 0.25 * jnp.log(jnp.finfo(dtype).max)
    hi = jnp.minimum(lo + 60.0, cap)

    def columns(s, nu):
        rho = block_expand(jnp.exp(s), ns)[:, None]
        theta, root = _ridge_cpt(a, c0, rho, block_expand(nu, ns))
        # a state outside theta0's support has no count in any class: exactly 0 (not -nu / rho)
        return rho, jnp.where(c0 > 0, theta, 0.0), root

    def newton_nu(s, nu):
        _, theta, root = columns(s, nu)
        h = block_sum(theta, ns) - 1.0
        dh = -block_sum(_safe_div(theta, root), ns)
        return nu - _safe_div(h, dh)

    def evaluate(s, nu):
        rho, theta, root = columns(s, nu)
        h = block_sum(theta, ns) - 1.0
        diff = theta - c0
        t = jnp.sqrt(block_sum(jnp.sum(diff * diff, axis=1), ns))
        psi = s + jnp.log(t) - log_tau
        norm = jnp.sqrt(block_sum(jnp.sum(theta * theta, axis=1), ns))
        tol_psi = jnp.maximum(tol, 16.0 * eps * (1.0 + norm / t))
        # d theta / d rho at fixed nu, then nu'(rho) from sum_k theta_kj = 1 (implicit function).
        dtheta_du = _safe_div(theta, root)
        dtheta_drho = _safe_div(a, rho * root) - theta / rho
        dnu = _safe_div(block_sum(dtheta_du * c0 + dtheta_drho, ns), block_sum(dtheta_du, ns))
        dtheta = dtheta_du * (c0 - block_expand(dnu, ns)) + dtheta_drho
        dt = block_sum(jnp.sum(diff * dtheta, axis=1), ns) / t
        dpsi = 1.0 + jnp.exp(s) * dt / t
        ok = (jnp.abs(psi) <= tol_psi) & jnp.all(jnp.abs(h) <= tol_h, axis=1)
        return psi, dpsi, jnp.max(jnp.abs(h), axis=1), ok

    def cond(state):
        it, _, _, _, _, done = state
        return (it < max_iter) & ~jnp.all(done)

    def body(state):
        it, s, lo, hi, nu, _ = state
        nu = newton_nu(s, newton_nu(s, nu))
        psi, dpsi, herr, ok = evaluate(s, nu)
        ok = ~ridge | ok
        # psi's sign is only trusted once the columns sum to 1: a bracket end set from an
        # unfinished inner solve can exclude the root (lo = hi, the search then stalls); until
        # then s stays and the next step refines nu.
        inner = herr <= tol_h[:, 0]
        lo = jnp.where(inner & (psi < 0), s, lo)
        hi = jnp.where(inner & (psi >= 0), s, hi)
        step = s - psi / dpsi
        inside = jnp.isfinite(step) & (step > lo) & (step < hi)
        s_next = jnp.where(ok | ~inner, s, jnp.where(inside, step, 0.5 * (lo + hi)))
        return it + 1, s_next, lo, hi, nu, ok

    nu0 = block_sum(a, ns)  # the MLE's multipliers (rho -> 0)
    state = (jnp.asarray(0, jnp.int32), lo, lo, hi, nu0, ~ridge)
    n_iter, s, _, _, nu, _ = lax.while_loop(cond, body, state)
    nu = newton_nu(s, nu)
    _, theta, _ = columns(s, nu)
    psi, _, herr, ok = evaluate(s, nu)
    err = jnp.where(ridge, jnp.maximum(jnp.abs(psi), herr), 0.0)
    residual = jnp.max(err, initial=0.0)
    converged = jnp.all(ok | ~ridge)
    sel = block_expand(ridge, ns)[:, None]
    cpt = jnp.where(sel, theta, jnp.where(block_expand(active, ns)[:, None], theta1, c0))
    return cpt, n_iter, residual, converged


def _continuous_part(problem: GroupLassoProblem) -> GroupLassoProblem:
    """The problem restricted to its continuous groups (an empty CPT; separability)."""
    c = problem.counts.shape[1]
    empty = jnp.zeros((0, c), problem.counts.dtype)
    q = problem.n_discrete
    return GroupLassoProblem(
        empty,
        problem.weight,
        problem.xbar,
        problem.m2,
        problem.total,
        GroupLassoParams(empty, problem.center.mean, problem.center.std),
        GroupLassoParams(empty, problem.mle.mean, problem.mle.std),
        problem.group_weight[q:],
        problem.min_std,
        (),
    )


def kkt_residual(problem, params, penalty_discrete, penalty_continuous, step=1.0, **prox_kwargs):
    """Prox-gradient fixed-point residual ``||x - prox_s(x - s grad f(x))|| / s`` (0 at optimum)."""
    f = lambda p: negative_log_likelihood(problem, p)
    g = jax.grad(f)(params)
    z = otu.tree_add_scale(params, -step, g)
    x_plus = prox_group_lasso(problem, z, step, penalty_discrete, penalty_continuous, **prox_kwargs)
    return otu.tree_norm(otu.tree_sub(params, x_plus)) / step


SOLVERS = ("exact", "fista")


def _check_solver(solver):
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got {solver!r}")


# Curvature floor of a class with (almost) no weight in a column, relative to the heaviest class.
_METRIC_WEIGHT_FLOOR = 1e-3
# A round of the preconditioned solver ends once some sigma has moved by this factor from the
# sigma its metric was computed at (the metric's curvature ~ 1 / sigma^2 is then stale).
_METRIC_DRIFT = 4.0
# ... or once backtracking has shrunk the step below this (in the metric's units the natural step
# is ~1; a much shorter one means the metric no longer fits, and the residual's float32 rounding
# floor, ~1 / step, would soon certify a point far from the optimum).
_METRIC_MIN_STEP = 1.0 / 16.0


def _metric(problem: GroupLassoProblem, params: GroupLassoParams) -> GroupLassoParams:
    """Diagonal preconditioner at ``params``: ones for the CPT; for the Gaussians the diagonal of
    the NLL/N Hessian at the class MLE, ``n_ij / sigma_ij^2`` (mean) and ``2 n_ij / sigma_ij^2``
    (std), ``n_ij = N_ij / N`` floored at ``1e-3 max_j n_ij`` (module docstring, "Solvers")."""
    n = problem.weight / problem.total
    n_max = jnp.max(n, axis=0, keepdims=True)
    n = jnp.where(n_max > 0, jnp.maximum(n, _METRIC_WEIGHT_FLOOR * n_max), 1.0)
    inv = n / (params.std * params.std)
    return GroupLassoParams(jnp.ones_like(params.cpt), inv, 2.0 * inv)


def _fit_fista(
    problem,
    penalty_discrete,
    penalty_continuous,
    init,
    *,
    step_size,
    max_steps,
    tol,
    step_growth,
):
    """Preconditioned FISTA in rounds: each round fixes the metric `_metric` at its start point and
    runs until it converges, its sigmas drift by `_METRIC_DRIFT` from that point, or the shared
    budget of ``max_steps`` iterations is spent. Without continuous groups the metric is ones:
    one plain solve (the rounds and the unit metric cost ~40% on a discrete path).

    The Gaussian parameters are solved for in standardized units: mu' = (mu - xbar) / sigma0,
    sigma' = sigma / sigma0 (sigma0 the pooled scale of Omega^(0)), with the continuous group
    weights multiplied by sigma0 so that the penalty, and the NLL up to the constant
    sum N_ij log sigma0_j / N, are unchanged: the same optimum. The translation makes a float32
    ulp of a mean one of its distance from xbar, not of an uncentred column's offset (that
    matters most for a class whose sigma is at its floor: its mean sits at xbar and its metric
    entry is ~1e6, which turns an ulp of the offset into a large gradient-mapping error). The
    scaling makes ``tol`` and the residual unit-free: in a column's own units the gradient
    scales as 1 / sigma0, so a column in units 1e10 times larger read as converged at Omega^(0)
    (every predictor removed) and one 1e10 times smaller never converged. Removed groups come
    back exactly at Omega^(0). The returned ``info.objective`` is F of the given problem."""
    original = problem
    mu0 = problem.center.mean
    problem, shift, scale = _standardize(problem)
    init = GroupLassoParams(init.cpt, (init.mean - shift) / scale, init.std / scale)
    smooth = lambda p: negative_log_likelihood(problem, p)
    nonsmooth = lambda p: group_penalty(problem, p, penalty_discrete, penalty_continuous)
    fista_kw = dict(nonsmooth_fn=nonsmooth, max_steps=max_steps, tol=tol, step_growth=step_growth)
    if not problem.n_continuous:  # all discrete: the metric would be ones, one plain solve
        prox = lambda z, s: prox_group_lasso(problem, z, s, penalty_discrete, penalty_continuous)
        return solve_fista(smooth, prox, init, step_size=step_size, **fista_kw)
    drift = float(np.log(_METRIC_DRIFT))

    def solve(params, step, used):
        metric = _metric(problem, params)
        prox = lambda z, s: prox_group_lasso(
            problem, z, s, penalty_discrete, penalty_continuous, metric=metric
        )
        log_ref = jnp.log(params.std)
        stop = lambda st: (
            (used + st.num_steps >= max_steps)
            | (jnp.max(jnp.abs(jnp.log(st.params.std) - log_ref), initial=0.0) > drift)
            # not before the round's first step: a warm start below the floor (the previous grid
            # point's step) would end the round at once, forever (n_steps 0, `used` unchanged)
            | ((st.num_steps > 0) & (st.step_size < _METRIC_MIN_STEP))
        )
        return solve_fista(
            smooth, prox, params, step_size=step, metric=metric, stop_fn=stop, **fista_kw
        )

    def cond(carry):
        _, info, used, moved = carry
        # `moved`: every round takes a step (see `stop`); the flag makes termination not hinge
        # on that alone
        return ~info.converged & (used < max_steps) & moved

    def body(carry):
        params, info, used, _ = carry
        # A later round starts at the new metric's natural step (~1) at least: the last round's
        # step may have been shrunk for a stale metric (WDBC, float32: to 1.2e-4, where the
        # residual's rounding floor, ~1 / step, certified a point far from the optimum).
        start = jnp.where(used > 0, jnp.maximum(info.step_size, 1.0), info.step_size)
        params, info = solve(params, start, used)
        return params, info, used + info.num_steps, info.num_steps > 0

    dtype = jnp.result_type(init.std.dtype, jnp.float32)
    zero = jnp.asarray(0, jnp.int32)
    info0 = SolverInfo(
        zero,
        jnp.asarray(jnp.inf, dtype),
        jnp.asarray(False),
        jnp.asarray(step_size, dtype),
        jnp.asarray(jnp.inf, dtype),
    )
    params, info, used, _ = lax.while_loop(cond, body, (init, info0, zero, jnp.asarray(True)))
    # a group the prox put exactly at its (standardized) centre is exactly at Omega^(0)
    removed = jnp.all(params.mean == problem.center.mean, axis=0) & jnp.all(
        params.std == problem.center.std, axis=0
    )
    mean = jnp.where(removed[None, :], mu0, params.mean * scale + shift)
    # a removed group's sigma' is exactly 1, so sigma0 x 1 is exactly sigma0: no select needed
    out = GroupLassoParams(params.cpt, mean, params.std * scale)
    objective = group_lasso_objective(original, out, penalty_discrete, penalty_continuous)
    return out, info._replace(num_steps=used, objective=objective)


def _fit_check(args) -> None:
    """`jit_entry` hook of `fit_group_lasso` (it runs at every call, before the jitted body):
    the solver's name, and the penalties' values when they are concrete."""
    _check_values("penalty_discrete", args.get("penalty_discrete"))
    _check_values("penalty_continuous", args.get("penalty_continuous"))
    _check_solver(args.get("solver", "exact"))


def _path_check(args) -> None:
    """`jit_entry` hook of `group_lasso_path`."""
    _check_values("penalties", args.get("penalties"))
    _check_values("continuous_scale", args.get("continuous_scale", 1.0), low_open=True)
    _check_solver(args.get("solver", "exact"))


# the solvers' static settings: loop caps, the FISTA step multiplier and the solver's name
_SOLVER_STATIC = ("solver", "max_steps", "step_growth", "max_exact_steps")


@jit_entry(*_SOLVER_STATIC, check=_fit_check)
def fit_group_lasso(
    problem: GroupLassoProblem,
    penalty_discrete,
    penalty_continuous=None,
    *,
    init: GroupLassoParams | None = None,
    solver: str = "exact",
    step_size=1.0,
    max_steps: int = 2000,
    tol=1e-9,
    step_growth: float = 1.25,
    max_exact_steps: int = 100,
):
    r"""Solve the group-lasso NB problem for one pair of penalties.

    Two solvers (the optimum is the same; ``solver`` is static):

    * ``"exact"`` (default): the objective is a sum over predictors, so the discrete groups are
      solved group by group by root-finding (`_discrete_exact`: the zero test, then the ridge
      form of the optimality conditions, Newton on two scalar equations), and the continuous
      groups, whose likelihood is not convex in (mu, sigma), by preconditioned FISTA on their own
      part of the problem. About 10x faster than ``"fista"`` on the discrete Table-1 paths.
    * ``"fista"``: preconditioned FISTA with backtracking over all groups at once (prox and
      metric: module docstring).

    Args:
      problem: from `make_group_lasso_problem`.
      penalty_discrete: lambda_d >= 0 (array; vmap over it for a batch of penalties).
      penalty_continuous: lambda_c >= 0; default ``penalty_discrete``.
      init: starting parameters (feasible); default Omega^(0). The exact discrete solve needs no
        start (only the continuous groups use ``init`` there).
      solver: ``"exact"`` or ``"fista"``.
      step_size: initial FISTA step.
      max_steps, tol: FISTA cap (shared by its rounds) and tolerance on the prox-gradient
        residual (raised to the residual's rounding floor where it is below it, e.g. ``1e-7``
        under float32). ``tol`` is also the exact solver's tolerance on its relative residuals
        (``|log(rho t / tau)|`` and the simplex sums; at least a few ulps).
      step_growth: trial step multiplier per iteration (see `jaxnb.optim.fista_step`).
      max_exact_steps: cap on the exact solver's outer Newton steps (it needs about 5-15).

    Jitted, with ``solver``, ``max_steps``, ``step_growth`` and ``max_exact_steps`` static: an
    eager call compiles once per problem shape and setting (it used to recompile its solver loops
    at every call, 1-2 s each), and inside a caller's ``jit`` or ``vmap`` it inlines.

    Returns:
      ``(params, info)``: `GroupLassoParams` and a `jaxnb.optim.SolverInfo` (objective = F). With
      ``"exact"``, ``num_steps`` adds the discrete Newton steps to the continuous FISTA steps and
      ``residual`` is the larger of the two parts' residuals.
    """
    if penalty_continuous is None:
        penalty_continuous = penalty_discrete
    init = problem.center if init is None else init
    fista_kw = dict(
        step_size=step_size,
        max_steps=max_steps,
        tol=tol,
        step_growth=step_growth,
    )
    if solver == "fista" or problem.n_discrete == 0:
        return _fit_fista(problem, penalty_discrete, penalty_continuous, init, **fista_kw)
    cpt, n_iter, residual, converged = _discrete_exact(
        problem, penalty_discrete, tol=tol, max_iter=max_exact_steps
    )
    dtype = cpt.dtype
    mean, std = problem.center.mean, problem.center.std
    step = jnp.asarray(step_size, dtype)
    if problem.n_continuous:
        sub = _continuous_part(problem)
        start = GroupLassoParams(sub.center.cpt, init.mean, init.std)
        prm, info_c = _fit_fista(sub, penalty_discrete, penalty_continuous, start, **fista_kw)
        mean, std, step = prm.mean, prm.std, info_c.step_size
        n_iter = n_iter + info_c.num_steps
        residual = jnp.maximum(residual, info_c.residual)
        converged = converged & info_c.converged
    params = GroupLassoParams(cpt, mean, std)
    objective = group_lasso_objective(problem, params, penalty_discrete, penalty_continuous)
    return params, SolverInfo(n_iter, residual, converged, step, objective)


@jit_entry(*_SOLVER_STATIC, check=_path_check)
def group_lasso_path(
    problem: GroupLassoProblem,
    penalties,
    *,
    continuous_scale=1.0,
    init: GroupLassoParams | None = None,
    step_size=1.0,
    solver: str = "exact",
    **fit_kwargs,
) -> GroupLassoPath:
    r"""Regularization path over a penalty grid.

    Solves `fit_group_lasso` at ``(penalties[t], continuous_scale * penalties[t])`` for t = 0..s-1.
    FISTA solves (all groups with ``solver="fista"``, the continuous groups with ``"exact"``) run
    as a ``lax.scan`` starting each solve at the previous solution (and its last step size); the
    exact discrete solves need no start and run for every grid point at once. Pass a decreasing
    grid from `lambda_max` (e.g. `penalty_grid`) so the first solve starts at its optimum
    Omega^(0).

    Args:
      problem: from `make_group_lasso_problem`.
      penalties: (s,) grid.
      continuous_scale: lambda_c / lambda_d.
      init: start of the first solve (default Omega^(0)).
      step_size: initial step of the first solve.
      solver: ``"exact"`` (default) or ``"fista"`` (see `fit_group_lasso`).
      **fit_kwargs: ``max_steps``, ``tol``, ``step_growth``, ``max_exact_steps`` (jitted as in
        `fit_group_lasso`, the same settings static).

    Returns:
      A `GroupLassoPath`.
    """
    penalties = jnp.asarray(penalties)
    init = problem.center if init is None else init
    dtype = problem.group_weight.dtype
    exact = solver == "exact" and problem.n_discrete > 0
    max_exact = fit_kwargs.pop("max_exact_steps", 100)
    sub = _continuous_part(problem) if exact else problem

    def body(carry, lam):
        params, step = carry
        new, info = fit_group_lasso(
            sub,
            lam,
            continuous_scale * lam,
            init=params,
            step_size=step,
            solver="fista",
            **fit_kwargs,
        )
        return (new, info.step_size), (new, info)

    if exact:
        tol = fit_kwargs.get("tol", 1e-9)
        cpt, n_iter, residual, converged = jax.vmap(
            lambda lam: _discrete_exact(problem, lam, tol=tol, max_iter=max_exact)
        )(penalties)
        s = penalties.shape[0]
        mean = jnp.broadcast_to(problem.center.mean, (s,) + problem.center.mean.shape)
        std = jnp.broadcast_to(problem.center.std, (s,) + problem.center.std.shape)
        step = jnp.full((s,), step_size, dtype)
        if problem.n_continuous:
            start = GroupLassoParams(sub.center.cpt, init.mean, init.std)
            _, (prm, info_c) = lax.scan(body, (start, jnp.asarray(step_size, dtype)), penalties)
            mean, std, step = prm.mean, prm.std, info_c.step_size
            n_iter = n_iter + info_c.num_steps
            residual = jnp.maximum(residual, info_c.residual)
            converged = converged & info_c.converged
        params = GroupLassoParams(cpt, mean, std)
        objective = jax.vmap(
            lambda p, lam: group_lasso_objective(problem, p, lam, continuous_scale * lam)
        )(params, penalties)
        info = SolverInfo(n_iter, residual, converged, step, objective)
    else:
        _, (params, info) = lax.scan(body, (init, jnp.asarray(step_size, dtype)), penalties)
        objective = info.objective
    active = jax.vmap(lambda p: active_predictors(problem, p))(params)
    return GroupLassoPath(penalties, params, active, jnp.sum(active, axis=1), objective, info)
