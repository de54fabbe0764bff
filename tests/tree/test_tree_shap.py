"""Exact TreeSHAP: brute force, peers (shap, XGBoost, LightGBM), backends, bad input."""

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from numba import get_num_threads, set_num_threads
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor
from warp_emulator import emulate_warp_shap

from skshapley.backends import available_backends
from skshapley.exceptions import BackendUnavailableError
from skshapley.tree import read_model, tree_shap


def _data(seed=0, n=300, d=6, nan=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, -1] = X[:, 0] + 0.1 * rng.normal(size=n)  # correlated duplicate-ish feature
    if nan:
        X[rng.random(X.shape) < nan] = np.nan
    Xf = np.nan_to_num(X)
    y = Xf[:, 0] * Xf[:, 1] + np.sin(Xf[:, 2]) + (Xf[:, 3] > 0)
    return X, y


def _shapley_from_game(value, d):
    """Shapley values by enumeration of a game given as value(mask) -> array."""
    values = {mask: np.asarray(value(mask), float) for mask in range(2**d)}
    phi = np.zeros((d,) + values[0].shape)
    for i in range(d):
        for mask in range(2**d):
            if mask >> i & 1:
                continue
            s = bin(mask).count("1")
            weight = math.factorial(s) * math.factorial(d - s - 1) / math.factorial(d)
            phi[i] += weight * (values[mask | 1 << i] - values[mask])
    return phi, values[0]


def _assert_interventional_by_enumeration(result, predict, rows, background, atol):
    """``result`` (tree_shap with ``background``) equals the Shapley values of the
    marginal game of each row, enumerated with ``predict`` on mixed arrays."""
    d = rows.shape[1]
    for i in range(len(rows)):
        def game(mask, x=rows[i]):
            Z = background.copy()
            columns = [j for j in range(d) if mask >> j & 1]
            Z[:, columns] = x[columns]
            return predict(Z).mean()

        phi, base = _shapley_from_game(game, d)
        np.testing.assert_allclose(result.values[i, :, 0], phi, atol=atol)
        np.testing.assert_allclose(result.base_values[i, 0], base, atol=atol)


def _tree_expectation(tree, x, mask):
    """E[f(x) | x_S] by the recursion of §8.1.1 on a sklearn tree (independent of the IR)."""
    t = tree.tree_
    x32 = np.float32(x).astype(np.float64)

    def walk(node):
        if t.children_left[node] < 0:
            leaf = t.value[node, :, 0]
            return leaf
        f = t.feature[node]
        left, right = t.children_left[node], t.children_right[node]
        if mask >> f & 1:
            return walk(left if x32[f] <= t.threshold[node] else right)
        c = t.weighted_n_node_samples
        return (c[left] * walk(left) + c[right] * walk(right)) / c[node]

    return walk(0)


