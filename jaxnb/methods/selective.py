r"""Selective naive Bayes: greedy wrapper searches over predictor subsets in one ``lax.while_loop``.

Langley & Sage (1994) forward / backward selection as described in Vidaurre, Bielza & Larrañaga
(2011, §3.1), and the floating forward-backward / backward-forward searches of Rabenoro, Lacaille,
Cottrell & Rossi (ESANN 2015, §4–5).

A subset S is a 0/1 mask over predictors; its joint score is ``S_r = bias + Σ_{i∈S} L[r, i, ·]`` with
L the log-contributions under Ω⁽¹⁾ (`jaxnb.likelihood.log_contributions`). Adding predictor i adds the
slice ``L[:, i, :]``, removing it subtracts it (ESANN §4.1, O(N J) per candidate), so every candidate
of a step is one (n, p, c) broadcast ``S[:, None, :] ± L`` (O(N p J) per step).

Criteria (ESANN §4.2): ``"error"`` (classification error, argmax ties to the lowest class index),
``"error_probability"`` (1/N) Σ_r (1 − P̂_S(y_r | x_r)), ``"log_loss"`` −(1/N) Σ_r log P̂_S(y_r | x_r)
(the negative log conditional likelihood). The criterion is computed on weighted rows: the training
rows (weights = sample weights), a validation split (0/1 weights), or K folds at once — L then has a
leading fold axis (L_k under the parameters fitted without fold k, weights = fold-k indicator) and the
criterion is the mean over folds of the per-fold criterion (scikit-learn's ``cross_val_score`` mean).

Searches (``direction``):

* ``"forward"``: start from the empty set (the prior alone predicts the majority class); at each step
  add the predictor with the lowest criterion; Langley & Sage stop as soon as the best addition does
  not *strictly* improve the criterion (``stopping="improve"``). ``stopping="full"`` keeps adding until
  every predictor (or ``max_features``) is in, recording the whole path for `select_along_path`
  (ESANN's rule: the smallest subset among those with the lowest validation error).
* ``"backward"``: start from all predictors and remove, same stopping rules.
* ``"forward_backward"`` / ``"backward_forward"`` (ESANN §5.3 "floating"): a forward phase (until no
  strict improvement) followed by a backward phase from its result, and so on, alternating while a
  phase makes at least one move. Every accepted move strictly lowers the criterion, so the search
  cannot cycle; it ends when a phase makes no move.

Ties between candidates: the first predictor index with the lowest criterion value wins.
"""

from __future__ import annotations

from functools import partial

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import lax

from ..params import NBParams
from .stagewise import _contributions, _gather, criterion_from_scores

__all__ = [
    "DIRECTIONS",
    "SelectivePath",
    "selective_path",
    "mle_contributions",
    "default_max_steps",
]

DIRECTIONS = ("forward", "backward", "forward_backward", "backward_forward")
CRITERIA = ("error", "error_probability", "log_loss")
STOPPING = ("improve", "full")


class SelectivePath(eqx.Module):
    """Path of a greedy subset search; ``max_steps + 1`` rows, rows > n_steps repeat the last.

    Attributes:
      mask: (m+1, p) bool subset after each accepted move (row 0: the starting subset).
      criterion: (m+1,) search criterion of each subset (mean over folds).
      error: (m+1,) misclassification rate of each subset (mean over folds).
      size: (m+1,) subset sizes.
      toggled: (m+1,) predictor added or removed at each move (−1 in row 0 and after n_steps).
      added: (m+1,) True where the move added a predictor.
      n_evaluations: (m+1,) cumulative number of candidate subsets evaluated.
      n_steps: number of accepted moves.
      total_evaluations: candidate subsets evaluated, including the final non-improving steps.
      n_phases: number of phases started (floating searches alternate phases).
      converged: False when ``max_steps`` or ``max_loops`` cut the search short.
    """

    mask: jax.Array
    criterion: jax.Array
    error: jax.Array
    size: jax.Array
    toggled: jax.Array
    added: jax.Array
    n_evaluations: jax.Array
    n_steps: jax.Array
    total_evaluations: jax.Array
    n_phases: jax.Array
    converged: jax.Array


