"""numba.cuda kernels of exact TreeSHAP: the GPUTreeShap warp kernel (Mitchell, Frank &
Holmes 2022, Sec. 3.4), twin of ``_cupy.py``.

Same lane program as the CUDA C++ of the CuPy backend, written with
``cuda.shfl_sync``/``cuda.shfl_up_sync`` (source lanes are absolute: group start plus
rank); float64 weights and float64 atomic adds. Paths of more than 31 distinct features
go to a one-thread-per-(row, path) kernel (quadrature form of ``_numpy``). numba's CUDA
simulator has no warp shuffles, so without a GPU the lane program is checked by the
NumPy warp emulator of the tests instead.

Interaction values and interventional values use one thread per (row, path) without
shuffles; they are checked against the NumPy twins in numba's CUDA simulator
(tests/kernels/test_cuda_simulator.py) on every test run. The background patterns and
the walk of few rows run on the CPU (the numba kernels).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float64, int32, int64

from skshapley.backends._gpu_common import ROWS_PER_WARP, THREADS_PER_BLOCK
from skshapley.backends._numba_cuda_common import grid, thread_cell
from skshapley.backends.tree import _numba
from skshapley.backends.tree._layout import LayoutCache
from skshapley.backends.tree._numpy import (
    CATEGORY_SET,
    LEGENDRE_NODES,
    LEGENDRE_WEIGHTS,
    SHAPLEY_WEIGHTS,
    category_set_contains,
)

MAX_LONG_PATH = 64

_in_category_set = cuda.jit(device=True, inline=True)(category_set_contains)


@cuda.jit(device=True, inline=True)
def _one_fraction(x, f, lower, upper, miss, mode):
    if f < 0:
        return 1.0
    if math.isnan(x) or (mode == 1 and -1e-35 < x <= 1e-35):
        return float64(miss)
    if mode == CATEGORY_SET:  # the set of x's atom, in the bits of lower/upper
        return 1.0 if _in_category_set(x, lower, upper) else 0.0
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


def tree_path_shap(X, paths, out, cache=None):
    """numba.cuda twin of ``_numpy.tree_path_shap``; ``cache`` as in the CuPy twin."""
    device = (LayoutCache(size=1) if cache is None else cache).get(_NumbaArrays, paths)
    layout = device["layout"]
    if max(np.diff(paths.path_ptr), default=0) > MAX_LONG_PATH:
        raise ValueError(f"paths of more than {MAX_LONG_PATH} distinct features are not "
                         "supported on the GPU; use backend='numba'.")
    X_device = cuda.to_device(np.ascontiguousarray(X, dtype=np.float64))
    n_rows = X.shape[0]
    result = cuda.to_device(np.zeros(out.shape))
    if layout.n_bins and n_rows:
        row_blocks = -(-n_rows // ROWS_PER_WARP)
        blocks = -(-(layout.n_bins * row_blocks * 32) // THREADS_PER_BLOCK)
        _shap_warp[blocks, THREADS_PER_BLOCK](
            X_device, device["bin_ptr"], device["feature"], device["lower"], device["upper"],
            device["zero_fraction"], device["missing_branch"], device["missing_mode"],
            device["path"], device["group_start"], device["group_length"], device["out_ptr"],
            device["out_index"], device["out_value"], int64(ROWS_PER_WARP), result)
    n_long = len(layout.long_paths)
    if n_long and n_rows:
        blocks = -(-(n_rows * n_long) // THREADS_PER_BLOCK)
        _shap_long[blocks, THREADS_PER_BLOCK](
            X_device, device["long_paths"], device["path_ptr"], device["ir_feature"],
            device["ir_lower"], device["ir_upper"], device["ir_zero_fraction"],
            device["ir_missing_branch"], device["ir_missing_mode"], device["out_ptr"],
            device["out_index"], device["out_value"], device["nodes"], device["weights"],
            result)
    out += result.copy_to_host()
    return out


@cuda.jit(device=True, inline=True)
def _thread_path(path_ptr, n_rows):
    """(path, row, first element, elements) of this thread in a launch of one thread per
    (path, row); 0 elements for a thread past the end."""
    p, r = thread_cell(path_ptr.shape[0] - 1, n_rows)
    if p < 0:
        return p, r, 0, 0
    start = path_ptr[p]
    return p, r, start, path_ptr[p + 1] - start


@cuda.jit
def _interactions(X, path_ptr, feature, lower, upper, zero_fraction, miss, mode, out_ptr,
                  out_index, out_value, nodes, weights, out):
    """Path-dependent interaction values, one thread per (row, path), quadrature
    form: phi_ij = v/2 d_i d_j integral of prod_{k != i, j} a_k(t) dt, the diagonal takes
    phi_i minus the row's off-diagonal sum. No warp shuffles, so numba's CUDA simulator
    runs it too."""
    p, r, start, u = _thread_path(path_ptr, X.shape[0])
    if u == 0:
        return
    d = cuda.local.array(MAX_LONG_PATH, float64)
    z = cuda.local.array(MAX_LONG_PATH, float64)
    prefix = cuda.local.array(MAX_LONG_PATH, float64)
    single = cuda.local.array(MAX_LONG_PATH, float64)
    paired = cuda.local.array(MAX_LONG_PATH, float64)
    row_sum = cuda.local.array(MAX_LONG_PATH, float64)
    for j in range(u):
        e = start + j
        z[j] = zero_fraction[e]
        d[j] = _one_fraction(X[r, feature[e]], feature[e], lower[e], upper[e], miss[e],
                             mode[e]) - z[j]
        single[j] = 0.0
        row_sum[j] = 0.0
    q = (u + 1) // 2
    for held in range(-1, u):  # -1: the SHAP values themselves; else element held at 1
        for i in range(u):
            paired[i] = 0.0
        for k in range(q):
            t = nodes[q, k]
            running = 1.0
            for i in range(u):
                prefix[i] = running
                running *= 1.0 if i == held else z[i] + d[i] * t
            running = 1.0
            for i in range(u - 1, -1, -1):
                paired[i] += weights[q, k] * prefix[i] * running
                running *= 1.0 if i == held else z[i] + d[i] * t
        if held < 0:
            for i in range(u):
                single[i] = d[i] * paired[i]
            continue
        for i in range(u):
            if i != held:
                value = 0.5 * d[i] * d[held] * paired[i]
                row_sum[i] += value
                for k in range(out_ptr[p], out_ptr[p + 1]):
                    cuda.atomic.add(out, (r, out_index[k], feature[start + i],
                                          feature[start + held]), value * out_value[k])
    for i in range(u):
        f = feature[start + i]
        for k in range(out_ptr[p], out_ptr[p + 1]):
            cuda.atomic.add(out, (r, out_index[k], f, f),
                            (single[i] - row_sum[i]) * out_value[k])


def tree_path_interactions(X, paths, out, cache=None):
    """numba.cuda twin of ``_numpy.tree_path_interactions`` (paths of up to MAX_LONG_PATH
    distinct features)."""
    (path_ptr, feature, lower, upper, missing_branch, missing_mode, zero_fraction, out_ptr,
     out_index, out_value) = paths
    if max(np.diff(path_ptr), default=0) > MAX_LONG_PATH:
        raise ValueError(f"paths of more than {MAX_LONG_PATH} distinct features are not "
                         "supported on the GPU; use backend='numba'.")
    n_rows = X.shape[0]
    n_paths = len(path_ptr) - 1
    if n_rows and n_paths:
        result = cuda.to_device(np.zeros(out.shape))
        arrays = [cuda.to_device(np.ascontiguousarray(a)) for a in (
            X, path_ptr, feature, lower, upper, zero_fraction, missing_branch, missing_mode,
            out_ptr, out_index, out_value, LEGENDRE_NODES, LEGENDRE_WEIGHTS)]
        _interactions[grid(n_rows * n_paths)](*arrays, result)
        out += result.copy_to_host()
    return out


@cuda.jit
def _interventional(X, patterns, counts, n_distinct, n_background, path_ptr, feature, lower,
                    upper, miss, mode, out_ptr, out_index, out_value, weights, out):
    """One thread per (row, path) over the path's distinct background patterns;
    the lane-free twin of the CuPy ``tree_interventional`` kernel."""
    p, r, start, u = _thread_path(path_ptr, X.shape[0])
    if u == 0:
        return
    one = np.uint64(1)
    full = ~np.uint64(0) if u == 64 else (one << np.uint64(u)) - one
    xb = np.uint64(0)
    for j in range(u):
        e = start + j
        if _one_fraction(X[r, feature[e]], feature[e], lower[e], upper[e], miss[e],
                         mode[e]) > 0.5:
            xb |= one << np.uint64(j)
    c = cuda.local.array(64, float64)
    for j in range(u):
        c[j] = 0.0
    for m in range(n_distinct[p]):
        rb = patterns[p, m]
        if full & ~(xb | rb):
            continue  # an element satisfied by neither: no contribution
        a = xb & ~rb
        b = rb & ~xb
        s = cuda.popc(a)
        n = s + cuda.popc(b)
        if n == 0:
            continue
        count = counts[p, m]
        plus = count * weights[s - 1, n] if s > 0 else 0.0
        minus = count * weights[s, n] if s < n else 0.0
        for j in range(u):
            bit = one << np.uint64(j)
            if a & bit:
                c[j] += plus
            elif b & bit:
                c[j] -= minus
    for k in range(out_ptr[p], out_ptr[p + 1]):
        v = out_value[k] / n_background
        for j in range(u):
            cuda.atomic.add(out, (r, out_index[k], feature[start + j]), c[j] * v)


def tree_interventional_shap(X, patterns, counts, n_distinct, n_background, paths, out):
    """numba.cuda twin of ``_numpy.tree_interventional_shap``."""
    path_ptr, feature, lower, upper, missing_branch, missing_mode = paths[:6]
    out_ptr, out_index, out_value = paths.out_ptr, paths.out_index, paths.out_value
    n_rows = X.shape[0]
    n_paths = len(path_ptr) - 1
    if n_rows and n_paths:
        result = cuda.to_device(np.zeros(out.shape))
        arrays = [cuda.to_device(np.ascontiguousarray(a)) for a in (
            X, patterns, counts, n_distinct)]
        ir = [cuda.to_device(np.ascontiguousarray(a)) for a in (
            path_ptr, feature, lower, upper, missing_branch, missing_mode, out_ptr, out_index,
            out_value, SHAPLEY_WEIGHTS)]
        _interventional[grid(n_rows * n_paths)](*arrays, float64(n_background), *ir, result)
        out += result.copy_to_host()
    return out


# Background patterns are computed once per background on the CPU (numba), as for CuPy.
def tree_background_patterns(*args, **kwargs):
    """The numba CPU kernel (patterns are built once per background)."""
    return _numba.tree_background_patterns(*args, **kwargs)


def tree_interventional_walk(*args, **kwargs):
    """The numba CPU kernel (the walk of few rows is branchy, a state at a time)."""
    return _numba.tree_interventional_walk(*args, **kwargs)


# Grouped paths run on the CPU (numba): a group's run of elements makes one player with a
# data-dependent count per path, which the GPU layout of one lane per element does not
# take; the GPU path is the per-column one.
tree_grouped_path_shap = _numba.tree_grouped_path_shap
tree_grouped_path_interactions = _numba.tree_grouped_path_interactions
