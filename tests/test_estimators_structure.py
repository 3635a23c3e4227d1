"""Estimators over the structure, kernel and filter cores (jaxnb.estimators_structure)."""

import math

import numpy as np
import pytest
from test_kernel import _ref_kde  # tests/ is on sys.path (no __init__.py)
from test_structure import _ref_gaussian_tan_log_joint

from jaxnb import NaiveBayes
from jaxnb.estimators_structure import (
    TAN,
    FilterNB,
    FilterWrapperNB,
    FlexibleNB,
    FlexibleTAN,
    GaussianSemiNaiveNB,
    ParzenNB,
    register_methods,
)
from jaxnb.methods import filters as flt
from jaxnb.model_selection import stratified_folds

# --------------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------------
TREE = np.array([-1, 0, 0, 1, 1])  # true parent array of the Gaussian tree below


def gaussian_tree_runs(n_runs, n, seed):
    """Class-conditional linear-Gaussian tree (parents TREE), slopes +0.8 / -0.8 by class, a 0.4
    mean shift: (X (runs, n, 5), y (runs, n)); all runs generated at once."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, (n_runs, n))
    slope = np.where(y == 0, 0.8, -0.8)
    e = rng.standard_normal((n_runs, n, 5))
    X = np.empty_like(e)
    X[..., 0] = e[..., 0]
    for i in range(1, 5):  # 4 fixed steps over the tree, vectorized over runs and rows
        X[..., i] = slope * X[..., TREE[i]] + math.sqrt(1 - 0.64) * e[..., i]
    return X + 0.4 * y[..., None], y


def bimodal(n, seed):
    """Class 0: each of 2 predictors is a ±2 mixture (sd 0.5); class 1: N(0, 4.25), the same
    mean and variance, so Gaussian NB sees (almost) no difference between the classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    sign = rng.choice([-2.0, 2.0], (n, 2))
    X = np.where(
        y[:, None] == 0,
        sign + 0.5 * rng.standard_normal((n, 2)),
        math.sqrt(4.25) * rng.standard_normal((n, 2)),
    )
    return X, y


def gaussian_cmi_reference(X, y):
    """−½ Σ_c p(c) log(1 − ρ_c²) with loops (float64 NumPy)."""
    p = X.shape[1]
    out = np.zeros((p, p))
    for c in np.unique(y):
        Xc = X[y == c]
        pc = len(Xc) / len(X)
        for i in range(p):
            for k in range(p):
                if i != k:
                    rho = np.corrcoef(Xc[:, i], Xc[:, k])[0, 1]
                    out[i, k] -= 0.5 * pc * np.log(1 - rho**2)
    return out


def discrete_cmi_reference(codes, y):
    """Σ p(a,b,c) log[p(a,b,c) p(c) / (p(a,c) p(b,c))] with loops."""
    n, q = codes.shape
    out = np.zeros((q, q))
    for i in range(q):
        for k in range(q):
            if i == k:
                continue
            for a in np.unique(codes[:, i]):
                for b in np.unique(codes[:, k]):
                    for c in np.unique(y):
                        pabc = np.mean((codes[:, i] == a) & (codes[:, k] == b) & (y == c))
                        if pabc == 0:
                            continue
                        pac = np.mean((codes[:, i] == a) & (y == c))
                        pbc = np.mean((codes[:, k] == b) & (y == c))
                        out[i, k] += pabc * np.log(pabc * np.mean(y == c) / (pac * pbc))
    return out


def max_spanning_edges(W):
    """Undirected edges of the maximum spanning tree (scipy's MST on negated, shifted weights)."""
    from scipy.sparse.csgraph import minimum_spanning_tree

    cost = W.max() + 1.0 - W  # positive off-diagonal costs; larger W = cheaper
    np.fill_diagonal(cost, 0.0)
    mst = minimum_spanning_tree(cost).toarray()
    return {frozenset((int(i), int(k))) for i, k in zip(*np.nonzero(mst), strict=True)}


def tree_edges(parent):
    return {frozenset((i, int(par))) for i, par in enumerate(parent) if par >= 0}


def log_normalize(log_joint):
    """Row-wise log posterior from a (n, c) log joint (float64 NumPy)."""
    m = log_joint.max(1, keepdims=True)
    return log_joint - (m + np.log(np.exp(log_joint - m).sum(1, keepdims=True)))


