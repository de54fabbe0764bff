"""TreeSHAP through a Pipeline of column-wise transformers ending in a tree model."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
)
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    KBinsDiscretizer,
    PolynomialFeatures,
    QuantileTransformer,
    StandardScaler,
)

from skshapley import MomentQuantileTransformer, ShapleyExplainer
from skshapley.tree import read_model, tree_shap


def _frame(seed=0, n=400, nan=0.0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 5)) * [1.0, 10.0, 0.1, 3.0, 1.0],
                     columns=["a", "b", "c", "d", "e"])
    y = X["a"] * X["b"] + np.sin(10 * X["c"]) + (X["d"] > 0)
    if nan:
        X = X.mask(rng.random(X.shape) < nan)
    return X, y.to_numpy()


@pytest.mark.parametrize("steps", [
    [StandardScaler()],
    [QuantileTransformer(n_quantiles=50), "passthrough"],
    [KBinsDiscretizer(n_bins=6, encode="ordinal", quantile_method="averaged_inverted_cdf")],
    [MomentQuantileTransformer(), StandardScaler()],
])
def test_columnwise_steps_keep_exact_treeshap(steps):
    # the pipeline's game over its input columns is the model's over the transformed ones
    X, y = _frame()
    pipeline = make_pipeline(*steps, GradientBoostingRegressor(n_estimators=30, max_depth=3,
                                                               random_state=0))
    tree = ShapleyExplainer(pipeline, background=25, random_state=0).fit(X, y)
    exact = ShapleyExplainer(pipeline, method="exact", background=25,
                             random_state=0).fit(X, y)
    assert tree.method_ == "tree"
    rows = X.iloc[:12]
    np.testing.assert_allclose(tree.explain(rows).values, exact.explain(rows).values,
                               atol=1e-9)
    result = tree_shap(tree.estimator_, rows)
    np.testing.assert_allclose(result.values.sum(axis=1)[:, 0] + result.base_values[:, 0],
                               tree.estimator_.predict(rows), atol=1e-9)


def test_pipelines_nested_in_a_column_transformer_keep_exact_treeshap():
    # an imputer then a scaler for some columns, in reversed order, the rest passed through
    from sklearn.compose import make_column_transformer

    X, y = _frame(seed=4, nan=0.05)
    columns = make_column_transformer(
        (make_pipeline(SimpleImputer(), StandardScaler()), ["d", "b"]),
        (make_pipeline(SimpleImputer(strategy="median"), "passthrough"), ["a"]),
        remainder="passthrough")
    pipeline = make_pipeline(columns, HistGradientBoostingRegressor(max_iter=20,
                                                                    random_state=0))
    tree = ShapleyExplainer(pipeline, background=20, random_state=0).fit(X, y)
    exact = ShapleyExplainer(pipeline, method="exact", background=20,
                             random_state=0).fit(X, y)
    assert tree.method_ == "tree"
    rows = X.iloc[:8]
    np.testing.assert_allclose(tree.explain(rows).values, exact.explain(rows).values,
                               atol=1e-9)


def test_imputer_before_a_forest_classifier():
    X, y = _frame(seed=1, nan=0.1)
    labels = (y > np.median(y)).astype(int)
    pipeline = make_pipeline(SimpleImputer(), RandomForestClassifier(
        n_estimators=10, max_depth=5, random_state=0))
    # a forest's probabilities are sums over its trees (its log-odds are not)
    tree = ShapleyExplainer(pipeline, response_method="predict_proba", background=20,
                            random_state=0).fit(X, labels)
    exact = ShapleyExplainer(pipeline, response_method="predict_proba", method="exact",
                             background=20, random_state=0).fit(X, labels)
    assert tree.method_ == "tree"
    rows = X.iloc[:10]
    np.testing.assert_allclose(tree.explain(rows).values, exact.explain(rows).values,
                               atol=1e-9)
    # path-dependent values: the forest's own, on the imputed rows
    fitted = tree.estimator_
    ours = tree_shap(fitted, rows).values
    forest = tree_shap(fitted[-1], fitted[:-1].transform(rows)).values
    np.testing.assert_allclose(ours, forest, atol=1e-12)


@pytest.mark.parametrize("step, reason", [
    (PolynomialFeatures(2), "not one of the column-wise transformers"),
    (SimpleImputer(add_indicator=True), "adds indicator columns"),
    (MomentQuantileTransformer(n_bins=4, encode="onehot-dense"),
     "does not keep the columns in place"),
    (KBinsDiscretizer(n_bins=4, encode="onehot-dense", quantile_method="averaged_inverted_cdf"),
     "does not keep the columns in place"),
])
def test_other_steps_are_refused_and_explained_without_trees(step, reason):
    X, y = _frame(seed=2, nan=0.05 if isinstance(step, SimpleImputer) else 0.0)
    pipeline = make_pipeline(step, GradientBoostingRegressor(n_estimators=5, random_state=0))
    pipeline.fit(X.fillna(0.0) if not isinstance(step, SimpleImputer) else X, y)
    with pytest.raises(ValueError, match=reason):
        read_model(pipeline)
    explainer = ShapleyExplainer(pipeline, prefit=True, background=10).fit(X.fillna(0.0))
    assert explainer.method_ != "tree"


@pytest.mark.filterwarnings("ignore:Skipping features without any observed values")
def test_imputer_that_drops_a_column_is_refused():
    X, y = _frame(seed=3)
    X["e"] = np.nan  # all missing: the imputer drops it
    pipeline = make_pipeline(SimpleImputer(), GradientBoostingRegressor(n_estimators=5))
    with pytest.raises(ValueError, match="does not keep the columns in place"):
        read_model(pipeline.fit(X, y))


def _houses(seed=4, n=500):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "area": rng.gamma(6.0, 15.0, n),
        "district": pd.Categorical(rng.choice(["north", "south", "east", "west"], n)),
        "age": rng.uniform(0, 80, n),
        "heating": pd.Categorical(rng.choice(["gas", "oil", "pump"], n)),
    })
    y = (2 * frame["area"] - 0.5 * frame["age"]
         + np.where(frame["district"] == "north", 40.0, 0.0)
         + np.where(frame["heating"] == "pump", 15.0, 0.0) + rng.normal(size=n))
    return frame, y.to_numpy()


@pytest.mark.parametrize("remainder", ["passthrough", "drop"])
def test_ordinal_encoder_column_transformer_before_categorical_boosting(remainder):
    # scikit-learn's own recipe for categorical features: an OrdinalEncoder that moves
    # the categorical columns first, then HistGradientBoosting splitting on their codes
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.preprocessing import OrdinalEncoder

    frame, y = _houses()
    encoder = make_column_transformer(
        (OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan),
         make_column_selector(dtype_include="category")),
        remainder=remainder, verbose_feature_names_out=False)
    model = HistGradientBoostingRegressor(max_iter=30,
                                          categorical_features=["district", "heating"],
                                          random_state=0)
    pipeline = make_pipeline(encoder, model).set_output(transform="pandas")
    pipeline.fit(frame, y)
    assert list(encoder.get_feature_names_out())[:2] == ["district", "heating"]
    rows = frame.iloc[:10].copy()
    rows.loc[rows.index[1], "district"] = np.nan
    tree = ShapleyExplainer(pipeline, prefit=True, background=20, random_state=0).fit(frame)
    exact = ShapleyExplainer(pipeline, prefit=True, method="exact", background=20,
                             random_state=0).fit(frame)
    assert tree.method_ == "tree"
    values = tree.explain(rows).values
    np.testing.assert_allclose(values, exact.explain(rows).values, atol=1e-9)
    if remainder == "drop":  # the model never sees area and age: no value
        assert np.all(values[:, [0, 2]] == 0.0)
    result = tree_shap(pipeline, rows)
    np.testing.assert_allclose(result.values.sum(axis=1)[:, 0] + result.base_values[:, 0],
                               pipeline.predict(rows), atol=1e-9)
    # two rows walk the trees (their nodes read the moved columns), ten use the tables
    background = frame.iloc[20:50]
    walked = tree_shap(pipeline, rows.iloc[:2], background=background)
    tabled = tree_shap(pipeline, rows, background=background)
    np.testing.assert_allclose(walked.values, tabled.values[:2], atol=1e-12)
    np.testing.assert_allclose(walked.base_values, tabled.base_values[:2], atol=1e-12)


def test_imputer_before_a_model_that_encodes_its_own_input():
    X, y = _frame(seed=5, nan=0.05)
    X["k"] = np.where(X["b"].fillna(0) > 0, 2.0, 7.0)
    pipeline = make_pipeline(SimpleImputer(strategy="most_frequent"),
                             HistGradientBoostingRegressor(max_iter=10,
                                                           categorical_features=[5]))
    pipeline.fit(X, y)
    assert read_model(pipeline[-1]).input_encoder is not None
    result = tree_shap(pipeline, X.iloc[:15])
    np.testing.assert_allclose(result.values.sum(axis=1)[:, 0] + result.base_values[:, 0],
                               pipeline.predict(X.iloc[:15]), atol=1e-9)


def test_column_transformer_with_a_one_hot_part_is_refused():
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder

    frame, y = _houses(seed=6)
    pipeline = make_pipeline(
        make_column_transformer((OneHotEncoder(), ["district", "heating"]),
                                remainder="passthrough"),
        GradientBoostingRegressor(n_estimators=5)).fit(frame, y)
    with pytest.raises(ValueError, match="OneHotEncoder is not one of the column-wise"):
        read_model(pipeline)
