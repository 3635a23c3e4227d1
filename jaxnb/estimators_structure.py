r"""Structure, kernel and filter estimators: TAN, Gaussian semi-naive NB, flexible (KDE)
classifiers, the Parzen-window classifier and filter-then-NB selective classifiers.

Thin scikit-learn-style classes over `jaxnb.methods.structure`, `jaxnb.methods.kernel` and
`jaxnb.methods.filters` (Larrañaga, Bielza & Moreno, slides "Bayesian classifiers with continuous
predictors"; fsNB §7; L1NB §6.1). Like `jaxnb.estimators.NaiveBayes` they validate eagerly (NumPy,
before any jit), call jitted core functions and implement ``_log_joint_scores``. Predictor-indexed
attributes (``tree_``, ``groups_``, ``support_``, ``scores_``) are in the user's column order.

Data kinds. Each model applies to the predictor kind its density supports:

* `TAN`: all-discrete (Chow-Liu tree on I(X_i; X_k | C), Lidstone CPTs) or all-continuous
  (Gaussian TAN, linear-Gaussian children); mixed data raise (a conditional linear Gaussian TAN
  with discrete parents is not implemented: discretize with `jaxnb.discretize` first).
* `GaussianSemiNaiveNB`: continuous only.
* `FlexibleNB`, `FlexibleTAN`, `ParzenNB`: the KDEs need at least one continuous column. Documented
  fallback on mixed data: the discrete columns enter as ordinary NB factors P(x_i | c) with
  Lidstone CPTs, conditionally independent of everything else given the class (this is how John &
  Langley 1995 treat nominal attributes in flexible NB). All-discrete data raise.
* `FilterNB`, `FilterWrapperNB`: any kind (the NB part is `NaiveBayes`'s model).

Missing values are not supported by these estimators (``missing="error"``).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from . import likelihood as lk
from ._checks import check_choice as _check_choice
from ._checks import check_fraction as _check_fraction
from ._checks import check_int as _check_int
from ._checks import check_real as _check_real
from ._dtypes import float_dtype
from ._matmul import einsum, matmul
from .estimators import (
    _PAD_MAX_ROWS,
    BaseNB,
    _Additive,
    _on_device,
    _pad_rows,
    _weighted_contrib,
)
from .methods import filters as flt
from .methods import kernel as kde
from .methods import structure as st
from .model_selection import (
    check_cv,
    fold_weights,
    kfold_stats,
    resolve_folds,
    validation_split,
)
from .params import fit_mle

__all__ = [
    "FILTERS",
    "FilterNB",
    "FilterWrapperNB",
    "FlexibleNB",
    "FlexibleTAN",
    "GaussianSemiNaiveNB",
    "ParzenNB",
    "TAN",
    "register_methods",
]

FILTERS = ("mi", "mrmr", "cmim", "cfs", "threshold")
_RANKING_FILTERS = ("mi", "mrmr", "cmim")

_fit_mle = jax.jit(fit_mle)


# --------------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------------
def _check_h(h):
    if h is not None:
        _check_real("h", h, 0.0, low_open=True, allow_none=True)


def _var_floor(values, w, var_smoothing):
    """Per-predictor variance floor var_smoothing · Var(X_i) + tiny, shape (p,).

    The floor of `NaiveBayes` (a fraction of each predictor's own pooled variance), so rescaling
    one column rescales its floor and leaves the other columns alone. scikit-learn's GaussianNB
    floors every column at var_smoothing · max_i Var(X_i) instead: one column in large units (a
    spread of 1e6) then floors the variance of unit-scale columns at 1e3 and erases them. The tiny
    absolute term keeps the floor positive for a constant column.
    """
    dtype = values.dtype if values.dtype.kind == "f" else np.float64
    if values.shape[1] == 0:
        return np.zeros((0,), dtype)
    wn = w / w.sum()
    mean = wn @ values
    var = wn @ (values - mean) ** 2
    return (var_smoothing * var + np.finfo(dtype).tiny).astype(dtype)


class _Base(BaseNB):
    """Shared fitting helpers; subclasses set ``_name`` through their class name."""

    #: True for the estimators that need at least one continuous column (kernel and Gaussian
    #: semi-naive models): all-categorical data are refused, so scikit-learn's
    #: ``input_tags.categorical`` is False for them (its checks would otherwise feed them
    #: integer-coded data only, which they reject before testing anything).
    _needs_continuous = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self._needs_continuous:
            tags.input_tags.categorical = False
        return tags

    def _require_continuous(self, codes, values, *, allow_discrete):
        q, r = codes.shape[1], values.shape[1]
        name = type(self).__name__
        if r == 0:
            raise ValueError(
                f"{name} models continuous predictors with kernel/Gaussian densities, but X has "
                f"only discrete columns ({q}); use NaiveBayes or TAN(kind='discrete') for discrete "
                f"data, or mark the numeric columns continuous with discrete='none' or a mask"
            )
        if q > 0 and not allow_discrete:
            cols = self.encoder_.discrete_idx_.tolist()
            raise ValueError(
                f"{name} supports continuous predictors only; X has discrete columns {cols} "
                f"(discrete={getattr(self, 'discrete', 'auto')!r}). Pass float data, "
                f"discrete='none', or drop/encode those columns"
            )

    def _discrete_nb(self, codes, y_enc, w):
        """Lidstone CPTs of the discrete block (the mixed-data fallback), or None if q = 0."""
        if codes.shape[1] == 0:
            return None
        empty = jnp.zeros((codes.shape[0], 0), float_dtype())
        return _fit_mle(self._stats(codes, empty, y_enc, w), self.alpha, 0.0)

    def _log_prior(self, y_enc, w):
        nc = np.bincount(y_enc, weights=w, minlength=len(self.classes_))
        with np.errstate(divide="ignore"):
            return (np.log(nc) - np.log(nc.sum())).astype(float_dtype())

    def _tree_to_user(self, parent, block_idx):
        """Parent array of a block (internal indices) -> (p,) user-order parents, -1 elsewhere."""
        parent = np.asarray(parent)
        out = np.full(self.n_features_in_, -1, np.int64)
        out[block_idx] = np.where(parent >= 0, block_idx[np.maximum(parent, 0)], -1)
        return out


@jax.jit
def _discrete_part(params, codes):
    empty = jnp.zeros((codes.shape[0], 0), params.mean.dtype)
    return jnp.sum(lk.log_contributions(params, codes, empty), axis=1)


@jax.jit
def _kernel_scores(log_prior, terms, discrete_params, codes):
    """Class scores (n, c) of a kernel classifier in one program: log P(c) plus ``terms``, summed
    over the predictors when they are per-predictor (n, r, c) or taken as they are when they are
    a joint log density (n, c), plus the discrete fallback's NB terms (``discrete_params`` None:
    no discrete columns). Eagerly, the prior's broadcast, the sum and the additions compiled a
    small program each on a first prediction (and dispatched one each on every call)."""
    scores = log_prior[None, :] + (terms if terms.ndim == 2 else jnp.sum(terms, axis=1))
    if discrete_params is not None:
        scores = scores + _discrete_part(discrete_params, codes)
    return scores


@jax.jit
def _discrete_terms(params, codes):
    return lk.log_contributions(params, codes, jnp.zeros((codes.shape[0], 0), params.mean.dtype))


# --------------------------------------------------------------------------------------------------
# TAN
# --------------------------------------------------------------------------------------------------
class TAN(_Additive, _Base):
    r"""Tree-augmented naive Bayes (Friedman, Geiger & Goldszmidt 1997), discrete or Gaussian.

    The tree is the Chow-Liu maximum-weight spanning tree of the class-conditional mutual
    information, rooted at ``root``:

    * discrete: I(X_i; X_k | C) = Σ p(a,b,c) log[p(a,b,c) p(c) / (p(a,c) p(b,c))], CPTs
      P(X_i = a | X_π(i) = b, C = c) = (N_iabc + α) / (N_ibc + α M_i);
    * Gaussian (slides, "Gaussian TAN"): I(X_i, X_k | C) = −½ Σ_c p(c) log(1 − ρ_c²(X_i, X_k)),
      X_i | x_π(i), c ~ N(a_ci + b_ci x_π(i), v_ci) fitted by per-class weighted least squares.

    Information is in nats (the slides write log2; the tree is the same).

    Args:
      kind: "auto" (discrete if every column is discrete, Gaussian if every column is continuous,
        otherwise an error), "discrete" or "gaussian".
      discrete, n_states: column handling as in `NaiveBayes`.
      alpha: Lidstone pseudo-count of the discrete CPTs.
      var_smoothing: Gaussian variance floor as a fraction of the largest predictor variance
        (one absolute floor: the core takes a scalar; `NaiveBayes` floors per predictor).
      root: index (user column order) of the tree root. The tree and, with MLE parameters, the
        joint density do not depend on it; smoothing makes it matter slightly.

    Attributes:
      kind_: "discrete" or "gaussian"; tree_: int (p,) parent array, -1 at the root (user column
      indices); cmi_: (p, p) edge weights (nats); params_: `DiscreteTANParams` or
      `GaussianTANParams`; n_selected_: p (TAN keeps every predictor).
    """

    def __init__(
        self, kind="auto", discrete="auto", n_states=None, alpha=1.0, var_smoothing=1e-9, root=0
    ):
        self.kind = kind
        self.discrete = discrete
        self.n_states = n_states
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.root = root

    def _check_hyper(self):
        _check_choice("kind", self.kind, ("auto", "discrete", "gaussian"))
        _check_real("alpha", self.alpha, 0.0)
        _check_real("var_smoothing", self.var_smoothing, 0.0)
        _check_int("root", self.root, 0)

    def _resolve_kind(self, q, r):
        if self.kind == "auto":
            if q and r:
                raise ValueError(
                    f"TAN(kind='auto') got mixed data ({q} discrete and {r} continuous columns); "
                    f"TAN supports one kind at a time: discretize the continuous columns "
                    f"(jaxnb.discretize) or choose the columns with discrete='all'/'none'"
                )
            return "discrete" if r == 0 else "gaussian"
        if self.kind == "discrete" and r:
            raise ValueError(
                f"TAN(kind='discrete') needs discrete columns only; X has continuous columns "
                f"{self.encoder_.continuous_idx_.tolist()}. Use kind='gaussian', discretize them, "
                f"or pass discrete='all'"
            )
        if self.kind == "gaussian" and q:
            raise ValueError(
                f"TAN(kind='gaussian') needs continuous columns only; X has discrete columns "
                f"{self.encoder_.discrete_idx_.tolist()}. Use kind='discrete' or pass float data "
                f"(discrete='none')"
            )
        return self.kind

    def fit(self, X, y, sample_weight=None):
        """Learn the Chow-Liu tree and the TAN parameters."""
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        q, r = codes.shape[1], values.shape[1]
        p = q + r
        if self.root >= p:
            raise ValueError(f"root must be a column index in [0, {p}); got root={self.root}")
        self.kind_ = self._resolve_kind(q, r)
        t0 = time.perf_counter()
        c = len(self.classes_)
        # zero-weight padding rows (the tree and the parameters are weighted sums over rows)
        codes, values, y_enc, w = self._pad_training(
            codes, values, y_enc, w, max_rows=_PAD_MAX_ROWS
        )
        yy, ww = _on_device(y_enc, w)
        block_idx = self._internal_to_user()  # one kind: the block is every column
        root = int(np.flatnonzero(block_idx == self.root)[0])
        if self.kind_ == "discrete":
            (cd,) = _on_device(codes)
            cmi = flt.conditional_mutual_information_pairs(cd, yy, self.n_states_, c, ww)
            parent = st.maximum_spanning_tree(cmi, root)
            self.params_ = st.fit_discrete_tan(
                cd, yy, parent, self.n_states_, c, ww, float(self.alpha)
            )
        else:
            (vl,) = _on_device(values)
            cmi = st.conditional_mutual_information_gaussian(vl, yy, c, ww)
            parent = st.maximum_spanning_tree(cmi, root)
            self.params_ = st.fit_gaussian_tan(
                vl, yy, parent, c, ww, _var_floor(values, w, self.var_smoothing)
            )
        # the tree ignores the diagonal; the discrete one holds H(X_i | C), not an edge weight
        cmi_np = np.array(cmi)
        np.fill_diagonal(cmi_np, 0.0)
        self.cmi_ = np.empty_like(cmi_np)
        self.cmi_[np.ix_(block_idx, block_idx)] = cmi_np
        self.tree_ = self._tree_to_user(parent, block_idx)
        self.fit_time_ = time.perf_counter() - t0
        return self

    @property
    def n_selected_(self):
        return int(self.n_features_in_)

    def _log_joint_scores(self, codes, values):
        if self.kind_ == "discrete":
            return st.discrete_tan_log_joint(self.params_, codes)
        return st.gaussian_tan_log_joint(self.params_, values)

    def _contributions(self, codes, values):
        # the term of predictor i is its CPT / density given its parent's value
        if self.kind_ == "discrete":
            return st.discrete_tan_log_contributions(self.params_, codes)
        return st.gaussian_tan_log_contributions(self.params_, values)

    def _score_bias(self):
        return self.params_.log_prior


# --------------------------------------------------------------------------------------------------
# Gaussian semi-naive Bayes
# --------------------------------------------------------------------------------------------------
class GaussianSemiNaiveNB(_Base):
    r"""Gaussian semi-naive Bayes (Pérez, Larrañaga & Inza 2006; slides).

    Predictors are partitioned into joined groups, each a multivariate Gaussian per class:
    log P(c) + Σ_g log N(x_g; μ_{c,g}, Σ_{c,gg}); predictors outside every group are left out. The
    structure is searched on a stratified validation split (wrapper):

    * ``search="fssj"``: forward sequential selection and joining (Pazzani 1996) from the empty
      model (majority class): add an unused predictor as a singleton or join it to a group;
    * ``search="backward"``: wrapper condensed backward — start from one joint Gaussian over all
      predictors (QDA) and remove one predictor at a time.

    A move is accepted when it strictly lowers the validation error (ties between candidates: lower
    validation log loss). With ``refit=True`` the chosen structure's parameters are then refitted
    on all rows.

    Args:
      search: "fssj" or "backward".
      validation_fraction: share of rows (stratified) used to score structures, in (0, 1).
      ridge: relative ridge on the class covariances (`structure.fit_gaussian_joint`).
      max_steps: cap on accepted FSSJ moves (None: until no move improves).
      refit: refit the chosen structure on all rows (default) or keep the training-split fit.
      random_state: seed of the validation split.
      discrete: column handling as in `NaiveBayes`; every column must be continuous.

    Attributes:
      groups_: int (p,) group ids (user column order, canonical 0, 1, ...; -1 = left out);
      n_selected_; validation_error_; history_ (list of (groups, error, log_loss) per accepted
      move, internal order = user order); n_evaluated_; params_ (`GaussianJointParams`).
    """

    _needs_continuous = True

    def __init__(
        self,
        search="fssj",
        validation_fraction=0.3,
        ridge=1e-9,
        max_steps=None,
        refit=True,
        random_state=0,
        discrete="auto",
    ):
        self.search = search
        self.validation_fraction = validation_fraction
        self.ridge = ridge
        self.max_steps = max_steps
        self.refit = refit
        self.random_state = random_state
        self.discrete = discrete

    def _check_hyper(self):
        _check_int("random_state", self.random_state, 0, allow_none=True)
        _check_choice("search", self.search, ("fssj", "backward"))
        _check_fraction("validation_fraction", self.validation_fraction)
        _check_real("ridge", self.ridge, 0.0)
        _check_int("max_steps", self.max_steps, 1, allow_none=True)
        if not isinstance(self.refit, bool):
            raise ValueError(f"refit must be True or False; got refit={self.refit!r}")

    def fit(self, X, y, sample_weight=None):
        """Search the group structure on a validation split, then fit it."""
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        self._require_continuous(codes, values, allow_discrete=False)
        t0 = time.perf_counter()
        c = len(self.classes_)
        val = validation_split(
            y_enc,
            float(self.validation_fraction),
            self.random_state,
            arg_name="validation_fraction",
            sample_weight=w,
        )
        # zero-weight padding rows after the split of the real rows
        codes, values, y_enc, w, val = self._pad_training(
            codes, values, y_enc, w, val, max_rows=_PAD_MAX_ROWS
        )
        fit_w, val_w = w * ~val, w * val
        args = (values, y_enc, values, y_enc, c, fit_w, val_w, float(self.ridge))
        if self.search == "fssj":
            res = st.forward_sequential_selection_joining(*args, max_steps=self.max_steps)
        else:
            res = st.backward_condensed_search(*args)
        self._groups = np.asarray(res.groups, np.int32)
        self.params_ = st.fit_gaussian_joint(
            values, y_enc, c, w if self.refit else fit_w, float(self.ridge)
        )
        order = self.encoder_.continuous_idx_
        self.groups_ = np.full(self.n_features_in_, -1, np.int64)
        self.groups_[order] = res.groups
        self.validation_error_ = float(res.error)
        self.history_ = res.history
        self.n_evaluated_ = int(res.n_evaluated)
        self.fit_time_ = time.perf_counter() - t0
        return self

    @property
    def n_selected_(self):
        return int((self.groups_ >= 0).sum())

    def _log_joint_scores(self, codes, values):
        return st.seminaive_log_joint(self.params_, self._groups, values)


# --------------------------------------------------------------------------------------------------
# kernel-based classifiers
# --------------------------------------------------------------------------------------------------
class _KernelBase(_Base):
    """Stores the training sample (the KDE is the data) and the discrete fallback CPTs."""

    _needs_continuous = True

    def _check_kernel_hyper(self):
        _check_h(self.h)
        _check_real("alpha", self.alpha, 0.0)
        kde._check_chunk_size(self.chunk_size)

    def _fit_kernel(self, X, y, sample_weight):
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        self._require_continuous(codes, values, allow_discrete=True)
        c = len(self.classes_)
        empty = np.bincount(y_enc, weights=w, minlength=c) <= 0
        if empty.any():
            raise ValueError(
                f"sample_weight gives classes {self.classes_[empty].tolist()} zero "
                f"total weight; every class needs rows for its density estimate"
            )
        # zero-weight padding rows (a zero-weight sample point adds nothing to the KDE): nearby
        # training sizes share the compiled fit and scorers; capped, as every prediction pays
        # for the padded points
        codes, values, y_enc, w = self._pad_training(
            codes, values, y_enc, w, max_rows=_PAD_MAX_ROWS
        )
        self._train = _on_device(values, y_enc, w)
        self.discrete_params_ = self._discrete_nb(codes, y_enc, w)
        self.class_log_prior_ = self._log_prior(y_enc, w)
        self._kde_sample = self._kernel_sample()
        # (c, r) kernel std devs of the continuous block: the scorer's own (the normal rule in
        # 1 dimension, or in r for the Parzen window, where a constant column gets 1)
        self.bandwidth_ = np.asarray(self._sample_bandwidths(self._kde_sample))
        return codes, values, y_enc, w

    @staticmethod
    def _sample_bandwidths(sample):
        return sample[1]  # FlexibleNB, FlexibleTAN: the 1-D estimator's bandwidths

    def _kernel_sample(self):
        """The scorer's training-data part (`kernel.flexible_nb_sample` and its kin): once per
        fit, so a prediction compiles and computes the query part only."""
        x, yy, w = self._train
        return self._SAMPLE(x, yy, len(self.classes_), w, self._h())

    def _kept_sample(self):
        """`_kernel_sample` as the fit kept it (computed now for a model pickled without it;
        prediction does not write to the estimator)."""
        kept = self.__dict__.get("_kde_sample")
        return self._kernel_sample() if kept is None else kept

    def _h(self):
        return None if self.h is None else float(self.h)

    def _scores(self, terms, codes):
        """`_kernel_scores` with this model's prior and discrete fallback."""
        return _kernel_scores(self.class_log_prior_, terms, self.discrete_params_, codes)

    def _with_discrete_terms(self, contrib, codes):
        """`explain`'s terms: the discrete columns' NB terms (the fallback), then ``contrib``."""
        if self.discrete_params_ is None:
            return contrib
        return jnp.concatenate([_discrete_terms(self.discrete_params_, codes), contrib], axis=1)

    def _score_bias(self):
        return self.class_log_prior_

    @property
    def n_selected_(self):
        return int(self.n_features_in_)


