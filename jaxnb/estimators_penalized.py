r"""Penalized and weighted NB estimators: `GroupLassoNB`, `L1NB`, `WeightedNB`.

Thin scikit-learn-style classes over `jaxnb.methods.group_lasso`, `jaxnb.methods.l1nb` and
`jaxnb.methods.weighted`: they validate hyper-parameters eagerly (NumPy, before any jit), run jitted
core functions, select a model along a path and keep NumPy copies of the path. Predictor-indexed
attributes (``support_``, ``coef_``, ``weights_``, path columns) are in the user's column order.
Every estimator exposes ``n_selected_``, the number of predictors with a nonzero influence on the
posterior.

References:
  Vidaurre, Bielza & Larrañaga (2011), Forward stagewise naive Bayes [fsNB], §3 (L1/L2-NB,
  aL1/L2-NB, WNB) and §6 (AIC, Eq. 14). Vidaurre, Bielza & Larrañaga (2013), IJAIT 22(4) [L1NB].
  Salperwyck, Lemaire & Hue, Incremental weighted naive Bayes classifiers for data stream [Stream].
"""

from __future__ import annotations

import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from . import likelihood as lk
from ._checks import check_bool as _check_bool
from ._checks import check_choice as _check_choice
from ._checks import check_int as _check_int
from ._checks import check_real as _check_real
from ._matmul import einsum
from .estimators import (
    _PAD_MAX_ROWS,
    BaseNB,
    _Additive,
    _as_mesh,
    _centring,
    _keep,
    _kept,
    _on_device,
    _weighted_contrib,
)
from .methods import group_lasso as gl
from .methods import l1nb
from .methods import weighted as wt
from .model_selection import aic as _aic
from .model_selection import (
    check_cv,
    fold_weights,
    kfold_stats,
    resolve_folds,
    validation_split,
)
from .params import NBParams, fit_mle

__all__ = ["GroupLassoNB", "L1NB", "WeightedNB", "register_methods"]

_fit_mle = jax.jit(fit_mle)
_log_contrib = jax.jit(lk.log_contributions)
_log_joint = jax.jit(lk.log_joint)


# ------------------------------------------------------------------------------------------------
# eager validation helpers


# ------------------------------------------------------------------------------------------------
# Group-lasso NB


def _as_nb(log_prior, prm: gl.GroupLassoParams, n_states) -> NBParams:
    return NBParams(log_prior, prm.cpt, prm.mean, prm.std, n_states)


_path_score_shift = jax.jit(gl.path_score_shift)


@jax.jit
def _path_point(params, idx):
    """Point ``idx`` of a path's stacked parameters, one program (not two per leaf, eagerly)."""
    return jax.tree.map(lambda a: a[idx], params)


@jax.jit  # one program, not four eager ones on a first fit
def _log_prior(stats):
    cw = stats.class_weight
    return jnp.log(cw) - jnp.log(jnp.sum(cw, axis=-1, keepdims=True))


@partial(jax.jit, static_argnames=("adaptive", "n_penalties", "max_steps", "solver"))
def _gl_path(
    stats, alpha, min_std, ratio, continuous_scale, tol, *, adaptive, n_penalties, max_steps, solver
):
    problem = gl.make_group_lasso_problem(stats, alpha=alpha, adaptive=adaptive, min_std=min_std)
    pens = gl.penalty_grid(problem, n_penalties, ratio=ratio, continuous_scale=continuous_scale)
    path = gl.group_lasso_path(
        problem,
        pens,
        continuous_scale=continuous_scale,
        max_steps=max_steps,
        tol=tol,
        solver=solver,
    )
    return problem, path


@partial(jax.jit, static_argnames=("adaptive", "max_steps", "solver"))
def _gl_fixed(
    stats, alpha, min_std, penalty, continuous_scale, tol, *, adaptive, max_steps, solver
):
    problem = gl.make_group_lasso_problem(stats, alpha=alpha, adaptive=adaptive, min_std=min_std)
    prm, info = gl.fit_group_lasso(
        problem, penalty, continuous_scale * penalty, max_steps=max_steps, tol=tol, solver=solver
    )
    lmax = gl.lambda_max(problem, continuous_scale=continuous_scale)
    return problem, prm, info, gl.active_predictors(problem, prm), lmax


@partial(jax.jit, static_argnames=("n_states",))
def _gl_path_scores(log_prior, params, n_active, codes, values, y, w, shift, *, n_states):
    """AIC = Q + 2d/N (fsNB Eq. 14) and training error at every grid point.

    ``shift``: one centring of the continuous values for the whole path (`lk.log_joint`), so the
    vmap over grid points shares the centred values and their matrix products.
    """

    def one(prm, d):
        lp = lk.log_posterior(_as_nb(log_prior, prm, n_states), codes, values, shift=shift)
        return _aic(lp, y, d, w), lk.error_rate(lp, y, w)

    return jax.vmap(one)(params, n_active)


@partial(jax.jit, static_argnames=("n_states", "mesh"))
def _gl_path_scores_sharded(
    log_prior, params, n_active, codes, values, y, w, shift, *, n_states, mesh
):
    """`_gl_path_scores` with the rows split over ``mesh`` (`_row_sharded`): each device sums
    w log P(y | x) and w [wrong] over its rows at every grid point, and w
    (`jaxnb.distributed.sharded_loss` adds them over the devices)."""
    from .distributed import sharded_loss

    def sums(model, rows):
        log_prior, params, shift = model
        c, v, y, w = rows

        def one(prm):
            lp = lk.log_posterior(_as_nb(log_prior, prm, n_states), c, v, shift=shift)
            wrong = (lk.predict(lp) != y).astype(lp.dtype)
            return lk.weighted_sum(lk._true_class(lp, y), w), lk.weighted_sum(wrong, w)

        return jax.vmap(one)(params), jnp.sum(w)

    (ll, wrong), total = sharded_loss(sums, mesh)((log_prior, params, shift), (codes, values, y, w))
    return -2.0 * ll / total + 2.0 * n_active / total, wrong / total


