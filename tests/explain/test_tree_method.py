"""ShapleyExplainer(method="tree"): exact TreeSHAP behind the sklearn API."""

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from skshapley import ShapleyExplainer
from skshapley.tree import tree_shap


def test_auto_picks_tree_and_equals_enumeration_of_the_same_game():
    X, y = load_diabetes(return_X_y=True)
    model = HistGradientBoostingRegressor(max_iter=30, random_state=0)
    tree = ShapleyExplainer(model, background=30, random_state=0).fit(X, y)
    assert tree.method_ == "tree"
    exact = ShapleyExplainer(model, method="exact", background=30, random_state=0).fit(X, y)
    a, b = tree.explain(X[:5]), exact.explain(X[:5])
    np.testing.assert_allclose(a.values, b.values, atol=1e-9)
    np.testing.assert_allclose(a.predictions, tree.estimator_.predict(X[:5]), atol=1e-9)
    assert not a.std_errors.any() and not a.n_evaluations.any()


def test_path_dependent_values_and_interactions():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    explainer = ShapleyExplainer(model, prefit=True, method="tree",
                                 feature_perturbation="tree_path_dependent").fit(X)
    explanation = explainer.explain(X.iloc[:4], interactions=True)
    reference = tree_shap(model, X.values[:4])
    np.testing.assert_allclose(explanation.values, reference.values[..., 0], atol=1e-12)
    np.testing.assert_allclose(explanation.interactions.sum(axis=2), explanation.values,
                               atol=1e-12)
    assert explanation[1:3].interactions.shape == (2, 10, 10)
    np.testing.assert_allclose(explainer.expected_value_, reference.base_values[0, 0])
    frame = explainer.set_output(transform="pandas").transform(X.iloc[:2])
    assert list(frame.columns)[:2] == ["age_shap", "sex_shap"]


def test_outputs_are_mapped_or_refused():
    X, y = load_iris(return_X_y=True)
    forest = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X, y)
    proba = ShapleyExplainer(forest, prefit=True, response_method="predict_proba",
                             background=20, random_state=0).fit(X)
    assert proba.method_ == "tree"
    explanation = proba.explain(X[:3])
    np.testing.assert_allclose(explanation.predictions, forest.predict_proba(X[:3]),
                               atol=1e-12)
    # a forest has no decision_function: "auto" explains its probabilities, by TreeSHAP
    auto = ShapleyExplainer(forest, prefit=True, background=20, random_state=0).fit(X)
    assert auto.method_ == "tree"
    np.testing.assert_array_equal(auto.explain(X[:3]).values, explanation.values)
    # log-odds of averaged probabilities are not linear in the leaves: not "tree"
    log_odds = ShapleyExplainer(forest, prefit=True, response_method="predict_log_odds",
                                background=20).fit(X)
    assert log_odds.method_ != "tree"
    with pytest.raises(ValueError, match="not a linear function"):
        ShapleyExplainer(forest, prefit=True, method="tree", background=20,
                         response_method="predict_log_odds").fit(X)
    # softmax margins: the explained log-odds are the centred margins
    boosted = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, y)
    for response in ("decision_function", "predict_log_odds"):
        explainer = ShapleyExplainer(boosted, prefit=True, response_method=response,
                                     background=20).fit(X)
        assert explainer.method_ == "tree"
        exact = ShapleyExplainer(boosted, prefit=True, response_method=response,
                                 method="exact", background=explainer.background_).fit(X)
        np.testing.assert_allclose(explainer.explain(X[:3]).values,
                                   exact.explain(X[:3]).values, atol=1e-9)


def test_pipelines_of_column_wise_steps_are_trees_and_interactions_need_the_tree_game():
    X, y = load_diabetes(return_X_y=True)
    pipeline = make_pipeline(StandardScaler(), HistGradientBoostingRegressor(max_iter=5))
    scaled = ShapleyExplainer(pipeline, feature_perturbation="tree_path_dependent").fit(X, y)
    assert scaled.method_ == "tree"
    explanation = scaled.explain(X[:3], interactions=True)
    np.testing.assert_allclose(explanation.interactions.sum(axis=2), explanation.values,
                               atol=1e-10)
    mixed = make_pipeline(PolynomialFeatures(2), HistGradientBoostingRegressor(max_iter=5))
    explainer = ShapleyExplainer(mixed, background=10, max_evals=64).fit(X, y)
    assert explainer.method_ != "tree"
    with pytest.raises(ValueError, match="interactions=True"):
        explainer.explain(X[:1], interactions=True)
    tree = ShapleyExplainer(HistGradientBoostingRegressor(max_iter=5), background=10).fit(X, y)
    with pytest.raises(ValueError, match="interactions=True"):
        tree.explain(X[:1], interactions=True)


def test_xgboost_multiclass_auto_response():
    xgboost = pytest.importorskip("xgboost")
    X, y = load_iris(return_X_y=True)
    model = xgboost.XGBClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    explainer = ShapleyExplainer(model, prefit=True, background=20).fit(X)
    assert explainer.method_ == "tree"
    exact = ShapleyExplainer(model, prefit=True, method="exact",
                             background=explainer.background_).fit(X)
    np.testing.assert_allclose(explainer.explain(X[:3]).values, exact.explain(X[:3]).values,
                               atol=1e-5)


@pytest.mark.parametrize("method", ["tree", "permutation"])
def test_lightgbm_names_with_spaces_match_the_frame_it_was_fitted_on(method):
    # LightGBM records "a b" as "a_b": its own frame was refused, and the suggested
    # X[['a_b', ...]] raised KeyError (issue 28). The names are compared as LightGBM
    # records them, and the explanation keeps the frame's names.
    lightgbm = pytest.importorskip("lightgbm")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a b", "c", "d  e"])
    y = X["a b"] + 2.0 * X["c"] * (X["d  e"] > 0)
    model = lightgbm.LGBMRegressor(n_estimators=20, num_leaves=8, verbose=-1).fit(X, y)
    assert list(model.feature_names_in_) == ["a_b", "c", "d__e"]
    explainer = ShapleyExplainer(model, prefit=True, method=method, max_evals=6,
                                 background=20, random_state=0).fit(X)
    assert explainer.method_ == method
    explanation = explainer.explain(X.iloc[:4])
    assert explanation.feature_names == ["a b", "c", "d  e"]
    assert list(explainer.get_feature_names_out()) == ["a b_shap", "c_shap", "d  e_shap"]
    # efficiency, exact for TreeSHAP and for whole sampled orderings alike
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               model.predict(X.iloc[:4]), atol=1e-9)
    if method == "tree":
        exact = ShapleyExplainer(model, prefit=True, method="exact",
                                 background=explainer.background_).fit(X)
        np.testing.assert_allclose(explanation.values, exact.explain(X.iloc[:4]).values,
                                   atol=1e-9)
    # another order is still refused, with a way out that works
    reordered = X[["c", "d  e", "a b"]]
    with pytest.raises(ValueError, match=r"pass X with the estimator's columns in its "
                                         r"order, X\[\['a b', 'c', 'd  e'\]\]"):
        ShapleyExplainer(model, prefit=True, method=method, background=20).fit(reordered)
    ShapleyExplainer(model, prefit=True, method=method, max_evals=6,
                     background=20).fit(reordered[["a b", "c", "d  e"]])
