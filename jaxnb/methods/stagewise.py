r"""Forward stagewise naive Bayes (fsNB) as one jit-compiled ``lax.while_loop``.

Vidaurre, Bielza & Larrañaga (2011), "Forward stagewise naive Bayes", Prog. Artif. Intell. 1, 57–69,
§5, Algorithm 1; model selection §6, Eq. (14).

Every predictor i is interpolated between "removed" and "fully included" (fsNB Eq. 13):

    Ω_i(α_i) = α_i Ω⁽¹⁾_i + (1 − α_i) Ω⁽⁰⁾_i,       α_i ∈ [0, 1],

so its log-contribution is, for a discrete predictor,
``L_i(a)[r, j] = log(a θ⁽¹⁾[x_ri, j] + (1 − a) θ⁽⁰⁾[x_ri, j])`` and, for a Gaussian one,
``log N(x_ri; a μ⁽¹⁾_ij + (1 − a) μ⁽⁰⁾_i, (a σ⁽¹⁾_ij + (1 − a) σ⁽⁰⁾_i)²)``. Neither is linear in
``a``, so a candidate move is evaluated by recomputing predictor i's contribution: with the current
total score ``S = log π + Σ_i L_i(α_i)`` the candidate (i, t) scores
``S − L_i(α_i) + L_i(min(1, α_i + tε))``. Logs are taken on the CPT rows (and the Gaussian scales)
only; rows pick their values by code.

Algorithm 1, as implemented (`fsnb_path`):

1. α = 0 (every predictor removed; the model predicts from the prior alone).
2. While some α_i < 1 (and the iteration budget / early stopping allow): evaluate the criterion of
   every candidate (i, t), i with α_i < 1, t = 1..v (all p × v candidates in one ``vmap`` over t
   of an (n, p, c) broadcast), pick the best, and update α_{i*} ← min(1, α_{i*} + t* ε)
   (``step_rule="t_eps"``, the pseudocode) or α_{i*} ← min(1, α_{i*} + ε) (``step_rule="eps"``, the
   prose: "the predictor ... will be updated by ε").
3. Ties: the best candidate is the first one, in (i, t) order (predictor-major), with the lowest
   criterion value — the pseudocode's ``if error < error*`` with ``error* = ∞`` scanned over i
   then t.
   A move is made every iteration, even when it does not lower the criterion.
4. Early stopping (paper §5): stop once the best criterion value seen has not strictly improved for
   ``patience`` consecutive iterations (the paper gives no value; ``None`` disables it).

α is kept as an integer number of ε-units k_i, α_i = min(1, k_i ε) with α_i = 1 exactly once
k_i ≥ ⌈1/ε⌉, so the path has no floating drift and "α_i < 1" is an exact integer test.

Criteria (all weighted by ``weight``; folds and validation splits are 0/1 weights):
``"error"`` (the paper: training misclassification rate, argmax ties to the lowest class index),
``"error_probability"`` (1/N) Σ_r (1 − P(y_r | x_r)), ``"log_loss"`` −(1/N) Σ_r log P(y_r | x_r).

The result (`StagewisePath`) keeps the whole path in fixed-size arrays of ``max_iter + 1`` rows
(row 0 is α = 0): α, criterion, error rate, log loss, AIC = Q + 2d/N with
Q = −(2/N) Σ_r log P(y_r|x_r) and d = #{α_i > 0} (Eq. 14), the move (i*, t*), the cumulative
number of candidate evaluations, and ``n_iter``. Rows after ``n_iter`` repeat the final model,
so ``argmin`` over a path column never leaves the computed part and paths of different lengths
stack (vmap over data sets or folds).
"""

from __future__ import annotations

import sys
from functools import partial

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._checks import check_labels, concrete, jit_entry
from ..likelihood import _check_rows, weighted_sum
from ..params import NBParams, fit_marginal, fit_mle
from ..suffstats import state_offsets, state_segments
from .nb import _fit_nb_check, fit_stats

__all__ = [
    "CRITERIA",
    "STEP_RULES",
    "StagewisePath",
    "fsnb_path",
    "fit_fsnb",
    "path_alpha",
    "evaluate_path",
    "interpolated_contributions",
    "interpolated_scores",
    "default_max_iter",
    "n_units",
    "criterion_from_scores",
    "class_independent",
]

CRITERIA = ("error", "error_probability", "log_loss")
STEP_RULES = ("t_eps", "eps")
_LOG_2PI = float(np.log(2 * np.pi))
_NO_PATIENCE = np.iinfo(np.int32).max


