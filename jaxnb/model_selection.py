r"""Model selection along a path: AIC, K-fold CV by statistics subtraction, validation splits.

* AIC (Vidaurre, Bielza & Larrañaga 2011, §6): ``AIC = Q + 2 d / N`` with the mean deviance
  ``Q = −(2/N) Σ_r log P(Y = y_r | x_r)`` and ``d = #{i : α_i > 0}`` (their Eq. 14) — the number of
  predictors not removed (for selective NB: the subset size).
* K-fold CV: the statistics of every fold come from **one** pass over the data, accumulating with
  the class indicator crossed with the fold indicator (K·c pseudo-classes); the training statistics
  of fold k are total − fold k (`jaxnb.suffstats.subtract`). Folds are 0/1 weights, so fold models
  are evaluated with ``vmap``.
* `select_along_path`: the index of the selected model of a path of scores.
* Fold and split assignment (NumPy, seeded): `stratified_folds`, `validation_split`;
  `resolve_folds` turns an estimator's ``cv`` (a fold count, a scikit-learn splitter or a list of
  (train, test) index pairs) into fold ids.
"""

from __future__ import annotations

import numbers
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ._checks import check_int, check_scored_rows, concrete, jit_entry
from ._dtypes import float_dtype
from .data import check_sample_weight
from .likelihood import weighted_sum
from .suffstats import SuffStats, accumulate, subtract

__all__ = [
    "aic",
    "degrees_of_freedom",
    "kfold_stats",
    "fold_weights",
    "select_along_path",
    "stratified_folds",
    "resolve_folds",
    "check_cv",
    "validation_split",
    "SELECTION_RULES",
]

SELECTION_RULES = ("min", "min_smallest", "last")


def degrees_of_freedom(alpha):
    r"""d = Σ_i I(α_i > 0) (fsNB Eq. 14) over the last axis; a 0/1 subset mask gives its size."""
    return (jnp.asarray(alpha) > 0).sum(-1)


def aic(log_post, y, d, weight=None):
    r"""AIC = −(2/N) Σ_r w_r log P(y_r | x_r) + 2 d / N with N = Σ_r w_r (fsNB §6).

    Args:
      log_post: (n, c) log posterior.
      y: (n,) int class codes in [0, c).
      d: degrees of freedom (`degrees_of_freedom`).
      weight: optional (n,) row weights, finite and >= 0 with a positive sum.

    Shapes are always checked; concrete ``y`` and ``weight`` values are checked eagerly (skipped
    for tracers, inside a caller's ``jit``/``vmap``): an index outside [0, c) would wrap around
    or give NaN, and a zero total weight N gives NaN.
    """
    _check_aic_inputs(log_post, y, weight)
    w = jnp.ones(y.shape, log_post.dtype) if weight is None else jnp.asarray(weight, log_post.dtype)
    true = jnp.take_along_axis(log_post, y[:, None], axis=-1)[:, 0]
    N = w.sum()
    return -2.0 * weighted_sum(true, w) / N + 2.0 * d / N


def _check_aic_inputs(log_post, y, weight):
    """``log_post`` (n, c), then `check_scored_rows` for ``y`` and ``weight``."""
    if len(np.shape(log_post)) != 2:
        raise ValueError(f"log_post must have shape (n, c); got {np.shape(log_post)}")
    check_scored_rows("log_post", log_post, y, weight, "N = sum of the weights divides the AIC")


def fold_weights(folds, n_folds: int, dtype=None, weight=None):
    """(K, n) 0/1 indicators of the rows of each fold from an (n,) fold assignment, times the
    rows' ``weight`` (n,) when given (each fold's validation weights).

    ``n_folds``: a positive int; concrete ``folds`` must be int indices in [0, n_folds) (a row
    outside would silently belong to no fold)."""
    _check_n_folds(n_folds, minimum=1)
    _kfold_check({"folds": folds, "n_folds": n_folds})
    # device and traced arrays as they are; host ones go in as NumPy (jnp.asarray would compile
    # a staging program per shape)
    folds = folds if isinstance(folds, jax.Array) else np.asarray(folds)
    if weight is not None and not isinstance(weight, jax.Array):
        weight = np.asarray(weight)  # a list would enter the jitted function as a pytree
    if weight is not None and jnp.shape(weight) != folds.shape:
        raise ValueError(
            f"weight must have the shape of folds {folds.shape}; got {jnp.shape(weight)}"
        )
    return _fold_indicators(folds, weight, int(n_folds), jnp.dtype(dtype or float_dtype()))


