r"""Log-contributions, combination rules, posteriors and losses.

Every NB variant in jaxnb scores a row by a combination of per-predictor log-contributions

    L[r, i, j] = log f(x_ri | Y = j; Ω_i)

(one gather through the flattened CPT for all discrete predictors, one broadcast for all Gaussians):

    log_joint[r, j] = bias_j + Σ_i W[i, j] L[r, i, j],

with ``bias = log π`` and ``W = 1`` for NB (Eq. 1 of Vidaurre et al. 2011), a 0/1 mask for selective
NB, one weight per predictor for weighted NB (Ferreira weights, fsNB eq 6–7) and one weight per
predictor and class plus a free bias for the online weighted NB (Salperwyck et al., eq 2). Missing
values (negative codes, NaN values) contribute 0: the term is dropped, which is exact
marginalization under NB.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._batch import any_in_batch
from ._checks import broadcasts_to, check_labels, concrete, dtype_of, jit_entry, off_host
from ._matmul import einsum, matmul
from .params import NBParams
from .suffstats import _onehot_block, _onehot_layout, state_offsets, state_segments

__all__ = [
    "log_contributions",
    "log_joint",
    "log_posterior",
    "predict",
    "error_rate",
    "error_probability",
    "log_loss",
    "joint_log_likelihood",
    "combine",
]

_LOG_2PI = float(np.log(2 * np.pi))


def _column_max(codes):
    """Per-column maximum of concrete codes, reduced where they live (an accelerator-resident
    array is not copied back to the host whole)."""
    if off_host((codes,)):
        return np.asarray(jax.device_get(jnp.max(codes, axis=0)))
    return np.asarray(codes).max(axis=0)


def _check_rows(params: NBParams, codes, values, weights=None, bias=None, name="params") -> None:
    """The rows and combination arguments of `log_joint` and `log_contributions`.

    Shapes and dtypes are static, so they are checked always (at trace time under ``jit``); the
    code range only for concrete codes. A code >= n_states would otherwise score silently: as a
    missing value in `log_joint` and in `log_contributions` (traced calls still do that).
    """
    n_states, r, c = params.n_states, params.mean.shape[-1], params.n_classes
    q, p = len(n_states), len(n_states) + params.mean.shape[-1]
    cs, vs = np.shape(codes), np.shape(values)
    if len(cs) != 2 or cs[1] != q:
        raise ValueError(
            f"codes must have shape (n, {q}), one column per discrete predictor of {name} "
            f"({name}.n_states = {n_states}); got {cs}"
        )
    if vs != (cs[0], r):
        raise ValueError(
            f"values must have shape ({cs[0]}, {r}): the rows of codes, one column per continuous "
            f"predictor of {name} ({name}.mean has shape {params.mean.shape}); got {vs}"
        )
    if q and dtype_of(codes).kind not in "iu":
        raise TypeError(
            f"codes must be integer state codes (negative = missing); got dtype "
            f"{dtype_of(codes)}. Encode discrete columns first (a float cast would truncate)"
        )
    _check_combination(p, c, weights, bias)
    if q and cs[0] and concrete(codes):
        top = _column_max(codes)
        over = top >= np.asarray(n_states)
        if over.any():
            col = int(np.flatnonzero(over)[0])
            raise ValueError(
                f"codes[:, {col}] holds {int(top[col])} but {name}.n_states[{col}] = "
                f"{n_states[col]}; codes must lie in [0, n_states) (negative = missing)"
            )


def _rows_check(args) -> None:
    """`jit_entry` hook of the row-scoring entry points, run at every call before the jitted body:
    `_check_rows` (shapes always; inside a caller's ``jit`` the rows are tracers, so their values
    are not checked)."""
    _check_rows(
        args["params"], args["codes"], args["values"], args.get("weights"), args.get("bias")
    )


def _check_combination(p, c, weights, bias) -> None:
    """Static shapes of combination weights, (p,) or (p, c), and of a bias, (c,)."""
    if weights is not None and np.shape(weights) not in ((p,), (p, c)):
        raise ValueError(
            f"weights must have shape ({p},) (one per predictor) or ({p}, {c}) (one per predictor "
            f"and class); got {np.shape(weights)}"
        )
    if bias is not None and not broadcasts_to(bias, (c,)):
        raise ValueError(f"bias must have shape ({c},), one per class; got {np.shape(bias)}")


def _check_scored(name, scores, y, weight, divides=None) -> None:
    """``y`` (and ``weight``) of per-class scores (..., n, c): `_checks.check_labels`."""
    shape = np.shape(scores)
    check_labels(name, shape[:-1], shape[-1], y, weight, divides)


def _log_cpt(cpt):
    """log θ with log 0 = −inf and a zero (not NaN) gradient at θ = 0 cells (alpha = 0): a cell no
    row uses must not turn grad(loss) NaN through 0 · d log θ / dθ = 0 · inf."""
    pos = cpt > 0
    return jnp.where(pos, jnp.log(jnp.where(pos, cpt, 1.0)), -jnp.inf)


def _discrete_contributions(params: NBParams, codes):
    """(n, q, c) log θ[x_ri, j] by one gather; missing codes (< 0) give 0."""
    if not params.n_states:
        return jnp.zeros(codes.shape[:1] + (0, params.n_classes), params.cpt.dtype)
    off = jnp.asarray(state_offsets(params.n_states))
    # a code >= n_states (refused eagerly by `_check_rows`) is missing here too, as in `log_joint`'s
    # one-hot, instead of gathering a cell of the next predictor
    miss = (codes < 0) | (codes >= jnp.asarray(params.n_states, codes.dtype)[None, :])
    flat = jnp.where(miss, 0, codes) + off[None, :]
    logc = _log_cpt(params.cpt)[flat]
    return jnp.where(miss[..., None], 0.0, logc)


def _gaussian_contributions(params: NBParams, values):
    """(n, r, c) Gaussian log densities by one broadcast; NaN values give 0."""
    miss = ~jnp.isfinite(values)
    x = jnp.where(miss, 0.0, values)[:, None, :]  # (n, 1, r)
    z = (x - params.mean[None]) / params.std[None]  # (n, c, r)
    lp = -0.5 * (z * z) - jnp.log(params.std)[None] - 0.5 * _LOG_2PI
    lp = jnp.swapaxes(lp, -1, -2)
    return jnp.where(miss[..., None], 0.0, lp)


@jit_entry(check=_rows_check)
def log_contributions(params: NBParams, codes, values):
    r"""Per-predictor log-contributions L (n, p, c), predictor order [discrete, continuous].

    ``codes`` (n, q) integer state codes (negative = missing), ``values`` (n, r) (NaN = missing);
    eager calls check their shapes and that every code is below its ``params.n_states``.
    """
    codes, values = jnp.asarray(codes), jnp.asarray(values)
    return jnp.concatenate(
        [_discrete_contributions(params, codes), _gaussian_contributions(params, values)], axis=1
    )


def combine(L, weights=None, bias=None):
    """Combination rule on precomputed contributions: bias (c,) + Σ_i W[i, j] L[:, i, j].

    Args:
      L: (n, p, c) log-contributions.
      weights: None (NB), (p,) per-predictor or (p, c) per-predictor-per-class weights.
      bias: optional (c,) bias (the log prior for NB-type rules).
    """
    if np.ndim(L) != 3:
        raise ValueError(
            f"L must have shape (n, p, c), as `log_contributions` returns; got {np.shape(L)}"
        )
    _check_combination(L.shape[1], L.shape[2], weights, bias)
    W = _weights_pc(weights, L.shape[1], L.shape[2], L.dtype)
    s = einsum("npc,pc->nc", L, W)
    return s if bias is None else s + jnp.broadcast_to(bias, s.shape)


def offset_scores(values, offsets, weights):
    """(n, c) Σ_i W[i, j] offsets_i over each row's observed continuous values (predictors in
    the order [discrete, continuous]; the discrete offsets are not used): what per-predictor
    offsets of the terms (log s_i of the standardized Gaussian terms) add to `log_joint`."""
    q = offsets.shape[0] - values.shape[1]
    seen = (~jnp.isnan(values)).astype(weights.dtype)
    return einsum("ri,ic->rc", seen, offsets[q:, None] * weights[q:])


def _weights_pc(weights, p, c, dtype):
    if weights is None:
        return jnp.ones((p, c), dtype)
    w = jnp.asarray(weights, dtype)
    return jnp.broadcast_to(w if w.ndim == 2 else w[:, None], (p, c))


def _expansion_inaccurate(mean, std, shift, Wc):
    """(c, r) where `log_joint`'s quadratic expansion around ``shift`` would cancel by more than
    1e-3 nats (eps · ((mean − shift) / std)², a predictor of weight 0 aside). NumPy or JAX
    arrays: the compiled rule and `expansion_shift`'s host test are this one function."""
    eps = float(jnp.finfo(mean.dtype).eps)
    zz = ((mean - shift[None, :]) / std) ** 2
    return (eps * zz > 1e-3) & (Wc != 0)


