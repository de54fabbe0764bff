"""Readers: scikit-learn, XGBoost and LightGBM trees to node tables.

Every reader ends by checking the IR against the model's own raw output on probe rows
(:func:`_verify`): a model read inexactly raises instead of being explained silently
wrong. Categorical splits (XGBoost, LightGBM, HistGradientBoosting) become unions of
intervals of category codes (:class:`NodeTable` ``intervals``).
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np

from skshapley.tree._ensemble import (
    NodeTable,
    PlacedColumns,
    build_ensemble,
)


def _le_threshold_float32(threshold):
    """x32 <= t (t float64) as x32 < t+, t+ the smallest float32 above t."""
    t = np.asarray(threshold, np.float64)
    f = t.astype(np.float32)
    f = np.where(f.astype(np.float64) <= t, np.nextafter(f, np.float32(np.inf)), f)
    return f.astype(np.float64)


def _le_threshold_float64(threshold):
    """x <= t in float64 as x < nextafter(t, +inf)."""
    return np.nextafter(np.asarray(threshold, np.float64), np.inf)


def _table_from_children(left, right, feature, cut, default_left, cover, leaf_values,
                         missing_mode=None):
    """Node table of a binary tree given as child arrays (-1 at leaves).

    ``cut`` is the canonical threshold: left is x < cut, right x >= cut.
    """
    left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
    n = len(left)
    is_leaf = left < 0
    parent = np.full(n, -1, np.int64)
    internal = np.flatnonzero(~is_leaf)
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    edge_feature = np.zeros(n, np.int32)
    lower = np.full(n, -np.inf)
    upper = np.full(n, np.inf)
    missing = np.zeros(n, bool)
    mode = np.zeros(n, np.uint8)
    default_left = np.asarray(default_left, bool)
    if missing_mode is None:
        missing_mode = np.zeros(n, np.uint8)
    for children, is_left in ((left[internal], True), (right[internal], False)):
        edge_feature[children] = np.asarray(feature)[internal]
        if is_left:
            upper[children] = np.asarray(cut, np.float64)[internal]
        else:
            lower[children] = np.asarray(cut, np.float64)[internal]
        missing[children] = default_left[internal] == is_left
        mode[children] = np.asarray(missing_mode)[internal]
    return NodeTable(parent=parent, feature=edge_feature, lower=lower, upper=upper,
                     missing_branch=missing, missing_mode=mode,
                     cover=np.asarray(cover, np.float64), is_leaf=is_leaf,
                     leaf_values=np.asarray(leaf_values, np.float64).reshape(n, -1))


def _category_runs(chosen):
    """Disjoint half-open intervals covering exactly the integer codes ``chosen`` (and the
    non-integers that truncate to them, as XGBoost casts a value to its category)."""
    runs = []
    for code in sorted(set(chosen)):
        if runs and runs[-1][1] == code:
            runs[-1] = (runs[-1][0], code + 1.0)
        else:
            runs.append((float(code), code + 1.0))
    return tuple(runs)


def _complement(runs):
    """The real line outside ``runs`` (negative codes are invalid: they go there too)."""
    edges = [-np.inf] + [x for run in runs for x in run] + [np.inf]
    return tuple((a, b) for a, b in zip(edges[::2], edges[1::2], strict=True) if a < b)


def _xgboost_categorical(table, tree, left, right, largest):
    """Edges of the tree's categorical splits: codes in the node's set go right, all
    other values left, missing ones the default way (XGBoost's ``Decision``). Records
    in ``largest`` (feature -> code) the largest code each feature's splits name."""
    intervals = {}
    categories = tree["categories"]
    for node, start, size in zip(tree["categories_nodes"], tree["categories_segments"],
                                 tree["categories_sizes"], strict=True):
        codes = [int(c) for c in categories[start:start + size]]
        feature = int(tree["split_indices"][node])
        largest[feature] = max(largest.get(feature, 0), *codes, 0)
        chosen = _category_runs(codes)
        intervals[int(right[node])] = chosen
        intervals[int(left[node])] = _complement(chosen)
    return _with_intervals(table, intervals)


def _with_intervals(table, intervals):
    """``table`` with the edges in ``intervals`` (child node -> union of intervals)
    followed by values in the union; ``lower``/``upper`` hold its hull."""
    for child, union in intervals.items():
        if union:
            table.lower[child], table.upper[child] = union[0][0], union[-1][1]
        else:  # no value takes this edge (a missing one still may)
            table.lower[child] = table.upper[child] = np.inf
    return dataclasses.replace(table, intervals=intervals)


def _probe_rows(n_features, seed=0, categories=None):
    rng = np.random.default_rng(seed)
    rows = [np.zeros(n_features), np.ones(n_features), rng.normal(size=n_features),
            rng.normal(scale=100.0, size=n_features)]
    if categories:  # feature -> largest code a split names: every code, and one beyond
        extra = rng.normal(size=(64, n_features))
        for j, largest in categories.items():
            extra[:, j] = rng.integers(-1, largest + 3, size=64)
            extra[::8, j] = np.nan  # missing values take the splits' default way
        rows.append(extra)
    return np.vstack(rows)


def _verify(ensemble, model_output, X, what, ours=None):
    """Raise if the IR's raw output (``ours``, computed if not given) differs from the
    model's on ``X``."""
    if ours is None:
        ours = ensemble.predict_raw(X)
    model_output = np.asarray(model_output, np.float64).reshape(ours.shape)
    # Sum of |leaf values| bounds the output; float32 peers (XGBoost) round each partial
    # sum, so allow a relative 1e-5 of it. A misread path is off by a whole leaf value.
    scale = max(1.0, float(np.max(np.abs(model_output))),
                float(np.abs(ensemble.out_value).sum()) / max(1, ensemble.n_outputs) * 1e-2)
    error = float(np.max(np.abs(ours - model_output)))
    if not np.isfinite(error) or error > 1e-5 * scale:
        raise ValueError(
            f"Could not read {what} exactly: its paths reproduce the model's raw output "
            f"only to {error:.3g}; please report this model."
        )


# --------------------------------------------------------------------------- sklearn


def _sklearn_tree_table(tree, scale, classifier):
    t = tree.tree_
    value = t.value
    if classifier:
        if value.shape[1] != 1:
            raise ValueError("multi-output tree classifiers are not supported by method='tree'.")
        leaf = value[:, 0, :]
        total = leaf.sum(axis=1, keepdims=True)
        leaf = np.divide(leaf, total, out=np.zeros_like(leaf), where=total > 0)
    else:
        leaf = value[:, :, 0]
    default_left = getattr(t, "missing_go_to_left", np.zeros(t.node_count, np.uint8))
    return _table_from_children(
        t.children_left, t.children_right, np.maximum(t.feature, 0),
        _le_threshold_float32(t.threshold), default_left, t.weighted_n_node_samples,
        leaf * scale,
    )


def _bitset_codes(bitset):
    """Codes set in one of scikit-learn's 256-bit category bitsets (8 x uint32)."""
    bits = np.unpackbits(np.asarray(bitset, "<u4").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits).tolist()


def _union(*parts):
    """Sorted union of disjoint unions of half-open intervals, touching ones joined."""
    out = []
    for lo, hi in sorted(run for part in parts for run in part):
        if out and out[-1][1] >= lo:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _hist_categorical(table, nodes, left_bitsets, known_bitsets, known_row, feature_of):
    """Edges of a HistGradientBoosting tree's categorical splits (scikit-learn's
    ``_predict_one_from_raw_data``): codes in the node's left set go left, other known
    codes right, and NaN, negative values and unknown codes the missing-value way.
    A code is the value truncated to an integer; the model's own encoder only ever
    gives known codes or NaN, so values of 256 and above (undefined in the library's
    cast) are given the unknown-code way."""
    intervals = {}
    for node in np.flatnonzero(nodes["is_categorical"] & ~nodes["is_leaf"]):
        left_codes = set(_bitset_codes(left_bitsets[nodes["bitset_idx"][node]]))
        known = set(_bitset_codes(known_bitsets[known_row[feature_of[node]]]))
        go_left, go_right = _category_runs(left_codes), _category_runs(known - left_codes)
        unknown = _complement(_category_runs(known | left_codes))
        if nodes["missing_go_to_left"][node]:
            go_left = _union(go_left, unknown)
        else:
            go_right = _union(go_right, unknown)
        intervals[int(nodes["left"][node])] = go_left
        intervals[int(nodes["right"][node])] = go_right
    return _with_intervals(table, intervals)


def _hist_gradient_boosting(model):
    """(node tables, n_outputs, categorical column -> largest code, column order)."""
    predictors = model._predictors
    n_outputs = len(predictors[0])
    remapped = getattr(model, "_is_categorical_remapped", None)
    categorical = model.is_categorical_
    if remapped is None:
        order = np.arange(model.n_features_in_)
        largest = {}
    else:  # the preprocessor puts the categorical columns first
        order = np.r_[np.flatnonzero(categorical), np.flatnonzero(~categorical)]
        known_bitsets, known_row = model._bin_mapper.make_known_categories_bitsets()
        largest = {int(order[i]): int(model._bin_mapper.n_bins_non_missing_[i])
                   for i in np.flatnonzero(remapped)}
    tables = []
    for iteration in predictors:
        for k, predictor in enumerate(iteration):
            nodes = predictor.nodes
            leaf = np.zeros((len(nodes), n_outputs))
            leaf[:, k] = np.where(nodes["is_leaf"], nodes["value"], 0.0)
            left = np.where(nodes["is_leaf"], -1, nodes["left"].astype(np.int64))
            right = np.where(nodes["is_leaf"], -1, nodes["right"].astype(np.int64))
            table = _table_from_children(
                left, right, order[nodes["feature_idx"]],
                _le_threshold_float64(nodes["num_threshold"]), nodes["missing_go_to_left"],
                nodes["count"], leaf,
            )
            if np.any(nodes["is_categorical"] & ~nodes["is_leaf"]):
                if remapped is None:
                    raise ValueError(
                        "HistGradientBoosting categorical splits are read through the "
                        "model's input preprocessor, which this model does not have.")
                table = _hist_categorical(table, nodes, predictor.raw_left_cat_bitsets,
                                          known_bitsets, known_row, nodes["feature_idx"])
            tables.append(table)
    return tables, n_outputs, largest, order


def _hist_raw_output(model, X):
    """The model's raw output on rows already in its trees' input space (codes)."""
    raw = np.zeros((X.shape[0], model.n_trees_per_iteration_)) + model._baseline_prediction
    model._predict_iterations(np.ascontiguousarray(X), model._predictors, raw,
                              is_binned=False, n_threads=1)
    return raw


def read_sklearn(model):
    """Node tables of a fitted scikit-learn tree model; returns a TreeEnsemble."""
    from sklearn.base import is_classifier
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.tree import BaseDecisionTree

    forests = (RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier,
               ExtraTreesRegressor)

    name = type(model).__name__
    n_features = int(model.n_features_in_)
    classifier = is_classifier(model)
    probes = _probe_rows(n_features)
    if isinstance(model, (BaseDecisionTree, *forests)):
        trees = [model] if isinstance(model, BaseDecisionTree) else list(model.estimators_)
        tables = [_sklearn_tree_table(tree, 1.0 / len(trees), classifier) for tree in trees]
        n_outputs = tables[0].leaf_values.shape[1]
        if classifier:
            output, raw = "probability", model.predict_proba(probes)
        else:
            output, raw = "value", model.predict(probes)
        ensemble = build_ensemble(tables, n_features=n_features, n_outputs=n_outputs,
                                  offset=np.zeros(n_outputs), input_dtype=np.float32,
                                  output=output, model_name=name)
        _verify(ensemble, raw, probes, name)
        return ensemble
    if isinstance(model, (GradientBoostingRegressor, GradientBoostingClassifier)):
        _check_constant_init(model)
        estimators = model.estimators_
        n_outputs = estimators.shape[1]
        tables = []
        for stage in estimators:
            for k, tree in enumerate(stage):
                table = _sklearn_tree_table(tree, model.learning_rate, False)
                leaf = np.zeros((len(table.parent), n_outputs))
                leaf[:, k] = table.leaf_values[:, 0]
                tables.append(NodeTable(**{**table.__dict__, "leaf_values": leaf}))
        raw = model.decision_function(probes) if classifier else model.predict(probes)
        return _with_offset(tables, raw, probes, n_features, n_outputs, np.float32, name,
                            classifier)
    if isinstance(model, (HistGradientBoostingRegressor, HistGradientBoostingClassifier)):
        tables, n_outputs, largest, order = _hist_gradient_boosting(model)
        link = None if classifier or model.loss in ("squared_error", "absolute_error",
                                                    "quantile") else "other"
        if not largest:
            raw = model.decision_function(probes) if classifier else model._raw_predict(probes)
            return _with_offset(tables, raw, probes, n_features, n_outputs, np.float64, name,
                                classifier, link=link)
        # Checked in the trees' own input space (codes in the original column order), then
        # given the model's encoder, so that the ensemble takes what the model takes.
        probes = _probe_rows(n_features, categories=largest)
        # fractional codes truncate; 256 and above is undefined in the library's cast
        probes[:4, list(largest)] = np.abs(probes[:4, list(largest)]) % 256
        raw = _hist_raw_output(model, probes[:, order])
        ensemble = _with_offset(tables, raw, probes, n_features, n_outputs, np.float64,
                                name, classifier, link=link)
        # its preprocessor encodes the categorical columns and moves them first
        return dataclasses.replace(
            ensemble, input_encoder=PlacedColumns(model._preprocessor, order, n_features))
    raise ValueError(f"{name} is not a tree model that method='tree' can read.")


def _check_constant_init(model):
    """GradientBoosting starts from ``init_``: its default (a constant, DummyRegressor or
    DummyClassifier) or "zero" become the offset; any other estimator's predictions
    depend on the row and are not in the trees."""
    from sklearn.dummy import DummyClassifier, DummyRegressor

    init = model.init_
    if isinstance(init, str) and init == "zero" or isinstance(init, (DummyClassifier,
                                                                    DummyRegressor)):
        return
    raise ValueError(
        f"{type(model).__name__} starts from init={type(init).__name__}, whose predictions "
        "are not in its trees; method='tree' reads GradientBoosting with init=None (a "
        "constant) or init='zero' only."
    )


def _with_offset(tables, raw, probes, n_features, n_outputs, input_dtype, name, classifier,
                 link=None):
    """Build with offset = model margin minus the sum of leaves, checked constant."""
    ensemble = build_ensemble(tables, n_features=n_features, n_outputs=n_outputs,
                              offset=np.zeros(n_outputs), input_dtype=input_dtype,
                              model_name=name)
    raw = np.asarray(raw, np.float64).reshape(len(probes), n_outputs)
    leaves_only = ensemble.predict_raw(probes)
    offset = (raw - leaves_only).mean(axis=0)
    if link is None:
        link = ("logit" if n_outputs == 1 else "softmax") if classifier else "identity"
    # the offset only shifts the outputs and the base value: no second build
    ensemble = dataclasses.replace(
        ensemble, offset=offset, expected_value=ensemble.expected_value + offset,
        output="margin" if classifier else "value", link=link)
    _verify(ensemble, raw, probes, name, ours=leaves_only + offset)
    return ensemble


# --------------------------------------------------------------------------- XGBoost


def read_xgboost(model):
    """TreeEnsemble of an XGBoost ``Booster`` or sklearn wrapper (read from its JSON model)."""
    import xgboost

    booster = model.get_booster() if hasattr(model, "get_booster") else model
    name = type(model).__name__
    missing = getattr(model, "missing", np.nan)
    if missing is not None and not np.isnan(missing):
        # the trees route NaN the missing way; a row's sentinel value would be compared
        raise ValueError(
            f"{name} was fitted with missing={missing!r}; method='tree' reads missing "
            "values as NaN: replace that value by NaN and refit with missing=np.nan."
        )
    config = json.loads(bytes(booster.save_raw(raw_format="json")))
    learner = config["learner"]
    gbm = learner["gradient_booster"]
    booster_name = gbm["name"]
    if booster_name == "gblinear":
        raise ValueError("XGBoost gblinear models have no trees; method='tree' cannot read them.")
    weights = None
    if booster_name == "dart":
        weights = np.asarray(gbm["weight_drop"], np.float64)
        gbm = gbm["gbtree"]
    trees = gbm["model"]["trees"]
    tree_info = np.asarray(gbm["model"]["tree_info"], np.int64)
    rounds = _predicted_rounds(model)
    if rounds is not None:
        # the sklearn wrapper predicts with the best iteration of early stopping only
        kept = int(np.asarray(gbm["model"]["iteration_indptr"], np.int64)[rounds])
        trees, tree_info = trees[:kept], tree_info[:kept]
        weights = None if weights is None else weights[:kept]
    params = learner["learner_model_param"]
    n_features = int(params["num_feature"])
    n_outputs = max(1, int(params.get("num_class", "0")), int(params.get("num_target", "1")))
    tables = []
    largest = {}  # categorical feature -> largest code its splits name
    for t, tree in enumerate(trees):
        if int(tree["tree_param"].get("size_leaf_vector", "1")) > 1:
            raise ValueError("XGBoost multi-output trees (vector leaves) are not supported "
                             "by method='tree' yet.")
        left = np.asarray(tree["left_children"], np.int64)
        right = np.asarray(tree["right_children"], np.int64)
        cond = np.asarray(tree["split_conditions"], np.float32).astype(np.float64)
        is_leaf = left < 0
        leaf = np.zeros((len(left), n_outputs))
        scale = 1.0 if weights is None else weights[t]
        leaf[:, tree_info[t]] = np.where(is_leaf, cond * scale, 0.0)
        table = _table_from_children(
            left, right, np.asarray(tree["split_indices"], np.int32), cond,
            np.asarray(tree["default_left"], bool), np.asarray(tree["sum_hessian"]), leaf,
        )
        if tree.get("categories_nodes"):
            table = _xgboost_categorical(table, tree, left, right, largest)
        tables.append(table)
    probes = _probe_rows(n_features, categories=largest)
    # the booster's own feature names and types, so that it reads the probes as it was
    # trained (categorical features as codes)
    types = booster.feature_types
    matrix = xgboost.DMatrix(probes, feature_names=booster.feature_names, feature_types=types,
                             enable_categorical=bool(types and "c" in types))
    raw = booster.predict(matrix, output_margin=True,
                          iteration_range=(0, 0 if rounds is None else rounds))
    objective = learner["objective"]["name"]
    if objective in ("binary:logistic", "binary:logitraw", "reg:logistic"):
        link = "logit"
    elif objective.startswith("multi:"):
        link = "softmax"
    else:
        # What predict returns decides: the margin itself (the reg:*error objectives,
        # every rank:* objective, a custom one) is a sum over trees; anything else (exp
        # of count:poisson, reg:gamma, reg:tweedie and survival:*, the labels of
        # binary:hinge) is not. A name table refused XGBRanker (issue 28).
        predicted = booster.predict(matrix, iteration_range=(0, 0 if rounds is None
                                                             else rounds))
        link = "identity" if np.array_equal(predicted, raw) else "other"
    classifier = link in ("logit", "softmax")
    return _with_offset(tables, raw, probes, n_features, n_outputs, np.float32, name,
                        classifier, link=link)


def _predicted_rounds(model):
    """Boosting rounds an XGBoost sklearn wrapper predicts with: best_iteration + 1 after
    early stopping, else None (all); a bare Booster's predict uses every round."""
    if not hasattr(model, "get_booster"):
        return None
    try:
        best = model.best_iteration
    except AttributeError:  # not fitted with early stopping
        return None
    return None if best is None else int(best) + 1


# --------------------------------------------------------------------------- LightGBM


def read_model(model):
    """A :class:`TreeEnsemble` from a fitted tree model of scikit-learn, XGBoost or
    LightGBM, or a Pipeline of column-wise transformers (scalers, imputers, ...) ending
    in one.

    Raises
    ------
    ValueError
        If the model is not a supported tree ensemble, or uses a feature (categorical
        splits, vector leaves) that cannot be read exactly yet.
    """
    from sklearn.pipeline import Pipeline

    if isinstance(model, Pipeline):
        from skshapley.tree._pipeline import read_pipeline

        return read_pipeline(model, read_model)
    module = type(model).__module__.split(".")[0]
    # imported here: the LightGBM reader uses this module's table helpers
    from skshapley.tree._readers_lightgbm import read_lightgbm

    readers = {"sklearn": read_sklearn, "xgboost": read_xgboost, "lightgbm": read_lightgbm}
    if module in readers:
        with warnings.catch_warnings():
            # The probe rows are bare arrays; a model fitted on a DataFrame warns about it.
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            try:
                return readers[module](model)
            except (AttributeError, KeyError) as err:  # internals of another library version
                raise ValueError(f"Could not read {type(model).__name__}'s trees: "
                                 f"{type(err).__name__}: {err}") from err
    raise ValueError(
        f"method='tree' reads scikit-learn, XGBoost and LightGBM tree models; got "
        f"{type(model).__name__} from {module!r}."
    )
