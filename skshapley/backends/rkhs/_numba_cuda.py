"""numba.cuda kernel of RKHS-SHAP, twin of ``_numpy.py``: one thread per training row.
Checked against the NumPy twin in numba's CUDA simulator
(``tests/kernels/cudasim_cases.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from skshapley.backends._numba_cuda_common import grid


@cuda.jit
def _rkhs_subsets(training, background, length_scale, laplace, out, factors, product):
    # One thread per training row i: for each background row, the d per-feature kernel
    # values, then every subset's product from its parent's (the subset without its
    # highest feature: the twin's order of multiplication), summed over the background
    # into out[:, i]. The workspaces are the row's slices of global arrays.
    i = cuda.grid(1)
    n, d = training.shape
    if i >= n:
        return
    b = background.shape[0]
    n_subsets = out.shape[0]
    f = factors[i]
    prod = product[i]
    for mask in range(n_subsets):
        out[mask, i] = 0.0
    prod[0] = 1.0
    for r in range(b):
        for j in range(d):
            t = (training[i, j] - background[r, j]) / length_scale[j]
            f[j] = math.exp(-abs(t)) if laplace else math.exp(-(0.5 * t * t))
        high = 0
        for mask in range(1, n_subsets):
            if mask == 1 << (high + 1):
                high += 1
            prod[mask] = prod[mask ^ (1 << high)] * f[high]
            out[mask, i] += prod[mask]
    out[0, i] = 1.0
    for mask in range(1, n_subsets):
        out[mask, i] /= b


def rkhs_subset_embeddings(training, background, length_scale, laplace, out):
    """numba.cuda twin of ``_numpy.rkhs_subset_embeddings`` (one
    thread per training row; the same products, sums in another order)."""
    training = np.ascontiguousarray(training, dtype=np.float64)
    n, d = training.shape
    if n:
        result = cuda.device_array(out.shape, dtype=np.float64)
        _rkhs_subsets[grid(n)](
            cuda.to_device(training),
            cuda.to_device(np.ascontiguousarray(background, dtype=np.float64)),
            cuda.to_device(np.ascontiguousarray(length_scale, dtype=np.float64)),
            bool(laplace), result, cuda.device_array((n, d), dtype=np.float64),
            cuda.device_array((n, out.shape[0]), dtype=np.float64))
        out[...] = result.copy_to_host()
    return out
