"""Estimators that explain models (DESIGN.md §4.4)."""

from skshapley.explain._explainer import ShapleyExplainer
from skshapley.explain._explanation import Explanation
from skshapley.explain._rkhs import RKHSShapRegressor

__all__ = ["Explanation", "RKHSShapRegressor", "ShapleyExplainer"]