class FlexibleNB(_Additive, _KernelBase):
    r"""Flexible naive Bayes (John & Langley 1995; slides, "Kernel-based classifiers").

    log P(c) + Σ_i log f̂(x_i | c) with one Gaussian 1-D KDE per continuous predictor and class,
    f̂(x_i | c) = (1/N_c) Σ_{n: y_n = c} N(x_i; x_ni, h_c² s_ci²), s_ci the class's sample standard
    deviation and h_c = (4 / (3 N_c))^{1/5} (normal rule with m = 1) unless ``h`` is given.
    Discrete columns (mixed data) enter as Lidstone CPTs; all-discrete data raise.

    Args:
      h: smoothing factor (None: normal rule per class).
      alpha: Lidstone pseudo-count for discrete columns (mixed data only).
      chunk_size: query rows per chunk (memory O(chunk · n · r), one class at a time); None: all
        at once; "auto" (default): as many as keep a class's kernel values near
        `kernel.CHUNK_VALUES` (2^19, cache-sized: fit + predict on 10,000 × 10,000 rows, r = 8,
        took 2.0 s, against 14.4 s with the former default of 256 rows). Each class's kernel
        reads its own training rows (`kernel.flexible_nb_log_contributions`'s ``class_rows``).
      discrete, n_states: column handling as in `NaiveBayes`.

    Attributes:
      bandwidth_: (c, r) kernel standard deviations h_c s_ci of the continuous columns (in the
      order of ``encoder_.continuous_idx_``); class_log_prior_; discrete_params_; n_selected_ = p.
    """

    def __init__(self, h=None, alpha=1.0, chunk_size="auto", discrete="auto", n_states=None):
        self.h = h
        self.alpha = alpha
        self.chunk_size = chunk_size
        self.discrete = discrete
        self.n_states = n_states

    def _check_hyper(self):
        self._check_kernel_hyper()

    def fit(self, X, y, sample_weight=None):
        """Store the class-wise samples and bandwidths (a KDE is its data)."""
        t0 = time.perf_counter()
        self._fit_kernel(X, y, sample_weight)
        self.fit_time_ = time.perf_counter() - t0
        return self

    _SAMPLE = staticmethod(kde.flexible_nb_sample)

    def _terms(self, values):
        c = len(self.classes_)
        return kde.flexible_nb_terms(values, self._kept_sample(), c, self.chunk_size)

    def _log_joint_scores(self, codes, values):
        return self._scores(self._terms(values), codes)

    def _contributions(self, codes, values):
        return self._with_discrete_terms(self._terms(values), codes)


