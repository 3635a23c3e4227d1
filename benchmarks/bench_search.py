"""Speed of the search methods (fsNB, selective NB) after compilation, and a scikit-learn
comparison.

1. One fsNB run (Algorithm 1, ε = 0.025, v = 20, patience 6) on a Table-1 DR data set
   (N = 300, p = 20, J = 3). Target < 50 ms.
2. Forward selective NB (training error, Langley & Sage stopping) on N = 3000 rows and 800 binary
   predictors (redundant thresholded indicators, ESANN-like). Target < 10 s.
3. Forward selective NB choosing 10 of 200 Gaussian predictors by 5-fold CV accuracy (N = 3000),
   against ``SequentialFeatureSelector(GaussianNB(), n_features_to_select=10, cv=5)`` on the same
   folds; checks both pick the same subset. Target ratio >= 100x.

Usage: python benchmarks/bench_search.py [--quick] [--repeats R]
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxnb.datasets import make_table1
from jaxnb.methods import selective as sel
from jaxnb.methods import stagewise as sw
from jaxnb.methods.nb import fit_stats
from jaxnb.model_selection import kfold_stats
from jaxnb.params import fit_marginal, fit_mle


def _time(fn, repeats):
    jax.block_until_ready(fn())  # compile
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), float(np.min(ts))


PAT = 6  # StagewiseNB's default patience


@partial(jax.jit, static_argnames=("patience",))
def _fsnb(ctr, vtr, ytr, patience=PAT, tie_order=None):
    stats = fit_stats(ctr, vtr, ytr, n_states=(3,) * 20, n_classes=3)
    o1, o0 = fit_mle(stats), fit_marginal(stats)
    return sw.fsnb_path(
        o1,
        o0,
        ctr,
        vtr,
        ytr,
        epsilon=0.025,
        patience=patience,
        n_steps=20,
        max_iter=sw.default_max_iter(20, 0.025),
        k_max=sw.n_units(0.025),
        tie_order=tie_order,
    )


@jax.jit
def _snb_binary(codes, y):
    stats = fit_stats(
        codes, jnp.zeros((codes.shape[0], 0)), y, n_states=(2,) * codes.shape[1], n_classes=4
    )
    o1 = fit_mle(stats)
    L = sel.mle_contributions(o1, codes, jnp.zeros((codes.shape[0], 0)))
    return sel.selective_path(L, o1.log_prior, y, direction="forward", criterion="error")


def _binary_data(rng, n=3000, n_scores=100, n_thresholds=8, n_classes=4):
    """ESANN-like indicators: noisy class-dependent scores thresholded at several levels."""
    y = rng.integers(0, n_classes, n)
    effect = rng.normal(0, 0.6, (n_scores, n_classes)) * (rng.random(n_scores) < 0.3)[:, None]
    scores = effect[:, y].T + rng.normal(0, 1, (n, n_scores))
    th = np.quantile(scores, np.linspace(0.1, 0.9, n_thresholds), axis=0)  # (t, s)
    codes = (scores[:, None, :] <= th[None]).reshape(n, -1).astype(np.int32)
    return codes, y.astype(np.int32)


def _cv_forward(values, y, folds, k_select, n_folds=5):
    train, _ = kfold_stats(
        values[:, :0].astype(jnp.int32), values, y, folds, n_states=(), n_classes=2, n_folds=n_folds
    )
    o1 = jax.vmap(fit_mle)(train)
    L = jax.vmap(
        lambda o: sel.mle_contributions(o, jnp.zeros((values.shape[0], 0), jnp.int32), values)
    )(o1)
    W = (folds[None, :] == jnp.arange(n_folds)[:, None]).astype(values.dtype)
    return sel.selective_path(
        L,
        o1.log_prior,
        y,
        W,
        direction="forward",
        criterion="error",
        stopping="full",
        max_steps=k_select,
        max_features=k_select,
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, smaller CV problem")
    ap.add_argument("--repeats", type=int, default=None)
    args = ap.parse_args(argv)
    reps = args.repeats or (3 if args.quick else 10)
    rows = []

    d = make_table1(jax.random.PRNGKey(0), "DR")
    ctr, vtr, ytr = d["codes_train"], d["values_train"], d["y_train"]
    med, best = _time(lambda: _fsnb(ctr, vtr, ytr), reps)
    path = base = _fsnb(ctr, vtr, ytr)
    rows.append(
        (
            "fsNB, Table-1 DR (N=300, p=20, eps=.025, v=20)",
            med,
            best,
            0.050,
            f"{int(path.n_iter)} iterations, {int(path.n_evaluations[path.n_iter])} evals",
        )
    )
    print(rows[-1], flush=True)
    med, best = _time(lambda: _fsnb(ctr, vtr, ytr, patience=10), reps)
    path = _fsnb(ctr, vtr, ytr, patience=10)
    rows.append(
        (
            "  same, patience 10 (the previous default)",
            med,
            best,
            0.050,
            f"{int(path.n_iter)} iterations, {int(path.n_evaluations[path.n_iter])} evals",
        )
    )
    print(rows[-1], flush=True)
    # StagewiseNB passes tie_order (ties go to the user's first column); on data of one kind it is
    # the identity, which must give the same path as the core's default argmin
    order = jnp.arange(20, dtype=jnp.int32)
    med, best = _time(lambda: _fsnb(ctr, vtr, ytr, tie_order=order), reps)
    tied = _fsnb(ctr, vtr, ytr, tie_order=order)
    same = bool(np.array_equal(np.asarray(tied.alpha), np.asarray(base.alpha)))
    rows.append(
        (
            "  same, with tie_order (StagewiseNB's call)",
            med,
            best,
            0.050,
            f"{int(tied.n_iter)} iterations, same path as without: {same}",
        )
    )
    print(rows[-1], flush=True)

    rng = np.random.default_rng(0)
    codes, yb = _binary_data(rng)
    cj, yj = jnp.asarray(codes), jnp.asarray(yb)
    med, best = _time(lambda: _snb_binary(cj, yj), max(1, reps // 3))
    sp = _snb_binary(cj, yj)
    rows.append(
        (
            f"forward SNB, N=3000, {codes.shape[1]} binary",
            med,
            best,
            10.0,
            f"{int(sp.n_steps)} steps, {int(sp.total_evaluations)} evals",
        )
    )
    print(rows[-1], flush=True)

    from sklearn.feature_selection import SequentialFeatureSelector
    from sklearn.model_selection import StratifiedKFold
    from sklearn.naive_bayes import GaussianNB

    n, p, k = (1500, 60, 5) if args.quick else (3000, 200, 10)
    y = rng.integers(0, 2, n)
    relevant = rng.random(p) < 0.2
    X = rng.normal(0, 1, (n, p)) + np.outer(y, rng.normal(0, 0.5, p) * relevant)
    folds = np.empty(n, np.int32)
    for f, (_, te) in enumerate(StratifiedKFold(5).split(X, y)):
        folds[te] = f
    Xj, yj2, fj = jnp.asarray(X), jnp.asarray(y.astype(np.int32)), jnp.asarray(folds)
    cvf = jax.jit(_cv_forward, static_argnames=("k_select",))
    med, best = _time(lambda: cvf(Xj, yj2, fj, k_select=k), reps)
    cp = cvf(Xj, yj2, fj, k_select=k)
    ours = np.flatnonzero(np.asarray(cp.mask[k]))
    t0 = time.perf_counter()
    sfs = SequentialFeatureSelector(GaussianNB(), n_features_to_select=k, cv=5).fit(X, y)
    t_sk = time.perf_counter() - t0
    theirs = np.flatnonzero(sfs.get_support())
    same = bool(np.array_equal(ours, theirs))
    rows.append(
        (
            f"forward SNB 5-fold CV, {k} of {p} Gaussian (N={n})",
            med,
            best,
            None,
            f"sklearn SFS {t_sk:.2f} s, ratio {t_sk / med:.0f}x, same subset: {same}",
        )
    )
    print(rows[-1], flush=True)

    print(
        f"\nbackend={jax.default_backend()} x64={jax.config.jax_enable_x64} "
        f"(shared machine: timings are noisy)"
    )
    print(f"{'benchmark':58s} {'median s':>10s} {'best s':>10s} {'target':>8s}  notes")
    for name, med, best, target, note in rows:
        tgt = "" if target is None else f"{target:g}"
        print(f"{name:58s} {med:10.4f} {best:10.4f} {tgt:>8s}  {note}")
    if not same:
        print("subsets differ: ours", ours.tolist(), "sklearn", theirs.tolist())


if __name__ == "__main__":
    main()
