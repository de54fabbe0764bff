"""``shapley_values``: one entry point that dispatches to an approximator by name."""

from __future__ import annotations

from skshapley.approximators._coalitions import minimum_design_budget
from skshapley.approximators._exact import MAX_EXACT_PLAYERS, exact_shapley
from skshapley.approximators._owen import owen_shapley
from skshapley.approximators._permutation import permutation_shapley
from skshapley.approximators._regression import REGRESSION_METHODS, regression_shapley
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._stratified import stratified_shapley

METHODS = ("auto", "exact", "permutation", "stratified", "owen", "owen_halved",
           *REGRESSION_METHODS)
# Accepted by the design (DESIGN.md §4.4) and built by a later issue. ("tree" is not a
# method of games: ShapleyExplainer reads the model itself, see skshapley.tree.)
PLANNED_METHODS = ()

# What "auto" picks below 2^d, measured in benchmarks/results/accuracy.md (issue 4):
# rows (largest budget per player, method), first match wins. The odd-Fourier surrogate
# was the most accurate estimator at every budget of every game measured, or tied with
# leverage-score KernelSHAP at 10 evaluations per player on 10 players; where its
# third-order terms do not pay, cross-validation drops them and it is paired KernelSHAP
# with leverage allocation. Below 2 + 2d evaluations ordering samplers take over.
AUTO_POLICY = (
    (float("inf"), "surrogate"),
)

# Largest d for which "auto" enumerates when no budget is given: 2^10 = 1024 evaluations.
AUTO_EXACT_PLAYERS = 10
# Antithetic pairs bought by the default budget for larger games.
DEFAULT_PAIRS = 32


def check_method(method: str) -> str:
    """Raise a ``ValueError`` listing the accepted values for an unknown ``method``."""
    if method in METHODS:
        return method
    if method == "tree":
        raise ValueError(
            "method='tree' reads a tree model, not a game; use "
            "ShapleyExplainer(model, method='tree') or skshapley.tree.tree_shap."
        )
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
    if method in REGRESSION_METHODS:
        return min(minimum_design_budget(d), 2**d)
    return 2 if d == 1 else 2 + unit * (d - 1)


# Orthogonal frames are picked once their standard errors rest on this many independent
# frames: with n frames a +-1.96 SE bar is a t interval with n - 1 degrees of freedom,
# which covers 70 % at 2 frames and 92 % at 10 (measured: 0.69 at 2 frames, d = 12).
MIN_ORTHOGONAL_FRAMES = 10


def resolve_sampler(sampler, n_players: int, budget: int):
    """``"auto"``: orthogonal frames when the budget buys at least
    ``MIN_ORTHOGONAL_FRAMES`` (10) whole frames of 2(d - 1) orderings, else antithetic
    pairs; any other value is returned unchanged.

    Measured in ``benchmarks/results/samplers.md``: at equal evaluations orthogonal frames
    beat antithetic pairs on make_regression and diabetes (d = 10) at every budget and tie
    on breast_cancer (d = 30). Their standard errors rest on the independent frames, so
    with few frames the error bars (+-1.96 SE, drawn as 95 %) would cover far less: "auto"
    waits for 10. Herding, SBQ and Sobol are more accurate still at large budgets, but
    their rows are dependent and their error bars are only heuristic, so "auto" does not
    pick them.
    """
    if not (isinstance(sampler, str) and sampler == "auto"):
        return sampler
    n_orders = (budget - 2) // max(n_players - 1, 1)
    frames = n_orders // max(2 * (n_players - 1), 1)
    return ("orthogonal" if n_players > 2 and frames >= MIN_ORTHOGONAL_FRAMES
            else "antithetic")


def resolve_method(method: str, n_players: int, budget: int, tol=None) -> str:
    """``"auto"``: enumerate when 2^d fits the budget (and d <= 20); else, with ``tol``,
    sample orderings (the estimator that stops early); else the regression estimator of
    :data:`AUTO_POLICY` for the budget per player, or antithetic orderings when the
    budget is below the regression's minimum 2 + 2d."""
    method = check_method(method)
    if method != "auto":
        return method
    d = n_players
    if d <= MAX_EXACT_PLAYERS and 2**d <= budget:
        return "exact"
    if tol is not None or budget < minimum_design_budget(d):
        return "permutation"
    per_player = budget / d
    return next(name for limit, name in AUTO_POLICY if per_player < limit)


def shapley_values(game, method="auto", budget=None, tol=None, random_state=None,
                   **options) -> ShapleyResult:
    """Shapley values of a game by the chosen method, within a budget.

    Parameters
    ----------
    game : Game
    method : {"auto", "exact", "permutation", "stratified", "owen", "owen_halved", \
"kernel", "leverage", "kadd", "surrogate"}
        ``"auto"`` enumerates when 2^d <= budget; otherwise see :func:`resolve_method`.
    budget : int, optional
        Coalition evaluations, v(∅) and v(N) included; default
        :func:`default_budget` (2^d for d <= 10, else 2 + 64 (d - 1)).
    tol : float, optional
        Early stop for sampling methods (§3.5).
    random_state : None, int, Generator or RandomState
    **options
        Passed to the approximator (``sampler``, ``check_interval``, ``quantile_level``
        for ``"permutation"``; ``max_players`` for ``"exact"``; ``n_runs``,
        ``quadrature`` for the Owen methods; ``order``, ``max_terms``, ``allocation``,
        ``coalition_sampler`` for the regression methods).

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
    method = resolve_method(method, game.n_players, budget, tol)
    if method == "exact":
        return exact_shapley(game, budget, **options)
    if method == "permutation":
        options["sampler"] = resolve_sampler(options.get("sampler", "auto"), game.n_players,
                                             budget)
        return permutation_shapley(game, budget, tol=tol, random_state=random_state, **options)
    if tol is not None:
        raise ValueError(f"tol is only supported by method='permutation'; got method={method!r}.")
    if method in REGRESSION_METHODS:
        return regression_shapley(game, budget, method=method, random_state=random_state,
                                  **options)
    if method == "stratified":
        return stratified_shapley(game, budget, random_state=random_state, **options)
    return owen_shapley(game, budget, halved=method == "owen_halved",
                        random_state=random_state, **options)