class StagewisePath(eqx.Module):
    """The fsNB path: ``max_iter + 1`` rows (row 0: α = 0); rows > n_iter repeat the last one.

    Attributes:
      alpha: (m+1, p) interpolation coefficients after each iteration.
      criterion: (m+1,) search criterion of each model (on the weighted rows).
      error: (m+1,) misclassification rate.
      log_loss: (m+1,) −(1/N) Σ_r w_r log P(y_r | x_r).
      aic: (m+1,) AIC = 2 log_loss + 2 d / N (fsNB §6, Eq. 14).
      n_active: (m+1,) d = #{α_i > 0}.
      chosen: (m+1,) predictor moved at each iteration (−1 in row 0 and after n_iter).
      step: (m+1,) t* of each iteration (0 in row 0 and after n_iter).
      n_evaluations: (m+1,) cumulative number of candidate models evaluated.
      n_iter: number of iterations performed.
      stopped_early: True when patience ended the search (rather than all α = 1 or max_iter).
    """

    alpha: jax.Array
    criterion: jax.Array
    error: jax.Array
    log_loss: jax.Array
    aic: jax.Array
    n_active: jax.Array
    chosen: jax.Array
    step: jax.Array
    n_evaluations: jax.Array
    n_iter: jax.Array
    stopped_early: jax.Array


def n_units(epsilon) -> int:
    """Number of ε-units that reach α = 1: ⌈1/ε⌉ (static, NumPy); robust to 1/0.025 = 40.000…01."""
    if not (np.isfinite(float(epsilon)) and 0.0 < float(epsilon) <= 1.0):
        raise ValueError(f"epsilon must lie in (0, 1] (the step of alpha); got {epsilon!r}")
    return int(np.ceil(1.0 / float(epsilon) * (1.0 - 1e-9)))


def default_max_iter(n_predictors: int, epsilon) -> int:
    """Iterations needed to bring every α to 1 when each move is a single ε-unit (p ⌈1/ε⌉)."""
    return int(n_predictors) * n_units(epsilon)


def path_alpha(units, epsilon, k_max):
    """α = min(1, k ε), exactly 1 once k ≥ k_max."""
    return jnp.where(units >= k_max, 1.0, units * epsilon)


def criterion_from_scores(scores, y, weight, criterion):
    r"""Criterion of joint scores ``scores[..., n, c]`` (reduced over rows n), any leading axes.

    ``"error"``: Σ_r w_r [argmax_j scores ≠ y_r] / Σ w (ties: lowest class index);
    ``"error_probability"``: Σ_r w_r (1 − P(y_r | x_r)) / Σ w;
    ``"log_loss"``: −Σ_r w_r log P(y_r|x_r) / Σ w.
    """
    lead = (1,) * (scores.ndim - 2)
    wsum = weight.sum()
    weight = weight.reshape(lead + weight.shape)
    if criterion == "error":
        wrong = (jnp.argmax(scores, axis=-1) != y.reshape(lead + y.shape)).astype(scores.dtype)
        return (wrong * weight).sum(-1) / wsum
    logp = jax.nn.log_softmax(scores, axis=-1)
    idx = jnp.broadcast_to(y.reshape(lead + y.shape + (1,)), logp.shape[:-1] + (1,))
    true = jnp.take_along_axis(logp, idx, axis=-1)[..., 0]
    if criterion == "error_probability":
        return weighted_sum(1.0 - jnp.exp(true), weight) / wsum
    if criterion == "log_loss":
        return -weighted_sum(true, weight) / wsum
    raise ValueError(f"criterion must be one of {CRITERIA}; got {criterion!r}")


def _rows_criterion(scores, onehot, weight, wsum, criterion):
    """Criterion of candidate scores laid out (n, p, c), reduced over rows (axis 0) -> (p,).

    Same values as `criterion_from_scores` on the (p, n, c) transpose, without the transpose."""
    if criterion == "error":
        y_col = jnp.argmax(onehot, axis=-1)  # (n, 1)
        wrong = (jnp.argmax(scores, axis=-1) != y_col).astype(scores.dtype)  # ties: lowest index
        return (wrong * weight[:, None]).sum(0) / wsum
    logp = jax.nn.log_softmax(scores, axis=-1)
    true = jnp.where(onehot, logp, 0.0).sum(-1)  # (n, p)
    per = 1.0 - jnp.exp(true) if criterion == "error_probability" else -true
    return weighted_sum(per, weight[:, None], axis=0) / wsum


