"""ShapleyExplainer(method="linear"): closed-form values of models linear in their inputs.

The oracle is enumeration of all 2^d coalitions of the same interventional game
(``method="exact"``, same background), which calls the model on every masked row.
"""

import time

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import (
    LinearRegression,
    LogisticRegression,
    PoissonRegressor,
    Ridge,
    SGDClassifier,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    KBinsDiscretizer,
    OneHotEncoder,
    PolynomialFeatures,
    SplineTransformer,
    StandardScaler,
)

from skshapley import MomentQuantileTransformer, ShapleyExplainer
from skshapley.explain._columns import model_rows
from skshapley.explain._linear import plan_linear
from skshapley.tree._pipeline import column_of_outputs


def _data(rng, n=300, d=5):
    X = rng.normal(size=(n, d)) * np.arange(1, d + 1)
    y = X @ rng.normal(size=d) + np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return X, y


def _labels(y, n_classes):
    return np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))


def _houses(rng, n=300):
    frame = pd.DataFrame({
        "area": rng.gamma(6.0, 15.0, n),
        "district": rng.choice(["north", "south", "east", "west"], n),
        "age": rng.uniform(0, 80, n),
        "rooms": rng.integers(1, 7, n).astype(float),
    })
    y = (0.05 * frame["area"] - 0.02 * frame["age"] + 0.3 * frame["rooms"]
         + np.where(frame["district"] == "north", 1.0, 0.0) + rng.normal(size=n))
    return frame, y.to_numpy()


def _rows(X, stop):
    return X.iloc[:stop] if hasattr(X, "iloc") else X[:stop]


def _check_against_enumeration(model, X, response_method="auto", n_rows=6):
    """Linear values equal enumeration of the same game, add up to the model's output,
    and cost no evaluation; returns the linear explanation."""
    linear = ShapleyExplainer(model, prefit=True, response_method=response_method,
                              background=25, random_state=0).fit(X)
    exact = ShapleyExplainer(model, prefit=True, response_method=response_method,
                             method="exact", background=25, random_state=0).fit(X)
    assert linear.method_ == "linear"
    rows = _rows(X, n_rows)
    ours, oracle = linear.explain(rows), exact.explain(rows)
    np.testing.assert_allclose(ours.values, oracle.values, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ours.base_values, oracle.base_values, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(linear.expected_value_, exact.expected_value_, atol=1e-9)
    # efficiency: the values add up to the model's own output
    np.testing.assert_allclose(ours.predictions, oracle.predictions, atol=1e-9)
    assert not ours.std_errors.any() and not ours.n_evaluations.any()
    assert ours.method == "linear"
    return ours


@pytest.mark.parametrize("make_model", [
    LinearRegression,
    lambda: make_pipeline(StandardScaler(), Ridge(alpha=3.0)),
    lambda: make_pipeline(SplineTransformer(n_knots=4, degree=3), Ridge(alpha=0.1)),
    lambda: make_pipeline(KBinsDiscretizer(n_bins=5, encode="onehot",  # sparse output
                                           quantile_method="averaged_inverted_cdf"), Ridge()),
    lambda: make_pipeline(MomentQuantileTransformer(n_bins=4, encode="onehot-dense"),
                          StandardScaler(), Ridge()),
], ids=["linear", "scaled_ridge", "splines", "kbins_onehot", "moment_bins_onehot"])
def test_regressors_equal_enumeration(rng, make_model):
    X, y = _data(rng)
    _check_against_enumeration(make_model().fit(X, y), X)


def test_multi_output_regressor_equals_enumeration(rng):
    X, y = _data(rng)
    model = make_pipeline(StandardScaler(), Ridge()).fit(X, np.column_stack([y, -2 * y]))
    explanation = _check_against_enumeration(model, X)
    assert explanation.values.shape == (6, 5, 2)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("response_method", ["decision_function", "predict_log_odds"])
def test_logistic_regression_margins_and_log_odds_equal_enumeration(rng, n_classes,
                                                                    response_method):
    # binary log-odds are the margin; multinomial log-odds (centred log-probabilities)
    # are the centred margins
    X, y = _data(rng)
    model = LogisticRegression(C=0.05).fit(X, _labels(y, n_classes))
    explanation = _check_against_enumeration(model, X, response_method)
    margins = model.decision_function(X[:6])
    if response_method == "predict_log_odds" and n_classes > 2:
        margins = margins - margins.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(explanation.predictions, margins, atol=1e-9)


def test_text_column_one_hot_encoded_in_a_column_transformer(rng):
    # the explainer masks codes of the text column; the model reads the text through
    # its OneHotEncoder (sparse, several columns for one input column)
    frame, y = _houses(rng)
    encode = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["district"]),
        (StandardScaler(), ["age", "area", "rooms"]), sparse_threshold=1.0)
    model = make_pipeline(encode, LogisticRegression()).fit(frame, y > np.median(y))
    assert np.shape(encode.transform(frame)) == (300, 7)
    explanation = _check_against_enumeration(model, frame)
    assert explanation.display_data[0, 1] == frame["district"].iloc[0]


