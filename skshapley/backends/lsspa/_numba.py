"""Numba CPU kernels of LS-SPA, twins of ``_numpy.py`` (same names, same signatures)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from skshapley.backends._numba_runtime import PARALLEL_MIN_ELEMENTS, compile_twice
from skshapley.backends.lsspa._scalar import chain_test_drops

# -- LS-SPA (Bell, Devanathan & Boyd 2024, Sec. 3.3) ------------------------------------------
# Each chain is one prange iteration with its own workspace, so results do not depend on the
# thread count. Row-major storage keeps every inner loop a contiguous dot product or axpy.
# fastmath: only reassociation and contraction (FMA), so LLVM vectorises the dot products of
# the triangular factorisations and solves; measured 1.5-2.7x faster per chain at p = 50-200
# (benchmarks/results/lsspa.md), results within 1e-13 of the strict build. No nnan/ninf.
LSSPA_FASTMATH = {"reassoc", "contract"}


# Lifts of one chain from L (lower, row-major) and z; the numba.cuda kernels compile the
# same loop as a device function.
_lsspa_test_drops = njit(cache=True, nogil=True, fastmath=LSSPA_FASTMATH)(chain_test_drops)


def _lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target, scale, out):
    n, p = orders.shape
    for c in prange(n):
        pi = orders[c]
        # Row i of w is column i of [R[:, pi] | ytilde]; Householder reflections then act on
        # contiguous rows, and the lower triangle of w[:p] ends as L = Rtilde^T.
        w = np.empty((p + 1, p))
        for i in range(p):
            for r in range(p):
                w[i, r] = factor[r, pi[i]]
        for r in range(p):
            w[p, r] = target[r]
        v = np.empty(p)
        for j in range(p):
            norm2 = 0.0
            for r in range(j, p):
                norm2 += w[j, r] * w[j, r]
            norm = math.sqrt(norm2)
            if norm == 0.0:
                continue
            alpha = -norm if w[j, j] >= 0.0 else norm
            v0 = w[j, j] - alpha
            vnorm2 = norm2 - w[j, j] * w[j, j] + v0 * v0
            if vnorm2 == 0.0:
                w[j, j] = alpha
                continue
            v[j] = v0
            for r in range(j + 1, p):
                v[r] = w[j, r]
            beta = 2.0 / vnorm2
            w[j, j] = alpha
            for r in range(j + 1, p):
                w[j, r] = 0.0
            for i in range(j + 1, p + 1):
                dot = 0.0
                for r in range(j, p):
                    dot += v[r] * w[i, r]
                dot *= beta
                for r in range(j, p):
                    w[i, r] -= dot * v[r]
        z = np.empty(p)
        for j in range(p):
            z[j] = w[p, j]
        _lsspa_test_drops(w, z, test_factor, test_target, pi, scale, out[c], np.empty(p),
                          np.empty(p))
    return out


_lsspa_qr_serial, _lsspa_qr_parallel = compile_twice(_lsspa_chain_lifts_qr,
                                                   fastmath=LSSPA_FASTMATH)


def _lsspa_parallel(orders):
    p = orders.shape[1]
    return orders.shape[0] * p * p * p >= PARALLEL_MIN_ELEMENTS // 4 and orders.shape[0] > 1


def lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target, scale, out):
    """Numba twin of ``_numpy.lsspa_chain_lifts_qr``."""
    kernel = _lsspa_qr_parallel if _lsspa_parallel(orders) else _lsspa_qr_serial
    return kernel(orders, factor, target, test_factor, test_target, float(scale), out)


def _lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor, test_target, scale, out,
                                status):
    n, p = orders.shape
    for c in prange(n):
        pi = orders[c]
        lower = np.empty((p, p))
        status[c] = 0
        for j in range(p):  # Cholesky-Banachiewicz, row by row
            for i in range(j + 1):
                acc = gram[pi[j], pi[i]]
                for k in range(i):
                    acc -= lower[j, k] * lower[i, k]
                if i < j:
                    lower[j, i] = acc / lower[i, i]
                elif acc > 0.0:
                    lower[j, j] = math.sqrt(acc)
                else:
                    status[c] = 1
                    break
            if status[c]:
                break
        if status[c]:
            continue
        z = np.empty(p)
        for j in range(p):
            acc = cross[pi[j]]
            for i in range(j):
                acc -= lower[j, i] * z[i]
            z[j] = acc / lower[j, j]
        _lsspa_test_drops(lower, z, test_factor, test_target, pi, scale, out[c], np.empty(p),
                          np.empty(p))
    return out


_lsspa_chol_serial, _lsspa_chol_parallel = compile_twice(_lsspa_chain_lifts_cholesky,
                                                       fastmath=LSSPA_FASTMATH)


def lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor, test_target, scale, out,
                               status):
    """Numba twin of ``_numpy.lsspa_chain_lifts_cholesky``."""
    kernel = _lsspa_chol_parallel if _lsspa_parallel(orders) else _lsspa_chol_serial
    return kernel(orders, gram, cross, test_factor, test_target, float(scale), out, status)


def _lsspa_subset_gains(factor, target, test_factor, test_target, out):
    # Depth-first over subsets in increasing feature order: the child S + {j} (j > max S)
    # extends its parent's orthonormal basis by one column (classical Gram-Schmidt applied
    # twice, as stable as Householder for this), so each subset costs O(p |S| + m |S|).
    # prange over the first feature: subtree j0 holds the 2^(p - 1 - j0) subsets whose
    # smallest member is j0; every subset is written by exactly one iteration.
    p = factor.shape[1]
    m = test_factor.shape[0]
    out[0] = 0.0
    for j0 in prange(p):
        basis = np.empty((p, p))  # row k: k-th orthonormal basis vector
        gcols = np.empty((p, m))  # row k: column k of T[:, S] Rtilde^{-1}
        pred = np.empty((p + 1, m))  # test prediction at each depth
        gain = np.empty(p + 1)
        masks = np.empty(p + 1, dtype=np.int64)
        nxt = np.empty(p + 1, dtype=np.int64)
        coef = np.empty(p)
        w = np.empty(p)
        for r in range(m):
            pred[0, r] = 0.0
        gain[0] = 0.0
        masks[0] = 0
        depth = 0
        nxt[0] = j0
        while depth >= 0:
            j = nxt[depth]
            if j >= p or (depth == 0 and j > j0):
                depth -= 1
                continue
            nxt[depth] = j + 1
            k = depth
            for r in range(p):
                w[r] = factor[r, j]
            for i in range(k):
                coef[i] = 0.0
            for _ in range(2):  # CGS2: project out the basis twice
                for i in range(k):
                    dot = 0.0
                    for r in range(p):
                        dot += basis[i, r] * w[r]
                    coef[i] += dot
                    for r in range(p):
                        w[r] -= dot * basis[i, r]
            norm2 = 0.0
            for r in range(p):
                norm2 += w[r] * w[r]
            d = math.sqrt(norm2)
            zk = 0.0
            for r in range(p):
                basis[k, r] = w[r] / d
                zk += basis[k, r] * target[r]
            drop = 0.0
            for r in range(m):
                acc = test_factor[r, j]
                for i in range(k):
                    acc -= gcols[i, r] * coef[i]
                gcols[k, r] = acc / d
                step = zk * gcols[k, r]
                residual = pred[k, r] - test_target[r]
                drop -= step * (2.0 * residual + step)
                pred[k + 1, r] = pred[k, r] + step
            gain[k + 1] = gain[k] + drop
            masks[k + 1] = masks[k] | (np.int64(1) << j)
            out[masks[k + 1]] = gain[k + 1]
            depth = k + 1
            nxt[depth] = j + 1
    return out


_lsspa_subsets_serial, _lsspa_subsets_parallel = compile_twice(_lsspa_subset_gains,
                                                             fastmath=LSSPA_FASTMATH)


def lsspa_subset_gains(factor, target, test_factor, test_target, out):
    """Numba twin of ``_numpy.lsspa_subset_gains``."""
    big = factor.shape[1] >= 10
    kernel = _lsspa_subsets_parallel if big else _lsspa_subsets_serial
    return kernel(factor, target, test_factor, test_target, out)
