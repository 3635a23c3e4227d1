r"""ESANN time-series simulator and its sliding-window binary indicators (Rabenoro et al. 2015, §2,
§5.1).

Series (ESANN §5.1). Half the series are normal (Gaussian white noise, σ = 1); the other half split
into three equal anomaly classes, each a change at a point τ drawn uniformly in the central 60 % of
the series (indices [ceil(0.2 L), floor(0.8 L)], e.g. [20, 80] for L = 100):
  1 mean change:      x_t = ε_t + μ 1[t >= τ],                    μ ~ U[1, 5];
  2 variance change:  x_t = ε_t (1 + (σ - 1) 1[t >= τ]),          σ ~ U[2, 6];
  3 trend shift:      x_t = ε_t + a (t - τ + 1) / (L - τ) 1[t >= τ], a ~ U[1, 5]
                      (the trend reaches a at the last sample t = L - 1).
Lengths L ~ U{100, ..., 200}. Series are padded with zeros to `max_length`; `lengths` holds L.
Class counts are deterministic (n // 2 normal, the rest split as evenly as possible, first classes
first); the order is a random permutation. Everything derives from one `jax.random` key.

Scores (ESANN §1–2). For a window length w (half-window h = w / 2, as in ESANN §1: "the w/2 points
before t_b ... and the w/2 points after") and a split position t, the populations are x[t-h:t] and
x[t:t+h]; positions t = h, ..., L - h. Three two-sample tests give two-sided p-values:
  * Mann–Whitney U, normal approximation with continuity correction and tie-corrected variance
    (what `scipy.stats.mannwhitneyu(method="asymptotic")` computes);
  * Kolmogorov–Smirnov, asymptotic Kolmogorov distribution Q_KS(λ) at Stephens' (1970) small-sample
    argument λ = (sqrt(e) + 0.12 + 0.11 / sqrt(e)) D, e = h h / (h + h) (Numerical Recipes §14.3).
    SciPy's `ks_2samp(method="asymp")` uses a different approximation (the one-sample exact law at
    round(e)); the tests compare against `scipy.stats.kstwobign.sf(λ)` and the statistic D;
  * F-test of equal variances (after / before, unbiased variances, (h-1, h-1) df), p from the
    regularized incomplete beta function.
Confirmation scores on successive windows: for m consecutive positions,
    s_m = min_t max_{0 <= i < m} p_{t+i},
so s_m <= λ iff at least m consecutive split positions all have p <= λ (m = 1 is the minimum
p-value).
The position score is the relative position t* / L of the minimal p-value.

Indicators (ESANN §2: I = 1[s <= λ]). Default grid, 810 indicators (the paper reports 814 with the
grid of its ref. [7], which is not given):
  3 tests (mw, ks, f) x 6 windows w in {10, 20, 30, 40, 50, 60}
    x [4 confirmation lengths m in {1, 3, 5, 10} x 11 levels λ in {0.1, 0.05, 0.01, 1e-3, 1e-4,
    1e-5,
       1e-6, 1e-7, 1e-8, 1e-10, 1e-12}  ->  44 indicators "s_m <= λ"
       + 1 position indicator "|t*/L - 1/2| <= 0.3" (the minimum lies in the central 60 %)]
  = 3 x 6 x 45 = 810.
Indicators are highly redundant by construction (nested levels, nested m), and for short windows
the smallest levels are unreachable (e.g. Mann–Whitney with h = 5 cannot go below p ≈ 0.009), so
some columns are constant; ESANN studies exactly this redundant setting.

Computation. Series are processed in batches laid out (T, B), the series axis last, so that every
operation is a contiguous vector operation over the batch (no gathers, no per-series vmap layout).
All windows of a batch share a band of pairwise comparisons B[d, s] = 1[x_{s+d} <= x_s] (and the
strict version), |d| < 2 H for the largest half-window H, accumulated into prefix counts along d by
a `lax.scan` of shifted slices (a cumsum lowers to an associative scan that is slow to compile and
to run on XLA CPU); any window count of values <= x_s is then a difference of two prefix rows, read
for all split positions at once as anti-diagonals (one slice + reshape of the row-reversed band).
The empirical CDF differences (KS), midrank sums (MW) and tie counts thus cost O(h) per split
position instead of O(h^2), and stay integer until reduced. Window sums for the F-test come from
cumulative sums of the centred series. The statistics of all windows are concatenated before the
p-value transforms, so erfc, the Kolmogorov series and the incomplete beta function are compiled
once. Batches go through `jax.lax.map` (`batch_size` series each; 64 keeps a batch's band in
cache); the static loop over the handful of window lengths is unrolled at trace time.

References:
  T. Rabenoro, J. Lacaille, M. Cottrell, F. Rossi. Search strategies for binary feature selection
  for
    a naive Bayes classifier. ESANN 2015 (§2 indicators, §5.1 data).
  W. H. Press et al. Numerical Recipes, 3rd ed., §14.3 (KS p-value), §6.4 (incomplete beta).
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import betainc, erfc

__all__ = [
    "CLASS_NAMES",
    "TEST_NAMES",
    "DEFAULT_WINDOWS",
    "DEFAULT_LEVELS",
    "DEFAULT_CONFIRMATIONS",
    "SeriesData",
    "IndicatorData",
    "simulate_series",
    "window_pvalues",
    "compute_scores",
    "indicator_names",
    "compute_indicators",
    "make_esann_dataset",
]

CLASS_NAMES = ("normal", "mean_change", "variance_change", "trend_shift")
TEST_NAMES = ("mw", "ks", "f")
DEFAULT_WINDOWS = (10, 20, 30, 40, 50, 60)
DEFAULT_LEVELS = (0.1, 0.05, 0.01, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10, 1e-12)
DEFAULT_CONFIRMATIONS = (1, 3, 5, 10)
DEFAULT_CENTRAL_FRACTION = 0.6


class SeriesData(NamedTuple):
    """Simulated series. `values[i, :lengths[i]]` is series i; the rest is zero padding."""

    values: jax.Array  # (n, max_length) float
    lengths: jax.Array  # (n,) int32
    labels: jax.Array  # (n,) int32 in 0..3, see CLASS_NAMES
    is_anomaly: jax.Array  # (n,) int32, 1 for classes 1..3
    change_point: jax.Array  # (n,) int32 τ, -1 for normal series
    amplitude: jax.Array  # (n,) μ, σ or final trend a; 0 for normal series


# ----------------------------------------------------------------------------------------------
# Simulator
# ----------------------------------------------------------------------------------------------
def _class_counts(n_series: int) -> np.ndarray:
    n_normal = n_series // 2
    n_anomaly = n_series - n_normal
    per = np.full(3, n_anomaly // 3)
    per[: n_anomaly % 3] += 1
    return np.concatenate([[n_normal], per])


@partial(jax.jit, static_argnames=("n_series", "min_length", "max_length", "central_fraction"))
def _simulate(key, n_series, min_length, max_length, central_fraction):
    dtype = jnp.result_type(float)
    k_perm, k_len, k_cp, k_amp, k_noise = jax.random.split(key, 5)
    sorted_labels = np.repeat(np.arange(4, dtype=np.int32), _class_counts(n_series))
    labels = jax.random.permutation(k_perm, jnp.asarray(sorted_labels))
    lengths = jax.random.randint(k_len, (n_series,), min_length, max_length + 1, dtype=jnp.int32)
    half_margin = 0.5 * (1.0 - central_fraction)
    length_f = lengths.astype(dtype)
    # the 1e-6 guards against 100 * 0.2 = 20.000000000000004 rounding up to 21
    lo = jnp.ceil(length_f * half_margin - 1e-6)
    # at most L - 1: a change point at L would leave the series without a changed part
    hi = jnp.minimum(jnp.floor(length_f * (1.0 - half_margin) + 1e-6), length_f - 1.0)
    u = jax.random.uniform(k_cp, (n_series,), dtype)
    tau = jnp.minimum(lo + jnp.floor(u * (hi - lo + 1.0)), hi).astype(jnp.int32)
    u_amp = jax.random.uniform(k_amp, (n_series,), dtype, 0.0, 4.0)
    amplitude = jnp.where(labels == 2, 2.0 + u_amp, 1.0 + u_amp)  # σ in [2,6]; μ, a in [1,5]
    amplitude = jnp.where(labels == 0, 0.0, amplitude)
    noise = jax.random.normal(k_noise, (n_series, max_length), dtype)
    t = jnp.arange(max_length)[None, :]
    after = t >= tau[:, None]
    amp = amplitude[:, None]
    lab = labels[:, None]
    ramp = (t - tau[:, None] + 1).astype(dtype) / (lengths - tau)[:, None].astype(dtype)
    x = jnp.where(lab == 1, noise + amp * after, noise)
    x = jnp.where(lab == 2, noise * jnp.where(after, amp, 1.0), x)
    x = jnp.where(lab == 3, noise + amp * ramp * after, x)
    x = jnp.where(t < lengths[:, None], x, 0.0)
    change_point = jnp.where(labels == 0, -1, tau)
    return SeriesData(x, lengths, labels, (labels > 0).astype(jnp.int32), change_point, amplitude)


def simulate_series(
    key: jax.Array,
    n_series: int,
    *,
    min_length: int = 100,
    max_length: int = 200,
    central_fraction: float = DEFAULT_CENTRAL_FRACTION,
) -> SeriesData:
    r"""Simulate the ESANN §5.1 series (see the module docstring for the four classes).

    Args:
      key: a `jax.random` key; the output is a deterministic function of (key, arguments).
      n_series: number of series (>= 4); n // 2 normal, the rest split over the 3 anomaly classes.
      min_length, max_length: lengths are uniform integers in [min_length, max_length] (inclusive).
      central_fraction: the change point is uniform in the central fraction of each series.

    Returns:
      `SeriesData`; values have the default float dtype (float64 under `jax_enable_x64`).
    """
    if not isinstance(n_series, int | np.integer) or n_series < 4:
        raise ValueError(f"n_series must be an int >= 4; got {n_series=}")
    if not 2 <= min_length <= max_length:
        raise ValueError(f"need 2 <= min_length <= max_length; got {min_length=}, {max_length=}")
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError(f"central_fraction must lie in (0, 1]; got {central_fraction=}")
    return _simulate(key, int(n_series), int(min_length), int(max_length), float(central_fraction))


# ----------------------------------------------------------------------------------------------
# Two-sample tests on all split positions of one series
# ----------------------------------------------------------------------------------------------
def _normal_two_sided(z):
    return jnp.minimum(1.0, erfc(z / math.sqrt(2.0)))


def _kolmogorov_sf(lam):
    r"""Q_KS(λ) = 2 Σ_j (-1)^{j-1} exp(-2 j² λ²), or 1 - sqrt(2π)/λ Σ_j exp(-(2j-1)² π² / (8 λ²))
    for
    λ < 1.18, where that series converges faster (both truncated where terms are < e^-70)."""
    shape = lam.shape
    lam = lam.reshape(
        -1, 1
    )  # explicit 2-D broadcasting against the term index (rank promotion off)
    small = lam < 1.18
    lam_s = jnp.maximum(jnp.where(small, lam, 1.0), 0.05)  # λ <= 0.05 gives Q = 1 to all digits
    odd2 = ((2.0 * jnp.arange(1, 6, dtype=lam.dtype) - 1.0) ** 2)[None, :]
    cdf = math.sqrt(2.0 * math.pi) / lam_s * jnp.exp(-odd2 * (math.pi**2) / (8.0 * lam_s**2))
    lam_l = jnp.where(small, 1.18, lam)
    j = jnp.arange(1, 7, dtype=lam.dtype)[None, :]
    sign = jnp.where(j % 2 == 1, 1.0, -1.0)
    sf_large = 2.0 * (sign * jnp.exp(-2.0 * j**2 * lam_l**2)).sum(-1, keepdims=True)
    cdf = cdf.sum(-1, keepdims=True)
    return jnp.clip(jnp.where(small, 1.0 - cdf, sf_large), 0.0, 1.0).reshape(shape)


def _band_prefix(x, dmax):
    """Prefix counts over the comparison band of a batch of series laid out (T, B), series last.

    P[r, s, b] = #{d <= r - dmax - 1 : x_{s+d, b} (<= or <) x_{s, b}}, |d| <= dmax; shape
    (2 dmax + 2, T, B), row 0 is zero. int16 counts (<= 2 dmax + 1) halve memory traffic. The rows
    are accumulated by a `lax.scan` over d, each step one contiguous shifted slice of the
    +inf-padded batch (a slice is a copy; an index gather or a cumsum lowered to an associative
    scan is slow to run and to compile on XLA CPU). With the series last, every op is a
    contiguous vector op over the batch.
    """
    size = x.shape[0]
    pad = jnp.full((dmax,) + x.shape[1:], jnp.inf, x.dtype)
    xpad = jnp.concatenate([pad, x, pad])
    zero = jnp.zeros(x.shape, jnp.int16)

    def step(carry, d):
        acc_le, acc_lt = carry
        other = jax.lax.dynamic_slice_in_dim(xpad, d, size, axis=0)  # x_{s+d-dmax}
        acc_le = acc_le + (other <= x).astype(jnp.int16)
        acc_lt = acc_lt + (other < x).astype(jnp.int16)
        return (acc_le, acc_lt), (acc_le, acc_lt)

    _, (le, lt) = jax.lax.scan(step, (zero, zero), jnp.arange(2 * dmax + 1))
    return jnp.concatenate([zero[None], le]), jnp.concatenate([zero[None], lt])


def _flip_flat(prefix, max_half):
    """Rows reversed and (row, T) flattened, + zero tail: ((2dmax+2) T + 2 max_half + 1, B)."""
    rows, size = prefix.shape[:2]
    flat = prefix[::-1].reshape((rows * size,) + prefix.shape[2:])
    tail = jnp.zeros((2 * max_half + 1,) + prefix.shape[2:], prefix.dtype)
    return jnp.concatenate([flat, tail])


def _anti_diagonals(flat, rows, size, half, r0):
    """M[jj, t', b] = prefix[r0 - jj, t' + jj, b], jj < 2h, t' < T - 2h + 1, from `_flip_flat`.

    Reversing the rows turns these anti-diagonals into a constant-stride walk through memory
    (flat row index base + t' + jj (T + 1)), so one slice and one reshape extract them all.
    """
    n_pos = size - 2 * half + 1
    base = (rows - 1 - r0) * size
    block = jax.lax.slice_in_dim(flat, base, base + 2 * half * (size + 1), axis=0)
    return block.reshape((2 * half, size + 1) + flat.shape[1:])[:, :n_pos]


def _batch_statistics(length, half, dmax, flat_le, flat_lt, csum1, csum2, dtype):
    """Test statistics of a (T, B) batch at t = half .. T - half, each (n_pos, B).

    Returns (ks_arg, mw_z, mw_var, f_ratio, f_total, valid): the Kolmogorov argument λ, the
    Mann–Whitney z and variance of U, the F-test ratio r = v_after / (v_a + v_b) and v_a + v_b,
    and the validity mask. The p-value transforms are applied once to all windows together by
    `_pvalues_from_statistics` (one instance of each special function in the compiled graph).
    """
    rows = 2 * dmax + 2
    size = csum1.shape[0] - 1
    n_pos = size - 2 * half + 1
    t = jnp.arange(half, size - half + 1)

    # rows index s = t + j, j = -h..h-1; window edges relative to s: t - h - s = -j - h,
    # t - s = -j, t + h - s = -j + h, i.e. prefix rows r0 = dmax + h + shift for shift -h, 0, h
    def edges(flat):
        return [_anti_diagonals(flat, rows, size, half, dmax + half + s) for s in (-half, 0, half)]

    le0, le1, le2 = edges(flat_le)
    lt0, lt1, lt2 = edges(flat_lt)
    h = float(half)

    # Kolmogorov–Smirnov: sup |F_before - F_after| is attained at a sample point; with
    # before = le1 - le0 (#{u in [t-h, t): x_u <= x_s}) and after = le2 - le1 the difference is
    # 2 le1 - le0 - le2. Counts stay integer until the reduction is done, widened to int32 for it
    # (the int16 max-reduction gave KS p-values of 0.97 for 0.31 on an H200 with JAX 0.11; the
    # Mann-Whitney sums, reduced in int32, were right)
    d_count = jnp.max(jnp.abs((2 * le1 - le0 - le2).astype(jnp.int32)), axis=0)
    sqrt_e = math.sqrt(h / 2.0)
    ks_arg = (sqrt_e + 0.12 + 0.11 / sqrt_e) * (d_count.astype(dtype) / h)

    # Mann–Whitney: U of the before sample = sum over before points of (#after < x_s + #after ==
    # x_s / 2); the integer sum (<= 2 h^2) is exact in int32
    after_sum = (le2 - le1 + lt2 - lt1)[:half].astype(jnp.int32)
    u_before = 0.5 * jnp.sum(after_sum, axis=0).astype(dtype)
    ties = ((le2 - le0) - (lt2 - lt0)).astype(jnp.int32)  # size of x_s's tie group
    tie_term = jnp.sum(ties * ties - 1, axis=0).astype(dtype)  # = Σ_groups (t³ - t), exact
    n_all = 2.0 * h
    var_u = h * h / 12.0 * ((n_all + 1.0) - tie_term / (n_all * (n_all - 1.0)))
    z = (jnp.abs(u_before - h * h / 2.0) - 0.5) / jnp.sqrt(jnp.maximum(var_u, 1e-30))

    # F-test of variances, (h-1, h-1) df: p = 2 I_{min(r, 1-r)}(ν/2, ν/2), r = v_after / (v_a + v_b)
    def window_var(sum1, sum2):
        return jnp.maximum(sum2 - sum1 * sum1 / h, 0.0) / (h - 1.0)

    # window sums from static slices of the running sums (t - h, t and t + h for t = h .. T - h)
    c1_lo, c1_mid, c1_hi = csum1[:n_pos], csum1[half : half + n_pos], csum1[2 * half :]
    c2_lo, c2_mid, c2_hi = csum2[:n_pos], csum2[half : half + n_pos], csum2[2 * half :]
    var_before = window_var(c1_mid - c1_lo, c2_mid - c2_lo)
    var_after = window_var(c1_hi - c1_mid, c2_hi - c2_mid)
    # a constant window has variance 0 exactly; the running-sum difference leaves rounding there
    # (which made F's p-value arbitrary, even 0, for two constant windows). The tie counts give
    # the exact test: a window is constant iff its first point's tie group is the whole window.
    const_before = ((le1 - le0) - (lt1 - lt0))[0] == half
    const_after = ((le2 - le1) - (lt2 - lt1))[half] == half
    var_before = jnp.where(const_before, 0.0, var_before)
    var_after = jnp.where(const_after, 0.0, var_after)
    total = var_before + var_after
    ratio = var_after / jnp.where(total > 0, total, 1.0)

    valid = t[:, None] + half <= length[None, :]
    return ks_arg, z, var_u, ratio, total, valid


def _pvalues_from_statistics(halves, stats):
    """[(p-values (3, n_pos_h, B) in TEST_NAMES order, valid)] from `_batch_statistics` outputs.

    All windows are concatenated along the position axis so that erfc, the Kolmogorov series and
    the incomplete beta function appear once in the graph (compile time), elementwise as before.
    """
    sizes = [s[0].shape[0] for s in stats]
    cat = lambda k: jnp.concatenate([s[k] for s in stats], axis=0)
    ks_arg, z, var_u, ratio, total = (cat(k) for k in range(5))
    dtype = ratio.dtype
    half_df = jnp.concatenate(
        [jnp.full(s[3].shape, 0.5 * (h - 1.0), dtype) for h, s in zip(halves, stats, strict=True)]
    )
    p_ks = _kolmogorov_sf(ks_arg)
    p_mw = jnp.where(var_u > 0, _normal_two_sided(z), 1.0)
    p_f = 2.0 * betainc(half_df, half_df, jnp.minimum(ratio, 1.0 - ratio))
    p_f = jnp.where(total > 0, jnp.minimum(p_f, 1.0), 1.0)
    p_all = jnp.stack([p_mw, p_ks, p_f])
    out, start = [], 0
    for size, s in zip(sizes, stats, strict=True):
        out.append((p_all[:, start : start + size], s[5]))
        start += size
    return out


def _batch_all_windows(x, length, halves):
    """p-values for every half-window in `halves` of a (T, B) batch: [((3, n_pos_h, B), (n_pos_h,
    B))]."""
    dmax = 2 * max(halves) - 1
    prefix_le, prefix_lt = _band_prefix(x, dmax)
    flat_le, flat_lt = _flip_flat(prefix_le, max(halves)), _flip_flat(prefix_lt, max(halves))
    # centring by the series mean keeps the running sums small (float32 cancellation in Σx² -
    # (Σx)²/h)
    lf = jnp.maximum(length, 1).astype(x.dtype)
    mean = jnp.sum(x, axis=0) / lf
    xc = jnp.where(jnp.arange(x.shape[0])[:, None] < length[None, :], x - mean[None, :], 0.0)
    zero = jnp.zeros((1,) + x.shape[1:], x.dtype)
    csum1 = jnp.concatenate([zero, jnp.cumsum(xc, axis=0)])
    csum2 = jnp.concatenate([zero, jnp.cumsum(xc * xc, axis=0)])
    stats = [
        _batch_statistics(length, h, dmax, flat_le, flat_lt, csum1, csum2, x.dtype) for h in halves
    ]
    return _pvalues_from_statistics(halves, stats)


def _map_batches(fn, values, lengths, batch_size):
    """Apply `fn((T, B) batch, (B,) lengths)` to batches of series; outputs get the series axis
    first.

    The series are padded to a multiple of the batch size and laid out (batches, T, B) so that the
    batch is the minor (contiguous) axis inside `fn`; the per-batch results (..., B) are moved
    back to (n, ...).
    """
    n, size = values.shape
    batch = min(batch_size, n)
    n_batches = -(-n // batch)
    pad = n_batches * batch - n
    v = jnp.concatenate([values, jnp.zeros((pad, size), values.dtype)])
    lens = jnp.concatenate([lengths, jnp.full((pad,), size, lengths.dtype)])
    v = v.reshape(n_batches, batch, size).transpose(0, 2, 1)
    lens = lens.reshape(n_batches, batch)
    out = jax.lax.map(lambda args: fn(*args), (v, lens))

    def unbatch(a):  # (n_batches, ..., B) -> (n, ...)
        a = jnp.moveaxis(a, -1, 1)
        return a.reshape((n_batches * batch,) + a.shape[2:])[:n]

    return jax.tree_util.tree_map(unbatch, out)


def _check_series(values, lengths):
    values = jnp.asarray(values)
    lengths = jnp.asarray(lengths)
    if values.ndim != 2:
        raise ValueError(f"values must be 2-D (n_series, max_length); got shape {values.shape}")
    if lengths.shape != values.shape[:1]:
        raise ValueError(f"lengths must have shape ({values.shape[0]},); got {lengths.shape}")
    if not jnp.issubdtype(values.dtype, jnp.floating):
        values = values.astype(jnp.result_type(float))
    return values, lengths.astype(jnp.int32)


def _check_windows(windows, max_length):
    windows = tuple(int(w) for w in windows)
    if not windows or any(w < 4 or w % 2 for w in windows):
        raise ValueError(f"windows must be even integers >= 4 (h = w/2 per side); got {windows}")
    if max(windows) > max_length:
        raise ValueError(f"windows must not exceed max_length={max_length}; got {windows}")
    return windows


@partial(jax.jit, static_argnames=("half", "batch_size"))
def _window_pvalues_jit(values, lengths, half, batch_size=64):
    fn = lambda x, n: _batch_all_windows(x, n, (half,))[0]
    return _map_batches(fn, values, lengths, batch_size)


def window_pvalues(values, lengths, window: int) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""Two-sided MW, KS and F-test p-values for all split positions of one window length.

    Args:
      values: (n, T) padded series; lengths: (n,) valid lengths.
      window: w, even; populations are the h = w/2 points before and after each split t.

    Returns:
      (pvalues, positions, valid): pvalues (n, 3, T - w + 1) in TEST_NAMES order, positions t = h ..
      T - h, and valid (n, T - w + 1) = (t + h <= L). Invalid positions hold meaningless numbers.
    """
    values, lengths = _check_series(values, lengths)
    (window,) = _check_windows((window,), values.shape[1])
    half = window // 2
    p, valid = _window_pvalues_jit(values, lengths, half)
    return p, jnp.arange(half, values.shape[1] - half + 1), valid


# ----------------------------------------------------------------------------------------------
# Summary scores and indicators
# ----------------------------------------------------------------------------------------------
def _batch_scores(x, length, halves, confirmations):
    """Scores of a (T, B) batch: confirmation (n_windows, 3, n_conf, B) and relative argmin
    (n_windows, 3, B)."""
    conf_all, pos_all = [], []
    for h, (p, valid) in zip(halves, _batch_all_windows(x, length, halves), strict=True):
        p = jnp.where(valid[None], p, 1.0)  # invalid positions never look significant
        n_pos = p.shape[1]
        conf = []
        for m in confirmations:  # running max over m consecutive positions, from static slices
            run_max = p[:, : n_pos - m + 1]
            for i in range(1, m):
                run_max = jnp.maximum(run_max, p[:, i : i + n_pos - m + 1])
            conf.append(jnp.min(run_max, axis=1))
        conf_all.append(jnp.stack(conf, axis=1))
        t_star = jnp.argmin(p, axis=1) + h
        pos_all.append(t_star.astype(x.dtype) / length.astype(x.dtype)[None, :])
    return jnp.stack(conf_all), jnp.stack(pos_all)


@partial(jax.jit, static_argnames=("halves", "confirmations", "batch_size"))
def _scores_jit(values, lengths, halves, confirmations, batch_size):
    fn = lambda x, n: _batch_scores(x, n, halves, confirmations)
    return _map_batches(fn, values, lengths, batch_size)


def compute_scores(
    values,
    lengths,
    *,
    windows=DEFAULT_WINDOWS,
    confirmations=DEFAULT_CONFIRMATIONS,
    batch_size: int = 64,
) -> tuple[jax.Array, jax.Array]:
    r"""Continuous per-series scores before thresholding.

    Returns:
      confirmation: (n, n_windows, 3, n_conf), s_m = min_t max_{i<m} p_{t+i} (tests in TEST_NAMES
      order, m in `confirmations` order); position: (n, n_windows, 3), t*/L with t* = argmin_t p_t
      (the first minimum). A series shorter than a window has no valid position: s_m = 1, t* = h.
    """
    values, lengths = _check_series(values, lengths)
    windows = _check_windows(windows, values.shape[1])
    confirmations = tuple(int(m) for m in confirmations)
    n_pos_min = values.shape[1] - max(windows) + 1
    if not confirmations or min(confirmations) < 1 or max(confirmations) > n_pos_min:
        raise ValueError(
            f"confirmations must be integers in [1, {n_pos_min}] (positions of the largest window)"
            f"; got {confirmations}"
        )
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1; got {batch_size=}")
    halves = tuple(w // 2 for w in windows)
    return _scores_jit(values, lengths, halves, confirmations, int(batch_size))


def indicator_names(
    windows=DEFAULT_WINDOWS, levels=DEFAULT_LEVELS, confirmations=DEFAULT_CONFIRMATIONS
) -> tuple[str, ...]:
    """Names in column order: for each window, each test: f"{test}_w{w}_c{m}_p{λ:g}" for each m then
    λ, then f"{test}_w{w}_argmin_central"."""
    names = []
    for w in windows:
        for test in TEST_NAMES:
            names += [f"{test}_w{w}_c{m}_p{lv:g}" for m in confirmations for lv in levels]
            names.append(f"{test}_w{w}_argmin_central")
    return tuple(names)


class IndicatorData(NamedTuple):
    indicators: jax.Array  # (n, n_indicators) uint8
    names: tuple[str, ...]


def compute_indicators(
    values,
    lengths,
    *,
    windows=DEFAULT_WINDOWS,
    levels=DEFAULT_LEVELS,
    confirmations=DEFAULT_CONFIRMATIONS,
    central_fraction: float = DEFAULT_CENTRAL_FRACTION,
    batch_size: int = 64,
) -> IndicatorData:
    r"""Binary indicators I = 1[s <= λ] of ESANN §2 (the default grid gives 810; see module doc).

    Columns: for each window w, each test in TEST_NAMES: "s_m <= λ" for m in `confirmations`, λ in
    `levels` (m outer), then "|t*/L - 1/2| <= central_fraction / 2". Names from `indicator_names`.

    Returns:
      `IndicatorData(indicators (n, P) uint8, names)`, P = n_windows * 3 * (n_conf * n_levels + 1).
    """
    levels_arr = np.asarray(levels, dtype=float)
    if levels_arr.ndim != 1 or levels_arr.size == 0 or np.any((levels_arr <= 0) | (levels_arr > 1)):
        raise ValueError(f"levels must be a non-empty sequence in (0, 1]; got {levels}")
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError(f"central_fraction must lie in (0, 1]; got {central_fraction=}")
    conf, pos = compute_scores(
        values, lengths, windows=windows, confirmations=confirmations, batch_size=batch_size
    )
    n = conf.shape[0]
    lv = jnp.asarray(levels_arr, conf.dtype)
    below = conf[..., None] <= lv[None, None, None, None, :]  # (n, W, 3, n_conf, n_levels)
    central = jnp.abs(pos - 0.5) <= 0.5 * central_fraction  # (n, W, 3)
    block = jnp.concatenate([below.reshape(*below.shape[:3], -1), central[..., None]], axis=-1)
    indicators = block.reshape(n, -1).astype(jnp.uint8)
    names = indicator_names(tuple(windows), tuple(levels), tuple(confirmations))
    assert indicators.shape[1] == len(names)
    return IndicatorData(indicators, names)


class EsannDataset(NamedTuple):
    indicators: jax.Array  # (n, P) uint8
    names: tuple[str, ...]
    is_anomaly: jax.Array  # (n,) int32 binary target
    labels: jax.Array  # (n,) int32 4-class target
    series: SeriesData


def make_esann_dataset(key: jax.Array, n_series: int, **kwargs) -> EsannDataset:
    """`simulate_series` then `compute_indicators`; kwargs go to whichever accepts them."""
    sim_keys = {"min_length", "max_length", "central_fraction"}
    sim_kw = {k: v for k, v in kwargs.items() if k in sim_keys}
    ind_kw = {k: v for k, v in kwargs.items() if k not in sim_keys - {"central_fraction"}}
    series = simulate_series(key, n_series, **sim_kw)
    data = compute_indicators(series.values, series.lengths, **ind_kw)
    return EsannDataset(data.indicators, data.names, series.is_anomaly, series.labels, series)
