"""Mergeable piecewise-linear CDF sketches of columns (a rank summary of at most
``n_knots`` vertices per column, about 1 KiB at the default 60).

Each column keeps its CDF as a monotone polyline through vertices ``(x_k, c_k)``: ``x``
non-decreasing values, ``c`` the cumulative weight, from ``(min, 0)`` to ``(max, W)``.
Two vertices at one value are a jump (a point mass, e.g. the zeros of a zero-inflated
column); between vertices the weight is spread evenly. Columns whose every value is an
integer are kept on the integer lattice: the weight of the value ``k`` is spread over
``(k - 1, k]``, so the polyline is exact at the integers and quantiles are integers.

Updates summarise a batch exactly at a few hundred values (order statistics of the
sorted columns of a small batch; in a large one, or with sample weights, sample
quantiles whose weight below and at each is counted in one pass), add the batch's
polyline to the sketch's (the sum of two polylines is the polyline through the union of
their vertices, so the sum is exact) and thin the result back to ``n_knots`` vertices,
greedily dropping the vertex whose removal moves the CDF least in rank. Merging works
the same way, so ``partial_fit`` and merges agree with one fit to within the thinning
error, which each sketch estimates and carries (``quantile_error``). That error depends
on the shape of the CDF and on ``n_knots``, not on the number of rows: the counts are
never sampled, only the shape between vertices is approximated (where the moment sketch
approximates the whole density by a few moments).

Related work: equi-depth histograms and their mergeable variants (the vertices here are
chosen by a greedy min-error polyline simplification instead of equal depth; Visvalingam
& Whyatt 1993 drop points by least effect, here measured against the original vertices
in the rank direction); Karnin, Lang & Liberty 2016 (KLL) for randomised compactors.
"""

from __future__ import annotations

import io

import numpy as np

from skshapley.backends import get_backend
from skshapley.backends._numba_runtime import run_parts
from skshapley.sketch._cdf_kernels import (
    MAX_STEPS,
    N_SCAN,
    combine_thin,
    count_cells_for,
    count_columns,
    count_plan,
    count_tables,
    get_kernels,
    search_table,
)
from skshapley.sketch._moments import _check_int, check_bounds, merge_exact_table
from skshapley.sketch._solvers import exact_quantiles
from skshapley.utils._state import restored_on_failure

__all__ = ["CDFSketch"]

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
_MAGIC = b"SKCD1"
_INF_MESSAGE = "X contains infinity: only finite values and NaN (skipped) are accepted."


# ------------------------------------------------------------------ polylines
def _evaluate(x, c, q, side):
    """The polyline's CDF at ``q``: right-continuous (``side="right"``, the weight at or
    below ``q``) or its left limit (``side="left"``, the weight below ``q``)."""
    q = np.asarray(q, dtype=np.float64)
    m = x.shape[0]
    if m == 0:
        return np.zeros(q.shape)
    i = np.searchsorted(x, q, side=side)
    out = np.where(i >= m, c[-1], 0.0)
    mid = (i > 0) & (i < m)
    j = i[mid]
    t = _fraction(x[j - 1], x[j], q[mid])
    out[mid] = c[j - 1] + (c[j] - c[j - 1]) * t
    return out


def _fraction(a, b, v):
    """``(v - a) / (b - a)`` clipped to [0, 1] (0 where ``a == b``), halving the terms
    where a difference overflows (values near +-1.8e308)."""
    with np.errstate(over="ignore", invalid="ignore"):
        span = b - a
        t = (v - a) / np.where(span > 0, span, 1.0)
        wide = ~np.isfinite(span) | ~np.isfinite(v - a)
        if np.any(wide):
            half = b / 2 - a / 2
            t = np.where(wide, (v / 2 - a / 2) / np.where(half > 0, half, 1.0), t)
    return np.clip(np.where(span > 0, t, 0.0), 0.0, 1.0)


