r"""Online (weighted) naive Bayes on streaming summaries: Salperwyck, Lemaire & Hue (Stream paper).

Model (Stream eq. 2, per class k, predictors i = 1..p):

    H_k = log pi_k + b_k + sum_i w_ik log p(x_i | C_k),     P_k = softmax(H)_k,
    Cost = -log P_y,         dCost/dH_k = P_k - T_k          (Stream eq. 4, appendix),

so dCost/dw_ik = (P_k - T_k) log p(x_i | C_k) and dCost/db_k = P_k - T_k. The densities
log p(x_i | C_k) come from per-class online summaries of each predictor (`jaxnb.stream.summaries`):
`GaussianSummary` (Stream §3.3), `GKClass` (§3.2) or `CPiD` (§3.1), optionally with a MODL
second level (Boullé 2006a) computed on the summary's bins. The weights follow one pass of SGD,
w <- w - eta dCost/dw (Stream eq. 3) with eta = 1e-4 (Stream §2.2), or any optax optimizer
(the paper's future work: adaptive rates, mini-batches, §5).

Where we differ from / make explicit what the paper leaves open:

* Prior: the paper's b_k absorbs the class prior. We keep the (streamed) log prior log pi_k as an
  offset and learn b_k on top, with w = 1, b = 0 at the start, so the model *starts as* NB on the
  same summaries and `OnlineNB` is exactly the case "no learning". (b_paper = log pi + b.)
* Units (Gaussian summaries): rescaling a column (x -> a x) adds -log a to log p(x_i | C_k) in
  every class, which the per-class weights turn into a class-dependent shift sum_i w_ik log a.
  The bias could absorb it, but one pass of SGD does not move it that far, so with the paper's
  raw densities the fitted model depends on the units (m vs km: probabilities differ by up to
  0.44 at rate 1e-2). By default (`standardize=True`) the SGD works on log p(x_i | C_k) + log s_i,
  s_i the pooled standard deviation streamed so far (`standardized_offset`): the log density of
  x_i / s_i, unit-free, the same model family (b_k absorbs sum_i w_ik log s_i).
  `standardize=False` keeps the raw terms. `OnlineNB` (w = 1) scores the raw densities; the
  offset would be the same for every class there.
* Order of the two updates (not stated in the paper): default `order="summary_first"`: for each
  block of rows the summaries are updated first, then the SGD steps use log p(x | C) from the
  updated summaries (the flow of Stream Fig. 1–2: summaries feed the graphical model).
  `order="weights_first"` takes the SGD step on log p(x | C) from the summaries *before* the
  block — the gradient of the loss the model actually incurred (prequential loss); it is also
  cheaper (one density evaluation per row instead of two).
* Blocks: the stream is processed by a jit-compiled `lax.scan` over blocks of `summary_chunk`
  rows. Per block: (optional) test every row with the state at the block start, update the
  summaries with the whole block, then `summary_chunk / batch_size` SGD steps on consecutive
  mini-batches of `batch_size` rows (an inner scan). `summary_chunk = batch_size = 1` is the
  paper's row-by-row protocol (default for Gaussian summaries); GKClass / cPiD sort their tuple
  arrays once per block, so their default block is 64 rows (SGD still row by row).
* Mini-batch gradients are means over the batch (the optax convention): with `batch_size = B`
  the step per example is eta / B; scale `learning_rate` to compare with B = 1.
* Warm-up: SGD steps are masked until every class has `warmup` examples in the summaries (a
  Gaussian fitted on one or two values has a near-zero variance and its log-density would blow
  the weights up); predictions are available from the first row.
* Gaussian variance floor: sigma²_ij = M2_ij / N_ij + `var_smoothing` · s²_i with s²_i the pooled
  variance of predictor i, exactly as `jaxnb.NaiveBayes` (jaxnb.params.fit_mle), so `OnlineNB`
  on Gaussian summaries equals `NaiveBayes(var_smoothing=...)` fitted on the same rows; a class
  not yet seen uses the pooled mean and variance; the dtype's smallest normal number only guards
  a zero variance with `var_smoothing=0` (an absolute floor of 1e-12 here until 2026-11-29 swamped
  the variances of columns in small units, spread ~1e-5 and below: OnlineNB then disagreed with
  NaiveBayes by up to 0.5 in probability). A predictor with no value seen yet (all missing so
  far) contributes 0 to every class, as a missing value does.
* Second level: `second_level="modl"` recomputes MODL cut points (NumPy, exact dynamic
  programme on the <= 100 summary bins per predictor) every `refresh_every` examples, outside
  jit; between refreshes the cuts are frozen and the per-class interval counts are read from the
  live summary (cumulated bin counts up to each cut). Before the first refresh, and with
  `second_level="bins"`, the summary's own bins are used (Laplace-smoothed). The paper does not
  say how often its second level is recomputed.

References:
  C. Salperwyck, V. Lemaire, C. Hue. Incremental weighted naive Bayes classifiers for data
  stream. (Stream paper: eq. 2–4, §2.2, §3.)
  M. Boullé (2006a). MODL: a Bayes optimal discretization method for continuous attributes.
"""

from __future__ import annotations

import math
import sys
from functools import partial

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

from .._checks import check_choice, check_int, check_real
from .._dtypes import float_dtype
from .._matmul import einsum
from ..data import (
    _check_spread,
    _frame_names,
    check_feature_names,
    check_same_classes,
    check_X_2d,
    encode_in_classes,
    feature_count_error,
    first_partial_fit_classes,
)
from ..estimators import BaseNB, _Additive
from ..exceptions import NotFittedError
from ..optim.named import NamedOptimizer
from ..suffstats import has_spread, log_pooled_sd, pooled_moments
from .summaries import (
    CPiD,
    GaussianSummary,
    GKClass,
    _count_below,
    _filled,
    log_prob_gaussian,
    update_cpid,
    update_gaussian,
    update_gkclass,
)

__all__ = [
    "OnlineConfig",
    "OnlineNB",
    "OnlineState",
    "OnlineWeightedNB",
    "class_counts",
    "init_state",
    "log_contributions",
    "standardized_offset",
    "log_joint",
    "modl_second_level",
    "register_methods",
    "run_stream",
    "sgd_gradient",
]

_LOG_2PI = math.log(2.0 * math.pi)
SUMMARIES = ("gaussian", "gkclass", "cpid")


# --------------------------------------------------------------------------------------------------
# Functional core.
# --------------------------------------------------------------------------------------------------
class OnlineState(eqx.Module):
    r"""State of an online (weighted) NB.

    Attributes:
      summary: per-class summaries of the p predictors.
      cuts: `(p, s)` second-level cut points (+inf padded) or None (use the summary's bins).
      weight: `(p, c)` w_ik (ones = NB).
      bias: `(c,)` b_k, learned on top of the log prior (zeros = NB).
      opt_state: the optax state of (weight, bias).
      n_steps: number of SGD steps taken (masked warm-up steps excluded).
      class_rows: `(c,)` rows seen per class (the class prior's counts: a row counts whatever
        values it misses). None (a state built without it): `class_counts` of the summary.
    """

    summary: GaussianSummary | GKClass | CPiD
    cuts: jax.Array | None
    weight: jax.Array
    bias: jax.Array
    opt_state: optax.OptState
    n_steps: jax.Array
    class_rows: jax.Array | None = None


