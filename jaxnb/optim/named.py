"""`NamedOptimizer`: an optax optimizer given by name and arguments, so that it pickles.

optax builds its transformations from local functions, which `pickle` cannot store; an estimator
holding ``optax.adam(1e-3)`` therefore cannot be saved, sent to a worker process (joblib,
multiprocessing) or cloned across processes. ``NamedOptimizer("adam", learning_rate=1e-3)`` is the
same transformation (it *is* an `optax.GradientTransformation`: ``init`` and ``update`` are those
of ``optax.adam(learning_rate=1e-3)``), pickled as its name and arguments and rebuilt on loading.
Two equal specifications compare (and hash) equal, so jit caches keyed on the optimizer, such as
the online NB's compiled scans, are shared between estimators built separately.
"""

from __future__ import annotations

import optax

__all__ = ["NamedOptimizer"]


def _rebuild(name, kwargs):
    return NamedOptimizer(name, **kwargs)


class NamedOptimizer(optax.GradientTransformation):
    """``optax.<name>(**kwargs)``, picklable and compared by its specification.

    Args:
      name: an optax function returning a `GradientTransformation` ("adam", "sgd", "adagrad",
        "adamw", ...).
      **kwargs: its arguments by keyword (e.g. ``learning_rate=1e-3``). The optimizer pickles when
        they do: numbers do, a schedule written as a closure does not (use an optax schedule built
        by name in the same way, or a module-level function).

    Raises:
      TypeError: ``name`` is not a string, or optax's ``name`` does not return a transformation.
      ValueError: optax has no function ``name``.
    """

    def __new__(cls, name, /, **kwargs):
        if not isinstance(name, str):
            raise TypeError(
                f"name must be the name of an optax optimizer such as 'adam'; got {name!r}"
            )
        factory = getattr(optax, name, None)
        if name.startswith("_") or not callable(factory):
            raise ValueError(
                f"optax has no optimizer {name!r}; use the name of an optax function such as "
                "'adam', 'sgd', 'adagrad' or 'adamw'"
            )
        tx = factory(**kwargs)
        if not isinstance(tx, optax.GradientTransformation):
            raise TypeError(
                f"optax.{name}(...) returned {type(tx).__name__}, not a GradientTransformation; "
                "name an optimizer (such as 'adam')"
            )
        self = super().__new__(cls, tx.init, tx.update)
        self._spec = (name, tuple(sorted(kwargs.items())))
        return self

    @property
    def name(self) -> str:
        return self._spec[0]

    @property
    def kwargs(self) -> dict:
        return dict(self._spec[1])

    def __reduce__(self):
        return (_rebuild, (self.name, self.kwargs))

    def _key(self):
        try:
            hash(self._spec)
        except TypeError:  # unhashable arguments: equal only to itself
            return None
        return self._spec

    def __eq__(self, other):
        if not isinstance(other, NamedOptimizer):
            return NotImplemented
        key = self._key()
        return self is other if key is None else key == other._key()

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        key = self._key()
        return id(self) if key is None else hash(("NamedOptimizer", key))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._spec[1])
        return f"NamedOptimizer({self.name!r}{', ' if args else ''}{args})"