@partial(
    jax.jit,
    static_argnames=("adaptive", "max_steps", "n_states", "n_classes", "n_folds", "solver"),
)
def _gl_cv(
    codes,
    values,
    y,
    w,
    folds,
    penalties,
    alpha,
    min_std,
    continuous_scale,
    tol,
    *,
    adaptive,
    max_steps,
    n_states,
    n_classes,
    n_folds,
    solver,
):
    """Mean validation log-loss at every penalty (K-fold CV by statistics subtraction).

    Training statistics of fold k = total − fold k (`jaxnb.model_selection.kfold_stats`); one path
    per fold on the full-data grid (the NLL is divided by N, so a grid transfers between folds),
    vmapped over folds; validation rows are selected by 0/1 weights.
    """
    train, _ = kfold_stats(
        codes, values, y, folds, w, n_states=n_states, n_classes=n_classes, n_folds=n_folds
    )
    fold_w = fold_weights(folds, n_folds, values.dtype, weight=w)

    def one_fold(stats, fw):
        problem = gl.make_group_lasso_problem(
            stats, alpha=alpha, adaptive=adaptive, min_std=min_std
        )
        path = gl.group_lasso_path(
            problem,
            penalties,
            continuous_scale=continuous_scale,
            max_steps=max_steps,
            tol=tol,
            solver=solver,
        )
        log_prior = _log_prior(stats)
        shift = gl.path_score_shift(problem)

        def loss(prm):
            lp = lk.log_posterior(_as_nb(log_prior, prm, n_states), codes, values, shift=shift)
            return lk.log_loss(lp, y, fw), lk.error_rate(lp, y, fw)

        return jax.vmap(loss)(path.params)

    ll, err = jax.vmap(one_fold)(train, fold_w)  # (K, s)
    return ll.mean(0), err.mean(0)


