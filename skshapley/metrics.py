"""Error measures for Shapley estimates against reference values."""

from __future__ import annotations

import numpy as np


def _pair(estimate, reference):
    estimate = np.asarray(estimate, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if estimate.shape != reference.shape:
        raise ValueError(
            f"estimate has shape {estimate.shape} but reference has shape {reference.shape}."
        )
    return estimate, reference


def shapley_mse(estimate, reference):
    """Mean squared error over all entries (Eq. 15 of Mitchell et al. 2022).

    Examples
    --------
    >>> from skshapley.metrics import shapley_mse
    >>> shapley_mse([[1.0, 2.0]], [[1.0, 0.0]])
    2.0
    """
    estimate, reference = _pair(estimate, reference)
    return float(np.mean((estimate - reference) ** 2))


def niae(estimate, reference):
    """Normalised integrated absolute error: sum |error| / sum |reference| per row, averaged.

    Examples
    --------
    >>> from skshapley.metrics import niae
    >>> niae([[1.0, 1.0]], [[2.0, 0.0]])
    1.0
    """
    estimate, reference = _pair(np.atleast_2d(estimate), np.atleast_2d(reference))
    scale = np.abs(reference).sum(axis=1)
    return float(np.mean(np.abs(estimate - reference).sum(axis=1) / np.where(scale > 0, scale, 1)))


def precision_at_k(estimate, reference, k):
    """Share of the reference top-k (by |value|) found in the estimate's top-k.

    Ties are broken toward the lower index, the same way in both rankings.

    Examples
    --------
    >>> from skshapley.metrics import precision_at_k
    >>> precision_at_k([3.0, 2.0, 1.0], [3.0, 0.5, 1.0], k=2)
    0.5
    """
    estimate, reference = _pair(estimate, reference)
    top_estimate = np.argsort(-np.abs(estimate), kind="stable")[:k]
    top_reference = np.argsort(-np.abs(reference), kind="stable")[:k]
    return len(set(top_estimate.tolist()) & set(top_reference.tolist())) / k
