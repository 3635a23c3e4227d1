"""Eager validation at the estimator boundary: every bad input raises before any jit, with a message
that names the argument (or column) and the fix."""

import numpy as np
import pytest
from fake_frame import Frame

from jaxnb import NaiveBayes


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 3)) + y[:, None]
    return X, y


def _codes(n=30, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.integers(0, 3, size=(n, 2))
    X[:3, 0] = [0, 1, 2]
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    return NaiveBayes().fit(X, y)


# ------------------------------------------------------------------------------------------------
# Shapes and lengths


def test_mismatched_lengths():
    X, y = _data()
    with pytest.raises(
        ValueError, match="X and y have mismatched lengths: X has 30 samples, y has 29"
    ):
        NaiveBayes().fit(X, y[:-1])


def test_mismatched_lengths_in_partial_fit_and_score(fitted):
    X, y = _data()
    with pytest.raises(ValueError, match="X and y have mismatched lengths"):
        NaiveBayes().partial_fit(X, y[:-1], classes=[0, 1])
    with pytest.raises(ValueError, match="X and y have mismatched lengths"):
        fitted.score(X, y[:-1])


def test_empty_data_set():
    with pytest.raises(ValueError, match=r"X is empty \(0 samples\)"):
        NaiveBayes().fit(np.empty((0, 3)), np.empty(0))
    with pytest.raises(ValueError, match=r"X has 0 feature\(s\) \(shape=\(\d+, 0\)\)"):
        NaiveBayes().fit(np.empty((5, 0)), np.arange(5) % 2)


def test_one_dimensional_X():
    X, y = _data()
    with pytest.raises(ValueError, match=r"X must be 2-D .* got 1-D .*X.reshape\(-1, 1\)"):
        NaiveBayes().fit(X[:, 0], y)


def test_three_dimensional_X():
    X, y = _data()
    with pytest.raises(ValueError, match=r"X must be 2-D .* got 3-D array of shape \(30, 3, 1\)"):
        NaiveBayes().fit(X[:, :, None], y)


def test_two_dimensional_y():
    X, y = _data()
    with pytest.raises(ValueError, match=r"y must be 1-D \(n_samples,\); got shape \(30, 2\)"):
        NaiveBayes().fit(X, np.stack([y, y], 1))


def test_single_class():
    X, _ = _data()
    with pytest.raises(
        ValueError, match=r"y has only one class \(\w+\); a classifier needs at least two"
    ):
        NaiveBayes().fit(X, np.zeros(len(X), int))
    # scikit-learn's wording ("one class"), which its single-sample check looks for
    with pytest.raises(ValueError, match=r"y has only one class \(0\); partial_fit needs"):
        NaiveBayes().partial_fit(X, np.zeros(len(X), int))
    with pytest.raises(ValueError, match=r"classes has only one class \('a'\)"):
        NaiveBayes().partial_fit(X, np.zeros(len(X), int), classes=["a"])


def test_missing_label():
    X, y = _data()
    y = y.astype(float)
    y[3] = np.nan
    with pytest.raises(ValueError, match="y contains NaN or inf"):
        NaiveBayes().fit(X, y)


# ------------------------------------------------------------------------------------------------
# Values of continuous and discrete predictors


def test_nan_in_continuous_predictor():
    X, y = _data()
    X[4, 1] = np.nan
    with pytest.raises(ValueError, match="continuous column 1 contains NaN; pass missing='ignore'"):
        NaiveBayes().fit(X, y)


def test_inf_in_continuous_predictor():
    X, y = _data()
    X[4, 2] = -np.inf
    with pytest.raises(ValueError, match="continuous column 2 contains inf"):
        NaiveBayes().fit(X, y)
    with pytest.raises(ValueError, match="continuous column 2 contains inf"):
        NaiveBayes(missing="ignore").fit(X, y)  # inf is never a missing value


def test_nan_at_predict_time(fitted):
    X, _ = _data()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="continuous column 0 contains NaN"):
        fitted.predict(X)


