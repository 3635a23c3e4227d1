r"""L1-regularized naive-Bayes-inspired classifier (L1-NB) with a bounded LARS path.

Vidaurre, Bielza & Larrañaga (2013), "An L1-regularized naïve Bayes-inspired classifier for
discarding redundant and irrelevant predictors", IJAIT 22(4). Sections 3–5, Algorithm 1.

The method, in the notation of the paper:

1. One-predictor posteriors under the ML parameters, Eqs. (11)–(12):
   ``P[r, i, j] = π_j f(x_ri | j) / Σ_l π_l f(x_ri | l)``  (:func:`one_predictor_posteriors`).
2. ``B[r, i] = P[r, i, y_r]`` (:func:`b_matrix`, Algorithm 1).
3. The whole path in ``s`` of the constrained least squares of Eq. (15),

   .. math:: \min_\beta \|1 - B\beta\|^2
             \quad \text{s.t.}\quad 0 \le \beta_i \le 1,\ \sum_i \beta_i \le s,

   by a LARS variant whose step is the first of three events (§5): an active coefficient hits 0
   (Eqs. 19–20, lasso modification), an inactive predictor reaches the active set's positive
   correlation with the residual, an active coefficient hits 1 (Eqs. 21–22)
   (:func:`bounded_lars_path`, :func:`coef_at`).
4. Choice of ``s`` by AIC or validation accuracy (:func:`aic_select`, :func:`validation_select`).
5. Classification by ``argmax_j Σ_i β_i P(Y=j | X_i = x_i)``, Eq. (14) (:func:`predict_scores`,
   :func:`predict_classes`).

KKT conditions of Eq. (15) (derived here; the exact path follows them). With the Lagrangian
``½‖1 − Bβ‖² + λ(Σβ − s) − Σ μ_i β_i + Σ ν_i (β_i − 1)`` and the correlation with the residual
``c = Bᵀ(1 − Bβ)``, a feasible β is optimal iff there is λ ≥ 0 with λ(s − Σβ) = 0 and, for every i,

* ``0 < β_i < 1``  ⇒  ``c_i = λ``   (active set 𝒜),
* ``β_i = 0``      ⇒  ``c_i ≤ λ``   (inactive predictors),
* ``β_i = 1``      ⇒  ``c_i ≥ λ``   (the set ℳ of coefficients at their cap).

The path is piecewise linear in λ. On a segment, β_ℳ = 1, β_inactive = 0 and β_𝒜 moves along
the joint least squares direction ``w_𝒜 = (B_𝒜ᵀB_𝒜)⁻¹ 1`` (Eq. 18): when λ falls by γ, β_𝒜 grows
by ``γ w_𝒜``, every correlation falls by ``γ a`` with ``a = BᵀB_𝒜 w_𝒜`` (``a_i = 1`` on 𝒜, so the
active correlation stays equal to λ), and ``s = Σβ`` grows by ``γ 1ᵀw_𝒜 > 0`` (so ``s`` is
monotone and parametrizes the path). The step γ is the first of

* DROP (a):    β_i + γ w_i = 0, i ∈ 𝒜, w_i < 0                   — Eqs. (19)–(20);
* ENTER (b):   c_j − γ a_j = λ − γ, j inactive, a_j < 1          — positive-correlation LARS step;
* CAP (c):     β_i + γ w_i = 1, i ∈ 𝒜, w_i > 0                   — Eqs. (21)–(22);
* RELEASE:     c_j − γ a_j = λ − γ, j ∈ ℳ, a_j > 1 (``variant="exact"`` only): the KKT condition
  ``c_j ≥ λ`` of a capped coefficient is about to fail, so it re-enters 𝒜 and decreases from 1;
* END:         λ − γ = 0: the constraint Σβ ≤ s stops binding; the box-constrained least squares
  solution is reached and the path is constant for larger s.

By a Schur-complement argument (``w_j = (1 − a_j) / S_j`` with ``S_j > 0`` the Schur complement of
column j), a coefficient that enters has ``w > 0`` in the next direction, one that is dropped or
capped satisfies its KKT inequality strictly on the next segment, and a released one has ``w < 0``;
so each event's sign conditions are consistent and the path is exact.

Where we differ from the paper:

* ``variant="paper"`` follows the approximation the paper uses (§5, end): a coefficient that hits
  1 stays in ℳ for the rest of the path. This equals the exact path up to the first RELEASE event
  of the exact path (in particular up to the first CAP), and differs after it: it solves Eq. (15)
  with the capped coefficients fixed at 1, not Eq. (15). With B built from posteriors the first
  coefficient often caps early (a single column's least squares coefficient is about 1/mean(B)
  > 1), so the two variants can differ over most of the path.
* ``variant="exact"`` re-admits capped coefficients with a fourth event (RELEASE) from the KKT
  condition above. The paper's exact procedure (the ℳ⁻ iteration) checks ℳ only when a predictor
  enters or leaves, on the argument that the path is piecewise linear; the KKT condition
  ``c_j ≥ λ`` of a capped coefficient can however fail in the middle of a segment (its
  correlation moves at rate ``a_j``, λ at rate 1), so we treat the crossing as an event of its own.
* The paper stops LARS once every predictor is in the model; we add the END event (λ = 0), after
  which no coefficient moves.
* Each step solves the masked p×p system instead of updating a Cholesky factor: with p in the
  hundreds this is fast under ``jit`` and keeps the loop shape-stable.
"""

