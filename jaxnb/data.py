r"""Data model and eager validation at the boundary (NumPy only, before any jit).

A user's table is split into a discrete block (``codes``: int32 (n, q), ``-1`` = missing) and a
continuous block (``values``: float (n, r), NaN = missing). Which columns are discrete is the
estimator's ``discrete`` parameter:

* ``"auto"`` — integer, boolean, string/object and pandas categorical columns are discrete, float
  columns are continuous (a float NumPy array is therefore all-continuous: integer-valued floats are
  not silently reinterpreted as categories);
* ``"all"`` / ``"none"``; a boolean mask of length p; or a list of column indices.

Discrete columns are encoded as follows:

* numbers (ints, or floats that are whole numbers) are taken as codes ``0..M-1``; ``M`` is
  ``n_states[i]`` when given, otherwise the largest code seen plus one (scikit-learn's CategoricalNB
  convention);
* anything else (strings, objects) is label-encoded: ``categories_[i]`` holds the sorted labels.

Missing values (``missing="ignore"``): NaN or None in any column, and the code ``-1`` in a numeric
discrete column. Their term is dropped from the posterior (exact marginalization under NB). With the
default ``missing="error"`` they raise.

Unseen categories at predict time (a label never seen in training, or a code ``>= n_states``):
``unseen="error"`` (default) raises; ``unseen="ignore"`` drops the term for that row, i.e. treats
the unseen state as uniformly likely under every class.

All checks raise `ValueError`/`TypeError` naming the argument and the fix.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
import warnings

import numpy as np

__all__ = ["FeatureEncoder", "encode_labels", "check_sample_weight", "check_X_2d"]

_MISSING_CODE = -1
# Codes are stored as int32; an undeclared state count is inferred from the largest code, so a
# stray huge code (an ID column, a float typo) would allocate a CPT of that many states.
_CODE_LIMIT = 2**31 - 1
_MAX_INFERRED_STATES = 1 << 24

# Bytes per chunk of the vectorized encoding of plain numeric arrays: each chunk is copied and
# checked while it is in cache (one pass over the data instead of one strided pass per column).
_CHUNK_BYTES = 1 << 22
_ALIGN = 64  # alignment of encoded arrays: jax.device_put(..., may_alias=True) then skips a copy


def _aligned_empty(shape, dtype):
    """np.empty whose data pointer is 64-byte aligned (XLA:CPU can then use it without a copy)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize  # math.prod: np.prod of a tuple takes ~2.5 µs
    buf = np.empty(nbytes + _ALIGN, np.uint8)
    off = (-buf.ctypes.data) % _ALIGN
    return buf[off : off + nbytes].view(dtype).reshape(shape)


def _plain_numeric(X):
    """X itself when it is a non-empty 2-D NumPy array of bool/int/uint/float, else None."""
    if (
        isinstance(X, np.ndarray)
        and X.ndim == 2
        and X.dtype.kind in "biuf"
        and X.shape[0] > 0
        and X.shape[1] > 0
    ):
        return X
    return None


