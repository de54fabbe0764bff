"""CuPy kernels of exact TreeSHAP: the GPUTreeShap warp kernel (Mitchell, Frank & Holmes
2022, Sec. 3.4) as CUDA C++ in a ``RawModule``.

One warp handles one packed bin (paths as groups of contiguous lanes) for a block of
rows; a lane owns one path element and one permutation weight; extend and the unwound
sum exchange values with ``__shfl_sync``/``__shfl_up_sync`` on the group's mask.
Weights are float64 (GPUTreeShap uses float32; float64 keeps our values equal to the CPU
reference to round-off) and contributions are accumulated with float64 ``atomicAdd``,
so the last bits vary between runs. Paths with more than 31 distinct features run in a
one-thread-per-(row, path) kernel with the quadrature form of ``_numpy``.

Interventional values run one thread per (row, path) over the path's distinct background
bit patterns, interaction values one thread per (row, path) in the quadrature
form; the background patterns and the walk of few rows run on the CPU (numba).

Without a GPU, the tests compile this source with NVRTC (where CuPy is installed) and run
every kernel on the CPU through a stand-in for ``cupy`` (``tests/kernels/
cuda_cpp_emulator.py``; warps as 32 host threads that meet at each shuffle).
"""

from __future__ import annotations

import numpy as np

from skshapley.backends._cupy_runtime import raw_module
from skshapley.backends._gpu_common import ROWS_PER_WARP, THREADS_PER_BLOCK
from skshapley.backends.tree import _numba
from skshapley.backends.tree._layout import LayoutCache
from skshapley.backends.tree._numpy import (
    CATEGORY_SET,
    SET_CODES,
    SET_WORD_BITS,
    SHAPLEY_WEIGHTS,
)

# Reciprocals 1/k of the lengths a warp's paths can have (k <= 32; INV[0] unused): the
# warp kernel multiplies by them instead of dividing, since a float64 division is a
# Newton-iteration sequence on NVIDIA GPUs, not one instruction, and extend and the
# unwound sum divided about three times per element, row and step. Hoisting them moves
# the values by round-off (the tests compare with the CPU reference to 1e-12).
# Measurement owed: benchmarks/results/tree_gpu.md of 2026-11-27 predates the change.
_RECIPROCALS = ", ".join(["0.0"] + [repr(1.0 / k) for k in range(1, 34)])
_CONSTANTS = f"""
#define CATEGORY_SET {CATEGORY_SET}
#define SET_CODES {SET_CODES}
#define SET_WORD_BITS {SET_WORD_BITS}
__constant__ double INV[34] = {{{_RECIPROCALS}}};
"""

