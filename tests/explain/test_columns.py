"""DataFrames with text, categorical and bool columns: the explainer masks codes and calls
the model on the DataFrame they stand for (skshapley.explain._columns)."""

import itertools
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skshapley import ShapleyExplainer
from skshapley.explain._columns import ColumnCodec

TEXT = ["district", "kind", "heated"]


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "area": rng.gamma(6.0, 15.0, n),
        "district": rng.choice(["north", "south", "east"], n).astype(object),
        "heated": rng.random(n) < 0.5,
        "kind": pd.Categorical(rng.choice(["flat", "house"], n)),
        "rooms": rng.integers(1, 6, n),
    })
    y = (2 * X["area"] + np.where(X["district"] == "north", 40.0, 0.0) + 10 * X["heated"]
         + np.where(X["kind"] == "house", 25.0, 0.0) + 3 * X["rooms"]
         + rng.normal(size=n))
    return X, y


def _pipeline(model=None):
    encode = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), TEXT),
                                     remainder="passthrough")
    return make_pipeline(encode, model if model is not None else Ridge())


def _interventional_shapley(predict, row, background):
    """Brute force on DataFrames: every coalition's frame built by pandas, no codes."""
    d = row.shape[1]
    columns = list(row.columns)

    def value(coalition):
        frame = background.copy()
        for j in coalition:
            frame[columns[j]] = pd.Series([row.iloc[0, j]] * len(frame), index=frame.index,
                                          dtype=row.dtypes.iloc[j])
        return predict(frame).mean()

    phi = np.zeros(d)
    for j in range(d):
        others = [k for k in range(d) if k != j]
        for size in range(d):
            weight = math.factorial(size) * math.factorial(d - size - 1) / math.factorial(d)
            for coalition in itertools.combinations(others, size):
                phi[j] += weight * (value(coalition + (j,)) - value(coalition))
    return phi


@pytest.mark.parametrize("method", ["exact", "linear"])  # "auto" picks "linear" (Ridge)
def test_values_equal_brute_force_on_the_dataframe(method):
    X, y = _frame()
    explainer = ShapleyExplainer(_pipeline(), method=method, background=25,
                                 random_state=0).fit(X, y)
    assert explainer.method_ == method
    assert explainer.codec_.encoded_columns == [1, 2, 3]
    explanation = explainer.explain(X.iloc[:3])
    background = explainer.codec_.decode(explainer.background_)
    for i in range(3):
        expected = _interventional_shapley(explainer.estimator_.predict, X.iloc[[i]],
                                           background)
        np.testing.assert_allclose(explanation.values[i], expected, atol=1e-9)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               explainer.estimator_.predict(X.iloc[:3]), atol=1e-9)
    assert explanation.feature_names == list(X.columns)


def test_unseen_values_are_explained_and_the_fitted_codec_is_unchanged():
    X, y = _frame(seed=1)
    explainer = ShapleyExplainer(_pipeline(), background=30, random_state=0).fit(X, y)
    before = pickle.dumps(explainer.codec_)
    rows = X.iloc[:4].copy()
    rows.loc[rows.index[0], "district"] = "west"  # OneHotEncoder ignores it
    explanation = explainer.explain(rows)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               explainer.estimator_.predict(rows), atol=1e-9)
    assert pickle.dumps(explainer.codec_) == before
    # the unseen district is its own value: its row's district value is the whole effect
    # of all-zero one-hot columns, the others' are unchanged
    np.testing.assert_allclose(explanation.values[1:], explainer.explain(X.iloc[1:4]).values)


def test_sampled_values_do_not_depend_on_n_jobs_and_output_is_pandas():
    X, y = (*_frame(seed=2)[:1], (_frame(seed=2)[1] > 150).astype(int))
    model = _pipeline(LogisticRegression(max_iter=500))
    kwargs = dict(method="permutation", max_evals=120, background=20, random_state=3)
    one = ShapleyExplainer(model, n_jobs=1, **kwargs).fit(X, y)
    two = ShapleyExplainer(model, n_jobs=2, **kwargs).fit(X, y)
    np.testing.assert_array_equal(one.transform(X.iloc[:6]), two.transform(X.iloc[:6]))
    frame = one.set_output(transform="pandas").transform(X.iloc[:2])
    assert list(frame.columns) == [f"{c}_shap" for c in X.columns]


