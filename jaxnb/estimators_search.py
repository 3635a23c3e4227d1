r"""Search-based NB estimators: forward stagewise NB (`StagewiseNB`), selective NB (`SelectiveNB`).

Thin scikit-learn-style classes over `jaxnb.methods.stagewise` and `jaxnb.methods.selective`: they
validate hyper-parameters eagerly (NumPy, before any jit), run one jitted search, select a model
along the path and keep the path in NumPy. Predictor-indexed attributes (``alpha_``, ``support_``,
the α / mask columns of ``path_``) are in the user's column order.
"""

from __future__ import annotations

import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ._checks import check_choice as _check_choice
from ._checks import check_int as _check_int
from ._checks import check_real as _check_real
from .estimators import _PAD_MAX_ROWS, BaseNB, _Additive, _on_device
from .methods import selective as sel
from .methods import stagewise as sw
from .model_selection import (
    check_cv,
    fold_weights,
    kfold_stats,
    resolve_folds,
    select_along_path,
    validation_split,
)
from .params import fit_marginal, fit_mle, interpolate

__all__ = ["StagewiseNB", "SelectiveNB"]

_fit_mle = jax.jit(fit_mle)
_fit_marginal = jax.jit(fit_marginal)
_interpolate = jax.jit(interpolate)


@jax.jit
def _take_columns(a, idx):
    """``a[:, idx]`` in one program (eagerly, the index compiled five small ones)."""
    return jnp.take(a, idx, axis=1)


_fit_mle_k = jax.jit(jax.vmap(fit_mle, in_axes=(0, None, None)))
_fit_marginal_k = jax.jit(jax.vmap(fit_marginal, in_axes=(0, None, None)))

_scores_alpha = jax.jit(sw.interpolated_scores)
_scores_mask = jax.jit(sel.masked_scores)
_contrib_alpha = jax.jit(sw.interpolated_contributions)


@jax.jit
def _contrib_mask(omega1, mask, codes, values):
    """`SelectiveNB`'s terms (n, p, c): the floored L of `sel.masked_scores`, 0 off the mask."""
    L = sel.floor_log_contributions(sel.mle_contributions(omega1, codes, values))
    return jnp.where(mask[None, :, None], L, 0.0)


class _SearchBase(_Additive, BaseNB):
    def _check_common(self):
        _check_real("alpha", self.alpha, 0.0)
        _check_real("var_smoothing", self.var_smoothing, 0.0)
        _check_int("random_state", self.random_state, 0, allow_none=True)

    def _check_class_weight(self, y_enc, w):
        """A class whose rows all have zero weight has prior 0 and -inf scores: the search criteria
        (error, AIC) are then undefined, so it is an input error here."""
        cw = np.bincount(y_enc, weights=w, minlength=len(self.classes_))
        if (cw <= 0).any():
            bad = self.classes_.tolist()[int(np.flatnonzero(cw <= 0)[0])]
            raise ValueError(
                f"class {bad!r} has zero total sample_weight; drop its rows (and the label) or "
                f"give them positive weight"
            )

    def _omegas(self, stats):
        return (
            _fit_mle(stats, self.alpha, self.var_smoothing),
            _fit_marginal(stats, self.alpha, self.var_smoothing),
        )


