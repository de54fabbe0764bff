"""numba.cuda kernels of LS-SPA, twins of ``_numpy.py``: one thread per chain or subset,
workspaces in the thread's rows of global arrays, launched in slices. Checked against the
NumPy twins in numba's CUDA simulator (``tests/kernels/cudasim_cases.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from skshapley.backends._numba_cuda_common import grid
from skshapley.backends.lsspa._numpy import subset_gain_lstsq
from skshapley.backends.lsspa._scalar import chain_test_drops

# The test-residual drops of one chain: the loop the numba CPU kernels compile too.
_chain_drops = cuda.jit(device=True)(chain_test_drops)


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
    _chain_drops(L, zc, test_factor, test_target, orders[c], scale, out[c], g[c], drops[c])


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
    _chain_drops(L, zc, test_factor, test_target, orders[c], scale, out[c], g[c], drops[c])


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
        kernel[grid(c)](cuda.to_device(chunk), *device_args, float(scale), result, *flags,
                         *workspaces)
        out[start : start + c] = result.copy_to_host()
        if status is not None:
            status[start : start + c] = flags[0].copy_to_host()
    return out


def lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor, test_target, scale, out,
                               status):
    """numba.cuda twin of ``_numpy.lsspa_chain_lifts_cholesky``."""
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
    """numba.cuda twin of ``_numpy.lsspa_chain_lifts_qr``: one
    thread per chain, Householder QR in global workspaces, launched in slices."""
    n, p = orders.shape
    if not n or not p:
        return out
    return _launch_per_chain(_lsspa_qr, orders, (factor, target, test_factor, test_target),
                             scale, out, [(p, p + 1), (p, p), (p,), (p,), (p,)])


def lsspa_subset_gains(factor, target, test_factor, test_target, out):
    """numba.cuda twin of ``_numpy.lsspa_subset_gains``: one thread
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
        _lsspa_subsets[grid(c)](start, *device_args, result, flags,
                                 cuda.device_array((c, p, p), dtype=np.float64),
                                 cuda.device_array((c, p), dtype=np.int64),
                                 cuda.device_array((c, p), dtype=np.float64))
        out[start : start + c] = result.copy_to_host()
        for i in np.flatnonzero(flags.copy_to_host()):
            out[start + int(i)] = subset_gain_lstsq(factor, target, test_factor, test_target,
                                                    start + int(i))
    return out
