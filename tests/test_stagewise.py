"""Tests for jaxnb.methods.stagewise (fsNB, Algorithm 1 of Vidaurre, Bielza & Larrañaga 2011).

The reference is a loop-based float64 NumPy transcription of Algorithm 1: NB parameters from counts,
Ω(α) by Eq. (13), every candidate model (i, t) rebuilt from scratch and scored on the training rows.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.methods import stagewise as sw
from jaxnb.methods.nb import fit_stats
from jaxnb.params import fit_marginal, fit_mle


def _data(seed, n=60, q=3, r=2, c=3, m=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    y[:c] = np.arange(c)
    codes = np.empty((n, q), np.int32)
    for i in range(q):
        cpt = rng.dirichlet(np.ones(m), size=c)
        codes[:, i] = [rng.choice(m, p=cpt[j]) for j in y]
    codes[:m, :] = np.arange(m)[:, None]  # every state observed
    mu = rng.normal(0, 1, (c, r))
    values = mu[y] + rng.normal(0, 1.0, (n, r))
    return codes, values, y.astype(np.int32), (m,) * q, c


def _omegas(codes, values, y, n_states, c, weight=None):
    st = fit_stats(
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        None if weight is None else jnp.asarray(weight),
        n_states=n_states,
        n_classes=c,
    )
    return fit_mle(st, 1.0, 1e-9), fit_marginal(st, 1.0, 1e-9)


# ------------------------------------------------------------------ NumPy reference (Algorithm 1)
def _ref_params(codes, values, y, n_states, c, lid=1.0, vs=1e-9):
    n, q = codes.shape
    Nj = np.bincount(y, minlength=c).astype(float)
    th1, th0 = [], []
    for i in range(q):
        M = n_states[i]
        cnt = np.zeros((M, c))
        for r in range(n):
            cnt[codes[r, i], y[r]] += 1
        th1.append((cnt + lid) / (cnt.sum(0) + lid * M))
        marg = (cnt.sum(1) + lid) / (n + lid * M)
        th0.append(np.repeat(marg[:, None], c, 1))
    mu1 = np.array([values[y == j].mean(0) for j in range(c)])  # (c, r)
    pvar = values.var(0)
    sd1 = np.sqrt(np.array([values[y == j].var(0) for j in range(c)]) + vs * pvar)
    mu0 = np.repeat(values.mean(0)[None], c, 0)
    sd0 = np.repeat(np.sqrt(pvar * (1 + vs))[None], c, 0)
    return np.log(Nj / n), th1, th0, mu1, sd1, mu0, sd0


def _ref_scores(P, codes, values, a):
    logpi, th1, th0, mu1, sd1, mu0, sd0 = P
    q = codes.shape[1]
    S = np.tile(logpi, (codes.shape[0], 1))
    for i in range(q):
        th = a[i] * th1[i] + (1 - a[i]) * th0[i]
        S += np.log(th[codes[:, i]])
    for k in range(values.shape[1]):
        ak = a[q + k]
        mu = ak * mu1[:, k] + (1 - ak) * mu0[:, k]
        sd = ak * sd1[:, k] + (1 - ak) * sd0[:, k]
        S += -0.5 * ((values[:, k : k + 1] - mu) / sd) ** 2 - np.log(sd) - 0.5 * np.log(2 * np.pi)
    return S


def _ref_crit(S, y, criterion):
    if criterion == "error":
        return np.mean(np.argmax(S, 1) != y)
    lp = S - S.max(1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(1, keepdims=True))
    t = lp[np.arange(len(y)), y]
    return np.mean(1 - np.exp(t)) if criterion == "error_probability" else -np.mean(t)


def _ref_fsnb(
    codes, values, y, n_states, c, eps, v, step_rule, criterion, patience, max_iter, scan=None
):
    """Algorithm 1 with integer ε-units; returns the α path, criteria, errors and moves. The
    predictors are scanned in the order ``scan`` (default 0..p-1): the first of tied moves wins.
    A predictor whose Ω⁽¹⁾ is the same in every class is not a candidate (no move of it changes
    a score)."""
    P = _ref_params(codes, values, y, n_states, c)
    p = codes.shape[1] + values.shape[1]
    _, th1, _, mu1, sd1, _, _ = P
    frozen = np.array(
        [bool((t == t[:, :1]).all()) for t in th1]
        + [
            bool((mu1[:, k] == mu1[0, k]).all() and (sd1[:, k] == sd1[0, k]).all())
            for k in range(values.shape[1])
        ]
    )
    kmax = int(np.ceil(1 / eps * (1 - 1e-9)))
    alpha_of = lambda k: np.where(k >= kmax, 1.0, k * eps)
    k = np.zeros(p, int)
    S = _ref_scores(P, codes, values, alpha_of(k))
    alphas, crits, errs, moves = (
        [alpha_of(k)],
        [_ref_crit(S, y, criterion)],
        [_ref_crit(S, y, "error")],
        [],
    )
    best_seen, since = crits[0], 0
    while ((k < kmax) & ~frozen).any() and len(moves) < max_iter and since < patience:
        best, bi, bt = np.inf, -1, -1
        for i in range(p) if scan is None else scan:
            if k[i] >= kmax or frozen[i]:
                continue
            for t in range(1, v + 1):
                kk = k.copy()
                kk[i] = min(kk[i] + t, kmax)
                e = _ref_crit(_ref_scores(P, codes, values, alpha_of(kk)), y, criterion)
                if e < best:  # strictly lower wins: first in (i, t) order keeps ties
                    best, bi, bt = e, i, t
        k[bi] = min(k[bi] + (bt if step_rule == "t_eps" else 1), kmax)
        S = _ref_scores(P, codes, values, alpha_of(k))
        alphas.append(alpha_of(k))
        crits.append(_ref_crit(S, y, criterion))
        errs.append(_ref_crit(S, y, "error"))
        moves.append((bi, bt))
        # early stopping follows the criterion of the model moved to (with the ε rule that is
        # α + ε, not the winning candidate α + t*ε)
        moved = best if step_rule == "t_eps" else crits[-1]
        if moved < best_seen:
            best_seen, since = moved, 0
        else:
            since += 1
    return np.array(alphas), np.array(crits), np.array(errs), moves


_REF_SETTINGS = {"eps": 0.1, "v": 5, "patience": 6, "max_iter": 25}


def _path_and_reference(codes, values, y, ns, c, step_rule, criterion, tie_order=None):
    """`fsnb_path` and the NumPy Algorithm-1 reference on the same data and `_REF_SETTINGS`."""
    eps, v, patience, max_iter = (_REF_SETTINGS[k] for k in ("eps", "v", "patience", "max_iter"))
    o1, o0 = _omegas(codes, values, y, ns, c)
    path = sw.fsnb_path(
        o1,
        o0,
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.ones(len(y)),
        epsilon=eps,
        patience=patience,
        n_steps=v,
        step_rule=step_rule,
        criterion=criterion,
        max_iter=max_iter,
        k_max=sw.n_units(eps),
        tie_order=tie_order,
    )
    scan = None if tie_order is None else list(np.argsort(tie_order))  # positions -> scan
    ref = _ref_fsnb(codes, values, y, ns, c, eps, v, step_rule, criterion, patience, max_iter, scan)
    return path, ref


# ------------------------------------------------------------------ tests
@pytest.mark.parametrize(
    "seed,criterion,step_rule",
    [
        (0, "error", "t_eps"),
        (1, "error", "eps"),
        (2, "error_probability", "t_eps"),
        (3, "log_loss", "eps"),
    ],
)
def test_path_matches_numpy_reference(seed, criterion, step_rule):
    codes, values, y, ns, c = _data(seed)
    max_iter = _REF_SETTINGS["max_iter"]
    path, (A, C, E, moves) = _path_and_reference(codes, values, y, ns, c, step_rule, criterion)
    n_iter = int(path.n_iter)
    assert n_iter == len(moves)
    np.testing.assert_allclose(np.asarray(path.alpha[: n_iter + 1]), A, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(path.criterion[: n_iter + 1]), C, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(path.error[: n_iter + 1]), E, rtol=0, atol=1e-12)
    assert [
        (int(i), int(t))
        for i, t in zip(path.chosen[1 : n_iter + 1], path.step[1 : n_iter + 1], strict=True)
    ] == moves
    # AIC = Q + 2d/N with Q = 2 * log loss (fsNB §6, Eq. 14)
    d = (A > 0).sum(1)
    ll = [
        _ref_crit(
            _ref_scores(_ref_params(codes, values, y, ns, c), codes, values, a), y, "log_loss"
        )
        for a in A
    ]
    np.testing.assert_allclose(
        np.asarray(path.aic[: n_iter + 1]), 2 * np.array(ll) + 2 * d / len(y), rtol=1e-10
    )
    # rows past n_iter repeat the final model
    np.testing.assert_array_equal(
        np.asarray(path.alpha[n_iter:]), np.broadcast_to(A[-1], (max_iter + 1 - n_iter, A.shape[1]))
    )


def test_tie_order_sets_the_scan_of_tied_moves():
    """Tied moves (the error rate ties often) go to the predictor of the lowest ``tie_order``
    position: the path equals the reference scanning the predictors in that order, and differs
    from the core-order path on these data. `StagewiseNB` passes the user's column order."""
    codes, values, y, ns, c = _data(0)
    tie_order = np.array([4, 2, 0, 3, 1], np.int32)  # a permutation of the 5 predictors
    path, (A, _, _, moves) = _path_and_reference(
        codes, values, y, ns, c, "t_eps", "error", tie_order=jnp.asarray(tie_order)
    )
    n_iter = int(path.n_iter)
    np.testing.assert_allclose(np.asarray(path.alpha[: n_iter + 1]), A, rtol=0, atol=1e-12)
    got = [(int(i), int(t)) for i, t in zip(path.chosen[1:], path.step[1:], strict=False)]
    assert got[:n_iter] == moves
    default, (_, _, _, default_moves) = _path_and_reference(
        codes, values, y, ns, c, "t_eps", "error"
    )
    assert moves != default_moves  # the data have ties, so the scan matters
    # the identity order is the default (the same compiled loop, without the rank array)
    same, _ = _path_and_reference(
        codes, values, y, ns, c, "t_eps", "error", tie_order=jnp.arange(5, dtype=jnp.int32)
    )
    np.testing.assert_array_equal(np.asarray(same.alpha), np.asarray(default.alpha))
    o1, o0 = _omegas(codes, values, y, ns, c)
    args = (o1, o0, jnp.asarray(codes), jnp.asarray(values), jnp.asarray(y))
    kw = dict(max_iter=3, k_max=40)
    with pytest.raises(ValueError, match=r"tie_order must have one entry per predictor \(5,\)"):
        sw.fsnb_path(*args, tie_order=jnp.arange(4), **kw)
    with pytest.raises(ValueError, match="tie_order must be a permutation of 0..4"):
        sw.fsnb_path(*args, tie_order=jnp.array([0, 0, 1, 2, 3]), **kw)


