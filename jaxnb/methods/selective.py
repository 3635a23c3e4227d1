r"""Selective naive Bayes: greedy wrapper searches over predictor subsets in one ``lax.while_loop``.

Langley & Sage (1994) forward / backward selection as described in Vidaurre, Bielza & Larrañaga
(2011, §3.1), the floating forward-backward / backward-forward searches of Rabenoro, Lacaille,
Cottrell & Rossi (ESANN 2015, §4–5), and Pudil, Novovičová & Kittler's (1994) sequential floating
forward / backward selection (SFFS / SBFS), which ESANN cites for its floating searches.

A subset S is a 0/1 mask over predictors; its joint score is ``S_r = bias + Σ_{i∈S} L[r, i, ·]``
with L the log-contributions under Ω⁽¹⁾ (`jaxnb.likelihood.log_contributions`). Adding predictor i
adds the slice ``L[:, i, :]``, removing it subtracts it (ESANN §4.1, O(N J) per candidate), so
every candidate of a step is one batched broadcast ``S ± L`` (O(N p J) per step). Inside the loop L
is laid out (folds, p, classes, rows) so the candidate add and the row reduction fuse into one
contiguous loop; with two classes the smooth criteria only need the margin ``s_y − s_other``, so
they use the (folds, p, rows) array of the predictors' signed margin contributions instead.

Zero probabilities (``alpha = 0`` and a state never seen in a class): a log-contribution of −inf
is floored at ``log(finfo(dtype).tiny)`` (−708 in float64, −87 in float32), the log of the
smallest normal number, in the search and in `masked_scores`. The subset scores then stay finite,
so a predictor outside the subset contributes nothing (an exact ``0 · (−inf)`` would be NaN) and a
predictor can be removed again (``−inf − (−inf)`` would be NaN); a class with such a term still
loses to every class without one by ~e^−700 (float64).

Criteria (ESANN §4.2): ``"error"`` (classification error, argmax ties to the lowest class index),
``"error_probability"`` (1/N) Σ_r (1 − P̂_S(y_r | x_r)), ``"log_loss"``
−(1/N) Σ_r log P̂_S(y_r | x_r) (the negative log conditional likelihood). The criterion is computed
on weighted rows: the training rows (weights = sample weights), a validation split (0/1 weights), or
K folds at once — L then has a leading fold axis (L_k under the parameters fitted without fold k,
weights = fold-k indicator) and the criterion is the mean over folds of the per-fold criterion
(scikit-learn's ``cross_val_score`` mean).

Searches (``direction``, ``stopping``):

* ``"forward"``: start from the empty set (the prior alone predicts the majority class); at each
  step add the predictor with the lowest criterion; Langley & Sage stop as soon as the best
  addition does not *strictly* improve the criterion (``stopping="improve"``). ``stopping="full"``
  keeps adding until every predictor (or ``max_features``) is in, recording the whole path for
  `select_along_path` (ESANN's rule: the smallest subset among those with the lowest validation
  error).
* ``"backward"``: start from all predictors and remove, same stopping rules.
* ``"forward_backward"`` / ``"backward_forward"`` with ``stopping="improve"`` (ESANN §5.3 read
  literally): a forward phase (until no strict improvement) followed by a backward phase from its
  result, and so on, alternating while a phase makes at least one move. Every accepted move
  strictly lowers the criterion, so the search cannot cycle; it ends when a phase makes no move.
  With the 0/1 error on a plateau this stops after very few moves.
* ``"forward_backward"`` / ``"backward_forward"`` with ``stopping="full"``: Pudil's SFFS / SBFS.
  SFFS: an *inclusion* step (add the best predictor) is always taken, even when it does not
  improve; after it, *conditional exclusion* steps remove the best predictor as long as the result
  is strictly better than the best subset of that smaller size recorded so far (a per-size table of
  the best criterion of every visited subset); the first exclusion after an inclusion never removes
  the predictor just added (Pudil's rule; it could only give back the previous subset). The search
  ends when every predictor is in (or ``max_features``) and no conditional exclusion applies, or at
  ``max_steps``. SBFS is the mirror image (exclusions always, conditional inclusions, down to the
  empty set). Every conditional move strictly lowers one entry of the per-size table, so the search
  cannot cycle. For the smooth criteria a conditional move must beat the recorded value by more
  than ``eps^(3/4) · max(1, |value|)`` (eps of L's dtype; ≈ 2e-12 in float64): the same subset
  reached along two paths has scores that differ in the last bits, and this guard keeps round-off
  from passing for an improvement. The 0/1 error is compared exactly. The path records every
  accepted move (inclusions and exclusions), so ESANN's rule picks among all visited subsets.

Phase floating search (`phase_floating_path`, ESANN §5.3's own description: "a forward phase is
followed by a backward phase (and vice versa) until the results do not improve ... In case of
improvement, the procedure is restarted from the last subset"): each *phase* is a complete one-way
search (``selective_path(direction="forward" | "backward", stopping="full")``) started from the
current subset (``initial_mask``). The phase's optimum is the subset of its path (starting subset
included) with the lowest search criterion (ties: the smallest subset, then the earliest). If it
strictly improves on the criterion of the phase's starting subset (for the smooth criteria by more
than the round-off guard above; the 0/1 error exactly), it becomes the current subset and a phase
in the other direction starts from it; otherwise the search stops. ``"forward_backward"`` starts
with a forward phase (default: from the empty set), ``"backward_forward"`` with a backward one
(default: from the full set). The criterion of the current subset strictly decreases from phase
to phase, so the search cannot cycle; ``max_phases`` bounds it anyway. The result is the last
current subset; the record concatenates the phases' paths (every subset visited, in order) so
that `select_along_path` can pick along it. It is a Python loop over phases (not traceable), each
phase one call of the jitted `selective_path` with the same shapes and static arguments, so the
forward and the backward search are each compiled once.

``initial_mask`` starts any search from a given subset instead of the empty / full set (a floating
search never makes a conditional move into a subset size it has not visited).

Ties between candidates: the first predictor index with the lowest criterion value wins.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._batch import fast_or_fallback
from .._checks import check_array_range, check_labels, concrete, jit_entry
from .._matmul import einsum
from ..likelihood import _check_rows
from ..params import NBParams
from .stagewise import _candidate_criterion, _contributions, _gather

__all__ = [
    "DIRECTIONS",
    "SelectivePath",
    "selective_path",
    "PhaseFloatingPath",
    "phase_floating_path",
    "mle_contributions",
    "masked_scores",
    "DEFAULT_MAX_PHASES",
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
      n_phases: number of phases started: 1 for one-way searches; the alternating phases of the
        ``"improve"`` floating searches; for SFFS / SBFS (``"full"`` floating), 1 + the number of
        conditional phases that made at least one move.
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


DEFAULT_MAX_PHASES = 20  # phase_floating_path's budget of phases (max_phases=None)


def default_max_steps(n_predictors: int, direction: str) -> int:
    """Path length bound: p for one-way searches, 4p for floating ones (documented heuristic; an
    SFFS / SBFS run to the full / empty set makes p + 2 × (conditional moves) moves)."""
    return int(n_predictors) if direction in ("forward", "backward") else 4 * int(n_predictors)


@jit_entry(
    check=lambda args: _check_rows(args["omega1"], args["codes"], args["values"], name="omega1")
)
def mle_contributions(omega1: NBParams, codes, values):
    """L[r, i, j] = log f(x_ri | j; Ω⁽¹⁾_i), shape (n, p, c) (same values as the core's
    `log_contributions`, computed with the stagewise gather). Jitted: op by op it cost ~4.5 ms
    per call on a Table-1 data set, most of a `SelectiveNB` fit."""
    g = _gather(omega1, omega1, codes, values)
    p = g.flat.shape[1] + g.x.shape[1]
    return _contributions(g, jnp.ones((p,), g.mu1.dtype))


def floor_log_contributions(L):
    """−inf (a zero probability) -> ``log(finfo(dtype).tiny)``; see the module docstring."""
    return jnp.maximum(L, float(np.log(jnp.finfo(L.dtype).tiny)))


def masked_scores(omega1: NBParams, mask, codes, values):
    """Joint scores (n, c) of the selective NB keeping the predictors in ``mask`` (p,):
    ``log π_j + Σ_i mask_i L[r, i, j]`` with L = `mle_contributions` (floored at the log of the
    smallest normal number, as in the search)."""
    L = floor_log_contributions(mle_contributions(omega1, codes, values))
    return omega1.log_prior[None, :] + einsum("npc,p->nc", L, mask.astype(L.dtype))


def _round_off_guard(dtype, criterion):
    """Margin a conditional floating move must beat the recorded value by (see module docstring)."""
    if criterion == "error":
        return 0.0
    return float(jnp.finfo(dtype).eps) ** 0.75


def _smooth_per_row(t, criterion):
    """Per-row smooth criterion from the two-class margin t = s_y − s_other."""
    if criterion == "error_probability":
        return 1.0 / (1.0 + jnp.exp(t))  # 1 − σ(t)
    return jnp.logaddexp(jnp.zeros_like(t), -t)  # −log σ(t)


class _Scorer:
    """Criteria of the current subset and of all its one-predictor neighbours (trace-time helper).

    Lt: (K, p, c, n) contributions laid out class-major, rows last; y: (n,); weight: (K, n).
    """

    def __init__(self, Lt, y, weight, criterion):
        K, p, c, n = Lt.shape
        self.Lt, self.y, self.weight, self.criterion = Lt, y, weight, criterion
        self.onehot = y[None, :] == jnp.arange(c, dtype=y.dtype)[:, None]  # (c, n)
        self.wsum = weight.sum(-1)  # (K,)
        # Two classes and a smooth criterion: only the margin s_y − s_other matters.
        self.margin = c == 2 and criterion != "error"
        if self.margin:
            self.ysign = jnp.where(y == 1, 1.0, -1.0).astype(Lt.dtype)  # (n,)
            self.Lm = self.ysign[None, None, :] * (Lt[:, :, 1, :] - Lt[:, :, 0, :])  # (K, p, n)

    def _rows(self, cand, name):
        """cand: (K, q, c, n) candidate scores -> (q,) criterion, mean over folds."""
        f = lambda s, w, ws: _candidate_criterion(s, self.y, self.onehot, w, ws, name)
        return jax.vmap(f)(cand, self.weight, self.wsum).mean(0)

    def _margin_crit(self, t):
        """t: (K, q, n) margins -> (q,)."""
        per = _smooth_per_row(t, self.criterion)
        return ((per * self.weight[:, None, :]).sum(-1) / self.wsum[:, None]).mean(0)

    def current(self, S, name):
        """Criterion ``name`` of the subset with scores S (K, c, n), a scalar."""
        if name != "error" and self.margin:
            T = self.ysign[None, :] * (S[:, 1, :] - S[:, 0, :])
            return self._margin_crit(T[:, None, :])[0]
        return self._rows(S[:, None], name)[0]

    def candidates(self, S, sign):
        """Criterion of every toggle i (sign[i] = +1 adds, −1 removes), shape (p,)."""
        if self.margin:
            T = self.ysign[None, :] * (S[:, 1, :] - S[:, 0, :])  # (K, n)
            return self._margin_crit(T[:, None, :] + sign[None, :, None] * self.Lm)
        cand = S[:, None] + sign[None, :, None, None] * self.Lt  # (K, p, c, n)
        return self._rows(cand, self.criterion)


def _check_path_args(args):
    """`jit_entry` hook of `selective_path` (tracers skipped): ``max_steps`` / ``max_features``
    None or ints >= 1, the shapes of ``L``, ``bias``, ``y``, ``weight`` and ``initial_mask``,
    integer labels in [0, c) (an out-of-range label used to be scored as always correct,
    silently) and weights finite and >= 0."""
    max_steps, max_features = args.get("max_steps"), args.get("max_features")
    if max_steps is not None and (
        isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) or max_steps < 1
    ):
        raise ValueError(f"max_steps must be None or an int >= 1; got {max_steps!r}")
    if max_features is not None and concrete(max_features):
        mf = np.asarray(max_features)
        if mf.ndim or mf.dtype.kind not in "iu" or int(mf) < 1:
            raise ValueError(f"max_features must be None or an int >= 1; got {max_features!r}")
    shape = np.shape(args["L"])
    if len(shape) not in (3, 4):
        raise ValueError(
            f"L must have shape (n, p, c), or (K, n, p, c) with one slice per fold; got {shape}"
        )
    n, p, c = shape[-3:]
    folds = ((shape[0],),) if len(shape) == 4 else ()
    bias = args["bias"]
    if np.shape(bias) not in ((c,),) + tuple(k + (c,) for k in folds):
        raise ValueError(
            f"bias must have shape ({c},) (the log prior), or (K, {c}) for L of shape "
            f"(K, n, p, c); got {np.shape(bias)}"
        )
    check_labels("L", (n,), c, args["y"])
    weight = args.get("weight")
    if weight is not None and np.shape(weight) not in ((n,),) + tuple(k + (n,) for k in folds):
        raise ValueError(
            f"weight must have shape ({n},), or (K, {n}) for L of shape (K, n, p, c); got "
            f"{np.shape(weight)}"
        )
    mask = args.get("initial_mask")
    if mask is not None and np.shape(mask) not in ((p,), ()):
        raise ValueError(
            f"initial_mask must have one entry per predictor ({p},); got {np.shape(mask)}"
        )
    if weight is not None and concrete(weight):
        check_array_range("weight", weight, 0.0, fix="0/1 for folds and validation rows")


@jit_entry("direction", "criterion", "stopping", "max_steps", check=_check_path_args)
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
    initial_mask=None,
) -> SelectivePath:
    r"""Greedy selective-NB search over subsets (forward, backward or floating).

    Args:
      L: (n, p, c) log-contributions, or (K, n, p, c) one slice per fold.
      bias: (c,) or (K, c) log prior (per fold).
      y: (n,) int class codes.
      weight: (n,) or (K, n) weights of the rows that score a subset (None: all ones).
      direction: "forward", "backward", "forward_backward" or "backward_forward" (static).
      criterion: "error", "error_probability" or "log_loss" (static).
      stopping: "improve" (stop — or, floating, switch phase — when the best move does not strictly
        improve) or "full" (one-way: move until the set is full / empty or ``max_features``;
        floating: Pudil's SFFS / SBFS, see the module docstring) (static). ESANN's phase
        floating search (complete one-way phases alternating while they improve) is
        `phase_floating_path`.
      max_steps: number of recorded moves (static; default `default_max_steps`).
      max_features: forward moves stop once the subset has this many predictors (traced int).
      initial_mask: (p,) bool starting subset (traced; None: empty for the forward directions,
        full for the backward ones).

    Returns:
      `SelectivePath`.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}; got {direction!r}")
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}; got {criterion!r}")
    if stopping not in STOPPING:
        raise ValueError(f"stopping must be one of {STOPPING}; got {stopping!r}")
    if L.ndim == 3:
        L = L[None]
    L = floor_log_contributions(L)
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
    pudil = floating and stopping == "full"
    guard = _round_off_guard(dtype, criterion)

    if initial_mask is None:
        mask0 = jnp.full((p,), start_full)
    else:
        mask0 = jnp.broadcast_to(jnp.asarray(initial_mask).astype(bool), (p,))
    Lt = jnp.transpose(L, (0, 2, 3, 1))  # (K, p, c, n)

    def scores_of(mask):
        """(K, c, n) scores of a subset summed from scratch. An accepted removal recomputes them:
        the running S - L_j kept rounding residue that decided exact class ties (equal priors
        at the empty subset) instead of the lowest-index rule, so the recorded errors were off."""
        return bias[:, :, None] + einsum("kpcn,p->kcn", Lt, mask.astype(dtype))

    S0 = scores_of(mask0)
    scorer = _Scorer(Lt, y, weight, criterion)
    c0, e0 = scorer.current(S0, criterion), scorer.current(S0, "error")
    size0 = mask0.sum().astype(jnp.int32)
    m = max_steps + 1
    path = dict(
        mask=jnp.zeros((m, p), bool).at[0].set(mask0),
        criterion=jnp.zeros((m,), dtype).at[0].set(c0),
        error=jnp.zeros((m,), dtype).at[0].set(e0),
        size=jnp.zeros((m,), jnp.int32).at[0].set(size0),
        toggled=jnp.full((m,), -1, jnp.int32),
        added=jnp.zeros((m,), bool),
        n_evaluations=jnp.zeros((m,), jnp.int32),
    )
    zero = jnp.int32(0)
    init = dict(
        mask=mask0,
        S=S0,
        cur=c0,
        fwd=jnp.asarray(not start_full),  # direction of the next move
        cond=jnp.asarray(False),  # SFFS / SBFS: in a conditional phase
        shield=jnp.int32(-1),  # SFFS / SBFS: predictor the next conditional move may not toggle
        in_phase=zero,
        moves=zero,
        loops=zero,
        n_eval=zero,
        phases=jnp.int32(1),
        done=jnp.asarray(False),
        best=jnp.full((p + 1,), jnp.inf, dtype).at[size0].set(c0),  # per-size best (SFFS / SBFS)
        path=path,
    )
    idx = jnp.arange(p, dtype=jnp.int32)

    def can_move(mask, fwd):
        return jnp.where(fwd, ~mask & (mask.sum() < cap), mask)

    def cond_fn(s):
        return (~s["done"]) & (s["moves"] < max_steps) & (s["loops"] < max_loops)

    def body(s):
        mask, S, fwd, cond = s["mask"], s["S"], s["fwd"], s["cond"]
        valid = can_move(mask, fwd)
        if pudil:
            valid = valid & ~(cond & (idx == s["shield"]))
        sign = jnp.where(mask, -1.0, 1.0).astype(dtype)
        C = jnp.where(valid, scorer.candidates(S, sign), jnp.inf)
        j = jnp.argmin(C).astype(jnp.int32)
        any_valid = valid.any()
        size = mask.sum().astype(jnp.int32)
        new_size = jnp.clip(size + jnp.where(fwd, 1, -1), 0, p)
        # the best move: an addition keeps the running sum (the same operations for every class,
        # so exact ties stay exact); a removal recomputes from scratch, S - L_j leaving per-class
        # residue (under vmap the recomputation runs only when some element removes, and an
        # element that adds keeps its running sum)
        new_mask = mask.at[j].set(~mask[j])
        new_S = fast_or_fallback(sign[j] > 0, lambda: S + Lt[:, j], lambda: scores_of(new_mask))
        # its criterion as recorded: C[j] up to rounding (two classes score candidates by their
        # margins, the path by the sums, and a near-tie row can fall either way in float32), so
        # the move is accepted on this value, the one the path records and the next step beats
        new_crit = scorer.current(new_S, criterion)
        if stopping == "improve":
            better = new_crit < s["cur"]
        elif not pudil:
            better = jnp.asarray(True)
        else:  # main steps always move; conditional ones must beat the per-size record
            ref = s["best"][new_size]
            beats = jnp.isfinite(ref) & (new_crit < ref - guard * jnp.maximum(1.0, jnp.abs(ref)))
            better = ~cond | beats
        accept = any_valid & better
        n_eval = s["n_eval"] + valid.sum().astype(jnp.int32)

        # accepted move
        mv = s["moves"] + 1
        row = jnp.minimum(mv, m - 1)
        upd = lambda a, v: a.at[row].set(jnp.where(accept, v, a[row]))
        P = s["path"]
        new_path = dict(
            mask=upd(P["mask"], new_mask),
            criterion=upd(P["criterion"], new_crit),
            error=upd(P["error"], scorer.current(new_S, "error")),
            size=upd(P["size"], new_size),
            toggled=upd(P["toggled"], j),
            added=upd(P["added"], ~mask[j]),
            n_evaluations=upd(P["n_evaluations"], n_eval),
        )
        out = dict(s)
        out.update(
            mask=jnp.where(accept, new_mask, mask),
            S=jnp.where(accept, new_S, S),
            cur=jnp.where(accept, new_crit, s["cur"]),
            moves=jnp.where(accept, mv, s["moves"]),
            loops=s["loops"] + 1,
            n_eval=n_eval,
            best=s["best"].at[new_size].min(jnp.where(accept, new_crit, jnp.inf)),
            path=new_path,
        )
        if pudil:
            # main move -> conditional phase (the new predictor shielded); conditional move -> stay;
            # rejected conditional move -> back to the main direction; no main move -> done.
            out.update(
                fwd=jnp.where(accept != cond, ~fwd, fwd),
                cond=accept,
                shield=jnp.where(accept & ~cond, j, -1),
                in_phase=jnp.where(accept & cond, s["in_phase"] + 1, zero),
                phases=s["phases"] + (accept & cond & (s["in_phase"] == 0)).astype(jnp.int32),
                done=~accept & ~cond,
            )
        else:
            # A floating search switches direction after a phase that moved; otherwise it ends.
            switch = jnp.asarray(floating) & (s["in_phase"] > 0)
            out.update(
                fwd=jnp.where(accept | ~switch, fwd, ~fwd),
                in_phase=jnp.where(accept, s["in_phase"] + 1, zero),
                phases=s["phases"] + (~accept & switch).astype(jnp.int32),
                done=~accept & ~switch,
            )
        return out

    f = lax.while_loop(cond_fn, body, init)
    moves = f["moves"]
    exhausted = ~can_move(f["mask"], f["fwd"]).any()
    if pudil:  # complete when the main direction has no move left and no conditional step is due
        exhausted = exhausted & ~f["cond"]
    path = f["path"]
    rows = jnp.arange(m)
    after = rows > moves

    def fill(x):
        mask_ = after.reshape((m,) + (1,) * (x.ndim - 1))
        return jnp.where(mask_, x[moves][None], x)

    res = {k: fill(v) for k, v in path.items() if k not in ("toggled", "added")}
    res["toggled"] = jnp.where(after, -1, path["toggled"])
    res["added"] = jnp.where(after, False, path["added"])
    # A search that ran out of candidates is complete even when the move budget ended the loop.
    return SelectivePath(
        n_steps=moves,
        total_evaluations=f["n_eval"],
        n_phases=f["phases"],
        converged=f["done"] | exhausted,
        **res,
    )


