"""`jaxnb.enable_compilation_cache`: programs compiled in one process are loaded in the next.

Each run is a fresh subprocess (the cache is process-wide configuration, so enabling it here would
change the rest of the test session)."""

import os
import subprocess
import sys

import pytest

import jaxnb
from jaxnb.cache import default_cache_dir

SCRIPT = """
import sys
import jax
hits = []
jax.monitoring.register_event_listener(
    lambda name, **kw: hits.append(name) if name == "/jax/compilation_cache/cache_hits" else None
)
import numpy as np
import jaxnb
where = jaxnb.enable_compilation_cache(sys.argv[1])
rng = np.random.default_rng(0)
X = rng.standard_normal((120, 4))
y = (X[:, 0] + 0.5 * rng.standard_normal(120) > 0).astype(int)
p = jaxnb.NaiveBayes().fit(X, y).predict_proba(X)
print(len(hits), float(p[:, 1].sum()))
"""


def _run(cache_dir):
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(cache_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    hits, total = out.stdout.split()
    return int(hits), float(total)


def test_second_process_loads_compiled_programs(tmp_path):
    cache = tmp_path / "xla"
    hits1, total1 = _run(cache)
    assert hits1 == 0
    assert any(cache.iterdir())  # programs were written
    hits2, total2 = _run(cache)
    assert hits2 >= 2  # fit and predict programs came from the cache
    assert total2 == total1  # same programs, same results


def test_default_dir_and_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXNB_CACHE_DIR", str(tmp_path / "here"))
    assert default_cache_dir() == tmp_path / "here"
    monkeypatch.delenv("JAXNB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "jaxnb" / "xla"
    with pytest.raises(ValueError, match="min_compile_time_secs"):
        jaxnb.enable_compilation_cache(tmp_path, min_compile_time_secs=-1)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ValueError, match="cannot create the compilation cache directory"):
        jaxnb.enable_compilation_cache(blocker / "sub")


def test_count_compilations_counts_new_programs_only():
    import jax
    import jax.numpy as jnp

    from jaxnb.cache import count_compilations

    f = jax.jit(lambda x: jnp.cos(x) * 3.0)
    a, b, d = jnp.ones(3), jnp.zeros(3), jnp.ones(4)  # their own programs, before the block
    with count_compilations() as c:
        f(a).block_until_ready()
        first = c.n
        f(b).block_until_ready()  # same shape: cached
    assert first == 1 and c.n == 1
    f(d).block_until_ready()  # outside the block: not counted
    assert c.n == 1
