"""NumPy reference kernels of LS-SPA: the oracle of the parity tests of ``_numba``,
``_numba_cuda`` and ``_cupy`` (same names and signatures), and the least-squares gain of
one subset, the GPU twins' fallback.
"""

from __future__ import annotations

import numpy as np

# -- LS-SPA (Bell, Devanathan & Boyd 2024, Sec. 3.2-3.3) -------------------------------------
# The reduced least-squares problem (Sec. 3.2): a p x p upper-triangular training factor R with
# target ytilde (||X theta - y||^2 = ||R theta - ytilde||^2 + const) and an m x p test factor
# T with target ttilde. A chain's lift of feature pi_k is the drop of the test residual when
# pi_k joins; with L = Rtilde^T lower triangular (Rtilde the R factor of R[:, pi], or the
# Cholesky factor of the permuted Gram) and z = L^{-1} (R^T ytilde)[pi], the test prediction of
# model k is sum_{i <= k} z_i g_i with g_i column i of G = T[:, pi] L^{-T} (Sec. 3.3, the cumsum
# formulation). Each increment is computed as delta (2 e + delta), e the residual before it,
# not as a difference of residual norms, so small lifts keep their relative accuracy.


def _chain_lifts_from_factor(lower, z, test_factor, test_target, pi, scale, out_row):
    """Lifts of one chain from its lower-triangular factor and rotated target."""
    from scipy.linalg import solve_triangular

    g = solve_triangular(lower, test_factor[:, pi].T, lower=True).T  # (m, p) = T_pi L^{-T}
    steps = g * z[None, :]
    before = np.cumsum(steps, axis=1) - steps - test_target[:, None]  # residual before step k
    drops = -(steps * (2.0 * before + steps)).sum(axis=0)
    out_row[pi] = drops * scale


def lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target, scale, out):
    """Lift vectors of chains from the R factor of each permuted training factor.

    Parameters
    ----------
    orders : int64 (n, p)
        Row c is a chain: ``orders[c, k]`` joins at step k.
    factor : float64 (p, p)
        Upper-triangular training factor R of the reduced problem.
    target : float64 (p,)
        Reduced training target ytilde.
    test_factor : float64 (m, p)
        Reduced test factor T.
    test_target : float64 (m,)
        Reduced test target.
    scale : float
        Multiplies every lift (1 / ||y_test||^2 gives R^2 lifts).
    out : float64 (n, p)
        ``out[c, j]`` is the lift of feature j in chain c (original feature order).

    Returns
    -------
    out : float64 (n, p)
        Each row sums to ``scale * (||ttilde||^2 - ||T theta_full - ttilde||^2)``.
    """
    n, p = orders.shape
    for c in range(n):
        pi = orders[c]
        stacked = np.empty((p, p + 1))
        stacked[:, :p] = factor[:, pi]
        stacked[:, p] = target
        r = np.linalg.qr(stacked, mode="r")
        _chain_lifts_from_factor(np.ascontiguousarray(r[:, :p].T), r[:, p], test_factor,
                                 test_target, pi, scale, out[c])
    return out


def lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor, test_target, scale, out,
                               status):
    """Lift vectors of chains from the Cholesky factor of each permuted Gram matrix.

    Faster than :func:`lsspa_chain_lifts_qr` (p^3/3 instead of 4p^3/3 flops per chain) but
    squares the condition number.

    Parameters
    ----------
    orders : int64 (n, p)
    gram : float64 (p, p)
        R^T R (ridge included).
    cross : float64 (p,)
        R^T ytilde.
    test_factor, test_target, scale
        As in :func:`lsspa_chain_lifts_qr`.
    out : float64 (n, p)
    status : int64 (n,)
        Set to 0 for chains whose factorisation succeeded and 1 where a pivot was not
        positive (their ``out`` row is then undefined; recompute them with the QR kernel).

    Returns
    -------
    out : float64 (n, p)
    """
    from scipy.linalg import solve_triangular

    n, p = orders.shape
    for c in range(n):
        pi = orders[c]
        try:
            lower = np.linalg.cholesky(gram[np.ix_(pi, pi)])
        except np.linalg.LinAlgError:
            status[c] = 1
            continue
        if not np.all(np.diag(lower) > 0):
            status[c] = 1
            continue
        status[c] = 0
        z = solve_triangular(lower, cross[pi], lower=True)
        _chain_lifts_from_factor(lower, z, test_factor, test_target, pi, scale, out[c])
    return out


def lsspa_subset_gains(factor, target, test_factor, test_target, out):
    """Test-residual drop of the least-squares fit on every subset of features.

    Parameters
    ----------
    factor, target, test_factor, test_target
        The reduced problem, as in :func:`lsspa_chain_lifts_qr`.
    out : float64 (2**p,)
        ``out[s] = ||ttilde||^2 - ||T theta_S - ttilde||^2`` for the subset S with bitmask
        ``s`` (bit j = feature j); ``out[0] = 0``.

    Returns
    -------
    out : float64 (2**p,)
    """
    out[0] = 0.0
    for s in range(1, 1 << factor.shape[1]):
        out[s] = subset_gain_lstsq(factor, target, test_factor, test_target, s)
    return out


def subset_gain_lstsq(factor, target, test_factor, test_target, subset):
    """The test-residual drop of one subset (bitmask ``subset``) by least squares; also the
    GPU twins' fallback for subsets their Gram-form solve flags."""
    members = [j for j in range(factor.shape[1]) if subset >> j & 1]
    theta, *_ = np.linalg.lstsq(factor[:, members], target, rcond=None)
    residual = test_factor[:, members] @ theta - test_target
    return test_target @ test_target - residual @ residual
