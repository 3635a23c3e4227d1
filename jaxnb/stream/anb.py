r"""Averaged naive Bayes (ANB): MODL discretization + compression-weighted selective NB models.

The offline reference of the Stream paper (Table 2, row 2), after M. Boullé, *Compression-based
averaging of selective naive Bayes classifiers*, JMLR 8 (2007) 1659–1685 (and Boullé 2006b,
*Regularization and averaging of the selective naive Bayes classifier*, IJCNN 2006).

1. Every numeric predictor is discretized by MODL (Boullé 2006a; `jaxnb.discretize`), on
   elementary bins that are the `max_bins`-quantiles of the training values (exact MODL over
   distinct values is O(N²) per predictor; on 380k rows we pre-bin — a documented departure;
   with `max_bins >= ` distinct values it is exact). The exact DP runs once, batched over all
   the numeric predictors (`modl_cuts_from_counts_many`). Discrete predictors keep their
   categories (`grouping="none"`, default) or are grouped by MODL value grouping (Boullé 2005,
   `grouping="modl"`: exact up to 8 values, greedy merges beyond; `jaxnb.discretize.modl_grouping`).
   Conditional probabilities are Laplace-smoothed
   interval frequencies: log P(x_i in t | k) = log (N_itk + alpha) - log (N_k + alpha I_i).
   A predictor MODL leaves with one interval contributes 0 to every class.
2. Selective NB models M (subsets of predictors) are scored by the MAP criterion
       cost(M) = log(p + 1) + log C(p, |M|) - sum_r log P_M(y_r | x_r)
   (Boullé 2007, §3: uniform prior on the number of selected predictors, then uniform on the
   subsets of that size; the likelihood is the conditional likelihood of the labels under NB
   restricted to M). Departure: the 2007 prior is stated here from our reading of the paper; the
   "construction / preparation" costs of later Khiops versions are not included.
3. Search: Boullé's multi-start fast forward–backward (MS(FFWBW)): from the empty model, a
   forward pass visits the predictors in random order and adds each one that lowers the cost,
   then a backward pass (another random order) removes each one whose removal lowers the cost;
   passes repeat until a pass changes nothing (or `max_passes`), restarting `n_starts` times
   with new orders. Each candidate costs O(N c) thanks to the running sum of log-contributions
   (the loop is a jit-compiled `lax.scan` over the visit order with `lax.cond` skipping the
   predictors a pass does not consider).
4. Compression-based averaging (Boullé 2007, §5): every model evaluated during the search gets
   the weight max(0, 1 - cost(M) / cost(M_0)), its compression rate relative to the empty model
   M_0 (BMA weights exp(-cost) would put all the mass on the MAP model); the model average of NB
   models reduces to a NB with per-predictor weights
       w_i = sum_M weight(M) [i in M] / sum_M weight(M)   in [0, 1],
   log P(k | x) = log pi_k + sum_i w_i log P(x_i | k) - log Z(x). Models evaluated several times
   (across passes and restarts) count as often as they are evaluated (we do not de-duplicate).
   `AveragedNB` runs the search with `ffwbw_search` (decisions in Python, one small jit-compiled
   O(N) candidate evaluation; random orders from NumPy's generator seeded by `seed`), which gives
   the same result as the single-program `ffwbw_average` for the same visit orders, without its
   seconds of compilation.

`AveragedNB(mode=...)`: "average" (ANB, default), "map" (the MAP selective NB, weights 0/1), or
"nb" (offline NB on the MODL discretization, all weights 1: Stream Table 2 row 1).
"""

from __future__ import annotations

import math
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import gammaln

from .._checks import check_choice, check_int, check_real
from .._dtypes import float_dtype
from .._matmul import einsum
from ..data import (
    FeatureEncoder,
    _frame_names,
    _is_missing_obj,
    check_feature_names,
    check_X_2d,
    encode_labels,
    feature_count_error,
    one_class_error,
)
from ..discretize import (
    apply_cuts,
    modl_cuts_from_counts,
    modl_cuts_from_counts_many,
    modl_grouping,
)
from ..estimators import _PAD_MAX_ROWS, BaseNB, _Additive, _row_bucket
from ..exceptions import NotFittedError
from .online import _numeric_X, _refuse_missing

__all__ = [
    "AveragedNB",
    "ffwbw_average",
    "ffwbw_search",
    "modl_prebinned_cuts",
    "search_orders",
    "subset_prior_cost",
]

