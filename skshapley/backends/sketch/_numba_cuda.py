"""numba.cuda kernels of the moment sketches and the quantile transform, twins of
``_numpy.py``: a block per column with tree reductions in shared memory for the moments,
one thread per element for the others. Checked against the NumPy twins in numba's CUDA
simulator (``tests/kernels/cudasim_cases.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float64, int64

from skshapley.backends._numba_cuda_common import (
    BLOCK_THREADS,
    block_extreme,
    block_sum,
    grid,
    launch,
)
from skshapley.backends.sketch._numpy import N_MOMENT_FIELDS, unit_exponent

MOMENT_THREADS = BLOCK_THREADS  # threads per column block (the block reductions')
MAX_MOMENT_ORDER = 32


@cuda.jit
def _moment_summary(x, w, out):
    """Block j summarises column j: weight, two-pass mean, range, atoms, counts."""
    j = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    shared = cuda.shared.array(MOMENT_THREADS, float64)
    n = x.shape[1]
    total = 0.0
    sum_wx = 0.0
    low = math.inf
    high = -math.inf
    n_nan = 0.0
    n_rows = 0.0
    for i in range(tid, n, MOMENT_THREADS):
        v = x[j, i]
        if math.isnan(v):
            n_nan += 1.0
        elif w[i] > 0:
            total += w[i]
            sum_wx += w[i] * v
            n_rows += 1.0
            low = min(low, v)
            high = max(high, v)
    total = block_sum(shared, total)
    sum_wx = block_sum(shared, sum_wx)
    n_nan = block_sum(shared, n_nan)
    n_rows = block_sum(shared, n_rows)
    low = block_extreme(shared, low, False)
    high = block_extreme(shared, high, True)
    mean = sum_wx / total if n_rows > 0 else 0.0
    correction = 0.0
    w_low = 0.0
    w_high = 0.0
    w_zero = 0.0
    for i in range(tid, n, MOMENT_THREADS):
        v = x[j, i]
        if w[i] > 0 and not math.isnan(v):
            correction += w[i] * (v - mean)
            if v == low:
                w_low += w[i]
            if v == high:
                w_high += w[i]
            if v == 0:
                w_zero += w[i]
    correction = block_sum(shared, correction)
    w_low = block_sum(shared, w_low)
    w_high = block_sum(shared, w_high)
    w_zero = block_sum(shared, w_zero)
    if tid == 0:
        for f in range(out.shape[1]):
            out[j, f] = 0.0
        out[j, 3] = low
        out[j, 4] = high
        out[j, 8] = n_nan
        out[j, 9] = n_rows
        if n_rows > 0:
            mean += correction / total
            out[j, 0] = total
            out[j, 1] = min(max(mean, low), high)
            out[j, 5] = w_low
            out[j, 6] = w_high
            out[j, 7] = w_zero


@cuda.jit
def _moment_powers(x, w, mean, scale, order, first, out):
    """Block j: sum_i w_i ((x_i - mean) * scale)^k for k = 1..order into out[j, first + k - 1]."""
    j = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    shared = cuda.shared.array(MOMENT_THREADS, float64)
    sums = cuda.local.array(MAX_MOMENT_ORDER, float64)
    for k in range(order):
        sums[k] = 0.0
    n = x.shape[1]
    for i in range(tid, n, MOMENT_THREADS):
        v = x[j, i]
        if w[i] > 0 and not math.isnan(v):
            dev = (v - mean[j]) * scale[j]
            power = w[i]
            for k in range(order):
                power *= dev
                sums[k] += power
    for k in range(order):
        total = block_sum(shared, sums[k])
        if tid == 0:
            out[j, first + k] = total


def moment_chunk(x, w, order, out):
    """numba.cuda twin of ``_numpy.moment_chunk``: one block per
    column, block tree reductions; the exponent is set on the host between the two
    launches (it needs frexp of the range)."""
    if order > MAX_MOMENT_ORDER:
        raise ValueError(f"order must be at most {MAX_MOMENT_ORDER} on the GPU; got {order}.")
    d = x.shape[0]
    if d == 0:
        return out
    x_device = cuda.to_device(np.ascontiguousarray(x, dtype=np.float64))
    w_device = cuda.to_device(np.ascontiguousarray(w, dtype=np.float64))
    result = cuda.device_array(out.shape, dtype=np.float64)
    _moment_summary[d, MOMENT_THREADS](x_device, w_device, result)
    summary = result.copy_to_host()
    exponents = np.array([unit_exponent(low, high) if rows else 0
                          for low, high, rows in summary[:, [3, 4, 9]]], dtype=np.float64)
    summary[:, 2] = exponents
    result = cuda.to_device(summary)
    if order:
        means = cuda.to_device(np.ascontiguousarray(summary[:, 1]))
        scales = cuda.to_device(np.ldexp(1.0, -exponents.astype(np.int64)))
        _moment_powers[d, MOMENT_THREADS](x_device, w_device, means, scales, int64(order),
                                          int64(N_MOMENT_FIELDS), result)
    out[...] = result.copy_to_host()
    return out


@cuda.jit
def _arcsinh_kernel(x, out):
    i = cuda.grid(1)
    if i >= x.shape[0]:
        return
    v = x[i]
    a = abs(v)
    if a > 1e150:  # a * a would overflow; asinh(a) = log(2a) to double precision
        r = math.log(a) + 0.6931471805599453
    elif a >= 0.5:
        r = math.log(a + math.sqrt(a * a + 1.0))
    else:
        r = math.log1p(a + a * a / (1.0 + math.sqrt(1.0 + a * a)))
    out[i] = math.copysign(r, v) if v == v else v


def arcsinh(x, out):
    """numba.cuda twin of ``_numpy.arcsinh`` (within 2 ulp)."""
    flat = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    if flat.size:
        result = cuda.device_array(flat.shape, dtype=np.float64)
        _arcsinh_kernel[grid(flat.size)](cuda.to_device(flat), result)
        out[...] = result.copy_to_host().reshape(out.shape)
    return out


@cuda.jit
def _interp(X, xp, fp, out):
    element = cuda.grid(1)
    n, d = X.shape
    if element >= n * d:
        return
    i = element // d
    j = element % d
    v = X[i, j]
    m = xp.shape[1]
    if v != v:
        out[i, j] = v
    elif v <= xp[j, 0]:
        out[i, j] = fp[0]
    elif v >= xp[j, m - 1]:
        out[i, j] = fp[m - 1]
    else:
        lo = 0  # xp[j, lo] < v < xp[j, hi]: bisect to adjacent knots
        hi = m - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if xp[j, mid] <= v:
                lo = mid
            else:
                hi = mid
        # NumPy's formula and operation order, so results agree to the last bit
        slope = (fp[lo + 1] - fp[lo]) / (xp[j, lo + 1] - xp[j, lo])
        out[i, j] = slope * (v - xp[j, lo]) + fp[lo]


def interp_columns(X, xp, fp, out):
    """numba.cuda twin of ``_numpy.interp_columns``."""
    if out.size:
        launch(_interp, grid(out.size),
                [np.asarray(a, dtype=np.float64) for a in (X, xp, fp)], out)
    return out
