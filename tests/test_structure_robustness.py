"""TAN, Gaussian semi-naive and kernel classifiers on edge cases: constant predictors (rounding
noise must not become correlation, slope or density), near-collinear predictors in float32, error
ties in the semi-naive searches, rescaled data, zero-weight rows holding infinities, gradients at
constant columns, and bad input to the core functions."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.estimators_structure import TAN, FlexibleNB, FlexibleTAN, GaussianSemiNaiveNB, ParzenNB
from jaxnb.methods import kernel as K
from jaxnb.methods import structure as S


def _two_class(n=200, p=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return rng.normal(size=(n, p)) + y[:, None], y


def test_gaussian_tan_ignores_a_constant_column():
    """0.1 is not exact in binary: x - mean left ~1e-17 deviations, which became a correlation of
    +-1 (CMI 354 nats between two constants) and class-dependent slopes of -0.37 / 1.50 on the
    constant parent (accuracy 0.445 once the query's constant moved to 10.1)."""
    x, y = _two_class()
    X = np.column_stack([np.full(len(y), 0.1), x])
    m = TAN(kind="gaussian", root=0).fit(X, y)
    parent = np.asarray(m.params_.parent)
    slope = np.asarray(m.params_.slope)
    assert (slope[:, parent == 0] == 0.0).all()  # children of the constant
    base = m.predict_proba(X)
    for v in (1.1, 10.1):
        p = m.predict_proba(np.column_stack([np.full(len(y), v), x]))
        np.testing.assert_allclose(p, base, atol=1e-12)
    two = np.column_stack([x, np.full(len(y), 0.1), np.full(len(y), 0.3)])
    assert TAN(kind="gaussian").fit(two, y).cmi_[2, 3] == 0.0


def test_gaussian_tan_residual_variance_in_float32_near_collinear_child():
    """Sigma_ii - b Sigma_ik cancelled: 4.2e-7 against 8.3e-9 for a child = parent + 1e-4 noise."""
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 2)) * (1 + y[:, None]) + y[:, None]
    X = np.column_stack([x, x[:, 0] + 1e-4 * rng.normal(size=n)])
    ref = []
    for c in range(2):
        a, b = X[y == c, 2], X[y == c, 0]
        slope = np.cov(a, b, bias=True)[0, 1] / b.var()
        ref.append(np.mean((a - a.mean() - slope * (b - b.mean())) ** 2))
    with jax.enable_x64(False):
        got = S.fit_gaussian_tan(X.astype(np.float32), y, np.array([-1, 0, 0]), 2, var_floor=1e-12)
    np.testing.assert_allclose(np.asarray(got.var[:, 2], np.float64), ref, rtol=0.05)


def test_semi_naive_constant_column_scores_every_class_alike():
    """The floor sqrt(tiny) left the constant's class variances at 1.5e-154 / 1.9e-34: a 139-nat
    bias towards one class."""
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(3, int), np.ones(7, int)]
    X = np.column_stack([rng.normal(size=10), np.full(10, 0.1)])
    p = S.fit_gaussian_joint(X, y, 2)
    np.testing.assert_array_equal(np.asarray(p.cov)[:, 1, 1], 1.0)
    for v in (0.1, 3.0):
        d = np.asarray(S.group_log_density(p, np.array([-1, 0]), np.array([[0.0, v]])))
        assert d[0, 0] == d[0, 1]


def test_semi_naive_search_in_float32_with_duplicated_columns():
    """ridge 1e-9 is below float32 resolution: the Cholesky of a duplicated pair was NaN and the
    NaN structure was scored as "predict class 0" (validation log loss NaN, predict failed)."""
    x, y = _two_class(300)
    X = np.column_stack([x, x]).astype(np.float32)
    with jax.enable_x64(False):
        m = GaussianSemiNaiveNB(search="backward").fit(X, y)
        assert all(np.isfinite(h[2]) for h in m.history_)
        assert np.isfinite(m.predict_log_proba(X[:5])).all()
        assert m.score(X, y) > 0.7


def test_semi_naive_searches_do_not_accept_an_error_tie():
    """58 wrong rows summed to 0.5800000000000001 for one candidate and 0.58 for another: the
    search accepted the rounding as an improvement."""
    rng = np.random.default_rng(19)
    n, c, p = 100, 3, 4
    A = rng.normal(size=(p, p))
    M = rng.normal(size=(c, p)) * 0.5
    yt = rng.integers(0, c, n)
    xt = rng.normal(size=(n, p)) @ A + M[yt]
    yv = rng.integers(0, c, n)
    xv = rng.normal(size=(n, p)) @ A + M[yv]
    for search in (S.forward_sequential_selection_joining, S.backward_condensed_search):
        wrong = [round(e * n) for _, e, _ in search(xt, yt, xv, yv, c).history]
        assert all(b < a for a, b in zip(wrong, wrong[1:], strict=False)), wrong


@pytest.mark.parametrize("est", [FlexibleNB, ParzenNB, FlexibleTAN])
def test_kernel_classifiers_are_scale_invariant(est):
    """An absolute 1e-12 bandwidth floor clamped every bandwidth of data scaled by 1e-13
    (posteriors off by 0.48)."""
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) * (1 + y[:, None]) + y[:, None]
    a = est().fit(X, y).predict_proba(X)
    b = est().fit(X * 1e-13, y).predict_proba(X * 1e-13)
    np.testing.assert_allclose(a, b, atol=1e-9)


