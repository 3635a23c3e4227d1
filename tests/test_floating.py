"""SFFS / SBFS (Pudil et al. 1994): `selective_path(direction="forward_backward" |
"backward_forward", stopping="full")` against a loop-based float64 NumPy reference that rebuilds
every candidate subset's score from scratch."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_selective import _crit, _ref_search  # the shared NumPy references

from jaxnb.estimators_search import SelectiveNB
from jaxnb.methods import selective as sel

CRITERIA = ("error", "error_probability", "log_loss")


def _problem(seed, n=60, p=10, c=2):
    """Random L (n, p, c): informative predictors, near-copies (redundancy) and noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    signal = np.eye(c)[y]
    L = rng.normal(0, 1.0, (n, p, c)) + rng.uniform(0, 1.5, (1, p, 1)) * signal[:, None, :]
    for k in range(p // 3):  # redundant copies make exclusions worthwhile
        L[:, p - 1 - k] = L[:, k] + 0.3 * rng.normal(size=(n, c))
    bias = np.log(np.bincount(y, minlength=c) / n)
    return L, bias, y.astype(np.int32)


def ref_floating(L, bias, y, w, direction, criterion, max_features=None, initial_mask=None):
    """Pudil's SFFS ("forward_backward") / SBFS ("backward_forward"); returns (masks, values).

    L: (K, n, p, c) with per-fold weights w (K, n) — the criterion is the mean over folds."""
    K, n, p, c = L.shape
    main_fwd = direction == "forward_backward"
    cap = p if max_features is None else max_features
    tol = 0.0 if criterion == "error" else np.finfo(np.float64).eps ** 0.75

    def score(m):
        return np.mean(
            [
                _crit(bias[k] + (L[k] * m[None, :, None]).sum(1), y, criterion, w[k])
                for k in range(K)
            ]
        )

    def toggled(m, i):
        m = m.copy()
        m[i] = not m[i]
        return m

    def step(mask, fwd, shield):
        cands = [
            i
            for i in range(p)
            if (not mask[i]) == fwd and i != shield and (not fwd or mask.sum() < cap)
        ]
        if not cands:
            return None, None
        vals = [score(toggled(mask, i)) for i in cands]
        k = int(np.argmin(vals))  # first index with the lowest value
        return cands[k], vals[k]

    if initial_mask is None:
        mask = np.full(p, not main_fwd)
    else:
        mask = np.asarray(initial_mask, bool).copy()
    best = {int(mask.sum()): score(mask)}
    masks, values = [mask.copy()], [best[int(mask.sum())]]

    def record(m, v):
        s = int(m.sum())
        best[s] = min(best.get(s, np.inf), v)
        masks.append(m.copy())
        values.append(v)

    while True:
        i, v = step(mask, main_fwd, -1)  # inclusion (SFFS) / exclusion (SBFS): always taken
        if i is None:
            break
        mask = toggled(mask, i)
        record(mask, v)
        shield = i
        while True:  # conditional moves while they beat the best subset of that size
            i, v = step(mask, not main_fwd, shield)
            if i is None:
                break
            ref = best.get(int(mask.sum()) + (-1 if main_fwd else 1), np.inf)
            if not (np.isfinite(ref) and v < ref - tol * max(1.0, abs(ref))):
                break
            mask = toggled(mask, i)
            record(mask, v)
            shield = -1
    return np.array(masks), np.array(values)


def _run(L, bias, y, direction, criterion, **kw):
    return sel.selective_path(
        jnp.asarray(L),
        jnp.asarray(bias),
        jnp.asarray(y),
        direction=direction,
        criterion=criterion,
        stopping="full",
        **kw,
    )


def _n_conditional(masks, main_fwd):
    sizes = masks.sum(1)
    return int(np.sum(np.diff(sizes) == (-1 if main_fwd else 1)))


CASES = [
    (d, crit, seed, c, p)
    for d in ("forward_backward", "backward_forward")
    for crit in CRITERIA
    for (seed, c, p) in ((0, 2, 8), (1, 3, 10), (2, 2, 12))
]


@pytest.mark.parametrize("direction,criterion,seed,c,p", CASES)
def test_floating_matches_numpy_reference(direction, criterion, seed, c, p):
    L, bias, y = _problem(seed, p=p, c=c)
    path = _run(L, bias, y, direction, criterion)
    masks, values = ref_floating(L[None], bias[None], y, np.ones((1, len(y))), direction, criterion)
    k = int(path.n_steps)
    np.testing.assert_array_equal(np.asarray(path.mask[: k + 1]), masks)
    np.testing.assert_allclose(np.asarray(path.criterion[: k + 1]), values, rtol=1e-10, atol=1e-12)
    assert bool(path.converged)
    # ends at the full (SFFS) / empty (SBFS) set; sizes move by one
    assert masks[-1].all() if direction == "forward_backward" else not masks[-1].any()
    np.testing.assert_array_equal(np.asarray(path.size[: k + 1]), masks.sum(1))
    np.testing.assert_array_equal(np.abs(np.diff(masks.sum(1))), 1)
    # the error column is the error of each recorded subset
    err = [_crit(bias + (L * m[None, :, None]).sum(1), y, "error", np.ones(len(y))) for m in masks]
    np.testing.assert_allclose(np.asarray(path.error[: k + 1]), err, atol=1e-12)
    main_fwd = direction == "forward_backward"
    toggled, added = np.asarray(path.toggled[1 : k + 1]), np.asarray(path.added[1 : k + 1])
    np.testing.assert_array_equal(added, np.diff(masks.sum(1)) > 0)
    np.testing.assert_array_equal(
        toggled, np.flatnonzero(np.diff(masks.astype(int), axis=0)) % L.shape[1]
    )
    assert k == L.shape[1] + 2 * _n_conditional(masks, main_fwd)


def test_floating_makes_conditional_moves():
    """The reference problems exercise conditional moves (otherwise SFFS = full forward)."""
    n_cond = 0
    for d, crit, seed, c, p in CASES:
        L, bias, y = _problem(seed, p=p, c=c)
        path = _run(L, bias, y, d, crit)
        k = int(path.n_steps)
        n_cond += _n_conditional(np.asarray(path.mask[: k + 1]), d == "forward_backward")
        if _n_conditional(np.asarray(path.mask[: k + 1]), d == "forward_backward"):
            assert int(path.n_phases) > 1
    assert n_cond >= 5


def test_conditional_moves_beat_the_size_record():
    """Every conditional move strictly beats every earlier subset of its size (no cycling)."""
    L, bias, y = _problem(3, p=12)
    for d in ("forward_backward", "backward_forward"):
        for crit in CRITERIA:
            path = _run(L, bias, y, d, crit)
            k = int(path.n_steps)
            sz, cr = np.asarray(path.size[: k + 1]), np.asarray(path.criterion[: k + 1])
            masks = np.asarray(path.mask[: k + 1])
            main_step = 1 if d == "forward_backward" else -1
            for t in range(1, k + 1):
                if sz[t] - sz[t - 1] != main_step:  # conditional move: to a new, better subset
                    assert cr[t] < cr[:t][sz[:t] == sz[t]].min()
                    assert not (masks[:t] == masks[t]).all(1).any()


def _fold_case():
    """A 3-fold problem (per-fold contributions and 0/1 fold weights) and the keyword sets
    (max_features, initial_mask, both) that the floating-search fold tests run through."""
    L, bias, y = _problem(4, n=90, p=9, c=3)
    K = 3
    folds = np.arange(90) % K
    Lk = np.stack([L + 0.05 * k for k in range(K)])
    W = (folds[None] == np.arange(K)[:, None]).astype(float)
    bk = np.stack([bias] * K)
    init = np.zeros(9, bool)
    init[[1, 4, 6]] = True
    kwargs = (
        dict(max_features=5),
        dict(initial_mask=init),
        dict(initial_mask=init, max_features=6),
    )
    return Lk, bk, y, W, kwargs


@pytest.mark.parametrize("direction", ["forward_backward", "backward_forward"])
def test_floating_folds_max_features_initial_mask(direction):
    Lk, bk, y, W, kwargs = _fold_case()
    for kw in kwargs:
        path = sel.selective_path(
            jnp.asarray(Lk),
            jnp.asarray(bk),
            jnp.asarray(y),
            jnp.asarray(W),
            direction=direction,
            criterion="log_loss",
            stopping="full",
            **{k: (jnp.asarray(v) if k == "initial_mask" else v) for k, v in kw.items()},
        )
        masks, values = ref_floating(Lk, bk, y, W, direction, "log_loss", **kw)
        k = int(path.n_steps)
        np.testing.assert_array_equal(np.asarray(path.mask[: k + 1]), masks)
        np.testing.assert_allclose(np.asarray(path.criterion[: k + 1]), values, rtol=1e-10)
        added = np.asarray(path.added[1 : k + 1])
        assert np.all(np.asarray(path.size[1 : k + 1])[added] <= kw.get("max_features", 9))
        assert bool(path.converged)


def test_initial_mask_one_way_and_default():
    L, bias, y = _problem(5, p=8)
    init = np.zeros(8, bool)
    init[[0, 3]] = True
    a = sel.selective_path(
        jnp.asarray(L),
        jnp.asarray(bias),
        jnp.asarray(y),
        direction="forward",
        criterion="error_probability",
        stopping="full",
        initial_mask=jnp.asarray(init),
    )
    np.testing.assert_array_equal(np.asarray(a.mask[0]), init)
    assert int(a.n_steps) == 6 and np.asarray(a.mask[6]).all()
    # initial_mask=None is the empty set for forward, the full set for backward
    for d, start in (("forward", False), ("backward", True)):
        b = sel.selective_path(jnp.asarray(L), jnp.asarray(bias), jnp.asarray(y), direction=d)
        c = sel.selective_path(
            jnp.asarray(L),
            jnp.asarray(bias),
            jnp.asarray(y),
            direction=d,
            initial_mask=jnp.full(8, start),
        )
        np.testing.assert_array_equal(np.asarray(b.mask), np.asarray(c.mask))


def test_floating_max_steps_cuts_path():
    L, bias, y = _problem(0, p=8)
    path = _run(L, bias, y, "forward_backward", "error_probability", max_steps=3)
    assert int(path.n_steps) == 3 and not bool(path.converged)
    full, _ = ref_floating(
        L[None], bias[None], y, np.ones((1, len(y))), "forward_backward", "error_probability"
    )
    np.testing.assert_array_equal(np.asarray(path.mask), full[:4])


def test_floating_jit_and_vmap():
    probs = [_problem(s, p=8) for s in range(3)]
    Ls = jnp.asarray(np.stack([q[0] for q in probs]))
    bs = jnp.asarray(np.stack([q[1] for q in probs]))
    ys = jnp.asarray(np.stack([q[2] for q in probs]))
    for d in ("forward_backward", "backward_forward"):
        f = lambda L, b, y, d=d: sel.selective_path(
            L, b, y, direction=d, criterion="error", stopping="full", max_steps=40
        )
        batched = jax.jit(jax.vmap(f))(Ls, bs, ys)
        for s in range(3):
            one = f(Ls[s], bs[s], ys[s])
            for name in ("mask", "criterion", "error", "size", "toggled"):
                np.testing.assert_array_equal(
                    np.asarray(getattr(batched, name)[s]), np.asarray(getattr(one, name))
                )
            assert int(batched.n_steps[s]) == int(one.n_steps)
            ref, _ = ref_floating(
                np.asarray(Ls[s])[None],
                np.asarray(bs[s])[None],
                np.asarray(ys[s]),
                np.ones((1, ys.shape[1])),
                d,
                "error",
            )
            np.testing.assert_array_equal(np.asarray(one.mask[: int(one.n_steps) + 1]), ref)


def test_improve_floating_unchanged_by_full_option():
    """stopping="improve" keeps the alternating-phase floating search (every move improves): the
    path equals test_selective's NumPy `_ref_search`, not Pudil's SFFS / SBFS."""
    # seed 24 forward_backward runs three phases (forward, backward, forward)
    for direction, seed in (("backward_forward", 6), ("forward_backward", 24)):
        L, bias, y = _problem(seed, p=10)
        path = sel.selective_path(
            jnp.asarray(L),
            jnp.asarray(bias),
            jnp.asarray(y),
            direction=direction,
            criterion="error_probability",
        )
        k = int(path.n_steps)
        masks, final = _ref_search(L, bias, y, np.ones(len(y)), direction, "error_probability")
        np.testing.assert_array_equal(np.asarray(path.mask[: k + 1]), masks)
        assert float(path.criterion[k]) == pytest.approx(final, rel=1e-10)
        assert np.all(np.diff(np.asarray(path.criterion[: k + 1])) < 0)
        full, _ = ref_floating(
            L[None], bias[None], y, np.ones((1, len(y))), direction, "error_probability"
        )
        assert len(full) != len(masks) or (full != masks).any()


def test_selective_estimator_floating_full():
    rng = np.random.default_rng(0)
    n = 200
    y = rng.integers(0, 2, n)
    X = np.column_stack(
        [
            y + rng.normal(0, 1, n),
            rng.normal(0, 1, n),
            -y + rng.normal(0, 1, n),
            rng.normal(0, 1, n),
            y + rng.normal(0, 1.5, n),
        ]
    )
    for d in ("forward_backward", "backward_forward"):
        m = SelectiveNB(
            direction=d, stopping="full", criterion="error_probability", validation_fraction=0.5
        ).fit(X, y)
        err, sizes = m.path_["error"], m.path_["size"]
        i = m.selected_step_
        assert err[i] == err.min() and sizes[i] == sizes[err == err.min()].min()
        np.testing.assert_array_equal(m.support_, m.path_["mask"][i])
        assert m.path_["mask"][-1].all() == (d == "forward_backward")
