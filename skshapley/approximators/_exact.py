"""Exact Shapley values by enumerating all 2^d coalitions."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skshapley.approximators._common import as_matrix, scalar_or_array, squeeze_outputs
from skshapley.approximators._constraints import BUDGET, GAME, validate_game_params
from skshapley.approximators._records import MethodCost, MethodRecord
from skshapley.approximators._result import ShapleyResult
from skshapley.backends import get_backend
from skshapley.utils import NumberInterval, validate_params

MAX_EXACT_PLAYERS = 20


@validate_params({"n_players": [NumberInterval(Integral, 0, None, closed="left")]},
                 prefer_skip_nested_validation=True)
def all_coalitions(n_players: int) -> np.ndarray:
    """Bool (2^d, d) masks; row s is the coalition with bitmask s (bit j = player j)."""
    masks = np.arange(2**n_players, dtype=np.int64)
    return ((masks[:, None] >> np.arange(n_players)) & 1).astype(bool)


@validate_game_params(
    {
        "game": GAME,
        "budget": [*BUDGET, None],  # at least 2^d, checked against the game below
        "max_players": [NumberInterval(Integral, 0, None, closed="left")],
    },
)
def exact_shapley(game, budget=None, *, max_players=MAX_EXACT_PLAYERS) -> ShapleyResult:
    """Exact Shapley values of ``game`` by enumeration.

    Parameters
    ----------
    game : Game
    budget : int, optional
        If given, must be at least 2^d (the cost of enumeration).
    max_players : int, default=20
        Refuse larger games: 2^20 coalitions times the background size is already 10^8
        model rows. Raise it to force enumeration.

    Returns
    -------
    ShapleyResult
        ``std_errors`` and ``error_quantile`` are 0.

    Examples
    --------
    >>> from skshapley.games import UnanimityGame
    >>> from skshapley.approximators import exact_shapley
    >>> exact_shapley(UnanimityGame([[1, 1, 0, 1]])).values
    array([0.33333333, 0.33333333, 0.        , 0.33333333])
    """
    d = game.n_players
    if d > max_players:
        raise ValueError(
            f"method='exact' needs 2**{d} = {2**d} coalition evaluations for n_players={d}, "
            f"above the limit of {max_players} players; use method='permutation' or pass "
            f"max_players={d} to force enumeration."
        )
    if budget is not None and budget < 2**d:
        raise ValueError(
            f"budget={budget} is too small for method='exact' with n_players={d}: "
            f"enumeration needs 2**{d} = {2**d} evaluations; increase budget or use "
            "method='permutation'."
        )
    start = game.n_evaluations
    values = np.ascontiguousarray(as_matrix(game.values(all_coalitions(d))))
    phi = np.empty((d, values.shape[1]), dtype=np.float64)
    get_backend().exact_shapley_from_values(values, d, phi)
    phi = squeeze_outputs(phi, game)
    zero = scalar_or_array(np.zeros(values.shape[1]), game)
    return ShapleyResult(
        values=phi,
        std_errors=np.zeros_like(phi),
        error_quantile=zero,
        n_evaluations=game.n_evaluations - start,
        converged=True,
        method="exact",
        empty_value=scalar_or_array(values[0], game),
        grand_value=scalar_or_array(values[-1], game),
    )


def _exact_cost(n_players, budget, n_outputs):
    coalitions = 2.0**n_players
    return MethodCost(memory_bytes=coalitions * (n_players + 8 * n_outputs),
                      flops=2 * coalitions * n_players * n_outputs)


EXACT = MethodRecord(
    name="exact",
    run=lambda game, budget, *, tol=None, random_state=None, **options: exact_shapley(
        game, budget, **options),
    minimum_budget=lambda n_players, unit=1: 2**n_players,
    cost=_exact_cost,
    exact=True,
)
