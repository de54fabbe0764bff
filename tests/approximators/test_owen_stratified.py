import numpy as np
import pytest

from skshapley.approximators import (
    METHOD_RECORDS,
    exact_shapley,
    owen_shapley,
    shapley_values,
    stratified_shapley,
)
from skshapley.exceptions import BudgetWarning
from skshapley.games import AdditiveGame, CallableGame, UnanimityGame

CARRIERS = np.array([[1, 1, 0, 0, 0, 0], [0, 1, 1, 1, 0, 0], [0, 0, 0, 1, 1, 0]], dtype=bool)


def _game():
    return UnanimityGame(CARRIERS, [3.0, -2.0, 1.5])  # player 5 is a dummy


EXACT = exact_shapley(_game()).values
METHODS = ["stratified", "owen", "owen_halved"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("budget", [None, 201, 999])
def test_budget_respected_and_dummy_zero(method, budget):
    budget = budget or METHOD_RECORDS[method].minimum_budget(6, 1)
    game = _game()
    result = METHOD_RECORDS[method].run(game, budget, random_state=0)
    assert result.n_evaluations == game.n_evaluations <= budget
    assert result.values[5] == 0.0 and result.method == method
    # through shapley_values, a budget past 2^6 = 64 enumerates instead
    if budget >= 64:
        assert shapley_values(_game(), method=method, budget=budget).method == "exact"


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
        runs = [METHOD_RECORDS[method].run(_game(), budget, random_state=s).values
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
        with pytest.warns(BudgetWarning, match="error cannot be estimated"):
            result = owen_shapley(game, METHOD_RECORDS["owen"].minimum_budget(6, 1), halved=halved,
                                  random_state=4)
        np.testing.assert_allclose(result.values, expected, rtol=1e-12)


@pytest.mark.parametrize("method", ["owen", "owen_halved"])
def test_owen_never_reports_a_zero_error_for_the_biased_deterministic_minimum(method):
    """At the minimum budget both runs use the masks ∅ and N: the two runs agree, so the
    spread between them is 0 although the estimate (1/2, 1/2, 1/2, 0) misses
    (1/3, 1/3, 1/3, 0); the error is unknown, hence inf, not 0."""
    game = UnanimityGame([[1, 1, 1, 0]])
    with pytest.warns(BudgetWarning, match="quadrature='stratified'"):
        result = METHOD_RECORDS[method].run(game, METHOD_RECORDS[method].minimum_budget(4, 1),
                                            random_state=0)
    np.testing.assert_allclose(result.values, [0.5, 0.5, 0.5, 0.0])
    assert np.isinf(result.std_errors).all() and np.isinf(result.error_quantile)
    # efficiency is not promised (documented): the values sum to 1.5, not v(N) - v(∅) = 1
    assert result.values.sum() == pytest.approx(1.5)


@pytest.mark.parametrize("halved", [False, True])
def test_owen_stratified_quadrature_is_unbiased_at_the_minimum_budget(halved):
    """One uniform q per cell: each run is unbiased, so the mean over seeds approaches
    (1/3, 1/3, 1/3, 0) where the fixed grid gives 1/2, and the runs differ."""
    game = UnanimityGame([[1, 1, 1, 0]])
    runs = [owen_shapley(game, 22, halved=halved, quadrature="stratified", random_state=s)
            for s in range(600)]
    values = np.array([r.values for r in runs])
    std_errors = np.array([r.std_errors for r in runs])
    spread = values[:, :3].std() / np.sqrt(values.shape[0])
    np.testing.assert_allclose(values[:, :3].mean(axis=0), 1 / 3, atol=4 * spread)
    assert (values[:, 3] == 0).all() and np.isfinite(std_errors).all()


@pytest.mark.parametrize("halved", [False, True])
def test_owen_standard_errors_use_every_mask_of_the_two_runs(halved):
    """Unanimity game, budget 202 (20 masks a run): the spread of the two run means was
    0 in 17-21 % of (seed, player) pairs although no estimate was exact, and +-1.96 SE
    covered 0.69; summing the spread of each (independent) mask leaves < 1 % zeros and
    covers >= 0.9 (0.94 and 0.94 over 600 seeds)."""
    game, truth = UnanimityGame([[1, 1, 1, 0]]), 1 / 3
    runs = [owen_shapley(game, 202, halved=halved, random_state=s) for s in range(200)]
    values = np.array([r.values for r in runs])[:, :3]
    std_errors = np.array([r.std_errors for r in runs])[:, :3]
    assert (std_errors > 0).mean() >= 0.97
    assert (np.abs(values - truth) <= 1.96 * std_errors).mean() >= 0.88
    assert all(r.n_draws >= 2 for r in runs)


def test_owen_reuses_the_cached_empty_and_grand_values():
    """The grid end points q = 0 and q = 1 give the masks ∅ and N, whose values are
    already known: two evaluations saved per run (§2.10, cost)."""
    game = _game()
    budget = 2 + 7 * 6  # M = 6 masks, two runs of Q + 1 = 3
    result = owen_shapley(game, budget, random_state=0)
    assert result.n_evaluations == game.n_evaluations <= budget - 2 * 2


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
    """Coverage of +-1.96 SE over 100 seeds at 2,000 evaluations: within [0.8, 1.0]."""
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


def _smooth_game():
    """The d = 8 game of the stratified calibration audit (tanh of a quadratic form)."""
    rng = np.random.default_rng(1)
    weights, bias = rng.normal(size=(8, 8)) / 8, rng.normal(size=8)

    def value(coalitions):
        linear = coalitions @ bias
        return np.tanh(linear + ((coalitions @ weights) * coalitions).sum(1)) \
            + 0.3 * np.sin(3 * linear)
    return CallableGame(value, 8)


def _stratified_coverage(budget, allocation, n_seeds):
    truth = exact_shapley(_smooth_game()).values
    inside, squared = [], []
    for seed in range(n_seeds):
        result = stratified_shapley(_smooth_game(), budget, allocation=allocation,
                                    random_state=seed)
        inside.append(np.abs(result.values - truth) <= 1.96 * result.std_errors)
        squared.append((result.values - truth) ** 2)
    return np.mean(inside), np.mean(squared)


@pytest.mark.parametrize("allocation", ["variance", "neyman"])
def test_stratified_standard_errors_cover_at_small_budgets(allocation):
    """480 evaluations, d = 8: unshrunk stratum variances covered 0.73 ("variance") and
    0.80 ("neyman") of +-1.96 SE intervals over 200 seeds; shrunk, 0.90 and 0.92, with a
    smaller MSE (4.7e-3 -> 2.8e-3, 3.9e-3 -> 2.4e-3)."""
    coverage, mse = _stratified_coverage(480, allocation, 200)
    assert coverage >= 0.86 and mse < 3.5e-3


@pytest.mark.slow
@pytest.mark.parametrize("allocation", ["variance", "neyman"])
@pytest.mark.parametrize("budget", [300, 480, 1000, 3000])
def test_stratified_standard_errors_cover_across_budgets(allocation, budget):
    coverage, _ = _stratified_coverage(budget, allocation, 1000)
    assert 0.88 <= coverage <= 0.97


def test_stratified_reports_satterthwaite_draws_for_t_intervals():
    """n_draws = 1 + the smallest Welch-Satterthwaite degrees of freedom: at least 2, at
    most the samples of a player's strata, and it widens error_quantile by t/z."""
    result = stratified_shapley(_smooth_game(), 480, random_state=0)
    assert 2 <= result.n_draws <= (480 - 18) // 2
    from scipy.stats import chi2, norm
    from scipy.stats import t as student_t
    assert result.error_quantile > np.sqrt(chi2.ppf(0.95, 8)) * result.std_errors.min()
    wide = student_t.ppf(0.975, result.n_draws - 1) / norm.ppf(0.975)
    assert wide > 1.0
    for seed in range(20):
        assert stratified_shapley(_smooth_game(), 1000, random_state=seed).n_draws >= 10


def test_stratified_spends_the_whole_budget_with_one_exploration_sample():
    """budget 130, d = 6: 58 samples, 24 inner strata with one exploration sample each;
    the other 34 are all spread (10 used to be dropped by the even split)."""
    game = _game()
    with pytest.warns(BudgetWarning, match="one exploration sample"):
        result = stratified_shapley(game, 130, random_state=0)
    assert result.n_evaluations == game.n_evaluations == 130


def test_svarm_is_unbiased_and_its_error_bars_cover():
    """Stratified SVARM (Kolpaczki et al. 2024): the mean over seeds is the Shapley value
    within its standard error, and t intervals on its Satterthwaite draws cover."""
    from scipy.stats import t as student_t

    from skshapley.approximators._svarm import minimum_svarm_budget

    assert minimum_svarm_budget(6) == 2 + 12 + 3 + 2 + 2  # rounds of sizes 2, 3, 4
    runs, inside = [], []
    for seed in range(200):
        game = _game()
        result = shapley_values(game, method="svarm", budget=50, random_state=seed)
        assert result.method == "svarm" and game.n_evaluations == result.n_evaluations <= 50
        runs.append(result.values)
        q = student_t.ppf(0.975, result.n_draws - 1)
        inside.append(np.abs(result.values - EXACT) <= q * result.std_errors)
    runs = np.array(runs)
    standard_error = runs.std(axis=0) / np.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(axis=0) - EXACT) <= 4 * standard_error + 1e-12)
    assert 0.9 <= np.mean(inside) <= 0.995
    with pytest.raises(ValueError, match=r"budget=20 is too small for method='svarm'"):
        shapley_values(_game(), method="svarm", budget=20)
