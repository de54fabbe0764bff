"""The importances of :class:`~skshapley.selection.TopKShapleySelector`, one function per
kind: "mean_abs_shap" (an explainer's mean |phi|), LS-SPA (the "refit" game of
LinearRegression and Ridge, without refits), and the games played by top-k
identification ("refit" and "performance").

Each function reads the selector's hyperparameters, fits what it needs on the rows of
:class:`Folds`, and returns an :class:`Importance`; the selector stores it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Real
from typing import Any, NamedTuple

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LinearRegression, Ridge
from tqdm.auto import tqdm

from skshapley.approximators import (
    CMCS_WARM_UP_ROUNDS,
    bonferroni_z,
    cmcs_warm_up_evaluations,
    topk_shapley,
)
from skshapley.attribution import lsspa
from skshapley.exceptions import BudgetWarning
from skshapley.explain import ShapleyExplainer, check_missing_values_taken, model_rows
from skshapley.games import Game, PerformanceGame, RefitGame
from skshapley.utils import check_method_params

# LS-SPA enumerates all 2^p subsets up to this many features (cheap: no model fits).
_LSSPA_EXACT_MAX = 20
# Rows explained for importance="mean_abs_shap".
_SHAP_ROWS = 200


# -- the rows ---------------------------------------------------------------------------
def _rows(X, index):
    """Rows of an array or a DataFrame (a DataFrame keeps its names and dtypes)."""
    return X.iloc[index] if hasattr(X, "iloc") else X[index]


def fit_on_frame(estimator, codec, X, y, **fit_params):
    """``estimator.fit``; on a DataFrame with non-numeric columns (``codec``), a failure
    says which columns the estimator has to take."""
    try:
        return estimator.fit(X, y, **fit_params)
    except ValueError as err:
        if codec is None:
            raise
        numbers = X.select_dtypes("number")
        missing = list(numbers.columns[numbers.isna().any()])
        if missing:  # NaN reached a step that refuses it (only some columns are imputed)
            said = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise ValueError(
                f"X has NaN in the numeric columns {missing}, and the 'estimator' "
                f"{type(estimator).__name__} could not be fitted with them ({said}); impute "
                "them in its pipeline.") from err
        names = [codec.columns[j] for j in codec.encoded_columns]
        raise ValueError(
            f"The 'estimator' {type(estimator).__name__} could not be fitted on X, whose "
            f"columns {names} are not numbers ({err}); give an estimator that encodes "
            "them, e.g. a Pipeline with a OneHotEncoder.") from err


class Fold(NamedTuple):
    """The training and validation parts of one split."""

    X_train: Any
    X_valid: Any
    y_train: np.ndarray
    y_valid: np.ndarray
    fit_params: dict
    train: np.ndarray
    valid: np.ndarray


@dataclass(frozen=True)
class Folds:
    """X and y with their (train, valid) splits: one split, or the folds of ``cv``.

    ``X`` goes to the model (a DataFrame keeps its columns), ``X_checked`` is its numeric
    form (codes for non-numeric columns, ``codec``), mixed where rows are masked.
    ``fit_params`` are those given to ``fit``, for all rows.
    """

    X: Any
    X_checked: np.ndarray
    y: np.ndarray
    splits: list
    fit_params: dict
    codec: Any
    feature_names: Any

    def __len__(self):
        return len(self.splits)

    def __getitem__(self, index):
        """Rows, targets and fit params of fold ``index``: (train, valid) parts."""
        tr, va = self.splits[index]
        return Fold(_rows(self.X, tr), _rows(self.X, va), self.y[tr], self.y[va],
                    check_method_params(self.X_checked, self.fit_params, indices=tr), tr, va)

    def fit_model(self, estimator, X, y, **fit_params):
        """``estimator.fit`` on rows of X (see :func:`fit_on_frame`)."""
        return fit_on_frame(estimator, self.codec, X, y, **fit_params)

    def check_missing_values(self, estimator):
        """NaN that reaches a step of the fitted ``estimator`` refusing it is said here,
        naming the columns, not later as a failed score."""
        decode = model_rows(self.feature_names, self.codec)
        check_missing_values_taken(estimator, lambda rows: estimator.predict(decode(rows)),
                                   self.X_checked, "X")


# -- what the selector stores -----------------------------------------------------------
@dataclass(frozen=True)
class Importance:
    """Per-feature estimates behind a selection.

    ``converged`` None: the PAC rule is checked on the intervals. ``estimator`` is the
    model fitted on the first training split (``estimator_``), ``result`` the top-k run
    (``result_``) when there is one.
    """

    values: np.ndarray
    std_errors: np.ndarray
    intervals: np.ndarray
    n_evaluations: int
    converged: bool | None
    method: str
    estimator: Any
    result: Any = None


def _pooled(values, std_errors):
    """Mean over folds of per-fold values (F, d) and a standard error that counts the
    folds' spread (the error of the split) and their own errors: sqrt(between^2 +
    within^2), conservative as CV folds are not independent."""
    values, std_errors = np.asarray(values), np.asarray(std_errors)
    n_folds = values.shape[0]
    within = np.sqrt(np.sum(std_errors**2, axis=0)) / n_folds
    if n_folds == 1:
        return values[0], within
    between = values.std(axis=0, ddof=1) / np.sqrt(n_folds)
    return values.mean(axis=0), np.sqrt(between**2 + within**2)


def _pooled_importance(values, std_errors, delta, n_evaluations, method, estimator):
    """An Importance from per-fold values and errors, with simultaneous intervals at
    level ``1 - delta`` (Bonferroni over the features)."""
    values, std = _pooled(values, std_errors)
    half = bonferroni_z(delta, values.shape[0]) * std
    return Importance(values, std, np.column_stack([values - half, values + half]),
                      n_evaluations, None, method, estimator)


# -- "mean_abs_shap" --------------------------------------------------------------------
def fitted_explainer(selector, estimator, X_train, seed):
    """A ShapleyExplainer of the fitted ``estimator`` on training background rows."""
    background = min(selector.background, np.shape(X_train)[0])
    explainer = ShapleyExplainer(estimator, prefit=True, background=background,
                                 n_jobs=selector.n_jobs, random_state=seed,
                                 progress=selector.progress)
    return explainer.fit(X_train)


def _mean_abs_shap(explainer, X_valid):
    """(mean |phi| per feature, its standard error, evaluations) over up to
    ``_SHAP_ROWS`` validation rows."""
    rows = X_valid.iloc[:_SHAP_ROWS] if hasattr(X_valid, "iloc") else X_valid[:_SHAP_ROWS]
    explanation = explainer.explain(rows)
    magnitudes = np.abs(np.asarray(explanation.values, dtype=np.float64))
    if magnitudes.ndim == 3:  # several outputs: average their magnitudes
        magnitudes = magnitudes.mean(axis=2)
    values = magnitudes.mean(axis=0)
    n_rows = magnitudes.shape[0]
    # The spread over the explained rows (the sampling of rows dominates the error).
    std = (magnitudes.std(axis=0, ddof=1) / np.sqrt(n_rows) if n_rows > 1
           else np.full_like(values, np.inf))
    return values, std, int(np.sum(explanation.n_evaluations))


def mean_abs_shap_importance(selector, estimator, folds, seed, explainer=None):
    """Mean |Shapley value| of the model's predictions on each fold's validation rows,
    pooled over the folds. ``explainer``: one of the model fitted on the first training
    split, when there is one already."""
    results, fitted = [], None
    for index in range(len(folds)):
        X_tr, X_va, y_tr, _, params, _, _ = folds[index]
        if index > 0 or explainer is None:
            model = estimator if selector.prefit else folds.fit_model(
                clone(estimator), X_tr, y_tr, **params)
            folds.check_missing_values(model)
            explainer = fitted_explainer(selector, model, X_tr, seed)
        if index == 0:
            fitted = explainer.estimator  # fitted
        results.append(_mean_abs_shap(explainer, X_va))
    return _pooled_importance([r[0] for r in results], [r[1] for r in results],
                              selector.delta, sum(r[2] for r in results), "mean_abs_shap",
                              fitted)


# -- LS-SPA ("refit" of LinearRegression and Ridge) -------------------------------------
def lsspa_applies(estimator, importance, scoring):
    """Whether the "refit" game of ``estimator`` has LS-SPA's closed form."""
    # Exactly these classes: a subclass may fit something else (LS-SPA covers only them).
    if importance != "refit" or type(estimator) not in (LinearRegression, Ridge):
        return False
    if scoring not in (None, "r2") or getattr(estimator, "positive", False):
        return False
    alpha = estimator.get_params().get("alpha", 0.0)
    return isinstance(alpha, Real) and not isinstance(alpha, bool)


