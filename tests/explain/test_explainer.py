import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from skshapley import ShapleyExplainer
from skshapley.approximators import exact_shapley
from skshapley.games import MarginalGame


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X, y


@pytest.fixture(scope="module")
def forest(diabetes):
    X, y = diabetes
    return RandomForestRegressor(n_estimators=20, max_depth=4, random_state=0).fit(X.values, y)


@pytest.mark.parametrize("method", ["auto", "exact", "permutation"])
def test_linear_model_values_are_closed_form(diabetes, method):
    """For f(x) = w.x + b, the interventional value is w_j (x_j - mean(background_j)), and
    every method is exact on an additive game."""
    X, y = diabetes
    explainer = ShapleyExplainer(LinearRegression(), method=method, max_evals=1024,
                                 background=40, random_state=0).fit(X, y)
    phi = explainer.transform(X.iloc[:5])
    w = explainer.estimator_.coef_
    expected = w * (X.values[:5] - explainer.background_.mean(axis=0))
    np.testing.assert_allclose(phi, expected, rtol=1e-9, atol=1e-9)


def test_pipeline_is_explained_in_the_original_feature_space(diabetes):
    X, y = diabetes
    explainer = ShapleyExplainer(make_pipeline(StandardScaler(), Ridge(alpha=1.0)),
                                 background=30, random_state=0).fit(X, y)
    scaler, ridge = explainer.estimator_[0], explainer.estimator_[1]
    phi = explainer.transform(X.iloc[:4])
    w = ridge.coef_ / scaler.scale_
    np.testing.assert_allclose(phi, w * (X.values[:4] - explainer.background_.mean(axis=0)),
                               rtol=1e-9, atol=1e-9)


def test_exact_matches_the_functional_core_and_efficiency(diabetes, forest):
    X, _ = diabetes
    explainer = ShapleyExplainer(forest, prefit=True, method="exact", background=25,
                                 random_state=1).fit(X.values)
    explanation = explainer.explain(X.values[:3])
    game = MarginalGame(forest, X.values[1], explainer.background_)
    np.testing.assert_allclose(explanation.values[1], exact_shapley(game).values, rtol=1e-12)
    np.testing.assert_allclose(explanation.predictions, forest.predict(X.values[:3]), rtol=1e-10)
    np.testing.assert_allclose(explanation.base_values, explainer.expected_value_, rtol=1e-12)
    assert (explanation.n_evaluations == 1024).all() and explanation.method == "exact"