def expansion_shift(params: NBParams, weights=None):
    """The centring `log_joint` takes by default for concrete ``params`` (and ``weights``), as
    a host (NumPy) array, or None where it would take its direct formula (or there is no
    continuous predictor). Passing it as ``shift`` gives the same scores up to rounding and
    compiles one formula instead of both behind a `lax.cond` (the estimators decide it at fit
    time: a first prediction on a new batch size compiles ~0.10 s instead of ~0.14 s, 2-core
    Xeon)."""
    mean, std = np.asarray(params.mean), np.asarray(params.std)
    r = mean.shape[-1]
    if not r:
        return None
    shift = mean.mean(0)
    if weights is None:
        Wc = np.ones_like(mean)
    else:  # the continuous predictors' weights, (r,) or (r, c), as (c, r)
        w = np.asarray(weights)[-r:]
        Wc = np.broadcast_to(w.T if w.ndim == 2 else w[None, :], mean.shape)
    with np.errstate(all="ignore"):  # std 0 or an overflow: inf, the direct formula, as in jit
        far = np.any(_expansion_inaccurate(mean, std, shift, Wc))
    return None if far else shift


@jit_entry(check=_rows_check)
def log_joint(params: NBParams, codes, values, weights=None, bias=None, shift=None):
    r"""Per-class log joint score of every row, shape (n, c).

    ``bias + Σ_i W[i, j] log f(x_ri | j)`` with bias = log π by default and W = 1 (NB). The Gaussian
    part is evaluated as three matrix products of the quadratic expansion in x − s_i (s_i the class-
    averaged mean, which keeps float32 cancellation small) instead of materializing (n, r, c); the
    discrete part is a float one-hot block of the codes times the weighted log-CPT (a matrix
    product, no gather). Rows go through in blocks that keep the temporaries in cache; data of
    several blocks without a missing continuous value (one sum checks) drop the missing-value mask
    and its product.

    Args:
      params: NB parameters.
      codes: (n, q) int discrete codes (negative = missing).
      values: (n, r) float continuous values (NaN = missing).
      weights: optional (p,) or (p, c) combination weights.
      bias: optional (c,) bias replacing the log prior.
      shift: optional (r,) centring s of the continuous values in the quadratic expansion (default:
        the class-averaged means of ``params``). The scores do not depend on it except through
        rounding; pass one shift shared by several parameter sets (e.g. the predictor-removed
        means of a regularization path) and a ``vmap`` over those sets centres the values once
        and folds their three products into one matrix product each, instead of one batch
        element at a time (3000 rows x 20 Gaussian predictors x a 20-point path: about 4x
        less evaluation time on CPU).
    """
    codes, values = jnp.asarray(codes), jnp.asarray(values)
    c = params.n_classes
    n_states = params.n_states
    q = len(n_states)
    p = params.n_predictors
    r = params.mean.shape[-1]
    dtype = params.cpt.dtype if q else params.mean.dtype
    W = _weights_pc(weights, p, c, dtype)
    b0 = params.log_prior if bias is None else bias
    n = codes.shape[0]

    if q:
        rhs, packed = _discrete_rhs(params, W[:q])
    far = None
    if r:
        Wc = W[q:].T  # (c, r)
        if shift is None:
            shift = params.mean.mean(0)
            # the expansion below cancels with an absolute error of about
            # eps * ((mean_j - shift) / std_j)^2 nats; where that exceeds 1e-3 for some class (in
            # float32: class means ~100 std apart), the rows take the direct formula instead (a
            # lax.cond; under vmap the whole batch takes the direct formula if one of its
            # parameter sets needs it, `any_in_batch`). A shift passed by the caller is kept.
            far = any_in_batch(jnp.any(_expansion_inaccurate(params.mean, params.std, shift, Wc)))
        else:
            shift = jnp.asarray(shift, params.mean.dtype)
            if shift.shape != (r,):
                raise ValueError(
                    f"shift must have shape ({r},), one value per continuous predictor; got "
                    f"{shift.shape}"
                )
        mu = params.mean - shift[None, :]
        prec = 1.0 / (params.std * params.std)
        a = (-0.5 * prec * Wc).T
        b = (mu * prec * Wc).T
        k = ((-0.5 * mu * mu * prec - jnp.log(params.std) - 0.5 * _LOG_2PI) * Wc).T

    def block(cb, vb, form):
        out = jnp.broadcast_to(b0, (cb.shape[0], c))
        if q:
            h = matmul(_onehot_block(cb, n_states, rhs.dtype), rhs)
            out = out + h[:, :c] + _nonfinite_terms(h[:, c:], q, c, packed)
        if not r:
            return out
        if form == "direct":  # (rows, r, c) terms, each centred on its own class mean
            lp = _gaussian_contributions(params, vb)
            return out + (lp * Wc.T[None]).sum(1).astype(out.dtype)
        if form == "complete":  # no missing value anywhere: no mask, and the constant terms summed
            x = vb - shift[None, :]
            return out + matmul(x * x, a) + matmul(x, b) + k.sum(0)[None, :]
        obs = jnp.isfinite(vb)
        x = jnp.where(obs, vb - shift[None, :], 0.0)
        return out + matmul(x * x, a) + matmul(x, b) + matmul(obs.astype(x.dtype), k)

    width = (rhs.shape[0] if q else 0) + 12 * r  # see `_rows_per_block`
    bs = _rows_per_block(width)

    def blocks(form):
        if n <= bs:
            return block(codes, values, form)
        nb = n // bs
        res = jax.eval_shape(lambda cb, vb: block(cb, vb, form), codes[:bs], values[:bs])

        def body(i, out):
            cb = jax.lax.dynamic_slice_in_dim(codes, i * bs, bs, 0)
            vb = jax.lax.dynamic_slice_in_dim(values, i * bs, bs, 0)
            return jax.lax.dynamic_update_slice_in_dim(out, block(cb, vb, form), i * bs, 0)

        # inside `jax.shard_map` the body's output varies over the mesh axes its inputs vary
        # over; the initial carry must too (plain zeros do not, and the loop raised a TypeError
        # there for more local rows than one block): add the empty sums of the inputs, exactly 0
        empty = sum(
            jnp.sum(jnp.ravel(a)[:0]).astype(res.dtype)
            for a in jax.tree.leaves((params, codes, values))
        )
        out = jax.lax.fori_loop(0, nb, body, jnp.zeros((n, c), res.dtype) + empty)
        if n - nb * bs:
            out = jax.lax.dynamic_update_slice_in_dim(
                out, block(codes[nb * bs :], values[nb * bs :], form), nb * bs, 0
            )
        return out

    # The branches below are chosen by `lax.cond`s around the whole block loop, not inside it: a
    # cond in the loop body kept XLA from fusing each block's products with their inputs (1M x 100
    # float32 rows, 3 classes: 0.16 s against 0.115 s). Data of several blocks without a missing
    # value skip the mask and its product (0.115 -> 0.08 s there, the check included; 0.13 s with a
    # missing value). The check is one sum: finite unless some value is NaN or infinite, or the sum
    # overflows (which only sends complete data to the masked form); `jnp.all(jnp.isfinite(.))`
    # took 60 ms there. Under vmap the check covers the whole batch (`any_in_batch`), so the cond
    # still runs one form. One block always takes the masked form (a small gain, two compiled
    # forms).
    def expanded():
        if r and n > bs:
            complete = ~any_in_batch(~jnp.isfinite(jnp.sum(values)))
            return jax.lax.cond(complete, lambda: blocks("complete"), lambda: blocks("masked"))
        return blocks("masked")

    if far is None:
        return expanded()
    return jax.lax.cond(far, lambda: blocks("direct"), expanded)


