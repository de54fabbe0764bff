"""Owen values over a hierarchy: enumeration against the definition (the mean marginal
contribution over every ordering consistent with the tree), sampling against enumeration,
and the orderings' sampler against the consistent orderings it must draw uniformly."""

import itertools
from collections import Counter

import numpy as np
import pytest
from game_helpers import CountingGame
from scipy.stats import chi2, t

from skshapley.approximators import exact_shapley
from skshapley.approximators._hierarchical import exact_owen_values, owen_values
from skshapley.approximators._owen_enumeration import exact_evaluations, owen_enumeration
from skshapley.games import CallableGame
from skshapley.permutations._hierarchy import HierarchicalOrderings
from skshapley.utils._hierarchy import Hierarchy, from_linkage, from_nested


def _table_game(p, seed=0, n_outputs=None):
    """v(S) drawn at random for every S: no structure a wrong formula could hide in."""
    table = np.random.default_rng(seed).normal(size=(2**p,) if n_outputs is None
                                               else (2**p, n_outputs))
    return lambda S: table[(S.astype(np.int64) << np.arange(S.shape[1])).sum(axis=1)]


def _consistent_orders(h, node=None):
    node = h.root if node is None else node
    if node < h.n_leaves:
        return [[node]]
    orders = []
    for kids in itertools.permutations(h.kids(node)):
        for parts in itertools.product(*(_consistent_orders(h, kid) for kid in kids)):
            orders.append(sum(parts, []))
    return orders


def _brute_force(h, f):
    """The definition: the mean marginal contribution over consistent orderings."""
    p = h.n_leaves
    phi = 0.0
    orders = _consistent_orders(h)
    for order in orders:
        masks = np.zeros((p + 1, p), dtype=bool)
        for step, player in enumerate(order):
            masks[step + 1 :, player] = True
        values = f(masks)
        gains = np.zeros((p,) + values.shape[1:])
        gains[order] = values[1:] - values[:-1]
        phi = phi + gains
    return phi / len(orders)


NAMES = [f"x{j}" for j in range(7)]
HIERARCHIES = {
    "nested": [[["x0", "x1"], "x2"], ["x3", "x4", ["x5", "x6"]]],
    "one level": [[["x0", "x1", "x2"]], [["x3", "x4"]], [["x5", "x6"]]],
    "chain": [[[[[["x0", "x1"], "x2"], "x3"], "x4"], "x5"], "x6"],
    "wide root": [["x0", "x1"], "x2", "x3", "x4", ["x5", "x6"]],
}


@pytest.mark.parametrize("name", sorted(HIERARCHIES))
@pytest.mark.parametrize("n_outputs", [None, 2])
def test_exact_equals_the_definition(name, n_outputs):
    h = from_nested(HIERARCHIES[name], NAMES)
    f = _table_game(7, seed=len(name), n_outputs=n_outputs)
    game = CountingGame(CallableGame(f, 7))
    result = exact_owen_values(game, h)
    np.testing.assert_allclose(result.values, _brute_force(h, f), atol=1e-12)
    # each distinct coalition once, no more than the hierarchy's count
    assert result.n_evaluations == game.count == exact_evaluations(h) <= h.enumeration_bound
    # efficiency
    ends = f(np.array([[False] * 7, [True] * 7]))
    np.testing.assert_allclose(result.values.sum(axis=0), ends[1] - ends[0], atol=1e-12)


def test_flat_hierarchy_gives_shapley_values():
    f = _table_game(6, seed=3)
    flat = Hierarchy(6, (tuple(range(6)),))
    np.testing.assert_allclose(exact_owen_values(CallableGame(f, 6), flat).values,
                               exact_shapley(CallableGame(f, 6)).values, atol=1e-12)
    assert flat.enumeration_bound == 2**6


def test_a_linkage_matrix_is_read_as_its_binary_tree():
    from scipy.cluster.hierarchy import linkage

    X = np.random.default_rng(1).normal(size=(30, 7))
    Z = linkage(X.T, method="complete")
    h = from_linkage(Z, 7)
    assert all(len(kids) == 2 for kids in h.children)
    np.testing.assert_array_equal(h.to_linkage()[:, [0, 1, 3]], Z[:, [0, 1, 3]])
    f = _table_game(7, seed=5)
    np.testing.assert_allclose(exact_owen_values(CallableGame(f, 7), h).values,
                               _brute_force(h, f), atol=1e-12)


def test_balanced_tree_needs_about_d_squared_coalitions():
    # a balanced binary tree over 64 columns: exact needs few coalitions, a chain 2^d
    children, level, n = [], list(range(64)), 64
    while len(level) > 1:
        nxt = []
        for a, b in zip(level[::2], level[1::2], strict=True):
            children.append((a, b))
            nxt.append(n)
            n += 1
        level = nxt
    assert Hierarchy(64, tuple(children)).enumeration_bound <= 64**2
    chain = [(0, 1)] + [(6 + k, k + 2) for k in range(4)]
    assert Hierarchy(6, tuple(chain)).enumeration_bound >= 2**5


def test_sampler_draws_every_consistent_ordering_uniformly():
    h = from_nested(HIERARCHIES["nested"], NAMES)
    allowed = {tuple(o) for o in _consistent_orders(h)}
    orders = HierarchicalOrderings(h, rng=0).random(2 * 4000)
    counts = Counter(map(tuple, orders[0::2]))  # the independent forward members
    assert set(counts) <= allowed
    assert {tuple(o) for o in orders[1::2]} <= allowed  # the reversed ones too
    observed = np.array([counts.get(o, 0) for o in sorted(allowed)])
    statistic = ((observed - 4000 / len(allowed)) ** 2 / (4000 / len(allowed))).sum()
    assert chi2.sf(statistic, len(allowed) - 1) > 1e-3
    np.testing.assert_array_equal(orders[1], orders[0][::-1])


