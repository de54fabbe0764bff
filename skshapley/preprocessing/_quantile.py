"""MomentQuantileTransformer: quantile normalisation and binning from mergeable sketches.

The fitted state is a sketch of about 1 KiB per feature (a piecewise-linear CDF by
default, or moments) that streams (``partial_fit``) and merges (``merge``,
:func:`~skshapley.preprocessing.fit_dask`); quantiles are read (or solved) lazily from it
and then used exactly like scikit-learn's ``QuantileTransformer`` uses its empirical
quantiles. The state is a ``SketchState`` (``_quantile_state``), the quantiles solved
from it a ``SolvedQuantiles`` (``_quantile_solve``), and the mapping through them lives
in ``_quantile_transform``.
"""

from __future__ import annotations

import threading
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn import get_config
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from skshapley.backends import get_backend
from skshapley.preprocessing._quantile_solve import (
    SOLVED_ATTRIBUTES,
    quantile_error,
    solve,
)
from skshapley.preprocessing._quantile_state import SketchState, check_bounds
from skshapley.preprocessing._quantile_transform import (
    bin_codes,
    inverse_bins,
    inverse_columns,
    transform_numba,
    transform_numpy,
)
from skshapley.sketch import exact_quantiles
from skshapley.utils import (
    Interval,
    StrOptions,
    check_feature_names_in,
    fit_context,
    restored_on_failure,
    validate_numeric_data,
)

__all__ = ["MomentQuantileTransformer"]