def test_permutation_is_reproducible_for_any_n_jobs_and_row_order(diabetes, forest):
    X, _ = diabetes
    kwargs = dict(prefit=True, method="permutation", max_evals=200, background=20, random_state=5)
    serial = ShapleyExplainer(forest, **kwargs).fit(X.values).explain(X.values[:6])
    parallel = ShapleyExplainer(forest, n_jobs=2, **kwargs).fit(X.values).explain(X.values[:6])
    np.testing.assert_array_equal(serial.values, parallel.values)
    np.testing.assert_array_equal(serial.std_errors, parallel.std_errors)
    reversed_rows = ShapleyExplainer(forest, **kwargs).fit(X.values).transform(X.values[5::-1])
    np.testing.assert_array_equal(reversed_rows[::-1], serial.values)
    other = ShapleyExplainer(forest, **{**kwargs, "random_state": 6}).fit(X.values)
    assert not np.array_equal(other.transform(X.values[:6]), serial.values)
    # efficiency holds for every row of every estimate
    np.testing.assert_allclose(serial.predictions, forest.predict(X.values[:6]), rtol=1e-9)
    # unused features of the forest are dummies: value and error exactly 0
    assert ((serial.std_errors > 0) | (serial.values == 0)).all()
    assert (serial.n_evaluations == 2 + 9 * 2 * (198 // 18)).all()


@pytest.mark.parametrize("method", ["surrogate", "kernel", "kadd"])
def test_regression_values_do_not_depend_on_n_jobs_or_the_rows_explained_with(
        diabetes, forest, method):
    # Rows share one coalition design and one model call, but each row's fit is its own:
    # the surrogate chooses its third-order terms row by row (they were chosen for the
    # whole chunk, so a row's values moved by 1e-2 with the rows beside it).
    X, _ = diabetes
    kwargs = dict(prefit=True, method=method, max_evals=200, background=20, random_state=5)
    serial = ShapleyExplainer(forest, **kwargs).fit(X.values).explain(X.values[:20])
    parallel = ShapleyExplainer(forest, n_jobs=2, **kwargs).fit(X.values).explain(X.values[:20])
    alone = ShapleyExplainer(forest, **kwargs).fit(X.values).explain(X.values[17:20])
    for other, rows in ((parallel, slice(None)), (alone, slice(17, 20))):
        # the same bits: each output is fitted by matrix-vector products of its own
        np.testing.assert_array_equal(other.values, serial.values[rows])
        np.testing.assert_array_equal(other.std_errors, serial.std_errors[rows])


def test_sampler_instance_restarts_for_every_row(diabetes, forest):
    from skshapley.permutations import MonteCarlo

    X, _ = diabetes
    kwargs = dict(prefit=True, method="permutation", max_evals=110, background=10)
    explainer = ShapleyExplainer(forest, sampler=MonteCarlo(10, rng=3), **kwargs).fit(X.values)
    both = explainer.transform(X.values[:2])
    np.testing.assert_array_equal(explainer.transform(X.values[1:2])[0], both[1])
    np.testing.assert_array_equal(explainer.transform(X.values[1:2])[0], both[1])


def test_tol_stops_rows_early(diabetes, forest):
    X, _ = diabetes
    explainer = ShapleyExplainer(forest, prefit=True, method="permutation", max_evals=5000,
                                 tol=20.0, background=20, random_state=0).fit(X.values)
    explanation = explainer.explain(X.values[:3])
    assert (explanation.n_evaluations < 5000).all()
    # each row stopped once its estimated 95 % quantile of ||phi_hat - phi||_2 fell
    # below tol; that quantile is at least the root sum of the squared standard errors
    assert (np.sqrt((explanation.std_errors**2).sum(axis=1)) < 20.0).all()
    # and the estimates are within tol of the exact values
    exact = ShapleyExplainer(forest, prefit=True, method="exact",
                             background=explainer.background_).fit(X.values)
    error = np.linalg.norm(explanation.values - exact.explain(X.values[:3]).values, axis=1)
    assert (error < 20.0).all()


def test_classifier_multi_output_and_pandas_output(rng):
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["a", "b", "c"])
    y = np.digitize(X["a"] + X["b"], [-0.5, 0.5])
    explainer = ShapleyExplainer(LogisticRegression(), background=30, random_state=0).fit(X, y)
    explanation = explainer.explain(X.iloc[:4])
    assert explanation.values.shape == (4, 3, 3) and explainer.n_outputs_ == 3
    margins = explainer.estimator_.decision_function(X.iloc[:4])
    np.testing.assert_allclose(explanation.predictions, margins, rtol=1e-9)
    # transform is 2-d, a column per name of get_feature_names_out (issue 29)
    phi = explainer.transform(X.iloc[:4])
    names = explainer.get_feature_names_out()
    assert phi.shape == (4, len(names)) == (4, 9)
    for column, name in enumerate(names):  # "<feature>_shap_<class>"
        feature, output = name.split("_shap_")
        j, o = list(X.columns).index(feature), explanation.output_names.index(output)
        np.testing.assert_array_equal(phi[:, column], explanation.values[:, j, o])
    np.testing.assert_array_equal(phi, explanation.values.reshape(4, -1))
    frame = explainer.set_output(transform="pandas").transform(X.iloc[:4])
    assert list(frame.columns) == list(names)
    assert list(frame.columns[:3]) == ["a_shap_0", "a_shap_1", "a_shap_2"]
    np.testing.assert_array_equal(frame.to_numpy(), phi)


def test_a_multiclass_explainer_feeds_the_next_step_of_a_pipeline(rng):
    # the next step sees the n x (d k) values (a 3-d array made it fail)
    X = rng.normal(size=(150, 3))
    y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])
    pipe = make_pipeline(ShapleyExplainer(LogisticRegression(), background=20,
                                          random_state=0), LogisticRegression())
    pipe.fit(X, y)
    assert pipe[-1].n_features_in_ == 9
    # the values of the features that decide the class separate the classes
    assert pipe.score(X, y) > 0.9


