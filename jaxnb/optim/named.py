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

import jax
import optax

__all__ = ["NamedOptimizer"]


def _rebuild(name, kwargs):
    return NamedOptimizer(name, **kwargs)


class NamedOptimizer(optax.GradientTransformationExtraArgs):
    """``optax.<name>(**kwargs)``, picklable and compared by its specification.

    An `optax.GradientTransformationExtraArgs` (so optimizers that need extra arguments in
    ``update``, such as ``"lbfgs"``'s ``value``, ``grad`` and ``value_fn``, receive them; others
    ignore them) and a JAX pytree without leaves (it passes through ``jax.tree.map`` and
    ``eqx.filter_jit`` unchanged, like a static value).

    Args:
      name: an optax function returning a `GradientTransformation` ("adam", "sgd", "adagrad",
        "adamw", "lbfgs", ...).
      **kwargs: its arguments, by keyword only (e.g. ``learning_rate=1e-3``). The optimizer
        pickles when they do: numbers do; optax's schedules are closures and do not (a schedule
        written as a module-level function does).

    Raises:
      TypeError: ``name`` is not a string, arguments are given by position, or optax's ``name``
        does not return a transformation.
      ValueError: optax has no function ``name``.
    """

    def __new__(cls, name, /, *args, **kwargs):
        if not isinstance(name, str):
            raise TypeError(
                f"name must be the name of an optax optimizer such as 'adam'; got {name!r}"
            )
        if args:
            raise TypeError(
                f"NamedOptimizer takes optax's arguments by keyword only; got {len(args)} "
                f"positional argument(s) {args!r} (write e.g. NamedOptimizer({name!r}, "
                "learning_rate=1e-3))"
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
        tx = optax.with_extra_args_support(tx)
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

    def _replace(self, **kwargs):
        raise TypeError(
            "a NamedOptimizer is rebuilt from its name and arguments, not its functions: create "
            "a new NamedOptimizer(name, **kwargs)"
        )

    @classmethod
    def _make(cls, iterable):
        raise TypeError("create a NamedOptimizer from a name and keyword arguments, not _make")

    def _key(self):
        try:
            hash(self._spec)
        except TypeError:  # unhashable arguments: equal only to itself
            return None
        return self._spec

    def __eq__(self, other):
        if not isinstance(other, NamedOptimizer):
            return False  # not a plain tuple of the same functions either (hashes would differ)
        key = self._key()
        return self is other if key is None else key == other._key()

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        key = self._key()
        return id(self) if key is None else hash(("NamedOptimizer", key))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._spec[1])
        return f"NamedOptimizer({self.name!r}{', ' if args else ''}{args})"


# a pytree node without children: tree maps and equinox's filters keep the optimizer whole (as a
# NamedTuple it would be rebuilt from its two functions, which its constructor does not take)
jax.tree_util.register_pytree_node(NamedOptimizer, lambda o: ((), o), lambda o, _: o)
