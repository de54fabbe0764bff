import numpy as np
import pytest
from oracles import set_function, shapley_by_orderings, shapley_by_subsets

from skshapley.approximators import exact_shapley, shapley_values
from skshapley.games import AdditiveGame, CallableGame, UnanimityGame


def _random_table_game(rng, d, k=None):
    shape = (2**d,) if k is None else (2**d, k)
    table = rng.normal(size=shape)
    weights = 1 << np.arange(d)
    return CallableGame(lambda S: table[S.astype(np.int64) @ weights], d), table


@pytest.mark.parametrize("d", [1, 2, 3, 5, 6])
def test_exact_matches_brute_force_orderings_and_subset_formula(rng, d):
    game, _ = _random_table_game(rng, d)
    result = exact_shapley(game)
    value = set_function(game)
    for oracle in (shapley_by_orderings, shapley_by_subsets):
        np.testing.assert_allclose(result.values, oracle(value, d), rtol=1e-10, atol=1e-12)


def test_exact_counts_two_to_the_d_and_reports_endpoints(rng):
    game, table = _random_table_game(rng, 7)
    result = exact_shapley(game, budget=128)
    assert result.n_evaluations == 128 == game.n_evaluations
    assert result.empty_value == table[0] and result.grand_value == table[-1]
    assert result.std_errors.tolist() == [0.0] * 7 and result.converged


def test_exact_multi_output(rng):
    game, table = _random_table_game(rng, 4, k=3)
    result = exact_shapley(game)
    assert result.values.shape == (4, 3)
    for output in range(3):
        def column(S, o=output):
            return table[S.astype(np.int64) @ (1 << np.arange(4)), o]

        single = CallableGame(column, 4)
        np.testing.assert_allclose(result.values[:, output], exact_shapley(single).values,
                                   rtol=1e-12)


def test_exact_closed_forms():
    game = UnanimityGame([[1, 1, 0, 0, 1], [0, 0, 1, 1, 0], [0, 0, 0, 0, 1]], [1.0, -2.0, 0.5])
    np.testing.assert_allclose(exact_shapley(game).values, game.exact_values(), rtol=1e-12)
    additive = AdditiveGame([0.5, -1.0, 2.0], intercept=4.0)
    np.testing.assert_allclose(exact_shapley(additive).values, [0.5, -1.0, 2.0], rtol=1e-12)


def test_exact_refuses_large_games_without_evaluating():
    game = CallableGame(lambda S: S.sum(axis=1), 21)
    with pytest.raises(ValueError, match=r"2\*\*21 = 2097152 .* pass max_players=21"):
        exact_shapley(game)
    assert game.n_evaluations == 0


def test_exact_refuses_small_budget():
    with pytest.raises(ValueError, match=r"budget=10 is too small for method='exact'"):
        exact_shapley(AdditiveGame(np.ones(4)), budget=10)


def test_auto_enumerates_when_the_budget_covers_all_coalitions():
    game = UnanimityGame([[1, 1, 1, 0]])
    assert shapley_values(game, budget=16).method == "exact"
    below = shapley_values(UnanimityGame([[1, 1, 1, 0]]), budget=15, random_state=0)
    assert below.method == "surrogate"  # the most accurate per evaluation below 2^d


def test_unknown_and_planned_methods_list_the_accepted_values():
    with pytest.raises(ValueError, match=r"'method' parameter of shapley_values must be a "
                       r"str among .*'permutation'.* Got 'magic' instead"):
        shapley_values(AdditiveGame([1.0]), method="magic")
    with pytest.raises(ValueError, match="reads a model, not a game"):
        shapley_values(AdditiveGame([1.0]), method="tree")
