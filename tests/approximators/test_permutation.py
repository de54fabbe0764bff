import numpy as np
import pytest
from game_helpers import CountingGame
from scipy.stats import binom

from skshapley.approximators import exact_shapley, permutation_shapley
from skshapley.games import AdditiveGame, CallableGame, UnanimityGame
from skshapley.permutations import Antithetic, MonteCarlo


def _mixed_game(d=6):
    carriers = [[1, 1, 0, 0, 0, 0], [0, 1, 1, 1, 0, 0], [0, 0, 0, 1, 1, 0], [1, 0, 0, 0, 0, 1]]
    return UnanimityGame(np.array(carriers)[:, :d], [3.0, -2.0, 1.5, 1.0])


@pytest.mark.parametrize("sampler", ["mc", "antithetic"])
@pytest.mark.parametrize("budget", [12, 13, 50, 101, 1000])
def test_budget_is_respected_exactly(sampler, budget):
    game = CountingGame(_mixed_game())
    result = permutation_shapley(game, budget, sampler=sampler, random_state=0)
    block = 2 if sampler == "antithetic" else 1
    n_orders = (budget - 2) // 5 // block * block
    assert game.count <= budget
    assert result.n_evaluations == game.count == 2 + 5 * n_orders
    assert result.n_permutations == n_orders


def test_budget_too_small_names_the_minimum():
    with pytest.raises(ValueError, match=r"budget=11 is too small for n_players=6.*at least 12"):
        permutation_shapley(_mixed_game(), 11)
    with pytest.raises(ValueError, match=r"at least 7"):
        permutation_shapley(_mixed_game(), 6, sampler="mc")


def test_single_player_game():
    result = permutation_shapley(AdditiveGame([2.5], intercept=1.0), 2)
    assert result.values.tolist() == [2.5] and result.n_evaluations == 2


def test_additive_game_is_exact_from_one_ordering():
    result = permutation_shapley(AdditiveGame([0.5, -1.0, 2.0, 7.0]), budget=5, sampler="mc",
                                 random_state=3)
    np.testing.assert_allclose(result.values, [0.5, -1.0, 2.0, 7.0], rtol=1e-12)


def test_determinism_and_seed_sensitivity():
    a = permutation_shapley(_mixed_game(), 200, random_state=7)
    b = permutation_shapley(_mixed_game(), 200, random_state=7)
    c = permutation_shapley(_mixed_game(), 200, random_state=8)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.std_errors, b.std_errors)
    assert not np.array_equal(a.values, c.values)


def test_sampler_instance_is_used_and_checked():
    result = permutation_shapley(_mixed_game(), 62, sampler=MonteCarlo(6, rng=1))
    assert result.n_permutations == 12
    with pytest.raises(ValueError, match="orderings of 5 players; the game has 6"):
        permutation_shapley(_mixed_game(), 62, sampler=Antithetic(5, rng=1))
    with pytest.raises(ValueError, match="'sampler' parameter must be one of"):
        permutation_shapley(_mixed_game(), 62, sampler="sobol-ish")


