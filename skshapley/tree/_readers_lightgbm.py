"""LightGBM's dumped trees read into a TreeEnsemble: numeric and categorical splits, its
missing types, the objectives whose margin is the explained output."""

from __future__ import annotations

import dataclasses

import numpy as np

from skshapley.tree._ensemble import (
    MISSING_NAN,
    MISSING_NAN_OR_ZERO,
    NodeTable,
)
from skshapley.tree._readers import (
    _category_runs,
    _complement,
    _le_threshold_float64,
    _probe_rows,
    _table_from_children,
    _with_intervals,
    _with_offset,
)


class LightGBMCategoryCodes:
    """What a LightGBM model trained on a DataFrame of pandas categoricals reads: each
    categorical column's codes relative to the categories it was trained with (NaN when
    missing or unseen), as LightGBM recodes a frame itself; arrays pass as they are."""

    def __init__(self, categories):
        self.categories = [list(known) for known in categories]

    def __call__(self, X):
        if not hasattr(X, "dtypes"):
            return np.asarray(X)
        out = np.empty(X.shape)
        known = iter(self.categories)
        for j, dtype in enumerate(X.dtypes):
            column = X.iloc[:, j]
            if str(dtype) != "category":
                out[:, j] = column.to_numpy(dtype=np.float64, na_value=np.nan)
                continue
            codes = column.cat.set_categories(next(known)).cat.codes.to_numpy()
            out[:, j] = np.where(codes < 0, np.nan, codes)
        return out


def _lightgbm_categorical(node, left, right, intervals, largest):
    """A LightGBM categorical split (``decision_type == "=="``): the value truncated
    towards zero to an integer code goes left if the node lists it; NaN, negative codes
    and the rest go right (LightGBM's ``CategoricalDecision``). Truncation sends
    (-1, 0) to code 0, so code 0's interval starts just above -1."""
    codes = [int(code) for code in str(node["threshold"]).split("||")]
    feature = int(node["split_feature"])
    largest[feature] = max(largest.get(feature, 0), *codes)
    go_left = _category_runs(codes)
    if go_left and go_left[0][0] == 0.0:
        go_left = ((float(np.nextafter(-1.0, 0.0)), go_left[0][1]),) + go_left[1:]
    intervals[left], intervals[right] = go_left, _complement(go_left)
    return (left, right, feature, np.inf, False, float(node["internal_count"]), 0.0,
            MISSING_NAN)


# LightGBM objectives whose prediction is the raw score (besides "regression*"); the
# ranking ones too (issue 28)
_LIGHTGBM_IDENTITY = ("quantile", "huber", "fair", "mape", "lambdarank", "rank_xendcg")


def read_lightgbm(model):
    """TreeEnsemble of a LightGBM ``Booster`` or sklearn wrapper (``dump_model``)."""
    booster = model.booster_ if hasattr(model, "booster_") else model
    name = type(model).__name__
    dump = booster.dump_model()
    n_features = int(dump["max_feature_idx"]) + 1
    n_outputs = int(dump.get("num_tree_per_iteration", 1))
    tables = []
    largest = {}  # categorical feature -> largest code its splits name
    for t, info in enumerate(dump["tree_info"]):
        nodes = []  # (left, right, feature, cut, default_left, cover, value, mode)
        intervals = {}  # edges of categorical splits

        def visit(node, nodes=nodes, intervals=intervals):
            index = len(nodes)
            nodes.append(None)
            if "leaf_value" in node or "split_index" not in node:
                if "leaf_coeff" in node:
                    raise ValueError(f"{name} has linear_tree=True: its leaves are linear "
                                     "models of the row, which method='tree' does not read.")
                nodes[index] = (-1, -1, 0, 0.0, False, float(node.get("leaf_count", 1)),
                                float(node.get("leaf_value", 0.0)), MISSING_NAN)
                return index
            if node["decision_type"] not in ("<=", "=="):
                raise ValueError(f"LightGBM decision type {node['decision_type']!r} is not "
                                 "supported by method='tree'.")
            left = visit(node["left_child"], nodes)
            right = visit(node["right_child"], nodes)
            if node["decision_type"] == "==":
                nodes[index] = _lightgbm_categorical(node, left, right, intervals, largest)
                return index
            cut = float(_le_threshold_float64(node["threshold"]))
            missing_type = node.get("missing_type", "None")
            default_left = bool(node["default_left"])
            mode = MISSING_NAN
            if missing_type == "None":
                # NaN is replaced by 0 and compared: fold into the interval test.
                default_left = 0.0 < cut
            elif missing_type == "Zero":
                mode = MISSING_NAN_OR_ZERO
            nodes[index] = (left, right, int(node["split_feature"]), cut, default_left,
                            float(node["internal_count"]), 0.0, mode)
            return index

        visit(info["tree_structure"])
        columns = list(zip(*nodes, strict=True))
        leaf = np.zeros((len(nodes), n_outputs))
        leaf[:, t % n_outputs] = columns[6]
        table = _table_from_children(columns[0], columns[1], columns[2], columns[3],
                                     columns[4], columns[5], leaf,
                                     missing_mode=np.asarray(columns[7], np.uint8))
        tables.append(_with_intervals(table, intervals) if intervals else table)
    probes = _probe_rows(n_features, categories=largest)
    raw = booster.predict(probes, raw_score=True)
    if dump.get("average_output", False):
        # boosting_type="rf": predict averages the trees, raw_score sums them
        n_iterations = len(tables) // n_outputs
        tables = [NodeTable(**{**t.__dict__, "leaf_values": t.leaf_values / n_iterations})
                  for t in tables]
        raw = raw / n_iterations
    objective = str(dump.get("objective", "regression")).split()[0]
    classifier = objective in ("binary", "multiclass", "multiclassova", "cross_entropy")
    identity = objective.startswith("regression") or objective in _LIGHTGBM_IDENTITY
    link = ("logit" if objective in ("binary", "cross_entropy") else "softmax") \
        if classifier else ("identity" if identity else "other")
    ensemble = _with_offset(tables, raw, probes, n_features, n_outputs, np.float64, name,
                            classifier, link=link)
    categories = getattr(booster, "pandas_categorical", None)
    if categories:  # trained on a DataFrame of pandas categoricals: take such frames too
        ensemble = dataclasses.replace(ensemble,
                                       input_encoder=LightGBMCategoryCodes(categories))
    return ensemble
