r"""Structure beyond naive Bayes: TAN trees (Gaussian and discrete) and Gaussian semi-naive Bayes.

- Edge weights: conditional mutual information given the class, for Gaussian pairs in closed form
  (this module) and for discrete pairs via `filters.conditional_mutual_information_pairs`.
- Chow-Liu tree: maximum-weight spanning tree by Prim's algorithm (`lax.fori_loop`, jit-able, the
  root may be traced), returned as a parent array (-1 at the root).
- Gaussian TAN: X_i | X_π(i), C=c is linear-Gaussian; discrete TAN: CPTs P(X_i | X_π(i), C) with
  Lidstone smoothing. Both give per-predictor log-contributions L[r, i, j] (see CONVENTIONS) and a
  log joint.
- Gaussian semi-naive Bayes: predictors are partitioned into joined groups, each a multivariate
  Gaussian per class. A structure is a (p,) int array of group ids (-1 = predictor left out), so
  one compiled function scores any structure and `vmap` scores all candidates of a search step at
  once. The forward sequential selection and joining (FSSJ) and the wrapper condensed backward
  search loop over steps in Python.

Information in nats (the slides write log2; rankings and trees are unchanged).

References:
  Friedman, Geiger & Goldszmidt (1997), Machine Learning 29 131-163 (TAN; Chow-Liu on
  I(X_i; X_j | C)).
  Chow & Liu (1968), IEEE Trans. Inf. Theory 14(3) 462-467.
  Pérez, Larrañaga & Inza (2006), IJAR 43 1-25 (Gaussian TAN, Gaussian semi-naive, FSSJ,
  condensed backward).
  Pazzani (1996), "Constructive induction of Cartesian product attributes" (FSSJ).
  Larrañaga, Bielza & Moreno, slides "Bayesian classifiers with continuous predictors".
"""

from __future__ import annotations

import math
import numbers
from functools import partial
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_array_range, concrete
from .._dtypes import float_dtype
from .._matmul import einsum, matmul
from ..suffstats import state_offsets, state_segments
from .filters import _variance_floor, as_state_tuple, jit_entry

__all__ = [
    "DiscreteTANParams",
    "GaussianJointParams",
    "GaussianTANParams",
    "SemiNaiveSearchResult",
    "backward_condensed_search",
    "canonical_groups",
    "class_covariances",
    "conditional_mutual_information_gaussian",
    "discrete_tan_log_contributions",
    "discrete_tan_log_joint",
    "fit_discrete_tan",
    "fit_gaussian_joint",
    "fit_gaussian_tan",
    "forward_sequential_selection_joining",
    "gaussian_tan_log_contributions",
    "gaussian_tan_log_joint",
    "group_log_density",
    "maximum_spanning_tree",
    "seminaive_log_joint",
    "tree_weight",
]

_LOG_2PI = math.log(2.0 * math.pi)


# --------------------------------------------------------------------------------------------------
# eager input checks (NumPy, on concrete arguments only: tracers are skipped, so the functions keep
# working inside a caller's jit / vmap / grad)
# --------------------------------------------------------------------------------------------------
def _known(value) -> bool:
    """``value`` is given and holds no tracer (a list passed through a caller's jit arrives as a
    list of tracers, so the leaves are tested)."""
    return value is not None and concrete(*jax.tree_util.tree_leaves(value))


def _n_columns(x):
    """Number of columns of a 2-D array-like (tracers included), None otherwise."""
    shape = np.shape(x)
    return shape[1] if len(shape) == 2 else None


def _check_n_classes(n_classes) -> None:
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral):
        raise TypeError(f"n_classes must be an int; got {type(n_classes).__name__} {n_classes!r}")
    if n_classes < 1:
        raise ValueError(f"n_classes must be >= 1; got n_classes={n_classes}")


def _check_labels(name, y, n_classes) -> None:
    """Concrete ``y``: whole-number class codes in [0, n_classes) (one-hot encoding drops any
    other label silently)."""
    if not _known(y):
        return
    a = np.asarray(y)
    if a.dtype.kind not in "iub" and not (
        a.dtype.kind == "f" and np.isfinite(a).all() and (a == np.round(a)).all()
    ):
        raise TypeError(
            f"{name} must hold integer class codes 0..n_classes-1; got dtype {a.dtype} (encode "
            "the labels first, e.g. np.unique(labels, return_inverse=True)[1])"
        )
    if a.size and (a.min() < 0 or a.max() >= n_classes):
        raise ValueError(
            f"{name} must hold class codes in [0, n_classes={n_classes}); got values in "
            f"[{a.min()}, {a.max()}] (raise n_classes or re-encode the labels)"
        )


def _check_weight(name, weight) -> None:
    """Concrete sample weights: numeric, finite, >= 0 and not all zero."""
    if not _known(weight):
        return
    w = np.asarray(weight)
    if w.dtype.kind not in "iubf":
        raise TypeError(f"{name} must hold numeric sample weights; got dtype {w.dtype}")
    w = w.astype(np.float64)
    if not np.isfinite(w).all() or (w < 0).any():
        bad = w[~(np.isfinite(w) & (w >= 0))].ravel()[0]
        raise ValueError(
            f"{name} must be finite and >= 0 (0 drops a row); got {name} entry {float(bad)}"
        )
    if not w.sum() > 0:
        raise ValueError(
            f"{name} must have a positive sum; got all zeros (no row would be used: give at "
            "least one row a positive weight)"
        )


def _check_parent(parent, p) -> None:
    """Concrete parent array: integers in [-1, p) (-1 = root), no node its own parent, no cycle
    (the parents form a forest)."""
    if p is None or not _known(parent):
        return
    a = np.asarray(parent)
    if a.shape != (p,):
        return  # the shape error comes from the function body
    if a.dtype.kind not in "iu":
        raise TypeError(f"parent must hold integer node indices (-1 at roots); got dtype {a.dtype}")
    bad = (a < -1) | (a >= p)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"parent entries must lie in [-1, {p}) (-1 marks a root); got parent[{i}]={a[i]}"
        )
    loop = a == np.arange(p)
    if loop.any():
        i = int(np.argmax(loop))
        raise ValueError(
            f"parent[{i}]={i}: a node cannot be its own parent; use -1 to make it a root"
        )
    cycle = _parent_cycle(a)
    if cycle:
        shown = cycle + cycle[:1] if len(cycle) <= 8 else cycle[:8] + ["..."]
        path = " -> ".join(str(i) for i in shown)
        size = "" if len(cycle) <= 8 else f"; {len(cycle)} nodes"
        hint = (
            " (an unsigned dtype cannot hold the -1 of a root: use a signed integer dtype)"
            if a.dtype.kind == "u"
            else ""
        )
        raise ValueError(
            f"parent forms a cycle ({path}, following parent[i]{size}): the product of the "
            "conditionals is then not a distribution; a parent array must describe a forest "
            "(every chain of parents ends at a -1 root), e.g. one from "
            f"`maximum_spanning_tree`{hint}"
        )


