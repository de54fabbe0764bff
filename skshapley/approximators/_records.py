"""What each approximator declares about itself, in one record beside its function.

``shapley_values``, the explainer's plan, ``Explanation`` and the command line read these
records instead of keeping their own lists of minimum budgets, exact methods or methods
that take ``tol``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple


class MethodCost(NamedTuple):
    """Predicted cost of one run, beyond the game's own evaluations.

    Attributes
    ----------
    memory_bytes : float
        Peak memory of the design and work arrays held at once.
    flops : float
        Floating-point operations of the estimator itself (designs, fits, error
        estimates), for all outputs.
    """

    memory_bytes: float
    flops: float


def held_coalitions_cost(n_players, budget, n_outputs) -> MethodCost:
    """The cost of an estimator that holds all its coalitions at once, a bool row and
    ``n_outputs`` float64 values each, and does O(d k) work per coalition (Owen sampling,
    stratified sampling, and enumeration over a hierarchy)."""
    return MethodCost(memory_bytes=budget * (n_players + 8.0 * n_outputs),
                      flops=8.0 * budget * n_players * n_outputs)


@dataclass(frozen=True)
class MethodRecord:
    """One approximator, as the rest of the library sees it.

    Attributes
    ----------
    name : str
        The ``method`` value that selects it.
    run : callable
        ``run(game, budget, *, tol, random_state, **options) -> ShapleyResult``.
    minimum_budget : callable
        ``minimum_budget(n_players, unit) -> int``: the smallest budget it accepts
        (``unit``: orderings per independent block of the permutation sampler).
    cost : callable
        ``cost(n_players, budget, n_outputs) -> MethodCost``.
    exact : bool
        Whether its values are exact (no standard errors).
    takes_tol : bool
        Whether it stops early at ``tol``.
    shares_game : bool
        Whether several explained rows can be stacked into one game (same coalitions
        for every row); False when the design depends on the values of the row.
    streams : bool
        Whether its memory stays within ``working_memory`` at any budget (it works
        through the budget in chunks); otherwise ``cost(...).memory_bytes`` must fit.
    uses_sampler : bool
        Whether it takes an ordering ``sampler``.
    """

    name: str
    run: Callable
    minimum_budget: Callable[[int, int], int]
    cost: Callable[[int, int, int], MethodCost]
    exact: bool = False
    takes_tol: bool = False
    shares_game: bool = True
    streams: bool = False
    uses_sampler: bool = False
