r"""Gaussian stream simulator shaped like the PASCAL Large Scale Learning data sets (Stream §4).

The PASCAL Large Scale Learning challenge sets used by Salperwyck, Lemaire & Hue (alpha, beta,
gamma, delta: 500 numeric predictors; epsilon, zeta: 2000; 500,000 labelled examples, the first
100,000 used as test set; binary class) are not available offline. This module generates a stream
of the same shape from a documented model whose Bayes rate is known in closed form.

Model (binary class Y in {0, 1}, P(Y = 1) = `positive_rate`):

* `n_relevant` latent relevant predictors z_i | Y = y ~ N(y · delta_i - delta_i / 2, 1),
  independent given the class, with separations delta_i = `signal` · s_i where the strengths
  s_i decrease geometrically from 1 to `weakest` (a few strong and many weak predictors);
* relevant columns: x_i = z_i;
* redundant columns: x = z_src + `redundant_noise` · e, e ~ N(0, 1), with the source chosen
  among the *weakest* `redundant_sources` relevant predictors (round-robin). Naive Bayes then
  counts the weak evidence many times and its accuracy drops below the Bayes rate — the
  situation in which selection / weighting (ANB, online WNB) helps, as on PASCAL alpha;
* irrelevant columns: x ~ N(0, 1), independent of the class.

Columns are shuffled once by a fixed permutation drawn from the key (stored in `StreamSpec.kind`).

Bayes rate: the class-conditional densities are Gaussian with a shared covariance and the relevant
z are observed exactly, so the redundant and irrelevant columns carry no extra information. With
Delta² = sum_i delta_i² and c = log(pi_1 / pi_0) the Bayes rule is the sign of
sum_i delta_i x_i + c and its error is

    pi_1 Phi((-Delta²/2 - c) / Delta) + pi_0 Phi((-Delta²/2 + c) / Delta)        (`bayes_error`).

Rows are produced in fixed chunks of `chunk_rows` from `jax.random.fold_in(key, chunk_index)`, so
any row range `[start, stop)` is reproducible without generating the rows before it and 500k x 2000
never needs to be in memory at once. Values are float32 (the PASCAL files' precision).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from scipy.stats import norm

__all__ = ["StreamSpec", "bayes_error", "bayes_predict", "iter_chunks", "make_rows", "pascal_like"]


@dataclass(frozen=True)
class StreamSpec:
    """Static description of a simulated stream (see the module docstring for the model).

    Attributes:
      n_predictors: p (500 or 2000 for the PASCAL shapes).
      n_relevant, n_redundant: counts; the rest are irrelevant.
      signal: separation of the strongest relevant predictor (delta_1).
      weakest: strength of the weakest relevant predictor relative to the strongest.
      redundant_sources: how many of the weakest relevant predictors are copied.
      redundant_noise: std of the noise added to a redundant copy.
      positive_rate: P(Y = 1).
      n_examples: stream length (500,000 in the paper); the first `n_test` rows are the test set.
      n_test: 100,000 in the paper.
      chunk_rows: rows per generated chunk (the unit of reproducibility).
      seed: integer seed of the stream.
    """

    n_predictors: int = 500
    n_relevant: int = 40
    n_redundant: int = 200
    signal: float = 0.6
    weakest: float = 0.1
    redundant_sources: int = 10
    redundant_noise: float = 0.3
    positive_rate: float = 0.5
    n_examples: int = 500_000
    n_test: int = 100_000
    chunk_rows: int = 10_000
    seed: int = 0

    def __post_init__(self):
        for name in ("n_predictors", "n_relevant", "n_examples", "chunk_rows", "redundant_sources"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {name}={v!r}")
        if not 0 <= self.n_redundant or self.n_relevant + self.n_redundant > self.n_predictors:
            raise ValueError(
                "need 0 <= n_redundant and n_relevant + n_redundant <= n_predictors; got "
                f"{self.n_relevant=}, {self.n_redundant=}, {self.n_predictors=}"
            )
        if self.redundant_sources > self.n_relevant:
            raise ValueError(
                f"redundant_sources must be <= n_relevant; got {self.redundant_sources}"
            )
        if not 0.0 < self.positive_rate < 1.0:
            raise ValueError(f"positive_rate must lie in (0, 1); got {self.positive_rate}")
        if not 0 <= self.n_test < self.n_examples:
            raise ValueError(f"n_test must lie in [0, n_examples); got {self.n_test}")
        if not (self.signal > 0 and 0 < self.weakest <= 1 and self.redundant_noise >= 0):
            raise ValueError("need signal > 0, 0 < weakest <= 1 and redundant_noise >= 0")

    @property
    def delta(self) -> np.ndarray:
        """`(n_relevant,)` class-mean separations of the relevant predictors (decreasing)."""
        m = self.n_relevant
        s = self.weakest ** (np.arange(m) / max(m - 1, 1))
        return self.signal * s

    @property
    def sources(self) -> np.ndarray:
        """`(n_redundant,)` relevant index copied by each redundant column."""
        weak = np.arange(self.n_relevant - self.redundant_sources, self.n_relevant)
        return weak[np.arange(self.n_redundant) % self.redundant_sources]

    @property
    def permutation(self) -> np.ndarray:
        """Column order: output column j holds internal column `permutation[j]`."""
        return np.random.default_rng(self.seed).permutation(self.n_predictors)

    @property
    def kind(self) -> np.ndarray:
        """`(p,)` 0 relevant, 1 redundant, 2 irrelevant, in output column order."""
        k = np.full(self.n_predictors, 2)
        k[: self.n_relevant] = 0
        k[self.n_relevant : self.n_relevant + self.n_redundant] = 1
        return k[self.permutation]


def pascal_like(n_predictors: int = 500, **overrides) -> StreamSpec:
    """PASCAL-shaped spec: 500 (alpha..delta) or 2000 (epsilon, zeta) predictors, 500k rows."""
    if n_predictors not in (500, 2000) and "n_relevant" not in overrides:
        raise ValueError(
            f"n_predictors must be 500 or 2000 (or give n_relevant); got {n_predictors}"
        )
    scale = n_predictors // 500 if n_predictors in (500, 2000) else 1
    base = dict(
        n_predictors=n_predictors,
        n_relevant=40 * scale,
        n_redundant=200 * scale,
        redundant_sources=10 * scale,
        signal=0.6 / math.sqrt(scale),
    )
    base.update(overrides)
    return StreamSpec(**base)


def bayes_error(spec: StreamSpec) -> float:
    """Closed-form Bayes error of the stream (module docstring)."""
    d2 = float(np.sum(spec.delta**2))
    d = math.sqrt(d2)
    c = math.log(spec.positive_rate / (1 - spec.positive_rate))
    return float(
        spec.positive_rate * norm.cdf((-d2 / 2 - c) / d)
        + (1 - spec.positive_rate) * norm.cdf((-d2 / 2 + c) / d)
    )


def bayes_predict(spec: StreamSpec, X) -> np.ndarray:
    """Bayes-optimal class of the rows `X` (output column order)."""
    X = np.asarray(X, dtype=np.float64)
    inv = np.argsort(spec.permutation)  # internal column i sits at output column inv[i]
    z = X[:, inv[: spec.n_relevant]]
    c = math.log(spec.positive_rate / (1 - spec.positive_rate))
    return (z @ spec.delta + c > 0).astype(np.int32)


def _chunk(spec: StreamSpec, key, index: int):
    m, r = spec.n_relevant, spec.n_redundant
    k_y, k_z, k_e, k_i = jax.random.split(jax.random.fold_in(key, index), 4)
    n = spec.chunk_rows
    y = jax.random.bernoulli(k_y, spec.positive_rate, (n,)).astype(jnp.int32)
    delta = jnp.asarray(spec.delta, jnp.float32)
    z = jax.random.normal(k_z, (n, m), jnp.float32) + (y[:, None] - 0.5) * delta[None, :]
    red = z[:, jnp.asarray(spec.sources)] + spec.redundant_noise * jax.random.normal(
        k_e, (n, r), jnp.float32
    )
    irr = jax.random.normal(k_i, (n, spec.n_predictors - m - r), jnp.float32)
    X = jnp.concatenate([z, red, irr], axis=1)[:, jnp.asarray(spec.permutation)]
    return X, y


_chunk_jit = jax.jit(_chunk, static_argnums=(0,))


def iter_chunks(
    spec: StreamSpec, start: int = 0, stop: int | None = None, block_rows: int | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yields (X float32 `(b, p)`, y int32 `(b,)`) blocks covering rows [start, stop) in order.

    `block_rows` defaults to `spec.chunk_rows`; generation is always by whole chunks, sliced."""
    stop = spec.n_examples if stop is None else stop
    if not 0 <= start <= stop <= spec.n_examples:
        raise ValueError(f"need 0 <= start <= stop <= n_examples; got {start=}, {stop=}")
    block_rows = block_rows or spec.chunk_rows
    key = jax.random.key(spec.seed)
    buf_X, buf_y, have = [], [], 0
    for ci in range(start // spec.chunk_rows, -(-stop // spec.chunk_rows)):
        X, y = _chunk_jit(spec, key, ci)
        lo = max(start - ci * spec.chunk_rows, 0)
        hi = min(stop - ci * spec.chunk_rows, spec.chunk_rows)
        buf_X.append(np.asarray(X[lo:hi]))
        buf_y.append(np.asarray(y[lo:hi]))
        have += hi - lo
        while have >= block_rows:
            Xc, yc = np.concatenate(buf_X), np.concatenate(buf_y)
            yield Xc[:block_rows], yc[:block_rows]
            buf_X, buf_y, have = [Xc[block_rows:]], [yc[block_rows:]], have - block_rows
    if have:
        yield np.concatenate(buf_X), np.concatenate(buf_y)


def make_rows(spec: StreamSpec, start: int = 0, stop: int | None = None):
    """Rows [start, stop) as one (X float32, y int32) pair (test set: rows [0, n_test))."""
    parts = list(iter_chunks(spec, start, stop))
    if not parts:
        return np.zeros((0, spec.n_predictors), np.float32), np.zeros((0,), np.int32)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
