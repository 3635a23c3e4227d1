"""Exact MODL discretization: the batched dynamic programme against the per-predictor one.

`jaxnb.discretize.modl_cuts_from_counts_many` (what `AveragedNB` runs over all numeric columns at
once) is timed against `_modl_dp`, the O(m)-memory per-predictor DP used for very long inputs,
on the same elementary-bin counts; both return the exact optimum, and the script checks that
they agree. There is no Python peer for MODL; Khiops is compared end to end by
``make bench-khiops``.

Usage: python benchmarks/bench_modl.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from jaxnb import discretize as D

# (predictors, elementary bins, classes, rows): AveragedNB's default 256 quantile bins on 300 and
# 1000 rows (one row or a few per bin), and long inputs (1000 bins of 5 rows)
CASES = [(20, 256, 2, 300), (20, 256, 3, 1000), (8, 1000, 2, 5000)]


def _counts(rng, p, m, n_classes, n):
    """Per-predictor (m, J) class counts of n rows in m equal-frequency bins; the class shifts
    the value, so the optimum has a few intervals."""
    out = []
    for _ in range(p):
        y = rng.integers(0, n_classes, n)
        order = np.argsort(rng.normal(size=n) + 0.8 * y)
        b = np.minimum(np.arange(n) * m // n, m - 1)
        c = np.zeros((m, n_classes))
        np.add.at(c, (b, y[order]), 1)
        out.append(c)
    return out


def _best(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} CPUs, load {load:.1f}; best of {args.repeats}")
    print(
        f"{'predictors x bins x classes (rows)':<36} {'batched ms':>10} {'per-predictor ms':>16} "
        f"{'ratio':>6} {'intervals':>10} same"
    )
    for p, m, n_classes, n in CASES:
        counts = _counts(rng, p, m, n_classes, n)
        cuts = [np.arange(m - 1, dtype=float)] * p
        t_many, many = _best(
            lambda counts=counts, cuts=cuts: D.modl_cuts_from_counts_many(
                cuts, counts, return_cost=True
            ),
            args.repeats,
        )
        t_one, one = _best(lambda counts=counts: [D._modl_dp(c) for c in counts], args.repeats)
        same = all(
            np.array_equal(a, np.asarray(ends[:-1], float) - 1) and abs(ca - cb) <= 1e-9 * abs(cb)
            for (a, ca), (ends, cb) in zip(many, one, strict=True)
        )
        sizes = [len(a) + 1 for a, _ in many]
        print(
            f"{f'{p} x {m} x {n_classes} ({n})':<36} {t_many * 1e3:>10.1f} {t_one * 1e3:>16.1f} "
            f"{t_one / t_many:>5.1f}x {f'{min(sizes)}-{max(sizes)}':>10} {same}"
        )


if __name__ == "__main__":
    main()
