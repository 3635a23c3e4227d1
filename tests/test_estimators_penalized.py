"""Tests for jaxnb.estimators_penalized: GroupLassoNB, L1NB, WeightedNB (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.estimators import NaiveBayes
from jaxnb.estimators_penalized import L1NB, GroupLassoNB, WeightedNB, register_methods


def mixed_data(seed, n=120):
    """Two informative + one noise discrete column, one informative + one noise Gaussian column."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    d0 = np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n))
    d1 = np.where(rng.random(n) < 0.4, y % 2, rng.integers(0, 2, n))
    d2 = rng.integers(0, 3, n)
    c0 = 1.2 * y + rng.normal(size=n)
    c1 = rng.normal(size=n) * 2.0
    X = np.stack([d0, c0, d1, c1, d2], 1).astype(float)
    return X, y, [0, 2, 4]


@pytest.fixture(scope="module")
def data():
    return mixed_data(0)


def test_group_lasso_lambda_max_removes_every_predictor(data):
    X, y, disc = data
    path = GroupLassoNB(n_penalties=6, discrete=disc).fit(X, y)  # same compilation as below
    assert path.path_["n_active"][0] == 0  # the grid starts at lambda_max
    assert path.lambda_max_ == pytest.approx(path.path_["penalties"][0])
    for pen in (path.lambda_max_, 2.0 * path.lambda_max_):
        m = GroupLassoNB(penalty=pen, discrete=disc).fit(X, y)
        assert m.n_selected_ == 0 and not m.support_.any()
        prior = np.bincount(y) / len(y)
        np.testing.assert_allclose(
            m.predict_proba(X), np.broadcast_to(prior, (len(y), 3)), rtol=1e-12, atol=1e-14
        )
    # just below lambda_max at least one predictor is active
    m = GroupLassoNB(penalty=0.9 * path.lambda_max_, discrete=disc).fit(X, y)
    assert m.n_selected_ >= 1


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_group_lasso_zero_penalty_is_the_mle(data, alpha):
    X, y, disc = data
    m = GroupLassoNB(penalty=0.0, alpha=alpha, tol=1e-11, discrete=disc)
    m.fit(X, y)
    assert m.converged_ and m.n_selected_ == 5
    nb = NaiveBayes(alpha=alpha, var_smoothing=0.0, discrete=disc).fit(X, y)
    np.testing.assert_allclose(
        m.predict_log_proba(X), nb.predict_log_proba(X), rtol=1e-6, atol=1e-7
    )
    np.testing.assert_allclose(np.asarray(m.params_.cpt), np.asarray(nb.params_.cpt), atol=1e-7)


def test_group_lasso_aic_and_cv_paths(data):
    X, y, disc = data
    m = GroupLassoNB(n_penalties=6, discrete=disc).fit(X, y)
    pa = m.path_
    assert pa["penalties"].shape == (6,) and np.all(np.diff(pa["penalties"]) < 0)
    assert pa["converged"].all()
    n = len(y)
    # AIC = Q + 2d/N with d = number of active predictors (fsNB Eq. 14)
    k = m.selected_index_
    q = -2.0 * np.mean(m.predict_log_proba(X)[np.arange(n), y])
    assert pa["aic"][k] == pytest.approx(q + 2.0 * m.n_selected_ / n, rel=1e-9)
    assert k == int(np.argmin(pa["aic"]))
    assert m.penalty_ == pa["penalties"][k]
    assert m.support_[0] and m.support_[1]  # the two strong predictors survive
    cv = GroupLassoNB(n_penalties=6, selection="cv", cv=3, discrete=disc).fit(X, y)
    assert cv.path_["cv_log_loss"].shape == (6,)
    assert cv.selected_index_ == int(np.argmin(cv.path_["cv_log_loss"]))
    assert np.all(np.isfinite(cv.path_["cv_log_loss"]))


def test_adaptive_keeps_redundant_copies_and_discards_irrelevant():
    """fsNB §4/§7 (Table 1, DI vs DR): aL1/L2-NB discards irrelevant noise but keeps redundant
    copies. One small data set in the style of `make_table1`: 3 relevant 3-state predictors, 3
    copies of X1 (each value copied with probability 0.9, as the DR scenario's V3) and 3 irrelevant
    uniform predictors."""
    rng = np.random.default_rng(11)
    n = 300
    y = rng.integers(0, 3, n)
    rel = np.stack(
        [np.where(rng.random(n) < s, y, rng.integers(0, 3, n)) for s in (0.6, 0.45, 0.35)], 1
    )
    red = np.where(rng.random((n, 3)) < 0.9, rel[:, :1], rng.integers(0, 3, (n, 3)))
    irr = rng.integers(0, 3, (n, 3))
    X = np.concatenate([rel, red, irr], 1)
    m = GroupLassoNB(adaptive=True, n_penalties=6, discrete="all").fit(X, y)
    assert m.support_[:3].all()  # relevant predictors stay
    assert m.support_[3:6].all()  # redundant copies are kept (the known weakness)
    assert m.support_[6:].sum() <= 1  # irrelevant predictors are (mostly) removed
    # and NB-style double counting of the copies is what makes them harmful: the L1-NB discards them
    l1 = L1NB(discrete="all").fit(X, y)
    assert l1.support_[3:6].sum() <= 1


