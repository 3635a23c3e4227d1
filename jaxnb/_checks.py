"""Eager hyper-parameter checks shared by every estimator (NumPy/Python only, before any jit).

Each check raises a `ValueError` naming the argument, showing what arrived and what is allowed.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "check_real",
    "check_int",
    "check_choice",
    "check_fraction",
    "check_bool",
    "concrete",
    "check_array_range",
    "check_scored_rows",
    "check_labels",
    "broadcasts_to",
    "dtype_of",
    "off_host",
    "jit_entry",
]


def check_real(name, value, low=None, high=None, low_open=False, high_open=False, allow_none=False):
    """A finite real number (not a bool) within optional bounds."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(
            f"{name} must be a finite number{' or None' if allow_none else ''}; got "
            f"{name}={value!r}"
        )
    if low is not None and (value <= low if low_open else value < low):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}; got {name}={value!r}")
    if high is not None and (value >= high if high_open else value > high):
        raise ValueError(
            f"{name} must be {'<' if high_open else '<='} {high}; got {name}={value!r}"
        )


def check_int(name, value, low, allow_none=False):
    """An integer (not a bool) >= ``low``."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(
            f"{name} must be an int >= {low}{' or None' if allow_none else ''}; "
            f"got {name}={value!r}"
        )


def check_choice(name, value, choices):
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {name}={value!r}")


def check_fraction(name, value):
    """A float strictly between 0 and 1."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not 0.0 < float(value) < 1.0
    ):
        raise ValueError(f"{name} must be a float in (0, 1); got {name}={value!r}")


def check_bool(name, value):
    """True or False."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False; got {name}={value!r}")


def concrete(*values) -> bool:
    """True when no value is a JAX tracer: the functional core then checks its inputs eagerly
    (under ``jit``/``vmap``/``grad`` the same calls skip the checks and cost nothing)."""
    return not any(isinstance(v, jax.core.Tracer) for v in values)


def check_array_range(name, value, low=None, high=None, fix="", low_open=False):
    """Every entry of a concrete array finite and within [low, high] ((low, high] with
    ``low_open``) (NumPy, eager)."""
    a = np.asarray(value, dtype=np.float64)
    bad = ~np.isfinite(a)
    if low is not None:
        bad |= (a <= low) if low_open else (a < low)
    if high is not None:
        bad |= a > high
    if bad.any():
        lo = "(" if low_open else "["
        rng = f"{lo}{'-inf' if low is None else low}, {'inf' if high is None else high}]"
        raise ValueError(
            f"{name} must be finite and within {rng}; got {a[bad].ravel()[0]!r}"
            + (f"; {fix}" if fix else "")
        )


def dtype_of(value) -> np.dtype:
    """The NumPy dtype of an array, a tracer or an array-like (no copy of an array)."""
    return np.dtype(value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype)


def broadcasts_to(value, shape) -> bool:
    """Whether ``value`` broadcasts to ``shape`` without growing it (static: shapes only)."""
    try:
        return np.broadcast_shapes(np.shape(value), tuple(shape)) == tuple(shape)
    except ValueError:
        return False


def off_host(arrays) -> bool:
    """True when every array is a JAX array on an accelerator. A CPU array is read in place by
    NumPy (no copy), so checks of it stay on the host and compile nothing; accelerator-resident
    rows are better reduced where they are, bringing back a few numbers."""
    return all(
        isinstance(a, jax.Array) and all(d.platform != "cpu" for d in a.devices()) for a in arrays
    )


def check_labels(name, rows, c, y, weight=None, divides=None, c_from=None) -> None:
    """Labels ``y`` and row weights ``weight`` of the rows (shape ``rows``) of ``name``, scored
    over ``c`` classes (``c_from`` says where c comes from; default ``name.shape[-1]``).

    Shapes and the label dtype are static and always checked (at trace time too); concrete labels
    must lie in [0, c) (``take_along_axis`` would fill or clamp one outside: NaN, or an error of
    0 or 1) and concrete weights be finite and >= 0, with a positive sum when ``divides`` names
    what that sum divides. Tracers' values are skipped.
    """
    rows = tuple(rows)
    desc = "(n,)" if len(rows) == 1 else "(..., n)"
    if np.shape(y) != rows:
        raise ValueError(
            f"y must have shape {desc} = {rows}, one class code per row of {name}; got "
            f"{np.shape(y)}"
        )
    codes_of = f"integer class codes in [0, c={c}) (c = {c_from or name + '.shape[-1]'})"
    if dtype_of(y).kind not in "iu":
        raise ValueError(f"y must hold {codes_of}; got dtype {dtype_of(y)}")
    if concrete(y) and np.size(y):
        yy = np.asarray(y)
        if yy.min() < 0 or yy.max() >= c:
            raise ValueError(f"y must hold {codes_of}; got range [{yy.min()}, {yy.max()}]")
    if weight is None:
        return
    if np.shape(weight) != rows:
        raise ValueError(
            f"weight must have shape {desc} = {rows}, one weight per row of {name}; got "
            f"{np.shape(weight)}"
        )
    if concrete(weight):
        check_array_range("weight", weight, 0.0, fix="sample weights are finite and >= 0")
        w = np.asarray(weight, np.float64)
        if divides and w.size and not (w.sum(-1) > 0).all():
            raise ValueError(f"weight must have a positive sum ({divides}); got all-zero weights")


def check_scored_rows(name, scores, y, weight, divides) -> None:
    """Rows scored per class: ``scores`` (n, ..., c), ``y`` and ``weight`` (n,): `check_labels`."""
    shape = np.shape(scores)
    check_labels(name, shape[:1], shape[-1], y, weight, divides)


def _as_array(value):
    """A list or tuple argument as one array (a jitted function would take it as a pytree of
    scalars: one argument per entry, a compilation per length); entries that are tracers of a
    caller's ``jit`` are stacked by JAX instead."""
    try:
        return np.asarray(value)
    except jax.errors.TracerArrayConversionError:
        return jnp.asarray(value)


