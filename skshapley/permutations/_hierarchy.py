"""Orderings consistent with a hierarchy of the players, for Owen values (Owen 1977;
Winter 1989 for nested levels)."""

from __future__ import annotations

import numpy as np

from skshapley.permutations._mc import Antithetic


def hierarchical_orders(hierarchy, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniform orderings among those consistent with ``hierarchy``.

    An ordering is consistent when the players below every node come one after the
    other; a uniform one orders the children of every node uniformly at random, on its
    own. Each node's first position is its parent's plus the sizes of the siblings
    drawn before it, so the positions cost O(n x nodes) and no ordering is built by
    recursion.

    Returns
    -------
    orders : int64 (n, n_leaves)
    """
    p = hierarchy.n_leaves
    sizes = hierarchy.leaf_masks.sum(axis=1)
    start = np.zeros((n, hierarchy.n_nodes), dtype=np.int64)
    for k in range(len(hierarchy.children) - 1, -1, -1):  # the root first
        node, kids = p + k, np.asarray(hierarchy.children[k])
        slots = np.argsort(rng.random((n, kids.size)), axis=1)  # kid at each slot
        placed = sizes[kids][slots]
        first = start[:, node, None] + np.cumsum(placed, axis=1) - placed
        start[np.arange(n)[:, None], kids[slots]] = first
    return np.argsort(start[:, :p], axis=1, kind="stable").astype(np.int64)


class HierarchicalOrderings(Antithetic):
    """Antithetic pairs of orderings consistent with a hierarchy of the players.

    The reverse of a consistent ordering is consistent and as likely, so pairs
    (pi, reversed pi) keep the estimate unbiased for the Owen values, and a player's
    contributions early and late in the hierarchy's order are negatively correlated
    (Mitchell, Cooper, Frank & Holmes 2022, Sec. 2.4, for uniform orderings).

    Parameters
    ----------
    hierarchy : skshapley.utils._hierarchy.Hierarchy
    rng : None, int, Generator, RandomState or SeedSequence

    Examples
    --------
    >>> from skshapley.permutations._hierarchy import HierarchicalOrderings
    >>> from skshapley.utils._hierarchy import Hierarchy
    >>> orders = HierarchicalOrderings(Hierarchy(3, ((0, 1), (3, 2))), rng=0).random(4)
    >>> all(abs(list(o).index(0) - list(o).index(1)) == 1 for o in orders)
    True
    """

    def __init__(self, hierarchy, *, rng=None):
        super().__init__(hierarchy.n_leaves, rng=rng)
        self.hierarchy = hierarchy

    def _forward(self, n_pairs):
        return hierarchical_orders(self.hierarchy, self.rng, n_pairs)
