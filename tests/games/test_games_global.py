"""Global games on model columns: RefitGame and PerformanceGame (§1.2, §4.7)."""

import numpy as np
import pytest
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import r2_score
from sklearn.tree import DecisionTreeRegressor

from skshapley.approximators import exact_shapley
from skshapley.games import PerformanceGame, RefitGame


@pytest.fixture
def regression(rng):
    X = rng.normal(size=(120, 3))
    y = 2.0 * X[:, 0] + 1.0 * X[:, 1] + 0.1 * rng.normal(size=120)
    return X[:80], y[:80], X[80:], y[80:]


def test_refit_game_values_are_refit_scores(regression):
    X_train, y_train, X_valid, y_valid = regression
    game = RefitGame(LinearRegression(), X_train, y_train, X_valid, y_valid)
    masks = np.array([[False, False, False], [True, False, True], [True, True, True]])
    values = game.values(masks)
    empty = DummyRegressor().fit(X_train, y_train).score(X_valid, y_valid)
    sub = LinearRegression().fit(X_train[:, [0, 2]], y_train)
    full = LinearRegression().fit(X_train, y_train)
    np.testing.assert_allclose(values, [empty, sub.score(X_valid[:, [0, 2]], y_valid),
                                        full.score(X_valid, y_valid)], rtol=1e-12)
    # Efficiency of the exact values: the columns share v(N) - v(∅).
    phi = exact_shapley(game).values
    assert phi.sum() == pytest.approx(values[2] - values[0], rel=1e-12)
    assert phi[0] > phi[1] > abs(phi[2])


def test_refit_game_caches_and_is_the_same_for_any_n_jobs(regression):
    X_train, y_train, X_valid, y_valid = regression
    masks = (np.arange(8)[:, None] >> np.arange(3)) & 1
    model = DecisionTreeRegressor(max_depth=3, random_state=0)
    serial = RefitGame(model, X_train, y_train, X_valid, y_valid, n_jobs=1)
    parallel = RefitGame(model, X_train, y_train, X_valid, y_valid, n_jobs=2)
    np.testing.assert_array_equal(serial.values(masks), parallel.values(masks))
    serial.values(masks[:4])  # repeats: served from the cache
    assert serial.n_evaluations == 8


def test_refit_game_classifier_empty_is_prior(rng):
    X = rng.normal(size=(100, 2))
    y = (X[:, 0] > 0.5).astype(int)
    game = RefitGame(LogisticRegression(), X[:60], y[:60], X[60:], y[60:],
                     scoring="neg_log_loss")
    empty = game.values(np.zeros((1, 2), dtype=bool))[0]
    prior = DummyClassifier(strategy="prior").fit(X[:60], y[:60])
    from sklearn.metrics import log_loss

    assert empty == pytest.approx(-log_loss(y[60:], prior.predict_proba(X[60:])))


def test_refit_game_failing_scorer_names_the_parameter(regression):
    def broken(estimator, X, y):
        raise RuntimeError("boom")

    game = RefitGame(LinearRegression(), *regression, scoring=broken)
    with pytest.raises(ValueError, match="'scoring' parameter .* RuntimeError: boom"):
        game.values(np.ones((1, 3), dtype=bool))
    with pytest.raises(ValueError, match="'scoring' parameter"):
        RefitGame(LinearRegression(), *regression, scoring="no_such_score")


def test_performance_game_marginalises_absent_columns(regression):
    X_train, y_train, X_valid, y_valid = regression
    model = LinearRegression().fit(X_train, y_train)
    background = X_train[:7]
    game = PerformanceGame(model, X_valid, y_valid, background)
    mask = np.array([True, False, True])
    # Reference: every validation row with each background row's values outside S.
    rows = [np.where(mask, x, b) for b in background for x in X_valid]
    expected = r2_score(np.tile(y_valid, 7), model.predict(np.array(rows)))
    assert game.values(mask[None])[0] == pytest.approx(expected, rel=1e-12)
    full = game.values(np.ones((1, 3), dtype=bool))[0]
    assert full == pytest.approx(model.score(X_valid, y_valid), rel=1e-12)


def test_performance_game_bad_background(regression):
    X_train, y_train, X_valid, y_valid = regression
    model = LinearRegression().fit(X_train, y_train)
    with pytest.raises(ValueError, match="background"):
        PerformanceGame(model, X_valid, y_valid, np.empty((0, 3)))
