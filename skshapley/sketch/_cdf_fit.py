"""A batch's summary for the CDF sketch: per column, exact counts at a few hundred
values, from which :class:`~skshapley.sketch.CDFSketch` builds the batch's polyline and
adds it to its state.

Four summaries, chosen by the batch's size and weights (:func:`summarise`): a small
batch is summarised whole (its sorted distinct values); a unit-weight one of up to
``COUNT_ROWS`` rows at ``N_SPLITTERS`` evenly spaced order statistics of each sorted
column; a larger unit-weight one at sample quantiles counted in one pass without
sorting (the kernels of ``_count_kernels``); a weighted one at sample quantiles counted
in one pass by the ``summarise_columns`` kernel of ``_cdf_kernels``. The exact tables
of a batch are read off the same counts where they can be.

In front of them, with a compiled backend, two column fast paths (kernels in
``_fit_kernels``; the numpy backend skips them and stays the reference):

- Few distinct values: a column with at most ``max(exact_threshold, N_SPLITTERS)``
  distinct values is counted exactly in one pass (a histogram of a window of integers,
  or a hash table that gives up as soon as one value too many turns up) and summarised
  by its exact staircase, as a small batch is. That pass replaces a sort or a sampled
  counting pass (Poisson(3), 1e6 values: 0.5 ms, against 0.9 ms for the counting
  pass's histogram and 0.9 ms for ``np.sort``).
- A point mass: in a batch of more than ``SPIKE_ROWS`` rows, when the values read before
  the hash table gave up hold one value for at least ``SPIKE_SHARE`` of them (the zeros
  of a zero-inflated column), the column's other values are copied out in one pass and
  summarised alone; the point mass goes back into their polyline as an exact jump, with
  the exact count of the values below it, so the polyline is the one the sketch would
  build with that value among its splitters. The counting pass costs as much per value
  at a point mass as elsewhere, so the copy pays where the mass is large; in smaller
  batches such a column is sorted (a sort of many equal values is cheap).

A row-major batch of many columns and rows (read row by row by the counting pass: a
column pass would stride) goes to the four summaries unchanged, as do the columns that
take neither path.
"""

from __future__ import annotations

import functools

import numpy as np

from skshapley.backends import get_backend, run_parts
from skshapley.backends.sketch import cells_for
from skshapley.sketch._base import INF_MESSAGE, exact_table
from skshapley.sketch._cdf_kernels import MAX_STEPS, N_SCAN, search_table
from skshapley.sketch._count_kernels import (
    MAX_DROPPED_SHARE,
    count_columns,
    count_integers,
    count_plan,
    count_tables,
    int_window,
)
from skshapley.sketch._fit_kernels import distinct_values, integer_values, split_spike
from skshapley.sketch._polyline import _dedupe, _from_counts, _staircase
from skshapley.sketch._polyline_kernels import cell_plan, from_counts

__all__ = ["COUNT_ROWS", "EXACT_ROWS", "summarise"]

