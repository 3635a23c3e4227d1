"""Averaged NB (MODL + compression-weighted selective NB models)."""

import math

import numpy as np
import pytest
from scipy.special import gammaln

from jaxnb.stream.anb import AveragedNB, subset_prior_cost
from jaxnb.stream.simulate import StreamSpec, make_rows


@pytest.fixture(scope="module")
def redundant_data():
    spec = StreamSpec(
        n_predictors=16,
        n_relevant=5,
        n_redundant=8,
        redundant_sources=2,
        signal=1.5,
        weakest=0.15,
        n_examples=9_000,
        n_test=3_000,
        chunk_rows=3_000,
        seed=1,
    )
    Xte, yte = make_rows(spec, 0, 3_000)
    X, y = make_rows(spec, 3_000, 9_000)
    return spec, X, y, Xte, yte


def anb_reference_terms(model, X, y, Xq, alpha=1.0):
    """Float64 NumPy recount of a fitted AveragedNB: (log π (c,), per-column log P(x_i in t | k)
    (nq, p, c)) with Laplace frequencies (N_tk + α) / (N_k + α m_i) over the fitted cuts_ (numeric)
    or categories_ / groups_ (discrete); a query category unseen in training contributes 0."""
    classes, yi = np.unique(y, return_inverse=True)
    c = len(classes)
    terms = np.zeros((len(Xq), X.shape[1], c))
    for i in range(X.shape[1]):
        if model.cuts_[i] is None:  # discrete: category -> (grouped) code
            cats, groups = np.unique(X[:, i]), model.groups_[i]
            np.testing.assert_array_equal(model.categories_[i], cats)
            tr = groups[np.searchsorted(cats, X[:, i])]
            pos = np.minimum(np.searchsorted(cats, Xq[:, i]), len(cats) - 1)
            q = np.where(cats[pos] == Xq[:, i], groups[pos], -1)
            m = int(groups.max()) + 1
        else:  # numeric: right-closed intervals of the MODL cuts
            tr = np.searchsorted(model.cuts_[i], X[:, i], side="left")
            q = np.searchsorted(model.cuts_[i], Xq[:, i], side="left")
            m = len(model.cuts_[i]) + 1
        counts = np.zeros((m, c))
        np.add.at(counts, (tr, yi), 1.0)
        table = np.log((counts + alpha) / (counts.sum(0) + alpha * m))
        terms[:, i] = np.where(q[:, None] >= 0, table[np.maximum(q, 0)], 0.0)
    return np.log(np.bincount(yi) / len(y)), terms


def log_normalize(log_joint):
    return log_joint - np.logaddexp.reduce(log_joint, axis=1, keepdims=True)


def check_unseen_category_drops_its_term(model, X, y, col):
    """Row 0 with an unseen value in `col`: its log posterior is the model's with that column's
    term removed (built from the NumPy recount), and differs from the seen row's."""
    log_prior, terms = anb_reference_terms(model, X, y, X[:50])
    w = model.weights_
    np.testing.assert_allclose(
        model.predict_log_proba(X[:50]),
        log_normalize(log_prior + np.einsum("rik,i->rk", terms, w)),
        rtol=1e-10,
        atol=1e-12,
    )
    Xu = X[:1].copy()
    Xu[0, col] = 17.0  # unseen category: contributes 0, no error
    keep = np.arange(X.shape[1]) != col
    expected = log_normalize(log_prior + np.einsum("rik,i->rk", terms[:1, keep], w[keep]))
    got = model.predict_log_proba(Xu)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert np.abs(got - model.predict_log_proba(X[:1])).max() > 0.1


def test_subset_prior_cost():
    for k, p in [(0, 5), (3, 10), (10, 10)]:
        ref = math.log(p + 1) + gammaln(p + 1) - gammaln(k + 1) - gammaln(p - k + 1)
        np.testing.assert_allclose(float(subset_prior_cost(float(k), float(p))), ref, rtol=1e-12)


def test_anb_weights_and_accuracy(redundant_data):
    spec, X, y, Xte, yte = redundant_data
    nb = AveragedNB(mode="nb").fit(X, y)
    anb = AveragedNB(mode="average", n_starts=2).fit(X, y)
    assert ((anb.weights_ >= 0) & (anb.weights_ <= 1)).all()
    assert anb.n_models_ > spec.n_predictors
    assert anb.score(Xte, yte) >= nb.score(Xte, yte) + 0.005
    # irrelevant predictors: one MODL interval, hence no influence on the posterior
    irr = spec.kind == 2
    assert (anb.n_intervals_[irr] == 1).mean() >= 0.6