class ParzenNB(_KernelBase):
    r"""Parzen-window classifier (Parzen 1962; slides): one joint KDE per class.

    log P(c) + log f̂(x | c), f̂(x | c) = (1/N_c) Σ_{n: y_n = c} N(x; x_n, H_c), H_c = h_c²
    diag(s_c1², ..., s_cr²) (differential scaling, Simonoff 1996),
    h_c = (4 / ((m + 2) N_c))^{1/(m+4)} (normal rule with m = r less the continuous columns that
    are constant over the training rows, at least 1: such a column scores every class alike and
    leaves the posteriors as they are without it). Discrete columns (mixed data) enter as
    independent Lidstone CPTs; all-discrete data raise.

    Args and attributes as in `FlexibleNB`, except that ``chunk_size`` bounds memory at
    O(chunk · n · c) in float64, where the joint kernel is one contraction per chunk, and
    O(chunk · n · c · r) in float32 (`kernel.parzen_log_density`); "auto" keeps those values near
    `kernel.JOINT_CHUNK_VALUES`.
    """

    def __init__(self, h=None, alpha=1.0, chunk_size="auto", discrete="auto", n_states=None):
        self.h = h
        self.alpha = alpha
        self.chunk_size = chunk_size
        self.discrete = discrete
        self.n_states = n_states

    def _check_hyper(self):
        self._check_kernel_hyper()

    def fit(self, X, y, sample_weight=None):
        """Store the class-wise samples and bandwidths."""
        t0 = time.perf_counter()
        self._fit_kernel(X, y, sample_weight)
        self.fit_time_ = time.perf_counter() - t0
        return self

    _SAMPLE = staticmethod(kde.parzen_sample)

    @staticmethod
    def _sample_bandwidths(sample):
        return sample["bw"]

    def _log_joint_scores(self, codes, values):
        c = len(self.classes_)
        dens = kde.parzen_terms(values, self._kept_sample(), c, self.chunk_size)
        return self._scores(dens, codes)


