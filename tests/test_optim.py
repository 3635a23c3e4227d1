"""Tests for jaxnb.optim: projections, group prox, Dykstra, FISTA (float64, NumPy/SciPy refs)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxnb.optim import (
    fista_init,
    fista_step,
    group_norms,
    project_box,
    project_cpt,
    project_cpt_affine,
    project_simplex,
    prox_dykstra,
    prox_gradient_residual,
    prox_group_l2,
    prox_group_l2_box,
    prox_group_l2_simplex,
    solve_fista,
)

scipy_optimize = pytest.importorskip("scipy.optimize")

# Jitted entry points: op-by-op (eager) dispatch compiles every primitive separately, which is far
# slower than one compilation per function on a small shared machine.
_simplex = jax.jit(project_simplex, static_argnames="axis")
_cpt = jax.jit(project_cpt, static_argnums=1)
_prox = jax.jit(prox_group_l2, static_argnames="num_segments")


def ref_simplex(v):
    """Projection onto the simplex by bisection on tau in sum(max(v - tau, 0)) = 1 (NumPy)."""
    v = np.asarray(v, float)
    lo, hi = v.min() - 1.0, v.max()
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:  # lo and hi adjacent doubles: bisection is done
            break
        if np.maximum(v - mid, 0).sum() > 1:
            lo = mid
        else:
            hi = mid
    return np.maximum(v - 0.5 * (lo + hi), 0)


def slsqp_simplex(v):
    m = len(v)
    res = scipy_optimize.minimize(
        lambda x: 0.5 * np.sum((x - v) ** 2),
        np.full(m, 1.0 / m),
        jac=lambda x: x - v,
        method="SLSQP",
        bounds=[(0, None)] * m,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1, "jac": lambda x: np.ones(m)}],
        options={"ftol": 1e-15, "maxiter": 500},
    )
    return res.x


def lasso_cd(A, b, lam, sweeps=100_000, tol=1e-15):
    """min 0.5 ||A x - b||^2 + lam ||x||_1 by cyclic coordinate descent (float64 NumPy)."""
    x = np.zeros(A.shape[1])
    col_sq = np.sum(A * A, axis=0)
    r = b - A @ x
    for _ in range(sweeps):
        change = 0.0
        for j in range(A.shape[1]):
            rho = A[:, j] @ r + col_sq[j] * x[j]
            new = np.sign(rho) * max(abs(rho) - lam, 0.0) / col_sq[j]
            r -= A[:, j] * (new - x[j])
            change = max(change, abs(new - x[j]))
            x[j] = new
        if change < tol:
            break
    return x


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("m", [1, 2, 5, 9])
def test_project_simplex_matches_references(seed, m):
    rng = np.random.default_rng(seed)
    v = rng.normal(scale=2.0, size=m)
    out = np.asarray(_simplex(jnp.asarray(v)))
    np.testing.assert_allclose(out, ref_simplex(v), atol=1e-12)
    np.testing.assert_allclose(out, slsqp_simplex(v), atol=1e-7)  # SLSQP's own accuracy


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8])
def test_pairwise_simplex_threshold_equals_sorted(m):
    """The sort-free threshold (m <= 8) equals the sort-based one, with ties and ragged masks."""
    from jaxnb.optim import projections as pj

    assert m <= pj._PAIRWISE_MAX
    rng = np.random.default_rng(m)
    v = np.round(rng.normal(scale=1.5, size=(400, m)), 1)  # many exact ties
    v[:50] = v[:50, :1]  # all-equal rows
    valid = rng.random((400, m)) < 0.8
    valid[np.arange(400), rng.integers(0, m, 400)] = True  # every simplex non-empty
    a = np.asarray(pj._simplex_threshold_small(jnp.asarray(v), -1, jnp.asarray(valid)))
    b = np.asarray(pj._simplex_threshold_sorted(jnp.asarray(v), jnp.asarray(valid)))
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    for row in range(0, 400, 37):  # and the projection itself against the bisection reference
        vv = v[row][valid[row]]
        np.testing.assert_allclose(np.maximum(vv - a[row, 0], 0), ref_simplex(vv), atol=1e-12)


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("axis", [0, 1])
def test_unrolled_simplex_threshold_equals_sorted(m, axis):
    """The written-out threshold (no padding, m <= 8) equals the sort-based one, ties included."""
    from jaxnb.optim import projections as pj

    rng = np.random.default_rng(10 + m)
    v = np.round(rng.normal(scale=1.5, size=(300, m)), 1)  # many exact ties
    v[:40] = v[:40, :1]  # all-equal rows
    a = np.asarray(pj._simplex_threshold_small(jnp.asarray(np.moveaxis(v, 1, axis)), axis))
    b = np.asarray(pj._simplex_threshold_sorted(jnp.asarray(v), jnp.ones(v.shape, bool)))
    np.testing.assert_allclose(np.moveaxis(a, axis, 1), b, rtol=0, atol=1e-12)
    out = np.asarray(_simplex(jnp.asarray(v), axis=1))  # the public entry takes that path
    for row in range(0, 300, 29):
        np.testing.assert_allclose(out[row], ref_simplex(v[row]), atol=1e-12)


@pytest.mark.parametrize("n_states", [(3, 3, 3), (2,), (1, 3, 2), (4, 1)])
def test_block_reductions_match_segment_definition(n_states):
    """block_sum / block_max / block_expand (reshape form for uniform states, segment ops
    otherwise) equal the per-predictor loop, and survive vmap."""
    from jaxnb.optim.blocks import block_expand, block_max, block_sum, uniform_states

    assert (uniform_states(n_states) is not None) == (len(set(n_states)) == 1)
    rng = np.random.default_rng(len(n_states))
    x = rng.normal(size=(sum(n_states), 3))
    off = np.concatenate([[0], np.cumsum(n_states)])
    ref_sum = np.stack([x[a:b].sum(0) for a, b in zip(off[:-1], off[1:], strict=True)])
    ref_max = np.stack([x[a:b].max(0) for a, b in zip(off[:-1], off[1:], strict=True)])
    np.testing.assert_allclose(block_sum(jnp.asarray(x), n_states), ref_sum, rtol=1e-15)
    np.testing.assert_array_equal(block_max(jnp.asarray(x), n_states), ref_max)
    g = rng.normal(size=(len(n_states), 3))
    np.testing.assert_array_equal(
        block_expand(jnp.asarray(g), n_states), np.repeat(g, n_states, axis=0)
    )
    xs = jnp.asarray(rng.normal(size=(4,) + x.shape))
    vm = jax.vmap(lambda a: block_sum(a, n_states))(xs)
    np.testing.assert_allclose(vm, np.stack([block_sum(a, n_states) for a in xs]), rtol=1e-15)


def test_prox_dykstra_stops_after_one_pass_when_prox_g_is_feasible():
    """prox_g(z) inside C is the prox of the sum: one pass, and the same point as a forced run."""
    z = np.array([0.4, 0.3, 0.2, 0.1])
    center = np.array([0.25, 0.25, 0.25, 0.25])
    run = lambda tol: prox_dykstra(
        jnp.asarray(z),
        lambda a: prox_group_l2(a[None], jnp.asarray(center)[None], 0.05)[0],
        project_simplex,
        max_steps=50,
        tol=tol,
    )
    x, _, info = run(1e-14)
    assert int(info.num_steps) == 1 and bool(info.converged)
    x_forced, _, info_forced = run(-1.0)  # negative tolerance: every pass runs
    assert int(info_forced.num_steps) == 50
    np.testing.assert_allclose(np.asarray(x), np.asarray(x_forced), atol=1e-15)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_project_simplex_batched_properties(axis):
    rng = np.random.default_rng(1)
    v = jnp.asarray(rng.normal(scale=3.0, size=(4, 6, 3)))
    out = _simplex(v, axis=axis)
    assert out.shape == v.shape
    np.testing.assert_allclose(np.sum(out, axis=axis), 1.0, atol=1e-12)
    assert float(jnp.min(out)) >= 0.0
    np.testing.assert_allclose(_simplex(out, axis=axis), out, atol=1e-14)  # idempotent
    moved = np.moveaxis(np.asarray(v), axis, -1).reshape(-1, v.shape[axis])
    ref = np.stack([ref_simplex(row) for row in moved])
    got = np.moveaxis(np.asarray(out), axis, -1).reshape(-1, v.shape[axis])
    np.testing.assert_allclose(got, ref, atol=1e-12)
    # vmap equals a loop
    vm = jax.jit(jax.vmap(lambda a: project_simplex(a, axis=0), in_axes=2, out_axes=2))(v)
    np.testing.assert_allclose(
        vm, jnp.stack([_simplex(v[..., k], axis=0) for k in range(3)], 2), atol=1e-15
    )


def test_project_simplex_fixed_points_and_grad():
    p = jnp.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(_simplex(p), p, atol=1e-15)
    np.testing.assert_allclose(project_simplex(p + 1.0), _simplex(p + 1.0), atol=0)  # eager == jit
    # differentiable a.e.; at an interior point the Jacobian is I - 11^T/m (the tangent projection)
    jac = jax.jit(jax.jacobian(project_simplex))(p + 0.1)
    np.testing.assert_allclose(jac, np.eye(3) - 1.0 / 3, atol=1e-12)
    check_grads(
        jax.jit(lambda v: jnp.sum(project_simplex(v) ** 2 * jnp.arange(1.0, 4.0))),
        (jnp.array([0.3, 0.5, 0.4]),),
        order=1,
    )


@pytest.mark.parametrize("n_states", [(3,), (1, 3, 2, 5), (4, 4), (2, 7, 1)])
def test_project_cpt_matches_blockwise(n_states):
    rng = np.random.default_rng(sum(n_states))
    K, c = sum(n_states), 3
    cpt = rng.normal(size=(K, c))
    out = np.asarray(_cpt(jnp.asarray(cpt), n_states))
    off = 0
    for m in n_states:
        for j in range(c):
            np.testing.assert_allclose(
                out[off : off + m, j], ref_simplex(cpt[off : off + m, j]), atol=1e-12
            )
        off += m
    np.testing.assert_allclose(_cpt(jnp.asarray(out), n_states), out, atol=1e-14)
    # 1-D input (one column) works too
    np.testing.assert_allclose(_cpt(jnp.asarray(cpt[:, 0]), n_states), out[:, 0], atol=1e-15)


def test_project_cpt_affine_and_box():
    n_states = (2, 3)
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(5, 2)))
    a = jax.jit(project_cpt_affine, static_argnums=1)(x, n_states)
    np.testing.assert_allclose(jnp.sum(a[:2], 0), 1.0, atol=1e-14)
    np.testing.assert_allclose(jnp.sum(a[2:], 0), 1.0, atol=1e-14)
    # orthogonal projection: the correction is constant within each block
    d = np.asarray(x - a)
    np.testing.assert_allclose(d[0], d[1], atol=1e-15)
    np.testing.assert_allclose(d[2], d[4], atol=1e-15)
    v = jnp.array([[-1.0, 0.5, 3.0]])
    np.testing.assert_allclose(project_box(v, 0.0, 1.0), [[0.0, 0.5, 1.0]])
    np.testing.assert_allclose(project_box(v, jnp.array([0.0, 0.6, 0.0])), [[0.0, 0.6, 3.0]])
    np.testing.assert_allclose(project_box(v, upper=2.0), [[-1.0, 0.5, 2.0]])
    with pytest.raises(ValueError, match="sum\\(n_states\\)"):
        project_cpt(jnp.zeros((4, 2)), (2, 3))


def test_prox_group_l2_exact_zero_identity_and_formula():
    rng = np.random.default_rng(3)
    x = jnp.asarray(rng.normal(size=(5, 4)))
    c = jnp.asarray(rng.normal(size=(5, 4)))
    norms = np.linalg.norm(np.asarray(x - c), axis=1)
    thr = jnp.asarray(np.where(np.arange(5) % 2 == 0, norms * 1.5, norms * 0.5))
    out = np.asarray(_prox(x, c, thr))
    for g in range(5):
        if g % 2 == 0:  # norm <= threshold: exactly the centre, bit for bit
            assert np.array_equal(out[g], np.asarray(c)[g])
        else:
            d = np.asarray(x - c)[g]
            np.testing.assert_allclose(out[g], np.asarray(c)[g] + 0.5 * d, rtol=1e-13)
    # boundary: norm == threshold is removed
    assert np.array_equal(np.asarray(_prox(x, c, jnp.asarray(norms)))[1], np.asarray(c)[1])
    # zero threshold is the identity
    np.testing.assert_allclose(_prox(x, c, jnp.zeros(5)), x, atol=1e-15)
    # infinite threshold forces the centre
    assert np.array_equal(np.asarray(_prox(x, c, jnp.full(5, jnp.inf))), np.asarray(c))


def test_prox_group_l2_segments_equal_leading_axis_and_scipy():
    rng = np.random.default_rng(4)
    n_states = (2, 3, 1)
    x = rng.normal(size=(6, 2))
    c = rng.normal(size=(6, 2))
    seg = jnp.asarray(np.repeat(np.arange(3), n_states))
    thr = jnp.array([0.3, 5.0, 0.1])
    out = np.asarray(_prox(jnp.asarray(x), jnp.asarray(c), thr, segment_ids=seg, num_segments=3))
    off = 0
    for i, m in enumerate(n_states):
        blk = slice(off, off + m)
        ref = _prox(
            jnp.asarray(x[blk].reshape(1, -1)), jnp.asarray(c[blk].reshape(1, -1)), thr[i : i + 1]
        )
        np.testing.assert_allclose(out[blk].reshape(1, -1), ref, atol=1e-15)
        off += m
    # the CPT-layout form (n_states=) gives the same groups and norms
    by_layout = prox_group_l2(jnp.asarray(x), jnp.asarray(c), thr, n_states=n_states)
    np.testing.assert_allclose(by_layout, out, rtol=0, atol=1e-15)
    np.testing.assert_allclose(
        group_norms(jnp.asarray(x), jnp.asarray(c), n_states=n_states),
        group_norms(jnp.asarray(x), jnp.asarray(c), segment_ids=seg, num_segments=3),
        rtol=1e-15,
    )
    uniform = rng.normal(size=(3, 2, 2))  # uniform blocks take the reshape path
    np.testing.assert_allclose(
        prox_group_l2(jnp.asarray(uniform.reshape(6, 2)), 0.0, thr, n_states=(2, 2, 2)),
        _prox(jnp.asarray(uniform), 0.0, thr).reshape(6, 2),
        rtol=1e-15,
    )
    # scipy reference of prox for group 0: argmin 0.5||z-x||^2 + t ||z-c||
    blk = slice(0, 2)
    obj = lambda z: (
        0.5 * np.sum((z - x[blk].ravel()) ** 2) + 0.3 * np.linalg.norm(z - c[blk].ravel())
    )
    res = scipy_optimize.minimize(
        obj,
        x[blk].ravel(),
        method="Nelder-Mead",
        options={"xatol": 1e-12, "fatol": 1e-15, "maxiter": 20000},
    )
    np.testing.assert_allclose(out[blk].ravel(), res.x, atol=1e-6)
    with pytest.raises(ValueError, match="num_segments"):
        prox_group_l2(jnp.asarray(x), jnp.asarray(c), 0.1, segment_ids=seg)


def test_prox_group_l2_transforms():
    rng = np.random.default_rng(5)
    x = jnp.asarray(rng.normal(size=(3, 4)))
    c = jnp.zeros((3, 4))
    thr = jnp.array([0.1, 10.0, 0.5])
    f = lambda a, t: prox_group_l2(a, c, t)
    np.testing.assert_allclose(jax.jit(f)(x, thr), f(x, thr), atol=0)
    ts = jnp.array([0.0, 0.2, 1.0])
    vm = jax.vmap(f, in_axes=(None, 0))(x, ts)
    np.testing.assert_allclose(vm, jnp.stack([f(x, t) for t in ts]), atol=0)
    check_grads(jax.jit(lambda a: jnp.sum(f(a, thr) ** 2)), (x,), order=1)


def _prox_simplex_group_scipy(z, center, t):
    """argmin 0.5||x - z||^2 + t ||x - center||  s.t. x on the simplex (SLSQP, smoothed norm)."""
    m = len(z)
    obj = lambda x: 0.5 * np.sum((x - z) ** 2) + t * np.sqrt(np.sum((x - center) ** 2) + 1e-20)
    res = scipy_optimize.minimize(
        obj,
        np.full(m, 1.0 / m),
        method="SLSQP",
        bounds=[(0, 1)] * m,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    return res.x, obj


@pytest.mark.parametrize("t", [0.05, 0.4, 3.0])
def test_prox_dykstra_group_plus_simplex(t):
    z = np.array([0.9, -0.4, 0.5, 0.2])  # forces an active non-negativity constraint
    center = np.array([0.1, 0.4, 0.3, 0.2])
    x, y, info = jax.jit(
        lambda z, t: prox_dykstra(
            z,
            lambda a: prox_group_l2(a[None], jnp.asarray(center)[None], t)[0],
            project_simplex,
            max_steps=2000,
            tol=1e-14,
        )
    )(jnp.asarray(z), t)
    x = np.asarray(x)
    assert bool(info.converged)
    np.testing.assert_allclose(x.sum(), 1.0, atol=1e-12)
    assert x.min() >= 0
    ref, obj = _prox_simplex_group_scipy(z, center, t)
    assert obj(x) <= obj(ref) + 1e-9
    np.testing.assert_allclose(x, ref, atol=2e-5)
    # composing the two maps once is not the prox of the sum (why Dykstra is needed)
    once = np.asarray(
        _simplex(_prox(jnp.asarray(z)[None], jnp.asarray(center)[None], jnp.asarray([t]))[0])
    )
    if t == 0.4:
        assert obj(once) > obj(x) + 1e-6


def test_solve_fista_nnls_matches_scipy():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 8))
    b = rng.normal(size=30)
    f = lambda x: 0.5 * jnp.sum((jnp.asarray(A) @ x - jnp.asarray(b)) ** 2)
    prox = lambda z, s: jnp.maximum(z, 0.0)
    x, info = jax.jit(
        lambda x0: solve_fista(f, prox, x0, tol=1e-10, max_steps=5000, recompute_residual=True)
    )(jnp.zeros(8))
    ref, _ = scipy_optimize.nnls(A, b)
    assert bool(info.converged) and float(info.residual) <= 1e-10
    np.testing.assert_allclose(x, ref, atol=1e-8)
    np.testing.assert_allclose(info.objective, 0.5 * np.sum((A @ ref - b) ** 2), rtol=1e-12)
    # the reported residual is the prox-gradient residual at x
    np.testing.assert_allclose(
        prox_gradient_residual(x, f, prox, info.step_size), info.residual, rtol=1e-10
    )


def test_solve_fista_simplex_ls_pytree_vmap_and_domain_guard():
    """Pytree params, a log-barrier-like smooth part (open domain) and vmap over data."""
    rng = np.random.default_rng(1)
    counts = jnp.asarray(rng.integers(0, 5, size=(3, 4)).astype(float)) + 0.5

    def make(counts, lam):
        # minimize -sum counts log p_j + lam/2 ||m - 1||^2 over p on the simplex (per row) and m
        f = lambda P: -jnp.sum(counts * jnp.log(P["p"])) + 0.5 * lam * jnp.sum((P["m"] - 1.0) ** 2)
        prox = lambda Z, s: {"p": project_simplex(Z["p"], axis=1), "m": Z["m"]}
        return f, prox

    def fit(counts, lam):
        f, prox = make(counts, lam)
        init = {"p": jnp.full((3, 4), 0.25), "m": jnp.zeros(2)}
        return solve_fista(f, prox, init, tol=1e-10, max_steps=5000, step_growth=1.5)

    batch = jnp.stack([counts, counts[::-1]])
    Pb, infob = jax.jit(jax.vmap(fit, in_axes=(0, None)))(batch, 2.0)
    assert bool(jnp.all(infob.converged))
    for k in range(2):
        np.testing.assert_allclose(Pb["p"][k], batch[k] / batch[k].sum(1, keepdims=True), atol=1e-9)
        np.testing.assert_allclose(Pb["m"][k], 1.0, atol=1e-9)


def test_fista_init_step_decrease():
    A = jnp.asarray(np.random.default_rng(2).normal(size=(10, 4)))
    f = lambda x: 0.5 * jnp.sum((A @ x - 1.0) ** 2) + 0.1 * jnp.sum(jnp.abs(x))
    smooth = lambda x: 0.5 * jnp.sum((A @ x - 1.0) ** 2)
    prox = lambda z, s: jnp.sign(z) * jnp.maximum(jnp.abs(z) - 0.1 * s, 0.0)
    state = fista_init(jnp.zeros(4), step_size=1.0)
    values = [float(f(state.params))]
    step = jax.jit(lambda st: fista_step(st, smooth, prox))
    for _ in range(30):
        state = step(state)
        values.append(float(f(state.params)))
    assert int(state.num_steps) == 30
    assert values[-1] < values[0] - 1e-3
    assert float(state.step_size) <= 1.0
    # run to convergence, solve_fista's limit is the Lasso solution (NumPy coordinate descent);
    # lam = 1 zeroes predictor 1 exactly
    solve = jax.jit(
        lambda lam: solve_fista(
            smooth,
            lambda z, s: jnp.sign(z) * jnp.maximum(jnp.abs(z) - lam * s, 0.0),
            jnp.zeros(4),
            tol=1e-12,
            max_steps=20_000,
        )
    )
    for lam in (0.1, 1.0):
        x, info = solve(lam)
        assert bool(info.converged)
        ref = lasso_cd(np.asarray(A), np.ones(10), lam)
        np.testing.assert_allclose(np.asarray(x), ref, rtol=0, atol=1e-7, err_msg=f"{lam=}")
        obj = lambda v, lam=lam: (
            0.5 * np.sum((np.asarray(A) @ v - 1.0) ** 2) + lam * np.sum(np.abs(v))
        )
        np.testing.assert_allclose(obj(np.asarray(x)), obj(ref), rtol=1e-12)
        assert np.count_nonzero(ref) == (4 if lam == 0.1 else 3)
        if lam == 1.0:
            assert float(x[1]) == 0.0


def _ref_prox_l2_simplex(z, c, thr, n_states):
    """Prox of thr_i ||theta_i - c_i|| + simplex columns (float64 NumPy, independent of the
    library): theta(u) = P_simplex(c + u (z - c)) column by column (`ref_simplex`), and u in (0, 1]
    by bisection on h(u) = (1 - u) / u ||theta(u) - c|| = thr_i (h is non-increasing)."""
    out, removed, kinds = np.empty_like(z), [], []
    off = np.concatenate([[0], np.cumsum(n_states)])

    def proj(zi, ci, u):
        cols = [ref_simplex(ci[:, j] + u * (zi[:, j] - ci[:, j])) for j in range(zi.shape[1])]
        return np.stack(cols, 1)

    def h(zi, ci, u):
        return (1.0 - u) / u * np.sqrt(((proj(zi, ci, u) - ci) ** 2).sum())

    for i in range(len(n_states)):
        zi, ci = z[off[i] : off[i + 1]], c[off[i] : off[i + 1]]
        if h(zi, ci, 1e-9) <= thr[i]:
            out[off[i] : off[i + 1]], kind = ci, "removed"
        else:
            lo, hi = 1e-9, 1.0
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if not lo < mid < hi:  # adjacent doubles
                    break
                lo, hi = (mid, hi) if h(zi, ci, mid) > thr[i] else (lo, mid)
            out[off[i] : off[i + 1]] = proj(zi, ci, hi)
            kind = "interior" if out[off[i] : off[i + 1]].min() > 0 else "bound"
        removed.append(kind == "removed")
        kinds.append(kind)
    return out, np.array(removed), kinds


def _random_cpt_prox_problem(rng, n_states, n_cols, zero_fraction):
    """A centre on the simplex columns (some entries exactly 0, as with unsmoothed counts) and a
    point z on the affine hull of the blocks."""
    K = sum(n_states)
    c = rng.random((K, n_cols)) * (rng.random((K, n_cols)) >= zero_fraction)
    off = np.concatenate([[0], np.cumsum(n_states)])
    for i in range(len(n_states)):
        blk = c[off[i] : off[i + 1]]
        blk[:, blk.sum(0) == 0] = 1.0
        c[off[i] : off[i + 1]] = blk / blk.sum(0)
    z = c + rng.normal(size=(K, n_cols)) * 0.3
    z = np.asarray(project_cpt_affine(jnp.asarray(z), n_states))
    return z, c


@pytest.mark.parametrize("n_states", [(2, 3, 4, 3), (9, 2, 12)])  # sort-free and sorted paths
def test_prox_group_l2_simplex_matches_numpy_reference(n_states):
    rng = np.random.default_rng(sum(n_states))
    prox = jax.jit(prox_group_l2_simplex, static_argnames="n_states")
    kinds_seen = set()
    for trial in range(12):
        z, c = _random_cpt_prox_problem(rng, n_states, 3, zero_fraction=0.3)
        thr = rng.random(len(n_states)) * [0.0, 0.05, 0.3, 1.0][trial % 4]
        theta, removed = prox(jnp.asarray(z), jnp.asarray(c), jnp.asarray(thr), n_states=n_states)
        ref, ref_removed, kinds = _ref_prox_l2_simplex(z, c, thr, n_states)
        kinds_seen.update(kinds)
        np.testing.assert_allclose(theta, ref, atol=1e-10)
        np.testing.assert_array_equal(removed, ref_removed)
        theta = np.asarray(theta)
        assert theta.min() >= 0
        for blk in np.split(theta, np.cumsum(n_states)[:-1]):
            np.testing.assert_allclose(blk.sum(0), 1.0, atol=1e-12)
        # removed groups are the centre bit for bit
        for i, blk in enumerate(np.split(np.arange(sum(n_states)), np.cumsum(n_states)[:-1])):
            if ref_removed[i]:
                np.testing.assert_array_equal(theta[blk], c[blk])
    # every branch was exercised: removed, plain shrink, shrink meeting theta >= 0 (bisection)
    assert kinds_seen == {"removed", "interior", "bound"}


def test_prox_group_l2_simplex_agrees_with_dykstra_and_vmaps():
    """Same prox as Dykstra's alternating algorithm run to convergence, and vmap over thresholds
    equals the loop."""
    n_states = (3, 4, 2)
    z, c = _random_cpt_prox_problem(np.random.default_rng(5), n_states, 2, zero_fraction=0.4)
    thrs = jnp.asarray([[0.01, 0.02, 0.03], [0.1, 0.2, 0.05], [0.4, 0.4, 0.4]])
    f = jax.jit(lambda t: prox_group_l2_simplex(z, c, t, n_states=n_states)[0])
    batched = jax.vmap(f)(thrs)
    for k, t in enumerate(thrs):
        d_x, _, info = prox_dykstra(
            jnp.asarray(z),
            lambda a, t=t: prox_group_l2(a, c, t, n_states=n_states),
            lambda a: project_cpt(a, n_states),
            max_steps=100_000,
            tol=1e-15,
        )
        assert bool(info.converged)
        np.testing.assert_allclose(batched[k], d_x, atol=1e-12)
        np.testing.assert_allclose(batched[k], f(t), atol=1e-15)


def test_prox_group_l2_simplex_float32_nan_and_bad_input():
    n_states = (3, 4, 2)
    z, c = _random_cpt_prox_problem(np.random.default_rng(7), n_states, 2, zero_fraction=0.4)
    thr = np.array([0.05, 0.2, 0.4])
    ref, _, kinds = _ref_prox_l2_simplex(z, c, thr, n_states)
    assert "bound" in kinds  # the bisection branch runs
    # float32 arrays keep float32 under x64 (the bisection's carry once mixed in a float64 bound)
    f32 = lambda a: jnp.asarray(a, jnp.float32)
    th32, _ = prox_group_l2_simplex(f32(z), f32(c), f32(thr), n_states=n_states)
    assert th32.dtype == jnp.float32
    np.testing.assert_allclose(th32, ref, atol=2e-6)
    # a NaN / inf group comes back NaN, the other groups unchanged
    for bad in (np.nan, np.inf):
        zb = z.copy()
        zb[0, 0] = bad
        th, removed = prox_group_l2_simplex(zb, c, thr, n_states=n_states)
        assert np.isnan(np.asarray(th)[:3]).all() and not bool(removed[0])
        np.testing.assert_allclose(np.asarray(th)[3:], ref[3:], atol=1e-12)
    with pytest.raises(ValueError, match="sum\\(n_states\\)"):
        prox_group_l2_simplex(z, c, thr, n_states=(3, 3, 2))
    with pytest.raises(ValueError, match="flattened CPT"):
        prox_group_l2_simplex(z[:, 0], c[:, 0], thr, n_states=n_states)
    with pytest.raises(ValueError, match="n_states is empty"):
        prox_group_l2_simplex(z[:0], c[:0], thr[:0], n_states=())


def _box_rows(seed=0, g=40, m=6):
    """Rows of 3 free entries and 3 bounded ones (some bounds at the centre), random thresholds."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(g, m))
    c = 0.3 * rng.normal(size=(g, m))
    lower = np.full((g, m), -np.inf)
    lower[:, 3:] = c[:, 3:] - 0.5 * rng.random((g, 3))
    lower[:4, 3:] = c[:4, 3:]  # bound at the centre: entries below it are absorbed by the bound
    t = 2.0 * rng.random(g)
    t[:3] = 0.0
    t[-5:] = 10.0  # above ||D (x - c)|| for these rows: removed
    return x, c, lower, t