def test_path_dependent_matches_the_recursion_by_enumeration():
    X, y = _data()
    model = RandomForestRegressor(n_estimators=3, max_depth=7, random_state=0).fit(X, y)
    d = X.shape[1]
    result = tree_shap(model, X[:4])
    for i in range(4):
        def game(mask, x=X[i]):
            return np.mean([_tree_expectation(t, x, mask) for t in model.estimators_], axis=0)

        phi, base = _shapley_from_game(game, d)
        np.testing.assert_allclose(result.values[i], phi, atol=1e-12)
        np.testing.assert_allclose(result.base_values[i], base, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_interventional_matches_enumeration_with_model_predict(backend):
    X, y = _data(seed=1, nan=0.05)
    model = HistGradientBoostingRegressor(max_iter=15, random_state=0).fit(X, y)
    background = X[:15]
    result = tree_shap(model, X[:3], background=background, backend=backend)
    _assert_interventional_by_enumeration(result, model.predict, X[:3], background,
                                          atol=1e-10)


@pytest.mark.parametrize("model, classes", [
    (HistGradientBoostingClassifier(max_iter=6, random_state=0), True),  # 3 outputs, NaN
    (DecisionTreeRegressor(max_depth=3), False),  # fit to a constant: a single leaf
])
def test_interventional_base_value_is_the_mean_background_prediction(model, classes):
    # the base value is read off the background patterns, not predicted
    X, y = _data(seed=2, nan=0.05)
    target = np.digitize(y, np.quantile(y, [0.3, 0.6])) if classes else np.full(len(y), 2.5)
    ensemble = read_model(model.fit(X, target))
    background = X[:40]
    result = tree_shap(ensemble, X[:2], background=background)
    expected = ensemble.predict_raw(background).mean(axis=0)
    np.testing.assert_allclose(result.base_values, np.tile(expected, (2, 1)), rtol=1e-13,
                               atol=1e-13)
    assert result.base_values.shape == (2, ensemble.n_outputs)


def _three_class_ensemble(seed, max_iter):
    """Rows with NaN and the read trees of a 3-class HistGradientBoosting on them."""
    X, y = _data(seed=seed, nan=0.05)
    model = HistGradientBoostingClassifier(max_iter=max_iter, random_state=0).fit(
        X, np.digitize(y, np.quantile(y, [0.3, 0.6])))
    ensemble = read_model(model)
    assert ensemble.n_outputs == 3
    return X, ensemble


def _assert_same_values(result, reference, ensemble, rows):
    """Equal values and base values to round-off, and efficiency against the trees."""
    np.testing.assert_allclose(result.values, reference.values, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(result.base_values, reference.base_values, rtol=1e-13,
                               atol=1e-13)
    np.testing.assert_allclose(result.values.sum(axis=1) + result.base_values,
                               ensemble.predict_raw(rows), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_interventional_background_in_chunks_within_working_memory(backend, monkeypatch):
    # The pattern tables grow as paths x background rows; past working_memory the
    # background is taken in chunks, and the values are the same to round-off.
    from skshapley import config_context
    from skshapley.tree import _api

    X, ensemble = _three_class_ensemble(seed=3, max_iter=8)
    background = X[:37]
    whole = tree_shap(ensemble, X[:5], background=background, backend=backend)
    budget = 7 * _api.PATTERN_BYTES * ensemble.n_paths / 2**20  # 7 background rows a pass
    assert _api.background_chunk_rows(ensemble.n_paths, 37, budget) == 7
    sizes = []
    resolve = _api._resolve_backend

    def recording(*args, **kwargs):
        kernels = resolve(*args, **kwargs)
        spy = SimpleNamespace(**vars(kernels))

        def patterns(background, *rest, **kwargs):
            sizes.append((background.shape[0], rest[-3].shape))  # rows, pattern table
            return kernels.tree_background_patterns(background, *rest, **kwargs)

        spy.tree_background_patterns = patterns
        return spy

    monkeypatch.setattr(_api, "_resolve_backend", recording)
    with config_context(working_memory=budget):
        chunked = tree_shap(ensemble, X[:5], background=background, backend=backend)
    assert sizes == [(7, (ensemble.n_paths, 7))] * 5 + [(2, (ensemble.n_paths, 2))]
    _assert_same_values(chunked, whole, ensemble, X[:5])


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_interventional_in_path_ranges_and_without_the_index(backend, monkeypatch):
    # The pattern tables are built a range of paths at a time (pointers rebased per
    # range) and, for few rows, through the sorted-run index; small ranges (7 paths, with
    # background chunks of 5 rows), many rows (no pruning) and an index over its budget
    # (no pruning) must all give the same values and base values.
    from skshapley import config_context
    from skshapley.backends.tree import _numba_index
    from skshapley.tree import _api

    X, ensemble = _three_class_ensemble(seed=5, max_iter=6)
    assert ensemble.n_paths > 50
    background = X[:23]
    few = tree_shap(ensemble, X[:4], background=background, backend=backend)
    many = tree_shap(ensemble, X[:40], background=background, backend=backend)
    np.testing.assert_allclose(many.values[:4], few.values, rtol=1e-12, atol=1e-12)
    monkeypatch.setattr(_api, "MIN_PATH_RANGE", 7)
    monkeypatch.setattr(_api, "PATTERN_TABLE_BYTES", 0)
    assert _api.path_range_size(ensemble.n_paths, 23) == 7
    with config_context(working_memory=5 * _api.PATTERN_BYTES * 7 / 2**20):
        ranged = tree_shap(ensemble, X[:4], background=background, backend=backend)
    monkeypatch.setattr(_numba_index, "INDEX_BYTES", 0)
    unindexed = tree_shap(ensemble, X[:4], background=background, backend=backend)
    for result in (ranged, unindexed):
        _assert_same_values(result, few, ensemble, X[:4])


MODELS = [
    ("dt", lambda: DecisionTreeRegressor(max_depth=8, random_state=0), "predict", False),
    ("rf", lambda: RandomForestRegressor(n_estimators=5, max_depth=6, random_state=0),
     "predict", False),
    ("et", lambda: ExtraTreesRegressor(n_estimators=5, max_depth=6, random_state=0),
     "predict", False),
    ("rfc", lambda: RandomForestClassifier(n_estimators=5, max_depth=6, random_state=0),
     "predict_proba", True),
    ("gbr", lambda: GradientBoostingRegressor(n_estimators=10, random_state=0), "predict",
     False),
    ("gbc3", lambda: GradientBoostingClassifier(n_estimators=8, random_state=0),
     "decision_function", True),
    ("hgbr", lambda: HistGradientBoostingRegressor(max_iter=10, random_state=0), "predict",
     False),
    ("hgbc3", lambda: HistGradientBoostingClassifier(max_iter=10, random_state=0),
     "decision_function", True),
]


@pytest.mark.parametrize("name,make,output,classifier", MODELS, ids=[m[0] for m in MODELS])
def test_sklearn_models_are_additive_and_backends_agree(name, make, output, classifier):
    nan = 0.05 if name in ("dt", "rf", "rfc", "hgbr", "hgbc3") else 0.0
    X, y = _data(seed=2, nan=nan)
    if classifier:
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    model = make().fit(X, y)
    rows = X[:40]
    results = {b: tree_shap(model, rows, backend=b) for b in ("numpy", "numba")}
    raw = np.asarray(getattr(model, output)(rows)).reshape(len(rows), -1)
    total = results["numba"].values.sum(axis=1) + results["numba"].base_values
    np.testing.assert_allclose(total, raw, atol=1e-10)
    np.testing.assert_allclose(results["numba"].values, results["numpy"].values, atol=1e-12)
    background = np.nan_to_num(X[100:130])
    inter = {b: tree_shap(model, rows, background=background, backend=b)
             for b in ("numpy", "numba")}
    np.testing.assert_allclose(inter["numba"].values, inter["numpy"].values, atol=1e-12)
    total = inter["numba"].values.sum(axis=1) + inter["numba"].base_values
    np.testing.assert_allclose(total, raw, atol=1e-10)


def test_equals_shap_tree_explainer_on_sklearn_forest():
    shap = pytest.importorskip("shap")
    X, y = _data(seed=3)
    model = RandomForestRegressor(n_estimators=10, max_depth=8, random_state=0).fit(X, y)
    ours = tree_shap(model, X[:30], interactions=True)
    explainer = shap.TreeExplainer(model)
    np.testing.assert_allclose(ours.values[..., 0], explainer.shap_values(X[:30]), atol=1e-10)
    np.testing.assert_allclose(ours.interactions[..., 0],
                               explainer.shap_interaction_values(X[:30]), atol=1e-10)
    np.testing.assert_allclose(ours.base_values[0, 0], explainer.expected_value, atol=1e-10)


def test_interactions_are_symmetric_and_sum_to_shap_values():
    X, y = _data(seed=4, nan=0.05)
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(
        X, np.digitize(y, [0.0, 1.0]))
    for backend in ("numpy", "numba"):
        result = tree_shap(model, X[:10], interactions=True, backend=backend)
        inter = result.interactions
        np.testing.assert_allclose(inter, np.swapaxes(inter, 1, 2), atol=1e-12)
        np.testing.assert_allclose(inter.sum(axis=2), result.values, atol=1e-12)


def test_xgboost_pred_contribs_and_interactions():
    xgboost = pytest.importorskip("xgboost")
    X, y = _data(seed=5, nan=0.05)
    labels = np.digitize(y, [0.0, 1.0])
    for model in (xgboost.XGBRegressor(n_estimators=30, max_depth=5, random_state=0).fit(X, y),
                  xgboost.XGBClassifier(n_estimators=20, max_depth=4, random_state=0).fit(
                      X, labels)):
        booster = model.get_booster()
        ours = tree_shap(model, X[:30], interactions=True)
        contribs = booster.predict(xgboost.DMatrix(X[:30]), pred_contribs=True)
        interactions = booster.predict(xgboost.DMatrix(X[:30]), pred_interactions=True)
        if contribs.ndim == 2:
            contribs, interactions = contribs[:, None], interactions[:, None]
        scale = np.abs(ours.ensemble.out_value).max() * (8 * 5 + 30)
        tolerance = 2.0**-23 * scale  # float32 peer (§8.9)
        np.testing.assert_allclose(np.moveaxis(ours.values, 2, 1), contribs[..., :-1],
                                   atol=tolerance)
        np.testing.assert_allclose(ours.base_values, contribs[:, :, -1], atol=tolerance)
        np.testing.assert_allclose(np.moveaxis(ours.interactions, 3, 1),
                                   interactions[..., :-1, :-1], atol=tolerance)


def test_lightgbm_pred_contrib_with_missing_modes():
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _data(seed=6, nan=0.05)
    X[:20, 1] = 0.0
    for options in ({}, {"zero_as_missing": True}, {"use_missing": False}):
        model = lightgbm.LGBMRegressor(n_estimators=20, verbose=-1, **options).fit(X, y)
        ours = tree_shap(model, X[:40])
        contrib = model.predict(X[:40], pred_contrib=True)
        np.testing.assert_allclose(ours.values[..., 0], contrib[:, :-1], atol=1e-10)
        np.testing.assert_allclose(ours.values.sum(1) + ours.base_values,
                                   model.predict(X[:40], raw_score=True)[:, None], atol=1e-10)


def test_numba_path_dependent_row_alone_equals_row_in_a_block():
    # A block with one distinct pattern takes the scalar quadrature, others the loops
    # over patterns; the operations per pattern are the same, so a row's values must be
    # the same bits alone, repeated, and among other rows.
    X, y = _data(seed=11, nan=0.05)
    ensemble = read_model(RandomForestRegressor(n_estimators=6, max_depth=8,
                                                random_state=0).fit(np.nan_to_num(X), y))
    rows = np.nan_to_num(X[:20])
    block = tree_shap(ensemble, rows, feature_perturbation="tree_path_dependent",
                      backend="numba").values
    alone = np.concatenate([
        tree_shap(ensemble, rows[i:i + 1], feature_perturbation="tree_path_dependent",
                  backend="numba").values for i in range(len(rows))])
    repeated = tree_shap(ensemble, np.repeat(rows[:1], 4, axis=0),
                         feature_perturbation="tree_path_dependent", backend="numba").values
    assert np.array_equal(block, alone)
    assert np.array_equal(repeated, np.repeat(alone[:1], 4, axis=0))
    reference = tree_shap(ensemble, rows, feature_perturbation="tree_path_dependent",
                          backend="numpy").values
    np.testing.assert_allclose(alone, reference, rtol=1e-12, atol=1e-12)


def test_numba_results_do_not_depend_on_the_thread_count():
    X, y = _data(seed=7, n=1500)
    model = RandomForestRegressor(n_estimators=5, max_depth=6, random_state=0).fit(X, y)
    threads = get_num_threads()
    try:
        outputs = []
        for n_threads in (1, threads):
            set_num_threads(n_threads)
            outputs.append(tree_shap(model, X, backend="numba").values)
            outputs.append(tree_shap(model, X[:50], backend="numba").values)
            outputs.append(tree_shap(model, X, background=X[:20], backend="numba").values)
            outputs.append(tree_shap(model, X[:4], background=X[:20], backend="numba").values)
            outputs.append(tree_shap(model, X[:2], background=X[:20], backend="numba").values)
    finally:
        set_num_threads(threads)
    for a, b in zip(outputs[:5], outputs[5:], strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("n_rows", [0, 1, 4])
@pytest.mark.parametrize("n_background", [1, 3, 40, 300])
def test_background_patterns_match_the_reference(n_background, n_rows):
    # deep trees on many features: short paths are counted by value, long ones (2^u above
    # twice the background) go through the hash table; both must give the sorted distinct
    # patterns and their counts of the NumPy twin, also when the background rows that
    # cannot matter to a few rows are left out
    from skshapley.backends import get_backend
    from skshapley.backends.tree import _numpy
    from skshapley.backends.tree._numpy import elements_satisfied

    rng = np.random.default_rng(n_background)
    X = rng.normal(size=(3000, 12))
    y = X @ rng.normal(size=12) + np.sin(3 * X[:, 0]) * X[:, 1]
    X[::13, 4] = np.nan
    ensemble = read_model(ExtraTreesRegressor(n_estimators=3, max_depth=16,
                                              random_state=0).fit(X, y))
    assert np.diff(ensemble.path_ptr).max() > 9  # the hash branch runs at every size
    background = ensemble.prepare(X[rng.integers(0, 3000, n_background)])
    arrays = ensemble.path_arrays()
    rows = ensemble.prepare(X[rng.integers(0, 3000, n_rows)]) if n_rows else None
    results = []
    for kernels in (_numpy, get_backend("numba")):
        out = (np.zeros((ensemble.n_paths, n_background), np.uint64),
               np.zeros((ensemble.n_paths, n_background)), np.zeros(ensemble.n_paths, np.int64))
        reached = np.full(ensemble.n_paths, -1.0)
        results.append((*kernels.tree_background_patterns(background, arrays, *out,
                                                          rows=rows, reached=reached),
                        reached))
    for expected, got in zip(*results, strict=True):
        np.testing.assert_array_equal(got, expected)
    patterns, counts, n_distinct, reached = results[0]
    # every background row reaches exactly one leaf per tree (single-output regressor)
    leaves = ensemble.predict_raw(background) - ensemble.offset
    np.testing.assert_allclose(reached @ ensemble.leaf_values(), leaves.sum(axis=0),
                               rtol=1e-12, atol=1e-12)
    if n_rows == 0:
        assert n_distinct.max() > 1 or n_background == 1
        assert np.all(counts.sum(axis=1) == n_background)
    else:  # rows were left out, by the rule: a kept pattern satisfies what no row does
        assert counts.sum() < ensemble.n_paths * n_background
        for p in range(ensemble.n_paths):
            e = slice(ensemble.path_ptr[p], ensemble.path_ptr[p + 1])
            by_rows = elements_satisfied(rows[:, ensemble.feature[e]], ensemble.lower[e],
                                         ensemble.upper[e], ensemble.missing_branch[e],
                                         ensemble.missing_mode[e])
            required = np.flatnonzero(~by_rows.any(axis=0)).astype(np.uint64)
            kept = patterns[p, :n_distinct[p]]
            assert np.all((kept[:, None] >> required) & np.uint64(1))


@pytest.mark.parametrize("packing", ["none", "nf", "ffd", "bfd"])
def test_warp_emulator_matches_the_reference(packing):
    X, y = _data(seed=8, nan=0.05)
    model = RandomForestRegressor(n_estimators=4, max_depth=9, random_state=0).fit(X, y)
    ensemble = read_model(model)
    reference = tree_shap(ensemble, X[:6], backend="numpy").values
    np.testing.assert_allclose(np.moveaxis(emulate_warp_shap(ensemble, X[:6], packing), 1, 2),
                               reference, atol=1e-12)
    lightgbm = pytest.importorskip("lightgbm")  # categorical sets in the lanes
    model, rows = _categorical_lightgbm(lightgbm)
    ensemble = read_model(model)
    reference = tree_shap(ensemble, rows[:8], backend="numpy").values
    np.testing.assert_allclose(np.moveaxis(emulate_warp_shap(ensemble, rows[:8], packing), 1,
                                           2), reference, atol=1e-12)


def test_unsupported_models_and_inputs_raise_clear_errors():
    X, y = _data(seed=9)
    with pytest.raises(ValueError, match="LinearRegression"):
        tree_shap(LinearRegression().fit(X, y), X[:2])
    model = DecisionTreeRegressor(max_depth=3).fit(X, y)
    with pytest.raises(ValueError, match="6 columns"):
        tree_shap(model, X[:2, :4])
    with pytest.raises(ValueError, match="infinite"):
        tree_shap(model, np.full((1, 6), np.inf))
    with pytest.raises(ValueError, match="feature_perturbation"):
        tree_shap(model, X[:2], feature_perturbation="nope")
    with pytest.raises(ValueError, match="background"):
        tree_shap(model, X[:2], feature_perturbation="interventional")
    with pytest.raises(ValueError, match="interactions"):
        tree_shap(model, X[:2], background=X[:5], interactions=True)


def _categorical_xgboost(xgboost, pd, *, one_hot, classes=0, seed=0):
    """An XGBoost model with categorical splits, and rows of category codes: missing,
    unseen (9), invalid (-1) and non-integer (2.5, which XGBoost truncates) included."""
    rng = np.random.default_rng(seed)
    n = 600
    frame = pd.DataFrame({"a": rng.normal(size=n),
                          "c": pd.Categorical(rng.integers(0, 6, n)),
                          "d": pd.Categorical(rng.choice(list("pqrs"), n))})
    codes_c, codes_d = frame["c"].cat.codes.to_numpy(), frame["d"].cat.codes.to_numpy()
    y = (frame["a"].to_numpy() + 2.0 * np.isin(codes_c, [1, 3, 4]) + 1.5 * (codes_d == 1)
         + (codes_c == 5) * (codes_d == 3))
    options = dict(n_estimators=15, max_depth=4, enable_categorical=True, tree_method="hist",
                   max_cat_to_onehot=8 if one_hot else 1, random_state=0)
    if classes:
        model = xgboost.XGBClassifier(**options).fit(
            frame, np.digitize(y, np.quantile(y, np.linspace(0, 1, classes + 1)[1:-1])))
    else:
        model = xgboost.XGBRegressor(**options).fit(frame, y)
    X = np.column_stack([frame["a"], codes_c, codes_d]).astype(float)[:60]
    X[::7, 1] = np.nan
    X[::5, 2] = np.nan
    X[3, 1], X[4, 1], X[6, 1] = 9.0, -1.0, 2.5
    booster = model.get_booster()

    def matrix(Z):
        return xgboost.DMatrix(Z, feature_names=booster.feature_names,
                               feature_types=booster.feature_types, enable_categorical=True)

    return model, X, matrix


@pytest.mark.parametrize("one_hot, classes", [(False, 0), (True, 0), (False, 3)])
def test_xgboost_categorical_splits_match_pred_contribs_and_interactions(one_hot, classes):
    xgboost = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    model, X, matrix = _categorical_xgboost(xgboost, pd, one_hot=one_hot, classes=classes)
    booster = model.get_booster()
    ours = tree_shap(model, X, interactions=True)
    contribs = booster.predict(matrix(X), pred_contribs=True)
    interactions = booster.predict(matrix(X), pred_interactions=True)
    if contribs.ndim == 2:
        contribs, interactions = contribs[:, None], interactions[:, None]
    tolerance = 2.0**-23 * np.abs(ours.ensemble.out_value).max() * (8 * 4 + 15) * 4
    np.testing.assert_allclose(np.moveaxis(ours.values, 2, 1), contribs[..., :-1],
                               atol=tolerance)
    np.testing.assert_allclose(ours.base_values, contribs[:, :, -1], atol=tolerance)
    np.testing.assert_allclose(np.moveaxis(ours.interactions, 3, 1),
                               interactions[..., :-1, :-1], atol=tolerance)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_xgboost_categorical_interventional_matches_enumeration(backend):
    xgboost = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    model, X, matrix = _categorical_xgboost(xgboost, pd, one_hot=False, seed=1)
    booster = model.get_booster()
    rows, background = X[:4], X[20:45]
    result = tree_shap(model, rows, background=background, backend=backend)
    _assert_interventional_by_enumeration(
        result, lambda Z: booster.predict(matrix(Z), output_margin=True), rows, background,
        atol=1e-5)


def test_categorical_sets_are_one_element_per_feature():
    # sets of codes below SET_CODES are held as one element: one path per leaf
    xgboost = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    from skshapley.backends.tree._numpy import CATEGORY_SET

    model, _, _ = _categorical_xgboost(xgboost, pd, one_hot=False)
    ensemble = read_model(model)
    trees = json.loads(model.get_booster().save_raw(raw_format="json"))["learner"][
        "gradient_booster"]["model"]["trees"]
    leaves = sum(sum(1 for child in tree["left_children"] if child == -1) for tree in trees)
    assert ensemble.n_paths == leaves
    assert np.diff(ensemble.path_ptr).max() <= 3  # one element per feature
    sets = ensemble.missing_mode == CATEGORY_SET
    assert sets.any() and np.all(np.isin(ensemble.feature[sets], [1, 2]))


def test_categorical_sets_beyond_the_bitset_split_paths():
    # codes past SET_CODES: a split's set becomes one path per interval, still exact
    xgboost = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    from skshapley.backends.tree._numpy import SET_CODES

    rng = np.random.default_rng(5)
    n = 3000
    codes = rng.integers(0, 160, n)
    frame = pd.DataFrame({"a": rng.normal(size=n),
                          "c": pd.Categorical(codes, categories=np.arange(160))})
    y = frame["a"].to_numpy() + 2.0 * (codes % 3 == 0) + (codes > 140)
    model = xgboost.XGBRegressor(n_estimators=10, max_depth=3, enable_categorical=True,
                                 tree_method="hist", max_cat_to_onehot=1,
                                 random_state=0).fit(frame, y)
    ensemble = read_model(model)
    assert ensemble.n_paths > 10 * 8  # split paths
    assert np.any(np.isfinite(ensemble.upper) & (ensemble.upper > SET_CODES))
    X = np.column_stack([frame["a"], codes]).astype(float)[:30]
    X[::4, 1] = np.nan
    X[1, 1], X[2, 1] = 150.7, 200.0
    booster = model.get_booster()
    contribs = booster.predict(xgboost.DMatrix(
        X, feature_names=booster.feature_names, feature_types=booster.feature_types,
        enable_categorical=True), pred_contribs=True)
    ours = tree_shap(model, X)
    np.testing.assert_allclose(ours.values[..., 0], contribs[:, :-1], atol=1e-5)


def test_category_set_words_hold_the_atoms():
    from skshapley.backends.tree._numpy import (
        CATEGORY_SET,
        SET_CODES,
        category_set_words,
        elements_satisfied,
    )

    union = ((-np.inf, 0.0), (2.0, 4.0), (50.0, 51.0), (SET_CODES - 1.0, np.inf))
    lower, upper = category_set_words(union)
    x = np.array([-5.0, -1.0, -0.5, 0.0, 0.99, 2.0, 3.7, 4.0, 50.5, 51.0, SET_CODES - 0.5,
                  SET_CODES + 0.0, 1e9])
    inside = elements_satisfied(x[:, None], np.array([lower]), np.array([upper]),
                                np.array([0], np.uint8), np.array([CATEGORY_SET], np.uint8))
    expected = [any(lo <= v < hi for lo, hi in union) for v in x]
    np.testing.assert_array_equal(inside[:, 0], expected)
    assert category_set_words(((0.5, 2.0),)) is None  # an edge inside an atom
    assert category_set_words(((0.0, SET_CODES + 5.0),)) is None


def _caterpillar(depth=40, seed=0):
    """A tree whose node i splits feature i (left: a leaf), so its deepest path tests
    ``depth`` distinct features: longer than a warp (31 + root)."""
    from skshapley.tree import build_ensemble
    from skshapley.tree._ensemble import NodeTable

    rng = np.random.default_rng(seed)
    n = 2 * depth + 1
    parent = np.full(n, -1)
    feature = np.zeros(n, np.int32)
    lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
    is_leaf = np.zeros(n, bool)
    cover = np.zeros(n)
    # node 2i is internal (splits feature i), its left child 2i + 1 is a leaf
    cover[0] = 1000.0
    for i in range(depth):
        node, left, right = 2 * i, 2 * i + 1, 2 * i + 2
        parent[left] = parent[right] = node
        feature[left] = feature[right] = i
        threshold = rng.normal()
        upper[left], lower[right] = threshold, threshold
        share = rng.uniform(0.2, 0.8)
        cover[left], cover[right] = cover[node] * share, cover[node] * (1 - share)
        is_leaf[left] = True
    is_leaf[n - 1] = True
    values = np.where(is_leaf, rng.normal(size=n), 0.0)[:, None]
    table = NodeTable(parent=parent, feature=feature, lower=lower, upper=upper,
                      missing_branch=np.zeros(n, bool), missing_mode=np.zeros(n, np.uint8),
                      cover=cover, is_leaf=is_leaf, leaf_values=values)
    return build_ensemble([table], n_features=depth, n_outputs=1, offset=[0.5],
                          input_dtype=np.float64)


def test_long_paths_on_the_cpu_are_exact():
    ensemble = _caterpillar(40)
    assert ensemble.max_path_length == 40
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 40)) - 2.0  # most rows go deep
    ours = {b: tree_shap(ensemble, X, backend=b) for b in ("numpy", "numba")}
    np.testing.assert_allclose(ours["numba"].values, ours["numpy"].values, atol=1e-12)
    total = ours["numba"].values.sum(axis=1) + ours["numba"].base_values
    np.testing.assert_allclose(total, ensemble.predict_raw(X), atol=1e-12)


GPU_BACKENDS = [b for b in ("numba_cuda", "cupy") if b in available_backends()]


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_BACKENDS, reason="no CUDA device")
@pytest.mark.parametrize("backend", GPU_BACKENDS or ["none"])
def test_gpu_backends_match_the_reference(backend):
    X, y = _data(seed=10, n=2000, d=40, nan=0.02)
    labels = np.digitize(y, [0.0, 1.0])
    models = [RandomForestRegressor(n_estimators=5, max_depth=12, random_state=0).fit(X, y),
              RandomForestClassifier(n_estimators=5, max_depth=40, random_state=0).fit(
                  X, labels)]
    for model in models:
        ensemble = read_model(model)
        reference = tree_shap(ensemble, X[:300], backend="numba").values
        ours = tree_shap(ensemble, X[:300], backend=backend).values
        np.testing.assert_allclose(ours, reference, atol=1e-10)
        try:
            ours = tree_shap(ensemble, X[:50], interactions=True, backend=backend)
            reference = tree_shap(ensemble, X[:50], interactions=True, backend="numba")
            np.testing.assert_allclose(ours.interactions, reference.interactions, atol=1e-10)
        except BackendUnavailableError:
            pass  # this backend has no interaction kernel yet
        try:
            ours = tree_shap(ensemble, X[:100], background=X[1000:1050], backend=backend)
        except BackendUnavailableError:
            continue  # this backend has no interventional kernel yet
        reference = tree_shap(ensemble, X[:100], background=X[1000:1050], backend="numba")
        np.testing.assert_allclose(ours.values, reference.values, atol=1e-10)
    # paths longer than 31 distinct features take the fallback kernel
    ensemble = _caterpillar(40)
    rows = np.random.default_rng(2).normal(size=(500, 40)) - 2.0
    np.testing.assert_allclose(tree_shap(ensemble, rows, backend=backend).values,
                               tree_shap(ensemble, rows, backend="numba").values, atol=1e-10)


def test_auto_backend_policy_moves_large_work_to_a_gpu():
    from types import SimpleNamespace

    from backend_helpers import missing_kernel

    from skshapley.backends import get_backend
    from skshapley.backends._registry import GPU_MIN_WORK
    from skshapley.backends._registry import choose_backend as choose_tree_backend

    def kernel(*args):
        return None

    needed = ("tree_path_shap", "tree_path_interactions")
    cupy_like = SimpleNamespace(tree_path_shap=kernel,
                                tree_path_interactions=missing_kernel("cupy", "x"))
    cuda_like = SimpleNamespace(tree_path_shap=kernel, tree_path_interactions=kernel)
    gpus = {"cupy": cupy_like, "numba_cuda": cuda_like}
    big = 10 * GPU_MIN_WORK
    # CuPy first, unless it lacks a kernel the call needs
    assert choose_tree_backend("auto", big, 10, needed[:1], gpus) == "cupy"
    assert choose_tree_backend("auto", big, 10, needed, gpus) == "numba_cuda"
    # small work, over-long paths or no GPU: the CPU backend "auto" runs on, by name
    cpu = get_backend("auto").name
    assert cpu in ("numba", "numpy")
    assert choose_tree_backend("auto", GPU_MIN_WORK / 10, 10, needed[:1], gpus) == cpu
    assert choose_tree_backend("auto", big, 65, needed[:1], gpus) == cpu
    assert choose_tree_backend("auto", big, 10, needed[:1], {}) == cpu
    assert choose_tree_backend("auto", big, 10, (), gpus) == cpu
    # a backend named explicitly: unchanged
    assert choose_tree_backend("numba", big, 10, needed[:1], gpus) == "numba"


def test_auto_backend_without_a_gpu_runs_on_the_cpu():
    from skshapley import config_context

    X, y = _data(seed=3, n=300, d=6, nan=0.0)
    model = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    with config_context(backend="auto"):
        auto = tree_shap(model, X[:20])
    np.testing.assert_allclose(auto.values, tree_shap(model, X[:20], backend="numba").values,
                               atol=1e-12)


def _categorical_hist(pd, *, classes=0, seed=0):
    """A HistGradientBoosting model with a pandas categorical and a text column as
    categorical features (not first: the model moves them first), and rows with
    missing and unseen values."""
    rng = np.random.default_rng(seed)
    n = 800
    frame = pd.DataFrame({"a": rng.normal(size=n),
                          "c": pd.Categorical(rng.choice(list("uvwxyz"), n)),
                          "b": rng.normal(size=n),
                          "s": rng.choice(["p", "q", "r", "t"], n).astype(object)})
    frame.loc[::13, "c"] = np.nan
    c, s = frame["c"].astype(object), frame["s"]
    y = (frame["a"] + 2.0 * c.isin(["v", "x", "y"]) + 1.5 * (s == "q")
         + (c == "z") * (frame["b"] > 0)).to_numpy(float)
    options = dict(max_iter=20, max_depth=4, categorical_features=["c", "s"], random_state=0)
    if classes:
        from sklearn.ensemble import HistGradientBoostingClassifier as Model

        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, classes + 1)[1:-1]))
    else:
        Model = HistGradientBoostingRegressor
    model = Model(**options).fit(frame, y)
    rows = frame.iloc[:40].copy()
    rows.loc[rows.index[3], "s"] = "unseen"
    rows.loc[rows.index[5], "s"] = None
    return model, frame, rows