def test_early_stop_at_tol_spends_less_and_reports_convergence():
    game = _mixed_game()
    exact = exact_shapley(_mixed_game()).values
    result = permutation_shapley(game, 20_000, tol=0.5, check_interval=8, random_state=0)
    assert result.converged is True
    assert result.error_quantile < 0.5 and result.history[-1] == result.error_quantile
    assert result.n_evaluations < 20_000
    assert np.linalg.norm(result.values - exact) < 1.0
    loose = permutation_shapley(_mixed_game(), 200, tol=1e-9, random_state=0)
    assert loose.converged is False and loose.n_evaluations == 2 + 5 * 2 * (198 // 10)


def test_zero_variance_game_stops_at_first_check():
    result = permutation_shapley(AdditiveGame(np.arange(5.0)), 10_000, tol=1e-6, check_interval=4,
                                 random_state=0)
    assert result.converged and result.error_quantile == 0.0
    assert result.n_permutations == 8


def test_multi_output_game_matches_per_output_runs(rng):
    weights = 1 << np.arange(5)
    table = rng.normal(size=(32, 2))
    multi = CallableGame(lambda S: table[S.astype(np.int64) @ weights], 5)
    result = permutation_shapley(multi, 300, random_state=4)
    assert result.values.shape == (5, 2) and result.std_errors.shape == (5, 2)
    for output in range(2):
        single = CallableGame(lambda S, o=output: table[S.astype(np.int64) @ weights, o], 5)
        one = permutation_shapley(single, 300, random_state=4)
        np.testing.assert_allclose(result.values[:, output], one.values, rtol=1e-12)
        np.testing.assert_allclose(result.std_errors[:, output], one.std_errors, rtol=1e-12)


@pytest.mark.parametrize("sampler", ["mc", "antithetic"])
def test_standard_errors_cover_the_truth_at_the_advertised_rate(sampler):
    """|phi_hat - phi| <= 1.96 SE in about 95 % of cases, and ||err|| <= sigma_hat too.

    200 repetitions x 6 features; rows are correlated within a repetition, so bound the
    rate by a binomial interval on the 200 repetitions' mean (4 sigma, conservative), and
    allow for the t vs normal gap at 64 draws (coverage 0.946).
    """
    game_exact = exact_shapley(_mixed_game()).values
    n_reps, budget = 200, 2 + 5 * 128
    inside, overall = [], []
    for rep in range(n_reps):
        result = permutation_shapley(_mixed_game(), budget, sampler=sampler, random_state=rep)
        error = np.abs(result.values - game_exact)
        positive = result.std_errors > 0
        covered = error[positive] <= 1.959964 * result.std_errors[positive]
        inside.append(covered.mean())
        overall.append(np.linalg.norm(result.values - game_exact) <= result.error_quantile)
    sd = np.sqrt(0.95 * 0.05 / n_reps)
    assert abs(np.mean(inside) - 0.95) < 4 * sd + 0.01
    low, high = binom.ppf([1e-4, 1 - 1e-4], n_reps, 0.95) / n_reps
    assert low <= np.mean(overall) <= high


def test_orthogonal_spends_the_budget_beyond_whole_frames():
    """d = 6: frames of 10 orderings; 2 + 5 * 26 = 132 buys 26 orderings = 2 frames + 6."""
    game = CountingGame(_mixed_game())
    result = permutation_shapley(game, 132, sampler="orthogonal", random_state=0)
    assert result.n_permutations == 26 and result.n_evaluations == game.count == 132
    assert not result.risk_is_heuristic and result.n_draws == 2
    assert result.values.sum() == pytest.approx(3.5, abs=1e-12)  # v(N) - v(∅)


@pytest.mark.parametrize("sampler_class", ["SobolSphere", "ArgsortSobol"])
def test_rqmc_replicates_give_honest_error_bars(sampler_class):
    # §3.6: with R independently scrambled replicates the draws are the replicate means;
    # 2-SE intervals then cover like a t_{R-1} interval (0.936 for R = 16).
    from skshapley import permutations
    from skshapley.approximators import all_coalitions, exact_shapley
    from skshapley.games import CallableGame

    cls = getattr(permutations, sampler_class)
    d = 8
    X = all_coalitions(d).astype(float)
    table = X @ np.arange(1.0, d + 1) + 4 * X[:, 0] * X[:, 1] * X[:, 2] - 3 * X[:, 3] * X[:, 4]
    powers = 1 << np.arange(d)

    def game():
        return CallableGame(lambda S: table[S.astype(np.int64) @ powers], d)

    exact = exact_shapley(game()).values
    z = []
    for seed in range(80):
        result = permutation_shapley(game(), 2 + (d - 1) * 64,
                                     sampler=cls(d, rng=seed, replicates=16), random_state=seed)
        assert not result.risk_is_heuristic and result.n_draws == 16
        assert result.n_permutations == 64
        # players 5..7 are additive: exact in every ordering, SE 0
        z.append((result.values - exact)[:5] / result.std_errors[:5])
    assert 0.88 <= np.mean(np.abs(np.array(z)) < 2) <= 0.99
    single = permutation_shapley(game(), 2 + (d - 1) * 64, sampler=cls(d, rng=0),
                                 random_state=0)
    assert single.risk_is_heuristic
    with pytest.raises(ValueError, match="fewer than the sampler's 16 replicates"):
        permutation_shapley(game(), 2 + (d - 1) * 8, sampler=cls(d, rng=0, replicates=16))
    with pytest.raises(ValueError, match="'replicates' parameter"):
        cls(d, replicates=1)


def test_auto_sampler_takes_orthogonal_frames_only_when_their_error_bars_hold():
    # Orthogonal frames' standard errors rest on the number of frames: +-1.96 SE from 2
    # frames covers ~70 %; "auto" waits for 10 (covering ~92 %), else antithetic pairs.
    from skshapley.approximators import default_budget, resolve_sampler

    d = 6
    frame = 2 * (d - 1) * (d - 1)  # evaluations of one frame of 2 (d - 1) orderings
    assert resolve_sampler("auto", d, 2 + 9 * frame) == "antithetic"
    assert resolve_sampler("auto", d, 2 + 10 * frame) == "orthogonal"
    assert resolve_sampler("auto", 12, default_budget(12)) == "antithetic"
    truth = exact_shapley(_mixed_game()).values
    for budget in (2 + 2 * frame, 2 + 10 * frame):
        inside = []
        for rep in range(120):
            # (shapley_values would enumerate: these budgets are past 2^6)
            result = permutation_shapley(_mixed_game(), budget, random_state=rep,
                                         sampler=resolve_sampler("auto", d, budget))
            positive = result.std_errors > 0
            error = np.abs(result.values - truth)[positive]
            inside.append((error <= 1.959964 * result.std_errors[positive]).mean())
        assert np.mean(inside) > 0.85, (budget, np.mean(inside))  # 0.69 from 2 frames