def test_prox_group_l2_box_euclidean_equals_dykstra():
    """Without a metric it is the prox of group shrink + box that Dykstra approaches (616 passes
    to reach 1e-15 here), in one scalar root-finding per row; t = 0 is the plain projection."""
    x, c, lower, t = _box_rows()
    w, removed = jax.jit(prox_group_l2_box)(x, c, t, lower)
    ref, _, info = prox_dykstra(
        jnp.asarray(x),
        lambda p: prox_group_l2(p, c, t),
        lambda p: project_box(p, lower),
        max_steps=100000,
        tol=1e-15,
    )
    assert bool(info.converged)
    np.testing.assert_allclose(w, ref, atol=1e-13)
    np.testing.assert_array_equal(w[:3], np.maximum(x[:3], lower[:3]))
    # removed rows (at least the five with t = 10) are the centre bit for bit
    removed = np.asarray(removed)
    assert removed[-5:].all() and not removed[:3].any()
    np.testing.assert_array_equal(np.asarray(w)[removed], c[removed])
    wr, rr = prox_group_l2_box(x, c, np.full(40, 1e3), lower)
    assert bool(rr.all()) and (np.asarray(wr) == c).all()


@pytest.mark.parametrize("spread", [0.0, 3.0, 7.0])
def test_prox_group_l2_box_metric_satisfies_kkt(spread):
    """KKT of argmin t ||w - c|| + 1/2 sum D (w - x)^2, w >= lower, for metrics whose entries span
    up to e^(2 x 7) ~ 1e6 (a sigma at its floor): on free entries D (x - w) = t v / ||v||, on
    bound entries D (x - w) <= t v / ||v||, removed rows ||D (x - c)|| <= t (bound-absorbed
    entries left out)."""
    x, c, lower, t = _box_rows(seed=1)
    D = np.exp(spread * np.random.default_rng(2).normal(size=x.shape))
    w, removed = jax.jit(prox_group_l2_box)(x, c, t, lower, metric=D)
    w, removed = np.asarray(w), np.asarray(removed)
    assert (w >= lower).all()
    v = w - c
    norm = np.linalg.norm(v, axis=1, keepdims=True)
    kept = ~removed & (t > 0)
    lhs = D * (x - w)
    rhs = t[:, None] * v / np.where(norm > 0, norm, 1.0)
    free = w > lower
    scale = 1e-9 * (1.0 + np.abs(D * x) + np.abs(D * c))
    assert (np.abs(lhs - rhs)[kept[:, None] & free] <= scale[kept[:, None] & free]).all()
    assert (lhs - rhs <= scale)[kept[:, None] & ~free].all()
    z = x - c
    dz = np.where((lower - c >= 0) & (z < 0), 0.0, D * z)
    np.testing.assert_array_equal(removed, np.linalg.norm(dz, axis=1) <= t)
    assert (w[removed] == c[removed]).all()


