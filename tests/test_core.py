"""The functional core against the float64 loop reference (tests/reference.py).

Covers jaxnb.suffstats (accumulate / merge / subtract / block scan), jaxnb.params (Ω⁽¹⁾, Ω⁽⁰⁾,
interpolation) and jaxnb.likelihood (contributions, the quadratic fast path, combination rules,
losses), plus the properties of STYLE.md: weight 2 equals a duplicated row, permuting predictors
permutes parameters, float32 keeps its dtype and agrees with float64.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference as ref
from jaxprs import jitted_primitives

import jaxnb as nb
from jaxnb.suffstats import empty_stats

# Layouts: (n_states of the discrete block, number of continuous predictors).
LAYOUTS = {
    "mixed": ((3, 4), 2),
    "discrete": ((3, 2, 5), 0),
    "continuous": ((), 3),
}
C = 3
RTOL = 1e-10


def _data(layout, seed=0, n=40, missing=0.0, **kw):
    ns, r = LAYOUTS[layout]
    codes, values, y, w = ref.random_mixed(
        seed, n=n, n_states=ns, n_continuous=r, n_classes=C, missing=missing, **kw
    )
    return ns, codes, values, y, w


def _acc(codes, values, y, weight, ns, c=C, **kw):
    Y = jax.nn.one_hot(jnp.asarray(y), c, dtype=jnp.float64)
    w = None if weight is None else jnp.asarray(weight)
    return nb.accumulate(jnp.asarray(codes), jnp.asarray(values), Y, w, n_states=ns, **kw)


def _as_params(d, ns):
    return nb.NBParams(
        jnp.asarray(d["log_prior"]),
        jnp.asarray(d["cpt"]),
        jnp.asarray(d["mean"]),
        jnp.asarray(d["std"]),
        tuple(ns),
    )


def _assert_stats(got, want, rtol=RTOL, atol=1e-10):
    for key in ("class_weight", "counts", "weight", "mean", "m2"):
        np.testing.assert_allclose(
            np.asarray(getattr(got, key)), want[key], rtol=rtol, atol=atol, err_msg=key
        )


def _assert_stats_equal(a, b, rtol=RTOL, atol=1e-10):
    assert a.n_states == b.n_states
    _assert_stats(
        a,
        {k: np.asarray(getattr(b, k)) for k in ("class_weight", "counts", "weight", "mean", "m2")},
        rtol,
        atol,
    )


def _assert_params(got, want, rtol=RTOL, atol=0.0):
    for key in ("log_prior", "cpt", "mean", "std"):
        np.testing.assert_allclose(
            np.asarray(getattr(got, key)), want[key], rtol=rtol, atol=atol, err_msg=key
        )


def _params_dict(p):
    return {k: np.asarray(getattr(p, k)) for k in ("log_prior", "cpt", "mean", "std")}


# ------------------------------------------------------------------------------------------------
# Sufficient statistics


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_accumulate_matches_reference(layout, missing):
    ns, codes, values, y, w = _data(layout, seed=1, missing=missing)
    got = _acc(codes, values, y, w, ns)
    want = ref.sufficient_stats(codes, values, y, ns, C, w)
    _assert_stats(got, want)
    assert got.n_states == ns
    # unweighted: counts are integers, class_weight is the class histogram
    got1 = _acc(codes, values, y, None, ns)
    np.testing.assert_array_equal(np.asarray(got1.class_weight), np.bincount(y, minlength=C))
    _assert_stats(got1, ref.sufficient_stats(codes, values, y, ns, C))


def test_accumulate_with_soft_labels_splits_rows():
    """A soft label Y = (0.25, 0.75) is a row of weight 0.25 in class 0 plus 0.75 in class 1."""
    ns, codes, values, y, w = _data("mixed", seed=2)
    Y = np.array(jax.nn.one_hot(y, C, dtype=jnp.float64))
    Y[0] = [0.25, 0.75, 0.0]
    got = nb.accumulate(
        jnp.asarray(codes), jnp.asarray(values), jnp.asarray(Y), jnp.asarray(w), n_states=ns
    )
    codes2 = np.concatenate([codes, codes[:1]])
    values2 = np.concatenate([values, values[:1]])
    y2 = np.concatenate([y, [1]]).astype(np.int32)
    y2[0] = 0
    w2 = np.concatenate([w, [0.75 * w[0]]])
    w2[0] = 0.25 * w[0]
    _assert_stats(got, ref.sufficient_stats(codes2, values2, y2, ns, C, w2))


@pytest.mark.parametrize("layout", ["mixed", "continuous"])
def test_merge_of_two_parts_equals_accumulate_of_all(layout):
    """Parts are 0/1 weights (test_zero_one_weights_select_a_subset ties them to row slices)."""
    ns, codes, values, y, w = _data(layout, seed=3, missing=0.1)
    first = (np.arange(len(y)) < 13).astype(float)  # uneven split
    a = _acc(codes, values, y, w * first, ns)
    b = _acc(codes, values, y, w * (1 - first), ns)
    full = _acc(codes, values, y, w, ns)
    _assert_stats_equal(nb.merge(a, b), full)
    _assert_stats_equal(nb.merge(b, a), full)
    # the all-zero statistics are the identity of merge
    zero = empty_stats(ns, values.shape[1], C)
    _assert_stats_equal(nb.merge(zero, full), full, rtol=1e-14, atol=0)


def test_zero_one_weights_select_a_subset():
    """Folds are 0/1 weights: accumulate(all, w * mask) == accumulate(rows in mask)."""
    ns, codes, values, y, w = _data("mixed", seed=4, missing=0.1)
    mask = (np.arange(len(y)) % 3 == 1).astype(float)
    keep = mask > 0
    _assert_stats_equal(
        _acc(codes, values, y, w * mask, ns), _acc(codes[keep], values[keep], y[keep], w[keep], ns)
    )


@pytest.mark.parametrize("layout", ["mixed", "continuous"])
def test_subtract_part_from_total_equals_accumulate_of_rest(layout):
    ns, codes, values, y, w = _data(layout, seed=5, missing=0.1)
    part = np.arange(len(y)) % 4 == 0
    total = _acc(codes, values, y, w, ns)
    got = nb.subtract(total, _acc(codes, values, y, w * part, ns))
    rest = _acc(codes, values, y, w * ~part, ns)
    # m2 by subtraction cancels: relative error ~ eps * total.m2 / rest.m2
    _assert_stats_equal(got, rest, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        np.asarray(got.m2),
        ref.sufficient_stats(codes[~part], values[~part], y[~part], ns, C, w[~part])["m2"],
        rtol=1e-9,
    )


def test_subtract_a_whole_class_leaves_zero_statistics():
    ns, codes, values, y, w = _data("mixed", seed=6)
    part = y == 2
    got = nb.subtract(_acc(codes, values, y, w, ns), _acc(codes, values, y, w * part, ns))
    np.testing.assert_allclose(np.asarray(got.class_weight)[2], 0.0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(got.counts)[:, 2], 0.0, atol=1e-12)
    np.testing.assert_array_equal(np.asarray(got.weight)[2], 0.0)
    np.testing.assert_array_equal(np.asarray(got.mean)[2], 0.0)
    np.testing.assert_array_equal(np.asarray(got.m2)[2], 0.0)
    rest = _acc(codes, values, y, w * ~part, ns)
    _assert_stats_equal(got, rest, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("block_size", [1, 7, 10, 40, 1000])
def test_block_scanned_accumulation_equals_single_block(block_size):
    ns, codes, values, y, w = _data("mixed", seed=7, missing=0.1)  # n = 40
    single = _acc(codes, values, y, w, ns)
    blocked = _acc(codes, values, y, w, ns, block_size=block_size)
    _assert_stats_equal(blocked, single)
    _assert_stats(blocked, ref.sufficient_stats(codes, values, y, ns, C, w))


def test_accumulate_rejects_wrong_static_shapes():
    ns, codes, values, y, w = _data("mixed", seed=8)
    with pytest.raises(ValueError, match="codes has 2 columns but n_states has 3"):
        _acc(codes, values, y, w, (3, 4, 2))
    with pytest.raises(ValueError, match="must be 2-D"):
        nb.accumulate(
            jnp.asarray(codes[:, 0]),
            jnp.asarray(values),
            jax.nn.one_hot(y, C, dtype=jnp.float64),
            n_states=(3,),
        )
    other = _acc(codes[:, :1], values, y, w, (3,))
    with pytest.raises(ValueError, match="cannot combine statistics"):
        nb.merge(_acc(codes, values, y, w, ns), other)


# ------------------------------------------------------------------------------------------------
# Parameters


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("alpha,var_smoothing", [(1.0, 1e-9), (0.5, 0.1), (2.5, 0.0)])
def test_fit_mle_and_marginal_match_reference(layout, alpha, var_smoothing):
    ns, codes, values, y, w = _data(layout, seed=9, missing=0.1)
    st = _acc(codes, values, y, w, ns)
    got1 = nb.fit_mle(st, alpha, var_smoothing)
    got0 = nb.fit_marginal(st, alpha, var_smoothing)
    _assert_params(got1, ref.fit_mle(codes, values, y, ns, C, w, alpha, var_smoothing))
    _assert_params(got0, ref.fit_marginal(codes, values, y, ns, C, w, alpha, var_smoothing))
    assert got1.n_states == got0.n_states == ns


def test_fit_with_fixed_priors_and_alpha_zero():
    ns, codes, values, y, w = _data("mixed", seed=10)
    st = _acc(codes, values, y, w, ns)
    priors = np.array([0.5, 0.2, 0.3])
    got = nb.fit_mle(st, 0.0, 1e-9, priors=jnp.asarray(priors))
    want = ref.fit_mle(codes, values, y, ns, C, w, 0.0, 1e-9, priors)
    _assert_params(got, want)
    np.testing.assert_allclose(np.asarray(got.log_prior), np.log(priors), rtol=1e-15)
    _assert_params(
        nb.fit_marginal(st, 0.0, 1e-9, priors=jnp.asarray(priors)),
        ref.fit_marginal(codes, values, y, ns, C, w, 0.0, 1e-9, priors),
    )


def test_class_without_observed_values_falls_back_to_pooled_gaussian():
    ns, codes, values, y, w = _data("mixed", seed=11)
    values = values.copy()
    values[y == 1, 0] = np.nan
    st = _acc(codes, values, y, w, ns)
    got = nb.fit_mle(st, 1.0, 0.05)
    want = ref.fit_mle(codes, values, y, ns, C, w, 1.0, 0.05)
    _assert_params(got, want)
    pmean, pvar = ref.pooled_moments(values, w)
    np.testing.assert_allclose(float(got.mean[1, 0]), pmean[0], rtol=1e-12)
    np.testing.assert_allclose(float(got.std[1, 0]), np.sqrt(pvar[0] * 1.05), rtol=1e-12)


def test_variance_floor_is_per_predictor_and_scale_invariant():
    """σ²_ij = m2/W + vs·s²_i: a column constant within a class keeps σ = sqrt(vs)·s_i > 0, and
    scaling a column by 1000 scales its σ by 1000 and leaves every posterior unchanged."""
    ns, codes, values, y, w = _data("mixed", seed=12)
    values = values.copy()
    values[y == 0, 1] = 7.0  # constant within class 0
    vs = 1e-3
    st = _acc(codes, values, y, w, ns)
    p1 = nb.fit_mle(st, 1.0, vs)
    _, pvar = ref.pooled_moments(values, w)
    np.testing.assert_allclose(float(p1.std[0, 1]), np.sqrt(vs * pvar[1]), rtol=1e-10)
    scaled = values * np.array([1.0, 1000.0])
    p2 = nb.fit_mle(_acc(codes, scaled, y, w, ns), 1.0, vs)
    np.testing.assert_allclose(
        np.asarray(p2.std), np.asarray(p1.std) * np.array([1.0, 1000.0]), rtol=1e-10
    )
    np.testing.assert_allclose(
        np.asarray(nb.log_posterior(p2, jnp.asarray(codes), jnp.asarray(scaled))),
        np.asarray(nb.log_posterior(p1, jnp.asarray(codes), jnp.asarray(values))),
        rtol=1e-9,
        atol=1e-9,
    )


def _omegas(layout="mixed", seed=13, missing=0.0, alpha=1.0, var_smoothing=0.01, n=40):
    ns, codes, values, y, w = _data(layout, seed=seed, missing=missing, n=n)
    st = _acc(codes, values, y, w, ns)
    return (
        (ns, codes, values, y, w),
        nb.fit_mle(st, alpha, var_smoothing),
        nb.fit_marginal(st, alpha, var_smoothing),
    )


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_interpolate_zero_removes_every_predictor(layout):
    (ns, codes, values, y, w), o1, o0 = _omegas(layout, missing=0.1)
    p = o1.n_predictors
    a0 = nb.interpolate(o1, o0, jnp.zeros(p))
    _assert_params(a0, _params_dict(o0), rtol=0)
    log_post = np.asarray(nb.log_posterior(a0, jnp.asarray(codes), jnp.asarray(values)))
    prior = np.asarray(jax.nn.log_softmax(o1.log_prior))
    np.testing.assert_allclose(log_post, np.broadcast_to(prior, log_post.shape), rtol=0, atol=1e-12)
    # and Ω(1) is the MLE
    _assert_params(nb.interpolate(o1, o0, jnp.ones(p)), _params_dict(o1), rtol=1e-15)


@pytest.mark.parametrize("drop", [0, 1, 2, 3])
def test_interpolate_zero_for_one_predictor_equals_masking_it(drop):
    """Ω_i = Ω⁽⁰⁾_i adds the same term to every class, so the posterior equals NB with W_i = 0."""
    (ns, codes, values, y, w), o1, o0 = _omegas("mixed", missing=0.1)
    alpha = np.ones(4)
    alpha[drop] = 0.0
    got = nb.log_posterior(
        nb.interpolate(o1, o0, jnp.asarray(alpha)), jnp.asarray(codes), jnp.asarray(values)
    )
    want = ref.log_posterior(_params_dict(o1), codes, values, ns, weights=alpha)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_interpolated_parameters_are_valid_and_linear(seed):
    (ns, codes, values, y, w), o1, o0 = _omegas("mixed", seed=20 + seed)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        alpha = rng.random(o1.n_predictors)
        pa = nb.interpolate(o1, o0, jnp.asarray(alpha))
        cpt = np.asarray(pa.cpt)
        off = ref.offsets(ns)
        for i, m in enumerate(ns):
            block = cpt[off[i] : off[i] + m]
            np.testing.assert_allclose(block.sum(0), np.ones(C), rtol=0, atol=1e-12)
            np.testing.assert_allclose(
                block,
                alpha[i] * np.asarray(o1.cpt)[off[i] : off[i] + m]
                + (1 - alpha[i]) * np.asarray(o0.cpt)[off[i] : off[i] + m],
                rtol=1e-13,
            )
        assert (cpt > 0).all() and (cpt <= 1).all()
        std = np.asarray(pa.std)
        assert (std > 0).all()
        a_c = alpha[len(ns) :]
        np.testing.assert_allclose(
            std, a_c * np.asarray(o1.std) + (1 - a_c) * np.asarray(o0.std), rtol=1e-13
        )
        np.testing.assert_allclose(
            np.asarray(pa.mean),
            a_c * np.asarray(o1.mean) + (1 - a_c) * np.asarray(o0.mean),
            rtol=1e-13,
        )
        np.testing.assert_array_equal(np.asarray(pa.log_prior), np.asarray(o1.log_prior))


# ------------------------------------------------------------------------------------------------
# Log-contributions, combination rules and losses


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_log_contributions_match_reference(layout):
    (ns, codes, values, y, w), o1, _ = _omegas(layout, missing=0.15)
    got = np.asarray(nb.log_contributions(o1, jnp.asarray(codes), jnp.asarray(values)))
    want = ref.log_contributions(_params_dict(o1), codes, values, ns)
    assert got.shape == (len(y), o1.n_predictors, C)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # missing entries contribute exactly 0
    miss = np.concatenate([codes < 0, ~np.isfinite(values)], axis=1)
    assert miss.any()
    np.testing.assert_array_equal(got[miss], 0.0)


def _combination_weights(kind, p, rng):
    if kind == "none":
        return None, None
    if kind == "p":
        return rng.uniform(0, 2, size=p), None
    if kind == "pc":
        return rng.uniform(-1, 2, size=(p, C)), None
    if kind == "mask":
        return (np.arange(p) % 2).astype(float), None
    return rng.uniform(0, 2, size=(p, C)), rng.normal(size=C)  # "pc+bias"


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", ["none", "p", "pc", "mask", "pc+bias"])
def test_log_joint_fast_path_equals_combine_and_reference(layout, kind):
    (ns, codes, values, y, w), o1, _ = _omegas(layout, missing=0.1)
    W, bias = _combination_weights(kind, o1.n_predictors, np.random.default_rng(3))
    cj, vj = jnp.asarray(codes), jnp.asarray(values)
    Wj = None if W is None else jnp.asarray(W)
    bj = None if bias is None else jnp.asarray(bias)
    fast = np.asarray(nb.log_joint(o1, cj, vj, Wj, bj))
    slow = np.asarray(
        nb.combine(nb.log_contributions(o1, cj, vj), Wj, o1.log_prior if bj is None else bj)
    )
    want = ref.log_joint(_params_dict(o1), codes, values, ns, W, bias)
    np.testing.assert_allclose(fast, want, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(slow, want, rtol=1e-12, atol=1e-12)
    post = np.asarray(nb.log_posterior(o1, cj, vj, Wj, bj))
    np.testing.assert_allclose(
        post, ref.log_posterior(_params_dict(o1), codes, values, ns, W, bias), rtol=1e-10, atol=1e-9
    )
    np.testing.assert_allclose(np.exp(post).sum(1), 1.0, rtol=0, atol=1e-12)


def test_log_joint_shared_shift_equals_reference_and_per_set_vmap():
    """``shift`` changes the centring only: the scores equal the reference, and a vmap over a
    stack of parameter sets with one shared shift equals scoring each set on its own."""
    (ns, codes, values, y, w), o1, o0 = _omegas("mixed", missing=0.1)
    cj, vj = jnp.asarray(codes), jnp.asarray(values)
    want = ref.log_joint(_params_dict(o1), codes, values, ns, None, None)
    for shift in (np.zeros(values.shape[1]), np.asarray(o0.mean).mean(0) + 3.0):
        got = np.asarray(nb.log_joint(o1, cj, vj, shift=jnp.asarray(shift)))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)
    with pytest.raises(ValueError, match="shift must have shape"):
        nb.log_joint(o1, cj, vj, shift=jnp.zeros((2, values.shape[1])))
    stack = jax.tree.map(lambda a, b: jnp.stack([a, b, 0.5 * (a + b)]), o1, o0)
    shift = jnp.asarray(o0.mean).mean(0)
    vm = jax.jit(jax.vmap(lambda p: nb.log_joint(p, cj, vj, shift=shift)))(stack)
    for i in range(3):
        one = jax.tree.map(lambda a, i=i: a[i], stack)
        np.testing.assert_allclose(vm[i], nb.log_joint(one, cj, vj), rtol=1e-12, atol=1e-10)


def _several_blocks(rng, ns, shape):
    """Codes (n, q) with the states ``ns`` and values ``shape`` = (..., n, r) for data of two
    8192-row blocks and a remainder (the row block of the mixed layout)."""
    n = shape[-2]
    codes = np.stack([rng.integers(0, m, n) for m in ns], 1).astype(np.int32)
    return codes, rng.normal(size=shape) * 3.0 + 1.0


def test_log_joint_over_several_row_blocks_with_and_without_missing_values():
    """Data of several row blocks (8192 rows each here) and a remainder: complete data take the
    form without the missing-value mask, data with a NaN or an infinite value the masked form;
    both equal the float64 reference, and a missing value changes only its own row's score."""
    (ns, _, _, _, _), o1, _ = _omegas("mixed")
    n = 2 * 8192 + 5
    codes, values = _several_blocks(np.random.default_rng(7), ns, (n, o1.mean.shape[1]))
    want = ref.log_joint(_params_dict(o1), codes, values, ns)
    got = np.asarray(nb.log_joint(o1, jnp.asarray(codes), jnp.asarray(values)))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)
    rows = [3, 8192 + 11, n - 2]  # first, second block and the remainder
    for bad in (np.nan, np.inf, -np.inf):
        holed = values.copy()
        holed[rows, 0] = bad
        missing = holed.copy()
        missing[rows, 0] = np.nan  # every non-finite value is a missing value
        want = ref.log_joint(_params_dict(o1), codes, missing, ns)
        got = np.asarray(nb.log_joint(o1, jnp.asarray(codes), jnp.asarray(holed)))
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)
        changed = np.flatnonzero(np.any(got != np.asarray(nb.log_joint(o1, codes, values)), 1))
        np.testing.assert_array_equal(changed, rows)


