"""Build the jaxnb paper (Markdown) from the experiments' results files.

Usage: python paper/build.py [--results DIR] [--out DIR] [--benchmarks DIR] [--template FILE]
                             [--require-all]

`--results` defaults to `$JAXNB_RESULTS_DIR` when set, else `experiments/results`. With
`--require-all` the build still writes the paper but exits with status 1 when a results file or
figure is missing or unreadable (the CI smoke run uses it on the quick results).

Reads `experiments/results/*.json` (and the PNG figures beside them), `benchmarks/RESULTS.md` when
present, and `paper/template.md`; writes `<out>/paper.md` and one `<out>/generated/<section>.md` per
generated block. With `pandoc` on the PATH it also writes `<out>/paper.html`.

Rules this file keeps:
  * every number of ours comes from a results file, never from this file;
  * a published number comes from the results file's "paper" keys when present, otherwise from
    `paper/published.py` (transcribed from shared/METHODS.md) and is labelled as such;
  * a missing or unreadable results file never stops the build: its section says
    "not yet run (script experiments/<name>.py)" and the Limitations section lists it.

Only the standard library is used, so the build runs without JAX.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import published as PUB  # noqa: E402

SCENARIOS = ("DI", "CI", "DR", "CR")
NOT_RUN = "not yet run"


# ------------------------------------------------------------------------------------------------
# Formatting helpers
# ------------------------------------------------------------------------------------------------
def num(x, digits=3):
    if x is None:
        return "—"
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return f"{x:.{digits}f}"


def pm(mean, std, digits=3):
    if mean is None:
        return "—"
    return (
        f"{mean:.{digits}f} ± {std:.{max(digits - 1, 1)}f}"
        if std is not None
        else num(mean, digits)
    )


def signed(x, digits=3):
    return "—" if x is None else f"{x:+.{digits}f}"


def pval(p):
    if p is None:
        return "—"
    if p == 0.0:
        return "< 1e-300"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.3f}"


def table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(str(h) for h in header) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def mean_std(values):
    v = [float(x) for x in values]
    if not v:
        return None, None
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return m, sd


def compare_sentence(cells, what="error", digits=3, lower_is_better=True, judge=True):
    """One generated sentence on where and by how much ours differ from the published numbers.

    cells: list of (label, ours, paper); cells with a missing side are skipped.
    """
    pairs = [(lab, o, p) for lab, o, p in cells if o is not None and p is not None]
    if not pairs:
        return f"No {what} has both our value and a published one, so nothing is compared."
    diffs = [(lab, o - p, o, p) for lab, o, p in pairs]
    mad = sum(abs(d) for _, d, _, _ in diffs) / len(diffs)
    lab, d, o, p = max(diffs, key=lambda t: abs(t[1]))
    better = sum(1 for _, d, _, _ in diffs if (d < 0 if lower_is_better else d > 0))
    worse = sum(1 for _, d, _, _ in diffs if (d > 0 if lower_is_better else d < 0))
    head = (
        f"Over the {len(diffs)} {what} values that have a published counterpart, ours differ by "
        f"{num(mad, digits)} on average (mean absolute difference); the largest gap is "
        f"{lab}: ours {num(o, digits)} against {num(p, digits)} published "
        f"({signed(d, digits)})."
    )
    if not judge:
        lower = sum(1 for _, d, _, _ in diffs if d < 0)
        higher = sum(1 for _, d, _, _ in diffs if d > 0)
        return head + f" Ours are lower in {lower} and higher in {higher} of them."
    word = "lower" if lower_is_better else "higher"
    other = "higher" if lower_is_better else "lower"
    return head + f" Ours are {word} (better) in {better} and {other} (worse) in {worse} of them."


# ------------------------------------------------------------------------------------------------
# The build context: results, figures, the record of what is missing
# ------------------------------------------------------------------------------------------------
class Build:
    def __init__(self, results: Path, out: Path, benchmarks: Path):
        self.results, self.out, self.benchmarks = results, out, benchmarks
        self.missing: list[str] = []  # results files absent / unreadable
        self.gaps: list[str] = []  # other limitations found while building
        self.loaded: dict[str, dict] = {}
        self.cache: dict[str, dict | None] = {}

    def load(self, name):
        if name in self.cache:
            return self.cache[name]
        path = self.results / f"{name}.json"
        data = None
        if not path.exists():
            self.missing.append(
                f"`{name}.json` is absent: {NOT_RUN} (script `experiments/{name}.py`)."
            )
        else:
            try:
                data = json.loads(path.read_text())
                if not isinstance(data, dict):
                    raise ValueError("top level is not an object")
                self.loaded[name] = data
            except (OSError, ValueError) as err:
                self.missing.append(
                    f"`{name}.json` could not be read ({err}); rerun `experiments/{name}.py`."
                )
                data = None
        self.cache[name] = data
        return data

    def load_silent(self, name):
        """Load without recording a missing file (for cross-references between sections)."""
        if name in self.cache:
            return self.cache[name]
        path = self.results / f"{name}.json"
        try:
            return json.loads(path.read_text()) if path.exists() else None
        except (OSError, ValueError):
            return None

    def not_run(self, name, script=None):
        script = script or f"experiments/{name}.py"
        return f"**{NOT_RUN} (script `{script}`)**: `{name}.json` is not in the results folder."

    def quick_note(self, name, data):
        quick = bool(data.get("quick")) or data.get("mode") == "quick"
        if quick:
            self.gaps.append(
                f"`{name}.json` comes from a `--quick` run (reduced size); rerun "
                f"`experiments/{name}.py` without `--quick` for the full protocol."
            )
            return "*These results come from a `--quick` run (reduced size), not the full run.*\n\n"
        return ""

    def figure(self, name, caption, script=None):
        png = self.results / f"{name}.png"
        if not png.exists():
            return f"*Figure {NOT_RUN} (script `{script or f'experiments/{name}.py'}`).*"
        rel = Path(os.path.relpath(png, self.out)).as_posix()
        return f"![{caption}]({rel})"


def provenance_line(name, data):
    env = data.get("environment", {})
    mode = "quick" if (data.get("quick") or data.get("mode") == "quick") else "full"
    return (
        f"`{name}.json` ({mode}; {env.get('date', 'date not recorded')}; jax "
        f"{env.get('jax', '?')}, backend {env.get('backend', '?')}, {env.get('cpu_count', '?')} "
        f"CPUs)"
    )


# ------------------------------------------------------------------------------------------------
# Sections
# ------------------------------------------------------------------------------------------------
def sec_fsnb_fig1_fig2(b: Build):
    d = b.load("fsnb_fig1_fig2")
    if d is None:
        return b.not_run("fsnb_fig1_fig2")
    res = d.get("results", {})
    labels = {
        "NB": "NB on X1–X3",
        "NB+50irr": "+ 50 irrelevant",
        "NB+50red": "+ 50 redundant (copies of X1)",
    }
    rows, means = [], {}
    for key, lab in labels.items():
        if key in res:
            m, s = mean_std(res[key].get("final_error", []))
            means[key] = m
            rows.append([lab, pm(m, s), len(res[key].get("final_error", []))])
    txt = b.quick_note("fsnb_fig1_fig2", d)
    txt += (
        "The eq-12 scenario (three relevant discrete predictors, three classes); NB test error "
        "over the runs. The paper shows these results as plots only, so there is no published "
        "number to put beside ours; its claim is that both kinds of noise, and redundant "
        "predictors most, increase the error.\n\n"
    )
    txt += table(["configuration", "test error (mean ± sd)", "runs"], rows) + "\n\n"
    if all(k in means and means[k] is not None for k in labels):
        a, i, r = means["NB"], means["NB+50irr"], means["NB+50red"]
        holds = i > a and r > i
        txt += (
            f"Irrelevant predictors raise the mean error by {num(i - a)} and redundant ones by "
            f"{num(r - a)}; the paper's ordering (NB < + irrelevant < + redundant) "
            f"{'holds' if holds else 'does not hold'} here.\n\n"
        )
    txt += b.figure(
        "fsnb_fig1_fig2",
        "fsNB Figs. 1–2: NB error with irrelevant and redundant "
        "predictors, and the error as predictors are added one by one (one run)",
    )
    return txt


def sec_fsnb_fig3(b: Build):
    d = b.load("fsnb_fig3")
    if d is None:
        return b.not_run("fsnb_fig3")
    res = d.get("results", {})
    txt = b.quick_note("fsnb_fig3", d)
    txt += (
        f"Test error over a grid of (α2, α3) with α1 = 1, averaged over {d.get('runs', '?')} runs; "
        f"'redundant' copies X2 into X3 on a proportion {d.get('copy', '?')} of the rows. The "
        "paper's claim (figures only): the minimum lies at α2 = α3 = 1 when X2 and X3 are "
        "independent and inside (0, 1)² when they are redundant.\n\n"
    )
    rows, verdicts = [], []
    for key, r in res.items():
        a2, a3 = r.get("argmin_alpha2"), r.get("argmin_alpha3")
        rows.append(
            [
                key.replace("_", ", "),
                num(a2, 1),
                num(a3, 1),
                num(r.get("min_error")),
                num(r.get("error_at_1_1")),
                signed(
                    None
                    if r.get("min_error") is None or r.get("error_at_1_1") is None
                    else r["min_error"] - r["error_at_1_1"]
                ),
            ]
        )
        if a2 is None or a3 is None:
            continue
        corner = abs(a2 - 1) < 1e-9 and abs(a3 - 1) < 1e-9
        interior = 0 < a2 < 1 and 0 < a3 < 1
        gap = (
            (r["error_at_1_1"] - r["min_error"])
            if "error_at_1_1" in r and "min_error" in r
            else None
        )
        name = key.replace("_", " ")
        if key.endswith("independent"):
            if corner:
                verdicts.append(f"{name}: minimum at (1, 1), as claimed")
            else:
                flat = gap is not None and gap < 0.002  # well under the sd over runs
                verdicts.append(
                    f"{name}: minimum at ({num(a2, 1)}, {num(a3, 1)}), only "
                    f"{num(gap, 4)} below the error at (1, 1) (flat near the corner)"
                    if flat
                    else f"{name}: minimum at ({num(a2, 1)}, {num(a3, 1)}), {num(gap, 4)} "
                    "below the error at (1, 1), not as claimed"
                )
        else:
            where = "inside (0, 1)², as claimed" if interior else "not inside (0, 1)²"
            verdicts.append(
                f"{name}: minimum at ({num(a2, 1)}, {num(a3, 1)}), {where}, "
                f"{num(gap, 4)} below the error at (1, 1)"
            )
    txt += (
        table(
            ["scenario", "argmin α2", "argmin α3", "min error", "error at (1, 1)", "min − (1, 1)"],
            rows,
        )
        + "\n\n"
    )
    if verdicts:
        txt += "Check against the paper's claim: " + "; ".join(verdicts) + ".\n\n"
    txt += b.figure(
        "fsnb_fig3",
        "fsNB Figs. 3–4: test error over (α2, α3), independent vs "
        "redundant, discrete and continuous",
    )
    return txt


def sec_fsnb_fig6(b: Build):
    d = b.load("fsnb_fig6")
    if d is None:
        return b.not_run("fsnb_fig6")
    txt = b.quick_note("fsnb_fig6", d)
    te, aic = d.get("test_error", []), d.get("aic", [])
    it, ia = d.get("argmin_test"), d.get("argmin_aic")
    txt += (
        "One fsNB path (ε = 0.025, v = 20, no early stopping) on three relevant and twelve "
        "irrelevant predictors. The paper's claim (figure only): the iteration of minimum AIC "
        "and that of minimum test error are nearly the same.\n\n"
    )
    if te and it is not None and ia is not None and it < len(te) and ia < len(te):
        txt += table(
            ["", "iteration", "test error", "AIC"],
            [
                ["minimum test error", it, num(te[it]), num(aic[it]) if it < len(aic) else "—"],
                ["minimum AIC", ia, num(te[ia]), num(aic[ia]) if ia < len(aic) else "—"],
            ],
        )
        complete = d.get("complete")
        cut = (
            "the whole path, until every α = 1"
            if complete
            else "a path cut before every α reached 1"
            + (
                ", so a minimum at its last iteration may only be the cut"
                if ia == len(te) - 1
                else ""
            )
        )
        txt += (
            f"\n\nThe AIC choice is {abs(ia - it)} iterations {'after' if ia > it else 'before'} "
            f"the test-error minimum ({len(te) - 1} iterations: {cut}) and costs "
            f"{num(te[ia] - te[it])} in test error."
            + (
                " The AIC minimum is the end of the path (every α = 1, plain NB): with d = "
                "#{α_i > 0} (Eq. 14) the penalty stops growing once every predictor is in, while "
                "the training log-loss keeps falling towards the MLE."
                if complete and ia == len(te) - 1
                else ""
            )
            + "\n\n"
        )
    txt += b.figure(
        "fsnb_fig6",
        "fsNB Fig. 6: training and test error, AIC, loss and penalty along an fsNB path",
    )
    return txt


def _paper_value(paper_json, method, scenario, idx, fallback):
    """Published value from the JSON's "paper" block (list per scenario), else the fallback dict."""
    try:
        v = paper_json[method][scenario][idx]
        if v is not None:
            return float(v), "json"
    except (KeyError, IndexError, TypeError):
        pass
    v = fallback.get(method, {}).get(scenario)
    return (None, None) if v is None else (float(v), "published.py")