from __future__ import annotations

from functools import partial
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._matmul import einsum, matmul

__all__ = [
    "EVENT_PAD",
    "EVENT_DROP",
    "EVENT_ENTER",
    "EVENT_CAP",
    "EVENT_RELEASE",
    "EVENT_END",
    "LarsPath",
    "PathSelection",
    "one_predictor_posteriors",
    "b_matrix",
    "bounded_lars_path",
    "coef_at",
    "path_criteria",
    "aic_select",
    "validation_select",
    "predict_scores",
    "predict_classes",
]

# Event codes recorded at each breakpoint (``LarsPath.event``).
EVENT_PAD = -1  # row after the last breakpoint (repeats the last breakpoint)
EVENT_DROP = 0  # (a) an active coefficient hit 0 and left the active set
EVENT_ENTER = 1  # (b) an inactive predictor joined the active set (also breakpoint 0)
EVENT_CAP = 2  # (c) an active coefficient hit 1 and moved to the capped set
EVENT_RELEASE = 3  # exact variant: a capped coefficient re-entered the active set
EVENT_END = 4  # λ reached 0: box-constrained least squares solution, path constant afterwards

_ZERO, _ACTIVE, _CAPPED = 0, 1, 2
_VARIANTS = ("paper", "exact")


class LarsPath(eqx.Module):
    """Breakpoints of the bounded LARS path (fixed size ``max_steps + 1``).

    Rows ``0..n_steps`` are breakpoints; rows after ``n_steps`` repeat the last breakpoint with
    ``event = EVENT_PAD`` so that interpolation and criteria need no masking.

    Attributes:
      beta: (max_steps + 1, p) coefficients at each breakpoint; row 0 is β = 0.
      s: (max_steps + 1,) ℓ1 norm Σβ at each breakpoint (non-decreasing).
      lam: (max_steps + 1,) multiplier λ of the constraint Σβ ≤ s (the active correlation).
      event: (max_steps + 1,) int32 event that ended the segment into this breakpoint (``EVENT_*``);
        row 0 is ``EVENT_ENTER`` (the first predictor's entry).
      index: (max_steps + 1,) int32 predictor the event concerns (−1 for END and padding).
      n_steps: int32 number of segments taken (last breakpoint is row ``n_steps``).
      converged: bool, True when the END event was reached within ``max_steps``.
    """

    beta: jax.Array
    s: jax.Array
    lam: jax.Array
    event: jax.Array
    index: jax.Array
    n_steps: jax.Array
    converged: jax.Array


class PathSelection(eqx.Module):
    """A breakpoint chosen along a path.

    Attributes:
      index: int32 row of the chosen breakpoint in the path.
      beta: (p,) its coefficients.
      s: its ℓ1 norm.
      criterion: (max_steps + 1,) the criterion at every row (AIC: lower is better, +inf where
        undefined; validation: accuracy, −inf where undefined).
    """

    index: jax.Array
    beta: jax.Array
    s: jax.Array
    criterion: jax.Array