def test_l1nb_coefficients_and_eq14_scores(data):
    X, y, disc = data
    m = L1NB(discrete=disc).fit(X, y)
    assert np.all((m.coef_path_ >= 0) & (m.coef_path_ <= 1))
    assert np.all((m.coef_ >= 0) & (m.coef_ <= 1))
    np.testing.assert_array_equal(m.support_, m.coef_ > 0)
    assert m.n_selected_ == int((m.coef_ > 0).sum()) >= 1
    np.testing.assert_allclose(m.coef_, m.coef_path_[m.selected_index_])
    # Eq. (14) from NB's exact per-predictor contributions (same smoothing)
    nb = NaiveBayes(alpha=1.0, discrete=disc).fit(X, y)
    L = nb.explain(X)  # (n, p, c), user column order
    P = np.asarray(jax.nn.softmax(jnp.asarray(L) + nb.class_log_prior_[None, None, :], axis=-1))
    scores = np.einsum("npc,p->nc", P, m.coef_)
    np.testing.assert_allclose(m.predict_proba(X), scores / m.coef_.sum(), rtol=1e-10)
    np.testing.assert_array_equal(m.predict(X), np.argmax(scores, 1))
    v = L1NB(variant="exact", selection="validation", discrete=disc).fit(X, y)
    assert np.all((v.coef_ >= 0) & (v.coef_ <= 1)) and v.n_selected_ >= 1


def test_weighted_nb_ferreira_combination(data):
    X, y, disc = data
    m = WeightedNB(discrete=disc).fit(X, y)
    assert m.weights_.shape == (5,) and np.all(m.weights_ >= 0)
    assert m.weights_[0] > m.weights_[4]  # informative > noise
    nb = NaiveBayes(alpha=1.0, discrete=disc).fit(X, y)
    expected = nb.class_log_prior_[None, :] + np.einsum("npc,p->nc", nb.explain(X), m.weights_)
    np.testing.assert_allclose(m.decision_function(X), expected, rtol=1e-10)


def test_weighted_nb_gradient_beats_nb_log_loss(data):
    X, y, disc = data
    m = WeightedNB(scheme="gradient", discrete=disc).fit(X, y)
    assert m.converged_ and float(m.info_.grad_norm) <= m.tol
    assert m.weights_.shape == (5, 3) and m.bias_.shape == (3,)
    nb = NaiveBayes(alpha=1.0, discrete=disc).fit(X, y)
    ll = lambda est: -np.mean(est.predict_log_proba(X)[np.arange(len(y)), y])
    assert ll(m) <= ll(nb)
    np.testing.assert_allclose(ll(m), float(m.info_.log_loss), rtol=1e-10)


def test_clone_get_params_and_validation(data):
    sklearn_base = pytest.importorskip("sklearn.base")
    for est in (
        GroupLassoNB(adaptive=False, n_penalties=7),
        L1NB(variant="exact"),
        WeightedNB(scheme="gradient", l2=0.1),
    ):
        c = sklearn_base.clone(est)
        assert c.get_params() == est.get_params() and c is not est
    bad = [
        (GroupLassoNB(penalty=-1.0), "penalty"),
        (GroupLassoNB(selection="bic"), "selection"),
        (GroupLassoNB(selection="fixed"), "penalty"),
        (GroupLassoNB(n_penalties=1), "n_penalties"),
        (GroupLassoNB(adaptive="yes"), "adaptive"),
        (L1NB(variant="lars"), "variant"),
        (L1NB(selection="cv"), "selection"),
        (WeightedNB(scheme="x"), "scheme"),
        (WeightedNB(n_bins=1), "n_bins"),
        (WeightedNB(l2=-1.0), "l2"),
    ]
    X, y, disc = data
    for est, name in bad:
        with pytest.raises(ValueError, match=name):
            est.fit(X, y)


def test_register_methods():
    got = {}
    register_methods(lambda name, factory, description, kinds=None: got.update({name: factory}))
    assert set(got) == {"aL1/L2-NB", "L1/L2-NB", "L1-NB", "WNB", "WNB-grad"}
    assert isinstance(got["aL1/L2-NB"]("discrete"), GroupLassoNB)
    assert got["aL1/L2-NB"]("mixed").adaptive and not got["L1/L2-NB"]("mixed").adaptive
    assert got["WNB-grad"]("mixed").scheme == "gradient"