class StagewiseNB(_SearchBase):
    r"""Forward stagewise naive Bayes (Vidaurre, Bielza & Larrañaga 2011, Algorithm 1).

    Each predictor is interpolated between removed (Ω⁽⁰⁾) and the MLE (Ω⁽¹⁾):
    Ω_i(α_i) = α_i Ω⁽¹⁾_i + (1 − α_i) Ω⁽⁰⁾_i. Starting from α = 0, every iteration tries α_i + tε
    (t = 1..v) for every predictor with α_i < 1 and applies the move with the lowest training
    criterion (see `jaxnb.methods.stagewise`). A model is then selected along the path. A
    predictor whose Ω⁽¹⁾ is the same in every class (a column constant over the training rows)
    is never moved: no α of it changes a prediction, and its moves would only win ties.

    Args:
      discrete, n_states, missing, unseen: column handling as in `NaiveBayes`.
      alpha: Lidstone pseudo-count of the CPTs (the fsNB coefficients are ``alpha_``).
      var_smoothing: variance floor as a fraction of each predictor's pooled variance.
      epsilon: ε, the step unit (paper default 0.025).
      n_steps: v, the number of multiples of ε tried per predictor and iteration (paper: 20).
      step_rule: "t_eps" (α ← α + t*ε, the paper's pseudocode) or "eps" (α ← α + ε, its prose).
      criterion: search criterion on the training rows: "error" (the paper), "error_probability"
        or "log_loss". Moves with equal criterion values go to the first column of X (then the
        smallest step), the paper's scan over the predictors: the error rate ties often, so
        reordering the columns can change an "error" path (the continuous criteria rarely).
      patience: early stopping after this many iterations without improvement of the best training
        criterion. The paper uses early stopping without giving the value; 6 is the value whose
        mean number of evaluations on the Table-1 scenarios (≈ 6,660) matches the paper's 6,732
        (fsNB §7.1) — chosen from a training-side count, not from test error. On Table 1 the
        whole path (None) gives lower test error but selects many more predictors.
        None runs until every α is 1 or ``max_iter``.
      max_iter: iteration budget (default p⌈1/ε⌉, enough for the full path).
      selection: "aic" (AIC = Q + 2d/N, fsNB Eq. 14; first minimum), "last", or "cv" (K-fold CV
        error averaged over folds by iteration number; first minimum).
      n_folds, random_state: K and the seed of the stratified folds for ``selection="cv"``;
        ``n_folds`` also takes a scikit-learn splitter or a list of (train, test) index pairs
        that partition the rows (as `GroupLassoNB`'s ``cv``).
      verbose: print one line per iteration of the search on stderr (iteration, training
        criterion, active predictors); for long fits on large data.

    Attributes:
      alpha_: (p,) selected coefficients (user column order); path_: dict of NumPy path arrays
        (n_iter_ + 1 rows: alpha, criterion, error, log_loss, aic, n_active, chosen, step,
        n_evaluations); selected_iter_; n_iter_; n_evaluations_; params_: Ω(alpha_);
        omega1_, omega0_; cv_error_ (selection="cv").
    """

    def __init__(
        self,
        discrete="auto",
        n_states=None,
        alpha=1.0,
        var_smoothing=1e-9,
        epsilon=0.025,
        n_steps=20,
        step_rule="t_eps",
        criterion="error",
        patience=6,
        max_iter=None,
        selection="aic",
        n_folds=5,
        random_state=0,
        missing="error",
        unseen="error",
        verbose=False,
    ):
        self.discrete = discrete
        self.n_states = n_states
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.epsilon = epsilon
        self.verbose = verbose
        self.n_steps = n_steps
        self.step_rule = step_rule
        self.criterion = criterion
        self.patience = patience
        self.max_iter = max_iter
        self.selection = selection
        self.n_folds = n_folds
        self.random_state = random_state
        self.missing = missing
        self.unseen = unseen

    def _check_hyper(self):
        self._check_common()
        _check_real("epsilon", self.epsilon, 0.0, 1.0, low_open=True)
        _check_int("n_steps", self.n_steps, 1)
        _check_choice("step_rule", self.step_rule, sw.STEP_RULES)
        _check_choice("criterion", self.criterion, sw.CRITERIA)
        _check_int("patience", self.patience, 1, allow_none=True)
        _check_int("max_iter", self.max_iter, 1, allow_none=True)
        _check_choice("selection", self.selection, ("aic", "last", "cv"))
        check_cv(self.n_folds, "n_folds")

    def fit(self, X, y, sample_weight=None):
        """Run the fsNB search on (X, y) and select a model along the path."""
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        self._check_class_weight(y_enc, np.asarray(w, np.float64))
        t0 = time.perf_counter()
        p = codes.shape[1] + values.shape[1]
        max_iter = self.max_iter or sw.default_max_iter(p, self.epsilon)
        kw = dict(
            epsilon=float(self.epsilon),
            patience=self.patience,
            n_steps=int(self.n_steps),
            step_rule=self.step_rule,
            criterion=self.criterion,
            max_iter=int(max_iter),
            k_max=sw.n_units(self.epsilon),
            # ties go to the first predictor in the user's column order (the paper's scan), not
            # in the core's order (discrete columns first)
            tie_order=_on_device(self._internal_to_user().astype(np.int32))[0],
        )
        folds = ()
        if self.selection == "cv":  # folds of the real rows, before padding
            fold_ids, n_folds = resolve_folds(
                self.n_folds, y_enc, self.random_state, arg_name="n_folds", sample_weight=w
            )
            folds = (fold_ids,)  # every fold holds rows of positive weight (`resolve_folds`)
        codes, values, y_enc, w, *folds = self._pad_training(
            codes, values, y_enc, w, *folds, max_rows=_PAD_MAX_ROWS
        )
        cd, vl, yy, ww = _on_device(codes, values, y_enc, w)
        stats = self._stats(codes, values, y_enc, w)
        self.omega1_, self.omega0_ = self._omegas(stats)
        path = sw.fsnb_path(
            self.omega1_, self.omega0_, cd, vl, yy, ww, progress=bool(self.verbose), **kw
        )
        n_iter = int(path.n_iter)
        if self.selection == "aic":
            idx = select_along_path(np.asarray(path.aic), "min", n_valid=n_iter + 1)
        elif self.selection == "last":
            idx = n_iter
        else:
            (folds,) = folds
            train, _ = kfold_stats(
                cd,
                vl,
                yy,
                *_on_device(folds),
                ww,
                n_states=self.n_states_,
                n_classes=len(self.classes_),
                n_folds=n_folds,
            )
            o1 = _fit_mle_k(train, self.alpha, self.var_smoothing)
            o0 = _fit_marginal_k(train, self.alpha, self.var_smoothing)
            fw = fold_weights(folds, n_folds, ww.dtype)
            cv = _cv_fsnb(o1, o0, cd, vl, yy, ww, fw, **kw)
            self.cv_error_ = np.asarray(cv)[: n_iter + 1]
            idx = select_along_path(self.cv_error_, "min")
        order = self._user_order()
        path_np = {
            k: np.asarray(getattr(path, k))[: n_iter + 1]
            for k in (
                "alpha",
                "criterion",
                "error",
                "log_loss",
                "aic",
                "n_active",
                "chosen",
                "step",
                "n_evaluations",
            )
        }
        path_np["alpha"] = path_np["alpha"][:, order]
        internal_to_user = self._internal_to_user()
        path_np["chosen"] = np.where(
            path_np["chosen"] >= 0, internal_to_user[np.maximum(path_np["chosen"], 0)], -1
        )
        self.path_ = path_np
        self.n_iter_ = n_iter
        # indexed on the host: an eager index of a device array compiles a program per shape
        self.n_evaluations_ = int(np.asarray(path.n_evaluations)[n_iter])
        self.stopped_early_ = bool(path.stopped_early)
        self.selected_iter_ = int(idx)
        alpha = np.asarray(path.alpha)[idx]
        (self._alpha_internal,) = _on_device(alpha)
        self.alpha_ = alpha[order]
        self.params_ = _interpolate(self.omega1_, self.omega0_, self._alpha_internal)
        self.fit_time_ = time.perf_counter() - t0
        return self

    @property
    def n_selected_(self):
        """Number of predictors with α > 0 in the selected model (fsNB Eq. 14's d)."""
        return int((self.alpha_ > 0).sum())

    def _log_joint_scores(self, codes, values):
        return _scores_alpha(self.omega1_, self.omega0_, self._alpha_internal, codes, values)

    def _contributions(self, codes, values):
        return _contrib_alpha(self.omega1_, self.omega0_, self._alpha_internal, codes, values)

    def _score_bias(self):
        return self.omega1_.log_prior


