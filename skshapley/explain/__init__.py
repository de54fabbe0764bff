"""Estimators that explain models, and the codes of non-numeric columns they and
``skshapley.inspection`` share (:class:`ColumnCodec`, :func:`model_rows`)."""

from skshapley.explain._columns import ColumnCodec, check_missing_values_taken, model_rows
from skshapley.explain._explainer import ShapleyExplainer
from skshapley.explain._explanation import Explanation
from skshapley.explain._rkhs import RKHSShapRegressor

__all__ = ["ColumnCodec", "Explanation", "RKHSShapRegressor", "ShapleyExplainer", "model_rows",
    "check_missing_values_taken",
]
