"""Owen sampling and Owen-halved (Mitchell, Cooper, Frank & Holmes 2022, Sec. 2.5, Eq. 5;
Okhrati & Lipani 2020): Shapley values as the integral over q of the expected marginal
contribution to a random coalition that holds every other player with probability q."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np

from skshapley.approximators._common import as_matrix
from skshapley.approximators._constraints import BUDGET, GAME, QUANTILE_LEVEL, validate_game_params
from skshapley.approximators._records import MethodRecord, held_coalitions_cost
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._risk import (
    overall_error_quantile,
    satterthwaite_draws,
    small_sample_inflation,
)
from skshapley.exceptions import BudgetWarning
from skshapley.utils import (
    RANDOM_STATE,
    NumberInterval,
    StrOptions,
    as_generator,
)

QUADRATURES = ("trapezoid", "equal", "stratified")


def _grid_weights(n_points: int, quadrature: str) -> np.ndarray:
    """Weights of the q points, summing to one.

    On the grid 0, 1/Q, ..., 1 (Q + 1 points), "equal" reproduces the authors' code (an
    O(1/Q) bias when e_j(q) is not affine) and "trapezoid" halves the end points
    (O(1/Q^2)), the rule the paper's text names. "stratified" draws one q uniformly in
    each of the Q + 1 cells [l/(Q+1), (l+1)/(Q+1)), so equal weights are unbiased.
    """
    weights = np.ones(n_points)
    if quadrature == "trapezoid" and n_points > 1:
        weights[[0, -1]] = 0.5
    return weights / weights.sum()


def _satterthwaite_draws(unit_variances, n_runs):
    """1 + the smallest Welch-Satterthwaite degrees of freedom over players and outputs of
    a sum of U variances, each from ``n_runs`` draws: nu = (sum a_u)^2 / sum a_u^2 / (R-1),
    between R - 1 and U (R - 1). Players with zero variance are skipped."""
    return satterthwaite_draws(unit_variances.sum(axis=0),
                               (unit_variances**2).sum(axis=0) / (n_runs - 1), fallback=n_runs)


def _auto_runs(n_masks: int) -> int:
    """Runs of ``n_runs="auto"``: about sqrt(M) runs of about sqrt(M) masks each, at least
    2 runs of 2 masks and at most 32 runs (issue 28). Every player's standard error then
    rests on at least R - 1 degrees of freedom: with a fixed 2 runs, a game whose units are
    discrete (or, for Owen-halved, whose mask-and-complement pairs are constant) often
    gives two runs that agree by chance, a standard error near 0 and t_1 intervals that
    covered 0.76 instead of 0.95, however large the budget."""
    return int(min(32, max(2, np.sqrt(n_masks)), max(2, n_masks // 2)))


@validate_game_params(
    {
        "game": GAME,
        "budget": BUDGET,
        "halved": ["boolean"],
        "n_runs": [NumberInterval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "quadrature": [StrOptions(set(QUADRATURES))],
        "quantile_level": QUANTILE_LEVEL,
        "random_state": RANDOM_STATE,
    },
)
def owen_shapley(game, budget: int, *, halved: bool = False, n_runs="auto",
                 quadrature: str = "trapezoid", quantile_level: float = 0.95,
                 random_state=None) -> ShapleyResult:
    """Owen sampling estimate of the Shapley values.

    Each run draws one random mask per point q_l of [0, 1] (every player in it with
    probability q_l), shared by all players; player j's contribution is
    v(E ∪ {j}) - v(E \\ {j}). A mask costs d + 1 evaluations (v(E) and v(E △ {j}) for
    every j), plus v(∅) and v(N) once, which are reused for masks equal to ∅ or N:
    ``M = (budget - 2) // (d + 1)`` masks, split into ``n_runs`` runs of Q + 1 masks. The
    runs are independent; so are the masks of a run (for Owen-halved, the pairs of a mask
    and its complement), so the standard errors sum, over those units, the spread of
    each unit across runs, and ``n_draws`` is 1 + their Welch-Satterthwaite degrees of
    freedom (``error_quantile`` is widened by t_{n_draws - 1} / z).

    The standard errors measure only the spread between runs. On the fixed grid
    q_l = l/Q ("trapezoid", "equal") they miss the quadrature bias, and at the smallest
    budgets (Q = 1, q in {0, 1}) every mask is ∅ or N: the estimate is the deterministic
    end-point average (v({j}) - v(∅) + v(N) - v(N \\ {j})) / 2, the runs are identical,
    and the error cannot be estimated, so ``std_errors`` and ``error_quantile`` are
    ``inf`` (with a ``BudgetWarning``) rather than 0. ``quadrature="stratified"`` draws q
    at random in Q + 1 equal cells: each run is unbiased at every budget and the
    standard errors cover the whole error.

    Efficiency does not hold: the values need not sum to v(N) - v(∅), since one
    mask is shared by all players (at Q = 1 the unanimity game on {0, 1, 2} in d = 4
    gives (1/2, 1/2, 1/2, 0), summing to 1.5 instead of 1).

    Parameters
    ----------
    game : Game
    budget : int
    halved : bool, default=False
        Owen-halved: draw masks for q <= 1/2 only and use each with its complement, which
        holds every player with probability 1 - q.
    n_runs : int or "auto", default="auto"
        Independent runs (2 in the code of Mitchell et al. 2022); at least 2 for
        standard errors. "auto": about sqrt(M) runs of the M masks (2 at the minimum
        budget, at most 32), so the degrees of freedom of the standard errors grow with
        the budget; Owen-halved then uses an even number of masks per run (up to R masks
        fewer), so that every mask is paired with its complement.
    quadrature : {"trapezoid", "equal", "stratified"}, default="trapezoid"
        Fixed grid with trapezoid or equal weights, or one uniform q per cell with equal
        weights (unbiased; not in Mitchell et al. 2022 or their code).
    quantile_level : float, default=0.95
    random_state : None, int or Generator

    Returns
    -------
    ShapleyResult

    Examples
    --------
    >>> from skshapley.games import AdditiveGame
    >>> from skshapley.approximators import owen_shapley
    >>> owen_shapley(AdditiveGame([1.0, 2.0]), budget=20, random_state=0).values
    array([1., 2.])
    """
    budget = int(budget)
    d = game.n_players
    n_masks = (budget - 2) // (d + 1)
    auto_runs = isinstance(n_runs, str)
    if auto_runs:
        n_runs = _auto_runs(n_masks)
    n_points = n_masks // n_runs  # Q + 1 grid points per run
    if halved and auto_runs and n_points % 2 and n_points > 3:
        # an even grid pairs every mask with its complement; the unpaired middle mask
        # (q = 1/2) would carry most of the variance
        n_points -= 1
    if n_points < 2:
        minimum = 2 + 2 * n_runs * (d + 1)
        raise ValueError(
            f"budget={budget} is too small for method='owen' with n_players={d} and "
            f"n_runs={n_runs}: each run needs two masks of {d + 1} evaluations after v(∅) and "
            f"v(N); increase budget to at least {minimum}."
        )
    deterministic = n_points == 2 and quadrature != "stratified"
    if deterministic:
        warnings.warn(
            f"Owen sampling with budget={budget} has two grid points per run, q = 0 and "
            f"q = 1, whose masks are ∅ and N: the estimate is deterministic and its error "
            f"cannot be estimated (std_errors are inf). Increase budget to at least "
            f"{2 + 3 * n_runs * (d + 1)} or use quadrature='stratified'.",
            BudgetWarning, stacklevel=3,  # the caller, past validate_params
        )
    rng = as_generator(random_state)
    half = n_points // 2 + n_points % 2  # points with q <= 1/2 (Owen-halved draws these)
    n_drawn = half if halved else n_points
    masks = np.empty((n_runs, n_points, d), dtype=bool)
    for run in range(n_runs):
        if quadrature == "stratified":
            # one q per cell [l/n, (l+1)/n); the complement of a mask drawn in cell l
            # is a Bernoulli(1 - q) mask, 1 - q uniform in the mirror cell n - 1 - l
            q = (np.arange(n_drawn) + rng.random(n_drawn)) / n_points
        else:
            q = np.linspace(0.0, 1.0, n_points)[:n_drawn]
        drawn = rng.random((n_drawn, d)) < q[:, None]
        masks[run, :n_drawn] = drawn
        if halved:
            # the complement of a Bernoulli(q) mask is a Bernoulli(1 - q) mask
            masks[run, half:] = ~drawn[: n_points - half][::-1]
    flat = masks.reshape(-1, d)
    toggled = np.repeat(flat[:, None, :], d, axis=1)
    players = np.arange(d)
    toggled[:, players, players] = ~toggled[:, players, players]
    endpoints = np.array([np.zeros(d, dtype=bool), np.ones(d, dtype=bool)])
    start = game.n_evaluations
    end_values = as_matrix(game.values(endpoints))
    empty, grand = end_values[0], end_values[1]
    n_outputs = end_values.shape[1]
    # v(∅) and v(N) are known: evaluate only the other coalitions
    queries = np.concatenate([flat, toggled.reshape(-1, d)])
    is_empty, is_grand = ~queries.any(axis=1), queries.all(axis=1)
    fresh = ~(is_empty | is_grand)
    values = np.empty((queries.shape[0], n_outputs))
    if fresh.any():
        values[fresh] = as_matrix(game.values(queries[fresh]))
    values[is_empty], values[is_grand] = empty, grand
    base = values[: flat.shape[0]]  # v(E), (M, k)
    flipped = values[flat.shape[0] :].reshape(flat.shape[0], d, n_outputs)
    # contribution of j: v(E with j) - v(E without j)
    sign = np.where(flat, 1.0, -1.0)[:, :, None]
    contributions = sign * (base[:, None, :] - flipped)  # (M, d, k)
    contributions = contributions.reshape(n_runs, n_points, d, n_outputs)
    weights = _grid_weights(n_points, quadrature)
    # independent units of a run: one mask, or (Owen-halved) a mask and its complement
    positions = np.arange(n_points)
    unit_of = np.minimum(positions, n_points - 1 - positions) if halved else positions
    membership = (unit_of[None, :] == np.unique(unit_of)[:, None]) * weights  # (U, L)
    units = np.einsum("ul,rldk->rudk", membership, contributions)
    phi = units.sum(axis=1).mean(axis=0)
    n_draws = n_runs
    if n_runs >= 2 and not deterministic:
        # Units are independent within a run, so the variance of the run mean is the sum
        # of the units' variances over runs: unbiased like the spread of the run means,
        # but with up to (R - 1) U degrees of freedom instead of R - 1, so two runs of a
        # discrete game rarely agree everywhere by chance (a spurious zero error).
        centred = units - units.mean(axis=0)
        unit_variances = (centred**2).sum(axis=0) / (n_runs * (n_runs - 1))  # (U, d, k)
        std_errors = np.sqrt(unit_variances.sum(axis=0))
        n_draws = _satterthwaite_draws(unit_variances, n_runs)
        inflation = small_sample_inflation(n_draws, quantile_level)
        errors = []
        for output in range(n_outputs):
            covariance = np.einsum("rui,ruj->ij", centred[..., output], centred[..., output])
            covariance /= n_runs * (n_runs - 1)
            errors.append(overall_error_quantile(covariance, quantile_level, rng=rng)
                          * inflation)
        error = np.array(errors)
    else:
        std_errors = np.full_like(phi, np.inf)
        error = np.full(n_outputs, np.inf)
    return ShapleyResult.of_game(
        game, phi, std_errors, error, empty, grand,
        n_evaluations=game.n_evaluations - start, converged=None,
        method="owen_halved" if halved else "owen", n_draws=n_draws,
        quantile_level=quantile_level)


def _owen_record(name, halved):
    return MethodRecord(
        name=name,
        run=lambda game, budget, *, tol=None, random_state=None, **options: owen_shapley(
            game, budget, halved=halved, random_state=random_state, **options),
        minimum_budget=lambda n_players, unit=1: 2 + 4 * (n_players + 1),
        cost=held_coalitions_cost,
    )


OWEN = _owen_record("owen", halved=False)
OWEN_HALVED = _owen_record("owen_halved", halved=True)
