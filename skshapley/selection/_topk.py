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
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv, train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, check_X_y

from skshapley.approximators import cmcs_warm_up_evaluations, order_players, pac_rule_holds
from skshapley.exceptions import ConvergenceWarning
from skshapley.explain import ColumnCodec
from skshapley.selection._importance import (
    Folds,
    Importance,
    fitted_explainer,
    game_importance,
    lsspa_applies,
    lsspa_importance,
    mean_abs_shap_importance,
    performance_games,
    refit_games,
)
from skshapley.utils import (
    HasMethods,
    Interval,
    StrOptions,
    as_pandas_frame,
    finite_policy,
    fit_context,
    restored_on_failure,
    takes_missing_values,
    validate_data,
)

IMPORTANCES = ("auto", "refit", "performance", "mean_abs_shap")
# importance="auto" with a model that only sampling can explain refits it on column
# subsets within about this many seconds (the budget is cut to SECONDS / the time of the
# training-split fit and its validation score): a grid search fits the selector once
# per candidate and fold, and the previous default (1,860 refits at 30 columns) took
# 200 s per fit of a LogisticRegression on breast_cancer
# (benchmarks/results/topk_cost.md). The warm-up of CMCS@K needs
# cmcs_warm_up_evaluations(d) = 30 (d + 1) evaluations to certify anything; a fit that
# ends uncertified warns.
AUTO_REFIT_SECONDS = 5.0
SELECTOR_METHODS = ("cmcs_at_k", "greedy_cmcs", "cmcs", "sampling_shap_at_k", "regression",
                    "exact")
# Fewest rows that leave two rows in each of the training and validation splits.
_MIN_SAMPLES = 8


