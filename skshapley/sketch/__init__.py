"""Mergeable moment sketches of columns and their density solvers (after Mitchell, Frank &
Holmes 2021 and Gan et al. 2018)."""

from skshapley.sketch._moments import MomentSketch
from skshapley.sketch._solvers import exact_quantiles, maxent, solve_quantiles

__all__ = ["MomentSketch", "exact_quantiles", "maxent", "solve_quantiles"]
