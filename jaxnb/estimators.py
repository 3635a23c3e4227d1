r"""Thin scikit-learn-style estimators over the functional core.

Estimators validate eagerly (NumPy, before any jit), call one jitted core function, keep fitted
pytrees in attributes ending in ``_`` and hand NumPy back. scikit-learn is optional: ``clone``,
``cross_val_score`` and pipelines work when it is installed because the estimators implement
``get_params`` / ``set_params`` and declare themselves classifiers.
"""

from __future__ import annotations

import copy
import functools
import inspect
import numbers
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from . import likelihood as lk
from ._batch import size_bucket
from ._dtypes import float_dtype
from .data import (
    FeatureEncoder,
    _aligned_empty,
    check_same_classes,
    check_sample_weight,
    check_score_labels,
    encode_in_classes,
    encode_labels,
    first_partial_fit_classes,
    one_class_error,
)
from .exceptions import ConvergenceWarning, NotFittedError
from .likelihood import _rows_per_block
from .methods.nb import fit_stats
from .params import fit_mle
from .suffstats import SuffStats, _onehot_layout, merge

__all__ = ["BaseNB", "NaiveBayes"]

_log_joint = jax.jit(lk.log_joint)
_log_contrib = jax.jit(lk.log_contributions)


@jax.jit
def _weighted_contrib(params, codes, values, weights):
    """`explain`'s terms W[i, j] L[r, i, j] for weights (p,) (a 0/1 mask too) or (p, c); a zero
    weight gives 0, not 0 x (-inf)."""
    L = lk.log_contributions(params, codes, values)
    W = weights if weights.ndim == 2 else weights[:, None]
    return jnp.where(W[None] == 0, 0.0, L * W[None].astype(L.dtype))


_fit_mle = jax.jit(fit_mle)
_merge = jax.jit(merge)

_IMPORTANCE_ROWS = 2048


def _reservoir(filled: int, seen: int, n: int, size: int = _IMPORTANCE_ROWS):
    """Which rows of a batch of ``n`` enter a uniform sample of ``size`` rows that holds
    ``filled`` rows after ``seen`` rows of the stream (reservoir sampling, Vitter's algorithm R:
    the first rows fill it, then row t replaces a uniform slot with probability size / (t + 1)).

    Returns ``(take, rows, slots)``: the first ``take`` rows are appended; row ``rows[k]`` of the
    batch then replaces slot ``slots[k]`` (each slot at most once: the later row wins, as row by
    row). The draw is seeded by (``seen``, ``n``): the same stream, batched the same way, keeps
    the same rows. The acceptances are drawn by thinning (candidates at the batch's first, largest
    rate, each kept with its own rate over it), so a batch costs O(accepted rows), not O(n)."""
    room = max(size - filled, 0)
    take = min(room, n)
    none = np.zeros(0, np.int64)
    if n <= room:
        return take, none, none
    rng = np.random.default_rng([seen, n])
    m, a = n - room, seen + room  # rows left after filling, and the stream position of the first
    top = size / (a + 1)
    k = int(rng.binomial(m, min(top, 1.0)))
    pos = np.sort(rng.choice(m, size=k, replace=False)).astype(np.int64)
    pos = pos[rng.random(k) < (a + 1) / (a + 1 + pos)]  # rate size / (t + 1) at t = a + pos
    slot = rng.integers(0, size, pos.size)
    if pos.size:
        last = np.unique(slot[::-1], return_index=True)[1]  # a slot hit twice: the later row
        pos, slot = pos[::-1][last], slot[::-1][last]
    return take, pos + room, slot


def _on_device(*arrays):
    """Host arrays on the default device, as one tuple (device arrays pass through).

    `jax.device_put` canonicalizes dtypes as `jnp.asarray` does (int64 -> int32 and float64 ->
    float32 without x64), but compiles nothing: in this JAX, `jnp.asarray` of a NumPy array
    compiles a small staging program for each new shape and dtype (~10 ms each), three to five
    on a first fit and more for each new training-row bucket.
    """
    host = tuple(a if isinstance(a, jax.Array) else np.asarray(a) for a in arrays)
    return jax.device_put(host)


_HOST_ARG_MAX_BYTES = 1 << 20


def _scorer_arg(a):
    """Encoded prediction rows as the argument of a compiled scorer.

    A NumPy array up to 1 MiB goes in as it is: the compiled call copies it to the device itself
    (~10 µs for both arrays of a few rows). With a separate `jax.device_put` of each, a one-row
    `predict_proba` took 330 µs; without, 183 µs. Larger arrays go through `_device` (no
    second copy). Every `_log_joint_scores` and `_contributions` hands its rows to jitted
    functions only (an eager `jnp` operation on a NumPy array would stage it itself).
    """
    if (
        isinstance(a, np.ndarray)
        and a.nbytes <= _HOST_ARG_MAX_BYTES
        and a.dtype == jax.dtypes.canonicalize_dtype(a.dtype)
    ):
        return a
    return _device(a)


def _device(a):
    """NumPy -> JAX without a second copy of the data.

    The encoder's outputs are fresh, 64-byte aligned arrays that nothing mutates afterwards, so
    XLA:CPU may use their memory directly (``may_alias``; other backends or unaligned arrays copy).
    """
    if isinstance(a, np.ndarray) and a.dtype == jax.dtypes.canonicalize_dtype(a.dtype):
        return jax.device_put(a, may_alias=True)
    return _on_device(a)[0]