def _parent_cycle(a: np.ndarray) -> list:
    """The nodes of one cycle of the parent graph (empty when every chain ends at a root).
    Pointer doubling: after k rounds ``jump[i]`` is the 2^k-th ancestor (p = past the root)."""
    a = np.asarray(a, np.int64)  # narrow or unsigned dtypes cannot hold the sentinel p
    p = a.shape[0]
    jump = np.append(np.where(a < 0, p, a), p)
    for _ in range(max(p, 1).bit_length() + 1):
        jump = jump[jump]
    stuck = np.flatnonzero(jump[:p] < p)
    if stuck.size == 0:
        return []
    node = int(jump[stuck[0]])  # at least 2^k >= p steps up: on the cycle
    cycle = [node]
    nxt = int(a[node])
    while nxt != node and len(cycle) < p:
        cycle.append(nxt)
        nxt = int(a[nxt])
    return cycle


def _check_codes(name, codes, n_states) -> None:
    """Concrete codes: integers below n_states[i] in column i; negative codes are missing (as in
    `fit_stats`)."""
    if not _known(codes):
        return
    a = np.asarray(codes)
    if a.ndim != 2 or a.size == 0:
        return  # the shape error (if any) comes from the function body
    if a.dtype.kind not in "iu":
        raise TypeError(
            f"{name} must hold integer codes in [0, n_states[i]) (negative = missing); got dtype "
            f"{a.dtype}"
        )
    states = np.asarray(as_state_tuple(n_states, a.shape[1]))
    over = a >= states[None, :]
    if over.any():
        i = int(np.flatnonzero(over.any(axis=0))[0])
        top = int(a[:, i].max())
        raise ValueError(
            f"{name}[:, {i}] holds code {top} but n_states[{i}]={states[i]}; codes must lie in "
            f"[0, n_states[i]) (negative = missing): raise n_states[{i}] to at least {top + 1}"
        )


def _check_nonnegative(name, value, fix) -> None:
    if _known(value):
        check_array_range(name, value, low=0.0, fix=fix)


def _check_query_columns(name, x, n_columns, what="the training values") -> None:
    """Static shape check (runs at trace time): ``x`` (m, n_columns)."""
    if x.ndim != 2 or x.shape[1] != n_columns:
        raise ValueError(
            f"{name} must have {n_columns} columns (as {what}); got {name} of shape {x.shape}"
        )


def _eager_check(args) -> None:
    """`jit_entry` hook of the structure and kernel functions: value checks of the concrete
    arguments by name (``n_classes``, ``y``, ``weight``, ``parent``, ``codes``, ``alpha``,
    ``var_floor``, ``ridge``) before jitting; tracers are skipped."""
    n_classes = args.get("n_classes")
    if "n_classes" in args:
        _check_n_classes(n_classes)
        _check_labels("y", args.get("y"), n_classes)
    _check_weight("weight", args.get("weight"))
    codes = args.get("codes")
    if "parent" in args:
        data = codes if codes is not None else args.get("values")
        _check_parent(args["parent"], _n_columns(data))
    if codes is not None and "n_states" in args:
        _check_codes("codes", codes, args["n_states"])
    _check_nonnegative("alpha", args.get("alpha"), "alpha is the Lidstone pseudo-count (>= 0)")
    _check_nonnegative("var_floor", args.get("var_floor"), "var_floor is a variance (>= 0)")
    _check_nonnegative("ridge", args.get("ridge"), "ridge is a relative ridge (>= 0)")


def _weights_and_onehot(y, n, n_classes, weight, dtype):
    y = jnp.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},); got {y.shape}")
    w = jnp.ones((n,), dtype) if weight is None else jnp.asarray(weight, dtype)
    if w.shape != (n,):
        raise ValueError(f"weight must have shape ({n},); got {w.shape}")
    return jax.nn.one_hot(y, n_classes, dtype=dtype) * w[:, None]  # (n, c)


def _log_prior(wy):
    class_w = jnp.sum(wy, axis=0)
    return jnp.log(class_w) - jnp.log(jnp.sum(class_w))


# --------------------------------------------------------------------------------------------------
# Gaussian class moments and conditional MI
# --------------------------------------------------------------------------------------------------
def _class_deviations(values, y, n_classes, weight):
    """(x, wy, N_c, mean (c, p), dev (n, c, p)) with exact zeros where they belong.

    Each class is centred first on one of its own rows (the first with positive weight): a column
    that is constant within the class then has deviations exactly 0 (not the ~1e-17 rounding of
    ``x − Σx/N`` that turned into correlations of ±1 and noise slopes), and the second centring is
    on a small offset. Rows outside the class, or of zero weight, get deviation 0, so a zero-weight
    row equals a removed row even where its value is infinite (no 0 · inf)."""
    values = jnp.asarray(values)
    if values.ndim != 2:
        raise ValueError(f"values must be 2-D (n, p); got shape {values.shape}")
    dtype = jnp.result_type(values.dtype, float_dtype())
    x = values.astype(dtype)
    wy = _weights_and_onehot(y, x.shape[0], n_classes, weight, dtype)
    nc = jnp.sum(wy, axis=0)
    safe = jnp.where(nc > 0, nc, 1.0)
    # membership by label (a zero-weight row stays in the graph: its gradient keeps the x - mu
    # term); its value only enters multiplied by its weight, so a non-finite value there is
    # replaced (no 0 * inf)
    member = jax.nn.one_hot(jnp.asarray(y), n_classes, dtype=dtype) > 0  # (n, c)
    used = (jnp.sum(wy, axis=1) > 0)[:, None]
    x = jnp.where(used | jnp.isfinite(x), x, 0.0)
    first = jnp.argmax(wy > 0, axis=0)  # (c,) first row of positive weight (0 when none)
    ref = jnp.where((nc > 0)[:, None], x[first], 0.0)  # (c, p)
    d0 = jnp.where(member[:, :, None], x[:, None, :] - ref[None], 0.0)  # (n, c, p)
    off = einsum("nc,ncp->cp", wy, d0) / safe[:, None]
    dev = jnp.where(member[:, :, None], d0 - off[None], 0.0)
    return x, wy, nc, ref + off, dev


@jit_entry("n_classes", check=_eager_check)
def class_covariances(values, y, n_classes: int, weight=None):
    r"""Per-class weighted mean and MLE covariance of continuous predictors.

    μ_c = Σ_n w_n 1[y_n=c] x_n / N_c,  Σ_c = Σ_n w_n 1[y_n=c] (x_n − μ_c)(x_n − μ_c)ᵀ / N_c.

    A predictor constant within a class has exactly zero variance and covariances there; rows of
    zero weight do not enter (even with infinite values).

    Returns:
      (class_weight (c,), mean (c, p), cov (c, p, p)). NaN values are not supported.
    """
    _, wy, nc, mean, dev = _class_deviations(values, y, n_classes, weight)
    safe = jnp.where(nc > 0, nc, 1.0)
    cov = einsum("nc,nci,ncj->cij", wy, dev, dev) / safe[:, None, None]
    return nc, mean, cov


def _constant_columns(x, wy):
    """(p,) bool: the predictor takes one value over the rows of positive weight (an exact test;
    a variance computed from the rows carries rounding)."""
    used = (jnp.sum(wy, axis=1) > 0)[:, None]
    hi = jnp.max(jnp.where(used, x, -jnp.inf), axis=0)
    lo = jnp.min(jnp.where(used, x, jnp.inf), axis=0)
    return hi <= lo


