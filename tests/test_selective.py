"""Tests for jaxnb.methods.selective and the SelectiveNB / StagewiseNB estimators.

Reference: loop-based float64 NumPy greedy searches (Langley & Sage forward/backward, ESANN
floating) that rebuild each candidate subset's score from scratch.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxprs import loop_primitives
from test_stagewise import _ref_crit, _ref_fsnb, _ref_params, _ref_scores

from jaxnb import NaiveBayes
from jaxnb.estimators_search import SelectiveNB, StagewiseNB
from jaxnb.methods import selective as sel
from jaxnb.model_selection import stratified_folds, validation_split


def _problem(seed, n=80, p=7, c=3):
    """Random log-contributions L (n, p, c) with some informative and some redundant predictors."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    signal = np.eye(c)[y]
    L = rng.normal(0, 1.0, (n, p, c)) + rng.uniform(0, 1.5, (1, p, 1)) * signal[:, None, :]
    L[:, p - 1] = L[:, 0] + 0.1 * rng.normal(size=(n, c))  # redundant copy of predictor 0
    bias = np.log(np.bincount(y, minlength=c) / n)
    return L, bias, y.astype(np.int32)


def _crit(S, y, criterion, w):
    if criterion == "error":
        v = (np.argmax(S, 1) != y).astype(float)
    else:
        lp = S - S.max(1, keepdims=True)
        lp = lp - np.log(np.exp(lp).sum(1, keepdims=True))
        t = lp[np.arange(len(y)), y]
        v = 1 - np.exp(t) if criterion == "error_probability" else -t
    return (v * w).sum() / w.sum()


def _ref_search(L, bias, y, w, direction, criterion):
    p = L.shape[1]
    mask = np.zeros(p, bool) if direction.startswith("forward") else np.ones(p, bool)
    score = lambda m: _crit(bias + (L * m[None, :, None]).sum(1), y, criterion, w)
    cur = score(mask)
    masks, fwd = [mask.copy()], direction.startswith("forward")
    floating = "_" in direction
    while True:
        moved = 0
        while True:
            cands = [i for i in range(p) if (not mask[i]) == fwd]
            if not cands:
                break
            vals = []
            for i in cands:
                m = mask.copy()
                m[i] = not m[i]
                vals.append(score(m))
            k = int(np.argmin(vals))  # first index with the lowest value
            if not vals[k] < cur:
                break
            mask[cands[k]] = not mask[cands[k]]
            cur = vals[k]
            masks.append(mask.copy())
            moved += 1
        if not floating or moved == 0:
            break
        fwd = not fwd
    return np.array(masks), cur


@pytest.mark.parametrize(
    "direction,criterion,seed",
    [
        ("forward", "error", 0),
        ("backward", "error_probability", 1),
        ("forward_backward", "error_probability", 2),
        ("backward_forward", "log_loss", 3),
        ("forward", "log_loss", 4),
    ],
)
def test_search_matches_numpy_reference(direction, criterion, seed):
    L, bias, y = _problem(seed)
    w = np.ones(len(y))
    path = sel.selective_path(
        jnp.asarray(L), jnp.asarray(bias), jnp.asarray(y), direction=direction, criterion=criterion
    )
    masks, final = _ref_search(L, bias, y, w, direction, criterion)
    k = int(path.n_steps)
    np.testing.assert_array_equal(np.asarray(path.mask[: k + 1]), masks)
    assert float(path.criterion[k]) == pytest.approx(final, rel=1e-10)
    assert bool(path.converged)
    # strict improvement along the path
    assert np.all(np.diff(np.asarray(path.criterion[: k + 1])) < 0)