def test_negative_discrete_code():
    X, y = _codes()
    X[5, 1] = -2
    with pytest.raises(ValueError, match="discrete column 1 has negative code -2"):
        NaiveBayes().fit(X, y)
    # under discrete='auto' the integer column may be a quantity: the error says how to mark it
    hint = r"discrete='auto' takes integer columns as category codes: if column 1 is a quantity"
    with pytest.raises(ValueError, match=hint):
        NaiveBayes().fit(X, y)
    with pytest.raises(ValueError, match=r"negative code -2; codes must.* as -1\)$"):
        NaiveBayes(discrete=[0, 1]).fit(X, y)  # declared discrete: no such hint
    X[5, 1] = -1  # -1 is a missing value only with missing="ignore"
    with pytest.raises(ValueError, match=r"negative code -1.*missing='ignore'"):
        NaiveBayes().fit(X, y)
    with pytest.raises(ValueError, match="discrete column 1 has negative code -2"):
        X[6, 1] = -2
        NaiveBayes(missing="ignore").fit(X, y)
    # an estimator without the option says -1 cannot be a missing value for it
    from jaxnb import TAN

    X[6, 1] = 1
    with pytest.raises(ValueError, match=r"code -1.*impute them \(this estimator has no missing="):
        TAN().fit(X, y)


def test_discrete_code_out_of_range_with_n_states():
    X, y = _codes()
    X[7, 0] = 5
    with pytest.raises(ValueError, match=r"column 0 has code 5 but n_states\[0\]=3"):
        NaiveBayes(n_states=[3, 3]).fit(X, y)


def test_discrete_floats_with_fractions():
    X, y = _data()
    X[:, 0] = np.round(X[:, 0])
    X[2, 0] = 1.5
    with pytest.raises(ValueError, match=r"discrete column 0 holds fractional values \(e.g. 1.5\)"):
        NaiveBayes(discrete=[0]).fit(X, y)


def test_non_numeric_column_marked_continuous():
    X = np.array([["a", 1.0], ["b", 2.0], ["a", 0.5], ["b", 1.5]], dtype=object)
    with pytest.raises(
        ValueError, match="column 0 holds non-numeric values but is marked continuous"
    ):
        NaiveBayes(discrete="none").fit(X, [0, 1, 0, 1])


# ------------------------------------------------------------------------------------------------
# Unseen categories at predict time


def _strings(seed=0, n=30):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = np.empty((n, 3), dtype=object)
    X[:, 0] = np.array(["red", "green", "blue"])[rng.integers(0, 3, n)]
    X[:, 1] = rng.normal(size=n) + y
    X[:, 2] = np.array(["s", "m", "l"])[(rng.integers(0, 2, n) + y)]
    return X, y


def test_unseen_category_raises_by_default():
    X, y = _strings()
    m = NaiveBayes().fit(X, y)
    Xt = X[:4].copy()
    Xt[1, 0] = "purple"
    with pytest.raises(
        ValueError,
        match="column 0 has a category never seen in training "
        r"\('purple'\); pass unseen='ignore'",
    ):
        m.predict_proba(Xt)


def test_unseen_category_ignored_drops_the_term():
    X, y = _strings()
    m = NaiveBayes(unseen="ignore").fit(X, y)
    Xt = X[:4].copy()
    Xt[[1, 3], 0] = "purple"
    without = NaiveBayes().fit(X[:, 1:], y)
    got = m.predict_log_proba(Xt)
    np.testing.assert_allclose(
        got[[1, 3]], without.predict_log_proba(Xt[[1, 3], 1:]), rtol=1e-10, atol=1e-10
    )
    np.testing.assert_allclose(got[[0, 2]], m.predict_log_proba(X[[0, 2]]), rtol=1e-12)
    assert np.abs(got[[1, 3]] - m.predict_log_proba(X[[1, 3]])).max() > 1e-6
    np.testing.assert_array_equal(m.explain(Xt)[[1, 3], 0], 0.0)


