"""Pair information measures with one many-state column: dense joint tensor vs sorted rows.

`jaxnb.methods.filters.information_matrices` (CFS, CMIM, mRMR and TAN's edge weights) has two
ways to get I(X_i; X_k), I(X_i; X_k | C) and I(X_i; C | X_k) for all pairs: one matrix product into
the (q, M, q, M, c) joint count tensor (M = the largest number of states), and, where that tensor
would pass 2^24 entries, entropies of each pair's rows sorted by their codes. This script times
both on the same data (after compilation, median of ``--repeats``), checks that they agree, and
says which one the public function picks. The dense path is skipped where its tensor would pass
``--max-gb``.

Data: q = 29 discrete columns (28 of 2-8 states, related to the class, and one "identifier"-like
column of M states), c = 8 classes, n rows, float32 (JAX's default). Then one end-to-end fit:
`FilterNB(filter="cfs")` on the embedded Flags table plus a 194-state identifier column (the
shared UCI file's `country`, which `load_flags` drops).

Last, two `TAN(discrete="all")` fits (the first compiles) on 1000 rows of the same data with the
large column's states from ``--tan-states``, and two ``predict_proba`` calls on those rows: its
CPT counts are scattered row by row where the one-hot contraction would pass 2^22 (q, M, M, c)
entries, into a (K, M, c) table (K the total number of states).

Usage: python benchmarks/bench_pair_measures.py [--n 194,1000] [--states 20,60,194,600]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import jax
import numpy as np

import jaxnb
from jaxnb.datasets import load_flags
from jaxnb.methods import filters as F


def make(n, m_big, q=29, c=8, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n).astype(np.int32)
    states = [int(s) for s in rng.integers(2, 9, q - 1)]
    cols = [
        np.where(rng.random(n) < 0.5, (y + rng.integers(0, 2, n)) % s, rng.integers(0, s, n))
        for s in states
    ]
    cols.append(rng.integers(0, m_big, n))
    return np.stack(cols, 1).astype(np.int32), y, tuple(states) + (m_big,), c


def timed(fn, repeats):
    out = jax.block_until_ready(fn())  # compile
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="194,1000", help="comma-separated row counts")
    ap.add_argument("--states", default="20,60,194,600", help="states of the large column")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-gb", type=float, default=4.0, help="skip the dense path above this")
    ap.add_argument(
        "--tan-states",
        default="194,2000",
        help="states of the large column for the TAN fits at the end ('' to skip)",
    )
    args = ap.parse_args(argv)
    print(
        f"backend {jax.default_backend()}, {os.cpu_count()} CPUs, load "
        f"{os.getloadavg()[0]:.1f}, {platform.processor() or platform.machine()}; "
        f"medians of {args.repeats} after compilation"
    )
    hdr = (
        f"{'n':>6} {'M':>5} {'dense entries':>14} {'dense s':>9} {'sorted s':>9} "
        f"{'dense/sorted':>12} {'max |diff|':>10}  picked"
    )
    print(hdr)
    print("-" * len(hdr))
    for n in (int(v) for v in args.n.split(",")):
        for m in (int(v) for v in args.states.split(",")):
            codes, y, states, c = make(n, m)
            q = codes.shape[1]
            entries = q * q * max(states) ** 2 * c
            sorted_fn = jax.jit(F._information_sorted, static_argnums=(2,))
            t_sorted, got = timed(lambda: sorted_fn(codes, y, c, None), args.repeats)  # noqa: B023
            if entries * 4 * 3 / 2**30 <= args.max_gb:  # tensor, p and one temporary
                dense_fn = jax.jit(F._information_dense, static_argnums=(2, 3))
                t_dense, ref = timed(
                    lambda: dense_fn(codes, y, states, c, None),  # noqa: B023
                    args.repeats,
                )
                diff = max(
                    float(np.abs(np.asarray(a) - np.asarray(b)).max())
                    for a, b in zip(got, ref, strict=True)
                )
                dense_txt, ratio, diff_txt = (
                    f"{t_dense:.4f}",
                    f"{t_dense / t_sorted:.1f}x",
                    f"{diff:.1e}",
                )
            else:
                dense_txt, ratio, diff_txt = f"> {args.max_gb:g} GB", "-", "-"
            picked = "dense" if F._dense_pairs(q, max(states), c) else "sorted"
            print(
                f"{n:>6} {m:>5} {entries:>14.3g} {dense_txt:>9} {t_sorted:>9.4f} {ratio:>12} "
                f"{diff_txt:>10}  {picked}"
            )
    X, y_raw, names, _ = load_flags()
    ident = np.array([f"id{i}" for i in range(len(y_raw))], dtype=object)
    X = np.concatenate([ident[:, None], X], axis=1)
    n_disc = sum(not isinstance(v, float) for v in X[0])  # text cells: discrete under "auto"
    model = jaxnb.FilterNB(filter="cfs", discrete="auto")
    t0 = time.perf_counter()
    model.fit(X, y_raw)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    model.fit(X, y_raw)
    again = time.perf_counter() - t0
    print(
        f"\nFilterNB(filter='cfs') on Flags + a 194-state identifier ({X.shape[1]} columns, "
        f"{n_disc} discrete by 'auto'): first fit {first:.2f} s (compilation included), "
        f"refit {again:.3f} s; selected {int(model.support_.sum())} predictors"
    )
    for m in (int(v) for v in args.tan_states.split(",") if v):
        codes, y, states, c = make(1000, m)
        times = []
        for _ in range(2):  # the first fit compiles
            t0 = time.perf_counter()
            tan = jaxnb.TAN(discrete="all").fit(codes, y)
            jax.block_until_ready(tan.params_.log_cpt)
            times.append(time.perf_counter() - t0)
        pred = []
        for _ in range(2):  # the first call compiles
            t0 = time.perf_counter()
            tan.predict_proba(codes)
            pred.append(time.perf_counter() - t0)
        size = sum(a.nbytes for a in jax.tree.leaves(tan.params_)) / 1e6
        print(
            f"TAN(discrete='all') on 1000 rows, {codes.shape[1]} columns, one of {m} states, "
            f"{c} classes: first fit {times[0]:.2f} s, second {times[1]:.2f} s; "
            f"predict_proba of the 1000 rows {pred[0]:.2f} s, again {pred[1]:.3f} s; "
            f"parameters {size:.1f} MB"
        )


if __name__ == "__main__":
    main()
