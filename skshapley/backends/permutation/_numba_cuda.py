"""numba.cuda kernels of orderings, twins of ``_numpy.py``: one thread per output element,
and for the counter-based orderings a 2-D elementwise bijection then a block scan per
ordering. Checked against the NumPy twins in numba's CUDA simulator
(``tests/kernels/cudasim_cases.py``).
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int64

from skshapley.backends._numba_cuda_common import grid, launch, thread_cell
from skshapley.backends.permutation._numpy import PHILOX_ROUNDS, philox_bits, philox_keys


@cuda.jit
def _precedence(ranks, first, second, out):
    p, word = thread_cell(out.shape[0], out.shape[1])
    if p < 0:
        return
    bits = np.uint64(0)
    stop = min(first.shape[0], (word + 1) * 64)
    for pair in range(word * 64, stop):
        if ranks[p, first[pair]] < ranks[p, second[pair]]:
            bits |= np.uint64(1) << np.uint64(pair - word * 64)
    out[p, word] = bits


def precedence_bits(orders, out):
    """numba.cuda twin of ``_numpy.precedence_bits`` (ranks and the
    pair list are built on the host: O(n d) and O(d^2) against the kernel's O(n d^2))."""
    n, d = orders.shape
    if out.size:
        ranks = np.empty_like(orders)
        np.put_along_axis(ranks, orders, np.arange(d)[None, :], axis=1)
        first, second = np.triu_indices(d, k=1)
        launch(_precedence, grid(out.size), (ranks, first, second), out)
    return out


@cuda.jit
def _discordant(bits_a, bits_b, out):
    a, b = thread_cell(out.shape[0], out.shape[1])
    if a < 0:
        return
    count = 0
    for word in range(bits_a.shape[1]):
        count += cuda.popc(bits_a[a, word] ^ bits_b[b, word])
    out[a, b] = count


def discordant_pairs(bits_a, bits_b, out):
    """numba.cuda twin of ``_numpy.discordant_pairs``."""
    if out.size:
        launch(_discordant, grid(out.size), (bits_a, bits_b), out)
    return out


SCAN_THREADS = 256  # threads of the compaction block; a power of two


@cuda.jit
def _philox_images(keys, n_bits, images):
    """2-D elementwise: images[p, i] = the keyed bijection of i, one thread each."""
    p, i = thread_cell(images.shape[0], images.shape[1])
    if p < 0:
        return
    v = np.uint64(i)
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
    images[p, i] = np.int64((left << np.uint64(right_bits)) | right)


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
    """numba.cuda twin of ``_numpy.philox_orders``: round keys from
    the same SplitMix64 stream (host, n x rounds words), the bijection as one 2-D
    elementwise kernel over (ordering, padded domain), then one block per ordering
    compacts the values below d by a block scan."""
    rounds = PHILOX_ROUNDS if rounds is None else rounds
    n, d = out.shape
    if n and d:
        keys = cuda.to_device(np.ascontiguousarray(
            philox_keys(seed, np.arange(start, start + n), rounds)))
        size = 1 << philox_bits(d)
        images = cuda.device_array((n, size), dtype=np.int64)
        _philox_images[grid(n * size)](keys, philox_bits(d), images)
        result = cuda.device_array(out.shape, dtype=np.int64)
        _compact_below[n, SCAN_THREADS](images, result)
        out[...] = result.copy_to_host()
    return out