def test_first_minimum_breaks_ties_by_rank():
    v = jnp.array([3.0, 1.0, 2.0, 1.0, 1.0])
    assert int(sw.first_minimum(v, jnp.arange(5))) == 1
    assert int(sw.first_minimum(v, jnp.array([0, 4, 1, 3, 2]))) == 4
    assert int(sw.first_minimum(v.at[2].set(jnp.nan), jnp.array([0, 4, 1, 3, 2]))) == 2


def test_path_matches_numpy_reference_many_states():
    """Predictors with more states than the select chain handles take the gather branch."""
    assert 20 > sw._SELECT_MAX_STATES
    codes, values, y, ns, c = _data(6, n=80, m=20)
    path, (A, C, E, moves) = _path_and_reference(codes, values, y, ns, c, "t_eps", "error")
    n_iter = int(path.n_iter)
    assert n_iter == len(moves)
    np.testing.assert_allclose(np.asarray(path.alpha[: n_iter + 1]), A, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(path.error[: n_iter + 1]), E, rtol=0, atol=1e-12)


@pytest.mark.parametrize("select_max", [16, 0])
def test_level_contributions_equal_per_alpha_contributions(monkeypatch, select_max):
    """Candidate contributions per (predictor, level) equal `_contributions` at that α, with
    missing codes (-1) and values (NaN) contributing 0, on both discrete branches."""
    monkeypatch.setattr(sw, "_SELECT_MAX_STATES", select_max)
    codes, values, y, _, c = _data(12, n=50, q=3, r=2, m=4)
    ns = (4, 5, 4)  # unequal state counts
    codes[5:9, 1] = -1
    values[7:12, 0] = np.nan
    o1, o0 = _omegas(codes, values, y, ns, c)
    g = sw._gather(o1, o0, jnp.asarray(codes), jnp.asarray(values))
    eps, kmax = 0.1, 10
    levels = np.random.default_rng(1).integers(0, kmax + 1, (5, 7))
    got = np.asarray(sw._levels_contributions(g, jnp.asarray(levels), eps, kmax, ns))
    assert got.shape == (5, 7, c, 50)
    for t in range(7):
        a = np.where(levels[:, t] >= kmax, 1.0, levels[:, t] * eps)
        want = np.asarray(sw._contributions(g, jnp.asarray(a)))  # (n, p, c)
        np.testing.assert_allclose(got[:, t], np.transpose(want, (1, 2, 0)), rtol=1e-13, atol=1e-13)
    assert np.all(got[1, :, :, 5:9] == 0.0) and np.all(got[3, :, :, 7:12] == 0.0)


