"""Refit cost: one estimator fitted and used again and again on new data of the same shape.

This is the pattern of a cross-validation loop, a simulation study or a notebook rerun. After the
first (compiling) call every later fit + predict should reuse the compiled programs, so its cost is
the compiled compute plus the estimator's Python. The table prints, per estimator configuration:
the first call (compilation included), the median of ``--repeats`` later calls on fresh data sets,
the number of XLA compilations during those later calls (counted with JAX's backend-compile
monitoring event: 0 expected, except where a shape depends on the data -- AveragedNB's table has
as many rows as the largest discretization, rounded up to a power of two, so a refit compiles once
when a data set first needs a larger size), and, where scikit-learn has the same model, its median
and the ratio scikit-learn / jaxnb.

A second timed pass refits on training sets that each have a *new* row count (data set i keeps its
first 300 - i rows: the sizes of unequal CV folds or of a learning curve), again with the median
time and the compilations. The estimators pad their training rows to a few bucket sizes with
zero-weight rows, so these compile nothing either (a size in a new bucket compiles once).

Data: Table-1 data sets of the fsNB paper (`jaxnb.datasets.make_table1_batch`: N = 300 training
rows, p = 20 predictors, 3 classes; DR discrete, CR continuous), predictions on 1000 test rows.
Float64.

Usage: python benchmarks/bench_refit.py [--repeats 7] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

import jaxnb  # noqa: E402
from jaxnb.cache import count_compilations  # noqa: E402
from jaxnb.datasets import make_table1_batch  # noqa: E402
from jaxnb.stream import anb, online  # noqa: E402

CONFIGS = [  # (estimator, options, data kind, scikit-learn peer of the same model or None)
    ("NaiveBayes", {}, "D", "CategoricalNB"),
    ("NaiveBayes", {}, "C", "GaussianNB"),
    ("SelectiveNB", {}, "D", None),
    ("StagewiseNB", {}, "D", None),
    ("StagewiseNB", {"selection": "cv"}, "D", None),
    ("GroupLassoNB", {"adaptive": True}, "D", None),
    ("GroupLassoNB", {"adaptive": True}, "C", None),
    ("L1NB", {}, "C", None),
    ("WeightedNB", {"scheme": "ferreira"}, "C", None),
    ("WeightedNB", {"scheme": "gradient"}, "C", None),
    ("TAN", {}, "D", None),
    ("GaussianSemiNaiveNB", {}, "C", None),
    ("FilterNB", {}, "D", None),
    ("FilterWrapperNB", {}, "D", None),
    ("FlexibleNB", {}, "C", None),
    ("AveragedNB", {}, "C", None),
]


def _estimator(name):
    return getattr(jaxnb, name, None) or getattr(anb, name, None) or getattr(online, name)


def _peer(name):
    from sklearn.naive_bayes import CategoricalNB, GaussianNB

    return {
        "CategoricalNB": lambda: CategoricalNB(alpha=1.0, min_categories=3),
        "GaussianNB": GaussianNB,
    }[name]()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7, help="timed refits per configuration")
    ap.add_argument("--quick", action="store_true", help="3 refits, 4 configurations (smoke)")
    args = ap.parse_args(argv)
    repeats = 3 if args.quick else args.repeats
    configs = CONFIGS[:4] if args.quick else CONFIGS
    n_sets = repeats + 1
    data = {}
    for kind, sc in (("D", "DR"), ("C", "CR")):
        d, ns = make_table1_batch(jax.random.PRNGKey(7), sc, n_datasets=n_sets, n_test=1000)
        d = {k: np.asarray(v) for k, v in d.items()}
        X = "codes" if kind == "D" else "values"
        data[kind] = (d[X + "_train"], d["y_train"], d[X + "_test"], list(ns))
    print(
        f"backend {jax.default_backend()}, {os.cpu_count()} CPUs, {platform.processor() or '?'}, "
        f"load {os.getloadavg()[0]:.1f}; N = 300 train / 1000 test rows, p = 20, 3 classes"
    )
    rows = []
    with count_compilations() as counter:
        for name, opts, kind, peer in configs:
            Xtr, ytr, Xte, ns = data[kind]
            base = {"discrete": "all", "n_states": ns} if kind == "D" else {"discrete": "none"}
            cls = _estimator(name)
            kw = {} if cls.__module__.startswith("jaxnb.stream") else base

            def run(i, n=None, cls=cls, kw=kw, opts=opts, Xtr=Xtr, ytr=ytr, Xte=Xte):
                return cls(**kw, **opts).fit(Xtr[i][:n], ytr[i][:n]).predict(Xte[i])

            t0 = time.perf_counter()
            run(0)
            first = time.perf_counter() - t0
            before, times = counter.n, []
            for i in range(1, n_sets):
                t0 = time.perf_counter()
                run(i)
                times.append(time.perf_counter() - t0)
            med = float(np.median(times))
            compiles = counter.n - before
            before, new_times = counter.n, []
            for i in range(1, n_sets):  # a new training size each time: 299, 298, ... rows
                t0 = time.perf_counter()
                run(i, Xtr.shape[1] - i)
                new_times.append(time.perf_counter() - t0)
            new_med, new_compiles = float(np.median(new_times)), counter.n - before
            peer_med = None
            if peer is not None:
                ptimes = []
                for i in range(1, n_sets):
                    t0 = time.perf_counter()
                    _peer(peer).fit(Xtr[i], ytr[i]).predict(Xte[i])
                    ptimes.append(time.perf_counter() - t0)
                peer_med = float(np.median(ptimes))
            label = f"{name}({', '.join(f'{k}={v!r}' for k, v in opts.items())}) [{kind}]"
            rows.append((label, first, med, compiles, new_med, new_compiles, peer, peer_med))

    print()
    print(
        f"{'estimator [D: discrete DR, C: continuous CR]':58s} {'first s':>8s} "
        f"{'refit ms':>9s} {'compiles':>8s} {'new-N ms':>9s} {'compiles':>8s}  "
        "peer (same model)        peer ms   peer/ours"
    )
    for label, first, med, compiles, new_med, new_compiles, peer, peer_med in rows:
        tail = (
            f"  {peer:24s} {peer_med * 1e3:7.2f}   {peer_med / med:6.2f}x"
            if peer is not None
            else ""
        )
        print(
            f"{label:58s} {first:8.2f} {med * 1e3:9.2f} {compiles:8d} {new_med * 1e3:9.2f} "
            f"{new_compiles:8d}{tail}"
        )
    bad = [r[0] for r in rows if r[3]]
    print("\nrefits that compiled:", ", ".join(bad) if bad else "none")
    bad = [r[0] for r in rows if r[5]]
    print("refits on new training sizes that compiled:", ", ".join(bad) if bad else "none")


if __name__ == "__main__":
    main()