def _lsspa(estimator, X_train, X_valid, y_train, y_valid, seed):
    """LS-SPA values of one split (exact up to ``_LSSPA_EXACT_MAX`` features)."""
    params = estimator.get_params()
    p = np.shape(X_train)[1]
    return lsspa(np.asarray(X_train, dtype=np.float64),
                 np.asarray(X_valid, dtype=np.float64),
                 np.asarray(y_train, dtype=np.float64),
                 np.asarray(y_valid, dtype=np.float64),
                 alpha=float(params.get("alpha", 0.0)),
                 center=bool(params.get("fit_intercept", True)),
                 method="exact" if p <= _LSSPA_EXACT_MAX else "permutation",
                 random_state=seed)


def lsspa_importance(selector, estimator, folds, seed):
    """The "refit" game's Shapley values by LS-SPA (Bell et al.): least squares on the
    folds' rows, no fits of the estimator; pooled over the folds."""
    train_params = folds[0].fit_params
    if train_params:
        raise ValueError(
            f"fit params {sorted(train_params)} cannot be used with "
            f"importance='refit' and {type(estimator).__name__}: its Shapley values "
            "come from LS-SPA's own least squares, not from fits of the estimator. "
            "Wrap it in a Pipeline to refit it on column subsets with them (e.g. "
            "make_pipeline(Ridge()) with ridge__sample_weight), or use "
            "importance='performance' or 'mean_abs_shap'.")
    first = folds[0]
    fitted = estimator.fit(first.X_train, first.y_train)
    results = [_lsspa(estimator, *folds[index][:4], seed) for index in range(len(folds))]
    p = np.shape(folds.X_checked)[1]
    return _pooled_importance([r.attribution for r in results],
                              [r.std_errors for r in results], selector.delta,
                              sum(2**p if r.method == "exact" else r.n_samples * p
                                  for r in results),
                              f"lsspa_{results[0].method}", fitted)