# ----------------------------------------------------------------------------------------------
# Eager validation helpers (NumPy, before any jit; skipped for traced values so that the public
# functions stay usable under a caller's jit / vmap).


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _check_ndim(name: str, x, ndim: int, fix: str) -> None:
    if jnp.ndim(x) != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions ({fix}); got shape {jnp.shape(x)}")


def _check_float(name: str, x) -> None:
    if not jnp.issubdtype(jnp.result_type(x), jnp.floating):
        raise TypeError(f"{name} must be a floating-point array; got dtype {jnp.result_type(x)}")


def _check_labels(y, n: int, c: int, name: str = "y") -> None:
    _check_ndim(name, y, 1, "class codes of shape (n,)")
    if jnp.shape(y)[0] != n:
        raise ValueError(f"{name} must have length n={n}; got {jnp.shape(y)[0]}")
    if not jnp.issubdtype(jnp.result_type(y), jnp.integer):
        raise TypeError(f"{name} must hold integer class codes; got dtype {jnp.result_type(y)}")
    if _is_concrete(y):
        y_np = np.asarray(y)
        if y_np.size and (y_np.min() < 0 or y_np.max() >= c):
            raise ValueError(
                f"{name} must hold class codes in [0, {c}); got range [{y_np.min()}, {y_np.max()}]"
            )


def _check_weight(weight, n: int, name: str = "weight") -> None:
    if weight is None:
        return
    _check_ndim(name, weight, 1, "one weight per row")
    if jnp.shape(weight)[0] != n:
        raise ValueError(f"{name} must have length n={n}; got {jnp.shape(weight)[0]}")
    if _is_concrete(weight):
        w = np.asarray(weight)
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"{name} must be finite and >= 0")


def _check_b(B) -> None:
    _check_ndim("B", B, 2, "shape (n, p), B[r, i] = P(Y = y_r | X_i = x_ri); see b_matrix")
    _check_float("B", B)
    if _is_concrete(B):
        b = np.asarray(B)
        if not np.all(np.isfinite(b)) or np.any(b < 0) or np.any(b > 1):
            raise ValueError("B must hold finite probabilities in [0, 1]; build it with b_matrix")


def _check_path(path) -> None:
    if not isinstance(path, LarsPath):
        raise TypeError(
            f"path must be a LarsPath from bounded_lars_path; got {type(path).__name__}"
        )


def _as_b(B_or_P, y):
    """Accept B (n, p) or P (n, p, c) plus y."""
    if jnp.ndim(B_or_P) == 3:
        if y is None:
            raise ValueError("y is required when passing posteriors P of shape (n, p, c)")
        return b_matrix(B_or_P, y)
    _check_b(B_or_P)
    return jnp.asarray(B_or_P)


# ----------------------------------------------------------------------------------------------
# Step 1: one-predictor posteriors and B.


@jax.jit
def _one_predictor_posteriors(L, log_prior):
    return jax.nn.softmax(L + log_prior[None, None, :], axis=-1)


def one_predictor_posteriors(L: jax.Array, log_prior: jax.Array) -> jax.Array:
    r"""One-predictor class posteriors, Eqs. (11)–(12) of the L1-NB paper.

    ``P[r, i, j] = softmax_j(log π_j + L[r, i, j]) = π_j f(x_ri | j) / Σ_l π_l f(x_ri | l)``.

    Args:
      L: (n, p, c) log-contributions, ``L[r, i, j] = log f(x_ri | Y = j; Ω̂_i)`` (CONVENTIONS.md). A
        missing entry holds 0 for every class, so its posterior is the prior. ``-inf`` for some
        classes is allowed (they get probability 0); ``-inf`` for every class gives NaN.
      log_prior: (c,) log class prior.

    Returns:
      (n, p, c) posteriors; every ``P[r, i, :]`` sums to one.
    """
    _check_ndim("L", L, 3, "log-contributions of shape (n, p, c)")
    _check_ndim("log_prior", log_prior, 1, "shape (c,)")
    _check_float("L", L)
    if jnp.shape(log_prior)[0] != jnp.shape(L)[2]:
        raise ValueError(
            f"log_prior must have c={jnp.shape(L)[2]} entries to match L; "
            f"got shape {jnp.shape(log_prior)}"
        )
    return _one_predictor_posteriors(L, jnp.asarray(log_prior, dtype=jnp.result_type(L)))