class GroupLassoNB(_Additive, BaseNB):
    r"""L1/L2 group-lasso naive Bayes (fsNB §3.1–3.2, Eqs. 8–9) and its adaptive version aL1/L2-NB.

    Minimizes ``NLL/N + λ Σ_i w_i ‖Ω_i − Ω_i⁽⁰⁾‖₂`` (discrete groups; continuous groups use
    ``continuous_scale · λ``) over the NB parameters (`jaxnb.methods.group_lasso`): discrete
    groups exactly, group by group (the objective is separable; ``solver="exact"``, default),
    continuous groups by preconditioned FISTA with an exact prox (``solver="fista"``: every group
    by FISTA). A predictor whose parameters reach Ω_i⁽⁰⁾ (the marginal MLE) is removed exactly.
    ``adaptive=True`` uses ``w_i = 1 / ‖Ω_i⁽¹⁾ − Ω_i⁽⁰⁾‖₂`` (aL1/L2-NB).

    Units: a continuous group's norm is in the column's units, so plain L1/L2-NB is not invariant
    to rescaling a column: in larger units a column is shrunk harder (the paper's Eq. 9 has the
    same property). The adaptive weight divides those units out, so aL1/L2-NB is invariant.
    Standardize continuous columns whose units are arbitrary before ``adaptive=False``.

    The penalty is chosen along a geometric grid of ``n_penalties`` values from λ_max (every
    predictor removed) down to ``penalty_ratio · λ_max``, solved with warm starts, by
    ``selection``:

    * ``"aic"``: AIC = Q + 2d/N, Q = −(2/N) Σ_r log P(y_r | x_r), d = number of predictors not
      removed (fsNB Eq. 14 analogue); first minimum (largest penalty on ties).
    * ``"cv"``: ``cv``-fold stratified CV, training statistics by subtraction, folds vmapped; the
      criterion is the mean validation log-loss (our choice: smoother than the error rate); first
      minimum.
    * ``"fixed"``: fit at ``penalty`` only (``penalty`` required). A given ``penalty`` is used as
      is whatever ``selection`` says (the path then has one point).

    Documented departures: the NLL is divided by N (the paper's λ is N × ours); ``alpha`` adds
    Lidstone pseudo-counts inside the NLL (default 1.0 like `NaiveBayes`; 0 gives the paper's ML
    fit); σ has the floor ``min_std`` (default 1e-3 × the pooled σ) instead of the open σ > 0; the
    class prior is the (weighted) class frequency and is not penalized.

    Args:
      adaptive: aL1/L2-NB weights (True) or plain L1/L2-NB (False).
      penalty: None (choose along the grid) or a fixed λ ≥ 0.
      n_penalties: grid size (≥ 2); penalty_ratio: smallest grid value as a fraction of λ_max.
      selection: "aic", "cv" or "fixed".
      continuous_scale: λ_continuous / λ_discrete (> 0).
      alpha: Lidstone pseudo-count (≥ 0).
      min_std: None or a positive floor on σ.
      cv: the folds for ``selection="cv"``: a number K of stratified folds, a scikit-learn
        splitter (``StratifiedKFold(5, shuffle=True, random_state=1)``) or a list of
        (train, test) index pairs, e.g. the same folds for every method compared; given splits
        must partition the rows (`jaxnb.model_selection.resolve_folds`).
      random_state: seed of the folds when ``cv`` is a number.
      solver: ``"exact"`` (default) or ``"fista"``; the same optimum (`fit_group_lasso`). A
        discrete Table-1 path of 20 points takes about 1 ms after compilation with ``"exact"``
        and about 17 ms with ``"fista"`` (float64, this library's benchmarks).
      max_steps, tol: FISTA cap and tolerance on the prox-gradient residual per grid point (and
        the exact solver's tolerance), the residual taken in standardized units of the
        continuous columns (so convergence does not depend on their units). Both raise ``tol``
        to the residual's rounding floor where it is below it (float32: ~1e-6), so the defaults
        converge (``path_["converged"]``) in float32 and float64 alike; FISTA typically takes
        20-100 iterations per grid point. If the selected grid point stopped at ``max_steps``,
        ``fit`` emits `jaxnb.ConvergenceWarning`.
      discrete, n_states, missing, unseen: column handling as in `NaiveBayes`.
      mesh: None, a number of devices or a 1-D mesh, as in `NaiveBayes`: the pass over the rows
        that accumulates the statistics runs data-parallel; the path itself is solved on the
        statistics (the group-lasso objective is a function of them); the AIC scoring of the rows
        runs data-parallel (`jax.shard_map`), the CV folds on the mesh's first device.

    Attributes:
      params_: `NBParams` of the selected model; penalty_: selected λ; support_: (p,) bool, not
      removed; path_: dict of NumPy arrays (penalties, n_active, criterion, aic, train_error,
      active (s, p), converged, n_steps; cv adds cv_log_loss, cv_error); selected_index_;
      lambda_max_; n_selected_.
    """

    def __init__(
        self,
        adaptive=True,
        penalty=None,
        n_penalties=20,
        penalty_ratio=1e-3,
        selection="aic",
        continuous_scale=1.0,
        alpha=1.0,
        min_std=None,
        cv=5,
        random_state=0,
        max_steps=2000,
        tol=1e-7,
        solver="exact",
        discrete="auto",
        n_states=None,
        missing="error",
        unseen="error",
        mesh=None,
    ):
        self.adaptive = adaptive
        self.penalty = penalty
        self.n_penalties = n_penalties
        self.penalty_ratio = penalty_ratio
        self.selection = selection
        self.continuous_scale = continuous_scale
        self.alpha = alpha
        self.min_std = min_std
        self.cv = cv
        self.random_state = random_state
        self.max_steps = max_steps
        self.tol = tol
        self.solver = solver
        self.discrete = discrete
        self.n_states = n_states
        self.missing = missing
        self.unseen = unseen
        self.mesh = mesh

    def _check_hyper(self):
        _check_int("random_state", self.random_state, 0, allow_none=True)
        _check_bool("adaptive", self.adaptive)
        _as_mesh(self.mesh)
        if self.penalty is not None:
            _check_real("penalty", self.penalty, 0.0)
        _check_int("n_penalties", self.n_penalties, 2)
        _check_real("penalty_ratio", self.penalty_ratio, 0.0, 1.0, low_open=True, high_open=True)
        _check_choice("selection", self.selection, ("aic", "cv", "fixed"))
        if self.selection == "fixed" and self.penalty is None:
            raise ValueError(
                "selection='fixed' needs a penalty; pass penalty=<float >= 0> or use "
                "selection='aic' / 'cv'"
            )
        _check_real("continuous_scale", self.continuous_scale, 0.0, low_open=True)
        _check_real("alpha", self.alpha, 0.0)
        if self.min_std is not None:
            _check_real("min_std", self.min_std, 0.0, low_open=True)
        check_cv(self.cv, "cv")
        _check_int("max_steps", self.max_steps, 1)
        _check_real("tol", self.tol, 0.0, low_open=True)
        _check_choice("solver", self.solver, gl.SOLVERS)

    def fit(self, X, y, sample_weight=None):
        """Fit the penalized NB and select the penalty."""
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        t0 = time.perf_counter()
        folds, n_folds = (), 0
        if self.penalty is None and self.selection == "cv":  # folds of the real rows, then padding
            # every fold holds rows of positive weight (`resolve_folds`)
            fold_ids, n_folds = resolve_folds(
                self.cv, y_enc, self.random_state, arg_name="cv", sample_weight=w
            )
            folds = (fold_ids,)
        # zero-weight padding rows: nearby training sizes share the compiled programs (every
        # row-dependent quantity below is a weighted sum)
        codes, values, y_enc, w, *folds = self._pad_training(
            codes, values, y_enc, w, *folds, max_rows=_PAD_MAX_ROWS
        )
        cd, vl, yy, ww = _on_device(codes, values, y_enc, w)
        stats = self._stats(codes, values, y_enc, w)
        dtype = vl.dtype
        # 0-d NumPy arguments: an eager jnp.asarray compiled a conversion program
        min_std = None if self.min_std is None else np.asarray(self.min_std, dtype)
        args = (np.asarray(self.alpha, dtype), min_std)
        cs = np.asarray(self.continuous_scale, dtype)
        tol = np.asarray(self.tol, dtype)
        order = self._user_order()
        log_prior = _log_prior(stats)
        if self.penalty is not None:
            problem, prm, info, active, lmax = _gl_fixed(
                stats,
                *args,
                np.asarray(self.penalty, dtype),
                cs,
                tol,
                adaptive=self.adaptive,
                max_steps=int(self.max_steps),
                solver=self.solver,
            )
            pens = np.array([float(self.penalty)])
            # a path of one point, stacked on the host (eagerly, a program per leaf shape)
            params = jax.device_put(jax.tree.map(lambda a: np.asarray(a)[None], prm))
            active = np.asarray(active)[None]
            converged = np.asarray(info.converged)[None]
            n_steps = np.asarray(info.num_steps)[None]
            lmax = float(lmax)
        else:
            problem, path = _gl_path(
                stats,
                *args,
                np.asarray(self.penalty_ratio, dtype),
                cs,
                tol,
                adaptive=self.adaptive,
                n_penalties=int(self.n_penalties),
                max_steps=int(self.max_steps),
                solver=self.solver,
            )
            pens = np.asarray(path.penalties)
            params = path.params
            active = np.asarray(path.active)
            converged = np.asarray(path.info.converged)
            n_steps = np.asarray(path.info.num_steps)
            lmax = float(pens[0])
        n_active = active.sum(1)
        shift = _path_score_shift(problem)
        mesh = _as_mesh(self.mesh)
        if mesh is None:
            aic, train_err = _gl_path_scores(
                log_prior,
                params,
                *_on_device(n_active),
                cd,
                vl,
                yy,
                ww,
                shift,
                n_states=self.n_states_,
            )
        else:
            # each device scores its own rows at every grid point (`jax.shard_map`); the path
            # is replicated over the mesh like the statistics it was solved from
            aic, train_err = _gl_path_scores_sharded(
                log_prior,
                params,
                *_on_device(n_active),
                *_row_sharded(mesh, cd, vl, yy, ww),
                shift,
                n_states=self.n_states_,
                mesh=mesh,
            )
            # the model, and the CV below, on one device: every device would repeat the work
            log_prior, params, problem = jax.device_put(
                (log_prior, params, problem), mesh.devices.flat[0]
            )
        aic, train_err = np.asarray(aic), np.asarray(train_err)
        self.path_ = {
            "penalties": pens,
            "n_active": n_active,
            "aic": aic,
            "train_error": train_err,
            "active": active[:, order],
            "converged": converged,
            "n_steps": n_steps,
        }
        if self.penalty is not None or self.selection == "aic":
            crit = aic
        else:
            (folds,) = folds
            ll, err = _gl_cv(
                cd,
                vl,
                yy,
                ww,
                *_on_device(folds, pens),
                *args,
                cs,
                tol,
                adaptive=self.adaptive,
                max_steps=int(self.max_steps),
                n_states=self.n_states_,
                n_classes=len(self.classes_),
                n_folds=n_folds,
                solver=self.solver,
            )
            crit = np.asarray(ll)
            self.path_["cv_log_loss"] = crit
            self.path_["cv_error"] = np.asarray(err)
        self.path_["criterion"] = crit
        if not np.isfinite(crit).any():
            raise ValueError(
                f"the {'AIC' if crit is aic else 'cross-validated log-loss'} is not finite at any "
                "penalty (a class with fewer rows than the folds leaves some training fold "
                "without it, or alpha=0 gives zero probabilities); use alpha > 0, fewer folds "
                "(cv=...), selection='aic', or a fixed penalty"
            )
        # NaN / inf points are never chosen: the lowest finite value, first on ties
        idx = int(np.argmin(np.where(np.isfinite(crit), crit, np.inf)))
        self.selected_index_ = idx
        self.penalty_ = float(pens[idx])
        self.lambda_max_ = lmax
        self.problem_ = problem
        self.params_ = _as_nb(log_prior, _path_point(params, idx), self.n_states_)
        _keep(self, "_shift_for", _centring, self.params_)
        self.support_ = active[idx][order]
        self.converged_ = bool(converged[idx])
        if not self.converged_:
            other = "fista" if self.solver == "exact" else "exact"
            self._warn_unconverged(
                f"GroupLassoNB(solver={self.solver!r}): at the selected penalty "
                f"{self.penalty_:.4g} the solver stopped after {int(n_steps[idx])} steps "
                f"(max_steps={int(self.max_steps)}) without reaching tol={float(self.tol):g} "
                "(raised to its rounding floor): the parameters are not at the optimum. Raise "
                f"max_steps or tol, or try solver={other!r}; path_['converged'] and "
                "path_['n_steps'] hold every grid point"
            )
        self.fit_time_ = time.perf_counter() - t0
        return self

    @property
    def n_selected_(self):
        """Number of predictors not removed (parameters differ from Ω⁽⁰⁾)."""
        return int(np.sum(self.support_))

    def _log_joint_scores(self, codes, values):
        return _log_joint(
            self.params_, codes, values, shift=_kept(self, "_shift_for", _centring, self.params_)
        )

    def _contributions(self, codes, values):
        return _log_contrib(self.params_, codes, values)

    def _score_bias(self):
        return self.params_.log_prior