def test_prox_group_l2_box_float32_keeps_precision_of_x_nan_and_shape():
    """An entry with a huge metric (a sigma at its floor: D ~ 1e6) barely moves from x; its result
    is formed from x, not as c + (w - c), which carried a float32 ulp of c (here 3e-8, a
    gradient-mapping error of 0.03 after multiplying by D) and kept FISTA from converging."""
    x = np.array([[1e-3, 0.7, 0.2]])
    c = np.array([[0.45, 0.45, 0.45]])
    D = np.array([[1e6, 1.0, 1.0]])
    args = (x, c, np.array([0.05]), np.full((1, 3), -np.inf))
    w64, _ = prox_group_l2_box(*args, metric=D)
    w32, _ = prox_group_l2_box(*(a.astype(np.float32) for a in args), metric=D.astype(np.float32))
    assert abs(float(w32[0, 0]) - float(w64[0, 0])) <= 4 * np.finfo(np.float32).eps * 1e-3
    np.testing.assert_allclose(np.asarray(w32, np.float64), w64, rtol=1e-6)
    bad = np.vstack([x, [[np.nan, 0.0, 0.0]]])
    wb, rb = prox_group_l2_box(bad, c, 0.05, -np.inf)
    assert np.isnan(np.asarray(wb)[1]).all() and not bool(rb[1])
    np.testing.assert_allclose(wb[0], prox_group_l2_box(x, c, 0.05, -np.inf)[0][0])
    with pytest.raises(ValueError, match="one group per row"):
        prox_group_l2_box(x[0], c[0], 0.05, -np.inf)