def test_log_joint_under_vmap_picks_one_form_for_the_whole_batch():
    """vmap over data sets (one with a missing value) and over parameter sets (one with classes
    far apart): each batch element equals the float64 reference, and the form is chosen once for
    the batch (a cond in the vmapped program; a batched predicate would have made it a select
    that runs every form for every element)."""
    (ns, _, _, _, _), o1, o0 = _omegas("mixed")
    n, r = 2 * 8192 + 5, o1.mean.shape[1]
    codes, values = _several_blocks(np.random.default_rng(11), ns, (3, n, r))
    values[1, [5, 9000], 0] = np.nan
    one = lambda v: nb.log_joint(o1, jnp.asarray(codes), v)
    got = np.asarray(jax.jit(jax.vmap(one))(jnp.asarray(values)))
    for i in range(3):
        want = ref.log_joint(_params_dict(o1), codes, values[i], ns)
        np.testing.assert_allclose(got[i], want, rtol=1e-10, atol=1e-9)
    assert "cond" in jitted_primitives(jax.vmap(one), values)

    far = type(o1)(o1.log_prior, o1.cpt, o1.mean.at[0].add(1e9), o1.std, o1.n_states)
    stack = jax.tree.map(lambda a, b: jnp.stack([a, b]), o1, far)
    batched = jax.vmap(lambda prm: nb.log_joint(prm, codes[:50], values[0, :50]))
    got = np.asarray(batched(stack))
    for i, prm in enumerate((o1, far)):
        want = ref.log_joint(_params_dict(prm), codes[:50], values[0, :50], ns)
        np.testing.assert_allclose(got[i], want, rtol=1e-10, atol=1e-9)
    assert "cond" in jitted_primitives(batched, stack)