# ------------------------------------------------------------------------------------------------
# L1-NB


@jax.jit
def _l1nb_posteriors(omega, codes, values):
    """P(Y | X_i = x_ri; Ω̂_i), (n, p, c) (Eqs. 11–12). A value no class has seen (a state absent
    from the training rows with ``alpha=0``: log θ = −inf for every class) carries no evidence and
    gets the prior, as a missing value does, instead of the NaN of softmax(−inf, ..., −inf)."""
    logits = lk.log_contributions(omega, codes, values) + omega.log_prior[None, None, :]
    unseen = jnp.all(logits == -jnp.inf, axis=-1, keepdims=True)
    return jax.nn.softmax(jnp.where(unseen, omega.log_prior[None, None, :], logits), axis=-1)


@jax.jit  # one program (the eager gather compiled three small ones on a first fit)
def _l1nb_b(omega, codes, values, y):
    P = _l1nb_posteriors(omega, codes, values)
    return P, jnp.take_along_axis(P, y[:, None, None], axis=2)[:, :, 0]


@jax.jit
def _l1nb_scores(omega, beta, codes, values):
    P = _l1nb_posteriors(omega, codes, values)
    scores = einsum("npc,p->nc", P, beta)  # Eq. (14)
    empty = jnp.sum(beta) <= 0
    return jnp.where(empty, omega.log_prior[None, :], jnp.log(scores))