class FlexibleTAN(_Additive, _KernelBase):
    r"""Flexible tree-augmented naive Bayes (Pérez, Larrañaga & Inza 2009; slides).

    The tree is the Chow-Liu tree of the KDE estimate of I(X_i, X_k | C)
    (``structure="kde"``, `kernel.kde_conditional_mutual_information`, O(n² r² c)) or of the
    Gaussian closed form (``structure="gaussian"``, cheap). Each child's density is the ratio of
    2-D and 1-D kernel estimates, f̂(x_i | x_π(i), c) = f̂(x_i, x_π(i) | c) / f̂(x_π(i) | c) (the
    denominator is the 2-D estimator's own marginal), the root a 1-D KDE. Discrete columns (mixed
    data) enter as independent Lidstone CPTs and are outside the tree; all-discrete data raise.

    Args:
      structure: "kde" or "gaussian" edge weights.
      root: the tree's root, a user column index of a continuous column (None: the first one
        that is not constant over the training rows).
      h, alpha, chunk_size, discrete, n_states: as in `FlexibleNB`; chunk_size also bounds the
        rows per step of the KDE CMI at fit time.

    Attributes:
      tree_: int (p,) parents in user column indices (-1 at the root and for discrete columns);
      cmi_: (r, r) edge weights of the continuous block; bandwidth_ (m = 1), class_log_prior_,
      discrete_params_; n_selected_ = p.
    """

    def __init__(
        self,
        structure="kde",
        root=None,
        h=None,
        alpha=1.0,
        chunk_size="auto",
        discrete="auto",
        n_states=None,
    ):
        self.structure = structure
        self.root = root
        self.h = h
        self.alpha = alpha
        self.chunk_size = chunk_size
        self.discrete = discrete
        self.n_states = n_states

    def _check_hyper(self):
        self._check_kernel_hyper()
        _check_choice("structure", self.structure, ("kde", "gaussian"))
        _check_int("root", self.root, 0, allow_none=True)

    def fit(self, X, y, sample_weight=None):
        """Learn the tree from the class-conditional MI and store the sample."""
        t0 = time.perf_counter()
        codes, values, y_enc, w = self._fit_kernel(X, y, sample_weight)
        cont = self.encoder_.continuous_idx_
        x, yy, ww = self._train
        if self.root is None:  # the first continuous column that varies over the weighted rows
            # (a constant root would hand its child the 2-D kernel's wider bandwidth and turn
            # the tree's edges around: posteriors 0.022 apart with a constant column first)
            varies = ~np.asarray(kde.constant_columns(x, ww))
            root = int(np.argmax(varies)) if varies.any() else 0
        else:
            hit = np.flatnonzero(cont == self.root)
            if hit.size == 0:
                raise ValueError(
                    f"root must be the index of a continuous column {cont.tolist()}; "
                    f"got root={self.root}"
                )
            root = int(hit[0])
        c = len(self.classes_)
        if self.structure == "kde":
            cmi = kde.kde_conditional_mutual_information(x, yy, c, ww, self._h(), self.chunk_size)
        else:
            cmi = st.conditional_mutual_information_gaussian(x, yy, c, ww)
        self._parent = st.maximum_spanning_tree(cmi, root)
        self.cmi_ = np.asarray(cmi)
        self.tree_ = self._tree_to_user(self._parent, cont)
        self.fit_time_ = time.perf_counter() - t0
        return self

    _SAMPLE = staticmethod(kde.flexible_tan_sample)

    def _terms(self, values):
        # the term of a continuous predictor is its child density given its parent's value
        sample = self._kept_sample()
        c = len(self.classes_)
        return kde.flexible_tan_terms(values, sample, self._parent, c, self.chunk_size)

    def _log_joint_scores(self, codes, values):
        return self._scores(self._terms(values), codes)

    def _contributions(self, codes, values):
        return self._with_discrete_terms(self._terms(values), codes)