def test_dropped_column_gets_no_value(rng):
    frame, y = _houses(rng)
    encode = make_column_transformer(
        (StandardScaler(), ["rooms", "area"]),
        (OneHotEncoder(drop="first"), ["district"]), remainder="drop")
    model = make_pipeline(encode, Ridge()).fit(frame, y)
    explanation = _check_against_enumeration(model, frame)
    np.testing.assert_array_equal(explanation.values[:, 2], 0.0)  # "age" is dropped
    assert np.abs(explanation.values[:, [0, 1, 3]]).min() > 0


def test_column_map_of_one_hot_encoders_with_dropped_and_infrequent_categories(rng):
    frame, _ = _houses(rng)
    frame["district"] = rng.choice(list("abcdefg"), frame.shape[0],
                                   p=[0.4, 0.3, 0.2, 0.05, 0.03, 0.01, 0.01])
    encoder = OneHotEncoder(min_frequency=10, drop="first").fit(frame[["rooms", "district"]])
    # rooms: 6 values, one dropped; district: a, b, c, d and the infrequent e, f, g in one
    # column, a dropped
    names = encoder.get_feature_names_out()
    assert list(column_of_outputs([("onehot", encoder)], 2)) == [0] * 5 + [1] * 4
    assert names[-1] == "district_infrequent_sklearn"


@pytest.mark.parametrize("n_classes", [2, 3])
def test_equals_shap_linear_explainer(rng, n_classes):
    shap = pytest.importorskip("shap")
    X = rng.normal(size=(400, 30))
    y = _labels(X @ rng.normal(size=30) + rng.normal(size=400), n_classes)
    model = LogisticRegression().fit(X, y)
    explainer = ShapleyExplainer(model, prefit=True, background=100, random_state=0).fit(X)
    assert explainer.method_ == "linear"
    ours = explainer.explain(X[:50])
    masker = shap.maskers.Independent(explainer.background_, max_samples=100)
    theirs = shap.LinearExplainer(model, masker)(X[:50])
    np.testing.assert_allclose(ours.values, theirs.values, atol=1e-10)
    np.testing.assert_allclose(ours.base_values, theirs.base_values, atol=1e-10)


def test_mixing_steps_fall_back_under_auto_and_are_refused_by_linear(rng):
    X, y = _data(rng, d=3)
    model = make_pipeline(PolynomialFeatures(2), LinearRegression()).fit(X, y)
    auto = ShapleyExplainer(model, prefit=True, background=10, random_state=0).fit(X)
    assert auto.method_ != "linear"
    with pytest.raises(ValueError, match=r"method='linear' cannot explain this model "
                       r"exactly: .*PolynomialFeatures is not one of the column-wise"):
        ShapleyExplainer(model, prefit=True, method="linear", background=10).fit(X)


@pytest.mark.parametrize("model, response_method, reason", [
    (LogisticRegression(), "predict_proba", r"'predict_proba' of the classifier "
     r"LogisticRegression is not linear"),
    (LogisticRegression(), "predict", "'predict' of the classifier"),
    (LogisticRegression(), lambda model, X: model.decision_function(X), "callable"),
    (PoissonRegressor(), "auto", r"coef_ and intercept_ do not give its 'predict' output"),
    # modified Huber probabilities are clipped margins, not their sigmoid
    (SGDClassifier(loss="modified_huber", random_state=0), "predict_log_odds",
     "do not give its 'predict_log_odds' output"),
])
def test_nonlinear_outputs_are_refused(rng, model, response_method, reason):
    X, y = _data(rng, d=3)
    target = _labels(y, 2) if response_method != "auto" else np.exp(y / y.std())
    model.fit(X, target)
    with pytest.raises(ValueError, match=reason):
        ShapleyExplainer(model, prefit=True, method="linear", response_method=response_method,
                         background=10).fit(X)
    auto = ShapleyExplainer(model, prefit=True, response_method=response_method,
                            background=10).fit(X)
    assert auto.method_ == "exact"  # d = 3: enumeration


def test_confident_log_odds_rows_are_explained_as_margins(rng):
    # probabilities rounded to 0 or 1 give clipped log-odds; the plan checks the rows
    # where they are the margins, and explains the margins
    X, y = _data(rng)
    model = LogisticRegression(C=100.0).fit(X, y > 0)
    margins = model.decision_function(X)
    assert np.abs(margins).max() > 40  # some probabilities are exactly 0 or 1
    plan = plan_linear(model, "predict_log_odds", X[:100], margins[:100],
                       model_rows(None, None))
    assert not isinstance(plan, str)
    explainer = ShapleyExplainer(model, prefit=True, response_method="predict_log_odds",
                                 background=50, random_state=0).fit(X)
    assert explainer.method_ == "linear"
    explanation = explainer.explain(X)
    np.testing.assert_allclose(explanation.predictions, margins, atol=1e-9)


def test_thousand_rows_of_thirty_features_in_well_under_a_second(rng):
    X = rng.normal(size=(2000, 30))
    model = LogisticRegression().fit(X, X @ rng.normal(size=30) > 0)
    explainer = ShapleyExplainer(model, prefit=True, random_state=0).fit(X)
    start = time.perf_counter()
    explanation = explainer.explain(X[:1000])
    elapsed = time.perf_counter() - start
    assert explainer.method_ == "linear"
    # the sampling path took 11 s here; the closed form takes about a millisecond
    assert elapsed < 5.0
    np.testing.assert_allclose(explanation.predictions, model.decision_function(X[:1000]),
                               atol=1e-9)
