"""Tests for jaxnb.methods.weighted (Ferreira weights, gradient-trained weights); float64."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from jaxnb.likelihood import log_contributions
from jaxnb.methods.filters import equal_frequency_codes
from jaxnb.methods.nb import fit_stats
from jaxnb.methods.weighted import (
    GradientWeights,
    ferreira_weights,
    ferreira_weights_from_counts,
    fit_gradient_weights,
    gradient_objective,
    newton_hessian,
    resolve_solver,
)
from jaxnb.params import fit_mle

N_STATES = (2, 3, 4)


def make_data(seed, n=150, c=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    codes = np.stack([rng.integers(0, m, n) for m in N_STATES], 1)
    codes[:, 1] = np.where(rng.random(n) < 0.6, y % 3, codes[:, 1])
    values = np.stack([y + rng.normal(size=n), rng.normal(size=n)], 1)
    w = rng.uniform(0.5, 1.5, n)
    return codes.astype(np.int32), values, y.astype(np.int32), w


def ferreira_reference(codes, y, w, n_states, c, marginal=False):
    """Loop-based float64 NumPy version of w_i = sqrt(sum_j sum_k [P(j|k) - P(j)]^2)."""
    prior = np.array([w[y == j].sum() for j in range(c)]) / w.sum()
    out = []
    for i, m in enumerate(n_states):
        tot = 0.0
        n_i = w[codes[:, i] >= 0].sum()
        for k in range(m):
            rows = codes[:, i] == k
            n_ik = w[rows].sum()
            if n_ik == 0:
                continue
            sq = sum((w[rows & (y == j)].sum() / n_ik - prior[j]) ** 2 for j in range(c))
            tot += sq * (n_ik / n_i if marginal else 1.0)
        out.append(np.sqrt(tot))
    return np.array(out)


def gradient_weights_reference(L, y, w, l2, log_prior):
    """Float64 NumPy/SciPy minimizer of ``-(1/N) sum_r w_r log softmax(H_r)_{y_r} + l2/2 ||W-1||^2``
    with ``H = b + sum_i W[i] * L[:, i]`` (Stream Eq. 2 + ridge).

    SciPy's L-BFGS-B from (W = 1, b = log_prior), polished by Newton steps with the explicit
    Hessian (its only null direction, b + t 1, is handled by a least-squares step). Returns
    ``(W, b, objective)``; b is identified only up to a constant (compare centred biases).
    """
    L = np.asarray(L, np.float64)
    y = np.asarray(y)
    n, p, c = L.shape
    wn = np.asarray(w, np.float64) / np.sum(w)
    T = np.eye(c)[y]

    def parts(theta):
        W, b = theta[: p * c].reshape(p, c), theta[p * c :]
        H = np.einsum("npc,pc->nc", L, W) + b
        logp = H - logsumexp(H, axis=1, keepdims=True)
        obj = -np.sum(wn * logp[np.arange(n), y]) + 0.5 * l2 * np.sum((W - 1.0) ** 2)
        P = softmax(H, axis=1)
        dH = (P - T) * wn[:, None]
        grad = np.concatenate(
            [(np.einsum("npc,nc->pc", L, dH) + l2 * (W - 1.0)).ravel(), dH.sum(0)]
        )
        return obj, grad, P

    x0 = np.concatenate([np.ones(p * c), np.asarray(log_prior, np.float64)])
    res = minimize(
        lambda th: parts(th)[:2],
        x0,
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-11, "ftol": 0.0, "maxiter": 10_000},
    )
    J = np.zeros((n, c, p * c + c))  # dH[r, j] / dtheta
    for j in range(c):
        J[:, j, np.arange(p) * c + j] = L[:, :, j]
        J[:, j, p * c + j] = 1.0
    x = res.x
    for _ in range(3):
        _, grad, P = parts(x)
        S = (np.einsum("nc,cd->ncd", P, np.eye(c)) - np.einsum("nc,nd->ncd", P, P)) * wn[
            :, None, None
        ]
        hess = np.einsum("nci,ncd,ndj->ij", J, S, J)
        hess[: p * c, : p * c] += l2 * np.eye(p * c)
        x = x - np.linalg.lstsq(hess, grad, rcond=None)[0]
    obj, grad, _ = parts(x)
    assert np.linalg.norm(grad) < 1e-12  # the reference itself is a stationary point
    return x[: p * c].reshape(p, c), x[p * c :], obj


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("weighting", ["uniform", "marginal"])
def test_ferreira_matches_numpy_reference(seed, weighting):
    codes, values, y, w = make_data(seed)
    codes[:5, 2] = -1  # missing values are not counted
    got = ferreira_weights(
        jnp.asarray(codes),
        jnp.asarray(values[:, :0]),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=N_STATES,
        n_classes=3,
        state_weighting=weighting,
    )
    ref = ferreira_reference(codes, y, w, N_STATES, 3, marginal=weighting == "marginal")
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-12, atol=1e-14)


def test_ferreira_continuous_uses_equal_frequency_bins():
    codes, values, y, w = make_data(2)
    got = ferreira_weights(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=N_STATES,
        n_classes=3,
        n_bins=4,
    )
    bins = np.asarray(equal_frequency_codes(jnp.asarray(values), 4, jnp.asarray(w)))
    ref = ferreira_reference(np.concatenate([codes, bins], 1), y, w, N_STATES + (4, 4), 3)
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-12)
    assert got.shape == (5,)
    assert got[3] > got[4]  # the class-shifted Gaussian outweighs pure noise


def test_ferreira_irrelevant_predictor_has_zero_weight_and_jit_equals_eager():
    # each state holds every class in the class proportions: P(Y | X = k) = P(Y) exactly
    counts = jnp.array([[2.0, 4.0], [1.0, 2.0], [3.0, 1.0], [0.0, 5.0]])
    class_weight = jnp.array([3.0, 6.0])
    n_states = (2, 2)
    got = ferreira_weights_from_counts(counts, class_weight, n_states)
    assert float(got[0]) == 0.0
    jitted = jax.jit(ferreira_weights_from_counts, static_argnums=(2, 3))(
        counts, class_weight, n_states, "uniform"
    )
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(got), rtol=1e-14)
    with pytest.raises(ValueError, match="state_weighting"):
        ferreira_weights_from_counts(counts, class_weight, n_states, "bogus")


def _contrib(seed, n=150):
    codes, values, y, w = make_data(seed, n=n)
    stats = fit_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=N_STATES,
        n_classes=3,
    )
    params = fit_mle(stats)
    return log_contributions(params, jnp.asarray(codes), jnp.asarray(values)), params, y, w


@pytest.mark.parametrize(("solver", "max_steps"), [("newton", 30), ("lbfgs", 400)])
def test_gradient_weights_improve_on_nb_and_converge(solver, max_steps):
    L, params, y, w = _contrib(3)
    prm, info = fit_gradient_weights(
        L,
        jnp.asarray(y),
        params.log_prior,
        jnp.asarray(w),
        l2=1e-3,
        tol=1e-9,
        max_steps=max_steps,
        solver=solver,
    )
    assert bool(info.converged)
    assert float(info.grad_norm) <= 1e-9
    # the optimum agrees with an independent SciPy minimization of the NumPy objective
    W_ref, b_ref, obj_ref = gradient_weights_reference(L, y, w, 1e-3, params.log_prior)
    assert np.abs(W_ref - 1.0).max() > 0.05  # the optimum is not the NB start
    np.testing.assert_allclose(np.asarray(prm.weights), W_ref, rtol=0, atol=1e-6)
    b = np.asarray(prm.bias)
    np.testing.assert_allclose(b - b.mean(), b_ref - b_ref.mean(), rtol=0, atol=1e-6)
    np.testing.assert_allclose(float(info.loss), obj_ref, rtol=1e-12)
    assert float(info.loss) <= float(info.initial_loss)
    assert float(info.log_loss) < float(info.initial_loss) - 1e-4
    # the reported gradient norm is the norm of the objective's gradient at the returned point
    g = jax.grad(gradient_objective)(prm, L, jnp.asarray(y), jnp.asarray(w), 1e-3)
    gnorm = np.sqrt(np.sum(np.asarray(g.weights) ** 2) + np.sum(np.asarray(g.bias) ** 2))
    np.testing.assert_allclose(gnorm, float(info.grad_norm), rtol=1e-6)
    # initial loss is NB's mean weighted log-loss
    lp = jax.nn.log_softmax(params.log_prior[None, :] + L.sum(1), axis=-1)
    nb_loss = -np.sum(w * np.asarray(lp)[np.arange(len(y)), y]) / w.sum()
    np.testing.assert_allclose(float(info.initial_loss), nb_loss, rtol=1e-12)


def test_gradient_adam_decreases_loss_and_objective_grads():
    L, params, y, w = _contrib(4)
    _, info = fit_gradient_weights(
        L,
        jnp.asarray(y),
        params.log_prior,
        solver="adam",
        learning_rate=0.02,
        max_steps=200,
        tol=1e-12,
    )
    assert int(info.n_steps) == 200
    assert float(info.log_loss) < float(info.initial_loss)
    prm = GradientWeights(jnp.full((L.shape[1], 3), 0.8), jnp.array([0.1, -0.2, 0.0]))
    check_grads(
        lambda p: gradient_objective(p, L[:20], jnp.asarray(y[:20]), jnp.ones(20), 0.1),
        (prm,),
        order=1,
    )
    with pytest.raises(ValueError, match="solver"):
        fit_gradient_weights(L, jnp.asarray(y), params.log_prior, solver="sgd")


def test_gradient_weights_check_log_prior_and_nan():
    rng = np.random.default_rng(0)
    L = np.log(rng.dirichlet(np.ones(3), size=(20, 4)))  # (n, p, c)
    y = rng.integers(0, 3, 20)
    prior = np.log(np.full(3, 1 / 3))
    fit_gradient_weights(L, y, prior, max_steps=5)  # fine
    with pytest.raises(ValueError, match=r"log_prior must have shape \(3,\)"):
        fit_gradient_weights(L, y, prior[:1], max_steps=5)  # broadcast to a (1,) bias before
    with pytest.raises(ValueError, match="log_prior contains NaN"):
        fit_gradient_weights(L, y, np.r_[np.nan, prior[1:]], max_steps=5)
    bad = L.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="L contains NaN"):
        fit_gradient_weights(bad, y, prior, max_steps=5)
    L_inf = L.copy()
    L_inf[0, 0, 0] = -np.inf  # alpha = 0 contributions are allowed
    assert np.isfinite(np.asarray(fit_gradient_weights(L_inf, y, prior)[0].weights)).all()


def _many_gaussians(n, p, c, seed=0):
    """Float32 log-contributions of p Gaussian predictors (a tenth of them informative)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    X = rng.normal(size=(n, p))
    X[:, : p // 10] += 0.5 * y[:, None]
    empty = jnp.zeros((n, 0), jnp.int32)
    stats = fit_stats(empty, jnp.asarray(X), jnp.asarray(y), None, n_states=(), n_classes=c)
    params = fit_mle(stats)
    L = log_contributions(params, empty, jnp.asarray(X))
    return L, jnp.asarray(y), params.log_prior


@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
def test_gradient_weights_reach_the_float64_optimum_in_float32(solver):
    """The objective is evaluated relative to the NB log-likelihood (the softmax ignores a per-row
    constant), so float32 no longer rounds p summed log-densities: with 150 predictors float32
    L-BFGS reached gradient norms of 8e-6 after its 2000 steps; now it converges (tol 1e-6) and
    its posteriors match the float64 optimum. (300 rows: the rounding grows with p, not n.)"""
    L, y, log_prior = _many_gaussians(300, 150, 3)
    ref, ref_info = fit_gradient_weights(L, y, log_prior, l2=1e-2, tol=1e-10, max_steps=20000)
    assert bool(ref_info.converged)
    got, info = fit_gradient_weights(
        L.astype(jnp.float32), y, log_prior.astype(jnp.float32), l2=1e-2, solver=solver
    )
    assert bool(info.converged) and not bool(info.stalled)
    assert int(info.n_steps) < 2000
    assert float(info.loss) == pytest.approx(float(ref_info.loss), abs=1e-6)

    def posterior(prm, L):
        return jax.nn.softmax(jnp.einsum("npc,pc->nc", L, prm.weights) + prm.bias[None, :], axis=-1)

    P32 = posterior(got, L.astype(jnp.float32))
    np.testing.assert_allclose(np.asarray(P32), np.asarray(posterior(ref, L)), atol=3e-4)


@pytest.mark.skipif(
    jax.default_backend() != "cpu",
    reason="float32 rounding floor measured on XLA:CPU; on an H200 the line search kept "
    "finding decreases and the fit ran to max_steps (gradient norm 1.4e-5), warning so",
)
def test_gradient_weights_stop_when_the_line_search_stalls():
    """Once weakly regularized float32 L-BFGS is at the objective's rounding floor, every step
    spent the line search's 20 evaluations without a lower value, up to max_steps (2000 rows x
    200 predictors: 55 s instead of 3 s, `benchmarks/bench_weighted.py`). It now stops after
    STALL_STEPS such steps, flagged; the steps it skips would not have lowered the objective
    beyond its rounding. Run without x64, as a float32 user would (with x64 on, optax's line
    search keeps some scalars in float64)."""
    from jaxnb.methods import weighted as wt

    def solve(max_steps, stall_steps):
        # the program of fit_gradient_weights(L, y, log_prior, l2=1e-4), compiled at LLVM -O3
        # whatever the suite's level: its ~2500 L-BFGS steps run 4x faster there (at -O0 the
        # same checks pass too, stalled after 1224 steps)
        args = (L, y, log_prior, None, 1e-4, 0.05, 1e-6)
        static = dict(solver="lbfgs", max_steps=max_steps, stall_steps=stall_steps)
        compiled = wt._fit_gradient_jit.lower(*args, **static).compile(
            compiler_options={"xla_backend_optimization_level": 3}
        )
        return compiled(*args)

    with jax.enable_x64(False):
        L, y, log_prior = _many_gaussians(500, 100, 3)
        assert L.dtype == jnp.float32
        prm, info = solve(2000, wt.STALL_STEPS)
        k = int(info.n_steps)
        assert bool(info.stalled) and not bool(info.converged)
        assert k < 1500 and float(info.grad_norm) > 1e-6
        # the same solve without the stall test, 30 steps further
        more, more_info = solve(k + 30, 10**9)
        assert int(more_info.n_steps) == k + 30 and not bool(more_info.stalled)
        assert float(more_info.loss) > float(info.loss) * (1.0 - 1e-6)
        np.testing.assert_allclose(np.asarray(more.weights), np.asarray(prm.weights), atol=1e-5)


def _flat_objective(L, y, w, l2):
    """`gradient_objective` of the class-major vector [W[:, 0], b_0, W[:, 1], b_1, ...]."""
    _, p, c = L.shape

    def f(z):
        blocks = z.reshape(c, p + 1).T
        return gradient_objective(GradientWeights(blocks[:p], blocks[p]), L, y, w, l2)

    return f


def test_newton_hessian_is_the_objectives_hessian():
    """The closed-form Hessian equals autodiff's, rows taken in several blocks (a tiny block
    budget) or one, with row weights and a zero-weight row; the bias's softmax-invariant
    direction is its null space."""
    from jaxnb.methods import weighted as wt

    L, params, y, w = _contrib(5, n=60)
    w = np.where(np.arange(60) == 7, 0.0, w)
    _, p, c = L.shape
    rng = np.random.default_rng(0)
    prm = GradientWeights(
        jnp.asarray(1.0 + 0.5 * rng.normal(size=(p, c))), jnp.asarray(rng.normal(size=c))
    )
    z = jnp.concatenate([prm.weights, prm.bias[None, :]], 0).T.reshape(-1)
    ref = np.asarray(jax.hessian(_flat_objective(L, jnp.asarray(y), jnp.asarray(w), 0.3))(z))
    got = np.asarray(newton_hessian(prm, L, jnp.asarray(y), jnp.asarray(w), 0.3))
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    old = wt.NEWTON_BLOCK_ENTRIES
    try:
        wt.NEWTON_BLOCK_ENTRIES = 7 * c * c * (p + 1)  # blocks of 7 rows, the last one padded
        blocked = np.asarray(newton_hessian(prm, L, jnp.asarray(y), jnp.asarray(w), 0.3))
    finally:
        wt.NEWTON_BLOCK_ENTRIES = old
    np.testing.assert_allclose(blocked, ref, rtol=1e-10, atol=1e-12)
    u = np.tile(np.r_[np.zeros(p), 1.0], c)
    np.testing.assert_allclose(ref @ u, 0.0, atol=1e-12)


def test_newton_hessian_keeps_its_precision_in_float32_when_posteriors_are_one_hot():
    """With posteriors within 1e-6 of one-hot, diag(P) - P Pᵀ is ~1e-6: formed as the
    difference of two sums of outer products in float32 it would be rounding (~1e-7 of each
    sum, times |L|² ~ 1e2: 5.5e-3 of the largest entry); formed entrywise, with 1 - P_j as the
    sum of the other classes' posteriors, it keeps the rounding of the float32 inputs."""
    rng = np.random.default_rng(1)
    n, p, c = 80, 4, 3
    y = rng.integers(0, c, n)
    L = rng.normal(size=(n, p, c)) + 3.5 * (np.arange(c)[None, None, :] == y[:, None, None])
    prm = GradientWeights(jnp.ones((p, c)), jnp.zeros(c))
    ref = np.asarray(newton_hessian(prm, jnp.asarray(L), jnp.asarray(y), None, 0.0))
    with jax.enable_x64(False):
        prm32 = GradientWeights(jnp.ones((p, c), jnp.float32), jnp.zeros(c, jnp.float32))
        got = np.asarray(
            newton_hessian(prm32, jnp.asarray(L, jnp.float32), jnp.asarray(y), None, 0.0)
        )
    scale = np.abs(ref).max()
    assert 1e-9 < scale < 1e-3  # nearly one-hot: tiny curvature
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-5 * scale)