TIE_T2 = 0.001  # Table 2: mean CV errors closer than this are joint lowest

T1_METHODS = [  # (label, result key prefix, step rule block)
    ("NB", "nb", "t_eps"),
    ("SNB", "snb", "t_eps"),
    ("WNB", "wnb", "t_eps"),
    ("aL1/L2-NB", "al1l2", "t_eps"),
    ("fsNB", "fs", "t_eps"),
    ("fsNB (ε rule)", "fs", "eps"),
    ("CFS+NB", "cfs", "t_eps"),
]


def sec_fsnb_table1(b: Build):
    d = b.load("fsnb_table1")
    if d is None:
        return b.not_run("fsnb_table1")
    st = b.load_silent("stats_table4")
    markers = (st or {}).get("markers", {})
    res, paper = d.get("results", {}), d.get("paper", {})
    txt = b.quick_note("fsnb_table1", d)
    txt += (
        f"{d.get('n_datasets', '?')} data sets per scenario, N = 300 training and 3000 test rows, "
        f"fsNB with ε = {d.get('epsilon', '?')}, v = {d.get('v', '?')}, early stopping (patience "
        f"{d.get('patience', '?')}) and {str(d.get('selection', '?')).upper()} selection. "
        "Our mean test error ± sd over the data sets beside the published mean; Δ = ours − "
        "published. **Bold**: best of ours in the scenario; \\*: not significantly worse than "
        "it (paired Wilcoxon over the data sets, α = 0.05; `stats_table4.json`). fsNB is the "
        "pseudocode's step rule (t\\*ε); \"fsNB (ε rule)\" the prose's (ε), which the paper "
        "does not report separately.\n\n"
    )
    cp = b.load_silent("calibrate_patience")
    if cp and cp.get("patience"):
        pats, means = cp["patience"], cp.get("mean_evaluations_all", [])
        if cp.get("chosen") in pats and len(means) == len(pats):
            h = pats.index(cp["chosen"])
            txt += (
                "The paper does not give its patience; it reports "
                f"{num(cp.get('paper_evaluations'), 2)} evaluations per fsNB run. Patience "
                f"{cp['chosen']} gives {num(means[h], 0)} on average over the four scenarios "
                f"(patience {pats[max(h - 1, 0)]}: {num(means[max(h - 1, 0)], 0)}, "
                f"{pats[min(h + 1, len(pats) - 1)]}: {num(means[min(h + 1, len(pats) - 1)], 0)}; "
                "training-side counts only, `experiments/calibrate_patience.py`), so Table 1 "
                "and Table 2 use it.\n\n"
            )
    rows, err_cells, sel_cells, noisy_cells, absent, used_fallback = [], [], [], [], set(), set()
    for s in SCENARIOS:
        if s not in res:
            continue
        for label, key, rule in T1_METHODS:
            block = res[s].get(rule, {})
            ours = block.get(f"{key}_err")
            pub_label = "fsNB" if label.startswith("fsNB") else label
            p_err, src = _paper_value(paper, pub_label, s, 0, PUB.FSNB_TABLE1_ERROR)
            p_sel, src_s = _paper_value(paper, pub_label, s, 1, PUB.FSNB_TABLE1_SELECTED)
            p_noisy, src_n = _paper_value(paper, pub_label, s, 2, PUB.FSNB_TABLE1_NOISY)
            if label == "fsNB (ε rule)":
                p_err = p_sel = p_noisy = None  # the paper reports one fsNB only
            for source in (src, src_s, src_n):
                if source == "published.py" and label != "fsNB (ε rule)":
                    used_fallback.add(label)
            if ours is None:
                absent.add(label)
                rows.append(
                    [s, label, "not run", num(p_err), "—", "—", num(p_sel, 1), "—", num(p_noisy, 1)]
                )
                continue
            m, sd = ours["mean"], ours.get("std")
            cell = pm(m, sd)
            mk = markers.get(s, {}).get("marker", {}).get(label)
            cell = f"**{cell}**" if mk == 2 else (f"{cell} \\*" if mk == 1 else cell)
            sel = block.get(f"{key}_sel", {}).get("mean")
            noisy = block.get(f"{key}_noisy", {}).get("mean")
            rows.append(
                [
                    s,
                    label,
                    cell,
                    num(p_err),
                    signed(None if p_err is None else m - p_err),
                    num(sel, 1),
                    num(p_sel, 1),
                    num(noisy, 1),
                    num(p_noisy, 1),
                ]
            )
            if label != "fsNB (ε rule)":
                err_cells.append((f"{label} on {s}", m, p_err))
                sel_cells.append((f"{label} on {s}", sel, p_sel))
                noisy_cells.append((f"{label} on {s}", noisy, p_noisy))
    txt += (
        table(
            [
                "set",
                "method",
                "test error (ours)",
                "published",
                "Δ",
                "selected (ours)",
                "published",
                "noisy selected (ours)",
                "published",
            ],
            rows,
            ["---", "---"] + ["---:"] * 7,
        )
        + "\n\n"
    )
    txt += compare_sentence(err_cells, "mean test error") + " "
    txt += compare_sentence(sel_cells, "number-of-selected-predictors", 1, judge=False)
    txt += "\n\n"
    chk = d.get("checks") or []
    if chk:
        txt += (
            "Differences the paper's narrative rests on, paired over our data sets (mean and "
            "normal-approximation 95% interval), against the project's acceptance thresholds "
            "(ours, not claims of the paper; the published gaps are the Δ of the table above):\n\n"
            + "\n".join(
                f"- {c['check']}: {c['value']} — {'met' if c['pass'] else '**not met**'}"
                for c in chk
            )
            + "\n\n"
        )
    if used_fallback:
        txt += (
            f"Published values for {', '.join(sorted(used_fallback))} are not in "
            f"`fsnb_table1.json`; they come from `paper/published.py` ({PUB.SOURCE}).\n\n"
        )
    if absent:
        b.gaps.append(
            f"fsNB Table 1 has no results of ours for {', '.join(sorted(absent))}: "
            "`experiments/fsnb_table1.py` stores NB, SNB and fsNB only, and no other script "
            "writes these columns yet."
        )
        txt += (
            f'Columns marked "not run" ({", ".join(sorted(absent))}) are not produced by '
            "any experiment script yet.\n\n"
        )
    ev = d.get("paper_evaluations") or {}
    fs_ev = [
        res[s]["t_eps"]["fs_evals"]["mean"]
        for s in SCENARIOS
        if s in res and "fs_evals" in res[s].get("t_eps", {})
    ]
    snb_ev = [
        res[s]["t_eps"]["snb_evals"]["mean"]
        for s in SCENARIOS
        if s in res and "snb_evals" in res[s].get("t_eps", {})
    ]
    if fs_ev:
        p_fs = ev.get("fsNB", PUB.FSNB_EVALUATIONS.get("synthetic"))
        txt += (
            f"Evaluations: fsNB {num(sum(fs_ev) / len(fs_ev), 0)} on average over the scenarios "
            f"(published {num(p_fs, 0)})"
        )
        if snb_ev:
            txt += f", SNB {num(sum(snb_ev) / len(snb_ev), 1)} (published {num(ev.get('SNB'), 1)})"
        txt += (
            ". An fsNB evaluation scores one candidate (predictor, step) on the training set.\n\n"
        )
    txt += b.figure(
        "fsnb_table1",
        "fsNB Table 1: mean test error per scenario, ours (bars, ± sd) and published (crosses)",
    )
    return txt


