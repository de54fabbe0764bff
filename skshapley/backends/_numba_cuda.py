"""numba.cuda backend: the GPUTreeShap warp kernel (§8.2.4, §8.7), twin of ``_cupy.py``.

Same lane program as the CUDA C++ of the CuPy backend, written with
``cuda.shfl_sync``/``cuda.shfl_up_sync`` (source lanes are absolute: group start plus
rank); float64 weights and float64 atomic adds. Paths of more than 31 distinct features
go to a one-thread-per-(row, path) kernel (quadrature form, §8.1.3). numba's CUDA
simulator has no warp shuffles, so without a GPU the lane program is checked by the
NumPy warp emulator of the tests instead.

Only the TreeSHAP kernels exist here so far; the model-agnostic kernels are issue 11.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float64, int32, int64

from skshapley.backends._gpu_common import (
    ROWS_PER_WARP,
    THREADS_PER_BLOCK,
    LayoutCache,
    missing_kernel,
)
from skshapley.backends._numpy import KERNELS

MAX_LONG_PATH = 64


@cuda.jit(device=True, inline=True)
def _one_fraction(x, f, lower, upper, miss, mode):
    if f < 0:
        return 1.0
    if math.isnan(x) or (mode == 1 and -1e-35 < x <= 1e-35):
        return float64(miss)
    return 1.0 if lower <= x < upper else 0.0


@cuda.jit
def _shap_warp(X, bin_ptr, feature, lower, upper, zero_fraction, miss, mode, path,
               group_start, group_length, out_ptr, out_index, out_value, rows_per_warp, out):
    n_rows, n_features = X.shape
    n_bins = bin_ptr.shape[0] - 1
    thread = cuda.grid(1)
    warp = thread // 32
    lane = cuda.laneid
    row_blocks = (n_rows + rows_per_warp - 1) // rows_per_warp
    if warp >= n_bins * row_blocks:
        return
    b = warp % n_bins
    e = bin_ptr[b] + lane
    if e >= bin_ptr[b + 1]:
        return
    start = int32(group_start[e])
    length = int32(group_length[e])
    rank = lane - start
    mask = np.uint32(0xFFFFFFFF) if length == 32 else np.uint32(((1 << length) - 1) << start)
    f = feature[e]
    z = zero_fraction[e]
    p = path[e]
    r0 = (warp // n_bins) * rows_per_warp
    r1 = min(n_rows, r0 + rows_per_warp)
    for r in range(r0, r1):
        x = X[r, f] if f >= 0 else 0.0
        o = _one_fraction(x, f, lower[e], upper[e], miss[e], mode[e])
        w = 1.0 if rank == 0 else 0.0
        for ud in range(1, length):
            z_new = cuda.shfl_sync(mask, z, start + ud)
            o_new = cuda.shfl_sync(mask, o, start + ud)
            left = cuda.shfl_up_sync(mask, w, 1)
            if rank == 0:
                left = 0.0
            w = (w * z_new * float64(max(ud - rank, 0)) / (ud + 1)
                 + o_new * left * rank / (ud + 1))
        top = length - 1
        nxt = cuda.shfl_sync(mask, w, start + top)
        t = 0.0
        for i in range(top - 1, -1, -1):
            wi = cuda.shfl_sync(mask, w, start + i)
            pre = (top - i) * z / (top + 1)
            q = nxt * (top + 1) / (i + 1)
            t += q * o
            nxt = wi - q * pre
            if pre > 0:
                t += (1.0 - o) * wi / pre
        if rank > 0:
            c = t * (o - z)
            for k in range(out_ptr[p], out_ptr[p + 1]):
                cuda.atomic.add(out, (r, out_index[k], f), c * out_value[k])


@cuda.jit
def _shap_long(X, paths, path_ptr, feature, lower, upper, zero_fraction, miss, mode, out_ptr,
               out_index, out_value, nodes, weights, out):
    n_rows = X.shape[0]
    thread = cuda.grid(1)
    if thread >= n_rows * paths.shape[0]:
        return
    r = thread % n_rows
    p = paths[thread // n_rows]
    start = path_ptr[p]
    u = path_ptr[p + 1] - start
    o = cuda.local.array(MAX_LONG_PATH, float64)
    prefix = cuda.local.array(MAX_LONG_PATH, float64)
    c = cuda.local.array(MAX_LONG_PATH, float64)
    for j in range(u):
        e = start + j
        o[j] = _one_fraction(X[r, feature[e]], feature[e], lower[e], upper[e], miss[e], mode[e])
        c[j] = 0.0
    q = (u + 1) // 2
    for k in range(q):
        t = nodes[q, k]
        running = 1.0
        for j in range(u):
            prefix[j] = running
            zj = zero_fraction[start + j]
            running *= zj + (o[j] - zj) * t
        running = 1.0
        for j in range(u - 1, -1, -1):
            c[j] += weights[q, k] * prefix[j] * running
            zj = zero_fraction[start + j]
            running *= zj + (o[j] - zj) * t
    for j in range(u):
        cj = c[j] * (o[j] - zero_fraction[start + j])
        for k in range(out_ptr[p], out_ptr[p + 1]):
            cuda.atomic.add(out, (r, out_index[k], feature[start + j]), cj * out_value[k])


class _NumbaArrays:
    """``asarray`` for :class:`LayoutCache`: copies host arrays to the device."""

    @staticmethod
    def asarray(array):
        return cuda.to_device(np.ascontiguousarray(array))


_CACHE = LayoutCache()


def tree_path_shap(X, path_ptr, feature, lower, upper, missing_branch, missing_mode,
                   zero_fraction, out_ptr, out_index, out_value, out):
    """numba.cuda twin of ``_tree_numpy.tree_path_shap``."""
    device = _CACHE.get(_NumbaArrays, path_ptr, feature, lower, upper, missing_branch,
                        missing_mode, zero_fraction, out_ptr, out_index, out_value)
    layout = device["layout"]
    if max(np.diff(path_ptr), default=0) > MAX_LONG_PATH:
        raise ValueError(f"paths of more than {MAX_LONG_PATH} distinct features are not "
                         "supported on the GPU; use backend='numba'.")
    X_device = cuda.to_device(np.ascontiguousarray(X, dtype=np.float64))
    n_rows = X.shape[0]
    result = cuda.to_device(np.zeros(out.shape))
    if layout.n_bins and n_rows:
        row_blocks = -(-n_rows // ROWS_PER_WARP)
        grid = -(-(layout.n_bins * row_blocks * 32) // THREADS_PER_BLOCK)
        _shap_warp[grid, THREADS_PER_BLOCK](
            X_device, device["bin_ptr"], device["feature"], device["lower"], device["upper"],
            device["zero_fraction"], device["missing_branch"], device["missing_mode"],
            device["path"], device["group_start"], device["group_length"], device["out_ptr"],
            device["out_index"], device["out_value"], int64(ROWS_PER_WARP), result)
    n_long = len(layout.long_paths)
    if n_long and n_rows:
        grid = -(-(n_rows * n_long) // THREADS_PER_BLOCK)
        _shap_long[grid, THREADS_PER_BLOCK](
            X_device, device["long_paths"], device["path_ptr"], device["ir_feature"],
            device["ir_lower"], device["ir_upper"], device["ir_zero_fraction"],
            device["ir_missing_branch"], device["ir_missing_mode"], device["out_ptr"],
            device["out_index"], device["out_value"], device["nodes"], device["weights"],
            result)
    out += result.copy_to_host()
    return out


for _name in KERNELS:
    if _name not in globals():
        globals()[_name] = missing_kernel("numba_cuda", _name)
