"""The test-suite fixture that drops compiled programs after each module (tests/conftest.py)."""

import jax
import jax.numpy as jnp
import pytest


def _n_maps():
    try:
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)
    except OSError:  # not Linux
        return 0


def test_compiled_programs_release_their_memory_maps():
    """The mechanism the fixture relies on: clearing the caches returns the mappings."""
    if jax.default_backend() != "cpu":  # GPU programs live on the device, not in host mappings
        pytest.skip("the mappings are those of XLA:CPU executables")
    before = _n_maps()
    if before == 0:
        pytest.skip("needs /proc/self/maps")
    fs = [jax.jit(lambda x, i=i: jnp.sin(x) * i) for i in range(40)]
    for i, f in enumerate(fs):
        f(jnp.ones(i + 1)).block_until_ready()
    grown = _n_maps()
    del fs
    jax.clear_caches()
    assert grown - before >= 40  # at least one mapping per compiled program
    assert _n_maps() - before < (grown - before) / 2
