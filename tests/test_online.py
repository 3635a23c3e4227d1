"""Online (weighted) NB on stream summaries: SGD vs a NumPy loop, NB equivalence, prequential."""

import numpy as np
import optax
import pytest

import jaxnb
from jaxnb.discretize import modl_cuts_from_counts
from jaxnb.stream import online
from jaxnb.stream.online import OnlineNB, OnlineWeightedNB
from jaxnb.stream.prequential import prequential, prequential_jit
from jaxnb.stream.simulate import StreamSpec, bayes_error, bayes_predict, make_rows
from jaxnb.stream.summaries import CPiD


def _data(seed=0, n=40, p=4, c=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    X = rng.normal(size=(n, p)) + y[:, None] * np.linspace(0.5, -0.5, p)[None, :]
    return X, y


def _ref_sgd(X, y, c, *, lr, batch, warmup, var_smoothing, prior_smoothing, standardize=True):
    """Stream eq. 2-4 row by row in float64 NumPy: summaries first, then the SGD step; with
    `standardize` the Gaussian terms are those of x / s (s the pooled sd of the rows so far)."""
    n, p = X.shape
    w, b = np.ones((p, c)), np.zeros(c)
    for start in range(0, n, batch):
        seen_X, seen_y = X[: start + batch], y[: start + batch]
        counts = np.bincount(seen_y, minlength=c).astype(float)
        pmean, pvar = seen_X.mean(0), seen_X.var(0)
        mean = np.stack([seen_X[seen_y == k].mean(0) if counts[k] else pmean for k in range(c)])
        var = np.stack([seen_X[seen_y == k].var(0) if counts[k] else pvar for k in range(c)])
        var = np.maximum(var + var_smoothing * pvar, 1e-12)
        log_prior = np.log(counts + prior_smoothing) - np.log(counts.sum() + c * prior_smoothing)
        xb, yb = X[start : start + batch], y[start : start + batch]
        L = -0.5 * (
            np.log(2 * np.pi)
            + np.log(var.T)[None]
            + (xb[:, :, None] - mean.T[None]) ** 2 / var.T[None]
        )
        if standardize:
            L = L + np.where(pvar > 0, 0.5 * np.log(np.where(pvar > 0, pvar, 1)), 0)[None, :, None]
        if counts.min() < warmup:
            continue
        H = log_prior + b + np.einsum("rik,ik->rk", L, w)
        P = np.exp(H - H.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
        dH = P - np.eye(c)[yb]
        w = w - lr * np.einsum("rk,rik->ik", dH, L) / len(yb)
        b = b - lr * dH.mean(0)
    return w, b


@pytest.mark.parametrize("standardize", [True, False])
@pytest.mark.parametrize("batch", [1, 8])
def test_sgd_matches_numpy_loop(batch, standardize):
    X, y = _data(n=48)
    X = X * [1.0, 3.0, 0.2, 40.0]  # columns in different units: the offsets differ
    kw = dict(
        learning_rate=0.05, batch_size=batch, warmup=3, var_smoothing=1e-2, prior_smoothing=1.0
    )
    est = OnlineWeightedNB(standardize=standardize, **kw).fit(X, y)
    w, b = _ref_sgd(
        X,
        y,
        3,
        lr=0.05,
        batch=batch,
        warmup=3,
        var_smoothing=1e-2,
        prior_smoothing=1.0,
        standardize=standardize,
    )
    assert int(est.state_.n_steps) > 3
    np.testing.assert_allclose(est.weights_, w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.bias_, b, rtol=1e-9, atol=1e-12)
    assert np.abs(w - 1).max() > 1e-3  # the weights did move


def test_partial_fit_pieces_equal_one_pass():
    X, y = _data(n=48)
    a = OnlineWeightedNB(learning_rate=0.05, warmup=3).fit(X, y)
    b = OnlineWeightedNB(learning_rate=0.05, warmup=3)
    for s in range(0, 48, 13):
        b.partial_fit(X[s : s + 13], y[s : s + 13], classes=[0, 1, 2])
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-10)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-10)


def test_optax_optimizer_and_weights_first_run():
    X, y = _data(n=64)
    est = OnlineWeightedNB(optimizer=optax.adam(1e-2), order="weights_first", warmup=2).fit(X, y)
    P = est.predict_proba(X)
    np.testing.assert_allclose(P.sum(1), 1.0, rtol=1e-12)
    assert est.weights_.shape == (4, 3) and np.isfinite(est.weights_).all()