@pytest.mark.parametrize("est", [FlexibleNB, ParzenNB, FlexibleTAN])
def test_kernel_classifiers_ignore_a_constant_column(est):
    """A column constant over the (weighted) training rows gets bandwidth 1 and the same factor
    in every class. Parzen's joint normal rule counted it among its m dimensions, so it widened
    the other columns' kernels: posteriors 0.035 apart on Diabetes, 0.071 here."""
    rng = np.random.default_rng(3)
    n = 300
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) * (1 + y[:, None]) + y[:, None]
    w = np.ones(n)
    w[0] = 0.0  # a zero-weight row may hold another value: the column is still constant
    Xc = np.c_[X[:, :1], np.full(n, 2.5), X[:, 1:]]
    Xc[0, 1] = -40.0
    a = est().fit(X, y, sample_weight=w).predict_proba(X)
    Q = Xc.copy()
    Q[:, 1] = rng.normal(size=n)  # any query value: every class scores it alike
    b = est().fit(Xc, y, sample_weight=w).predict_proba(Q)
    np.testing.assert_allclose(a, b, atol=1e-9)


def test_parzen_normal_rule_counts_the_varying_columns():
    x, y = _two_class(50, seed=2)
    xc = np.c_[x, np.full(len(y), 1.0)]
    bw, nc = K.kde_bandwidths(xc, y, 2, 3, skip_constant=True)
    want, _ = K.kde_bandwidths(x, y, 2, 2)
    np.testing.assert_allclose(np.asarray(bw)[:, :2], np.asarray(want), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(bw)[:, 2], 1.0)
    # without skip_constant, the rule's m is n_dims as given
    h3 = np.asarray(K.normal_rule_bandwidth(3, np.asarray(nc)))
    h2 = np.asarray(K.normal_rule_bandwidth(2, np.asarray(nc)))
    full, _ = K.kde_bandwidths(xc, y, 2, 3)
    np.testing.assert_allclose(np.asarray(full)[:, :2], np.asarray(want) * (h3 / h2)[:, None])


def test_zero_weight_rows_with_infinite_values_equal_removed_rows():
    """0 * inf = NaN in the weighted moments: TAN slopes silently 0, kernel densities NaN."""
    x, y = _two_class(40, seed=1)
    xi = x.copy()
    xi[0, 0] = np.inf
    w = np.ones(len(y))
    w[0] = 0
    kept = (x[1:], y[1:])
    np.testing.assert_allclose(
        S.fit_gaussian_tan(xi, y, [-1, 0], 2, w).slope,
        S.fit_gaussian_tan(*kept, [-1, 0], 2).slope,
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        S.class_covariances(xi, y, 2, w)[2], S.class_covariances(*kept, 2)[2], rtol=1e-12
    )
    for f in (K.parzen_log_joint, K.flexible_nb_log_joint):
        np.testing.assert_allclose(f(x[:3], xi, y, 2, w), f(x[:3], *kept, 2), rtol=1e-12)


def test_gradients_are_finite_with_a_constant_column():
    rng = np.random.default_rng(0)
    n = 50
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 3))
    x[:, 2] = 1.0
    w = jnp.ones(n)
    fns = [
        lambda w: S.conditional_mutual_information_gaussian(x, y, 2, w).sum(),
        lambda w: K.parzen_log_joint(x[:4], x, y, 2, w).sum(),
        lambda w: K.flexible_nb_log_joint(x[:4], x, y, 2, w).sum(),
    ]
    for f in fns:
        g = np.asarray(jax.grad(f)(w))
        assert np.isfinite(g).all()


def test_semi_naive_tie_margin_stays_below_one_validation_row():
    """A margin of 4 n eps grew past one row's weight (1/n) in float32 for n >= 1449, so a real
    improvement of a few rows was taken for a tie and the search stopped empty."""
    rng = np.random.default_rng(0)

    def make(n, k):
        y = np.zeros(n, np.int32)
        y[:k] = 1
        x = rng.normal(size=(n, 2))
        x[:k, 0] += 10
        return x, y

    xt, yt = make(400, 40)
    xv, yv = make(3000, 3)
    with jax.enable_x64(False):
        res = S.forward_sequential_selection_joining(
            xt.astype(np.float32), yt, xv.astype(np.float32), yv, 2
        )
    assert res.groups.tolist() == [0, -1]


def test_class_moment_gradients_at_zero_weight_rows():
    """Membership by weight cut a zero-weight row out of the graph: its gradient lost the
    x - mu term (-0.259 against the finite difference -0.195)."""
    x = np.random.default_rng(0).normal(size=(6, 2))
    y = np.array([0, 0, 0, 1, 1, 1])
    w = jnp.array([1.0, 1.0, 0.0, 1.0, 1.0, 1.0])

    def f(w):
        _, mean, cov = S.class_covariances(x, y, 2, w)
        return cov.sum() + mean.sum()

    g = float(jax.grad(f)(w)[2])
    h = 1e-7  # one-sided: weights must stay >= 0
    fd = (float(f(w.at[2].set(h))) - float(f(w))) / h
    assert abs(g - fd) < 1e-5
