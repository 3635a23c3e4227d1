r"""Prequential (test-then-train) evaluation of stream classifiers.

Gama, Sebastião & Rodrigues (2009), "Issues in evaluation of stream learning algorithms".

Every incoming block of rows is first predicted by the current model, then learned. The
cumulative accuracy after n rows is (number of correct predictions so far) / (rows predicted so
far); the very first block cannot be predicted by an unfitted model and is only learned (its rows
are not counted). Both drivers learn ``model`` in place, so they refuse a model fitted before the
call (a second run would continue from the first run's model and inflate its accuracy) unless
``warm_start=True``, which continues it and tests its first block too. Two drivers:

* `prequential(model, X, y, batch_size, report_every)`: any estimator with `predict` and
  `partial_fit(X, y, classes=...)` (ours or scikit-learn's), block by block from Python, with
  progress lines on stderr.
* `prequential_jit(model, X, y)`: the fully jit-compiled scan of an `OnlineWeightedNB` /
  `OnlineNB` (`OnlineWeightedNB.prequential_correct`): rows are predicted with the state at the
  start of their `summary_chunk` block (row by row for the default Gaussian configuration).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from ..data import encode_labels

__all__ = ["PrequentialResult", "prequential", "prequential_jit"]


@dataclass
class PrequentialResult:
    """Accuracy curve of a prequential run.

    Attributes:
      n_seen: `(m,)` rows seen (learned) at each report point.
      accuracy: `(m,)` cumulative prequential accuracy at those points.
      n_correct, n_tested: totals; seconds: wall time of the run.
    """

    n_seen: np.ndarray
    accuracy: np.ndarray
    n_correct: int
    n_tested: int
    seconds: float

    @property
    def final_accuracy(self) -> float:
        return self.n_correct / self.n_tested if self.n_tested else float("nan")


def _check(X, y, batch_size, report_every):
    X = np.asarray(X)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be (n, p) and y (n,); got {X.shape} and {y.shape}")
    for name, v in (("batch_size", batch_size), ("report_every", report_every)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1; got {name}={v!r}")
    return X, y


def _warm(model, warm_start) -> bool:
    """Whether ``model`` was fitted before the run (scikit-learn's convention: it has a public
    attribute ending in "_"); a fitted model needs ``warm_start=True``."""
    if not isinstance(warm_start, bool | np.bool_):
        raise TypeError(f"warm_start must be True or False; got {warm_start!r}")
    learnt = sorted(k for k in getattr(model, "__dict__", {}) if k.endswith("_") and k[0] != "_")
    if learnt and not warm_start:
        raise ValueError(
            f"model is already fitted (this {type(model).__name__} has {', '.join(learnt[:3])}); "
            "prequential evaluation trains it further, so this run would continue from the model "
            "of an earlier one. Pass a new instance (or sklearn.base.clone(model)) to start from "
            "scratch, or warm_start=True to continue it (its first block is then tested too)"
        )
    return bool(learnt)


def _classes(y, classes, model=None):
    """The label set passed to every block: the caller's ``classes``, a warm ``model``'s
    ``classes_``, or all of y's labels (sorted like the estimators sort them, mixed types
    included)."""
    if classes is None and model is not None and hasattr(model, "classes_"):
        return np.asarray(model.classes_)
    if classes is None:
        return encode_labels(y, name="y")[0]
    return np.asarray(classes)


def prequential(
    model,
    X,
    y,
    batch_size: int = 1000,
    report_every: int = 10_000,
    *,
    classes=None,
    verbose: bool = True,
    warm_start: bool = False,
) -> PrequentialResult:
    """Test-then-train over (X, y) in blocks of `batch_size`; curve sampled every `report_every`.

    ``model`` is trained in place; a model fitted before the call needs ``warm_start=True`` (see
    the module docstring)."""
    X, y = _check(X, y, batch_size, report_every)
    fitted = _warm(model, warm_start)
    classes = _classes(y, classes, model if fitted else None)
    n = X.shape[0]
    correct = tested = 0
    seen, acc = [], []
    next_report = report_every
    t0 = time.perf_counter()
    for start in range(0, n, batch_size):
        Xb, yb = X[start : start + batch_size], y[start : start + batch_size]
        if fitted:
            correct += int(np.sum(model.predict(Xb) == yb))
            tested += len(yb)
        model.partial_fit(Xb, yb, classes=classes)
        fitted = True
        done = start + len(yb)
        if done >= next_report or done == n:
            seen.append(done)
            acc.append(correct / tested if tested else float("nan"))
            next_report = (done // report_every + 1) * report_every
            if verbose:
                rate = done / max(time.perf_counter() - t0, 1e-9)
                print(
                    f"prequential {type(model).__name__}: {done:>9,d} rows  "
                    f"accuracy {acc[-1]:.4f}  {rate:,.0f} rows/s",
                    file=sys.stderr,
                    flush=True,
                )
    return PrequentialResult(
        np.asarray(seen), np.asarray(acc), correct, tested, time.perf_counter() - t0
    )


def prequential_jit(
    model,
    X,
    y,
    report_every: int = 10_000,
    *,
    classes=None,
    verbose: bool = True,
    warm_start: bool = False,
) -> PrequentialResult:
    """Prequential accuracy of an `OnlineWeightedNB` / `OnlineNB` from its compiled scan.

    Runs `report_every` rows per compiled call (one compilation; the last call may be shorter).
    ``model`` is trained in place; a model fitted before the call needs ``warm_start=True``."""
    X, y = _check(X, y, 1, report_every)
    warm = _warm(model, warm_start)
    classes = _classes(y, classes, model if warm else None)
    n = X.shape[0]
    correct = tested = 0
    seen, acc = [], []
    t0 = time.perf_counter()
    for start in range(0, n, report_every):
        ok = model.prequential_correct(
            X[start : start + report_every], y[start : start + report_every], classes=classes
        )
        if start == 0 and not warm:  # the unfitted model's first block is not a prediction
            skip = model._chunk(test=True)
            ok = ok[skip:]
        correct += int(ok.sum())
        tested += len(ok)
        done = min(start + report_every, n)
        seen.append(done)
        acc.append(correct / tested if tested else float("nan"))
        if verbose:
            rate = done / max(time.perf_counter() - t0, 1e-9)
            print(
                f"prequential(jit) {type(model).__name__}: {done:>9,d} rows  accuracy "
                f"{acc[-1]:.4f}  {rate:,.0f} rows/s",
                file=sys.stderr,
                flush=True,
            )
    return PrequentialResult(
        np.asarray(seen), np.asarray(acc), correct, tested, time.perf_counter() - t0
    )