def test_sampled_values_converge_and_their_intervals_cover():
    h = from_nested(HIERARCHIES["nested"], NAMES)
    f = _table_game(7, seed=11)
    exact = exact_owen_values(CallableGame(f, 7), h).values
    covered, total = 0, 0
    for seed in range(150):
        result = owen_values(CallableGame(f, 7), h, 2 + 6 * 40, exact=False,
                             random_state=seed)
        ends = f(np.array([[False] * 7, [True] * 7]))
        assert abs(result.values.sum() - (ends[1] - ends[0])) < 1e-10
        half = t.ppf(0.975, result.n_draws - 1) * result.std_errors
        covered += int((np.abs(result.values - exact) <= half).sum())
        total += exact.size
    assert 0.92 <= covered / total <= 0.98
    big = owen_values(CallableGame(f, 7), h, 2 + 6 * 20000, exact=False, random_state=0)
    np.testing.assert_allclose(big.values, exact, atol=5 * big.std_errors.max() + 1e-3)


def test_tol_stops_when_the_error_quantile_is_below_it():
    h = from_nested(HIERARCHIES["nested"], NAMES)
    f = _table_game(7, seed=2)
    exact = exact_owen_values(CallableGame(f, 7), h).values
    errors = []
    for seed in range(20):
        result = owen_values(CallableGame(f, 7), h, 2 + 6 * 20000, exact=False, tol=0.3,
                             random_state=seed)
        assert result.converged and result.error_quantile < 0.3
        assert result.n_evaluations < 2 + 6 * 20000
        errors.append(np.linalg.norm(result.values - exact))
    # the rule stops at an estimated 95 % quantile of ||phi_hat - phi||_2 below tol: the
    # actual errors stay below tol (all but about one run in twenty)
    assert np.mean(np.array(errors) < 0.3) >= 0.85, errors


def test_auto_enumerates_when_it_fits_and_refuses_an_exact_budget_too_small():
    h = from_nested(HIERARCHIES["chain"], NAMES)
    f = _table_game(7)
    need = min(h.enumeration_bound, 2**7)  # distinct coalitions are evaluated once
    assert owen_values(CallableGame(f, 7), h, need).std_errors.max() == 0
    sampled = owen_values(CallableGame(f, 7), h, need - 1, random_state=0)
    assert sampled.std_errors.max() > 0
    with pytest.raises(ValueError, match=f"needs {need}"):
        owen_values(CallableGame(f, 7), h, 10, exact=True)


@pytest.mark.parametrize("nested, message", [
    ([[["x0", "x9"]], [["x1"]]], "unknown column 'x9'"),
    ([[["x0", "x1"]], [["x1", "x2"]]], "column 'x1' at"),
    ([[["x0"]], [[]]], "empty list"),
    ([[["x0", "x1"]], [["x2"]]], r"leaves the columns \['x3'\]"),
])
def test_bad_nested_hierarchies_name_the_problem(nested, message):
    with pytest.raises(ValueError, match=message):
        from_nested(nested, ["x0", "x1", "x2", "x3"])


def test_a_linkage_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match=r"shape \(2, 4\).*X has 5 columns"):
        from_linkage(np.zeros((2, 4)), 5)
    with pytest.raises(ValueError, match="not a valid scipy linkage"):
        from_linkage(np.array([[0, 1, 1.0, 2], [0, 1, 2.0, 2]]), 3)


def test_a_budget_that_buys_the_distinct_coalitions_enumerates():
    # the hierarchy's bound counts some coalitions more than once; the budget is
    # compared with the distinct ones (a complete linkage over 8 columns: 76 of them)
    from scipy.cluster.hierarchy import linkage

    X = np.random.default_rng(3).normal(size=(40, 8))
    h = from_linkage(linkage(X.T, method="complete"), 8)
    need = exact_evaluations(h)
    assert need < min(h.enumeration_bound, 2**8)
    f = _table_game(8, seed=4)
    result = owen_values(CountingGame(CallableGame(f, 8)), h, need, random_state=0)
    np.testing.assert_array_equal(result.std_errors, 0.0)
    assert result.n_evaluations == need


def test_the_enumeration_is_listed_once_per_hierarchy(monkeypatch):
    # the plan counts the coalitions at fit and every game enumerates them: one list
    from skshapley.approximators import _owen_enumeration

    h = from_nested(HIERARCHIES["nested"], NAMES)
    calls = []
    build = _owen_enumeration._enumerate
    monkeypatch.setattr(_owen_enumeration, "_enumerate",
                        lambda hierarchy: calls.append(hierarchy) or build(hierarchy))
    need = exact_evaluations(h)
    f = _table_game(7, seed=6)
    first = owen_values(CountingGame(CallableGame(f, 7)), h, need)
    second = owen_values(CountingGame(CallableGame(f, 7)), h, need)
    assert calls == [h] and owen_enumeration(h) is owen_enumeration(h)
    assert first.n_evaluations == second.n_evaluations == need
    np.testing.assert_array_equal(first.values, second.values)
    np.testing.assert_allclose(first.values, _brute_force(h, f), atol=1e-12)
