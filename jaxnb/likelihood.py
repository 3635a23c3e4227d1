r"""Log-contributions, combination rules, posteriors and losses.

Every NB variant in jaxnb scores a row by a combination of per-predictor log-contributions

    L[r, i, j] = log f(x_ri | Y = j; Ω_i)

(one gather through the flattened CPT for all discrete predictors, one broadcast for all Gaussians):

    log_joint[r, j] = bias_j + Σ_i W[i, j] L[r, i, j],

with ``bias = log π`` and ``W = 1`` for NB (Eq. 1 of Vidaurre et al. 2011), a 0/1 mask for selective NB,
one weight per predictor for weighted NB (Ferreira weights, fsNB eq 6–7) and one weight per predictor
and class plus a free bias for the online weighted NB (Salperwyck et al., eq 2). Missing values
(negative codes, NaN values) contribute 0: the term is dropped, which is exact marginalization under NB.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .params import NBParams
from .suffstats import state_offsets

__all__ = [
    "log_contributions",
    "log_joint",
    "log_posterior",
    "predict",
    "error_rate",
    "error_probability",
    "log_loss",
    "joint_log_likelihood",
    "combine",
]

_LOG_2PI = float(np.log(2 * np.pi))


def _discrete_contributions(params: NBParams, codes):
    """(n, q, c) log θ[x_ri, j] by one gather; missing codes (< 0) give 0."""
    if not params.n_states:
        return jnp.zeros(codes.shape[:1] + (0, params.n_classes), params.cpt.dtype)
    off = jnp.asarray(state_offsets(params.n_states))
    miss = codes < 0
    flat = jnp.where(miss, 0, codes) + off[None, :]
    logc = jnp.log(params.cpt)[flat]
    return jnp.where(miss[..., None], 0.0, logc)


def _gaussian_contributions(params: NBParams, values):
    """(n, r, c) Gaussian log densities by one broadcast; NaN values give 0."""
    miss = ~jnp.isfinite(values)
    x = jnp.where(miss, 0.0, values)[:, None, :]  # (n, 1, r)
    z = (x - params.mean[None]) / params.std[None]  # (n, c, r)
    lp = -0.5 * (z * z) - jnp.log(params.std)[None] - 0.5 * _LOG_2PI
    lp = jnp.swapaxes(lp, -1, -2)
    return jnp.where(miss[..., None], 0.0, lp)


def log_contributions(params: NBParams, codes, values):
    r"""Per-predictor log-contributions L (n, p, c), predictor order [discrete, continuous]."""
    return jnp.concatenate(
        [_discrete_contributions(params, codes), _gaussian_contributions(params, values)], axis=1)


def combine(L, weights=None, bias=None):
    """Combination rule on precomputed contributions: bias (c,) + Σ_i W[i, j] L[:, i, j].

    Args:
      L: (n, p, c) log-contributions.
      weights: None (NB), (p,) per-predictor or (p, c) per-predictor-per-class weights.
      bias: optional (c,) bias (the log prior for NB-type rules).
    """
    W = _weights_pc(weights, L.shape[1], L.shape[2], L.dtype)
    s = jnp.einsum("npc,pc->nc", L, W)
    return s if bias is None else s + jnp.broadcast_to(bias, s.shape)


def _weights_pc(weights, p, c, dtype):
    if weights is None:
        return jnp.ones((p, c), dtype)
    w = jnp.asarray(weights, dtype)
    return jnp.broadcast_to(w if w.ndim == 2 else w[:, None], (p, c))


def log_joint(params: NBParams, codes, values, weights=None, bias=None):
    r"""Per-class log joint score of every row, shape (n, c).

    ``bias + Σ_i W[i, j] log f(x_ri | j)`` with bias = log π by default and W = 1 (NB). The Gaussian
    part is evaluated as three matrix products of the quadratic expansion in x − s_i (s_i the class-
    averaged mean, which keeps float32 cancellation small) instead of materializing (n, r, c).

    Args:
      params: NB parameters.
      codes: (n, q) int discrete codes (negative = missing).
      values: (n, r) float continuous values (NaN = missing).
      weights: optional (p,) or (p, c) combination weights.
      bias: optional (c,) bias replacing the log prior.
    """
    c = params.n_classes
    q = len(params.n_states)
    p = params.n_predictors
    dtype = params.cpt.dtype if q else params.mean.dtype
    W = _weights_pc(weights, p, c, dtype)
    out = params.log_prior if bias is None else bias
    out = jnp.broadcast_to(out, (codes.shape[0], c))
    if q:
        out = out + jnp.einsum("nqc,qc->nc", _discrete_contributions(params, codes), W[:q])
    if params.mean.shape[-1]:
        Wc = W[q:].T  # (c, r)
        shift = params.mean.mean(0)
        mu = params.mean - shift[None, :]
        prec = 1.0 / (params.std * params.std)
        a = -0.5 * prec * Wc
        b = mu * prec * Wc
        k = (-0.5 * mu * mu * prec - jnp.log(params.std) - 0.5 * _LOG_2PI) * Wc
        obs = jnp.isfinite(values)
        x = jnp.where(obs, values - shift[None, :], 0.0)
        out = out + (x * x) @ a.T + x @ b.T + obs.astype(x.dtype) @ k.T
    return out


def log_posterior(params: NBParams, codes, values, weights=None, bias=None):
    """Log posterior (n, c): `log_joint` normalized with logsumexp."""
    return jax.nn.log_softmax(log_joint(params, codes, values, weights, bias), axis=-1)


def predict(log_post):
    """argmax over classes; ties go to the lowest class index (documented, deterministic)."""
    return jnp.argmax(log_post, axis=-1)


def _wmean(x, weight):
    if weight is None:
        return x.mean(-1)
    return (x * weight).sum(-1) / weight.sum(-1)


def _true_class(log_post, y):
    return jnp.take_along_axis(log_post, y[..., None], axis=-1)[..., 0]


def error_rate(log_post, y, weight=None):
    """Weighted fraction of rows whose argmax class differs from y."""
    return _wmean((predict(log_post) != y).astype(log_post.dtype), weight)


def error_probability(log_post, y, weight=None):
    r"""(1/N) Σ_r (1 − P(Y = y_r | x_r)) — ESANN's smooth surrogate of the error rate."""
    return _wmean(1.0 - jnp.exp(_true_class(log_post, y)), weight)


def log_loss(log_post, y, weight=None):
    r"""−(1/N) Σ_r log P(Y = y_r | x_r) (negative conditional log-likelihood per row)."""
    return -_wmean(_true_class(log_post, y), weight)


def joint_log_likelihood(log_joint_scores, y, weight=None):
    r"""Σ_r w_r log P(x_r, y_r): the generative log-likelihood NB maximizes."""
    lj = _true_class(log_joint_scores, y)
    return lj.sum(-1) if weight is None else (lj * weight).sum(-1)