SOURCE = _CONSTANTS + r"""
__device__ __forceinline__ double one_fraction(double x, int f, double lo, double hi,
                                               unsigned char miss, unsigned char mode) {
    if (f < 0) return 1.0;
    bool missing = isnan(x) || (mode == 1 && x > -1e-35 && x <= 1e-35);
    if (missing) return (double)miss;
    if (mode == CATEGORY_SET) {  // the set of x's atom, in the bits of lo and hi
        int atom = x >= SET_CODES ? SET_CODES : x >= 0.0 ? (int)x
                 : x > -1.0 ? SET_CODES + 1 : SET_CODES + 2;
        unsigned long long word = (unsigned long long)(atom < SET_WORD_BITS ? lo : hi);
        return (double)((word >> (atom % SET_WORD_BITS)) & 1ull);
    }
    return (lo <= x && x < hi) ? 1.0 : 0.0;
}

__device__ __forceinline__ bool row_and_path(long long n_rows, long long n_paths,
                                             const long long* path_ptr, long long& r,
                                             long long& p, long long& start, int& u) {
    // The (row, path) of a one-thread-per-(row, path) kernel, the path's first element
    // and length; false past the grid's end and for a path without elements
    long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n_rows * n_paths) return false;
    r = id % n_rows;
    p = id / n_rows;
    start = path_ptr[p];
    u = (int)(path_ptr[p + 1] - start);
    return u > 0;
}

extern "C" __global__ void tree_shap_warp(
    const double* X, long long n_rows, int n_features, const long long* bin_ptr,
    long long n_bins, const int* feature, const double* lower, const double* upper,
    const double* zero_fraction, const unsigned char* miss, const unsigned char* mode,
    const long long* path, const int* group_start, const int* group_length,
    const long long* out_ptr, const int* out_index, const double* out_value, int n_outputs,
    long long rows_per_warp, double* out)
{
    long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    long long row_blocks = (n_rows + rows_per_warp - 1) / rows_per_warp;
    if (warp >= n_bins * row_blocks) return;
    long long bin = warp % n_bins;
    long long e = bin_ptr[bin] + lane;
    if (e >= bin_ptr[bin + 1]) return;
    int start = group_start[e], len = group_length[e], rank = lane - start;
    unsigned mask = len == 32 ? 0xffffffffu : (((1u << len) - 1u) << start);
    int f = feature[e];
    double lo = lower[e], hi = upper[e], z = zero_fraction[e];
    unsigned char mb = miss[e], md = mode[e];
    long long p = path[e];
    long long r0 = (warp / n_bins) * rows_per_warp;
    long long r1 = min(n_rows, r0 + rows_per_warp);
    int l = len - 1;
    // per lane and row-independent: z / (l + 1), and (l + 1) / z for the unwound sum's
    // w_i / pre (pre = (l - i) z / (l + 1) > 0 exactly when z > 0 and i < l)
    double z_over = z * INV[l + 1];
    double over_z = z > 0 ? (l + 1) / z : 0.0;
    for (long long r = r0; r < r1; ++r) {
        double o = one_fraction(f >= 0 ? X[r * n_features + f] : 0.0, f, lo, hi, mb, md);
        double w = rank == 0 ? 1.0 : 0.0;
        for (int ud = 1; ud < len; ++ud) {           // EXTEND by the element at rank ud
            double z_new = __shfl_sync(mask, z, start + ud);
            double o_new = __shfl_sync(mask, o, start + ud);
            double left = __shfl_up_sync(mask, w, 1);
            if (rank == 0) left = 0.0;
            w = (w * z_new * (double)max(ud - rank, 0) + o_new * left * rank) * INV[ud + 1];
        }
        double next = __shfl_sync(mask, w, start + l);  // UNWOUND_SUM of the lane's element
        double t = 0.0;
        for (int i = l - 1; i >= 0; --i) {
            double wi = __shfl_sync(mask, w, start + i);
            double pre = (l - i) * z_over;
            double q = next * (l + 1) * INV[i + 1];
            t += q * o;
            next = wi - q * pre;
            if (pre > 0) t += (1.0 - o) * wi * over_z * INV[l - i];
        }
        if (rank > 0) {
            double c = t * (o - z);
            for (long long k = out_ptr[p]; k < out_ptr[p + 1]; ++k)
                atomicAdd(&out[(r * n_outputs + out_index[k]) * n_features + f],
                          c * out_value[k]);
        }
    }
}

extern "C" __global__ void tree_shap_long(
    const double* X, long long n_rows, int n_features, const long long* paths,
    long long n_long, const long long* path_ptr, const int* feature, const double* lower,
    const double* upper, const double* zero_fraction, const unsigned char* miss,
    const unsigned char* mode, const long long* out_ptr, const int* out_index,
    const double* out_value, int n_outputs, const double* nodes, const double* weights,
    double* out)
{
    long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n_rows * n_long) return;
    long long r = id % n_rows, p = paths[id / n_rows];
    long long start = path_ptr[p];
    int u = (int)(path_ptr[p + 1] - start);
    double o[64], prefix[64], c[64];
    for (int j = 0; j < u; ++j) {
        long long e = start + j;
        o[j] = one_fraction(X[r * n_features + feature[e]], feature[e], lower[e], upper[e],
                            miss[e], mode[e]);
        c[j] = 0.0;
    }
    int q = (u + 1) / 2;
    for (int k = 0; k < q; ++k) {
        double t = nodes[q * 32 + k], wq = weights[q * 32 + k], running = 1.0;
        for (int j = 0; j < u; ++j) {
            prefix[j] = running;
            double zj = zero_fraction[start + j];
            running *= zj + (o[j] - zj) * t;
        }
        running = 1.0;
        for (int j = u - 1; j >= 0; --j) {
            c[j] += wq * prefix[j] * running;
            double zj = zero_fraction[start + j];
            running *= zj + (o[j] - zj) * t;
        }
    }
    for (int j = 0; j < u; ++j) {
        double cj = c[j] * (o[j] - zero_fraction[start + j]);
        for (long long k = out_ptr[p]; k < out_ptr[p + 1]; ++k)
            atomicAdd(&out[(r * n_outputs + out_index[k]) * n_features + feature[start + j]],
                      cj * out_value[k]);
    }
}

extern "C" __global__ void tree_interventional(
    const double* X, long long n_rows, int n_features, const unsigned long long* patterns,
    const double* counts, const long long* n_distinct, long long max_patterns,
    double n_background, const long long* path_ptr, long long n_paths, const int* feature,
    const double* lower, const double* upper, const unsigned char* miss,
    const unsigned char* mode, const long long* out_ptr, const int* out_index,
    const double* out_value, int n_outputs, const double* shapley_weights, double* out)
{
    long long r, p, start;
    int u;
    if (!row_and_path(n_rows, n_paths, path_ptr, r, p, start, u)) return;
    unsigned long long xb = 0ull, full = (u == 64) ? ~0ull : ((1ull << u) - 1ull);
    for (int j = 0; j < u; ++j) {
        long long e = start + j;
        if (one_fraction(X[r * n_features + feature[e]], feature[e], lower[e], upper[e],
                         miss[e], mode[e]) > 0.5)
            xb |= 1ull << j;
    }
    double c[64];
    for (int j = 0; j < u; ++j) c[j] = 0.0;
    for (long long m = 0; m < n_distinct[p]; ++m) {
        unsigned long long rb = patterns[p * max_patterns + m];
        if (full & ~(xb | rb)) continue;
        unsigned long long a = xb & ~rb, b = rb & ~xb;
        int s = __popcll(a), n = s + __popcll(b);
        if (n == 0) continue;
        double count = counts[p * max_patterns + m];
        double plus = s > 0 ? count * shapley_weights[(s - 1) * 65 + n] : 0.0;
        double minus = s < n ? count * shapley_weights[s * 65 + n] : 0.0;
        for (int j = 0; j < u; ++j) {
            unsigned long long bit = 1ull << j;
            if (a & bit) c[j] += plus;
            else if (b & bit) c[j] -= minus;
        }
    }
    for (long long k = out_ptr[p]; k < out_ptr[p + 1]; ++k) {
        double v = out_value[k] / n_background;
        for (int j = 0; j < u; ++j)
            atomicAdd(&out[(r * n_outputs + out_index[k]) * n_features + feature[start + j]],
                      c[j] * v);
    }
}

extern "C" __global__ void tree_interactions(
    const double* X, long long n_rows, int n_features, const long long* path_ptr,
    long long n_paths, const int* feature, const double* lower, const double* upper,
    const double* zero_fraction, const unsigned char* miss, const unsigned char* mode,
    const long long* out_ptr, const int* out_index, const double* out_value, int n_outputs,
    const double* nodes, const double* weights, double* out)
{
    // Path-dependent interaction values, one thread per (row, path), quadrature
    // form: phi_ij = v/2 d_i d_j integral of prod_{k != i, j} a_k(t) dt; the diagonal is
    // phi_i minus the row's off-diagonal sum (twin of the numba.cuda ``_interactions``).
    long long r, p, start;
    int u;
    if (!row_and_path(n_rows, n_paths, path_ptr, r, p, start, u)) return;
    double d[64], z[64], prefix[64], single[64], paired[64], row_sum[64];
    for (int j = 0; j < u; ++j) {
        long long e = start + j;
        z[j] = zero_fraction[e];
        d[j] = one_fraction(X[r * n_features + feature[e]], feature[e], lower[e], upper[e],
                            miss[e], mode[e]) - z[j];
        single[j] = 0.0;
        row_sum[j] = 0.0;
    }
    int q = (u + 1) / 2;
    long long block = (long long)n_features * n_features;
    for (int held = -1; held < u; ++held) {  // -1: the SHAP values; else held at 1
        for (int i = 0; i < u; ++i) paired[i] = 0.0;
        for (int k = 0; k < q; ++k) {
            double t = nodes[q * 32 + k], wq = weights[q * 32 + k], running = 1.0;
            for (int i = 0; i < u; ++i) {
                prefix[i] = running;
                running *= i == held ? 1.0 : z[i] + d[i] * t;
            }
            running = 1.0;
            for (int i = u - 1; i >= 0; --i) {
                paired[i] += wq * prefix[i] * running;
                running *= i == held ? 1.0 : z[i] + d[i] * t;
            }
        }
        if (held < 0) {
            for (int i = 0; i < u; ++i) single[i] = d[i] * paired[i];
            continue;
        }
        for (int i = 0; i < u; ++i) {
            if (i == held) continue;
            double value = 0.5 * d[i] * d[held] * paired[i];
            row_sum[i] += value;
            for (long long k = out_ptr[p]; k < out_ptr[p + 1]; ++k)
                atomicAdd(&out[(r * n_outputs + out_index[k]) * block
                               + (long long)feature[start + i] * n_features
                               + feature[start + held]], value * out_value[k]);
        }
    }
    for (int i = 0; i < u; ++i) {
        long long f = feature[start + i];
        for (long long k = out_ptr[p]; k < out_ptr[p + 1]; ++k)
            atomicAdd(&out[(r * n_outputs + out_index[k]) * block + f * n_features + f],
                      (single[i] - row_sum[i]) * out_value[k]);
    }
}
"""

