"""Tests for jaxnb.methods.group_lasso (float64; NumPy statistics, SciPy SLSQP reference)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxnb.methods.group_lasso import (
    GroupLassoParams,
    active_predictors,
    fit_group_lasso,
    group_lasso_objective,
    group_lasso_path,
    kkt_residual,
    lambda_max,
    make_group_lasso_problem,
    negative_log_likelihood,
    penalty_grid,
)

scipy_optimize = pytest.importorskip("scipy.optimize")

N_STATES = (2, 3, 3, 4)
R = 3
C = 3
TOL = 1e-9  # solver tolerance on the prox-gradient residual


class Stats(eqx.Module):
    """Minimal stand-in for jaxnb.suffstats.SuffStats (same fields)."""

    class_weight: jax.Array
    counts: jax.Array
    weight: jax.Array
    mean: jax.Array
    m2: jax.Array
    n_states: tuple = eqx.field(static=True)


def make_data(seed, n=80, n_states=N_STATES, r=R, c=C):
    """Two informative discrete + one informative continuous predictor, the rest noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    codes = np.stack([rng.integers(0, m, n) for m in n_states], 1)
    codes[:, 0] = np.where(rng.random(n) < 0.7, y % n_states[0], codes[:, 0])
    codes[:, 2] = np.where(rng.random(n) < 0.5, y % n_states[2], codes[:, 2])
    X = rng.normal(size=(n, r)) * np.arange(1.0, r + 1)
    X[:, 0] += 1.5 * y
    w = rng.uniform(0.5, 1.5, n)
    return codes, X, y, w


def stats_from_data(codes, X, y, w, n_states=N_STATES, c=C):
    Y = np.eye(c)[y] * w[:, None]
    counts = np.concatenate([np.eye(m)[codes[:, i]].T @ Y for i, m in enumerate(n_states)])
    W = Y.T @ np.ones_like(X)
    mean = np.divide(Y.T @ X, W, out=np.zeros((c, X.shape[1])), where=W > 0)
    m2 = np.stack([(Y[:, j : j + 1] * (X - mean[j]) ** 2).sum(0) for j in range(c)])
    return Stats(
        jnp.asarray(Y.sum(0)),
        jnp.asarray(counts),
        jnp.asarray(W),
        jnp.asarray(mean),
        jnp.asarray(m2),
        tuple(n_states),
    )


@pytest.fixture(scope="module")
def data():
    return make_data(0)


@pytest.fixture(scope="module")
def stats(data):
    return stats_from_data(*data)


# One compilation serves every test with these shapes (the problem is a pytree argument).
_fit = jax.jit(lambda prob, ld, lc: fit_group_lasso(prob, ld, lc, tol=TOL, max_steps=20000))
_kkt = jax.jit(kkt_residual)
_lmax = jax.jit(lambda prob, s: lambda_max(prob, continuous_scale=s, per_predictor=True))


def _offsets(n_states):
    return np.concatenate([[0], np.cumsum(n_states)[:-1]])


def test_nll_matches_row_loop(data, stats):
    """N * NLL equals -sum_r log f(x_r | y_r) from the raw rows, up to the Gaussian constant."""
    codes, X, y, w = data
    prob = make_group_lasso_problem(stats)
    rng = np.random.default_rng(1)
    cpt = np.asarray(prob.mle.cpt) * 0.5 + 0.5 * np.asarray(prob.center.cpt)
    mean = rng.normal(size=(C, R))
    std = rng.uniform(0.5, 2.0, size=(C, R))
    off = _offsets(N_STATES)
    ll = 0.0
    for row in range(len(y)):
        j = y[row]
        for i in range(len(N_STATES)):
            ll += w[row] * np.log(cpt[off[i] + codes[row, i], j])
        for i in range(R):
            z = (X[row, i] - mean[j, i]) / std[j, i]
            ll += w[row] * (-0.5 * z * z - np.log(std[j, i]) - 0.5 * np.log(2 * np.pi))
    const = 0.5 * np.log(2 * np.pi) * w.sum() * R
    got = float(
        negative_log_likelihood(
            prob, GroupLassoParams(jnp.asarray(cpt), jnp.asarray(mean), jnp.asarray(std))
        )
    )
    np.testing.assert_allclose(got * w.sum(), -ll - const, rtol=1e-10)


