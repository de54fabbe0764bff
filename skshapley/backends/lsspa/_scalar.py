"""The scalar loops of LS-SPA that the numba CPU kernels (``_numba``, through
``numba.njit``) and the numba.cuda kernels (``_numba_cuda``, through
``cuda.jit(device=True)``) compile from this one source. Plain Python: no numba here.
"""

from __future__ import annotations


def chain_test_drops(lower, z, test_factor, test_target, pi, scale, out_row, g, drops):
    """The test-residual drop of each step of one chain (Bell, Devanathan & Boyd 2024,
    Sec. 3.3), one test row at a time: the loop twin of ``_numpy``'s
    ``_chain_lifts_from_factor``.

    Parameters
    ----------
    lower : float64 (p, p)
        Lower-triangular factor L of the chain (row-major).
    z : float64 (p,)
        Rotated target L^{-1} (R^T ytilde)[pi].
    test_factor : float64 (m, p)
    test_target : float64 (m,)
    pi : int64 (p,)
        The chain: ``pi[k]`` joins at step k.
    scale : float
    out_row : float64 (p,)
        ``out_row[pi[k]]`` is set to the scaled drop of step k.
    g, drops : float64 (p,)
        Work space.
    """
    m = test_factor.shape[0]
    p = pi.shape[0]
    for k in range(p):
        drops[k] = 0.0
    for r in range(m):
        residual = -test_target[r]  # prediction minus target before the next step
        for j in range(p):
            acc = test_factor[r, pi[j]]
            for i in range(j):
                acc -= lower[j, i] * g[i]
            g[j] = acc / lower[j, j]
            step = z[j] * g[j]
            drops[j] -= step * (2.0 * residual + step)
            residual += step
    for j in range(p):
        out_row[pi[j]] = drops[j] * scale
