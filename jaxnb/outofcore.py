r"""Out-of-core naive Bayes: fit and predict from data larger than memory, chunk by chunk.

NB needs from the rows only their sufficient statistics, and statistics merge exactly
(`jaxnb.suffstats.merge`, the pairwise form of Chan, Golub & LeVeque 1979). So a table that does
not fit in memory is fitted in one pass over fixed-size chunks of rows:

    stats = empty;  for every chunk k:  stats = merge(stats, fit_stats(chunk k))

and the result equals the in-memory fit up to round-off. Memory is bounded by a few chunks.

Sources (``source`` for the table, ``y_source`` for the labels, ``sample_weight`` for weights):

* a path to a ``.npy`` file (C order): read by positioned reads (``os.preadv``) into fresh buffers,
  so the process never maps the whole file (resident memory stays at a few chunks even for files
  larger than RAM);
* a NumPy array or ``np.memmap`` (``np.load(path, mmap_mode="r")``): chunks are copied out of the
  mapping and the consumed pages of read-only memmaps are released with
  ``madvise(MADV_DONTNEED)`` (they stay in the page cache, not in this process's RSS);
* any iterable of 2-D arrays (with ``y_source`` an iterable of 1-D arrays), or of ``(X, y)`` /
  ``(X, y, w)`` tuples when ``y_source`` is None; chunks of any length are re-cut to
  ``chunk_rows``.

The running total is kept on the host in float64 (merged with `jaxnb.suffstats.merge` under
``jax.enable_x64``), so counts stay exact far beyond float32's 2^24 even when the chunks are
computed in float32; the returned statistics are in JAX's default float dtype (in float32, counts
above 2^24 are then rounded to about 6e-8 relative).

Pipeline (double-buffered): a background thread reads (and, for labels that are not codes
``0..c-1``, maps) chunks into a bounded queue; the main thread issues ``jax.device_put`` of chunk
k + 1 before dispatching the (asynchronous, jitted) statistics of chunk k, and waits for chunk k − 1
only, so reading, host-to-device transfer and compute overlap while at most ``prefetch + 3``
chunks exist. The last chunk is padded to ``chunk_rows`` with rows of weight 0, so one compiled
function serves every chunk.

Splitting a chunk into discrete codes and continuous values, and the range checks of the eager
validation (codes in ``[0, n_states)``, whole numbers, missing values, labels, weights), run on the
device inside the same jitted step; violations come back as a status word and raise a ValueError
naming the rows (STYLE.md: "return a status in the info record that the estimator checks").

Progress goes to stderr (rows, rows/s, GB/s) at most every ``progress_interval`` seconds.
"""

from __future__ import annotations

import collections
import mmap
import os
import queue
import sys
import threading
import time
import warnings
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._dtypes import float_dtype
from ._matmul import einsum
from .data import _frame_names, _is_pandas_df, _user_stacklevel, check_feature_names
from .estimators import (
    NaiveBayes,
    _decision_scores,
    _reservoir,
    undefined_score_rows,
    undefined_scores_error,
)
from .suffstats import (
    SuffStats,
    _block_sums,
    _far_classes,
    _onehot_layout,
    _recentred,
    _rows_dot,
    empty_stats,
    merge,
    stats_from_sums,
)

__all__ = [
    "fit_stats_out_of_core",
    "fit_nb_out_of_core",
    "naive_bayes_from_stats",
    "predict_out_of_core",
    "iter_npy_chunks",
]

_TARGET_CHUNK_BYTES = 32 << 20
_ALIGN = 4096  # direct I/O: file offsets, lengths and buffer addresses in multiples of this
_FLAG_CODE, _FLAG_MISSING, _FLAG_INF, _FLAG_LABEL, _FLAG_WEIGHT = 1, 2, 4, 8, 16
_FLAG_TEXT = {
    _FLAG_CODE: "a discrete column holds a code outside [0, n_states) or a fractional value "
    "(codes must be whole numbers; -1 marks missing with missing='ignore')",
    _FLAG_MISSING: "a missing value (NaN, or code -1) appears but missing='error'; pass "
    "missing='ignore' to drop those terms",
    _FLAG_INF: "a continuous column contains inf",
    _FLAG_LABEL: "a label is not one of classes",
    _FLAG_WEIGHT: "sample_weight must be finite and non-negative",
}