class _Gathered(eqx.Module):
    """Per-row quantities that make L_i(a) cheap for any a (see module docstring).

    Discrete predictors: the (K, c) table log(a θ⁽¹⁾ + (1 − a) θ⁽⁰⁾) is formed for the K CPT rows
    (K·c logs) and gathered by the rows' flat codes, instead of n·q·c logs per candidate.
    """

    flat: jax.Array  # (n, q) int, offset_i + x_ri (0 where missing)
    codes: jax.Array  # (n, q) int, x_ri (-1 where missing)
    seg: jax.Array  # (K,) int, predictor of each CPT row
    cpt1: jax.Array  # (K, c)
    cpt0: jax.Array  # (K, c)
    disc_obs: jax.Array  # (n, q, 1) bool
    x: jax.Array  # (n, r, 1)
    cont_obs: jax.Array  # (n, r, 1) bool
    mu1: jax.Array  # (1, r, c)
    mu0: jax.Array
    sd1: jax.Array
    sd0: jax.Array


def _gather(omega1: NBParams, omega0: NBParams, codes, values) -> _Gathered:
    q = len(omega1.n_states)
    n = codes.shape[0]
    if q:
        off = jnp.asarray(state_offsets(omega1.n_states))
        miss = codes < 0
        flat = jnp.where(miss, 0, codes) + off[None, :]
        codes = jnp.where(miss, -1, codes)
    else:
        miss = jnp.zeros((n, 0), bool)
        flat = jnp.zeros((n, 0), jnp.int32)
        codes = flat
    seg = jnp.asarray(state_segments(omega1.n_states))
    obs = jnp.isfinite(values)
    x = jnp.where(obs, values, 0.0)
    t = lambda a: a.T[None]  # (c, r) -> (1, r, c)
    return _Gathered(
        flat,
        codes,
        seg,
        omega1.cpt,
        omega0.cpt,
        ~miss[..., None],
        x[..., None],
        obs[..., None],
        t(omega1.mean),
        t(omega0.mean),
        t(omega1.std),
        t(omega0.std),
    )


def _contributions(g: _Gathered, a):
    """L[r, i, j] under Ω(a), shape (n, p, c); a: (p,) in [discrete, continuous] order."""
    q = g.flat.shape[1]
    ar = a[:q][g.seg][:, None]  # (K, 1)
    table = jnp.log(ar * g.cpt1 + (1.0 - ar) * g.cpt0)  # (K, c)
    disc = jnp.where(g.disc_obs, table[g.flat], 0.0)
    ac = a[q:][None, :, None]
    mu = ac * g.mu1 + (1.0 - ac) * g.mu0
    sd = ac * g.sd1 + (1.0 - ac) * g.sd0
    z = (g.x - mu) / sd
    cont = -0.5 * z * z - jnp.log(sd) - 0.5 * _LOG_2PI
    cont = jnp.where(g.cont_obs, cont, 0.0)
    return jnp.concatenate([disc, cont], axis=1)


def _check_static(criterion, step_rule, n_steps, max_iter):
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}; got {criterion!r}")
    if step_rule not in STEP_RULES:
        raise ValueError(f"step_rule must be one of {STEP_RULES}; got {step_rule!r}")
    if not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise ValueError(f"n_steps (v) must be a positive int; got {n_steps!r}")
    if not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive int; got {max_iter!r}")


_SELECT_MAX_STATES = 16