class OnlineConfig(eqx.Module):
    """Static configuration of the compiled stream step (hashable; part of the jit key)."""

    optimizer: optax.GradientTransformation = eqx.field(static=True)
    batch_size: int = eqx.field(static=True, default=1)
    order: str = eqx.field(static=True, default="summary_first")
    learn: bool = eqx.field(static=True, default=True)
    var_smoothing: float = eqx.field(static=True, default=1e-9)
    smoothing: float = eqx.field(static=True, default=1.0)
    prior_smoothing: float = eqx.field(static=True, default=1.0)
    warmup: int = eqx.field(static=True, default=10)
    # the default plain SGD (stateless): w <- w - rate * gradient with `run_stream`'s traced
    # `rate`, so estimators that differ only in their learning rate share every compiled program;
    # batch size 1 takes the fused row-by-row path (same arithmetic, no optax tree per step).
    # False: `optimizer`'s own updates (its rates are part of it, and of the jit key)
    plain_sgd: bool = eqx.field(static=True, default=False)
    # True: a Gaussian term is the log density of the standardized value (`standardized_offset`),
    # so the SGD path does not depend on the columns' units
    standardize: bool = eqx.field(static=True, default=False)


def class_counts(summary) -> jax.Array:
    """`(c,)` examples seen per class: the largest count of observed values over the predictors.

    Exact when some predictor is never missing; with missing values spread over every predictor
    it undercounts (the summaries keep per-predictor counts only), and the prior follows it."""
    if isinstance(summary, GaussianSummary):
        return summary.count.max(axis=1)
    if isinstance(summary, GKClass):
        return summary.class_counts.sum(axis=1).max(axis=0).astype(summary.values.dtype)
    return summary.counts.sum(axis=1).max(axis=0).astype(summary.breaks.dtype)


def log_prior(summary, prior_smoothing: float = 1.0, counts=None) -> jax.Array:
    r"""`(c,)` log (N_k + a) - log (N + c a), a = `prior_smoothing` (0: the empirical prior).

    N_k: ``counts`` (rows seen per class, `OnlineState.class_rows`) or, without them,
    `class_counts` of the summary."""
    n = class_counts(summary) if counts is None else counts
    a = prior_smoothing
    lp = jnp.log(n + a) - jnp.log(n.sum() + a * n.shape[0])
    # an empty summary with a = 0 is log 0 - log 0 = NaN: uniform instead (e.g. SGD from row one)
    return jnp.where(n.sum() + a * n.shape[0] > 0, lp, -jnp.log(jnp.asarray(n.shape[0], lp.dtype)))


def _level1(summary):
    return summary.bins()


def _second_level_log_prob(summary, cuts2, values, smoothing):
    """log P(x in its second-level interval | k) from the live summary's cumulated bin counts."""
    cuts1, counts = _level1(summary)
    counts = counts.astype(values.dtype)
    p, _, c = counts.shape
    cum = jnp.concatenate([jnp.zeros((p, 1, c), counts.dtype), jnp.cumsum(counts, axis=1)], axis=1)
    nb = jnp.sum(cuts1[:, None, :] <= cuts2[:, :, None], axis=-1)  # (p, s) bins below each cut
    # a +inf padding cut lies above every level-1 bin, the last (open) one included
    nb = jnp.where(jnp.isposinf(cuts2), cum.shape[1] - 1, nb)
    at = jnp.take_along_axis(cum, nb[:, :, None], axis=1)  # (p, s, c)
    full = jnp.concatenate([jnp.zeros((p, 1, c), counts.dtype), at, cum[:, -1:]], axis=1)
    inter = jnp.diff(full, axis=1)  # (p, s + 1, c)
    n_int = 1 + jnp.sum(jnp.isfinite(cuts2), axis=1)  # (p,)
    denom = cum[:, -1] + smoothing * n_int[:, None].astype(values.dtype)  # (p, c)
    code = _count_below(cuts2, values)  # (n, p)
    picked = jnp.take_along_axis(inter[None], code[:, :, None, None], axis=2)[:, :, 0, :]
    out = jnp.log(picked + smoothing) - jnp.log(denom)[None]
    return jnp.where(jnp.isnan(values)[:, :, None], 0.0, out)


def standardized_offset(summary: GaussianSummary) -> jax.Array:
    r"""`(p,)` o_i = log s_i, s_i the pooled standard deviation of predictor i in the summary (0
    while it has no spread).

    log N(x; mu_ik, sigma²_ik) + o_i is the log density of the standardized value x / s_i under
    class k. Rescaling a column (x -> a x) shifts log N by -log a for every class, which the
    per-class weights of Stream eq. 2 turn into a class-dependent shift sum_i w_ik log a: the
    model's bias can absorb it, but one pass of SGD does not, so the fitted model depended on the
    units (columns in km rather than m changed probabilities by up to 0.44 at learning rate
    1e-2, in mm by up to 0.82). With the offset the terms, and the SGD path, are unit-free; the
    model family is the same (b_k absorbs sum_i w_ik o_i)."""
    tot, _, pm2 = pooled_moments(summary.count, summary.mean, summary.m2)
    return log_pooled_sd(tot, pm2)


def log_contributions(
    summary, cuts, values, *, var_smoothing=1e-9, smoothing=1.0, standardize=False
) -> jax.Array:
    r"""`(n, p, c)` L[r, i, k] = log p(x_ri | C_k) from a summary (NaN contributes 0).

    Gaussian: log N(x; mu_ik, sigma²_ik) with the floor of the module docstring, plus
    `standardized_offset` when `standardize` (the terms `OnlineWeightedNB(standardize=True)`
    learns on). GKClass / cPiD: log (N_bk + a) - log (N_k + a B) of the bin (level 1,
    `cuts=None`) or of the second-level interval (`cuts` `(p, s)`, +inf padded) holding x,
    a = `smoothing` (probabilities of intervals: unit-free already, `standardize` is ignored).
    """
    if isinstance(summary, GaussianSummary):
        L = log_prob_gaussian(summary, values, var_smoothing)
        if standardize:
            # a predictor without spread so far (one value, or a constant column) has no
            # standardized density, and its term would be the same in every class: 0, as a
            # missing value (the per-class weights turned that constant into a second bias and
            # a constant column moved the probabilities by up to 0.09)
            tot, _, pm2 = pooled_moments(summary.count, summary.mean, summary.m2)
            keep = ~jnp.isnan(values) & has_spread(tot, pm2)[None, :]
            L = jnp.where(keep[:, :, None], L + log_pooled_sd(tot, pm2)[None, :, None], 0.0)
        return L
    if cuts is None:
        return summary.log_prob(values, smoothing=smoothing, check_input=False)
    return _second_level_log_prob(summary, cuts, values, smoothing)


def _rows_of(state: OnlineState):
    """`(c,)` rows seen per class (`OnlineState.class_rows`, or the summary's counts)."""
    return class_counts(state.summary) if state.class_rows is None else state.class_rows


def _scores(state: OnlineState, L, cfg: OnlineConfig):
    lp = log_prior(state.summary, cfg.prior_smoothing, _rows_of(state))
    # multiply-and-sum, not einsum: XLA's CPU dot would transpose L (fused with its logs) first
    return (lp + state.bias)[None, :] + (L * state.weight[None]).sum(axis=1)


def _state_contributions(state: OnlineState, values, var_smoothing, smoothing, standardize):
    """`log_contributions` of a state's summary and cuts (what its weights multiply)."""
    return log_contributions(
        state.summary,
        state.cuts,
        values,
        var_smoothing=var_smoothing,
        smoothing=smoothing,
        standardize=standardize,
    )


@partial(jax.jit, static_argnames=("var_smoothing", "smoothing", "prior_smoothing", "standardize"))
def log_joint(
    state: OnlineState,
    values,
    *,
    var_smoothing=1e-9,
    smoothing=1.0,
    prior_smoothing=1.0,
    standardize=False,
) -> jax.Array:
    """`(n, c)` H = log pi + b + sum_i w_ik log p(x_i | C_k) (Stream eq. 2 before the softmax);
    `standardize`: the terms of `log_contributions(..., standardize=True)`."""
    L = _state_contributions(state, values, var_smoothing, smoothing, standardize)
    lp = log_prior(state.summary, prior_smoothing, _rows_of(state))
    return (lp + state.bias)[None, :] + einsum("rik,ik->rk", L, state.weight)


