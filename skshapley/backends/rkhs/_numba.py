"""Numba CPU kernel of RKHS-SHAP, twin of ``_numpy.py`` (same name, same signature)."""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from skshapley.backends._numba_runtime import compile_twice


def _rkhs_subset_embeddings(training, background, length_scale, laplace, block, out):
    n, d = training.shape
    b = background.shape[0]
    n_subsets = 1 << d
    for i in prange(n):
        factors = np.empty((d, block))
        product = np.empty((n_subsets, block))
        total = np.zeros(n_subsets)
        for start in range(0, b, block):
            m = min(block, b - start)
            for j in range(d):
                a = training[i, j]
                scale = length_scale[j]
                for k in range(m):
                    t = (a - background[start + k, j]) / scale
                    factors[j, k] = math.exp(-abs(t)) if laplace else math.exp(-(0.5 * t * t))
            for k in range(m):
                product[0, k] = 1.0
            high = 0
            for mask in range(1, n_subsets):
                if mask == 1 << (high + 1):
                    high += 1
                # parent = mask without its highest feature: the numpy twin's order of
                # multiplication (increasing feature index), so the same bits per product
                parent = mask ^ (1 << high)
                acc = 0.0
                for k in range(m):
                    product[mask, k] = product[parent, k] * factors[high, k]
                    acc += product[mask, k]
                total[mask] += acc
        out[0, i] = 1.0
        for mask in range(1, n_subsets):
            out[mask, i] = total[mask] / b
    return out


_rkhs_embeddings_serial, _rkhs_embeddings_parallel = compile_twice(
    _rkhs_subset_embeddings, error_model="numpy")


def rkhs_subset_embeddings(training, background, length_scale, laplace, out):
    """Numba twin of ``_numpy.rkhs_subset_embeddings``: one
    training row per iteration, background in blocks, all subset products of a block
    from their parents (same products, sums in a different order: within round-off)."""
    d = training.shape[1]
    block = int(max(1, min(256, 2**16 >> d)))  # the (2^d, block) products stay in cache
    return _rkhs_embeddings_parallel(np.ascontiguousarray(training, dtype=np.float64),
                                     np.ascontiguousarray(background, dtype=np.float64),
                                     np.ascontiguousarray(length_scale, dtype=np.float64),
                                     bool(laplace), block, out)
