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

import numpy as np

from skshapley.approximators._common import as_matrix, scalar_or_array, squeeze_outputs
from skshapley.approximators._constraints import (
    BUDGET,
    GAME,
    QUANTILE_LEVEL,
    TOL,
    validate_game_params,
)
from skshapley.approximators._owen_enumeration import (
    MAX_EXACT_EVALUATIONS,
    exact_evaluations,
    owen_enumeration,
)
from skshapley.approximators._permutation import (
    _permutation_cost,
    minimum_budget,
    permutation_shapley,
)
from skshapley.approximators._records import MethodCost, MethodRecord, held_coalitions_cost
from skshapley.approximators._result import ShapleyResult
from skshapley.permutations import HierarchicalOrderings
from skshapley.utils import (
    RANDOM_STATE,
    Hierarchy,
    check_hierarchy,
)


def exact_owen_values(game, hierarchy) -> ShapleyResult:
    """Exact Owen values of ``game`` over ``hierarchy`` by enumeration.

    Each distinct coalition is evaluated once: ``exact_evaluations(hierarchy)``, at most
    ``hierarchy.enumeration_bound`` (about d^2 for a balanced binary tree).

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
    enumeration = owen_enumeration(hierarchy)
    values = as_matrix(game.values(
        np.unpackbits(enumeration.coalitions, axis=1, count=p).astype(bool)))
    values = values[enumeration.rows]
    empty, grand = values[0], values[1]
    phi = np.zeros((p, values.shape[1]))
    if p == 1:
        phi[0] = grand - empty
    offset = 2
    for task in enumeration.tasks:
        kids, weights, omega = task.kids, task.weights, task.omega
        m = kids.size
        block = values[offset : offset + weights.size * 2**m]
        block = block.reshape(weights.size, 2**m, -1)
        offset += weights.size * 2**m
        subsets = np.arange(2**m)
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


@validate_game_params(
    {
        "game": GAME,
        "hierarchy": [list, tuple, np.ndarray, Hierarchy],
        "budget": [*BUDGET, None],
        "exact": ["boolean", None],
        "tol": TOL,
        "quantile_level": QUANTILE_LEVEL,
        "random_state": RANDOM_STATE,
    },
)
def owen_values(game, hierarchy, budget=None, *, exact=None, tol=None,
                quantile_level=0.95, random_state=None) -> ShapleyResult:
    """Owen values of ``game`` over a hierarchy of its players.

    Exact enumeration when it needs at most ``budget`` coalitions
    (:func:`exact_evaluations`), else the mean marginal contribution over
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
    enumerated = held_coalitions_cost(n_players, budget, n_outputs).memory_bytes
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
