"""Top-k identification (ALGORITHMS.md §4): correct sets, PAC guarantee, budgets, ties."""

import numpy as np
import pytest

from skshapley.approximators import TOPK_METHODS, exact_shapley, topk_shapley
from skshapley.games import AdditiveGame, CallableGame, UnanimityGame

SAMPLING = [m for m in TOPK_METHODS if m not in ("exact", "regression")]
PAC_METHODS = ["cmcs_at_k", "greedy_cmcs", "cmcs", "sampling_shap_at_k"]


def inclusion_exclusion_error(phi, chosen, k):
    """rho_inc+exc of §4.1 (closed form)."""
    kth = np.sort(phi)[::-1][k - 1]
    inside = np.zeros(phi.shape[0], dtype=bool)
    inside[chosen] = True
    terms = [0.0, np.max(kth - phi[inside])]
    if (~inside).any():
        terms.append(np.max(phi[~inside] - kth))
    return max(terms)


def gapped_game():
    """Sum of unanimity games: singletons give clear gaps, pairs and triples give every
    marginal contribution a variance, so the sampling methods have work to do.

    Shapley values (closed form, sum_T c_T / |T|): about 1.18, 0.97, 0.78, 0.63, 0.43,
    0.25, 0.12, 0.05 — at k = 3 the gap at the cut is 0.15.
    """
    singles = np.eye(8, dtype=bool)
    pairs = np.zeros((3, 8), dtype=bool)
    pairs[0, [0, 7]] = pairs[1, [1, 6]] = pairs[2, [3, 4]] = True
    triple = np.zeros((1, 8), dtype=bool)
    triple[0, [2, 5, 6]] = True
    carriers = np.vstack([singles, pairs, triple])
    coefficients = np.concatenate([[1.0, 0.9, 0.7, 0.5, 0.3, 0.2, 0.0, 0.0],
                                   [0.3, 0.1, 0.25], [0.24]])
    return UnanimityGame(carriers, coefficients)


def table_game(n, seed, noise=0.3):
    """A random game: additive part with decreasing weights plus i.i.d. noise per
    coalition (so marginal contributions vary a lot)."""
    rng = np.random.default_rng(seed)
    masks = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
    table = masks @ np.linspace(1.0, 0.1, n) + noise * rng.normal(size=2**n)
    powers = 1 << np.arange(n)
    return lambda: CallableGame(lambda S: table[S.astype(np.int64) @ powers], n)


def test_gapped_game_closed_form():
    phi = gapped_game().exact_values()
    assert np.argsort(-phi, kind="stable")[:3].tolist() == [0, 1, 2]
    np.testing.assert_allclose(exact_shapley(gapped_game()).values, phi, atol=1e-12)


@pytest.mark.parametrize("method", PAC_METHODS)
def test_pac_sets_correct_with_probability_one_minus_delta(method):
    # PAC mode (δ = 0.05, ε = 0.01 below the 0.15 gap): a returned set is correct,
    # unless the (1 - δ) event fails; over 20 seeds at most 20 δ = 1 miss may happen, and
    # a second would refute the guarantee at the 26 % level (binomial tail).
    correct = 0
    for seed in range(20):
        result = topk_shapley(gapped_game(), 3, method=method, delta=0.05, epsilon=0.01,
                              budget=200_000, random_state=seed)
        assert result.pac_satisfied
        correct += sorted(result.top_k.tolist()) == [0, 1, 2]
    assert correct >= 19


def test_pac_guarantee_on_noisy_game_with_small_gaps():
    # A gap of 0.06 at the cut, marginal contributions with std ~0.2: the rule must keep
    # sampling. The rate of rho <= epsilon must reach 1 - delta (here 0.9) over 20 runs.
    make = table_game(7, seed=3, noise=0.15)
    phi = exact_shapley(make()).values
    delta, epsilon, k = 0.1, 0.02, 3
    good, used = 0, []
    for seed in range(20):
        result = topk_shapley(make(), k, method="cmcs_at_k", delta=delta, epsilon=epsilon,
                              random_state=seed)
        good += inclusion_exclusion_error(phi, result.top_k, k) <= epsilon
        used.append(result.n_evaluations)
    assert good / 20 >= 1 - delta
    assert min(used) > 30 * 8  # it really sampled past the warm-up