def test_solve_fista_metric_on_a_badly_scaled_problem_and_stop_fn():
    """A box-constrained quadratic with curvatures 1 and 1e6: with its diagonal as the metric
    FISTA converges in a few steps to the same point the Euclidean solver needs thousands of
    steps for; the residual keeps gradient units; stop_fn ends the loop early."""
    h = jnp.array([1.0, 1e6, 3.0])
    b = jnp.array([2.0, -1.0, 0.5])
    f = lambda x: 0.5 * jnp.sum(h * x * x) - jnp.sum(b * x)
    prox = lambda z, s: jnp.maximum(z, 0.0)  # a box prox is the same in any diagonal metric
    ref = np.maximum(np.asarray(b / h), 0.0)
    solve = jax.jit(
        lambda metric: solve_fista(
            f, prox, jnp.ones(3), tol=1e-9, max_steps=20000, metric=metric, recompute_residual=True
        )
    )
    x_m, info_m = solve(h)
    x_e, info_e = jax.jit(lambda x0: solve_fista(f, prox, x0, tol=1e-9, max_steps=2000))(
        jnp.ones(3)
    )
    assert bool(info_m.converged) and int(info_m.num_steps) <= 5
    np.testing.assert_allclose(x_m, ref, atol=1e-12)
    # the Euclidean run: a step of 1 / 1e6 for every coordinate, not there in 2000 steps
    assert not bool(info_e.converged) and float(info_e.step_size) < 2e-6
    assert np.abs(np.asarray(x_e) - ref).max() > 1e-6
    np.testing.assert_allclose(
        prox_gradient_residual(x_m, f, prox, info_m.step_size, metric=h), info_m.residual
    )
    x_s, info_s = solve_fista(
        f, prox, jnp.ones(3), tol=1e-9, max_steps=20000, stop_fn=lambda st: st.num_steps >= 7
    )
    assert int(info_s.num_steps) == 7 and not bool(info_s.converged)