# --------------------------------------------------------------------------------------------------
# filters + NB
# --------------------------------------------------------------------------------------------------
@jax.jit
def _masked_scores(params, mask, codes, values):
    L = lk.log_contributions(params, codes, values)
    # where, not a 0/1 product: an unselected predictor's -inf (alpha = 0) must not give NaN
    return params.log_prior[None, :] + jnp.where(mask[None, :, None], L, 0.0).sum(1)


@jax.jit
def _concat_relevance(parts):
    """The relevance of each kind, [discrete, continuous], as one array (one program)."""
    return jnp.concatenate(parts)


@jax.jit
def _with_binned(codes, binned):
    """Discrete codes followed by the binned continuous columns, int32 (one program)."""
    return jnp.concatenate([codes.astype(jnp.int32), binned.astype(jnp.int32)], axis=1)


@jax.jit
def _mixed_redundancy(red, values, w):
    """Pairwise redundancy of the binned columns ``red`` with its continuous block (the last r
    rows and columns) replaced by the Gaussian MI of the values (one program; eagerly, the
    indexed update compiled five)."""
    r = values.shape[1]
    q = red.shape[0] - r
    return red.at[q:, q:].set(_gaussian_pair_mi(values, w))


@jax.jit
def _gaussian_pair_mi(values, w):
    """Marginal Gaussian MI −½ log(1 − ρ²) between all pairs of continuous columns, (r, r)
    (one program: eagerly, its four steps compiled one each)."""
    rho = flt.feature_correlation_continuous(values, w)
    one_minus = jnp.maximum(1.0 - rho * rho, jnp.finfo(rho.dtype).tiny)
    return -0.5 * jnp.log(one_minus)