def test_cmcs_at_k_spends_less_than_cmcs_under_pac():
    # The point of CMCS@K (Table 1 of [P]): the same PAC stop for fewer evaluations.
    make = table_game(7, seed=3, noise=0.15)
    at_k = [topk_shapley(make(), 3, method="cmcs_at_k", epsilon=0.02, delta=0.1,
                         random_state=s).n_evaluations for s in range(5)]
    plain = [topk_shapley(make(), 3, method="cmcs", epsilon=0.02, delta=0.1,
                          random_state=s).n_evaluations for s in range(5)]
    assert np.mean(at_k) < np.mean(plain)


@pytest.mark.parametrize("method", ["cmcs", "approshapley", "cmcs_identical"])
def test_estimates_converge_to_exact_values(method):
    make = table_game(6, seed=1)
    phi = exact_shapley(make()).values
    small = topk_shapley(make(), 2, method=method, budget=500, pac_stop=False, random_state=0)
    large = topk_shapley(make(), 2, method=method, budget=12_000, pac_stop=False,
                         random_state=0)
    # Unbiased means (§4.2 Prop. 5.2): within 5 standard errors for every player (a
    # Bonferroni-safe margin for 6 players), and the error bars shrink like 1/sqrt(M)
    # (24 times the budget: about 1/4.9; 1/3 allows for the noise of standard errors
    # estimated from ~40 observations, ~11 % each).
    assert np.all(np.abs(large.values - phi) <= 5 * large.std_errors)
    assert np.all(large.std_errors < small.std_errors / 3)
    assert np.all(large.confidence_intervals[:, 0] <= phi)
    assert np.all(large.confidence_intervals[:, 1] >= phi)


def test_cmcs_round_reuses_reference_value():
    # CMCS makes n observations per n + 1 calls (§4.2): with every call paid for, a
    # budget of 2 + 7 (n + 1) at n = 6 buys exactly 7 full rounds... minus the free calls
    # at S = ∅ or N; the counts must match the evaluations spent.
    game = AdditiveGame(np.arange(6.0))
    result = topk_shapley(game, 2, method="cmcs", budget=2 + 7 * 7, pac_stop=False,
                          random_state=0)
    assert result.n_samples.min() >= 7
    assert result.n_samples.sum() >= 6 * (result.n_evaluations - 2) / 7


@pytest.mark.parametrize("method", SAMPLING)
@pytest.mark.parametrize("budget", [2, 3, 5, 17, 64, 301])
def test_budget_never_exceeded_and_counted_exactly(method, budget):
    make = table_game(6, seed=2)
    game = make()
    result = topk_shapley(game, 2, method=method, budget=budget, pac_stop=False,
                          random_state=budget)
    assert result.n_evaluations <= budget
    # The game counts every call it received (no cache): the same number.
    assert game.n_evaluations == result.n_evaluations
    # The guards leave at most 3 calls unspent (§4.8 item 5).
    assert result.n_evaluations >= min(budget, 2) and budget - result.n_evaluations <= 3


@pytest.mark.parametrize("method", PAC_METHODS)
def test_pac_mode_respects_the_cap(method):
    make = table_game(7, seed=3)
    game = make()
    result = topk_shapley(game, 3, method=method, epsilon=0.0, budget=700, random_state=0)
    assert not result.pac_satisfied  # epsilon = 0 cannot be certified with noise
    assert game.n_evaluations == result.n_evaluations <= 700


