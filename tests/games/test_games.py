import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

from skshapley import config_context
from skshapley.games import (
    AdditiveGame,
    BaselineGame,
    CallableGame,
    MarginalGame,
    UnanimityGame,
    make_response_function,
)


def test_marginal_game_matches_a_loop_over_background(rng):
    X = rng.normal(size=(30, 4))
    model = LinearRegression().fit(X, X @ [1.0, -2.0, 0.5, 3.0] + X[:, 0] * X[:, 1])
    x, background = X[0], X[1:8]
    game = MarginalGame(model, x, background)
    coalitions = rng.random((9, 4)) < 0.5
    expected = [
        np.mean([model.predict(np.where(mask, x, b)[None, :])[0] for b in background])
        for mask in coalitions
    ]
    np.testing.assert_allclose(game.values(coalitions), expected, rtol=1e-12)
    assert game.n_evaluations == 9


def test_marginal_game_is_chunked_by_working_memory(rng):
    calls = []

    def model(X):
        calls.append(X.shape[0])
        return X.sum(axis=1)

    background = rng.normal(size=(50, 3))
    coalitions = rng.random((40, 3)) < 0.5
    game = MarginalGame(model, rng.normal(size=3), background)
    full = game.values(coalitions)
    assert calls == [40 * 50]
    calls.clear()
    # 3 coalitions * 50 rows * 3 features * 8 bytes = 3600 bytes per chunk: 3/4 of
    # working_memory (the rest is left to the model's temporaries)
    with config_context(working_memory=4800 / 2**20):
        chunked = game.values(coalitions)
    assert max(calls) == 3 * 50 and sum(calls) == 40 * 50
    np.testing.assert_allclose(chunked, full, rtol=1e-12)


def test_marginal_game_predicts_in_batches_that_stay_in_cache(rng, monkeypatch):
    # at most MODEL_BATCH_ROWS model rows a call (whole coalitions of the background),
    # and MODEL_BATCH_BYTES of input, whatever working_memory allows
    from skshapley.games import _marginal

    calls = []

    def model(X):
        calls.append(X.shape)
        return X.sum(axis=1)

    monkeypatch.setattr(_marginal, "MODEL_BATCH_ROWS", 1000)
    background = rng.normal(size=(30, 4))
    coalitions = rng.random((100, 4)) < 0.5
    game = MarginalGame(model, rng.normal(size=4), background)
    values = game.values(coalitions)
    assert {shape[0] for shape in calls[:-1]} == {33 * 30} and sum(
        shape[0] for shape in calls) == 100 * 30
    calls.clear()
    monkeypatch.setattr(_marginal, "MODEL_BATCH_BYTES", 8 * 4 * 300)  # 300 rows of 4
    np.testing.assert_array_equal(game.values(coalitions), values)
    assert max(shape[0] for shape in calls) == 10 * 30
    calls.clear()
    monkeypatch.setattr(_marginal, "MODEL_BATCH_ROWS", 7)  # less than one coalition
    np.testing.assert_array_equal(game.values(coalitions), values)
    assert max(shape[0] for shape in calls) == 30


def test_marginal_game_multi_output_log_odds(rng):
    X = rng.normal(size=(60, 3))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=60), [-0.5, 0.5])
    model = LogisticRegression().fit(X, y)
    game = MarginalGame(model, X[0], X[:10], response_method="predict_log_odds")
    values = game.values(np.array([[False] * 3, [True] * 3]))
    assert values.shape == (2, 3) and game.output_shape == (3,)
    log_p = np.log(model.predict_proba(X[:1]))
    np.testing.assert_allclose(values[1], (log_p - log_p.mean())[0], rtol=1e-10)


def test_response_method_auto_for_binary_classifier_is_decision_function(rng):
    X = rng.normal(size=(40, 2))
    model = LogisticRegression().fit(X, X[:, 0] > 0)
    f = make_response_function(model)
    np.testing.assert_allclose(f(X), model.decision_function(X))
    g = make_response_function(model, "predict_log_odds")
    np.testing.assert_allclose(g(X), model.decision_function(X), rtol=1e-6)
    h = make_response_function(model, "predict_proba")
    np.testing.assert_allclose(h(X), model.predict_proba(X)[:, 1])


def test_response_method_missing_raises(rng):
    X = rng.normal(size=(20, 2))
    model = LinearRegression().fit(X, X[:, 0])
    with pytest.raises(ValueError, match="has no method 'predict_proba'"):
        make_response_function(model, "predict_proba")
    with pytest.raises(ValueError, match="'response_method' parameter of make_response_function "
                       "must be a str among .* Got 'predict_probability' instead"):
        make_response_function(model, "predict_probability")


def test_baseline_game_uses_the_reference_row():
    game = BaselineGame(lambda X: X[:, 0] * X[:, 1], x=[2.0, 3.0], reference=[1.0, 5.0])
    np.testing.assert_array_equal(
        game.values(np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=bool)), [5.0, 10.0, 3.0, 6.0]
    )


def test_cache_counts_distinct_coalitions_only():
    game = AdditiveGame([1.0, 2.0, 3.0], cache=True)
    masks = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(game.values(masks), [1.0, 1.0, 5.0])
    assert game.n_evaluations == 2
    game.values(masks[:1])
    assert game.n_evaluations == 2


def test_callable_game_set_function():
    game = CallableGame(lambda S: float(len(S)) ** 2, 3, vectorized=False)
    np.testing.assert_array_equal(game.values(np.array([[1, 1, 0], [1, 1, 1]], dtype=bool)), [4, 9])


def test_game_rejects_bad_coalitions_and_nan_outputs():
    game = AdditiveGame([1.0, 2.0])
    with pytest.raises(ValueError, match=r"shape \(m, 2\)"):
        game.values(np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="boolean"):
        game.values(np.full((1, 2), 0.5))
    nan_game = CallableGame(lambda S: np.where(S[:, 0], np.nan, 1.0), 2)
    with pytest.raises(ValueError, match=r"NaN for coalition row 1 \(players \[0\]\)"):
        nan_game.values(np.array([[0, 1], [1, 0]], dtype=bool))


def test_marginal_game_rejects_bad_background():
    with pytest.raises(ValueError, match="non-empty 2-D"):
        MarginalGame(lambda X: X[:, 0], [1.0, 2.0], np.empty((0, 2)))
    with pytest.raises(ValueError, match="x has 2 features but background has 3"):
        MarginalGame(lambda X: X[:, 0], [1.0, 2.0], np.zeros((4, 3)))


def test_unanimity_closed_form_matches_the_value_function():
    game = UnanimityGame([[1, 1, 0], [0, 0, 1]], [2.0, 3.0])
    np.testing.assert_array_equal(game.values(np.array([[1, 1, 0], [1, 0, 1]], dtype=bool)), [2, 3])
    np.testing.assert_array_equal(game.exact_values(), [1.0, 1.0, 3.0])


def test_auto_response_explains_shares_of_votes_as_probabilities():
    # Trees, forests and nearest neighbours give probabilities of exactly 0 or 1, whose
    # log-odds are infinite: "auto" explains their probabilities; margins where a model
    # has them, log-odds of the others.
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from skshapley.games._response import resolve_response_method

    assert resolve_response_method(RandomForestClassifier()) == "predict_proba"
    assert resolve_response_method(
        make_pipeline(StandardScaler(), KNeighborsClassifier())) == "predict_proba"
    assert resolve_response_method(LogisticRegression()) == "decision_function"
    assert resolve_response_method(MLPClassifier()) == "predict_log_odds"
    assert resolve_response_method(LinearRegression()) == "predict"