def test_problem_centers_and_mle(stats):
    prob = make_group_lasso_problem(stats, alpha=0.5)
    counts = np.asarray(stats.counts) + 0.5
    off = _offsets(N_STATES)
    for i, m in enumerate(N_STATES):
        blk = counts[off[i] : off[i] + m]
        np.testing.assert_allclose(prob.mle.cpt[off[i] : off[i] + m], blk / blk.sum(0), rtol=1e-12)
        marg = blk.sum(1) / blk.sum()
        np.testing.assert_allclose(
            prob.center.cpt[off[i] : off[i] + m], np.tile(marg[:, None], C), rtol=1e-12
        )
    W = np.asarray(stats.weight)
    mu0 = (W * np.asarray(stats.mean)).sum(0) / W.sum(0)
    np.testing.assert_allclose(prob.center.mean[0], mu0, rtol=1e-12)
    np.testing.assert_allclose(prob.mle.std, np.sqrt(np.asarray(stats.m2) / W), rtol=1e-12)


@pytest.mark.parametrize("adaptive", [False, True])
@pytest.mark.parametrize("cscale", [1.0, 0.3])
def test_lambda_max_is_the_removal_threshold(stats, adaptive, cscale):
    prob = make_group_lasso_problem(stats, adaptive=adaptive)
    lmax, lam_i = _lmax(prob, cscale)
    np.testing.assert_allclose(lmax, np.max(lam_i), rtol=0)
    # at and above lambda_max: Omega^(0) exactly (bit for bit), every predictor removed
    for factor in (1.0 + 1e-9, 1.5):
        params, info = _fit(prob, lmax * factor, cscale * lmax * factor)
        assert bool(info.converged)
        assert not bool(jnp.any(active_predictors(prob, params)))
        for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(prob.center), strict=True):
            assert np.array_equal(np.asarray(a), np.asarray(b))
    # just below: the predictor attaining lambda_max (and only predictors with lambda_i above the
    # penalty) enter
    params, info = _fit(prob, lmax * 0.98, cscale * lmax * 0.98)
    assert bool(info.converged)
    active = np.asarray(active_predictors(prob, params))
    assert active[int(np.argmax(lam_i))]
    assert not np.any(active & (np.asarray(lam_i) < 0.9 * lmax))


def test_lambda_max_kkt_derivation_numerically(stats):
    """lambda_i equals min over tangent multipliers of ||grad_i + nu 1|| / w_i (brute force)."""
    prob = make_group_lasso_problem(stats)
    _, lam_i = _lmax(prob, 1.0)
    g = jax.grad(lambda p: negative_log_likelihood(prob, p))(prob.center)
    off = _offsets(N_STATES)
    for i, m in enumerate(N_STATES):
        gi = np.asarray(g.cpt[off[i] : off[i] + m])
        res = scipy_optimize.minimize(
            lambda nu, gi=gi: np.sum((gi + nu[None, :]) ** 2),
            np.zeros(C),
            method="BFGS",
            options={"gtol": 1e-12},
        )
        np.testing.assert_allclose(lam_i[i], np.sqrt(res.fun), rtol=1e-6)
    gc = np.sqrt((np.asarray(g.mean) ** 2).sum(0) + (np.asarray(g.std) ** 2).sum(0))
    np.testing.assert_allclose(lam_i[len(N_STATES) :], gc, rtol=1e-12)


def test_zero_penalty_returns_mle(stats):
    prob = make_group_lasso_problem(stats)
    params, info = _fit(prob, 0.0, 0.0)
    assert bool(info.converged)
    np.testing.assert_allclose(params.cpt, prob.mle.cpt, atol=1e-8)
    np.testing.assert_allclose(params.mean, prob.mle.mean, atol=1e-8)
    np.testing.assert_allclose(params.std, prob.mle.std, atol=1e-8)


@jax.jit
@jax.value_and_grad
def _smoothed_value_and_grad(v, prob, lam_d, lam_c):
    """Objective with smoothed norms sqrt(||d||^2 + 1e-18) of a flat parameter vector."""
    K, r = prob.center.cpt.shape[0], prob.center.mean.shape[1]
    a, b = K * C, K * C + C * r
    p = GroupLassoParams(v[:a].reshape(K, C), v[a:b].reshape(C, r), v[b:].reshape(C, r))
    seg = jnp.asarray(np.repeat(np.arange(len(N_STATES)), N_STATES))
    d = jax.ops.segment_sum((p.cpt - prob.center.cpt) ** 2, seg, num_segments=len(N_STATES)).sum(1)
    dc = ((p.mean - prob.center.mean) ** 2).sum(0) + ((p.std - prob.center.std) ** 2).sum(0)
    lam = jnp.concatenate([jnp.full(len(N_STATES), lam_d), jnp.full(r, lam_c)]) * prob.group_weight
    return negative_log_likelihood(prob, p) + jnp.sum(
        lam * jnp.sqrt(jnp.concatenate([d, dc]) + 1e-18)
    )


