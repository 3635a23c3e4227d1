"""Gradient-trained weighted NB (`WeightedNB(scheme="gradient")`, Stream Eq. 2) in float32:
time, steps and distance from the float64 optimum.

The weights W (p, c) and bias b (c,) are fitted by full-batch L-BFGS on the training log-loss
with a ridge l2/2 ||W - 1||^2. For each configuration the table prints the float32 fit (the
library's default dtype) after compilation: wall time (median of ``--repeats``), L-BFGS steps,
whether it converged (gradient norm <= tol) or stalled (its line search found no lower value in
`jaxnb.methods.weighted.STALL_STEPS` steps in a row), its final objective and how far that
objective and the test posteriors are from a float64 fit run to its own floor (tol 1e-9, at
most 30000 steps; timed once, as the reference).

Data: n training and n test rows, p Gaussian predictors of which p / 10 are shifted by 0.5 x the
class code, c classes (seed 0).

Usage: python benchmarks/bench_weighted.py [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import jax
import numpy as np

from jaxnb import ConvergenceWarning
from jaxnb.estimators_penalized import WeightedNB


def data(n, p, c, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(2):  # training, test
        y = rng.integers(0, c, n)
        X = rng.normal(size=(n, p))
        X[:, : p // 10] += 0.5 * y[:, None]
        out += [X, y]
    return out


def fit(X, y, l2, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return WeightedNB("gradient", l2=l2, **kw).fit(X, y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one small configuration")
    args = ap.parse_args()
    configs = [(2000, 200, 5, 1e-4), (2000, 200, 5, 1e-2), (600, 150, 3, 1e-2)]
    if args.quick:
        configs = [(600, 150, 3, 1e-2)]
    print(
        f"machine: {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} CPUs; "
        f"jax {jax.__version__}, backend {jax.default_backend()}"
    )
    head = (
        f"{'n':>5} {'p':>4} {'c':>2} {'l2':>6} | {'f32 fit':>8} {'steps':>5} {'status':>9} "
        f"{'objective':>10} | {'f64 objective':>13} {'f64 steps':>9} {'f64 fit':>8} | "
        f"{'obj. gap':>8} {'max|P-P64|':>10}"
    )
    print(head)
    print("-" * len(head))
    for n, p, c, l2 in configs:
        X, y, Xt, yt = data(n, p, c)
        with jax.enable_x64(True):
            t = time.perf_counter()
            ref = fit(X, y, l2, tol=1e-9, max_steps=30000)
            t64 = time.perf_counter() - t
            P64 = ref.predict_proba(Xt)
            obj64, steps64 = float(ref.info_.loss), int(ref.info_.n_steps)
        with jax.enable_x64(False):
            fit(X, y, l2)  # compile
            times = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                m = fit(X, y, l2)
                times.append(time.perf_counter() - t)
            info = m.info_
            status = (
                "converged"
                if bool(info.converged)
                else ("stalled" if bool(getattr(info, "stalled", False)) else "max_steps")
            )
            gap = float(info.loss) - obj64
            dP = float(np.abs(m.predict_proba(Xt) - P64).max())
        print(
            f"{n:>5} {p:>4} {c:>2} {l2:>6.0e} | {np.median(times):>7.2f}s {int(info.n_steps):>5} "
            f"{status:>9} {float(info.loss):>10.6f} | {obj64:>13.7f} {steps64:>9} {t64:>7.1f}s | "
            f"{gap:>8.1e} {dP:>10.1e}"
        )


if __name__ == "__main__":
    main()
