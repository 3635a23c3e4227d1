"""Time ESANN indicator generation (jaxnb.datasets.timeseries) for 12,000 series on this machine.

Usage: python benchmarks/bench_indicators.py [--n-series 12000] [--batch-size 256] [--repeats 3]
Prints the compile+first-run time and the steady-state time (the target is < 30 s after compile).
"""

import argparse
import os
import time

import jax

from jaxnb.datasets import timeseries as ts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-series", type=int, default=12_000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    series = ts.simulate_series(jax.random.key(0), args.n_series)
    jax.block_until_ready(series.values)
    run = lambda: ts.compute_indicators(series.values, series.lengths, batch_size=args.batch_size)
    start = time.perf_counter()
    data = run()
    jax.block_until_ready(data.indicators)
    first = time.perf_counter() - start
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        jax.block_until_ready(run().indicators)
        times.append(time.perf_counter() - start)
    print(
        f"n_series={args.n_series} n_indicators={data.indicators.shape[1]} "
        f"dtype={series.values.dtype} backend={jax.default_backend()} cpus={os.cpu_count()} "
        f"load_avg_1min={os.getloadavg()[0]:.1f}"
    )
    print(f"compile + first run: {first:.2f} s")
    print(f"after compile: best {min(times):.2f} s, all {[round(t, 2) for t in times]}")


if __name__ == "__main__":
    main()
