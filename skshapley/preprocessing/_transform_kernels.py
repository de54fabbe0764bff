"""The quantile transform's kernel: sklearn's ``QuantileTransformer._transform_col`` for
every column in one pass, with a lookup table on the values' order keys.

sklearn maps a value ``v`` of a column through ``np.interp(v, quantiles, references)``,
and where the column has repeated quantiles (point masses, integer columns) through the
mean of that and the interpolation from the right, ``-np.interp(-v, -quantiles[::-1],
-references[::-1])``; then the lowest and highest quantile go to 0 and 1 (uniform
output). The kernel does the same arithmetic, operation for operation (both
interpolations, numpy's fallbacks where a slope overflows), so its results are numpy's
bits: for each column it keeps the distinct quantiles ``u``, the output at each (the
mean of the references of its first and last copy), and for each gap between two the
slope and end references of numpy's segment.

A value's distinct quantile is found from a table of cells on the order keys of the
values (:mod:`skshapley.backends.sketch._cells`, as the CDF sketch's counting pass: monotone, a
cell is a fraction of a binade, offset columns are zoomed into), then a short scan: no
binary search over 1000 quantiles, and no equal-width table, which failed on heavy tails
(a 4096-bucket table put most of lognormal(0, 2) in its first bucket: 0.7x sklearn's
speed).

The kernels are serial ``nogil`` functions of a range of parts that
:func:`skshapley.backends._numba_runtime.run_parts` spreads over threads; every part
writes only its own rows or columns, so the bits do not depend on threads.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends.sketch import (
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

__all__ = ["interp_table", "transform_columns"]

BLOCK = 2048
BUFFER = 1 << 18  # values of a row-major X copied to a column-major buffer at a time
PART = 1 << 15  # values per part at least, so that threads can share the work
MAX_PARTS = 64


def interp_table(quantiles, references, threshold=None, n_cells=None):
    """The kernel's table of the columns of ``quantiles`` ``(m, d)`` (non-decreasing,
    finite, ``m >= 2``) against ``references`` ``(m,)``: a dict of arrays, one row per
    column.

    ``threshold`` ``(d,)`` selects sklearn's bound rule for normal output: a value ``v``
    with ``v - threshold < quantiles[0]`` maps to ``references[0]``, else one with ``v +
    threshold > quantiles[-1]`` to ``references[-1]``; without it (uniform output) the
    rule is ``v == quantiles[0]``, else ``v == quantiles[-1]``. ``n_cells`` (a power of
    two) defaults to :func:`~skshapley.backends.sketch.cells_for` ``d`` columns.
    """
    m, d = quantiles.shape
    if n_cells is None:
        n_cells = cells_for(d)
    rows = []
    for j in range(d):
        xp = quantiles[:, j]
        starts = np.flatnonzero(np.concatenate([[True], xp[1:] != xp[:-1]]))
        lasts = np.append(starts[1:], m) - 1
        rows.append((xp[starts], starts, lasts))
    width = max(row[0].size for row in rows)
    u = np.full((d, width + 1), np.inf)
    at = np.zeros((d, width))
    low_ref = np.zeros((d, width))
    high_ref = np.zeros((d, width))
    slope = np.zeros((d, width))
    size = np.zeros(d, dtype=np.int64)
    tied = np.zeros(d, dtype=np.bool_)
    band_low = np.zeros(d, dtype=np.uint64)
    band_width = np.zeros(d, dtype=np.uint64)
    origin = np.zeros(d, dtype=np.uint64)
    shift = np.zeros(d, dtype=np.int64)
    first = np.zeros((d, n_cells + 1), dtype=np.uint16 if width < 65535 else np.int32)
    for j, (values, starts, lasts) in enumerate(rows):
        r = values.size
        size[j] = r
        tied[j] = r < m
        u[j, :r] = values
        fp = references
        # the value of a run of equal quantiles: numpy's forward interpolation gives the
        # reference of its last copy, the backward one that of its first
        at[j, :r] = 0.5 * (fp[lasts] + fp[starts]) if tied[j] else fp[lasts]
        inner = lasts[:-1]
        low_ref[j, :r - 1] = fp[inner]
        high_ref[j, :r - 1] = fp[inner + 1]
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            # numpy's slope of the segment from the last copy of each distinct quantile
            slope[j, :r - 1] = (fp[inner + 1] - fp[inner]) / (values[1:] - values[:-1])
        band_low[j], band_width[j], origin[j], shift[j], cells = cell_map(values, n_cells)
        # first[g]: the number of distinct quantiles in the cells before g
        first[j, :n_cells] = first_of_cells(cells, n_cells)
        first[j, n_cells] = r
    return {"u": u, "at": at, "low_ref": low_ref, "high_ref": high_ref, "slope": slope,
            "size": size, "tied": tied, "band_low": band_low, "band_width": band_width,
            "origin": origin, "shift": shift, "first": first,
            "ends": np.array([references[0], references[-1]], dtype=np.float64),
            "threshold": (np.full(d, -1.0) if threshold is None else
                          np.asarray(threshold, dtype=np.float64).reshape(d))}


def _transform_values(values, bits, out, cells, j, u, at, low_ref, high_ref, slope, size,
                      tied, band_low, band_width, origin, shift, first, ends, threshold):
    """Transform a contiguous block of column ``j`` into ``out`` (same length; may be
    ``values`` itself)."""
    n_cells = first.shape[1] - 1
    blow, bwidth, org = band_low[j], band_width[j], origin[j]
    sh = np.uint64(shift[j])
    for i in range(values.shape[0]):
        cells[i] = key_cell(values[i], bits[i], blow, bwidth, org, sh, n_cells)
    uj = u[j]
    fj = first[j]
    r = size[j]
    both = tied[j]
    left = ends[0]
    right = ends[1]
    u0 = uj[0]
    u_last = uj[r - 1]
    cut = threshold[j]
    normal = cut >= 0.0
    for i in range(values.shape[0]):
        v = values[i]
        g = cells[i]
        if g == n_cells:
            out[i] = v  # NaN stays NaN
            continue
        lo = np.int64(fj[g])
        hi = np.int64(fj[g + 1])
        if hi - lo > 4:
            while lo < hi:
                mid = (lo + hi) >> 1
                if uj[mid] <= v:
                    lo = mid + 1
                else:
                    hi = mid
        else:
            while lo < hi and uj[lo] <= v:
                lo += 1
        k = lo - 1  # the last distinct quantile <= v (-1: below them all)
        # sklearn's bound fix-ups: the lowest quantile maps to the lowest reference and
        # the highest to the highest (the lowest wins where both hold); for normal
        # output, values within its threshold of them
        if normal:
            to_low = v - cut < u0
            to_high = v + cut > u_last
        else:
            to_low = v == u0
            to_high = v == u_last
        if to_low:
            res = left
        elif to_high:
            res = right
        elif k < 0:
            res = left
        elif k >= r - 1:
            res = right
        elif v == uj[k]:
            res = at[j, k]
        else:
            s = slope[j, k]
            a = s * (v - uj[k]) + low_ref[j, k]
            b = s * (v - uj[k + 1]) + high_ref[j, k]
            # np.interp from the left, with its fallbacks where a slope overflows
            forward = a
            if forward != forward:
                forward = b
                if forward != forward and low_ref[j, k] == high_ref[j, k]:
                    forward = low_ref[j, k]
            if both:
                # np.interp of -v on the reversed, negated table: -b first, then -a
                backward = -b
                if backward != backward:
                    backward = -a
                    if backward != backward and low_ref[j, k] == high_ref[j, k]:
                        backward = -high_ref[j, k]
                res = 0.5 * (forward - backward)
            else:
                res = forward
        out[i] = res


def _transform_columns(Xt, Xt_bits, outT, u, at, low_ref, high_ref, slope, size, tied,
                       band_low, band_width, origin, shift, first, ends, threshold,
                       n_chunks, part_lo, part_hi):
    """Transform ``Xt`` ``(d, n)`` (columns contiguous) into ``outT`` in ``d * n_chunks``
    parts (column ``part // n_chunks``, row chunk ``part % n_chunks``), this call doing
    ``part_lo .. part_hi - 1``."""
    cells = np.empty(BLOCK, dtype=np.int32)
    for part in range(part_lo, part_hi):
        j, row0, row1 = column_part(part, n_chunks, Xt.shape[1])
        for start in range(row0, row1, BLOCK):
            stop = min(row1, start + BLOCK)
            _transform_values(Xt[j, start:stop], Xt_bits[j, start:stop],
                              outT[j, start:stop], cells, j, u, at, low_ref, high_ref,
                              slope, size, tied, band_low, band_width, origin, shift, first,
                              ends, threshold)


def _transform_rows(X, X_bits, out, u, at, low_ref, high_ref, slope, size, tied,
                    band_low, band_width, origin, shift, first, ends, threshold, n_chunks,
                    chunk_lo, chunk_hi):
    """Transform a row-major ``X`` ``(n, d)`` into ``out`` in ``n_chunks`` chunks of rows
    (this call doing ``chunk_lo .. chunk_hi - 1``): rows are copied into a column-major
    buffer ``BUFFER`` values at a time, transformed column by column (one column's table
    stays in cache) and copied back."""
    n, d = X.shape
    span = max(BLOCK, BUFFER // d)
    # rows a little longer than the span: writes a power of two apart share a cache set
    block = np.empty((d, span + 8))
    block_bits = block.view(np.uint64)
    result = np.empty((d, span + 8))
    cells = np.empty(BLOCK, dtype=np.int32)
    for chunk in range(chunk_lo, chunk_hi):
        row0, row1 = chunk_rows(chunk, n_chunks, n)
        for start in range(row0, row1, span):
            m = load_rows(X, start, min(row1, start + span), block)
            for j in range(d):
                for sub in range(0, m, BLOCK):
                    top = min(m, sub + BLOCK)
                    _transform_values(block[j, sub:top], block_bits[j, sub:top],
                                      result[j, sub:top], cells, j, u, at, low_ref,
                                      high_ref, slope, size, tied, band_low, band_width,
                                      origin, shift, first, ends, threshold)
            target = out[start:start + m]
            for i in range(m):
                for j in range(d):
                    target[i, j] = result[j, i]


_BUILDS = {}


def _kernels():
    if not _BUILDS:
        namespace = dict(_transform_values.__globals__)
        # key_cell inlined: a call in the cell loop keeps it from vectorising;
        # load_rows not (numba's inlining of it cost 5-10%)
        namespace.update(key_cell=numba_build(key_cell, inline="always"),
                         load_rows=numba_build(load_rows), chunk_rows=numba_build(chunk_rows),
                         column_part=numba_build(column_part))
        namespace["_transform_values"] = numba_build(_transform_values, namespace)
        _BUILDS["rows"], _BUILDS["columns"] = (
            numba_build(f, namespace) for f in (_transform_rows, _transform_columns))
    return _BUILDS["rows"], _BUILDS["columns"]


def transform_columns(X, table, run=None):
    """Transform every column of ``X`` ``(n, d)`` in place through ``table``
    (:func:`interp_table` of its quantiles) and return it. ``run(call, n_parts, work)``
    runs ``call(lo, hi)`` over the parts (default: all in this thread)."""
    n, d = X.shape
    if n == 0 or d == 0:
        return X
    run = run_serial if run is None else run
    rows_kernel, columns_kernel = _kernels()
    args = tuple(table[name] for name in ("u", "at", "low_ref", "high_ref", "slope",
                                          "size", "tied", "band_low", "band_width",
                                          "origin", "shift", "first", "ends",
                                          "threshold"))
    n_chunks = max(1, min(MAX_PARTS, n * d // PART))
    work = n * d // 4  # run_parts' units of about 30 ns; a value costs about 8 ns
    if X.flags.f_contiguous or d == 1:
        data = X.T if X.flags.f_contiguous else X.reshape(1, n)
        n_chunks = max(1, -(-n_chunks // d))
        kernel, n_calls = columns_kernel, d * n_chunks
    elif X.flags.c_contiguous:
        data = X
        kernel, n_calls = rows_kernel, n_chunks
    else:
        raise ValueError("transform_columns needs a C- or F-contiguous X.")
    bits = data.view(np.uint64)

    def call(lo, hi):
        kernel(data, bits, data, *args, n_chunks, lo, hi)
    run(call, n_calls, work)
    return X
