"""NumPy reference kernels of coalitions and their values: the oracle of the parity tests
of ``_numba``, ``_numba_cuda`` and ``_cupy`` (same names and signatures).

Arguments are arrays, then scalars, then a preallocated ``out`` that the kernel fills
and returns.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends._array_common import popcount


def assemble_masked_batch(x, background, coalitions, out):
    """Fill the model input of interventional games, for one or several rows.

    Parameters
    ----------
    x : float64 (n_rows, d)
        Foreground rows (one game per row, all on the same coalitions).
    background : float64 (n_background, d)
        Background rows.
    coalitions : bool (m, d)
        Coalition masks; True takes the feature from the foreground row.
    out : float64 (m * n_rows * n_background, d)
        Row ``(k * n_rows + i) * n_background + r`` is
        ``where(coalitions[k], x[i], background[r])``.

    Returns
    -------
    out : float64 (m * n_rows * n_background, d)
    """
    m, d = coalitions.shape
    n_rows = x.shape[0]
    n_background = background.shape[0]
    view = out.reshape(m, n_rows, n_background, d)
    np.copyto(view, background[None, None, :, :])
    np.copyto(view, x[None, :, None, :], where=coalitions[:, None, None, :])
    return out


def prefix_coalitions(orders, out):
    """Masks of the proper non-empty prefixes of each ordering.

    Parameters
    ----------
    orders : int64 (n, d)
        Each row is an ordering of 0..d-1 (``orders[p, t]`` joins at step t).
    out : bool (n, d - 1, d)
        ``out[p, t]`` is the mask of ``{orders[p, 0], ..., orders[p, t]}``.

    Returns
    -------
    out : bool (n, d - 1, d)
    """
    n, d = orders.shape
    if d < 2:
        return out
    ranks = np.empty_like(orders)
    np.put_along_axis(ranks, orders, np.arange(d)[None, :], axis=1)
    steps = np.arange(d - 1)
    out[...] = ranks[:, None, :] <= steps[None, :, None]
    return out


def accumulate_permutation_marginals(orders, path_values, out):
    """Marginal contribution of every player along every ordering.

    Parameters
    ----------
    orders : int64 (n, d)
    path_values : float64 (n, d + 1, k)
        ``path_values[p, t]`` is v of the first t players of ordering p (t = 0..d).
    out : float64 (n, d, k)
        ``out[p, orders[p, t]] = path_values[p, t + 1] - path_values[p, t]``.

    Returns
    -------
    out : float64 (n, d, k)
    """
    with np.errstate(invalid="ignore"):  # inf - inf = nan, as in the compiled twins
        steps = path_values[:, 1:, :] - path_values[:, :-1, :]
    np.put_along_axis(out, orders[:, :, None], steps, axis=1)
    return out


def _shapley_weights(n_players):
    # w(s) = s! (d - s - 1)! / d! = 1 / (d * C(d - 1, s)), in floating point without overflow.
    from scipy.special import comb

    sizes = np.arange(n_players)
    return 1.0 / (n_players * comb(n_players - 1, sizes, exact=False))


def exact_shapley_from_values(values, n_players, out):
    """Exact Shapley values from the values of all 2^d coalitions.

    Parameters
    ----------
    values : float64 (2**d, k)
        ``values[s]`` is v of the coalition whose bitmask is ``s`` (bit j = player j).
    n_players : int
    out : float64 (d, k)

    Returns
    -------
    out : float64 (d, k)
    """
    d = n_players
    masks = np.arange(2**d, dtype=np.int64)
    sizes = np.bitwise_count(masks) if hasattr(np, "bitwise_count") else popcount(masks)
    weights = _shapley_weights(d)
    for j in range(d):
        bit = np.int64(1) << j
        without = masks[(masks & bit) == 0]
        diff = values[without | bit] - values[without]
        out[j] = weights[sizes[without]] @ diff
    return out
