"""The ensemble IR: every root-to-leaf path as merged elements (SoA arrays), as in
GPUTreeShap (Mitchell, Frank & Holmes 2022, Sec. 3.1-3.2).

Readers (``_readers.py``) turn a library's trees into *node tables* — per node: parent,
the feature and interval of the edge into it, whether missing values follow that edge,
and its cover — and :func:`build_ensemble` turns the tables of all trees into paths:
walk up from every leaf (vectorised over leaves), then merge the elements of a path that
test the same feature into one interval, which is legal because TreeSHAP's
extend and unwind commute.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from skshapley.backends.tree import (  # noqa: F401  (re-exported for readers)
    CATEGORY_SET,
    MISSING_NAN,
    MISSING_NAN_OR_ZERO,
    NodeArrays,
    PathArrays,
    category_set_words,
    elements_satisfied,
)
from skshapley.utils import NumberInterval, validate_params

# Paths with more distinct features than this cannot be handled by the bit-pattern
# kernels (interventional) and by the warp kernel (31).
MAX_PATTERN_FEATURES = 63
# ... nor than this by the path-dependent kernels: a row's pattern along a path is one
# uint64 and the Gauss-Legendre tables go to 32 nodes (polynomials of degree 63). A path
# of 80 distinct features gave values off by 1e281 (numba) or an IndexError (NumPy).
MAX_PATH_FEATURES = 64


@dataclass(frozen=True)
class NodeTable:
    """One tree as per-node arrays; node 0 is the root.

    Attributes
    ----------
    parent : int64 (n_nodes,)
        Parent index, -1 for the root.
    feature : int32 (n_nodes,)
        Feature tested by the parent on the edge into this node (unused at the root).
    lower, upper : float64 (n_nodes,)
        The edge is followed iff lower <= x < upper (x cast to the ensemble's input dtype).
    missing_branch : bool (n_nodes,)
        Missing values follow this edge.
    missing_mode : uint8 (n_nodes,)
        ``MISSING_NAN`` or ``MISSING_NAN_OR_ZERO``.
    cover : float64 (n_nodes,)
        Node cover (weighted training count or hessian sum).
    is_leaf : bool (n_nodes,)
    leaf_values : float64 (n_nodes, n_outputs)
        Leaf values already scaled (learning rate, 1/n_trees, ...); rows of internal
        nodes are ignored.
    intervals : dict, optional
        For edges of categorical splits: node -> tuple of disjoint ``(lo, hi)`` pairs, the
        edge being followed iff x lies in one of them (``lower``/``upper`` hold their
        hull). :func:`build_ensemble` gives each interval a path of its own.
    """

    parent: np.ndarray
    feature: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    missing_branch: np.ndarray
    missing_mode: np.ndarray
    cover: np.ndarray
    is_leaf: np.ndarray
    leaf_values: np.ndarray
    intervals: dict | None = None


@dataclass(frozen=True)
class TreeNodes:
    """The trees themselves, node by node (all trees' nodes concatenated), for the
    kernels that walk them rather than their paths (interventional values of few rows).

    Attributes
    ----------
    tree_root : int64 (n_trees,)
        Root node of each tree.
    child_ptr : int64 (n_nodes + 1,), child : int64
        Children of node i: ``child[child_ptr[i]:child_ptr[i + 1]]`` (none at a leaf).
        The edges into a node's children test one feature.
    feature : int32 (n_nodes,)
        Feature tested on the edge into each node (unused at roots).
    edge_ptr : int64 (n_nodes + 1,), edge_lower, edge_upper : float64
        The edge into node i is followed by a number x iff ``edge_lower[k] <= x <
        edge_upper[k]`` for some k in ``edge_ptr[i]:edge_ptr[i + 1]`` (one interval, or
        a categorical split's union; none: only a missing value may follow it).
    missing_branch, missing_mode : uint8 (n_nodes,)
        As for :class:`NodeTable`.
    value_ptr : int64 (n_nodes + 1,), value_index : int32, value : float64
        Nonzero leaf values in CSR form: reaching leaf i adds ``value[k]`` to output
        ``value_index[k]``.
    max_depth : int
        Edges on the longest root-to-leaf walk.
    max_children : int
    """

    tree_root: np.ndarray
    child_ptr: np.ndarray
    child: np.ndarray
    feature: np.ndarray
    edge_ptr: np.ndarray
    edge_lower: np.ndarray
    edge_upper: np.ndarray
    missing_branch: np.ndarray
    missing_mode: np.ndarray
    value_ptr: np.ndarray
    value_index: np.ndarray
    value: np.ndarray
    max_depth: int
    max_children: int

    def arrays(self) -> NodeArrays:
        """The arrays (and sizes) as the walking kernels take them: one ``NodeArrays``."""
        return NodeArrays(self.tree_root, self.child_ptr, self.child, self.feature,
                          self.edge_ptr, self.edge_lower, self.edge_upper,
                          self.missing_branch, self.missing_mode, self.value_ptr,
                          self.value_index, self.value, self.max_depth, self.max_children)


def _csr(counts):
    return np.r_[0, np.cumsum(counts)].astype(np.int64)


def _tree_nodes(roots, parent, leaves, path_of, feature, lower, upper, missing, mode, values,
                unions):
    """:class:`TreeNodes` of the concatenated node tables (``roots``, ``parent`` and the
    categorical edges' ``unions`` in global node numbers)."""
    n_nodes = len(parent)
    has_parent = parent >= 0
    child = np.flatnonzero(has_parent)
    child = child[np.argsort(parent[child], kind="stable")]
    n_children = np.bincount(parent[has_parent], minlength=n_nodes)
    # each edge's intervals: its categorical union where it has one, else [lower, upper)
    n_intervals = np.ones(n_nodes, np.int64)
    edge_lower, edge_upper = lower, upper
    if unions:
        nodes = np.fromiter(unions, np.int64)
        n_intervals[nodes] = [len(unions[int(i)]) for i in nodes]
        plain = np.ones(n_nodes, bool)
        plain[nodes] = False
        starts = _csr(n_intervals)[:-1]
        edge_lower = np.zeros(int(n_intervals.sum()))
        edge_upper = np.zeros(int(n_intervals.sum()))
        edge_lower[starts[plain]], edge_upper[starts[plain]] = lower[plain], upper[plain]
        for i in nodes:
            for k, (lo, hi) in enumerate(unions[int(i)]):
                edge_lower[starts[i] + k], edge_upper[starts[i] + k] = lo, hi
    is_leaf = np.zeros(n_nodes, bool)
    is_leaf[leaves] = True
    nonzero = (values != 0) & is_leaf[:, None]
    rows, cols = np.nonzero(nonzero)
    depth = np.bincount(path_of, minlength=len(leaves)) if len(path_of) else [0]
    return TreeNodes(
        tree_root=np.asarray(roots, np.int64), child_ptr=_csr(n_children),
        child=child.astype(np.int64), feature=np.ascontiguousarray(feature, np.int32),
        edge_ptr=_csr(n_intervals), edge_lower=np.ascontiguousarray(edge_lower, np.float64),
        edge_upper=np.ascontiguousarray(edge_upper, np.float64),
        missing_branch=np.ascontiguousarray(missing, np.uint8),
        missing_mode=np.ascontiguousarray(mode, np.uint8),
        value_ptr=_csr(nonzero.sum(axis=1)), value_index=cols.astype(np.int32),
        value=np.ascontiguousarray(values[rows, cols], np.float64),
        max_depth=int(np.max(depth)), max_children=int(n_children.max(initial=0)))


@dataclass(frozen=True)
class TreeEnsemble:
    """Merged root-to-leaf paths of a tree ensemble.

    Attributes
    ----------
    path_ptr : int64 (n_paths + 1,)
        Elements of path p are ``path_ptr[p]:path_ptr[p + 1]`` (sorted by feature).
    feature : int32 (n_elements,)
    lower, upper : float64 (n_elements,)
        The element is satisfied iff lower <= x < upper; for a ``CATEGORY_SET`` element
        they hold the bits of its set of codes instead.
    missing_branch : uint8 (n_elements,)
        1 if a missing value satisfies the element.
    missing_mode : uint8 (n_elements,)
        ``MISSING_NAN``, ``MISSING_NAN_OR_ZERO`` or ``CATEGORY_SET`` (NaN is missing;
        see ``skshapley.backends.tree._numpy``).
    zero_fraction : float64 (n_elements,)
        Product of cover ratios c_child / c_parent of the merged edges (TreeSHAP's
        "zero fraction" z).
    out_ptr : int64 (n_paths + 1,), out_index : int32, out_value : float64
        Leaf values of path p in CSR form: output ``out_index[k]`` gets ``out_value[k]``.
    offset : float64 (n_outputs,)
        The model's constant (base score, init estimator).
    expected_value : float64 (n_outputs,)
        Path-dependent base value: offset + sum over paths of v * prod z.
    n_features, n_outputs : int
    input_dtype : numpy dtype
        The models compare x cast to this dtype (float32 for XGBoost and sklearn trees).
    output : str
        What an output is: "value" (regression), "probability" (forest classifiers) or
        "margin" (boosted classifiers, before the link).
    link : str
        "identity", "logit" (binary margin) or "softmax" (one margin per class).
    model_name : str
    input_encoder : callable, optional
        Maps what the model takes (an array or DataFrame) to the numbers its paths test,
        one column at a time, e.g. a HistGradientBoosting model's ordinal codes of its
        categorical columns. None: the paths test the input itself.
    nodes : TreeNodes, optional
        The trees node by node (None: the kernels that walk trees are not used).
    """

    path_ptr: np.ndarray
    feature: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    missing_branch: np.ndarray
    missing_mode: np.ndarray
    zero_fraction: np.ndarray
    out_ptr: np.ndarray
    out_index: np.ndarray
    out_value: np.ndarray
    offset: np.ndarray
    expected_value: np.ndarray
    n_features: int
    n_outputs: int
    input_dtype: np.dtype = field(default=np.dtype(np.float64))
    output: str = "value"
    link: str = "identity"
    model_name: str = ""
    input_encoder: object = None
    nodes: TreeNodes | None = None

    @property
    def n_paths(self) -> int:
        return len(self.path_ptr) - 1

    def path_arrays(self) -> PathArrays:
        """The paths as the path kernels take them: one ``PathArrays``."""
        return PathArrays(self.path_ptr, self.feature, self.lower, self.upper,
                          self.missing_branch, self.missing_mode, self.zero_fraction,
                          self.out_ptr, self.out_index, self.out_value)

    @property
    def path_lengths(self) -> np.ndarray:
        """Distinct features per path (u)."""
        return np.diff(self.path_ptr)

    @functools.cached_property
    def max_path_length(self) -> int:
        """Most distinct features of a path (kept: every TreeSHAP call reads it)."""
        lengths = self.path_lengths
        return int(lengths.max()) if lengths.size else 0

    def prepare(self, X) -> np.ndarray:
        """X as the models compare it: through ``input_encoder`` if any, cast to
        ``input_dtype``, returned as float64."""
        X = np.asarray(X if self.input_encoder is None else self.input_encoder(X))
        return np.ascontiguousarray(X.astype(self.input_dtype).astype(np.float64))

    def satisfied(self, X) -> np.ndarray:
        """bool (n_rows, n_elements): which elements each row satisfies (x prepared)."""
        return elements_satisfied(X[:, self.feature], self.lower, self.upper,
                                  self.missing_branch, self.missing_mode)

    def predict_raw(self, X) -> np.ndarray:
        """float64 (n_rows, n_outputs): the ensemble's raw output from its paths.

        A row reaches exactly one leaf per tree, i.e. satisfies every element of exactly
        one path per tree; this is the reference the readers check against the model.
        """
        X = self.prepare(X)
        sat = self.satisfied(X)
        lengths = self.path_lengths
        # A path is reached iff all its elements are satisfied; paths without elements
        # (single-leaf trees) are always reached.
        reached = np.ones((X.shape[0], self.n_paths), dtype=bool)
        nonempty = lengths > 0
        if sat.shape[1]:
            counts = np.add.reduceat(sat.astype(np.int64), self.path_ptr[:-1][nonempty],
                                     axis=1)
            reached[:, nonempty] = counts == lengths[nonempty]
        return reached.astype(np.float64) @ self.leaf_values() + self.offset

    def leaf_values(self) -> np.ndarray:
        """float64 (n_paths, n_outputs): what reaching each path's leaf adds to each output."""
        values = np.zeros((self.n_paths, self.n_outputs))
        path_of_output = np.repeat(np.arange(self.n_paths), np.diff(self.out_ptr))
        np.add.at(values, (path_of_output, self.out_index), self.out_value)
        return values


class PlacedColumns:
    """An ``input_encoder`` that runs a fitted transformer whose output column k comes
    from input column ``column_of[k]`` alone (then ``inner``, the tree model's own
    encoder, if any) and puts each output back at its input column's place: the paths
    test the input columns, and the Shapley values of a column and of its transform are
    the same. Input columns no output comes from (dropped) are 0, never read."""

    def __init__(self, transformer, column_of, n_features, inner=None):
        self.transformer = transformer
        self.column_of = np.asarray(column_of, np.int64)
        self.n_features = int(n_features)
        self.inner = inner

    def __call__(self, X):
        transformed = self.transformer.transform(X)
        transformed = (np.asarray(transformed, np.float64) if self.inner is None
                       else self.inner(transformed))
        out = np.zeros((transformed.shape[0], self.n_features))
        out[:, self.column_of] = transformed
        return out


def with_columns_renamed(ensemble, column_of, n_features, input_encoder):
    """``ensemble`` reading column ``column_of[j]`` where it read column j, out of
    ``n_features``, through ``input_encoder``; each path's elements sorted by their new
    feature again (the order the IR keeps; the kernels do not depend on it)."""
    feature = np.asarray(column_of, np.int32)[ensemble.feature]
    path_of = np.repeat(np.arange(ensemble.n_paths), ensemble.path_lengths)
    order = np.lexsort((feature, path_of))
    columns = {name: getattr(ensemble, name)[order] for name in
               ("lower", "upper", "missing_branch", "missing_mode", "zero_fraction")}
    nodes = ensemble.nodes
    if nodes is not None:  # roots have no edge; their feature is never read
        nodes = dataclasses.replace(nodes, feature=np.asarray(column_of, np.int32)[
            np.clip(nodes.feature, 0, len(column_of) - 1)])
    return dataclasses.replace(ensemble, feature=np.ascontiguousarray(feature[order]),
                               n_features=int(n_features), input_encoder=input_encoder,
                               nodes=nodes,
                               **{k: np.ascontiguousarray(v) for k, v in columns.items()})


def _walk_up(tables, offsets):
    """Concatenate the trees' node tables (first nodes at ``offsets``) and list every
    leaf's edges, leaf first."""
    parent = np.concatenate([np.where(t.parent >= 0, t.parent + o, -1)
                             for t, o in zip(tables, offsets[:-1], strict=True)])
    leaves = np.concatenate([np.flatnonzero(t.is_leaf) + o
                             for t, o in zip(tables, offsets[:-1], strict=True)])
    path_of, node_of = [], []
    current = leaves.copy()
    path_ids = np.arange(len(leaves))
    while current.size:
        has_edge = parent[current] >= 0
        current, path_ids = current[has_edge], path_ids[has_edge]
        path_of.append(path_ids)
        node_of.append(current)
        current = parent[current]
    path_of = np.concatenate(path_of) if path_of else np.zeros(0, np.int64)
    node_of = np.concatenate(node_of) if node_of else np.zeros(0, np.int64)
    return leaves, path_of, node_of, parent


def _intersect(union, other):
    """Intersection of two unions of disjoint half-open intervals."""
    out = []
    for lo, hi in union:
        for lo2, hi2 in other:
            a, b = max(lo, lo2), min(hi, hi2)
            if a < b:
                out.append((a, b))
    return sorted(out)


def _split_categorical(categorical, starts, node_sorted, element_path, feature, lower,
                       upper, missing, mode, z, leaf_values):
    """Elements of paths through categorical splits: one interval, a set of codes, or
    one path per combination of intervals.

    A merged element whose allowed values are a union of intervals becomes one
    ``CATEGORY_SET`` element when the intervals are unions of the set's atoms (codes
    below ``SET_CODES``, as GPUTreeShap's bitsets). Otherwise, with m > 1 intervals, it
    is replaced by m copies of its path, each with one interval and zero fraction z / m,
    a missing value following the first copy only: the copies' games add up to the
    path's game (indicators of disjoint intervals add up to that of their union, and so
    do the fractions), and TreeSHAP is linear in the game, so every kernel stays exact
    (path-dependent, interventional, interactions).
    """
    ends = np.r_[starts[1:], len(node_sorted)]
    unions = {}
    on_categorical = np.isin(node_sorted, np.fromiter(categorical, np.int64))
    touched = np.flatnonzero(np.logical_or.reduceat(on_categorical, starts))
    for i in touched:  # only the elements with a categorical edge, in Python
        nodes = node_sorted[starts[i]:ends[i]]
        union = [(lower[i], upper[i])]  # the numeric edges, merged already
        for node in nodes:
            union = _intersect(union, categorical.get(int(node), [(-np.inf, np.inf)]))
        if len(union) == 1:
            lower[i], upper[i] = union[0]
        elif not union:  # no value follows the path; a missing one still may
            lower[i] = upper[i] = np.inf
        else:  # a set of codes the kernels test as one element, or split paths
            words = category_set_words(union) if mode[i] == MISSING_NAN else None
            if words is None:
                unions[i] = union
            else:
                (lower[i], upper[i]), mode[i] = words, CATEGORY_SET
    if not unions:
        return element_path, feature, lower, upper, missing, mode, z, leaf_values
    columns = [feature, lower, upper, missing, mode, z]
    split_paths = np.unique(element_path[list(unions)])
    keep = ~np.isin(element_path, split_paths)
    new_columns = [[column[keep]] for column in columns]
    new_path = [element_path[keep]]
    path_leaf = [np.arange(len(leaf_values))]
    first = np.searchsorted(element_path, split_paths)
    last = np.searchsorted(element_path, split_paths, side="right")
    next_id = len(leaf_values)
    for path, a, b in zip(split_paths, first, last, strict=True):
        elements = np.arange(a, b)
        sizes = np.array([len(unions.get(i, ((0, 0),))) for i in elements])
        # one row per combination of the split elements' intervals
        grid = np.indices(sizes).reshape(len(elements), -1).T
        copies = grid.shape[0]
        lo, hi = np.tile(lower[elements], (copies, 1)), np.tile(upper[elements], (copies, 1))
        for k, i in enumerate(elements):
            if i in unions:
                table = np.asarray(unions[i], np.float64)
                lo[:, k], hi[:, k] = table[grid[:, k], 0], table[grid[:, k], 1]
        frac = np.tile(z[elements] / sizes, (copies, 1))
        miss = np.tile(missing[elements], (copies, 1)) & (grid == 0)  # along one copy
        for store, values in zip(new_columns, (np.tile(feature[elements], (copies, 1)), lo,
                                               hi, miss, np.tile(mode[elements], (copies, 1)),
                                               frac), strict=True):
            store.append(values.reshape(-1).astype(store[0].dtype, copy=False))
        new_path.append(np.repeat(np.arange(next_id, next_id + copies), len(elements)))
        path_leaf.append(np.full(copies, path))
        next_id += copies
    element_path = np.concatenate(new_path)
    order = np.argsort(element_path, kind="stable")
    element_path = element_path[order]
    feature, lower, upper, missing, mode, z = (np.concatenate(store)[order]
                                               for store in new_columns)
    leaf_rows = np.concatenate(path_leaf)
    leaf_values = leaf_values[leaf_rows].copy()
    # the split paths' originals stay as rows without elements: zero their output
    leaf_values[split_paths] = 0.0
    return element_path, feature, lower, upper, missing, mode, z, leaf_values


@validate_params(
    {
        "tables": [list, tuple],
        "n_features": [NumberInterval(Integral, 0, None, closed="left")],
        "n_outputs": [NumberInterval(Integral, 1, None, closed="left")],
        "offset": ["array-like", Real],
        "input_dtype": "no_validation",
        "output": [str],
        "link": [str],
        "model_name": [str],
    },
    prefer_skip_nested_validation=True,
)
def build_ensemble(tables, *, n_features, n_outputs, offset, input_dtype, output="value",
                   link="identity", model_name=""):
    """Merged paths of the trees in ``tables`` (list of :class:`NodeTable`).

    Parameters
    ----------
    tables : list of NodeTable
    n_features, n_outputs : int
    offset : array-like (n_outputs,)
    input_dtype : numpy dtype
    output, link, model_name : str
        See :class:`TreeEnsemble`.

    Returns
    -------
    TreeEnsemble
    """
    def stack(name, dtype):
        return np.concatenate([np.asarray(getattr(t, name), dtype=dtype) for t in tables])

    feature_all = stack("feature", np.int32)
    lower_all, upper_all = stack("lower", np.float64), stack("upper", np.float64)
    missing_all = stack("missing_branch", np.uint8)
    mode_all = stack("missing_mode", np.uint8)
    cover_all = stack("cover", np.float64)
    values_all = np.concatenate([np.asarray(t.leaf_values, np.float64).reshape(len(t.parent), -1)
                                 for t in tables])

    offsets = np.cumsum([0] + [len(t.parent) for t in tables])
    # categorical edges (node -> union of intervals), in global node numbers
    categorical = {int(node) + o: union for t, o in zip(tables, offsets[:-1], strict=True)
                   for node, union in (t.intervals or {}).items()}
    leaves, path_of, node_of, parent = _walk_up(tables, offsets)
    nodes = _tree_nodes(offsets[:-1], parent, leaves, path_of, feature_all, lower_all,
                        upper_all, missing_all, mode_all, values_all, categorical)
    with np.errstate(divide="ignore", invalid="ignore"):
        # Zero parent cover (never seen in practice) would give 0/0; treat the edge as
        # never taken by the expectation (z = 0), like XGBoost's clamped child weight.
        z_edge = np.where(cover_all[parent[node_of]] > 0,
                          cover_all[node_of] / cover_all[parent[node_of]], 0.0)

    leaf_values = values_all[leaves]
    # Path-dependent base value: sum over paths of v * prod of edge ratios,
    # computed before merging (the product is the same).
    log_free_product = np.ones(len(leaves))
    np.multiply.at(log_free_product, path_of, z_edge)
    expected = np.asarray(offset, np.float64) + log_free_product @ leaf_values

    # Merge elements of a path on the same feature (GPUTreeShap, Sec. 3.2).
    feat = feature_all[node_of]
    order = np.lexsort((feat, path_of))
    path_sorted, feat_sorted = path_of[order], feat[order]
    node_sorted, z_sorted = node_of[order], z_edge[order]
    if len(order):
        starts = np.flatnonzero(np.r_[True, (np.diff(path_sorted) != 0)
                                      | (np.diff(feat_sorted) != 0)])
    else:
        starts = np.zeros(0, np.int64)
    modes = mode_all[node_sorted]
    if len(order) and np.any(np.minimum.reduceat(modes, starts)
                             != np.maximum.reduceat(modes, starts)):
        raise ValueError(
            f"{model_name}: one path tests a feature with two different missing-value "
            "rules; this model cannot be represented exactly."
        )

    def reduce(ufunc, values):
        return ufunc.reduceat(values, starts) if len(starts) else values[:0]

    lower = reduce(np.maximum, lower_all[node_sorted])
    upper = reduce(np.minimum, upper_all[node_sorted])
    missing = reduce(np.minimum, missing_all[node_sorted])
    mode = modes[starts] if len(starts) else modes
    z = reduce(np.multiply, z_sorted)
    element_path = path_sorted[starts] if len(starts) else path_sorted
    feature = feat_sorted[starts] if len(starts) else feat_sorted

    if categorical:
        (element_path, feature, lower, upper, missing, mode, z,
         leaf_values) = _split_categorical(
            categorical, starts, node_sorted, element_path, feature, lower, upper, missing,
            mode, z, leaf_values)

    # Drop paths whose leaf has no nonzero output (they contribute nothing).
    nonzero = leaf_values != 0
    keep = nonzero.any(axis=1)
    new_id = np.cumsum(keep) - 1
    keep_element = keep[element_path]
    element_path = new_id[element_path[keep_element]]
    n_paths = int(keep.sum())
    path_ptr = _csr(np.bincount(element_path, minlength=n_paths))
    kept_values, kept_nonzero = leaf_values[keep], nonzero[keep]
    out_ptr = _csr(kept_nonzero.sum(axis=1))
    rows, cols = np.nonzero(kept_nonzero)
    return TreeEnsemble(
        path_ptr=path_ptr,
        feature=np.ascontiguousarray(feature[keep_element], np.int32),
        lower=np.ascontiguousarray(lower[keep_element]),
        upper=np.ascontiguousarray(upper[keep_element]),
        missing_branch=np.ascontiguousarray(missing[keep_element], np.uint8),
        missing_mode=np.ascontiguousarray(mode[keep_element], np.uint8),
        zero_fraction=np.ascontiguousarray(z[keep_element]),
        out_ptr=out_ptr,
        out_index=cols.astype(np.int32),
        out_value=kept_values[rows, cols].astype(np.float64),
        offset=np.asarray(offset, np.float64).reshape(n_outputs),
        expected_value=expected.reshape(n_outputs),
        n_features=int(n_features),
        n_outputs=int(n_outputs),
        input_dtype=np.dtype(input_dtype),
        output=output,
        link=link,
        model_name=model_name,
        nodes=nodes,
    )