MODES = ("average", "map", "nb")
GROUPINGS = ("none", "modl")


def _elementary_bins(values, y, n_classes, max_bins):
    """(grid, elementary-bin codes with -1 for NaN, `(len(grid) + 1, c)` per-class counts).

    The grid holds the distinct `max_bins`-quantiles ("lower" order statistics) of the non-missing
    values, below their maximum; bin b is (grid[b-1], grid[b]]. One argsort gives both the
    quantiles and the codes (a binary search per row is several times slower)."""
    v = np.asarray(values, dtype=np.float64)
    codes = np.full(v.shape, -1, np.int32)
    ok = ~np.isnan(v)
    rows = None if ok.all() else np.flatnonzero(ok)
    vv = v if rows is None else v[rows]
    if vv.size == 0:
        return np.zeros(0), codes, np.zeros((0, n_classes))
    order = np.argsort(vv)
    xs = vv[order]
    q = np.arange(1, max_bins) / max_bins
    grid = np.unique(xs[np.floor((xs.size - 1) * q).astype(np.intp)])
    grid = grid[grid < xs[-1]]
    ends = np.searchsorted(xs, grid, side="right")  # rows of bins 0..b: xs <= grid[b]
    sizes = np.diff(np.concatenate([[0], ends, [xs.size]]))
    sorted_codes = np.repeat(np.arange(grid.size + 1, dtype=np.int32), sizes)
    if rows is None:
        codes[order] = sorted_codes
    else:
        codes[rows[order]] = sorted_codes
    yy = np.asarray(y)
    keep = codes >= 0
    counts = np.bincount(
        codes[keep] * n_classes + yy[keep], minlength=(grid.size + 1) * n_classes
    ).astype(np.float64)
    return grid, codes, counts.reshape(grid.size + 1, n_classes)


def modl_prebinned_cuts(values, y, n_classes, max_bins=256):
    """MODL cuts of one numeric column on its `max_bins`-quantile elementary bins (NumPy)."""
    grid, _, counts = _elementary_bins(values, y, n_classes, max_bins)
    if counts.shape[0] == 0:
        return np.zeros(0)
    return np.asarray(modl_cuts_from_counts(grid, counts), dtype=np.float64)


def subset_prior_cost(k, p):
    r"""-log P(M) = log(p + 1) + log C(p, k) (Boullé 2007, §3)."""
    k = jnp.asarray(k, float_dtype()) if not hasattr(k, "dtype") else k
    return jnp.log(p + 1.0) + gammaln(p + 1.0) - gammaln(k + 1.0) - gammaln(p - k + 1.0)


def _nll(S, log_prior, y):
    H = S + log_prior[None, :]
    return -jnp.sum(jnp.take_along_axis(jax.nn.log_softmax(H, axis=-1), y[:, None], axis=1))


def _pass(codes_t, table, log_prior, y, carry, order, *, forward: bool, cost0):
    p = codes_t.shape[0]

    def visit(carry, i):
        mask, S, cost, acc_w, acc_z, n_models = carry
        in_i = mask[i]
        consider = jnp.logical_not(in_i) if forward else in_i

        def evaluate(_):
            sign = jnp.where(in_i, -1.0, 1.0).astype(S.dtype)
            Ti = table[i][codes_t[i]]  # (N, c)
            S2 = S + sign * Ti
            k2 = mask.sum() + jnp.where(in_i, -1, 1)
            cost2 = subset_prior_cost(k2.astype(S.dtype), float(p)) + _nll(S2, log_prior, y)
            mask2 = mask.at[i].set(jnp.logical_not(in_i))
            wm = jnp.maximum(0.0, 1.0 - cost2 / cost0)
            accept = cost2 < cost
            return (
                jnp.where(accept, mask2, mask),
                jnp.where(accept, S2, S),
                jnp.where(accept, cost2, cost),
                acc_w + wm * mask2,
                acc_z + wm,
                n_models + 1,
            )

        return lax.cond(consider, evaluate, lambda _: carry, None), None

    carry, _ = lax.scan(visit, carry, order)
    return carry