@pytest.mark.parametrize(("estimator", "response_method", "expected"), [
    (Ridge(), "auto", "predict"),
    (LogisticRegression(), "auto", "decision_function"),
    (DecisionTreeClassifier(max_depth=2, random_state=0), "auto", "predict_proba"),
    (GaussianNB(), "auto", "predict_log_odds"),
    (LogisticRegression(), "predict_proba", "predict_proba"),
])
def test_response_method_says_which_output_is_explained(rng, estimator, response_method,
                                                        expected):
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    explainer = ShapleyExplainer(estimator, response_method=response_method,
                                 background=10).fit(X, y)
    assert explainer.response_method_ == expected
    # it is the output the values add up to
    output = getattr(explainer.estimator_, expected, None)
    if output is not None:
        output = output(X[:3])
        output = output[:, 1] if output.ndim == 2 else output
        np.testing.assert_allclose(explainer.explain(X[:3]).predictions, output, rtol=1e-9)


def test_a_callable_response_method_is_recorded_as_given(rng):
    def margin(model, X):
        return model.decision_function(X)

    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    explainer = ShapleyExplainer(LogisticRegression(), response_method=margin,
                                 background=10).fit(X, y)
    assert explainer.response_method_ is margin


def test_an_unknown_method_is_refused_with_every_method(diabetes):
    from skshapley.approximators import METHOD_RECORDS

    X, y = diabetes
    with pytest.raises(ValueError, match=r"'method' parameter of ShapleyExplainer must be "
                                         r"one of \['auto', 'tree', 'linear', 'exact'") as info:
        ShapleyExplainer(Ridge(), method="shapley").fit(X.values, y)
    for method in METHOD_RECORDS:
        assert repr(method) in str(info.value)
    assert "got 'shapley'" in str(info.value)


def test_n_jobs_0_is_refused_at_fit(diabetes):
    X, y = diabetes
    with pytest.raises(ValueError, match=r"'n_jobs' parameter of ShapleyExplainer must be a "
                                         r"non-zero int .* got 0"):
        ShapleyExplainer(Ridge(), n_jobs=0).fit(X.values, y)


def test_pandas_in_and_out(diabetes):
    X, y = diabetes
    explainer = ShapleyExplainer(Ridge(), background=20, random_state=0).fit(X, y)
    explainer.set_output(transform="pandas")
    frame = explainer.transform(X.iloc[:3])
    assert list(frame.columns) == [f"{name}_shap" for name in X.columns]
    assert list(frame.index) == [0, 1, 2]
    assert explainer.explain(X.iloc[:2]).feature_names == list(X.columns)


def test_in_a_pipeline_and_grid_search(diabetes):
    X, y = diabetes
    pipe = make_pipeline(ShapleyExplainer(Ridge(), background=20, random_state=0), Ridge())
    search = GridSearchCV(pipe, {"shapleyexplainer__estimator__alpha": [0.1, 1.0]}, cv=2)
    search.fit(X.iloc[:100], y.iloc[:100])
    assert search.best_params_["shapleyexplainer__estimator__alpha"] in (0.1, 1.0)


