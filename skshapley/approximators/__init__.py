"""Estimate the Shapley values of a game within a budget (DESIGN.md §4.2)."""

from skshapley.approximators._api import (
    AUTO_POLICY,
    METHODS,
    check_method,
    default_budget,
    method_minimum_budget,
    resolve_method,
    resolve_sampler,
    shapley_values,
)
from skshapley.approximators._exact import all_coalitions, exact_shapley
from skshapley.approximators._owen import owen_shapley
from skshapley.approximators._permutation import (
    make_sampler,
    minimum_budget,
    permutation_shapley,
)
from skshapley.approximators._regression import REGRESSION_METHODS, regression_shapley
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._risk import (
    RunningCovariance,
    feature_error_quantiles,
    overall_error_quantile,
)
from skshapley.approximators._stratified import stratified_shapley
from skshapley.approximators._topk import TOPK_METHODS, TopKResult, topk_shapley

__all__ = [
    "AUTO_POLICY",
    "METHODS",
    "REGRESSION_METHODS",
    "RunningCovariance",
    "ShapleyResult",
    "TOPK_METHODS",
    "TopKResult",
    "all_coalitions",
    "check_method",
    "default_budget",
    "exact_shapley",
    "feature_error_quantiles",
    "make_sampler",
    "method_minimum_budget",
    "minimum_budget",
    "overall_error_quantile",
    "owen_shapley",
    "stratified_shapley",
    "permutation_shapley",
    "regression_shapley",
    "resolve_method",
    "resolve_sampler",
    "shapley_values",
    "topk_shapley",
]
