"""A hierarchy of the players (a tree whose leaves are the columns) for Owen values: read
from ``groups="correlation"``, a scipy linkage matrix or a nested list."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from skshapley.utils._groups import _column_index

# The clustering ``groups="correlation"`` builds: distance 1 - |Pearson r| between two
# columns (a column and its negation are as redundant as two copies), merged by average
# linkage, which neither chains like single linkage nor splits a tight pair for one
# outlying correlation like complete linkage.
CORRELATION_LINKAGE = "average"


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A tree over ``n_leaves`` players.

    Nodes ``0 .. n_leaves - 1`` are the players (leaves); internal node
    ``n_leaves + k`` has the children ``children[k]``, and the root is the last node,
    as in a scipy linkage matrix (which has two children per node; here any number
    from two up).

    Examples
    --------
    >>> from skshapley.utils._hierarchy import Hierarchy
    >>> h = Hierarchy(3, ((0, 1), (3, 2)))  # ((x0, x1), x2)
    >>> h.enumeration_bound  # 2^2 unions at the root, 2^2 in each of 2 contexts below
    12
    >>> h.nested()
    [[0, 1], 2]
    """

    n_leaves: int
    children: tuple

    @property
    def n_nodes(self) -> int:
        return self.n_leaves + len(self.children)

    @property
    def root(self) -> int:
        return self.n_nodes - 1

    def kids(self, node: int) -> tuple:
        """The children of ``node`` (empty for a leaf)."""
        return () if node < self.n_leaves else self.children[node - self.n_leaves]

    @cached_property
    def leaf_masks(self) -> np.ndarray:
        """bool (n_nodes, n_leaves): the players below each node."""
        masks = np.zeros((self.n_nodes, self.n_leaves), dtype=bool)
        masks[np.arange(self.n_leaves), np.arange(self.n_leaves)] = True
        for k, kids in enumerate(self.children):  # children come before their parent
            masks[self.n_leaves + k] = masks[list(kids)].any(axis=0)
        return masks

    @cached_property
    def enumeration_bound(self) -> int:
        """An upper bound on the coalitions that exact enumeration evaluates (``v(∅)``
        and ``v(N)`` included; a coalition listed in several contexts counts each time:
        ``skshapley.approximators.exact_evaluations`` counts the distinct ones).

        A player's Owen value averages its marginal contribution over the subsets of
        its siblings at every level above it (each sibling bringing all of its
        players), so a node whose children hold players needs, in each of its
        contexts, all 2^m unions of its m children; a node has 2^(m_a - 1) times the
        contexts of its parent a. Balanced trees need about d^2 coalitions, a chain
        (caterpillar) 2^d, a flat tree (one level) the 2^d of Shapley values.
        """
        total, stack = 0, [(self.root, 1)]
        while stack:
            node, contexts = stack.pop()
            kids = self.kids(node)
            if any(kid < self.n_leaves for kid in kids):
                total += contexts * 2 ** len(kids)
            stack.extend((kid, contexts * 2 ** (len(kids) - 1)) for kid in kids
                         if kid >= self.n_leaves)
        return total

    def nested(self, names=None) -> list:
        """The tree as nested lists of players (of ``names[player]`` when given)."""
        def build(node):
            if node < self.n_leaves:
                return node if names is None else names[node]
            return [build(kid) for kid in self.kids(node)]
        return build(self.root)

    def to_linkage(self):
        """The tree as a scipy linkage matrix (float64 (n_leaves - 1, 4), heights the
        merge order) when every internal node has two children, else None (shap's
        ``Explanation.clustering`` holds only binary trees)."""
        if any(len(kids) != 2 for kids in self.children) or self.n_leaves < 2:
            return None
        sizes = self.leaf_masks.sum(axis=1)
        return np.array([[kids[0], kids[1], k + 1.0, sizes[self.n_leaves + k]]
                         for k, kids in enumerate(self.children)], dtype=np.float64)


def is_hierarchy(groups) -> bool:
    """Whether a ``groups`` parameter asks for Owen values over a hierarchy: the string
    "correlation", a 2-d array (a linkage matrix), or lists nested three deep; a dict or
    a list of lists of columns is a flat grouping."""
    if isinstance(groups, str) or isinstance(groups, np.ndarray):
        return True
    if not isinstance(groups, (list, tuple)):
        return False

    def depth(item):
        if isinstance(item, (list, tuple)):
            return 1 + max((depth(x) for x in item), default=0)
        return 0

    return depth(groups) >= 3


