"""The ensemble's arrays as the tree kernels take them: one argument each, not the ten
path arrays or fourteen tree arrays one by one (and, for grouped paths, the runs that
make each path's players). All are NamedTuples of arrays (and two
sizes), which numba takes as they are, so compiled kernels read the fields by name.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class PathArrays(NamedTuple):
    """The merged root-to-leaf paths of an ensemble (``skshapley.tree.TreeEnsemble``
    documents each field).

    Elements of path p are ``path_ptr[p]:path_ptr[p + 1]``; leaf values of path p are
    ``out_ptr[p]:out_ptr[p + 1]`` of ``out_index`` (output) and ``out_value``.
    """

    path_ptr: np.ndarray  # int64 (n_paths + 1,)
    feature: np.ndarray  # int32 (n_elements,)
    lower: np.ndarray  # float64 (n_elements,)
    upper: np.ndarray  # float64 (n_elements,)
    missing_branch: np.ndarray  # uint8 (n_elements,)
    missing_mode: np.ndarray  # uint8 (n_elements,)
    zero_fraction: np.ndarray  # float64 (n_elements,)
    out_ptr: np.ndarray  # int64 (n_paths + 1,)
    out_index: np.ndarray  # int32
    out_value: np.ndarray  # float64


class PathGroups(NamedTuple):
    """The players of paths whose players are groups of columns.

    Each path's elements (``PathArrays``, sorted by group, then column, within the path)
    fall into runs that test columns of one group; a run is one player of the path. Its
    one fraction is 1 where the row satisfies every element of the run, its zero fraction
    the product of theirs (TreeSHAP's repeated-feature rule, Lundberg et al. 2020,
    Alg. 2). Players of path p are ``player_ptr[p]:player_ptr[p + 1]``.
    """

    player_ptr: np.ndarray  # int64 (n_paths + 1,)
    first: np.ndarray  # int64 (n_players,): the run's first element (index into PathArrays)
    length: np.ndarray  # int64 (n_players,): elements in the run
    zero_fraction: np.ndarray  # float64 (n_players,)
    slot: np.ndarray  # int32 (n_players,): the group, the output column of the player


class NodeArrays(NamedTuple):
    """The trees of an ensemble node by node, all trees' nodes concatenated
    (``skshapley.tree._ensemble.TreeNodes`` documents each field)."""

    tree_root: np.ndarray  # int64 (n_trees,)
    child_ptr: np.ndarray  # int64 (n_nodes + 1,)
    child: np.ndarray  # int64
    feature: np.ndarray  # int32 (n_nodes,)
    edge_ptr: np.ndarray  # int64 (n_nodes + 1,)
    edge_lower: np.ndarray  # float64
    edge_upper: np.ndarray  # float64
    missing_branch: np.ndarray  # uint8 (n_nodes,)
    missing_mode: np.ndarray  # uint8 (n_nodes,)
    value_ptr: np.ndarray  # int64 (n_nodes + 1,)
    value_index: np.ndarray  # int32
    value: np.ndarray  # float64
    max_depth: int
    max_children: int