class PhaseFloatingPath(eqx.Module):
    """Record of a phase floating search (`phase_floating_path`); NumPy arrays, T + 1 rows.

    The rows are every subset visited, in order: row 0 is the starting subset, then the moves of
    each phase (a phase's starting subset is not repeated: it is the previous phase's optimum,
    recorded earlier). ``toggled`` / ``added`` describe the move from the previous subset of the
    same phase (at a phase's first row: from the phase's starting subset).

    Attributes:
      mask, criterion, error, size, toggled, added, n_evaluations: as in `SelectivePath`, (T+1,...)
        (``n_evaluations`` cumulative over the phases).
      n_steps: T, the number of recorded moves.
      total_evaluations: candidate subsets evaluated by all phases.
      n_phases: number of phases run (the last one is the non-improving phase, unless
        ``max_phases`` stopped the search).
      converged: True when a phase failed to improve (the search's own end) and every phase ran
        to the full / empty set (or ``max_features``); False when ``max_phases`` stopped it.
      hit_max_phases: True when ``max_phases`` phases all improved.
      phase_forward: (n_phases,) True for a forward phase.
      phase_start: (n_phases,) row of each phase's starting subset.
      phase_first, phase_last: (n_phases,) first and last row of each phase's moves (first > last
        for a phase that could not move).
      phase_best: (n_phases,) row of each phase's optimum (its start row when the start is best).
      phase_improved: (n_phases,) whether the phase's optimum strictly improved on its start.
      final: row of the result subset (the optimum of the last improving phase; 0 if none).
    """

    mask: np.ndarray
    criterion: np.ndarray
    error: np.ndarray
    size: np.ndarray
    toggled: np.ndarray
    added: np.ndarray
    n_evaluations: np.ndarray
    n_steps: int
    total_evaluations: int
    n_phases: int
    converged: bool
    hit_max_phases: bool
    phase_forward: np.ndarray
    phase_start: np.ndarray
    phase_first: np.ndarray
    phase_last: np.ndarray
    phase_best: np.ndarray
    phase_improved: np.ndarray
    final: int

    @property
    def final_mask(self) -> np.ndarray:
        """(p,) bool result subset."""
        return self.mask[self.final]


