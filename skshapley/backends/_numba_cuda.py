"""numba.cuda backend: the GPUTreeShap warp kernel (Mitchell, Frank & Holmes 2022,
Sec. 3.4), twin of ``_cupy.py``.

Same lane program as the CUDA C++ of the CuPy backend, written with
``cuda.shfl_sync``/``cuda.shfl_up_sync`` (source lanes are absolute: group start plus
rank); float64 weights and float64 atomic adds. Paths of more than 31 distinct features
go to a one-thread-per-(row, path) kernel (quadrature form of ``_tree_numpy``). numba's CUDA
simulator has no warp shuffles, so without a GPU the lane program is checked by the
NumPy warp emulator of the tests instead.

Interaction values and interventional values use one thread per (row, path) without
shuffles. They and the model-agnostic kernels below them (masked batches, marginals,
precedence bits and discordant pairs, Philox orderings, moment sketches, arcsinh, exact
Shapley values from all coalition values, column interpolation of the quantile
transform, LS-SPA chain lifts by Cholesky) are
checked against the NumPy twins in numba's CUDA simulator
(tests/kernels/test_cuda_simulator.py) on every test run.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float64, int32, int64

from skshapley.backends._gpu_common import (
    ROWS_PER_WARP,
    THREADS_PER_BLOCK,
    LayoutCache,
)
from skshapley.backends._numpy import subset_gain_lstsq
from skshapley.backends._tree_numpy import CATEGORY_SET, category_set_contains

MAX_LONG_PATH = 64


def _grid(n_threads):
    return max(1, -(-n_threads // THREADS_PER_BLOCK)), THREADS_PER_BLOCK


def _launch(kernel, launch, inputs, out, update=False):
    """Copy ``inputs`` to the device, run ``kernel[launch](*inputs, result)`` and copy the
    result back into ``out`` (the round trip every host-facing wrapper makes); with
    ``update`` the kernel starts from ``out``'s values instead of uninitialised memory."""
    result = cuda.to_device(np.ascontiguousarray(out)) if update else \
        cuda.device_array(out.shape, dtype=out.dtype)
    kernel[launch](*[cuda.to_device(np.ascontiguousarray(a)) for a in inputs], result)
    out[...] = result.copy_to_host()
    return out


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


@cuda.jit
def _interactions(X, path_ptr, feature, lower, upper, zero_fraction, miss, mode, out_ptr,
                  out_index, out_value, nodes, weights, out):
    """Path-dependent interaction values, one thread per (row, path), quadrature
    form: phi_ij = v/2 d_i d_j integral of prod_{k != i, j} a_k(t) dt, the diagonal takes
    phi_i minus the row's off-diagonal sum. No warp shuffles, so numba's CUDA simulator
    runs it too."""
    thread = cuda.grid(1)
    n_rows = X.shape[0]
    n_paths = path_ptr.shape[0] - 1
    if thread >= n_rows * n_paths:
        return
    r = thread % n_rows
    p = thread // n_rows
    start = path_ptr[p]
    u = path_ptr[p + 1] - start
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


def tree_path_interactions(X, path_ptr, feature, lower, upper, missing_branch, missing_mode,
                           zero_fraction, out_ptr, out_index, out_value, out):
    """numba.cuda twin of ``_tree_numpy.tree_path_interactions`` (paths of up to
    MAX_LONG_PATH distinct features)."""
    from skshapley.backends._tree_numpy import LEGENDRE_NODES, LEGENDRE_WEIGHTS

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
        _interactions[_grid(n_rows * n_paths)](*arrays, result)
        out += result.copy_to_host()
    return out


@cuda.jit
def _interventional(X, patterns, counts, n_distinct, n_background, path_ptr, feature, lower,
                    upper, miss, mode, out_ptr, out_index, out_value, weights, out):
    """One thread per (row, path) over the path's distinct background patterns;
    the lane-free twin of the CuPy ``tree_interventional`` kernel."""
    thread = cuda.grid(1)
    n_rows = X.shape[0]
    n_paths = path_ptr.shape[0] - 1
    if thread >= n_rows * n_paths:
        return
    r = thread % n_rows
    p = thread // n_rows
    start = path_ptr[p]
    u = path_ptr[p + 1] - start
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