@partial(jax.jit, static_argnames=("n_steps", "step_rule", "criterion", "max_iter", "k_max"))
def _cv_fsnb(o1, o0, cd, vl, yy, ww, fold_w, **kw):
    """Mean over folds of the validation error of each iteration of the fold paths, (m,).

    Module-level and jitted with `fsnb_path`'s static arguments, so repeated fits reuse one
    compilation (a jit of a per-call closure recompiled on every fit: ~1 s each on Table-1 data).
    """

    def one(o1k, o0k, fk):
        path = sw.fsnb_path(o1k, o0k, cd, vl, yy, ww * (1.0 - fk), **kw)
        return sw.evaluate_path(o1k, o0k, path.alpha, cd, vl, yy, ww * fk)

    return jax.vmap(one)(o1, o0, fold_w).mean(0)


class SelectiveNB(_SearchBase):
    r"""Selective naive Bayes by greedy forward, backward or floating search.

    Langley & Sage's forward selection (add the best predictor while the criterion strictly
    improves), backward elimination, and the floating forward-backward / backward-forward searches
    (ESANN 2015's search as the paper describes it with ``stopping="phases"``: complete one-way
    phases alternated while they improve; Pudil's SFFS / SBFS with ``stopping="full"``; phases that
    each stop at the first non-improving move with ``stopping="improve"``); see
    `jaxnb.methods.selective`.

    Args:
      discrete, n_states, missing, unseen, alpha, var_smoothing: as in `NaiveBayes`.
      direction: "forward", "backward", "forward_backward" or "backward_forward".
      criterion: "error", "error_probability" (ESANN's recommendation) or "log_loss". Tied
        moves go to the first column of X, as in `StagewiseNB`.
      validation_fraction: None — the criterion is computed on the training rows; a float in
        (0, 1) — NB is fitted on the other rows, the search is scored on this stratified fraction,
        and the subset is chosen by ESANN's rule: the smallest subset among those with the lowest
        validation error (§5.2).
      stopping: "improve" (stop — floating: switch phase — when the best move does not strictly
        improve) or "full" (one-way: go to the full / empty set; floating: Pudil's SFFS / SBFS to
        the full / empty set; then select along the path: the smallest subset with the lowest
        criterion, or with the lowest validation error when ``validation_fraction`` is set), or
        "phases" (floating directions only: `jaxnb.methods.selective.phase_floating_path`; the
        subset is the search's result, or, with ``validation_fraction``, the smallest subset with
        the lowest validation error among all subsets the search visited).
      max_features: forward moves stop at this many predictors (None: no limit); forward and
        forward_backward directions only (a backward start holds every predictor).
      max_steps: budget of recorded moves for ``stopping="improve"`` / ``"full"`` (None:
        `jaxnb.methods.selective.default_max_steps`, p one-way, 4 p floating). Not used by
        ``stopping="phases"``, whose phases each run to the full / empty set.
      max_phases: budget of phases for ``stopping="phases"`` (None:
        `jaxnb.methods.selective.DEFAULT_MAX_PHASES`, 20); only with that stopping.
      refit: with a validation split, refit NB on all rows for the chosen subset (default True);
        False keeps the parameters fitted on the training part (ESANN's protocol).
      random_state: seed of the validation split.

    Attributes:
      support_: (p,) bool chosen subset (user column order); path_: dict of NumPy path arrays
        (n_steps_ + 1 rows: mask, criterion, error, size, toggled, added, n_evaluations);
      selected_step_; n_steps_; n_evaluations_; params_ (Ω⁽¹⁾ of the refitted NB);
      converged_: False when the search's budget (``max_steps`` moves, or ``max_phases`` phases
        for ``stopping="phases"``) ended it before its own end (no improving move, or the full /
        empty set). With the default budget ``fit`` then emits `jaxnb.ConvergenceWarning`; a
        ``max_steps`` / ``max_phases`` you set is a deliberate cap and stays silent.
    """

    def __init__(
        self,
        discrete="auto",
        n_states=None,
        alpha=1.0,
        var_smoothing=1e-9,
        direction="forward",
        criterion="error",
        validation_fraction=None,
        stopping="improve",
        max_features=None,
        max_steps=None,
        max_phases=None,
        refit=True,
        random_state=0,
        missing="error",
        unseen="error",
    ):
        self.discrete = discrete
        self.n_states = n_states
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.direction = direction
        self.criterion = criterion
        self.validation_fraction = validation_fraction
        self.stopping = stopping
        self.max_features = max_features
        self.max_steps = max_steps
        self.max_phases = max_phases
        self.refit = refit
        self.random_state = random_state
        self.missing = missing
        self.unseen = unseen

    def _check_hyper(self):
        self._check_common()
        _check_choice("direction", self.direction, sel.DIRECTIONS)
        _check_choice("criterion", self.criterion, sel.CRITERIA)
        _check_choice("stopping", self.stopping, (*sel.STOPPING, "phases"))
        if self.stopping == "phases" and self.direction not in (
            "forward_backward",
            "backward_forward",
        ):
            raise ValueError(
                "stopping='phases' needs a floating direction ('forward_backward' or "
                f"'backward_forward'); got direction={self.direction!r}"
            )
        if self.validation_fraction is not None:
            _check_real("validation_fraction", self.validation_fraction, 0.0, 1.0, True, True)
        _check_int("max_features", self.max_features, 1, allow_none=True)
        if self.max_features is not None and self.direction in ("backward", "backward_forward"):
            raise ValueError(
                f"max_features caps forward moves; direction={self.direction!r} starts from every "
                "predictor, so the result could hold more than max_features. Use "
                "direction='forward' or 'forward_backward', or max_features=None"
            )
        _check_int("max_steps", self.max_steps, 1, allow_none=True)
        _check_int("max_phases", self.max_phases, 1, allow_none=True)
        if self.stopping == "phases" and self.max_steps is not None:
            raise ValueError(
                "max_steps bounds the moves of stopping='improve' / 'full'; stopping='phases' "
                "runs every phase to the full / empty set: bound it with max_phases, or set "
                "max_steps=None"
            )
        if self.stopping != "phases" and self.max_phases is not None:
            raise ValueError(
                f"max_phases bounds stopping='phases'; got stopping={self.stopping!r}: use "
                "max_steps to bound its moves, or set max_phases=None"
            )
        if not isinstance(self.refit, bool):
            raise ValueError(f"refit must be True or False; got refit={self.refit!r}")

    def fit(self, X, y, sample_weight=None):
        """Run the subset search on (X, y)."""
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        self._check_class_weight(y_enc, np.asarray(w, np.float64))
        t0 = time.perf_counter()
        if self.validation_fraction is None:
            fit_w = score_w = w
        else:  # split of the real rows, before padding
            val = validation_split(
                y_enc,
                float(self.validation_fraction),
                self.random_state,
                arg_name="validation_fraction",
                sample_weight=w,
            )
            fit_w, score_w = w * ~val, w * val
        codes, values, y_enc, w, fit_w, score_w = self._pad_training(
            codes, values, y_enc, w, fit_w, score_w, max_rows=_PAD_MAX_ROWS
        )
        cd, vl, yy = _on_device(codes, values, y_enc)
        stats = self._stats(codes, values, y_enc, fit_w)
        omega1 = _fit_mle(stats, self.alpha, self.var_smoothing)
        order = self._user_order()
        # the search runs over the predictors in the user's column order, so tied moves go to
        # the first column (as in the paper's scan), not to the core's discrete-first order
        L = _take_columns(sel.mle_contributions(omega1, cd, vl), *_on_device(order))
        search = dict(
            direction=self.direction, criterion=self.criterion, max_features=self.max_features
        )
        if self.stopping == "phases":
            budget_set = self.max_phases is not None
            search_fn = partial(sel.phase_floating_path, max_phases=self.max_phases)
        else:
            budget_set = self.max_steps is not None
            search_fn = partial(
                sel.selective_path, stopping=self.stopping, max_steps=self.max_steps
            )
        path = search_fn(L, omega1.log_prior, yy, *_on_device(score_w), **search)
        n_steps = int(path.n_steps)
        self.converged_ = bool(path.converged)
        if not self.converged_ and not budget_set:
            budget = (  # read off the path: its phase count, or its rows (budget + 1)
                f"{path.n_phases} phases, every one improving"
                if self.stopping == "phases"
                else f"{path.mask.shape[0] - 1} moves"
            )
            self._warn_unconverged(
                f"SelectiveNB(direction={self.direction!r}, stopping={self.stopping!r}): the "
                f"search stopped at its budget of {budget} before its own end; the subset is the "
                "best among the moves made (path_ holds them). Set a larger "
                + ("max_phases" if self.stopping == "phases" else "max_steps")
            )
        if self.validation_fraction is not None:  # ESANN §5.2: smallest subset with lowest error
            idx = select_along_path(
                np.asarray(path.error),
                "min_smallest",
                sizes=np.asarray(path.size),
                n_valid=n_steps + 1,
            )
        elif self.stopping == "full":
            idx = select_along_path(
                np.asarray(path.criterion),
                "min_smallest",
                sizes=np.asarray(path.size),
                n_valid=n_steps + 1,
            )
        elif self.stopping == "phases":
            idx = int(path.final)  # the optimum of the last improving phase
        else:
            idx = n_steps  # every accepted move improved the criterion: the last subset is best
        self.path_ = {  # already in the user's column order
            k: np.asarray(getattr(path, k))[: n_steps + 1]
            for k in ("mask", "criterion", "error", "size", "toggled", "added", "n_evaluations")
        }
        self.n_steps_ = n_steps
        self.n_evaluations_ = int(path.total_evaluations)
        self.selected_step_ = int(idx)
        self.support_ = np.asarray(path.mask)[idx]
        (self._mask_internal,) = _on_device(self.support_[self._internal_to_user()])
        if self.validation_fraction is not None and self.refit:
            omega1 = _fit_mle(self._stats(codes, values, y_enc, w), self.alpha, self.var_smoothing)
        self.params_ = omega1
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _log_joint_scores(self, codes, values):
        return _scores_mask(self.params_, self._mask_internal, codes, values)

    def _contributions(self, codes, values):
        return _contrib_mask(self.params_, self._mask_internal, codes, values)

    def _score_bias(self):
        return self.params_.log_prior