@partial(jax.jit, static_argnames=("n_starts", "max_passes"))
def ffwbw_average(codes_t, table, log_prior, y, key, *, n_starts=3, max_passes=10):
    r"""MS(FFWBW) search and compression-based averaging (module docstring, steps 2–4).

    Args:
      codes_t: `(p, N)` int interval / category codes (no missing values).
      table: `(p, m, c)` log P(x_i in interval t | k), padded rows unused.
      log_prior: `(c,)`; y: `(N,)` int class codes; key: PRNG key of the visit orders.

    Returns:
      (weights `(p,)`, MAP mask `(p,)`, MAP cost, empty-model cost, number of models evaluated).
    """
    p, n = codes_t.shape
    c = table.shape[-1]
    S0 = jnp.zeros((n, c), table.dtype)
    cost0 = subset_prior_cost(jnp.zeros((), table.dtype), float(p)) + _nll(S0, log_prior, y)
    mask0 = jnp.zeros((p,), bool)
    acc_w0 = jnp.zeros((p,), table.dtype)
    zero = jnp.zeros((), table.dtype)

    def one_start(acc, key):
        acc_w, acc_z, n_models, best_mask, best_cost = acc

        def cond(st):
            _, changed, it, _ = st
            return changed & (it < max_passes)

        def body(st):
            carry, _, it, key = st
            key, kf, kb = jax.random.split(key, 3)
            before = carry[0]
            carry = _pass(
                codes_t,
                table,
                log_prior,
                y,
                carry,
                jax.random.permutation(kf, p),
                forward=True,
                cost0=cost0,
            )
            carry = _pass(
                codes_t,
                table,
                log_prior,
                y,
                carry,
                jax.random.permutation(kb, p),
                forward=False,
                cost0=cost0,
            )
            return carry, jnp.any(carry[0] != before), it + 1, key

        init = ((mask0, S0, cost0, acc_w, acc_z, n_models), jnp.array(True), 0, key)
        (mask, _, cost, acc_w, acc_z, n_models), _, _, _ = lax.while_loop(cond, body, init)
        better = cost < best_cost
        return (
            acc_w,
            acc_z,
            n_models,
            jnp.where(better, mask, best_mask),
            jnp.where(better, cost, best_cost),
        ), None

    acc = (acc_w0, zero, jnp.zeros((), jnp.int32), mask0, cost0)
    (acc_w, acc_z, n_models, best_mask, best_cost), _ = lax.scan(
        one_start, acc, jax.random.split(key, n_starts)
    )
    weights = jnp.where(acc_z > 0, acc_w / jnp.where(acc_z > 0, acc_z, 1.0), 0.0)
    return weights, best_mask, best_cost, cost0, n_models


_BLOCK = 8  # candidates evaluated per call of the search's compiled step


@jax.jit
def _flip_block(S, contrib, log_prior, y, row_w, pend_i, pend_s, idx, signs):
    """Search step, c classes: apply the pending move S += pend_s * contrib[pend_i], then the
    NLL of each candidate S + signs[b] * contrib[idx[b]] `(B,)` (rows weighted by `row_w`: 1 for
    the data, 0 for padding rows). Returns (new S, NLLs)."""
    S = S + pend_s * contrib[pend_i]
    S2 = S[None] + signs[:, None, None] * contrib[idx]  # (B, N, c)
    lsm = jax.nn.log_softmax(S2 + log_prior[None, None, :], axis=-1)
    true = jnp.take_along_axis(lsm, y[None, :, None], axis=2)[..., 0]
    return S, -jnp.sum(row_w[None, :] * true, axis=1)


@jax.jit
def _flip_block_binary(z, contrib, row_w, pend_i, pend_s, idx, signs):
    r"""Search step, two classes: z = (2y - 1)(log-odds of class 1) `(N,)`, the NLL is
    sum_r row_w_r softplus(-z_r); `contrib[i]` holds predictor i's signed log-odds
    contributions."""
    z = z + pend_s * contrib[pend_i]
    z2 = z[None] + signs[:, None] * contrib[idx]  # (B, N)
    return z, jnp.sum(row_w[None, :] * jax.nn.softplus(-z2), axis=1)


def _prior_cost_py(k, p):
    """`subset_prior_cost` in Python float64."""
    return (
        math.log(p + 1.0) + math.lgamma(p + 1.0) - math.lgamma(k + 1.0) - math.lgamma(p - k + 1.0)
    )