def sec_fsnb_table2(b: Build):
    d = b.load("fsnb_table2")
    if d is None:
        return b.not_run("fsnb_table2")
    res, paper = d.get("results", {}), d.get("paper", {})
    txt = b.quick_note("fsnb_table2", d)
    txt += (
        f"Diabetes (N = 442, 10 continuous predictors), class = response above the τ-th "
        f"quartile, {d.get('n_folds', '?')}-fold CV. Our mean error ± sd over the folds and "
        "mean number of selected predictors beside the published errors; Δ = ours − "
        "published.\n\n"
    )
    rows, cells, fallback = [], [], False
    labels = {
        "NB": "NB",
        "SNB": "SNB",
        "WNB": "WNB",
        "aL1/L2-NB": "aL1/L2-NB",
        "fsNB": "fsNB",
        "CFS+NB": "CFS+NB",
        "fsNB(eps)": "fsNB (ε rule)",
    }
    best_ours, best_pub = {}, {}  # quartile -> [(error, method)] over the paper's six methods
    for key, lab in labels.items():
        per = res.get(key)
        if not per:
            continue
        pub, pub_sel = None, None
        if key in paper and paper[key]:
            pub = paper[key][0] if isinstance(paper[key][0], list) else paper[key]
            if isinstance(paper[key][0], list) and len(paper[key]) > 1:
                pub_sel = paper[key][1]
        elif key in PUB.FSNB_TABLE2_ERROR:
            pub, fallback = PUB.FSNB_TABLE2_ERROR[key], True
        for qi, q in enumerate(sorted(per, key=str)):
            r = per[q]
            p = (
                float(pub[qi])
                if pub is not None and qi < len(pub) and pub[qi] is not None
                else None
            )
            ps = pub_sel[qi] if pub_sel is not None and qi < len(pub_sel) else None
            sel = mean_std(r.get("selected", []))[0] if r.get("selected") else None
            rows.append(
                [
                    f"τ = Q{q}",
                    lab,
                    pm(r.get("mean"), r.get("std")),
                    num(p, 2),
                    signed(None if p is None else r["mean"] - p),
                    num(sel, 1),
                    num(ps, 1),
                ]
            )
            if key != "fsNB(eps)":
                cells.append((f"{lab} at τ = Q{q}", r.get("mean"), p))
                best_ours.setdefault(q, []).append((r.get("mean"), lab))
                if p is not None:
                    best_pub.setdefault(q, []).append((p, lab))
    txt += (
        table(
            [
                "threshold",
                "method",
                "error (ours)",
                "published",
                "Δ",
                "selected (ours)",
                "selected (published)",
            ],
            rows,
            ["---", "---", "---:", "---:", "---:", "---:", "---:"],
        )
        + "\n\n"
    )
    txt += compare_sentence(cells, "mean CV error") + "\n\n"
    if best_ours:
        # means closer than TIE_T2 are joint lowest: a 10-fold mean over 442 rows moves by ~1e-4
        # with the fold sizes alone (e.g. the same 101 misclassified rows in other folds)
        parts, fs_best = [], 0
        for q in sorted(best_ours, key=str):
            e, lab = min(best_ours[q])
            joint = sorted((v, m) for v, m in best_ours[q] if v is not None and v - e < TIE_T2)
            pub_best = min(best_pub.get(q, []), default=None)
            pub_txt = (
                ""
                if pub_best is None
                else f"; published best {pub_best[1]} ({num(pub_best[0], 2)})"
            )
            names = " and ".join(f"{m} ({num(v, 4)})" for v, m in joint)
            tie = f", joint lowest within {TIE_T2}" if len(joint) > 1 else ""
            parts.append(f"Q{q}: {names}{tie}{pub_txt}")
            fs_best += any(m == "fsNB" for _, m in joint)
        fs_pub = sum(bool(best_pub.get(q)) and min(best_pub[q])[1] == "fsNB" for q in best_ours)
        txt += (
            "Lowest mean CV error per threshold among the six Table-2 methods — "
            + "; ".join(parts)
            + f". Our fsNB is the lowest (alone or joint) at {fs_best} of {len(best_ours)} "
            f"thresholds, the published fsNB at {fs_pub} of {len(best_ours)}.\n\n"
        )
    if fallback:
        txt += f"Published values from `paper/published.py` ({PUB.SOURCE}).\n\n"
    ev = d.get("paper_evaluations") or {}
    fs = [v for q in res.get("fsNB", {}).values() for v in q.get("evaluations", [])]
    if fs:
        txt += (
            f"fsNB evaluations: {num(sum(fs) / len(fs), 0)} per fold on average (published "
            f"{num(ev.get('fsNB', PUB.FSNB_EVALUATIONS.get('diabetes')), 0)}; the patience "
            "calibrated on Table 1 stops our runs later here).\n\n"
        )
    eps = res.get("fsNB(eps)", {})
    # quartiles where every fold's ε-rule search ended at the same, smallest evaluation count with
    # one predictor touched: it stopped after its first patience-many moves
    stuck = [
        q
        for q in sorted(eps, key=str)
        if len(set(eps[q].get("evaluations", []))) == 1 and set(eps[q].get("selected", [])) == {1}
    ]
    if stuck:
        n_ev = eps[stuck[0]]["evaluations"][0]
        txt += (
            f"fsNB (ε rule) at {', '.join(f'Q{q}' for q in stuck)}: every fold stopped after "
            f"{n_ev} evaluations, and its AIC-selected model has one predictor. Each move "
            "raises one α by ε = 0.025, and early stopping counts an iteration only when the "
            "training error of the model reached improves: a few such small moves leave the "
            "majority-class prediction unchanged (mean error "
            + ", ".join(f"Q{q} {num(eps[q].get('mean'), 3)}" for q in stuck)
            + "), so the patience runs out.\n\n"
        )
    missing = [m for m in ("WNB", "aL1/L2-NB", "CFS+NB") if m not in res]
    if missing:
        b.gaps.append(f"fsNB Table 2: {', '.join(missing)} not run on Diabetes by any script.")
    txt += b.figure("fsnb_table2", "fsNB Table 2: Diabetes CV error, ours and published")
    return txt


