"""Feature selection by Shapley values."""

from skshapley.selection._topk import (
    IMPORTANCES,
    SELECTOR_METHODS,
    TopKShapleySelector,
    default_max_evals,
)

__all__ = ["IMPORTANCES", "SELECTOR_METHODS", "TopKShapleySelector", "default_max_evals"]
