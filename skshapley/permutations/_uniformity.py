"""Tests that a sampler's orderings are uniformly distributed (as in Mitchell, Stokes, Frank
& Holmes 2022, Sec. 5)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import erfinv
from scipy.stats import chi2

from skshapley.permutations._kernels import _check_orders, mallows_expectation, n_pairs


class UniformityTestResult(NamedTuple):
    """statistic, the acceptance threshold, and whether uniformity was accepted."""

    statistic: float
    threshold: float
    passed: bool


def _lehmer_rank(orders: np.ndarray) -> np.ndarray:
    """Lexicographic rank of each ordering among the d! orderings (Lehmer code)."""
    n, d = orders.shape
    smaller_later = (orders[:, None, :] < orders[:, :, None]) & np.triu(
        np.ones((d, d), dtype=bool), k=1)[None]
    digits = smaller_later.sum(axis=2)  # (n, d): later entries smaller than entry t
    factorials = np.array([math.factorial(d - 1 - t) for t in range(d)], dtype=np.int64)
    return digits @ factorials


def chi2_uniformity_test(orders, alpha: float = 0.05) -> UniformityTestResult:
    """Pearson's chi-square test of the counts of all d! orderings.

    Needs independent orderings and at least 5 expected per cell (N >= 5 d!).

    Examples
    --------
    >>> from skshapley.permutations import MonteCarlo, chi2_uniformity_test
    >>> chi2_uniformity_test(MonteCarlo(4, rng=0).random(2400)).passed
    True
    """
    orders = _check_orders(orders)
    n, d = orders.shape
    cells = math.factorial(d)
    expected = n / cells
    if expected < 5:
        raise ValueError(
            f"chi2_uniformity_test needs at least 5 orderings per cell: {n} orderings for "
            f"{cells} = {d}! cells; draw at least {5 * cells} or use mmd_uniformity_test."
        )
    counts = np.bincount(_lehmer_rank(orders), minlength=cells)
    statistic = float(((counts - expected) ** 2).sum() / expected)
    threshold = float(chi2.ppf(1.0 - alpha, cells - 1))
    return UniformityTestResult(statistic, threshold, statistic <= threshold)


def mmd_uniformity_test(orders, lam: float = 5.0, alpha: float = 0.05,
                        bound: str = "auto") -> UniformityTestResult:
    """Linear-time one-sample MMD test with the Mallows kernel.

    M = (2/N) sum_i K(pi_{2i-1}, pi_{2i}) - E_d(lam) is unbiased for
    MMD^2(uniform, sampler), which is zero only for the uniform law (Mallows is
    characteristic). Consecutive rows form the pairs, so they must be independent: test
    one row per block or replicate for antithetic, orthogonal and QMC streams.

    Parameters
    ----------
    orders : int (N, d), N even
    lam : float, default=5.0
    alpha : float, default=0.05
    bound : {"auto", "hoeffding", "clt"}
        Acceptance threshold: distribution-free Hoeffding, or the CLT (tighter); "auto"
        uses the CLT from N = 100 on.

    Examples
    --------
    >>> from skshapley.permutations import MonteCarlo, mmd_uniformity_test
    >>> mmd_uniformity_test(MonteCarlo(20, rng=0).random(2000)).passed
    True
    """
    orders = _check_orders(orders)
    n, d = orders.shape
    if n < 2 or n % 2:
        raise ValueError(f"mmd_uniformity_test needs an even number >= 2 of orderings; got {n}.")
    if bound not in ("auto", "hoeffding", "clt"):
        raise ValueError(f"The 'bound' parameter must be 'auto', 'hoeffding' or 'clt'; "
                         f"got {bound!r}.")
    first, second = orders[0::2], orders[1::2]
    ranks_first, ranks_second = np.argsort(first, axis=1), np.argsort(second, axis=1)
    i, j = np.triu_indices(d, k=1)
    n_dis = ((ranks_first[:, i] < ranks_first[:, j])
             != (ranks_second[:, i] < ranks_second[:, j])).sum(axis=1)
    pairs = n_pairs(d)
    kernel = np.exp(-lam * n_dis / pairs) if pairs else np.ones(n // 2)
    mean = mallows_expectation(d, lam)
    statistic = float(kernel.mean() - mean)
    if bound == "hoeffding" or (bound == "auto" and n < 100):
        threshold = float(np.sqrt(np.log(2.0 / alpha) / n))
    else:
        variance = max(mallows_expectation(d, 2 * lam) - mean**2, 0.0)
        threshold = float(np.sqrt(2.0 * 2.0 * variance / n) * erfinv(1.0 - alpha))
    return UniformityTestResult(statistic, threshold, abs(statistic) < threshold)
