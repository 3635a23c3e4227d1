"""Test configuration: float64 everywhere and strict rank promotion (STYLE.md, Testing).

The whole suite runs in one process and compiles many thousands of XLA programs. Every compiled
CPU executable keeps ~6 memory mappings alive, and at ~10,000 of them a process reaches the
kernel's per-process limit (``vm.max_map_count``, 65,530 by default): XLA then crashes with a
segmentation fault while compiling whatever comes next. Compiled programs are therefore dropped
after every test module (`jax.clear_caches`), which returns their mappings.
"""

import jax
import jax.monitoring
import pytest

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture(autouse=True, scope="module")
def _drop_compiled_programs():
    """Release each module's compiled executables (see the module docstring)."""
    yield
    jax.clear_caches()


_BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"


class _CompileCounter:
    def __init__(self):
        self.n = 0

    def __call__(self, event, duration, **kwargs):
        if event == _BACKEND_COMPILE:
            self.n += 1


@pytest.fixture
def compiles():
    """Counts XLA compilations (JAX's backend-compile monitoring event) during a test: ``.n``."""
    counter = _CompileCounter()
    jax.monitoring.register_event_duration_secs_listener(counter)
    yield counter
    jax.monitoring.unregister_event_duration_listener(counter)
