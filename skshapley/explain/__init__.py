"""Estimators that explain models (DESIGN.md §4.4)."""

from skshapley.explain._explainer import ShapleyExplainer
from skshapley.explain._explanation import Explanation

__all__ = ["Explanation", "ShapleyExplainer"]