def test_unseen_numeric_code_ignored_drops_the_term():
    X, y = _codes()
    m = NaiveBayes(unseen="ignore").fit(X, y)
    Xt = X[:3].copy()
    Xt[0, 0] = 7
    without = NaiveBayes().fit(X[:, 1:], y)
    np.testing.assert_allclose(
        m.predict_log_proba(Xt)[0], without.predict_log_proba(Xt[:1, 1:])[0], rtol=1e-10, atol=1e-10
    )
    with pytest.raises(ValueError, match=r"column 0 has a category never seen in training \(7\)"):
        NaiveBayes().fit(X, y).predict(Xt)


# ------------------------------------------------------------------------------------------------
# Hyper-parameters


@pytest.mark.parametrize("alpha", [-0.1, np.nan, "one", [1.0, 2.0]])
def test_bad_alpha(alpha):
    X, y = _data()
    with pytest.raises(ValueError, match="alpha must be a finite number >= 0; got alpha="):
        NaiveBayes(alpha=alpha).fit(X, y)


@pytest.mark.parametrize("var_smoothing", [-1e-9, np.inf, "tiny"])
def test_bad_var_smoothing(var_smoothing):
    X, y = _data()
    with pytest.raises(ValueError, match="var_smoothing must be a finite number >= 0"):
        NaiveBayes(var_smoothing=var_smoothing).fit(X, y)


def test_bad_discrete_spec():
    X, y = _data()
    with pytest.raises(ValueError, match="discrete must be 'auto', 'all', 'none'"):
        NaiveBayes(discrete="some").fit(X, y)
    with pytest.raises(ValueError, match=r"discrete indices must lie in \[0, 3\); got \[5\]"):
        NaiveBayes(discrete=[5]).fit(X, y)
    with pytest.raises(ValueError, match="discrete mask must have length n_features=3"):
        NaiveBayes(discrete=[True, False]).fit(X, y)
    with pytest.raises(TypeError, match="discrete must be a boolean mask or a 1-D list of integer"):
        NaiveBayes(discrete=[0.5]).fit(X, y)


def test_bad_n_states():
    X, y = _codes()
    with pytest.raises(ValueError, match="n_states has 1 entries but there are 2 discrete columns"):
        NaiveBayes(n_states=[3]).fit(X, y)
    with pytest.raises(ValueError, match="n_states entries must be positive integers; got 0"):
        NaiveBayes(n_states=[3, 0]).fit(X, y)


def test_bad_missing_and_unseen_options():
    X, y = _data()
    with pytest.raises(ValueError, match="missing must be 'error' or 'ignore'; got 'drop'"):
        NaiveBayes(missing="drop").fit(X, y)
    with pytest.raises(ValueError, match="unseen must be 'error' or 'ignore'; got 'skip'"):
        NaiveBayes(unseen="skip").fit(X, y)