@jax.jit
def _b_matrix(P, y):
    return jnp.take_along_axis(P, y[:, None, None], axis=2)[:, :, 0]


def b_matrix(P: jax.Array, y: jax.Array) -> jax.Array:
    r"""The LARS input matrix of Algorithm 1: ``B[r, i] = P[r, i, y_r] = P(Y = y_r | X_i = x_ri)``.

    Args:
      P: (n, p, c) one-predictor posteriors (:func:`one_predictor_posteriors`).
      y: (n,) int class codes in ``[0, c)``.

    Returns:
      (n, p) matrix B.
    """
    _check_ndim("P", P, 3, "posteriors of shape (n, p, c)")
    _check_float("P", P)
    n, _, c = jnp.shape(P)
    _check_labels(y, n, c)
    return _b_matrix(P, y)


# ----------------------------------------------------------------------------------------------
# Step 2: bounded LARS path.


def _gram(B, weight):
    """Weighted Gram matrix BᵀWB and Bᵀw (w = 1 unless given)."""
    if weight is None:
        weight = jnp.ones(B.shape[0], B.dtype)
    Bw = B * weight[:, None]
    return matmul(Bw.T, B), matmul(Bw.T, jnp.ones_like(weight))


def _lars_core(G, b1, max_steps: int, variant: str) -> LarsPath:
    """Bounded LARS on the Gram form: min ½βᵀGβ − b1ᵀβ s.t. 0 ≤ β ≤ 1, Σβ ≤ s (see module doc)."""
    p = G.shape[0]
    dtype = G.dtype
    eps = jnp.finfo(dtype).eps
    # Margin for the "a_j < 1" / "a_j > 1" tests: a predictor whose column is (numerically) in the
    # span of the active columns has a_j = 1 up to rounding and must never enter; sqrt(eps) is well
    # above the rounding error of a solve with a moderately conditioned Gram matrix.
    tol = jnp.sqrt(eps)
    inf = jnp.asarray(jnp.inf, dtype)
    arange = jnp.arange(p)
    exact = variant == "exact"

    lam0 = jnp.max(b1)
    j0 = jnp.argmax(b1).astype(jnp.int32)
    status0 = jnp.where(arange == j0, _ACTIVE, _ZERO).astype(jnp.int32)
    rows = max_steps + 1
    hist_beta = jnp.zeros((rows, p), dtype)
    hist_s = jnp.zeros((rows,), dtype)
    hist_lam = jnp.zeros((rows,), dtype).at[0].set(lam0)
    hist_event = jnp.full((rows,), EVENT_PAD, jnp.int32).at[0].set(EVENT_ENTER)
    hist_index = jnp.full((rows,), -1, jnp.int32).at[0].set(j0)
    # A zero B (lam0 = 0) has nothing to fit: done at once with a single breakpoint at β = 0.
    done0 = lam0 <= 0
    init = (
        jnp.int32(0),
        jnp.zeros((p,), dtype),
        status0,
        lam0,
        jnp.int32(-1),  # predictor that changed at the last event (excluded from re-crossing)
        done0,
        (hist_beta, hist_s, hist_lam, hist_event, hist_index),
    )

    def cond(state):
        k, _, _, _, _, done, _ = state
        return jnp.logical_and(~done, k < max_steps)

    def body(state):
        k, beta, status, lam, last, _, hist = state
        active = status == _ACTIVE
        both = active[:, None] & active[None, :]
        # Masked system: G_AA on the active block, identity elsewhere, rhs 1 on 𝒜 → w = 0 off 𝒜.
        G_m = jnp.where(both, G, 0.0) + jnp.diag(jnp.where(active, 0.0, 1.0).astype(dtype))
        w = jnp.linalg.solve(G_m, active.astype(dtype))
        a = matmul(G, w)
        c = b1 - matmul(G, beta)
        not_last = arange != last

        gamma_drop = jnp.where(active & (w < 0), -beta / jnp.where(w < 0, w, -1.0), inf)
        gamma_cap = jnp.where(active & (w > 0), (1.0 - beta) / jnp.where(w > 0, w, 1.0), inf)
        can_enter = (status == _ZERO) & (a < 1.0 - tol) & not_last
        gamma_enter = jnp.where(
            can_enter, jnp.maximum(lam - c, 0.0) / jnp.where(can_enter, 1.0 - a, 1.0), inf
        )
        # A predictor can only enter while λ > 0: a crossing at γ ≥ λ happens at or after the END
        # event (e.g. an all-zero column of B, whose correlation stays 0), where nothing moves;
        # letting it win the tie with END would add a singular column to the active system.
        gamma_enter = jnp.where(gamma_enter < lam, gamma_enter, inf)
        if exact:
            can_release = (status == _CAPPED) & (a > 1.0 + tol) & not_last
            gamma_release = jnp.where(
                can_release, jnp.maximum(c - lam, 0.0) / jnp.where(can_release, a - 1.0, 1.0), inf
            )
        else:
            gamma_release = jnp.full((p,), inf)
        # λ at the rounding level of λ0 is λ = 0 (e.g. once the active columns interpolate the
        # target exactly): END now. Events at γ ≈ 0 there would otherwise beat END and cycle
        # (s no longer monotone, more free coefficients than rows) until max_steps.
        at_zero = lam <= 64.0 * p * eps * lam0
        others = jnp.concatenate([gamma_drop, gamma_enter, gamma_cap, gamma_release], axis=0)
        gammas = jnp.concatenate([jnp.where(at_zero, inf, others), lam[None]], axis=0)
        # argmin picks the first minimum: ties resolve in the order DROP, ENTER, CAP, RELEASE, END.
        which = jnp.argmin(gammas).astype(jnp.int32)
        # at λ ≈ 0 END does not move: w may come from a singular active system there (an ENTER
        # that won the tie with END by rounding gives n + 1 active columns on n rows, w ~ 1e15)
        gamma = jnp.where(at_zero, 0.0, jnp.maximum(gammas[which], 0.0))
        event = jnp.where(which == 4 * p, EVENT_END, which // p).astype(jnp.int32)
        j = jnp.where(event == EVENT_END, -1, which % p).astype(jnp.int32)
        is_j = arange == j

        beta_new = beta + gamma * w
        # Pin the event's coefficient to its bound and clip rounding excursions of the others.
        beta_new = jnp.where(is_j & (event == EVENT_DROP), 0.0, beta_new)
        beta_new = jnp.where(is_j & (event == EVENT_CAP), 1.0, beta_new)
        beta_new = jnp.where(status == _CAPPED, 1.0, beta_new)
        beta_new = jnp.where(status == _ZERO, 0.0, beta_new)
        beta_new = jnp.clip(beta_new, 0.0, 1.0)
        new_status_j = jnp.select(
            [event == EVENT_DROP, event == EVENT_CAP],
            [_ZERO, _CAPPED],
            _ACTIVE,
        ).astype(jnp.int32)
        status_new = jnp.where(is_j, new_status_j, status)
        lam_new = jnp.where(event == EVENT_END, 0.0, lam - gamma)

        hb, hs, hl, he, hi = hist
        row = k + 1
        hist = (
            hb.at[row].set(beta_new),
            hs.at[row].set(jnp.sum(beta_new)),
            hl.at[row].set(lam_new),
            he.at[row].set(event),
            hi.at[row].set(j),
        )
        return (row, beta_new, status_new, lam_new, j, event == EVENT_END, hist)

    k, _, _, _, _, done, hist = lax.while_loop(cond, body, init)
    hb, hs, hl, he, hi = hist
    after = jnp.arange(rows) > k
    hb = jnp.where(after[:, None], hb[k][None, :], hb)
    hs = jnp.where(after, hs[k], hs)
    hl = jnp.where(after, hl[k], hl)
    return LarsPath(beta=hb, s=hs, lam=hl, event=he, index=hi, n_steps=k, converged=done)


def _lars_from_b(B, weight, max_steps: int, variant: str) -> LarsPath:
    G, b1 = _gram(B, weight)
    return _lars_core(G, b1, max_steps, variant)


_lars_jit = jax.jit(_lars_from_b, static_argnames=("max_steps", "variant"))


def bounded_lars_path(
    B: jax.Array,
    max_steps: int | None = None,
    variant: Literal["paper", "exact"] = "paper",
    weight: jax.Array | None = None,
) -> LarsPath:
    r"""Whole regularization path of Eq. (15) of the L1-NB paper by a bounded LARS (§5).

    Solves, for every s ≥ 0,

    .. math:: \min_\beta \sum_r w_r (1 - \sum_i \beta_i B_{ri})^2
              \quad\text{s.t.}\quad 0 \le \beta_i \le 1,\ \sum_i \beta_i \le s,

    returning the breakpoints of the piecewise-linear path (``w = 1`` unless ``weight`` is given).
    The loop is a ``lax.while_loop`` with fixed-size history arrays; each step solves the active
    p×p system once. See the module docstring for the KKT conditions, the events and how the two
    variants relate to the paper.

    Args:
      B: (n, p) matrix ``B[r, i] = P(Y = y_r | X_i = x_ri)`` in [0, 1] (:func:`b_matrix`).
      max_steps: static bound on the number of segments; default ``3 p``. If reached before the END
        event the path is truncated and ``converged`` is False.
      variant: ``"paper"``: a coefficient that hits 1 stays at 1 for the rest of the path, the
        approximation the paper uses (exact up to the first time a capped coefficient's KKT
        condition fails). ``"exact"``: capped coefficients are re-admitted by their KKT condition
        (RELEASE event), so every breakpoint solves Eq. (15).
      weight: optional (n,) non-negative sample weights (0/1 for folds).

    Returns:
      A :class:`LarsPath`.
    """
    _check_b(B)
    n, p = jnp.shape(B)
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be one of {_VARIANTS}; got {variant=}")
    if max_steps is None:
        max_steps = 3 * p
    if isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) or max_steps < 1:
        raise ValueError(f"max_steps must be a positive int; got {max_steps=}")
    _check_weight(weight, n)
    B = jnp.asarray(B)
    if weight is not None:
        weight = jnp.asarray(weight, B.dtype)
    return _lars_jit(B, weight, max_steps=int(max_steps), variant=variant)


