"""Mergeable sketches of columns: moment sketches and their density solvers (after
Mitchell, Frank & Holmes 2021 and Gan et al. 2018), and piecewise-linear CDF sketches."""

from skshapley.sketch._cdf import CDFSketch
from skshapley.sketch._cells import (
    cell_map,
    cells_for,
    chunk_rows,
    column_part,
    first_of_cells,
    key_cell,
    load_rows,
    numba_build,
    run_serial,
)
from skshapley.sketch._moments import MomentSketch, update_together
from skshapley.sketch._solvers import exact_quantiles, maxent, scaled_moments, solve_quantiles

__all__ = ["CDFSketch", "MomentSketch", "exact_quantiles", "maxent", "solve_quantiles",
    "cell_map",
    "cells_for",
    "chunk_rows",
    "column_part",
    "first_of_cells",
    "key_cell",
    "load_rows",
    "numba_build",
    "run_serial",
    "update_together",
    "scaled_moments",
]