def jit_entry(*static_argnames: str, check: Callable | None = None):
    """`jax.jit` for a public core function, with `static_argnames`; a list `n_states` becomes a
    tuple, and any other list or plain tuple argument one array (as the function would read it
    called eagerly).

    Jitting the whole entry point compiles once instead of dispatching (and compiling) op by op when
    called eagerly; inside a caller's `jit` it simply inlines. Shape checks still run at trace time.
    ``check``, when given, is called with the bound arguments (a dict, defaults not filled in, the
    entries of a ``**kwargs`` parameter as keys of their own) before jitting: the place for eager
    value checks, which must skip tracers (inside a caller's `jit` the arguments are abstract).
    """

    def decorate(fn):
        jitted = jax.jit(fn, static_argnames=static_argnames)
        signature = inspect.signature(fn)
        # a **kwargs parameter: its entries are passed (and checked) as keywords of their own
        var_kw = next(
            (p.name for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), None
        )

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            arguments = dict(signature.bind(*args, **kwargs).arguments)
            if var_kw is not None:
                arguments.update(arguments.pop(var_kw, {}))
            states = arguments.get("n_states")
            if states is not None and not isinstance(states, int | np.integer):
                arguments["n_states"] = tuple(int(s) for s in states)
            for name, value in arguments.items():
                if name in static_argnames:
                    if isinstance(value, np.integer):
                        arguments[name] = int(value)
                elif type(value) in (list, tuple):  # array-likes (a NamedTuple pytree stays)
                    arguments[name] = _as_array(value)
            if check is not None:
                check(arguments)
            return jitted(**arguments)

        # the jitted function's introspection (lowering, cache size) on the wrapper too
        wrapper.lower = jitted.lower
        wrapper._cache_size = jitted._cache_size
        return wrapper

    return decorate
