r"""Weighted naive Bayes: Ferreira relevance weights and gradient-trained per-class weights.

Two ways to weight the per-predictor log-contributions ``L[r, i, j] = log f(x_ri | Y=j; Ω̂_i)``
(docs/CONVENTIONS.md) in the combination rule of `jaxnb.likelihood.combine`:

* **Ferreira weights** (Ferreira, Denison & Hand 2001, as restated in Vidaurre, Bielza & Larrañaga
  2011 [fsNB] Eqs. 6–7 and Vidaurre et al. 2013 [L1NB] Eqs. 8–9): one weight per predictor,

  .. math:: w_i = \sqrt{\sum_{j=1}^{c} \sum_{k=1}^{M_i} [P(Y=j \mid X_i=k) - P(Y=j)]^2},

  and ``log P(Y=j | x) = log π_j + Σ_i w_i log P(X_i = x_i | Y=j) − log Z``. Both papers print the
  double sum **without** weighting the states by P(X_i = k) (L1NB Eq. 8 is legible; fsNB Eq. 6 is
  OCR-garbled but has the same structure), so a rare state counts as much as a frequent one. We
  follow the papers by default (``state_weighting="uniform"``) and offer ``"marginal"``,
  ``Σ_k P(X_i=k) Σ_j [...]²``, as a documented alternative. The probabilities are the empirical
  (weighted) frequencies of the sufficient statistics (no smoothing); a state never observed has no
  P(Y | X_i = k) and contributes 0. Missing values are not counted (the statistics skip them),
  P(Y = j) is the class frequency of all rows.
  The weights are only defined for discrete predictors (fsNB §3.1). Continuous predictors are
  discretized first into ``n_bins`` equal-frequency bins (`jaxnb.methods.filters.
  equal_frequency_codes`, computed in JAX on the training rows); the weight then multiplies the
  Gaussian log-density of the predictor. This discretization is our choice: Ferreira et al. devise
  their own procedure that the two papers do not restate.

* **Per-predictor-per-class weights and bias** (Salperwyck, Lemaire & Hue [Stream], Eq. 2):
  ``H_j = b_j + Σ_i w_ij log p(x_i | C_j)``, ``P = softmax(H)``, trained on the log-loss ``−(1/N)
  Σ_r w_r log P_{y_r}`` with ``∂/∂H_j = P_j − T_j``. The paper trains online by one SGD pass; here
  the same model is trained offline by full-batch gradient on precomputed L (the "offline" variant
  the paper mentions), in a ``lax.while_loop`` from ``w = 1, b = log π`` (i.e. from NB), by
  Newton's method on the exact Hessian (`newton_hessian`; the default while the c (p + 1)
  parameters are at most `NEWTON_MAX_PARAMS`), optax's L-BFGS with a zoom line search (beyond)
  or Adam. The log-loss of a linear model in (w, b) is convex, but on separable data it has no
  minimizer; the optional ridge term ``(l2 / 2) Σ_ij (w_ij − 1)^2`` (centred on NB, not on 0)
  keeps the problem strongly convex in w (b is fixed up to the softmax's common shift). Newton
  and L-BFGS are monotone (line searches), so the training log-loss never exceeds NB's.

"""

from __future__ import annotations

from functools import partial

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

from .._batch import fast_or_fallback
from .._checks import check_array_range, check_scored_rows, concrete, jit_entry
from .._dtypes import float_dtype
from .._matmul import einsum
from ..likelihood import log_contributions, weighted_sum
from ..suffstats import has_spread, log_pooled_sd, pooled_gaussian, state_segments
from . import filters
from .filters import equal_frequency_codes

__all__ = [
    "STATE_WEIGHTINGS",
    "SOLVERS",
    "ferreira_weights_from_counts",
    "ferreira_weights",
    "GradientWeights",
    "GradientInfo",
    "gradient_objective",
    "fit_gradient_weights",
    "newton_hessian",
    "resolve_solver",
    "floor_log",
    "LOG_FLOOR",
    "unit_offsets",
    "standardized_terms",
    "model_terms",
    "weighted_terms",
    "floored_scores",
]