def test_combine_without_bias_is_the_weighted_sum():
    rng = np.random.default_rng(0)
    L = rng.normal(size=(5, 4, C))
    W = rng.normal(size=(4, C))
    np.testing.assert_allclose(
        np.asarray(nb.combine(jnp.asarray(L), jnp.asarray(W))),
        np.einsum("npc,pc->nc", L, W),
        rtol=1e-13,
    )
    np.testing.assert_allclose(np.asarray(nb.combine(jnp.asarray(L))), L.sum(1), rtol=1e-13)


@pytest.mark.parametrize("weighted", [False, True])
def test_losses_match_numpy(weighted):
    (ns, codes, values, y, w), o1, _ = _omegas("mixed", seed=30, missing=0.1)
    weight = w if weighted else None
    lp_ref = ref.log_posterior(_params_dict(o1), codes, values, ns)
    lp_ref[0] = np.log(np.full(C, 1.0 / C))  # an exact tie: argmax is the first class
    y_t = y.copy()
    y_t[0] = 1  # ... which is wrong
    lp, yj = jnp.asarray(lp_ref), jnp.asarray(y_t)
    wj = None if weight is None else jnp.asarray(weight)
    np.testing.assert_allclose(
        float(nb.error_rate(lp, yj, wj)), ref.error_rate(lp_ref, y_t, weight), rtol=1e-13
    )
    assert ref.error_rate(lp_ref, y_t, weight) > 0
    np.testing.assert_allclose(
        float(nb.error_probability(lp, yj, wj)),
        ref.error_probability(lp_ref, y_t, weight),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        float(nb.log_loss(lp, yj, wj)), ref.log_loss(lp_ref, y_t, weight), rtol=1e-12
    )
    lj_ref = ref.log_joint(_params_dict(o1), codes, values, ns)
    np.testing.assert_allclose(
        float(nb.joint_log_likelihood(jnp.asarray(lj_ref), yj, wj)),
        ref.joint_log_likelihood(lj_ref, y_t, weight),
        rtol=1e-12,
    )