def discrete_tan_reference(codes, y, parent, alpha, codes_q):
    """(nq, c) log posterior of a discrete TAN with Lidstone CPTs recounted by loops: roots
    P(a | c) = (N_ac + α) / (N_c + α M_i), children P(a | b, c) = (N_abc + α) / (N_bc + α M_i)."""
    states = codes.max(0) + 1
    classes = np.unique(y)
    out = np.zeros((len(codes_q), len(classes)))
    for k, cls in enumerate(classes):
        in_c = y == cls
        out[:, k] = np.log(in_c.mean())
        for r, row in enumerate(codes_q):
            for i, par in enumerate(parent):
                sel = in_c if par < 0 else in_c & (codes[:, par] == row[par])
                n_a = np.sum(sel & (codes[:, i] == row[i]))
                out[r, k] += np.log((n_a + alpha) / (sel.sum() + alpha * states[i]))
    return log_normalize(out)


# --------------------------------------------------------------------------------------------------
# TAN
# --------------------------------------------------------------------------------------------------
def test_gaussian_tan_beats_gaussian_nb_on_tree_data():
    n_runs, n_tr, n_te = 20, 120, 400
    X, y = gaussian_tree_runs(n_runs, n_tr + n_te, seed=0)
    err_tan, err_nb, hits = [], [], 0
    for t in range(n_runs):
        Xtr, ytr, Xte, yte = X[t, :n_tr], y[t, :n_tr], X[t, n_tr:], y[t, n_tr:]
        tan = TAN().fit(Xtr, ytr)
        assert tan.kind_ == "gaussian"
        err_tan.append(1 - tan.score(Xte, yte))
        err_nb.append(1 - NaiveBayes().fit(Xtr, ytr).score(Xte, yte))
        hits += tree_edges(tan.tree_) == tree_edges(TREE)
    assert np.mean(err_tan) < np.mean(err_nb) - 0.10, (np.mean(err_tan), np.mean(err_nb))
    assert hits >= 15  # the true tree is recovered in most runs


def test_gaussian_tan_tree_is_max_spanning_tree_of_cmi():
    X, y = gaussian_tree_runs(1, 300, seed=1)
    X, y = X[0][:, [3, 0, 4, 2, 1]], y[0]  # permuted columns: tree_ is in the user's order
    tan = TAN(kind="gaussian").fit(X, y)
    ref = gaussian_cmi_reference(X, y)
    np.testing.assert_allclose(tan.cmi_, ref, rtol=1e-10, atol=1e-12)
    assert tree_edges(tan.tree_) == max_spanning_edges(ref)
    assert tan.tree_[0] == -1 and (tan.tree_ >= 0).sum() == 4  # rooted at column 0
    P = tan.predict_proba(X)
    np.testing.assert_allclose(P.sum(1), 1.0, rtol=1e-12)
    # posteriors: linear-Gaussian children on the fitted tree (per-class least squares, loops)
    ref = _ref_gaussian_tan_log_joint(X, y, np.ones(len(y)), tan.tree_, 2, X[:40])
    np.testing.assert_allclose(
        tan.predict_log_proba(X[:40]), log_normalize(ref), rtol=1e-9, atol=1e-12
    )


