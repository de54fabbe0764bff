"""TreeSHAP of groups of columns: brute force of the game over groups, both games, both
CPU backends."""

import itertools
import math

import numpy as np
import pytest
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeRegressor

from skshapley.tree import read_model, tree_shap
from skshapley.tree._groups import _path_range, group_paths, grouped_tree_shap

# 6 columns in 3 groups; column 5 is a near-copy of column 0, in its group
COLUMN_GROUP = np.array([0, 1, 1, 2, 2, 0])


def _data(seed, n=300, nan=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[:, 5] = X[:, 0] + 0.1 * rng.normal(size=n)
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + (X[:, 3] > 0) + X[:, 4] * X[:, 5]
    if nan:
        X[rng.random(X.shape) < nan] = np.nan
    return X, y


def _group_shapley(value, n_groups):
    """Shapley values (and v(∅)) of the game ``value(mask)`` over ``n_groups`` players by
    enumeration, ``mask`` a bit set of groups."""
    values = {mask: np.asarray(value(mask), float) for mask in range(2**n_groups)}
    phi = np.zeros((n_groups,) + values[0].shape)
    for i in range(n_groups):
        for mask in range(2**n_groups):
            if mask >> i & 1:
                continue
            s = bin(mask).count("1")
            weight = (math.factorial(s) * math.factorial(n_groups - s - 1)
                      / math.factorial(n_groups))
            phi[i] += weight * (values[mask | 1 << i] - values[mask])
    return phi, values[0]


def _group_interactions(value, n_groups):
    """Shapley interaction index of each pair of groups (Lundberg et al. 2020, Eq. 16),
    halved off the diagonal as TreeSHAP's interaction values, by enumeration."""
    pairs = np.zeros((n_groups, n_groups))
    for i, j in itertools.combinations(range(n_groups), 2):
        others = [k for k in range(n_groups) if k not in (i, j)]
        for size in range(len(others) + 1):
            weight = (math.factorial(size) * math.factorial(n_groups - size - 2)
                      / (2 * math.factorial(n_groups - 1)))
            for subset in itertools.combinations(others, size):
                s = sum(1 << k for k in subset)
                delta = (value(s | 1 << i | 1 << j) - value(s | 1 << i)
                         - value(s | 1 << j) + value(s))
                pairs[i, j] = pairs[j, i] = pairs[i, j] + weight * delta
    return pairs


def _columns_of(mask):
    return [j for j in range(len(COLUMN_GROUP)) if mask >> COLUMN_GROUP[j] & 1]


def _tree_expectation(tree, x, columns):
    """TreeSHAP's path-dependent E[f(x) | x_S] of a sklearn tree, S = ``columns``, by
    the recursion of Lundberg et al. 2020 (Alg. 1), apart from the IR."""
    t = tree.tree_
    x32 = np.float32(x).astype(np.float64)

    def walk(node):
        if t.children_left[node] < 0:
            return t.value[node, 0, 0]
        f = t.feature[node]
        left, right = t.children_left[node], t.children_right[node]
        if f in columns:
            return walk(left if x32[f] <= t.threshold[node] else right)
        c = t.weighted_n_node_samples
        return (c[left] * walk(left) + c[right] * walk(right)) / c[node]

    return walk(0)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_path_dependent_groups_equal_enumeration_of_the_group_game(backend):
    X, y = _data(0)
    model = RandomForestRegressor(n_estimators=4, max_depth=6, random_state=0).fit(X, y)
    grouped = group_paths(read_model(model), COLUMN_GROUP)
    assert grouped.n_indicators > 0  # some paths test two columns of a group
    result = grouped_tree_shap(grouped, X[:4], backend=backend)
    for i in range(4):
        def game(mask, x=X[i]):
            columns = set(_columns_of(mask))
            return np.mean([_tree_expectation(t, x, columns) for t in model.estimators_])

        phi, base = _group_shapley(game, 3)
        np.testing.assert_allclose(result.values[i, :, 0], phi, rtol=0, atol=1e-12)
        np.testing.assert_allclose(result.base_values[i, 0], base, rtol=0, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
# 2 rows: the walk over the trees with a side per group; 12: the tables of widened rows
@pytest.mark.parametrize("n_rows", [2, 12])
def test_interventional_groups_equal_enumeration_with_model_predict(backend, n_rows):
    X, y = _data(1, nan=0.05)  # missing values follow the trees' missing branches
    model = HistGradientBoostingRegressor(max_iter=12, random_state=0).fit(X, y)
    background = X[-20:]
    grouped = group_paths(read_model(model), COLUMN_GROUP)
    result = grouped_tree_shap(grouped, X[:n_rows], background=background,
                               feature_perturbation="interventional", backend=backend)
    for i in range(n_rows):
        def game(mask, x=X[i]):
            rows = background.copy()
            columns = _columns_of(mask)
            rows[:, columns] = x[columns]
            return model.predict(rows).mean()

        phi, base = _group_shapley(game, 3)
        np.testing.assert_allclose(result.values[i, :, 0], phi, rtol=0, atol=1e-10)
        np.testing.assert_allclose(result.base_values[i, 0], base, rtol=0, atol=1e-10)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_group_interactions_equal_enumeration_and_sum_to_the_values(backend):
    X, y = _data(2)
    model = RandomForestRegressor(n_estimators=3, max_depth=5, random_state=0).fit(X, y)
    grouped = group_paths(read_model(model), COLUMN_GROUP)
    result = grouped_tree_shap(grouped, X[:2], interactions=True, backend=backend)
    for i in range(2):
        def game(mask, x=X[i]):
            columns = set(_columns_of(mask))
            return np.mean([_tree_expectation(t, x, columns) for t in model.estimators_])

        pairs = _group_interactions(game, 3)
        off = ~np.eye(3, dtype=bool)
        np.testing.assert_allclose(result.interactions[i, :, :, 0][off], pairs[off],
                                   rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.interactions.sum(axis=2), result.values, rtol=0,
                               atol=1e-12)


def test_groups_of_one_column_are_the_per_column_values():
    X, y = _data(3)
    ensemble = read_model(RandomForestRegressor(n_estimators=5, max_depth=6,
                                                random_state=0).fit(X, y))
    grouped = group_paths(ensemble, np.arange(6))
    assert grouped.n_indicators == 0 and grouped.ensemble.nodes is ensemble.nodes
    for kwargs in ({}, {"background": X[-30:], "feature_perturbation": "interventional"}):
        mine = grouped_tree_shap(grouped, X[:7], **kwargs)
        theirs = tree_shap(ensemble, X[:7], **kwargs)
        np.testing.assert_array_equal(mine.values, theirs.values)
        np.testing.assert_array_equal(mine.base_values, theirs.base_values)


def test_a_group_no_path_tests_twice_sums_its_columns_and_keeps_the_tree_walk():
    # stumps test one column per path: each group's game on a path is its column's, so
    # its value is the sum of its columns' values, and the kernel walking the trees
    # (fewer than 4 rows) stays right
    X, y = _data(4)
    stumps = RandomForestRegressor(n_estimators=20, max_depth=1, random_state=0).fit(X, y)
    ensemble = read_model(stumps)
    grouped = group_paths(ensemble, COLUMN_GROUP)
    assert grouped.n_indicators == 0 and grouped.ensemble.nodes is not None
    background = X[-25:]
    mine = grouped_tree_shap(grouped, X[:2], background=background,
                             feature_perturbation="interventional")
    columns = tree_shap(ensemble, X[:2], background=background).values
    np.testing.assert_allclose(mine.values[:, :, 0],
                               np.stack([columns[:, COLUMN_GROUP == g, 0].sum(axis=1)
                                         for g in range(3)], axis=1), rtol=0, atol=1e-13)


def test_a_group_a_path_tests_twice_is_not_the_sum_of_its_columns():
    # f = 1 where x0 <= 0, x1 <= 0 and x2 > 0.5, on the 8 corners of a cube (each side
    # taken by half the rows, independently): with {x0, x1} one group A and x2 another,
    # B, the game is v(∅) = 1/8, v(A) = 1/2, v(B) = 1/4, v(AB) = 1, so
    # phi_A = ((1/2 - 1/8) + (1 - 1/4)) / 2 = 9/16; as three players each column gets
    # 7/24, and x0 and x1 together 7/12. A path testing x0 and x1 must be one element
    # of group A (group_paths' indicator column), not two players summed.
    X = np.array(list(itertools.product([-1.0, 1.0], [-1.0, 1.0], [0.0, 1.0])) * 3)
    y = ((X[:, 0] <= 0) & (X[:, 1] <= 0) & (X[:, 2] > 0.5)).astype(float)
    ensemble = read_model(DecisionTreeRegressor(random_state=0).fit(X, y))
    grouped = group_paths(ensemble, [0, 0, 1])
    assert grouped.n_indicators > 0
    x = np.array([[-1.0, -1.0, 1.0]])
    for kwargs in ({}, {"background": X, "feature_perturbation": "interventional"}):
        # the covers are the data's counts, so both games are the one above
        values = grouped_tree_shap(grouped, x, **kwargs).values[0, :, 0]
        np.testing.assert_allclose(values, [9 / 16, 1 - 1 / 8 - 9 / 16], rtol=0,
                                   atol=1e-15)
        columns = tree_shap(ensemble, x, **kwargs).values[0, :, 0]
        np.testing.assert_allclose(columns, [7 / 24] * 3, rtol=0, atol=1e-15)


def test_indicator_columns_are_shared_by_paths_with_the_same_conditions():
    X, y = _data(5)
    ensemble = read_model(RandomForestRegressor(n_estimators=6, max_depth=8,
                                                random_state=0).fit(X, y))
    grouped = group_paths(ensemble, COLUMN_GROUP)
    # every path in one range: the rows widened by all the indicator columns
    whole = _path_range(ensemble, grouped.ensemble, 0, grouped.ensemble.n_paths,
                        grouped.indicator_ptr, grouped.indicator_element, grouped.player)
    widened = whole.widen(ensemble.prepare(X[:50]), ensemble)
    assert widened.shape == (50, 6 + grouped.n_indicators)
    indicators = widened[:, 6:]
    assert set(np.unique(indicators)) <= {0.0, 1.0}
    # an indicator is 1 exactly where the row satisfies all of its elements
    for k in range(grouped.n_indicators):
        elements = grouped.indicator_element[grouped.indicator_ptr[k]:
                                             grouped.indicator_ptr[k + 1]]
        assert len(set(COLUMN_GROUP[ensemble.feature[elements]])) == 1
        assert len(set(ensemble.feature[elements])) == len(elements) >= 2
        np.testing.assert_array_equal(indicators[:, k],
                                      ensemble.satisfied(ensemble.prepare(X[:50]))[:, elements]
                                      .all(axis=1))
    # each path gives each group at most one element
    ir = grouped.ensemble
    for p in range(ir.n_paths):
        players = grouped.player[ir.feature[ir.path_ptr[p]:ir.path_ptr[p + 1]]]
        assert len(players) == len(set(players))


def test_rows_in_chunks_within_working_memory_give_the_same_values():
    X, y = _data(6)
    ensemble = read_model(RandomForestRegressor(n_estimators=4, max_depth=6,
                                                random_state=0).fit(X, y))
    grouped = group_paths(ensemble, COLUMN_GROUP)
    # the interventional tables of widened rows (30 rows: no walk)
    kwargs = {"background": X[-20:], "feature_perturbation": "interventional"}
    whole = grouped_tree_shap(grouped, X[:30], **kwargs)
    # a working memory of a few rows' output splits the 30 rows into chunks
    row_bytes = 8 * grouped.ensemble.n_features * 2
    chunked = grouped_tree_shap(grouped, X[:30], working_memory=5 * row_bytes / 2**20,
                                **kwargs)
    np.testing.assert_array_equal(whole.values, chunked.values)


def test_bad_column_group_is_refused():
    X, y = _data(7)
    ensemble = read_model(DecisionTreeRegressor(max_depth=2).fit(X, y))
    with pytest.raises(ValueError, match="each of the 6 columns"):
        group_paths(ensemble, [0, 1, 2])


def test_paths_in_ranges_give_the_values_of_one_range(monkeypatch):
    # ranges of a few indicator columns each (interventional tables): every range widens
    # the rows by its own columns, and the interventional base values of the ranges add up
    X, y = _data(8, nan=0.05)
    ensemble = read_model(HistGradientBoostingRegressor(max_iter=10, random_state=0)
                          .fit(X, y))
    kwargs = {"background": X[-30:], "feature_perturbation": "interventional"}
    whole = group_paths(ensemble, COLUMN_GROUP)
    monkeypatch.setattr("skshapley.tree._groups.RANGE_INDICATORS", 4)
    ranged = group_paths(ensemble, COLUMN_GROUP)
    assert len(whole.ranges) == 1 and len(ranged.ranges) > 3
    one, many = (grouped_tree_shap(g, X[:9], **kwargs) for g in (whole, ranged))
    np.testing.assert_allclose(many.values, one.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(many.base_values, one.base_values, rtol=0, atol=1e-12)


def test_a_new_background_is_widened_again():
    X, y = _data(9)
    model = RandomForestRegressor(n_estimators=3, max_depth=5, random_state=0).fit(X, y)
    grouped = group_paths(read_model(model), COLUMN_GROUP)
    for background in (X[-10:], X[-20:-10], X[-10:]):
        result = grouped_tree_shap(grouped, X[:1], background=background,
                                   feature_perturbation="interventional")
        np.testing.assert_allclose(result.base_values[0, 0],
                                   model.predict(background).mean(), rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_walk_with_group_sides_equals_the_tables_of_widened_rows(backend, monkeypatch):
    # three classes (three outputs) and missing values; one to three rows walk the trees
    X, y = _data(10, nan=0.1)
    labels = np.digitize(y, np.quantile(y, [0.3, 0.6]))
    ensemble = read_model(HistGradientBoostingClassifier(max_iter=6, random_state=0)
                          .fit(X, labels))
    grouped = group_paths(ensemble, COLUMN_GROUP)
    background = X[-40:]
    walked = grouped_tree_shap(grouped, X[:3], background=background,
                               feature_perturbation="interventional", backend=backend)
    monkeypatch.setattr("skshapley.tree._groups.WALK_ROWS", 0)
    tables = grouped_tree_shap(grouped, X[:3], background=background,
                               feature_perturbation="interventional", backend=backend)
    assert walked.values.shape == (3, 3, 3)
    np.testing.assert_allclose(walked.values, tables.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(walked.base_values, tables.base_values, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n_rows", [3, 200, 1100])  # path chunks; row blocks
def test_grouped_path_kernels_match_their_numpy_twins_and_the_widened_rows(n_rows):
    # three classes, missing values and a categorical column (category-set splits): the
    # players kernels against the NumPy twins and against the per-column kernels on
    # rows widened by the indicator columns (the construction of the interventional
    # tables), summed per group
    from skshapley.backends import get_backend
    from skshapley.tree._api import path_dependent_interactions, path_dependent_shap

    rng = np.random.default_rng(11)
    X, y = _data(11, n=max(400, n_rows), nan=0.05)
    X[:, 3] = rng.integers(0, 6, size=len(X))
    labels = np.digitize(y, np.quantile(y, [0.3, 0.6]))
    model = HistGradientBoostingClassifier(max_iter=8, categorical_features=[3],
                                           random_state=0).fit(X, labels)
    grouped = group_paths(read_model(model), COLUMN_GROUP)
    rows = grouped.source.prepare(X[:n_rows])
    shape = (n_rows, 3, 3)
    numba_kernels, numpy_kernels = get_backend("numba"), get_backend("numpy")
    fast, twin = np.zeros(shape), np.zeros(shape)
    numba_kernels.tree_grouped_path_shap(rows, grouped.elements, grouped.players, fast)
    numpy_kernels.tree_grouped_path_shap(rows, grouped.elements, grouped.players, twin)
    np.testing.assert_allclose(fast, twin, rtol=0, atol=1e-12)
    (part,) = grouped.ranges
    widened = part.widen(rows, grouped.source)
    per_column, _ = path_dependent_shap(part.ensemble, widened, numpy_kernels)
    np.testing.assert_allclose(fast, part.to_groups(per_column, 3), rtol=0, atol=1e-12)
    if n_rows <= 200:
        pairs, pairs_twin = np.zeros(shape + (3,)), np.zeros(shape + (3,))
        numba_kernels.tree_grouped_path_interactions(rows, grouped.elements,
                                                     grouped.players, pairs)
        numpy_kernels.tree_grouped_path_interactions(rows, grouped.elements,
                                                     grouped.players, pairs_twin)
        np.testing.assert_allclose(pairs, pairs_twin, rtol=0, atol=1e-12)
        wide = path_dependent_interactions(part.ensemble, widened, numpy_kernels)
        summed = part.to_groups(np.swapaxes(part.to_groups(wide, 3), -1, -2), 3)
        np.testing.assert_allclose(pairs, summed, rtol=0, atol=1e-12)


def test_players_of_a_path_are_its_runs_of_one_group():
    X, y = _data(12)
    ensemble = read_model(RandomForestRegressor(n_estimators=3, max_depth=6,
                                                random_state=0).fit(X, y))
    grouped = group_paths(ensemble, COLUMN_GROUP)
    elements, players = grouped.elements, grouped.players
    for p in range(ensemble.n_paths):
        runs = range(players.player_ptr[p], players.player_ptr[p + 1])
        columns = elements.feature[elements.path_ptr[p]:elements.path_ptr[p + 1]]
        # the runs tile the path's elements, one run per group the path tests
        assert [players.first[r] for r in runs] == list(
            np.r_[0, np.cumsum([players.length[r] for r in runs])][:-1]
            + elements.path_ptr[p])
        assert sorted(players.slot[r] for r in runs) == sorted(set(COLUMN_GROUP[columns]))
        for r in runs:
            run = slice(players.first[r], players.first[r] + players.length[r])
            assert set(COLUMN_GROUP[elements.feature[run]]) == {players.slot[r]}
            np.testing.assert_allclose(players.zero_fraction[r],
                                       np.prod(elements.zero_fraction[run]), rtol=1e-15)


def test_a_path_of_more_groups_than_the_kernels_take_is_refused(monkeypatch):
    X, y = _data(13)
    ensemble = read_model(RandomForestRegressor(n_estimators=2, max_depth=6,
                                                random_state=0).fit(X, y))
    grouped = group_paths(ensemble, COLUMN_GROUP)
    monkeypatch.setattr("skshapley.tree._groups.MAX_PATH_FEATURES", 2)  # 3 groups on a path
    with pytest.raises(ValueError, match="tests 3 groups"):
        grouped_tree_shap(grouped, X[:2])