class _FilterCore:
    """Filter scores of a data set in internal predictor order [discrete..., continuous...].

    Relevance: discrete MI I(X_i; C) for discrete columns, the slides' Gaussian MI
    ½[log σ_i² − Σ_c p(c) log σ²_ci] for continuous ones. Where a filter needs information between
    predictors of different kinds, continuous columns are discretized into ``n_bins``
    equal-frequency bins (`filters.equal_frequency_codes`).
    """

    def __init__(
        self, codes, values, y, w, n_states, n_classes, n_bins, var_smoothing, n_rows=None
    ):
        # n_rows: the real rows (the first n_rows; the rest are zero-weight padding)
        self.n_rows = codes.shape[0] if n_rows is None else int(n_rows)
        self.codes, self.values, self.y, self.w = _on_device(codes, values, y, w)
        self.q, self.r = codes.shape[1], values.shape[1]
        self.n_states, self.c, self.n_bins = tuple(n_states), n_classes, n_bins
        self.var_smoothing = var_smoothing

    def relevance(self, codes=None, values=None, n_states=None):
        codes = self.codes if codes is None else codes
        values = self.values if values is None else values
        n_states = self.n_states if n_states is None else n_states
        parts = []
        if codes.shape[1]:
            parts.append(flt.mutual_information_discrete(codes, self.y, n_states, self.c, self.w))
        if values.shape[1]:
            # each column's floor from its own variance (probes included)
            floor = _var_floor(np.asarray(values), np.asarray(self.w), self.var_smoothing)
            parts.append(flt.mutual_information_gaussian(values, self.y, self.c, self.w, floor))
        return parts[0] if len(parts) == 1 else _concat_relevance(parts)

    def all_codes(self):
        """Discrete codes with every continuous column binned, and their state counts."""
        if self.r == 0:
            return self.codes, self.n_states
        binned = flt.equal_frequency_codes(self.values, self.n_bins, self.w)
        codes = _with_binned(self.codes, binned)
        return codes, self.n_states + (self.n_bins,) * self.r

    def mrmr_redundancy(self):
        if self.q == 0:
            return _gaussian_pair_mi(self.values, self.w)
        codes, states = self.all_codes()
        red = flt.pairwise_mutual_information_discrete(codes, states, self.w)
        if self.r:
            red = _mixed_redundancy(red, self.values, self.w)
        return red

    def cfs_correlations(self):
        return flt.cfs_correlations(
            self.codes, self.values, self.y, self.n_states, self.c, self.w, self.n_bins
        )

    def probe_mask(self, seed, n_probes=3, probe_states=5):
        r"""L1NB §6.1 prefilter, per kind: keep X_i when its relevance is >= the largest relevance
        of ``n_probes`` random probes of the same kind (uniform ``probe_states``-state codes for
        discrete columns, standard normal values for continuous ones)."""
        rel, n_pc = self.probe_relevance(seed, n_probes, probe_states)
        qa = self.q + n_pc
        keep = np.zeros(self.q + self.r, bool)
        if self.q:
            keep[: self.q] = rel[: self.q] >= rel[self.q : qa].max()
        if self.r:
            keep[self.q :] = rel[qa : qa + self.r] >= rel[qa + self.r :].max()
        return keep

    def probe_relevance(self, seed, n_probes=3, probe_states=5):
        """Relevance of [discrete, discrete probes, continuous, continuous probes] and the number
        of discrete probes; the probes are drawn for the real rows (padding rows repeat the
        first probe row), so padding the data does not change them."""
        rng = np.random.default_rng(seed)
        n, m = self.n_rows, self.codes.shape[0]
        pc = rng.integers(0, probe_states, (n, n_probes if self.q else 0)).astype(np.int32)
        pv = rng.standard_normal((n, n_probes if self.r else 0)).astype(self.values.dtype)
        # padding rows (zero weight) repeat the first probe row, as they repeat the first data row
        pc, pv = (_pad_rows(a, m, repeat_first=True) for a in (pc, pv))
        pc_dev, pv_dev = _on_device(pc, pv)
        codes = jnp.concatenate([self.codes.astype(jnp.int32), pc_dev], axis=1)
        values = jnp.concatenate([self.values, pv_dev], axis=1)
        states = self.n_states + (probe_states,) * pc.shape[1]
        return np.asarray(self.relevance(codes, values, states)), pc.shape[1]


def _ranking(core: _FilterCore, filter_name: str, k: int) -> np.ndarray:
    """Indices (internal order) of the first k predictors of a ranking filter."""
    if filter_name == "mi":
        rel = np.asarray(core.relevance())
        return np.argsort(-rel, kind="stable")[:k]
    if filter_name == "mrmr":
        return np.asarray(flt.mrmr(core.relevance(), core.mrmr_redundancy(), k))
    codes, states = core.all_codes()
    info = flt.information_matrices(codes, core.y, states, core.c, core.w)
    return np.asarray(flt.cmim(info.relevance, info.conditional_relevance, k))


class _FilterBase(_Additive, _Base):
    def _nb_fit(self, codes, values, y_enc, w):
        return _fit_mle(self._stats(codes, values, y_enc, w), self.alpha, self.var_smoothing)

    def _set_support(self, mask_internal):
        (self._mask,) = _on_device(mask_internal)
        support = np.zeros(self.n_features_in_, bool)
        support[self._internal_to_user()] = mask_internal
        self.support_ = support

    @property
    def n_selected_(self):
        return int(self.support_.sum())

    def _log_joint_scores(self, codes, values):
        return _masked_scores(self.params_, self._mask, codes, values)

    def _contributions(self, codes, values):
        return _weighted_contrib(self.params_, codes, values, self._mask)

    def _score_bias(self):
        return self.params_.log_prior


