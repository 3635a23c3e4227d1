"""A second fit on new data of the same shapes must not compile anything.

Every estimator's hot path is a module-level jitted function, so refitting (a CV loop, a sweep of
estimators, a notebook rerun) reuses the compiled programs. A jit of a closure created inside
`fit` silently recompiles on every call (this caught two: `StagewiseNB(selection="cv")`, ~1 s per
fit, and `GaussianSemiNaiveNB`, ~0.8 s per fit, on 300-row problems). Compilations are counted
with JAX's backend-compile monitoring event (the ``compiles`` fixture of conftest.py).
"""

import contextlib
import pickle

import numpy as np
import pytest

import jaxnb
from jaxnb.stream import anb, online


def _data(kind, seed):
    rng = np.random.default_rng(seed)
    n, p = 120, 5
    y = rng.integers(0, 3, n)
    if kind == "D":
        X = rng.integers(0, 3, (n, p))
        X[:, 0] = np.where(rng.random(n) < 0.7, y, X[:, 0])
        X[:, 1] = np.where(rng.random(n) < 0.5, y, X[:, 1])
        return X, y, dict(discrete="all", n_states=[3] * p)
    X = rng.normal(size=(n, p)) + 0.8 * y[:, None] * (np.arange(p) < 3)
    return X, y, dict(discrete="none")


CASES = [
    ("NaiveBayes", {}, "D"),
    ("NaiveBayes", {}, "C"),
    ("StagewiseNB", {"epsilon": 0.1}, "D"),
    ("StagewiseNB", {"epsilon": 0.1, "selection": "cv", "n_folds": 3}, "D"),
    ("SelectiveNB", {}, "D"),
    ("SelectiveNB", {"direction": "forward_backward", "validation_fraction": 0.3}, "C"),
    ("GroupLassoNB", {"n_penalties": 4}, "D"),
    ("GroupLassoNB", {"n_penalties": 4, "selection": "cv", "cv": 3}, "C"),
    ("L1NB", {}, "C"),
    ("WeightedNB", {}, "D"),
    ("WeightedNB", {"scheme": "ferreira"}, "C"),
    ("TAN", {}, "D"),
    ("GaussianSemiNaiveNB", {}, "C"),
    ("GaussianSemiNaiveNB", {"search": "backward"}, "C"),
    ("FlexibleNB", {}, "C"),
    ("ParzenNB", {}, "C"),
    ("FlexibleTAN", {}, "C"),
    ("FilterNB", {}, "D"),
    ("FilterNB", {"filter": "mrmr", "k": 3}, "C"),
    ("FilterWrapperNB", {"filter": "cmim", "cv": 3}, "D"),
    ("WeightedNB", {"scheme": "gradient"}, "C"),
    # Adam at a fixed rate ends at its step cap (a ConvergenceWarning, asserted below)
    ("WeightedNB", {"scheme": "gradient", "solver": "adam", "max_steps": 500}, "D"),
    ("L1NB", {"selection": "validation"}, "C"),
    ("TAN", {}, "C"),
    ("FlexibleTAN", {"structure": "gaussian"}, "C"),
    ("SelectiveNB", {"direction": "backward", "criterion": "log_loss"}, "D"),
    ("StagewiseNB", {"epsilon": 0.1, "step_rule": "eps", "criterion": "error_probability"}, "C"),
    ("AveragedNB", {}, "C"),
    ("OnlineWeightedNB", {}, "C"),
    ("OnlineNB", {}, "C"),
]


@pytest.mark.parametrize(("name", "options", "kind"), CASES, ids=lambda v: str(v))
def test_second_fit_and_predict_compile_nothing(name, options, kind, compiles):
    capped = options.get("solver") == "adam"  # warns at its step cap; nothing else warns
    with pytest.warns(jaxnb.ConvergenceWarning) if capped else contextlib.nullcontext():
        _second_fit_and_predict_compile_nothing(name, options, kind, compiles)


def _second_fit_and_predict_compile_nothing(name, options, kind, compiles):
    cls = getattr(jaxnb, name, None) or getattr(anb, name, None) or getattr(online, name)
    X0, y0, kw = _data(kind, 0)
    if cls.__module__.startswith("jaxnb.stream"):
        kw = {}  # stream estimators find the column kinds themselves
    cls(**kw, **options).fit(X0, y0).predict(X0)  # compiles
    X1, y1, _ = _data(kind, 1)
    before = compiles.n
    model = cls(**kw, **options).fit(X1, y1)
    pred = model.predict(X1)
    assert compiles.n == before, f"{name}{options}: {compiles.n - before} compilation(s) on refit"
    assert pred.shape == y1.shape and np.mean(pred == y1) > 0.4  # and the fit is a real one
    # a pickled copy predicts the same, with the programs already compiled
    proba = model.predict_proba(X1)
    before = compiles.n
    twin = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(twin.predict_proba(X1), proba)
    np.testing.assert_array_equal(twin.predict(X1), pred)
    assert compiles.n == before, f"{name}{options}: {compiles.n - before} compilation(s) unpickled"