def _row_chunks(n, row_bytes):
    step = max(1, _CHUNK_BYTES // max(int(row_bytes), 1))
    return [(a, min(n, a + step)) for a in range(0, n, step)]


def _take_columns(block, idx, p):
    """block[:, idx] without a copy when idx is every column or a contiguous range."""
    if len(idx) == p:
        return block
    if len(idx) and idx[-1] - idx[0] + 1 == len(idx):
        return block[:, idx[0] : idx[-1] + 1]
    return block[:, idx]


def _check_inferred_states(j, n_states):
    if n_states > _MAX_INFERRED_STATES:
        raise ValueError(
            f"discrete column {j} has code {n_states - 1}, so its inferred state count would be "
            f"{n_states}; recode the column to 0..K-1 (or pass its labels as strings), mark it "
            f"continuous, or declare its n_states explicitly"
        )


def _is_pandas_df(X) -> bool:
    return hasattr(X, "dtypes") and hasattr(X, "columns") and hasattr(X, "iloc")


def _frame_names(X):
    """A DataFrame's column names as an object array when all are strings, else None (as
    scikit-learn: integer or mixed names are positions, not names)."""
    if not _is_pandas_df(X):
        return None
    names = list(X.columns)
    if not names or not all(isinstance(c, str) for c in names):
        return None
    return np.asarray(names, dtype=object)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_stacklevel() -> int:
    """``stacklevel`` for a warning issued by the caller of this function that points at the
    first frame outside jaxnb (the user's ``predict`` line), however deep the library's call
    chain is (a fixed stacklevel pointed into the library)."""
    frame, level = sys._getframe(2), 2  # level 2: the caller of the warning function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def _name_list(names, k=5, quote=True):
    """The first ``k`` names for a message (``repr`` when ``quote``), and how many in all."""
    shown = ", ".join(repr(c) if quote else str(c) for c in names[:k])
    return shown + (f", ... ({len(names)} in all)" if len(names) > k else "")


def check_feature_names(fitted, X, *, warn=None) -> None:
    """A DataFrame with string column names must name the training columns (``fitted``, from
    `_frame_names` at fit; None: nothing to check) in their order: columns are matched by
    position, so a reordered frame would be read silently wrong.

    X without string column names (an array, or integer names) after a fit on named columns is
    read by position with a UserWarning, as scikit-learn does; ``warn``, when given, receives the
    message instead (a caller that must issue it elsewhere, e.g. from another thread)."""
    names = _frame_names(X)
    if fitted is None:
        return
    if names is None:
        message = (
            f"X has no column names, but the model was fitted on a DataFrame with named columns "
            f"({_name_list(fitted)}); its columns are read by position, in the order of "
            "feature_names_in_"
        )
        if warn is not None:
            warn(message)
        else:
            warnings.warn(message, UserWarning, stacklevel=_user_stacklevel())
        return
    if len(names) == len(fitted) and bool(np.all(names == fitted)):
        return
    known, given = set(fitted.tolist()), set(names.tolist())
    unknown = [c for c in names if c not in known]
    missing = [c for c in fitted if c not in given]
    if unknown or missing:
        what = f"unknown columns {unknown[:5]}" if unknown else ""
        what += ("; " if what and missing else "") + (
            f"missing columns {missing[:5]}" if missing else ""
        )
    else:
        j = int(np.flatnonzero(names != fitted)[0])
        what = (
            f"the same columns in another order (position {j}: {names[j]!r}, fitted {fitted[j]!r})"
        )
    raise ValueError(
        f"X's column names differ from those seen at fit: {what}; pass the training columns "
        "in their order, e.g. X[model.feature_names_in_]"
    )


def _unhashable_error(where: str, values) -> TypeError:
    """The error for labels that cannot be categories (dicts, lists: Python cannot hash them)."""
    bad = None
    for v in values:
        try:
            hash(v)
        except TypeError:
            bad = v
            break
    text = repr(bad)
    text = text if len(text) <= 40 else text[:37] + "..."
    return TypeError(
        f"{where} holds a {type(bad).__name__} ({text}); a label must be a string, a number or "
        f"another hashable value"
    )


def _is_sparse(X) -> bool:
    """A SciPy sparse matrix or array (NumPy would wrap it as a 0-d object array)."""
    return type(X).__module__.startswith("scipy.sparse")


def check_X_2d(X, name: str = "X"):
    """Return the columns of X as a list of 1-D NumPy arrays, checking shape and emptiness."""
    if X is None:
        raise ValueError(f"{name} is None; pass a 2-D array-like of shape (n_samples, n_features)")
    if _is_sparse(X):
        raise TypeError(
            f"{name} is a sparse matrix ({type(X).__name__}); the estimators take dense arrays: "
            f"pass {name}.toarray()"
        )
    if _is_pandas_df(X):
        cols = [np.asarray(X.iloc[:, j]) for j in range(X.shape[1])]
        kinds = [_frame_kind(X.dtypes.iloc[j], cols[j]) for j in range(X.shape[1])]
        n = X.shape[0]
    else:
        try:
            arr = np.asarray(X)
            if arr.dtype.kind in "US" and not isinstance(X, np.ndarray):
                # a list mixing text and numbers: NumPy would turn every number into text (a
                # numeric column would become categories); keep each entry's own type instead
                arr = np.asarray(X, dtype=object)
        except Exception as e:  # ragged lists
            raise ValueError(f"{name} could not be converted to a 2-D array: {e}") from e
        if arr.ndim != 2:
            hint = (
                f" (Reshape your data: {name}.reshape(-1, 1) if it has a single feature, "
                f"{name}.reshape(1, -1) if it is a single sample)"
                if arr.ndim == 1
                else ""
            )
            raise ValueError(
                f"{name} must be 2-D (n_samples, n_features); got {arr.ndim}-D array "
                f"of shape {arr.shape}{hint}"
            )
        n = arr.shape[0]
        cols = [arr[:, j] for j in range(arr.shape[1])]
        kinds = [arr.dtype.kind] * arr.shape[1]
        if arr.dtype.kind == "O":
            kinds = [_object_kind(c) for c in cols]
    if n == 0:
        raise ValueError(f"{name} is empty (0 samples); at least one sample is required")
    if len(cols) == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape=({n}, 0)) while a minimum of 1 is required; pass "
            f"at least one column"
        )
    if "c" in kinds:
        j = kinds.index("c")
        raise ValueError(
            f"Complex data not supported: {name} column {j} holds complex numbers; pass the real "
            "and imaginary parts (or the modulus and the angle) as separate columns"
        )
    return cols, kinds, n


def _frame_kind(dt, col):
    """The kind of a DataFrame column, from its pandas dtype: a nullable ``Int64`` or ``boolean``
    column with a missing value converts to float NaN or to objects, and its values alone would
    make it continuous (an integer column read as a Gaussian) or a set of labels; the dtype says
    integer codes. A plain ``object`` column is classified by its values, as for arrays."""
    if str(dt) == "category":
        return "category"
    kind = getattr(dt, "kind", None)
    if kind == "O" and isinstance(dt, np.dtype):  # object: numbers (and None / NaN) or labels
        return _object_kind(col)
    return kind if isinstance(kind, str) and len(kind) == 1 else col.dtype.kind


def _object_kind(col):
    """Classify an object column: 'f' if every non-missing entry is a real number, else 'O'."""
    vals = [v for v in col if not _is_missing_obj(v)]
    if vals and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in vals):
        if all(isinstance(v, numbers.Integral) for v in vals):
            return "i"
        return "f"
    return "O"


def _is_missing_obj(v) -> bool:
    """None, a float NaN, or pandas.NA (nullable string / boolean / Int columns)."""
    return v is None or (isinstance(v, float) and np.isnan(v)) or type(v).__name__ == "NAType"