class FilterNB(_FilterBase):
    r"""Filter feature selection followed by naive Bayes on the selected predictors.

    NB on a subset equals NB on all predictors with the others' terms dropped (every predictor's
    parameters are fitted separately), so one NB fit serves any subset.

    Filters (`jaxnb.methods.filters`; information in nats):

    * ``"mi"``: the k predictors of highest relevance I(X_i; C) (discrete MI; the slides' Gaussian
      MI ½[log σ_i² − Σ_c p(c) log σ²_ci] for continuous columns);
    * ``"mrmr"``: Peng et al. (2005) MID ranking; redundancy: discrete MI, Gaussian −½ log(1 − ρ²)
      between continuous columns, binned MI between columns of different kinds;
    * ``"cmim"``: Fleuret (2004), on the discretized view (continuous columns in ``n_bins``
      equal-frequency bins);
    * ``"cfs"``: Hall (1999) best-first CFS (the fsNB tables' CFS + NB): |Pearson r| on continuous
      data, symmetric uncertainty on discrete data, SU on the discretized view for mixed data;
      ``k`` caps the subset size;
    * ``"threshold"``: the slides' filter selective NB, keep X_i iff relevance > ``threshold``.

    ``k=None`` with a ranking filter ("mi", "mrmr", "cmim") uses L1NB §6.1's random-probe rule to
    choose k: the number of predictors whose relevance reaches the largest relevance of three
    random probes of their own kind (at least 1); for "mi" the selection is that set itself.

    Args:
      filter: one of ``FILTERS``.
      k: number of predictors (ranking filters) or the CFS size cap; None: see above.
      threshold: relevance threshold of ``filter="threshold"`` (nats).
      n_bins: equal-frequency bins for continuous columns where a filter needs discrete data.
      alpha, var_smoothing, discrete, n_states: NB settings as in `NaiveBayes`.
      random_state: seed of the random probes (``k=None``). The probes are drawn per training
        row, so with ``k=None`` an integer sample weight is not the same as repeating the row (the
        repeated rows draw probes of their own); with ``k`` given it is.

    Attributes:
      support_: bool (p,) selected predictors (user column order); scores_: (p,) relevance;
      ranking_: user column indices in selection order (ranking filters and CFS: sorted);
      n_selected_; params_: NB `NBParams` fitted on all predictors (unselected ones are masked).
    """

    def __init__(
        self,
        filter="cfs",
        k=None,
        threshold=0.0,
        n_bins=10,
        alpha=1.0,
        var_smoothing=1e-9,
        discrete="auto",
        n_states=None,
        random_state=0,
    ):
        self.filter = filter
        self.k = k
        self.threshold = threshold
        self.n_bins = n_bins
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.discrete = discrete
        self.n_states = n_states
        self.random_state = random_state

    def _check_hyper(self):
        _check_int("random_state", self.random_state, 0, allow_none=True)
        _check_choice("filter", self.filter, FILTERS)
        _check_int("k", self.k, 1, allow_none=True)
        _check_real("threshold", self.threshold)
        _check_int("n_bins", self.n_bins, 2)
        _check_real("alpha", self.alpha, 0.0)
        _check_real("var_smoothing", self.var_smoothing, 0.0)

    def fit(self, X, y, sample_weight=None):
        """Run the filter, then fit NB."""
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        p = codes.shape[1] + values.shape[1]
        if self.k is not None and self.k > p and self.filter in _RANKING_FILTERS:
            raise ValueError(f"k must be <= the number of columns ({p}); got k={self.k}")
        t0 = time.perf_counter()
        n_rows = codes.shape[0]
        # zero-weight padding rows (every filter statistic is weighted; probes drawn for the real
        # rows): nearby training sizes share the compiled filters
        codes, values, y_enc, w = self._pad_training(
            codes, values, y_enc, w, max_rows=_PAD_MAX_ROWS
        )
        core = _FilterCore(
            codes,
            values,
            y_enc,
            w,
            self.n_states_,
            len(self.classes_),
            self.n_bins,
            self.var_smoothing,
            n_rows=n_rows,
        )
        rel = np.asarray(core.relevance())
        mask = np.zeros(p, bool)
        order = None
        if self.filter == "threshold":
            mask = np.asarray(flt.threshold_filter(rel, self.threshold))
        elif self.filter == "cfs":
            rcf, rff = core.cfs_correlations()
            order, _ = flt.cfs(rcf, rff, max_features=self.k)
            mask[order] = True
        elif self.filter == "mi" and self.k is None:
            mask = core.probe_mask(self.random_state)
            if not mask.any():
                mask[int(np.argmax(rel))] = True
            order = np.flatnonzero(mask)[np.argsort(-rel[mask], kind="stable")]
        else:
            k = (
                self.k
                if self.k is not None
                else max(1, int(core.probe_mask(self.random_state).sum()))
            )
            order = _ranking(core, self.filter, k)
            mask[order] = True
        to_user = self._internal_to_user()
        self.scores_ = np.empty(p)
        self.scores_[to_user] = rel
        self.ranking_ = None if order is None else to_user[np.asarray(order)]
        if self.filter == "cfs":  # a subset, sorted in user column order (internal order differs)
            self.ranking_ = np.sort(self.ranking_)
        self.params_ = self._nb_fit(codes, values, y_enc, w)
        self._set_support(mask)
        self.fit_time_ = time.perf_counter() - t0
        return self


