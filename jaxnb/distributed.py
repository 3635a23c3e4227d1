r"""Data-parallel naive Bayes on JAX's distributed engine (``jax.sharding`` + ``jax.shard_map``).

Everything NB learns from rows is a sum over rows, so data parallelism needs one collective:

* **Sufficient statistics.** Every device accumulates the statistics of its block of rows
  (`jaxnb.suffstats.accumulate`, the usual single-device code) and the blocks are combined with
  ``psum`` by the pooled (Chan, Golub & LeVeque 1979) form of `jaxnb.suffstats.merge`::

      N_j = psum(N_j^(d)),   N_ijk = psum(N_ijk^(d)),   W_ij = psum(W_ij^(d)),
      mean_ij = psum(W_ij^(d) mean_ij^(d)) / W_ij,
      m2_ij   = psum(m2_ij^(d) + W_ij^(d) (mean_ij^(d) - mean_ij)^2).

  The pooled form is the exact multi-way merge (no ``E[x^2] - E[x]^2`` cancellation); the model
  equals the single-device one up to round-off (tests: 1e-6 in float32 terms, ~1e-12 in float64).
* **Gradient-based fits whose loss is a sum over rows** (weighted NB, any log-loss): the global
  loss is ``psum`` of the per-device loss, and ``jax.grad`` of that global function differentiates
  through ``shard_map`` (the transpose of replicating the parameters over the devices is a
  ``psum``), so the gradient is all-reduced by JAX itself (`sharded_loss`,
  `sharded_value_and_grad`, `fit_wnb_sharded`).
* **Group-lasso NB** (`jaxnb.methods.group_lasso`) sees the data only through the statistics:
  its negative log-likelihood is a function of ``(counts, weight, mean, m2)``, so it is
  data-parallel trivially — psum the statistics once, then solve on every device
  (`fit_group_lasso_sharded`). No collective runs inside the solver.

Rows are split over a 1-D device mesh (axis ``"data"``). ``n`` must be a multiple of the device
count; `shard_rows` pads with rows of weight 0 (codes 0, values 0, class 0), which contribute
nothing to any weighted sum.

Multi-host use (one process per host, e.g. SLURM / TPU pods / several GPU nodes)::

    import jax, jaxnb.distributed as jd
    jax.distributed.initialize()          # coordinator address, process count and id from the
                                          # environment (or pass them explicitly)
    mesh = jd.make_mesh()                 # all devices of all processes, axis "data"
    # each process reads ONLY its own rows (e.g. rows [pid * m, (pid + 1) * m) of a shared file)
    codes, values, y, w = jd.shard_process_local_rows(codes_local, values_local, y_local,
                                                      mesh=mesh)
    stats = jd.fit_stats_sharded(codes, values, y, w, n_states=..., n_classes=..., mesh=mesh)

`shard_process_local_rows` pads every process to the same local row count (agreed with
``multihost_utils.process_allgather``) and builds global arrays with
``jax.make_array_from_process_local_data``; no process ever holds another process's rows. The fitted
statistics and parameters are replicated on every device (``out_specs=P()``), so every process can
predict. When a host's rows do not fit in memory either, each process streams its part with
`jaxnb.outofcore.fit_stats_out_of_core` and `merge_stats_across_processes` combines the results.
See ``docs/SCALING.md``.

Accelerators: the code is backend-agnostic; install the CUDA wheels with the ``gpu`` extra
(``pip install -e ".[gpu]"``) or ``jax[tpu]``. To exercise several devices on a CPU, start Python
with ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (``make test`` uses 4).
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import optax.tree_utils as otu
from jax import lax
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ._checks import check_array_range, concrete
from ._dtypes import float_dtype
from .methods import group_lasso as gl
from .methods import weighted as wt
from .params import NBParams, fit_mle
from .suffstats import SuffStats, accumulate, pooled_moments

_fit_mle = jax.jit(fit_mle)

__all__ = [
    "DATA_AXIS",
    "make_mesh",
    "row_sharding",
    "pad_rows",
    "shard_rows",
    "shard_process_local_rows",
    "psum_stats",
    "merge_stacked_stats",
    "merge_stats_across_processes",
    "fit_stats_sharded",
    "fit_nb_sharded",
    "sharded_loss",
    "sharded_value_and_grad",
    "WNBParams",
    "WNBInfo",
    "wnb_row_loss",
    "fit_wnb",
    "fit_wnb_sharded",
    "predict_wnb",
    "wnb_log_joint",
    "fit_group_lasso_sharded",
]

#: Name of the mesh axis rows are split over.
DATA_AXIS = "data"


# ---------------------------------------------------------------------------------------- mesh
def make_mesh(n_devices: int | None = None, *, axis_name: str = DATA_AXIS, devices=None) -> Mesh:
    """A 1-D mesh of ``n_devices`` devices (default: all devices of all processes).

    The axis type is ``Auto`` (sharding propagated by the compiler outside `shard_map`), so arrays
    that are not yet sharded are resharded on entry rather than rejected.

    Args:
      n_devices: number of devices (the first ``n_devices`` of ``jax.devices()``); None: all.
      axis_name: mesh axis name used by the collectives (default ``"data"``).
      devices: explicit device list (overrides ``n_devices``).
    """
    if devices is None:
        all_devices = jax.devices()
        if n_devices is None:
            n_devices = len(all_devices)
        if not isinstance(n_devices, (int, np.integer)) or not 1 <= n_devices <= len(all_devices):
            raise ValueError(
                f"n_devices must be an int in [1, {len(all_devices)}] (the number of "
                f"visible devices); got {n_devices=}"
            )
        devices = all_devices[: int(n_devices)]
    devices = list(devices)
    return jax.make_mesh(
        (len(devices),), (axis_name,), axis_types=(AxisType.Auto,), devices=devices
    )


def _axis(mesh: Mesh) -> str:
    if len(mesh.axis_names) != 1:
        raise ValueError(f"expected a 1-D mesh (see make_mesh); got axes {mesh.axis_names}")
    return mesh.axis_names[0]


def row_sharding(mesh: Mesh) -> NamedSharding:
    """Sharding that splits the leading (row) axis over the mesh and replicates the rest."""
    return NamedSharding(mesh, P(_axis(mesh)))


# ----------------------------------------------------------------------------------- padding
def pad_rows(codes, values, y, weight=None, *, multiple: int, n_rows: int | None = None):
    """Pad rows (NumPy) to ``n_rows`` (default: the next multiple of ``multiple``) with weight 0.

    Padded rows have code 0, value 0 and class 0, so every term they add to a weighted sum (counts,
    Gaussian moments, row losses) is multiplied by weight 0.

    Returns:
      (codes, values, y, weight) with the same dtypes and ``weight`` filled with ones if None.
    """
    codes, values, y = np.asarray(codes), np.asarray(values), np.asarray(y)
    n = codes.shape[0]
    weight = (
        np.ones((n,), values.dtype if values.dtype.kind == "f" else np.float32)
        if (weight is None)
        else np.asarray(weight)
    )
    target = n_rows if n_rows is not None else -(-n // multiple) * multiple
    if target < n or target % multiple:
        raise ValueError(f"cannot pad {n} rows to {target} rows in multiples of {multiple}")
    extra = target - n
    if not extra:
        return codes, values, y, weight

    def pad(a):
        return np.concatenate([a, np.zeros((extra,) + a.shape[1:], a.dtype)])

    return pad(codes), pad(values), pad(y), pad(weight)


def _check_rows(codes, values, y, weight, n_states, n_classes, check_values):
    """Shapes always (also of tracers); with ``check_values``, the dtypes of codes and labels
    (static, so tracers too) and, for inputs this process can read (not tracers, not other
    processes' rows), the values by exactly `jaxnb.methods.nb.fit_stats`' rules
    (`_check_stats_inputs`): integer codes below n_states (every negative code = missing),
    integer labels in [0, n_classes), no inf values, finite weights >= 0. Returns the static
    ``n_states`` tuple."""
    from .methods.nb import _check_stats_inputs, _static_n_states

    n_states = _static_n_states(n_states)
    if codes.ndim != 2 or values.ndim != 2 or y.ndim != 1:
        raise ValueError(
            f"codes (n, q), values (n, r) and y (n,) must be 2-D, 2-D and 1-D; got "
            f"shapes {codes.shape}, {values.shape}, {y.shape}"
        )
    n = codes.shape[0]
    if values.shape[0] != n or y.shape[0] != n or (weight is not None and weight.shape != (n,)):
        raise ValueError(
            f"codes, values, y and weight must have the same number of rows; got "
            f"{codes.shape[0]}, {values.shape[0]}, {y.shape[0]}"
            f"{'' if weight is None else f', {weight.shape}'}"
        )
    if codes.shape[1] != len(n_states):
        raise ValueError(
            f"codes has {codes.shape[1]} columns but n_states has {len(n_states)} "
            f"entries; pass one state count per discrete column"
        )
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
        raise ValueError(f"n_classes must be an int >= 2; got {n_classes=}")
    if not check_values:
        return n_states
    # dtypes are static: checked for tracers too (a float label or code is truncated or dropped)
    if codes.size and not jnp.issubdtype(codes.dtype, jnp.integer):
        raise TypeError(f"codes must be integers; got dtype {codes.dtype}")
    if not jnp.issubdtype(y.dtype, jnp.integer):
        raise ValueError(
            f"y must hold class codes in [0, {n_classes}) as integers; got dtype {y.dtype}"
        )
    if not _addressable(codes, values, y, weight):
        return n_states
    y_np = np.asarray(y)
    if n and (y_np.min() < 0 or y_np.max() >= n_classes):
        raise ValueError(
            f"y must hold class codes in [0, {n_classes}); got values in "
            f"[{y_np.min()}, {y_np.max()}]"
        )
    _check_stats_inputs(codes, values, y, weight, n_states, int(n_classes))
    return n_states


def _as_rows(*arrays):
    """NumPy arrays for anything that is not a ``jax.Array`` (lists, scalars...); ``None`` and
    JAX arrays (tracers included) pass through."""
    return tuple(a if a is None or isinstance(a, jax.Array) else np.asarray(a) for a in arrays)


def _addressable(*arrays) -> bool:
    """Every array concrete and readable by this process (tracers are not)."""
    return all(
        not isinstance(a, jax.Array)
        or (not isinstance(a, jax.core.Tracer) and a.is_fully_addressable)
        for a in arrays
    )


def shard_rows(codes, values, y, weight=None, *, mesh: Mesh):
    """Pad rows to a multiple of the device count (weight 0) and place them on the mesh.

    Single-process helper: the caller holds all rows. For several processes use
    `shard_process_local_rows`.

    Returns:
      (codes, values, y, weight) as ``jax.Array``s sharded by rows (`row_sharding`).
    """
    d = mesh.devices.size
    dtype = float_dtype()
    codes = _int32_codes(np.asarray(codes))
    values = np.asarray(values, dtype)
    y = np.asarray(y, np.int32)
    weight = None if weight is None else np.asarray(weight, dtype)
    arrs = pad_rows(codes, values, y, weight, multiple=d)
    sh = row_sharding(mesh)
    return tuple(jax.device_put(a, sh) for a in arrs)


def _int32_codes(codes):
    """int32 codes with every negative (missing) code mapped to -1 first: a large negative int64
    code would otherwise wrap around to a valid state."""
    if codes.dtype.kind in "iu":
        codes = np.where(codes < 0, -1, codes)
    return codes.astype(np.int32)


def shard_process_local_rows(
    codes, values, y, weight=None, *, mesh: Mesh, rows_per_process: int | None = None
):
    """Build row-sharded global arrays from the rows this process holds (multi-host).

    Every process passes its own rows; the global array is their concatenation in process order
    (``jax.make_array_from_process_local_data``). Each process's rows are padded with weight-0 rows
    to ``rows_per_process`` (default: the largest local row count over processes, rounded up to a
    multiple of the local device count; agreeing on it costs one small ``process_allgather``).
    With one process this equals `shard_rows`.

    Returns:
      (codes, values, y, weight), global ``jax.Array``s sharded by rows.
    """
    from jax.experimental import multihost_utils

    local_devices = [dv for dv in mesh.devices.flat if dv.process_index == jax.process_index()]
    ld = max(len(local_devices), 1)
    dtype = float_dtype()
    codes = _int32_codes(np.asarray(codes))
    values = np.asarray(values, dtype)
    y = np.asarray(y, np.int32)
    weight = None if weight is None else np.asarray(weight, dtype)
    if rows_per_process is None:
        n_local = np.asarray([codes.shape[0]], np.int64)
        if jax.process_count() > 1:
            n_local = np.asarray(multihost_utils.process_allgather(n_local))
        rows_per_process = int(-(-int(n_local.max()) // ld) * ld)
    arrs = pad_rows(codes, values, y, weight, multiple=ld, n_rows=rows_per_process)
    sh = row_sharding(mesh)
    n_global = rows_per_process * jax.process_count()
    return tuple(
        jax.make_array_from_process_local_data(sh, a, (n_global,) + a.shape[1:]) for a in arrs
    )


def _check_and_place(codes, values, y, weight, n_states, n_classes, mesh, check_input):
    """Validate the rows (values only where this process can read them: not tracers, not other
    processes' rows) and shard them."""
    codes, values, y, weight = _as_rows(codes, values, y, weight)
    n_states = _check_rows(
        codes,
        values,
        y,
        weight,
        n_states,
        n_classes,
        check_input,
    )
    return n_states, _place(codes, values, y, weight, mesh)


def _place(codes, values, y, weight, mesh):
    """Use already-sharded global arrays as they are; pad and place anything else.

    Under an outer ``jax.jit`` (traced rows) the rows are padded with ``jnp`` (row count and device
    count are static) and handed to the sharded program as they are; ``shard_map`` splits them."""
    d = mesh.devices.size
    arrays = (codes, values, y, weight)
    if not concrete(*arrays):
        return _pad_traced(codes, values, y, weight, d)
    if all(isinstance(a, jax.Array) for a in arrays) and (codes.shape[0] % d == 0):
        return arrays
    if not _addressable(*arrays):
        raise ValueError(
            "global (multi-process) arrays must have a row count divisible by the "
            "device count and a weight array; build them with "
            "shard_process_local_rows"
        )
    return shard_rows(codes, values, y, weight, mesh=mesh)


def _pad_traced(codes, values, y, weight, d):
    """`shard_rows`' casts and weight-0 padding in ``jnp`` (for traced rows, inside ``jit``)."""
    dtype = float_dtype()
    codes = jnp.asarray(codes)
    if jnp.issubdtype(codes.dtype, jnp.integer):
        codes = jnp.where(codes < 0, -1, codes)
    codes = codes.astype(jnp.int32)
    values = jnp.asarray(values, dtype)
    y = jnp.asarray(y).astype(jnp.int32)
    n = codes.shape[0]
    weight = jnp.ones((n,), dtype) if weight is None else jnp.asarray(weight, dtype)
    extra = -n % d
    if extra:
        pad = lambda a: jnp.concatenate([a, jnp.zeros((extra,) + a.shape[1:], a.dtype)])
        codes, values, y, weight = pad(codes), pad(values), pad(y), pad(weight)
    return codes, values, y, weight


def _check_smoothing(alpha, var_smoothing):
    """Concrete Lidstone pseudo-count and variance floor: finite and >= 0 (tracers skipped).
    `jaxnb.params.fit_mle` checks them too, but inside a jitted program it only sees tracers."""
    if concrete(alpha):
        check_array_range("alpha", alpha, 0.0, fix="it is a Lidstone pseudo-count")
    if concrete(var_smoothing):
        check_array_range("var_smoothing", var_smoothing, 0.0, fix="it is a variance floor")


def _check_wnb_args(alpha, var_smoothing, l2, max_steps, tol):
    """Eager checks of the weighted-NB hyper-parameters (tracers skipped)."""
    _check_smoothing(alpha, var_smoothing)
    if concrete(l2):
        check_array_range(
            "l2", l2, 0.0, fix="it is a ridge strength (> 0 keeps the optimum unique)"
        )
    if concrete(tol):
        check_array_range("tol", tol, 0.0, fix="it is a tolerance on the gradient norm")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) or max_steps < 0:
        raise ValueError(f"max_steps must be an int >= 0; got max_steps={max_steps!r}")


# -------------------------------------------------------------------------- sufficient stats
def psum_stats(stats: SuffStats, axis_name: str = DATA_AXIS) -> SuffStats:
    r"""All-reduce per-device statistics inside ``shard_map``: the pooled multi-way merge.

    Counts and class weights are summed; the Gaussian moments are merged by the pooled form of
    Chan et al. (mean = Σ_d W_d mean_d / W; m2 = Σ_d [m2_d + W_d (mean_d − mean)²]), which is
    `jaxnb.suffstats.merge` applied to all devices at once. The means are pooled as offsets from
    a reference every device agrees on (the largest device mean, one ``pmax``), so a constant
    column merges to exactly its value with m2 exactly 0 (the plain Σ W_d mean_d / W rounded:
    float32, 4 devices, a column of 1e6 + 0.1 got m2 1.3 and looked varying).
    """
    psum = partial(lax.psum, axis_name=axis_name)
    w = psum(stats.weight)
    safe = jnp.where(w > 0, w, 1.0)
    has = stats.weight > 0
    ref = lax.pmax(jnp.where(has, stats.mean, -jnp.inf), axis_name=axis_name)
    ref = jnp.where(w > 0, ref, 0.0)
    d = jnp.where(has, stats.mean - ref, 0.0)
    mean = jnp.where(w > 0, ref + psum(stats.weight * d) / safe, 0.0)
    m2 = psum(stats.m2 + stats.weight * (stats.mean - mean) ** 2)
    return SuffStats(psum(stats.class_weight), psum(stats.counts), w, mean, m2, stats.n_states)


def merge_stacked_stats(stats: SuffStats) -> SuffStats:
    """Merge statistics stacked on a leading axis (e.g. per process or per chunk) into one.

    The same pooled multi-way merge as `psum_stats`, over axis 0 instead of a mesh axis: the
    parts are pooled as `jaxnb.suffstats.pooled_moments` pools classes (exact for a constant
    column).
    """
    w, mean, m2 = pooled_moments(
        *(jnp.moveaxis(a, 0, -2) for a in (stats.weight, stats.mean, stats.m2))
    )
    return SuffStats(stats.class_weight.sum(0), stats.counts.sum(0), w, mean, m2, stats.n_states)


def merge_stats_across_processes(stats: SuffStats) -> SuffStats:
    """Merge the statistics each process computed on its own rows (multi-host, host memory).

    For rows that never become one global array, e.g. every process streams its own part of a file
    with `jaxnb.outofcore.fit_stats_out_of_core`: the (tiny) statistics are all-gathered with
    ``multihost_utils.process_allgather`` and merged (`merge_stacked_stats`). Every process gets
    the same result. With one process this returns ``stats`` unchanged.
    """
    if jax.process_count() == 1:
        return stats
    from jax.experimental import multihost_utils

    leaves = (stats.class_weight, stats.counts, stats.weight, stats.mean, stats.m2)
    gathered = [jnp.asarray(multihost_utils.process_allgather(np.asarray(a))) for a in leaves]
    return merge_stacked_stats(SuffStats(*gathered, stats.n_states))


@partial(jax.jit, static_argnames=("n_states", "n_classes", "mesh", "block_size"))
def _fit_stats_sharded(codes, values, y, weight, *, n_states, n_classes, mesh, block_size):
    axis = _axis(mesh)

    def local(codes, values, y, weight):
        Y = jax.nn.one_hot(y, n_classes, dtype=values.dtype)
        stats = accumulate(codes, values, Y, weight, n_states=n_states, block_size=block_size)
        return psum_stats(stats, axis)

    rows = P(axis)
    # check_vma=False: accumulate's blocked loop starts from a constant (device-invariant) carry
    # that its body makes per-device, which the varying-axis type check rejects. Nothing here is
    # differentiated and every output is a psum, so the result is replicated either way.
    return jax.shard_map(
        local, mesh=mesh, in_specs=(rows, rows, rows, rows), out_specs=P(), check_vma=False
    )(codes, values, y, weight)


def fit_stats_sharded(
    codes,
    values,
    y,
    weight=None,
    *,
    n_states,
    n_classes,
    mesh: Mesh,
    block_size: int | None = None,
    check_input: bool = True,
) -> SuffStats:
    r"""Sufficient statistics of rows split over the devices of ``mesh`` (psum of per-device stats).

    Equals `jaxnb.methods.nb.fit_stats` on the same rows up to round-off. Rows are padded to a
    multiple of the device count with weight 0 (`shard_rows`) unless they already are global
    ``jax.Array``s of such a length (e.g. from `shard_process_local_rows`).

    Args:
      codes: (n, q) int discrete codes (-1 = missing); values: (n, r) float (NaN = missing);
        y: (n,) int class codes; weight: optional (n,) sample weights.
      n_states, n_classes: static shape information.
      mesh: a 1-D mesh (`make_mesh`).
      block_size: rows per scanned block on each device (see `jaxnb.suffstats.accumulate`).
      check_input: validate code / label ranges and weights in NumPy first (only for arrays this
        process can read; shapes are always checked).

    Returns:
      `SuffStats`, replicated on every device of the mesh.
    """
    n_states, (codes, values, y, weight) = _check_and_place(
        codes, values, y, weight, n_states, n_classes, mesh, check_input
    )
    return _fit_stats_sharded(
        codes,
        values,
        y,
        weight,
        n_states=n_states,
        n_classes=int(n_classes),
        mesh=mesh,
        block_size=block_size,
    )


def fit_nb_sharded(
    codes,
    values,
    y,
    weight=None,
    *,
    n_states,
    n_classes,
    mesh: Mesh,
    alpha=1.0,
    var_smoothing=1e-9,
    block_size=None,
    check_input=True,
) -> NBParams:
    """Naive Bayes Ω⁽¹⁾ (`jaxnb.params.fit_mle`) from `fit_stats_sharded`; replicated result.

    ``alpha`` (Lidstone pseudo-count) and ``var_smoothing`` (variance floor) must be finite and
    >= 0 (checked when concrete)."""
    _check_smoothing(alpha, var_smoothing)
    stats = fit_stats_sharded(
        codes,
        values,
        y,
        weight,
        n_states=n_states,
        n_classes=n_classes,
        mesh=mesh,
        block_size=block_size,
        check_input=check_input,
    )
    return _fit_mle(stats, alpha, var_smoothing)


# ---------------------------------------------------------------------- losses over rows
def sharded_loss(loss_fn, mesh: Mesh):
    r"""Global loss ``params, data -> Σ_d loss_fn(params, data_d)`` for a loss that sums over rows.

    Args:
      loss_fn: ``(params, data) -> scalar`` (or a pytree of arrays), a sum (not a mean) over the
        rows of ``data`` (a pytree of arrays with a leading row axis; padded rows must carry
        weight 0 inside ``loss_fn``).
      mesh: 1-D mesh; ``data`` leaves are split by rows, ``params`` are replicated.

    Returns:
      A function of ``(params, data)`` that can be jitted and differentiated: ``jax.grad`` through
      ``shard_map`` all-reduces the gradient (the transpose of replicating ``params`` is a psum).
    """
    axis = _axis(mesh)

    def total(params, data):
        specs = jax.tree.map(lambda _: P(axis), data)
        # check_vma=False: core losses may run loops (lax.scan over row blocks) whose initial carry
        # is a constant, which the varying-axis type check rejects. The loss is a psum, so value
        # and gradient are the same either way (tests compare both with a single device).
        fn = jax.shard_map(
            lambda p, d: lax.psum(loss_fn(p, d), axis),
            mesh=mesh,
            in_specs=(P(), specs),
            out_specs=P(),
            check_vma=False,
        )
        return fn(params, data)

    return total


def sharded_value_and_grad(loss_fn, params, data, mesh: Mesh):
    """``(loss, grad)`` of the row-sum loss over rows split across ``mesh`` (see `sharded_loss`).

    ``data`` leaves must have a row count divisible by the device count (pad with weight-0 rows,
    `pad_rows`). Jit the caller (or this function) to avoid retracing.
    """
    return jax.value_and_grad(sharded_loss(loss_fn, mesh))(params, data)


# --------------------------------------------------------------------------- weighted NB
class WNBParams(eqx.Module):
    r"""Weighted NB with one weight per predictor and class and a free bias (online WNB form).

    ``log_joint[r, j] = bias_j + Σ_i weights[i, j] (log f(x_ri | Y = j; Ω⁽¹⁾_i) + log_scale_i)``
    over the observed values (Salperwyck, Lemaire & Hue 2015, eq. 2, on the terms of the
    standardized values x_i / s_i; docs/CONVENTIONS.md, combination rules), each term floored at
    `jaxnb.methods.weighted.LOG_FLOOR` (`jaxnb.methods.weighted.model_terms`). Without
    ``log_scale`` (None), the paper's raw terms.

    Attributes:
      nb: the NB parameters Ω⁽¹⁾ whose log-contributions are combined (held fixed).
      weights: (p, c) combination weights, predictor order [discrete, continuous].
      bias: (c,) class bias (starts at the log prior).
      log_scale: (p,) log s_i, the pooled standard deviation of each continuous predictor (0 for
        a discrete one or one without spread), or None.
      keep: (p,) bool, False for a continuous predictor without spread (its term is 0: it has no
        standardized density), or None (every predictor has a term).
    """

    nb: NBParams
    weights: jax.Array
    bias: jax.Array
    log_scale: jax.Array | None = None
    keep: jax.Array | None = None


class WNBInfo(NamedTuple):
    """Solver record of `fit_wnb` / `fit_wnb_sharded`.

    Attributes:
      num_steps: optimizer steps taken; objective: final objective value; grad_norm: norm of the
      objective's gradient at the returned weights; converged: ``grad_norm <= tol``.
      stalled: the default L-BFGS stopped short of ``tol`` and ``max_steps`` at the objective's
        rounding floor: 30 steps in a row lowered it by at most 4 ulps of its value without a
        new smallest gradient norm (float32 cannot reach the default tol 1e-8: on 20,000 rows
        it ran all 500 steps at gradient norm ~2e-7, posteriors within 2.9e-6 of float64's
        from step 80 on). Always False for another optimizer.
    """

    num_steps: jax.Array
    objective: jax.Array
    grad_norm: jax.Array
    converged: jax.Array
    stalled: jax.Array


def wnb_log_joint(nb: NBParams, weights, bias, codes, values, log_scale=None, keep=None):
    """(n, c) scores ``bias_j + Σ_i weights[i, j] max(log f(x_ri | j) + log_scale_i, LOG_FLOOR)``
    over each row's observed values and kept predictors (`WNBParams`;
    `jaxnb.methods.weighted.floored_scores`); ``log_scale=None``: the raw terms, floored.

    The floor (log of float32's smallest normal, -87.3, in both precisions) makes float32 and
    float64 fit the same model: on UCI Flags a class whose column barely varies (variance at the
    1e-9 floor) gave Gaussian terms near -4e10, and unfloored the objective reached 3e13 and
    neither precision converged (2000 L-BFGS steps; posteriors 1.0 apart, 188 of 194 predictions
    differing between float32 and float64)."""
    return wt.floored_scores(nb, codes, values, weights, bias, log_scale, keep)


def _wnb_block_loss(nb, weights, bias, data, log_scale, keep):
    s = wnb_log_joint(nb, weights, bias, data["codes"], data["values"], log_scale, keep)
    lp = jax.nn.log_softmax(s, axis=-1)
    true = jnp.take_along_axis(lp, data["y"][:, None], axis=-1)[:, 0]
    # rows of weight 0 (padding) add 0 even where their log-probability is -inf
    return -jnp.sum(jnp.where(data["weight"] > 0, data["weight"] * true, 0.0))


def wnb_row_loss(
    nb: NBParams, weights, bias, data, *, block_rows: int = 2048, log_scale=None, keep=None
):
    r"""Σ_r w_r (logsumexp_j s_rj − s_{r,y_r}), s = bias + Σ_i W[i, j] L[r, i, j]: a sum over rows.

    ``data`` is a dict with ``codes``, ``values``, ``y`` and ``weight`` (rows of weight 0, e.g.
    padding, contribute 0). Convex in (weights, bias): the scores are linear in both. With
    ``log_scale`` (p,), L holds the standardized terms log f + log s_i; every term is floored
    at `jaxnb.methods.weighted.LOG_FLOOR`, and 0 for a predictor whose ``keep`` is False
    (`wnb_log_joint`).

    Rows are summed ``block_rows`` at a time (``lax.map`` over blocks, scalar per block), so
    reverse-mode differentiation keeps only per-block residuals: memory and time stay linear in n.
    """
    n = data["y"].shape[0]
    if n <= block_rows:
        return _wnb_block_loss(nb, weights, bias, data, log_scale, keep)
    nblk = n // block_rows
    head = jax.tree.map(
        lambda a: a[: nblk * block_rows].reshape((nblk, block_rows) + a.shape[1:]), data
    )
    total = jnp.sum(
        lax.map(lambda blk: _wnb_block_loss(nb, weights, bias, blk, log_scale, keep), head)
    )
    if n - nblk * block_rows:
        tail = jax.tree.map(lambda a: a[nblk * block_rows :], data)
        total = total + _wnb_block_loss(nb, weights, bias, tail, log_scale, keep)
    return total


class _Theta(eqx.Module):
    weights: jax.Array
    bias: jax.Array


# the default L-BFGS of `fit_wnb` stalls after `_STALL_STEPS` steps in a row that each lowered the
# objective by at most `_STALL_ULPS` ulps of its value without a new smallest gradient norm: the
# objective's rounding floor, which sits above the default tol 1e-8 in float32. (20,000 rows, 20
# predictors, 3 classes: the gradient norm went 1.1e-6, 4.8e-7, 4.8e-7, 2.0e-7 at steps 80, 120,
# 200, 300 and 500, the posteriors 2.9e-6 to 2.5e-6 from float64's from step 80 on. The objective
# alone stalled at step 33, 1e-4 away; the line search never ran out of decreases.)
_STALL_ULPS = 4
_STALL_STEPS = 30


def _solve(objective, theta0, *, max_steps, tol, optimizer):
    """Minimize ``objective(theta)`` with an optax transform in a ``lax.while_loop``.

    The default optimizer is optax's L-BFGS with its zoom line search (full-batch, needs the
    objective itself; ``optax.value_and_grad_from_state`` reuses the line search's last value);
    it also stops when stalled at the rounding floor (`_STALL_STEPS`). Any other optax transform
    (``optax.sgd(lr)``, ``optax.adam(lr)``) is a plain gradient step.
    """
    cached = optimizer is None
    opt = optax.with_extra_args_support(optax.lbfgs() if cached else optimizer)
    state0 = opt.init(theta0)
    vg_cached = optax.value_and_grad_from_state(objective)
    vg_plain = jax.value_and_grad(objective)

    def value_grad(theta, state):
        return vg_cached(theta, state=state) if cached else vg_plain(theta)

    # carry: theta, optimizer state, steps, value and gradient AT theta (so the stopping test and
    # the reported residual certify the returned point), smallest gradient norm so far, stalled
    # steps in a row.
    def cond(carry):
        _, _, k, _, grad, _, stall = carry
        return (k < max_steps) & (otu.tree_norm(grad) > tol) & (stall < _STALL_STEPS)

    def body(carry):
        theta, state, k, value, grad, best, stall = carry
        updates, state = opt.update(grad, state, theta, value=value, grad=grad, value_fn=objective)
        theta = optax.apply_updates(theta, updates)
        new_value, grad = value_grad(theta, state)
        gnorm = otu.tree_norm(grad)
        ulps = _STALL_ULPS * jnp.finfo(value.dtype).eps * jnp.abs(value)
        failed = cached & (value - new_value <= ulps) & (gnorm >= best)
        stall = jnp.where(failed, stall + 1, 0)
        return theta, state, k + 1, new_value, grad, jnp.minimum(best, gnorm), stall

    v0, g0 = vg_plain(theta0)
    carry = (theta0, state0, jnp.int32(0), v0, g0, otu.tree_norm(g0), jnp.int32(0))
    theta, _, k, value, grad, _, stall = lax.while_loop(cond, body, carry)
    gnorm = otu.tree_norm(grad)
    return theta, WNBInfo(k, value, gnorm, gnorm <= tol, (stall >= _STALL_STEPS) & (gnorm > tol))


def _wnb_objective(row_total_fn, nb, total_weight, l2, n_pred):
    c = nb.n_classes

    def objective(theta):
        data_term = row_total_fn(nb, theta.weights, theta.bias) / total_weight
        reg = (
            0.5
            * l2
            * (jnp.sum((theta.weights - 1.0) ** 2) + jnp.sum((theta.bias - nb.log_prior) ** 2))
        )
        return data_term + reg

    theta0 = _Theta(jnp.ones((n_pred, c), nb.log_prior.dtype), nb.log_prior)
    return objective, theta0


def fit_wnb(
    codes,
    values,
    y,
    weight=None,
    *,
    n_states,
    n_classes,
    alpha=1.0,
    var_smoothing=1e-9,
    l2=1e-2,
    max_steps: int = 500,
    tol=1e-8,
    optimizer=None,
    standardize: bool = True,
):
    r"""Single-device weighted NB (the reference for `fit_wnb_sharded`); same objective and solver.

    Minimizes ``(1/N) Σ_r w_r CE_r(W, b) + (l2/2) (||W − 1||² + ||b − log π||²)`` over the
    per-predictor-per-class weights W (p, c) and bias b (c,), with Ω⁽¹⁾ fixed (fitted first,
    Lidstone ``alpha``). The ridge toward NB (W = 1, b = log π) makes the problem strongly convex,
    so the optimum is unique and every data layout converges to it; ``l2 → ∞`` gives NB itself.
    Departure from Salperwyck et al.: full-batch L-BFGS instead of online stochastic gradient.

    ``standardize`` (default): a Gaussian term is the log density of the standardized value,
    log f(x_i | j) + log s_i with s_i the predictor's pooled standard deviation (``log_scale`` of
    the returned `WNBParams`), so the optimum and its probabilities do not depend on the columns'
    units. On the raw terms (False, the paper's) rescaling a column by a shifts class j's score
    by −w_ij log a; the bias could absorb that but the ridge pulls it toward log π, so the
    optimum moves with the units (600 rows, 3 Gaussian columns, l2 = 1e-2: probabilities 0.06
    apart at x 1e-6 against x 1, L-BFGS 373 steps instead of 74).

    Returns:
      (`WNBParams`, `WNBInfo`).
    """
    from .methods.nb import fit_stats

    _check_wnb_args(alpha, var_smoothing, l2, max_steps, tol)
    dtype = float_dtype()
    n_states = _check_rows(
        np.asarray(codes),
        np.asarray(values),
        np.asarray(y),
        None if weight is None else np.asarray(weight),
        n_states,
        n_classes,
        True,
    )
    data = dict(
        codes=jnp.asarray(codes, jnp.int32),
        values=jnp.asarray(values, dtype),
        y=jnp.asarray(y, jnp.int32),
        weight=jnp.ones((len(y),), dtype) if weight is None else jnp.asarray(weight, dtype),
    )
    stats = fit_stats(
        data["codes"],
        data["values"],
        data["y"],
        data["weight"],
        n_states=n_states,
        n_classes=int(n_classes),
    )
    return _fit_wnb_core(
        stats, data, alpha, var_smoothing, l2, tol, None, max_steps, optimizer, bool(standardize)
    )


@partial(jax.jit, static_argnames=("mesh", "max_steps", "optimizer", "standardize"))
def _fit_wnb_core(
    stats, data, alpha, var_smoothing, l2, tol, mesh, max_steps, optimizer, standardize
):
    nb = fit_mle(stats, alpha, var_smoothing)
    # zero probabilities (alpha = 0: unseen cells; classes of zero weight): a log 0 = -inf term
    # made the gradient 0 * (-inf) = NaN, so the solver stopped at step 0. The terms are floored
    # at LOG_FLOOR (`wnb_log_joint`), and so is the log prior the bias starts from and is pulled
    # toward (it was log(tiny) of the dtype, -87 / -708, so the precisions' optima differed)
    nb = NBParams(wt.floor_log(nb.log_prior), nb.cpt, nb.mean, nb.std, nb.n_states)
    # a constant column has no standardized density: term 0 (as `WeightedNB`), not a
    # class-independent value that per-class weights would turn into a second bias
    off, keep = wt.unit_offsets(stats) if standardize else (None, None)
    if mesh is None:
        rows = lambda nb, W, b: wnb_row_loss(nb, W, b, data, log_scale=off, keep=keep)
    else:
        total = sharded_loss(
            lambda p, d: wnb_row_loss(p[0], p[1], p[2], d, log_scale=off, keep=keep), mesh
        )
        rows = lambda nb, W, b: total((nb, W, b), data)
    n_pred = len(stats.n_states) + stats.mean.shape[-1]
    total_weight = jnp.sum(stats.class_weight)
    objective, theta0 = _wnb_objective(rows, nb, total_weight, l2, n_pred)
    theta, info = _solve(objective, theta0, max_steps=max_steps, tol=tol, optimizer=optimizer)
    return WNBParams(nb, theta.weights, theta.bias, off, keep), info


def fit_wnb_sharded(
    codes,
    values,
    y,
    weight=None,
    *,
    n_states,
    n_classes,
    mesh: Mesh,
    alpha=1.0,
    var_smoothing=1e-9,
    l2=1e-2,
    max_steps: int = 500,
    tol=1e-8,
    optimizer=None,
    standardize: bool = True,
    check_input: bool = True,
):
    r"""Weighted NB (per predictor and class) by full-batch gradient descent over sharded rows.

    Same objective as `fit_wnb`. Ω⁽¹⁾ comes from `fit_stats_sharded` (one psum); every optimizer
    step evaluates the row-sum cross-entropy on each device's rows and all-reduces value and
    gradient through `sharded_loss`. Parameters and optimizer state are replicated.

    Args:
      codes, values, y, weight, n_states, n_classes, mesh: as in `fit_stats_sharded`.
      alpha, var_smoothing: Lidstone pseudo-count and variance floor of Ω⁽¹⁾.
      l2: ridge toward NB (> 0 keeps the optimum unique).
      max_steps, tol: step cap and tolerance on the gradient norm of the objective.
      optimizer: optax transform (default ``optax.lbfgs()`` with line search); hashable, static.
      standardize: weigh the terms of the standardized values (as in `fit_wnb`).

    Returns:
      (`WNBParams`, `WNBInfo`), replicated.
    """
    _check_wnb_args(alpha, var_smoothing, l2, max_steps, tol)
    n_states, (codes, values, y, weight) = _check_and_place(
        codes, values, y, weight, n_states, n_classes, mesh, check_input
    )
    stats = _fit_stats_sharded(
        codes,
        values,
        y,
        weight,
        n_states=n_states,
        n_classes=int(n_classes),
        mesh=mesh,
        block_size=None,
    )
    data = dict(codes=codes, values=values, y=y, weight=weight)
    return _fit_wnb_core(
        stats, data, alpha, var_smoothing, l2, tol, mesh, max_steps, optimizer, bool(standardize)
    )


def predict_wnb(params: WNBParams, codes, values):
    """Log posterior (n, c) of a weighted NB model (`wnb_log_joint`)."""
    s = wnb_log_joint(
        params.nb, params.weights, params.bias, codes, values, params.log_scale, params.keep
    )
    return jax.nn.log_softmax(s, axis=-1)


# --------------------------------------------------------------------------- group lasso
def fit_group_lasso_sharded(
    codes,
    values,
    y,
    weight=None,
    *,
    n_states,
    n_classes,
    mesh: Mesh,
    penalties,
    alpha=0.0,
    adaptive: bool = False,
    group_weight=None,
    min_std=None,
    check_input: bool = True,
    **path_kwargs,
) -> Any:
    r"""Group-lasso NB path over rows split across devices: psum the statistics, then solve.

    The group-lasso objective (`jaxnb.methods.group_lasso`) depends on the rows only through
    ``(counts, class_weight, weight, mean, m2)``: its NLL is
    ``-Σ A_ijk log θ_ikj + Σ_ij [N_ij log σ_ij + (m2_ij + N_ij (x̄_ij − μ_ij)²) / (2σ_ij²)]``. Hence
    the only data-parallel step is `fit_stats_sharded`; the solver path then runs on the (tiny,
    replicated) statistics with no further communication, and equals the single-device path.

    Args:
      penalties: (s,) decreasing penalty grid (see `jaxnb.methods.group_lasso.penalty_grid`).
      alpha, adaptive, group_weight, min_std: `make_group_lasso_problem` options.
      **path_kwargs: `group_lasso_path` options (``continuous_scale``, ``max_steps``, ``tol``...).

    Returns:
      (stats, problem, path): the psum'ed `SuffStats`, the `GroupLassoProblem` and the
      `GroupLassoPath`.
    """
    stats = fit_stats_sharded(
        codes,
        values,
        y,
        weight,
        n_states=n_states,
        n_classes=n_classes,
        mesh=mesh,
        check_input=check_input,
    )
    problem = gl.make_group_lasso_problem(
        stats, alpha=alpha, adaptive=adaptive, group_weight=group_weight, min_std=min_std
    )
    path = _group_lasso_path(problem, jnp.asarray(penalties), **path_kwargs)
    return stats, problem, path


_group_lasso_path = jax.jit(
    gl.group_lasso_path,
    static_argnames=("max_steps", "step_growth", "solver", "max_exact_steps"),
)