@partial(jax.jit, static_argnames=("n_folds", "dtype"))
def _fold_indicators(folds, weight, n_folds: int, dtype):
    """`fold_weights` in one program (eagerly, the comparison compiled six small ones)."""
    out = (folds[None, :] == jnp.arange(n_folds)[:, None]).astype(dtype)
    return out if weight is None else out * weight.astype(dtype)[None, :]


def _check_n_folds(n_folds, minimum):
    if isinstance(n_folds, bool) or not isinstance(n_folds, int | np.integer):
        raise TypeError(f"n_folds must be an int; got {type(n_folds).__name__} {n_folds!r}")
    if n_folds < minimum:
        raise ValueError(f"n_folds must be >= {minimum}; got {n_folds}")


def _kfold_check(args):
    """`jit_entry` hook of `kfold_stats` (and `fold_weights`): concrete fold indices in
    [0, n_folds); for `kfold_stats`, ``folds`` of shape (n,) and the rows checked as
    `jaxnb.methods.nb.fit_stats` checks them (integer codes < n_states, integer labels in
    [0, n_classes), no inf values, finite weights >= 0), since the one-hot indicators would
    otherwise drop a label >= n_classes or a code >= n_states silently. Tracers are skipped."""
    folds, n_folds = args.get("folds"), args.get("n_folds")
    _check_n_folds(n_folds, minimum=1)
    if concrete(folds):
        f = np.asarray(folds)
        if f.dtype.kind not in "iu" or (f.size and (f.min() < 0 or f.max() >= int(n_folds))):
            raise ValueError(
                f"folds must hold int fold indices in [0, n_folds={n_folds}); got values in "
                f"[{f.min() if f.size else None}, {f.max() if f.size else None}]"
            )
    if "codes" not in args:  # fold_weights: folds only
        return
    from .methods.nb import _check_stats_inputs, _static_n_states

    n_states = _static_n_states(args.get("n_states"))
    y = args.get("y")
    if np.ndim(y) == 1 and np.shape(folds) != np.shape(y):
        raise ValueError(
            f"folds must have shape (n,) = {np.shape(y)}, one fold index per row; got "
            f"{np.shape(folds)}"
        )
    rows = (args.get("codes"), args.get("values"), y, args.get("weight"))
    if concrete(*rows):
        _check_stats_inputs(*rows, n_states, args.get("n_classes"))


@jit_entry("n_states", "n_classes", "n_folds", check=_kfold_check)
def kfold_stats(codes, values, y, folds, weight=None, *, n_states, n_classes, n_folds):
    r"""Training statistics of every fold, from one pass over the data.

    The rows are accumulated once with the (n, K·c) indicator ``[fold_r = k][y_r = j]`` (times the
    sample weight), giving the statistics of every fold side by side; the total is their merge and
    the training statistics of fold k are ``subtract(total, fold_k)``.

    Args:
      codes, values: (n, q) codes and (n, r) values.
      y: (n,) int class codes; folds: (n,) int fold index in [0, n_folds).
      weight: optional (n,) sample weights.

    Returns:
      (train, fold): `SuffStats` whose leaves have a leading axis K (vmap-ready).
    """
    dtype = values.dtype if jnp.issubdtype(values.dtype, jnp.floating) else float_dtype()
    Y = jax.nn.one_hot(y, n_classes, dtype=dtype)
    F = jax.nn.one_hot(folds, n_folds, dtype=dtype)
    YF = (F[:, :, None] * Y[:, None, :]).reshape((Y.shape[0], n_folds * n_classes))
    big = accumulate(codes, values, YF, weight, n_states=n_states)
    K, c = n_folds, n_classes
    fold = SuffStats(
        class_weight=big.class_weight.reshape((K, c)),
        counts=jnp.moveaxis(big.counts.reshape((-1, K, c)), 1, 0),
        weight=big.weight.reshape((K, c, -1)),
        mean=big.mean.reshape((K, c, -1)),
        m2=big.m2.reshape((K, c, -1)),
        n_states=big.n_states,
    )
    total = _merge_folds(fold)
    train = jax.vmap(subtract, in_axes=(None, 0))(total, fold)
    return train, fold