def _safe_sqrt(v):
    """sqrt with a finite gradient at 0 (0 there): the double-where idiom."""
    pos = v > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, v, 1.0)), 0.0)


@jit_entry("n_classes", check=_eager_check)
def conditional_mutual_information_gaussian(values, y, n_classes: int, weight=None) -> jax.Array:
    r"""I(X_i, X_j | C) for all pairs of class-conditionally Gaussian predictors (slides, Gaussian
    TAN).

    I(X_i, X_j | C) = −½ Σ_c p(c) log(1 − ρ_c²(X_i, X_j)),

    ρ_c the within-class (weighted MLE) correlation, p(c) the class proportions. 1 − ρ² is floored
    at the smallest normal float so a perfectly correlated pair scores a large finite value; a
    constant predictor within a class gets ρ = 0 there. The diagonal is set to 0 (it is +∞ by the
    formula, and no tree uses self-loops).

    Returns:
      (p, p) symmetric, nats.
    """
    nc, _, cov = class_covariances(values, y, n_classes, weight)
    sd = _safe_sqrt(jnp.diagonal(cov, axis1=1, axis2=2))  # (c, p)
    den = sd[:, :, None] * sd[:, None, :]
    rho = jnp.where(den > 0, cov / jnp.where(den > 0, den, 1.0), 0.0)
    one_minus = jnp.maximum(1.0 - rho * rho, jnp.finfo(rho.dtype).tiny)
    pc = nc / jnp.sum(nc)
    cmi = -0.5 * einsum("c,cij->ij", pc, jnp.log(one_minus))
    p = cmi.shape[0]
    return cmi * (1.0 - jnp.eye(p, dtype=cmi.dtype))


# --------------------------------------------------------------------------------------------------
# Chow-Liu tree
# --------------------------------------------------------------------------------------------------
def _tree_check(args) -> None:
    """`jit_entry` hook of `maximum_spanning_tree`: a concrete ``root`` is an int node index in
    [0, p)."""
    root = args.get("root")
    if not _known(root):
        return
    r = np.asarray(root)
    if r.ndim != 0 or r.dtype.kind not in "iu":
        raise TypeError(f"root must be an int node index; got {type(root).__name__} {root!r}")
    shape = np.shape(args.get("weights"))
    if len(shape) == 2 and shape[0] == shape[1] and not 0 <= int(r) < shape[0]:
        raise ValueError(
            f"root must be a node index in [0, p={shape[0]}) (a row of weights); got root={root!r}"
        )


@jit_entry(check=_tree_check)
def maximum_spanning_tree(weights, root=0) -> jax.Array:
    r"""Maximum-weight spanning tree by Prim's algorithm, as a parent array rooted at `root`.

    Grows the tree from `root`; at each of the p − 1 steps adds the outside node with the heaviest
    edge to the tree (ties: lowest node index, then the earliest tree node that reached that
    weight). With weights I(X_i; X_j | C) this is the Chow-Liu / TAN tree (Friedman et al. 1997,
    Theorem 2). O(p²); jit-able; `root` may be a traced int.

    Args:
      weights: (p, p) symmetric edge weights (diagonal ignored; -inf forbids an edge unless no other
        edge can connect a node); integer or bool weights are cast to the default float dtype.
      root: root node in [0, p) (checked when concrete).

    Returns:
      int32 (p,) parent array: parent[root] = -1, parent[i] = the tree neighbour of i toward the
      root.
    """
    w = jnp.asarray(weights)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be square (p, p); got shape {w.shape}")
    if not jnp.issubdtype(w.dtype, jnp.floating):
        w = w.astype(float_dtype())  # finfo below needs a float; -inf needs one too
    p = w.shape[0]
    root = jnp.asarray(root, jnp.int32)
    lowest = jnp.finfo(w.dtype).min  # outside nodes with only -inf edges still beat tree nodes

    def body(_, state):
        in_tree, best, best_par, parent = state
        v = jnp.argmax(jnp.where(in_tree, -jnp.inf, jnp.maximum(best, lowest)))
        parent = parent.at[v].set(best_par[v])
        in_tree = in_tree.at[v].set(True)
        better = (w[v] > best) & ~in_tree
        best = jnp.where(better, w[v], best)
        best_par = jnp.where(better, v.astype(jnp.int32), best_par)
        return in_tree, best, best_par, parent

    init = (
        jnp.zeros((p,), bool).at[root].set(True),
        w[root],
        jnp.full((p,), root, jnp.int32),
        jnp.full((p,), -1, jnp.int32),
    )
    return jax.lax.fori_loop(0, p - 1, body, init)[3]


@jit_entry()
def tree_weight(parent, weights) -> jax.Array:
    """Total weight Σ_{i: parent[i] >= 0} weights[i, parent[i]] of a tree given as a parent
    array."""
    parent = jnp.asarray(parent)
    w = jnp.asarray(weights)
    has = parent >= 0
    edge = w[jnp.arange(parent.shape[0]), jnp.clip(parent, 0)]
    return jnp.sum(jnp.where(has, edge, 0.0))


# --------------------------------------------------------------------------------------------------
# Gaussian TAN
# --------------------------------------------------------------------------------------------------
class GaussianTANParams(eqx.Module):
    r"""Linear-Gaussian TAN: X_i | X_π(i) = u, C = c ~ N(intercept[c, i] + slope[c, i] u, var[c,
    i]).

    Roots (parent −1) have slope 0. `parent` is an int32 (p,) array, not static, so one compiled
    log-joint serves every tree.
    """

    log_prior: jax.Array  # (c,)
    intercept: jax.Array  # (c, p)
    slope: jax.Array  # (c, p)
    var: jax.Array  # (c, p)
    parent: jax.Array  # (p,) int32


