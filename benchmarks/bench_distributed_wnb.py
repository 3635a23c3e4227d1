"""Data-parallel weighted NB (`jaxnb.distributed.fit_wnb`) in float32 against float64: time,
steps, stopping reason and distance of the posteriors from the float64 optimum; and the time of
one value-and-gradient evaluation of its row-sum loss.

`fit_wnb` minimizes the mean log-loss of per-predictor-per-class weights on NB's (standardized,
floored) terms plus a ridge toward NB, by full-batch L-BFGS (the single-device reference of
`fit_wnb_sharded`: same objective and solver; the rows are not split here). Each float32 fit is
timed after compilation (median of ``--repeats``) with the default tol 1e-8 and max_steps 500;
the float64 fit (tol 1e-10, timed once after compilation) is the reference, its gradient norm
certifying the optimum of this strictly convex objective. The status column says whether the
float32 fit converged (gradient norm <= tol), stalled at its rounding floor
(``WNBInfo.stalled``) or ran to max_steps.

Data: n rows of q four-state discrete and r Gaussian predictors (the Gaussian ones shifted by
0.3 x the class code), c classes (seed 0); UCI Flags (194 rows, 18 discrete and 10 numeric
predictors, 8 classes). Posteriors on the training rows.

Usage: python benchmarks/bench_distributed_wnb.py [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxnb.distributed as jd
from jaxnb.data import FeatureEncoder, encode_labels
from jaxnb.datasets import load_flags
from jaxnb.methods.nb import fit_nb


def synthetic(n, q, r, c, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n).astype(np.int32)
    codes = rng.integers(0, 4, (n, q)).astype(np.int32)
    values = rng.normal(size=(n, r)) + 0.3 * y[:, None]
    return codes, values, y, [4] * q, c


def flags():
    X, y, _, numeric = load_flags()
    enc = FeatureEncoder(discrete=np.flatnonzero(~np.asarray(numeric)).tolist()).fit(X)
    codes, values = enc.transform(X, dtype=np.float64)
    classes, y = encode_labels(y)
    return codes, values, y, list(enc.n_states_), len(classes)


def status(info):
    if bool(info.converged):
        return "converged"
    if bool(getattr(info, "stalled", False)):
        return "stalled"
    return "max_steps"


def fit_once(codes, values, y, states, c, **kw):
    p, info = jd.fit_wnb(codes, values, y, n_states=states, n_classes=c, **kw)
    jax.block_until_ready(p.weights)
    return p, info


def row(name, case, repeats):
    codes, values, y, states, c = case
    with jax.enable_x64(True):
        fit_once(codes, values, y, states, c, tol=1e-10)
        t0 = time.perf_counter()
        ref, info64 = fit_once(codes, values, y, states, c, tol=1e-10)
        t64 = time.perf_counter() - t0
        P64 = np.exp(np.asarray(jd.predict_wnb(ref, codes, values)))
    v32 = values.astype(np.float32)
    fit_once(codes, v32, y, states, c)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        got, info = fit_once(codes, v32, y, states, c)
        times.append(time.perf_counter() - t0)
    P32 = np.exp(np.asarray(jd.predict_wnb(got, codes, v32), np.float64))
    print(
        f"| {name} | {np.median(times):.2f} s | {int(info.num_steps)} | {status(info)} | "
        f"{float(info.grad_norm):.1e} | {np.abs(P32 - P64).max():.1e} | "
        f"{int((P32.argmax(1) != P64.argmax(1)).sum())} | {t64:.2f} s, {int(info64.num_steps)} |",
        flush=True,
    )


def loss_step(n, repeats):
    """Median time of one value and gradient of the row-sum loss (float32, 10 + 10 predictors,
    3 classes), the work of one full-batch step."""
    codes, values, y, states, c = synthetic(n, 10, 10, 3)
    cd, vl, yy = jnp.asarray(codes), jnp.asarray(values, jnp.float32), jnp.asarray(y)
    params = fit_nb(cd, vl, yy, n_states=tuple(states), n_classes=c)
    data = dict(codes=cd, values=vl, y=yy, weight=jnp.ones(n, jnp.float32))
    W, b = jnp.ones((20, c), jnp.float32), params.log_prior
    vg = jax.jit(
        jax.value_and_grad(lambda W, b: jd.wnb_row_loss(params, W, b, data), argnums=(0, 1))
    )
    jax.block_until_ready(vg(W, b))
    times = []
    for _ in range(max(5, repeats)):
        t0 = time.perf_counter()
        jax.block_until_ready(vg(W, b))
        times.append(time.perf_counter() - t0)
    print(
        f"loss value + gradient, {n:,} rows x 20 predictors x 3 classes: "
        f"{np.median(times) * 1e3:.1f} ms",
        flush=True,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="Flags and one small configuration")
    args = ap.parse_args()
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"{jax.default_backend()}, jax {jax.__version__}, float32 fits (median of "
        f"{args.repeats}) vs a float64 reference"
    )
    print(
        "| data (n x q + r x c) | float32 time | steps | status | grad norm | "
        "max abs(P32 - P64) | flips | float64 time, steps |"
    )
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    row("Flags 194 x 18 + 10 x 8", flags(), args.repeats)
    cases = [(4000, 6, 6, 3)] if args.quick else [(4000, 6, 6, 3), (20000, 10, 10, 3)]
    for n, q, r, c in cases:
        row(f"{n} x {q} + {r} x {c}", synthetic(n, q, r, c), args.repeats)
    loss_step(20000 if args.quick else 200000, args.repeats)


if __name__ == "__main__":
    main()
