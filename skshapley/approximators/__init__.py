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
from skshapley.approximators._hierarchical import HIERARCHICAL, owen_values
from skshapley.approximators._owen import owen_shapley
from skshapley.approximators._owen_enumeration import MAX_EXACT_EVALUATIONS, exact_evaluations
from skshapley.approximators._pac import bonferroni_z, order_players, pac_rule_holds
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
    small_sample_inflation,
)
from skshapley.approximators._sequential import SequentialEstimate, run_sequential
from skshapley.approximators._stratified import stratified_shapley
from skshapley.approximators._topk import (
    CMCS_WARM_UP_ROUNDS,
    TOPK_METHODS,
    TopKResult,
    cmcs_warm_up_evaluations,
    topk_shapley,
)

__all__ = [
    "CMCS_WARM_UP_ROUNDS",
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
    "bonferroni_z",
    "check_budget_fits",
    "check_method",
    "check_sampler",
    "choose_method",
    "cmcs_warm_up_evaluations",
    "default_budget",
    "exact_shapley",
    "feature_error_quantiles",
    "make_sampler",
    "largest_budget_in_memory",
    "minimum_budget",
    "order_players",
    "overall_error_quantile",
    "owen_shapley",
    "owen_values",
    "pac_rule_holds",
    "stratified_shapley",
    "permutation_shapley",
    "regression_shapley",
    "resolve_method",
    "resolve_sampler",
    "shapley_values",
    "topk_shapley",
    "HIERARCHICAL",
    "MAX_EXACT_EVALUATIONS",
    "exact_evaluations",
    "small_sample_inflation",
    "SequentialEstimate",
    "run_sequential",
]
