"""Loaders of the real data sets shipped in ``jaxnb/datasets/data`` (provenance in its README)."""

from __future__ import annotations

import csv
from importlib import resources

import numpy as np

__all__ = ["load_diabetes", "load_soybean_small", "load_flags", "read_csv"]


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
