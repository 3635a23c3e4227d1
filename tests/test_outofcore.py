"""Tests for jaxnb.outofcore: chunked fits (memmap, .npy path, iterator) equal in-memory fits."""

import jax
import numpy as np
import pytest
from fake_frame import Frame

from jaxnb import NaiveBayes
from jaxnb.outofcore import (
    fit_nb_out_of_core,
    fit_stats_out_of_core,
    iter_npy_chunks,
    naive_bayes_from_stats,
    predict_out_of_core,
)

DISCRETE = [0, 1, 5]
N_STATES = [3, 3, 4]


def _table(seed, n=2503, missing=False):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = np.c_[
        rng.integers(0, 3, (n, 2)),
        rng.normal(size=(n, 3)) * [1, 10, 0.1] + y[:, None] + 50,
        rng.integers(0, 4, n),
    ].astype(np.float64)
    X[:, 0] = np.where(rng.random(n) < 0.5, y, X[:, 0])
    if missing:
        X[rng.random((n, 6)) < 0.05] = np.nan
    return X, y, rng.uniform(0.1, 3.0, n)


def _tree_close(a, b, rtol=1e-10, atol=1e-10):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


@pytest.mark.parametrize("kind", ["memmap", "path"])
def test_memmap_and_npy_path_equal_in_memory_fit(tmp_path, kind, capsys):
    X, y, w = _table(0)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    np.save(tmp_path / "w.npy", w)
    if kind == "memmap":
        src = [np.load(tmp_path / f, mmap_mode="r") for f in ("X.npy", "y.npy", "w.npy")]
    else:
        src = [tmp_path / f for f in ("X.npy", "y.npy", "w.npy")]
    model = fit_nb_out_of_core(
        src[0],
        src[1],
        classes=[0, 1, 2],
        discrete=DISCRETE,
        n_states=N_STATES,
        sample_weight=src[2],
        chunk_rows=500,
        alpha=0.5,
        progress=True,
        progress_interval=0.0,
    )
    ref = NaiveBayes(discrete=DISCRETE, n_states=N_STATES, alpha=0.5).fit(X, y, sample_weight=w)
    _tree_close(model.stats_, ref.stats_, rtol=1e-10, atol=1e-9)
    _tree_close(model.params_, ref.params_)
    np.testing.assert_allclose(
        model.predict_log_proba(X[:50]), ref.predict_log_proba(X[:50]), rtol=1e-10, atol=1e-10
    )
    err = capsys.readouterr().err
    assert "rows/s" in err and "2,503/2,503" in err and "done" in err
    # chunked prediction (also from the same source kind) equals the in-memory estimator
    lp = predict_out_of_core(
        model, src[0], method="predict_log_proba", chunk_rows=700, progress=False
    )
    np.testing.assert_allclose(lp, ref.predict_log_proba(X), rtol=1e-10, atol=1e-10)
    out = np.lib.format.open_memmap(
        tmp_path / "pred.npy", mode="w+", dtype=np.int64, shape=(X.shape[0],)
    )
    predict_out_of_core(model, src[0], chunk_rows=600, out=out, progress=False)
    np.testing.assert_array_equal(out, ref.predict(X))


def test_chunked_prediction_names_rows_without_a_class_score(tmp_path):
    """A value whose squared standardised distance overflows (1e200 in float64) gives -inf for
    every class: chunked prediction raises with the row's index in the source, as the in-memory
    estimator does, for every method."""
    X, y, _ = _table(2, n=900)
    model = NaiveBayes(discrete=DISCRETE, n_states=N_STATES).fit(X, y)
    X[777, 3] = 1e200
    np.save(tmp_path / "X.npy", X)
    for method in (
        "predict",
        "predict_proba",
        "predict_log_proba",
        "predict_joint_log_proba",
        "decision_function",
    ):
        with pytest.raises(
            ValueError, match=r"source rows \[777\] \(1 in all\) get no finite class"
        ):
            predict_out_of_core(
                model, tmp_path / "X.npy", method=method, chunk_rows=300, progress=False
            )
        with pytest.raises(ValueError, match=r"X rows \[77\] \(1 in all\)"):
            getattr(model, method)(X[700:])
    ok = predict_out_of_core(model, X[:700], method="predict_proba", progress=False)
    np.testing.assert_allclose(ok, model.predict_proba(X[:700]), rtol=1e-10, atol=1e-12)


