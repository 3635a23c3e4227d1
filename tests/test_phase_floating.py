"""ESANN's phase floating search (`phase_floating_path`) against a loop-based float64 NumPy
reference that rebuilds every candidate subset's score from scratch."""

import jax.numpy as jnp
import numpy as np
import pytest
from test_floating import _crit, _fold_case, _problem

from jaxnb.methods import selective as sel


def _score(L, bias, y, w, m, criterion):
    K = L.shape[0]
    return np.mean(
        [_crit(bias[k] + (L[k] * m[None, :, None]).sum(1), y, criterion, w[k]) for k in range(K)]
    )


def ref_one_way(L, bias, y, w, fwd, criterion, mask, cap):
    """Complete one-way search from `mask`: (masks, values), the starting subset first."""
    p = L.shape[2]
    masks, values = [mask.copy()], [_score(L, bias, y, w, mask, criterion)]
    while True:
        cands = [i for i in range(p) if (not mask[i]) == fwd and (not fwd or mask.sum() < cap)]
        if not cands:
            break
        vals = []
        for i in cands:
            m = mask.copy()
            m[i] = not m[i]
            vals.append(_score(L, bias, y, w, m, criterion))
        k = int(np.argmin(vals))  # first index with the lowest value
        mask = mask.copy()
        mask[cands[k]] = not mask[cands[k]]
        masks.append(mask.copy())
        values.append(vals[k])
    return np.array(masks), np.array(values)


def ref_phases(
    L, bias, y, w, direction, criterion, max_phases=20, max_features=None, initial_mask=None
):
    """Phase floating search; returns (final mask, phases, visited masks).

    phases: list of (forward, start mask, optimum mask, improved)."""
    p = L.shape[2]
    cap = p if max_features is None else max_features
    tol = 0.0 if criterion == "error" else np.finfo(np.float64).eps ** 0.75
    fwd = direction == "forward_backward"
    mask = np.full(p, not fwd) if initial_mask is None else np.asarray(initial_mask, bool).copy()
    phases, visited = [], []
    while len(phases) < max_phases:
        masks, values = ref_one_way(L, bias, y, w, fwd, criterion, mask, cap)
        visited.extend(masks if not visited else masks[1:])
        sizes = masks.sum(1)
        order = sorted(range(len(values)), key=lambda t: (values[t], sizes[t], t))
        j = order[0]
        improved = j > 0 and values[j] < values[0] - tol * max(1.0, abs(values[0]))
        phases.append((fwd, mask.copy(), masks[j].copy(), improved))
        if not improved:
            break
        mask, fwd = masks[j].copy(), not fwd
    return mask, phases, np.array(visited)


def _check(path, ref):
    final, phases, visited = ref
    np.testing.assert_array_equal(path.final_mask, final)
    assert path.n_phases == len(phases)
    np.testing.assert_array_equal(path.phase_forward, [ph[0] for ph in phases])
    np.testing.assert_array_equal(path.mask[path.phase_start], [ph[1] for ph in phases])
    np.testing.assert_array_equal(path.mask[path.phase_best], [ph[2] for ph in phases])
    np.testing.assert_array_equal(path.phase_improved, [ph[3] for ph in phases])
    np.testing.assert_array_equal(path.mask, visited)
    assert path.n_steps + 1 == len(visited)


CASES = [
    (d, crit, seed, c, p)
    for d in ("forward_backward", "backward_forward")
    for crit in ("error", "error_probability")
    for (seed, c, p) in ((0, 2, 8), (1, 3, 10), (2, 2, 10), (7, 2, 9), (8, 3, 8))
]


@pytest.mark.parametrize("direction,criterion,seed,c,p", CASES)
def test_phase_floating_matches_numpy_reference(direction, criterion, seed, c, p):
    L, bias, y = _problem(seed, p=p, c=c)
    path = sel.phase_floating_path(
        jnp.asarray(L), jnp.asarray(bias), jnp.asarray(y), direction=direction, criterion=criterion
    )
    w = np.ones((1, len(y)))
    _check(path, ref_phases(L[None], bias[None], y, w, direction, criterion))
    assert path.converged and not path.hit_max_phases
    # record columns are consistent with the masks
    np.testing.assert_array_equal(path.size, path.mask.sum(1))
    vals = [_score(L[None], bias[None], y, w, m, criterion) for m in path.mask]
    np.testing.assert_allclose(path.criterion, vals, rtol=1e-10, atol=1e-12)
    err = [_score(L[None], bias[None], y, w, m, "error") for m in path.mask]
    np.testing.assert_allclose(path.error, err, atol=1e-12)
    # the criterion of the current subset strictly decreases from phase to phase
    starts = path.criterion[path.phase_start]
    assert np.all(np.diff(starts) < 0)
    # the last phase did not improve; every earlier one did
    assert not path.phase_improved[-1] and path.phase_improved[:-1].all()
    assert path.final == path.phase_start[-1]


