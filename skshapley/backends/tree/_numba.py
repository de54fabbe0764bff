"""Numba CPU kernels of exact TreeSHAP, twins of ``_numpy.py``: the path-dependent kernels
(``_numba_paths.py``), the interventional pattern tables (``_numba_patterns.py``) and the
walk of few rows (``_numba_walk.py``), which share the background's sorted-run index
(``_numba_index.py``).
"""

from skshapley.backends.tree._numba_paths import (
    tree_grouped_path_interactions,
    tree_grouped_path_shap,
    tree_path_interactions,
    tree_path_shap,
)
from skshapley.backends.tree._numba_patterns import (
    tree_background_patterns,
    tree_interventional_shap,
)
from skshapley.backends.tree._numba_walk import tree_interventional_walk

__all__ = ["tree_background_patterns", "tree_grouped_path_interactions",
           "tree_grouped_path_shap", "tree_interventional_shap", "tree_interventional_walk",
           "tree_path_interactions", "tree_path_shap"]
