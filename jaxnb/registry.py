"""Registry of methods for `jaxnb compare`: every estimator family registers a factory here.

A factory takes the data kind ("discrete", "continuous" or "mixed") and returns an unfitted
estimator configured for it. Later issues add their methods by calling `register`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MethodSpec", "register", "available_methods", "get_method"]


@dataclass(frozen=True)
class MethodSpec:
    name: str
    factory: Callable
    description: str
    kinds: tuple[str, ...] = ("discrete", "continuous", "mixed")


_REGISTRY: dict[str, MethodSpec] = {}


def register(
    name: str,
    factory: Callable,
    description: str,
    kinds: tuple[str, ...] = ("discrete", "continuous", "mixed"),
) -> None:
    """Add a method (``factory(kind) -> estimator``) under ``name``."""
    _REGISTRY[name] = MethodSpec(name, factory, description, tuple(kinds))


def available_methods() -> list[str]:
    """Names of the registered methods (built-in ones first, in registration order)."""
    _load_builtin()
    return list(_REGISTRY)


def get_method(name: str) -> MethodSpec:
    """The `MethodSpec` registered under ``name``; ValueError listing the names if unknown."""
    _load_builtin()
    if name not in _REGISTRY:
        raise ValueError(f"unknown method {name!r}; available: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


_LOADED = False


def _load_builtin() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from . import estimators as est

    register("NB", lambda kind: est.NaiveBayes(), "naive Bayes (Laplace CPTs, Gaussian)")
    from . import estimators_search as search

    register(
        "SNB",
        lambda kind: search.SelectiveNB(direction="forward"),
        "selective NB, forward search on training error (Langley & Sage)",
    )
    register(
        "fsNB",
        lambda kind: search.StagewiseNB(),
        "forward stagewise NB (eps=0.025, v=20, early stopping, AIC)",
    )
    # Optional families: registered when their modules are present.
    import importlib

    for mod in (
        "jaxnb.estimators_search",
        "jaxnb.estimators_penalized",
        "jaxnb.estimators_structure",
        "jaxnb.stream.online",
    ):
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:  # a real missing dependency inside the module: surface it
                raise
            continue
        hook = getattr(m, "register_methods", None)
        if hook is not None:
            hook(register)
