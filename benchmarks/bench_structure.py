"""Fit + predict time of TAN, flexible NB and the Parzen-window classifier vs scikit-learn peers.

Peers (scikit-learn has no TAN or KDE classifier, so the KDE ones are built by hand):
* TAN (Gaussian) and jaxnb NaiveBayes vs ``GaussianNB`` (closest peer; not the same model);
* FlexibleNB vs one 1-D ``KernelDensity`` per class and predictor, summed log densities;
* ParzenNB vs one joint ``KernelDensity`` per class;
* FlexibleTAN (KDE tree: the O(n² r² c) KDE conditional mutual information at fit) has no peer;
  its row gives jaxnb's time and error only.
The hand-built KDE classifiers reproduce jaxnb's bandwidths exactly (each class's columns divided
by their sample standard deviation s_cj, Gaussian kernel with bandwidth h_c from the normal rule,
log density corrected by −Σ_j log s_cj), so they are the same model: the table also prints the
share of test rows with the same predicted class and the median absolute difference of the log
posteriors. (The largest difference is not a useful check: scikit-learn's tree-based KernelDensity
loses accuracy for densities far in the tail, e.g. log f ≈ −52 evaluated as −51.6 where the exact
brute-force sum, which jaxnb computes, gives −52.66.)

Data: 3 classes, 8 continuous predictors (class-dependent Gaussian mixtures), N train and N test
rows (default 2000 each). Times exclude JIT compilation (one warm-up call; the first, compiling
call is reported separately) and are medians of ``--repeats`` runs; ratio = scikit-learn / jaxnb
(> 1: jaxnb faster).

Usage: python benchmarks/bench_structure.py [--n 2000] [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import platform
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

from jaxnb import NaiveBayes  # noqa: E402
from jaxnb.estimators_structure import TAN, FlexibleNB, FlexibleTAN, ParzenNB  # noqa: E402


def make_data(n, p=8, n_classes=3, seed=0):
    """Each class: an equal mixture of two Gaussians with random means and a shared random
    correlation (so tree and kernel models have something to find)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, 2 * n)
    means = rng.normal(0.0, 1.2, (n_classes, 2, p))
    comp = rng.integers(0, 2, 2 * n)
    A = rng.normal(0.0, 0.5, (n_classes, p, p)) + np.eye(p)[None]
    z = rng.standard_normal((2 * n, p))
    X = means[y, comp] + np.einsum("nij,nj->ni", A[y], z)
    return X[:n], y[:n], X[n:], y[n:]


def _normal_rule(m, n):
    return (4.0 / ((m + 2) * n)) ** (1.0 / (m + 4))


class SklearnKDEClassifier:
    """Per-class Gaussian KDE classifier from sklearn's KernelDensity (joint or per predictor)."""

    def __init__(self, per_feature):
        self.per_feature = per_feature

    def fit(self, X, y):
        from sklearn.neighbors import KernelDensity

        self.classes_ = np.unique(y)
        self.models_, self.log_prior_ = [], []
        for c in self.classes_:
            Xc = X[y == c]
            s = Xc.std(axis=0, ddof=1)
            h = _normal_rule(1 if self.per_feature else X.shape[1], len(Xc))
            Z = Xc / s
            cols = [Z[:, [j]] for j in range(X.shape[1])] if self.per_feature else [Z]
            kdes = [KernelDensity(bandwidth=h).fit(col) for col in cols]
            self.models_.append((s, kdes))
            self.log_prior_.append(np.log(len(Xc) / len(X)))
        return self

    def predict_log_proba(self, X):
        out = []
        for (s, kdes), lp in zip(self.models_, self.log_prior_, strict=True):
            Z = X / s
            cols = [Z[:, [j]] for j in range(X.shape[1])] if self.per_feature else [Z]
            dens = sum(k.score_samples(col) for k, col in zip(kdes, cols, strict=True))
            out.append(lp + dens - np.log(s).sum())
        out = np.stack(out, axis=1)
        return out - np.logaddexp.reduce(out, axis=1, keepdims=True)


def _fit_predict(make, Xtr, ytr, Xte):
    est = make().fit(Xtr, ytr)
    return est.predict_log_proba(Xte)


def _time(make, Xtr, ytr, Xte, repeats):
    t0 = time.perf_counter()
    out = _fit_predict(make, Xtr, ytr, Xte)
    first = time.perf_counter() - t0
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = _fit_predict(make, Xtr, ytr, Xte)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), first, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="training rows (= test rows)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n = 500, 1 repeat")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.repeats = 500, 1
    from sklearn.naive_bayes import GaussianNB

    Xtr, ytr, Xte, yte = make_data(args.n)
    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform} ({platform.processor() or '?'}), "
        f"N = {args.n} train / {args.n} test, p = {Xtr.shape[1]}, 3 classes, "
        f"median of {args.repeats}"
    )
    pairs = [
        ("TAN (Gaussian)", lambda: TAN(kind="gaussian"), "GaussianNB", lambda: GaussianNB(), False),
        ("NaiveBayes", lambda: NaiveBayes(), "GaussianNB", lambda: GaussianNB(), False),
        (
            "FlexibleNB",
            lambda: FlexibleNB(),
            "KDE per class+feature",
            lambda: SklearnKDEClassifier(per_feature=True),
            True,
        ),
        (
            "ParzenNB",
            lambda: ParzenNB(),
            "KDE per class (joint)",
            lambda: SklearnKDEClassifier(per_feature=False),
            True,
        ),
        ("FlexibleTAN", lambda: FlexibleTAN(), "-", None, False),
    ]
    hdr = (
        f"{'jaxnb':<15} {'time':>9} {'1st call':>9} {'error':>6} | {'scikit-learn peer':<22} "
        f"{'time':>9} {'error':>6} | {'ratio':>7} {'agree':>6} {'med|Δlogp|':>10}"
    )
    print(hdr)
    print("-" * len(hdr))
    for name, make, peer, make_peer, same in pairs:
        t, first, lp = _time(make, Xtr, ytr, Xte, args.repeats)
        err = np.mean(np.argmax(lp, 1) != yte)
        if make_peer is None:
            print(f"{name:<15} {t * 1e3:>7.1f}ms {first:>8.2f}s {err:>6.3f} | {peer:<22}")
            continue
        tp, _, lpp = _time(make_peer, Xtr, ytr, Xte, args.repeats)
        errp = np.mean(np.argmax(lpp, 1) != yte)
        agree = f"{np.mean(np.argmax(lp, 1) == np.argmax(lpp, 1)):.4f}" if same else "-"
        diff = f"{np.median(np.abs(lp - lpp)):.1e}" if same else "-"
        print(
            f"{name:<15} {t * 1e3:>7.1f}ms {first:>8.2f}s {err:>6.3f} | {peer:<22} "
            f"{tp * 1e3:>7.1f}ms {errp:>6.3f} | {tp / t:>6.1f}x {agree:>6} {diff:>10}"
        )
    print("ratio = scikit-learn time / jaxnb time (fit + predict_log_proba, compiled).")


if __name__ == "__main__":
    main()
