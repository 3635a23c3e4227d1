"""Gradient-trained weighted NB (`WeightedNB(scheme="gradient")`, Stream Eq. 2) in float32:
time, steps and distance from the float64 optimum, Newton's method against L-BFGS.

The weights W (p, c) and bias b (c,) are fitted by full-batch Newton (``solver="newton"``, what
``solver="auto"`` runs while c (p + 1) <= 2048) or L-BFGS on the training log-loss with a ridge
l2/2 ||W - 1||^2. For each configuration and solver the table prints the float32 fit (the
library's default dtype) after compilation: wall time (median of ``--repeats``), steps, whether
it converged (gradient norm <= tol), stalled (no lower value at the objective's rounding floor)
or ran to max_steps, its final objective and how far that objective and the test posteriors are
from a float64 Newton fit run to tol 1e-10 (timed once, as the reference; its gradient norm
certifies the optimum of this strictly convex objective). With ``--f64`` the float64 fits of
both solvers are timed too (tol 1e-6, default budgets).

Data: n training and n test rows, p Gaussian predictors of which p / 10 are shifted by 0.5 x the
class code, c classes (seed 0); and UCI Flags (194 rows, 28 mixed predictors, 8 classes;
posteriors on the training rows).

Usage: python benchmarks/bench_weighted.py [--repeats 3] [--quick] [--f64]
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
    if n == "flags":
        from jaxnb.datasets import load_flags

        X, y = load_flags()[:2]
        return X, y, X, y
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


def status(info):
    if bool(info.converged):
        return "converged"
    return "stalled" if bool(info.stalled) else "max_steps"


def timed(X, y, l2, repeats, **kw):
    fit(X, y, l2, **kw)  # compile
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        m = fit(X, y, l2, **kw)
        times.append(time.perf_counter() - t)
    return m, float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one small configuration")
    ap.add_argument("--f64", action="store_true", help="also time both solvers in float64")
    args = ap.parse_args()
    configs = [
        ("flags", 28, 8, 1e-4),
        (2000, 200, 5, 1e-4),
        (2000, 200, 5, 1e-2),
        (600, 150, 3, 1e-2),
    ]
    if args.quick:
        configs = [(600, 150, 3, 1e-2)]
    print(
        f"machine: {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} CPUs; "
        f"jax {jax.__version__}, backend {jax.default_backend()}; load "
        f"{os.getloadavg()[0]:.1f}"
    )
    head = (
        f"{'n':>5} {'p':>4} {'c':>2} {'l2':>6} {'solver':>6} | {'f32 fit':>8} {'steps':>5} "
        f"{'status':>9} {'objective':>10} | {'obj. gap':>8} {'max|P-P64|':>10}"
        + (f" | {'f64 fit':>8} {'steps':>5} {'status':>9}" if args.f64 else "")
    )
    print(head)
    print("-" * len(head))
    for n, p, c, l2 in configs:
        X, y, Xt, yt = data(n, p, c)
        with jax.enable_x64(True):
            t = time.perf_counter()
            ref = fit(X, y, l2, tol=1e-10, solver="newton")
            t64 = time.perf_counter() - t
            P64 = ref.predict_proba(Xt)
            obj64 = float(ref.info_.loss)
            print(
                f"{n:>5} {p:>4} {c:>2} {l2:>6.0e} reference: float64 Newton, {t64:.1f} s "
                f"(compilation included), {int(ref.info_.n_steps)} steps, "
                f"{status(ref.info_)}, objective {obj64:.9f}"
            )
        for solver in ("newton", "lbfgs"):
            with jax.enable_x64(False):
                m, t32 = timed(X, y, l2, args.repeats, solver=solver)
                info = m.info_
                gap = float(info.loss) - obj64
                dP = float(np.abs(m.predict_proba(Xt) - P64).max())
            line = (
                f"{n:>5} {p:>4} {c:>2} {l2:>6.0e} {solver:>6} | {t32:>7.2f}s "
                f"{int(info.n_steps):>5} {status(info):>9} {float(info.loss):>10.6f} | "
                f"{gap:>8.1e} {dP:>10.1e}"
            )
            if args.f64:
                with jax.enable_x64(True):
                    m64, tt = timed(X, y, l2, 1, solver=solver)
                line += f" | {tt:>7.2f}s {int(m64.info_.n_steps):>5} {status(m64.info_):>9}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
