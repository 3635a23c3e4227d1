"""Training-row padding of the batch estimators: a padded fit equals an unpadded one, and nearby
training sizes share compiled programs.

Every estimator pads its training rows to `jaxnb.estimators._row_bucket` sizes with zero-weight
copies of the first row (docs/CONVENTIONS.md), so unequal CV folds and learning curves do not
compile a new program per size (0.3-3 s each before). Here each estimator is fitted with the
padding and with `_row_bucket` patched to the identity (no padding), and the fitted models are
compared. `NaiveBayes` and the search estimators are covered in `test_recompilation.py`.
"""

import contextlib

import numpy as np
import pytest
from test_recompilation import _data

import jaxnb
from jaxnb.stream import anb

# Estimators whose fit (not only prediction) pads the training rows; the attributes compared
# between a padded and an unpadded fit (the fitted model beyond its predictions).
BATCH_CASES = [
    ("GroupLassoNB", {"n_penalties": 6}, "D", ("path_", "support_", "penalty_"), 1e-9),
    ("GroupLassoNB", {"n_penalties": 4, "selection": "cv", "cv": 3}, "C", ("path_",), 1e-9),
    ("L1NB", {}, "C", ("coef_", "coef_path_", "criterion_path_"), 1e-9),
    ("L1NB", {"selection": "validation"}, "D", ("coef_", "criterion_path_"), 1e-9),
    # an iterative fit stopped at ``tol`` is only determined to about tol: the row sums' rounding
    # (which the padding changes) moves the stopping point, so these run tight
    ("WeightedNB", {"scheme": "gradient", "tol": 1e-11}, "C", ("weights_", "bias_"), 1e-7),
    # Adam at a fixed rate ends at its step cap (a ConvergenceWarning, asserted in the test)
    (
        "WeightedNB",
        {"scheme": "gradient", "solver": "adam", "max_steps": 500},
        "D",
        ("weights_", "bias_"),
        1e-7,
    ),
    ("WeightedNB", {}, "C", ("weights_",), 1e-9),
    ("WeightedNB", {"state_weighting": "marginal"}, "D", ("weights_",), 1e-9),
    ("TAN", {}, "D", ("tree_", "cmi_"), 1e-9),
    ("TAN", {}, "C", ("tree_", "cmi_"), 1e-9),
    ("GaussianSemiNaiveNB", {}, "C", ("groups_", "validation_error_"), 1e-9),
    ("FlexibleNB", {}, "C", ("bandwidth_", "class_log_prior_"), 1e-9),
    ("ParzenNB", {}, "C", ("bandwidth_",), 1e-9),
    ("FlexibleTAN", {}, "C", ("tree_", "cmi_", "bandwidth_"), 1e-9),
    ("FilterNB", {}, "D", ("support_", "scores_", "ranking_"), 1e-9),
    ("FilterNB", {"filter": "mi"}, "C", ("support_", "scores_", "ranking_"), 1e-9),
    ("FilterNB", {"filter": "mi"}, "D", ("support_", "scores_", "ranking_"), 1e-9),
    ("FilterNB", {"filter": "cfs"}, "C", ("support_", "ranking_"), 1e-9),
    ("FilterNB", {"filter": "mrmr", "k": 3}, "C", ("support_", "ranking_"), 1e-9),
    ("FilterNB", {"filter": "cmim", "k": 3}, "D", ("support_", "ranking_"), 1e-9),
    ("FilterWrapperNB", {"filter": "cmim", "cv": 3}, "D", ("support_", "cv_error_"), 1e-9),
    ("FilterWrapperNB", {"cv": 3}, "C", ("support_", "cv_error_", "ranking_"), 1e-9),
]


def _assert_same_attribute(name, got, want, rtol):
    if isinstance(want, dict):
        assert set(got) == set(want), name
        for key in want:
            _assert_same_attribute(f"{name}[{key!r}]", got[key], want[key], rtol)
        return
    want = np.asarray(want)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-3, err_msg=name)


@pytest.mark.parametrize(
    ("name", "options", "kind", "attrs", "rtol"), BATCH_CASES, ids=lambda v: str(v)
)
def test_batch_estimators_pad_training_rows_without_changing_the_model(
    name, options, kind, attrs, rtol, compiles, monkeypatch
):
    """The penalized, weighted, structure, kernel and filter estimators pad their training rows
    like NaiveBayes (zero-weight copies of the first row; folds, validation splits and random
    probes drawn on the real rows first): the fitted model equals an unpadded fit, and training
    sets of nearby sizes share compiled programs (each new size used to compile for 0.3-3 s)."""
    capped = options.get("solver") == "adam"  # warns at its step cap; nothing else warns
    with pytest.warns(jaxnb.ConvergenceWarning) if capped else contextlib.nullcontext():
        _pad_training_rows_without_changing_the_model(
            name, options, kind, attrs, rtol, compiles, monkeypatch
        )