def tree_interventional_shap(X, patterns, counts, n_distinct, n_background, path_ptr, feature,
                             lower, upper, missing_branch, missing_mode, out_ptr, out_index,
                             out_value, out):
    """numba.cuda twin of ``_tree_numpy.tree_interventional_shap``."""
    from skshapley.backends._tree_numpy import SHAPLEY_WEIGHTS

    n_rows = X.shape[0]
    n_paths = len(path_ptr) - 1
    if n_rows and n_paths:
        result = cuda.to_device(np.zeros(out.shape))
        arrays = [cuda.to_device(np.ascontiguousarray(a)) for a in (
            X, patterns, counts, n_distinct)]
        ir = [cuda.to_device(np.ascontiguousarray(a)) for a in (
            path_ptr, feature, lower, upper, missing_branch, missing_mode, out_ptr, out_index,
            out_value, SHAPLEY_WEIGHTS)]
        _interventional[_grid(n_rows * n_paths)](*arrays, float64(n_background), *ir, result)
        out += result.copy_to_host()
    return out


# Background patterns are computed once per background on the CPU (numba), as for CuPy.
def tree_background_patterns(*args, **kwargs):
    """The numba CPU kernel (patterns are built once per background)."""
    from skshapley.backends import _tree_numba

    return _tree_numba.tree_background_patterns(*args, **kwargs)


def tree_interventional_walk(*args, **kwargs):
    """The numba CPU kernel (the walk of few rows is branchy, a state at a time)."""
    from skshapley.backends import _tree_numba

    return _tree_numba.tree_interventional_walk(*args, **kwargs)


# -- model-agnostic kernels (issue 11) ----------------------------------------------------
# Host wrappers take and return NumPy arrays like every backend (copies in, result out);
# each launch is one thread per output element unless said otherwise. float64 throughout.


