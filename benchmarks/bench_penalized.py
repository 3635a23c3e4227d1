"""Speed of the penalized NB methods after compilation, beside the papers' timings.

1. Full L1-NB (L1NB paper §5: "around 7.1 seconds for a data set with n = 1000, p = 100 and four
   non-spurious predictors"): NB statistics, Ω̂, B, the whole bounded-LARS path and AIC selection in
   one jitted call. Data: 3 classes, 4 informative 3-state predictors, 96 irrelevant ones.
   Target < 0.2 s. For reference on the same data, the paper's other two timings: selective NB
   (forward, training error; paper 140.0 s) and a CMIM prefilter ranking all predictors (paper
   19.1 s).
2. A 20-point aL1/L2-NB path (fsNB §3.2) on one Table-1 DR data set (N = 300, p = 20, J = 3):
   problem, λ grid and path in one jitted call, with the default exact group-by-group solver and
   with ``solver="fista"`` (FISTA over all groups, warm starts; the default before
   2026-11-22); the two objectives are printed. Target < 2 s (no published timing).
3. The default estimator `GroupLassoNB(adaptive=True).fit` on the same data in float32 (JAX's
   default precision, as in experiments/fsnb_table1.py): statistics, path, AIC scores, selection.
   Target < 1 s. Before the scale-aware stopping tests (`jaxnb.optim`) this took ~50 s: no float32
   solve could meet the float64-style tolerances, so every Dykstra prox and FISTA solve ran to its
   cap.
4. The default `GroupLassoNB(adaptive=True, n_penalties=30).fit` on continuous data in float32:
   Diabetes, class = response above the median, the training three quarters of
   experiments/compare_penalties.py. Printed beside it: the solver steps along the path and the
   largest difference of its test-set probabilities from a float64 fit at the same penalty with
   ``tol=1e-12``. Target < 1 s. Before the preconditioned solver (2026-11-27) FISTA took one
   Euclidean step for all Gaussian parameters, set by the most curved one.

Timings are medians over ``--repeats`` runs after one compiling run; they depend on the machine's
load (say so when reporting).

Usage: python benchmarks/bench_penalized.py [--quick] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import time

import jax

jax.config.update("jax_enable_x64", True)  # LARS solves and FISTA tolerances assume float64

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxnb.datasets import load_diabetes, make_table1  # noqa: E402
from jaxnb.estimators_penalized import GroupLassoNB  # noqa: E402
from jaxnb.likelihood import log_contributions  # noqa: E402
from jaxnb.methods import group_lasso as gl  # noqa: E402
from jaxnb.methods import l1nb  # noqa: E402
from jaxnb.methods import selective as sel  # noqa: E402
from jaxnb.methods.filters import cmim, information_matrices  # noqa: E402
from jaxnb.methods.nb import fit_stats  # noqa: E402
from jaxnb.model_selection import stratified_folds  # noqa: E402
from jaxnb.params import fit_mle  # noqa: E402

PAPER_SECONDS = {
    "L1-NB path": 7.1,
    "SNB": 140.0,
    "CMIM prefilter": 19.1,
    "aL1/L2-NB path": None,
    "aL1/L2-NB path FISTA": None,
    "aL1/L2-NB fit f32": None,
    "aL1/L2-NB Diabetes f32": None,
}
TARGET_SECONDS = {
    "L1-NB path": 0.2,
    "aL1/L2-NB path": 2.0,
    "aL1/L2-NB path FISTA": 2.0,
    "aL1/L2-NB fit f32": 1.0,
    "aL1/L2-NB Diabetes f32": 1.0,
}


def _time(fn, repeats):
    jax.block_until_ready(fn())  # compile
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), float(np.min(ts))


def l1nb_data(seed=0, n=1000, p=100, n_informative=4, c=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    codes = rng.integers(0, 3, (n, p))
    for i in range(n_informative):
        strength = 0.3 + 0.1 * i
        codes[:, i] = np.where(rng.random(n) < strength, y, codes[:, i])
    return jnp.asarray(codes, jnp.int32), jnp.asarray(y, jnp.int32)


def _nb(codes, y, n_states, c):
    values = jnp.zeros((codes.shape[0], 0))
    omega = fit_mle(fit_stats(codes, values, y, n_states=n_states, n_classes=c))
    return omega, log_contributions(omega, codes, values)


def make_l1nb(n_states, c):
    @jax.jit
    def run(codes, y):
        omega, L = _nb(codes, y, n_states, c)
        P = jax.nn.softmax(L + omega.log_prior[None, None, :], axis=-1)
        B = jnp.take_along_axis(P, y[:, None, None], axis=2)[:, :, 0]
        path = l1nb.bounded_lars_path(B, 3 * codes.shape[1], "paper")
        return path, l1nb.aic_select(path, B)

    return run


def make_snb(n_states, c):
    @jax.jit
    def run(codes, y):
        omega, L = _nb(codes, y, n_states, c)
        return sel.selective_path(L, omega.log_prior, y, direction="forward", criterion="error")

    return run


def make_cmim(n_states, c):
    @jax.jit
    def run(codes, y):
        info = information_matrices(codes, y, n_states, c)
        return cmim(info.relevance, info.conditional_relevance, codes.shape[1])

    return run


def make_group_lasso(n_states, c, n_penalties=20, solver="exact"):
    @jax.jit
    def run(codes, y):
        stats = fit_stats(codes, jnp.zeros((codes.shape[0], 0)), y, n_states=n_states, n_classes=c)
        problem = gl.make_group_lasso_problem(stats, alpha=1.0, adaptive=True)
        pens = gl.penalty_grid(problem, n_penalties)
        return gl.group_lasso_path(problem, pens, tol=1e-7, solver=solver)

    return run


def time_estimator_float32(codes, y, repeats):
    """Default `GroupLassoNB(adaptive=True)` fit in float32, timed by `_time` (a fit returns NumPy
    arrays, so it needs no sync), and the fitted model."""
    with jax.enable_x64(False):
        X, yy = np.asarray(codes, np.int32), np.asarray(y, np.int32)
        fit = lambda: GroupLassoNB(adaptive=True, n_states=[3] * X.shape[1]).fit(X, yy)
        return _time(fit, repeats), fit()


def time_continuous_float32(repeats):
    """Item 4: the default continuous fit in float32, and its distance from a float64 reference."""
    X, y = load_diabetes(quartile=2)
    test = stratified_folds(y, 4, 0) == 0
    Xtr, ytr, Xte = X[~test], y[~test], X[test]
    with jax.enable_x64(False):
        fit = lambda: GroupLassoNB(adaptive=True, n_penalties=30).fit(Xtr, ytr)
        timing, m = _time(fit, repeats), fit()
        p32 = m.predict_proba(Xte)
    ref = GroupLassoNB(
        adaptive=True, selection="fixed", penalty=float(m.penalty_), tol=1e-12, max_steps=100000
    ).fit(np.asarray(Xtr, np.float64), ytr)
    gap = float(np.abs(np.asarray(p32, np.float64) - ref.predict_proba(Xte)).max())
    return timing, m, gap


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--repeats", type=int, default=None)
    args = ap.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 10)
    print(
        f"backend {jax.default_backend()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f}; medians of {repeats} runs after compilation",
        flush=True,
    )
    rows = {}
    codes, y = l1nb_data()
    states = (3,) * codes.shape[1]
    run = make_l1nb(states, 3)
    rows["L1-NB path"] = _time(lambda: run(codes, y), repeats)
    path, chosen = run(codes, y)
    print(
        f"L1-NB n=1000 p=100: {int(path.n_steps)} LARS segments, converged "
        f"{bool(path.converged)}, AIC keeps {int((chosen.beta > 0).sum())} predictors "
        f"({np.flatnonzero(np.asarray(chosen.beta) > 0).tolist()})",
        flush=True,
    )
    run = make_snb(states, 3)
    rows["SNB"] = _time(lambda: run(codes, y), max(1, repeats // 3))
    run = make_cmim(states, 3)
    rows["CMIM prefilter"] = _time(lambda: run(codes, y), max(1, repeats // 3))
    d = make_table1(jax.random.PRNGKey(7), "DR", 300, 10)
    run = make_group_lasso((3,) * 20, 3)
    rows["aL1/L2-NB path"] = _time(lambda: run(d["codes_train"], d["y_train"]), repeats)
    gpath = run(d["codes_train"], d["y_train"])
    print(
        f"aL1/L2-NB DR path: n_active {np.asarray(gpath.n_active).tolist()}, all converged "
        f"{bool(np.asarray(gpath.info.converged).all())}, Newton steps "
        f"{int(np.asarray(gpath.info.num_steps).sum())}",
        flush=True,
    )
    run_f = make_group_lasso((3,) * 20, 3, solver="fista")
    rows["aL1/L2-NB path FISTA"] = _time(lambda: run_f(d["codes_train"], d["y_train"]), repeats)
    fpath = run_f(d["codes_train"], d["y_train"])
    gap = np.asarray(gpath.objective) - np.asarray(fpath.objective)
    print(
        f"  solver='fista': same active sets {bool(np.all(gpath.active == fpath.active))}, "
        f"FISTA steps {int(np.asarray(fpath.info.num_steps).sum())}; objective exact - fista: "
        f"max {gap.max():.1e}, min {gap.min():.1e} (rounding level); speed-up "
        f"{rows['aL1/L2-NB path FISTA'][0] / rows['aL1/L2-NB path'][0]:.1f}x",
        flush=True,
    )
    rows["aL1/L2-NB fit f32"], m = time_estimator_float32(d["codes_train"], d["y_train"], repeats)
    print(
        f"aL1/L2-NB default fit (float32): all converged {bool(m.path_['converged'].all())}, "
        f"solver steps {int(m.path_['n_steps'].sum())}, selected {m.n_selected_} predictors",
        flush=True,
    )
    rows["aL1/L2-NB Diabetes f32"], m, gap = time_continuous_float32(repeats)
    print(
        f"aL1/L2-NB Diabetes (continuous, float32): all converged "
        f"{bool(m.path_['converged'].all())}, solver steps {int(m.path_['n_steps'].sum())} "
        f"(most at one penalty {int(m.path_['n_steps'].max())}), selected "
        f"{m.n_selected_} predictors; test probabilities vs float64 tol 1e-12: max |diff| "
        f"{gap:.1e}",
        flush=True,
    )

    print(
        f"\n{'task':<22} {'median s':>10} {'min s':>9} {'target s':>9} {'paper s':>8} "
        f"{'paper/ours':>10}"
    )
    for name, (med, best) in rows.items():
        paper, target = PAPER_SECONDS[name], TARGET_SECONDS.get(name)
        ratio = f"{paper / med:10.0f}x" if paper else f"{'n/a':>11}"
        print(
            f"{name:<22} {med:10.4f} {best:9.4f} {target if target else '-':>9} "
            f"{paper if paper else 'n/a':>8} {ratio}"
        )


if __name__ == "__main__":
    main()
