"""`jaxnb.ConvergenceWarning`: iterative fits that stop at their step budget say so, and `compare`
footnotes them; converged fits stay silent (the suite turns every warning into an error)."""

import warnings

import jax
import numpy as np
import pytest

import jaxnb
from jaxnb import L1NB, ConvergenceWarning, GroupLassoNB, WeightedNB
from jaxnb.cli import main
from jaxnb.datasets import load_diabetes


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(quartile=2)
    return X[:300], y[:300]


def test_is_a_user_warning_exported_at_top_level():
    assert issubclass(ConvergenceWarning, UserWarning)
    assert "ConvergenceWarning" in jaxnb.__all__


def test_gradient_wnb_warns_at_its_step_cap_and_is_silent_once_converged(diabetes):
    X, y = diabetes
    with pytest.warns(
        ConvergenceWarning, match=r"max_steps=5 with gradient norm .* > tol=1e-06"
    ) as w:
        m = WeightedNB("gradient", max_steps=5).fit(X, y)
    assert w[0].filename == __file__  # points at the fit call, not at the library
    assert "Raise max_steps" in str(w[0].message)
    assert not m.converged_ and int(m.info_.n_steps) == 5
    # Adam at a fixed rate: more steps is not the fix
    with pytest.warns(ConvergenceWarning, match="lower learning_rate .* solver='auto'"):
        m = WeightedNB("gradient", solver="adam", max_steps=5).fit(X, y)
    assert float(m.info_.grad_norm) > 1e-6
    # the default budgets reach the tolerance on these rows: L-BFGS took 771 steps on the raw
    # terms, 426 on the standardized terms the fit now uses (the columns' units no longer slow
    # it down); Newton, the default for these 22 parameters, 6
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = WeightedNB("gradient", solver="lbfgs").fit(X, y)
        assert m.converged_ and 5 < int(m.info_.n_steps) < 600
        m = WeightedNB("gradient").fit(X, y)
    assert m.solver_ == "newton" and m.converged_ and int(m.info_.n_steps) < 20
    assert float(m.info_.grad_norm) <= 1e-6


