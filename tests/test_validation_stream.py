"""Eager validation of the stream estimators and summaries (AveragedNB, OnlineWeightedNB, GKClass
capacity, CategoricalCounts): bad input raises a ValueError/TypeError naming the argument before
any jit; valid input (string or mixed labels, NaN = missing) still fits."""

import numpy as np
import optax
import pytest

from jaxnb.stream.anb import AveragedNB
from jaxnb.stream.online import OnlineNB, OnlineWeightedNB
from jaxnb.stream.summaries import CategoricalCounts, GKClass, gk_capacity_for_epsilon


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 3)) + y[:, None]
    return X, y


def _small_anb(**kw):
    return AveragedNB(n_starts=1, max_passes=2, **kw)


ESTIMATORS = [
    pytest.param(_small_anb, id="AveragedNB"),
    pytest.param(OnlineWeightedNB, id="OnlineWeightedNB"),
]


# ------------------------------------------------------------------------------------------------
# Labels (both estimators encode y as jaxnb.NaiveBayes does)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_nan_label_raises(make):
    X, y = _data()
    y = y.astype(float)
    y[3] = np.nan
    with pytest.raises(ValueError, match="y contains NaN"):
        make().fit(X, y)
    y_obj = np.arange(len(X)).astype(object) % 2
    y_obj[5] = None
    with pytest.raises(ValueError, match="y contains None/NaN"):
        make().fit(X, y_obj)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_two_dimensional_y_raises(make):
    X, y = _data()
    with pytest.raises(ValueError, match=r"y must be 1-D \(n_samples,\); got shape \(40, 2\)"):
        make().fit(X, np.stack([y, y], 1))


@pytest.mark.parametrize("make", ESTIMATORS)
def test_mismatched_lengths_raise(make):
    X, y = _data()
    with pytest.raises(ValueError, match="X and y have mismatched lengths"):
        make().fit(X, y[:-1])


@pytest.mark.parametrize("make", ESTIMATORS)
def test_single_class_raises(make):
    X, _ = _data()
    with pytest.raises(ValueError, match=r"y has only one class \(0\).* at least two classes"):
        make().fit(X, np.zeros(len(X), int))


