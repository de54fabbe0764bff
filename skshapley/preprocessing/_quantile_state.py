"""What a :class:`~skshapley.MomentQuantileTransformer` fits: its sketches and the rows
they have seen (:class:`SketchState`), and the checks of what comes with a batch
(sample weights, bounds).

``fit``, ``partial_fit``, ``merge`` and :func:`~skshapley.preprocessing.fit_dask` all
build and combine sketch states; the transformer keeps the parts of its own as
``sketch_``, ``sketch_arcsinh_`` and ``n_rows_seen_``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skshapley.sketch import CDFSketch, MomentSketch, update_together

__all__ = ["SketchState", "check_bounds", "check_sample_weight"]


@dataclass(eq=False)
class SketchState:
    """A transformer's sketches of the rows it has seen.

    Attributes
    ----------
    raw : CDFSketch or MomentSketch
        The sketch of every feature (it holds the exact tables, which must not pass
        through arcsinh and back: round-off would break exactness).
    asinh : MomentSketch or None
        The moment sketch of ``arcsinh(X)`` (``sketch="moments"`` with
        ``input_transform`` ``"auto"`` or ``"arcsinh"``, unless ``solver="cosine"``).
    n_rows : float
        Rows seen; with sample weights, their sum (as sklearn counts them).
    """

    raw: CDFSketch | MomentSketch
    asinh: MomentSketch | None = None
    n_rows: float = 0

    @classmethod
    def begin(cls, transformer, d):
        """Empty sketches of ``d`` features, as ``transformer``'s parameters ask."""
        bounds = None
        if transformer.bounds is not None:
            bounds = check_bounds(transformer.bounds, d)
        if transformer._sketch_kind() == "cdf":
            return cls(CDFSketch(transformer.n_knots, d,
                                 exact_threshold=transformer.exact_threshold,
                                 small_n=transformer.small_n, bounds=bounds))
        raw = MomentSketch(transformer.n_moments, d,
                           exact_threshold=transformer.exact_threshold,
                           small_n=transformer.small_n, bounds=bounds)
        asinh = None
        if transformer.input_transform in ("auto", "arcsinh") \
                and transformer.solver != "cosine":
            asinh = MomentSketch(transformer.n_moments, d, transform="arcsinh",
                                 exact_threshold=0, small_n=0)
        return cls(raw, asinh)

    def copy(self):
        """A deep copy (the sketches copied)."""
        return SketchState(self.raw.copy(), None if self.asinh is None else self.asinh.copy(),
                           self.n_rows)

    def ingest(self, X, sample_weight):
        """Add the rows of ``X`` (validated by the transformer) in place and return the
        state; a rejected batch changes nothing."""
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, X.shape[0])
            if not np.all(np.isfinite(sample_weight)) or np.any(sample_weight < 0):
                raise ValueError("sample_weight must be finite and non-negative.")
            if sample_weight.size and not np.any(sample_weight > 0):
                raise ValueError("sample_weight is zero for every row: at least one row "
                                 "needs a positive weight.")
            rows = float(sample_weight.sum())
        else:
            rows = float(X.shape[0])
        # validate everything first, then update: a failed call changes nothing
        if self.raw.kind == "cdf":
            self.raw.update(X, sample_weight)  # all or nothing, infinities refused
        else:
            X, w = self.raw._validate(X, sample_weight)
            # the arcsinh sketch has no bounds, so raw's checks hold for it; the two share
            # each chunk's transposition
            update_together([self.raw] if self.asinh is None else [self.raw, self.asinh],
                            X, w)
        self.n_rows = self.n_rows + rows
        return self

    def merged(self, other):
        """The merge of this state and ``other`` (neither changes)."""
        raw = self.raw.copy().merge(other.raw)
        asinh = None if self.asinh is None else self.asinh.copy().merge(other.asinh)
        return SketchState(raw, asinh, self.n_rows + other.n_rows)


def _numbers(value, message):
    """``value`` as float64, or a ValueError saying ``message`` (not numpy's)."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(message) from err


def check_sample_weight(sample_weight, n_rows):
    """Per-row weights as a float64 vector: a scalar is broadcast, as in sklearn."""
    weights = _numbers(sample_weight, "sample_weight must be numeric (a scalar or one weight "
                       f"per row); got {np.asarray(sample_weight).dtype} values.")
    if weights.ndim == 0:
        return np.full(n_rows, float(weights))
    if weights.ndim != 1:
        raise ValueError(f"sample_weight must be 1D array or scalar; got a {weights.ndim}D "
                         f"array of shape {weights.shape}. Pass one weight per row of X "
                         f"({n_rows} rows).")
    if weights.shape[0] != n_rows:
        raise ValueError(f"sample_weight has {weights.shape[0]} entries but X has {n_rows} "
                         "rows.")
    return weights


def check_bounds(bounds, n_features):
    """``bounds`` as a float64 array of shape (n_features, 2)."""
    array = _numbers(bounds, "bounds must be numeric (low, high) pairs, one per feature; "
                     f"got bounds={bounds!r}.")
    if array.ndim == 1 and array.shape[0] == 2:
        array = array.reshape(1, 2)  # one (low, high) pair
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] != n_features:
        raise ValueError(f"bounds must have shape ({n_features}, 2), one (low, high) pair "
                         f"per feature of X; got bounds={np.asarray(bounds).tolist()!r} of "
                         f"shape {array.shape}.")
    return array
