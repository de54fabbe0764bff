"""What the readers take, refuse and how they read it: models whose output is more than
their trees, missing-value sentinels, early stopping, averaged and identity outputs."""

import warnings

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.tree import DecisionTreeRegressor

from skshapley import ShapleyExplainer
from skshapley.tree import read_model, tree_shap


def _data(seed=0, n=300, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def _sums(explainer, rows):
    explanation = explainer.explain(rows)
    return explanation.values.sum(axis=1) + explanation.base_values


def test_gradient_boosting_from_a_non_constant_init_is_refused():
    # The init tree's predictions depend on the row and are not in the boosted trees: it
    # was taken for a constant offset (values off by 5 on the other side of its split).
    X, y = _data()
    y = y + 5.0 * (X[:, 0] > 1.2)
    model = GradientBoostingRegressor(init=DecisionTreeRegressor(max_depth=1),
                                      n_estimators=10, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="starts from init=DecisionTreeRegressor"):
        read_model(model)
    explainer = ShapleyExplainer(model, prefit=True, background=20, random_state=0).fit(X)
    assert explainer.method_ != "tree"
    np.testing.assert_allclose(_sums(explainer, X[:5]), model.predict(X[:5]), atol=1e-9)
    zero = GradientBoostingRegressor(init="zero", n_estimators=10, random_state=0).fit(X, y)
    assert ShapleyExplainer(zero, prefit=True, background=20).fit(X).method_ == "tree"


def test_xgboost_missing_sentinel_is_refused():
    # The trees route NaN the missing way; -999 would be compared as a number.
    xgboost = pytest.importorskip("xgboost")
    X, y = _data(1)
    X[::7, 1] = -999.0
    model = xgboost.XGBRegressor(n_estimators=10, max_depth=3, missing=-999.0).fit(X, y)
    with pytest.raises(ValueError, match="fitted with missing=-999.0.* reads missing values "
                                         "as NaN"):
        read_model(model)


def test_xgboost_early_stopping_reads_the_rounds_predict_uses():
    xgboost = pytest.importorskip("xgboost")
    X, y = _data(2)
    model = xgboost.XGBRegressor(n_estimators=60, max_depth=3, learning_rate=0.5,
                                 early_stopping_rounds=3, random_state=0)
    model.fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])], verbose=False)
    assert model.best_iteration + 1 < model.get_booster().num_boosted_rounds()
    result = tree_shap(model, X[:20])
    np.testing.assert_allclose(result.values.sum(axis=1)[:, 0] + result.base_values[:, 0],
                               model.predict(X[:20]), atol=1e-5)
    explainer = ShapleyExplainer(model, prefit=True, background=20, random_state=0).fit(X)
    assert explainer.method_ == "tree"


def test_xgboost_classifier_log_odds_are_its_margins_where_probabilities_saturate():
    # float32 probabilities saturate at margins of ~17, where clipped log-odds read 34.5;
    # the log-odds explained are the model's margins, by TreeSHAP and by enumeration.
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = (X[:, 0] + X[:, 1] + 0.7 * rng.normal(size=600) > 0).astype(int)
    X[:300, 2] += 6 * (2 * y[:300] - 1)
    model = xgboost.XGBClassifier(n_estimators=30, max_depth=4, learning_rate=0.7,
                                  min_child_weight=0, reg_lambda=0, random_state=0).fit(X, y)
    margins = model.predict(X, output_margin=True)
    background = X[np.argsort(np.abs(margins))[:20]]
    confident = X[np.argsort(-margins)[:3]]
    assert margins.max() > 17
    tree = ShapleyExplainer(model, prefit=True, method="tree", background=background).fit(X)
    exact = ShapleyExplainer(model, prefit=True, method="exact", background=background).fit(X)
    expected = model.predict(confident, output_margin=True)
    np.testing.assert_allclose(_sums(tree, confident), expected, atol=1e-4)
    np.testing.assert_allclose(_sums(exact, confident), expected, atol=1e-4)


def test_lightgbm_random_forest_and_identity_objectives_are_read():
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _data(3)
    forest = lightgbm.LGBMRegressor(boosting_type="rf", bagging_freq=1, bagging_fraction=0.8,
                                    n_estimators=10, verbose=-1).fit(X, y)
    quantile = lightgbm.LGBMRegressor(objective="quantile", n_estimators=10,
                                      verbose=-1).fit(X, y)
    for model in (forest, quantile):
        explainer = ShapleyExplainer(model, prefit=True, background=20, random_state=0).fit(X)
        assert explainer.method_ == "tree"
        np.testing.assert_allclose(_sums(explainer, X[:5]), model.predict(X[:5]), atol=1e-9)


