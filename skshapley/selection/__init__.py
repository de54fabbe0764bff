"""Feature selection by Shapley values (DESIGN.md §4.5, ALGORITHMS.md §4.7)."""

from skshapley.selection._topk import (
    IMPORTANCES,
    SELECTOR_METHODS,
    TopKShapleySelector,
    default_max_evals,
)

__all__ = ["IMPORTANCES", "SELECTOR_METHODS", "TopKShapleySelector", "default_max_evals"]