@pytest.mark.parametrize(
    ("name", "kind"),
    [("NaiveBayes", "D"), ("GroupLassoNB", "C"), ("FlexibleNB", "C"), ("StagewiseNB", "D")],
)
def test_new_row_counts_share_compilations_and_give_the_same_scores(name, kind, compiles):
    """Prediction pads the rows to a few bucket sizes: 20 consecutive test-set sizes compile at
    most two programs per scorer (each size used to compile its own), and the padded rows change
    nothing (scores equal those of the rows inside a larger batch)."""
    from jaxnb.estimators import _row_bucket

    X, y, kw = _data(kind, 2)
    model = getattr(jaxnb, name)(**kw).fit(X, y)
    full = model.predict_log_proba(X)
    model.predict_log_proba(X[:50])
    before = compiles.n
    for k in range(51, 71):
        np.testing.assert_allclose(model.predict_log_proba(X[:k]), full[:k], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(model.predict(X[:k]), model.classes_[full[:k].argmax(1)])
    buckets = {_row_bucket(k) for k in range(51, 71)}
    assert buckets == {64, 80}
    assert compiles.n - before <= 2 * len(buckets), compiles.n - before


def test_row_bucket_sizes():
    from jaxnb.estimators import _BUCKET_MAX_ROWS, _row_bucket

    assert [_row_bucket(n) for n in (1, 16, 17, 33, 1000, 3000)] == [16, 16, 32, 48, 1024, 3072]
    for n in range(1, 5000, 7):
        assert 0 <= _row_bucket(n) - n < max(16, n // 8 + 1)  # at most 1/8 (or 15 rows) of padding
    assert _row_bucket(_BUCKET_MAX_ROWS + 1) == _BUCKET_MAX_ROWS + 1  # large inputs: no copy


def test_naive_bayes_training_sizes_share_compilations_and_statistics(compiles):
    """NaiveBayes.fit pads the training rows to the prediction buckets with zero-weight copies of
    the first row: the statistics equal those of the rows alone, including far from the origin
    (where a centring pulled towards padded zeros would lose digits), and nearby sizes share one
    program."""
    from jaxnb import fit_stats

    rng = np.random.default_rng(5)
    X = np.c_[rng.integers(0, 3, (60, 2)), 1e4 + rng.normal(size=(60, 2))]
    y = rng.integers(0, 2, 60)
    for n in (3, 37, 60):
        model = jaxnb.NaiveBayes(discrete=[0, 1]).fit(X[:n], y[:n])
        ref = fit_stats(
            X[:n, :2].astype(np.int32), X[:n, 2:], y[:n], np.ones(n), n_states=(3, 3), n_classes=2
        )
        got = model.stats_
        np.testing.assert_array_equal(got.class_weight, ref.class_weight)
        np.testing.assert_array_equal(got.counts[: ref.counts.shape[0]], ref.counts)
        np.testing.assert_allclose(got.mean, ref.mean, rtol=1e-14)
        np.testing.assert_allclose(got.m2, ref.m2, rtol=1e-9, atol=1e-9)
    jaxnb.NaiveBayes(discrete=[0, 1]).fit(X[:49], y[:49])  # bucket 64
    before = compiles.n
    for n in range(50, 60):
        jaxnb.NaiveBayes(discrete=[0, 1]).fit(X[:n], y[:n])
    assert compiles.n == before


SEARCH_CASES = [
    ("StagewiseNB", {"epsilon": 0.1}, "C"),
    (
        "StagewiseNB",
        {"epsilon": 0.1, "selection": "cv", "n_folds": 3, "criterion": "log_loss"},
        "D",
    ),
    ("SelectiveNB", {"criterion": "log_loss"}, "C"),
    ("SelectiveNB", {"direction": "forward_backward", "validation_fraction": 0.3}, "D"),
]


@pytest.mark.parametrize(("name", "options", "kind"), SEARCH_CASES, ids=lambda v: str(v))
def test_search_estimators_pad_training_rows_without_changing_the_model(
    name, options, kind, compiles, monkeypatch
):
    """StagewiseNB and SelectiveNB pad their training rows like NaiveBayes (zero-weight rows; folds
    and validation splits drawn on the real rows first): the fitted path equals an unpadded fit,
    and training sets of nearby sizes share compiled programs."""
    import jaxnb.estimators as est_mod

    X, y, kw = _data(kind, 11)
    make = lambda: getattr(jaxnb, name)(**options, **kw)  # noqa: E731
    for n in (101,):  # 11 padded rows (row bucket 112)
        padded = make().fit(X[:n], y[:n])
        with monkeypatch.context() as mp:
            mp.setattr(est_mod, "_row_bucket", lambda k: k)
            plain = make().fit(X[:n], y[:n])
        assert len(set(padded.path_) ^ set(plain.path_)) == 0
        for key, value in plain.path_.items():
            np.testing.assert_allclose(padded.path_[key], value, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(padded.predict(X), plain.predict(X))
        np.testing.assert_allclose(padded.predict_proba(X), plain.predict_proba(X), rtol=1e-10)
    # fit: row bucket 112, compiled above; predict: compiles its bucket-112 program here
    make().fit(X[:100], y[:100]).predict(X[:100])
    before = compiles.n
    for n in (98, 105, 112):
        make().fit(X[:n], y[:n]).predict(X[:n])
    assert compiles.n == before


def test_search_estimators_do_not_pad_above_the_row_cap(compiles, monkeypatch):
    """Above `_PAD_MAX_ROWS` a padded row costs search compute on every fit: no padding there, so
    each new training size compiles (here with the cap lowered to 60 rows)."""
    import jaxnb.estimators_search as search

    monkeypatch.setattr(search, "_PAD_MAX_ROWS", 60)
    X, y, kw = _data("C", 12)
    jaxnb.StagewiseNB(epsilon=0.1, **kw).fit(X[:58], y[:58])
    before = compiles.n
    jaxnb.StagewiseNB(epsilon=0.1, **kw).fit(X[:59], y[:59])  # padded to 64: shared program
    assert compiles.n == before
    jaxnb.StagewiseNB(epsilon=0.1, **kw).fit(X[:90], y[:90])
    before = compiles.n
    jaxnb.StagewiseNB(epsilon=0.1, **kw).fit(X[:91], y[:91])  # above the cap: its own program
    assert compiles.n > before


@pytest.mark.parametrize(
    ("name", "options", "kind", "budget"),
    [
        ("TAN", {}, "D", 5),
        ("L1NB", {}, "C", 7),
        ("L1NB", {"selection": "validation"}, "C", 8),
        ("StagewiseNB", {"epsilon": 0.1}, "D", 7),
        ("SelectiveNB", {}, "D", 7),
        ("GroupLassoNB", {"n_penalties": 4}, "C", 9),
        ("StagewiseNB", {"epsilon": 0.1, "selection": "cv", "n_folds": 3}, "D", 12),
        ("FilterWrapperNB", {"filter": "cmim", "cv": 3}, "D", 11),
        ("GaussianSemiNaiveNB", {}, "C", 7),
        ("FlexibleTAN", {}, "C", 6),
        ("FlexibleNB", {}, "C", 3),
        ("OnlineNB", {}, "N", 3),
        ("OnlineWeightedNB", {}, "N", 4),
        ("OnlineNB", {"summary": "gkclass"}, "N", 3),
        ("OnlineWeightedNB", {"summary": "cpid"}, "N", 4),
        ("WeightedNB", {"scheme": "gradient"}, "C", 7),
        ("GroupLassoNB", {"penalty": 0.05}, "C", 8),
        ("FilterNB", {"filter": "mrmr", "k": 3}, "M", 12),
    ],
    ids=[
        "TAN-discrete",
        "L1NB-aic",
        "L1NB-validation",
        "StagewiseNB",
        "SelectiveNB",
        "GroupLassoNB",
        "StagewiseNB-cv",
        "FilterWrapperNB-cv",
        "GaussianSemiNaiveNB",
        "FlexibleTAN",
        "FlexibleNB",
        "OnlineNB",
        "OnlineWeightedNB",
        "OnlineNB-gkclass",
        "OnlineWeightedNB-cpid",
        "WeightedNB-gradient",
        "GroupLassoNB-fixed",
        "FilterNB-mrmr-mixed",
    ],
)
def test_a_first_fit_compiles_few_programs(name, options, kind, budget, compiles):
    """Programs compiled by a first fit and a first prediction, counted as in a fresh process
    (`jax.clear_caches` first; programs from the persistent cache count too).

    Eager `jnp` steps between jitted ones compiled one small program each: a first TAN fit on
    discrete columns compiled 14 programs (7 for the diagonal mask of its mutual-information
    matrix), an L1NB fit 27-28 (the selection's row mask, arg-min/max and gathers, and the gather
    of B), StagewiseNB 14 and SelectiveNB 18 (eager indexing of the path and of the
    contributions' columns), GroupLassoNB 18 (the path's score shift and its chosen point), the
    CV searches of StagewiseNB and FilterWrapperNB 23 each (the folds' 0/1 indicators),
    GaussianSemiNaiveNB 9 (its validation weights and one-hot labels), FlexibleTAN 12 (the
    constant-column test of its root) and the online estimators 7-10 (their initial states
    filled by eager `jnp.zeros` / `jnp.full`). Then `jnp.asarray` of each host array compiled a
    staging program per shape and dtype (3-5 per fit; `jax.device_put` compiles none), and the
    kernel classifiers' first prediction 5-6 (the prior's broadcast, sum and additions,
    eagerly). Now 3, 5, 6, 5, 5, 6, 10, 9, 5, 4, 1, 1, 2, 1 and 2, and at most 2 for a first
    prediction (`test_prediction_compiles_its_scorer_only`). Later: the gradient WeightedNB
    compiled 27 (the standardizing offsets, ~23 eager steps), now 5; GroupLassoNB at a fixed
    penalty 9 (scalar conversions, the one-point path stacked eagerly), now 6; FilterNB's mRMR on
    mixed columns 20 (the joined relevance, binned codes and redundancy block), now 10. The
    budgets leave room for a JAX
    release that compiles one or two more of its own. Kind "N": continuous columns, no encoder
    options (the online estimators take none)."""
    import jax

    X, y, kw = _data("C" if kind in "NM" else kind, 3)
    kw = {} if kind == "N" else kw
    if kind == "M":  # mixed: three discrete columns before the continuous ones
        Xd, _, _ = _data("D", 3)
        X, kw = np.c_[Xd[:, :3], X], dict(discrete=[0, 1, 2])
    X, y = X[:97], y[:97]  # a row count no other test of this module fits
    jax.clear_caches()
    before = compiles.n
    model = getattr(jaxnb, name)(**kw, **options).fit(X, y)
    assert compiles.n - before <= budget, compiles.n - before
    before = compiles.n
    proba = model.predict_proba(X)
    assert compiles.n - before <= 2, compiles.n - before  # scores (+ the kernel sum)
    assert np.mean(model.classes_[proba.argmax(1)] == y) > 0.4


_KERNEL_SCORERS = {"FlexibleNB", "ParzenNB", "FlexibleTAN"}


@pytest.mark.parametrize(("name", "options", "kind"), CASES, ids=lambda v: str(v))
def test_prediction_compiles_its_scorer_only(name, options, kind, compiles):
    """From a clean compilation cache, a prediction compiles the model's scorer and nothing else
    (the kernel classifiers: their densities and the one program that adds the prior), and
    reading the model does not write to it.

    The log-softmax of `predict_proba` / `predict_log_proba` ran eagerly in JAX on the host's
    scores: one more program per row bucket (~45 ms of a first prediction's ~0.2 s on a 2-core
    Xeon). The gradient WeightedNB zeroed its constant predictors' weights with an eager
    `jnp.where` on every prediction (two more programs). NaiveBayes and GroupLassoNB now decide
    the expansion's centring on the host at fit time (`likelihood.expansion_shift`), so their
    scorer compiles one formula, not both behind a `lax.cond`. The values kept for that are set
    by the fit: like scikit-learn's ``check_dict_unchanged``, no prediction method changes the
    estimator's attributes."""
    import jax

    cls = getattr(jaxnb, name, None) or getattr(anb, name, None) or getattr(online, name)
    X, y, kw = _data(kind, 4)
    if cls.__module__.startswith("jaxnb.stream"):
        kw = {}
    capped = options.get("solver") == "adam"
    with pytest.warns(jaxnb.ConvergenceWarning) if capped else contextlib.nullcontext():
        model = cls(**kw, **options).fit(X, y)
    state = dict(vars(model))
    jax.clear_caches()
    before = compiles.n
    proba = model.predict_proba(X)
    np.testing.assert_allclose(np.exp(model.predict_log_proba(X)), proba, rtol=1e-12)
    budget = 2 if name in _KERNEL_SCORERS else 1
    assert compiles.n - before <= budget, compiles.n - before
    np.testing.assert_array_equal(model.predict(X), model.classes_[proba.argmax(1)])
    for method in ("decision_function", "predict_joint_log_proba", "explain"):
        if hasattr(model, method):
            getattr(model, method)(X)
    model.score(X, y)
    changed = {
        k for k in state.keys() | vars(model).keys() if state.get(k) is not vars(model).get(k)
    }
    assert not changed, changed
