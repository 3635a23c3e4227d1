"""Eager input checks of model selection, weighted NB and the sharded fits (each defect here gave a
silently wrong answer before), and that valid inputs, traced inputs included, are unchanged.

Multi-device tests need ``XLA_FLAGS=--xla_force_host_platform_device_count=4``; they skip
otherwise.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxnb.distributed as jd
from jaxnb import model_selection as ms
from jaxnb.methods import weighted as wt
from jaxnb.methods.nb import fit_nb, fit_stats
from jaxnb.suffstats import subtract

MULTI4 = pytest.mark.skipif(
    jax.device_count() < 4,
    reason="needs >= 4 devices; run with XLA_FLAGS=--xla_force_host_platform_device_count=4",
)
LEAVES = ("class_weight", "counts", "weight", "mean", "m2")


def _rows(seed=0, n=40, n_states=(3, 2), c=2, r=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n).astype(np.int32)
    codes = np.stack([rng.integers(0, m, n) for m in n_states], 1).astype(np.int32)
    values = rng.normal(size=(n, r)) + y[:, None]
    w = rng.uniform(0.5, 2.0, n)
    return codes, values, y, w


def _close(a, b, rtol=1e-12, atol=1e-12):
    for x, z in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(z), rtol=rtol, atol=atol)


# ------------------------------------------------------------------------------ kfold_stats
def _kfold(codes, values, y, folds, w, n_states=(3, 2), n_classes=2, n_folds=3):
    return ms.kfold_stats(
        codes, values, y, folds, w, n_states=n_states, n_classes=n_classes, n_folds=n_folds
    )


def test_kfold_stats_rejects_rows_fit_stats_rejects():
    codes, values, y, w = _rows()
    folds = np.arange(len(y)) % 3
    bad_y = y.copy()
    bad_y[4] = 5  # was silently dropped from every fold
    with pytest.raises(ValueError, match=r"y must hold integer class codes in \[0, n_classes=2\)"):
        _kfold(codes, values, bad_y, folds, w)
    bad_c = codes.copy()
    bad_c[2, 0] = 7
    with pytest.raises(ValueError, match=r"codes\[:, 0\] holds 7 but n_states\[0\] = 3"):
        _kfold(bad_c, values, y, folds, w)
    with pytest.raises(ValueError, match="weight must be finite and >= 0"):
        _kfold(codes, values, y, folds, np.where(np.arange(len(y)) == 3, -1.0, w))
    bad_v = values.copy()
    bad_v[1, 1] = np.inf
    with pytest.raises(ValueError, match="values contain inf"):
        _kfold(codes, bad_v, y, folds, w)
    with pytest.raises(TypeError, match="codes must be integers"):
        _kfold(codes + 0.5, values, y, folds, w)
    with pytest.raises(ValueError, match=r"folds must have shape \(n,\)"):
        _kfold(codes, values, y, folds[:1], w)
    with pytest.raises(TypeError, match="n_states must be a tuple"):
        _kfold(codes, values, y, folds, w, n_states=3)


def test_kfold_stats_equal_total_minus_fold_and_under_jit():
    codes, values, y, w = _rows(1)
    codes[::7, 1] = -2  # every negative code is missing, as in fit_stats
    values[::5, 0] = np.nan
    folds = ms.stratified_folds(y, 3, seed=0)
    train, fold = _kfold(codes, values, y, folds, w)
    stats = lambda wt_: fit_stats(codes, values, y, wt_, n_states=(3, 2), n_classes=2)
    total = stats(w)
    for k in range(3):
        part = stats(w * (folds == k))
        want = subtract(total, part)
        for name in LEAVES:
            np.testing.assert_allclose(
                np.asarray(getattr(train, name)[k]), np.asarray(getattr(want, name)), atol=1e-10
            )
            np.testing.assert_allclose(
                np.asarray(getattr(fold, name)[k]), np.asarray(getattr(part, name)), atol=1e-10
            )
    # inside a caller's jit the rows are tracers: no value check, same result
    jitted = jax.jit(lambda c, v, yy, f, ww: _kfold(c, v, yy, f, ww))(codes, values, y, folds, w)
    _close(jitted, (train, fold), rtol=1e-10, atol=1e-10)


# ------------------------------------------------------------------------------------- aic
def test_aic_checks_labels_and_weights():
    rng = np.random.default_rng(0)
    lp = jnp.asarray(np.log(rng.dirichlet(np.ones(3), 6)))
    y = np.array([0, 1, 2, 0, 1, 2])
    match_y = r"y must hold integer class codes in \[0, c=3\)"
    with pytest.raises(ValueError, match=match_y + r".*range \[-1, 1\]"):
        ms.aic(lp, jnp.asarray(np.where(y == 2, -1, y)), 2)  # wrapped to the last class
    with pytest.raises(ValueError, match=match_y + r".*range \[0, 3\]"):
        ms.aic(lp, jnp.asarray(y + (y == 2)), 2)  # gave NaN
    with pytest.raises(ValueError, match=match_y + ".*float64"):
        ms.aic(lp, jnp.asarray(y, float), 2)
    with pytest.raises(ValueError, match=r"y must have shape \(n,\) = \(6,\)"):
        ms.aic(lp, jnp.asarray(y[:5]), 2)
    with pytest.raises(ValueError, match=r"weight must have shape \(n,\) = \(6,\)"):
        ms.aic(lp, jnp.asarray(y), 2, weight=jnp.ones(1))  # was broadcast: N = 1
    with pytest.raises(ValueError, match="weight must have a positive sum"):
        ms.aic(lp, jnp.asarray(y), 2, weight=jnp.zeros(6))  # was NaN
    with pytest.raises(ValueError, match="weight must be finite"):
        ms.aic(lp, jnp.asarray(y), 2, weight=jnp.asarray([1.0, np.nan, 1, 1, 1, 1]))
    with pytest.raises(ValueError, match="weight must be finite"):
        ms.aic(lp, jnp.asarray(y), 2, weight=jnp.asarray([1.0, -1, 1, 1, 1, 1]))
    # valid: the formula, eagerly and under jit (traced labels and weights are not checked)
    w = rng.uniform(0.5, 2.0, 6)
    true = np.asarray(lp)[np.arange(6), y]
    want = -2 * (w * true).sum() / w.sum() + 2 * 2 / w.sum()
    assert float(ms.aic(lp, jnp.asarray(y), 2, jnp.asarray(w))) == pytest.approx(want, rel=1e-12)
    got = jax.jit(ms.aic)(lp, jnp.asarray(y), 2, jnp.asarray(w))
    assert float(got) == pytest.approx(want, rel=1e-12)


# ----------------------------------------------------------------------- folds and splits
@pytest.mark.parametrize(
    "labels",
    [
        np.array([0.0, 1.0, np.nan, 1.0, 0.0, 1.0]),
        np.array(["a", "b", None, "b", "a", "b"], dtype=object),
        np.array([0.0, 1.0, float("nan"), 1.0, 0.0, 1.0], dtype=object),
    ],
)
def test_folds_and_split_reject_missing_labels(labels):
    with pytest.raises(ValueError, match=r"y holds missing labels \(NaN / None\) at rows \[2\]"):
        ms.stratified_folds(labels, 2)
    with pytest.raises(ValueError, match=r"y holds missing labels .* rows \[2\]"):
        ms.validation_split(labels, 0.5)
    with pytest.raises(ValueError, match="y must be a 1-D array"):
        ms.stratified_folds(np.zeros((6, 2)), 2)


def test_folds_and_split_of_defined_labels_unchanged():
    y = np.array(["a", "b", "b", "a", "c", "b", "a", "c"], dtype=object)
    f = ms.stratified_folds(y, 2, seed=1)
    assert np.array_equal(f, ms.stratified_folds(np.unique(y, return_inverse=True)[1], 2, seed=1))
    assert set(f.tolist()) == {0, 1}
    assert np.array_equal(ms.stratified_folds(y[:, None], 2, seed=1), f)  # a label column
    v = ms.validation_split(np.array([0.0, 1.0, 1.0, 0.0]), 0.5, seed=0)
    assert v.sum() == 2 and v[[0, 3]].sum() == 1


# ------------------------------------------------------------------------- weighted NB
def _ferreira_reference(codes, y, w, n_states, c):
    """Ferreira weights (uniform state weighting) in NumPy, discrete predictors only."""
    prior = np.bincount(y, w, minlength=c) / w.sum()
    out = []
    for i, m in enumerate(n_states):
        total = 0.0
        for k in range(m):
            sel = codes[:, i] == k
            if w[sel].sum() > 0:
                post = np.bincount(y[sel], w[sel], minlength=c) / w[sel].sum()
                total += ((post - prior) ** 2).sum()
        out.append(np.sqrt(total))
    return np.asarray(out)


def test_ferreira_weights_checks_and_list_n_states():
    codes, values, y, w = _rows(2)
    kw = dict(n_states=(3, 2), n_classes=2)
    bad_c = codes.copy()
    bad_c[0, 1] = 2
    with pytest.raises(ValueError, match=r"codes column 1 has code 2 but n_states\[1\]=2"):
        wt.ferreira_weights(bad_c, values, y, w, **kw)
    with pytest.raises(ValueError, match=r"y must hold class codes in \[0, n_classes=2\)"):
        wt.ferreira_weights(codes, values, y + 1, w, **kw)
    with pytest.raises(ValueError, match="weight must be finite and >= 0"):
        wt.ferreira_weights(codes, values, y, -w, **kw)
    with pytest.raises(ValueError, match=r"weight must have shape \(n,\) = \(40,\)"):
        wt.ferreira_weights(codes, values, y, w[:1], **kw)
    codes[::6, 0] = -1  # missing
    got = wt.ferreira_weights(codes, values[:, :0], y, w, n_states=[3, 2], n_classes=2)
    np.testing.assert_allclose(
        np.asarray(got), _ferreira_reference(codes, y, w, (3, 2), 2), rtol=1e-12
    )
    # with continuous predictors: list and tuple n_states agree, eagerly and under jit
    ref = wt.ferreira_weights(codes, values, y, w, **kw)
    _close(wt.ferreira_weights(codes, values, y, w, n_states=[3, 2], n_classes=2), ref)
    traced = jax.jit(lambda c, v, yy, ww: wt.ferreira_weights(c, v, yy, ww, **kw))
    _close(traced(codes, values, y, w), ref)


def test_fit_gradient_weights_checks_labels_and_weights():
    rng = np.random.default_rng(3)
    L = jnp.asarray(np.log(rng.dirichlet(np.ones(3), (8, 2))))  # (n=8, p=2, c=3)
    y = jnp.asarray(np.arange(8) % 3)
    prior = jnp.log(jnp.ones(3) / 3)
    fit = lambda yy, w=None: wt.fit_gradient_weights(L, yy, prior, w, max_steps=5)
    match_y = r"y must hold integer class codes in \[0, c=3\) \(c = L.shape\[-1\]\)"
    with pytest.raises(ValueError, match=match_y):
        fit(y.at[0].set(-1))
    with pytest.raises(ValueError, match=match_y):
        fit(y.at[0].set(3))
    with pytest.raises(ValueError, match=match_y + ".*float64"):
        fit(y.astype(float))
    with pytest.raises(ValueError, match="weight must be finite and within"):
        fit(y, jnp.ones(8).at[1].set(-1.0))
    with pytest.raises(ValueError, match="weight must be finite and within"):
        fit(y, jnp.ones(8).at[1].set(jnp.inf))
    with pytest.raises(ValueError, match="weight must have a positive sum"):
        fit(y, jnp.zeros(8))
    with pytest.raises(ValueError, match=r"weight must have shape \(n,\) = \(8,\)"):
        fit(y, jnp.ones(1))
    params, info = fit(y, jnp.ones(8))
    p2, _ = fit(y)
    _close(params, p2)
    assert np.isfinite(float(info.loss))


# ------------------------------------------------------------------------------- sharded
def test_sharded_rows_follow_fit_stats_rules():
    codes, values, y, w = _rows(4, n=12)
    mesh = jd.make_mesh(1)
    kw = dict(n_states=(3, 2), n_classes=2, mesh=mesh)
    with pytest.raises(TypeError, match="codes must be integers"):
        jd.fit_stats_sharded(codes + 0.5, values, y, w, **kw)
    bad_v = values.copy()
    bad_v[3, 0] = -np.inf  # was counted as missing
    with pytest.raises(ValueError, match="values contain inf"):
        jd.fit_stats_sharded(codes, bad_v, y, w, **kw)
    with pytest.raises(ValueError, match=r"y must hold class codes in \[0, 2\) as integers"):
        jd.fit_stats_sharded(codes, values, y + 0.5, w, **kw)  # rows dropped or truncated
    with pytest.raises(ValueError, match="y must hold class codes"):
        jd.fit_nb_sharded(codes, values, y + 2, w, **kw)
    with pytest.raises(ValueError, match="weight must be finite and >= 0"):
        jd.fit_stats_sharded(codes, values, y, -w, **kw)
    bad_c = codes.copy()
    bad_c[5, 1] = 2
    with pytest.raises(ValueError, match="codes must lie in"):
        jd.fit_stats_sharded(bad_c, values, y, w, **kw)
    with pytest.raises(ValueError, match="y must hold class codes"):
        jd.fit_wnb(codes, values, y + 0.5, w, n_states=(3, 2), n_classes=2)
    # every negative code is missing, as in fit_stats (a code of -2 was rejected)
    codes[::4, 0] = -2
    codes = codes.astype(np.int64)
    codes[1, 1] = -(2**40)  # must not wrap around to a valid int32 state
    got = jd.fit_stats_sharded(codes, values, y, w, **kw)
    _close(got, fit_stats(codes, values, y, w, n_states=(3, 2), n_classes=2))
    _close(got, jd.fit_stats_sharded(np.maximum(codes, -1), values, y, w, **kw))


def test_sharded_and_wnb_hyper_parameters_checked():
    codes, values, y, w = _rows(5, n=12)
    base = dict(n_states=(3, 2), n_classes=2)
    mesh = jd.make_mesh(1)
    cases = [
        (dict(l2=-1.0), r"l2 must be finite and within \[0.0, inf\]"),
        (dict(l2=float("nan")), "l2 must be finite"),
        (dict(alpha=-1.0), "alpha must be finite and within"),
        (dict(var_smoothing=-1e-9), "var_smoothing must be finite and within"),
        (dict(tol=float("nan")), "tol must be finite"),
        (dict(max_steps=-1), "max_steps must be an int >= 0"),
    ]
    for extra, match in cases:
        with pytest.raises(ValueError, match=match):
            jd.fit_wnb(codes, values, y, w, **base, **extra)
        with pytest.raises(ValueError, match=match):
            jd.fit_wnb_sharded(codes, values, y, w, **base, mesh=mesh, **extra)
    with pytest.raises(ValueError, match="var_smoothing must be finite and within"):
        jd.fit_nb_sharded(codes, values, y, w, **base, mesh=mesh, var_smoothing=-1.0)
    with pytest.raises(ValueError, match="alpha must be finite and within"):
        jd.fit_nb_sharded(codes, values, y, w, **base, mesh=mesh, alpha=-1.0)
    # valid smoothing: unchanged model
    got = jd.fit_nb_sharded(codes, values, y, w, **base, mesh=mesh, alpha=0.5, var_smoothing=1e-6)
    _close(got, fit_nb(codes, values, y, w, 0.5, 1e-6, **base), rtol=1e-10, atol=1e-10)


@MULTI4
def test_sharded_fits_under_jit_equal_eager():
    codes, values, y, w = _rows(6, n=12, n_states=(2,))
    mesh = jd.make_mesh(4)
    kw = dict(n_states=(2,), n_classes=2, mesh=mesh)
    eager = jd.fit_nb_sharded(codes, values, y, w, **kw)
    jitted = jax.jit(
        lambda c, v, yy, ww: jd.fit_nb_sharded(c, v, yy, ww, n_states=(2,), n_classes=2, mesh=mesh)
    )
    _close(jitted(codes, values, y, w), eager, rtol=1e-12, atol=1e-12)
    # weight None and 11 rows (padded with jnp inside jit), with and without the checks
    for check in (True, False):
        fn = jax.jit(
            lambda c, v, yy, chk=check: jd.fit_stats_sharded(c, v, yy, **kw, check_input=chk)
        )
        _close(
            fn(codes[:11], values[:11], y[:11]),
            jd.fit_stats_sharded(codes[:11], values[:11], y[:11], **kw),
            rtol=1e-12,
            atol=1e-12,
        )
    # a traced float label is refused at trace time (its dtype is static)
    with pytest.raises(ValueError, match="as integers"):
        jax.jit(lambda yy: jd.fit_stats_sharded(codes, values, yy, w, **kw))(y + 0.5)
