"""The batched exact MODL DP (`_modl_dp_many`) vs the previous per-predictor DP and brute force."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln

from jaxnb import discretize as D
from jaxnb.discretize import modl_cost, modl_cuts_from_counts, modl_cuts_from_counts_many


def _previous_dp(counts):
    """The DP shipped before the batched one: over (last bin, number of intervals), bounded by
    I * log J only. Kept verbatim in spirit as the reference of the fast path."""
    m, J = counts.shape
    n = counts.sum()

    def icost(c):
        return gammaln(c.sum(-1) + J) - gammaln(J) - gammaln(c + 1.0).sum(-1)

    def prior(i):
        i = np.asarray(i, dtype=np.float64)
        return math.log(n) + gammaln(n + i) - gammaln(n + 1.0) - gammaln(i)

    cum = np.vstack([np.zeros((1, J)), np.cumsum(counts, axis=0)])
    single = prior(1) + icost(cum[-1])
    integral = np.allclose(counts, np.round(counts)) and (counts.sum(axis=1) >= 1).all()
    per = math.log(J) if integral else 0.0
    i_max = m
    for i in range(2, m + 1):
        if prior(i) + i * per > single:
            i_max = i - 1
            break
    dp = np.full((i_max + 1, m + 1), np.inf)
    arg = np.zeros((i_max + 1, m + 1), dtype=np.int64)
    dp[0, 0] = 0.0
    for k in range(1, m + 1):
        cand = dp[:-1, :k] + icost(cum[k][None, :] - cum[:k])[None, :]
        arg[1:, k] = np.argmin(cand, axis=1)
        dp[1:, k] = cand[np.arange(i_max), arg[1:, k]]
    totals = prior(np.arange(1, i_max + 1)) + dp[1:, m]
    best = int(np.argmin(totals)) + 1
    ends, k = [], m
    for i in range(best, 0, -1):
        ends.append(k)
        k = int(arg[i, k])
    return sorted(ends), float(totals[best - 1])


def _random_counts(rng, kind):
    m, J = int(rng.integers(1, 70)), int(rng.integers(2, 5))
    if kind == 0:  # sparse small integers, empty bins included
        counts = rng.integers(0, 5, (m, J)).astype(float)
    elif kind == 1:  # a class-1 trend: several intervals
        p = np.exp(np.linspace(-2, 2, m))[:, None] * (np.arange(J) == 1) + 1.0
        counts = rng.poisson(15 * p / p.sum(1, keepdims=True)).astype(float)
    else:  # weighted (non-integer) counts
        counts = rng.random((m, J)) * 4
    counts[0] += 1.0
    return counts


def _reference(cuts, counts):
    cand, kept = D._check_counts(cuts, counts)
    ends, cost = _previous_dp(kept)
    return cand[np.asarray(ends[:-1], dtype=np.int64) - 1], cost


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_fast_modl_equals_previous_dp(kind):
    rng = np.random.default_rng(100 + kind)
    cuts_l, counts_l = [], []
    for _ in range(40):
        counts = _random_counts(rng, kind)
        cuts = np.sort(rng.random(counts.shape[0] - 1))
        cuts_l.append(cuts)
        counts_l.append(counts)
        got, cost = modl_cuts_from_counts(cuts, counts, return_cost=True)
        ref, ref_cost = _reference(cuts, counts)
        np.testing.assert_array_equal(got, ref)
        assert cost == pytest.approx(ref_cost, rel=1e-12)
    # one ragged batch (all J equal): the same answers as one at a time
    J = counts_l[0].shape[1]
    same = [j for j, c in enumerate(counts_l) if c.shape[1] == J]
    many = modl_cuts_from_counts_many(
        [cuts_l[j] for j in same], [counts_l[j] for j in same], return_cost=True
    )
    for j, (got, cost) in zip(same, many, strict=True):
        ref, ref_cost = _reference(cuts_l[j], counts_l[j])
        np.testing.assert_array_equal(got, ref)
        assert cost == pytest.approx(ref_cost, rel=1e-12)


def test_long_inputs_and_small_chunks_take_the_same_optimum(monkeypatch):
    rng = np.random.default_rng(7)
    counts_l = [_random_counts(rng, 1) for _ in range(12)]
    counts_l = [c[:, :2] + 1 for c in counts_l]
    cuts_l = [np.arange(c.shape[0] - 1, dtype=float) for c in counts_l]
    fast = modl_cuts_from_counts_many(cuts_l, counts_l, return_cost=True)
    monkeypatch.setattr(D, "_BATCH_MAX_BINS", 20)  # long ones go to the per-predictor DP
    monkeypatch.setattr(D, "_BATCH_ELEMENTS", 3000)  # tiny chunks
    slow = modl_cuts_from_counts_many(cuts_l, counts_l, return_cost=True)
    for (a, ca), (b, cb), cu, co in zip(fast, slow, cuts_l, counts_l, strict=True):
        ref, ref_cost = _reference(cu, co)
        np.testing.assert_array_equal(a, ref)
        np.testing.assert_array_equal(b, ref)
        assert ca == pytest.approx(ref_cost, rel=1e-12) and cb == pytest.approx(ref_cost, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_batched_modl_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    J = int(rng.integers(2, 4))
    counts_l = []
    for _ in range(5):
        m = int(rng.integers(1, 10))
        counts_l.append(rng.integers(0, 6, (m, J)).astype(float) + (np.arange(J) == 0))
    cuts_l = [np.arange(c.shape[0] - 1, dtype=float) for c in counts_l]
    for (cuts, cost), counts in zip(
        modl_cuts_from_counts_many(cuts_l, counts_l, return_cost=True), counts_l, strict=True
    ):
        m = counts.shape[0]
        best = np.inf
        for mask in itertools.product([False, True], repeat=m - 1):
            ends = [i + 1 for i, cut in enumerate(mask) if cut] + [m]
            starts = [0] + ends[:-1]
            parts = [counts[s:e].sum(0) for s, e in zip(starts, ends, strict=True)]
            best = min(best, modl_cost(np.array(parts)))
        assert cost == pytest.approx(best, rel=1e-12)
        ends = np.append(np.searchsorted(np.arange(m - 1.0), cuts) + 1, m).astype(int)
        starts = np.append(0, ends[:-1])
        chosen = np.array([counts[s:e].sum(0) for s, e in zip(starts, ends, strict=True)])
        assert modl_cost(chosen) == pytest.approx(best, rel=1e-12)


def test_many_validation_and_empty_inputs():
    assert modl_cuts_from_counts_many([], []) == []
    out = modl_cuts_from_counts_many([np.zeros(1)], [np.zeros((2, 2))], return_cost=True)
    assert out[0][0].size == 0 and math.isnan(out[0][1])
    with pytest.raises(ValueError, match="same length"):
        modl_cuts_from_counts_many([np.zeros(1)], [])
    with pytest.raises(ValueError, match="same number of classes"):
        modl_cuts_from_counts_many([np.zeros(0), np.zeros(0)], [np.ones((1, 2)), np.ones((1, 3))])


def test_one_predictor_over_the_tensor_cap_takes_the_per_predictor_dp(monkeypatch):
    # the element cap holds for a chunk of one too: its (m + 1)^2 J tensor would exceed it
    rng = np.random.default_rng(3)
    counts_l = [rng.integers(0, 5, (m, 3)).astype(float) + 1 for m in (6, 40)]
    cuts_l = [np.arange(c.shape[0] - 1, dtype=float) for c in counts_l]
    monkeypatch.setattr(D, "_BATCH_ELEMENTS", 41**2 * 3 - 1)
    widths, per_predictor = [], []
    chunk, single = D._modl_dp_chunk, D._modl_dp
    monkeypatch.setattr(D, "_modl_dp_chunk", lambda cl, w: widths.append(w) or chunk(cl, w))
    monkeypatch.setattr(D, "_modl_dp", lambda c: per_predictor.append(c.shape[0]) or single(c))
    got = modl_cuts_from_counts_many(cuts_l, counts_l, return_cost=True)
    assert widths == [6] and per_predictor == [40]
    for (cuts, cost), cu, co in zip(got, cuts_l, counts_l, strict=True):
        ref, ref_cost = _reference(cu, co)
        np.testing.assert_array_equal(cuts, ref)
        assert cost == pytest.approx(ref_cost, rel=1e-12)


@pytest.mark.parametrize("n_classes", [1, 2, 7, 8, 9])
@pytest.mark.parametrize("weighted", [False, True])
def test_pair_interval_costs_equal_the_direct_formula(n_classes, weighted):
    """The DP's interval costs (integer prefix differences and an lgamma table below 8 classes,
    the float path otherwise) are `_interval_cost` of each interval's counts, and the batched
    DP keeps the reference optimum on both paths."""
    rng = np.random.default_rng(n_classes + 10 * weighted)
    counts = rng.integers(0, 6, (3, 40, n_classes)).astype(float)
    if weighted:
        counts *= rng.uniform(0.5, 2.0, counts.shape)
    cum = D._cum_counts(counts)
    hi, lo = np.tril_indices(41, -1)
    got = D._pair_interval_costs(cum, hi, lo)
    want = D._interval_cost(cum[:, hi, :] - cum[:, lo, :])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-12)
    counts_l = [c[c.sum(axis=1) > 0] for c in counts]
    cuts_l = [np.arange(c.shape[0] - 1, dtype=float) for c in counts_l]
    many = modl_cuts_from_counts_many(cuts_l, counts_l, return_cost=True)
    for (got_cuts, cost), cu, co in zip(many, cuts_l, counts_l, strict=True):
        ref, ref_cost = _reference(cu, co)
        np.testing.assert_array_equal(got_cuts, ref)
        assert cost == pytest.approx(ref_cost, rel=1e-12)