# Batches with at most this many kept values in a column are summarised exactly (sorted
# distinct values); larger ones at N_SPLITTERS sample quantiles.
EXACT_ROWS = 8192
N_SPLITTERS = 512
SAMPLE_PER_SPLITTER = 16
# Unit-weight batches of more than COUNT_ROWS rows are counted in one pass (no sort) at
# COUNT_SPLITTERS quantiles of a sample of COUNT_SPLITTERS * COUNT_SAMPLE_PER_SPLITTER
# rows, or of every COUNT_STRIDE-th row where that is fewer; smaller ones are sorted.
# The sample quantiles' ranks scatter around even spacing (by less with a larger
# sample), and the thinned sketch's rank error differs a little from that of evenly
# spaced order statistics: over 8 seeds of 1e6 values of the 18 columns of
# benchmarks/bench_quantile_columns.py, mean 2.07e-4 against 2.05e-4 sorted, per column
# -5% (4 modes) to +15% (point masses, 4.1e-5 -> 4.8e-5; t(2) 1.57e-4 -> 1.67e-4,
# lognormal(0, 2) 1.87e-4 -> 1.99e-4). 16 sampled rows per splitter did worse (+8% on
# t(2) and Cauchy); more splitters (1024, 2048, or the most evenly spaced 512 of them)
# did not help.
# COUNT_ROWS, measured (CDFSketch.update of normal columns, one thread, best of 15 on
# a shared machine; sorted / counted with COUNT_STRIDE 8): 32,768 x 1 0.29 / 0.40 ms,
# x 20 6.7 / 6.5 ms; 50,000 x 1 0.36 / 0.42 ms, x 20 8.6 / 7.9 ms; 65,536 x 1 0.43 /
# 0.44 ms, x 20 10.7 / 9.2 ms; 100,000 x 1 0.59 / 0.53 ms, x 20 14.9 / 12.1 ms. Below
# it, the sample, the cell tables and the pass's bookkeeping (about 0.2 ms a column)
# cost more than the sort they save.
# COUNT_STRIDE: the rank error of the 18 columns at 100,000 rows (12 seeds) with the
# counting pass, against sorted: mean 1.99e-4 against 1.97e-4 (stride 16: 2.01e-4), the
# worst column the same (1.29e-3), per column -10% (zero-inflated) to +8% (t(2); stride
# 16: +10%, Cauchy +9%); at 40,000 rows (8 seeds) mean 2.30e-4 against 2.26e-4.
COUNT_ROWS = 1 << 16
COUNT_SPLITTERS = 512
COUNT_SAMPLE_PER_SPLITTER = 128
COUNT_STRIDE = 8
# Cells of the counting pass's lookup tables tried first (16 KiB of uint16 per column):
# where no two splitters of any column share a cell at this size, none share one in the
# finer tables of cells_for(d) either, so the splitters and counts are the same, and the
# table costs less to fill and stays in L1. Measured on 100,000 values, one thread
# (count_columns / count_tables, us): normal 163 / 12 against 177 / 26 with 65,536
# cells, lognormal(0, 2) 165 / 12 against 177 / 26; 4,096 cells crowded 5 of normal's
# 512 splitters, and the 5-mode mixture crowds up to 16,384 (its pass keeps 65,536).
FIRST_CELLS = 1 << 13


# Share of the values read (before the hash table gave up) at one value from which that
# value is taken out as a point mass, in batches of more than SPIKE_ROWS rows. Measured
# on 1e6 values, one thread: the copy costs 0.35 ms and the counting pass about 1.7 ns
# per value whatever their mass, so the copy pays from about a third; at 60% zeros the
# update took 1.9 ms, against 2.3 ms without it (np.sort: 2.2 ms).
SPIKE_SHARE = 0.35
# Fewest rows for the point-mass split: below, the copy and its summary of 512 distinct
# splitters cost more than they save, and such a column is sorted, counted or not
# (100,000 rows at 60% zeros, the fit: 0.70 ms split, 0.61-0.85 ms counted whole, 0.59-
# 0.68 ms sorted; np.sort 0.17 ms).
SPIKE_ROWS = 1 << 18
# Most distinct values the exact pass counts (with exact_threshold above it, the fast
# path is skipped: its table would be larger than the batch summaries it replaces).
MAX_DISTINCT = 1 << 16
# Values of the strided sample that chooses the integer window.
WINDOW_SAMPLE = 1024
# Fewest rows for the integer window: below, the hash table's pass costs about as much
# as the sample.
WINDOW_ROWS = 1 << 15


def summarise(sketch, X, w):
    """The summary of a validated batch ``X`` ``(n, d)`` with weights ``w`` (``None`` for
    unit weights) for ``sketch`` (a :class:`~skshapley.sketch.CDFSketch`, whose exact
    tables and limits say which tables to build; it is not changed): each column through
    a fast path where one applies (not with the numpy backend), the others as
    ``_summarise`` summarises them.

    Returns, per column, a dict: ``stats`` (``SCAN_FIELDS``), ``build(lattice)`` making
    the batch's polyline (absent for a column without kept values) and the batch's exact
    ``table`` (``None`` when the state keeps none or the batch overflows it). Raises
    ``ValueError`` if ``X`` holds an infinity.
    """
    n, d = X.shape
    tabled = [table is not None for table in sketch.exact]
    limit = max(sketch.exact_threshold, N_SPLITTERS)
    if (n == 0 or limit > MAX_DISTINCT or get_backend(sketch.backend).name == "numpy"
            or not (d == 1 or X.flags.f_contiguous or n <= EXACT_ROWS)):
        return _summarise(sketch, X, w, tabled)
    parts = [_fast_part(sketch, tabled[j], np.ascontiguousarray(X[:, j]), w, limit)
             for j in range(d)]
    rest = [j for j in range(d) if parts[j] is None]
    if len(rest) == d:
        return _summarise(sketch, X, w, tabled)
    for j in rest:
        parts[j] = _summarise(sketch, X[:, j:j + 1], w, [tabled[j]])[0]
    return parts


