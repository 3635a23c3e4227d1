"""Test configuration: float64 everywhere and strict rank promotion (STYLE.md, Testing).

The whole suite runs in one process and compiles many thousands of XLA programs. Every compiled
CPU executable keeps ~6 memory mappings alive, and at ~10,000 of them a process reaches the
kernel's per-process limit (``vm.max_map_count``, 65,530 by default): XLA then crashes with a
segmentation fault while compiling whatever comes next. Compiled programs are therefore dropped
after every test module (`jax.clear_caches`), which returns their mappings.
"""

import jax
import pytest

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture(autouse=True, scope="module")
def _drop_compiled_programs():
    """Release each module's compiled executables (see the module docstring)."""
    yield
    jax.clear_caches()


@pytest.fixture
def compiles():
    """Counts XLA compilations during a test: ``.n`` (`jaxnb.cache.count_compilations`)."""
    from jaxnb.cache import count_compilations

    with count_compilations() as counter:
        yield counter