_BLOCK_BYTES = 1 << 22  # per-block float temporaries (about the L2 caches of the test machine)


def _rows_per_block(width: int) -> int:
    """Rows per block (a power of two in [256, 8192]) so that rows x width floats take ~4 MB.

    ``width`` weighs the float temporaries per row of a block: one per one-hot column of the
    discrete part, 12 per continuous predictor (x - shift, x^2 and the observed mask, each read by a
    matrix product that packs its own copy, and the sliced input). The weights are empirical: a
    sweep on a 2-core Xeon (``benchmarks/bench_nb.py --sweep``) put the best block at 512 rows for
    100 Gaussian predictors and 1024-2048 rows for 100 five-state predictors. Since the choice of
    the Gaussian formula moved out of the block loop, the Gaussian time is flat from 256 to 8192
    rows (0.090-0.095 s at 1M x 100, an Intel Xeon).
    """
    rows = _BLOCK_BYTES // (4 * max(width, 1))
    return int(min(8192, max(256, 1 << max(rows.bit_length() - 1, 0))))


def _discrete_rhs(params: NBParams, Wq):
    """Weighted log-CPT laid out like the one-hot of a block of codes, with a count of its
    non-finite entries (log 0 = -inf when alpha = 0, or non-finite weights).

    Returns ``(rhs, packed)``: ``rhs`` (width, c + c·d) holds the finite part of W[i, j] log θ_ikj
    (non-finite entries set to 0) followed by indicator columns of its +inf, -inf and NaN entries,
    packed as base-B digits of one column per class (``packed``, exact in the float mantissa) or as
    three column sets. A row's product with the one-hot then gives the finite sum and how many
    non-finite terms it hit, and `_nonfinite_terms` restores exactly what summing them gives.
    """
    n_states = params.n_states
    q = len(n_states)
    Lw = _log_cpt(params.cpt) * Wq[state_segments(n_states)]  # (K, c): the products log θ[x] W
    finite = jnp.where(jnp.isfinite(Lw), Lw, 0.0)
    flags = [(Lw == jnp.inf), (Lw == -jnp.inf), jnp.isnan(Lw)]
    B = 1 << q.bit_length()  # a power of two > q: a digit never carries
    packed = B**3 <= 2 ** (jnp.finfo(Lw.dtype).nmant + 1)
    if packed:
        ind = [(flags[0] + B * flags[1] + (B * B) * flags[2]).astype(Lw.dtype)]
    else:
        ind = [f.astype(Lw.dtype) for f in flags]
    rhs = jnp.concatenate([finite, *ind], axis=1)
    M, rows = _onehot_layout(n_states)
    if M and (q * M != rhs.shape[0] or np.any(rows != np.arange(len(rows)))):
        rhs = jnp.zeros((q * M, rhs.shape[1]), rhs.dtype).at[rows].set(rhs)
    return rhs, packed