@jit_entry("n_classes", check=_eager_check)
def fit_gaussian_tan(
    values, y, parent, n_classes: int, weight=None, var_floor: float = 1e-9
) -> GaussianTANParams:
    r"""Per-class weighted least squares of every predictor on its tree parent (ML for the TAN).

    With Σ_c, μ_c the class MLE covariance and mean (`class_covariances`), for child i and parent k:
    slope b = Σ_c[i, k] / Σ_c[k, k], intercept a = μ_c[i] − b μ_c[k], residual variance v = Σ_c[i,
    i] − b Σ_c[i, k] (the MLE of the regression; divide by N_c), computed as the weighted mean
    square of the residuals (the same value without the cancellation of the difference), floored
    at `var_floor`; a predictor constant over the training rows gets v = 1 in every class (as in
    `NaiveBayes`). Roots: b = 0, v = Σ_c[i, i]. A parent with zero within-class variance (a
    constant within the class: exactly zero, see `class_covariances`) gets b = 0. Pérez, Larrañaga
    & Inza (2006), Sec. 4 (conditional Gaussian networks).

    Args:
      values: float (n, p); y: int (n,); parent: int (p,) from `maximum_spanning_tree`
        (any forest: -1 at roots; a cycle is refused with a ValueError).
      n_classes: static c; weight: optional (n,); var_floor: absolute floor on the variances,
        a scalar or one per predictor (p,).
    """
    x, wy, nc, mean, dev = _class_deviations(values, y, n_classes, weight)
    parent = jnp.asarray(parent, jnp.int32)
    p = mean.shape[1]
    var_floor = _variance_floor(var_floor, p, mean.dtype)
    if parent.shape != (p,):
        raise ValueError(f"parent must have shape ({p},); got {parent.shape}")
    safe = jnp.where(nc > 0, nc, 1.0)[:, None]
    has = (parent >= 0)[None, :]
    par = jnp.clip(parent, 0)
    dev_par = dev[:, :, par]  # (n, c, p): each predictor's parent deviation
    cov_ip = einsum("nc,ncp->cp", wy, dev * dev_par) / safe  # (c, p)
    var_p = einsum("nc,ncp->cp", wy, dev_par * dev_par) / safe
    ok = has & (var_p > 0)
    slope = jnp.where(ok, cov_ip / jnp.where(ok, var_p, 1.0), 0.0)
    intercept = mean - slope * mean[:, par]
    # the residual variance from the residuals themselves: Σ_ii − b Σ_ik cancels when the child
    # is nearly collinear with its parent (all digits in float32)
    resid = dev - slope[None] * dev_par
    var = jnp.maximum(einsum("nc,ncp->cp", wy, resid * resid) / safe, var_floor[None, :])
    # a predictor constant over the training rows: unit variance in every class (as NaiveBayes),
    # so its term is the same for every class whatever the query value
    var = jnp.where(_constant_columns(x, wy)[None, :], 1.0, var)
    return GaussianTANParams(
        log_prior=jnp.log(nc) - jnp.log(jnp.sum(nc)),
        intercept=intercept,
        slope=slope,
        var=var,
        parent=parent,
    )


@jit_entry()
def gaussian_tan_log_contributions(params: GaussianTANParams, values) -> jax.Array:
    r"""L[r, i, j] = log N(x_ri; intercept[j,i] + slope[j,i] x_r,π(i), var[j,i]), shape (n, p,
    c)."""
    x = jnp.asarray(values)
    _check_query_columns("values", x, params.intercept.shape[1])
    par = jnp.clip(params.parent, 0)
    loc = params.intercept[None, :, :] + params.slope[None, :, :] * x[:, par][:, None, :]  # (n,c,p)
    var = params.var[None, :, :]
    resid = x[:, None, :] - loc
    log_pdf = -0.5 * (_LOG_2PI + jnp.log(var) + resid * resid / var)
    return jnp.transpose(log_pdf, (0, 2, 1))


@jit_entry()
def gaussian_tan_log_joint(params: GaussianTANParams, values) -> jax.Array:
    r"""log P(C=j) + Σ_i log f(x_i | x_π(i), j), shape (n, c); log_softmax gives the posterior."""
    return params.log_prior[None, :] + jnp.sum(
        gaussian_tan_log_contributions(params, values), axis=1
    )


# --------------------------------------------------------------------------------------------------
# discrete TAN
# --------------------------------------------------------------------------------------------------
class DiscreteTANParams(eqx.Module):
    r"""Discrete TAN: log P(X_i = a | X_π(i) = b, C = c) in ``log_cpt[offsets[i] + a, b, c]``.

    Child states are stacked as in `jaxnb.params.NBParams.cpt` (rows ``offsets[i] :
    offsets[i] + n_states[i]`` for predictor i, `jaxnb.suffstats.state_offsets`); the parent
    state b runs over M = max(n_states) columns (the parent is data, not a static shape), and
    roots use b = 0. Parent states b >= n_states[π(i)] never occur (their column is uniform).
    ``log_marginal[offsets[i] + a, c]`` = log P(X_i = a | C = c), used when the parent value is
    missing. Storage is (K, M, c) with K = Σ_i n_states[i]: one 2000-state column among 29
    three-state ones takes 2087 x 2000 x 2 entries, where a (q, M, M, c) table padded to M
    child states took 30 x 2000 x 2000 x 2 (1.9 GB in float64).
    """

    log_prior: jax.Array  # (c,)
    log_cpt: jax.Array  # (K, M, c)
    log_marginal: jax.Array  # (K, c)
    parent: jax.Array  # (q,) int32
    n_states: tuple[int, ...] = eqx.field(static=True)


def _lidstone(counts, seg, alpha, n_valid):
    """(N + α) / (Σ_a N + α M_i) over each predictor's rows of axis 0 (``seg`` (K,) static:
    the predictor of each row), uniform 1 / M_i where the denominator vanishes (α = 0)."""
    counts = counts + alpha
    den = jax.ops.segment_sum(counts, seg, num_segments=len(n_valid))[seg]
    prob = jnp.where(den > 0, counts / jnp.where(den > 0, den, 1.0), 1.0 / n_valid[seg])
    return jnp.log(prob)


# Above this many (q, M, M, c) entries the counts are scattered row by row (O(n q) work) instead
# of one contraction of one-hot codes (O(n q M^2 c) work and a (q, M, M, c) temporary: 23 s for
# 1000 rows and one 2000-state column among 29 predictors); below it the contraction is as fast
# and is kept.
_DENSE_CPT_MAX = 1 << 22


def _tan_counts_dense(onehot, par_oh, wy):
    """N[i, a, b, c] (q, M, M, c) from one-hot codes (n, q, M), parent one-hots (n, q, M) and
    wy (n, c)."""
    return einsum("nia,nib,nc->iabc", onehot, par_oh, wy)


def _tan_counts_scatter(codes, par_codes, wy, offsets, n_rows: int, m: int):
    """N (K, M, c) scattered: row n adds wy[n] at [offsets[i] + codes[n, i], par_codes[n, i]]
    where both codes are >= 0 (a root's parent code is 0); K = ``n_rows``."""
    ok = (codes >= 0) & (par_codes >= 0)
    vals = jnp.where(ok[:, :, None], wy[:, None, :], 0.0)  # (n, q, c)
    rows = jnp.asarray(offsets)[None, :] + jnp.maximum(codes, 0)
    counts = jnp.zeros((n_rows, m, wy.shape[1]), wy.dtype)
    return counts.at[rows, jnp.maximum(par_codes, 0)].add(vals)


