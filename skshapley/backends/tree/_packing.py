"""Bin packing of paths into 32-lane warps (GPUTreeShap, Mitchell, Frank & Holmes 2022,
Sec. 3.3), run once per model on the CPU.

Items are paths of size u + 1 (the root placeholder takes a lane); a path may not span
two warps. Packers: "none" (a warp per path), "nf" (next fit, in path order), "ffd"
(first fit decreasing, with a max segment tree over bin residuals) and "bfd" (best fit
decreasing, with 33 LIFO stacks of open bins keyed by residual capacity, O(32 n)).
Sorting is stable (ties keep the lower path index first), so the assignment is
deterministic. Only the multiset of residuals drives BFD, so its bin count equals that
of the reference ``std::set`` implementation even where single assignments differ.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

WARP_SIZE = 32
PACKINGS = ("none", "nf", "ffd", "bfd")


@dataclass(frozen=True)
class Packing:
    """Result of packing paths into warps.

    Attributes
    ----------
    bin_of_path : int64 (n_paths,)
    n_bins : int
    utilisation : float
        Fraction of active lanes, sum of sizes / (32 * n_bins).
    seconds : float
    """

    bin_of_path: np.ndarray
    n_bins: int
    utilisation: float
    seconds: float


@njit(cache=True)
def _next_fit(sizes, capacity):
    bins = np.empty(len(sizes), np.int64)
    current, residual = -1, 0
    for i in range(len(sizes)):
        if current < 0 or sizes[i] > residual:
            current += 1
            residual = capacity
        bins[i] = current
        residual -= sizes[i]
    return bins


@njit(cache=True)
def _first_fit_decreasing(sizes, order, capacity):
    n = len(sizes)
    leaves = 1
    while leaves < max(n, 1):
        leaves *= 2
    tree = np.zeros(2 * leaves, np.int64)  # max residual per subtree; unopened bins = cap
    for i in range(leaves):
        tree[leaves + i] = capacity
    for i in range(leaves - 1, 0, -1):
        tree[i] = max(tree[2 * i], tree[2 * i + 1])
    bins = np.empty(n, np.int64)
    n_bins = 0
    for item in order:
        s = sizes[item]
        node = 1
        while node < leaves:  # descend to the lowest-index bin whose residual fits
            node = 2 * node if tree[2 * node] >= s else 2 * node + 1
        b = node - leaves
        bins[item] = b
        n_bins = max(n_bins, b + 1)
        tree[node] -= s
        node //= 2
        while node >= 1:
            tree[node] = max(tree[2 * node], tree[2 * node + 1])
            node //= 2
    return bins


@njit(cache=True)
def _best_fit_decreasing(sizes, order, capacity):
    n = len(sizes)
    # stacks[r] holds open bins with residual r (LIFO), as a linked list per residual.
    top = np.full(capacity + 1, -1, np.int64)
    below = np.full(n, -1, np.int64)
    residual = np.zeros(n, np.int64)
    bins = np.empty(n, np.int64)
    n_bins = 0
    for item in order:
        s = sizes[item]
        chosen = -1
        for r in range(s, capacity + 1):
            if top[r] >= 0:
                chosen = top[r]
                top[r] = below[chosen]
                break
        if chosen < 0:
            chosen = n_bins
            n_bins += 1
            residual[chosen] = capacity
        bins[item] = chosen
        residual[chosen] -= s
        r = residual[chosen]
        below[chosen] = top[r]
        top[r] = chosen
    return bins


def pack_paths(sizes, packing="bfd", capacity=WARP_SIZE):
    """Assign paths to warps.

    Parameters
    ----------
    sizes : int array (n_paths,)
        Lanes per path (distinct features + 1 for the root); each at most ``capacity``.
    packing : {"none", "nf", "ffd", "bfd"}, default="bfd"
    capacity : int, default=32

    Returns
    -------
    Packing

    Examples
    --------
    >>> from skshapley.tree import pack_paths
    >>> pack_paths([20, 12, 30, 2], "bfd").n_bins
    2
    """
    if packing not in PACKINGS:
        raise ValueError(f"The 'packing' parameter must be one of {list(PACKINGS)}; "
                         f"got {packing!r}.")
    sizes = np.asarray(sizes, np.int64)
    if sizes.size and (sizes.min() < 1 or sizes.max() > capacity):
        raise ValueError(f"path sizes must lie in [1, {capacity}]; got "
                         f"[{sizes.min()}, {sizes.max()}].")
    start = time.perf_counter()
    if packing == "none":
        bins = np.arange(len(sizes), dtype=np.int64)
    elif packing == "nf":
        bins = _next_fit(sizes, capacity)
    else:
        order = np.argsort(-sizes, kind="stable").astype(np.int64)
        kernel = _first_fit_decreasing if packing == "ffd" else _best_fit_decreasing
        bins = kernel(sizes, order, capacity)
    seconds = time.perf_counter() - start
    n_bins = int(bins.max()) + 1 if len(bins) else 0
    utilisation = float(sizes.sum() / (capacity * n_bins)) if n_bins else 1.0
    return Packing(bin_of_path=bins, n_bins=n_bins, utilisation=utilisation, seconds=seconds)
