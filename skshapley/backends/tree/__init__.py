"""Exact TreeSHAP on the ensemble's merged paths and on its trees node by node: values and
interaction values of the path-dependent game, and the interventional game's values
from background bit patterns or by walking the trees with sets of background rows.

One module per backend (``_numpy``, the reference; ``_numba``; ``_numba_cuda``;
``_cupy``), each with every kernel of ``KERNELS`` under the same signature. The kernels
take the ensemble's arrays as one argument: :class:`PathArrays` (the paths) or
:class:`NodeArrays` (the trees), and the grouped kernels
:class:`PathGroups` (each path's players when they are groups of columns).
"""

from skshapley.backends.tree._arrays import NodeArrays, PathArrays, PathGroups

KERNELS = (
    "tree_path_shap",
    "tree_path_interactions",
    "tree_grouped_path_shap",
    "tree_grouped_path_interactions",
    "tree_background_patterns",
    "tree_interventional_shap",
    "tree_interventional_walk",
)

__all__ = ["KERNELS", "NodeArrays", "PathArrays", "PathGroups"]
