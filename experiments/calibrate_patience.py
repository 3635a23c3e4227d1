"""fsNB early-stopping patience for Table 1: mean evaluation count per patience, beside the paper's.

The fsNB paper (§5) stops "if the training error has not improved during a certain number of
iterations" without giving the number, and reports 6,732.25 evaluations per fsNB run on average
over its Table-1 experiments (§7.1). This script runs fsNB (ε = 0.025, v = 20, the pseudocode's
t·ε step, training error, AIC selection) on the 100 data sets of each Table-1 scenario — the same
data sets as `fsnb_table1.py` (keys 2011 + scenario index, drawn in the same precision: JAX's
default float32, as that script runs; float64 draws would be other data sets) — for a grid of
patience values, in one `jaxnb.sweep` call per scenario (one grid point per patience), and
reports the mean number of candidate evaluations and of iterations per run. Only training-side
quantities are used (no test error), so the choice of the patience (the value whose mean over the
four scenarios is closest to 6,732.25) does not look at the test data. `fsnb_table1.py` uses that
value (PATIENCE).

Usage: python experiments/calibrate_patience.py [--quick]
Writes calibrate_patience.json (``--quick``: 5 data sets per scenario, into the quick results
folder) in the results folder (experiments/results, or $JAXNB_RESULTS_DIR).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

if "jax" not in sys.modules:  # one XLA CPU device per core, before JAX starts, as fsnb_table1.py
    _flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in _flags and (os.cpu_count() or 1) > 1:
        os.environ["XLA_FLAGS"] = (
            f"{_flags} --xla_force_host_platform_device_count={os.cpu_count()}".strip()
        )

import jax  # noqa: E402
import numpy as np  # noqa: E402

from jaxnb.datasets import make_table1_batch  # noqa: E402
from jaxnb.sweep import sweep_methods  # noqa: E402

try:
    from experiments._common import save_json
except ImportError:
    from _common import save_json

PAPER_EVALUATIONS = 6732.25
PATIENCES = [2, 3, 4, 5, 6, 7, 8, 10, 15]
SCENARIOS = ("DI", "CI", "DR", "CR")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 data sets per scenario")
    args = ap.parse_args(argv)
    n_sets = 5 if args.quick else 100
    t0 = time.perf_counter()
    evals, iters = {}, {}
    for s_i, scenario in enumerate(SCENARIOS):
        data, n_states = make_table1_batch(jax.random.PRNGKey(2011 + s_i), scenario, n_sets)
        _, res = sweep_methods(
            data,
            # the grid is a product over its keys: one epsilon x the patience values
            {"fsnb": {"epsilon": [0.025], "patience": PATIENCES}},
            n_states=n_states,
            options={
                "fsnb": {"n_steps": 20, "step_rule": "t_eps", "criterion": "error"},
            },
        )
        arr = res["fsnb"].arrays
        assert arr["n_evaluations"].shape[1] == len(PATIENCES)
        # (D, H, F, S): mean over data sets of each grid point (one fold, one seed)
        evals[scenario] = arr["n_evaluations"][:, :, 0, 0].mean(0).tolist()
        iters[scenario] = arr["n_iter"][:, :, 0, 0].mean(0).tolist()
        print(f"[{scenario}] done in {time.perf_counter() - t0:.1f} s", flush=True)
    mean = np.mean([evals[s] for s in SCENARIOS], axis=0)
    chosen = PATIENCES[int(np.argmin(np.abs(mean - PAPER_EVALUATIONS)))]
    print(f"{'patience':>8} " + " ".join(f"{s:>8}" for s in SCENARIOS) + f" {'mean':>8}")
    for h, pat in enumerate(PATIENCES):
        row = " ".join(f"{evals[s][h]:8.0f}" for s in SCENARIOS)
        print(f"{pat:8d} {row} {mean[h]:8.0f}" + ("   <- closest" if pat == chosen else ""))
    print(f"paper: {PAPER_EVALUATIONS} evaluations per run; chosen patience {chosen}")
    save_json(
        "calibrate_patience_quick" if args.quick else "calibrate_patience",
        {
            "patience": PATIENCES,
            "mean_evaluations": evals,
            "mean_iterations": iters,
            "mean_evaluations_all": mean.tolist(),
            "paper_evaluations": PAPER_EVALUATIONS,
            "chosen": chosen,
            "n_datasets": n_sets,
            "quick": args.quick,
            "dtype": str(jax.numpy.zeros(()).dtype),
            "seconds": time.perf_counter() - t0,
        },
    )


if __name__ == "__main__":
    main()