def _scipy_solve(prob, lam_d, lam_c):
    """SLSQP on the full constrained problem (smoothed norms, JAX gradients)."""
    K, r = prob.center.cpt.shape[0], prob.center.mean.shape[1]
    sizes = (K * C, C * r, C * r)

    def unpack(v):
        a, b = np.cumsum(sizes)[:2]
        return GroupLassoParams(v[:a].reshape(K, C), v[a:b].reshape(C, r), v[b:].reshape(C, r))

    fg = lambda v: _smoothed_value_and_grad(jnp.asarray(v), prob, lam_d, lam_c)
    A = np.zeros((len(N_STATES) * C, sum(sizes)))
    row = 0
    off = _offsets(N_STATES)
    for i, m in enumerate(N_STATES):
        for j in range(C):
            A[row, [(off[i] + k) * C + j for k in range(m)]] = 1.0
            row += 1
    x0 = np.concatenate(
        [
            np.asarray(prob.mle.cpt).ravel() * 0.9 + 0.1 * np.asarray(prob.center.cpt).ravel(),
            np.asarray(prob.mle.mean).ravel(),
            np.asarray(prob.mle.std).ravel(),
        ]
    )
    bounds = [(1e-10, 1.0)] * sizes[0] + [(None, None)] * sizes[1] + [(1e-3, None)] * sizes[2]
    res = scipy_optimize.minimize(
        lambda v: tuple(np.asarray(t) for t in fg(jnp.asarray(v))),
        x0,
        jac=True,
        method="SLSQP",
        bounds=bounds,
        constraints=[{"type": "eq", "fun": lambda v: A @ v - 1.0, "jac": lambda v: A}],
        options={"ftol": 1e-15, "maxiter": 3000},
    )
    return unpack(jnp.asarray(res.x)), float(res.fun)


@pytest.mark.parametrize("adaptive,frac", [(False, 0.3), (True, 0.1)])
def test_solution_matches_scipy_slsqp(stats, adaptive, frac):
    prob = make_group_lasso_problem(stats, adaptive=adaptive)
    lmax, _ = _lmax(prob, 0.5)
    lam_d, lam_c = frac * lmax, 0.5 * frac * lmax
    params, info = _fit(prob, lam_d, lam_c)
    assert bool(info.converged)
    n_active = int(jnp.sum(active_predictors(prob, params)))
    assert 0 < n_active < len(N_STATES) + R  # a mix of removed and kept groups
    ours = float(group_lasso_objective(prob, params, lam_d, lam_c))
    np.testing.assert_allclose(float(info.objective), ours, rtol=1e-13)
    _, ref = _scipy_solve(prob, lam_d, lam_c)
    # ours is optimal: never worse than SLSQP beyond its accuracy, and equal to 1e-6 relative
    assert ours <= ref + 1e-9 * abs(ref)
    np.testing.assert_allclose(ours, ref, rtol=1e-6)
    # KKT (prox-gradient fixed point) at several step sizes, feasibility
    for step in (1.0, 0.1):
        assert float(_kkt(prob, params, lam_d, lam_c, step)) < 1e-5
    off = _offsets(N_STATES)
    for i, m in enumerate(N_STATES):
        np.testing.assert_allclose(params.cpt[off[i] : off[i] + m].sum(0), 1.0, atol=1e-7)
    assert float(jnp.min(params.cpt)) >= 0.0
    assert float(jnp.min(params.std - prob.min_std[None, :])) >= 0.0


def test_path_scan_vmap_and_monotone(stats):
    prob = make_group_lasso_problem(stats, adaptive=True)
    grid = penalty_grid(prob, 8, ratio=1e-2, continuous_scale=0.5)
    path = jax.jit(
        lambda p, g: group_lasso_path(p, g, continuous_scale=0.5, tol=TOL, max_steps=20000)
    )(prob, grid)
    assert bool(jnp.all(path.info.converged))
    n_active = np.asarray(path.n_active)
    assert n_active[0] == 0 and n_active[-1] >= 3
    assert np.sum(np.diff(n_active) < 0) <= 1  # monotone-ish (group lasso paths may drop a group)
    assert path.params.cpt.shape == (8,) + prob.center.cpt.shape
    # vmap over the penalty equals the warm-started path (same optimum, to solver accuracy)
    fit_v = jax.jit(
        jax.vmap(lambda ld: fit_group_lasso(prob, ld, 0.5 * ld, tol=TOL, max_steps=20000))
    )
    params_v, info_v = fit_v(grid)
    assert bool(jnp.all(info_v.converged))
    np.testing.assert_allclose(info_v.objective, path.objective, rtol=1e-9)
    np.testing.assert_allclose(params_v.cpt, path.params.cpt, atol=1e-6)
    np.testing.assert_array_equal(
        jax.vmap(lambda p: active_predictors(prob, p))(params_v), path.active
    )


