r"""Naive Bayes parameters Ω and the two reference parameter sets of the fsNB / L1NB papers.

* Ω⁽¹⁾ (`fit_mle`): the class-conditional MLE, θ_ikj = N_ijk / N_j, μ_ij = class mean, σ²_ij = class
  variance (divided by N_j), with Lidstone smoothing ``alpha`` on counts and a variance floor.
* Ω⁽⁰⁾ (`fit_marginal`): "predictor removed" — the same parameters for every class (the marginal
  MLE), so the predictor drops out of the posterior (Vidaurre, Bielza & Larrañaga 2011, §2).
* Ω(α) (`interpolate`): α_i Ω⁽¹⁾_i + (1 − α_i) Ω⁽⁰⁾_i per predictor; CPT columns stay on the simplex
  (a convex combination of two simplex points) and σ stays positive.

The variance floor is ``var_smoothing`` times the predictor's pooled variance (over all classes),
added to every class variance: it is per class and per predictor, scale-invariant (multiplying a
predictor by a constant multiplies its floor by the constant squared), and a function of the
sufficient statistics only, so `partial_fit` reproduces `fit` exactly. scikit-learn's GaussianNB
instead adds ``var_smoothing * max_i var_i`` (one global epsilon, recomputed per batch in
``partial_fit``).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ._checks import broadcasts_to, check_array_range, concrete
from .suffstats import SuffStats, has_spread, pooled_gaussian, state_segments

__all__ = ["NBParams", "fit_mle", "fit_marginal", "interpolate", "predictor_alpha_rows"]


class NBParams(eqx.Module):
    """Parameters of a mixed discrete/Gaussian naive Bayes model.

    Attributes:
      log_prior: (c,) log class prior.
      cpt: (K, c) probabilities; each predictor's block of rows is a simplex column per class.
      mean: (c, r) Gaussian means.
      std: (c, r) Gaussian standard deviations (> 0).
      n_states: static tuple of state counts of the discrete predictors.
    """

    log_prior: jax.Array
    cpt: jax.Array
    mean: jax.Array
    std: jax.Array
    n_states: tuple[int, ...] = eqx.field(static=True)

    @property
    def n_classes(self) -> int:
        return self.log_prior.shape[-1]

    @property
    def n_predictors(self) -> int:
        return len(self.n_states) + self.mean.shape[-1]


def _log_prior(stats: SuffStats, priors):
    if priors is not None:
        return jnp.log(jnp.asarray(priors, stats.class_weight.dtype))
    return jnp.log(stats.class_weight) - jnp.log(stats.class_weight.sum(-1, keepdims=True))


def _normalize_blocks(counts, n_states):
    """Divide each predictor's block of rows by its column totals (segment sums over rows).

    A column with total 0 (with ``alpha = 0``: a class that never observed the predictor) gets
    the uniform distribution over the predictor's states instead of 0 / 0 = NaN."""
    seg = jnp.asarray(state_segments(n_states))
    tot = jax.ops.segment_sum(counts, seg, num_segments=len(n_states))[seg]
    size = jnp.asarray(np.asarray(n_states)[state_segments(n_states)], counts.dtype)[:, None]
    return jnp.where(tot > 0, counts / jnp.where(tot > 0, tot, 1.0), 1.0 / size)


def check_smoothing_values(alpha, var_smoothing):
    """Concrete smoothing constants finite and >= 0 (traced values are skipped)."""
    if concrete(alpha):
        check_array_range("alpha", alpha, 0.0, fix="it is a Lidstone pseudo-count")
    if concrete(var_smoothing):
        check_array_range("var_smoothing", var_smoothing, 0.0)


def _check_smoothing(alpha, var_smoothing, stats: SuffStats):
    """Shapes of the smoothing constants (static) and their ranges (skipped for traced values)."""
    for name, value, shape, what in (
        ("alpha", alpha, stats.counts.shape, "the CPT shape (K, c)"),
        ("var_smoothing", var_smoothing, stats.m2.shape[:-2] + stats.m2.shape[-1:], "(r,)"),
    ):
        if not broadcasts_to(value, shape):
            raise ValueError(
                f"{name} must be a scalar (or broadcast to {what} = {shape}); got shape "
                f"{np.shape(value)}"
            )
    check_smoothing_values(alpha, var_smoothing)