def default_max_evals(n_features: int) -> int:
    """The budget ``max_evals="auto"`` means: 2^d when that is at most 60 (d + 1) (then
    enumeration is cheaper than sampling, and exact), else 60 (d + 1): the 30 warm-up
    rounds of CMCS@K (:func:`~skshapley.approximators.cmcs_warm_up_evaluations`) and as
    many evaluations again for the rounds at the cut.

    Examples
    --------
    >>> from skshapley.selection import default_max_evals
    >>> default_max_evals(4), default_max_evals(40)
    (16, 2460)
    """
    sampled = 2 * cmcs_warm_up_evaluations(n_features)
    return 2**n_features if n_features < 30 and 2**n_features <= sampled else sampled


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
        """Checks, the splits, the importance ("auto" resolved), its estimates, the
        selection."""
        self._check_params(y)
        X, X_checked, y_checked, codec = self._check_X_y(X, y)
        n_samples, n_features = X_checked.shape
        k = self._resolve_k(n_features)
        self._check_prefit(n_features, fit_params)
        self._check_n_samples(n_samples)
        max_evals = (default_max_evals(n_features) if self.max_evals == "auto"
                     else int(self.max_evals))
        method = self._method_for(max_evals, n_features)
        rng = check_random_state(self.random_state)
        split_seed, model_seed, sampling_seed = (int(s) for s in
                                                 rng.randint(np.iinfo(np.int32).max, size=3))
        estimator = self._prepared_estimator(model_seed)
        # Features go to the model as given: a DataFrame keeps its column names.
        folds = Folds(X if hasattr(X, "iloc") else X_checked, X_checked, y_checked,
                      self._splits(X_checked, y_checked, split_seed), fit_params, codec,
                      getattr(self, "feature_names_in_", None))
        self.k_ = k
        self.result_ = None
        importance, max_evals, method, fitted, explainer = self._resolve_importance(
            estimator, folds, max_evals, method, sampling_seed)
        self.importance_ = importance
        self.max_evals_ = max_evals
        if importance == "mean_abs_shap":
            found = mean_abs_shap_importance(self, estimator, folds, sampling_seed,
                                             explainer)
        elif codec is None and lsspa_applies(estimator, importance, self.scoring):
            found = lsspa_importance(self, estimator, folds, sampling_seed)
        else:
            if importance == "refit":
                fitted, games = refit_games(self, estimator, folds, fitted)
            else:
                fitted, games = performance_games(self, estimator, folds, split_seed, fitted)
            # a warm-up warning points at fit's caller: _fit, fit, fit_context, caller
            found = game_importance(self, games, k, method, max_evals, sampling_seed, fitted,
                                    stacklevel=4)
        self._store(found)
        if self.cv is not None:  # the model kept is fitted on every row, as RFECV's
            self.estimator_ = folds.fit_model(clone(estimator), folds.X, folds.y,
                                              **fit_params)
        self._set_selection()
        if not self.converged_:  # _warn_not_certified, _fit, fit, fit_context, caller
            self._warn_not_certified(k, importance, stacklevel=5)
        return self

    def _check_params(self, y):
        """What the parameter constraints cannot say, and that y is given."""
        # True is an Integral (k=True was taken as 1)
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

    def _check_X_y(self, X, y):
        """(X as the model gets it, its numeric form, y, the ColumnCodec or None).

        A DataFrame with text, categorical, bool or date columns goes to the model as it
        is; its codes (ColumnCodec) stand for it where rows are mixed (performance). A
        polars or pyarrow frame goes as pandas: rows and columns are picked with iloc.
        """
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
        return X, X_checked, y_checked, codec

    def _check_prefit(self, n_features, fit_params):
        """With ``prefit``: an importance without refits, a fitted estimator of as many
        features, no fit params and no cv."""
        if self.prefit and self.importance == "refit":
            raise ValueError(
                "prefit=True needs importance='performance' or 'mean_abs_shap'; "
                "importance='refit' refits clones of the estimator on column subsets."
            )
        if not self.prefit:
            return
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
        if self.cv is not None:
            raise ValueError(
                f"cv={self.cv!r} needs prefit=False: the folds fit the estimator on their "
                "training rows; a prefit estimator is scored on all of X.")

    def _check_n_samples(self, n_samples):
        """Enough rows for a training and a validation split (without ``prefit``)."""
        if self.prefit:
            return
        if n_samples < _MIN_SAMPLES:
            raise ValueError(
                f"{type(self).__name__} holds out a validation split and needs at least "
                f"{_MIN_SAMPLES} samples; got n_samples={n_samples}."
            )
        if self.cv is None:
            self._check_validation_size(n_samples)

    def _prepared_estimator(self, model_seed):
        """The estimator (a clone unless ``prefit``), seeded where its random_state is
        None: a deterministic model makes v a function of the coalition."""
        estimator = self.estimator if self.prefit else clone(self.estimator)
        params = estimator.get_params() if hasattr(estimator, "get_params") else {}
        if not self.prefit and "random_state" in params and params["random_state"] is None:
            estimator.set_params(random_state=model_seed)
        return estimator

    def _splits(self, X_checked, y, split_seed):
        """[(train, valid)] row indices: all rows twice with ``prefit``, one split of
        ``validation_size``, or the folds of ``cv``."""
        n_samples = X_checked.shape[0]
        if self.prefit:
            return [(np.arange(n_samples), np.arange(n_samples))]
        if self.cv is None:
            return [self._split(np.arange(n_samples), y, split_seed)]
        folds = check_cv(self.cv, y, classifier=is_classifier(self.estimator))
        return list(folds.split(X_checked, y))

    def _resolve_importance(self, estimator, folds, max_evals, method, seed):
        """(importance, max_evals, method, fitted, explainer): ``importance="auto"``
        resolved, with the budget it leaves and what it fitted on the first training
        split (else None) to keep.

        LS-SPA where it applies; else the model is fitted once, and timed: a tree or
        linear explainer gives "mean_abs_shap", ``prefit`` "performance", and otherwise
        "refit" within about ``AUTO_REFIT_SECONDS`` of evaluations.
        """
        if self.importance != "auto":
            return self.importance, max_evals, method, None, None
        first = folds[0]
        if not self.prefit and folds.codec is None and not first.fit_params \
                and lsspa_applies(estimator, "refit", self.scoring):
            return "refit", max_evals, method, None, None
        fitted, evaluation_seconds = self._timed_evaluation(estimator, folds)
        try:
            explainer = fitted_explainer(self, fitted, first.X_train, seed)
        except ValueError:  # not explainable as given: a game that needs no explainer
            explainer = None
        if explainer is not None and explainer.method_ in ("tree", "linear"):
            return "mean_abs_shap", max_evals, method, fitted, explainer
        if self.prefit:
            return "performance", max_evals, method, fitted, None
        if self.max_evals == "auto":
            n_features = folds.X_checked.shape[1]
            affordable = int(AUTO_REFIT_SECONDS / max(evaluation_seconds, 1e-6))
            max_evals = max(2 * (n_features + 1), min(max_evals, affordable))
            method = self._method_for(max_evals, n_features)
        return "refit", max_evals, method, fitted, None

    def _timed_evaluation(self, estimator, folds):
        """(the model fitted on the first training split, seconds of one game evaluation:
        that fit and its validation score); with ``prefit`` the estimator, unscored."""
        first = folds[0]
        start = time.perf_counter()
        fitted = (estimator if self.prefit
                  else folds.fit_model(clone(estimator), first.X_train, first.y_train,
                                       **first.fit_params))
        evaluation_seconds = time.perf_counter() - start
        folds.check_missing_values(fitted)
        if not self.prefit:  # one game evaluation: a fit and a validation score
            start = time.perf_counter()
            check_scoring(fitted, scoring=self.scoring)(fitted, first.X_valid, first.y_valid)
            evaluation_seconds += time.perf_counter() - start
        return fitted, evaluation_seconds

    def _warn_not_certified(self, k, importance, stacklevel):
        """ConvergenceWarning: the PAC rule does not hold for the selection."""
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
            "certify it.", ConvergenceWarning, stacklevel=stacklevel)

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

    def _store(self, found: Importance):
        self.estimator_ = found.estimator
        self.result_ = found.result
        self.shapley_values_ = np.asarray(found.values, dtype=np.float64)
        self.std_errors_ = np.asarray(found.std_errors, dtype=np.float64)
        self.confidence_intervals_ = np.asarray(found.intervals, dtype=np.float64)
        self.n_evaluations_ = int(found.n_evaluations)
        self.method_ = found.method
        converged = found.converged
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

