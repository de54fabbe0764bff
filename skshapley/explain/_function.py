"""A plain function as the model of an explainer (as shap's explainers take one)."""

from __future__ import annotations

from sklearn.base import BaseEstimator, RegressorMixin


class FunctionModel(RegressorMixin, BaseEstimator):
    """``function(X) -> (n,) or (n, k)`` as a fitted regressor: nothing to fit, and
    ``predict`` calls the function on NumPy rows. NaN is passed on (the function
    decides what it takes).

    Parameters
    ----------
    function : callable

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.explain._function import FunctionModel
    >>> FunctionModel(lambda X: X.sum(axis=1)).predict(np.ones((2, 3)))
    array([3., 3.])
    """

    def __init__(self, function):
        self.function = function

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        return self.function(X)

    def __sklearn_is_fitted__(self):
        return True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.target_tags.required = False
        return tags


def as_model(estimator):
    """(model, prefit): a plain function becomes a prefit :class:`FunctionModel`."""
    if callable(estimator) and not hasattr(estimator, "fit"):
        return FunctionModel(estimator), True
    return estimator, None
