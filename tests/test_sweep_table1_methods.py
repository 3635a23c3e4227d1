"""The fsNB paper's Table-1 methods in `jaxnb.sweep` equal the estimators fitted one at a time.

``"snb"`` (selective NB) vs `SelectiveNB`, ``"wnb"`` (Ferreira-weighted NB) vs
``WeightedNB(scheme="ferreira")``, ``"cfs"`` (CFS + NB) vs ``FilterNB(filter="cfs")``, and the
group-lasso sweep's ``train_aic`` vs `GroupLassoNB`'s ``path_["aic"]``, on small Table-1 batches
(`make_table1_batch`) of a discrete (DR) and a continuous (CR) scenario. Folds are 0/1 training
weights in the sweep; the estimator is fitted on the training rows of each fold.
"""

import jax
import numpy as np
import pytest

from jaxnb.datasets import make_table1_batch
from jaxnb.estimators_penalized import GroupLassoNB, WeightedNB
from jaxnb.methods.group_lasso import penalty_fractions
from jaxnb.sweep import fold_ids, sweep_methods

N_DATASETS, K = 3, 2


@pytest.fixture(scope="module", params=["DR", "CR"])
def table1(request):
    data, ns = make_table1_batch(jax.random.PRNGKey(0), request.param, n_datasets=N_DATASETS)
    return {k: np.asarray(v) for k, v in data.items()}, tuple(ns)


def _xy(data, ns, d):
    """(estimator kwargs, X_train, y_train, X_test, y_test) of data set d."""
    disc = bool(ns)
    kw = dict(discrete="all", n_states=list(ns)) if disc else dict(discrete="none")
    key = "codes" if disc else "values"
    return (
        kw,
        data[f"{key}_train"][d],
        data["y_train"][d],
        data[f"{key}_test"][d],
        data["y_test"][d],
    )


def _loss(m, X, y):
    lp = m.predict_log_proba(X)
    return -np.mean(lp[np.arange(len(y)), y])


def _check_fold_fits(res, data, ns, make, extra):
    """Every (data set, fold) of a K-fold, seed-0 sweep equals ``make(**kw)`` fitted on the fold's
    training rows: the same misclassified counts (test / validation / training rows), log-losses
    to 1e-12 (relative)."""
    arr = res.arrays
    for d in range(N_DATASETS):
        kw, X, y, Xt, yt = _xy(data, ns, d)
        ids = fold_ids(0, X.shape[0], K)
        for k in range(K):
            tr, va = ids != k, ids == k
            m = make(**kw).fit(X[tr], y[tr])
            got = {name: v[d, 0, k, 0] for name, v in arr.items()}
            # weighted means Σ w·[wrong] / Σ w: equal to the estimators' error rates up to the
            # rounding of the division (the misclassified counts are equal exactly)
            for part, Xp, yp, n in (
                ("test", Xt, yt, len(yt)),
                ("valid", X[va], y[va], va.sum()),
                ("train", X[tr], y[tr], tr.sum()),
            ):
                wrong = int(np.sum(m.predict(Xp) != yp))
                assert round(got[f"{part}_error"] * n) == wrong
                np.testing.assert_allclose(got[f"{part}_error"], wrong / n, rtol=0, atol=1e-12)
            np.testing.assert_allclose(got["test_log_loss"], _loss(m, Xt, yt), rtol=1e-12)
            np.testing.assert_allclose(got["valid_log_loss"], _loss(m, X[va], y[va]), rtol=1e-12)
            extra(m, got, d)


def test_snb_forward_error_equals_selective_nb(table1):
    from jaxnb.estimators_search import SelectiveNB

    data, ns = table1
    _, res = sweep_methods(data, {"snb": None}, n_states=ns, folds=K, seeds=[0])
    arr = res["snb"].arrays
    assert arr["test_error"].shape == (N_DATASETS, 1, K, 1)
    assert res["snb"].grid["alpha"].tolist() == [1.0]

    def extra(m, got, d):
        sup = np.asarray(m.support_, bool)
        assert got["n_selected"] == sup.sum() == m.path_["size"][-1]
        assert got["n_noisy_selected"] == (sup & data["noisy"][d]).sum()
        assert got["n_evaluations"] == m.n_evaluations_
        assert bool(got["converged"]) is m.converged_ is True
        # the search criterion is the training error: the last (selected) subset's value
        assert m.selected_step_ == m.n_steps_
        np.testing.assert_allclose(got["train_error"], m.path_["criterion"][-1], atol=1e-12)

    make = lambda **kw: SelectiveNB(direction="forward", criterion="error", **kw)
    _check_fold_fits(res["snb"], data, ns, make, extra)
    assert (arr["n_selected"] >= 1).all() and (arr["n_selected"] < 20).all()


