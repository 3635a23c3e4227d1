"""Jaxpr inspection for tests that check how a core function is staged (not only its values)."""


def loop_primitives(jaxpr, inside=False, found=None):
    """Names of the primitives that run inside a loop's body (``while``, or the ``scan`` of a
    ``fori_loop`` with a static trip count), anywhere in ``jaxpr`` (a `jax.core.Jaxpr`)."""
    found = set() if found is None else found
    for eqn in jaxpr.eqns:
        if inside:
            found.add(eqn.primitive.name)
        loop = inside or eqn.primitive.name in ("while", "scan")
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple | list) else (value,):
                sub = getattr(sub, "jaxpr", sub)  # a ClosedJaxpr holds its Jaxpr
                if hasattr(sub, "eqns"):
                    loop_primitives(sub, loop, found)
    return found


def jitted_primitives(fn, *args):
    """Primitives at the top of the one jitted call that ``fn`` traces to (a public core function
    is a jit entry point, so its body sits inside one ``jit`` equation)."""
    import jax

    (eqn,) = jax.make_jaxpr(fn)(*args).jaxpr.eqns
    return {e.primitive.name for e in eqn.params["jaxpr"].jaxpr.eqns}
