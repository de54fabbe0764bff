"""``TopKShapleySelector``: keep the k features with the largest Shapley values of a
global game, found by top-k identification (see the user guide, "Selecting the top k
features by Shapley value")."""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.feature_selection import SelectorMixin
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv, train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, check_X_y
from tqdm.auto import tqdm

from skshapley.approximators import topk_shapley
from skshapley.approximators._topk import bonferroni_z, order_players, pac_rule_holds
from skshapley.attribution import lsspa
from skshapley.exceptions import BudgetWarning, ConvergenceWarning
from skshapley.explain import ShapleyExplainer
from skshapley.explain._columns import ColumnCodec, check_missing_values_taken, model_rows
from skshapley.games import Game, PerformanceGame, RefitGame
from skshapley.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    check_method_params,
    fit_context,
    validate_data,
)
from skshapley.utils._state import restored_on_failure
from skshapley.utils._validation import as_pandas_frame, finite_policy, takes_missing_values

IMPORTANCES = ("auto", "refit", "performance", "mean_abs_shap")
# importance="auto" with a model that only sampling can explain refits it on column
# subsets within about this many seconds (the budget is cut to SECONDS / the time of the
# training-split fit and its validation score): a grid search fits the selector once
# per candidate and fold, and the previous default (1,860 refits at 30 columns) took
# 200 s per fit of a LogisticRegression on breast_cancer
# (benchmarks/results/topk_cost.md). The warm-up of CMCS@K needs 30 (d + 1)
# evaluations to certify anything; a fit that ends uncertified warns.
AUTO_REFIT_SECONDS = 5.0
SELECTOR_METHODS = ("cmcs_at_k", "greedy_cmcs", "cmcs", "sampling_shap_at_k", "regression",
                    "exact")
# Fewest rows that leave two rows in each of the training and validation splits.
_MIN_SAMPLES = 8
# LS-SPA enumerates all 2^p subsets up to this many features (cheap: no model fits).
_LSSPA_EXACT_MAX = 20
# Rows explained for importance="mean_abs_shap".
_SHAP_ROWS = 200


def _rows(X, index):
    """Rows of an array or a DataFrame (a DataFrame keeps its names and dtypes)."""
    return X.iloc[index] if hasattr(X, "iloc") else X[index]


def _fit_on_frame(estimator, codec, X, y, **fit_params):
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


def default_max_evals(n_features: int) -> int:
    """The budget ``max_evals="auto"`` means: 2^d when that is at most 60 (d + 1) (then
    enumeration is cheaper than sampling, and exact), else 60 (d + 1): the 30 warm-up
    rounds of CMCS@K and as many evaluations again for the rounds at the cut.

    Examples
    --------
    >>> from skshapley.selection import default_max_evals
    >>> default_max_evals(4), default_max_evals(40)
    (16, 2460)
    """
    sampled = 60 * (n_features + 1)
    return 2**n_features if n_features < 30 and 2**n_features <= sampled else sampled


class _ProgressGame(Game):
    """Forwards to a game and moves a progress bar by the evaluations made."""

    def __init__(self, game, bar):
        super().__init__(game.n_players)
        self.game, self.bar = game, bar

    def _values(self, coalitions):
        values = self.game.values(coalitions)
        self.bar.update(coalitions.shape[0])
        return values


class _FoldAverage(Game):
    """The mean of one game per cross-validation fold (Shapley values are linear in the
    game, so its values are the mean of the folds' values)."""

    def __init__(self, games):
        super().__init__(games[0].n_players)
        self.games = games

    def _values(self, coalitions):
        return np.mean([game.values(coalitions) for game in self.games], axis=0)


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


def _lsspa_applies(estimator, importance, scoring):
    # Exactly these classes: a subclass may fit something else (LS-SPA covers only them).
    if importance != "refit" or type(estimator) not in (LinearRegression, Ridge):
        return False
    if scoring not in (None, "r2") or getattr(estimator, "positive", False):
        return False
    alpha = estimator.get_params().get("alpha", 0.0)
    return isinstance(alpha, Real) and not isinstance(alpha, bool)


