"""Small budgets: read the game's end points first, then pick the estimator.

At a few evaluations per player (5d-12d) the best estimator depends on the game. On
the near-additive games of fitted models the regression estimators are far ahead and
Stratified SVARM is 100-10,000x worse; on games made of interactions among many players
(sums of unanimity games whose carriers hold up to all d players, Kolpaczki et al.,
AAAI 2024) SVARM wins (4x at 5d). The end points tell the two apart: the 2d + 2
coalitions ∅, N, every singleton {i} and every complement N \\ {i} give each player's
first contribution a_i = v({i}) - v(∅) and last contribution b_i = v(N) - v(N \\ {i}),
and (a_i + b_i) / 2 is the Shapley value of any game with interactions of at most two
players, which then adds up to v(N) - v(∅) exactly. A unanimity game on k players
(c when all k are present) has sum_i (a_i + b_i) / 2 = k c / 2 against v(N) - v(∅) = c,
so the share of the game that this end-point estimate leaves unexplained,

    r = |v(N) - v(∅) - sum_i (a_i + b_i) / 2| / (sum_i |a_i + b_i| / 2 + |v(N) - v(∅)|),

measures its interactions of three or more players. Both estimators keep the 2d + 2
coalitions (SVARM's design enumerates sizes 1 and d - 1; the regression's is made to),
so the look costs nothing.

Measured (d = 12, 10 games of each kind, mean squared error, ``benchmarks/results/
width.md`` and the module tests): r was 0.23-0.82 on sums of 50 unanimity games of any
size, 0.00-0.22 when their carriers hold at most 3 players, and 0.00-0.07 on the
interventional games of an MLP, a gradient-boosted model, a random forest and an SVR
fitted on Friedman #1, and of a sum of pairwise and three-way products.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from skshapley.approximators._common import as_matrix
from skshapley.approximators._records import MethodRecord
from skshapley.approximators._regression import regression_shapley, surrogate_cost
from skshapley.approximators._svarm import minimum_svarm_budget, svarm_shapley
from skshapley.games import Game, coalition_keys

# SVARM is taken above this share of unexplained end-point value: the sums of unanimity
# games above had r >= 0.23, every other game <= 0.22; the threshold sits above both
# so that a near-additive game is never sent to SVARM (100x its error there), at the
# price of some high-order games keeping the regression (2-4x SVARM's error there).
HIGH_ORDER_SHARE = 0.3
# "auto" looks at the end points up to this many evaluations per player: at 12 d the
# regression and SVARM were even on the high-order games (surrogate 0.024, SVARM 0.022
# at 140 evaluations, d = 12), and above it the regression's design holds the 2d
# end points of its own accord.
ADAPTIVE_BUDGET_PER_PLAYER = 12


class _AfterEndPoints(Game):
    """The game once its end points were read (``ends``: their values, counted once)."""

    def __init__(self, game, ends, *, cache=False):
        super().__init__(game.n_players, cache=cache)
        self.inner = game
        self.output_shape = ends.shape[1:]
        self.n_evaluations = distinct_end_points(game.n_players)

    @property
    def n_outputs_hint(self):
        return self.inner.n_outputs_hint


class _Remembered(_AfterEndPoints):
    """The game, each coalition evaluated once: the end points read first are served
    again from memory to the estimator that runs next (and not counted again)."""

    def __init__(self, game, ends):
        super().__init__(game, ends, cache=True)
        coalitions = end_point_coalitions(game.n_players)
        self._cache.update(zip(coalition_keys(coalitions), ends, strict=True))

    def _values(self, coalitions):
        return self.inner.values(coalitions)


class _WithEndPoints(_AfterEndPoints):
    """The game with the end points' values served from memory: the regression's design
    holds them and no other repeat, so the end points are found by their sizes (0, 1,
    d - 1, d) instead of a key per coalition (the keyed cache took 0.5 ms of a 10 ms
    one-row explanation at d = 50)."""

    def __init__(self, game, ends):
        super().__init__(game, ends)
        self.ends = ends

    def values(self, coalitions):
        coalitions = self._check_coalitions(coalitions)
        d = self.n_players
        sizes = coalitions.sum(axis=1)
        index = np.full(coalitions.shape[0], -1, dtype=np.int64)
        index[sizes == 0] = 0
        index[sizes == d] = 1
        single = sizes == 1
        index[single] = 2 + np.argmax(coalitions[single], axis=1)
        # with d = 2 a singleton is also a complement: served as the singleton
        complement = (sizes == d - 1) & ~single & (sizes > 0)
        index[complement] = 2 + d + np.argmin(coalitions[complement], axis=1)
        fresh = np.flatnonzero(index < 0)
        out = np.empty((coalitions.shape[0],) + self.output_shape)
        served = index >= 0
        out[served] = self.ends[index[served]]
        if fresh.size:
            out[fresh] = self.inner.values(coalitions[fresh])
            self.n_evaluations += fresh.size
        return out


def end_point_coalitions(n_players: int) -> np.ndarray:
    """bool (2d + 2, d): ∅, N, the singletons, the complements of the singletons."""
    d = n_players
    masks = np.zeros((2 * d + 2, d), dtype=bool)
    masks[1] = True
    masks[2 : 2 + d] = np.eye(d, dtype=bool)
    masks[2 + d :] = ~np.eye(d, dtype=bool)
    return masks


# where the end points of one or two players are found among the first distinct ones
_REPEATED_END_POINTS = {1: [0, 1, 1, 0], 2: [0, 1, 2, 3, 3, 2]}


def distinct_end_points(n_players: int) -> int:
    """Distinct coalitions among :func:`end_point_coalitions` (with one or two players
    the singletons are also complements)."""
    return {1: 2, 2: 4}.get(n_players, 2 * n_players + 2)


def high_order_share(values) -> float:
    """r of the module notes from the values (2d + 2,) or (2d + 2, k) of
    :func:`end_point_coalitions`, over all outputs together.

    Examples
    --------
    >>> from skshapley.games import UnanimityGame
    >>> game = UnanimityGame([[1, 1, 1, 1]])  # four players needed together
    >>> high_order_share(game.values(end_point_coalitions(4)))  # |1 - 2| / (2 + 1)
    0.3333333333333333
    """
    values = as_matrix(np.asarray(values, dtype=np.float64))
    d = (values.shape[0] - 2) // 2
    first = values[2 : 2 + d] - values[0]
    last = values[1] - values[2 + d :]
    delta = values[1] - values[0]
    gap = np.abs(delta - (first + last).sum(axis=0) / 2).sum()
    scale = (np.abs(first + last).sum(axis=0) / 2 + np.abs(delta)).sum()
    return float(gap / scale) if scale > 0 else 0.0


def adaptive_shapley(game, budget: int, *, regression="surrogate", quantile_level=0.95,
                     random_state=None, **options):
    """Shapley values at a small budget: the end points first, then Stratified SVARM
    when they show interactions of three or more players (:func:`high_order_share`
    above ``HIGH_ORDER_SHARE``) and the budget buys SVARM's least design, else the
    ``regression`` estimator on a design that holds the end points.

    Parameters
    ----------
    game : Game
    budget : int
        Coalition evaluations in all (the 2d + 2 end points included).
    regression : {"surrogate", "leverage", "kernel"}, default="surrogate"
    quantile_level : float, default=0.95
    random_state : None, int or Generator
    **options
        Passed to the regression estimator (e.g. ``max_cv_terms``).

    Returns
    -------
    ShapleyResult
        ``method`` names the estimator that ran ("svarm" or ``regression``).

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.games import AdditiveGame
    >>> result = adaptive_shapley(AdditiveGame(np.arange(8.0)), 40, random_state=0)
    >>> result.method, result.n_evaluations, bool(np.allclose(result.values, np.arange(8)))
    ('surrogate', 40, True)
    """
    d = game.n_players
    coalitions = end_point_coalitions(d)
    if budget < coalitions.shape[0]:
        return regression_shapley(game, budget, method=regression,
                                  quantile_level=quantile_level, random_state=random_state,
                                  **options)
    # with one or two players the last end points repeat the first: read each once
    distinct = np.asarray(game.values(coalitions[:distinct_end_points(d)]), dtype=np.float64)
    ends = distinct[_REPEATED_END_POINTS.get(d, slice(None))]
    share = high_order_share(ends)
    if share > HIGH_ORDER_SHARE and budget >= minimum_svarm_budget(d):
        remembered = _Remembered(game, ends)
        result = svarm_shapley(remembered, budget, quantile_level=quantile_level,
                               random_state=random_state)
    else:
        remembered = _WithEndPoints(game, ends)
        result = regression_shapley(remembered, budget, method=regression,
                                    enumerate_sizes=(1,), quantile_level=quantile_level,
                                    random_state=random_state, **options)
    # the end points were read before the estimator's own count started
    return replace(result, n_evaluations=remembered.n_evaluations)


ADAPTIVE = MethodRecord(
    name="adaptive",
    run=lambda game, budget, *, tol=None, random_state=None, **options: adaptive_shapley(
        game, budget, random_state=random_state, **options),
    minimum_budget=lambda n_players, unit=1: 2 * n_players + 2,
    cost=lambda d, budget, k: surrogate_cost(d, budget, k),
)