def test_background_frame_with_its_own_values():
    X, y = _frame(seed=3)
    background = X.iloc[:10].copy()
    background["district"] = "nowhere"
    explainer = ShapleyExplainer(_pipeline(), background=background).fit(X, y)
    assert "nowhere" in explainer.codec_.categories[1]
    explanation = explainer.explain(X.iloc[:2])
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               explainer.estimator_.predict(X.iloc[:2]), atol=1e-9)


def test_clear_errors():
    X, y = _frame(seed=4)
    explainer = ShapleyExplainer(_pipeline(), background=10).fit(X, y)
    with pytest.raises(ValueError, match="pass a DataFrame"):
        explainer.explain(X.to_numpy())
    with pytest.raises(ValueError, match="feature names"):
        explainer.explain(X[list(reversed(X.columns))])
    with pytest.raises(ValueError, match="method='tree' cannot explain this model exactly: "
                                         ".*step OneHotEncoder is not one of the "
                                         "column-wise transformers"):
        ShapleyExplainer(_pipeline(), method="tree").fit(X, y)
    with pytest.raises(ValueError, match="must be a DataFrame"):
        ShapleyExplainer(_pipeline(), background=X.to_numpy()[:5]).fit(X, y)
    bad = X.iloc[:3].copy()
    bad["kind"] = bad["kind"].cat.add_categories(["barn"])
    with pytest.raises(ValueError, match="dtype"):
        explainer.explain(bad)


def test_codec_round_trip_keeps_values_missing_markers_and_dtypes():
    frame = pd.DataFrame({
        "x": [0.5, np.nan, 2.0, 3.0],
        "n": np.array([1, 2, 3, 4], dtype=np.int32),
        "text": pd.Series(["a", None, "b", None], dtype=object),
        "strings": pd.Series(["u", "v", None, "u"], dtype="string"),
        "cat": pd.Categorical(["p", None, "q", "p"], categories=["q", "p"], ordered=True),
        "flag": [True, False, True, True],
        "when": pd.to_datetime(["2020-01-01", "2021-06-01", "2020-01-01", "2022-02-02"]),
    })
    codec = ColumnCodec.from_frame(frame)
    codec, codes = codec.encode(frame)
    assert codes.dtype == np.float64 and np.isfinite(codes[:, [1, 2, 3, 5, 6]]).all()
    # a categorical column is its category codes, NaN when missing (as XGBoost reads it)
    np.testing.assert_array_equal(codes[:, 4], [1.0, np.nan, 0.0, 1.0])
    back = codec.decode(codes)
    pd.testing.assert_frame_equal(back, frame)
    assert back["text"].iloc[1] is None
    # any mix of rows decodes to those rows
    order = [3, 0, 2, 1, 1]
    pd.testing.assert_frame_equal(codec.decode(codes[order]),
                                  frame.iloc[order].reset_index(drop=True))
    # one missing value per column: the marker seen first stands for the others
    mixed = pd.DataFrame({"t": pd.Series([np.nan, "a", None], dtype=object)})
    codec, codes = ColumnCodec.from_frame(mixed).encode(mixed)
    assert codes[:, 0].tolist() == [0, 1, 0]
    assert codec.decode(codes)["t"].isna().tolist() == [True, False, True]
    assert ColumnCodec.from_frame(frame[["x", "n"]]) is None
    assert ColumnCodec.from_frame(frame.to_numpy()) is None


def test_plots_show_the_values_not_their_codes():
    import matplotlib.pyplot as plt

    from skshapley.plotting import dependence, waterfall

    X, y = _frame(seed=5)
    explainer = ShapleyExplainer(_pipeline(), background=20, random_state=0).fit(X, y)
    explanation = explainer.explain(X.iloc[:30])
    assert explanation.display_data[:, 1].tolist() == X["district"].iloc[:30].tolist()
    assert explanation[2:4].display_data[:, 1].tolist() == X["district"].iloc[2:4].tolist()
    ax = waterfall(explanation, 0)
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    assert f"district = {X['district'].iloc[0]}" in labels
    assert f"heated = {bool(X['heated'].iloc[0])}" in labels
    plt.close(ax.figure)
    ax = dependence(explanation, "district")
    ticks = _x_tick_texts(ax)
    assert ticks == set(X["district"].iloc[:30])
    plt.close(ax.figure)
    ax = dependence(explanation, "area")  # numbers keep matplotlib's own ticks
    assert not _x_tick_texts(ax) & ticks
    plt.close(ax.figure)


def _x_tick_texts(ax):
    """The x tick labels of a dependence plot: on the histogram under its scatter."""
    return {tick.get_text() for axes in ax.figure.axes if axes.get_shared_x_axes().joined(
        axes, ax) for tick in axes.get_xticklabels()} - {""}


