"""Kernels on permutations, their uniform expectations and the discrepancy (Mitchell,
Cooper, Frank & Holmes 2022, Sec. 3 and 3.3).

Every kernel compares **rank vectors** (which player precedes which), never orderings
position by position (the same formulas applied to orderings give other numbers).
Kernel matrices are built from the number of
discordant player pairs, counted with packed pair-precedence bits and popcounts in the
backend kernels.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends import get_backend

KERNELS = ("mallows", "kendall", "spearman")
DEFAULT_LAMBDA = 4.0  # the value behind all of Table 4 of Mitchell et al. 2022 (App. B)


def _check_orders(orders, name="orders"):
    orders = np.ascontiguousarray(np.asarray(orders, dtype=np.int64))
    if orders.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of orderings; got shape {orders.shape}.")
    d = orders.shape[1]
    if orders.size and not (np.sort(orders, axis=1) == np.arange(d)).all():
        raise ValueError(f"every row of {name} must be a permutation of 0..{d - 1}.")
    return orders


def n_pairs(n_players: int) -> int:
    """N_d = d (d - 1) / 2, the number of player pairs."""
    return n_players * (n_players - 1) // 2


def precedence_bits(orders) -> np.ndarray:
    """Packed pair-precedence bits of each ordering, uint64 (n, ceil(N_d / 64))."""
    orders = _check_orders(orders)
    n_words = max(1, -(-n_pairs(orders.shape[1]) // 64))
    out = np.empty((orders.shape[0], n_words), dtype=np.uint64)
    return get_backend().precedence_bits(orders, out)


def discordant_pairs_from_bits(bits_a, bits_b) -> np.ndarray:
    """n_dis (n_a, n_b) from packed precedence bits (see :func:`precedence_bits`)."""
    out = np.empty((bits_a.shape[0], bits_b.shape[0]), dtype=np.int64)
    return get_backend().discordant_pairs(np.ascontiguousarray(bits_a),
                                          np.ascontiguousarray(bits_b), out)


def discordant_pairs(orders_a, orders_b=None) -> np.ndarray:
    """n_dis(r, r') for every pair of orderings of A and B (B = A when omitted).

    Examples
    --------
    >>> from skshapley.permutations import discordant_pairs
    >>> discordant_pairs([[0, 1, 2]], [[2, 1, 0], [1, 0, 2]]).tolist()
    [[3, 1]]
    """
    if orders_b is not None and np.shape(orders_a)[1] != np.shape(orders_b)[1]:
        raise ValueError("orders_a and orders_b must order the same number of players.")
    bits_a = precedence_bits(orders_a)
    bits_b = bits_a if orders_b is None else precedence_bits(orders_b)
    return discordant_pairs_from_bits(bits_a, bits_b)


def kendall_kernel(orders_a, orders_b=None) -> np.ndarray:
    r"""Kendall kernel :math:`K_\tau = 1 - 2 n_\mathrm{dis} / N_d` (1 for d = 1).

    :math:`n_\mathrm{dis}` counts the discordant player pairs of two orderings and
    :math:`N_d = d (d - 1) / 2` all pairs.

    Examples
    --------
    >>> from skshapley.permutations import kendall_kernel
    >>> kendall_kernel([[0, 1, 2]], [[2, 1, 0]]).tolist()
    [[-1.0]]
    """
    n_dis = discordant_pairs(orders_a, orders_b)
    pairs = n_pairs(np.shape(orders_a)[1])
    return 1.0 - 2.0 * n_dis / pairs if pairs else np.ones(n_dis.shape)


def mallows_kernel(orders_a, orders_b=None, lam: float = DEFAULT_LAMBDA) -> np.ndarray:
    r"""Mallows kernel :math:`K_M = \exp(-\lambda \, n_\mathrm{dis} / N_d)`, universal on
    permutations (Mitchell, Cooper, Frank & Holmes 2022, Sec. 3).

    Examples
    --------
    >>> from skshapley.permutations import mallows_kernel
    >>> round(float(mallows_kernel([[0, 1, 2]], [[2, 1, 0]])[0, 0]), 6)  # e^-4
    0.018316
    """
    n_dis = discordant_pairs(orders_a, orders_b)
    pairs = n_pairs(np.shape(orders_a)[1])
    return np.exp(-lam * n_dis / pairs) if pairs else np.ones(n_dis.shape)


def spearman_kernel(orders_a, orders_b=None) -> np.ndarray:
    r"""Spearman kernel :math:`K_\rho = \sum_i (r_i + 1)(r'_i + 1)` on 1-based rank
    vectors.

    Examples
    --------
    >>> from skshapley.permutations import spearman_kernel
    >>> spearman_kernel([[0, 1, 2]]).tolist()  # 1 + 4 + 9
    [[14.0]]
    """
    a = _check_orders(orders_a)
    b = a if orders_b is None else _check_orders(orders_b, "orders_b")
    ranks_a = np.argsort(a, axis=1).astype(np.float64) + 1.0
    ranks_b = np.argsort(b, axis=1).astype(np.float64) + 1.0
    return ranks_a @ ranks_b.T


def mallows_expectation(n_players: int, lam: float = DEFAULT_LAMBDA) -> float:
    """E_{r' ~ U} K_M(r, r'), the same for every r (from Muir's 1898 generating function
    of the number of inversions).

    Examples
    --------
    >>> from skshapley.permutations import mallows_expectation
    >>> round(mallows_expectation(10), 7)
    0.1530353
    """
    d = int(n_players)
    if d <= 1:
        return 1.0
    step = lam / n_pairs(d)
    j = np.arange(1, d + 1)
    log_terms = np.log(-np.expm1(-j * step)) - np.log(j) - np.log(-np.expm1(-step))
    return float(np.exp(log_terms.sum()))


def kernel_expectation(kernel: str, n_players: int, lam: float = DEFAULT_LAMBDA) -> float:
    """Uniform expectation E_{r'} K(r, r') of a kernel (independent of r)."""
    d = int(n_players)
    if kernel == "mallows":
        return mallows_expectation(d, lam)
    if kernel == "kendall":
        return 1.0 if d <= 1 else 0.0
    if kernel == "spearman":
        return d * (d + 1) ** 2 / 4.0
    raise ValueError(f"The 'kernel' parameter must be one of {list(KERNELS)}; got {kernel!r}.")


def kernel_matrix(kernel: str, orders_a, orders_b=None, lam: float = DEFAULT_LAMBDA):
    """Dispatch to :func:`mallows_kernel`, :func:`kendall_kernel` or :func:`spearman_kernel`."""
    if kernel == "mallows":
        return mallows_kernel(orders_a, orders_b, lam)
    if kernel == "kendall":
        return kendall_kernel(orders_a, orders_b)
    if kernel == "spearman":
        return spearman_kernel(orders_a, orders_b)
    raise ValueError(f"The 'kernel' parameter must be one of {list(KERNELS)}; got {kernel!r}.")


def discrepancy(orders, weights=None, kernel: str = "mallows", lam: float = DEFAULT_LAMBDA):
    r"""Kernel discrepancy :math:`D(\Pi, w)` of a weighted sample of orderings (Mitchell,
    Cooper, Frank & Holmes 2022, Sec. 3.3, Eq. 8).

    :math:`D^2 = \mathbb{E} K - 2 \sum_k w_k \mathbb{E} K + w^\top K w` for the
    right-invariant kernels here (both expectations equal the same constant). It bounds
    the error of the weighted permutation estimate of each Shapley value:
    :math:`|\mathrm{error}_i| \le D \, \|g_i\|_K`.

    Parameters
    ----------
    orders : int (n, d)
    weights : float (n,), optional
        Quadrature weights; uniform 1/n when omitted.
    kernel : {"mallows", "kendall", "spearman"}, default="mallows"
    lam : float, default=4.0
        Mallows bandwidth.

    Returns
    -------
    float

    Examples
    --------
    >>> from skshapley.permutations import discrepancy
    >>> import itertools
    >>> every = list(itertools.permutations(range(4)))
    >>> round(discrepancy(every), 12)  # all d! orderings integrate exactly
    0.0
    """
    orders = _check_orders(orders)
    n, d = orders.shape
    if n == 0:
        raise ValueError("discrepancy needs at least one ordering.")
    if weights is None:
        weights = np.full(n, 1.0 / n)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (n,):
        raise ValueError(f"weights must have shape ({n},); got {weights.shape}.")
    expectation = kernel_expectation(kernel, d, lam)
    gram = kernel_matrix(kernel, orders, lam=lam)
    squared = expectation * (1.0 - 2.0 * weights.sum()) + weights @ gram @ weights
    return float(np.sqrt(max(squared, 0.0)))
