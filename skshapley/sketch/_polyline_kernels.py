"""Numba twins of the per-column numpy work of a CDF sketch fit: a batch column's
polyline from its counts (``_polyline._from_counts``), the quantiles of many polylines
at once (``_polyline._invert``) and a column's cell plan for the counting pass
(``_count_kernels.count_plan``).

On one 100,000-value column these took 33 us (the polyline), 31 us (1000 quantiles)
and 20 us (the plan) of a fit of about 800 us in numpy calls on arrays of a few hundred
values; the loops below take a few microseconds each. The arithmetic is the numpy
references', operation for operation, so the results are the same bits (the tests in
``tests/sketch/test_polyline_kernels.py`` compare them).
"""

from __future__ import annotations

import numpy as np

from skshapley.backends.sketch import SIGN, numba_build
from skshapley.sketch._merge_kernels import _dedupe_into

__all__ = ["cell_plan", "from_counts", "invert_columns"]


# ------------------------------------------------------------------ polylines
def _emit(x, c, m, value, lower, upper, single, integral, running):
    """Append the vertex pair of one value (see ``_polyline._from_counts``), the counts
    through their running maximum; returns the new running maximum."""
    if integral:
        x[m] = value - 1
        x[m + 1] = value
        a = lower
        b = upper
    else:
        mid = 0.5 * (lower + upper)
        x[m] = value
        x[m + 1] = value
        a = mid if single else lower
        b = mid if single else upper
    if m == 0 or a > running:
        running = a
    c[m] = running
    if b > running:
        running = b
    c[m + 1] = running
    return running


def _from_counts_loops(splitters, below, equal, n_equal, stats, integral, x, c):
    """``_polyline._from_counts`` into ``x``, ``c`` (room for ``2 r + 4`` vertices);
    returns the polyline's length."""
    total, low, high, w_low, w_high = stats[2], stats[3], stats[4], stats[5], stats[6]
    r = splitters.shape[0]
    m = 0
    running = 0.0
    if not (r > 0 and splitters[0] == low):
        running = _emit(x, c, m, low, 0.0, w_low, False, integral, running)
        m += 2
    lt = 0.0
    for i in range(r):
        step = below[i] + (equal[i - 1] if i > 0 else 0.0)
        lt = step if i == 0 else lt + step
        v = splitters[i]
        single = n_equal[i] == 1 and v != low and v != high
        running = _emit(x, c, m, v, lt, lt + equal[i], single, integral, running)
        m += 2
    if not (r > 0 and splitters[r - 1] == high):
        running = _emit(x, c, m, high, total - w_high, total, False, integral, running)
        m += 2
    return _dedupe_into(x, c, m)


def _invert_loops(x, c, n, integral, p, out):
    """``_polyline._invert`` of each row ``j`` of ``x``, ``c`` (its first ``n[j]``
    vertices; rows with none or no weight are skipped) at ``p``, into ``out[:, j]``."""
    d = x.shape[0]
    for j in range(d):
        m = n[j]
        if m == 0 or not c[j, m - 1] > 0:
            continue
        xs = x[j]
        cs = c[j]
        total = cs[m - 1]
        for t in range(p.shape[0]):
            pt = p[t]
            target = pt * total
            lo = 0
            hi = m
            while lo < hi:  # searchsorted, side "left"
                mid = (lo + hi) >> 1
                if cs[mid] < target:
                    lo = mid + 1
                else:
                    hi = mid
            i = lo if lo > 1 else 1
            i = i if i < m - 1 else m - 1
            before = i - 1 if i > 0 else m - 1  # numpy's wraparound of index -1
            a = cs[before]
            b = cs[i]
            frac = (target - a) / (b - a) if b > a else 1.0
            frac = frac if frac > 0.0 else 0.0
            frac = frac if frac < 1.0 else 1.0
            if integral[j]:
                span = xs[i] - xs[before]
                steps = np.ceil(frac * span - 1e-9 * (span if span > 1.0 else 1.0))
                q = xs[before] + (steps if steps > 0.0 else 0.0)
                low = xs[0] + 1
            else:
                q = xs[before] + frac * (xs[i] - xs[before])
                if not np.isfinite(q):
                    q = xs[before] * (1 - frac) + xs[i] * frac
                low = xs[0]
            q = q if q > low else low
            q = q if q < xs[m - 1] else xs[m - 1]
            if pt <= 0:
                q = low
            elif pt >= 1:
                q = xs[m - 1]
            out[t, j] = q


# ------------------------------------------------------------------ cell plans
def _order_key(bits):
    """``_cells.order_keys`` of one value, from its bits."""
    return ~bits if (bits >> np.uint64(63)) == np.uint64(1) else bits | SIGN


