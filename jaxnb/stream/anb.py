r"""Averaged naive Bayes (ANB): MODL discretization + compression-weighted selective NB models.

The offline reference of the Stream paper (Table 2, row 2), after M. Boullé, *Compression-based
averaging of selective naive Bayes classifiers*, JMLR 8 (2007) 1659–1685 (and Boullé 2006b,
*Regularization and averaging of the selective naive Bayes classifier*, IJCNN 2006).

1. Every numeric predictor is discretized by MODL (Boullé 2006a; `jaxnb.discretize`), on
   elementary bins that are the `max_bins`-quantiles of the training values (exact MODL over
   distinct values is O(N²) per predictor; on 380k rows we pre-bin — a documented departure;
   with `max_bins >= ` distinct values it is exact). Discrete predictors keep their categories
   (MODL value grouping is not implemented). Conditional probabilities are Laplace-smoothed
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

`AveragedNB(mode=...)`: "average" (ANB, default), "map" (the MAP selective NB, weights 0/1), or
"nb" (offline NB on the MODL discretization, all weights 1: Stream Table 2 row 1).
"""

from __future__ import annotations

import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import gammaln

from ..discretize import apply_cuts, modl_cuts_from_counts
from ..estimators import BaseNB

__all__ = ["AveragedNB", "ffwbw_average", "modl_prebinned_cuts", "subset_prior_cost"]

MODES = ("average", "map", "nb")


def modl_prebinned_cuts(values, y, n_classes, max_bins=256):
    """MODL cuts of one numeric column on its `max_bins`-quantile elementary bins (NumPy)."""
    v = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(v)
    v, yy = v[ok], np.asarray(y)[ok]
    if v.size == 0:
        return np.zeros(0)
    grid = np.unique(np.quantile(v, np.arange(1, max_bins) / max_bins, method="lower"))
    grid = grid[grid < v.max()]
    code = np.searchsorted(grid, v, side="left")
    counts = np.zeros((grid.size + 1, n_classes))
    np.add.at(counts, (code, yy), 1.0)
    return np.asarray(modl_cuts_from_counts(grid, counts), dtype=np.float64)


def subset_prior_cost(k, p):
    r"""-log P(M) = log(p + 1) + log C(p, k) (Boullé 2007, §3)."""
    k = jnp.asarray(k, jnp.zeros(()).dtype) if not hasattr(k, "dtype") else k
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
            return (jnp.where(accept, mask2, mask), jnp.where(accept, S2, S),
                    jnp.where(accept, cost2, cost), acc_w + wm * mask2, acc_z + wm, n_models + 1)

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
            carry = _pass(codes_t, table, log_prior, y, carry, jax.random.permutation(kf, p),
                          forward=True, cost0=cost0)
            carry = _pass(codes_t, table, log_prior, y, carry, jax.random.permutation(kb, p),
                          forward=False, cost0=cost0)
            return carry, jnp.any(carry[0] != before), it + 1, key

        init = ((mask0, S0, cost0, acc_w, acc_z, n_models), jnp.array(True), 0, key)
        (mask, _, cost, acc_w, acc_z, n_models), _, _, _ = lax.while_loop(cond, body, init)
        better = cost < best_cost
        return (acc_w, acc_z, n_models, jnp.where(better, mask, best_mask),
                jnp.where(better, cost, best_cost)), None

    acc = (acc_w0, zero, jnp.zeros((), jnp.int32), mask0, cost0)
    (acc_w, acc_z, n_models, best_mask, best_cost), _ = lax.scan(
        one_start, acc, jax.random.split(key, n_starts))
    weights = jnp.where(acc_z > 0, acc_w / jnp.where(acc_z > 0, acc_z, 1.0), 0.0)
    return weights, best_mask, best_cost, cost0, n_models


@jax.jit
def _log_joint(table, log_prior, weights, codes):
    """`(n, c)` log pi + sum_i w_i table[i, code_i]; code -1 (missing / unseen) contributes 0."""
    p = table.shape[0]
    L = table[jnp.arange(p)[None, :], jnp.maximum(codes, 0)]  # (n, p, c)
    L = jnp.where((codes < 0)[:, :, None], 0.0, L)
    return log_prior[None, :] + jnp.einsum("rik,i->rk", L, weights)


