"""XLA CPU's two loop emitters: compilation time and compiled speed, side by side.

XLA's CPU backend generates fused loops with its newer fusion emitters by default;
``XLA_FLAGS=--xla_cpu_use_fusion_emitters=false`` selects its older elemental emitters.
`make test` and `make demo` use the older ones (the Makefile, ``XLA_FUSION_EMITTERS``) because
both are mostly compilation of small programs. This script measures the trade in one run, every
scenario in a fresh Python process, the two settings alternating:

* ``demo``: ``python -m jaxnb compare`` (31 fits on the embedded data): wall time, the fit time
  it prints (compilation included), and whether the two tables are identical (timing column
  removed);
* ``compiled``: the first call (compilation included) and the best of 5 later calls on the
  same shapes of: a StagewiseNB fit on a Table-1 DR data set (N = 300, p = 20); NaiveBayes fit
  and predict_proba on 200,000 x 50 float32 Gaussian rows; a GroupLassoNB path of 8 penalties
  (2,000 x 20 Gaussian); FlexibleNB predict_proba on 2,000 rows (fitted on 2,000 x 5).

Usage: python benchmarks/bench_emitters.py [--runs R] [--skip-demo]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import time

LEGACY = "--xla_cpu_use_fusion_emitters=false"
SETTINGS = (("fusion (XLA default)", ""), ("elemental", LEGACY))


def _best(fn, repeats=5):
    """fn(i): call i (0 = the first, compiling one); later calls get new data of the same shapes,
    so nothing a fit might reuse from an identical input is timed."""
    t = time.perf_counter()
    fn(0)
    first = time.perf_counter() - t
    times = []
    for i in range(1, repeats + 1):
        t = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t)
    return first, min(times)


def _compiled():
    import warnings

    import jax
    import numpy as np

    import jaxnb
    from jaxnb.datasets import make_table1

    warnings.simplefilter("ignore")  # a ConvergenceWarning is not what this measures
    out = {}
    tables = [make_table1(jax.random.PRNGKey(i), "DR") for i in range(6)]
    out["StagewiseNB fit (Table-1 DR)"] = _best(  # integer codes: discrete columns
        lambda i: jaxnb.StagewiseNB().fit(
            np.asarray(tables[i]["codes_train"]), np.asarray(tables[i]["y_train"])
        )
    )
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200_000)
    X = (rng.normal(size=(200_000, 50)) + 0.3 * y[:, None]).astype(np.float32)
    out["NaiveBayes fit 200k x 50"] = _best(lambda i: jaxnb.NaiveBayes().fit(X + i, y))
    nb = jaxnb.NaiveBayes().fit(X, y)
    out["NaiveBayes predict_proba 200k"] = _best(lambda i: nb.predict_proba(X + 0.01 * i))
    ys = rng.integers(0, 3, 2000)
    Xs = rng.normal(size=(2000, 20)) + 0.5 * ys[:, None] * (np.arange(20) < 5)
    out["GroupLassoNB 8 penalties 2000 x 20"] = _best(
        lambda i: jaxnb.GroupLassoNB(n_penalties=8).fit(Xs + 0.01 * i, ys)
    )
    kde = jaxnb.FlexibleNB().fit(Xs[:, :5], ys)
    out["FlexibleNB predict_proba 2000"] = _best(lambda i: kde.predict_proba(Xs[:, :5] + 0.01 * i))
    return {k: {"first_s": a, "best_s": b} for k, (a, b) in out.items()}


def _env(flags):
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    if flags:
        env["XLA_FLAGS"] = flags
    return env


def _demo(flags):
    t = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "jaxnb", "compare"],
        env=_env(flags),
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - t
    fits = re.search(r"(\d+) fits in ([0-9.]+) s", res.stdout)
    table = [
        " ".join(line.split()[:-1])
        for line in res.stdout.splitlines()
        if re.match(r"^\S.*\s[0-9.]+s$", line)
    ]
    digest = hashlib.sha1("\n".join(table).encode()).hexdigest()[:10]
    return {"wall_s": wall, "fits_s": float(fits.group(2)), "rows": len(table), "table": digest}


def _child_compiled(flags):
    cmd = [sys.executable, os.path.abspath(__file__), "--child"]
    res = subprocess.run(cmd, env=_env(flags), capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=2, help="runs per setting (fresh processes)")
    ap.add_argument("--skip-demo", action="store_true", help="only the compiled-code scenarios")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_compiled()))
        return None
    if args.runs < 1:
        raise ValueError(f"--runs must be >= 1; got {args.runs}")
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    demo = {label: [] for label, _ in SETTINGS}
    comp = {label: [] for label, _ in SETTINGS}
    for run in range(args.runs):
        order = SETTINGS if run % 2 == 0 else SETTINGS[::-1]
        for label, flags in order:
            print(f"run {run + 1}/{args.runs}: {label} ...", file=sys.stderr, flush=True)
            if not args.skip_demo:
                demo[label].append(_demo(flags))
            comp[label].append(_child_compiled(flags))
    (a, _), (b, _) = SETTINGS
    if not args.skip_demo:
        print("\ndemo (`python -m jaxnb compare`), min over runs")
        print(f"| measure | {a} | {b} | ratio |\n|---|---|---|---|")
        for key in ("wall_s", "fits_s"):
            x, y = (min(r[key] for r in demo[s]) for s in (a, b))
            print(f"| {key} | {x:.1f} | {y:.1f} | {x / y:.2f}x |")
        tables = {r["table"] for s in (a, b) for r in demo[s]}
        rows = {r["rows"] for s in (a, b) for r in demo[s]}
        print(f"tables identical across settings and runs: {len(tables) == 1} ({rows} rows)")
    print("\ncompiled code: first call (compilation included) and best of 5 later calls, s")
    print(f"| scenario | first, {a} | first, {b} | ratio | best, {a} | best, {b} | ratio |")
    print("|---|---|---|---|---|---|---|")
    for name in comp[a][0]:
        f1, f2 = (min(r[name]["first_s"] for r in comp[s]) for s in (a, b))
        b1, b2 = (min(r[name]["best_s"] for r in comp[s]) for s in (a, b))
        cells = [f"{f1:.3f}", f"{f2:.3f}", f"{f1 / f2:.2f}x", f"{b1:.4f}", f"{b2:.4f}"]
        print(f"| {name} | " + " | ".join(cells) + f" | {b1 / b2:.2f}x |")
    return None


if __name__ == "__main__":
    main()