def default_max_steps(n_predictors: int, direction: str) -> int:
    """Path length bound: p for one-way searches, 4p for floating ones (documented heuristic)."""
    return int(n_predictors) if direction in ("forward", "backward") else 4 * int(n_predictors)


def mle_contributions(omega1: NBParams, codes, values):
    """L[r, i, j] = log f(x_ri | j; Ω⁽¹⁾_i), shape (n, p, c) (same values as the core's
    `log_contributions`, computed with the stagewise gather)."""
    g = _gather(omega1, omega1, codes, values)
    p = g.flat.shape[1] + g.x.shape[1]
    return _contributions(g, jnp.ones((p,), g.mu1.dtype))


@partial(jax.jit, static_argnames=("direction", "criterion", "stopping", "max_steps"))
def selective_path(
    L,
    bias,
    y,
    weight=None,
    *,
    direction="forward",
    criterion="error",
    stopping="improve",
    max_steps=None,
    max_features=None,
) -> SelectivePath:
    r"""Greedy selective-NB search over subsets (forward, backward or floating).

    Args:
      L: (n, p, c) log-contributions, or (K, n, p, c) one slice per fold.
      bias: (c,) or (K, c) log prior (per fold).
      y: (n,) int class codes.
      weight: (n,) or (K, n) weights of the rows that score a subset (None: all ones).
      direction: "forward", "backward", "forward_backward" or "backward_forward" (static).
      criterion: "error", "error_probability" or "log_loss" (static).
      stopping: "improve" (stop a phase when the best move does not strictly improve) or "full"
        (one-way searches only: move until the set is full / empty or ``max_features``) (static).
      max_steps: number of recorded moves (static; default `default_max_steps`).
      max_features: forward moves stop once the subset has this many predictors (traced int).

    Returns:
      `SelectivePath`.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}; got {direction!r}")
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}; got {criterion!r}")
    if stopping not in STOPPING:
        raise ValueError(f"stopping must be one of {STOPPING}; got {stopping!r}")
    if stopping == "full" and direction not in ("forward", "backward"):
        raise ValueError("stopping='full' needs a one-way direction ('forward' or 'backward')")
    if L.ndim == 3:
        L = L[None]
    K, n, p, c = L.shape
    dtype = L.dtype
    bias = jnp.broadcast_to(jnp.asarray(bias, dtype).reshape((-1, c)), (K, c))
    if weight is None:
        weight = jnp.ones((K, n), dtype)
    weight = jnp.broadcast_to(jnp.asarray(weight, dtype).reshape((-1, n)), (K, n))
    max_steps = default_max_steps(p, direction) if max_steps is None else int(max_steps)
    max_loops = 2 * max_steps + 2  # every loop either moves or ends a phase
    cap = jnp.asarray(p if max_features is None else max_features, jnp.int32)
    start_full = direction in ("backward", "backward_forward")
    floating = direction in ("forward_backward", "backward_forward")

    def fold_crit(S, name):  # S: (K, ..., n, c) -> mean over folds
        per = jax.vmap(lambda s, w: criterion_from_scores(s, y, w, name))(S, weight)
        return per.mean(0)

    mask0 = jnp.full((p,), start_full)
    S0 = bias[:, None, :] + jnp.einsum("knpc,p->knc", L, mask0.astype(dtype))
    c0, e0 = fold_crit(S0, criterion), fold_crit(S0, "error")
    m = max_steps + 1
    path = dict(
        mask=jnp.zeros((m, p), bool).at[0].set(mask0),
        criterion=jnp.zeros((m,), dtype).at[0].set(c0),
        error=jnp.zeros((m,), dtype).at[0].set(e0),
        size=jnp.zeros((m,), jnp.int32).at[0].set(mask0.sum().astype(jnp.int32)),
        toggled=jnp.full((m,), -1, jnp.int32),
        added=jnp.zeros((m,), bool),
        n_evaluations=jnp.zeros((m,), jnp.int32),
    )
    forward0 = jnp.asarray(not start_full)
    # carry: mask, S, current criterion, forward phase?, moves in phase, moves, loops, evals,
    #        phases, done, path
    init = (
        mask0,
        S0,
        c0,
        forward0,
        jnp.int32(0),
        jnp.int32(0),
        jnp.int32(0),
        jnp.int32(0),
        jnp.int32(1),
        jnp.asarray(False),
        path,
    )

    def cond(carry):
        *_, moves, loops, _, _, done, _ = carry
        return (~done) & (moves < max_steps) & (loops < max_loops)

    def body(carry):
        mask, S, cur, fwd, in_phase, moves, loops, n_eval, phases, done, path = carry
        valid = jnp.where(fwd, ~mask & (mask.sum() < cap), mask)
        sign = jnp.where(mask, -1.0, 1.0).astype(dtype)
        cand = S[:, :, None, :] + sign[None, None, :, None] * L  # (K, n, p, c)
        C = fold_crit(jnp.moveaxis(cand, 2, 1), criterion)  # (p,)
        C = jnp.where(valid, C, jnp.inf)
        j = jnp.argmin(C).astype(jnp.int32)
        best = C[j]
        any_valid = valid.any()
        better = best < cur if stopping == "improve" else jnp.asarray(True)
        accept = any_valid & better
        n_eval = n_eval + valid.sum().astype(jnp.int32)
        loops = loops + 1

        def do_move(_):
            new_mask = mask.at[j].set(~mask[j])
            new_S = S + sign[j] * L[:, :, j, :]
            mv = moves + 1
            new_path = dict(
                mask=path["mask"].at[mv].set(new_mask),
                criterion=path["criterion"].at[mv].set(best),
                error=path["error"].at[mv].set(fold_crit(new_S, "error")),
                size=path["size"].at[mv].set(new_mask.sum().astype(jnp.int32)),
                toggled=path["toggled"].at[mv].set(j),
                added=path["added"].at[mv].set(~mask[j]),
                n_evaluations=path["n_evaluations"].at[mv].set(n_eval),
            )
            return (
                new_mask,
                new_S,
                best,
                fwd,
                in_phase + 1,
                mv,
                loops,
                n_eval,
                phases,
                jnp.asarray(False),
                new_path,
            )

        def end_phase(_):
            # A floating search switches direction after a phase that moved; otherwise it ends.
            switch = jnp.asarray(floating) & (in_phase > 0)
            return (
                mask,
                S,
                cur,
                jnp.where(switch, ~fwd, fwd),
                jnp.int32(0),
                moves,
                loops,
                n_eval,
                phases + switch.astype(jnp.int32),
                ~switch,
                path,
            )

        return lax.cond(accept, do_move, end_phase, None)

    out = lax.while_loop(cond, body, init)
    mask_f, _, _, fwd_f, _, moves, _, n_eval_f, phases, done, path = out
    exhausted = ~jnp.where(fwd_f, ~mask_f & (mask_f.sum() < cap), mask_f).any()
    rows = jnp.arange(m)
    after = rows > moves

    def fill(x):
        mask_ = after.reshape((m,) + (1,) * (x.ndim - 1))
        return jnp.where(mask_, x[moves][None], x)

    res = {k: fill(v) for k, v in path.items() if k not in ("toggled", "added")}
    res["toggled"] = jnp.where(after, -1, path["toggled"])
    res["added"] = jnp.where(after, False, path["added"])
    # A search that ran out of candidates is complete even when the move budget ended the loop.
    return SelectivePath(n_steps=moves, total_evaluations=n_eval_f, n_phases=phases,
                         converged=done | exhausted, **res)
