# %% [markdown]
# # Penalties side by side: aL1/L2-NB, L1/L2-NB, L1-NB and fsNB on Diabetes
#
# Four ways to move naive Bayes predictors between "removed" and "fully included", each with a
# whole path of models, on one data set: Diabetes with the class "response above its median"
# (fsNB Table 2, τ = Q2; N = 442, 10 continuous predictors).
#
# * L1/L2-NB and its adaptive version aL1/L2-NB (`GroupLassoNB`, fsNB Eqs. 8–9): a group-lasso
#   penalty on each predictor's distance ‖Ω_i − Ω_i⁽⁰⁾‖₂ from its removed parameters, over a
#   geometric λ grid with warm starts (`path_`). We also re-solve the same grid with the functional
#   core to plot the distances themselves, relative to the MLE's (0 removed, 1 unpenalized).
# * L1-NB (`L1NB`, L1NB Eq. 15): the bounded-LARS path of the weights β of the one-predictor
#   posteriors (`coef_path_`, one row per breakpoint).
# * fsNB (`StagewiseNB`, fsNB Algorithm 1): the path of the interpolation coefficients α
#   (`path_["alpha"]`, one row per iteration).
#
# Each model is selected by AIC along its own path and scored on a stratified held-out quarter.
# Writes experiments/results/compare_penalties.png and compare_penalties.json.
#
# Usage: python experiments/compare_penalties.py [--quick]

# %%
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import figure_path, save_json  # noqa: E402

from jaxnb.datasets import load_diabetes  # noqa: E402
from jaxnb.estimators_penalized import L1NB, GroupLassoNB  # noqa: E402
from jaxnb.estimators_search import StagewiseNB  # noqa: E402
from jaxnb.methods import group_lasso as gl  # noqa: E402
from jaxnb.model_selection import stratified_folds  # noqa: E402

NAMES = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
SEED = 0

ap = argparse.ArgumentParser(description="Compare the penalty paths of group-lasso NB, L1-NB, fsNB")
ap.add_argument("--quick", action="store_true", help="coarser grids and shorter fsNB path")
args = ap.parse_args()
n_penalties = 8 if args.quick else 30
fs_max_iter = 60 if args.quick else None
t_start = time.perf_counter()

# %% [markdown]
# ## Data: Diabetes, class = response above the median; a stratified quarter held out

# %%
X, y = load_diabetes(quartile=2)
folds = stratified_folds(y, 4, SEED)
test = folds == 0
Xtr, ytr, Xte, yte = X[~test], y[~test], X[test], y[test]
print(
    f"Diabetes: {len(ytr)} training rows, {len(yte)} test rows, {X.shape[1]} predictors, "
    f"class balance {ytr.mean():.2f}"
)

# %% [markdown]
# ## Group-lasso paths (adaptive and plain)


# %%
def group_distances(model):
    """(s, p) relative distance ‖Ω_i(λ) − Ω_i⁽⁰⁾‖₂ / ‖Ω_i⁽¹⁾ − Ω_i⁽⁰⁾‖₂ along the λ grid.

    Diabetes is all continuous, so Ω_i is (μ_i·, σ_i·). Dividing by the MLE's distance removes the
    predictor's units and puts the curves on fsNB's α scale (0 removed, 1 fully included).
    """
    problem = model.problem_
    path = gl.group_lasso_path(
        problem, jnp.asarray(model.path_["penalties"]), continuous_scale=model.continuous_scale
    )

    def dist(mean, std):
        dm, ds = mean - problem.center.mean, std - problem.center.std
        return jnp.sqrt(jnp.sum(dm * dm, axis=-2) + jnp.sum(ds * ds, axis=-2))

    full = dist(problem.mle.mean, problem.mle.std)
    return np.asarray(dist(path.params.mean, path.params.std) / jnp.maximum(full, 1e-12))


gl_models, gl_dist = {}, {}
for name, adaptive in (("aL1/L2-NB", True), ("L1/L2-NB", False)):
    m = GroupLassoNB(adaptive=adaptive, n_penalties=n_penalties, selection="aic").fit(Xtr, ytr)
    gl_models[name], gl_dist[name] = m, group_distances(m)
    print(
        f"{name}: λ_max = {m.lambda_max_:.4g}, selected λ = {m.penalty_:.4g}, "
        f"{m.n_selected_} predictors, test error {np.mean(m.predict(Xte) != yte):.3f}"
    )

# %% [markdown]
# ## L1-NB coefficient path and fsNB α path