def _levels_contributions(g: _Gathered, levels, eps, k_max: int, n_states):
    """L_i(α = min(1, kε))ᵀ for predictor i at the levels ``levels[i, t]``: shape (p, v, c, n).

    The same operations as `_contributions`, per (predictor, level) instead of one α per predictor:
    a discrete predictor's (K, v, c) table of logs is formed on its CPT rows and picked by the
    rows' codes, a Gaussian one's mean and scale are formed per (i, t, j) and only the standardised
    square is per row. ``levels``: (p, v) int in 0..k_max.
    """
    q = g.flat.shape[1]
    dtype = g.cpt1.dtype if q else g.mu1.dtype
    a = path_alpha(levels, eps, k_max).astype(dtype)  # (p, v)
    c = g.cpt1.shape[1] if q else g.mu1.shape[2]
    n = g.flat.shape[0]
    parts = []
    if q:
        ar = a[:q][g.seg][:, :, None]  # (K, v, 1)
        table = jnp.log(ar * g.cpt1[:, None, :] + (1.0 - ar) * g.cpt0[:, None, :])  # (K, v, c)
        m_max = max(n_states)
        if m_max <= _SELECT_MAX_STATES:
            # per-row value by a static chain of selects over the few states: elementwise, so
            # XLA fuses it with the candidate criterion (a per-element gather does not vectorize)
            off = state_offsets(n_states)
            pad = np.array(
                [[off[i] + min(k, m - 1) for k in range(m_max)] for i, m in enumerate(n_states)]
            )
            tab = jnp.transpose(table[pad], (0, 2, 3, 1))  # (q, v, c, m_max)
            codes = g.codes.T[:, None, None, :]  # (q, 1, 1, n); missing (-1) matches no state
            disc = jnp.zeros(tab.shape[:3] + (n,), dtype)
            for k in range(m_max):
                disc = jnp.where(codes == k, tab[..., k : k + 1], disc)
        else:
            disc = jnp.transpose(table[g.flat], (1, 2, 3, 0))  # (q, v, c, n)
            disc = jnp.where(g.disc_obs[:, :, 0].T[:, None, None, :], disc, 0.0)
        parts.append(disc)
    if g.x.shape[1]:
        ac = a[q:][:, :, None]  # (r, v, 1)
        mu1, mu0 = g.mu1[0][:, None, :], g.mu0[0][:, None, :]  # (r, 1, c)
        sd1, sd0 = g.sd1[0][:, None, :], g.sd0[0][:, None, :]
        mu = (ac * mu1 + (1.0 - ac) * mu0)[..., None]  # (r, v, c, 1)
        sd = (ac * sd1 + (1.0 - ac) * sd0)[..., None]
        x = g.x[:, :, 0].T[:, None, None, :]  # (r, 1, 1, n)
        z = (x - mu) / sd
        cont = -0.5 * z * z - jnp.log(sd) - 0.5 * _LOG_2PI
        obs = g.cont_obs[:, :, 0].T[:, None, None, :]
        parts.append(jnp.where(obs, cont, 0.0))
    if not parts:
        return jnp.zeros((0,) + levels.shape[1:] + (c, n), dtype)
    return parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=0)


def _candidate_criterion(scores, y, onehot, weight, wsum, criterion):
    """Criterion of candidate scores laid out (..., c, n) (class-major, rows last), over rows.

    ``"error"`` is computed without an argmax: row r is wrong iff some class j beats the true
    class y_r, i.e. ``s_j > s_y`` or (``s_j == s_y`` and ``j < y_r``) — exactly
    ``argmax_j s_j != y_r`` with ties to the lowest index. The class axis is short and static, so
    the comparisons are unrolled over it: every operation is elementwise along the contiguous
    row axis and XLA fuses the whole criterion (with the candidate gather and add) into one loop.
    onehot: (c, n) bool; y: (n,) int; weight: (n,).
    """
    c, n = scores.shape[-2:]
    lead = (1,) * (scores.ndim - 2)  # explicit broadcasting (strict rank promotion)
    y = y.reshape(lead + (n,))
    weight = weight.reshape(lead + (n,))
    onehot = onehot.reshape(lead + (c, n))
    cls = [scores[..., j, :] for j in range(c)]
    true = jnp.zeros_like(cls[0])
    for j in range(c):  # exactly one term is selected per row: exact
        true = jnp.where(onehot[..., j, :], cls[j], true)
    if criterion == "error":
        wrong = None
        for j in range(c):
            b = (cls[j] > true) | ((cls[j] == true) & (j < y))
            wrong = b if wrong is None else wrong | b
        return (wrong.astype(scores.dtype) * weight).sum(-1) / wsum
    mx = cls[0]
    for j in range(1, c):
        mx = jnp.maximum(mx, cls[j])
    se = sum(jnp.exp(cls[j] - mx) for j in range(c))
    logp_true = true - mx - jnp.log(se)
    per = 1.0 - jnp.exp(logp_true) if criterion == "error_probability" else -logp_true
    return weighted_sum(per, weight) / wsum


def _report_iteration(it, crit, n_active, since, criterion):
    print(
        f"fsNB iteration {int(it)}: training {criterion} {float(crit):.4f}, {int(n_active)} "
        f"active predictors, {int(since)} iterations since the last improvement",
        file=sys.stderr,
        flush=True,
    )


def first_minimum(values, rank):
    """Index of the minimum of ``values`` (1-D) whose ``rank`` is lowest among the tied ones (a
    NaN, as for ``argmin``, wins at its first position)."""
    best = jnp.min(values)
    j = jnp.argmin(jnp.where(values == best, rank, jnp.iinfo(jnp.int32).max))
    return jnp.where(jnp.isnan(best), jnp.argmin(values), j)


