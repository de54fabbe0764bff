"""What ``ShapleyExplainer.fit`` reads from its parameters and data besides the model:
the players (columns, groups or a hierarchy over the columns), the background rows and
the names of the explained outputs."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from skshapley.explain._columns import in_fitted_order
from skshapley.explain._linear import plan_linear
from skshapley.explain._tree import plan_tree
from skshapley.games import resolve_response_method
from skshapley.tree import group_paths
from skshapley.utils import as_pandas_frame, check_groups, check_hierarchy, is_hierarchy


def _names(feature_names, n_features):
    """The columns' names as the groups' messages name them (x0, x1 ... without)."""
    return ([f"x{j}" for j in range(n_features)] if feature_names is None
            else [str(name) for name in feature_names])


def checked_groups(groups, n_features, feature_names):
    """(group names, the group of each column) of flat ``groups``; (None, None) without
    groups or for a hierarchy."""
    if groups is None or is_hierarchy(groups):
        return None, None
    return check_groups(groups, _names(feature_names, n_features),
                        has_names=feature_names is not None)


def checked_hierarchy(groups, X, feature_names):
    """The :class:`~skshapley.utils.Hierarchy` of a hierarchical ``groups`` over the
    columns of ``fit``'s rows ``X``; None for flat groups or none."""
    if not is_hierarchy(groups):
        return None
    return check_hierarchy(groups, X, _names(feature_names, X.shape[1]),
                           has_names=feature_names is not None)


def column_names(feature_names, n_features):
    """The columns as ``groups_`` and ``hierarchy_`` name them: names, else positions."""
    return (list(range(n_features)) if feature_names is None
            else [str(name) for name in feature_names])


def per_group(X, display, column_group, group_names):
    """``Explanation.data`` and ``display_data`` per group: a group's one column, NaN
    (None in ``display``) for a group of several columns."""
    groups = [np.flatnonzero(column_group == g) for g in range(len(group_names))]
    data = np.full((X.shape[0], len(groups)), np.nan)
    shown = None if display is None else np.full((X.shape[0], len(groups)), None,
                                                 dtype=object)
    for g, columns in enumerate(groups):
        if len(columns) == 1:
            data[:, g] = X[:, columns[0]]
            if shown is not None:
                shown[:, g] = display[:, columns[0]]
    return data, shown


def as_frame(X, codec, name="X"):
    """A polars or pyarrow frame as pandas, its categorical columns with the categories
    of ``codec`` (which their conversion does not keep); any other X as it is."""
    frame = as_pandas_frame(X, name)
    if frame is not X and codec is not None:
        frame = codec.with_fitted_categories(frame, name)
    return frame


def select_background(background, X, rng, finite, codec, feature_names):
    """(background rows, codec widened by the background's values) of the
    ``background`` parameter: an int samples that many rows of ``X``."""
    names = feature_names
    background = as_frame(background, codec, "background")
    given = getattr(background, "columns", None)
    if names is not None and given is not None and list(given) != list(names):
        # rows are read by position: another order would mix the features up
        raise ValueError(
            f"The 'background' parameter has the columns {list(given)}, but X has "
            f"{list(names)}; give it X's columns in X's order, background[{list(names)}]."
        )
    if isinstance(background, Integral):
        if X.shape[0] <= background:
            return X.copy(), codec
        rows = np.sort(rng.choice(X.shape[0], size=background, replace=False))
        return X[rows], codec
    if codec is not None:
        if not hasattr(background, "columns"):
            raise ValueError(
                "The 'background' parameter must be a DataFrame with the columns of X, "
                f"which has non-numeric columns; got {type(background).__name__}."
            )
        codec, background = codec.encode(background)
        background = codec.checked(background, finite, "background", min_samples=0)
    else:
        background = check_array(background, dtype=np.float64,
                                 ensure_all_finite=finite, ensure_min_samples=0,
                                 input_name="background")
    if background.shape[0] == 0:
        raise ValueError(
            "The 'background' parameter is an empty array; give at least one row, or an "
            "int to sample that many rows of X."
        )
    if background.shape[1] != X.shape[1]:
        raise ValueError(
            f"background has {background.shape[1]} features, but X has {X.shape[1]}."
        )
    return background, codec


def output_names(estimator, outputs, response_method):
    """Names of the explained outputs: the classes of a classifier's outputs, the one
    output of a binary classifier as "P(class)", "log-odds(class)" or
    "decision(class)", else None (one output) or output0, output1 ..."""
    classes = getattr(estimator, "classes_", None)
    if outputs.ndim == 1:
        # one output of a binary classifier: say which class it is about
        if not (is_classifier(estimator) and classes is not None and len(classes) == 2):
            return None
        response = resolve_response_method(estimator, response_method)
        label = {"predict_proba": "P", "predict_log_odds": "log-odds",
                 "decision_function": "decision"}.get(response)
        return None if label is None else [f"{label}({classes[1]})"]
    if is_classifier(estimator) and classes is not None and len(classes) == outputs.shape[1]:
        return [str(c) for c in classes]
    return [f"output{i}" for i in range(outputs.shape[1])]


def checked_prefit(model, names):
    """The prefit ``model``, checked fitted and fitted on X's columns in X's order (as the
    model records names: LightGBM writes spaces as "_")."""
    check_is_fitted(model)
    fitted_names = getattr(model, "feature_names_in_", None)
    order = None if fitted_names is None or names is None else \
        in_fitted_order(model, list(names))
    if fitted_names is not None and names is not None and order != list(names):
        # the model is called on rows rebuilt with its own names: X's columns in
        # another order would be read as the wrong features
        fitted_names = [str(name) for name in fitted_names]
        raise ValueError(
            f"X has the columns {list(names)}, but the prefit estimator was fitted "
            f"on {fitted_names}; pass X with the estimator's columns in its "
            f"order, X[{fitted_names if order is None else order}]."
        )
    return model


def closed_form_plans(method, estimator, response_method, background, outputs, decode,
                      codec, column_group, hierarchy):
    """(tree plan, linear plan, method): TreeSHAP's or the linear closed form's reading
    of ``estimator`` when ``method`` asks for it or "auto" finds it (checked on the
    background), else (None, None, method). A hierarchy's Owen values have neither."""
    tree_plan = linear_plan = None
    resolved = method
    if method in ("tree", "auto") and hierarchy is None:
        # Trees read numbers: a categorical column's codes (a bool's 0/1) are what a
        # tree model trained on the DataFrame splits on (XGBoost), text columns have
        # none, unless the model encodes its input itself (HistGradientBoosting); the
        # plan's cross-check on the background confirms what the trees read.
        plan = plan_tree(estimator, response_method, background, outputs, decode,
                         codes_are_numbers=codec is None or codec.codes_are_numbers)
        if not isinstance(plan, str):
            tree_plan, resolved = plan, "tree"
            if column_group is not None:
                tree_plan = (*plan, group_paths(plan[0], column_group))
        elif method == "tree":
            raise ValueError("method='tree' cannot explain this model exactly: "
                             + plan.rstrip("."))
    if method in ("linear", "auto") and tree_plan is None and hierarchy is None:
        # a model linear in its column-wise transformed inputs: closed form, checked on
        # the background like the trees
        plan = plan_linear(estimator, response_method, background, outputs, decode)
        if not isinstance(plan, str):
            linear_plan, resolved = plan, "linear"
        elif method == "linear":
            raise ValueError("method='linear' cannot explain this model exactly: "
                             + plan.rstrip("."))
    return tree_plan, linear_plan, resolved
