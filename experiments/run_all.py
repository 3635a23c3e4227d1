"""Run every experiment script (full mode by default, ``--quick`` for the CI smoke run).

Each script is run in its own process (``python experiments/<name>.py [--quick]``); a failure is
reported and the run continues, and the exit status is non-zero if any script failed. The list is
explicit so that the order (cheap first) and the set are reviewed, not discovered.

Usage: python experiments/run_all.py [--quick] [--only name1,name2] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

SCRIPTS = [
    "calibrate_table1",
    "fsnb_fig1_fig2",
    "fsnb_fig3",
    "fsnb_fig6",
    "fsnb_table1",
    "stats_table4",
    "fsnb_table2",
    "l1nb_soybean",
    "l1nb_flags",
    "esann_table1",
    "stream_tables",
    "compare_penalties",
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="pass --quick to every script")
    ap.add_argument("--only", default="", help="comma-separated subset of script names")
    ap.add_argument("--timeout", type=float, default=3600.0, help="per-script limit in seconds")
    args = ap.parse_args(argv)
    names = args.only.split(",") if args.only else SCRIPTS
    failed, ran = [], []
    for i, name in enumerate(names, 1):
        path = HERE / f"{name}.py"
        if not path.exists():
            print(f"[{i}/{len(names)}] {name}: script not present, skipped", flush=True)
            continue
        cmd = [sys.executable, str(path)] + (["--quick"] if args.quick else [])
        print(f"[{i}/{len(names)}] {' '.join(cmd[1:])}", flush=True)
        t0 = time.perf_counter()
        try:
            rc = subprocess.run(cmd, timeout=args.timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        dt = time.perf_counter() - t0
        ran.append((name, rc, dt))
        if rc != 0:
            failed.append(name)
        print(f"    -> {'ok' if rc == 0 else f'FAILED ({rc})'} in {dt:.1f} s", flush=True)
    print("\nsummary:")
    for name, rc, dt in ran:
        print(f"  {name:<20} {'ok' if rc == 0 else 'FAILED'} {dt:8.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
