"""`explain` and `score_bias_` on every estimator whose score is a bias plus per-predictor terms.

Before, only `NaiveBayes` had `explain`: a researcher who wanted to see which predictors drive a
fsNB, selective, group-lasso, weighted, filtered, flexible or online model's prediction had to
rebuild the model's combination rule by hand. The contract checked here, for each of them:
``predict_joint_log_proba(X) == score_bias_ + explain(X).sum(1)``, predictors in the user's
column order, and the terms the model's own parameters give (float64 NumPy references).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import reference as ref

import jaxnb
from jaxnb.params import interpolate

# mixed data, the discrete columns not first, so the user order differs from the internal one
_DISC = [1, 3]


def _data(n=160, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    c0 = 1.1 * y + rng.normal(size=n)
    d0 = np.where(rng.random(n) < 0.5, y, rng.integers(0, 3, n))
    c1 = rng.normal(size=n)
    d1 = rng.integers(0, 2, n)
    c2 = -0.7 * y + rng.normal(size=n)
    return np.stack([c0, d0, c1, d1, c2], 1).astype(float), y


_ADDITIVE = {
    "NaiveBayes": lambda: jaxnb.NaiveBayes(discrete=_DISC),
    "StagewiseNB": lambda: jaxnb.StagewiseNB(discrete=_DISC),
    "SelectiveNB": lambda: jaxnb.SelectiveNB(discrete=_DISC),
    "GroupLassoNB": lambda: jaxnb.GroupLassoNB(discrete=_DISC, n_penalties=6),
    "WeightedNB-ferreira": lambda: jaxnb.WeightedNB(discrete=_DISC),
    "WeightedNB-gradient": lambda: jaxnb.WeightedNB("gradient", discrete=_DISC, max_steps=50),
    "FilterNB": lambda: jaxnb.FilterNB(discrete=_DISC, k=2),
    "FilterWrapperNB": lambda: jaxnb.FilterWrapperNB(discrete=_DISC),
    "FlexibleNB": lambda: jaxnb.FlexibleNB(discrete=_DISC),
    "FlexibleTAN": lambda: jaxnb.FlexibleTAN(discrete=_DISC),
}
_CONTINUOUS = {  # learners of continuous columns only
    "TAN-gaussian": lambda: jaxnb.TAN(),
    "OnlineWeightedNB": lambda: jaxnb.OnlineWeightedNB(),
    "OnlineNB": lambda: jaxnb.OnlineNB(),
    "AveragedNB": lambda: jaxnb.AveragedNB(),
}


def _fit(make, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jaxnb.ConvergenceWarning)  # a short budget is fine here
        return make().fit(X, y)


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    models = {k: _fit(f, X, y) for k, f in _ADDITIVE.items()}
    Xc = X[:, [0, 2, 4]]
    models.update({k: _fit(f, Xc, y) for k, f in _CONTINUOUS.items()})
    models["TAN-discrete"] = _fit(lambda: jaxnb.TAN(discrete="all"), _discrete_part(X), y)
    return X, Xc, y, models


def _discrete_part(X):
    return X[:, _DISC].astype(int)


def _rows(name, X, Xc):
    if name == "TAN-discrete":
        return _discrete_part(X)[:37]
    return (Xc if name in _CONTINUOUS else X)[:37]  # 37 rows: padded to a bucket inside


@pytest.mark.parametrize("name", [*_ADDITIVE, *_CONTINUOUS, "TAN-discrete"])
def test_bias_plus_terms_is_the_models_score(fitted, name):
    X, Xc, y, models = fitted
    m, Z = models[name], _rows(name, X, Xc)
    E = m.explain(Z)
    assert E.shape == (37, Z.shape[1], 3) and np.all(np.isfinite(E))
    assert m.score_bias_.shape == (3,)
    np.testing.assert_allclose(
        m.score_bias_ + E.sum(1), m.predict_joint_log_proba(Z), rtol=1e-10, atol=1e-10
    )
    # the padding of the rows does not leak: the first rows of a longer call are the same
    np.testing.assert_allclose(m.explain(Z[:20]), E[:20], rtol=1e-12, atol=1e-12)


def _np_params(p):
    return {k: np.asarray(getattr(p, k), np.float64) for k in ("log_prior", "cpt", "mean", "std")}


def _reference_terms(m, params, Z):
    """Float64 NumPy terms of an NB parameter set, in the user's column order."""
    codes, values = m.encoder_.transform(Z, dtype=np.float64)
    L = ref.log_contributions(_np_params(params), codes, values, m.n_states_)
    return L[:, m._user_order(), :]