def test_wnb_equals_weighted_nb_ferreira(table1):
    data, ns = table1
    _, res = sweep_methods(data, {"wnb": None}, n_states=ns, folds=K, seeds=[0])

    def extra(m, got, d):
        assert got["n_selected"] == m.n_selected_

    _check_fold_fits(res["wnb"], data, ns, lambda **kw: WeightedNB(scheme="ferreira", **kw), extra)


def test_cfs_equals_filter_nb(table1):
    from jaxnb.estimators_structure import FilterNB

    data, ns = table1
    _, res = sweep_methods(data, {"cfs": None}, n_states=ns, folds=K, seeds=[0])
    arr = res["cfs"].arrays
    assert (arr["cfs_truncated"] == 0).all()
    assert (arr["n_expansions"] >= 6).all()  # at least the selected size + max_stale

    def extra(m, got, d):
        sup = np.asarray(m.support_, bool)
        assert got["n_selected"] == sup.sum() >= 1
        assert got["n_noisy_selected"] == (sup & data["noisy"][d]).sum()

    _check_fold_fits(res["cfs"], data, ns, lambda **kw: FilterNB(filter="cfs", **kw), extra)


def test_cfs_sweep_options_are_checked():
    # one small continuous data set (no generator compile): 6 predictors, 2 of them informative
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, (1, 110))
    values = rng.normal(size=(1, 110, 6))
    values[..., :2] += y[..., None]
    data = {
        "codes_train": np.zeros((1, 60, 0), np.int32),
        "values_train": values[:, :60],
        "y_train": y[:, :60],
        "codes_test": np.zeros((1, 50, 0), np.int32),
        "values_test": values[:, 60:],
        "y_test": y[:, 60:],
        "noisy": np.arange(6)[None] >= 2,
    }
    ns = ()
    with pytest.raises(ValueError, match="max_stale"):
        sweep_methods(data, {"cfs": None}, n_states=ns, options={"cfs": {"max_stale": 0}})
    with pytest.raises(ValueError, match="unknown option"):
        sweep_methods(data, {"cfs": None}, n_states=ns, options={"cfs": {"k": 3}})
    # a table too small for the search is flagged, not silently reported as a finished search
    _, res = sweep_methods(data, {"cfs": None}, n_states=ns, options={"cfs": {"max_expansions": 2}})
    assert res["cfs"].arrays["cfs_truncated"].item() == 1
    assert res["cfs"].arrays["n_expansions"].item() == 2


def test_snb_backward_full_and_alpha_grid_equal_selective_nb(table1):
    """Other static options (backward search, smooth criterion, ESANN's selection along a full
    path) and a grid over alpha, all rows training."""
    from jaxnb.estimators_search import SelectiveNB

    data, ns = table1
    alphas = [0.5, 2.0]
    opts = {"direction": "backward", "criterion": "log_loss", "stopping": "full"}
    _, res = sweep_methods(data, {"snb": {"alpha": alphas}}, n_states=ns, options={"snb": opts})
    arr = res["snb"].arrays
    for d in range(N_DATASETS):
        kw, X, y, Xt, yt = _xy(data, ns, d)
        for h, a in enumerate(alphas):
            m = SelectiveNB(alpha=a, **opts, **kw).fit(X, y)
            wrong = np.sum(m.predict(Xt) != yt)
            assert round(arr["test_error"][d, h, 0, 0] * len(yt)) == wrong
            np.testing.assert_allclose(arr["test_error"][d, h, 0, 0], wrong / len(yt), atol=1e-12)
            np.testing.assert_allclose(
                arr["test_log_loss"][d, h, 0, 0], _loss(m, Xt, yt), rtol=1e-12
            )
            sup = np.asarray(m.support_, bool)
            assert arr["n_selected"][d, h, 0, 0] == sup.sum()
            assert arr["n_noisy_selected"][d, h, 0, 0] == (sup & data["noisy"][d]).sum()
            assert arr["n_evaluations"][d, h, 0, 0] == m.n_evaluations_
            assert bool(arr["converged"][d, h, 0, 0]) is m.converged_ is True
            np.testing.assert_allclose(
                arr["train_log_loss"][d, h, 0, 0],
                m.path_["criterion"][m.selected_step_],
                rtol=1e-12,
            )


