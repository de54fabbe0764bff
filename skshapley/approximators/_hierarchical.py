"""Owen values over a hierarchy of the players: exact enumeration when it fits the
budget, else orderings consistent with the hierarchy sampled in antithetic pairs.

Owen (1977) values a game whose players come in a coalition structure; Winter (1989)
extended them to nested levels. Player i's value is the mean of its marginal
contribution over the orderings in which the players below every node of the hierarchy
come together, each such ordering equally likely. It differs from the Shapley value
(which averages over all orderings) unless the hierarchy is flat: groups of correlated
columns share credit among themselves first. shap's PartitionExplainer computes this
quantity over a binary clustering.
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from scipy.special import gammaln

from skshapley.approximators._common import as_matrix, scalar_or_array, squeeze_outputs
from skshapley.approximators._exact import all_coalitions
from skshapley.approximators._permutation import (
    _permutation_cost,
    minimum_budget,
    permutation_shapley,
)
from skshapley.approximators._records import MethodCost, MethodRecord
from skshapley.approximators._result import ShapleyResult
from skshapley.permutations import HierarchicalOrderings
from skshapley.utils import (
    RANDOM_STATE,
    HasMethods,
    Hierarchy,
    NumberInterval,
    check_hierarchy,
    validate_params,
)

# Largest enumeration run on request (method="exact"): as many coalitions as exact
# Shapley values of 20 players.
MAX_EXACT_EVALUATIONS = 2**20


def _sibling_weights(m: int) -> np.ndarray:
    """Probability that exactly the siblings T (|T| = s, of m - 1) come before a child
    when m children are ordered uniformly: s! (m - 1 - s)! / m!, for s = 0 .. m - 1."""
    s = np.arange(m)
    return np.exp(gammaln(s + 1) + gammaln(m - s) - gammaln(m + 1))


def _enumeration_tasks(hierarchy):
    """For every node with players among its children: its contexts (the coalitions its
    ancestors' earlier siblings make, as bool rows) and their probabilities."""
    p = hierarchy.n_leaves
    leaf_masks = hierarchy.leaf_masks
    tasks = []
    stack = [(hierarchy.root, np.zeros((1, p), dtype=bool), np.ones(1))]
    while stack:
        node, contexts, weights = stack.pop()
        kids = np.asarray(hierarchy.kids(node))
        m = kids.size
        subsets = all_coalitions(m)  # row s: the children in bitmask s
        unions = (subsets.astype(np.uint8) @ leaf_masks[kids].astype(np.uint8)) > 0
        if (kids < p).any():
            tasks.append((node, kids, contexts, weights, unions))
        # (the subset of all m children never precedes one of them: weight 0)
        omega = np.append(_sibling_weights(m), 0.0)[subsets.sum(axis=1)]
        for k in np.flatnonzero(kids >= p):
            before = ~subsets[:, k]  # the subsets of the other children
            stack.append((
                int(kids[k]),
                (contexts[:, None, :] | unions[before][None, :, :]).reshape(-1, p),
                (weights[:, None] * omega[before][None, :]).ravel(),
            ))
    return tasks


def _distinct_coalitions(p, tasks):
    """The distinct coalitions of an enumeration, bit-packed (m, ceil(p / 8)), and the
    row of each coalition it lists (∅ and N first, then each task's contexts x unions)."""
    ends = np.zeros((2, p), dtype=bool)
    ends[1] = True
    # packed task by task: a thousand columns are 125 bytes a coalition, not 1000
    packed = [np.packbits(ends, axis=1)] + [
        np.packbits((contexts[:, None, :] | unions[None, :, :]).reshape(-1, p), axis=1)
        for _, _, contexts, _, unions in tasks]
    unique, inverse = np.unique(np.concatenate(packed, axis=0), axis=0, return_inverse=True)
    return unique, inverse.reshape(-1)


def exact_evaluations(hierarchy) -> int:
    """Coalition evaluations of exact enumeration over ``hierarchy``: the distinct
    coalitions it lists (counted by listing them when the hierarchy's bound is at most
    ``MAX_EXACT_EVALUATIONS``), else that bound capped at 2^d.

    Examples
    --------
    >>> from skshapley.utils import Hierarchy
    >>> h = Hierarchy(3, ((0, 1), (3, 2)))
    >>> h.exact_evaluations, exact_evaluations(h)  # the bound counts ∅ and N twice
    (12, 8)
    """
    p = hierarchy.n_leaves
    bound = min(hierarchy.exact_evaluations, 2**p)
    if p == 1 or hierarchy.exact_evaluations > MAX_EXACT_EVALUATIONS:
        return max(bound, 2)
    return int(_distinct_coalitions(p, _enumeration_tasks(hierarchy))[0].shape[0])


def exact_owen_values(game, hierarchy) -> ShapleyResult:
    """Exact Owen values of ``game`` over ``hierarchy`` by enumeration.

    Each distinct coalition is evaluated once; there are at most
    ``hierarchy.exact_evaluations`` (about d^2 for a balanced binary tree).

    Examples
    --------
    >>> from skshapley.games import UnanimityGame
    >>> game = UnanimityGame([[1, 1, 1]])  # v(S) = 1 when S holds all three
    >>> exact_owen_values(game, Hierarchy(3, ((0, 1), (3, 2)))).values
    array([0.25, 0.25, 0.5 ])
    """
    p = hierarchy.n_leaves
    if p != game.n_players:
        raise ValueError(
            f"The hierarchy has {p} players; the game has {game.n_players}."
        )
    start = game.n_evaluations
    tasks = _enumeration_tasks(hierarchy) if p > 1 else []
    unique, inverse = _distinct_coalitions(p, tasks)
    values = as_matrix(game.values(np.unpackbits(unique, axis=1, count=p).astype(bool)))
    values = values[inverse]
    empty, grand = values[0], values[1]
    phi = np.zeros((p, values.shape[1]))
    if p == 1:
        phi[0] = grand - empty
    offset = 2
    for _, kids, contexts, weights, _unions in tasks:
        m = kids.size
        block = values[offset : offset + contexts.shape[0] * 2**m]
        block = block.reshape(contexts.shape[0], 2**m, -1)
        offset += contexts.shape[0] * 2**m
        subsets = np.arange(2**m)
        omega = np.append(_sibling_weights(m), 0.0)[all_coalitions(m).sum(axis=1)]
        for k in np.flatnonzero(kids < p):
            without = subsets[(subsets >> k) & 1 == 0]
            gains = block[:, without | (1 << k)] - block[:, without]  # (contexts, T, k)
            phi[kids[k]] = np.einsum("c,t,cto->o", weights, omega[without], gains)
    phi = squeeze_outputs(phi, game)
    return ShapleyResult(
        values=phi, std_errors=np.zeros_like(phi),
        error_quantile=scalar_or_array(np.zeros(values.shape[1]), game),
        n_evaluations=game.n_evaluations - start, converged=True, method="hierarchical",
        empty_value=scalar_or_array(empty, game), grand_value=scalar_or_array(grand, game),
    )


@validate_params(
    {
        "game": [HasMethods(["values"])],
        "hierarchy": [list, tuple, np.ndarray, Hierarchy],
        "budget": [NumberInterval(Integral, 1, None, closed="left"), None],
        "exact": ["boolean", None],
        "tol": [NumberInterval(Real, 0, None, closed="neither"), None],
        "quantile_level": [NumberInterval(Real, 0, 1, closed="neither")],
        "random_state": RANDOM_STATE,
    },
    # the game may fit the user's estimators (RefitGame): their checks stay on
    prefer_skip_nested_validation=False,
)
def owen_values(game, hierarchy, budget=None, *, exact=None, tol=None,
                quantile_level=0.95, random_state=None) -> ShapleyResult:
    """Owen values of ``game`` over a hierarchy of its players.

    Exact enumeration when it needs at most ``budget`` coalitions
    (``hierarchy.exact_evaluations``), else the mean marginal contribution over
    orderings consistent with the hierarchy, drawn in antithetic pairs, with the
    permutation estimator's standard errors, t intervals and ``tol`` stopping (see
    :func:`~skshapley.approximators.permutation_shapley`). Every ordering's
    contributions add up to v(N) - v(∅), so efficiency holds exactly either way.

    Parameters
    ----------
    game : Game
    hierarchy : list, ndarray or Hierarchy
        The tree whose leaves are the game's players: lists nested three deep of player
        positions (``[[[0, 1], 2], [3, 4]]``), a scipy linkage matrix over the players,
        or a :class:`skshapley.utils.Hierarchy`.
    budget : int, optional
        Coalition evaluations; None: enumerate.
    exact : bool, optional
        True: enumerate (a ``ValueError`` when that needs more than ``budget``); False:
        sample; None: enumerate when that fits in ``budget``.
    tol, quantile_level, random_state
        As in :func:`~skshapley.approximators.permutation_shapley`.

    Returns
    -------
    ShapleyResult
        ``method="hierarchical"``.

    Examples
    --------
    >>> from skshapley.games import UnanimityGame
    >>> game = UnanimityGame([[1, 1, 1]])
    >>> owen_values(game, [[[0, 1]], [[2]]], budget=100, exact=False,
    ...             random_state=0).values
    array([0.25, 0.25, 0.5 ])
    """
    if not isinstance(hierarchy, Hierarchy):
        hierarchy = check_hierarchy(hierarchy, None,
                                    [str(j) for j in range(game.n_players)],
                                    has_names=False, caller="owen_values")
    need = exact_evaluations(hierarchy)
    if exact is None:
        exact = budget is None or need <= budget
    if exact:
        if budget is not None and need > budget:
            raise ValueError(
                f"budget={budget} is too small for exact Owen values over this hierarchy: "
                f"enumeration needs {need} coalition evaluations; increase the budget or "
                "sample (exact=False)."
            )
        if need > MAX_EXACT_EVALUATIONS:
            raise ValueError(
                f"Exact Owen values over this hierarchy need {need} coalition evaluations, "
                f"above the limit of {MAX_EXACT_EVALUATIONS}; sample them instead."
            )
        return exact_owen_values(game, hierarchy)
    if budget is None:
        raise ValueError("Sampled Owen values need a budget; got budget=None.")
    result = permutation_shapley(
        game, budget, sampler=HierarchicalOrderings(hierarchy, rng=random_state),
        tol=tol, quantile_level=quantile_level, random_state=random_state)
    return replace(result, method="hierarchical")


def _hierarchical_cost(n_players, budget, n_outputs):
    # enumeration holds its masks and values at once; sampling streams like permutations
    sampled = _permutation_cost(n_players, budget, n_outputs)
    enumerated = budget * (n_players + 8.0 * n_outputs)
    return MethodCost(memory_bytes=min(sampled.memory_bytes, enumerated),
                      flops=sampled.flops)


HIERARCHICAL = MethodRecord(
    name="hierarchical",
    run=lambda game, budget, *, tol=None, random_state=None, **options: owen_values(
        game, options.pop("hierarchy"), budget, tol=tol, random_state=random_state,
        **options),
    minimum_budget=lambda n_players, unit=2: minimum_budget(n_players, 2),
    cost=_hierarchical_cost,
    takes_tol=True,
    streams=True,
)
