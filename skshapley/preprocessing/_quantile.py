"""MomentQuantileTransformer: quantile normalisation and binning from mergeable sketches.

The fitted state is a sketch of about 1 KiB per feature (a piecewise-linear CDF by
default, or moments) that streams (``partial_fit``) and merges (``merge``,
:func:`fit_dask`); quantiles are read (or solved) lazily from it and then used exactly
like scikit-learn's ``QuantileTransformer`` uses its empirical quantiles.
"""

from __future__ import annotations

import threading
import warnings
from numbers import Integral, Real

import numpy as np
from scipy import stats
from sklearn import get_config
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from skshapley.backends import get_backend
from skshapley.backends._numba_runtime import run_parts
from skshapley.exceptions import ConvergenceWarning
from skshapley.preprocessing._transform_kernels import interp_table, transform_columns
from skshapley.sketch._cdf import CDFSketch
from skshapley.sketch._moments import MomentSketch, update_together
from skshapley.sketch._solvers import exact_quantiles, scaled_moments, solve_quantiles
from skshapley.utils._sklearn_compat import (
    Interval,
    StrOptions,
    check_feature_names_in,
    fit_context,
)
from skshapley.utils._state import restored_on_failure
from skshapley.utils._validation import validate_numeric_data

__all__ = ["MomentQuantileTransformer", "fit_dask"]

BOUNDS_THRESHOLD = 1e-7  # as sklearn.preprocessing._data
_AUTO_RATIO = 4.0
_STATE = ("sketch_", "sketch_arcsinh_", "n_rows_seen_")
_TABLE_KEY = "_transform_table"  # transform's lookup tables, in the solved state
# guards the lazy creation of each transformer's own lock (two threads must not each
# create one)
_LOCK_GUARD = threading.Lock()


