"""Core functions under `jax.vmap` over data sets, where a `lax.cond` picks an exact fallback.

Under `jax.vmap` a cond whose predicate differs per batch element becomes a select that runs
both branches for every element. The core functions below choose a cheaper form where the data
allow it (no far-apart classes, no missing value, no removal in a search step, a full Newton
step); `jaxnb._batch.any_in_batch` makes that choice once per batch, so the fallback runs only
when some element needs it. Each case is timed warm (compiled once first), jitted and vmapped:

* ``fit_nb``: Gaussian NB statistics and MLE of B data sets (one row block, and 4096-row blocks);
* ``log_joint``: Gaussian scores of B data sets under B parameter sets;
* ``selective_path``: a forward selective-NB search (training error) per data set;
* ``fit_gradient_weights``: the Newton fit of per-class-per-variable NB weights per data set.

Run it on another commit's library by putting that package first on ``PYTHONPATH``; the script
prints a checksum of each case's output, so both runs can be compared for equal results.

Usage: python benchmarks/bench_vmap.py [--repeats 9]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxnb.likelihood import log_contributions, log_joint
from jaxnb.methods.nb import fit_nb
from jaxnb.methods.selective import selective_path
from jaxnb.methods.weighted import fit_gradient_weights

C = 3  # classes


def _gaussian(rng, b, n, r):
    y = rng.integers(0, C, (b, n))
    X = rng.normal(size=(b, n, r)) + 0.4 * y[..., None] * (np.arange(r) < r // 2)
    return jnp.asarray(X, jnp.float32), jnp.asarray(y)


def _params(X, y):
    """NB parameters of each data set, one vmapped `fit_nb` (NaiveBayes's defaults)."""
    E = jnp.zeros(X.shape[:2] + (0,), jnp.int32)
    return jax.vmap(lambda c, v, t: fit_nb(c, v, t, n_states=(), n_classes=C))(E, X, y)


def _contributions(X, y):
    """(B, n, r, c) NB log-contributions of each data set under its own fit."""
    P = _params(X, y)
    E = jnp.zeros(X.shape[1:2] + (0,), jnp.int32)
    return jax.vmap(lambda p, x: log_contributions(p, E, x))(P, X), P.log_prior


def cases(rng):
    out = []
    for b, n, r, bs in [(100, 300, 20, None), (10, 20000, 20, 4096)]:
        X, y = _gaussian(rng, b, n, r)
        E = jnp.zeros((b, n, 0), jnp.int32)
        fit = jax.vmap(
            lambda c, v, t, bs=bs: fit_nb(c, v, t, n_states=(), n_classes=C, block_size=bs)
        )
        label = f"fit_nb, {b} sets x {n} rows x {r}" + (f", blocks of {bs}" if bs else "")
        out.append((label, jax.jit(fit), (E, X, y)))
    for b, n, r in [(100, 3000, 20), (10, 20000, 20)]:
        X, y = _gaussian(rng, b, n, r)
        P = _params(X[:, :300], y[:, :300])
        E = jnp.zeros((b, n, 0), jnp.int32)
        out.append(
            (f"log_joint, {b} sets x {n} rows x {r}", jax.jit(jax.vmap(log_joint)), (P, E, X))
        )
    X, y = _gaussian(rng, 32, 300, 20)
    L, lp = _contributions(X, y)
    search = jax.vmap(lambda L, b, t: selective_path(L, b, t, direction="forward"))
    out.append(("selective_path forward, 32 sets x 300 rows x 20", jax.jit(search), (L, lp, y)))
    X, y = _gaussian(rng, 32, 400, 5)
    L, lp = _contributions(X, y)
    newton = jax.vmap(lambda L, t, b: fit_gradient_weights(L, t, b, l2=1e-2, solver="newton"))
    out.append(("fit_gradient_weights Newton, 32 sets x 400 rows x 5", jax.jit(newton), (L, y, lp)))
    return out


def _checksum(tree):
    leaves = [np.asarray(a, np.float64) for a in jax.tree.leaves(tree)]
    return sum(float(np.nansum(np.where(np.isfinite(a), a, 0.0))) for a in leaves if a.size)


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        return names[0] if names else platform.machine()
    except OSError:
        return platform.processor() or platform.machine()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args(argv)
    import jaxnb

    print(
        f"jaxnb from {os.path.dirname(jaxnb.__file__)}; jax {jax.__version__} "
        f"({jax.default_backend()}), {os.cpu_count()} CPUs, {_cpu()}; "
        f"load average {os.getloadavg()[0]:.1f}; float32"
    )
    rng = np.random.default_rng(0)
    print("\n| case (vmapped, jitted) | best ms | median ms | checksum |\n|---|---:|---:|---:|")
    for label, fn, fargs in cases(rng):
        out = jax.block_until_ready(fn(*fargs))
        ts = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            jax.block_until_ready(fn(*fargs))
            ts.append(time.perf_counter() - t0)
        print(
            f"| {label} | {min(ts) * 1e3:.2f} | {np.median(ts) * 1e3:.2f} | {_checksum(out):.6g} |"
        )
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