def test_error_rate_counts_ties_as_first_class():
    lp = jnp.log(jnp.asarray([[0.5, 0.5], [0.2, 0.8], [0.6, 0.4]]))
    np.testing.assert_allclose(float(nb.error_rate(lp, jnp.asarray([0, 1, 1]))), 1 / 3, rtol=1e-15)
    np.testing.assert_allclose(float(nb.error_rate(lp, jnp.asarray([1, 1, 0]))), 1 / 3, rtol=1e-15)
    np.testing.assert_array_equal(np.asarray(nb.likelihood.predict(lp)), [0, 1, 0])


# ------------------------------------------------------------------------------------------------
# Properties


@pytest.mark.parametrize("seed", [0, 1])
def test_weight_two_equals_a_duplicated_row(seed):
    ns, codes, values, y, w = _data("mixed", seed=40 + seed, missing=0.1)
    rows = np.array([0, 5, 17])
    w2 = w.copy()
    w2[rows] *= 2.0
    dup = np.concatenate([np.arange(len(y)), rows])
    a = _acc(codes, values, y, w2, ns)
    b = _acc(codes[dup], values[dup], y[dup], w[dup], ns)
    _assert_stats_equal(a, b, rtol=1e-12, atol=1e-12)
    for fit in (nb.fit_mle, nb.fit_marginal):
        _assert_params(fit(a, 1.0, 0.01), _params_dict(fit(b, 1.0, 0.01)), rtol=1e-12)


