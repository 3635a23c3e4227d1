"""Warnings and errors of the estimators (the functional core reports the same facts in its return
values).

`ConvergenceWarning` is emitted by an estimator's ``fit`` when an iterative solver stopped at its
step budget before its own tolerance was met, so the fitted model is not the optimum the method
defines. The estimator still returns (the model is usable, and its ``converged_`` / ``info_`` /
``path_`` attributes say how far it got); the warning names the budget and the fix. Silence it
with ``warnings.simplefilter("ignore", jaxnb.ConvergenceWarning)``, or turn it into an error with
``"error"`` in a sweep that must not use unconverged fits.
"""

from __future__ import annotations

__all__ = ["ConvergenceWarning", "NotFittedError"]


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at its step budget before reaching its tolerance."""


class NotFittedError(ValueError, AttributeError):
    """A fitted-model method or attribute (``predict``, ``feature_importances_``, ...) was used
    before ``fit``.

    A `ValueError` and an `AttributeError`, as scikit-learn's exception of the same name: so
    ``hasattr(model, "feature_importances_")`` is False on an unfitted model instead of raising.
    """
