"""The core under JAX transforms: jit equals eager, vmap equals a loop, gradients are right, and a
sweep compiles once (STYLE.md, Testing)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference as ref
from jax.test_util import check_grads

import jaxnb as nb

NS = (3, 4)
R = 2
C = 3
P = len(NS) + R


def _data(seed=0, n=40, missing=0.1):  # the shapes of test_core's "mixed" layout (shared caches)
    codes, values, y, w = ref.random_mixed(
        seed, n=n, n_states=NS, n_continuous=R, n_classes=C, missing=missing
    )
    return jnp.asarray(codes), jnp.asarray(values), jnp.asarray(y), jnp.asarray(w)


def _onehot(y):
    return jax.nn.one_hot(y, C, dtype=jnp.float64)


@pytest.fixture(scope="module")
def problem():
    codes, values, y, w = _data()
    stats = nb.accumulate(codes, values, _onehot(y), w, n_states=NS)
    o1 = nb.fit_mle(stats, 1.0, 0.01)
    o0 = nb.fit_marginal(stats, 1.0, 0.01)
    return codes, values, y, w, stats, o1, o0


def _assert_trees_close(a, b, rtol=1e-12, atol=1e-12):
    la, ta = jax.tree.flatten(a)
    lb, tb = jax.tree.flatten(b)
    assert ta == tb
    assert la, "empty pytree"
    for x, z in zip(la, lb, strict=True):
        assert x.shape == z.shape and x.dtype == z.dtype
        np.testing.assert_allclose(np.asarray(x), np.asarray(z), rtol=rtol, atol=atol)


# ------------------------------------------------------------------------------------------------
# jit(f) == f


def _cases(problem):
    codes, values, y, w, stats, o1, o0 = problem
    half = nb.accumulate(codes[:11], values[:11], _onehot(y[:11]), w[:11], n_states=NS)
    alpha = jnp.linspace(0.1, 0.9, P)
    W = jnp.asarray(np.random.default_rng(0).uniform(0, 2, size=(P, C)))
    bias = jnp.asarray([0.3, -0.2, 0.1])
    lp = nb.log_posterior(o1, codes, values)
    lj = nb.log_joint(o1, codes, values)
    L = nb.log_contributions(o1, codes, values)
    return {
        "accumulate": (
            lambda c, v, Y, w_: nb.accumulate(c, v, Y, w_, n_states=NS),
            (codes, values, _onehot(y), w),
        ),
        "accumulate_blocks": (
            lambda c, v, Y, w_: nb.accumulate(c, v, Y, w_, n_states=NS, block_size=8),
            (codes, values, _onehot(y), w),
        ),
        "merge": (nb.merge, (half, stats)),
        "subtract": (nb.subtract, (stats, half)),
        "fit_mle": (nb.fit_mle, (stats, 0.5, 0.01)),
        "fit_marginal": (nb.fit_marginal, (stats, 0.5, 0.01)),
        "interpolate": (nb.interpolate, (o1, o0, alpha)),
        "log_contributions": (nb.log_contributions, (o1, codes, values)),
        "log_joint": (nb.log_joint, (o1, codes, values, W, bias)),
        "log_posterior": (nb.log_posterior, (o1, codes, values, alpha)),
        "combine": (nb.combine, (L, W, bias)),
        "error_rate": (nb.error_rate, (lp, y, w)),
        "error_probability": (nb.error_probability, (lp, y, w)),
        "log_loss": (nb.log_loss, (lp, y, w)),
        "joint_log_likelihood": (nb.joint_log_likelihood, (lj, y, w)),
    }


CASES = [
    "accumulate",
    "accumulate_blocks",
    "merge",
    "subtract",
    "fit_mle",
    "fit_marginal",
    "interpolate",
    "log_contributions",
    "log_joint",
    "log_posterior",
    "combine",
    "error_rate",
    "error_probability",
    "log_loss",
    "joint_log_likelihood",
]


@pytest.fixture(scope="module")
def cases(problem):
    return _cases(problem)


@pytest.mark.parametrize("name", CASES)
def test_jit_equals_eager(cases, name):
    fn, args = cases[name]
    eager = fn(*args)
    jitted = jax.jit(fn)(*args)
    _assert_trees_close(jitted, eager, rtol=1e-11, atol=1e-11)
    for leaf in jax.tree.leaves(eager):
        assert np.isfinite(np.asarray(leaf)).all()


# ------------------------------------------------------------------------------------------------
# vmap == loop


def test_vmap_over_data_sets_equals_loop():
    sets = [_data(seed) for seed in (1, 2, 3)]
    stacked = [jnp.stack(a) for a in zip(*sets, strict=True)]
    fit = lambda c, v, y, w: nb.fit_nb(c, v, y, w, 0.5, 0.01, n_states=NS, n_classes=C)
    batched = jax.vmap(fit)(*stacked)
    looped = jax.tree.map(lambda *a: jnp.stack(a), *[fit(*s) for s in sets])
    _assert_trees_close(batched, looped)
    assert batched.cpt.shape == (3, sum(NS), C)
    # and each member is the reference fit of its own data set
    for k, (c, v, y, w) in enumerate(sets):
        want = ref.fit_mle(
            np.asarray(c), np.asarray(v), np.asarray(y), NS, C, np.asarray(w), 0.5, 0.01
        )
        np.testing.assert_allclose(np.asarray(batched.std[k]), want["std"], rtol=1e-10)
        np.testing.assert_allclose(np.asarray(batched.cpt[k]), want["cpt"], rtol=1e-10)


def test_vmap_over_fold_weights_equals_loop(problem):
    """K-fold CV as 0/1 weights: one vmapped accumulate over the fold masks."""
    codes, values, y, w, *_ = problem
    folds = jnp.asarray((np.arange(len(y))[None, :] % 3 != np.arange(3)[:, None]).astype(float))
    acc = lambda m: nb.accumulate(codes, values, _onehot(y), w * m, n_states=NS)
    batched = jax.jit(jax.vmap(acc))(folds)
    looped = jax.tree.map(lambda *a: jnp.stack(a), *[acc(m) for m in folds])
    _assert_trees_close(batched, looped, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(
        np.asarray(batched.class_weight).sum(0),
        2 * np.bincount(np.asarray(y), np.asarray(w), minlength=C),
        rtol=1e-12,
    )


def test_vmap_over_parameter_sets_equals_loop(problem):
    codes, values, y, w, stats, o1, o0 = problem
    alphas = jnp.asarray(np.random.default_rng(1).random((5, P)))

    @jax.jit
    def sweep(o1, o0, alphas, codes, values, y, w):
        params = jax.vmap(nb.interpolate, in_axes=(None, None, 0))(o1, o0, alphas)
        post = jax.vmap(nb.log_posterior, in_axes=(0, None, None))(params, codes, values)
        return params, post, jax.vmap(nb.log_loss, in_axes=(0, None, None))(post, y, w)

    params, post, loss = sweep(o1, o0, alphas, codes, values, y, w)
    assert post.shape == (5, len(y), C)
    for s in range(5):
        ps = nb.interpolate(o1, o0, alphas[s])
        _assert_trees_close(jax.tree.map(lambda a, s=s: a[s], params), ps, rtol=1e-14, atol=0)
        lp = nb.log_posterior(ps, codes, values)
        np.testing.assert_allclose(np.asarray(post[s]), np.asarray(lp), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(float(loss[s]), float(nb.log_loss(lp, y, w)), rtol=1e-12)
    assert np.ptp(np.asarray(loss)) > 1e-3  # the batch members really differ


# ------------------------------------------------------------------------------------------------
# Gradients


def _nll_fns(problem):
    codes, values, y, w, stats, o1, o0 = problem

    def params(cpt, mean, std):
        return nb.NBParams(o1.log_prior, cpt, mean, std, NS)

    def generative(cpt, mean, std):  # −Σ_r w_r log P(x_r, y_r)
        return -nb.joint_log_likelihood(nb.log_joint(params(cpt, mean, std), codes, values), y, w)

    def conditional(cpt, mean, std):  # −(1/N) Σ_r w_r log P(y_r | x_r)
        return nb.log_loss(nb.log_posterior(params(cpt, mean, std), codes, values), y, w)

    return generative, conditional


@pytest.mark.parametrize("which", [0, 1])
def test_check_grads_of_negative_log_likelihood_wrt_parameters(problem, which):
    *_, o1, _ = problem
    fn = jax.jit(_nll_fns(problem)[which])  # jit: one compilation for all of check_grads' probes
    check_grads(fn, (o1.cpt, o1.mean, o1.std), order=1, modes=("fwd", "rev"))


def test_check_grads_wrt_interpolation_coefficients(problem):
    codes, values, y, w, stats, o1, o0 = problem
    f = jax.jit(
        lambda a: nb.log_loss(nb.log_posterior(nb.interpolate(o1, o0, a), codes, values), y, w)
    )
    check_grads(f, (jnp.linspace(0.2, 0.8, P),), order=1, modes=("fwd", "rev"))


def test_gradient_matches_central_differences_of_reference(problem):
    """jax.grad of the conditional NLL vs central differences of the NumPy reference loss."""
    codes, values, y, w, stats, o1, o0 = problem
    cn, vn, yn, wn = (np.asarray(a) for a in (codes, values, y, w))
    theta0 = [np.asarray(o1.cpt), np.asarray(o1.mean), np.asarray(o1.std)]
    sizes = [a.size for a in theta0]

    def ref_loss(flat):
        cpt, mean, std = np.split(flat, np.cumsum(sizes)[:-1])
        d = {
            "log_prior": np.asarray(o1.log_prior),
            "cpt": cpt.reshape(theta0[0].shape),
            "mean": mean.reshape(theta0[1].shape),
            "std": std.reshape(theta0[2].shape),
        }
        return ref.log_loss(ref.log_posterior(d, cn, vn, NS), yn, wn)

    grad_fn = jax.jit(jax.grad(_nll_fns(problem)[1], argnums=(0, 1, 2)))
    grads = grad_fn(*(jnp.asarray(a) for a in theta0))
    g = np.concatenate([np.asarray(a).ravel() for a in grads])
    x0 = np.concatenate([a.ravel() for a in theta0])
    h = 1e-6
    fd = np.empty_like(x0)
    for k in range(x0.size):
        e = np.zeros_like(x0)
        e[k] = h * max(1.0, abs(x0[k]))
        fd[k] = (ref_loss(x0 + e) - ref_loss(x0 - e)) / (2 * e[k])
    assert np.abs(g).max() > 1e-2
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)


# ------------------------------------------------------------------------------------------------
# One compilation per sweep


def test_sweep_traces_once(problem):
    codes, values, y, w, stats, o1, o0 = problem

    @jax.jit
    @eqx.debug.assert_max_traces(max_traces=1)
    def sweep(o1, o0, alphas, codes, values, y, w):
        def loss(a):
            return nb.log_loss(nb.log_posterior(nb.interpolate(o1, o0, a), codes, values), y, w)

        return jax.vmap(loss)(alphas)

    a1 = jnp.asarray(np.random.default_rng(2).random((4, P)))
    a2 = jnp.asarray(np.random.default_rng(3).random((4, P)))
    out1 = sweep(o1, o0, a1, codes, values, y, w)
    out2 = sweep(o1, o0, a2, codes, values, y, w * 2.0)  # new values, same shapes: no retrace
    assert eqx.debug.get_num_traces(sweep) == 1
    for out, a, ww in ((out1, a1, w), (out2, a2, w * 2.0)):
        want = [
            float(nb.log_loss(nb.log_posterior(nb.interpolate(o1, o0, ai), codes, values), y, ww))
            for ai in a
        ]
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-12)
    assert not np.allclose(np.asarray(out1), np.asarray(out2))
    # the guard is live: a new shape retraces and trips it
    with pytest.raises(RuntimeError, match="can only be traced 1 times"):
        sweep(o1, o0, a1[:2], codes, values, y, w)
