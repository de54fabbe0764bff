"""Kernels of the CDF sketch's weighted pass: a numpy reference and a numba build.

``summarise_columns`` reads a batch ``X`` of shape ``(n, d)`` once, row by row (no
transposition), and counts each column's weight at and between its splitters; the
numpy function is the reference (and the ``backend="numpy"`` path), and the parity
tests compare it with the numba build ``_summarise_loops``. Both are serial and
deterministic. The unit-weight pass of large batches has its own kernels
(``_count_kernels``), and the thinning and bulk merging of polylines theirs
(``_merge_kernels``).

These kernels stay beside the sketch rather than in ``skshapley.backends``: nothing
else uses them, and a kernel's helpers belong in its module (numba's cache misses
edits to callees in other files).
"""

from __future__ import annotations

import numpy as np

from skshapley.backends.sketch import SIGN, mapped_keys, numba_build, order_keys
from skshapley.sketch._merge_kernels import simplify_kernel

__all__ = ["MAX_STEPS", "N_SCAN", "SCAN_FIELDS", "get_kernels", "search_table",
           "summarise_columns"]

# summarise_columns' per-column fields
SCAN_FIELDS = ("n_nan", "n_rows", "weight", "min", "max", "w_at_min", "w_at_max",
               "has_inf", "integral")
N_SCAN = len(SCAN_FIELDS)


# ------------------------------------------------------------------ numpy twins
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
        mapped = mapped_keys(keys, band[j, 0], band[j, 1])
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


# ------------------------------------------------------------------ numba builds
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
                bits = ~bits if (bits >> np.uint64(63)) == np.uint64(1) else bits | SIGN
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


_NUMBA = {}


def get_kernels(backend_name):
    """``(summarise, simplify)`` for a backend name: numpy twins for ``"numpy"``, the
    numba builds otherwise (these kernels run on the CPU for every backend)."""
    if backend_name == "numpy":
        return summarise_columns, simplify_kernel("numpy")
    if "summarise" not in _NUMBA:
        _NUMBA["summarise"] = numba_build(_summarise_loops)
    return _NUMBA["summarise"], simplify_kernel(backend_name)