def _merge_folds(fold: SuffStats) -> SuffStats:
    """Merge the K fold statistics (leading axis) into the total, exactly (pooled moments)."""
    w = fold.weight.sum(0)
    safe = jnp.where(w > 0, w, 1.0)
    mean = (fold.weight * fold.mean).sum(0) / safe
    m2 = fold.m2.sum(0) + (fold.weight * (fold.mean - mean[None]) ** 2).sum(0)
    return SuffStats(
        fold.class_weight.sum(0),
        fold.counts.sum(0),
        w,
        jnp.where(w > 0, mean, 0.0),
        m2,
        fold.n_states,
    )


def select_along_path(path_scores, rule: str = "min", sizes=None, n_valid=None) -> int:
    r"""Index of the selected model along a path (NumPy; call after the search).

    Args:
      path_scores: (m,) score of each model (lower is better: AIC, CV or validation error).
      rule: ``"min"`` — the first index with the lowest score; ``"min_smallest"`` — among the
        indices with the lowest score, the one with the smallest ``sizes`` (ties: the first;
        ESANN §5.2's "smallest subset among those with the lowest error"); ``"last"`` — the last
        valid index.
      sizes: (m,) model sizes, required for ``"min_smallest"``.
      n_valid: number of valid leading entries (e.g. ``n_iter + 1``); default all.
    """
    if rule not in SELECTION_RULES:
        raise ValueError(f"rule must be one of {SELECTION_RULES}; got {rule!r}")
    s = np.asarray(path_scores, dtype=np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"path_scores must be a non-empty 1-D array; got shape {s.shape}")
    m = s.size if n_valid is None else int(n_valid)
    if not 1 <= m <= s.size:
        raise ValueError(f"n_valid must be in [1, {s.size}]; got {n_valid!r}")
    s = s[:m]
    if rule == "last":
        return m - 1
    if np.isnan(s).all():
        raise ValueError("path_scores are all NaN; no model can be selected")
    best = np.flatnonzero(s == np.nanmin(s))
    if rule == "min":
        return int(best[0])
    if sizes is None:
        raise ValueError("rule='min_smallest' needs sizes=(m,) model sizes")
    sizes = np.asarray(sizes)
    if sizes.ndim != 1 or sizes.shape[0] < m:
        raise ValueError(f"sizes must be 1-D with at least {m} entries; got shape {sizes.shape}")
    sz = sizes[:m][best]
    return int(best[np.argmin(sz)])


def stratified_folds(
    y, n_folds: int = 5, seed: int = 0, arg_name: str = "n_folds", sample_weight=None
) -> np.ndarray:
    """Stratified fold assignment (n,) int: each class's rows shuffled and dealt round-robin.

    Args:
      y: (n,) labels (any type); n_folds: K >= 2; seed: NumPy seed.
      arg_name: the caller's name for ``n_folds`` (e.g. an estimator's ``cv``), used in the error
        messages.
      sample_weight: optional (n,) row weights. Rows of weight 0 take no part in the draw (fold
        0; they count nowhere), so the other rows get the folds they would get without them:
        a zero weight is the same as dropping the row.
    """
    y = _check_split_labels(y)
    keep = _weighted_rows(sample_weight, y.shape[0])
    if keep is not None:
        folds = np.zeros(y.shape[0], np.int32)
        folds[keep] = stratified_folds(y[keep], n_folds, seed, arg_name)
        return folds
    if isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise ValueError(f"{arg_name} must be an int >= 2; got {arg_name}={n_folds!r}")
    if n_folds > y.shape[0]:
        raise ValueError(
            f"{arg_name}={n_folds} exceeds the number of rows ({y.shape[0]}); lower {arg_name} "
            f"to at most {y.shape[0]}"
        )
    rng = np.random.default_rng(seed)
    folds = np.empty(y.shape[0], np.int32)
    start = 0
    for cls in np.unique(y):
        idx = np.flatnonzero(y == cls)
        rng.shuffle(idx)
        # continue the round-robin across classes so fold sizes differ by at most one overall
        folds[idx] = (np.arange(idx.size) + start) % n_folds
        start = (start + idx.size) % n_folds
    return folds


def check_cv(cv, arg_name: str = "cv") -> None:
    """Eager check of an estimator's ``cv``: an int >= 2, an object with a ``split`` method (a
    scikit-learn splitter such as ``StratifiedKFold(5, shuffle=True)``) or a list of
    (train, test) index pairs. Whether the splits partition the rows is checked by
    `resolve_folds`, which sees the data."""
    if hasattr(cv, "split") or isinstance(cv, (list, tuple)):
        return
    if isinstance(cv, numbers.Number) or cv is None:
        check_int(arg_name, cv, 2)
        return
    hint = " (a generator is used up by one fit: pass list(...))" if hasattr(cv, "__next__") else ""
    raise TypeError(
        f"{arg_name} must be a number of folds (int >= 2), a splitter with a split method (e.g. "
        f"sklearn's StratifiedKFold) or a list of (train, test) index pairs; got "
        f"{type(cv).__name__}{hint}"
    )