def _between(a, b, t):
    """``a + t (b - a)`` without overflow."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = a + t * (b - a)
        wide = ~np.isfinite(out)
        if np.any(wide):
            out = np.where(wide, a * (1 - t) + b * t, out)
    return out


def _from_points(xs, left, right):
    """Vertices from the CDF's left limit and value at increasing distinct ``xs``: one
    vertex where they agree, a jump (two vertices) where they differ."""
    jump = right > left
    counts = np.where(jump, 2, 1)
    x = np.repeat(xs, counts)
    c = np.empty(x.shape[0])
    ends = np.cumsum(counts) - 1
    c[ends] = right
    c[ends[jump] - 1] = left[jump]
    return x, np.maximum.accumulate(c)


def _combine(a, b):
    """The polyline of the sum of two CDFs (both on the same footing: both on the
    integer lattice or neither). Exact: the sum of two piecewise-linear functions is
    piecewise linear on the union of their breakpoints."""
    (xa, ca), (xb, cb) = a, b
    if xa.size == 0:
        return xb, cb
    if xb.size == 0:
        return xa, ca
    xs = np.union1d(xa, xb)
    left = _evaluate(xa, ca, xs, "left") + _evaluate(xb, cb, xs, "left")
    right = _evaluate(xa, ca, xs, "right") + _evaluate(xb, cb, xs, "right")
    return _from_points(xs, left, right)


def _lattice_to_line(x, c):
    """A lattice polyline (the weight of ``k`` on ``(k - 1, k]``) as an ordinary one.

    Each segment ``(a, c_a) -> (b, c_b)`` holds ``u = (c_b - c_a) / (b - a)`` at each
    integer ``a + 1 .. b``: it becomes a ramp through the CDF's left limits at those
    integers and a jump of ``u`` at ``b`` (exact at one integer, within ``u`` of the
    staircase between them). Used when a column that was all integers meets a
    non-integer value.
    """
    if x.size < 2:
        return x.copy(), c.copy()
    a, b = x[:-1], x[1:]
    ca, cb = c[:-1], c[1:]
    steps = np.maximum(b - a, 1.0)
    u = (cb - ca) / steps
    # per segment: (a + 1, c_a), (b, c_b - u), (b, c_b)
    px = np.column_stack([a + 1, b, b]).ravel()
    pc = np.column_stack([ca, cb - u, cb]).ravel()
    px = np.concatenate([[x[0] + 1], px])
    pc = np.concatenate([[0.0], pc])
    return _dedupe(px, np.maximum.accumulate(pc))


def _dedupe(x, c):
    """Drop repeated vertices and the inner vertices of vertical runs."""
    if x.size < 2:
        return x, c
    same = (x[1:] == x[:-1]) & (c[1:] == c[:-1])
    keep = np.concatenate([[True], ~same])
    x, c = x[keep], c[keep]
    if x.size < 3:
        return x, c
    inner = (x[1:-1] == x[:-2]) & (x[1:-1] == x[2:])
    keep = np.concatenate([[True], ~inner, [True]])
    return x[keep], c[keep]


def _deviation(x, c, fx, fc):
    """Rank distance of each vertex ``(x, c)`` from the polyline ``(fx, fc)``: 0 inside
    its vertical range at ``x`` (``[F(x-), F(x)]``), else the gap to it."""
    low = _evaluate(fx, fc, x, "left")
    high = _evaluate(fx, fc, x, "right")
    return np.maximum(0.0, np.maximum(low - c, c - high))


def _thin(x, c, n_keep, simplify):
    """Thin to ``n_keep`` vertices; returns ``(x, c, error)`` with ``error`` the mean rank
    distance (weight units) of the dropped vertices from the result, weighted by the rank
    they stand for: an estimate of what the thinning adds to a quantile's rank error."""
    x, c = _dedupe(x, c)
    if x.size <= n_keep:
        return x, c, 0.0
    keep = np.empty(x.size, dtype=bool)
    simplify(x, c, n_keep, keep)
    fx, fc = x[keep], c[keep]
    dropped = ~keep
    dev = _deviation(x[dropped], c[dropped], fx, fc)
    padded = np.concatenate([[c[0]], c, [c[-1]]])
    share = 0.5 * (padded[2:] - padded[:-2])
    total = c[-1]
    error = float(np.sum(dev * share[dropped]) / total) if total > 0 else 0.0
    return fx, fc, error


def _staircase(values, weights, integral):
    """The exact polyline of distinct sorted ``values`` with ``weights``."""
    cum = np.cumsum(weights)
    before = cum - weights
    if integral:
        x = np.column_stack([values - 1, values]).ravel()
    else:
        x = np.repeat(values, 2)
    c = np.column_stack([before, cum]).ravel()
    return _dedupe(x, c)


