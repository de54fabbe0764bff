"""The moment sketches' passes over the data and the quantile transform's column
interpolation and heavy-tail transform (``moment_chunk``, ``interp_columns``,
``arcsinh``). The CDF sketch's own kernels live beside it in ``skshapley/sketch/``
(``_count_kernels.py``, ``_merge_kernels.py``, ``_cdf_kernels.py``) and the quantile
transform's in ``skshapley/preprocessing/_transform_kernels.py``; both find a value's
cell among sorted keys and build their loops with the helpers of ``_cells.py`` here.

One module per backend (``_numpy``, the reference; ``_numba``; ``_numba_cuda``;
``_cupy``), each with every kernel of ``KERNELS`` under the same signature.
"""

from skshapley.backends.sketch._cells import (
    MAX_CELLS,
    SIGN,
    cell_map,
    cells_for,
    chunk_rows,
    column_part,
    first_of_cells,
    key_cell,
    load_rows,
    mapped_keys,
    numba_build,
    order_keys,
    run_serial,
)
from skshapley.backends.sketch._numpy import N_MOMENT_FIELDS, unit_exponent

KERNELS = ("moment_chunk", "interp_columns", "arcsinh")

__all__ = ["KERNELS", "MAX_CELLS", "N_MOMENT_FIELDS", "SIGN", "cell_map", "cells_for", "chunk_rows",
           "column_part", "first_of_cells", "key_cell", "load_rows", "mapped_keys",
           "numba_build", "order_keys", "run_serial", "unit_exponent"]