class TopKShapleySelector(SelectorMixin, BaseEstimator):
    """Select the k features with the largest Shapley values of a global game.

    The players are the input columns. With ``importance="refit"`` (the default, the game
    of Kolpaczki et al. [1]_) the value of a set S of columns is the validation score of
    the estimator refit on S alone; top-k identification (CMCS@K by default) then spends
    model fits on the features near the cut and stops once the chosen set is certified:
    with probability about ``1 - delta`` no chosen feature's Shapley value is more than
    ``epsilon`` below an unchosen one's (the PAC rule of SHAP@K, Kariyappa et al. 2024).
    "About": the rule rests on the normal approximation of the features' mean marginal
    contributions, and a rare large contribution that no sample has seen cannot be
    detected (see ``delta`` of :func:`~skshapley.approximators.topk_shapley`).

    Parameters
    ----------
    estimator : estimator
        The model. Cloned and refit per coalition ("refit"), or fitted once on the
        training split ("performance", "mean_abs_shap"; used as is with ``prefit``).
    k : int or float, default=10
        Features to keep; a float in (0, 1) is a fraction of the features (at least one,
        rounded down). ``k`` larger than the number of features raises ``ValueError``.
    importance : {"auto", "refit", "performance", "mean_abs_shap"}, default="auto"
        The game. "auto": "refit" by LS-SPA for LinearRegression and Ridge (exact, no
        model fits); "mean_abs_shap" for a model whose Shapley values have a closed form
        (linear models, tree ensembles and Pipelines ending in them: no model calls
        beyond predictions); otherwise "refit" with ``max_evals="auto"`` cut to about
        5 s of refits (``AUTO_REFIT_SECONDS``, from the time of the fit on the training
        split and its score), or "performance" with ``prefit``. ``importance_`` says which ran.
        "refit": validation score of a clone refit on the coalition's columns, v(∅) the
        score of a constant prediction; LinearRegression and Ridge use LS-SPA
        (exact up to 20 features) instead of refits. "performance": validation score
        of the fitted model with the absent columns marginalised over ``background``
        rows (no refits; measures reliance, not usefulness). "mean_abs_shap": mean
        |Shapley value| of the model's predictions over up to 200 validation rows
        (:class:`~skshapley.ShapleyExplainer`); it is not one game's Shapley value, so the
        PAC guarantee does not apply and ``method`` is ignored.
    method : {"cmcs_at_k", "greedy_cmcs", "cmcs", "sampling_shap_at_k", "regression", \
"exact"}, default="cmcs_at_k"
        Top-k identification algorithm (see :func:`skshapley.approximators.topk_shapley`).
        "regression" spends all of ``max_evals`` on the library's estimator of every
        value and keeps the top k: no early stop and no certificate unless its intervals
        separate at the end, but the smallest error at a fixed budget of small games
        (``benchmarks/results/topk.md``). Whenever ``max_evals >= 2**n_features``
        enumeration is cheaper and is used.
    max_evals : int or "auto", default="auto"
        Most game evaluations (model fits for "refit"), v(∅) and v(N) included; the run
        stops earlier when the PAC rule holds. "auto": see :func:`default_max_evals`.
    delta : float, default=0.01
        Confidence parameter of the intervals and of the PAC rule.
    epsilon : float, default=5e-4
        Tolerance of the PAC rule, in score units.
    scoring : str, callable or None, default=None
        Validation score (:func:`sklearn.metrics.check_scoring`; greater is better).
        None: the estimator's ``score``.
    background : int, default=100
        Rows of the training split that stand in for absent columns ("performance",
        "mean_abs_shap").
    validation_size : float, default=0.25
        Fraction of the rows held out to score on (stratified for classifiers when every
        class has two rows); ``ceil(validation_size * n_samples)`` rows, which must leave
        at least 2 rows in each split.
    cv : None, int, cross-validation generator or iterable, default=None
        None: one validation split of ``validation_size``. Otherwise the folds of
        :func:`sklearn.model_selection.check_cv` (stratified for classifiers, as in
        ``RFECV``): the game is the mean of the folds' games, each scored on its held-out
        rows, so the choice does not rest on one split; with LS-SPA and
        "mean_abs_shap" the standard errors count the folds' spread too (for sampled
        games, the sampling error of the mean game). Costs one game per fold.
    prefit : bool, default=False
        ``estimator`` is already fitted ("performance" and "mean_abs_shap" only; an
        unfitted one raises ``NotFittedError``); all of X is then used for validation.
    n_jobs : int, optional
        Parallel refits per batch (joblib); results do not depend on it.
    random_state : None, int or RandomState
        Seeds the split, the estimator's own ``random_state`` when it is None, and the
        sampling. Fix it for reproducible selections.
    progress : bool, default=False
        Show a tqdm progress bar over game evaluations.

    Attributes
    ----------
    support_ : ndarray of bool (n_features,)
        The chosen features.
    ranking_ : ndarray of int (n_features,)
        Rank of each feature by its estimate (1 = largest; ties: lower index first).
    shapley_values_ : ndarray (n_features,)
        Estimated Shapley values (signed), or mean |phi| for "mean_abs_shap".
    std_errors_ : ndarray (n_features,)
        Their standard errors (0 when exact).
    confidence_intervals_ : ndarray (n_features, 2)
        Simultaneous intervals at level ``1 - delta`` (Bonferroni over features).
    n_evaluations_ : int
        Game evaluations used, v(∅) and v(N) counted once (for "refit": requested refits; a
        repeated coalition is served from the cache and counted again).
    converged_ : bool
        Whether the PAC rule holds for the returned set.
    k_ : int
        The number of features kept.
    importance_ : str
        The game that was played: "refit", "performance" or "mean_abs_shap" ("auto"
        resolved).
    method_ : str
        What ran: a method name, "exact", "lsspa_exact", "lsspa_permutation" or
        "mean_abs_shap".
    max_evals_ : int
        The budget used.
    estimator_ : estimator
        The model fitted on the training split (on all rows with ``cv``; ``estimator``
        itself with ``prefit``).
    result_ : TopKResult or None
        The top-k run behind the selection (None for LS-SPA and "mean_abs_shap").
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    See Also
    --------
    skshapley.approximators.topk_shapley : the functional core.
    sklearn.feature_selection.SelectFromModel : selection by impurity or coefficients.

    Notes
    -----
    Shapley values share credit among correlated features, so the top k by Shapley value
    is not the best subset of size k: two redundant features may both be kept or both be
    dropped (see the user guide, "Selecting the top k features by Shapley value").

    References
    ----------
    .. [1] P. Kolpaczki, T. Nielen and E. Hüllermeier, "Antithetic sampling for top-k
       Shapley identification" (CMCS, Greedy CMCS, CMCS@K; Table 1).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from skshapley import TopKShapleySelector
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5)); y = X @ [3.0, 0.0, 2.0, 0.0, 0.1]
    >>> selector = TopKShapleySelector(LinearRegression(), k=2, random_state=0).fit(X, y)
    >>> selector.get_support().tolist(), selector.method_
    ([True, False, True, False, False], 'lsspa_exact')
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "k": [Interval(Integral, 1, None, closed="left"),
              Interval(Real, 0, 1, closed="neither")],
        "importance": [StrOptions(set(IMPORTANCES))],
        "method": [StrOptions(set(SELECTOR_METHODS))],
        "max_evals": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "scoring": [str, callable, None],
        "background": [Interval(Integral, 1, None, closed="left")],
        "validation_size": [Interval(Real, 0, 1, closed="neither")],
        "cv": ["cv_object", None],
        "prefit": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "progress": ["boolean"],
    }

    def __init__(self, estimator, *, k=10, importance="auto", method="cmcs_at_k",
                 max_evals="auto", delta=0.01, epsilon=5e-4, scoring=None, background=100,
                 validation_size=0.25, cv=None, prefit=False, n_jobs=None,
                 random_state=None, progress=False):
        self.estimator = estimator
        self.k = k
        self.importance = importance
        self.method = method
        self.max_evals = max_evals
        self.delta = delta
        self.epsilon = epsilon
        self.scoring = scoring
        self.background = background
        self.validation_size = validation_size
        self.cv = cv
        self.prefit = prefit
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = takes_missing_values(self.estimator)
        return tags

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, **fit_params):
        """Find the top-k features of ``X`` for predicting ``y``.

        Parameters
        ----------
        X : array-like or DataFrame (n_samples, n_features)
            Numeric features, or a DataFrame, passed on to the estimator as it is (subsets
            of its columns for refits). A DataFrame may have text, categorical, bool and
            date columns, each one feature, when the estimator takes them (e.g. a
            Pipeline that encodes them); importance="performance" mixes rows through
            their codes, as ``ShapleyExplainer`` does. A polars DataFrame or pyarrow
            Table is read as the pandas DataFrame it converts to.
        y : array-like (n_samples,)
        **fit_params
            Passed to every ``fit`` of the estimator: the fit on the training split and,
            for "refit", each refit on a subset of the columns (``sample_weight`` also
            weights the constant model of v(∅)). Per-row values (array-likes of length
            n_samples, e.g. ``sample_weight``) are indexed with the training rows, as in
            scikit-learn's cross-validation. ``ValueError`` where none can be used: with
            ``prefit=True`` (no fit) and where LinearRegression or Ridge run LS-SPA
            (its own least squares; wrap them in a Pipeline to refit with fit params).

        Returns
        -------
        self : TopKShapleySelector
        """
        # A failed fit leaves a fitted selector as it was (validate_data sets
        # n_features_in_ before the later checks can fail).
        with restored_on_failure(self):
            return self._fit(X, y, **fit_params)

    # -- fit, step by step --------------------------------------------------------------
    def _fit(self, X, y, **fit_params):
        # what the constraints cannot say: True is an Integral (k=True was taken as 1)
        if isinstance(self.k, bool):
            raise ValueError(
                "The 'k' parameter of TopKShapleySelector must be an int in the range "
                "[1, inf) (the number of features to keep) or a float in the range "
                f"(0.0, 1.0) (the fraction of them); got {self.k!r}."
            )
        if isinstance(self.background, bool):
            raise ValueError(
                "The 'background' parameter of TopKShapleySelector must be an int >= 1 "
                f"(rows of the training split); got {self.background!r}."
            )
        if self.n_jobs == 0 or isinstance(self.n_jobs, bool):
            raise ValueError(
                "The 'n_jobs' parameter of TopKShapleySelector must be a non-zero int (-1: "
                f"all cores) or None; got {self.n_jobs!r}."
            )
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None; "
                "the features are ranked by how much they help predict y."
            )
        # A DataFrame with text, categorical, bool or date columns goes to the model as it
        # is; its codes (ColumnCodec) stand for it where rows are mixed (performance). A
        # polars or pyarrow frame goes as pandas: rows and columns are picked with iloc.
        X = as_pandas_frame(X)
        codec = ColumnCodec.from_frame(X)
        finite = finite_policy(self.estimator)
        if codec is None:
            X_checked, y_checked = validate_data(self, X, y, dtype=np.float64,
                                                 ensure_all_finite=finite, y_numeric=False)
        else:
            validate_data(self, X, skip_check_array=True)  # names and count only
            codec, codes = codec.encode(X)
            # the codes' own NaN rule first, then y as validate_data would check it
            X_checked, y_checked = check_X_y(codec.checked(codes, finite, "X"), y,
                                             ensure_all_finite="allow-nan")
        n_samples, n_features = X_checked.shape
        k = self._resolve_k(n_features)
        if self.prefit and self.importance == "refit":
            raise ValueError(
                "prefit=True needs importance='performance' or 'mean_abs_shap'; "
                "importance='refit' refits clones of the estimator on column subsets."
            )
        if self.prefit:
            check_is_fitted(self.estimator, msg=(
                "prefit=True needs a fitted 'estimator', but this %(name)s instance is not "
                "fitted yet; fit it first, or set prefit=False to fit it on a training "
                "split."))
            if fit_params:
                raise ValueError(
                    f"fit params {sorted(fit_params)} are not used with prefit=True: the "
                    "'estimator' is already fitted and is not fitted again; fit it with "
                    "them yourself, or set prefit=False.")
            fitted_features = getattr(self.estimator, "n_features_in_", n_features)
            if fitted_features != n_features:
                raise ValueError(
                    f"X has {n_features} features, but the prefit 'estimator' "
                    f"{type(self.estimator).__name__} was fitted on {fitted_features}; "
                    "pass the columns it was fitted on, or set prefit=False.")
        if n_samples < _MIN_SAMPLES and not self.prefit:
            raise ValueError(
                f"{type(self).__name__} holds out a validation split and needs at least "
                f"{_MIN_SAMPLES} samples; got n_samples={n_samples}."
            )
        if self.prefit and self.cv is not None:
            raise ValueError(
                f"cv={self.cv!r} needs prefit=False: the folds fit the estimator on their "
                "training rows; a prefit estimator is scored on all of X.")
        if not self.prefit and self.cv is None:
            self._check_validation_size(n_samples)
        max_evals = (default_max_evals(n_features) if self.max_evals == "auto"
                     else int(self.max_evals))
        method = self._method_for(max_evals, n_features)
        rng = check_random_state(self.random_state)
        split_seed, model_seed, sampling_seed = (int(s) for s in
                                                 rng.randint(np.iinfo(np.int32).max, size=3))
        estimator = self.estimator if self.prefit else clone(self.estimator)
        params = estimator.get_params() if hasattr(estimator, "get_params") else {}
        if not self.prefit and "random_state" in params and params["random_state"] is None:
            # A deterministic model makes v a function of the coalition.
            estimator.set_params(random_state=model_seed)
        # Features go to the model as given: a DataFrame keeps its column names.
        X_model = X if hasattr(X, "iloc") else X_checked
        y_model = y_checked
        if self.prefit:
            splits = [(np.arange(n_samples), np.arange(n_samples))]
        elif self.cv is None:
            splits = [self._split(np.arange(n_samples), y_model, split_seed)]
        else:
            folds = check_cv(self.cv, y_model, classifier=is_classifier(self.estimator))
            splits = list(folds.split(X_checked, y_model))
        all_fit_params = fit_params
        train = splits[0][0]
        X_train, y_train = _rows(X_model, train), y_model[train]
        # every fit is on the training rows, so per-row fit params (sample_weight) are too
        fit_params = check_method_params(X_checked, all_fit_params, indices=train)

        def fold(index):
            """Rows, targets and fit params of fold ``index``: (train, valid) parts."""
            tr, va = splits[index]
            return (_rows(X_model, tr), _rows(X_model, va), y_model[tr], y_model[va],
                    check_method_params(X_checked, all_fit_params, indices=tr), tr, va)

        self.k_ = k
        self.result_ = None
        importance, explainer, fitted = self.importance, None, None
        if importance == "auto":
            if not self.prefit and codec is None and not fit_params \
                    and _lsspa_applies(estimator, "refit", self.scoring):
                importance = "refit"
            else:
                # fitted once here, and kept for whichever game is played
                start = time.perf_counter()
                fitted = (estimator if self.prefit
                          else _fit_on_frame(clone(estimator), codec, X_train, y_train,
                                             **fit_params))
                evaluation_seconds = time.perf_counter() - start
                self._check_missing_values(fitted, X_checked, codec)
                if not self.prefit:  # one game evaluation: a fit and a validation score
                    start = time.perf_counter()
                    check_scoring(fitted, scoring=self.scoring)(
                        fitted, _rows(X_model, splits[0][1]), y_model[splits[0][1]])
                    evaluation_seconds += time.perf_counter() - start
                try:
                    explainer = self._explainer(fitted, X_train, sampling_seed)
                except ValueError:  # not explainable as given: a game that needs no explainer
                    explainer = None
                if explainer is not None and explainer.method_ in ("tree", "linear"):
                    importance = "mean_abs_shap"
                elif self.prefit:
                    importance, explainer = "performance", None
                else:
                    importance, explainer = "refit", None
                    if self.max_evals == "auto":
                        affordable = int(AUTO_REFIT_SECONDS
                                         / max(evaluation_seconds, 1e-6))
                        max_evals = max(2 * (n_features + 1), min(max_evals, affordable))
                        method = self._method_for(max_evals, n_features)
        self.importance_ = importance
        self.max_evals_ = max_evals
        if importance == "mean_abs_shap":
            results = []
            for index in range(len(splits)):
                X_tr, X_va, y_tr, _, params, _, _ = fold(index)
                if index > 0 or explainer is None:
                    model = estimator if self.prefit else _fit_on_frame(
                        clone(estimator), codec, X_tr, y_tr, **params)
                    self._check_missing_values(model, X_checked, codec)
                    explainer = self._explainer(model, X_tr, sampling_seed)
                if index == 0:
                    self.estimator_ = explainer.estimator  # fitted
                results.append(self._mean_abs_shap(explainer, X_va))
            values, std = _pooled([r[0] for r in results], [r[1] for r in results])
            half = self._z(values.shape[0]) * std
            self._store(values, std, np.column_stack([values - half, values + half]),
                        sum(r[2] for r in results), None, "mean_abs_shap")
        elif codec is None and _lsspa_applies(estimator, importance, self.scoring):
            if fit_params:
                raise ValueError(
                    f"fit params {sorted(fit_params)} cannot be used with "
                    f"importance='refit' and {type(estimator).__name__}: its Shapley values "
                    "come from LS-SPA's own least squares, not from fits of the estimator. "
                    "Wrap it in a Pipeline to refit it on column subsets with them (e.g. "
                    "make_pipeline(Ridge()) with ridge__sample_weight), or use "
                    "importance='performance' or 'mean_abs_shap'.")
            self.estimator_ = estimator.fit(X_train, y_train)
            results = [self._lsspa(estimator, *fold(index)[:4], sampling_seed)
                       for index in range(len(splits))]
            values, std = _pooled([r.attribution for r in results],
                                  [r.std_errors for r in results])
            half = self._z(values.shape[0]) * std
            p = values.shape[0]
            self._store(values, std, np.column_stack([values - half, values + half]),
                        sum(2**p if r.method == "exact" else r.n_samples * p
                            for r in results),
                        None, f"lsspa_{results[0].method}")
        else:
            if importance == "refit":
                self.estimator_ = fitted if fitted is not None else _fit_on_frame(
                    clone(estimator), codec, X_train, y_train, **fit_params)
                self._check_missing_values(self.estimator_, X_checked, codec)
                games = []
                for index in range(len(splits)):
                    X_tr, X_va, y_tr, y_va, params, _, _ = fold(index)
                    games.append(RefitGame(estimator, X_tr, y_tr, X_va, y_va,
                                           scoring=self.scoring, n_jobs=self.n_jobs,
                                           fit_params=params))
            else:
                self.estimator_ = (fitted if fitted is not None
                                   else estimator if self.prefit
                                   else _fit_on_frame(estimator, codec, X_train, y_train,
                                                      **fit_params))
                self._check_missing_values(self.estimator_, X_checked, codec)
                games = []
                for index in range(len(splits)):
                    X_tr, _, y_tr, y_va, params, tr, va = fold(index)
                    model = self.estimator_ if index == 0 else _fit_on_frame(
                        clone(estimator), codec, X_tr, y_tr, **params)
                    # masked rows are mixed as numbers (codes for non-numeric columns),
                    # and the model is called on what they stand for
                    background = X_checked[tr]
                    if background.shape[0] > self.background:
                        rows = np.sort(np.random.RandomState(split_seed).choice(
                            background.shape[0], self.background, replace=False))
                        background = background[rows]
                    games.append(PerformanceGame(
                        model, X_checked[va], y_va, background, scoring=self.scoring,
                        decode=model_rows(getattr(self, "feature_names_in_", None), codec)))
            game = games[0] if len(games) == 1 else _FoldAverage(games)
            self._fit_game(game, k, method, max_evals, sampling_seed)
        if self.cv is not None:  # the model kept is fitted on every row, as RFECV's
            self.estimator_ = _fit_on_frame(clone(estimator), codec, X_model, y_model,
                                            **all_fit_params)
        self._set_selection()
        if not self.converged_:
            if importance == "mean_abs_shap":
                source, remedy = ("over the explained validation rows", "epsilon, or use "
                                  "cv= to average more rows,")
            else:
                source = f"of {self.n_evaluations_} evaluations, method_={self.method_!r}"
                remedy = "max_evals or epsilon"
            warnings.warn(
                f"The top {k} features are not certified: the intervals of the features "
                f"at the cut overlap by more than epsilon={self.epsilon} at "
                f"delta={self.delta} (PAC rule, importance={importance!r}, intervals "
                f"{source}). The selection is the best estimate; increase {remedy} to "
                "certify it.", ConvergenceWarning, stacklevel=4)
        return self

    def _method_for(self, max_evals, n_features):
        """The top-k method for a budget: enumeration whenever it fits."""
        if self.method != "exact" and max_evals < 2**n_features:
            return self.method
        if max_evals < 2**n_features:
            raise ValueError(
                f"max_evals={max_evals} is too small for method='exact' with {n_features} "
                f"features: enumeration needs 2**{n_features} = {2**n_features} "
                "evaluations; increase max_evals or use method='cmcs_at_k'."
            )
        return "exact"

    def _check_missing_values(self, estimator, X_checked, codec):
        """NaN that reaches a step of the fitted ``estimator`` refusing it is said here,
        naming the columns, not later as a failed score."""
        decode = model_rows(getattr(self, "feature_names_in_", None), codec)
        check_missing_values_taken(estimator, lambda rows: estimator.predict(decode(rows)),
                                   X_checked, "X")

    def _resolve_k(self, n_features):
        if isinstance(self.k, Integral):
            if self.k > n_features:
                raise ValueError(
                    f"The 'k' parameter must be at most the number of features "
                    f"n_features={n_features}; got k={self.k}."
                )
            return int(self.k)
        return max(1, int(np.floor(self.k * n_features)))

    def _check_validation_size(self, n_samples):
        # train_test_split holds out ceil(validation_size * n_samples) rows; a score needs
        # two of them (R² is undefined on one row), and the model two to train on.
        n_valid = int(np.ceil(self.validation_size * n_samples))
        if n_valid < 2:
            raise ValueError(
                f"validation_size={self.validation_size} holds out {n_valid} of "
                f"n_samples={n_samples} rows, but the validation score needs at least 2 "
                f"validation rows; increase validation_size to at least "
                f"{2 / n_samples:.3g}.")
        if n_samples - n_valid < 2:
            # floored, so that the suggested value itself leaves two training rows
            largest = np.floor((n_samples - 2) / n_samples * 1e4) / 1e4
            raise ValueError(
                f"validation_size={self.validation_size} holds out {n_valid} of "
                f"n_samples={n_samples} rows and leaves {n_samples - n_valid} to train on, "
                f"but at least 2 training rows are needed; decrease validation_size to at "
                f"most {largest:g}.")

    def _split(self, index, y, seed):
        """(train, valid) row indices: stratified for a classifier when every class has
        at least two rows (the same split as splitting X and y themselves)."""
        stratify = None
        if is_classifier(self.estimator):
            _, counts = np.unique(y, return_counts=True)
            if counts.size > 1 and counts.min() >= 2:
                stratify = y
        try:
            return train_test_split(index, test_size=self.validation_size, random_state=seed,
                                    stratify=stratify)
        except ValueError:
            # Too few rows of a class for a stratified split of this size.
            return train_test_split(index, test_size=self.validation_size, random_state=seed)

    def _fit_game(self, game, k, method, max_evals, seed):
        warm_up = 30 * (game.n_players + 1)
        if method in ("cmcs_at_k", "greedy_cmcs") and max_evals <= warm_up:
            # Below the warm-up of 30 full rounds the adaptive methods are plain CMCS.
            warnings.warn(
                f"max_evals={max_evals} is within the warm-up of method={method!r} "
                f"(30 rounds of {game.n_players + 1} evaluations = {warm_up}), so it runs "
                "as plain CMCS and cannot certify the set; increase max_evals.",
                BudgetWarning, stacklevel=5)  # _fit_game, _fit, fit, fit_context, caller
        with tqdm(total=max_evals, disable=not self.progress, desc="Evaluating coalitions",
                  unit="eval") as bar:
            played = _ProgressGame(game, bar) if self.progress else game
            result = topk_shapley(played, k, method=method, budget=max_evals, pac_stop=True,
                                  delta=self.delta, epsilon=self.epsilon, random_state=seed)
        self._store(result.values, result.std_errors, result.confidence_intervals,
                    result.n_evaluations, result.pac_satisfied, result.method)
        self.result_ = result

    def _lsspa(self, estimator, X_train, X_valid, y_train, y_valid, seed):
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

    def _explainer(self, estimator, X_train, seed):
        """A ShapleyExplainer of the fitted ``estimator`` on training background rows."""
        background = min(self.background, np.shape(X_train)[0])
        explainer = ShapleyExplainer(estimator, prefit=True, background=background,
                                     n_jobs=self.n_jobs, random_state=seed,
                                     progress=self.progress)
        return explainer.fit(X_train)

    def _mean_abs_shap(self, explainer, X_valid):
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

    def _z(self, n_features):
        return bonferroni_z(self.delta, n_features)

    def _store(self, values, std_errors, intervals, n_evaluations, converged, method):
        self.shapley_values_ = np.asarray(values, dtype=np.float64)
        self.std_errors_ = np.asarray(std_errors, dtype=np.float64)
        self.confidence_intervals_ = np.asarray(intervals, dtype=np.float64)
        self.n_evaluations_ = int(n_evaluations)
        self.method_ = method
        if converged is None:
            converged = self._pac_holds()
        self.converged_ = bool(converged)

    def _pac_holds(self):
        lower, upper = self.confidence_intervals_[:, 0], self.confidence_intervals_[:, 1]
        return pac_rule_holds(self.shapley_values_, lower, upper, self.k_, self.epsilon)

    def _set_selection(self):
        order = order_players(self.shapley_values_)  # ties: lower index first
        self.support_ = np.zeros(order.shape[0], dtype=bool)
        self.support_[order[: self.k_]] = True
        self.ranking_ = np.empty(order.shape[0], dtype=np.int64)
        self.ranking_[order] = np.arange(1, order.shape[0] + 1)

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_

