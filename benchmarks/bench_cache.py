"""Cold start of a fresh Python process with and without `jaxnb.enable_compilation_cache`.

Each row is a new subprocess that imports jaxnb and fits + predicts a set of estimators on
Diabetes (N = 442, 10 continuous predictors); the time is that of the fits (import excluded,
compilation included: most of a first fit is XLA compilation). Runs: without the cache; with an
empty cache (it is filled); with the filled cache, ``--repeats`` times. Ratio = no cache / filled
cache.

Usage: python benchmarks/bench_cache.py [--estimators NaiveBayes,StagewiseNB,...] [--repeats 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

import numpy as np

CHILD = """
import sys, time
import jaxnb
from jaxnb.datasets import load_diabetes
if sys.argv[1] != "-":
    jaxnb.enable_compilation_cache(sys.argv[1])
X, y = load_diabetes(2)
t0 = time.perf_counter()
for name in sys.argv[2].split(","):
    getattr(jaxnb, name)().fit(X, y).predict(X)
print(time.perf_counter() - t0)
"""

DEFAULT = "NaiveBayes,StagewiseNB,SelectiveNB,GroupLassoNB,WeightedNB,FilterNB"


def _child(cache, names):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, cache, names], capture_output=True, text=True, check=True
    )
    return float(out.stdout.split()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--estimators", default=DEFAULT)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache:
        none = [_child("-", args.estimators) for _ in range(args.repeats)]
        fill = _child(cache, args.estimators)
        warm = [_child(cache, args.estimators) for _ in range(args.repeats)]
    print(f"estimators: {args.estimators}; {args.repeats} processes per row (median)")
    print(f"{'run':<32} {'fit s':>7}")
    print("-" * 40)
    print(f"{'no cache':<32} {np.median(none):7.2f}")
    print(f"{'empty cache (filling it)':<32} {fill:7.2f}")
    print(f"{'filled cache':<32} {np.median(warm):7.2f}")
    print(
        f"ratio no cache / filled cache: {np.median(none) / np.median(warm):.1f}x "
        f"(benchmark wall {time.perf_counter() - t_start:.0f} s)"
    )


if __name__ == "__main__":
    main()