def _data_readme(b: Build):
    for cand in (
        ROOT / "shared" / "data" / "README.md",
        ROOT.parent / "shared" / "data" / "README.md",
    ):
        if cand.exists():
            return cand.read_text()
    return None


def _readme_item(text, letter):
    """The bullet block '- **(letter) ...' of the data README's 'Not obtainable here' section."""
    if not text:
        return None
    m = re.search(rf"^- \*\*\({letter}\).*?(?=^- \*\*\(|^## |\Z)", text, flags=re.M | re.S)
    return m.group(0).strip() if m else None


REASONS = {  # paraphrase used when the shared data README is not beside the repository
    "d": "StarPlus fMRI: per-subject MATLAB files from CMU's web site; no package or stored "
    "repository holds them, so they cannot be obtained offline.",
    "e": "Haxby et al. (2001) fMRI: downloaded at run time by nilearn; the only offline copy is "
    "PyMVPA's 25 mm test fixture, far too coarse to reproduce the paper.",
    "f": "PASCAL Large Scale Learning: not shipped by any package or stored repository (and far "
    "over the size limit); replaced by a Gaussian simulator of the same shape.",
}


def sec_fsnb_table3(b: Build):
    readme = _data_readme(b)
    txt = (
        "**Data not available.** fsNB Table 3 (StarPlus fMRI) and the Haxby fMRI data cannot be "
        "obtained offline, so Table 3 is not reproduced; the statistics of Table 4 are applied "
        "to the synthetic results of Table 1 instead (Section 8). PASCAL (Stream paper) is "
        "replaced by a simulator (Section 12). The reasons, from the shared data README:\n\n"
    )
    for letter in ("d", "e", "f"):
        item = _readme_item(readme, letter)
        txt += (item if item else f"- {REASONS[letter]}") + "\n"
    b.gaps.append(
        "fsNB Table 3 (StarPlus) and the Haxby experiment: data not available offline; "
        "PASCAL replaced by a simulator (Stream Tables)."
    )
    return txt