def test_lightgbm_linear_trees_are_refused_by_name():
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _data(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lightgbm.LGBMRegressor(linear_tree=True, linear_lambda=1e10, n_estimators=5,
                                       verbose=-1).fit(X, y)
    with pytest.raises(ValueError, match="linear_tree=True: its leaves are linear models"):
        read_model(model)


def test_tree_values_that_do_not_add_up_to_the_model_output_are_refused(monkeypatch):
    # The explained rows are checked too, not only the probe and background rows the
    # reader saw: a model computing more than its trees is not explained silently.
    from skshapley.explain import _explainer_rows

    X, y = _data(5)
    model = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    explainer = ShapleyExplainer(model, prefit=True, background=20, random_state=0).fit(X)
    explain_with_trees = _explainer_rows.explain_with_trees

    def misread(*args, **kwargs):
        values, base, inter = explain_with_trees(*args, **kwargs)
        return values + 1e-3 * (np.arange(len(values)) == 2)[:, None, None], base, inter

    monkeypatch.setattr(_explainer_rows, "explain_with_trees", misread)
    explainer.explain(X[:2])  # rows 0 and 1 are untouched
    with pytest.raises(ValueError, match="do not add up to the model's output"):
        explainer.explain(X[:3])


@pytest.mark.parametrize("objective", ["rank:pairwise", "rank:ndcg"])
def test_xgboost_rankers_predict_their_margins_and_are_trees(objective):
    # XGBRanker's predict is the margin: its objective was refused as a non-identity
    # link (issue 28). Which objective is identity is read from what predict returns.
    xgboost = pytest.importorskip("xgboost")
    X, _ = _data(6)
    rng = np.random.default_rng(6)
    relevance = np.clip(np.round(X[:, 0] + X[:, 1] * X[:, 2] + 1.5), 0, 3).astype(int)
    model = xgboost.XGBRanker(objective=objective, n_estimators=20, max_depth=3,
                              random_state=0)
    model.fit(X, relevance, qid=np.repeat(np.arange(30), 10))
    rows = X[rng.choice(len(X), 8, replace=False)]
    explainer = ShapleyExplainer(model, prefit=True, method="tree", background=20,
                                 random_state=0).fit(X)
    # efficiency: the values add up to predict minus the base value
    np.testing.assert_allclose(_sums(explainer, rows), model.predict(rows), atol=1e-5)
    # XGBoost's own TreeSHAP (pred_contribs) of the tree-path-dependent game
    path = ShapleyExplainer(model, prefit=True, method="tree",
                            feature_perturbation="tree_path_dependent").fit(X)
    contribs = model.get_booster().predict(xgboost.DMatrix(rows), pred_contribs=True)
    explanation = path.explain(rows)
    np.testing.assert_allclose(explanation.values, contribs[:, :-1], atol=1e-5)
    np.testing.assert_allclose(explanation.base_values, contribs[:, -1], atol=1e-5)
    # predict through exp (count:poisson) is still no sum over trees
    poisson = xgboost.XGBRegressor(objective="count:poisson", n_estimators=5,
                                   max_depth=3).fit(X, relevance)
    assert read_model(poisson).link == "other"
    with pytest.raises(ValueError, match="non-identity link"):
        ShapleyExplainer(poisson, prefit=True, method="tree", background=20).fit(X)


@pytest.mark.parametrize("objective", ["lambdarank", "rank_xendcg"])
def test_lightgbm_rankers_predict_their_raw_scores_and_are_trees(objective):
    lightgbm = pytest.importorskip("lightgbm")
    X, _ = _data(7)
    relevance = np.clip(np.round(X[:, 0] + X[:, 1] * X[:, 2] + 1.5), 0, 3).astype(int)
    model = lightgbm.LGBMRanker(objective=objective, n_estimators=20, num_leaves=8,
                                min_child_samples=5, verbose=-1)
    model.fit(X, relevance, group=[10] * 30)
    explainer = ShapleyExplainer(model, prefit=True, background=20, random_state=0).fit(X)
    assert explainer.method_ == "tree"
    np.testing.assert_allclose(_sums(explainer, X[:8]), model.predict(X[:8]), atol=1e-9)