def _nonfinite_terms(h, q, c, packed):
    """Sum of the non-finite terms a row hit, from its indicator products h (b, c·d)."""
    if packed:
        B = float(1 << q.bit_length())
        nan_ = jnp.floor(h / (B * B))
        rest = h - nan_ * (B * B)
        neg = jnp.floor(rest / B)
        pos = rest - neg * B
    else:
        pos, neg, nan_ = h[:, :c], h[:, c : 2 * c], h[:, 2 * c :]
    pos, neg, nan_ = pos > 0, neg > 0, nan_ > 0
    inf = jnp.asarray(jnp.inf, h.dtype)
    return jnp.where(
        nan_ | (pos & neg),
        jnp.asarray(jnp.nan, h.dtype),
        jnp.where(pos, inf, jnp.where(neg, -inf, jnp.zeros((), h.dtype))),
    )


@jit_entry(check=_rows_check)
def log_posterior(params: NBParams, codes, values, weights=None, bias=None, shift=None):
    """Log posterior (n, c): `log_joint` normalized with logsumexp."""
    return jax.nn.log_softmax(log_joint(params, codes, values, weights, bias, shift), axis=-1)


def predict(log_post):
    """argmax over classes; ties go to the lowest class index (documented, deterministic)."""
    return jnp.argmax(log_post, axis=-1)