def from_linkage(linkage, n_leaves: int, caller: str = "ShapleyExplainer") -> Hierarchy:
    """The binary tree of a scipy linkage matrix over ``n_leaves`` columns."""
    from scipy.cluster.hierarchy import is_valid_linkage

    Z = np.asarray(linkage)
    if Z.ndim != 2 or Z.shape[1] != 4 or Z.shape[0] != n_leaves - 1:
        raise ValueError(
            f"The 'groups' parameter of {caller} is a linkage matrix of shape {Z.shape}, "
            f"but X has {n_leaves} columns: a linkage over them has shape "
            f"({n_leaves - 1}, 4) (scipy.cluster.hierarchy.linkage of the columns)."
        )
    if not np.issubdtype(Z.dtype, np.number) or not is_valid_linkage(Z.astype(np.float64)):
        raise ValueError(
            f"The 'groups' parameter of {caller} is not a valid scipy linkage matrix "
            "(scipy.cluster.hierarchy.is_valid_linkage is False: each row must merge two "
            "earlier clusters, with a count of their columns)."
        )
    children = tuple((int(a), int(b)) for a, b in Z[:, :2])
    return Hierarchy(n_leaves, children)


def correlation_linkage(X) -> np.ndarray:
    """The linkage of ``groups="correlation"``: average linkage of 1 - |Pearson r|
    between the columns of ``X`` (NaN filled with the column's mean; a constant column
    is at distance 1 from all)."""
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    X = np.asarray(X, dtype=np.float64)
    means = np.nanmean(np.where(np.isfinite(X), X, np.nan), axis=0)
    filled = np.where(np.isnan(X), np.nan_to_num(means), X)
    centred = filled - filled.mean(axis=0)
    scale = np.sqrt((centred**2).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (centred.T @ centred) / np.outer(scale, scale)
    distance = 1.0 - np.abs(np.nan_to_num(r, nan=0.0))
    np.fill_diagonal(distance, 0.0)
    distance = np.clip((distance + distance.T) / 2, 0.0, 1.0)
    return linkage(squareform(distance, checks=False), method=CORRELATION_LINKAGE)


def from_nested(nested, names, *, has_names=True, caller="ShapleyExplainer") -> Hierarchy:
    """The tree of nested lists whose leaves are columns (names or positions); a list
    of one item is that item."""
    names = [str(name) for name in names]
    children, owner = [], {}

    def build(item, where):
        if isinstance(item, (list, tuple)):
            if not item:
                raise ValueError(
                    f"The 'groups' parameter of {caller} has an empty list at {where}; "
                    "every node of the hierarchy needs at least one column."
                )
            kids = [build(x, f"{where}[{i}]") for i, x in enumerate(item)]
            if len(kids) == 1:
                return kids[0]
            children.append(tuple(kids))
            return -len(children)  # internal nodes numbered after the leaves below
        j = _column_index(item, names, has_names, where, caller)
        if j in owner:
            raise ValueError(
                f"The 'groups' parameter of {caller} puts the column {names[j]!r} at "
                f"{owner[j]} and at {where}; each column is one leaf of the hierarchy."
            )
        owner[j] = where
        return j

    root = build(nested, "groups")
    left_out = [names[j] for j in range(len(names)) if j not in owner]
    if left_out:
        raise ValueError(
            f"The 'groups' parameter of {caller} leaves the columns {left_out} out of the "
            "hierarchy; every column must be one of its leaves."
        )
    if root >= 0:  # one column
        return Hierarchy(len(names), ())
    n = len(names)
    # internal node -k (the k-th built) is node n + k - 1 of the Hierarchy
    return Hierarchy(n, tuple(tuple(kid if kid >= 0 else n - kid - 1 for kid in kids)
                              for kids in children))


def check_hierarchy(groups, X, names, *, has_names=True, caller="ShapleyExplainer"):
    """Read a hierarchical ``groups`` parameter (see :func:`is_hierarchy`) over the
    columns of ``X``; a :class:`Hierarchy`.

    Raises
    ------
    ValueError
        For a string other than "correlation", a linkage of the wrong size or an
        invalid one, and nested lists naming an unknown column, a column twice, an empty
        list or leaving a column out (each named).
    """
    n = len(names)
    if isinstance(groups, str):
        if groups != "correlation":
            raise ValueError(
                f"The 'groups' parameter of {caller} as a string must be 'correlation' "
                f"(a hierarchy clustered from the columns' correlations); got {groups!r}."
            )
        return (Hierarchy(n, ()) if n == 1
                else from_linkage(correlation_linkage(X), n, caller))
    if isinstance(groups, np.ndarray):
        if n == 1 and groups.size == 0:
            return Hierarchy(1, ())
        return from_linkage(groups, n, caller)
    return from_nested(groups, names, has_names=has_names, caller=caller)