# ================================================================================ sources
class _NpyFile:
    """Row ranges of a C-order ``.npy`` file read with ``os.preadv`` (no memory mapping)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        with open(self.path, "rb") as f:
            version = np.lib.format.read_magic(f)
            read_header = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            shape, fortran, dtype = read_header(f)
            self.offset = f.tell()
        if fortran and len(shape) > 1:
            raise ValueError(
                f"{self.path}: Fortran-ordered arrays cannot be read by rows; save "
                f"the array in C order (np.ascontiguousarray)"
            )
        if dtype.hasobject:
            raise ValueError(f"{self.path}: object arrays cannot be read out of core")
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.row_bytes = int(np.prod(self.shape[1:], dtype=np.int64)) * self.dtype.itemsize
        self.fd = None  # opened on the first read, by the reader thread (nothing to leak before)
        self._direct_fd = None  # O_DIRECT descriptor (None: not tried yet, False: unavailable)
        self._slack: dict[int, np.ndarray] = {}  # address of an `alloc` array -> its base buffer

    def read_into(self, start, stop, out):
        if self.fd is None:
            self.fd = os.open(self.path, os.O_RDONLY)
            if hasattr(os, "posix_fadvise"):
                os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
        nbytes = (stop - start) * self.row_bytes
        pos = self.offset + start * self.row_bytes
        if nbytes and self._read_direct(pos, nbytes, out):
            return
        view = memoryview(out.reshape(-1).view(np.uint8))[:nbytes]
        done = 0
        while done < len(view):
            got = os.preadv(self.fd, [view[done:]], pos + done)
            if got <= 0:
                raise OSError(f"{self.path}: unexpected end of file at byte {pos + done}")
            done += got
        if hasattr(os, "posix_fadvise") and done:
            # ask the kernel to fetch the next range now, so the disk keeps streaming while this
            # chunk waits in the queue or is computed on (sequential readahead alone stops at its
            # window when the reader thread is blocked on a full queue)
            os.posix_fadvise(self.fd, pos + done, done, os.POSIX_FADV_WILLNEED)

    # ------------------------------------------------------------------ direct I/O (Linux)
    def alloc(self, shape, dtype):
        """An array for `read_into` that allows direct reads: it starts at an address congruent
        to the file's data offset modulo `_ALIGN` and has `_ALIGN` bytes of slack on both sides
        (a direct read covers whole aligned blocks, so it may spill a little before and after).
        Whole-chunk reads whose byte length is a multiple of `_ALIGN` then need no copy at all.
        """
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        raw = np.empty(nbytes + 3 * _ALIGN, np.uint8)
        lead = (self.offset - raw.ctypes.data) % _ALIGN + _ALIGN
        out = raw[lead : lead + nbytes].view(dtype).reshape(shape)
        self._slack[out.ctypes.data] = raw  # the base buffer and its slack belong to this reader
        return out

    def _read_direct(self, pos, nbytes, out):
        """Read [pos, pos + nbytes) into ``out`` with O_DIRECT (DMA into the buffer: no page cache,
        no copy, a small fraction of the CPU a buffered read costs). False when not possible (not
        an `alloc` buffer, no O_DIRECT, a file system that refuses it): the caller reads buffered.
        """
        raw = self._slack.get(out.ctypes.data)
        if raw is None or self._direct_fd is False:
            return False
        if self._direct_fd is None:
            try:
                self._direct_fd = os.open(self.path, os.O_RDONLY | os.O_DIRECT)
            except (AttributeError, OSError):
                self._direct_fd = False
                return False
        lo = pos - pos % _ALIGN
        hi = -(-(pos + nbytes) // _ALIGN) * _ALIGN
        first = out.ctypes.data - (pos - lo) - raw.ctypes.data  # index of byte `lo` in raw
        if first < 0 or first + (hi - lo) > raw.size or (raw.ctypes.data + first) % _ALIGN:
            return False
        view = memoryview(raw)[first : first + (hi - lo)]
        done = 0
        try:
            while lo + done < pos + nbytes:
                got = os.preadv(self._direct_fd, [view[done:]], lo + done)
                if got <= 0:
                    raise OSError(f"{self.path}: unexpected end of file at byte {lo + done}")
                done += got
                if done % _ALIGN and lo + done < pos + nbytes:
                    raise OSError(f"{self.path}: short direct read at byte {lo + done}")
        except OSError as err:
            if done == 0 and err.errno is not None:  # e.g. EINVAL: no direct I/O here
                os.close(self._direct_fd)
                self._direct_fd = False
                return False
            raise
        return True

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self._direct_fd not in (None, False):
            os.close(self._direct_fd)
        self._direct_fd = None


class _ArrayRows:
    """Row ranges of an in-memory array or memmap (read-only memmap pages released after use)."""

    def __init__(self, arr):
        self.arr = arr
        self.shape, self.dtype = arr.shape, arr.dtype
        base = getattr(arr, "_mmap", None)
        self._mm = (
            base
            if (
                isinstance(arr, np.memmap)
                and getattr(arr, "mode", None) == "r"
                and base is not None
                and hasattr(base, "madvise")
            )
            else None
        )
        if self._mm is not None:
            self._base_addr = np.frombuffer(self._mm, np.uint8).ctypes.data

    def alloc(self, shape, dtype):
        return np.empty(shape, dtype)

    def read_into(self, start, stop, out):
        out[: stop - start] = self.arr[start:stop]
        if self._mm is not None and stop > start:
            self._release(start, stop)

    def _release(self, start, stop):
        try:
            lo = self.arr[start:stop].ctypes.data - self._base_addr
            hi = lo + self.arr[start:stop].nbytes
            page = mmap.PAGESIZE
            lo = (lo // page) * page  # the first page may hold earlier rows only: already consumed
            hi = (hi // page) * page  # keep the partly consumed last page
            if hi > lo:
                self._mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
        except (ValueError, OSError, AttributeError):  # best effort: RSS only, never correctness
            self._mm = None

    def close(self):
        pass


def _open_rows(src, name):
    if isinstance(src, jax.Array):
        src = np.asarray(src)
    if isinstance(src, (str, os.PathLike)):
        return _NpyFile(src)
    if isinstance(src, np.ndarray):
        return _ArrayRows(src)
    return None


def _is_iterable(src):
    return (
        src is not None
        and not isinstance(src, (str, os.PathLike, np.ndarray, jax.Array))
        and hasattr(src, "__iter__")
    )


class _HostChunk(NamedTuple):
    start: int
    n_valid: int
    x: np.ndarray
    y: np.ndarray | None
    w: np.ndarray | None
    release: Any = None  # returns the chunk's host buffers to their pool once it is finished


class _BufferPool:
    """A fixed set of reusable host buffers (x, y, w) for the reader thread.

    Fresh 32 MiB buffers per chunk cost page faults and kernel zeroing on every chunk (a few ms of
    CPU each, on the core the statistics need); recycled ones are already mapped. A buffer goes
    back to the pool only after its chunk is finished (`_run` calls ``release`` after ``finish``,
    which waits for the chunk's results), so the device never reads a buffer being refilled, even
    when ``jax.device_put`` aliases host memory (CPU backend).
    """

    def __init__(self, size, readers):
        self.free: queue.Queue = queue.Queue()
        for _ in range(size):  # each reader allocates its buffers (aligned for direct reads)
            self.free.put(
                tuple(None if rs is None else rs[0].alloc(rs[1], rs[0].dtype) for rs in readers)
            )

    def get(self, stop):
        while not stop.is_set():
            try:
                return self.free.get(timeout=0.1)
            except queue.Empty:
                continue
        return None

    def releaser(self, bufs):
        return lambda: self.free.put(bufs)


def _range_chunks(x_rows, y_rows, w_rows, n, chunk_rows, y_map, stop, pool_size=0):
    p = x_rows.shape[1]
    pool = None
    if pool_size and n > chunk_rows:  # reused buffers (see _BufferPool); one chunk: no gain
        pool = _BufferPool(
            pool_size,
            [
                (x_rows, (chunk_rows, p)),
                None if y_rows is None else (y_rows, (chunk_rows,)),
                None if w_rows is None else (w_rows, (chunk_rows,)),
            ],
        )
    for start in range(0, n, chunk_rows):
        if stop.is_set():
            return
        end = min(n, start + chunk_rows)
        m = end - start
        release = None
        if pool is not None:
            bufs = pool.get(stop)
            if bufs is None:
                return
            x, y, w = bufs
            release = pool.releaser(bufs)
        else:
            alloc = np.empty if m == chunk_rows else np.zeros
            x = alloc((chunk_rows, p), x_rows.dtype)
            y = None if y_rows is None else alloc((chunk_rows,), y_rows.dtype)
            w = None if w_rows is None else alloc((chunk_rows,), w_rows.dtype)
        x_rows.read_into(start, end, x)
        if y_rows is not None:
            y_rows.read_into(start, end, y)
        if w_rows is not None:
            w_rows.read_into(start, end, w)
        if pool is not None and m < chunk_rows:  # padding rows: finite zeros (weight 0, label 0)
            for a in (x, y, w):
                if a is not None:
                    a[m:] = 0
        if y is not None:
            y = y_map(y, m)
        yield _HostChunk(start, m, x, y, w, release)


def _iter_chunks(items, chunk_rows, y_map, stop, x_dtype=None):
    """Re-cut an iterable of (x, y, w) tuples of any lengths into chunk_rows pieces."""
    buf, have, start = [], 0, 0

    def emit(parts, m):
        nonlocal start
        xs = [a[0] for a in parts]
        x = np.zeros((chunk_rows,) + xs[0].shape[1:], x_dtype or xs[0].dtype)
        x[:m] = np.concatenate(xs) if len(xs) > 1 else xs[0]
        y = w = None
        if parts[0][1] is not None:
            y = np.zeros((chunk_rows,), parts[0][1].dtype)
            y[:m] = np.concatenate([a[1] for a in parts])
            y = y_map(y, m)
        if parts[0][2] is not None:
            w = np.zeros((chunk_rows,), np.float64)
            w[:m] = np.concatenate([a[2] for a in parts])
        out = _HostChunk(start, m, x, y, w)
        start += m
        return out

    for item in items:
        if stop.is_set():
            return
        x, y, w = item
        while x.shape[0]:
            take = min(chunk_rows - have, x.shape[0])
            buf.append((x[:take], None if y is None else y[:take], None if w is None else w[:take]))
            have += take
            x = x[take:]
            y = None if y is None else y[take:]
            w = None if w is None else w[take:]
            if have == chunk_rows:
                yield emit(buf, have)
                buf, have = [], 0
    if have:
        yield emit(buf, have)


def _zip_items(source, y_source, w_source, need_y, names, notes=None):
    """(x, y, w) tuples from an iterable source (validated lazily, per chunk).

    ``names`` is a one-item list holding the column names the DataFrame chunks must carry
    (None: taken from the first chunk that is a DataFrame with string names); chunks whose names
    differ or come in another order are refused, as `check_feature_names` does for in-memory
    estimators, since columns are read by position. An unnamed chunk after named ones is read by
    position with a warning: its message goes to ``notes``, since this generator runs in the
    reader thread, and the main thread issues it (`_warn_notes`) at the user's line."""
    ys = iter(y_source) if _is_iterable(y_source) else None
    ws = iter(w_source) if _is_iterable(w_source) else None
    for k, item in enumerate(source):
        if isinstance(item, tuple):
            if y_source is not None:
                raise ValueError(
                    "source yields tuples; pass y_source=None (labels come from the "
                    "tuples) or yield arrays only"
                )
            x, y, w = (item + (None, None))[:3]
        else:
            x = item
            y = _next_chunk(ys, "y_source", k) if ys is not None else None
            w = _next_chunk(ws, "sample_weight", k) if ws is not None else None
        x = _named_rows(x, names, f"chunk {k} of source", notes)
        if x.ndim != 2:
            raise ValueError(
                f"chunk {k} of source has shape {x.shape}; chunks must be 2-D (rows, columns)"
            )
        if need_y and y is None:
            raise ValueError("labels are missing: pass y_source or let source yield (X, y) tuples")
        y = None if y is None else _as_numpy(y).reshape(-1)
        w = None if w is None else _as_numpy(w).astype(np.float64, copy=False).reshape(-1)
        if (y is not None and y.shape[0] != x.shape[0]) or (
            w is not None and w.shape[0] != x.shape[0]
        ):
            raise ValueError(
                f"chunk {k}: X has {x.shape[0]} rows but y / sample_weight have "
                f"{None if y is None else y.shape[0]} / "
                f"{None if w is None else w.shape[0]}"
            )
        yield x, y, w
    for extra, name in ((ys, "y_source"), (ws, "sample_weight")):
        if extra is not None and next(extra, _EXHAUSTED) is not _EXHAUSTED:
            raise ValueError(f"{name} yields more chunks than source; give both the same chunks")


_EXHAUSTED = object()


def _as_numpy(a):
    """A NumPy view of an array-like; pandas objects through ``to_numpy`` (their ``__array__``
    may hand back object arrays for nullable dtypes that ``to_numpy`` converts the same way)."""
    return np.asarray(a.to_numpy() if hasattr(a, "to_numpy") else a)


def _named_rows(x, names, what, notes=None):
    """``x`` as a NumPy array, after checking a DataFrame's column names against ``names[0]``
    (set from the first named frame when None); a warning's message goes to ``notes`` when
    given."""
    if names[0] is None:
        names[0] = _frame_names(x)
    else:
        try:
            check_feature_names(names[0], x, warn=None if notes is None else notes.append)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
    return _as_numpy(x)


def _next_chunk(it, name, k):
    value = next(it, _EXHAUSTED)
    if value is _EXHAUSTED:
        raise ValueError(
            f"{name} ran out of chunks at chunk {k} of source; give both the same chunks"
        )
    return value


def iter_npy_chunks(path, chunk_rows: int):
    """Yield ``(start, rows)`` chunks of a ``.npy`` file by positioned reads (no memory map).

    A small utility for callers that build their own pipelines; the fit and predict functions of
    this module read files this way by themselves.
    """
    f = _NpyFile(path)
    try:
        for start in range(0, f.shape[0], chunk_rows):
            end = min(f.shape[0], start + chunk_rows)
            out = np.empty((end - start,) + f.shape[1:], f.dtype)
            f.read_into(start, end, out)
            yield start, out
    finally:
        f.close()


# ============================================================================== prefetcher
class _Prefetcher:
    """Runs a chunk generator in a background thread; ``get`` returns chunks, then None."""

    _END = object()

    def __init__(self, make_gen, depth):
        self.q = queue.Queue(maxsize=max(1, depth))
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(make_gen,), daemon=True)
        self.thread.start()

    def _put(self, item):
        while not self.stop.is_set():
            try:
                self.q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, make_gen):
        gen = None
        try:
            gen = make_gen(self.stop)
            for item in gen:
                if not self._put(item):
                    return
            self._put(self._END)
        except BaseException as e:  # handed to the main thread, which re-raises
            self._put(e)
        finally:
            if hasattr(gen, "close"):
                gen.close()  # runs the generator's cleanup (closes files) on early exit too

    def get(self):
        item = self.q.get()
        if item is self._END:
            return None
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self):
        self.stop.set()
        while self.thread.is_alive():
            try:
                self.q.get(timeout=0.05)
            except queue.Empty:
                pass
        self.thread.join()