def _object_floats(col):
    """An object column of numbers and missing markers (None, NaN, pandas.NA) as float64."""
    return np.array([np.nan if _is_missing_obj(v) else v for v in col], dtype=float)


def _check_spread(values, columns, *, overflow: bool = True, X=None) -> None:
    """The squared spread of each training column must be a normal number of the values' dtype:
    a spread below ~sqrt(tiny / eps) makes the class variances underflow (the predictor was then
    read as constant and silently dropped: float32 from a spread of ~1e-19), one above
    ~sqrt(max / n) makes them overflow (NaN / inf standard deviations). One min / max pass.

    With the source table ``X``, a column that is constant in ``values`` but varies in X (all of
    its values below float32's smallest subnormal, ~1e-45, e.g. p-values of 1e-80: cast to 0 and
    silently dropped as constant) is refused too; only such columns are re-read (usually none)."""
    if values.size == 0:
        return
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: no spread to check
        lo, hi = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
    spread = hi.astype(np.float64) - lo.astype(np.float64)
    info = np.finfo(values.dtype)
    fix = "or enable float64 (jax.config.update('jax_enable_x64', True))"
    with np.errstate(over="ignore"):
        sq = spread * spread
    small = np.flatnonzero((spread > 0) & (sq < float(info.tiny) / float(info.eps)))
    large = np.flatnonzero(sq * values.shape[0] > float(info.max) / 4) if overflow else small[:0]
    for bad, word in ((small, "underflow"), (large, "overflow")):
        if bad.size:
            t = int(bad[0])
            raise ValueError(
                f"continuous column {int(columns[t])} spans {spread[t]:g}: its variances {word} "
                f"in {values.dtype.name}; rescale the column (e.g. standardize it), {fix}"
            )
    flat = np.flatnonzero(spread == 0)
    if X is None or values.dtype == np.float64 or not flat.size:
        return
    arr = _plain_numeric(X)
    cols = None if arr is not None else check_X_2d(X)[0]
    for t in flat.tolist():
        j = int(columns[t])
        col = arr[:, j] if arr is not None else cols[j]
        col = _object_floats(col) if col.dtype.kind == "O" else col.astype(np.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            c_lo, c_hi = np.nanmin(col), np.nanmax(col)
        if c_hi > c_lo:
            raise ValueError(
                f"continuous column {j} spans {c_hi - c_lo:g} (largest magnitude "
                f"{np.nanmax(np.abs(col)):g}), which {values.dtype.name} rounds to a constant; "
                f"rescale the column (e.g. standardize it or take its log), {fix}"
            )


def _sort_labels(labels):
    try:
        return np.array(sorted(labels), dtype=object)
    except TypeError:
        return np.array(sorted(labels, key=lambda v: (type(v).__name__, repr(v))), dtype=object)


def feature_count_error(n_got: int, n_expected: int, owner: str | None = None) -> ValueError:
    """The error for a table with another number of columns than at fit, in scikit-learn's
    wording ("X has 2 features, but NaiveBayes is expecting 3 features as input"), which its
    checks and its users recognize."""
    return ValueError(
        f"X has {n_got} features, but {owner or 'the model'} is expecting {n_expected} features "
        "as input (the number of columns at fit)"
    )


class FeatureEncoder:
    """Splits a table into discrete codes and continuous values and remembers the encoding.

    Attributes (after `fit`):
      n_features_in_: number of columns.
      discrete_idx_, continuous_idx_: user column indices of the discrete / continuous blocks.
      n_states_: list of state counts of the discrete columns.
      categories_: per discrete column, the array of labels (label-encoded columns) or None (codes).
      feature_names_in_: the column names of a training DataFrame whose names are all strings,
        else None. A DataFrame passed later must have the same names in the same order.
    """

    def __init__(
        self,
        discrete="auto",
        n_states=None,
        missing="error",
        unseen="error",
        offers=None,
        owner=None,
    ):
        self.discrete = discrete
        self.n_states = n_states
        self.missing = missing
        self.unseen = unseen
        # the options the owning estimator exposes (error messages only suggest those);
        # None: a stand-alone encoder, which has them all
        self.offers = ("missing", "unseen", "n_states") if offers is None else tuple(offers)
        self.owner = owner  # the owning estimator's class name, for error messages

    def __repr__(self) -> str:
        defaults = {"discrete": "auto", "n_states": None, "missing": "error", "unseen": "error"}
        args = ", ".join(
            f"{k}={getattr(self, k)!r}"
            for k, d in defaults.items()
            if not (isinstance(getattr(self, k), str | type(None)) and getattr(self, k) == d)
        )
        if not hasattr(self, "n_states_"):
            return f"FeatureEncoder({args})"
        # fitted: what it found, so that a model's encoder_ shows the columns it decided on
        states = [int(m) for m in self.n_states_]
        return (
            f"FeatureEncoder({args}) fitted on {self.n_features_in_} columns: "
            f"discrete {self.discrete_idx_.tolist()} with n_states {states}, "
            f"continuous {self.continuous_idx_.tolist()}"
        )

    def _missing_fix(self, what: str) -> str:
        if "missing" in self.offers:
            return f"pass missing='ignore' to {what}, or impute them"
        return "impute them (this estimator has no missing='ignore' option)"

    def _unseen_fix(self, labels: bool = False) -> str:
        fixes = []
        if "unseen" in self.offers:
            fixes.append("pass unseen='ignore' to drop that term (uniform likelihood)")
        if "n_states" in self.offers and not labels:  # n_states cannot name a new text label
            fixes.append("declare all states with n_states")
        return " or ".join(fixes) if fixes else "include every category in the training data"

    # ------------------------------------------------------------------ parameters
    def _check_params(self):
        if self.missing not in ("error", "ignore"):
            raise ValueError(f"missing must be 'error' or 'ignore'; got {self.missing!r}")
        if self.unseen not in ("error", "ignore"):
            raise ValueError(f"unseen must be 'error' or 'ignore'; got {self.unseen!r}")

    def _discrete_mask(self, kinds, p):
        d = self.discrete
        if isinstance(d, str):
            if d == "auto":
                return np.array([k in "iubO" or k == "category" or k in ("U", "S") for k in kinds])
            if d == "all":
                return np.ones(p, bool)
            if d == "none":
                return np.zeros(p, bool)
            raise ValueError(
                f"discrete must be 'auto', 'all', 'none', a boolean mask or a list of "
                f"column indices; got {d!r}"
            )
        arr = np.asarray(d)
        if arr.dtype == bool:
            if arr.shape != (p,):
                raise ValueError(
                    f"discrete mask must have length n_features={p}; got shape {arr.shape}"
                )
            return arr
        if arr.size == 0:
            return np.zeros(p, bool)
        if arr.dtype.kind not in "iu" or arr.ndim != 1:
            raise TypeError(
                f"discrete must be a boolean mask or a 1-D list of integer column "
                f"indices; got {d!r}"
            )
        if arr.min() < -p or arr.max() >= p:
            raise ValueError(
                f"discrete indices must lie in [0, {p}); got {arr.tolist()}. If a wrapper "
                "dropped columns before this fit (RFE, SelectFromModel), the indices still name "
                "the original columns (and such wrappers pass X as one numeric array, whose "
                "columns discrete='auto' reads as continuous): select the columns outside the "
                "wrapper, e.g. by feature_importances_, and refit with their own indices"
            )
        mask = np.zeros(p, bool)
        mask[arr] = True
        return mask

    # ------------------------------------------------------------------ fitting
    def fit(self, X):
        """Learn the column kinds, the discrete columns' states (label-encoded columns: their
        sorted labels; integer code columns: ``n_states`` or max + 1) and the column names of
        ``X`` (n, p); returns ``self``. `transform` then encodes tables the same way."""
        self._check_params()
        cols, kinds, _ = check_X_2d(X)
        p = len(cols)
        self.n_features_in_ = p
        self.feature_names_in_ = _frame_names(X)
        mask = self._discrete_mask(kinds, p)
        self.discrete_idx_ = np.flatnonzero(mask)
        self.continuous_idx_ = np.flatnonzero(~mask)
        for j in self.continuous_idx_:
            if kinds[j] in ("O", "U", "S", "category"):
                raise ValueError(
                    f"column {j} holds non-numeric values but is marked continuous; "
                    f"mark it discrete (discrete=[..., {j}]) or convert it to numbers"
                )
        q = len(self.discrete_idx_)
        given = self._given_n_states(q)
        if self._fit_numeric_fast(X, given):
            return self
        self.categories_ = []
        self.n_states_ = []
        for t, j in enumerate(self.discrete_idx_):
            col, kind = cols[j], kinds[j]
            if kind in ("O", "U", "S", "category"):
                vals = [v for v in col if not _is_missing_obj(v)]
                self._check_missing_obj(col, j)
                try:
                    distinct = set(vals)
                except TypeError:  # a dict or list among the labels
                    raise _unhashable_error(f"column {j}", vals) from None
                cats = _sort_labels(distinct)
                if given is not None and given[t] is not None and given[t] < len(cats):
                    raise ValueError(
                        f"n_states[{t}]={given[t]} but column {j} has {len(cats)} distinct labels"
                    )
                self.categories_.append(cats)
                self.n_states_.append(max(len(cats), given[t] if given and given[t] else 0, 1))
            else:
                codes = self._numeric_codes(col, j, fit=True)
                mx = int(codes.max()) + 1 if codes.size and codes.max() >= 0 else 1
                if given is None or given[t] is None:
                    _check_inferred_states(j, mx)
                if given is not None and given[t] is not None:
                    if mx > given[t]:
                        raise ValueError(
                            f"column {j} has code {mx - 1} but n_states[{t}]="
                            f"{given[t]}; codes must lie in [0, n_states)"
                        )
                    mx = given[t]
                self.categories_.append(None)
                self.n_states_.append(mx)
        return self

    def _given_n_states(self, q):
        if self.n_states is None:
            return None
        if isinstance(self.n_states, dict | str | bytes | numbers.Number) or not hasattr(
            self.n_states, "__len__"
        ):
            raise TypeError(
                "n_states must be a list with one entry per discrete column (e.g. [3, 3], or "
                f"None entries to infer them); got {self.n_states!r}"
            )
        ns = list(self.n_states)
        if len(ns) != q:
            raise ValueError(f"n_states has {len(ns)} entries but there are {q} discrete columns")
        for v in ns:
            if v is not None and (
                isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= v
            ):
                raise ValueError(f"n_states entries must be positive integers; got {v!r}")
            if v is not None and v > _CODE_LIMIT:
                raise ValueError(f"n_states entries must be below 2**31; got {v!r}")
        # plain ints (NumPy integers would leak into static shapes and hashing)
        return [None if v is None else int(v) for v in ns]

    def _check_missing_obj(self, col, j):
        if self.missing == "error" and any(_is_missing_obj(v) for v in col):
            raise ValueError(
                f"column {j} has missing values (None/NaN); "
                + self._missing_fix("drop those terms")
            )

    def _numeric_codes(self, col, j, fit):
        arr = np.asarray(col)
        if arr.dtype.kind == "O":
            arr = np.array([np.nan if _is_missing_obj(v) else v for v in arr], dtype=float)
        if arr.dtype.kind == "b":
            arr = arr.astype(np.int64)
        if arr.dtype.kind == "f":
            nan = np.isnan(arr)
            if np.isinf(arr).any():
                raise ValueError(f"discrete column {j} contains inf; codes must be integers >= 0")
            if nan.any():
                if self.missing == "error":
                    raise ValueError(
                        f"discrete column {j} has missing values (NaN); "
                        + self._missing_fix("drop those terms")
                    )
            fin = arr[~nan]
            if np.any(fin != np.round(fin)):
                bad = fin[fin != np.round(fin)][0]
                raise ValueError(
                    f"discrete column {j} holds fractional values (e.g. {bad}); "
                    f"discrete codes must be whole numbers — round them, or mark the "
                    f"column continuous"
                )
            if fin.size and np.abs(fin).max() > _CODE_LIMIT:
                bad = fin[np.abs(fin) > _CODE_LIMIT][0]
                raise ValueError(
                    f"discrete column {j} holds {bad:g}, beyond the code range [0, 2**31); "
                    f"recode the column to 0..K-1 (or pass its labels as strings), or mark it "
                    f"continuous"
                )
            codes = np.where(nan, _MISSING_CODE, np.round(np.where(nan, 0, arr))).astype(np.int64)
        else:
            if arr.dtype.kind not in "iu":
                raise TypeError(
                    f"discrete column {j} has dtype {arr.dtype}; expected integer codes or labels"
                )
            if arr.size and (
                arr.max() > _CODE_LIMIT or (arr.dtype.kind == "i" and arr.min() < -_CODE_LIMIT)
            ):
                bad = arr.max() if arr.max() > _CODE_LIMIT else arr.min()
                raise ValueError(
                    f"discrete column {j} holds {bad}, beyond the code range [0, 2**31); "
                    f"recode the column to 0..K-1 (or pass its labels as strings), or mark it "
                    f"continuous"
                )
            codes = arr.astype(np.int64)
        neg = codes < 0
        if neg.any():
            allowed = (codes == _MISSING_CODE) if self.missing == "ignore" else np.zeros_like(neg)
            if (neg & ~allowed).any():
                bad = codes[neg & ~allowed][0]
                if self.missing == "ignore":
                    extra = ""
                elif "missing" in self.offers:
                    extra = " (or pass missing='ignore' and code missing values as -1)"
                elif bad != _MISSING_CODE:
                    extra = ""
                else:  # -1 is the missing code elsewhere in the library
                    extra = (
                        "; if -1 marks missing values, impute them (this estimator has no "
                        "missing='ignore' option)"
                    )
                if isinstance(self.discrete, str) and self.discrete == "auto":
                    extra += (
                        f"; discrete='auto' takes integer columns as category codes: if column "
                        f"{j} is a quantity, pass it as floats or give discrete a mask or list "
                        f"without it"
                    )
                raise ValueError(
                    f"discrete column {j} has negative code {bad}; codes must lie in "
                    f"[0, n_states){extra}"
                )
        return codes

    def _code_range(self, blk, lo=None, hi=None, bound=None):
        """Running per-column (min, max) of a chunk of numeric discrete columns for the vectorized
        path; None when some value needs the per-column path (non-finite or fractional floats,
        codes beyond the int range), which then raises or handles it exactly as documented.
        With ``bound`` (the smallest state count) a chunk whose codes all lie in [0, bound) is
        accepted from its overall min and max (cheaper than per-column ones) and left as is."""
        if blk.dtype.kind == "f":
            if not np.isfinite(blk.sum()) or (blk != np.round(blk)).any():
                return None
        if bound is not None and lo is not None and 0 <= blk.min() and blk.max() < bound:
            return lo, hi
        bmin, bmax = blk.min(0), blk.max(0)
        if blk.dtype.kind == "f" and ((bmax >= 2**31).any() or (bmin < -(2**31)).any()):
            return None
        if blk.dtype.kind == "u" and bmax.max() > np.iinfo(np.int64).max:
            return None
        bmin, bmax = bmin.astype(np.int64), bmax.astype(np.int64)
        if lo is not None:
            bmin, bmax = np.minimum(lo, bmin), np.maximum(hi, bmax)
        return bmin, bmax

    def _codes_allowed(self, lo):
        """Whether every column minimum is a valid code (or -1 = missing with missing='ignore')."""
        return bool((lo >= (_MISSING_CODE if self.missing == "ignore" else 0)).all())

    def _fit_numeric_fast(self, X, given):
        """Vectorized `fit` of the discrete columns of a plain numeric array (False: the loop)."""
        arr = _plain_numeric(X)
        if arr is None:
            return False
        idx = self.discrete_idx_
        lo = hi = np.zeros(0, np.int64)
        if len(idx):
            lo = hi = None
            for a, b in _row_chunks(arr.shape[0], arr.shape[1] * arr.itemsize):
                rng = self._code_range(_take_columns(arr[a:b], idx, arr.shape[1]), lo, hi)
                if rng is None:
                    return False
                lo, hi = rng
        if not self._codes_allowed(lo):
            return False
        n_states = []
        for t in range(len(idx)):
            mx = int(hi[t]) + 1 if hi[t] >= 0 else 1
            if (given is None or given[t] is None) and mx > _MAX_INFERRED_STATES:
                return False  # the loop raises the documented error
            if given is not None and given[t] is not None:
                if mx > given[t]:
                    return False  # the loop raises the documented error
                mx = given[t]
            n_states.append(mx)
        self.categories_ = [None] * len(idx)
        self.n_states_ = n_states
        return True

    def _transform_numeric_fast(self, arr, dtype, code_dtype):
        """Vectorized `transform` of a plain numeric array: one chunked pass that copies into
        aligned outputs and checks each chunk while it is in cache. None = use the column loop
        (missing values, unseen or invalid codes, non-finite values: it raises or encodes them)."""
        n, p = arr.shape
        didx, cidx = self.discrete_idx_, self.continuous_idx_
        q, r = len(didx), len(cidx)
        if any(c is not None for c in self.categories_):
            return None
        codes = _aligned_empty((n, q), code_dtype)
        values = _aligned_empty((n, r), dtype)
        lo = hi = np.zeros(q, np.int64)  # a chunk inside [0, min n_states) leaves them as they are
        bound = min(self.n_states_, default=0)
        for a, b in _row_chunks(n, p * arr.itemsize):
            blk = arr[a:b]
            if q:
                d = _take_columns(blk, didx, p)
                rng = self._code_range(d, lo, hi, bound)
                if rng is None:
                    return None
                lo, hi = rng
                codes[a:b] = d
            if r:
                c = _take_columns(blk, cidx, p)
                v = values[a:b]
                with np.errstate(over="ignore"):  # an overflow makes inf: the loop reports it
                    v[...] = c if c.dtype.kind == "f" else c.astype(np.float64)
                if not np.isfinite(v.sum()):
                    # NaN is allowed with missing='ignore' (inf never); a finite sum proves neither.
                    if self.missing == "error" or np.isinf(v).any():
                        return None
        if q and (not self._codes_allowed(lo) or (hi >= np.asarray(self.n_states_)).any()):
            return None
        return codes, values

    # ------------------------------------------------------------------ transform
    def transform(self, X, dtype=np.float32, fit=False, code_dtype=np.int32):
        """Encode X with the fitted encoding; returns (codes int32 (n, q), values float (n, r)).

        ``code_dtype`` may narrow the codes (e.g. int8 when every state count is below 128).
        ``fit=True`` (training rows) also checks that each continuous column's variance is
        representable in ``dtype``.
        """
        check_feature_names(getattr(self, "feature_names_in_", None), X)
        codes, values = self._transform(X, dtype, fit, code_dtype)
        if fit:
            _check_spread(values, self.continuous_idx_, X=X)
        return codes, values

    def _transform(self, X, dtype, fit, code_dtype):
        arr = _plain_numeric(X)
        if arr is not None and arr.shape[1] == self.n_features_in_:
            out = self._transform_numeric_fast(arr, dtype, code_dtype)
            if out is not None:
                return out
        cols, kinds, n = check_X_2d(X)
        if len(cols) != self.n_features_in_:
            raise feature_count_error(len(cols), self.n_features_in_, getattr(self, "owner", None))
        q = len(self.discrete_idx_)
        codes = _aligned_empty((n, q), code_dtype)
        for t, j in enumerate(self.discrete_idx_):
            cats = self.categories_[t]
            if cats is not None:
                col = cols[j]
                self._check_missing_obj(col, j)
                lookup = {v: i for i, v in enumerate(cats)}
                out = np.empty(n, np.int64)
                try:
                    for r, v in enumerate(col):
                        if _is_missing_obj(v):
                            out[r] = _MISSING_CODE
                        else:
                            out[r] = lookup.get(v, -2)
                except TypeError:
                    raise _unhashable_error(f"column {j}", col) from None
                unseen = out == -2
            else:
                out = self._numeric_codes(cols[j], j, fit=False)
                unseen = out >= self.n_states_[t]
            if unseen.any():
                if self.unseen == "error" or fit:
                    ex = np.asarray(cols[j])[np.flatnonzero(unseen)[:1]].tolist()[0]
                    raise ValueError(
                        f"column {j} has a category never seen in training ({ex!r}); "
                        + self._unseen_fix(labels=cats is not None)
                    )
                out = np.where(unseen, _MISSING_CODE, out)
            codes[:, t] = out
        r = len(self.continuous_idx_)
        values = _aligned_empty((n, r), dtype)
        for t, j in enumerate(self.continuous_idx_):
            col = np.asarray(cols[j])
            fix = "convert it to numbers (dates e.g. to seconds since an epoch) or mark it discrete"
            if col.dtype.kind == "O":
                try:
                    col = _object_floats(col)
                except (TypeError, ValueError):
                    bad = next((v for v in col if not isinstance(v, numbers.Real)), None)
                    raise TypeError(
                        f"continuous column {j} holds {type(bad).__name__} values; {fix}"
                    ) from None
            if col.dtype.kind not in "fiub":
                raise TypeError(f"continuous column {j} has dtype {col.dtype}; {fix}")
            col = col.astype(np.float64)
            if np.isinf(col).any():
                raise ValueError(f"continuous column {j} contains inf; remove or clip those values")
            if np.isnan(col).any() and self.missing == "error":
                raise ValueError(
                    f"continuous column {j} contains NaN; "
                    + self._missing_fix("drop those terms (exact marginalization)")
                )
            with np.errstate(over="ignore"):  # an overflow is reported just below
                values[:, t] = col
            if np.isinf(values[:, t]).any():
                big = col[np.isinf(values[:, t])][0]
                raise ValueError(
                    f"continuous column {j} holds {big:g}, beyond the range of {values.dtype}; "
                    f"rescale the column, or enable float64 "
                    f"(jax.config.update('jax_enable_x64', True))"
                )
        return codes, values

    def grow(self, X):
        """Extend the encoding with states first seen in X (for `partial_fit`).

        Returns the list of state counts before growth (so the caller can pad its count arrays).
        """
        old = list(self.n_states_)
        check_feature_names(getattr(self, "feature_names_in_", None), X)
        cols, kinds, _ = check_X_2d(X)
        if len(cols) != self.n_features_in_:
            raise feature_count_error(len(cols), self.n_features_in_, getattr(self, "owner", None))
        fixed = self._given_n_states(len(self.discrete_idx_))
        for t, j in enumerate(self.discrete_idx_):
            cats = self.categories_[t]
            if cats is not None:
                self._check_missing_obj(cols[j], j)
                known = set(cats.tolist())
                new = {v for v in cols[j] if not _is_missing_obj(v) and v not in known}
                if new:
                    grown = len(cats) + len(new)
                    if fixed is not None and fixed[t] is not None and grown > fixed[t]:
                        raise ValueError(
                            f"column {j} would have {grown} categories (new: "
                            f"{_sort_labels(new).tolist()}) but n_states[{t}]={fixed[t]}"
                        )
                    self.categories_[t] = np.concatenate([cats, _sort_labels(new)])
                    self.n_states_[t] = max(self.n_states_[t], len(self.categories_[t]))
            else:
                codes = self._numeric_codes(cols[j], j, fit=True)
                mx = int(codes.max()) + 1 if codes.size else 0
                if fixed is None or fixed[t] is None:
                    _check_inferred_states(j, mx)
                if fixed is not None and fixed[t] is not None and mx > fixed[t]:
                    raise ValueError(f"column {j} has code {mx - 1} but n_states[{t}]={fixed[t]}")
                self.n_states_[t] = max(self.n_states_[t], mx)
        return old


def one_class_error(labels, need: str, name: str = "y") -> ValueError:
    """The error for labels holding a single class, in scikit-learn's wording ("y has only one
    class (0); ..."); ``need`` says why two are needed and how to give them."""
    only = ", ".join(repr(v.item() if isinstance(v, np.generic) else v) for v in labels)
    return ValueError(f"{name} has only one class ({only}); {need}")


def _shown(labels, limit: int = 20) -> list:
    """Labels for an error message: all of them, or the first ``limit`` and "..."."""
    shown = np.asarray(labels).tolist()
    return shown if len(shown) <= limit else [*shown[:limit], "..."]


def _label_family(arr: np.ndarray) -> str | None:
    """The family of labels all of one kind, "text" or "number"; None for mixed objects or none."""
    if arr.dtype.kind in "US":
        return "text"
    if arr.dtype.kind in "biuf":
        return "number"
    if arr.dtype.kind == "O" and arr.size:
        texts = {isinstance(v, str | bytes) for v in arr.ravel().tolist()}
        if texts == {True}:
            return "text"
        if all(isinstance(v, numbers.Number) for v in arr.ravel().tolist()):
            return "number"
    return None


def check_score_labels(y, n_samples: int, classes) -> np.ndarray:
    """True labels (n,) for scoring a fitted model's predictions: checked as in `fit`
    (`encode_labels`: shape, length, NaN, complex, fractional floats). Labels outside ``classes``
    are allowed (they count as errors), but text labels for a model of numeric classes, or the
    reverse, are a ValueError (as scikit-learn's metrics raise): they would score 0 silently."""
    encode_labels(y, n_samples)
    arr = np.asarray(y)
    if arr.ndim == 2:
        arr = arr.ravel()
    classes = np.asarray(classes)
    got, want = _label_family(arr), _label_family(classes)
    if got and want and got != want:
        what = {"text": "text labels", "number": "numbers"}
        raise ValueError(
            f"Mix of label input types (string and number): y holds {what[got]}, but the "
            f"model's classes_ are {what[want]} {_shown(classes)}; pass the labels the model was "
            "fitted on"
        )
    return arr


def check_same_classes(classes, classes_) -> None:
    """A later `partial_fit` call's ``classes`` must be the model's ``classes_``, in any order
    (scikit-learn compares the sorted labels)."""
    given, _ = encode_labels(classes, None, name="classes")
    if not np.array_equal(given, classes_):
        raise ValueError(
            f"classes differ from the first partial_fit call: got {_shown(given)}, the model has "
            f"{_shown(classes_)}"
        )


def first_partial_fit_classes(y, classes, n_samples: int, need: str) -> np.ndarray:
    """The sorted labels of a first `partial_fit` call: ``classes`` when given, else y's labels;
    at least two of them (``need`` says why and how to give them, as in `one_class_error`)."""
    if classes is None:
        labels, _ = encode_labels(y, n_samples)
    else:
        labels, _ = encode_labels(classes, None, name="classes")
    if len(labels) < 2:
        raise one_class_error(labels, need, "y" if classes is None else "classes")
    return labels


def encode_in_classes(y, classes, n_samples: int | None = None, name: str = "y") -> np.ndarray:
    """Codes (n,) int32 of labels ``y`` in a model's ``classes`` (its ``classes_``, from an earlier
    `partial_fit` call or the ``classes`` argument): ``y`` is checked as by `encode_labels` (shape,
    length, NaN, complex, fractional floats), and a label outside ``classes`` is a ValueError
    that lists them and says how to declare every label."""
    labels, codes = encode_labels(y, n_samples, name)
    lookup = {v: i for i, v in enumerate(np.asarray(classes).tolist())}
    pos = np.empty(len(labels), np.int32)
    for j, v in enumerate(labels.tolist()):
        if v not in lookup:
            raise ValueError(
                f"{name} contains the label {v!r} not in classes_ {_shown(classes)}; pass all "
                "labels with classes=[...] on the first partial_fit call"
            )
        pos[j] = lookup[v]
    return pos[codes]


def encode_labels(y, n_samples: int | None = None, name: str = "y"):
    """Encode class labels like scikit-learn: ``classes_`` sorted, ``y_enc`` in [0, c)."""
    if y is None:
        if name == "y":  # scikit-learn's wording, which its estimator checks look for
            raise ValueError(
                "this classifier requires y to be passed, but the target y is None; pass the "
                "class labels, one per sample"
            )
        raise ValueError(f"{name} is None; pass the class labels, one per sample")
    arr = np.asarray(y)
    if arr.dtype.kind in "US" and not isinstance(y, np.ndarray):
        # NumPy turns [1, "a"] into ["1", "a"]: predictions would come back as text
        texts = {isinstance(v, str | bytes) for v in np.asarray(y, dtype=object).ravel()}
        if len(texts) > 1:
            raise TypeError(
                f"{name} mixes text and numeric labels (e.g. [1, 'a']); use one type for all labels"
            )
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (n_samples,); got shape {arr.shape}")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(
            f"X and {name} have mismatched lengths: X has {n_samples} samples, "
            f"{name} has {arr.shape[0]}"
        )
    if arr.dtype.kind == "c":
        raise ValueError(
            f"Complex data not supported: {name} holds complex numbers; class labels are "
            "integers, strings or other categories"
        )
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf; every sample needs a class label")
    fractional = arr != np.round(arr) if arr.dtype.kind == "f" else None
    if fractional is not None and fractional.any():
        # a continuous target would become one class per distinct value (scikit-learn refuses it)
        bad = arr[fractional][0]
        raise ValueError(
            f"{name} holds non-integer floats (e.g. {float(bad)!r}): a continuous target, not "
            f"class labels; these are classifiers. If the values really are labels, pass them "
            f"as strings or integers"
        )
    if arr.dtype.kind == "O" and any(_is_missing_obj(v) for v in arr):
        raise ValueError(f"{name} contains None/NaN; every sample needs a class label")
    if arr.dtype.kind in "iu" and arr.size:
        # Integer labels in a modest range: bincount + lookup, the same result as np.unique.
        lo, hi = arr.min(), arr.max()
        if int(hi) - int(lo) < (1 << 20) and int(hi) <= np.iinfo(np.intp).max:
            shifted = arr.astype(np.intp) - int(lo)
            present = np.bincount(shifted, minlength=int(hi) - int(lo) + 1) > 0
            classes = (np.flatnonzero(present) + int(lo)).astype(arr.dtype)
            lut = (np.cumsum(present) - 1).astype(np.int32)
            return classes, lut[shifted]
    try:
        classes, y_enc = np.unique(arr, return_inverse=True)
    except TypeError:
        try:
            distinct = set(arr.tolist())
        except TypeError:  # a dict or list among the labels
            raise _unhashable_error(name, arr.tolist()) from None
        classes = _sort_labels(distinct)
        lookup = {v: i for i, v in enumerate(classes)}
        y_enc = np.array([lookup[v] for v in arr])
    return classes, y_enc.astype(np.int32)


def check_sample_weight(sample_weight, n: int, dtype=np.float32):
    """Validate sample weights: shape (n,), finite, non-negative, positive total."""
    if sample_weight is None:
        return np.ones(n, dtype)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},) to match X; got {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("sample_weight contains NaN or inf")
    if (w < 0).any():
        raise ValueError("sample_weight must be non-negative")
    if w.sum() <= 0:
        raise ValueError(
            "sample_weight is zero for every sample (it sums to 0); at least one sample needs "
            "positive weight"
        )
    with np.errstate(over="ignore"):  # an overflow is reported just below
        out = w.astype(dtype)
    if not np.isfinite(out.sum()):
        raise ValueError(
            f"sample_weight (sum {w.sum():g}) overflows {np.dtype(dtype).name}; rescale the "
            f"weights (only their ratios matter to the fit)"
        )
    return out