def test_progress_bar(diabetes, capsys):
    X, y = diabetes
    # (method="linear", which "auto" picks for Ridge, explains all rows at once)
    ShapleyExplainer(Ridge(), method="exact", background=10,
                     progress=True).fit(X, y).transform(X.iloc[:3])
    assert "Explaining rows" in capsys.readouterr().err


def test_single_feature(rng):
    X = rng.normal(size=(30, 1))
    explainer = ShapleyExplainer(LinearRegression(), background=10).fit(X, 2 * X[:, 0])
    phi = explainer.transform(X[:2])
    np.testing.assert_allclose(phi[:, 0], 2 * (X[:2, 0] - explainer.background_[:, 0].mean()))


@pytest.mark.parametrize(
    "X_bad, match",
    [
        (np.array([[np.nan] * 10]), "NaN"),
        (np.array([[np.inf] * 10]), "infinity"),
        (np.zeros((2, 9)), "10 features"),
        (np.zeros(10), "2D array"),
    ],
)
def test_transform_rejects_bad_input(diabetes, X_bad, match):
    X, y = diabetes
    explainer = ShapleyExplainer(Ridge(), background=10).fit(X.values, y)
    with pytest.raises(ValueError, match=match):
        explainer.transform(X_bad)


def test_unfitted_explainer_raises_not_fitted(diabetes):
    X, _ = diabetes
    for call in ("explain", "transform"):
        with pytest.raises(NotFittedError):
            getattr(ShapleyExplainer(Ridge()), call)(X.values[:2])


def test_frames_are_matched_to_the_model_by_column_name(diabetes):
    # The model is called on rows rebuilt with its own names, and the background is read
    # by position: columns in another order would silently mix the features up.
    X, y = diabetes
    reordered = list(X.columns[::-1])
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError, match=r"prefit estimator was fitted on \['age'"):
        ShapleyExplainer(model, prefit=True, background=10).fit(X[reordered])
    with pytest.raises(ValueError, match=r"'background' parameter has the columns \['s6'"):
        ShapleyExplainer(Ridge(), background=X.iloc[:10][reordered]).fit(X, y)
    # the same columns in the same order are used as given
    explainer = ShapleyExplainer(model, prefit=True, background=X.iloc[:10]).fit(X)
    np.testing.assert_allclose(explainer.expected_value_, model.predict(X.iloc[:10]).mean())


def test_fit_rejects_bad_settings(diabetes, rng):
    X, y = diabetes
    with pytest.raises(ValueError, match="background"):
        ShapleyExplainer(Ridge(), background=np.empty((0, 10))).fit(X.values, y)
    with pytest.raises(ValueError, match="background has 3 features"):
        ShapleyExplainer(Ridge(), background=np.zeros((5, 3))).fit(X.values, y)
    with pytest.raises(NotFittedError):
        ShapleyExplainer(Ridge(), prefit=True).fit(X.values)
    with pytest.raises(ValueError, match=r"method='tree' cannot explain this model exactly: "
                                         r"Ridge is not a tree model"):
        ShapleyExplainer(Ridge(), method="tree").fit(X.values, y)
    with pytest.raises(ValueError, match="tree_path_dependent"):
        ShapleyExplainer(Ridge(), feature_perturbation="tree_path_dependent").fit(X.values, y)
    with pytest.raises(ValueError, match=r"max_evals=100 is too small for method='exact'"):
        ShapleyExplainer(Ridge(), method="exact", max_evals=100).fit(X.values, y)
    with pytest.raises(ValueError,
                       match=r"max_evals=10 is too small for method=.permutation. with 10"):
        ShapleyExplainer(Ridge(), method="permutation", max_evals=10).fit(X.values, y)
    with pytest.raises(ValueError, match="'sampler' parameter must be one of"):
        ShapleyExplainer(Ridge(), sampler="owen").fit(X.values, y)
    with pytest.raises(ValueError, match="requires y to be passed"):
        ShapleyExplainer(Ridge()).fit(X.values)