@jit_entry("n_states", "n_classes", check=_eager_check)
def fit_discrete_tan(
    codes, y, parent, n_states, n_classes: int, weight=None, alpha: float = 1.0
) -> DiscreteTANParams:
    r"""Lidstone-smoothed CPTs of a discrete TAN (Friedman et al. 1997).

    P(X_i = a | X_π(i) = b, C = c) = (N_iabc + α) / (N_ibc + α M_i), where N counts (weighted) rows
    with both X_i and its parent observed; roots use P(X_i = a | C = c) = (N_iac + α)/(N_ic + α
    M_i). α = 1 is Laplace; with α = 0 an unseen (b, c) configuration gets the uniform distribution.
    All CPTs come from one contraction `einsum('nia,nib,nc->iabc')`, or, above 2^22 entries of
    that (q, M, M, c) contraction (a column with many states), from a scatter-add of the rows
    into the (K, M, c) layout of `DiscreteTANParams` (the same counts).

    Args:
      codes: int (n, q), negative = missing; y: int (n,); parent: int (q,), a forest with
        -1 at roots (a cycle is refused with a ValueError).
      n_states: static int or tuple; n_classes: static c; weight: optional (n,); alpha: >= 0.
    """
    codes = jnp.asarray(codes)
    if codes.ndim != 2:
        raise ValueError(f"codes must be 2-D (n, q); got shape {codes.shape}")
    n, q = codes.shape
    states = as_state_tuple(n_states, q)
    parent = jnp.asarray(parent, jnp.int32)
    if parent.shape != (q,):
        raise ValueError(f"parent must have shape ({q},); got {parent.shape}")
    m = max(states)
    dtype = float_dtype()
    offsets = state_offsets(states)
    seg = state_segments(states)  # (K,) predictor of each flat row
    local = np.arange(len(seg)) - offsets[seg]  # (K,) child state of each flat row
    wy = _weights_and_onehot(y, n, n_classes, weight, dtype)
    onehot = jax.nn.one_hot(codes, m, dtype=dtype)  # (n, q, M); missing -> zeros
    has = parent >= 0
    if q * m * m * n_classes > _DENSE_CPT_MAX:
        icodes = codes.astype(jnp.int32)
        par_codes = jnp.where(has[None, :], icodes[:, jnp.clip(parent, 0)], 0)
        counts = _tan_counts_scatter(icodes, par_codes, wy, offsets, len(seg), m)
    else:
        par_oh = jnp.where(
            has[None, :, None],
            onehot[:, jnp.clip(parent, 0), :],
            jax.nn.one_hot(0, m, dtype=dtype)[None, None, :],
        )
        counts = _tan_counts_dense(onehot, par_oh, wy)[seg, local]  # (K, M, c)
    marg = einsum("nia,nc->iac", onehot, wy)[seg, local]  # (K, c)
    n_valid = jnp.asarray(states, dtype)
    return DiscreteTANParams(
        log_prior=_log_prior(wy),
        log_cpt=_lidstone(counts, seg, alpha, n_valid[:, None, None]),
        log_marginal=_lidstone(marg, seg, alpha, n_valid[:, None]),
        parent=parent,
        n_states=states,
    )


def _discrete_query_check(args) -> None:
    """`jit_entry` hook of the discrete TAN scorers: concrete query codes below
    ``params.n_states``."""
    params = args.get("params")
    codes = args.get("codes")
    if isinstance(params, DiscreteTANParams) and _n_columns(codes) == len(params.n_states):
        _check_codes("codes", codes, params.n_states)


@jit_entry(check=_discrete_query_check)
def discrete_tan_log_contributions(params: DiscreteTANParams, codes) -> jax.Array:
    r"""L[r, i, j] = log P(x_ri | x_r,π(i), j), shape (n, q, c).

    A missing child (-1) contributes 0 (its term is dropped). A missing parent falls back to log
    P(x_ri | j) — an approximation (exact marginalisation would sum over the parent given the rest
    of the tree); impute upstream if that matters.
    """
    codes = jnp.asarray(codes)
    _check_query_columns("codes", codes, len(params.n_states), "the training codes")
    k = sum(params.n_states)
    if params.log_cpt.ndim != 3 or params.log_cpt.shape[0] != k:
        raise ValueError(
            f"params.log_cpt must have shape (K, M, c) with K = sum(n_states) = {k} (child "
            f"states stacked, `DiscreteTANParams`); got {params.log_cpt.shape}, the (q, M, M, c) "
            "layout of an older jaxnb? Refit the model"
        )
    states = jnp.asarray(params.n_states)
    has = params.parent >= 0
    # a code past its predictor's states (checked eagerly; possible only in a caller's jit)
    # scores -inf, as a state of probability 0, not the next predictor's row
    out = codes >= states[None, :]
    rows = jnp.asarray(state_offsets(params.n_states))[None, :] + jnp.clip(
        codes, 0, states[None, :] - 1
    )
    b_raw = jnp.where(has[None, :], codes[:, jnp.clip(params.parent, 0)], 0)
    b = jnp.clip(b_raw, 0, params.log_cpt.shape[1] - 1)
    cond = params.log_cpt[rows, b]  # (n, q, c)
    marg = params.log_marginal[rows]
    term = jnp.where((b_raw >= 0)[:, :, None], cond, marg)
    term = jnp.where(out[:, :, None], -jnp.inf, term)
    return jnp.where((codes >= 0)[:, :, None], term, 0.0)


@jit_entry(check=_discrete_query_check)
def discrete_tan_log_joint(params: DiscreteTANParams, codes) -> jax.Array:
    r"""log P(C=j) + Σ_i log P(x_i | x_π(i), j), shape (n, c)."""
    return params.log_prior[None, :] + jnp.sum(
        discrete_tan_log_contributions(params, codes), axis=1
    )


# --------------------------------------------------------------------------------------------------
# Gaussian semi-naive Bayes
# --------------------------------------------------------------------------------------------------
class GaussianJointParams(eqx.Module):
    """Per-class mean (c, p) and full covariance (c, p, p) of all continuous predictors."""

    log_prior: jax.Array
    mean: jax.Array
    cov: jax.Array


@jit_entry("n_classes", check=_eager_check)
def fit_gaussian_joint(
    values, y, n_classes: int, weight=None, ridge: float = 1e-9
) -> GaussianJointParams:
    r"""Class-conditional MLE mean and covariance, Σ_c + ρ · diag(Σ_c) + diag(f).

    The relative ridge ρ = max(`ridge`, 16 eps) (16 eps: the smallest that keeps a float32
    Cholesky of an exactly collinear pair positive) keeps group covariances positive definite when
    a group is (nearly) collinear; 1e-9 is numerically the MLE in float64. The floor f_j = ρ ×
    (pooled variance of predictor j), like `NaiveBayes`'s variance floor, keeps a predictor that
    is constant within a class at a finite, scale-relative density; a predictor constant over all
    training rows gets f_j = 1 (unit variance in every class, as `NaiveBayes` gives it), so it
    scores every class alike. Every group structure reads its blocks from these parameters, so a
    structure search fits once.
    """
    x, wy, nc, mean, dev = _class_deviations(values, y, n_classes, weight)
    safe = jnp.where(nc > 0, nc, 1.0)
    cov = einsum("nc,nci,ncj->cij", wy, dev, dev) / safe[:, None, None]
    p = mean.shape[1]
    eye = jnp.eye(p, dtype=cov.dtype)
    diag = jnp.diagonal(cov, axis1=1, axis2=2)
    rho = jnp.maximum(jnp.asarray(ridge, cov.dtype), 16 * jnp.finfo(cov.dtype).eps)
    # pooled variance: within-class part plus the spread of the class means
    total = jnp.maximum(jnp.sum(nc), jnp.finfo(cov.dtype).tiny)
    grand = jnp.sum(nc[:, None] * mean, 0) / total
    pooled = jnp.sum(nc[:, None] * (diag + (mean - grand[None, :]) ** 2), 0) / total
    floor = jnp.where(_constant_columns(x, wy), 1.0, rho * pooled)
    cov = cov + (rho * diag + floor[None, :])[:, :, None] * eye[None]
    return GaussianJointParams(log_prior=jnp.log(nc) - jnp.log(jnp.sum(nc)), mean=mean, cov=cov)