def sec_stats_table4(b: Build):
    d = b.load("stats_table4")
    if d is None:
        return b.not_run("stats_table4")
    txt = ""
    t1 = b.load_silent("fsnb_table1")
    if t1 is not None:
        src_date = t1.get("environment", {}).get("date")
        if d.get("source_date") != src_date:
            b.gaps.append(
                "`stats_table4.json` was computed from another version of "
                "`fsnb_table1.json`; rerun `experiments/stats_table4.py`."
            )
            txt += (
                "*Stale: computed from an earlier `fsnb_table1.json`; rerun "
                "`experiments/stats_table4.py`.*\n\n"
            )
    if d.get("source_quick"):
        txt += "*Computed from a `--quick` run of Table 1.*\n\n"
    txt += (
        'The paper\'s Table 4 (§7.4, "Comparison across data sets") gives Bergmann–Hommel '
        "adjusted p values for every pair of its six methods after a Friedman test (the OCR "
        "of §7.4 does not say which of its data sets the test pools), and concludes that "
        "fsNB is significantly better than all the other procedures at α = 0.05 (adjusted p "
        "from 1.57E-6 against NB to 0.030 against CFS+NB). Without its data (the fMRI data "
        "are not available offline) we apply the same statistics to the per-data-set test "
        "errors of Table 1 (`experiments/stats_table4.py`, `jaxnb.stats`): each synthetic data "
        "set of each scenario is one block, lower error ranks first, ties share the average "
        "rank. The blocks differ from the paper's, so the p values are not comparable one to "
        "one; the conclusion is, and it is stated after the tables.\n\n"
    )
    po = d.get("pooled")
    if po:
        fr = po["friedman"]
        txt += (
            f"Pooled over {po['n_blocks']} blocks and {len(po['methods'])} methods: Friedman "
            f"χ² = {num(fr['chi2'], 2)} (p = {pval(fr['p'])}), Iman–Davenport F = "
            f"{num(fr['iman_davenport_f'], 2)} (p = {pval(fr['f_p'])}); Nemenyi critical "
            f"difference {num(po['nemenyi_cd'])} at α = {d.get('alpha')}.\n\n"
        )
        rows = [
            [m, num(po["avg_ranks"][m]), num(po["mean_error"][m])]
            for m in sorted(po["methods"], key=lambda m: po["avg_ranks"][m])
        ]
        txt += table(["method", "average rank", "mean error"], rows) + "\n\n"
        rows = [
            [
                f"{r['a']} vs {r['b']}",
                num(r["z"], 2),
                pval(r["p"]),
                pval(r["p_holm"]),
                pval(r["p_bergmann_hommel"]),
                "yes" if r["reject_bergmann_hommel"] else "no",
            ]
            for r in po["pairs"]
        ]
        txt += (
            table(
                ["pair", "z", "p", "Holm", "Bergmann–Hommel", "different at α"],
                rows,
                ["---"] + ["---:"] * 5,
            )
            + "\n\n"
        )
        n_rej = sum(r["reject_bergmann_hommel"] for r in po["pairs"])
        best = min(po["avg_ranks"], key=po["avg_ranks"].get)
        fs_pairs = [r for r in po["pairs"] if "fsNB" in (r["a"], r["b"])]
        fs_better = [
            r
            for r in fs_pairs
            if r["reject_bergmann_hommel"]
            and po["avg_ranks"]["fsNB"] < po["avg_ranks"][r["b" if r["a"] == "fsNB" else "a"]]
        ]
        fs_worse = [
            r["b" if r["a"] == "fsNB" else "a"]
            for r in fs_pairs
            if r["reject_bergmann_hommel"]
            and po["avg_ranks"]["fsNB"] > po["avg_ranks"][r["b" if r["a"] == "fsNB" else "a"]]
        ]
        txt += (
            f"Bergmann–Hommel rejects {n_rej} of the {len(po['pairs'])} pairwise hypotheses; "
            f"the best average rank is {best}. Against the paper's conclusion: our fsNB is "
            f"significantly better than {len(fs_better)} of the other "
            f"{len(fs_pairs)} methods"
            + (f" and significantly worse than {', '.join(fs_worse)}" if fs_worse else "")
            + " (the paper: better than all five).\n\n"
        )
    per = d.get("per_scenario", {})
    if per:
        rows = []
        for s, a in per.items():
            best = min(a["avg_ranks"], key=a["avg_ranks"].get)
            rej = [f"{r['a']}–{r['b']}" for r in a["pairs"] if r["reject_bergmann_hommel"]]
            rows.append(
                [
                    s,
                    a["n_blocks"],
                    num(a["friedman"]["chi2"], 2),
                    pval(a["friedman"]["p"]),
                    best,
                    ", ".join(rej) if rej else "none",
                ]
            )
        txt += (
            "Per scenario:\n\n"
            + table(
                ["scenario", "blocks", "χ²", "p", "best rank", "pairs different (Bergmann–Hommel)"],
                rows,
                ["---", "---:", "---:", "---:", "---", "---"],
            )
            + "\n\n"
        )
    di = d.get("diabetes")
    if di:
        fr = di["friedman"]
        ranks = ", ".join(
            f"{m} {num(r, 2)}" for m, r in sorted(di["avg_ranks"].items(), key=lambda t: t[1])
        )
        rej = [f"{r['a']}–{r['b']}" for r in di["pairs"] if r["reject_bergmann_hommel"]]
        txt += (
            f"Diabetes (Table 2; {di['n_blocks']} quartile × fold blocks): Friedman χ² = "
            f"{num(fr['chi2'], 2)} (p = {pval(fr['p'])}); average ranks {ranks}; pairs "
            f"different after Bergmann–Hommel: {', '.join(rej) if rej else 'none'}.\n"
        )
    return txt


def sec_l1nb_soybean(b: Build):
    d = b.load("l1nb_soybean")
    if d is None:
        return b.not_run("l1nb_soybean")
    res = d.get("results", {})
    txt = b.quick_note("l1nb_soybean", d)
    levels = d.get("levels", [])
    methods = []
    for cfg in res.values():
        for m in cfg:
            if m not in methods:
                methods.append(m)
    txt += (
        f"Soybean-small ({d.get('p', '?')} non-constant predictors) with 0..{max(levels or [0])}p "
        f"irrelevant and 0..{max(levels or [0])}p redundant predictors (correlation "
        f"{d.get('correlation', '?')} with `{d.get('source', '?')}`), {d.get('n_folds', '?')}-fold "
        "CV; accuracy (mean over folds) and mean number of selected predictors. The paper gives "
        "these as figures; its text states:\n\n"
    )
    paper = d.get("paper")
    if isinstance(paper, dict):
        txt += "\n".join(f"- {k}: {v}" for k, v in paper.items()) + "\n\n"
    else:
        txt += "- (no published statement stored in the results file)\n\n"

    def sub(fixed_red):
        rows = []
        for lv in levels:
            key = f"{lv}p_irr/0p_red" if fixed_red else f"0p_irr/{lv}p_red"
            cfg = res.get(key)
            if cfg is None:
                continue
            rows.append(
                [f"+{lv}p"]
                + [
                    f"{num(cfg[m]['accuracy'], 2)} ({num(cfg[m]['selected'], 1)})"
                    if m in cfg
                    else "—"
                    for m in methods
                ]
            )
        return rows

    txt += "Irrelevant predictors added (no redundant), accuracy (selected):\n\n"
    txt += table(["irrelevant"] + methods, sub(True)) + "\n\n"
    txt += "Redundant predictors added (no irrelevant), accuracy (selected):\n\n"
    txt += table(["redundant"] + methods, sub(False)) + "\n\n"
    rows = []
    for m in methods:
        acc = [cfg[m]["accuracy"] for cfg in res.values() if m in cfg]
        sel = [cfg[m]["selected"] for cfg in res.values() if m in cfg]
        rows.append(
            [
                m,
                num(min(acc), 2),
                num(sum(acc) / len(acc), 2),
                num(sum(sel) / len(sel), 1),
                num(max(sel), 1),
            ]
        )
    txt += (
        f"Over all {len(res)} configurations:\n\n"
        + table(
            ["method", "worst accuracy", "mean accuracy", "mean selected", "max selected"], rows
        )
        + "\n\n"
    )
    sel = {r[0]: float(r[3]) for r in rows}
    if "L1-NB" in sel:
        txt += (
            f"The paper says L1-NB keeps about 3 predictors on every data set; ours keeps "
            f"{num(sel['L1-NB'], 1)} on average (AIC with the classifier likelihood)"
            + (
                f" and {num(sel['L1-NB(gAIC)'], 1)} with the Gaussian AIC"
                if "L1-NB(gAIC)" in sel
                else ""
            )
            + ".\n\n"
        )
    acc = {r[0]: float(r[2]) for r in rows}
    if "L1-NB" in acc and len(acc) > 1:
        top = max(acc, key=acc.get)
        rank = sorted(acc, key=acc.get, reverse=True).index("L1-NB") + 1
        txt += (
            "It also shows L1-NB with the best accuracy, least affected by redundancy; ours "
            f"ranks L1-NB {rank} of {len(acc)} by mean accuracy ({num(acc['L1-NB'], 2)}; best "
            f"{top}, {num(acc[top], 2)})"
            + (", so that claim is not reproduced here" if top != "L1-NB" else "")
            + ".\n\n"
        )
    txt += b.figure(
        "l1nb_soybean",
        "L1NB Figs. 1–2: Soybean accuracy and selected predictors as "
        "irrelevant / redundant predictors are added",
    )
    return txt


