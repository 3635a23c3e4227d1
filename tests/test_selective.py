"""Tests for jaxnb.methods.selective and the SelectiveNB / StagewiseNB estimators.

Reference: loop-based float64 NumPy greedy searches (Langley & Sage forward/backward, ESANN
floating) that rebuild each candidate subset's score from scratch.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.estimators_search import SelectiveNB, StagewiseNB
from jaxnb.methods import selective as sel


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


def test_selective_estimator_forward_and_validation():
    X, y = _table(0)
    m = SelectiveNB(criterion="error_probability").fit(X, y)
    assert m.support_[0] and m.support_[2]
    assert m.path_["mask"].shape == (m.n_steps_ + 1, 4)
    proba = m.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-12)
    mv = SelectiveNB(validation_fraction=0.5, stopping="full").fit(X, y)
    i = mv.selected_step_
    err = mv.path_["error"]
    sizes = mv.path_["size"]
    assert err[i] == err.min() and sizes[i] == sizes[err == err.min()].min()


def test_stagewise_estimator_selection_and_attributes():
    X, y = _table(1)
    m = StagewiseNB(epsilon=0.1, n_steps=5, patience=5).fit(X, y)
    assert m.selected_iter_ == int(np.argmin(m.path_["aic"]))
    np.testing.assert_array_equal(m.alpha_, m.path_["alpha"][m.selected_iter_])
    assert m.n_evaluations_ == m.path_["n_evaluations"][-1] > 0
    assert m.alpha_[0] > 0 and m.alpha_[2] > 0
    assert 1 - m.score(X, y) <= m.path_["error"][0]


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
