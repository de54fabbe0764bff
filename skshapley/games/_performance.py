"""Global games whose players are the input columns of a model.

``RefitGame`` is the feature-utility game of the top-k paper (Kolpaczki, Nielen &
Hüllermeier 2025, Sec. 6): the value of a set of
columns is the held-out score of a model trained on those columns only. ``PerformanceGame``
keeps one fitted model and removes the other columns by marginalising them over a
background sample, which costs predictions instead of fits but measures how much the
fitted model relies on a column rather than how useful the column is.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone, is_classifier
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.metrics import check_scoring

from skshapley.games._base import Game
from skshapley.games._response import NamedRows


def _take_columns(X, columns):
    """Columns of an array or a DataFrame, keeping the container (names matter to pipelines)."""
    if hasattr(X, "iloc"):
        return X.iloc[:, columns]
    return X[:, columns]


def _checked_scorer(estimator, scoring):
    """``check_scoring``, with its errors as a ValueError naming the parameter."""
    try:
        return check_scoring(estimator, scoring=scoring)
    except (ValueError, TypeError) as err:
        raise ValueError(f"The 'scoring' parameter is not usable: {err}") from err


def _score(scorer, estimator, X, y, scoring):
    try:
        score = scorer(estimator, X, y)
    except Exception as err:  # a user scorer may fail in any way; name the parameter
        raise ValueError(
            f"The 'scoring' parameter {scoring!r} failed on {type(estimator).__name__}: "
            f"{type(err).__name__}: {err}"
        ) from err
    score = float(np.asarray(score, dtype=np.float64).reshape(-1)[0]) \
        if np.size(score) == 1 else np.nan
    if not np.isfinite(score):
        raise ValueError(
            f"The 'scoring' parameter {scoring!r} returned a non-finite score ({score}) for "
            f"{type(estimator).__name__}; use a scorer that is finite on every column subset."
        )
    return score


def _fit_and_score(estimator, scorer, scoring, X_train, y_train, X_valid, y_valid, mask,
                   empty_estimator, fit_params):
    """The value of one coalition; runs inside a joblib worker."""
    columns = np.flatnonzero(mask)
    if columns.size == 0:
        # No column to learn from: the constant prediction (its score is v(∅)),
        # weighted like the refits.
        weights = {name: value for name, value in fit_params.items() if name == "sample_weight"}
        model = clone(empty_estimator).fit(X_train, y_train, **weights)
        return _score(scorer, model, X_valid, y_valid, scoring)
    try:
        model = clone(estimator).fit(_take_columns(X_train, columns), y_train, **fit_params)
    except ValueError as err:
        names = (X_train.columns[columns].tolist() if hasattr(X_train, "columns")
                 else columns.tolist())
        raise ValueError(
            f"the refit game fits the estimator on subsets of the columns, and "
            f"{type(estimator).__name__} could not be fitted on the columns {names} alone "
            f"({err}). The estimator must accept any subset of the columns (e.g. a "
            "ColumnTransformer that selects columns by dtype with make_column_selector, not "
            "by name); TopKShapleySelector's importance='performance' or 'mean_abs_shap' "
            "fit it once on all columns instead.") from err
    return _score(scorer, model, _take_columns(X_valid, columns), y_valid, scoring)


class RefitGame(Game):
    """Held-out score of a model refit on each coalition of columns.

    v(S) is ``scorer(clone(estimator).fit(X_train[:, S], y_train), X_valid[:, S], y_valid)``
    and v(∅) is the score of a constant prediction (``DummyRegressor(strategy="mean")`` or
    ``DummyClassifier(strategy="prior")``), so efficiency splits ``v(N) - v(∅)``, the
    score the columns add to a constant model. Values are cached by coalition (a repeated
    coalition costs no refit and is not counted again); the fits of one :meth:`values`
    call run in parallel with joblib and give the same values for any ``n_jobs``,
    provided the estimator is deterministic (fix its ``random_state``).

    Parameters
    ----------
    estimator : estimator
        Unfitted model; cloned for every coalition.
    X_train, y_train : array-like or DataFrame
        Data the clones are fitted on.
    X_valid, y_valid : array-like or DataFrame
        Held-out data they are scored on (training scores would make every column look
        useful).
    scoring : str, callable or None, default=None
        Anything :func:`sklearn.metrics.check_scoring` accepts; None uses the estimator's
        ``score`` (R² for regressors, accuracy for classifiers). Greater is better.
    n_jobs : int, optional
        Parallel fits per call (joblib; None means 1).
    cache : bool, default=True
    fit_params : dict, optional
        Passed to every refit's ``fit`` (per-row values must be those of the training
        rows); a ``sample_weight`` also weights the constant model of v(∅).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from skshapley.games import RefitGame
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)); y = 3 * X[:, 0] + 0.1 * rng.normal(size=80)
    >>> game = RefitGame(LinearRegression(), X[:60], y[:60], X[60:], y[60:])
    >>> v = game.values(np.array([[False, False], [True, False], [False, True]]))
    >>> bool(v[1] > 0.99 and v[2] < 0.1)
    True
    """

    def __init__(self, estimator, X_train, y_train, X_valid, y_valid, *, scoring=None,
                 n_jobs=None, cache=True, fit_params=None):
        n_features = np.shape(X_train)[1] if np.ndim(X_train) == 2 else 0
        if n_features < 1 or np.ndim(X_valid) != 2 or np.shape(X_valid)[1] != n_features:
            raise ValueError(
                f"X_train and X_valid must be 2-D with the same columns; got shapes "
                f"{np.shape(X_train)} and {np.shape(X_valid)}."
            )
        super().__init__(n_features, cache=cache)
        self.estimator = estimator
        self.X_train, self.y_train = X_train, y_train
        self.X_valid, self.y_valid = X_valid, y_valid
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.fit_params = {} if fit_params is None else dict(fit_params)
        self.scorer = _checked_scorer(estimator, scoring)
        self.empty_estimator = (DummyClassifier(strategy="prior") if is_classifier(estimator)
                                else DummyRegressor(strategy="mean"))

    def _values(self, coalitions):
        tasks = (
            delayed(_fit_and_score)(self.estimator, self.scorer, self.scoring, self.X_train,
                                    self.y_train, self.X_valid, self.y_valid, mask,
                                    self.empty_estimator, self.fit_params)
            for mask in coalitions
        )
        if self.n_jobs in (None, 1) or coalitions.shape[0] == 1:
            return np.array([task[0](*task[1], **task[2]) for task in tasks], dtype=np.float64)
        return np.array(Parallel(n_jobs=self.n_jobs)(tasks), dtype=np.float64)


class PerformanceGame(Game):
    """Held-out score of one fitted model with the absent columns marginalised.

    For a coalition S every validation row is repeated once per background row, with the
    columns outside S taken from that background row (the interventional game of
    :class:`MarginalGame`, applied to a score instead of a prediction); v(S) is the score
    on the stacked rows. v(∅) scores predictions that ignore the validation rows entirely.
    No model is refit, so a call costs ``n_valid * n_background`` predictions per
    coalition; it measures the fitted model's reliance on each column, not the column's
    usefulness to a new model.

    Parameters
    ----------
    estimator : fitted estimator
    X_valid, y_valid : array-like
        Rows to score on.
    background : array-like (n_background, n_features)
        Rows whose values stand in for absent columns.
    scoring : str, callable or None, default=None
        As in :class:`RefitGame`.
    feature_names : array-like of str, optional
        Call the model on DataFrames with these columns.
    decode : callable, optional
        Maps the stacked float rows to what the model takes, when ``X_valid`` and
        ``background`` are numbers standing for other values (e.g. the codes of text
        columns, as ``ShapleyExplainer.codec_`` makes them); overrides
        ``feature_names``.
    cache : bool, default=True

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from skshapley.games import PerformanceGame
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 2)); y = 3 * X[:, 0]
    >>> model = LinearRegression().fit(X, y)
    >>> game = PerformanceGame(model, X[:50], y[:50], background=X[50:60])
    >>> v = game.values(np.array([[True, False], [True, True]]))
    >>> bool(abs(v[0] - v[1]) < 1e-9 and v[1] > 0.99)
    True
    """

    def __init__(self, estimator, X_valid, y_valid, background, *, scoring=None,
                 feature_names=None, decode=None, cache=True):
        X_valid = np.asarray(X_valid, dtype=np.float64)
        background = np.asarray(background, dtype=np.float64)
        if X_valid.ndim != 2 or X_valid.shape[0] == 0:
            raise ValueError(f"X_valid must be a non-empty 2-D array; got shape {X_valid.shape}.")
        if background.ndim != 2 or background.shape[0] == 0 \
                or background.shape[1] != X_valid.shape[1]:
            raise ValueError(
                f"background must be a non-empty 2-D array with {X_valid.shape[1]} columns; "
                f"got shape {background.shape}."
            )
        super().__init__(X_valid.shape[1], cache=cache)
        self.estimator = estimator
        self.X_valid = X_valid
        self.y_valid = np.asarray(y_valid)
        self.background = background
        self.scoring = scoring
        self.feature_names = None if feature_names is None else list(feature_names)
        self.decode = decode if decode is not None or feature_names is None \
            else NamedRows(feature_names)
        self.scorer = _checked_scorer(estimator, scoring)
        n_background = background.shape[0]
        self._y_stacked = np.repeat(self.y_valid[None], n_background, axis=0).reshape(-1)

    def _stack(self, mask):
        # Row (r, i) is validation row i with the columns outside S from background row r.
        stacked = np.where(mask[None, None, :], self.X_valid[None, :, :],
                           self.background[:, None, :])
        stacked = stacked.reshape(-1, self.n_players)
        return stacked if self.decode is None else self.decode(stacked)

    def _values(self, coalitions):
        # One scorer call per coalition: a scorer takes the estimator, not predictions, so
        # the masked rows of different coalitions cannot share one model call here.
        return np.array([_score(self.scorer, self.estimator, self._stack(mask),
                                self._y_stacked, self.scoring) for mask in coalitions],
                        dtype=np.float64)
