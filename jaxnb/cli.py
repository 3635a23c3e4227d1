"""The ``jaxnb`` command (``python -m jaxnb``).

Subcommands:
  compare   fit every registered method on the embedded default data sets (one data set of the
            fsNB paper's DR scenario, and Diabetes binarized at its median), or on your own CSV
            file (``--data``; a stratified hold-out split or ``--cv K`` folds), and print test
            error, number of selected predictors and fit time.
  methods   list the registered methods.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from .data import _name_list
from .exceptions import ConvergenceWarning

__all__ = ["main"]


def _default_datasets(seed: int, quick: bool):
    """The embedded data sets as (name, X, y, [(train, test) rows], kind, estimator params)."""
    import jax

    from .datasets import load_diabetes, make_table1

    out = []
    n_test = 1000 if quick else 3000
    d = make_table1(jax.random.PRNGKey(seed), "DR", 300, n_test)
    X = np.concatenate([np.asarray(d["codes_train"]), np.asarray(d["codes_test"])])
    y = np.concatenate([np.asarray(d["y_train"]), np.asarray(d["y_test"])])
    split = (np.arange(300), np.arange(300, 300 + n_test))
    out.append(("DR (fsNB Table 1, N=300)", X, y, [split], "discrete", None, False))
    X, y = load_diabetes(quartile=2)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    cut = int(0.7 * len(y))
    out.append(
        ("Diabetes (median, 70/30)", X, y, [(perm[:cut], perm[cut:])], "continuous", None, False)
    )
    return out


def _count_selected(est) -> str:
    for attr in ("n_selected_", "support_"):
        v = getattr(est, attr, None)
        if v is not None:
            return str(int(np.sum(v)) if attr == "support_" else int(v))
    return str(getattr(est, "n_features_in_", "-"))


def _columns(names, idx) -> str:
    return _name_list([names[j] for j in idx], quote=False)


def _user_dataset(args):
    """(name, X, y, splits, kind, estimator params) of ``--data``; splits = [(train, test) rows]."""
    from .datasets.loaders import load_csv
    from .model_selection import stratified_folds, validation_split

    discrete = args.discrete
    if discrete not in ("auto", "all", "none"):
        discrete = [c.strip() for c in discrete.split(",") if c.strip()]
    sep = "\t" if args.sep in ("tab", "\\t") else args.sep
    table = load_csv(args.data, target=args.target, discrete=discrete, delimiter=sep)
    X, y, mask = table.X, table.y, table.discrete
    kinds = ", ".join(f"{n} ({'D' if d else 'C'})" for n, d in zip(table.names, mask, strict=True))
    print(
        f"{args.data}: {len(y)} rows, {len(np.unique(y))} classes, {mask.sum()} discrete (D) and "
        f"{(~mask).sum()} continuous (C) predictors: {kinds}",
        file=sys.stderr,
    )
    missing = np.where(mask[None, :], X < 0, np.isnan(X))  # code -1 / NaN (`load_csv`)
    n_values = [len(np.unique(X[~missing[:, j], j])) for j in range(X.shape[1])]
    binary = [j for j in range(X.shape[1]) if not mask[j] and n_values[j] <= 2]
    if binary and args.discrete == "auto":
        print(
            f"{args.data}: numeric columns with at most two values are modelled as Gaussians: "
            f"{_columns(table.names, binary)}; --discrete all (or a list of names) models them "
            "as categories",
            file=sys.stderr,
        )
    ids = [j for j in range(X.shape[1]) if mask[j] and len(y) > 20 and n_values[j] > 0.9 * len(y)]
    if ids:
        print(
            f"{args.data}: (nearly) every row has its own value in {_columns(table.names, ids)} "
            "(an identifier?); as a discrete predictor it carries no information: drop it from "
            "the file",
            file=sys.stderr,
        )
    if missing.any():
        where = _columns(table.names, np.flatnonzero(missing.any(0)))
        if args.missing == "error":
            raise ValueError(
                f"{args.data} has {int(missing.sum())} missing cells in {where}; pass "
                "--missing ignore (the methods that support it drop those terms) or impute them"
            )
        print(
            f"{args.data}: {int(missing.sum())} missing cells in {where}; methods without "
            "missing-value support are reported as not run",
            file=sys.stderr,
        )
    kind = "discrete" if mask.all() else ("mixed" if mask.any() else "continuous")
    rows = np.arange(len(y))
    if args.cv is not None:
        folds = stratified_folds(y, args.cv, args.seed, arg_name="--cv")
        splits = [(rows[folds != k], rows[folds == k]) for k in range(args.cv)]
        how = f"{args.cv}-fold CV"
    else:
        if not 0.0 < args.test_size < 1.0:
            raise ValueError(f"--test-size must be in (0, 1); got {args.test_size}")
        test = validation_split(y, fraction=args.test_size, seed=args.seed, arg_name="--test-size")
        splits = [(rows[~test], rows[test])]
        how = f"{1 - args.test_size:.0%}/{args.test_size:.0%}"
    name = f"{args.data} ({how})"
    return name, X, y, splits, kind, table.estimator_params, bool(missing.any())


def _configure(est, params, missing):
    """Set the table's ``discrete`` / ``n_states`` (and ``missing``) where the estimator has
    them."""
    have = est.get_params() if hasattr(est, "get_params") else {}
    est.set_params(**{k: v for k, v in (params or {}).items() if k in have})
    if missing == "ignore" and "missing" in have:
        est.set_params(missing="ignore")
    return est


def _sort_warnings(caught, where, unconverged, seen) -> None:
    """A fit's ConvergenceWarnings become footnotes of the table (once per data set, method and
    message); every other warning is issued again (once per message and place in the run, as
    Python's default shows it) with its own location, so the user's filters apply to it."""
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            if (*where, str(w.message)) not in unconverged:
                unconverged.append((*where, str(w.message)))
        elif (key := (str(w.message), w.category, w.filename, w.lineno)) not in seen:
            seen.add(key)
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def cmd_compare(args) -> int:
    from .registry import available_methods, get_method

    if args.cache:
        from .cache import enable_compilation_cache

        try:
            where = enable_compilation_cache()
        except ValueError as e:
            print(f"jaxnb compare: {e}", file=sys.stderr)
            return 2
        print(f"compilation cache: {where}", file=sys.stderr)
    explicit = bool(args.methods)  # methods the user asked for are reported when they cannot run
    names = args.methods.split(",") if args.methods else available_methods()
    try:
        for n in names:
            get_method(n)  # fail early on a typo
    except ValueError as e:
        print(f"jaxnb compare: {e}", file=sys.stderr)
        return 2
    if args.data is None:
        given = [
            f"--{a.replace('_', '-')}" for a in ("target", "cv") if getattr(args, a) is not None
        ]
        given += [
            f"--{a.replace('_', '-')}"
            for a, default in (("sep", ","), ("discrete", "auto"), ("test_size", 0.3))
            if getattr(args, a) != default
        ]
        if given:
            print(f"jaxnb compare: {', '.join(given)} require --data", file=sys.stderr)
            return 2
        datasets = _default_datasets(args.seed, args.quick)
    else:
        if args.cv is not None and args.test_size != 0.3:
            print("jaxnb compare: --test-size has no effect with --cv; pass one", file=sys.stderr)
            return 2
        try:
            datasets = [_user_dataset(args)]
        except (OSError, ValueError) as e:
            print(f"jaxnb compare: {e}", file=sys.stderr)
            return 2
    rows, failures, unconverged = [], [], []
    skipped = {}  # (data set, kind) -> methods left out by default for the data's kind
    n_fits = 0  # one per method, data set and fold
    seen = set()  # warnings other than ConvergenceWarning already issued again
    total = len(names) * len(datasets)
    k = 0
    t_start = time.perf_counter()
    for dname, X, y, splits, kind, params, has_missing in datasets:
        for name in names:
            k += 1
            spec = get_method(name)
            if kind not in spec.kinds:
                if explicit:
                    failures.append(
                        (dname, name, f"supports {', '.join(spec.kinds)} data, not {kind}")
                    )
                else:
                    skipped.setdefault((dname, kind), []).append(name)
                continue
            if has_missing and "missing" not in spec.factory(kind).get_params():
                failures.append((dname, name, "does not handle missing values (impute them)"))
                continue
            print(f"[{k}/{total}] {name} on {dname} ...", file=sys.stderr, flush=True)
            errs, sels, fit_s = [], [], 0.0
            try:
                for tr, te in splits:
                    est = _configure(spec.factory(kind), params, args.missing)
                    t0 = time.perf_counter()
                    try:
                        with warnings.catch_warnings(record=True) as caught:
                            warnings.simplefilter("always", ConvergenceWarning)
                            est.fit(X[tr], y[tr])
                    finally:
                        _sort_warnings(caught, (dname, name), unconverged, seen)
                    fit_s += time.perf_counter() - t0
                    errs.append(1.0 - est.score(X[te], y[te]))
                    sels.append(_count_selected(est))
            except (ValueError, TypeError) as e:  # bad input for this method: report, go on
                failures.append((dname, name, f"{type(e).__name__}: {e}"))
                continue
            nsel = sels[0] if len(set(sels)) == 1 else f"{np.mean([float(v) for v in sels]):.1f}"
            sd = float(np.std(errs, ddof=1)) if len(errs) > 1 else None
            rows.append((dname, name, float(np.mean(errs)), sd, nsel, fit_s))
            n_fits += len(errs)
    print()
    width = max([28] + [len(r[0]) for r in rows])
    hdr = (
        f"{'data set':<{width}} {'method':<14} {'test error':>10} {'± sd':>7} {'#selected':>9} "
        f"{'fit time':>9}"
    )
    print(hdr)
    print("-" * len(hdr))
    marked = {(d, n) for d, n, _ in unconverged}
    for dname, name, err, sd, nsel, fit_s in rows:
        sd_txt = "" if sd is None else f"{sd:.4f}"
        label = name + (" *" if (dname, name) in marked else "")
        print(f"{dname:<{width}} {label:<14} {err:>10.4f} {sd_txt:>7} {nsel:>9} {fit_s:>8.3f}s")
    for dname, name, msg in unconverged:
        print(f"* not converged: {name} on {dname}: {msg}")
    for dname, name, msg in failures:
        print(f"not run: {name} on {dname}: {msg}")
    for (dname, kind), left in skipped.items():
        print(
            f"skipped on {dname} ({kind} data), methods for other kinds: "
            + ", ".join(f"{n} ({', '.join(get_method(n).kinds)})" for n in left)
        )
    print(
        f"\n{n_fits} fits in {time.perf_counter() - t_start:.1f} s (fit time includes "
        f"JIT compilation on first use of each shape"
        + ("; errors are means over the folds, ± their sd)" if args.cv else ")")
    )
    return 1 if failures and not rows else 0


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
        help="fit every registered method on the embedded data sets or a CSV file",
        description="Fit every registered method on a DR-scenario data set of the "
        "fsNB paper and on Diabetes (median threshold), or on a CSV file (--data), and print "
        "a table of test error, number of selected predictors and fit time.",
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
    c.add_argument(
        "--data",
        default=None,
        metavar="CSV",
        help="your own data instead of the embedded sets: a CSV file with a header row",
    )
    c.add_argument(
        "--sep",
        default=",",
        help="cell separator of --data (default ','; 'tab' for TSV)",
    )
    c.add_argument(
        "--target",
        default=None,
        help="class column of --data, by name (default: the last column)",
    )
    c.add_argument(
        "--discrete",
        default="auto",
        help="discrete predictors of --data: auto (non-numeric columns), all, none, or "
        "comma-separated column names (default auto)",
    )
    c.add_argument(
        "--test-size",
        type=float,
        default=0.3,
        help="stratified hold-out fraction for --data (default 0.3)",
    )
    c.add_argument(
        "--cv",
        type=int,
        default=None,
        metavar="K",
        help="stratified K-fold CV on --data instead of a hold-out split",
    )
    c.add_argument(
        "--missing",
        choices=("error", "ignore"),
        default="error",
        help="missing cells: an error, or 'ignore' (each estimator that supports it drops the "
        "missing terms; the others are reported as not run)",
    )
    c.add_argument(
        "--cache",
        action="store_true",
        help="keep compiled programs on disk (jaxnb.enable_compilation_cache: $JAXNB_CACHE_DIR "
        "or ~/.cache/jaxnb/xla), so later runs skip most compilation",
    )
    c.set_defaults(func=cmd_compare)
    m = sub.add_parser("methods", help="list registered methods")
    m.set_defaults(func=cmd_methods)
    return p


def main(argv=None) -> int:
    """Run the ``jaxnb`` command with ``argv`` (default: the process arguments); returns the
    exit status (0 ok, 1 every method failed on the data, 2 bad arguments)."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
