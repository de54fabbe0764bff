"""Mergeable moment sketches of columns and their density solvers (ALGORITHMS.md §7)."""

from skshapley.sketch._moments import MomentSketch
from skshapley.sketch._solvers import exact_quantiles, maxent, solve_quantiles

__all__ = ["MomentSketch", "exact_quantiles", "maxent", "solve_quantiles"]