_BUCKET_MAX_ROWS = 1 << 18  # above this, a compilation is small next to the scoring itself

#: Training sets up to this many rows are padded to the row buckets (`BaseNB._pad_training`) by the
#: estimators whose fit (or KDE prediction) costs compute per row: there a compilation (0.3-3 s)
#: costs far more than the padded rows; above it, the compute grows with the rows and a new size
#: compiles once. (`NaiveBayes` pads up to `_BUCKET_MAX_ROWS`: its fit is one pass of sums.)
_PAD_MAX_ROWS = 8192


def _row_bucket(n: int) -> int:
    """Row count a prediction batch of n rows is padded to: at least 16, then 8 sizes per octave
    (at most 1/8 of padding), n itself above `_BUCKET_MAX_ROWS` (no copy of large inputs)."""
    return n if n > _BUCKET_MAX_ROWS else max(16, size_bucket(n))


def _pad_rows(a, m, repeat_first=False):
    """``a`` (n, ...) followed by m - n zero rows (copies of row 0 with ``repeat_first``), in a
    fresh aligned array (see `_device`)."""
    out = _aligned_empty((m,) + a.shape[1:], a.dtype)
    out[: a.shape[0]] = a
    out[a.shape[0] :] = a[:1] if repeat_first else 0
    return out


def undefined_score_rows(scores, xp=np):
    """Rows of ``scores (n, c)`` with no defined class score: a NaN, or -inf for every class.

    ``xp``: ``np`` on host arrays, ``jnp`` inside compiled code (chunked prediction)."""
    return xp.isnan(scores).any(axis=-1) | ~(scores > -xp.inf).any(axis=-1)


def undefined_scores_error(rows, dtype, what="X rows", detail=""):
    """The ValueError for `undefined_score_rows` (``rows``: their indices, as the caller names
    them). The usual cause is a continuous value so far from every class that the squared
    standardised distance overflows the dtype (|x - mu| / sigma above ~1.8e19 in float32, ~1e154
    in float64); with alpha = 0 it can also be a discrete state no class has seen."""
    dtype = np.dtype(dtype).name
    more = " ..." if len(rows) > 5 else ""
    return ValueError(
        f"{what} {list(map(int, rows[:5]))}{more} ({len(rows)} in all) get no finite class score "
        f"in {dtype}{detail}: a continuous value too far from every class for the squared "
        f"standardised distance to fit in {dtype}, or (alpha = 0) a discrete state no class has "
        "seen. Rescale or clip the data, enable float64 "
        "(jax.config.update('jax_enable_x64', True)), or use alpha > 0"
    )


def _centring(params, weights=None):
    """`likelihood.expansion_shift` on the device (None stays None)."""
    shift = lk.expansion_shift(params, weights)
    return None if shift is None else jax.device_put(shift)


def _keep(est, name, compute, *sources):
    """Store ``compute(*sources)`` on ``est`` under ``name`` with the objects it came from (a fit
    forms what its predictions need once; see `_kept`)."""
    setattr(est, name, (sources, compute(*sources)))


def _kept(est, name, compute, *sources):
    """What `_keep` stored under ``name`` if it came from these very ``sources``, else
    ``compute(*sources)`` now (sources replaced, or a model pickled without it): prediction
    does not write to the estimator."""
    kept = est.__dict__.get(name)
    if kept is not None and all(a is b for a, b in zip(kept[0], sources, strict=True)):
        return kept[1]
    return compute(*sources)


