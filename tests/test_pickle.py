"""Fitted estimators pickle (joblib, multiprocessing, saving a model) and load to the same
predictions; a mesh is stored as its device count; the online estimator's default SGD is a
`NamedOptimizer`, so its fitted config pickles and a pickled stream continues exactly."""

import copy
import pickle

import jax
import numpy as np
import optax
import pytest

from jaxnb import NaiveBayes
from jaxnb.registry import available_methods, get_method
from jaxnb.stream.online import _PLAIN_SGD, OnlineWeightedNB


def _data(kind, n=120, seed=0):
    rng = np.random.default_rng(seed)
    xc = rng.normal(size=(n, 3))
    d = rng.integers(0, 3, size=(n, 2))
    y = (xc[:, 0] + d[:, 0] > 1).astype(int)
    if kind == "continuous":
        return xc, y
    if kind == "discrete":
        return d, y
    mixed = np.empty((n, 5), object)
    mixed[:, :3], mixed[:, 3:] = xc, d
    return mixed, y


def test_every_registered_estimator_class_is_pickled_in_the_recompilation_test():
    """`tests/test_recompilation.py::test_second_fit_and_predict_compile_nothing` pickles each
    fitted estimator of its cases and checks that the loaded copy predicts the same without a
    compilation; every class `jaxnb compare` can run must be among those cases."""
    from test_recompilation import CASES

    covered = {name for name, _, _ in CASES}
    for method in available_methods():
        spec = get_method(method)
        est = spec.factory(spec.kinds[0])
        assert type(est).__name__ in covered, f"{method}: {type(est).__name__} not pickled"
    X, y = _data("mixed")
    est = get_method("NB").factory("mixed")
    twin = pickle.loads(pickle.dumps(est))  # unfitted too
    assert repr(twin) == repr(est) and not hasattr(twin, "classes_")
    np.testing.assert_array_equal(twin.fit(X, y).predict_proba(X), est.fit(X, y).predict_proba(X))


def test_mesh_pickles_as_device_count():
    from jaxnb.distributed import make_mesh

    if jax.device_count() < 2:
        pytest.skip("needs 2 devices (XLA_FLAGS=--xla_force_host_platform_device_count=4)")
    X, y = _data("mixed", n=64)
    est = NaiveBayes(mesh=make_mesh(2)).fit(X, y)
    with pytest.raises(TypeError, match="pickle 'Device'"):
        pickle.dumps(est.mesh)  # why the estimator converts it
    twin = pickle.loads(pickle.dumps(est))
    assert twin.mesh == 2 and isinstance(est.mesh, jax.sharding.Mesh)  # the original untouched
    np.testing.assert_array_equal(twin.predict_proba(X), est.predict_proba(X))
    # the loaded estimator refits on 2 devices of this process, to the same model
    np.testing.assert_allclose(twin.fit(X, y).predict_proba(X), est.predict_proba(X), rtol=1e-12)


def test_online_stream_continues_after_pickle():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    est = OnlineWeightedNB(learning_rate=1e-2).partial_fit(X[:200], y[:200], classes=[0, 1])
    twin = pickle.loads(pickle.dumps(est))
    assert twin._cfg == est._cfg and twin._cfg.optimizer == _PLAIN_SGD  # the same jit key
    est.partial_fit(X[200:], y[200:])
    twin.partial_fit(X[200:], y[200:])
    assert twin.n_seen_ == est.n_seen_ == 400
    np.testing.assert_array_equal(twin.weights_, est.weights_)
    np.testing.assert_array_equal(twin.bias_, est.bias_)
    assert not np.allclose(np.asarray(est.weights_), 1.0)  # SGD moved the weights