def _from_counts(splitters, below, equal, n_equal, stats, integral):
    """A batch column's polyline from ``summarise_columns``' counts (exact at the
    splitters, the minimum and the maximum; linear in between)."""
    total, low, high, w_low, w_high = stats[2], stats[3], stats[4], stats[5], stats[6]
    r = splitters.shape[0]
    lt = np.cumsum(below[:r] + np.concatenate([[0.0], equal[:-1]])) if r else np.zeros(0)
    values, lower, upper = [splitters], [lt], [lt + equal]
    # a value seen once is one vertex at its mid-rank, a repeated one a jump; the
    # minimum and maximum are always jumps, so the polyline runs from 0 to W
    single = [(n_equal == 1) & (splitters != low) & (splitters != high)]
    if not (r and splitters[0] == low):
        values.insert(0, [low])
        lower.insert(0, [0.0])
        upper.insert(0, [w_low])
        single.insert(0, [False])
    if not (r and splitters[-1] == high):
        values.append([high])
        lower.append([total - w_high])
        upper.append([total])
        single.append([False])
    values, lower, upper = (np.concatenate(v).astype(np.float64)
                            for v in (values, lower, upper))
    single = np.concatenate(single).astype(bool)
    if integral:
        x = np.column_stack([values - 1, values]).ravel()
        c = np.column_stack([lower, upper]).ravel()
    else:
        mid = 0.5 * (lower + upper)
        x = np.repeat(values, 2)
        c = np.column_stack([np.where(single, mid, lower),
                             np.where(single, mid, upper)]).ravel()
    return _dedupe(x, np.maximum.accumulate(c))


def _invert(x, c, p, integral):
    """Quantiles ``inf{x : F(x) >= p W}`` of a polyline (integers on the lattice)."""
    p = np.asarray(p, dtype=np.float64)
    total = c[-1]
    target = p * total
    i = np.clip(np.searchsorted(c, target, side="left"), 1, c.size - 1)
    lo, hi = c[i - 1], c[i]
    frac = np.where(hi > lo, (target - lo) / np.where(hi > lo, hi - lo, 1.0), 1.0)
    frac = np.clip(frac, 0.0, 1.0)
    if integral:
        span = x[i] - x[i - 1]
        # the answer is x[i - 1] plus a whole number of steps; rounding the step count
        # (not x) keeps large integers such as timestamps exact
        steps = np.ceil(frac * span - 1e-9 * np.maximum(span, 1.0))
        q = x[i - 1] + np.maximum(steps, 0.0)
        low = x[0] + 1
    else:
        q = _between(x[i - 1], x[i], frac)
        low = x[0]
    q = np.clip(q, low, x[-1])
    return np.where(p <= 0, low, np.where(p >= 1, x[-1], q))