@jax.jit
def _coef_at(beta, s_bp, s):
    rows = s_bp.shape[0]
    k = jnp.clip(jnp.searchsorted(s_bp, s, side="right") - 1, 0, rows - 1)
    k1 = jnp.minimum(k + 1, rows - 1)
    ds = s_bp[k1] - s_bp[k]
    t = jnp.where(ds > 0, (s - s_bp[k]) / jnp.where(ds > 0, ds, 1.0), 0.0)
    t = jnp.clip(t, 0.0, 1.0)
    return beta[k] + t[..., None] * (beta[k1] - beta[k])


def coef_at(path: LarsPath, s: jax.Array | float) -> jax.Array:
    r"""Coefficients at ℓ1 budget(s) ``s``: linear interpolation between breakpoints.

    The path is linear in s between breakpoints (s = Σβ is strictly increasing on any segment on
    which β moves). For s beyond the last breakpoint the last β is returned (the constraint no
    longer binds once λ = 0).

    Args:
      path: a :class:`LarsPath`.
      s: scalar or (m,) budgets ≥ 0.

    Returns:
      (p,) or (m, p) coefficients.
    """
    _check_path(path)
    s = jnp.asarray(s, path.s.dtype)
    if jnp.ndim(s) > 1:
        raise ValueError(f"s must be a scalar or 1-d; got shape {jnp.shape(s)}")
    if _is_concrete(s) and not np.all(np.asarray(s) >= 0):  # NaN fails too
        raise ValueError(f"s must be >= 0 (and not NaN); got {np.asarray(s)!r}")
    return _coef_at(path.beta, path.s, s)