@partial(jax.jit, static_argnames=("var_smoothing", "smoothing", "standardize"))
def _weighted_terms(
    state: OnlineState, values, *, var_smoothing, smoothing, standardize
) -> jax.Array:
    """`(n, p, c)` w_ik log p(x_ri | C_k), the terms of `log_joint` (a zero weight gives 0)."""
    L = _state_contributions(state, values, var_smoothing, smoothing, standardize)
    return jnp.where(state.weight[None] == 0, 0.0, L * state.weight[None])


def sgd_gradient(H, L, y, valid):
    r"""Mean gradient of -log P_y over the valid rows: (dW, db) with dH = P - T (Stream eq. 4).

    dW_ik = mean_r dH_rk L_rik, db_k = mean_r dH_rk; H `(b, c)`, L `(b, p, c)`, y `(b,)`."""
    c = H.shape[-1]
    dH = (jax.nn.softmax(H, axis=-1) - jax.nn.one_hot(y, c, dtype=H.dtype)) * valid[:, None]
    n = jnp.maximum(valid.sum(), 1)
    return einsum("rk,rik->ik", dH, L) / n, dH.sum(axis=0) / n


def init_state(
    summary, optimizer: optax.GradientTransformation, *, init_weight=1.0, cuts=None
) -> OnlineState:
    """Fresh state: weights `init_weight` (1 = NB), bias 0."""
    c, p = _shape(summary)
    dtype = _dtype(summary)
    weight, bias = _filled((p, c), init_weight, dtype), _filled((c,), 0, dtype)
    step, prior = _filled((), 0, np.int32), _filled((c,), 0, dtype)
    return OnlineState(summary, cuts, weight, bias, optimizer.init((weight, bias)), step, prior)


def _shape(summary):
    if isinstance(summary, GaussianSummary):
        return summary.count.shape
    return summary.n_classes, summary.n_predictors


def _dtype(summary):
    if isinstance(summary, GaussianSummary):
        return summary.mean.dtype
    if isinstance(summary, GKClass):
        return summary.values.dtype
    return summary.breaks.dtype


def _welford(s: GaussianSummary, x, y, w):
    """One weighted row (West 1979 / Welford): exact, no matmul; x `(p,)`, NaN skipped."""
    c = s.count.shape[0]
    present = ~jnp.isnan(x)
    wk = (jax.nn.one_hot(y, c, dtype=x.dtype) * w)[:, None] * present[None, :]  # (c, p)
    xv = jnp.where(present, x, 0.0)[None, :]
    count = s.count + wk
    delta = xv - s.mean
    mean = s.mean + jnp.where(count > 0, wk / jnp.where(count > 0, count, 1), 0.0) * delta
    m2 = s.m2 + wk * delta * (xv - mean)
    return GaussianSummary(count, mean, m2)


def _update_summary(summary, xb, yb, valid):
    if isinstance(summary, GaussianSummary):
        w = valid.astype(xb.dtype)
        if xb.shape[0] == 1:
            return _welford(summary, xb[0], yb[0], w[0])
        return update_gaussian(summary, xb, yb, w)
    xb = jnp.where(valid[:, None], xb, jnp.nan)  # padded rows are missing values
    if isinstance(summary, GKClass):
        return update_gkclass(summary, xb, yb)
    return update_cpid(summary, xb, yb)


def _block_step(cfg: OnlineConfig, state: OnlineState, block, rate, *, test: bool):
    xb, yb, valid = block
    out = None
    L0 = None
    if test or cfg.order == "weights_first":
        L0 = log_contributions(
            state.summary,
            state.cuts,
            xb,
            var_smoothing=cfg.var_smoothing,
            smoothing=cfg.smoothing,
            standardize=cfg.standardize,
        )
        H0 = _scores(state, L0, cfg)
        out = jnp.argmax(H0, axis=-1) == yb
    grad_state = state
    new_summary = _update_summary(state.summary, xb, yb, valid)
    rows = _rows_of(state)
    new_rows = rows + (jax.nn.one_hot(yb, rows.shape[0], dtype=rows.dtype) * valid[:, None]).sum(0)
    state = OnlineState(
        new_summary, state.cuts, state.weight, state.bias, state.opt_state, state.n_steps, new_rows
    )
    if cfg.learn:
        if cfg.order == "summary_first":
            grad_state = state
            L = log_contributions(
                new_summary,
                state.cuts,
                xb,
                var_smoothing=cfg.var_smoothing,
                smoothing=cfg.smoothing,
                standardize=cfg.standardize,
            )
        else:
            L = L0
        active = jnp.all(_rows_of(grad_state) >= cfg.warmup)
        lp = log_prior(grad_state.summary, cfg.prior_smoothing, _rows_of(grad_state))
        bs = cfg.batch_size
        nb = xb.shape[0] // bs
        if bs == 1:  # row by row: the fused step (see `_sgd_rows`)
            go = active & valid
            lpb = jnp.broadcast_to(lp, (xb.shape[0],) + lp.shape)
            weight, bias, opt_state, n_steps, _ = _sgd_rows(
                cfg,
                state.weight,
                state.bias,
                state.opt_state,
                state.n_steps,
                L,
                lpb,
                go,
                yb,
                rate=rate,
                pc=True,
            )
            state = OnlineState(
                state.summary, state.cuts, weight, bias, opt_state, n_steps, state.class_rows
            )
            return state, out

        def sgd(carry, mb):
            weight, bias, opt_state, n_steps = carry
            Lm, ym, vm = mb
            H = (lp + bias)[None, :] + einsum("rik,ik->rk", Lm, weight)
            g = sgd_gradient(H, Lm, ym, vm)
            if cfg.plain_sgd:  # optax.sgd(rate)'s update, the rate traced
                new_w, new_b, new_opt = weight - rate * g[0], bias - rate * g[1], opt_state
            else:
                updates, new_opt = cfg.optimizer.update(g, opt_state, (weight, bias))
                new_w, new_b = optax.apply_updates((weight, bias), updates)
            go = active & jnp.any(vm)
            pick = lambda a, b: jax.tree.map(lambda u, v: jnp.where(go, u, v), a, b)
            return (
                pick(new_w, weight),
                pick(new_b, bias),
                pick(new_opt, opt_state),
                n_steps + go.astype(n_steps.dtype),
            ), None

        mbs = (L.reshape((nb, bs) + L.shape[1:]), yb.reshape(nb, bs), valid.reshape(nb, bs))
        carry = (state.weight, state.bias, state.opt_state, state.n_steps)
        if nb == 1:
            carry, _ = sgd(carry, jax.tree.map(lambda a: a[0], mbs))
        else:
            carry, _ = lax.scan(sgd, carry, mbs)
        weight, bias, opt_state, n_steps = carry
        state = OnlineState(
            state.summary, state.cuts, weight, bias, opt_state, n_steps, state.class_rows
        )
    return state, out


# --------------------------------------------------------------------------------------------------
# Fused row-by-row path (batch size 1).
#
# Why: a scan step of `_block_step` with one row runs ~40 small XLA kernels (two pooled-variance
# evaluations, log-prior and class-count reductions, an optax tree update, masks per leaf), and on
# CPU their dispatch (~0.1 us each), not the ~2k flops of arithmetic, bounds the speed. So:
#  * Gaussian summaries with `summary_chunk = 1`: the summaries after each of R rows
#    (`_welford_rows`: Welford on G groups of rows at once, then Chan merges), their
#    log-densities L0 (before the row, for the test) and L (after it, for the gradient), the log
#    priors and the warm-up masks are computed for a block of rows at once (vectorized);
#  * only the weight recursion stays sequential (`_sgd_rows`): with plain SGD its step is one
#    reduction (H0 and H together), a softmax over the c classes unrolled, and one elementwise
#    update of a single `(c, p + 1)` carry [w^T | b], unrolled `_UNROLL` times; the test scores
#    H0 are scan outputs and the argmax, the step count and the masks are done outside the loop.
# Same model and order of operations as `_block_step`; results agree up to float rounding (the
# tests compare with a float64 NumPy loop). XLA's CPU code for fused concatenations is not
# vectorized, so large arrays are kept apart (no stacking in the vectorized part).
# --------------------------------------------------------------------------------------------------
_ROW_BLOCK = 256  # rows per vectorized block of the Gaussian row-by-row path
_WELFORD_GROUPS = 16  # groups of rows updated at once by `_welford_rows`
_UNROLL = 8  # unrolled row steps per loop iteration (fewer loop-control kernels per row)


