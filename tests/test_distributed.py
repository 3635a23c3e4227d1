"""Tests for jaxnb.distributed: sharded statistics, sharded row-sum losses, WNB and group lasso.

The suite runs with ``XLA_FLAGS=--xla_force_host_platform_device_count=4`` (``make test``), which
gives 4 CPU devices; tests that need several devices skip with a reason otherwise.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxnb.distributed as jd
import jaxnb.likelihood as lk
from jaxnb.methods import group_lasso as gl
from jaxnb.methods.nb import fit_nb, fit_stats

N_STATES = (3, 4, 2)
C = 3
MULTI = pytest.mark.skipif(
    jax.device_count() < 2,
    reason="needs >= 2 devices; run with XLA_FLAGS=--xla_force_host_platform_device_count=4",
)


def _data(seed, n=203, r=2, missing=False):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n).astype(np.int32)
    codes = np.stack([rng.integers(0, m, n) for m in N_STATES], 1).astype(np.int32)
    codes[:, 0] = np.where(rng.random(n) < 0.6, y % 3, codes[:, 0])
    # a large common offset makes the Gaussian merge numerically meaningful
    values = rng.normal(1e3, 2.0, (n, r)) + 0.8 * y[:, None]
    if missing:
        codes[rng.random((n, len(N_STATES))) < 0.1] = -1
        values[rng.random((n, r)) < 0.1] = np.nan
    w = rng.uniform(0.2, 2.0, n)
    return codes, values, y, w


def _assert_tree_close(a, b, rtol, atol):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


@MULTI
@pytest.mark.parametrize("missing", [False, True])
def test_sharded_stats_and_params_equal_single_device(missing):
    codes, values, y, w = _data(0, missing=missing)  # 203 rows: not a multiple of 4 -> padding
    mesh = jd.make_mesh(4)
    stats = jd.fit_stats_sharded(codes, values, y, w, n_states=N_STATES, n_classes=C, mesh=mesh)
    ref = fit_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=N_STATES,
        n_classes=C,
    )
    _assert_tree_close(stats, ref, rtol=1e-10, atol=1e-9)
    params = jd.fit_nb_sharded(
        codes, values, y, w, n_states=N_STATES, n_classes=C, mesh=mesh, alpha=0.5
    )
    want = fit_nb(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        0.5,
        n_states=N_STATES,
        n_classes=C,
    )
    _assert_tree_close(params, want, rtol=1e-6, atol=1e-6)
    # result is replicated over the mesh
    assert stats.counts.sharding.is_fully_replicated
    # float64 NumPy reference of the class moments (not only self-consistency)
    for j in range(C):
        for t in range(values.shape[1]):
            sel = (y == j) & np.isfinite(values[:, t])
            mu = np.average(values[sel, t], weights=w[sel])
            np.testing.assert_allclose(stats.mean[j, t], mu, rtol=1e-12)
            np.testing.assert_allclose(
                stats.m2[j, t], np.sum(w[sel] * (values[sel, t] - mu) ** 2), rtol=1e-9
            )


@MULTI
def test_sharded_stats_float32_within_1e6():
    codes, values, y, w = _data(1, n=4000)
    ref = fit_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=N_STATES,
        n_classes=C,
    )
    with jax.enable_x64(False):
        s32 = jd.fit_stats_sharded(
            codes,
            values.astype(np.float32),
            y,
            w.astype(np.float32),
            n_states=N_STATES,
            n_classes=C,
            mesh=jd.make_mesh(4),
        )
        assert s32.mean.dtype == jnp.float32
    # float32 sharded fit vs the float64 single-device truth, on what NB uses
    np.testing.assert_allclose(s32.mean, ref.mean, rtol=1e-6)
    np.testing.assert_allclose(
        np.sqrt(s32.m2 / s32.weight), np.sqrt(ref.m2 / ref.weight), rtol=1e-4
    )  # inputs ~1e3 rounded to float32 (6e-5) vs sd ~2
    np.testing.assert_allclose(s32.counts, ref.counts, rtol=1e-6)
    np.testing.assert_allclose(s32.class_weight, ref.class_weight, rtol=1e-6)


def test_pad_rows_adds_weight_zero_rows_and_one_device_mesh_works():
    codes, values, y, w = _data(2, n=10)
    c2, v2, y2, w2 = jd.pad_rows(codes, values, y, w, multiple=4)
    assert c2.shape[0] == 12 and (w2[10:] == 0).all() and (c2[10:] == 0).all()
    mesh1 = jd.make_mesh(1)
    stats = jd.fit_stats_sharded(codes, values, y, w, n_states=N_STATES, n_classes=C, mesh=mesh1)
    ref = fit_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=N_STATES,
        n_classes=C,
    )
    _assert_tree_close(stats, ref, rtol=1e-12, atol=1e-12)


def test_merge_stacked_stats_equals_one_pass():
    """Per-part statistics (as from processes or chunks) merged with the pooled form == one pass."""
    codes, values, y, w = _data(8, n=90, missing=True)
    parts = [
        fit_stats(
            jnp.asarray(codes[a:b]),
            jnp.asarray(values[a:b]),
            jnp.asarray(y[a:b]),
            jnp.asarray(w[a:b]),
            n_states=N_STATES,
            n_classes=C,
        )
        for a, b in [(0, 7), (7, 50), (50, 90)]
    ]
    stacked = jax.tree.map(lambda *a: jnp.stack(a), *parts)
    ref = fit_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=N_STATES,
        n_classes=C,
    )
    _assert_tree_close(jd.merge_stacked_stats(stacked), ref, rtol=1e-10, atol=1e-9)
    assert jd.merge_stats_across_processes(ref) is ref  # one process: unchanged


def test_validation_errors_name_the_argument():
    codes, values, y, w = _data(3, n=12)
    mesh = jd.make_mesh(1)
    bad = codes.copy()
    bad[0, 1] = 7
    with pytest.raises(ValueError, match="codes must lie"):
        jd.fit_stats_sharded(bad, values, y, w, n_states=N_STATES, n_classes=C, mesh=mesh)
    with pytest.raises(ValueError, match="y must hold class codes"):
        jd.fit_stats_sharded(codes, values, y + 5, w, n_states=N_STATES, n_classes=C, mesh=mesh)
    with pytest.raises(ValueError, match="n_states"):
        jd.fit_stats_sharded(codes, values, y, w, n_states=(3, 4), n_classes=C, mesh=mesh)
    with pytest.raises(ValueError, match="n_devices"):
        jd.make_mesh(jax.device_count() + 1)


@MULTI
def test_process_local_rows_single_process_equals_shard_rows():
    codes, values, y, w = _data(4, n=21)
    mesh = jd.make_mesh(4)
    g = jd.shard_process_local_rows(codes, values, y, w, mesh=mesh)
    s = jd.shard_rows(codes, values, y, w, mesh=mesh)
    for a, b in zip(g, s, strict=True):
        assert a.shape == b.shape == (24,) + a.shape[1:]
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    stats = jd.fit_stats_sharded(*g, n_states=N_STATES, n_classes=C, mesh=mesh)
    ref = fit_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=N_STATES,
        n_classes=C,
    )
    _assert_tree_close(stats, ref, rtol=1e-10, atol=1e-9)


def _quadratic_row_loss(theta, data):
    r = data["x"] @ theta - data["t"]
    return jnp.sum(data["weight"] * r * r)


@MULTI
def test_sharded_value_and_grad_equals_single_device():
    rng = np.random.default_rng(5)
    x, t, wt = rng.normal(size=(18, 3)), rng.normal(size=18), rng.random(18)
    mesh = jd.make_mesh(4)
    _, xp, tp, wp = jd.pad_rows(np.zeros((18, 0), np.int32), x, t, wt, multiple=4)
    data = dict(x=jnp.asarray(xp), t=jnp.asarray(tp), weight=jnp.asarray(wp))
    theta = jnp.asarray([0.3, -1.0, 2.0])
    v, g = jax.jit(lambda th, d: jd.sharded_value_and_grad(_quadratic_row_loss, th, d, mesh))(
        theta, data
    )
    r = x @ np.asarray(theta) - t
    np.testing.assert_allclose(v, np.sum(wt * r * r), rtol=1e-12)
    np.testing.assert_allclose(g, 2 * x.T @ (wt * r), rtol=1e-12)


@MULTI
def test_group_lasso_is_data_parallel_through_statistics():
    """Row-sum NLL (sharded, psum of value and gradient) == NLL from psum'ed statistics."""
    codes, values, y, w = _data(6, n=150, r=2)
    values = values - 1e3
    mesh = jd.make_mesh(4)
    stats, problem, path = jd.fit_group_lasso_sharded(
        codes,
        values,
        y,
        w,
        n_states=N_STATES,
        n_classes=C,
        mesh=mesh,
        penalties=jnp.asarray([0.05, 0.01, 0.0]),
        alpha=0.0,
        tol=1e-9,
    )
    ref_stats = fit_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=N_STATES,
        n_classes=C,
    )
    _assert_tree_close(stats, ref_stats, rtol=1e-10, atol=1e-9)
    # single device (a 1-device mesh runs the same compiled path solver)
    _, _, ref_path = jd.fit_group_lasso_sharded(
        codes,
        values,
        y,
        w,
        n_states=N_STATES,
        n_classes=C,
        mesh=jd.make_mesh(1),
        penalties=jnp.asarray([0.05, 0.01, 0.0]),
        alpha=0.0,
        tol=1e-9,
    )
    _assert_tree_close(path.params, ref_path.params, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(path.active, ref_path.active)
    assert 0 < int(path.n_active[0]) < len(N_STATES) + 2 == int(path.n_active[-1])
    assert bool(path.info.converged.all())

    # The same NLL as an explicit sum over rows, differentiated through shard_map.
    off = np.concatenate([[0], np.cumsum(N_STATES)[:-1]])

    def row_nll(params, d):
        lt = jnp.log(params.cpt[d["codes"] + off[None, :], d["y"][:, None]]).sum(1)
        mu, sd = params.mean[d["y"]], params.std[d["y"]]
        lg = (-jnp.log(sd) - 0.5 * ((d["values"] - mu) / sd) ** 2).sum(1)
        return -jnp.sum(d["weight"] * (lt + lg))

    pc, pv, py, pw = jd.pad_rows(codes, values, y, w, multiple=4)
    data = dict(
        codes=jnp.asarray(pc), values=jnp.asarray(pv), y=jnp.asarray(py), weight=jnp.asarray(pw)
    )
    at = jax.tree.map(lambda a: a[1], path.params)  # an interior solution of the path
    v_rows, g_rows = jd.sharded_value_and_grad(row_nll, at, data, mesh)
    v_stats, g_stats = jax.value_and_grad(
        lambda p: problem.total * gl.negative_log_likelihood(problem, p)
    )(at)
    np.testing.assert_allclose(v_rows, v_stats, rtol=1e-10)
    _assert_tree_close(g_rows, g_stats, rtol=1e-8, atol=1e-8)


@MULTI
def test_sharded_wnb_converges_to_single_device_optimum():
    codes, values, y, w = _data(7, n=301)
    values = values - 1e3
    mesh = jd.make_mesh(4)
    kw = dict(n_states=N_STATES, n_classes=C, l2=1e-2, tol=1e-9, max_steps=300)
    sharded, info = jd.fit_wnb_sharded(codes, values, y, w, mesh=mesh, **kw)
    single, info1 = jd.fit_wnb(codes, values, y, w, **kw)
    assert bool(info.converged) and bool(info1.converged)
    # strong convexity (modulus >= l2): ||theta - theta*|| <= ||grad|| / l2 <= 1e-7 for each fit
    np.testing.assert_allclose(sharded.weights, single.weights, atol=1e-6)
    np.testing.assert_allclose(sharded.bias, single.bias, atol=1e-6)
    np.testing.assert_allclose(info.objective, info1.objective, rtol=1e-10)
    # the optimum differs from NB (W = 1) and beats it on its own objective
    assert np.abs(np.asarray(sharded.weights) - 1).max() > 1e-3
    lp = jd.predict_wnb(sharded, jnp.asarray(codes), jnp.asarray(values))
    np.testing.assert_allclose(np.exp(lp).sum(-1), 1.0, rtol=1e-12)


@MULTI
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_constant_column_merges_to_exactly_its_value(dtype):
    """Σ_d W_d mean_d / W rounds: a constant column's merged class means differed by an ulp and
    its m2 came out > 0 (float32, 4 devices, 1e6 + 0.1: m2 1.3), so it looked varying. Offsets
    from a common reference merge it exactly, across devices and across stacked parts."""
    rng = np.random.default_rng(4)
    n = 1003
    y = rng.integers(0, C, n).astype(np.int32)
    values = np.c_[np.full(n, 1e6 + 0.1), np.full(n, 3.7), rng.normal(size=n)].astype(dtype)
    codes, w = np.zeros((n, 0), np.int32), np.ones(n, dtype)
    with jax.enable_x64(dtype == np.float64):
        mesh = jd.make_mesh(4)
        st = jd.fit_stats_sharded(
            *jd.pad_rows(codes, values, y, w, multiple=4), n_states=(), n_classes=C, mesh=mesh
        )
        parts = [
            fit_stats(codes[i::5], values[i::5], y[i::5], w[i::5], n_states=(), n_classes=C)
            for i in range(5)
        ]
        stacked = jd.merge_stacked_stats(jax.tree.map(lambda *a: jnp.stack(a), *parts))
        for merged in (st, stacked):
            assert np.asarray(merged.mean).dtype == dtype
            np.testing.assert_array_equal(np.asarray(merged.m2)[:, :2], 0.0)
            assert np.all(np.asarray(merged.mean)[:, :2] == values[0, :2][None])
            assert np.all(np.asarray(merged.m2)[:, 2] > 0)
        np.testing.assert_allclose(st.m2[:, 2], stacked.m2[:, 2], rtol=1e-5)


def test_wnb_optimum_and_probabilities_do_not_depend_on_units():
    """Rescaling a continuous column by a shifts class j's raw term by -w_ij log a; the ridge
    pulls the bias toward log pi, so on the raw terms the optimum moved with the units. On the
    standardized terms (log f + log s_i, the default) it does not, missing values included."""
    codes, values, y, w = _data(13, n=240, missing=True)
    values = values - 1e3
    kw = dict(n_states=N_STATES, n_classes=C, l2=1e-2, tol=1e-10)
    ref, info = jd.fit_wnb(codes, values, y, w, **kw)
    assert bool(info.converged)
    P = np.exp(np.asarray(jd.predict_wnb(ref, jnp.asarray(codes), jnp.asarray(values))))
    # log s_i: the weighted sd (ddof 0) of each continuous column's observed values; 0 discrete
    seen = ~np.isnan(values)
    want = np.zeros(len(N_STATES) + values.shape[1])
    for i in range(values.shape[1]):
        x, wi = values[seen[:, i], i], w[seen[:, i]]
        want[len(N_STATES) + i] = 0.5 * np.log(
            np.sum(wi * (x - np.average(x, weights=wi)) ** 2) / wi.sum()
        )
    np.testing.assert_allclose(np.asarray(ref.log_scale), want, rtol=1e-10, atol=1e-14)
    # the score: bias + sum_i W_ij (log f + log s_i) over the observed values
    L = np.asarray(lk.log_contributions(ref.nb, jnp.asarray(codes), jnp.asarray(values)))
    obs = np.concatenate([codes >= 0, seen], axis=1)
    S = np.asarray(ref.bias) + np.einsum(
        "rpc,pc->rc", L + obs[:, :, None] * want[None, :, None], np.asarray(ref.weights)
    )
    np.testing.assert_allclose(
        np.asarray(jd.wnb_log_joint(ref.nb, ref.weights, ref.bias, codes, values, ref.log_scale)),
        S,
        rtol=1e-10,
    )
    raw_gap = 0.0
    for units in (1e-6, 1e6):
        scaled = values * (units * np.array([1.0, 3.0]))
        got, info = jd.fit_wnb(codes, scaled, y, w, **kw)
        Q = np.exp(np.asarray(jd.predict_wnb(got, jnp.asarray(codes), jnp.asarray(scaled))))
        np.testing.assert_allclose(Q, P, atol=1e-7, rtol=0)
        np.testing.assert_allclose(np.asarray(got.weights), np.asarray(ref.weights), atol=1e-6)
        raw, _ = jd.fit_wnb(codes, scaled, y, w, standardize=False, **kw)
        R = np.exp(np.asarray(jd.predict_wnb(raw, jnp.asarray(codes), jnp.asarray(scaled))))
        assert raw.log_scale is None
        raw_gap = max(raw_gap, np.abs(R - P).max())
    assert raw_gap > 1e-2  # the paper's raw terms: the optimum moves with the units


def test_wnb_row_loss_blocks_do_not_change_value_or_gradient():
    codes, values, y, w = _data(9, n=301)
    values = values - 1e3
    nb = fit_nb(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=N_STATES,
        n_classes=C,
    )
    data = dict(
        codes=jnp.asarray(codes),
        values=jnp.asarray(values),
        y=jnp.asarray(y),
        weight=jnp.asarray(w),
    )
    W = 1.0 + 0.1 * jnp.arange(15.0).reshape(5, 3) / 15
    b = nb.log_prior + 0.2

    def vg(rows):
        f = lambda W, b: jd.wnb_row_loss(nb, W, b, data, block_rows=rows)
        return jax.value_and_grad(f, argnums=(0, 1))(W, b)

    (v1, g1), (v2, g2) = vg(64), vg(10_000)  # 4 blocks + a ragged tail vs one block
    np.testing.assert_allclose(v1, v2, rtol=1e-12)
    _assert_tree_close(g1, g2, rtol=1e-10, atol=1e-12)


@MULTI
@pytest.mark.parametrize("weighted", [False, True])
def test_log_joint_inside_shard_map_with_more_local_rows_than_one_block(weighted):
    # log_joint loops over row blocks; inside shard_map its initial carry did not vary over the
    # mesh axis like the loop body's output, and more local rows than one block raised TypeError
    from jax.sharding import PartitionSpec as P

    import jaxnb.likelihood as lk

    d = jax.device_count()
    width = sum(N_STATES) + 12 * 2
    n = d * (2 * lk._rows_per_block(width) + 37)  # two whole blocks and a tail on every device
    codes, values, y, w = _data(11, n=n, missing=True)
    params = fit_nb(codes, values, y, w, n_states=N_STATES, n_classes=C)
    mesh = jd.make_mesh(d)
    weights = jnp.linspace(0.5, 1.5, len(N_STATES) + 2) if weighted else None

    def local(c, v):
        return lk.log_joint(params, c, v, weights)

    spec = P(jd.DATA_AXIS)
    got = jax.jit(jax.shard_map(local, mesh=mesh, in_specs=(spec, spec), out_specs=spec))(
        *jd.shard_rows(codes, values, y, mesh=mesh)[:2]
    )
    np.testing.assert_allclose(np.asarray(got), np.asarray(local(codes, values)), rtol=1e-12)


def _flags_rows():
    """Flags as (codes, values, y, n_states), encoded as the estimators encode it."""
    from jaxnb.data import FeatureEncoder, encode_labels
    from jaxnb.datasets import load_flags

    X, y, _, numeric = load_flags()
    enc = FeatureEncoder(discrete=np.flatnonzero(~np.asarray(numeric)).tolist()).fit(X)
    codes, values = enc.transform(X, dtype=np.float64)
    return codes, values, encode_labels(y)[1], list(enc.n_states_)


def test_wnb_on_flags_fits_the_same_model_in_both_precisions():
    """Flags has standardized Gaussian terms near -4e10 (a class whose column barely varies, at
    the 1e-9 variance floor). Unfloored, the objective started near 3e13 and neither precision
    converged in 2000 L-BFGS steps; posteriors were 1.0 apart, 188 of 194 predictions differed.
    The terms are floored at LOG_FLOOR in both precisions, as `WeightedNB` floors them."""
    from jaxnb.methods import weighted as wt

    codes, values, y, n_states = _flags_rows()
    kw = dict(n_states=n_states, n_classes=int(y.max()) + 1)
    ref, info = jd.fit_wnb(codes, values, y, tol=1e-7, **kw)
    assert bool(info.converged) and float(info.objective) < 1.0
    P64 = np.exp(np.asarray(jd.predict_wnb(ref, codes, values)))
    # the scores are bias + sum of the weighted floored terms, some of them at the floor
    L = np.asarray(wt.model_terms(ref.nb, codes, values, ref.log_scale, ref.keep))
    assert L.min() == pytest.approx(wt.LOG_FLOOR) and (L == L.min()).sum() > 100
    S = np.asarray(ref.bias)[None] + np.einsum("rpc,pc->rc", L, np.asarray(ref.weights))
    np.testing.assert_allclose(
        np.asarray(jd.wnb_log_joint(ref.nb, ref.weights, ref.bias, codes, values, ref.log_scale)),
        S,
        rtol=1e-12,
    )
    with jax.enable_x64(False):
        got, _ = jd.fit_wnb(codes, values, y, **kw)
        P32 = np.exp(np.asarray(jd.predict_wnb(got, codes, values), np.float64))
    np.testing.assert_allclose(P32, P64, atol=1e-4)
    assert (P32.argmax(1) == P64.argmax(1)).all()


def test_wnb_gives_a_constant_column_no_term():
    """A continuous column without spread has no standardized density (log s = 0 by
    convention): its term is 0, so the fit equals the fit without it (as `WeightedNB`). Before,
    its class-independent term times per-class weights acted as a second bias (log posteriors
    0.012 from the fit without the column)."""
    codes, values, y, w = _data(21, n=250)
    values = values - 1e3
    kw = dict(n_states=N_STATES, n_classes=C, l2=1e-2, tol=1e-10)
    ref, info = jd.fit_wnb(codes, values, y, w, **kw)
    wide = np.c_[values[:, :1], np.full(len(y), 3.5), values[:, 1:]]
    got, info2 = jd.fit_wnb(codes, wide, y, w, **kw)
    assert bool(info.converged) and bool(info2.converged)
    np.testing.assert_array_equal(np.asarray(got.keep), [True] * 4 + [False] + [True])
    np.testing.assert_allclose(
        np.asarray(jd.predict_wnb(got, codes, wide)),
        np.asarray(jd.predict_wnb(ref, codes, values)),
        atol=1e-7,
        rtol=0,
    )
    np.testing.assert_allclose(np.asarray(got.weights)[4], 1.0)  # untouched: only the ridge


def test_float32_wnb_stops_at_its_rounding_floor():
    """float32 cannot reach the default tol 1e-8: the default L-BFGS ran all of max_steps (500)
    at gradient norm ~2e-7 and said only 'not converged'. It now stops once 30 steps in a row
    lower the objective by at most 4 ulps without a new smallest gradient norm, and says so
    (``stalled``), its posteriors as close to the float64 optimum as 500 steps got them."""
    rng = np.random.default_rng(0)
    n, q, r = 4000, 6, 6
    y = rng.integers(0, C, n).astype(np.int32)
    codes = rng.integers(0, 4, (n, q)).astype(np.int32)
    values = rng.normal(size=(n, r)) + 0.3 * y[:, None]
    kw = dict(n_states=(4,) * q, n_classes=C)
    ref, info64 = jd.fit_wnb(codes, values, y, tol=1e-11, **kw)
    assert bool(info64.converged) and not bool(info64.stalled)
    P64 = np.exp(np.asarray(jd.predict_wnb(ref, codes, values)))
    with jax.enable_x64(False):
        v32 = values.astype(np.float32)
        got, info = jd.fit_wnb(codes, v32, y, **kw)
        P32 = np.exp(np.asarray(jd.predict_wnb(got, codes, v32), np.float64))
        assert bool(info.stalled) and not bool(info.converged)
        assert int(info.num_steps) < 300 and float(info.grad_norm) < 1e-5
        # another optax transform never counts as stalled
        _, sgd = jd.fit_wnb(codes, v32, y, optimizer=optax.sgd(0.1), max_steps=40, **kw)
        assert int(sgd.num_steps) == 40 and not bool(sgd.stalled)
    np.testing.assert_allclose(P32, P64, atol=2e-5)
