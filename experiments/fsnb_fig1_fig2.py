"""fsNB paper, Figs. 1–2: NB test error with irrelevant and redundant predictors.

Fig. 1: 100 runs (N = 1000 train, 3000 test) of the eq-12 scenario — NB on X1..X3 alone, with 50
irrelevant predictors added, and with 50 fully redundant copies of X1. Fig. 2: for one run, the test
error (overall and per class) as predictors are added one by one (X1, X2, X3, then the 50 noisy
ones). All runs are one vmapped call per configuration. The paper shows these as plots only (no
table), so we print our means; the qualitative claim to check is "both kinds of noise, but
especially redundant predictors, increase the error". CPTs are Laplace-smoothed (alpha = 1, the
library default); the paper's Eq. 4 writes the plain ML estimate.

Usage: python experiments/fsnb_fig1_fig2.py [--quick]
"""

from __future__ import annotations

import argparse
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxnb.datasets import make_fig1
from jaxnb.methods import selective as sel
from jaxnb.methods.nb import fit_stats
from jaxnb.params import fit_mle

try:
    from experiments._common import figure_path, save_json
except ImportError:
    from _common import figure_path, save_json


@partial(jax.jit, static_argnames=("n_irr", "n_red"))
def _run(key, n_irr, n_red):
    d = make_fig1(key, 1000, 3000, n_irr, n_red)
    p = 3 + n_irr + n_red
    st = fit_stats(
        d["codes_train"], d["values_train"], d["y_train"], n_states=(3,) * p, n_classes=3
    )
    o1 = fit_mle(st)
    L = sel.mle_contributions(o1, d["codes_test"], d["values_test"])  # (n, p, c)
    cum = o1.log_prior[None, None, :] + jnp.cumsum(L, axis=1)  # first k predictors, k = 1..p
    pred = jnp.argmax(cum, -1)  # (n, p)
    yte = d["y_test"][:, None]
    wrong = (pred != yte).astype(jnp.float32)
    per_class = jnp.stack([(wrong * (yte == j)).sum(0) / (yte == j).sum() for j in range(3)])
    return wrong.mean(0), per_class  # (p,), (3, p)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 runs instead of 100")
    args = ap.parse_args(argv)
    runs = 10 if args.quick else 100
    keys = jax.random.split(jax.random.PRNGKey(1), runs)
    out = {}
    for name, (ni, nr) in {"NB": (0, 0), "NB+50irr": (50, 0), "NB+50red": (0, 50)}.items():
        err, per = jax.vmap(lambda k, ni=ni, nr=nr: _run(k, ni, nr))(keys)
        out[name] = {
            "final_error": np.asarray(err[:, -1]),
            "curve_run0": np.asarray(err[0]),
            "per_class_run0": np.asarray(per[0]),
        }
        e = out[name]["final_error"]
        print(
            f"{name:9s}: mean test error {e.mean():.3f} (sd {e.std(ddof=1):.3f}) over {runs} runs",
            flush=True,
        )
    save_json("fsnb_fig1_fig2", {"runs": runs, "results": out, "quick": args.quick})
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.3))
    axes[0].boxplot([out[k]["final_error"] for k in out], tick_labels=list(out))
    axes[0].set_ylabel("test error")
    for ax, key, title in ((axes[1], "NB+50irr", "irrelevant"), (axes[2], "NB+50red", "redundant")):
        k = np.arange(1, out[key]["curve_run0"].size + 1)
        ax.plot(k, out[key]["curve_run0"], "k-", lw=2, label="all")
        for j, ls in enumerate(("--", ":", "-.")):
            ax.plot(k, out[key]["per_class_run0"][j], ls, label=f"class {j + 1}")
        ax.set_title(f"adding {title} predictors")
        ax.set_xlabel("predictors in the model")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(figure_path("fsnb_fig1_fig2"), dpi=120)


if __name__ == "__main__":
    main()