def sec_l1nb_flags(b: Build):
    d = b.load("l1nb_flags")
    if d is None:
        return b.not_run("l1nb_flags")
    res, paper = d.get("results", {}), d.get("paper", {})
    txt = b.quick_note("l1nb_flags", d)
    txt += (
        f"Flags, religion as a {len(d.get('class_names', [])) or '?'}-class response, "
        f"{d.get('n_folds', '?')}-fold CV; the published value is the paper's Table 2 \"mean "
        'accuracy (and standard deviation)". Δ = ours − published.\n\n'
    )
    rows, cells, fb, variants = [], [], False, []
    for m, r in res.items():
        pub = paper.get(m)
        if pub is None and m in PUB.L1NB_FLAGS:
            pub, fb = PUB.L1NB_FLAGS[m], True
        p_acc = pub[0] if pub else None
        p_sel = pub[1] if pub and len(pub) > 1 else None
        rows.append(
            [
                m,
                pm(r.get("accuracy"), r.get("accuracy_std"), 2),
                num(p_acc, 2),
                signed(None if p_acc is None else r["accuracy"] - p_acc, 2),
                pm(r.get("selected"), r.get("selected_std"), 1),
                num(p_sel, 1),
            ]
        )
        if "(" not in m:  # a variant (e.g. L1-NB(gAIC)) shares its method's published value
            cells.append((m, r.get("accuracy"), p_acc))
        elif p_acc is not None:
            variants.append(m)
    txt += (
        table(["method", "accuracy (ours)", "published", "Δ", "selected (ours)", "published"], rows)
        + "\n\n"
    )
    txt += compare_sentence(cells, "accuracy", 2, lower_is_better=False)
    if variants:
        txt += (
            f" The count leaves out {', '.join(variants)}: "
            + ("our variant" if len(variants) == 1 else "our variants")
            + " of a published method, shown beside that method's published value, not a "
            "published result of " + ("its own." if len(variants) == 1 else "their own.")
        )
    txt += "\n\n"
    if fb:
        txt += f"Some published values from `paper/published.py` ({PUB.SOURCE}).\n\n"
    props, pprops = d.get("proportions"), d.get("paper_proportions")
    if props and pprops:
        gap = max(abs(a - b_) for a, b_ in zip(sorted(props), sorted(pprops), strict=False))
        txt += (
            f"No merge of the eight UCI religion codes into six classes reproduces the "
            f"published class proportions; ours differ from them by up to {num(gap, 3)} "
            "(sorted proportions compared), so the tasks are not identical.\n\n"
        )
    txt += b.figure(
        "l1nb_flags", "L1NB Table 2: Flags accuracy and selected predictors, ours and published"
    )
    return txt


def sec_esann_table1(b: Build):
    d = b.load("esann_table1")
    if d is None:
        return b.not_run("esann_table1")
    res, paper = d.get("results", {}), d.get("paper", {})
    txt = b.quick_note("esann_table1", d)
    txt += (
        f"{d.get('n_train', '?')} training and {d.get('n_test', '?')} test series, "
        f"{d.get('n_indicators', '?')} binary indicators (the paper: 814, from a grid of "
        "window lengths it does not list). NB on half of the training set, subset chosen on "
        "the other half, test error on the test set. Δ = ours − published.\n\n"
    )
    rows, err_cells, size_cells = [], [], []
    full = d.get("full_nb", {})
    if full:
        rows.append(
            [
                "NB, all indicators",
                d.get("n_indicators", "—"),
                "—",
                num(full.get("test_error"), 4),
                "—",
                "—",
            ]
        )
    for m, r in res.items():
        pub = paper.get(m)  # the experiment stores ESANN's published values in its JSON
        pe = pub.get("test_error") if pub else None
        pn = pub.get("n_features") if pub else None
        rows.append(
            [
                m,
                r.get("n_features", "—"),
                pn if pn is not None else "—",
                num(r.get("test_error"), 4),
                num(pe, 4),
                signed(None if pe is None else r["test_error"] - pe, 4),
            ]
        )
        err_cells.append((m, r.get("test_error"), pe))
        size_cells.append((m, r.get("n_features"), pn))
    txt += (
        table(
            ["method", "features (ours)", "published", "test error (ours)", "published", "Δ"], rows
        )
        + "\n\n"
    )
    txt += compare_sentence(err_cells, "test error", 4) + "\n\n"
    checks = d.get("checks", {})
    if "all_wrappers_beat_both_filters" in checks:
        w = checks.get("wrapper_beats_both_filters", {})
        beat = [k for k, v in w.items() if v]
        txt += (
            f"The paper's claim that every wrapper beats both filters "
            f"{'holds' if checks['all_wrappers_beat_both_filters'] else 'does not hold'} here "
            f"({len(beat)} of {len(w)} wrappers beat both).\n\n"
        )
    # the paper's two other claims (§5): the error probability always improves the wrappers,
    # and the backward-forward (floating) search guided by it is the best solution
    pairs = [
        (base, res[f"{base} (error)"]["test_error"], res[f"{base} (prob)"]["test_error"])
        for base in ("forward", "backward", "forward-backward", "backward-forward")
        if f"{base} (error)" in res and f"{base} (prob)" in res
    ]
    if pairs:
        better = [b_ for b_, e, pr in pairs if pr < e]
        worse = [b_ for b_, e, pr in pairs if pr > e]
        ties = [b_ for b_, e, pr in pairs if pr == e]
        txt += (
            "The paper also claims that the error probability *always* improves the wrappers: "
            f"here it lowers the test error for {len(better)} of {len(pairs)} searches"
            + (f" ({', '.join(better)})" if better else "")
            + (f", raises it for {', '.join(worse)}" if worse else "")
            + (f" and ties for {', '.join(ties)}" if ties else "")
            + ". "
        )
    wr = {m: r["test_error"] for m, r in res.items() if "filter" not in m}
    if wr:
        best = min(wr, key=wr.get)
        claim = "backward-forward (prob)"
        txt += (
            f"It names the backward floating search guided by the error probability "
            f"({claim}) the best solution; our lowest test error is {best} "
            f"({num(wr[best], 4)})"
            + (
                f", and {claim} has {num(wr[claim], 4)}.\n\n"
                if claim in wr and best != claim
                else ".\n\n"
            )
        )
    txt += (
        "Our simulated series and indicator grid are our reading of the paper, so absolute "
        "errors are not expected to match; the comparison is about the ranking of strategies "
        "and the subset sizes.\n\n"
    )
    txt += b.figure(
        "esann_table1",
        "ESANN Table 1: test error and number of selected indicators per search strategy",
    )
    return txt


def _stream_paper(d):
    """Published Stream Tables 1–2 values from the JSON if it stores them (several spellings)."""
    p = d.get("paper") if isinstance(d.get("paper"), dict) else {}
    t1 = p.get("table1") or p.get("T1") or d.get("paper_t1") or d.get("paper_table1")
    t2 = p.get("table2") or p.get("T2") or d.get("paper_t2") or d.get("paper_table2")
    return t1, t2