STATE_WEIGHTINGS = ("uniform", "marginal")
SOLVERS = ("auto", "newton", "lbfgs", "adam")
# solver="auto": Newton's method while the parameters c (p + 1) are at most this many (its
# Hessian then has at most 4.2M entries and a step costs about c (p + 1) L-BFGS steps, repaid by
# converging in 2-70 steps where L-BFGS takes hundreds to thousands), L-BFGS beyond
NEWTON_MAX_PARAMS = 2048
DEFAULT_MAX_STEPS = {"lbfgs": 2000, "adam": 500, "newton": 200}  # max_steps=None
# Newton's Hessian is assembled over blocks of rows holding at most this many entries of the
# per-row (c, c, p + 1) curvature products, so its memory does not grow with the rows
NEWTON_BLOCK_ENTRIES = 1 << 22
NEWTON_HALVINGS = 40  # Armijo backtracking: step sizes 1, 1/2, ..., 2^-39
# the weights' log-contributions and bias are floored here (`floor_log`): log of float32's
# smallest normal number, so that float32 and float64 fit the same objective
LOG_FLOOR = float(np.log(np.finfo(np.float32).tiny))
# `floored_scores` materializes the terms of at most this many (p, c) entries at once
FLOORED_BLOCK_TERMS = 1 << 21
# L-BFGS stops after this many steps in a row whose line search spent all its LINESEARCH_STEPS
# evaluations without a lower value: it has hit the objective's rounding floor (float32
# log-losses near the optimum), and every further step would cost as much for nothing. Runs of
# up to 10 such steps also occur before the floor, after which L-BFGS finds lower values again
# (float32, 500 x 100 x 3, l2 = 1e-4, on a CPU without AVX-512: stopping after 10 left the
# objective 6.5e-5 above where 2000 steps end; after 20, at it, on four seeds).
STALL_STEPS = 20
LINESEARCH_STEPS = 20  # optax.lbfgs's default zoom line-search budget


def ferreira_weights_from_counts(counts, class_weight, n_states, state_weighting="uniform"):
    r"""Ferreira weights of all discrete predictors from flattened counts (fsNB Eq. 6, L1NB Eq. 8).

    Args:
      counts: (K, c) weighted counts N_ijk (`jaxnb.suffstats.SuffStats.counts`).
      class_weight: (c,) weighted class counts N_j, giving P(Y = j) = N_j / N.
      n_states: static tuple of state counts M_i.
      state_weighting: "uniform" (the papers: plain sum over states) or "marginal" (each state's
        squared distance weighted by P(X_i = k) = N_ik / N_i).

    Returns:
      (q,) weights w_i ≥ 0; 0 for an irrelevant predictor (P(Y | X_i = k) = P(Y) for every k).
    """
    n_states = tuple(int(m) for m in n_states)
    if state_weighting not in STATE_WEIGHTINGS:
        raise ValueError(
            f"state_weighting must be one of {STATE_WEIGHTINGS}; got {state_weighting!r}"
        )
    if counts.shape[0] != sum(n_states):
        raise ValueError(f"counts must have sum(n_states)={sum(n_states)} rows; got {counts.shape}")
    q = len(n_states)
    if q == 0:
        return jnp.zeros((0,), counts.dtype)
    prior = class_weight / jnp.sum(class_weight)
    n_ik = jnp.sum(counts, axis=1)  # (K,)
    seen = n_ik > 0
    post = counts / jnp.where(seen, n_ik, 1.0)[:, None]  # P(Y=j | X_i=k)
    sq = jnp.where(seen, jnp.sum((post - prior[None, :]) ** 2, axis=1), 0.0)  # (K,)
    seg = jnp.asarray(state_segments(n_states))
    if state_weighting == "marginal":
        n_i = jax.ops.segment_sum(n_ik, seg, num_segments=q)
        sq = sq * n_ik / jnp.where(n_i > 0, n_i, 1.0)[seg]
    return jnp.sqrt(jax.ops.segment_sum(sq, seg, num_segments=q))


def _ferreira_check(args) -> None:
    """`jit_entry` hook of `ferreira_weights`: the checks of the filters' information measures
    (`jaxnb.methods.filters._eager_check`: concrete codes whole numbers in [0, n_states[i]) with
    -1 = missing, labels in [0, n_classes), weights finite and >= 0; tracers skipped) plus the
    row counts of ``values`` and ``weight`` (a (1,) weight would broadcast over every row)."""
    codes, values, weight = args.get("codes"), args.get("values"), args.get("weight")
    n = np.shape(codes)[0] if np.ndim(codes) == 2 else None
    if n is not None and (np.ndim(values) != 2 or np.shape(values)[0] != n):
        raise ValueError(f"values must have shape (n, r) = ({n}, r); got {np.shape(values)}")
    if n is not None and weight is not None and np.shape(weight) != (n,):
        raise ValueError(f"weight must have shape (n,) = ({n},); got {np.shape(weight)}")
    filters._eager_check(args)