# ----------------------------------------------------------------------------------------------
# Step 4: model selection and prediction.


@jax.jit
def _predict_scores(P, beta):
    return einsum("rij,i->rj", P, beta)


def predict_scores(P: jax.Array, beta: jax.Array) -> jax.Array:
    r"""Class scores of Eq. (14): ``score[r, j] = Σ_i β_i P(Y = j | X_i = x_ri; Ω̂_i)``.

    Args:
      P: (n, p, c) one-predictor posteriors of the rows to classify.
      beta: (p,) coefficients (a breakpoint, :func:`coef_at`, or a selection's ``beta``).

    Returns:
      (n, c) scores; ``score.sum(-1) = Σβ`` (Eq. 13 is a probability when Σβ = 1). Classify with
      ``argmax`` over the last axis (:func:`predict_classes`).
    """
    _check_ndim("P", P, 3, "posteriors of shape (n, p, c)")
    _check_ndim("beta", beta, 1, "shape (p,)")
    if jnp.shape(beta)[0] != jnp.shape(P)[1]:
        raise ValueError(f"beta must have p={jnp.shape(P)[1]} entries; got {jnp.shape(beta)}")
    return _predict_scores(P, jnp.asarray(beta, jnp.result_type(P)))


def predict_classes(P: jax.Array, beta: jax.Array) -> jax.Array:
    """Class codes ``argmax_j`` of Eq. (14) (first class on ties); (n,) int32."""
    return jnp.argmax(predict_scores(P, beta), axis=-1).astype(jnp.int32)


