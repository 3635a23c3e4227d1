"""Loaders of the real data sets shipped in ``jaxnb/datasets/data`` (provenance in its README)."""

from __future__ import annotations

import csv
import os
from importlib import resources
from typing import NamedTuple

import numpy as np

__all__ = ["CsvTable", "load_csv", "load_diabetes", "load_soybean_small", "load_flags", "read_csv"]

#: Cells read as missing by `load_csv` (after stripping blanks).
MISSING_CELLS = ("", "?", "NA", "N/A", "nan", "NaN", "null")


def read_csv(name: str):
    """Header and rows (list of lists of str) of a shipped CSV file."""
    with resources.files("jaxnb.datasets").joinpath("data", name).open("r", newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def load_diabetes(quartile: int = 2, return_response: bool = False):
    r"""Diabetes data (N = 442, 10 numeric predictors) with a binarized response (fsNB Table 2).

    The class is 1 when the disease-progression response exceeds its ``quartile``-th quartile
    (1, 2 or 3), giving class priors of about (1/4, 3/4), (1/2, 1/2) and (3/4, 1/4).

    Returns:
      X (442, 10) float64, y (442,) int; with ``return_response`` also the raw response.
    """
    if quartile not in (1, 2, 3):
        raise ValueError(f"quartile must be 1, 2 or 3; got {quartile!r}")
    header, rows = read_csv("diabetes.csv")
    data = np.array(rows, dtype=np.float64)
    X, response = data[:, :-1], data[:, -1]
    tau = np.quantile(response, quartile / 4)
    y = (response > tau).astype(np.int64)
    if return_response:
        return X, y, response
    return X, y


def load_soybean_small(drop_constant: bool = True):
    """UCI Soybean (Small): 47 cases, 4 classes; 21 non-constant nominal predictors by default.

    Returns:
      X (47, 21 or 35) int codes, y (47,) str labels, feature names.
    """
    header, rows = read_csv("soybean_small.csv")
    X = np.array([r[:-1] for r in rows], dtype=np.int64)
    y = np.array([r[-1] for r in rows])
    names = header[:-1]
    if drop_constant:
        keep = (X != X[0]).any(0)
        X = X[:, keep]
        names = [n for n, k in zip(names, keep, strict=True) if k]
    return X, y, names


_FLAGS_NUMERIC = (
    "area",
    "population",
    "bars",
    "stripes",
    "colours",
    "circles",
    "crosses",
    "saltires",
    "quarters",
    "sunstars",
)


def load_flags():
    """UCI Flags: 194 countries, 28 mixed predictors, religion (8 UCI codes) as the response.

    Numeric counts/areas are returned as float columns; nominal and boolean ones as object columns
    (so ``discrete="auto"`` treats them as discrete). The identifier ``country`` is dropped.

    Returns:
      X (194, 28) object array, y (194,) int religion codes 0..7, feature names, numeric mask.
    """
    header, rows = read_csv("flags.csv")
    names = header[1:-1]
    X = np.empty((len(rows), len(names)), dtype=object)
    numeric = np.array([n in _FLAGS_NUMERIC for n in names])
    for r, row in enumerate(rows):
        for j, v in enumerate(row[1:-1]):
            X[r, j] = float(v) if numeric[j] else v
    y = np.array([int(r[-1]) for r in rows])
    return X, y, names, numeric


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


class CsvTable(NamedTuple):
    """A table read by `load_csv`.

    Attributes:
      X: (n, p) float64: continuous values (NaN = missing) and discrete codes 0..M-1 (-1 =
        missing), the codes indexing ``categories``.
      y: (n,) str class labels.
      names: (p,) predictor names.
      discrete: (p,) bool mask of the discrete predictors.
      categories: per predictor, the tuple of its labels (discrete) or None (continuous).
    """

    X: np.ndarray
    y: np.ndarray
    names: list
    discrete: np.ndarray
    categories: list

    @property
    def n_states(self) -> list[int]:
        """Number of labels of each discrete predictor (in column order)."""
        return [len(c) for c in self.categories if c is not None]

    @property
    def estimator_params(self) -> dict:
        """``discrete`` and ``n_states`` for any jaxnb estimator: every label of the file is a
        state, so a fold that misses a label still knows it (no "unseen category" at predict
        time)."""
        return {"discrete": self.discrete.copy(), "n_states": self.n_states}


def _label_order(labels):
    try:
        return sorted(labels, key=float)
    except ValueError:
        return sorted(labels)


def load_csv(
    path, target=None, discrete="auto", missing_cells=MISSING_CELLS, delimiter=","
) -> CsvTable:
    r"""A table from a CSV (or TSV, ...) file with a header row, ready for any jaxnb estimator.

    Column kinds: with ``discrete="auto"`` a column is continuous when every non-missing cell is a
    number and discrete otherwise; ``"all"`` / ``"none"`` make every predictor discrete /
    continuous (``"none"`` fails on a non-numeric column), and a list of column names makes exactly
    those discrete (numbers in them are labels: ``"3"`` is a state, not a value). Each discrete
    column is coded 0..M-1 over the labels of the whole file (numeric labels in numeric order),
    so pass ``table.estimator_params`` (``discrete`` and ``n_states``) to the estimator. Missing
    cells (``missing_cells``, after stripping blanks) become NaN (continuous) or code -1
    (discrete); estimators reject them unless fitted with ``missing="ignore"``.

    Args:
      path: CSV file (comma-separated, header row first).
      target: the class column, by name or index (default: the last column); its cells are the
        class labels (strings) and must not be missing.
      discrete: ``"auto"``, ``"all"``, ``"none"`` or a list of column names.
      missing_cells: strings read as missing.
      delimiter: the cell separator (``","``; ``"\t"`` for TSV, ``";"``...).

    Returns:
      A `CsvTable` (X, y, names, discrete, categories; ``n_states``, ``estimator_params``).
    """
    path = os.fspath(path)
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"delimiter must be one character; got {delimiter!r}")
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = [r for r in csv.reader(f, delimiter=delimiter) if any(c.strip() for c in r)]
    if len(rows) < 2:
        raise ValueError(f"{path}: needs a header row and at least one data row")
    header = [h.strip() for h in rows[0]]
    body = rows[1:]
    bad = [i + 2 for i, r in enumerate(body) if len(r) != len(header)]
    if bad:
        raise ValueError(
            f"{path}: rows {bad[:5]} have a different number of cells than the header "
            f"({len(header)})"
        )
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise ValueError(f"{path}: column names {dup} appear more than once; rename them")
    if len(header) < 2:
        raise ValueError(
            f"{path}: one column only ({header}); is the separator right (delimiter={delimiter!r})?"
        )
    if target is None:
        t = len(header) - 1
    elif isinstance(target, bool):
        raise TypeError(f"target must be a column name or index; got {target!r}")
    elif isinstance(target, int | np.integer):
        if not -len(header) <= int(target) < len(header):
            raise ValueError(f"target index {target} out of range for {len(header)} columns")
        t = int(target) % len(header)
    elif target in header:
        t = header.index(target)
    else:
        raise ValueError(f"target {target!r} is not a column of {path}; columns: {header}")
    missing = set(missing_cells)
    cells = [[c.strip() for c in r] for r in body]
    y = np.array([r[t] for r in cells])
    if any(v in missing for v in y):
        raise ValueError(f"the target column {header[t]!r} has missing cells; drop those rows")
    names = [h for j, h in enumerate(header) if j != t]
    cols = [[r[j] for r in cells] for j in range(len(header)) if j != t]
    empty = [n for n, col in zip(names, cols, strict=True) if all(c in missing for c in col)]
    if empty:
        raise ValueError(
            f"{path}: columns {empty} have no non-missing cell (no state to code, no value to "
            "fit); drop them"
        )
    numeric = np.array([all(c in missing or _is_number(c) for c in col) for col in cols], bool)
    if isinstance(discrete, str):
        if discrete == "auto":
            mask = ~numeric
        elif discrete == "all":
            mask = np.ones(len(cols), bool)
        elif discrete == "none":
            if not numeric.all():
                bad = [n for n, ok in zip(names, numeric, strict=True) if not ok]
                raise ValueError(f"discrete='none' but columns {bad} are not numeric")
            mask = np.zeros(len(cols), bool)
        else:
            raise ValueError(
                "discrete must be 'auto', 'all', 'none' or a list of column names; "
                f"got {discrete!r}"
            )
    else:
        unknown = [c for c in discrete if c not in names]
        if unknown:
            raise ValueError(f"discrete names {unknown} are not predictor columns: {names}")
        mask = np.array([n in set(discrete) for n in names], bool)
        bad = [n for n, d, ok in zip(names, mask, numeric, strict=True) if not d and not ok]
        if bad:
            raise ValueError(f"columns {bad} are not numeric; list them in discrete")
    X = np.empty((len(cells), len(cols)), np.float64)
    categories = []
    for j, col in enumerate(cols):
        if mask[j]:
            labels = tuple(_label_order({c for c in col if c not in missing}))
            code = {c: k for k, c in enumerate(labels)}
            X[:, j] = [code.get(c, -1) for c in col]
            categories.append(labels)
        else:
            X[:, j] = [np.nan if c in missing else float(c) for c in col]
            categories.append(None)
    return CsvTable(X, y, names, mask, categories)