def check_tie_order(tie_order, p: int) -> None:
    """A ``tie_order`` argument: shape (p,) always; a permutation of 0..p-1 when concrete."""
    if tie_order is None:
        return
    if np.shape(tie_order) != (p,):
        raise ValueError(
            f"tie_order must have one entry per predictor ({p},); got shape {np.shape(tie_order)}"
        )
    if concrete(tie_order):
        t = np.asarray(tie_order)
        if t.dtype.kind not in "iu" or sorted(t.tolist()) != list(range(p)):
            raise ValueError(
                f"tie_order must be a permutation of 0..{p - 1} (each predictor's position in "
                f"the tie-breaking scan); got {t.tolist()}"
            )


def _check_path_scalars(args):
    """Concrete ε in (0, 1] with ``k_max = n_units(ε)``; patience None or an int >= 1."""
    epsilon, k_max, patience = args.get("epsilon", 0.025), args.get("k_max"), args.get("patience")
    if concrete(epsilon):
        units = n_units(float(np.asarray(epsilon)))  # checks ε
        if isinstance(k_max, int | np.integer) and int(k_max) != units:
            raise ValueError(
                f"k_max={k_max} does not match epsilon={float(np.asarray(epsilon))}: pass "
                f"k_max=n_units(epsilon) = {units} (the number of epsilon steps that reach "
                "alpha = 1)"
            )
    if patience is not None and concrete(patience):
        pat = np.asarray(patience)
        if pat.ndim or pat.dtype.kind not in "iu" or int(pat) < 1:
            raise ValueError(f"patience must be None or an int >= 1; got {patience!r}")


def _check_scoring_rows(args):
    """The rows that score the candidates (`fsnb_path`, `evaluate_path`), as
    `jaxnb.log_contributions` and `jaxnb.error_rate` check them: shapes always; codes below
    ``n_states``, labels in [0, c) and weights >= 0 with a positive sum when concrete."""
    omega1, codes = args["omega1"], args["codes"]
    _check_rows(omega1, codes, args["values"], name="omega1")
    check_labels(
        "codes",
        np.shape(codes)[:1],
        omega1.n_classes,
        args["y"],
        args.get("weight"),
        "it divides the criterion",
        "omega1.n_classes",
    )


def _check_path_args(args):
    """`jit_entry` hook of `fsnb_path`: concrete ε in (0, 1] with ``k_max = n_units(ε)``, patience
    None or an int >= 1 (tracers, i.e. a caller's jit, are skipped); the rows as
    `jaxnb.log_contributions` and `jaxnb.error_rate` check them (shapes always; codes below
    ``n_states``, labels in [0, c) and weights >= 0 with a positive sum when concrete: an
    out-of-range label used to count as an error at every step, silently)."""
    _check_path_scalars(args)
    omega1, omega0 = args["omega1"], args["omega0"]
    if omega0.n_states != omega1.n_states or np.shape(omega0.mean) != np.shape(omega1.mean):
        raise ValueError(
            "omega0 must describe the same predictors as omega1 (fit_marginal and fit_mle of the "
            f"same statistics); got n_states {omega0.n_states} / {omega1.n_states} and means of "
            f"shape {np.shape(omega0.mean)} / {np.shape(omega1.mean)}"
        )
    _check_scoring_rows(args)
    check_tie_order(args.get("tie_order"), len(omega1.n_states) + np.shape(omega1.mean)[-1])


def class_independent(omega1: NBParams) -> jax.Array:
    """(p,) bool, predictor order [discrete, continuous]: Ω⁽¹⁾_i is the same in every class
    (every CPT row of a discrete predictor, or mean and std of a continuous one, equal across the
    classes: a column constant over the training rows, a discrete one with a single state).

    Ω⁽⁰⁾ is class-independent too, so every interpolation Ω_i(α_i) scores all classes alike on any
    row: moving α_i never changes a prediction or a criterion. `fsnb_path` leaves such predictors
    out of the candidate moves."""
    q = len(omega1.n_states)
    if q:
        same = jnp.all(omega1.cpt == omega1.cpt[:, :1], axis=1).astype(jnp.int32)  # (K,)
        disc = jax.ops.segment_min(same, jnp.asarray(state_segments(omega1.n_states)), q) > 0
    else:
        disc = jnp.zeros((0,), bool)
    cont = jnp.all(omega1.mean == omega1.mean[:1], axis=0) & jnp.all(
        omega1.std == omega1.std[:1], axis=0
    )
    return jnp.concatenate([disc, cont])