def _tree_equals_exact(model, X, y, rows, atol, background=30):
    """The explainer picks method="tree" for ``model`` on the DataFrame ``X`` and its
    values of ``rows`` equal the model-agnostic exact ones and add up to the
    predictions; returns the tree explainer."""
    tree = ShapleyExplainer(model, background=background, random_state=0).fit(X, y)
    exact = ShapleyExplainer(model, method="exact", background=background,
                             random_state=0).fit(X, y)
    assert tree.method_ == "tree" and exact.method_ == "exact"
    explained = tree.explain(rows)
    np.testing.assert_allclose(explained.values, exact.explain(rows).values, atol=atol)
    np.testing.assert_allclose(explained.values.sum(axis=1) + explained.base_values,
                               tree.estimator_.predict(rows), atol=atol)
    return tree


def test_categorical_columns_keep_exact_treeshap_for_xgboost():
    # XGBoost trained on pandas categoricals splits on their codes: the explainer keeps
    # method="tree" on the DataFrame, equal to XGBoost's own values and to the
    # model-agnostic exact values (float32 model)
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame({"a": rng.normal(size=n),
                      "c": pd.Categorical(rng.choice(["u", "v", "w", "x"], n)),
                      "d": pd.Categorical(rng.choice(["p", "q", "r"], n))})
    X.loc[::9, "c"] = np.nan
    y = X["a"] + 2.0 * (X["c"] == "v") + 1.5 * (X["d"] == "q")
    model = xgboost.XGBRegressor(n_estimators=20, max_depth=3, enable_categorical=True,
                                 tree_method="hist", max_cat_to_onehot=1, random_state=0)
    rows = X.iloc[:12]
    _tree_equals_exact(model, X, y, rows, atol=1e-5)
    path_dependent = ShapleyExplainer(model, feature_perturbation="tree_path_dependent",
                                      random_state=0).fit(X, y)
    contribs = path_dependent.estimator_.get_booster().predict(
        xgboost.DMatrix(rows, enable_categorical=True), pred_contribs=True)
    np.testing.assert_allclose(path_dependent.explain(rows).values, contribs[:, :-1],
                               atol=1e-5)


@pytest.mark.parametrize("categorical_features", ["from_dtype", TEXT])
def test_hist_gradient_boosting_text_columns_keep_exact_treeshap(categorical_features):
    # HistGradientBoosting encodes its categorical columns itself (text, bool and pandas
    # categoricals): method="tree" reads its trees through that encoder and equals the
    # model-agnostic exact values; unseen and missing values included
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _frame(seed=11)
    if categorical_features == "from_dtype":  # only the pandas categorical
        X = X.drop(columns=["district", "heated"])
    model = HistGradientBoostingRegressor(max_iter=25, categorical_features=categorical_features,
                                          random_state=0)
    rows = X.iloc[:10].copy()
    if "district" in rows:
        rows.loc[rows.index[2], "district"] = "west"  # unseen by the model
        rows.loc[rows.index[4], "district"] = None
    tree = _tree_equals_exact(model, X, y, rows, atol=1e-9, background=25)
    assert tree.tree_ensemble_.input_encoder is not None
    path_dependent = ShapleyExplainer(model, feature_perturbation="tree_path_dependent",
                                      random_state=0).fit(X, y)
    explanation = path_dependent.explain(rows, interactions=True)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               path_dependent.estimator_.predict(rows), atol=1e-9)
    np.testing.assert_allclose(explanation.interactions.sum(axis=2), explanation.values,
                               atol=1e-9)
    assert pickle.loads(pickle.dumps(tree)).transform(rows).shape == (10, X.shape[1])


def test_lightgbm_categorical_columns_keep_exact_treeshap():
    # LightGBM maps a pandas categorical to its category codes, as the explainer does
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _frame(seed=12)
    X = X.drop(columns=["district", "heated"])
    X["kind"] = pd.Categorical(np.where(np.arange(len(X)) % 7 == 0, None, X["kind"]),
                               categories=["flat", "house"])
    model = lightgbm.LGBMRegressor(n_estimators=20, num_leaves=8, min_data_per_group=5,
                                   verbose=-1)
    _tree_equals_exact(model, X, y, X.iloc[:10], atol=1e-9, background=25)