def sec_stream_tables(b: Build):
    d = b.load("stream_tables")
    if d is None:
        return b.not_run("stream_tables")
    txt = b.quick_note("stream_tables", d)
    spec, prefixes = d.get("spec", {}), d.get("prefixes", [])
    txt += (
        f"The PASCAL Large Scale Learning data are not available offline (Section 7); a "
        f"simulated stream of the same kind stands in: {spec.get('n_predictors', '?')} numeric "
        f"predictors ({spec.get('n_relevant', '?')} relevant, {spec.get('n_redundant', '?')} "
        f"redundant), binary class, {spec.get('n_test', '?')} test rows, Bayes accuracy "
        f"{num(d.get('bayes_accuracy'), 4)}. Test accuracy (%) after each training prefix.\n\n"
    )
    t1p, t2p = _stream_paper(d)
    pct = lambda v: "—" if v is None else f"{100 * v:.2f}"
    cols = [f"{n:,d} rows" for n in prefixes]

    def pub_cells(src, name):
        vals = (src or {}).get(name)
        return [f"{v:.2f}" for v in vals] if vals else ["—"] * len(prefixes)

    rows = []
    for name, key in (("GKClass", "gkclass"), ("cPiD", "cpid"), ("Gaussian", "gaussian")):
        if key in d:
            rows.append([name] + [pct(v) for v in d[key].get("nb", [])] + pub_cells(t1p, name))
    txt += (
        "Table 1, NB on per-class summaries (ours | published on PASCAL alpha):\n\n"
        + table(["summary"] + cols + [f"published {c}" for c in cols], rows)
        + "\n\n"
    )
    t2 = [
        ("offline NB", d.get("offline", {}).get("nb")),
        ("offline ANB", d.get("offline", {}).get("anb")),
        ("online NB", d.get("gkclass", {}).get("nb")),
        ("online WNB", d.get("gkclass", {}).get("wnb")),
    ]
    rows = [
        [n] + ([pct(x) for x in v] if v else ["—"] * len(prefixes)) + pub_cells(t2p, n)
        for n, v in t2
    ]
    extra = [
        ("online WNB, Gaussian summaries, SGD", d.get("gaussian", {}).get("wnb")),
        ("online WNB, Gaussian summaries, Adam", d.get("gaussian_adam", {}).get("wnb")),
        (
            "online WNB, Gaussian summaries, Adam in the class-contrast basis (chosen on "
            "training-side rows)",
            d.get("gaussian_tuned", {}).get("wnb"),
        ),
        ("online WNB, cPiD summaries", d.get("cpid", {}).get("wnb")),
    ]
    rows += [[n] + [pct(x) for x in v] + ["—"] * len(prefixes) for n, v in extra if v]
    txt += (
        "Table 2, offline and online NB and weighted NB (ours | published on PASCAL alpha; the "
        "last rows are ours only):\n\n"
        + table(["method"] + cols + [f"published {c}" for c in cols], rows)
        + "\n\n"
    )
    if not (t1p or t2p):
        b.gaps.append(
            "`stream_tables.json` stores no published values, and METHODS.md restates "
            "none; the script's constants (PAPER_T1_ALPHA, PAPER_T2_ALPHA) should be saved "
            'in its JSON under "paper".'
        )
        txt += (
            "No published values are stored in `stream_tables.json` and METHODS.md restates "
            "none, so the published columns are empty. They would not be comparable anyway: "
            "the paper's accuracies are on the real PASCAL alpha set, ours on a simulator with "
            "a different Bayes rate."
        )
    else:
        txt += (
            "Published values are on the real PASCAL alpha set, ours on a simulator with a "
            "different Bayes rate: compare the pattern (ANB ≫ NB; online WNB between), not the "
            "levels."
        )
    off, onl = d.get("offline", {}), d.get("gkclass", {})
    if off.get("anb") and off.get("nb") and onl.get("wnb") and onl.get("nb"):
        g_anb = off["anb"][-1] - off["nb"][-1]
        g_wnb = onl["wnb"][-1] - onl["nb"][-1]
        txt += (
            f" At the largest prefix, offline ANB gains {100 * g_anb:.2f} points over offline "
            f"NB and online WNB {100 * g_wnb:.2f} points over online NB."
        )
    tuned = d.get("gaussian_tuned", {}).get("wnb")
    if tuned and off.get("anb"):
        gaps = ", ".join(f"{100 * (a - w):+.2f}" for a, w in zip(off["anb"], tuned, strict=True))
        txt += (
            " With the paper's η = 1e-4, plain SGD is far from converged after one pass; the same "
            "per-class WNB trained by Adam in a class-mean + contrast basis "
            "(`jaxnb.optim.contrast_basis`, the configuration chosen on training-side rows, never "
            f"on the test rows) ends at offline ANB minus WNB = {gaps} points at the three "
            "prefixes"
        )
        t2pub = (d.get("paper") or {}).get("table2") or {}
        pa, pw = t2pub.get("offline ANB"), t2pub.get("online WNB")
        if pa and pw:
            pub_gaps = ", ".join(f"{a - w:+.2f}" for a, w in zip(pa, pw, strict=True))
            txt += (
                f"; the published gaps are {pub_gaps} points (ANB ahead at every prefix, the "
                "gap not shrinking steadily)"
                + (
                    ", whereas ours shrink and WNB ends above ANB"
                    if tuned[-1] > off["anb"][-1]
                    else ""
                )
                + "."
            )
        else:
            txt += "."
    if any(d.get(k, {}).get("wnb") for k in ("gaussian", "gaussian_adam", "gaussian_tuned")):
        txt += (
            " The Gaussian-summary WNB rows learn on standardized terms, log p(x_i | C_k) + "
            "log s_i with s_i the pooled standard deviation streamed so far (`OnlineWeightedNB`'s "
            "default `standardize=True`): the same model family as Stream eq. 2 (the bias "
            "absorbs Σ_i w_ik log s_i), but a one-pass SGD path that does not depend on the "
            "columns' units; on this simulator (columns of standard deviation about 1) they "
            "differ from the raw terms' rows by at most 0.1 point."
        )
    txt += "\n\n" + b.figure(
        "stream_tables",
        "Stream Tables 1–2 on the simulated stream: test accuracy against training rows",
    )
    return txt


def sec_compare_penalties(b: Build):
    d = b.load("compare_penalties")
    if d is None:
        return b.not_run("compare_penalties")
    txt = b.quick_note("compare_penalties", d)
    txt += (
        f"{d.get('dataset', 'One data set')}: the paths of the four ways to shrink predictors "
        "towards their removed parameters, and the model each selects (no published "
        "counterpart; this is our comparison).\n\n"
    )
    rows = []
    for name, r in d.get("methods", {}).items():
        rows.append(
            [
                name,
                r.get("path_points", "—"),
                r.get("selected", "—"),
                num(r.get("train_error")),
                num(r.get("test_error")),
                ", ".join(r.get("selected_names", [])) or "—",
            ]
        )
    txt += table(
        ["method", "path points", "selected", "train error", "test error", "selected predictors"],
        rows,
        ["---", "---:", "---:", "---:", "---:", "---"],
    )
    txt += "\n\n" + b.figure(
        "compare_penalties",
        "Regularization paths of aL1/L2-NB, L1/L2-NB, L1-NB and fsNB on one data set",
    )
    return txt


def sec_speed(b: Build):
    txt = ""
    md = b.benchmarks / "RESULTS.md"
    if md.exists():
        txt += (
            "The block below is included verbatim from `benchmarks/RESULTS.md` (written by the "
            "benchmark scripts; not retyped):\n\n"
        )
        body = md.read_text().strip()
        body = re.sub(
            r"^(#+) ", lambda m: "#" * min(len(m.group(1)) + 2, 6) + " ", body, flags=re.M
        )
        txt += (
            "<!-- begin include: benchmarks/RESULTS.md -->\n"
            + body
            + "\n<!-- end include: benchmarks/RESULTS.md -->\n\n"
        )
    else:
        jsons = sorted(b.benchmarks.glob("*.json")) + sorted(b.benchmarks.glob("results/*.json"))
        if jsons:
            txt += (
                "Benchmark results files exist but the build has no renderer for them: "
                + ", ".join(f"`{p.name}`" for p in jsons)
                + ".\n\n"
            )
        else:
            txt += (
                f"**Benchmarks {NOT_RUN}**: `benchmarks/RESULTS.md` is absent (scripts "
                "`benchmarks/bench_*.py`).\n\n"
            )
        b.gaps.append(
            "Speed: `benchmarks/RESULTS.md` is absent, so the speed comparison with peer "
            "libraries is not in the paper."
        )
    rows = []
    t1 = b.load_silent("fsnb_table1")
    if t1:
        for s in SCENARIOS:
            r = t1.get("results", {}).get(s, {})
            for vname, v in r.get("fsnb_variants", {}).items():
                if "seconds" in v:
                    rows.append(
                        [
                            f"fsNB Table 1, {s}, {vname}: {t1.get('n_datasets', '?')} data sets "
                            "in one compiled sweep (compilation included)",
                            num(v["seconds"], 1),
                        ]
                    )
    es = b.load_silent("esann_table1")
    if es:
        for m, r in es.get("results", {}).items():
            if "seconds" in r:
                rows.append([f"ESANN, {m}", num(r["seconds"], 1)])
    st = b.load_silent("stream_tables")
    if st and "total_seconds" in st:
        # `--only PARTS` reruns store their own (partial) total as the latest; the whole script's
        # time is the last run that covered every part
        whole = [
            r
            for r in st.get("runs", [])
            if {"gaussian", "gkclass", "cpid", "offline"} <= set(r.get("parts", []))
            and r.get("total_seconds") is not None
        ]
        total = whole[-1]["total_seconds"] if whole else None
        if total is None and not st.get("runs"):  # a file from before the runs were recorded
            total = st["total_seconds"]
        if total is not None:
            rows.append(["Stream Tables 1–2, whole script", num(total, 1)])
    if rows:
        env = (t1 or es or st or {}).get("environment", {})
        txt += (
            f"Wall-clock times recorded by the experiments (seconds, including compilation; "
            f"{env.get('backend', '?')} backend, {env.get('cpu_count', '?')} CPUs, shared "
            "machine, so indicative only):\n\n" + table(["run", "seconds"], rows) + "\n\n"
        )
        if PUB.L1NB_TIMING_SECONDS:
            txt += (
                "Published timings for reference (L1NB paper, n = 1000, p = 100, from "
                "`paper/published.py`): "
                + ", ".join(f"{k} {num(v, 1)} s" for k, v in PUB.L1NB_TIMING_SECONDS.items())
                + '; ours on the same setting are in the benchmark results above ("Penalized '
                "NB beside the papers' timings\", `benchmarks/bench_penalized.py`).\n"
            )
    return txt


