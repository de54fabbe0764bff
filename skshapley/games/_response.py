"""Which model output a game explains."""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier

from skshapley.utils import StrOptions, namespace_of, validate_params

RESPONSE_METHODS = (
    "auto",
    "predict",
    "predict_proba",
    "decision_function",
    "predict_log_odds",
    "score_samples",
)

# Probabilities are clipped before the logarithm so a confident model gives large finite
# log-odds instead of inf (which would make every marginal contribution inf - inf = NaN).
_PROBA_EPS = 1e-15


# a callable is called as f(model, X); "auto" and the names are resolved per model
_RESPONSE_METHOD = [StrOptions(set(RESPONSE_METHODS)), callable]


@validate_params({"model": "no_validation", "response_method": _RESPONSE_METHOD},
                 prefer_skip_nested_validation=True)
def resolve_response_method(model, response_method="auto") -> str:
    """Name the output that ``response_method="auto"`` means for ``model``.

    Regressors are explained on ``predict``. XGBoost and LightGBM classifiers are
    explained on their log-odds, ``predict_log_odds``: the margins (binary), the centred
    margins (multiclass, as for every other classifier), and for LightGBM's
    ``boosting_type="rf"`` the margins averaged over the trees, as its probabilities are;
    never LightGBM's ``decision_function`` (LightGBM >= 4.7), whose raw scores are sums
    of an rf model's trees and uncentred in the multiclass case. Other classifiers are
    explained on ``decision_function`` when they have one (margins are additive in
    boosted trees and linear models); models whose probabilities are shares of votes
    (scikit-learn's trees, forests and nearest neighbours, also as a Pipeline's last
    step) on ``predict_proba`` (P(class 1) for two classes): their probabilities are
    often exactly 0 or 1, where log-odds are infinite (clipped, +-34.5 of nothing), and a
    forest's are linear in its leaves, so TreeSHAP explains them exactly; any other
    classifier (MLP ...) on the log-odds of ``predict_proba``.

    Clusterers and outlier detectors have no ``"auto"`` output: their ``predict`` gives
    labels (cluster ids, +-1), which are not numbers to attribute, so they need an
    explicit ``response_method`` ("score_samples", "decision_function", ...).
    """
    if callable(response_method):
        return "callable"
    if response_method != "auto":
        return response_method
    labeller = _label_kind(model)
    if labeller is not None:
        scores = [name for name in ("score_samples", "decision_function", "transform")
                  if hasattr(model, name)]
        hint = (f"pass one of its scores explicitly, e.g. response_method={scores[0]!r}"
                if scores and scores[0] != "transform" else
                "pass a callable response_method(model, X) that returns a score")
        raise ValueError(
            f"response_method='auto' cannot explain {type(model).__name__}: it is "
            f"{labeller}, whose predict gives labels, not a score to attribute; {hint} "
            "(or response_method='predict' to explain the labels as numbers anyway)."
        )
    if is_classifier(model):
        if _margin_function(model) is not None:
            return "predict_log_odds"
        if hasattr(model, "decision_function"):
            return "decision_function"
        return "predict_proba" if _votes_for_probabilities(model) else "predict_log_odds"
    return "predict"


def _label_kind(model):
    """"a clusterer" or "an outlier detector" when ``model`` predicts labels, else None
    (scikit-learn's ``is_clusterer``/``is_outlier_detector``, whose tags also see through
    a Pipeline; ``_estimator_type`` for estimators without tags)."""
    from sklearn.base import is_clusterer, is_outlier_detector

    kind = getattr(model, "_estimator_type", None)
    try:
        if is_clusterer(model):
            kind = "clusterer"
        elif is_outlier_detector(model):
            kind = "outlier_detector"
    except (AttributeError, TypeError):  # not an estimator sklearn can read tags of
        pass
    return {"clusterer": "a clusterer", "outlier_detector": "an outlier detector"}.get(kind)


def _votes_for_probabilities(model):
    """Whether ``model`` (or a Pipeline's last step) gives shares of votes as
    probabilities: a tree's or forest's leaf frequencies, a neighbourhood's classes."""
    from sklearn.ensemble import BaseEnsemble
    from sklearn.neighbors import KNeighborsClassifier, RadiusNeighborsClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.tree import BaseDecisionTree

    while isinstance(model, Pipeline):
        model = model.steps[-1][1]
    if isinstance(model, (BaseDecisionTree, KNeighborsClassifier, RadiusNeighborsClassifier)):
        return True
    # forests average their trees' frequencies (boosting, also a BaseEnsemble, adds
    # margins and has decision_function)
    return isinstance(model, BaseEnsemble) and isinstance(
        getattr(model, "estimator", None), BaseDecisionTree)


