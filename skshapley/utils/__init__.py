"""Small helpers shared by every layer: random generators, chunk sizes, checks, where
arrays live, groups and hierarchies of columns, and scikit-learn's parameter
constraints (``validate_params``, ``Interval``, ...) with :class:`NumberInterval`,
an Interval that refuses bools."""

from skshapley.utils._device import namespace_of, resolve_device, to_host
from skshapley.utils._groups import check_groups, group_matrix
from skshapley.utils._hierarchy import Hierarchy, check_hierarchy, is_hierarchy
from skshapley.utils._sklearn_compat import (
    HasMethods,
    Hidden,
    Interval,
    NumberInterval,
    StrOptions,
    check_feature_names_in,
    check_method_params,
    fit_context,
    threadpool_limits,
    validate_data,
    validate_params,
)
from skshapley.utils._state import restored_on_failure
from skshapley.utils._validation import (
    RANDOM_STATE,
    as_generator,
    as_pandas_frame,
    check_budget,
    chunk_rows,
    finite_policy,
    get_working_memory,
    missing_value_support,
    spawn_seed,
    takes_missing_values,
    validate_numeric_data,
)

__all__ = [
    "RANDOM_STATE",
    "HasMethods",
    "Hidden",
    "Hierarchy",
    "Interval",
    "NumberInterval",
    "StrOptions",
    "as_generator",
    "as_pandas_frame",
    "check_budget",
    "check_feature_names_in",
    "check_groups",
    "check_hierarchy",
    "chunk_rows",
    "finite_policy",
    "fit_context",
    "get_working_memory",
    "group_matrix",
    "is_hierarchy",
    "missing_value_support",
    "namespace_of",
    "resolve_device",
    "restored_on_failure",
    "spawn_seed",
    "takes_missing_values",
    "threadpool_limits",
    "to_host",
    "validate_numeric_data",
    "validate_params",
    "check_method_params",
    "validate_data",
]
