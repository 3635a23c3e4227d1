"""The ``jaxnb`` command (``python -m jaxnb``).

Subcommands:
  compare   fit every registered method on the embedded default data sets (one data set of the
            fsNB paper's DR scenario, and Diabetes binarized at its median) and print test error,
            number of selected predictors and fit time.
  methods   list the registered methods.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

__all__ = ["main"]


def _default_datasets(seed: int, quick: bool):
    import jax

    from .datasets import load_diabetes, make_table1

    out = []
    d = make_table1(jax.random.PRNGKey(seed), "DR", 300, 1000 if quick else 3000)
    out.append(
        (
            "DR (fsNB Table 1, N=300)",
            np.asarray(d["codes_train"]),
            np.asarray(d["y_train"]),
            np.asarray(d["codes_test"]),
            np.asarray(d["y_test"]),
            "discrete",
        )
    )
    X, y = load_diabetes(quartile=2)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    cut = int(0.7 * len(y))
    tr, te = perm[:cut], perm[cut:]
    out.append(("Diabetes (median, 70/30)", X[tr], y[tr], X[te], y[te], "continuous"))
    return out


def _count_selected(est) -> str:
    for attr in ("n_selected_", "support_"):
        v = getattr(est, attr, None)
        if v is not None:
            return str(int(np.sum(v)) if attr == "support_" else int(v))
    return str(getattr(est, "n_features_in_", "-"))


def cmd_compare(args) -> int:
    from .registry import available_methods, get_method

    names = args.methods.split(",") if args.methods else available_methods()
    for n in names:
        get_method(n)  # fail early on a typo
    datasets = _default_datasets(args.seed, args.quick)
    rows = []
    total = len(names) * len(datasets)
    k = 0
    t_start = time.perf_counter()
    for dname, Xtr, ytr, Xte, yte, kind in datasets:
        for name in names:
            k += 1
            spec = get_method(name)
            if kind not in spec.kinds:
                continue
            print(f"[{k}/{total}] {name} on {dname} ...", file=sys.stderr, flush=True)
            est = spec.factory(kind)
            t0 = time.perf_counter()
            est.fit(Xtr, ytr)
            fit_s = time.perf_counter() - t0
            err = 1.0 - est.score(Xte, yte)
            rows.append((dname, name, err, _count_selected(est), fit_s))
    print()
    hdr = f"{'data set':<28} {'method':<14} {'test error':>10} {'#selected':>9} {'fit time':>9}"
    print(hdr)
    print("-" * len(hdr))
    for dname, name, err, nsel, fit_s in rows:
        print(f"{dname:<28} {name:<14} {err:>10.4f} {nsel:>9} {fit_s:>8.3f}s")
    print(
        f"\n{len(rows)} fits in {time.perf_counter() - t_start:.1f} s (fit time includes "
        f"JIT compilation on first use of each shape)"
    )
    return 0


def cmd_methods(args) -> int:
    from .registry import available_methods, get_method

    for n in available_methods():
        spec = get_method(n)
        print(f"{n:<14} {spec.description}  [{', '.join(spec.kinds)}]")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="jaxnb", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser(
        "compare",
        help="fit every registered method on the embedded data sets",
        description="Fit every registered method on a DR-scenario data set of the "
        "fsNB paper and on Diabetes (median threshold) and print a table of test "
        "error, number of selected predictors and fit time.",
    )
    c.add_argument(
        "--methods",
        default="",
        help="comma-separated method names (default: all; see `jaxnb methods`)",
    )
    c.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the synthetic data set and of the Diabetes split (default 0)",
    )
    c.add_argument(
        "--quick",
        action="store_true",
        help="smaller synthetic test set (1000 instead of 3000 rows)",
    )
    c.set_defaults(func=cmd_compare)
    m = sub.add_parser("methods", help="list registered methods")
    m.set_defaults(func=cmd_methods)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