@pytest.mark.parametrize("make", ESTIMATORS)
def test_string_and_mixed_labels_fit(make):
    X, y = _data()
    m = make().fit(X, np.array(["no", "yes"])[y])
    assert m.classes_.tolist() == ["no", "yes"]
    assert set(m.predict(X).tolist()) <= {"no", "yes"}
    # mixed int / str labels: sorted by the library's label encoder, as NaiveBayes does
    mixed = np.array([0, "a"] * (len(X) // 2), dtype=object)
    m = make().fit(X, mixed)
    assert m.classes_.tolist() == [0, "a"]
    assert set(m.predict(X).tolist()) <= {0, "a"}
    assert m.predict_proba(X).shape == (len(X), 2)


# ------------------------------------------------------------------------------------------------
# X


@pytest.mark.parametrize("make", ESTIMATORS)
def test_string_in_numeric_column_raises(make):
    X, y = _data()
    Xs = X.astype(object)
    Xs[0, 1] = "foo"
    with pytest.raises(TypeError, match=r"X must be numeric.*column 1 .*'foo'"):
        make().fit(Xs, y)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_empty_X_raises(make):
    with pytest.raises(ValueError, match=r"X is empty \(0 samples\)"):
        make().fit(np.empty((0, 3)), np.empty(0))
    with pytest.raises(ValueError, match=r"X has 0 feature\(s\) \(shape=\(\d+, 0\)\)"):
        make().fit(np.empty((5, 0)), np.arange(5) % 2)
    with pytest.raises(ValueError, match="X must be 2-D"):
        make().fit(np.zeros(6), np.arange(6) % 2)
    with pytest.raises(ValueError, match="X is None"):
        make().fit(None, np.arange(6) % 2)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_object_array_of_numbers_and_nan_accepted(make):
    X, y = _data()
    Xo = X.astype(object)
    Xo[2, 0] = None  # missing
    m = make().fit(Xo, y)
    assert np.isfinite(m.predict_proba(X)).all()


# ------------------------------------------------------------------------------------------------
# AveragedNB hyper-parameters


def test_anb_discrete_fractional_index_raises():
    X, y = _data()
    with pytest.raises(TypeError, match="discrete must be a boolean mask or a 1-D list"):
        _small_anb(discrete=[0.5]).fit(X, y)
    with pytest.raises(ValueError, match=r"discrete indices must lie in \[0, 3\)"):
        _small_anb(discrete=[3]).fit(X, y)
    with pytest.raises(ValueError, match="discrete mask must have length"):
        _small_anb(discrete=[True, False]).fit(X, y)
    with pytest.raises(ValueError, match="discrete must be 'auto', 'all', 'none', a boolean mask"):
        _small_anb(discrete="some").fit(X, y)


def test_anb_discrete_valid_forms_agree():
    X, y = _data()
    X[:, 0] = np.arange(len(X)) % 3
    a = _small_anb(discrete=[0]).fit(X, y)
    b = _small_anb(discrete=np.array([True, False, False])).fit(X, y)
    c = _small_anb(discrete=[-3]).fit(X, y)
    for m in (b, c):
        np.testing.assert_allclose(m.predict_proba(X), a.predict_proba(X))
    assert a.categories_[0].tolist() == [0.0, 1.0, 2.0]
    # the named forms, as NaiveBayes's: "auto" makes the integer column discrete
    d = _small_anb(discrete="auto").fit(np.array(X[:, :1], dtype=np.int64), y)
    assert d.cuts_[0] is None and d.categories_[0].tolist() == [0.0, 1.0, 2.0]
    assert _small_anb(discrete="auto").fit(X, y).categories_ == [None] * 3  # float columns
    for same in ("none", None):
        f = _small_anb(discrete=same).fit(X, y)
        assert f.cuts_[0] is not None and f.categories_[0] is None
    g = _small_anb(discrete="all").fit(X[:, :1], y)
    assert g.cuts_[0] is None and g.n_intervals_[0] == 3


def test_anb_auto_discrete_reads_a_data_frames_column_types():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    X[:, 0] = np.arange(len(X)) % 3
    frame = pd.DataFrame({"a": X[:, 0].astype(np.int64), "b": X[:, 1], "c": X[:, 2]})
    a = _small_anb(discrete=[0]).fit(X, y)
    e = _small_anb(discrete="auto").fit(frame, y)
    assert e.categories_[0].tolist() == [0.0, 1.0, 2.0] and e.categories_[1:] == [None, None]
    np.testing.assert_array_equal(e.predict_proba(frame), a.predict_proba(X))


@pytest.mark.parametrize("make", [OnlineNB, OnlineWeightedNB])
def test_online_missing_values_are_left_out_or_an_error_on_request(make):
    X, y = _data()
    Xm = X.copy()
    Xm[3, 1] = np.nan
    assert np.isfinite(make().fit(Xm, y).predict_proba(Xm)).all()  # default "ignore"
    with pytest.raises(ValueError, match=r"missing values \(NaN\) in columns \[1\]; pass "):
        make(missing="error").fit(Xm, y)
    strict = make(missing="error").fit(X, y)
    with pytest.raises(ValueError, match="missing='ignore' to leave them out"):
        strict.partial_fit(Xm, y)
    with pytest.raises(ValueError, match="missing='ignore' to leave them out"):
        strict.predict_proba(Xm)
    with pytest.raises(ValueError, match="missing must be one of"):
        make(missing="drop").fit(X, y)


def _assert_term_dropped(model, row, changed_row, col):
    """The joint log score of ``changed_row`` is ``row``'s without predictor ``col``'s term."""
    full = model.predict_joint_log_proba(row)
    part = model.predict_joint_log_proba(changed_row)
    np.testing.assert_allclose(full - part, model.explain(row)[:, col], rtol=1e-6, atol=1e-6)


def test_anb_missing_values_are_dropped_terms_or_an_error_on_request():
    X, y = _data()
    Xm = X.copy()
    Xm[3, 1] = np.nan
    m = _small_anb(mode="nb").fit(Xm, y)  # default "ignore": the NaN's term is left out
    _assert_term_dropped(m, X[3:4], Xm[3:4], col=1)
    with pytest.raises(ValueError, match=r"missing values \(NaN\) in columns \[1\]; pass "):
        _small_anb(missing="error").fit(Xm, y)
    strict = _small_anb(missing="error").fit(X, y)
    with pytest.raises(ValueError, match="missing='ignore' to drop those terms"):
        strict.predict(Xm)
    with pytest.raises(ValueError, match="missing must be one of"):
        _small_anb(missing="drop").fit(X, y)


def test_anb_unseen_categories_drop_their_term_or_are_an_error_on_request():
    X, y = _data()
    X[:, 0] = np.arange(len(X)) % 3
    Xu = X.copy()
    Xu[5, 0] = 7.0
    m = _small_anb(mode="nb", discrete=[0]).fit(X, y)
    _assert_term_dropped(m, X[5:6], Xu[5:6], col=0)  # default "ignore": the term is dropped
    strict = _small_anb(mode="nb", discrete=[0], unseen="error").fit(X, y)
    np.testing.assert_array_equal(strict.predict_proba(X), m.predict_proba(X))
    with pytest.raises(ValueError, match=r"column 0 has a category never seen in training \(7\)"):
        strict.predict(Xu)
    with pytest.raises(ValueError, match="unseen must be one of"):
        _small_anb(unseen="drop").fit(X, y)


@pytest.mark.parametrize("seed", ["a", -1, 1.5, None, True])
def test_anb_seed_raises(seed):
    X, y = _data()
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        _small_anb(seed=seed).fit(X, y)


def test_anb_seed_numpy_int_accepted():
    X, y = _data()
    a = _small_anb(seed=np.int64(3)).fit(X, y)
    b = _small_anb(seed=3).fit(X, y)
    np.testing.assert_allclose(a.weights_, b.weights_)


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"alpha": "1"}, "alpha"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": np.nan}, "alpha"),
        ({"mode": "bma"}, "mode"),
        ({"grouping": 1}, "grouping"),
        ({"max_bins": 2.5}, "max_bins"),
    ],
)
def test_anb_hyper_raises(kw, name):
    X, y = _data()
    with pytest.raises(ValueError, match=name):
        _small_anb(**kw).fit(X, y)


