"""The estimators' ``mesh`` option: the pass over the rows runs data-parallel over a device mesh
and the model equals the single-device one (the suite runs with 4 forced CPU devices)."""

import jax
import numpy as np
import pytest

import jaxnb.distributed as jd
from jaxnb import NaiveBayes
from jaxnb.estimators_penalized import GroupLassoNB, WeightedNB

MULTI = pytest.mark.skipif(
    jax.device_count() < 4,
    reason="needs 4 devices; run with XLA_FLAGS=--xla_force_host_platform_device_count=4",
)


def _data(n=1003, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = np.column_stack([rng.normal(size=n) + y, rng.integers(0, 4, n), 2 * rng.normal(size=n) - y])
    return X, y, rng.uniform(0.5, 2.0, n)


def _params_close(a, b, tol=1e-10):
    for k in ("cpt", "mean", "std", "log_prior"):
        np.testing.assert_allclose(
            np.asarray(getattr(a, k)), np.asarray(getattr(b, k)), rtol=tol, atol=tol
        )


@MULTI
@pytest.mark.parametrize("mesh", [4, 2, "mesh3"])
def test_naive_bayes_on_a_mesh_equals_one_device(mesh):
    X, y, w = _data()  # 1003 rows: not a multiple of the device count (weight-0 padding)
    mesh = jd.make_mesh(3) if mesh == "mesh3" else mesh
    ref = NaiveBayes(discrete=[1]).fit(X, y, sample_weight=w)
    got = NaiveBayes(discrete=[1], mesh=mesh).fit(X, y, sample_weight=w)
    _params_close(got.params_, ref.params_)
    np.testing.assert_array_equal(got.predict(X), ref.predict(X))


@MULTI
def test_naive_bayes_partial_fit_on_a_mesh():
    X, y, _ = _data()
    m = NaiveBayes(discrete=[1], mesh=4)
    m.partial_fit(X[:500], y[:500], classes=[0, 1, 2])
    m.partial_fit(X[500:], y[500:])
    ref = NaiveBayes(discrete=[1]).fit(X, y)
    np.testing.assert_allclose(m.predict_log_proba(X), ref.predict_log_proba(X), atol=1e-10)


@MULTI
def test_group_lasso_on_a_mesh_gives_the_same_path():
    X, y, _ = _data(600, seed=1)
    ref = GroupLassoNB(discrete=[1]).fit(X, y)
    got = GroupLassoNB(discrete=[1], mesh=4).fit(X, y)
    np.testing.assert_array_equal(got.path_["n_active"], ref.path_["n_active"])
    np.testing.assert_allclose(got.path_["aic"], ref.path_["aic"], rtol=1e-9)
    assert got.selected_index_ == ref.selected_index_


@MULTI
@pytest.mark.parametrize("selection", ["aic", "cv"])
def test_group_lasso_scores_the_rows_on_the_mesh(selection, monkeypatch):
    import jaxnb.estimators_penalized as ep

    seen = {}

    def spying(name, f):
        def spy(*args, **kw):
            arrays = [a for a in jax.tree.leaves(args) if isinstance(a, jax.Array)]
            seen[name] = {
                (a.ndim > 0 and a.shape[0] >= 600, len(a.sharding.device_set)) for a in arrays
            }
            return f(*args, **kw)

        return spy

    for name in ("_gl_path_scores_sharded", "_gl_cv"):
        monkeypatch.setattr(ep, name, spying(name, getattr(ep, name)))
    X, y, w = _data(601, seed=3)  # not a multiple of 4: weight-0 padding rows
    ref = GroupLassoNB(discrete=[1], selection=selection).fit(X, y, sample_weight=w)
    got = GroupLassoNB(discrete=[1], selection=selection, mesh=4).fit(X, y, sample_weight=w)
    # the AIC pass gets the rows split over the 4 devices and the path replicated (before: the
    # rows on one device and the path replicated, so every device scored every row)
    rows = {k for k in seen["_gl_path_scores_sharded"] if k[0]}
    assert rows == {(True, 4)}
    if selection == "cv":
        assert seen["_gl_cv"] == {(True, 1), (False, 1)}  # the CV folds on one device
        np.testing.assert_allclose(got.path_["cv_log_loss"], ref.path_["cv_log_loss"], rtol=1e-9)
    np.testing.assert_allclose(got.path_["aic"], ref.path_["aic"], rtol=1e-9)
    np.testing.assert_allclose(got.path_["train_error"], ref.path_["train_error"], atol=1e-12)
    assert got.selected_index_ == ref.selected_index_
    np.testing.assert_allclose(got.predict_proba(X), ref.predict_proba(X), atol=1e-9)
    assert len(got.params_.mean.sharding.device_set) == 1  # the model on one device


@pytest.mark.parametrize(
    "mesh, err, match",
    [
        (0, ValueError, r"mesh \(a number of devices\) must lie in \[1, "),
        (10**6, ValueError, "must lie in"),
        (2.0, TypeError, "mesh must be None, a number of devices or a jax.sharding.Mesh"),
        (True, TypeError, "mesh must be None"),
    ],
)
def test_bad_mesh_values_are_refused_before_fitting(mesh, err, match):
    X, y, _ = _data(50)
    for est in (NaiveBayes(mesh=mesh), GroupLassoNB(mesh=mesh), WeightedNB(mesh=mesh)):
        with pytest.raises(err, match=match):
            est.fit(X, y)


def test_a_single_device_mesh_is_the_plain_fit():
    X, y, _ = _data(200)
    a = NaiveBayes(discrete=[1]).fit(X, y)
    b = NaiveBayes(discrete=[1], mesh=1).fit(X, y)
    _params_close(a.params_, b.params_, tol=0)


@MULTI
@pytest.mark.parametrize("scheme", ["gradient", "ferreira"])
def test_weighted_nb_on_a_mesh_reaches_the_same_weights(scheme):
    X, y, w = _data(1001, seed=2)
    # a tight gradient tolerance: both runs stop near the same optimum (at the default 1e-6 the
    # iterates, rounded differently on 4 devices, stop ~4e-5 apart, both within tolerance)
    kw = dict(scheme=scheme, discrete=[1], tol=1e-10, max_steps=2000)
    ref = WeightedNB(**kw).fit(X, y, sample_weight=w)
    got = WeightedNB(**kw, mesh=4).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(got.weights_, ref.weights_, rtol=1e-6, atol=1e-6)
    if scheme == "gradient":
        assert got.converged_
        np.testing.assert_allclose(got.bias_, ref.bias_, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got.predict_proba(X), ref.predict_proba(X), atol=1e-6)