def search_orders(seed, n_starts, max_passes, p):
    """`(n_starts, max_passes, 2, p)` random visit orders (forward, backward) of MS(FFWBW)."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n_starts, max_passes, 2, p)), axis=-1).astype(np.int32)


def ffwbw_search(codes_t, table, log_prior, y, orders):
    r"""MS(FFWBW) search and compression-based averaging, driven from Python (fast path).

    The same algorithm as `ffwbw_average` (module docstring, steps 2–4), with the visit orders
    given: `orders[s, t, 0]` / `orders[s, t, 1]` are the forward / backward orders of pass t of
    start s (`search_orders`). The decisions are taken in Python (float64 costs); the candidates
    are evaluated `_BLOCK` at a time by one small jit-compiled function (`_flip_block[_binary]`,
    O(B N c), compiled once), so nothing large is compiled (the single-program `ffwbw_average`
    spends seconds in XLA compilation). A block's candidates up to the first accepted one are
    exactly those a one-by-one scan evaluates against the same model; the rest are re-evaluated
    after the move, so the result is the one-by-one scan's. Two classes use the log-odds margin
    (one softplus per row instead of a c-way log-softmax). Up to `_PAD_MAX_ROWS` rows, the rows
    are padded to the estimators' row buckets with weight 0 (the NLL is a weighted sum), so
    training sets of nearby sizes share the compiled step.

    Returns NumPy (weights `(p,)`, MAP mask `(p,)`, MAP cost, empty-model cost, models evaluated).
    """
    orders = np.asarray(orders)
    n_starts, max_passes, _, p = orders.shape
    dtype = np.dtype(jax.dtypes.canonicalize_dtype(np.float64))  # float32 unless x64
    codes_t, table = np.asarray(codes_t), np.asarray(table, np.float64)
    lp, yy = np.asarray(log_prior, np.float64), np.asarray(y)
    # Rows padded to a bucket size (code 0, class 0, weight 0: finite terms that the weights drop)
    # so that training sets of nearby sizes share the compiled step; not above _PAD_MAX_ROWS,
    # where the step's compute per row outweighs a compilation.
    n = codes_t.shape[1]
    m = n if n > _PAD_MAX_ROWS else _row_bucket(n)
    codes_t, yy = np.pad(codes_t, ((0, 0), (0, m - n))), np.pad(yy, (0, m - n))
    row_w = jax.device_put((np.arange(m) < n).astype(dtype))
    # per-predictor log-contributions on the rows, gathered once (NumPy, no compilation)
    if table.shape[-1] == 2:
        sgn = (2.0 * yy - 1.0).astype(dtype)
        diff = (table[..., 1] - table[..., 0]).astype(dtype)  # (p, m)
        contrib = jax.device_put(np.take_along_axis(diff, codes_t, axis=1) * sgn[None, :])
        S0 = jax.device_put(sgn * dtype.type(lp[1] - lp[0]))

        def step(S, pend_i, pend_s, ii, ss):
            return _flip_block_binary(S, contrib, row_w, pend_i, pend_s, ii, ss)
    else:
        rows = np.arange(p)[:, None]
        contrib = jax.device_put(table.astype(dtype)[rows, codes_t])  # (p, N, c)
        S0 = jax.device_put(np.zeros((m, table.shape[-1]), dtype))
        lp_d, y_d = jax.device_put(lp.astype(dtype)), jax.device_put(yy.astype(np.int32))

        def step(S, pend_i, pend_s, ii, ss):
            return _flip_block(S, contrib, lp_d, y_d, row_w, pend_i, pend_s, ii, ss)

    zero_i, zero_s = np.asarray(0, np.int32), np.asarray(0.0, dtype)

    def evaluate(S, pending, cand, sign):
        """NLLs of the first `_BLOCK` candidates (padded with no-op ones) after the pending move."""
        ii = np.zeros(_BLOCK, np.int32)
        ii[: len(cand)] = cand
        ss = np.zeros(_BLOCK, dtype)
        ss[: len(cand)] = sign
        S, nll = step(S, *pending, ii, ss)
        return S, np.asarray(nll, np.float64)[: len(cand)]

    cost0 = _prior_cost_py(0, p) + float(evaluate(S0, (zero_i, zero_s), [0], 0.0)[1][0])
    acc_w, acc_z, n_models = np.zeros(p), 0.0, 0
    best_mask, best_cost = np.zeros(p, bool), cost0
    for s in range(n_starts):
        mask, S, cost, pending = np.zeros(p, bool), S0, cost0, (zero_i, zero_s)
        for t in range(max_passes):
            before = mask.copy()
            for forward, order in ((True, orders[s, t, 0]), (False, orders[s, t, 1])):
                # the predictors a pass considers (absent ones forward, present ones backward)
                # are fixed at its start: a move only flips the predictor it visits
                cand = [i for i in order.tolist() if mask[i] != forward]
                sign = 1.0 if forward else -1.0
                pos = 0
                while pos < len(cand):
                    block = cand[pos : pos + _BLOCK]
                    # the candidates of a block up to the first accepted one see the same model
                    # as in a one-by-one scan; the ones after it are evaluated again next call
                    S, nlls = evaluate(S, pending, block, sign)
                    pending = (zero_i, zero_s)
                    k2 = int(mask.sum()) + int(sign)
                    prior2 = _prior_cost_py(k2, p)
                    for b, i in enumerate(block):
                        cost2 = prior2 + float(nlls[b])
                        mask2 = mask.copy()
                        mask2[i] = forward
                        wm = max(0.0, 1.0 - cost2 / cost0)
                        acc_w += wm * mask2
                        acc_z += wm
                        n_models += 1
                        pos += 1
                        if cost2 < cost:
                            mask, cost = mask2, cost2
                            pending = (np.asarray(i, np.int32), np.asarray(sign, dtype))
                            break
            if (mask == before).all():
                break
        if cost < best_cost:
            best_mask, best_cost = mask, cost
    weights = acc_w / acc_z if acc_z > 0 else np.zeros(p)
    return weights, best_mask, best_cost, cost0, n_models


@jax.jit
def _log_joint(table, log_prior, weights, codes):
    """`(n, c)` log pi + sum_i w_i table[i, code_i]; code -1 (missing / unseen) contributes 0."""
    p = table.shape[0]
    L = table[jnp.arange(p)[None, :], jnp.maximum(codes, 0)]  # (n, p, c)
    L = jnp.where((codes < 0)[:, :, None], 0.0, L)
    return log_prior[None, :] + einsum("rik,i->rk", L, weights)


@jax.jit
def _weighted_terms(table, weights, codes):
    """`(n, p, c)` w_i table[i, code_i], the terms of `_log_joint` (0 for code -1 or w_i = 0)."""
    p = table.shape[0]
    L = table[jnp.arange(p)[None, :], jnp.maximum(codes, 0)]
    off = (codes < 0)[:, :, None] | (weights == 0)[None, :, None]
    return jnp.where(off, 0.0, L * weights[None, :, None])


def _category_codes(col):
    """(sorted distinct non-missing values, codes into them with -1 for NaN) of a discrete column.

    Small non-negative integer codes (the usual case) take an O(n) counting path."""
    ok = ~np.isnan(col)
    v = col if ok.all() else col[ok]
    codes = np.full(col.shape, -1, np.int32)
    if v.size == 0:
        return np.zeros(0), codes
    lo, hi = v.min(), v.max()
    if lo >= 0 and hi < 1 << 16 and (v == np.floor(v)).all():
        iv = v.astype(np.intp)
        present = np.bincount(iv, minlength=int(hi) + 1) > 0
        cats = np.flatnonzero(present).astype(np.float64)
        rank = (np.cumsum(present) - 1).astype(np.int32)
        codes[ok] = rank[iv]
    else:
        cats, inv = np.unique(v, return_inverse=True)
        codes[ok] = inv
    return cats, codes


class AveragedNB(_Additive, BaseNB):
    r"""Offline averaged naive Bayes (Boullé 2007) on MODL-discretized predictors.

    Args:
      mode: "average" (compression-based averaging, ANB), "map" (MAP selective NB) or "nb"
        (all predictors, weight 1: NB on the MODL discretization).
      discrete: the discrete (categorical) columns, kept as categories: a list of column indices
        or a boolean mask, "all", "none" (= None, the default: every column numeric) or "auto"
        (integer, boolean and text columns), as `jaxnb.NaiveBayes`'s ``discrete``. A discrete
        column holds numeric codes or text labels (strings, pandas categories); a text column
        that is not discrete is a TypeError.
      max_bins: elementary bins (quantiles) per numeric column before MODL.
      alpha: Laplace pseudo-count of the interval frequencies.
      n_starts, max_passes: MS(FFWBW) restarts and passes per restart.
      seed: seed of the random visit orders.
      grouping: "none" (discrete columns keep their categories) or "modl" (MODL value grouping).
      missing: "ignore" (the default, as in Khiops: a NaN drops that predictor's term, in training
        and prediction; exact marginalization under NB) or "error" (a NaN in X is a ValueError,
        the default of the other estimators).
      unseen: "ignore" (the default: a category of a discrete column never seen in training drops
        that term at prediction, a uniform likelihood) or "error" (a ValueError, the default of
        the other estimators).

    Attributes:
      weights_ `(p,)` in [0, 1]; selected_ (indices of the MAP model); cuts_ (per column, None for
      discrete); categories_ and groups_ (per discrete column: sorted values, group of each;
      for a text column the values are the codes 0, 1, ... of labels_); labels_ (per column: the
      sorted labels of a text column, else None);
      n_intervals_ `(p,)` (intervals or groups); map_cost_, null_cost_, n_models_; classes_;
      fit_time_.
    """

    def __init__(
        self,
        mode="average",
        discrete=None,
        max_bins=256,
        alpha=1.0,
        n_starts=3,
        max_passes=10,
        seed=0,
        grouping="none",
        missing="ignore",
        unseen="ignore",
    ):
        self.mode = mode
        self.grouping = grouping
        self.missing = missing
        self.unseen = unseen
        self.discrete = discrete
        self.max_bins = max_bins
        self.alpha = alpha
        self.n_starts = n_starts
        self.max_passes = max_passes
        self.seed = seed

    def _check_hyper(self):
        check_choice("mode", self.mode, MODES)
        check_choice("grouping", self.grouping, GROUPINGS)
        check_choice("missing", self.missing, ("error", "ignore"))
        check_choice("unseen", self.unseen, ("error", "ignore"))
        for name in ("max_bins", "n_starts", "max_passes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {name}={v!r}")
        check_real("alpha", self.alpha, 0.0, low_open=True)
        check_int("seed", self.seed, 0)

    def _discrete_mask(self, X_raw, p):
        """Boolean mask of the discrete columns (validated as `jaxnb.NaiveBayes`'s `discrete`;
        None is "none"); "auto" reads the column types of the training ``X_raw``."""
        discrete = "none" if self.discrete is None else self.discrete
        kinds = check_X_2d(X_raw)[1] if isinstance(discrete, str) and discrete == "auto" else None
        return FeatureEncoder(discrete=discrete)._discrete_mask(kinds, p)

    def _check_X(self, X, fit=False):
        if fit:
            self._names_in = _frame_names(X)
        else:
            check_feature_names(getattr(self, "_names_in", None), X)
        X = self._text_as_codes(X, fit)
        X = _numeric_X(X, "AveragedNB reads text only in the discrete columns it was fitted with")
        X = np.asarray(X, dtype=np.float64)  # no copy when already float64
        if np.isinf(X).any():
            raise ValueError("X must be finite (NaN marks a missing value); got +/-inf")
        _refuse_missing(self, X, "drop those terms")
        if not fit and X.shape[1] != self.n_features_in_:
            raise feature_count_error(X.shape[1], self.n_features_in_, type(self).__name__)
        return X

    def _text_as_codes(self, X, fit):
        """X with every text column (strings, labels) replaced by float codes of its sorted
        labels (`FeatureEncoder`'s label encoding, kept as ``_text_encoder``): NaN for a missing
        entry, and at prediction -1 (a code no training row has) for a label never seen in
        training with unseen='ignore' (`_codes` drops its term); unseen='error' raises. In
        training, a text column that is not discrete is a TypeError. Numeric tables pass
        unchanged, and so does any table when training found no text column."""
        if not fit:
            if getattr(self, "_text_encoder", None) is None:
                return X
            # else through the encoder, even for numbers: a number is no label of a text column
            # (it is an unseen category), never silently read as a label's code
        elif isinstance(X, np.ndarray) and X.ndim == 2 and X.size and X.dtype.kind in "biuf":
            self._text_encoder = None
            return X
        cols, kinds, n = check_X_2d(X)
        if fit:
            disc = self._discrete_mask(X, len(cols))
            text = [j for j, k in enumerate(kinds) if k in ("O", "U", "S", "category")]
            bad = [j for j in text if not disc[j]]
            if bad:
                col = np.asarray(cols[bad[0]], dtype=object)
                ex = next((v for v in col if isinstance(v, str)), col[0])
                raise TypeError(
                    f"X must be numeric in AveragedNB's numeric columns; column {bad[0]} holds "
                    f"non-numeric values (e.g. {ex!r}): pass discrete='auto' (text columns as "
                    f"categories), name it in discrete, or convert it to numbers"
                )
            if not text:
                self._text_encoder = None
                return X
            self._text_encoder = FeatureEncoder(
                discrete=text,
                missing="ignore",  # NaN below: `_refuse_missing` applies the estimator's policy
                offers=("unseen",),
                owner=type(self).__name__,
            ).fit(X)
        enc = self._text_encoder
        enc.unseen = getattr(self, "unseen", "ignore")  # the estimator's, as set now
        codes, values = enc.transform(X, dtype=np.float64)
        out = np.empty((n, len(cols)), np.float64)
        for t, j in enumerate(enc.discrete_idx_):
            # the encoder codes a missing entry and an ignored unseen label alike (-1); keep them
            # apart: NaN is missing (`missing` applies), -1 a category never seen (`unseen`)
            miss = np.fromiter((_is_missing_obj(v) for v in cols[j]), bool, count=n)
            out[:, j] = np.where(codes[:, t] >= 0, codes[:, t], np.where(miss, np.nan, -1.0))
        out[:, enc.continuous_idx_] = values
        return out

    def _codes(self, X):
        codes = np.empty(X.shape, np.int32)
        for i in range(X.shape[1]):
            if self._disc[i]:
                cats = self.categories_[i]
                pos = np.searchsorted(cats, X[:, i])
                pos = np.minimum(pos, len(cats) - 1)
                hit = (cats[pos] == X[:, i]) & ~np.isnan(X[:, i])
                new = ~hit & ~np.isnan(X[:, i])
                if new.any() and getattr(self, "unseen", "ignore") == "error":
                    raise ValueError(
                        f"column {i} has a category never seen in training "
                        f"({X[np.argmax(new), i]:g}); pass unseen='ignore' to drop that term "
                        "(uniform likelihood), or refit with it"
                    )
                codes[:, i] = np.where(hit, self.groups_[i][pos], -1)
            else:
                codes[:, i] = apply_cuts(X[:, i], self.cuts_[i])
        return codes

    def fit(self, X, y):
        """Discretize, search, average (module docstring)."""
        self._check_hyper()
        X_raw, X = X, self._check_X(X, fit=True)
        enc = self._text_encoder
        self.labels_ = [None] * X.shape[1]
        for t, j in enumerate(enc.discrete_idx_ if enc is not None else ()):
            self.labels_[j] = enc.categories_[t]
        classes, yi = encode_labels(y, X.shape[0])
        if len(classes) < 2:
            raise one_class_error(classes, "a classifier needs at least two classes")
        t0 = time.perf_counter()
        n, p = X.shape
        c = len(classes)
        self.classes_ = classes
        self.n_features_in_ = p
        self._disc = self._discrete_mask(X_raw, p)
        empty = [int(i) for i in np.flatnonzero(self._disc) if np.isnan(X[:, i]).all()]
        if empty:  # no category to code: the fit's log term and predict's lookup need one
            raise ValueError(
                f"discrete columns {empty} have no observed value (all NaN); drop them or "
                "leave them out of discrete"
            )
        self.cuts_ = [None] * p
        self.categories_ = [None] * p
        codes = np.empty((p, n), np.int32)  # transposed: one row per predictor
        # numeric: elementary quantile bins, then one batched exact MODL over all the columns
        num = np.flatnonzero(~self._disc)
        grids, bin_counts = [], []
        for i in num:
            grid, codes[i], counts_i = _elementary_bins(X[:, i], yi, c, self.max_bins)
            grids.append(grid)
            bin_counts.append(counts_i)
        todo = [j for j, co in enumerate(bin_counts) if co.shape[0] > 0]
        chosen = modl_cuts_from_counts_many([grids[j] for j in todo], [bin_counts[j] for j in todo])
        for i in num:
            self.cuts_[i] = np.zeros(0)
        for j, cuts in zip(todo, chosen, strict=True):
            i = num[j]
            self.cuts_[i] = np.asarray(cuts, dtype=np.float64)
            # elementary bin -> MODL interval (the cuts are grid points), = apply_cuts on X[:, i]
            lut = np.searchsorted(self.cuts_[i], np.append(grids[j], np.inf), side="left")
            col = codes[i]
            codes[i] = np.where(col >= 0, lut.astype(np.int32)[np.maximum(col, 0)], -1)
        self.groups_ = [None] * p
        for i in np.flatnonzero(self._disc):
            self.categories_[i], codes[i] = _category_codes(X[:, i])
            v = len(self.categories_[i])
            if self.grouping == "modl" and v > 1:  # MODL value grouping (Boullé 2005)
                ok_i = codes[i] >= 0
                per_value = np.bincount(codes[i][ok_i] * c + yi[ok_i], minlength=v * c)
                self.groups_[i] = modl_grouping(per_value.reshape(v, c)).astype(np.int32)
                codes[i] = np.where(ok_i, self.groups_[i][np.maximum(codes[i], 0)], -1)
            else:
                self.groups_[i] = np.arange(v, dtype=np.int32)
        m = np.array(
            [
                int(self.groups_[i].max(initial=-1)) + 1
                if self._disc[i]
                else len(self.cuts_[i]) + 1
                for i in range(p)
            ]
        )
        self.n_intervals_ = m
        # Rows per predictor in the table: the largest interval count rounded up to a power of two,
        # so refits whose discretizations differ by a few intervals share the compiled scorer and
        # search (rows >= m_i are zero and never indexed, as for predictors with fewer intervals).
        width = 1 << max(1, (int(m.max()) - 1).bit_length())
        offsets = np.arange(p) * width
        ok = codes >= 0
        flat = ((codes + offsets[:, None]) * c + yi[None, :])[ok]
        counts = np.bincount(flat, minlength=p * width * c).reshape(p, width, c).astype(np.float64)
        class_tot = counts.sum(axis=1)  # (p, c)
        table = np.log(counts + self.alpha) - np.log(class_tot + self.alpha * m[:, None])[:, None]
        table[np.arange(width)[None, :] >= m[:, None]] = 0.0
        n_class = np.bincount(yi, minlength=c).astype(np.float64)
        dtype = np.dtype(jax.dtypes.canonicalize_dtype(np.float64))
        # device_put, not jnp.asarray: the latter compiles a staging program per new shape
        self._table = jax.device_put(table.astype(dtype))
        self._log_prior = jax.device_put(np.log(n_class / n_class.sum()).astype(dtype))
        self.discretize_time_ = time.perf_counter() - t0
        if self.mode == "nb":
            self.weights_ = np.ones(p)
            self.selected_ = np.arange(p)
        else:
            # missing values: code 0 in the search would be wrong; map them to a zero row instead
            table_s = np.concatenate([table, np.zeros((p, 1, c))], axis=1)
            orders = search_orders(self.seed, int(self.n_starts), int(self.max_passes), p)
            w, best, best_cost, cost0, n_models = ffwbw_search(
                np.where(ok, codes, width), table_s, np.log(n_class / n_class.sum()), yi, orders
            )
            self.selected_ = np.flatnonzero(np.asarray(best))
            self.map_cost_ = float(best_cost)
            self.null_cost_ = float(cost0)
            self.n_models_ = int(n_models)
            self.weights_ = (
                np.asarray(w, np.float64)
                if self.mode == "average"
                else np.asarray(best, np.float64)
            )
        self._keep_sample(codes.T, np.zeros((n, 0)))  # the training rows, as `_encode` codes them
        self.fit_time_ = time.perf_counter() - t0
        return self

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self):
        if not hasattr(self, "weights_"):
            raise NotFittedError("this AveragedNB is not fitted yet; call fit first")

    def _encode(self, X):
        self._check_fitted()
        X = self._check_X(X)
        return self._codes(X), np.zeros((X.shape[0], 0))

    def _log_joint_scores(self, codes, values):
        # host arrays straight into the jitted scorers (jnp.asarray would stage them eagerly)
        weights = np.asarray(self.weights_, self._table.dtype)
        return _log_joint(self._table, self._log_prior, weights, codes)

    def _contributions(self, codes, values):
        weights = np.asarray(self.weights_, self._table.dtype)
        return _weighted_terms(self._table, weights, codes)

    def _score_bias(self):
        return self._log_prior
