"""``shapley_values``: one entry point that dispatches to an approximator by name."""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

from skshapley.approximators._adaptive import ADAPTIVE, ADAPTIVE_BUDGET_PER_PLAYER
from skshapley.approximators._coalitions import minimum_design_budget
from skshapley.approximators._constraints import BUDGET, GAME, TOL, validate_game_params
from skshapley.approximators._exact import EXACT, MAX_EXACT_PLAYERS
from skshapley.approximators._owen import OWEN, OWEN_HALVED
from skshapley.approximators._permutation import PERMUTATION
from skshapley.approximators._regression import (
    KADD,
    KERNEL,
    LEVERAGE,
    MAX_SURROGATE_TERMS,
    SURROGATE,
    surrogate_cost,
)
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._stratified import STRATIFIED
from skshapley.approximators._svarm import SVARM
from skshapley.utils import (
    RANDOM_STATE,
    Hidden,
    NumberInterval,
    StrOptions,
    get_working_memory,
    validate_params,
)

# Every approximator's record (see ``_records.MethodRecord``), by method name.
METHOD_RECORDS = {record.name: record for record in (
    EXACT, PERMUTATION, STRATIFIED, OWEN, OWEN_HALVED, KERNEL, LEVERAGE, KADD, SURROGATE,
    SVARM, ADAPTIVE)}
METHODS = ("auto", *METHOD_RECORDS)

# The constraints (see ``validate_params``) the functions below share.
_N_PLAYERS = [NumberInterval(Integral, 1, None, closed="left")]
_N_OUTPUTS = [NumberInterval(Integral, 1, None, closed="left")]
_WORKING_MEMORY = [NumberInterval(Real, 0, None, closed="neither"), None]
# A method whose record is read (not "auto")
_RECORDED_METHOD = [StrOptions(set(METHOD_RECORDS))]

# Largest d for which "auto" enumerates when no budget is given: 2^10 = 1024 evaluations.
AUTO_EXACT_PLAYERS = 10
# Antithetic pairs bought by the default budget for larger games.
DEFAULT_PAIRS = 32

# The unit of the estimators' cost models: their measured seconds are counted as
# operations at this rate (see _regression_cost).
OPERATIONS_PER_SECOND = 1.5e9
# A row may cost at most 1.5x its model evaluations: the estimator's own arithmetic and
# the game's work besides the model (``overhead_seconds``, assembling the model's
# input) share the extra half, of which the estimator is given half: its cost model is
# calibrated on its own (in a one-row explanation, after the model's calls, the same
# fit ran 1.3-2x slower) and the per-call Python work (0.3-0.5 ms) is counted nowhere.
# Measured (issue 27, benchmarks/results/width.md): with a 10 ms floor on the
# estimator's share ("nobody waits for less") a one-row explanation of a cheap model at
# 10 d evaluations took 1.7-2.1x its evaluations; counting the solver's work as shared
# by 16 stacked rows let a one-row call at d = 500 take 1.56x; with 0.4 of the model's
# time, the adaptive regression at d = 50 took 1.57x. The choice is now made for one
# row, with no floor.
SOLVER_TIME_SHARE = 0.25
# Cross-validation ceilings "auto" tries for the surrogate, largest first.
SURROGATE_CV_TERMS = (MAX_SURROGATE_TERMS, 150, 40)


def check_method(method: str) -> str:
    """Raise a ``ValueError`` listing the accepted values for an unknown ``method``."""
    if method in METHODS:
        return method
    if method in ("tree", "linear"):
        raise ValueError(
            f"method={method!r} reads a model, not a game; use "
            f"ShapleyExplainer(model, method={method!r})"
            + (" or skshapley.tree.tree_shap." if method == "tree" else ".")
        )
    raise ValueError(f"The 'method' parameter must be one of {list(METHODS)}; got {method!r}.")


@validate_params({"n_players": _N_PLAYERS}, prefer_skip_nested_validation=True)
def default_budget(n_players: int) -> int:
    """The documented default budget: 2^d for d <= 10 (exact), else 2 + 64 (d - 1)
    (32 antithetic pairs of orderings)."""
    if n_players <= AUTO_EXACT_PLAYERS:
        return 2**n_players
    return 2 + 2 * DEFAULT_PAIRS * (n_players - 1)


# Orthogonal frames are picked once their standard errors rest on this many independent
# frames: with n frames a +-1.96 SE bar is a t interval with n - 1 degrees of freedom,
# which covers 70 % at 2 frames and 92 % at 10 (measured: 0.69 at 2 frames, d = 12).
MIN_ORTHOGONAL_FRAMES = 10


