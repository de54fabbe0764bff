"""Numba CPU kernels of coalitions and their values, twins of ``_numpy.py`` (same names,
same signatures).

Outer loops run with ``prange``; each iteration writes only its own rows, so results are
bit-identical for any thread count, and the serial build (used for small arrays) gives
the same bits too. No ``fastmath``: games may return ``inf``.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from skshapley.backends._numba_runtime import PARALLEL_MIN_ELEMENTS, compile_twice
from skshapley.backends.masking._numpy import _shapley_weights


def _assemble_masked_batch(x, background, coalitions, out):
    # On the bits of the float64 values (uint64 views): a select by an all-ones or
    # all-zeros mask, which vectorises, where the branch per value did not (0.33 against
    # 0.12-0.16 ns a value at d = 20-200, one thread; the same bits, NaN and inf too).
    m, d = coalitions.shape
    n_rows = x.shape[0]
    n_background = background.shape[0]
    for k in prange(m):
        for i in range(n_rows):
            base = (k * n_rows + i) * n_background
            for r in range(n_background):
                for j in range(d):
                    take = np.uint64(0) - np.uint64(coalitions[k, j])
                    out[base + r, j] = (x[i, j] & take) | (background[r, j] & ~take)
    return out


_assemble_serial, _assemble_parallel = compile_twice(_assemble_masked_batch)


# The masked batch is a copy bound by memory bandwidth: serially 0.8 ms for one row's
# 1218 coalitions x 100 background rows x 20 features (2.4e6 elements), while the prange
# build took 12-15 ms on the 2-core CI machine under load (a parallel region waits for
# a time slice on each core) and gains at most 2x when it runs. It goes parallel only
# from this many elements (about 3 ms serially): at 16 rows (3.9e7) it took 14.5 ms
# against 29 ms.
ASSEMBLE_PARALLEL_MIN_ELEMENTS = 1 << 23


def assemble_masked_batch(x, background, coalitions, out):
    """Numba twin of ``_numpy.assemble_masked_batch`` (``out`` float64, as there)."""
    kernel = (_assemble_parallel if out.size >= ASSEMBLE_PARALLEL_MIN_ELEMENTS
              else _assemble_serial)
    bits = [np.asarray(a, dtype=np.float64).view(np.uint64) for a in (x, background)]
    kernel(*bits, coalitions, out.view(np.uint64))
    return out


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


_prefix_serial, _prefix_parallel = compile_twice(_prefix_coalitions)


def prefix_coalitions(orders, out):
    """Numba twin of ``_numpy.prefix_coalitions``."""
    if orders.shape[1] < 2:
        return out
    kernel = _prefix_parallel if out.size >= PARALLEL_MIN_ELEMENTS else _prefix_serial
    return kernel(orders, out)


def _accumulate_permutation_marginals(orders, path_values, out):
    n, d = orders.shape
    k = path_values.shape[2]
    for p in prange(n):
        for t in range(d):
            player = orders[p, t]
            for c in range(k):
                out[p, player, c] = path_values[p, t + 1, c] - path_values[p, t, c]
    return out


_accumulate_serial, _accumulate_parallel = compile_twice(_accumulate_permutation_marginals)


def accumulate_permutation_marginals(orders, path_values, out):
    """Numba twin of ``_numpy.accumulate_permutation_marginals``."""
    big = out.size >= PARALLEL_MIN_ELEMENTS
    kernel = _accumulate_parallel if big else _accumulate_serial
    return kernel(orders, path_values, out)


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


_exact_serial, _exact_parallel = compile_twice(_exact_shapley_from_values)


def exact_shapley_from_values(values, n_players, out):
    """Numba twin of ``_numpy.exact_shapley_from_values``."""
    weights = np.asarray(_shapley_weights(n_players), dtype=np.float64)
    kernel = _exact_parallel if values.size >= PARALLEL_MIN_ELEMENTS else _exact_serial
    return kernel(values, weights, n_players, out)
