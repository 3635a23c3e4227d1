"""Tests for jaxnb.estimators_penalized: GroupLassoNB, L1NB, WeightedNB (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_l1nb_core import _reference_qp
from test_weighted import ferreira_reference, gradient_weights_reference

from jaxnb.estimators import NaiveBayes
from jaxnb.estimators_penalized import L1NB, GroupLassoNB, WeightedNB, register_methods
from jaxnb.model_selection import stratified_folds


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
    tol = 1e-10  # tight: the CV paths are warm-started, the reference fits below are not
    cv = GroupLassoNB(n_penalties=6, selection="cv", cv=3, tol=tol, discrete=disc).fit(X, y)
    assert cv.path_["cv_log_loss"].shape == (6,)
    assert cv.selected_index_ == int(np.argmin(cv.path_["cv_log_loss"]))
    # explicit K-fold loop: the same folds, one fixed-penalty fit on the training rows per grid
    # point, mean validation log-loss per fold, then the mean over the folds
    folds = stratified_folds(np.searchsorted(cv.classes_, y), 3, 0)
    ref = np.zeros((3, 6))
    for k in range(3):
        tr, va = folds != k, folds == k
        for s, pen in enumerate(cv.path_["penalties"]):
            f = GroupLassoNB(penalty=float(pen), selection="fixed", tol=tol, discrete=disc)
            lp = f.fit(X[tr], y[tr]).predict_log_proba(X[va])
            ref[k, s] = -np.mean(lp[np.arange(va.sum()), y[va]])
    np.testing.assert_allclose(cv.path_["cv_log_loss"], ref.mean(0), rtol=0, atol=1e-9)
    assert np.ptp(ref.mean(0)) > 0.1  # the loss does change along the grid


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


def _numpy_b_matrix(X, y, disc, alpha=1.0, var_smoothing=1e-9):
    """B[r, i] = P(Y = y_r | X_i = x_ri) (L1NB Eqs. 11-12) in float64 NumPy, user column order:
    Lidstone CPTs for the discrete columns, Gaussians (class variance + var_smoothing times the
    pooled variance) for the others, empirical class prior."""
    n, p = X.shape
    c = int(y.max()) + 1
    log_prior = np.log(np.bincount(y, minlength=c) / n)
    L = np.empty((n, p, c))
    for i in range(p):
        x = X[:, i]
        if i in disc:
            states, code = np.unique(x, return_inverse=True)
            counts = np.zeros((len(states), c))
            np.add.at(counts, (code, y), 1.0)
            cpt = (counts + alpha) / (counts.sum(0) + alpha * len(states))
            L[:, i] = np.log(cpt[code])
        else:
            mean = np.array([x[y == j].mean() for j in range(c)])
            var = np.array([x[y == j].var() for j in range(c)]) + var_smoothing * x.var()
            L[:, i] = -0.5 * (np.log(2 * np.pi * var) + (x[:, None] - mean) ** 2 / var)
    joint = L + log_prior
    P = np.exp(joint - joint.max(2, keepdims=True))
    P /= P.sum(2, keepdims=True)
    return P[np.arange(n), :, y]


def test_l1nb_exact_path_is_the_reference_qp(data):
    """Estimator level: every breakpoint of the exact path solves Eq. (15) at its budget s
    (`_reference_qp`, NumPy FISTA) on a NumPy B, and the selected row minimizes the AIC."""
    X, y, disc = data
    m = L1NB(variant="exact", discrete=disc).fit(X, y)
    B = _numpy_b_matrix(X, y, disc)
    assert len(m.s_path_) >= 4 and m.n_selected_ >= 2
    np.testing.assert_allclose(m.s_path_, m.coef_path_.sum(1), rtol=1e-10, atol=1e-12)
    for beta, s in zip(m.coef_path_[1:], m.s_path_[1:], strict=True):
        np.testing.assert_allclose(beta, _reference_qp(B, s), rtol=0, atol=1e-6, err_msg=f"{s=}")
    np.testing.assert_allclose(m.coef_, _reference_qp(B, m.coef_.sum()), rtol=0, atol=1e-6)
    # AIC with the classifier likelihood: 2 |beta|_0 - 2 sum_r log (B beta / sum beta)_r
    aic = [2 * np.count_nonzero(b) - 2 * np.sum(np.log(B @ b / b.sum())) for b in m.coef_path_[1:]]
    assert m.selected_index_ == 1 + int(np.argmin(aic))


def test_weighted_nb_ferreira_combination(data):
    X, y, disc = data
    m = WeightedNB(discrete=disc).fit(X, y)
    assert m.weights_.shape == (5,) and np.all(m.weights_ >= 0)
    assert m.weights_[0] > m.weights_[4]  # informative > noise
    # fsNB Eqs. 6-7 in NumPy on the same columns, the Gaussian ones cut into 5 equal-frequency
    # bins (no ties here: bin = rank * 5 // n)
    n = len(y)
    cols, n_states = [], []
    for i in range(X.shape[1]):
        if i in disc:
            states, code = np.unique(X[:, i], return_inverse=True)
            cols.append(code)
            n_states.append(len(states))
        else:
            assert len(np.unique(X[:, i])) == n
            cols.append(np.argsort(np.argsort(X[:, i])) * 5 // n)
            n_states.append(5)
    ref = ferreira_reference(np.stack(cols, 1), y, np.ones(n), n_states, 3)
    np.testing.assert_allclose(m.weights_, ref, rtol=1e-12, atol=1e-14)
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
    # the optimum of the same objective by SciPy (test_weighted), on NB's contributions
    W_ref, b_ref, obj_ref = gradient_weights_reference(
        nb.explain(X), y, np.ones(len(y)), m.l2, nb.class_log_prior_
    )
    # default tol (gradient norm 1e-6, l2 = 1e-4): the objective is right (Newton's method, the
    # default here, lands on it to rounding), the weights at least roughly (L-BFGS: 1e-2)
    assert m.solver_ == "newton"
    assert obj_ref - 1e-14 <= float(m.info_.loss) <= obj_ref + 1e-8
    np.testing.assert_allclose(m.weights_, W_ref, rtol=0, atol=1e-5)
    lb = WeightedNB(scheme="gradient", solver="lbfgs", discrete=disc).fit(X, y)
    assert lb.converged_ and obj_ref - 1e-14 <= float(lb.info_.loss) <= obj_ref + 1e-8
    np.testing.assert_allclose(lb.weights_, W_ref, rtol=0, atol=1e-2)
    # a tight tolerance (same compiled program) reaches the optimum itself
    t = WeightedNB(scheme="gradient", tol=1e-9, discrete=disc).fit(X, y)
    assert t.converged_
    np.testing.assert_allclose(t.weights_, W_ref, rtol=0, atol=1e-5)
    # bias_ is that of the standardized terms (log f + log s_i): the raw terms' bias is
    # bias_ + sum_i W_ij log s_i (no missing values here)
    b_raw = t.bias_ + t.log_scale_ @ t.weights_
    np.testing.assert_allclose(b_raw - b_raw.mean(), b_ref - b_ref.mean(), rtol=0, atol=1e-5)
    np.testing.assert_allclose(float(t.info_.loss), obj_ref, rtol=1e-12)


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


def test_group_lasso_floored_sigma_converges_in_float32_and_float64():
    """0/1 columns fitted as Gaussians, with a class in which a column is constant: that class's
    sigma sits at the floor min_std (1e-3 sigma0), and its curvature is ~1e6 times the others'.
    With one Euclidean step for all parameters float32 stopped one step into each solve (training
    error 0.2 at the end of the path against 0.122) and float64 ran 2000 steps per solve without
    converging. The diagonal metric of the preconditioned FISTA makes both converge in a few
    steps, to the same path, with no warning."""
    import warnings

    rng = np.random.default_rng(4)
    y = np.repeat([0, 1, 2], 30)
    X = (rng.random((90, 6)) < np.array([0.15, 0.5, 0.85])[y][:, None]).astype(float)
    X[y == 0, :3] = 0.0  # constant within class 0
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x64 in (False, True):
            with jax.enable_x64(x64):
                fits[x64] = GroupLassoNB().fit(X, y)
    f32, f64 = fits[False], fits[True]
    for m in (f32, f64):
        assert np.asarray(m.path_["converged"]).all()
        assert np.asarray(m.path_["n_steps"]).max() < 100
        np.testing.assert_allclose(m.path_["train_error"][-5:], 0.1222, atol=1e-3)
    np.testing.assert_array_equal(f32.path_["n_active"], f64.path_["n_active"])
    np.testing.assert_allclose(f32.path_["train_error"], f64.path_["train_error"], atol=1e-12)
    # the floored class's sigma sits at the floor, the other parameters at float32 accuracy
    std32 = np.asarray(f32.params_.std, np.float64)
    np.testing.assert_allclose(std32, np.asarray(f64.params_.std), rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(f32.params_.mean), np.asarray(f64.params_.mean), rtol=1e-3, atol=1e-5
    )


def test_adaptive_group_lasso_is_invariant_to_one_columns_units_and_plain_is_not():
    # the docstring's claim: the adaptive weight divides a continuous group's units out
    rng = np.random.default_rng(1)
    n = 200
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 5)) + np.outer(y, [0.8, 0.5, 0.3, 0.0, 0.0])
    Z = X.copy()
    Z[:, 0] = Z[:, 0] * 1e3 + 5e3
    a, b = GroupLassoNB(adaptive=True).fit(X, y), GroupLassoNB(adaptive=True).fit(Z, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(b.predict_proba(Z), a.predict_proba(X), atol=1e-6)
    a, b = GroupLassoNB(adaptive=False).fit(X, y), GroupLassoNB(adaptive=False).fit(Z, y)
    assert np.abs(b.predict_proba(Z) - a.predict_proba(X)).max() > 0.1


def _gl_scale_table(seed=3, n=240):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) + np.outer(y, [0.7, 0.4, 0.2, 0.0])
    return X, y


@pytest.mark.parametrize("x64", [True, False], ids=["float64", "float32"])
@pytest.mark.parametrize("scale", [1e-12, 1e8])
def test_group_lasso_path_does_not_depend_on_the_columns_units(x64, scale):
    """The solver works in standardized units, so the whole path (lambda_max, supports, fits)
    is the same for every unit of the continuous columns. Before, the FISTA tolerance was in
    the columns' gradient units (~1 / scale): at 1e8 every grid point read as converged at
    Omega^(0) (every predictor removed, probabilities off by 0.5), at 1e-12 the adaptive weights
    hit an absolute norm floor (lambda_max 300x off) and float32 gradients overflowed; float32
    at 1e10 looped forever (a warm-started round below the step floor stopped at once)."""
    X, y = _gl_scale_table()
    with jax.enable_x64(x64):
        a = GroupLassoNB(n_penalties=8).fit(X, y)
        b = GroupLassoNB(n_penalties=8).fit(X * scale, y)
        pa, pb = a.predict_proba(X), b.predict_proba(X * scale)
    tol = 1e-9 if x64 else 2e-5
    assert np.asarray(b.path_["converged"]).all()
    np.testing.assert_array_equal(b.path_["n_active"], a.path_["n_active"])
    assert a.path_["n_active"][-1] >= 3  # the informative columns enter
    np.testing.assert_allclose(b.lambda_max_, a.lambda_max_, rtol=tol)
    np.testing.assert_allclose(pb, pa, atol=tol, rtol=0)
    np.testing.assert_allclose(
        np.asarray(b.params_.mean, np.float64) / scale, a.params_.mean, rtol=0, atol=50 * tol
    )


def test_plain_group_lasso_in_large_units_matches_float64_in_float32():
    """Plain L1/L2-NB is not unit-free (its penalty is in the columns' units), but its optimum
    must not depend on the precision: in units of 1e8 float32 used to stop at Omega^(0)."""
    X, y = _gl_scale_table(seed=4)
    Z = X * 1e8
    lam = 0.05 * GroupLassoNB(adaptive=False, n_penalties=2).fit(Z, y).lambda_max_
    pen = {}
    for x64 in (True, False):
        with jax.enable_x64(x64):
            m = GroupLassoNB(adaptive=False, penalty=lam, selection="fixed").fit(Z, y)
            pen[x64] = (m.support_.copy(), m.predict_proba(Z))
    np.testing.assert_array_equal(pen[False][0], pen[True][0])
    assert pen[True][0].sum() >= 2
    np.testing.assert_allclose(pen[False][1], pen[True][1], atol=2e-5, rtol=0)
