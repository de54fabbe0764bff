"""Numba CPU kernels, twins of ``_numpy.py`` (same names, same signatures).

Outer loops run with ``prange``; each iteration writes only its own rows, so results are
bit-identical for any thread count. No ``fastmath``: games may return ``inf``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from skshapley.backends._numpy import _shapley_weights

KERNELS = (
    "assemble_masked_batch",
    "prefix_coalitions",
    "accumulate_permutation_marginals",
    "exact_shapley_from_values",
)


@njit(parallel=True, cache=True)
def _assemble_masked_batch(x, background, coalitions, out):
    m, d = coalitions.shape
    n_background = background.shape[0]
    for k in prange(m):
        base = k * n_background
        for r in range(n_background):
            for j in range(d):
                out[base + r, j] = x[j] if coalitions[k, j] else background[r, j]
    return out


def assemble_masked_batch(x, background, coalitions, out):
    """Numba twin of :func:`skshapley.backends._numpy.assemble_masked_batch`."""
    return _assemble_masked_batch(x, background, coalitions, out)


@njit(parallel=True, cache=True)
def _prefix_coalitions(orders, out):
    n, d = orders.shape
    for p in prange(n):
        for t in range(d - 1):
            for j in range(d):
                out[p, t, j] = False
        for t in range(d - 1):
            # Prefix t holds players orders[p, 0..t]: player orders[p, s] is in every
            # prefix t >= s.
            player = orders[p, t]
            for u in range(t, d - 1):
                out[p, u, player] = True
    return out


def prefix_coalitions(orders, out):
    """Numba twin of :func:`skshapley.backends._numpy.prefix_coalitions`."""
    if orders.shape[1] < 2:
        return out
    return _prefix_coalitions(orders, out)


@njit(parallel=True, cache=True)
def _accumulate_permutation_marginals(orders, path_values, out):
    n, d = orders.shape
    k = path_values.shape[2]
    for p in prange(n):
        for t in range(d):
            player = orders[p, t]
            for c in range(k):
                out[p, player, c] = path_values[p, t + 1, c] - path_values[p, t, c]
    return out


def accumulate_permutation_marginals(orders, path_values, out):
    """Numba twin of :func:`skshapley.backends._numpy.accumulate_permutation_marginals`."""
    return _accumulate_permutation_marginals(orders, path_values, out)


@njit(parallel=True, cache=True)
def _exact_shapley_from_values(values, weights, n_players, out):
    d = n_players
    k = values.shape[1]
    n_masks = 1 << d
    for j in prange(d):
        bit = 1 << j
        for c in range(k):
            out[j, c] = 0.0
        # Fixed summation order (increasing mask) makes the result thread-count invariant.
        for s in range(n_masks):
            if s & bit:
                continue
            size = 0
            rest = s
            while rest:
                rest &= rest - 1
                size += 1
            w = weights[size]
            for c in range(k):
                out[j, c] += w * (values[s | bit, c] - values[s, c])
    return out


def exact_shapley_from_values(values, n_players, out):
    """Numba twin of :func:`skshapley.backends._numpy.exact_shapley_from_values`."""
    weights = np.asarray(_shapley_weights(n_players), dtype=np.float64)
    return _exact_shapley_from_values(values, weights, n_players, out)
