"""NumPy reference kernel of RKHS-SHAP: the oracle of the parity tests of ``_numba``,
``_numba_cuda`` and ``_cupy`` (same name and signature), with its body written once for
any array library (:func:`subset_embeddings_into`, which the CuPy twin runs on CuPy).
"""

from __future__ import annotations

import numpy as np


# -- RKHS-SHAP (Chau et al. 2022, Prop. 3) ----------------------------------------------------
def rkhs_subset_embeddings(training, background, length_scale, laplace, out):
    """Kernel mean embeddings of every feature subset, the interventional RKHS game's table.

    Parameters
    ----------
    training : float64 (n, d)
    background : float64 (b, d)
    length_scale : float64 (d,)
    laplace : bool
        Per-feature kernel exp(-|t|) if True, else exp(-t^2 / 2), t = (a - c) / l.
    out : float64 (2^d, n)
        out[T, i] = mean over background rows l of prod_{j in T} k_j(training[i, j],
        background[l, j]), T a bitmask (row 0 is all ones).

    A depth-first walk over subsets forms each subset's product from its parent's (the
    subset without its highest feature) times one per-feature kernel matrix, over row
    blocks of the training set small enough to stay in cache.
    """
    return subset_embeddings_into(np, training, background, length_scale, laplace, out)


def subset_embeddings_into(xp, training, background, length_scale, laplace, out):
    """The body of :func:`rkhs_subset_embeddings` on the array library ``xp`` (NumPy here,
    CuPy in the CuPy backend); every argument is an ``xp`` array."""
    n, d = training.shape
    b = background.shape[0]
    rows = max(1, 2**19 // max(b, 1))
    out[0] = 1.0
    for lo in range(0, n, rows):
        diff = (training[lo:lo + rows].T[:, :, None] - background.T[:, None, :]) \
            / xp.asarray(length_scale)[:, None, None]
        factors = xp.exp(-xp.abs(diff)) if laplace else xp.exp(-(0.5 * diff**2))
        # (feature to add, parent's mask, parent's product); a child's product is formed
        # when it is popped, so at most one product per depth is alive
        stack = [(j, 0, None) for j in range(d)]
        while stack:
            j, parent, product = stack.pop()
            product = factors[j] if product is None else product * factors[j]
            mask = parent | (1 << j)
            out[mask, lo:lo + rows] = product.sum(axis=1) / b
            stack.extend((k, mask, product) for k in range(j + 1, d))
    return out