class AveragedNB(BaseNB):
    r"""Offline averaged naive Bayes (Boullé 2007) on MODL-discretized predictors.

    Args:
      mode: "average" (compression-based averaging, ANB), "map" (MAP selective NB) or "nb"
        (all predictors, weight 1: NB on the MODL discretization).
      discrete: indices of discrete (categorical) columns, kept as categories; None: all numeric.
      max_bins: elementary bins (quantiles) per numeric column before MODL.
      alpha: Laplace pseudo-count of the interval frequencies.
      n_starts, max_passes: MS(FFWBW) restarts and passes per restart.
      seed: seed of the random visit orders.

    Attributes:
      weights_ `(p,)` in [0, 1]; selected_ (indices of the MAP model); cuts_ (per column, None for
      discrete); n_intervals_ `(p,)`; map_cost_, null_cost_, n_models_; classes_; fit_time_.
    """

    def __init__(self, mode="average", discrete=None, max_bins=256, alpha=1.0, n_starts=3,
                 max_passes=10, seed=0):
        self.mode = mode
        self.discrete = discrete
        self.max_bins = max_bins
        self.alpha = alpha
        self.n_starts = n_starts
        self.max_passes = max_passes
        self.seed = seed

    def _check_hyper(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got mode={self.mode!r}")
        for name in ("max_bins", "n_starts", "max_passes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {name}={v!r}")
        if not self.alpha > 0:
            raise ValueError(f"alpha must be > 0; got alpha={self.alpha!r}")

    def _discrete_mask(self, p):
        mask = np.zeros(p, bool)
        if self.discrete is not None:
            idx = np.asarray(self.discrete)
            if idx.dtype == bool:
                if idx.shape != (p,):
                    raise ValueError(f"discrete mask must have shape ({p},); got {idx.shape}")
                return idx
            if idx.size and (idx.min() < -p or idx.max() >= p):
                raise ValueError(f"discrete indices must lie in [0, {p}); got {idx}")
            mask[idx] = True
        return mask

    def _check_X(self, X, fit=False):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n, p); got shape {X.shape}")
        X = X.astype(np.float64)
        if np.isinf(X).any():
            raise ValueError("X must be finite (NaN marks a missing value); got +/-inf")
        if not fit and X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} columns; fitted with {self.n_features_in_}")
        return X

    def _codes(self, X):
        codes = np.empty(X.shape, np.int32)
        for i in range(X.shape[1]):
            if self._disc[i]:
                cats = self.categories_[i]
                pos = np.searchsorted(cats, X[:, i])
                pos = np.minimum(pos, len(cats) - 1)
                codes[:, i] = np.where((cats[pos] == X[:, i]) & ~np.isnan(X[:, i]), pos, -1)
            else:
                codes[:, i] = apply_cuts(X[:, i], self.cuts_[i])
        return codes

    def fit(self, X, y):
        """Discretize, search, average (module docstring)."""
        self._check_hyper()
        X = self._check_X(X, fit=True)
        classes, yi = np.unique(np.asarray(y), return_inverse=True)
        if yi.shape[0] != X.shape[0]:
            raise ValueError(f"X and y have mismatched lengths: {X.shape[0]} and {yi.shape[0]}")
        if len(classes) < 2:
            raise ValueError("y needs at least two classes")
        t0 = time.perf_counter()
        n, p = X.shape
        c = len(classes)
        self.classes_ = classes
        self.n_features_in_ = p
        self._disc = self._discrete_mask(p)
        self.cuts_ = [None] * p
        self.categories_ = [None] * p
        for i in range(p):
            if self._disc[i]:
                col = X[:, i]
                self.categories_[i] = np.unique(col[~np.isnan(col)])
            else:
                self.cuts_[i] = modl_prebinned_cuts(X[:, i], yi, c, self.max_bins)
        codes = self._codes(X)
        m = np.array([len(self.categories_[i]) if self._disc[i] else len(self.cuts_[i]) + 1
                      for i in range(p)])
        self.n_intervals_ = m
        width = int(m.max())
        counts = np.zeros((p, width, c))
        rows = np.broadcast_to(np.arange(p)[None, :], codes.shape)
        ok = codes >= 0
        np.add.at(counts, (rows[ok], codes[ok], np.broadcast_to(yi[:, None], codes.shape)[ok]), 1)
        class_tot = counts.sum(axis=1)  # (p, c)
        table = np.log(counts + self.alpha) - np.log(class_tot + self.alpha * m[:, None])[:, None]
        table[np.arange(width)[None, :] >= m[:, None]] = 0.0
        n_class = np.bincount(yi, minlength=c).astype(np.float64)
        dtype = jnp.zeros(()).dtype
        self._table = jnp.asarray(table, dtype)
        self._log_prior = jnp.asarray(np.log(n_class / n_class.sum()), dtype)
        self.discretize_time_ = time.perf_counter() - t0
        if self.mode == "nb":
            self.weights_ = np.ones(p)
            self.selected_ = np.arange(p)
        else:
            # missing values: code 0 in the search would be wrong; map them to a zero row instead
            table_s = jnp.concatenate([self._table, jnp.zeros((p, 1, c), dtype)], axis=1)
            codes_t = jnp.asarray(np.where(codes >= 0, codes, width).T.astype(np.int32))
            w, best, best_cost, cost0, n_models = ffwbw_average(
                codes_t, table_s, self._log_prior, jnp.asarray(yi, jnp.int32),
                jax.random.key(self.seed), n_starts=int(self.n_starts),
                max_passes=int(self.max_passes))
            self.selected_ = np.flatnonzero(np.asarray(best))
            self.map_cost_ = float(best_cost)
            self.null_cost_ = float(cost0)
            self.n_models_ = int(n_models)
            self.weights_ = (np.asarray(w, np.float64) if self.mode == "average"
                             else np.asarray(best, np.float64))
        self.fit_time_ = time.perf_counter() - t0
        return self

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self):
        if not hasattr(self, "weights_"):
            raise ValueError("this AveragedNB is not fitted yet; call fit first")

    def _encode(self, X):
        self._check_fitted()
        X = self._check_X(X)
        return self._codes(X), np.zeros((X.shape[0], 0))

    def _log_joint_scores(self, codes, values):
        return _log_joint(self._table, self._log_prior,
                          jnp.asarray(self.weights_, self._table.dtype), codes)