def _block_cov(cov, same, keep):
    """``cov`` masked to the blocks where ``same`` (p, p) holds, with a unit variance in every
    dimension outside ``keep`` (p,) so that one Cholesky of the p × p result serves any
    structure (a left-out dimension, with residual 0, adds 0 to the log density)."""
    eye = jnp.eye(cov.shape[-1], dtype=cov.dtype)
    return jnp.where(same, cov, 0.0) + jnp.where(keep, 0.0, 1.0)[:, None] * eye


def _log_density_from_factor(chol, z, n_inc):
    """log N of the rows whose whitened residuals are the columns of ``z = L^{-1} d`` (p, n),
    with L L^T the `_block_cov` matrix of ``n_inc`` kept dimensions (the others add 0), (n,)."""
    log_det = 2.0 * jnp.sum(jnp.log(jnp.diagonal(chol)))
    return -0.5 * (jnp.sum(z * z, axis=0) + log_det + n_inc * _LOG_2PI)


@jit_entry()
def group_log_density(params: GaussianJointParams, groups, values) -> jax.Array:
    r"""Σ_g log N(x_g; μ_{c,g}, Σ_{c,gg}) over the joined groups of a structure, shape (n, c).

    `groups` is an int (p,) array: predictors with the same id ≥ 0 form one multivariate Gaussian
    (slides, "Gaussian semi-naive Bayes"; Pérez et al. 2006); id −1 leaves a predictor out. Computed
    as one p-dimensional Gaussian whose covariance is Σ_c masked to the block-diagonal pattern of
    the groups, with left-out predictors replaced by a unit-variance, zero-residual dimension (adds
    0), so one Cholesky per class serves any structure and the function jit-compiles with `groups`
    traced. All singletons = Gaussian NB; one group = QDA.
    """
    groups = jnp.asarray(groups)
    x = jnp.asarray(values)
    p = params.mean.shape[1]
    if groups.shape != (p,):
        raise ValueError(f"groups must have shape ({p},); got {groups.shape}")
    _check_query_columns("values", x, p)
    inc = groups >= 0
    same = (groups[:, None] == groups[None, :]) & inc[:, None] & inc[None, :]
    n_inc = jnp.sum(inc)

    def one_class(mean, cov):
        chol = jnp.linalg.cholesky(_block_cov(cov, same, inc))
        d = jnp.where(inc[None, :], x - mean[None, :], 0.0)  # (n, p)
        z = jax.scipy.linalg.solve_triangular(chol, d.T, lower=True)  # (p, n)
        return _log_density_from_factor(chol, z, n_inc)

    return jax.vmap(one_class, out_axes=1)(params.mean, params.cov)


@jit_entry()
def seminaive_log_joint(params: GaussianJointParams, groups, values) -> jax.Array:
    r"""log P(C=j) + Σ_g log N(x_g | j) for a group structure, shape (n, c)."""
    return params.log_prior[None, :] + group_log_density(params, groups, values)


def canonical_groups(groups) -> np.ndarray:
    """Relabels group ids to 0, 1, ... in order of first appearance; -1 stays -1 (NumPy)."""
    groups = np.asarray(groups)
    out = np.full(groups.shape, -1, dtype=np.int32)
    mapping: dict[int, int] = {}
    for i, g in enumerate(groups.tolist()):
        if g >= 0:
            out[i] = mapping.setdefault(g, len(mapping))
    return out


class SemiNaiveSearchResult(NamedTuple):
    """Result of a semi-naive structure search.

    Attributes:
      groups: int32 (p,) canonical group ids, -1 = left out.
      error: validation error of `groups`.
      history: list of (groups, error, log_loss) after each accepted step (first entry: the start).
      n_evaluated: number of candidate structures scored.
    """

    groups: np.ndarray
    error: float
    history: list
    n_evaluated: int


@jax.jit
def _score_structures(params, groups, x, y, w, onehot):
    """Validation error and log loss of whole structures, groups (s, p) -> (s,), (s,), each
    scored from scratch, one at a time (`lax.map`). The searches score their start with it and
    every step's moves with the incremental `_join_scores` / `_removal_scores`; tests check those
    against it.

    Module-level so every search and every fit shares its compilations; a jit of a per-call
    closure recompiled on every fit (~0.5-0.8 s each)."""

    def score(g):
        log_joint = seminaive_log_joint(params, g, x)
        # a structure whose scores are NaN (a Cholesky that failed) is never chosen: its argmax
        # would read "class 0" for every row. A -inf column (a class without training weight,
        # prior log 0) is a valid score and must not disqualify every structure
        err, loss = _move_scores(jax.nn.log_softmax(log_joint, axis=1)[:, :, None], y, w, onehot)
        return err[0], loss[0]

    return jax.lax.map(score, groups)


def _move_scores(log_post, y, w, onehot):
    """Validation error and log loss of a batch of moves, log_post (n, c, m) -> (m,), (m,); a
    move with a NaN score (a failed factorization) gets +inf, as in `_score_structures`."""
    wrong = (jnp.argmax(log_post, axis=1) != y[:, None]).astype(log_post.dtype)
    true_lp = jnp.sum(jnp.where(onehot[:, :, None] > 0, log_post, 0.0), axis=1)  # (n, m)
    err = jnp.sum(w[:, None] * wrong, axis=0)
    loss = -jnp.sum(w[:, None] * true_lp, axis=0)
    bad = jnp.any(jnp.isnan(log_post), axis=(0, 1))
    return jnp.where(bad, jnp.inf, err), jnp.where(bad, jnp.inf, loss)


_SCORE_BYTES = 1 << 28  # memory budget of one vmapped batch of join targets (256 MiB)