def test_unanimity_game_members_are_the_top_k():
    game = UnanimityGame([[False, True, False, True, True, False]])
    result = topk_shapley(game, 3, method="cmcs_at_k", epsilon=1e-3, budget=50_000,
                          random_state=0)
    assert sorted(result.top_k.tolist()) == [1, 3, 4]
    # The rule certifies the set, not the values; the intervals still cover them.
    low, high = result.confidence_intervals[[1, 3, 4]].T
    assert np.all(low <= 1 / 3) and np.all(high >= 1 / 3)


def test_ties_broken_by_lower_index():
    # Players 1, 2 and 3 are tied at the cut of k = 2: the eligible sets are {0, j}; the
    # stated rule picks the lower index.
    game = AdditiveGame([2.0, 1.0, 1.0, 1.0, 0.0])
    assert topk_shapley(game, 2, method="exact").top_k.tolist() == [0, 1]
    for method in PAC_METHODS:
        # Additive games have no sampling noise: estimates are exact ties too.
        result = topk_shapley(AdditiveGame([2.0, 1.0, 1.0, 1.0, 0.0]), 2, method=method,
                              budget=10_000, random_state=0)
        assert result.top_k.tolist() == [0, 1]


def test_ties_in_noisy_game_give_an_eligible_set():
    # Two identical players at the cut: any choice is eligible, and the PAC rule must
    # still stop (their intervals overlap, but the gap rule allows epsilon).
    base = gapped_game()
    carriers = np.vstack([base.carriers, np.zeros((1, 8), dtype=bool)])
    carriers[-1, [2, 3]] = True
    coefficients = np.concatenate([base.coefficients, [0.0]])
    coefficients[3] = coefficients[2] + 0.04  # player 3 gets what 2 gets from its triple
    tied = UnanimityGame(carriers, coefficients)
    phi = tied.exact_values()
    for seed in range(5):
        result = topk_shapley(UnanimityGame(carriers, coefficients), 3, epsilon=0.05,
                              budget=100_000, random_state=seed)
        assert inclusion_exclusion_error(phi, result.top_k, 3) <= 0.05


def test_exact_method_and_single_player():
    game = gapped_game()
    result = topk_shapley(game, 3, method="exact")
    np.testing.assert_allclose(result.values, game.exact_values(), atol=1e-12)
    assert result.n_evaluations == 2**8 and result.pac_satisfied
    one = topk_shapley(AdditiveGame([0.5]), 1, method="cmcs", budget=10, pac_stop=False)
    assert one.top_k.tolist() == [0] and one.values[0] == 0.5 and one.n_evaluations == 2
    # v(N) - v(∅) is exact: no error, a certified choice, whatever the method
    for method in ("cmcs_at_k", "greedy_cmcs", "cmcs", "sampling_shap_at_k"):
        alone = topk_shapley(AdditiveGame([0.5]), 1, method=method, budget=10)
        assert alone.std_errors[0] == 0 and alone.pac_satisfied, method
        np.testing.assert_array_equal(alone.confidence_intervals, [[0.5, 0.5]])


def test_k_equal_to_n_players_selects_everyone():
    result = topk_shapley(table_game(5, 0)(), 5, budget=1000, random_state=0)
    assert sorted(result.top_k.tolist()) == [0, 1, 2, 3, 4] and result.pac_satisfied


def test_same_seed_same_result_other_seed_differs():
    make = table_game(6, seed=4)
    a = topk_shapley(make(), 2, method="greedy_cmcs", budget=2000, pac_stop=False,
                     random_state=7)
    b = topk_shapley(make(), 2, method="greedy_cmcs", budget=2000, pac_stop=False,
                     random_state=7)
    c = topk_shapley(make(), 2, method="greedy_cmcs", budget=2000, pac_stop=False,
                     random_state=8)
    np.testing.assert_array_equal(a.values, b.values)
    assert not np.array_equal(a.values, c.values)