def test_discrete_tan_tree_is_max_spanning_tree_of_cmi():
    rng = np.random.default_rng(2)
    n = 300
    y = rng.integers(0, 2, n)
    codes = np.empty((n, 4), np.int64)
    codes[:, 0] = rng.integers(0, 3, n)
    for i, par in ((1, 0), (2, 1), (3, 0)):
        copy = rng.random(n) < np.where(y == 0, 0.8, 0.4)
        codes[:, i] = np.where(copy, codes[:, par], rng.integers(0, 3, n))
    tan = TAN().fit(codes, y)
    assert tan.kind_ == "discrete"
    ref = discrete_cmi_reference(codes, y)
    np.testing.assert_allclose(tan.cmi_, ref, rtol=1e-10, atol=1e-12)
    assert tree_edges(tan.tree_) == max_spanning_edges(ref)
    assert tree_edges(tan.tree_) == {frozenset(e) for e in ((1, 0), (2, 1), (3, 0))}
    # posteriors: Laplace CPTs on the fitted tree, recounted in NumPy
    ref = discrete_tan_reference(codes, y, tan.tree_, 1.0, codes[:40])
    np.testing.assert_allclose(tan.predict_log_proba(codes[:40]), ref, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------------------------------
# semi-naive
# --------------------------------------------------------------------------------------------------
def _correlated_pair(n=600, seed=3):
    """X0 shifts with the class; X1 correlates with X0 at +0.9 (class 0) / −0.9 (class 1); X2, X3
    are noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    e = rng.standard_normal((n, 4))
    rho = np.where(y == 0, 0.9, -0.9)
    x1 = rho * e[:, 0] + math.sqrt(1 - 0.81) * e[:, 1]
    return np.column_stack([e[:, 0] + 0.8 * y, x1, e[:, 2], e[:, 3]]), y


def seminaive_reference(X, y, groups, Xq, ridge=1e-9):
    """(nq, c) log posterior of Gaussian semi-naive Bayes: log p(c) + Σ_g log N(x_g; μ_cg, Σ_cgg)
    with class MLE moments (divide by N_c) and the estimator's ridge Σ + ridge·diag(Σ) +
    ridge·diag(pooled variance), one SciPy multivariate normal per group and class."""
    from scipy.stats import multivariate_normal

    classes = np.unique(y)
    out = np.zeros((len(Xq), len(classes)))
    for k, cls in enumerate(classes):
        Xc = X[y == cls]
        mean = Xc.mean(0)
        cov = np.cov(Xc, rowvar=False, bias=True)
        cov = cov + np.diag(ridge * np.diag(cov) + ridge * X.var(0))
        out[:, k] = np.log(len(Xc) / len(X))
        for g in np.unique(groups[groups >= 0]):
            idx = np.flatnonzero(groups == g)
            out[:, k] += multivariate_normal(mean[idx], cov[np.ix_(idx, idx)]).logpdf(Xq[:, idx])
    return log_normalize(out)


def test_seminaive_fssj_joins_the_correlated_pair():
    X, y = _correlated_pair()
    est = GaussianSemiNaiveNB(search="fssj").fit(X, y)
    assert est.groups_[0] >= 0 and est.groups_[0] == est.groups_[1]
    assert est.n_selected_ == int((est.groups_ >= 0).sum())
    ref = seminaive_reference(X, y, est.groups_, X[:50])
    np.testing.assert_allclose(est.predict_log_proba(X[:50]), ref, rtol=1e-9, atol=1e-12)
    # joined pair beats Gaussian NB clearly on fresh data
    Xte, yte = _correlated_pair(2000, seed=4)
    assert est.score(Xte, yte) > NaiveBayes().fit(X, y).score(Xte, yte) + 0.1


def test_seminaive_backward_keeps_the_correlated_pair_in_its_group():
    X, y = _correlated_pair()
    est = GaussianSemiNaiveNB(search="backward").fit(X, y)
    assert est.groups_[0] == 0 and est.groups_[1] == 0  # condensed: one joint group
    assert set(est.groups_.tolist()) <= {0, -1}
    ref = seminaive_reference(X, y, est.groups_, X[:50])
    np.testing.assert_allclose(est.predict_log_proba(X[:50]), ref, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------------------------------
# kernel classifiers
# --------------------------------------------------------------------------------------------------
def _kde_reference(Xq, X, y, m):
    """Per-class product-Gaussian KDE log density, normal-rule h for dimension m, loops."""
    out = np.zeros((Xq.shape[0], 2))
    for c in (0, 1):
        Xc = X[y == c]
        nc = len(Xc)
        h = (4 / ((m + 2) * nc)) ** (1 / (m + 4))
        bw = h * Xc.std(axis=0, ddof=1)
        for r, xq in enumerate(Xq):
            z = (xq[None, :] - Xc) / bw
            k = np.exp(-0.5 * z**2) / (np.sqrt(2 * np.pi) * bw)
            out[r, c] = np.log(k.prod(1).mean()) if m > 1 else np.log(k.mean(0)).sum()
        out[:, c] += np.log(nc / len(X))
    return out - np.logaddexp(out[:, :1], out[:, 1:])


def test_kernel_posteriors_match_reference_and_sum_to_one():
    X, y = bimodal(60, seed=5)
    Xq, _ = bimodal(7, seed=6)
    flex = FlexibleNB().fit(X, y)
    parzen = ParzenNB().fit(X, y)
    np.testing.assert_allclose(
        flex.predict_log_proba(Xq), _kde_reference(Xq, X, y, 1), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(
        parzen.predict_log_proba(Xq), _kde_reference(Xq, X, y, 2), rtol=1e-10, atol=1e-12
    )
    ftan = FlexibleTAN().fit(X, y)
    for est in (flex, parzen, ftan):
        np.testing.assert_allclose(est.predict_proba(Xq).sum(1), 1.0, rtol=1e-12)
    # FlexibleTAN: root = 1-D KDE (m = 1 rule); child = 2-D KDE (m = 2) / its own 1-D marginal
    assert ftan.tree_.tolist() == [-1, 0]
    ref = np.zeros((len(Xq), 2))
    for c in (0, 1):
        Xc = X[y == c]
        wc = np.ones(len(Xc))
        ref[:, c] = np.log(len(Xc) / len(X))
        for i, par in enumerate(ftan.tree_):
            if par < 0:
                ref[:, c] += _ref_kde(Xq[:, [i]], Xc[:, [i]], wc, 1)
            else:
                ref[:, c] += _ref_kde(Xq[:, [i, par]], Xc[:, [i, par]], wc, 2)
                ref[:, c] -= _ref_kde(Xq[:, [par]], Xc[:, [par]], wc, 2)
    np.testing.assert_allclose(
        ftan.predict_log_proba(Xq), log_normalize(ref), rtol=1e-10, atol=1e-12
    )


def test_kernel_classifiers_beat_gaussian_nb_on_bimodal_data():
    errs = {"nb": [], "flex": [], "parzen": []}
    for seed in range(3):
        X, y = bimodal(200, seed)
        Xte, yte = bimodal(1000, seed + 100)
        errs["nb"].append(1 - NaiveBayes().fit(X, y).score(Xte, yte))
        errs["flex"].append(1 - FlexibleNB().fit(X, y).score(Xte, yte))
        errs["parzen"].append(1 - ParzenNB().fit(X, y).score(Xte, yte))
    m = {k: float(np.mean(v)) for k, v in errs.items()}
    assert m["nb"] > 0.4, m  # near chance
    assert m["flex"] < m["nb"] - 0.15, m
    assert m["parzen"] < m["nb"] - 0.15, m


def test_kernel_mixed_fallback_adds_discrete_cpt_terms():
    X, y = bimodal(80, seed=7)
    rng = np.random.default_rng(7)
    d = np.where(rng.random(80) < 0.7, y, rng.integers(0, 3, 80))
    Xm = np.empty((80, 3), object)
    Xm[:, 0], Xm[:, 1], Xm[:, 2] = X[:, 0], d, X[:, 1]
    mixed = FlexibleNB().fit(Xm, y)
    cont = FlexibleNB().fit(X, y)
    nb_d = NaiveBayes(alpha=1.0).fit(d[:, None], y)
    expected = cont.predict_joint_log_proba(X) + nb_d.explain(d[:, None]).sum(1)
    np.testing.assert_allclose(mixed.predict_joint_log_proba(Xm), expected, rtol=1e-10)


# --------------------------------------------------------------------------------------------------
# filters
# --------------------------------------------------------------------------------------------------
def _filter_data(seed=8, n=300):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, 6))
    X[:, 0] += y
    X[:, 1] = X[:, 0] + 0.1 * rng.standard_normal(n)  # redundant copy
    X[:, 3] += 0.5 * (y == 2)
    codes = np.column_stack(
        [np.where(rng.random(n) < 0.6, y, rng.integers(0, 3, n)), rng.integers(0, 3, (n, 3))]
    )
    codes[:, 2] = np.where(rng.random(n) < 0.9, codes[:, 0], codes[:, 2])
    return X, codes, y


def test_filter_nb_support_matches_filter_functions():
    X, codes, y = _filter_data()
    rel = np.asarray(flt.mutual_information_gaussian(X, y, 3))
    rho = np.abs(np.corrcoef(X.T))
    red = -0.5 * np.log(np.maximum(1 - rho**2, np.finfo(float).tiny))

    def mask(idx, p):
        out = np.zeros(p, bool)
        out[np.asarray(idx)] = True
        return out

    est = FilterNB("mi", k=3).fit(X, y)
    np.testing.assert_array_equal(est.support_, mask(np.argsort(-rel)[:3], 6))
    np.testing.assert_allclose(est.scores_, rel, rtol=1e-6)
    est = FilterNB("mrmr", k=3).fit(X, y)
    np.testing.assert_array_equal(est.ranking_, np.asarray(flt.mrmr(rel, red, 3)))
    assert not (est.support_[0] and est.support_[1])  # the redundant copy is not picked twice
    est = FilterNB("cfs").fit(X, y)
    sel, _ = flt.cfs(
        flt.class_correlation_continuous(X, y, 3), flt.feature_correlation_continuous(X)
    )
    np.testing.assert_array_equal(est.support_, mask(sel, 6))
    est = FilterNB("threshold", threshold=0.05).fit(X, y)
    np.testing.assert_array_equal(est.support_, rel > 0.05)

    info = flt.information_matrices(codes, y, (3, 3, 3, 3), 3)
    est = FilterNB("cmim", k=2).fit(codes, y)
    ref = flt.cmim(info.relevance, info.conditional_relevance, 2)
    np.testing.assert_array_equal(est.ranking_, np.asarray(ref))
    est = FilterNB("cfs").fit(codes, y)
    sel, _ = flt.cfs(*flt.symmetric_uncertainty_discrete(codes, y, (3, 3, 3, 3), 3))
    np.testing.assert_array_equal(est.support_, mask(sel, 4))
    assert est.n_selected_ == len(sel)
    # NB on the selected columns = FilterNB (the mask drops the others' terms exactly)
    ref = NaiveBayes().fit(codes[:, sel], y)
    np.testing.assert_allclose(
        est.predict_log_proba(codes), ref.predict_log_proba(codes[:, sel]), rtol=1e-10
    )


def test_filter_nb_probe_rule_keeps_relevant_predictors():
    X, _, y = _filter_data()
    est = FilterNB("mi").fit(X, y)  # k=None: random-probe rule (L1NB §6.1)
    assert est.support_[[0, 1, 3]].all()

    def gaussian_mi(V):  # ½[log σ² − Σ_c p(c) log σ_c²], MLE variances + each column's floor
        floor = 1e-9 * V.var(0) + np.finfo(float).tiny
        within = sum(np.mean(y == c) * np.log(V[y == c].var(0) + floor) for c in range(3))
        return 0.5 * (np.log(V.var(0) + floor) - within)

    # the rule: keep X_i iff I(X_i; C) >= the largest MI of 3 standard normal probes drawn from
    # default_rng(random_state) (after an empty draw of discrete probes)
    rng = np.random.default_rng(0)
    rng.integers(0, 5, (len(y), 0))
    rel = gaussian_mi(X)
    probe_max = gaussian_mi(rng.standard_normal((len(y), 3))).max()
    np.testing.assert_allclose(est.scores_, rel, rtol=1e-10)
    np.testing.assert_array_equal(est.support_, rel >= probe_max)
    np.testing.assert_array_equal(est.support_, [True, True, True, True, False, False])
    assert not est.support_[[4, 5]].any()  # noise columns below the probes are dropped
    np.testing.assert_array_equal(est.ranking_, [0, 1, 3, 2])  # selected, by relevance


@pytest.mark.parametrize("name", ["mi", "mrmr", "cmim", "cfs", "threshold"])
def test_filter_nb_weights_are_repetitions_with_a_fixed_k(name):
    """With ``k`` given (or no probes: CFS, threshold), integer sample weights equal repeated
    rows and weight 0 a removed row (scikit-learn's own check). With ``k=None`` the random probes
    are drawn per training row, so repeated rows draw different probes and the same check fails
    for "mi", "mrmr" and "cmim" (documented in `FilterNB`)."""
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data

    k = None if name in ("cfs", "threshold") else 2
    check_sample_weight_equivalence_on_dense_data("FilterNB", FilterNB(name, k=k))


def test_filter_wrapper_picks_best_nested_subset():
    X, _, y = _filter_data()
    est = FilterWrapperNB(cv=4).fit(X, y)
    k = est.n_selected_
    assert est.cv_error_.shape == (7,)
    assert est.cv_error_[k] == est.cv_error_.min()
    assert (est.cv_error_[:k] > est.cv_error_[k]).all()  # ties go to the smaller subset
    np.testing.assert_array_equal(np.flatnonzero(est.support_), np.sort(est.ranking_[:k]))
    np.testing.assert_array_equal(est.ranking_, np.argsort(-est.scores_, kind="stable"))
    # every nested subset ranking_[:j], j = 0..6: Gaussian NB (float64 NumPy: class MLE means and
    # variances + 1e-9 x the fold's overall variance, empirical prior) refitted on each stratified
    # training fold (seed 0) and scored on the held-out fold; j = 0 predicts the majority class
    folds = stratified_folds(y, 4, 0)
    ref = np.zeros(7)
    for f in range(4):
        Xtr, ytr, Xte, yte = X[folds != f], y[folds != f], X[folds == f], y[folds == f]
        floor = 1e-9 * Xtr.var(0)
        terms = np.stack(  # (n_te, p, c) per-predictor log densities
            [
                -0.5 * np.log(2 * np.pi * (Xtr[ytr == c].var(0) + floor))
                - 0.5 * (Xte - Xtr[ytr == c].mean(0)) ** 2 / (Xtr[ytr == c].var(0) + floor)
                for c in range(3)
            ],
            axis=-1,
        )
        log_prior = np.log(np.bincount(ytr) / len(ytr))
        for j in range(7):
            scores = log_prior + terms[:, est.ranking_[:j]].sum(1)
            ref[j] += np.sum(scores.argmax(1) != yte)
    np.testing.assert_allclose(est.cv_error_, ref / len(y), rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------------------
# API: clone, validation, registry
# --------------------------------------------------------------------------------------------------
def test_sklearn_clone_roundtrip():
    base = pytest.importorskip("sklearn.base")
    X, y = bimodal(60, seed=9)
    for est in (
        TAN(kind="gaussian", root=1),
        GaussianSemiNaiveNB(validation_fraction=0.4),
        FlexibleNB(h=0.5),
        ParzenNB(chunk_size=16),
        FlexibleTAN(structure="gaussian"),
        FilterNB("mi", k=1),
        FilterWrapperNB(cv=3),
    ):
        twin = base.clone(est)
        assert twin is not est and twin.get_params() == est.get_params()
        assert base.is_classifier(twin)
    fitted = FilterNB("mi", k=1).fit(X, y)
    twin = base.clone(fitted)
    assert not hasattr(twin, "classes_") and twin.get_params() == fitted.get_params()
    np.testing.assert_array_equal(twin.fit(X, y).predict(X), fitted.predict(X))


def test_wrong_kind_errors():
    X, codes, y = _filter_data(n=60)
    mixed = np.empty((60, 2), object)
    mixed[:, 0], mixed[:, 1] = codes[:, 0], X[:, 0]
    with pytest.raises(ValueError, match="only discrete columns"):
        FlexibleNB().fit(codes, y)
    with pytest.raises(ValueError, match="only discrete columns"):
        ParzenNB().fit(codes, y)
    with pytest.raises(ValueError, match="only discrete columns"):
        FlexibleTAN().fit(codes, y)
    with pytest.raises(ValueError, match="continuous predictors only"):
        GaussianSemiNaiveNB().fit(mixed, y)
    with pytest.raises(ValueError, match=r"kind='gaussian'\) needs continuous"):
        TAN(kind="gaussian").fit(codes, y)
    with pytest.raises(ValueError, match=r"kind='discrete'\) needs discrete"):
        TAN(kind="discrete").fit(X, y)
    with pytest.raises(ValueError, match="mixed data"):
        TAN().fit(mixed, y)
    # discrete="none" turns integer columns into continuous ones: then the KDE applies
    assert FlexibleNB(discrete="none").fit(codes.astype(float), y).n_selected_ == 4


@pytest.mark.parametrize(
    "est, name",
    [
        (TAN(kind="tree"), "kind"),
        (TAN(alpha=-1), "alpha"),
        (TAN(root=-1), "root"),
        (GaussianSemiNaiveNB(search="forward"), "search"),
        (GaussianSemiNaiveNB(validation_fraction=1.0), "validation_fraction"),
        (FlexibleNB(h=0.0), "h"),
        (ParzenNB(chunk_size=0), "chunk_size"),
        (FlexibleNB(chunk_size="large"), "chunk_size"),
        (FlexibleTAN(structure="mst"), "structure"),
        (FilterNB(filter="lasso"), "filter"),
        (FilterNB(k=0), "k"),
        (FilterNB("mi", k=9), "k"),
        (FilterNB(n_bins=1), "n_bins"),
        (FilterWrapperNB(filter="cfs"), "filter"),
        (FilterWrapperNB(cv=1), "cv"),
    ],
)
def test_bad_hyperparameters_name_the_argument(est, name):
    X, _, y = _filter_data(n=40)
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        est.fit(X, y)


def test_register_methods_kinds():
    got = {}
    register_methods(lambda name, factory, description, kinds: got.update({name: (factory, kinds)}))
    assert set(got) == {"TAN", "SemiNaive", "FlexibleNB", "Parzen", "CFS+NB", "MI+NB", "mRMR+NB"}
    assert got["TAN"][1] == ("discrete", "continuous")
    assert got["SemiNaive"][1] == ("continuous",)
    assert "discrete" not in got["FlexibleNB"][1] and "mixed" in got["Parzen"][1]
    for factory, kinds in got.values():
        for kind in kinds:
            assert hasattr(factory(kind), "fit")


# --------------------------------------------------------------------------------------------------
# units: the Gaussian variance floor is per predictor
# --------------------------------------------------------------------------------------------------
def _rescale_first(X, scale=1e6, shift=1e7):
    Z = X.copy()
    Z[:, 0] = Z[:, 0] * scale + shift
    return Z


def test_gaussian_tan_is_invariant_to_one_columns_units():
    # the floor was var_smoothing * max_i Var(X_i) for every predictor: one column with spread 1e6
    # floored the unit-scale columns' variances at ~1e3 and flattened their terms (training error
    # 0.20 -> 0.47 on a 3-class problem); now each predictor's floor follows its own variance
    X, y = gaussian_tree_runs(1, 300, seed=3)
    X, y = X[0], y[0]
    a = TAN(kind="gaussian").fit(X, y)
    b = TAN(kind="gaussian").fit(_rescale_first(X), y)
    np.testing.assert_array_equal(a.tree_, b.tree_)
    np.testing.assert_allclose(b.predict_proba(_rescale_first(X)), a.predict_proba(X), atol=1e-7)


@pytest.mark.parametrize("name", ["mi", "mrmr"])
def test_filter_relevance_is_invariant_to_one_columns_units(name):
    X, _, y = _filter_data()
    a = FilterNB(name, k=3).fit(X, y)
    b = FilterNB(name, k=3).fit(_rescale_first(X), y)
    np.testing.assert_allclose(b.scores_, a.scores_, rtol=1e-6)
    np.testing.assert_array_equal(b.support_, a.support_)
    assert a.scores_[3] > 0.05  # a relevant unit-scale column keeps its relevance


def test_var_floor_shape_is_checked():
    import jaxnb.methods.structure as S

    X, y = gaussian_tree_runs(1, 50, seed=4)
    with pytest.raises(ValueError, match=r"var_floor must be a scalar or have one entry per"):
        S.fit_gaussian_tan(X[0], y[0], TREE, 2, var_floor=np.full(3, 1e-9))
    with pytest.raises(ValueError, match=r"var_floor must be a scalar or have one entry per"):
        flt.mutual_information_gaussian(X[0], y[0], 2, var_floor=np.full(3, 1e-9))
    # one floor per column: the column's own floor is used
    lo = S.fit_gaussian_tan(X[0], y[0], TREE, 2, var_floor=np.array([0, 0, 0, 0, 1e3]))
    assert np.all(np.asarray(lo.var)[:, 4] == 1e3) and np.all(np.asarray(lo.var)[:, :4] < 2)