def test_permuting_predictors_permutes_parameters():
    ns, codes, values, y, w = _data("mixed", seed=50, missing=0.1)
    ns, codes, values = (
        (3, 4, 2),
        np.concatenate([codes, (codes[:, :1] + 1) % 2], axis=1).astype(np.int32),
        values,
    )
    values = np.concatenate([values, values[:, :1] ** 2], axis=1)
    dperm, cperm = np.array([2, 0, 1]), np.array([1, 2, 0])
    ns_p = tuple(ns[i] for i in dperm)
    p1 = nb.fit_mle(_acc(codes, values, y, w, ns), 0.7, 0.01)
    p2 = nb.fit_mle(_acc(codes[:, dperm], values[:, cperm], y, w, ns_p), 0.7, 0.01)
    off = ref.offsets(ns)
    rows = np.concatenate([np.arange(off[i], off[i] + ns[i]) for i in dperm])
    np.testing.assert_allclose(np.asarray(p2.cpt), np.asarray(p1.cpt)[rows], rtol=1e-13)
    np.testing.assert_allclose(np.asarray(p2.mean), np.asarray(p1.mean)[:, cperm], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(p2.std), np.asarray(p1.std)[:, cperm], rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(p2.log_prior), np.asarray(p1.log_prior))
    L1 = np.asarray(nb.log_contributions(p1, jnp.asarray(codes), jnp.asarray(values)))
    L2 = np.asarray(
        nb.log_contributions(p2, jnp.asarray(codes[:, dperm]), jnp.asarray(values[:, cperm]))
    )
    perm = np.concatenate([dperm, len(ns) + cperm])
    np.testing.assert_allclose(L2, L1[:, perm], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        np.asarray(nb.log_joint(p2, jnp.asarray(codes[:, dperm]), jnp.asarray(values[:, cperm]))),
        np.asarray(nb.log_joint(p1, jnp.asarray(codes), jnp.asarray(values))),
        rtol=1e-10,
    )