class L1NB(BaseNB):
    r"""L1-regularized naive-Bayes-inspired classifier (L1-NB; Vidaurre et al. 2013, Algorithm 1).

    1. Ω̂ = class-conditional NB parameters (Lidstone ``alpha``, variance floor ``var_smoothing``);
    2. ``B[r, i] = P(Y = y_r | X_i = x_ri; Ω̂_i)`` (Eqs. 11–12);
    3. the whole path of ``min_β ‖1 − Bβ‖² s.t. 0 ≤ β ≤ 1, Σβ ≤ s`` (Eq. 15) by bounded LARS
       (`jaxnb.methods.l1nb.bounded_lars_path`, ``variant`` "paper" or "exact");
    4. s chosen by AIC along the path (``selection="aic"``, `l1nb.aic_select` with the
       ``aic_likelihood`` reading) or by validation accuracy (``selection="validation"``: Ω̂ and the
       path are fitted on the other rows, the budget s with the best accuracy on a stratified
       ``validation_fraction`` of the rows is kept, and the final β is the full-data path at that
       s — our choice of refit);
    5. classification by ``argmax_j Σ_i β_i P(Y = j | X_i = x_i)`` (Eq. 14). ``predict_proba`` is
       the normalized Eq. 13, ``Σ_i β_i P(Y=j | x_i) / Σ_i β_i``.

    Args:
      variant: "paper" (capped coefficients stay at 1) or "exact".
      selection: "aic" or "validation".
      aic_likelihood: "classifier" (default) or "gaussian" (see `l1nb.path_criteria`).
      validation_fraction: fraction of rows held out for ``selection="validation"``.
      alpha, var_smoothing: NB smoothing (default Laplace; alpha=0 is the paper's ML).
      max_steps: LARS segment cap (None: 3p; if that default runs out before the path's end,
        ``fit`` emits `jaxnb.ConvergenceWarning`); random_state: seed of the validation split.
      discrete, n_states, missing, unseen: as in `NaiveBayes`.

    Attributes:
      coef_: (p,) selected β; coef_path_: (m, p) breakpoints (row 0 is β = 0); s_path_: (m,) Σβ;
      criterion_path_: AIC at the breakpoints of ``s_path_`` (``selection="aic"``), or the
        validation accuracy at the breakpoints of ``validation_s_path_``, the path fitted on the
        training part (``selection="validation"``); selected_index_ (row of ``s_path_`` at or below
        the chosen budget); support_ (β > 0);
      params_ (Ω̂ on all rows); n_selected_.
    """

    def __init__(
        self,
        variant="paper",
        selection="aic",
        aic_likelihood="classifier",
        validation_fraction=0.25,
        alpha=1.0,
        var_smoothing=1e-9,
        max_steps=None,
        random_state=0,
        discrete="auto",
        n_states=None,
        missing="error",
        unseen="error",
    ):
        self.variant = variant
        self.selection = selection
        self.aic_likelihood = aic_likelihood
        self.validation_fraction = validation_fraction
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.max_steps = max_steps
        self.random_state = random_state
        self.discrete = discrete
        self.n_states = n_states
        self.missing = missing
        self.unseen = unseen

    def _check_hyper(self):
        _check_int("random_state", self.random_state, 0, allow_none=True)
        _check_choice("variant", self.variant, ("paper", "exact"))
        _check_choice("selection", self.selection, ("aic", "validation"))
        _check_choice("aic_likelihood", self.aic_likelihood, ("classifier", "gaussian"))
        _check_real("validation_fraction", self.validation_fraction, 0.0, 1.0, True, True)
        _check_real("alpha", self.alpha, 0.0)
        _check_real("var_smoothing", self.var_smoothing, 0.0)
        _check_int("max_steps", self.max_steps, 1, allow_none=True)

    def _path(self, codes, values, y_enc, w):
        stats = self._stats(codes, values, y_enc, w)
        omega = _fit_mle(stats, self.alpha, self.var_smoothing)
        cd, vl, yy, ww = _on_device(codes, values, y_enc, w)
        P, B = _l1nb_b(omega, cd, vl, yy)
        path = l1nb.bounded_lars_path(B, self.max_steps, self.variant, weight=ww)
        return omega, P, B, path

    def fit(self, X, y, sample_weight=None):
        """Compute the L1-NB path and select the budget s."""
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        t0 = time.perf_counter()
        val = ()
        if self.selection == "validation":  # split of the real rows, then padding
            val = (
                validation_split(
                    y_enc,
                    float(self.validation_fraction),
                    self.random_state,
                    arg_name="validation_fraction",
                    sample_weight=w,
                ),
            )
        # zero-weight padding rows (LARS, AIC and validation accuracy are weighted over rows)
        codes, values, y_enc, w, *val = self._pad_training(
            codes, values, y_enc, w, *val, max_rows=_PAD_MAX_ROWS
        )
        omega, P, B, path = self._path(codes, values, y_enc, w)
        if self.selection == "aic":
            (ww,) = _on_device(w)
            sel = l1nb.aic_select(path, B, likelihood=self.aic_likelihood, weight=ww)
            beta, crit = np.asarray(sel.beta), np.asarray(sel.criterion)
            idx = int(sel.index)
        else:
            (val,) = val
            o_tr, _, _, p_tr = self._path(codes, values, y_enc, w * ~val)
            cd, vl, yy, w_val = _on_device(codes, values, y_enc, w * val)
            P_val, _ = _l1nb_b(o_tr, cd, vl, yy)
            sel = l1nb.validation_select(p_tr, P_val, yy, weight=w_val)
            beta = np.asarray(l1nb.coef_at(path, sel.s))
            crit = np.asarray(sel.criterion)
            # index of the full-data breakpoint at or below the chosen budget
            idx = int(
                np.searchsorted(
                    np.asarray(path.s)[: int(path.n_steps) + 1], float(sel.s), side="right"
                )
                - 1
            )
            self.validation_s_ = float(sel.s)
            # the accuracies belong to the breakpoints of the path fitted on the training part
            m_tr = int(p_tr.n_steps) + 1
            self.validation_s_path_ = np.asarray(p_tr.s)[:m_tr]
            crit = crit[:m_tr]
        order = self._user_order()
        m = int(path.n_steps) + 1
        self.coef_path_ = np.asarray(path.beta)[:m][:, order]
        self.s_path_ = np.asarray(path.s)[:m]
        self.event_path_ = np.asarray(path.event)[:m]
        self.criterion_path_ = crit if self.selection == "validation" else crit[:m]
        self.path_converged_ = bool(path.converged)
        # the validation selection reads the path fitted on the training part
        whole = self.path_converged_ and (self.selection != "validation" or bool(p_tr.converged))
        if self.max_steps is None and not whole:  # a budget the user set is a cap
            self._warn_unconverged(
                f"L1NB: the LARS path stopped at its default budget of {path.beta.shape[0] - 1} "
                "segments (3 p) before its end (λ = 0, the box-constrained least-squares "
                "solution): the selection saw part of the path. Pass a larger max_steps; "
                "path_converged_ and s_path_ hold the path"
            )
        self.selected_index_ = max(idx, 0)
        (self._beta,) = _on_device(beta)
        self.coef_ = beta[order]
        self.support_ = self.coef_ > 0
        self.params_ = omega
        self.fit_time_ = time.perf_counter() - t0
        return self

    @property
    def n_selected_(self):
        """Number of predictors with β_i > 0."""
        return int(np.sum(self.support_))

    def _log_joint_scores(self, codes, values):
        return _l1nb_scores(self.params_, self._beta, codes, values)