def _module():
    return raw_module(SOURCE)


def tree_path_shap(X, paths, out, cache=None):
    """CuPy twin of ``_numpy.tree_path_shap`` (X may be a CuPy array); ``cache``: a
    :class:`LayoutCache` of the caller's, which keeps the device copies of the paths
    (a model explained chunk after chunk is copied once)."""
    import cupy

    if len(paths.path_ptr) > 1 and np.diff(paths.path_ptr).max() > 64:
        raise ValueError("paths of more than 64 distinct features are not supported on "
                         "the GPU; use backend='numba'.")
    device = (LayoutCache(size=1) if cache is None else cache).get(cupy, paths)
    layout = device["layout"]
    X_device = cupy.ascontiguousarray(cupy.asarray(X, dtype=cupy.float64))
    n_rows, n_features = X_device.shape
    n_outputs = out.shape[1]
    result = cupy.zeros((n_rows, n_outputs, n_features), dtype=cupy.float64)
    module = _module()
    if layout.n_bins and n_rows:
        row_blocks = -(-n_rows // ROWS_PER_WARP)
        n_threads = layout.n_bins * row_blocks * 32
        grid = -(-n_threads // THREADS_PER_BLOCK)
        module.get_function("tree_shap_warp")(
            (grid,), (THREADS_PER_BLOCK,),
            (X_device, np.int64(n_rows), np.int32(n_features), device["bin_ptr"],
             np.int64(layout.n_bins), device["feature"], device["lower"], device["upper"],
             device["zero_fraction"], device["missing_branch"], device["missing_mode"],
             device["path"], device["group_start"], device["group_length"], device["out_ptr"],
             device["out_index"], device["out_value"], np.int32(n_outputs),
             np.int64(ROWS_PER_WARP), result),
        )
    n_long = len(layout.long_paths)
    if n_long and n_rows:
        grid = -(-(n_rows * n_long) // THREADS_PER_BLOCK)
        module.get_function("tree_shap_long")(
            (grid,), (THREADS_PER_BLOCK,),
            (X_device, np.int64(n_rows), np.int32(n_features), device["long_paths"],
             np.int64(n_long), device["path_ptr"], device["ir_feature"], device["ir_lower"],
             device["ir_upper"], device["ir_zero_fraction"], device["ir_missing_branch"],
             device["ir_missing_mode"], device["out_ptr"], device["out_index"],
             device["out_value"], np.int32(n_outputs), device["nodes"], device["weights"],
             result),
        )
    if isinstance(out, np.ndarray):
        out += cupy.asnumpy(result)
    else:
        out += result
    return out


def tree_interventional_shap(X, patterns, counts, n_distinct, n_background, paths, out):
    """CuPy twin of ``_numpy.tree_interventional_shap``: a thread per (row, path)
    over the path's distinct background patterns."""
    import cupy

    path_ptr, feature, lower, upper, missing_branch, missing_mode = paths[:6]
    out_ptr, out_index, out_value = paths.out_ptr, paths.out_index, paths.out_value
    n_rows, n_features = X.shape
    n_paths = len(path_ptr) - 1
    result = cupy.zeros(out.shape, dtype=cupy.float64)
    if n_rows and n_paths:
        grid = -(-(n_rows * n_paths) // THREADS_PER_BLOCK)
        device = [cupy.asarray(np.ascontiguousarray(a)) for a in (
            X, patterns, counts, n_distinct, path_ptr, feature, lower, upper, missing_branch,
            missing_mode, out_ptr, out_index, out_value, SHAPLEY_WEIGHTS)]
        (X_d, patterns_d, counts_d, distinct_d, ptr_d, feature_d, lower_d, upper_d, miss_d,
         mode_d, out_ptr_d, out_index_d, out_value_d, weights_d) = device
        _module().get_function("tree_interventional")(
            (grid,), (THREADS_PER_BLOCK,),
            (X_d, np.int64(n_rows), np.int32(n_features), patterns_d, counts_d, distinct_d,
             np.int64(patterns.shape[1]), np.float64(n_background), ptr_d, np.int64(n_paths),
             feature_d, lower_d, upper_d, miss_d, mode_d, out_ptr_d, out_index_d,
             out_value_d, np.int32(out.shape[1]), weights_d, result),
        )
    out += cupy.asnumpy(result)
    return out


def tree_path_interactions(X, paths, out, cache=None):
    """CuPy twin of ``_numpy.tree_path_interactions``: a thread per (row, path),
    quadrature form; paths of up to 64 distinct features."""
    import cupy

    path_ptr = paths.path_ptr
    if len(path_ptr) > 1 and np.diff(path_ptr).max() > 64:
        raise ValueError("paths of more than 64 distinct features are not supported on "
                         "the GPU; use backend='numba'.")
    device = (LayoutCache(size=1) if cache is None else cache).get(cupy, paths)
    X_device = cupy.ascontiguousarray(cupy.asarray(X, dtype=cupy.float64))
    n_rows, n_features = X_device.shape
    n_paths = len(path_ptr) - 1
    result = cupy.zeros(out.shape, dtype=cupy.float64)
    if n_rows and n_paths:
        grid = -(-(n_rows * n_paths) // THREADS_PER_BLOCK)
        _module().get_function("tree_interactions")(
            (grid,), (THREADS_PER_BLOCK,),
            (X_device, np.int64(n_rows), np.int32(n_features), device["path_ptr"],
             np.int64(n_paths), device["ir_feature"], device["ir_lower"], device["ir_upper"],
             device["ir_zero_fraction"], device["ir_missing_branch"],
             device["ir_missing_mode"], device["out_ptr"], device["out_index"],
             device["out_value"], np.int32(out.shape[1]), device["nodes"],
             device["weights"], result),
        )
    if isinstance(out, np.ndarray):
        out += cupy.asnumpy(result)
    else:
        out += result
    return out


# Background patterns are computed once per background on the CPU (numba), and the walk
# of few rows (branchy, a state at a time) runs there too.
tree_background_patterns = _numba.tree_background_patterns
tree_interventional_walk = _numba.tree_interventional_walk
# Grouped paths run there too (see ``_numba_cuda``).
tree_grouped_path_shap = _numba.tree_grouped_path_shap
tree_grouped_path_interactions = _numba.tree_grouped_path_interactions
