"""Error measures for Shapley estimates against reference values."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

# Not through skshapley.utils, whose validation helpers read skshapley._config, which
# looks up the backends: the import contract keeps metrics independent of them.
from skshapley.utils import NumberInterval, validate_params

# an estimate and its reference: arrays, or (shapley_mse) two numbers
_VALUES = ["array-like", Real]


def _pair(estimate, reference, caller, max_ndim=None):
    """Both arrays as float64, of one non-empty shape with at most ``max_ndim`` axes."""
    estimate = np.asarray(estimate, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if estimate.shape != reference.shape:
        raise ValueError(
            f"estimate has shape {estimate.shape} but reference has shape {reference.shape}."
        )
    if max_ndim is not None and not 1 <= estimate.ndim <= max_ndim:
        raise ValueError(
            f"{caller} takes 1-D (n_players,) or 2-D (n_rows, n_players) arrays; got "
            f"estimate and reference of shape {estimate.shape}."
        )
    if estimate.size == 0:
        # the mean over no entries is NaN, which would pass for a score
        raise ValueError(
            f"{caller} needs at least one value; got estimate and reference of shape "
            f"{estimate.shape}."
        )
    return estimate, reference


def _check_probabilities(p, caller):
    """``p`` as a non-empty 1-D float64 array of probabilities in [0, 1]."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(
            f"The 'p' parameter of {caller} must be a non-empty 1-D array of "
            f"probabilities; got shape {p.shape}."
        )
    outside = ~((p >= 0) & (p <= 1))  # also catches NaN
    if np.any(outside):
        # F_n^{-1}(p) is defined on [0, 1] only; beyond it the index floor(n p) would
        # wrap round to the other end of the sorted sample
        raise ValueError(
            f"The 'p' parameter of {caller} must hold probabilities in [0, 1]; got "
            f"{float(p[outside][0])!r} at index {int(np.flatnonzero(outside)[0])}."
        )
    return p


@validate_params({"estimate": _VALUES, "reference": _VALUES},
                 prefer_skip_nested_validation=True)
def shapley_mse(estimate, reference):
    """Mean squared error over all entries (Eq. 15 of Mitchell et al. 2022).

    Examples
    --------
    >>> from skshapley.metrics import shapley_mse
    >>> shapley_mse([[1.0, 2.0]], [[1.0, 0.0]])
    2.0
    """
    estimate, reference = _pair(estimate, reference, "shapley_mse")
    return float(np.mean((estimate - reference) ** 2))


@validate_params({"estimate": ["array-like"], "reference": ["array-like"]},
                 prefer_skip_nested_validation=True)
def niae(estimate, reference):
    """Normalised integrated absolute error: sum |error| / sum |reference| per row, averaged.

    Examples
    --------
    >>> from skshapley.metrics import niae
    >>> niae([[1.0, 1.0]], [[2.0, 0.0]])
    1.0
    """
    estimate, reference = _pair(estimate, reference, "niae", max_ndim=2)
    estimate, reference = np.atleast_2d(estimate), np.atleast_2d(reference)
    scale = np.abs(reference).sum(axis=1)
    return float(np.mean(np.abs(estimate - reference).sum(axis=1) / np.where(scale > 0, scale, 1)))


