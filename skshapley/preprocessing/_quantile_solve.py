"""The quantiles a :class:`~skshapley.MomentQuantileTransformer` reads (CDF sketch) or
solves (moment sketch) from its sketch state, with what the solve recorded
(:class:`SolvedQuantiles`), its rank-error estimate and its quantile bins.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field, fields

import numpy as np

from skshapley.exceptions import ConvergenceWarning
from skshapley.sketch import scaled_moments, solve_quantiles

__all__ = ["SOLVED_ATTRIBUTES", "SolvedQuantiles", "quantile_error", "solve"]

_AUTO_RATIO = 4.0


@dataclass(eq=False)
class SolvedQuantiles:
    """What a transformer's sketch state solves to: its fitted attributes.

    ``MomentQuantileTransformer`` shows each field as the attribute of the same name
    with a trailing underscore (``quantiles`` as ``quantiles_``), solved on first use
    after ``partial_fit`` or ``merge`` (``fit`` solves at once) and kept until the state
    changes.

    Attributes
    ----------
    quantiles : ndarray of shape (n_quantiles, n_features)
        The tabulated quantiles (NaN for a feature without values), as sklearn's
        ``QuantileTransformer.quantiles_``.
    references : ndarray of shape (n_quantiles,)
        Their probabilities, evenly spaced on [0, 1].
    n_quantiles : int
        ``n_quantiles`` capped at the rows seen.
    order_used, solver_used, transform_used, converged : ndarray of shape (n_features,)
        Per feature: the moment order solved with, the solver (``"cdf"``, ``"exact"``,
        ``"constant"``, ``"empty"`` or a moment solver), ``"none"`` or ``"arcsinh"``,
        and whether it converged.
    n_iter : int
        Most Newton iterations over the features.
    n_iter_per_feature : ndarray of shape (n_features,)
    sketch_used : {"cdf", "moments"}
    bin_edges, n_bins : ndarray of object arrays, ndarray of int, or None
        Each feature's quantile bin edges and bin count (``None`` unless ``n_bins`` is
        set).
    quantile_error : ndarray of shape (n_features,) or None
        Estimated mean rank error per feature (:func:`quantile_error`); ``None`` until
        asked for with the moment sketch, where it costs two more solves per feature.
    tables : dict
        ``transform``'s lookup tables, by output (normal or not): a cache, not pickled.
    """

    quantiles: np.ndarray
    references: np.ndarray
    n_quantiles: int
    order_used: np.ndarray
    solver_used: np.ndarray
    transform_used: np.ndarray
    converged: np.ndarray
    n_iter: int
    n_iter_per_feature: np.ndarray
    sketch_used: str
    bin_edges: np.ndarray | None = None
    n_bins: np.ndarray | None = None
    quantile_error: np.ndarray | None = None
    tables: dict = field(default_factory=dict, repr=False)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("tables")  # a cache of transform's, rebuilt on use
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.tables = {}


# the transformer's attributes that read a SolvedQuantiles field as it is (not the
# cache, nor quantile_error, which the transformer computes on demand)
SOLVED_ATTRIBUTES = frozenset(f.name + "_" for f in fields(SolvedQuantiles)
                              if f.name not in ("tables", "quantile_error"))


@functools.lru_cache(maxsize=8)
def _references(n_quantiles):
    """np.linspace(0, 1, n_quantiles) (read-only; kept: linspace's own checks took 10 us
    of a 0.55 ms fit of 100,000 values)."""
    references = np.linspace(0, 1, n_quantiles, endpoint=True)
    references.flags.writeable = False
    return references


def _solver_options(transformer):
    return {"solver": transformer.solver, "n_grid": transformer.n_grid,
            "tol": transformer.tol, "max_iter": transformer.max_iter,
            "track_atoms": transformer.track_atoms}


def _choose_transform(transformer, raw, asinh):
    """Per feature, ``"arcsinh"`` where the arcsinh sketch should be solved instead of
    the raw one (``input_transform="auto"``: its variance, relative to the range, is
    ``_AUTO_RATIO`` times the raw one's)."""
    d = raw.n_features
    if asinh is None or raw.kind == "cdf":
        return np.array(["none"] * d, dtype=object)
    if transformer.input_transform == "arcsinh":
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


def solve(transformer, state):
    """The :class:`SolvedQuantiles` of the sketch state ``state`` under
    ``transformer``'s parameters.

    Warns as sklearn when ``n_quantiles`` exceeds the rows seen. Its warnings name the
    caller of ``fit``, ``transform`` or a fitted attribute: call it directly from those.
    """
    raw, asinh = state.raw, state.asinh
    d = raw.n_features
    # as sklearn (rows seen; with sample weights, their sum, so that integer weights
    # and repeated rows agree), with its warning
    n_samples = int(round(state.n_rows))
    if transformer.n_quantiles > n_samples:
        # stacklevel 4: the caller of fit (through _fit_context), of transform, or of
        # a fitted attribute
        warnings.warn(f"n_quantiles ({transformer.n_quantiles}) is greater than the total "
                      f"number of samples ({n_samples}). n_quantiles is set to "
                      "n_samples.", UserWarning, stacklevel=4)
    n_quantiles = max(1, min(transformer.n_quantiles, n_samples))
    references = _references(n_quantiles).copy()
    transforms = _choose_transform(transformer, raw, asinh)
    quantiles = np.empty((n_quantiles, d))
    orders = np.zeros(d, dtype=np.int64)
    solvers = np.empty(d, dtype=object)
    converged = np.zeros(d, dtype=bool)
    n_iter = np.zeros(d, dtype=np.int64)
    options = _solver_options(transformer)
    cdf = raw.kind == "cdf"
    low, high = raw.min, raw.max
    if cdf:
        constant = low == high
        # every feature's quantiles in one call (the polylines inverted together)
        read = None if raw.is_empty else raw.quantile(references)
    for j in range(d):
        if not raw.weight[j] > 0:
            quantiles[:, j] = np.nan
            solvers[j], converged[j] = "empty", False
            continue
        if cdf:
            # read off the polyline (or the exact table): no solve
            quantiles[:, j] = read[:, j]
            solvers[j] = "exact" if raw.exact[j] else ("constant" if constant[j] else "cdf")
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
    quantiles = np.clip(quantiles, low, high)
    solved = SolvedQuantiles(
        quantiles=quantiles, references=references, n_quantiles=n_quantiles,
        order_used=orders, solver_used=solvers, transform_used=transforms,
        converged=converged, n_iter=int(n_iter.max(initial=0)), n_iter_per_feature=n_iter,
        sketch_used=raw.kind)
    if transformer.n_bins is not None:
        solved.bin_edges, solved.n_bins = _bin_edges(transformer.n_bins, quantiles,
                                                     references)
    if cdf or transformer.rank_tol is not None:
        # the moment sketch's estimate needs a second solve per feature: only on
        # demand (quantile_error_) or when a tolerance asks for it
        solved.quantile_error = quantile_error(transformer, state, solved)
    if transformer.rank_tol is not None:
        _check_rank_tol(transformer.rank_tol, solved)
    return solved


def quantile_error(transformer, state, solved):
    """Estimated mean rank error per feature (see ``quantile_error_``): the CDF sketch's
    own estimate, or how far the CDFs of moment fits one and two orders lower sit from
    the fitted quantiles."""
    raw, asinh = state.raw, state.asinh
    d = raw.n_features
    solvers = solved.solver_used
    if raw.kind == "cdf":
        error = raw.quantile_error()
    else:
        error = np.zeros(d)
        references = solved.references
        inner = (references > 0) & (references < 1)
        options = _solver_options(transformer)
        for j in range(d):
            if solvers[j] not in ("maxent", "legendre", "cosine") or not inner.any():
                continue
            sketch = asinh if solved.transform_used[j] == "arcsinh" else raw
            order = int(solved.order_used[j])
            q = solved.quantiles[inner, j]
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
    # two comparisons, not np.isin (13 us on an object array of one feature)
    return np.where((solvers == "exact") | (solvers == "constant"), 0.0, error)


def _check_rank_tol(rank_tol, solved):
    """Warn (``ConvergenceWarning``) for the features whose estimated rank error
    exceeds ``rank_tol``."""
    error = solved.quantile_error
    with np.errstate(invalid="ignore"):
        over = np.nonzero(error > rank_tol)[0]
    if over.size:
        shown = ", ".join(f"{j} ({error[j]:.2g})" for j in over[:10])
        more = f" and {over.size - 10} more" if over.size > 10 else ""
        advice = "increase n_knots" if solved.sketch_used == "cdf" else \
            "use sketch='cdf' (the default)"
        warnings.warn(f"The estimated rank error (quantile_error_) of feature(s) "
                      f"{shown}{more} exceeds rank_tol={rank_tol}; {advice}.",
                      ConvergenceWarning, stacklevel=5)  # as _bin_edges': called by solve


def _bin_edges(n_bins, quantiles, references):
    """Each feature's ``n_bins`` quantile bin edges (narrower bins merged, as
    ``KBinsDiscretizer`` does, with its warning) and bin count."""
    d = quantiles.shape[1]
    p = np.linspace(0, 1, n_bins + 1)
    edges = np.empty(d, dtype=object)
    counts = np.zeros(d, dtype=np.int64)
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
        counts[j] = len(e) - 1
    return edges, counts
