"""Core NB precision in JAX's default float32 where one centring for all classes cancels: classes
far apart relative to their spread (statistics and scores), float32 remainders of `subtract`,
and alpha = 0 classes that never saw a discrete predictor."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxprs import loop_primitives

from jaxnb import NaiveBayes, accumulate, fit_mle, subtract
from jaxnb.likelihood import log_contributions, log_joint


def _far_classes(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = (np.array([0.0, 1e4, 1e4 + 2])[y] + rng.normal(size=n)).astype(np.float32)[:, None]
    return X, y


def _far_params(mean, sigma):
    """float32 NB parameters of one continuous predictor with class means ``mean`` (3, 1) and
    standard deviation ``sigma`` (prior and layout from a fit on `_far_classes`)."""
    X, y = _far_classes()
    base = NaiveBayes().fit(X, y).params_
    return type(base)(
        base.log_prior,
        base.cpt,
        jnp.asarray(mean, jnp.float32),
        jnp.full((3, 1), sigma, jnp.float32),
        base.n_states,
    )


def test_float32_class_variances_and_predictions_with_far_apart_classes():
    X, y = _far_classes()
    with jax.enable_x64(False):
        m = NaiveBayes().fit(X, y)
        var = np.asarray(m.params_.std[:, 0], np.float64) ** 2
        pred32 = m.predict(X)
    pooled = X[:, 0].astype(np.float64).var()
    ref = np.array([X[y == j, 0].astype(np.float64).var() for j in range(3)]) + 1e-9 * pooled
    np.testing.assert_allclose(var, ref, rtol=2e-3)  # was 9.2 / 0.022 / 0.87 against ~1
    pred64 = NaiveBayes().fit(X.astype(np.float64), y).predict(X.astype(np.float64))
    assert np.mean(pred32 == pred64) > 0.995


def test_float32_log_joint_centres_each_class_when_classes_are_far_apart():
    rng = np.random.default_rng(0)
    for sigma in (1.0, 0.1):
        mean = np.array([[0.0], [1e4], [1e4 + 2 * sigma]])
        x = (1e4 + rng.normal(size=(2000, 1)) * sigma).astype(np.float32)
        with jax.enable_x64(False):
            params = _far_params(mean, sigma)
            lj = np.asarray(log_joint(params, jnp.zeros((2000, 0), jnp.int32), jnp.asarray(x)))
            lc = np.asarray(
                log_contributions(params, jnp.zeros((2000, 0), jnp.int32), jnp.asarray(x))
            )
        direct = -0.5 * ((x.astype(np.float64) - mean.T) / sigma) ** 2 - np.log(sigma)
        direct = direct - 0.5 * np.log(2 * np.pi) + np.asarray(params.log_prior, np.float64)
        ref_c = lc[:, 0, :] + np.asarray(params.log_prior)
        # within float32 rounding of the direct formula (was 0.87 / 126 nats off)
        np.testing.assert_allclose(lj, ref_c, rtol=1e-6, atol=5e-2 if sigma < 1 else 1e-4)
        np.testing.assert_array_equal(lj.argmax(1), direct.argmax(1))


def test_float32_subtract_leaves_an_empty_class_empty():
    rng = np.random.default_rng(0)
    bad = 0
    with jax.enable_x64(False):
        for _ in range(10):
            # fixed class sizes: the part (all of class 0, a random half of class 1) has the same
            # shape every round, so each accumulate compiles once (random sizes compiled 10 times)
            n = 3000
            y = rng.permutation(np.repeat([0, 1], n // 2))
            Y = jax.nn.one_hot(y, 2)
            w = jnp.asarray(rng.uniform(0.1, 1.0, n), jnp.float32)
            v = jnp.asarray(rng.normal(size=(n, 1)) + 5, jnp.float32)
            codes = jnp.zeros((n, 0), jnp.int32)
            total = accumulate(codes, v, Y, w, n_states=(), block_size=512)
            ones = np.flatnonzero(y == 1)
            part = np.sort(np.r_[np.flatnonzero(y == 0), rng.choice(ones, ones.size // 2, False)])
            P = accumulate(codes[part], v[part], Y[part], w[part], n_states=())
            rest = subtract(total, P)
            bad += float(rest.weight[0, 0]) != 0.0 or float(rest.class_weight[0]) != 0.0
            assert float(rest.class_weight.min()) >= 0.0
            assert np.isfinite(np.asarray(fit_mle(rest).log_prior)[1])
    assert bad == 0


def test_alpha0_class_without_values_of_a_discrete_predictor_is_uniform():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, (40, 2))
    y = rng.integers(0, 2, 40)
    m = NaiveBayes(alpha=0.0).partial_fit(X[y == 0], y[y == 0], classes=[0, 1])
    cpt = np.asarray(m.params_.cpt)
    assert np.isfinite(cpt).all()
    np.testing.assert_allclose(cpt[:, 1], 1.0 / 3.0)  # class 1: no row, uniform over 3 states
    assert np.isfinite(m.predict_proba(X[:3])).all()
    with pytest.raises(ValueError):
        NaiveBayes(alpha=-1.0).fit(X, y)


def test_log_joint_chooses_the_gaussian_formula_once_for_all_row_blocks():
    """Far-apart classes over several row blocks plus a remainder take the direct formula in every
    block, and the choice is one cond around the block loop: a cond inside the loop body kept XLA
    from fusing the block's products (1M x 100 float32 rows: 0.16 s against 0.11 s)."""
    rng = np.random.default_rng(3)
    sigma = 0.1
    mean = np.array([[0.0], [1e4], [1e4 + 2 * sigma]])
    n = 2 * 8192 + 7  # one continuous predictor: 8192 rows per block
    x = (1e4 + rng.normal(size=(n, 1)) * sigma).astype(np.float32)
    E = jnp.zeros((n, 0), jnp.int32)
    with jax.enable_x64(False):
        params = _far_params(mean, sigma)
        lj = np.asarray(log_joint(params, E, jnp.asarray(x)))
        lc = np.asarray(log_contributions(params, E, jnp.asarray(x)))
        inner = loop_primitives(
            jax.make_jaxpr(lambda v: log_joint(params, E, v))(jnp.asarray(x)).jaxpr
        )
    ref = lc[:, 0, :] + np.asarray(params.log_prior)
    np.testing.assert_allclose(lj, ref, rtol=1e-6, atol=5e-2)  # the expanded form: 126 nats off
    assert inner and "cond" not in inner, sorted(inner)


