"""The explainer at many features: bounded budgets and memory, auto weighing the
estimator's cost against the model's, and error bars that hold at d = 100."""

import time
import tracemalloc

import numpy as np
import pytest
from oracles import interventional_values, product_model
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.neural_network import MLPRegressor

from skshapley import ShapleyExplainer, config_context
from skshapley.approximators import METHOD_RECORDS, exact_shapley
from skshapley.games import MarginalGame


class FunctionModel(RegressorMixin, BaseEstimator):
    """A prefit regressor computing ``function(X)``, optionally slow per call."""

    def __init__(self, function=None, seconds_per_call=0.0):
        self.function = function
        self.seconds_per_call = seconds_per_call

    def fit(self, X, y=None):
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict(self, X):
        if self.seconds_per_call:
            time.sleep(self.seconds_per_call)
        return self.function(np.asarray(X))


def _fitted(function, d, **kwargs):
    return FunctionModel(function, **kwargs).fit(np.zeros((1, d)))


def _nonlinear(X):
    return np.tanh(X[:, 0] * X[:, 1]) + X.sum(axis=1) + np.sin(X[:, 2] * X[:, 3] * X[:, -1])


def test_a_budget_past_all_coalitions_enumerates_with_a_note():
    # 2^4 = 16 evaluations are exact: max_evals=1e9 with orderings used to run without end
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    explainer = ShapleyExplainer(_fitted(_nonlinear, 4), prefit=True, method="permutation",
                                 max_evals=10**9, background=10, random_state=0).fit(X)
    assert explainer.method_ == "exact" and explainer.max_evals_ == 16
    explanation = explainer.explain(X[:2])
    assert explanation.notes and "2^4 = 16" in explanation.notes[0]
    assert explanation.method == "exact" and not explanation.std_errors.any()
    game = MarginalGame(_nonlinear, X[0], explainer.background_)
    np.testing.assert_allclose(explanation.values[0], exact_shapley(game).values, atol=1e-12)


def test_a_budget_past_2_to_the_d_is_refused_above_20_features():
    X = np.random.default_rng(0).normal(size=(20, 30))
    with pytest.raises(ValueError, match=r"max_evals=1099511627776 is more than the 2\^30"):
        ShapleyExplainer(_fitted(_nonlinear, 30), prefit=True, max_evals=2**40).fit(X)


def test_a_design_past_working_memory_is_refused_naming_what_fits():
    d = 200
    X = np.random.default_rng(0).normal(size=(20, d))
    explainer = ShapleyExplainer(_fitted(_nonlinear, d), prefit=True, method="kernel",
                                 max_evals=10**7, background=5)
    with config_context(working_memory=256):
        with pytest.raises(ValueError, match=r"max_evals=10000000 is too large for "
                                             r"method='kernel'.*use max_evals <= (\d+)") as info:
            explainer.fit(X)
        largest = int(info.value.args[0].split("max_evals <= ")[1].split(",")[0])
        assert METHOD_RECORDS["kernel"].cost(d, largest, 1).memory_bytes <= 256 * 2**20
        assert METHOD_RECORDS["kernel"].cost(d, largest + 1000, 1).memory_bytes > 256 * 2**20
        # auto turns to orderings, which work through any budget in chunks
        auto = ShapleyExplainer(_fitted(_nonlinear, d), prefit=True, max_evals=10**7,
                                background=5).fit(X)
        assert auto.method_ == "permutation"


def test_working_memory_too_small_for_one_batch_is_refused():
    X = np.random.default_rng(0).normal(size=(200, 100))
    explainer = ShapleyExplainer(_fitted(_nonlinear, 100), prefit=True, background=100)
    with config_context(working_memory=0.01):
        with pytest.raises(ValueError, match=r"working_memory=0.01 MiB is too small .* at "
                                             r"least 1 "):
            explainer.fit(X)


def test_a_failed_explain_leaves_the_explainer_unchanged():
    X = np.random.default_rng(0).normal(size=(40, 12))
    explainer = ShapleyExplainer(_fitted(_nonlinear, 12), prefit=True, background=10,
                                 random_state=0).fit(X)
    before = dict(vars(explainer))
    with pytest.raises(ValueError):
        explainer.explain(X[:2, :5])
    assert vars(explainer).keys() == before.keys()
    assert all(vars(explainer)[key] is value for key, value in before.items())


def test_a_thousand_features_run_in_bounded_memory():
    d = 1000
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, d))
    weights = rng.normal(size=d)

    def model(rows):
        return rows @ weights + np.tanh(rows[:, 0] * rows[:, 1])

    explainer = ShapleyExplainer(_fitted(model, d), prefit=True, max_evals=10 * d,
                                 background=10, random_state=0).fit(X)
    tracemalloc.start()
    with config_context(working_memory=64):
        explanation = explainer.explain(X[:2])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 400 * 2**20, peak / 2**20
    assert explanation.values.shape == (2, d)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               model(X[:2]), rtol=1e-9)
    assert np.isfinite(explanation.std_errors).all()


