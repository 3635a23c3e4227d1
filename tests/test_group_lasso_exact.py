"""The exact (group-by-group) discrete solver of the group-lasso NB problem.

Checked against (i) the optimality conditions of each group evaluated in float64 NumPy
(independent of both solvers), (ii) the FISTA solver run to a tight tolerance, on mixed,
discrete-only, unsmoothed (zero counts) and zero-weight-class problems, and (iii) the estimator.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_group_lasso_core import make_data, stats_from_data

from jaxnb.datasets import make_table1
from jaxnb.estimators_penalized import GroupLassoNB
from jaxnb.methods import group_lasso as gl

N_STATES = (2, 3, 3, 4)


def _path(problem, grid, solver, tol):
    return gl.group_lasso_path(problem, grid, solver=solver, tol=tol, max_steps=20000)


_path_jit = jax.jit(_path, static_argnames=("solver",))


def _blocks(n_states):
    off = np.concatenate([[0], np.cumsum(n_states)])
    return [slice(off[i], off[i + 1]) for i in range(len(n_states))]


def numpy_kkt_violation(problem, cpt, penalty):
    """Largest violation of the optimality conditions of the discrete groups (float64 NumPy).

    Group i with tau = penalty * w_i, f_i = -(1/N) sum_kj A_kj log theta_kj, center c:
    * at theta = c: ||grad f_i(c) centred per column over supp(c)|| <= tau (zero in the
      subdifferential);
    * else, d = theta - c, t = ||d||: on theta_kj > 0, grad_kj + tau d_kj / t = -nu_j for one
      nu_j per column; on theta_kj = 0 (only where A_kj = 0), tau d_kj / t + nu_j >= 0.
    Returned relative to the size of the gradient.
    """
    a = np.asarray(problem.counts, np.float64) / float(problem.total)
    c = np.asarray(problem.center.cpt, np.float64)
    th = np.asarray(cpt, np.float64)
    w = np.asarray(problem.group_weight, np.float64)
    worst = 0.0
    for i, sl in enumerate(_blocks(problem.n_states)):
        tau = penalty * w[i]
        ai, ci, ti = a[sl], c[sl], th[sl]
        assert np.all(ti >= 0) and np.allclose(ti.sum(0), 1.0, atol=1e-12)
        d = ti - ci
        t = np.sqrt((d * d).sum())
        if t == 0:
            sup = ci[:, 0] > 0
            g = np.where(sup[:, None], -ai / np.where(sup, ci[:, 0], 1.0)[:, None], 0.0)
            g[sup] -= g[sup].mean(0)
            worst = max(worst, (np.sqrt((g * g).sum()) - tau) / max(tau, 1e-300))
            continue
        pos = ti > 0
        g = np.where(pos, -ai / np.where(pos, ti, 1.0), 0.0) + tau * d / t
        for j in range(ti.shape[1]):
            col = g[pos[:, j], j]
            nu = -col.mean()
            scale = np.abs(ai[:, j] / np.maximum(ti[:, j], 1e-300)).max() + tau
            worst = max(worst, np.abs(col + nu).max() / scale)
            zero = ~pos[:, j]
            if zero.any():
                worst = max(worst, -(g[zero, j] + nu).min() / scale)
    return worst


@pytest.fixture(scope="module")
def mixed_problem():
    return gl.make_group_lasso_problem(stats_from_data(*make_data(3)), adaptive=True)


@pytest.fixture(scope="module")
def dr_problem():
    # n_test = 2000: the same generator program as test_group_lasso_speed (one compilation in the
    # run's compilation cache); the training rows do not depend on n_test
    d = make_table1(jax.random.PRNGKey(11), "DR", 300, 2000)
    codes = jnp.asarray(d["codes_train"], jnp.int32)
    y = jnp.asarray(d["y_train"], jnp.int32)
    from jaxnb.methods.nb import fit_stats

    stats = fit_stats(codes, jnp.zeros((300, 0)), y, jnp.ones(300), n_states=(3,) * 20, n_classes=3)
    return gl.make_group_lasso_problem(stats, alpha=1.0, adaptive=True)


@pytest.mark.parametrize("name", ["mixed_problem", "dr_problem"])
def test_exact_path_is_optimal_and_equals_tight_fista(name, request):
    problem = request.getfixturevalue(name)
    _, lam_i = gl.lambda_max(problem, per_predictor=True)
    # the geometric grid plus points just below four groups' thresholds (partly active models)
    extra = 0.999 * jnp.sort(lam_i[: len(problem.n_states)])[-4:]
    grid = jnp.sort(jnp.concatenate([gl.penalty_grid(problem, 8, ratio=1e-3), extra]))[::-1]
    ex = _path_jit(problem, grid, "exact", 1e-12)
    fi = _path_jit(problem, grid, "fista", 1e-11)
    assert bool(jnp.all(ex.info.converged)) and bool(jnp.all(fi.info.converged))
    n_act = np.asarray(ex.n_active)
    assert n_act[0] == 0 and n_act[-1] == problem.group_weight.shape[0]
    assert np.any((n_act > 0) & (n_act < n_act[-1]))
    np.testing.assert_array_equal(ex.active, fi.active)
    # never worse than FISTA; equal to its accuracy
    assert np.all(np.asarray(ex.objective) <= np.asarray(fi.objective) + 1e-13)
    np.testing.assert_allclose(ex.objective, fi.objective, rtol=1e-10)
    np.testing.assert_allclose(ex.params.cpt, fi.params.cpt, atol=1e-7)
    for k, lam in enumerate(np.asarray(grid)):
        assert numpy_kkt_violation(problem, ex.params.cpt[k], lam) < 1e-10
    # Newton converges in a few outer steps per grid point (discrete-only: no FISTA steps)
    if name == "dr_problem":
        assert int(jnp.max(ex.info.num_steps)) <= 15


def test_unsmoothed_zero_counts_and_zero_weight_class():
    """alpha = 0: states unseen in a class (theta on the simplex boundary), a state unseen in
    every class (kept at 0), and a class with no weight at all."""
    codes, X, y, w = make_data(4, n=40)
    codes[:, 3] = np.where(codes[:, 3] == 3, 2, codes[:, 3])  # state 3 of predictor 3 never seen
    codes[y == 0, 1] = np.minimum(codes[y == 0, 1], 1)  # state 2 of predictor 1 unseen in class 0
    w = np.where(y == 2, 0.0, w)  # class 2 has zero weight
    problem = gl.make_group_lasso_problem(stats_from_data(codes, X, y, w), alpha=0.0)
    lmax = float(gl.lambda_max(problem))
    # jitted once for the three penalties (an eager call of the solver compiles its loop anew
    # every time: 2-3 s each)
    fit = jax.jit(gl.fit_group_lasso, static_argnames=("solver", "max_steps"))
    for frac in (0.5, 0.1, 1e-3):
        pe, ie = fit(problem, frac * lmax, solver="exact", tol=1e-12, max_steps=20000)
        pf, if_ = fit(problem, frac * lmax, solver="fista", tol=1e-11, max_steps=20000)
        assert bool(ie.converged)
        assert numpy_kkt_violation(problem, pe.cpt, frac * lmax) < 1e-9
        assert float(ie.objective) <= float(if_.objective) + 1e-12
        np.testing.assert_allclose(float(ie.objective), float(if_.objective), rtol=1e-9)
        unseen = sum(N_STATES[:3]) + 3
        np.testing.assert_array_equal(np.asarray(pe.cpt[unseen]), 0.0)
        np.testing.assert_allclose(pe.mean, pf.mean, atol=1e-6)


def test_zero_test_boundary_is_exact(mixed_problem):
    """At penalty = lambda_i group i sits exactly at its centre; just below it moves."""
    _, lam_i = gl.lambda_max(mixed_problem, per_predictor=True)
    q = len(mixed_problem.n_states)
    i = int(jnp.argmax(lam_i[:q]))
    s = slice(sum(mixed_problem.n_states[:i]), sum(mixed_problem.n_states[: i + 1]))
    at, _ = gl.fit_group_lasso(mixed_problem, lam_i[i], 1e6)
    np.testing.assert_array_equal(at.cpt[s], mixed_problem.center.cpt[s])
    below, info = gl.fit_group_lasso(mixed_problem, lam_i[i] * (1 - 1e-6), 1e6)
    assert bool(info.converged)
    d = float(jnp.linalg.norm(below.cpt[s] - mixed_problem.center.cpt[s]))
    assert 0 < d < 1e-4
    # zero penalty: the MLE exactly
    mle, _ = gl.fit_group_lasso(mixed_problem, 0.0, 0.0)
    np.testing.assert_allclose(mle.cpt, mixed_problem.mle.cpt, atol=1e-13)


def test_vmap_over_problems_equals_one_by_one():
    stats = [stats_from_data(*make_data(s)) for s in (5, 6, 7)]
    fracs = jnp.logspace(0, -3, 8)

    def run(st):
        p = gl.make_group_lasso_problem(st, adaptive=True)
        return gl.group_lasso_path(p, fracs * gl.lambda_max(p), tol=1e-12)

    batched = jax.jit(jax.vmap(run))(jax.tree.map(lambda *a: jnp.stack(a), *stats))
    one_by_one = jax.jit(run)  # one compilation for the three problems (same shapes)
    for k, st in enumerate(stats):
        one = one_by_one(st)
        np.testing.assert_allclose(batched.params.cpt[k], one.params.cpt, atol=1e-12)
        np.testing.assert_array_equal(batched.n_active[k], one.n_active)


def test_float32_matches_float64(dr_problem):
    grid64 = gl.penalty_grid(dr_problem, 20)
    ref = _path_jit(dr_problem, grid64, "exact", 1e-12)
    with jax.enable_x64(False):
        p32 = jax.tree.map(
            lambda a: a.astype(jnp.float32) if a.dtype == jnp.float64 else a, dr_problem
        )
        path = _path_jit(p32, gl.penalty_grid(p32, 20), "exact", 1e-7)
        assert path.params.cpt.dtype == jnp.float32
    assert bool(jnp.all(path.info.converged))
    assert int(jnp.max(path.info.num_steps)) <= 15
    np.testing.assert_array_equal(path.active, ref.active)
    np.testing.assert_allclose(path.params.cpt, ref.params.cpt, atol=2e-5)


def test_solver_argument_checked_and_estimator_solvers_agree():
    with pytest.raises(ValueError, match="solver must be one of"):
        gl.group_lasso_path(
            gl.make_group_lasso_problem(stats_from_data(*make_data(0))), jnp.ones(2), solver="x"
        )
    codes, X, y, _ = make_data(8, n=120)
    Xall = np.concatenate([codes, X], axis=1)
    kw = dict(discrete=list(range(4)), n_states=list(N_STATES), tol=1e-10, max_steps=20000)
    with pytest.raises(ValueError, match="solver"):
        GroupLassoNB(solver="newton", **kw).fit(Xall, y)
    a = GroupLassoNB(**kw).fit(Xall, y)
    b = GroupLassoNB(solver="fista", **kw).fit(Xall, y)
    assert a.selected_index_ == b.selected_index_
    np.testing.assert_array_equal(a.path_["n_active"], b.path_["n_active"])
    np.testing.assert_allclose(a.params_.cpt, b.params_.cpt, atol=1e-7)
    np.testing.assert_allclose(a.predict_proba(Xall), b.predict_proba(Xall), atol=1e-7)


def test_soybean_unsmoothed_path_converges_and_is_optimal():
    """Soybean-small with alpha = 0 (many columns at a simplex vertex): the outer search used to
    set a bracket end from psi at an unfinished inner solve, the bracket closed off the root, and
    six of the 20 grid points stalled (residual 1e-4-2e-3 after any number of steps)."""
    from jaxnb.datasets import load_soybean_small

    X, y, _ = load_soybean_small()
    model = GroupLassoNB(alpha=0.0).fit(X, y)
    problem, grid = model.problem_, jnp.asarray(model.path_["penalties"])
    ex = _path_jit(problem, grid, "exact", 1e-12)
    assert bool(jnp.all(ex.info.converged)) and int(jnp.max(ex.info.num_steps)) <= 15
    # optimal by the NumPy optimality conditions
    for k, lam in enumerate(np.asarray(grid)):
        assert numpy_kkt_violation(problem, ex.params.cpt[k], lam) < 1e-9
    assert model.converged_ and model.path_["converged"].all()
    # FISTA reaches the same path. With Dykstra's alternating prox (capped at 100 passes, and
    # needing ~200 near grid point 6, where a group sits at its removal threshold over zero
    # counts) it stalled there for 20000 steps; the prox of the discrete groups is now exact.
    fi = _path_jit(problem, grid, "fista", 1e-8)
    assert bool(jnp.all(fi.info.converged)) and int(jnp.max(fi.info.num_steps)) < 200
    np.testing.assert_allclose(fi.params.cpt, ex.params.cpt, atol=1e-6)
    np.testing.assert_array_equal(fi.active, ex.active)