def test_full_path_reaches_one_and_counts_evaluations():
    codes, values, y, ns, c = _data(5)
    eps, v = 0.2, 5
    o1, o0 = _omegas(codes, values, y, ns, c)
    p = 5
    mi = sw.default_max_iter(p, eps)
    assert mi == 25  # same static arguments as the reference test: no new compilation
    path = sw.fsnb_path(
        o1,
        o0,
        jnp.asarray(codes),
        jnp.asarray(values),
        jnp.asarray(y),
        jnp.ones(len(y)),
        epsilon=eps,
        n_steps=v,
        step_rule="eps",
        max_iter=mi,
        k_max=sw.n_units(eps),
    )
    # with unit steps and no early stopping every α reaches 1 after exactly p * ceil(1/ε) moves
    assert int(path.n_iter) == mi and not bool(path.stopped_early)
    np.testing.assert_array_equal(np.asarray(path.alpha[-1]), np.ones(p))
    # evaluations: v per open predictor per iteration
    opened = (np.asarray(path.alpha[:-1]) < 1).sum(1)
    np.testing.assert_array_equal(np.asarray(path.n_evaluations[1:]), np.cumsum(v * opened))
    # the final model is NB: its error equals the MLE model's error
    S = _ref_scores(_ref_params(codes, values, y, ns, c), codes, values, np.ones(p))
    assert float(path.error[-1]) == pytest.approx(_ref_crit(S, y, "error"), abs=1e-12)


