"""Kernels of the piecewise-linear CDF sketch: a numpy reference and a numba build of each.

``summarise_columns`` reads a batch ``X`` of shape ``(n, d)`` once, row by row (no
transposition), and ``simplify_polyline`` thins one column's CDF polyline. The
numpy functions are the references (and the ``backend="numpy"`` path); the numba
builds are compiled from the same Python source where that source is plain loops, and
the parity tests compare the two. All of them are serial and deterministic.

Two numba kernels serve the speed of large fits and of merges: ``count_columns`` counts
a unit-weight batch at its splitters through a cell table (its numpy twin is
``summarise_columns`` with unit weights; the counts are integers, so threads running its
parts side by side change no bit), and ``combine_thin`` sums and thins the polylines of
every column in one call (its references are ``_cdf._combine`` and ``_cdf._thin``).

These kernels stay beside the sketch rather than in ``skshapley.backends``: nothing
else uses them, and a kernel's helpers belong in its module (numba's cache misses
edits to callees in other files).
"""

from __future__ import annotations

import numpy as np

__all__ = ["SCAN_FIELDS", "combine_thin", "count_cells_for", "count_columns", "count_plan",
           "count_tables", "get_kernels", "order_keys", "search_table", "simplify_polyline",
           "summarise_columns"]

# summarise_columns' per-column fields
SCAN_FIELDS = ("n_nan", "n_rows", "weight", "min", "max", "w_at_min", "w_at_max",
               "has_inf", "integral")
N_SCAN = len(SCAN_FIELDS)