def test_grad_of_objective_and_lambda_max(stats):
    prob = make_group_lasso_problem(stats)
    x = GroupLassoParams(0.5 * prob.mle.cpt + 0.5 * prob.center.cpt, prob.mle.mean, prob.mle.std)
    check_grads(
        jax.jit(lambda p: group_lasso_objective(prob, p, 0.1, 0.2)),
        (x,),
        order=1,
        atol=1e-6,
        rtol=1e-6,
    )
    # lambda_max is differentiable in the statistics (e.g. for sensitivity analyses)
    f = jax.jit(
        lambda m: lambda_max(make_group_lasso_problem(eqx.tree_at(lambda s: s.mean, stats, m)))
    )
    check_grads(f, (stats.mean,), order=1, atol=1e-6, rtol=1e-6)


def test_zero_weight_class_and_validation(data):
    codes, X, y, w = data
    w = np.where(y == 2, 0.0, w)  # a fold without class 2
    st = stats_from_data(codes, X, y, w)
    prob = make_group_lasso_problem(st)
    lmax, _ = _lmax(prob, 1.0)
    params, info = _fit(prob, 0.2 * lmax, 0.2 * lmax)
    assert bool(info.converged) and np.all(np.isfinite(np.asarray(params.cpt)))
    with pytest.raises(ValueError, match="group_weight"):
        make_group_lasso_problem(st, group_weight=jnp.ones(3))
    with pytest.raises(TypeError, match="stats"):
        make_group_lasso_problem(object())


def _uncentred_scales(seed, n=400, r=30):
    """Two classes, columns whose spreads span 1e-3..1e3, each offset by 2-10 spreads (as in
    WDBC), half of them shifted between the classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    scale = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), r))
    offset = scale * rng.uniform(2, 10, r)
    shift = rng.normal(0, 1, r) * (rng.random(r) < 0.5)
    spread = np.exp(rng.normal(0, 0.4, (2, r)))
    X = offset + scale * (shift * y[:, None] + spread[y] * rng.normal(size=(n, r)))
    return X, y


@pytest.mark.parametrize("seed", [0, 6])
def test_float32_path_equals_float64_on_columns_of_very_different_scales(seed):
    """Columns of very different scales: in float32 a solve was certified by the residual's
    rounding floor far from its optimum (objective 9.3e-4 and 3.3e-3 relative from float64 at one
    grid point, seeds 0 and 6; WDBC: -24.23 against -26.46), because one norm of the floors let
    an entry with a large, penalty-cancelled gradient hide every other entry's residual, and a
    step shrunk for a stale metric inflated the floor. Now every grid point agrees to 1e-5."""

    def path(dtype):
        X, y = _uncentred_scales(seed)
        Y = np.eye(2)[y]
        stats = Stats(
            jnp.asarray(Y.sum(0), dtype),
            jnp.zeros((0, 2), dtype),
            jnp.asarray(np.repeat(Y.sum(0)[:, None], X.shape[1], 1), dtype),
            jnp.asarray(np.stack([X[y == j].mean(0) for j in (0, 1)]), dtype),
            jnp.asarray(
                np.stack([((X[y == j] - X[y == j].mean(0)) ** 2).sum(0) for j in (0, 1)]), dtype
            ),
            (),
        )
        problem = make_group_lasso_problem(stats, adaptive=True)
        return jax.jit(lambda p: group_lasso_path(p, penalty_grid(p, 20), tol=1e-7))(problem)

    with jax.enable_x64(False):
        p32 = path(jnp.float32)
    p64 = path(jnp.float64)
    assert bool(jnp.all(p32.info.converged)) and bool(jnp.all(p64.info.converged))
    np.testing.assert_array_equal(p32.n_active, p64.n_active)
    o32, o64 = np.asarray(p32.objective, np.float64), np.asarray(p64.objective)
    assert (np.abs(o32 - o64) / (1 + np.abs(o64))).max() < 1e-5
