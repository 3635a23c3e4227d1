r"""Sweeps: data sets × hyper-parameters × folds × seeds as one jit-compiled, vmapped call.

Every core fit in jaxnb is a pure function of arrays with folds and subsets as 0/1 sample weights
(STYLE.md), so a whole experimental grid is nested ``vmap``s of one function:

    out[d, s, f, h] = fit_eval_fn(data[d], grid[h], train_w(d, s, f), valid_w(d, s, f), key)

compiled once. The data-set axis is split over the devices when there are several (``jax.shard_map``
over a 1-D mesh, `jaxnb.distributed.make_mesh`; the data sets are padded to a multiple of the device
count by repeating the last one, and the padding is dropped from the result). Hyper-parameters sit
innermost, so work that does not depend on them (the sufficient statistics of a fold) is computed
once per fold, not once per grid point (``vmap`` only batches what depends on the batched axis).

How data sets are batched on a device is ``dataset_batch_size``: ``None`` vmaps all of them (the
right choice on GPU/TPU), an int runs them that many at a time in sequence with ``lax.map`` inside
the same compiled program; the default ``"auto"`` picks 1 on CPU, where one wide vmap is slower
(batched while loops run until the slowest data set finishes, batched gathers are slow).

Grid points that need different *static* options (fsNB's k_max = ⌈1/ε⌉ sizes an array) are split
into groups by the method's ``prepare`` hook: one compilation per group, results in grid order.

Folds are 0/1 weights: with ``folds=K`` the rows of every training set are assigned to K folds by a
random permutation drawn from each seed (`fold_ids`), fold k is the validation part and the others
train; with ``folds=None`` every row trains and only training / test metrics are reported.

Built-in methods (`available_sweep_methods`; add more with `register_sweep_method`):

* ``"nb"``: naive Bayes, grid over ``alpha`` (Lidstone) and optionally ``var_smoothing``.
* ``"group_lasso"``: L1/L2 group-lasso NB (`jaxnb.methods.group_lasso`), grid over ``penalty``,
  solved as one warm-started path (`group_lasso_path`) per fold; options ``alpha`` (Lidstone in the
  NLL, default 1.0 here so that predictions never meet log 0), ``adaptive``, ``continuous_scale``,
  ``relative`` (grid values are fractions of each fold's ``lambda_max``), ``max_steps``, ``tol``,
  ``solver`` (``"exact"`` or ``"fista"``, `jaxnb.methods.group_lasso.fit_group_lasso`).
  Reports ``train_aic`` (AIC = Q + 2d/N on the training rows, `jaxnb.GroupLassoNB`'s
  ``path_["aic"]``) at every penalty, so that the AIC model can be selected from the table.
* ``"wnb"``: weighted NB with Ferreira weights (fsNB Eqs. 6–7,
  `jaxnb.methods.weighted.ferreira_weights`), scores ``log π_j + Σ_i w_i log f(x_i | j)``, grid
  over ``alpha``; options ``n_bins`` (5), ``state_weighting`` ("uniform"), ``var_smoothing``;
  equals ``WeightedNB(scheme="ferreira")``.
* ``"fsnb"``: forward stagewise NB,
  grid over ``epsilon`` and ``patience``; options ``n_steps``, ``step_rule``, ``criterion``,
  ``selection`` (``"aic"`` as `jaxnb.StagewiseNB`'s default, or ``"last"``), ``alpha``,
  ``var_smoothing``.
* ``"snb"``: selective NB,
  `selective_path` on the training rows, grid over ``alpha``; options ``direction`` ("forward",
  "backward", or a floating one), ``criterion`` ("error", "error_probability", "log_loss"),
  ``stopping`` ("improve": Langley & Sage, the model is the path's last subset; "full": the
  smallest subset with the lowest criterion along the path), ``max_steps``, ``max_features``,
  ``var_smoothing``; equals `jaxnb.SelectiveNB` with the same arguments.

  The sweeps take codes and values already split, so tied moves of ``"fsnb"`` and ``"snb"`` go
  to the first predictor of that layout (the discrete block first); the estimators break ties
  by the user's column order, which is the same on data of one kind.
* ``"cfs"``: CFS + NB, Hall's best-first CFS search compiled as one loop
  (`jaxnb.methods.filters.cfs_search`), then NB on the selected predictors; grid over ``alpha``;
  options ``n_bins`` (10), ``max_stale`` (5), ``max_features``, ``max_expansions`` (search table
  size, default 128; ``cfs_truncated`` flags a search that needed more),
  ``var_smoothing``; equals ``FilterNB(filter="cfs")``.

The options of ``"snb"``, ``"wnb"`` and ``"cfs"`` are checked on the host before compilation
(their ``prepare`` hooks): an unknown option or a bad value raises a ValueError naming it.

Metrics of every task: ``train_error``, ``train_log_loss`` (training rows), ``valid_error``,
``valid_log_loss`` (held-out fold, when ``folds`` is set), ``test_error``, ``test_log_loss`` (the
data set's ``*_test`` arrays, when present), plus method-specific ones (``n_active``,
``n_selected``, ``n_noisy_selected`` when the data carry a ``noisy`` mask, ``n_iter``,
``n_evaluations``, ``train_aic``; fsNB adds ``selected_iter``, the AIC-chosen path row). Errors
are weighted misclassification rates with argmax ties to the lowest class index, as the
estimators' ``predict``.

The result is a `SweepResult`: the metric arrays with axes (data set, grid point, fold, seed) and a
tidy table (NumPy structured array; ``rows()`` gives a list of dicts, ``to_pandas()`` a DataFrame
when pandas is installed).
"""

from __future__ import annotations

import functools
import itertools
import numbers
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import PartitionSpec as P

from . import likelihood as lk
from ._checks import check_choice as _check_choice
from ._checks import check_int as _check_int
from ._checks import check_real as _check_real
from ._dtypes import float_dtype
from .methods.nb import fit_stats
from .params import NBParams, fit_marginal, fit_mle

__all__ = [
    "SweepMethod",
    "SweepResult",
    "register_sweep_method",
    "available_sweep_methods",
    "fold_ids",
    "evaluate_scores",
    "sweep",
    "sweep_nb",
    "sweep_methods",
    "concat_tables",
    "stack_datasets",
]

_REQUIRED = ("codes_train", "values_train", "y_train")


# =============================================================================== methods
class SweepMethod(NamedTuple):
    """A fit-and-evaluate function the sweep can run.

    Attributes:
      name: registry name.
      fit_eval_fn: ``(data, hyper, train_weight, valid_weight, key, *, n_states, n_classes,
        **options) -> dict`` of scalar metrics for one data set (a dict of unbatched arrays), one
        grid point (a dict of scalars; with ``path=True`` a dict of (H,) vectors, and then every
        metric is (H,)), (n,) train / validation weights (``valid_weight`` is None when the sweep
        has no folds) and a PRNG key.
      default_grid: grid used when none is given.
      path: whether ``fit_eval_fn`` takes the whole grid at once (warm-started paths).
      prepare: optional host hook ``(grid_arrays, options, n_predictors)`` returning
        ``(grid_arrays, options)`` or a list of such pairs: grid points that need different static
        options (e.g. fsNB's k_max = ⌈1/ε⌉, which sizes an array) form groups, each compiled once;
        the results are put back in grid order. Every grid array passed in carries the hidden
        entry ``"_h"`` (position in the grid), which a hook must keep (subset it like the others).
    """

    name: str
    fit_eval_fn: Callable
    default_grid: Mapping[str, Sequence]
    path: bool = False
    prepare: Callable | None = None


_METHODS: dict[str, SweepMethod] = {}


