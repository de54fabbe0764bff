"""Owen sampling and Owen-halved (§2.10; Eq. 5 of Mitchell et al. 2022; Okhrati & Lipani
2020): Shapley values as the integral over q of the expected marginal contribution to a
random coalition that holds every other player with probability q."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skshapley.approximators._common import as_matrix, scalar_or_array, squeeze_outputs
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._risk import overall_error_quantile, small_sample_inflation
from skshapley.utils import as_generator, check_budget

QUADRATURES = ("trapezoid", "equal")


def _grid_weights(n_points: int, quadrature: str) -> np.ndarray:
    """Weights of the q grid 0, 1/Q, ..., 1 (Q + 1 points), summing to one.

    "equal" reproduces the authors' code (an O(1/Q) bias when e_j(q) is not affine);
    "trapezoid" halves the end points (O(1/Q^2)), the rule the paper's text names.
    """
    weights = np.ones(n_points)
    if quadrature == "trapezoid" and n_points > 1:
        weights[[0, -1]] = 0.5
    return weights / weights.sum()


def owen_shapley(game, budget: int, *, halved: bool = False, n_runs: int = 2,
                 quadrature: str = "trapezoid", quantile_level: float = 0.95,
                 random_state=None) -> ShapleyResult:
    """Owen sampling estimate of the Shapley values.

    Each run draws one random mask per point q_l = l/Q of a grid on [0, 1] (every player
    in it with probability q_l), shared by all players; player j's contribution is
    v(E ∪ {j}) - v(E \\ {j}). A mask costs d + 1 evaluations (v(E) and v(E △ {j}) for
    every j), plus v(∅) and v(N) once: ``M = (budget - 2) // (d + 1)`` masks, split into
    ``n_runs`` runs of Q + 1 masks. The runs are independent draws for the standard
    errors. Efficiency does not hold exactly.

    Parameters
    ----------
    game : Game
    budget : int
    halved : bool, default=False
        Owen-halved: draw masks for q <= 1/2 only and use each with its complement, which
        holds every player with probability 1 - q.
    n_runs : int, default=2
        Independent runs (R in [P]); at least 2 for standard errors.
    quadrature : {"trapezoid", "equal"}, default="trapezoid"
    quantile_level : float, default=0.95
    random_state : None, int or Generator

    Returns
    -------
    ShapleyResult

    Examples
    --------
    >>> from skshapley.games import AdditiveGame
    >>> from skshapley.approximators import owen_shapley
    >>> owen_shapley(AdditiveGame([1.0, 2.0]), budget=14, random_state=0).values
    array([1., 2.])
    """
    budget = check_budget(budget)
    if quadrature not in QUADRATURES:
        raise ValueError(
            f"The 'quadrature' parameter must be one of {list(QUADRATURES)}; got {quadrature!r}."
        )
    if isinstance(n_runs, bool) or not isinstance(n_runs, Integral) or n_runs < 1:
        raise ValueError(f"The 'n_runs' parameter must be a positive integer; got {n_runs!r}.")
    d = game.n_players
    n_masks = (budget - 2) // (d + 1)
    n_points = n_masks // n_runs  # Q + 1 grid points per run
    if n_points < 2:
        minimum = 2 + 2 * n_runs * (d + 1)
        raise ValueError(
            f"budget={budget} is too small for method='owen' with n_players={d} and "
            f"n_runs={n_runs}: each run needs two masks of {d + 1} evaluations after v(∅) and "
            f"v(N); increase budget to at least {minimum}."
        )
    rng = as_generator(random_state)
    grid = np.linspace(0.0, 1.0, n_points)
    masks = np.empty((n_runs, n_points, d), dtype=bool)
    for run in range(n_runs):
        if halved:
            half = n_points // 2 + n_points % 2  # grid points with q <= 1/2
            drawn = rng.random((half, d)) < grid[:half, None]
            masks[run, :half] = drawn
            # the complement of a Bernoulli(q) mask is a Bernoulli(1 - q) mask
            masks[run, half:] = ~drawn[: n_points - half][::-1]
        else:
            masks[run] = rng.random((n_points, d)) < grid[:, None]
    flat = masks.reshape(-1, d)
    toggled = np.repeat(flat[:, None, :], d, axis=1)
    players = np.arange(d)
    toggled[:, players, players] = ~toggled[:, players, players]
    endpoints = np.array([np.zeros(d, dtype=bool), np.ones(d, dtype=bool)])
    start = game.n_evaluations
    values = as_matrix(game.values(np.concatenate([endpoints, flat, toggled.reshape(-1, d)])))
    n_outputs = values.shape[1]
    empty, grand = values[0], values[1]
    base = values[2 : 2 + flat.shape[0]]  # v(E), (M, k)
    flipped = values[2 + flat.shape[0] :].reshape(flat.shape[0], d, n_outputs)
    # contribution of j: v(E with j) - v(E without j)
    sign = np.where(flat, 1.0, -1.0)[:, :, None]
    contributions = sign * (base[:, None, :] - flipped)  # (M, d, k)
    contributions = contributions.reshape(n_runs, n_points, d, n_outputs)
    weights = _grid_weights(n_points, quadrature)
    per_run = np.einsum("l,rldk->rdk", weights, contributions)
    phi = per_run.mean(axis=0)
    if n_runs >= 2:
        std_errors = per_run.std(axis=0, ddof=1) / np.sqrt(n_runs)
        inflation = small_sample_inflation(n_runs, quantile_level)
        errors = []
        for output in range(n_outputs):
            centred = per_run[:, :, output] - phi[:, output]
            covariance = centred.T @ centred / (n_runs * (n_runs - 1))
            errors.append(overall_error_quantile(covariance, quantile_level, rng=rng)
                          * inflation)
        error = np.array(errors)
    else:
        std_errors = np.full_like(phi, np.inf)
        error = np.full(n_outputs, np.inf)
    return ShapleyResult(
        values=squeeze_outputs(phi, game),
        std_errors=squeeze_outputs(std_errors, game),
        error_quantile=scalar_or_array(error, game),
        n_evaluations=game.n_evaluations - start,
        converged=None,
        method="owen_halved" if halved else "owen",
        empty_value=scalar_or_array(empty, game),
        grand_value=scalar_or_array(grand, game),
        n_draws=n_runs,
        quantile_level=quantile_level,
    )
