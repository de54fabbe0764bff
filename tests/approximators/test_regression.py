"""Regression estimators (§9): exactness, efficiency, the model class each is exact on,
calibrated standard errors, budgets."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skshapley.approximators import (
    all_coalitions,
    exact_shapley,
    regression_shapley,
    resolve_method,
    shapley_values,
)
from skshapley.approximators._coalitions import combinations_array, paired_design, size_mass
from skshapley.approximators._regression import fit_design
from skshapley.exceptions import BudgetWarning
from skshapley.games import AdditiveGame, CallableGame, UnanimityGame

METHODS = ["kernel", "leverage", "kadd", "surrogate"]


def table_game(table, d):
    powers = 1 << np.arange(d)
    return CallableGame(lambda S: table[S.astype(np.int64) @ powers], d)


def random_table(d, k=None, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(2**d,) if k is None else (2**d, k))


def unanimity(d, carriers, coefficients):
    masks = np.zeros((len(carriers), d), dtype=int)
    for row, carrier in enumerate(carriers):
        masks[row, list(carrier)] = 1
    return UnanimityGame(masks, coefficients)


def test_design_keeps_every_size_mass_and_is_complementary():
    d = 9
    for n in (20, 100, 300, 510):
        design = paired_design(d, n, rng=np.random.default_rng(n))
        assert design.n_coalitions <= n
        coalitions = design.coalitions
        sizes = coalitions.sum(axis=1)
        assert np.all((sizes > 0) & (sizes < d))
        np.testing.assert_array_equal(coalitions[: design.n_pairs], ~coalitions[design.n_pairs :])
        assert np.unique(coalitions, axis=0).shape[0] == design.n_coalitions  # no repeats
        mass = size_mass(d)
        for s in np.unique(sizes):  # every drawn size carries exactly its kernel mass
            assert design.weights[sizes == s].sum() == pytest.approx(mass[s])


def test_complete_design_reproduces_exact_values():
    # The regression on every coalition is exact (Lundberg & Lee 2017, Thm 2; §9.2).
    d = 7
    table = random_table(d, k=2)
    design = paired_design(d, 2**d - 2, rng=np.random.default_rng(0))
    assert design.is_complete
    exact = exact_shapley(table_game(table, d)).values
    powers = 1 << np.arange(d)
    values = table[design.coalitions.astype(np.int64) @ powers]
    for method in ("kernel", "leverage", "kadd"):
        phi, _, _ = fit_design(method, design, values, table[0], table[-1] - table[0])
        np.testing.assert_allclose(phi, exact, atol=1e-10)


@pytest.mark.parametrize("method", METHODS)
def test_full_budget_is_exact(method):
    d = 6
    table = random_table(d)
    result = regression_shapley(table_game(table, d), 2**d, method=method, random_state=0)
    np.testing.assert_allclose(result.values, exact_shapley(table_game(table, d)).values,
                               atol=1e-12)
    assert result.n_evaluations == 2**d and np.all(result.std_errors == 0)


@pytest.mark.parametrize("method", METHODS)
def test_efficiency_holds_to_round_off(method):
    d = 11
    table = random_table(d, k=3, seed=1)
    for budget in (30, 200, 900):
        result = regression_shapley(table_game(table, d), budget, method=method,
                                    random_state=budget)
        np.testing.assert_allclose(result.values.sum(axis=0),
                                   result.grand_value - result.empty_value, atol=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_exact_on_two_additive_games_whatever_the_budget(method):
    # Pairing cancels the even part; a 2-additive game's odd part is first order, which
    # every estimator here fits exactly (and so symmetric players get equal values).
    d = 12
    game = unanimity(d, [(0,), (1, 2), (3, 4), (5,), (6, 7)], [1.0, 2.0, -1.5, 0.5, 3.0])
    exact = exact_shapley(game).values
    result = regression_shapley(game, 60, method=method, random_state=3)
    np.testing.assert_allclose(result.values, exact, atol=1e-10)
    assert result.values[1] == pytest.approx(result.values[2], abs=1e-12)
    assert abs(result.values[8]) < 1e-12  # a null player


def test_surrogate_captures_third_order_interactions_that_kernel_cannot():
    d = 10
    game = unanimity(d, [(0, 1, 2), (3,), (4, 5)], [4.0, 1.0, 2.0])
    exact = exact_shapley(game).values
    surrogate = regression_shapley(game, 400, method="surrogate", random_state=0)
    kernel = regression_shapley(game, 400, method="kernel", random_state=0)
    np.testing.assert_allclose(surrogate.values, exact, atol=1e-9)
    assert np.abs(kernel.values - exact).max() > 1e-3
    assert np.all(surrogate.std_errors < 1e-6)  # a perfect fit leaves nothing to vary


def test_surrogate_drops_triples_its_design_cannot_identify():
    # A triple chosen twice (or any set the design cannot separate) makes the final fit
    # singular; the surrogate then keeps the earlier-chosen half of its triples instead
    # of a minimum-norm solution (which had 8x the median error at 100 evaluations).
    from skshapley.approximators._surrogate import _full_rank_fit

    d = 8
    game = unanimity(d, [(0, 1, 2), (3,)], [4.0, 1.0])
    design = paired_design(d, 100, allocation="leverage", rng=np.random.default_rng(0))
    values = game.values(design.coalitions)
    pairs = design.n_pairs
    differences = (values[:pairs] - values[pairs:])[:, None]
    delta = np.array([game.values(np.ones((1, d), bool))[0]
                      - game.values(np.zeros((1, d), bool))[0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", BudgetWarning)
        terms, _, (phi, _, _) = _full_rank_fit(design, differences, delta, d,
                                                [(0, 1, 2), (0, 1, 2)])
    assert terms == [(j,) for j in range(d)] + [(0, 1, 2)]
    np.testing.assert_allclose(phi[:, 0], exact_shapley(game).values, atol=1e-9)


def test_kadd_is_paired_kernelshap():
    # Under pairing the even (second-order) terms are orthogonal to the odd part.
    d = 8
    table = random_table(d, seed=4)
    kadd = regression_shapley(table_game(table, d), 120, method="kadd", random_state=7)
    kernel = regression_shapley(table_game(table, d), 120, method="kernel", random_state=7)
    np.testing.assert_allclose(kadd.values, kernel.values, atol=1e-10)


@pytest.mark.parametrize("method", METHODS)
def test_multi_output_equals_one_output_at_a_time(method):
    # Stacked outputs (an explainer's rows) must not change each other's values: the
    # surrogate chooses its third-order terms output by output.
    d = 9
    table = random_table(d, k=2, seed=5)
    table[:, 1] += 3.0 * np.prod(all_coalitions(d)[:, :3], axis=1)  # one output interacts
    both = regression_shapley(table_game(table, d), 150, method=method, random_state=2)
    for k in range(2):
        one = regression_shapley(table_game(table[:, k], d), 150, method=method,
                                 random_state=2)
        np.testing.assert_allclose(both.values[:, k], one.values, atol=1e-12)
        np.testing.assert_allclose(both.std_errors[:, k], one.std_errors, atol=1e-12)


@pytest.mark.parametrize("method", ["kernel", "leverage", "surrogate"])
def test_two_sigma_intervals_cover_about_95_percent(method):
    # A non-additive game with exact values: 10 players, values of a smooth model with
    # interactions (products and a max), standard errors checked over seeded repeats.
    d = 10
    X = all_coalitions(d).astype(float)
    table = (X @ np.linspace(1, 2, d) + 3 * X[:, 0] * X[:, 1] - 2 * X[:, 2] * X[:, 3] * X[:, 4]
             + np.maximum(X[:, 5:].sum(axis=1) - 2, 0) ** 1.5)
    exact = exact_shapley(table_game(table, d)).values
    z = np.array([(r.values - exact) / r.std_errors for r in (
        regression_shapley(table_game(table, d), 200, method=method, random_state=seed)
        for seed in range(120))])
    coverage = np.mean(np.abs(z) < 2)
    assert 0.88 <= coverage <= 0.99, coverage


@settings(max_examples=30, deadline=None)
@given(d=st.integers(4, 11), extra=st.integers(0, 400), method=st.sampled_from(METHODS))
def test_budget_is_never_exceeded(d, extra, method):
    budget = min(2 + 2 * d + extra, 2**d - 1)
    game = table_game(random_table(d, seed=d), d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetWarning)
        result = regression_shapley(game, budget, method=method, random_state=extra)
    assert result.n_evaluations == game.n_evaluations <= budget
    assert np.all(np.isfinite(result.values))


def test_qmc_coalitions_are_flagged_heuristic():
    d = 10
    table = random_table(d, seed=6)
    result = regression_shapley(table_game(table, d), 300, method="kernel",
                                coalition_sampler="orthogonal", random_state=0)
    assert result.risk_is_heuristic and result.n_evaluations <= 300
    plain = regression_shapley(table_game(table, d), 300, method="kernel", random_state=0)
    assert not plain.risk_is_heuristic


def test_auto_policy_follows_the_table():
    assert resolve_method("auto", 10, 1024) == "exact"
    # up to 12 d the end points choose (the adaptive estimator), then the surrogate
    assert resolve_method("auto", 30, 10 * 30) == "adaptive"
    assert resolve_method("auto", 30, 12 * 30 + 1) == "surrogate"
    assert resolve_method("auto", 30, 50 * 30) == "surrogate"
    assert resolve_method("auto", 30, 50 * 30, tol=0.1) == "permutation"
    assert resolve_method("auto", 30, 60) == "permutation"  # below 2 + 2d
    game = AdditiveGame(np.arange(1.0, 31.0))
    result = shapley_values(game, budget=300, random_state=0)
    assert result.method == "surrogate"  # the additive game's end points say so
    np.testing.assert_allclose(result.values, np.arange(1.0, 31.0), atol=1e-9)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"method": "lasso"}, "'method' parameter of regression_shapley must be a str among"),
    ({"order": 0}, "'order' parameter"),
    ({"quantile_level": 1.0}, "'quantile_level'"),
    ({"coalition_sampler": "bogus"}, "'coalition_sampler' parameter"),
    ({"allocation": "bogus"}, "'allocation' parameter"),
])
def test_bad_parameters_are_named(kwargs, match):
    game = table_game(random_table(6), 6)
    with pytest.raises(ValueError, match=match):
        regression_shapley(game, 40, **kwargs)
    assert game.n_evaluations == 0


def test_too_small_budget_says_how_much_is_needed():
    with pytest.raises(ValueError, match="at least 22"):
        regression_shapley(table_game(random_table(10), 10), 21, method="kernel")


def test_auto_weighs_the_estimators_cost_against_the_models():
    from skshapley.approximators import choose_method
    from skshapley.approximators._api import OPERATIONS_PER_SECOND, SOLVER_TIME_SHARE
    from skshapley.approximators._regression import surrogate_cost

    d, budget = 200, 2 + 64 * 199
    # a slow model: the surrogate's fit is small beside the model's time
    slow = choose_method("auto", d, budget, evaluation_seconds=1.0)
    assert slow.method == "surrogate" and slow.options == {}
    # a fast model: no surrogate term pays for its fit, and at 1000 players nothing
    # but orderings is cheap enough
    fast = choose_method("auto", d, budget, evaluation_seconds=1e-6)
    assert fast.method in ("leverage", "permutation")
    wide = choose_method("auto", 1000, 2 + 64 * 999, evaluation_seconds=1e-5)
    assert wide.method == "permutation"
    # in between, the surrogate with a smaller cross-validation ceiling
    seconds = surrogate_cost(d, budget, 1, 150).flops / OPERATIONS_PER_SECOND
    middle = choose_method("auto", d, budget,
                           evaluation_seconds=1.01 * seconds / (SOLVER_TIME_SHARE * budget))
    assert middle.method == "surrogate" and middle.options == {"max_cv_terms": 150}
    # a design that does not fit working_memory is never chosen
    assert choose_method("auto", 1000, 10**6, working_memory=64).method == "permutation"


def test_auto_leaves_the_games_own_work_out_of_the_estimators_share():
    from skshapley.approximators import METHOD_RECORDS, choose_method
    from skshapley.approximators._api import OPERATIONS_PER_SECOND, SOLVER_TIME_SHARE

    d, budget = 100, 10 * 100
    seconds = METHOD_RECORDS["leverage"].cost(d, budget, 1).flops / OPERATIONS_PER_SECOND
    # a model just slow enough for paired KernelSHAP's fit within its share ...
    per_evaluation = 1.05 * seconds / (SOLVER_TIME_SHARE * budget)
    assert choose_method("auto", d, budget, evaluation_seconds=per_evaluation).method in (
        "adaptive", "leverage")
    # ... but not once assembling its input takes a fifth of that share
    crowded = choose_method("auto", d, budget, evaluation_seconds=per_evaluation,
                            overhead_seconds=0.2 * SOLVER_TIME_SHARE * per_evaluation)
    assert crowded.method == "permutation"
    # no floor: a model of a microsecond an evaluation gets orderings at any width
    assert choose_method("auto", 20, 200, evaluation_seconds=1e-6).method == "permutation"


def test_the_explainer_chooses_for_one_row_not_for_stacked_rows():
    # 16 stacked rows would share the fit (cheap per row); a one-row call pays it alone
    from skshapley.approximators import METHOD_RECORDS
    from skshapley.explain._plan import make_plan

    d, budget = 200, 2000
    one_row = METHOD_RECORDS["leverage"].cost(d, budget, 1).flops / 1.5e9
    # the model's time puts leverage (16 outputs: about 5x one) within its share for 16
    # rows, not for one
    per_row = 8.0 * one_row / (16 * 0.25 * budget)
    plan = make_plan("auto", "auto", budget, None, n_features=d, n_outputs=1,
                     n_background=1, seed=0, evaluation_seconds=per_row)
    assert plan.method == "permutation"
    slow = make_plan("auto", "auto", budget, None, n_features=d, n_outputs=1,
                     n_background=1, seed=0, evaluation_seconds=16 * per_row)
    assert slow.method in ("adaptive", "leverage")


def test_surrogate_screens_a_bounded_pool_of_triples():
    from math import comb

    from skshapley.approximators._regression import triple_pool_size

    assert triple_pool_size(30) == 30  # every triple of the accuracy benchmarks' games
    for d in (50, 200, 1000):
        m = triple_pool_size(d)
        assert comb(m, 3) <= max(4096, 64 * d) < comb(m + 1, 3)
    # a third-order interaction among strong players is found at d = 60, where the
    # pool holds 30 of the 60 players: an odd character of order 3 with weight 3 gives
    # 2 to each member, and the surrogate's model class holds the game exactly
    d = 60
    weights = np.linspace(1.0, 2.0, d)
    signs = lambda S: 2.0 * S - 1.0  # noqa: E731
    game = CallableGame(lambda S: S @ weights + 3.0 * signs(S[:, 0]) * signs(S[:, 1])
                        * signs(S[:, 2]), d)
    truth = weights.copy()
    truth[:3] += 2.0
    result = shapley_values(game, method="surrogate", budget=40 * d, random_state=0)
    leverage = shapley_values(game, method="leverage", budget=40 * d, random_state=0)
    np.testing.assert_allclose(result.values, truth, atol=1e-8)
    assert np.abs(leverage.values - truth).max() > 1e-3


@pytest.mark.parametrize("pool", [None, [0, 2, 3, 5, 8]])
@pytest.mark.parametrize("kept", [True, False])
def test_triple_scores_are_each_characters_own_correlation(pool, kept, monkeypatch):
    # the screen scores every triple through its pairs' products (kept whole, or
    # rebuilt in blocks of rows): each score must be its own column's correlation
    from skshapley.approximators import _surrogate

    if not kept:
        monkeypatch.setattr(_surrogate, "KEPT_PAIR_PRODUCTS", 7)
    rng = np.random.default_rng(0)
    first = rng.random((57, 9)) < 0.5
    weighted = rng.standard_normal(57)
    characters = _surrogate._TripleCharacters.of(first, pool)
    assert (characters._products is None) == (not kept)
    signs = np.where(first, 1.0, -1.0)
    own = np.array([np.prod(signs[:, t], axis=1) @ weighted for t in characters.triples])
    np.testing.assert_allclose(characters.correlations(weighted), own, atol=1e-12)
    np.testing.assert_array_equal(characters.columns(np.arange(4)),
                                  np.prod(signs[:, characters.triples[:4]], axis=2))
    held = np.arange(57) % 3 != 0
    own_held = np.array([np.prod(signs[held][:, t], axis=1) @ weighted[held]
                         for t in characters.triples])
    np.testing.assert_allclose(characters.rows(held).correlations(weighted[held]), own_held,
                               atol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 5, 9, 13])
def test_combinations_array_lists_itertools_combinations_in_order(d):
    import itertools
    from math import comb

    for s in range(0, d + 1):
        expected = np.array(list(itertools.combinations(range(d), s)),
                            dtype=np.int64).reshape(comb(d, s), s)
        np.testing.assert_array_equal(combinations_array(d, s), expected)


@pytest.mark.parametrize("d", [9, 10, 40])
def test_sizes_drawn_together_are_the_sizes_drawn_one_by_one(d):
    # one batch of uniforms for a run of sizes gives each size the sides that drawing
    # it alone (double argsort, rejection of repeats) gives from the same stream
    from skshapley.approximators._coalitions import (
        _random_size_pairs,
        _RandomSource,
        _sample_size_pair,
    )

    sizes = list(range(2, d // 2 + 1))
    wanted = [3 + (s % 4) for s in sizes]
    together = _random_size_pairs(d, sizes, wanted, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    source = _RandomSource(d, rng)
    equal = 0
    for s, n, side in zip(sizes, wanted, together, strict=True):
        alone = _sample_size_pair(d, s, n, source, rng)
        if alone.shape[0] == side.shape[0] and np.array_equal(alone, side):
            equal += 1
            continue
        # a size whose first draws repeated too often draws the rest after the run:
        # still n distinct pairs of size s (d = 9 and 10 have small sizes)
        canonical = np.where(side[:, :1] | (2 * s != d), side, ~side)
        assert side.shape == (n, d) and (side.sum(axis=1) == s).all()
        assert len({row.tobytes() for row in canonical}) == n
    # at d = 40 (780 pairs of size 2 and more above) these few draws repeat nothing
    assert equal >= 1 and (d < 40 or equal == len(sizes))
