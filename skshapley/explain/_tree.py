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

import weakref

import numpy as np

from skshapley.backends.tree import (
    LIGHTGBM_ZERO_THRESHOLD,
    MISSING_NAN_OR_ZERO,
    tree_leaf_outputs,
)
from skshapley.games import resolve_response_method
from skshapley.tree import MAX_PATTERN_FEATURES, grouped_tree_shap, read_model, tree_shap


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
    if ensemble.max_path_length > MAX_PATTERN_FEATURES:
        return (f"a path of its trees tests {ensemble.max_path_length} distinct features; "
                f"exact TreeSHAP takes at most {MAX_PATTERN_FEATURES}")
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


def tree_outputs(ensemble, rows):
    """float64 (n_rows, n_outputs): the ensemble's raw outputs on ``rows`` (what its paths
    read), as ``TreeEnsemble.predict_raw`` gives them (to round-off), by the cheaper of
    two walks: each row's reached paths (a pass over every path element) or, for an
    ensemble with many elements per tree, its trees node by node (one NumPy step per
    depth, over all rows and trees at once).
    """
    X = ensemble.prepare(rows)
    nodes = ensemble.nodes
    if nodes is not None:
        # the trees walked by a compiled kernel: 2-10 us a row for 100 trees, where the
        # NumPy walks took about 0.1 ms for one row (a third of a one-row TreeSHAP call)
        out = np.zeros((X.shape[0], ensemble.n_outputs))
        tree_leaf_outputs(np.ascontiguousarray(X, dtype=np.float64), nodes.arrays(), out)
        return out + ensemble.offset
    return _outputs_by_paths(ensemble, X)


def _outputs_by_paths(ensemble, X):
    """Raw outputs from the one path per tree each row of (prepared) ``X`` reaches: only
    the reached paths' leaf values are summed, with no dense rows x paths product."""
    lengths = ensemble.path_lengths
    nonempty = lengths > 0
    reached = np.ones((X.shape[0], ensemble.n_paths), dtype=bool)
    if nonempty.any():
        counts = np.add.reduceat(ensemble.satisfied(X), ensemble.path_ptr[:-1][nonempty],
                                 axis=1, dtype=np.int64)
        reached[:, nonempty] = counts == lengths[nonempty]
    row, path = np.nonzero(reached)
    return _csr_sum(row, path, ensemble.out_ptr, ensemble.out_index, ensemble.out_value,
                    (X.shape[0], ensemble.n_outputs)) + ensemble.offset


def _outputs_by_nodes(nodes, X, n_outputs):
    """Leaf values the rows of (prepared) ``X`` reach in the trees of ``nodes``
    (:class:`~skshapley.tree._ensemble.TreeNodes`), walking all rows and trees a level at
    a time; a node's first child whose edge the row follows is taken (the kernels'
    ``_edge_follows``: a missing value goes the edge's missing way, a number by the
    edge's intervals)."""
    n_rows, n_trees = X.shape[0], len(nodes.tree_root)
    node = np.tile(nodes.tree_root, (n_rows, 1))
    row = np.repeat(np.arange(n_rows), n_trees).reshape(n_rows, n_trees)
    n_children = np.diff(nodes.child_ptr)
    n_intervals = np.diff(nodes.edge_ptr)
    zero_missing = nodes.missing_mode == MISSING_NAN_OR_ZERO
    for _ in range(nodes.max_depth):
        first, count = nodes.child_ptr[node], n_children[node]
        undecided = count > 0
        if not undecided.any():
            break
        for j in range(nodes.max_children):
            can = undecided & (j < count)
            if not can.any():
                break
            child = nodes.child[np.where(can, first + j, 0)]
            x = X[row, nodes.feature[child]]
            missing = np.isnan(x) | (zero_missing[child] & (x > -LIGHTGBM_ZERO_THRESHOLD)
                                     & (x <= LIGHTGBM_ZERO_THRESHOLD))
            inside = np.zeros(x.shape, dtype=bool)
            start = nodes.edge_ptr[child]
            for k in range(int(n_intervals[child].max(initial=0))):
                edge = np.minimum(start + k, len(nodes.edge_lower) - 1)
                with np.errstate(invalid="ignore"):
                    inside |= ((k < n_intervals[child]) & (nodes.edge_lower[edge] <= x)
                               & (x < nodes.edge_upper[edge]))
            follows = can & np.where(missing, nodes.missing_branch[child] != 0, inside)
            node = np.where(follows, child, node)
            undecided &= ~follows
    return _csr_sum(row.ravel(), node.ravel(), nodes.value_ptr, nodes.value_index,
                    nodes.value, (n_rows, n_outputs))