def test_failed_fit_leaves_the_fitted_state_unchanged(diabetes):
    X, y = diabetes
    explainer = ShapleyExplainer(Ridge(), background=10, random_state=0).fit(X.values, y)
    before = explainer.transform(X.values[:2])
    explainer.set_params(method="tree")
    with pytest.raises(ValueError):
        explainer.fit(X.values[:, :4], y)
    assert explainer.n_features_in_ == 10
    after = explainer.set_params(method="auto").transform(X.values[:2])
    np.testing.assert_array_equal(after, before)


def test_to_shap_carries_error_bars(diabetes, forest):
    shap = pytest.importorskip("shap")
    X, _ = diabetes
    explanation = ShapleyExplainer(forest, prefit=True, method="permutation", max_evals=200,
                                   background=10, random_state=0).fit(X.values).explain(
                                       X.values[:2])
    converted = explanation.to_shap()
    assert isinstance(converted, shap.Explanation)
    np.testing.assert_array_equal(converted.values, explanation.values)
    # 95 % t intervals on the rows' independent draws (11 antithetic pairs here)
    from scipy.stats import t as student_t

    assert (explanation.n_draws == 11).all()
    np.testing.assert_allclose(converted.upper_bounds - converted.values,
                               student_t.ppf(0.975, 10) * explanation.std_errors)
    np.testing.assert_allclose(explanation.error_bars(), converted.upper_bounds - converted.values)
    exact = ShapleyExplainer(forest, prefit=True, background=10).fit(X.values).explain(
        X.values[:2])
    np.testing.assert_allclose(exact.error_multipliers(), 1.959964, rtol=1e-6)  # no draws


@pytest.mark.parametrize("method", ["stratified", "owen", "owen_halved"])
def test_comparison_methods_in_the_explainer(diabetes, method):
    X, y = diabetes
    explainer = ShapleyExplainer(LinearRegression(), method=method, max_evals=500,
                                 background=20, random_state=0).fit(X, y)
    phi = explainer.transform(X.iloc[:3])
    w = explainer.estimator_.coef_
    np.testing.assert_allclose(phi, w * (X.values[:3] - explainer.background_.mean(axis=0)),
                               rtol=1e-9, atol=1e-9)
    # rows do not influence each other, so a row alone gets the same values
    np.testing.assert_allclose(explainer.transform(X.iloc[1:2])[0], phi[1], rtol=1e-12)
    with pytest.raises(ValueError, match=f"too small for method='{method}'"):
        ShapleyExplainer(LinearRegression(), method=method, max_evals=30).fit(X, y)


@pytest.mark.parametrize("method", ["kernel", "leverage", "kadd", "surrogate"])
def test_regression_methods_in_the_explainer(diabetes, forest, method):
    X, y = diabetes
    explainer = ShapleyExplainer(LinearRegression(), method=method, max_evals=300,
                                 background=20, random_state=0).fit(X, y)
    phi = explainer.transform(X.iloc[:3])
    w = explainer.estimator_.coef_
    np.testing.assert_allclose(phi, w * (X.values[:3] - explainer.background_.mean(axis=0)),
                               rtol=1e-9, atol=1e-9)  # additive: exact at any budget
    with pytest.raises(ValueError, match=f"too small for method='{method}'"):
        ShapleyExplainer(LinearRegression(), method=method, max_evals=21).fit(X, y)
    # A forest: efficiency per row, error bars present, the budget spent exactly.
    explanation = ShapleyExplainer(forest, prefit=True, method=method, max_evals=300,
                                   background=X.values[:30], random_state=0).fit(
        X.values).explain(X.values[:4])
    predictions = forest.predict(X.values[:4])
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               predictions, rtol=1e-9)
    assert np.all(explanation.std_errors > 0) and np.all(explanation.n_evaluations == 300)


