"""Eager input validation of the sweep, the functional filters, `apply_cuts` and the fold helpers:
bad input raises a ValueError / TypeError naming the argument before any compilation, and the
documented missing-value markers (code -1, NaN) still work."""

import numpy as np
import pytest

from jaxnb import discretize as dz
from jaxnb import model_selection as ms
from jaxnb.methods import filters as flt
from jaxnb.sweep import fold_ids, sweep_methods, sweep_nb

N_STATES = (3, 3)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 24
    return {
        "codes_train": rng.integers(0, 3, (n, 2)),
        "values_train": rng.normal(size=(n, 1)),
        "y_train": np.arange(n) % 2,
    }


def _with(data, **kw):
    out = {k: np.array(v) for k, v in data.items()}
    out.update(kw)
    return out


def _edit(a, idx, value, dtype=None):
    a = np.array(a, dtype=dtype)
    a[idx] = value
    return a


# ------------------------------------------------------------------------------ sweep: grids
def test_nb_negative_alpha_raises(data):
    with pytest.raises(ValueError, match="alpha"):
        sweep_nb(data, {"alpha": [-1.0]}, n_states=N_STATES)
    with pytest.raises(ValueError, match="var_smoothing"):
        sweep_nb(data, {"alpha": [1.0], "var_smoothing": [-1e-3]}, n_states=N_STATES)


def test_nb_misspelled_grid_key_names_the_keys(data):
    with pytest.raises(ValueError, match=r"alpah.*alpha"):
        sweep_nb(data, {"alpah": [1.0]}, n_states=N_STATES)
    with pytest.raises(ValueError, match="alpah"):
        sweep_methods(data, {"nb": {"alpha": [1.0], "alpah": [1.0]}}, n_states=N_STATES)


def test_group_lasso_negative_penalty_raises(data):
    with pytest.raises(ValueError, match="penalty"):
        sweep_methods(data, {"group_lasso": {"penalty": [0.1, -1.0]}}, n_states=N_STATES)
    with pytest.raises(ValueError, match="solver"):
        sweep_methods(
            data,
            {"group_lasso": {"penalty": [0.1]}},
            n_states=N_STATES,
            options={"group_lasso": {"solver": "newton"}},
        )


def test_fsnb_nan_epsilon_and_unknown_grid_key_raise(data):
    with pytest.raises(ValueError, match="epsilon"):
        sweep_methods(data, {"fsnb": {"epsilon": [np.nan]}}, n_states=N_STATES)
    with pytest.raises(ValueError, match="epsilon"):
        sweep_methods(data, {"fsnb": {"epsilom": [0.1]}}, n_states=N_STATES)


# ------------------------------------------------------------------------------ sweep: data
@pytest.mark.parametrize(
    "field, value, match",
    [
        ("codes_train", 3, "n_states"),  # code >= n_states[0]
        ("codes_train", -2, "codes_train"),  # negative other than the missing code -1
        ("values_train", np.inf, "values_train"),
        ("y_train", -1, "y_train"),
    ],
)
def test_bad_entries_raise(data, field, value, match):
    bad = _with(data, **{field: _edit(data[field], (0, 0) if field != "y_train" else 0, value)})
    with pytest.raises(ValueError, match=match):
        sweep_nb(bad, n_states=N_STATES)


def test_non_integer_codes_raise(data):
    bad = _with(data, codes_train=_edit(data["codes_train"], (0, 0), 0.5, float))
    with pytest.raises(ValueError, match="codes_train"):
        sweep_nb(bad, n_states=N_STATES)


def test_label_outside_n_classes_raises(data):
    bad = _with(data, y_train=_edit(data["y_train"], 0, 5))
    with pytest.raises(ValueError, match="n_classes"):
        sweep_nb(bad, n_states=N_STATES, n_classes=2)


def test_string_labels_raise_type_error(data):
    bad = _with(data, y_train=np.array(["a", "b"] * 12))
    with pytest.raises(TypeError, match="y_train must hold integer class codes"):
        sweep_nb(bad, n_states=N_STATES)


def test_negative_weight_raises(data):
    w = np.ones(24)
    w[3] = -1.0
    with pytest.raises(ValueError, match="weight_train"):
        sweep_nb(_with(data, weight_train=w), n_states=N_STATES)
    with pytest.raises(ValueError, match="weight_train"):
        sweep_nb(_with(data, weight_train=np.zeros(24)), n_states=N_STATES)


def test_bad_n_states_raise(data):
    with pytest.raises(ValueError, match=r"n_states\[0\]"):
        sweep_nb(data, n_states=(0, 3))
    with pytest.raises(TypeError, match="n_states must be a sequence"):
        sweep_nb(data, n_states=3)
    with pytest.raises(ValueError, match="n_states"):
        sweep_nb(data, n_states=(3, 3, 3))