# the sampler passes through unchecked: any value but "auto" is returned as it is, for
# the approximator to check (check_sampler)
@validate_params({"sampler": "no_validation", "n_players": _N_PLAYERS, "budget": BUDGET},
                 prefer_skip_nested_validation=True)
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


@dataclass(frozen=True)
class MethodChoice:
    """What ``method="auto"`` (or an explicit method) resolved to.

    Attributes
    ----------
    method : str
    options : dict
        Extra options for the approximator (e.g. the surrogate's ``max_cv_terms``).
    reason : str
        Why, in a sentence (empty for an explicit method).
    """

    method: str
    options: dict = field(default_factory=dict)
    reason: str = ""


def _fits(record, n_players, budget, n_outputs, working_memory, seconds_allowed,
          cost=None):
    cost = cost or record.cost(n_players, budget, n_outputs)
    if not record.streams and cost.memory_bytes > working_memory * 2**20:
        return False
    return seconds_allowed is None or cost.flops / OPERATIONS_PER_SECOND <= seconds_allowed


# The method is checked by check_method, whose message lists the choices and points
# "tree" and "linear" to the explainer.
_CHOICE_CONSTRAINTS = {
    "method": [str],
    "n_players": _N_PLAYERS,
    "budget": BUDGET,
    "tol": TOL,
    "evaluation_seconds": [NumberInterval(Real, 0, None, closed="left"), callable, None],
    "overhead_seconds": [NumberInterval(Real, 0, None, closed="left"), None],
    "n_outputs": _N_OUTPUTS,
    "working_memory": _WORKING_MEMORY,
}


@validate_params(_CHOICE_CONSTRAINTS, prefer_skip_nested_validation=True)
def choose_method(method: str, n_players: int, budget: int, tol=None, *,
                  evaluation_seconds=None, overhead_seconds=None, n_outputs: int = 1,
                  working_memory=None) -> MethodChoice:
    """Resolve ``method`` for a game of ``n_players`` and a budget.

    ``"auto"`` enumerates when 2^d fits the budget (and d <= 20); with ``tol`` it samples
    orderings (the estimator that stops early), as it does below the regression's
    minimum budget 2 + 2d. Otherwise it takes the most accurate estimator per evaluation
    (benchmarks/results/accuracy.md: the odd-Fourier surrogate, then paired KernelSHAP
    with leverage allocation, then antithetic orderings) whose own cost fits: its design
    within ``working_memory`` and, when the time of one evaluation is known (the
    explainer measures its model), its arithmetic within ``SOLVER_TIME_SHARE`` of the
    time the budget's evaluations take, less the game's own work besides the model. The
    surrogate is tried with cross-validation over up to 600, 150 and 40 third-order
    terms. So a slow model at moderate d gets the surrogate, a fast model or many
    features the leaner estimators.

    Parameters
    ----------
    method : str
    n_players : int
    budget : int
    tol : float, optional
    evaluation_seconds : float or callable, optional
        Seconds of one coalition evaluation of the whole game (all its outputs), or a
        function measuring them, called only when the choice depends on them.
    overhead_seconds : float, optional
        Seconds a coalition evaluation spends besides the model (e.g. assembling the
        model's input), taken from the estimator's share.
    n_outputs : int, default=1
    working_memory : float, optional
        MiB; default ``get_config()["working_memory"]``.

    Returns
    -------
    MethodChoice
    """
    method = check_method(method)
    if method != "auto":
        return MethodChoice(method)
    d = n_players
    if d <= MAX_EXACT_PLAYERS and 2**d <= budget:
        return MethodChoice("exact", reason=f"2^{d} coalitions fit the budget")
    if tol is not None:
        return MethodChoice("permutation", reason="tol stops sampled orderings early")
    if budget < minimum_design_budget(d):
        return MethodChoice("permutation",
                            reason=f"the budget is below the regression's 2 + 2d = "
                                   f"{minimum_design_budget(d)}")
    working_memory = get_working_memory(working_memory)
    allowed = None
    if callable(evaluation_seconds):  # measured only when the choice depends on it
        evaluation_seconds = evaluation_seconds()
    if evaluation_seconds is not None:
        allowed = budget * (SOLVER_TIME_SHARE * evaluation_seconds - (overhead_seconds or 0.0))
    for terms in SURROGATE_CV_TERMS:
        cost = surrogate_cost(d, budget, n_outputs, max_cv_terms=terms)
        if _fits(SURROGATE, d, budget, n_outputs, working_memory, allowed, cost):
            options = {} if terms == MAX_SURROGATE_TERMS else {"max_cv_terms": terms}
            return _small_budget(MethodChoice(
                "surrogate", options,
                "the surrogate's fit fits in the time the model's evaluations allow"), d, budget)
    if _fits(LEVERAGE, d, budget, n_outputs, working_memory, allowed):
        return _small_budget(MethodChoice(
            "leverage", reason="the surrogate's terms cost more than the model's time; "
                               "paired KernelSHAP does not"), d, budget)
    return MethodChoice("permutation", reason="a regression's design costs more time or "
                                              "memory than the model's evaluations")


