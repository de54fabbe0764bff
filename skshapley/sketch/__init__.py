"""Mergeable sketches of columns: moment sketches and their density solvers (after
Mitchell, Frank & Holmes 2021 and Gan et al. 2018), and piecewise-linear CDF sketches."""

from skshapley.sketch._cdf import CDFSketch
from skshapley.sketch._moments import MomentSketch, update_together
from skshapley.sketch._solvers import exact_quantiles, maxent, scaled_moments, solve_quantiles

__all__ = ["CDFSketch", "MomentSketch", "exact_quantiles", "maxent", "scaled_moments",
           "solve_quantiles", "update_together"]