def _with_columns_of(frame, row, columns):
    """``frame`` with ``columns`` set to ``row``'s values (dtypes kept)."""
    mixed = frame.copy()
    for name in columns:
        mixed[name] = pd_series_like(frame[name], row[name])
    return mixed


def pd_series_like(column, value):
    import pandas as pd

    return pd.Series([value] * len(column), index=column.index, dtype=column.dtype)


def _hist_expectation(model, predictor, encoded, original, mask):
    """E[f(x) | x_S] by the recursion of §8.1.1 on a HistGradientBoosting predictor,
    routing as scikit-learn documents (independent of the IR): ``encoded`` is the row in
    the predictor's columns, ``original[f]`` the frame column of its column f."""
    nodes = predictor.nodes
    known, known_row = model._bin_mapper.make_known_categories_bitsets()

    def in_bitset(bitset, code):
        return bool(bitset[code // 32] >> (code % 32) & 1)

    def goes_left(node, value):
        if np.isnan(value):
            return bool(nodes["missing_go_to_left"][node])
        if nodes["is_categorical"][node]:
            code = int(value)
            if value >= 0 and in_bitset(predictor.raw_left_cat_bitsets[
                    nodes["bitset_idx"][node]], code):
                return True
            if value >= 0 and in_bitset(known[known_row[nodes["feature_idx"][node]]], code):
                return False
            return bool(nodes["missing_go_to_left"][node])  # unknown: as missing
        return value <= nodes["num_threshold"][node]

    def walk(node):
        if nodes["is_leaf"][node]:
            return nodes["value"][node]
        f, left, right = nodes["feature_idx"][node], nodes["left"][node], nodes["right"][node]
        if mask >> int(original[f]) & 1:
            return walk(left if goes_left(node, encoded[f]) else right)
        count = nodes["count"]
        return (count[left] * walk(left) + count[right] * walk(right)) / count[node]

    return walk(0)


def test_hist_gradient_boosting_categorical_path_dependent_by_enumeration():
    pd = pytest.importorskip("pandas")
    model, frame, rows = _categorical_hist(pd)
    # the predictors' columns: the preprocessor's outputs, transformer by transformer
    preprocessor = model._preprocessor
    original = np.concatenate([preprocessor._transformer_to_input_indices[name]
                               for name, _, _ in preprocessor.transformers_])
    assert original.tolist() == [1, 3, 0, 2]  # the categorical columns were moved
    encoded = model._preprocessor.transform(rows)
    result = tree_shap(model, rows.iloc[:6])
    baseline = float(np.ravel(model._baseline_prediction)[0])
    for i in range(6):
        def game(mask, x=encoded[i]):
            return baseline + sum(_hist_expectation(model, predictors[0], x, original, mask)
                                  for predictors in model._predictors)

        phi, base = _shapley_from_game(game, frame.shape[1])
        np.testing.assert_allclose(result.values[i, :, 0], phi, atol=1e-10)
        np.testing.assert_allclose(result.base_values[i, 0], base, atol=1e-10)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_hist_gradient_boosting_categorical_interventional_by_enumeration(backend):
    pd = pytest.importorskip("pandas")
    model, frame, rows = _categorical_hist(pd, seed=1)
    explained, background = rows.iloc[:6], frame.iloc[100:125]
    result = tree_shap(model, explained, background=background, backend=backend)
    columns = list(frame.columns)
    for i in range(len(explained)):
        def game(mask, x=explained.iloc[i]):
            chosen = [name for j, name in enumerate(columns) if mask >> j & 1]
            return model.predict(_with_columns_of(background, x, chosen)).mean()

        phi, base = _shapley_from_game(game, len(columns))
        np.testing.assert_allclose(result.values[i, :, 0], phi, atol=1e-10)
        np.testing.assert_allclose(result.base_values[i, 0], base, atol=1e-10)


def test_hist_gradient_boosting_categorical_classifier_and_interactions():
    pd = pytest.importorskip("pandas")
    model, _, rows = _categorical_hist(pd, classes=3, seed=2)
    result = tree_shap(model, rows, interactions=True)
    margins = model.decision_function(rows)
    np.testing.assert_allclose(result.values.sum(axis=1) + result.base_values, margins,
                               atol=1e-10)
    np.testing.assert_allclose(result.interactions.sum(axis=2), result.values, atol=1e-10)
    np.testing.assert_allclose(result.interactions, np.swapaxes(result.interactions, 1, 2),
                               atol=1e-12)


def test_hist_gradient_boosting_categorical_numbers_are_encoded_by_the_model():
    # categorical values given as arbitrary numbers (not codes) in the middle column
    rng = np.random.default_rng(3)
    n = 600
    levels = np.array([-4.0, 10.0, 20.0, 35.5, 70.0])
    X = np.column_stack([rng.normal(size=n), rng.choice(levels, n), rng.normal(size=n)])
    y = X[:, 0] + np.isin(X[:, 1], [10.0, 70.0]) * 2.0 - (X[:, 1] == 35.5) * X[:, 2]
    mask = np.array([False, True, False])
    model = HistGradientBoostingRegressor(max_iter=20, categorical_features=mask,
                                          random_state=0).fit(X, y)
    rows = X[:8].copy()
    rows[0, 1], rows[1, 1], rows[2, 1] = np.nan, 11.0, 3.0  # missing, unseen, unseen
    background = X[50:70]
    result = tree_shap(model, rows, background=background)
    _assert_interventional_by_enumeration(result, model.predict, rows, background,
                                          atol=1e-10)
    path_dependent = tree_shap(model, rows)
    np.testing.assert_allclose(path_dependent.values.sum(axis=1)[:, 0]
                               + path_dependent.base_values[:, 0], model.predict(rows),
                               atol=1e-10)


def test_hist_gradient_boosting_categorical_input_errors():
    pd = pytest.importorskip("pandas")
    model, frame, rows = _categorical_hist(pd)
    with pytest.raises(ValueError, match="4 columns"):
        tree_shap(model, rows.iloc[:, :3])
    with pytest.raises(ValueError, match="X must be what HistGradientBoostingRegressor takes"):
        tree_shap(model, rows.rename(columns={"s": "other"}))


def _categorical_lightgbm(lightgbm, *, classes=0, seed=0):
    """A LightGBM model with categorical splits on codes (columns 1 and 2), and rows with
    missing, negative, fractional (truncated, (-1, 0) to code 0) and unseen codes."""
    rng = np.random.default_rng(seed)
    n = 1500
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 12, n), rng.integers(0, 5, n)]
                        ).astype(float)
    X[::11, 1] = np.nan
    y = X[:, 0] + 2.0 * np.isin(X[:, 1], [0, 3, 5, 9]) + (X[:, 2] == 3) * X[:, 0]
    options = dict(n_estimators=20, num_leaves=8, min_data_per_group=5, cat_smooth=1.0,
                   verbose=-1)
    if classes:
        model = lightgbm.LGBMClassifier(**options).fit(
            X, np.digitize(y, np.quantile(y, np.linspace(0, 1, classes + 1)[1:-1])),
            categorical_feature=[1, 2])
    else:
        model = lightgbm.LGBMRegressor(**options).fit(X, y, categorical_feature=[1, 2])
    rows = X[:40].copy()
    rows[1, 1], rows[2, 1], rows[3, 1], rows[4, 1], rows[5, 2] = -0.5, -1.0, 2.7, 20.0, np.nan
    return model, rows


