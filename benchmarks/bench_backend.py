"""Fit / predict throughput of NB on whatever JAX backend is present (CPU, GPU or TPU).

Mixed data: n rows, 10 discrete predictors (4 states) + 10 Gaussian predictors, 3 classes, float32
(JAX's default). Measured after compilation (median of ``--repeats``), with results blocked on:

* ``fit_stats``           one jitted pass over resident device arrays -> SuffStats
* ``fit_stats_sharded``   the same over all devices of the backend (psum of statistics), if > 1
* ``log_joint``           per-class scores of every row (prediction); with several devices also
                          on the row-split arrays, inside ``shard_map`` and as a plain ``jit``
* ``sharded WNB step``    value and gradient of the weighted-NB loss over all devices (one
                          full-batch optimizer step's worth of work)
* ``NaiveBayes.fit``      the estimator end to end from NumPy (validation, encoding, transfer)
* ``GroupLassoNB``        aL1/L2-NB fit with AIC and 5-fold CV selection (at most 300,000 rows),
                          without and with a mesh of all devices

Usage: python benchmarks/bench_backend.py [--rows 2000000] [--repeats 5] [--cpu-devices N]
(on CPU ``--cpu-devices`` splits the host into N XLA devices before JAX starts; default 1)
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _early_cpu_devices(argv):
    for i, a in enumerate(argv):
        n = None
        if a == "--cpu-devices" and i + 1 < len(argv):
            n = int(argv[i + 1])
        elif a.startswith("--cpu-devices="):
            n = int(a.split("=", 1)[1])
        if (
            n
            and n > 1
            and "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", "")
        ):
            os.environ["XLA_FLAGS"] = (
                os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={n}"
            ).strip()


if __name__ == "__main__":
    _early_cpu_devices(sys.argv[1:])

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import jaxnb.distributed as jd  # noqa: E402
from jaxnb import NaiveBayes  # noqa: E402
from jaxnb.estimators_penalized import GroupLassoNB  # noqa: E402
from jaxnb.likelihood import log_joint  # noqa: E402
from jaxnb.methods.nb import fit_stats  # noqa: E402
from jaxnb.params import fit_mle  # noqa: E402

Q, R, M, C = 10, 10, 4, 3
N_STATES = (M,) * Q


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n).astype(np.int32)
    codes = rng.integers(0, M, (n, Q)).astype(np.int32)
    codes[:, :3] = np.where(rng.random((n, 3)) < 0.5, y[:, None] % M, codes[:, :3])
    values = (rng.standard_normal((n, R)) + y[:, None] * 0.3).astype(np.float32)
    return codes, values, y


def _time(fn, repeats):
    jax.block_until_ready(fn())
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cpu-devices", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    n = args.rows
    print(
        f"backend: {jax.default_backend()}; devices: {jax.devices()}; cpus: {os.cpu_count()}; "
        f"load average: {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    codes, values, y = _data(n)
    row_bytes = Q * 4 + R * 4 + 4
    c_d, v_d, y_d = (jax.device_put(a) for a in (codes, values, y))
    block = 8192 if n * sum(N_STATES) > 4_000_000 else None
    rows = []

    def report(name, seconds, n_rows=n):
        rows.append((name, seconds, n_rows / seconds, n_rows * row_bytes / seconds / 1e9))
        print(
            f"{name:>24}: {seconds * 1e3:9.1f} ms  {n_rows / seconds:14,.0f} rows/s  "
            f"{n_rows * row_bytes / seconds / 1e9:7.3f} GB/s",
            flush=True,
        )

    fs = lambda: fit_stats(c_d, v_d, y_d, n_states=N_STATES, n_classes=C, block_size=block)
    report("fit_stats", _time(fs, args.repeats))
    params = jax.jit(fit_mle)(fs())
    lj = jax.jit(log_joint)
    report("log_joint (predict)", _time(lambda: lj(params, c_d, v_d), args.repeats))

    mesh = jd.make_mesh()
    nd = mesh.devices.size
    sc, sv, sy, sw = jd.shard_rows(codes, values, y, mesh=mesh)
    fss = lambda: jd._fit_stats_sharded(
        sc, sv, sy, sw, n_states=N_STATES, n_classes=C, mesh=mesh, block_size=block
    )
    report(f"fit_stats_sharded x{nd}", _time(fss, args.repeats))
    # scoring rows already split over the devices: each device loops over its own rows inside
    # shard_map, against a plain jit of the row-split arrays (XLA's partitioner)
    split = P(jd.DATA_AXIS)
    ljs = jax.jit(
        jax.shard_map(
            lambda c, v: log_joint(params, c, v),
            mesh=mesh,
            in_specs=(split, split),
            out_specs=split,
        )
    )
    report(f"log_joint shard_map x{nd}", _time(lambda: ljs(sc, sv), args.repeats))
    report(f"log_joint jit, split x{nd}", _time(lambda: lj(params, sc, sv), args.repeats))
    data = dict(codes=sc, values=sv, y=sy, weight=sw)
    W, b = jnp.ones((Q + R, C), jnp.float32), params.log_prior
    vg = jax.jit(
        lambda W, b, d: jd.sharded_value_and_grad(
            lambda p, dd: jd.wnb_row_loss(params, p[0], p[1], dd), (W, b), d, mesh
        )
    )
    report(f"sharded WNB step x{nd}", _time(lambda: vg(W, b, data), args.repeats))

    def fit_time(est, n_rows):
        """Median wall time of ``est.fit`` on the first n_rows rows from NumPy, after a first
        fit (compilation)."""
        X = np.c_[codes[:n_rows], values[:n_rows]]
        est.fit(X, y[:n_rows])
        t = []
        for _ in range(max(1, args.repeats // 2)):
            t0 = time.perf_counter()
            est.fit(X, y[:n_rows])
            t.append(time.perf_counter() - t0)
        return float(np.median(t))

    cols = dict(discrete=list(range(Q)), n_states=list(N_STATES))
    n_est = min(n, 500_000)
    report("NaiveBayes.fit (NumPy)", fit_time(NaiveBayes(**cols), n_est), n_est)

    # group-lasso NB: the path is solved on the statistics; the rows are scored at every grid
    # point (AIC: split over the mesh's devices) or in every fold (CV: on its first device)
    n_gl = min(n, 300_000)
    for sel in ("aic", "cv"):
        for m in (None, nd) if nd > 1 else (None,):
            gl = GroupLassoNB(**cols, selection=sel, mesh=m)
            report(f"GroupLassoNB {sel}" + (f" x{m}" if m else ""), fit_time(gl, n_gl), n_gl)


if __name__ == "__main__":
    main()