def sec_limitations(b: Build):
    items = list(dict.fromkeys(b.missing + b.gaps))
    cal = b.load_silent("calibrate_table1")
    if cal:
        items.append(
            "The synthetic generators of Table 1 leave constants open (Dirichlet "
            "concentrations, copy probability, noise); `calibrate_table1.json` documents "
            "the values chosen so that plain NB approaches the published NB error, which "
            "ties our NB column to the paper by construction."
        )
        cr = [g["nb_error"] for g in cal.get("grid", []) if g.get("scenario") == "CR"]
        if cr:
            items.append(
                "On CR (continuous redundant) the open constants are the source rule and the "
                f"'small noise'; over {len(cr)} settings NB's mean error stays within "
                f"{min(cr):.3f}–{max(cr):.3f}, below the published "
                f"{PUB.FSNB_TABLE1_ERROR['NB']['CR']:.3f}, so our CR NB column is lower than the "
                "paper's whatever the choice; the CR check 'fsNB at least 0.03 below NB' is "
                "read against that."
            )
    items.append(
        "Some of the papers' qualitative claims do not hold on our runs, and each section "
        "states ours beside theirs: fsNB lowest on Diabetes at every threshold (Section 6), "
        "fsNB significantly better than every other method (Section 8), L1-NB the most "
        "accurate on Soybean (Section 9), the error probability always improving the ESANN "
        "wrappers and the backward floating search guided by it being best (Section 11)."
    )
    items.append(
        "Discrete CPTs are Laplace-smoothed (Lidstone α = 1) in every experiment, including "
        "the figures of Sections 2–4, L1-NB's per-predictor posteriors and the filters' NB "
        "fits; the papers' equations (fsNB Eq. 4, L1NB Eqs. 6 and 11) write plain ML "
        "estimates, which give log 0 for a state never seen with a class."
    )
    items.append(
        "Published numbers not stored in a results file are transcribed by hand in "
        "`paper/published.py` from METHODS.md; they are checked by reading only."
    )
    return "\n".join(f"- {it}" for it in items)


def sec_abstract_status(b: Build, names):
    have = [n for n in names if n in b.loaded]
    quick = [n for n in have if b.loaded[n].get("quick") or b.loaded[n].get("mode") == "quick"]
    txt = (
        f"This build has results for {len(have)} of the {len(names)} planned experiments"
        + (f" ({len(quick)} from reduced `--quick` runs)" if quick else "")
        + "; the fMRI experiments are not reproduced because their data cannot be obtained "
        "offline, and the PASCAL streams are simulated."
    )
    t1 = b.loaded.get("fsnb_table1")
    if t1:
        cells = []
        for s in SCENARIOS:
            r = t1.get("results", {}).get(s, {}).get("t_eps", {})
            p, _ = _paper_value(t1.get("paper", {}), "fsNB", s, 0, PUB.FSNB_TABLE1_ERROR)
            if "fs_err" in r and p is not None:
                cells.append(abs(r["fs_err"]["mean"] - p))
        if cells:
            txt += (
                f" On the four synthetic scenarios of fsNB Table 1 our fsNB test errors lie within "
                # rounded up, so that "within" stays true (0.0102 -> 0.011, not 0.010)
                f"{math.ceil(max(cells) * 1000) / 1000:.3f} of the published ones."
            )
    return txt


def sec_provenance(b: Build):
    return "\n".join(f"- {provenance_line(n, d)}" for n, d in sorted(b.loaded.items())) or "- none"


# ------------------------------------------------------------------------------------------------
SECTIONS = [  # (placeholder in template.md, function building its block)
    ("fsnb_fig1_fig2", sec_fsnb_fig1_fig2),
    ("fsnb_fig3", sec_fsnb_fig3),
    ("fsnb_fig6", sec_fsnb_fig6),
    ("fsnb_table1", sec_fsnb_table1),
    ("fsnb_table2", sec_fsnb_table2),
    ("fsnb_table3", sec_fsnb_table3),
    ("stats_table4", sec_stats_table4),
    ("l1nb_soybean", sec_l1nb_soybean),
    ("l1nb_flags", sec_l1nb_flags),
    ("esann_table1", sec_esann_table1),
    ("stream_tables", sec_stream_tables),
    ("compare_penalties", sec_compare_penalties),
    ("speed", sec_speed),
]
EXPERIMENTS = [
    "fsnb_fig1_fig2",
    "fsnb_fig3",
    "fsnb_fig6",
    "fsnb_table1",
    "fsnb_table2",
    "stats_table4",
    "l1nb_soybean",
    "l1nb_flags",
    "esann_table1",
    "stream_tables",
    "compare_penalties",
]


def build(results: Path, out: Path, benchmarks: Path, template: Path, problems=None) -> Path:
    """Writes the paper; appends to `problems` (a list, if given) every missing / unreadable
    results file and missing figure."""
    b = Build(results, out, benchmarks)
    gen = out / "generated"
    gen.mkdir(parents=True, exist_ok=True)
    blocks = {}
    for key, fn in SECTIONS:
        try:
            blocks[key] = fn(b)
        except Exception as err:  # a malformed results file must not stop the build
            b.gaps.append(
                f"Section `{key}` could not be generated ({type(err).__name__}: {err}); "
                "its results file has an unexpected layout."
            )
            blocks[key] = f"**Could not be generated** ({type(err).__name__}: {err})."
    blocks["abstract_status"] = sec_abstract_status(b, EXPERIMENTS)
    blocks["limitations"] = sec_limitations(b)
    blocks["provenance"] = sec_provenance(b)
    for key, text in blocks.items():
        (gen / f"{key}.md").write_text(
            f"<!-- generated by paper/build.py; do not edit -->\n{text}\n"
        )
    text = template.read_text()
    text = re.sub(
        r"\{\{(\w+)\}\}",
        lambda m: blocks.get(m.group(1), f"**[missing block {m.group(1)}]**"),
        text,
    )
    paper = out / "paper.md"
    paper.write_text(text)
    if problems is not None:
        problems.extend(b.missing)
        problems.extend(
            f"missing figure: {line.strip()}"
            for line in text.splitlines()
            if f"Figure {NOT_RUN}" in line
        )
    pandoc = shutil.which("pandoc")
    if pandoc:
        try:
            subprocess.run(
                [pandoc, paper.name, "--standalone", "--mathml", "-o", "paper.html"],
                cwd=out,
                check=True,
                timeout=120,
            )
        except (subprocess.SubprocessError, OSError) as err:
            print(f"pandoc failed ({err}); Markdown only", file=sys.stderr)
    return paper


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    env = os.environ.get("JAXNB_RESULTS_DIR", "").strip()
    ap.add_argument(
        "--results", type=Path, default=Path(env) if env else ROOT / "experiments" / "results"
    )
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument("--benchmarks", type=Path, default=ROOT / "benchmarks")
    ap.add_argument("--template", type=Path, default=HERE / "template.md")
    ap.add_argument(
        "--require-all",
        action="store_true",
        help="exit 1 if a results file or figure is missing or unreadable",
    )
    args = ap.parse_args(argv)
    problems: list[str] = []
    paper = build(
        args.results.resolve(),
        args.out.resolve(),
        args.benchmarks.resolve(),
        args.template.resolve(),
        problems,
    )
    print(f"wrote {paper}")
    if args.require_all and problems:
        print("missing from the results folder:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
