"""``method="linear"`` of the explainer: closed-form values of models linear in their inputs.

A model whose explained output is ``A (Z(x) @ W.T + b)`` -- a linear model's ``coef_``
``W`` and ``intercept_`` ``b`` on the columns ``Z(x)`` of the steps before it, mapped by a
fixed matrix ``A`` to the explained output -- where every column ``k`` of ``Z`` is a
function of one input column ``column(k)`` only (scalers, imputers, one-hot encoders,
splines, ...; see ``skshapley.tree.column_of_outputs``), is a sum of one
function per input column. Its interventional game is additive, so each column's Shapley
value is its own term against the background's mean [1]_:

    phi_j(x) = sum over k with column(k) = j of  A W_k (Z(x)_k - mean_b Z(b)_k),

and the base value is the mean output over the background. No coalition is evaluated.

Outputs explained this way: a regressor's ``predict``, a classifier's
``decision_function`` (its margins), and ``predict_log_odds`` where it equals the
margins: a binary classifier's log-odds are its margin, and the explainer's multiclass
log-odds are centred log-probabilities, which are the centred margins under softmax
(multinomial LogisticRegression). The plan checks this on the background rows, so a
model that computes anything else (a link function, one-vs-rest probabilities,
``predict_proba``) is refused and ``method="auto"`` moves on.

References
----------
.. [1] S. M. Lundberg and S.-I. Lee, "A unified approach to interpreting model
   predictions", NeurIPS 2017, Corollary 1 (linear SHAP).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import sparse
from sklearn.base import is_classifier
from sklearn.pipeline import Pipeline

from skshapley.backends import get_backend
from skshapley.explain._tree import mismatch
from skshapley.games import make_response_function, resolve_response_method
from skshapley.tree import column_of_outputs

# A probability within 1.5e-8 of 0 or 1 (a margin beyond 18) is rounded in ``1 - p``
# (relative error 1e-16 / 1.5e-8 ~ 1e-8 in its logarithm, growing fast beyond) and
# clipped below 1e-15 before the logarithm (games/_response.py), so the model's log-odds
# equal its margins only where the margins spread by less than this; rows beyond it are
# left out of the checks of predict_log_odds.
_ROUNDED_MARGIN = 18.0


@dataclasses.dataclass(frozen=True)
class LinearPlan:
    """What ``explain_linear`` needs: ``explained = (Z @ coef.T + intercept) @ matrix.T``.

    Attributes
    ----------
    estimator : estimator
        The fitted model, called once per ``explain_linear`` to check efficiency.
    response : str
        The explained output (resolved response method).
    steps : Pipeline or None
        The fitted steps before the linear model, giving Z; None for a bare model.
    column_of : ndarray (n_columns,)
        Input column of each column of Z.
    coef : ndarray (n_raw, n_columns)
    intercept : ndarray (n_raw,)
    matrix : ndarray (n_outputs, n_raw)
        Explained outputs from the model's raw outputs.
    weights : scipy.sparse.csr_matrix (n_columns, n_features * n_outputs)
        ``Z @ weights`` sums each input column's terms per explained output:
        column ``j * n_outputs + o`` holds ``(matrix @ coef)[o, k]`` where
        ``column_of[k] == j``.
    mean_terms : ndarray (n_features * n_outputs,)
        ``mean_b Z(b) @ weights``: the background's mean of those sums.
    direct_weights : ndarray (n_features, n_outputs) or None
        When column j of Z is made from input column j alone (a bare model, scalers):
        its weights, so that a term is a product, with no sum over columns.
    base : ndarray (n_outputs,)
        Mean explained output over the background.
    """

    estimator: object
    response: str
    steps: object
    column_of: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    matrix: np.ndarray
    weights: sparse.csr_matrix
    mean_terms: np.ndarray
    base: np.ndarray
    direct_weights: np.ndarray | None = None


def _final_step(estimator):
    return estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator


def _transformed(steps, rows, model_rows):
    """Z of float ``rows`` (codes): the model input they stand for, through ``steps``, as
    float64 (a CSR matrix when the steps give a sparse one)."""
    inputs = model_rows(rows)
    Z = inputs if steps is None else steps.transform(inputs)
    if sparse.issparse(Z):
        return sparse.csr_matrix(Z, dtype=np.float64)
    return np.asarray(Z, dtype=np.float64)


def _dense(Z):
    return Z.toarray() if sparse.issparse(Z) else Z


def _output_matrix(final, response, n_raw):
    """Matrix from the model's raw outputs (n_raw of them) to the explained ones, or why
    the explained output is not linear in them."""
    name = type(final).__name__
    if is_classifier(final):
        if response == "decision_function":
            return np.eye(n_raw)
        if response == "predict_log_odds":
            # binary: the log-odds are the margin; multiclass: the centred margins
            return np.eye(n_raw) if n_raw == 1 else np.eye(n_raw) - 1.0 / n_raw
        return (f"response_method={response!r} of the classifier {name} is not linear "
                "in its inputs; explain 'decision_function' or 'predict_log_odds'")
    if response == "predict":
        return np.eye(n_raw)
    return (f"response_method={response!r} of {name} is not the output of its coef_ "
            "and intercept_")


def _comparable_rows(ours, response):
    """Rows where the model's output can equal ours to rounding: all of them, except for
    log-odds, whose probabilities are rounded at large margins (see _ROUNDED_MARGIN)."""
    if response != "predict_log_odds":
        return np.ones(ours.shape[0], dtype=bool)
    spread = (np.abs(ours[:, 0]) if ours.shape[1] == 1
              else ours.max(axis=1) - ours.min(axis=1))
    return spread < _ROUNDED_MARGIN


def plan_linear(estimator, response_method, background, expected_outputs, model_rows):
    """Read a model linear in its (column-wise transformed) inputs.

    Parameters
    ----------
    estimator : estimator
        Fitted: a model with ``coef_`` and ``intercept_``, or a Pipeline of column-wise
        steps ending in one.
    response_method : str or callable
        The explainer's ``response_method``.
    background : ndarray (n_background, n_features)
        The explainer's background rows (float codes).
    expected_outputs : ndarray (n_background,) or (n_background, n_outputs)
        The model's explained output on ``background``.
    model_rows : callable
        The explainer's rows (float codes) -> the model input they stand for.

    Returns
    -------
    LinearPlan or str
        The plan, or why ``method="linear"`` cannot explain this model exactly.
    """
    if callable(response_method):
        return "a callable response_method cannot be mapped to a linear model's outputs"
    final = _final_step(estimator)
    name = type(final).__name__
    if not (hasattr(final, "coef_") and hasattr(final, "intercept_")):
        return f"{name} has no coef_ and intercept_ (it is not a linear model)"
    response = resolve_response_method(estimator, response_method)
    n_features = background.shape[1]
    steps = None
    column_of = np.arange(n_features)
    if isinstance(estimator, Pipeline) and len(estimator.steps) > 1:
        column_of = column_of_outputs(estimator.steps[:-1], n_features)
        if isinstance(column_of, str):
            return (f"it reads a Pipeline when every step before its model makes each "
                    f"column from one input column; {column_of}")
        steps = estimator[:-1]
    coef = final.coef_
    coef = np.asarray(coef.toarray() if sparse.issparse(coef) else coef, np.float64)
    coef = coef.reshape(1, -1) if coef.ndim == 1 else coef
    n_raw = coef.shape[0]
    intercept = np.asarray(final.intercept_, np.float64).reshape(-1)
    if coef.ndim != 2 or intercept.size not in (1, n_raw):
        return f"{name} has coef_ of shape {np.shape(final.coef_)}, not (n_outputs, n_inputs)"
    intercept = np.broadcast_to(intercept, (n_raw,)).copy()
    matrix = _output_matrix(final, response, n_raw)
    if isinstance(matrix, str):
        return matrix
    try:
        Z = _transformed(steps, background, model_rows)
    except (ValueError, TypeError) as err:  # e.g. text the model never encodes
        return f"the background rows cannot be read as numbers by its coef_ ({err})"
    if Z.shape[1] != coef.shape[1] or Z.shape[1] != column_of.size:
        return (f"{name} has {coef.shape[1]} coefficients per output, but the steps "
                f"before it give {Z.shape[1]} columns")
    ours = np.asarray(Z @ coef.T, np.float64) + intercept
    mapped = ours @ matrix.T
    outputs = np.asarray(expected_outputs, np.float64)
    rows = _comparable_rows(ours, response)
    # Cross-check on the background: the coefficients must give the model's own output.
    if outputs.size != mapped.size or not rows.any() or mismatch(
            mapped[rows], outputs.reshape(mapped.shape)[rows]) is not None:
        return f"{name}'s coef_ and intercept_ do not give its {response!r} output"
    # The column map must be what the steps do: masking the background's columns between
    # its rows and the next rows must mask the transformed columns the map names.
    error = _columnwise_error(steps, column_of, background, Z, model_rows)
    if error is not None:
        return (f"the steps before {name} do not make each column from the input column "
                f"read off them (off by {error:.3g})")
    n_outputs = matrix.shape[0]
    per_output = matrix @ coef  # (n_outputs, n_columns): explained output per Z column
    weights = sparse.csr_matrix(
        (per_output.T.ravel(),
         (np.repeat(np.arange(column_of.size), n_outputs),
          (column_of[:, None] * n_outputs + np.arange(n_outputs)).ravel())),
        shape=(column_of.size, n_features * n_outputs))
    mean_Z = np.asarray(Z.mean(axis=0), np.float64).reshape(1, -1)
    mean_terms = np.asarray(weights.T @ mean_Z.T).ravel()
    direct = (per_output.T.copy() if np.array_equal(column_of, np.arange(n_features))
              else None)
    return LinearPlan(estimator=estimator, response=response, steps=steps,
                      column_of=column_of, coef=coef, intercept=intercept, matrix=matrix,
                      weights=weights, mean_terms=mean_terms, base=mapped.mean(axis=0),
                      direct_weights=direct)


def _columnwise_error(steps, column_of, background, Z, model_rows):
    """Largest error (or None) of the column map on rows mixing each background row with
    the next one by a fixed random mask: transformed, they must take each column of Z
    from the row whose input column they took."""
    if steps is None or background.shape[0] < 2:
        return None
    mask = np.random.default_rng(0).random(background.shape) < 0.5
    following = np.roll(background, -1, axis=0)
    mixed = _dense(_transformed(steps, np.where(mask, background, following), model_rows))
    Z = _dense(Z)
    expected = np.where(mask[:, column_of], Z, np.roll(Z, -1, axis=0))
    return mismatch(mixed, expected)


def explain_linear(plan, X, model_rows):
    """Values (n, d, k) and base values (n, k) of the rows ``X`` (float codes).

    The background's transformed mean is part of the plan; the model is called once, on
    ``X``, to check that the values add up to its output (efficiency).

    Raises
    ------
    ValueError
        If the values do not add up to the model's output on ``X``.
    """
    # The closed form needs no kernel, but a backend asked for and missing is said, as
    # every other method says it, never passed over in silence.
    get_backend()
    Z = _transformed(plan.steps, X, model_rows)
    n_rows, n_features = X.shape
    n_outputs = plan.matrix.shape[0]
    if sparse.issparse(Z):
        terms = np.asarray((Z @ plan.weights).todense())
    elif plan.direct_weights is not None:
        terms = Z[:, :, None] * plan.direct_weights  # no sum over columns
    else:
        terms = np.asarray(Z @ plan.weights)
    values = terms.reshape(n_rows, n_features, n_outputs) - plan.mean_terms.reshape(
        n_features, n_outputs)
    base = np.broadcast_to(plan.base, (n_rows, n_outputs)).copy()
    _check_efficiency(plan, values, base, X, model_rows)
    return values, base


def _check_efficiency(plan, values, base, X, model_rows):
    """The values must add up to the model's own output on the explained rows: the
    coefficients were checked on the background only, and a model that computes more than
    them (a subclass with a clipped predict, say) would otherwise be explained wrongly
    without a word. One call of a linear model: about as costly as the values."""
    predict = make_response_function(plan.estimator, plan.response)
    outputs = np.asarray(predict(model_rows(X)), np.float64).reshape(base.shape)
    ours = values.sum(axis=1) + base
    # centring (multiclass log-odds) keeps the spread of the margins
    rows = _comparable_rows(ours, plan.response)
    error = mismatch(ours[rows], outputs[rows])
    if error is not None:
        raise ValueError(
            f"The linear values of these rows do not add up to the model's output (off by "
            f"{error:.3g}): {type(_final_step(plan.estimator)).__name__} computes something "
            "its coef_ and intercept_ do not give for them; explain it with a sampling "
            "method (method='permutation'), and please report the model."
        )