def _csr_sum(row, item, ptr, index, value, shape):
    """out[row[i], index[k]] += value[k] for k in ptr[item[i]]:ptr[item[i] + 1]."""
    start = ptr[item]
    n_values = ptr[item + 1] - start
    entry = np.repeat(start - np.cumsum(n_values) + n_values, n_values)
    entry += np.arange(entry.size)
    out = np.zeros(shape)
    np.add.at(out, (np.repeat(row, n_values), index[entry]), value[entry])
    return out


# A call of at least this many rows calls the model on them to check TreeSHAP's values
# (see model_check_due): one model call then costs little next to explaining its rows.
MODEL_CHECK_ROWS = 64
# The fitted ensembles whose explained rows the model itself has checked once (by id:
# an ensemble's arrays make it unhashable); kept weakly, so a refit starts afresh.
_MODEL_CHECKED = weakref.WeakValueDictionary()


def model_check_due(ensemble, n_rows):
    """Whether this call's rows go to the model too: always from ``MODEL_CHECK_ROWS``
    rows on, and otherwise on the first call for this fitted ensemble (in this process).

    A model call costs a fixed overhead (0.5 ms for a 100-tree HistGradientBoosting model
    on one row, more than TreeSHAP of that row takes); paid on every call, it made one
    row 2-20x slower than its values. The model is checked against the trees at fit on
    the background, and then on the first explained rows and on every large call; every
    row of every call is checked against the ensemble itself (``tree_outputs``).
    """
    if n_rows >= MODEL_CHECK_ROWS:
        return True
    if _MODEL_CHECKED.get(id(ensemble)) is ensemble:
        return False
    _MODEL_CHECKED[id(ensemble)] = ensemble
    return True


def explain_with_trees(ensemble, matrix, X, background, feature_perturbation, model_rows,
                       interactions=False, groups=None):
    """Values (n, d, k), base values (n, k) and optional interactions (n, d, d, k); with
    ``groups`` (:class:`~skshapley.tree._groups.GroupedPaths` of ``ensemble``) d is the
    number of groups."""
    interventional = feature_perturbation == "interventional"
    rows = tree_rows(ensemble, X, model_rows)
    background = tree_rows(ensemble, background, model_rows) if interventional else None
    # The public functions without their parameter checks (``__wrapped__``): the
    # explainer has checked these inputs, and scikit-learn's validate_params took 40 % of
    # a one-row path-dependent call (0.18 of 0.42 ms, HistGradientBoosting on diabetes).
    if groups is not None:
        result = grouped_tree_shap.__wrapped__(groups, rows, background=background,
                                               feature_perturbation=feature_perturbation,
                                               interactions=interactions)
    else:
        result = tree_shap.__wrapped__(ensemble, rows, background=background,
                                       feature_perturbation=feature_perturbation,
                                       interactions=interactions)
    values = result.values @ matrix.T
    base = result.base_values @ matrix.T
    inter = None if result.interactions is None else result.interactions @ matrix.T
    return values, base, inter


def check_tree_efficiency(values, base, X, ensemble, output_map, decode, estimator,
                          model_outputs):
    """TreeSHAP's values of the explained rows ``X`` must add up to the model's own
    output (efficiency); a ``ValueError`` otherwise.

    Every row is checked against the ensemble's raw output (``tree_outputs``), which
    catches a misread path or kernel. The model itself (``model_outputs()``, called
    only when due), which catches a model that computes more than its trees hold (an
    estimator we misread, that would otherwise be explained wrongly without a word), is
    called on the background at fit, and here on the first rows explained after fit and
    on every call of at least ``MODEL_CHECK_ROWS`` rows (:func:`model_check_due`):
    called on every row, its fixed cost made explaining one row several times slower.
    """
    sums = values.sum(axis=1) + base
    rows = tree_rows(ensemble, X, decode)
    error = mismatch(sums, tree_outputs(ensemble, rows) @ output_map.T)
    if error is None and model_check_due(ensemble, X.shape[0]):
        error = mismatch(sums, model_outputs())
    if error is not None:
        raise ValueError(
            f"TreeSHAP's values of these rows do not add up to the model's output (off "
            f"by {error:.3g}): {type(estimator).__name__} computes something its trees do "
            "not hold for them; explain it with method='exact' or a sampling method, and "
            "please report the model."
        )
