"""Calibrate the open constants of the Table-1 generator against the paper's NB column.

The fsNB paper (§7.1) does not give the Dirichlet parameters of the discrete CPTs, whether the ten
redundant V3 predictors copy one common V1 predictor or one each, nor the continuous "small noise".
This script evaluates NB's mean test error over 100 data sets per scenario for a grid of those
constants (Dirichlet parameters and source rule on DI/DR; source rule and noise standard deviation
on CR, the continuous scenarios' only open constants; every constant is a traced argument of
``make_table1``, so each scenario compiles once) and records the grid and the chosen defaults
(``jaxnb.datasets.TABLE1_DEFAULTS``) in ``experiments/results/calibrate_table1.json``.

On CR no setting of those constants brings NB near the paper's 0.132: the noise standard deviation
(0.01 to 0.5) moves NB's error by less than 0.01 and one source per V3 predictor lowers it (see the
JSON), so the defaults stay as chosen on the discrete scenarios.

Usage: python experiments/calibrate_table1.py [--quick]
Writes calibrate_table1.json (``--quick``: calibrate_table1_quick.json) in the results folder
(experiments/results, or $JAXNB_RESULTS_DIR).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS  # noqa: E402  (honours $JAXNB_RESULTS_DIR)

from jaxnb.datasets.synthetic import TABLE1_DEFAULTS, make_table1  # noqa: E402
from jaxnb.likelihood import error_rate, log_posterior  # noqa: E402
from jaxnb.methods.nb import fit_nb  # noqa: E402

PAPER_NB = {"DI": 0.076, "CI": 0.082, "DR": 0.152, "CR": 0.132}


def make_eval(scenario, n_test):
    n_states = (3,) * 20 if scenario[0] == "D" else ()
    alpha = 1.0 if n_states else 0.0

    @jax.jit
    def evaluate(keys, cfg):
        def one(k):
            d = make_table1(k, scenario, 300, n_test, **cfg)
            p = fit_nb(
                d["codes_train"],
                d["values_train"],
                d["y_train"],
                None,
                alpha,
                0.0,
                n_states=n_states,
                n_classes=3,
            )
            return error_rate(log_posterior(p, d["codes_test"], d["values_test"]), d["y_test"])

        return jax.vmap(one)(keys)

    return evaluate


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="DI and CR only, 10 data sets, 500 test rows, no grid (smoke test)",
    )
    args = ap.parse_args(argv)
    n_sets, n_test = (10, 500) if args.quick else (100, 3000)
    scenarios = ("DI", "CR") if args.quick else ("DI", "CI", "DR", "CR")
    keys = jax.random.split(jax.random.PRNGKey(2011), n_sets)
    defaults = {k: float(v) for k, v in TABLE1_DEFAULTS.items() if k != "v2_copy_prob"}
    grid = (
        []
        if args.quick
        else [
            {"dirichlet_base": b, "dirichlet_raised": h}
            for b in (1.0, 2.0)
            for h in (3.0, 4.0, 6.0, 8.0)
        ]
    )
    cont_grid = (
        []
        if args.quick
        else [
            {"v3_common_source": common, "continuous_noise_std": sd}
            for common in (0.0, 1.0)
            for sd in (0.01, 0.05, 0.2, 0.5)
        ]
    )
    out = {
        "quick": args.quick,
        "paper_nb": PAPER_NB,
        "n_datasets": n_sets,
        "n_test": n_test,
        "defaults": defaults,
        "default_errors": {},
        "grid": [],
    }
    for sc in scenarios:
        ev = make_eval(sc, n_test)
        t0 = time.perf_counter()
        err = ev(keys, defaults)
        m, s = float(err.mean()), float(err.std())
        out["default_errors"][sc] = {"mean": m, "std": s}
        print(
            f"{sc}: NB mean test error {m:.4f} (std {s:.4f}) vs paper {PAPER_NB[sc]:.3f}  "
            f"|diff| {abs(m - PAPER_NB[sc]):.4f}  [{time.perf_counter() - t0:.1f}s]",
            flush=True,
        )
        if sc[0] == "D":
            for g in grid:
                for common in (0.0, 1.0) if sc[1] == "R" else (0.0,):
                    cfg = {**defaults, **g, "v3_common_source": common}
                    e = float(ev(keys, cfg).mean())
                    out["grid"].append({"scenario": sc, **cfg, "nb_error": e})
                    print(f"   {sc} {g} common={common}: {e:.4f}", flush=True)
        elif sc == "CR":  # the continuous scenarios' only open constants: source rule and noise
            for g in cont_grid:
                cfg = {**defaults, **g}
                e = float(ev(keys, cfg).mean())
                out["grid"].append({"scenario": sc, **cfg, "nb_error": e})
                print(f"   {sc} {g}: {e:.4f}", flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "calibrate_table1_quick.json" if args.quick else "calibrate_table1.json"
    (RESULTS / name).write_text(json.dumps(out, indent=2))
    print(f"wrote {RESULTS / name}")


if __name__ == "__main__":
    main()