def _valid_rows(s_hist, n_steps):
    """Breakpoint rows that hold a classifier: on the path (row <= n_steps) with s > 0."""
    return (jnp.arange(s_hist.shape[0]) <= n_steps) & (s_hist > 0)


def _aic_core(beta_hist, s_hist, valid, B, weight, likelihood: str):
    if weight is None:
        weight = jnp.ones(B.shape[0], B.dtype)
    fitted = matmul(B, beta_hist.T)  # (n, rows): Σ_i β_i B[r, i] at each breakpoint
    tiny = jnp.finfo(B.dtype).tiny
    if likelihood == "classifier":
        # Normalised Eq. (13): Σ_j Σ_i β_i P[r, i, j] = Σβ, so q_r is a class probability.
        q = fitted / jnp.where(s_hist > 0, s_hist, 1.0)[None, :]
        loglik = matmul(weight, jnp.log(jnp.maximum(q, tiny)))
    else:  # "gaussian": residual variance of the regression of 1 on B (σ² at its ML value)
        n_eff = jnp.sum(weight)
        rss = matmul(weight, (1.0 - fitted) ** 2)
        loglik = -0.5 * n_eff * (jnp.log(2 * jnp.pi * jnp.maximum(rss, tiny) / n_eff) + 1.0)
    df = jnp.sum(beta_hist != 0, axis=1).astype(B.dtype)
    aic = 2.0 * df - 2.0 * loglik
    return jnp.where(valid, aic, jnp.inf)


@partial(jax.jit, static_argnames=("likelihood",))
def _aic_selection(beta_hist, s_hist, n_steps, B, weight, likelihood: str):
    """AIC at every breakpoint and its argmin (index, beta, s) in one program: the eager
    row mask, argmin and gathers compiled one small program each on a first call."""
    aic = _aic_core(beta_hist, s_hist, _valid_rows(s_hist, n_steps), B, weight, likelihood)
    k = jnp.argmin(aic).astype(jnp.int32)
    return aic, k, beta_hist[k], s_hist[k]


def path_criteria(
    path: LarsPath,
    B_or_P: jax.Array,
    y: jax.Array | None = None,
    likelihood: Literal["classifier", "gaussian"] = "classifier",
    weight: jax.Array | None = None,
) -> jax.Array:
    r"""AIC at every breakpoint of the path (Algorithm 1; §3).

    ``AIC_k = 2 df_k − 2 ℓ_k`` with ``df_k = #{i : β_i ≠ 0}`` (capped coefficients count, as the
    paper's "number of parameters" suggests) and, by ``likelihood``:

    * ``"classifier"`` (default): the log-likelihood of the training labels under the normalised
      Eq. (13), ``ℓ = Σ_r w_r log(Σ_i β_i B[r, i] / Σ_i β_i)``. Σ_j of Eq. (13) over classes equals
      Σβ, so the ratio is a class probability for any β ≠ 0.
    * ``"gaussian"``: the Gaussian log-likelihood of the least squares fit of Eq. (15) with the ML
      variance, ``ℓ = −(N/2)(log(2π RSS / N) + 1)``, ``RSS = Σ_r w_r (1 − Σ_i β_i B[r, i])²``.

    The paper says only "AIC … is defined as the number of parameters in the statistical model
    minus the likelihood"; we read it as the usual AIC (df − ℓ and 2df − 2ℓ have the same argmin)
    and take the classifier's likelihood as the default because Algorithm 1 uses AIC to choose a
    classifier. (On a test with 90 irrelevant predictors the Gaussian reading kept almost all of
    them: the residual sum of squares keeps falling along the path.)
    Rows with β = 0 (no classifier) and padding rows get +inf.

    Args:
      path: a :class:`LarsPath`.
      B_or_P: (n, p) B, or (n, p, c) posteriors P together with ``y``.
      y: (n,) class codes, required with P.
      likelihood: ``"classifier"`` or ``"gaussian"``.
      weight: optional (n,) sample weights.

    Returns:
      (max_steps + 1,) AIC values.
    """
    return _checked_aic(path, B_or_P, y, likelihood, weight)[0]