def test_fit_nb_equals_accumulate_then_fit_mle():
    ns, codes, values, y, w = _data("mixed", seed=60, missing=0.1)
    got = nb.fit_nb(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        0.5,
        0.02,
        n_states=ns,
        n_classes=C,
    )
    _assert_params(got, ref.fit_mle(codes, values, y, ns, C, w, 0.5, 0.02))
    st = nb.fit_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.asarray(w),
        n_states=ns,
        n_classes=C,
        block_size=8,
    )
    _assert_stats(st, ref.sufficient_stats(codes, values, y, ns, C, w))


def _fit_and_score(codes, values, y, w, ns, dtype):
    cj, vj = jnp.asarray(codes), jnp.asarray(values, dtype)
    params = nb.fit_nb(
        cj, vj, jnp.asarray(y), jnp.asarray(w, dtype), 1.0, 0.01, n_states=ns, n_classes=C
    )
    return params, nb.log_posterior(params, cj, vj), nb.log_contributions(params, cj, vj)


def test_float32_keeps_dtype_and_agrees_with_float64():
    ns, codes, values, y, w = _data("mixed", seed=70, missing=0.1, scales=[1.0, 100.0])
    p64, lp64, L64 = _fit_and_score(codes, values, y, w, ns, jnp.float64)
    with jax.enable_x64(False):
        p32, lp32, L32 = _fit_and_score(codes, values, y, w, ns, jnp.float32)
        st32 = nb.fit_stats(
            jnp.asarray(codes),
            jnp.asarray(values, jnp.float32),
            jnp.asarray(y),
            n_states=ns,
            n_classes=C,
            block_size=16,
        )
        a32 = nb.interpolate(p32, p32, jnp.full(4, 0.5, jnp.float32))
    for leaf in [*jax.tree.leaves(p32), lp32, L32, *jax.tree.leaves(st32), *jax.tree.leaves(a32)]:
        assert leaf.dtype == jnp.float32
    assert lp64.dtype == jnp.float64
    for key in ("cpt", "mean", "std", "log_prior"):
        np.testing.assert_allclose(
            np.asarray(getattr(p32, key)), np.asarray(getattr(p64, key)), rtol=2e-6, err_msg=key
        )
    np.testing.assert_allclose(np.exp(np.asarray(lp32)), np.exp(np.asarray(lp64)), atol=1e-5)
    np.testing.assert_allclose(np.asarray(L32), np.asarray(L64), rtol=1e-5, atol=1e-5)


