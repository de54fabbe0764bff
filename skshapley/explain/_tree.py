"""``method="tree"`` of the explainer: which model outputs TreeSHAP explains exactly.

Tree kernels explain the ensemble's raw outputs (regression values, forest class
probabilities, boosted margins). The explainer's output is reached from them by a fixed
linear map when it is exact to do so: the identity, picking P(class 1) of a binary
forest, or centring softmax margins (the explainer's multiclass log-odds are centred
log-probabilities, which equal the centred margins). Anything else (log-odds of a
forest's averaged probabilities, probabilities of a boosted model) is not linear in the
leaves, so TreeSHAP cannot give it exactly and the method is refused.
"""

from __future__ import annotations

import numpy as np

from skshapley.games._response import resolve_response_method
from skshapley.tree import read_model, tree_shap


def response_map(ensemble, response):
    """Matrix A (n_explained, n_tree_outputs) with explained = A @ tree outputs, or a
    string saying why no exact map exists."""
    k = ensemble.n_outputs
    kind, link = ensemble.output, ensemble.link
    if kind == "value" and response == "predict":
        if link != "identity":
            return (f"{ensemble.model_name} predicts through a non-identity link, so "
                    "'predict' is not a sum over trees")
        return np.eye(k)
    if kind == "probability" and response == "predict_proba":
        return np.eye(k)[1:] if k == 2 else np.eye(k)
    if kind == "margin" and response in ("decision_function", "predict_log_odds"):
        if response == "predict_log_odds" and link == "softmax":
            return np.eye(k) - 1.0 / k
        return np.eye(k)
    return (f"TreeSHAP explains the {kind} of {ensemble.model_name}, and "
            f"response_method={response!r} is not a linear function of it")


def tree_rows(ensemble, rows, model_rows):
    """What the ensemble's paths read for the explainer's ``rows`` (float codes): the
    codes themselves, or, when the model encodes its own input (``input_encoder``),
    the model input they stand for (``model_rows(rows)``), which ``prepare`` encodes."""
    return rows if ensemble.input_encoder is None else model_rows(rows)


def plan_tree(estimator, response_method, background, expected_outputs, model_rows,
              *, codes_are_numbers=True):
    """Read the model and map its outputs to the explained response.

    Parameters
    ----------
    model_rows : callable
        The explainer's rows (float codes) -> the model input they stand for.
    codes_are_numbers : bool
        Whether the explainer's codes are numbers a tree model can split on (numeric and
        pandas categorical columns); else only a model with its own encoder is read.

    Returns
    -------
    (ensemble, matrix) or str
        The plan, or why ``method="tree"`` cannot explain this model exactly.
    """
    if callable(response_method):
        return "a callable response_method cannot be mapped to tree outputs"
    try:
        ensemble = read_model(estimator)
    except (ValueError, ImportError, AttributeError, KeyError) as err:
        return str(err)
    if not codes_are_numbers and ensemble.input_encoder is None:
        return ("its trees read numbers and X has text columns; encode them first (or "
                "use a model that encodes them itself, like HistGradientBoosting with "
                "categorical_features)")
    response = resolve_response_method(estimator, response_method)
    matrix = response_map(ensemble, response)
    if isinstance(matrix, str):
        return matrix
    # Cross-check on the background: the mapped raw outputs must be the explained ones.
    try:
        mapped = ensemble.predict_raw(tree_rows(ensemble, background, model_rows)) @ matrix.T
    except ValueError as err:  # e.g. the model's own encoder refuses the rows
        return f"its trees cannot read the background rows ({err})"
    if mismatch(mapped, expected_outputs) is not None:
        return (f"the trees of {ensemble.model_name} do not reproduce its "
                f"{response!r} output")
    return ensemble, matrix


def mismatch(ours, outputs):
    """Largest |ours - outputs| when it exceeds what float32 trees (XGBoost) round to,
    1e-5 of the outputs' scale (at least 1), else None."""
    outputs = np.asarray(outputs, np.float64).reshape(np.shape(ours))
    scale = max(1.0, float(np.abs(outputs).max(initial=0.0)))
    error = float(np.abs(ours - outputs).max(initial=0.0))
    return None if error <= 1e-5 * scale else error


def explain_with_trees(ensemble, matrix, X, background, feature_perturbation, model_rows,
                       interactions=False):
    """Values (n, d, k), base values (n, k) and optional interactions (n, d, d, k)."""
    interventional = feature_perturbation == "interventional"
    result = tree_shap(
        ensemble, tree_rows(ensemble, X, model_rows),
        background=tree_rows(ensemble, background, model_rows) if interventional else None,
        feature_perturbation=feature_perturbation, interactions=interactions,
    )
    values = result.values @ matrix.T
    base = result.base_values @ matrix.T
    inter = None if result.interactions is None else result.interactions @ matrix.T
    return values, base, inter
