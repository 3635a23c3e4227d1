"""Gaussian semi-naive search: incremental step scoring vs scoring every candidate from scratch.

A step of forward sequential selection and joining (FSSJ) scores every join of an unused
predictor to a new or an existing group; a step of the backward condensed search scores every
removal from the one joint group. jaxnb scores a step's moves incrementally: one Cholesky factor
per target group and class gives every predictor's conditional Gaussian N(x_i | x_g) (joins), and
one inverse covariance gives every N(x_i | x_rest) (removals). The reference builds each candidate
structure and scores it from scratch (one p × p Cholesky per structure and class), as the
searches did before. Both are jitted; times exclude compilation (one warm-up call) and are
medians of ``--repeats`` runs; ratio = from scratch / incremental (> 1: incremental faster). The
table also prints the largest difference between the two scores (validation error and log loss)
and the time of a whole warm ``GaussianSemiNaiveNB`` fit per search.

Data: c classes, n rows (half fit, half validation), p continuous predictors, the first p/10
shifted with the class, and the first 12 predictors pairwise correlated; the FSSJ step starts
from 12 predictors in 4 groups.

Usage: python benchmarks/bench_seminaive.py [--n 2000] [--c 5] [--p 30 60 120] [--repeats 3]
"""

from __future__ import annotations

import argparse
import platform
import time

import jax
import numpy as np

from jaxnb.estimators_structure import GaussianSemiNaiveNB
from jaxnb.methods import structure as S


def make_data(n, p, c, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n).astype(np.int32)
    x = rng.normal(size=(n, p))
    x[:, : max(1, p // 10)] += 0.5 * y[:, None]
    x[:, 1:12:2] = 0.8 * x[:, 0:11:2] + 0.6 * x[:, 1:12:2]  # correlated pairs worth joining
    return x, y


def median_time(fn, repeats):
    fn()  # warm-up: compiles
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def step_rows(x, y, c, repeats):
    half = x.shape[0] // 2
    params = S.fit_gaussian_joint(x[:half], y[:half], c)
    score = S._make_scorer(params, x[half:], y[half:], c, None)
    p = x.shape[1]
    rows = []

    # FSSJ step from 12 predictors in 4 groups: every unused predictor to a new or existing group
    groups = np.full(p, -1, np.int32)
    groups[:12] = np.arange(12) // 3
    targets = np.array([-2, 0, 1, 2, 3], np.int32)
    unused = np.flatnonzero(groups < 0)
    ids = (groups.max() + 1, 0, 1, 2, 3)
    cands = np.array([np.where(np.arange(p) == i, g, groups) for i in unused for g in ids])

    def incremental():
        return [a[:, unused].T.ravel() for a in score.joins(groups, targets)]

    rows.append(("FSSJ step", len(cands), incremental, lambda: score(cands)))

    # backward step from all p predictors in one group: every removal
    one = np.zeros(p, np.int32)
    cands_b = np.array([np.where(np.arange(p) == i, -1, one) for i in range(p)])
    rows.append(("backward step", p, lambda: score.removals(one), lambda: score(cands_b)))

    out = []
    for name, n_cand, fast, scratch in rows:
        t_fast, t_scratch = median_time(fast, repeats), median_time(scratch, repeats)
        (e1, l1), (e2, l2) = fast(), scratch()
        diff = max(np.max(np.abs(e1 - e2)), np.max(np.abs(l1 - l2)))
        out.append((name, n_cand, t_fast, t_scratch, diff))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--c", type=int, default=5)
    ap.add_argument("--p", type=int, nargs="+", default=[30, 60, 120])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if min(args.p) < 12:
        ap.error("--p must be at least 12 (the FSSJ step starts from 12 predictors)")
    print(
        f"# {platform.processor() or platform.machine()}, jax {jax.__version__}, "
        f"{jax.devices()[0].platform}, {'float64' if jax.config.jax_enable_x64 else 'float32'}"
    )
    print(
        f"# n = {args.n} rows (half validation), c = {args.c}; times in ms; ratio = scratch / incr."
    )
    head = (
        f"{'p':>4} {'step':<14} {'moves':>6} {'incremental':>12} {'from scratch':>13} "
        f"{'ratio':>7} {'max |diff|':>11} {'fit (s)':>8}"
    )
    print(head)
    for p in args.p:
        x, y = make_data(args.n, p, args.c)
        for (name, n_cand, t_fast, t_scratch, diff), search in zip(
            step_rows(x, y, args.c, args.repeats), ("fssj", "backward"), strict=True
        ):
            model = GaussianSemiNaiveNB(search=search)
            t_fit = median_time(lambda m=model, x=x, y=y: m.fit(x, y), 1)
            print(
                f"{p:>4} {name:<14} {n_cand:>6} {1e3 * t_fast:>12.1f} {1e3 * t_scratch:>13.1f} "
                f"{t_scratch / t_fast:>7.1f} {diff:>11.1e} {t_fit:>8.2f}"
            )


if __name__ == "__main__":
    main()
