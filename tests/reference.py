r"""Slow, loop-based float64 NumPy reference of mixed (categorical + Gaussian) naive Bayes.

Written from the equations, not from the JAX code (no Chan merges, no quadratic expansion, no
gathers):

* sufficient statistics by explicit loops over rows: N_j = Σ_r w_r [y_r = j],
  N_ijk = Σ_r w_r [y_r = j][x_ri = k], and per class and continuous predictor the observed weight,
  the weighted mean and the weighted sum of squared deviations from that mean (two passes);
* Ω⁽¹⁾ (MLE): log π_j = log(N_j / Σ_j N_j) (or fixed priors); Lidstone
  θ_ikj = (N_ijk + a) / (N_ij + a M_i) with N_ij = Σ_k N_ijk (missing codes are not counted);
  μ_ij = class mean, σ²_ij = m2_ij / W_ij + var_smoothing · s²_i, where s²_i is the weighted
  variance of predictor i over all observed rows regardless of class (the pooled variance of
  params.py); a class with no observed value gets μ_ij = pooled mean and
  σ²_ij = s²_i (1 + var_smoothing);
* Ω⁽⁰⁾ (marginal): θ_ik = (N_ik + a) / (N_i + a M_i), μ_i = pooled mean,
  σ²_i = s²_i (1 + var_smoothing), the same for every class;
* L[r, i, j] = log θ_{i, x_ri, j} or log N(x_ri; μ_ij, σ²_ij); 0 where x_ri is missing (code < 0 or
  non-finite value): the term is dropped, exact marginalization under NB;
* log joint = bias_j + Σ_i W_ij L[r, i, j] (bias = log π, W = 1 for NB); log posterior = log joint
  minus its log-sum-exp over classes; losses from the posterior.

Parameters are plain dicts with keys ``log_prior`` (c,), ``cpt`` (K, c), ``mean`` (c, r), ``std``
(c, r); discrete predictors come first, as in the core (docs/CONVENTIONS.md).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "offsets",
    "sufficient_stats",
    "pooled_moments",
    "fit_mle",
    "fit_marginal",
    "log_contributions",
    "log_joint",
    "log_posterior",
    "error_rate",
    "error_probability",
    "log_loss",
    "joint_log_likelihood",
    "predict_log_proba",
]


def offsets(n_states):
    """o_i = Σ_{i' < i} M_i': first row of predictor i in a flattened (K, c) table."""
    out, o = [], 0
    for m in n_states:
        out.append(o)
        o += int(m)
    return out


def _weights(weight, n):
    return np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)


def _observed(x):
    return bool(np.isfinite(x))


def sufficient_stats(codes, values, y, n_states, n_classes, weight=None):
    """Weighted class counts, state counts and per-class Gaussian moments, by loops over rows."""
    codes = np.asarray(codes)
    values = np.asarray(values, dtype=np.float64)
    n, q = codes.shape
    r = values.shape[1]
    w = _weights(weight, n)
    off = offsets(n_states)
    K = int(sum(n_states))
    class_weight = np.zeros(n_classes)
    counts = np.zeros((K, n_classes))
    for row in range(n):
        j = int(y[row])
        class_weight[j] += w[row]
        for i in range(q):
            k = int(codes[row, i])
            if k >= 0:
                counts[off[i] + k, j] += w[row]
    obs_weight = np.zeros((n_classes, r))
    mean = np.zeros((n_classes, r))
    m2 = np.zeros((n_classes, r))
    for j in range(n_classes):
        for i in range(r):
            s0 = s1 = 0.0
            for row in range(n):
                if int(y[row]) == j and _observed(values[row, i]):
                    s0 += w[row]
                    s1 += w[row] * values[row, i]
            mu = s1 / s0 if s0 > 0 else 0.0
            ss = 0.0
            for row in range(n):
                if int(y[row]) == j and _observed(values[row, i]):
                    ss += w[row] * (values[row, i] - mu) ** 2
            obs_weight[j, i], mean[j, i], m2[j, i] = s0, mu, ss
    return {
        "class_weight": class_weight,
        "counts": counts,
        "weight": obs_weight,
        "mean": mean,
        "m2": m2,
    }


def pooled_moments(values, weight=None):
    """Weighted mean and (biased, divide-by-W) variance of each column over its observed rows."""
    values = np.asarray(values, dtype=np.float64)
    n, r = values.shape
    w = _weights(weight, n)
    mean = np.zeros(r)
    var = np.zeros(r)
    for i in range(r):
        s0 = s1 = 0.0
        for row in range(n):
            if _observed(values[row, i]):
                s0 += w[row]
                s1 += w[row] * values[row, i]
        mu = s1 / s0
        ss = 0.0
        for row in range(n):
            if _observed(values[row, i]):
                ss += w[row] * (values[row, i] - mu) ** 2
        mean[i], var[i] = mu, ss / s0
    return mean, var


def _log_prior(class_weight, priors):
    if priors is not None:
        return np.log(np.asarray(priors, dtype=np.float64))
    return np.log(class_weight / class_weight.sum())


def fit_mle(
    codes, values, y, n_states, n_classes, weight=None, alpha=1.0, var_smoothing=1e-9, priors=None
):
    """Ω⁽¹⁾: Lidstone CPTs, class means, class variances plus var_smoothing × pooled variance."""
    st = sufficient_stats(codes, values, y, n_states, n_classes, weight)
    off = offsets(n_states)
    cpt = np.zeros_like(st["counts"])
    for i, m in enumerate(n_states):
        for j in range(n_classes):
            block = st["counts"][off[i] : off[i] + m, j]
            cpt[off[i] : off[i] + m, j] = (block + alpha) / (block.sum() + alpha * m)
    r = np.asarray(values).shape[1]
    mean = np.zeros((n_classes, r))
    var = np.zeros((n_classes, r))
    if r:
        pmean, pvar = pooled_moments(values, weight)
        for j in range(n_classes):
            for i in range(r):
                if st["weight"][j, i] > 0:
                    mean[j, i] = st["mean"][j, i]
                    var[j, i] = st["m2"][j, i] / st["weight"][j, i] + var_smoothing * pvar[i]
                else:
                    mean[j, i] = pmean[i]
                    var[j, i] = pvar[i] * (1.0 + var_smoothing)
    return {
        "log_prior": _log_prior(st["class_weight"], priors),
        "cpt": cpt,
        "mean": mean,
        "std": np.sqrt(var),
    }


def fit_marginal(
    codes, values, y, n_states, n_classes, weight=None, alpha=1.0, var_smoothing=1e-9, priors=None
):
    """Ω⁽⁰⁾: class-independent marginal CPTs and pooled Gaussians (same floor as `fit_mle`)."""
    st = sufficient_stats(codes, values, y, n_states, n_classes, weight)
    off = offsets(n_states)
    cpt = np.zeros_like(st["counts"])
    for i, m in enumerate(n_states):
        block = st["counts"][off[i] : off[i] + m].sum(1)
        theta = (block + alpha) / (block.sum() + alpha * m)
        for j in range(n_classes):
            cpt[off[i] : off[i] + m, j] = theta
    r = np.asarray(values).shape[1]
    mean = np.zeros((n_classes, r))
    std = np.zeros((n_classes, r))
    if r:
        pmean, pvar = pooled_moments(values, weight)
        for j in range(n_classes):
            mean[j] = pmean
            std[j] = np.sqrt(pvar * (1.0 + var_smoothing))
    return {
        "log_prior": _log_prior(st["class_weight"], priors),
        "cpt": cpt,
        "mean": mean,
        "std": std,
    }


def log_contributions(params, codes, values, n_states):
    """L (n, p, c): log θ or log Gaussian density per row, predictor and class; 0 when missing."""
    codes = np.asarray(codes)
    values = np.asarray(values, dtype=np.float64)
    n, q = codes.shape
    r = values.shape[1]
    c = len(params["log_prior"])
    off = offsets(n_states)
    L = np.zeros((n, q + r, c))
    for row in range(n):
        for j in range(c):
            for i in range(q):
                k = int(codes[row, i])
                if k >= 0:
                    L[row, i, j] = math.log(params["cpt"][off[i] + k, j])
            for i in range(r):
                x = values[row, i]
                if _observed(x):
                    mu, sd = params["mean"][j, i], params["std"][j, i]
                    L[row, q + i, j] = -0.5 * math.log(2.0 * math.pi * sd * sd) - (x - mu) ** 2 / (
                        2.0 * sd * sd
                    )
    return L


def log_joint(params, codes, values, n_states, weights=None, bias=None):
    """bias_j + Σ_i W_ij L[r, i, j]; bias defaults to log π and W to ones."""
    L = log_contributions(params, codes, values, n_states)
    n, p, c = L.shape
    if weights is None:
        W = np.ones((p, c))
    else:
        W = np.asarray(weights, dtype=np.float64)
        W = W if W.ndim == 2 else np.repeat(W[:, None], c, axis=1)
    b = params["log_prior"] if bias is None else np.asarray(bias, dtype=np.float64)
    out = np.zeros((n, c))
    for row in range(n):
        for j in range(c):
            out[row, j] = b[j] + sum(W[i, j] * L[row, i, j] for i in range(p))
    return out


def _logsumexp_rows(a):
    m = a.max(axis=1, keepdims=True)
    return m + np.log(np.exp(a - m).sum(axis=1, keepdims=True))


def log_posterior(params, codes, values, n_states, weights=None, bias=None):
    """log P(Y = j | x) = log joint − log Σ_j' exp(log joint_j')."""
    lj = log_joint(params, codes, values, n_states, weights, bias)
    return lj - _logsumexp_rows(lj)


def _wmean(x, weight):
    w = _weights(weight, len(x))
    return float((w * x).sum() / w.sum())


def error_rate(log_post, y, weight=None):
    """Weighted fraction of rows whose most probable class (first on ties) is not y."""
    wrong = np.array([float(np.argmax(lp) != t) for lp, t in zip(log_post, y, strict=True)])
    return _wmean(wrong, weight)


def error_probability(log_post, y, weight=None):
    """Weighted mean of 1 − P(Y = y_r | x_r)."""
    return _wmean(
        np.array([1.0 - math.exp(lp[t]) for lp, t in zip(log_post, y, strict=True)]), weight
    )


def log_loss(log_post, y, weight=None):
    """Weighted mean of −log P(Y = y_r | x_r)."""
    return _wmean(np.array([-lp[t] for lp, t in zip(log_post, y, strict=True)]), weight)


def joint_log_likelihood(log_joint_scores, y, weight=None):
    """Σ_r w_r log P(x_r, y_r) (weighted sum, not a mean)."""
    w = _weights(weight, len(y))
    return float(sum(w[r] * log_joint_scores[r, int(y[r])] for r in range(len(y))))


def predict_log_proba(
    train, test, n_states, n_classes, alpha=1.0, var_smoothing=1e-9, weight=None, priors=None
):
    """Fit Ω⁽¹⁾ on ``train = (codes, values, y)`` and return the log posterior of ``test = (codes,
    values)``."""
    params = fit_mle(*train, n_states, n_classes, weight, alpha, var_smoothing, priors)
    return log_posterior(params, *test, n_states)


# ------------------------------------------------------------------------------------------------
# Synthetic data shared by the tests (not part of the reference model).


def random_mixed(
    seed,
    n=40,
    n_states=(3, 4),
    n_continuous=2,
    n_classes=3,
    missing=0.0,
    class_probs=None,
    scales=None,
):
    """Class-dependent mixed data: ``codes`` int32 (n, q), ``values`` (n, r), ``y`` int32 and
    ``weight`` (n,).

    Every class occurs (the first ``n_classes`` rows are 0..c-1); discrete predictors are drawn from
    per-class Dirichlet CPTs, continuous ones from per-class Gaussians with column scales ``scales``
    (default 1, 10, 100, ... so the variance floor differs by predictor). A fraction ``missing`` of
    entries becomes -1 / NaN.
    """
    rng = np.random.default_rng(seed)
    q = len(n_states)
    y = rng.choice(n_classes, size=n, p=class_probs)
    y[:n_classes] = np.arange(n_classes)
    codes = np.zeros((n, q), np.int32)
    for i, m in enumerate(n_states):
        cpt = rng.dirichlet(np.full(m, 0.8), size=n_classes)
        for row in range(n):
            codes[row, i] = rng.choice(m, p=cpt[y[row]])
    if scales is None:
        scales = 10.0 ** np.arange(n_continuous)
    mu = rng.normal(scale=1.5, size=(n_classes, n_continuous))
    sd = rng.uniform(0.5, 2.0, size=(n_classes, n_continuous))
    values = (mu[y] + sd[y] * rng.normal(size=(n, n_continuous))) * np.asarray(scales)
    values = values + np.arange(n_continuous) * 3.0  # non-zero pooled means
    if missing:
        codes = np.where(rng.random(codes.shape) < missing, -1, codes).astype(np.int32)
        values = np.where(rng.random(values.shape) < missing, np.nan, values)
    weight = rng.uniform(0.2, 3.0, size=n)
    return codes, values, y.astype(np.int32), weight