def resolve_folds(cv, y, seed=0, *, arg_name: str = "cv", sample_weight=None):
    """Fold ids (n,) int32 and the number of folds K for an estimator's ``cv``.

    Every fold returned holds at least one row of positive weight (an int ``cv`` deals the
    positive-weight rows round-robin, and needs K of them).

    Args:
      cv: an int K (`stratified_folds` with ``seed``); a splitter with a ``split(X, y)`` method
        (called with a placeholder X of shape (n, 1) and the encoded labels: splitters that need
        ``groups`` take a precomputed list instead); or a list of (train, test) index pairs, e.g.
        ``list(GroupKFold(5).split(X, y, groups))``, the same folds for every method compared.
      y: (n,) encoded labels. sample_weight: as in `stratified_folds` for an int ``cv``; given
        splits are used as they are, and each test set must hold some positive weight.

    The folds' statistics are the total minus each test part (`kfold_stats`), so given splits
    must **partition** the rows: every row in exactly one test set, and each training set the
    rest of the rows (KFold, StratifiedKFold, GroupKFold, PredefinedSplit; not ShuffleSplit or
    TimeSeriesSplit). Anything else raises a ValueError saying which split breaks it.
    """
    check_cv(cv, arg_name)
    y = np.asarray(y)
    n = y.shape[0]
    if isinstance(cv, numbers.Integral):
        folds = stratified_folds(y, int(cv), seed, arg_name, sample_weight=sample_weight)
        return folds, int(cv)
    if hasattr(cv, "split"):
        try:
            splits = list(cv.split(np.zeros((n, 1)), y))
        except (TypeError, ValueError) as e:
            raise ValueError(
                f"{arg_name}.split(X, y) failed ({e}); for a splitter that needs more (e.g. "
                f"groups), pass {arg_name}=list(splitter.split(X, y, groups))"
            ) from e
    else:
        splits = list(cv)
    if len(splits) < 2:
        raise ValueError(f"{arg_name} gives {len(splits)} split(s); cross-validation needs >= 2")
    folds = np.full(n, -1, np.int32)
    for k, split in enumerate(splits):
        if not (isinstance(split, (list, tuple)) and len(split) == 2):
            raise ValueError(
                f"{arg_name}: split {k} is not a (train, test) pair of index arrays; got "
                f"{type(split).__name__}"
            )
        train = _split_indices(split[0], n, f"{arg_name}: split {k}'s train")
        test = _split_indices(split[1], n, f"{arg_name}: split {k}'s test")
        again = test[folds[test] >= 0]
        if again.size:
            raise ValueError(
                f"{arg_name}: row {int(again[0])} is in the test sets of splits "
                f"{int(folds[again[0]])} and {k}; the test sets must partition the rows (KFold, "
                f"StratifiedKFold, GroupKFold; not ShuffleSplit)"
            )
        if test.size == 0:
            raise ValueError(f"{arg_name}: split {k} has an empty test set")
        folds[test] = k
        member = np.zeros(n, bool)
        member[train] = True  # train and test hold no repeats (`_split_indices`)
        if member[test].any() or train.size + test.size != n:
            raise ValueError(
                f"{arg_name}: split {k}'s training set is not the complement of its test set; "
                f"the folds' training statistics are the total minus the test part, so each "
                f"training set must be every other row (not TimeSeriesSplit)"
            )
    if (folds < 0).any():
        r = int(np.flatnonzero(folds < 0)[0])
        raise ValueError(
            f"{arg_name}: row {r} is in no test set; the test sets must cover every row"
        )
    if sample_weight is not None:
        w = check_sample_weight(sample_weight, n, np.float64)
        empty = np.bincount(folds, weights=w, minlength=len(splits)) <= 0
        if empty.any():
            raise ValueError(
                f"{arg_name}: split {int(np.flatnonzero(empty)[0])}'s test set has only rows of "
                f"weight 0; its fold would have no validation rows"
            )
    return folds, len(splits)


