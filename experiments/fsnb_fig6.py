"""fsNB paper, Fig. 6: training / test error, AIC, loss and AIC penalty along one fsNB path.

One discrete data set with the three relevant predictors of the Fig. 1 scenario (eq 12) plus 12
irrelevant ones (the paper's "three relevant variables and twelve irrelevant variables"; its
training size is not given: we use N = 300, test 3000). fsNB with ε = 0.025, v = 20, no early
stopping here so the whole path is shown (patience=None, until every α = 1; `--quick` cuts it at
60 iterations). Reports the iteration of minimum test error and of minimum AIC (the paper:
"nearly the same"), and whether the path completed (with a cut path the AIC minimum can be the
cut). CPTs are Laplace-smoothed (alpha = 1, the library default); the paper's Eq. 4 writes the
plain ML estimate.

Usage: python experiments/fsnb_fig6.py [--quick]
"""

from __future__ import annotations

import argparse

import jax
import numpy as np

from jaxnb.datasets import make_fig1
from jaxnb.methods import stagewise as sw
from jaxnb.methods.nb import fit_stats
from jaxnb.params import fit_marginal, fit_mle

try:
    from experiments._common import FSNB, figure_path, save_json
except ImportError:
    from _common import FSNB, figure_path, save_json


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter path (60 iterations)")
    args = ap.parse_args(argv)
    # enough iterations for every α to reach 1
    max_iter = 60 if args.quick else sw.default_max_iter(15, FSNB["epsilon"])
    d = make_fig1(jax.random.PRNGKey(6), n_train=300, n_test=3000, n_irrelevant=12)
    ns = (3,) * 15
    st = fit_stats(d["codes_train"], d["values_train"], d["y_train"], n_states=ns, n_classes=3)
    o1, o0 = fit_mle(st), fit_marginal(st)
    path = sw.fsnb_path(
        o1,
        o0,
        d["codes_train"],
        d["values_train"],
        d["y_train"],
        epsilon=FSNB["epsilon"],
        n_steps=FSNB["n_steps"],
        max_iter=max_iter,
        k_max=sw.n_units(FSNB["epsilon"]),
    )
    n = int(path.n_iter) + 1
    test = np.asarray(
        sw.evaluate_path(o1, o0, path.alpha[:n], d["codes_test"], d["values_test"], d["y_test"])
    )
    train = np.asarray(path.error[:n])
    aic = np.asarray(path.aic[:n])
    loss = 2 * np.asarray(path.log_loss[:n])
    pen = aic - loss
    i_test, i_aic = int(np.argmin(test)), int(np.argmin(aic))
    print(
        f"path of {n - 1} iterations; min test error {test[i_test]:.4f} at step {i_test}; "
        f"min AIC at step {i_aic} (test error there {test[i_aic]:.4f}, "
        f"{int(path.n_active[i_aic])} predictors with α > 0: "
        f"{np.flatnonzero(np.asarray(path.alpha[i_aic]) > 0).tolist()})"
    )
    save_json(
        "fsnb_fig6",
        {
            "train_error": train,
            "test_error": test,
            "aic": aic,
            "loss": loss,
            "penalty": pen,
            "alpha": np.asarray(path.alpha[:n]),
            "argmin_test": i_test,
            "argmin_aic": i_aic,
            "complete": bool(np.all(np.asarray(path.alpha[n - 1]) >= 1.0)),
            "quick": args.quick,
        },
    )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.3))
    a1.plot(train, "--", label="train error")
    a1.plot(test, "-", label="test error")
    a1.axvline(i_test, color="gray", lw=0.8)
    a1.set_xlabel("step")
    a1.legend()
    a2.plot(aic, "-", label="AIC")
    a2.plot(loss, "--", label="loss Q")
    a2.plot(pen, "-.", label="penalty 2d/N")
    a2.axvline(i_aic, color="gray", lw=0.8)
    a2.set_xlabel("step")
    a2.legend()
    fig.tight_layout()
    fig.savefig(figure_path("fsnb_fig6"), dpi=120)


if __name__ == "__main__":
    main()
