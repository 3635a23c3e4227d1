"""The fast (default) group-lasso solver reaches the same optimum as a tight-tolerance run.

Regression tests for the scale-aware stopping tests (`jaxnb.optim.fista` rounding floor,
`jaxnb.optim.prox_dykstra` relative tolerance): under float32 the float64-style absolute tolerances
could never be met, so every Dykstra prox ran all its passes and every FISTA solve all its steps
(about 50 s for one default discrete Table-1 fit). Iteration counts stand in for wall time here
(deterministic, unlike timings on a shared machine). Data: Table-1 DR data sets (N = 300, p = 20,
3 states, 3 classes), the hard discrete case.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.datasets import make_table1
from jaxnb.estimators_penalized import GroupLassoNB
from jaxnb.methods import group_lasso as gl
from jaxnb.methods.nb import fit_stats
from jaxnb.optim import fista_init, fista_step, prox_dykstra, prox_group_l2, solve_fista
from jaxnb.optim.projections import project_cpt, project_cpt_affine

N_STATES = (3,) * 20
MAX_STEPS = 20000


@pytest.fixture(scope="module")
def dr_data():
    d = make_table1(jax.random.PRNGKey(5), "DR", 300, 2000)
    return {k: np.asarray(v) for k, v in d.items()}


def _stats(d, dtype):
    codes = jnp.asarray(d["codes_train"], jnp.int32)
    values = jnp.zeros((codes.shape[0], 0), dtype)
    y = jnp.asarray(d["y_train"], jnp.int32)
    return fit_stats(
        codes, values, y, jnp.ones(codes.shape[0], dtype), n_states=N_STATES, n_classes=3
    )


@jax.jit
def _path(stats, tol):
    """aL1/L2-NB path on the estimator's grid (20 points down to 1e-3 lambda_max)."""
    problem = gl.make_group_lasso_problem(stats, alpha=jnp.asarray(1.0, tol.dtype), adaptive=True)
    grid = gl.penalty_grid(problem, 20, ratio=1e-3)
    path = gl.group_lasso_path(problem, grid, tol=tol, max_steps=MAX_STEPS)
    return problem, path


_objective = jax.jit(jax.vmap(gl.group_lasso_objective, in_axes=(None, 0, 0, 0)))
_kkt = jax.jit(jax.vmap(gl.kkt_residual, in_axes=(None, 0, 0, 0, None)))


@pytest.fixture(scope="module")
def reference(dr_data):
    """Tight float64 path (tol 1e-11)."""
    problem, path = _path(_stats(dr_data, jnp.float64), jnp.asarray(1e-11))
    assert bool(jnp.all(path.info.converged))
    return problem, path


def test_default_tolerance_float64_matches_tight_reference(dr_data, reference):
    problem, ref = reference
    _, path = _path(_stats(dr_data, jnp.float64), jnp.asarray(1e-7))  # the estimator default
    assert bool(jnp.all(path.info.converged))
    steps = np.asarray(path.info.num_steps)
    assert steps.max() < 400 and steps.sum() < np.asarray(ref.info.num_steps).sum()
    np.testing.assert_allclose(path.objective, ref.objective, rtol=1e-6)
    np.testing.assert_array_equal(path.active, ref.active)
    kkt = _kkt(problem, path.params, path.penalties, path.penalties, 0.1)
    assert float(jnp.max(kkt)) < 1e-5


def test_float32_path_converges_fast_to_the_float64_optimum(dr_data, reference):
    problem64, ref = reference
    with jax.enable_x64(False):
        stats32 = _stats(dr_data, jnp.float32)
        _, path = _path(stats32, jnp.asarray(1e-7, jnp.float32))
        assert path.params.cpt.dtype == jnp.float32
        converged = np.asarray(path.info.converged)
        steps = np.asarray(path.info.num_steps)
        params32 = jax.tree.map(np.asarray, path.params)
        active = np.asarray(path.active)
    # every grid point certified (before the rounding floor: none, all at max_steps)
    assert converged.all()
    assert steps.max() < 300, steps
    np.testing.assert_array_equal(active, np.asarray(ref.active))
    # the float32 solutions, evaluated in float64, are optimal to 1e-6 relative
    params = jax.tree.map(lambda a: jnp.asarray(a, jnp.float64), params32)
    obj = _objective(problem64, params, ref.penalties, ref.penalties)
    np.testing.assert_allclose(obj, ref.objective, rtol=1e-6)
    np.testing.assert_allclose(params.cpt, ref.params.cpt, atol=2e-4)