def test_vmap_over_datasets_equals_loop():
    datasets = [_data(s) for s in range(3)]
    eps, v, mi = 0.1, 5, 25
    kw = dict(epsilon=eps, patience=5, n_steps=v, max_iter=mi, k_max=sw.n_units(eps))
    stack = lambda k: jnp.asarray(np.stack([d[k] for d in datasets]))
    ns, c = datasets[0][3], datasets[0][4]
    batched = jax.vmap(lambda cd, vl, yy: sw.fit_fsnb(cd, vl, yy, n_states=ns, n_classes=c, **kw))
    _, _, bp = batched(stack(0), stack(1), stack(2))
    for s, (cd, vl, yy, _, _) in enumerate(datasets):
        o1, o0 = _omegas(cd, vl, yy, ns, c)
        one = sw.fsnb_path(
            o1, o0, jnp.asarray(cd), jnp.asarray(vl), jnp.asarray(yy), jnp.ones(len(yy)), **kw
        )
        np.testing.assert_allclose(np.asarray(bp.alpha[s]), np.asarray(one.alpha), atol=1e-12)
        assert int(bp.n_iter[s]) == int(one.n_iter)


def test_no_recompilation_for_same_shapes():
    """New data, ε and patience of the same shapes reuse the compiled search.

    k_max = ⌈1/ε⌉ is static (the ε-unit cap of the integer levels); ε values sharing it
    (0.25, 0.26, 0.3 all give k_max = 4) share one compilation.
    """
    runs = []
    for s in range(3):
        cd, vl, yy, ns, c = _data(10 + s)
        o1, o0 = _omegas(cd, vl, yy, ns, c)
        eps = (0.25, 0.26, 0.3)[s]
        assert sw.n_units(eps) == 4
        before = sw.fsnb_path._cache_size()
        sw.fsnb_path(
            o1,
            o0,
            jnp.asarray(cd),
            jnp.asarray(vl),
            jnp.asarray(yy),
            jnp.ones(len(yy)),
            epsilon=eps,
            patience=3 + s,
            n_steps=5,
            max_iter=25,
            k_max=sw.n_units(eps),
        ).n_iter.block_until_ready()
        runs.append(sw.fsnb_path._cache_size() - before)
    assert runs[1:] == [0, 0]


