"""Stratified sampling of marginal contributions by coalition size (§2.10; Maleki 2015 in
the form of Castro et al. 2017, with Neyman-type allocation)."""

from __future__ import annotations

import warnings

import numpy as np

from skshapley.approximators._common import as_matrix, scalar_or_array, squeeze_outputs
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._risk import overall_error_quantile
from skshapley.exceptions import BudgetWarning
from skshapley.utils import as_generator, check_budget


def _random_coalitions(players, sizes, n_players, rng):
    """Uniform coalitions of the given sizes from N minus the given player (vectorised)."""
    keys = rng.random((players.size, n_players))
    keys[np.arange(players.size), players] = np.inf  # never pick the player itself
    ranks = np.argsort(np.argsort(keys, axis=1, kind="stable"), axis=1, kind="stable")
    return ranks < sizes[:, None]


ALLOCATIONS = ("variance", "neyman")


def _allocate(variances, total):
    """Split ``total`` samples in proportion to ``variances`` by sequential rounding
    (row-major order, numpy's round-half-even), as in the authors' code (§2.10)."""
    counts = np.zeros(variances.size, dtype=np.int64)
    left = total
    remaining = variances[::-1].cumsum()[::-1]
    for k, variance in enumerate(variances):
        if remaining[k] <= 0 or left <= 0:
            break
        counts[k] = int(np.round(variance / remaining[k] * left))
        left -= counts[k]
    return counts


def stratified_shapley(game, budget: int, *, allocation: str = "variance",
                       quantile_level: float = 0.95, random_state=None) -> ShapleyResult:
    """Stratified estimate: phi_i is the mean over coalition sizes l of the mean marginal
    contribution of i to a uniform coalition of size l.

    The strata l = 0 and l = d - 1 hold one coalition each and are evaluated exactly
    (v({i}) - v(∅), v(N) - v(N \\ {i})). The inner d (d - 2) strata first get an equal
    exploration share, then the rest of the budget in proportion to their sample variances
    (allocation by variance as in the authors' code). Each sample costs 2 evaluations.
    Standard errors come from the stratified variance sum_l s_il^2 / (d^2 m_il).
    Efficiency does not hold exactly.

    Parameters
    ----------
    game : Game
    budget : int
    allocation : {"variance", "neyman"}, default="variance"
        Second-phase samples in proportion to each stratum's sample variance (the
        authors' code, §2.10) or to its standard deviation (Neyman's optimum for the
        variance of a sum of stratum means).
    quantile_level : float, default=0.95
    random_state : None, int or Generator

    Returns
    -------
    ShapleyResult

    Examples
    --------
    >>> from skshapley.games import AdditiveGame
    >>> from skshapley.approximators import stratified_shapley
    >>> stratified_shapley(AdditiveGame([1.0, 2.0, 3.0]), budget=40, random_state=0).values
    array([1., 2., 3.])
    """
    budget = check_budget(budget)
    if allocation not in ALLOCATIONS:
        raise ValueError(
            f"The 'allocation' parameter must be one of {list(ALLOCATIONS)}; got {allocation!r}."
        )
    d = game.n_players
    rng = as_generator(random_state)
    inner_sizes = np.arange(1, d - 1)
    n_strata = d * inner_sizes.size
    fixed = 2 + (2 * d if d >= 2 else 0)
    n_samples = (budget - fixed) // 2
    exploration = n_samples // (2 * n_strata) if n_strata else 0
    minimum = fixed + 4 * n_strata
    if budget < fixed or (n_strata and exploration < 1):
        raise ValueError(
            f"budget={budget} is too small for method='stratified' with n_players={d}: the "
            f"{n_strata} inner strata need two samples each (2 evaluations per sample) after "
            f"{fixed} exact evaluations; increase budget to at least {minimum}."
        )
    if n_strata and exploration == 1:
        warnings.warn(
            "stratified sampling with one exploration sample per stratum: the variances "
            "that steer the allocation are unknown, so the rest is spread evenly.",
            BudgetWarning, stacklevel=2,
        )
    start = game.n_evaluations
    eye = np.eye(d, dtype=bool)
    fixed_masks = np.concatenate([np.zeros((1, d), bool), np.ones((1, d), bool)]
                                 + ([eye, ~eye] if d >= 2 else []))
    fixed_values = as_matrix(game.values(fixed_masks))
    n_outputs = fixed_values.shape[1]
    empty, grand = fixed_values[0], fixed_values[1]
    if d == 1:
        phi = (grand - empty)[None, :]
        std_errors = np.zeros_like(phi)
        error = np.zeros(n_outputs)
    else:
        singles, all_but = fixed_values[2 : 2 + d], fixed_values[2 + d :]
        strata_sum = (singles - empty) + (grand - all_but)  # the two exact strata, (d, k)
        variance_sum = np.zeros((d, n_outputs))
        if n_strata:
            strata_player = np.repeat(np.arange(d), inner_sizes.size)
            strata_size = np.tile(inner_sizes, d)
            samples = [[] for _ in range(n_strata)]

            def draw(counts):
                stratum = np.repeat(np.arange(n_strata), counts)
                if stratum.size == 0:
                    return
                players = strata_player[stratum]
                without = _random_coalitions(players, strata_size[stratum], d, rng)
                with_player = without.copy()
                with_player[np.arange(stratum.size), players] = True
                values = as_matrix(game.values(np.concatenate([with_player, without])))
                diffs = values[: stratum.size] - values[stratum.size :]
                for k in np.unique(stratum):
                    samples[k].append(diffs[stratum == k])

            draw(np.full(n_strata, exploration))
            pooled = [np.concatenate(s) for s in samples]
            variances = np.array([p.var(axis=0, ddof=1).mean() if len(p) > 1 else np.nan
                                  for p in pooled])
            extra = n_samples - exploration * n_strata
            if np.isnan(variances).any():
                counts = np.full(n_strata, extra // n_strata)
            else:
                counts = _allocate(variances if allocation == "variance"
                                   else np.sqrt(variances), extra)
            draw(counts)
            pooled = [np.concatenate(s) for s in samples]
            means = np.array([p.mean(axis=0) for p in pooled])  # (n_strata, k)
            stratum_var = np.array([p.var(axis=0, ddof=1) / len(p) if len(p) > 1
                                    else np.full(n_outputs, np.inf) for p in pooled])
            np.add.at(strata_sum, strata_player, means)
            np.add.at(variance_sum, strata_player, stratum_var)
        phi = strata_sum / d
        std_errors = np.sqrt(variance_sum) / d
        # strata are sampled independently, so the estimate's covariance is diagonal
        error = np.array([overall_error_quantile(np.diag(std_errors[:, o] ** 2), quantile_level,
                                                 rng=rng) for o in range(n_outputs)])
    return ShapleyResult(
        values=squeeze_outputs(phi, game),
        std_errors=squeeze_outputs(std_errors, game),
        error_quantile=scalar_or_array(error, game),
        n_evaluations=game.n_evaluations - start,
        converged=None,
        method="stratified",
        empty_value=scalar_or_array(empty, game),
        grand_value=scalar_or_array(grand, game),
        quantile_level=quantile_level,
    )
