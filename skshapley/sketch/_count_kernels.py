"""Kernels of the CDF sketch's unit-weight pass (an update without sample weights,
above ``_cdf_fit.COUNT_ROWS`` rows): every column of a batch counted at its splitters in
one pass, without sorting.

A value's splitter is looked up in a cell table of at most one splitter per cell
(:func:`count_plan` thins the splitters so), so each value costs one table read, one
splitter read, two comparisons and one increment, without data-dependent branches; the
cells are computed first for a block of values, in a loop that vectorises. Measured on
one 1e6-value column, one thread: about 2 ms (np.sort of it: 4.6 ms; the search of
``_cdf_kernels._summarise_loops``: 5-10 ms). The numpy twin is
``_cdf_kernels.summarise_columns`` with unit weights; the counts are integers, so
threads running the parts side by side change no bit.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends.sketch import (
    MAX_CELLS,
    cell_map,
    chunk_rows,
    column_part,
    first_of_cells,
    key_cell,
    load_rows,
    numba_build,
    run_serial,
)
from skshapley.sketch._cdf_kernels import N_SCAN
from skshapley.sketch._fit_kernels import integer_values

__all__ = ["count_columns", "count_integers", "count_plan", "count_tables",
           "get_count_kernels", "int_window"]

COUNT_BLOCK = 2048
# Columns whose splitters crowd one cell, or lose more than this share of their
# splitters to the one-per-cell rule, are summarised from their sorted values instead.
MAX_DROPPED_SHARE = 0.125
# Values equal to no splitter copied out per part for the columns that may keep an exact
# table (few distinct values in the sample): the table is then read off the counts and
# these, without sorting the column.
SPILL_ROOM = 4096
# The counting pass is cut into at most COUNT_CHUNKS chunks of rows of at least
# COUNT_PART values, which threads take side by side.
COUNT_CHUNKS = 16
COUNT_PART = 1 << 16
# Values of a row-major batch copied to a column-major buffer at a time (2 MiB).
COUNT_BUFFER = 1 << 18


def count_plan(values, multiplicity, n_cells=MAX_CELLS):
    """The cell mapping of one column's increasing ``values`` (sample quantiles; each
    drawn ``multiplicity`` times): ``(keep, cells, band_low, band_width, origin,
    shift)``, with ``cells`` the values' cells, or ``None`` when the column should be
    sorted instead.

    A value's cell (:func:`~skshapley.backends.sketch.cell_map`) is monotone in the value,
    so the first splitter ``>= x`` is the one in ``x``'s cell if ``x`` does not exceed
    it, else the next. ``keep`` keeps one value
    per cell, the most drawn (a point mass), the lowest among equals; the plan is refused
    when two values drawn more than once share a cell or more than ``MAX_DROPPED_SHARE``
    of the values would be dropped.
    """
    r = values.shape[0]
    band_low, band_width, origin, shift, cells = cell_map(values, n_cells)
    keep = np.ones(r, dtype=bool)
    crowded = np.flatnonzero(cells[1:] == cells[:-1])
    if crowded.size:
        if crowded.size > MAX_DROPPED_SHARE * r:
            return None
        starts = np.flatnonzero(np.concatenate([[True], cells[1:] != cells[:-1]]))
        stops = np.append(starts[1:], r)
        for a, b in zip(starts[stops - starts > 1], stops[stops - starts > 1],
                        strict=True):
            drawn = multiplicity[a:b]
            if np.count_nonzero(drawn > 1) > 1:
                return None
            keep[a:b] = False
            keep[a + int(np.argmax(drawn))] = True
    return keep, cells, band_low, band_width, origin, shift


def count_tables(splitters, n_splitters, cells_of, n_cells=MAX_CELLS):
    """``first[j, g]``: the first splitter of row ``j`` whose cell is ``>= g`` (``cells_of``
    holds each splitter's cell), and ``n_splitters[j] + 1`` at ``g = n_cells`` (the cell of
    NaN: a +inf pad, so NaN lands in a slot of its own)."""
    d = splitters.shape[0]
    small = int(np.max(n_splitters, initial=0)) + 1 < np.iinfo(np.uint16).max
    first = np.zeros((d, n_cells + 1), dtype=np.uint16 if small else np.int32)
    for j in range(d):
        r = int(n_splitters[j])
        cells = cells_of[j, :r]
        if r and np.all(cells[1:] > cells[:-1]):  # one splitter per cell
            first[j, :n_cells] = first_of_cells(cells, n_cells)
        else:
            per_cell = np.bincount(cells, minlength=n_cells)
            first[j, 1:n_cells] = np.cumsum(per_cell)[:n_cells - 1]
        first[j, n_cells] = r + 1
    return first


def _count_block(values, cells, split, first, r, counts, extremes, spill, spilled,
                 track):
    """Count one column's block: ``counts[2k]`` the values strictly between splitters
    ``k - 1`` and ``k``, ``counts[2k + 1]`` those equal to splitter ``k``, ``counts[2r]``
    those above every splitter, ``counts[2r + 2]`` NaN (``2r + 1``: +inf, rejected later).
    ``extremes`` holds (min, count at it) of the values below the first splitter and
    (max, count) of those above the last. Where ``track`` (a column that may keep an
    exact table), the values equal to no splitter are copied to ``spill`` while it has
    room; ``spilled[0]`` counts them all."""
    s0 = split[0]
    s_last = split[r - 1]
    low = extremes[0]
    n_low = extremes[1]
    high = extremes[2]
    n_high = extremes[3]
    room = spill.shape[0]
    for i in range(values.shape[0]):
        v = values[i]
        k = first[cells[i]]
        s = split[k]
        counts[2 * k + np.int64(v >= s) + np.int64(v > s)] += 1
        if v < s0:
            if v < low:
                low = v
                n_low = 1.0
            elif v == low:
                n_low += 1.0
        if v > s_last:
            if v > high:
                high = v
                n_high = 1.0
            elif v == high:
                n_high += 1.0
        if track and not v == s and v == v:
            if spilled[0] < room:
                spill[spilled[0]] = v
            spilled[0] += 1
    extremes[0] = low
    extremes[1] = n_low
    extremes[2] = high
    extremes[3] = n_high


def _count_values(values, bits, cells, j, splitters, n_splitters, band_low, band_width,
                  origin, shift, first, track, counts, extremes, flags, spill):
    """Count a contiguous block of column ``j`` into one part's ``counts``,
    ``extremes``, ``flags`` (NaN count, count of kept non-integers, count of spilled
    values) and ``spill``: the cells first, in a loop that vectorises (its indices come
    from ``range`` alone, so numba adds no negative-index wraparound), then
    :func:`_count_block`."""
    n_cells = first.shape[1] - 1
    blow, bwidth, org = band_low[j], band_width[j], origin[j]
    sh = np.uint64(shift[j])
    n_nan = 0
    n_fraction = 0
    for i in range(values.shape[0]):
        v = values[i]
        cells[i] = key_cell(v, bits[i], blow, bwidth, org, sh, n_cells)
        n_nan += np.int64(v != v)
        n_fraction += np.int64(v != np.floor(v)) & np.int64(v == v)
    flags[0] += n_nan
    flags[1] += n_fraction
    _count_block(values, cells[:values.shape[0]], splitters[j], first[j], n_splitters[j],
                 counts, extremes, spill, flags[2:], track[j])


def _count_columns(Xt, Xt_bits, splitters, n_splitters, band_low, band_width, origin,
                   shift, first, n_chunks, track, counts, extremes, flags, spill,
                   part_lo, part_hi):
    """Unit-weight counts of ``Xt`` ``(d, n)`` (columns contiguous) in ``d * n_chunks``
    parts (column ``part // n_chunks``, row chunk ``part % n_chunks``), of which this
    call does ``part_lo .. part_hi - 1``, each writing its own ``counts[part]``,
    ``extremes[part]``, ``flags[part]`` and ``spill[part]`` (see
    :func:`_count_values`; ``spill`` for column ``j`` where ``track[j]``)."""
    cells = np.empty(COUNT_BLOCK, dtype=np.int32)
    for part in range(part_lo, part_hi):
        j, row0, row1 = column_part(part, n_chunks, Xt.shape[1])
        for start in range(row0, row1, COUNT_BLOCK):
            stop = min(row1, start + COUNT_BLOCK)
            _count_values(Xt[j, start:stop], Xt_bits[j, start:stop], cells, j, splitters,
                          n_splitters, band_low, band_width, origin, shift, first, track,
                          counts[part], extremes[part], flags[part], spill[part])


def _count_rows(X, X_bits, splitters, n_splitters, band_low, band_width, origin, shift,
                first, n_chunks, track, counts, extremes, flags, spill, chunk_lo,
                chunk_hi):
    """As ``_count_columns`` for a row-major ``X`` ``(n, d)``: ``n_chunks`` chunks of
    rows (this call does ``chunk_lo .. chunk_hi - 1``), chunk ``c`` writing
    ``counts[c * d + j]`` and so on.

    Rows are copied into a column-major buffer of ``COUNT_BUFFER`` values at a time
    (reading each row once), then counted column by column as ``_count_columns`` does,
    so that one column's tables stay in cache (measured on 1e6 x 20: 60 ms, against
    115 ms counting 2,048-row blocks column by column and 220 ms counting in place).
    """
    n, d = X.shape
    span = max(COUNT_BLOCK, COUNT_BUFFER // d)
    # rows a little longer than the span: writes a power of two apart fall in one set
    block = np.empty((d, span + 8))
    block_bits = block.view(np.uint64)
    cells = np.empty(COUNT_BLOCK, dtype=np.int32)
    for chunk in range(chunk_lo, chunk_hi):
        row0, row1 = chunk_rows(chunk, n_chunks, n)
        for start in range(row0, row1, span):
            m = load_rows(X, start, min(row1, start + span), block)
            for j in range(d):
                part = chunk * d + j
                for sub in range(0, m, COUNT_BLOCK):
                    top = min(m, sub + COUNT_BLOCK)
                    _count_values(block[j, sub:top], block_bits[j, sub:top], cells, j,
                                  splitters, n_splitters, band_low, band_width, origin,
                                  shift, first, track, counts[part], extremes[part],
                                  flags[part], spill[part])


def count_columns(X, splitters, n_splitters, plans, first, track, kernels=None,
                  run=None):
    """Unit-weight summary of the columns of ``X`` ``(n, d)`` at their splitters, in the
    layout of :func:`summarise_columns` with unit weights: returns ``(stats, below,
    equal, spills)``, ``spills[j]`` the values of column ``j`` equal to no splitter (for
    the columns of ``track``; ``None`` for the others and where more than
    ``SPILL_ROOM`` per part were met).

    ``plans`` holds ``(band_low, band_width, origin, shift)`` arrays, ``first`` the table
    of :func:`count_tables`; ``splitters`` must be padded with exactly two +inf columns
    beyond the longest row. ``kernels`` is ``(rows, columns)`` (default: the numba
    builds); ``run(call, n_parts, work)`` runs ``call(lo, hi)`` over the parts (default:
    all in this thread; :func:`~skshapley.backends._numba_runtime.run_parts` spreads
    them over threads). The counts are integers, so the bits do not depend on how the
    parts are run. ``X`` is read in place when its columns or its rows are contiguous.
    """
    n, d = X.shape
    r = splitters.shape[1] - 2
    width = 2 * r + 4
    rows_kernel, columns_kernel = get_count_kernels() if kernels is None else kernels
    run = run_serial if run is None else run
    by_columns = X.flags.f_contiguous or d == 1
    # parts of about COUNT_PART values at most, so that threads can share the work
    n_chunks = max(1, min(COUNT_CHUNKS, n * d // COUNT_PART))
    if by_columns:
        n_chunks = max(1, -(-n_chunks // d))
    parts = d * n_chunks
    counts = np.zeros((parts, width), dtype=np.int64)
    extremes = np.empty((parts, 4))
    extremes[:, 0], extremes[:, 1], extremes[:, 2], extremes[:, 3] = np.inf, 0, -np.inf, 0
    flags = np.zeros((parts, 3), dtype=np.int64)
    track = np.asarray(track, dtype=np.bool_)
    spill = np.empty((parts, SPILL_ROOM if track.any() else 0))
    band_low, band_width, origin, shift = plans
    work = n * d // 15  # run_parts' units of about 30 ns; a value costs about 2 ns
    if by_columns:
        data = X.T if X.flags.f_contiguous else X.reshape(1, n)
        kernel, n_calls = columns_kernel, parts
        order = np.arange(parts).reshape(d, n_chunks)  # part = j * n_chunks + chunk
    else:
        data = np.ascontiguousarray(X)
        kernel, n_calls = rows_kernel, n_chunks
        order = np.arange(parts).reshape(n_chunks, d).T  # part = chunk * d + j
    bits = data.view(np.uint64)

    def call(lo, hi):
        kernel(data, bits, splitters, n_splitters, band_low, band_width, origin, shift,
               first, n_chunks, track, counts, extremes, flags, spill, lo, hi)
    run(call, n_calls, work)
    spills = [None] * d
    for j in np.flatnonzero(track):
        if np.all(flags[order[j], 2] <= SPILL_ROOM):
            spills[j] = np.concatenate([spill[p, :flags[p, 2]] for p in order[j]])
    # (d, width): integers, exact in any order. Summed through a view, not counts[order]
    # (whose copy of 320 parts x 1028 counts took 1 ms of a 100,000 x 20 batch's 11 ms)
    if by_columns:
        counts = counts.reshape(d, n_chunks, width).sum(axis=1)
        flags = flags.reshape(d, n_chunks, 3).sum(axis=1)
    else:
        counts = counts.reshape(n_chunks, d, width).sum(axis=0)
        flags = flags.reshape(n_chunks, d, 3).sum(axis=0)
    extremes = extremes[order]
    low = extremes[:, :, 0].min(axis=1)
    high = extremes[:, :, 2].max(axis=1)
    n_low = np.where(extremes[:, :, 0] == low[:, None], extremes[:, :, 1], 0).sum(axis=1)
    n_high = np.where(extremes[:, :, 2] == high[:, None], extremes[:, :, 3], 0).sum(axis=1)
    below = counts[:, 0:2 * r + 1:2].astype(np.float64)
    equal = counts[:, 1:2 * r:2].astype(np.float64)
    # past a shorter row's splitters: its NaN and +inf slots, zero as in the numpy twin
    below[np.arange(r + 1) > n_splitters[:, None]] = 0.0
    equal[np.arange(r) >= n_splitters[:, None]] = 0.0
    stats = _stats(n, flags[:, 0], flags[:, 1], (low, n_low), (high, n_high), splitters,
                   n_splitters, equal)
    return stats, below, equal, spills


def _stats(n, n_nan, n_fraction, low, high, splitters, n_splitters, equal):
    """The ``SCAN_FIELDS`` of columns of ``n`` rows counted at their splitters, from
    their NaN and non-integer counts, ``low`` (the smallest value below the first
    splitter, inf if none, and its count), ``high`` (likewise above the last) and the
    counts at the splitters."""
    d = n_nan.shape[0]
    (low, n_low), (high, n_high) = low, high
    stats = np.zeros((d, N_SCAN))
    stats[:, 0] = n_nan
    stats[:, 1] = n - n_nan
    stats[:, 7] = (low == -np.inf) | (high == np.inf)
    stats[:, 8] = n_fraction == 0
    stats[:, 3], stats[:, 4], stats[:, 5], stats[:, 6] = low, high, n_low, n_high
    for j in range(d):
        k = int(n_splitters[j])
        # the minimum is below the first splitter or that splitter (the maximum likewise)
        if k > 0 and equal[j, 0] > 0 and not splitters[j, 0] > stats[j, 3]:
            stats[j, 3], stats[j, 5] = splitters[j, 0], equal[j, 0]
        if k > 0 and equal[j, k - 1] > 0 and not splitters[j, k - 1] < stats[j, 4]:
            stats[j, 4], stats[j, 6] = splitters[j, k - 1], equal[j, k - 1]
    stats[:, 2] = stats[:, 1]
    return stats


# ------------------------------------------------------------ integer columns
# A column whose sample holds only integers close together (counts, codes) is first
# counted with a histogram of INT_SPAN integers around them (``integer_values``): one
# pass without a search (0.5 ms per 1e6 Poisson(3) values, against 2 ms for the pass
# above). The summary read off the histogram is the one count_columns gives; a column
# that holds any other value (a non-integer, one outside the histogram, an infinity or
# -0.0, whose sign the histogram would lose) is counted by count_columns instead.
INT_SPAN = 4096


def int_window(sample):
    """The first integer of the histogram of a column whose sorted finite ``sample``
    holds only integers less than ``INT_SPAN / 4`` apart (and below 2^52 in size), the
    sample centred in it; ``None`` for any other column."""
    probe = sample[::64]  # most continuous columns fail on a few values
    if sample.size == 0 or not (sample[-1] - sample[0] < INT_SPAN // 4
                                and max(-sample[0], sample[-1]) < 2.0 ** 52
                                and np.array_equal(probe, np.floor(probe))
                                and np.array_equal(sample, np.floor(sample))):
        return None
    return float(sample[0] - (INT_SPAN - 1 - (sample[-1] - sample[0])) // 2)


def count_integers(x, lo, splitters):
    """:func:`count_columns`' ``(stats, below, equal)`` of the contiguous column ``x``
    (each with one row) at its increasing ``splitters``, and its distinct values and
    their counts, from a histogram of the integers ``lo .. lo + INT_SPAN - 1``; ``None``
    when ``x`` holds any other value but NaN."""
    # the distinct-values pass's histogram (its blocked loop took 0.50 ms per 1e6
    # values, a one-pass loop of its own here 0.93 ms)
    found = integer_values(x, lo, INT_SPAN)
    if found is None:
        return None
    values, weights, n_nan, _ = found
    r = splitters.shape[0]
    k = np.searchsorted(splitters, values, side="left")
    hit = k < r
    hit[hit] = splitters[k[hit]] == values[hit]
    equal = np.bincount(k[hit], weights=weights[hit], minlength=r)
    below = np.bincount(k[~hit], weights=weights[~hit], minlength=r + 1)
    # the smallest value below the first splitter and the largest above the last
    first, last = np.flatnonzero(values < splitters[0]), np.flatnonzero(values > splitters[-1])
    low = (values[first[:1]], weights[first[:1]]) if first.size else \
        (np.array([np.inf]), np.zeros(1))
    high = (values[last[-1:]], weights[last[-1:]]) if last.size else \
        (np.array([-np.inf]), np.zeros(1))
    stats = _stats(x.shape[0], np.array([n_nan]), np.zeros(1), low, high, splitters[None, :],
                   np.array([r]), equal[None, :])
    return (stats, below[None, :], equal[None, :]), values, weights


_NUMBA = {}


def get_count_kernels():
    """``(rows, columns)``: the numba builds of the unit-weight counting kernels
    (serial ``nogil`` functions of a range of parts; threads run ranges side by
    side)."""
    if "count" not in _NUMBA:
        # key_cell inlined: a call in the cell loop keeps it from vectorising (1 ms ->
        # 0.15 ms per 1e6 values); load_rows not (numba's inlining of it cost 5-10%)
        namespace = dict(_count_rows.__globals__)
        namespace.update(key_cell=numba_build(key_cell, inline="always"),
                         load_rows=numba_build(load_rows), chunk_rows=numba_build(chunk_rows),
                         column_part=numba_build(column_part),
                         _count_block=numba_build(_count_block))
        namespace["_count_values"] = numba_build(_count_values, namespace)
        _NUMBA["count"] = tuple(numba_build(f, namespace) for f in (
            _count_rows, _count_columns))
    return _NUMBA["count"]
