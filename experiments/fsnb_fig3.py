"""fsNB paper, Figs. 3–4: test error over a grid of (α2, α3) with X1 fully included (α1 = 1).

Discrete (Fig. 3): the eq-12 scenario (N = 1000 train, 3000 test). Continuous (Fig. 4): a Gaussian
analogue we define (the paper gives no parameters): X1 ~ N((1.5, 0, 0)_y, 1) separates class 1,
X2 and X3 ~ N((0, −1, 1)_y, 1) separate classes 2 and 3. "Independent": X2, X3 drawn independently;
"redundant": x_r3 := x_r2 on a proportion ``--copy`` (default 0.6, our choice; the paper does not
give it) of the rows, train and test. Ω(α) interpolates each predictor between Ω⁽⁰⁾ and Ω⁽¹⁾
(Eq. 13); the error surface is averaged over runs (one vmapped call). Claim to check: the minimum
is at α2 = α3 = 1 when independent and inside (0, 1)² when redundant. CPTs are Laplace-smoothed
(alpha = 1, the library default); the paper's Eq. 4 writes the plain ML estimate.

Usage: python experiments/fsnb_fig3.py [--quick] [--copy 0.6]
"""

from __future__ import annotations

import argparse
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxnb.datasets import make_fig1
from jaxnb.methods import stagewise as sw
from jaxnb.methods.nb import fit_stats
from jaxnb.params import fit_marginal, fit_mle

try:
    from experiments._common import figure_path, save_json
except ImportError:
    from _common import figure_path, save_json


def _data(key, discrete, copy):
    k1, k2, k3 = jax.random.split(key, 3)
    if discrete:
        d = make_fig1(k1, 1000, 3000)
        X = jnp.concatenate([d["codes_train"], d["codes_test"]]).astype(jnp.float32)
        y = jnp.concatenate([d["y_train"], d["y_test"]])
    else:
        y = jax.random.randint(k1, (4000,), 0, 3)
        mu = jnp.asarray([[1.5, 0.0, 0.0], [0.0, -1.0, 1.0], [0.0, -1.0, 1.0]])  # (pred, class)
        X = mu[:, y].T + jax.random.normal(k2, (4000, 3))
    same = jax.random.bernoulli(k3, copy, (4000,))
    X = X.at[:, 2].set(jnp.where(same, X[:, 1], X[:, 2]))
    return X, y


@partial(jax.jit, static_argnames=("discrete", "n_grid"))
def _surface(key, copy, discrete, n_grid):
    X, y = _data(key, discrete, copy)
    if discrete:
        codes, values, ns = X.astype(jnp.int32), jnp.zeros((4000, 0)), (3, 3, 3)
    else:
        codes, values, ns = jnp.zeros((4000, 0), jnp.int32), X, ()
    tr = slice(0, 1000)
    st = fit_stats(codes[tr], values[tr], y[tr], n_states=ns, n_classes=3)
    o1, o0 = fit_mle(st), fit_marginal(st)
    g = jnp.linspace(0.0, 1.0, n_grid)
    a2, a3 = jnp.meshgrid(g, g, indexing="ij")
    A = jnp.stack([jnp.ones(a2.size), a2.ravel(), a3.ravel()], 1)
    err = sw.evaluate_path(o1, o0, A, codes[1000:], values[1000:], y[1000:])
    return err.reshape(n_grid, n_grid)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 runs, 6x6 grid")
    ap.add_argument("--copy", type=float, default=0.6)
    args = ap.parse_args(argv)
    runs, n_grid = (5, 6) if args.quick else (50, 11)
    keys = jax.random.split(jax.random.PRNGKey(3), runs)
    grid = np.linspace(0, 1, n_grid)
    out = {}
    for discrete in (True, False):
        for label, copy in (("independent", 0.0), ("redundant", args.copy)):
            surf = np.asarray(
                jax.vmap(lambda k, c=copy, d=discrete: _surface(k, c, d, n_grid))(keys)
            ).mean(0)
            i, j = np.unravel_index(np.argmin(surf), surf.shape)
            name = f"{'discrete' if discrete else 'continuous'}_{label}"
            out[name] = {
                "error": surf,
                "argmin_alpha2": grid[i],
                "argmin_alpha3": grid[j],
                "min_error": surf[i, j],
                "error_at_1_1": surf[-1, -1],
            }
            print(
                f"{name:24s}: min mean test error {surf[i, j]:.4f} at (α2, α3) = "
                f"({grid[i]:.2f}, {grid[j]:.2f}); at (1, 1): {surf[-1, -1]:.4f}",
                flush=True,
            )
    save_json(
        "fsnb_fig3",
        {"runs": runs, "grid": grid, "copy": args.copy, "results": out, "quick": args.quick},
    )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(14, 3.3))
    for ax, (name, r) in zip(axes, out.items(), strict=True):
        im = ax.imshow(r["error"], origin="lower", extent=(0, 1, 0, 1), aspect="auto")
        ax.plot(r["argmin_alpha3"], r["argmin_alpha2"], "r*")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("α3")
        ax.set_ylabel("α2")
        fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(figure_path("fsnb_fig3"), dpi=120)


if __name__ == "__main__":
    main()
