"""Estimate the Shapley values of a game within a budget."""

from skshapley.approximators._api import (
    METHOD_RECORDS,
    METHODS,
    MethodChoice,
    check_budget_fits,
    check_method,
    choose_method,
    default_budget,
    largest_budget_in_memory,
    resolve_method,
    resolve_sampler,
    shapley_values,
)
from skshapley.approximators._exact import MAX_EXACT_PLAYERS, all_coalitions, exact_shapley
from skshapley.approximators._hierarchical import owen_values
from skshapley.approximators._owen import owen_shapley
from skshapley.approximators._permutation import (
    check_sampler,
    make_sampler,
    minimum_budget,
    permutation_shapley,
)
from skshapley.approximators._records import MethodCost, MethodRecord
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
    "MAX_EXACT_PLAYERS",
    "METHOD_RECORDS",
    "METHODS",
    "MethodChoice",
    "MethodCost",
    "MethodRecord",
    "REGRESSION_METHODS",
    "RunningCovariance",
    "ShapleyResult",
    "TOPK_METHODS",
    "TopKResult",
    "all_coalitions",
    "check_budget_fits",
    "check_method",
    "check_sampler",
    "choose_method",
    "default_budget",
    "exact_shapley",
    "feature_error_quantiles",
    "make_sampler",
    "largest_budget_in_memory",
    "minimum_budget",
    "overall_error_quantile",
    "owen_shapley",
    "owen_values",
    "stratified_shapley",
    "permutation_shapley",
    "regression_shapley",
    "resolve_method",
    "resolve_sampler",
    "shapley_values",
    "topk_shapley",
]
