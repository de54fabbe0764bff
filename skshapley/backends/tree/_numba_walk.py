"""Numba CPU kernel of interventional TreeSHAP for few rows, by walking the trees with
sets of background rows (bit words): the twin of ``_numpy.tree_interventional_walk``.

What it prepares of a background (per chunk of rows, the rows following each edge; the
background's summed leaf values) is kept by the caller, in the ``cache`` it passes: a
model served one row at a time against the same background then pays for it once. The
kernels take the trees as one ``NodeArrays`` (numba reads its fields by name).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from skshapley.backends._numba_runtime import (
    prange_usable,
    run_parts,
    serial_copy,
    threads_for,
)
from skshapley.backends.tree._arrays import NodeArrays
from skshapley.backends.tree._numba_index import (
    _popcount,
    _run_index,
    _sorted_run,
    walk_chunk_rows,
)
from skshapley.backends.tree._numba_paths import PATH_CHUNKS, _is_missing
from skshapley.backends.tree._numpy import (
    LIGHTGBM_ZERO_THRESHOLD,
    MISSING_NAN_OR_ZERO,
    SHAPLEY_WEIGHTS,
)

# -- interventional values by walking the trees (few rows) -------------------------------
# The row-set walk of ``_numpy.tree_interventional_walk``: a state is a node, the sides
# of the features parted so far (``side_of``, restored from a trail when the depth-first
# walk backs up) and the set of background rows sharing them (bit words). The rows
# following each edge are worked out once per background from the sorted-run index
# (``_numba_index._run_index``: a binary search or two and a few word operations, whatever
# the number of rows), so a state's edge test is one AND per word. Sides are kept per *player*
# (``player[f]`` of the column f a node tests): the column itself, or its group, so that
# the columns of a group part once and come from x or z together.
FROM_X = 1
FROM_Z = 2


@register_jitable(error_model="numpy")
def _edge_follows(x, node, nodes):
    """Whether the number x follows the edge into ``node``."""
    if _is_missing(x, nodes.missing_mode[node]):
        return nodes.missing_branch[node] != 0
    for k in range(nodes.edge_ptr[node], nodes.edge_ptr[node + 1]):
        if nodes.edge_lower[k] <= x < nodes.edge_upper[k]:
            return True
    return False


@njit(cache=True, inline="always")
def _edge_rows(f, node, sorted_t, prefix, nan_rows, n_valid, zero_runs, nodes, into):
    """into = the background rows whose value of feature f follows the edge into
    ``node``."""
    edge_ptr, edge_lower, edge_upper = nodes.edge_ptr, nodes.edge_lower, nodes.edge_upper
    missing_branch, missing_mode = nodes.missing_branch, nodes.missing_mode
    n_words = into.shape[0]
    for w in range(n_words):
        into[w] = 0
    for k in range(edge_ptr[node], edge_ptr[node + 1]):
        a, b = _sorted_run(sorted_t[f], n_valid[f], edge_lower[k], edge_upper[k])
        for w in range(n_words):
            into[w] |= prefix[f, b, w] & ~prefix[f, a, w]
    missing = missing_branch[node] != 0
    zero_a, zero_b = zero_runs[f, 0], zero_runs[f, 1]
    zero_missing = missing_mode[node] == MISSING_NAN_OR_ZERO and zero_a < zero_b
    for w in range(n_words):
        word = into[w]
        if zero_missing:  # LightGBM's zero is missing: it goes the missing way
            zero = prefix[f, zero_b, w] & ~prefix[f, zero_a, w]
            word &= ~zero
            if missing:
                word |= zero
        if missing:
            word |= nan_rows[f, w]
        into[w] = word


@njit(cache=True, nogil=True, error_model="numpy")
def _all_edge_rows(first, stop, sorted_t, prefix, nan_rows, n_valid, zero_runs, nodes, roots,
                   edge_rows):
    """edge_rows[i] = the background rows following the edge into node i (roots: none),
    for the nodes ``first .. stop - 1``. Worked out for every node at once: filling them
    as walks reach them was no faster (the background's own walk reaches most) and
    slowed the walk's inner loop."""
    for node in range(first, stop):
        if roots[node]:
            edge_rows[node, :] = 0
        else:
            _edge_rows(nodes.feature[node], node, sorted_t, prefix, nan_rows, n_valid,
                       zero_runs, nodes, edge_rows[node])


@register_jitable(error_model="numpy")
def _rows_following(node, rows, edge_rows, into):
    """into = the rows of ``rows`` following the edge into ``node``; returns whether
    there are any."""
    some = np.uint64(0)
    for w in range(into.shape[0]):
        into[w] = rows[w] & edge_rows[node, w]
        some |= into[w]
    return some != 0


@register_jitable(error_model="numpy")
def _all_rows(n_rows, into):
    """into = the set of rows 0 .. n_rows - 1 (bit words)."""
    for w in range(into.shape[0]):
        left = n_rows - 64 * w
        into[w] = (~np.uint64(0) if left >= 64
                   else (np.uint64(1) << np.uint64(max(left, 0))) - np.uint64(1))


@register_jitable(error_model="numpy")
def _push(node, rows, n_x, n_z, depth, feature, side, top, st_node, st_rows, st_counts,
          st_trail, st_feature, st_side):
    """Push a state of the walk; returns the new stack size."""
    st_node[top] = node
    for w in range(rows.shape[0]):
        st_rows[top, w] = rows[w]
    st_counts[top, 0] = n_x
    st_counts[top, 1] = n_z
    st_trail[top] = depth
    st_feature[top] = feature
    st_side[top] = side
    return top + 1


@register_jitable(error_model="numpy")
def _leaf_values(node, rows, n_x, n_z, level, n_background, nodes, sums):
    """Add what a leaf reached by the background rows ``rows`` gives each feature parted
    on the way, if it came from x (``sums[level, 0]``) or from z (``sums[level, 1]``): the
    features' shares are settled when the walk backs up past them (``_close_level``), so
    a leaf costs the same at any depth."""
    n = n_x + n_z
    if n == 0:  # nothing parted: the rows agree with x all the way
        return
    count = 0
    for w in range(rows.shape[0]):
        count += _popcount(rows[w])
    share = count / n_background
    weights = SHAPLEY_WEIGHTS
    plus = weights[n_x - 1, n] * share if n_x > 0 else 0.0
    minus = weights[n_x, n] * share if n_z > 0 else 0.0
    value_index, value = nodes.value_index, nodes.value
    for k in range(nodes.value_ptr[node], nodes.value_ptr[node + 1]):
        g = value_index[k]
        sums[level, 0, g] += value[k] * plus
        sums[level, 1, g] += value[k] * minus


@register_jitable(error_model="numpy")
def _close_level(level, trail, side_of, sums, out):
    """The walk backs up past the feature parted at trail ``level`` (1-based): every leaf
    below it has been reached, so it takes its share (+ the from-x sum if it came from x,
    - the from-z sum if from z), and the sums pass up to the level above, whose feature
    was parted on the way to the same leaves."""
    f = trail[level - 1]
    from_x = side_of[f] == FROM_X
    for g in range(sums.shape[2]):
        if from_x:
            out[g, f] += sums[level, 0, g]
        else:
            out[g, f] -= sums[level, 1, g]
        sums[level - 1, 0, g] += sums[level, 0, g]
        sums[level - 1, 1, g] += sums[level, 1, g]
        sums[level, 0, g] = 0.0
        sums[level, 1, g] = 0.0
    side_of[f] = 0


@register_jitable(error_model="numpy")
def _walk_tree(x, root, n_rows, n_background, nodes, edge_rows, player, side_of, trail, sums,
               st_node, st_rows, st_counts, st_trail, st_feature, st_side, current, follow,
               out):
    """Add one tree's interventional values of row x (over the ``n_rows`` background rows
    indexed) to ``out`` (n_outputs, n_players); scratch arrays are the caller's (``sums``
    zero on entry, and again on return). ``st_feature`` and ``trail`` hold players."""
    child_ptr, child, feature = nodes.child_ptr, nodes.child, nodes.feature
    n_words = st_rows.shape[1]
    _all_rows(n_rows, st_rows[0])
    st_node[0] = root
    st_counts[0, 0] = 0
    st_counts[0, 1] = 0
    st_trail[0] = 0
    st_feature[0] = -1
    top = 1
    trail_len = 0
    while top > 0:
        top -= 1
        node = st_node[top]
        while trail_len > st_trail[top]:  # back up to the state's depth
            _close_level(trail_len, trail, side_of, sums, out)
            trail_len -= 1
        if st_feature[top] >= 0:  # the feature this state parted on
            side_of[st_feature[top]] = st_side[top]
            trail[trail_len] = st_feature[top]
            trail_len += 1
        n_x, n_z = st_counts[top, 0], st_counts[top, 1]
        c0, c1 = child_ptr[node], child_ptr[node + 1]
        if c0 == c1:
            _leaf_values(node, st_rows[top], n_x, n_z, trail_len, n_background, nodes, sums)
            continue
        for w in range(n_words):
            current[w] = st_rows[top, w]
        f = feature[child[c0]]
        p = player[f]
        side = side_of[p]
        for ci in range(c0, c1):
            c = child[ci]
            if side == FROM_Z:  # each row its own way
                if _rows_following(c, current, edge_rows, follow):
                    top = _push(c, follow, n_x, n_z, trail_len, -1, 0, top, st_node,
                                st_rows, st_counts, st_trail, st_feature, st_side)
                continue
            x_follows = _edge_follows(x[f], c, nodes)
            if side == FROM_X:  # x's way, every row
                if x_follows:
                    top = _push(c, current, n_x, n_z, trail_len, -1, 0, top, st_node,
                                st_rows, st_counts, st_trail, st_feature, st_side)
                continue
            some = _rows_following(c, current, edge_rows, follow)
            if not x_follows:  # rows going where x does not: f comes from z below
                if some:
                    top = _push(c, follow, n_x, n_z + 1, trail_len, p, FROM_Z, top, st_node,
                                st_rows, st_counts, st_trail, st_feature, st_side)
                continue
            if some:  # rows along with x: nothing parts here
                top = _push(c, follow, n_x, n_z, trail_len, -1, 0, top, st_node, st_rows,
                            st_counts, st_trail, st_feature, st_side)
            parted = False  # rows parting from x here: f comes from x below
            for w in range(n_words):
                follow[w] = current[w] & ~follow[w]
                parted |= follow[w] != 0
            if parted:
                top = _push(c, follow, n_x + 1, n_z, trail_len, p, FROM_X, top, st_node,
                            st_rows, st_counts, st_trail, st_feature, st_side)
    while trail_len > 0:  # settle the rest; side_of and sums are clean for the next tree
        _close_level(trail_len, trail, side_of, sums, out)
        trail_len -= 1
    for g in range(sums.shape[2]):
        sums[0, 0, g] = 0.0  # the rows that parted nowhere give nothing
        sums[0, 1, g] = 0.0
    return out


@register_jitable(error_model="numpy")
def _background_tree(root, n_rows, nodes, edge_rows, st_node, st_rows, current, out):
    """Add the leaf values the ``n_rows`` background rows reach in one tree to ``out``
    (n_outputs,), walking the tree with sets of rows."""
    child_ptr, child = nodes.child_ptr, nodes.child
    value_ptr, value_index, value = nodes.value_ptr, nodes.value_index, nodes.value
    n_words = st_rows.shape[1]
    _all_rows(n_rows, st_rows[0])
    st_node[0] = root
    top = 1
    while top > 0:
        top -= 1
        node = st_node[top]
        for w in range(n_words):
            current[w] = st_rows[top, w]
        if value_ptr[node] < value_ptr[node + 1]:
            count = 0
            for w in range(n_words):
                count += _popcount(current[w])
            for k in range(value_ptr[node], value_ptr[node + 1]):
                out[value_index[k]] += value[k] * count
        for ci in range(child_ptr[node], child_ptr[node + 1]):
            c = child[ci]
            if _rows_following(c, current, edge_rows, st_rows[top]):
                st_node[top] = c
                top += 1


# prange, unlike the other kernels: numba's parallel build of this loop ran 1.6x faster
# than the serial one (1.8 against 2.8 ms for one row of a 100-tree model, the same source, A/B in
# one process, one thread), which repays its extra compile (1.8 s, paid only by calls of
# fewer than WALK_ROWS rows).
def _walk_rows_source(X, nodes, n_background, n_rows, edge_rows, player, buffers):
    """Blocks of trees in parallel, each walking its trees for every row into
    ``buffers[block]``: the blocks are fixed in number, so the sums do not depend on the
    thread count."""
    n_rows_x = X.shape[0]
    tree_root, max_depth, max_children = nodes.tree_root, nodes.max_depth, nodes.max_children
    n_trees = len(tree_root)
    n_players = buffers.shape[3]
    n_words = edge_rows.shape[1]
    n_blocks = buffers.shape[0]
    n_outputs = buffers.shape[2]
    # each state pops one and pushes at most two per child
    capacity = (max_depth + 1) * 2 * max(max_children, 1) + 2
    per_block = (n_trees + n_blocks - 1) // n_blocks
    for block in prange(n_blocks):
        side_of = np.zeros(n_players, np.int64)
        trail = np.empty(max_depth + 1, np.int64)
        sums = np.zeros((max_depth + 2, 2, n_outputs))
        st_node = np.empty(capacity, np.int64)
        st_rows = np.empty((capacity, n_words), np.uint64)
        st_counts = np.empty((capacity, 2), np.int64)
        st_trail = np.empty(capacity, np.int64)
        st_feature = np.empty(capacity, np.int64)
        st_side = np.empty(capacity, np.int64)
        current = np.empty(n_words, np.uint64)
        follow = np.empty(n_words, np.uint64)
        for t in range(block * per_block, min(n_trees, (block + 1) * per_block)):
            for i in range(n_rows_x):
                _walk_tree(X[i], tree_root[t], n_rows, n_background, nodes, edge_rows, player,
                           side_of, trail, sums, st_node, st_rows, st_counts, st_trail,
                           st_feature, st_side, current, follow, buffers[block, i])


_walk_rows_parallel = njit(parallel=True, cache=True, error_model="numpy")(_walk_rows_source)
# Built only in a forked child where prange is unsafe (see _numba_runtime, "Forks").
_walk_rows_serial = njit(cache=True, nogil=True, error_model="numpy")(
    serial_copy(_walk_rows_source))


def _walk_rows(*args):
    if prange_usable():
        return _walk_rows_parallel(*args)
    return _walk_rows_serial(*args)


@njit(cache=True, nogil=True, error_model="numpy")
def _background_sums(first, stop, nodes, n_rows, edge_rows, sums):
    """sums[block] += the leaf values the background rows reach in the trees of blocks
    ``first .. stop - 1``."""
    tree_root, max_depth, max_children = nodes.tree_root, nodes.max_depth, nodes.max_children
    n_trees = len(tree_root)
    n_words = edge_rows.shape[1]
    n_blocks = sums.shape[0]
    capacity = (max_depth + 1) * max(max_children, 1) + 2
    per_block = (n_trees + n_blocks - 1) // n_blocks
    for block in range(first, stop):
        st_node = np.empty(capacity, np.int64)
        st_rows = np.empty((capacity, n_words), np.uint64)
        current = np.empty(n_words, np.uint64)
        for t in range(block * per_block, min(n_trees, (block + 1) * per_block)):
            _background_tree(tree_root[t], n_rows, nodes, edge_rows, st_node, st_rows, current,
                             sums[block])


def _zero_runs(sorted_t, n_valid):
    """Per column, the run of sorted positions holding LightGBM's zero (|x| <= 1e-35)."""
    runs = np.zeros((sorted_t.shape[0], 2), np.int64)
    low = np.nextafter(-LIGHTGBM_ZERO_THRESHOLD, np.inf)
    high = np.nextafter(LIGHTGBM_ZERO_THRESHOLD, np.inf)
    for f in range(sorted_t.shape[0]):
        runs[f] = np.searchsorted(sorted_t[f, :n_valid[f]], [low, high])
    return runs


@dataclass
class _PreparedBackground:
    """What the walk keeps of a background, for one ensemble's trees: per chunk of rows
    the rows following each edge, and the background's summed leaf values."""

    trees: tuple  # weak references to the trees' arrays
    background: np.ndarray
    chunks: list  # (rows in the chunk, edge_rows)
    sums: np.ndarray


def _chunk_edge_rows(chunk, nodes, roots, sums):
    """The rows of a background chunk (columns of ``chunk``) following each edge; adds
    the leaf values they reach to ``sums`` (one row per block of trees)."""
    sorted_t, prefix, nan_rows, n_valid = _run_index(chunk)
    n_nodes = len(nodes.feature)
    edge_rows = np.empty((n_nodes, prefix.shape[2]), np.uint64)
    zero_runs = _zero_runs(sorted_t, n_valid)
    work = n_nodes * prefix.shape[2]  # a few word operations per node and word

    def edges(first, stop):
        _all_edge_rows(first, stop, sorted_t, prefix, nan_rows, n_valid, zero_runs, nodes,
                       roots, edge_rows)

    def leaves(first, stop):
        _background_sums(first, stop, nodes, chunk.shape[1], edge_rows, sums)

    run_parts(edges, n_nodes, work)
    run_parts(leaves, sums.shape[0], work)
    return edge_rows


def _prepare_background(background, nodes, n_outputs, cache):
    """What the walk keeps of ``background`` for the trees ``nodes``: ``cache.last`` when
    it was prepared for the same tree arrays (alive) and an equal background, else made
    anew and left in ``cache.last`` (``cache`` None: nothing kept)."""
    last = None if cache is None else cache.last
    arrays = nodes[:-2]  # the sizes follow from them
    if (last is not None and all(ref() is a for ref, a in zip(last.trees, arrays, strict=True))
            and last.background.shape == background.shape
            and np.array_equal(last.background, background, equal_nan=True)):
        return last
    tree_root = nodes.tree_root
    roots = np.zeros(len(nodes.feature), np.bool_)
    roots[tree_root] = True
    n_blocks = max(1, min(len(tree_root), PATH_CHUNKS))
    sums = np.zeros((n_blocks, n_outputs))
    chunks = []
    step = walk_chunk_rows(background.shape[1], background.shape[0])
    for first in range(0, background.shape[0], step):  # the values are linear in the rows
        chunk = np.ascontiguousarray(background[first:first + step].T, dtype=np.float64)
        chunks.append((chunk.shape[1], _chunk_edge_rows(chunk, nodes, roots, sums)))
    prepared = _PreparedBackground(
        trees=tuple(weakref.ref(a) for a in arrays),
        background=background.copy(), chunks=chunks, sums=sums.sum(axis=0))
    if cache is not None:
        cache.last = prepared
    return prepared


def tree_interventional_walk(X, background, nodes, out, base, player=None, cache=None):
    """Numba twin of ``_numpy.tree_interventional_walk``. With ``cache`` (an object with a
    ``last`` attribute, owned by the caller) the background's index, edge rows and leaf
    sums are kept in ``cache.last`` and reused by the next call with the same trees and
    an equal background."""
    nodes = NodeArrays(*nodes[:-2], int(nodes.max_depth), int(nodes.max_children))
    n_background = background.shape[0]
    player = (np.arange(X.shape[1], dtype=np.int64) if player is None
              else np.ascontiguousarray(player, dtype=np.int64))
    prepared = _prepare_background(background, nodes, base.shape[0], cache)
    X = np.ascontiguousarray(X, dtype=np.float64)
    n_blocks = max(1, min(len(nodes.tree_root), PATH_CHUNKS))
    buffers = np.zeros((n_blocks,) + out.shape)
    # work in the unit of the path kernels (~30 ns): a node's edge test costs one word
    # operation per 64 background rows
    with threads_for(X.shape[0] * len(nodes.feature) * ((n_background + 63) // 64)):
        for n_rows, edge_rows in prepared.chunks:
            _walk_rows(X, nodes, n_background, n_rows, edge_rows, player, buffers)
    for block in range(n_blocks):
        out += buffers[block]
    base += prepared.sums / n_background
    return out, base


@njit(cache=True)
def tree_leaf_outputs(X, nodes, out):
    """``out[r, o] +=`` the values of the leaves that row r of X reaches, tree by tree:
    the ensemble's raw outputs (without its offset). Each tree is walked from its root,
    taking a node's first child whose edge the row follows, as the NumPy walk of
    ``skshapley.explain._tree`` does; serial (one or a few rows, the efficiency check of
    every TreeSHAP call).
    """
    for r in range(X.shape[0]):
        for t in range(nodes.tree_root.shape[0]):
            node = nodes.tree_root[t]
            while True:
                taken = -1
                for c in range(nodes.child_ptr[node], nodes.child_ptr[node + 1]):
                    child = nodes.child[c]
                    if _edge_follows(X[r, nodes.feature[child]], child, nodes):
                        taken = child
                        break
                if taken < 0:
                    break
                node = taken
            for v in range(nodes.value_ptr[node], nodes.value_ptr[node + 1]):
                out[r, nodes.value_index[v]] += nodes.value[v]
    return out