def test_candidate_criterion_matches_argmax_with_ties():
    """The argmax-free error (ties to the lowest class) equals argmax-based error, ties included."""
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 3, size=(4, 5, 3, 40)).astype(float)  # many exact ties
    y = rng.integers(0, 3, 40)
    w = rng.uniform(0.5, 2.0, 40)
    onehot = jax.nn.one_hot(jnp.asarray(y), 3, dtype=bool).T
    got = sw._candidate_criterion(
        jnp.asarray(scores), jnp.asarray(y), onehot, jnp.asarray(w), w.sum(), "error"
    )
    ref = ((np.argmax(scores, axis=-2) != y) * w).sum(-1) / w.sum()
    np.testing.assert_allclose(np.asarray(got), ref, rtol=0, atol=1e-12)
    for crit in ("error_probability", "log_loss"):
        got = sw._candidate_criterion(
            jnp.asarray(scores), jnp.asarray(y), onehot, jnp.asarray(w), w.sum(), crit
        )
        ref = sw.criterion_from_scores(
            jnp.asarray(np.swapaxes(scores, -1, -2)), jnp.asarray(y), jnp.asarray(w), crit
        )
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-12)


def test_weights_select_rows():
    codes, values, y, ns, c = _data(8, n=120)
    w = np.zeros(120)
    w[:60] = 1.0
    o1, o0 = _omegas(codes[:60], values[:60], y[:60], ns, c)
    kw = dict(epsilon=0.1, n_steps=5, max_iter=25, k_max=10, patience=4)
    a = sw.fsnb_path(
        o1, o0, jnp.asarray(codes), jnp.asarray(values), jnp.asarray(y), jnp.asarray(w), **kw
    )
    b = sw.fsnb_path(
        o1,
        o0,
        jnp.asarray(codes[:60]),
        jnp.asarray(values[:60]),
        jnp.asarray(y[:60]),
        jnp.ones(60),
        **kw,
    )
    np.testing.assert_allclose(np.asarray(a.alpha), np.asarray(b.alpha), atol=1e-12)
    np.testing.assert_allclose(np.asarray(a.aic), np.asarray(b.aic), rtol=1e-10)


def test_evaluate_path_matches_reference():
    codes, values, y, ns, c = _data(9)
    o1, o0 = _omegas(codes, values, y, ns, c)
    A = jnp.asarray(np.random.default_rng(0).uniform(0, 1, (4, 5)))
    err = sw.evaluate_path(o1, o0, A, jnp.asarray(codes), jnp.asarray(values), jnp.asarray(y))
    P = _ref_params(codes, values, y, ns, c)
    ref = [_ref_crit(_ref_scores(P, codes, values, np.asarray(a)), y, "error") for a in A]
    np.testing.assert_allclose(np.asarray(err), ref, atol=1e-12)


def test_float32_runs_and_keeps_dtype():
    codes, values, y, ns, c = _data(11)
    with jax.enable_x64(False):
        o1, o0 = _omegas(codes, values.astype(np.float32), y, ns, c)
        path = sw.fsnb_path(
            o1,
            o0,
            jnp.asarray(codes),
            jnp.asarray(values, jnp.float32),
            jnp.asarray(y),
            epsilon=0.1,
            n_steps=5,
            max_iter=25,
            k_max=10,
        )
        assert path.alpha.dtype == jnp.float32 and path.aic.dtype == jnp.float32
        n_iter = int(path.n_iter)
        alpha, err = np.asarray(path.alpha), np.asarray(path.error)
        aic = np.asarray(path.aic)
        chosen, step = np.asarray(path.chosen), np.asarray(path.step)
    # the float32 search takes the same moves as the float64 NumPy reference (patience=None runs
    # the whole 25-iteration budget); values agree to float32 round-off
    A, _, E, moves = _ref_fsnb(codes, values, y, ns, c, 0.1, 5, "t_eps", "error", np.inf, 25)
    assert n_iter == len(moves) == 25
    assert [(int(i), int(t)) for i, t in zip(chosen[1:], step[1:], strict=True)] == moves
    np.testing.assert_allclose(alpha, A, rtol=0, atol=1e-6)
    np.testing.assert_allclose(err, E, rtol=0, atol=1e-6)
    P = _ref_params(codes, values, y, ns, c)
    ll = np.array([_ref_crit(_ref_scores(P, codes, values, a), y, "log_loss") for a in A])
    np.testing.assert_allclose(aic, 2 * ll + 2 * (A > 0).sum(1) / len(y), rtol=1e-5)


