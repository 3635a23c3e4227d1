"""Eager hyper-parameter checks shared by every estimator (NumPy/Python only, before any jit).

Each check raises a `ValueError` naming the argument, showing what arrived and what is allowed.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable

import jax
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


def check_scored_rows(name, scores, y, weight, divides) -> None:
    """Rows scored per class: ``scores`` (n, ..., c), ``y`` and ``weight`` (n,) (shapes always);
    concrete labels integers in [0, c) (``take_along_axis`` would clamp one outside) and concrete
    weights finite, >= 0, with a positive sum (``divides``: what that sum divides). Tracers are
    skipped."""
    shape = np.shape(scores)
    n, c = shape[0], shape[-1]
    if np.shape(y) != (n,):
        raise ValueError(f"y must have shape (n,) = ({n},) like {name}'s rows; got {np.shape(y)}")
    if concrete(y):
        yy = np.asarray(y)
        if yy.dtype.kind not in "iu" or (yy.size and (yy.min() < 0 or yy.max() >= c)):
            rng = f", range [{yy.min()}, {yy.max()}]" if yy.size and yy.dtype.kind in "iufb" else ""
            raise ValueError(
                f"y must hold integer class codes in [0, c={c}) (c = {name}.shape[-1]); got "
                f"dtype {yy.dtype}{rng}"
            )
    if weight is None:
        return
    if np.shape(weight) != (n,):
        raise ValueError(
            f"weight must have shape (n,) = ({n},), one weight per row; got {np.shape(weight)}"
        )
    if concrete(weight):
        check_array_range("weight", weight, 0.0, fix="sample weights are finite and >= 0")
        if n and not np.asarray(weight, np.float64).sum() > 0:
            raise ValueError(f"weight must have a positive sum ({divides}); got all-zero weights")


def jit_entry(*static_argnames: str, check: Callable | None = None):
    """`jax.jit` for a public core function, with `static_argnames`; a list `n_states` becomes a
    tuple.

    Jitting the whole entry point compiles once instead of dispatching (and compiling) op by op when
    called eagerly; inside a caller's `jit` it simply inlines. Shape checks still run at trace time.
    ``check``, when given, is called with the bound arguments (a dict, defaults not filled in)
    before jitting: the place for eager value checks, which must skip tracers (inside a caller's
    `jit` the arguments are abstract).
    """

    def decorate(fn):
        jitted = jax.jit(fn, static_argnames=static_argnames)
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            states = bound.arguments.get("n_states")
            if states is not None and not isinstance(states, int | np.integer):
                bound.arguments["n_states"] = tuple(int(s) for s in states)
            for name in static_argnames:
                value = bound.arguments.get(name)
                if isinstance(value, np.integer):
                    bound.arguments[name] = int(value)
            if check is not None:
                check(bound.arguments)
            return jitted(**bound.arguments)

        # the jitted function's introspection (lowering, cache size) on the wrapper too
        wrapper.lower = jitted.lower
        wrapper._cache_size = jitted._cache_size
        return wrapper

    return decorate
