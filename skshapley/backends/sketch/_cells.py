"""Order keys and cell tables: what the CDF sketch's counting kernels
(``_count_kernels``) and the quantile transform's kernel
(``skshapley.preprocessing._transform_kernels``) share to find a value among a column's
sorted values without a binary search, and the loop that copies rows of a row-major
batch into a column-major buffer.

A value's *cell* is its order-preserving 64-bit key (:func:`order_keys`) with the keys
of the values nearest to 0 squeezed onto one (:func:`mapped_keys`), less the column's
origin, shifted right and clamped to ``[0, n_cells - 1]`` (:func:`cell_map` plans it,
:func:`key_cell` applies it inside the kernels): monotone in the value, so a table of
the first sorted value of each cell (:func:`first_of_cells`) leaves a short scan.

``key_cell``, ``chunk_rows``, ``column_part`` and ``load_rows`` are plain Python that the
kernel modules compile with numba (:func:`numba_build`) and call from their loops.
Numba's cache does not see edits to them from the kernels' own files: after editing
this module, clear the ``__pycache__`` of ``skshapley/sketch`` and
``skshapley/preprocessing`` (the ``*.nbi`` and ``*.nbc`` files).
"""

from __future__ import annotations

import numpy as np

__all__ = ["SIGN", "cell_map", "cells_for", "chunk_rows", "column_part", "first_of_cells",
           "key_cell", "load_rows", "mapped_keys", "numba_build", "order_keys",
           "run_serial"]

SIGN = np.uint64(1 << 63)
# Cells of a column's table: up to 65,536 (a 128 KiB table of uint16: 512 splitters
# rarely share a cell even in a narrow mode away from 0, where 8,192 crowded 3 of the
# benchmark's 18 columns; per 1e6 values the transform took 4.3 ms on normal and 7.5 ms
# on a 5-mode mixture, against 12.8 and 20.7 ms with 4,096), fewer for many columns:
# all tables of one pass within TABLE_ENTRIES entries.
MAX_CELLS = 1 << 16
MIN_CELLS = 1 << 12
TABLE_ENTRIES = 1 << 22


def order_keys(values):
    """Unsigned 64-bit keys in the order of the float64 ``values`` (negative floats have
    every bit flipped, the others their sign bit set; -0.0 sorts just below 0.0)."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    negative = (bits >> np.uint64(63)) == 1
    return np.where(negative, ~bits, bits | np.uint64(1 << 63))


def mapped_keys(keys, band_low, band_width):
    """Order keys with the band ``(band_low, band_low + band_width]`` squeezed out."""
    out = keys.copy()
    inside = (keys > band_low) & (keys <= band_low + band_width)
    out[inside] = band_low
    above = keys > band_low + band_width
    out[above] = keys[above] - band_width
    return out


def cells_for(d):
    """The cells of each table of a pass over ``d`` columns (a power of two)."""
    n_cells = MAX_CELLS
    while n_cells > MIN_CELLS and n_cells * d > TABLE_ENTRIES:
        n_cells //= 2
    return n_cells


def cell_map(values, n_cells):
    """The cell mapping of one column's increasing ``values``: ``(band_low, band_width,
    origin, shift, cells)``, ``cells`` the values' cells.

    The keys of ``(-tiny, tiny]`` are squeezed onto one (``tiny`` half the smallest
    non-zero ``|value|``; both zeros fall in it), and the shift makes the values' mapped
    keys span at most ``n_cells`` cells: offset columns (1e6 + noise) are zoomed into,
    and elsewhere a cell is a small fraction of a binade.
    """
    nonzero = np.abs(values[values != 0])
    tiny = max(float(nonzero.min()) / 2 if nonzero.size else 0.0, 5e-324)
    low, high = order_keys(np.array([-tiny, tiny]))
    band_low, band_width = low, high - low
    mapped = mapped_keys(order_keys(values), band_low, band_width)
    origin = mapped[0]
    span = int(mapped[-1] - mapped[0])
    shift = 0
    while (span >> shift) >= n_cells:
        shift += 1
    cells = ((mapped - origin) >> np.uint64(shift)).astype(np.int64)
    return band_low, band_width, origin, shift, cells


def first_of_cells(cells, n_cells):
    """``first[g]`` for ``g < n_cells``: the first value whose cell is ``>= g`` (the
    number of values in the cells before ``g``), given the values' non-decreasing
    ``cells``: value ``k`` is the first for the cells after that of value ``k - 1`` up to
    its own."""
    lengths = np.diff(np.concatenate([[-1], cells, [n_cells - 1]]))
    return np.repeat(np.arange(cells.size + 1), lengths)


def key_cell(v, bits, band_low, band_width, origin, shift, n_cells):
    """A value's cell (see :func:`cell_map`), from its bits; NaN gets ``n_cells``.

    Free of data-dependent branches (selects), so that the loops calling it vectorise.
    """
    key = bits ^ (np.uint64(np.int64(bits) >> np.int64(63)) | SIGN)
    top = band_low + band_width
    key = key if key <= band_low else (band_low if key <= top else key - band_width)
    rel = (key - origin) >> shift if key >= origin else np.uint64(0)
    last = np.uint64(n_cells - 1)
    rel = rel if rel < last else last
    return np.int32(n_cells) if v != v else np.int32(rel)


def chunk_rows(chunk, n_chunks, n):
    """Rows ``row0 .. row1 - 1`` of chunk ``chunk`` of ``n`` rows cut in ``n_chunks``
    (the parts that threads take side by side)."""
    return n * chunk // n_chunks, n * (chunk + 1) // n_chunks


def column_part(part, n_chunks, n):
    """``(j, row0, row1)``: the column and rows of part ``part`` of a column-major pass
    over ``n`` rows in ``n_chunks`` chunks per column (column ``part // n_chunks``, its
    chunk ``part % n_chunks``)."""
    chunk = part % n_chunks
    return part // n_chunks, n * chunk // n_chunks, n * (chunk + 1) // n_chunks


def load_rows(X, start, stop, block):
    """Copy rows ``start .. stop - 1`` of ``X`` ``(n, d)`` into the first ``stop - start``
    columns of ``block`` ``(d, >= stop - start)``, reading each row once; returns
    ``stop - start``."""
    rows = X[start:stop]
    m = rows.shape[0]
    d = rows.shape[1]
    for i in range(m):
        for j in range(d):
            block[j, i] = rows[i, j]
    return m


def run_serial(call, n_parts, work):
    """Run ``call(0, n_parts)`` in this thread (the kernels' default runner; see
    :func:`~skshapley.backends._numba_runtime.run_parts` for threads)."""
    call(0, n_parts)


def numba_build(function, namespace=None, **options):
    """The numba build (``cache``, ``nogil``; more ``options`` for ``njit``) of
    ``function``, its global names looked up in ``namespace`` (default: its module's),
    where the kernel modules rebind the helpers it calls to their builds. numba is
    imported on the first build only."""
    import types

    from numba import njit

    if namespace is not None:
        function = types.FunctionType(function.__code__, namespace, function.__name__)
    return njit(cache=True, nogil=True, **options)(function)
