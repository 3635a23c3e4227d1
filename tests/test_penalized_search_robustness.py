"""Search and penalized NB on edge cases: zero probabilities (alpha = 0), non-finite CV curves,
constant continuous predictors, options that cannot apply, L1-NB's validation path, and eager
checks of the core functions' arguments."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.estimators_penalized import L1NB, GroupLassoNB
from jaxnb.estimators_search import SelectiveNB
from jaxnb.methods import group_lasso as gl
from jaxnb.methods import selective as sel
from jaxnb.methods import stagewise as sw
from jaxnb.methods import weighted as wt
from jaxnb.model_selection import aic, kfold_stats, select_along_path
from jaxnb.params import fit_marginal, fit_mle


def _zero_probability_data():
    rng = np.random.default_rng(12)
    n = 100
    y = rng.integers(0, 2, n)
    X = rng.integers(0, 3, (n, 4))
    X[:, 0] = np.where(rng.random(n) < 0.8, y, X[:, 0])
    X[np.flatnonzero(y == 0)[:3], 3] = 3  # state 3 of X3 only in class 0: log 0 in class 1
    return X, y


def _ref_error(X, y, support, alpha=0.0):
    """Training error of NB on the columns in ``support`` (float64 NumPy, zero probabilities
    floored at the smallest normal number as documented)."""
    c = 2
    prior = np.log(np.bincount(y, minlength=c) / len(y))
    S = np.tile(prior, (len(y), 1))
    floor = np.log(np.finfo(np.float64).tiny)
    for i in np.flatnonzero(support):
        m = int(X[:, i].max()) + 1
        for j in range(c):
            cnt = np.bincount(X[y == j, i], minlength=m) + alpha
            with np.errstate(divide="ignore"):
                lp = np.log(cnt / cnt.sum())
            S[:, j] += np.maximum(lp[X[:, i]], floor)
    return np.mean(np.argmax(S, 1) != y)


def test_selective_nb_with_zero_probabilities():
    """alpha = 0 and a state never seen in a class: the empty model's error is the prior's
    (a predictor outside the subset no longer turns the scores into NaN), the smooth criteria
    search instead of returning NaN, and predictions are finite."""
    X, y = _zero_probability_data()
    disc = [True] * 4
    m = SelectiveNB(alpha=0.0, criterion="error", discrete=disc).fit(X, y)
    crit = m.path_["criterion"]
    assert crit[0] == pytest.approx(np.mean(y != np.bincount(y).argmax()))
    assert np.isfinite(crit).all()
    assert crit[-1] == pytest.approx(_ref_error(X, y, m.support_))
    for criterion in ("log_loss", "error_probability"):
        m = SelectiveNB(alpha=0.0, criterion=criterion, discrete=disc).fit(X, y)
        assert np.isfinite(m.path_["criterion"]).all() and m.support_[0]
        assert np.isfinite(m.predict_proba(X)).all()
    # backward: removing a predictor with a -inf term gives no NaN
    m = SelectiveNB(alpha=0.0, direction="backward", discrete=disc).fit(X, y)
    assert np.isfinite(m.path_["criterion"]).all()


def test_group_lasso_cv_never_selects_a_non_finite_point():
    rng = np.random.default_rng(2)
    n = 80
    y = rng.integers(0, 3, n)
    X = rng.integers(0, 4, (n, 5))
    X[:, 0] = np.where(rng.random(n) < 0.7, y, X[:, 0])
    X[:, 1] = np.where(rng.random(n) < 0.6, y, X[:, 1])
    m = GroupLassoNB(selection="cv", alpha=0.0, adaptive=False, discrete=[True] * 5).fit(X, y)
    crit = m.path_["cv_log_loss"]
    assert not np.isfinite(crit).all()  # the data do produce non-finite points
    finite = np.where(np.isfinite(crit), crit, np.inf)
    assert m.selected_index_ == int(np.argmin(finite))
    y2 = y.copy()
    y2[0] = 3  # a class with one row: some training fold lacks it, every CV loss is infinite
    with pytest.raises(ValueError, match="cross-validated log-loss is not finite at any penalty"):
        GroupLassoNB(selection="cv", discrete=[True] * 5).fit(X, y2)


@pytest.mark.parametrize("adaptive", [True, False])
def test_group_lasso_ignores_a_constant_continuous_predictor(adaptive):
    """A constant column never becomes active and changes neither lambda_max, the path nor the
    selection. Plain L1/L2-NB used to pull its sigma to the floor along the path: it came in at
    a lambda_max twice the other columns' and shifted the AIC choice."""
    rng = np.random.default_rng(0)
    n = 200
    y = rng.integers(0, 2, n)
    X = np.c_[rng.normal(1.5 * y, 1, n), np.full(n, 3.0), rng.normal(0, 1, n)]
    m = GroupLassoNB(adaptive=adaptive, discrete=[False] * 3).fit(X, y)
    ref = GroupLassoNB(adaptive=adaptive, discrete=[False] * 2).fit(X[:, [0, 2]], y)
    assert not m.path_["active"][:, 1].any()
    assert m.lambda_max_ == pytest.approx(ref.lambda_max_, rel=1e-9)
    np.testing.assert_array_equal(m.path_["active"][:, [0, 2]], ref.path_["active"])
    assert m.penalty_ == pytest.approx(ref.penalty_, rel=1e-9)
    np.testing.assert_allclose(np.asarray(m.problem_.mle.std)[:, 1], [1.0, 1.0])
    np.testing.assert_allclose(np.asarray(m.params_.std)[:, 1], [1.0, 1.0])
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X[:, [0, 2]]), atol=1e-9)