def test_map_cost_is_recomputed_cost(redundant_data):
    _, X, y, _, _ = redundant_data
    m = AveragedNB(mode="map", n_starts=1).fit(X, y)
    assert set(np.unique(m.weights_)) <= {0.0, 1.0}
    np.testing.assert_array_equal(np.flatnonzero(m.weights_), m.selected_)
    # float64 NumPy recomputation of cost(M) = log(p+1) + log C(p, |M|) - sum_r log P_M(y_r | x_r)
    logp = m.predict_log_proba(X)
    nll = -logp[np.arange(len(y)), y].sum()
    p, k = X.shape[1], len(m.selected_)
    prior = math.log(p + 1) + gammaln(p + 1) - gammaln(k + 1) - gammaln(p - k + 1)
    np.testing.assert_allclose(m.map_cost_, prior + nll, rtol=1e-9)
    assert m.map_cost_ < m.null_cost_


def test_discrete_columns_and_validation():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 800)
    cat = np.where(rng.random(800) < 0.8, y, 1 - y) + 2 * rng.integers(0, 2, 800)
    X = np.column_stack([cat.astype(float), rng.normal(size=800) + y])
    m = AveragedNB(discrete=[0]).fit(X, y)
    assert m.n_intervals_[0] == 4 and m.score(X, y) > 0.75
    assert m.weights_[0] > 0.5  # the categorical column matters, so dropping it shows
    check_unseen_category_drops_its_term(m, X, y, col=0)
    with pytest.raises(ValueError, match="mode must be"):
        AveragedNB(mode="bma").fit(X, y)


def test_text_columns_are_categories():
    """The embedded Flags table holds its categories as text ('5', 'red'): with discrete='auto'
    the fit equals one on codes of the sorted labels (it raised a TypeError before); an unseen
    label follows ``unseen``, a missing one ``missing``; a text column not declared discrete is
    a TypeError that names it and the fix."""
    from jaxnb.datasets import load_flags

    X, y, _, numeric = load_flags()
    numeric = np.asarray(numeric, bool)
    codes = np.empty(X.shape)
    for j in range(X.shape[1]):
        col = X[:, j]
        codes[:, j] = col.astype(float) if numeric[j] else np.unique(col, return_inverse=True)[1]
    m = AveragedNB(discrete="auto").fit(X, y)
    ref = AveragedNB(discrete=~numeric).fit(codes, y)
    np.testing.assert_array_equal(m.weights_, ref.weights_)
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(codes), rtol=0, atol=1e-12)
    colour = int(np.flatnonzero(X[0] == "green")[0])  # a text column of colour names
    assert list(m.labels_[colour]) == sorted(set(X[:, colour]))
    assert m.labels_[int(np.flatnonzero(numeric)[0])] is None
    Xq, cq = X[:3].copy(), codes[:3].copy()
    Xq[0, colour], cq[0, colour] = "purple", np.nan  # unseen: the term is dropped, as a NaN
    Xq[1, 0], cq[1, 0] = None, np.nan  # missing
    np.testing.assert_allclose(m.predict_proba(Xq), ref.predict_proba(cq), rtol=0, atol=1e-12)
    # an unseen label is not a missing value: missing='error' still drops its term
    m.set_params(missing="error")
    np.testing.assert_allclose(
        m.predict_proba(Xq[[0, 2]]), ref.predict_proba(cq[[0, 2]]), rtol=0, atol=1e-12
    )
    m.set_params(missing="ignore", unseen="error")
    with pytest.raises(ValueError, match=rf"column {colour} has a category never seen.*'purple'"):
        m.predict(Xq[:1])
    # numbers in a text column are no labels: not read as the codes of the sorted labels
    with pytest.raises(ValueError, match=r"column 0 has a category never seen"):
        m.predict(codes[:1])
    with pytest.raises(ValueError, match=r"missing values \(NaN\) in columns \[0\]"):
        AveragedNB(discrete="auto", missing="error").fit(Xq, y[:3])
    with pytest.raises(TypeError, match=r"column 0 holds non-numeric values.*discrete='auto'"):
        AveragedNB().fit(X, y)
    with pytest.raises(TypeError, match=r"column 1 holds non-numeric values.*discrete='auto'"):
        AveragedNB(discrete=[0]).fit(X, y)