@jit_entry(
    "n_steps", "step_rule", "criterion", "max_iter", "k_max", "progress", check=_check_path_args
)
def fsnb_path(
    omega1: NBParams,
    omega0: NBParams,
    codes,
    values,
    y,
    weight=None,
    *,
    epsilon=0.025,
    patience=None,
    n_steps: int = 20,
    step_rule: str = "t_eps",
    criterion: str = "error",
    max_iter: int,
    k_max: int,
    progress: bool = False,
    tie_order=None,
) -> StagewisePath:
    r"""Forward stagewise NB path (fsNB Algorithm 1) in one ``lax.while_loop``.

    Implementation: the carry holds the current contributions ``L_i(α_i)`` (p × c × n) and the
    total score S. An iteration forms the contributions of every candidate level,
    ``L_i(min(1, (k_i + t)ε))`` for all p × v candidates (`_levels_contributions`: logs only on
    the CPT rows and the per-(i, t, j) Gaussian scales, then per-row selects or standardised
    squares), and the criterion of ``S − L_i(α_i) + L_i(α_i + tε)`` for each, in one fused batched
    expression; the chosen candidate's contributions replace row i* of the carry. Nothing is
    precomputed per ε-level (an earlier version tabulated all k_max + 1 levels before the loop,
    which cost more than a short search itself), and there is no host round trip in the loop.

    Predictors whose Ω⁽¹⁾ is the same in every class (`class_independent`: e.g. a column constant
    over the training rows) are not candidates: their moves change no score, yet with the
    "error" criterion, where moves tie, such a move won the tie whenever the predictor came
    first in the scan, added a predictor to the AIC's d for nothing and used up patience
    (Diabetes with one constant column inserted: another model selected, posteriors 0.033
    apart).

    Args:
      omega1, omega0: Ω⁽¹⁾ (class-conditional MLE) and Ω⁽⁰⁾ (marginal) parameters.
      codes: (n, q) int discrete codes of the rows that score the candidates (negative = missing).
      values: (n, r) float continuous values (NaN = missing).
      y: (n,) int class codes.
      weight: optional (n,) row weights of the criterion (0/1 for folds / validation rows).
      epsilon: ε, the step unit (traced; must satisfy ``k_max == n_units(epsilon)``).
      patience: early stopping — stop after this many iterations without a strict improvement of
        the best criterion value (traced int; None: no early stopping).
      n_steps: v, the number of multiples t = 1..v of ε tried per predictor (static).
      step_rule: ``"t_eps"`` (α ← α + t*ε, the pseudocode) or ``"eps"`` (α ← α + ε) (static).
      criterion: ``"error"``, ``"error_probability"`` or ``"log_loss"`` (static).
      max_iter: iteration budget and the number of path rows − 1 (static).
      k_max: ⌈1/ε⌉ (`n_units`; static — the level cap of the integer ε-units; ε values with the
        same k_max share one compilation).
      progress: print one line per iteration on stderr (iteration, training criterion, active
        predictors) through `jax.debug.callback` (static; off by default: the loop then has no
        host callback at all). Meant for long single fits, not for vmapped ones.
      tie_order: optional (p,) int, a permutation of 0..p-1: the position of each predictor in
        the scan that breaks ties (candidates with equal criterion values go to the predictor
        of the lowest position, then the lowest t). None: the core's order, discrete then
        continuous. The paper scans the predictors in the data's column order, which
        `StagewiseNB` passes here.

    Returns:
      `StagewisePath`.
    """
    _check_static(criterion, step_rule, n_steps, max_iter)
    if not isinstance(k_max, (int, np.integer)) or k_max < 1:
        raise ValueError(f"k_max must be a positive int (n_units(epsilon)); got {k_max!r}")
    k_max = int(k_max)
    dtype = omega1.mean.dtype if omega1.cpt.size == 0 else omega1.cpt.dtype
    n = codes.shape[0]
    weight = jnp.ones((n,), dtype) if weight is None else weight.astype(dtype)
    g = _gather(omega1, omega0, codes, values)
    p = g.flat.shape[1] + g.x.shape[1]
    bias = omega1.log_prior
    eps = jnp.asarray(epsilon, dtype)
    pat = jnp.asarray(_NO_PATIENCE if patience is None else patience, jnp.int32)
    ts = jnp.arange(1, n_steps + 1, dtype=jnp.int32)
    wsum = weight.sum()
    y = y.astype(jnp.int32)
    onehot = jax.nn.one_hot(y, bias.shape[-1], dtype=bool).T  # (c, n)

    def total(L):  # (n, c) total score of the model whose contributions are L (p, c, n)
        return bias[None, :] + L.sum(0).T

    def record(units, S):
        a = path_alpha(units, eps, k_max)
        crit = criterion_from_scores(S, y, weight, criterion)
        err = crit if criterion == "error" else criterion_from_scores(S, y, weight, "error")
        ll = crit if criterion == "log_loss" else criterion_from_scores(S, y, weight, "log_loss")
        d = (units > 0).sum().astype(jnp.int32)
        return a, crit, err, ll, 2.0 * ll + 2.0 * d / wsum, d

    rank = None  # scan position of each flattened (i, t) candidate
    if tie_order is not None:
        rank = (jnp.asarray(tie_order, jnp.int32)[:, None] * n_steps + ts[None, :] - 1).reshape(-1)
    units0 = jnp.zeros((p,), jnp.int32)
    L0 = _levels_contributions(g, units0[:, None], eps, k_max, omega1.n_states)[:, 0]  # (p, c, n)
    S0 = total(L0)
    a0, c0, e0, l0, aic0, d0 = record(units0, S0)
    m = max_iter + 1
    path = dict(
        alpha=jnp.zeros((m, p), dtype).at[0].set(a0),
        criterion=jnp.zeros((m,), dtype).at[0].set(c0),
        error=jnp.zeros((m,), dtype).at[0].set(e0),
        log_loss=jnp.zeros((m,), dtype).at[0].set(l0),
        aic=jnp.zeros((m,), dtype).at[0].set(aic0),
        n_active=jnp.zeros((m,), jnp.int32).at[0].set(d0),
        chosen=jnp.full((m,), -1, jnp.int32),
        step=jnp.zeros((m,), jnp.int32),
        n_evaluations=jnp.zeros((m,), jnp.int32),
    )
    # carry: units, L, S, iteration, best criterion, iterations since improvement, evals, path
    init = (units0, L0, S0, jnp.int32(0), c0, jnp.int32(0), jnp.int32(0), path)

    frozen = class_independent(omega1)  # no move of these changes a score

    def cond(carry):
        units, _, _, it, _, since, _, _ = carry
        return (it < max_iter) & jnp.any((units < k_max) & ~frozen) & (since < pat)

    def body(carry):
        units, L, S, it, best, since, n_eval, path = carry
        base = S.T[None, :, :] - L  # (p, c, n): score without predictor i's current term
        lev = jnp.minimum(units[:, None] + ts[None, :], k_max)  # (p, v)
        contrib = _levels_contributions(g, lev, eps, k_max, omega1.n_states)  # (p, v, c, n)
        cand = base[:, None] + contrib
        C = _candidate_criterion(cand, y, onehot, weight, wsum, criterion)  # (p, v)
        open_ = (units < k_max) & ~frozen
        C = jnp.where(open_[:, None], C, jnp.inf)
        flat = C.reshape(-1)  # (i, t) order, predictor-major; argmin keeps the first minimum
        j = jnp.argmin(flat) if rank is None else first_minimum(flat, rank)
        i, t = (j // n_steps).astype(jnp.int32), (j % n_steps + 1).astype(jnp.int32)
        move = t if step_rule == "t_eps" else jnp.int32(1)
        units = units.at[i].set(jnp.minimum(units[i] + move, k_max))
        # the new level of i is lev[i, move - 1]: its contributions were just computed
        L = L.at[i].set(contrib[i, move - 1])
        n_eval = n_eval + n_steps * open_.sum().astype(jnp.int32)
        it = it + 1
        S = total(L)
        a_new, c_new, e_new, l_new, aic_new, d_new = record(units, S)
        # the criterion of the model moved to: with the ε rule the winner was scored at α + tε
        # but the move is α + ε, and tracking the winner's value stopped searches still improving
        moved = flat[j] if step_rule == "t_eps" else c_new
        improved = moved < best
        best = jnp.where(improved, moved, best)
        since = jnp.where(improved, 0, since + 1)
        if progress:
            jax.debug.callback(
                partial(_report_iteration, criterion=criterion), it, c_new, d_new, since
            )
        path = dict(
            alpha=path["alpha"].at[it].set(a_new),
            criterion=path["criterion"].at[it].set(c_new),
            error=path["error"].at[it].set(e_new),
            log_loss=path["log_loss"].at[it].set(l_new),
            aic=path["aic"].at[it].set(aic_new),
            n_active=path["n_active"].at[it].set(d_new),
            chosen=path["chosen"].at[it].set(i),
            step=path["step"].at[it].set(t),
            n_evaluations=path["n_evaluations"].at[it].set(n_eval),
        )
        return units, L, S, it, best, since, n_eval, path

    units, _, _, n_iter, _, since, _, path = lax.while_loop(cond, body, init)
    rows = jnp.arange(m)
    after = rows > n_iter

    def fill(x):
        last = x[n_iter]
        mask = after.reshape((m,) + (1,) * (x.ndim - 1))
        return jnp.where(mask, last[None], x)

    out = {k: fill(v) for k, v in path.items() if k not in ("chosen", "step")}
    out["chosen"] = jnp.where(after, -1, path["chosen"])
    out["step"] = jnp.where(after, 0, path["step"])
    return StagewisePath(n_iter=n_iter, stopped_early=since >= pat, **out)


def _fit_fsnb_check(args):
    """`jit_entry` hook of `fit_fsnb`: the rows as `fit_stats` checks them (a label >= n_classes
    or a code >= n_states would be dropped from the statistics and mis-scored silently), weights
    with a positive sum, the smoothing and the path's ε / k_max / patience."""
    _fit_nb_check(args)
    weight = args.get("weight")
    if weight is not None and concrete(weight) and np.size(weight):
        if not np.asarray(weight, np.float64).sum() > 0:
            raise ValueError("weight must have a positive sum (it divides the criterion)")
    _check_path_scalars(args)


@jit_entry(
    "n_states",
    "n_classes",
    "n_steps",
    "step_rule",
    "criterion",
    "max_iter",
    "k_max",
    check=_fit_fsnb_check,
)
def fit_fsnb(
    codes,
    values,
    y,
    weight=None,
    *,
    n_states,
    n_classes,
    alpha=1.0,
    var_smoothing=1e-9,
    epsilon=0.025,
    patience=None,
    n_steps=20,
    step_rule="t_eps",
    criterion="error",
    max_iter,
    k_max,
):
    """Statistics, Ω⁽¹⁾, Ω⁽⁰⁾ and the fsNB path on the weighted rows, in one jitted call.

    ``alpha`` is the Lidstone pseudo-count of the CPTs (not the fsNB coefficients). vmap over data
    sets (codes, values, y, weight with a leading axis) runs many searches in one call.

    Returns:
      (omega1, omega0, path).
    """
    stats = fit_stats(codes, values, y, weight, n_states=n_states, n_classes=n_classes)
    omega1 = fit_mle(stats, alpha, var_smoothing)
    omega0 = fit_marginal(stats, alpha, var_smoothing)
    path = fsnb_path(
        omega1,
        omega0,
        codes,
        values,
        y,
        weight,
        epsilon=epsilon,
        patience=patience,
        n_steps=n_steps,
        step_rule=step_rule,
        criterion=criterion,
        max_iter=max_iter,
        k_max=k_max,
    )
    return omega1, omega0, path


def _evaluate_path_check(args):
    """`jit_entry` hook of `evaluate_path`: the criterion, ``alpha_path`` (m, p), the rows as
    `fsnb_path` checks them."""
    omega1 = args["omega1"]
    criterion = args.get("criterion", "error")
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}; got {criterion!r}")
    p = omega1.n_predictors
    if len(np.shape(args["alpha_path"])) != 2 or np.shape(args["alpha_path"])[1] != p:
        raise ValueError(
            f"alpha_path must have shape (m, {p}), one row of coefficients per model of the path "
            f"(StagewisePath.alpha); got {np.shape(args['alpha_path'])}"
        )
    _check_scoring_rows(args)


