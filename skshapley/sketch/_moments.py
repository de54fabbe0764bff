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

import io
import math
from functools import lru_cache
from numbers import Integral

import numpy as np

from skshapley.backends import get_backend
from skshapley.backends._numpy import N_MOMENT_FIELDS, _unit_exponent
from skshapley.utils._state import restored_on_failure

__all__ = ["MomentSketch", "binomial_table"]

CHUNK_ROWS = 65_536
# Few columns: longer chunks (up to 2^20 values, 8 MiB, L3-resident during the kernel's
# passes), so that a long single column is not split into many merges whose fixed cost
# (about 0.4 ms each) would dominate; measured 2x on one 1e6-value column.
CHUNK_VALUES = 2**20
_MAGIC = b"SKMS1"
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


def _check_int(value, name, low, high):
    if isinstance(value, bool) or not isinstance(value, Integral) or not low <= value <= high:
        raise ValueError(f"{name}={value!r} is invalid: it must be an integer in "
                         f"[{low}, {high}].")
    return int(value)


def check_bounds(bounds, d):
    """Refuse ``bounds`` (or None) that are not d finite (low, high) pairs, low < high."""
    if bounds is not None and (bounds.shape != (d, 2) or not np.all(np.isfinite(bounds))
                               or not np.all(bounds[:, 1] > bounds[:, 0])):
        raise ValueError(f"bounds must be finite (low, high) pairs with low < high, "
                         f"of shape ({d}, 2); got {bounds.tolist()!r}.")


def merge_exact_table(ta, tb, n_rows, exact_threshold, small_n):
    """The exact value table of two merged sketches of one column (None once either has
    none, or once it outgrows ``exact_threshold`` distinct values past ``small_n`` rows)."""
    if ta is None or tb is None:
        return None
    table = dict(ta)
    for value, weight in tb.items():
        table[value] = table.get(value, 0.0) + weight
    if len(table) > exact_threshold and n_rows > small_n:
        return None
    return table


_INF_MESSAGE = "X contains infinity: only finite values and NaN (skipped) are accepted."


def update_together(sketches, X, w):
    """Add the validated rows ``X`` (weights ``w``) to several sketches of the same
    columns: each chunk is transposed once for all of them, and nothing merges until
    every chunk is summarised and free of infinities (a rejected call changes no state).
    """
    d = X.shape[1]
    with restored_on_failure(*sketches):
        for sketch in sketches:
            if sketch.n_features is None:
                if sketch.bounds is not None and sketch.bounds.shape[0] != d:
                    raise ValueError(f"bounds has {sketch.bounds.shape[0]} rows but X has "
                                     f"{d} features.")
                sketch._allocate(d)
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
            raise ValueError(_INF_MESSAGE)
    # merging updates arrays in place, which restored_on_failure could not undo, so it
    # runs only after every chunk has passed
    for sketch, done in zip(sketches, parts, strict=True):
        for part in done:
            sketch._merge_state(part)