def test_missing_markers_and_valid_inputs_still_work(data):
    codes = _edit(data["codes_train"], (0, 0), -1)  # -1 = missing code
    values = _edit(data["values_train"], (1, 0), np.nan)  # NaN = missing value
    ok = _with(data, codes_train=codes, values_train=values, weight_train=np.ones(24))
    res = sweep_nb(ok, {"alpha": [0.5, 1.0], "var_smoothing": [1e-9]}, n_states=N_STATES, folds=3)
    assert np.isfinite(res.arrays["train_log_loss"]).all()
    # whole-number float codes / labels are exact and accepted; numpy ints in n_states too
    ok2 = _with(data, codes_train=data["codes_train"].astype(float), y_train=data["y_train"] * 1.0)
    res2 = sweep_nb(ok2, n_states=np.array([3, 3]))
    ref = sweep_nb(data, n_states=N_STATES)
    np.testing.assert_allclose(res2.arrays["train_error"], ref.arrays["train_error"])
    table, _ = sweep_methods(data, {"group_lasso": {"penalty": [0.0, 0.1]}}, n_states=N_STATES)
    assert len(table) == 2


# ------------------------------------------------------------------------------ fold ids
@pytest.mark.parametrize("k", [0, -2, 1])
def test_fold_ids_needs_two_folds(k):
    with pytest.raises(ValueError, match="n_folds"):
        fold_ids(0, 6, k)


def test_fold_ids_more_folds_than_rows_raises():
    with pytest.raises(ValueError, match="n_folds=7 exceeds n_rows=6"):
        fold_ids(0, 6, 7)
    assert np.bincount(fold_ids(0, 6, 3)).tolist() == [2, 2, 2]
    assert sorted(fold_ids(0, 6, 6).tolist()) == list(range(6))


# ------------------------------------------------------------------------------ filters
def _discrete(n=40, seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 3, (n, 2)), np.arange(n) % 2


def test_mutual_information_code_and_label_ranges():
    codes, y = _discrete()
    with pytest.raises(ValueError, match=r"n_states\[1\]"):
        flt.mutual_information_discrete(_edit(codes, (0, 1), 3), y, (3, 3), 2)
    with pytest.raises(ValueError, match="n_classes"):
        flt.mutual_information_discrete(codes, _edit(y, 0, 2), (3, 3), 2)
    with pytest.raises(ValueError, match="codes"):
        flt.information_matrices(_edit(codes, (0, 0), -2), y, 3, 2)
    with pytest.raises(ValueError, match="n_states"):
        flt.pairwise_mutual_information_discrete(_edit(codes, (0, 0), 4), 3)
    with pytest.raises(TypeError, match="y must hold integer"):
        flt.mutual_information_discrete(codes, np.array(["a", "b"] * 20), 3, 2)


def test_mutual_information_missing_code_and_traced_inputs():
    import jax

    codes, y = _discrete()
    mi = flt.mutual_information_discrete(_edit(codes, (0, 0), -1), y, (3, 3), 2)
    assert np.isfinite(np.asarray(mi)).all()
    # inside a caller's jit the inputs are tracers: no host check, no error
    jitted = jax.jit(lambda c, t: flt.mutual_information_discrete(c, t, (3, 3), 2))
    np.testing.assert_allclose(jitted(codes, y), flt.mutual_information_discrete(codes, y, 3, 2))


def test_threshold_filter_nan_threshold_raises():
    with pytest.raises(ValueError, match="threshold"):
        flt.threshold_filter(np.array([0.1, 0.2]), np.nan)
    np.testing.assert_array_equal(flt.threshold_filter(np.array([0.1, 0.3]), 0.2), [False, True])


# ------------------------------------------------------------------------------ discretize
def test_apply_cuts_nan_cut_raises():
    with pytest.raises(ValueError, match="cuts"):
        dz.apply_cuts(np.array([1.0, 2.0]), [np.nan])
    np.testing.assert_array_equal(dz.apply_cuts(np.array([1.0, np.nan, 3.0]), [1.5]), [0, -1, 1])


# ------------------------------------------------------------------------------ model_selection
def test_fold_and_split_messages_use_the_callers_name():
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match=r"cv=1000 exceeds.*lower cv to at most 10"):
        ms.stratified_folds(y, 1000, arg_name="cv")
    with pytest.raises(ValueError, match="cv must be an int >= 2"):
        ms.stratified_folds(y, 1, arg_name="cv")
    with pytest.raises(ValueError, match=r"validation_fraction=0.99 leaves an empty training"):
        ms.validation_split(y, 0.99, stratify=False, arg_name="validation_fraction")
    with pytest.raises(ValueError, match=r"validation_fraction must be in \(0, 1\)"):
        ms.validation_split(y, 1.5, arg_name="validation_fraction")
    # defaults keep the function's own parameter names
    with pytest.raises(ValueError, match="n_folds=11"):
        ms.stratified_folds(y, 11)
    with pytest.raises(ValueError, match="fraction=0.01 leaves an empty validation"):
        ms.validation_split(y, 0.01)
    assert 0 < ms.validation_split(y, 0.5).sum() < 10