def test_full_forward_with_cv_folds_and_max_features():
    """Fold axis: criterion = mean over folds; stopping='full' with max_features."""
    L, bias, y = _problem(5, n=90)
    K = 3
    folds = np.arange(90) % K
    Lk = np.stack([L + 0.05 * k for k in range(K)])
    W = (folds[None] == np.arange(K)[:, None]).astype(float)
    path = sel.selective_path(
        jnp.asarray(Lk),
        jnp.asarray(np.stack([bias] * K)),
        jnp.asarray(y),
        jnp.asarray(W),
        direction="forward",
        criterion="error",
        stopping="full",
        max_features=4,
    )
    assert int(path.n_steps) == 4 and bool(path.converged)
    mask = np.zeros(L.shape[1], bool)
    for step in range(1, 5):
        vals = []
        for i in range(L.shape[1]):
            if mask[i]:
                vals.append(np.inf)
                continue
            m = mask.copy()
            m[i] = True
            vals.append(
                np.mean(
                    [
                        _crit(bias + (Lk[k] * m[None, :, None]).sum(1), y, "error", W[k])
                        for k in range(K)
                    ]
                )
            )
        mask[int(np.argmin(vals))] = True
        np.testing.assert_array_equal(np.asarray(path.mask[step]), mask)
        assert float(path.criterion[step]) == pytest.approx(min(vals), abs=1e-12)
    # evaluations: 7 + 6 + 5 + 4 candidates, then the cap stops the search
    assert int(path.n_evaluations[4]) == 22


def test_vmap_over_problems():
    probs = [_problem(s) for s in range(3)]
    Ls = jnp.asarray(np.stack([p[0] for p in probs]))
    bs = jnp.asarray(np.stack([p[1] for p in probs]))
    ys = jnp.asarray(np.stack([p[2] for p in probs]))
    f = lambda L, b, y: sel.selective_path(L, b, y, direction="forward", criterion="error")
    batched = jax.vmap(f)(Ls, bs, ys)
    for s in range(3):
        one = f(Ls[s], bs[s], ys[s])
        np.testing.assert_array_equal(np.asarray(batched.mask[s]), np.asarray(one.mask))
        np.testing.assert_array_equal(np.asarray(batched.criterion[s]), np.asarray(one.criterion))
    # a forward search only adds: under vmap the removal's recomputation stays behind a cond
    # (a batched predicate made it a select that recomputed the scores at every step)
    assert "cond" in loop_primitives(jax.make_jaxpr(jax.vmap(f))(Ls, bs, ys).jaxpr)


def _table(seed, n=150):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.column_stack(
        [
            y + rng.normal(0, 1, n),
            rng.normal(0, 1, n),
            -y + rng.normal(0, 1, n),
            rng.normal(0, 1, n),
        ]
    )
    return X, y


def _ref_gaussian_contributions(X, y, fit_rows, c=2, vs=1e-9):
    """NumPy Gaussian NB fitted on the rows `fit_rows` of (X, y): log-contributions L (n, p, c)
    of every row of X, and the log prior (c,)."""
    Xf, yf = X[fit_rows], y[fit_rows]
    mu = np.array([Xf[yf == j].mean(0) for j in range(c)])
    sd = np.sqrt(np.array([Xf[yf == j].var(0) for j in range(c)]) + vs * Xf.var(0))
    L = -0.5 * ((X[:, :, None] - mu.T) / sd.T) ** 2 - np.log(sd.T) - 0.5 * np.log(2 * np.pi)
    return L, np.log(np.bincount(yf, minlength=c) / len(yf))


def _ref_full_forward(L, bias, y, w, criterion):
    """Forward search to the full set (stopping="full"): masks and criterion values."""
    p = L.shape[1]
    score = lambda m: _crit(bias + (L * m[None, :, None]).sum(1), y, criterion, w)
    mask = np.zeros(p, bool)
    masks, values = [mask.copy()], [score(mask)]
    for _ in range(p):
        cands = np.flatnonzero(~mask)
        vals = [score(mask | (np.arange(p) == i)) for i in cands]
        mask[cands[int(np.argmin(vals))]] = True  # first index with the lowest value
        masks.append(mask.copy())
        values.append(min(vals))
    return np.array(masks), np.array(values)