class MomentSketch:
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

    def __init__(self, order=10, n_features=None, *, transform="none", summation="central",
                 exact_threshold=64, small_n=1000, bounds=None, backend=None):
        self.order = _check_int(order, "order", 1, 40)
        if transform not in _TRANSFORMS:
            raise ValueError(f"transform={transform!r} is invalid: use one of {_TRANSFORMS}.")
        if summation not in _SUMMATIONS:
            raise ValueError(f"summation={summation!r} is invalid: use one of {_SUMMATIONS}.")
        self.transform = transform
        self.summation = summation
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
        self.exact = [{} for _ in range(d)]
        self.cos_sums = None if self.bounds is None else np.zeros((d, self.order))

    def _fields(self):
        return ("weight", "mean", "exp2", "m_hat", "power_sums", "min", "max", "w_at_min",
                "w_at_max", "w_zero", "n_nan", "n_rows", "cos_sums")

    def copy(self):
        """A deep copy."""
        new = MomentSketch.__new__(MomentSketch)
        new.__dict__.update(self.__dict__)
        if self.n_features is not None:
            for name in self._fields():
                value = getattr(self, name)
                setattr(new, name, None if value is None else value.copy())
            new.exact = [None if t is None else dict(t) for t in self.exact]
        return new

    @property
    def is_empty(self):
        return self.n_features is None or not np.any(self.weight > 0)

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
        # Without weights an infinity shows in the chunk kernels' min/max (checked before
        # anything merges, in update_together); a zero weight would hide it from them.
        if sample_weight is None:
            w = np.ones(X.shape[0])
        else:
            if np.isinf(X).any():
                raise ValueError(_INF_MESSAGE)
            w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
            if w.shape[0] != X.shape[0]:
                raise ValueError(f"sample_weight has {w.shape[0]} entries but X has "
                                 f"{X.shape[0]} rows.")
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError("sample_weight must be finite and non-negative; got "
                                 f"min={np.nanmin(w) if w.size else None!r}.")
        if self.transform == "arcsinh" and self.bounds is not None:
            # bounds are in transformed units; otherwise arcsinh is applied per chunk
            X = get_backend(self.backend).arcsinh(np.ascontiguousarray(X), np.empty(X.shape))
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
        update_together([self], X, w)
        return self

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
            if values.size > self.exact_threshold and col.size > self.small_n:
                part.exact[j] = None
                continue
            weights = np.bincount(inverse, weights=w[ok], minlength=values.size)
            part.exact[j] = dict(zip(values.tolist(), weights.tolist(), strict=True))
        return part

    # ------------------------------------------------------------------ merge
    def _check_compatible(self, other):
        if not isinstance(other, MomentSketch):
            kind = getattr(other, "kind", None)
            what = type(other).__name__ + (f" (sketch={kind!r})" if kind else "")
            raise TypeError(f"can only merge a MomentSketch (sketch='moments'), not a "
                            f"{what}.")
        for name in ("order", "transform", "summation"):
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
        """Merge ``other`` into this sketch in place (Pébay, eq. 12) and return it."""
        self._check_compatible(other)
        if other.n_features is None:
            return self
        if self.n_features is None:
            self.__dict__.update(other.copy().__dict__)
            return self
        self._merge_state(other)
        return self

    def __add__(self, other):
        if not isinstance(other, MomentSketch):
            return NotImplemented
        return self.copy().merge(other)

    def _merge_state(self, b):
        a = self
        if not np.any(a.weight > 0) and not any(a.exact) and not np.any(a.n_nan) \
                and not np.any(a.n_rows):
            # empty state: take b's arrays (the first chunk of a stream)
            for name in self._fields():
                value = getattr(b, name)
                setattr(self, name, None if value is None else value.copy())
            self.exact = [None if t is None else dict(t) for t in b.exact]
            return
        wa, wb = a.weight, b.weight
        w = wa + wb
        low = np.minimum(a.min, b.min)
        high = np.maximum(a.max, b.max)
        e = np.array([_unit_exponent(lo, hi) for lo, hi in zip(low, high, strict=True)],
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
    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)

    def to_bytes(self):
        """A compact binary form: a small header, then float64 fields per feature.

        Features whose exact table survived append it as (value, weight) pairs.
        """
        buf = io.BytesIO()
        header = np.array([self.order, -1 if self.n_features is None else self.n_features,
                           _TRANSFORMS.index(self.transform),
                           _SUMMATIONS.index(self.summation), self.exact_threshold,
                           self.small_n, self.bounds is not None], dtype=np.int64)
        buf.write(_MAGIC)
        buf.write(header.tobytes())
        if self.n_features is not None:
            for name in self._fields():
                value = getattr(self, name)
                if value is not None and name != "exp2":  # exp2 follows from min, max
                    buf.write(np.ascontiguousarray(value).tobytes())
            if self.bounds is not None:
                buf.write(self.bounds.tobytes())
            sizes = np.array([-1 if t is None else len(t) for t in self.exact], dtype=np.int64)
            buf.write(sizes.tobytes())
            for table in self.exact:
                if table:
                    buf.write(np.array(list(table.items()), dtype=np.float64).tobytes())
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
        data = bytes(data)
        if not data.startswith(_MAGIC):
            raise ValueError("data is not a MomentSketch serialisation (bad magic bytes).")
        pos = len(_MAGIC)
        header = np.frombuffer(data, dtype=np.int64, count=7, offset=pos)
        pos += 56
        order, d, t, s, thr, small, has_bounds = (int(v) for v in header)
        sketch = cls(order, transform=_TRANSFORMS[t], summation=_SUMMATIONS[s],
                     exact_threshold=thr, small_n=small)
        if d < 0:
            return sketch

        def take(count, dtype=np.float64):
            nonlocal pos
            arr = np.frombuffer(data, dtype=dtype, count=count, offset=pos).copy()
            pos += arr.nbytes
            return arr

        shapes = {"weight": (d,), "mean": (d,), "exp2": (d,), "m_hat": (d, order),
                  "power_sums": (d, order + 1), "min": (d,), "max": (d,), "w_at_min": (d,),
                  "w_at_max": (d,), "w_zero": (d,), "n_nan": (d,), "n_rows": (d,),
                  "cos_sums": (d, order)}
        ints = {"exp2", "n_nan", "n_rows"}
        values = {}
        for name in sketch._fields():
            if name == "exp2":
                continue
            if name == "power_sums" and s != 1 or name == "cos_sums" and not has_bounds:
                values[name] = None
                continue
            shape = shapes[name]
            values[name] = take(math.prod(shape), np.int64 if name in ints else np.float64)\
                .reshape(shape)
        bounds = take(2 * d).reshape(d, 2) if has_bounds else None
        sizes = take(d, np.int64)
        exact = []
        for size in sizes:
            if size < 0:
                exact.append(None)
            else:
                pairs = take(2 * int(size)).reshape(-1, 2)
                exact.append(dict(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist(),
                                      strict=True)))
        sketch.bounds = bounds
        sketch._allocate(d)
        for name, value in values.items():
            setattr(sketch, name, value)
        sketch.exp2 = np.array([_unit_exponent(lo, hi) for lo, hi in
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

        p_arr = np.atleast_1d(np.asarray(p, dtype=np.float64))
        if p_arr.ndim != 1 or np.any(~(p_arr >= 0) | ~(p_arr <= 1)):
            raise ValueError(f"p must be probabilities in [0, 1]; got {p!r}.")
        if self.is_empty:
            raise ValueError("the sketch has seen no finite values; quantiles are undefined.")
        q = np.column_stack([solve_quantiles(self, j, p_arr, **solver_options)[0]
                             for j in range(self.n_features)])
        return q[0] if np.ndim(p) == 0 else q

    def cdf(self, x, **solver_options):
        """Estimated CDF at ``x`` per feature (interpolated from 2049 quantiles)."""
        grid = np.linspace(0.0, 1.0, 2049)
        q = self.quantile(grid, **solver_options)
        x = np.asarray(x, dtype=np.float64)
        x2 = x.reshape(-1, 1) if x.ndim <= 1 else x
        out = np.empty((x2.shape[0], self.n_features))
        for j in range(self.n_features):
            col = x2[:, j if x2.shape[1] > 1 else 0]
            if self.transform == "arcsinh":
                col = np.arcsinh(col)
                qj = np.arcsinh(q[:, j])
            else:
                qj = q[:, j]
            out[:, j] = np.interp(col, qj, grid)
        return out

    def __repr__(self):
        return (f"MomentSketch(order={self.order}, n_features={self.n_features}, "
                f"transform={self.transform!r}, summation={self.summation!r})")