def _split_indices(part, n, what):
    """A split's train or test part as unique int row indices in [0, n) (bool masks allowed)."""
    a = np.asarray(part)
    if a.dtype == bool:
        if a.shape != (n,):
            raise ValueError(f"{what} is a boolean mask of shape {a.shape}; expected ({n},)")
        return np.flatnonzero(a)
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
        raise ValueError(f"{what} must be a 1-D array of row indices; got {a.dtype} {a.shape}")
    a = a.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= n):
        raise ValueError(
            f"{what} holds row index {int(a.min() if a.min() < 0 else a.max())}, outside "
            f"[0, {n}): the splits index another table (inside an outer cross-validation, pass "
            f"a splitter such as StratifiedKFold(5), which splits each training part)"
        )
    if np.unique(a).size != a.size:
        raise ValueError(f"{what} repeats a row index")
    return a


def _weighted_rows(sample_weight, n):
    """None (every row takes part in a split) or the (n,) bool mask of rows with weight > 0."""
    if sample_weight is None:
        return None
    keep = check_sample_weight(sample_weight, n, np.float64) > 0  # the estimators' own check
    return None if keep.all() else keep


def _check_split_labels(y) -> np.ndarray:
    """``y`` as a 1-D NumPy array (an (n, 1) column is flattened) of defined labels. NaN, None
    and NaT compare unequal to themselves, so they belong to no class group (`stratified_folds`
    left their fold index uninitialised, `validation_split` never put them in the validation
    part): they raise, naming ``y``."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:  # a column of labels
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D array of labels (n,); got shape {y.shape}")
    if y.dtype.kind in "fc":
        bad = np.isnan(y)
    elif y.dtype.kind in "mM":
        bad = np.isnat(y)
    elif y.dtype.kind == "O":
        bad = np.fromiter((_undefined_label(v) for v in y), bool, y.size)
    else:
        return y
    if bad.any():
        rows = np.flatnonzero(bad)
        raise ValueError(
            f"y holds missing labels (NaN / None) at rows {rows[:5].tolist()}"
            f"{' ...' if rows.size > 5 else ''} ({rows.size} in all); drop those rows or give "
            "them a label first"
        )
    return y


def _undefined_label(v) -> bool:
    """None, NaN, NaT (unequal to themselves) or pandas.NA (whose comparisons give NA)."""
    if v is None or type(v).__name__ == "NAType":
        return True
    try:
        unequal = v != v
    except Exception:  # a label type without comparisons: defined
        return False
    return isinstance(unequal, bool | np.bool_) and bool(unequal)


def validation_split(
    y,
    fraction: float = 0.5,
    seed: int = 0,
    stratify: bool = True,
    arg_name: str = "fraction",
    sample_weight=None,
) -> np.ndarray:
    """Boolean (n,) mask of validation rows (True), stratified by class by default.

    ESANN §5.2 fits NB on one half of the training set and selects the subset on the other half
    (keeping class proportions): ``fraction=0.5``. Stratified, each class's share is rounded to
    whole rows and capped so that the class keeps at least one training row. ``arg_name`` is the
    caller's name for ``fraction`` (e.g. an estimator's ``validation_fraction``), used in the
    error messages. Rows whose ``sample_weight`` is 0 take no part in the draw (they go to the
    training part, where they count nowhere), so a zero weight is the same as dropping the row.
    """
    y = _check_split_labels(y)
    keep = _weighted_rows(sample_weight, y.shape[0])
    if keep is not None:
        mask = np.zeros(y.shape[0], bool)
        mask[keep] = validation_split(y[keep], fraction, seed, stratify, arg_name)
        return mask
    if not (
        isinstance(fraction, (float, int, np.floating, np.integer))
        and not isinstance(fraction, bool)
        and 0.0 < fraction < 1.0
    ):
        raise ValueError(f"{arg_name} must be in (0, 1); got {arg_name}={fraction!r}")
    rng = np.random.default_rng(seed)
    mask = np.zeros(y.shape[0], bool)
    groups = [np.flatnonzero(y == c) for c in np.unique(y)] if stratify else [np.arange(y.size)]
    for idx in groups:
        idx = idx.copy()
        rng.shuffle(idx)
        k = int(round(fraction * idx.size))
        if stratify:  # every class keeps a training row (a singleton stays in training)
            k = min(k, idx.size - 1)
        mask[idx[:k]] = True
    if mask.all() or not mask.any():
        part = "training" if mask.all() else "validation"
        fix = "lower" if mask.all() else "raise"
        raise ValueError(
            f"{arg_name}={fraction} leaves an empty {part} part with {y.shape[0]} rows; {fix} "
            f"{arg_name} (each class's share is rounded to whole rows)"
        )
    return mask