class _Progress:
    def __init__(self, label, total_rows, row_bytes, enabled, interval, stream=None):
        self.label, self.total, self.row_bytes = label, total_rows, row_bytes
        self.enabled, self.interval = enabled, interval
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = self.last = time.perf_counter()
        self.rows = 0

    def update(self, rows, final=False):
        self.rows += rows
        now = time.perf_counter()
        if not self.enabled or (not final and now - self.last < self.interval):
            return
        self.last = now
        dt = max(now - self.t0, 1e-9)
        tot = f"/{self.total:,}" if self.total else ""
        pct = f" ({100.0 * self.rows / self.total:.1f}%)" if self.total else ""
        gbs = self.rows * self.row_bytes / dt / 1e9
        end = " done" if final else ""
        print(
            f"[jaxnb] {self.label}: {self.rows:,}{tot} rows{pct}, {self.rows / dt:,.0f} rows/s, "
            f"{gbs:.3f} GB/s, {dt:.1f} s{end}",
            file=self.stream,
            flush=True,
        )


# ============================================================================ device steps
class _Layout(NamedTuple):
    """Static description of the table: which columns are discrete / continuous."""

    n_features: int
    discrete: tuple[int, ...]
    continuous: tuple[int, ...]
    n_states: tuple[int, ...]
    ignore_missing: bool
    ignore_unseen: bool


def _take(x, idx):
    if not idx:
        return x[:, :0]
    if idx == tuple(range(idx[0], idx[0] + len(idx))):
        return x[:, idx[0] : idx[0] + len(idx)]
    return x[:, np.asarray(idx)]


def _or_reduce(a, axis):
    return lax.reduce(a, np.int32(0), lax.bitwise_or, (axis,))


def _split(x, rows, layout: _Layout, dtype):
    """Device-side split of a raw chunk into codes / values, plus a per-row status word.

    Each element gets a small bit flag (`_FLAG_TEXT`), OR-reduced per row: two fused passes over
    the chunk, whatever the number of checks. Invalid discrete entries become code -1 (not
    counted); they only reach a result when the caller chose to ignore them.
    """
    row_flags = jnp.zeros(x.shape[:1], jnp.int32)
    if layout.discrete:
        xd = _take(x, layout.discrete)
        hi = jnp.asarray(layout.n_states, jnp.int32)[None, :]
        if jnp.issubdtype(xd.dtype, jnp.floating):
            nan = jnp.isnan(xd)
            ci = jnp.where(nan, -1, xd).astype(jnp.int32)
            bad = (ci.astype(xd.dtype) != xd) & ~nan  # fractional (or beyond int32)
        else:
            ci = xd.astype(jnp.int32)
            bad = jnp.zeros(ci.shape, bool)
        over = ci >= hi
        bad = bad | (ci < -1) | (over if not layout.ignore_unseen else False)
        f = jnp.where(bad, _FLAG_CODE, 0)
        if not layout.ignore_missing:
            f = f | jnp.where(ci == -1, _FLAG_MISSING, 0)
        row_flags = row_flags | _or_reduce(f.astype(jnp.int32), 1)
        codes = jnp.where(bad | over, -1, ci)
    else:
        codes = jnp.zeros((x.shape[0], 0), jnp.int32)
    values = _take(x, layout.continuous).astype(dtype)
    if layout.continuous:
        f = jnp.where(jnp.isinf(values), _FLAG_INF, 0)
        if not layout.ignore_missing:
            f = f | jnp.where(jnp.isnan(values), _FLAG_MISSING, 0)
        row_flags = row_flags | _or_reduce(f.astype(jnp.int32), 1)
    return codes, values, jnp.where(rows, row_flags, 0)


def _status(row_flags):
    """(flags of the chunk, index of its first offending row)."""
    return jnp.stack([_or_reduce(row_flags, 0), jnp.argmax(row_flags != 0).astype(jnp.int32)])


