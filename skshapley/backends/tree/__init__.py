"""Exact TreeSHAP on the ensemble's merged paths and on its trees node by node: values and
interaction values of the path-dependent game, and the interventional game's values
from background bit patterns or by walking the trees with sets of background rows.

One module per backend (``_numpy``, the reference; ``_numba``; ``_numba_cuda``;
``_cupy``), each with every kernel of ``KERNELS`` under the same signature. The kernels
take the ensemble's arrays as one argument: :class:`PathArrays` (the paths) or
:class:`NodeArrays` (the trees), and the grouped kernels
:class:`PathGroups` (each path's players when they are groups of columns).

Also public to the rest of the library: the element encodings the readers write
(``MISSING_NAN``, ``CATEGORY_SET`` ...), ``elements_satisfied`` (which rows satisfy an
element), the path packings of the GPU layout and the ``LayoutCache`` of its device
copies (owned by the callers of the GPU kernels, passed as ``cache``), and
``tree_leaf_outputs`` (the ensemble's raw outputs, for the explainer's efficiency
check).
"""

from skshapley.backends.tree._arrays import NodeArrays, PathArrays, PathGroups
from skshapley.backends.tree._layout import LayoutCache
from skshapley.backends.tree._numba_walk import tree_leaf_outputs
from skshapley.backends.tree._numpy import (
    CATEGORY_SET,
    LIGHTGBM_ZERO_THRESHOLD,
    MISSING_NAN,
    MISSING_NAN_OR_ZERO,
    category_set_words,
    elements_satisfied,
)
from skshapley.backends.tree._packing import PACKINGS, Packing, pack_paths

KERNELS = (
    "tree_path_shap",
    "tree_path_interactions",
    "tree_grouped_path_shap",
    "tree_grouped_path_interactions",
    "tree_background_patterns",
    "tree_interventional_shap",
    "tree_interventional_walk",
)

__all__ = [
    "CATEGORY_SET",
    "KERNELS",
    "LIGHTGBM_ZERO_THRESHOLD",
    "LayoutCache",
    "MISSING_NAN",
    "MISSING_NAN_OR_ZERO",
    "NodeArrays",
    "PACKINGS",
    "Packing",
    "PathArrays",
    "PathGroups",
    "category_set_words",
    "elements_satisfied",
    "pack_paths",
    "tree_leaf_outputs",
]
