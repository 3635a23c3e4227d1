"""Input checks that close silent failures: values and weights that overflow float32, NaN priors,
boolean hyper-parameters, unsorted classes in `fit_from_stats`, huge or non-integer codes,
`n_states` given as an int or a NumPy array, `random_state`, zero-weight classes in the search
estimators, 2-D targets, and the functional core's eager checks (`fit_stats`, `fit_mle`,
`interpolate`), which must stay out of traced code."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxnb
from jaxnb.data import FeatureEncoder
from jaxnb.methods.nb import fit_stats
from jaxnb.params import fit_marginal, fit_mle, interpolate


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _mixed(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X, y = _data(n, seed)
    return np.c_[rng.integers(0, 3, (n, 2)), X], y


def test_float32_overflow_of_values_and_weights_is_an_error():
    X, y = _data()
    with jax.enable_x64(False):
        m = jaxnb.NaiveBayes().fit(X, y)
        with pytest.raises(ValueError, match=r"continuous column 2 holds 1e\+39.*float64"):
            m.predict_proba(np.array([[0.1, 0.2, 1e39]]))
        with pytest.raises(ValueError, match="continuous column 0 holds"):
            jaxnb.NaiveBayes().fit(np.r_[X[:-1], [[-3e38 * 10, 0, 0]]], y)
        with pytest.raises(ValueError, match="sample_weight .* overflows float32; rescale"):
            jaxnb.NaiveBayes().fit(X, y, sample_weight=np.r_[1e39, np.ones(len(y) - 1)])
        # still accepted: a large finite value, and NaN as missing with 'ignore'
        p = jaxnb.NaiveBayes(missing="ignore").fit(X, y).predict_proba([[0.1, np.nan, 1e6]])
        assert np.isfinite(p).all()
    # under float64 the same value is representable and scored
    p64 = jaxnb.NaiveBayes().fit(X, y).predict_proba(np.array([[0.1, 0.2, 1e39]]))
    assert np.isfinite(p64).all()


def test_scores_that_overflow_are_an_error_not_nan():
    """|x| ~ 1e20 is representable in float32 but (x - mu)^2 / sigma^2 is not: every class score
    is -inf and the posterior would be NaN. It raises, naming the row; float64 scores it, and
    the float64 answer (the class with the widest Gaussian) is what float32 gives up to 1e19."""
    X, y = _data()
    X[:, 2] = np.where(y == 1, 3.0, 1.0) * X[:, 2]  # class 1 has the wider column 2
    Xt = np.array([[0.1, 0.2, 0.0], [0.1, 0.2, 1e20]])
    with jax.enable_x64(False):
        m = jaxnb.NaiveBayes().fit(X, y)
        for call in (m.predict, m.predict_proba, m.predict_log_proba, m.decision_function):
            with pytest.raises(ValueError, match=r"X rows \[1\] \(1 in all\).*1e\+20.*float64"):
                call(Xt)
        assert m.predict(np.array([[0.1, 0.2, 1e19]]))[0] == 1
        assert np.isfinite(m.predict_proba(Xt[:1])).all()
    p64 = jaxnb.NaiveBayes().fit(X, y).predict_proba(Xt)
    assert np.isfinite(p64).all() and p64[1, 1] == 1.0
    # with Laplace smoothing off, a discrete state no class has seen has no score either
    Xm, ym = _mixed()
    Xm[:, 0] = np.minimum(Xm[:, 0], 1)  # state 2 of column 0 never seen
    m0 = jaxnb.NaiveBayes(discrete=[0, 1], alpha=0.0, n_states=[3, 3]).fit(Xm, ym)
    with pytest.raises(ValueError, match=r"X rows \[0\].*alpha = 0"):
        m0.predict(np.r_[[[2, 0, 0.1, 0.2, 0.3]]])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"priors": [np.nan, np.nan]}, r"priors must be positive and sum to 1 \(and finite\)"),
        ({"priors": ["a", "b"]}, "priors must be 2 numbers"),
        ({"alpha": True}, "alpha must be a finite number >= 0; got alpha=True"),
        ({"var_smoothing": False}, "var_smoothing must be a finite number"),
        ({"block_size": True}, "block_size must be None or a positive int"),
    ],
)
def test_naive_bayes_hyper_parameters(kwargs, match):
    X, y = _data()
    with pytest.raises((ValueError, TypeError), match=match):
        jaxnb.NaiveBayes(**kwargs).fit(X, y)


def test_numpy_integer_hyper_parameters_are_accepted():
    X, y = _mixed()
    a = jaxnb.NaiveBayes(block_size=np.int64(8)).fit(X, y).predict_proba(X)
    b = jaxnb.NaiveBayes(block_size=8).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(a, b, rtol=1e-12)
    c = jaxnb.NaiveBayes(discrete=[0, 1], n_states=np.array([3, 3])).fit(X, y)
    d = jaxnb.NaiveBayes(discrete=[0, 1], n_states=[3, 3]).fit(X, y)
    assert all(type(m) is int for m in c.n_states_)
    np.testing.assert_allclose(c.predict_proba(X), d.predict_proba(X), rtol=1e-12)


def test_n_states_must_be_a_list():
    X, y = _mixed()
    with pytest.raises(TypeError, match=r"n_states must be a list .* got 3"):
        jaxnb.NaiveBayes(discrete=[0, 1], n_states=3).fit(X, y)
    with pytest.raises(ValueError, match="n_states entries must be positive integers; got True"):
        jaxnb.NaiveBayes(discrete=[0, 1], n_states=[True, 3]).fit(X, y)


def test_huge_and_out_of_range_codes():
    X, y = _mixed()
    Xf = X.copy()
    Xf[0, 0] = 1e20
    with pytest.raises(ValueError, match=r"discrete column 0 holds 1e\+20, beyond the code range"):
        jaxnb.NaiveBayes(discrete=[0, 1]).fit(Xf, y)
    Xi = X[:, :1].astype(np.int64)
    Xi[0, 0] = 2**31 + 5
    with pytest.raises(ValueError, match="discrete column 0 holds 2147483653"):
        jaxnb.NaiveBayes(discrete=[0]).fit(Xi, y)
    Xi[0, 0] = 2**25  # fits int32, but inferring 2**25 + 1 states would allocate a huge table
    with pytest.raises(ValueError, match="inferred state count would be 33554433.*n_states"):
        jaxnb.NaiveBayes(discrete=[0]).fit(Xi, y)
    with pytest.raises(ValueError, match="inferred state count"):
        jaxnb.NaiveBayes(discrete=[0]).partial_fit(X[:, :1].astype(np.int64), y).partial_fit(Xi, y)


def test_fit_from_stats_checks_classes_stats_and_encoder():
    X, y = _data()
    m = jaxnb.NaiveBayes().fit(X, y)
    with pytest.raises(ValueError, match=r"classes must be sorted .* got \[1, 0\]"):
        jaxnb.NaiveBayes().fit_from_stats(m.stats_, [1, 0], m.encoder_)
    with pytest.raises(ValueError, match="classes must be 1-D distinct labels"):
        jaxnb.NaiveBayes().fit_from_stats(m.stats_, [0, 0], m.encoder_)
    with pytest.raises(TypeError, match="stats must be a jaxnb.suffstats.SuffStats"):
        jaxnb.NaiveBayes().fit_from_stats(None, m.classes_, m.encoder_)
    with pytest.raises(TypeError, match="encoder must be a fitted"):
        jaxnb.NaiveBayes().fit_from_stats(m.stats_, m.classes_, FeatureEncoder())
    again = jaxnb.NaiveBayes().fit_from_stats(m.stats_, m.classes_, m.encoder_)
    np.testing.assert_array_equal(again.predict(X), m.predict(X))


def test_two_dimensional_targets():
    X, y = _data()
    m = jaxnb.NaiveBayes().fit(X, y)
    assert m.score(X, y[:, None]) == m.score(X, y)
    with pytest.raises(ValueError, match=r"y must be 1-D \(n_samples,\); got shape \(60, 2\)"):
        m.score(X, np.c_[y, y])
    a = jaxnb.NaiveBayes().partial_fit(X[:30], y[:30]).partial_fit(X[30:], y[30:, None])
    np.testing.assert_allclose(a.predict_proba(X), m.predict_proba(X), rtol=1e-6)
    with pytest.raises(ValueError, match="y must be 1-D"):
        jaxnb.NaiveBayes().partial_fit(X[:30], y[:30]).partial_fit(X[30:], np.c_[y, y][30:])


@pytest.mark.parametrize(
    "est",
    [
        lambda rs: jaxnb.GroupLassoNB(selection="cv", random_state=rs),
        lambda rs: jaxnb.StagewiseNB(selection="cv", random_state=rs),
        lambda rs: jaxnb.SelectiveNB(validation_fraction=0.3, random_state=rs),
        lambda rs: jaxnb.FilterWrapperNB(random_state=rs),
        lambda rs: jaxnb.GaussianSemiNaiveNB(random_state=rs),
    ],
)
def test_random_state_is_checked(est):
    X, y = _data()
    for bad in ("a", -1, 1.5):
        with pytest.raises(ValueError, match="random_state must be an int >= 0 or None"):
            est(bad).fit(X, y)


@pytest.mark.parametrize("name", ["StagewiseNB", "SelectiveNB"])
def test_search_estimators_reject_a_zero_weight_class(name):
    X, y = _data()
    with pytest.raises(ValueError, match="class 1 has zero total sample_weight"):
        getattr(jaxnb, name)().fit(X, y, sample_weight=(y == 0) * 1.0)
    # a zero-weight row of a class that keeps positive weight is fine
    w = np.ones(len(y))
    w[np.flatnonzero(y == 1)[0]] = 0.0
    getattr(jaxnb, name)().fit(X, y, sample_weight=w)


@pytest.fixture(params=["host", "device"])
def check_where(request, monkeypatch):
    """Run fit_stats' input checks on the host (CPU and NumPy rows) or as on an accelerator
    (`_device_input_summary`), whose rows must never be copied to the host for them."""
    import jaxnb.methods.nb as nb

    if request.param == "device":
        monkeypatch.setattr(nb, "_off_host", lambda arrays: True)

        def no_host_copy(*args):
            raise AssertionError("rows on an accelerator were checked on the host")

        monkeypatch.setattr(nb, "_input_summary", no_host_copy)
    return request.param


def test_fit_stats_checks_concrete_inputs_only(check_where):
    codes = jnp.asarray([[0, 1], [2, 0], [1, 1]], jnp.int32)
    values = jnp.zeros((3, 1))
    y = jnp.asarray([0, 1, 1], jnp.int32)
    kw = dict(n_states=(3, 2), n_classes=2)
    with pytest.raises(ValueError, match=r"codes\[:, 1\] holds 2 but n_states\[1\] = 2"):
        fit_stats(codes.at[0, 1].set(2), values, y, **kw)
    with pytest.raises(ValueError, match=r"y must hold integer class codes in \[0, n_classes=2\)"):
        fit_stats(codes, values, y.at[0].set(2), **kw)
    with pytest.raises(TypeError, match="codes must be integers"):
        fit_stats(codes.astype(jnp.float32) + 0.5, values, y, **kw)
    with pytest.raises(ValueError, match="weight must be finite and >= 0"):
        fit_stats(codes, values, y, jnp.asarray([1.0, -1.0, 1.0]), **kw)
    with pytest.raises(ValueError, match="values contain inf"):
        fit_stats(codes, values.at[0, 0].set(jnp.inf), y, **kw)
    with pytest.raises(TypeError, match="n_states must be a tuple"):
        fit_stats(codes, values, y, n_states=3, n_classes=2)
    with pytest.raises(ValueError, match=r"codes must have shape \(n, len\(n_states\)\)"):
        fit_stats(codes[:, :1], values, y, **kw)
    # negative codes are missing values, not errors; lists of n_states are accepted
    st = fit_stats(codes.at[0, 0].set(-1), values, y, n_states=[3, 2], n_classes=2)
    assert float(st.counts[:3].sum()) == 2.0
    with pytest.raises(ValueError, match=r"got dtype float32, range \[0.0, 1.5\]"):
        fit_stats(codes, values, jnp.asarray([0.0, 1.5, 1.0], jnp.float32), **kw)

    # traced inputs skip the checks (no host round-trip under jit / vmap) and agree with eager
    eager = fit_stats(codes, values, y, **kw)
    jitted = jax.jit(lambda c, v, t: fit_stats(c, v, t, **kw))(codes, values, y)
    np.testing.assert_array_equal(eager.counts, jitted.counts)
    batched = jax.vmap(lambda c: fit_stats(c, values, y, **kw))(jnp.stack([codes, codes]))
    np.testing.assert_array_equal(batched.counts[1], eager.counts)


def test_fit_stats_check_summaries_agree_on_host_and_device():
    """Both reductions give the same numbers, for the cases the messages read them in."""
    import jaxnb.methods.nb as nb

    rng = np.random.default_rng(0)
    codes = rng.integers(-1, 4, (50, 3)).astype(np.int32)
    values = rng.normal(size=(50, 2))
    values[3, 1] = np.nan
    cases = [
        (codes, values, rng.integers(0, 3, 50).astype(np.int32), None),
        (codes, np.where(values > 1.5, np.inf, values), rng.normal(size=50), -rng.random(50)),
        (codes[:, :0], values[:, :0], np.arange(50, dtype=np.int32), np.ones(50)),
        (codes[:0], values[:0], np.zeros(0, np.int32), None),
    ]
    for c, v, y, w in cases:
        host = nb._input_summary(c, v, y, w)
        args = [jnp.asarray(a) for a in (c, v, y)] + [None if w is None else jnp.asarray(w)]
        device = jax.device_get(nb._device_input_summary(*args))
        assert host.keys() == device.keys()
        for k in host:
            np.testing.assert_array_equal(np.asarray(device[k]), np.asarray(host[k]), err_msg=k)
    # on CPU the rows are read in place: host checks, nothing compiled for them
    assert not nb._off_host((jnp.asarray(codes), jnp.asarray(values)))
    assert not nb._off_host((codes,))


def test_smoothing_and_interpolation_ranges():
    codes = jnp.asarray([[0, 1], [2, 0], [1, 1]], jnp.int32)
    st = fit_stats(codes, jnp.zeros((3, 1)), jnp.asarray([0, 1, 1]), n_states=(3, 2), n_classes=2)
    with pytest.raises(ValueError, match="alpha must be finite and within .*Lidstone"):
        fit_mle(st, -0.5)
    with pytest.raises(ValueError, match="var_smoothing must be finite"):
        fit_marginal(st, 1.0, -1.0)
    o1, o0 = fit_mle(st), fit_marginal(st)
    with pytest.raises(ValueError, match=r"alpha must be finite and within \[0.0, 1.0\]"):
        interpolate(o1, o0, jnp.full(3, 2.0))
    mid = interpolate(o1, o0, jnp.full(3, 0.5))
    np.testing.assert_allclose(mid.cpt, 0.5 * (o1.cpt + o0.cpt), rtol=1e-12)
    # traced: no check, same arithmetic (e.g. a gradient through the interpolation)
    g = jax.grad(lambda a: jnp.sum(interpolate(o1, o0, a).cpt))(jnp.full(3, 0.5))
    assert g.shape == (3,) and np.isfinite(np.asarray(g)).all()


def _scored_model(n=40, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, (n, 2))
    values = rng.normal(size=(n, 3))
    y = rng.integers(0, 2, n)
    st = fit_stats(codes, values, y, n_states=(3, 3), n_classes=2)
    return fit_mle(st), fit_marginal(st), codes, values, y


_P, _P0, _CODES, _VALUES, _Y = _scored_model()
_LP = np.asarray(jaxnb.log_posterior(_P, _CODES, _VALUES))
_L = np.asarray(jaxnb.log_contributions(_P, _CODES, _VALUES))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: jaxnb.log_joint(_P, _CODES + 3, _VALUES), ValueError, r"codes\[:, 0\] holds 5"),
        (lambda: jaxnb.log_contributions(_P, _CODES + 3, _VALUES), ValueError, "n_states"),
        (lambda: jaxnb.log_posterior(_P, _CODES * 1.0, _VALUES), TypeError, "integer state code"),
        (lambda: jaxnb.log_joint(_P, _CODES[:, :1], _VALUES), ValueError, r"codes must .*\(n, 2\)"),
        (lambda: jaxnb.log_joint(_P, _CODES, _VALUES[:30]), ValueError, r"values must .*\(40, 3\)"),
        (lambda: jaxnb.log_joint(_P, _CODES, _VALUES[0]), ValueError, r"values must .*got \(3,\)"),
        (lambda: jaxnb.log_joint(_P, _CODES, _VALUES, np.ones(4)), ValueError, r"weights .*\(5,\)"),
        (lambda: jaxnb.log_joint(_P, _CODES, _VALUES, None, np.ones(3)), ValueError, "bias must"),
        (lambda: jaxnb.combine(_L, np.ones((5, 3))), ValueError, r"weights .*\(5, 2\)"),
        (lambda: jaxnb.combine(_L[0]), ValueError, r"L must have shape \(n, p, c\)"),
        (lambda: jaxnb.error_rate(_LP, _Y + 2), ValueError, r"class codes in \[0, c=2\)"),
        (lambda: jaxnb.log_loss(_LP, _Y + 2), ValueError, r"got range \[2, 3\]"),
        (lambda: jaxnb.error_probability(_LP, -_Y - 1), ValueError, r"class codes"),
        (lambda: jaxnb.joint_log_likelihood(_LP, _Y + 5), ValueError, r"class codes"),
        (lambda: jaxnb.log_loss(_LP, _Y * 1.0), ValueError, "integer class codes"),
        (lambda: jaxnb.log_loss(_LP, _Y[:10]), ValueError, r"y must have shape .*\(40,\)"),
        (lambda: jaxnb.log_loss(_LP, _Y, -np.ones(40)), ValueError, "weight must be finite"),
        (lambda: jaxnb.error_rate(_LP, _Y, np.zeros(40)), ValueError, "positive sum"),
        (lambda: jaxnb.error_rate(_LP, _Y, np.ones(3)), ValueError, "one weight per row"),
        (lambda: interpolate(_P, _P0, np.ones(7)), ValueError, r"alpha must have shape \(5,\)"),
        (lambda: interpolate(_P, _P0, 0.5), ValueError, r"alpha must have shape \(5,\)"),
        (
            lambda: fit_mle(
                jaxnb.fit_stats(_CODES, _VALUES, _Y, n_states=(3, 3), n_classes=2), np.ones(3)
            ),
            ValueError,
            r"alpha must be a scalar .*\(6, 2\)",
        ),
    ],
)
def test_scoring_core_checks_rows_labels_and_shapes(call, error, match):
    # before: NaN or an error rate of 1 for out-of-range labels, a score for float or out-of-range
    # codes, and JAX's broadcasting errors (naming no argument) for wrong shapes
    with pytest.raises(error, match=match):
        call()


def test_scoring_core_checks_accept_valid_input_and_stay_out_of_traced_code():
    np.testing.assert_allclose(
        _LP, jax.nn.log_softmax(jaxnb.combine(_L, None, _P.log_prior), -1), rtol=1e-10
    )
    # missing codes (negative) are valid; batched scores take y of their leading shape
    codes = _CODES.copy()
    codes[0, 1] = -1
    assert np.isfinite(np.asarray(jaxnb.log_joint(_P, codes, _VALUES))).all()
    lp2 = np.stack([_LP, _LP[::-1]])
    np.testing.assert_allclose(
        jaxnb.log_loss(lp2, np.stack([_Y, _Y[::-1]])), jaxnb.log_loss(_LP, _Y), rtol=1e-12
    )
    # traced: the value checks are skipped, so jit/vmap/grad work as before
    g = jax.grad(lambda v: jaxnb.log_loss(jaxnb.log_posterior(_P, _CODES, v), _Y))(_VALUES)
    assert g.shape == _VALUES.shape and np.isfinite(np.asarray(g)).all()
    per_fold = jax.vmap(lambda w: jaxnb.error_rate(jnp.asarray(_LP), _Y, w))(
        jnp.asarray(np.eye(2)[np.arange(40) % 2].T)
    )
    assert per_fold.shape == (2,)
    # traced out-of-range codes count as missing in both scoring paths (log_contributions used
    # to gather a cell of the next predictor's block)
    oob = _CODES.copy()
    oob[:, 0] = 7
    miss = oob.copy()
    miss[:, 0] = -1
    lj = jax.jit(jaxnb.log_joint)(_P, oob, _VALUES)
    lc = jax.jit(jaxnb.log_contributions)(_P, oob, _VALUES)
    np.testing.assert_allclose(lj, jaxnb.log_joint(_P, miss, _VALUES), rtol=1e-12)
    np.testing.assert_allclose(lc, jaxnb.log_contributions(_P, miss, _VALUES), rtol=1e-12)
    # the static checks run at trace time too
    with pytest.raises(TypeError, match="integer state codes"):
        jax.jit(jaxnb.log_joint)(_P, _CODES * 1.0, _VALUES)


def test_core_scoring_with_int64_numpy_codes_warns_nothing_in_float32_mode():
    # the one-hot used jnp.arange(dtype=codes.dtype): int64 NumPy codes raised JAX's "int64 is not
    # available, truncated to int32" UserWarning at every eager call without jax_enable_x64
    with jax.enable_x64(False):
        st = jaxnb.fit_stats(_CODES, _VALUES, _Y, n_states=(3, 3), n_classes=2)
        p = jaxnb.fit_mle(st)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lp = jaxnb.log_posterior(p, _CODES, _VALUES)
    assert lp.dtype == jnp.float32
    np.testing.assert_allclose(lp, _LP, atol=1e-4)


def test_subtract_refuses_a_part_larger_than_the_total():
    codes, values, y = _CODES, _VALUES, _Y
    total = jaxnb.fit_stats(codes, values, y, n_states=(3, 3), n_classes=2)
    part = jaxnb.fit_stats(codes[:15], values[:15], y[:15], n_states=(3, 3), n_classes=2)
    rest = jaxnb.subtract(total, part)
    ref = jaxnb.fit_stats(codes[15:], values[15:], y[15:], n_states=(3, 3), n_classes=2)
    np.testing.assert_allclose(rest.counts, ref.counts, atol=1e-12)
    np.testing.assert_allclose(rest.m2, ref.m2, rtol=1e-9)
    # the arguments swapped: every cell of the "remainder" was clamped to 0 silently before
    with pytest.raises(ValueError, match=r"part holds more weight than total in class_weight\["):
        jaxnb.subtract(part, total)
    # float32 statistics of the same rows summed in another order are not refused (round-off)
    with jax.enable_x64(False):
        w = np.random.default_rng(3).uniform(0.1, 3.0, 40).astype(np.float32)
        tot32 = jaxnb.fit_stats(codes, values, y, w, n_states=(3, 3), n_classes=2)
        rev = jaxnb.fit_stats(
            codes[::-1], values[::-1], y[::-1], w[::-1], n_states=(3, 3), n_classes=2
        )
        empty = jaxnb.subtract(tot32, rev)
        assert float(np.abs(np.asarray(empty.class_weight)).max()) == 0.0
    # traced: no check (the clamped remainder, as before)
    clamped = jax.jit(jaxnb.subtract)(part, total)
    assert float(np.asarray(clamped.class_weight).max()) == 0.0


def _search_cases():
    from jaxnb.methods.selective import phase_floating_path, selective_path
    from jaxnb.methods.stagewise import fsnb_path, n_units

    kw = dict(max_iter=5, k_max=n_units(0.025))

    def fs(codes=_CODES, values=_VALUES, y=_Y, weight=None, omega0=_P0):
        return lambda: fsnb_path(_P, omega0, codes, values, y, weight, **kw)

    def sel(L=_L, bias=_P.log_prior, y=_Y, weight=None, search=selective_path):
        return lambda: search(L, bias, y, weight)

    other = fit_marginal(jaxnb.fit_stats(_CODES, _VALUES[:, :2], _Y, n_states=(3, 3), n_classes=2))
    return [
        (fs(y=_Y + 2), ValueError, r"class codes in \[0, c=2\) .*got range \[2, 3\]"),
        (fs(y=_Y * 1.0), ValueError, "integer class codes"),
        (fs(y=_Y[:10]), ValueError, r"y must have shape \(n,\) = \(40,\)"),
        (fs(codes=_CODES + 3), ValueError, r"omega1.n_states\[0\] = 3"),
        (fs(values=_VALUES[:, :2]), ValueError, r"values must have shape \(40, 3\)"),
        (fs(weight=-np.ones(40)), ValueError, "weight must be finite"),
        (fs(weight=np.zeros(40)), ValueError, "positive sum"),
        (fs(omega0=other), ValueError, "omega0 must describe the same predictors"),
        (sel(y=_Y + 2), ValueError, r"class codes in \[0, c=2\)"),
        (sel(y=_Y + 2, search=phase_floating_path), ValueError, r"class codes in \[0, c=2\)"),
        (sel(y=_Y * 1.0), ValueError, "integer class codes"),
        (sel(y=_Y[:10]), ValueError, r"y must have shape \(n,\) = \(40,\)"),
        (sel(L=_L[0]), ValueError, r"L must have shape \(n, p, c\)"),
        (sel(bias=np.zeros(3)), ValueError, r"bias must have shape \(2,\)"),
        (sel(weight=np.ones(7)), ValueError, r"weight must have shape \(40,\)"),
    ]


@pytest.mark.parametrize("case", range(15))
def test_search_cores_check_rows_and_labels(case):
    # before: an out-of-range label counted as an error at every fsNB step (a path of error 1) and
    # as always correct in the selective search (error 0); float labels and codes above n_states
    # were used; wrong shapes gave reshape or broadcasting errors naming no argument
    cases = _search_cases()
    assert len(cases) == 15
    call, error, match = cases[case]
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(y=_Y + 2), r"y must hold integer class codes in \[0, n_classes=2\)"),
        (dict(codes=_CODES + 3), r"codes\[:, 0\] holds 5 but n_states\[0\] = 3"),
        (dict(weight=-np.ones(40)), "weight must be finite and >= 0"),
        (dict(alpha=-1.0), "alpha must be finite and within .*Lidstone"),
        (dict(var_smoothing=np.nan), "var_smoothing must be finite"),
    ],
)
def test_fit_nb_checks_rows_and_smoothing_like_fit_stats(kwargs, match):
    # before: a plain jax.jit, so a label >= n_classes gave NaN parameters, a code >= n_states was
    # dropped and a negative alpha was used, without a word
    from jaxnb.methods.nb import fit_nb

    args = dict(codes=_CODES, values=_VALUES, y=_Y, weight=None) | kwargs
    with pytest.raises(ValueError, match=match):
        fit_nb(**args, n_states=(3, 3), n_classes=2)


def test_fit_nb_equals_fit_stats_then_fit_mle_and_stays_traceable():
    from jaxnb.methods.nb import fit_nb, fit_reference_params

    want = fit_mle(jaxnb.fit_stats(_CODES, _VALUES, _Y, n_states=(3, 3), n_classes=2), 0.5)
    got = fit_nb(_CODES, _VALUES, _Y, None, 0.5, n_states=[3, 3], n_classes=2)  # a list is fine
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    per_weight = jax.vmap(
        lambda w: fit_nb(_CODES, _VALUES, _Y, w, n_states=(3, 3), n_classes=2).log_prior
    )(jnp.ones((2, 40)))
    assert per_weight.shape == (2, 2)
    st = jaxnb.fit_stats(_CODES, _VALUES, _Y, n_states=(3, 3), n_classes=2)
    with pytest.raises(ValueError, match="alpha must be finite"):
        fit_reference_params(st, -0.5)


def _raw_search_cases():
    from jaxnb.methods.selective import mle_contributions
    from jaxnb.methods.stagewise import evaluate_path, fit_fsnb, n_units

    kw = dict(n_states=(3, 3), n_classes=2, max_iter=4, k_max=n_units(0.025))
    alpha = np.full((3, 5), 0.5)

    def fit(**change):
        a = dict(codes=_CODES, values=_VALUES, y=_Y, weight=None) | change
        return lambda: fit_fsnb(a["codes"], a["values"], a["y"], a["weight"], **kw)

    def ev(alpha_path=alpha, y=_Y, **kwargs):
        return lambda: evaluate_path(_P, _P0, alpha_path, _CODES, _VALUES, y, **kwargs)

    return [
        (fit(y=_Y + 2), r"y must hold integer class codes in \[0, n_classes=2\)"),
        (fit(codes=_CODES + 3), r"codes\[:, 0\] holds 5"),
        (fit(weight=np.zeros(40)), "weight must have a positive sum"),
        (ev(y=_Y + 2), r"class codes in \[0, c=2\)"),
        (ev(alpha_path=alpha[:, :3]), r"alpha_path must have shape \(m, 5\)"),
        (ev(criterion="auc"), "criterion must be one of"),
        (lambda: mle_contributions(_P, _CODES + 3, _VALUES), r"omega1.n_states\[0\] = 3"),
    ]


@pytest.mark.parametrize("case", range(7))
def test_raw_data_search_entry_points_check_their_inputs(case):
    # before: plain jax.jit entry points (fit_fsnb, evaluate_path, mle_contributions) used an
    # out-of-range label or code as given (a NaN or an all-wrong path) without a word
    cases = _raw_search_cases()
    assert len(cases) == 7
    call, match = cases[case]
    with pytest.raises(ValueError, match=match):
        call()


def test_feature_encoder_repr_shows_its_settings_and_what_fit_decided():
    """A model's ``encoder_`` printed as ``<jaxnb.data.FeatureEncoder object at 0x...>``; now
    the changed settings, and after fit which columns became discrete (with their state counts)
    and which continuous."""
    assert repr(FeatureEncoder()) == "FeatureEncoder()"
    assert repr(FeatureEncoder(discrete=[1], missing="ignore")) == (
        "FeatureEncoder(discrete=[1], missing='ignore')"
    )
    X = np.c_[np.linspace(0, 1, 10), np.arange(10) % 3, np.linspace(1, 2, 10)]
    enc = jaxnb.NaiveBayes(discrete=[1]).fit(X, np.arange(10) % 2).encoder_
    assert repr(enc) == (
        "FeatureEncoder(discrete=[1]) fitted on 3 columns: discrete [1] with n_states [3], "
        "continuous [0, 2]"
    )