# ------------------------------------------------------------------------------------------------
# Weighted NB


class WeightedNB(_Additive, BaseNB):
    r"""Weighted naive Bayes: Ferreira weights (fsNB Eqs. 6–7) or gradient-trained weights (Stream).

    * ``scheme="ferreira"``: ``log P(Y=j | x) ∝ log π_j + Σ_i w_i log f(x_i | j)`` with
      ``w_i = sqrt(Σ_j Σ_k [P(Y=j | X_i=k) − P(Y=j)]²)`` from the training frequencies; continuous
      predictors are discretized into ``n_bins`` equal-frequency bins for the weight only (their
      term stays Gaussian). See `jaxnb.methods.weighted`.
    * ``scheme="gradient"``: ``H_j = b_j + Σ_i w_ij log f(x_i | j)`` (Stream Eq. 2), W (p, c) and
      b (c,) trained offline by full-batch Newton / L-BFGS / Adam on the training log-loss from
      W = 1, b = log π, with ridge ``l2/2 ‖W − 1‖²``. A Gaussian term is the log density of the
      standardized value, log f(x_i | j) + log s_i (s_i the predictor's pooled sd,
      ``log_scale_``), so nothing depends on the columns' units. Without missing values this is
      the paper's model with bias b_j + Σ_i w_ij log s_i (the unpenalized bias absorbs the
      offsets: same optimum and probabilities), reached by a unit-free solver path (on 300 rows
      of 5 Gaussian columns L-BFGS took 1476 / 105 / 1791 steps in units x 1e-6 / 1 / 1e6 on
      the raw terms, 71 in each unit now); a missing value's term is 0 (marginalized) in the
      standardized terms, where in the raw ones it would shift class j by w_ij log s_i against
      an observed value, in a unit-dependent way. ``explain`` gives the standardized terms
      w_ij (log f + log s_i), and ``bias_`` (= ``score_bias_``) is their bias. A constant
      continuous column has no standardized density: its term is 0 (as in `OnlineWeightedNB`).
      Each standardized term is floored at `jaxnb.methods.weighted.LOG_FLOOR` (log of float32's
      smallest normal number, -87.3, in both precisions) in training, scores and ``explain``
      alike, so float32 and float64 fit the same model and predictions score the terms the
      weights were trained on.

    Args:
      scheme: "ferreira" or "gradient".
      alpha, var_smoothing: NB smoothing of the log-contributions (as in `NaiveBayes`).
      n_bins: equal-frequency bins of continuous predictors (ferreira).
      state_weighting: "uniform" (the papers) or "marginal" (ferreira).
      l2, solver, learning_rate, max_steps, tol: gradient training (see
        `jaxnb.methods.weighted.fit_gradient_weights`; ``solver="auto"``: Newton's method on the
        exact Hessian while the weights and bias number at most 2048 (c (p + 1)), else L-BFGS;
        ``max_steps=None``: 200 Newton, 2000 L-BFGS or 500 Adam steps); a fit that stops at
        ``max_steps`` with the gradient norm above ``tol`` emits `jaxnb.ConvergenceWarning`
        (``converged_`` False). The weak default ridge makes nearly separable data slow for
        L-BFGS: on Flags (194 rows, 8 classes) it needs about 10,500 steps at ``l2=1e-4``,
        4,800 at ``1e-3`` and 2,200 at ``1e-2`` (float64), Newton 43 and 17. A float32 fit that
        reaches the objective's rounding floor first stops there (``info_.stalled``, with the
        warning).
      discrete, n_states, missing, unseen: as in `NaiveBayes`.
      mesh: None, a number of devices or a 1-D mesh, as in `NaiveBayes`: the statistics pass
        runs data-parallel, and with ``scheme="gradient"`` so does the training: the rows of the
        log-contributions are split over the devices (`jax.sharding.NamedSharding`) and XLA
        partitions the loss, its gradient and their sums (the same optimum up to round-off). The
        Ferreira weights (equal-frequency bins: a sort over all rows) stay on one device.

    Attributes:
      weights_: (p,) (ferreira) or (p, c) (gradient), user column order; bias_: (c,) (gradient,
      the bias of the standardized terms); log_scale_: (p,) (gradient) log s_i, the pooled
      standard deviation of each continuous predictor (0 for a discrete one or one without
      spread), user column order; params_: NB parameters Ω̂; info_: `GradientInfo` (gradient);
      solver_: the solver that ran ("newton", "lbfgs" or "adam"; gradient); n_selected_.
    """

    def __init__(
        self,
        scheme="ferreira",
        alpha=1.0,
        var_smoothing=1e-9,
        n_bins=5,
        state_weighting="uniform",
        l2=1e-4,
        solver="auto",
        learning_rate=0.05,
        max_steps=None,
        tol=1e-6,
        discrete="auto",
        n_states=None,
        missing="error",
        unseen="error",
        mesh=None,
    ):
        self.scheme = scheme
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.n_bins = n_bins
        self.state_weighting = state_weighting
        self.l2 = l2
        self.solver = solver
        self.learning_rate = learning_rate
        self.max_steps = max_steps
        self.tol = tol
        self.solver = solver
        self.discrete = discrete
        self.n_states = n_states
        self.missing = missing
        self.unseen = unseen
        self.mesh = mesh

    def _check_hyper(self):
        _check_choice("scheme", self.scheme, ("ferreira", "gradient"))
        _as_mesh(self.mesh)
        _check_real("alpha", self.alpha, 0.0)
        _check_real("var_smoothing", self.var_smoothing, 0.0)
        _check_int("n_bins", self.n_bins, 2)
        _check_choice("state_weighting", self.state_weighting, wt.STATE_WEIGHTINGS)
        _check_real("l2", self.l2, 0.0)
        _check_choice("solver", self.solver, wt.SOLVERS)
        _check_real("learning_rate", self.learning_rate, 0.0, low_open=True)
        _check_int("max_steps", self.max_steps, 1, allow_none=True)
        _check_real("tol", self.tol, 0.0, low_open=True)

    def fit(self, X, y, sample_weight=None):
        """Fit NB and the weights."""
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        t0 = time.perf_counter()
        # zero-weight padding rows (the Ferreira frequencies and bins and the gradient loss are
        # weighted over rows): nearby training sizes share the compiled programs
        codes, values, y_enc, w = self._pad_training(
            codes, values, y_enc, w, max_rows=_PAD_MAX_ROWS
        )
        cd, vl, yy, ww = _on_device(codes, values, y_enc, w)
        stats = self._stats(codes, values, y_enc, w)
        self.params_ = _fit_mle(stats, self.alpha, self.var_smoothing)
        order = self._user_order()
        if self.scheme == "ferreira":
            self._w = wt.ferreira_weights(
                cd,
                vl,
                yy,
                ww,
                n_states=self.n_states_,
                n_classes=len(self.classes_),
                n_bins=int(self.n_bins),
                state_weighting=self.state_weighting,
            )
            self._b = self._off = self._keep = None
            _keep(self, "_shift_for", _centring, self.params_, self._w)
        else:
            # the model's terms are those of the standardized values (log f + log s_i for an
            # observed Gaussian value, s_i its pooled sd; a missing value's term stays 0): in
            # the raw terms the bias had to travel ~14 per predictor in micro-units and L-BFGS
            # stopped at max_steps short of the optimum, a missing value (term 0 in every unit)
            # shifted a class's score by w_ij log s_i against an observed one, and explain /
            # feature_importances_ (spreads of w_ij log f across j) moved with the units
            off, keep = _unit_offsets(stats)
            # a constant column has no standardized density: term 0 (as `OnlineWeightedNB`),
            # not a class-independent value that per-class weights would turn into a bias
            L = _model_terms_jit(self.params_, cd, vl, off, keep)
            mesh = _as_mesh(self.mesh)
            if mesh is not None:  # rows split over the devices; XLA partitions the loss
                L, yy, ww = _row_sharded(mesh, L, yy, ww)
            self.solver_ = wt.resolve_solver(self.solver, L.shape[1], L.shape[2])
            prm, info = wt.fit_gradient_weights(
                L,
                yy,
                self.params_.log_prior,
                ww,
                l2=float(self.l2),
                solver=self.solver_,
                learning_rate=float(self.learning_rate),
                max_steps=None if self.max_steps is None else int(self.max_steps),
                tol=float(self.tol),
            )
            self._w, self._b, self._off, self._keep = prm.weights, prm.bias, off, keep
            _keep(self, "_score_w", _zeroed_weights, self._w, keep)
            self._floored = True  # trained on (and scores) terms floored at wt.LOG_FLOOR
            self.info_ = info
            self.bias_ = np.asarray(self._b)
            self.log_scale_ = np.asarray(off)[order]
            self.converged_ = bool(info.converged)
            if not self.converged_:
                fix = {
                    "lbfgs": "Raise max_steps (or tol); nearly separable training rows with a "
                    "weak ridge converge slowly (a larger l2 conditions the problem better, and "
                    "solver='newton' takes far fewer steps while c (p + 1) is in the thousands)",
                    "newton": "Raise max_steps (or tol); a larger l2 conditions the problem better",
                    "adam": "Adam at a fixed learning_rate need not reach tol: lower "
                    "learning_rate and raise max_steps, or use solver='auto'",
                }[self.solver_]
                if bool(info.stalled):
                    tries = f"{wt.STALL_STEPS} steps in a row" if self.solver_ == "lbfgs" else ""
                    where = (
                        f"after {int(info.n_steps)} steps, its line search having found no "
                        f"lower value{' in ' + tries if tries else ''} (the objective's "
                        "rounding floor at this precision),"
                    )
                    fix = (
                        "Float64 (jax_enable_x64) gets closer, and a larger l2 conditions the "
                        "problem better; or raise tol"
                    )
                else:
                    where = f"at max_steps={int(info.n_steps)}"
                self._warn_unconverged(
                    f"WeightedNB(scheme='gradient', solver={self.solver_!r}) stopped {where} "
                    f"with gradient norm {float(info.grad_norm):.2e} > tol={float(self.tol):g}: "
                    f"the weights are not at the optimum. {fix}; info_ and converged_ hold the "
                    "details"
                )
        self.weights_ = np.asarray(self._w)[order]
        self.fit_time_ = time.perf_counter() - t0
        return self

    @property
    def n_selected_(self):
        """Number of predictors with a nonzero weight (for any class)."""
        w = self.weights_.reshape(self.weights_.shape[0], -1)
        return int(np.sum(np.any(w != 0, axis=1)))

    # a model pickled before the standardized terms has no _off: its bias is for the raw terms
    def _score_weights(self):
        """The weights the scores use: 0 for a predictor without spread (its term is 0).

        Formed by the fit (`_zeroed_weights`, kept with the weights they come from), else now: an
        eager `jnp.where` here compiled two programs on a first prediction and dispatched on
        every one. Prediction does not write to the estimator."""
        keep = getattr(self, "_keep", None)
        return self._w if keep is None else _kept(self, "_score_w", _zeroed_weights, self._w, keep)

    def _log_joint_scores(self, codes, values):
        W = self._score_weights()
        off = getattr(self, "_off", None)
        if off is None:  # Ferreira weights, or a gradient model pickled before 2026-11-27
            shift = _kept(self, "_shift_for", _centring, self.params_, W)
            return _log_joint(self.params_, codes, values, W, self._b, shift=shift)
        if getattr(self, "_floored", False):  # the floored standardized terms it trained on
            return _floored_scores(self.params_, codes, values, W, self._b, off, self._keep)
        # pickled between 2026-11-27 and the floor (unfloored standardized terms)
        return _log_joint(self.params_, codes, values, W, self._b) + _offset_scores(values, off, W)

    def _contributions(self, codes, values):
        W = self._score_weights()
        off = getattr(self, "_off", None)
        if off is not None and getattr(self, "_floored", False):
            return _floored_terms_jit(self.params_, codes, values, W, off, self._keep)
        E = _weighted_contrib(self.params_, codes, values, *_on_device(W))
        return E if off is None else _standardized_terms(E, values, off, W)

    def _score_bias(self):
        return self.params_.log_prior if self._b is None else self._b