def test_static_argument_errors():
    codes, values, y, ns, c = _data(12)
    o1, o0 = _omegas(codes, values, y, ns, c)
    args = (o1, o0, jnp.asarray(codes), jnp.asarray(values), jnp.asarray(y))
    with pytest.raises(ValueError, match="criterion"):
        sw.fsnb_path(*args, criterion="accuracy", max_iter=3, k_max=40)
    with pytest.raises(ValueError, match="step_rule"):
        sw.fsnb_path(*args, step_rule="half", max_iter=3, k_max=40)


def test_verbose_prints_one_line_per_iteration_and_changes_nothing(capfd):
    from jaxnb import StagewiseNB
    from jaxnb.datasets import load_diabetes

    X, y = load_diabetes(2)
    quiet = StagewiseNB().fit(X, y)
    capfd.readouterr()
    loud = StagewiseNB(verbose=True).fit(X, y)
    jax.effects_barrier()
    lines = [ln for ln in capfd.readouterr().err.splitlines() if ln.startswith("fsNB iteration")]
    assert len(lines) == loud.n_iter_ == quiet.n_iter_
    assert lines[-1].startswith(f"fsNB iteration {loud.n_iter_}: training error ")
    np.testing.assert_array_equal(loud.alpha_, quiet.alpha_)
    np.testing.assert_array_equal(loud.path_["error"], quiet.path_["error"])


def test_class_independent_predictors_are_not_candidates():
    """A discrete predictor with a single state scores every class alike at every α, yet with
    the "error" criterion its moves tie with the best one and, scanned first, won: a wasted
    iteration, d + 1 in the AIC, patience used up. It is now left out of the moves (the
    reference skips it too), and the path equals the path without it."""
    codes, values, y, ns, c = _data(0)
    one = np.c_[np.zeros((len(y), 1), np.int32), codes]  # first in the scan
    o1, _ = _omegas(one, values, y, (1,) + tuple(ns), c)
    np.testing.assert_array_equal(
        np.asarray(sw.class_independent(o1)), [True] + [False] * (len(ns) + values.shape[1])
    )
    path, (A, C, _, moves) = _path_and_reference(
        one, values, y, (1,) + tuple(ns), c, "t_eps", "error"
    )
    base, _ = _path_and_reference(codes, values, y, ns, c, "t_eps", "error")
    n_iter = int(path.n_iter)
    assert n_iter == len(moves) == int(base.n_iter) > 3
    assert all(i != 0 for i, _ in moves)
    np.testing.assert_allclose(np.asarray(path.alpha[: n_iter + 1]), A, atol=1e-12)
    np.testing.assert_array_equal(np.asarray(path.alpha)[:, 0], 0.0)
    np.testing.assert_allclose(np.asarray(path.alpha)[:, 1:], np.asarray(base.alpha), atol=1e-12)
    np.testing.assert_allclose(np.asarray(path.aic), np.asarray(base.aic), rtol=1e-12)


def test_stagewise_nb_ignores_a_constant_column():
    """Diabetes with a constant column inserted third: the constant's no-op moves won the error
    criterion's ties, AIC then selected iteration 5 instead of 8 (posteriors 0.033 apart)."""
    from jaxnb.datasets import load_diabetes
    from jaxnb.estimators_search import StagewiseNB

    X, y = load_diabetes()[:2]
    Xc = np.c_[X[:, :2], np.full(len(y), 3.25), X[:, 2:]]
    a, b = StagewiseNB().fit(X, y), StagewiseNB().fit(Xc, y)
    assert b.alpha_[2] == 0.0 and a.selected_iter_ == b.selected_iter_
    np.testing.assert_allclose(np.delete(b.alpha_, 2), a.alpha_, atol=1e-12)
    np.testing.assert_allclose(b.predict_proba(Xc), a.predict_proba(X), atol=1e-6)


def test_all_predictors_class_independent_gives_an_empty_path():
    rng = np.random.default_rng(0)
    n, c = 40, 2
    y = rng.integers(0, c, n)
    codes = np.zeros((n, 2), np.int32)
    values = np.full((n, 1), 2.0)
    o1, o0 = _omegas(codes, values, y, (1, 1), c)
    assert bool(np.asarray(sw.class_independent(o1)).all())
    path = sw.fsnb_path(
        o1, o0, jnp.asarray(codes), jnp.asarray(values), jnp.asarray(y), max_iter=10, k_max=40
    )
    assert int(path.n_iter) == 0 and int(path.n_evaluations[-1]) == 0
    np.testing.assert_array_equal(np.asarray(path.alpha), 0.0)
