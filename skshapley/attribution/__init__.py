"""Shapley attribution of a fitted model's performance to its features."""

from skshapley.attribution._lsspa import AttributionResult, PermutohedronNormal, lsspa

__all__ = ["AttributionResult", "PermutohedronNormal", "lsspa"]