@cuda.jit
def _masked_batch(x, background, coalitions, out):
    element = cuda.grid(1)
    n_out, d = out.shape
    if element >= n_out * d:
        return
    row = element // d
    j = element % d
    n_background = background.shape[0]
    n_rows = x.shape[0]
    k = row // (n_rows * n_background)
    i = (row // n_background) % n_rows
    r = row % n_background
    out[row, j] = x[i, j] if coalitions[k, j] else background[r, j]


def assemble_masked_batch(x, background, coalitions, out):
    """numba.cuda twin of :func:`skshapley.backends._numpy.assemble_masked_batch`."""
    if out.size:
        _launch(_masked_batch, _grid(out.size), (x, background, coalitions), out)
    return out


@cuda.jit
def _prefixes(orders, out):
    element = cuda.grid(1)
    n, d = orders.shape
    if element >= n * d:
        return
    p = element // d
    t = element % d  # orders[p, t] joins at step t: in prefixes t .. d - 2
    player = orders[p, t]
    for step in range(d - 1):
        out[p, step, player] = t <= step


def prefix_coalitions(orders, out):
    """numba.cuda twin of :func:`skshapley.backends._numpy.prefix_coalitions`."""
    n, d = orders.shape
    if d >= 2 and n:
        _launch(_prefixes, _grid(n * d), (orders,), out)
    return out


@cuda.jit
def _marginals(orders, path_values, out):
    element = cuda.grid(1)
    n, d = orders.shape
    k = path_values.shape[2]
    if element >= n * d * k:
        return
    c = element % k
    t = (element // k) % d
    p = element // (k * d)
    out[p, orders[p, t], c] = path_values[p, t + 1, c] - path_values[p, t, c]


def accumulate_permutation_marginals(orders, path_values, out):
    """numba.cuda twin of :func:`skshapley.backends._numpy.accumulate_permutation_marginals`."""
    if out.size:
        _launch(_marginals, _grid(out.size), (orders, path_values), out, update=True)
    return out


@cuda.jit
def _precedence(ranks, first, second, out):
    element = cuda.grid(1)
    n, n_words = out.shape
    if element >= n * n_words:
        return
    p = element // n_words
    word = element % n_words
    bits = np.uint64(0)
    stop = min(first.shape[0], (word + 1) * 64)
    for pair in range(word * 64, stop):
        if ranks[p, first[pair]] < ranks[p, second[pair]]:
            bits |= np.uint64(1) << np.uint64(pair - word * 64)
    out[p, word] = bits


def precedence_bits(orders, out):
    """numba.cuda twin of :func:`skshapley.backends._numpy.precedence_bits` (ranks and the
    pair list are built on the host: O(n d) and O(d^2) against the kernel's O(n d^2))."""
    n, d = orders.shape
    if out.size:
        ranks = np.empty_like(orders)
        np.put_along_axis(ranks, orders, np.arange(d)[None, :], axis=1)
        first, second = np.triu_indices(d, k=1)
        _launch(_precedence, _grid(out.size), (ranks, first, second), out)
    return out


@cuda.jit
def _discordant(bits_a, bits_b, out):
    element = cuda.grid(1)
    n_a, n_b = out.shape
    if element >= n_a * n_b:
        return
    a = element // n_b
    b = element % n_b
    count = 0
    for word in range(bits_a.shape[1]):
        count += cuda.popc(bits_a[a, word] ^ bits_b[b, word])
    out[a, b] = count


def discordant_pairs(bits_a, bits_b, out):
    """numba.cuda twin of :func:`skshapley.backends._numpy.discordant_pairs`."""
    if out.size:
        _launch(_discordant, _grid(out.size), (bits_a, bits_b), out)
    return out


SCAN_THREADS = 256  # threads of the compaction block; a power of two


@cuda.jit
def _philox_images(keys, n_bits, images):
    """2-D elementwise: images[p, i] = the keyed bijection of i, one thread each."""
    element = cuda.grid(1)
    n, size = images.shape
    if element >= n * size:
        return
    p = element // size
    v = np.uint64(element % size)
    left_bits = n_bits // 2
    right_bits = n_bits - left_bits
    left_mask = (np.uint64(1) << np.uint64(left_bits)) - np.uint64(1)
    right_mask = (np.uint64(1) << np.uint64(right_bits)) - np.uint64(1)
    shift = np.uint64(right_bits - left_bits)
    low_mask = np.uint64(0xFFFFFFFF)
    multiplier = np.uint64(0xD2B74407B1CE6E93)
    left = v >> np.uint64(right_bits)
    right = v & right_mask
    for r in range(keys.shape[1]):
        product = multiplier * left
        high = product >> np.uint64(32)
        low = product & low_mask
        new_left = (high ^ keys[p, r] ^ right) & left_mask
        right = (((low << shift) & low_mask) | (right >> np.uint64(left_bits))) & right_mask
        left = new_left
    images[p, element % size] = np.int64((left << np.uint64(right_bits)) | right)


@cuda.jit
def _compact_below(images, out):
    """Block p keeps the images of row p below d, in order: tiles of SCAN_THREADS flags,
    an exclusive block scan in shared memory gives each kept value its slot."""
    p = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    d = out.shape[1]
    size = images.shape[1]
    scan = cuda.shared.array(SCAN_THREADS, int64)
    base = 0
    for tile in range(0, size, SCAN_THREADS):
        i = tile + tid
        value = images[p, i] if i < size else d
        keep = 1 if value < d else 0
        scan[tid] = keep
        cuda.syncthreads()
        step = 1
        while step < SCAN_THREADS:  # Hillis-Steele inclusive scan
            add = scan[tid - step] if tid >= step else 0
            cuda.syncthreads()
            scan[tid] += add
            cuda.syncthreads()
            step *= 2
        if keep:
            out[p, base + scan[tid] - 1] = value
        base += scan[SCAN_THREADS - 1]
        cuda.syncthreads()


def philox_orders(seed, start, out, rounds=None):
    """numba.cuda twin of :func:`skshapley.backends._numpy.philox_orders`: round keys from
    the same SplitMix64 stream (host, n x rounds words), the bijection as one 2-D
    elementwise kernel over (ordering, padded domain), then one block per ordering
    compacts the values below d by a block scan."""
    from skshapley.backends._numpy import PHILOX_ROUNDS, philox_bits, philox_keys

    rounds = PHILOX_ROUNDS if rounds is None else rounds
    n, d = out.shape
    if n and d:
        keys = cuda.to_device(np.ascontiguousarray(
            philox_keys(seed, np.arange(start, start + n), rounds)))
        size = 1 << philox_bits(d)
        images = cuda.device_array((n, size), dtype=np.int64)
        _philox_images[_grid(n * size)](keys, philox_bits(d), images)
        result = cuda.device_array(out.shape, dtype=np.int64)
        _compact_below[n, SCAN_THREADS](images, result)
        out[...] = result.copy_to_host()
    return out


MOMENT_THREADS = 128  # threads per column block; a power of two for the tree reductions
MAX_MOMENT_ORDER = 32


@cuda.jit(device=True)
def _block_sum(shared, value):
    """Tree reduction of one float64 per thread over the block; every thread gets it."""
    tid = cuda.threadIdx.x
    shared[tid] = value
    cuda.syncthreads()
    width = MOMENT_THREADS // 2
    while width > 0:
        if tid < width:
            shared[tid] += shared[tid + width]
        cuda.syncthreads()
        width //= 2
    total = shared[0]
    cuda.syncthreads()
    return total


@cuda.jit(device=True)
def _block_extreme(shared, value, take_max):
    tid = cuda.threadIdx.x
    shared[tid] = value
    cuda.syncthreads()
    width = MOMENT_THREADS // 2
    while width > 0:
        if tid < width:
            other = shared[tid + width]
            if (other > shared[tid]) if take_max else (other < shared[tid]):
                shared[tid] = other
        cuda.syncthreads()
        width //= 2
    result = shared[0]
    cuda.syncthreads()
    return result


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
    total = _block_sum(shared, total)
    sum_wx = _block_sum(shared, sum_wx)
    n_nan = _block_sum(shared, n_nan)
    n_rows = _block_sum(shared, n_rows)
    low = _block_extreme(shared, low, False)
    high = _block_extreme(shared, high, True)
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
    correction = _block_sum(shared, correction)
    w_low = _block_sum(shared, w_low)
    w_high = _block_sum(shared, w_high)
    w_zero = _block_sum(shared, w_zero)
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
        total = _block_sum(shared, sums[k])
        if tid == 0:
            out[j, first + k] = total


def moment_chunk(x, w, order, out):
    """numba.cuda twin of :func:`skshapley.backends._numpy.moment_chunk`: one block per
    column, block tree reductions; the exponent is set on the host between the two
    launches (it needs frexp of the range)."""
    from skshapley.backends._numpy import N_MOMENT_FIELDS, _unit_exponent

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
    exponents = np.array([_unit_exponent(low, high) if rows else 0
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
    """numba.cuda twin of :func:`skshapley.backends._numpy.arcsinh` (within 2 ulp)."""
    flat = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    if flat.size:
        result = cuda.device_array(flat.shape, dtype=np.float64)
        _arcsinh_kernel[_grid(flat.size)](cuda.to_device(flat), result)
        out[...] = result.copy_to_host().reshape(out.shape)
    return out


SHAPLEY_THREADS = MOMENT_THREADS  # block of the exact-Shapley reduction (same tree sum)


@cuda.jit
def _exact_shapley(values, weights, out):
    # One block per (player, output): its threads stride over the 2^(d-1) coalitions
    # without the player and tree-reduce w(|S|) (v(S + j) - v(S)) in shared memory.
    shared = cuda.shared.array(SHAPLEY_THREADS, float64)
    j = cuda.blockIdx.x
    k = cuda.blockIdx.y
    d = out.shape[0]
    low = (int64(1) << j) - 1  # the bits below j
    half = int64(1) << (d - 1)
    total = 0.0
    s = int64(cuda.threadIdx.x)
    while s < half:
        # insert a zero at bit j: the s-th coalition without player j
        mask = ((s & ~low) << 1) | (s & low)
        size = 0
        rest = mask
        while rest:
            rest &= rest - 1
            size += 1
        total += weights[size] * (values[mask | (int64(1) << j), k] - values[mask, k])
        s += SHAPLEY_THREADS
    total = _block_sum(shared, total)
    if cuda.threadIdx.x == 0:
        out[j, k] = total


def exact_shapley_from_values(values, n_players, out):
    """numba.cuda twin of :func:`skshapley.backends._numpy.exact_shapley_from_values`."""
    from skshapley.backends._numpy import _shapley_weights

    if n_players and out.size:
        _launch(_exact_shapley, ((n_players, out.shape[1]), SHAPLEY_THREADS),
                (np.asarray(values, dtype=np.float64), _shapley_weights(n_players)), out)
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
    """numba.cuda twin of :func:`skshapley.backends._numpy.interp_columns`."""
    if out.size:
        _launch(_interp, _grid(out.size),
                [np.asarray(a, dtype=np.float64) for a in (X, xp, fp)], out)
    return out


@cuda.jit
def _lsspa_cholesky(orders, gram, cross, test_factor, test_target, scale, out, status,
                    lower, z, g, drops):
    # One thread per chain (Bell, Devanathan & Boyd 2024, Sec. 3.3): Cholesky of the
    # permuted Gram matrix, the rotated target, then the test-residual drop of each step;
    # workspaces are the chain's rows of global arrays (p is only known at run time).
    c = cuda.grid(1)
    n, p = orders.shape
    if c >= n:
        return
    L = lower[c]
    status[c] = 0
    for j in range(p):
        for i in range(j + 1):
            acc = gram[orders[c, j], orders[c, i]]
            for k in range(i):
                acc -= L[j, k] * L[i, k]
            if i < j:
                L[j, i] = acc / L[i, i]
            elif acc > 0.0:
                L[j, j] = math.sqrt(acc)
            else:
                status[c] = 1
                return
    zc = z[c]
    for j in range(p):
        acc = cross[orders[c, j]]
        for i in range(j):
            acc -= L[j, i] * zc[i]
        zc[j] = acc / L[j, j]
    _chain_drops(orders, c, L, zc, test_factor, test_target, scale, g[c], drops[c], out)


@cuda.jit(device=True)
def _chain_drops(orders, c, L, zc, test_factor, test_target, scale, gc, dc, out):
    """The test-residual drop of each step of chain c from its lower factor L and rotated
    target zc: the twin of ``_chain_lifts_from_factor``, one test row at a time."""
    p = orders.shape[1]
    for k in range(p):
        dc[k] = 0.0
    for r in range(test_factor.shape[0]):
        residual = -test_target[r]
        for j in range(p):
            acc = test_factor[r, orders[c, j]]
            for i in range(j):
                acc -= L[j, i] * gc[i]
            gc[j] = acc / L[j, j]
            step = zc[j] * gc[j]
            dc[j] -= step * (2.0 * residual + step)
            residual += step
    for j in range(p):
        out[c, orders[c, j]] = dc[j] * scale


@cuda.jit
def _lsspa_qr(orders, factor, target, test_factor, test_target, scale, out, work, lower,
              z, g, drops):
    # One thread per chain (Bell, Devanathan & Boyd 2024, Sec. 3.3): Householder QR of
    # [R[:, pi] | ytilde] in the chain's rows of a global workspace, then the drops from
    # L = R_pi' and z = the last column.
    # Row signs of the R factor may differ from NumPy's; every step's product z_j g_j,
    # and so every lift, is the same.
    c = cuda.grid(1)
    n, p = orders.shape
    if c >= n:
        return
    A = work[c]
    for i in range(p):
        for j in range(p):
            A[i, j] = factor[i, orders[c, j]]
        A[i, p] = target[i]
    for j in range(p):
        norm2 = 0.0
        for i in range(j, p):
            norm2 += A[i, j] * A[i, j]
        alpha = -math.copysign(math.sqrt(norm2), A[j, j])
        v0 = A[j, j] - alpha
        vnorm2 = norm2 - A[j, j] * A[j, j] + v0 * v0
        if vnorm2 > 0.0:
            for col in range(j + 1, p + 1):  # A[j:, col] -= 2 v (v' A[j:, col]) / v'v
                dot = v0 * A[j, col]
                for i in range(j + 1, p):
                    dot += A[i, j] * A[i, col]
                f = 2.0 * dot / vnorm2
                A[j, col] -= f * v0
                for i in range(j + 1, p):
                    A[i, col] -= f * A[i, j]
            A[j, j] = alpha
        for i in range(j + 1, p):
            A[i, j] = 0.0
    L = lower[c]
    zc = z[c]
    for j in range(p):
        zc[j] = A[j, p]
        for i in range(j + 1):
            L[j, i] = A[i, j]
    _chain_drops(orders, c, L, zc, test_factor, test_target, scale, g[c], drops[c], out)


LSSPA_CHAINS_PER_LAUNCH = 4096  # bounds the (chains, p, p) workspace


def _launch_per_chain(kernel, orders, inputs, scale, out, work_shapes, status=None):
    """Launch a one-thread-per-chain LS-SPA kernel in slices of LSSPA_CHAINS_PER_LAUNCH
    chains: ``kernel(orders, *inputs, scale, out[, status], *workspaces)``, with one
    float64 workspace of shape ``(chains, *shape)`` per entry of ``work_shapes``."""
    device_args = [cuda.to_device(np.ascontiguousarray(a, dtype=np.float64)) for a in inputs]
    n = orders.shape[0]
    for start in range(0, n, LSSPA_CHAINS_PER_LAUNCH):
        chunk = np.ascontiguousarray(orders[start : start + LSSPA_CHAINS_PER_LAUNCH],
                                     dtype=np.int64)
        c = chunk.shape[0]
        result = cuda.to_device(np.ascontiguousarray(out[start : start + c]))
        flags = [] if status is None else [cuda.device_array(c, dtype=np.int64)]
        workspaces = [cuda.device_array((c, *shape), dtype=np.float64)
                      for shape in work_shapes]
        kernel[_grid(c)](cuda.to_device(chunk), *device_args, float(scale), result, *flags,
                         *workspaces)
        out[start : start + c] = result.copy_to_host()
        if status is not None:
            status[start : start + c] = flags[0].copy_to_host()
    return out


def lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor, test_target, scale, out,
                               status):
    """numba.cuda twin of :func:`skshapley.backends._numpy.lsspa_chain_lifts_cholesky`."""
    n, p = orders.shape
    if not n or not p:
        status[:] = 0
        return out
    return _launch_per_chain(_lsspa_cholesky, orders, (gram, cross, test_factor, test_target),
                             scale, out, [(p, p), (p,), (p,), (p,)], status)


@cuda.jit
def _lsspa_subsets(first, gram, cross, tgram, tcross, out, status, chol, members, theta):
    # One thread per subset S (bitmask first + thread index): Cholesky of the Gram matrix
    # R_S' R_S, theta_S from it, and the test gain 2 theta_S' T_S't - theta_S' T_S'T_S
    # theta_S = ||t||^2 - ||T_S theta_S - t||^2. A pivot at or below 1e-12 of its
    # diagonal (a dependent column) is flagged for the host's least-squares solve.
    t = cuda.grid(1)
    if t >= status.shape[0]:
        return
    s = first + t
    p = gram.shape[0]
    L = chol[t]
    idx = members[t]
    th = theta[t]
    k = 0
    for j in range(p):
        if (s >> j) & 1:
            idx[k] = j
            k += 1
    for a in range(k):
        for b in range(a + 1):
            acc = gram[idx[a], idx[b]]
            for c in range(b):
                acc -= L[a, c] * L[b, c]
            if a == b:
                if not acc > 1e-12 * gram[idx[a], idx[a]]:
                    status[t] = 1
                    return
                L[a, a] = math.sqrt(acc)
            else:
                L[a, b] = acc / L[b, b]
    for a in range(k):  # L z = cross_S
        acc = cross[idx[a]]
        for c in range(a):
            acc -= L[a, c] * th[c]
        th[a] = acc / L[a, a]
    for a in range(k - 1, -1, -1):  # L' theta = z
        acc = th[a]
        for c in range(a + 1, k):
            acc -= L[c, a] * th[c]
        th[a] = acc / L[a, a]
    gain = 0.0
    for a in range(k):
        quad = 0.0
        for b in range(k):
            quad += tgram[idx[a], idx[b]] * th[b]
        gain += th[a] * (2.0 * tcross[idx[a]] - quad)
    out[t] = gain
    status[t] = 0


def lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target, scale, out):
    """numba.cuda twin of :func:`skshapley.backends._numpy.lsspa_chain_lifts_qr`: one
    thread per chain, Householder QR in global workspaces, launched in slices."""
    n, p = orders.shape
    if not n or not p:
        return out
    return _launch_per_chain(_lsspa_qr, orders, (factor, target, test_factor, test_target),
                             scale, out, [(p, p + 1), (p, p), (p,), (p,), (p,)])


def lsspa_subset_gains(factor, target, test_factor, test_target, out):
    """numba.cuda twin of :func:`skshapley.backends._numpy.lsspa_subset_gains`: one thread
    per subset on the Gram form (normal equations, so agreement with the twin's
    least squares degrades with cond(R_S)^2); subsets with a dependent column are flagged
    by the kernel and solved on the host by least squares, as the twin does."""
    factor = np.asarray(factor, dtype=np.float64)
    test_factor = np.asarray(test_factor, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    test_target = np.asarray(test_target, dtype=np.float64)
    p = factor.shape[1]
    out[0] = 0.0
    n_subsets = (1 << p) - 1
    if not n_subsets:
        return out
    device_args = [cuda.to_device(np.ascontiguousarray(a)) for a in (
        factor.T @ factor, factor.T @ target, test_factor.T @ test_factor,
        test_factor.T @ test_target)]
    for start in range(1, n_subsets + 1, LSSPA_CHAINS_PER_LAUNCH):
        c = min(LSSPA_CHAINS_PER_LAUNCH, n_subsets + 1 - start)
        result = cuda.device_array(c, dtype=np.float64)
        flags = cuda.device_array(c, dtype=np.int64)
        _lsspa_subsets[_grid(c)](start, *device_args, result, flags,
                                 cuda.device_array((c, p, p), dtype=np.float64),
                                 cuda.device_array((c, p), dtype=np.int64),
                                 cuda.device_array((c, p), dtype=np.float64))
        out[start : start + c] = result.copy_to_host()
        for i in np.flatnonzero(flags.copy_to_host()):
            out[start + int(i)] = subset_gain_lstsq(factor, target, test_factor, test_target,
                                                    start + int(i))
    return out


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
    """numba.cuda twin of :func:`skshapley.backends._numpy.rkhs_subset_embeddings` (one
    thread per training row; the same products, sums in another order)."""
    training = np.ascontiguousarray(training, dtype=np.float64)
    n, d = training.shape
    if n:
        result = cuda.device_array(out.shape, dtype=np.float64)
        _rkhs_subsets[_grid(n)](
            cuda.to_device(training),
            cuda.to_device(np.ascontiguousarray(background, dtype=np.float64)),
            cuda.to_device(np.ascontiguousarray(length_scale, dtype=np.float64)),
            bool(laplace), result, cuda.device_array((n, d), dtype=np.float64),
            cuda.device_array((n, out.shape[0]), dtype=np.float64))
        out[...] = result.copy_to_host()
    return out