def _checked_aic(path, B_or_P, y, likelihood, weight):
    """`_aic_selection` after the checks of `path_criteria`."""
    _check_path(path)
    if likelihood not in ("classifier", "gaussian"):
        raise ValueError(f"likelihood must be 'classifier' or 'gaussian'; got {likelihood=}")
    B = _as_b(B_or_P, y)
    if jnp.shape(B)[1] != path.beta.shape[1]:
        raise ValueError(f"B must have p={path.beta.shape[1]} columns; got {jnp.shape(B)}")
    _check_weight(weight, jnp.shape(B)[0])
    if weight is not None:
        weight = jnp.asarray(weight, B.dtype)
    return _aic_selection(path.beta, path.s, path.n_steps, B, weight, likelihood=likelihood)


def aic_select(
    path: LarsPath,
    B_or_P: jax.Array,
    y: jax.Array | None = None,
    likelihood: Literal["classifier", "gaussian"] = "classifier",
    weight: jax.Array | None = None,
) -> PathSelection:
    r"""The breakpoint of minimum AIC (Algorithm 1, ``β̂ = argmin_l AIC(β^(l))``).

    See :func:`path_criteria` for the likelihood and degrees of freedom. Ties go to the smallest s.
    """
    aic, k, beta, s = _checked_aic(path, B_or_P, y, likelihood, weight)
    return PathSelection(index=k, beta=beta, s=s, criterion=aic)


@jax.jit
def _accuracy_selection(beta_hist, s_hist, n_steps, P, y, weight):
    """Validation accuracy at every breakpoint and its argmax (index, beta, s), one program."""
    if weight is None:
        weight = jnp.ones(P.shape[:1], P.dtype)
    scores = einsum("rij,ki->krj", P, beta_hist.astype(P.dtype))  # (rows, n, c)
    correct = (jnp.argmax(scores, axis=-1) == y[None, :]).astype(P.dtype)
    acc = matmul(correct, weight) / jnp.maximum(jnp.sum(weight), jnp.finfo(P.dtype).tiny)
    acc = jnp.where(_valid_rows(s_hist, n_steps), acc, -jnp.inf)
    k = jnp.argmax(acc).astype(jnp.int32)
    return acc, k, beta_hist[k], s_hist[k]


def validation_select(
    path: LarsPath,
    P_val: jax.Array,
    y_val: jax.Array,
    weight: jax.Array | None = None,
) -> PathSelection:
    r"""The breakpoint of highest (weighted) accuracy of Eq. (14) on validation rows (§3, §6).

    Only breakpoints are scored (as Algorithm 1 does for AIC); β = 0 and padding rows get −inf.
    Ties go to the smallest s (the sparsest model).

    Args:
      path: a :class:`LarsPath` fitted on training rows.
      P_val: (m, p, c) one-predictor posteriors of the validation rows (training parameters Ω̂).
      y_val: (m,) their class codes.
      weight: optional (m,) sample weights (0/1 to pick a fold out of a larger array).

    Returns:
      :class:`PathSelection` whose ``criterion`` holds the accuracies.
    """
    _check_path(path)
    _check_ndim("P_val", P_val, 3, "posteriors of shape (m, p, c)")
    _check_float("P_val", P_val)
    m, p, c = jnp.shape(P_val)
    if p != path.beta.shape[1]:
        raise ValueError(f"P_val must have p={path.beta.shape[1]} predictors; got {p}")
    _check_labels(y_val, m, c, "y_val")
    _check_weight(weight, m)
    dtype = jnp.result_type(P_val)
    weight = None if weight is None else jnp.asarray(weight, dtype)
    acc, k, beta, s = _accuracy_selection(
        path.beta, path.s, path.n_steps, P_val, jnp.asarray(y_val), weight
    )
    return PathSelection(index=k, beta=beta, s=s, criterion=acc)