@pytest.mark.parametrize("classes", [0, 3])
def test_lightgbm_categorical_splits_match_pred_contrib(classes):
    lightgbm = pytest.importorskip("lightgbm")
    model, rows = _categorical_lightgbm(lightgbm, classes=classes)
    assert any(node.get("decision_type") == "=="
               for node in _lightgbm_nodes(model.booster_.dump_model()))
    ours = tree_shap(model, rows)
    contrib = model.booster_.predict(rows, pred_contrib=True).reshape(len(rows), -1, 4)
    np.testing.assert_allclose(np.moveaxis(ours.values, 2, 1), contrib[..., :-1], atol=1e-10)
    np.testing.assert_allclose(ours.base_values, contrib[..., -1], atol=1e-10)


def _lightgbm_nodes(dump):
    stack = [info["tree_structure"] for info in dump["tree_info"]]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node[side] for side in ("left_child", "right_child") if side in node)


def test_lightgbm_categorical_interventional_matches_enumeration():
    lightgbm = pytest.importorskip("lightgbm")
    model, rows = _categorical_lightgbm(lightgbm, seed=1)
    explained, background = rows[:6], rows[10:35]
    result = tree_shap(model, explained, background=background)
    _assert_interventional_by_enumeration(
        result, lambda Z: model.predict(Z, raw_score=True), explained, background,
        atol=1e-10)


