"""Exact TreeSHAP for tree ensembles (Lundberg et al. 2020; GPUTreeShap, Mitchell, Frank &
Holmes 2022): the ensemble IR, readers and kernels."""

from skshapley.backends.tree import PACKINGS, Packing, pack_paths
from skshapley.tree._api import FEATURE_PERTURBATIONS, TreeShapValues, tree_shap
from skshapley.tree._ensemble import (
    MAX_PATH_FEATURES,
    MAX_PATTERN_FEATURES,
    TreeEnsemble,
    build_ensemble,
)
from skshapley.tree._groups import group_paths, grouped_tree_shap
from skshapley.tree._pipeline import column_of_outputs
from skshapley.tree._readers import read_model

__all__ = [
    "FEATURE_PERTURBATIONS",
    "MAX_PATH_FEATURES",
    "MAX_PATTERN_FEATURES",
    "PACKINGS",
    "Packing",
    "TreeEnsemble",
    "TreeShapValues",
    "build_ensemble",
    "column_of_outputs",
    "grouped_tree_shap",
    "pack_paths",
    "read_model",
    "tree_shap",
    "group_paths",
]