def _pad_training_rows_without_changing_the_model(
    name, options, kind, attrs, rtol, compiles, monkeypatch
):
    import jaxnb.estimators as est_mod

    X, y, kw = _data(kind, 13)
    make = lambda: getattr(jaxnb, name)(**options, **kw)  # noqa: E731
    padded = make().fit(X[:53], y[:53])  # 11 padding rows (bucket 64)
    with monkeypatch.context() as mp:
        mp.setattr(est_mod, "_row_bucket", lambda k: k)
        plain = make().fit(X[:53], y[:53])
    for attr in attrs:
        _assert_same_attribute(attr, getattr(padded, attr), getattr(plain, attr), rtol)
    np.testing.assert_array_equal(padded.predict(X), plain.predict(X))
    np.testing.assert_allclose(padded.predict_proba(X), plain.predict_proba(X), rtol=rtol)
    make().fit(X[:57], y[:57]).predict(X[:57])  # bucket 64
    before = compiles.n
    for n in range(58, 62):
        make().fit(X[:n], y[:n]).predict(X[:n])
    assert compiles.n == before


def test_filter_probes_are_drawn_for_the_real_rows():
    """The L1NB §6.1 probe columns of `FilterNB(filter="mi")` are drawn for the real rows and
    padded like them, so their relevance (the selection threshold) does not depend on the
    padding."""
    from jaxnb.estimators import BaseNB
    from jaxnb.estimators_structure import _FilterCore

    rng = np.random.default_rng(14)
    n = 53
    codes = rng.integers(0, 3, (n, 3)).astype(np.int32)
    values = rng.normal(size=(n, 2))
    y = rng.integers(0, 3, n)
    w = np.ones(n)
    padded = BaseNB._pad_training(codes, values, y, w)
    assert padded[0].shape[0] == 64
    args = ((3, 3, 3), 3, 10, 1e-9)
    plain_rel, n_pc = _FilterCore(codes, values, y, w, *args).probe_relevance(0)
    pad_rel, n_pc_pad = _FilterCore(*padded, *args, n_rows=n).probe_relevance(0)
    assert n_pc == n_pc_pad == 3 and plain_rel.shape == (11,)
    np.testing.assert_allclose(pad_rel, plain_rel, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_averaged_nb_search_pads_rows_without_changing_the_model(n_classes, compiles, monkeypatch):
    """AveragedNB's MS(FFWBW) search pads its rows (zero contributions, weight 0) to the row
    buckets: same weights, MAP subset and costs as unpadded, and training sets of nearby sizes
    (above 256 rows, where the elementary-bin grid no longer grows with the rows) compile
    nothing new."""
    rng = np.random.default_rng(15)
    n = 300
    y = rng.integers(0, n_classes, n)
    X = rng.normal(size=(n, 6))
    X[:, :3] += 0.9 * y[:, None]
    X[:, 3] = X[:, 0] + 0.1 * rng.normal(size=n)  # a redundant copy: the search must choose
    padded = anb.AveragedNB().fit(X[:281], y[:281])  # bucket 288: 7 padding rows
    with monkeypatch.context() as mp:
        mp.setattr(anb, "_row_bucket", lambda k: k)
        plain = anb.AveragedNB().fit(X[:281], y[:281])
    np.testing.assert_allclose(padded.weights_, plain.weights_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(padded.selected_, plain.selected_)
    assert padded.n_models_ == plain.n_models_
    np.testing.assert_allclose(
        [padded.map_cost_, padded.null_cost_], [plain.map_cost_, plain.null_cost_], rtol=1e-12
    )
    np.testing.assert_array_equal(padded.predict(X), plain.predict(X))
    anb.AveragedNB().fit(X[:290], y[:290]).predict(X)  # bucket 320
    before = compiles.n
    for k in range(291, 296):
        anb.AveragedNB().fit(X[:k], y[:k]).predict(X)
    assert compiles.n == before


def test_small_predictions_hand_numpy_rows_to_the_scorer(monkeypatch):
    """Up to `_HOST_ARG_MAX_BYTES` the encoded rows go into the jitted scorer as NumPy arrays (no
    separate `jax.device_put`, ~60 µs of a one-row prediction); above it they are put on the
    device first (aliased, no second copy). Both give the same posteriors, and so do the
    estimators whose scorers take extra host arrays (AveragedNB's weights)."""
    import jax

    import jaxnb.estimators as est_mod

    X, y, kw = _data("C", 21)
    Xd, yd, kwd = _data("D", 21)
    models = [
        (jaxnb.NaiveBayes(**kw).fit(X, y), X),
        (jaxnb.FlexibleNB(**kw).fit(X, y), X),
        (jaxnb.StagewiseNB(epsilon=0.1, **kwd).fit(Xd, yd), Xd),
        (jaxnb.AveragedNB().fit(X, y), X),
    ]
    calls = []
    real_put = jax.device_put
    monkeypatch.setattr(jax, "device_put", lambda *a, **k: calls.append(1) or real_put(*a, **k))
    small = [m.predict_proba(Z[:7]) for m, Z in models]
    assert calls == []
    monkeypatch.setattr(est_mod, "_HOST_ARG_MAX_BYTES", 0)
    for (m, Z), p in zip(models, small, strict=True):
        calls.clear()
        np.testing.assert_allclose(m.predict_proba(Z[:7]), p, rtol=1e-12, atol=1e-15)
        assert len(calls) >= 1, type(m).__name__
