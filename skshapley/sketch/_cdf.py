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

import numpy as np

from skshapley.backends import get_backend
from skshapley.sketch._base import BaseSketch, Reader, check_int, merge_exact_table
from skshapley.sketch._cdf_fit import summarise
from skshapley.sketch._cdf_kernels import get_kernels
from skshapley.sketch._merge_kernels import combine_thin
from skshapley.sketch._polyline import _combine, _evaluate, _invert, _lattice_to_line, _thin
from skshapley.sketch._polyline_kernels import invert_columns
from skshapley.sketch._solvers import exact_quantiles
from skshapley.utils import restored_on_failure

__all__ = ["CDFSketch"]


class CDFSketch(BaseSketch):
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

    _MAGIC = b"SKCD1"
    _SETTINGS = ("n_knots", "exact_threshold", "small_n")
    _ARRAYS = ("weight", "n_nan", "n_rows", "integral", "error")
    # the skeleton's public methods, named here for the API pages (autodoc documents a
    # class's own members)
    update, merge = BaseSketch.update, BaseSketch.merge

    def __init__(self, n_knots=60, n_features=None, *, exact_threshold=64, small_n=1000,
                 bounds=None, backend=None):
        self.n_knots = check_int(n_knots, "n_knots", 4, 1 << 16)
        super().__init__(n_features, exact_threshold=exact_threshold, small_n=small_n,
                         bounds=bounds, backend=backend)

    # ------------------------------------------------------------------ state
    def _allocate_fields(self, d):
        self.weight = np.zeros(d)
        self.n_nan = np.zeros(d, dtype=np.int64)
        self.n_rows = np.zeros(d, dtype=np.int64)
        self.integral = np.ones(d, dtype=bool)
        self.error = np.zeros((d, 2))
        self.knots = [(np.zeros(0), np.zeros(0)) for _ in range(d)]

    def copy(self):
        """A deep copy."""
        new = super().copy()
        if self.n_features is not None:
            new.knots = [(x.copy(), c.copy()) for x, c in self.knots]
        return new

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
    def _weights(self, X, sample_weight):
        # unit weights are None: the batch summaries sort or count them (see _cdf_fit)
        return None if sample_weight is None else super()._weights(X, sample_weight)

    def _update(self, X, w):
        """Add validated rows; all or nothing (infinities are found before any change)."""
        with restored_on_failure(self):
            self._begin(X.shape[1])
            parts = summarise(self, X, w)
        # only now, with every column summarised and free of infinities, change state
        self._absorb(parts)

    def _kernels(self):
        return get_kernels(get_backend(self.backend).name)

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
        """Add batch summaries (``_cdf_fit.summarise``) to the state (in place; call only
        once they all passed)."""
        todo = []
        for j, part in enumerate(parts):
            stats = part["stats"]
            self.n_nan[j] += int(stats[0])
            if stats[1] == 0:
                continue
            self.n_rows[j] += int(stats[1])
            if self.exact[j] is not None:
                self.exact[j] = merge_exact_table(self.exact[j], part["table"],
                                                  self.n_rows[j], self.exact_threshold,
                                                  self.small_n)
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
    def _merge_state(self, other):
        """Add ``other``'s polylines (thinned), counts and tables to this state."""
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

    # ---------------------------------------------------------------- queries
    def quantile(self, p, method="linear"):
        """Quantiles ``q(p)`` per feature, shape ``(len(p), n_features)`` (or
        ``(n_features,)`` for a scalar ``p``).

        Features with an exact table use numpy's ``method`` on it (``"linear"`` or
        ``"inverted_cdf"``); the others invert the polyline (the smallest value whose
        estimated CDF reaches ``p``; an integer on the lattice).
        """
        if get_backend(self.backend).name == "numpy":
            return self._quantiles(p, lambda j, p_arr: self.quantile_feature(j, p_arr,
                                                                             method))
        return self._quantiles(p, None, lambda p_arr: self._read_quantiles(p_arr, method))

    def _read_quantiles(self, p, method="linear"):
        """:meth:`quantile` at the checked 1-D probabilities ``p`` of a sketch that has
        seen values, as a ``(len(p), n_features)`` array, by the numba builds."""
        tabled = [j for j, table in enumerate(self.exact) if table]
        if len(tabled) < self.n_features:
            # every polyline at once by the numba twin of _invert (the same bits): 1000
            # quantiles of one took 31 us in numpy calls
            q = invert_columns(self.knots, self.integral, p)
        else:
            q = np.empty((p.shape[0], self.n_features))
        for j in tabled:
            q[:, j] = self.quantile_feature(j, p, method)
        return q

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
        def feature(j, col):
            kx, kc = self.knots[j]
            if self.integral[j]:
                col = np.floor(col)
            with np.errstate(invalid="ignore", divide="ignore"):
                return _evaluate(kx, kc, col, "right") / self.weight[j]
        return self._cdf_columns(x, feature)

    # ---------------------------------------------------------- serialisation
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
        buf = self._writer([self.n_knots, -1 if self.n_features is None else self.n_features,
                            self.exact_threshold, self.small_n, self.bounds is not None])
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
            self._write_tables(buf)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data):
        """Inverse of :meth:`to_bytes`."""
        reader = Reader(data, cls._MAGIC, "CDFSketch")
        take = reader.take
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
        exact = reader.tables(d)
        sketch._allocate(d)
        sketch.n_nan, sketch.n_rows = n_nan, n_rows
        sketch.integral = integral.astype(bool)
        sketch.weight, sketch.error = weight, error
        sketch.knots = knots
        sketch.exact = exact
        return sketch

    def __repr__(self):
        return f"CDFSketch(n_knots={self.n_knots}, n_features={self.n_features})"
