"""fsNB paper, Table 1: NB, SNB and fsNB on the four synthetic scenarios (DI, CI, DR, CR).

Vidaurre, Bielza & Larrañaga (2011) §7.1: p = 20 (3 relevant, 7 partly redundant, 10 fully noisy),
J = 3, N = 300 training and 3000 test rows, 100 data sets per scenario. For every scenario all data
sets run in one vmapped, jit-compiled call: NB (Laplace-smoothed CPTs / MLE Gaussians), SNB (forward
selection on the training error, Langley & Sage stopping) and fsNB (ε = 0.025, v = 20, training error,
early stopping with patience 10, AIC selection, Eq. 14), for both step rules ("t_eps", the paper's
pseudocode, and "eps", its prose). Reports mean (± sd) test error, number of selected predictors and
number of fully noisy (V3) selected predictors, beside the published numbers. Only the NB, SNB and fsNB
columns are ours here; WNB, aL1/L2-NB and CFS+NB come from other scripts (not faked).

Usage: python experiments/fsnb_table1.py [--quick]
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxnb.datasets import make_table1_batch
from jaxnb.methods import selective as sel
from jaxnb.methods import stagewise as sw
from jaxnb.methods.nb import fit_stats
from jaxnb.params import fit_marginal, fit_mle

try:
    from experiments._common import fmt, print_table, save_json
except ImportError:  # run as a script from experiments/
    from _common import fmt, print_table, save_json

PAPER = {  # Table 1 of the fsNB paper: (error, selected, noisy selected)
    "NB": {"DI": (0.076, None, None), "CI": (0.082, None, None), "DR": (0.152, None, None),
           "CR": (0.132, None, None)},
    "SNB": {"DI": (0.080, 6.2, 0.6), "CI": (0.083, 6.0, 0.8), "DR": (0.076, 5.7, 0.4),
            "CR": (0.097, 5.5, 0.8)},
    "fsNB": {"DI": (0.077, 6.3, 0.3), "CI": (0.083, 5.3, 0.1), "DR": (0.070, 5.6, 0.2),
             "CR": (0.090, 6.6, 1.1)},
}
PAPER_EVALS = {"SNB": 125.10, "fsNB": 6732.25}
EPS, V, PATIENCE = 0.025, 20, 10


@partial(jax.jit, static_argnames=("n_states", "step_rule"))
def run_one(d, *, n_states, step_rule):
    """NB, SNB and fsNB on one data set (vmapped over data sets by the caller)."""
    ctr, vtr, ytr = d["codes_train"], d["values_train"], d["y_train"]
    cte, vte, yte = d["codes_test"], d["values_test"], d["y_test"]
    stats = fit_stats(ctr, vtr, ytr, n_states=n_states, n_classes=3)
    o1, o0 = fit_mle(stats, 1.0, 1e-9), fit_marginal(stats, 1.0, 1e-9)
    p = ctr.shape[1] + vtr.shape[1]
    Lte = sel.mle_contributions(o1, cte, vte)
    err = lambda S: jnp.mean(jnp.argmax(S, -1) != yte)
    nb_err = err(o1.log_prior[None, :] + Lte.sum(1))
    # SNB: forward, training error, stop when no strict improvement
    spath = sel.selective_path(sel.mle_contributions(o1, ctr, vtr), o1.log_prior, ytr,
                               direction="forward", criterion="error")
    smask = spath.mask[spath.n_steps]
    snb_err = err(o1.log_prior[None, :] + jnp.einsum("npc,p->nc", Lte, smask.astype(Lte.dtype)))
    # fsNB: Algorithm 1 + AIC selection
    fpath = sw.fsnb_path(o1, o0, ctr, vtr, ytr, epsilon=EPS, patience=PATIENCE, n_steps=V,
                         step_rule=step_rule, criterion="error",
                         max_iter=sw.default_max_iter(p, EPS), k_max=sw.n_units(EPS))
    idx = jnp.argmin(fpath.aic)  # rows after n_iter repeat the last model: argmin stays in range
    a = fpath.alpha[idx]
    Lf = sw.interpolated_contributions(o1, o0, a, cte, vte)
    fs_err = err(o1.log_prior[None, :] + Lf.sum(1))
    noisy = d["noisy"]
    return dict(
        nb_err=nb_err, snb_err=snb_err, snb_sel=smask.sum(), snb_noisy=(smask & noisy).sum(),
        snb_evals=spath.total_evaluations, fs_err=fs_err, fs_sel=(a > 0).sum(),
        fs_noisy=((a > 0) & noisy).sum(), fs_evals=fpath.n_evaluations[fpath.n_iter],
        fs_iter=fpath.n_iter, fs_selected_iter=idx)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 data sets per scenario")
    ap.add_argument("--n-datasets", type=int, default=None)
    args = ap.parse_args(argv)
    n_sets = args.n_datasets or (10 if args.quick else 100)
    results = {}
    for s_i, scenario in enumerate(("DI", "CI", "DR", "CR")):
        data, n_states = make_table1_batch(jax.random.PRNGKey(2011 + s_i), scenario, n_sets)
        for rule in ("t_eps", "eps"):
            t0 = time.perf_counter()
            out = jax.vmap(lambda d, rule=rule, n_states=n_states: run_one(
                d, n_states=n_states, step_rule=rule))(data)
            out = {k: np.asarray(v, dtype=float) for k, v in out.items()}
            dt = time.perf_counter() - t0
            results.setdefault(scenario, {})[rule] = {
                k: {"mean": float(v.mean()), "std": float(v.std(ddof=1)) if v.size > 1 else 0.0,
                    "values": v.tolist()} for k, v in out.items()}
            results[scenario][rule]["seconds"] = dt
            print(f"[{scenario} step_rule={rule}] {n_sets} data sets in {dt:.1f} s "
                  f"(incl. compilation): NB {out['nb_err'].mean():.3f}  SNB "
                  f"{out['snb_err'].mean():.3f}  fsNB {out['fs_err'].mean():.3f}", flush=True)

    rows = []
    for scenario, res in results.items():
        r = res["t_eps"]
        g = lambda k, r=r: (r[k]["mean"], r[k]["std"])
        rows.append([scenario, fmt(*g("nb_err")), PAPER["NB"][scenario][0],
                     fmt(*g("snb_err")), PAPER["SNB"][scenario][0],
                     fmt(*g("fs_err")), PAPER["fsNB"][scenario][0],
                     fmt(res["eps"]["fs_err"]["mean"])])
    print("\nTable 1 — mean test error (ours vs paper); fsNB ours with step_rule t_eps, and eps")
    print_table(["set", "NB", "paper", "SNB", "paper", "fsNB", "paper", "fsNB(eps)"], rows)
    rows = []
    for scenario, res in results.items():
        r = res["t_eps"]
        rows.append([scenario, fmt(r["snb_sel"]["mean"], None, 1), PAPER["SNB"][scenario][1],
                     fmt(r["fs_sel"]["mean"], None, 1), PAPER["fsNB"][scenario][1],
                     fmt(res["eps"]["fs_sel"]["mean"], None, 1),
                     fmt(r["snb_noisy"]["mean"], None, 1), PAPER["SNB"][scenario][2],
                     fmt(r["fs_noisy"]["mean"], None, 1), PAPER["fsNB"][scenario][2],
                     fmt(res["eps"]["fs_noisy"]["mean"], None, 1)])
    print("\nSelected predictors and fully-noisy selected predictors (ours vs paper)")
    print_table(["set", "SNB sel", "paper", "fsNB sel", "paper", "fsNB(eps)", "SNB noisy", "paper",
                 "fsNB noisy", "paper", "fsNB(eps)"], rows)
    ev = {s: (res["t_eps"]["snb_evals"]["mean"], res["t_eps"]["fs_evals"]["mean"],
              res["eps"]["fs_evals"]["mean"]) for s, res in results.items()}
    print("\nMean evaluations (paper: SNB 125.10, fsNB 6732.25):")
    for s, (a, b, c) in ev.items():
        print(f"  {s}: SNB {a:.1f}  fsNB {b:.1f}  fsNB(eps) {c:.1f}")
    save_json("fsnb_table1", {"n_datasets": n_sets, "epsilon": EPS, "v": V, "patience": PATIENCE,
                              "selection": "aic", "results": results, "paper": PAPER,
                              "paper_evaluations": PAPER_EVALS, "quick": args.quick})
    _plot(results)


def _plot(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        from experiments._common import figure_path
    except ImportError:
        from _common import figure_path
    fig, ax = plt.subplots(figsize=(7, 3.5))
    scen = list(results)
    x = np.arange(len(scen))
    for k, (key, label) in enumerate([("nb_err", "NB"), ("snb_err", "SNB"), ("fs_err", "fsNB")]):
        ax.bar(x + (k - 1) * 0.25, [results[s]["t_eps"][key]["mean"] for s in scen], 0.25,
               yerr=[results[s]["t_eps"][key]["std"] for s in scen], label=label, capsize=2)
        ax.scatter(x + (k - 1) * 0.25, [PAPER[label][s][0] for s in scen], marker="x", color="k",
                   zorder=3, label="paper" if k == 0 else None)
    ax.set_xticks(x, scen)
    ax.set_ylabel("mean test error")
    ax.legend()
    fig.tight_layout()
    fig.savefig(figure_path("fsnb_table1"), dpi=120)
    print(f"wrote experiments/results/{figure_path('fsnb_table1').name}")


if __name__ == "__main__":
    main()
