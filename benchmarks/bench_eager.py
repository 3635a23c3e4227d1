"""Eager calls of the functional core: first call (compilation) and repeated calls.

A researcher's notebook calls the core functions one at a time, in a Python loop over penalties,
folds or data sets. This prints, per entry point, the first call's time and the median of the
next calls (new argument values, the same shapes), so an entry point that recompiles or
dispatches op by op at every call shows up as a repeated time near its first one.

Usage: python benchmarks/bench_eager.py [--rows N] [--repeats R]
Run it with PYTHONPATH pointing at another checkout to compare two versions of the library.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import jax
import numpy as np


def _timed(fn):
    t0 = time.perf_counter()
    jax.block_until_ready(jax.tree.leaves(fn()))
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    jax.config.update("jax_enable_x64", True)

    import jaxnb
    from jaxnb.methods import group_lasso as gl
    from jaxnb.methods import l1nb
    from jaxnb.methods import weighted as wt

    rng = np.random.default_rng(0)
    n = args.rows
    y = rng.integers(0, 2, n)
    codes = rng.integers(0, 3, (n, 4)).astype(np.int32)
    codes[:, 0] = np.where(rng.random(n) < 0.7, y, codes[:, 0])
    values = rng.normal(size=(n, 3)) + 0.7 * y[:, None]
    ns = (3,) * 4
    stats = jaxnb.fit_stats(codes, values, y, n_states=ns, n_classes=2)
    params = jaxnb.fit_mle(stats)
    problem = gl.make_group_lasso_problem(stats)
    lmax = float(gl.lambda_max(problem))
    grid = np.asarray(gl.penalty_grid(problem, 10))
    L = jaxnb.log_contributions(params, codes, values)
    B = l1nb.b_matrix(l1nb.one_predictor_posteriors(L, params.log_prior), y)

    # each case: a function of the repeat index k (k = 0 is the first call)
    cases = {
        "fit_nb": lambda k: jaxnb.fit_nb(codes, values, y, None, 1.0 + k, n_states=ns, n_classes=2),
        "log_joint": lambda k: jaxnb.log_joint(params, codes, values + k),
        "log_posterior": lambda k: jaxnb.log_posterior(params, codes, values + k),
        "fit_group_lasso (exact)": lambda k: gl.fit_group_lasso(problem, lmax / (2 + k)),
        "fit_group_lasso (fista)": lambda k: gl.fit_group_lasso(
            problem, lmax / (2 + k), solver="fista"
        ),
        "group_lasso_path (10)": lambda k: gl.group_lasso_path(problem, grid / (1 + 0.1 * k)),
        "bounded_lars_path": lambda k: l1nb.bounded_lars_path(B * (1 - 0.01 * k)),
        "fit_gradient_weights": lambda k: wt.fit_gradient_weights(
            L, y, params.log_prior, l2=1e-3 * (1 + k)
        ),
    }
    print(f"jaxnb {jaxnb.__version__} from {jaxnb.__file__}")
    print(
        f"jax {jax.__version__}, {platform.processor() or platform.machine()}, "
        f"{n} rows, 4 discrete + 3 Gaussian predictors, float64"
    )
    print(f"{'entry point':26s} {'first call':>11s} {'next calls (median)':>20s} {'ratio':>7s}")
    for name, fn in cases.items():
        first = _timed(lambda fn=fn: fn(0))
        rest = statistics.median(_timed(lambda k=k, fn=fn: fn(k)) for k in range(1, args.repeats))
        print(f"{name:26s} {first:10.3f}s {rest * 1e3:18.2f}ms {first / rest:7.0f}x")


if __name__ == "__main__":
    main()