def register_sweep_method(
    name: str,
    fit_eval_fn: Callable,
    *,
    default_grid: Mapping[str, Sequence],
    path: bool = False,
    prepare: Callable | None = None,
) -> SweepMethod:
    """Register a method for `sweep_methods` (see `SweepMethod` for the signature)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string; got {name!r}")
    method = SweepMethod(name, fit_eval_fn, dict(default_grid), path, prepare)
    _METHODS[name] = method
    return method


def available_sweep_methods() -> list[str]:
    """Names of the registered sweep methods."""
    return list(_METHODS)


def _wmean(x, w):
    # rows of weight 0 add 0 even where x is infinite (a fold's held-out rows under alpha = 0)
    return jnp.sum(jnp.where(w > 0, x * w, 0.0)) / jnp.sum(w)


def evaluate_scores(prefix: str, scores, y, weight):
    r"""``{prefix}_error`` and ``{prefix}_log_loss`` of joint scores (n, c) on weighted rows.

    error = Σ_r w_r [argmax_j s_rj ≠ y_r] / Σ_r w_r;
    log_loss = −Σ_r w_r log softmax(s_r)_{y_r} / Σ_r w_r.
    """
    lp = jax.nn.log_softmax(scores, axis=-1)
    true = jnp.take_along_axis(lp, y[:, None], axis=-1)[:, 0]
    wrong = (jnp.argmax(scores, axis=-1) != y).astype(scores.dtype)
    weight = weight.astype(scores.dtype)
    return {f"{prefix}_error": _wmean(wrong, weight), f"{prefix}_log_loss": -_wmean(true, weight)}


def _evaluate_all(score_fn, d, train_w, valid_w):
    s_train = score_fn(d["codes_train"], d["values_train"])  # scored once: train and valid rows
    out = evaluate_scores("train", s_train, d["y_train"], train_w)
    if valid_w is not None:
        out.update(evaluate_scores("valid", s_train, d["y_train"], valid_w))
    if "codes_test" in d:
        yt = d["y_test"]
        s_test = score_fn(d["codes_test"], d["values_test"])
        wt = d["weight_test"] if "weight_test" in d else jnp.ones(yt.shape, train_w.dtype)
        out.update(evaluate_scores("test", s_test, yt, wt))
    return out


def _subset_metrics(params, mask, d, train_w, valid_w):
    """Metrics of NB ``params`` restricted to the predictors in ``mask`` (p,) bool (selective NB,
    CFS + NB): `_evaluate_all` of the masked scores, ``n_selected`` and, when the data carry
    ``noisy``, ``n_noisy_selected``."""
    from .methods import selective as sel

    out = _evaluate_all(lambda c, v: sel.masked_scores(params, mask, c, v), d, train_w, valid_w)
    out["n_selected"] = jnp.sum(mask).astype(jnp.int32)
    if "noisy" in d:
        out["n_noisy_selected"] = jnp.sum(mask & d["noisy"]).astype(jnp.int32)
    return out


def _train_stats(d, train_w, n_states, n_classes):
    return fit_stats(
        d["codes_train"],
        d["values_train"],
        d["y_train"],
        train_w,
        n_states=n_states,
        n_classes=n_classes,
    )


def _nb_fit_eval(d, hyper, train_w, valid_w, key, *, n_states, n_classes, var_smoothing=1e-9):
    r"""NB Ω⁽¹⁾ (Lidstone ``alpha``, variance floor) on the training weights; `log_joint` scores."""
    del key
    stats = _train_stats(d, train_w, n_states, n_classes)
    vs = hyper.get("var_smoothing", var_smoothing)
    params = fit_mle(stats, hyper["alpha"], vs)
    return _evaluate_all(lambda c, v: lk.log_joint(params, c, v), d, train_w, valid_w)


def _group_lasso_fit_eval(
    d,
    hyper,
    train_w,
    valid_w,
    key,
    *,
    n_states,
    n_classes,
    alpha=1.0,
    adaptive=False,
    continuous_scale=1.0,
    relative=False,
    max_steps=1000,
    tol=1e-7,
    solver="exact",
    test_at="all",
):
    r"""Group-lasso NB path over ``hyper["penalty"]`` (any order; solved in decreasing order).

    With ``relative=True`` the grid values are fractions of each problem's ``lambda_max`` (1 removes
    every predictor), which makes one grid meaningful across data sets and folds.

    Besides the `_evaluate_all` metrics and ``n_active`` (d, the predictors not removed), reports
    ``train_aic`` = AIC = −(2/N) Σ_r w_r log P(y_r | x_r) + 2d/N on the training rows, N = Σ_r w_r
    (`jaxnb.model_selection.aic`, fsNB Eq. 14 analogue; `jaxnb.GroupLassoNB`'s ``path_["aic"]``),
    so that the AIC model of the path can be picked from the table (first minimum over the
    penalties in decreasing order, as the estimator), and ``aic_selected`` (True at that penalty).

    ``test_at="aic"`` scores the test rows only at the AIC-selected penalty (the test metrics of
    the other penalties are NaN): the protocol of `GroupLassoNB(selection="aic")` and of the fsNB
    paper's Table 1, at 1/H of the test-scoring cost (which dominates a 20-point path on 3000 test
    rows). ``"all"`` (default) scores every penalty.
    """
    from .methods import group_lasso as gl

    del key
    stats = _train_stats(d, train_w, n_states, n_classes)
    problem = gl.make_group_lasso_problem(stats, alpha=alpha, adaptive=adaptive)
    pen = hyper["penalty"]
    if relative:
        pen = pen * gl.lambda_max(problem, continuous_scale=continuous_scale)
    order = jnp.argsort(-pen)  # warm starts run from large to small penalties
    path = gl.group_lasso_path(
        problem,
        pen[order],
        continuous_scale=continuous_scale,
        max_steps=max_steps,
        tol=tol,
        solver=solver,
    )
    inv = jnp.argsort(order)
    log_prior = fit_mle(stats).log_prior
    noisy = d.get("noisy")

    shift = gl.path_score_shift(problem)
    n_train = jnp.sum(train_w)

    def nb_at(params):
        return NBParams(log_prior, params.cpt, params.mean, params.std, tuple(n_states))

    train_only = {k: v for k, v in d.items() if not k.endswith("_test")}

    def one(params, active):
        nb = nb_at(params)
        dd = d if test_at == "all" else train_only
        out = _evaluate_all(lambda c, v: lk.log_joint(nb, c, v, shift=shift), dd, train_w, valid_w)
        n_active = jnp.sum(active).astype(jnp.int32)
        out["n_active"] = n_active
        # AIC = 2 x training log-loss + 2d/N (`jaxnb.model_selection.aic`; both scalings by 2 are
        # exact, so this equals aic() on the training log posterior bit for bit).
        out["train_aic"] = 2.0 * out["train_log_loss"] + 2.0 * n_active / n_train
        if noisy is not None:
            out["n_noisy_selected"] = jnp.sum(active & noisy).astype(jnp.int32)
        return out

    res = jax.vmap(one)(path.params, path.active)
    res["converged"] = path.info.converged
    # path order = decreasing penalty: the first minimum is the estimator's AIC choice
    aic = res["train_aic"]
    sel = jnp.argmin(jnp.where(jnp.isfinite(aic), aic, jnp.inf))  # as the estimator: finite
    res["aic_selected"] = jnp.arange(res["train_aic"].shape[0]) == sel
    if test_at != "all" and "codes_test" in d:
        nb = nb_at(jax.tree.map(lambda a: a[sel], path.params))
        yt = d["y_test"]
        wt = d["weight_test"] if "weight_test" in d else jnp.ones(yt.shape, train_w.dtype)
        scores = lk.log_joint(nb, d["codes_test"], d["values_test"], shift=shift)
        for k, v in evaluate_scores("test", scores, yt, wt).items():
            res[k] = jnp.where(res["aic_selected"], v, jnp.nan)
    return jax.tree.map(lambda a: a[inv], res)


_FSNB_OPTIONS = (
    "max_iter",
    "alpha",
    "var_smoothing",
    "n_steps",
    "step_rule",
    "criterion",
    "selection",
)


def _fsnb_prepare(grid, options, n_predictors):
    """Static k_max = ⌈1/ε⌉ (fsNB's integer level cap): one group (one compilation) per k_max."""
    from .methods import stagewise as sw

    _check_options("fsnb", options, _FSNB_OPTIONS)
    _check_grid_keys("fsnb", grid, ("epsilon",), ("epsilon", "patience"))
    eps = np.asarray(grid["epsilon"], np.float64)
    if not ((eps > 0) & (eps <= 1)).all():
        raise ValueError(f"epsilon must lie in (0, 1]; got {eps.tolist()}")
    grid = dict(grid)
    if "patience" in grid:
        pat = np.asarray(grid["patience"], np.float64)
        if not (pat >= 1).all():  # NaN fails too
            raise ValueError(f"patience must be >= 1 (or inf for none); got {pat.tolist()}")
        grid["patience"] = np.where(np.isfinite(pat), pat, np.iinfo(np.int32).max).astype(np.int64)
    k_max = np.asarray([sw.n_units(e) for e in eps])
    groups = []
    for k in np.unique(k_max):
        sel = k_max == k
        opts = dict(options, k_max=int(k))
        opts.setdefault("max_iter", sw.default_max_iter(n_predictors, float(eps[sel].min())))
        groups.append(({name: v[sel] for name, v in grid.items()}, opts))
    return groups


def _fsnb_fit_eval(
    d,
    hyper,
    train_w,
    valid_w,
    key,
    *,
    n_states,
    n_classes,
    max_iter,
    k_max,
    alpha=1.0,
    var_smoothing=1e-9,
    n_steps=20,
    step_rule="t_eps",
    criterion="error",
    selection="aic",
):
    r"""fsNB path (Algorithm 1) on the training weights; model chosen by AIC (Eq. 14) or last."""
    from .methods import stagewise as sw

    del key
    if selection not in ("aic", "last"):
        raise ValueError(f"selection must be 'aic' or 'last' in a sweep; got {selection!r}")
    stats = _train_stats(d, train_w, n_states, n_classes)
    o1, o0 = fit_mle(stats, alpha, var_smoothing), fit_marginal(stats, alpha, var_smoothing)
    path = sw.fsnb_path(
        o1,
        o0,
        d["codes_train"],
        d["values_train"],
        d["y_train"],
        train_w,
        epsilon=hyper["epsilon"],
        patience=hyper.get("patience", 10),
        n_steps=n_steps,
        step_rule=step_rule,
        criterion=criterion,
        max_iter=max_iter,
        k_max=k_max,
    )
    idx = jnp.argmin(path.aic) if selection == "aic" else path.n_iter
    a = path.alpha[idx]

    out = _evaluate_all(lambda c, v: sw.interpolated_scores(o1, o0, a, c, v), d, train_w, valid_w)
    out["n_selected"] = jnp.sum(a > 0).astype(jnp.int32)
    out["n_iter"] = path.n_iter.astype(jnp.int32)
    out["selected_iter"] = jnp.asarray(idx).astype(jnp.int32)
    out["n_evaluations"] = path.n_evaluations[path.n_iter].astype(jnp.int32)
    if "noisy" in d:
        out["n_noisy_selected"] = jnp.sum((a > 0) & d["noisy"]).astype(jnp.int32)
    return out


def _check_options(method, options, allowed):
    """Unknown static options of a sweep method: a ValueError naming them (before any tracing)."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(
            f"unknown option(s) {unknown} for sweep method {method!r}; allowed: {sorted(allowed)}"
        )


def _check_grid_keys(method, grid, required, allowed):
    """Grid entries of a sweep method: every ``required`` key present, no key outside ``allowed``
    (a misspelled key would otherwise be ignored or fail inside the trace). Hidden entries (``_h``)
    are skipped."""
    keys = [k for k in grid if not str(k).startswith("_")]
    unknown = sorted(set(keys) - set(allowed))
    missing = [k for k in required if k not in keys]
    if unknown or missing:
        raise ValueError(
            f"grid for sweep method {method!r}: "
            + (f"unknown key(s) {unknown}" if unknown else "")
            + ("; " if unknown and missing else "")
            + (f"missing key(s) {missing}" if missing else "")
            + f"; it needs {list(required)} and allows {sorted(allowed)}"
        )


def _check_grid_nonneg(name, grid):
    """``grid[name]`` (when present) holds finite values >= 0."""
    if name in grid:
        a = np.asarray(grid[name], np.float64)
        if not np.isfinite(a).all() or (a < 0).any():
            raise ValueError(f"grid[{name!r}] must hold finite values >= 0; got {a.tolist()}")


def _check_alpha_method(method, grid, options, allowed, grid_allowed=("alpha",)):
    """Common eager checks of a method gridded over the Lidstone ``alpha``: known options only,
    known grid keys, and an ``alpha`` entry of finite values >= 0."""
    _check_options(method, options, allowed)
    _check_grid_keys(method, grid, ("alpha",), grid_allowed)
    _check_grid_nonneg("alpha", grid)


_NB_GRID = ("alpha", "var_smoothing")


def _nb_prepare(grid, options, n_predictors):
    r"""Eager checks of the ``"nb"`` grid (``alpha`` >= 0, optional ``var_smoothing`` >= 0) and
    its static option ``var_smoothing`` (on the host)."""
    del n_predictors
    _check_alpha_method("nb", grid, options, ("var_smoothing",), _NB_GRID)
    _check_grid_nonneg("var_smoothing", grid)
    _check_real("var_smoothing", options.get("var_smoothing", 1e-9), 0.0)
    return grid, options


_GL_OPTIONS = (
    "alpha",
    "adaptive",
    "continuous_scale",
    "relative",
    "max_steps",
    "tol",
    "solver",
    "test_at",
)


def _group_lasso_prepare(grid, options, n_predictors):
    r"""Eager checks of the ``"group_lasso"`` grid (``penalty`` >= 0) and static options."""
    from .methods import group_lasso as gl

    del n_predictors
    _check_options("group_lasso", options, _GL_OPTIONS)
    _check_grid_keys("group_lasso", grid, ("penalty",), ("penalty",))
    _check_grid_nonneg("penalty", grid)
    _check_real("alpha", options.get("alpha", 1.0), 0.0)
    _check_real("continuous_scale", options.get("continuous_scale", 1.0), 0.0, low_open=True)
    _check_int("max_steps", options.get("max_steps", 1000), 1)
    _check_real("tol", options.get("tol", 1e-7), 0.0, low_open=True)
    _check_choice("solver", options.get("solver", "exact"), gl.SOLVERS)
    _check_choice("test_at", options.get("test_at", "all"), ("all", "aic"))
    return grid, options


_SNB_OPTIONS = ("direction", "criterion", "stopping", "max_steps", "max_features", "var_smoothing")


def _snb_prepare(grid, options, n_predictors):
    r"""Eager checks of the ``"snb"`` grid (``alpha`` ≥ 0) and static options (on the host)."""
    from .methods import selective as sel

    del n_predictors
    _check_alpha_method("snb", grid, options, _SNB_OPTIONS)
    _check_choice("direction", options.get("direction", "forward"), sel.DIRECTIONS)
    _check_choice("criterion", options.get("criterion", "error"), sel.CRITERIA)
    _check_choice("stopping", options.get("stopping", "improve"), sel.STOPPING)
    _check_int("max_steps", options.get("max_steps"), 1, allow_none=True)
    _check_int("max_features", options.get("max_features"), 1, allow_none=True)
    _check_real("var_smoothing", options.get("var_smoothing", 1e-9), 0.0)
    return grid, options


def _snb_fit_eval(
    d,
    hyper,
    train_w,
    valid_w,
    key,
    *,
    n_states,
    n_classes,
    direction="forward",
    criterion="error",
    stopping="improve",
    max_steps=None,
    max_features=None,
    var_smoothing=1e-9,
):
    r"""Selective NB (`jaxnb.methods.selective.selective_path`) on the training weights.

    Ω⁽¹⁾ = ``fit_mle(stats, alpha, var_smoothing)`` of the training rows; L[r, i, j] =
    log f(x_ri | j; Ω⁽¹⁾_i) (`mle_contributions`); the greedy search scores every subset S on the
    training rows (weights ``train_w``) by ``criterion`` with joint scores
    ``s_rj = log π_j + Σ_i S_i L[r, i, j]``. The model is

    * ``stopping="improve"`` (Langley & Sage): the last subset of the path, ``mask[n_steps]``
      (every accepted move strictly improved the criterion);
    * ``stopping="full"``: the smallest subset among those with the lowest criterion along the
      path (ties: the first), as `jaxnb.SelectiveNB` without a validation split.

    Same model as ``SelectiveNB(alpha=alpha, var_smoothing=var_smoothing, direction=...,
    criterion=..., stopping=..., max_features=...)`` fitted on the training rows. Extra metrics:
    ``n_selected`` = |S|, ``converged`` (False when the move budget ``max_steps`` ended the
    search, `SelectiveNB.converged_`), ``n_evaluations`` (candidate subsets evaluated, the final
    non-improving step included), ``n_noisy_selected`` when the data carry ``noisy``.
    """
    from .methods import selective as sel

    del key
    stats = _train_stats(d, train_w, n_states, n_classes)
    o1 = fit_mle(stats, hyper["alpha"], var_smoothing)
    L = sel.mle_contributions(o1, d["codes_train"], d["values_train"])
    path = sel.selective_path(
        L,
        o1.log_prior,
        d["y_train"],
        train_w,
        direction=direction,
        criterion=criterion,
        stopping=stopping,
        max_steps=max_steps,
        max_features=max_features,
    )
    if stopping == "improve":
        idx = path.n_steps
    else:  # select_along_path(criterion, "min_smallest", sizes=size, n_valid=n_steps + 1)
        valid = jnp.arange(path.criterion.shape[0]) <= path.n_steps
        crit = jnp.where(valid, path.criterion, jnp.inf)
        best = valid & (crit == jnp.min(crit))
        idx = jnp.argmin(jnp.where(best, path.size, jnp.iinfo(jnp.int32).max))
    out = _subset_metrics(o1, path.mask[idx], d, train_w, valid_w)
    out["n_evaluations"] = jnp.asarray(path.total_evaluations).astype(jnp.int32)
    out["converged"] = path.converged  # False: the move budget ended the search
    return out


_WNB_OPTIONS = ("n_bins", "state_weighting", "var_smoothing")


def _wnb_prepare(grid, options, n_predictors):
    r"""Eager checks of the ``"wnb"`` grid (``alpha`` ≥ 0) and static options (on the host)."""
    from .methods import weighted as wt

    del n_predictors
    _check_alpha_method("wnb", grid, options, _WNB_OPTIONS)
    _check_int("n_bins", options.get("n_bins", 5), 2)
    _check_choice("state_weighting", options.get("state_weighting", "uniform"), wt.STATE_WEIGHTINGS)
    _check_real("var_smoothing", options.get("var_smoothing", 1e-9), 0.0)
    return grid, options


def _wnb_fit_eval(
    d,
    hyper,
    train_w,
    valid_w,
    key,
    *,
    n_states,
    n_classes,
    n_bins=5,
    state_weighting="uniform",
    var_smoothing=1e-9,
):
    r"""Weighted NB with Ferreira weights (fsNB Eqs. 6–7) on the training weights.

    .. math:: s_{rj} = \log \pi_j + \sum_i w_i \log f(x_{ri} \mid j; \hat\Omega_i),
              \qquad w_i = \sqrt{\sum_j \sum_k [P(Y=j \mid X_i=k) - P(Y=j)]^2}

    with Ω̂ = ``fit_mle(stats, alpha, var_smoothing)`` of the training rows and w from
    `jaxnb.methods.weighted.ferreira_weights` on the same rows (continuous predictors cut into
    ``n_bins`` equal-frequency bins for the weight only; ``state_weighting`` as there). The
    weights do not depend on ``alpha``, so they are computed once per fold. Same model as
    ``WeightedNB(scheme="ferreira", alpha=alpha, ...)`` fitted on the training rows. Extra metric:
    ``n_selected`` = #{i : w_i ≠ 0} (the estimator's ``n_selected_``).
    """
    from .methods import weighted as wt

    del key
    stats = _train_stats(d, train_w, n_states, n_classes)
    params = fit_mle(stats, hyper["alpha"], var_smoothing)
    w = wt.ferreira_weights(
        d["codes_train"],
        d["values_train"],
        d["y_train"],
        train_w,
        n_states=tuple(n_states),
        n_classes=n_classes,
        n_bins=int(n_bins),
        state_weighting=state_weighting,
    )
    out = _evaluate_all(lambda c, v: lk.log_joint(params, c, v, w), d, train_w, valid_w)
    out["n_selected"] = jnp.sum(w != 0).astype(jnp.int32)
    return out


_CFS_OPTIONS = ("n_bins", "max_stale", "max_features", "max_expansions", "var_smoothing")


def _cfs_prepare(grid, options, n_predictors):
    r"""Eager checks of the ``"cfs"`` grid and options (on the host)."""
    del n_predictors
    _check_alpha_method("cfs", grid, options, _CFS_OPTIONS)
    _check_int("n_bins", options.get("n_bins", 10), 2)
    _check_int("max_stale", options.get("max_stale", 5), 1)
    _check_int("max_features", options.get("max_features"), 1, allow_none=True)
    _check_int("max_expansions", options.get("max_expansions", 128), 1)
    _check_real("var_smoothing", options.get("var_smoothing", 1e-9), 0.0)
    return grid, options


def _cfs_fit_eval(
    d,
    hyper,
    train_w,
    valid_w,
    key,
    *,
    n_states,
    n_classes,
    n_bins=10,
    max_stale=5,
    max_features=None,
    max_expansions=128,
    var_smoothing=1e-9,
):
    r"""CFS + NB: Hall's best-first CFS (`jaxnb.methods.filters.cfs_search`) on the training
    weights, then NB Ω⁽¹⁾ (``fit_mle(stats, alpha, var_smoothing)``) scored on the selected
    predictors.

    Correlations as `jaxnb.methods.filters.cfs_correlations` (|Pearson r| on continuous data,
    symmetric uncertainty otherwise, continuous columns of mixed data in ``n_bins``
    equal-frequency bins). The selection does not depend on ``alpha``, so it runs once per fold.
    Same model as ``FilterNB(filter="cfs", k=max_features, n_bins=n_bins, alpha=alpha)`` fitted on
    the training rows, as long as the search finishes within ``max_expansions`` (the estimator
    then continues it in a larger table; here ``cfs_truncated`` = 1 flags it). Extra metrics:
    ``n_selected``, ``n_expansions``, ``cfs_truncated``, ``n_noisy_selected`` when the data carry
    ``noisy``.
    """
    from .methods import filters as flt

    del key
    rcf, rff = flt.cfs_correlations(
        d["codes_train"],
        d["values_train"],
        d["y_train"],
        tuple(n_states),
        n_classes,
        train_w,
        int(n_bins),
    )
    res = flt.cfs_search(rcf, rff, max_stale, max_features, max_expansions=int(max_expansions))
    stats = _train_stats(d, train_w, n_states, n_classes)
    params = fit_mle(stats, hyper["alpha"], var_smoothing)
    out = _subset_metrics(params, res.mask, d, train_w, valid_w)
    out["n_expansions"] = res.n_expansions.astype(jnp.int32)
    out["cfs_truncated"] = res.truncated.astype(jnp.int32)
    return out


register_sweep_method("nb", _nb_fit_eval, default_grid={"alpha": [1.0]}, prepare=_nb_prepare)
register_sweep_method(
    "group_lasso",
    _group_lasso_fit_eval,
    default_grid={"penalty": [0.1, 0.03, 0.01, 0.003, 0.001, 0.0]},
    path=True,
    prepare=_group_lasso_prepare,
)
register_sweep_method("wnb", _wnb_fit_eval, default_grid={"alpha": [1.0]}, prepare=_wnb_prepare)
register_sweep_method(
    "fsnb",
    _fsnb_fit_eval,
    default_grid={"epsilon": [0.025], "patience": [10]},
    prepare=_fsnb_prepare,
)
register_sweep_method("snb", _snb_fit_eval, default_grid={"alpha": [1.0]}, prepare=_snb_prepare)
register_sweep_method("cfs", _cfs_fit_eval, default_grid={"alpha": [1.0]}, prepare=_cfs_prepare)


# ================================================================================ folds
def _fold_ids_from_key(key, n_rows, n_folds, real=None):
    """Balanced random folds: row i gets ``perm[i] % K`` for a random permutation ``perm``.

    With ``real`` (rows of positive weight; padding rows have none), only the real rows are
    dealt: a real row gets (its rank among the real rows in ``perm`` order) % K, so every fold
    holds about n_real / K real rows; with every row real that rank is ``perm[i]`` (the same
    folds as without ``real``). Rows of weight 0 get folds too, which changes nothing."""
    perm = jax.random.permutation(key, n_rows)
    if real is None:
        return (perm % n_folds).astype(jnp.int32)
    order = jnp.argsort(perm)  # rows in perm order
    rank = jnp.cumsum(real[order].astype(jnp.int32)) - 1
    ids = jnp.zeros((n_rows,), jnp.int32).at[order].set(jnp.maximum(rank, 0) % n_folds)
    return ids


def fold_ids(seed: int, n_rows: int, n_folds: int) -> np.ndarray:
    """The fold of every training row used by `sweep` for ``seed`` (balanced, random, (n,) int),
    when every training row has a positive weight (rows of weight 0, e.g. the padding of
    `stack_datasets`, are left out of the deal: see `_fold_ids_from_key`).

    ``n_folds`` must be an int in [2, n_rows] (every fold non-empty, as `sweep`'s ``folds``)."""
    _check_int("n_rows", n_rows, 1)
    _check_int("n_folds", n_folds, 2)
    if n_folds > n_rows:
        raise ValueError(
            f"n_folds={n_folds} exceeds n_rows={n_rows}, which leaves empty folds; lower n_folds "
            f"to at most {n_rows}"
        )
    return np.asarray(_fold_ids_from_key(jax.random.PRNGKey(seed), n_rows, n_folds))


# ================================================================================ result
class SweepResult:
    """Metrics of a sweep.

    Attributes:
      method: method name; grid: dict name -> (H,) grid values (user-visible entries);
      seeds: (S,) seeds; n_folds: K or None; arrays: dict metric -> array (D, H, F, S);
      table: tidy NumPy structured array, one row per (data set, grid point, fold, seed), fields
      ``method, dataset, <grid names>, fold, seed, <metrics>`` (rows in that nested order).
    """

    def __init__(self, method, grid, seeds, n_folds, arrays):
        self.method, self.grid, self.seeds, self.n_folds = method, grid, np.asarray(seeds), n_folds
        self.arrays = arrays
        self.table = self._make_table()

    def _make_table(self):
        D, H, F, S = next(iter(self.arrays.values())).shape[:4]
        idx = np.stack(
            np.meshgrid(np.arange(D), np.arange(H), np.arange(F), np.arange(S), indexing="ij"), -1
        ).reshape(-1, 4)
        cols: dict[str, np.ndarray] = {
            "method": np.full(len(idx), self.method),
            "dataset": idx[:, 0].astype(np.int32),
        }
        for name, vals in self.grid.items():
            cols[name] = np.asarray(vals)[idx[:, 1]]
        cols["fold"] = (idx[:, 2] if self.n_folds else np.full(len(idx), -1)).astype(np.int32)
        cols["seed"] = self.seeds[idx[:, 3]].astype(np.int64)
        for name, arr in self.arrays.items():
            cols[name] = np.asarray(arr).reshape(-1)
        return _structured(cols)

    def rows(self) -> list[dict[str, Any]]:
        """The table as a list of dicts (Python scalars)."""
        names = self.table.dtype.names
        return [{k: r[k].item() for k in names} for r in self.table]

    def to_pandas(self):
        """The table as a pandas DataFrame (pandas is optional)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.table)

    def __len__(self):
        return len(self.table)

    def __repr__(self):
        D, H, F, S = next(iter(self.arrays.values())).shape[:4]
        return (
            f"SweepResult(method={self.method!r}, datasets={D}, grid={H}, folds={F}, "
            f"seeds={S}, metrics={list(self.arrays)})"
        )


def _structured(cols: Mapping[str, np.ndarray]) -> np.ndarray:
    dtype = []
    for k, v in cols.items():
        v = np.asarray(v)
        if v.dtype.kind in "US":
            dtype.append((k, f"U{max(1, max((len(str(s)) for s in v), default=1))}"))
        elif v.dtype.kind == "b":
            dtype.append((k, "?"))
        elif v.dtype.kind in "iu":
            dtype.append((k, "i8"))
        else:
            dtype.append((k, "f8"))
    n = len(next(iter(cols.values())))
    out = np.empty(n, dtype)
    for k, v in cols.items():
        out[k] = v
    return out


_ROW_KEYS = (
    ("codes_train", "values_train", "y_train", "weight_train"),
    ("codes_test", "values_test", "y_test", "weight_test"),
)


def stack_datasets(datasets: Sequence[Mapping[str, Any]], *, folds=None, seed: int = 0):
    r"""Stack data sets with different numbers of rows into one sweep input (zero-weight padding).

    Every data set must have the same predictors (``codes_*`` (n, q), ``values_*`` (n, r)); the
    training and test rows are padded to the largest data set with rows of zeros whose weight
    (``weight_train`` / ``weight_test``, created as ones when absent) is 0. The sweep's fits and
    metrics are weighted sums, so a zero-weight row changes nothing: e.g. the data sets of a
    learning curve (N = 50, 100, 200, ...) run as one compiled call. Other per-data-set arrays
    (``noisy``...) must have equal shapes and are stacked as they are.

    Args:
      datasets: dicts with ``codes_train``, ``values_train``, ``y_train``, optionally
        ``weight_train``, ``codes_test`` / ``values_test`` / ``y_test`` (all or none),
        ``weight_test`` and other arrays.
      folds: None, or K: also return (D, n) fold ids for `sweep`'s ``folds``: each data set's
        real rows get ``fold_ids(seed, n_d, K)`` (the assignment a sweep of that data set alone
        with ``folds=K, seeds=[seed]`` uses), padded rows fold 0 (they weigh nothing anywhere).
      seed: seed of those folds.

    Returns:
      The batched dict, or ``(dict, fold_ids)`` when ``folds`` is given.
    """
    if isinstance(datasets, Mapping) or not len(datasets):
        raise TypeError("datasets must be a non-empty sequence of dicts (one per data set)")
    sets = [{k: np.asarray(v) for k, v in d.items()} for d in datasets]
    keys = set(sets[0])
    for i, d in enumerate(sets):
        if set(d) != keys:
            raise ValueError(f"data set {i} has keys {sorted(d)}, data set 0 has {sorted(keys)}")
        missing = [k for k in _REQUIRED if k not in d]
        if missing:
            raise ValueError(f"data set {i} is missing {missing}")
    out = {}
    for ck, vk, yk, wk in _ROW_KEYS:
        if ck not in keys:
            continue
        n = max(d[yk].shape[0] for d in sets)
        for k in (ck, vk, yk, wk):
            cols = []
            for i, d in enumerate(sets):
                m = d[yk].shape[0]
                a = d[k] if k in d else np.ones((m,), np.float64)
                if a.shape[0] != m or a.shape[1:] != sets[0].get(k, a).shape[1:]:
                    raise ValueError(
                        f"data set {i}: {k} has shape {a.shape}; expected {m} rows and the same "
                        f"columns as data set 0"
                    )
                cols.append(np.concatenate([a, np.zeros((n - m,) + a.shape[1:], a.dtype)]))
            out[k] = np.stack(cols)
    for k in keys - {k for ks in _ROW_KEYS for k in ks}:
        shapes = {d[k].shape for d in sets}
        if len(shapes) > 1:
            raise ValueError(f"{k} must have one shape in every data set; got {sorted(shapes)}")
        out[k] = np.stack([d[k] for d in sets])
    if folds is None:
        return out
    n = out["y_train"].shape[1]
    ids = np.zeros((len(sets), n), np.int32)
    for i, d in enumerate(sets):
        m = d["y_train"].shape[0]
        ids[i, :m] = fold_ids(seed, m, int(folds))
    return out, ids


def concat_tables(tables: Sequence[np.ndarray]) -> np.ndarray:
    """Stack structured tables with different fields (missing: NaN, -1, False or "")."""
    names: list[str] = []
    kinds: dict[str, str] = {}
    widths: dict[str, int] = {}
    for t in tables:
        for nm in t.dtype.names:
            if nm not in kinds:
                names.append(nm)
                kinds[nm] = t.dtype[nm].kind
            if t.dtype[nm].kind == "U":
                widths[nm] = max(widths.get(nm, 1), t.dtype[nm].itemsize // 4)
            elif kinds[nm] != t.dtype[nm].kind:
                kinds[nm] = "f"
    fill = {"f": np.nan, "i": -1, "b": False, "U": ""}
    cols = {}
    for nm in names:
        parts = []
        for t in tables:
            if nm in t.dtype.names:
                parts.append(np.asarray(t[nm]))
            else:
                parts.append(
                    np.full(
                        len(t),
                        fill[kinds[nm]],
                        dtype=f"U{widths.get(nm, 1)}" if kinds[nm] == "U" else None,
                    )
                )
        col = np.concatenate(parts)
        cols[nm] = col.astype(np.float64) if kinds[nm] == "f" else col
    return _structured(cols)


# ================================================================================= driver
def _as_batched(data):
    if not isinstance(data, Mapping):
        raise TypeError(
            f"data must be a dict of arrays (e.g. make_table1_batch's); got {type(data).__name__}"
        )
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise ValueError(
            f"data is missing {missing}; it needs codes_train (D, n, q), "
            f"values_train (D, n, r) and y_train (D, n)"
        )
    d = {k: np.asarray(v) for k, v in data.items()}
    if d["codes_train"].ndim == 2:  # one data set
        d = {k: v[None] for k, v in d.items()}
    D = d["codes_train"].shape[0]
    for k, v in d.items():
        if v.ndim == 0 or v.shape[0] != D:
            raise ValueError(
                f"every array in data needs the leading data-set axis D={D}; {k} has "
                f"shape {v.shape}"
            )
    ct, vt, yt = d["codes_train"], d["values_train"], d["y_train"]
    if (
        ct.ndim != 3
        or vt.ndim != 3
        or yt.ndim != 2
        or not (ct.shape[1] == vt.shape[1] == yt.shape[1])
    ):
        raise ValueError(
            f"codes_train (D, n, q), values_train (D, n, r) and y_train (D, n) must "
            f"agree; got {ct.shape}, {vt.shape}, {yt.shape}"
        )
    if ("codes_test" in d) != ("y_test" in d) or ("codes_test" in d) != ("values_test" in d):
        raise ValueError("test data needs codes_test, values_test and y_test together")
    return d


def _check_n_states(n_states, q):
    """``n_states``: a sequence of q ints >= 1 (one per discrete column), returned as a tuple."""
    if isinstance(n_states, (numbers.Number, str, bytes)) or not isinstance(n_states, Iterable):
        raise TypeError(
            f"n_states must be a sequence of ints, one per column of codes_train (here {q}), "
            f"e.g. n_states=({n_states!r},) * {q}; got {type(n_states).__name__} {n_states!r}"
        )
    n_states = tuple(n_states)
    for i, m in enumerate(n_states):
        if isinstance(m, (float, np.floating)) and np.isfinite(m) and float(m).is_integer():
            m = int(m)
        _check_int(f"n_states[{i}]", m, 1)
    if len(n_states) != q:
        raise ValueError(f"codes_train has {q} columns but n_states has {len(n_states)} entries")
    return tuple(int(m) for m in n_states)


def _check_labels(d):
    """``y_train`` / ``y_test``: integer class codes >= 0 (whole-number floats are accepted)."""
    for k in ("y_train", "y_test"):
        if k not in d:
            continue
        y = d[k]
        if y.dtype.kind not in "iubf" or (
            y.dtype.kind == "f" and not (np.isfinite(y).all() and (y == np.round(y)).all())
        ):
            raise TypeError(
                f"{k} must hold integer class codes 0..n_classes-1; got dtype {y.dtype} "
                f"(encode labels first, e.g. np.unique(labels, return_inverse=True)[1])"
            )
        if y.size and y.min() < 0:
            raise ValueError(
                f"{k} must hold class codes 0..n_classes-1; got {k} min {y.min()} "
                f"(encode labels first, e.g. np.unique(labels, return_inverse=True)[1])"
            )
        if y.dtype.kind in "bf":
            d[k] = y.astype(np.int32)


def _check_sweep_data(d, n_states, n_classes):
    """Eager NumPy checks of the batched sweep data (host side, before any tracing): labels in
    [0, n_classes), codes whole numbers in [-1, n_states[i]) (-1 = missing, CONVENTIONS.md), values
    not +/-inf (NaN = missing), weights finite and >= 0 with a positive training weight."""
    for k in ("y_train", "y_test"):
        if k in d and d[k].size and d[k].max() >= n_classes:
            raise ValueError(
                f"{k} must hold class codes 0..n_classes-1 = 0..{n_classes - 1}; got a label "
                f"{d[k].max()} (raise n_classes or re-encode the labels)"
            )
    states = np.asarray(n_states, np.int64)
    for k in ("codes_train", "codes_test"):
        if k not in d:
            continue
        c = d[k]
        if c.dtype.kind not in "iubf":
            raise TypeError(f"{k} must hold integer codes; got dtype {c.dtype}")
        if c.dtype.kind == "f":
            if not (np.isfinite(c).all() and (c == np.round(c)).all()):
                raise ValueError(
                    f"{k} must hold whole-number codes in [0, n_states[i]) (-1 = missing); got "
                    f"non-integer or non-finite entries (discretize continuous columns or pass "
                    f"them as values_*; code missing entries as -1)"
                )
        if c.shape[2] != len(n_states):
            raise ValueError(f"{k} has {c.shape[2]} columns but n_states has {len(n_states)}")
        # one overall min / max first (a fast flat reduction); per column only when needed
        if c.size and not (c.min() >= -1 and c.max() < states.min()):
            lo, hi = c.min(axis=(0, 1)), c.max(axis=(0, 1))
            if (lo < -1).any():
                i = int(np.argmax(lo < -1))
                raise ValueError(
                    f"{k} column {i} has code {lo[i]}; codes must lie in [0, n_states[i]) and "
                    f"-1 is the only missing-value code"
                )
            if (hi >= states).any():
                i = int(np.argmax(hi >= states))
                raise ValueError(
                    f"{k} column {i} has code {hi[i]} but n_states[{i}]={states[i]}; codes must "
                    f"lie in [0, n_states[i]) (raise n_states[{i}] to at least {hi[i] + 1})"
                )
    for k in ("values_train", "values_test"):
        if k not in d:
            continue
        v = d[k]
        if v.dtype.kind not in "iubf":
            raise TypeError(f"{k} must hold real numbers; got dtype {v.dtype}")
        # a finite sum proves there is no inf (NaN = missing makes it non-finite: look closer)
        with np.errstate(over="ignore"):
            finite_sum = v.dtype.kind != "f" or np.isfinite(v.sum())
        if not finite_sum and np.isinf(v).any():
            raise ValueError(f"{k} must not hold +/-inf (NaN marks a missing value)")
    for k in ("weight_train", "weight_test"):
        if k not in d:
            continue
        w = d[k]
        if w.dtype.kind not in "iubf" or w.shape != d[k.replace("weight", "y")].shape:
            raise ValueError(
                f"{k} must be a real (D, n) array matching {k.replace('weight', 'y')}; got "
                f"dtype {w.dtype}, shape {w.shape}"
            )
        if not (np.isfinite(w).all() and (w >= 0).all()):
            raise ValueError(f"{k} must hold finite sample weights >= 0")
        if k == "weight_train" and not (w.sum(axis=1) > 0).all():
            raise ValueError(
                "weight_train must give every data set a positive total weight; data set "
                f"{int(np.argmin(w.sum(axis=1) > 0))} has all weights 0"
            )


def _grid_arrays(grid: Mapping[str, Sequence]):
    if not isinstance(grid, Mapping) or not grid:
        raise ValueError(f"grid must be a non-empty dict name -> list of values; got {grid!r}")
    names = list(grid)
    values = [np.atleast_1d(np.asarray(grid[k])) for k in names]
    for k, v in zip(names, values, strict=True):
        if v.ndim != 1 or v.size == 0 or v.dtype.kind not in "fiub":
            raise ValueError(f"grid[{k!r}] must be a non-empty 1-D list of numbers; got {v!r}")
    prod = list(itertools.product(*[range(len(v)) for v in values]))
    return {k: v[[p[i] for p in prod]] for i, (k, v) in enumerate(zip(names, values, strict=True))}


def _folds_arg(folds, D, n, real):
    """(random K or None, number of folds F, fixed (D, n) ids or None); ``real``: (D, n) rows of
    positive training weight (padding rows of `stack_datasets` have weight 0)."""
    if folds is None:
        return None, 1, None
    n_real = int(real.sum(axis=1).min())
    if isinstance(folds, (int, np.integer)) and not isinstance(folds, bool):
        if not 2 <= folds <= n_real:
            raise ValueError(
                f"folds must be an int in [2, {n_real}] (the fewest rows of positive weight in a "
                f"data set), a fold-id array or None; got {folds=}"
            )
        return int(folds), int(folds), None
    if not isinstance(folds, np.ndarray | list | tuple) and not hasattr(folds, "__array__"):
        raise TypeError(
            f"folds must be None, an int K >= 2 or an int array of fold ids; got {folds!r}"
        )
    ids = np.asarray(folds)
    if ids.shape == (n,):
        ids = np.broadcast_to(ids, (D, n))
    if ids.shape != (D, n) or ids.dtype.kind not in "iu" or ids.min() < 0:
        raise ValueError(
            f"fold ids must be non-negative ints of shape (n,) or (D, n) = ({D}, "
            f"{n}); got shape {ids.shape}, dtype {ids.dtype}"
        )
    F = int(ids.max()) + 1
    for d_i in range(D):
        held = np.bincount(ids[d_i][real[d_i]], minlength=F)
        if (held == 0).any():
            raise ValueError(
                f"fold ids of data set {d_i} leave fold {int(np.argmax(held == 0))} without a "
                f"row of positive weight (folds must be numbered 0..{F - 1} without gaps)"
            )
    return None, F, ids.astype(np.int32)


def _vmap_axis(f, xs):
    """``jax.vmap(f)(xs)`` over the leading axis, except that a length-1 axis is sliced and
    re-added instead: vmapping a while loop over one element turns its condition into a reduction
    and its body into selects on every carry, pure overhead for the common single-seed, single-fold
    or single-grid-point sweep (e.g. 0.8x -> parity of the estimator loop for group lasso on one
    CPU device)."""
    if jax.tree.leaves(xs)[0].shape[0] == 1:
        out = f(jax.tree.map(lambda a: a[0], xs))
        return jax.tree.map(lambda a: jnp.expand_dims(a, 0), out)
    return jax.vmap(f)(xs)


@functools.lru_cache(maxsize=64)
def _compiled_sweep(
    fit_eval_fn,
    opt_key,
    n_states,
    n_classes,
    path,
    random_k,
    F,
    n,
    mesh,
    dtype_name,
    has_valid,
    dataset_batch_size,
):
    """The jitted, vmapped (and, with a mesh, shard_mapped) sweep; cached so that repeated sweeps
    of the same configuration reuse one compilation (jit caches by function identity)."""
    dtype = jnp.dtype(dtype_name)
    fn = partial(fit_eval_fn, n_states=n_states, n_classes=n_classes, **dict(opt_key))

    def per_dataset(dd, grid_h, seed_keys):
        base_w = dd.get("weight_train", jnp.ones((n,), dtype)).astype(dtype)
        task = {k: v for k, v in dd.items() if k not in ("weight_train", "_fold_ids")}

        def per_seed(key):
            if random_k is not None:
                ids = _fold_ids_from_key(key, n, random_k, base_w > 0)
            elif "_fold_ids" in dd:
                ids = dd["_fold_ids"]
            else:
                ids = jnp.full((n,), -1, jnp.int32)
            mkey = jax.random.fold_in(key, 1)

            def per_fold(k):
                valid = (ids == k).astype(dtype)
                train_w, valid_w = base_w * (1.0 - valid), base_w * valid
                if not has_valid:
                    valid_w = None  # static: no held-out rows, no validation metrics
                if path:
                    return fn(task, grid_h, train_w, valid_w, mkey)
                return _vmap_axis(lambda h: fn(task, h, train_w, valid_w, mkey), grid_h)

            return _vmap_axis(per_fold, jnp.arange(F))

        return _vmap_axis(per_seed, seed_keys)  # leaves (S, F, H)

    if dataset_batch_size is None:
        batched = jax.vmap(per_dataset, in_axes=(0, None, None))
    else:
        # lax.map: data sets in sequence (vmapped dataset_batch_size at a time) inside one program.
        # On CPU this beats one wide vmap: no straggling in batched while loops, no batched
        # gathers, and the working set of one data set stays in cache.
        def batched(jd, grid_h, seed_keys):
            return lax.map(
                lambda dd: per_dataset(dd, grid_h, seed_keys),
                jd,
                batch_size=None if dataset_batch_size == 1 else dataset_batch_size,
            )

    if mesh is None:
        return jax.jit(batched)
    axis = mesh.axis_names[0]

    def sharded(jd, garr, keys):
        specs = {k: P(axis) for k in jd}
        # No collective runs inside (data sets are independent). check_vma=False because core
        # loops build their initial carries from constants (device-invariant) while the body
        # makes them per-device; with no psum anywhere the distinction has no effect here.
        return jax.shard_map(
            batched, mesh=mesh, in_specs=(specs, P(), P()), out_specs=P(axis), check_vma=False
        )(jd, garr, keys)

    return jax.jit(sharded)


def sweep(
    fit_eval_fn: Callable,
    data,
    grid: Mapping[str, Sequence],
    *,
    n_states,
    n_classes: int | None = None,
    folds=None,
    seeds: Sequence[int] = (0,),
    path=False,
    options: Mapping[str, Any] | None = None,
    mesh=None,
    name: str = "custom",
    prepare: Callable | None = None,
    dataset_batch_size="auto",
    progress: bool = False,
) -> SweepResult:
    r"""Run ``fit_eval_fn`` over data sets × grid × folds × seeds in one compiled, vmapped call.

    Args:
      fit_eval_fn: see `SweepMethod` (``(data, hyper, train_weight, valid_weight, key, *,
        n_states, n_classes, **options) -> dict`` of scalar metrics).
      data: dict with ``codes_train`` (D, n, q) int, ``values_train`` (D, n, r), ``y_train``
        (D, n); optional ``weight_train`` (D, n), ``codes_test`` / ``values_test`` / ``y_test``,
        ``weight_test`` (test-metric weights; `stack_datasets` pads ragged data sets with
        zero-weight rows) and any other per-data-set arrays (``noisy``...), all with the
        leading D axis (one data set without it is accepted).
      grid: dict name -> values; the grid is their Cartesian product (H points).
      n_states: static state counts of the discrete predictors.
      n_classes: number of classes (default: largest label + 1).
      folds: None (train on all rows), K (random balanced folds per seed, `fold_ids`) or fold ids
        (n,) / (D, n).
      seeds: seeds (fold assignment, and a key handed to ``fit_eval_fn``).
      path: ``fit_eval_fn`` takes the whole grid at once (see `SweepMethod`).
      options: static keyword arguments of ``fit_eval_fn`` (hashable values).
      mesh: a 1-D mesh to split data sets over; default all devices when there are several;
        ``False`` keeps one device.
      name: method name written in the table.
      prepare: optional host hook (see `SweepMethod`).
      dataset_batch_size: how data sets are batched on each device: None vmaps all of them (best
        on GPU/TPU), an int k runs them k at a time in sequence (``lax.map``) inside the same
        compiled program, ``"auto"`` (default) is 1 on CPU and None elsewhere.
      progress: print one line per compiled call on stderr (method, sizes, devices, seconds, and
        whether the call compiled). The call itself is one program, so there is nothing to report
        inside it.

    Returns:
      `SweepResult`.
    """
    d = _as_batched(data)
    D, n = d["y_train"].shape
    n_states = _check_n_states(n_states, d["codes_train"].shape[2])
    _check_labels(d)
    if n_classes is None:
        n_classes = int(max(d["y_train"].max(), d["y_test"].max() if "y_test" in d else 0)) + 1
        if n_classes < 2:
            raise ValueError(
                f"y_train holds a single class ({n_classes - 1}); a sweep needs >= 2 classes "
                f"(pass n_classes=<int >= 2> if the other classes are absent from these rows)"
            )
    else:
        _check_int("n_classes", n_classes, 2)
    _check_sweep_data(d, n_states, int(n_classes))
    grid_arrays = _grid_arrays(grid)
    user_grid = dict(grid_arrays)
    H = len(next(iter(grid_arrays.values())))
    options = dict(options or {})
    grid_arrays["_h"] = np.arange(H)
    groups = [(grid_arrays, options)]
    if prepare is not None:
        p = len(n_states) + d["values_train"].shape[2]
        groups = prepare(grid_arrays, options, p)
        if isinstance(groups, tuple):
            groups = [groups]
        covered = np.sort(np.concatenate([np.asarray(g["_h"]) for g, _ in groups]))
        if not np.array_equal(covered, np.arange(H)):
            raise ValueError(
                "a prepare hook must return groups that cover every grid point once "
                "(keep the '_h' entry)"
            )
    if path and len(groups) > 1:
        raise ValueError("path methods take the whole grid at once; prepare must not split it")
    raw_seeds = np.atleast_1d(np.asarray(seeds))
    if raw_seeds.ndim != 1 or raw_seeds.size == 0 or raw_seeds.dtype.kind not in "iu":
        raise ValueError(f"seeds must be a non-empty list of ints; got {seeds!r}")
    seeds = raw_seeds.astype(np.int64)
    real = np.asarray(d["weight_train"]) > 0 if "weight_train" in d else np.ones((D, n), bool)
    random_k, F, fixed_ids = _folds_arg(folds, D, n, real)

    dtype = float_dtype()
    hd = dict(d)  # host (NumPy) arrays: cast and pad here, then one transfer to the devices
    for k in ("codes_train", "codes_test"):
        if k in hd:
            hd[k] = hd[k].astype(np.int32, copy=False)
    for k in ("values_train", "values_test"):
        if k in hd:
            hd[k] = hd[k].astype(dtype, copy=False)
    if fixed_ids is not None:
        hd["_fold_ids"] = fixed_ids
    keys = jnp.stack([jax.random.PRNGKey(int(s)) for s in seeds])
    if mesh is None:
        mesh = _default_mesh()
    n_dev = 1 if mesh is False else mesh.devices.size
    pad = (-D) % n_dev
    if pad:
        hd = {k: np.concatenate([v, np.repeat(v[-1:], pad, axis=0)]) for k, v in hd.items()}
    jd = _place(hd, mesh if n_dev > 1 else None)
    batch = _dataset_batch(dataset_batch_size, mesh)

    arrays: dict[str, np.ndarray] = {}
    for g_arrays, g_options in groups:
        try:
            opt_key = tuple(sorted(g_options.items()))
            hash(opt_key)
        except TypeError as err:
            raise TypeError(
                f"options must have hashable values (they are static); got {g_options}"
            ) from err
        # the grid's values: device_put, as jnp.asarray of a NumPy array compiles a staging
        # program per shape and dtype (a prepare hook's device arrays stay where they are)
        garr = jax.device_put(
            {
                k: (v if isinstance(v, jax.Array) else np.asarray(v)).astype(
                    dtype if v.dtype.kind == "f" else v.dtype
                )
                for k, v in g_arrays.items()
                if not k.startswith("_")
            }
        )
        run = _compiled_sweep(
            fit_eval_fn,
            opt_key,
            n_states,
            int(n_classes),
            bool(path),
            random_k,
            F,
            n,
            mesh if n_dev > 1 else None,
            str(dtype),
            folds is not None,
            batch,
        )
        n_compiled = _jit_cache_size(run)
        t0 = time.perf_counter()
        out = run(jd, garr, keys)
        pos = np.asarray(g_arrays["_h"])
        for k, v in out.items():
            a = np.transpose(np.asarray(v)[:D], (0, 3, 2, 1))  # (D, S, F, h) -> (D, h, F, S)
            if k not in arrays:
                arrays[k] = np.zeros((D, H) + a.shape[2:], a.dtype)
            arrays[k][:, pos] = a
        if progress:
            compiled = n_compiled is not None and _jit_cache_size(run) > n_compiled
            print(
                f"[jaxnb.sweep] {name}: {D} data sets x {len(pos)} grid points x {F} folds x "
                f"{len(seeds)} seeds on {n_dev} device(s): {time.perf_counter() - t0:.2f} s"
                f"{' (first call: includes compilation)' if compiled else ''}",
                file=sys.stderr,
                flush=True,
            )
    if folds is None:
        arrays = {k: v for k, v in arrays.items() if not k.startswith("valid_")}
    return SweepResult(
        name,
        {k: np.asarray(v) for k, v in user_grid.items()},
        seeds,
        None if folds is None else F,
        arrays,
    )


def _dataset_batch(dataset_batch_size, mesh):
    if dataset_batch_size == "auto":
        devices = jax.devices() if mesh is False else list(mesh.devices.flat)
        return 1 if devices[0].platform == "cpu" else None
    if dataset_batch_size is not None and (
        not isinstance(dataset_batch_size, (int, np.integer)) or dataset_batch_size < 1
    ):
        raise ValueError(
            f"dataset_batch_size must be 'auto', None or a positive int; got {dataset_batch_size!r}"
        )
    return None if dataset_batch_size is None else int(dataset_batch_size)


def _jit_cache_size(fn):
    """Number of programs a jitted function has compiled (None where JAX does not expose it)."""
    try:
        return int(fn._cache_size())
    except Exception:  # private API: progress output must never fail a sweep
        return None


def _place(host, mesh):
    """Put the host arrays on the device(s) where the compiled sweep reads them: split along the
    data-set axis over ``mesh``, or on the default device. One direct transfer; staging them on
    one device first and letting the sharded program re-split them cost more than a small
    method's whole sweep (e.g. ~30 ms for a 100-data-set Table-1 scenario on two CPU devices)."""
    if mesh is None:
        target = jax.devices()[0]
    else:
        target = jax.sharding.NamedSharding(mesh, P(mesh.axis_names[0]))
    return {k: jax.device_put(v, target) for k, v in host.items()}


def _default_mesh():
    if jax.device_count() < 2:
        return False
    from .distributed import make_mesh

    return make_mesh()


def _method(name):
    if name not in _METHODS:
        raise ValueError(f"unknown sweep method {name!r}; available: {available_sweep_methods()}")
    return _METHODS[name]


def sweep_methods(
    data,
    methods: Mapping[str, Mapping[str, Sequence] | None] | Sequence[str],
    *,
    n_states,
    n_classes=None,
    folds=None,
    seeds=(0,),
    options: Mapping[str, Mapping[str, Any]] | None = None,
    mesh=None,
    dataset_batch_size="auto",
    progress: bool = False,
):
    r"""Run several registered methods (one compiled call each) and stack their tables.

    Args:
      methods: ``{"nb": {"alpha": [...]}, "group_lasso": {"penalty": [...]}, "fsnb": None}``
        (None: the method's default grid) or a list of names.
      options: per-method static options, e.g. ``{"group_lasso": {"adaptive": True}}``.
      Other arguments: see `sweep`.

    Returns:
      (table, results): the stacked structured table (`concat_tables`) and the dict name ->
      `SweepResult`.
    """
    if not isinstance(methods, Mapping):
        methods = {m: None for m in methods}
    options = dict(options or {})
    unknown = set(options) - set(methods)
    if unknown:
        raise ValueError(f"options given for methods not run: {sorted(unknown)}")
    results = {}
    for name, grid in methods.items():
        m = _method(name)
        results[name] = sweep(
            m.fit_eval_fn,
            data,
            grid or m.default_grid,
            n_states=n_states,
            n_classes=n_classes,
            folds=folds,
            seeds=seeds,
            path=m.path,
            options=options.get(name),
            mesh=mesh,
            name=name,
            prepare=m.prepare,
            dataset_batch_size=dataset_batch_size,
            progress=progress,
        )
    return concat_tables([r.table for r in results.values()]), results


def sweep_nb(
    data,
    grid: Mapping[str, Sequence] | None = None,
    *,
    n_states,
    n_classes=None,
    folds=None,
    seeds=(0,),
    var_smoothing=1e-9,
    mesh=None,
    dataset_batch_size="auto",
    progress: bool = False,
) -> SweepResult:
    """NB over data sets × ``grid`` (``alpha``, optionally ``var_smoothing``) × folds × seeds."""
    m = _method("nb")
    return sweep(
        m.fit_eval_fn,
        data,
        grid or m.default_grid,
        n_states=n_states,
        n_classes=n_classes,
        folds=folds,
        seeds=seeds,
        options={"var_smoothing": var_smoothing},
        mesh=mesh,
        name="nb",
        prepare=m.prepare,
        dataset_batch_size=dataset_batch_size,
        progress=progress,
    )