def _fast_part(sketch, tabled, col, w, limit):
    """The summary of the contiguous column ``col`` from a fast path, or ``None`` where
    none applies; ``tabled``: whether the state keeps its exact table."""
    n = col.shape[0]
    found = None
    if w is None and n >= WINDOW_ROWS:
        window = _integer_window(col, limit)
        if window is not None:
            found = integer_values(col, *window)
    if found is None:
        found = distinct_values(col, w, limit)
        if found[0] is None:
            spike, share = found[1]
            if w is None and n > SPIKE_ROWS and share >= SPIKE_SHARE:
                return _spike_part(sketch, tabled, col, spike)
            if w is None and n > EXACT_ROWS and share >= SPIKE_SHARE:
                # sorted, not counted: a sort of many equal values is cheap
                return _summarise_sorted(sketch, col, tabled)
            return None
    values, weights, n_nan, n_kept = found
    if values.size > limit:
        return None
    if values.size and (np.isinf(values[0]) or np.isinf(values[-1])):
        raise ValueError(INF_MESSAGE)
    if np.any(values.view(np.uint64) == np.uint64(1 << 63)):
        return None  # -0.0: np.unique's choice of sign is the reference's to make
    return _part_from_values(sketch, values, weights, n_nan, n_kept, tabled)