def test_auto_solver_is_newton_up_to_its_parameter_cap():
    from jaxnb.methods import weighted as wt

    cap = wt.NEWTON_MAX_PARAMS
    assert resolve_solver("auto", 10, 2) == "newton"
    assert resolve_solver("auto", cap // 2 - 1, 2) == "newton"  # 2 (p + 1) = cap
    assert resolve_solver("auto", cap // 2, 2) == "lbfgs"
    assert resolve_solver("lbfgs", 3, 2) == "lbfgs" and resolve_solver("adam", 3, 2) == "adam"
    L, params, y, w = _contrib(2)
    _, info = fit_gradient_weights(L, jnp.asarray(y), params.log_prior, l2=1e-3)
    _, newton = fit_gradient_weights(L, jnp.asarray(y), params.log_prior, l2=1e-3, solver="newton")
    assert int(info.n_steps) == int(newton.n_steps) < 20


def test_newton_converges_on_flags_where_lbfgs_crawls():
    """Flags (194 rows, 28 predictors, 8 classes; nearly separable with the default ridge 1e-4):
    L-BFGS stops at its 2000-step budget with gradient norm ~4e-4 and needs 10,541 steps for
    tol 1e-6; Newton's method converges in under 60 steps (43)."""
    import warnings

    from jaxnb import ConvergenceWarning, WeightedNB
    from jaxnb.datasets import load_flags

    X, y = load_flags()[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = WeightedNB("gradient").fit(X, y)
    assert m.solver_ == "newton" and m.converged_ and int(m.info_.n_steps) < 60
    assert float(m.info_.grad_norm) < 1e-6  # the objective is strictly convex: its optimum
    with pytest.warns(ConvergenceWarning, match="max_steps=2000 with gradient norm"):
        short = WeightedNB("gradient", solver="lbfgs").fit(X, y)
    assert float(m.info_.loss) < float(short.info_.loss) - 5e-5
    # (20,000 L-BFGS steps at tol 1e-8 end 2e-7 from Newton's posteriors, 0.0064 from these)
    assert np.abs(short.predict_proba(X) - m.predict_proba(X)).max() > 3e-3


def test_newton_in_float32_gets_within_rounding_of_the_float64_optimum():
    """500 rows x 100 Gaussian predictors x 3 classes, l2 = 1e-4: float32 Newton stops at the
    objective's rounding floor, where its step predicts a decrease below that rounding: converged
    at this precision although the gradient norm (~2e-6, itself rounding) is above tol. Its
    posteriors are 2e-5 from the float64 optimum; float32 L-BFGS stalls 9e-3 away."""
    L, y, log_prior = _many_gaussians(500, 100, 3)

    def posterior(prm, L):
        return jax.nn.softmax(jnp.einsum("npc,pc->nc", L, prm.weights) + prm.bias[None, :], axis=-1)

    ref, ref_info = fit_gradient_weights(L, y, log_prior, l2=1e-4, tol=1e-10, solver="newton")
    assert bool(ref_info.converged) and int(ref_info.n_steps) < 30
    P64 = np.asarray(posterior(ref, L))
    with jax.enable_x64(False):
        L32, lp32 = L.astype(jnp.float32), log_prior.astype(jnp.float32)
        got, info = fit_gradient_weights(L32, y, lp32, l2=1e-4, solver="newton")
        assert float(info.grad_norm) < 1e-5 and int(info.n_steps) < 40
        assert bool(info.converged) and not bool(info.stalled)
        P32 = np.asarray(posterior(got, L32))
    np.testing.assert_allclose(P32, P64, atol=1e-4)


def test_newton_fit_vmaps_over_data_sets():
    """One compiled Newton fit per stack of data sets equals the fits one by one."""
    stack = [_contrib(s, n=60) for s in (1, 2, 3)]
    L = jnp.stack([s[0] for s in stack])
    y = jnp.stack([jnp.asarray(s[2]) for s in stack])
    lp = jnp.stack([s[1].log_prior for s in stack])
    w = jnp.stack([jnp.asarray(s[3]) for s in stack])
    fit = lambda L, y, lp, w: fit_gradient_weights(L, y, lp, w, l2=1e-2, solver="newton")
    batched, info = jax.vmap(fit)(L, y, lp, w)
    for k in range(3):
        one, one_info = fit(L[k], y[k], lp[k], w[k])
        np.testing.assert_allclose(batched.weights[k], one.weights, atol=1e-9)
        assert bool(info.converged[k]) and bool(one_info.converged)


def test_the_floor_of_the_terms_is_the_same_in_both_precisions():
    from jaxnb.methods import weighted as wt

    assert wt.LOG_FLOOR == pytest.approx(np.log(np.finfo(np.float32).tiny), rel=1e-12)
    a = np.array([-np.inf, -1e10, -100.0, -87.0, 0.0])
    want = [wt.LOG_FLOOR, wt.LOG_FLOOR, wt.LOG_FLOOR, -87.0, 0.0]
    np.testing.assert_allclose(np.asarray(wt.floor_log(jnp.asarray(a))), want, rtol=1e-15)
    with jax.enable_x64(False):
        got32 = np.asarray(wt.floor_log(jnp.asarray(a, jnp.float32)))
    np.testing.assert_allclose(got32, want, rtol=1e-7)


def test_gradient_wnb_scores_the_floored_terms_it_trained_on_in_both_precisions():
    """Flags has standardized Gaussian terms near -4e10 (a class whose column barely varies, at
    the 1e-9 variance floor). The solver floors its terms; with the floor at log(tiny) of the
    dtype (-87 / -708) float32 and float64 trained different models (posteriors 1.0 apart, 4 of
    194 predictions flipped), and predictions used the unfloored terms (training log-loss
    0.0940773 against 0.0940755 from predict_log_proba). Now one floor, in training, scores and
    `explain`."""
    from jaxnb import WeightedNB
    from jaxnb.datasets import load_diabetes, load_flags
    from jaxnb.methods import weighted as wt

    X, y = load_flags()[:2]
    m = WeightedNB("gradient").fit(X, y)
    lp = m.predict_log_proba(X)
    np.testing.assert_allclose(
        -np.mean(lp[np.arange(len(y)), y]), float(m.info_.log_loss), rtol=1e-12
    )
    E = m.explain(X)
    np.testing.assert_allclose(
        m.predict_joint_log_proba(X), m.bias_[None, :] + E.sum(axis=1), rtol=1e-12, atol=1e-9
    )
    W = np.broadcast_to(m.weights_[None], E.shape)
    pos = W > 0  # a positive weight times a floored log-density is at least W x the floor
    assert (E[pos] >= W[pos] * wt.LOG_FLOOR - 1e-9).all()
    assert (E[pos] < W[pos] * wt.LOG_FLOOR + 1e-9).sum() > 100  # ... many of them at it
    with jax.enable_x64(False):
        m32 = WeightedNB("gradient").fit(X, y)
        P32 = m32.predict_proba(X)
    P64 = m.predict_proba(X)
    np.testing.assert_allclose(P32, P64, atol=1e-3)
    assert (P32.argmax(1) == P64.argmax(1)).all()
    # a model pickled before the floor (no _floored) keeps scoring its unfloored terms: the
    # same probabilities where no term reaches the floor
    X, y = load_diabetes(quartile=2)
    m = WeightedNB("gradient").fit(X, y)
    P = m.predict_proba(X)
    del m._floored
    np.testing.assert_allclose(m.predict_proba(X), P, rtol=0, atol=1e-12)
