"""The coalitions that exact Owen values over a hierarchy evaluate, listed once per
hierarchy: the plan counts them at fit and every game's enumeration reads the same list.

Owen (1977) and Winter (1989): player i's value averages its marginal contribution over
the orderings that keep the players below every node together, so a node whose children
hold players needs, in each context its ancestors make, all 2^m unions of its m children.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from skshapley.approximators._exact import all_coalitions

# Largest enumeration run on request (method="exact"): as many coalitions as exact
# Shapley values of 20 players.
MAX_EXACT_EVALUATIONS = 2**20


def sibling_weights(m: int) -> np.ndarray:
    """Probability that exactly the siblings T (|T| = s, of m - 1) come before a child
    when m children are ordered uniformly: s! (m - 1 - s)! / m!, for s = 0 .. m - 1."""
    s = np.arange(m)
    return np.exp(gammaln(s + 1) + gammaln(m - s) - gammaln(m + 1))


@dataclass(frozen=True)
class OwenTask:
    """One node with players among its children, in every context of its ancestors.

    Attributes
    ----------
    kids : int ndarray (m,)
        The node's children.
    weights : float64 ndarray (n_contexts,)
        Probability of each context (the coalition its ancestors' earlier siblings make).
    omega : float64 ndarray (2^m,)
        Probability that exactly the children in bitmask s come before a child outside s
        (0 for the subset of all m children, which never precedes one of them).
    """

    kids: np.ndarray
    weights: np.ndarray
    omega: np.ndarray


@dataclass(frozen=True, eq=False)
class OwenEnumeration:
    """The coalitions of exact Owen values over one hierarchy.

    Attributes
    ----------
    tasks : tuple of OwenTask
    coalitions : uint8 ndarray (n_evaluations, ceil(p / 8))
        The distinct coalitions, bit-packed (a thousand columns are 125 bytes a
        coalition, not 1000).
    rows : int ndarray
        The row of ``coalitions`` of each coalition listed: ∅ and N first, then each
        task's contexts x the 2^m unions of its children.
    """

    tasks: tuple
    coalitions: np.ndarray
    rows: np.ndarray

    @property
    def n_evaluations(self) -> int:
        return int(self.coalitions.shape[0])


def _enumerate(hierarchy) -> OwenEnumeration:
    p = hierarchy.n_leaves
    leaf_masks = hierarchy.leaf_masks
    ends = np.zeros((2, p), dtype=bool)
    ends[1] = True
    tasks, packed = [], [np.packbits(ends, axis=1)]
    stack = [(hierarchy.root, np.zeros((1, p), dtype=bool), np.ones(1))] if p > 1 else []
    while stack:
        node, contexts, weights = stack.pop()
        kids = np.asarray(hierarchy.kids(node))
        m = kids.size
        subsets = all_coalitions(m)  # row s: the children in bitmask s
        unions = (subsets.astype(np.uint8) @ leaf_masks[kids].astype(np.uint8)) > 0
        omega = np.append(sibling_weights(m), 0.0)[subsets.sum(axis=1)]
        if (kids < p).any():
            tasks.append(OwenTask(kids, weights, omega))
            packed.append(np.packbits((contexts[:, None, :] | unions[None, :, :])
                                      .reshape(-1, p), axis=1))
        for k in np.flatnonzero(kids >= p):
            before = ~subsets[:, k]  # the subsets of the other children
            stack.append((
                int(kids[k]),
                (contexts[:, None, :] | unions[before][None, :, :]).reshape(-1, p),
                (weights[:, None] * omega[before][None, :]).ravel(),
            ))
    unique, inverse = np.unique(np.concatenate(packed, axis=0), axis=0, return_inverse=True)
    return OwenEnumeration(tuple(tasks), unique, inverse.reshape(-1))


# One enumeration per hierarchy object, dropped with it: the explainer's plan and every
# game it plays share the hierarchy, so the list is built once per fit, not per row.
_ENUMERATIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def owen_enumeration(hierarchy) -> OwenEnumeration:
    """The coalitions exact Owen values over ``hierarchy`` evaluate (built on first use,
    then the same object for as long as ``hierarchy`` lives)."""
    enumeration = _ENUMERATIONS.get(hierarchy)
    if enumeration is None:
        enumeration = _ENUMERATIONS[hierarchy] = _enumerate(hierarchy)
    return enumeration


def exact_evaluations(hierarchy) -> int:
    """Coalition evaluations of exact enumeration over ``hierarchy``: the distinct
    coalitions it lists (counted by listing them when the hierarchy's
    ``enumeration_bound`` is at most ``MAX_EXACT_EVALUATIONS``), else that bound capped
    at 2^d.

    Examples
    --------
    >>> from skshapley.utils import Hierarchy
    >>> h = Hierarchy(3, ((0, 1), (3, 2)))
    >>> h.enumeration_bound, exact_evaluations(h)  # the bound counts ∅ and N twice
    (12, 8)
    """
    p = hierarchy.n_leaves
    bound = min(hierarchy.enumeration_bound, 2**p)
    if p == 1 or hierarchy.enumeration_bound > MAX_EXACT_EVALUATIONS:
        return max(bound, 2)
    return owen_enumeration(hierarchy).n_evaluations
