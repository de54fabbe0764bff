"""``shapley_importance`` (SAGE) against a brute-force oracle written from the paper's
definition (Covert, Lundberg & Lee 2020, Sec. 3.1-3.2): v(S) is the score of the
model whose columns outside S are averaged over the background."""

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from oracles import shapley_by_subsets
from scipy import stats
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error, r2_score
from sklearn.multioutput import MultiOutputClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import NotFittedError

from skshapley.inspection import shapley_importance
from skshapley.inspection._game import MarginalScoreGame


def interacting_data(rng, n_rows=30, n_features=4):
    """y with a product, a main effect and noise; a quadratic model fits it."""
    X = rng.normal(size=(n_rows, n_features))
    y = X[:, 0] * X[:, 1] + X[:, 2] - 0.5 * X[:, -1] ** 2 + 0.3 * rng.normal(size=n_rows)
    model = make_pipeline(PolynomialFeatures(2), LinearRegression()).fit(X, y)
    return X, y, model


def naive_value(response, X, background, columns, aggregate):
    """v(S) from the definition, one row at a time: the mean response over the
    background with the columns in S taken from the row, then ``aggregate``d."""
    columns = list(columns)
    averaged = []
    for x in X:
        rows = background.copy()
        rows[:, columns] = x[columns]
        averaged.append(response(rows).mean(axis=0))
    return aggregate(np.array(averaged))


def brute_force(response, X, background, aggregate, groups):
    def value(players):
        columns = [j for p in players for j in groups[p]]
        return naive_value(response, X, background, columns, aggregate)

    return shapley_by_subsets(value, len(groups))


# -- exact values against the oracle -------------------------------------------------------
def test_exact_matches_brute_force_for_a_regressor(rng):
    X, y, model = interacting_data(rng)
    background = X[:7]
    result = shapley_importance(model, X, y, scoring="neg_mean_squared_error",
                                background=background)
    expected = brute_force(model.predict, X, background,
                           lambda p: -mean_squared_error(y, p), [[0], [1], [2], [3]])
    assert result.method == "exact" and result.n_evaluations == 16
    assert_allclose(result.importances_mean, expected, rtol=1e-10, atol=1e-12)
    assert_array_equal(result.std_errors, 0.0)
    assert_array_equal(result.ci_low, result.importances_mean)
    assert_array_equal(result.ci_high, result.importances_mean)
    assert result.converged is None


def test_exact_matches_brute_force_for_a_classifier(rng):
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=40) > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    background = X[:6]
    for scoring, aggregate in [
        ("neg_log_loss", lambda p: -log_loss(y, p)),
        # labels of the marginalised classifier: the class of largest mean probability
        ("accuracy", lambda p: accuracy_score(y, np.argmax(p, axis=1))),
    ]:
        result = shapley_importance(model, X, y, scoring=scoring, background=background)
        expected = brute_force(model.predict_proba, X, background, aggregate,
                               [[0], [1], [2], [3]])
        assert_allclose(result.importances_mean, expected, rtol=1e-10, atol=1e-12)


def test_labels_without_probabilities_come_from_mean_margins(rng):
    # LinearSVC has no predict_proba: its marginalised labels are the sign of the mean
    # decision value.
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    model = LinearSVC().fit(X, y)
    background = X[:5]
    result = shapley_importance(model, X, y, background=background)
    expected = brute_force(model.decision_function, X, background,
                           lambda m: accuracy_score(y, (m > 0).astype(int)),
                           [[0], [1], [2]])
    assert result.scoring == "accuracy"
    assert_allclose(result.importances_mean, expected, atol=1e-12)