@pytest.mark.skipif(
    jax.default_backend() != "cpu",
    reason="float32 rounding floor measured on XLA:CPU; on an H200 the line search kept "
    "finding decreases and the fit ran to max_steps (gradient norm 1.4e-5), warning so",
)
def test_gradient_wnb_says_when_float32_lbfgs_stalled():
    """A weakly regularized float32 fit stops at the objective's rounding floor, long before its
    step budget, and the warning says why and what helps (not "raise max_steps")."""
    import jax

    rng = np.random.default_rng(0)
    n, p, c = 500, 100, 3
    y = rng.integers(0, c, n)
    X = rng.normal(size=(n, p))
    X[:, : p // 10] += 0.5 * y[:, None]
    with jax.enable_x64(False):
        with pytest.warns(
            ConvergenceWarning, match=r"stopped after \d+ steps, its line search"
        ) as w:
            m = WeightedNB("gradient", solver="lbfgs").fit(X, y)
    assert "Float64 (jax_enable_x64) gets closer" in str(w[0].message)
    assert "Raise max_steps" not in str(w[0].message)
    assert bool(m.info_.stalled) and not m.converged_ and int(m.info_.n_steps) < 1500


def test_group_lasso_warns_when_the_selected_point_is_unconverged(diabetes):
    X, y = diabetes
    with pytest.warns(
        ConvergenceWarning, match=r"solver='fista'.*after 2 steps .*solver='exact'"
    ) as w:
        m = GroupLassoNB(solver="fista", max_steps=2).fit(X, y)
    assert w[0].filename == __file__
    assert not m.converged_
    assert not m.path_["converged"][m.selected_index_]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = GroupLassoNB(solver="fista").fit(X, y)
    assert m.converged_


def test_l1nb_warns_only_when_its_default_budget_truncates_the_path(diabetes, monkeypatch):
    X, y = diabetes
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        full = L1NB().fit(X, y)
        capped = L1NB(max_steps=1).fit(X, y)  # a cap the user chose: no warning
    assert full.path_converged_ and not capped.path_converged_
    # a default budget that runs out (forced here: 3 p suffices on real data) is reported
    from jaxnb import estimators_penalized as ep

    real = ep.l1nb.bounded_lars_path
    monkeypatch.setattr(
        ep.l1nb,
        "bounded_lars_path",
        lambda B, max_steps, variant, weight: real(
            B, 1 if max_steps is None else max_steps, variant, weight=weight
        ),
    )
    with pytest.warns(ConvergenceWarning, match="default budget of 1 segments") as w:
        m = L1NB().fit(X, y)
    assert w[0].filename == __file__
    assert not m.path_converged_
    np.testing.assert_allclose(m.coef_path_, capped.coef_path_)
    # the validation selection reads the path of the training part: checked as well
    with pytest.warns(ConvergenceWarning, match="default budget"):
        L1NB(selection="validation").fit(X, y)


def test_compare_footnotes_unconverged_fits(monkeypatch, capsys):
    from jaxnb import registry

    registry._load_builtin()
    monkeypatch.setitem(
        registry._REGISTRY,
        "WNB-5steps",
        registry.MethodSpec(
            "WNB-5steps",
            lambda kind: WeightedNB("gradient", max_steps=5),
            "capped",
            ("mixed", "continuous", "discrete"),
        ),
    )
    assert main(["compare", "--quick", "--methods", "NB,WNB-5steps"]) == 0
    out, _ = capsys.readouterr()
    table = [line for line in out.splitlines() if "WNB-5steps" in line and line[0] != "*"]
    assert len(table) == 2 and all("WNB-5steps *" in line for line in table)
    notes = [line for line in out.splitlines() if line.startswith("* not converged:")]
    assert len(notes) == 2 and all("WNB-5steps" in n and "max_steps=5" in n for n in notes)
    assert not any("NB *" in line for line in out.splitlines() if "WNB" not in line)


@pytest.mark.parametrize("direction", ["forward", "forward_backward"])
def test_selective_nb_warns_when_its_move_budget_ends_the_search(diabetes, direction, monkeypatch):
    import jax

    from jaxnb import SelectiveNB
    from jaxnb.methods import selective as sel

    X, y = diabetes
    full = SelectiveNB(direction=direction, criterion="log_loss").fit(X, y)
    assert full.converged_ and full.n_steps_ >= 2
    # a budget smaller than the search needs (forced: the defaults suffice on real data)
    monkeypatch.setattr(sel, "default_max_steps", lambda p, d: 1)
    jax.clear_caches()  # the search's program was traced with the real budget
    try:
        with pytest.warns(ConvergenceWarning, match=r"budget of 1 moves before its own end") as w:
            cut = SelectiveNB(direction=direction, criterion="log_loss").fit(X, y)
    finally:
        jax.clear_caches()  # nothing traced with the forced budget outlives the test
    assert w[0].filename == __file__
    assert not cut.converged_ and cut.n_steps_ == 1
    np.testing.assert_array_equal(cut.path_["mask"][1], full.path_["mask"][1])


class _NoisyNB(jaxnb.NaiveBayes):
    def fit(self, X, y, sample_weight=None):
        warnings.warn("a warning of the user's own", UserWarning, stacklevel=2)
        return super().fit(X, y, sample_weight)


def test_compare_leaves_other_warnings_to_the_users_filters(monkeypatch, capsys):
    from jaxnb import registry

    registry._load_builtin()
    spec = registry.MethodSpec(
        "Noisy", lambda kind: _NoisyNB(), "noisy", ("discrete", "continuous")
    )
    monkeypatch.setitem(registry._REGISTRY, "Noisy", spec)
    args = ["compare", "--quick", "--methods", "Noisy"]
    with pytest.raises(UserWarning, match="of the user's own"):  # the suite's "error" filter
        main(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        assert main(args) == 0
    # two fits (DR, Diabetes) warn from one place: shown once, as without compare, not hidden
    assert [str(w.message) for w in caught] == ["a warning of the user's own"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert main(args) == 0
    assert "not converged" not in capsys.readouterr().out


@pytest.mark.parametrize("direction", ["forward", "backward_forward"])
def test_selective_nb_user_move_budget_is_a_silent_cap(diabetes, direction):
    from jaxnb import SelectiveNB

    X, y = diabetes
    full = SelectiveNB(direction=direction, criterion="log_loss").fit(X, y)
    assert full.converged_ and full.n_steps_ >= 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a cap the user set is not a convergence failure
        cut = SelectiveNB(direction=direction, criterion="log_loss", max_steps=1).fit(X, y)
    assert not cut.converged_ and cut.n_steps_ == 1
    np.testing.assert_array_equal(cut.path_["mask"], full.path_["mask"][:2])
    np.testing.assert_array_equal(cut.support_, full.path_["mask"][1])
    # a budget the search does not reach changes nothing
    roomy = SelectiveNB(direction=direction, criterion="log_loss", max_steps=full.n_steps_ + 1)
    roomy.fit(X, y)
    assert roomy.converged_
    np.testing.assert_array_equal(roomy.support_, full.support_)


def test_selective_nb_max_phases_caps_the_phase_search(diabetes):
    from jaxnb import SelectiveNB

    X, y = diabetes
    kw = dict(direction="forward_backward", criterion="log_loss", stopping="phases")
    full = SelectiveNB(**kw).fit(X, y)
    assert full.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = SelectiveNB(**kw, max_phases=1).fit(X, y)
    # the first (forward) phase improves on the empty set, so one phase cannot end the search
    assert not one.converged_
    fwd = SelectiveNB(direction="forward", criterion="log_loss", stopping="full").fit(X, y)
    np.testing.assert_array_equal(one.path_["mask"], fwd.path_["mask"])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(max_steps=0), "max_steps must be an int >= 1"),
        (dict(max_steps=2.0), "max_steps must be an int >= 1"),
        (dict(max_phases=True, stopping="phases", direction="forward_backward"), "max_phases"),
        (dict(max_steps=3, stopping="phases", direction="forward_backward"), "bound it with"),
        (dict(max_phases=3), "max_phases bounds stopping='phases'"),
    ],
)
def test_selective_nb_budget_arguments_are_checked(diabetes, kwargs, match):
    from jaxnb import SelectiveNB

    X, y = diabetes
    with pytest.raises(ValueError, match=match):
        SelectiveNB(**kwargs).fit(X, y)
