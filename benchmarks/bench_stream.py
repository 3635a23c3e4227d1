r"""Prequential throughput of online (weighted) NB after compilation, against River's GaussianNB.

Stream: `jaxnb.stream.simulate.StreamSpec(p = 50, J = 2)`, 100,000 rows (float32). Every method is
run test-then-train: River's `naive_bayes.GaussianNB` calls `predict_proba_one(x)` then
`learn_one(x, y)` per row (rows pre-converted to dicts, not timed); ours run the compiled
`lax.scan` of `OnlineWeightedNB.prequential_correct` (compiled on a first identical call, untimed).

Rows (targets from the brief): online WNB, Gaussian summaries, SGD batch 1, row-by-row blocks
(>= 100x River); OnlineNB on Gaussian summaries (blocks of 256, no SGD); online WNB on GKClass and
on cPiD summaries (100 tuples / intervals, summaries updated every `--chunk` rows, SGD row by row
inside the block; >= 10x River).

River is slow, so by default it runs on the first `--river-rows` rows (its per-row cost does not
depend on the stream position); `--river-rows 100000` runs it on the whole stream.

Timings are wall-clock, best of `--repeats` (ours) and `--river-repeats` (River) passes; the
machine, its core count and the load average are printed with the table (on a shared machine,
compare ratios from one run, not absolute rates across runs).

Usage: python benchmarks/bench_stream.py [--rows 100000] [--river-rows 20000] [--chunk 256]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from jaxnb.stream.online import OnlineNB, OnlineWeightedNB
from jaxnb.stream.simulate import StreamSpec, make_rows


def bench_river(X, y, repeats=1):
    try:
        from river import naive_bayes
    except ImportError:
        return None
    rows = [dict(enumerate(map(float, r))) for r in X]
    best = np.inf
    for _ in range(repeats):  # best of `repeats` fresh passes, as for ours (shared, noisy CPUs)
        model = naive_bayes.GaussianNB()
        correct = 0
        t0 = time.perf_counter()
        for x, t in zip(rows, y.tolist(), strict=True):
            proba = model.predict_proba_one(x)
            if proba:
                correct += max(proba, key=proba.get) == t
            model.learn_one(x, t)
        best = min(best, time.perf_counter() - t0)
    return {"rows_per_s": len(rows) / best, "seconds": best, "accuracy": correct / len(rows)}


def _machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    import jax

    return (
        f"{cpu}, {os.cpu_count()} logical cpus, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, jax {jax.__version__}"
    )


def _load():
    return "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def bench_ours(make, X, y, repeats=2):
    make().prequential_correct(X, y, classes=[0, 1])  # compile (same shapes and config)
    best = np.inf
    for _ in range(repeats):
        est = make()
        t0 = time.perf_counter()
        ok = est.prequential_correct(X, y, classes=[0, 1])
        best = min(best, time.perf_counter() - t0)
    return {"rows_per_s": len(y) / best, "seconds": best, "accuracy": float(ok.mean())}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--river-rows", type=int, default=20_000)
    ap.add_argument("--chunk", type=int, default=256, help="summary block of GKClass / cPiD")
    ap.add_argument("--repeats", type=int, default=3, help="best of, for each of ours")
    ap.add_argument("--river-repeats", type=int, default=2, help="best of, for River")
    args = ap.parse_args(argv)
    spec = StreamSpec(
        n_predictors=50,
        n_relevant=10,
        n_redundant=20,
        redundant_sources=3,
        signal=1.0,
        n_examples=args.rows + 1,
        n_test=0,
        chunk_rows=10_000,
    )
    X, y = make_rows(spec, 0, args.rows)
    print(f"machine: {_machine()}")
    print(f"stream: {X.shape} {X.dtype}; {_load()} at the start")
    res = {}
    river = bench_river(X[: args.river_rows], y[: args.river_rows], args.river_repeats)
    if river is None:
        print("river is not installed (pip install river): ratios unavailable")
    res["River GaussianNB (predict_proba_one + learn_one)"] = river
    cases = {
        "online WNB, Gaussian, SGD batch 1": lambda: OnlineWeightedNB("gaussian"),
        "online WNB, Gaussian, SGD batch 1, weights_first": lambda: OnlineWeightedNB(
            "gaussian", order="weights_first"
        ),
        "online NB, Gaussian (blocks of 256)": lambda: OnlineNB("gaussian"),
        f"online WNB, GKClass(100), block {args.chunk}, SGD batch 1": lambda: OnlineWeightedNB(
            "gkclass", summary_chunk=args.chunk
        ),
        f"online WNB, cPiD(100), block {args.chunk}, SGD batch 1": lambda: OnlineWeightedNB(
            "cpid", summary_chunk=args.chunk
        ),
    }
    for name, make in cases.items():
        res[name] = bench_ours(make, X, y, args.repeats)
        print(f"  {name}: {res[name]['rows_per_s']:,.0f} rows/s", flush=True)
    base = river["rows_per_s"] if river else None
    print(f"\n{'method':<58} {'rows/s':>12} {'x River':>9} {'preq. acc':>9}")
    for name, r in res.items():
        if r is None:
            continue
        ratio = f"{r['rows_per_s'] / base:,.1f}" if base else "n/a"
        print(f"{name:<58} {r['rows_per_s']:>12,.0f} {ratio:>9} {r['accuracy']:>9.4f}")
    print(
        f"(River timed on {min(args.river_rows, args.rows):,d} rows, best of "
        f"{args.river_repeats}; ours on {args.rows:,d}, best of {args.repeats} after a compiling "
        f"call; {_load()} at the end)"
    )
    return res


if __name__ == "__main__":
    main()
