"""``shapley_importance``: SAGE, the Shapley values of a fitted model's score."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy import stats
from sklearn.base import is_classifier, is_regressor
from sklearn.metrics import check_scoring
from sklearn.utils import Bunch, check_array, check_random_state
from sklearn.utils.validation import check_consistent_length, check_is_fitted

from skshapley.approximators import (
    MAX_EXACT_PLAYERS,
    default_budget,
    minimum_budget,
    shapley_values,
)
from skshapley.explain import ColumnCodec, model_rows
from skshapley.inspection._game import MarginalScoreGame
from skshapley.utils import (
    HasMethods,
    NumberInterval,
    StrOptions,
    as_pandas_frame,
    check_groups,
    finite_policy,
    validate_params,
)

# Two-sided level of the intervals in the result.
CONFIDENCE_LEVEL = 0.95


def _check_scoring(estimator, scoring):
    """The scorer; ``None`` is R² for regressors and accuracy for classifiers (the
    ``score`` of scikit-learn's mixins), which the marginalised model can compute."""
    if scoring is None:
        if is_classifier(estimator):
            scoring = "accuracy"
        elif is_regressor(estimator):
            scoring = "r2"
        else:
            raise ValueError(
                f"scoring=None means R² for a regressor and accuracy for a classifier, "
                f"and {type(estimator).__name__} is neither; pass a scorer name or "
                "callable as 'scoring'.")
    try:
        return check_scoring(estimator, scoring=scoring), scoring
    except (ValueError, TypeError) as err:
        raise ValueError(f"The 'scoring' parameter is not usable: {err}") from err


def _check_background(background, X, X_codes, codec, seed):
    """Background rows as codes (and the codec that decodes them)."""
    n_rows = X_codes.shape[0]
    if isinstance(background, Integral):
        if n_rows <= background:
            return X_codes, codec
        rows = np.sort(np.random.RandomState(seed).choice(n_rows, background, replace=False))
        return X_codes[rows], codec
    background = as_pandas_frame(background, "background")
    if codec is not None:
        if not hasattr(background, "columns"):
            raise ValueError(
                "background must be a DataFrame with X's columns when X has non-numeric "
                f"columns; got {type(background).__name__}.")
        codec, codes = codec.encode(background)
        codes = check_array(codes, dtype=np.float64, ensure_all_finite="allow-nan",
                            input_name="background")
    else:
        if hasattr(X, "columns") and hasattr(background, "columns") \
                and list(background.columns) != list(X.columns):
            raise ValueError(f"background has columns {list(background.columns)}, but X "
                             f"has {list(X.columns)}.")
        codes = check_array(background, dtype=np.float64, ensure_all_finite="allow-nan",
                            input_name="background")
    if codes.shape[1] != X_codes.shape[1]:
        raise ValueError(f"background has {codes.shape[1]} columns, but X has "
                         f"{X_codes.shape[1]}.")
    return codes, codec


@validate_params(
    {
        "estimator": [HasMethods(["predict"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "scoring": [str, callable, None],
        "groups": [dict, list, tuple, None],
        "background": [NumberInterval(Integral, 1, None, closed="left"), "array-like"],
        "max_evals": [NumberInterval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "tol": [NumberInterval(Real, 0, None, closed="neither"), None],
        # joblib's: -1 for all cores, never 0
        "n_jobs": [NumberInterval(Integral, None, -1, closed="right"),
                   NumberInterval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def shapley_importance(estimator, X, y, *, scoring=None, groups=None, background=100,
                       max_evals="auto", tol=None, n_jobs=None, random_state=None):
    """Global feature importance: the Shapley values of a fitted model's score (SAGE).

    The players are the columns of X (or groups of them). The value of a set S of
    players is the score on (X, y) of the *marginalised model* ``f_S``, which keeps the
    columns in S and averages the model's output over the background rows for the
    others: ``f_S(x) = mean_r f(x_S, (b_r)_{not S})``. This is SAGE with marginal
    imputation [1]_ (Sec. 2, where v(S) = -E[loss(f_S(X_S), Y)], and Sec. 4),
    generalised to any scikit-learn scorer. v(N) is the model's own score on (X, y)
    (a classifier's labels are the classes of largest probability, its ``predict``
    for nearly every classifier); v(∅) is the score of one constant prediction, the
    mean output over the background. A feature's value is its average gain in score
    when it joins the others, over every order in which they could join, and the
    values add up to ``full_score - baseline_score`` (efficiency). No model is refit.

    The values are exact (all 2^d coalitions) when ``max_evals`` allows it, else
    estimated from sampled orderings [2]_ (antithetic pairs, or orthogonal frames when
    at least 10 fit), with standard errors and 95 % intervals.

    Parameters
    ----------
    estimator : fitted estimator
        A regressor or a classifier (single output for classifiers), or a Pipeline
        ending in one.
    X : array-like or DataFrame (n_samples, n_features)
        Rows to score on (held-out rows, as for
        :func:`sklearn.inspection.permutation_importance`). A DataFrame may have text,
        categorical, bool and date columns when the estimator takes them; its rows are
        mixed through codes, as in :class:`~skshapley.ShapleyExplainer`.
    y : array-like (n_samples,) or (n_samples, n_outputs)
    scoring : str, callable or None, default=None
        Anything :func:`sklearn.metrics.check_scoring` accepts (greater is better), e.g.
        ``"neg_mean_squared_error"`` or ``"neg_log_loss"``, whose values are SAGE's with
        the squared error or the cross-entropy. None: R² for regressors, accuracy for
        classifiers. A callable ``scorer(estimator, X, y)`` must call the estimator on
        the X it is given.
    groups : dict, list of lists or None, default=None
        Players made of several columns: ``{"name": [columns], ...}`` or ``[[columns],
        ...]`` (named by their columns joined with "+"); a column is a name (for a
        DataFrame) or a position. Each column must be in exactly one group. None: one
        player per column.
    background : int or array-like, default=100
        Rows that stand in for absent columns: an int samples that many rows of X
        without replacement (all of X when it has fewer), or give the rows (e.g. a
        sample of the training data).
    max_evals : int or "auto", default="auto"
        Most coalition evaluations, v(∅) and v(N) included; each costs
        ``n_samples * n_background`` predictions (v(∅): ``n_background``, v(N):
        ``n_samples``). "auto": 2^d for d <= 10 players (exact), else 2 + 64 (d - 1)
        (32 antithetic pairs of orderings). From 2^d on (d <= 20) the values are
        enumerated exactly.
    tol : float, optional
        Stop sampling once the estimated 95 % quantile of the overall error
        ``||importances_mean - exact||_2`` is below ``tol`` (score units).
    n_jobs : int, optional
        Threads that evaluate chunks of coalitions (None: 1; -1: all cores). The
        values do not depend on it.
    random_state : None, int or RandomState
        Seeds the background sample and the orderings.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        With attributes

        importances_mean : ndarray (n_players,)
            The Shapley values (exact or estimated), in score units.
        importances_std : ndarray (n_players,)
            Standard deviation of one draw's estimate (a draw: an antithetic pair of
            orderings, or an orthogonal frame), as ``permutation_importance`` gives the
            spread over its repeats; 0 when exact.
        std_errors : ndarray (n_players,)
            Standard errors of ``importances_mean``: ``importances_std /
            sqrt(n_draws)``; 0 when exact, inf with one draw.
        ci_low, ci_high : ndarray (n_players,)
            Two-sided 95 % intervals, ``importances_mean -/+ t * std_errors`` with the
            t quantile of ``n_draws - 1`` degrees of freedom.
        feature_names : ndarray of str (n_players,)
            The columns' names (``x0, x1, ...`` for an array), or the groups' names.
        groups : list of ndarray
            The column positions of each player, ascending.
        full_score, baseline_score : float
            v(N), the model's score, and v(∅), the score of the mean prediction;
            ``importances_mean.sum() == full_score - baseline_score``.
        n_evaluations : int
            Coalition evaluations made.
        n_draws : int
            Independent draws behind the errors (0 when exact).
        converged : bool or None
            Whether the error fell below ``tol``; None without ``tol``.
        method : str
            "exact" or "permutation".
        scoring : str
            The scorer's name ("r2" or "accuracy" for None), or the repr of a callable.
        n_background : int
            Background rows used.
        result : ShapleyResult
            The approximator's result (its ``history`` feeds
            :func:`skshapley.plotting.convergence`).

    See Also
    --------
    sklearn.inspection.permutation_importance : drop in score when one column is
        shuffled (one column at a time, no interactions shared).
    skshapley.plotting.importance_bar : bars with the intervals.
    skshapley.TopKShapleySelector : selects the top k columns of such a game.

    Notes
    -----
    The errors and intervals are those of sampling orderings only: the values are
    those of the rows of X and of the background given, not of the population they are
    drawn from. A coalition costs ``n_samples * n_background`` predictions, so a few
    hundred rows of X and about 100 background rows are typical.

    Averaging the predictions and then scoring (SAGE) differs from averaging the scores
    of imputed rows (:class:`~skshapley.games.PerformanceGame`): for the squared error
    the latter adds the variance of the predictions over the background to the loss.

    References
    ----------
    .. [1] I. Covert, S. Lundberg and S.-I. Lee, "Understanding global feature
       contributions with additive importance measures", NeurIPS 2020 (SAGE).
    .. [2] J. Castro, D. Gómez and J. Tejada, "Polynomial calculation of the Shapley
       value based on sampling", Comput. Oper. Res. 36(5), 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from skshapley.inspection import shapley_importance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = 2 * X[:, 0] + X[:, 1]
    >>> r = shapley_importance(LinearRegression().fit(X, y), X, y, random_state=0)
    >>> r.method, np.round(r.importances_mean, 2).tolist()
    ('exact', [0.81, 0.19, 0.0])
    """
    check_is_fitted(estimator)
    classes = getattr(estimator, "classes_", None)
    if is_classifier(estimator) and classes is None:
        raise ValueError(
            f"{type(estimator).__name__} is a classifier without classes_; the "
            "marginalised model needs the classes to name its predictions.")
    if is_classifier(estimator) and (np.ndim(classes) != 1 or isinstance(classes, list)):
        raise ValueError(
            f"{type(estimator).__name__} has several outputs of classes; "
            "shapley_importance takes a single-output classifier or a regressor.")
    scorer, scoring_used = _check_scoring(estimator, scoring)

    X = as_pandas_frame(X)
    codec = ColumnCodec.from_frame(X)
    finite = finite_policy(estimator)
    if codec is None:
        X_codes = check_array(X, dtype=np.float64, ensure_all_finite=finite, input_name="X")
    else:
        codec, codes = codec.encode(X)
        X_codes = codec.checked(codes, finite, "X")
    has_names = hasattr(X, "columns")
    names = ([str(c) for c in X.columns] if has_names
             else [f"x{j}" for j in range(X_codes.shape[1])])
    fitted_features = getattr(estimator, "n_features_in_", X_codes.shape[1])
    if fitted_features != X_codes.shape[1]:
        raise ValueError(f"X has {X_codes.shape[1]} features, but {type(estimator).__name__} "
                         f"was fitted on {fitted_features}.")
    y = check_array(y, ensure_2d=False, dtype=None, input_name="y")
    check_consistent_length(X_codes, y)
    if groups is None:
        group_names, members = names, [np.array([j]) for j in range(len(names))]
    else:
        # the explainer's reading of groups, so both say the same of the same mistake
        group_names, column_group = check_groups(groups, names, has_names=has_names,
                                                 caller="shapley_importance")
        members = [np.flatnonzero(column_group == k) for k in range(len(group_names))]
    n_players = len(members)

    rng = check_random_state(random_state)
    background_seed, sampling_seed = (int(s) for s in
                                      rng.randint(np.iinfo(np.int32).max, size=2))
    background_codes, codec = _check_background(background, X, X_codes, codec,
                                                background_seed)
    if background_codes.shape[0] == 0:
        raise ValueError("background has no rows; give at least one.")
    # the model takes what it was fitted on: a DataFrame with X's own column labels
    decode = model_rows(list(X.columns), codec) if has_names else None

    budget = default_budget(n_players) if max_evals == "auto" else int(max_evals)
    exact = n_players <= MAX_EXACT_PLAYERS and 2**n_players <= budget
    if not exact and budget < minimum_budget(n_players, 2):
        raise ValueError(
            f"max_evals={budget} is too small for {n_players} players: v(∅) and v(N) take "
            f"2 evaluations and one antithetic pair of orderings {2 * (n_players - 1)} "
            f"more (max_evals >= {minimum_budget(n_players, 2)}); finite error bars need "
            f"two pairs, max_evals >= {minimum_budget(n_players, 4)}"
            + (f" (or 2**{n_players} = {2**n_players} for exact values)."
               if n_players <= MAX_EXACT_PLAYERS else "."))

    game = MarginalScoreGame(
        estimator, X_codes, y, background_codes, scorer, scoring=scoring_used,
        groups=members, decode=decode, X_scored=X if has_names else X_codes,
        n_jobs=n_jobs)
    result = shapley_values(game, method="exact" if exact else "permutation",
                            budget=budget, tol=tol, random_state=sampling_seed)
    return _as_bunch(result, group_names, members, background_codes.shape[0], tol,
                     scoring_used if isinstance(scoring_used, str) else repr(scoring_used))


def _as_bunch(result, group_names, members, n_background, tol, scoring):
    values = np.asarray(result.values, dtype=np.float64)
    std_errors = np.asarray(result.std_errors, dtype=np.float64)
    n_draws = int(result.n_draws)
    if result.method == "exact":
        spread = np.zeros_like(values)
        half_width = np.zeros_like(values)
    else:
        spread = std_errors * np.sqrt(n_draws) if n_draws >= 1 else np.full_like(values,
                                                                                  np.inf)
        t = (stats.t.ppf(0.5 + CONFIDENCE_LEVEL / 2, n_draws - 1) if n_draws >= 2
             else np.inf)
        with np.errstate(invalid="ignore"):
            half_width = np.where(std_errors == 0, 0.0, t * std_errors)
    return Bunch(
        importances_mean=values,
        importances_std=spread,
        std_errors=std_errors,
        ci_low=values - half_width,
        ci_high=values + half_width,
        confidence_level=CONFIDENCE_LEVEL,
        feature_names=np.asarray(group_names, dtype=object),
        groups=members,
        full_score=float(result.grand_value),
        baseline_score=float(result.empty_value),
        n_evaluations=int(result.n_evaluations),
        n_draws=n_draws if result.method != "exact" else 0,
        converged=None if tol is None else bool(result.converged),
        method=result.method,
        scoring=scoring,
        n_background=int(n_background),
        result=result,
    )