@pytest.mark.parametrize(
    "priors,match",
    [
        ([0.5, 0.3, 0.2], r"priors must have one entry per class \(2\); got shape \(3,\)"),
        ([0.7, 0.7], "priors must be positive and sum to 1"),
        ([1.2, -0.2], "priors must be positive and sum to 1"),
    ],
)
def test_bad_priors(priors, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        NaiveBayes(priors=priors).fit(X, y)


def test_good_priors_are_used():
    X, y = _data()
    m = NaiveBayes(priors=[0.25, 0.75]).fit(X, y)
    np.testing.assert_allclose(m.class_log_prior_, np.log([0.25, 0.75]), rtol=1e-12)


def test_bad_block_size():
    X, y = _data()
    with pytest.raises(ValueError, match="block_size must be None or a positive int; got 0"):
        NaiveBayes(block_size=0).fit(X, y)


# ------------------------------------------------------------------------------------------------
# Sample weights


def test_sample_weight_wrong_shape():
    X, y = _data()
    with pytest.raises(
        ValueError,
        match=r"sample_weight must have shape \(30,\) to match X; got "
        r"\(29,\)",
    ):
        NaiveBayes().fit(X, y, sample_weight=np.ones(29))
    with pytest.raises(ValueError, match=r"sample_weight must have shape \(30,\)"):
        NaiveBayes().fit(X, y, sample_weight=np.ones((30, 1)))


def test_sample_weight_negative_or_degenerate():
    X, y = _data()
    w = np.ones(30)
    w[3] = -1.0
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        NaiveBayes().fit(X, y, sample_weight=w)
    with pytest.raises(
        ValueError, match=r"sample_weight is zero for every sample \(it sums to 0\)"
    ):
        NaiveBayes().fit(X, y, sample_weight=np.zeros(30))
    w[3] = np.nan
    with pytest.raises(ValueError, match="sample_weight contains NaN or inf"):
        NaiveBayes().fit(X, y, sample_weight=w)


# ------------------------------------------------------------------------------------------------
# Fitted state


@pytest.mark.parametrize(
    "method",
    [
        "predict",
        "predict_proba",
        "predict_log_proba",
        "predict_joint_log_proba",
        "decision_function",
        "explain",
    ],
)
def test_predict_before_fit(method):
    X, _ = _data()
    with pytest.raises(ValueError, match="this NaiveBayes is not fitted yet; call fit first"):
        getattr(NaiveBayes(), method)(X)


def test_unfitted_models_raise_not_fitted_error_which_hasattr_reads_as_missing():
    """`jaxnb.NotFittedError` is a ValueError and an AttributeError (as scikit-learn's): before,
    ``hasattr(NaiveBayes(), "feature_importances_")`` raised a ValueError instead of being False,
    so duck-typed checks (``getattr(model, "feature_importances_", None)``) failed."""
    import jaxnb

    assert issubclass(jaxnb.NotFittedError, ValueError)
    assert issubclass(jaxnb.NotFittedError, AttributeError)
    X, y = _data()
    for est in (NaiveBayes(), jaxnb.OnlineNB(), jaxnb.AveragedNB()):
        with pytest.raises(jaxnb.NotFittedError, match="not fitted yet"):
            est.predict(X)
    assert not hasattr(NaiveBayes(), "feature_importances_")
    assert getattr(NaiveBayes(), "feature_importances_", None) is None
    assert hasattr(NaiveBayes().fit(X, y), "feature_importances_")


def test_feature_importances_before_fit():
    with pytest.raises(ValueError, match="not fitted yet"):
        _ = NaiveBayes().feature_importances_


def test_wrong_number_of_features_at_predict(fitted):
    X, _ = _data()
    # scikit-learn's wording, which its n_features_in_ check (and its users) look for
    with pytest.raises(
        ValueError, match="X has 2 features, but NaiveBayes is expecting 3 features"
    ):
        fitted.predict(X[:, :2])
    with pytest.raises(ValueError, match="X has 4 features, but NaiveBayes is expecting 3"):
        fitted.predict_proba(np.hstack([X, X[:, :1]]))
    with pytest.raises(ValueError, match="X has 2 features, but NaiveBayes is expecting 3"):
        fitted.partial_fit(X[:, :2], np.arange(len(X)) % 2)


def test_partial_fit_label_not_in_classes():
    X, y = _data()
    m = NaiveBayes().partial_fit(X[:10], y[:10], classes=[0, 1])
    with pytest.raises(ValueError, match="y contains the label 2 not in classes_"):
        m.partial_fit(X[10:12], np.array([0, 2]))
    with pytest.raises(ValueError, match="classes differ from the first partial_fit call"):
        m.partial_fit(X[10:12], y[10:12], classes=[0, 1, 2])


@pytest.mark.parametrize("model", ["NaiveBayes", "OnlineNB"])
def test_partial_fit_checks_later_labels_as_the_first(model):
    """A later partial_fit batch's y gets the checks of the first (NaiveBayes took complex labels
    whose real part matched a class, and called NaN or 0.5 a label missing from classes_), and
    both estimators word the errors alike, listing classes_."""
    import jaxnb

    X, y = _data()
    m = getattr(jaxnb, model)().partial_fit(X[:10], y[:10] * 1.0, classes=[0.0, 1.0])
    before = m.predict_proba(X[:3])
    cases = [
        (y[10:12] + 0j, "Complex data not supported: y holds complex numbers"),
        (np.array([0.0, np.nan]), "y contains NaN or inf; every sample needs a class label"),
        (np.array([0.0, 0.5]), r"y holds non-integer floats \(e.g. 0.5\)"),
        (np.array([0, 2]), r"y contains the label 2 not in classes_ \[0.0, 1.0\]"),
        (np.array([0, 1, 1]), "mismatched lengths"),
    ]
    for bad, msg in cases:
        with pytest.raises(ValueError, match=msg):
            m.partial_fit(X[10:12], bad)
    with pytest.raises(
        ValueError, match=r"classes differ .*: got \[0, 1, 2\], the model has \[0.0, 1.0\]"
    ):
        m.partial_fit(X[10:12], y[10:12], classes=[0, 1, 2])
    np.testing.assert_array_equal(m.predict_proba(X[:3]), before)  # nothing was learnt
    # the same labels as ints, bools or in another order of classes are fine
    m.partial_fit(X[10:12], y[10:12].astype(bool), classes=[1, 0])
    # the first call's y is checked against its classes the same way
    with pytest.raises(ValueError, match="Complex data not supported"):
        getattr(jaxnb, model)().partial_fit(X[:10], y[:10] + 0j, classes=[0, 1])


class NAType:  # stands in for pandas.NA (pandas is optional): recognized by its type name
    def __bool__(self):
        raise TypeError("boolean value of NA is ambiguous")


def test_pandas_na_is_a_missing_value_in_x_and_y():
    from jaxnb.data import encode_labels

    na = NAType()
    X = np.array([["a"], ["b"], [na], ["a"]] * 10, dtype=object)
    y = np.array([0, 1] * 20)
    with pytest.raises(ValueError, match="missing"):
        NaiveBayes().fit(X, y)
    m = NaiveBayes(missing="ignore").fit(X, y)
    assert m.encoder_.categories_[0].tolist() == ["a", "b"]
    prior = np.exp(np.asarray(m.params_.log_prior))
    np.testing.assert_allclose(m.predict_proba(X[2:3])[0], prior, rtol=1e-6)
    with pytest.raises(ValueError, match="None/NaN"):
        encode_labels(np.array(["a", "b", na], dtype=object))


def test_encoder_edges_label_growth_uint64_and_unseen_advice():
    from jaxnb.data import encode_labels

    X1, X2 = np.array([["a"], ["b"]], dtype=object), np.array([["c"], ["d"]], dtype=object)
    m = NaiveBayes(n_states=[2]).partial_fit(X1, [0, 1], classes=[0, 1])
    with pytest.raises(ValueError, match=r"n_states\[0\]=2"):
        m.partial_fit(X2, [0, 1])  # grew a label column past the declared states before
    big = np.array([2**63 + 6, 2**63 + 5, 2**63 + 6], np.uint64)
    classes, codes = encode_labels(big)
    assert classes.tolist() == [2**63 + 5, 2**63 + 6] and codes.tolist() == [1, 0, 1]
    fitted = NaiveBayes().fit(np.array([["a"], ["b"]] * 3, dtype=object), [0, 1] * 3)
    with pytest.raises(ValueError, match="never seen") as err:
        fitted.predict(np.array([["z"]], dtype=object))
    assert "n_states" not in str(err.value) and "unseen='ignore'" in str(err.value)


def test_column_spread_outside_the_float_range_is_refused():
    import jax

    rng = np.random.default_rng(5)
    y = np.array([0, 1] * 20)
    X = rng.normal(size=(40, 2)) + 2 * y[:, None]
    with jax.enable_x64(False):
        for scale, word in ((1e-19, "underflow"), (1e19, "overflow")):
            with pytest.raises(ValueError, match=f"column 0 spans .* {word} in float32"):
                NaiveBayes().fit(X * scale, y)  # read as constant, or NaN std, before
    m = NaiveBayes().fit(X * 1e-19, y)  # float64 has the room
    assert m.predict_proba(X[:1] * 1e-19)[0, 0] > 0.99
    # var_smoothing=0 and a class with one row: refused at fit, not at every prediction
    with pytest.raises(ValueError, match="variance 0 on continuous column 0.*var_smoothing > 0"):
        NaiveBayes(var_smoothing=0.0).fit([[0.0], [1.0], [2.0], [5.0]], [0, 0, 0, 1])


def test_column_rounded_to_a_constant_in_float32_is_refused():
    """Values below float32's smallest subnormal (p-values of 1e-140, say) become 0: the column
    was read as constant and silently dropped (accuracy at the majority rate). Also through the
    column loop (object input), and in the online learners, which also refuse a batch whose
    spread underflows the float32 variances (they agreed with nothing before)."""
    import jax

    from jaxnb import OnlineNB, OnlineWeightedNB

    rng = np.random.default_rng(6)
    y = np.array([0, 1] * 20)
    X = (rng.normal(size=(40, 2)) + 2 * y[:, None]) * 1e-140
    X[:, 1] = 1.0  # a column that is constant in float64 too stays accepted
    msg = "continuous column 0 spans .*float32 rounds to a constant"
    with jax.enable_x64(False):
        for est in (NaiveBayes(), OnlineNB(), OnlineWeightedNB()):
            with pytest.raises(ValueError, match=msg):
                est.fit(X, y)
        with pytest.raises(ValueError, match=msg):
            NaiveBayes().fit(X.astype(object), y)
        with pytest.raises(ValueError, match="column 0 spans .* underflow in float32"):
            OnlineNB().partial_fit(X[:, :1] * 1e121, y, classes=[0, 1])  # spread ~1e-19
        assert NaiveBayes().fit(X[:, 1:], y).predict_proba(X[:2, 1:]).shape == (2, 2)
        # rows to predict are not training data: any spread is fine there
        online = OnlineNB().fit(np.c_[X[:, 0] * 1e140, X[:, 1]], y)
        close = np.array([[1e-30, 1.0], [2e-30, 1.0], [3e-30, 1.0]])
        assert online.predict_proba(close).shape == (3, 2)
    m = NaiveBayes().fit(X, y)  # float64 holds them
    Z = X.copy()
    Z[:, 0] *= 1e140
    np.testing.assert_allclose(m.predict_proba(X), NaiveBayes().fit(Z, y).predict_proba(Z))
    np.testing.assert_allclose(
        OnlineNB().fit(X, y).predict_proba(X), m.predict_proba(X), atol=1e-6, rtol=0
    )


def test_alpha_zero_gradient_is_finite_at_unused_zero_cells():
    import jax
    import jax.numpy as jnp

    from jaxnb.likelihood import log_posterior
    from jaxnb.methods.nb import fit_stats
    from jaxnb.params import fit_mle

    codes = np.array([[0], [0], [1], [1], [2]], np.int32)  # state 2 only in class 1
    y = np.array([0, 0, 1, 1, 1])
    values = np.zeros((5, 0))
    p0 = fit_mle(fit_stats(codes, values, y, n_states=(3,), n_classes=2), alpha=0.0)
    q = np.array([[0], [1]], np.int32)  # never hits the zero cell theta[2, class 0]

    def loss(p):
        return -jnp.sum(log_posterior(p, q, np.zeros((2, 0)))[jnp.arange(2), jnp.array([0, 1])])

    g = jax.grad(loss)(p0)
    assert np.isfinite(np.asarray(g.cpt)).all()


def test_dataframe_column_names_are_checked_at_predict():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 30)
    X = np.c_[y + rng.normal(size=60), rng.normal(size=60) * 3, -y + rng.normal(size=60)]
    m = NaiveBayes().fit(Frame(X, ["a", "b", "c"]), y)
    assert m.feature_names_in_.tolist() == ["a", "b", "c"]
    same = m.predict_proba(Frame(X, ["a", "b", "c"]))
    # an array is read by position, with the warning scikit-learn gives
    with pytest.warns(
        UserWarning, match=r"no column names.*\('a', 'b', 'c'\).*by position"
    ) as record:
        np.testing.assert_array_equal(same, m.predict_proba(X))
    assert record[0].filename == __file__  # located at the caller's line, not in the library
    with pytest.warns(UserWarning, match="no column names"):  # integer names are no names
        m.predict(Frame(X, [0, 1, 2]))
    with pytest.raises(ValueError, match=r"another order \(position 0: 'c', fitted 'a'\)"):
        m.predict(Frame(X[:, ::-1], ["c", "b", "a"]))  # was read silently as a, b, c
    with pytest.raises(ValueError, match=r"unknown columns \['d'\]; missing columns \['c'\]"):
        m.predict(Frame(X, ["a", "b", "d"]))
    with pytest.raises(ValueError, match=r"X\[model.feature_names_in_\]"):
        m.partial_fit(Frame(X, ["b", "a", "c"]), y)  # a later batch is checked too
    # integer column names are positions (as scikit-learn): no names, no check
    n = NaiveBayes().fit(Frame(X, [0, 1, 2]), y)
    assert not hasattr(n, "feature_names_in_")
    np.testing.assert_array_equal(n.predict(Frame(X, [2, 1, 0])), n.predict(X))
    # refitting on an array drops the names
    m.fit(X, y)
    assert not hasattr(m, "feature_names_in_")