def test_auto_weighs_the_solver_against_the_models_time():
    d = 200
    X = np.random.default_rng(0).normal(size=(30, d))
    fast = ShapleyExplainer(_fitted(_nonlinear, d), prefit=True, background=10).fit(X)
    assert fast.method_ in ("leverage", "permutation")
    assert "model" in fast.plan_.reason
    slow = ShapleyExplainer(_fitted(_nonlinear, d, seconds_per_call=0.2), prefit=True,
                            background=10).fit(X)
    assert slow.method_ == "surrogate"
    # without a model to time (shapley_values on a game), the most accurate estimator
    # per evaluation whose design fits
    from skshapley.approximators import choose_method

    assert choose_method("auto", d, 2 + 64 * (d - 1)).method == "surrogate"


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_an_mlp_at_fifty_features_costs_little_beyond_its_evaluations():
    d = 50
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, d))
    y = X[:, :5].sum(axis=1) + X[:, 0] * X[:, 1]
    model = MLPRegressor(hidden_layer_sizes=(16,), max_iter=30, random_state=0).fit(X, y)
    explainer = ShapleyExplainer(model, prefit=True, background=20, random_state=0).fit(X)
    explanation = explainer.explain(X[:2])
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               model.predict(X[:2]), rtol=1e-8, atol=1e-8)
    assert (explanation.std_errors > 0).any()


@pytest.mark.parametrize("d", [100, pytest.param(500, marks=pytest.mark.slow)])
def test_error_bars_cover_at_their_rate_at_many_features(d):
    """95 % t intervals on a game with a closed form (a linear model plus products of
    pairs and triples of features) cover 0.93-0.97 of the true values."""
    rng = np.random.default_rng(1)
    model, truth_of = product_model(d, rng)
    X = rng.normal(size=(40, d))
    background = rng.normal(size=(20, d)) + 0.5
    seeds = 6 if d == 100 else 4
    inside = []
    for seed in range(seeds):
        explainer = ShapleyExplainer(_fitted(model, d), prefit=True, background=background,
                                     random_state=seed).fit(X)
        explanation = explainer.explain(X[:2])
        for row in range(2):
            truth = interventional_values(X[row], background, truth_of)
            error = np.abs(explanation.values[row] - truth)
            inside.append(error <= explanation.error_bars()[row])
    coverage = np.mean(inside)
    assert 0.93 <= coverage <= 0.975, (explainer.method_, coverage)


def test_a_plain_function_is_explained_like_a_prefit_model():
    # shap's explainers take f(X); so does ours, with nothing to fit
    X = np.random.default_rng(0).normal(size=(50, 12))
    explainer = ShapleyExplainer(_nonlinear, background=10, random_state=0).fit(X)
    explanation = explainer.explain(X[:3])
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               _nonlinear(X[:3]), rtol=1e-10)
    two = ShapleyExplainer(lambda rows: np.c_[rows[:, 0], rows[:, 1] * rows[:, 2]],
                           background=10).fit(X).explain(X[:2])
    assert two.values.shape == (2, 12, 2)
    small = X[:, :4]
    explainer = ShapleyExplainer(_nonlinear, background=10).fit(small)
    game = MarginalGame(_nonlinear, small[0], explainer.background_)
    np.testing.assert_allclose(explainer.explain(small[:1]).values[0],
                               exact_shapley(game).values, atol=1e-12)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"background": True}, r"'background' parameter of ShapleyExplainer must be an int"),
    ({"n_jobs": 0}, r"'n_jobs' parameter of ShapleyExplainer must be a non-zero int"),
])
def test_parameters_no_constraint_catches_are_named(kwargs, match):
    X = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises(ValueError, match=match):
        ShapleyExplainer(_nonlinear, **kwargs).fit(X)


def test_a_binary_classifiers_explanation_names_the_explained_class():
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    linear = ShapleyExplainer(LogisticRegression(), background=10).fit(X, y)
    assert linear.explain(X[:2]).output_names == ["decision(yes)"]
    odds = ShapleyExplainer(LogisticRegression(), response_method="predict_log_odds",
                            background=10).fit(X, y)
    assert odds.output_names_ == ["log-odds(yes)"]
    tree = ShapleyExplainer(DecisionTreeClassifier(max_depth=2), background=10).fit(X, y)
    assert tree.explain(X[:1]).output_names == ["P(yes)"]
    regressor = ShapleyExplainer(_fitted(_nonlinear, 4), prefit=True, background=10).fit(X)
    assert regressor.output_names_ is None
