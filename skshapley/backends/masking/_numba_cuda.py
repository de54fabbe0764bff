"""numba.cuda kernels of coalitions and their values, twins of ``_numpy.py``: one thread per
output element, except the exact Shapley values (a block per player and output). Checked
against the NumPy twins in numba's CUDA simulator (``tests/kernels/cudasim_cases.py``).
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float64, int64

from skshapley.backends._numba_cuda_common import (
    BLOCK_THREADS,
    block_sum,
    grid,
    launch,
    thread_cell,
)
from skshapley.backends.masking._numpy import _shapley_weights


@cuda.jit
def _masked_batch(x, background, coalitions, out):
    row, j = thread_cell(out.shape[0], out.shape[1])
    if row < 0:
        return
    n_background = background.shape[0]
    n_rows = x.shape[0]
    k = row // (n_rows * n_background)
    i = (row // n_background) % n_rows
    r = row % n_background
    out[row, j] = x[i, j] if coalitions[k, j] else background[r, j]


def assemble_masked_batch(x, background, coalitions, out):
    """numba.cuda twin of ``_numpy.assemble_masked_batch``."""
    if out.size:
        launch(_masked_batch, grid(out.size), (x, background, coalitions), out)
    return out


@cuda.jit
def _prefixes(orders, out):
    d = orders.shape[1]
    p, t = thread_cell(orders.shape[0], d)
    if p < 0:
        return
    # orders[p, t] joins at step t: in prefixes t .. d - 2
    player = orders[p, t]
    for step in range(d - 1):
        out[p, step, player] = t <= step


def prefix_coalitions(orders, out):
    """numba.cuda twin of ``_numpy.prefix_coalitions``."""
    n, d = orders.shape
    if d >= 2 and n:
        launch(_prefixes, grid(n * d), (orders,), out)
    return out


@cuda.jit
def _marginals(orders, path_values, out):
    n, d = orders.shape
    step, c = thread_cell(n * d, path_values.shape[2])  # step: p * d + t
    if step < 0:
        return
    p, t = step // d, step % d
    out[p, orders[p, t], c] = path_values[p, t + 1, c] - path_values[p, t, c]


def accumulate_permutation_marginals(orders, path_values, out):
    """numba.cuda twin of ``_numpy.accumulate_permutation_marginals``."""
    if out.size:
        launch(_marginals, grid(out.size), (orders, path_values), out, update=True)
    return out


SHAPLEY_THREADS = BLOCK_THREADS  # block of the exact-Shapley reduction (a tree sum)


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
    total = block_sum(shared, total)
    if cuda.threadIdx.x == 0:
        out[j, k] = total


def exact_shapley_from_values(values, n_players, out):
    """numba.cuda twin of ``_numpy.exact_shapley_from_values``."""
    if n_players and out.size:
        launch(_exact_shapley, ((n_players, out.shape[1]), SHAPLEY_THREADS),
                (np.asarray(values, dtype=np.float64), _shapley_weights(n_players)), out)
    return out
