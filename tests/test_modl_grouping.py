"""MODL value grouping of categorical predictors (Boullé 2005) and its use in AveragedNB."""

import math

import numpy as np
import pytest
from scipy.special import gammaln
from test_anb import check_unseen_category_drops_its_term  # tests/ is on sys.path

from jaxnb import discretize as D
from jaxnb.discretize import modl_grouping, modl_grouping_cost
from jaxnb.stream.anb import AveragedNB


def _stirling2(n, k):
    total = sum((-1) ** j * math.comb(k, j) * (k - j) ** n for j in range(k + 1))
    return total // math.factorial(k)


def _partitions(items):
    """All set partitions of a list (recursive; independent of the library's enumeration)."""
    if len(items) == 1:
        yield [items]
        return
    first, rest = items[0], items[1:]
    for part in _partitions(rest):
        for g in range(len(part)):
            yield part[:g] + [[first] + part[g]] + part[g + 1 :]
        yield [[first]] + part


def _formula(group_counts, v):
    gc = np.asarray(group_counts, dtype=np.int64)
    i, j = gc.shape
    cost = math.log(v) + math.log(sum(_stirling2(v, k) for k in range(1, i + 1)))
    for row in gc:
        n_i = int(row.sum())
        cost += math.log(math.comb(n_i + j - 1, j - 1))
        cost += gammaln(n_i + 1) - sum(gammaln(int(x) + 1) for x in row)
    return cost


def test_grouping_cost_matches_formula():
    gc = np.array([[5, 1, 0], [2, 7, 3]])
    for v in (2, 3, 6):
        assert modl_grouping_cost(gc, v) == pytest.approx(_formula(gc, v), rel=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_exact_grouping_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    v, j = int(rng.integers(2, 7)), int(rng.integers(2, 4))
    profile = rng.dirichlet(np.ones(j), size=int(rng.integers(1, 4)))
    pick = rng.integers(len(profile), size=v)
    counts = np.array([rng.multinomial(int(rng.integers(1, 40)), profile[k]) for k in pick], float)
    counts[counts.sum(1) == 0, 0] = 1
    labels, cost = modl_grouping(counts, return_cost=True)
    best = min(
        modl_grouping_cost(np.array([counts[g].sum(0) for g in part]), v)
        for part in _partitions(list(range(v)))
    )
    assert cost == pytest.approx(best, rel=1e-12)
    groups = np.array([counts[labels == g].sum(0) for g in range(labels.max() + 1)])
    assert modl_grouping_cost(groups, v) == pytest.approx(cost, rel=1e-12)
    assert labels[0] == 0 and set(labels.tolist()) == set(range(labels.max() + 1))


def test_greedy_grouping_on_many_values():
    rng = np.random.default_rng(0)
    v = D._GROUPING_EXACT_MAX + 6
    kind = np.arange(v) % 2
    counts = np.stack([rng.multinomial(200, [0.8, 0.2] if k else [0.2, 0.8]) for k in kind], 0)
    labels, cost = modl_grouping(counts.astype(float), return_cost=True)
    assert labels.max() == 1
    np.testing.assert_array_equal(labels, kind if labels[0] == kind[0] else 1 - kind)
    groups = np.array([counts[labels == g].sum(0) for g in range(labels.max() + 1)])
    assert modl_grouping_cost(groups, v) == pytest.approx(cost, rel=1e-12)


def test_grouping_edge_cases_and_validation():
    labels, cost = modl_grouping(np.array([[3.0, 1.0], [0.0, 0.0]]), return_cost=True)
    np.testing.assert_array_equal(labels, [0, 0])
    assert cost == pytest.approx(modl_grouping_cost([[3.0, 1.0]], 1))
    with pytest.raises(ValueError, match="2-D"):
        modl_grouping(np.ones(3))
    with pytest.raises(ValueError, match=">= 0"):
        modl_grouping(-np.ones((2, 2)))
    with pytest.raises(ValueError, match="1 <= I <= n_values"):
        modl_grouping_cost(np.ones((3, 2)), 2)


def test_averaged_nb_modl_grouping():
    rng = np.random.default_rng(0)
    n = 4000
    y = rng.integers(0, 2, n)
    informative = np.where(rng.random(n) < 0.8, y, 1 - y) + 2 * rng.integers(0, 3, n)  # 6 values
    noise = rng.integers(0, 5, n).astype(float)
    X = np.column_stack([informative.astype(float), noise, rng.normal(size=n) + y])
    raw = AveragedNB(discrete=[0, 1]).fit(X, y)
    grp = AveragedNB(discrete=[0, 1], grouping="modl").fit(X, y)
    assert raw.n_intervals_[0] == 6 and raw.n_intervals_[1] == 5
    assert grp.n_intervals_[0] == 2 and grp.n_intervals_[1] == 1
    np.testing.assert_array_equal(grp.groups_[0], np.arange(6) % 2)
    assert grp.score(X, y) >= raw.score(X, y) - 0.01
    assert grp.weights_[0] > 0.5
    check_unseen_category_drops_its_term(grp, X, y, col=0)  # unseen category: contributes 0
    with pytest.raises(ValueError, match="grouping must be"):
        AveragedNB(grouping="chi2").fit(X, y)