def test_anb_predict_checks_columns():
    X, y = _data()
    m = _small_anb().fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but AveragedNB is expecting 3"):
        m.predict(X[:, :2])
    Xs = X.astype(object)
    Xs[0, 0] = "x"
    with pytest.raises(TypeError, match="X must be numeric"):
        m.predict(Xs)


# ------------------------------------------------------------------------------------------------
# OnlineWeightedNB hyper-parameters


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"init_weight": np.nan}, "init_weight"),
        ({"init_weight": np.inf}, "init_weight"),
        ({"init_weight": "a"}, "init_weight"),
        ({"warmup": 1.5}, "warmup"),
        ({"warmup": -1}, "warmup"),
        ({"warmup": True}, "warmup"),
        ({"learning_rate": "0.1"}, "learning_rate"),
        ({"learning_rate": -0.1}, "learning_rate"),
        ({"learning_rate": np.nan}, "learning_rate"),
        ({"var_smoothing": "1e-9"}, "var_smoothing"),
        ({"prior_smoothing": -1.0}, "prior_smoothing"),
        ({"smoothing": 0.0}, "smoothing"),
        ({"smoothing": "1"}, "smoothing"),
        ({"order": ["summary_first"]}, "order"),
        ({"second_level": "mdl"}, "second_level"),
        ({"summary": ["gaussian"]}, "summary"),
    ],
)
def test_online_hyper_raises(kw, name):
    X, y = _data()
    with pytest.raises(ValueError, match=name):
        OnlineWeightedNB(**kw).fit(X, y)


@pytest.mark.parametrize("opt", ["adam", 1e-3, optax.adam])
def test_online_optimizer_must_be_optax(opt):
    X, y = _data()
    with pytest.raises(TypeError, match="optimizer must be an optax.GradientTransformation"):
        OnlineWeightedNB(optimizer=opt).fit(X, y)


def test_online_valid_hyper_still_fit():
    X, y = _data()
    a = OnlineWeightedNB(optimizer=optax.adam(1e-2), warmup=np.int64(0), init_weight=0.5)
    a.fit(X, y)
    assert np.isfinite(a.weights_).all()
    # learning_rate is ignored (not validated) when an optimizer is given
    OnlineWeightedNB(optimizer=optax.sgd(1e-3), learning_rate=None).fit(X, y)
    assert np.isfinite(OnlineNB().fit(X, y).predict_proba(X)).all()


def test_online_partial_fit_labels():
    X, y = _data()
    est = OnlineWeightedNB().partial_fit(X[:20], np.array(["a", "b"])[y[:20]])
    with pytest.raises(ValueError, match=r"y contains the label 'c' not in classes_ \['a', 'b'\]"):
        est.partial_fit(X[:2], np.array(["a", "c"]))
    with pytest.raises(ValueError, match="y contains NaN"):
        OnlineWeightedNB().fit(X, y).partial_fit(X[:2], np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="classes differ"):
        est.partial_fit(X[:2], np.array(["a", "b"]), classes=["a", "b", "c"])
    est.partial_fit(X[20:], np.array(["a", "b"])[y[20:]], classes=["b", "a"])
    assert est.n_seen_ == len(X)
    with pytest.raises(ValueError, match="classes contains NaN"):
        OnlineWeightedNB().partial_fit(X, y, classes=[0.0, np.nan])
    # declared classes may hold labels the first batch lacks; int labels match float classes
    est = OnlineWeightedNB().partial_fit(X[:4], np.zeros(4), classes=[0, 1, 2])
    est.partial_fit(X[4:8], np.array([2, 1, 0, 2]))
    assert est.classes_.tolist() == [0, 1, 2]


