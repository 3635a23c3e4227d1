"""L1NB paper §6.3 (Table 2): Flags with religion as a 6-class response, 10-fold CV.

Vidaurre, Bielza & Larrañaga (2013): UCI Flags (N = 194, mixed numeric and categorical features),
religion as the class with six values of proportions (0.16, 0.09, 0.18, 0.27, 0.20, 0.10); L1-NB,
SNB, NB + FSS and WNB + FSS, 10-fold CV; FSS by conditional mutual information (Fleuret's CMIM) with
one fourth of each training part reserved for choosing the number of preselected predictors.
Published accuracy (selected predictors): L1-NB .49 (3.8), SNB .50 (12.9), NB+FSS .21 (5.5),
WNB+FSS .30 (5.5).

Class merge. UCI codes religion 0..7 with counts 40, 60, 36, 8, 4, 27, 15, 4 (Catholic, Other
Christian, Muslim, Buddhist, Hindu, Ethnic, Marxist, Others). No merge of the eight codes into six
classes (we checked all 266 set partitions, also allowing codes to be dropped) reproduces the
published proportions: code 1 alone is 60/194 = 0.309 > 0.27, the largest published share, so every
merge is off by at least 0.039 in some class. Among the merges at that minimum we take the one that
joins the three small Asian/other codes, {3 Buddhist, 4 Hindu, 7 Others} (16 rows), giving sorted
proportions (.077, .082, .139, .186, .206, .309) against the paper's sorted (.09, .10, .16, .18,
.20, .27).

Our reading of the rest (constants below):

* Predictors: the 28 features of `load_flags` (10 numeric as Gaussians, 18 nominal/boolean as
  categorical), no discretization, as the paper says.
* FSS: CMIM ranking (`filters.cmim`) from `filters.information_matrices` on the 3/4 part of each
  training fold, numeric predictors binned into 5 equal-frequency bins for the information measures
  only; the number k of top-ranked predictors maximizes the accuracy on the reserved 1/4 (smallest k
  on ties) of NB (resp. WNB) fitted on the 3/4; the final NB (WNB) is refitted on the whole training
  fold with those k predictors.
* WNB: Ferreira weights (numeric predictors: 5 equal-frequency bins for the weight).
* L1-NB: bounded LARS ("paper" variant), AIC selection with the classifier likelihood ("L1-NB") and
  the Gaussian least-squares likelihood ("L1-NB(gAIC)"; the paper does not say which); SNB:
  forward selection on the training error.
* Laplace-smoothed CPTs and Gaussian ML variances (floor 1e-9 of the pooled variance).
* Folds are 0/1 sample weights; all folds run in one vmapped call.

Usage: python experiments/l1nb_flags.py [--quick]
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxnb.data import FeatureEncoder
from jaxnb.datasets import load_flags
from jaxnb.likelihood import log_contributions
from jaxnb.methods import l1nb
from jaxnb.methods import selective as sel
from jaxnb.methods.filters import cmim, equal_frequency_codes, information_matrices
from jaxnb.methods.nb import fit_stats
from jaxnb.methods.weighted import ferreira_weights
from jaxnb.model_selection import stratified_folds
from jaxnb.params import fit_mle

try:
    from experiments._common import figure_path, print_table, save_json
except ImportError:  # run as a script from experiments/
    from _common import figure_path, print_table, save_json

RELIGION_MERGE = {0: 0, 1: 1, 2: 2, 3: 3, 4: 3, 5: 4, 6: 5, 7: 3}
CLASS_NAMES = (
    "Catholic",
    "Other Christian",
    "Muslim",
    "Buddhist+Hindu+Others",
    "Ethnic",
    "Marxist",
)
PAPER_PROPORTIONS = (0.16, 0.09, 0.18, 0.27, 0.20, 0.10)
PAPER = {
    "L1-NB": (0.49, 3.8),
    "L1-NB(gAIC)": (0.49, 3.8),
    "SNB": (0.50, 12.9),
    "NB+FSS": (0.21, 5.5),
    "WNB+FSS": (0.30, 5.5),
}
METHODS = tuple(PAPER)
N_FOLDS, N_BINS, SEED = 10, 5, 2013


def _fit(codes, values, y, w, n_states, n_classes):
    stats = fit_stats(codes, values, y, w, n_states=n_states, n_classes=n_classes)
    omega = fit_mle(stats, 1.0, 1e-9)
    return omega, log_contributions(omega, codes, values)


@partial(jax.jit, static_argnames=("n_states", "n_classes"))
def run_fold(codes, values, y, train_w, test_w, sub_w, val_w, *, n_states, n_classes):
    dtype = values.dtype
    p = codes.shape[1] + values.shape[1]
    acc = lambda S, w: jnp.sum(w * (jnp.argmax(S, -1) == y)) / jnp.sum(w)
    omega, L = _fit(codes, values, y, train_w, n_states, n_classes)
    combine = lambda om, LL, wts: om.log_prior[None, :] + jnp.einsum("npc,p->nc", LL, wts)
    out = {}
    # L1-NB, AIC
    P = jax.nn.softmax(L + omega.log_prior[None, None, :], axis=-1)
    B = jnp.take_along_axis(P, y[:, None, None], axis=2)[:, :, 0]
    path = l1nb.bounded_lars_path(B, 3 * p, "paper", weight=train_w)
    for name, lik in (("L1-NB", "classifier"), ("L1-NB(gAIC)", "gaussian")):
        beta = l1nb.aic_select(path, B, likelihood=lik, weight=train_w).beta
        out[name] = (acc(jnp.einsum("npc,p->nc", P, beta), test_w), jnp.sum(beta > 0))
    # SNB, forward on the training error
    spath = sel.selective_path(
        L, omega.log_prior, y, train_w, direction="forward", criterion="error"
    )
    smask = spath.mask[spath.n_steps].astype(dtype)
    out["SNB"] = (acc(combine(omega, L, smask), test_w), jnp.sum(smask))
    # FSS: CMIM ranking on the 3/4 part, k chosen on the reserved 1/4
    bins = equal_frequency_codes(values, N_BINS, sub_w)
    all_codes = jnp.concatenate([codes, bins], axis=1)
    states = tuple(n_states) + (N_BINS,) * values.shape[1]
    info = information_matrices(all_codes, y, states, n_classes, sub_w)
    order = cmim(info.relevance, info.conditional_relevance, p)
    rank = jnp.zeros((p,), jnp.int32).at[order].set(jnp.arange(p, dtype=jnp.int32))
    masks = (rank[None, :] < jnp.arange(1, p + 1)[:, None]).astype(dtype)  # row k-1: top k
    om_sub, L_sub = _fit(codes, values, y, sub_w, n_states, n_classes)
    w_sub = ferreira_weights(
        codes, values, y, sub_w, n_states=n_states, n_classes=n_classes, n_bins=N_BINS
    )
    w_tr = ferreira_weights(
        codes, values, y, train_w, n_states=n_states, n_classes=n_classes, n_bins=N_BINS
    )
    for name, ws, wt in (("NB+FSS", 1.0, 1.0), ("WNB+FSS", w_sub, w_tr)):
        val_acc = jax.vmap(lambda mk, ws=ws: acc(combine(om_sub, L_sub, mk * ws), val_w))(masks)
        k = jnp.argmax(val_acc)  # first maximum: smallest k
        out[name] = (acc(combine(omega, L, masks[k] * wt), test_w), k + 1.0)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 folds instead of 10")
    args = ap.parse_args(argv)
    X, y_raw, names, numeric = load_flags()
    y = np.array([RELIGION_MERGE[int(v)] for v in y_raw], np.int32)
    props = np.bincount(y) / len(y)
    print(
        "religion classes after the merge {3,4,7}:",
        {n: round(float(q), 3) for n, q in zip(CLASS_NAMES, props, strict=True)},
    )
    print("paper proportions:", PAPER_PROPORTIONS, flush=True)
    enc = FeatureEncoder(discrete="auto").fit(X)
    codes, values = enc.transform(X, dtype=np.float32, fit=True)
    n_states = tuple(int(m) for m in enc.n_states_)
    n_folds = 3 if args.quick else N_FOLDS
    folds = stratified_folds(y, n_folds, SEED)
    test_w = (folds[None, :] == np.arange(n_folds)[:, None]).astype(np.float32)
    train_w = 1.0 - test_w
    sub_w, val_w = np.zeros_like(train_w), np.zeros_like(train_w)
    rng = np.random.default_rng(SEED)
    for k in range(n_folds):  # reserve a stratified quarter of each training part
        for c in np.unique(y):
            idx = np.flatnonzero((train_w[k] > 0) & (y == c))
            rng.shuffle(idx)
            n_val = int(round(len(idx) / 4))
            val_w[k, idx[:n_val]] = 1.0
            sub_w[k, idx[n_val:]] = 1.0
    print(
        f"{codes.shape[1]} discrete + {values.shape[1]} numeric predictors, {n_folds}-fold CV",
        flush=True,
    )
    t0 = time.perf_counter()
    run = jax.jit(
        jax.vmap(
            partial(run_fold, n_states=n_states, n_classes=6),
            in_axes=(None, None, None, 0, 0, 0, 0),
        )
    )
    out = run(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(train_w),
        jnp.asarray(test_w),
        jnp.asarray(sub_w),
        jnp.asarray(val_w),
    )
    out = {k: (np.asarray(a), np.asarray(s)) for k, (a, s) in out.items()}
    print(f"all folds in {time.perf_counter() - t0:.1f} s (incl. compilation)", flush=True)
    rows, results = [], {}
    for m in METHODS:
        a, s = out[m]
        results[m] = {
            "accuracy": float(a.mean()),
            "accuracy_std": float(a.std(ddof=1)),
            "selected": float(s.mean()),
            "selected_std": float(s.std(ddof=1)),
            "per_fold_accuracy": a.tolist(),
            "per_fold_selected": s.tolist(),
        }
        rows.append(
            [
                m,
                f"{a.mean():.2f} (±{a.std(ddof=1):.2f})",
                PAPER[m][0],
                f"{s.mean():.1f} (±{s.std(ddof=1):.1f})",
                PAPER[m][1],
            ]
        )
    print(f"\nFlags, religion (6 classes), {n_folds}-fold CV: ours vs paper (Table 2)")
    print_table(["method", "accuracy", "paper", "# selected", "paper"], rows)
    save_json(
        "l1nb_flags",
        {
            "merge": RELIGION_MERGE,
            "class_names": CLASS_NAMES,
            "proportions": props,
            "paper_proportions": PAPER_PROPORTIONS,
            "n_folds": n_folds,
            "seed": SEED,
            "results": results,
            "paper": PAPER,
            "quick": args.quick,
        },
    )
    _plot(results)


def _plot(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    x = np.arange(len(METHODS))
    for ax, key, idx, label in (
        (axes[0], "accuracy", 0, "accuracy"),
        (axes[1], "selected", 1, "# selected"),
    ):
        ax.bar(
            x,
            [results[m][key] for m in METHODS],
            0.6,
            yerr=[results[m][f"{key}_std"] for m in METHODS],
            capsize=2,
            label="ours",
        )
        ax.scatter(
            x, [PAPER[m][idx] for m in METHODS], marker="x", color="k", zorder=3, label="paper"
        )
        ax.set_xticks(x, METHODS, fontsize=8)
        ax.set_ylabel(label)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(figure_path("l1nb_flags"), dpi=110)
    print(f"wrote {figure_path('l1nb_flags')}")


if __name__ == "__main__":
    main()
