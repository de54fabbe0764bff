"""Shapley attribution of a fitted model's performance to its features."""

from skshapley.attribution._lsspa import AttributionResult, lsspa
from skshapley.permutations import PermutohedronNormal

__all__ = ["AttributionResult", "PermutohedronNormal", "lsspa"]