# the fitted state, removed by fit before it begins a new one
_FITTED = ("sketch_", "sketch_arcsinh_", "n_rows_seen_", "_solved")
# guards the lazy creation of each transformer's own lock (two threads must not each
# create one)
_LOCK_GUARD = threading.Lock()
# Parameter values that passed scikit-learn's checks, per class: the checks are a pure
# function of the values (and their types), and took 41 of the 810 us of a fit of
# 100,000 x 1 values (signature inspection, constraint objects), so a repeated set of
# plain values (numbers, strings, None) is not checked again. A few sets per class.
_VALID_PARAMS = {}
_MAX_VALID_PARAMS = 64
_PLAIN = (int, float, str, bool, type(None))


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
    def _check_settings(self, stacklevel=3):
        if self.solver == "cosine" and self.bounds is None:
            raise ValueError("solver='cosine' requires bounds=[(low, high), ...] per feature; "
                             "set bounds or use solver='maxent'.")
        if self.n_moments > 15:
            warnings.warn(f"n_moments={self.n_moments} is beyond the validated range "
                          "(<= 15).", UserWarning, stacklevel=stacklevel)

    def _sketch_kind(self):
        """``sketch`` with ``"auto"`` resolved: the CDF sketch unless a moment-only
        solver is asked for."""
        if self.sketch != "auto":
            return self.sketch
        return "moments" if self.solver in ("legendre", "cosine") else "cdf"

    def _validate_params(self):
        """scikit-learn's parameter checks, skipped for a set of plain values that passed
        them before (see ``_VALID_PARAMS``)."""
        cls = type(self)
        names, seen = _VALID_PARAMS.get(cls, (None, None))
        if names is None:
            names, seen = tuple(cls._get_param_names()), set()
            _VALID_PARAMS[cls] = names, seen
        values = tuple(getattr(self, name) for name in names)
        # the types too: True == 1 but only one of them is a valid count
        key = tuple((type(v), v) for v in values) \
            if all(type(v) in _PLAIN for v in values) else None
        if key is not None and key in seen:
            return
        super()._validate_params()
        if key is not None and len(seen) < _MAX_VALID_PARAMS:
            seen.add(key)

    def _reset(self):
        """Forget the fitted state (``fit`` then begins a new one, as ``partial_fit`` on
        an unfitted transformer)."""
        for name in _FITTED:
            self.__dict__.pop(name, None)

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Sketch every feature of ``X`` (one pass) and solve for the quantiles.

        The same as ``partial_fit`` on an unfitted transformer, then the solve (which
        ``partial_fit`` leaves to the first use).
        """
        # a failed fit leaves a fitted transformer as it was
        with self._state_lock(), restored_on_failure(self):
            self._reset()
            # stacklevel 5: the caller of fit (through _partial_fit and _fit_context)
            self._partial_fit(X, sample_weight, stacklevel=5)
            self._solved = solve(self, self._state())
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
            return self._partial_fit(X, sample_weight, stacklevel=4)

    def _partial_fit(self, X, sample_weight, stacklevel):
        """Add a batch to the state (a new one when unfitted); ``stacklevel`` of the
        settings' warning names the caller of ``fit`` or ``partial_fit``."""
        first = not hasattr(self, "sketch_")
        # validate_data sets n_features_in_ and feature_names_in_ before later checks can
        # fail; a failed call must leave neither behind
        # The CDF sketch refuses infinities in its own pass over the values (its fast
        # paths too), so scikit-learn's check, a sum of X (0.2 ms per 1e6 values, 8 ms
        # for 1e6 x 20), is left out for it; bounds are checked first, and the moment
        # sketch leans on scikit-learn's check.
        own_check = self._sketch_kind() == "cdf" and self.bounds is None
        with restored_on_failure(self):
            if own_check and self._plain_array(X, first):
                pass
            else:
                X = validate_numeric_data(self, X, dtype=np.float64, reset=first,
                                          ensure_all_finite=False if own_check
                                          else "allow-nan")
            self._check_settings(stacklevel)
            if first:
                state = SketchState.begin(self, X.shape[1])
            else:
                self._check_sketch_settings()
                state = self._state().copy()
            self._set_state(state.ingest(X, sample_weight))
        return self

    def _plain_array(self, X, reset):
        """Whether ``X`` is a plain 2-D float64 array that scikit-learn's ``validate_data``
        (no finiteness check) would pass through unchanged, and if so, record what it
        records (``n_features_in_``; an array has no feature names). Its checks took 41
        of the 810 us of a fit of 100,000 x 1 values; anything else (other types and
        dtypes, empty arrays, a fit with feature names, a mismatch) goes through them."""
        if not (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
                and X.shape[0] >= 1 and X.shape[1] >= 1):
            return False
        if reset:
            self.__dict__.pop("feature_names_in_", None)
            self.n_features_in_ = X.shape[1]
            return True
        return "feature_names_in_" not in self.__dict__ and \
            self.__dict__.get("n_features_in_") == X.shape[1]

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
        # (The solved state leaves its cache of transform's tables behind by itself.)
        state = dict(super().__getstate__())
        state.pop("_lock", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if isinstance(self.__dict__.get("_solved"), dict):  # pickled as a dict before
            self._solved = None  # solved again on first use

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
        bounds = None if self.bounds is None else check_bounds(self.bounds,
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
            other_state = other._state()
        with self._state_lock():
            self._merge(other, other_state)
        return self

    def _merge(self, other, other_state):
        other_raw = other_state.raw
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
        self._set_state(self._state().merged(other_state))

    def _state(self):
        """The fitted :class:`SketchState` (its sketches are this transformer's own)."""
        return SketchState(self.sketch_, self.sketch_arcsinh_, self.n_rows_seen_)

    def _set_state(self, state):
        self.sketch_, self.sketch_arcsinh_, self.n_rows_seen_ = \
            state.raw, state.asinh, state.n_rows
        self._solved = None

    def __sklearn_is_fitted__(self):
        return hasattr(self, "sketch_")

    # ------------------------------------------------------- solved attributes
    def _ensure_solved(self):
        """The :class:`SolvedQuantiles` of the current state, solved on first use."""
        solved = self.__dict__.get("_solved")
        if solved is not None:
            return solved
        with self._state_lock():
            state = self._state()
        solved = solve(self, state)  # outside the lock: it may take a while
        with self._state_lock():
            if self.sketch_ is state.raw:  # not if partial_fit or merge came in between
                self._solved = solved
        return solved

    def __getattr__(self, name):
        # the fitted attributes read off the solved state (SolvedQuantiles, its fields
        # with a trailing underscore), solved on first use; only names not found on the
        # instance or its class come here
        if name in SOLVED_ATTRIBUTES and "sketch_" in self.__dict__:
            value = getattr(self._ensure_solved(), name[:-1])
            if value is not None:  # bin_edges_ and n_bins_ exist with n_bins only
                return value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def quantile_error_(self):
        """Estimated mean rank error of each feature's quantiles (see the class
        docstring); computed on first access for the moment sketch."""
        if not hasattr(self, "sketch_"):
            raise AttributeError("quantile_error_")
        solved = self._ensure_solved()
        if solved.quantile_error is None:
            with self._state_lock():
                state = self._state()
            solved.quantile_error = quantile_error(self, state, solved)
        return solved.quantile_error

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
                columns.append(np.interp(p_arr, solved.references, solved.quantiles[:, j]))
        out = np.column_stack(columns)
        return out[0] if np.ndim(p) == 0 else out

    # ----------------------------------------------------------- transform
    def _check_input(self, X, copy=True):
        check_is_fitted(self)
        return validate_numeric_data(self, X, dtype=np.float64,
                                     ensure_all_finite="allow-nan", reset=False, copy=copy)

    def transform(self, X):
        """Map each feature through its estimated CDF (or to its quantile bin)."""
        X = self._check_input(X)
        solved = self._ensure_solved()
        if self.n_bins is not None:
            return bin_codes(X, solved, self.encode)
        normal = self.output_distribution == "normal"
        kernels = get_backend()
        if kernels.name == "numba":
            return transform_numba(X, solved, normal)
        return transform_numpy(X, solved, normal, kernels)

    def inverse_transform(self, X):
        """Back to the input space (bin centres when ``n_bins`` is set, ordinal only)."""
        check_is_fitted(self)
        solved = self._ensure_solved()
        if self.n_bins is not None:
            if self.encode != "ordinal":
                raise ValueError(f"inverse_transform with n_bins needs encode='ordinal'; "
                                 f"got encode={self.encode!r}.")
            return inverse_bins(self._check_input(X), solved)
        return inverse_columns(self._check_input(X), solved,
                               self.output_distribution == "normal")

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
        n_bins = self._ensure_solved().n_bins
        return np.asarray([f"{name}_{b}" for name, k in zip(names, n_bins, strict=True)
                           for b in range(int(k))], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.requires_fit = True
        return tags