def test_missing_category_reaches_a_pipeline_that_handles_it():
    X, y = _frame(seed=7)
    kinds = np.array(X["kind"].astype(object))
    kinds[::6] = None
    X["kind"] = pd.Categorical(kinds, categories=["flat", "house"])
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), TEXT), remainder="passthrough"), Ridge())
    explainer = ShapleyExplainer(model, background=20, random_state=0).fit(X, y)
    explanation = explainer.explain(X.iloc[:7])
    assert pd.isna(explanation.display_data[0, 3])
    import matplotlib.pyplot as plt

    from skshapley.plotting import dependence

    ax = dependence(explanation, "kind")  # a missing category has no tick
    assert _x_tick_texts(ax) == {"flat", "house"}
    plt.close(ax.figure)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               explainer.estimator_.predict(X.iloc[:7]), atol=1e-9)
    bad = X.iloc[:3].copy()
    bad.loc[bad.index[1], "area"] = np.nan  # NaN in a numeric column: Ridge refuses it
    with pytest.raises(ValueError, match=r"X has NaN in the columns at positions \[.*\], and "
                                         r"Pipeline does not take NaN in all of them"):
        explainer.explain(bad)


def test_bool_columns_are_coded_as_zero_and_one():
    # False/True are 0/1, as scikit-learn, XGBoost and shap read them (issue 28), and a
    # nullable bool's missing value is NaN; rows decode to the values and dtypes
    frame = pd.DataFrame({
        "x": [0.5, 1.0, 2.0, 3.0],
        "flag": [True, False, True, False],
        "maybe": pd.array([None, True, False, True], dtype="boolean"),
    })
    codec, codes = ColumnCodec.from_frame(frame).encode(frame)
    assert codec.codes_are_numbers
    np.testing.assert_array_equal(codes[:, 1], [1.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(codes[:, 2], [np.nan, 1.0, 0.0, 1.0])
    pd.testing.assert_frame_equal(codec.decode(codes), frame)
    order = [3, 0, 0, 2]
    pd.testing.assert_frame_equal(codec.decode(codes[order]),
                                  frame.iloc[order].reset_index(drop=True))
    with pytest.raises(ValueError, match="column 'flag' holds 'yes', but the explainer was "
                                         "fitted on it as a bool column"):
        codec.encode(frame.assign(flag=["yes", True, False, True]))


def _frame_with_bools(n=400, seed=13):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "flag": rng.random(n) < 0.4,
                      "b": rng.normal(size=n), "on": rng.random(n) < 0.7,
                      "c": rng.normal(size=n)})
    y = (X["a"] + 2.0 * X["flag"] * X["b"] - 1.5 * X["on"] * (X["c"] > 0)
         + 0.1 * rng.normal(size=n))
    return X, y


@pytest.mark.parametrize("name", ["hist_gradient_boosting", "random_forest", "xgboost"])
def test_bool_columns_keep_exact_treeshap(name):
    # A bool column made "auto" give up TreeSHAP for enumeration or sampling (off by
    # 5.7e-4 at more features, issue 28); its trees split on 0/1, which the codes are
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

    if name == "xgboost":
        xgboost = pytest.importorskip("xgboost")
        model = xgboost.XGBRegressor(n_estimators=20, max_depth=3, random_state=0)
        atol = 1e-5  # float32 leaves and sums
    elif name == "random_forest":
        model = RandomForestRegressor(n_estimators=10, max_depth=5, random_state=0)
        atol = 1e-9
    else:
        model = HistGradientBoostingRegressor(max_iter=20, random_state=0)
        atol = 1e-9
    X, y = _frame_with_bools()
    tree = _tree_equals_exact(model, X, y, X.iloc[:10], atol=atol, background=25)
    assert tree.tree_ensemble_.input_encoder is None  # the trees read the codes
    assert tree.explain(X.iloc[:2]).feature_names == list(X.columns)


def test_categories_in_another_order_are_refused_not_misread():
    # pandas calls unordered categoricals with the same categories in another order
    # equal, but their codes differ: read as codes of the fitted order, "flat" was
    # explained as "house" (found with issue 28's polars categoricals)
    X, y = _frame(seed=5)
    explainer = ShapleyExplainer(_pipeline(), background=10).fit(X, y)
    reordered = X.iloc[:3].copy()
    reordered["kind"] = reordered["kind"].cat.reorder_categories(["house", "flat"])
    assert reordered["kind"].dtype == X["kind"].dtype
    with pytest.raises(ValueError, match=r"column 'kind' has the categories \['house', "
                                         r"'flat'\], but the explainer was fitted on the "
                                         r"categories \['flat', 'house'\], in this order"):
        explainer.explain(reordered)
