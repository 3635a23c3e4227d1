"""Experiment plumbing: results-folder routing (quick runs never overwrite the committed full-mode
results) and the fast test-set densities of experiments/stream_tables.py.

The experiments themselves run in CI through `make experiments-quick` (.ci/run), not here."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXP = ROOT / "experiments"
DEFAULT = (EXP / "results").resolve()


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "JAXNB_RESULTS_DIR"}
    env.update(extra)
    return env


def _plan(*args, env=None):
    out = subprocess.run(
        [sys.executable, str(EXP / "run_all.py"), "--dry-run", *args],
        capture_output=True,
        text=True,
        env=env or _env(),
        check=True,
    ).stdout
    line = next(s for s in out.splitlines() if s.startswith("results folder: "))
    return Path(line.split(": ", 1)[1]), out


def test_run_all_quick_defaults_to_separate_folder(tmp_path):
    folder, out = _plan("--quick")
    assert folder == DEFAULT / "quick"
    assert "--quick" in out and "stream_tables.py" in out
    folder, _ = _plan()
    assert folder == DEFAULT
    folder, _ = _plan("--quick", "--results", str(tmp_path))
    assert folder == tmp_path.resolve()
    folder, _ = _plan("--quick", env=_env(JAXNB_RESULTS_DIR=str(tmp_path / "env")))
    assert folder == (tmp_path / "env").resolve()


def test_run_all_rejects_unknown_script():
    proc = subprocess.run(
        [sys.executable, str(EXP / "run_all.py"), "--only", "no_such"],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert proc.returncode == 2 and "unknown script" in proc.stdout


def test_common_results_dir_honours_env(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(EXP))
    common = _load("_common_under_test", EXP / "_common.py")
    monkeypatch.delenv("JAXNB_RESULTS_DIR", raising=False)
    assert common.results_dir() == DEFAULT
    monkeypatch.setenv("JAXNB_RESULTS_DIR", str(tmp_path / "r"))
    assert common.results_dir() == (tmp_path / "r").resolve()
    # a module loaded with the variable set writes there (save_json and figure_path)
    mod = _load("_common_env", EXP / "_common.py")
    path = mod.save_json("probe", {"x": np.arange(3)})
    assert path == (tmp_path / "r" / "probe.json").resolve() and path.exists()
    assert mod.figure_path("probe").parent == (tmp_path / "r").resolve()


def test_stats_table4_honours_env(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXNB_RESULTS_DIR", str(tmp_path))
    mod = _load("stats_table4_env", EXP / "stats_table4.py")
    assert mod.RESULTS == tmp_path.resolve()
    assert mod.main([]) == 0  # no fsnb_table1.json there: says so, writes nothing
    assert not (tmp_path / "stats_table4.json").exists()


@pytest.mark.parametrize("summary", ["gkclass", "cpid"])
def test_stream_tables_fast_contributions_match_library(summary, monkeypatch):
    monkeypatch.syspath_prepend(str(EXP))
    st = _load("stream_tables_under_test", EXP / "stream_tables.py")
    from jaxnb.stream import online
    from jaxnb.stream.online import OnlineWeightedNB

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4)).astype(np.float32)
    y = (X[:, 0] + 0.5 * rng.normal(size=600) > 0).astype(np.int32)
    est = OnlineWeightedNB(summary, summary_chunk=64, summary_size=20).fit(X[:400], y[:400])
    cuts = online.modl_second_level(est.state_.summary)
    Xq = X[400:].copy()
    Xq[::7, 1] = np.nan  # missing values contribute 0
    Xq[0, 0] = float(np.asarray(cuts)[0, 0])  # a value exactly on a cut point
    lib = np.asarray(online.log_contributions(est.state_.summary, cuts, Xq))
    ours = np.asarray(st._contributions_jit(est.state_.summary, cuts, Xq))
    np.testing.assert_allclose(ours, lib, rtol=1e-6, atol=1e-6)
    # the blocked evaluation equals a direct computation on all rows
    test = st.TestSet(Xq, y[400:], block=64)
    nb, wnb = st._evaluate(est.state_, test, cuts)
    lp = np.asarray(online.log_prior(est.state_.summary))
    ref_nb = np.mean((lp[None] + lib.sum(1)).argmax(1) == y[400:])
    assert nb == pytest.approx(ref_nb)

    # WNB: log prior + bias + sum_i w_ik L_w[r, i, k], L_w from the state's own cuts (None here:
    # the level-1 bins): with the fitted weights, then with other weights and bias, on the
    # state's cuts and on the NB cuts (the shared branch of `_evaluate`)
    def ref_wnb(cuts_w, weight, bias):
        L_w = np.asarray(online.log_contributions(est.state_.summary, cuts_w, Xq), np.float64)
        H = (lp + bias)[None] + np.einsum("rik,ik->rk", L_w, weight)
        return np.mean(H.argmax(1) == y[400:])

    s0 = est.state_
    assert s0.cuts is None
    assert wnb == pytest.approx(ref_wnb(None, est.weights_, est.bias_))
    w2 = np.random.default_rng(1).uniform(0.0, 2.0, (4, 2)).astype(s0.weight.dtype)
    b2 = np.array([0.4, -0.4], s0.bias.dtype)
    for cuts_w in (None, cuts):
        state = online.OnlineState(s0.summary, cuts_w, w2, b2, s0.opt_state, s0.n_steps)
        nb2, wnb2 = st._evaluate(state, test, cuts)
        assert nb2 == pytest.approx(nb)
        assert wnb2 == pytest.approx(ref_wnb(cuts_w, w2, b2))
        if cuts_w is None:
            assert abs(wnb2 - wnb) > 0.1  # the weights and bias do matter


def test_stream_tables_gaussian_evaluation_equals_the_estimators_predictions(monkeypatch):
    """The experiment scores Gaussian WNB states with its own compiled evaluation: the same
    accuracy as the estimator's `predict` (standardized terms, as the estimator learns them),
    and NB's as `OnlineNB`'s."""
    monkeypatch.syspath_prepend(str(EXP))
    st = _load("stream_tables_under_test_gaussian", EXP / "stream_tables.py")
    from jaxnb.stream.online import OnlineNB, OnlineWeightedNB

    rng = np.random.default_rng(0)
    X = (rng.normal(size=(700, 4)) * [1.0, 50.0, 0.01, 3.0]).astype(np.float32)
    y = (X[:, 0] + X[:, 1] / 50 + 0.7 * rng.normal(size=700) > 0).astype(np.int32)
    est = OnlineWeightedNB(learning_rate=1e-2).fit(X[:500], y[:500])
    test = st.TestSet(X[500:], y[500:], block=64)
    nb, wnb = st._evaluate(est.state_, test, None)
    assert wnb == pytest.approx(np.mean(est.predict(X[500:]) == y[500:]))
    assert nb == pytest.approx(
        np.mean(OnlineNB().fit(X[:500], y[:500]).predict(X[500:]) == y[500:])
    )