@jit_entry("n_states", "n_classes", "n_bins", "state_weighting", check=_ferreira_check)
def ferreira_weights(
    codes, values, y, weight=None, *, n_states, n_classes, n_bins=5, state_weighting="uniform"
):
    r"""Ferreira weights of every predictor, order [discrete, continuous], shape (p,).

    Discrete predictors use their counts directly; continuous predictors are first cut into
    ``n_bins`` equal-frequency bins on the rows with positive weight (module docstring). One
    one-hot contraction gives the counts of all predictors at once.

    Args:
      codes: (n, q) int codes in [0, n_states[i]) (−1 = missing); values: (n, r) floats
        (NaN = missing).
      y: (n,) int class codes in [0, n_classes); weight: optional (n,) sample weights, finite and
        >= 0 (0/1 for folds).
      n_states: static int (shared) or one int per discrete column; n_classes: static;
        n_bins: static number of bins for continuous predictors.
      state_weighting: see `ferreira_weights_from_counts`.

    Concrete inputs are checked eagerly like the filters' information measures (a code or label
    out of range or a negative weight raises instead of being dropped); tracers are skipped.
    """
    if int(n_bins) < 2:
        raise ValueError(f"n_bins must be >= 2 (bins of the continuous predictors); got {n_bins}")
    n_states = filters.as_state_tuple(n_states, codes.shape[1])
    dtype = jnp.result_type(values.dtype, float_dtype())
    n = y.shape[0]
    w = jnp.ones((n,), dtype) if weight is None else jnp.asarray(weight).astype(dtype)
    if values.shape[1]:
        bins = equal_frequency_codes(values, n_bins, w)
        all_codes = jnp.concatenate([codes.astype(jnp.int32), bins], axis=1)
        all_states = tuple(n_states) + (int(n_bins),) * values.shape[1]
    else:
        all_codes, all_states = codes.astype(jnp.int32), tuple(n_states)
    if not all_states:
        return jnp.zeros((0,), dtype)
    M = max(all_states)
    Yw = jax.nn.one_hot(y, n_classes, dtype=dtype) * w[:, None]
    onehot = jax.nn.one_hot(all_codes, M, dtype=dtype)  # (n, p, M); −1 → zero row
    padded = einsum("npm,nc->pmc", onehot, Yw).reshape(len(all_states) * M, n_classes)
    valid = [i * M + k for i, m in enumerate(all_states) for k in range(m)]
    counts = padded[jnp.asarray(valid)]
    return ferreira_weights_from_counts(counts, Yw.sum(0), all_states, state_weighting)


# ------------------------------------------------------------------------------------------------
# Gradient-trained per-predictor-per-class weights (Stream Eq. 2, offline).


class GradientWeights(eqx.Module):
    """Weights W (p, c) and bias b (c,) of ``H = b + Σ_i W[i] * L[:, i]``."""

    weights: jax.Array
    bias: jax.Array


class GradientInfo(eqx.Module):
    """Info record of `fit_gradient_weights`.

    Attributes:
      n_steps: optimizer steps taken; loss: final objective (log-loss + ridge term);
      log_loss: final mean training log-loss; grad_norm: final Euclidean norm of the objective's
      gradient; converged: ``grad_norm <= tol``, or (Newton) stopped where a Newton step's
      predicted decrease is below the objective's rounding (its optimum at this precision; in
      float32 the gradient's own rounding can keep grad_norm above a tol of 1e-6);
      initial_loss: log-loss at w = 1, b = log π (NB);
      stalled: L-BFGS stopped because its line search spent its whole budget without a lower
      value in `STALL_STEPS` steps in a row (the objective's rounding floor, typically float32),
      or Newton found no lower value while its step still predicted a decrease above rounding.
    """

    n_steps: jax.Array
    loss: jax.Array
    log_loss: jax.Array
    grad_norm: jax.Array
    converged: jax.Array
    initial_loss: jax.Array
    stalled: jax.Array


def _log_loss(params: GradientWeights, L, y, weight, S=None):
    """Mean training log-loss of ``H = Σ_i w_i L_i + b``, evaluated as
    ``Σ_i (w_i − 1) L_i + S + b`` with ``S`` from `_centred_nb` (computed here when not given).

    The two differ by a per-row constant, which the softmax ignores; but near ``W = 1`` the
    second's terms are small where ``Σ_i w_i L_i`` sums p log-densities (hundreds in magnitude
    with a few hundred predictors), whose float32 rounding (~1e-5 per row) drowned the
    objective's late decreases and stalled the line search."""
    S = _centred_nb(L) if S is None else S
    H = einsum("npc,pc->nc", L, params.weights - 1.0) + S + params.bias[None, :]
    logp = jax.nn.log_softmax(H, axis=-1)
    true = jnp.take_along_axis(logp, y[:, None], axis=1)[:, 0]
    return -weighted_sum(true, weight) / jnp.sum(weight)