def _block_sums_checked(x, y, w, rows, shift, layout, n_classes, dtype):
    """Validate, split and sum one block of raw rows: ((N_j, counts, S0, S1, S2), row flags)."""
    codes, values, row_flags = _split(x, rows, layout, dtype)
    yi = y.astype(jnp.int32)
    bad_y = (yi < 0) | (yi >= n_classes)
    if jnp.issubdtype(y.dtype, jnp.floating):
        bad_y = bad_y | (yi.astype(y.dtype) != y)
    row_flags = row_flags | jnp.where(rows & bad_y, _FLAG_LABEL, 0)
    weight = rows.astype(dtype)
    if w is not None:
        w = w.astype(dtype)
        bad_w = ~jnp.isfinite(w) | (w < 0)
        row_flags = row_flags | jnp.where(rows & bad_w, _FLAG_WEIGHT, 0)
        weight = jnp.where(rows & ~bad_w, w, 0.0)
    yi = jnp.where(bad_y, 0, yi)
    Yw = jax.nn.one_hot(yi, n_classes, dtype=dtype) * weight[:, None]
    # With missing="error" a non-finite value fails the chunk anyway (status), so the sums need
    # no masking: S0 is the class weight of the block (as `jaxnb.suffstats.accumulate` does for
    # blocked data). With missing="ignore" missing values are masked out of S0, S1, S2.
    masked = layout.ignore_missing
    counts, s0, s1, s2 = _block_sums(codes, values, Yw, layout.n_states, shift, masked=masked)
    nj = Yw.sum(0)
    if not masked:
        s0 = jnp.broadcast_to(nj[:, None], s1.shape)
    return (nj, counts, s0, s1, s2), row_flags


_FAST_MAX_STATES = 16


def _fast_block_sums(x, y, w, rows, shift, layout, n_classes, dtype):
    """Sums of one block of raw rows without per-element validation, plus a "suspicious" flag.

    Every product runs on *whole* rows of the block (contiguous, no column gathers, which cost
    XLA:CPU more than the products): ``[x == k]`` for every state k < max(n_states) and the
    shifted ``x - s``, ``(x - s)^2`` (shift 0 on discrete columns), each contracted with the
    (b, c + 1) matrix [one-hot(y) * w, valid-row mask]; the columns that are not needed are
    dropped from the tiny results. Checks: a fractional, NaN, negative or too large code matches
    no state, so the unweighted match count of the valid rows is q x (valid rows) exactly when
    every code is valid; a non-finite continuous value makes the unweighted S1 / S2 non-finite.
    So ``suspicious`` is False only for a block that passes every check of `_split`; the caller
    then recomputes the chunk on the exact, flagging path. Labels and weights (1-D) are checked
    row by row as there.
    """
    yi = y.astype(jnp.int32)
    bad_y = (yi < 0) | (yi >= n_classes)
    if jnp.issubdtype(y.dtype, jnp.floating):
        bad_y = bad_y | (yi.astype(y.dtype) != y)
    weight = rows.astype(dtype)
    bad = rows & bad_y
    if w is not None:
        w = w.astype(dtype)
        bad_w = ~jnp.isfinite(w) | (w < 0)
        bad = bad | (rows & bad_w)
        weight = jnp.where(rows & ~bad_w, w, 0.0)
    Yw = jax.nn.one_hot(jnp.where(bad_y, 0, yi), n_classes, dtype=dtype) * weight[:, None]
    L = jnp.concatenate([Yw, rows.astype(dtype)[:, None]], axis=1)  # (b, c + 1)
    dot = lambda z: _rows_dot(L, z)  # (c + 1, p)
    disc, cont = np.asarray(layout.discrete, int), np.asarray(layout.continuous, int)
    nj = Yw.sum(0)
    suspicious = jnp.any(bad)
    if len(disc):
        M = max(layout.n_states)
        per_k = [dot((x == jnp.asarray(k, x.dtype)).astype(dtype)) for k in range(M)]
        G = jnp.stack(per_k, 0)[:, :, disc]  # (M, c + 1, q): state-major, as _onehot_layout
        valid = np.arange(M)[:, None] < np.asarray(layout.n_states)[None, :]  # (M, q)
        hits = jnp.where(valid, G[:, n_classes], 0.0).sum()
        suspicious = suspicious | (hits != len(disc) * rows.astype(dtype).sum())
        counts = G[:, :n_classes].transpose(1, 0, 2).reshape(n_classes, M * len(disc))
    else:
        counts = jnp.zeros((n_classes, 0), dtype)
    if len(cont):
        sh = jnp.zeros((x.shape[1],), dtype).at[cont].set(shift)
        xs = x.astype(dtype) - sh[None, :]
        g1, g2 = dot(xs)[:, cont], dot(xs * xs)[:, cont]
        suspicious = suspicious | ~jnp.all(jnp.isfinite(g1[n_classes]))
        suspicious = suspicious | ~jnp.all(jnp.isfinite(g2[n_classes]))
        s1, s2 = g1[:n_classes], g2[:n_classes]
    else:
        s1 = s2 = jnp.zeros((n_classes, 0), dtype)
    s0 = jnp.broadcast_to(nj[:, None], s1.shape)
    return (nj, counts, s0, s1, s2), suspicious


def _fast_path_ok(layout, block_rows):
    """The fast path needs the padded (state-major) one-hot layout, few states and exact float32
    match counts per block."""
    if layout.ignore_missing or layout.ignore_unseen:
        return False
    if layout.discrete:
        M, _ = _onehot_layout(layout.n_states)
        if not M or M > _FAST_MAX_STATES:
            return False
    return block_rows * max(1, len(layout.discrete)) < 1 << 24


@partial(jax.jit, static_argnames=("layout", "n_classes", "labels_coded", "block_size"))
def _chunk_stats(x, y, w, n_valid, *, layout, n_classes, labels_coded, block_size):
    """Statistics of one chunk (rows >= n_valid are padding) and its validation status.

    Fast path (``missing="error"``): one pass of `_fast_block_sums` over row blocks of the raw
    chunk, with the checks folded into the product; only when a block looks suspicious is the chunk
    recomputed (``lax.cond``) on the exact path below, which names the offending rows.
    """
    n_blk = x.shape[0] if block_size is None else min(x.shape[0], int(block_size))
    if not _fast_path_ok(layout, n_blk):
        stats, status = _chunk_stats_checked(x, y, w, n_valid, layout, n_classes, block_size)
    else:
        dtype = float_dtype()

        def block(xs, ys, ws, rows, shift):
            return _fast_block_sums(xs, ys, ws, rows, shift, layout, n_classes, dtype)

        def fold(carry, new):
            return jax.tree.map(jnp.add, carry[0], new[0]), carry[1] | new[1]

        (sums, suspicious), shift = _over_blocks(x, y, w, n_valid, layout, block_size, block, fold)
        fast = (_finish_sums(sums, shift, layout), jnp.zeros((2,), jnp.int32))
        stats, status = lax.cond(
            suspicious,
            lambda: _chunk_stats_checked(x, y, w, n_valid, layout, n_classes, block_size),
            lambda: fast,
        )
    if not layout.continuous:
        return stats, status
    return _refine_chunk(stats, x, y, w, n_valid, layout, n_classes, block_size), status


def _chunk_shift(x, n_valid, layout, bs):
    """Per-column centring shift of a chunk: the observed mean of the real rows of its first
    block (a partly filled chunk's zero padding would pull it towards 0, far from data that sit
    far from 0, and the sums of squares would cancel)."""
    head = _take(x[:bs], layout.continuous).astype(float_dtype())
    row_ids = jnp.arange(bs, dtype=jnp.int32)
    obs = jnp.isfinite(head) & (row_ids < n_valid)[:, None]
    return jnp.sum(jnp.where(obs, head, 0.0), 0) / jnp.maximum(jnp.sum(obs, 0), 1)


