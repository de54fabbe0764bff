"""Mergeable moment sketches, vectorised over features (Mitchell, Frank & Holmes 2021,
Sec. 3 and 6; central sums merged as in Pébay, Terriberry, Kolla & Bennett 2016).

Each feature keeps its total weight W, mean, scaled central power sums
``M_hat_k = sum w (x - mean)^k / 2^(e k)`` (k = 2..order, ``2^e`` a power-of-two unit
matched to the range), min, max, the exact weights at min, max and 0, the number of NaNs
skipped, and a value->weight table (the exact path) while the column has few distinct
values or few rows. Chunks are summarised exactly (two passes over data in cache, by the
``moment_chunk`` kernel) and merged with Pébay's formula, so any chunking or merge tree
gives the same state to round-off; the exact tables and the atoms merge exactly.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from skshapley.backends import get_backend
from skshapley.backends.sketch import N_MOMENT_FIELDS, unit_exponent
from skshapley.sketch._base import (
    INF_MESSAGE,
    BaseSketch,
    Reader,
    check_int,
    exact_table,
    merge_exact_table,
)
from skshapley.utils import restored_on_failure

__all__ = ["MomentSketch", "binomial_table"]

CHUNK_ROWS = 65_536
# Few columns: longer chunks (up to 2^20 values, 8 MiB, L3-resident during the kernel's
# passes), so that a long single column is not split into many merges whose fixed cost
# (about 0.4 ms each) would dominate; measured 2x on one 1e6-value column.
CHUNK_VALUES = 2**20
_TRANSFORMS = ("none", "arcsinh")
_SUMMATIONS = ("central", "naive")


@lru_cache(maxsize=64)
def _shift_tables(n):
    """Index k - i (clipped) and the masked binomials C(k, i) [i <= k] of the shift."""
    k = np.arange(n + 1)[:, None]
    i = np.arange(n + 1)[None, :]
    coef = binomial_table(n) * (i <= k)
    coef.setflags(write=False)
    return np.maximum(k - i, 0), coef


@lru_cache(maxsize=64)
def _binomial_cached(n):
    table = _binomial_uncached(n)
    table.setflags(write=False)
    return table


def binomial_table(n):
    """Binomial coefficients C(k, i), k, i <= n, from the integer recurrence (exact, unlike
    floating-point formulas)."""
    return _binomial_cached(n)


def _binomial_uncached(n):
    table = [[0] * (n + 1) for _ in range(n + 1)]
    for k in range(n + 1):
        table[k][0] = 1
        for i in range(1, k + 1):
            table[k][i] = table[k - 1][i - 1] + table[k - 1][i]
    return np.array(table, dtype=np.float64)


def update_together(sketches, X, w):
    """Add the validated rows ``X`` (weights ``w``) to several sketches of the same
    columns: each chunk is transposed once for all of them, and nothing merges until
    every chunk is summarised and free of infinities (a rejected call changes no state).
    """
    d = X.shape[1]
    with restored_on_failure(*sketches):
        for sketch in sketches:
            sketch._begin(d)
        rows = max(CHUNK_ROWS, CHUNK_VALUES // max(d, 1))
        parts = [[] for _ in sketches]
        for start in range(0, X.shape[0], rows):
            cols = np.ascontiguousarray(X[start:start + rows].T)
            for sketch, done in zip(sketches, parts, strict=True):
                done.append(sketch._summarise(cols, w[start:start + rows]))
        # (a column with no finite, weighted value keeps its empty range [inf, -inf])
        if any(np.isinf(part.min[part.n_rows > 0]).any()
               or np.isinf(part.max[part.n_rows > 0]).any()
               for done in parts for part in done):
            raise ValueError(INF_MESSAGE)
    # merging updates arrays in place, which restored_on_failure could not undo, so it
    # runs only after every chunk has passed
    for sketch, done in zip(sketches, parts, strict=True):
        for part in done:
            sketch._merge_state(part)


class MomentSketch(BaseSketch):
    """Per-feature moment sketches of a stream of columns.

    Parameters
    ----------
    order : int, default=10
        Highest central moment kept (``l``), 1 to 40.
    n_features : int, optional
        Fixed by the first update when omitted.
    transform : {"none", "arcsinh"}, default="none"
        Applied to values before they are summarised.
    summation : {"central", "naive"}, default="central"
        ``"naive"`` keeps raw power sums ``S_k`` instead (unstable for data far from
        0); kept only for comparison.
    exact_threshold : int, default=64
        Keep an exact value->weight table while a feature has at most this many
        distinct values ...
    small_n : int, default=1000
        ... or at most this many rows. Once both are exceeded the table is dropped for
        good (the rule is monotone under union, so merge order does not matter).
    bounds : array-like of shape (n_features, 2), optional
        Fixed per-feature (low, high) bounds; when given the sketch also keeps the
        cosine sums ``sum w cos(k u)``, ``u = pi (x - low) / (high - low)``, for the
        one-pass cosine solver. Values outside the bounds raise ``ValueError``.
    backend : str, optional
        Kernel backend (default: the configured one).

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.sketch import MomentSketch
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(1000.0, 1.0, size=(10_000, 1))
    >>> a = MomentSketch(order=6).update(x[:3000])
    >>> b = MomentSketch(order=6).update(x[3000:])
    >>> merged = a + b
    >>> bool(np.allclose(merged.mean, x.mean(axis=0), rtol=1e-15, atol=0))
    True
    >>> round(float(merged.quantile(0.5)[0]), 1)
    1000.0
    """

    kind = "moments"
    _MAGIC = b"SKMS1"
    _SETTINGS = ("order", "transform", "summation")
    _ARRAYS = ("weight", "mean", "exp2", "m_hat", "power_sums", "min", "max", "w_at_min",
               "w_at_max", "w_zero", "n_nan", "n_rows", "cos_sums")
    # the skeleton's public methods, named here for the API pages (autodoc documents a
    # class's own members)
    update, merge, copy = BaseSketch.update, BaseSketch.merge, BaseSketch.copy

    def __init__(self, order=10, n_features=None, *, transform="none", summation="central",
                 exact_threshold=64, small_n=1000, bounds=None, backend=None):
        self.order = check_int(order, "order", 1, 40)
        if transform not in _TRANSFORMS:
            raise ValueError(f"transform={transform!r} is invalid: use one of {_TRANSFORMS}.")
        if summation not in _SUMMATIONS:
            raise ValueError(f"summation={summation!r} is invalid: use one of {_SUMMATIONS}.")
        self.transform = transform
        self.summation = summation
        super().__init__(n_features, exact_threshold=exact_threshold, small_n=small_n,
                         bounds=bounds, backend=backend)

    # ------------------------------------------------------------------ state
    def _allocate_fields(self, d):
        self.weight = np.zeros(d)
        self.mean = np.zeros(d)
        self.exp2 = np.zeros(d, dtype=np.int64)
        self.m_hat = np.zeros((d, self.order))
        self.power_sums = np.zeros((d, self.order + 1)) if self.summation == "naive" else None
        self.min = np.full(d, np.inf)
        self.max = np.full(d, -np.inf)
        self.w_at_min = np.zeros(d)
        self.w_at_max = np.zeros(d)
        self.w_zero = np.zeros(d)
        self.n_nan = np.zeros(d, dtype=np.int64)
        self.n_rows = np.zeros(d, dtype=np.int64)
        self.cos_sums = None if self.bounds is None else np.zeros((d, self.order))

    # ----------------------------------------------------------------- update
    def _weights(self, X, sample_weight):
        # Without weights an infinity shows in the chunk kernels' min/max (checked before
        # anything merges, in update_together); a zero weight would hide it from them.
        if sample_weight is None:
            return np.ones(X.shape[0])
        if np.isinf(X).any():
            raise ValueError(INF_MESSAGE)
        return super()._weights(X, sample_weight)

    def _transformed(self, X):
        if self.transform == "arcsinh" and self.bounds is not None:
            # bounds are in transformed units; otherwise arcsinh is applied per chunk
            X = get_backend(self.backend).arcsinh(np.ascontiguousarray(X), np.empty(X.shape))
        return X

    def _update(self, X, w):
        update_together([self], X, w)

    def _summarise(self, cols, w):
        """A sketch of one chunk, given as contiguous columns ``(d, rows)`` that may be
        shared with other sketches (exact two-pass moments by the backend kernel)."""
        d = cols.shape[0]
        part = MomentSketch.__new__(MomentSketch)
        part.__dict__.update(self.__dict__)
        part._allocate(d)
        if self.transform == "arcsinh" and self.bounds is None:  # see _validate
            cols = get_backend(self.backend).arcsinh(cols, np.empty_like(cols))
        out = np.empty((d, N_MOMENT_FIELDS + self.order))
        get_backend(self.backend).moment_chunk(cols, np.ascontiguousarray(w), self.order, out)
        part.weight, part.mean = out[:, 0].copy(), out[:, 1].copy()
        part.exp2 = out[:, 2].astype(np.int64)
        part.min, part.max = out[:, 3].copy(), out[:, 4].copy()
        part.w_at_min, part.w_at_max, part.w_zero = out[:, 5].copy(), out[:, 6].copy(), \
            out[:, 7].copy()
        part.n_nan = out[:, 8].astype(np.int64)
        part.n_rows = out[:, 9].astype(np.int64)
        part.m_hat = out[:, N_MOMENT_FIELDS:].copy()
        alive = [j for j in range(d) if self.exact[j] is not None]
        if part.summation == "naive" or part.cos_sums is not None:
            keep = ~np.isnan(cols) & (w > 0)
        if part.summation == "naive":
            powers = np.where(keep, cols, 0.0)
            acc = np.where(keep, w, 0.0)
            for k in range(self.order + 1):
                part.power_sums[:, k] = acc.sum(axis=1)
                acc = acc * powers
        if part.cos_sums is not None:
            low, high = self.bounds[:, :1], self.bounds[:, 1:]
            u = np.pi * (np.where(keep, cols, low) - low) / (high - low)
            wk = np.where(keep, w, 0.0)
            for k in range(1, self.order + 1):
                part.cos_sums[:, k - 1] = (wk * np.cos(k * u)).sum(axis=1)
        for j in range(d):
            if j not in alive:
                part.exact[j] = None
        for j in alive:
            col = cols[j]
            if part.n_rows[j] > self.small_n and self.exact_threshold < col.size:
                # cheap rejection: enough distinct finite values in a prefix already
                head = col[:4 * self.exact_threshold + 4]
                if np.unique(head[~np.isnan(head)]).size > self.exact_threshold:
                    part.exact[j] = None
                    continue
            ok = ~np.isnan(col) & (w > 0)
            col = col[ok]
            values, inverse = np.unique(col, return_inverse=True)
            if self._overflows(values.size, col.size):
                part.exact[j] = None
                continue
            weights = np.bincount(inverse, weights=w[ok], minlength=values.size)
            part.exact[j] = exact_table(values, weights)
        return part

    # ------------------------------------------------------------------ merge
    def _merge_state(self, b):
        """Merge the state ``b`` in (Pébay, eq. 12): also each chunk of an update."""
        a = self
        if not np.any(a.weight > 0) and not any(a.exact) and not np.any(a.n_nan) \
                and not np.any(a.n_rows):
            # empty state: take b's arrays (the first chunk of a stream)
            for name in self._ARRAYS:
                value = getattr(b, name)
                setattr(self, name, None if value is None else value.copy())
            self.exact = [None if t is None else dict(t) for t in b.exact]
            return
        wa, wb = a.weight, b.weight
        w = wa + wb
        low = np.minimum(a.min, b.min)
        high = np.maximum(a.max, b.max)
        e = np.array([unit_exponent(lo, hi) for lo, hi in zip(low, high, strict=True)],
                     dtype=np.int64)
        top = self.order
        ks = np.arange(1, top + 1)
        ma = np.ldexp(a.m_hat, (a.exp2 - e)[:, None] * ks[None, :])
        mb = np.ldexp(b.m_hat, (b.exp2 - e)[:, None] * ks[None, :])
        both = (wa > 0) & (wb > 0)
        safe_w = np.where(w > 0, w, 1.0)
        delta = np.where(both, b.mean - a.mean, 0.0)
        mean = np.where(wa > 0, np.where(wb > 0, a.mean + wb * delta / safe_w, a.mean), b.mean)
        mean = np.minimum(np.maximum(mean, np.where(w > 0, low, mean)),
                          np.where(w > 0, high, mean))
        # Shift both parts to the rounded merged mean with the general binomial formula
        # M_k = sum_i C(k, i) [M^A_{k-i} a^i + M^B_{k-i} b^i], a = mu_A - mu, b = mu_B - mu.
        # With M_1 = 0 and exact a, b this is Pébay's eq. 12; keeping M_1 (the residual
        # of the rounded mean) makes it exact for any rounding of the stored means.
        ca = np.ldexp(np.where(both, a.mean - mean, 0.0), -e)
        cb = np.ldexp(np.where(both, b.mean - mean, 0.0), -e)
        index, coef = _shift_tables(top)
        full_a = np.concatenate([wa[:, None], ma], axis=1)
        full_b = np.concatenate([wb[:, None], mb], axis=1)
        powers = np.arange(top + 1)
        pa = ca[:, None] ** powers[None, :]
        pb = cb[:, None] ** powers[None, :]
        m = (np.einsum("dki,ki,di->dk", full_a[:, index], coef, pa)
             + np.einsum("dki,ki,di->dk", full_b[:, index], coef, pb))[:, 1:]
        self.m_hat = np.where(both[:, None], m, np.where((wb > 0)[:, None], mb, ma))
        self.mean = mean
        self.exp2 = e
        self.weight = w
        self.w_at_min = np.where(a.min < b.min, a.w_at_min,
                                 np.where(b.min < a.min, b.w_at_min, a.w_at_min + b.w_at_min))
        self.w_at_max = np.where(a.max > b.max, a.w_at_max,
                                 np.where(b.max > a.max, b.w_at_max, a.w_at_max + b.w_at_max))
        self.min, self.max = low, high
        self.w_zero = a.w_zero + b.w_zero
        self.n_nan = a.n_nan + b.n_nan
        self.n_rows = a.n_rows + b.n_rows
        if self.power_sums is not None:
            self.power_sums = a.power_sums + b.power_sums
        if self.cos_sums is not None:
            self.cos_sums = a.cos_sums + b.cos_sums
        self.exact = [merge_exact_table(ta, tb, self.n_rows[j], self.exact_threshold,
                                        self.small_n)
                      for j, (ta, tb) in enumerate(zip(a.exact, b.exact, strict=True))]

    # ---------------------------------------------------------- serialisation
    def to_bytes(self):
        """A compact binary form: a small header, then float64 fields per feature.

        Features whose exact table survived append it as (value, weight) pairs.
        """
        buf = self._writer([self.order, -1 if self.n_features is None else self.n_features,
                            _TRANSFORMS.index(self.transform),
                            _SUMMATIONS.index(self.summation), self.exact_threshold,
                            self.small_n, self.bounds is not None])
        if self.n_features is not None:
            for name in self._ARRAYS:
                value = getattr(self, name)
                if value is not None and name != "exp2":  # exp2 follows from min, max
                    buf.write(np.ascontiguousarray(value).tobytes())
            if self.bounds is not None:
                buf.write(self.bounds.tobytes())
            self._write_tables(buf)
        return buf.getvalue()

    def nbytes_per_feature(self):
        """Bytes of moment state per feature, without the exact table and the counters.

        W, mean, min, max, the weights at min, max and 0, and M_1..M_l: ``order + 7``
        doubles (the unit exponent follows from min and max): 136 bytes at order 10,
        176 at 15.
        """
        return 8 * (self.order + 7)

    @classmethod
    def from_bytes(cls, data):
        """Inverse of :meth:`to_bytes`."""
        reader = Reader(data, cls._MAGIC, "MomentSketch")
        order, d, t, s, thr, small, has_bounds = (int(v) for v in reader.take(7, np.int64))
        sketch = cls(order, transform=_TRANSFORMS[t], summation=_SUMMATIONS[s],
                     exact_threshold=thr, small_n=small)
        if d < 0:
            return sketch
        shapes = {"weight": (d,), "mean": (d,), "exp2": (d,), "m_hat": (d, order),
                  "power_sums": (d, order + 1), "min": (d,), "max": (d,), "w_at_min": (d,),
                  "w_at_max": (d,), "w_zero": (d,), "n_nan": (d,), "n_rows": (d,),
                  "cos_sums": (d, order)}
        ints = {"exp2", "n_nan", "n_rows"}
        values = {}
        for name in cls._ARRAYS:
            if name == "exp2":
                continue
            if name == "power_sums" and s != 1 or name == "cos_sums" and not has_bounds:
                values[name] = None
                continue
            shape = shapes[name]
            values[name] = reader.take(math.prod(shape),
                                       np.int64 if name in ints else np.float64).reshape(shape)
        bounds = reader.take(2 * d).reshape(d, 2) if has_bounds else None
        exact = reader.tables(d)
        sketch.bounds = bounds
        sketch._allocate(d)
        for name, value in values.items():
            setattr(sketch, name, value)
        sketch.exp2 = np.array([unit_exponent(lo, hi) for lo, hi in
                                zip(sketch.min, sketch.max, strict=True)], dtype=np.int64)
        sketch.exact = exact
        return sketch

    # ---------------------------------------------------------------- queries
    def chebyshev_moments(self):
        """Per-feature moments in the [-1, 1] domain: (mu_tilde, valid order).

        Returns ``mu`` of shape ``(n_features, order + 1)`` with ``mu[:, k] = E[y^k]``,
        ``y = 2 (x - min) / (max - min) - 1``.
        """
        from skshapley.sketch._solvers import scaled_moments, scaled_moments_naive

        if self.summation == "naive":
            return scaled_moments_naive(self.power_sums, self.min, self.max)
        return scaled_moments(self.weight, self.mean, self.exp2, self.m_hat, self.min,
                              self.max)

    def quantile(self, p, **solver_options):
        """Quantiles ``q(p)`` per feature, shape ``(len(p), n_features)`` (or
        ``(n_features,)`` for a scalar ``p``). See :func:`skshapley.sketch.solve_quantiles`.
        """
        from skshapley.sketch._solvers import solve_quantiles

        return self._quantiles(
            p, lambda j, p_arr: solve_quantiles(self, j, p_arr, **solver_options)[0])

    def cdf(self, x, **solver_options):
        """Estimated CDF at ``x`` per feature (interpolated from 2049 quantiles)."""
        grid = np.linspace(0.0, 1.0, 2049)
        q = self.quantile(grid, **solver_options)

        def feature(j, col):
            if self.transform == "arcsinh":
                return np.interp(np.arcsinh(col), np.arcsinh(q[:, j]), grid)
            return np.interp(col, q[:, j], grid)
        return self._cdf_columns(x, feature)

    def __repr__(self):
        return (f"MomentSketch(order={self.order}, n_features={self.n_features}, "
                f"transform={self.transform!r}, summation={self.summation!r})")
