"""The permutation estimator: average marginal contributions along sampled orderings
(Castro, Gómez & Tejada 2009; Mitchell, Cooper, Frank & Holmes 2022, Sec. 2.2-2.3), with
the risk estimates of ``_risk`` (Bell, Devanathan & Boyd 2024, Sec. 3.6)."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skshapley.approximators._common import (
    as_matrix,
    endpoint_values,
    scalar_or_array,
    squeeze_outputs,
)
from skshapley.approximators._records import MethodCost, MethodRecord
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._sequential import SequentialEstimate, run_sequential
from skshapley.backends import get_backend
from skshapley.permutations import SAMPLERS, PermutationSampler, build_sampler
from skshapley.utils import as_generator, check_budget, chunk_rows

# Draws (independent blocks of orderings) between two checks of the stopping rule
# when `tol` is set. Small, because an explained row's budget is often a few hundred
# orderings; without `tol` every ordering goes into one batch (one model call per chunk).
DEFAULT_CHECK_INTERVAL = 16


def check_sampler(sampler, n_players: int):
    """Check a ``sampler`` parameter ("auto", a sampler name or an instance for
    ``n_players``) without building it; returns it."""
    if isinstance(sampler, str) and sampler == "auto":
        return sampler
    if isinstance(sampler, PermutationSampler) or sampler not in SAMPLERS:
        make_sampler(sampler, n_players, rng=None)  # raises the error that names it
    return sampler


def make_sampler(sampler, n_players: int, rng) -> PermutationSampler:
    """Build a sampler from a name, or check a sampler instance."""
    return build_sampler(sampler, n_players, rng=rng, caller="the game")


def draws_in_memory(n_players: int, block: int, n_outputs: int = 1,
                    working_memory=None) -> int:
    """Independent draws (blocks of ``block`` orderings) whose coalitions, values and
    marginal contributions fit in ``working_memory`` MiB at once (at least one)."""
    d = n_players
    per_ordering = d * d + 8 * (3 * d + 2) * max(n_outputs, 1)
    return chunk_rows(block * per_ordering, working_memory)


def minimum_budget(n_players: int, block_size: int = 1) -> int:
    """Smallest budget that buys one block of orderings: 2 + block_size * (d - 1)."""
    return 2 if n_players == 1 else 2 + block_size * (n_players - 1)


def permutation_shapley(
    game,
    budget: int,
    *,
    sampler="antithetic",
    tol: float | None = None,
    check_interval: int | None = None,
    quantile_level: float = 0.95,
    random_state=None,
) -> ShapleyResult:
    """Estimate Shapley values by sampling orderings of the players.

    v(∅) and v(N) are evaluated once; each ordering then costs d - 1 evaluations, so
    ``n = (budget - 2) // (d - 1)`` orderings fit, rounded down to whole blocks of the
    sampler (pairs for antithetic sampling). Every ordering's contributions telescope to
    v(N) - v(∅), so efficiency holds exactly for the average, and a null player gets
    exactly 0.

    Parameters
    ----------
    game : Game
    budget : int
        Maximum coalition evaluations, v(∅) and v(N) included.
    sampler : str or PermutationSampler, default="antithetic"
        One of ``skshapley.permutations.SAMPLERS``: "mc", "antithetic", "orthogonal",
        "sobol", "argsort_sobol", "herding", "sbq" (weighted), or an instance.
    tol : float, optional
        Stop once the estimated ``quantile_level`` quantile of the overall error
        ||phi_hat - phi||_2 is below ``tol``, checked every ``check_interval`` draws.
    check_interval : int, optional
        Independent draws (orderings, or antithetic pairs) between checks; default 16
        when ``tol`` is set, else all draws in one batch.
    quantile_level : float, default=0.95
    random_state : None, int, Generator or RandomState
        Seeds the orderings (the error estimate's Gaussian draws are fixed and shared).

    Returns
    -------
    ShapleyResult

    Examples
    --------
    >>> from skshapley.games import AdditiveGame
    >>> from skshapley.approximators import permutation_shapley
    >>> permutation_shapley(AdditiveGame([1.0, 2.0, 3.0]), budget=10, random_state=0).values
    array([1., 2., 3.])
    """
    budget = check_budget(budget)
    if tol is not None and not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"The 'tol' parameter must be a positive number or None; got {tol!r}.")
    if not 0.0 < quantile_level < 1.0:
        raise ValueError(
            f"The 'quantile_level' parameter must be in (0, 1); got {quantile_level!r}."
        )
    if check_interval is not None and (
        isinstance(check_interval, bool) or not isinstance(check_interval, Integral)
        or check_interval < 1
    ):
        raise ValueError(
            f"The 'check_interval' parameter must be a positive integer; got {check_interval!r}."
        )
    d = game.n_players
    (sampler_rng,) = as_generator(random_state).spawn(1)
    sampler = make_sampler(sampler, d, sampler_rng)
    unit = sampler.unit_size
    if budget < minimum_budget(d, unit):
        raise ValueError(
            f"budget={budget} is too small for n_players={d}: v(∅) and v(N) take 2 "
            f"evaluations and one {'pair of orderings' if unit == 2 else 'ordering'} needs "
            f"{unit * (d - 1)} more; increase budget to at least {minimum_budget(d, unit)} "
            "or use method='exact'."
        )
    n_orders_max = (budget - 2) // max(d - 1, 1) // unit * unit
    # The draw of the risk estimate is the sampler's independent block. Dependent
    # streams (QMC, herding), or fewer than two blocks, fall back to units as draws with
    # the i.i.d. formulas, flagged as heuristic.
    block = sampler.block_size
    replicates = sampler.replicates
    risk_is_heuristic = block is None or (block > unit and n_orders_max < 2 * block)
    if risk_is_heuristic:
        block = unit
    if replicates:
        # Randomised QMC: rows come in rounds of one point per independent replicate; the
        # draws are the replicate means, so whole rounds are bought.
        block, risk_is_heuristic = replicates, False
        if n_orders_max < replicates:
            raise ValueError(
                f"budget={budget} buys {n_orders_max} orderings, fewer than the sampler's "
                f"{replicates} replicates; increase budget to at least "
                f"{minimum_budget(d, replicates)} or lower replicates."
            )
    start = game.n_evaluations
    if d == 1:
        empty, grand = endpoint_values(game)
        phi = squeeze_outputs((grand - empty)[None, :], game)
        return ShapleyResult(
            values=phi, std_errors=np.zeros_like(phi),
            error_quantile=scalar_or_array(np.zeros_like(empty), game),
            n_evaluations=game.n_evaluations - start, converged=None if tol is None else True,
            method="permutation", empty_value=scalar_or_array(empty, game),
            grand_value=scalar_or_array(grand, game),
        )

    max_draws = n_orders_max // block
    # with tol, or an interval asked for (convergence plots), every check is recorded;
    # otherwise only the end is, and memory alone sets the batches
    every_check = tol is not None or check_interval is not None
    if check_interval is None:
        check_interval = DEFAULT_CHECK_INTERVAL if tol is not None else max_draws
    # Each batch holds its orderings' coalitions and contributions: as many draws as fit
    # in working_memory, so any budget runs (in several game calls when it is large).
    n_outputs = getattr(game, "n_outputs_hint", 1)
    check_interval = min(check_interval, draws_in_memory(d, block, n_outputs))
    chains = _Chains(game, sampler, d)

    def draw(n_draws):
        contributions = chains.contributions(n_draws, block)
        if replicates:
            return contributions.reshape(n_draws, block, d, chains.n_outputs)
        # One draw = the mean of one independent block (an antithetic pair).
        return contributions.reshape(n_draws, block, d, chains.n_outputs).mean(axis=1)

    history, history_evaluations, history_values, history_std_errors = [], [], [], []
    estimate = SequentialEstimate(d, replicates=replicates, quantile_level=quantile_level)

    def record(n_draws, error):
        if error is None:
            return
        history.append(float(error.max()))
        # The running estimate and its standard errors, for convergence plots.
        history_evaluations.append(game.n_evaluations - start)
        history_values.append(squeeze_outputs(chains.estimate(n_draws * block), game))
        history_std_errors.append(squeeze_outputs(estimate.std_errors(), game))

    n_draws, converged = run_sequential(draw, estimate, max_draws, check_interval, tol=tol,
                                        assess_every_check=every_check, on_check=record)

    # Orderings left over after the last whole block (orthogonal frames of 2(d - 1)) still
    # improve the estimate; the block statistics then describe n / block effective blocks.
    leftover = n_orders_max - n_draws * block if converged is not True else 0
    if replicates:
        leftover = 0  # a partial round would weight some replicates more than others
    if leftover:
        chains.contributions(leftover, 1)
    n_orders_used = n_draws * block + leftover
    spread_scale = np.sqrt(n_draws * block / n_orders_used)
    error = estimate.error * spread_scale
    # Sum then divide: the d contributions of every ordering telescope, so the estimate
    # sums to v(N) - v(∅) up to rounding (efficiency). Quadrature weights (SBQ) depend on
    # the whole sample; they sum to one, so the weighted estimate is efficient too.
    phi = chains.estimate(n_orders_used)
    risk_is_heuristic = risk_is_heuristic or sampler.is_weighted
    std_errors = estimate.std_errors() * spread_scale
    return ShapleyResult.of_game(
        game, phi, std_errors, error, chains.empty, chains.grand,
        n_evaluations=game.n_evaluations - start,
        converged=converged,
        method="permutation",
        n_permutations=n_orders_used,
        n_draws=replicates or n_draws,
        quantile_level=quantile_level,
        history=tuple(history),
        risk_is_heuristic=risk_is_heuristic,
        history_evaluations=tuple(history_evaluations),
        history_values=tuple(history_values),
        history_std_errors=tuple(history_std_errors),
    )


class _Chains:
    """The orderings of one run and their marginal contributions: each batch of
    orderings is evaluated in one game call, v(∅) and v(N) riding along with the first."""

    def __init__(self, game, sampler, d):
        self.game, self.sampler, self.d = game, sampler, d
        self.kernels = get_backend()
        self.empty = self.grand = self.weighted_sum = self.n_outputs = None
        self.kept = []  # every ordering's contributions, for quadrature weights

    def contributions(self, n_blocks, block):
        """Marginal contributions (n, d, k) of the next ``n_blocks * block``
        orderings."""
        first_call = self.empty is None
        orders = np.ascontiguousarray(self.sampler.random(n_blocks * block))
        d, game = self.d, self.game
        n_orders = orders.shape[0]
        coalitions = np.empty((n_orders, d - 1, d), dtype=bool)
        self.kernels.prefix_coalitions(orders, coalitions)
        coalitions = coalitions.reshape(-1, d)
        if first_call:
            endpoints = np.zeros((2, d), dtype=bool)
            endpoints[1] = True
            # v(∅) and v(N) ride along with the first batch: one model call, not two.
            values = as_matrix(game.values(np.concatenate([endpoints, coalitions])))
            self.empty, self.grand, inner = values[0], values[1], values[2:]
            self.n_outputs = self.empty.shape[0]
            self.weighted_sum = np.zeros((d, self.n_outputs))
        else:
            inner = as_matrix(game.values(coalitions))
        k = self.n_outputs
        path = np.empty((n_orders, d + 1, k))
        path[:, 0] = self.empty
        path[:, d] = self.grand
        path[:, 1:d] = inner.reshape(n_orders, d - 1, k)
        contributions = np.empty((n_orders, d, k))
        self.kernels.accumulate_permutation_marginals(orders, path, contributions)
        self.weighted_sum += contributions.sum(axis=0)
        if self.sampler.is_weighted:
            self.kept.append(contributions)
        return contributions

    def estimate(self, n_orders):
        """The (d, k) estimate from the first ``n_orders`` orderings."""
        if not self.sampler.is_weighted:
            return self.weighted_sum / n_orders
        weights = np.asarray(self.sampler.weights, dtype=np.float64)[-n_orders:]
        return np.einsum("k,kdo->do", weights / weights.sum(), np.concatenate(self.kept))


def _permutation_cost(n_players, budget, n_outputs):
    d = max(n_players, 2)
    n_orders = max((budget - 2) // (d - 1), 1)
    draws = max(n_orders // 2, 2)
    risk = min(draws, d) ** 2 * max(draws, d)  # the spectrum of each output's covariance
    return MethodCost(
        memory_bytes=n_orders * (d * d + 8 * (3 * d + 2) * n_outputs)
        + 8.0 * n_outputs * draws * d,
        flops=n_orders * d * (d + 6 * n_outputs) + risk * n_outputs,
    )


PERMUTATION = MethodRecord(
    name="permutation",
    run=lambda game, budget, *, tol=None, random_state=None, **options: permutation_shapley(
        game, budget, tol=tol, random_state=random_state, **options),
    minimum_budget=lambda n_players, unit=2: minimum_budget(n_players, unit),
    cost=_permutation_cost,
    takes_tol=True,
    streams=True,
    uses_sampler=True,
)