def _centred_nb(L):
    """(n, c) NB log-likelihoods ``Σ_i L_ic`` less their mean over the classes, summed from
    centred contributions (each predictor's own offset removed before the sum over p)."""
    return jnp.sum(L - jnp.mean(L, axis=2, keepdims=True), axis=1)


def floor_log(a):
    """Log-probabilities (or log-densities) floored at `LOG_FLOOR`, the same value in float32
    and float64.

    A −inf contribution (an unseen cell with alpha = 0) or bias (a class of zero weight) made
    (P − T)·L = 0·(−inf) = NaN in the gradient and stopped the optimiser at step 0; floored, the
    class keeps probability ~0 and every gradient is finite. The floor was log(tiny) of the
    dtype until 2026-11-29, −87 in float32 and −708 in float64, so the two precisions trained
    different models wherever a Gaussian term fell between (UCI Flags has terms near −4e10,
    from a class whose column barely varies, at the 1e-9 variance floor): float32 and float64
    posteriors were up to 1.0 apart there, 4 of 194 training predictions flipped; now 1.4e-4
    and none. `WeightedNB(scheme="gradient")` scores and explains with the same floored terms."""
    return jnp.maximum(a, jnp.asarray(LOG_FLOOR, a.dtype))


def unit_offsets(stats):
    """(p,) log s_i of each continuous predictor (pooled weighted sd over the classes; 0 without
    spread) and 0 for the discrete ones, predictor order [discrete, continuous]; and (p,) whether
    each predictor has a term (False for a continuous one without spread: it has no standardized
    density). The ``log_scale`` and ``keep`` of `model_terms`."""
    q = len(stats.n_states)
    pw, _, pm2 = pooled_gaussian(stats)
    off = jnp.concatenate([jnp.zeros(q, pw.dtype), log_pooled_sd(pw, pm2)])
    return off, jnp.concatenate([jnp.ones(q, bool), has_spread(pw, pm2)])


def standardized_terms(L, values, log_scale, weights=None):
    """``L`` (n, p, c) plus ``log_scale`` (p,) (times ``weights`` (p, c), if given) on the
    observed entries, predictor order [discrete, continuous]: a missing value's term stays as it
    is (0), a discrete predictor's offset is 0."""
    q = L.shape[1] - values.shape[1]
    seen = jnp.concatenate([jnp.ones((L.shape[0], q), bool), ~jnp.isnan(values)], axis=1)
    shift = log_scale[:, None] if weights is None else log_scale[:, None] * weights
    return jnp.where(seen[:, :, None], L + shift[None], L)


def model_terms(nb, codes, values, log_scale=None, keep=None):
    r"""(n, p, c) unweighted terms of the gradient-trained weighted NB: each observed value's
    log-contribution log f(x_ri | j) (`jaxnb.likelihood.log_contributions`), plus ``log_scale_i``
    (log s_i, making a Gaussian term that of the standardized value x_i / s_i;
    `standardized_terms`) where given, floored at `LOG_FLOOR`; 0 for a missing value and for a
    predictor with ``keep_i`` False (a continuous one without spread; `unit_offsets`).

    `WeightedNB(scheme="gradient")` and `jaxnb.distributed.fit_wnb` train on these terms and
    score and explain with them, so training and prediction see the same numbers in float32
    and float64. Predictors in the order [discrete, continuous].
    """
    L = log_contributions(nb, codes, values)
    if log_scale is not None:
        L = standardized_terms(L, values, log_scale)
    L = floor_log(L)
    return L if keep is None else jnp.where(keep[None, :, None], L, 0.0)


def weighted_terms(nb, codes, values, weights, log_scale=None, keep=None):
    """(n, p, c) weighted terms ``weights[i, j]`` x `model_terms` (floored, hence finite: a zero
    weight gives 0)."""
    return model_terms(nb, codes, values, log_scale, keep) * weights[None]