# -- the games: "refit" and "performance" -----------------------------------------------
class _FoldAverage(Game):
    """The mean of one game per cross-validation fold (Shapley values are linear in the
    game, so its values are the mean of the folds' values)."""

    def __init__(self, games):
        super().__init__(games[0].n_players)
        self.games = games

    def _values(self, coalitions):
        return np.mean([game.values(coalitions) for game in self.games], axis=0)


class _ProgressGame(Game):
    """Forwards to a game and moves a progress bar by the evaluations made."""

    def __init__(self, game, bar):
        super().__init__(game.n_players)
        self.game, self.bar = game, bar

    def _values(self, coalitions):
        values = self.game.values(coalitions)
        self.bar.update(coalitions.shape[0])
        return values


def refit_games(selector, estimator, folds, fitted=None):
    """(model fitted on the first training split, one RefitGame per fold): the value of
    a set of columns is the validation score of a clone refit on them alone."""
    first = folds[0]
    fitted = fitted if fitted is not None else folds.fit_model(
        clone(estimator), first.X_train, first.y_train, **first.fit_params)
    folds.check_missing_values(fitted)
    games = []
    for index in range(len(folds)):
        X_tr, X_va, y_tr, y_va, params, _, _ = folds[index]
        games.append(RefitGame(estimator, X_tr, y_tr, X_va, y_va,
                               scoring=selector.scoring, n_jobs=selector.n_jobs,
                               fit_params=params))
    return fitted, games


def performance_games(selector, estimator, folds, background_seed, fitted=None):
    """(model fitted on the first training split, one PerformanceGame per fold): the
    value of a set of columns is the validation score of the fitted model with the
    others marginalised over up to ``selector.background`` training rows."""
    first = folds[0]
    fitted = (fitted if fitted is not None
              else estimator if selector.prefit
              else folds.fit_model(estimator, first.X_train, first.y_train, **first.fit_params))
    folds.check_missing_values(fitted)
    games = []
    for index in range(len(folds)):
        X_tr, _, y_tr, y_va, params, tr, va = folds[index]
        model = fitted if index == 0 else folds.fit_model(clone(estimator), X_tr, y_tr, **params)
        # masked rows are mixed as numbers (codes for non-numeric columns),
        # and the model is called on what they stand for
        background = folds.X_checked[tr]
        if background.shape[0] > selector.background:
            rows = np.sort(np.random.RandomState(background_seed).choice(
                background.shape[0], selector.background, replace=False))
            background = background[rows]
        games.append(PerformanceGame(
            model, folds.X_checked[va], y_va, background, scoring=selector.scoring,
            decode=model_rows(folds.feature_names, folds.codec)))
    return fitted, games


def game_importance(selector, games, k, method, max_evals, seed, estimator, stacklevel):
    """Top-k identification on the mean of the folds' games, within ``max_evals``
    evaluations. A budget within the CMCS warm-up warns (``stacklevel`` counted from
    the caller of this function)."""
    n_players = games[0].n_players
    warm_up = cmcs_warm_up_evaluations(n_players)
    if method in ("cmcs_at_k", "greedy_cmcs") and max_evals <= warm_up:
        # Within the warm-up of full rounds the adaptive methods are plain CMCS.
        warnings.warn(
            f"max_evals={max_evals} is within the warm-up of method={method!r} "
            f"({CMCS_WARM_UP_ROUNDS} rounds of {n_players + 1} evaluations = {warm_up}), "
            "so it runs as plain CMCS and cannot certify the set; increase max_evals.",
            BudgetWarning, stacklevel=stacklevel + 1)
    game = games[0] if len(games) == 1 else _FoldAverage(games)
    with tqdm(total=max_evals, disable=not selector.progress, desc="Evaluating coalitions",
              unit="eval") as bar:
        played = _ProgressGame(game, bar) if selector.progress else game
        result = topk_shapley(played, k, method=method, budget=max_evals, pac_stop=True,
                              delta=selector.delta, epsilon=selector.epsilon,
                              random_state=seed)
    return Importance(result.values, result.std_errors, result.confidence_intervals,
                      result.n_evaluations, result.pac_satisfied, result.method, estimator,
                      result)