def _margin_function(model):
    """The log-odds margins of an XGBoost or LightGBM classifier (sklearn wrapper): its
    probabilities are float32 (XGBoost) or saturate at margins of ~34, where log-odds
    read from them would be clipped; None for other models.

    LightGBM's raw scores are sums over the trees; with ``boosting_type="rf"`` its
    probabilities are the link of their mean, so the margins are the raw scores divided
    by the number of iterations ``predict`` uses (the best one after early stopping).
    """
    from sklearn.pipeline import Pipeline

    if isinstance(model, Pipeline):  # the last step's margins of the transformed rows
        final = _margin_function(model.steps[-1][1])
        if final is None:
            return None
        head = model[:-1]
        return lambda X: final(head.transform(X))
    module = type(model).__module__.partition(".")[0]
    if not is_classifier(model):
        return None
    if module == "xgboost" and hasattr(model, "get_booster"):
        return lambda X: model.predict(X, output_margin=True)
    if module == "lightgbm" and hasattr(model, "booster_"):
        booster = model.booster_
        if booster.dump_model(num_iteration=1).get("average_output", False):
            best = booster.best_iteration
            n_iterations = best if best and best > 0 else booster.current_iteration()
            return lambda X: model.predict(X, raw_score=True) / n_iterations
        return lambda X: model.predict(X, raw_score=True)
    return None


def _centred(margins):
    """Log-odds from margins: binary as they are, multiclass centred over the classes
    (what the log-probabilities centre to under softmax)."""
    xp = namespace_of(margins)
    if xp is np:
        margins = np.asarray(margins, dtype=np.float64)
    if margins.ndim == 1 or margins.shape[1] == 1:
        return margins.reshape(-1)
    return margins - xp.mean(margins, axis=1, keepdims=True)


def _log_odds(proba):
    # in the array's own namespace, so device outputs stay on the device
    xp = namespace_of(proba)
    if xp is np:
        proba = np.asarray(proba, dtype=np.float64)
    log_proba = xp.log(xp.clip(proba, _PROBA_EPS, 1.0))
    if log_proba.shape[1] == 2:
        return log_proba[:, 1] - log_proba[:, 0]
    # Centred log-probabilities: the softmax logits with their free constant fixed to
    # zero mean, one output per class.
    return log_proba - xp.mean(log_proba, axis=1, keepdims=True)


@validate_params(
    {
        "model": "no_validation",
        "response_method": _RESPONSE_METHOD,
        "feature_names": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def make_response_function(model, response_method="auto", *, feature_names=None):
    """Return ``f(X) -> (n,) or (n, k)`` for the chosen model output.

    Parameters
    ----------
    model : estimator or callable
        A fitted estimator, or a plain function of a 2-D array.
    response_method : str or callable, default="auto"
        See :func:`resolve_response_method`; a callable is called as ``f(model, X)``.
    feature_names : array-like of str, optional
        If given, the model is called on a pandas DataFrame with these columns (models
        fitted on DataFrames warn or fail on bare arrays).

    Returns
    -------
    function : callable
    """
    if not (hasattr(model, "predict") or hasattr(model, "predict_proba")) and callable(model):
        base = model
    else:
        method = resolve_response_method(model, response_method)
        if method == "callable":
            def base(X):
                return response_method(model, X)
        elif method == "predict_log_odds":
            if not hasattr(model, "predict_proba"):
                raise ValueError(
                    f"response_method='predict_log_odds' needs predict_proba, which "
                    f"{type(model).__name__} does not have."
                )
            margins = _margin_function(model)
            if margins is not None:
                def base(X):
                    return _centred(margins(X))
            else:
                def base(X):
                    return _log_odds(model.predict_proba(X))
        else:
            if not hasattr(model, method):
                raise ValueError(
                    f"response_method={method!r} is not available: {type(model).__name__} "
                    f"has no method {method!r}."
                )
            base = getattr(model, method)
            if method == "predict_proba":
                def base(X, _f=base):
                    proba = _f(X)
                    if namespace_of(proba) is np:
                        proba = np.asarray(proba)
                    # Binary: explain P(class 1) as a scalar, like predict does.
                    return proba[:, 1] if proba.ndim == 2 and proba.shape[1] == 2 else proba
    if feature_names is None:
        return base
    named = NamedRows(feature_names)

    def with_names(X):
        return base(named(X))

    return with_names


class NamedRows:
    """Float rows -> a DataFrame with the columns the model was fitted with (a callable
    that pickles, for games sent to joblib workers)."""

    def __init__(self, feature_names):
        self.columns = list(feature_names)

    def __call__(self, rows):
        import pandas as pd

        return pd.DataFrame(rows, columns=self.columns)