# %%
l1 = L1NB(selection="aic").fit(Xtr, ytr)
print(
    f"L1-NB: {len(l1.s_path_)} breakpoints, {l1.n_selected_} predictors selected, "
    f"test error {np.mean(l1.predict(Xte) != yte):.3f}"
)
fs = StagewiseNB(selection="aic", max_iter=fs_max_iter).fit(Xtr, ytr)
print(
    f"fsNB: {fs.n_iter_} iterations, {fs.n_evaluations_} evaluations, selected iteration "
    f"{fs.selected_iter_}, test error {np.mean(fs.predict(Xte) != yte):.3f}"
)

# %% [markdown]
# ## Plot the four paths

# %%
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
colors = plt.cm.tab10(np.arange(len(NAMES)))
for ax, name in zip(axes[0], gl_models, strict=True):
    m, dist = gl_models[name], gl_dist[name]
    x = m.path_["penalties"] / m.lambda_max_
    for i in range(dist.shape[1]):
        ax.plot(x, dist[:, i], color=colors[i], label=NAMES[i])
    ax.axvline(m.penalty_ / m.lambda_max_, color="k", ls=":", lw=1)
    ax.set_xscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("λ / λ_max")
    ax.set_ylabel("‖Ω_i − Ω_i⁽⁰⁾‖ / ‖Ω_i⁽¹⁾ − Ω_i⁽⁰⁾‖")
    ax.set_title(f"{name} (AIC choice dotted)")
ax = axes[1, 0]
for i in range(l1.coef_path_.shape[1]):
    ax.plot(l1.s_path_, l1.coef_path_[:, i], marker=".", color=colors[i], label=NAMES[i])
ax.axvline(l1.s_path_[l1.selected_index_], color="k", ls=":", lw=1)
ax.set_xlabel("budget s = Σβ")
ax.set_ylabel("β_i")
ax.set_title("L1-NB (bounded LARS)")
ax = axes[1, 1]
alpha_path = fs.path_["alpha"]
for i in range(alpha_path.shape[1]):
    ax.plot(np.arange(len(alpha_path)), alpha_path[:, i], color=colors[i], label=NAMES[i])
ax.axvline(fs.selected_iter_, color="k", ls=":", lw=1)
ax.set_xlabel("fsNB iteration")
ax.set_ylabel("α_i")
ax.set_title("fsNB (ε = 0.025, v = 20)")
axes[0, 0].legend(fontsize=7, ncol=2)
fig.suptitle("Diabetes (class: response above the median): four regularization paths")
fig.tight_layout()
fig.savefig(figure_path("compare_penalties"), dpi=110)
print(f"wrote {figure_path('compare_penalties')}")

# %% [markdown]
# ## Summary JSON


# %%
def summary(model, support, path_points):
    sel = [NAMES[i] for i in np.flatnonzero(support)]
    return {
        "path_points": int(path_points),
        "selected": len(sel),
        "selected_names": sel,
        "train_error": float(np.mean(model.predict(Xtr) != ytr)),
        "test_error": float(np.mean(model.predict(Xte) != yte)),
    }


methods = {
    name: summary(m, m.support_, len(m.path_["penalties"]))
    | {
        "penalty": m.penalty_,
        "lambda_max": m.lambda_max_,
        "n_active_path": m.path_["n_active"].tolist(),
    }
    for name, m in gl_models.items()
}
methods["L1-NB"] = summary(l1, l1.coef_ > 0, len(l1.s_path_)) | {
    "coef": l1.coef_.tolist(),
    "s_selected": float(l1.s_path_[l1.selected_index_]),
}
methods["fsNB"] = summary(fs, fs.alpha_ > 0, fs.n_iter_ + 1) | {
    "alpha": fs.alpha_.tolist(),
    "evaluations": fs.n_evaluations_,
    "selected_iter": int(fs.selected_iter_),
}
save_json(
    "compare_penalties",
    {
        "dataset": "Diabetes, class = response above the median (fsNB Table 2, τ = Q2)",
        "n_train": int(len(ytr)),
        "n_test": int(len(yte)),
        "predictors": NAMES,
        "selection": "AIC along each path",
        "n_penalties": n_penalties,
        "methods": methods,
        "seconds": time.perf_counter() - t_start,
        "quick": bool(args.quick),
    },
)
for name, r in methods.items():
    print(
        f"{name:<10} {r['selected']:>2} predictors ({', '.join(r['selected_names'])}), "
        f"test error {r['test_error']:.3f}"
    )
