"""Shapley attribution of a fitted model's performance to its features (DESIGN.md §4.7)."""

from skshapley.attribution._lsspa import AttributionResult, PermutohedronNormal, lsspa

__all__ = ["AttributionResult", "PermutohedronNormal", "lsspa"]