def _phase_optimum(crit, size):
    """Index of the lowest criterion; ties: the smallest subset, then the earliest."""
    return int(np.lexsort((np.arange(crit.size), size, crit))[0])


def phase_floating_path(
    L,
    bias,
    y,
    weight=None,
    *,
    direction="forward_backward",
    criterion="error",
    max_phases=None,
    max_features=None,
    initial_mask=None,
) -> PhaseFloatingPath:
    r"""ESANN's phase floating search: alternate complete one-way searches while they improve.

    See the module docstring ("Phase floating search"). Not traceable (a Python loop over phases);
    each phase is one `selective_path` call with ``max_steps = p``.

    Args:
      L, bias, y, weight, criterion, max_features: as in `selective_path`.
      direction: ``"forward_backward"`` (first phase forward) or ``"backward_forward"``.
      max_phases: maximum number of phases (None: `DEFAULT_MAX_PHASES`; ``hit_max_phases`` in the
        result says when it ended the search).
      initial_mask: (p,) bool starting subset (None: empty for ``"forward_backward"``, full for
        ``"backward_forward"``).

    Returns:
      `PhaseFloatingPath`.
    """
    if direction not in ("forward_backward", "backward_forward"):
        raise ValueError(
            f"direction must be 'forward_backward' or 'backward_forward'; got {direction!r}"
        )
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}; got {criterion!r}")
    if max_phases is None:
        max_phases = DEFAULT_MAX_PHASES
    if int(max_phases) < 1:
        raise ValueError(f"max_phases must be >= 1; got {max_phases!r}")
    L = jnp.asarray(L)
    p = L.shape[-2]
    guard = _round_off_guard(L.dtype, criterion)
    fwd = direction == "forward_backward"
    if initial_mask is None:
        mask = np.full((p,), not fwd)
    else:
        mask = np.broadcast_to(np.asarray(initial_mask).astype(bool), (p,)).copy()
    keys = ("mask", "criterion", "error", "size", "toggled", "added", "n_evaluations")
    parts = {k: [] for k in keys}
    phases = dict(forward=[], start=[], first=[], last=[], best=[], improved=[])
    n_rows, n_eval, cur_row, all_complete, improved = 0, 0, 0, True, True
    while improved and len(phases["forward"]) < int(max_phases):
        path = selective_path(
            L,
            bias,
            y,
            weight,
            direction="forward" if fwd else "backward",
            criterion=criterion,
            stopping="full",
            max_steps=p,
            max_features=max_features,
            initial_mask=jnp.asarray(mask),
        )
        k = int(path.n_steps)
        rec = {key: np.asarray(getattr(path, key))[: k + 1] for key in keys}
        rec["n_evaluations"] = rec["n_evaluations"] + n_eval
        all_complete &= bool(path.converged)
        if n_rows == 0:  # first phase: its starting subset is row 0 of the record
            first = 1
            rows = {key: v for key, v in rec.items()}
        else:
            first = n_rows
            rows = {key: v[1:] for key, v in rec.items()}
        for key in keys:
            parts[key].append(rows[key])
        n_rows += rows["mask"].shape[0]
        j = _phase_optimum(rec["criterion"], rec["size"])
        c_start, c_best = float(rec["criterion"][0]), float(rec["criterion"][j])
        improved = j > 0 and c_best < c_start - guard * max(1.0, abs(c_start))
        best_row = cur_row if j == 0 else first + j - 1
        phases["forward"].append(fwd)
        phases["start"].append(cur_row)
        phases["first"].append(first)
        phases["last"].append(first + k - 1)
        phases["best"].append(best_row)
        phases["improved"].append(improved)
        n_eval += int(path.total_evaluations)
        if improved:
            cur_row = best_row
            mask = rec["mask"][j]
            fwd = not fwd
    out = {key: np.concatenate(v) for key, v in parts.items()}
    out["toggled"][0], out["added"][0] = -1, False
    return PhaseFloatingPath(
        **out,
        n_steps=n_rows - 1,
        total_evaluations=n_eval,
        n_phases=len(phases["forward"]),
        converged=(not improved) and all_complete,
        hit_max_phases=bool(improved),
        **{f"phase_{k}": np.asarray(v) for k, v in phases.items()},
        final=cur_row,
    )
