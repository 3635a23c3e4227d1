"""Tests for jaxnb.sweep: one compiled sweep equals looping the estimators / core fits in Python."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb import NaiveBayes
from jaxnb.methods import group_lasso as gl
from jaxnb.methods.nb import fit_stats
from jaxnb.sweep import (
    concat_tables,
    fold_ids,
    register_sweep_method,
    sweep,
    sweep_methods,
    sweep_nb,
)


@pytest.fixture(scope="module")
def table1():
    """Three small Table-1-like data sets (NumPy, so no generator compile): 3 classes, 8 ternary
    predictors of which the first 3 depend on the class, a partial copy of X1, and 4 noisy ones."""
    rng = np.random.default_rng(3)
    D, n, q = 3, 60 + 90, 8
    y = rng.integers(0, 3, (D, n))
    codes = rng.integers(0, 3, (D, n, q))
    for i in range(3):
        codes[:, :, i] = np.where(rng.random((D, n)) < 0.55, (y + i) % 3, codes[:, :, i])
    codes[:, :, 3] = np.where(rng.random((D, n)) < 0.8, codes[:, :, 0], codes[:, :, 3])
    noisy = np.broadcast_to(np.arange(q) >= 4, (D, q))
    data = {
        "codes_train": codes[:, :60],
        "values_train": np.zeros((D, 60, 0)),
        "y_train": y[:, :60],
        "codes_test": codes[:, 60:],
        "values_test": np.zeros((D, 90, 0)),
        "y_test": y[:, 60:],
        "noisy": noisy,
    }
    return {k: np.asarray(v) for k, v in data.items()}, (3,) * q


def test_nb_sweep_equals_looping_the_estimator(table1):
    data, ns = table1
    alphas, seeds, K = [0.5, 1.0, 2.0], [0, 7], 3
    res = sweep_nb(data, {"alpha": alphas}, n_states=ns, folds=K, seeds=seeds)
    assert res.arrays["valid_error"].shape == (3, 3, K, 2)
    assert len(res.rows()) == 3 * 3 * K * 2
    for d in range(3):
        X, y = data["codes_train"][d], data["y_train"][d]
        Xt, yt = data["codes_test"][d], data["y_test"][d]
        for s_i, seed in enumerate(seeds):
            ids = fold_ids(seed, X.shape[0], K)
            assert np.bincount(ids).tolist() == [20, 20, 20]
            for k in range(K):
                tr, va = ids != k, ids == k
                for h, a in enumerate(alphas):
                    m = NaiveBayes(discrete="all", n_states=list(ns), alpha=a).fit(X[tr], y[tr])
                    got = {key: v[d, h, k, s_i] for key, v in res.arrays.items()}
                    np.testing.assert_allclose(
                        got["valid_error"], np.mean(m.predict(X[va]) != y[va]), atol=1e-12
                    )
                    np.testing.assert_allclose(
                        got["test_error"], np.mean(m.predict(Xt) != yt), atol=1e-12
                    )
                    lp = m.predict_log_proba(X[va])
                    np.testing.assert_allclose(
                        got["valid_log_loss"], -np.mean(lp[np.arange(len(lp)), y[va]]), rtol=1e-10
                    )
                    lpt = m.predict_log_proba(X[tr])
                    np.testing.assert_allclose(
                        got["train_log_loss"], -np.mean(lpt[np.arange(len(lpt)), y[tr]]), rtol=1e-10
                    )
    # the tidy table holds the same numbers, in (dataset, grid, fold, seed) order
    row = res.rows()[1]
    assert (row["dataset"], row["alpha"], row["fold"], row["seed"]) == (0, 0.5, 0, 7)
    assert row["valid_error"] == res.arrays["valid_error"][0, 0, 0, 1]
    try:
        import pandas  # noqa: F401  (optional: the DataFrame view of the same table)
    except ImportError:
        return
    frame = res.to_pandas()
    assert list(frame.columns) == list(res.table.dtype.names) and len(frame) == len(res.rows())
    assert frame.iloc[1].to_dict() == pytest.approx(row)


@pytest.mark.skipif(
    jax.device_count() < 2,
    reason="needs >= 2 devices; run with XLA_FLAGS=--xla_force_host_platform_device_count=4",
)
def test_sharded_sweep_equals_single_device(table1):
    data, ns = table1
    sharded = sweep_nb(data, {"alpha": [0.5, 1.0]}, n_states=ns, folds=2, seeds=[1])
    single = sweep_nb(data, {"alpha": [0.5, 1.0]}, n_states=ns, folds=2, seeds=[1], mesh=False)
    for k in single.arrays:
        np.testing.assert_allclose(sharded.arrays[k], single.arrays[k], rtol=1e-12, atol=1e-12)


def test_fsnb_and_group_lasso_sweeps_equal_looped_fits(table1):
    from jaxnb.estimators_search import StagewiseNB

    data, ns = table1
    eps = [0.3, 0.5, 0.26]  # k_max = 4, 2, 4: two static groups, results back in grid order
    pens = [0.0, 0.3, 0.1]  # unsorted on purpose: results come back in grid order
    table, res = sweep_methods(
        data,
        {"fsnb": {"epsilon": eps, "patience": [10]}, "group_lasso": {"penalty": pens}, "nb": None},
        n_states=ns,
        options={"group_lasso": {"relative": True, "tol": 1e-9}},
    )
    assert len(table) == 3 * 3 + 3 * 3 + 3 and set(table["method"]) == {"fsnb", "group_lasso", "nb"}
    fs, glr = res["fsnb"].arrays, res["group_lasso"].arrays
    for d in range(3):
        X, y = data["codes_train"][d], data["y_train"][d]
        Xt, yt = data["codes_test"][d], data["y_test"][d]
        for h, e in enumerate(eps):  # both static groups (k_max = 4 and 2), in grid order
            m = StagewiseNB(discrete="all", n_states=list(ns), epsilon=e, patience=10).fit(X, y)
            assert fs["n_selected"][d, h, 0, 0] == m.n_selected_
            assert fs["n_iter"][d, h, 0, 0] == m.n_iter_
            assert fs["selected_iter"][d, h, 0, 0] == m.selected_iter_
            assert fs["n_evaluations"][d, h, 0, 0] == m.n_evaluations_
            np.testing.assert_array_equal(
                fs["n_noisy_selected"][d, h, 0, 0], np.sum((m.alpha_ > 0) & data["noisy"][d])
            )
            np.testing.assert_allclose(
                fs["test_error"][d, h, 0, 0], np.mean(m.predict(Xt) != yt), atol=1e-12
            )
            lp = m.predict_log_proba(Xt)
            np.testing.assert_allclose(
                fs["test_log_loss"][d, h, 0, 0], -np.mean(lp[np.arange(len(yt)), yt]), rtol=1e-10
            )
        stats = fit_stats(
            jnp.asarray(X),
            jnp.asarray(data["values_train"][d]),
            jnp.asarray(y),
            n_states=ns,
            n_classes=3,
        )
        problem = gl.make_group_lasso_problem(stats, alpha=1.0)
        lmax = gl.lambda_max(problem)
        path = gl.group_lasso_path(problem, lmax * jnp.asarray([0.3, 0.1, 0.0]), tol=1e-9)
        np.testing.assert_array_equal(
            glr["n_active"][d, :, 0, 0], np.asarray(path.n_active)[[2, 0, 1]]
        )
    # eps = 0.5 has k_max = 2: at most p * k_max = 16 moves
    assert (fs["n_iter"][:, 1] <= 16).all() and (fs["n_iter"][:, 1] >= 1).all()
    # penalty 0 is NB with the same Laplace smoothing
    np.testing.assert_allclose(
        glr["test_log_loss"][:, 0], res["nb"].arrays["test_log_loss"][:, 0], rtol=1e-6
    )
    assert (glr["n_active"][:, 1] <= glr["n_active"][:, 2]).all()
    assert (glr["n_active"][:, 1] < 8).all() and (glr["n_noisy_selected"] <= 4).all()


def test_custom_fit_eval_fn_and_validation(table1):
    data, ns = table1

    def prior_only(d, hyper, train_w, valid_w, key, *, n_states, n_classes):
        cw = jnp.zeros(n_classes).at[d["y_train"]].add(train_w) + hyper["a"]
        u = jax.random.uniform(key)
        return {"log_prior_0": jnp.log(cw[0] / cw.sum()), "u": u}

    res = sweep(prior_only, data, {"a": [0.0, 1.0]}, n_states=ns, seeds=[0, 1], name="prior")
    y0 = data["y_train"][0]
    np.testing.assert_allclose(
        res.arrays["log_prior_0"][0, 0, 0, 0], np.log(np.mean(y0 == 0)), rtol=1e-12
    )
    assert res.arrays["u"][0, 0, 0, 0] != res.arrays["u"][0, 0, 0, 1]  # seeds give distinct keys
    assert set(res.table["method"]) == {"prior"}
    register_sweep_method("prior_only_test", prior_only, default_grid={"a": [0.5]})
    table, _ = sweep_methods(data, ["prior_only_test"], n_states=ns)
    assert table["a"].tolist() == [0.5] * 3
    both = concat_tables([res.table, table])
    assert len(both) == len(res.table) + 3 and np.isnan(both["a"]).sum() == 0
    with pytest.raises(ValueError, match="missing"):
        sweep_nb({"codes_train": data["codes_train"]}, n_states=ns)
    with pytest.raises(ValueError, match="folds must be"):
        sweep_nb(data, n_states=ns, folds=1)
    with pytest.raises(ValueError, match="unknown sweep method"):
        sweep_methods(data, ["nope"], n_states=ns)


def test_length_one_axes_are_sliced_not_vmapped_with_the_same_results(table1):
    """A single seed / fold / grid point is run without vmap (`_vmap_axis`); its metrics equal the
    same task inside a vmapped axis of length > 1."""
    from jaxnb.sweep import _vmap_axis

    calls = []

    def f(x):
        calls.append(x.shape)
        return {"y": x * 2.0}

    out = _vmap_axis(f, jnp.ones((1, 3)))
    assert calls == [(3,)] and out["y"].shape == (1, 3)
    data, ns = table1
    grid = {"epsilon": [0.3], "patience": [10]}
    one = sweep_methods(data, {"fsnb": grid}, n_states=ns, seeds=(0,), folds=2)[1]["fsnb"]
    two = sweep_methods(data, {"fsnb": grid}, n_states=ns, seeds=(0, 1), folds=2)[1]["fsnb"]
    for k in ("valid_error", "n_selected", "n_iter"):
        np.testing.assert_array_equal(one.arrays[k][..., 0], two.arrays[k][..., 0])
    # batched and unbatched reductions may round differently in the last ulp
    np.testing.assert_allclose(
        one.arrays["train_log_loss"][..., 0], two.arrays["train_log_loss"][..., 0], rtol=1e-13
    )
    single = sweep_methods(data, {"fsnb": grid}, n_states=ns)[1]["fsnb"]  # S = F = H = 1
    both = sweep_methods(
        data, {"fsnb": {"epsilon": [0.3, 0.3], "patience": [10, 10]}}, n_states=ns
    )[1]["fsnb"]
    for k in ("test_error", "n_selected", "n_iter"):
        np.testing.assert_array_equal(single.arrays[k][:, 0], both.arrays[k][:, 0])


def test_progress_lines_report_each_compiled_call(table1, capsys):
    data, ns = table1
    grid = {"alpha": [0.25, 0.75, 1.25]}  # a grid length no other test uses: a new program
    sweep_nb(data, grid, n_states=ns, progress=True)
    sweep_nb(data, grid, n_states=ns, progress=True)
    sweep_nb(data, grid, n_states=ns)  # quiet by default
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("[jaxnb.sweep] nb: 3 data sets x 3 grid points x 1 folds x 1 seeds")
    assert lines[0].endswith("(first call: includes compilation)")
    assert lines[1].endswith(" s")  # the second call reuses the compiled program


def test_stack_datasets_pads_with_zero_weight_rows_and_changes_nothing(table1):
    from jaxnb.sweep import stack_datasets

    full, ns = table1
    # data set 1 is smaller: 45 training and 70 test rows (data set 0 has 60 and 90)
    sets = [
        {k: v[0] for k, v in full.items()},
        {
            k: (v[1][:45] if k.endswith("_train") else v[1][:70] if k.endswith("_test") else v[1])
            for k, v in full.items()
        },
    ]
    K = 3
    stacked, ids = stack_datasets(sets, folds=K, seed=0)
    assert stacked["codes_train"].shape == (2, 60, 8) and stacked["y_test"].shape == (2, 90)
    np.testing.assert_array_equal(stacked["weight_train"][1], np.arange(60) < 45)
    np.testing.assert_array_equal(stacked["weight_test"][1], np.arange(90) < 70)
    np.testing.assert_array_equal(ids[1, :45], fold_ids(0, 45, K))
    methods = {
        "nb": {"alpha": [1.0]},
        "wnb": {"alpha": [1.0]},
        "cfs": {"alpha": [1.0]},
        "fsnb": {"epsilon": [0.2], "patience": [4]},
        "group_lasso": {"penalty": [0.3, 0.05]},
    }
    opts = {"group_lasso": {"relative": True, "adaptive": True}}
    _, together = sweep_methods(stacked, methods, n_states=ns, folds=ids, options=opts)
    # the padded data set (1) alone, unpadded: every method's every result is unchanged (the
    # unpadded data set 0 is the ordinary batched case, covered by the loop-equality tests)
    _, alone = sweep_methods(sets[1], methods, n_states=ns, folds=K, seeds=[0], options=opts)
    for m in methods:
        for name, arr in alone[m].arrays.items():
            got = together[m].arrays[name][1:2]
            np.testing.assert_allclose(got, arr, rtol=1e-9, atol=1e-12, err_msg=f"{m} {name}")
    with pytest.raises(ValueError, match="has keys"):
        stack_datasets([sets[0], {k: v for k, v in sets[1].items() if k != "noisy"}])
    with pytest.raises(ValueError, match="same columns"):
        stack_datasets([sets[0], dict(sets[1], codes_train=sets[1]["codes_train"][:, :5])])
    with pytest.raises(TypeError, match="non-empty sequence"):
        stack_datasets(sets[0])
