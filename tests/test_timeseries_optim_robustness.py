"""Window tests on constant windows, change points inside the series, and the prox / box
projection on NaN, negative thresholds and integer input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnb.datasets.timeseries import simulate_series, window_pvalues
from jaxnb.optim.projections import project_box
from jaxnb.optim.prox import prox_group_l2


def test_f_test_on_constant_windows_is_exact():
    """Two constant windows: p = 1 (no evidence); one constant and one varying: p = 0. The
    running-sum variances left rounding there, which gave arbitrary p-values, even 0."""
    rng = np.random.default_rng(0)
    s = np.r_[np.full(30, 5.0), rng.normal(size=30) + 5][None]
    p, _, _ = window_pvalues(s, np.array([60]), 10)
    np.testing.assert_array_equal(np.asarray(p)[0, 2, :11], np.ones(11))  # windows within 0..29
    a = np.r_[[2.0, 0.0] * 2, [2.0] * 4][None]
    p, _, _ = window_pvalues(a, np.array([8]), 8)
    assert float(np.asarray(p)[0, 2, 0]) == 0.0


def test_change_points_stay_inside_the_series():
    data = simulate_series(
        jax.random.PRNGKey(1), 400, min_length=20, max_length=40, central_fraction=1.0
    )
    tau, length = np.asarray(data.change_point), np.asarray(data.lengths)
    anomalies = np.asarray(data.labels) > 0
    assert (tau[anomalies] <= length[anomalies] - 1).all()


def test_group_prox_keeps_nan_and_rejects_negative_thresholds():
    out = np.asarray(prox_group_l2(jnp.array([[np.nan, 0.0], [1.0, 1.0]]), 0.0, 0.5))
    assert np.isnan(out[0]).all()
    np.testing.assert_allclose(out[1], 1.0 - 0.5 / np.sqrt(2.0))
    np.testing.assert_array_equal(
        np.asarray(prox_group_l2(jnp.array([[3.0, 0.0]]), 0.0, jnp.inf)), [[0.0, 0.0]]
    )
    with pytest.raises(ValueError, match="threshold must be >= 0"):
        prox_group_l2(jnp.ones((2, 2)), 0.0, -0.1)


def test_box_projection_of_integers_is_not_truncated():
    np.testing.assert_array_equal(
        np.asarray(project_box(jnp.array([1, 5, 9]), 2.5, 7.5)), [2.5, 5.0, 7.5]
    )