def test_streaming_estimators_check_dataframe_column_names():
    from jaxnb.stream.anb import AveragedNB
    from jaxnb.stream.online import OnlineNB

    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 150)
    X = np.c_[y + rng.normal(size=300), rng.normal(size=300), -y + rng.normal(size=300)]
    for m in (AveragedNB(), OnlineNB()):
        m.fit(Frame(X, ["a", "b", "c"]), y)
        assert m.feature_names_in_.tolist() == ["a", "b", "c"]
        with pytest.warns(UserWarning, match="no column names"):
            np.testing.assert_array_equal(m.predict(Frame(X, ["a", "b", "c"])), m.predict(X))
        with pytest.raises(ValueError, match=r"another order \(position 0: 'c', fitted 'a'\)"):
            m.predict(Frame(X[:, ::-1], ["c", "b", "a"]))
    with pytest.raises(ValueError, match=r"missing columns \['c'\]"):
        m.partial_fit(Frame(X, ["a", "b", "d"]), y)  # OnlineNB: a later batch is checked
    m.fit(X, y)  # a fresh fit on an array forgets the names
    assert not hasattr(m, "feature_names_in_")
    m.partial_fit(Frame(X, ["c", "b", "a"]), y)  # nothing to check against


def test_pandas_columns_are_classified_by_their_dtype():
    """A nullable Int64 / boolean column with a missing value converts to float NaN or objects,
    so its values alone made it a Gaussian or a set of labels; its dtype says integer codes. An
    object column of numbers is continuous, as it is in an object array (it was label-encoded,
    one state per distinct value)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    n = 120
    y = rng.integers(0, 2, n)
    codes = np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n))
    flags = rng.random(n) < 0.3 + 0.4 * y
    real = y + rng.normal(size=n)
    df = pd.DataFrame(
        {
            "i": pd.array(codes, dtype="Int64"),
            "b": pd.array(flags, dtype="boolean"),
            "f": pd.array(real, dtype="Float64"),
            "o": pd.Series(list(real[::-1]), dtype=object),
            "s": pd.Series(np.where(y == 1, "u", "v"), dtype=object),
        }
    )
    df.loc[3, ["i", "b", "f", "o", "s"]] = [pd.NA, pd.NA, pd.NA, None, None]
    m = NaiveBayes(missing="ignore").fit(df, y)
    assert m.encoder_.discrete_idx_.tolist() == [0, 1, 4]
    assert m.encoder_.continuous_idx_.tolist() == [2, 3]
    assert m.encoder_.n_states_ == [3, 2, 2]
    # the same model from a float array with the kinds given explicitly
    X = np.c_[
        np.where(np.arange(n) == 3, np.nan, codes),
        np.where(np.arange(n) == 3, np.nan, flags),
        np.where(np.arange(n) == 3, np.nan, real),
        np.where(np.arange(n) == 3, np.nan, real[::-1]),
        np.where(np.arange(n) == 3, np.nan, 1 - y),  # the codes of the labels "u" < "v"
    ]
    ref = NaiveBayes(missing="ignore", discrete=[0, 1, 4]).fit(X, y)
    np.testing.assert_allclose(
        m.predict_log_proba(df), ref.predict_log_proba(X), rtol=1e-12, atol=1e-12
    )
    with pytest.raises(ValueError, match="discrete column 0 has missing values"):
        NaiveBayes().fit(df[["i"]], y)


def test_dates_in_a_continuous_column_get_a_clear_error():
    """A tz-aware pandas date column reaches the encoder as Timestamp objects and stopped the fit
    with NumPy's "float() argument must be ... not 'Timestamp'"; the error now names the column
    and the fix, as it does for a datetime64 column."""
    pd = pytest.importorskip("pandas")
    y = np.arange(20) % 2
    df = pd.DataFrame(
        {"x": np.linspace(0, 1, 20), "t": pd.date_range("2020", periods=20, tz="UTC")}
    )
    with pytest.raises(TypeError, match="continuous column 1 holds Timestamp values; convert it"):
        NaiveBayes().fit(df, y)
    days = np.arange(20).astype("datetime64[D]")
    with pytest.raises(TypeError, match=r"column 0 has dtype datetime64\[D\]; convert it"):
        NaiveBayes().fit(days[:, None], y)


def test_score_checks_the_true_labels():
    """score(X, y) with text labels for a model of numeric classes scored 0.0 silently, complex
    labels were compared by their real part and NaN labels counted as errors; scikit-learn's
    metrics refuse all three. Labels outside classes_ still count as errors."""
    X, y = _data()
    m = NaiveBayes().fit(X, y)
    acc = m.score(X, y)
    assert 0.5 < acc < 1.0
    for bad, msg in [
        (y.astype(str), r"y holds text labels, but the model's classes_ are numbers \[0, 1\]"),
        (y + 0j, "Complex data not supported"),
        (np.where(y > 0, np.nan, 0.0), "y contains NaN"),
        (y + 0.5, "non-integer floats"),
        (y[:-1], "mismatched lengths"),
    ]:
        with pytest.raises(ValueError, match=msg):
            m.score(X, bad)
    assert m.score(X, y.astype(float)) == acc and m.score(X, y.astype(object)) == acc
    assert m.score(X, y[:, None]) == acc
    assert m.score(X, y + 5) == 0.0  # labels the model never predicts: all wrong
    t = NaiveBayes().fit(X, np.array(["a", "b"])[y])
    assert t.score(X, np.array(["a", "b"], dtype=object)[y]) == acc
    with pytest.raises(ValueError, match=r"y holds numbers, but .* text labels \['a', 'b'\]"):
        t.score(X, y)


def test_discrete_indices_beyond_the_columns_say_what_a_wrapper_does():
    """RFE refits on fewer columns with the same ``discrete`` indices: the error says they name
    the original columns and what the wrapper does to the column kinds."""
    X, y = _data()
    with pytest.raises(ValueError, match=r"got \[5\]\. If a wrapper dropped columns.*RFE"):
        NaiveBayes(discrete=[5]).fit(X, y)
