"""Edge cases of L1-NB's bounded LARS (a residual that reaches zero, NaN budgets), K-fold
training statistics with small weights, the weighted NB solvers with zero probabilities (alpha = 0,
a class of zero weight), and the stream estimators at their boundaries (SGD from an empty summary,
a discrete column with no value)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxnb.distributed as jd
from jaxnb import model_selection as ms
from jaxnb.estimators_penalized import WeightedNB
from jaxnb.methods import l1nb
from jaxnb.methods.weighted import LOG_FLOOR
from jaxnb.stream.anb import AveragedNB
from jaxnb.stream.online import OnlineWeightedNB


@pytest.mark.parametrize("variant", ["exact", "paper"])
def test_lars_ends_when_the_residual_reaches_zero(variant):
    """With p > n the active columns can interpolate exactly; lambda then underflowed to ~1e-15
    instead of 0, events at gamma ~ 0 beat END and cycled to max_steps (converged False, s not
    monotone, more free coefficients than rows)."""
    B = np.random.default_rng(2).dirichlet(np.ones(3), size=(10, 40))[..., 0]
    path = l1nb.bounded_lars_path(jnp.asarray(B), variant=variant)
    assert bool(path.converged)
    k = int(path.n_steps)
    assert k < 3 * 40
    assert np.all(np.diff(np.asarray(path.s)) >= 0)
    beta = np.asarray(path.beta[k])
    assert int(np.sum((beta > 0) & (beta < 1))) <= 10
    r = np.random.default_rng(69)
    n, p = int(r.integers(2, 6)), 0
    p = int(r.integers(n + 1, 9))
    small = r.dirichlet(np.ones(3), size=(n, p))[..., 0]
    assert bool(l1nb.bounded_lars_path(jnp.asarray(small), variant=variant).converged)


def test_lars_coef_at_rejects_a_nan_budget():
    B = np.random.default_rng(0).dirichlet(np.ones(3), size=(30, 5))[..., 0]
    path = l1nb.bounded_lars_path(jnp.asarray(B))
    with pytest.raises(ValueError, match="s must be >= 0"):
        l1nb.coef_at(path, np.nan)


def test_kfold_training_counts_do_not_depend_on_the_weight_scale():
    """subtract's 'empty remainder' test was absolute below a total of 1: float32 weights of 1e-6
    zeroed every training count."""
    n = 40
    y = np.arange(n) % 2
    codes = ((np.arange(n) // 2) % 4)[:, None].astype(np.int32)
    folds = (np.arange(n) // 3) % 4
    with jax.enable_x64(False):
        got = []
        for scale in (1.0, 1e-6):
            tr, _ = ms.kfold_stats(
                jnp.asarray(codes),
                jnp.zeros((n, 1), jnp.float32),
                jnp.asarray(y),
                jnp.asarray(folds),
                jnp.full(n, scale, jnp.float32),
                n_states=(4,),
                n_classes=2,
                n_folds=4,
            )
            got.append(np.asarray(tr.counts, np.float64) / scale)
    np.testing.assert_allclose(got[1], got[0], rtol=1e-5)
    assert got[0][0].T.tolist() == [[3, 3, 3, 3], [3, 5, 3, 5]]


def test_gradient_weighted_nb_with_a_class_of_zero_weight():
    """The class's log prior -inf made 0 * (-inf) = NaN: every weight and the bias were NaN.
    Its bias is floored at `LOG_FLOOR` (-87.3, both precisions; -708 in float64 before
    2026-11-29), so its probability is ~1e-38 (e^-87 times the class's terms), not 0."""
    rng = np.random.default_rng(0)
    y = np.arange(90) % 3
    X = rng.normal(size=(90, 2)) + y[:, None]
    m = WeightedNB(scheme="gradient").fit(X, y, sample_weight=(y != 2).astype(float))
    ref = WeightedNB(scheme="gradient").fit(X[y != 2], y[y != 2])
    assert m.converged_
    proba = m.predict_proba(X[:5])
    np.testing.assert_allclose(proba[:, :2], ref.predict_proba(X[:5]), atol=1e-9)
    assert (proba[:, 2] < 1e-37).all()
    assert m.bias_[2] == pytest.approx(LOG_FLOOR, abs=1.0)  # the floor, barely trained


def test_gradient_weighted_nb_with_alpha_zero_trains():
    """alpha = 0: an unseen cell's log 0 made the gradient NaN, so training stopped at step 0 and
    returned plain NB."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    Xd = np.column_stack(
        [
            np.where(y == 1, rng.integers(0, 2, 200), rng.integers(1, 3, 200)),
            np.where(rng.random(200) < 0.7, y, 1 - y),
        ]
    ).astype(float)
    m = WeightedNB(scheme="gradient", alpha=0.0, discrete="all").fit(Xd, y)
    assert m.converged_
    assert np.isfinite(m.weights_).all() and not np.allclose(m.weights_, 1.0)


@pytest.mark.skipif(jax.device_count() < 4, reason="needs 4 devices (make test sets them)")
def test_distributed_weighted_nb_with_alpha_zero_single_and_sharded():
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1], np.int32)
    c = np.array([[1], [1], [2], [1], [0], [0], [2], [1], [0]], np.int32)
    v = np.random.default_rng(0).normal(size=(9, 1))
    kw = dict(n_states=(3,), n_classes=2, alpha=0.0)
    p1, i1 = jd.fit_wnb(c, v, y, **kw)
    p4, i4 = jd.fit_wnb_sharded(c, v, y, mesh=jd.make_mesh(4), **kw)
    assert np.isfinite(float(i1.grad_norm)) and int(i1.num_steps) > 0  # was NaN, 0 steps
    assert np.isfinite(float(i4.objective))  # padding rows made it NaN
    np.testing.assert_allclose(float(i4.objective), float(i1.objective), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(p4.weights), np.asarray(p1.weights), atol=1e-6)


def test_online_weighted_nb_sgd_from_an_empty_summary_without_prior_smoothing():
    """order='weights_first', warmup=0, prior_smoothing=0: the first row saw log 0 - log 0 = NaN
    as its prior, and the NaN spread to every weight."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    X = rng.normal(size=(200, 2)) + y[:, None]
    e = OnlineWeightedNB(
        order="weights_first",
        warmup=0,
        prior_smoothing=0.0,
        var_smoothing=1.0,
        learning_rate=0.01,
    ).fit(X, y)
    assert np.isfinite(e.weights_).all() and np.isfinite(e.bias_).all()
    assert e.score(X, y) > 0.7


def test_averaged_nb_names_a_discrete_column_without_values():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    X = np.column_stack([y + rng.normal(size=200), np.full(200, np.nan)])
    with pytest.raises(ValueError, match=r"discrete columns \[1\] have no observed value"):
        AveragedNB(discrete=[1]).fit(X, y)


@pytest.mark.parametrize("summary", ["gaussian", "gkclass"])
def test_online_class_prior_counts_rows_whatever_values_they_miss(summary):
    """The prior came from the largest per-predictor count of observed values: with the missing
    values of class 0 spread over both predictors it read log 0.31 instead of log 0.46, and
    OnlineNB differed from NaiveBayes(missing='ignore') by 0.655 in log probability."""
    from jaxnb import NaiveBayes
    from jaxnb.stream.online import OnlineNB

    rng = np.random.default_rng(0)
    n = 1000
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 2)) + y[:, None]
    X[(y == 0) & (np.arange(n) % 2 == 0), 0] = np.nan
    X[(y == 0) & (np.arange(n) % 2 == 1), 1] = np.nan
    o = OnlineNB(summary=summary, prior_smoothing=0.0).fit(X, y)
    np.testing.assert_allclose(o.class_log_prior_, np.log(np.bincount(y) / n), rtol=1e-12)
    if summary == "gaussian":
        ref = NaiveBayes(missing="ignore").fit(X, y).predict_log_proba(X)
        np.testing.assert_allclose(o.predict_log_proba(X), ref, atol=1e-9)
    w = OnlineWeightedNB(summary=summary, prior_smoothing=0.0, batch_size=8).fit(X, y)
    np.testing.assert_allclose(w.class_log_prior_, np.log(np.bincount(y) / n), rtol=1e-12)