def _refine_chunk(stats, x, y, w, n_valid, layout, n_classes, block_size):
    """The Gaussian moments of a chunk again, centred on each class's own mean, when one shift for
    all classes cancels too much (`jaxnb.suffstats._refine_far_classes`, the same test and the
    same second pass, here over the raw chunk's row blocks). ``lax.cond``: the usual chunk pays
    only the test. Rows the checks reject (bad labels / weights, non-finite values) carry no
    weight here; a chunk that has them fails its status anyway unless they are ignored."""
    dtype = stats.mean.dtype
    n = x.shape[0]
    bs = n if block_size is None or block_size >= n else int(block_size)
    shift = _chunk_shift(x, n_valid, layout, bs)
    far = _far_classes(stats, shift)

    def refine():
        centre = stats.mean  # (c, r)

        def block(xs, ys, ws, rows, _shift):
            v = _take(xs, layout.continuous).astype(dtype)  # (b, r)
            yi = ys.astype(jnp.int32)
            ok = rows & (yi >= 0) & (yi < n_classes)
            if jnp.issubdtype(ys.dtype, jnp.floating):
                ok = ok & (yi.astype(ys.dtype) == ys)
            wt = ok.astype(dtype)
            if ws is not None:
                wf = ws.astype(dtype)
                wt = jnp.where(ok & jnp.isfinite(wf) & (wf >= 0), wf, 0.0)
            Yw = jax.nn.one_hot(jnp.where(ok, yi, 0), n_classes, dtype=dtype) * wt[:, None]
            obs = jnp.isfinite(v)
            d = jnp.where(obs[:, None, :], v[:, None, :] - centre[None], 0.0)  # (b, c, r)
            s0 = einsum("bc,bcr->cr", Yw, obs[:, None, :].astype(dtype))
            s1 = einsum("bc,bcr->cr", Yw, d)
            s2 = einsum("bc,bcr->cr", Yw, d * d)
            return s0, s1, s2

        fold = lambda a, b: jax.tree.map(jnp.add, a, b)
        (s0, s1, s2), _ = _over_blocks(x, y, w, n_valid, layout, block_size, block, fold)
        return _recentred(stats, s0, s1, s2)

    mean, m2 = lax.cond(far.any(), refine, lambda: (stats.mean, stats.m2))
    return SuffStats(stats.class_weight, stats.counts, stats.weight, mean, m2, stats.n_states)


def _over_blocks(x, y, w, n_valid, layout, block_size, block, fold, with_start=False):
    """Fold ``block`` over a chunk's row blocks (a `fori_loop` over full blocks, then the tail).

    The continuous columns are centred on the observed mean of the first block (``shift``, returned
    with the folded carry) so the per-block sums of squares stay accurate. ``block(xs, ys, ws,
    rows, shift[, start])`` sees one block (``rows``: which of its rows are < ``n_valid``).
    """
    n = x.shape[0]
    bs = n if block_size is None or block_size >= n else int(block_size)
    nb, tail = n // bs, n - (n // bs) * bs
    row_ids = jnp.arange(bs, dtype=jnp.int32)
    shift = _chunk_shift(x, n_valid, layout, bs)

    def one(start, size):
        sl = lambda a: None if a is None else lax.dynamic_slice_in_dim(a, start, size, 0)
        rows = (start + row_ids[:size]) < n_valid
        extra = (start,) if with_start else ()
        return block(sl(x), sl(y), sl(w), rows, shift, *extra)

    carry = one(jnp.int32(0), bs)
    if nb > 1:
        carry = lax.fori_loop(1, nb, lambda i, c: fold(c, one(i * bs, bs)), carry)
    if tail:
        carry = fold(carry, one(jnp.int32(nb * bs), tail))
    return carry, shift


def _finish_sums(sums, shift, layout):
    nj, counts, s0, s1, s2 = sums
    return stats_from_sums(nj, counts, s0, s1, s2, shift, layout.n_states)


def _chunk_stats_checked(x, y, w, n_valid, layout, n_classes, block_size):
    """The exact path: per-row validation flags (`_split`) fused with the sums, block by block.

    Used for ``missing="ignore"`` and to name the offending rows when the fast path finds a
    suspicious chunk.
    """
    dtype = float_dtype()

    def block(xs, ys, ws, rows, shift, start):
        sums, flags = _block_sums_checked(xs, ys, ws, rows, shift, layout, n_classes, dtype)
        first = start + jnp.argmax(flags != 0).astype(jnp.int32)
        return sums, _or_reduce(flags, 0), first

    def fold(carry, new):
        sums, flags, first = carry
        b_sums, b_flags, b_first = new
        first = jnp.where((flags == 0) & (b_flags != 0), b_first, first)
        return jax.tree.map(jnp.add, sums, b_sums), flags | b_flags, first

    (sums, flags, first), shift = _over_blocks(
        x, y, w, n_valid, layout, block_size, block, fold, with_start=True
    )
    stats = _finish_sums(sums, shift, layout)
    status = jnp.stack([flags, jnp.where(flags != 0, first, 0)])
    return stats, status


_merge_jit = jax.jit(merge)


def _merge_host(acc: SuffStats, stats: SuffStats) -> SuffStats:
    """Running total in float64 on the host CPU device: ``jaxnb.suffstats.merge`` under x64.

    Chunk statistics are exact in the compute dtype (a chunk holds far fewer than 2^24 rows), but
    a float32 running total over hundreds of millions of rows would round counts (ulp 16 at 2.4e8)
    and drift in the Gaussian moments. The total is tiny (K·c + 3·c·r numbers), so it is kept and
    merged in float64 whatever the compute dtype; the result is cast back at the end.
    """
    with jax.enable_x64(True), jax.default_device(jax.devices("cpu")[0]):
        to64 = lambda a: jnp.asarray(np.asarray(a, np.float64))
        out = _merge_jit(jax.tree.map(to64, acc), jax.tree.map(to64, stats))
        return jax.tree.map(np.asarray, out)


@partial(jax.jit, static_argnames=("layout",))
def _split_step(x, n_valid, *, layout, dtype_like):
    rows = jnp.arange(x.shape[0]) < n_valid
    codes, values, row_flags = _split(x, rows, layout, dtype_like.dtype)
    return codes, values, _status(row_flags)


# =============================================================================== validation
def _discrete_columns(discrete, p, dtype):
    if isinstance(discrete, str):
        if discrete == "auto":
            return np.arange(p) if dtype.kind in "iub" else np.arange(0)
        if discrete == "all":
            return np.arange(p)
        if discrete == "none":
            return np.arange(0)
        raise ValueError(
            f"discrete must be 'auto', 'all', 'none', a boolean mask or a list of "
            f"column indices; got {discrete!r}"
        )
    arr = np.asarray(discrete)
    if arr.dtype == bool:
        if arr.shape != (p,):
            raise ValueError(f"discrete mask must have length n_features={p}; got {arr.shape}")
        return np.flatnonzero(arr)
    if arr.size == 0:
        return np.arange(0)
    if arr.dtype.kind not in "iu" or arr.ndim != 1 or arr.min() < 0 or arr.max() >= p:
        raise ValueError(f"discrete indices must be integers in [0, {p}); got {discrete!r}")
    return np.unique(arr)


def _check_n_states(n_states, q):
    if q == 0:
        return ()
    if n_states is None:
        raise ValueError(
            f"n_states is required for the {q} discrete column(s) out of core (one "
            f"state count per discrete column, codes 0..M-1); a first pass to infer "
            f"them would read the data twice"
        )
    ns = list(n_states)
    if len(ns) != q or any(not isinstance(m, (int, np.integer)) or m < 1 for m in ns):
        raise ValueError(
            f"n_states must list {q} positive integers (one per discrete column); got {n_states!r}"
        )
    return tuple(int(m) for m in ns)


def _label_mapper(classes):
    """Host-side map from labels to codes (identity when classes are 0..c-1)."""
    c = len(classes)
    coded = classes.dtype.kind in "iu" and np.array_equal(classes, np.arange(c))
    if coded:
        return True, lambda y, m: y

    def mapper(y, m):
        yy = y[:m]
        idx = np.searchsorted(classes, yy)
        idx_c = np.minimum(idx, c - 1)
        bad = classes[idx_c] != yy
        if bad.any():
            raise ValueError(
                f"y contains the label {yy[np.flatnonzero(bad)[0]]!r}, which is not "
                f"in classes={classes.tolist()}"
            )
        out = np.zeros(y.shape[0], np.int32)
        out[:m] = idx_c
        return out

    return False, mapper