def test_categorical_frame_without_the_models_encoder_is_refused():
    # np.asarray of a categorical column gives its values (here 10, 20, 30), not the codes
    # XGBoost's trees split on: refused rather than explained wrongly
    xgboost = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"a": rng.normal(size=300),
                          "c": pd.Categorical(rng.choice([10, 20, 30], 300))})
    y = frame["a"] + 3.0 * (frame["c"] == 20)
    model = xgboost.XGBRegressor(n_estimators=5, enable_categorical=True,
                                 tree_method="hist").fit(frame, y)
    with pytest.raises(ValueError, match=r"pandas categorical columns \['c'\].*cat.codes"):
        tree_shap(model, frame)
    codes = frame.assign(c=frame["c"].cat.codes.astype(float))
    values = tree_shap(model, codes).values[..., 0]
    np.testing.assert_allclose(values.sum(axis=1) + tree_shap(model, codes).base_values[:, 0],
                               model.predict(frame), atol=1e-5)


def test_lightgbm_trained_on_categoricals_takes_the_dataframe():
    # LightGBM recodes a frame's categories to its training ones; so does the ensemble
    lightgbm = pytest.importorskip("lightgbm")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(9)
    frame = pd.DataFrame({"a": rng.normal(size=600),
                          "c": pd.Categorical(rng.choice(list("uvwxyz"), 600)),
                          "b": rng.normal(size=600)})
    y = frame["a"] + 3.0 * frame["c"].isin(["v", "y"]) + (frame["c"] == "z") * frame["b"]
    model = lightgbm.LGBMRegressor(n_estimators=20, num_leaves=8, min_data_per_group=5,
                                   cat_smooth=1.0, verbose=-1).fit(frame, y)
    rows = frame.iloc[:30].copy()
    rows["c"] = rows["c"].cat.set_categories(list("zyxwvu"))  # another order
    rows.loc[rows.index[2], "c"] = np.nan
    ours = tree_shap(model, rows)
    contrib = model.predict(rows, pred_contrib=True)
    np.testing.assert_allclose(ours.values[..., 0], contrib[:, :-1], atol=1e-10)
    codes = tree_shap(model, ours.ensemble.prepare(rows))  # codes as numbers: the same
    np.testing.assert_allclose(codes.values, ours.values, atol=1e-12)