def test_phase_floating_changes_direction():
    """The reference problems exercise several phases (otherwise = one one-way search)."""
    n = []
    for d, crit, seed, c, p in CASES:
        L, bias, y = _problem(seed, p=p, c=c)
        n.append(
            sel.phase_floating_path(
                jnp.asarray(L), jnp.asarray(bias), jnp.asarray(y), direction=d, criterion=crit
            ).n_phases
        )
    assert max(n) >= 3 and sum(k >= 2 for k in n) >= len(n) // 2


@pytest.mark.parametrize("direction", ["forward_backward", "backward_forward"])
def test_phase_floating_folds_max_features_initial_mask(direction):
    Lk, bk, y, W, kwargs = _fold_case()
    for kw in kwargs:
        # (the 0/1 error averaged over folds has round-off-level ties that the one-way search and
        # the reference may break differently; the single-split cases above cover it)
        for crit in ("error_probability", "log_loss"):
            path = sel.phase_floating_path(
                jnp.asarray(Lk),
                jnp.asarray(bk),
                jnp.asarray(y),
                jnp.asarray(W),
                direction=direction,
                criterion=crit,
                **{k: (jnp.asarray(v) if k == "initial_mask" else v) for k, v in kw.items()},
            )
            _check(path, ref_phases(Lk, bk, y, W, direction, crit, **kw))
            if "max_features" in kw:
                assert np.all(path.size[path.added] <= kw["max_features"])


def test_phase_floating_max_phases_and_errors():
    L, bias, y = _problem(0, p=10)
    args = (jnp.asarray(L), jnp.asarray(bias), jnp.asarray(y))
    full = sel.phase_floating_path(
        *args, direction="forward_backward", criterion="error_probability"
    )
    assert full.n_phases >= 2
    cut = sel.phase_floating_path(
        *args, direction="forward_backward", criterion="error_probability", max_phases=1
    )
    assert cut.n_phases == 1 and cut.hit_max_phases and not cut.converged
    assert cut.final == full.phase_best[0]
    np.testing.assert_array_equal(cut.mask, full.mask[: cut.n_steps + 1])
    with pytest.raises(ValueError, match="direction must be 'forward_backward' or"):
        sel.phase_floating_path(*args, direction="forward")
    with pytest.raises(ValueError, match="criterion must be one of"):
        sel.phase_floating_path(*args, criterion="auc")
    with pytest.raises(ValueError, match="max_phases must be >= 1; got 0"):
        sel.phase_floating_path(*args, max_phases=0)


def test_phase_floating_reuses_compilation():
    """Every phase calls the jitted one-way search with the same shapes and static arguments."""
    L, bias, y = _problem(2, p=10)
    args = (jnp.asarray(L), jnp.asarray(bias), jnp.asarray(y))
    sel.phase_floating_path(*args, direction="backward_forward", criterion="error_probability")
    before = sel.selective_path._cache_size()
    path = sel.phase_floating_path(
        *args, direction="forward_backward", criterion="error_probability"
    )
    assert path.n_phases >= 2
    assert sel.selective_path._cache_size() == before


def test_selective_nb_phases_matches_phase_floating_path():
    """SelectiveNB(stopping="phases") keeps the search's result subset and its visited path."""
    from jaxnb import SelectiveNB
    from jaxnb.methods import selective as sel
    from jaxnb.methods.nb import fit_stats
    from jaxnb.params import fit_mle

    rng = np.random.default_rng(7)
    n, p = 240, 9
    y = rng.integers(0, 2, n)
    prob = np.where(y[:, None] == 1, 0.35 + 0.05 * np.arange(p), 0.4)
    X = (rng.random((n, p)) < prob).astype(int)
    X[:, 5] = X[:, 4]  # a redundant copy
    for direction in ("forward_backward", "backward_forward"):
        m = SelectiveNB(
            direction=direction, criterion="error_probability", stopping="phases", discrete="all"
        ).fit(X, y)
        stats = fit_stats(
            jnp.asarray(X, jnp.int32),
            jnp.zeros((n, 0)),
            jnp.asarray(y),
            n_states=(2,) * p,
            n_classes=2,
        )
        o1 = fit_mle(stats, 1.0, 1e-9)
        L = sel.mle_contributions(o1, jnp.asarray(X, jnp.int32), jnp.zeros((n, 0)))
        ref = sel.phase_floating_path(
            L, o1.log_prior, jnp.asarray(y), direction=direction, criterion="error_probability"
        )
        np.testing.assert_array_equal(m.support_, np.asarray(ref.mask[ref.final]))
        assert m.selected_step_ == int(ref.final)
        assert m.path_["mask"].shape[0] == int(ref.n_steps) + 1
        assert m.score(X, y) > 0.5


def test_selective_nb_phases_needs_floating_direction():
    from jaxnb import SelectiveNB

    X = np.random.default_rng(0).integers(0, 2, (40, 3))
    y = np.arange(40) % 2
    with pytest.raises(ValueError, match="stopping='phases' needs a floating direction"):
        SelectiveNB(direction="forward", stopping="phases").fit(X, y)
