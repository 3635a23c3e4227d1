"""Run every experiment script (full mode by default, ``--quick`` for the CI smoke run).

Each script is run in its own process (``python experiments/<name>.py [--quick]``); a failure is
reported and the run continues, and the exit status is non-zero if any script failed. The list is
explicit so that the order (cheap first) and the set are reviewed, not discovered.

Results folder: full mode writes experiments/results/ (the committed results the paper is built
from); ``--quick`` writes experiments/results/quick/ (git-ignored) so that a smoke run never
overwrites full-mode results. ``--results DIR`` (or ``$JAXNB_RESULTS_DIR``) chooses another folder;
it is passed to every script through ``$JAXNB_RESULTS_DIR`` (read by ``_common.results_dir``).

Usage: python experiments/run_all.py [--quick] [--results DIR] [--only name1,name2]
                                     [--timeout SECONDS] [--dry-run]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS_ENV = "JAXNB_RESULTS_DIR"

SCRIPTS = [
    "calibrate_table1",
    "calibrate_patience",
    "fsnb_fig1_fig2",
    "fsnb_fig3",
    "fsnb_fig6",
    "fsnb_table1",
    "fsnb_table2",
    "stats_table4",  # reads fsnb_table1 and fsnb_table2 results: after both
    "l1nb_soybean",
    "l1nb_flags",
    "esann_table1",
    "stream_tables",
    "compare_penalties",
]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="pass --quick to every script")
    ap.add_argument("--only", default="", help="comma-separated subset of script names")
    ap.add_argument("--timeout", type=float, default=3600.0, help="per-script limit in seconds")
    ap.add_argument(
        "--results",
        type=Path,
        default=None,
        help="results folder (default: $JAXNB_RESULTS_DIR, else experiments/results, "
        "or experiments/results/quick with --quick)",
    )
    ap.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    args = ap.parse_args(argv)
    names = args.only.split(",") if args.only else SCRIPTS
    unknown = [n for n in names if n not in SCRIPTS]
    if unknown:
        print(f"unknown script name(s): {', '.join(unknown)}; known: {', '.join(SCRIPTS)}")
        return 2
    if args.results is not None:
        results = args.results.resolve()
    elif os.environ.get(RESULTS_ENV, "").strip():
        results = Path(os.environ[RESULTS_ENV]).resolve()
    else:
        results = HERE / "results" / ("quick" if args.quick else "")
    results = results.resolve()
    if not args.dry_run:
        results.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, RESULTS_ENV: str(results)}
    print(f"results folder: {results}", flush=True)
    t_all = time.perf_counter()
    failed, ran = [], []
    for i, name in enumerate(names, 1):
        path = HERE / f"{name}.py"
        if not path.exists():
            print(f"[{i}/{len(names)}] {name}: script not present, skipped", flush=True)
            continue
        cmd = [sys.executable, str(path)] + (["--quick"] if args.quick else [])
        print(f"[{i}/{len(names)}] {' '.join(cmd[1:])}", flush=True)
        if args.dry_run:
            continue
        t0 = time.perf_counter()
        c0 = _children_cpu()
        try:
            rc = subprocess.run(cmd, timeout=args.timeout, env=env).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        dt, cpu = time.perf_counter() - t0, _children_cpu() - c0
        ran.append((name, rc, dt, cpu))
        if rc != 0:
            failed.append(name)
        print(
            f"    -> {'ok' if rc == 0 else f'FAILED ({rc})'} in {dt:.1f} s (CPU {cpu:.1f} s)",
            flush=True,
        )
    print("\nsummary (wall and CPU seconds; CPU = user + system of the script's process):")
    for name, rc, dt, cpu in ran:
        print(f"  {name:<20} {'ok' if rc == 0 else 'FAILED'} {dt:8.1f} s  CPU {cpu:8.1f} s")
    total, cpu = time.perf_counter() - t_all, sum(r[3] for r in ran)
    print(f"  {'total':<20} {'ok' if not failed else 'FAILED'} {total:8.1f} s  CPU {cpu:8.1f} s")
    print(f"  load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
