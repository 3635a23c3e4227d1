"""The NaiveBayes estimator: scikit-learn where the model is the same, the loop reference for mixed
data, labels and categories of any type, partial_fit, explanations, missing values, the sklearn API.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference as ref

import jaxnb as nb
from jaxnb import NaiveBayes

C = 3


def _gaussian_data(seed, n=80, p=3, class_probs=(0.7, 0.2, 0.1), labels=(3, 7, 11)):
    rng = np.random.default_rng(seed)
    y = rng.choice(len(class_probs), size=n, p=class_probs)
    y[: len(class_probs)] = np.arange(len(class_probs))
    mu = rng.normal(scale=2.0, size=(len(class_probs), p))
    sd = rng.uniform(0.5, 2.0, size=(len(class_probs), p))
    X = (mu[y] + sd[y] * rng.normal(size=(n, p))) * 10.0 ** np.arange(p)
    return X, np.asarray(labels)[y]


def _categorical_data(seed, n=80, n_states=(3, 4, 2), class_probs=(0.6, 0.3, 0.1)):
    codes, _, y, w = ref.random_mixed(
        seed,
        n=n,
        n_states=n_states,
        n_continuous=0,
        n_classes=len(class_probs),
        class_probs=class_probs,
    )
    for i, m in enumerate(n_states):  # every state occurs (CategoricalNB infers M_i = max + 1)
        codes[len(class_probs) : len(class_probs) + m, i] = np.arange(m)
    return codes.astype(np.int64), y, w


def _mixed_table(seed, n=60, missing=0.0):
    """Float table with discrete columns at user positions 1 and 3 (interleaved with continuous)."""
    codes, values, y, w = ref.random_mixed(
        seed, n=n, n_states=(3, 4), n_continuous=2, n_classes=C, missing=missing
    )
    X = np.empty((n, 4))
    X[:, [1, 3]] = codes
    X[:, [0, 2]] = values
    return X, codes, values, y, w


DISCRETE = [1, 3]
USER_TO_INTERNAL = np.array([2, 0, 3, 1])  # user column -> internal index [discrete, continuous]


# ------------------------------------------------------------------------------------------------
# scikit-learn where the model is the same


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("weighted", [False, True])
def test_gaussian_matches_sklearn_gaussiannb(seed, weighted):
    naive_bayes = pytest.importorskip("sklearn.naive_bayes")
    X, y = _gaussian_data(seed)
    Xt, _ = _gaussian_data(seed + 100, n=25)
    w = np.random.default_rng(seed).uniform(0.1, 3.0, len(y)) if weighted else None
    ours = NaiveBayes(var_smoothing=0.0).fit(X, y, sample_weight=w)
    theirs = naive_bayes.GaussianNB(var_smoothing=0.0).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    np.testing.assert_allclose(
        ours.predict_log_proba(Xt), theirs.predict_log_proba(Xt), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(ours.predict_proba(Xt), theirs.predict_proba(Xt), atol=1e-8)
    np.testing.assert_allclose(np.asarray(ours.params_.mean), theirs.theta_, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(ours.params_.std) ** 2, theirs.var_, rtol=1e-9)
    np.testing.assert_allclose(ours.class_log_prior_, np.log(theirs.class_prior_), rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(Xt), theirs.predict(Xt))


@pytest.mark.parametrize("alpha", [0.3, 1.0, 2.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_discrete_matches_sklearn_categoricalnb(alpha, weighted):
    naive_bayes = pytest.importorskip("sklearn.naive_bayes")
    X, y, w = _categorical_data(int(alpha * 10))
    w = w if weighted else None
    Xt, _, _ = _categorical_data(99, n=25)
    ours = NaiveBayes(alpha=alpha).fit(X, y, sample_weight=w)
    theirs = naive_bayes.CategoricalNB(alpha=alpha, force_alpha=True).fit(X, y, sample_weight=w)
    assert ours.n_states_ == (3, 4, 2)
    np.testing.assert_allclose(
        ours.predict_log_proba(Xt), theirs.predict_log_proba(Xt), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(
        ours.predict_log_proba(Xt), theirs.predict_log_proba(Xt), rtol=1e-10, atol=1e-10
    )
    cpt = np.asarray(ours.params_.cpt)
    off = ref.offsets(ours.n_states_)
    for i, logp in enumerate(theirs.feature_log_prob_):  # sklearn: (c, M_i)
        np.testing.assert_allclose(np.log(cpt[off[i] : off[i] + logp.shape[1]]).T, logp, rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# Mixed data against the loop reference


@pytest.mark.parametrize("weighted", [False, True])
def test_mixed_matches_reference(weighted):
    X, codes, values, y, w = _mixed_table(0)
    Xt, ct, vt, _, _ = _mixed_table(1, n=20)
    w = w if weighted else None
    m = NaiveBayes(discrete=DISCRETE, alpha=0.5, var_smoothing=0.01).fit(X, y, sample_weight=w)
    assert m.n_states_ == (3, 4)
    params = ref.fit_mle(codes, values, y, (3, 4), C, w, 0.5, 0.01)
    np.testing.assert_allclose(
        m.predict_log_proba(Xt), ref.log_posterior(params, ct, vt, (3, 4)), rtol=1e-10, atol=1e-10
    )
    np.testing.assert_allclose(
        m.decision_function(Xt), ref.log_joint(params, ct, vt, (3, 4)), rtol=1e-10, atol=1e-9
    )
    # explain: exact per-predictor terms in the user's column order
    L = ref.log_contributions(params, ct, vt, (3, 4))
    np.testing.assert_allclose(m.explain(Xt), L[:, USER_TO_INTERNAL], rtol=1e-10, atol=1e-10)


def test_object_table_with_auto_columns_equals_float_table_with_mask():
    X, codes, values, y, w = _mixed_table(2)
    obj = np.empty(X.shape, dtype=object)
    for j in range(4):
        obj[:, j] = [int(v) for v in X[:, j]] if j in DISCRETE else [float(v) for v in X[:, j]]
    a = NaiveBayes().fit(obj, y)
    b = NaiveBayes(discrete=np.array([False, True, False, True])).fit(X, y)
    np.testing.assert_array_equal(a.encoder_.discrete_idx_, DISCRETE)
    np.testing.assert_allclose(
        a.predict_log_proba(obj), b.predict_log_proba(X), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        b.predict_log_proba(X),
        ref.predict_log_proba((codes, values, y), (codes, values), (3, 4), C),
        rtol=1e-10,
        atol=1e-10,
    )


def test_string_labels_and_string_categories():
    n = 60
    codes, values, yi, _ = ref.random_mixed(3, n=n, n_states=(3, 2), n_continuous=1, n_classes=C)
    names = [np.array(["red", "green", "blue"]), np.array(["no", "yes"])]
    X = np.empty((n, 3), dtype=object)
    X[:, 0] = names[0][codes[:, 0]]
    X[:, 1] = values[:, 0]
    X[:, 2] = names[1][codes[:, 1]]
    labels = np.array(["spam", "ham", "eggs"], dtype=object)
    y = labels[yi]
    m = NaiveBayes().fit(X, y)
    np.testing.assert_array_equal(m.classes_, np.unique(y))
    np.testing.assert_array_equal(m.classes_, ["eggs", "ham", "spam"])
    np.testing.assert_array_equal(m.encoder_.categories_[0], ["blue", "green", "red"])
    # reference with sorted label encodings
    enc = [
        np.searchsorted(np.sort(nm), X[:, j].astype(str))
        for nm, j in zip(names, (0, 2), strict=True)
    ]
    c_ref = np.stack(enc, 1)
    y_ref = np.searchsorted(m.classes_.astype(str), y.astype(str)).astype(np.int32)
    want = ref.predict_log_proba((c_ref, values, y_ref), (c_ref, values), (3, 2), C)
    np.testing.assert_allclose(m.predict_log_proba(X), want, rtol=1e-10, atol=1e-10)
    pred = m.predict(X)
    np.testing.assert_array_equal(pred, m.classes_[want.argmax(1)])
    assert pred.dtype == object and set(pred) <= set(labels)


# ------------------------------------------------------------------------------------------------
# partial_fit


def _chunks(n, k=10):
    return np.array_split(np.arange(n), k)


def _partial(model, X, y, w=None):
    classes = np.unique(y)
    for idx in _chunks(len(y)):
        model.partial_fit(
            X[idx], y[idx], classes=classes, sample_weight=None if w is None else w[idx]
        )
    return model


def test_partial_fit_gaussian_equals_fit():
    X, y = _gaussian_data(5, n=100)
    w = np.random.default_rng(5).uniform(0.2, 2.0, len(y))
    full = NaiveBayes().fit(X, y, sample_weight=w)
    part = _partial(NaiveBayes(), X, y, w)
    np.testing.assert_allclose(part.predict_proba(X), full.predict_proba(X), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        part.predict_log_proba(X), full.predict_log_proba(X), rtol=1e-9, atol=1e-9
    )
    np.testing.assert_allclose(
        np.asarray(part.params_.std), np.asarray(full.params_.std), rtol=1e-10
    )


def test_partial_fit_discrete_with_late_category_equals_fit():
    X, y, w = _categorical_data(6, n=100)
    X[X[:, 1] == 3, 1] = 2
    late = np.arange(70, 80)  # chunk 7 only: code 3 in column 1 first seen there
    X[late[::3], 1] = 3
    full = NaiveBayes(alpha=0.5).fit(X, y, sample_weight=w)
    part = NaiveBayes(alpha=0.5)
    part.partial_fit(X[:10], y[:10], classes=np.unique(y), sample_weight=w[:10])
    assert part.n_states_[1] == 3
    for idx in _chunks(100)[1:]:
        part.partial_fit(X[idx], y[idx], sample_weight=w[idx])
    assert part.n_states_ == full.n_states_ == (3, 4, 2)
    np.testing.assert_allclose(part.predict_proba(X), full.predict_proba(X), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(part.params_.cpt), np.asarray(full.params_.cpt), rtol=1e-12
    )


def test_partial_fit_mixed_with_late_string_category_equals_fit():
    X, codes, values, y, w = _mixed_table(7, n=100)
    obj = X.astype(object)
    obj[:, 1] = np.array(["a", "b", "c"], dtype=object)[codes[:, 0]]
    obj[:, 3] = [int(v) for v in codes[:, 1]]
    obj[:, 0] = [float(v) for v in values[:, 0]]
    obj[:, 2] = [float(v) for v in values[:, 1]]
    obj[obj[:, 1] == "zz", 1] = "a"
    obj[[81, 85], 1] = "zz"  # a label first seen in chunk 8
    full = NaiveBayes().fit(obj, y)
    part = _partial(NaiveBayes(), obj, y)
    assert full.n_states_ == part.n_states_ == (4, 4)
    assert list(part.encoder_.categories_[0]) == ["a", "b", "c", "zz"]
    np.testing.assert_allclose(
        part.predict_proba(obj), full.predict_proba(obj), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(
        part.predict_log_proba(obj), full.predict_log_proba(obj), rtol=1e-9, atol=1e-9
    )


# ------------------------------------------------------------------------------------------------
# Explanations and importances


def test_explain_plus_log_prior_equals_decision_function():
    X, _, _, y, w = _mixed_table(8, missing=0.1)
    m = NaiveBayes(discrete=DISCRETE, missing="ignore").fit(X, y, sample_weight=w)
    E = m.explain(X)
    assert E.shape == (len(y), 4, C)
    np.testing.assert_allclose(
        E.sum(1) + m.class_log_prior_, m.decision_function(X), rtol=1e-9, atol=1e-8
    )
    np.testing.assert_array_equal(E[np.isnan(X)], 0.0)  # missing terms are dropped


def _importance_data(seed=9, n=60):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 4))
    X[:, 2] += 4.0 * y  # the informative predictor
    X[:, 1] = rng.integers(0, 3, n)  # an irrelevant discrete predictor
    return X, y


def test_feature_importances_sum_to_one_and_find_the_informative_predictor():
    X, y = _importance_data()
    m = NaiveBayes(discrete=[1]).fit(X, y)
    imp = m.feature_importances_
    assert imp.shape == (4,)
    np.testing.assert_allclose(imp.sum(), 1.0, rtol=1e-12)
    assert (imp >= 0).all()
    assert np.argmax(imp) == 2 and imp[2] > 0.5


@pytest.mark.parametrize("removed", [1, 2])
def test_feature_importance_is_zero_for_a_removed_predictor(removed):
    X, y = _importance_data()
    m = NaiveBayes(discrete=[1]).fit(X, y)
    internal = {1: 0, 0: 1, 2: 2, 3: 3}[removed]
    alpha = np.ones(4)
    alpha[internal] = 0.0
    o0 = nb.fit_marginal(m.stats_, m.alpha, m.var_smoothing)
    m.params_ = nb.interpolate(m.params_, o0, jnp.asarray(alpha))
    imp = m.feature_importances_
    assert imp[removed] == 0.0
    np.testing.assert_allclose(imp.sum(), 1.0, rtol=1e-12)
    assert (np.delete(imp, removed) > 0).all()
    # the removed predictor's explanation is the same for every class
    E = m.explain(X)
    np.testing.assert_array_equal(E[:, removed, 1], E[:, removed, 0])


# ------------------------------------------------------------------------------------------------
# Missing values: exact marginalization


def test_missing_ignore_matches_reference():
    X, codes, values, y, w = _mixed_table(10, missing=0.15)
    X[np.flatnonzero(codes[:, 0] < 0)[:2], 1] = np.nan  # NaN also marks a missing discrete value
    m = NaiveBayes(discrete=DISCRETE, missing="ignore", var_smoothing=0.01).fit(
        X, y, sample_weight=w
    )
    want = ref.predict_log_proba((codes, values, y), (codes, values), (3, 4), C, 1.0, 0.01, w)
    np.testing.assert_allclose(m.predict_log_proba(X), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("column", [0, 3])  # a continuous and a discrete column
def test_missing_value_equals_model_without_that_predictor(column):
    """A NaN (continuous) or -1 (discrete) in column j gives the posterior of a model fitted on the
    same data minus column j (NB parameters of other predictors and the prior do not change)."""
    X, codes, values, y, w = _mixed_table(11, missing=0.1)
    m = NaiveBayes(discrete=DISCRETE, missing="ignore").fit(X, y, sample_weight=w)
    rows = np.flatnonzero(np.isnan(X[:, column]) | (X[:, column] == -1))
    assert rows.size
    keep = [j for j in range(4) if j != column]
    m_without = NaiveBayes(
        discrete=[j for j in range(3) if keep[j] in DISCRETE], missing="ignore"
    ).fit(X[:, keep], y, sample_weight=w)
    np.testing.assert_allclose(
        m.predict_log_proba(X[rows]),
        m_without.predict_log_proba(X[rows][:, keep]),
        rtol=1e-10,
        atol=1e-10,
    )
    # at predict time too: blank out column j of every row
    Xb = X.copy()
    Xb[:, column] = -1.0 if column in DISCRETE else np.nan
    np.testing.assert_allclose(
        m.predict_log_proba(Xb), m_without.predict_log_proba(X[:, keep]), rtol=1e-10, atol=1e-10
    )


@pytest.mark.parametrize("kind", ["constant", "all_missing"])
def test_degenerate_continuous_column_drops_out(kind):
    """A continuous column that is constant (or never observed) in training carries no class
    information: it adds the same term to every class and drops out of the posterior.

    Regression guard: its pooled variance is 0, so a floor of var_smoothing × pooled variance alone
    would give σ = 0 and NaN log joints (0 × inf); `jaxnb.params.fit_mle` gives such a column unit
    variance in every class instead, which this test pins (finite, equal to NB without it).
    """
    X, _, _, y, _ = _mixed_table(12)
    X[:, 2] = 3.0 if kind == "constant" else np.nan
    m = NaiveBayes(discrete=DISCRETE, missing="ignore").fit(X, y)
    keep = [0, 1, 3]
    without = NaiveBayes(discrete=[1, 2], missing="ignore").fit(X[:, keep], y)
    got = m.predict_log_proba(X)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, without.predict_log_proba(X[:, keep]), rtol=1e-8, atol=1e-8)


def test_float32_estimator_keeps_dtype_and_agrees_with_float64():
    X, _, _, y, w = _mixed_table(13, missing=0.1)
    m64 = NaiveBayes(discrete=DISCRETE, missing="ignore").fit(X, y, sample_weight=w)
    with jax.enable_x64(False):
        m32 = NaiveBayes(discrete=DISCRETE, missing="ignore").fit(X, y, sample_weight=w)
        proba32 = m32.predict_proba(X)
        explain32 = m32.explain(X)
    assert m32.params_.std.dtype == np.float32 and m32.params_.cpt.dtype == np.float32
    assert proba32.dtype == np.float32 and explain32.dtype == np.float32
    np.testing.assert_allclose(proba32, m64.predict_proba(X), atol=1e-5)
    np.testing.assert_allclose(explain32, m64.explain(X), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------------------------
# scikit-learn protocol


def test_get_params_and_set_params():
    m = NaiveBayes(alpha=0.5, discrete=[1])
    params = m.get_params()
    assert params == {
        "discrete": [1],
        "n_states": None,
        "alpha": 0.5,
        "var_smoothing": 1e-9,
        "priors": None,
        "missing": "error",
        "unseen": "error",
        "block_size": None,
        "mesh": None,
    }
    X, y = _importance_data()
    before = m.fit(X, y).predict_log_proba(X)
    assert m.set_params(alpha=5.0) is m and m.alpha == 5.0
    after = m.fit(X, y).predict_log_proba(X)
    assert np.abs(after - before).max() > 1e-3  # alpha really reached the fit
    with pytest.raises(ValueError, match="invalid parameter 'bogus'"):
        m.set_params(bogus=1)
    assert repr(NaiveBayes(alpha=0.5)) == "NaiveBayes(alpha=0.5)"


def test_sklearn_clone_and_cross_val_score():
    base = pytest.importorskip("sklearn.base")
    model_selection = pytest.importorskip("sklearn.model_selection")
    X, y = _importance_data()
    m = NaiveBayes(discrete=[1], alpha=2.0).fit(X, y)
    c = base.clone(m)
    assert c.get_params() == m.get_params() and not hasattr(c, "classes_")
    assert base.is_classifier(c)
    scores = model_selection.cross_val_score(NaiveBayes(discrete=[1]), X, y, cv=3)
    want = []
    for tr, te in model_selection.StratifiedKFold(3).split(X, y):
        want.append(NaiveBayes(discrete=[1]).fit(X[tr], y[tr]).score(X[te], y[te]))
    np.testing.assert_allclose(scores, want, rtol=1e-15)
    assert scores.mean() > 0.8


def test_score_is_weighted_accuracy():
    X, y = _importance_data()
    m = NaiveBayes(discrete=[1]).fit(X, y)
    pred = m.predict(X)
    w = np.random.default_rng(0).uniform(0.1, 2.0, len(y))
    assert m.score(X, y) == pytest.approx(np.mean(pred == y), rel=1e-15)
    assert m.score(X, y, sample_weight=w) == pytest.approx(
        np.average(pred == y, weights=w), rel=1e-12
    )
    y_flipped = 1 - y
    assert m.score(X, y_flipped) == pytest.approx(1.0 - np.mean(pred == y), rel=1e-12)


def test_fit_from_stats_equals_fit_and_checks_classes():
    rng = np.random.default_rng(5)
    X = np.c_[rng.integers(0, 3, (200, 2)), rng.normal(size=(200, 3))]
    y = rng.integers(0, 3, 200)
    m = nb.NaiveBayes(discrete=[0, 1]).fit(X, y)
    m2 = nb.NaiveBayes(discrete=[0, 1]).fit_from_stats(m.stats_, m.classes_, m.encoder_)
    np.testing.assert_allclose(m2.predict_log_proba(X), m.predict_log_proba(X), rtol=1e-12)
    with pytest.raises(ValueError, match="classes must have 3 entries"):
        nb.NaiveBayes().fit_from_stats(m.stats_, m.classes_[:2], m.encoder_)
