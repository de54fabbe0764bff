"""What the numba.cuda modules of the domains share: launch geometry, the host round trip
of a one-launch kernel, and block reductions in shared memory.

Host wrappers take and return NumPy arrays like every backend (copies in, result out);
float64 throughout.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from skshapley.backends._gpu_common import THREADS_PER_BLOCK

BLOCK_THREADS = 128  # threads of a reduction block; a power of two for the tree reductions


def grid(n_threads):
    """(blocks, threads per block) of a one-thread-per-element launch."""
    return max(1, -(-n_threads // THREADS_PER_BLOCK)), THREADS_PER_BLOCK


def launch(kernel, launch, inputs, out, update=False):
    """Copy ``inputs`` to the device, run ``kernel[launch](*inputs, result)`` and copy the
    result back into ``out`` (the round trip every host-facing wrapper makes); with
    ``update`` the kernel starts from ``out``'s values instead of uninitialised memory."""
    result = cuda.to_device(np.ascontiguousarray(out)) if update else \
        cuda.device_array(out.shape, dtype=out.dtype)
    kernel[launch](*[cuda.to_device(np.ascontiguousarray(a)) for a in inputs], result)
    out[...] = result.copy_to_host()
    return out


@cuda.jit(device=True, inline=True)
def thread_cell(n_rows, n_cols):
    """(row, column) of this thread's element of a row-major (n_rows, n_cols) array in a
    one-thread-per-element launch (:func:`grid`), or (-1, -1) for a thread past its end."""
    element = cuda.grid(1)
    if element >= n_rows * n_cols:
        return -1, -1
    return element // n_cols, element % n_cols


# What block_reduce combines: a sum, a maximum or a minimum.
_SUM, _MAX, _MIN = 0, 1, 2


@cuda.jit(device=True)
def _block_reduce(shared, value, how):
    """Tree reduction of one float64 per thread over a block of ``BLOCK_THREADS`` in
    ``shared``; every thread gets the result."""
    tid = cuda.threadIdx.x
    shared[tid] = value
    cuda.syncthreads()
    width = BLOCK_THREADS // 2
    while width > 0:
        if tid < width:
            other = shared[tid + width]
            if how == _SUM:
                shared[tid] += other
            elif (other > shared[tid]) if how == _MAX else (other < shared[tid]):
                shared[tid] = other
        cuda.syncthreads()
        width //= 2
    result = shared[0]
    cuda.syncthreads()
    return result


@cuda.jit(device=True)
def block_sum(shared, value):
    """The block's sum of one float64 per thread; every thread gets it."""
    return _block_reduce(shared, value, _SUM)


@cuda.jit(device=True)
def block_extreme(shared, value, take_max):
    """The block's maximum (``take_max``) or minimum of one float64 per thread."""
    return _block_reduce(shared, value, _MAX if take_max else _MIN)