def fit_mle(stats: SuffStats, alpha=1.0, var_smoothing=1e-9, priors=None) -> NBParams:
    r"""Class-conditional MLE Ω⁽¹⁾ with Lidstone smoothing and a variance floor.

    θ_ikj = (N_ijk + a) / (N_ij + a M_i), σ²_ij = m2_ij / N_ij + var_smoothing · s²_i with s²_i the
    pooled variance of predictor i. A class with no observed value of a continuous predictor falls
    back to the pooled mean and variance (its term is then almost class-independent); with
    ``alpha = 0``, a class with no observed value of a discrete predictor gets the uniform
    distribution over its states.

    Args:
      stats: sufficient statistics.
      alpha: Lidstone pseudo-count (0 gives the plain MLE; 1 is Laplace).
      var_smoothing: variance floor as a fraction of the pooled variance.
      priors: optional fixed class prior (c,); default the empirical class frequencies.
    """
    _check_smoothing(alpha, var_smoothing, stats)
    cpt = (
        _normalize_blocks(stats.counts + alpha, stats.n_states) if stats.n_states else stats.counts
    )
    pw, pmean, pm2 = pooled_gaussian(stats)
    pvar = pm2 / jnp.where(pw > 0, pw, 1.0)
    # A constant or never-observed predictor has pooled variance 0 (`has_spread`, pooled exactly):
    # give it a unit variance in every class so that its (then class-independent) term drops out
    # instead of producing NaN or a huge term.
    floor = jnp.where(has_spread(pw, pm2), var_smoothing * pvar, 1.0)
    has = stats.weight > 0
    var = jnp.where(has, stats.m2 / jnp.where(has, stats.weight, 1.0), pvar)
    mean = jnp.where(has, stats.mean, pmean)
    var = var + floor[..., None, :]
    return NBParams(_log_prior(stats, priors), cpt, mean, jnp.sqrt(var), stats.n_states)


def fit_marginal(stats: SuffStats, alpha=1.0, var_smoothing=1e-9, priors=None) -> NBParams:
    r"""Marginal ("predictor removed") parameters Ω⁽⁰⁾: identical for every class.

    θ_ik = (N_ik + a) / (N_i + a M_i); μ_i and σ²_i are the pooled mean and variance (+ the same
    floor as `fit_mle`). With Ω_i = Ω⁽⁰⁾_i predictor i contributes the same term to every class and
    drops out of the posterior exactly.
    """
    _check_smoothing(alpha, var_smoothing, stats)
    c = stats.n_classes
    if stats.n_states:
        tot = stats.counts.sum(-1, keepdims=True) + alpha
        cpt = jnp.broadcast_to(_normalize_blocks(tot, stats.n_states), stats.counts.shape)
    else:
        cpt = stats.counts
    pw, pmean, pm2 = pooled_gaussian(stats)
    pvar = pm2 / jnp.where(pw > 0, pw, 1.0)
    pvar = jnp.where(has_spread(pw, pm2), pvar * (1.0 + var_smoothing), 1.0)
    shape = stats.mean.shape
    mean = jnp.broadcast_to(pmean[..., None, :], shape)
    std = jnp.broadcast_to(jnp.sqrt(pvar)[..., None, :], shape)
    del c
    return NBParams(_log_prior(stats, priors), cpt, mean, std, stats.n_states)


def predictor_alpha_rows(alpha, n_states):
    """Split a per-predictor vector (p,) into per-CPT-row (K,) and per-continuous (r,) parts."""
    q = len(n_states)
    rows = alpha[..., :q][..., state_segments(n_states)] if q else alpha[..., :0]
    return rows, alpha[..., q:]


def interpolate(omega1: NBParams, omega0: NBParams, alpha) -> NBParams:
    r"""Ω(α) = α Ω⁽¹⁾ + (1 − α) Ω⁽⁰⁾ per predictor (fsNB §4).

    Args:
      omega1, omega0: the MLE and marginal parameters.
      alpha: (p,) interpolation coefficients in [0, 1], order [discrete..., continuous...].
    """
    p = omega1.n_predictors
    if np.shape(alpha) != (p,):
        raise ValueError(
            f"alpha must have shape ({p},), one coefficient per predictor (order [discrete..., "
            f"continuous...]); got {np.shape(alpha)}"
        )
    if concrete(alpha):
        check_array_range("alpha", alpha, 0.0, 1.0, fix="interpolation coefficients lie in [0, 1]")
    a_rows, a_cont = predictor_alpha_rows(alpha, omega1.n_states)
    cpt = a_rows[:, None] * omega1.cpt + (1 - a_rows[:, None]) * omega0.cpt
    mean = a_cont[..., None, :] * omega1.mean + (1 - a_cont[..., None, :]) * omega0.mean
    std = a_cont[..., None, :] * omega1.std + (1 - a_cont[..., None, :]) * omega0.std
    return NBParams(omega1.log_prior, cpt, mean, std, omega1.n_states)