def _walk_case(case):
    """(ensemble, rows) of models whose trees the interventional walk must read right:
    NaN and three outputs, categorical unions of intervals, LightGBM's zero as missing."""
    if case == "hgbc3":
        X, ensemble = _three_class_ensemble(seed=13, max_iter=5)
        return ensemble, X
    if case == "extra_trees":
        X, y = _data(seed=14, n=600)
        return read_model(ExtraTreesRegressor(n_estimators=4, max_depth=10,
                                              random_state=0).fit(X, y)), X
    if case == "xgboost_categorical":
        xgboost = pytest.importorskip("xgboost")
        pd = pytest.importorskip("pandas")
        model, X, _ = _categorical_xgboost(xgboost, pd, one_hot=False, seed=2)
        return read_model(model), X
    lightgbm = pytest.importorskip("lightgbm")
    if case == "lightgbm_categorical":
        model, rows = _categorical_lightgbm(lightgbm, seed=3)
        return read_model(model), rows
    X, y = _data(seed=15, nan=0.05)
    X[:60, 1] = 0.0
    model = lightgbm.LGBMRegressor(n_estimators=10, verbose=-1, zero_as_missing=True)
    return read_model(model.fit(X, y)), X


@pytest.mark.parametrize("n_background", [1, 70, 150])
@pytest.mark.parametrize("case", ["hgbc3", "extra_trees", "xgboost_categorical",
                                  "lightgbm_categorical", "lightgbm_zero"])