def test_labels_without_scores_are_the_most_frequent_over_the_background(rng):
    X = rng.normal(size=(20, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)

    class VotesOnly:  # a classifier with predict only
        _estimator_type = "classifier"

        def __init__(self, tree):
            self.tree, self.classes_, self.n_features_in_ = tree, tree.classes_, 3

        def __sklearn_tags__(self):
            return self.tree.__sklearn_tags__()

        def __sklearn_is_fitted__(self):
            return True

        def fit(self, X, y):
            return self

        def predict(self, X):
            return self.tree.predict(X)

    background = X[:5]

    def votes(rows):
        return (model.predict(rows)[:, None] == model.classes_).astype(float)

    result = shapley_importance(VotesOnly(model), X, y, background=background)
    expected = brute_force(votes, X, background,
                           lambda share: accuracy_score(y, np.argmax(share, axis=1)),
                           [[0], [1], [2]])
    assert_allclose(result.importances_mean, expected, atol=1e-12)


# -- efficiency and the end points -------------------------------------------------------
@pytest.mark.parametrize("max_evals", [16, 14])  # exact, sampled
def test_values_add_up_to_the_score_gain(rng, max_evals):
    X, y, model = interacting_data(rng, n_rows=50, n_features=4)
    result = shapley_importance(model, X, y, background=10, max_evals=max_evals,
                                random_state=0)
    assert result.method == ("exact" if max_evals == 16 else "permutation")
    # v(N) is the model's own score; v(∅) the score of its mean output over the background
    assert result.full_score == pytest.approx(r2_score(y, model.predict(X)), rel=1e-12)
    assert result.n_background == 10
    gain = result.full_score - result.baseline_score
    assert result.importances_mean.sum() == pytest.approx(gain, rel=1e-12)


def test_baseline_is_the_score_of_the_mean_prediction(rng):
    X, y, model = interacting_data(rng)
    background = X[5:25]
    result = shapley_importance(model, X, y, scoring="neg_mean_squared_error",
                                background=background)
    constant = model.predict(background).mean()
    assert result.baseline_score == pytest.approx(-np.mean((y - constant) ** 2), rel=1e-12)


@pytest.mark.parametrize("max_evals", [32, 30])  # exact, sampled
def test_a_column_the_model_ignores_gets_exactly_zero(rng, max_evals):
    X = rng.normal(size=(40, 5))
    y = 2 * X[:, 0] - X[:, 1] * X[:, 2] + X[:, 3]
    model = make_pipeline(_Drop(4), PolynomialFeatures(2), LinearRegression()).fit(X, y)
    result = shapley_importance(model, X, y, max_evals=max_evals, random_state=0)
    assert result.importances_mean[4] == 0.0
    assert result.ci_low[4] == result.ci_high[4] == 0.0
    assert np.all(result.importances_mean[:4] != 0.0)


class _Drop:
    """A transformer that drops the last column (so the model ignores it)."""

    def __init__(self, n_kept):
        self.n_kept = n_kept

    def fit(self, X, y=None):
        self.n_features_in_ = np.shape(X)[1]
        return self

    def transform(self, X):
        return np.asarray(X)[:, : self.n_kept]

    def get_params(self, deep=True):
        return {"n_kept": self.n_kept}

    def set_params(self, **params):
        return self

    def __sklearn_is_fitted__(self):
        return True


# -- sampling: error bars, tol, determinism ----------------------------------------------
def test_intervals_cover_the_exact_values(rng):
    # d = 8 players, 240 of the 256 evaluations: 34 orderings in 17 antithetic pairs,
    # so the t_16 interval should hold 95 % of the time. 40 seeds x 8 features = 320
    # intervals; if the coverage were 95 %, fewer than 85 % covering would be a 6-sigma
    # event (binomial sd sqrt(.95 .05 / 320) = 1.2 %), so the bound rejects only badly
    # wrong intervals. A cheap callable scorer keeps the 40 runs fast.
    X, y, model = interacting_data(rng, n_rows=24, n_features=8)

    def run(max_evals, seed):  # one background for every seed: the same game
        return shapley_importance(model, X, y, scoring=_neg_mse, background=X[:8],
                                  max_evals=max_evals, random_state=seed)

    exact = run(256, 0).importances_mean
    covered, widths = [], []
    for seed in range(40):
        result = run(240, seed)
        assert result.method == "permutation" and result.n_draws == 17
        covered.append((result.ci_low <= exact) & (exact <= result.ci_high))
        widths.append(result.ci_high - result.ci_low)
        t = stats.t.ppf(0.975, 16)
        assert_allclose(result.ci_high - result.importances_mean, t * result.std_errors)
        assert_allclose(result.importances_std, result.std_errors * np.sqrt(17))
    coverage = np.mean(covered)
    assert coverage >= 0.85, coverage
    assert np.all(np.array(widths) > 0)


def _neg_mse(estimator, X, y):
    """A scorer without scikit-learn's input checks (a tenth of the time per call)."""
    return -np.mean((estimator.predict(X) - y) ** 2)


def test_tol_stops_early_within_the_budget(rng):
    X, y, model = interacting_data(rng, n_rows=30, n_features=12)
    # 4000 evaluations, fewer than the 2^12 of enumeration: the orderings are sampled
    result = shapley_importance(model, X, y, scoring=_neg_mse, background=5,
                                max_evals=4000, tol=0.2, random_state=0)
    assert result.method == "permutation" and result.converged is True
    assert result.n_evaluations < 4000
    assert result.result.error_quantile < 0.2
    # the stopping rule's bound holds: within tol of the values of all 2^12 coalitions
    # (the same background rows: the same random_state)
    exact = shapley_importance(model, X, y, scoring=_neg_mse, background=5,
                               max_evals=2**12, random_state=0)
    assert exact.method == "exact"
    assert np.linalg.norm(result.importances_mean - exact.importances_mean) < 0.2
    assert shapley_importance(model, X, y, scoring=_neg_mse, background=5, max_evals=300,
                              tol=1e-6, random_state=0).converged is False


def test_budget_is_respected_and_counted(rng):
    X, y, model = interacting_data(rng, n_rows=30, n_features=12)
    result = shapley_importance(model, X, y, background=5, max_evals=300, random_state=1)
    assert result.n_evaluations <= 300
    assert result.n_evaluations == result.result.n_evaluations


def test_same_seed_same_values_for_any_n_jobs(rng):
    X, y, model = interacting_data(rng, n_rows=30, n_features=6)
    kwargs = dict(background=6, max_evals=52, random_state=3)
    first = shapley_importance(model, X, y, **kwargs)
    threaded = shapley_importance(model, X, y, n_jobs=2, **kwargs)
    assert_array_equal(first.importances_mean, threaded.importances_mean)
    assert_array_equal(first.std_errors, threaded.std_errors)
    other = shapley_importance(model, X, y, **{**kwargs, "random_state": 4})
    assert not np.array_equal(first.importances_mean, other.importances_mean)


def test_chunks_within_working_memory_give_the_same_values(rng):
    # 1 KiB of working memory: one coalition per model call; the same additions
    from skshapley import config_context

    X, y, model = interacting_data(rng, n_rows=20, n_features=4)
    whole = shapley_importance(model, X, y, background=X[:5])
    with config_context(working_memory=2**-10):
        chunked = shapley_importance(model, X, y, background=X[:5])
    assert_array_equal(chunked.importances_mean, whole.importances_mean)


# -- groups -----------------------------------------------------------------------------
def test_groups_are_the_players_of_the_grouped_game(rng):
    X, y, model = interacting_data(rng, n_rows=25, n_features=5)
    background = X[:6]
    groups = {"pair": [0, 1], "third": [2], "rest": [4, 3]}
    result = shapley_importance(model, X, y, groups=groups, background=background)
    expected = brute_force(model.predict, X, background, lambda p: r2_score(y, p),
                           [[0, 1], [2], [4, 3]])
    assert_allclose(result.importances_mean, expected, rtol=1e-10, atol=1e-12)
    assert result.feature_names.tolist() == ["pair", "third", "rest"]
    assert [g.tolist() for g in result.groups] == [[0, 1], [2], [3, 4]]
    as_list = shapley_importance(model, X, y, groups=[[0, 1], 2, [4, 3]],
                                 background=background)
    assert_array_equal(as_list.importances_mean, result.importances_mean)
    assert as_list.feature_names.tolist() == ["x0+x1", "x2", "x4+x3"]


def test_groups_by_name_on_a_dataframe(rng):
    pd = pytest.importorskip("pandas")
    X, y, model = interacting_data(rng, n_rows=25, n_features=4)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = make_pipeline(PolynomialFeatures(2), LinearRegression()).fit(frame, y)
    by_name = shapley_importance(model, frame, y, groups={"ab": ["a", "b"], "cd": ["c", 3]},
                                 background=frame.iloc[:5])
    expected = brute_force(lambda rows: model.predict(pd.DataFrame(rows, columns=frame.columns)),
                           X, X[:5], lambda p: r2_score(y, p), [[0, 1], [2, 3]])
    assert_allclose(by_name.importances_mean, expected, rtol=1e-10)
    plain = shapley_importance(model, frame, y, background=frame.iloc[:5])
    assert plain.feature_names.tolist() == ["a", "b", "c", "d"]


def test_text_columns_are_one_player_each(rng):
    pd = pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder

    n = 60
    colour = rng.choice(["red", "green", "blue"], size=n)
    size = rng.normal(size=n)
    y = size + (colour == "red") * 2.0
    frame = pd.DataFrame({"size": size, "colour": colour})
    model = make_pipeline(
        make_column_transformer((OneHotEncoder(), ["colour"]), remainder="passthrough"),
        LinearRegression()).fit(frame, y)
    result = shapley_importance(model, frame, y, background=frame.iloc[:12])
    codes = {"red": 0.0, "green": 1.0, "blue": 2.0}
    X = np.column_stack([size, [codes[c] for c in colour]])
    names = {v: k for k, v in codes.items()}

    def predict(rows):
        return model.predict(pd.DataFrame({"size": rows[:, 0],
                                           "colour": [names[c] for c in rows[:, 1]]}))

    expected = brute_force(predict, X, X[:12], lambda p: r2_score(y, p), [[0], [1]])
    assert result.feature_names.tolist() == ["size", "colour"]
    assert_allclose(result.importances_mean, expected, rtol=1e-10)


@pytest.mark.parametrize(("groups", "error", "match"), [
    ({"a": [0, 7]}, ValueError, r"column position 7 in group 'a', but X has 4 columns"),
    ({"a": ["b"]}, ValueError, r"names the column 'b' in group 'a', but X has no column"),
    ({"a": [0, 1], "b": [1, 2, 3]}, ValueError,
     r"puts the column 'x1' in group 'a' and in group 'b'"),
    ({"a": [0, 0, 1, 2, 3]}, ValueError, r"puts the column 'x0' twice in group 'a'"),
    ({"a": [], "b": [0, 1, 2, 3]}, ValueError, r"has an empty group 'a'"),
    ([[0, 1], [2]], ValueError, r"leaves the columns \['x3'\] in no group"),
    ([[0, True]], TypeError, r"got the bool True in group 0"),
    ([[0, 1.5]], TypeError, r"got 1.5 of type float in group 0"),
    ({}, ValueError, r"'groups' parameter of shapley_importance is empty"),
    ({"a": None}, TypeError, r"needs a list of columns for each group; group 'a' is None"),
])
def test_bad_groups_are_refused(rng, groups, error, match):
    X, y, model = interacting_data(rng)
    with pytest.raises(error, match=match):
        shapley_importance(model, X, y, groups=groups)


def test_unknown_column_name_lists_the_columns(rng):
    pd = pytest.importorskip("pandas")
    X, y, _ = interacting_data(rng)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = LinearRegression().fit(frame, y)
    with pytest.raises(ValueError, match=r"unknown column 'e' in group 'g'; X's columns "
                                         r"are \['a', 'b', 'c', 'd'\]"):
        shapley_importance(model, frame, y, groups={"g": ["a", "e"], "h": ["b", "c", "d"]})


# -- other bad input --------------------------------------------------------------------
def test_bad_input_is_refused(rng):
    X, y, model = interacting_data(rng)
    with pytest.raises(NotFittedError):
        shapley_importance(LinearRegression(), X, y)
    with pytest.raises(ValueError, match=r"max_evals=7 is too small for 12 players"):
        shapley_importance(LinearRegression().fit(np.tile(X, 3), y), np.tile(X, 3), y,
                           max_evals=7)
    with pytest.raises(ValueError, match=r"'background' parameter .* Got True instead"):
        shapley_importance(model, X, y, background=True)
    with pytest.raises(ValueError, match=r"'n_jobs' parameter .* Got 0 instead"):
        shapley_importance(model, X, y, n_jobs=0)
    with pytest.raises(ValueError, match=r"'scoring' parameter is not usable"):
        shapley_importance(model, X, y, scoring="no_such_score")
    with pytest.raises(ValueError, match=r"X has 3 features, but Pipeline was fitted on 4"):
        shapley_importance(model, X[:, :3], y)
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples"):
        shapley_importance(model, X, y[:-1])
    with pytest.raises(ValueError, match=r"background has 3 columns, but X has 4"):
        shapley_importance(model, X, y, background=X[:5, :3])
    with pytest.raises(ValueError, match=r"'max_evals' parameter"):
        shapley_importance(model, X, y, max_evals=1)
    with pytest.raises(ValueError, match=r"'tol' parameter"):
        shapley_importance(model, X, y, tol=0.0)


def test_scorer_that_calls_the_model_on_other_rows_is_refused(rng):
    X, y, model = interacting_data(rng)

    def first_rows(estimator, X_, y_):
        return r2_score(y_[:10], estimator.predict(X_[:10]))

    with pytest.raises(ValueError, match=r"called the model's predict on other rows"):
        shapley_importance(model, X, y, scoring=first_rows)


def test_non_finite_score_names_the_players(rng):
    X, y, model = interacting_data(rng)

    def infinite_when_x0_absent(estimator, X_, y_):
        predictions = estimator.predict(X_)
        return 0.0 if np.ptp(predictions) > 0 else np.inf

    with pytest.raises(ValueError, match=r"returned inf for coalition row"):
        shapley_importance(model, X, y, scoring=infinite_when_x0_absent)


def test_estimators_that_are_neither_need_a_scoring(rng):
    from sklearn.cluster import KMeans

    X = rng.normal(size=(20, 2))
    model = KMeans(n_clusters=2, n_init=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"KMeans is neither; pass a scorer"):
        shapley_importance(model, X, np.zeros(20))


def test_multi_output_classifiers_are_refused(rng):
    X = rng.normal(size=(20, 2))
    Y = (X > 0).astype(int)
    model = MultiOutputClassifier(LogisticRegression()).fit(X, Y)
    with pytest.raises(ValueError, match=r"several outputs of classes"):
        shapley_importance(model, X, Y)


def test_a_constant_model_has_no_importance(rng):
    X, y, _ = interacting_data(rng)
    model = DummyRegressor().fit(X, y)
    result = shapley_importance(model, X, y, max_evals=8, random_state=0)
    assert_array_equal(result.importances_mean, 0.0)
    assert result.full_score == result.baseline_score


def test_game_evaluates_each_coalition_once(rng):
    # the game counts coalitions, whatever the chunks and special cases (v(∅), v(N))
    X, y, model = interacting_data(rng, n_rows=10)
    from sklearn.metrics import check_scoring

    game = MarginalScoreGame(model, X, y, X[:3], check_scoring(model, "r2"))
    masks = np.array(list(itertools.product([False, True], repeat=4)))
    values = game.values(masks)
    assert game.n_evaluations == 16
    assert values[-1] == pytest.approx(r2_score(y, model.predict(X)), rel=1e-12)