def test_selective_estimator_forward_and_validation():
    X, y = _table(0)
    m = SelectiveNB(criterion="error_probability").fit(X, y)
    L, bias = _ref_gaussian_contributions(X, y, np.ones(len(y), bool))
    masks, final = _ref_search(L, bias, y, np.ones(len(y)), "forward", "error_probability")
    np.testing.assert_array_equal(m.path_["mask"], masks)
    assert m.n_steps_ == len(masks) - 1 and m.selected_step_ == m.n_steps_
    assert m.path_["criterion"][-1] == pytest.approx(final, rel=1e-10)
    np.testing.assert_array_equal(m.support_, masks[-1])
    assert m.support_[0] and m.support_[2]
    nb = NaiveBayes().fit(X[:, m.support_], y)
    np.testing.assert_allclose(
        m.predict_log_proba(X), nb.predict_log_proba(X[:, m.support_]), rtol=1e-10, atol=1e-12
    )
    proba = m.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-12)
    # validation split: NB on the other half, the search scored on the validation half, the
    # smallest subset with the lowest validation error, then NB refitted on all rows
    mv = SelectiveNB(validation_fraction=0.5, stopping="full").fit(X, y)
    val = validation_split(y, 0.5, 0)
    L, bias = _ref_gaussian_contributions(X, y, ~val)
    masks, values = _ref_full_forward(L, bias, y, val.astype(float), "error")
    np.testing.assert_array_equal(mv.path_["mask"], masks)
    np.testing.assert_allclose(mv.path_["criterion"], values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mv.path_["error"], values, rtol=0, atol=1e-12)
    i = mv.selected_step_
    assert i == int(np.argmin(values))  # forward sizes grow: the first minimum is the smallest
    np.testing.assert_array_equal(mv.support_, masks[i])
    nb = NaiveBayes().fit(X[:, mv.support_], y)
    np.testing.assert_allclose(
        mv.predict_log_proba(X), nb.predict_log_proba(X[:, mv.support_]), rtol=1e-10, atol=1e-12
    )


_FSNB = dict(epsilon=0.1, n_steps=5, patience=5)  # StagewiseNB settings shared by two tests


def _ref_fsnb_table(X, y, rows=None):
    """`_ref_fsnb` (test_stagewise's NumPy Algorithm 1) with `_FSNB` and StagewiseNB's defaults
    (criterion "error", step_rule "t_eps", max_iter p⌈1/ε⌉) on the continuous table's rows."""
    rows = np.ones(len(y), bool) if rows is None else rows
    X, y = X[rows], y[rows]
    codes = np.zeros((len(y), 0), np.int32)
    e, v, pat = _FSNB["epsilon"], _FSNB["n_steps"], _FSNB["patience"]
    return _ref_fsnb(codes, X, y, (), 2, e, v, "t_eps", "error", pat, X.shape[1] * 10)


def test_stagewise_estimator_selection_and_attributes():
    X, y = _table(1)
    m = StagewiseNB(**_FSNB).fit(X, y)
    A, C, E, moves = _ref_fsnb_table(X, y)
    assert m.n_iter_ == len(moves)
    np.testing.assert_allclose(m.path_["alpha"], A, rtol=0, atol=1e-12)
    np.testing.assert_allclose(m.path_["criterion"], C, rtol=0, atol=1e-12)
    np.testing.assert_allclose(m.path_["error"], E, rtol=0, atol=1e-12)
    chosen, step = m.path_["chosen"][1:], m.path_["step"][1:]
    assert [(int(i), int(t)) for i, t in zip(chosen, step, strict=True)] == moves
    # AIC = 2 * log loss + 2 d / N (fsNB Eq. 14); the first minimum is selected
    zero = np.zeros((len(y), 0), np.int32)  # no discrete predictors
    P = _ref_params(zero, X, y, (), 2)
    ll = np.array([_ref_crit(_ref_scores(P, zero, X, a), y, "log_loss") for a in A])
    aic = 2 * ll + 2 * (A > 0).sum(1) / len(y)
    np.testing.assert_allclose(m.path_["aic"], aic, rtol=1e-10)
    assert m.selected_iter_ == int(np.argmin(aic))
    np.testing.assert_array_equal(m.alpha_, A[m.selected_iter_])
    assert m.n_evaluations_ == m.path_["n_evaluations"][-1] > 0
    assert m.alpha_[0] > 0 and m.alpha_[2] > 0
    S = _ref_scores(P, zero, X, m.alpha_)
    lp = S - np.log(np.exp(S).sum(1, keepdims=True))
    np.testing.assert_allclose(m.predict_log_proba(X), lp, rtol=1e-10, atol=1e-12)