def floored_scores(nb, codes, values, weights, bias, log_scale=None, keep=None):
    """(n, c) scores ``bias_j + Σ_i weights[i, j]`` x `model_terms`: the floor needs each term,
    so the quadratic expansion of `jaxnb.likelihood.log_joint` cannot be used; the terms are
    formed in blocks of rows holding at most `FLOORED_BLOCK_TERMS` of them (``lax.map`` over the
    blocks, each one contraction), so memory does not grow with the rows."""
    p, c = weights.shape
    n = codes.shape[0]
    block = max(1, min(FLOORED_BLOCK_TERMS // max(1, p * c), n))

    def scores(cd, vl):  # floored terms are finite: a zero weight gives 0
        L = model_terms(nb, cd, vl, log_scale, keep)
        return einsum("npc,pc->nc", L, weights) + bias[None, :]

    k = n // block
    if k <= 1:
        return scores(codes, values)
    head = lax.map(
        lambda blk: scores(*blk),
        (
            codes[: k * block].reshape(k, block, codes.shape[1]),
            values[: k * block].reshape(k, block, values.shape[1]),
        ),
    ).reshape(k * block, c)
    if n == k * block:
        return head
    return jnp.concatenate([head, scores(codes[k * block :], values[k * block :])])


def gradient_objective(params: GradientWeights, L, y, weight, l2=0.0, S=None):
    r"""``−(1/N) Σ_r w_r log softmax(H_r)_{y_r} + (l2/2) ‖W − 1‖²`` (Stream Eq. 2 + ridge).

    ``S``: optional `_centred_nb` of ``L``, for a caller that evaluates the objective many times.
    """
    d = params.weights - 1.0
    return _log_loss(params, L, y, weight, S) + 0.5 * l2 * jnp.sum(d * d)


def fit_gradient_weights(
    L,
    y,
    log_prior,
    weight=None,
    *,
    l2=1e-4,
    solver="auto",
    learning_rate=0.05,
    max_steps=None,
    tol=1e-6,
):
    r"""Full-batch training of the Stream Eq. 2 weights on precomputed contributions.

    Starts from NB (``W = 1``, ``b = log π``) and minimizes `gradient_objective` in a
    ``lax.while_loop`` until the gradient norm is at most ``tol`` or ``max_steps`` steps.

    Args:
      L: (n, p, c) log-contributions under the fitted NB parameters
        (`jaxnb.likelihood.log_contributions`).
      y: (n,) int class codes; log_prior: (c,) initial bias; weight: optional (n,) row weights.
      l2: ridge strength on ``W − 1`` (≥ 0).
      solver: "newton" (damped Newton's method on the exact Hessian, `newton_hessian`, with an
        Armijo backtracking line search: monotone; a step costs O(n c² p²) and memory
        (c (p + 1))²), "lbfgs" (`optax.lbfgs`, zoom line search: monotone), "adam"
        (`optax.adam` with ``learning_rate``; not monotone, kept for comparison with the online
        SGD of the paper), or "auto" (default): Newton when c (p + 1) <= `NEWTON_MAX_PARAMS`,
        else L-BFGS. Newton converges where L-BFGS crawls: on Flags (194 rows, 28 predictors,
        8 classes, l2 = 1e-4, float64) 43 steps in 0.1 s against 10,541 L-BFGS steps.
      learning_rate: Adam step size (ignored by the others).
      max_steps: step cap (None: 200 for Newton; 2000 for L-BFGS, which converges in a few
        hundred steps on well-conditioned data; 500 for Adam, which at a fixed rate need not
        reach ``tol``); tol: tolerance on the gradient norm. Newton stops when neither a step
        that lowers the objective nor a full step that lowers the gradient norm within the
        objective's rounding exists: as converged (``info.converged``) if its step predicted a
        decrease below that rounding (the optimum at this precision; in float32 the gradient
        norm can stay above a tol of 1e-6 there), else as stalled (``info.stalled``). L-BFGS
        stops once its line search has spent
        its whole budget without a lower value in `STALL_STEPS` steps in a row
        (``info.stalled``): the objective cannot fall further at this precision (a weakly
        regularized float32 fit can stall with a gradient norm of 1e-4..1e-3), and each further
        step would cost the line search's maximum of function evaluations.

    Returns:
      ``(GradientWeights, GradientInfo)``.
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got {solver!r}")
    for name, value in (("l2", l2), ("tol", tol), ("learning_rate", learning_rate)):
        if concrete(value):
            check_array_range(name, value, 0.0, low_open=name == "learning_rate")
    if max_steps is not None and (
        isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) or max_steps < 1
    ):
        raise ValueError(f"max_steps must be None or an int >= 1; got {max_steps!r}")
    _check_gradient_rows(L, y, weight)
    solver = resolve_solver(solver, np.shape(L)[1], np.shape(L)[2])
    if max_steps is None:
        max_steps = DEFAULT_MAX_STEPS[solver]
    c = np.shape(L)[2]
    if np.shape(log_prior) != (c,):
        raise ValueError(
            f"log_prior must have shape ({c},) (one per class); got {np.shape(log_prior)}"
        )
    for name, value in (("L", L), ("log_prior", log_prior)):
        if concrete(value) and np.isnan(np.asarray(value, dtype=float)).any():
            raise ValueError(f"{name} contains NaN; the log-loss would be NaN (-inf is allowed)")
    return _fit_gradient_jit(
        L, y, log_prior, weight, l2, learning_rate, tol, solver=solver, max_steps=int(max_steps)
    )


def resolve_solver(solver: str, p: int, c: int) -> str:
    """The solver that ``solver`` names for p predictors and c classes ("auto": "newton" when
    c (p + 1) <= `NEWTON_MAX_PARAMS`, else "lbfgs"; any other name as given)."""
    if solver != "auto":
        return solver
    return "newton" if c * (p + 1) <= NEWTON_MAX_PARAMS else "lbfgs"


def _check_gradient_rows(L, y, weight) -> None:
    """``L`` (n, p, c), then `check_scored_rows` for ``y`` and ``weight``."""
    if len(np.shape(L)) != 3:
        raise ValueError(f"L must have shape (n, p, c); got {np.shape(L)}")
    check_scored_rows("L", L, y, weight, "the log-loss is divided by it")


@partial(jax.jit, static_argnames=("solver", "max_steps", "stall_steps"))
def _fit_gradient_jit(
    L, y, log_prior, weight, l2, learning_rate, tol, *, solver, max_steps, stall_steps=STALL_STEPS
):
    dtype = L.dtype
    n, p, c = L.shape
    weight = jnp.ones((n,), dtype) if weight is None else weight.astype(dtype)
    l2 = jnp.asarray(l2, dtype)
    L = floor_log(L)
    init = GradientWeights(jnp.ones((p, c), dtype), floor_log(jnp.asarray(log_prior, dtype)))
    S = _centred_nb(L)  # once, not per evaluation
    fun = lambda prm: gradient_objective(prm, L, y, weight, l2, S)

    grad_fn = jax.grad(fun)
    if solver == "newton":
        k, params, gnorm, stalled, at_precision = _newton_loop(
            fun, L, y, weight, l2, S, init, tol, max_steps
        )
        return params, GradientInfo(
            k,
            fun(params),
            _log_loss(params, L, y, weight, S),
            gnorm,
            (gnorm <= tol) | at_precision,
            _log_loss(init, L, y, weight, S),
            stalled,
        )
    tree_get = optax.tree_utils.tree_get
    if solver == "lbfgs":
        opt = optax.lbfgs(  # optax's default line search, with its step budget named
            linesearch=optax.scale_by_zoom_linesearch(
                max_linesearch_steps=LINESEARCH_STEPS, initial_guess_strategy="one"
            )
        )
        value_and_grad = optax.value_and_grad_from_state(fun)

        def step(params, state, _):
            # value and gradient at params: read from the state the line search left (computed
            # only at the first step)
            value, grad = value_and_grad(params, state=state)
            updates, state = opt.update(grad, state, params, value=value, grad=grad, value_fn=fun)
            # ... which holds the value and gradient at the new point too (no extra gradient for
            # the stopping test). A step that spent every line-search evaluation without a lower
            # value has stalled.
            failed = (tree_get(state, "value") >= value) & (
                tree_get(state, "num_linesearch_steps") >= LINESEARCH_STEPS
            )
            return optax.apply_updates(params, updates), state, tree_get(state, "grad"), failed
    else:
        opt = optax.adam(learning_rate)

        def step(params, state, grad):
            updates, state = opt.update(grad, state, params)
            params = optax.apply_updates(params, updates)
            return params, state, grad_fn(params), jnp.array(False)

    def cond(carry):
        k, _, _, _, gnorm, stall = carry
        return (k < max_steps) & (gnorm > tol) & (stall < stall_steps)

    def body(carry):
        k, params, state, grad, _, stall = carry
        params, state, grad, no_decrease = step(params, state, grad)
        stall = jnp.where(no_decrease, stall + 1, 0)
        return k + 1, params, state, grad, optax.tree_utils.tree_norm(grad), stall

    g0 = grad_fn(init)
    carry = (jnp.int32(0), init, opt.init(init), g0, optax.tree_utils.tree_norm(g0), jnp.int32(0))
    k, params, _, _, gnorm, stall = lax.while_loop(cond, body, carry)
    info = GradientInfo(
        k,
        fun(params),
        _log_loss(params, L, y, weight, S),
        gnorm,
        gnorm <= tol,
        _log_loss(init, L, y, weight, S),
        (stall >= stall_steps) & (gnorm > tol),
    )
    return params, info


# ------------------------------------------------------------------------------------------------
# Newton's method for the weights (solver="newton"): the objective has c (p + 1) parameters, few
# for the small tables where L-BFGS is slowest (nearly separable rows and a weak ridge: Flags,
# 194 rows x 28 predictors x 8 classes, l2 = 1e-4, took 10,541 L-BFGS steps).


def _flat(params: GradientWeights):
    """(c (p + 1),) class-major vector [W[:, 0], b_0, W[:, 1], b_1, ...]."""
    return jnp.concatenate([params.weights, params.bias[None, :]], axis=0).T.reshape(-1)


def _unflat(z, p: int, c: int) -> GradientWeights:
    blocks = z.reshape(c, p + 1).T
    return GradientWeights(blocks[:p], blocks[p])


def newton_hessian(params: GradientWeights, L, y, weight=None, l2=0.0, S=None):
    r"""Exact Hessian of `gradient_objective` in the class-major layout of the parameters
    (class j's block is [W[:, j], b_j]), shape (c (p + 1), c (p + 1)).

    The scores H_rj = b_j + Σ_i W_ij L_rij are those of a conditional logit with features
    φ_rj = (L_r·j, 1), so the block (j, k) is (1/N) Σ_r w_r M_rjk φ_rj φ_rkᵀ (+ l2 on W's
    diagonal) with M_r = diag(P_r) − P_r P_rᵀ. M is formed entrywise (P_j (1 − P_j) as
    P_j Σ_{k≠j} P_k), not as the difference of the two outer-product sums, which cancel to
    rounding when P_r is nearly one-hot. ``y`` is taken for the signature of
    `gradient_objective`; the Hessian does not depend on the labels. Rows are taken in blocks
    (`NEWTON_BLOCK_ENTRIES`)."""
    del y
    n, p, c = L.shape
    weight = jnp.ones((n,), L.dtype) if weight is None else weight.astype(L.dtype)
    S = _centred_nb(L) if S is None else S
    wn = weight / jnp.sum(weight)
    block = max(1, min(n, NEWTON_BLOCK_ENTRIES // max(1, c * c * (p + 1))))
    extra = -n % block
    if extra:  # zero-weight rows pad the last block
        L = jnp.concatenate([L, jnp.zeros((extra, p, c), L.dtype)])
        S = jnp.concatenate([S, jnp.zeros((extra, c), S.dtype)])
        wn = jnp.concatenate([wn, jnp.zeros((extra,), wn.dtype)])
    nb = (n + extra) // block

    def one_block(acc, rows):
        Lb, Sb, wb = rows
        H = einsum("npc,pc->nc", Lb, params.weights - 1.0) + Sb + params.bias[None, :]
        P = jax.nn.softmax(H, axis=-1)
        M = -P[:, :, None] * P[:, None, :]
        off = 1.0 - jnp.eye(c, dtype=P.dtype)
        diag = P * einsum("nk,kj->nj", P, off)  # P_j Σ_{k≠j} P_k: 1 - P_j without cancellation
        M = jnp.where(jnp.eye(c, dtype=bool)[None], diag[:, :, None], M) * wb[:, None, None]
        phi = jnp.concatenate([jnp.swapaxes(Lb, 1, 2), jnp.ones((block, c, 1), Lb.dtype)], 2)
        A = M[..., None] * phi[:, None, :, :]  # (b, j, k, p + 1)
        return acc + einsum("nja,njkb->jakb", phi, A), None

    zero = jnp.zeros((c, p + 1, c, p + 1), L.dtype)
    rows = (
        L.reshape(nb, block, p, c),
        S.reshape(nb, block, c),
        wn.reshape(nb, block),
    )
    hess, _ = lax.scan(one_block, zero, rows)
    hess = hess.reshape(c * (p + 1), c * (p + 1))
    ridge = jnp.tile(jnp.concatenate([jnp.ones(p, L.dtype), jnp.zeros(1, L.dtype)]), c)
    return hess + jnp.diag(l2 * ridge)


def _newton_direction(hess, g, p: int, c: int):
    """Newton direction −H⁻¹ g, with the bias's softmax-invariant direction u (all b_j up by
    one; H u = 0, g ⊥ u) made nonsingular by adding u uᵀ, which leaves the solution of
    H d = −g with d ⊥ u unchanged; Jacobi-scaled and Cholesky-factored with a tiny relative
    damping. Falls back to −g if the factorization fails (non-finite); returns (d, whether d is
    the Newton direction)."""
    dtype = hess.dtype
    u = jnp.tile(jnp.concatenate([jnp.zeros(p, dtype), jnp.ones(1, dtype)]), c)
    A = hess + jnp.outer(u, u)
    scale = jnp.sqrt(jnp.maximum(jnp.diag(A), jnp.finfo(dtype).tiny))
    As = A / scale[:, None] / scale[None, :]
    As = As + (64 * jnp.finfo(dtype).eps) * jnp.eye(A.shape[0], dtype=dtype)
    chol = jnp.linalg.cholesky(As)
    d = -jax.scipy.linalg.cho_solve((chol, True), g / scale) / scale
    d = d - u * (jnp.sum(u * d) / c)  # no drift of the bias along u
    ok = jnp.all(jnp.isfinite(d)) & (jnp.sum(g * d) < 0)
    return jnp.where(ok, d, -g), ok


def _newton_loop(fun, L, y, weight, l2, S, init, tol, max_steps):
    """Damped Newton (Armijo backtracking) from ``init``; returns (steps, params, grad norm,
    stalled, at_precision). Stalled: no step size down to 2^-(NEWTON_HALVINGS - 1) lowers the
    objective (its rounding floor at this precision). At precision: stalled where the last
    Newton step predicted a decrease (half the squared Newton decrement, −gᵀd / 2) below the
    objective's rounding, i.e. at the optimum as far as this precision can tell; in float32 the
    gradient norm's own rounding floor can sit above a tol of 1e-6 there."""
    _, p, c = L.shape
    f = lambda z: fun(_unflat(z, p, c))
    vg = jax.value_and_grad(f)

    def cond(carry):
        k, _, _, _, gnorm, stalled, _ = carry
        return (k < max_steps) & (gnorm > tol) & ~stalled

    def body(carry):
        k, z, fz, g, gnorm, _, _ = carry
        hess = newton_hessian(_unflat(z, p, c), L, y, weight, l2, S)
        d, newton = _newton_direction(hess, g, p, c)
        slope = jnp.sum(g * d)

        def ls_cond(state):
            i, s, fnew = state
            return (i < NEWTON_HALVINGS) & ~(fnew <= fz + 1e-4 * s * slope)

        def ls_body(state):
            i, s, _ = state
            s = 0.5 * s
            return i + 1, s, f(z + s * d)

        f_full, g_full = vg(z + d)  # the full step: the line search's first try
        one = jnp.ones((), z.dtype)
        i, s, fnew = lax.while_loop(ls_cond, ls_body, (jnp.int32(0), one, f_full))
        # a step must satisfy Armijo and strictly lower the objective. Near the optimum in
        # float32 the objective's changes fall below its rounding and no step passes: then
        # the full Newton step is taken if it lowers the gradient norm without raising the
        # objective beyond rounding; if that fails too, the fit has stalled.
        armijo = (fnew <= fz + 1e-4 * s * slope) & (fnew < fz)
        gnorm_full = jnp.linalg.norm(g_full)
        rounding = 16 * jnp.finfo(z.dtype).eps * jnp.maximum(jnp.abs(fz), 1.0)
        polish = ~armijo & (gnorm_full < gnorm) & (f_full <= fz + rounding)
        full = polish | armijo & (i == 0)  # the full step, whose value and gradient are known
        z_new = jnp.where(armijo, z + s * d, jnp.where(polish, z + d, z))
        # under vmap, evaluated for the whole batch only when some element needs it (each
        # element keeps its own full-step values where it took the full step)
        f_new, g_new = fast_or_fallback(full, lambda: (f_full, g_full), lambda: vg(z_new))
        tiny_decrease = newton & (-0.5 * slope <= rounding)
        return (
            k + 1,
            z_new,
            f_new,
            g_new,
            jnp.linalg.norm(g_new),
            ~(armijo | polish),
            tiny_decrease,
        )

    z0 = _flat(init)
    f0, g0 = vg(z0)
    no = jnp.array(False)
    carry = (jnp.int32(0), z0, f0, g0, jnp.linalg.norm(g0), no, no)
    k, z, _, _, gnorm, stalled, tiny_decrease = lax.while_loop(cond, body, carry)
    stalled = stalled & (gnorm > tol)
    return k, _unflat(z, p, c), gnorm, stalled & ~tiny_decrease, stalled & tiny_decrease
