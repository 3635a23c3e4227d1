"""The README's Python examples run as printed, in order, in one namespace (a user pastes them
into one session), and what they show is true."""

import pathlib
import re

import jax
import numpy as np
import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_the_three_examples():
    # use, scikit-learn tools, functional core: a renamed fence would silently skip them below
    blocks = _python_blocks()
    assert len(blocks) == 3
    assert "jaxnb.NaiveBayes" in blocks[0] and "cross_val_score" in blocks[1]
    assert "fit_stats" in blocks[2]


def test_readme_examples_run_and_the_gradient_is_the_loss_slope(capsys):
    pytest.importorskip("sklearn")
    np.random.seed(0)  # the examples draw their data from NumPy's global generator
    ns = {}
    for block in _python_blocks():
        exec(compile(block, str(README), "exec"), ns)
    # the scikit-learn example printed one cross-validated AUC per estimator
    out = capsys.readouterr().out.split("\n")
    aucs = {line.split()[0]: float(line.split()[1]) for line in out if line.strip()}
    assert set(aucs) == {"NaiveBayes", "GroupLassoNB"}
    assert all(0.0 <= a <= 1.0 for a in aucs.values())
    # the fitted model predicts probabilities that sum to one
    proba = ns["model"].predict_proba(ns["X"][:5])
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-12)
    # the gradient in the interpolation levels is the slope of the held-out loss (float64 here),
    # at interior levels (the example's 0 and 1 are the ends of the allowed range)
    loss = ns["held_out_loss"]
    alpha = np.clip(ns["alpha"], 0.1, 0.9)
    grad = np.asarray(jax.grad(loss)(alpha))
    h = 1e-6
    for i in range(alpha.size):
        e = np.zeros_like(alpha)
        e[i] = h
        slope = (float(loss(alpha + e)) - float(loss(alpha - e))) / (2 * h)
        np.testing.assert_allclose(grad[i], slope, rtol=1e-5, atol=1e-9)
    assert np.abs(grad).max() > 1e-4  # a level that matters: the check above is not 0 == 0