def test_interventional_walk_matches_the_pattern_tables(case, n_background, monkeypatch):
    # Few rows walk the trees with sets of background rows (one and several 64-bit
    # words); the values and base values must be those of the pattern tables, on both
    # backends, also with the background in chunks of 64 rows (index over its budget).
    from skshapley.backends.tree import _numba_index
    from skshapley.tree import _api, _cache

    ensemble, X = _walk_case(case)
    rng = np.random.default_rng(n_background)
    background = X[rng.integers(0, len(X), n_background)]
    rows = X[[0, 1, 5]] if len(X) > 5 else X[:3]
    monkeypatch.setattr(_api, "WALK_ROWS", 0)
    tables = tree_shap(ensemble, rows, background=background, backend="numba")
    monkeypatch.setattr(_api, "WALK_ROWS", 4)
    _cache.forget_background()
    for backend in ("numba", "numpy"):
        _assert_same_values(tree_shap(ensemble, rows, background=background, backend=backend),
                            tables, ensemble, rows)
    assert _cache._PREPARED.last is not None  # the walk ran
    if n_background > 64:
        monkeypatch.setattr(_numba_index, "INDEX_BYTES", 0)
        assert _numba_index.walk_chunk_rows(ensemble.n_features, n_background) == 64
        _assert_same_values(tree_shap(ensemble, rows, background=background, backend="numba"),
                            tables, ensemble, rows)