def _integer_window(col, limit):
    """``(lo, span)`` of a histogram that a column whose strided sample holds only
    integers close together likely fits in (the sample's range in the middle, four times
    as wide, a power of two), else ``None``."""
    stride = max(1, col.shape[0] // WINDOW_SAMPLE)
    sample = col[::stride]
    head = sample[:8]
    if not np.array_equal(head, np.floor(head)):  # most continuous columns stop here
        return None
    sample = sample[~np.isnan(sample)]
    if sample.size == 0 or not np.array_equal(sample, np.floor(sample)):
        return None
    low, high = float(sample.min()), float(sample.max())
    width = high - low + 1
    if not (4 * width <= limit and max(-low, high) < 2.0 ** 52):
        return None
    span = 64
    while span < 4 * width:
        span *= 2
    return low - (span - width) // 2, span


def _spike_part(sketch, tabled, col, spike):
    """The summary of the column ``col`` with its point mass ``spike`` taken out, or
    ``None`` when the column must keep an exact table (few rows)."""
    rest, (n_spike, n_below) = split_spike(col, spike)
    part = _summarise(sketch, rest[:, None], None, [False])[0]
    stats = part["stats"].copy()  # its NaN count is the column's
    if tabled and stats[1] + n_spike <= sketch.small_n:
        return None
    stats[1] += n_spike
    stats[2] += n_spike
    if not spike > stats[3]:
        stats[3], stats[5] = spike, n_spike
    if not spike < stats[4]:
        stats[4], stats[6] = spike, n_spike
    stats[8] = float(stats[8] == 1.0 and spike == np.floor(spike))
    build = part["build"]
    return {"stats": stats, "table": None,
            "build": lambda lattice: _with_spike(*build(lattice), spike, n_below, n_spike,
                                                 lattice)}


def _with_spike(x, c, spike, n_below, n_spike, lattice):
    """The polyline ``(x, c)`` of the other values with the point mass ``n_spike`` at
    ``spike`` added, ``n_below`` of them below it: a jump through the exact counts (on
    the lattice, the mass spread over ``(spike - 1, spike]``)."""
    low = spike - 1.0 if lattice else spike
    i = int(np.searchsorted(x, low, side="right"))
    x = np.concatenate([x[:i], [low, spike], x[i:]])
    c = np.concatenate([c[:i], [n_below, n_below + n_spike], c[i:] + n_spike])
    return _dedupe(x, np.maximum.accumulate(c))


def _builder(sketch):
    """A batch column's polyline from its counts: the numpy reference with the numpy
    backend, else its numba twin (the same bits, without a dozen numpy calls)."""
    return _from_counts if get_backend(sketch.backend).name == "numpy" else from_counts


def _cell_plans(sketch, columns, n_cells):
    """The cell plans (:func:`count_plan`) of the ``(values, drawn)`` of ``columns`` and
    the cells of the pass: ``FIRST_CELLS`` where no column crowds a cell there (the
    same splitters as with ``n_cells``), else ``n_cells``."""
    if get_backend(sketch.backend).name == "numpy":
        return [count_plan(values, drawn, n_cells) for values, drawn in columns], n_cells
    small = min(FIRST_CELLS, n_cells)
    plans = []
    for values, drawn in columns:
        plan, dropped = cell_plan(values, drawn, small, MAX_DROPPED_SHARE)
        if plan is None or dropped:
            break
        plans.append(plan)
    else:
        return plans, small
    return [cell_plan(values, drawn, n_cells, MAX_DROPPED_SHARE)[0]
            for values, drawn in columns], n_cells


def _summarise(sketch, X, w, tabled):
    """The summary of a validated batch ``X`` ``(n, d)`` with weights ``w`` (``None`` for
    unit weights) for ``sketch`` (a :class:`~skshapley.sketch.CDFSketch`, whose limits
    say which tables to build; it is not changed), without the column fast paths;
    ``tabled[j]``: whether the state keeps an exact table for column ``j`` of ``X``.
    Returns and raises as :func:`summarise`.

    Four summaries, all exact at their vertices: small batches are sorted whole;
    unit-weight ones up to ``COUNT_ROWS`` rows are sorted per column and read at
    ``N_SPLITTERS`` evenly spaced ranks; larger unit-weight ones are counted at
    sample quantiles in one pass without sorting (``_summarise_counted``); weighted
    ones are counted at sample quantiles in one pass by the ``summarise_columns``
    kernel (no argsort).
    """
    n, d = X.shape
    if n <= EXACT_ROWS:
        unit = np.ones(n) if w is None else w
        return [_summarise_exact(sketch, X[:, j], unit, tabled[j]) for j in range(d)]
    if w is None and n > COUNT_ROWS:
        return _summarise_counted(sketch, X, tabled)
    if w is None:
        # one copy, then every column is contiguous for the sort
        columns = X.T if X.flags.f_contiguous else np.ascontiguousarray(X.T)
        return [_summarise_sorted(sketch, columns[j], tabled[j]) for j in range(d)]
    kernel, _ = sketch._kernels()
    build = _builder(sketch)
    X = np.ascontiguousarray(X)
    splitters, n_split, forced = _splitters(X, w)
    stats = np.empty((d, N_SCAN))
    r = splitters.shape[1] - MAX_STEPS
    below = np.empty((d, r + 1))
    equal = np.empty((d, r))
    n_equal = np.empty((d, r), dtype=np.int64)
    tables = search_table(splitters, n_split)
    kernel(X, X.view(np.uint64), w, splitters, n_split, *tables, stats, below, equal,
           n_equal)
    if np.any(stats[:, 7] > 0):
        raise ValueError(INF_MESSAGE)
    parts = []
    for j in range(d):
        if j in forced:
            parts.append(_summarise_exact(sketch, X[:, j], w, tabled[j]))
            continue
        k = int(n_split[j])
        part = {"stats": stats[j].copy(), "table": None}
        if stats[j, 1] > 0:
            args = (splitters[j, :k], below[j, :k + 1], equal[j, :k], n_equal[j, :k],
                    stats[j])
            part["build"] = lambda lattice, args=args: build(*args, lattice)
            part["table"] = _table_from_counts(sketch, tabled[j], stats[j], args, X[:, j],
                                               w)
        parts.append(part)
    return parts


def _summarise_counted(sketch, X, tabled):
    """Unit-weight summaries counted at sample quantiles in one pass (no sort).

    Each column's splitters are ``COUNT_SPLITTERS`` quantiles of a sample of about
    ``COUNT_SPLITTERS * COUNT_SAMPLE_PER_SPLITTER`` rows, thinned to one per cell of the
    counting kernels' lookup table (:func:`count_plan`); the counts at and between
    them are exact, as those of the weighted pass. Columns with few finite values in
    the sample, or whose splitters crowd the table, are sorted instead
    (``_summarise_sorted``). The numpy backend counts with the reference twin
    ``summarise_columns``; contiguous columns whose sample holds only integers close
    together are first counted with a histogram (``count_integers``): the same numbers.
    """
    n, d = X.shape
    build = _builder(sketch)
    stride = max(COUNT_STRIDE, n // (COUNT_SPLITTERS * COUNT_SAMPLE_PER_SPLITTER))
    # one copy of the sample with its columns contiguous: masking and sorting a strided
    # column cost 75 us a column of a 100,000 x 20 batch
    sample = np.ascontiguousarray(X[::stride].T)
    n_cells = cells_for(d)
    integers = get_backend(sketch.backend).name != "numpy" and (X.flags.f_contiguous
                                                                or d == 1)
    parts = [None] * d
    rows, plans, cells, fast = [], [], [], []
    candidates = []
    for j in range(d):
        col = sample[j]
        kept = np.sort(col[np.isfinite(col)])
        if kept.size < COUNT_SPLITTERS:
            continue
        candidates.append((j, kept, _distinct_picks(kept, COUNT_SPLITTERS)))
    found, n_cells = _cell_plans(sketch, [pair for *_, pair in candidates], n_cells)
    for (j, kept, (values, _)), plan in zip(candidates, found, strict=True):
        if plan is None:
            continue
        kept_cells, cell, *mapping = plan
        lo = int_window(kept) if integers else None
        if lo is not None:
            parts[j] = _summarise_integers(sketch, tabled[j], X[:, j], values[kept_cells],
                                           lo, build)
            if parts[j] is not None:
                continue
        fast.append(j)
        rows.append(values[kept_cells])
        cells.append(cell[kept_cells])
        plans.append(mapping)
    if fast:
        _count_fast_columns(sketch, X, tabled, fast, rows, cells, plans, parts, n_cells,
                            build)
    slow = [j for j in range(d) if parts[j] is None]
    if slow:
        columns = X[:, slow]
        columns = columns.T if columns.flags.f_contiguous else \
            np.ascontiguousarray(columns.T)
        for i, j in enumerate(slow):
            parts[j] = _summarise_sorted(sketch, columns[i], tabled[j])
    return parts


def _distinct_picks(sorted_values, count):
    """The distinct values at ``count`` evenly spaced ranks of ``sorted_values`` (no
    NaN), and how many of those ranks each took."""
    return _sorted_unique(sorted_values[_ranks(sorted_values.shape[0], count)])


@functools.lru_cache(maxsize=64)
def _ranks(size, count):
    """``count`` evenly spaced ranks of ``size`` sorted values (kept, read-only: batches
    and samples of one size come again and again, and ``linspace`` costs 12 us a call)."""
    ranks = np.linspace(0, size - 1, count).round().astype(np.int64)
    ranks.flags.writeable = False
    return ranks


def _sorted_unique(values):
    """``np.unique(values, return_counts=True)`` of sorted ``values`` (no NaN), without
    its sort."""
    new = np.empty(values.shape[0], dtype=bool)
    new[:1] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return values[starts], np.diff(starts, append=values.shape[0])


def _count_fast_columns(sketch, X, tabled, fast, rows, cells, plans, parts, n_cells,
                        build):
    """Fill ``parts`` for the ``fast`` columns of ``X`` from one counting pass."""
    n = X.shape[0]
    k_max = max(row.size for row in rows)
    m = len(fast)
    splitters = np.full((m, k_max + MAX_STEPS), np.inf)
    n_split = np.zeros(m, dtype=np.int64)
    cells_of = np.zeros((m, k_max), dtype=np.int64)
    for i, (row, cell) in enumerate(zip(rows, cells, strict=True)):
        splitters[i, :row.size] = row
        cells_of[i, :row.size] = cell
        n_split[i] = row.size
    sub = X if m == X.shape[1] else X[:, fast]
    # exact tables only where the state keeps one and the column may have few values
    track = np.array([tabled[j] and row.size <= sketch.exact_threshold
                      for j, row in zip(fast, rows, strict=True)], dtype=bool)
    if get_backend(sketch.backend).name == "numpy":
        kernel, _ = sketch._kernels()
        stats = np.empty((m, N_SCAN))
        below = np.empty((m, k_max + 1))
        equal = np.empty((m, k_max))
        n_equal = np.empty((m, k_max), dtype=np.int64)
        sub = np.ascontiguousarray(sub)
        kernel(sub, sub.view(np.uint64), np.ones(n), splitters, n_split, *([None] * 5),
               stats, below, equal, n_equal)
        spills = [None] * m
    else:
        plan_arrays = tuple(np.array([p[i] for p in plans], dtype=np.uint64)
                            for i in range(3)) + (
            np.array([p[3] for p in plans], dtype=np.int64),)
        first = count_tables(splitters, n_split, cells_of, n_cells)
        # run_parts: serial nogil kernels over ranges of parts on a thread pool (no
        # prange, so nothing to guard in a forked child)
        stats, below, equal, spills = count_columns(
            sub, np.ascontiguousarray(splitters[:, :k_max + 2]), n_split, plan_arrays,
            first, track, run=run_parts)
    if np.any(stats[:, 7] > 0):
        raise ValueError(INF_MESSAGE)
    for i, j in enumerate(fast):
        k = int(n_split[i])
        args = (splitters[i, :k], below[i, :k + 1], equal[i, :k], equal[i, :k],
                stats[i])
        part = {"stats": stats[i].copy(), "table": None}
        part["build"] = lambda lattice, args=args: build(*args, lattice)
        if tabled[j]:
            part["table"] = _table_from_counts(sketch, True, stats[i], args, sub[:, i],
                                               None, spills[i])
        parts[j] = part


def _summarise_integers(sketch, tabled, col, splitters, lo, build):
    """The counting pass's summary of the column ``col`` (contiguous) at
    ``splitters``, read off a histogram of its integers from ``lo`` on; ``None`` when the
    column holds another value (see ``count_integers``)."""
    counted = count_integers(np.ascontiguousarray(col), lo, splitters)
    if counted is None:
        return None
    (stats, below, equal), values, weights = counted
    args = (splitters, below[0], equal[0], equal[0], stats[0])
    part = {"stats": stats[0].copy(), "table": None}
    part["build"] = lambda lattice: build(*args, lattice)
    if tabled and not sketch._overflows(values.size, stats[0, 1]):
        part["table"] = exact_table(values, weights)
    return part


def _splitters(X, w):
    """Sample quantiles per column (padded with +inf), and the columns whose sample
    holds too few kept values (summarised exactly instead)."""
    n, d = X.shape
    stride = max(1, n // (N_SPLITTERS * SAMPLE_PER_SPLITTER))
    sample = X[::stride]
    ws = w[::stride]
    rows = []
    forced = set()
    for j in range(d):
        col = sample[:, j]
        kept = np.sort(col[np.isfinite(col) & (ws > 0)])
        if kept.size < N_SPLITTERS:
            full = X[:, j]
            keep = np.isfinite(full) & (w > 0)
            if np.count_nonzero(keep) <= EXACT_ROWS:
                forced.add(j)
                rows.append(np.zeros(0))
                continue
            values = full[keep]
            kept = np.sort(values[::max(1, values.size // (N_SPLITTERS
                                                            * SAMPLE_PER_SPLITTER))])
        rows.append(_distinct_picks(kept, N_SPLITTERS)[0])
    width = max(1, max(row.size for row in rows)) + MAX_STEPS
    splitters = np.full((d, width), np.inf)
    n_split = np.zeros(d, dtype=np.int64)
    for j, row in enumerate(rows):
        splitters[j, :row.size] = row
        n_split[j] = row.size
    return splitters, n_split, forced


def _summarise_sorted(sketch, col, tabled):
    """Exact summary of one unit-weight column at ``N_SPLITTERS`` order statistics."""
    s = np.sort(col)  # NaN sorts last
    n_valid = int(np.searchsorted(s, np.inf, side="right"))
    if n_valid and (s[0] == -np.inf or s[n_valid - 1] == np.inf):
        raise ValueError(INF_MESSAGE)
    s = s[:n_valid]
    stats = np.zeros(N_SCAN)
    stats[0] = col.size - n_valid
    stats[1] = stats[2] = n_valid
    stats[3], stats[4], stats[8] = np.inf, -np.inf, 1.0
    part = {"stats": stats, "table": None}
    if n_valid == 0:
        return part
    values = _distinct_picks(s, N_SPLITTERS)[0]
    lt = np.searchsorted(s, values, side="left")
    le = np.searchsorted(s, values, side="right")
    equal = (le - lt).astype(np.float64)
    below = np.concatenate([[0.0], (lt[1:] - le[:-1]).astype(np.float64), [0.0]])
    stats[3], stats[4] = s[0], s[-1]
    stats[5], stats[6] = equal[0], equal[-1]
    # integers only if the order statistics are, then every value (one more pass)
    stats[8] = float(np.all(values == np.floor(values))
                     and np.array_equal(s, np.floor(s)))
    args = (values, below, equal, le - lt, stats)
    build = _builder(sketch)
    part["build"] = lambda lattice: build(*args, lattice)
    if tabled:
        part["table"] = _table_from_sorted(sketch, s, values)
    return part


def _table_from_sorted(sketch, s, values):
    """The batch's exact table from its sorted kept values, unless it overflows."""
    if sketch._overflows(values.size, s.size):
        return None
    distinct, counts = _sorted_unique(s)
    if sketch._overflows(distinct.size, s.size):
        return None
    return exact_table(distinct, counts.astype(np.float64))


def _summarise_exact(sketch, col, w, tabled):
    """Exact summary of one column of a small batch (sorted distinct values)."""
    nan = np.isnan(col)
    inf = np.isinf(col)
    if inf.any():
        raise ValueError(INF_MESSAGE)
    keep = ~nan & (w > 0)
    values, inverse = np.unique(col[keep], return_inverse=True)
    weights = np.bincount(inverse, weights=w[keep], minlength=values.size)
    return _part_from_values(sketch, values, weights, np.count_nonzero(nan),
                             np.count_nonzero(keep), tabled)


def _part_from_values(sketch, values, weights, n_nan, n_kept, tabled):
    """The summary of a column from its sorted distinct kept ``values`` and their
    ``weights`` (its staircase: exact), its NaN count and its count of kept rows."""
    stats = np.zeros(N_SCAN)
    stats[0] = n_nan
    stats[1] = n_kept
    stats[3], stats[4] = np.inf, -np.inf
    stats[8] = 1.0
    part = {"stats": stats, "table": None}
    if values.size:
        stats[2] = weights.sum()
        stats[3], stats[4] = values[0], values[-1]
        stats[5], stats[6] = weights[0], weights[-1]
        stats[8] = float(np.all(values == np.floor(values)))
        part["build"] = lambda lattice: _staircase(values, weights, lattice)
        if tabled and not sketch._overflows(values.size, stats[1]):
            part["table"] = exact_table(values, weights)
    return part


def _table_from_counts(sketch, tabled, stats, args, col, w, spill=None):
    """The batch's exact table when the state keeps one: read off the counts when
    every kept value is a splitter, or from the counts and ``spill`` (the unit-weight
    values equal to no splitter, from the counting pass), else (rarely) from the
    sorted column."""
    if not tabled:
        return None
    splitters, below, equal, _, _ = args
    if sketch._overflows(splitters.size, stats[1]):
        return None
    if spill is not None and spill.size:
        others, weights = np.unique(spill, return_counts=True)
        hit = equal > 0
        values = np.concatenate([splitters[hit], others])
        if sketch._overflows(values.size, stats[1]):
            return None
        weights = np.concatenate([equal[hit], weights.astype(np.float64)])
        order = np.argsort(values, kind="stable")
        return exact_table(values[order], weights[order])
    if not np.any(below > 0):
        hit = equal > 0
        return exact_table(splitters[hit], equal[hit])
    if w is None:  # unit weights
        w = np.ones(col.shape[0])
    keep = np.isfinite(col) & (w > 0)
    head = col[keep][:4 * sketch.exact_threshold + 4]
    if stats[1] > sketch.small_n and np.unique(head).size > sketch.exact_threshold:
        return None
    values, inverse = np.unique(col[keep], return_inverse=True)
    if sketch._overflows(values.size, stats[1]):
        return None
    weights = np.bincount(inverse, weights=w[keep], minlength=values.size)
    return exact_table(values, weights)