def _zeroed_weights(w, keep):
    """``w`` (p, c) with the rows of predictors outside ``keep`` (p,) set to 0, formed in NumPy
    and put on the device."""
    w = np.asarray(w)
    return jax.device_put(np.where(np.asarray(keep)[:, None], w, np.zeros((), w.dtype)))


_standardized_terms = jax.jit(wt.standardized_terms)

_offset_scores = jax.jit(lk.offset_scores)

_model_terms_jit = jax.jit(wt.model_terms)
# jitted: eagerly, its pooled-moment steps compiled ~23 small programs on a first fit
_unit_offsets = jax.jit(wt.unit_offsets)
_floored_terms_jit = jax.jit(wt.weighted_terms)
_floored_scores = jax.jit(wt.floored_scores)


def _row_sharded(mesh, *arrays):
    """``arrays`` (rows first) padded with zero rows to a multiple of the mesh's devices and
    placed split by rows (`jaxnb.distributed.row_sharding`); the padding must carry weight 0."""
    from .distributed import row_sharding

    d = mesh.devices.size
    extra = -arrays[0].shape[0] % d
    out = []
    for a in arrays:
        a = jnp.asarray(a)
        if extra:
            a = jnp.concatenate([a, jnp.zeros((extra,) + a.shape[1:], a.dtype)])
        out.append(jax.device_put(a, row_sharding(mesh)))
    return out


# ------------------------------------------------------------------------------------------------


def register_methods(register):
    """Hook of `jaxnb.registry`: adds the penalized and weighted NB methods to `jaxnb compare`."""
    register(
        "aL1/L2-NB",
        lambda kind: GroupLassoNB(adaptive=True),
        "adaptive group-lasso NB (fsNB §3.2), AIC along a 20-point penalty path",
    )
    register(
        "L1/L2-NB",
        lambda kind: GroupLassoNB(adaptive=False),
        "group-lasso NB (fsNB Eqs. 8-9), AIC along a 20-point penalty path",
    )
    register(
        "L1-NB", lambda kind: L1NB(), "L1-regularized NB-inspired classifier (bounded LARS, AIC)"
    )
    register(
        "WNB",
        lambda kind: WeightedNB("ferreira"),
        "weighted NB with Ferreira weights (fsNB Eqs. 6-7)",
    )
    register(
        "WNB-grad",
        lambda kind: WeightedNB("gradient"),
        "weighted NB, per-class weights + bias by full-batch L-BFGS (Stream Eq. 2)",
    )
