"""The CDF sketch's update as ``MomentQuantileTransformer`` runs it: two fast paths in
front of the sketch's own batch summaries (``skshapley.sketch._cdf_fit.summarise``).

- Few distinct values: a column with at most ``max(exact_threshold, 512)`` distinct
  values is counted exactly in one pass (``_fit_kernels``: a histogram of a window of
  integers, or a hash table that gives up as soon as one value too many turns up), and
  summarised by its exact staircase, as the sketch summarises a small batch. That pass
  replaces a sort or a sampled counting pass (Poisson(3), 1e6 values: 0.5 ms, against
  0.9 ms for the sketch's histogram and 0.9 ms for ``np.sort``).
- A point mass: in a batch of more than ``COUNT_ROWS`` rows, when the values read before
  the hash table gave up hold one value for at least ``SPIKE_SHARE`` of them (the zeros
  of a zero-inflated column), the column's other values are copied out in one pass and
  summarised alone; the point mass goes back into their polyline as an exact jump, with
  the exact count of the values below it, so the polyline is the one the sketch would
  build with that value among its splitters. The sketch's counting pass costs as much
  per value at a point mass as elsewhere, so the copy pays where the mass is large.

Columns that take neither path, and every column of a row-major batch of many columns
and rows (whose values the sketch reads row by row), go to ``summarise`` unchanged; so
does everything with the numpy backend (the reference).
"""

from __future__ import annotations

import numpy as np

from skshapley.backends import get_backend
from skshapley.preprocessing._fit_kernels import distinct_values, integer_values, split_spike
from skshapley.sketch._base import INF_MESSAGE, exact_table
from skshapley.sketch._cdf_fit import COUNT_ROWS, EXACT_ROWS, N_SPLITTERS, summarise
from skshapley.sketch._cdf_kernels import N_SCAN
from skshapley.sketch._polyline import _dedupe, _staircase
from skshapley.utils import restored_on_failure

__all__ = ["update_cdf"]

# Share of the values read (before the hash table gave up) at one value from which that
# value is taken out as a point mass, in batches of more than COUNT_ROWS rows (the
# sketch's counting pass). Measured on 1e6 values, one thread: the copy costs 0.35 ms
# and the counting pass about 1.7 ns per value whatever their mass, so the copy pays
# from about a third; at 60% zeros the update took 1.9 ms, against 2.3 ms without it
# (np.sort: 2.2 ms). Below COUNT_ROWS rows the sketch sorts, which a point mass already
# speeds up, and the copy's summary of 512 distinct splitters costs more to thin than
# it saves (100,000 rows at 60% zeros: 0.41 ms against 0.27 ms).
SPIKE_SHARE = 0.35
# Most distinct values the exact pass counts (with exact_threshold above it, the fast
# path is skipped: its table would be larger than the batch summaries it replaces).
MAX_DISTINCT = 1 << 16
# Values of the strided sample that chooses the integer window.
WINDOW_SAMPLE = 1024
# Fewest rows for the integer window: below, the hash table's pass costs about as much
# as the sample.
WINDOW_ROWS = 1 << 15


class _Columns:
    """A sketch seen through some of its columns: ``summarise`` reads ``exact[j]`` for
    the ``j``-th column of the batch it is given, and the settings of the sketch."""

    def __init__(self, sketch, exact):
        self._sketch = sketch
        self.exact = exact

    def __getattr__(self, name):
        return getattr(self._sketch, name)


def update_cdf(sketch, X, w):
    """``sketch._update(X, w)`` (a :class:`~skshapley.sketch.CDFSketch`, ``X`` validated
    by its ``_validate``), through the fast paths: all or nothing, infinities refused."""
    if get_backend(sketch.backend).name == "numpy":
        sketch._update(X, w)
        return
    with restored_on_failure(sketch):
        sketch._begin(X.shape[1])
        parts = _summarise(sketch, X, w)
    # only now, with every column summarised and free of infinities, change state
    sketch._absorb(parts)


def _summarise(sketch, X, w):
    """``summarise(sketch, X, w)``, each column through a fast path where one applies."""
    n, d = X.shape
    if n == 0 or not (d == 1 or X.flags.f_contiguous or n <= EXACT_ROWS):
        # the sketch reads a row-major batch row by row; a column pass would stride
        return summarise(sketch, X, w)
    limit = max(sketch.exact_threshold, N_SPLITTERS)
    if limit > MAX_DISTINCT:
        return summarise(sketch, X, w)
    parts = [_fast_part(sketch, j, np.ascontiguousarray(X[:, j]), w, limit)
             for j in range(d)]
    rest = [j for j in range(d) if parts[j] is None]
    if len(rest) == d:
        return summarise(sketch, X, w)
    for j in rest:
        parts[j] = summarise(_Columns(sketch, [sketch.exact[j]]), X[:, j:j + 1], w)[0]
    return parts


def _fast_part(sketch, j, col, w, limit):
    """Column ``j``'s summary from a fast path, or ``None`` where none applies."""
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
            if w is None and n > COUNT_ROWS and share >= SPIKE_SHARE:
                return _spike_part(sketch, j, col, spike)
            return None
    values, weights, n_nan, n_kept = found
    if values.size > limit:
        return None
    if values.size and (np.isinf(values[0]) or np.isinf(values[-1])):
        raise ValueError(INF_MESSAGE)
    if np.any(values.view(np.uint64) == np.uint64(1 << 63)):
        return None  # -0.0: np.unique's choice of sign is the sketch's to make
    return _exact_part(sketch, j, values, weights, n_nan, n_kept)


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


def _exact_part(sketch, j, values, weights, n_nan, n_kept):
    """The summary of a column from its distinct values (as the sketch summarises a
    small batch: ``_cdf_fit._summarise_exact``, the same numbers)."""
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
        if sketch.exact[j] is not None and not sketch._overflows(values.size, stats[1]):
            part["table"] = exact_table(values, weights)
    return part


def _spike_part(sketch, j, col, spike):
    """Column ``j``'s summary with its point mass ``spike`` taken out, or ``None`` when
    the column must keep an exact table (few rows)."""
    rest, (n_spike, n_below) = split_spike(col, spike)
    part = summarise(_Columns(sketch, [None]), rest[:, None], None)[0]
    stats = part["stats"].copy()  # its NaN count is the column's
    if sketch.exact[j] is not None and stats[1] + n_spike <= sketch.small_n:
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