def test_stagewise_cv_selection_equals_looped_fold_paths():
    """selection="cv": the fold-k path is Algorithm 1 on the rows outside stratified fold k (its
    rows past its own n_iter repeat its last model); cv_error_[t] is the mean over folds of the
    validation error of row t; the first minimum is selected."""
    X, y = _table(1)
    K = 3
    m = StagewiseNB(selection="cv", n_folds=K, random_state=4, **_FSNB).fit(X, y)
    A, _, _, moves = _ref_fsnb_table(X, y)
    np.testing.assert_allclose(m.path_["alpha"], A, rtol=0, atol=1e-12)
    folds = stratified_folds(y, K, 4)
    max_iter = X.shape[1] * 10
    cv = np.zeros(max_iter + 1)
    zero = np.zeros((len(y), 0), np.int32)
    for k in range(K):
        tr = folds != k
        Ak = _ref_fsnb_table(X, y, tr)[0]
        Ak = np.vstack([Ak, np.repeat(Ak[-1:], max_iter + 1 - len(Ak), 0)])
        P = _ref_params(zero[tr], X[tr], y[tr], (), 2)
        va = ~tr
        cv += [_ref_crit(_ref_scores(P, zero[va], X[va], a), y[va], "error") for a in Ak]
    cv = cv[: len(moves) + 1] / K
    np.testing.assert_allclose(m.cv_error_, cv, rtol=0, atol=1e-10)
    assert m.selected_iter_ == int(np.argmin(cv))  # the first minimum
    np.testing.assert_array_equal(m.alpha_, A[m.selected_iter_])


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(n_steps=0), "n_steps"),
        (dict(step_rule="x"), "step_rule"),
        (dict(criterion="auc"), "criterion"),
        (dict(selection="bic"), "selection"),
        (dict(patience=0), "patience"),
    ],
)
def test_stagewise_hyperparameter_errors(kwargs, name):
    X, y = _table(2, n=20)
    with pytest.raises(ValueError, match=name):
        StagewiseNB(**kwargs).fit(X, y)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(direction="sideways"), "direction"),
        (dict(criterion="auc"), "criterion"),
        (dict(validation_fraction=1.5), "validation_fraction"),
        (dict(stopping="never"), "stopping"),
    ],
)
def test_selective_hyperparameter_errors(kwargs, name):
    X, y = _table(2, n=20)
    with pytest.raises(ValueError, match=name):
        SelectiveNB(**kwargs).fit(X, y)


def test_search_scores_keep_exact_class_ties():
    # the running S ± L_j kept rounding residue: at the empty subset with equal priors every row
    # is an exact tie (lowest class wins, error 0.5), but the path recorded 0.4
    rng = np.random.default_rng(0)
    n, p = 40, 4
    y = np.repeat([0, 1], 20).astype(np.int32)
    L = rng.normal(size=(n, p, 2))
    prior = jnp.log(jnp.array([0.5, 0.5]))
    path = sel.selective_path(
        jnp.asarray(L),
        prior,
        jnp.asarray(y),
        direction="backward",
        criterion="error",
        stopping="full",
    )
    k = int(path.n_steps)
    assert int(path.size[k]) == 0 and float(path.error[k]) == 0.5
    for row in range(k + 1):  # every recorded error is the from-scratch error of its subset
        mask = np.asarray(path.mask[row])
        scores = np.asarray(prior)[None, :] + (L * mask[None, :, None]).sum(1)
        np.testing.assert_allclose(path.error[row], np.mean(scores.argmax(1) != y), atol=1e-12)