@jit_entry("criterion", "batch_size", check=_evaluate_path_check)
def evaluate_path(
    omega1: NBParams,
    omega0: NBParams,
    alpha_path,
    codes,
    values,
    y,
    weight=None,
    criterion="error",
    batch_size=32,
):
    """Criterion of every model of a path on other rows (e.g. test data): (m,) for (m, p) α rows.

    Path rows are processed ``batch_size`` at a time (``lax.map``) to bound memory (m × n × p × c).
    """
    dtype = alpha_path.dtype
    weight = jnp.ones((codes.shape[0],), dtype) if weight is None else weight.astype(dtype)
    g = _gather(omega1, omega0, codes, values)

    def one(a):
        S = omega1.log_prior[None, :] + _contributions(g, a).sum(1)
        return criterion_from_scores(S, y, weight, criterion)

    return lax.map(one, alpha_path, batch_size=batch_size)


def interpolated_contributions(omega1: NBParams, omega0: NBParams, alpha, codes, values):
    """L[r, i, j] under Ω(α) (fsNB Eq. 13), shape (n, p, c), for one α (p,)."""
    return _contributions(_gather(omega1, omega0, codes, values), alpha)


def interpolated_scores(omega1: NBParams, omega0: NBParams, alpha, codes, values):
    """Joint scores (n, c) of the fsNB model α (p,): ``log π_j + Σ_i L_i(α_i)[r, j]``."""
    L = interpolated_contributions(omega1, omega0, alpha, codes, values)
    return omega1.log_prior[None, :] + L.sum(1)
