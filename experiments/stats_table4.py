"""Analogue of fsNB Table 4: Friedman test and all-pairs post-hoc over the methods of Table 1.

The fsNB paper (Vidaurre, Bielza & Larrañaga 2011, §7.4 "Comparison across data sets", Table 4)
compares its methods across its real data sets with a Friedman test and the Bergmann–Hommel
post-hoc procedure (García & Herrera 2008). Its fMRI data (StarPlus) are not available offline,
so we run the same statistics on what we have: the per-data-set
test errors that `fsnb_table1.py` stores ("values" lists, 100 synthetic data sets per scenario).

Blocks ("data sets" in Demšar's sense) are the scenario × data-set pairs, pooled over DI, CI, DR and
CR (400 blocks), and each scenario on its own (100 blocks). Lower error is better; ties get the
average rank; Friedman without tie correction (Demšar's formula) plus the Iman–Davenport F; pairwise
rank z-tests adjusted by Holm and by Bergmann–Hommel (`jaxnb.stats`). Per scenario we also mark the
best method and those not significantly worse than it (paired Wilcoxon signed-rank over the 100 data
sets, alpha = 0.05), which `paper/build.py` uses to mark Table 1. If `fsnb_table2.json` is present,
the same analysis runs over its (quartile × fold) blocks of Diabetes (30 blocks) as a second,
small-sample check.

Methods are every ``*_err`` entry of the "t_eps" block of each scenario (NB, SNB, fsNB, and WNB,
aL1/L2-NB, CFS+NB once the table script stores them), plus fsNB with the prose step rule ("eps"
block) as a separate method. Reads and writes JSON only; nothing is refitted.

Usage: python experiments/stats_table4.py [--quick] [--results DIR] [--alpha 0.05]
(``--quick`` is accepted for `run_all.py` and changes nothing: the analysis takes a second.)
Writes DIR/stats_table4.json (DIR defaults to $JAXNB_RESULTS_DIR, else experiments/results).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import jax
import numpy as np

from jaxnb import stats

# $JAXNB_RESULTS_DIR overrides the folder as in experiments/_common.py (this script is also loaded
# by file path from the tests, so it does not import _common).
RESULTS = (
    Path(os.environ["JAXNB_RESULTS_DIR"]).resolve()
    if os.environ.get("JAXNB_RESULTS_DIR", "").strip()
    else Path(__file__).resolve().parent / "results"
)
SCENARIOS = ("DI", "CI", "DR", "CR")
# key prefix of "<prefix>_err" in fsnb_table1.json -> the paper's method name
LABELS = {
    "nb": "NB",
    "snb": "SNB",
    "wnb": "WNB",
    "al1l2": "aL1/L2-NB",
    "agl": "aL1/L2-NB",
    "gl": "L1/L2-NB",
    "fs": "fsNB",
    "cfs": "CFS+NB",
}
EPS_LABEL = "fsNB (ε rule)"
# Table 2 (fsnb_table2.json) uses the paper's names as keys; fsNB without early stopping is a
# diagnostic variant, left out here as it is in Table 1's analysis
TABLE2_RENAME = {"fsNB(eps)": EPS_LABEL}
TABLE2_SKIP = ("fsNB(no-stop)",)


def table1_columns(table1: dict) -> dict[str, dict[str, list[float]]]:
    """{method: {scenario: per-data-set errors}} for every method present in all scenarios."""
    res = table1.get("results", {})
    scen = [s for s in SCENARIOS if s in res]
    cols: dict[str, dict[str, list[float]]] = {}
    for s in scen:
        block = res[s].get("t_eps", res[s])
        for key, val in block.items():
            if key.endswith("_err") and isinstance(val, dict) and "values" in val:
                label = LABELS.get(key[: -len("_err")], key[: -len("_err")])
                cols.setdefault(label, {})[s] = [float(v) for v in val["values"]]
        eps = res[s].get("eps", {}).get("fs_err")
        if isinstance(eps, dict) and "values" in eps:
            cols.setdefault(EPS_LABEL, {})[s] = [float(v) for v in eps["values"]]
    # keep only methods with values in every scenario, in the paper's column order
    order = ["NB", "SNB", "WNB", "aL1/L2-NB", "L1/L2-NB", "fsNB", EPS_LABEL, "CFS+NB"]
    ranked = sorted(cols, key=lambda m: (order.index(m) if m in order else len(order), m))
    keep = {label: cols[label] for label in ranked if all(s in cols[label] for s in scen)}
    for s in scen:
        lengths = {len(per[s]) for per in keep.values()}
        if len(lengths) > 1:
            raise ValueError(f"scenario {s}: methods have different numbers of data sets {lengths}")
    return keep


def analyse(scores: np.ndarray, names: list[str], alpha: float) -> dict:
    """Friedman, Iman–Davenport, Nemenyi CD; all-pairs rank z-tests, Holm and Bergmann–Hommel."""
    n, k = scores.shape
    fr = stats.friedman_test(scores, higher_is_better=False)
    comp = stats.pairwise_rank_pvalues(fr.avg_ranks, n)
    holm = stats.holm(comp.pvalues, alpha)
    bh = stats.bergmann_hommel_adjust(comp.pvalues, k, alpha)
    pairs = []
    for m, (i, j) in enumerate(comp.pairs):
        pairs.append(
            {
                "a": names[i],
                "b": names[j],
                "z": float(comp.statistic[m]),
                "p": float(comp.pvalues[m]),
                "p_holm": float(holm.adjusted_pvalues[m]),
                "p_bergmann_hommel": float(bh.adjusted_pvalues[m]),
                "reject_holm": bool(holm.reject[m]),
                "reject_bergmann_hommel": bool(bh.reject[m]),
            }
        )
    pairs.sort(key=lambda r: r["p"])
    return {
        "n_blocks": int(n),
        "methods": names,
        "mean_error": {nm: float(scores[:, j].mean()) for j, nm in enumerate(names)},
        "avg_ranks": {nm: float(r) for nm, r in zip(names, fr.avg_ranks, strict=True)},
        "friedman": {
            "chi2": float(fr.statistic),
            "p": float(fr.pvalue),
            "iman_davenport_f": float(fr.f_statistic),
            "f_p": float(fr.f_pvalue),
        },
        "nemenyi_cd": float(stats.nemenyi_cd(k, n, alpha)),
        "pairs": pairs,
    }


def markers(cols: dict, scen: list[str], names: list[str], alpha: float) -> dict:
    runs = np.array([[cols[nm][s] for nm in names] for s in scen])  # (scenarios, methods, runs)
    mk = stats.significance_markers(runs, higher_is_better=False, test="wilcoxon", alpha=alpha)
    return {
        s: {
            "best": names[int(mk.best[r])],
            "marker": {nm: int(mk.markers[r, j]) for j, nm in enumerate(names)},
            "p_vs_best": {nm: float(mk.pvalues[r, j]) for j, nm in enumerate(names)},
        }
        for r, s in enumerate(scen)
    }


def table2_scores(table2: dict) -> tuple[np.ndarray, list[str]] | None:
    res = table2.get("results", {})
    names, cols = [], []
    for key, per in res.items():
        if key in TABLE2_SKIP or not per:
            continue
        label = TABLE2_RENAME.get(key, key)
        quartiles = sorted(per, key=str)
        cols.append(np.concatenate([np.asarray(per[q]["error"], float) for q in quartiles]))
        names.append(label)
    if len(names) < 2 or len({c.size for c in cols}) != 1:
        return None
    return np.stack(cols, axis=1), names


def run(results_dir: Path, alpha: float = 0.05) -> dict | None:
    src = results_dir / "fsnb_table1.json"
    if not src.exists():
        print(f"{src.name} not found in {results_dir}: run experiments/fsnb_table1.py first")
        return None
    try:
        table1 = json.loads(src.read_text())
    except ValueError as err:
        print(f"{src.name} is not valid JSON ({err}): rerun experiments/fsnb_table1.py")
        return None
    cols = table1_columns(table1)
    names = list(cols)
    scen = [s for s in SCENARIOS if s in table1.get("results", {})]
    if len(names) < 2 or not scen:
        print("fewer than two methods with per-data-set values: nothing to compare")
        return None
    out = {
        "source": src.name,
        "source_date": table1.get("environment", {}).get("date"),
        "source_quick": bool(table1.get("quick", False)),
        "alpha": alpha,
        "blocks": "scenario x synthetic data set (fsNB Table 1 protocol)",
        "methods": names,
    }
    pooled = np.array([[v for s in scen for v in cols[nm][s]] for nm in names]).T
    out["pooled"] = analyse(pooled, names, alpha)
    out["per_scenario"] = {
        s: analyse(np.array([cols[nm][s] for nm in names]).T, names, alpha) for s in scen
    }
    out["markers"] = markers(cols, scen, names, alpha)
    src2 = results_dir / "fsnb_table2.json"
    try:
        table2 = json.loads(src2.read_text()) if src2.exists() else None
    except ValueError:
        print(f"{src2.name} is not valid JSON: the Diabetes analysis is skipped")
        table2 = None
    if table2 is not None:
        got = table2_scores(table2)
        if got is not None:
            out["diabetes"] = analyse(got[0], got[1], alpha)
            out["diabetes"]["source"] = src2.name
    out["environment"] = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "jax": jax.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "backend": "none (NumPy post-processing)",
        "cpu_count": os.cpu_count(),
    }
    return out


def _finite(x):
    """Replace inf / nan (Iman–Davenport F when all blocks rank alike) by None: strict JSON."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="accepted for run_all; no effect")
    ap.add_argument("--results", type=Path, default=RESULTS, help="results folder (in and out)")
    ap.add_argument("--alpha", type=float, default=0.05)
    args = ap.parse_args(argv)
    out = run(args.results, args.alpha)
    if out is None:
        return 0
    pooled = out["pooled"]
    print(
        f"pooled over {pooled['n_blocks']} blocks: Friedman chi2 = "
        f"{pooled['friedman']['chi2']:.2f} (p = {pooled['friedman']['p']:.2e}), "
        f"Iman–Davenport F = {pooled['friedman']['iman_davenport_f']:.2f}"
    )
    for nm, r in sorted(pooled["avg_ranks"].items(), key=lambda t: t[1]):
        print(f"  {nm:<16} average rank {r:.3f}")
    for row in pooled["pairs"]:
        print(
            f"  {row['a']} vs {row['b']}: z = {row['z']:+.2f}  p = {row['p']:.3g}  "
            f"Holm {row['p_holm']:.3g}  Bergmann–Hommel {row['p_bergmann_hommel']:.3g}"
        )
    args.results.mkdir(parents=True, exist_ok=True)
    path = args.results / "stats_table4.json"
    path.write_text(json.dumps(_finite(out), indent=1, allow_nan=False))
    print(f"wrote {path.name} in {args.results}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