@partial(jax.jit, static_argnames=("batch_size",))
def _join_scores(params, base, members, x, y, w, onehot, batch_size=1):
    r"""Scores of every one-predictor join from a structure, err and loss of shape (t, p).

    ``base`` (n, c) is the structure's `seminaive_log_joint` on ``x``, computed by the caller in
    its own program. Inside this one it would deadlock: a triangular solve for ``base`` and the
    targets' solves do not depend on each other, so XLA:CPU may run them at once, and two batched
    LAPACK calls in flight can each wait for thread-pool workers that the other holds (FSSJ fits
    hung on 2 cores with two triangular solves in flight; with all targets in one batch
    `lax.map` has no loop to put the target solves after ``base``). This program holds one
    Cholesky and one solve.

    Row k of ``members`` (t, m) lists the predictors of a target group, padded with -1 (a row of
    -1 only is a new singleton). Entry [k, i] scores the structure with predictor i
    moved into that group. Only that group's density changes, by the conditional log N(x_i | x_g)
    of the joined Gaussian: with L L^T = Σ_gg, b = L^{-1} Σ_gi, z = L^{-1} (x_g − μ_g) it has mean
    μ_i + b·z and variance Σ_ii − |b|^2 (the last row of the joined block's Cholesky factor). One
    factorization of the m × m block per target and class serves all p predictors, O(t c (m^3 +
    m^2 (p + n) + n p m)) in all, where scoring each joined structure from scratch costs
    O(t p c (p^3 + n p^2)); m is the largest target group (padded to a power of two by the
    caller), so the many small groups of a forward search cost little however large p is.
    Entries of predictors already in a group are meaningless. Targets go ``batch_size`` at a time
    (`lax.map` of a vmap), so memory stays O(batch_size n c p)."""
    dev = x[:, None, :] - params.mean[None]  # (n, c, p)
    eye = jnp.eye(members.shape[1], dtype=params.cov.dtype)

    def one_target(row):
        valid = row >= 0
        ix = jnp.where(valid, row, 0)

        def one_class(cov, d):
            # the target's block, gathered; padding dimensions get unit variance and zero
            # residual and cross-covariance, so they add nothing to b or z
            both = valid[:, None] & valid[None, :]
            chol = jnp.linalg.cholesky(jnp.where(both, cov[ix][:, ix], eye))
            # b and z in one triangular solve (two independent LAPACK calls in one program can
            # deadlock XLA's CPU thread pool, see above)
            rhs = jnp.concatenate(
                [jnp.where(valid[:, None], cov[ix], 0.0), jnp.where(valid[None], d[:, ix], 0.0).T],
                1,
            )
            sol = jax.scipy.linalg.solve_triangular(chol, rhs, lower=True)  # (m, p + n)
            b, z = sol[:, : cov.shape[0]], sol[:, cov.shape[0] :]
            resid = d - matmul(z.T, b)  # (n, p)
            var = jnp.diagonal(cov) - jnp.sum(b * b, axis=0)  # (p,)
            return -0.5 * (_LOG_2PI + jnp.log(var)[None] + resid * resid / var[None])

        delta = jax.vmap(one_class, in_axes=(0, 1), out_axes=1)(params.cov, dev)  # (n, c, p)
        return _move_scores(jax.nn.log_softmax(base[:, :, None] + delta, axis=1), y, w, onehot)

    return jax.lax.map(one_target, members, batch_size=batch_size)


@jax.jit
def _removal_scores(params, groups, x, y, w, onehot):
    r"""Scores of every one-predictor removal from a single joint group, err and loss (p,).

    ``groups`` holds one group (id ≥ 0) and left-out predictors (−1). Removing i divides the
    group's density by N(x_i | x_rest), whose variance is 1/Λ_ii and whose residual is
    (Λ(x − μ))_i / Λ_ii with Λ the inverse of the group's covariance: one factorization per class
    serves the group's own density and every removal, O(c (p^3 + n p^2)) where scoring each
    reduced group from scratch costs p times that. Entries of left-out predictors are
    meaningless. The program holds one Cholesky and one triangular solve, in sequence."""
    inc = groups >= 0
    p = params.mean.shape[1]
    eye = jnp.eye(p, dtype=params.cov.dtype)
    n_inc = jnp.sum(inc)

    def one_class(mean, cov):
        chol = jnp.linalg.cholesky(_block_cov(cov, inc[:, None] & inc[None, :], inc))
        d = jnp.where(inc[None], x - mean[None], 0.0)  # (n, p)
        # L^{-1} and z = L^{-1} d in one solve (see `_join_scores`)
        sol = jax.scipy.linalg.solve_triangular(chol, jnp.concatenate([eye, d.T], 1), lower=True)
        linv, z = sol[:, :p], sol[:, p:]
        whole = _log_density_from_factor(chol, z, n_inc)  # (n,)
        u = matmul(z.T, linv)  # Λ d, (n, p)
        lam = jnp.sum(linv * linv, axis=0)  # diag Λ = diag L^{-T} L^{-1}
        cond = -0.5 * (_LOG_2PI - jnp.log(lam)[None] + u * u / lam[None])  # log N(x_i | rest)
        return whole[:, None] - cond

    joint = params.log_prior[None, :, None] + jax.vmap(one_class, out_axes=1)(
        params.mean, params.cov
    )
    return _move_scores(jax.nn.log_softmax(joint, axis=1), y, w, onehot)


@partial(jax.jit, static_argnames=("n_classes", "dtype"))
def _scorer_data(val_values, val_y, val_weight, n_classes: int, dtype):
    """The validation split as the scorers read it, in one program: values in ``dtype``, labels,
    weights normalized to sum 1, one-hot labels."""
    x = jnp.asarray(val_values, dtype)
    y = jnp.asarray(val_y)
    w = jnp.ones((x.shape[0],), dtype) if val_weight is None else jnp.asarray(val_weight, dtype)
    w = w / jnp.sum(w)
    return x, y, w, jax.nn.one_hot(y, n_classes, dtype=dtype)