GL_N, GL_RATIO = 8, 1e-3
# the estimator's grid (group_lasso.penalty_grid) as fractions of lambda_max, bit-identical
GL_FRACTIONS = np.asarray(penalty_fractions(GL_N, GL_RATIO))
GL_OPTIONS = {"relative": True, "adaptive": True, "alpha": 1.0, "tol": 1e-7, "max_steps": 2000}


def test_group_lasso_train_aic_equals_estimator_path_aic(table1):
    data, ns = table1
    _, res = sweep_methods(
        data,
        {"group_lasso": {"penalty": GL_FRACTIONS}},
        n_states=ns,
        options={"group_lasso": GL_OPTIONS},
    )
    arr = res["group_lasso"].arrays
    assert arr["train_aic"].dtype == np.float64
    for d in range(N_DATASETS):
        kw, X, y, Xt, yt = _xy(data, ns, d)
        m = GroupLassoNB(
            adaptive=True, n_penalties=GL_N, penalty_ratio=GL_RATIO, selection="aic", **kw
        ).fit(X, y)
        np.testing.assert_array_equal(arr["n_active"][d, :, 0, 0], m.path_["n_active"])
        # Both run the same solver to tol=1e-7, but compiled differently (vmapped sweep vs one
        # fit): rounding differs with the XLA optimization level, which moves the step at which
        # the stopping test fires; the AIC then agrees to the solver tolerance (4e-8 seen at
        # --xla_backend_optimization_level=0), not to float64 rounding.
        np.testing.assert_allclose(arr["train_aic"][d, :, 0, 0], m.path_["aic"], rtol=0, atol=1e-6)
        np.testing.assert_allclose(
            arr["train_error"][d, :, 0, 0], m.path_["train_error"], rtol=0, atol=1e-12
        )
        # selecting the AIC model from the sweep table: first minimum, as the estimator
        h = int(np.argmin(arr["train_aic"][d, :, 0, 0]))
        assert h == m.selected_index_
        np.testing.assert_allclose(
            arr["test_error"][d, h, 0, 0], np.mean(m.predict(Xt) != yt), rtol=0, atol=1e-12
        )
        np.testing.assert_array_equal(arr["aic_selected"][d, :, 0, 0], np.arange(GL_N) == h)


def test_group_lasso_test_rows_at_the_aic_choice_only(table1):
    """test_at='aic': the test metrics of the AIC-selected penalty equal those of the full
    scoring; every other penalty's are NaN; the training-side columns are unchanged."""
    data, ns = table1
    grid = {"group_lasso": {"penalty": GL_FRACTIONS}}
    _, full = sweep_methods(data, grid, n_states=ns, options={"group_lasso": GL_OPTIONS})
    _, sel = sweep_methods(
        data, grid, n_states=ns, options={"group_lasso": dict(GL_OPTIONS, test_at="aic")}
    )
    a, b = full["group_lasso"].arrays, sel["group_lasso"].arrays
    chosen = a["aic_selected"]
    np.testing.assert_array_equal(b["aic_selected"], chosen)
    assert chosen.sum(axis=1).max() == chosen.sum(axis=1).min() == 1
    for k in ("test_error", "test_log_loss"):
        np.testing.assert_allclose(b[k][chosen], a[k][chosen], rtol=1e-12)
        assert np.isnan(b[k][~chosen]).all()
    for k in ("train_error", "train_aic", "n_active"):
        np.testing.assert_array_equal(b[k], a[k])
    with pytest.raises(ValueError, match="test_at"):
        sweep_methods(
            data, grid, n_states=ns, options={"group_lasso": dict(GL_OPTIONS, test_at="best")}
        )


@pytest.mark.parametrize(
    "method, options, match",
    [
        ("snb", {"direction": "sideways"}, "direction"),
        ("snb", {"criterion": "auc"}, "criterion"),
        ("snb", {"stopping": "never"}, "stopping"),
        ("snb", {"max_features": 0}, "max_features"),
        ("snb", {"patience": 3}, "patience"),
        ("wnb", {"state_weighting": "square"}, "state_weighting"),
        ("wnb", {"n_bins": 1}, "n_bins"),
        ("wnb", {"direction": "forward"}, "direction"),
    ],
)
def test_bad_static_options_raise_naming_the_argument(table1, method, options, match):
    data, ns = table1
    with pytest.raises(ValueError, match=match):
        sweep_methods(data, {method: None}, n_states=ns, options={method: options})


@pytest.mark.parametrize("method", ["snb", "wnb"])
def test_negative_alpha_grid_raises(table1, method):
    data, ns = table1
    with pytest.raises(ValueError, match="alpha"):
        sweep_methods(data, {method: {"alpha": [1.0, -0.5]}}, n_states=ns)