def test_fsnb_eps_rule_early_stopping_follows_the_models_moved_to():
    rng = np.random.default_rng(8)
    n = 60
    y = rng.integers(0, 2, n)
    X = np.stack(
        [y * 0.8 + rng.normal(size=n), y * 0.5 + rng.normal(size=n), rng.normal(size=n)], 1
    )
    m = StagewiseNB(step_rule="eps", patience=3, criterion="log_loss", epsilon=0.1, n_steps=5).fit(
        X, y
    )
    crit = np.asarray(m.path_["criterion"])[: m.n_iter_ + 1]
    best, since, stop = crit[0], 0, None  # the rule on the criterion of the models moved to
    for it in range(1, crit.size):
        best, since = (crit[it], 0) if crit[it] < best else (best, since + 1)
        if since == 3:
            stop = it
            break
    assert stop == m.n_iter_ and m.stopped_early_
    assert m.n_iter_ > 24  # the winner's α + tε value stopped it at 24, still improving


def test_zero_weight_rows_with_minus_inf_scores_stay_out_of_the_criteria():
    rng = np.random.default_rng(1)
    n = 60
    y = rng.integers(0, 2, n)
    X = np.c_[rng.integers(0, 2, n), y + rng.normal(size=n)].astype(float)
    X[0, 0] = 2.0  # a state only this row has; with alpha = 0 its log-probability is -inf
    w = np.ones(n)
    w[0] = 0.0
    kw = dict(discrete=[True, False], alpha=0.0, criterion="log_loss")
    a = StagewiseNB(**kw).fit(X, y, sample_weight=w)  # "path_scores are all NaN" before
    b = StagewiseNB(**kw).fit(X[1:], y[1:])
    np.testing.assert_allclose(a.path_["criterion"], b.path_["criterion"], rtol=1e-6)
    np.testing.assert_allclose(a.path_["aic"], b.path_["aic"], rtol=1e-6)
    # a singleton class keeps its training row when the validation share rounds up to it
    ys = np.r_[np.zeros(15), np.ones(15), [2]]
    mask = validation_split(ys, 0.7, seed=0)
    assert not mask[-1] and mask[:15].sum() == 10 and mask[15:30].sum() == 10


def test_forward_search_accepts_only_recorded_improvements_on_flags():
    """A move was accepted on its candidate score, while the path records the criterion of the
    updated sums; with Flags' near-zero variances (var_smoothing 1e-9) the two differ in float32
    rounding, and a forward search on the training error took a move whose recorded error did not
    fall (l1nb_flags, fold 6: 7 predictors where the strict-improvement rule stops at 5). Moves
    are now accepted on the recorded value, so every addition strictly lowers it."""
    from jaxnb.data import FeatureEncoder
    from jaxnb.datasets import load_flags
    from jaxnb.likelihood import log_contributions
    from jaxnb.methods.nb import fit_stats
    from jaxnb.model_selection import stratified_folds
    from jaxnb.params import fit_mle

    X, y_raw, _, _ = load_flags()
    y = np.array(
        [{0: 0, 1: 1, 2: 2, 3: 3, 4: 3, 5: 4, 6: 5, 7: 3}[int(v)] for v in y_raw], np.int32
    )
    enc = FeatureEncoder(discrete="auto").fit(X)
    with jax.enable_x64(False):
        codes, values = enc.transform(X, dtype=np.float32, fit=True)
        n_states = tuple(int(m) for m in enc.n_states_)
        folds = stratified_folds(y, 10, 2013)
        for k in range(10):
            w = (folds != k).astype(np.float32)
            stats = fit_stats(codes, values, y, w, n_states=n_states, n_classes=6)
            omega = fit_mle(stats, 1.0, 1e-9)
            L = log_contributions(omega, codes, values)
            path = sel.selective_path(
                L, omega.log_prior, y, w, direction="forward", criterion="error"
            )
            n = int(path.n_steps)
            crit = np.asarray(path.criterion)[: n + 1]
            assert (np.diff(crit) < 0).all(), (k, crit)
