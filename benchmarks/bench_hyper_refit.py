"""Hyperparameter sweeps: the same data refitted with a new value of one hyperparameter each time.

This is the pattern of a grid search or a sensitivity plot in a notebook. A hyperparameter that is
a traced argument of the compiled programs costs one compilation for the whole sweep; one that is
part of the jit key (a static argument) compiles again for every new value. The table prints, per
estimator and hyperparameter: the first fit + predict (compilation included), the median of the
later fits + predicts (each with a value not seen before), and the XLA compilations during those
later calls (JAX's backend-compile monitoring event).

Structural hyperparameters compile by design: `StagewiseNB`'s epsilon sets the number of alpha
levels (1 / epsilon, the shape of its batch of moves), so each new epsilon compiles once.

Data: 2000 rows, 3 four-state discrete and 3 Gaussian predictors, 3 classes (numpy seed 0),
predictions on the same rows. Float64.

Usage: python benchmarks/bench_hyper_refit.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

import jaxnb  # noqa: E402
from jaxnb.cache import count_compilations  # noqa: E402
from jaxnb.stream.online import OnlineWeightedNB  # noqa: E402

D = [0, 1, 2]
SWEEPS = [  # (label, constructor of one value, values: the first compiles, the rest are timed)
    ("NaiveBayes alpha", lambda v: jaxnb.NaiveBayes(discrete=D, alpha=v), [1.0, 0.5, 0.2, 2.0]),
    ("GroupLassoNB alpha", lambda v: jaxnb.GroupLassoNB(discrete=D, alpha=v), [1.0, 0.5, 0.2, 2.0]),
    (
        "WeightedNB('gradient') l2",
        lambda v: jaxnb.WeightedNB("gradient", discrete=D, l2=v),
        [1e-2, 1e-3, 3e-3, 3e-2],
    ),
    ("L1NB alpha", lambda v: jaxnb.L1NB(discrete=D, alpha=v), [1.0, 0.5, 0.2, 2.0]),
    (
        "StagewiseNB epsilon",
        lambda v: jaxnb.StagewiseNB(discrete=D, epsilon=v),
        [0.1, 0.2, 0.25, 0.5],
    ),
    (
        "OnlineWeightedNB learning_rate",
        lambda v: OnlineWeightedNB(learning_rate=v, warmup=3),
        [0.05, 0.1, 0.2, 0.02],
    ),
]


def _data(n=2000):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, n)
    Xd = (y[:, None] + rng.integers(0, 3, (n, 3))) % 4
    Xc = y[:, None] * np.array([1.0, 0.5, 0.0]) + rng.normal(size=(n, 3))
    return np.c_[Xd, Xc].astype(float), y


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two sweeps, two values each (smoke)")
    args = ap.parse_args(argv)
    X, y = _data(500 if args.quick else 2000)
    sweeps = SWEEPS[-2:] if args.quick else SWEEPS
    print(
        f"# jax {jax.__version__}, {platform.machine()}, {os.cpu_count()} CPU, "
        f"{X.shape[0]} rows x {X.shape[1]} predictors, float64"
    )
    print("| estimator, hyperparameter | values | first s | new value ms | compiles |")
    print("| --- | --- | ---: | ---: | ---: |")
    for label, make, values in sweeps:
        values = values[:2] if args.quick else values
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings are not what is timed here
            t = time.perf_counter()
            make(values[0]).fit(X, y).predict(X)
            first = time.perf_counter() - t
            times = []
            with count_compilations() as counter:
                for v in values[1:]:
                    t = time.perf_counter()
                    make(v).fit(X, y).predict(X)
                    times.append(time.perf_counter() - t)
        shown = ", ".join(f"{v:g}" for v in values)
        print(
            f"| {label} | {shown} | {first:.2f} | {1e3 * np.median(times):.1f} | "
            f"{counter.n} in {len(times)} |"
        )


if __name__ == "__main__":
    main()
