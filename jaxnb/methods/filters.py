r"""Filter feature selection for naive Bayes: information measures and selection rules.

Every information matrix comes from one batched JAX call (one-hot matrix products over all
predictors or all pairs at once); the selection rules (mRMR, CMIM) are `lax.scan` loops over the k
selection steps, CFS's best-first search is one `lax.while_loop` over a fixed-size open list
(`cfs_search`), and the filter-wrapper search loops over steps in Python, with all candidates of a
step scored together.

Information is measured in nats (natural logarithm) throughout. The slides (Larrañaga, Bielza &
Moreno) write log2; bits = nats / log(2), which changes no ranking and no comparison between
measures.

Discrete predictors with different numbers of states are padded to `M = max(n_states)` states; a
padded state never occurs, so it contributes nothing. Missing codes (-1) are not counted: every
(pair) quantity is computed on the rows where the predictor (both predictors) is observed,
normalised by their weight.

References:
  Peng, Long & Ding (2005), IEEE TPAMI 27(8) 1226-1238 (mRMR, MID form, their Eq. 8).
  Fleuret (2004), JMLR 5 1531-1555 (CMIM, their Eq. 3 and Sec. 3.2).
  Hall (1999), PhD thesis, Univ. of Waikato (CFS merit, his Eq. 4.1; best-first search, Sec. 4.3).
  Vidaurre, Bielza & Larrañaga (2013), IJAIT 22(4), Sec. 6.1 (prefilter with random probes).
  Larrañaga, Bielza & Moreno, slides "Bayesian classifiers with continuous predictors" (Gaussian MI,
  filter-wrapper and threshold-filter selective Gaussian NB).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._checks import jit_entry
from .._dtypes import float_dtype
from .._matmul import einsum, matmul

__all__ = [
    "InformationMatrices",
    "as_state_tuple",
    "CfsResult",
    "cfs",
    "cfs_correlations",
    "cfs_merit",
    "cfs_search",
    "class_correlation_continuous",
    "cmim",
    "conditional_mutual_information_pairs",
    "conditional_relevance_pairs",
    "equal_frequency_codes",
    "feature_correlation_continuous",
    "filter_wrapper_forward",
    "information_matrices",
    "mi_prefilter",
    "mrmr",
    "mutual_information_binned",
    "mutual_information_discrete",
    "mutual_information_gaussian",
    "pairwise_mutual_information_discrete",
    "ranking_masks",
    "symmetric_uncertainty_discrete",
    "threshold_filter",
]


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------
def as_state_tuple(n_states: int | Sequence[int], q: int) -> tuple[int, ...]:
    """Normalises `n_states` (an int shared by all predictors, or one int per predictor) to a
    tuple."""
    if isinstance(n_states, int | np.integer) and not isinstance(n_states, bool):
        out = (int(n_states),) * q
    else:
        try:
            items = list(n_states)
        except TypeError:
            raise TypeError(
                f"n_states must be an int or a sequence of ints (one per column); got {n_states!r}"
            ) from None
        if not all(isinstance(s, int | np.integer) and not isinstance(s, bool) for s in items):
            raise TypeError(f"n_states entries must be ints; got {n_states!r}")
        out = tuple(int(s) for s in items)
    if len(out) != q:
        raise ValueError(f"n_states must have one entry per column of codes ({q}); got {len(out)}")
    if any(s < 1 for s in out):
        raise ValueError(f"n_states entries must be >= 1; got {out}")
    return out


def _default_weight(weight, n: int, dtype) -> jax.Array:
    if weight is None:
        return jnp.ones((n,), dtype)
    weight = jnp.asarray(weight, dtype)
    if weight.shape != (n,):
        raise ValueError(f"weight must have shape ({n},); got {weight.shape}")
    return weight


def _onehot_codes(codes: jax.Array, n_states: tuple[int, ...]) -> jax.Array:
    """(n, q) codes -> (n, q, M) one-hot; -1 (missing) and padded states give all-zero rows."""
    m = max(n_states)
    if not jnp.issubdtype(codes.dtype, jnp.integer):  # whole-number float codes (checked eagerly)
        codes = codes.astype(jnp.int32)
    return jax.nn.one_hot(codes, m, dtype=float_dtype())


def _xlogx_ratio(p: jax.Array, num: jax.Array, den: jax.Array) -> jax.Array:
    """p * log(num / den) with the convention 0 log 0 = 0 (safe under grad)."""
    pos = p > 0
    safe = lambda a: jnp.where(pos, a, 1.0)
    return jnp.where(pos, p * (jnp.log(safe(num)) - jnp.log(safe(den))), 0.0)


def _entropy(p: jax.Array, axis) -> jax.Array:
    pos = p > 0
    return -jnp.sum(jnp.where(pos, p * jnp.log(jnp.where(pos, p, 1.0)), 0.0), axis=axis)


def _concrete(x) -> bool:
    """Whether ``x`` holds values that can be checked on the host (not a tracer)."""
    return x is not None and not isinstance(x, jax.core.Tracer)


def _check_labels(y, n_classes):
    """Concrete ``y``: integer class codes in [0, n_classes) (cheap host check; tracers skipped)."""
    if not _concrete(y) or n_classes is None or isinstance(n_classes, jax.core.Tracer):
        return
    y = np.asarray(y)
    if y.dtype.kind not in "iubf" or (
        y.dtype.kind == "f" and not (np.isfinite(y).all() and (y == np.round(y)).all())
    ):
        raise TypeError(
            f"y must hold integer class codes 0..n_classes-1; got dtype {y.dtype} (encode labels "
            "first, e.g. np.unique(labels, return_inverse=True)[1])"
        )
    if y.size and (y.min() < 0 or y.max() >= int(n_classes)):
        raise ValueError(
            f"y must hold class codes in [0, n_classes={int(n_classes)}); got values in "
            f"[{y.min()}, {y.max()}] (raise n_classes or re-encode the labels)"
        )


def _check_codes(codes, y, n_classes, n_states=None):
    """Shapes of ``codes`` (n, q) / ``y`` (n,); for concrete inputs also their values: codes
    whole numbers in [0, n_states[i]) with -1 = missing, ``y`` in [0, n_classes)."""
    if codes.ndim != 2:
        raise ValueError(f"codes must be 2-D (n, q); got shape {codes.shape}")
    if y is not None and y.shape != (codes.shape[0],):
        raise ValueError(f"y must have shape ({codes.shape[0]},); got {y.shape}")
    if n_classes is not None and int(n_classes) < 1:
        raise ValueError(f"n_classes must be >= 1; got {n_classes}")
    _check_labels(y, n_classes)
    if n_states is None or not _concrete(codes) or codes.size == 0:
        return
    states = np.asarray(as_state_tuple(n_states, codes.shape[1]))
    c = np.asarray(codes)
    if c.dtype.kind not in "iub" and not (np.isfinite(c).all() and (c == np.round(c)).all()):
        raise ValueError(
            "codes must hold whole-number codes in [0, n_states[i]) (-1 = missing); got "
            "non-integer or non-finite entries"
        )
    lo, hi = c.min(axis=0), c.max(axis=0)
    if (lo < -1).any():
        i = int(np.argmax(lo < -1))
        raise ValueError(
            f"codes column {i} has code {lo[i]}; codes must lie in [0, n_states[i]) and -1 is "
            "the only missing-value code"
        )
    if (hi >= states).any():
        i = int(np.argmax(hi >= states))
        raise ValueError(
            f"codes column {i} has code {hi[i]} but n_states[{i}]={states[i]}; codes must lie in "
            f"[0, n_states[i]) (raise n_states[{i}] to at least {hi[i] + 1})"
        )


def _check_weight_values(weight, name="weight") -> None:
    """Concrete sample weights: finite and >= 0 (a negative or NaN weight makes the weighted
    probabilities meaningless, e.g. a mutual information above log(n_classes)); tracers skipped."""
    if not _concrete(weight):
        return
    w = np.asarray(weight)
    if w.dtype.kind not in "iubf":
        raise TypeError(f"{name} must be numeric sample weights; got dtype {w.dtype}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(
            f"{name} must be finite and >= 0 (0 drops a row, e.g. outside a fold); got "
            f"{'non-finite' if not np.isfinite(w).all() else 'negative'} entries"
        )


def _eager_check(args) -> None:
    """`jit_entry` hook: value checks of concrete ``codes`` / ``y`` / ``weight`` before jitting."""
    _check_weight_values(args.get("weight"))
    y = args.get("y")
    y = np.asarray(y) if _concrete(y) else None
    codes = args.get("codes")
    if _concrete(codes):
        _check_codes(np.asarray(codes), y, args.get("n_classes"), args.get("n_states"))
    else:
        _check_labels(y, args.get("n_classes"))


# --------------------------------------------------------------------------------------------------
# discrete information measures
# --------------------------------------------------------------------------------------------------
@jit_entry("n_states", "n_classes", check=_eager_check)
def mutual_information_discrete(codes, y, n_states, n_classes: int, weight=None) -> jax.Array:
    r"""Mutual information I(X_i; C) of every discrete predictor with the class.

    I(X_i; C) = sum_{a,c} p(a, c) log[p(a, c) / (p(a) p(c))], with p the weighted empirical joint on
    the rows where X_i is observed (code >= 0). All predictors in one contraction
    `einsum('nia,nc->iac')` of one-hot matrices.

    Args:
      codes: int (n, q) codes in [0, n_states[i]); -1 = missing.
      y: int (n,) class codes in [0, n_classes).
      n_states: static int or tuple of q ints.
      n_classes: static number of classes c.
      weight: optional (n,) sample weights (0/1 for folds).

    Returns:
      (q,) mutual information in nats; 0 for a predictor never observed.
    """
    codes = jnp.asarray(codes)
    y = jnp.asarray(y)
    _check_codes(codes, y, n_classes)
    n_states = as_state_tuple(n_states, codes.shape[1])
    w = _default_weight(weight, codes.shape[0], float_dtype())
    onehot = _onehot_codes(codes, n_states)
    class_w = jax.nn.one_hot(y, n_classes, dtype=onehot.dtype) * w[:, None]
    joint = einsum("nia,nc->iac", onehot, class_w)  # (q, M, c)
    n_a = jnp.sum(joint, axis=2, keepdims=True)  # (q, M, 1)
    n_c = jnp.sum(joint, axis=1, keepdims=True)  # (q, 1, c)
    total = jnp.sum(n_a, axis=1, keepdims=True)  # (q, 1, 1)
    p = joint / jnp.where(total > 0, total, 1.0)
    # log p(a, c) / (p(a) p(c)) = [log n(a, c) − log n(c)] − [log n(a) − log N]: for a predictor
    # with one observed state both brackets are exactly 0 (a ratio of probabilities left
    # ±1e-16 under weights, which a threshold of 0 kept)
    pos = joint > 0
    safe = lambda a: jnp.log(jnp.where(pos, a, 1.0))
    log_ratio = (safe(joint) - safe(n_c)) - (safe(n_a) - safe(total))
    mi = jnp.sum(jnp.where(pos, p * log_ratio, 0.0), axis=(1, 2))
    return jnp.maximum(mi, 0.0)  # MI >= 0; rounding may leave -1e-17


# Above this many entries, the (q, M, q, M, c) joint count tensor of the pair measures is not built
# (one column with many states, e.g. an identifier or a country, makes it q^2 M^2 c: 29 columns,
# one of 194 states and 8 classes are 253 million entries); the pair measures then come from
# entropies of each pair's rows, sorted (`_information_sorted`): O(q^2 n log n) work and O(q n)
# memory. Below it, one matrix product over all pairs is faster, so the usual problems keep it.
_DENSE_PAIR_MAX = 1 << 24


def _dense_pairs(q: int, m: int, c: int) -> bool:
    """Whether the pair measures of q predictors of at most m states and c classes use the dense
    joint count tensor (see `_DENSE_PAIR_MAX`)."""
    return q * q * m * m * c <= _DENSE_PAIR_MAX


def _run_entropies(keys, ws, total):
    """Entropies (nats) of the weight of the distinct key prefixes of lexicographically sorted
    ``keys`` (a list of (n,) arrays) with row weights ``ws``: [H(k0), H(k0, k1), ...]."""
    n = ws.shape[0]
    if n == 0:  # no rows: every entropy is 0, as on the dense path
        return [jnp.zeros((), ws.dtype) for _ in keys]
    new = jnp.zeros((n,), bool).at[0].set(True)
    den = jnp.where(total > 0, total, 1.0)
    out = []
    for k in keys:
        new = new | jnp.concatenate([jnp.ones((1,), bool), k[1:] != k[:-1]])
        group = jax.ops.segment_sum(ws, jnp.cumsum(new.astype(jnp.int32)) - 1, num_segments=n)
        out.append(_entropy(group / den, axis=0))
    return out


def _pair_entropies(a, b, y, w, n_classes):
    """H(A), H(B), H(A,B), H(A,C), H(B,C), H(A,B,C), H(C) of one pair of code columns, on the rows
    where both are observed (weights ``w``), from three sorts of the rows."""
    wp = jnp.where((a >= 0) & (b >= 0), w, 0.0)
    total = jnp.sum(wp)
    if n_classes == 1:  # no class (mRMR's redundancy): two sorts give H(A), H(A,B) and H(B)
        sa, sb, sw = lax.sort((a, b, wp), num_keys=2)
        h_a, h_ab = _run_entropies([sa, sb], sw, total)
        sb, sw = lax.sort((b, wp), num_keys=1)
        (h_b,) = _run_entropies([sb], sw, total)
        return h_a, h_b, h_ab, h_a, h_b, h_ab, jnp.zeros((), h_a.dtype)
    sa, sb, sy, sw = lax.sort((a, b, y, wp), num_keys=3)
    h_a, h_ab, h_aby = _run_entropies([sa, sb, sy], sw, total)
    sb, sy, sw = lax.sort((b, y, wp), num_keys=2)
    h_b, h_by = _run_entropies([sb, sy], sw, total)
    sa, sy, sw = lax.sort((a, y, wp), num_keys=2)
    h_ay = _run_entropies([sa, sy], sw, total)[1]
    class_w = jax.ops.segment_sum(wp, y, num_segments=n_classes)
    h_y = _entropy(class_w / jnp.where(total > 0, total, 1.0), axis=0)
    return h_a, h_b, h_ab, h_ay, h_by, h_aby, h_y


def _information_sorted(codes, y, n_classes, weight):
    """(relevance, redundancy, conditional redundancy, conditional relevance, entropy) as in
    `information_matrices`, from per-pair entropies: I(A;B) = H(A) + H(B) - H(A,B),
    I(A;B|C) = H(A,C) + H(B,C) - H(A,B,C) - H(C), I(A;C|B) = H(A,B) + H(B,C) - H(A,B,C) - H(B)
    (each >= 0; rounding below 0 is clipped). One predictor at a time (`lax.map`), all its pairs
    batched."""
    codes = codes.astype(jnp.int32)
    y = y.astype(jnp.int32)
    w = _default_weight(weight, codes.shape[0], float_dtype())

    def pairs_of(a):
        return jax.vmap(lambda b: _pair_entropies(a, b, y, w, n_classes), in_axes=1)(codes)

    h_a, h_b, h_ab, h_ay, h_by, h_aby, h_y = lax.map(pairs_of, codes.T)
    zero = jnp.zeros((), h_a.dtype)
    red = jnp.maximum(h_a + h_b - h_ab, zero)
    cond_red = jnp.maximum(h_ay + h_by - h_aby - h_y, zero)
    cond_rel = jnp.maximum(h_ab + h_by - h_aby - h_b, zero)
    q = codes.shape[1]
    cond_rel = cond_rel * (1.0 - jnp.eye(q, dtype=cond_rel.dtype))
    idx = jnp.arange(q)
    relevance = jnp.maximum(h_a[idx, idx] + h_y[idx, idx] - h_ay[idx, idx], zero)
    return relevance, red, cond_red, cond_rel, h_a[idx, idx]


def _pair_joint(codes, y, n_states, n_classes, weight) -> jax.Array:
    """Weighted joint counts N(X_i=a, X_k=b, C=c) for all pairs, shape (q, M, q, M, c)."""
    onehot = _onehot_codes(codes, n_states)
    w = _default_weight(weight, codes.shape[0], onehot.dtype)
    class_w = jax.nn.one_hot(y, n_classes, dtype=onehot.dtype) * w[:, None]
    # one matrix product: (qM, n) x (n, qM) per class
    return einsum("nia,nkb,nc->iakbc", onehot, onehot, class_w)


class InformationMatrices(NamedTuple):
    """All discrete information measures a filter needs, from one batched call (nats).

    Attributes:
      relevance: (q,) I(X_i; C).
      redundancy: (q, q) I(X_i; X_k) (diagonal: entropy H(X_i)).
      conditional_redundancy: (q, q) I(X_i; X_k | C) (diagonal: H(X_i | C)).
      conditional_relevance: (q, q), entry [i, k] = I(X_i; C | X_k) (diagonal: 0).
      entropy: (q,) H(X_i); class_entropy: scalar H(C).
    """

    relevance: jax.Array
    redundancy: jax.Array
    conditional_redundancy: jax.Array
    conditional_relevance: jax.Array
    entropy: jax.Array
    class_entropy: jax.Array


@jit_entry("n_states", "n_classes", check=_eager_check)
def information_matrices(codes, y, n_states, n_classes: int, weight=None) -> InformationMatrices:
    r"""Relevance, redundancy and both conditional informations for all pairs, in one pass.

    From p(a, b, c) = N(X_i=a, X_k=b, C=c) / N_ik (rows where both are observed):

    - I(X_i; X_k)     = sum p(a,b) log[p(a,b) / (p(a) p(b))]
    - I(X_i; X_k | C) = sum p(a,b,c) log[p(a,b,c) p(c) / (p(a,c) p(b,c))]
    - I(X_i; C | X_k) = sum p(a,b,c) log[p(a,b,c) p(b) / (p(a,b) p(b,c))]

    The relevance I(X_i; C) is read off the diagonal block k = i (the same rows as
    `mutual_information_discrete`). Memory is O(q² M² c) for the joint count tensor; where that
    would exceed 2^24 entries (a column with many states), the same quantities come from
    entropies of each pair's sorted rows instead (O(q n) memory, O(q² n log n) work; equal up to
    rounding, and never below 0).

    Args:
      codes, y, n_states, n_classes, weight: as in `mutual_information_discrete`.

    Returns:
      `InformationMatrices`.
    """
    codes = jnp.asarray(codes)
    y = jnp.asarray(y)
    _check_codes(codes, y, n_classes)
    n_states = as_state_tuple(n_states, codes.shape[1])
    q = codes.shape[1]
    w = _default_weight(weight, codes.shape[0], float_dtype())
    class_w = jnp.sum(jax.nn.one_hot(y, n_classes, dtype=w.dtype) * w[:, None], axis=0)
    class_entropy = _entropy(class_w / jnp.sum(class_w), axis=0)
    if q and not _dense_pairs(q, max(n_states), n_classes):
        parts = _information_sorted(codes, y, n_classes, weight)
    else:
        parts = _information_dense(codes, y, n_states, n_classes, weight)
    return InformationMatrices(*parts, class_entropy)


def _information_dense(codes, y, n_states, n_classes, weight):
    """(relevance, redundancy, conditional redundancy, conditional relevance, entropy) of
    `information_matrices` from the (q, M, q, M, c) joint count tensor."""
    q = codes.shape[1]
    joint = _pair_joint(codes, y, n_states, n_classes, weight)  # (q, M, q, M, c)
    total = jnp.sum(joint, axis=(1, 3, 4), keepdims=True)
    p = joint / jnp.where(total > 0, total, 1.0)
    p_ab = jnp.sum(p, axis=4, keepdims=True)
    p_ac = jnp.sum(p, axis=3, keepdims=True)
    p_bc = jnp.sum(p, axis=1, keepdims=True)
    p_a = jnp.sum(p_ab, axis=3, keepdims=True)
    p_b = jnp.sum(p_ab, axis=1, keepdims=True)
    p_c = jnp.sum(p_ac, axis=1, keepdims=True)

    red = jnp.sum(_xlogx_ratio(p_ab, p_ab, p_a * p_b), axis=(1, 3, 4))
    cond_red = jnp.sum(_xlogx_ratio(p, p * p_c, p_ac * p_bc), axis=(1, 3, 4))
    cond_rel = jnp.sum(_xlogx_ratio(p, p * p_b, p_ab * p_bc), axis=(1, 3, 4))

    idx = jnp.arange(q)
    diag_ac = p_ac[idx, :, idx, 0, :]  # (q, M, c): p(a, c) on rows where X_i observed
    pa = jnp.sum(diag_ac, axis=2, keepdims=True)
    pc = jnp.sum(diag_ac, axis=1, keepdims=True)
    relevance = jnp.sum(_xlogx_ratio(diag_ac, diag_ac, pa * pc), axis=(1, 2))
    entropy = _entropy(pa[:, :, 0], axis=1)
    cond_rel = cond_rel * (1.0 - jnp.eye(q, dtype=cond_rel.dtype))  # exact zero, no rounding
    return relevance, red, cond_red, cond_rel, entropy


@jit_entry("n_states", "n_classes", check=_eager_check)
def conditional_mutual_information_pairs(codes, y, n_states, n_classes: int, weight=None):
    r"""I(X_i; X_k | C) for all pairs of discrete predictors, shape (q, q) (the TAN edge weight).

    See `information_matrices` for the formula. The diagonal holds H(X_i | C).
    """
    return information_matrices(codes, y, n_states, n_classes, weight).conditional_redundancy


@jit_entry("n_states", "n_classes", check=_eager_check)
def conditional_relevance_pairs(codes, y, n_states, n_classes: int, weight=None):
    r"""Entry [i, k] = I(X_i; C | X_k) for all pairs, shape (q, q) (CMIM's score; diagonal 0)."""
    return information_matrices(codes, y, n_states, n_classes, weight).conditional_relevance


@jit_entry("n_states", check=_eager_check)
def pairwise_mutual_information_discrete(codes, n_states, weight=None) -> jax.Array:
    r"""I(X_i; X_k) between all pairs of discrete predictors, shape (q, q) (mRMR redundancy).

    I(X_i; X_k) = sum_{a,b} p(a,b) log[p(a,b) / (p(a) p(b))] on the rows where both are observed;
    one contraction `einsum('nia,nkb->iakb')` (above 2^24 entries, per-pair sorted entropies, as
    in `information_matrices`). The diagonal is H(X_i).
    """
    codes = jnp.asarray(codes)
    _check_codes(codes, None, None)
    n_states = as_state_tuple(n_states, codes.shape[1])
    if codes.shape[1] and not _dense_pairs(codes.shape[1], max(n_states), 1):
        zeros = jnp.zeros((codes.shape[0],), jnp.int32)  # one class: the pair entropies only
        return _information_sorted(codes, zeros, 1, weight)[1]
    onehot = _onehot_codes(codes, n_states)
    w = _default_weight(weight, codes.shape[0], onehot.dtype)
    joint = einsum("nia,nkb->iakb", onehot * w[:, None, None], onehot)
    total = jnp.sum(joint, axis=(1, 3), keepdims=True)
    p = joint / jnp.where(total > 0, total, 1.0)
    pa = jnp.sum(p, axis=3, keepdims=True)
    pb = jnp.sum(p, axis=1, keepdims=True)
    return jnp.sum(_xlogx_ratio(p, p, pa * pb), axis=(1, 3))


@jit_entry("n_states", "n_classes", check=_eager_check)
def symmetric_uncertainty_discrete(codes, y, n_states, n_classes: int, weight=None):
    r"""Symmetric uncertainty SU(A, B) = 2 I(A; B) / (H(A) + H(B)), Hall's discrete CFS correlation.

    Returns:
      (class_su (q,), feature_su (q, q)): SU(X_i, C) and SU(X_i, X_k), in [0, 1]; 0 where both
      entropies vanish. Entropies of a pair are taken on all rows where each is observed (exact
      without missing values).
    """
    info = information_matrices(codes, y, n_states, n_classes, weight)
    h = info.entropy

    def su(i, ha, hb):
        den = ha + hb
        return jnp.where(den > 0, 2.0 * i / jnp.where(den > 0, den, 1.0), 0.0)

    class_su = su(info.relevance, h, info.class_entropy)
    feature_su = su(info.redundancy, h[:, None], h[None, :])
    return class_su, feature_su


# --------------------------------------------------------------------------------------------------
# continuous information measures
# --------------------------------------------------------------------------------------------------
def _class_moments(values, y, n_classes, weight):
    """Per-predictor NaN-aware weighted moments: (class weight (c, r), class mean about the
    column's first observed value, class MLE var)."""
    values = jnp.asarray(values)
    if values.ndim != 2:
        raise ValueError(f"values must be 2-D (n, r); got shape {values.shape}")
    y = jnp.asarray(y)
    if y.shape != (values.shape[0],):
        raise ValueError(f"y must have shape ({values.shape[0]},); got {y.shape}")
    dtype = jnp.result_type(values.dtype, float_dtype())
    values = values.astype(dtype)
    w = _default_weight(weight, values.shape[0], dtype)
    present = jnp.isfinite(values)
    # moments about each column's first observed value: a column that is constant where observed
    # becomes exact zeros, so its variances are exactly 0 (s1 / wc is inexact, and a mean off by
    # an ulp gave a float32 constant column a spurious MI of 1.05 nats, ranked first)
    first = jnp.argmax(present, axis=0)
    pivot = jnp.where(jnp.any(present, axis=0), values[first, jnp.arange(values.shape[1])], 0.0)
    x = jnp.where(present, values - pivot[None, :], 0.0)
    wy = jax.nn.one_hot(y, n_classes, dtype=dtype) * w[:, None]  # (n, c)
    wc = matmul(wy.T, present.astype(dtype))  # (c, r)
    s1 = matmul(wy.T, x)
    mean = s1 / jnp.where(wc > 0, wc, 1.0)
    dev = jnp.where(present[:, None, :], x[:, None, :] - mean[None, :, :], 0.0)  # (n, c, r)
    m2 = einsum("nc,ncr->cr", wy, dev * dev)
    var = m2 / jnp.where(wc > 0, wc, 1.0)
    return wc, mean, var


def _variance_floor(var_floor, n_columns: int, dtype) -> jax.Array:
    """``var_floor`` as a (n_columns,) array of ``dtype``: a scalar (one floor for every column)
    or one floor per column; any other shape is a ValueError (at trace time)."""
    floor = jnp.asarray(var_floor, dtype)
    if floor.shape not in ((), (n_columns,)):
        raise ValueError(
            f"var_floor must be a scalar or have one entry per column, shape ({n_columns},); "
            f"got shape {floor.shape}"
        )
    return jnp.broadcast_to(floor, (n_columns,))


@jit_entry("n_classes", check=_eager_check)
def mutual_information_gaussian(values, y, n_classes: int, weight=None, var_floor: float = 0.0):
    r"""Gaussian mutual information with the class (slides, "filter-wrapper selective Gaussian NB").

    I(X_i, C) = ½ [log σ_i² − Σ_c p(c) log σ²_{c,i}],

    with MLE (divide-by-weight) variances: σ_i² overall, σ²_{c,i} within class c, p(c) the class
    proportion among rows where X_i is observed (NaN = missing). This is H_N(X_i) − H(X_i | C) where
    H_N is the entropy of a Gaussian with the marginal's variance, so it upper-bounds the exact MI
    of the class-conditional Gaussian mixture (the gap is the mixture's negentropy); it is exact
    when all classes share mean and variance (both are 0). Classes with no observed rows get p(c) =
    0. A column without spread (constant or never observed) gets 0; a column that varies while
    some observed class has zero within-class variance (e.g. a single row) gets +inf, the
    formula's limit — pass ``var_floor > 0`` to keep such columns finite.

    Args:
      values: float (n, r); NaN = missing.
      y: int (n,) classes.
      n_classes: static c.
      weight: optional (n,) sample weights.
      var_floor: added to every variance before the log (0 reproduces the formula exactly):
        a scalar, or one floor per column (r,).

    Returns:
      (r,) MI in nats.
    """
    wc, mean, var = _class_moments(values, y, n_classes, weight)
    var_floor = _variance_floor(var_floor, var.shape[1], var.dtype)
    total = jnp.sum(wc, axis=0, keepdims=True)  # (1, r)
    pc = wc / jnp.where(total > 0, total, 1.0)
    grand = jnp.sum(pc * mean, axis=0, keepdims=True)
    # law of total variance: MLE overall variance = within + between
    var_all = jnp.sum(pc * (var + (mean - grand) ** 2), axis=0)
    # ½ Σ_c p(c) [log σ² − log σ²_c]: exactly 0 when every class has the overall variance (the
    # form log σ² − Σ_c p(c) log σ²_c is not when Σ_c p(c) rounds away from 1)
    log_all = jnp.log(var_all + var_floor)[None, :]
    gap = jnp.where(pc > 0, pc * (log_all - jnp.log(var + var_floor[None, :])), 0.0)
    mi = jnp.maximum(0.5 * jnp.sum(gap, axis=0), 0.0)  # >= 0 by Jensen; rounding may dip below
    # a column with no spread at all (constant, or no observed value) carries no information:
    # every variance is 0 and the formula's log 0 - log 0 would be NaN
    return jnp.where(var_all + var_floor > 0, mi, 0.0)


@jit_entry("n_bins", check=_eager_check)
def equal_frequency_codes(values, n_bins: int, weight=None) -> jax.Array:
    r"""Equal-frequency (weighted quantile) discretisation of every column, all columns at once.

    Edge e_b (b = 1..n_bins−1) is the smallest value whose cumulative weight fraction reaches
    b/n_bins (up to a relative tolerance of 16 ulps, at least 1e-12); the code is #{b : x > e_b},
    in [0, n_bins). Ties stay in one bin, so heavy ties give fewer, unequal bins. NaN gives code
    -1. Rows with weight 0 do not move the edges; scaling every weight by a constant does not
    either (exactly for whole-number weights).

    Returns:
      int32 (n, r) codes.
    """
    values = jnp.asarray(values)
    if values.ndim != 2:
        raise ValueError(f"values must be 2-D (n, r); got shape {values.shape}")
    if int(n_bins) < 1:
        raise ValueError(f"n_bins must be >= 1; got {n_bins}")
    dtype = jnp.result_type(values.dtype, float_dtype())
    values = values.astype(dtype)
    w = _default_weight(weight, values.shape[0], dtype)
    steps = jnp.arange(1, n_bins, dtype=dtype)  # b = 1..n_bins-1
    tol = max(1e-12, 16 * float(jnp.finfo(dtype).eps))

    def one_column(x):
        present = jnp.isfinite(x)
        wx = jnp.where(present, w, 0.0)
        key = jnp.where(present, x, jnp.inf)  # missing sort last
        order = jnp.argsort(key)
        xs = key[order]
        cw = jnp.cumsum(wx[order])
        total = cw[-1]
        # "cw / total >= b / n_bins" as "cw n_bins >= b total": no division (XLA turns a division
        # by a scalar into a product with its reciprocal, whose rounding made the edges depend on
        # the scale of the weights), exact for whole-number weights; the relative tolerance keeps
        # an exact cumulative fraction from being missed by rounding
        need = jnp.where(total > 0, steps * total * (1.0 - tol), jnp.inf)
        pos = jnp.searchsorted(cw * n_bins, need, side="left")
        edges = xs[jnp.clip(pos, 0, x.shape[0] - 1)]
        code = jnp.sum(x[:, None] > edges[None, :], axis=1).astype(jnp.int32)
        return jnp.where(present, code, -1)

    return jax.vmap(one_column, in_axes=1, out_axes=1)(values)


@jit_entry("n_bins", "n_classes", check=_eager_check)
def mutual_information_binned(values, y, n_bins: int, n_classes: int, weight=None):
    r"""MI with the class after equal-frequency discretisation into `n_bins` bins (nats), shape
    (r,)."""
    codes = equal_frequency_codes(values, n_bins, weight)
    return mutual_information_discrete(codes, y, n_bins, n_classes, weight)


@jit_entry("n_classes", check=_eager_check)
def class_correlation_continuous(values, y, n_classes: int, weight=None) -> jax.Array:
    r"""Hall's feature-class correlation for a continuous feature and a nominal class.

    r_{fC} = Σ_c p(c) |ρ(X_f, 1[C = c])| (Hall 1999, Eq. 4.2: the class is split into binary
    indicators and the Pearson correlations are averaged with the class proportions as weights).
    Weighted Pearson correlation; a constant feature gets 0. NaN not supported.

    Returns:
      (r,) in [0, 1].
    """
    values = jnp.asarray(values)
    dtype = jnp.result_type(values.dtype, float_dtype())
    w = _default_weight(weight, values.shape[0], dtype)
    ind = jax.nn.one_hot(jnp.asarray(y), n_classes, dtype=dtype)  # (n, c)
    corr = _weighted_corr(values.astype(dtype), ind, w)  # (r, c)
    pc = matmul(w, ind) / jnp.sum(w)
    return jnp.sum(jnp.abs(corr) * pc[None, :], axis=1)


@jit_entry(check=_eager_check)
def feature_correlation_continuous(values, weight=None) -> jax.Array:
    r"""|Pearson correlation| between all pairs of continuous features, shape (r, r) (weighted)."""
    values = jnp.asarray(values)
    dtype = jnp.result_type(values.dtype, float_dtype())
    w = _default_weight(weight, values.shape[0], dtype)
    return jnp.abs(_weighted_corr(values.astype(dtype), values.astype(dtype), w))


def _weighted_corr(a, b, w):
    # shift by the first row: a constant column becomes exact zeros and gets 0, not the ±1 of an
    # ulp-sized residue divided by itself
    a, b = a - a[:1], b - b[:1]
    wn = w / jnp.sum(w)
    da = a - matmul(wn, a)[None, :]
    db = b - matmul(wn, b)[None, :]
    cov = matmul((da * wn[:, None]).T, db)
    sa = jnp.sqrt(matmul(wn, da * da))
    sb = jnp.sqrt(matmul(wn, db * db))
    den = sa[:, None] * sb[None, :]
    return jnp.where(den > 0, cov / jnp.where(den > 0, den, 1.0), 0.0)


# --------------------------------------------------------------------------------------------------
# selection rules
# --------------------------------------------------------------------------------------------------
def _finite_score(score):
    """-inf (and inf − inf) -> the lowest finite value, +inf -> the largest: the -inf that masks
    picked predictors then always loses the argmax (an unpicked score of -inf tied with it and a
    picked index came back again)."""
    if not jnp.issubdtype(score.dtype, jnp.floating):
        return score
    info = jnp.finfo(score.dtype)
    return jnp.nan_to_num(score, nan=info.min, posinf=info.max, neginf=info.min)


def _selection_check(matrix_name):
    """`jit_entry` hook of `mrmr` / `cmim`: ``k`` a whole number, concrete scores without NaN
    (``argmax`` returns the index of a NaN, so a NaN score would be picked first)."""

    def check(args):
        k = args.get("k")
        if isinstance(k, bool) or not isinstance(k, int | np.integer):
            raise TypeError(f"k must be an int (the number of predictors to pick); got {k!r}")
        for name in ("relevance", matrix_name):
            value = args.get(name)
            if _concrete(value) and np.isnan(np.asarray(value, dtype=float)).any():
                raise ValueError(
                    f"{name} contains NaN; the ranking would pick the NaN entry first. For "
                    "Gaussian MI of columns with a zero within-class variance pass var_floor > 0"
                )

    return check


@jit_entry("k", check=_selection_check("redundancy"))
def mrmr(relevance, redundancy, k: int) -> jax.Array:
    r"""Minimum-redundancy maximum-relevance ranking, MID form (Peng, Long & Ding 2005, Eq. 8).

    First pick argmax_i I(X_i; C); then, with S the picked set, pick argmax_{i ∉ S} [ I(X_i; C) −
    (1/|S|) Σ_{s ∈ S} I(X_i; X_s) ]. Ties go to the lowest index. A `lax.scan` over the k steps
    (jit-able; k static).

    Args:
      relevance: (p,) I(X_i; C) (any relevance score works, e.g. Gaussian MI).
      redundancy: (p, p) I(X_i; X_k).
      k: number of predictors to pick, 1 <= k <= p.

    Returns:
      int32 (k,) indices in the order picked.
    """
    relevance = jnp.asarray(relevance)
    redundancy = jnp.asarray(redundancy)
    p = relevance.shape[0]
    _check_selection(relevance, redundancy, k, "redundancy")

    def step(carry, t):
        chosen, red_sum = carry
        penalty = jnp.where(t > 0, red_sum / jnp.maximum(t, 1), 0.0)
        score = jnp.where(chosen, -jnp.inf, _finite_score(relevance - penalty))
        pick = jnp.argmax(score)
        return (chosen.at[pick].set(True), red_sum + redundancy[:, pick]), pick.astype(jnp.int32)

    init = (jnp.zeros((p,), bool), jnp.zeros((p,), relevance.dtype))
    _, picks = jax.lax.scan(step, init, jnp.arange(k))
    return picks


@jit_entry("k", check=_selection_check("conditional_relevance"))
def cmim(relevance, conditional_relevance, k: int) -> jax.Array:
    r"""Conditional mutual information maximisation (Fleuret 2004, Eq. 3; the fast form of Sec.
    3.2).

    ν(1) = argmax_i I(X_i; C);  ν(t+1) = argmax_i min( I(X_i; C), min_{s ≤ t} I(X_i; C | X_ν(s)) ).
    A predictor that copies a picked one has I(X_i; C | X_copy) = 0 and falls to the bottom. Keeps
    the running minimum score (Fleuret's partial-score idea without the lazy evaluation, which a
    dense precomputed matrix does not need). Ties go to the lowest index.

    Args:
      relevance: (p,) I(X_i; C).
      conditional_relevance: (p, p) with [i, k] = I(X_i; C | X_k) (`conditional_relevance_pairs`).
      k: number to pick.

    Returns:
      int32 (k,) indices in the order picked.
    """
    relevance = jnp.asarray(relevance)
    conditional_relevance = jnp.asarray(conditional_relevance)
    p = relevance.shape[0]
    _check_selection(relevance, conditional_relevance, k, "conditional_relevance")

    def step(carry, _):
        chosen, score = carry
        pick = jnp.argmax(jnp.where(chosen, -jnp.inf, _finite_score(score)))
        score = jnp.minimum(score, conditional_relevance[:, pick])
        return (chosen.at[pick].set(True), score), pick.astype(jnp.int32)

    _, picks = jax.lax.scan(step, (jnp.zeros((p,), bool), relevance), jnp.arange(k))
    return picks


def _check_selection(relevance, matrix, k, name):
    p = relevance.shape[0]
    if relevance.ndim != 1:
        raise ValueError(f"relevance must be 1-D; got shape {relevance.shape}")
    if matrix.shape != (p, p):
        raise ValueError(f"{name} must have shape ({p}, {p}); got {matrix.shape}")
    if not 1 <= int(k) <= p:
        raise ValueError(f"k must be in [1, {p}]; got {k=}")


@jit_entry()
def cfs_merit(subset_mask, class_correlation, feature_correlation) -> jax.Array:
    r"""Hall's CFS merit M_S = k r̄_cf / sqrt(k + k(k−1) r̄_ff) (Hall 1999, Eq. 4.1); batched over
    masks.

    r̄_cf is the mean feature-class correlation of the k features in S, r̄_ff the mean correlation
    over the k(k−1) ordered pairs of distinct features. M_∅ = 0.

    Args:
      subset_mask: bool (..., p).
      class_correlation: (p,); feature_correlation: (p, p) (diagonal ignored).
    """
    m = jnp.asarray(subset_mask).astype(jnp.asarray(class_correlation).dtype)
    k = jnp.sum(m, axis=-1)
    sum_cf = matmul(m, class_correlation)
    off = feature_correlation * (1.0 - jnp.eye(feature_correlation.shape[0], dtype=m.dtype))
    sum_ff = einsum("...i,ij,...j->...", m, off, m)  # = k(k-1) r̄_ff
    den = jnp.sqrt(k + sum_ff)
    return jnp.where(k > 0, sum_cf / jnp.where(k > 0, den, 1.0), 0.0)


class CfsResult(NamedTuple):
    """Output of `cfs_search`.

    Attributes:
      mask: (p,) bool, the subset of highest merit found.
      merit: its merit (0 for the empty set).
      n_expansions: subsets popped from the open list and expanded.
      truncated: True when the search stopped at ``max_expansions`` with open subsets left and fewer
        than ``max_stale`` consecutive non-improving expansions; the subset is then the best of an
        unfinished search (`cfs` reruns with a larger cap).
    """

    mask: jax.Array
    merit: jax.Array
    n_expansions: jax.Array
    truncated: jax.Array


def _check_cfs_inputs(class_correlation, feature_correlation, max_stale, max_features):
    rcf = jnp.asarray(class_correlation)
    rff = jnp.asarray(feature_correlation)
    p = rcf.shape[-1] if rcf.ndim else 0
    if rcf.ndim != 1 or rff.shape != (p, p):
        raise ValueError(
            "class_correlation must be (p,) and feature_correlation (p, p); "
            f"got {rcf.shape} and {rff.shape}"
        )
    for name, a in (("class_correlation", rcf), ("feature_correlation", rff)):
        if not isinstance(a, jax.core.Tracer):
            v = np.asarray(a)
            # rounding can leave an information-based correlation a few ulps below 0
            if not (np.all(np.isfinite(v)) and np.all(v >= -1e-6)):
                raise ValueError(
                    f"{name} must hold finite values >= 0 (symmetric uncertainty or |Pearson r|; "
                    "take absolute values of signed correlations)"
                )
    if isinstance(max_stale, int | np.integer) and int(max_stale) < 1:
        raise ValueError(f"max_stale must be >= 1; got {max_stale}")
    if isinstance(max_features, int | np.integer) and int(max_features) < 1:
        raise ValueError(f"max_features must be >= 1 or None; got {max_features}")
    return rcf, rff


class _CfsState(NamedTuple):
    """Search table of `cfs_search`. Every stored subset is an expanded subset plus one feature:
    ``parent`` (row of ``exp_masks``, -1 for the empty set) and ``added`` (-1 for the empty set),
    so a table of C subsets takes O(C) memory, not O(C p)."""

    parent: jax.Array  # (C,) int32
    added: jax.Array  # (C,) int32
    merits: jax.Array  # (C,)
    sizes: jax.Array  # (C,) int32
    status: jax.Array  # (C,) int8: 0 free, 1 open, 2 expanded
    used: jax.Array  # slots used
    exp_masks: jax.Array  # (E, p) bool: expanded subsets, in expansion order
    exp_sizes: jax.Array  # (E,) int32
    n_exp: jax.Array  # expansions so far
    best_mask: jax.Array  # (p,) bool
    best_merit: jax.Array
    stale: jax.Array  # consecutive non-improving expansions


def _cfs_capacity(p, max_expansions):
    return 1 + max_expansions * p  # each expansion stores at most p children


def _cfs_init(p, max_expansions, dtype) -> _CfsState:
    cap = _cfs_capacity(p, max_expansions)
    return _CfsState(
        parent=jnp.full((cap,), -1, jnp.int32),
        added=jnp.full((cap,), -1, jnp.int32),
        merits=jnp.zeros((cap,), dtype),
        sizes=jnp.zeros((cap,), jnp.int32),
        status=jnp.zeros((cap,), jnp.int8).at[0].set(1),  # the empty set
        used=jnp.int32(1),
        exp_masks=jnp.zeros((max_expansions, p), bool),
        exp_sizes=jnp.zeros((max_expansions,), jnp.int32),
        n_exp=jnp.int32(0),
        best_mask=jnp.zeros((p,), bool),
        best_merit=jnp.zeros((), dtype),
        stale=jnp.int32(0),
    )


def _cfs_grow(st: _CfsState, max_expansions: int) -> _CfsState:
    """The same search with room for ``max_expansions`` expansions (free slots appended)."""
    p = st.exp_masks.shape[1]
    extra = _cfs_capacity(p, max_expansions) - st.parent.shape[0]
    extra_e = max_expansions - st.exp_masks.shape[0]
    pad = lambda a, n, v: jnp.concatenate([a, jnp.full((n,) + a.shape[1:], v, a.dtype)])
    return st._replace(
        parent=pad(st.parent, extra, -1),
        added=pad(st.added, extra, -1),
        merits=pad(st.merits, extra, 0),
        sizes=pad(st.sizes, extra, 0),
        status=pad(st.status, extra, 0),
        exp_masks=pad(st.exp_masks, extra_e, False),
        exp_sizes=pad(st.exp_sizes, extra_e, 0),
    )


def _cfs_run(st: _CfsState, rcf, rff, max_stale, max_features):
    """Continue the best-first search from ``st`` until it stops or its table is full."""
    p = rcf.shape[0]
    dtype = st.merits.dtype
    rcf, rff = rcf.astype(dtype), rff.astype(dtype)
    off = rff * (1.0 - jnp.eye(p, dtype=dtype))
    cap = p if max_features is None else jnp.asarray(max_features, jnp.int32)
    max_exp = st.exp_masks.shape[0]
    capacity = st.parent.shape[0]
    idx = jnp.arange(p, dtype=jnp.int32)

    def has_feature(st, j):
        """(C,) whether each stored subset contains feature j."""
        from_parent = jnp.where(st.parent >= 0, st.exp_masks[jnp.maximum(st.parent, 0), j], False)
        return from_parent | (st.added == j)

    def lexicographic_first(tied, st):
        # equal sizes: the smallest sorted index tuple is the set holding the smallest element of
        # any pairwise difference, so keep, feature by feature, the sets that contain it
        def keep(j, t):
            has = t & has_feature(st, j)
            return jnp.where(jnp.any(has), has, t)

        return lax.fori_loop(0, p, keep, tied)

    def running(st):
        return jnp.any(st.status == 1) & (st.stale < max_stale) & (st.n_exp < max_exp)

    def expand(st):
        # pop: highest merit, then smallest size, then lexicographically smallest (heap order)
        open_ = st.status == 1
        top = jnp.max(jnp.where(open_, st.merits, -jnp.inf))
        tied = open_ & (st.merits == top)
        tied = tied & (st.sizes == jnp.min(jnp.where(tied, st.sizes, p + 1)))
        tied = lax.cond(jnp.sum(tied) > 1, lexicographic_first, lambda t, _: t, tied, st)
        i = jnp.argmax(tied)
        parent, s = st.parent[i], st.sizes[i]
        node = jnp.where(parent >= 0, st.exp_masks[jnp.maximum(parent, 0)], False)
        node = node | (idx == st.added[i])

        # children node + {j}: merits from the node's sums, O(p^2)
        nf = node.astype(dtype)
        child_cf = matmul(nf, rcf) + rcf
        child_ff = matmul(matmul(nf, off), nf) + matmul(off, nf) + matmul(nf, off)
        child_merit = child_cf / jnp.sqrt((s + 1).astype(dtype) + child_ff)
        # node + {j} is stored iff an earlier expanded subset equals it minus one feature, i.e. has
        # size s, shares s - 1 features with the node and adds j: O(expansions x p)
        rows = jnp.arange(max_exp) < st.n_exp
        shared = jnp.sum(st.exp_masks & node[None, :], axis=1)
        sibling = rows & (st.exp_sizes == s) & (shared == s - 1)
        seen = jnp.any((st.exp_masks & ~node[None, :]) & sibling[:, None], axis=0)
        new = ~node & ~seen & (s < cap)

        # best update in feature order, each child must beat the running best by 1e-12
        def update(j, carry):
            bm, bj = carry
            better = new[j] & (child_merit[j] > bm + 1e-12)
            return jnp.where(better, child_merit[j], bm), jnp.where(better, j, bj)

        best_merit, best_j = lax.fori_loop(0, p, update, (st.best_merit, jnp.int32(-1)))
        improved = best_j >= 0

        slot = jnp.where(new, st.used + jnp.cumsum(new) - 1, capacity)  # capacity = dropped
        return _CfsState(
            parent=st.parent.at[slot].set(st.n_exp, mode="drop"),
            added=st.added.at[slot].set(idx, mode="drop"),
            merits=st.merits.at[slot].set(child_merit, mode="drop"),
            sizes=st.sizes.at[slot].set(s + 1, mode="drop"),
            status=st.status.at[slot].set(jnp.int8(1), mode="drop").at[i].set(2),
            used=st.used + jnp.sum(new).astype(jnp.int32),
            exp_masks=st.exp_masks.at[st.n_exp].set(node),
            exp_sizes=st.exp_sizes.at[st.n_exp].set(s),
            n_exp=st.n_exp + 1,
            best_mask=jnp.where(improved, node | (idx == best_j), st.best_mask),
            best_merit=best_merit,
            stale=jnp.where(improved, 0, st.stale + 1),
        )

    return lax.while_loop(running, expand, st)


def _cfs_result(st: _CfsState, max_stale) -> CfsResult:
    truncated = (
        (st.n_exp >= st.exp_masks.shape[0]) & jnp.any(st.status == 1) & (st.stale < max_stale)
    )
    return CfsResult(st.best_mask, st.best_merit, st.n_exp, truncated)


def _cfs_dtype(rcf, rff):
    return jnp.result_type(rcf.dtype, rff.dtype, float_dtype())


def _cfs_advance(rcf, rff, max_stale, max_features, st):
    """Run the search from ``st``: (new state, `CfsResult`)."""
    st = _cfs_run(st, rcf, rff, max_stale, max_features)
    return st, _cfs_result(st, max_stale)


_cfs_continue = jax.jit(_cfs_advance)


@functools.partial(jax.jit, static_argnums=(4,))
def _cfs_first(rcf, rff, max_stale, max_features, max_expansions):
    """A search from the empty set in a table of ``max_expansions``: (state, `CfsResult`)."""
    st = _cfs_init(rcf.shape[0], max_expansions, _cfs_dtype(rcf, rff))
    return _cfs_advance(rcf, rff, max_stale, max_features, st)


def cfs_search(
    class_correlation,
    feature_correlation,
    max_stale=5,
    max_features=None,
    *,
    max_expansions: int = 128,
) -> CfsResult:
    r"""Hall's (1999, Sec. 4.3) best-first CFS search as one jit-compiled ``lax.while_loop``.

    Start from the empty set; repeatedly pop the open subset with the highest merit (ties: smaller
    subsets, then the lexicographically smallest sorted index tuple), expand it by every single
    feature addition (all children scored at once), store the children not seen before; a popped
    subset whose children do not beat the best merit so far (by more than 1e-12, children taken in
    feature order) is a non-improving expansion, and the search stops after ``max_stale``
    consecutive ones (Hall uses 5), when the open list is empty, or after ``max_expansions``
    expansions (then ``truncated`` is set if the search was not finished).

    The open list and the seen set are one fixed table (static shapes: no host round-trip per
    expansion), so the function runs under ``jit`` and ``vmap`` (e.g. over the data sets of a
    sweep). A stored subset is an expanded subset plus one feature, so the table takes about
    ``21 max_expansions p`` bytes plus ``max_expansions p`` for the expanded subsets (p = 1000:
    3 MB by default). Per expansion: the pop is O(table), child merits come from the popped
    subset's sums in O(p^2), and a child was seen iff an earlier expanded subset is the child minus
    one feature, O(max_expansions p).

    Args:
      class_correlation: (p,) feature-class correlations (symmetric uncertainty, |Pearson r|).
      feature_correlation: (p, p) feature-feature correlations (diagonal ignored).
      max_stale: consecutive non-improving expansions before stopping (int, may be traced).
      max_features: optional cap on the subset size (int, may be traced).
      max_expansions: static size of the search table.

    Returns:
      `CfsResult` (mask, merit, n_expansions, truncated).
    """
    rcf, rff = _check_cfs_inputs(class_correlation, feature_correlation, max_stale, max_features)
    if int(max_expansions) < 1:
        raise ValueError(f"max_expansions must be >= 1; got {max_expansions}")
    return _cfs_first(rcf, rff, max_stale, max_features, int(max_expansions))[1]


def cfs(class_correlation, feature_correlation, max_stale: int = 5, max_features=None):
    r"""Correlation-based feature selection with forward best-first search (Hall 1999, Sec. 4.3).

    Correlation measure (choose when building the inputs, or use `cfs_correlations`): symmetric
    uncertainty for discrete predictors (`symmetric_uncertainty_discrete`), |Pearson r| for
    continuous ones (`class_correlation_continuous`, `feature_correlation_continuous`).

    The search is `cfs_search`'s compiled loop (see there for the rules) with a table of 128
    expansions (every Table-1 data set needs 6-18); a search that fills it continues where it
    stopped in a four times larger table, until it finishes.

    Args:
      class_correlation: (p,) feature-class correlations.
      feature_correlation: (p, p) feature-feature correlations.
      max_stale: consecutive non-improving expansions before stopping.
      max_features: optional cap on the subset size.

    Returns:
      (selected, merit): sorted int array of chosen indices and its merit (float).
    """
    rcf, rff = _check_cfs_inputs(class_correlation, feature_correlation, max_stale, max_features)
    p = rcf.shape[0]
    max_stale = int(max_stale)
    max_features = p if max_features is None else int(max_features)
    expansions = 128
    st, res = _cfs_first(rcf, rff, max_stale, max_features, expansions)
    while bool(res.truncated):
        expansions *= 4
        st, res = _cfs_continue(rcf, rff, max_stale, max_features, _cfs_grow(st, expansions))
    return np.flatnonzero(np.asarray(res.mask)).astype(np.int64), float(res.merit)


@jit_entry("n_states", "n_classes", "n_bins", check=_eager_check)
def cfs_correlations(codes, values, y, n_states, n_classes: int, weight=None, n_bins: int = 10):
    r"""CFS inputs of a data set in predictor order [discrete..., continuous...].

    Continuous data only: Hall's |Pearson r| (`class_correlation_continuous`,
    `feature_correlation_continuous`). With discrete columns: symmetric uncertainty
    (`symmetric_uncertainty_discrete`), continuous columns first cut into ``n_bins`` equal-frequency
    bins (`equal_frequency_codes`).

    Returns:
      (class_correlation (p,), feature_correlation (p, p)).
    """
    codes, values = jnp.asarray(codes), jnp.asarray(values)
    n_states = as_state_tuple(n_states, codes.shape[1])
    if codes.shape[1] == 0:
        return (
            class_correlation_continuous(values, y, n_classes, weight),
            feature_correlation_continuous(values, weight),
        )
    if values.shape[1]:
        binned = equal_frequency_codes(values, n_bins, weight)
        codes = jnp.concatenate([codes.astype(jnp.int32), binned], axis=1)
        n_states = n_states + (n_bins,) * values.shape[1]
    return symmetric_uncertainty_discrete(codes, y, n_states, n_classes, weight)


def threshold_filter(scores, threshold) -> jax.Array:
    r"""Threshold filter (slides, "filter selective Gaussian NB"): keep X_i iff score_i > threshold.

    Equivalent to keeping X_(1..h) of the descending order, h the last rank with I(X_(h), C) > t.
    Returns a bool (p,) mask.
    """
    if _concrete(threshold) and np.isnan(np.asarray(threshold, dtype=np.float64)).any():
        raise ValueError(
            "threshold must be a number, not NaN (every comparison with NaN is False, so nothing "
            "would be kept); pass a finite threshold, e.g. 0.0"
        )
    return jnp.asarray(scores) > threshold


def mi_prefilter(
    codes,
    y,
    key,
    n_states,
    n_classes: int,
    weight=None,
    n_probes: int = 3,
    probe_states: int = 5,
    rule: str = "max",
):
    r"""L1-NB prefilter with random probes (Vidaurre, Bielza & Larrañaga 2013, Sec. 6.1).

    Appends `n_probes` random predictors, each uniform over `probe_states` categories (the paper:
    three, five categories), computes I(X_i; C) for real and probe predictors in one call, and drops
    every predictor whose MI is lower than a probe's. The paper's wording, "lower than one of the
    three random predictors", means lower than at least one, i.e. below the maximum probe MI:
    `rule="max"` (default). `rule="min"` drops only predictors below every probe (a looser filter).
    A predictor tied with the threshold is kept.

    Args:
      codes, y, n_states, n_classes, weight: as in `mutual_information_discrete`.
      key: `jax.random` key for the probes.
      n_probes, probe_states: probe design.
      rule: "max" (paper) or "min".

    Returns:
      (keep, mi, threshold): bool (q,) mask, (q,) MI of the real predictors, scalar threshold.
    """
    if rule not in ("max", "min"):
        raise ValueError(f"rule must be 'max' or 'min'; got {rule!r}")
    for name, value in (("n_probes", n_probes), ("probe_states", probe_states)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise TypeError(f"{name} must be an int; got {value!r}")
    if int(n_probes) < 1 or int(probe_states) < 2:
        raise ValueError(
            f"need n_probes >= 1 and probe_states >= 2; got {n_probes=}, {probe_states=}"
        )
    n_probes, probe_states = int(n_probes), int(probe_states)
    _eager_check(
        {"codes": codes, "y": y, "n_states": n_states, "n_classes": n_classes, "weight": weight}
    )
    codes = jnp.asarray(codes)
    _check_codes(codes, jnp.asarray(y), n_classes)
    q = codes.shape[1]
    states = as_state_tuple(n_states, q)
    # whole-number float codes are valid codes too; randint draws integers only
    int_dtype = codes.dtype if jnp.issubdtype(codes.dtype, jnp.integer) else jnp.int32
    probes = jax.random.randint(key, (codes.shape[0], n_probes), 0, probe_states, dtype=int_dtype)
    probes = probes.astype(codes.dtype)
    mi_all = mutual_information_discrete(
        jnp.concatenate([codes, probes], axis=1),
        y,
        states + (int(probe_states),) * n_probes,
        n_classes,
        weight,
    )
    mi, probe_mi = mi_all[:q], mi_all[q:]
    threshold = jnp.max(probe_mi) if rule == "max" else jnp.min(probe_mi)
    return mi >= threshold, mi, threshold


@jit_entry()
def ranking_masks(scores) -> tuple[jax.Array, jax.Array]:
    r"""Nested masks of the descending-score ranking: row h keeps the top h predictors, h = 0..p.

    Returns:
      (masks bool (p+1, p), order int (p,)); ties keep the lower index first (stable sort).
    """
    scores = jnp.asarray(scores)
    p = scores.shape[0]
    order = jnp.argsort(-scores, stable=True)
    rank = jnp.zeros((p,), jnp.int32).at[order].set(jnp.arange(p, dtype=jnp.int32))
    masks = rank[None, :] < jnp.arange(p + 1)[:, None]
    return masks, order


def filter_wrapper_forward(
    scores, evaluate_fn: Callable, batched: bool = False, max_features: int | None = None
):
    r"""Filter-wrapper selective NB (slides, "filter-wrapper selective Gaussian NB").

    1. Sort predictors by decreasing score (e.g. `mutual_information_gaussian`). 2. Evaluate the
    empty model (the evaluator should predict the most frequent class for an empty
       mask), then add predictors one at a time in that order and evaluate each nested subset.
    3. Keep the subset with the lowest error; ties go to the smaller subset. At most p + 1 models
    are evaluated.

    Args:
      scores: (p,) filter scores.
      evaluate_fn: `mask (p,) bool -> error` (scalar, lower is better), e.g. validation error of a
        selective NB using `mask`; with `batched=True` it receives all masks (s, p) at once and
        returns (s,) errors (use `jax.vmap` of a jitted evaluator).
      batched: see above.
      max_features: stop after this many predictors (default p).

    Returns:
      (mask, errors, order): best bool (p,) mask, (h+1,) errors of the evaluated nested subsets, the
      ranking.
    """
    masks, order = ranking_masks(scores)
    p = masks.shape[1]
    h = p if max_features is None else int(max_features)
    if not 0 <= h <= p:
        raise ValueError(f"max_features must be in [0, {p}]; got {max_features}")
    masks = masks[: h + 1]
    if batched:
        errors = np.asarray(evaluate_fn(masks), dtype=np.float64).reshape(-1)
    else:
        errors = np.array([float(evaluate_fn(masks[i])) for i in range(h + 1)])
    if errors.shape != (h + 1,):
        raise ValueError(f"evaluate_fn must return one error per mask; got shape {errors.shape}")
    best = int(np.argmin(errors))  # first minimum = smallest subset
    # indexed on the host: an eager index of a device array compiles two small programs
    return np.asarray(masks)[best], errors, np.asarray(order)
