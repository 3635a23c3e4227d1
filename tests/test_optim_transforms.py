"""jaxnb.optim.transforms: the class-contrast basis for per-class weight optimizers."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxnb.optim import contrast_basis, helmert_basis, inv_sqrt_schedule


@pytest.mark.parametrize("c", [1, 2, 3, 5])
def test_helmert_basis_is_orthonormal_with_mean_row(c):
    Q = helmert_basis(c)
    np.testing.assert_allclose(Q @ Q.T, np.eye(c), atol=1e-12)
    np.testing.assert_allclose(Q[0], np.full(c, 1 / np.sqrt(c)))
    np.testing.assert_allclose(Q[1:].sum(axis=1), 0.0, atol=1e-12)  # contrasts sum to zero


def _params(key, p=7, c=3):
    k1, k2, k3, k4 = jax.random.split(key, 4)
    params = {"w": jax.random.normal(k1, (p, c)), "b": jax.random.normal(k2, (c,))}
    grads = [{"w": jax.random.normal(k, (p, c)), "b": jax.random.normal(k, (c,))} for k in (k3, k4)]
    return params, grads


def _run(opt, params, grads):
    state = opt.init(params)
    for g in grads:
        u, state = opt.update(g, state, params)
        params = optax.apply_updates(params, u)
    return params


def test_contrast_basis_leaves_sgd_unchanged():
    if True:  # conftest enables float64
        params, grads = _params(jax.random.PRNGKey(0))
        params = jax.tree.map(lambda a: a.astype(jnp.float64), params)
        grads = jax.tree.map(lambda a: a.astype(jnp.float64), grads)
        a = _run(optax.sgd(0.1, momentum=0.9), params, grads)
        b = _run(contrast_basis(optax.sgd(0.1, momentum=0.9), n_classes=3), params, grads)
        for k in a:
            np.testing.assert_allclose(np.asarray(a[k]), np.asarray(b[k]), atol=1e-12)


def test_contrast_basis_adam_is_adam_in_rotated_coordinates():
    if True:  # conftest enables float64
        params, grads = _params(jax.random.PRNGKey(1))
        params = jax.tree.map(lambda a: a.astype(jnp.float64), params)
        grads = jax.tree.map(lambda a: a.astype(jnp.float64), grads)
        Q = jnp.asarray(helmert_basis(3))
        rot = lambda t: jax.tree.map(lambda a: a @ Q.T, t)
        ref = jax.tree.map(
            lambda a: a @ Q, _run(optax.adam(0.05), rot(params), [rot(g) for g in grads])
        )
        got = _run(contrast_basis(optax.adam(0.05), n_classes=3), params, grads)
        plain = _run(optax.adam(0.05), params, grads)
        for k in ref:
            np.testing.assert_allclose(np.asarray(got[k]), np.asarray(ref[k]), atol=1e-12)
        assert not np.allclose(np.asarray(got["w"]), np.asarray(plain["w"]))  # not plain Adam


def test_freeze_contrast_keeps_tied_weights_tied():
    params = {"w": jnp.ones((4, 2)), "b": jnp.zeros((2,))}
    grads = [{"w": jnp.arange(8.0).reshape(4, 2), "b": jnp.array([1.0, -2.0])}]
    out = _run(contrast_basis(optax.adam(0.1), freeze_contrast=True), params, grads)
    np.testing.assert_allclose(np.asarray(out["w"][:, 0]), np.asarray(out["w"][:, 1]), rtol=1e-6)


def test_inv_sqrt_schedule_and_errors():
    s = inv_sqrt_schedule(1e-3, 100.0)
    np.testing.assert_allclose(float(s(0)), 1e-3)
    np.testing.assert_allclose(float(s(300)), 1e-3 / 2, rtol=1e-6)
    with pytest.raises(ValueError, match="rate and t0 must be > 0"):
        inv_sqrt_schedule(0.0, 10.0)
    with pytest.raises(ValueError, match="n_classes must be an int >= 1"):
        helmert_basis(0)
    with pytest.raises(TypeError, match="inner must be an optax.GradientTransformation"):
        contrast_basis("adam")