def _plan_loops(values, bits, drawn, n_cells, max_dropped, cells, keep, plan):
    """``_count_kernels.count_plan`` of the increasing ``values`` (each drawn
    ``drawn`` times): ``cells`` and ``keep`` receive the values' cells and the kept
    ones, ``plan`` ``(band_low, band_width, origin, shift)``; returns 0, 1 when the plan
    is refused, 2 when it is accepted but drops values (a crowded cell)."""
    r = values.shape[0]
    tiny = np.inf
    for i in range(r):
        a = abs(values[i])
        if values[i] != 0 and a < tiny:
            tiny = a
    tiny = tiny / 2 if tiny < np.inf else 0.0
    tiny = tiny if tiny > 5e-324 else 5e-324
    pair = np.empty(2)
    pair[0] = -tiny
    pair[1] = tiny
    pair_bits = pair.view(np.uint64)
    band_low = _order_key(pair_bits[0])
    band_width = _order_key(pair_bits[1]) - band_low
    top = band_low + band_width
    keys = np.empty(r, dtype=np.uint64)
    for i in range(r):
        k = _order_key(bits[i])
        if k > band_low and k <= top:
            k = band_low
        elif k > top:
            k = k - band_width
        keys[i] = k
    origin = keys[0]
    span = keys[r - 1] - keys[0]
    shift = 0
    while (span >> np.uint64(shift)) >= np.uint64(n_cells):
        shift += 1
    for i in range(r):
        cells[i] = np.int64((keys[i] - origin) >> np.uint64(shift))
        keep[i] = True
    plan[0] = band_low
    plan[1] = band_width
    plan[2] = origin
    plan[3] = np.uint64(shift)
    n_crowded = 0
    for i in range(1, r):
        n_crowded += np.int64(cells[i] == cells[i - 1])
    if n_crowded == 0:
        return 0
    if n_crowded > max_dropped * r:
        return 1
    a = 0
    while a < r:
        b = a + 1
        while b < r and cells[b] == cells[a]:
            b += 1
        if b - a > 1:
            repeated = 0
            best = a
            for i in range(a, b):
                repeated += np.int64(drawn[i] > 1)
                if drawn[i] > drawn[best]:
                    best = i
            if repeated > 1:
                return 1
            for i in range(a, b):
                keep[i] = i == best
        a = b
    return 2


_BUILDS = {}


def _kernels():
    if not _BUILDS:
        namespace = dict(_from_counts_loops.__globals__)
        namespace.update(_emit=numba_build(_emit, inline="always"),
                         _dedupe_into=numba_build(_dedupe_into),
                         _order_key=numba_build(_order_key, inline="always"))
        for f in (_from_counts_loops, _invert_loops, _plan_loops):
            _BUILDS[f.__name__] = numba_build(f, namespace)
    return _BUILDS


# ------------------------------------------------------------------ entry points
def from_counts(splitters, below, equal, n_equal, stats, integral):
    """``_polyline._from_counts`` by the numba build: ``(x, c)``."""
    r = splitters.shape[0]
    x = np.empty(2 * r + 4)
    c = np.empty(2 * r + 4)
    m = _kernels()["_from_counts_loops"](splitters, below[:r + 1], equal[:r],
                                         n_equal[:r], stats, bool(integral), x, c)
    return x[:m], c[:m]


def invert_columns(knots, integral, p):
    """``_polyline._invert(x, c, p, lattice)`` of each polyline ``(x, c)`` of ``knots``
    (``integral[j]``: on the lattice) by the numba build, as the columns of a
    ``(len(p), len(knots))`` array; NaN for a polyline without vertices or weight."""
    d = len(knots)
    width = max([x.size for x, _ in knots] + [1])
    x = np.zeros((d, width))
    c = np.zeros((d, width))
    n = np.zeros(d, dtype=np.int64)
    for j, (xj, cj) in enumerate(knots):
        x[j, :xj.size] = xj
        c[j, :xj.size] = cj
        n[j] = xj.size
    out = np.full((p.shape[0], d), np.nan)
    _kernels()["_invert_loops"](x, c, n, np.asarray(integral, dtype=np.bool_),
                                np.ascontiguousarray(p, dtype=np.float64), out)
    return out


def cell_plan(values, drawn, n_cells, max_dropped):
    """``_count_kernels.count_plan`` by the numba build: ``(keep, cells, band_low,
    band_width, origin, shift)`` or ``None`` when refused, and whether values were
    dropped (a crowded cell)."""
    r = values.shape[0]
    cells = np.empty(r, dtype=np.int64)
    keep = np.empty(r, dtype=np.bool_)
    plan = np.zeros(4, dtype=np.uint64)
    values = np.ascontiguousarray(values, dtype=np.float64)
    status = _kernels()["_plan_loops"](values, values.view(np.uint64),
                                       np.ascontiguousarray(drawn, dtype=np.int64),
                                       n_cells, float(max_dropped), cells, keep, plan)
    if status == 1:
        return None, True
    return (keep, cells, plan[0], plan[1], plan[2], int(plan[3])), status == 2
