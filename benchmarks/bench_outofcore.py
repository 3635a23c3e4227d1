"""Out-of-core NB fit: throughput from a .npy file larger than memory vs the file's read bandwidth.

1. Writes X.npy (float32, n x 20: 10 discrete columns coded 0..3, 10 Gaussian columns) and y.npy
   (int32, 3 classes) of ``--gb`` GB in total into a temporary directory (deleted at the end unless
   ``--keep``). Nothing is written inside the repository.
2. Read bandwidth: the page cache of both files is dropped (``posix_fadvise(DONTNEED)`` after
   ``fsync``; per file, not machine-wide), then one sequential pass reads them with ``readinto``
   into a reused 32 MiB buffer (the target's reference); for information, the same pass with
   ``O_DIRECT`` (how the fit reads when the file system allows it) is timed too. A second
   baseline sums the ``np.load(mmap_mode="r")`` memmap chunk by chunk (what a NumPy user would
   do).
3. Fit: caches dropped again, then ``jaxnb.outofcore.fit_nb_out_of_core`` on the two paths (one
   pass, double-buffered reads into recycled buffers, statistics merged per chunk; with
   ``--cpu-devices N`` the worker splits the CPU into N XLA devices and chunks are summed on all
   of them at once; default 1, which measured as fast or faster on the shared 2-core machine).
   Compilation is excluded: the worker first fits in-memory chunks of the same shape (one per
   device).

Every measurement runs in its own subprocess, whose peak RSS (``ru_maxrss``) is reported, so the
data generation does not pollute it. Targets: fit GB/s >= 50% of read GB/s; fit peak RSS < 2 GB.

Usage: python benchmarks/bench_outofcore.py [--gb 20] [--dir DIR] [--chunk-mb 32] [--keep]
                                            [--cpu-devices N]
       (``--gb 1`` for a quick run; the file needs --gb GB of free disk.)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

N_DISCRETE, N_CONT, N_STATES, N_CLASSES = 10, 10, 4, 3
P = N_DISCRETE + N_CONT
ROW_BYTES = P * 4 + 4  # X row (float32) + label (int32)


def _write_npy_header(f, shape, dtype):
    header = {
        "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
        "fortran_order": False,
        "shape": tuple(shape),
    }
    np.lib.format.write_array_header_1_0(f, header)


def generate(directory, gb, seed=0, block_rows=1 << 20):
    """Write X.npy / y.npy with plain sequential writes (no memmap, bounded memory)."""
    n = int(gb * 1e9 // ROW_BYTES)
    rng = np.random.default_rng(seed)
    means = rng.normal(0, 1, (N_CLASSES, N_CONT)).astype(np.float32)
    px = os.path.join(directory, "X.npy")
    py = os.path.join(directory, "y.npy")
    t0 = time.perf_counter()
    with open(px, "wb") as fx, open(py, "wb") as fy:
        _write_npy_header(fx, (n, P), np.float32)
        _write_npy_header(fy, (n,), np.int32)
        for start in range(0, n, block_rows):
            m = min(block_rows, n - start)
            y = rng.integers(0, N_CLASSES, m).astype(np.int32)
            X = np.empty((m, P), np.float32)
            codes = rng.integers(0, N_STATES, (m, N_DISCRETE))
            codes[:, :3] = np.where(rng.random((m, 3)) < 0.5, y[:, None] % N_STATES, codes[:, :3])
            X[:, :N_DISCRETE] = codes
            X[:, N_DISCRETE:] = rng.standard_normal((m, N_CONT), np.float32) + means[y]
            fx.write(X.tobytes())
            fy.write(y.tobytes())
        fx.flush()
        fy.flush()
        os.fsync(fx.fileno())
        os.fsync(fy.fileno())
    size = os.path.getsize(px) + os.path.getsize(py)
    print(
        f"generated {n:,} rows, {size / 1e9:.2f} GB in {time.perf_counter() - t0:.1f} s", flush=True
    )
    return px, py, n, size


def drop_cache(*paths):
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _peak_rss_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # KiB on Linux


# ----------------------------------------------------------------------------------- workers
def worker_read(paths, chunk_mb):
    buf = bytearray(chunk_mb << 20)
    view = memoryview(buf)
    total = 0
    t0 = time.perf_counter()
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            while True:
                got = f.readinto(view)
                if not got:
                    break
                total += got
    dt = time.perf_counter() - t0
    return {"seconds": dt, "bytes": total, "peak_rss_gb": _peak_rss_gb()}


def worker_read_direct(paths, chunk_mb):
    """The same sequential pass with O_DIRECT (no page cache, no copy), for reference; the fit
    reads this way when it can. Returns None fields where the file system refuses O_DIRECT."""
    import mmap

    buf = mmap.mmap(-1, chunk_mb << 20)  # page-aligned
    view = memoryview(buf)
    total = 0
    t0 = time.perf_counter()
    try:
        for p in paths:
            fd = os.open(p, os.O_RDONLY | os.O_DIRECT)
            try:
                pos = 0
                while True:
                    got = os.preadv(fd, [view], pos)
                    total += max(got, 0)
                    pos += max(got, 0)
                    if got < len(view):
                        break
            finally:
                os.close(fd)
    except (AttributeError, OSError):
        return {"seconds": None, "bytes": None, "peak_rss_gb": _peak_rss_gb()}
    dt = time.perf_counter() - t0
    return {"seconds": dt, "bytes": total, "peak_rss_gb": _peak_rss_gb()}


def worker_memmap_sum(paths, chunk_mb):
    total, acc = 0, 0.0
    t0 = time.perf_counter()
    for p in paths:
        a = np.load(p, mmap_mode="r")
        rows = max(1, (chunk_mb << 20) // max(1, a[:1].nbytes))
        for s in range(0, a.shape[0], rows):
            blk = a[s : s + rows]
            acc += float(blk.sum(dtype=np.float64))
            total += blk.nbytes
        del a
    dt = time.perf_counter() - t0
    return {"seconds": dt, "bytes": total, "checksum": acc, "peak_rss_gb": _peak_rss_gb()}


def worker_fit(px, py, chunk_mb, cpu_devices=None):
    # With --cpu-devices N > 1 the CPU is split into N XLA devices (set before JAX starts) and
    # fit_nb_out_of_core sums chunks on all of them at once (round robin).
    n_dev = cpu_devices or 1
    flags = os.environ.get("XLA_FLAGS", "")
    if n_dev > 1 and "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n_dev}".strip()
    import jax

    from jaxnb.outofcore import fit_nb_out_of_core

    chunk_rows = max(1024, (chunk_mb << 20) // (P * 4) // 1024 * 1024)
    kw = dict(
        classes=list(range(N_CLASSES)),
        discrete=list(range(N_DISCRETE)),
        n_states=[N_STATES] * N_DISCRETE,
        chunk_rows=chunk_rows,
    )
    rng = np.random.default_rng(1)
    m = chunk_rows * len(jax.local_devices())  # one chunk per device: compiles for each device
    warm = np.c_[rng.integers(0, N_STATES, (m, N_DISCRETE)), rng.normal(size=(m, N_CONT))].astype(
        np.float32
    )
    fit_nb_out_of_core(
        warm, rng.integers(0, N_CLASSES, m).astype(np.int32), progress=False, **kw
    )  # compiles the chunk step (excluded from timing)
    del warm
    base_rss = _peak_rss_gb()
    t0, c0 = time.perf_counter(), time.process_time()
    model = fit_nb_out_of_core(px, py, progress=True, progress_interval=10.0, **kw)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    n = float(np.asarray(model.stats_.class_weight, np.float64).sum())
    return {
        "seconds": dt,
        "cpu_seconds": cpu,
        "bytes": os.path.getsize(px) + os.path.getsize(py),
        "rows": n,
        "chunk_rows": chunk_rows,
        "peak_rss_gb": _peak_rss_gb(),
        "rss_after_import_and_compile_gb": base_rss,
        "devices": str(jax.devices()),
    }


def _run_worker(args, kind, extra):
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        kind,
        "--chunk-mb",
        str(args.chunk_mb),
        *extra,
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    if out.stderr.strip():
        tail = out.stderr.strip().splitlines()[-3:]
        print("   " + "\n   ".join(tail), flush=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=20.0, help="total size of X.npy + y.npy (GB)")
    ap.add_argument("--dir", default=None, help="parent directory of the temporary data")
    ap.add_argument("--chunk-mb", type=int, default=32, help="MiB of X per chunk")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument(
        "--cpu-devices", type=int, default=None, help="XLA CPU devices of the fit (default 1)"
    )
    ap.add_argument(
        "--worker", choices=["read", "read_direct", "memmap", "fit"], help=argparse.SUPPRESS
    )
    ap.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        if args.worker == "read":
            res = worker_read(args.paths, args.chunk_mb)
        elif args.worker == "read_direct":
            res = worker_read_direct(args.paths, args.chunk_mb)
        elif args.worker == "memmap":
            res = worker_memmap_sum(args.paths, args.chunk_mb)
        else:
            res = worker_fit(args.paths[0], args.paths[1], args.chunk_mb, args.cpu_devices)
        print(json.dumps(res))
        return

    free = shutil.disk_usage(args.dir or tempfile.gettempdir()).free / 1e9
    if free < args.gb * 1.1 + 1:
        sys.exit(f"not enough free disk: {free:.1f} GB free, --gb {args.gb} needs ~{args.gb:.0f}")
    tmp = tempfile.mkdtemp(prefix="jaxnb_bench_ooc_", dir=args.dir)
    try:
        load0 = os.getloadavg()
        px, py, n, size = generate(tmp, args.gb)
        drop_cache(px, py)
        read = _run_worker(args, "read", [px, py])
        print(f"read: {read['bytes'] / read['seconds'] / 1e9:.3f} GB/s", flush=True)
        drop_cache(px, py)
        rdir = _run_worker(args, "read_direct", [px, py])
        d_gbs = rdir["bytes"] / rdir["seconds"] / 1e9 if rdir["seconds"] else float("nan")
        print(f"read O_DIRECT: {d_gbs:.3f} GB/s", flush=True)
        drop_cache(px, py)
        mms = _run_worker(args, "memmap", [px, py])
        print(f"memmap sum: {mms['bytes'] / mms['seconds'] / 1e9:.3f} GB/s", flush=True)
        drop_cache(px, py)
        extra = [] if args.cpu_devices is None else ["--cpu-devices", str(args.cpu_devices)]
        fit = _run_worker(args, "fit", [*extra, px, py])
        # class counts come back in float32 (JAX's default dtype): exact to ~6e-8 relative
        assert abs(fit["rows"] - n) <= 1e-6 * n, (fit["rows"], n)
        load1 = os.getloadavg()
        r_gbs = read["bytes"] / read["seconds"] / 1e9
        m_gbs = mms["bytes"] / mms["seconds"] / 1e9
        f_gbs = fit["bytes"] / fit["seconds"] / 1e9
        print()
        print(
            f"devices: {fit['devices']}; cpus: {os.cpu_count()}; load average before / after: "
            f"{load0[0]:.1f} / {load1[0]:.1f}; rows: {n:,}; chunk: {fit['chunk_rows']:,} rows"
        )
        hdr = (
            f"{'GB':>7} {'read GB/s':>10} {'memmap-sum GB/s':>16} {'fit GB/s':>9} "
            f"{'ratio':>7} {'fit peak RSS GB':>16} {'read peak RSS GB':>17}"
        )
        print(hdr)
        print("-" * len(hdr))
        ratio = f_gbs / r_gbs
        print(
            f"{size / 1e9:7.2f} {r_gbs:10.3f} {m_gbs:16.3f} {f_gbs:9.3f} {ratio:7.1%} "
            f"{fit['peak_rss_gb']:16.2f} {read['peak_rss_gb']:17.2f}"
        )
        print(
            f"targets: ratio >= 50% ({'met' if ratio >= 0.5 else 'MISSED'}), fit peak RSS < 2 GB "
            f"({'met' if fit['peak_rss_gb'] < 2 else 'MISSED'}); RSS after import + compile: "
            f"{fit['rss_after_import_and_compile_gb']:.2f} GB"
        )
        print(
            f"reference: single-pass read with O_DIRECT {d_gbs:.3f} GB/s; fit / that = "
            f"{f_gbs / d_gbs:.1%} (the target is against the buffered readinto pass above)"
        )
        cpu_gbs = fit["bytes"] / fit["cpu_seconds"] / 1e9
        print(
            f"fit CPU time (all threads of the fit process): {fit['cpu_seconds']:.1f} s for "
            f"{fit['seconds']:.1f} s wall, i.e. {cpu_gbs:.3f} GB per CPU-second; on a loaded "
            f"machine the wall-clock ratio is bounded by the CPU share the fit gets"
        )
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