class FilterWrapperNB(_FilterBase):
    r"""Filter-wrapper selective naive Bayes (slides, "filter-wrapper selective Gaussian NB").

    1. Rank the predictors by relevance I(X_i; C) (``filter="mi"``, the slides; or by an mRMR /
       CMIM ranking, see `FilterNB`). 2. Starting from the empty model (majority class), add them
       one at a time in that order and estimate each nested model's accuracy by stratified
       ``cv``-fold cross-validation (all p + 1 models of all folds scored in one batched call).
    3. Keep the nested subset with the lowest CV error (ties: the smaller subset) and refit NB on
       all rows. At most p + 1 models are built, as in the slides.

    Args:
      filter: "mi", "mrmr" or "cmim" (ranking).
      cv: a number K >= 2 of stratified folds, a scikit-learn splitter or a list of
        (train, test) index pairs that partition the rows (as `GroupLassoNB`'s ``cv``).
      max_features: stop the nested sequence at this many predictors (None: p).
      n_bins, alpha, var_smoothing, discrete, n_states: as in `FilterNB`.
      random_state: seed of the folds.

    Attributes:
      support_, scores_, ranking_ (user column indices, whole ranking), cv_error_ ((h + 1,) CV
      error of the nested subsets of size 0..h), n_selected_, params_.
    """

    def __init__(
        self,
        filter="mi",
        cv=5,
        max_features=None,
        n_bins=10,
        alpha=1.0,
        var_smoothing=1e-9,
        discrete="auto",
        n_states=None,
        random_state=0,
    ):
        self.filter = filter
        self.cv = cv
        self.max_features = max_features
        self.n_bins = n_bins
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.discrete = discrete
        self.n_states = n_states
        self.random_state = random_state

    def _check_hyper(self):
        _check_int("random_state", self.random_state, 0, allow_none=True)
        _check_choice("filter", self.filter, _RANKING_FILTERS)
        check_cv(self.cv, "cv")
        _check_int("max_features", self.max_features, 0, allow_none=True)
        _check_int("n_bins", self.n_bins, 2)
        _check_real("alpha", self.alpha, 0.0)
        _check_real("var_smoothing", self.var_smoothing, 0.0)

    def fit(self, X, y, sample_weight=None):
        """Rank, cross-validate the nested subsets, refit NB on the best one."""
        self._check_hyper()
        codes, values, y_enc, w = self._validate_fit(X, y, sample_weight)
        p = codes.shape[1] + values.shape[1]
        if self.max_features is not None and self.max_features > p:
            raise ValueError(
                f"max_features must be <= the number of columns ({p}); got "
                f"max_features={self.max_features}"
            )
        t0 = time.perf_counter()
        c = len(self.classes_)
        folds, n_folds = resolve_folds(
            self.cv, y_enc, self.random_state, arg_name="cv", sample_weight=w
        )
        # zero-weight padding rows after the folds of the real rows (the filters and the fold
        # statistics are weighted): nearby training sizes share the compiled programs
        codes, values, y_enc, w, folds = self._pad_training(
            codes, values, y_enc, w, folds, max_rows=_PAD_MAX_ROWS
        )
        core = _FilterCore(
            codes, values, y_enc, w, self.n_states_, c, self.n_bins, self.var_smoothing
        )
        rel = np.asarray(core.relevance())
        order = _ranking(core, self.filter, p)
        # nested-subset scores for filter_wrapper_forward: rank position of each predictor
        rank_score = np.empty(p)
        rank_score[order] = -np.arange(p, dtype=np.float64)
        cd, vl, yy, fd, ww = _on_device(codes, values, y_enc, folds, w)
        train, _ = kfold_stats(
            cd,
            vl,
            yy,
            fd,
            ww,
            n_states=self.n_states_,
            n_classes=c,
            n_folds=n_folds,
        )
        fold_w = fold_weights(folds, n_folds, w.dtype, weight=w)
        evaluate = _make_cv_evaluator(train, cd, vl, yy, fold_w, self.alpha, self.var_smoothing)
        mask, errors, _ = flt.filter_wrapper_forward(
            *_on_device(rank_score), evaluate, batched=True, max_features=self.max_features
        )
        to_user = self._internal_to_user()
        self.scores_ = np.empty(p)
        self.scores_[to_user] = rel
        self.ranking_ = to_user[np.asarray(order)]
        self.cv_error_ = errors
        self.params_ = self._nb_fit(codes, values, y_enc, w)
        self._set_support(np.asarray(mask))
        self.fit_time_ = time.perf_counter() - t0
        return self


@jax.jit
def _cv_errors(train, codes, values, y, fold_w, alpha, var_smoothing, masks):
    """(s,) CV error of each mask (s, p): fold k's NB (fitted without fold k) scores fold k's rows.

    Module-level, so refits reuse the compilation (a jit of a per-fit closure recompiled)."""

    def per_fold(stats_k, wk):
        params = fit_mle(stats_k, alpha, var_smoothing)
        L = lk.log_contributions(params, codes, values)  # (n, p, c)
        scores = params.log_prior[None, None, :] + einsum("npc,sp->snc", L, masks.astype(L.dtype))
        wrong = (jnp.argmax(scores, axis=-1) != y[None, :]).astype(L.dtype)
        return matmul(wrong, wk)  # (s,)

    return jnp.sum(jax.vmap(per_fold)(train, fold_w), axis=0) / jnp.sum(fold_w)


def _make_cv_evaluator(train, codes, values, y, fold_w, alpha, var_smoothing):
    """masks (s, p) -> (s,) CV error (`_cv_errors` with the data bound)."""
    return lambda masks: _cv_errors(train, codes, values, y, fold_w, alpha, var_smoothing, masks)


# --------------------------------------------------------------------------------------------------
# registry hook
# --------------------------------------------------------------------------------------------------
def register_methods(register) -> None:
    """Plug the structure, kernel and filter methods into `python -m jaxnb compare`."""
    register(
        "TAN",
        lambda kind: TAN(kind="auto"),
        "tree-augmented NB (Chow-Liu on class-conditional MI; discrete or Gaussian)",
        ("discrete", "continuous"),
    )
    register(
        "SemiNaive",
        lambda kind: GaussianSemiNaiveNB(search="fssj"),
        "Gaussian semi-naive NB (FSSJ, 30% validation split)",
        ("continuous",),
    )
    register(
        "FlexibleNB",
        lambda kind: FlexibleNB(),
        "flexible NB (1-D Gaussian KDE per predictor and class, normal rule)",
        ("continuous", "mixed"),
    )
    register(
        "Parzen",
        lambda kind: ParzenNB(),
        "Parzen-window classifier (joint KDE per class, normal rule)",
        ("continuous", "mixed"),
    )
    register(
        "CFS+NB",
        lambda kind: FilterNB(filter="cfs"),
        "CFS (Hall, best-first) then NB",
        ("discrete", "continuous", "mixed"),
    )
    register(
        "MI+NB",
        lambda kind: FilterNB(filter="mi"),
        "MI filter (random-probe threshold) then NB",
        ("discrete", "continuous", "mixed"),
    )
    register(
        "mRMR+NB",
        lambda kind: FilterNB(filter="mrmr"),
        "mRMR ranking (k by random probes) then NB",
        ("discrete", "continuous", "mixed"),
    )