def test_terms_match_float64_references(fitted):
    X, Xc, y, models = fitted
    Z = X[:37]
    # NB and the group lasso: log f(x_i | j) under the fitted parameters
    for name in ("NaiveBayes", "GroupLassoNB"):
        m = models[name]
        np.testing.assert_allclose(m.explain(Z), _reference_terms(m, m.params_, Z), rtol=1e-10)
        np.testing.assert_allclose(m.score_bias_, np.asarray(m.params_.log_prior), rtol=1e-14)
    # fsNB: the terms under Omega(alpha), the interpolated parameters of the selected levels
    m = models["StagewiseNB"]
    alpha = np.empty(5)
    alpha[m._user_order()] = m.alpha_  # internal order [discrete, continuous]
    omega = interpolate(m.omega1_, m.omega0_, alpha)
    np.testing.assert_allclose(m.explain(Z), _reference_terms(m, omega, Z), rtol=1e-10)
    # Ferreira: each NB term times its predictor's weight
    m, nb = models["WeightedNB-ferreira"], models["NaiveBayes"]
    np.testing.assert_allclose(
        m.explain(Z), m.weights_[None, :, None] * nb.explain(Z), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(m.score_bias_, nb.class_log_prior_, rtol=1e-14)
    # gradient weights: per-class weights on the NB terms of the standardized values (log f +
    # log s_i, s_i a continuous column's sd over the training rows: the pooled class moments),
    # the learned bias replacing the prior
    m = models["WeightedNB-gradient"]
    log_s = np.zeros(5)
    cont = np.setdiff1d(np.arange(5), _DISC)
    log_s[cont] = 0.5 * np.log(X[:, cont].var(0))
    np.testing.assert_allclose(m.log_scale_, log_s, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        m.explain(Z),
        m.weights_[None] * (nb.explain(Z) + log_s[None, :, None]),
        rtol=1e-10,
        atol=1e-12,
    )
    np.testing.assert_allclose(m.score_bias_, m.bias_, rtol=1e-14)
    # a missing value's term is 0 and the score still the bias plus the terms
    mm = _fit(lambda: jaxnb.WeightedNB("gradient", discrete=_DISC, missing="ignore"), X, y)
    Zm = Z.copy()
    Zm[::3, 0] = Zm[1::4, 4] = np.nan
    E = mm.explain(Zm)
    assert np.all(E[::3, 0] == 0) and np.all(E[1::4, 4] == 0)
    np.testing.assert_allclose(mm.explain(Z)[:, [1, 2, 3]][2::3], E[:, [1, 2, 3]][2::3], rtol=1e-12)
    np.testing.assert_allclose(
        mm.score_bias_ + E.sum(1), mm.predict_joint_log_proba(Zm), rtol=1e-10, atol=1e-10
    )


def test_tan_terms_are_the_cpt_of_each_child_given_its_parent(fitted):
    X, Xc, y, models = fitted
    m, Z = models["TAN-discrete"], _discrete_part(X)[:37]
    E = m.explain(Z)
    log_cpt = np.asarray(m.params_.log_cpt)  # (K, M, c): offset + child state, parent, class
    off = np.concatenate([[0], np.cumsum(m.n_states_)[:-1]])
    for i, parent in enumerate(m.tree_):
        b = Z[:, parent] if parent >= 0 else np.zeros(len(Z), int)  # roots use b = 0
        np.testing.assert_allclose(E[:, i], log_cpt[off[i] + Z[:, i], b], rtol=1e-12)
    assert (m.tree_ >= 0).sum() == 1  # two columns: one root, one child


def test_left_out_predictors_contribute_nothing(fitted):
    X, Xc, y, models = fitted
    Z = X[:37]
    nb = models["NaiveBayes"]
    for name in ("SelectiveNB", "FilterNB", "FilterWrapperNB"):
        m = models[name]
        E, keep = m.explain(Z), m.support_
        assert keep.any() and not keep.all(), name  # the data make both kinds appear
        np.testing.assert_array_equal(E[:, ~keep], 0.0)
        np.testing.assert_allclose(E[:, keep], nb.explain(Z)[:, keep], rtol=1e-10)
    # fsNB: a predictor at level 0 has its marginal, the same value for every class
    m = models["StagewiseNB"]
    off = m.alpha_ == 0
    assert off.any() and not off.all()
    E = m.explain(Z)
    np.testing.assert_allclose(np.ptp(E[:, off], axis=-1), 0.0, atol=1e-12)
    assert np.ptp(E[:, ~off], axis=-1).max() > 0.1


@pytest.mark.parametrize("name", [*_ADDITIVE, *_CONTINUOUS, "TAN-discrete"])
def test_feature_importances_are_the_spread_of_the_terms_on_the_training_rows(fitted, name):
    """Before, only `NaiveBayes` had ``feature_importances_``; now every additive model has it,
    from its own terms: the mean over the training rows of max_j − min_j of ``explain``,
    normalized to sum 1, in the user's column order."""
    X, Xc, y, models = fitted
    m = models[name]
    Z = _discrete_part(X) if name == "TAN-discrete" else Xc if name in _CONTINUOUS else X
    spread = np.ptp(m.explain(Z), axis=-1).mean(0)
    imp = m.feature_importances_
    assert imp.shape == (Z.shape[1],) and (imp >= 0).all()
    np.testing.assert_allclose(imp.sum(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(imp, spread / spread.sum(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("make", [lambda: jaxnb.NaiveBayes(), lambda: jaxnb.OnlineNB()])
def test_importances_after_partial_fits_use_the_rows_of_every_batch(fitted, make):
    """Streamed in small batches, the model's importances come from the first rows of all the
    batches, not of the first batch only (one row, for a model updated row by row)."""
    X, Xc, y, models = fitted
    m = make()
    for start in range(0, len(Xc), 40):
        m.partial_fit(Xc[start : start + 40], y[start : start + 40], classes=[0, 1, 2])
    spread = np.ptp(m.explain(Xc), axis=-1).mean(0)
    np.testing.assert_allclose(m.feature_importances_, spread / spread.sum(), rtol=1e-10)


def _class_sorted(n=6000, seed=3):
    """Rows sorted by class (as in many UCI files); predictor 0's spread differs by class."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = np.c_[rng.normal(size=n) * np.where(y == 0, 3.0, 1.0), rng.normal(size=n) + 0.8 * y]
    return X, y


def _spread(m, X):
    s = np.ptp(m.explain(X), axis=-1).mean(0)
    return s / s.sum()


def test_importances_of_a_class_sorted_fit_use_rows_across_the_whole_set():
    """Above 2048 rows the importances came from the first 2048: on a file sorted by class, one
    class only (importances 0.83 / 0.17 here against 0.76 / 0.24 for the same model fitted on the
    shuffled rows). They now come from 2048 evenly spaced rows."""
    X, y = _class_sorted()
    m = jaxnb.NaiveBayes().fit(X, y)
    pick = np.arange(2048) * len(X) // 2048
    np.testing.assert_allclose(m.feature_importances_, _spread(m, X[pick]), rtol=1e-10)
    every = _spread(m, X)
    assert np.abs(m.feature_importances_ - every).max() < 0.01
    assert np.abs(_spread(m, X[:2048]) - every).max() > 0.05  # what the first rows gave
    perm = np.random.default_rng(0).permutation(len(X))
    shuffled = jaxnb.NaiveBayes().fit(X[perm], y[perm]).feature_importances_
    assert np.abs(m.feature_importances_ - shuffled).max() < 0.01


def test_importances_after_partial_fits_are_a_uniform_sample_of_every_batch():
    """Streamed batches enter the 2048-row sample by reservoir sampling (the first 2048 rows of
    the stream used to be kept: one class of a class-sorted stream). The draw is seeded by the
    stream's position: the same stream gives the same importances."""
    X, y = _class_sorted()

    def stream():
        m = jaxnb.NaiveBayes()
        for start in range(0, len(X), 1000):
            m.partial_fit(X[start : start + 1000], y[start : start + 1000], classes=[0, 1])
        return m

    m = stream()
    codes, values = m._sample()
    assert values.shape == (2048, 2)
    # every kept row is a training row, each at most once, and both classes are in the sample
    where = {tuple(r): i for i, r in enumerate(np.asarray(X, values.dtype))}
    idx = np.array([where[tuple(r)] for r in values])
    assert len(np.unique(idx)) == 2048
    assert 0.44 < (idx >= 3000).mean() < 0.56  # 2048 of 6000 uniformly: 0.5 +- 0.011
    assert (idx >= 5000).sum() > 250  # the last batch too (expected 341)
    np.testing.assert_allclose(m.feature_importances_, _spread(m, X[idx]), rtol=1e-10)
    assert np.abs(m.feature_importances_ - _spread(m, X)).max() < 0.02
    np.testing.assert_array_equal(stream().feature_importances_, m.feature_importances_)


def test_importance_sample_of_a_row_by_row_stream_is_uniform():
    """One row per call (OnlineNB's usual use): the reservoir keeps a uniform sample."""
    X, y = _class_sorted(n=3000)
    m = jaxnb.OnlineNB()
    for i in range(2100):  # 2048 fill the sample, the next 52 enter it at random
        m.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1])
    m.partial_fit(X[2100:], y[2100:])
    values = m._sample()[1]
    where = {tuple(r): i for i, r in enumerate(np.asarray(X, values.dtype))}
    idx = np.array([where[tuple(r)] for r in values])
    assert len(np.unique(idx)) == 2048 and (idx >= 2048).sum() > 500  # expected 2048*952/3000
    np.testing.assert_allclose(m.feature_importances_, _spread(m, X[idx]), rtol=1e-10)


def test_left_out_predictors_have_zero_importance(fitted):
    X, Xc, y, models = fitted
    for name in ("SelectiveNB", "FilterNB", "FilterWrapperNB", "GroupLassoNB"):
        m = models[name]
        keep = m.support_
        assert keep.any() and not keep.all(), name
        np.testing.assert_array_equal(m.feature_importances_[~keep], 0.0, err_msg=name)
        assert (m.feature_importances_[keep] > 0).all(), name
    m = models["StagewiseNB"]  # level 0: the marginal, the same term for every class
    off = m.alpha_ == 0
    np.testing.assert_allclose(m.feature_importances_[off], 0.0, atol=1e-12)
    assert (m.feature_importances_[~off] > 0).all()


def test_select_from_model_keeps_the_group_lassos_support():
    from sklearn.feature_selection import SelectFromModel

    X, y = _data()
    sel = SelectFromModel(jaxnb.GroupLassoNB(discrete=_DISC, n_penalties=6), threshold=1e-12).fit(
        X, y
    )
    assert not sel.get_support().all()  # the model removes a predictor on these data
    np.testing.assert_array_equal(sel.get_support(), sel.estimator_.support_)
    assert sel.transform(X).shape == (len(X), int(sel.estimator_.support_.sum()))


def test_rfe_keeps_the_two_continuous_predictors_that_carry_the_class():
    from sklearn.feature_selection import RFE

    X, y = _data()  # columns 0 and 4 are shifted by the class, 2 and 3 are noise
    rfe = RFE(jaxnb.WeightedNB(discrete="none"), n_features_to_select=2).fit(X, y)
    np.testing.assert_array_equal(rfe.support_, [True, False, False, False, True])


def test_online_nb_terms_are_the_summaries_gaussian_terms(fitted):
    """`OnlineNB` (w = 1, b = 0): the terms are the summaries' class-conditional log densities;
    its bias is the streamed log prior. `OnlineWeightedNB` scales them, standardized (log s_i
    added: `standardized_offset`), by its weights."""
    X, Xc, y, models = fitted
    Z = Xc[:37]
    on, onw = models["OnlineNB"], models["OnlineWeightedNB"]
    nb = jaxnb.NaiveBayes(discrete="none", var_smoothing=on.var_smoothing).fit(Xc, y)
    np.testing.assert_allclose(on.explain(Z), nb.explain(Z), rtol=1e-9)
    np.testing.assert_allclose(on.score_bias_, on.class_log_prior_, rtol=1e-14)
    from jaxnb.stream.online import standardized_offset

    off = np.asarray(standardized_offset(onw.state_.summary))
    np.testing.assert_allclose(off, np.log(Xc.std(0)), rtol=1e-9)
    want = onw.weights_[None] * (on.explain(Z) + off[None, :, None])
    np.testing.assert_allclose(onw.explain(Z), want, rtol=1e-9)
    np.testing.assert_allclose(onw.score_bias_, onw.class_log_prior_ + onw.bias_, rtol=1e-14)


def test_column_permutation_permutes_the_terms(fitted):
    # (not StagewiseNB here: its greedy moves tie under the error criterion on these data, and a
    # tie goes to the first column, which a permutation changes)
    X, Xc, y, models = fitted
    perm = np.array([4, 3, 0, 1, 2])
    disc = [int(np.flatnonzero(perm == d)[0]) for d in _DISC]
    makes = {
        "GroupLassoNB": lambda: jaxnb.GroupLassoNB(discrete=disc, n_penalties=6),
        "WeightedNB-ferreira": lambda: jaxnb.WeightedNB(discrete=disc),
        "FlexibleNB": lambda: jaxnb.FlexibleNB(discrete=disc),
    }
    for name, make in makes.items():
        m = _fit(make, X[:, perm], y)
        np.testing.assert_allclose(
            m.explain(X[:37, perm]),
            models[name].explain(X[:37])[:, perm],
            rtol=1e-7,
            atol=1e-9,
            err_msg=name,
        )


@pytest.mark.parametrize(
    "cls", [jaxnb.StagewiseNB, jaxnb.SelectiveNB, jaxnb.GroupLassoNB, jaxnb.WeightedNB]
)
def test_missing_values_contribute_zero(cls):
    X, y = _data()
    X[:40:4, 0] = np.nan  # a continuous column
    X[1:40:4, 1] = np.nan  # a discrete one
    X[2:40:4, 4] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jaxnb.ConvergenceWarning)
        m = cls(discrete=_DISC, missing="ignore").fit(X, y)
    E = m.explain(X[:40])
    np.testing.assert_array_equal(E[:40:4, 0], 0.0)
    np.testing.assert_array_equal(E[1:40:4, 1], 0.0)
    np.testing.assert_array_equal(E[2:40:4, 4], 0.0)
    np.testing.assert_allclose(
        m.score_bias_ + E.sum(1), m.predict_joint_log_proba(X[:40]), rtol=1e-10, atol=1e-10
    )


def test_unfitted_and_non_additive_models():
    X, y = _data()
    for make in (*_ADDITIVE.values(), *_CONTINUOUS.values()):
        est = make()
        with pytest.raises(jaxnb.NotFittedError, match="not fitted yet"):
            est.explain(X)
        assert not hasattr(est, "score_bias_")  # NotFittedError is an AttributeError
        assert not hasattr(est, "feature_importances_")
    # scores that are not a sum of per-predictor terms have no explain: a mixture of
    # per-predictor posteriors (L1NB), a joint kernel density (ParzenNB), joint Gaussian
    # groups (GaussianSemiNaiveNB)
    for cls in (jaxnb.L1NB, jaxnb.ParzenNB, jaxnb.GaussianSemiNaiveNB):
        assert not hasattr(cls(), "explain") and not hasattr(cls, "score_bias_"), cls
        assert not hasattr(cls, "feature_importances_"), cls


@pytest.mark.parametrize("name", ["SelectiveNB", "WeightedNB-gradient", "OnlineWeightedNB"])
def test_new_row_counts_share_the_explain_programs(fitted, name, compiles):
    """explain pads the rows as prediction does: 20 consecutive sizes compile at most one
    program per bucket (each size compiled its own without the padding)."""
    from jaxnb.estimators import _row_bucket

    X, Xc, y, models = fitted
    m, Z = models[name], (Xc if name in _CONTINUOUS else X)
    full = m.explain(Z[:80])
    m.explain(Z[:50])
    before = compiles.n
    for k in range(51, 71):
        np.testing.assert_allclose(m.explain(Z[:k]), full[:k], rtol=0, atol=1e-12)
    assert {_row_bucket(k) for k in range(51, 71)} == {64, 80}
    assert compiles.n - before <= 2, compiles.n - before


def test_importances_of_nearby_training_sizes_share_one_program(compiles):
    """The training-row sample is padded like explain's rows: refits on 150 to 159 rows (CV
    folds, learning curves) compile the importances' terms once (each size compiled its own)."""
    X, y = _data()
    models = [jaxnb.NaiveBayes(discrete=_DISC).fit(X[:k], y[:k]) for k in range(150, 160)]
    first = models[0].feature_importances_
    before = compiles.n
    for m in models[1:]:
        assert m.feature_importances_.shape == first.shape == (5,)
    assert compiles.n == before, compiles.n - before


@pytest.mark.parametrize("batch", [1, 7, 1000, 30000])
def test_reservoir_keeps_a_uniform_sample_of_the_stream(batch):
    """`_reservoir` (the importances' row sample): 2048 distinct rows of a 100 000-row stream,
    as many from each tenth of it (expected 204.8, sd 13.6), however the stream is batched."""
    from jaxnb.estimators import _reservoir

    size, total = 2048, 100_000
    buf, filled, seen = np.full(size, -1), 0, 0
    while seen < total:
        n = min(batch, total - seen)
        take, rows, slots = _reservoir(filled, seen, n, size)
        buf[filled : filled + take] = seen + np.arange(take)
        buf[slots] = seen + rows
        filled, seen = filled + take, seen + n
    assert len(np.unique(buf)) == size and buf.min() >= 0
    tenths = np.bincount(buf * 10 // total, minlength=10)
    assert np.abs(tenths - 204.8).max() < 55, tenths