def test_interventional_walk_keeps_the_last_background_only_while_it_is_the_same():
    # the walk keeps the edges' row sets of the last background for the next call; an
    # equal background (a new array) reuses them, a changed value or other trees do not
    from skshapley.tree import _cache

    X, ensemble = _three_class_ensemble(seed=16, max_iter=4)
    background, rows = X[:30].copy(), X[40:42]
    first = tree_shap(ensemble, rows, background=background, backend="numba")
    prepared = _cache._PREPARED.last
    again = tree_shap(ensemble, rows, background=background.copy(), backend="numba")
    assert _cache._PREPARED.last is prepared
    assert np.array_equal(again.values, first.values)
    changed = background.copy()
    changed[3, 2] = 1.0 if np.isnan(changed[3, 2]) else changed[3, 2] + 1.0
    moved = tree_shap(ensemble, rows, background=changed, backend="numba")
    assert _cache._PREPARED.last is not prepared
    _assert_same_values(moved, tree_shap(ensemble, rows, background=changed,
                                         backend="numpy"), ensemble, rows)
    other = read_model(HistGradientBoostingClassifier(max_iter=3, random_state=1).fit(
        np.nan_to_num(X), np.arange(len(X)) % 3))
    _assert_same_values(tree_shap(other, rows, background=changed, backend="numba"),
                        tree_shap(other, rows, background=changed, backend="numpy"), other,
                        rows)


def _caterpillar_tree(d=80):
    """A regression tree whose deepest path tests d distinct features: row k differs from
    the rows after it only in feature k."""
    from sklearn.tree import DecisionTreeRegressor

    X = np.ones((d + 1, d))
    X[np.arange(d), np.arange(d)] = -1.0
    model = DecisionTreeRegressor(random_state=0).fit(X, np.arange(d + 1.0))
    return model, X


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_paths_longer_than_the_kernels_take_are_refused_by_name(backend):
    # 80 distinct features on a path: the kernels' patterns are 64-bit words (values were
    # off by 1e281 on numba, an IndexError on NumPy, before this check)
    model, X = _caterpillar_tree()
    ensemble = read_model(model)
    assert ensemble.max_path_length == 80
    for kwargs in ({}, {"interactions": True}):
        with pytest.raises(ValueError, match="up to 64 distinct features.*path with 80"):
            tree_shap(ensemble, X[-3:], backend=backend, **kwargs)


def test_explainer_samples_a_model_whose_paths_are_too_long_for_treeshap():
    from skshapley import ShapleyExplainer

    model, X = _caterpillar_tree()
    explainer = ShapleyExplainer(model, prefit=True, background=X[:20], max_evals=400,
                                 random_state=0).fit(X)
    assert explainer.method_ != "tree"
    result = explainer.explain(X[-2:])
    np.testing.assert_allclose(result.values.sum(axis=1) + result.base_values,
                               model.predict(X[-2:]), atol=1e-9)
    with pytest.raises(ValueError, match="tests 80 distinct features"):
        ShapleyExplainer(model, prefit=True, background=X[:20], method="tree").fit(X)


@pytest.mark.parametrize("interactions", [False, True])
def test_few_rows_with_a_wide_output_run_in_row_blocks_with_the_same_values(interactions,
                                                                          monkeypatch):
    # path chunks keep one output copy each; past PATH_CHUNK_MAX_BYTES the rows run in
    # row blocks instead, which must give the same values
    from skshapley.backends.tree import _numba_paths

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 6))
    model = RandomForestRegressor(n_estimators=5, max_depth=6, random_state=0).fit(
        X, X[:, 0] * X[:, 1] + X[:, 2])
    chunked = tree_shap(model, X[:40], backend="numba", interactions=interactions)
    monkeypatch.setattr(_numba_paths, "PATH_CHUNK_MAX_BYTES", 0)
    blocked = tree_shap(model, X[:40], backend="numba", interactions=interactions)
    np.testing.assert_allclose(blocked.values, chunked.values, rtol=0, atol=1e-12)
    if interactions:
        np.testing.assert_allclose(blocked.interactions, chunked.interactions, rtol=0,
                                   atol=1e-12)