# ------------------------------------------------------------------ numpy twins
def order_keys(values):
    """Unsigned 64-bit keys in the order of the float64 ``values`` (negative floats have
    every bit flipped, the others their sign bit set; -0.0 sorts just below 0.0)."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    negative = (bits >> np.uint64(63)) == 1
    return np.where(negative, ~bits, bits | np.uint64(1 << 63))


def summarise_columns(X, X_bits, w, splitters, n_splitters, band, key_origin, key_shift,
                      steps, table, stats, below, equal, n_equal):
    """One pass over a batch: per column, the summary fields ``SCAN_FIELDS`` and the weight
    strictly between consecutive splitters and at each splitter.

    ``X`` is ``(n, d)`` float64 (any layout) and ``w`` ``(n,)``. A value is *kept* when it
    is finite and its weight is > 0. ``stats[j]`` receives the NaN count, the rows kept,
    their weight, min, max, the weights at min and max, whether any value is infinite
    (whatever its weight) and whether every kept value is an integer (1.0 / 0.0).

    ``splitters`` is ``(d, r)``: row ``j`` holds ``n_splitters[j]`` increasing values. For a
    kept ``x`` let ``i`` be the first splitter ``>= x``: ``equal[j, i]`` (and the row count
    ``n_equal[j, i]``) receives it when ``x`` equals that splitter, else ``below[j, i]``
    (``i = n_splitters[j]``: above every splitter). ``below`` is ``(d, r + 1)``, ``equal``
    and ``n_equal`` ``(d, r)``.

    ``X_bits`` (``X`` viewed as uint64) and the fields of :func:`search_table` (``band``
    to ``table``) only speed up the search in the numba build (see
    ``_summarise_loops``); this reference ignores them. ``splitters`` must be padded
    with at least ``MAX_STEPS`` columns of +inf beyond the longest row.
    """
    d = X.shape[1]
    below[...] = 0.0
    equal[...] = 0.0
    n_equal[...] = 0
    for j in range(d):
        col = X[:, j]
        nan = np.isnan(col)
        inf = np.isinf(col)
        keep = ~nan & ~inf & (w > 0)
        v, wv = col[keep], w[keep]
        row = stats[j]
        row[:] = 0.0
        row[0] = float(nan.sum())
        row[1] = float(v.size)
        row[7] = float(inf.any())
        if v.size == 0:
            row[3], row[4], row[8] = np.inf, -np.inf, 1.0
            continue
        row[3], row[4] = v.min(), v.max()
        row[5] = wv[v == row[3]].sum()
        row[6] = wv[v == row[4]].sum()
        row[8] = float(np.all(v == np.floor(v)))
        s = splitters[j, :n_splitters[j]]
        i = np.searchsorted(s, v, side="left")
        hit = np.zeros(v.size, dtype=bool)
        inside = i < s.size
        hit[inside] = s[i[inside]] == v[inside]
        below[j, :s.size + 1] = np.bincount(i[~hit], weights=wv[~hit], minlength=s.size + 1)
        equal[j, :s.size] = np.bincount(i[hit], weights=wv[hit], minlength=s.size)
        n_equal[j, :s.size] = np.bincount(i[hit], minlength=s.size)
        # the weight from the counts, added one by one in a fixed order (as the numba
        # build; numpy's pairwise sum would round differently)
        total = 0.0
        for part in (below[j, :s.size + 1], equal[j, :s.size]):
            for value in part.tolist():
                total += value
        row[2] = total
    return stats


# Values closer to 0 than 2^-BAND_EXPONENT times the largest magnitude share one cell
# range of the search table (see search_table).
BAND_EXPONENT = 40
N_CELLS = 1 << 16
MAX_STEPS = 4


def _mapped_keys(keys, band_low, band_width):
    """Order keys with the band ``(band_low, band_low + band_width]`` squeezed out."""
    out = keys.copy()
    inside = (keys > band_low) & (keys <= band_low + band_width)
    out[inside] = band_low
    above = keys > band_low + band_width
    out[above] = keys[above] - band_width
    return out


def search_table(splitters, n_splitters, n_cells=N_CELLS):
    """The numba build's search accelerator, per column: ``band`` (low key, width),
    ``origin``, ``shift``, ``steps`` and ``table``, with ``table[j, g]`` = the first
    splitter whose cell is ``>= g``.

    A value's cell is ``(m(key) - origin) >> shift`` clamped to ``[0, n_cells - 1]``,
    with the order-preserving keys of :func:`order_keys` and ``m`` squeezing out the
    keys of the values nearer to 0 than ``2^-BAND_EXPONENT`` times the column's largest
    magnitude (about 2,000 binades of key space that hold almost nothing, and would
    otherwise leave half a binade per cell). The shift makes the splitters' mapped keys
    span at most ``n_cells`` cells: offset columns (1e6 + noise) are zoomed into, and
    elsewhere a cell is about 1/500 of a binade. Cells are monotone in the value, so the
    first splitter ``>= x`` lies in ``[table[g], table[g + 1]]``; ``steps`` is the most
    splitters in a cell, capped at ``MAX_STEPS`` (beyond it the kernel searches by halves).
    """
    d = splitters.shape[0]
    band = np.zeros((d, 2), dtype=np.uint64)
    origin = np.zeros(d, dtype=np.uint64)
    shift = np.zeros(d, dtype=np.int64)
    steps = np.zeros(d, dtype=np.int64)
    table = np.zeros((d, n_cells + 1), dtype=np.int64)
    for j in range(d):
        r = int(n_splitters[j])
        table[j, n_cells] = r
        if r == 0:
            continue
        values = splitters[j, :r]
        keys = order_keys(values)
        top = max(abs(values[0]), abs(values[-1]))
        tiny = np.ldexp(top, -BAND_EXPONENT)
        if top > 0 and tiny > 0:
            low, high = order_keys(np.array([-tiny, tiny]))
            band[j] = low, high - low
        mapped = _mapped_keys(keys, band[j, 0], band[j, 1])
        origin[j] = mapped[0]
        span = int(mapped[-1] - mapped[0])
        s = 0
        while (span >> s) >= n_cells:
            s += 1
        shift[j] = s
        cells = ((mapped - mapped[0]) >> np.uint64(s)).astype(np.int64)
        per_cell = np.bincount(cells, minlength=n_cells)
        table[j, 1:n_cells] = np.cumsum(per_cell)[:n_cells - 1]
        steps[j] = min(int(per_cell.max()), MAX_STEPS)
    return band, origin, shift, steps, table


def _chord_deviation(x, c, p, q):
    """Largest distance of the original vertices strictly between ``p`` and ``q`` from the
    chord ``p -> q``, in the rank (``c``) direction.

    A vertex on a vertical run at the chord's left end is compared with the chord's
    value there (``c[p]``), one at its right end with ``c[q]``; on a vertical chord every
    vertex lies on it (distance 0).
    """
    xp, xq, cp, cq = x[p], x[q], c[p], c[q]
    worst = 0.0
    if xq == xp:
        return worst
    # halved differences: no overflow for values near +-1.8e308
    span = xq / 2 - xp / 2
    for k in range(p + 1, q):
        xk = x[k]
        if xk <= xp:
            dev = c[k] - cp
        elif xk >= xq:
            dev = cq - c[k]
        else:
            dev = abs(c[k] - (cp + (cq - cp) * ((xk / 2 - xp / 2) / span)))
        if dev > worst:
            worst = dev
    return worst


def _sift_down(cost, heap, where, pos, size):
    item = heap[pos]
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        other = child + 1
        if other < size and (cost[heap[other]] < cost[heap[child]] or (
                cost[heap[other]] == cost[heap[child]] and heap[other] < heap[child])):
            child = other
        a, b = heap[child], item
        if cost[a] < cost[b] or (cost[a] == cost[b] and a < b):
            heap[pos] = a
            where[a] = pos
            pos = child
        else:
            break
    heap[pos] = item
    where[item] = pos


def _sift_up(cost, heap, where, pos):
    item = heap[pos]
    while pos > 0:
        parent = (pos - 1) // 2
        a = heap[parent]
        if cost[item] < cost[a] or (cost[item] == cost[a] and item < a):
            heap[pos] = a
            where[a] = pos
            pos = parent
        else:
            break
    heap[pos] = item
    where[item] = pos


def _simplify_loops(x, c, n_keep, keep):
    """Greedy bottom-up thinning (plain loops: the numba build compiles this source).

    Repeatedly drops the interior vertex whose removal moves the polyline least, measured
    against the *original* vertices (ties: lower index first), until ``n_keep`` remain.
    The end points always stay. Writes ``keep`` (bool) and returns the largest cost paid.
    """
    n = x.shape[0]
    for i in range(n):
        keep[i] = True
    if n <= n_keep or n <= 2:
        return 0.0
    prev = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    for i in range(n):
        prev[i] = i - 1
        nxt[i] = i + 1
    cost = np.empty(n)
    m = n - 2
    heap = np.empty(m, dtype=np.int64)
    where = np.empty(n, dtype=np.int64)
    for i in range(1, n - 1):
        cost[i] = _chord_deviation(x, c, i - 1, i + 1)
        heap[i - 1] = i
        where[i] = i - 1
    for pos in range((m - 2) // 2, -1, -1):
        _sift_down(cost, heap, where, pos, m)
    size = m
    alive = n
    worst = 0.0
    while alive > n_keep and size > 0:
        i = heap[0]
        size -= 1
        if size > 0:
            heap[0] = heap[size]
            where[heap[0]] = 0
            _sift_down(cost, heap, where, 0, size)
        where[i] = -1
        keep[i] = False
        alive -= 1
        if cost[i] > worst:
            worst = cost[i]
        p, q = prev[i], nxt[i]
        nxt[p] = q
        prev[q] = p
        for j in (p, q):
            if j <= 0 or j >= n - 1:
                continue
            old = cost[j]
            cost[j] = _chord_deviation(x, c, prev[j], nxt[j])
            pos = where[j]
            if cost[j] < old or (cost[j] == old):
                _sift_up(cost, heap, where, pos)
            else:
                _sift_down(cost, heap, where, pos, size)
    return worst


def simplify_polyline(x, c, n_keep, keep):
    """Keep ``n_keep`` vertices of the polyline ``(x, c)`` (see ``_simplify_loops``)."""
    return _simplify_loops(x, c, n_keep, keep)


# ------------------------------------------------------------------ numba builds
_SIGN = np.uint64(1 << 63)
_BLOCK = 4096


def _summarise_loops(X, X_bits, w, splitters, n_splitters, band, key_origin, key_shift,
                     steps, table, stats, below, equal, n_equal):
    """``summarise_columns`` in one pass over the rows (numba build).

    Rows are taken in blocks of ``_BLOCK`` and each block column by column, so that the
    per-column running values stay in registers while the block stays in cache. The
    first splitter ``>= x`` is looked up in the cell table of ``search_table``: a
    bit-twiddled key, one table read, then ``steps`` selects (a search by halves where a
    cell holds more splitters). A plain binary search over 512 splitters took ten times
    as long as sorting the column with numpy's SIMD sort. The minimum can only fall
    below or on the first splitter and the maximum on or above the last, so only those
    (rare) values are compared with them; the weight is summed afterwards from the
    splitter counts, as the numpy twin does.
    """
    n, d = X.shape
    n_cells = table.shape[1] - 1
    below[...] = 0.0
    equal[...] = 0.0
    n_equal[...] = 0
    for j in range(d):
        stats[j, 0] = 0.0
        stats[j, 1] = 0.0
        stats[j, 2] = 0.0
        stats[j, 3] = np.inf
        stats[j, 4] = -np.inf
        stats[j, 5] = 0.0
        stats[j, 6] = 0.0
        stats[j, 7] = 0.0
        stats[j, 8] = 1.0
    cell_of = np.empty(_BLOCK, dtype=np.int64)
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        for j in range(d):
            n_nan = 0
            n_rows = 0
            low = stats[j, 3]
            high = stats[j, 4]
            w_low = stats[j, 5]
            w_high = stats[j, 6]
            has_inf = stats[j, 7] > 0
            integral = stats[j, 8] > 0
            band_low = band[j, 0]
            band_top = band[j, 0] + band[j, 1]
            band_width = band[j, 1]
            origin = key_origin[j]
            shift = np.uint64(key_shift[j])
            n_steps = steps[j]
            r = n_splitters[j]
            split = splitters[j]
            cells = table[j]
            under = below[j]
            at = equal[j]
            n_at = n_equal[j]
            # pass 1 over the block: checks and each value's cell, free of data-dependent
            # branches in the key arithmetic (selects), -1 for a value not kept
            for i in range(start, stop):
                v = X[i, j]
                bits = X_bits[i, j]
                bits = ~bits if (bits >> np.uint64(63)) == np.uint64(1) else bits | _SIGN
                bits = bits if bits <= band_low else (
                    band_low if bits <= band_top else bits - band_width)
                rel = (bits - origin) >> shift if bits >= origin else np.uint64(0)
                cell = n_cells - 1 if rel >= np.uint64(n_cells) else np.int64(rel)
                if v != v:
                    n_nan += 1
                    cell = -1
                elif v == np.inf or v == -np.inf:
                    has_inf = True
                    cell = -1
                elif not w[i] > 0:
                    cell = -1
                cell_of[i - start] = cell
            # pass 2: the search and the counts
            for i in range(start, stop):
                cell = cell_of[i - start]
                if cell < 0:
                    continue
                v = X[i, j]
                wi = w[i]
                n_rows += 1
                if integral and v != np.floor(v):
                    integral = False
                lo = cells[cell]
                hi = cells[cell + 1]
                if hi - lo <= n_steps:
                    # a fixed number of selects, no data-dependent branch: the splitters
                    # are padded with +inf, and those of later cells are > v
                    for _ in range(n_steps):
                        lo += split[lo] < v
                else:
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if split[mid] < v:
                            lo = mid + 1
                        else:
                            hi = mid
                if lo < r and split[lo] == v:
                    at[lo] += wi
                    n_at[lo] += 1
                else:
                    under[lo] += wi
                    # the minimum is a value below the first splitter, else that
                    # splitter (and the maximum likewise): the others need no comparison
                    if lo == 0:
                        if v < low:
                            low = v
                            w_low = wi
                        elif v == low:
                            w_low += wi
                    if lo == r:
                        if v > high:
                            high = v
                            w_high = wi
                        elif v == high:
                            w_high += wi
            stats[j, 0] += n_nan
            stats[j, 1] += n_rows
            stats[j, 3] = low
            stats[j, 4] = high
            stats[j, 5] = w_low
            stats[j, 6] = w_high
            stats[j, 7] = 1.0 if has_inf else 0.0
            stats[j, 8] = 1.0 if integral else 0.0
    for j in range(d):
        r = n_splitters[j]
        if r > 0 and equal[j, 0] > 0 and not splitters[j, 0] > stats[j, 3]:
            stats[j, 3] = splitters[j, 0]
            stats[j, 5] = equal[j, 0]
        if r > 0 and equal[j, r - 1] > 0 and not splitters[j, r - 1] < stats[j, 4]:
            stats[j, 4] = splitters[j, r - 1]
            stats[j, 6] = equal[j, r - 1]
        # the weight, summed from the counts in a fixed order (as the numpy twin)
        total = 0.0
        for k in range(n_splitters[j] + 1):
            total += below[j, k]
        for k in range(n_splitters[j]):
            total += equal[j, k]
        stats[j, 2] = total
    return stats


# ------------------------------------------------------------ unit-weight counting
# The unit-weight pass (``fit`` without sample weights) looks a value's splitter up in a
# cell table of at most one splitter per cell (``count_plan`` thins the splitters so), so
# each value costs one table read, one splitter read, two comparisons and one increment,
# without data-dependent branches; the cells are computed first for a block of values,
# in a loop that vectorises. Measured on one 1e6-value column, one thread: about 2 ms
# (np.sort of it: 4.6 ms; the search of ``_summarise_loops``: 5-10 ms). 65,536 cells
# (a 128 KiB table of uint16) leave 512 splitters rarely more than one to a cell even in
# a narrow mode away from 0 (with 8,192, 3 of the benchmark's 18 columns crowded it).
N_COUNT_CELLS = 1 << 16
# fewer cells for many columns: all tables of one pass within COUNT_TABLE_ENTRIES
MIN_COUNT_CELLS = 1 << 12
COUNT_TABLE_ENTRIES = 1 << 22
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


def count_cells_for(d):
    """The cells of each table of a counting pass over ``d`` columns (a power of two)."""
    n_cells = N_COUNT_CELLS
    while n_cells > MIN_COUNT_CELLS and n_cells * d > COUNT_TABLE_ENTRIES:
        n_cells //= 2
    return n_cells


def count_plan(values, multiplicity, n_cells=N_COUNT_CELLS):
    """The cell mapping of one column's increasing ``values`` (sample quantiles; each
    drawn ``multiplicity`` times): ``(keep, cells, band_low, band_width, origin,
    shift)``, with ``cells`` the values' cells, or ``None`` when the column should be
    sorted instead.

    A value's cell is its order key (:func:`order_keys`) with the keys of
    ``(-tiny, tiny]`` squeezed onto one (``tiny`` half the smallest non-zero ``|value|``;
    both zeros fall in it), less ``origin``, shifted right by ``shift`` and clamped to
    ``[0, n_cells - 1]``: monotone in the value, so the first splitter ``>= x`` is the one
    in ``x``'s cell if ``x`` does not exceed it, else the next. ``keep`` keeps one value
    per cell, the most drawn (a point mass), the lowest among equals; the plan is refused
    when two values drawn more than once share a cell or more than ``MAX_DROPPED_SHARE``
    of the values would be dropped.
    """
    r = values.shape[0]
    nonzero = np.abs(values[values != 0])
    tiny = max(float(nonzero.min()) / 2 if nonzero.size else 0.0, 5e-324)
    low, high = order_keys(np.array([-tiny, tiny]))
    band_low, band_width = low, high - low
    mapped = _mapped_keys(order_keys(values), band_low, band_width)
    origin = mapped[0]
    span = int(mapped[-1] - mapped[0])
    shift = 0
    while (span >> shift) >= n_cells:
        shift += 1
    cells = ((mapped - origin) >> np.uint64(shift)).astype(np.int64)
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


def count_tables(splitters, n_splitters, cells_of, n_cells=N_COUNT_CELLS):
    """``first[j, g]``: the first splitter of row ``j`` whose cell is ``>= g`` (``cells_of``
    holds each splitter's cell), and ``n_splitters[j] + 1`` at ``g = n_cells`` (the cell of
    NaN: a +inf pad, so NaN lands in a slot of its own)."""
    d = splitters.shape[0]
    small = int(np.max(n_splitters, initial=0)) + 1 < np.iinfo(np.uint16).max
    first = np.zeros((d, n_cells + 1), dtype=np.uint16 if small else np.int32)
    for j in range(d):
        r = int(n_splitters[j])
        cells = cells_of[j, :r]
        if r and np.all(cells[1:] > cells[:-1]):
            # one splitter per cell: splitter k is the first for the cells after that of
            # splitter k - 1 up to its own
            lengths = np.diff(np.concatenate([[-1], cells, [n_cells - 1]]))
            first[j, :n_cells] = np.repeat(np.arange(r + 1), lengths)
        else:
            per_cell = np.bincount(cells, minlength=n_cells)
            first[j, 1:n_cells] = np.cumsum(per_cell)[:n_cells - 1]
        first[j, n_cells] = r + 1
    return first


def _count_cell(v, bits, band_low, band_width, origin, shift, n_cells):
    """A value's cell (see :func:`count_plan`); NaN gets ``n_cells``."""
    key = bits ^ (np.uint64(np.int64(bits) >> np.int64(63)) | _SIGN)
    top = band_low + band_width
    key = key if key <= band_low else (band_low if key <= top else key - band_width)
    rel = (key - origin) >> shift if key >= origin else np.uint64(0)
    last = np.uint64(n_cells - 1)
    rel = rel if rel < last else last
    return np.int32(n_cells) if v != v else np.int32(rel)


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
        cells[i] = _count_cell(v, bits[i], blow, bwidth, org, sh, n_cells)
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
    d, n = Xt.shape
    cells = np.empty(COUNT_BLOCK, dtype=np.int32)
    for part in range(part_lo, part_hi):
        j = part // n_chunks
        chunk = part % n_chunks
        row1 = n * (chunk + 1) // n_chunks
        for start in range(n * chunk // n_chunks, row1, COUNT_BLOCK):
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
        row1 = n * (chunk + 1) // n_chunks
        for start in range(n * chunk // n_chunks, row1, span):
            rows = X[start:min(row1, start + span)]
            m = rows.shape[0]
            for i in range(m):
                for j in range(d):
                    block[j, i] = rows[i, j]
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
    if run is None:
        def run(call, n_parts, work):
            call(0, n_parts)
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
        Xt = X.T if X.flags.f_contiguous else X.reshape(1, n)
        bits = Xt.view(np.uint64)

        def call(lo, hi):
            columns_kernel(Xt, bits, splitters, n_splitters, band_low, band_width, origin,
                           shift, first, n_chunks, track, counts, extremes, flags, spill,
                           lo, hi)
        run(call, parts, work)
        order = np.arange(parts).reshape(d, n_chunks)  # part = j * n_chunks + chunk
    else:
        X = np.ascontiguousarray(X)
        bits = X.view(np.uint64)

        def call(lo, hi):
            rows_kernel(X, bits, splitters, n_splitters, band_low, band_width, origin,
                        shift, first, n_chunks, track, counts, extremes, flags, spill,
                        lo, hi)
        run(call, n_chunks, work)
        order = np.arange(parts).reshape(n_chunks, d).T  # part = chunk * d + j
    spills = [None] * d
    for j in np.flatnonzero(track):
        if np.all(flags[order[j], 2] <= SPILL_ROOM):
            spills[j] = np.concatenate([spill[p, :flags[p, 2]] for p in order[j]])
    counts = counts[order].sum(axis=1)  # (d, width): integers, exact in any order
    extremes = extremes[order]
    flags = flags[order].sum(axis=1)
    low = extremes[:, :, 0].min(axis=1)
    high = extremes[:, :, 2].max(axis=1)
    n_low = np.where(extremes[:, :, 0] == low[:, None], extremes[:, :, 1], 0).sum(axis=1)
    n_high = np.where(extremes[:, :, 2] == high[:, None], extremes[:, :, 3], 0).sum(axis=1)
    below = counts[:, 0:2 * r + 1:2].astype(np.float64)
    equal = counts[:, 1:2 * r:2].astype(np.float64)
    # past a shorter row's splitters: its NaN and +inf slots, zero as in the numpy twin
    below[np.arange(r + 1) > n_splitters[:, None]] = 0.0
    equal[np.arange(r) >= n_splitters[:, None]] = 0.0
    stats = np.zeros((d, N_SCAN))
    stats[:, 0] = flags[:, 0]
    stats[:, 1] = n - flags[:, 0]
    stats[:, 7] = (low == -np.inf) | (high == np.inf)
    stats[:, 8] = flags[:, 1] == 0
    stats[:, 3], stats[:, 4], stats[:, 5], stats[:, 6] = low, high, n_low, n_high
    for j in range(d):
        k = int(n_splitters[j])
        # the minimum is below the first splitter or that splitter (the maximum likewise)
        if k > 0 and equal[j, 0] > 0 and not splitters[j, 0] > stats[j, 3]:
            stats[j, 3], stats[j, 5] = splitters[j, 0], equal[j, 0]
        if k > 0 and equal[j, k - 1] > 0 and not splitters[j, k - 1] < stats[j, 4]:
            stats[j, 4], stats[j, 6] = splitters[j, k - 1], equal[j, k - 1]
    stats[:, 2] = stats[:, 1]
    return stats, below, equal, spills


# ------------------------------------------------------------ polyline sums in bulk
# numba twins of _cdf's _combine, _dedupe and _thin, for every column in one call (merge
# and update spent 150 us per column in numpy calls on arrays of 60 to 1,000 vertices).
# The arithmetic is numpy's, operation for operation, so the vertices are the same bits;
# the thinning error is summed in order rather than pairwise (equal to round-off).


def _fraction_at(a, b, v):
    """_cdf._fraction for one value."""
    span = b - a
    t = (v - a) / (span if span > 0 else 1.0)
    if not (np.isfinite(span) and np.isfinite(v - a)):
        half = b / 2 - a / 2
        t = (v / 2 - a / 2) / (half if half > 0 else 1.0)
    if not span > 0:
        t = 0.0
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    return t


def _evaluate_at(x, c, m, q, right):
    """_cdf._evaluate of the polyline ``x[:m], c[:m]`` at one value: the weight below
    ``q`` (``right`` false) or at or below it."""
    lo = 0
    hi = m
    while lo < hi:  # searchsorted, side "left" or "right"
        mid = (lo + hi) >> 1
        if x[mid] < q or (right and x[mid] == q):
            lo = mid + 1
        else:
            hi = mid
    if lo >= m:
        return c[m - 1]
    if lo == 0:
        return 0.0
    return c[lo - 1] + (c[lo] - c[lo - 1]) * _fraction_at(x[lo - 1], x[lo], q)


def _dedupe_into(x, c, m):
    """_cdf._dedupe in place on ``x[:m], c[:m]``; returns the new length."""
    if m < 2:
        return m
    k = 1
    for i in range(1, m):
        if not (x[i] == x[k - 1] and c[i] == c[k - 1]):
            x[k] = x[i]
            c[k] = c[i]
            k += 1
    if k < 3:
        return k
    # inner vertices of vertical runs, flagged on the whole array first
    inner = np.zeros(k, dtype=np.bool_)
    for i in range(1, k - 1):
        inner[i] = x[i] == x[i - 1] and x[i] == x[i + 1]
    m = 0
    for i in range(k):
        if not inner[i]:
            x[m] = x[i]
            c[m] = c[i]
            m += 1
    return m


def _combine_thin_loops(xa, ca, na, xb, cb, nb, n_keep, out_x, out_c, out_n, out_err):
    """For each row ``j``: the sum of the polylines ``(xa[j, :na[j]], ca[j, :na[j]])`` and
    ``(xb[j, :nb[j]], cb[j, :nb[j]])`` (``_cdf._combine``) thinned to ``n_keep``
    vertices (``_cdf._thin``) into ``out_x[j], out_c[j]``, with its length ``out_n[j]``
    and thinning error ``out_err[j]``."""
    d = xa.shape[0]
    for j in range(d):
        ma = na[j]
        mb = nb[j]
        room = 2 * (ma + mb) + 2
        x = np.empty(room)
        c = np.empty(room)
        m = 0
        if ma == 0 or mb == 0:
            src_x = xb[j] if ma == 0 else xa[j]
            src_c = cb[j] if ma == 0 else ca[j]
            m = mb if ma == 0 else ma
            for i in range(m):
                x[i] = src_x[i]
                c[i] = src_c[i]
        else:
            ia = 0
            ib = 0
            have = False
            last = 0.0
            running = -np.inf
            while ia < ma or ib < mb:
                # the next distinct value of the union (np.union1d)
                if ib >= mb or (ia < ma and xa[j, ia] <= xb[j, ib]):
                    v = xa[j, ia]
                    ia += 1
                else:
                    v = xb[j, ib]
                    ib += 1
                if have and v == last:
                    continue
                have = True
                last = v
                left = _evaluate_at(xa[j], ca[j], ma, v, False) + \
                    _evaluate_at(xb[j], cb[j], mb, v, False)
                right = _evaluate_at(xa[j], ca[j], ma, v, True) + \
                    _evaluate_at(xb[j], cb[j], mb, v, True)
                # _from_points, with the running maximum of np.maximum.accumulate
                if right > left:
                    x[m] = v
                    running = max(running, left)
                    c[m] = running
                    m += 1
                x[m] = v
                running = max(running, right)
                c[m] = running
                m += 1
        m = _dedupe_into(x, c, m)
        error = 0.0
        if m > n_keep:
            keep = np.empty(m, dtype=np.bool_)
            _simplify_loops(x[:m], c[:m], n_keep, keep)
            fx = np.empty(n_keep)
            fc = np.empty(n_keep)
            k = 0
            for i in range(m):
                if keep[i]:
                    fx[k] = x[i]
                    fc[k] = c[i]
                    k += 1
            total = c[m - 1]
            acc = 0.0
            for i in range(m):
                if keep[i]:
                    continue
                low = _evaluate_at(fx, fc, k, x[i], False)
                high = _evaluate_at(fx, fc, k, x[i], True)
                dev = max(0.0, max(low - c[i], c[i] - high))
                before = c[i - 1] if i > 0 else c[0]
                after = c[i + 1] if i < m - 1 else c[m - 1]
                acc += dev * (0.5 * (after - before))
            error = acc / total if total > 0 else 0.0
            for i in range(k):
                out_x[j, i] = fx[i]
                out_c[j, i] = fc[i]
            out_n[j] = k
        else:
            for i in range(m):
                out_x[j, i] = x[i]
                out_c[j, i] = c[i]
            out_n[j] = m
        out_err[j] = error


def combine_thin(pairs_a, pairs_b, n_keep):
    """``_cdf._thin(*_combine(a, b), n_keep)`` for lists of polylines ``a`` and ``b``
    (pairs of arrays), by the numba build in one call: returns a list of ``(x, c)`` and
    the thinning errors."""
    d = len(pairs_a)
    width_a = max([x.size for x, _ in pairs_a] + [1])
    width_b = max([x.size for x, _ in pairs_b] + [1])
    xa, ca = np.zeros((d, width_a)), np.zeros((d, width_a))
    xb, cb = np.zeros((d, width_b)), np.zeros((d, width_b))
    na = np.zeros(d, dtype=np.int64)
    nb = np.zeros(d, dtype=np.int64)
    for j in range(d):
        for (x, c), X, C, n in ((pairs_a[j], xa, ca, na), (pairs_b[j], xb, cb, nb)):
            X[j, :x.size] = x
            C[j, :x.size] = c
            n[j] = x.size
    width = max(n_keep, int((na + nb).max(initial=0)) * 2 + 2)
    out_x = np.empty((d, width))
    out_c = np.empty((d, width))
    out_n = np.zeros(d, dtype=np.int64)
    out_err = np.zeros(d)
    get_combine_kernel()(xa, ca, na, xb, cb, nb, n_keep, out_x, out_c, out_n, out_err)
    return [(out_x[j, :out_n[j]].copy(), out_c[j, :out_n[j]].copy()) for j in range(d)], \
        out_err


_NUMBA = {}


def get_combine_kernel():
    """The numba build of ``_combine_thin_loops`` (with the thinning's build)."""
    if "combine" not in _NUMBA:
        import types

        from numba import njit

        options = {"cache": True, "nogil": True}
        _, simplify = get_kernels("numba")
        namespace = dict(_combine_thin_loops.__globals__)
        namespace.update(_fraction_at=njit(**options)(_fraction_at))
        evaluate_ns = dict(namespace)
        namespace["_evaluate_at"] = njit(**options)(types.FunctionType(
            _evaluate_at.__code__, evaluate_ns, "_evaluate_at"))
        namespace.update(_dedupe_into=njit(**options)(_dedupe_into),
                         _simplify_loops=simplify)
        _NUMBA["combine"] = njit(**options)(types.FunctionType(
            _combine_thin_loops.__code__, namespace, "_combine_thin_loops"))
    return _NUMBA["combine"]


def get_count_kernels():
    """``(rows, columns)``: the numba builds of the unit-weight counting kernels (serial
    ``nogil`` functions of a range of parts; threads run ranges side by side)."""
    if "count" not in _NUMBA:
        import types

        from numba import njit

        options = {"cache": True, "nogil": True}
        # inlined: a call in the cell loop keeps it from vectorising (1 ms -> 0.15 ms
        # per 1e6 values)
        namespace = dict(_count_rows.__globals__)
        helpers = dict(_count_cell=njit(inline="always", **options)(_count_cell),
                       _count_block=njit(**options)(_count_block))
        values_namespace = dict(namespace)
        values_namespace.update(helpers)
        helpers["_count_values"] = njit(**options)(types.FunctionType(
            _count_values.__code__, values_namespace, "_count_values"))
        namespace.update(helpers)
        _NUMBA["count"] = tuple(
            njit(**options)(types.FunctionType(f.__code__, namespace, f.__name__))
            for f in (_count_rows, _count_columns))
    return _NUMBA["count"]


def get_kernels(backend_name):
    """``(summarise, simplify)`` for a backend name: numpy twins for ``"numpy"``, the
    numba builds otherwise (these kernels run on the CPU for every backend)."""
    if backend_name == "numpy":
        return summarise_columns, simplify_polyline
    if "summarise" not in _NUMBA:
        from numba import njit

        options = {"cache": True, "nogil": True}
        chord = njit(**options)(_chord_deviation)
        down = njit(**options)(_sift_down)
        up = njit(**options)(_sift_up)
        # the loops call their helpers by global name: rebind them to the builds
        namespace = dict(_simplify_loops.__globals__)
        namespace.update(_chord_deviation=chord, _sift_down=down, _sift_up=up)
        import types

        loops = types.FunctionType(_simplify_loops.__code__, namespace, "_simplify_loops")
        _NUMBA["summarise"] = njit(**options)(_summarise_loops)
        _NUMBA["simplify"] = njit(**options)(loops)
    return _NUMBA["summarise"], _NUMBA["simplify"]