def _with_missing_values(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + X[:, 1] * X[:, 2]
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def test_missing_values_pass_to_models_that_take_them():
    # HistGradientBoosting routes NaN itself: the exact TreeSHAP values and the
    # model-agnostic exact values of the same interventional game agree, NaN rows included
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _with_missing_values()
    rows = X[:6]
    assert np.isnan(rows).any()
    tree = ShapleyExplainer(HistGradientBoostingRegressor(max_iter=20, random_state=0),
                            background=40, random_state=0).fit(X, y)
    agnostic = ShapleyExplainer(HistGradientBoostingRegressor(max_iter=20, random_state=0),
                                method="exact", background=40, random_state=0).fit(X, y)
    assert tree.method_ == "tree" and agnostic.method_ == "exact"
    assert np.isnan(tree.background_).any()
    assert tree.__sklearn_tags__().input_tags.allow_nan
    explained, reference = tree.explain(rows), agnostic.explain(rows)
    np.testing.assert_allclose(explained.values, reference.values, atol=1e-12)
    np.testing.assert_allclose(explained.values.sum(axis=1) + explained.base_values,
                               tree.estimator_.predict(rows), atol=1e-12)


@pytest.mark.parametrize("imputing", ["first step", "in a ColumnTransformer"])
def test_missing_values_in_a_pipeline_are_judged_by_the_steps_that_see_them(imputing):
    from sklearn.compose import make_column_transformer
    from sklearn.impute import SimpleImputer

    X, y = _with_missing_values(1)
    model = (make_pipeline(SimpleImputer(), Ridge()) if imputing == "first step" else
             make_pipeline(make_column_transformer((SimpleImputer(), [0, 1]),
                                                   (make_pipeline(SimpleImputer(),
                                                                  StandardScaler()), [2, 3])),
                           Ridge()))
    explainer = ShapleyExplainer(model, background=30, random_state=0).fit(X, y)
    assert explainer.__sklearn_tags__().input_tags.allow_nan
    explanation = explainer.explain(X[:5])
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               explainer.estimator_.predict(X[:5]), atol=1e-10)
    # a scaler passes NaN on to a model that does not take it
    scaled = ShapleyExplainer(make_pipeline(StandardScaler(), Ridge()))
    assert not scaled.__sklearn_tags__().input_tags.allow_nan
    with pytest.raises(ValueError, match="NaN"):
        scaled.fit(X, y)