@pytest.mark.parametrize("chunk", [1, None])
def test_online_nb_gaussian_equals_naive_bayes(chunk):
    X, y = _data(n=200, p=5, c=3, seed=3)
    ref = jaxnb.NaiveBayes(var_smoothing=1e-3).fit(X, y)
    ref_lp = ref.predict_log_proba(X)
    est = OnlineNB(var_smoothing=1e-3, prior_smoothing=0.0, summary_chunk=chunk)
    for s in range(0, 200, 70):
        est.partial_fit(X[s : s + 70], y[s : s + 70], classes=[0, 1, 2])
    np.testing.assert_allclose(est.predict_log_proba(X), ref_lp, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("chunk", [1, None])
def test_online_nb_equals_naive_bayes_for_columns_in_small_units(chunk):
    """Variance floors are relative (var_smoothing x the pooled variance), so the units of a
    column do not matter. An absolute floor of 1e-12 on the online variances used to swamp
    columns of spread ~1e-6 and below: probabilities off by up to 0.5 (NaiveBayes was right)."""
    X, y = _data(n=200, p=5, c=3, seed=3)
    for scale in (1e-6, 1e-12):
        Z = X * scale
        ref = jaxnb.NaiveBayes().fit(Z, y)
        est = OnlineNB(prior_smoothing=0.0, summary_chunk=chunk).fit(Z, y)
        np.testing.assert_allclose(
            est.predict_log_proba(Z), ref.predict_log_proba(Z), rtol=1e-9, atol=1e-9
        )
        np.testing.assert_allclose(
            est.predict_proba(Z),
            OnlineNB(prior_smoothing=0.0).fit(X, y).predict_proba(X),
            atol=1e-9,
        )


def test_second_level_with_level1_cuts_is_level1():
    X, y = _data(n=300, p=3, c=2, seed=1)
    s = CPiD.init(2, 3, n_intervals=12, chunk_size=16).update(X, y)
    L1 = np.asarray(s.log_prob(X))
    L2 = np.asarray(online.log_contributions(s, s.breaks, X))
    np.testing.assert_allclose(L2, L1, rtol=1e-12)


@pytest.mark.parametrize("summary", ["cpid", "gkclass"])
def test_binned_summaries_modl_refresh(summary):
    # blocks of 16 rows (GKClass compiles faster than with its default 64): refreshes after 192,
    # 384 and 576 rows, so the final cuts are MODL on the final summary's bins
    X, y = _data(n=576, p=3, c=2, seed=2)  # predictors 0 and 2 depend on the class, 1 is noise
    est = OnlineNB(
        summary=summary,
        summary_chunk=16,
        summary_size=20,
        second_level="modl",
        refresh_every=192,
    )
    est.fit(X, y)
    cuts = np.asarray(est.state_.cuts)
    assert cuts.shape == (3, 19)
    finite = np.isfinite(cuts)
    assert finite[0].any() and finite[2].any() and not finite[1].any()
    cu1, co1 = (np.asarray(a) for a in est.state_.summary.bins())
    ref = modl_cuts_from_counts(cu1, co1)
    for i in range(3):
        np.testing.assert_allclose(cuts[i, finite[i]], ref[i], rtol=1e-12, err_msg=f"{i=}")
    # the posterior from the MODL intervals in NumPy: level-1 bin b = (cu[b-1], cu[b]] lies in
    # interval #{cuts < cu[b]}; log P(interval | k) Laplace-smoothed, prior smoothed by 1
    n_k = co1[0].sum(0)
    joint = np.log(n_k + 1.0) - np.log(n_k.sum() + 2.0) + np.zeros((len(y), 1))
    for i in range(3):
        upper = np.append(cu1[i], np.inf)
        inter = np.zeros((len(ref[i]) + 1, 2))
        np.add.at(inter, np.searchsorted(ref[i], upper, "left"), co1[i])
        lp = np.log(inter + 1.0) - np.log(n_k + len(inter))
        joint += lp[np.searchsorted(ref[i], X[:, i], "left")]
    post = joint - np.logaddexp(joint[:, 0], joint[:, 1])[:, None]
    np.testing.assert_allclose(est.predict_log_proba(X), post, rtol=1e-10, atol=1e-12)
    assert est.score(X, y) > 0.55


def test_wnb_beats_nb_with_redundant_predictors():
    spec = StreamSpec(
        n_predictors=20,
        n_relevant=6,
        n_redundant=10,
        redundant_sources=2,
        signal=1.2,
        weakest=0.15,
        n_examples=20_000,
        n_test=4_000,
        chunk_rows=2_000,
        seed=3,
    )
    Xte, yte = make_rows(spec, 0, 4_000)
    X, y = make_rows(spec, 4_000, 20_000)
    nb = OnlineNB().fit(X, y).score(Xte, yte)
    wnb = OnlineWeightedNB(learning_rate=1e-3).fit(X, y).score(Xte, yte)
    bayes = 1 - bayes_error(spec)
    assert abs(np.mean(bayes_predict(spec, Xte) == yte) - bayes) < 0.02
    assert wnb > nb + 0.01, (wnb, nb, bayes)


class _Constant:
    """Predicts class 0; counts what it was taught."""

    def __init__(self):
        self.learned = 0

    def predict(self, X):
        return np.zeros(len(X), int)

    def partial_fit(self, X, y, classes=None):
        self.learned += len(X)
        return self


def test_prequential_bookkeeping():
    y = np.array([0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0])
    X = np.zeros((11, 2))
    m = _Constant()
    res = prequential(m, X, y, batch_size=3, report_every=6, verbose=False)
    assert m.learned == 11
    assert res.n_tested == 8 and res.n_correct == int((y[3:] == 0).sum())
    np.testing.assert_array_equal(res.n_seen, [6, 11])
    np.testing.assert_allclose(res.accuracy, [(y[3:6] == 0).mean(), (y[3:] == 0).mean()])


def test_prequential_jit_is_test_then_train():
    X, y = _data(n=60, p=3, c=2, seed=5)
    est = OnlineWeightedNB(learning_rate=0.02, warmup=2)
    ok = est.prequential_correct(X, y, classes=[0, 1])
    for r in (7, 23, 41, 59):
        past = OnlineWeightedNB(learning_rate=0.02, warmup=2).fit(X[:r], y[:r], classes=[0, 1])
        assert ok[r] == (past.predict(X[r : r + 1])[0] == y[r])
    res = prequential_jit(
        OnlineWeightedNB(learning_rate=0.02, warmup=2), X, y, report_every=25, verbose=False
    )
    assert res.n_tested == 59 and res.n_correct == int(ok[1:].sum())
    np.testing.assert_array_equal(res.n_seen, [25, 50, 60])


def test_prequential_refuses_a_fitted_model_unless_warm_start():
    """Both drivers train the model in place: a second run on the same object continued from the
    first run's model (and scored its accuracy on top of it). It is refused now; warm_start=True
    continues a fitted model on purpose and tests its first block too."""
    X, y = _data(n=60, p=3, c=2, seed=7)
    m = _Constant()
    prequential(m, X, y, batch_size=10, report_every=60, verbose=False)
    m.coef_ = 0  # what a fitted scikit-learn model has
    with pytest.raises(ValueError, match=r"model is already fitted \(this _Constant has coef_\)"):
        prequential(m, X, y, batch_size=10, report_every=60, verbose=False)
    res = prequential(m, X, y, batch_size=10, report_every=60, verbose=False, warm_start=True)
    assert res.n_tested == 60 and res.n_correct == int((y == 0).sum())
    with pytest.raises(TypeError, match="warm_start must be True or False"):
        prequential(_Constant(), X, y, verbose=False, warm_start="yes")
    for run in (
        lambda mm, **kw: prequential(mm, X, y, batch_size=1, report_every=60, verbose=False, **kw),
        lambda mm, **kw: prequential_jit(mm, X, y, report_every=60, verbose=False, **kw),
    ):
        est = OnlineNB()
        first = run(est)
        assert first.n_tested == 59
        with pytest.raises(ValueError, match="OnlineNB has classes_, n_features_in_, n_seen_"):
            run(est)
        # warm: every row is tested, each by the model that has seen the earlier run and rows
        warm = run(est, warm_start=True)
        assert warm.n_tested == 60 and est.n_seen_ == 120
        ref = OnlineNB().fit(X, y)
        assert warm.n_correct == int(ref.prequential_correct(X, y).sum())
    # a warm model keeps its own classes_ when the stream lacks one of them
    est = OnlineNB().fit(X, y)
    prequential(est, X[y == 0], y[y == 0], batch_size=5, verbose=False, warm_start=True)
    assert est.classes_.tolist() == [0, 1]


def test_prequential_mixed_type_labels_equal_integer_codes():
    """Labels of mixed Python types (0 and "a") are sorted like the estimators sort them; both
    prequential drivers give exactly the run on the integer codes 0/1 (0 sorts before "a")."""
    X, y = _data(n=60, p=3, c=2, seed=6)
    mixed = np.array([0 if v == 0 else "a" for v in y], dtype=object)
    for run in (
        lambda yy: prequential(OnlineNB(), X, yy, batch_size=10, report_every=20, verbose=False),
        lambda yy: prequential_jit(OnlineNB(), X, yy, report_every=20, verbose=False),
    ):
        want, got = run(y), run(mixed)
        assert 0 < want.n_correct < want.n_tested
        assert (got.n_correct, got.n_tested) == (want.n_correct, want.n_tested)
        np.testing.assert_array_equal(got.accuracy, want.accuracy)
    with pytest.raises(ValueError, match="y contains NaN"):
        prequential(OnlineNB(), X, np.where(np.arange(60) == 3, np.nan, y), verbose=False)


def test_validation_errors():
    X, y = _data(n=10)
    with pytest.raises(ValueError, match="summary must be"):
        OnlineWeightedNB(summary="kde").fit(X, y)
    with pytest.raises(ValueError, match="multiple of batch_size"):
        OnlineWeightedNB(batch_size=4, summary_chunk=6).fit(X, y)
    est = OnlineWeightedNB().fit(X, y)
    with pytest.raises(ValueError, match="not in classes_"):
        est.partial_fit(X, y + 5)
    with pytest.raises(ValueError, match="not fitted"):
        OnlineNB().predict(X)


@pytest.mark.parametrize(
    "kw",
    [
        {},  # row-by-row path
        {"batch_size": 8},  # block step
        {"order": "weights_first"},
        {"optimizer": optax.adam(1e-2)},
    ],
    ids=["rows", "batch8", "weights_first", "adam"],
)
def test_weighted_nb_does_not_depend_on_the_columns_units(kw):
    """Rescaling a Gaussian column shifts its log densities by -log(scale) in every class; the
    per-class weights made that a class-dependent shift that one pass of SGD did not absorb: in
    m or in km (x 1e-3) the raw model's probabilities differed by 0.44 at learning rate 1e-2 (and
    its accuracy by 3 points). Standardized terms (the default) make the whole path unit-free."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 600)
    X = rng.normal(size=(600, 4)) + np.c_[y, -y, 0.5 * y, np.zeros(600)]
    units = np.array([1e-3, 1.0, 1e3, 7.0])
    lr = {} if "optimizer" in kw else {"learning_rate": 1e-2}
    P = OnlineWeightedNB(**lr, **kw).fit(X, y).predict_proba(X)
    m = OnlineWeightedNB(**lr, **kw).fit(X * units, y)
    np.testing.assert_allclose(m.predict_proba(X * units), P, atol=1e-9)
    # the prequential (test-then-train) run too
    ok = OnlineWeightedNB(**lr, **kw).prequential_correct(X, y)
    np.testing.assert_array_equal(
        OnlineWeightedNB(**lr, **kw).prequential_correct(X * units, y), ok
    )
    raw = OnlineWeightedNB(standardize=False, **lr, **kw)
    gap = np.abs(raw.fit(X * units, y).predict_proba(X * units) - raw.fit(X, y).predict_proba(X))
    assert gap.max() > 0.02  # the paper's raw terms: the units matter


def test_standardize_is_checked_and_fixed_for_a_stream():
    X, y = _data(n=40)
    with pytest.raises(TypeError, match="standardize must be True or False"):
        OnlineWeightedNB(standardize="yes").fit(X, y)
    m = OnlineWeightedNB().partial_fit(X[:20], y[:20], classes=[0, 1, 2])
    m.set_params(standardize=False)
    with pytest.raises(ValueError, match="standardize changed since the state was created"):
        m.partial_fit(X[20:], y[20:])
    # OnlineNB (w = 1): the offset would be the same for every class; its terms stay the densities
    nb = OnlineNB(prior_smoothing=0.0).fit(X, y)
    ref = jaxnb.NaiveBayes(discrete="none").fit(X, y)
    np.testing.assert_allclose(
        nb.predict_joint_log_proba(X), ref.predict_joint_log_proba(X), rtol=1e-9
    )