def _make_scorer(params, val_values, val_y, n_classes, val_weight):
    """Validation scorers of one search: ``score(groups (s, p))`` from scratch, and the
    incremental ``score.joins(groups, targets)`` -> (t, p) and ``score.removals(groups)`` -> (p,);
    ``score.tie`` is the error difference below which two errors are equal."""
    dtype = params.mean.dtype
    data = _scorer_data(val_values, val_y, val_weight, n_classes, dtype)
    x, _, w, _ = data
    # targets per vmapped batch of a join step: each holds ~6 (n, c, p) arrays and c (p, p + n)
    # solves in flight; batches up to _SCORE_BYTES (small problems: the whole step in one vmap,
    # 3x faster than one target at a time at 300 rows x 10 predictors)
    n, p = x.shape
    per_target = int(n_classes) * (6 * n * p + p * (p + n)) * jnp.dtype(dtype).itemsize
    cap = 1 << max(0, (max(1, _SCORE_BYTES // max(per_target, 1))).bit_length() - 1)

    def score_many(cands: np.ndarray):
        err, loss = _score_structures(params, np.asarray(cands, np.int32), *data)
        return np.asarray(err), np.asarray(loss)

    def joins(groups: np.ndarray, targets: np.ndarray):
        t = len(targets)
        # pad to a power of two, at least 4: few compilations (the first steps share one). The
        # batch (a power of two) divides it: lax.map adds no remainder program beside its loop,
        # whose Cholesky could run concurrently with the loop's (see _join_scores)
        bucket = max(4, 1 << max(0, (t - 1).bit_length()))
        # each target's members, padded to the largest target group's power of two, at least 8
        # (groups of a forward search rarely outgrow it: one compilation per target bucket, as
        # before the padding; 1, 2 and 4 wide too cost +1.5 s of compilation on a p = 40 fit)
        rows = [np.flatnonzero(groups == g) for g in targets]
        width = max(8, 1 << max(0, (max(map(len, rows)) - 1).bit_length()))
        members = np.full((bucket, width), -1, np.int32)
        for k, row in enumerate(rows):
            members[k, : row.size] = row
        # the structure's own scores first, in their own program (see _join_scores)
        base = seminaive_log_joint(params, np.asarray(groups, np.int32), x)
        err, loss = _join_scores(params, base, members, *data, min(cap, bucket))
        return np.asarray(err)[:t], np.asarray(loss)[:t]

    def removals(groups: np.ndarray):
        err, loss = _removal_scores(params, np.asarray(groups, np.int32), *data)
        return np.asarray(err), np.asarray(loss)

    score_many.joins, score_many.removals = joins, removals

    # errors closer than this are equal: the weighted sum of the wrong rows rounds differently
    # depending on which rows are wrong (58 wrong rows gave 0.58 and 0.5800000000000001). The
    # margin stays below half the weight of one row, so a one-row improvement is never a tie
    wn = np.asarray(w, np.float64)
    pos = wn[wn > 0]
    rounding = 4.0 * max(pos.size, 1) * float(jnp.finfo(dtype).eps)
    score_many.tie = min(rounding, 0.5 * float(pos.min())) if pos.size else rounding
    return score_many


def _best_candidate(err, loss, tie):
    """Index of the lowest error (errors within ``tie`` are equal), then the lowest log loss, then
    the earliest candidate."""
    tied = err <= err.min() + tie
    key_loss = np.where(tied, loss, np.inf)
    return int(np.lexsort((np.arange(len(err)), key_loss, ~tied))[0])


def _check_split(
    train_values, train_y, val_values, val_y, n_classes, train_weight=None, val_weight=None
):
    _check_n_classes(n_classes)
    tv, vv = np.asarray(train_values), np.asarray(val_values)
    if tv.ndim != 2 or vv.ndim != 2 or tv.shape[1] != vv.shape[1]:
        raise ValueError(
            "train_values and val_values must be 2-D with the same number of columns; "
            f"got {tv.shape} and {vv.shape}"
        )
    for name, yy, xx in (("train_y", train_y, tv), ("val_y", val_y, vv)):
        yy = np.asarray(yy)
        if yy.shape != (xx.shape[0],):
            raise ValueError(f"{name} must have shape ({xx.shape[0]},); got {yy.shape}")
        _check_labels(name, yy, n_classes)
    for name, ww, xx in (("train_weight", train_weight, tv), ("val_weight", val_weight, vv)):
        if ww is not None and np.shape(ww) != (xx.shape[0],):
            raise ValueError(f"{name} must have shape ({xx.shape[0]},); got {np.shape(ww)}")
        # an all-zero val_weight made every validation error 0 / 0 = NaN
        _check_weight(name, ww)
    if not np.all(np.isfinite(tv)) or not np.all(np.isfinite(vv)):
        raise ValueError(
            "train_values and val_values must be finite (no NaN) for semi-naive search"
        )


def forward_sequential_selection_joining(
    train_values,
    train_y,
    val_values,
    val_y,
    n_classes: int,
    train_weight=None,
    val_weight=None,
    ridge: float = 1e-9,
    max_steps: int | None = None,
) -> SemiNaiveSearchResult:
    r"""Forward sequential selection and joining (FSSJ) for Gaussian semi-naive Bayes.

    Pazzani (1996); Gaussian version in Pérez, Larrañaga & Inza (2006) and the slides. Start with no
    predictor (every row gets the majority class). At each step every candidate is scored on the
    validation set (all of a step's candidates in one compiled call, incrementally: a join changes
    one group's density by a conditional Gaussian, `_join_scores`):
      - add an unused predictor as a new conditionally independent singleton group;
      - join an unused predictor to an existing group (the group becomes a larger joint Gaussian).
    The candidate with the lowest validation error wins (ties: lower validation log loss, then the
    earlier candidate); it is accepted only if its error is lower than the current one by more than
    the rounding of the weighted error sum (errors within it are ties),
    otherwise the search stops. Parameters are fitted once on the training split; each structure
    reads its blocks.

    Args:
      train_values, train_y: training split, (n, p) float and (n,) int.
      val_values, val_y: validation split used to score structures.
      n_classes: static c.
      train_weight, val_weight: optional sample weights.
      ridge: see `fit_gaussian_joint`.
      max_steps: optional cap on accepted steps.

    Returns:
      `SemiNaiveSearchResult`.
    """
    _check_split(train_values, train_y, val_values, val_y, n_classes, train_weight, val_weight)
    params = fit_gaussian_joint(train_values, train_y, n_classes, train_weight, ridge)
    score_many = _make_scorer(params, val_values, val_y, n_classes, val_weight)
    p = np.asarray(train_values).shape[1]
    groups = np.full((p,), -1, np.int32)
    err, loss = score_many(groups[None])
    current = (float(err[0]), float(loss[0]))
    history = [(groups.copy(), *current)]
    n_eval = 1
    steps = 0
    while max_steps is None or steps < max_steps:
        unused = np.flatnonzero(groups < 0)
        if unused.size == 0:
            break
        existing = np.unique(groups[groups >= 0])
        new_id = int(groups.max()) + 1 if existing.size else 0
        # candidates in the order (unused predictor, then target: a new group, then each
        # existing group), which decides exact ties; -2 is the new group (no predictor has it)
        targets = np.array([-2, *existing.tolist()], np.int32)
        err, loss = (a[:, unused].T.ravel() for a in score_many.joins(groups, targets))
        n_eval += err.size
        best = _best_candidate(err, loss, score_many.tie)
        if not err[best] < current[0] - score_many.tie:
            break
        i, k = divmod(best, targets.size)
        groups = groups.copy()
        groups[unused[i]] = new_id if k == 0 else targets[k]
        groups = canonical_groups(groups)
        current = (float(err[best]), float(loss[best]))
        history.append((groups.copy(), *current))
        steps += 1
    return SemiNaiveSearchResult(canonical_groups(groups), current[0], history, n_eval)


def backward_condensed_search(
    train_values,
    train_y,
    val_values,
    val_y,
    n_classes: int,
    train_weight=None,
    val_weight=None,
    ridge: float = 1e-9,
) -> SemiNaiveSearchResult:
    r"""Wrapper condensed backward semi-naive Bayes (Pérez et al. 2006; slides).

    All predictors start in one joint Gaussian (a single group: class-conditional full covariance,
    i.e. QDA). At each step every removal of one remaining predictor is scored on the validation set
    (in one compiled call, from one factorization per class: `_removal_scores`); the best removal
    (lowest error, ties by log loss) is applied if it lowers (beyond rounding, as in the forward
    search) the error, otherwise the search stops. The model stays one joint group throughout
    ("condensed").

    Args and returns as in `forward_sequential_selection_joining`.
    """
    _check_split(train_values, train_y, val_values, val_y, n_classes, train_weight, val_weight)
    params = fit_gaussian_joint(train_values, train_y, n_classes, train_weight, ridge)
    score_many = _make_scorer(params, val_values, val_y, n_classes, val_weight)
    p = np.asarray(train_values).shape[1]
    groups = np.zeros((p,), np.int32)
    err, loss = score_many(groups[None])
    current = (float(err[0]), float(loss[0]))
    history = [(groups.copy(), *current)]
    n_eval = 1
    while np.any(groups >= 0):
        used = np.flatnonzero(groups >= 0)
        err, loss = (a[used] for a in score_many.removals(groups))
        n_eval += used.size
        best = _best_candidate(err, loss, score_many.tie)
        if not err[best] < current[0] - score_many.tie:
            break
        groups = groups.copy()
        groups[used[best]] = -1
        current = (float(err[best]), float(loss[best]))
        history.append((groups.copy(), *current))
    return SemiNaiveSearchResult(canonical_groups(groups), current[0], history, n_eval)
