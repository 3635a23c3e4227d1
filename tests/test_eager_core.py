"""Eager calls of the functional core compile once per shape and take array-likes.

Researchers call the core from notebooks and Python loops (a penalty, a fold, a data set at a
time). `fit_group_lasso` and `group_lasso_path` were plain Python functions around solver loops:
every eager call traced and compiled those loops again (1-2 s per call at any size).
`log_joint` / `log_posterior` ran op by op (~0.1 s per call on 50 rows, against ~1 ms
jitted). All are jitted entry points now; lists are read as arrays, as before.
"""

import jax
import numpy as np
import pytest

import jaxnb
from jaxnb.methods import group_lasso as gl


def _rows(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    codes = rng.integers(0, 3, (n, 3)).astype(np.int32)
    codes[:, 0] = np.where(rng.random(n) < 0.7, y, codes[:, 0])
    values = rng.normal(size=(n, 2)) + y[:, None]
    return codes, values, y


@pytest.fixture(scope="module")
def problem():
    codes, values, y = _rows()
    stats = jaxnb.fit_stats(codes, values, y, n_states=(3, 3, 3), n_classes=2)
    return gl.make_group_lasso_problem(stats)


def test_group_lasso_solves_compile_once(problem, compiles):
    lmax = float(gl.lambda_max(problem))
    for solver in ("exact", "fista"):
        first, _ = gl.fit_group_lasso(problem, 0.5 * lmax, solver=solver)
        before = compiles.n
        for frac in (0.3, 0.1):  # another penalty: the same program
            prm, info = gl.fit_group_lasso(problem, frac * lmax, solver=solver)
            assert bool(info.converged)
        assert compiles.n == before, f"{solver}: {compiles.n - before} compilation(s)"
        # the same solution as inside a caller's jit (which inlines the entry point)
        inner = jax.jit(lambda lam, s=solver: gl.fit_group_lasso(problem, lam, solver=s)[0])
        np.testing.assert_allclose(inner(0.1 * lmax).cpt, prm.cpt, rtol=1e-12, atol=1e-14)
        assert not np.allclose(first.cpt, prm.cpt)  # the penalty did change the solution
    grid = gl.penalty_grid(problem, 4)
    path = gl.group_lasso_path(problem, grid, max_steps=np.int64(3000))
    lower = np.asarray(grid) * 0.9
    before = compiles.n
    again = gl.group_lasso_path(problem, lower, max_steps=3000)
    assert compiles.n == before
    assert again.n_active[-1] >= path.n_active[0]
    # penalties as a list; value checks still run before the jitted solve
    listed = gl.group_lasso_path(problem, [float(g) for g in grid], max_steps=3000)
    np.testing.assert_array_equal(listed.n_active, path.n_active)
    with pytest.raises(ValueError, match="penalties must be finite and within"):
        gl.group_lasso_path(problem, [0.1, -1.0])
    with pytest.raises(ValueError, match="penalty_discrete must be finite and within"):
        gl.fit_group_lasso(problem, -0.1)
    with pytest.raises(ValueError, match="solver must be one of"):
        gl.fit_group_lasso(problem, 0.1, solver="newton")


def test_scoring_rows_compiles_once_and_takes_lists(compiles):
    codes, values, y = _rows()
    params = jaxnb.fit_nb(codes, values, y, n_states=(3, 3, 3), n_classes=2)
    for fn in (jaxnb.log_joint, jaxnb.log_posterior, jaxnb.log_contributions):
        assert hasattr(fn, "lower")  # a jitted entry point
        ref = np.asarray(fn(params, codes, values))
        before = compiles.n
        again = fn(params, codes[::-1], values[::-1] * 2)  # new rows, the same shapes
        assert compiles.n == before, f"{fn.__name__}: {compiles.n - before} compilation(s)"
        assert not np.allclose(again, ref)
        np.testing.assert_array_equal(fn(params, codes.tolist(), values.tolist()), ref)
    # the code range is still checked eagerly, and traced codes still score out-of-range as
    # missing
    bad = codes.copy()
    bad[3, 1] = 5
    with pytest.raises(ValueError, match=r"codes\[:, 1\] holds 5 but params.n_states\[1\] = 3"):
        jaxnb.log_posterior(params, bad, values)
    traced = jax.jit(lambda c: jaxnb.log_joint(params, c, values))(np.full_like(codes, 7))
    np.testing.assert_allclose(
        traced, jaxnb.log_joint(params, np.full_like(codes, -1), values), rtol=1e-12
    )
    # fit_stats and fit_nb read lists as arrays too (they raised AttributeError: no dtype)
    st = jaxnb.fit_stats(codes.tolist(), values.tolist(), y.tolist(), n_states=[3] * 3, n_classes=2)
    ref = jaxnb.fit_stats(codes, values, y, n_states=(3, 3, 3), n_classes=2)
    for a, b in zip(jax.tree.leaves(st), jax.tree.leaves(ref), strict=True):
        np.testing.assert_array_equal(a, b)
    rows = (codes.tolist(), values.tolist(), y.tolist())
    listed = jaxnb.fit_nb(*rows, n_states=[3] * 3, n_classes=2)
    np.testing.assert_array_equal(listed.cpt, params.cpt)