def weighted_sum(x, weight, axis=-1):
    """Σ weight · x over ``axis``, where a row of weight 0 adds 0 even if its value is ±inf or
    NaN (0 · inf = NaN): the held-out rows of a fold under alpha = 0, for example."""
    return jnp.where(weight > 0, x * weight, 0.0).sum(axis)


def _wmean(x, weight):
    if weight is None:
        return x.mean(-1)
    return weighted_sum(x, weight) / weight.sum(-1)


def _true_class(log_post, y):
    return jnp.take_along_axis(log_post, y[..., None], axis=-1)[..., 0]


_MEAN = "it divides the weighted mean"


def error_rate(log_post, y, weight=None):
    """Weighted fraction of rows whose argmax class differs from y.

    ``y`` holds integer class codes in [0, c) and ``weight`` finite weights >= 0 with a positive
    sum, one per row of ``log_post`` (..., n, c); eager calls check them (as do the other losses).
    """
    _check_scored("log_post", log_post, y, weight, _MEAN)
    return _wmean((predict(log_post) != y).astype(log_post.dtype), weight)


def error_probability(log_post, y, weight=None):
    r"""(1/N) Σ_r (1 − P(Y = y_r | x_r)) — ESANN's smooth surrogate of the error rate."""
    _check_scored("log_post", log_post, y, weight, _MEAN)
    return _wmean(1.0 - jnp.exp(_true_class(log_post, y)), weight)


def log_loss(log_post, y, weight=None):
    r"""−(1/N) Σ_r log P(Y = y_r | x_r) (negative conditional log-likelihood per row)."""
    _check_scored("log_post", log_post, y, weight, _MEAN)
    return -_wmean(_true_class(log_post, y), weight)


def joint_log_likelihood(log_joint_scores, y, weight=None):
    r"""Σ_r w_r log P(x_r, y_r): the generative log-likelihood NB maximizes."""
    _check_scored("log_joint_scores", log_joint_scores, y, weight)
    lj = _true_class(log_joint_scores, y)
    return lj.sum(-1) if weight is None else (lj * weight).sum(-1)
