"""What the moment and CDF sketches share: the checks of their settings and batches, the
all-or-nothing update, merging and its refusals, exact value tables, the checks of
their queries, pickling, and the header and tables of their binary forms.

:class:`BaseSketch` is the skeleton; :class:`~skshapley.sketch.MomentSketch` and
:class:`~skshapley.sketch.CDFSketch` fill in how a batch is summarised and how two
states merge.
"""

from __future__ import annotations

import io
from numbers import Integral

import numpy as np

__all__ = ["INF_MESSAGE", "BaseSketch", "Reader", "check_bounds", "check_int",
           "exact_table", "merge_exact_table"]

INF_MESSAGE = "X contains infinity: only finite values and NaN (skipped) are accepted."


def check_int(value, name, low, high):
    """``value`` as an int, or a ``ValueError`` unless it is an integer in [low, high]."""
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


def exact_table(values, weights):
    """A value->weight table from distinct ``values`` and their ``weights``."""
    return dict(zip(values.tolist(), weights.tolist(), strict=True))


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


def check_weights(sample_weight, n_rows):
    """``sample_weight`` as a float64 vector of ``n_rows`` finite, non-negative weights."""
    w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    if w.shape[0] != n_rows:
        raise ValueError(f"sample_weight has {w.shape[0]} entries but X has "
                         f"{n_rows} rows.")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and non-negative; got "
                         f"min={np.nanmin(w) if w.size else None!r}.")
    return w


class Reader:
    """Reads a sketch's binary form (see ``to_bytes``) front to back."""

    def __init__(self, data, magic, name):
        data = bytes(data)
        if not data.startswith(magic):
            raise ValueError(f"data is not a {name} serialisation (bad magic bytes).")
        self.data = data
        self.pos = len(magic)

    def take(self, count, dtype=np.float64):
        """The next ``count`` values of ``dtype`` (a copy)."""
        arr = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos).copy()
        self.pos += arr.nbytes
        return arr

    def tables(self, d):
        """The ``d`` exact tables written by :meth:`BaseSketch._write_tables`."""
        exact = []
        for size in self.take(d, np.int64):
            if size < 0:
                exact.append(None)
            else:
                pairs = self.take(2 * int(size)).reshape(-1, 2)
                exact.append(dict(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist(),
                                      strict=True)))
        return exact