class CDFSketch:
    """Per-feature piecewise-linear CDF sketches: mergeable rank summaries of columns.

    Each feature keeps at most ``n_knots`` vertices of a monotone polyline through its
    CDF (``16 n_knots + 64`` bytes: 1 KiB at the default 60), its weight, NaN and row
    counts, an estimate of its rank error, and, while the feature has at most
    ``exact_threshold`` distinct values or ``small_n`` rows, an exact value->weight
    table. The counts at the vertices are exact; between them the weight is spread
    evenly, on the integer lattice when every value is an integer.

    Parameters
    ----------
    n_knots : int, default=60
        Most vertices kept per feature (a point mass takes two), 4 to 65,536.
    n_features : int, optional
        Fixed by the first update when omitted.
    exact_threshold : int, default=64
        Keep an exact value->weight table while a feature has at most this many
        distinct values ...
    small_n : int, default=1000
        ... or at most this many rows. Once both are exceeded the table is dropped for
        good (the rule is monotone under union, so merge order does not matter).
    bounds : array-like of shape (n_features, 2), optional
        Fixed per-feature (low, high) bounds; values outside raise ``ValueError``.
    backend : str, optional
        ``"numpy"`` runs the reference kernels; any other backend the numba builds.

    Attributes
    ----------
    weight, n_nan, n_rows : ndarray of shape (n_features,)
        Weight of the finite values seen, NaNs skipped, rows kept (finite, weight > 0).
    integral : ndarray of bool, shape (n_features,)
        Whether every value seen is an integer (the lattice form).
    knots : list of (x, c) pairs of arrays
        Each feature's vertices: values and cumulative weights.
    exact : list of dict or None
        The exact tables (``None`` once dropped).

    Notes
    -----
    ``update`` and ``merge`` agree with one update on all the rows to within the error
    that thinning adds (``quantile_error``). On the columns of
    ``benchmarks/results/quantile_columns.md`` (n = 100,000) the mean rank error is
    0-5e-4 after one update and 1e-5 to 9e-4 after 100 batches or a 16-way merge tree
    (1.3e-3 where half the values are integers between continuous ones), against
    7e-4 to 3e-3 for KLL with k = 200. A feature whose exact table survives is exact
    whatever the merge order.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.sketch import CDFSketch
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(20_000, 1))
    >>> sketch = CDFSketch().update(x[:12_000]) + CDFSketch().update(x[12_000:])
    >>> bool(abs(sketch.quantile(0.5)[0] - np.median(x)) < 0.01)
    True
    """

    kind = "cdf"

    def __init__(self, n_knots=60, n_features=None, *, exact_threshold=64, small_n=1000,
                 bounds=None, backend=None):
        self.n_knots = _check_int(n_knots, "n_knots", 4, 1 << 16)
        self.exact_threshold = _check_int(exact_threshold, "exact_threshold", 0, 2**31)
        self.small_n = _check_int(small_n, "small_n", 0, 2**40)
        self.backend = backend
        self.bounds = None if bounds is None else np.asarray(bounds, dtype=np.float64)
        self.n_features = None
        if n_features is not None:
            self._allocate(_check_int(n_features, "n_features", 1, 2**31))

    # ------------------------------------------------------------------ state
    def _allocate(self, d):
        check_bounds(self.bounds, d)
        self.n_features = d
        self.weight = np.zeros(d)
        self.n_nan = np.zeros(d, dtype=np.int64)
        self.n_rows = np.zeros(d, dtype=np.int64)
        self.integral = np.ones(d, dtype=bool)
        self.error = np.zeros((d, 2))
        self.knots = [(np.zeros(0), np.zeros(0)) for _ in range(d)]
        self.exact = [{} for _ in range(d)]

    def copy(self):
        """A deep copy."""
        new = CDFSketch.__new__(CDFSketch)
        new.__dict__.update(self.__dict__)
        if self.n_features is not None:
            for name in ("weight", "n_nan", "n_rows", "integral", "error"):
                setattr(new, name, getattr(self, name).copy())
            new.knots = [(x.copy(), c.copy()) for x, c in self.knots]
            new.exact = [None if t is None else dict(t) for t in self.exact]
        return new

    @property
    def is_empty(self):
        return self.n_features is None or not np.any(self.weight > 0)

    @property
    def min(self):
        """Smallest finite value per feature (``inf`` for a feature with none)."""
        return np.array([np.inf if x.size == 0 else x[0] + (1 if lat else 0)
                         for (x, _), lat in zip(self.knots, self.integral, strict=True)])

    @property
    def max(self):
        """Largest finite value per feature (``-inf`` for a feature with none)."""
        return np.array([-np.inf if x.size == 0 else x[-1] for x, _ in self.knots])

    def quantile_error(self):
        """Estimated mean rank error of :meth:`quantile` per feature (0 where exact).

        Each update or merge adds the mean rank distance of the vertices it drops from the
        thinned polyline (in weight units, weighted by the rank each stands for). Errors
        added at different steps partly cancel: their root sum of squares underestimates
        the error of a long stream (by 2-5x on the benchmark's columns after 100 batches)
        and their sum overestimates it (by 1.3-7x), so the estimate is the geometric mean
        of the two (0.6-2.4x the measured error there), over the feature's weight.
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            combined = np.sqrt(self.error[:, 0] * self.error[:, 1])
            out = np.where(self.weight > 0, combined / self.weight, 0.0)
        exact = np.array([bool(t) for t in self.exact], dtype=bool)
        return np.where(exact, 0.0, out)

    # ----------------------------------------------------------------- update
    def _validate(self, X, sample_weight):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[:, None] if (self.n_features in (None, 1)) else X[None, :]
        if X.ndim != 2:
            raise ValueError(f"X must be 1-D or 2-D; got an array of shape {X.shape}.")
        if self.n_features is not None and X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, but this sketch has "
                             f"n_features={self.n_features}.")
        if sample_weight is None:
            w = None  # unit weights: the sorted summary (see _summarise)
        else:
            w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
            if w.shape[0] != X.shape[0]:
                raise ValueError(f"sample_weight has {w.shape[0]} entries but X has "
                                 f"{X.shape[0]} rows.")
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError("sample_weight must be finite and non-negative; got "
                                 f"min={np.nanmin(w) if w.size else None!r}.")
        if self.bounds is not None and X.shape[0]:
            d = X.shape[1]
            low, high = self.bounds[:d, 0], self.bounds[:d, 1]
            bad = (X < low) | (X > high)
            if bad.any():
                j = int(np.nonzero(bad.any(axis=0))[0][0])
                raise ValueError(f"feature {j} has values outside bounds="
                                 f"{self.bounds[j].tolist()}; widen bounds.")
        return X, w

    def update(self, X, sample_weight=None):
        """Add rows of ``X`` (``(n, n_features)``; a 1-D array is one feature).

        The state is left unchanged if the input is rejected.
        """
        X, w = self._validate(X, sample_weight)
        self._update(X, w)
        return self

    def _update(self, X, w):
        """Add validated rows; all or nothing (infinities are found before any change)."""
        with restored_on_failure(self):
            if self.n_features is None:
                if self.bounds is not None and self.bounds.shape[0] != X.shape[1]:
                    raise ValueError(f"bounds has {self.bounds.shape[0]} rows but X has "
                                     f"{X.shape[1]} features.")
                self._allocate(X.shape[1])
            parts = self._summarise(X, w)
        # only now, with every column summarised and free of infinities, change state
        self._absorb(parts)

    def _kernels(self):
        return get_kernels(get_backend(self.backend).name)

    def _summarise(self, X, w):
        """Per column, a dict: ``stats`` (``SCAN_FIELDS``), ``build(lattice)`` making the
        batch's polyline (absent for a column without kept values) and the batch's exact
        ``table`` (``None`` when the state keeps none or the batch overflows it).

        Four summaries, all exact at their vertices: small batches are sorted whole;
        unit-weight ones up to ``COUNT_ROWS`` rows are sorted per column and read at
        ``N_SPLITTERS`` evenly spaced ranks; larger unit-weight ones are counted at
        sample quantiles in one pass without sorting (``_summarise_counted``); weighted
        ones are counted at sample quantiles in one pass by the ``summarise_columns``
        kernel (no argsort). ``w`` is ``None`` for unit weights.
        """
        n, d = X.shape
        if n <= EXACT_ROWS:
            unit = np.ones(n) if w is None else w
            return [self._summarise_exact(X[:, j], unit, j) for j in range(d)]
        if w is None and n > COUNT_ROWS:
            return self._summarise_counted(X)
        if w is None:
            # one copy, then every column is contiguous for the sort
            columns = X.T if X.flags.f_contiguous else np.ascontiguousarray(X.T)
            return [self._summarise_sorted(columns[j], j) for j in range(d)]
        summarise, _ = self._kernels()
        X = np.ascontiguousarray(X)
        splitters, n_split, forced = self._splitters(X, w)
        stats = np.empty((d, N_SCAN))
        r = splitters.shape[1] - MAX_STEPS
        below = np.empty((d, r + 1))
        equal = np.empty((d, r))
        n_equal = np.empty((d, r), dtype=np.int64)
        tables = search_table(splitters, n_split)
        summarise(X, X.view(np.uint64), w, splitters, n_split, *tables, stats, below,
                  equal, n_equal)
        if np.any(stats[:, 7] > 0):
            raise ValueError(_INF_MESSAGE)
        parts = []
        for j in range(d):
            if j in forced:
                parts.append(self._summarise_exact(X[:, j], w, j))
                continue
            k = int(n_split[j])
            part = {"stats": stats[j].copy(), "table": None}
            if stats[j, 1] > 0:
                args = (splitters[j, :k], below[j, :k + 1], equal[j, :k], n_equal[j, :k],
                        stats[j])
                part["build"] = lambda lattice, args=args: _from_counts(*args, lattice)
                part["table"] = self._table_from_counts(j, stats[j], args, X[:, j], w)
            parts.append(part)
        return parts

    def _summarise_counted(self, X):
        """Unit-weight summaries counted at sample quantiles in one pass (no sort).

        Each column's splitters are ``COUNT_SPLITTERS`` quantiles of a sample of about
        ``COUNT_SPLITTERS * COUNT_SAMPLE_PER_SPLITTER`` rows, thinned to one per cell of the
        counting kernels' lookup table (:func:`count_plan`); the counts at and between
        them are exact, as those of the weighted pass. Columns with few finite values in
        the sample, or whose splitters crowd the table, are sorted instead
        (``_summarise_sorted``). The numpy backend counts with the reference twin
        ``summarise_columns``: the same numbers.
        """
        n, d = X.shape
        stride = max(1, n // (COUNT_SPLITTERS * COUNT_SAMPLE_PER_SPLITTER))
        sample = X[::stride]
        n_cells = count_cells_for(d)
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
            fast.append(j)
            rows.append(values[keep])
            cells.append(cell[keep])
            plans.append(mapping)
        parts = [None] * d
        if fast:
            self._count_fast_columns(X, fast, rows, cells, plans, parts, n_cells)
        slow = [j for j in range(d) if parts[j] is None]
        if slow:
            columns = X[:, slow]
            columns = columns.T if columns.flags.f_contiguous else \
                np.ascontiguousarray(columns.T)
            for i, j in enumerate(slow):
                parts[j] = self._summarise_sorted(columns[i], j)
        return parts

    def _count_fast_columns(self, X, fast, rows, cells, plans, parts, n_cells):
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
        track = np.array([self.exact[j] is not None and row.size <= self.exact_threshold
                          for j, row in zip(fast, rows, strict=True)], dtype=bool)
        if get_backend(self.backend).name == "numpy":
            summarise, _ = self._kernels()
            stats = np.empty((m, N_SCAN))
            below = np.empty((m, k_max + 1))
            equal = np.empty((m, k_max))
            n_equal = np.empty((m, k_max), dtype=np.int64)
            sub = np.ascontiguousarray(sub)
            summarise(sub, sub.view(np.uint64), np.ones(n), splitters, n_split, *([None] * 5),
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
            raise ValueError(_INF_MESSAGE)
        for i, j in enumerate(fast):
            k = int(n_split[i])
            args = (splitters[i, :k], below[i, :k + 1], equal[i, :k], equal[i, :k],
                    stats[i])
            part = {"stats": stats[i].copy(), "table": None}
            part["build"] = lambda lattice, args=args: _from_counts(*args, lattice)
            if self.exact[j] is not None:
                part["table"] = self._table_from_counts(j, stats[i], args, sub[:, i],
                                                        None, spills[i])
            parts[j] = part

    def _splitters(self, X, w):
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

    def _summarise_sorted(self, col, j):
        """Exact summary of one unit-weight column at ``N_SPLITTERS`` order statistics."""
        s = np.sort(col)  # NaN sorts last
        n_valid = int(np.searchsorted(s, np.inf, side="right"))
        if n_valid and (s[0] == -np.inf or s[n_valid - 1] == np.inf):
            raise ValueError(_INF_MESSAGE)
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
        if self.exact[j] is not None:
            part["table"] = self._table_from_sorted(s, values)
        return part

    def _table_from_sorted(self, s, values):
        """The batch's exact table from its sorted kept values, unless it overflows."""
        if s.size > self.small_n and values.size > self.exact_threshold:
            return None
        starts = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
        if starts.size > self.exact_threshold and s.size > self.small_n:
            return None
        counts = np.diff(np.append(starts, s.size)).astype(np.float64)
        return dict(zip(s[starts].tolist(), counts.tolist(), strict=True))

    def _summarise_exact(self, col, w, j):
        """Exact summary of one column of a small batch (sorted distinct values)."""
        nan = np.isnan(col)
        inf = np.isinf(col)
        if inf.any():
            raise ValueError(_INF_MESSAGE)
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
            if self.exact[j] is not None and not (values.size > self.exact_threshold
                                                  and stats[1] > self.small_n):
                part["table"] = dict(zip(values.tolist(), weights.tolist(), strict=True))
        return part

    def _table_from_counts(self, j, stats, args, col, w, spill=None):
        """The batch's exact table when the state keeps one: read off the counts when
        every kept value is a splitter, or from the counts and ``spill`` (the unit-weight
        values equal to no splitter, from the counting pass), else (rarely) from the
        sorted column."""
        if self.exact[j] is None:
            return None
        splitters, below, equal, _, _ = args
        if stats[1] > self.small_n and splitters.size > self.exact_threshold:
            return None
        if spill is not None and spill.size:
            others, weights = np.unique(spill, return_counts=True)
            hit = equal > 0
            values = np.concatenate([splitters[hit], others])
            if stats[1] > self.small_n and values.size > self.exact_threshold:
                return None
            weights = np.concatenate([equal[hit], weights.astype(np.float64)])
            order = np.argsort(values, kind="stable")
            return dict(zip(values[order].tolist(), weights[order].tolist(), strict=True))
        if not np.any(below > 0):
            hit = equal > 0
            return dict(zip(splitters[hit].tolist(), equal[hit].tolist(), strict=True))
        if w is None:  # unit weights
            w = np.ones(col.shape[0])
        keep = np.isfinite(col) & (w > 0)
        head = col[keep][:4 * self.exact_threshold + 4]
        if stats[1] > self.small_n and np.unique(head).size > self.exact_threshold:
            return None
        values, inverse = np.unique(col[keep], return_inverse=True)
        if values.size > self.exact_threshold and stats[1] > self.small_n:
            return None
        weights = np.bincount(inverse, weights=w[keep], minlength=values.size)
        return dict(zip(values.tolist(), weights.tolist(), strict=True))

    def _combine_thin(self, pairs):
        """``_thin(*_combine(a, b), n_knots)`` for each ``(a, b)`` of ``pairs``: by the
        numba twin in one call, or column by column with the numpy reference."""
        if not pairs:
            return []
        if get_backend(self.backend).name == "numpy":
            _, simplify = self._kernels()
            return [_thin(*_combine(a, b), self.n_knots, simplify) for a, b in pairs]
        knots, errors = combine_thin([a for a, _ in pairs], [b for _, b in pairs],
                                     self.n_knots)
        return [(x, c, float(e)) for (x, c), e in zip(knots, errors, strict=True)]

    def _absorb(self, parts):
        """Add batch summaries to the state (in place; call only once they all passed)."""
        todo = []
        for j, part in enumerate(parts):
            stats = part["stats"]
            self.n_nan[j] += int(stats[0])
            if stats[1] == 0:
                continue
            self.n_rows[j] += int(stats[1])
            table = self.exact[j]
            if table is not None:
                new = part["table"]
                if new is None:
                    self.exact[j] = None
                else:
                    merged = dict(table)
                    for value, weight in new.items():
                        merged[value] = merged.get(value, 0.0) + weight
                    drop = len(merged) > self.exact_threshold and \
                        self.n_rows[j] > self.small_n
                    self.exact[j] = None if drop else merged
            batch_lattice = bool(stats[8])
            if not self.weight[j] > 0:
                lattice = batch_lattice
                state = (np.zeros(0), np.zeros(0))
            else:
                lattice = bool(self.integral[j]) and batch_lattice
                state = self.knots[j]
                if self.integral[j] and not lattice:
                    state = _lattice_to_line(*state)
            todo.append((j, lattice, stats[2], (state, part["build"](lattice))))
        done = self._combine_thin([pair for *_, pair in todo])
        for (j, lattice, weight, _), (x, c, error) in zip(todo, done, strict=True):
            self.knots[j] = (x, c)
            self.integral[j] = lattice
            self.weight[j] += weight
            self.error[j] = (float(np.hypot(self.error[j, 0], error)),
                             self.error[j, 1] + error)

    # ------------------------------------------------------------------ merge
    def _check_compatible(self, other):
        if not isinstance(other, CDFSketch):
            kind = getattr(other, "kind", None)
            what = type(other).__name__ + (f" (sketch={kind!r})" if kind else "")
            raise TypeError(f"can only merge a CDFSketch (sketch='cdf'), not a {what}.")
        for name in ("n_knots", "exact_threshold", "small_n"):
            if getattr(self, name) != getattr(other, name):
                raise ValueError(f"cannot merge sketches with {name}={getattr(self, name)!r} "
                                 f"and {name}={getattr(other, name)!r}.")
        if (self.bounds is None) != (other.bounds is None) or (
                self.bounds is not None and not np.array_equal(self.bounds, other.bounds)):
            raise ValueError("cannot merge sketches with different bounds.")
        if self.n_features is not None and other.n_features is not None \
                and self.n_features != other.n_features:
            raise ValueError(f"cannot merge sketches with n_features={self.n_features} and "
                             f"n_features={other.n_features}.")

    def merge(self, other):
        """Merge ``other`` into this sketch in place and return it (a refused merge
        changes nothing)."""
        self._check_compatible(other)
        if other.n_features is None:
            return self
        if self.n_features is None:
            self.__dict__.update(other.copy().__dict__)
            return self
        self.n_nan += other.n_nan
        self.n_rows += other.n_rows
        todo = []
        for j in range(self.n_features):
            if self.exact[j] is not None or other.exact[j] is not None:
                self.exact[j] = merge_exact_table(self.exact[j], other.exact[j],
                                                  self.n_rows[j], self.exact_threshold,
                                                  self.small_n)
            if not other.weight[j] > 0:
                continue
            if not self.weight[j] > 0:
                self.knots[j] = (other.knots[j][0].copy(), other.knots[j][1].copy())
                self.integral[j] = other.integral[j]
                self.weight[j] = other.weight[j]
                self.error[j] = other.error[j]
                continue
            a, b = self.knots[j], other.knots[j]
            lattice = bool(self.integral[j] and other.integral[j])
            if self.integral[j] and not lattice:
                a = _lattice_to_line(*a)
            if other.integral[j] and not lattice:
                b = _lattice_to_line(*b)
            todo.append((j, lattice, (a, b)))
        done = self._combine_thin([pair for *_, pair in todo])
        for (j, lattice, _), (x, c, error) in zip(todo, done, strict=True):
            self.knots[j] = (x, c)
            self.integral[j] = lattice
            self.weight[j] += other.weight[j]
            self.error[j] = (float(np.sqrt(self.error[j, 0] ** 2 + other.error[j, 0] ** 2
                                           + error ** 2)),
                             self.error[j, 1] + other.error[j, 1] + error)
        return self

    def __add__(self, other):
        if not isinstance(other, CDFSketch):
            return NotImplemented
        return self.copy().merge(other)

    # ---------------------------------------------------------------- queries
    def quantile(self, p, method="linear"):
        """Quantiles ``q(p)`` per feature, shape ``(len(p), n_features)`` (or
        ``(n_features,)`` for a scalar ``p``).

        Features with an exact table use numpy's ``method`` on it (``"linear"`` or
        ``"inverted_cdf"``); the others invert the polyline (the smallest value whose
        estimated CDF reaches ``p``; an integer on the lattice).
        """
        p_arr = np.atleast_1d(np.asarray(p, dtype=np.float64))
        if p_arr.ndim != 1 or np.any(~(p_arr >= 0) | ~(p_arr <= 1)):
            raise ValueError(f"p must be probabilities in [0, 1]; got {p!r}.")
        if self.is_empty:
            raise ValueError("the sketch has seen no finite values; quantiles are undefined.")
        q = np.column_stack([self.quantile_feature(j, p_arr, method)
                             for j in range(self.n_features)])
        return q[0] if np.ndim(p) == 0 else q

    def quantile_feature(self, j, p, method="linear"):
        """Quantiles of feature ``j`` at the probabilities ``p`` (NaN if it has no value)."""
        p = np.asarray(p, dtype=np.float64)
        table = self.exact[j]
        if table:
            return exact_quantiles(table, p, method)
        x, c = self.knots[j]
        if x.size == 0 or not c[-1] > 0:
            return np.full(p.shape, np.nan)
        return _invert(x, c, p, bool(self.integral[j]))

    def cdf(self, x):
        """Estimated CDF (weight at or below ``x`` over the total) per feature."""
        x = np.asarray(x, dtype=np.float64)
        x2 = x.reshape(-1, 1) if x.ndim <= 1 else x
        out = np.empty((x2.shape[0], self.n_features))
        for j in range(self.n_features):
            col = x2[:, j if x2.shape[1] > 1 else 0]
            kx, kc = self.knots[j]
            if self.integral[j]:
                col = np.floor(col)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, j] = _evaluate(kx, kc, col, "right") / self.weight[j]
        return out

    # ---------------------------------------------------------- serialisation
    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)

    def nbytes_per_feature(self):
        """Most bytes of state per feature, without the exact table: ``n_knots`` (value,
        cumulative weight) pairs, the vertex count, NaN and row counts, the lattice flag
        the weight and the two error sums, as :meth:`to_bytes` writes them
        (``16 n_knots + 64``: 1 KiB at the default 60).
        """
        return 16 * self.n_knots + 64

    def to_bytes(self):
        """A compact binary form: a small header, then per feature its counts, its
        vertices and, while it lives, its exact table as (value, weight) pairs."""
        buf = io.BytesIO()
        header = np.array([self.n_knots, -1 if self.n_features is None else self.n_features,
                           self.exact_threshold, self.small_n, self.bounds is not None],
                          dtype=np.int64)
        buf.write(_MAGIC)
        buf.write(header.tobytes())
        if self.n_features is not None:
            sizes = np.array([x.size for x, _ in self.knots], dtype=np.int64)
            for value in (sizes, self.n_nan, self.n_rows, self.integral.astype(np.int64)):
                buf.write(np.ascontiguousarray(value, dtype=np.int64).tobytes())
            buf.write(self.weight.tobytes())
            buf.write(self.error.tobytes())
            for x, c in self.knots:
                buf.write(x.tobytes())
                buf.write(c.tobytes())
            if self.bounds is not None:
                buf.write(self.bounds.tobytes())
            tables = np.array([-1 if t is None else len(t) for t in self.exact],
                              dtype=np.int64)
            buf.write(tables.tobytes())
            for table in self.exact:
                if table:
                    buf.write(np.array(list(table.items()), dtype=np.float64).tobytes())
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data):
        """Inverse of :meth:`to_bytes`."""
        data = bytes(data)
        if not data.startswith(_MAGIC):
            raise ValueError("data is not a CDFSketch serialisation (bad magic bytes).")
        pos = len(_MAGIC)

        def take(count, dtype=np.float64):
            nonlocal pos
            arr = np.frombuffer(data, dtype=dtype, count=count, offset=pos).copy()
            pos += arr.nbytes
            return arr

        n_knots, d, thr, small, has_bounds = (int(v) for v in take(5, np.int64))
        sketch = cls(n_knots, exact_threshold=thr, small_n=small)
        if d < 0:
            return sketch
        sizes, n_nan, n_rows, integral = (take(d, np.int64) for _ in range(4))
        weight, error = take(d), take(2 * d).reshape(d, 2)
        knots = []
        for size in sizes:
            x = take(int(size))
            knots.append((x, take(int(size))))
        sketch.bounds = take(2 * d).reshape(d, 2) if has_bounds else None
        tables = take(d, np.int64)
        sketch._allocate(d)
        exact = []
        for size in tables:
            if size < 0:
                exact.append(None)
            else:
                pairs = take(2 * int(size)).reshape(-1, 2)
                exact.append(dict(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist(),
                                      strict=True)))
        sketch.n_nan, sketch.n_rows = n_nan, n_rows
        sketch.integral = integral.astype(bool)
        sketch.weight, sketch.error = weight, error
        sketch.knots = knots
        sketch.exact = exact
        return sketch

    def __repr__(self):
        return f"CDFSketch(n_knots={self.n_knots}, n_features={self.n_features})"
