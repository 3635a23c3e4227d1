"""Stream summaries and online NB on edge cases: constant columns, values beyond the summary,
row-by-row prequential evaluation, GK's overflow flag and bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxnb
from jaxnb.stream.online import OnlineNB, OnlineWeightedNB
from jaxnb.stream.prequential import prequential, prequential_jit
from jaxnb.stream.summaries import CategoricalCounts, CPiD, GaussianSummary, GKClass


def _rows(seed=3, n=600):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) + y[:, None] * np.array([1, 0.5, 0, 2])
    return X, y, rng


def test_online_nb_equals_naive_bayes_with_a_constant_column():
    """NaiveBayes gives a predictor without spread unit variance; OnlineNB did 1e-12, which
    swamped every other predictor at a test value off the constant."""
    X, y, rng = _rows()
    X[:, 3] = 7.0
    Xt = rng.normal(size=(50, 4)) + 1
    Xt[:, 3] = 7.5
    with jax.enable_x64(False):  # the default precision, where 1e-12 swamped the rest
        nb = jaxnb.NaiveBayes(discrete="none").fit(X, y)
        on = OnlineNB(prior_smoothing=0.0).fit(X, y)
        np.testing.assert_allclose(on.predict_proba(Xt), nb.predict_proba(Xt), atol=1e-5)
        np.testing.assert_array_equal(on.predict(Xt), nb.predict(Xt))


def test_online_nb_prequential_is_row_by_row():
    """Each row is predicted by the model of all rows before it (not the state at the start of a
    256-row block): the compiled run equals the row-by-row Python loop and the weighted model
    with a zero learning rate."""
    rng = np.random.default_rng(4)
    n = 700  # three 256-row blocks, the last one partial
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + y[:, None] * np.array([0.5, 0.3, 0.1])
    r_jit = prequential_jit(OnlineNB(), X, y, report_every=n, verbose=False)
    r_loop = prequential(OnlineNB(), X, y, batch_size=1, report_every=n, verbose=False)
    r_wnb = prequential_jit(
        OnlineWeightedNB(learning_rate=0.0), X, y, report_every=n, verbose=False
    )
    assert r_jit.n_tested == r_loop.n_tested == r_wnb.n_tested == n - 1
    assert r_jit.n_correct == r_loop.n_correct == r_wnb.n_correct
    ok = OnlineNB().prequential_correct(X[:300], y[:300])
    ok1 = OnlineNB(summary_chunk=1).prequential_correct(X[:300], y[:300])
    np.testing.assert_array_equal(ok, ok1)


def test_gk_value_above_the_largest_tuple_falls_in_the_last_bin():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 5000)
    x = rng.normal(size=5000) + 3 * y
    s = GKClass.init(2, 1).update(x[:, None], y)
    assert int(s.n_tuples[0]) < s.capacity  # below capacity: empty slots after the tuples
    top = float(np.asarray(s.values[0])[np.asarray(s.g[0]) > 0].max())
    at = np.asarray(s.log_prob([[top]]))[0, 0]
    assert at[1] > at[0] + 2  # the upper class dominates the last bin
    for v in (top + 0.01, top + 100.0):
        np.testing.assert_array_equal(np.asarray(s.log_prob([[v]]))[0, 0], at)
    # ties at the top: the last run's counts sit in its first slot
    x2 = np.array([1.0, 2.0, 3.0, 3.0, 3.0])
    s2 = GKClass.init(2, 1).update(x2[:, None], np.array([0, 0, 1, 1, 1]))
    np.testing.assert_array_equal(
        np.asarray(s2.log_prob([[4.0]]))[0, 0], np.asarray(s2.log_prob([[3.0]]))[0, 0]
    )


def test_gk_overflowed_reports_every_broken_guarantee():
    rng = np.random.default_rng(0)
    n = 1001
    x, y = rng.normal(size=n), rng.integers(0, 3, n)
    s = GKClass.init(3, 1, epsilon=0.01, chunk_size=7).update(x[:, None], y)
    bound = float(s.rank_error_bound()[0])
    assert bound > 0.01 * n and bool(s.overflowed()[0])
    one = GKClass.init(3, 1, epsilon=0.01).update(x[:1, None], y[:1])
    assert not bool(one.overflowed()[0])  # a single tuple (g + Delta = 1) is within the bound


def test_gk_quantile_inputs():
    s = GKClass.init(2, 2).update(np.c_[np.arange(10.0), np.full(10, np.nan)], np.arange(10) % 2)
    with pytest.raises(ValueError, match="q must be quantile levels"):
        s.quantile([np.nan])
    q = np.asarray(s.quantile([0.5]))
    assert np.isfinite(q[0, 0]) and np.isnan(q[1, 0])  # no value summarized in column 1


def test_categorical_counts_reject_bad_codes():
    cc = CategoricalCounts.init(2, (3, 2)).update(np.array([[0, 1], [2, 0]]), np.array([0, 1]))
    for bad in ([[3, 0]], [[0, 7]], [[-5, 0]]):
        with pytest.raises(ValueError, match="codes must lie in"):
            cc.log_prob(np.array(bad))
    with pytest.raises(ValueError, match="whole numbers"):
        cc.update(np.array([[1.7, 0.0]]), np.array([0]))
    with pytest.raises(ValueError, match="whole numbers"):
        cc.log_prob(np.array([[np.nan, 0.0]]))
    out = np.asarray(cc.log_prob(np.array([[-1, 1], [2.0, 0]])))
    assert out.shape == (2, 2, 2) and (out[0, 0] == 0).all()


def test_summary_constructors_and_values_are_checked():
    with pytest.raises(TypeError, match="dtype must be a floating dtype"):
        GaussianSummary.init(2, 1, dtype=jnp.int32)
    with pytest.raises(TypeError, match="dtype must be a floating dtype"):
        GKClass.init(2, 1, dtype=np.int64)
    with pytest.raises(ValueError, match="split_fraction"):
        CPiD.init(2, 1, split_fraction=True)
    with pytest.raises(ValueError, match="summary_chunk"):
        OnlineWeightedNB(summary_chunk=True).fit(np.zeros((4, 1)), np.array([0, 1, 0, 1]))
    g = GaussianSummary.init(2, 1)
    with pytest.raises(TypeError, match="values must be real numbers"):
        g.update(np.array([[1 + 2j], [3 + 0j]]), np.array([0, 1]))