def test_max_features_with_a_backward_start_is_refused():
    X, y = _zero_probability_data()
    for direction in ("backward", "backward_forward"):
        with pytest.raises(ValueError, match="max_features caps forward moves"):
            SelectiveNB(direction=direction, max_features=2, discrete=[True] * 4).fit(X, y)
    m = SelectiveNB(direction="forward", stopping="full", max_features=2, discrete=[True] * 4)
    assert m.fit(X, y).support_.sum() <= 2


def test_l1nb_validation_criterion_belongs_to_its_own_path():
    rng = np.random.default_rng(3)
    n = 200
    y = rng.integers(0, 2, n)
    X = np.c_[rng.normal(y, 1, n), rng.normal(0.5 * y, 1, n), rng.normal(0, 1, n)]
    m = L1NB(selection="validation").fit(X, y)
    assert m.criterion_path_.shape == m.validation_s_path_.shape
    assert m.s_path_[m.selected_index_] <= m.validation_s_ + 1e-12
    a = L1NB(selection="aic").fit(X, y)
    assert a.criterion_path_.shape == a.s_path_.shape and not hasattr(a, "validation_s_path_")


def test_core_functions_check_their_arguments():
    X, y = _zero_probability_data()
    from jaxnb.methods.nb import fit_stats

    stats = fit_stats(
        jnp.asarray(X),
        jnp.zeros((len(y), 0)),
        jnp.asarray(y),
        None,
        n_states=(3, 3, 3, 4),
        n_classes=2,
    )
    problem = gl.make_group_lasso_problem(stats, alpha=1.0)
    cases = [
        (
            lambda: gl.fit_group_lasso(problem, -1.0),
            r"penalty_discrete must be finite and within \[0.0, inf\]",
        ),
        (lambda: gl.group_lasso_path(problem, [0.1, -0.2]), "penalties must be finite"),
        (lambda: gl.penalty_grid(problem, 5, ratio=2.0), "ratio must lie in"),
        (lambda: gl.penalty_grid(problem, 0), "num must be an int >= 1"),
        (lambda: gl.lambda_max(problem, continuous_scale=0.0), "continuous_scale must be"),
        (lambda: gl.make_group_lasso_problem(stats, alpha=-0.5), "alpha must be finite"),
        (lambda: gl.make_group_lasso_problem(stats, min_std=-1.0), "min_std must be finite"),
        (lambda: sw.n_units(0.0), "epsilon must lie in"),
        (
            lambda: wt.fit_gradient_weights(
                jnp.zeros((4, 2, 2)), jnp.zeros(4, int), jnp.zeros(2), l2=-1.0
            ),
            r"l2 must be finite and within \[0.0, inf\]",
        ),
        (
            lambda: aic(jnp.zeros((2, 2)), jnp.zeros(2, int), 1, weight=np.array([1.0, -1.0])),
            "weight must be finite",
        ),
        (lambda: select_along_path([np.nan, np.nan]), "all NaN"),
        (
            lambda: select_along_path([1.0, 0.5, 0.5], "min_smallest", sizes=[1]),
            "sizes must be 1-D with at least 3",
        ),
    ]
    for fn, msg in cases:
        with pytest.raises(ValueError, match=msg):
            fn()
    o1, o0 = fit_mle(stats, 1.0, 1e-9), fit_marginal(stats, 1.0, 1e-9)
    args = (o1, o0, jnp.asarray(X), jnp.zeros((len(y), 0)), jnp.asarray(y))
    for kw, msg in (
        (dict(epsilon=2.0, k_max=1), "epsilon must lie in"),
        (dict(epsilon=0.1, k_max=3), "k_max=3 does not match epsilon=0.1"),
        (dict(epsilon=0.1, k_max=10, patience=0), "patience must be None or an int >= 1"),
    ):
        with pytest.raises(ValueError, match=msg):
            sw.fsnb_path(*args, max_iter=5, **kw)
    assert int(sw.fsnb_path(*args, epsilon=0.1, k_max=10, max_iter=5).n_iter) == 5
    L = jnp.zeros((len(y), 4, 2))
    with pytest.raises(ValueError, match="max_features must be None or an int >= 1"):
        sel.selective_path(L, jnp.zeros(2), jnp.asarray(y), max_features=0)
    with pytest.raises(ValueError, match=r"weight must be finite and within \[0.0, inf\]"):
        sel.selective_path(L, jnp.zeros(2), jnp.asarray(y), weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="folds must hold int fold indices"):
        kfold_stats(
            jnp.asarray(X),
            jnp.zeros((len(y), 0)),
            jnp.asarray(y),
            np.full(len(y), 7),
            n_states=(3, 3, 3, 4),
            n_classes=2,
            n_folds=3,
        )


def test_group_lasso_objective_gradient_is_finite_at_removed_groups():
    """The norm's gradient at a group sitting exactly at Omega^(0) is the zero subgradient, not
    0 * inf = NaN: every fitted solution has such groups."""
    rng = np.random.default_rng(0)
    n = 60
    y = rng.integers(0, 3, n)
    codes = np.c_[np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n)), rng.integers(0, 3, n)]
    values = np.c_[rng.normal(y, 1.0), rng.normal(0, 1, n)]
    from jaxnb.methods.nb import fit_stats

    stats = fit_stats(
        jnp.asarray(codes), jnp.asarray(values), jnp.asarray(y), None, n_states=(3, 3), n_classes=3
    )
    problem = gl.make_group_lasso_problem(stats, alpha=1.0)
    lam = float(np.median(np.asarray(gl.lambda_max(problem, per_predictor=True)[1])))
    prm, _ = gl.fit_group_lasso(problem, lam)
    assert not np.asarray(gl.active_predictors(problem, prm)).all()  # some groups removed
    for point in (prm, problem.center):
        g = jax.grad(lambda q: gl.group_lasso_objective(problem, q, lam, lam))(point)
        assert all(np.isfinite(np.asarray(leaf)).all() for leaf in jax.tree.leaves(g))