def test_online_bad_first_batch_leaves_estimator_unfitted():
    X, y = _data()
    est = OnlineWeightedNB()
    with pytest.raises(ValueError, match="y contains NaN"):
        est.partial_fit(X[:2], np.array([0.0, np.nan]), classes=[0, 1])
    assert not hasattr(est, "state_") and not hasattr(est, "classes_")
    with pytest.raises(ValueError, match="y contains the label 2 not in classes_"):
        est.partial_fit(X[:2], np.array([0, 2]), classes=[0, 1])
    assert not hasattr(est, "state_")
    est.partial_fit(X, y, classes=[0, 1])  # then a good batch fits from scratch
    assert est.n_seen_ == len(X)


@pytest.mark.parametrize("summary", ["gaussian", "gkclass", "cpid"])
def test_online_all_missing_column_is_ignored(summary):
    """NaN = missing contributes 0 (documented): an all-NaN column changes nothing; with GKClass
    its empty summary used to give +inf log-contributions, hence NaN probabilities."""
    X, y = _data()
    Xm = X.copy()
    Xm[:, 1] = np.nan
    kw = {"summary": summary, "summary_size": 20}
    full = OnlineNB(**kw).fit(np.delete(X, 1, axis=1), y)
    miss = OnlineNB(**kw).fit(Xm, y)
    np.testing.assert_allclose(
        miss.predict_proba(X), full.predict_proba(np.delete(X, 1, axis=1)), rtol=1e-6
    )
    w = OnlineWeightedNB(learning_rate=0.05, warmup=2, **kw).fit(Xm, y)
    assert np.isfinite(w.weights_).all()
    assert np.isfinite(w.predict_proba(X)).all()


# ------------------------------------------------------------------------------------------------
# Summaries


@pytest.mark.parametrize("eps", [0.0, -0.1, 1.0, 2.0, np.nan, "0.1", None])
def test_gk_capacity_epsilon_raises(eps):
    with pytest.raises(ValueError, match="epsilon"):
        gk_capacity_for_epsilon(eps, 100)


@pytest.mark.parametrize("n_max", [0, -5, 10.5, "100"])
def test_gk_capacity_n_max_raises(n_max):
    with pytest.raises(ValueError, match="n_max"):
        gk_capacity_for_epsilon(0.01, n_max)


def test_gk_capacity_valid_and_init_agree():
    cap = gk_capacity_for_epsilon(0.05, 10_000)
    assert cap >= 1 / 0.05
    s = GKClass.init(2, 1, capacity=cap, epsilon=0.05)
    assert s.capacity == cap
    with pytest.raises(ValueError, match="epsilon"):
        GKClass.init(2, 1, epsilon=np.nan)
    with pytest.raises(ValueError, match="epsilon"):
        GKClass.init(2, 1, epsilon="0.1")


def test_gkclass_empty_predictor_log_prob_is_zero():
    s = GKClass.init(2, 2, capacity=10).update(
        np.column_stack([np.arange(6.0), np.full(6, np.nan)]), np.arange(6) % 2
    )
    L = np.asarray(s.log_prob(np.array([[1.0, 3.0]])))
    np.testing.assert_allclose(L[0, 1], 0.0)
    assert np.isfinite(L).all()


@pytest.mark.parametrize("n_states", [3, "abc", None, 2.0])
def test_categorical_counts_n_states_must_be_sequence(n_states):
    with pytest.raises(TypeError, match="n_states must be a sequence of ints, one per predictor"):
        CategoricalCounts.init(2, n_states)


@pytest.mark.parametrize("n_states", [(), (3, 0), (2.5,), (True, 2)])
def test_categorical_counts_n_states_entries(n_states):
    with pytest.raises(ValueError, match="n_states must be a non-empty sequence of ints >= 1"):
        CategoricalCounts.init(2, n_states)


def test_categorical_counts_valid_n_states():
    assert CategoricalCounts.init(2, (3,)).n_states == (3,)
    assert CategoricalCounts.init(2, np.array([3, 2])).n_states == (3, 2)
    assert CategoricalCounts.init(2, [4]).counts.shape == (4, 2)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_wrong_number_of_columns_uses_scikit_learns_wording(make):
    X, y = _data()
    m = make().fit(X, y)
    name = type(m).__name__
    with pytest.raises(ValueError, match=f"X has 2 features, but {name} is expecting 3 features"):
        m.predict_proba(X[:, :2])