def test_estimator_default_float32_selects_the_reference_model(dr_data):
    X, y = dr_data["codes_train"], dr_data["y_train"]
    Xte, yte = dr_data["codes_test"], dr_data["y_test"]
    ref = GroupLassoNB(adaptive=True, n_states=list(N_STATES), tol=1e-11, max_steps=MAX_STEPS)
    ref.fit(X, y)
    assert ref.path_["converged"].all()
    with jax.enable_x64(False):
        m = GroupLassoNB(adaptive=True, n_states=list(N_STATES)).fit(X.astype(np.int32), y)
        assert m.params_.cpt.dtype == jnp.float32
        pred = m.predict(Xte.astype(np.int32))
    assert m.path_["converged"].all() and m.converged_
    assert m.path_["n_steps"].max() < 300
    assert m.selected_index_ == ref.selected_index_
    np.testing.assert_array_equal(m.support_, ref.support_)
    np.testing.assert_array_equal(m.path_["n_active"], ref.path_["n_active"])
    assert np.mean(pred != yte) == pytest.approx(np.mean(ref.predict(Xte) != yte), abs=1e-3)


def test_dykstra_float32_stops_after_a_few_passes(dr_data, reference):
    """The float64 default dykstra_tol (1e-13) is below float32 rounding: the relative tolerance
    stops the loop after a few passes, at the float64 answer to float32 accuracy."""
    problem, _ = reference
    seg = np.repeat(np.arange(20), 3).astype(np.int32)
    z = problem.mle.cpt + 0.05 * jnp.sin(jnp.arange(problem.mle.cpt.size)).reshape(
        problem.mle.cpt.shape
    )
    thr = 0.05 * jnp.linspace(0.0, 0.2, 20)

    def prox(z, center, thr, tol):
        shrink = lambda c: prox_group_l2(
            c, center, thr, segment_ids=jnp.asarray(seg), num_segments=20
        )
        return prox_dykstra(
            project_cpt_affine(z, N_STATES),
            shrink,
            lambda c: project_cpt(c, N_STATES),
            max_steps=100,
            tol=tol,
        )

    x64, _, info64 = jax.jit(prox)(z, problem.center.cpt, thr, 1e-14)
    assert bool(info64.converged)
    with jax.enable_x64(False):
        f32 = lambda a: jnp.asarray(np.asarray(a), jnp.float32)
        x32, _, info32 = jax.jit(prox)(f32(z), f32(problem.center.cpt), f32(thr), 1e-13)
        x32, steps, conv = np.asarray(x32), int(info32.num_steps), bool(info32.converged)
    assert conv and steps <= 5
    np.testing.assert_allclose(x32, np.asarray(x64), atol=1e-6)


def test_fista_rounding_floor_certifies_unreachable_tolerance():
    """tol = 0 is unreachable in float32 (unless rounding lands on an exact fixed point): the
    floor certifies the solution early, and the state records the effective tolerance."""
    rng = np.random.default_rng(3)
    A64, b64 = rng.normal(size=(40, 6)), rng.normal(size=40)
    prox = lambda z, s: jnp.maximum(z, 0.0)
    with jax.enable_x64(False):
        A, b = jnp.asarray(A64, jnp.float32), jnp.asarray(b64, jnp.float32)
        f = lambda x: 0.5 * jnp.sum((A @ x - b) ** 2)
        x, info = jax.jit(lambda x0: solve_fista(f, prox, x0, tol=0.0, max_steps=3000))(
            jnp.zeros(6, jnp.float32)
        )
        state = jax.jit(lambda x0: fista_step(fista_init(x0), f, prox))(jnp.ones(6, jnp.float32))
        x, info, tol_eff = np.asarray(x), jax.tree.map(np.asarray, info), float(state.tolerance)
    assert bool(info.converged) and int(info.num_steps) < 1000
    assert 0.0 < tol_eff < 1e-3
    f64 = lambda v: 0.5 * jnp.sum((jnp.asarray(A64) @ v - jnp.asarray(b64)) ** 2)
    ref, _ = solve_fista(f64, prox, jnp.zeros(6), tol=1e-12, max_steps=20000)
    np.testing.assert_allclose(x, np.asarray(ref), atol=1e-5)
