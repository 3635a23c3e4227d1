"""Test configuration: float64 everywhere and strict rank promotion (STYLE.md, Testing).

The whole suite runs in one process and compiles many thousands of XLA programs. Every compiled
CPU executable keeps ~6 memory mappings alive, and at ~10,000 of them a process reaches the
kernel's per-process limit (``vm.max_map_count``, 65,530 by default): XLA then crashes with a
segmentation fault while compiling whatever comes next. Compiled programs are therefore dropped
after every test module (`jax.clear_caches`), which returns their mappings.

Many modules compile the same programs again (the same estimators on data of the same shapes), and
the two xdist workers compile each other's programs too. The run therefore keeps JAX's persistent
compilation cache (`jaxnb.enable_compilation_cache`) in one temporary directory shared by the
workers and removed at the end: a program compiled once in the run is loaded from disk after that,
in either worker. ``JAXNB_TEST_XLA_CACHE=0`` turns this off (every program compiled afresh);
``JAXNB_TEST_XLA_CACHE=DIR`` uses (and keeps) that directory instead.
"""

import os
import shutil
import tempfile

import jax
import pytest

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")

_CACHE_ENV = "JAXNB_TEST_XLA_CACHE"
_OWN_CACHE = None  # the directory this process created (the xdist controller, or a plain run)
if os.environ.get(_CACHE_ENV, "") != "0":
    from jaxnb.cache import enable_compilation_cache

    if not os.environ.get(_CACHE_ENV):  # first process of the run: workers inherit the variable
        _OWN_CACHE = tempfile.mkdtemp(prefix="jaxnb-test-xla-")
        os.environ[_CACHE_ENV] = _OWN_CACHE
    enable_compilation_cache(os.environ[_CACHE_ENV])


def pytest_unconfigure(config):
    if _OWN_CACHE is not None:
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)


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
