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


@cuda.jit(device=True)
def block_sum(shared, value):
    """Tree reduction of one float64 per thread over a block of ``BLOCK_THREADS``; every
    thread gets it."""
    tid = cuda.threadIdx.x
    shared[tid] = value
    cuda.syncthreads()
    width = BLOCK_THREADS // 2
    while width > 0:
        if tid < width:
            shared[tid] += shared[tid + width]
        cuda.syncthreads()
        width //= 2
    total = shared[0]
    cuda.syncthreads()
    return total


@cuda.jit(device=True)
def block_extreme(shared, value, take_max):
    """The block's maximum (``take_max``) or minimum of one float64 per thread."""
    tid = cuda.threadIdx.x
    shared[tid] = value
    cuda.syncthreads()
    width = BLOCK_THREADS // 2
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
