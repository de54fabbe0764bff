"""Which model output a game explains (§1.2, "Output space")."""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier

from skshapley.utils._device import namespace_of

RESPONSE_METHODS = (
    "auto",
    "predict",
    "predict_proba",
    "decision_function",
    "predict_log_odds",
)

# Probabilities are clipped before the logarithm so a confident model gives large finite
# log-odds instead of inf (which would make every marginal contribution inf - inf = NaN).
_PROBA_EPS = 1e-15


def resolve_response_method(model, response_method="auto") -> str:
    """Name the output that ``response_method="auto"`` means for ``model``.

    Regressors are explained on ``predict``; classifiers on ``decision_function`` when
    they have one (margins are additive in boosted trees and linear models); models whose
    probabilities are shares of votes (scikit-learn's trees, forests and nearest
    neighbours, also as a Pipeline's last step) on ``predict_proba`` (P(class 1) for two
    classes): their probabilities are often exactly 0 or 1, where log-odds are infinite
    (clipped, +-34.5 of nothing), and a forest's are linear in its leaves, so TreeSHAP
    explains them exactly; any other classifier (XGBoost, LightGBM, MLP ...) on the
    log-odds of ``predict_proba``.
    """
    if callable(response_method):
        return "callable"
    if response_method not in RESPONSE_METHODS:
        raise ValueError(
            f"The 'response_method' parameter must be one of {list(RESPONSE_METHODS)} or a "
            f"callable; got {response_method!r}."
        )
    if response_method != "auto":
        return response_method
    if is_classifier(model):
        if hasattr(model, "decision_function"):
            return "decision_function"
        return "predict_proba" if _votes_for_probabilities(model) else "predict_log_odds"
    return "predict"


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
    """The raw margins of an XGBoost or LightGBM classifier (sklearn wrapper), whose
    log-odds they are: its probabilities are float32 and saturate at margins of ~17,
    where log-odds read from them would be clipped; None for other models."""
    module = type(model).__module__.partition(".")[0]
    if module == "xgboost" and hasattr(model, "get_booster"):
        return lambda X: model.predict(X, output_margin=True)
    if module == "lightgbm" and hasattr(model, "booster_"):
        if model.booster_.dump_model(num_iteration=1).get("average_output", False):
            return None  # boosting_type="rf": raw scores are sums, probabilities means
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
