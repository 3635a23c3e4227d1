"""Where float32 L-BFGS of the gradient-trained weighted NB stops, for several stall rules.

`jaxnb.methods.weighted.STALL_STEPS` is the number of L-BFGS steps in a row whose line search
spent its whole budget without a lower value after which the fit stops as stalled. Too small a
value stops before the objective's float32 floor (L-BFGS can find lower values again after a run
of failed line searches); too large a value wastes up to STALL_STEPS x 20 objective evaluations.
For each seed the table prints, per rule, the steps taken, the relative gap of the objective to
the same solve with no stall rule run to `--max-steps`, and the wall time (compilation included:
each rule is its own program).

Data: the training rows of `bench_weighted.py` (n rows, p Gaussian predictors, a tenth shifted by
0.5 x the class code, c classes); float32 log-contributions of the NB fit; ridge l2 = 1e-4
(WeightedNB's default).

The XLA CPU backend's optimization level changes float32 rounding and with it where runs of
failed line searches occur: compare `XLA_FLAGS=--xla_backend_optimization_level=0` (the test
suite's level) with the default (3).

Usage: python benchmarks/bench_wnb_stall.py [--n 500 --p 100 --c 3 --seeds 4 --max-steps 2000]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import jax
import jax.numpy as jnp
from bench_weighted import data  # the same data as bench_weighted.py (its training half)

from jaxnb import fit_mle, fit_stats, log_contributions
from jaxnb.methods import weighted as wt


def log_densities(n, p, c, seed):
    X, y, _, _ = data(n, p, c, seed)
    empty = jnp.zeros((n, 0), jnp.int32)
    stats = fit_stats(empty, jnp.asarray(X), jnp.asarray(y), None, n_states=(), n_classes=c)
    params = fit_mle(stats)
    return log_contributions(params, empty, jnp.asarray(X)), jnp.asarray(y), params.log_prior


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--c", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--max-steps", type=int, default=2000)
    ap.add_argument("--rules", default="10,20,30", help="stall rules to compare")
    args = ap.parse_args()
    rules = [int(r) for r in args.rules.split(",")]
    print(
        f"machine: {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} CPUs; "
        f"jax {jax.__version__}, backend {jax.default_backend()}; "
        f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}; library STALL_STEPS={wt.STALL_STEPS}"
    )
    print(f"n={args.n} p={args.p} c={args.c} float32, l2=1e-4, max_steps={args.max_steps}")
    print("seed | " + " | ".join(f"stall {r}: steps, gap, s" for r in rules))
    with jax.enable_x64(False):
        for seed in range(args.seeds):
            L, y, log_prior = log_densities(args.n, args.p, args.c, seed)
            out = {}
            for rule in [*rules, 10**9]:
                t = time.perf_counter()
                _, info = wt._fit_gradient_jit(
                    L, y, log_prior, None, 1e-4, 0.05, 1e-6,
                    solver="lbfgs", max_steps=args.max_steps, stall_steps=rule,
                )  # fmt: skip
                loss = float(info.loss)
                out[rule] = (int(info.n_steps), loss, time.perf_counter() - t)
            floor = out[10**9][1]
            cells = [f"{k:5d}, {(v - floor) / floor:8.1e}, {s:5.1f}" for k, v, s in
                     (out[r] for r in rules)]  # fmt: skip
            print(f"{seed:4d} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