class BaseSketch:
    """Per-feature mergeable sketches of a stream of columns: the shared skeleton.

    Every sketch keeps, per feature, the weight of the finite values seen (``weight``),
    the NaNs skipped (``n_nan``), the rows kept (``n_rows``) and an exact value->weight
    table (``exact``) while the feature has at most ``exact_threshold`` distinct values
    or ``small_n`` rows (``None`` once dropped, for good).

    A subclass sets ``kind``, ``_MAGIC`` (its binary form's first bytes), ``_SETTINGS``
    (what two sketches must share to merge, after its class) and ``_ARRAYS`` (its
    per-feature arrays, copied by :meth:`copy`), and implements ``_allocate_fields(d)``,
    ``_update(X, w)`` (add validated rows, all or nothing) and ``_merge_state(other)``
    (add a compatible, non-empty state in place). ``_weights`` and ``_transformed`` adapt
    the validation of a batch.
    """

    kind = None
    _MAGIC = b""
    _SETTINGS = ()
    _ARRAYS = ()

    def __init__(self, n_features=None, *, exact_threshold=64, small_n=1000, bounds=None,
                 backend=None):
        self.exact_threshold = check_int(exact_threshold, "exact_threshold", 0, 2**31)
        self.small_n = check_int(small_n, "small_n", 0, 2**40)
        self.backend = backend
        self.bounds = None if bounds is None else np.asarray(bounds, dtype=np.float64)
        self.n_features = None
        if n_features is not None:
            self._allocate(check_int(n_features, "n_features", 1, 2**31))

    # ------------------------------------------------------------------ state
    def _allocate(self, d):
        """Empty state for ``d`` features."""
        check_bounds(self.bounds, d)
        self.n_features = d
        self._allocate_fields(d)
        self.exact = [{} for _ in range(d)]

    def _allocate_fields(self, d):
        raise NotImplementedError

    def _overflows(self, n_values, n_rows):
        """Whether a table of ``n_values`` distinct values over ``n_rows`` rows is past
        both limits (and so dropped)."""
        return n_values > self.exact_threshold and n_rows > self.small_n

    def _begin(self, d):
        """Allocate for ``d`` features on the first batch (refusing mismatched bounds)."""
        if self.n_features is None:
            if self.bounds is not None and self.bounds.shape[0] != d:
                raise ValueError(f"bounds has {self.bounds.shape[0]} rows but X has "
                                 f"{d} features.")
            self._allocate(d)

    def copy(self):
        """A deep copy."""
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        if self.n_features is not None:
            for name in self._ARRAYS:
                value = getattr(self, name)
                setattr(new, name, None if value is None else value.copy())
            new.exact = [None if t is None else dict(t) for t in self.exact]
        return new

    @property
    def is_empty(self):
        return self.n_features is None or not np.any(self.weight > 0)

    # ----------------------------------------------------------------- update
    def _validate(self, X, sample_weight):
        """``X`` as a float64 ``(n, n_features)`` array and the rows' weights, checked
        (shape, weights, bounds) before anything changes."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[:, None] if (self.n_features in (None, 1)) else X[None, :]
        if X.ndim != 2:
            raise ValueError(f"X must be 1-D or 2-D; got an array of shape {X.shape}.")
        if self.n_features is not None and X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, but this sketch has "
                             f"n_features={self.n_features}.")
        w = self._weights(X, sample_weight)
        X = self._transformed(X)
        if self.bounds is not None and X.shape[0]:
            d = X.shape[1]
            low, high = self.bounds[:d, 0], self.bounds[:d, 1]
            bad = (X < low) | (X > high)
            if bad.any():
                j = int(np.nonzero(bad.any(axis=0))[0][0])
                raise ValueError(f"feature {j} has values outside bounds="
                                 f"{self.bounds[j].tolist()}; widen bounds.")
        return X, w

    def _weights(self, X, sample_weight):
        """The rows' weights, checked (``check_weights``)."""
        return check_weights(sample_weight, X.shape[0])

    def _transformed(self, X):
        """``X`` as the bounds see it."""
        return X

    def update(self, X, sample_weight=None):
        """Add rows of ``X`` (``(n, n_features)``; a 1-D array is one feature).

        The state is left unchanged if the input is rejected.
        """
        X, w = self._validate(X, sample_weight)
        self._update(X, w)
        return self

    def _update(self, X, w):
        raise NotImplementedError

    # ------------------------------------------------------------------ merge
    def _check_compatible(self, other):
        """Refuse to merge another kind of sketch, or one of other settings, bounds or
        features."""
        cls = type(self)
        if not isinstance(other, cls):
            kind = getattr(other, "kind", None)
            what = type(other).__name__ + (f" (sketch={kind!r})" if kind else "")
            raise TypeError(f"can only merge a {cls.__name__} (sketch={self.kind!r}), not a "
                            f"{what}.")
        for name in self._SETTINGS:
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
        self._merge_state(other)
        return self

    def _merge_state(self, other):
        raise NotImplementedError

    def __add__(self, other):
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.copy().merge(other)

    # ---------------------------------------------------------------- queries
    def _quantiles(self, p, feature, features=None):
        """``feature(j, p)`` for every feature (or ``features(p)``, all of them as one
        array), checked and shaped as ``quantile`` returns it."""
        p_arr = np.atleast_1d(np.asarray(p, dtype=np.float64))
        if p_arr.ndim != 1 or not np.all((p_arr >= 0) & (p_arr <= 1)):
            raise ValueError(f"p must be probabilities in [0, 1]; got {p!r}.")
        if self.is_empty:
            raise ValueError("the sketch has seen no finite values; quantiles are undefined.")
        if features is not None:
            q = features(p_arr)
        else:
            q = np.column_stack([feature(j, p_arr) for j in range(self.n_features)])
        return q[0] if np.ndim(p) == 0 else q

    def _cdf_columns(self, x, feature):
        """``feature(j, column)`` for every feature of ``x`` (one column of ``x`` serves
        every feature), as an ``(n, n_features)`` array."""
        x = np.asarray(x, dtype=np.float64)
        x2 = x.reshape(-1, 1) if x.ndim <= 1 else x
        out = np.empty((x2.shape[0], self.n_features))
        for j in range(self.n_features):
            out[:, j] = feature(j, x2[:, j if x2.shape[1] > 1 else 0])
        return out

    # ---------------------------------------------------------- serialisation
    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _writer(self, header):
        """A buffer holding the magic bytes and the int64 ``header``."""
        buf = io.BytesIO()
        buf.write(self._MAGIC)
        buf.write(np.asarray(header, dtype=np.int64).tobytes())
        return buf

    def _write_tables(self, buf):
        """The exact tables: their sizes (-1 for a dropped one), then each surviving
        one's (value, weight) pairs."""
        sizes = np.array([-1 if t is None else len(t) for t in self.exact], dtype=np.int64)
        buf.write(sizes.tobytes())
        for table in self.exact:
            if table:
                buf.write(np.array(list(table.items()), dtype=np.float64).tobytes())