def test_missing_values_imputed_in_some_columns_are_left_to_the_model():
    # A ColumnTransformer imputes columns 0 and 1 and passes the others on: NaN in the
    # imputed columns is fine, in the others the model refuses it (its own message).
    from sklearn.compose import make_column_transformer
    from sklearn.impute import SimpleImputer

    X, y = _with_missing_values(3)
    X[:, 2:] = np.nan_to_num(X[:, 2:])
    model = make_pipeline(make_column_transformer((SimpleImputer(), [0, 1]),
                                                  remainder="passthrough"), Ridge())
    explainer = ShapleyExplainer(model, background=30, random_state=0).fit(X, y)
    assert not explainer.__sklearn_tags__().input_tags.allow_nan  # not in every column
    explanation = explainer.explain(X[:5])
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               explainer.estimator_.predict(X[:5]), atol=1e-10)
    bad = X[:3].copy()
    bad[1, 3] = np.nan
    with pytest.raises(ValueError, match=r"X has NaN in the columns at positions \[.*3\]"):
        explainer.explain(bad)
    X[0, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):  # the pipeline's own fit refuses it
        ShapleyExplainer(model, background=30, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        ShapleyExplainer(Ridge()).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        ShapleyExplainer(Ridge(), background=X[:5]).fit(np.nan_to_num(X), y)


def test_infinity_is_refused_even_by_models_that_take_nan():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _with_missing_values(2)
    explainer = ShapleyExplainer(HistGradientBoostingRegressor(max_iter=5), background=20,
                                 random_state=0).fit(X, y)
    bad = X[:3].copy()
    bad[1, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        explainer.explain(bad)
    with pytest.raises(ValueError, match="infinity"):
        explainer.transform(bad)


def _as_container(frame, container):
    """``frame`` (pandas) as a polars DataFrame or a pyarrow Table; skips the test when
    the library is missing."""
    if container == "polars":
        pl = pytest.importorskip("polars")
        pytest.importorskip("pyarrow")  # polars converts to pandas through pyarrow
        return pl.from_pandas(frame)
    pa = pytest.importorskip("pyarrow")
    return pa.Table.from_pandas(frame, preserve_index=False)


@pytest.mark.parametrize("container", ["polars", "pyarrow"])
def test_polars_and_pyarrow_frames_are_explained_as_pandas(diabetes, container):
    # issue 28: a polars frame crashed with AttributeError (iloc). The same model and
    # seed: the values of the frame's rows are those of the pandas rows, bit for bit.
    X, y = diabetes
    model = Ridge().fit(X, y)
    frame = _as_container(X, container)
    explainer = ShapleyExplainer(model, prefit=True, method="exact", background=20,
                                 random_state=0).fit(frame)
    reference = ShapleyExplainer(model, prefit=True, method="exact", background=20,
                                 random_state=0).fit(X)
    assert explainer.feature_names_in_.tolist() == list(X.columns)
    rows = frame.slice(0, 3) if container == "pyarrow" else frame[:3]
    np.testing.assert_array_equal(explainer.transform(rows), reference.transform(X.iloc[:3]))
    assert explainer.explain(rows).feature_names == list(X.columns)
    # fitted on the frame itself, the model sees the frame's names
    fitted = ShapleyExplainer(Ridge(), background=20, random_state=0).fit(frame, y)
    assert fitted.estimator_.feature_names_in_.tolist() == list(X.columns)


def test_polars_output(diabetes):
    pl = pytest.importorskip("polars")
    pytest.importorskip("pyarrow")
    X, y = diabetes
    explainer = ShapleyExplainer(Ridge(), background=20, random_state=0).fit(X, y)
    values = explainer.transform(X.iloc[:3])
    explainer.set_output(transform="polars")
    out = explainer.transform(pl.from_pandas(X.iloc[:3]))
    assert isinstance(out, pl.DataFrame)
    assert out.columns == [f"{name}_shap" for name in X.columns]
    np.testing.assert_array_equal(out.to_numpy(), values)


def test_polars_text_and_categorical_columns(rng):
    # polars converts a categorical to a pandas one holding only the categories of its
    # rows: rows explained after fit get the fitted categories back
    pl = pytest.importorskip("polars")
    pytest.importorskip("pyarrow")
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.preprocessing import OneHotEncoder

    n = 80
    colour = rng.choice(["red", "green", "blue"], n)
    size = rng.choice(["S", "M", "L"], n)
    area = rng.normal(size=n)
    y = area + (colour == "red") + 2.0 * (size == "L")
    frame = pl.DataFrame({"area": area, "colour": colour, "size": size}).with_columns(
        pl.col("size").cast(pl.Categorical))
    encode = make_column_transformer(
        (OneHotEncoder(), make_column_selector(dtype_exclude="number")),
        remainder="passthrough")
    model = make_pipeline(encode, Ridge(alpha=1e-3))
    explainer = ShapleyExplainer(model, method="exact", background=20,
                                 random_state=0).fit(frame, y)
    reference = ShapleyExplainer(model, method="exact", background=20,
                                 random_state=0).fit(frame.to_pandas(), y)
    assert explainer.feature_names_in_.tolist() == ["area", "colour", "size"]
    rows = frame[1:4]  # fewer categories than the whole column
    np.testing.assert_array_equal(explainer.transform(rows),
                                  reference.transform(frame.to_pandas().iloc[1:4]))
    unseen = rows.with_columns(pl.Series("size", ["XL", "S", "M"], dtype=pl.Categorical))
    with pytest.raises(ValueError, match=r"values \['XL'\] in the categorical column 'size'"):
        explainer.transform(unseen)