def _softmax_small(H):
    """Softmax over a short last axis, unrolled (no reduction kernels inside a scan step)."""
    c = H.shape[-1]
    m = H[..., 0]
    for k in range(1, c):
        m = jnp.maximum(m, H[..., k])
    e = jnp.exp(H - m[..., None])
    tot = e[..., 0]
    for k in range(1, c):
        tot = tot + e[..., k]
    return e / tot[..., None]


def _sgd_rows(
    cfg: OnlineConfig,
    weight,
    bias,
    opt_state,
    n_steps,
    L,
    lp,
    go,
    y,
    L0=None,
    lp0=None,
    rate=None,
    pc=False,
):
    r"""Row-by-row SGD (batch 1), in order, over R rows.

    `L` `(R, c, p)` log-densities for the gradient (class-major: p is the fast axis), `lp`
    `(R, c)` log priors, `go` `(R,)` step mask, `y` `(R,)`. With `L0`, `lp0` (the state before
    each row) every row is also scored with the weights before its own step and H0 `(R, c)` is
    returned (else None). `pc=True`: `L` is `(R, p, c)` (no test). `rate`: the plain SGD step
    (`cfg.plain_sgd`). Returns (weight, bias, opt_state, n_steps, H0)."""
    if pc and not cfg.plain_sgd:
        L = jnp.swapaxes(L, 1, 2)
        L0 = None if L0 is None else jnp.swapaxes(L0, 1, 2)
        pc = False
    R, c, p = (L.shape[0], L.shape[2], L.shape[1]) if pc else L.shape
    dtype = L.dtype
    T = jax.nn.one_hot(y, c, dtype=dtype)
    test = L0 is not None
    if pc:  # plain SGD on (R, p, c) log-densities: carry [w; b] `(p + 1, c)`, no transposes
        assert not test
        V = jnp.concatenate([lp, T, go.astype(dtype)[:, None]], axis=1)
        ones = jnp.ones((1, c), dtype)

        def step_pc(W, row):
            lt, v = row
            h = v[:c] + W[p] + (W[:p] * lt).sum(axis=0)
            dH = jnp.where(v[-1] > 0, _softmax_small(h) - v[c : 2 * c], 0.0)
            return W - rate * (jnp.concatenate([lt, ones], axis=0) * dH[None, :]), None

        W, _ = lax.scan(
            step_pc, jnp.concatenate([weight, bias[None, :]], axis=0), (L, V), unroll=_UNROLL
        )
        return W[:p], W[p], opt_state, n_steps + go.sum().astype(n_steps.dtype), None
    if not cfg.plain_sgd:  # any optax optimizer: its update per row

        def step(carry, row):
            w, b, opt, ns = carry
            if test:
                Lr, lpr, Tr, gr, L0r, lp0r = row
                h0 = lp0r + b + (w.T * L0r).sum(axis=1)
            else:
                Lr, lpr, Tr, gr = row
                h0 = None
            dH = jnp.where(gr, _softmax_small(lpr + b + (w.T * Lr).sum(axis=1)) - Tr, 0.0)
            updates, new_opt = cfg.optimizer.update((dH[None, :] * Lr.T, dH), opt, (w, b))
            new_w, new_b = optax.apply_updates((w, b), updates)
            pick = lambda u, v: jax.tree.map(lambda a, d: jnp.where(gr, a, d), u, v)
            return (
                pick(new_w, w),
                pick(new_b, b),
                pick(new_opt, opt),
                ns + gr.astype(ns.dtype),
            ), h0

        rows = (L, lp, T, go) + ((L0, lp0) if test else ())
        (weight, bias, opt_state, n_steps), H0 = lax.scan(
            step, (weight, bias, opt_state, n_steps), rows
        )
        return weight, bias, opt_state, n_steps, H0

    # per-row scalars in one array: [lp0 (test only), lp, T, go]; L0 and L are fed as they are (a
    # concatenation with a column of ones for the bias would cost XLA's CPU vectorization)
    V = jnp.concatenate(([lp0] if test else []) + [lp, T, go.astype(dtype)[:, None]], axis=1)
    k = 2 * c if test else c

    ones = jnp.ones((c, 1), dtype)

    def step(W, row):  # W (c, p + 1) = [w^T | b]: one carry, one update kernel
        if test:
            lt, l0t, v = row
            wl = W[:, :p]
            prod = jnp.concatenate([wl * l0t, wl * lt], axis=0)  # (2c, p): one reduction for both
            bb = jnp.concatenate([W[:, p], W[:, p]])
        else:
            lt, v = row
            prod, bb = W[:, :p] * lt, W[:, p]
        s = v[:k] + bb + prod.sum(axis=1)  # [H0, H] or H
        dH = jnp.where(v[-1] > 0, _softmax_small(s[k - c :]) - v[k : k + c], 0.0)
        W = W - rate * (dH[:, None] * jnp.concatenate([lt, ones], axis=1))
        return W, (s[:c] if test else None)

    rows = (L, L0, V) if test else (L, V)
    W, H0 = lax.scan(step, jnp.concatenate([weight.T, bias[:, None]], axis=1), rows, unroll=_UNROLL)
    return W[:, :p].T, W[:, p], opt_state, n_steps + go.sum().astype(n_steps.dtype), H0


def _chan_merge(a, b):
    """Chan, Golub & LeVeque (1979) merge of (count, mean, m2) states (as `merge_gaussian`; b may
    be empty)."""
    na, ma, sa = a
    nb, mb, sb = b
    n = na + nb
    pos = n > 0
    safe = jnp.where(pos, n, 1)
    d = mb - ma
    mean = jnp.where(pos, ma + d * (nb / safe), 0.0)
    m2 = jnp.where(pos, sa + sb + d * d * (na * nb / safe), 0.0)
    return n, mean, m2


def _welford_rows(s: GaussianSummary, xb, yb, valid):
    """The summaries after every row of a block: count, mean, m2 `(R + 1, c, p)` (index 0: the
    block start), as Welford row by row would give them (up to rounding).

    The block is cut into G groups of m rows; Welford's update (`_welford`) runs on the G groups
    at once from empty states (a loop of m steps instead of R), then each group's start state is
    chained by Chan's merge (a loop of G steps) and merged into its rows' states (vectorized).
    Arrays are kept apart and assembled by in-place updates: XLA's CPU code for fused
    concatenations is not vectorized."""
    R, p = xb.shape
    c = s.count.shape[0]
    G = math.gcd(R, _WELFORD_GROUPS)
    m = R // G
    T = jax.nn.one_hot(yb, c, dtype=xb.dtype) * valid[:, None].astype(xb.dtype)
    xs = jnp.swapaxes(xb.reshape(G, m, p), 0, 1)  # (m, G, p)
    ts = jnp.swapaxes(T.reshape(G, m, c), 0, 1)  # (m, G, c)

    def step(cur, row):  # cur: (count, mean, m2), each (G, c, p)
        x, t = row
        present = ~jnp.isnan(x)
        wk = t[:, :, None] * present[:, None, :]  # (G, c, p)
        xv = jnp.where(present, x, 0.0)[:, None, :]
        count = cur[0] + wk
        delta = xv - cur[1]
        mean = cur[1] + jnp.where(count > 0, wk / jnp.where(count > 0, count, 1), 0.0) * delta
        m2 = cur[2] + wk * delta * (xv - mean)
        return (count, mean, m2), (count, mean, m2)

    zero = jnp.zeros((G, c, p), xb.dtype)
    _, local = lax.scan(step, (zero, zero, zero), (xs, ts))  # each (m, G, c, p)
    start = (s.count, s.mean, s.m2)
    # a loop, not unrolled code: XLA would fuse the chain into its consumer and recompute it
    _, starts = lax.scan(
        lambda a, b: (_chan_merge(a, b), a), start, tuple(q[-1] for q in local)
    )  # each (G, c, p)
    states = _chan_merge(tuple(q[None] for q in starts), local)  # each (m, G, c, p)
    out = []
    for q0, q in zip(start, states, strict=True):
        buf = jnp.zeros((R + 1, c, p), xb.dtype).at[0].set(q0)
        out.append(
            lax.dynamic_update_slice_in_dim(buf, jnp.swapaxes(q, 0, 1).reshape(R, c, p), 1, axis=0)
        )
    return tuple(out)


