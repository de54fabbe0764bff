import numpy as np
import pytest

from skshapley.approximators import (
    exact_shapley,
    method_minimum_budget,
    owen_shapley,
    shapley_values,
    stratified_shapley,
)
from skshapley.exceptions import BudgetWarning
from skshapley.games import AdditiveGame, UnanimityGame

CARRIERS = np.array([[1, 1, 0, 0, 0, 0], [0, 1, 1, 1, 0, 0], [0, 0, 0, 1, 1, 0]], dtype=bool)


def _game():
    return UnanimityGame(CARRIERS, [3.0, -2.0, 1.5])  # player 5 is a dummy


EXACT = exact_shapley(_game()).values
METHODS = ["stratified", "owen", "owen_halved"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("budget", [None, 201, 999])
def test_budget_respected_and_dummy_zero(method, budget):
    budget = budget or method_minimum_budget(method, 6)
    game = _game()
    result = shapley_values(game, method=method, budget=budget, random_state=0)
    assert result.n_evaluations == game.n_evaluations <= budget
    assert result.values[5] == 0.0 and result.method == method


@pytest.mark.parametrize("method", METHODS)
def test_additive_games_are_exact(method):
    weights = np.array([0.5, -1.0, 2.0, 4.0])
    result = shapley_values(AdditiveGame(weights), method=method, budget=200, random_state=1)
    np.testing.assert_allclose(result.values, weights, rtol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_converges_to_exact_values(method):
    """RMSE falls with the budget and is small at 20,000 evaluations."""
    errors = []
    for budget in (500, 20_000):
        runs = [shapley_values(_game(), method=method, budget=budget, random_state=s).values
                for s in range(10)]
        errors.append(np.sqrt(np.mean((np.array(runs) - EXACT) ** 2)))
    assert errors[1] < errors[0] / 3 and errors[1] < 0.05


def test_owen_at_its_minimum_is_the_deterministic_end_point_average():
    """Q = 1: q in {0, 1} only, phi_j = (v({j}) - v(∅) + v(N) - v(N \\ {j})) / 2 (§2.10)."""
    game = _game()
    expected = []
    for j in range(6):
        single, rest = np.zeros(6, bool), np.ones(6, bool)
        single[j], rest[j] = True, False
        v = lambda mask: float(_game().values(mask[None, :])[0])  # noqa: E731
        expected.append((v(single) - 0.0 + 3.0 - 2.0 + 1.5 - v(rest)) / 2)
    for halved in (False, True):
        result = owen_shapley(game, method_minimum_budget("owen", 6), halved=halved, random_state=4)
        np.testing.assert_allclose(result.values, expected, rtol=1e-12)


def test_owen_halved_uses_complements():
    a = owen_shapley(_game(), 2 + 7 * 22, halved=True, quadrature="equal", random_state=0)
    b = owen_shapley(_game(), 2 + 7 * 22, halved=False, quadrature="equal", random_state=0)
    assert not np.array_equal(a.values, b.values)
    with pytest.raises(ValueError, match="'quadrature' parameter"):
        owen_shapley(_game(), 200, quadrature="simpson")


def test_minimum_budgets_are_named():
    with pytest.raises(ValueError, match=r"at least 110"):
        stratified_shapley(_game(), 100)
    with pytest.raises(ValueError, match=r"at least 30"):
        owen_shapley(_game(), 29)
    with pytest.warns(BudgetWarning, match="one exploration sample"):
        stratified_shapley(_game(), 110, random_state=0)


def test_stratified_standard_errors_are_roughly_calibrated():
    """Coverage of +-1.96 SE over 100 seeds at 2,000 evaluations: within [0.8, 1.0]
    (the variance-proportional allocation gives low-variance-looking strata few samples,
    so the SEs are somewhat optimistic)."""
    inside = []
    for seed in range(100):
        result = stratified_shapley(_game(), 2000, random_state=seed)
        inside.append(np.abs(result.values - EXACT)[:5] <= 1.96 * result.std_errors[:5])
    assert 0.8 <= np.mean(inside) <= 1.0


def test_tol_is_refused_for_methods_without_early_stopping():
    with pytest.raises(ValueError, match="tol is only supported by method='permutation'"):
        shapley_values(_game(), method="owen", budget=500, tol=0.1)


def test_neyman_allocation_is_also_calibrated_and_converges():
    runs = [stratified_shapley(_game(), 5000, allocation="neyman", random_state=s).values
            for s in range(10)]
    assert np.sqrt(np.mean((np.array(runs) - EXACT) ** 2)) < 0.1
    with pytest.raises(ValueError, match="'allocation' parameter"):
        stratified_shapley(_game(), 5000, allocation="optimal")