def _small_budget(choice, d, budget):
    """At up to ``ADAPTIVE_BUDGET_PER_PLAYER`` evaluations per player, the regression
    ``choice`` becomes the adaptive estimator: the game's end points first, then
    Stratified SVARM on games of high-order interactions, else the same regression on
    a design that keeps the end points (``skshapley.approximators._adaptive``)."""
    if budget > ADAPTIVE_BUDGET_PER_PLAYER * d:
        return choice
    return MethodChoice("adaptive", {"regression": choice.method, **choice.options},
                        choice.reason + "; at this budget the game's end points choose "
                        "between it and SVARM")


# **context reaches choose_method's checks
@validate_params(_CHOICE_CONSTRAINTS, prefer_skip_nested_validation=False)
def resolve_method(method: str, n_players: int, budget: int, tol=None, **context) -> str:
    """The method name of :func:`choose_method`."""
    return choose_method(method, n_players, budget, tol, **context).method


@validate_params(
    {
        "method": _RECORDED_METHOD,
        "n_players": _N_PLAYERS,
        "n_outputs": _N_OUTPUTS,
        "working_memory": _WORKING_MEMORY,
    },
    prefer_skip_nested_validation=True,
)
def largest_budget_in_memory(method: str, n_players: int, n_outputs: int = 1,
                             working_memory=None) -> int | None:
    """The largest budget whose design fits ``working_memory`` for a method that holds
    its whole design, or None for methods that stream (any budget runs)."""
    record = METHOD_RECORDS[method]
    if record.streams:
        return None
    limit = get_working_memory(working_memory) * 2**20
    low, high = 0, 2**62
    while low < high:
        middle = (low + high + 1) // 2
        if record.cost(n_players, middle, n_outputs).memory_bytes <= limit:
            low = middle
        else:
            high = middle - 1
    return low


@validate_params(
    {
        "method": _RECORDED_METHOD,
        "n_players": _N_PLAYERS,
        "budget": BUDGET,
        "n_outputs": _N_OUTPUTS,
        "working_memory": _WORKING_MEMORY,
        "name": [str],
    },
    prefer_skip_nested_validation=True,
)
def check_budget_fits(method: str, n_players: int, budget: int, n_outputs: int = 1, *,
                      working_memory=None, name: str = "budget") -> None:
    """Raise a ``ValueError`` naming ``name`` and the largest budget that fits, before
    any allocation, when ``method``'s design for ``budget`` exceeds ``working_memory``."""
    record = METHOD_RECORDS[method]
    if record.streams:
        return
    memory = record.cost(n_players, budget, n_outputs).memory_bytes
    working_memory = get_working_memory(working_memory)
    if memory > working_memory * 2**20:
        largest = largest_budget_in_memory(method, n_players, n_outputs, working_memory)
        raise ValueError(
            f"{name}={budget} is too large for method={method!r} with {n_players} "
            f"players: its design needs about {memory / 2**20:,.0f} MiB, over "
            f"working_memory={working_memory:g} MiB; use {name} <= {largest}, raise "
            "working_memory (skshapley.set_config), or use method='permutation', which "
            "works through any budget in chunks."
        )


@validate_game_params(
    {
        "game": GAME,
        # "tree" and "linear" pass to check_method, which points them to the explainer
        "method": [StrOptions(set(METHODS)), Hidden(StrOptions({"tree", "linear"}))],
        "budget": [*BUDGET, None],
        "tol": TOL,
        "random_state": RANDOM_STATE,
    },
)
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
        Early stop for sampling methods: stop once the estimated ``quantile_level``
        quantile (default 0.95) of ``||phi_hat - phi||_2`` is below ``tol`` (see the user
        guide, "Budgets and error bars").
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
    d = game.n_players
    method = resolve_method(method, d, budget, tol)
    record = METHOD_RECORDS[method]
    if tol is not None and not (record.takes_tol or record.exact):
        raise ValueError(
            f"tol is only supported by method='permutation'; got method={method!r}."
        )
    if not record.exact and d <= MAX_EXACT_PLAYERS and budget >= 2**d:
        # Enumeration costs 2^d evaluations and has no error: never sample past it.
        record = EXACT
    elif method != "exact":
        check_budget_fits(method, d, budget, working_memory=None)
    if record.uses_sampler:
        options["sampler"] = resolve_sampler(options.get("sampler", "auto"), d, budget)
    if record is EXACT and method != "exact":
        options = {}
    return record.run(game, budget, tol=tol, random_state=random_state, **options)

