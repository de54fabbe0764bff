"""``shapley_values``: one entry point that dispatches to an approximator by name."""

from __future__ import annotations

from skshapley.approximators._exact import MAX_EXACT_PLAYERS, exact_shapley
from skshapley.approximators._owen import owen_shapley
from skshapley.approximators._permutation import permutation_shapley
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._stratified import stratified_shapley

METHODS = ("auto", "exact", "permutation", "stratified", "owen", "owen_halved")
# Accepted by the design (DESIGN.md §4.4) and built by later issues.
PLANNED_METHODS = ("kernel", "kadd", "leverage", "tree")

# Largest d for which "auto" enumerates when no budget is given: 2^10 = 1024 evaluations.
AUTO_EXACT_PLAYERS = 10
# Antithetic pairs bought by the default budget for larger games.
DEFAULT_PAIRS = 32


def check_method(method: str) -> str:
    """Raise a ``ValueError`` listing the accepted values for an unknown ``method``."""
    if method in METHODS:
        return method
    if method in PLANNED_METHODS:
        raise ValueError(
            f"method={method!r} is not available yet; the accepted values are "
            f"{list(METHODS)}."
        )
    raise ValueError(f"The 'method' parameter must be one of {list(METHODS)}; got {method!r}.")


def default_budget(n_players: int) -> int:
    """The documented default budget: 2^d for d <= 10 (exact), else 2 + 64 (d - 1)
    (32 antithetic pairs of orderings)."""
    if n_players <= AUTO_EXACT_PLAYERS:
        return 2**n_players
    return 2 + 2 * DEFAULT_PAIRS * (n_players - 1)


def method_minimum_budget(method: str, n_players: int, unit: int = 2) -> int:
    """Smallest budget each sampling method accepts (the approximators' own checks)."""
    d = n_players
    if method == "exact":
        return 2**d
    if method == "stratified":
        return 2 + (2 * d if d >= 2 else 0) + 4 * d * max(d - 2, 0)
    if method in ("owen", "owen_halved"):
        return 2 + 4 * (d + 1)
    return 2 if d == 1 else 2 + unit * (d - 1)


def resolve_sampler(sampler, n_players: int, budget: int):
    """``"auto"``: orthogonal frames when the budget buys at least two whole frames of
    2(d - 1) orderings, else antithetic pairs; any other value is returned unchanged.

    Measured in ``benchmarks/results/samplers.md``: at equal evaluations orthogonal frames
    beat antithetic pairs on make_regression and diabetes (d = 10) at every budget and tie
    on breast_cancer (d = 30); with two or more frames their standard errors rest on
    independent frames, so the error bars stay honest. Herding, SBQ and Sobol are more
    accurate still at large budgets, but their rows are dependent and their error bars are
    only heuristic, so "auto" does not pick them.
    """
    if not (isinstance(sampler, str) and sampler == "auto"):
        return sampler
    n_orders = (budget - 2) // max(n_players - 1, 1)
    return "orthogonal" if n_players > 2 and n_orders >= 4 * (n_players - 1) else "antithetic"


def resolve_method(method: str, n_players: int, budget: int) -> str:
    """``"auto"``: enumerate when 2^d fits the budget (and d <= 20), else sample orderings."""
    method = check_method(method)
    if method != "auto":
        return method
    if n_players <= MAX_EXACT_PLAYERS and 2**n_players <= budget:
        return "exact"
    return "permutation"


def shapley_values(game, method="auto", budget=None, tol=None, random_state=None,
                   **options) -> ShapleyResult:
    """Shapley values of a game by the chosen method, within a budget.

    Parameters
    ----------
    game : Game
    method : {"auto", "exact", "permutation", "stratified", "owen", "owen_halved"}
        ``"auto"`` enumerates when 2^d <= budget, else samples antithetic orderings.
    budget : int, optional
        Coalition evaluations, v(∅) and v(N) included; default
        :func:`default_budget` (2^d for d <= 10, else 2 + 64 (d - 1)).
    tol : float, optional
        Early stop for sampling methods (§3.5).
    random_state : None, int, Generator or RandomState
    **options
        Passed to the approximator (``sampler``, ``check_interval``, ``quantile_level``
        for ``"permutation"``; ``max_players`` for ``"exact"``; ``n_runs``,
        ``quadrature`` for the Owen methods).

    Returns
    -------
    ShapleyResult

    Examples
    --------
    >>> from skshapley.games import UnanimityGame
    >>> from skshapley.approximators import shapley_values
    >>> shapley_values(UnanimityGame([[1, 1, 0]])).values
    array([0.5, 0.5, 0. ])
    """
    if budget is None:
        budget = default_budget(game.n_players)
    method = resolve_method(method, game.n_players, budget)
    if method == "exact":
        return exact_shapley(game, budget, **options)
    if method == "permutation":
        options["sampler"] = resolve_sampler(options.get("sampler", "auto"), game.n_players,
                                             budget)
        return permutation_shapley(game, budget, tol=tol, random_state=random_state, **options)
    if tol is not None:
        raise ValueError(f"tol is only supported by method='permutation'; got method={method!r}.")
    if method == "stratified":
        return stratified_shapley(game, budget, random_state=random_state, **options)
    return owen_shapley(game, budget, halved=method == "owen_halved",
                        random_state=random_state, **options)