def test_greedy_cmcs_focuses_on_the_cut():
    # After the warm-up Greedy CMCS samples players in doubtful pairs more often (§4.4.3):
    # the clear winner 0 and loser 7 of a gapped game get fewer observations than the
    # players near the cut.
    result = topk_shapley(gapped_game(), 3, method="greedy_cmcs", budget=6_000,
                          pac_stop=False, random_state=0)
    assert result.n_samples[[2, 3]].min() > result.n_samples[[0, 7]].max()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"k": 0}, "'k' parameter"), ({"k": 9}, "'k' parameter"),
     ({"k": 2, "method": "magic"}, "'method' parameter"),
     ({"k": 2, "method": "exact", "budget": 100}, "too small for method='exact'"),
     ({"k": 2, "delta": 1.5}, "'delta' parameter"),
     ({"k": 2, "epsilon": -1.0}, "'epsilon' parameter"),
     ({"k": 2, "budget": 1}, "'budget' parameter"),
     ({"k": 2, "pac_stop": False}, "needs a 'budget'"),
     ({"k": 2, "method": "regression"}, "spends a fixed budget"),
     ({"k": 2, "method": "regression", "budget": 10}, "too small for method='regression'")],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        topk_shapley(gapped_game(), **kwargs)


def test_multi_output_game_is_refused():
    game = CallableGame(lambda S: np.column_stack([S.sum(1), S.sum(1)]).astype(float), 3)
    with pytest.raises(ValueError, match="one output"):
        topk_shapley(game, 1, budget=100)


def test_regression_method_spends_the_budget_and_finds_the_set():
    # The library's own estimator at a fixed budget: exact (intervals of width 0) when 2^n
    # fits, otherwise estimates with finite intervals; never over budget; the correct set
    # on the gapped game in almost every seeded run (the gap is 0.15).
    exact = topk_shapley(gapped_game(), 3, method="regression", budget=256)
    assert exact.top_k.tolist() == [0, 1, 2] and exact.pac_satisfied
    np.testing.assert_allclose(exact.values, gapped_game().exact_values(), atol=1e-12)
    hits = 0
    for seed in range(40):
        make = table_game(8, seed=seed, noise=0.05)
        game = make()
        result = topk_shapley(game, 3, method="regression", budget=120, random_state=seed)
        assert result.n_evaluations <= 120 and game.n_evaluations <= 120
        assert np.all(np.isfinite(result.confidence_intervals))
        assert result.method == "regression"
        hits += result.top_k.tolist() == [0, 1, 2]
    assert hits >= 36


def test_the_warm_up_is_min_samples_full_cmcs_rounds():
    # CMCS_WARM_UP_ROUNDS full rounds of n + 1 evaluations (v(S) and n toggles) before
    # CMCS@K turns to the pair at the cut: a budget that ends inside it spends it all.
    from skshapley.approximators import CMCS_WARM_UP_ROUNDS, cmcs_warm_up_evaluations

    n = 6
    assert cmcs_warm_up_evaluations(n) == CMCS_WARM_UP_ROUNDS * (n + 1)
    budget = cmcs_warm_up_evaluations(n) // 2
    result = topk_shapley(AdditiveGame(np.arange(n, dtype=float)), 2, budget=budget,
                          random_state=0)
    assert result.n_evaluations == budget
    assert not result.pac_satisfied  # no player has min_samples observations yet


def test_public_pac_helpers():
    from skshapley.approximators import bonferroni_z, order_players, pac_rule_holds

    values = np.array([0.3, 0.9, 0.3, 0.1])
    assert order_players(values).tolist() == [1, 0, 2, 3]  # ties: lower index first
    assert bonferroni_z(0.01, 4) > bonferroni_z(0.01, 1)
    assert pac_rule_holds(values, values, values, 2, 0.0)  # 0.3 vs 0.3: within epsilon 0
    assert not pac_rule_holds(values, values - 0.1, values + 0.1, 2, 0.0)
    assert pac_rule_holds(values, values - 0.1, values + 0.1, 4, 0.0)  # k = everyone