def _class_sum(a):
    """Sum over the class axis -2 (kept), unrolled: c is small and p the fast axis."""
    t = a[..., 0:1, :]
    for k in range(1, a.shape[-2]):
        t = t + a[..., k : k + 1, :]
    return t


def _gaussian_params(count, mean, m2, var_smoothing, standardize=False):
    """Effective mean, variance and log-variance `(..., c, p)` of
    `summaries._effective_gaussian`, and whether each predictor has any value yet `(..., 1, p)`
    (if not, it contributes 0). With ``standardize`` the log-variance returned is that of the
    standardized value (log sigma² - log s², the constant of `standardized_offset`), and a
    predictor without spread yet contributes 0 as well."""
    tot = _class_sum(count)
    safe_tot = jnp.where(tot > 0, tot, 1)
    # pooled as an offset from the heaviest class's mean: exact for a constant column
    # (`suffstats.pooled_moments`)
    ref = jnp.take_along_axis(mean, jnp.argmax(count, axis=-2)[..., None, :], axis=-2)
    d = jnp.where(count > 0, mean - ref, 0.0)
    pmean = jnp.where(tot > 0, ref + _class_sum(count * d) / safe_tot, 0.0)
    pvar = (_class_sum(m2) + _class_sum(count * (mean - pmean) ** 2)) / safe_tot
    has = count > 0
    var = jnp.where(has, m2 / jnp.where(has, count, 1), pvar)
    mu = jnp.where(has, mean, pmean)
    spread = pvar > 0  # `has_spread` of the pooled moments (pooled exactly above)
    floor = jnp.where(spread, var_smoothing * pvar, 1.0)  # as `fit_mle` (see above)
    var = jnp.maximum(var + floor, jnp.finfo(var.dtype).tiny)  # as `_effective_gaussian`
    logvar = jnp.log(var)
    if standardize:  # log N + log s_i: `standardized_offset` (log s_i = 0.5 log pvar_i)
        logvar = logvar - 2.0 * log_pooled_sd(jnp.ones_like(pvar), pvar)
        return mu, var, logvar, spread  # no spread: term 0 (`log_contributions`)
    return mu, var, logvar, tot > 0


def _gaussian_rows(cfg: OnlineConfig, state: OnlineState, block, rate, *, test: bool):
    """`_block_step` for R consecutive one-row blocks on Gaussian summaries (batch size 1)."""
    xb, yb, valid = block  # (R, p), (R,), (R,)
    R = xb.shape[0]
    count, mean, m2 = _welford_rows(state.summary, xb, yb, valid)
    mu, var, logvar, seen = _gaussian_params(count, mean, m2, cfg.var_smoothing, cfg.standardize)
    const, scale = -0.5 * (_LOG_2PI + logvar), 0.5 / var
    rows0 = _rows_of(state)
    inc = jax.nn.one_hot(yb, rows0.shape[0], dtype=rows0.dtype) * valid[:, None]  # (R, c)
    nk = jnp.concatenate([rows0[None], rows0[None] + jnp.cumsum(inc, axis=0)])  # (R + 1, c)
    a = cfg.prior_smoothing
    den = nk.sum(axis=1, keepdims=True) + a * nk.shape[1]
    lps = jnp.log(nk + a) - jnp.log(den)
    lps = jnp.where(den > 0, lps, -jnp.log(jnp.asarray(nk.shape[1], lps.dtype)))  # as log_prior
    x = xb[:, None, :]
    miss = jnp.isnan(x)

    def dens(sl):
        out = const[sl] - (x - mu[sl]) ** 2 * scale[sl]
        return jnp.where(miss | ~seen[sl], 0.0, out)

    before, after = slice(0, R), slice(1, R + 1)
    L0 = dens(before) if test or cfg.order == "weights_first" else None
    summary = GaussianSummary(count[-1], mean[-1], m2[-1])
    weight, bias, opt_state, n_steps = state.weight, state.bias, state.opt_state, state.n_steps
    H0 = None
    if cfg.learn:
        at = after if cfg.order == "summary_first" else before
        L = dens(after) if cfg.order == "summary_first" else L0
        go = jnp.all(nk[at] >= cfg.warmup, axis=1) & valid
        weight, bias, opt_state, n_steps, H0 = _sgd_rows(
            cfg,
            weight,
            bias,
            opt_state,
            n_steps,
            L,
            lps[at],
            go,
            yb,
            L0 if test else None,
            lps[before] if test else None,
            rate=rate,
        )
    elif test:
        H0 = lps[before] + bias[None, :] + einsum("rki,ik->rk", L0, weight)
    out = (jnp.argmax(H0, axis=-1) == yb) if test else None
    return OnlineState(summary, state.cuts, weight, bias, opt_state, n_steps, nk[-1]), out


def _row_block(n_blocks: int) -> int:
    """Rows per vectorized block: the largest power of two dividing `n_blocks`, <= _ROW_BLOCK."""
    return min(n_blocks & -n_blocks, _ROW_BLOCK)


_SEGMENT_ROWS = 32768  # rows per full scan segment (more only where 8 blocks hold more)