def test_online_custom_optimizer_deepcopies():
    """A closure-built optax optimizer does not pickle; deepcopy (e.g. sklearn.clone's params,
    the fit rollback) must still work."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] > 0).astype(int)
    est = OnlineWeightedNB(optimizer=optax.adam(1e-2)).fit(X, y)
    twin = copy.deepcopy(est)
    np.testing.assert_array_equal(twin.predict_proba(X), est.predict_proba(X))
    with pytest.raises((AttributeError, TypeError, pickle.PicklingError), match="pickle"):
        pickle.dumps(est)


def test_named_optimizer_is_optax_and_pickles():
    import jax.numpy as jnp

    from jaxnb.optim import NamedOptimizer

    opt = NamedOptimizer("adam", learning_rate=1e-2)
    twin = pickle.loads(pickle.dumps(opt))
    assert isinstance(twin, optax.GradientTransformation)
    assert twin == opt and hash(twin) == hash(opt) and twin.kwargs == {"learning_rate": 1e-2}
    assert opt != NamedOptimizer("adam", learning_rate=2e-2) and opt != optax.adam(1e-2)
    # the same updates as optax's own adam over a few steps
    ref = optax.adam(1e-2)
    p = jnp.array([1.0, -2.0, 3.0])
    s_ref, s_got = ref.init(p), twin.init(p)
    for k in range(3):
        g = jnp.sin(p * (k + 1))
        u_ref, s_ref = ref.update(g, s_ref, p)
        u_got, s_got = twin.update(g, s_got, p)
        np.testing.assert_array_equal(u_got, u_ref)
    assert opt != tuple(opt) and opt != optax.GradientTransformation(opt.init, opt.update)
    # a leafless pytree: tree maps and equinox's filters keep it whole
    assert jax.tree.map(lambda v: v, opt) is opt and jax.tree.leaves(opt) == []
    with pytest.raises(TypeError, match="name must be the name of an optax optimizer"):
        NamedOptimizer(optax.adam)
    with pytest.raises(TypeError, match="by keyword only.*learning_rate=1e-3"):
        NamedOptimizer("adam", 1e-2)
    with pytest.raises(TypeError, match="create a new NamedOptimizer"):
        opt._replace(init=None)
    with pytest.raises(ValueError, match="optax has no optimizer 'adamm'"):
        NamedOptimizer("adamm", learning_rate=1e-2)
    with pytest.raises(TypeError, match="not a GradientTransformation"):
        NamedOptimizer("constant_schedule", value=1.0)


def test_online_with_named_optimizer_continues_after_pickle():
    from jaxnb.optim import NamedOptimizer

    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + X[:, 2] > 0).astype(int)
    make = lambda: OnlineWeightedNB(optimizer=NamedOptimizer("adam", learning_rate=1e-2))  # noqa: E731
    est = make().partial_fit(X[:150], y[:150], classes=[0, 1])
    twin = pickle.loads(pickle.dumps(est))
    assert twin._cfg == est._cfg  # equal optimizer specs: the same jit key
    est.partial_fit(X[150:], y[150:])
    twin.partial_fit(X[150:], y[150:])
    np.testing.assert_array_equal(twin.weights_, est.weights_)
    # and a NamedOptimizer is the same model as optax's own adam
    ref = OnlineWeightedNB(optimizer=optax.adam(1e-2)).fit(X, y)
    np.testing.assert_allclose(est.weights_, ref.weights_, rtol=1e-12, atol=1e-15)


def test_named_optimizer_passes_extra_arguments():
    """L-BFGS's update needs value, grad and value_fn (an optax ExtraArgs transformation): the
    distributed WNB's L-BFGS solve is the same with optax's own and the named optimizer."""
    from jaxnb.distributed import fit_wnb
    from jaxnb.optim import NamedOptimizer

    rng = np.random.default_rng(0)
    codes, values = rng.integers(0, 3, (80, 2)), rng.normal(size=(80, 2))
    y = (values[:, 0] > 0).astype(int)
    kw = dict(n_states=[3, 3], n_classes=2, max_steps=20)
    ref = fit_wnb(codes, values, y, optimizer=optax.lbfgs(), **kw)[0]
    got = fit_wnb(codes, values, y, optimizer=NamedOptimizer("lbfgs"), **kw)[0]
    np.testing.assert_array_equal(got.weights, ref.weights)
    np.testing.assert_array_equal(got.bias, ref.bias)


def test_copies_keep_the_mesh_object():
    from jaxnb.distributed import make_mesh

    if jax.device_count() < 4:
        pytest.skip("needs 4 devices (XLA_FLAGS=--xla_force_host_platform_device_count=4)")
    mesh = make_mesh(devices=jax.devices()[2:4])
    est = NaiveBayes(mesh=mesh)
    for twin in (copy.copy(est), copy.deepcopy(est)):
        assert isinstance(twin.mesh, jax.sharding.Mesh)
        assert [d.id for d in twin.mesh.devices.flat] == [2, 3]
    assert pickle.loads(pickle.dumps(est)).mesh == 2