class MomentQuantileTransformer(TransformerMixin, BaseEstimator):
    """Quantile transformer (and quantile binner) fitted from mergeable sketches.

    Like :class:`sklearn.preprocessing.QuantileTransformer`, each feature is mapped
    through its estimated CDF to a uniform or normal output, but the fit keeps only a
    sketch of about 1 KiB per feature (plus an exact value table while the feature has
    at most ``exact_threshold`` distinct values or ``small_n`` rows). It therefore
    supports ``partial_fit``, ``merge`` across workers and :func:`fit_dask`, and fitting
    costs one pass over the data.

    Two sketches are offered. The default (``sketch="cdf"``) keeps a piecewise-linear
    CDF of at most ``n_knots`` vertices per feature with exact counts at the vertices
    (:class:`skshapley.sketch.CDFSketch`): it holds on multimodal, spiky, heavy-tailed,
    offset, zero-inflated and integer columns alike (rank error about 1e-4 to 1e-3),
    and its merges agree with one fit to within an error it estimates
    (``quantile_error_``). ``sketch="moments"`` keeps ``n_moments`` central moments per
    feature and solves for a maximum-entropy density (Mitchell, Frank & Holmes 2021):
    smaller (``n_moments + 7`` doubles), merging exactly to round-off, and as accurate
    on smooth unimodal columns, but up to 0.03 in rank on multimodal or spiky ones.

    Parameters
    ----------
    n_quantiles : int, default=1000
        Number of tabulated quantiles. As in sklearn, it is capped at the number of rows
        seen (``n_quantiles_``), with a ``UserWarning`` when it is greater.
    output_distribution : {"uniform", "normal"}, default="uniform"
    sketch : {"auto", "cdf", "moments"}, default="auto"
        ``"auto"`` is ``"cdf"``, or ``"moments"`` when ``solver`` is ``"legendre"`` or
        ``"cosine"`` (moment solvers). The choice is recorded in ``sketch_used_``.
    n_knots : int, default=60
        Most vertices of each feature's CDF polyline (``sketch="cdf"``; 16 bytes each, a
        point mass takes two): 60 keeps a feature within 1 KiB.
    rank_tol : float, optional
        Warn (``ConvergenceWarning``) when a feature's estimated rank error
        ``quantile_error_`` exceeds it (with the moment sketch the estimate costs two
        more solves per feature, so it is only computed when asked for).
    n_moments : int, default=10
        Order ``l`` of the moment sketch (1-20; above 15 is beyond the validated range).
    solver : {"maxent", "legendre", "cosine"}, default="maxent"
        Density solver of the moment sketch; ``"cosine"`` needs ``bounds``. Max-ent falls
        back to lower orders, then Legendre, then the uniform density (``solver_used_``).
    input_transform : {"auto", "none", "arcsinh"}, default="auto"
        Moment sketch only: ``"auto"`` keeps a raw and an arcsinh sketch and picks per
        feature.
    exact_threshold : int, default=64
        Features with at most this many distinct values are handled exactly.
    small_n : int, default=1000
        Features with at most this many rows are handled exactly too.
    track_atoms : bool, default=True
        Model the exact weights at the minimum, maximum and 0 as point masses.
    n_bins : int, optional
        If set, ``transform`` returns quantile bins (edges ``bin_edges_``).
    encode : {"ordinal", "onehot-dense"}, default="ordinal"
        Output of the binning (``"onehot"`` is accepted as a dense alias).
    bounds : array-like of shape (n_features, 2), optional
        Fixed value bounds, required by ``solver="cosine"``; values outside raise
        ``ValueError`` (with either sketch).
    n_grid : int, default=1024
        Quadrature nodes of the max-ent solver.
    tol : float, default=1e-9
        Newton stopping tolerance (RMS gradient) of the max-ent solver (not a rank
        tolerance: see ``rank_tol``).
    max_iter : int, default=100
        Newton iteration cap per order.

    Attributes
    ----------
    sketch_ : CDFSketch or MomentSketch
        The sketch of all features (holds the exact tables).
    sketch_arcsinh_ : MomentSketch or None
        Sketch of ``arcsinh(X)`` when the moment sketch is used with ``input_transform``
        ``"auto"`` or ``"arcsinh"``.
    sketch_used_ : {"cdf", "moments"}
        The sketch kind (``sketch="auto"`` resolved).
    n_samples_seen_ : ndarray of shape (n_features,)
        Weight of the finite values seen per feature.
    n_quantiles_, references_, quantiles_ : as in QuantileTransformer
    quantile_error_ : ndarray of shape (n_features,)
        Estimated mean rank error of each feature's quantiles, from the sketch alone (0
        on the exact path, NaN for a feature without values). For ``sketch="cdf"`` it
        sums what thinning cost (within about 0.5-2.5x of the measured error); for
        ``sketch="moments"`` it is how far the CDFs of fits one and two orders lower sit
        from the fitted quantiles: a heuristic that flags multimodal and spiky columns
        but can be several times below the measured error.
    order_used_, solver_used_, transform_used_, converged_ : per-feature solver record
        (``solver_used_`` is ``"cdf"`` for features read off the CDF sketch)
    n_iter_ : int
        Most Newton iterations over the features (0 when no feature needed a solve).
    n_iter_per_feature_ : ndarray of shape (n_features,)
    bin_edges_ : ndarray of object arrays, when ``n_bins`` is set
    n_features_in_, feature_names_in_ : as usual

    Notes
    -----
    NaN is ignored in fitting and passed through ``transform`` as NaN; infinite values
    raise ``ValueError``. A feature with no finite value at fit has no CDF: ``transform``
    and ``inverse_transform`` return NaN for it, as sklearn's ``QuantileTransformer``.

    ``partial_fit`` and ``merge`` give ``fit``'s quantiles to round-off with the moment
    sketch; with the CDF sketch, to within the thinning error (a few 1e-4 in rank after
    100 batches or a 16-way merge tree on the benchmark's columns;
    ``benchmarks/results/quantile_columns.md``). Merging transformers of different
    sketch kinds or settings is refused, naming the setting.

    ``fit``, ``partial_fit`` and ``merge`` hold a per-transformer lock, so threads may
    stream batches into one transformer: the result equals one thread's ``partial_fit``
    over the same batches, to round-off (the order of the batches is the threads').
    The lock is made on first use and is neither pickled nor cloned.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.preprocessing import MomentQuantileTransformer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.lognormal(size=(20_000, 2))
    >>> mqt = MomentQuantileTransformer().fit(X[:10_000]).partial_fit(X[10_000:])
    >>> u = mqt.transform(X)
    >>> bool(abs(np.median(u) - 0.5) < 0.01)
    True
    """

    _parameter_constraints = {
        "n_quantiles": [Interval(Integral, 1, None, closed="left")],
        "output_distribution": [StrOptions({"uniform", "normal"})],
        "sketch": [StrOptions({"auto", "cdf", "moments"})],
        "n_knots": [Interval(Integral, 4, 1 << 16, closed="both")],
        "rank_tol": [Interval(Real, 0, 1, closed="neither"), None],
        "n_moments": [Interval(Integral, 1, 20, closed="both")],
        "solver": [StrOptions({"maxent", "legendre", "cosine"})],
        "input_transform": [StrOptions({"auto", "none", "arcsinh"})],
        "exact_threshold": [Interval(Integral, 0, None, closed="left")],
        "small_n": [Interval(Integral, 0, None, closed="left")],
        "track_atoms": ["boolean"],
        "n_bins": [Interval(Integral, 2, None, closed="left"), None],
        "encode": [StrOptions({"ordinal", "onehot", "onehot-dense"})],
        "bounds": ["array-like", None],
        "n_grid": [Interval(Integral, 16, 16_384, closed="both")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, n_quantiles=1000, output_distribution="uniform", sketch="auto",
                 n_knots=60, rank_tol=None, n_moments=10, solver="maxent",
                 input_transform="auto", exact_threshold=64, small_n=1000, track_atoms=True,
                 n_bins=None, encode="ordinal", bounds=None, n_grid=1024, tol=1e-9,
                 max_iter=100):
        self.n_quantiles = n_quantiles
        self.output_distribution = output_distribution
        self.sketch = sketch
        self.n_knots = n_knots
        self.rank_tol = rank_tol
        self.n_moments = n_moments
        self.solver = solver
        self.input_transform = input_transform
        self.exact_threshold = exact_threshold
        self.small_n = small_n
        self.track_atoms = track_atoms
        self.n_bins = n_bins
        self.encode = encode
        self.bounds = bounds
        self.n_grid = n_grid
        self.tol = tol
        self.max_iter = max_iter

    # ------------------------------------------------------------- fitting
    def _check_settings(self):
        if self.solver == "cosine" and self.bounds is None:
            raise ValueError("solver='cosine' requires bounds=[(low, high), ...] per feature; "
                             "set bounds or use solver='maxent'.")
        if self.n_moments > 15:
            warnings.warn(f"n_moments={self.n_moments} is beyond the validated range "
                          "(<= 15).", UserWarning, stacklevel=3)

    def _sketch_kind(self):
        """``sketch`` with ``"auto"`` resolved: the CDF sketch unless a moment-only
        solver is asked for."""
        if self.sketch != "auto":
            return self.sketch
        return "moments" if self.solver in ("legendre", "cosine") else "cdf"

    def _new_sketches(self, d):
        bounds = None
        if self.bounds is not None:
            bounds = _check_bounds(self.bounds, d)
        if self._sketch_kind() == "cdf":
            return CDFSketch(self.n_knots, d, exact_threshold=self.exact_threshold,
                             small_n=self.small_n, bounds=bounds), None
        # the raw sketch always exists: it holds the exact tables, which must not pass
        # through arcsinh and back (round-off would break exactness)
        raw = MomentSketch(self.n_moments, d, exact_threshold=self.exact_threshold,
                           small_n=self.small_n, bounds=bounds)
        asinh = None
        if self.input_transform in ("auto", "arcsinh") and self.solver != "cosine":
            asinh = MomentSketch(self.n_moments, d, transform="arcsinh", exact_threshold=0,
                                 small_n=0)
        return raw, asinh

    def _ingest(self, X, sample_weight, state):
        raw, asinh, n_rows = state
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X.shape[0])
            if not np.all(np.isfinite(sample_weight)) or np.any(sample_weight < 0):
                raise ValueError("sample_weight must be finite and non-negative.")
            if sample_weight.size and not np.any(sample_weight > 0):
                raise ValueError("sample_weight is zero for every row: at least one row "
                                 "needs a positive weight.")
            rows = float(sample_weight.sum())
        else:
            rows = float(X.shape[0])
        # validate everything first, then update: a failed call changes nothing
        X, w = raw._validate(X, sample_weight)
        if raw.kind == "cdf":
            raw._update(X, w)
            return raw, asinh, n_rows + rows
        # the arcsinh sketch has no bounds, so raw's checks hold for it; the two share
        # each chunk's transposition
        update_together([raw] if asinh is None else [raw, asinh], X, w)
        return raw, asinh, n_rows + rows

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Sketch every feature of ``X`` (one pass) and solve for the quantiles."""
        # a failed fit leaves a fitted transformer as it was
        with self._state_lock(), restored_on_failure(self):
            X = validate_numeric_data(self, X, dtype=np.float64,
                                      ensure_all_finite="allow-nan", reset=True)
            self._check_settings()
            state = self._ingest(X, sample_weight, (*self._new_sketches(X.shape[1]), 0))
            self._set_state(state)
            self._solved = self._solve(*state)
        return self

    def partial_fit(self, X, y=None, sample_weight=None):
        """Add a batch of rows; equals ``fit`` on the concatenation to round-off."""
        # every call, not only the first (sklearn's _fit_context skips fitted partial_fit
        # calls): set_params may have changed a parameter since, and transform uses it
        if not get_config()["skip_parameter_validation"]:
            self._validate_params()
        # the lock makes copy-ingest-store one step: eight threads streaming into one
        # transformer used to overwrite each other's batches (40,001 of 160,001 rows kept)
        with self._state_lock():
            return self._partial_fit(X, sample_weight)

    def _partial_fit(self, X, sample_weight):
        first = not hasattr(self, "sketch_")
        # validate_data sets n_features_in_ and feature_names_in_ before later checks can
        # fail; a failed call must leave neither behind
        with restored_on_failure(self):
            X = validate_numeric_data(self, X, dtype=np.float64,
                                      ensure_all_finite="allow-nan", reset=first)
            self._check_settings()
            if first:
                state = (*self._new_sketches(X.shape[1]), 0)
            else:
                self._check_sketch_settings()
                state = (self.sketch_.copy(),
                         None if self.sketch_arcsinh_ is None else self.sketch_arcsinh_.copy(),
                         self.n_rows_seen_)
            self._set_state(self._ingest(X, sample_weight, state))
        return self

    def _state_lock(self):
        """This transformer's lock, made on first use (``__getstate__`` drops it)."""
        lock = self.__dict__.get("_lock")
        if lock is None:
            with _LOCK_GUARD:
                lock = self.__dict__.setdefault("_lock", threading.Lock())
        return lock

    def __getstate__(self):
        # a lock cannot be pickled or deep-copied; the copy makes its own on first use.
        # A copy of the dict: object.__getstate__ returns the live __dict__, and popping
        # from it would drop the lock of this transformer while a thread may hold it.
        state = dict(super().__getstate__())
        state.pop("_lock", None)
        solved = state.get("_solved")
        if solved is not None and _TABLE_KEY in solved:  # a cache of transform's table
            state["_solved"] = {k: v for k, v in solved.items() if k != _TABLE_KEY}
        return state

    def _check_sketch_settings(self):
        """The parameters the sketch was begun with must still hold (set_params between
        partial_fit calls would otherwise be ignored for the rows already seen)."""
        sketch = self.sketch_
        kind = self._sketch_kind()
        if sketch.kind != kind:
            raise ValueError(
                f"partial_fit continues a sketch begun with other sketch (sketch="
                f"{sketch.kind!r}, now {kind!r}); set it back, or call fit to begin a new "
                "sketch.")
        size = ("n_knots", sketch.n_knots, self.n_knots) if kind == "cdf" else \
            ("n_moments", sketch.order, self.n_moments)
        changed = [name for name, then, now in (
            size,
            ("exact_threshold", sketch.exact_threshold, self.exact_threshold),
            ("small_n", sketch.small_n, self.small_n)) if then != now]
        bounds = None if self.bounds is None else _check_bounds(self.bounds,
                                                                self.n_features_in_)
        if (bounds is None) != (sketch.bounds is None) or (
                bounds is not None and not np.array_equal(bounds, sketch.bounds)):
            changed.append("bounds")
        arcsinh = self.input_transform in ("auto", "arcsinh") and self.solver != "cosine"
        if kind == "moments" and arcsinh != (self.sketch_arcsinh_ is not None):
            changed.append("input_transform/solver")
        if changed:
            raise ValueError(
                f"partial_fit continues a sketch begun with other {', '.join(changed)}; "
                "set them back, or call fit to begin a new sketch.")

    def merge(self, other):
        """Merge the sketches of another fitted transformer (same settings) into this one.

        A refused merge (``ValueError``: other settings or features) changes neither
        transformer.
        """
        check_is_fitted(self)
        check_is_fitted(other)
        if not isinstance(other, MomentQuantileTransformer):
            raise TypeError(f"can only merge a MomentQuantileTransformer, not "
                            f"{type(other).__name__}.")
        # read other's state under its lock, then update ours under ours: never both
        # held, so a.merge(b) and b.merge(a) in two threads cannot deadlock
        with other._state_lock():
            other_state = (other.sketch_, other.sketch_arcsinh_, other.n_rows_seen_)
        with self._state_lock():
            self._merge(other, other_state)
        return self

    def _merge(self, other, other_state):
        other_raw, other_asinh, other_rows = other_state
        # the kinds and sizes of the sketches themselves (set_params after fit does not
        # change what was sketched)
        for name, here, there in (("sketch", self.sketch_.kind, other_raw.kind),
                                  ("n_knots", getattr(self.sketch_, "n_knots", None),
                                   getattr(other_raw, "n_knots", None))):
            if here != there:
                raise ValueError(f"cannot merge: {name}={here!r} here but {there!r} in "
                                 f"other; fit both with the same {name}.")
        names = ("n_moments", "input_transform", "solver") \
            if self.sketch_.kind == "moments" else ()
        for name in names:
            if getattr(self, name) != getattr(other, name):
                raise ValueError(f"cannot merge: {name}={getattr(self, name)!r} here but "
                                 f"{getattr(other, name)!r} in other.")
        if self.n_features_in_ != other.n_features_in_:
            raise ValueError(f"cannot merge: n_features_in_={self.n_features_in_} here but "
                             f"{other.n_features_in_} in other.")
        # the sketches are merged column by column, so the columns must be the same
        # features in the same order (sklearn's rule for feature names at transform)
        names = getattr(self, "feature_names_in_", None)
        other_names = getattr(other, "feature_names_in_", None)
        if (names is None) != (other_names is None) or (
                names is not None and not np.array_equal(names, other_names)):
            def show(value):
                return "none (fitted without feature names)" if value is None else \
                    repr(list(value))
            raise ValueError(f"cannot merge: feature_names_in_={show(names)} here but "
                             f"{show(other_names)} in other; fit both on the same columns "
                             "in the same order.")
        # The settings the sketches were begun with, as partial_fit checks them: a table
        # kept on one side only cannot be merged, so the merge used to drop it (an exact
        # feature's quantile error went from 0 to 0.69 of its range).
        for name in ("exact_threshold", "small_n"):
            here, there = getattr(self.sketch_, name), getattr(other_raw, name)
            if here != there:
                raise ValueError(f"cannot merge: {name}={here!r} here but {there!r} in "
                                 f"other; fit both with the same {name}.")
        raw = self.sketch_.copy().merge(other_raw)
        asinh = None if self.sketch_arcsinh_ is None else \
            self.sketch_arcsinh_.copy().merge(other_asinh)
        self._set_state((raw, asinh, self.n_rows_seen_ + other_rows))

    def _set_state(self, state):
        self.sketch_, self.sketch_arcsinh_, self.n_rows_seen_ = state
        self._solved = None

    def __sklearn_is_fitted__(self):
        return hasattr(self, "sketch_")

    # ------------------------------------------------------------- solving
    def _choose_transform(self, raw, asinh):
        d = raw.n_features
        if asinh is None or raw.kind == "cdf":
            return np.array(["none"] * d, dtype=object)
        if self.input_transform == "arcsinh":
            return np.array(["arcsinh"] * d, dtype=object)
        mu_raw = scaled_moments(raw.weight, raw.mean, raw.exp2, raw.m_hat, raw.min, raw.max)
        mu_asinh = scaled_moments(asinh.weight, asinh.mean, asinh.exp2, asinh.m_hat,
                                  asinh.min, asinh.max)
        with np.errstate(invalid="ignore"):
            var_raw = mu_raw[:, 2] - mu_raw[:, 1] ** 2 if raw.order >= 2 else np.ones(d)
            var_asinh = mu_asinh[:, 2] - mu_asinh[:, 1] ** 2 if raw.order >= 2 else np.ones(d)
            resolution = (asinh.max - asinh.min) >= 1e-6 * np.maximum(np.abs(asinh.min),
                                                                       np.abs(asinh.max))
            pick = (var_asinh >= _AUTO_RATIO * var_raw) & resolution
        return np.where(pick, "arcsinh", "none").astype(object)

    def _ensure_solved(self):
        solved = self.__dict__.get("_solved")
        if solved is not None:
            return solved
        with self._state_lock():
            state = (self.sketch_, self.sketch_arcsinh_, self.n_rows_seen_)
        solved = self._solve(*state)  # outside the lock: it may take a while
        with self._state_lock():
            if self.sketch_ is state[0]:  # not if partial_fit or merge came in between
                self._solved = solved
        return solved

    def _solve(self, raw, asinh, n_rows_seen):
        """The fitted (solved) attributes of the state ``(raw, asinh, n_rows_seen)``."""
        d = raw.n_features
        # as sklearn (rows seen; with sample weights, their sum, so that integer weights
        # and repeated rows agree), with its warning
        n_samples = int(round(n_rows_seen))
        if self.n_quantiles > n_samples:
            # stacklevel 4: the caller of fit (through _fit_context), of transform, or of
            # a fitted attribute
            warnings.warn(f"n_quantiles ({self.n_quantiles}) is greater than the total "
                          f"number of samples ({n_samples}). n_quantiles is set to "
                          "n_samples.", UserWarning, stacklevel=4)
        n_quantiles = max(1, min(self.n_quantiles, n_samples))
        references = np.linspace(0, 1, n_quantiles, endpoint=True)
        transforms = self._choose_transform(raw, asinh)
        quantiles = np.empty((n_quantiles, d))
        orders = np.zeros(d, dtype=np.int64)
        solvers = np.empty(d, dtype=object)
        converged = np.zeros(d, dtype=bool)
        n_iter = np.zeros(d, dtype=np.int64)
        options = {"solver": self.solver, "n_grid": self.n_grid, "tol": self.tol,
                   "max_iter": self.max_iter, "track_atoms": self.track_atoms}
        cdf = raw.kind == "cdf"
        if cdf:
            constant = raw.min == raw.max
        for j in range(d):
            if not raw.weight[j] > 0:
                quantiles[:, j] = np.nan
                solvers[j], converged[j] = "empty", False
                continue
            if cdf:
                # read off the polyline (or the exact table): no solve
                quantiles[:, j] = raw.quantile_feature(j, references)
                solvers[j] = "exact" if raw.exact[j] else (
                    "constant" if constant[j] else "cdf")
                converged[j] = True
                continue
            if raw.exact[j]:
                sketch = raw
            else:
                sketch = asinh if transforms[j] == "arcsinh" else raw
            q, info = solve_quantiles(sketch, j, references, **options)
            if info["solver"] == "exact":
                transforms[j] = "none"
            quantiles[:, j] = np.maximum.accumulate(q)
            orders[j], solvers[j], converged[j] = info["order"], info["solver"], \
                info["converged"]
            n_iter[j] = info["n_iter"]
        quantiles = np.clip(quantiles, raw.min, raw.max)
        solved = {"quantiles_": quantiles, "references_": references,
                  "n_quantiles_": n_quantiles, "order_used_": orders, "solver_used_": solvers,
                  "transform_used_": transforms, "converged_": converged,
                  "n_iter_": int(n_iter.max(initial=0)), "n_iter_per_feature_": n_iter,
                  "sketch_used_": raw.kind}
        if self.n_bins is not None:
            solved["bin_edges_"], solved["n_bins_"] = self._bin_edges(quantiles, references)
        if cdf or self.rank_tol is not None:
            # the moment sketch's estimate needs a second solve per feature: only on
            # demand (quantile_error_) or when a tolerance asks for it
            solved["quantile_error_"] = self._quantile_error(raw, asinh, solved)
        if self.rank_tol is not None:
            self._check_rank_tol(solved)
        return solved

    def _quantile_error(self, raw, asinh, solved):
        """Estimated mean rank error per feature (see ``quantile_error_``)."""
        d = raw.n_features
        solvers = solved["solver_used_"]
        if raw.kind == "cdf":
            error = raw.quantile_error()
        else:
            error = np.zeros(d)
            references = solved["references_"]
            inner = (references > 0) & (references < 1)
            options = {"solver": self.solver, "n_grid": self.n_grid, "tol": self.tol,
                       "max_iter": self.max_iter, "track_atoms": self.track_atoms}
            for j in range(d):
                if solvers[j] not in ("maxent", "legendre", "cosine") or not inner.any():
                    continue
                sketch = asinh if solved["transform_used_"][j] == "arcsinh" else raw
                order = int(solved["order_used_"][j])
                q = solved["quantiles_"][inner, j]
                p = references[inner]
                for lower in sorted({max(1, order - 1), max(1, order - 2)}):
                    alt, _ = solve_quantiles(sketch, j, references, max_order=lower,
                                             use_exact=False, **options)
                    alt = np.maximum.accumulate(alt)
                    # the lower-order CDF's rank interval at each fitted quantile (an
                    # atom spans one), against the quantile's level
                    with np.errstate(invalid="ignore"):
                        last = np.interp(q, alt, references)
                        first = -np.interp(-q, -alt[::-1], -references[::-1])
                    gap = np.maximum(0.0, np.maximum(np.minimum(first, last) - p,
                                                     p - np.maximum(first, last)))
                    error[j] = max(error[j], float(np.mean(gap)))
        error = np.where(solvers == "empty", np.nan, error)
        return np.where(np.isin(solvers, ("exact", "constant")), 0.0, error)

    def _check_rank_tol(self, solved):
        error = solved["quantile_error_"]
        with np.errstate(invalid="ignore"):
            over = np.nonzero(error > self.rank_tol)[0]
        if over.size:
            shown = ", ".join(f"{j} ({error[j]:.2g})" for j in over[:10])
            more = f" and {over.size - 10} more" if over.size > 10 else ""
            advice = "increase n_knots" if solved["sketch_used_"] == "cdf" else \
                "use sketch='cdf' (the default)"
            warnings.warn(f"The estimated rank error (quantile_error_) of feature(s) "
                          f"{shown}{more} exceeds rank_tol={self.rank_tol}; {advice}.",
                          ConvergenceWarning, stacklevel=4)

    def _bin_edges(self, quantiles, references):
        d = quantiles.shape[1]
        p = np.linspace(0, 1, self.n_bins + 1)
        edges = np.empty(d, dtype=object)
        n_bins = np.zeros(d, dtype=np.int64)
        for j in range(d):
            if np.isnan(quantiles[0, j]):
                e = np.array([-np.inf, np.inf])
            else:
                e = np.interp(p, references, quantiles[:, j])
                e = np.maximum.accumulate(e)
                keep = np.concatenate([[True], np.diff(e) > 1e-8])
                if not keep.all():
                    warnings.warn(f"Bins whose width are too small (i.e., <= 1e-8) in feature "
                                  f"{j} are removed. Consider decreasing the number of bins.",
                                  UserWarning, stacklevel=5)
                    e = e[keep]
            edges[j] = e
            n_bins[j] = len(e) - 1
        return edges, n_bins

    def _solved_attr(name):  # noqa: N805
        def getter(self):
            if not hasattr(self, "sketch_"):
                raise AttributeError(name)
            solved = self._ensure_solved()
            if name not in solved:
                raise AttributeError(name)
            return solved[name]
        return property(getter, doc=f"Fitted ``{name}`` (solved lazily from the sketch).")

    quantiles_ = _solved_attr("quantiles_")
    references_ = _solved_attr("references_")
    n_quantiles_ = _solved_attr("n_quantiles_")
    order_used_ = _solved_attr("order_used_")
    solver_used_ = _solved_attr("solver_used_")
    transform_used_ = _solved_attr("transform_used_")
    converged_ = _solved_attr("converged_")
    n_iter_ = _solved_attr("n_iter_")
    n_iter_per_feature_ = _solved_attr("n_iter_per_feature_")
    sketch_used_ = _solved_attr("sketch_used_")
    bin_edges_ = _solved_attr("bin_edges_")
    n_bins_ = _solved_attr("n_bins_")
    del _solved_attr

    @property
    def quantile_error_(self):
        """Estimated mean rank error of each feature's quantiles (see the class
        docstring); computed on first access for the moment sketch."""
        if not hasattr(self, "sketch_"):
            raise AttributeError("quantile_error_")
        solved = self._ensure_solved()
        if "quantile_error_" not in solved:
            with self._state_lock():
                state = (self.sketch_, self.sketch_arcsinh_)
            solved["quantile_error_"] = self._quantile_error(*state, solved)
        return solved["quantile_error_"]

    @property
    def n_samples_seen_(self):
        """Weight of the finite values seen, per feature."""
        if not hasattr(self, "sketch_"):
            raise AttributeError("n_samples_seen_")
        return self.sketch_.weight.copy()

    def quantiles(self, p, method="linear"):
        """Estimated quantiles at probabilities ``p``, shape ``(len(p), n_features)``.

        Features of the CDF sketch invert its polyline; features solved from moments
        interpolate ``quantiles_``. Features on the exact path use
        numpy's ``method`` on their value table: ``"linear"`` (sklearn's convention, as
        in ``quantiles_``) or ``"inverted_cdf"`` (the step quantile function).
        """
        check_is_fitted(self)
        if method not in ("linear", "inverted_cdf"):
            raise ValueError(f"method={method!r} is invalid: use 'linear' or "
                             "'inverted_cdf'.")
        p_arr = np.atleast_1d(np.asarray(p, dtype=np.float64))
        if p_arr.ndim != 1 or not np.all((p_arr >= 0) & (p_arr <= 1)):
            raise ValueError(f"p must be a probability or 1-D array of probabilities in "
                             f"[0, 1]; got {p!r}.")
        solved = self._ensure_solved()
        if self.sketch_.kind == "cdf":
            low, high = self.sketch_.min, self.sketch_.max
        columns = []
        for j in range(self.n_features_in_):
            table = self.sketch_.exact[j]
            if table:
                columns.append(exact_quantiles(table, p_arr, method))
            elif self.sketch_.kind == "cdf":
                # the polyline itself, not the interpolated table of n_quantiles_ values
                columns.append(np.clip(self.sketch_.quantile_feature(j, p_arr), low[j],
                                       high[j]))
            else:
                columns.append(np.interp(p_arr, solved["references_"],
                                         solved["quantiles_"][:, j]))
        out = np.column_stack(columns)
        return out[0] if np.ndim(p) == 0 else out

    # ----------------------------------------------------------- transform
    def _transform_col(self, col, quantiles, references, inverse):
        """sklearn's QuantileTransformer._transform_col (ties: forward/backward mean)."""
        normal = self.output_distribution == "normal"
        if not inverse:
            lower_x, upper_x, lower_y, upper_y = quantiles[0], quantiles[-1], 0.0, 1.0
        else:
            lower_x, upper_x, lower_y, upper_y = 0.0, 1.0, quantiles[0], quantiles[-1]
            if normal:
                with np.errstate(invalid="ignore"):
                    col = stats.norm.cdf(col)
        with np.errstate(invalid="ignore"):
            if normal:
                threshold = BOUNDS_THRESHOLD * _bound_scale(lower_x, upper_x)
                lower_idx = col - threshold < lower_x
                upper_idx = col + threshold > upper_x
            else:
                lower_idx = col == lower_x
                upper_idx = col == upper_x
        finite = ~np.isnan(col)
        values = col[finite]
        if not inverse:
            if np.all(np.diff(quantiles) > 0):
                # no repeated quantiles: forward and backward interpolation agree
                col[finite] = np.interp(values, quantiles, references)
            else:
                col[finite] = 0.5 * (np.interp(values, quantiles, references)
                                     - np.interp(-values, -quantiles[::-1], -references[::-1]))
        else:
            col[finite] = np.interp(values, references, quantiles)
        col[upper_idx] = upper_y
        col[lower_idx] = lower_y
        if not inverse and normal:
            with np.errstate(invalid="ignore"):
                col = stats.norm.ppf(col)
                clip_min = stats.norm.ppf(BOUNDS_THRESHOLD - np.spacing(1))
                clip_max = stats.norm.ppf(1 - (BOUNDS_THRESHOLD - np.spacing(1)))
                col = np.clip(col, clip_min, clip_max)
        return col

    def _check_input(self, X, copy=True):
        check_is_fitted(self)
        return validate_numeric_data(self, X, dtype=np.float64,
                                     ensure_all_finite="allow-nan", reset=False, copy=copy)

    def transform(self, X):
        """Map each feature through its estimated CDF (or to its quantile bin)."""
        X = self._check_input(X)
        solved = self._ensure_solved()
        if self.n_bins is not None:
            return self._bin(X, solved)
        quantiles, references = solved["quantiles_"], solved["references_"]
        kernels = get_backend()
        if kernels.name == "numba":
            return self._transform_numba(X, solved)
        # Strictly increasing quantiles: forward and backward interpolation agree and the
        # bound fix-ups are no-ops, so one np.interp per column gives sklearn's result;
        # the backend kernel does it for all such columns in one pass over X.
        fast = np.all(np.diff(quantiles, axis=0) > 0, axis=0) & (len(references) > 1)
        if fast.any():
            cols = np.nonzero(fast)[0]
            out = np.empty((X.shape[0], len(cols)))
            sub = X if len(cols) == X.shape[1] else np.ascontiguousarray(X[:, cols])
            kernels.interp_columns(sub, np.ascontiguousarray(quantiles[:, cols].T),
                                   references, out)
            if self.output_distribution == "normal":
                lower_x, upper_x = quantiles[0, cols], quantiles[-1, cols]
                threshold = BOUNDS_THRESHOLD * _bound_scale(lower_x, upper_x)
                with np.errstate(invalid="ignore", divide="ignore"):
                    # sklearn's bound rule for normal output (upper first, so the lower
                    # bound wins where both hold, as in _transform_col), then its ppf
                    # and clip
                    out[sub + threshold > upper_x] = 1.0
                    out[sub - threshold < lower_x] = 0.0
                    out = stats.norm.ppf(out)
                    clip_min = stats.norm.ppf(BOUNDS_THRESHOLD - np.spacing(1))
                    clip_max = stats.norm.ppf(1 - (BOUNDS_THRESHOLD - np.spacing(1)))
                    out = np.clip(out, clip_min, clip_max)
            X[:, cols] = out
        for j in np.nonzero(~fast)[0]:
            if np.isnan(quantiles[0, j]):
                X[:, j] = np.nan  # no finite value at fit: no CDF (sklearn gives NaN too)
                continue
            X[:, j] = self._transform_col(X[:, j], quantiles[:, j], references, inverse=False)
        return X

    def _transform_numba(self, X, solved):
        """``transform`` by the numba kernel of ``_transform_kernels``: sklearn's
        ``_transform_col`` (both interpolations where quantiles repeat, the bound rules)
        for every column in one pass, read off a lookup table on the values' order keys
        (built once per fitted state)."""
        quantiles, references = solved["quantiles_"], solved["references_"]
        d = X.shape[1]
        usable = ~np.isnan(quantiles[0]) if len(references) > 1 else np.zeros(d, bool)
        for j in np.flatnonzero(~usable):
            if np.isnan(quantiles[0, j]):
                X[:, j] = np.nan  # no finite value at fit: no CDF (sklearn gives NaN too)
            else:  # a single quantile
                X[:, j] = self._transform_col(X[:, j], quantiles[:, j], references,
                                              inverse=False)
        cols = np.flatnonzero(usable)
        if cols.size == 0:
            return X
        normal = self.output_distribution == "normal"
        # kept with the solved state it was read from (not pickled: see __getstate__)
        table = solved.get(_TABLE_KEY, {}).get(normal)
        if table is None:
            q = quantiles[:, cols]
            threshold = BOUNDS_THRESHOLD * _bound_scale(q[0], q[-1]) if normal else None
            table = interp_table(q, references, threshold)
            solved.setdefault(_TABLE_KEY, {})[normal] = table
        whole = cols.size == d and (X.flags.c_contiguous or X.flags.f_contiguous)
        sub = X if whole else np.ascontiguousarray(X[:, cols])
        transform_columns(sub, table, run=run_parts)
        if normal:
            with np.errstate(invalid="ignore", divide="ignore"):
                # sklearn's ppf and clip (the bound rule ran in the kernel)
                clip_min = stats.norm.ppf(BOUNDS_THRESHOLD - np.spacing(1))
                clip_max = stats.norm.ppf(1 - (BOUNDS_THRESHOLD - np.spacing(1)))
                sub[...] = np.clip(stats.norm.ppf(sub), clip_min, clip_max)
        if not whole:
            X[:, cols] = sub
        return X

    def _bin(self, X, solved):
        d = X.shape[1]
        codes = np.empty_like(X)
        for j in range(d):
            edges = solved["bin_edges_"][j]
            with np.errstate(invalid="ignore"):
                c = np.searchsorted(edges[1:-1], X[:, j], side="right").astype(np.float64)
            c[np.isnan(X[:, j])] = np.nan
            codes[:, j] = c
        if self.encode == "ordinal":
            return codes
        blocks = []
        for j in range(d):
            k = int(solved["n_bins_"][j])
            block = np.zeros((X.shape[0], k))
            ok = ~np.isnan(codes[:, j])
            block[np.nonzero(ok)[0], codes[ok, j].astype(np.int64)] = 1.0
            block[~ok] = np.nan
            blocks.append(block)
        return np.hstack(blocks)

    def inverse_transform(self, X):
        """Back to the input space (bin centres when ``n_bins`` is set, ordinal only)."""
        check_is_fitted(self)
        solved = self._ensure_solved()
        if self.n_bins is not None:
            if self.encode != "ordinal":
                raise ValueError(f"inverse_transform with n_bins needs encode='ordinal'; "
                                 f"got encode={self.encode!r}.")
            X = self._check_input(X)
            out = np.empty_like(X)
            for j in range(X.shape[1]):
                edges = solved["bin_edges_"][j]
                centres = 0.5 * (edges[1:] + edges[:-1])
                codes = X[:, j]
                ok = ~np.isnan(codes)
                out[:, j] = np.nan
                out[ok, j] = centres[np.clip(codes[ok].astype(np.int64), 0, len(centres) - 1)]
            return out
        X = self._check_input(X)
        for j in range(X.shape[1]):
            if np.isnan(solved["quantiles_"][0, j]):
                X[:, j] = np.nan  # as transform: no quantile function to invert
                continue
            X[:, j] = self._transform_col(X[:, j], solved["quantiles_"][:, j],
                                          solved["references_"], inverse=True)
        return X

    # Each output column is a function of the input column at its place (one-hot binning
    # excepted, which get_feature_names_out shows): TreeSHAP reads a Pipeline of it
    # before a tree model (skshapley.tree._pipeline).
    _skshapley_columnwise = True

    def get_feature_names_out(self, input_features=None):
        """Input names, or ``<name>_<bin>`` per bin for one-hot binning."""
        check_is_fitted(self)
        names = check_feature_names_in(self, input_features)
        if self.n_bins is None or self.encode == "ordinal":
            return names
        n_bins = self._ensure_solved()["n_bins_"]
        return np.asarray([f"{name}_{b}" for name, k in zip(names, n_bins, strict=True)
                           for b in range(int(k))], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.requires_fit = True
        return tags


def _bound_scale(lower_x, upper_x):
    """Scale of sklearn's absolute ``BOUNDS_THRESHOLD`` for columns tabulated on
    ``[lower_x, upper_x]``.

    sklearn maps a value within 1e-7 of the lowest (highest) quantile to the lowest
    (highest) reference before the normal ppf. An absolute 1e-7 swallows a whole column
    whose range is below it (``rng.normal(size=n) * 1e-9`` became a constant). Below a
    range of 1 the threshold therefore shrinks with the range, so such a column
    transforms like its rescaling to range 1. Ranges of 1 or more keep sklearn's
    absolute threshold (and its results), and so does a constant column (range 0), whose
    value still maps to the lowest reference.
    """
    span = np.asarray(upper_x, dtype=np.float64) - np.asarray(lower_x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where((span > 0) & (span < 1), span, 1.0)


def _numbers(value, message):
    """``value`` as float64, or a ValueError saying ``message`` (not numpy's)."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(message) from err


def _check_sample_weight(sample_weight, n_rows):
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


def _check_bounds(bounds, n_features):
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


# ------------------------------------------------------------------ dask
def _block_state(block, params):
    est = MomentQuantileTransformer(**params)
    raw, asinh = est._new_sketches(block.shape[1])
    return est._ingest(np.asarray(block, dtype=np.float64), None, (raw, asinh, 0))


def _merge_states(a, b):
    raw = a[0].copy().merge(b[0])
    asinh = None if a[1] is None else a[1].copy().merge(b[1])
    return raw, asinh, a[2] + b[2]


def _check_dask_shape(n_samples, n_features, shape):
    """Raise as ``validate_data`` does in ``fit`` when ``X`` has no rows or no columns."""
    for count, what in ((n_samples, "sample(s)"), (n_features, "feature(s)")):
        if count == 0:
            raise ValueError(f"Found array with 0 {what} (shape={shape}) while a minimum "
                             "of 1 is required by MomentQuantileTransformer.")


def fit_dask(transformer, X):
    """Fit ``transformer`` on a 2-D dask array: one sketch per row block, tree-merged.

    Infinite values raise ``ValueError`` (from the block that holds them). As in
    ``transformer.fit``, an ``X`` with no rows or no columns raises ``ValueError``; a
    failed call leaves ``transformer`` as it was.

    Parameters
    ----------
    transformer : MomentQuantileTransformer
    X : dask.array.Array of shape (n_samples, n_features)
        Only a dask array is accepted; wrap an in-memory array with
        ``dask.array.from_array(X, chunks=...)``, or call ``transformer.fit(X)``.

    Returns
    -------
    transformer : the fitted transformer (same object).
    """
    try:
        import dask
        import dask.array as da
    except ImportError as err:  # pragma: no cover - exercised only without dask
        raise ImportError("fit_dask needs dask: pip install 'skshapley[dask]'.") from err
    if not isinstance(transformer, MomentQuantileTransformer):
        raise TypeError(f"transformer must be a MomentQuantileTransformer; got "
                        f"{type(transformer).__name__}.")
    if not isinstance(X, da.Array):
        raise ValueError(f"X must be a 2-D dask array; got {type(X).__name__}. Wrap it with "
                         "dask.array.from_array(X, chunks=...), or call transformer.fit(X) "
                         "for an in-memory array.")
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array; got ndim={X.ndim}.")
    transformer._validate_params()
    transformer._check_settings()
    # the row count is nan when chunk sizes are unknown; it is checked again after compute
    _check_dask_shape(X.shape[0], X.shape[1], X.shape)
    X = X.rechunk({1: -1})
    params = transformer.get_params()
    states = [dask.delayed(_block_state)(block, params)
              for block in X.to_delayed().ravel()]
    while len(states) > 1:  # pairwise tree reduction
        states = [dask.delayed(_merge_states)(states[i], states[i + 1])
                  if i + 1 < len(states) else states[i] for i in range(0, len(states), 2)]
    state = dask.compute(states[0])[0]
    _check_dask_shape(int(state[2]), X.shape[1], (int(state[2]), X.shape[1]))
    with transformer._state_lock():  # as fit: not amid another thread's partial_fit
        transformer.n_features_in_ = X.shape[1]
        if hasattr(transformer, "feature_names_in_"):
            del transformer.feature_names_in_
        transformer._set_state(state)
    return transformer
