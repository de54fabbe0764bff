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
"""

from __future__ import annotations

import numpy as np

from skshapley.backends import get_backend, run_parts
from skshapley.sketch._base import INF_MESSAGE, exact_table
from skshapley.sketch._cdf_kernels import MAX_STEPS, N_SCAN, search_table
from skshapley.sketch._cells import cells_for
from skshapley.sketch._count_kernels import (
    count_columns,
    count_integers,
    count_plan,
    count_tables,
    int_window,
)
from skshapley.sketch._polyline import _from_counts, _staircase

__all__ = ["COUNT_ROWS", "EXACT_ROWS", "summarise"]

# Batches with at most this many kept values in a column are summarised exactly (sorted
# distinct values); larger ones at N_SPLITTERS sample quantiles.
EXACT_ROWS = 8192
N_SPLITTERS = 512
SAMPLE_PER_SPLITTER = 16
# Unit-weight batches of more than COUNT_ROWS rows are counted in one pass (no sort) at
# COUNT_SPLITTERS quantiles of a sample of COUNT_SPLITTERS * COUNT_SAMPLE_PER_SPLITTER
# rows; smaller ones are sorted (there the sample would cost about as much as the sort).
# The sample quantiles' ranks scatter around even spacing (by less with a larger
# sample), and the thinned sketch's rank error differs a little from that of evenly
# spaced order statistics: over 8 seeds of 1e6 values of the 18 columns of
# benchmarks/bench_quantile_columns.py, mean 2.07e-4 against 2.05e-4 sorted, per column
# -5% (4 modes) to +15% (point masses, 4.1e-5 -> 4.8e-5; t(2) 1.57e-4 -> 1.67e-4,
# lognormal(0, 2) 1.87e-4 -> 1.99e-4). 16 sampled rows per splitter did worse (+8% on
# t(2) and Cauchy); more splitters (1024, 2048, or the most evenly spaced 512 of them)
# did not help.
COUNT_ROWS = 1 << 18
COUNT_SPLITTERS = 512
COUNT_SAMPLE_PER_SPLITTER = 128


def summarise(sketch, X, w):
    """The summary of a validated batch ``X`` ``(n, d)`` with weights ``w`` (``None`` for
    unit weights) for ``sketch`` (a :class:`~skshapley.sketch.CDFSketch`, whose exact
    tables and limits say which tables to build; it is not changed).

    Returns, per column, a dict: ``stats`` (``SCAN_FIELDS``), ``build(lattice)`` making
    the batch's polyline (absent for a column without kept values) and the batch's exact
    ``table`` (``None`` when the state keeps none or the batch overflows it). Raises
    ``ValueError`` if ``X`` holds an infinity.

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
        return [_summarise_exact(sketch, X[:, j], unit, j) for j in range(d)]
    if w is None and n > COUNT_ROWS:
        return _summarise_counted(sketch, X)
    if w is None:
        # one copy, then every column is contiguous for the sort
        columns = X.T if X.flags.f_contiguous else np.ascontiguousarray(X.T)
        return [_summarise_sorted(sketch, columns[j], j) for j in range(d)]
    kernel, _ = sketch._kernels()
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
            parts.append(_summarise_exact(sketch, X[:, j], w, j))
            continue
        k = int(n_split[j])
        part = {"stats": stats[j].copy(), "table": None}
        if stats[j, 1] > 0:
            args = (splitters[j, :k], below[j, :k + 1], equal[j, :k], n_equal[j, :k],
                    stats[j])
            part["build"] = lambda lattice, args=args: _from_counts(*args, lattice)
            part["table"] = _table_from_counts(sketch, j, stats[j], args, X[:, j], w)
        parts.append(part)
    return parts