def test_online_state_without_row_counts_still_runs():
    """A state built with the six fields of earlier versions (class_rows None) made the scan's
    carry change structure."""
    from jaxnb.stream.online import OnlineState, class_counts, run_stream

    X = np.random.default_rng(0).normal(size=(16, 2))
    y = np.arange(16) % 2
    m = OnlineWeightedNB(warmup=0).fit(X, y)
    s = m.state_
    st = OnlineState(s.summary, s.cuts, s.weight, s.bias, s.opt_state, s.n_steps)
    out, _ = run_stream(
        m._cfg,
        st,
        jnp.asarray(X.reshape(16, 1, 2)),
        jnp.asarray(y.reshape(16, 1)),
        jnp.ones((16, 1), bool),
        rate=m.learning_rate,
    )
    expect = np.asarray(class_counts(s.summary)) + np.bincount(y, minlength=2)
    np.testing.assert_allclose(np.asarray(out.class_rows), expect)


def test_sweep_group_lasso_aic_choice_is_finite_with_alpha_zero_folds():
    """Held-out rows of weight 0 made the fold's training log loss 0 * (-inf) = NaN under
    alpha = 0, and the AIC choice picked the first NaN; the estimator picks a finite point."""
    from jaxnb.datasets import make_table1_batch
    from jaxnb.estimators_penalized import GroupLassoNB
    from jaxnb.methods.group_lasso import penalty_fractions
    from jaxnb.sweep import fold_ids, sweep_methods

    data, ns = make_table1_batch(jax.random.PRNGKey(1), "DR", n_datasets=1)
    data = {k: np.asarray(v) for k, v in data.items()}
    opts = {"relative": True, "adaptive": True, "alpha": 0.0, "max_steps": 50, "test_at": "aic"}
    grid = {"group_lasso": {"penalty": np.asarray(penalty_fractions(8, 1e-3))}}
    _, r = sweep_methods(data, grid, n_states=ns, folds=2, options={"group_lasso": opts})
    arr = r["group_lasso"].arrays
    assert np.isfinite(arr["train_aic"][0, :, 0, 0]).all()
    X, y = data["codes_train"][0], data["y_train"][0]
    tr = fold_ids(0, len(y), 2) != 0
    est = GroupLassoNB(
        alpha=0.0,
        n_penalties=8,
        penalty_ratio=1e-3,
        selection="aic",
        discrete="all",
        n_states=list(ns),
        max_steps=50,
    ).fit(X[tr], y[tr])
    assert int(np.argmax(arr["aic_selected"][0, :, 0, 0])) == est.selected_index_