def test_iterator_of_uneven_chunks_with_labels_and_missing_values():
    X, y, _ = _table(1, n=1500, missing=True)
    labels = np.array(["ham", "spam", "eggs"])[y]
    sizes = [1, 333, 700, 17, 449]
    bounds = np.cumsum([0] + sizes)
    chunks = ((X[a:b], labels[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    stats = fit_stats_out_of_core(
        chunks,
        classes=["spam", "ham", "eggs"],
        discrete=DISCRETE,
        n_states=N_STATES,
        missing="ignore",
        chunk_rows=256,
        progress=False,
    )
    ref = NaiveBayes(discrete=DISCRETE, n_states=N_STATES, missing="ignore").fit(X, labels)
    _tree_close(stats, ref.stats_, rtol=1e-10, atol=1e-9)


def test_naive_bayes_from_stats_supports_partial_fit_and_explain():
    X, y, _ = _table(2, n=600)
    ref = NaiveBayes(discrete=DISCRETE, n_states=N_STATES).fit(X[:400], y[:400])
    est = naive_bayes_from_stats(ref.stats_, ref.classes_, n_features=6, discrete_idx=DISCRETE)
    np.testing.assert_allclose(est.explain(X[:20]), ref.explain(X[:20]), rtol=1e-12)
    est.partial_fit(X[400:], y[400:])
    full = NaiveBayes(discrete=DISCRETE, n_states=N_STATES).fit(X, y)
    np.testing.assert_allclose(
        est.predict_log_proba(X), full.predict_log_proba(X), rtol=1e-9, atol=1e-9
    )


def test_invalid_rows_are_reported_with_their_position(tmp_path):
    X, y, _ = _table(3, n=1000)
    bad = X.copy()
    bad[777, 5] = 9  # code outside n_states
    with pytest.raises(ValueError, match="first offending row 777"):
        fit_nb_out_of_core(
            bad,
            y,
            classes=[0, 1, 2],
            discrete=DISCRETE,
            n_states=N_STATES,
            chunk_rows=300,
            progress=False,
        )
    nan = X.copy()
    nan[5, 2] = np.nan
    with pytest.raises(ValueError, match="missing='error'"):
        fit_nb_out_of_core(
            nan,
            y,
            classes=[0, 1, 2],
            discrete=DISCRETE,
            n_states=N_STATES,
            chunk_rows=300,
            progress=False,
        )
    with pytest.raises(ValueError, match="not in classes"):
        fit_nb_out_of_core(
            X, y + 10, classes=[10, 11], discrete=DISCRETE, n_states=N_STATES, progress=False
        )
    with pytest.raises(ValueError, match="n_states is required"):
        fit_nb_out_of_core(X, y, classes=[0, 1, 2], discrete=DISCRETE, progress=False)
    with pytest.raises(ValueError, match="y_source must be 1-D with 1000"):
        fit_nb_out_of_core(
            X, y[:10], classes=[0, 1, 2], discrete=DISCRETE, n_states=N_STATES, progress=False
        )


def test_iter_npy_chunks_reads_the_file_exactly(tmp_path):
    a = np.arange(35, dtype=np.int16).reshape(7, 5)
    np.save(tmp_path / "a.npy", a)
    parts = list(iter_npy_chunks(tmp_path / "a.npy", 3))
    assert [s for s, _ in parts] == [0, 3, 6]
    np.testing.assert_array_equal(np.concatenate([p for _, p in parts]), a)


def test_repeated_chunked_prediction_compiles_nothing(compiles):
    """A second chunked prediction with the same chunk shape, from the same model or a refitted
    one, reuses the compiled programs (before, each call compiled its own chunk scorer)."""
    X, y, _ = _table(3, n=900)
    model = NaiveBayes(discrete=DISCRETE, n_states=N_STATES).fit(X, y)
    first = predict_out_of_core(model, X, method="predict_proba", chunk_rows=300, progress=False)
    other = NaiveBayes(discrete=DISCRETE, n_states=N_STATES, alpha=3.0).fit(X, y)
    before = compiles.n
    again = predict_out_of_core(
        model, X[::-1].copy(), method="predict_proba", chunk_rows=300, progress=False
    )
    refit = predict_out_of_core(other, X, method="predict_proba", chunk_rows=300, progress=False)
    assert compiles.n == before
    np.testing.assert_allclose(again, first[::-1], rtol=1e-12)
    np.testing.assert_allclose(refit, other.predict_proba(X), rtol=1e-10, atol=1e-12)
    # the two models differ (log scale: these probabilities are near 0 or 1), so the equality
    # above shows the refitted parameters were used
    assert np.abs(other.predict_log_proba(X) - model.predict_log_proba(X)).max() > 1e-3


def test_unnamed_chunk_warning_is_issued_once_at_the_callers_line():
    """Chunks after the first are read in the background thread, so the warning for an unnamed
    chunk after named ones pointed into the thread machinery (and repeated per chunk where the
    filters allow); it is now issued once, from the main thread, at the caller's line, for fit
    and for predict."""
    import warnings

    X, y, _ = _table(5, n=900)
    cols = ["a", "b", "c", "d", "e", "f"]
    kw = dict(classes=[0, 1, 2], discrete=DISCRETE, n_states=N_STATES, progress=False)
    items = [(Frame(X[:300], cols), y[:300]), (X[300:600], y[300:600]), (X[600:], y[600:])]
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        est = fit_nb_out_of_core(iter(items), chunk_rows=256, **kw)
    _assert_one_warning_at(got, "est = fit_nb_out_of_core(iter(items)")
    ref = NaiveBayes(discrete=DISCRETE, n_states=N_STATES).fit(X, y)
    _tree_close(est.stats_, ref.stats_)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        pred = predict_out_of_core(est, iter([X[:450], X[450:]]), progress=False)
    _assert_one_warning_at(got, "pred = predict_out_of_core(est, iter(")
    np.testing.assert_array_equal(pred, ref.predict(X))


def _assert_one_warning_at(got, source_line):
    """One "no column names" warning, located at this file's line that starts with
    ``source_line``."""
    import linecache

    named = [w for w in got if "no column names" in str(w.message)]
    assert len(named) == 1, [str(w.message) for w in got]
    assert named[0].filename == __file__, named[0].filename
    assert linecache.getline(__file__, named[0].lineno).strip().startswith(source_line)


def test_dataframe_column_names_are_recorded_and_checked():
    """A named frame (whole, or as chunks) is read by position, so its names are recorded at fit
    and a reordered or renamed frame is refused at the next chunk and at prediction."""
    X, y, _ = _table(5, n=900)
    cols = ["a", "b", "c", "d", "e", "f"]
    kw = dict(classes=[0, 1, 2], discrete=DISCRETE, n_states=N_STATES, progress=False)
    est = fit_nb_out_of_core(Frame(X, cols), y, **kw)
    np.testing.assert_array_equal(est.feature_names_in_, cols)
    ref = NaiveBayes(discrete=DISCRETE, n_states=N_STATES).fit(X, y)
    _tree_close(est.stats_, ref.stats_)
    chunks = [(Frame(X[:500], cols), y[:500]), (Frame(X[500:], cols), y[500:])]
    est2 = fit_nb_out_of_core(iter(chunks), chunk_rows=256, **kw)
    np.testing.assert_array_equal(est2.feature_names_in_, cols)
    _tree_close(est2.stats_, ref.stats_)

    swapped = [cols[1], cols[0]] + cols[2:]
    bad = [(Frame(X[:500], cols), y[:500]), (Frame(X[500:, [1, 0, 2, 3, 4, 5]], swapped), y[500:])]
    with pytest.raises(ValueError, match="chunk 1 of source.*another order.*'b'.*'a'"):
        fit_nb_out_of_core(iter(bad), chunk_rows=256, **kw)

    proba = predict_out_of_core(est, Frame(X, cols), method="predict_proba", progress=False)
    np.testing.assert_allclose(proba, ref.predict_proba(X), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="missing columns \\['f'\\]"):
        predict_out_of_core(est, Frame(X, cols[:5] + ["g"]), progress=False)
    with pytest.raises(ValueError, match="chunk 0 of source.*another order"):
        predict_out_of_core(est, iter([Frame(X[:, [1, 0, 2, 3, 4, 5]], swapped)]), progress=False)
    with pytest.raises(ValueError, match="another order"):  # the in-memory predict agrees
        est.predict(Frame(X[:, [1, 0, 2, 3, 4, 5]], swapped))
    # arrays and unnamed models stay positional
    with pytest.warns(UserWarning, match="no column names"):
        np.testing.assert_array_equal(predict_out_of_core(est, X, progress=False), ref.predict(X))
    with pytest.warns(UserWarning, match="no column names"):  # an unnamed chunk after named ones
        fit_nb_out_of_core(iter([chunks[0], (X[500:], y[500:])]), chunk_rows=256, **kw)
    plain = fit_nb_out_of_core(X, y, **kw)
    assert not hasattr(plain, "feature_names_in_")
    np.testing.assert_array_equal(
        predict_out_of_core(plain, Frame(X[:, [1, 0, 2, 3, 4, 5]], swapped), progress=False),
        ref.predict(X[:, [1, 0, 2, 3, 4, 5]]),
    )
    with pytest.raises(ValueError, match="feature_names must be 6 strings"):
        naive_bayes_from_stats(
            ref.stats_, ref.classes_, n_features=6, discrete_idx=DISCRETE, feature_names=cols[:5]
        )


def test_pandas_series_labels_and_weights_beside_a_table(tmp_path):
    """Labels and weights as pandas Series next to an array or a .npy path are read like arrays
    (a Series beside a path was refused as 'y_source must be an array, memmap or .npy path')."""
    pd = pytest.importorskip("pandas")
    X, y, w = _table(6, n=700)
    np.save(tmp_path / "x.npy", X)
    kw = dict(classes=[0, 1, 2], discrete=DISCRETE, n_states=N_STATES, progress=False)
    ref = fit_stats_out_of_core(X, y, sample_weight=w, **kw)
    for src in (X, str(tmp_path / "x.npy")):
        got = fit_stats_out_of_core(src, pd.Series(y), sample_weight=pd.Series(w), **kw)
        _tree_close(got, ref)
    with pytest.raises(TypeError, match="y_source is a DataFrame; pass one column"):
        fit_stats_out_of_core(X, pd.DataFrame({"y": y}), **kw)


def test_chunked_decision_function_is_the_binary_log_odds_like_the_estimator(tmp_path):
    """``method="decision_function"`` gives what `BaseNB.decision_function` gives: one column of
    log odds with two classes (into an ``out`` of shape (n,)); the per-class scores are
    ``method="predict_joint_log_proba"``."""
    X, y, _ = _table(5, n=500)
    model = NaiveBayes(discrete=DISCRETE, n_states=N_STATES).fit(X, (y > 0).astype(int))
    joint = predict_out_of_core(
        model, X, method="predict_joint_log_proba", chunk_rows=200, progress=False
    )
    np.testing.assert_allclose(joint, model.predict_joint_log_proba(X), rtol=1e-10, atol=1e-10)
    out = np.lib.format.open_memmap(tmp_path / "df.npy", mode="w+", dtype=X.dtype, shape=(500,))
    predict_out_of_core(
        model, X, method="decision_function", chunk_rows=200, out=out, progress=False
    )
    np.testing.assert_allclose(out, model.decision_function(X), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out, joint[:, 1] - joint[:, 0], rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match=r"out must have shape \(500,\)"):
        predict_out_of_core(
            model, X, method="decision_function", out=np.zeros((500, 2)), progress=False
        )


def test_importance_rows_are_a_uniform_sample_of_the_whole_file():
    """The rows behind ``feature_importances_`` were the first 2048 of the first chunk: one class
    of a file sorted by class (importances 0.83 / 0.17 here against 0.76 / 0.24 from every row).
    They are now a reservoir sample of every chunk, the same on a rerun."""
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 3000)
    X = np.c_[rng.normal(size=6000) * np.where(y == 0, 3.0, 1.0), rng.normal(size=6000) + 0.8 * y]
    model = fit_nb_out_of_core(X, y, classes=[0, 1], chunk_rows=700, progress=False)
    values = model._sample()[1]
    where = {tuple(r): i for i, r in enumerate(np.asarray(X, values.dtype))}
    idx = np.array([where[tuple(r)] for r in values])
    assert len(np.unique(idx)) == 2048 and 0.44 < (idx >= 3000).mean() < 0.56
    assert (idx >= 5600).sum() > 60  # the last chunk too (expected 2048 * 400 / 6000 = 137)
    spread = np.ptp(model.explain(X), axis=-1).mean(0)
    assert np.abs(model.feature_importances_ - spread / spread.sum()).max() < 0.02
    again = fit_nb_out_of_core(X, y, classes=[0, 1], chunk_rows=700, progress=False)
    np.testing.assert_array_equal(again.feature_importances_, model.feature_importances_)


def test_model_from_statistics_without_rows_has_no_importances_until_it_sees_rows():
    """Built from statistics alone, the importances came from one made-up row of zeros (far
    outside these columns, which sit near 50): a number that looked like a result. Now there is
    no attribute until rows arrive, and rows from partial_fit enter the sample at the rate of
    a stream that far along (the statistics' 400 rows count)."""
    X, y, _ = _table(2, n=2600)
    ref = NaiveBayes(discrete=DISCRETE, n_states=N_STATES).fit(X[:400], y[:400])
    est = naive_bayes_from_stats(ref.stats_, ref.classes_, n_features=6, discrete_idx=DISCRETE)
    assert not hasattr(est, "feature_importances_")
    with pytest.raises(AttributeError, match="without sample rows.*pass sample="):
        _ = est.feature_importances_
    est.partial_fit(X[400:], y[400:])
    values = est._sample()[1]
    assert values.shape[0] == 2048  # a uniform sample of rows 400..2600 of a 2600-row stream
    spread = np.ptp(est.explain(X[400:]), axis=-1).mean(0)
    assert np.abs(est.feature_importances_ - spread / spread.sum()).max() < 0.02
    assert est._sample_seen == 2600