def test_float32_inputs_keep_float32_when_x64_is_enabled():
    """float32 data under jax_enable_x64 give float32 statistics, parameters and posteriors.

    Regression guard: `jaxnb.suffstats.accumulate` takes its dtype from the values and the class
    one-hot only (``result_type(values, Y)``); promoting with the default float dtype (float64 under
    x64) would silently upcast float32 inputs.
    """
    ns, codes, values, y, w = _data("mixed", seed=71)
    params, lp, _ = _fit_and_score(codes, values, y, w, ns, jnp.float32)
    assert params.cpt.dtype == jnp.float32
    assert params.mean.dtype == jnp.float32
    assert lp.dtype == jnp.float32


def test_accumulate_gradient_with_missing_values():
    """With a missing value, the sample-weight gradient equals a float64 finite-difference
    reference, blocked or not. The blocked call's unmasked pass, discarded when it meets the
    missing value, made every gradient NaN (0 * NaN) before its derivative rule masked it."""
    from jaxnb.suffstats import accumulate

    rng = np.random.default_rng(0)
    n = 64
    codes = jnp.asarray(rng.integers(0, 3, (n, 2)))
    v = rng.normal(size=(n, 2))
    v[3, 1] = np.nan
    Y = jax.nn.one_hot(jnp.asarray(rng.integers(0, 2, n)), 2)

    def f(w, bs):
        st = accumulate(codes, jnp.asarray(v), Y, w, n_states=(3, 3), block_size=bs)
        return st.mean.sum() + st.m2.sum()

    # jitted: eagerly every primitive of the blocked scan and its derivative compiled on its own
    f, grad_f = jax.jit(f, static_argnums=1), jax.jit(jax.grad(f), static_argnums=1)
    w = jnp.asarray(rng.uniform(0.5, 1.5, n))
    np.testing.assert_allclose(f(w, 16), f(w, None), rtol=1e-12)
    g = grad_f(w, None)
    # reference: the weighted class means and M2 of the observed rows, by finite differences
    yi = np.asarray(Y).argmax(1)

    def by_hand(wn):
        tot = 0.0
        for k in range(2):
            for j in range(2):
                m = (yi == k) & np.isfinite(v[:, j])
                ww, x = wn[m], v[m, j]
                mu = (ww * x).sum() / ww.sum()
                tot += mu + (ww * (x - mu) ** 2).sum()
        return tot

    w0 = np.asarray(w)
    h = 1e-6
    fd = np.array(
        [
            (by_hand(w0 + h * np.eye(n)[i]) - by_hand(w0 - h * np.eye(n)[i])) / (2 * h)
            for i in range(n)
        ]
    )
    assert np.isfinite(np.asarray(g)).all()
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad_f(w, 16), g, rtol=1e-10, atol=1e-12)

    # the values' gradient: finite, 0 at the missing entry, the same blocked or not, in reverse
    # and in forward mode, and on clean data too (there the rule is the plain derivative)
    def fv(vals, bs):
        st = accumulate(codes, vals, Y, w, n_states=(3, 3), block_size=bs)
        return st.mean.sum() + (st.m2**2).sum()

    grad_fv, fwd_fv = (jax.jit(t(fv), static_argnums=1) for t in (jax.grad, jax.jacfwd))
    for data in (jnp.asarray(v), jnp.asarray(np.nan_to_num(v, nan=0.3))):
        gv = grad_fv(data, None)
        assert np.isfinite(np.asarray(gv)).all()
        np.testing.assert_allclose(grad_fv(data, 16), gv, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(fwd_fv(data, 16), gv, rtol=1e-10, atol=1e-12)
    assert float(grad_fv(jnp.asarray(v), 16)[3, 1]) == 0.0


def test_any_in_batch_is_the_flag_alone_and_one_flag_under_vmap():
    from jaxnb._batch import any_in_batch

    f = jnp.asarray([False, True, False])
    assert bool(any_in_batch(f[1])) and not bool(any_in_batch(f[0]))
    assert bool(jax.jit(any_in_batch)(f[1]))
    # under vmap one unbatched flag for the batch (vmap broadcasts it back to every element)
    np.testing.assert_array_equal(jax.vmap(any_in_batch)(f), [True] * 3)
    np.testing.assert_array_equal(jax.vmap(any_in_batch)(jnp.zeros(4, bool)), [False] * 4)
    nested = jax.vmap(jax.vmap(any_in_batch))(jnp.zeros((2, 3), bool).at[1, 2].set(True))
    np.testing.assert_array_equal(nested, np.ones((2, 3), bool))
    # an unbatched flag passed through vmap stays itself
    assert bool(jax.vmap(lambda x: any_in_batch(f[1]) & (x > 0))(jnp.ones(3)).all())
    jaxpr = jax.make_jaxpr(
        jax.vmap(lambda b, x: jax.lax.cond(any_in_batch(b), lambda: x + 1, lambda: x))
    )(f, jnp.zeros(3))
    assert "cond" in {e.primitive.name for e in jaxpr.jaxpr.eqns}