def _summarise_counted(sketch, X):
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
    stride = max(1, n // (COUNT_SPLITTERS * COUNT_SAMPLE_PER_SPLITTER))
    sample = X[::stride]
    n_cells = cells_for(d)
    integers = get_backend(sketch.backend).name != "numpy" and (X.flags.f_contiguous
                                                                or d == 1)
    parts = [None] * d
    rows, plans, cells, fast = [], [], [], []
    for j in range(d):
        col = sample[:, j]
        kept = np.sort(col[np.isfinite(col)])
        if kept.size < COUNT_SPLITTERS:
            continue
        picks = np.linspace(0, kept.size - 1, COUNT_SPLITTERS).round().astype(np.int64)
        values, drawn = np.unique(kept[picks], return_counts=True)
        plan = count_plan(values, drawn, n_cells)
        if plan is None:
            continue
        keep, cell, *mapping = plan
        lo = int_window(kept) if integers else None
        if lo is not None:
            parts[j] = _summarise_integers(sketch, j, X[:, j], values[keep], lo)
            if parts[j] is not None:
                continue
        fast.append(j)
        rows.append(values[keep])
        cells.append(cell[keep])
        plans.append(mapping)
    if fast:
        _count_fast_columns(sketch, X, fast, rows, cells, plans, parts, n_cells)
    slow = [j for j in range(d) if parts[j] is None]
    if slow:
        columns = X[:, slow]
        columns = columns.T if columns.flags.f_contiguous else \
            np.ascontiguousarray(columns.T)
        for i, j in enumerate(slow):
            parts[j] = _summarise_sorted(sketch, columns[i], j)
    return parts


def _count_fast_columns(sketch, X, fast, rows, cells, plans, parts, n_cells):
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
    track = np.array([sketch.exact[j] is not None and row.size <= sketch.exact_threshold
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
        part["build"] = lambda lattice, args=args: _from_counts(*args, lattice)
        if sketch.exact[j] is not None:
            part["table"] = _table_from_counts(sketch, j, stats[i], args, sub[:, i], None,
                                               spills[i])
        parts[j] = part


def _summarise_integers(sketch, j, col, splitters, lo):
    """The counting pass's summary of column ``j`` (``col``, contiguous) at
    ``splitters``, read off a histogram of its integers from ``lo`` on; ``None`` when the
    column holds another value (see ``count_integers``)."""
    counted = count_integers(np.ascontiguousarray(col), lo, splitters)
    if counted is None:
        return None
    (stats, below, equal), values, weights = counted
    args = (splitters, below[0], equal[0], equal[0], stats[0])
    part = {"stats": stats[0].copy(), "table": None}
    part["build"] = lambda lattice: _from_counts(*args, lattice)
    if sketch.exact[j] is not None and not sketch._overflows(values.size, stats[0, 1]):
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
        picks = np.linspace(0, kept.size - 1, N_SPLITTERS).round().astype(np.int64)
        rows.append(np.unique(kept[picks]))
    width = max(1, max(row.size for row in rows)) + MAX_STEPS
    splitters = np.full((d, width), np.inf)
    n_split = np.zeros(d, dtype=np.int64)
    for j, row in enumerate(rows):
        splitters[j, :row.size] = row
        n_split[j] = row.size
    return splitters, n_split, forced


def _summarise_sorted(sketch, col, j):
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
    ranks = np.linspace(0, n_valid - 1, N_SPLITTERS).round().astype(np.int64)
    values = np.unique(s[ranks])
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
    part["build"] = lambda lattice: _from_counts(*args, lattice)
    if sketch.exact[j] is not None:
        part["table"] = _table_from_sorted(sketch, s, values)
    return part


def _table_from_sorted(sketch, s, values):
    """The batch's exact table from its sorted kept values, unless it overflows."""
    if sketch._overflows(values.size, s.size):
        return None
    starts = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
    if sketch._overflows(starts.size, s.size):
        return None
    counts = np.diff(np.append(starts, s.size)).astype(np.float64)
    return exact_table(s[starts], counts)


def _summarise_exact(sketch, col, w, j):
    """Exact summary of one column of a small batch (sorted distinct values)."""
    nan = np.isnan(col)
    inf = np.isinf(col)
    if inf.any():
        raise ValueError(INF_MESSAGE)
    keep = ~nan & (w > 0)
    values, inverse = np.unique(col[keep], return_inverse=True)
    weights = np.bincount(inverse, weights=w[keep], minlength=values.size)
    stats = np.zeros(N_SCAN)
    stats[0] = np.count_nonzero(nan)
    stats[1] = np.count_nonzero(keep)
    stats[3], stats[4] = np.inf, -np.inf
    stats[8] = 1.0
    part = {"stats": stats, "table": None}
    if values.size:
        stats[2] = weights.sum()
        stats[3], stats[4] = values[0], values[-1]
        stats[5], stats[6] = weights[0], weights[-1]
        stats[8] = float(np.all(values == np.floor(values)))
        part["build"] = lambda lattice: _staircase(values, weights, lattice)
        if sketch.exact[j] is not None and not sketch._overflows(values.size, stats[1]):
            part["table"] = exact_table(values, weights)
    return part


def _table_from_counts(sketch, j, stats, args, col, w, spill=None):
    """The batch's exact table when the state keeps one: read off the counts when
    every kept value is a splitter, or from the counts and ``spill`` (the unit-weight
    values equal to no splitter, from the counting pass), else (rarely) from the
    sorted column."""
    if sketch.exact[j] is None:
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