def _host_log_softmax(scores):
    """Row-wise log-softmax of host scores (n, c) in NumPy, in their dtype.

    The scores are on the host already; an eager `jax.nn.log_softmax` there compiled one more
    program for each row bucket (~45 ms on a 2-core Xeon, a quarter of a first `predict_proba`
    on a new batch size) and dispatched it on every call. A row without a finite score (all
    -inf, or a NaN) comes out NaN, as from JAX, and `_check_scores` reports it.
    """
    with np.errstate(invalid="ignore"):
        z = scores - scores.max(axis=-1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _decision_scores(scores):
    """scikit-learn's decision function from per-class scores (n, c), NumPy or JAX: the log odds
    of class 1 against class 0 (n,) with two classes, the scores themselves otherwise."""
    return scores[:, 1] - scores[:, 0] if scores.shape[-1] == 2 else scores


def _check_scores(scores, values):
    """Predictions never return NaN posteriors or an arbitrary argmax: rows found by
    `undefined_score_rows` raise, with the largest continuous value of those rows."""
    if scores.size == 0:
        return
    rows = np.flatnonzero(undefined_score_rows(scores))
    if rows.size == 0:
        return
    detail = ""
    if values.size:
        v = values[rows]
        vmax = float(np.abs(np.where(np.isfinite(v), v, 0.0)).max())
        detail = f" (largest |continuous value| in those rows: {vmax:.3g})"
    raise undefined_scores_error(rows, scores.dtype, detail=detail)


def _as_mesh(mesh):
    """The estimators' ``mesh`` option: None (one device), an int (that many devices, a 1-D
    `jaxnb.distributed.make_mesh`) or a 1-D `jax.sharding.Mesh`; None for a single device."""
    if mesh is None:
        return None
    from jax.sharding import Mesh

    if isinstance(mesh, Mesh):
        if len(mesh.axis_names) != 1:
            raise ValueError(
                f"mesh must be 1-D (rows are split over one axis); got axes {mesh.axis_names} "
                "(use jaxnb.distributed.make_mesh)"
            )
        return mesh if mesh.devices.size > 1 else None
    if isinstance(mesh, bool) or not isinstance(mesh, numbers.Integral):
        raise TypeError(
            f"mesh must be None, a number of devices or a jax.sharding.Mesh; got {mesh!r}"
        )
    if not 1 <= int(mesh) <= jax.device_count():
        raise ValueError(
            f"mesh (a number of devices) must lie in [1, {jax.device_count()}], the devices "
            f"available; got mesh={mesh} (on CPU, more devices: set "
            "XLA_FLAGS=--xla_force_host_platform_device_count=N before JAX starts)"
        )
    if int(mesh) == 1:
        return None
    from .distributed import make_mesh

    return make_mesh(int(mesh))


def _fitted_names(obj) -> list[str]:
    """Instance attributes that hold fitted state (scikit-learn's trailing-underscore names)."""
    return [k for k in vars(obj) if k.endswith("_") and not k.startswith("_")]


def _transactional(method, *, reset: bool):
    """Wraps an estimator's ``fit`` / ``partial_fit``: all or nothing.

    A call that raises leaves the estimator exactly as before the call (a fitted model stays
    usable, an unfitted one stays unfitted) instead of half updated, e.g. with new ``classes_``
    beside the old parameters. ``reset`` (``fit``): the fitted attributes of an earlier fit are
    dropped first, so none survives a refit with other settings. Nested calls (a subclass's fit
    calling ``super().fit``, ``fit`` calling ``partial_fit``) run inside the outermost one.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if self.__dict__.get("_fit_depth", 0):
            return method(self, *args, **kwargs)
        saved = dict(self.__dict__)
        if "encoder_" in saved:  # `partial_fit` grows the encoder in place
            saved["encoder_"] = copy.deepcopy(saved["encoder_"])
        if reset:
            for name in _fitted_names(self):
                delattr(self, name)
        self._fit_depth = 1
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        finally:
            self.__dict__.pop("_fit_depth", None)

    wrapper._transactional = True
    return wrapper


class BaseNB:
    """Shared machinery: parameters, input encoding, prediction from ``_log_joint_scores``.

    Subclasses implement ``fit`` (setting ``encoder_``, ``classes_`` and their fitted pytrees) and
    ``_log_joint_scores(codes, values)`` returning (n, c) unnormalized log posteriors (those whose
    score is a bias plus per-predictor terms also mix in `_Additive` for ``explain``). Every
    ``fit`` / ``partial_fit`` a subclass defines is made all-or-nothing (`_transactional`): a call
    that raises leaves the estimator as it was, and ``fit`` starts from no fitted attributes.
    """

    _estimator_type = "classifier"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("fit", "partial_fit"):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_transactional", False):
                setattr(cls, name, _transactional(method, reset=name == "fit"))

    # ------------------------------------------------------------------ parameters
    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return [
            p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD
        ]

    def get_params(self, deep=True):
        """Constructor parameters (scikit-learn protocol)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor parameters (scikit-learn protocol)."""
        valid = self._param_names()
        for k, v in params.items():
            if k not in valid:
                raise ValueError(
                    f"invalid parameter {k!r} for {type(self).__name__}; valid "
                    f"parameters are {valid}"
                )
            setattr(self, k, v)
        return self

    def __repr__(self):
        defaults = {
            p.name: p.default
            for p in inspect.signature(type(self).__init__).parameters.values()
            if p.name != "self"
        }
        args = [
            f"{k}={v!r}"
            for k, v in self.get_params().items()
            if not (isinstance(v, (str, int, float, type(None), bool)) and defaults.get(k) == v)
        ]
        return f"{type(self).__name__}({', '.join(args)})"

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, Tags, TargetTags

        tags = Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(),
        )
        tags.input_tags.allow_nan = getattr(self, "missing", "error") == "ignore"
        tags.input_tags.categorical = True
        return tags

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        """Pickle state: the attributes, with a `jax.sharding.Mesh` ``mesh`` stored as its number
        of devices (a mesh holds device handles, which do not pickle and mean nothing in another
        process); the loaded estimator refits on that many devices of its own process."""
        state = self.__dict__.copy()
        from jax.sharding import Mesh

        if isinstance(state.get("mesh"), Mesh):
            state["mesh"] = int(state["mesh"].devices.size)
        return state

    def _warn_unconverged(self, message: str) -> None:
        """`jaxnb.ConvergenceWarning` located at the user's ``fit`` call (past ``fit`` and the
        `_transactional` wrapper every subclass's ``fit`` gets)."""
        warnings.warn(message, ConvergenceWarning, stacklevel=4)

    def __copy__(self):
        # copies keep a Mesh as it is (only pickling turns it into a device count)
        twin = type(self).__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

    def __deepcopy__(self, memo):
        twin = type(self).__new__(type(self))
        memo[id(self)] = twin
        twin.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return twin

    @property
    def feature_names_in_(self):
        """Column names of the training DataFrame (all strings), as scikit-learn; absent (an
        AttributeError) for arrays or unnamed columns. Later DataFrames must match them."""
        names = self.__dict__.get("_names_in")  # estimators without an encoder (streaming)
        if names is None:
            names = getattr(self.__dict__.get("encoder_"), "feature_names_in_", None)
        if names is None:
            raise AttributeError(
                f"{type(self).__name__} has no feature_names_in_: it was not fitted on a "
                "DataFrame whose column names are all strings"
            )
        return names

    # ------------------------------------------------------------------ encoding
    def _make_encoder(self):
        return FeatureEncoder(
            discrete=getattr(self, "discrete", "auto"),
            n_states=getattr(self, "n_states", None),
            missing=getattr(self, "missing", "error"),
            unseen=getattr(self, "unseen", "error"),
            offers=[o for o in ("missing", "unseen", "n_states") if o in self._param_names()],
            owner=type(self).__name__,
        )

    def _validate_fit(self, X, y, sample_weight=None):
        """Encode and check X, y, sample_weight; sets ``encoder_``, ``classes_``."""
        enc = self._make_encoder().fit(X)
        codes, values = enc.transform(
            X, dtype=float_dtype(), fit=True, code_dtype=self._code_dtype(enc)
        )
        classes, y_enc = encode_labels(y, codes.shape[0])
        if len(classes) < 2:
            raise one_class_error(classes, "a classifier needs at least two classes")
        w = check_sample_weight(sample_weight, codes.shape[0], dtype=float_dtype())
        self.encoder_ = enc
        self.classes_ = classes
        self.n_features_in_ = enc.n_features_in_
        return codes, values, y_enc, w

    @staticmethod
    def _pad_training(codes, values, y_enc, *weights, max_rows=None):
        """Training rows padded to `_row_bucket` rows: zero-weight copies of the first row, each
        of ``weights`` padded with zeros, so training sets of nearby sizes (CV folds, learning
        curves) share one compiled program. Only for fits whose every row-dependent quantity is a
        weighted sum (host-side row choices such as folds or validation splits are made on the
        real rows first). Above ``max_rows`` rows nothing is padded (a fit whose compute grows with
        the rows pays up to 1/8 more for padding, which outweighs a compilation on large data).
        Returns (codes, values, y_enc, *weights)."""
        n = codes.shape[0]
        m = _row_bucket(n)
        if m == n or (max_rows is not None and n > max_rows):
            return (codes, values, y_enc, *weights)
        rows = tuple(_pad_rows(a, m, repeat_first=True) for a in (codes, values, y_enc))
        return rows + tuple(_pad_rows(np.asarray(w), m) for w in weights)

    def _stats(self, codes, values, y, w, block_size=None):
        """Sufficient statistics of encoded rows (after `_validate_fit`) with weights ``w``: one
        pass over the rows, data-parallel over the devices of the ``mesh`` option when the
        estimator has one (`jaxnb.distributed.fit_stats_sharded`: the same statistics up to
        round-off)."""
        kw = dict(
            n_states=self.n_states_,
            n_classes=len(self.classes_),
            block_size=block_size,
            check_input=False,  # encoded and validated by _validate_fit
        )
        mesh = _as_mesh(getattr(self, "mesh", None))
        if mesh is not None:
            from .distributed import fit_stats_sharded

            rows = (np.asarray(a) for a in (codes, values, y, w))
            return fit_stats_sharded(*rows, mesh=mesh, **kw)
        return fit_stats(*_on_device(codes, values, y, w), **kw)

    def _encode(self, X):
        self._check_fitted()
        return self.encoder_.transform(
            X, dtype=float_dtype(), code_dtype=self._code_dtype(self.encoder_)
        )

    def _code_dtype(self, enc):
        """Integer type of the codes handed to the core (int32 unless a subclass narrows it)."""
        return np.int32

    def _check_fitted(self):
        if not hasattr(self, "classes_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")

    @property
    def n_states_(self):
        return tuple(self.encoder_.n_states_)

    @property
    def n_classes_(self):
        return len(self.classes_)

    def _internal_to_user(self):
        """User column index of each internal predictor [discrete..., continuous...] (the
        identity for the estimators without an encoder, which keep the user's columns)."""
        enc = self.__dict__.get("encoder_")
        if enc is None:
            return np.arange(self.n_features_in_)
        return np.concatenate([enc.discrete_idx_, enc.continuous_idx_]).astype(int)

    def _user_order(self):
        """Permutation taking internal predictor order [discrete, continuous] to user columns:
        ``internal_array[..., _user_order()]`` is in the user's column order."""
        return np.argsort(self._internal_to_user())

    # ------------------------------------------------------------------ prediction
    def _log_joint_scores(self, codes, values):  # pragma: no cover - abstract
        raise NotImplementedError

    def _on_bucketed_rows(self, X, fn):
        """``fn(codes, values)`` on X's encoded rows padded to `_row_bucket` rows, back on the
        host and cut to n; returns it with the unpadded values.

        Every compiled scorer is specialized to its row count, so without the padding each new
        test-set size (CV folds differ by a row) compiled a new program (~0.05-0.1 s). Padded rows
        are zeros (valid codes, finite values), computed row by row and dropped.
        """
        codes, values = self._encode(X)
        return self._on_bucketed_codes(codes, values, fn), values

    @staticmethod
    def _on_bucketed_codes(codes, values, fn):
        """``fn(codes, values)`` on encoded rows padded to `_row_bucket` rows, cut back to n."""
        n = codes.shape[0]
        m = _row_bucket(n)
        if m > n:
            codes, values = _pad_rows(codes, m), _pad_rows(values, m)
        return np.asarray(fn(_scorer_arg(codes), _scorer_arg(values)))[:n]

    def _bucketed_scores(self, X, log_softmax=False):
        """`_log_joint_scores` on X's rows (padded, `_on_bucketed_rows`), checked to be defined;
        normalized on the host with ``log_softmax`` (`_host_log_softmax`)."""
        out, values = self._on_bucketed_rows(X, self._log_joint_scores)
        if log_softmax:
            out = _host_log_softmax(out)
        _check_scores(out, values)
        return out

    def predict_joint_log_proba(self, X):
        """Unnormalized per-class log scores (n, c), columns in the order of ``classes_``.

        For `NaiveBayes` this is the joint log-likelihood log P(x, Y=c) (scikit-learn's naive
        Bayes classes use the same name); for weighted, penalized and structured models it is the
        model's own log score before normalization. ``predict_log_proba`` is its log-softmax.
        """
        return self._bucketed_scores(X)

    def decision_function(self, X):
        """Scores in scikit-learn's classifier convention.

        With two classes: the log posterior odds log P(classes_[1] | x) − log P(classes_[0] | x),
        shape (n,), positive where ``classes_[1]`` is predicted, so that scorers and metrics
        that take a decision function (``scoring="roc_auc"``, ``roc_curve``) rank by it. With more
        classes: the per-class scores (n, c) of `predict_joint_log_proba`.
        """
        return _decision_scores(self._bucketed_scores(X))

    def predict_log_proba(self, X):
        """Log posterior probabilities (n, c), columns in the order of ``classes_``."""
        return self._bucketed_scores(X, log_softmax=True)

    def predict_proba(self, X):
        """Posterior probabilities (n, c), columns in the order of ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """Most probable class (ties: the first in ``classes_``)."""
        scores = self._bucketed_scores(X)  # checks fitted before classes_ is read
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X, y, sample_weight=None):
        """Weighted accuracy: the weighted share of rows whose `predict` equals ``y``.

        ``y`` is checked as in `fit` (NaN, complex, fractional floats, length). Labels outside
        ``classes_`` count as errors; text labels for a model of numeric classes (or the reverse)
        are a ValueError, not an accuracy of 0.
        """
        pred = self.predict(X)
        y = check_score_labels(y, pred.shape[0], self.classes_)
        w = check_sample_weight(sample_weight, y.shape[0], dtype=np.float64)
        return float(np.sum(w * (pred == y)) / np.sum(w))


class _Additive:
    """Mixin of the estimators whose score is a per-class bias plus one term per predictor:
    ``predict_joint_log_proba(X) == score_bias_ + explain(X).sum(1)``, and
    ``feature_importances_`` from the same terms. A subclass implements ``_contributions(codes,
    values)`` (n, p, c), predictors in the internal order [discrete, continuous], and
    ``_score_bias()`` (c,); a fit that does not pass through `_validate_fit` calls
    ``_keep_sample(codes, values)`` with its encoded training rows."""

    # no abstract stubs here: a mixin listed first would shadow a base class's implementation

    def explain(self, X):
        r"""Exact additive per-predictor contributions to each class's log score.

        The model's score of class j is ``score_bias_[j] + Σ_i explain(X)[r, i, j]`` (that is
        `predict_joint_log_proba`, up to round-off), so the posterior is the softmax over j of
        that sum. For `NaiveBayes` the term of predictor i is log f(x_i | j) and the bias the log
        prior; for the weighted, selective and penalized models it is the term as the model
        weighs it: 0 for a predictor the model leaves out, w_ij log f(x_i | j) for a weighted one,
        and under fsNB's Ω(α) a predictor at level α_i = 0 adds the same value to every class.
        Missing values and ignored unseen categories contribute 0.

        Returns:
          Array (n, p, c): predictors in the user's column order, classes as in ``classes_``.
        """
        # rows padded as in prediction: test sets of nearby sizes share a program
        L, _ = self._on_bucketed_rows(X, self._contributions)
        return L[:, self._user_order(), :]

    def _validate_fit(self, X, y, sample_weight=None):
        # every batch fit of an additive model passes here: keep its first rows for the importances
        codes, values, y_enc, w = super()._validate_fit(X, y, sample_weight)
        self._keep_sample(codes, values)
        return codes, values, y_enc, w

    def _keep_sample(self, codes, values, *, more=False):
        """Keep up to `_IMPORTANCE_ROWS` training rows, spread over the whole training set.

        A fit's rows (``more=False``): all of them, or that many evenly spaced ones (rows
        floor(k n / R)), so a file sorted by class is sampled across its classes (the first
        rows of such a file are one class). Later batches of the same fit (``more``, from
        ``partial_fit``) first fill the sample up, then enter it by reservoir sampling (row t
        replaces a uniform slot with probability R / (t + 1)), with a generator seeded by the
        rows seen so far: the sample stays a uniform one of every row streamed, the same for the
        same stream. Pieces are joined once, so a row-by-row stream costs O(rows), not
        O(rows²)."""
        n = codes.shape[0]
        if not more or not hasattr(self, "_sample_rows"):
            if n > _IMPORTANCE_ROWS:
                pick = np.arange(_IMPORTANCE_ROWS) * n // _IMPORTANCE_ROWS
                codes, values = codes[pick], values[pick]
            # copies: a view would keep the whole encoded data set alive
            self._sample_pieces = [(codes.copy(), values.copy())]
            self._sample_rows, self._sample_seen = min(n, _IMPORTANCE_ROWS), n
            return
        seen = getattr(self, "_sample_seen", self._sample_rows)
        take, rows, slots = _reservoir(self._sample_rows, seen, n)
        if take:
            self._sample_pieces.append((codes[:take].copy(), values[:take].copy()))
            self._sample_rows += take
        if rows.size:
            buf_codes, buf_values = self._sample()
            buf_codes[slots], buf_values[slots] = codes[rows], values[rows]
        self._sample_seen = seen + n

    def _sample(self):
        """The kept training rows as one (codes, values) pair."""
        if len(self._sample_pieces) != 1:
            codes, values = zip(*self._sample_pieces, strict=True)
            self._sample_pieces = [(np.concatenate(codes), np.concatenate(values))]
        return self._sample_pieces[0]

    @property
    def feature_importances_(self):
        r"""Mean spread of each predictor's term across classes, normalized to sum 1 (p,).

        importance_i ∝ mean_r [max_j E[r,i,j] − min_j E[r,i,j]], E the model's own additive terms
        (`explain`) on the training rows, at most 2048 of them: evenly spaced over a fit's rows,
        a uniform (reservoir) sample of every batch with ``partial_fit`` (a fixed, seeded draw:
        the same stream gives the same importances): how far predictor i can move any log-odds
        in this model. A predictor the model leaves out scores exactly 0 (not selected, a removed
        group or Ω⁽⁰⁾, fsNB's α_i = 0, a weight of 0); with every score 0 the importances are
        uniform. Usable by scikit-learn's ``SelectFromModel`` and ``RFE``. A model built by
        ``fit_from_stats`` without ``sample`` rows has none (AttributeError) until it sees rows.
        """
        self._check_fitted()
        if getattr(self, "_sample_rows", 1) == 0:
            raise AttributeError(
                f"this {type(self).__name__} was built by fit_from_stats without sample rows, "
                "and feature_importances_ is a mean over training rows: pass "
                "sample=(codes, values) of some encoded training rows to fit_from_stats (the "
                "out-of-core fit does), or partial_fit some rows"
            )
        # padded like explain's rows: training sets of nearby sizes share the compiled terms
        L = self._on_bucketed_codes(*self._sample(), self._contributions)
        spread = (L.max(-1) - L.min(-1)).mean(0)[self._user_order()]
        tot = spread.sum()
        return spread / tot if tot > 0 else np.full_like(spread, 1.0 / len(spread))

    @property
    def score_bias_(self):
        """Per-class bias (c,) of the score: ``predict_joint_log_proba(X) == score_bias_ +
        explain(X).sum(1)``. The log prior for the NB-type models; a learned bias for
        `WeightedNB` with gradient-trained weights."""
        self._check_fitted()
        return np.asarray(self._score_bias())


class NaiveBayes(_Additive, BaseNB):
    r"""Naive Bayes over mixed discrete (categorical CPT) and continuous (Gaussian) predictors.

    The posterior is log P(Y=j | x) = log π_j + Σ_i log f(x_i | Y=j) − logsumexp_j(·), with
    Lidstone-smoothed CPTs θ_ikj = (N_ijk + alpha)/(N_ij + alpha M_i) and Gaussian class-conditional
    densities whose variance gets a floor of ``var_smoothing`` × the predictor's pooled variance
    (per class and per predictor, scale-invariant; scikit-learn's GaussianNB instead adds a single
    epsilon proportional to the largest variance of all predictors).

    Args:
      discrete: which columns are discrete: "auto" (integer/bool/string/categorical columns),
        "all", "none", a boolean mask or a list of column indices.
      n_states: optional list with the number of states of each discrete column (codes 0..M-1);
        default: inferred (largest code + 1, or the number of distinct labels).
      alpha: Lidstone pseudo-count for the CPTs (1.0 = Laplace, 0 = MLE).
      var_smoothing: variance floor as a fraction of each predictor's pooled variance.
      priors: optional fixed class prior; default the (weighted) class frequencies.
      missing: "error" (default) or "ignore": NaN / None / code -1 drop that predictor's term.
      unseen: "error" (default) or "ignore": an unseen category at predict time drops its term.
      block_size: rows per block of the scanned accumulation of statistics (None: automatic).
      mesh: None (one device), a number of devices or a 1-D `jax.sharding.Mesh`
        (`jaxnb.distributed.make_mesh`): the pass over the rows (``fit`` and ``partial_fit``)
        runs data-parallel, each device summing its share of the rows and a ``psum`` merging
        them; the model equals the single-device one up to round-off (docs/SCALING.md; on CPU
        the devices come from ``XLA_FLAGS=--xla_force_host_platform_device_count``).

    Attributes:
      classes_: class labels; params_: fitted `NBParams`; stats_: `SuffStats` (merged by
      `partial_fit`); encoder_: the column encoding; feature_importances_: see the property.
    """

    def __init__(
        self,
        discrete="auto",
        n_states=None,
        alpha=1.0,
        var_smoothing=1e-9,
        priors=None,
        missing="error",
        unseen="error",
        block_size=None,
        mesh=None,
    ):
        self.discrete = discrete
        self.n_states = n_states
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.priors = priors
        self.missing = missing
        self.unseen = unseen
        self.block_size = block_size
        self.mesh = mesh

    def _check_hyper(self):
        for name in ("alpha", "var_smoothing"):
            v = getattr(self, name)
            if (
                isinstance(v, bool)
                or not isinstance(v, numbers.Real)
                or not np.isfinite(v)
                or v < 0
            ):
                raise ValueError(f"{name} must be a finite number >= 0; got {name}={v!r}")
        if self.block_size is not None and (
            isinstance(self.block_size, bool)
            or not isinstance(self.block_size, numbers.Integral)
            or self.block_size < 1
        ):
            raise ValueError(f"block_size must be None or a positive int; got {self.block_size!r}")
        _as_mesh(self.mesh)

    def _check_priors(self, c):
        if self.priors is None:
            return None
        try:
            pr = np.asarray(self.priors, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"priors must be {c} numbers, one per class; got {self.priors!r}"
            ) from err
        if pr.shape != (c,):
            raise ValueError(f"priors must have one entry per class ({c}); got shape {pr.shape}")
        if not np.isfinite(pr).all() or (pr <= 0).any() or abs(pr.sum() - 1) > 1e-6:
            raise ValueError(
                f"priors must be positive and sum to 1 (and finite); got {pr.tolist()}"
            )
        return pr

    def _block(self, n, K):
        if self.block_size is not None:
            return self.block_size
        # Rows per block so that the block's float one-hot (rows x width of the one-hot layout) and
        # its continuous temporaries take ~4 MB and stay in cache; small data: one block. The fit
        # weighs a continuous predictor 2 (its value and square), not the 12 of scoring
        # (likelihood._rows_per_block): `bench_nb.py --sweep` put the Gaussian fit's best block at
        # ~400k values (1M rows: 4096 rows for 100 predictors, 0.034 s against 0.053 s at the 512
        # that 12 gave; 1024-2048 rows for 400 predictors, 0.028 s against 0.049 s at 256; 8192
        # for 20), while the categorical fit's best stayed where the one-hot width puts it.
        M, rows = _onehot_layout(tuple(self.n_states_))
        width = (len(self.n_states_) * M if M else len(rows)) + 2 * len(
            self.encoder_.continuous_idx_
        )
        bs = _rows_per_block(width)
        return None if n <= bs else bs

    def _code_dtype(self, enc):
        # int8 codes (a quarter of the memory traffic of int32) whenever every state fits.
        return np.int8 if max(enc.n_states_, default=0) <= 127 else np.int32

    def fit(self, X, y, sample_weight=None):
        """Fit from scratch. ``sample_weight`` scales each row's contribution to the statistics."""
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        self._check_priors(len(self.classes_))
        t0 = time.perf_counter()
        # Rows padded to a bucket size with zero-weight copies of the first row (they add nothing to
        # the statistics and keep the centring of the continuous sums inside the data), so training
        # sets of nearby sizes (CV folds, learning curves) share one compiled program.
        fc, fv, fy, fw = self._pad_training(codes, values, y_enc, w)
        m = fc.shape[0]
        if _as_mesh(self.mesh) is None:
            self.stats_ = fit_stats(
                _device(fc),
                _device(fv),
                _device(fy),
                _device(fw),
                n_states=self.n_states_,
                n_classes=len(self.classes_),
                block_size=self._block(m, sum(self.n_states_)),
                check_input=False,  # encoded and validated already
            )
        else:
            self.stats_ = self._stats(fc, fv, fy, fw, self._block(m, sum(self.n_states_)))
        self._set_params_from_stats()
        self.fit_time_ = time.perf_counter() - t0
        return self

    def fit_from_stats(self, stats: SuffStats, classes, encoder, sample=None):
        """Fit from precomputed sufficient statistics (out-of-core, sharded or merged elsewhere).

        Args:
          stats: `SuffStats` in the encoder's predictor order [discrete, continuous].
          classes: the sorted class labels, one per statistics class.
          encoder: a fitted `jaxnb.data.FeatureEncoder` describing the table's columns.
          sample: optional (codes, values) of a few encoded rows for ``feature_importances_``.
        """
        self._check_hyper()
        if not isinstance(stats, SuffStats):
            raise TypeError(
                f"stats must be a jaxnb.suffstats.SuffStats; got {type(stats).__name__}"
            )
        if not isinstance(encoder, FeatureEncoder) or not hasattr(encoder, "n_states_"):
            raise TypeError(
                "encoder must be a fitted jaxnb.data.FeatureEncoder (call encoder.fit(X) first)"
            )
        classes = np.asarray(classes)
        if classes.ndim != 1 or len(set(classes.tolist())) != classes.shape[0]:
            raise ValueError(f"classes must be 1-D distinct labels; got {classes.tolist()!r}")
        order = encode_labels(classes, name="classes")[0]
        if not np.array_equal(order, classes):
            raise ValueError(
                f"classes must be sorted like the statistics' class axis ({order.tolist()}); got "
                f"{classes.tolist()}: reorder the statistics' classes or pass the sorted labels"
            )
        if classes.shape != (stats.class_weight.shape[-1],):
            raise ValueError(
                f"classes must have {stats.class_weight.shape[-1]} entries; got "
                f"shape {classes.shape}"
            )
        if tuple(encoder.n_states_) != tuple(stats.n_states):
            raise ValueError(
                f"encoder n_states {tuple(encoder.n_states_)} differ from the "
                f"statistics' {tuple(stats.n_states)}"
            )
        self.encoder_, self.classes_ = encoder, classes
        self.n_features_in_ = encoder.n_features_in_
        self.stats_ = stats
        self._set_params_from_stats()
        if sample is None:  # no rows: feature_importances_ says so (a made-up row of zeros
            # scored far outside the data for a column in other units, and looked like a result)
            sample = (
                np.zeros((0, len(stats.n_states)), np.int32),
                np.zeros((0, stats.mean.shape[-1]), float_dtype()),
            )
        self._keep_sample(*sample)
        # the sample stands for every row behind the statistics: rows added by partial_fit enter
        # it at the rate of a stream that far along
        total = float(np.sum(np.asarray(stats.class_weight)))
        if np.isfinite(total):
            self._sample_seen = max(self._sample_rows, int(round(total)))
        return self

    def _set_params_from_stats(self):
        pr = self._check_priors(len(self.classes_))
        self.params_ = _fit_mle(
            self.stats_,
            self.alpha,
            self.var_smoothing,
            None if pr is None else _on_device(np.asarray(pr, float_dtype()))[0],
        )
        if self.var_smoothing == 0 and self.params_.std.size:
            # without a floor, a class with one row (or constant values) has variance 0: every
            # prediction would fail later with a misleading "value too far from every class"
            zero = np.argwhere(np.asarray(self.params_.std) == 0)
            if zero.size:
                k, i = (int(v) for v in zero[0])
                j = int(self.encoder_.continuous_idx_[i])
                raise ValueError(
                    f"class {self.classes_[k]!r} has variance 0 on continuous column {j} (one "
                    "row, or constant values) and var_smoothing=0 gives no floor; set "
                    "var_smoothing > 0 (e.g. the default 1e-9)"
                )
        _keep(self, "_shift_for", _centring, self.params_)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Update the model with a batch by merging sufficient statistics.

        The result equals `fit` on the concatenated batches (up to float round-off): statistics
        merge exactly and the variance floor is a function of the merged statistics. States seen
        for the first time in a later batch extend the encoding (their earlier counts are zero).

        Args:
          classes: all class labels; required on the first call unless that batch contains every
            class.
        """
        self._check_hyper()
        if not hasattr(self, "stats_"):
            enc = self._make_encoder().fit(X)
            codes, values = enc.transform(X, dtype=float_dtype(), fit=True)
            self.classes_ = first_partial_fit_classes(
                y,
                classes,
                codes.shape[0],
                "partial_fit needs at least two classes: pass classes=[...] on the first call",
            )
            self.encoder_ = enc
            self.n_features_in_ = enc.n_features_in_
            prev = None
        else:
            if classes is not None:
                check_same_classes(classes, self.classes_)
            old = self.encoder_.grow(X)
            if list(old) != list(self.encoder_.n_states_):
                self.stats_ = _pad_counts(self.stats_, old, self.encoder_.n_states_)
            codes, values = self.encoder_.transform(X, dtype=float_dtype())
            prev = self.stats_
        idx = encode_in_classes(y, self.classes_, codes.shape[0])
        w = check_sample_weight(sample_weight, codes.shape[0], dtype=float_dtype())
        batch = self._stats(
            codes,
            values,
            np.asarray(idx, np.int32),
            w,
            self._block(codes.shape[0], sum(self.n_states_)),
        )
        self.stats_ = batch if prev is None else _merge(prev, batch)
        self._set_params_from_stats()
        self._keep_sample(codes, values, more=prev is not None)
        return self

    def _log_joint_scores(self, codes, values):
        return _log_joint(
            self.params_, codes, values, shift=_kept(self, "_shift_for", _centring, self.params_)
        )

    # ------------------------------------------------------------------ explanation
    def _contributions(self, codes, values):
        # explain: log f(x_i | j) exactly; the sum over i plus the log prior is log P(x, Y=j)
        return _log_contrib(self.params_, codes, values)

    def _score_bias(self):
        return self.params_.log_prior

    @property
    def class_log_prior_(self):
        """Log class prior (c,)."""
        return np.asarray(self.params_.log_prior)


def _pad_counts(stats: SuffStats, old, new) -> SuffStats:
    """Insert zero rows for states first seen in a later batch."""
    counts = np.asarray(stats.counts)
    blocks, o = [], 0
    for m_old, m_new in zip(old, new, strict=True):
        blk = counts[o : o + m_old]
        blocks.append(
            np.concatenate([blk, np.zeros((m_new - m_old, counts.shape[1]), counts.dtype)])
        )
        o += m_old
    padded = np.concatenate(blocks) if blocks else counts
    return SuffStats(
        stats.class_weight,
        jnp.asarray(padded),
        stats.weight,
        stats.mean,
        stats.m2,
        tuple(int(m) for m in new),
    )
