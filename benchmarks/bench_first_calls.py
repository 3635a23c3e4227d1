"""First calls on new shapes: a prediction on a new batch size, and a summary's log_prob.

Every compiled function is specialized to its shapes, so what a researcher waits for in a
notebook is often compilation: the first `predict_proba` on a test set of a new size, the first
`log_prob` of a streaming summary on a query of a new size. Each scenario runs in a fresh Python
process and prints:

* ``predict``: an estimator fitted on 500 rows x 8 Gaussian columns (3 classes), one warm-up
  prediction of 3 rows, then `predict_proba` on 40, 100 and 300 rows (each a new row bucket):
  the fit time, the mean time of those three calls, and one row (best of 3 x 200 calls);
* ``log_prob``: a summary updated with 300 rows (3 classes, 4 predictors), then `log_prob` of 50
  rows (first call) and 60 rows (a new size), then the best time per call over 3 x 100 calls.

Usage: python benchmarks/bench_first_calls.py [--baseline DIR] [--runs R]
``--baseline DIR``: also run every scenario with the package in DIR (another checkout) first on
PYTHONPATH, alternating with this one, and print the ratios baseline / this.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

PREDICT = ["NaiveBayes", "GroupLassoNB", "FlexibleNB", "ParzenNB", "FlexibleTAN"]
SUMMARIES = ["GaussianSummary", "GKClass", "CPiD", "CategoricalCounts"]


def _per_call(fn, calls, repeats=3):
    """Best time per call of ``fn`` over ``repeats`` loops of ``calls`` calls."""
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def _predict(name):
    import numpy as np

    import jaxnb

    rng = np.random.default_rng(0)
    n = 500
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 8)) + 0.7 * y[:, None] * (np.arange(8) < 4)
    kw = {"n_penalties": 4} if name == "GroupLassoNB" else {}
    model = getattr(jaxnb, name)(**kw)
    t = time.perf_counter()
    model.fit(X, y)
    fit = time.perf_counter() - t
    model.predict_proba(X[:3])
    new = []
    for k in (40, 100, 300):
        t = time.perf_counter()
        model.predict_proba(X[:k])
        new.append(time.perf_counter() - t)
    one = _per_call(lambda: model.predict_proba(X[:1]), 200)
    return {"fit_s": fit, "new_size_ms": 1e3 * sum(new) / 3, "one_row_ms": 1e3 * one}


def _log_prob(name):
    import numpy as np

    from jaxnb.stream import summaries as S

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    if name == "CategoricalCounts":
        X = rng.integers(0, 4, (300, 4))
        summary = S.CategoricalCounts.init(3, [4] * 4).update(X, y)
    else:
        X = rng.normal(size=(300, 4))
        summary = getattr(S, name).init(3, 4).update(X, y)
    times = []
    for k in (50, 60):
        t = time.perf_counter()
        summary.log_prob(X[:k]).block_until_ready()
        times.append(time.perf_counter() - t)
    per = _per_call(lambda: summary.log_prob(X[:50]), 100)
    return {"first_ms": 1e3 * times[0], "new_size_ms": 1e3 * times[1], "call_us": 1e6 * per}


def _child(kind, name):
    import warnings

    warnings.simplefilter("ignore")  # a ConvergenceWarning is not what this measures
    out = _predict(name) if kind == "predict" else _log_prob(name)
    print(json.dumps(out))


def _run(kind, name, path):
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, name]
    # the child runs outside the checkout, so PYTHONPATH decides which package it imports
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd="/")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", default=None, help="another checkout to compare against")
    ap.add_argument("--runs", type=int, default=1, help="runs per scenario (fresh processes)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(*args.child)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    versions = [("this", here)] + ([("baseline", args.baseline)] if args.baseline else [])
    for kind, names in (("predict", PREDICT), ("log_prob", SUMMARIES)):
        rows = []
        for name in names:
            got = {label: [] for label, _ in versions}
            for _ in range(args.runs):
                for label, path in versions[::-1]:  # the baseline first, then this checkout
                    got[label].append(_run(kind, name, path))
            rows.append((name, got))
        keys = list(rows[0][1]["this"][0])
        print(f"\n{kind}: " + ", ".join(keys) + " (min over runs)")
        for name, got in rows:
            cells = []
            for key in keys:
                mine = min(r[key] for r in got["this"])
                cell = f"{key} {mine:.3g}"
                if args.baseline:
                    base = min(r[key] for r in got["baseline"])
                    ratio = base / mine if mine > 0 else float("inf")
                    cell += f" (baseline {base:.3g}, {ratio:.2f}x)"
                cells.append(cell)
            print(f"  {name:18s} " + "; ".join(cells))
    return None


if __name__ == "__main__":
    main()