def test_vmapped_statistics_take_their_fallbacks_only_for_the_elements_that_need_them():
    """`accumulate` under vmap over data sets: the far-class refinement and the masked pass for
    missing values run for the batch only when some element needs them, and each element then
    equals its own unbatched statistics bit for bit (the others keep their first pass). The
    vmapped program keeps the conds (a batched predicate would have made them selects that run
    every pass for every element)."""
    n, bs = 3000, 512
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, (3, n))
    X = rng.normal(size=(3, n, 2))
    X[1] += np.array([0.0, 1e5, 1e5 + 2])[y[1]][:, None]  # far-apart classes in element 1
    X[2, [7, 2000], 1] = np.nan  # a missing value in element 2
    Y = jax.nn.one_hot(jnp.asarray(y), 3, dtype=jnp.float32)
    codes = jnp.zeros((n, 0), jnp.int32)
    with jax.enable_x64(False):
        V = jnp.asarray(X, jnp.float32)
        acc = lambda v, yy: accumulate(codes, v, yy, n_states=(), block_size=bs)
        batched = jax.jit(jax.vmap(acc))(V, Y)
        for i in range(3):
            one = jax.jit(acc)(V[i], Y[i])
            for name in ("mean", "m2", "weight", "class_weight"):
                np.testing.assert_array_equal(
                    np.asarray(getattr(batched, name)[i]), np.asarray(getattr(one, name))
                )
        top = [e.primitive.name for e in jax.make_jaxpr(jax.vmap(acc))(V, Y).jaxpr.eqns]
    assert top.count("cond") == 2, top
    var = np.asarray(batched.m2[1] / batched.weight[1])[:, 0]
    ref = [X[1, y[1] == j, 0].astype(np.float32).astype(np.float64).var() for j in range(3)]
    np.testing.assert_allclose(var, ref, rtol=2e-3)  # refined: one shift for all loses it all


def test_estimators_centre_the_expansion_as_log_joint_would():
    """NaiveBayes, GroupLassoNB and the Ferreira WeightedNB decide on the host, at fit time, the
    centring `log_joint` would choose in the compiled program (`likelihood.expansion_shift`):
    the class-averaged means where the expansion is accurate, none (its direct formula) where the
    classes are too far apart for float32 (predictors of weight 0 aside). Their scores equal
    `log_joint`'s own choice to rounding either way."""
    from jaxnb import GroupLassoNB, WeightedNB
    from jaxnb.likelihood import expansion_shift as _expansion_shift

    X_far, y_far = _far_classes()
    rng = np.random.default_rng(2)
    y_near = rng.integers(0, 3, 600)
    X_near = (rng.normal(size=(600, 3)) + y_near[:, None]).astype(np.float32)
    with jax.enable_x64(False):
        for X, y, far in ((X_far, y_far, True), (X_near, y_near, False)):
            models = [NaiveBayes().fit(X, y), WeightedNB(scheme="ferreira").fit(X, y)]
            if not far:
                models.append(GroupLassoNB(penalty=0.05).fit(X, y))
            for m in models:
                W = getattr(m, "_w", None)
                shift = _expansion_shift(m.params_, W)
                assert (shift is None) == far
                if not far:
                    np.testing.assert_allclose(shift, np.asarray(m.params_.mean).mean(0))
                else:  # a predictor of weight 0 does not count, as in log_joint
                    assert _expansion_shift(m.params_, np.zeros(m.params_.n_predictors)) is not None
                codes = jnp.zeros((X.shape[0], 0), jnp.int32)
                ref = np.asarray(log_joint(m.params_, codes, jnp.asarray(X), W, None))
                got = m.predict_joint_log_proba(X)
                assert got.dtype == np.float32
                np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-4)
    with jax.enable_x64(False):  # no continuous predictor: nothing to centre
        m = NaiveBayes(discrete="all").fit(rng.integers(0, 3, (50, 2)), rng.integers(0, 2, 50))
        assert _expansion_shift(m.params_) is None
