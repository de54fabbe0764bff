"""Estimators that explain models."""

from skshapley.explain._explainer import ShapleyExplainer
from skshapley.explain._explanation import Explanation
from skshapley.explain._rkhs import RKHSShapRegressor

__all__ = ["Explanation", "RKHSShapRegressor", "ShapleyExplainer"]