def _segment_sizes(n_blocks: int, chunk: int) -> list[int]:
    """Block counts of the scan segments that cover `n_blocks` blocks of `chunk` rows: as many
    full segments of ``cap`` blocks as fit (``cap`` the largest power of two with
    ``cap * chunk <= _SEGMENT_ROWS``, at least 8), then one segment for the remainder, padded up
    to the next power of two (at least 8 blocks).

    So a fit compiles at most two scan programs (one per size), whatever its length, and the
    padding (invalid rows, which change nothing) is smaller than the remainder, or than 8 blocks
    where the remainder is smaller still. A binary decomposition of the block count (one segment
    per set bit) compiled up to log2(n) programs in one fit: four for 600 rows, ~0.6 s each at
    XLA's lowest optimization level."""
    cap = max(8, 1 << max((_SEGMENT_ROWS // max(chunk, 1)).bit_length() - 1, 0))
    full, rest = divmod(int(n_blocks), cap)
    sizes = [cap] * full
    if rest:
        sizes.append(max(8, 1 << (rest - 1).bit_length()))
    return sizes


def run_stream(
    cfg: OnlineConfig, state: OnlineState, X, y, valid, *, test: bool = False, rate=None
):
    r"""One pass over blocks: `X` `(n_blocks, B, p)`, `y`, `valid` `(n_blocks, B)`.

    A jit-compiled `lax.scan` of `_block_step` (module docstring). With `test=True` every row is
    first predicted with the state at its block start (prequential, test-then-train) and the
    per-row correctness `(n_blocks, B)` is returned (padded rows: False). `rate`: the SGD step
    of a `cfg.plain_sgd` config (required when it learns), a traced scalar: a sweep over learning
    rates compiles once."""
    if cfg.plain_sgd and cfg.learn:
        if rate is None:
            raise ValueError("run_stream: a plain-SGD config needs rate= (its learning rate)")
        if np.ndim(rate) != 0:
            raise ValueError(f"run_stream: rate must be a scalar; got shape {np.shape(rate)}")
        if not isinstance(rate, jax.core.Tracer):  # under jit / vmap a traced rate is not checked
            r = np.asarray(rate)
            if r.dtype.kind not in "iuf":  # a bool or a string is not a step size
                raise ValueError(f"run_stream: rate must be a finite number; got rate={rate!r}")
            check_real("rate", float(r), 0.0)
    elif rate is not None and not cfg.plain_sgd:
        raise ValueError(
            "run_stream: rate= is the default plain SGD's step; this config's optimizer has its "
            "own rates (pass rate=None)"
        )
    rate = None if rate is None else jnp.asarray(rate, state.weight.dtype)
    return _run_stream(cfg, state, X, y, valid, rate, test=test)


@partial(jax.jit, static_argnames=("cfg", "test"))
def _run_stream(cfg: OnlineConfig, state: OnlineState, X, y, valid, rate, *, test: bool):
    nb, chunk, p = X.shape
    if state.class_rows is None:  # a state built without row counts: the summary's counts
        state = OnlineState(
            state.summary,
            state.cuts,
            state.weight,
            state.bias,
            state.opt_state,
            state.n_steps,
            class_counts(state.summary),
        )
    if isinstance(state.summary, GaussianSummary) and chunk == 1 and cfg.batch_size == 1:
        r = _row_block(nb)
        step = lambda s, b: _gaussian_rows(cfg, s, b, rate, test=test)
        state, out = lax.scan(
            step,
            state,
            (X.reshape(nb // r, r, p), y.reshape(nb // r, r), valid.reshape(nb // r, r)),
        )
        if test:
            out = out.reshape(nb, 1)
    else:
        step = lambda s, b: _block_step(cfg, s, b, rate, test=test)
        state, out = lax.scan(step, state, (X, y, valid))
    if test:
        out = out & valid
    return state, out


def modl_second_level(summary) -> jax.Array | None:
    """`(p, s)` MODL cuts (+inf padded) of every predictor from the summary's bins (NumPy)."""
    if isinstance(summary, GaussianSummary):
        return None
    from ..discretize import modl_cuts_from_counts

    cuts1, counts = (np.asarray(a) for a in summary.bins())
    chosen = []
    for cu, co in zip(cuts1, counts, strict=True):
        keep = np.isfinite(np.concatenate([cu, [np.inf]])) | (co.sum(axis=1) > 0)
        m = int(keep.sum())
        cu, co = cu[: m - 1], co[:m]  # GK empty slots are trailing
        chosen.append(
            np.asarray(modl_cuts_from_counts(cu, co), dtype=np.float64) if m > 1 else np.zeros(0)
        )
    # fixed width (the most cuts the summary can give) so that a refresh never retraces the scan
    width = max(cuts1.shape[1], 1)
    out = np.full((len(chosen), width), np.inf)
    for i, c in enumerate(chosen):
        out[i, : len(c)] = c
    return jnp.asarray(out, _dtype(summary))


# --------------------------------------------------------------------------------------------------
# Estimators.
# --------------------------------------------------------------------------------------------------
def _check_optimizer(optimizer):
    """An optax `GradientTransformation` (an object with `init` and `update`), not a name."""
    if not (
        callable(getattr(optimizer, "init", None)) and callable(getattr(optimizer, "update", None))
    ):
        raise TypeError(
            f"optimizer must be an optax.GradientTransformation such as optax.adam(1e-3), or None "
            f"for optax.sgd(learning_rate); got optimizer={optimizer!r}"
        )


def _numeric_X(X, why):
    """X as a 2-D numeric NumPy array (NaN = missing), checked like NaiveBayes's X.

    None, ragged, non-2-D and empty inputs raise as in `jaxnb.data.check_X_2d`; a column holding
    non-numeric values (strings, objects) raises a `TypeError` naming it. Pandas frames and object
    arrays of numbers (None = missing) are converted."""
    if isinstance(X, np.ndarray) and X.ndim == 2 and X.size and X.dtype.kind in "biuf":
        return X
    cols, kinds, _ = check_X_2d(X)
    for j, k in enumerate(kinds):
        if k not in ("b", "i", "u", "f"):
            col = np.asarray(cols[j], dtype=object)
            ex = next((v for v in col if isinstance(v, str)), col[0])
            raise TypeError(
                f"X must be numeric ({why}); column {j} holds non-numeric values (e.g. {ex!r}): "
                f"convert it to numbers"
            )
    return np.column_stack([np.asarray(c, dtype=np.float64) for c in cols])


def _refuse_missing(estimator, X, fix):
    """With the estimator's ``missing="error"``, a NaN in the numeric ``X`` is a ValueError naming
    its columns and the fix (``missing='ignore'`` to ``fix``); models pickled before the
    parameter existed read as "ignore"."""
    if getattr(estimator, "missing", "ignore") != "error":
        return
    cols = np.flatnonzero(np.isnan(X).any(axis=0))
    if cols.size:
        raise ValueError(
            f"X has missing values (NaN) in columns {cols.tolist()}; pass missing='ignore' to "
            f"{fix}, or impute them"
        )


# the default optimizer's state layout (plain SGD keeps none); its rate is not used: the plain
# SGD step takes the estimator's learning rate as a traced argument (`OnlineConfig.plain_sgd`).
# By name, so a fitted estimator's config pickles (optax's own sgd is a closure)
_PLAIN_SGD = NamedOptimizer("sgd", learning_rate=1.0)


class OnlineWeightedNB(_Additive, BaseNB):
    r"""Online weighted naive Bayes (Stream eq. 2) trained by one pass of SGD on a stream.

    Numeric predictors only (NaN = missing, contributes 0). See the module docstring for the model,
    the update order and the block / mini-batch protocol.

    Args:
      summary: "gaussian" (Stream §3.3), "gkclass" (GK quantiles with class counts, §3.2) or
        "cpid" (§3.1).
      learning_rate: SGD step eta (Stream §2.2: 1e-4); ignored if `optimizer` is given. A traced
        argument of the compiled stream: estimators that differ only in it share their compiled
        programs (a learning-rate sweep compiles once; `run_stream(..., rate=)` vmaps over it).
        An `optimizer`'s own rates are part of it and compile per optimizer.
      optimizer: any `optax.GradientTransformation` (e.g. `optax.adam(1e-3)`, a schedule);
        default plain SGD at `learning_rate`. optax's own transformations do not pickle (they are
        closures); `jaxnb.optim.NamedOptimizer("adam", learning_rate=1e-3)` is the same optimizer
        and lets the estimator pickle.
      batch_size: rows per SGD step (mean gradient); 1 reproduces the paper.
      summary_chunk: rows per summary update / scan step, a multiple of `batch_size`; default
        `batch_size` for Gaussian summaries and max(64, batch_size) rounded to a multiple of
        `batch_size` for GKClass / cPiD.
      summary_size: GKClass capacity / cPiD number of intervals (Stream: 100).
      second_level: "bins" (the summary's own bins) or "modl" (MODL on the bins, refreshed every
        `refresh_every` examples); ignored for Gaussian summaries.
      refresh_every: examples between two MODL refreshes.
      order: "summary_first" (default) or "weights_first".
      var_smoothing: Gaussian variance floor, fraction of the pooled variance (as NaiveBayes).
      smoothing: Laplace pseudo-count of the binned summaries.
      prior_smoothing: pseudo-count of the streamed class prior (0: empirical frequencies).
      warmup: SGD starts once every class has this many examples.
      init_weight: initial w_ik (1: start from NB).
      missing: "ignore" (the default: a NaN is a missing value, left out of the summaries and
        contributing 0, as above) or "error" (a NaN in X is a ValueError, the default of the batch
        estimators).
      standardize: Gaussian summaries: True (default) learns the weights on log densities of the
        standardized values, log N(x_i; mu_ik, sigma²_ik) + log s_i with s_i the pooled standard
        deviation streamed so far (`standardized_offset`), so rescaling a column (m -> km)
        changes nothing; the model is Stream eq. 2's with a shifted bias (b_k + sum_i w_ik
        log s_i). A predictor without spread so far (a constant column) has no standardized
        density and contributes 0, so adding a constant column changes nothing either (on the
        raw terms its class-independent density, times per-class weights, acted as a second
        bias). False: the paper's raw log densities, whose SGD path depends on the units (one
        pass does not move b far enough to absorb a column's -log(scale) shift). Binned
        summaries score interval probabilities, unit-free either way.

    Attributes:
      state_: `OnlineState`; weights_ `(p, c)`; bias_ `(c,)` (with ``standardize``, the bias of
      the standardized terms); classes_; n_seen_.
    """

    _learn = True

    def __init__(
        self,
        summary="gaussian",
        learning_rate=1e-4,
        optimizer=None,
        batch_size=1,
        summary_chunk=None,
        summary_size=100,
        second_level="bins",
        refresh_every=20_000,
        order="summary_first",
        var_smoothing=1e-9,
        smoothing=1.0,
        prior_smoothing=1.0,
        warmup=10,
        init_weight=1.0,
        missing="ignore",
        standardize=True,
    ):
        self.summary = summary
        self.learning_rate = learning_rate
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.summary_chunk = summary_chunk
        self.summary_size = summary_size
        self.second_level = second_level
        self.refresh_every = refresh_every
        self.order = order
        self.var_smoothing = var_smoothing
        self.smoothing = smoothing
        self.prior_smoothing = prior_smoothing
        self.warmup = warmup
        self.init_weight = init_weight
        self.missing = missing
        self.standardize = standardize

    # ------------------------------------------------------------------ validation
    def _check_hyper(self):
        check_choice("summary", self.summary, SUMMARIES)
        for name in ("batch_size", "summary_size", "refresh_every"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {name}={v!r}")
        if self.summary_size < 3:
            raise ValueError(f"summary_size must be >= 3; got {self.summary_size}")
        # warm-up: a number of examples per class (0: SGD from the first row)
        check_int("warmup", self.warmup, 0)
        check_real("init_weight", self.init_weight)
        if self.optimizer is None:
            check_real("learning_rate", self.learning_rate, 0.0)
        else:
            _check_optimizer(self.optimizer)
        check_choice("second_level", self.second_level, ("bins", "modl"))
        check_choice("order", self.order, ("summary_first", "weights_first"))
        for name in ("var_smoothing", "prior_smoothing"):
            check_real(name, getattr(self, name), 0.0)
        check_real("smoothing", self.smoothing, 0.0, low_open=True)
        check_choice("missing", self.missing, ("error", "ignore"))
        if not isinstance(self.standardize, (bool, np.bool_)):
            raise TypeError(f"standardize must be True or False; got {self.standardize!r}")
        chunk = self._chunk()
        if chunk % self.batch_size:
            raise ValueError(
                f"summary_chunk must be a multiple of batch_size; got {chunk=} and "
                f"batch_size={self.batch_size}"
            )

    def _chunk(self, test: bool = False):
        """Rows per scan block; ``test``: for a test-then-train run (`prequential_correct`)."""
        if self.summary_chunk is not None:
            sc = self.summary_chunk
            if isinstance(sc, bool) or not isinstance(sc, (int, np.integer)) or sc < 1:
                raise ValueError(
                    f"summary_chunk must be None or an int >= 1; got {self.summary_chunk!r}"
                )
            return int(self.summary_chunk)
        if self.summary == "gaussian":
            return int(self.batch_size)
        b = int(self.batch_size)
        return max(64 // b, 1) * b

    def _config(self):
        opt = self.optimizer if self.optimizer is not None else _PLAIN_SGD
        return OnlineConfig(
            opt,
            int(self.batch_size),
            self.order,
            self._learn,
            float(self.var_smoothing),
            float(self.smoothing),
            float(self.prior_smoothing),
            int(self.warmup),
            self.optimizer is None,
            self._standardized(),
        )

    def _standardized(self) -> bool:
        """Whether the Gaussian terms are standardized (learned weights only: with w = 1 the
        offset is the same for every class and would only shift the joint log density)."""
        # a model pickled before the option existed was fitted on the raw terms
        return bool(
            self._learn and getattr(self, "standardize", False) and self.summary == "gaussian"
        )

    def _check_X(self, X, fit=False):
        if hasattr(self, "state_"):
            check_feature_names(getattr(self, "_names_in", None), X)
        X = _numeric_X(X, "online NB summarizes numeric predictors")
        if np.isinf(X).any():
            raise ValueError("X must be finite (NaN marks a missing value); got +/-inf")
        _refuse_missing(self, X, "leave them out")
        if hasattr(self, "n_features_in_") and X.shape[1] != self.n_features_in_:
            raise feature_count_error(X.shape[1], self.n_features_in_, type(self).__name__)
        dtype = float_dtype()
        with np.errstate(over="ignore"):  # an overflow is reported just below
            out = X.astype(dtype, copy=False)
        if out is not X and np.isinf(out).any():  # finite but beyond float32: would NaN the state
            i, j = np.argwhere(np.isinf(out))[0]
            raise ValueError(
                f"column {j} holds {X[i, j]:g}, beyond the range of {np.dtype(dtype)}; rescale "
                "the column, or enable float64 (jax.config.update('jax_enable_x64', True))"
            )
        if fit and out is not X:  # a training batch's spread too small for float32 variances
            # (Welford's M2 absorbs large ones): the variances and their floors would underflow
            _check_spread(out, range(out.shape[1]), overflow=False, X=X)
        return out

    def _new_summary(self, c, p):
        dtype = float_dtype()
        if self.summary == "gaussian":
            return GaussianSummary.init(c, p, dtype)
        chunk = self._chunk()
        if self.summary == "gkclass":
            return GKClass.init(
                c, p, capacity=int(self.summary_size), chunk_size=chunk, dtype=dtype
            )
        return CPiD.init(c, p, n_intervals=int(self.summary_size), chunk_size=chunk, dtype=dtype)

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y, classes=None):
        """One pass over (X, y) from a fresh state (same as one `partial_fit`)."""
        for a in ("state_", "classes_", "n_features_in_", "_names_in"):
            if hasattr(self, a):
                delattr(self, a)
        return self.partial_fit(X, y, classes=classes)

    def partial_fit(self, X, y, classes=None):
        """Continue the pass with the rows (X, y), in order."""
        self._run(X, y, classes, test=False)
        return self

    def _start(self, X, y, classes):
        self._check_hyper()
        names = _frame_names(X)
        X = self._check_X(X, fit=True)
        if not hasattr(self, "state_"):
            labels = first_partial_fit_classes(
                y,
                classes,
                X.shape[0],
                "online NB needs at least two classes: pass classes=[...] on the first "
                "partial_fit call",
            )
            yi = encode_in_classes(y, labels, X.shape[0])  # before any state is set
            self.classes_ = labels
            self.n_features_in_ = X.shape[1]
            self._names_in = names
            self._cfg = self._config()
            self._layout = self._state_layout()
            self.state_ = init_state(
                self._new_summary(len(labels), X.shape[1]),
                self._cfg.optimizer,
                init_weight=float(self.init_weight),
            )
            self.n_seen_ = 0
            self._next_refresh = int(self.refresh_every)
            return X, yi
        if classes is not None:
            check_same_classes(classes, self.classes_)
        yi = encode_in_classes(y, self.classes_, X.shape[0])
        # settings changed with set_params since the state was created: those that shape the state
        # cannot follow it; the others (learning rate, warm-up, order, smoothing...) apply from now
        layout = getattr(self, "_layout", None)
        if layout is not None and self._state_layout() != layout:
            raise ValueError(
                "summary / summary_size / summary_chunk / batch_size (block layout), optimizer "
                f"or standardize changed since the state was created ({layout} -> "
                f"{self._state_layout()}); call fit() to start again with them"
            )
        if self.optimizer is not None and self.optimizer is not self._cfg.optimizer:
            raise ValueError(
                "optimizer changed since the state was created; call fit() to start again"
            )
        self._cfg = self._config()
        return X, yi

    def _state_layout(self):
        """Settings baked into `state_` (summary type, size, block length, optimizer kind)."""
        if self.summary == "gaussian":  # standardize: what the bias and weights are fitted to
            return ("gaussian", self.optimizer is None, self._standardized())
        return (self.summary, int(self.summary_size), self._chunk(), self.optimizer is None)

    def _run(self, X, y, classes, *, test):
        X, yi = self._start(X, y, classes)
        # training rows as `_encode` gives them, for the importances; later calls add to them
        self._keep_sample(np.zeros((X.shape[0], 0), np.int32), X, more=self.n_seen_ > 0)
        chunk = self._chunk(test=test)
        outs = []
        start = 0
        n = X.shape[0]
        modl = self.second_level == "modl" and self.summary != "gaussian"
        while start < n:
            stop = n
            if modl:  # stop at the next refresh point (rounded to whole blocks)
                todo = max(self._next_refresh - self.n_seen_, 1)
                stop = min(n, start + -(-todo // chunk) * chunk)
            outs.append(self._scan(X[start:stop], yi[start:stop], chunk, test))
            self.n_seen_ += stop - start
            start = stop
            if modl and self.n_seen_ >= self._next_refresh:
                cuts = modl_second_level(self.state_.summary)
                st = self.state_
                self.state_ = OnlineState(
                    st.summary, cuts, st.weight, st.bias, st.opt_state, st.n_steps, st.class_rows
                )
                self._next_refresh = self.n_seen_ + int(self.refresh_every)
        if test:
            return np.concatenate(outs) if outs else np.zeros(0, bool)
        return None

    def _scan(self, X, y, chunk, test):
        """Scans whole blocks in segments of power-of-two block counts (`_segment_sizes`): full
        segments of the largest size, then the remainder padded with invalid rows to one more
        power of two. A fit compiles at most two scan shapes, and any sequence of `partial_fit`
        sizes at most ~log2(`_SEGMENT_ROWS` / 8) + 1, each once."""
        n, p = X.shape
        sizes = _segment_sizes(-(-n // chunk), chunk)
        outs = []
        row = 0
        for size in sizes:
            rows = size * chunk
            Xs, ys = X[row : row + rows], y[row : row + rows]
            m = Xs.shape[0]
            valid = np.zeros((size, chunk), bool)
            valid.reshape(-1)[:m] = True
            if m < rows:
                Xs = np.concatenate([Xs, np.full((rows - m, p), np.nan, X.dtype)])
                ys = np.concatenate([ys, np.zeros(rows - m, y.dtype)])
            self.state_, out = run_stream(
                self._cfg,
                self.state_,
                # device_put: no staging program per segment shape, as jnp.asarray compiles
                *jax.device_put((Xs.reshape(size, chunk, p), ys.reshape(size, chunk), valid)),
                test=test,
                rate=self.learning_rate if self._cfg.plain_sgd and self._cfg.learn else None,
            )
            if test:
                outs.append(np.asarray(out).reshape(-1)[:m])
            row += rows
        if test:
            return np.concatenate(outs) if outs else np.zeros(0, bool)
        return None

    def prequential_correct(self, X, y, classes=None) -> np.ndarray:
        """Test-then-train on (X, y) in one compiled scan; returns per-row correctness `(n,)`.

        Each row is predicted with the state at the start of its block (`summary_chunk` rows;
        with the default Gaussian block of one row, the state just before the row)."""
        return self._run(X, y, classes, test=True)

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self):
        if not hasattr(self, "state_"):
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit or partial_fit first"
            )

    def _encode(self, X):
        self._check_fitted()
        X = self._check_X(X)
        return np.zeros((X.shape[0], 0), np.int32), X

    def _log_joint_scores(self, codes, values):
        return log_joint(
            self.state_,
            values,
            var_smoothing=float(self.var_smoothing),
            smoothing=float(self.smoothing),
            prior_smoothing=float(self.prior_smoothing),
            standardize=self._standardized(),
        )

    def _contributions(self, codes, values):
        return _weighted_terms(
            self.state_,
            values,
            var_smoothing=float(self.var_smoothing),
            smoothing=float(self.smoothing),
            standardize=self._standardized(),
        )

    def _score_bias(self):
        return self.class_log_prior_ + self.bias_

    @property
    def weights_(self) -> np.ndarray:
        """`(p, c)` per-predictor, per-class weights w_ik."""
        self._check_fitted()
        return np.asarray(self.state_.weight)

    @property
    def bias_(self) -> np.ndarray:
        """`(c,)` learned bias b_k (added to the streamed log prior)."""
        self._check_fitted()
        return np.asarray(self.state_.bias)

    @property
    def class_log_prior_(self) -> np.ndarray:
        self._check_fitted()
        st = self.state_
        return np.asarray(log_prior(st.summary, float(self.prior_smoothing), _rows_of(st)))


class OnlineNB(OnlineWeightedNB):
    r"""Naive Bayes on online summaries: `OnlineWeightedNB` with w = 1, b = 0 fixed (no SGD).

    With Gaussian summaries and `prior_smoothing=0` its posterior equals
    `jaxnb.NaiveBayes(var_smoothing=v)` fitted on the same rows (same variance floor)."""

    _learn = False

    def __init__(
        self,
        summary="gaussian",
        summary_chunk=None,
        summary_size=100,
        second_level="bins",
        refresh_every=20_000,
        var_smoothing=1e-9,
        smoothing=1.0,
        prior_smoothing=1.0,
        missing="ignore",
    ):
        super().__init__(
            summary=summary,
            summary_chunk=summary_chunk,
            summary_size=summary_size,
            second_level=second_level,
            refresh_every=refresh_every,
            var_smoothing=var_smoothing,
            smoothing=smoothing,
            prior_smoothing=prior_smoothing,
            missing=missing,
        )

    def _chunk(self, test: bool = False):
        if self.summary_chunk is None and self.summary == "gaussian" and not test:
            # no SGD: when only fitting, the block size only changes speed (Chan merges are
            # exact); a test-then-train run keeps one-row blocks, so each row is predicted by
            # the model of all rows before it
            return 256
        return super()._chunk(test)


def _progress(msg):
    print(msg, file=sys.stderr, flush=True)


def register_methods(register) -> None:
    """Hook read by `jaxnb.registry`: adds the online and averaged NB estimators."""
    register(
        "OnlineNB",
        lambda kind: OnlineNB(),
        "NB on Gaussian stream summaries (one pass)",
        kinds=("continuous",),
    )
    register(
        "OnlineWNB",
        lambda kind: OnlineWeightedNB(optimizer=NamedOptimizer("adam", learning_rate=1e-2)),
        "online weighted NB (Stream eq 2), one pass, Adam",
        kinds=("continuous",),
    )
    from .anb import AveragedNB

    register(
        "ANB",
        lambda kind: AveragedNB(discrete={"discrete": "all", "mixed": "auto"}.get(kind)),
        "MODL + compression-averaged selective NB (Boullé 2007)",
        kinds=("discrete", "continuous", "mixed"),
    )
