"""The adaptive estimator of small budgets: the game's end points choose between
Stratified SVARM (games of high-order interactions) and the regression."""

import numpy as np
import pytest
from game_helpers import CountingGame

from skshapley.approximators import shapley_values
from skshapley.approximators._adaptive import (
    HIGH_ORDER_SHARE,
    adaptive_shapley,
    end_point_coalitions,
    high_order_share,
)
from skshapley.approximators._regression import regression_shapley
from skshapley.games import AdditiveGame, CallableGame, UnanimityGame


def _unanimity_sum(d, n_terms, seed, max_size=None):
    """A sum of unanimity games with random carriers (sizes 1..max_size) and weights in
    [-1, 1]: the benchmark games of Kolpaczki et al. (AAAI 2024)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size or d, size=n_terms, endpoint=True)
    carriers = np.zeros((n_terms, d), dtype=bool)
    for t, s in enumerate(sizes):
        carriers[t, rng.choice(d, s, replace=False)] = True
    return UnanimityGame(carriers, rng.random(n_terms) * 2 - 1)


def test_the_share_is_zero_up_to_pairs_and_grows_with_the_order():
    # interactions of at most two players: the end points explain the whole game
    pairs = UnanimityGame([[1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 0, 1, 0]], [2.0, -1, 3])
    assert high_order_share(pairs.values(end_point_coalitions(5))) == pytest.approx(0.0)
    shares = [high_order_share(UnanimityGame([[1] * k + [0] * (6 - k)]).values(
        end_point_coalitions(6))) for k in (3, 4, 6)]
    # |1 - k/2| / (k/2 + 1): 1/5, 1/3, 1/2
    np.testing.assert_allclose(shares, [1 / 5, 1 / 3, 1 / 2])


@pytest.mark.parametrize("budget", [26, 40, 60])
def test_an_additive_game_goes_to_the_regression_within_the_budget(budget):
    game = CountingGame(AdditiveGame(np.arange(1.0, 13.0)))
    result = adaptive_shapley(game, budget, random_state=0)
    assert result.method == "surrogate"
    np.testing.assert_allclose(result.values, np.arange(1.0, 13.0), atol=1e-9)
    # every coalition evaluated once: the end points are not read twice
    assert result.n_evaluations == game.count <= budget


@pytest.mark.parametrize("d", [2, 3, 5])
def test_few_players_count_each_coalition_once(d):
    # with two players the singletons are the complements: read once, counted once
    game = CountingGame(AdditiveGame(np.arange(1.0, d + 1.0)))
    result = adaptive_shapley(game, 2 * d + 2 + 4, random_state=0)
    np.testing.assert_allclose(result.values, np.arange(1.0, d + 1.0), atol=1e-9)
    assert result.n_evaluations == game.count <= 2 * d + 6


def test_the_served_end_points_are_the_games_own_values():
    # the regression on end points served from memory equals the regression that reads
    # every coalition of its design from the game, in every output
    rng = np.random.default_rng(3)
    bits = (np.arange(2**7)[:, None] >> np.arange(7)) & 1
    table = (bits @ rng.normal(size=7))[:, None] + 0.01 * rng.normal(size=(2**7, 3))
    game = CallableGame(lambda S: table[(S.astype(int) << np.arange(7)).sum(axis=1)], 7)
    assert high_order_share(game.values(end_point_coalitions(7))) < HIGH_ORDER_SHARE
    served = adaptive_shapley(game, 40, random_state=0)
    read = regression_shapley(game, 40, method="surrogate", enumerate_sizes=(1,),
                              random_state=0)
    np.testing.assert_array_equal(served.values, read.values)
    np.testing.assert_array_equal(served.std_errors, read.std_errors)
    assert served.n_evaluations == read.n_evaluations == 40


def test_a_game_of_high_order_goes_to_svarm_within_the_budget():
    game = CountingGame(_unanimity_sum(12, 50, seed=1))
    assert high_order_share(game.inner.values(end_point_coalitions(12))) > HIGH_ORDER_SHARE
    result = adaptive_shapley(game, 60, random_state=0)
    assert result.method == "svarm"
    assert result.n_evaluations == game.count <= 60
    assert np.isfinite(result.std_errors).all()


def test_several_outputs_share_one_choice():
    table = np.random.default_rng(0).normal(size=(2**8, 2))
    game = CallableGame(lambda S: table[(S.astype(int) << np.arange(8)).sum(axis=1)], 8)
    result = adaptive_shapley(game, 40, random_state=0)
    assert result.values.shape == (8, 2)
    assert result.n_evaluations <= 40


def test_auto_at_small_budgets_beats_the_regression_on_high_order_games():
    # 5d and 8d on sums of unanimity games of any order (d = 12): auto chose the
    # surrogate alone before (mean squared error 0.32 and 0.054 at 60 and 100
    # evaluations); with the end points it is SVARM's (0.07 and 0.036)
    errors = {"auto": [], "surrogate": []}
    for seed in range(8):
        game = _unanimity_sum(12, 50, seed)
        truth = game.exact_values()
        for method in errors:
            result = shapley_values(game, method=method, budget=60, random_state=seed)
            errors[method].append(np.mean((result.values - truth) ** 2))
    assert np.mean(errors["auto"]) < 0.5 * np.mean(errors["surrogate"])


def test_auto_at_small_budgets_keeps_the_regression_on_low_order_games():
    # carriers of at most 3 players: the end points keep the regression, where SVARM
    # would be 10x worse
    errors = {"auto": [], "svarm": []}
    for seed in range(8):
        game = _unanimity_sum(12, 50, seed, max_size=3)
        truth = game.exact_values()
        for method in errors:
            result = shapley_values(game, method=method, budget=60, random_state=seed)
            errors[method].append(np.mean((result.values - truth) ** 2))
    assert np.mean(errors["auto"]) < 0.3 * np.mean(errors["svarm"])