@validate_params(
    {
        "estimate": ["array-like"],
        "reference": ["array-like"],
        # k <= n_players is checked in the body: the bound depends on the data
        "k": [NumberInterval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def precision_at_k(estimate, reference, k):
    """Share of the reference top-k (by |value|) found in the estimate's top-k.

    Ties are broken toward the lower index, the same way in both rankings.

    Parameters
    ----------
    estimate, reference : array-like of shape (n_players,) or (n_rows, n_players)
        Shapley values; 2-D inputs are scored row by row and the shares averaged.
    k : int
        Size of the top sets, with ``1 <= k <= n_players``.

    Returns
    -------
    precision : float
        In [0, 1]; 1 when the two top-k sets agree (on every row).

    Examples
    --------
    >>> from skshapley.metrics import precision_at_k
    >>> precision_at_k([3.0, 2.0, 1.0], [3.0, 0.5, 1.0], k=2)
    0.5
    """
    estimate, reference = _pair(estimate, reference, "precision_at_k", max_ndim=2)
    estimate, reference = np.atleast_2d(estimate), np.atleast_2d(reference)
    n_players = estimate.shape[1]
    if k > n_players:
        # a k beyond n_players would still divide by k and score a perfect estimate < 1
        raise ValueError(
            f"The 'k' parameter of precision_at_k must be in [1, n_players={n_players}]; got k={k}."
        )
    in_top = []
    for values in (estimate, reference):
        order = np.argsort(-np.abs(values), axis=1, kind="stable")[:, :k]
        mask = np.zeros(values.shape, dtype=bool)
        np.put_along_axis(mask, order, True, axis=1)
        in_top.append(mask)
    hits = (in_top[0] & in_top[1]).sum(axis=1)
    return float(np.mean(hits / k))


def _empirical_quantiles(x, p):
    """F^{-1}(p) of a sample: the sorted element at 0-based index floor(n p), clipped."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"x must be a 1-D sample (one column); got shape {x.shape}.")
    s = np.sort(x[~np.isnan(x)])
    if s.size == 0:
        raise ValueError("x has no finite values: quantile errors are undefined.")
    index = np.minimum(np.floor(s.size * np.asarray(p)).astype(np.int64), s.size - 1)
    return s, s[index]


@validate_params({"x": ["array-like"], "estimate": ["array-like"], "p": ["array-like", None]},
                 prefer_skip_nested_validation=True)
def quantile_niae(x, estimate, p=None):
    r"""Normalised integrated absolute error of estimated quantiles (Mitchell, Frank &
    Holmes 2021, Sec. 8.1).

    :math:`\mathrm{NIAE} = \frac{1}{b - a} \int_0^1 |\hat q(p) - F_n^{-1}(p)| \, dp`, with
    (a, b) the range of ``x`` and :math:`F_n^{-1}(p)` the sorted element at index
    :math:`\lfloor n p \rfloor` (clipped to n - 1). The
    integral is the mean over the grid ``p`` (default 1000 equally spaced points in
    [0, 1], at which ``estimate`` must be given). Clipped at 1; 0 for a constant column
    estimated exactly. (Not to be confused with :func:`niae`, the Shapley error.)

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.metrics import quantile_niae
    >>> x = np.arange(11.0)
    >>> p = np.linspace(0, 1, 5)
    >>> quantile_niae(x, [0.0, 2.0, 5.0, 8.0, 9.0], p)
    0.02
    """
    p = np.linspace(0.0, 1.0, 1000) if p is None else _check_probabilities(p, "quantile_niae")
    estimate = np.asarray(estimate, dtype=np.float64)
    if estimate.shape != p.shape:
        raise ValueError(f"estimate has shape {estimate.shape} but p has shape {p.shape}.")
    s, truth = _empirical_quantiles(x, p)
    span = s[-1] - s[0]
    error = np.abs(estimate - truth)
    if not np.all(np.isfinite(error)):
        return 1.0
    if span == 0:
        return float(min(1.0, 0.0 if error.max() == 0 else 1.0))
    return float(min(1.0, np.mean(error) / span))


RANK_ERROR_PROBABILITIES = np.array([0.01, *np.arange(0.05, 0.951, 0.05), 0.99])


@validate_params({"x": ["array-like"], "estimate": ["array-like"], "p": ["array-like", None]},
                 prefer_skip_nested_validation=True)
def rank_error(x, estimate, p=None):
    """Mean rank error of estimated quantiles: mean over p of the distance from p to the
    rank interval [F_n(q_hat_p-), F_n(q_hat_p)].

    A value is a correct p-quantile exactly when p lies in its rank interval, so exact
    answers score 0 also on tied data (with mid-ranks, every estimator is charged up to
    half an atom's mass on columns such as Poisson counts). For untied data this is
    Gan et al.'s ``|rank(q_hat_p)/n - p|``. The default ``p`` is their 21 probabilities
    {0.01, 0.05, 0.10, ..., 0.95, 0.99} (Gan et al. 2018).

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.metrics import rank_error
    >>> x = np.arange(100.0)
    >>> round(rank_error(x, [49.5, 89.0], p=[0.5, 0.8]), 6)
    0.045
    """
    p = RANK_ERROR_PROBABILITIES if p is None else _check_probabilities(p, "rank_error")
    estimate = np.asarray(estimate, dtype=np.float64)
    if estimate.shape != p.shape:
        raise ValueError(f"estimate has shape {estimate.shape} but p has shape {p.shape}.")
    s, _ = _empirical_quantiles(x, p)
    below = np.searchsorted(s, estimate, side="left") / s.size
    at_or_below = np.searchsorted(s, estimate, side="right") / s.size
    error = np.maximum(0.0, np.maximum(below - p, p - at_or_below))
    return float(np.mean(error))