def _auto_chunk_rows(p, itemsize):
    rows = _TARGET_CHUNK_BYTES // max(1, p * itemsize)
    return int(max(1024, rows // 1024 * 1024))


def _check_chunk_rows(chunk_rows):
    if chunk_rows is not None and (not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1):
        raise ValueError(f"chunk_rows must be a positive int or None; got {chunk_rows!r}")


def _raise_status(status, start, what):
    flags, row = int(status[0]), int(status[1])
    if flags:
        msgs = "; ".join(t for f, t in _FLAG_TEXT.items() if flags & f)
        raise ValueError(
            f"{what}: invalid input in the chunk starting at row {start:,} (first "
            f"offending row {start + row:,}): {msgs}"
        )


# ================================================================================ pipeline
def _run(prefetch, dispatch, finish, progress, max_inflight=2, devices=None):
    """Double-buffered loop: device_put(k + 1) is issued before dispatch(k); wait on k − 1 only.

    With several ``devices`` chunk k goes to ``devices[k % D]`` (several chunks compute at once,
    e.g. one per CPU core with ``--xla_force_host_platform_device_count``); ``max_inflight``
    should then be D + 1.
    """
    devices = devices or [None]
    k = 0

    def put(h):
        nonlocal k
        if h is None:
            return None
        out = _put(h, devices[k % len(devices)])
        k += 1
        return out

    try:
        host = prefetch.get()
        dev = put(host)
        pending = collections.deque()
        while dev is not None:
            cur_host, cur_dev = host, dev
            host = prefetch.get()
            dev = put(host)
            pending.append((cur_host, dispatch(cur_host, cur_dev)))
            while len(pending) >= max_inflight:
                h, out = pending.popleft()
                finish(h, out)
                if h.release is not None:
                    h.release()
                progress.update(h.n_valid)
        while pending:
            h, out = pending.popleft()
            finish(h, out)
            if h.release is not None:
                h.release()
            progress.update(h.n_valid)
        progress.update(0, final=True)
    finally:
        prefetch.close()


def _put(h: _HostChunk, device=None):
    arrays = (h.x, h.y, h.w)
    return tuple(None if a is None else jax.device_put(a, device) for a in arrays)


class _Source(NamedTuple):
    """An opened input: ``make_gen(chunk_rows)(stop)`` yields `_HostChunk`s."""

    make_gen: Any
    n_rows: int | None
    n_columns: int
    dtype: np.dtype
    names: Any = None  # column names of DataFrame input (all strings), else None
    notes: Any = None  # warning messages from reading the chunks (`_warn_notes`)


def _warn_notes(src: _Source) -> None:
    """Issue the warnings collected while reading ``src``'s chunks, each message once, from the
    main thread and at the user's line (the reader thread has no user frame to point at)."""
    for message in dict.fromkeys(src.notes or ()):
        warnings.warn(message, UserWarning, stacklevel=_user_stacklevel())


def _open_source(source, y_source, w_source, y_map, need_y, names=None) -> _Source:
    """Open the inputs; ``names``: the column names DataFrame input must carry (None: any)."""
    names = [names]
    if _is_pandas_df(source):  # a whole in-memory frame: checked, then read as an array
        source = _named_rows(source, names, "source")
    elif names[0] is not None and not _is_iterable(source):
        check_feature_names(names[0], source)  # an unnamed table after a named fit: a warning
    for nm, a in (("y_source", y_source), ("sample_weight", w_source)):
        if _is_pandas_df(a):
            raise TypeError(f"{nm} is a DataFrame; pass one column (a Series or 1-D array)")
    if not _is_iterable(source):  # a table: a pandas Series of labels / weights beside it
        y_source = _as_numpy(y_source) if hasattr(y_source, "to_numpy") else y_source
        w_source = _as_numpy(w_source) if hasattr(w_source, "to_numpy") else w_source
    x_rows = _open_rows(source, "source")
    if x_rows is not None:
        if len(x_rows.shape) != 2:
            raise ValueError(f"source must be 2-D (rows, columns); got shape {x_rows.shape}")
        n, p = x_rows.shape
        y_rows = _open_rows(y_source, "y_source") if y_source is not None else None
        if need_y and y_rows is None:
            raise ValueError("y_source must be an array, memmap or .npy path when source is one")
        w_rows = _open_rows(w_source, "sample_weight") if w_source is not None else None
        for nm, r in (("y_source", y_rows), ("sample_weight", w_rows)):
            if r is not None and (len(r.shape) != 1 or r.shape[0] != n):
                raise ValueError(
                    f"{nm} must be 1-D with {n} entries (one per row of source); got "
                    f"shape {r.shape}"
                )
        if x_rows.dtype.kind not in "fiub":
            raise TypeError(
                f"source has dtype {x_rows.dtype}; out-of-core input must be numeric "
                f"(discrete columns as integer codes)"
            )

        def make_gen(chunk_rows, pool_size=0):
            def gen(stop):
                try:
                    yield from _range_chunks(
                        x_rows, y_rows, w_rows, n, chunk_rows, y_map, stop, pool_size
                    )
                finally:
                    for r in (x_rows, y_rows, w_rows):
                        if r is not None:
                            r.close()

            return gen

        return _Source(make_gen, n, p, x_rows.dtype, names[0])
    if not _is_iterable(source):
        raise TypeError(
            f"source must be a .npy path, a NumPy array / memmap or an iterable of "
            f"2-D chunks; got {type(source).__name__}"
        )
    notes: list[str] = []
    it = iter(_zip_items(source, y_source, w_source, need_y, names, notes))
    try:
        first = next(it)
    except StopIteration:
        raise ValueError("source yielded no chunks") from None
    p, dtype = first[0].shape[1], np.dtype(first[0].dtype)
    if dtype.kind not in "fiub":
        raise TypeError(f"source chunks have dtype {dtype}; out-of-core input must be numeric")

    def chained():
        yield first
        for k, (x, y, w) in enumerate(it, start=1):
            if x.shape[1] != p:
                raise ValueError(f"source chunks have {x.shape[1]} columns, the first had {p}")
            lossless = np.can_cast(x.dtype, dtype, casting="safe")
            if not lossless and not (x.dtype.kind == dtype.kind == "f"):  # floats: as computed
                raise ValueError(
                    f"chunk {k} of source has dtype {x.dtype} but the first chunk had {dtype}: "
                    "its values would be cast (e.g. fractions truncated); give every chunk the "
                    "same dtype, e.g. .astype(np.float64)"
                )
            yield x, y, w

    def make_gen(chunk_rows, pool_size=0):
        del pool_size  # re-cut chunks are assembled in fresh buffers
        return lambda stop: _iter_chunks(chained(), chunk_rows, y_map, stop, dtype)

    return _Source(make_gen, None, p, dtype, names[0], notes)


def _chunk_rows_for(src: _Source, chunk_rows):
    rows = chunk_rows or _auto_chunk_rows(src.n_columns, src.dtype.itemsize)
    if src.n_rows is not None:
        rows = min(rows, max(1, src.n_rows))
    return int(rows)


def fit_stats_out_of_core(
    source,
    y_source=None,
    *,
    classes,
    discrete="auto",
    n_states=None,
    missing="error",
    sample_weight=None,
    chunk_rows: int | None = None,
    prefetch: int = 2,
    progress: bool = True,
    progress_interval: float = 2.0,
    block_size: int | None = None,
    _return_layout: bool = False,
) -> SuffStats:
    r"""Sufficient statistics of a table read chunk by chunk (merged with `jaxnb.suffstats.merge`).

    Args:
      source: table (n, p): ``.npy`` path, array / ``np.memmap``, or an iterable of 2-D chunks (or
        of ``(X, y)`` / ``(X, y, w)`` tuples with ``y_source=None``). Numeric; discrete columns hold
        integer codes ``0..M-1`` (``-1`` or NaN = missing with ``missing="ignore"``).
      y_source: labels, same kinds as ``source`` (1-D).
      classes: all class labels (sorted like ``np.unique``); labels that are not ``0..c-1`` are
        mapped to codes on the host (reader thread).
      discrete: ``"auto"`` (integer / bool table: all discrete; float: none), ``"all"``,
        ``"none"``, a boolean mask or column indices.
      n_states: state counts of the discrete columns (required when there are any).
      missing: ``"error"`` or ``"ignore"`` (NaN / code -1 drop the term, exact under NB).
      sample_weight: optional weights (1-D array / memmap / path / iterable of 1-D chunks).
      chunk_rows: rows per chunk (default: ~32 MiB of table per chunk).
      prefetch: chunks read ahead by the background thread.
      progress, progress_interval: progress lines on stderr and their minimum spacing (s).
      block_size: rows per scanned block inside a chunk (default: automatic, see NaiveBayes).

    Returns:
      `SuffStats` of all rows (equal to the in-memory `jaxnb.methods.nb.fit_stats` up to round-off).
    """
    _check_chunk_rows(chunk_rows)
    if missing not in ("error", "ignore"):
        raise ValueError(f"missing must be 'error' or 'ignore'; got {missing!r}")
    cls = np.unique(np.asarray(classes))
    if cls.ndim != 1 or len(cls) < 2:
        raise ValueError(f"classes must list at least two class labels; got {classes!r}")
    coded, y_map = _label_mapper(cls)
    src = _open_source(source, y_source, sample_weight, y_map, True)
    n, p, xdtype = src.n_rows, src.n_columns, src.dtype
    d_idx = _discrete_columns(discrete, p, xdtype)
    c_idx = np.setdiff1d(np.arange(p), d_idx)
    ns = _check_n_states(n_states, len(d_idx))
    chunk_rows = _chunk_rows_for(src, chunk_rows)
    # every local device computes chunks (round robin): on a CPU split into several XLA devices
    # (one per core) several chunks are summed at once
    devices = jax.local_devices()
    inflight = len(devices) + 1 if len(devices) > 1 else 2
    gen = src.make_gen(chunk_rows, prefetch + 2 + inflight)  # chunks alive at most
    layout = _Layout(
        p,
        tuple(int(i) for i in d_idx),
        tuple(int(i) for i in c_idx),
        ns,
        missing == "ignore",
        False,
    )
    if block_size is None:
        block_size = None if chunk_rows * max(sum(ns), 1) <= 4_000_000 else 8192
    dtype = float_dtype()
    acc = jax.tree.map(np.asarray, empty_stats(ns, len(c_idx), len(cls), np.float32))
    state: dict[str, Any] = {"acc": acc, "sample": None}
    row_bytes = p * xdtype.itemsize

    def dispatch(h, dev):
        _sample_chunk(state, h, layout, dtype)
        x, y, w = dev
        return _chunk_stats(
            x,
            y,
            w,
            np.int32(h.n_valid),
            layout=layout,
            n_classes=len(cls),
            labels_coded=coded,
            block_size=block_size,
        )

    def finish(h, out):
        stats, status = out
        _raise_status(np.asarray(status), h.start, "fit")
        state["acc"] = _merge_host(state["acc"], stats)

    prog = _Progress("fit", n, row_bytes, progress, progress_interval)
    try:
        _run(
            _Prefetcher(gen, prefetch),
            dispatch,
            finish,
            prog,
            max_inflight=inflight,
            devices=devices if len(devices) > 1 else None,
        )
    finally:
        _warn_notes(src)
    if state["sample"] is None:
        raise ValueError("source holds no rows")
    if not np.asarray(state["acc"].class_weight).sum() > 0:
        raise ValueError(
            "sample_weight is zero for every sample (it sums to 0); at least one sample needs "
            "positive weight"
        )
    stats = jax.tree.map(lambda a: jnp.asarray(a, dtype), state["acc"])
    if _return_layout:
        return stats, layout, cls, state["sample"], src.names
    return stats


def _sample_chunk(state, h: _HostChunk, layout: _Layout, dtype) -> None:
    """Let a chunk's rows into ``state["sample"]``, the (codes, values) rows that serve
    ``feature_importances_``: a uniform (reservoir) sample of up to 2048 rows of the whole
    stream, as ``NaiveBayes.partial_fit`` keeps (the first 2048 rows of the first chunk were kept
    until 2026-11-29: one class of a file sorted by class). Only the chosen rows are converted."""
    seen = state.get("seen", 0)
    if state["sample"] is None:
        state["sample"] = _host_sample(h, layout, dtype, np.arange(0))
    codes, values = state["sample"]
    take, rows, slots = _reservoir(codes.shape[0], seen, h.n_valid)
    if take:
        more = _host_sample(h, layout, dtype, np.arange(take))
        codes, values = np.concatenate([codes, more[0]]), np.concatenate([values, more[1]])
    if rows.size:
        new_codes, new_values = _host_sample(h, layout, dtype, rows)
        codes[slots], values[slots] = new_codes, new_values
    state["sample"], state["seen"] = (codes, values), seen + h.n_valid


def _host_sample(h: _HostChunk, layout: _Layout, dtype, rows):
    """Rows ``rows`` of a host chunk as (codes, values) copies (the chunk's buffer is reused)."""
    m = len(rows)
    x = h.x[rows]
    xd = x[:, list(layout.discrete)] if layout.discrete else np.zeros((m, 0))
    codes = (
        np.where(np.isnan(xd), -1, xd).astype(np.int32)
        if xd.dtype.kind == "f"
        else (xd.astype(np.int32))
    )
    values = (
        x[:, list(layout.continuous)].astype(dtype)
        if layout.continuous
        else np.zeros((m, 0), dtype)
    )
    return codes, values


def naive_bayes_from_stats(
    stats: SuffStats,
    classes,
    *,
    n_features: int,
    discrete_idx,
    alpha=1.0,
    var_smoothing=1e-9,
    priors=None,
    missing="error",
    unseen="error",
    sample=None,
    feature_names=None,
) -> NaiveBayes:
    r"""A fitted `NaiveBayes` whose parameters come from given sufficient statistics.

    The estimator is configured as if fitted on a numeric table with ``n_features`` columns, of
    which ``discrete_idx`` are integer-coded discrete columns with ``stats.n_states`` states: its
    ``predict*``, ``explain``, ``score`` and ``partial_fit`` work as after ``fit``.

    It builds the column encoding and calls `NaiveBayes.fit_from_stats`.

    Args:
      stats: `SuffStats` (predictor order [discrete, continuous]).
      classes: the class labels, sorted (``classes_``).
      n_features: number of table columns; discrete_idx: the discrete columns.
      alpha, var_smoothing, priors, missing, unseen: `NaiveBayes` hyper-parameters.
      sample: optional (codes, values) of a few rows for ``feature_importances_``.
      feature_names: optional column names (strings, one per column), recorded as
        ``feature_names_in_``: DataFrames given later to ``predict*`` or `predict_out_of_core`
        must carry them in this order.
    """
    from .data import FeatureEncoder

    d_idx = np.asarray(discrete_idx, int).reshape(-1)
    c_idx = np.setdiff1d(np.arange(n_features), d_idx)
    if len(d_idx) != len(stats.n_states) or len(c_idx) != stats.mean.shape[-1]:
        raise ValueError(
            f"stats has {len(stats.n_states)} discrete / {stats.mean.shape[-1]} "
            f"continuous predictors but discrete_idx gives {len(d_idx)} / "
            f"{len(c_idx)} of n_features={n_features}"
        )
    est = NaiveBayes(
        discrete=d_idx.tolist(),
        n_states=list(stats.n_states),
        alpha=alpha,
        var_smoothing=var_smoothing,
        priors=priors,
        missing=missing,
        unseen=unseen,
    )
    enc = FeatureEncoder(
        discrete=d_idx.tolist(),
        n_states=list(stats.n_states),
        missing=missing,
        unseen=unseen,
        owner="NaiveBayes",
    )
    enc.n_features_in_ = int(n_features)
    enc.discrete_idx_, enc.continuous_idx_ = d_idx, c_idx
    enc.n_states_ = list(stats.n_states)
    enc.categories_ = [None] * len(d_idx)
    if feature_names is not None:
        names = np.asarray(feature_names, dtype=object).reshape(-1)
        if len(names) != n_features or not all(isinstance(c, str) for c in names):
            raise ValueError(
                f"feature_names must be {n_features} strings (one per column); got "
                f"{list(feature_names)[:5]}"
            )
        enc.feature_names_in_ = names
    return est.fit_from_stats(stats, classes, enc, sample)


def fit_nb_out_of_core(
    source,
    y_source=None,
    *,
    classes,
    discrete="auto",
    n_states=None,
    alpha=1.0,
    var_smoothing=1e-9,
    priors=None,
    missing="error",
    unseen="error",
    sample_weight=None,
    chunk_rows: int | None = None,
    prefetch: int = 2,
    progress: bool = True,
    progress_interval: float = 2.0,
) -> NaiveBayes:
    r"""Fit naive Bayes on a table larger than memory; returns a fitted `NaiveBayes`.

    One pass of `fit_stats_out_of_core`, then Ω⁽¹⁾ (`jaxnb.params.fit_mle`, Lidstone ``alpha``,
    variance floor) and `naive_bayes_from_stats`. The model equals ``NaiveBayes(discrete=...,
    n_states=..., alpha=...).fit(X, y)`` on the same rows up to round-off; ``stats_`` holds the
    statistics, ``params_`` the `NBParams`. Predict in chunks with `predict_out_of_core`.

    Args: see `fit_stats_out_of_core` and `NaiveBayes`.
    """
    if (
        not np.isscalar(alpha)
        or not np.isfinite(alpha)
        or alpha < 0
        or not np.isscalar(var_smoothing)
        or not np.isfinite(var_smoothing)
        or var_smoothing < 0
    ):
        raise ValueError(
            f"alpha and var_smoothing must be finite numbers >= 0; got {alpha=}, {var_smoothing=}"
        )
    t0 = time.perf_counter()
    stats, layout, cls, sample, names = fit_stats_out_of_core(
        source,
        y_source,
        classes=classes,
        discrete=discrete,
        n_states=n_states,
        missing=missing,
        sample_weight=sample_weight,
        chunk_rows=chunk_rows,
        prefetch=prefetch,
        progress=progress,
        progress_interval=progress_interval,
        _return_layout=True,
    )
    est = naive_bayes_from_stats(
        stats,
        cls,
        n_features=layout.n_features,
        discrete_idx=list(layout.discrete),
        alpha=alpha,
        var_smoothing=var_smoothing,
        priors=priors,
        missing=missing,
        unseen=unseen,
        sample=sample,
        feature_names=names,
    )
    est.fit_time_ = time.perf_counter() - t0
    return est


_METHODS = (
    "predict",
    "predict_proba",
    "predict_log_proba",
    "predict_joint_log_proba",
    "decision_function",
)


@partial(jax.jit, static_argnames="method")
def _finish_scores(s, *, method):
    """Per-class scores (n, c) -> what ``method`` returns, and the rows with no finite score
    (raised on the host with their source indices, as `BaseNB` does)."""
    undefined = undefined_score_rows(s, jnp)
    if method == "predict":
        return jnp.argmax(s, axis=-1).astype(jnp.int32), undefined
    if method == "predict_joint_log_proba":
        return s, undefined
    if method == "decision_function":
        return _decision_scores(s), undefined
    lp = jax.nn.log_softmax(s, axis=-1)
    return (lp if method == "predict_log_proba" else jnp.exp(lp)), undefined


def predict_out_of_core(
    estimator,
    source,
    *,
    method: str = "predict",
    chunk_rows=None,
    out=None,
    prefetch: int = 2,
    progress: bool = True,
    progress_interval: float = 2.0,
):
    r"""Apply a fitted NB estimator to a table larger than memory, chunk by chunk.

    Args:
      estimator: a fitted `jaxnb.BaseNB` (e.g. from `fit_nb_out_of_core`) whose discrete columns
        are integer-coded (``encoder_.categories_`` all None).
      source: table, as in `fit_stats_out_of_core` (arrays / memmaps / ``.npy`` paths / iterables).
      method: ``"predict"`` (labels), ``"predict_proba"``, ``"predict_log_proba"``,
        ``"predict_joint_log_proba"`` ((n, c) arrays) or ``"decision_function"`` ((n,) log odds
        with two classes, (n, c) otherwise; as the estimator's methods).
      chunk_rows: rows per chunk (default ~32 MiB of table).
      out: optional preallocated output (e.g. an ``np.memmap`` opened with ``mode="w+"``) of shape
        (n,) or (n, c); required for iterables of unknown length only if you want to avoid the
        final concatenation.

    Returns:
      The output array (``out`` when given).
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}; got {method!r}")
    estimator._check_fitted()
    _check_chunk_rows(chunk_rows)
    enc = estimator.encoder_
    if any(c is not None for c in enc.categories_):
        raise ValueError(
            "predict_out_of_core needs integer-coded discrete columns; this model "
            "label-encodes some columns (encoder_.categories_), so call "
            "estimator.predict on chunks instead"
        )
    ns = tuple(int(m) for m in enc.n_states_)
    layout = _Layout(
        int(enc.n_features_in_),
        tuple(int(i) for i in enc.discrete_idx_),
        tuple(int(i) for i in enc.continuous_idx_),
        ns,
        getattr(estimator, "missing", "error") == "ignore",
        getattr(estimator, "unseen", "error") == "ignore",
    )
    src = _open_source(source, None, None, None, False, getattr(enc, "feature_names_in_", None))
    n, p, xdtype = src.n_rows, src.n_columns, src.dtype
    if p != layout.n_features:
        raise ValueError(
            f"source has {p} columns but the model was fitted with {layout.n_features}"
        )
    gen = src.make_gen(_chunk_rows_for(src, chunk_rows), prefetch + 4)
    c = len(estimator.classes_)
    one_column = method == "predict" or (method == "decision_function" and c == 2)
    if out is not None and n is not None:
        want = (n,) if one_column else (n, c)
        if tuple(out.shape) != want:
            raise ValueError(f"out must have shape {want}; got {tuple(out.shape)}")
    pieces = []
    dtype_like = jnp.zeros((), float_dtype())
    scores_fn = estimator._log_joint_scores

    def dispatch(h, dev):
        codes, values, status = _split_step(
            dev[0], np.int32(h.n_valid), layout=layout, dtype_like=dtype_like
        )
        # the estimator's own jitted scorer (its parameters are arguments), then one module-level
        # program per method: a later call with the same chunk shape compiles nothing
        return status, _finish_scores(scores_fn(codes, values), method=method)

    def finish(h, res):
        status, (scores, undefined) = res
        _raise_status(np.asarray(status), h.start, "predict")
        bad = np.flatnonzero(np.asarray(undefined)[: h.n_valid])
        if bad.size:
            raise undefined_scores_error(h.start + bad, dtype_like.dtype, what="source rows")
        block = np.asarray(scores)[: h.n_valid]
        if method == "predict":
            block = estimator.classes_[block]
        if out is not None:
            out[h.start : h.start + h.n_valid] = block
        else:
            pieces.append(block)

    prog = _Progress(method, n, p * xdtype.itemsize, progress, progress_interval)
    try:
        _run(_Prefetcher(gen, prefetch), dispatch, finish, prog)
    finally:
        _warn_notes(src)
    if out is not None:
        return out
    if not pieces:
        return np.zeros((0,) if one_column else (0, c))
    return np.concatenate(pieces)
