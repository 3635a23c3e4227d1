"""Shared helpers of the fsNB / selective-NB experiment scripts (paths relative to this folder)."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import jax
import numpy as np

DEFAULT_RESULTS = Path(__file__).resolve().parent / "results"
RESULTS_ENV = "JAXNB_RESULTS_DIR"


def results_dir() -> Path:
    """Where results go: ``$JAXNB_RESULTS_DIR`` when set (relative to the working directory),
    otherwise ``experiments/results`` (the committed full-mode results)."""
    env = os.environ.get(RESULTS_ENV, "").strip()
    return Path(env).resolve() if env else DEFAULT_RESULTS


RESULTS = results_dir()

# fsNB as run in the paper's experiments (§7), as `StagewiseNB` arguments: step ε, v (the
# n_steps candidate step counts) and the early-stopping patience (chosen by
# calibrate_patience.py); one definition, so the Table-1, Table-2 and Fig.-6 scripts cannot drift
# apart.
FSNB = {"epsilon": 0.025, "n_steps": 20, "patience": 6}


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(DEFAULT_RESULTS.parent.parent))
    except ValueError:
        return str(path)


def environment() -> dict:
    """Versions and machine facts stored beside every result."""
    import jaxnb

    return {
        "jax": jax.__version__,
        "jaxnb": jaxnb.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "backend": jax.default_backend(),
        "cpu_count": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.ndarray, jax.Array)):
        return np.asarray(x).tolist()
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return x.item()
    return x


def save_json(name: str, payload: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = dict(payload)
    payload.setdefault("environment", environment())
    path.write_text(json.dumps(_jsonable(payload), indent=1))
    print(f"wrote {_shown(path)}")
    return path


def figure_path(name: str) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    return RESULTS / f"{name}.png"


def fmt(mean, std=None, digits=3):
    return f"{mean:.{digits}f}" if std is None else f"{mean:.{digits}f} (±{std:.{digits - 1}f})"


def print_table(header, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    line = lambda r: "  ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
