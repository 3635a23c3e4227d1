"""The fsNB paper's Table-1 grid through `jaxnb.sweep` vs looping the estimators in Python.

Grid: 4 scenarios (DI, CI, DR, CR) x 100 data sets (N = 300 training, 3000 test rows, p = 20,
J = 3; `jaxnb.datasets.make_table1_batch`) x the Table-1 methods with the settings of
experiments/fsnb_table1.py (which runs on the same sweep):

* NB, alpha = 1                     loop: ``NaiveBayes(alpha=1).fit(X, y)`` per data set
* SNB (Langley & Sage forward search on the training error, stop at the first non-improving
  step)                             loop: ``SelectiveNB(direction="forward", criterion="error")``;
                                    compared: test error and the number of selected predictors
* WNB (Ferreira weights, 5 equal-frequency bins for continuous predictors)
                                    loop: ``WeightedNB(scheme="ferreira")``; compared: test error
* aL1/L2-NB (adaptive group lasso), the 20-point geometric penalty grid lambda_max ... 1e-3
  lambda_max of each data set (warm-started path, `GroupLassoNB`'s defaults)
                                    loop: ``GroupLassoNB(n_penalties=20, selection="aic").fit``;
                                    compared: the number of active predictors at every grid
                                    point and the test error of the AIC-selected model
* fsNB (eps = 0.025, v = 20, patience 6, AIC selection)
                                    loop: ``StagewiseNB(...).fit(X, y)``; compared: test error
                                    and the number of selected predictors

* CFS+NB (Hall's best-first CFS search, compiled as one loop, then NB on the subset)
                                    loop: ``FilterNB(filter="cfs")``; compared: test error and
                                    the number of selected predictors

(Runs recorded in benchmarks/RESULTS.md before 2026-11-22 used a smaller grid: NB alpha in
{0.5, 1, 2}, fsNB patience 10, an 8-point group-lasso path, no SNB and WNB; the runs
recorded before the section "with CFS+NB in the grid" had no CFS+NB, whose search then kept its
open list on the host.)

Both sides run in float64 by default (so "identical" can be asserted exactly: test errors equal
to 1e-12, selected-predictor counts equal); ``--dtype float32`` runs both sides in JAX's default
precision instead, the dtype experiments/fsnb_table1.py runs in (then test errors are compared to
1e-6, which still means equal error counts on 3000 test rows). Both are timed warm (each compiled
once on one data set before the clock starts); the cold times (compilation included) are printed
too. Target: the sweep is >= 5x faster than the loop over the whole grid.

On CPU the process exposes one XLA device per core (``--cpu-devices``, default all cores, set via
XLA_FLAGS before JAX starts), so the sweep splits the data sets over the cores; the loop runs one
fit at a time, as a user would.

Usage: python benchmarks/bench_sweep.py [--datasets 100] [--quick]
                                        [--methods nb,fsnb,group_lasso,snb,wnb,cfs]
                                        [--cpu-devices N] [--dtype float64|float32]
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _early_option(argv, flag, default):
    """The value of ``flag`` on the command line (last one wins), read before argparse runs:
    --cpu-devices and --dtype must act before JAX initializes its backends / builds arrays."""
    value = default
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith(flag + "="):
            value = a.split("=", 1)[1]
    return value


def _early_cpu_devices(argv):
    n = int(_early_option(argv, "--cpu-devices", os.cpu_count() or 1))
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags and n > 1:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


if __name__ == "__main__":
    _early_cpu_devices(sys.argv[1:])

import jax  # noqa: E402

if _early_option(sys.argv[1:], "--dtype", "float64") != "float32":
    jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from jaxnb import NaiveBayes  # noqa: E402
from jaxnb.datasets import make_table1_batch  # noqa: E402
from jaxnb.methods.group_lasso import penalty_fractions  # noqa: E402
from jaxnb.sweep import available_sweep_methods, sweep_methods  # noqa: E402

SCENARIOS = ("DI", "CI", "DR", "CR")
ALPHAS = [1.0]
FSNB = {"epsilon": [0.025], "patience": [6]}
GL_N, GL_RATIO = 20, 1e-3
# the estimator's grid (group_lasso.penalty_grid) as fractions of lambda_max: identical penalties
GL_FRACTIONS = np.asarray(penalty_fractions(GL_N, GL_RATIO))
GL_OPTIONS = {  # test rows scored at the AIC choice only (the protocol)
    "relative": True,
    "adaptive": True,
    "alpha": 1.0,
    "tol": 1e-7,
    "max_steps": 2000,
    "test_at": "aic",
}
SNB = {"alpha": [1.0]}
SNB_OPTIONS = {"direction": "forward", "criterion": "error"}
WNB = {"alpha": [1.0]}
CFS = {"alpha": [1.0]}
METHODS = ("nb", "snb", "wnb", "group_lasso", "fsnb", "cfs")


def _grid(methods):
    grid = {
        "nb": {"alpha": ALPHAS},
        "fsnb": FSNB,
        "group_lasso": {"penalty": GL_FRACTIONS},
        "snb": SNB,
        "wnb": WNB,
        "cfs": CFS,
    }
    return {m: grid[m] for m in methods}


def run_sweep(data, n_states, methods):
    options = {"group_lasso": GL_OPTIONS, "snb": SNB_OPTIONS}
    t0 = time.perf_counter()
    _, res = sweep_methods(
        data,
        _grid(methods),
        n_states=n_states,
        options={m: o for m, o in options.items() if m in methods},
    )
    jax.block_until_ready(0)
    return res, time.perf_counter() - t0


def run_loop(data, n_states, methods, datasets):
    """The same grid with the estimators, one fit at a time."""
    from jaxnb.estimators_penalized import GroupLassoNB, WeightedNB
    from jaxnb.estimators_search import SelectiveNB, StagewiseNB
    from jaxnb.estimators_structure import FilterNB

    disc = bool(n_states)
    kw = dict(discrete="all", n_states=list(n_states)) if disc else dict(discrete="none")
    out = {m: {} for m in methods}
    t0 = time.perf_counter()
    for d in datasets:
        X = data["codes_train" if disc else "values_train"][d]
        Xt = data["codes_test" if disc else "values_test"][d]
        y, yt = data["y_train"][d], data["y_test"][d]
        if "nb" in methods:
            for h, a in enumerate(ALPHAS):
                m = NaiveBayes(alpha=a, **kw).fit(X, y)
                out["nb"][(d, h)] = (np.mean(m.predict(Xt) != yt), None)
        if "fsnb" in methods:
            m = StagewiseNB(
                epsilon=FSNB["epsilon"][0],
                patience=FSNB["patience"][0],
                n_steps=20,
                selection="aic",
                **kw,
            ).fit(X, y)
            out["fsnb"][(d, 0)] = (np.mean(m.predict(Xt) != yt), m.n_selected_)
        if "group_lasso" in methods:
            m = GroupLassoNB(
                adaptive=True,
                n_penalties=GL_N,
                penalty_ratio=GL_RATIO,
                selection="aic",
                alpha=GL_OPTIONS["alpha"],
                tol=GL_OPTIONS["tol"],
                max_steps=GL_OPTIONS["max_steps"],
                **kw,
            ).fit(X, y)
            for h in range(GL_N):
                err = np.mean(m.predict(Xt) != yt) if h == m.selected_index_ else None
                out["group_lasso"][(d, h)] = (err, int(m.path_["n_active"][h]))
        if "snb" in methods:
            m = SelectiveNB(alpha=SNB["alpha"][0], **SNB_OPTIONS, **kw).fit(X, y)
            out["snb"][(d, 0)] = (np.mean(m.predict(Xt) != yt), int(np.sum(m.support_)))
        if "wnb" in methods:
            m = WeightedNB(scheme="ferreira", alpha=WNB["alpha"][0], **kw).fit(X, y)
            out["wnb"][(d, 0)] = (np.mean(m.predict(Xt) != yt), None)
        if "cfs" in methods:
            m = FilterNB(filter="cfs", alpha=CFS["alpha"][0], **kw).fit(X, y)
            out["cfs"][(d, 0)] = (np.mean(m.predict(Xt) != yt), int(np.sum(m.support_)))
    return out, time.perf_counter() - t0


def check_identical(res, loop, methods, tol=1e-12):
    bad = []
    for m in methods:
        arr = res[m].arrays
        for (d, h), (err, count) in loop[m].items():
            if err is not None and abs(arr["test_error"][d, h, 0, 0] - err) > tol:
                bad.append((m, d, h, "test_error", arr["test_error"][d, h, 0, 0], err))
            if count is not None:
                key = "n_active" if m == "group_lasso" else "n_selected"
                if int(arr[key][d, h, 0, 0]) != count:
                    bad.append((m, d, h, key, int(arr[key][d, h, 0, 0]), count))
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=100, help="data sets per scenario")
    ap.add_argument("--quick", action="store_true", help="10 data sets per scenario")
    ap.add_argument(
        "--methods",
        default=None,
        help="comma-separated subset of " + ",".join(available_sweep_methods()),
    )
    ap.add_argument(
        "--cpu-devices",
        type=int,
        default=os.cpu_count(),
        help="XLA CPU devices (one per core by default; read before JAX starts)",
    )
    ap.add_argument(
        "--dtype",
        choices=("float64", "float32"),
        default="float64",
        help="floating dtype of both sides (read before JAX starts; default float64, unlike "
        "the Table-1 experiment)",
    )
    args = ap.parse_args(argv)
    if args.dtype != _early_option(sys.argv[1:] if argv is None else argv, "--dtype", "float64"):
        ap.error("--dtype must be given on the command line (it is read before JAX starts)")
    tol = 1e-12 if args.dtype == "float64" else 1e-6
    n_ds = 10 if args.quick else args.datasets
    methods = [m for m in METHODS if m in available_sweep_methods()]
    if args.methods:
        methods = [m for m in args.methods.split(",") if m in methods]
    print(
        f"devices: {jax.devices()}; cpus: {os.cpu_count()}; load average: "
        f"{os.getloadavg()[0]:.1f}; dtype: {args.dtype}; methods: {methods}; "
        f"{n_ds} data sets x 4 scenarios",
        flush=True,
    )
    per = {
        m: {"sweep": 0.0, "sweep_cold": 0.0, "loop": 0.0, "loop_cold": 0.0, "bad": 0}
        for m in methods
    }
    for sc in SCENARIOS:
        data, n_states = make_table1_batch(jax.random.PRNGKey(2011), sc, n_datasets=n_ds)
        data = {k: np.asarray(v) for k, v in data.items()}
        line = []
        for m in methods:
            _, t_cold = run_sweep(data, n_states, [m])  # compiles
            res, t_sweep = run_sweep(data, n_states, [m])
            _, t_loop_cold = run_loop(data, n_states, [m], [0])  # compiles the estimator
            loop, t_loop = run_loop(data, n_states, [m], range(n_ds))
            bad = check_identical(res, loop, [m], tol)
            for b in bad[:5]:
                print("   mismatch:", b)
            # NaN where a method scores the test rows at its selected point only (a penalty that
            # no data set selected is all NaN: its mean is NaN, without numpy's warning)
            te = res[m].arrays["test_error"]
            seen = np.sum(~np.isnan(te), axis=(0, 2, 3))
            sums = np.nansum(te, axis=(0, 2, 3))
            err = float(np.nanmin(np.where(seen > 0, sums / np.maximum(seen, 1), np.nan)))
            q = per[m]
            q["sweep"] += t_sweep
            q["sweep_cold"] += t_cold
            q["loop"] += t_loop
            q["loop_cold"] += t_loop_cold + t_loop
            q["bad"] += len(bad)
            line.append(
                f"{m}: sweep {t_sweep:.2f} s / loop {t_loop:.2f} s "
                f"({t_loop / t_sweep:.1f}x), test error {err:.3f}"
            )
        print(f"{sc}: " + "; ".join(line), flush=True)
    print()
    hdr = (
        f"{'method':>12} {'sweep s':>9} {'loop s':>9} {'ratio':>7} {'sweep cold s':>13} "
        f"{'loop cold s':>12} {'identical':>9}"
    )
    print(hdr)
    print("-" * len(hdr))
    tot = {
        k: sum(q[k] for q in per.values())
        for k in ("sweep", "loop", "sweep_cold", "loop_cold", "bad")
    }
    for m, q in list(per.items()) + [("total", tot)]:
        print(
            f"{m:>12} {q['sweep']:9.2f} {q['loop']:9.2f} {q['loop'] / q['sweep']:6.1f}x "
            f"{q['sweep_cold']:13.2f} {q['loop_cold']:12.2f} "
            f"{'yes' if not q['bad'] else 'NO':>9}"
        )
    ratio = tot["loop"] / tot["sweep"]
    print(
        f"data sets: {n_ds} x {len(SCENARIOS)} scenarios; target >= 5x (warm, whole grid): "
        f"{'met' if ratio >= 5 else 'MISSED'} ({ratio:.1f}x); load average now "
        f"{os.getloadavg()[0]:.1f}"
    )
    assert tot["bad"] == 0, "sweep and loop results differ"


if __name__ == "__main__":
    main()
