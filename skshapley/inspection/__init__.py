"""Global feature importance of fitted models by Shapley values of their score."""

from skshapley.inspection._importance import shapley_importance

__all__ = ["shapley_importance"]
