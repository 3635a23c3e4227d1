"""Time ESANN indicator generation (jaxnb.datasets.timeseries) for 12,000 series on this machine.

Usage: python benchmarks/bench_indicators.py [--n-series 12000] [--batch-size 64] [--repeats 3]
    [--x64]
Prints the compile+first-run time and the steady-state time (the target is < 30 s after compile),
both as wall-clock and as process CPU time (user + system, all threads). On a shared machine the
wall-clock time mostly measures the load (it is printed beside the 1-minute load average); the CPU
time is the number to compare between versions.
"""

import argparse
import os
import time

import jax

from jaxnb.datasets import timeseries as ts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-series", type=int, default=12_000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--x64", action="store_true", help="float64 (as in the test suite)")
    args = parser.parse_args()
    if args.x64:
        jax.config.update("jax_enable_x64", True)
    series = ts.simulate_series(jax.random.key(0), args.n_series)
    jax.block_until_ready(series.values)
    run = lambda: ts.compute_indicators(series.values, series.lengths, batch_size=args.batch_size)
    start, cpu = time.perf_counter(), time.process_time()
    data = run()
    jax.block_until_ready(data.indicators)
    first, first_cpu = time.perf_counter() - start, time.process_time() - cpu
    times, cpus = [], []
    for _ in range(args.repeats):
        start, cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(run().indicators)
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    print(
        f"n_series={args.n_series} n_indicators={data.indicators.shape[1]} "
        f"dtype={series.values.dtype} backend={jax.default_backend()} cpus={os.cpu_count()} "
        f"load_avg_1min={os.getloadavg()[0]:.1f}"
    )
    print(f"compile + first run: wall {first:.2f} s, cpu {first_cpu:.2f} s")
    print(
        f"after compile: wall best {min(times):.2f} s, all {[round(t, 2) for t in times]}; "
        f"cpu best {min(cpus):.2f} s, all {[round(t, 2) for t in cpus]}"
    )
    print(f"load_avg_1min at end={os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
