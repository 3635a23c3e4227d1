"""CFS best-first search: jaxnb's compiled search vs a Python heap search, same subsets.

Hall's (1999) CFS has no scikit-learn implementation, so the peer is the usual way to write the
search (and what `jaxnb.methods.filters.cfs` did before it was compiled): a Python `heapq` open
list and a set of seen subsets, with all children of an expansion scored in one vectorized NumPy
call (float64). Both searches use the same rules (ties popped by merit, size, sorted index tuple;
stop after 5 consecutive non-improving expansions), so the table also checks that they select the
same subset with the same merit.

Data: 3 classes, N rows, p continuous predictors that mix 10 class-dependent latent factors with
noise (so the selected subset grows with p); correlations are |Pearson r| (Hall's continuous
measure, `class_correlation_continuous` / `feature_correlation_continuous`), computed once outside
the timings. Times: median of ``--repeats`` calls after one warm-up (the first call, compilation
included, is reported separately); ratio = heap / jaxnb (> 1: jaxnb faster).

Usage: python benchmarks/bench_filters.py [--p 50,200,800] [--repeats 5] [--quick]
"""

from __future__ import annotations

import argparse
import heapq
import platform
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

from jaxnb.methods import filters as F  # noqa: E402


def heap_cfs(rcf, rff, max_stale=5):
    """Best-first CFS with heapq; children of an expansion scored together in NumPy."""
    p = rcf.shape[0]
    off = rff * (1.0 - np.eye(p))
    best, best_merit = frozenset(), 0.0
    heap = [(-0.0, 0, (), frozenset())]
    seen = {frozenset()}
    stale = 0
    while heap and stale < max_stale:
        node = heapq.heappop(heap)[3]
        m = np.zeros(p)
        m[list(node)] = 1.0
        k = len(node) + 1
        merits = (m @ rcf + rcf) / np.sqrt(k + m @ off @ m + off @ m + m @ off)
        improved = False
        for j in range(p):
            child = node | {j}
            if j in node or child in seen:
                continue
            seen.add(child)
            heapq.heappush(heap, (-merits[j], k, tuple(sorted(child)), child))
            if merits[j] > best_merit + 1e-12:
                best, best_merit, improved = child, float(merits[j]), True
        stale = 0 if improved else stale + 1
    return np.array(sorted(best)), best_merit


def make_correlations(n, p, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    latent = rng.standard_normal((n, 10)) + y[:, None] * rng.random(10)
    X = 0.3 * latent @ rng.standard_normal((10, p)) + rng.standard_normal((n, p))
    rcf = np.asarray(F.class_correlation_continuous(X, y, 3))
    rff = np.asarray(F.feature_correlation_continuous(X))
    return rcf, rff


def _time(fn, args, repeats):
    t0 = time.perf_counter()
    out = fn(*args)
    first = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t0)
    return out, first, float(np.median(times))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", default="50,200,800", help="comma-separated predictor counts")
    ap.add_argument("--n", type=int, default=3000, help="rows used for the correlations")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="p = 50 and 200, 2 repeats")
    args = ap.parse_args(argv)
    ps = [50, 200] if args.quick else [int(v) for v in args.p.split(",")]
    repeats = 2 if args.quick else args.repeats
    print(f"{platform.processor() or platform.machine()}; jax {jax.__version__}; float64")
    hdr = (
        f"{'p':>5} {'selected':>8} {'expansions':>10} {'jaxnb ms':>9} {'first call s':>12} "
        f"{'heap ms':>9} {'ratio':>7} {'same subset':>11}"
    )
    print(hdr)
    print("-" * len(hdr))
    for p in ps:
        rcf, rff = make_correlations(args.n, p)
        (sel, merit), first, t_jax = _time(F.cfs, (rcf, rff), repeats)
        (sel_h, merit_h), _, t_heap = _time(heap_cfs, (rcf, rff), repeats)
        n_exp = int(F.cfs_search(rcf, rff).n_expansions)
        same = sel.tolist() == sel_h.tolist() and abs(merit - merit_h) <= 1e-12 * max(1, merit)
        print(
            f"{p:5d} {len(sel):8d} {n_exp:10d} {t_jax * 1e3:9.1f} {first:12.2f} "
            f"{t_heap * 1e3:9.1f} {t_heap / t_jax:6.1f}x {'yes' if same else 'NO':>11}"
        )
        assert same, "compiled and heap searches disagree"


if __name__ == "__main__":
    main()
