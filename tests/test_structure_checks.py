"""Eager input checks of the structure (TAN, semi-naive) and kernel core functions: each bad input
used to give a silently wrong answer (a broadcast query, an invalid tree, dropped rows, NaN); the
checks run on concrete arguments only, so the functions still work under jit / vmap / grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.methods import kernel as K
from jaxnb.methods import structure as S

N, P, C = 24, 3, 2
PARENT = np.array([-1, 0, 1], np.int32)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    y = np.tile(np.arange(C), N // C).astype(np.int32)
    x = rng.normal(size=(N, P)) + y[:, None]
    codes = rng.integers(0, 3, (N, P)).astype(np.int32)
    return x, y, codes


@pytest.fixture(scope="module")
def params(data):
    x, y, codes = data
    return (
        S.fit_gaussian_tan(x, y, PARENT, C),
        S.fit_gaussian_joint(x, y, C),
        S.fit_discrete_tan(codes, y, PARENT, 3, C),
    )


# --------------------------------------------------------------------------------------------------
# 1. a query with the wrong number of columns
# --------------------------------------------------------------------------------------------------
KERNEL_SCORERS = {
    "flexible_nb_log_contributions": lambda q, x, y: K.flexible_nb_log_contributions(q, x, y, C),
    "flexible_nb_log_joint": lambda q, x, y: K.flexible_nb_log_joint(q, x, y, C),
    "parzen_log_density": lambda q, x, y: K.parzen_log_density(q, x, y, C),
    "parzen_log_joint": lambda q, x, y: K.parzen_log_joint(q, x, y, C),
    "flexible_tan_log_contributions": lambda q, x, y: K.flexible_tan_log_contributions(
        q, x, y, PARENT, C
    ),
    "flexible_tan_log_joint": lambda q, x, y: K.flexible_tan_log_joint(q, x, y, PARENT, C),
}


@pytest.mark.parametrize("cols", [2, 4])
@pytest.mark.parametrize("name", sorted(KERNEL_SCORERS))
def test_kernel_query_columns(data, name, cols):
    x, y, _ = data
    q = np.ones((5, cols))
    with pytest.raises(ValueError, match=r"query must have 3 columns \(as the training values\)"):
        KERNEL_SCORERS[name](q, x, y)


@pytest.mark.parametrize("cols", [2, 4])
def test_kde_log_density_query_columns(data, cols):
    x = data[0]
    with pytest.raises(ValueError, match=r"query must have 3 columns \(as data\)"):
        K.kde_log_density(np.ones((5, cols)), x, np.ones(P))
    with pytest.raises(ValueError, match=r"bandwidth must be a scalar or have shape \(3,\)"):
        K.kde_log_density(x, x, np.ones(2))


@pytest.mark.parametrize("cols", [2, 4])
def test_structure_query_columns(data, params, cols):
    tan, joint, dtan = params
    q = np.ones((5, cols))
    for f in (S.gaussian_tan_log_contributions, S.gaussian_tan_log_joint):
        with pytest.raises(ValueError, match=r"values must have 3 columns \(as the training"):
            f(tan, q)
    for f in (S.group_log_density, S.seminaive_log_joint):
        with pytest.raises(ValueError, match=r"values must have 3 columns \(as the training"):
            f(joint, np.zeros(P, np.int32), q)
    for f in (S.discrete_tan_log_contributions, S.discrete_tan_log_joint):
        with pytest.raises(ValueError, match=r"codes must have 3 columns \(as the training codes"):
            f(dtan, q.astype(np.int32))


def test_discrete_tan_query_codes_beyond_n_states(data, params):
    dtan = params[2]
    codes = data[2].copy()
    codes[0, 1] = 3
    with pytest.raises(ValueError, match=r"codes\[:, 1\] holds code 3 but n_states\[1\]=3"):
        S.discrete_tan_log_joint(dtan, codes)


# --------------------------------------------------------------------------------------------------
# 2. maximum_spanning_tree
# --------------------------------------------------------------------------------------------------
def test_spanning_tree_root_and_weights():
    w = np.array([[0.0, 3.0, 1.0], [3.0, 0.0, 2.0], [1.0, 2.0, 0.0]])
    for root in (7, 3, -1):
        with pytest.raises(ValueError, match=r"root must be a node index in \[0, p=3\)"):
            S.maximum_spanning_tree(w, root)
    with pytest.raises(TypeError, match="root must be an int node index"):
        S.maximum_spanning_tree(w, 1.5)
    with pytest.raises(ValueError, match=r"weights must be square \(p, p\)"):
        S.maximum_spanning_tree(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"weights must be square \(p, p\)"):
        S.maximum_spanning_tree(np.ones(3))
    ref = np.asarray(S.maximum_spanning_tree(w, 2))
    np.testing.assert_array_equal(ref, [1, 2, -1])
    # integer weights are cast to float (finfo of an int dtype raised)
    np.testing.assert_array_equal(S.maximum_spanning_tree(w.astype(np.int32), 2), ref)
    np.testing.assert_array_equal(S.maximum_spanning_tree(w > 1.5, 0), [-1, 0, 1])


# --------------------------------------------------------------------------------------------------
# 3. parent arrays
# --------------------------------------------------------------------------------------------------
PARENT_FNS = {
    "fit_gaussian_tan": lambda x, y, cd, par: S.fit_gaussian_tan(x, y, par, C),
    "fit_discrete_tan": lambda x, y, cd, par: S.fit_discrete_tan(cd, y, par, 3, C),
    "flexible_tan_log_contributions": lambda x, y, cd, par: K.flexible_tan_log_contributions(
        x, x, y, par, C
    ),
    "flexible_tan_log_joint": lambda x, y, cd, par: K.flexible_tan_log_joint(x, x, y, par, C),
}


@pytest.mark.parametrize("name", sorted(PARENT_FNS))
def test_parent_entries(data, name):
    x, y, codes = data
    f = PARENT_FNS[name]
    for bad, i in (([-1, 0, 3], 2), ([-2, 0, 1], 0), ([-1, 7, 1], 1)):
        with pytest.raises(
            ValueError, match=rf"parent entries must lie in \[-1, 3\).*parent\[{i}\]"
        ):
            f(x, y, codes, np.array(bad))
    with pytest.raises(ValueError, match=r"parent\[1\]=1: a node cannot be its own parent"):
        f(x, y, codes, np.array([-1, 1, 1]))
    with pytest.raises(TypeError, match="parent must hold integer node indices"):
        f(x, y, codes, np.array([-1.0, 0.0, 1.0]))
    # cycles: the conditionals would not multiply to a distribution
    with pytest.raises(ValueError, match=r"parent forms a cycle \((\d -> ){3}\d,.*forest"):
        f(x, y, codes, np.array([1, 2, 0]))
    with pytest.raises(ValueError, match=r"parent forms a cycle \((1 -> 2 -> 1|2 -> 1 -> 2),"):
        f(x, y, codes, np.array([-1, 2, 1]))
    out = jax.tree.leaves(f(x, y, codes, np.array([-1, -1, 1])))  # a forest with two roots
    assert out and all(np.isfinite(np.asarray(v, float)).all() for v in out)


def test_parent_cycle_finder():
    """Chains end at roots however long; a ring is reported whole, a cycle reached through a
    tail is reported without the tail."""
    p = 1000
    chain = np.arange(-1, p - 1)
    assert S._parent_cycle(chain) == []
    ring = np.roll(np.arange(p), -1)  # i -> i + 1 (mod p)
    assert sorted(S._parent_cycle(ring)) == list(range(p))
    tail = np.array([-1, 3, 1, 2, 3])  # 4 -> 3 -> 2 -> 1 -> 3
    assert sorted(S._parent_cycle(tail)) == [1, 2, 3]
    assert S._parent_cycle(np.array([-1])) == []
    # narrow and unsigned dtypes (the sentinel p does not fit in them)
    assert S._parent_cycle(np.full(130, -1, np.int8)) == []
    assert S._parent_cycle(np.full(40_000, -1, np.int16)) == []
    assert sorted(S._parent_cycle(np.array([1, 2, 0], np.uint64))) == [0, 1, 2]


def test_parent_cycle_errors_name_the_fix(data):
    x, y, _ = data
    rng = np.random.default_rng(0)
    wide = rng.normal(size=(40, 130))
    forest = np.full(130, -1, np.int8)  # valid, in a dtype that cannot hold 130
    fitted = S.fit_gaussian_tan(wide, (wide[:, 0] > 0).astype(np.int32), forest, 2)
    assert np.isfinite(np.asarray(fitted.slope)).all()
    with pytest.raises(ValueError, match="use a signed integer dtype"):
        S.fit_gaussian_tan(x, y, np.array([1, 2, 0], np.uint32), C)
    ring = np.roll(np.arange(130), -1)
    with pytest.raises(ValueError, match=r"parent forms a cycle \((\d+ -> ){8}\.\.\., .*130 nodes"):
        S.fit_gaussian_tan(wide, (wide[:, 0] > 0).astype(np.int32), ring, 2)


# --------------------------------------------------------------------------------------------------
# 4. labels and codes
# --------------------------------------------------------------------------------------------------
LABEL_FNS = {
    "class_covariances": lambda x, y, cd: S.class_covariances(x, y, C),
    "conditional_mutual_information_gaussian": lambda x, y, cd: (
        S.conditional_mutual_information_gaussian(x, y, C)
    ),
    "fit_gaussian_tan": lambda x, y, cd: S.fit_gaussian_tan(x, y, PARENT, C),
    "fit_discrete_tan": lambda x, y, cd: S.fit_discrete_tan(cd, y, PARENT, 3, C),
    "fit_gaussian_joint": lambda x, y, cd: S.fit_gaussian_joint(x, y, C),
    "kde_bandwidths": lambda x, y, cd: K.kde_bandwidths(x, y, C, 1),
    "class_scales": lambda x, y, cd: K.class_scales(x, y, C),
    "flexible_nb_log_contributions": lambda x, y, cd: K.flexible_nb_log_contributions(x, x, y, C),
    "flexible_nb_log_joint": lambda x, y, cd: K.flexible_nb_log_joint(x, x, y, C),
    "parzen_log_density": lambda x, y, cd: K.parzen_log_density(x, x, y, C),
    "parzen_log_joint": lambda x, y, cd: K.parzen_log_joint(x, x, y, C),
    "flexible_tan_log_contributions": lambda x, y, cd: K.flexible_tan_log_contributions(
        x, x, y, PARENT, C
    ),
    "flexible_tan_log_joint": lambda x, y, cd: K.flexible_tan_log_joint(x, x, y, PARENT, C),
    "kde_conditional_mutual_information": lambda x, y, cd: K.kde_conditional_mutual_information(
        x, y, C
    ),
}


@pytest.mark.parametrize("name", sorted(LABEL_FNS))
def test_labels_outside_the_classes(data, name):
    x, y, codes = data
    f = LABEL_FNS[name]
    for bad in (y + 1, y - 1):
        with pytest.raises(ValueError, match=r"y must hold class codes in \[0, n_classes=2\)"):
            f(x, bad, codes)
    with pytest.raises(TypeError, match="y must hold integer class codes"):
        f(x, y + 0.5, codes)


def test_discrete_tan_codes(data):
    x, y, codes = data
    big = codes.copy()
    big[3, 2] = 5
    with pytest.raises(ValueError, match=r"codes\[:, 2\] holds code 5 but n_states\[2\]=3"):
        S.fit_discrete_tan(big, y, PARENT, 3, C)
    with pytest.raises(ValueError, match=r"codes\[:, 0\] holds code 2 but n_states\[0\]=2"):
        S.fit_discrete_tan(codes, y, PARENT, (2, 3, 3), C)
    with pytest.raises(TypeError, match="codes must hold integer codes"):
        S.fit_discrete_tan(codes.astype(float), y, PARENT, 3, C)
    # every negative code is missing (as in fit_stats), not only -1
    miss1, miss5 = codes.copy(), codes.copy()
    miss1[:4, 1] = -1
    miss5[:4, 1] = -5
    a = S.fit_discrete_tan(miss1, y, PARENT, 3, C)
    b = S.fit_discrete_tan(miss5, y, PARENT, 3, C)
    np.testing.assert_array_equal(a.log_cpt, b.log_cpt)
    np.testing.assert_array_equal(
        S.discrete_tan_log_joint(a, miss1), S.discrete_tan_log_joint(a, miss5)
    )


def test_search_labels(data):
    x, y, _ = data
    for search in (S.forward_sequential_selection_joining, S.backward_condensed_search):
        with pytest.raises(ValueError, match=r"val_y must hold class codes in \[0, n_classes=2\)"):
            search(x, y, x, y + 1, C)
        with pytest.raises(TypeError, match="train_y must hold integer class codes"):
            search(x, y + 0.5, x, y, C)


# --------------------------------------------------------------------------------------------------
# 5. sample weights
# --------------------------------------------------------------------------------------------------
WEIGHT_FNS = {
    "class_covariances": lambda x, y, cd, w: S.class_covariances(x, y, C, w),
    "conditional_mutual_information_gaussian": lambda x, y, cd, w: (
        S.conditional_mutual_information_gaussian(x, y, C, w)
    ),
    "fit_gaussian_tan": lambda x, y, cd, w: S.fit_gaussian_tan(x, y, PARENT, C, w),
    "fit_discrete_tan": lambda x, y, cd, w: S.fit_discrete_tan(cd, y, PARENT, 3, C, w),
    "fit_gaussian_joint": lambda x, y, cd, w: S.fit_gaussian_joint(x, y, C, w),
    "kde_log_density": lambda x, y, cd, w: K.kde_log_density(x, x, np.ones(P), w),
    "kde_bandwidths": lambda x, y, cd, w: K.kde_bandwidths(x, y, C, 1, w),
    "class_scales": lambda x, y, cd, w: K.class_scales(x, y, C, w),
    "flexible_nb_log_joint": lambda x, y, cd, w: K.flexible_nb_log_joint(x, x, y, C, w),
    "parzen_log_joint": lambda x, y, cd, w: K.parzen_log_joint(x, x, y, C, w),
    "flexible_tan_log_joint": lambda x, y, cd, w: K.flexible_tan_log_joint(x, x, y, PARENT, C, w),
    "kde_conditional_mutual_information": lambda x, y, cd, w: K.kde_conditional_mutual_information(
        x, y, C, w
    ),
}


@pytest.mark.parametrize("name", sorted(WEIGHT_FNS))
def test_weights(data, name):
    x, y, codes = data
    f = WEIGHT_FNS[name]
    for value in (-1.0, np.nan, np.inf):
        w = np.ones(N)
        w[3] = value
        with pytest.raises(ValueError, match=r"weight must be finite and >= 0"):
            f(x, y, codes, w)
    with pytest.raises(ValueError, match="weight must have a positive sum"):
        f(x, y, codes, np.zeros(N))


def test_search_weights(data):
    x, y, _ = data
    for search in (S.forward_sequential_selection_joining, S.backward_condensed_search):
        # all-zero validation weights made every error 0 / 0 = NaN
        with pytest.raises(ValueError, match="val_weight must have a positive sum"):
            search(x, y, x, y, C, val_weight=np.zeros(N))
        with pytest.raises(ValueError, match="train_weight must be finite and >= 0"):
            search(x, y, x, y, C, train_weight=-np.ones(N))
        with pytest.raises(ValueError, match=r"val_weight must have shape \(24,\)"):
            search(x, y, x, y, C, val_weight=np.ones(3))


# --------------------------------------------------------------------------------------------------
# 6. smoothing and other hyper-parameters
# --------------------------------------------------------------------------------------------------
def test_discrete_tan_alpha(data):
    x, y, codes = data
    with pytest.raises(ValueError, match=r"alpha must be finite and within \[0"):
        S.fit_discrete_tan(codes, y, PARENT, 3, C, alpha=-0.5)
    assert np.isfinite(S.fit_discrete_tan(codes, y, PARENT, 3, C, alpha=0.0).log_prior).all()
    with pytest.raises(ValueError, match=r"var_floor must be finite and within \[0"):
        S.fit_gaussian_tan(x, y, PARENT, C, var_floor=-1.0)
    with pytest.raises(ValueError, match=r"ridge must be finite and within \[0"):
        S.fit_gaussian_joint(x, y, C, ridge=np.nan)


H_FNS = {
    "kde_bandwidths": lambda x, y, h: K.kde_bandwidths(x, y, C, 1, None, h),
    "flexible_nb_log_contributions": lambda x, y, h: K.flexible_nb_log_contributions(
        x, x, y, C, None, h
    ),
    "flexible_nb_log_joint": lambda x, y, h: K.flexible_nb_log_joint(x, x, y, C, None, h),
    "parzen_log_density": lambda x, y, h: K.parzen_log_density(x, x, y, C, None, h),
    "parzen_log_joint": lambda x, y, h: K.parzen_log_joint(x, x, y, C, None, h),
    "flexible_tan_log_contributions": lambda x, y, h: K.flexible_tan_log_contributions(
        x, x, y, PARENT, C, None, h
    ),
    "flexible_tan_log_joint": lambda x, y, h: K.flexible_tan_log_joint(x, x, y, PARENT, C, None, h),
    "kde_conditional_mutual_information": lambda x, y, h: K.kde_conditional_mutual_information(
        x, y, C, None, h
    ),
}


@pytest.mark.parametrize("name", sorted(H_FNS))
def test_nonpositive_smoothing(data, name):
    x, y, _ = data
    for h in (0.0, -0.3, np.array([0.5, 0.0]), np.array([0.5, -1.0]), np.nan):
        with pytest.raises(ValueError, match=r"h must be finite and within \(0"):
            H_FNS[name](x, y, h)


def test_kde_bandwidth_and_sizes(data):
    x, y, _ = data
    for bw in (0.0, np.array([1.0, -1.0, 1.0])):
        with pytest.raises(ValueError, match=r"bandwidth must be finite and within \(0"):
            K.kde_log_density(x, x, bw)
    with pytest.raises(ValueError, match="chunk_size must be >= 1"):
        K.parzen_log_density(x, x, y, C, chunk_size=0)
    with pytest.raises(ValueError, match=r"n_samples must be finite and within \(0"):
        K.normal_rule_bandwidth(1, 0.0)
    with pytest.raises(ValueError, match="n_dims must be >= 1"):
        K.normal_rule_bandwidth(0, 10.0)
    with pytest.raises(ValueError, match=r"min_bandwidth must be finite and within \[0"):
        K.kde_bandwidths(x, y, C, 1, min_bandwidth=-1.0)
    with pytest.raises(ValueError, match="n_classes must be >= 1"):
        S.class_covariances(x, np.zeros(N, np.int32), 0)


# --------------------------------------------------------------------------------------------------
# tracers: no check fires inside a caller's jit / vmap / grad
# --------------------------------------------------------------------------------------------------
def test_traced_arguments_skip_the_checks(data, params):
    x, y, codes = data
    w = np.linspace(0.5, 1.5, N)
    cmi = S.conditional_mutual_information_gaussian(x, y, C, w)

    # traced root, y, weight, parent (a list of tracers too)
    tree = jax.jit(S.maximum_spanning_tree)(cmi, 1)
    np.testing.assert_array_equal(tree, S.maximum_spanning_tree(cmi, 1))
    fit = jax.jit(lambda yy, ww, par: S.fit_gaussian_tan(x, yy, par, C, ww).slope)
    np.testing.assert_allclose(fit(y, w, tree), S.fit_gaussian_tan(x, y, tree, C, w).slope)
    fit_d = jax.jit(lambda cd, par, a: S.fit_discrete_tan(cd, y, par, 3, C, None, a).log_cpt)
    np.testing.assert_allclose(
        fit_d(codes, PARENT, 0.5), S.fit_discrete_tan(codes, y, PARENT, 3, C, alpha=0.5).log_cpt
    )
    tan, joint, dtan = params
    np.testing.assert_allclose(
        jax.jit(S.discrete_tan_log_joint)(dtan, codes), S.discrete_tan_log_joint(dtan, codes)
    )
    # a code past its states, which only a traced call lets through, scores -inf (probability
    # 0), not a row of the stacked CPT that belongs to another state or predictor
    bad = np.array(codes[:4])
    bad[0, 1] = 3
    L = np.asarray(jax.jit(S.discrete_tan_log_contributions)(dtan, bad))
    assert np.all(np.isneginf(L[0, 1]))
    np.testing.assert_allclose(L[1:], S.discrete_tan_log_contributions(dtan, codes[1:4]))
    # parameters in the padded (q, M, M, c) layout of older versions (an old pickle) are refused
    old = S.DiscreteTANParams(
        dtan.log_prior, jnp.zeros((3, 3, 3, C)), jnp.zeros((3, 3, C)), dtan.parent, (3, 3, 3)
    )
    with pytest.raises(ValueError, match=r"\(K, M, c\).*Refit"):
        S.discrete_tan_log_contributions(old, codes)
    flex = jax.jit(lambda par: K.flexible_tan_log_joint(x[:4], x, y, par, C))
    np.testing.assert_allclose(
        flex([-1, 0, 1]), K.flexible_tan_log_joint(x[:4], x, y, PARENT, C), rtol=1e-12
    )

    # vmap over roots, weights, smoothing and parent arrays
    roots = jax.vmap(S.maximum_spanning_tree, in_axes=(None, 0))(cmi, jnp.arange(P))
    for r in range(P):
        np.testing.assert_array_equal(roots[r], S.maximum_spanning_tree(cmi, r))
    ws = np.stack([w, np.ones(N)])
    got = jax.vmap(lambda ww: K.parzen_log_joint(x[:4], x, y, C, ww))(ws)
    for k in range(2):
        np.testing.assert_allclose(got[k], K.parzen_log_joint(x[:4], x, y, C, ws[k]), rtol=1e-12)
    hs = np.array([0.4, 0.8])
    got = jax.vmap(lambda hh: K.flexible_nb_log_joint(x[:4], x, y, C, None, hh))(hs)
    for k in range(2):
        np.testing.assert_allclose(
            got[k], K.flexible_nb_log_joint(x[:4], x, y, C, None, hs[k]), rtol=1e-12
        )
    parents = np.array([[-1, 0, 1], [1, -1, 1]], np.int32)
    got = jax.vmap(lambda par: K.flexible_tan_log_contributions(x[:4], x, y, par, C))(parents)
    for k in range(2):
        np.testing.assert_allclose(
            got[k], K.flexible_tan_log_contributions(x[:4], x, y, parents[k], C), rtol=1e-12
        )
    ys = np.stack([y, 1 - y])
    got = jax.vmap(lambda yy: S.class_covariances(x, yy, C, w)[2])(ys)
    np.testing.assert_allclose(got[1], S.class_covariances(x, ys[1], C, w)[2], rtol=1e-12)

    # grad through weights and bandwidths
    g = jax.grad(lambda ww: S.fit_gaussian_tan(x, y, PARENT, C, ww).slope.sum())(jnp.asarray(w))
    assert np.isfinite(g).all()
    g = jax.grad(lambda b: K.kde_log_density(x[:4], x, b).sum())(jnp.ones(P))
    assert np.isfinite(g).all()
    g = jax.grad(lambda hh: K.flexible_nb_log_joint(x[:4], x, y, C, None, hh).sum())(0.7)
    assert np.isfinite(g)
