"""Numba CPU kernels of exact TreeSHAP on paths, twins of ``_numpy.py``: path-dependent
values and interaction values, and what the interventional kernels of
``_numba_patterns.py`` share with them.

Layout: blocks of 64 rows; inside a block every path streams once and is applied to the
block's rows, which only that block writes, so results are identical for any thread
count. With few rows (under 16 blocks, which would leave threads idle) the paths are
split into a fixed number of chunks instead, each with its own output buffer, summed
afterwards in chunk order (again thread-count independent). The kernels are serial
(``nogil``) functions of a range of such parts, and ``_numba_runtime.run_parts`` runs the
ranges on threads: one compiled kernel per game serves both layouts. Only the walk of a
few rows (``_numba_walk._walk_rows``) loops with ``prange``, where numba's parallel build ran faster
even on one thread: a prange kernel compiles for about twice as long (measured: the first
interventional explain of a 100-tree model compiled for 14 s of CPU when every kernel had
prange, 4 s now).
Within a block, a row's values along a path depend only on its pattern of satisfied
splits, so each distinct pattern is worked out once (``_distinct_patterns``), and the
path-dependent quadrature runs with the patterns innermost so that it vectorises; the
operations per pattern are those of one row, so the bits do not change.
The compiled kernels take the paths as one ``PathArrays`` (numba reads its fields by
name). The same kernels serve paths whose players are groups of columns
(``tree_grouped_path_shap``/``_interactions``, with a ``PathGroups``): a row's bit j is
then set when it satisfies every element of player j's run; with ``groups`` None numba
compiles the per-column kernels without those branches. Float64 throughout, no fastmath.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

from skshapley.backends._numba_runtime import run_parts
from skshapley.backends.tree._numpy import (
    CATEGORY_SET,
    LEGENDRE_NODES,
    LEGENDRE_WEIGHTS,
    LIGHTGBM_ZERO_THRESHOLD,
    MISSING_NAN_OR_ZERO,
    category_set_contains,
)

ROW_BLOCK = 64
PATH_CHUNKS = 16  # fixed, so the summation order does not depend on the thread count
DIRECT_PATTERNS = 1024  # paths of up to 10 elements count background patterns by value

# How helpers are compiled, chosen by measurement (first-call compile against run time):
# - ``inline="always"`` (numba inlines the IR at every call site, costly to compile) for
#   the predicates of the satisfied-split loops and the helpers that take array views in
#   hot loops: as separate functions they made the background patterns 1.5x slower;
# - ``register_jitable`` (compiled once per signature, linked, then inlined by LLVM) for
#   the rest, including the walk's helpers, which ran faster so; about a third less to
#   compile than inlining everything;
# - ``error_model="numpy"``: no division-by-zero branches (no divisor here can be 0).


_in_category_set = register_jitable(category_set_contains)


@njit(cache=True, inline="always")
def _is_missing(x, missing_mode):
    """NaN, or LightGBM's zero under its "Zero" missing type."""
    return x != x or (missing_mode == MISSING_NAN_OR_ZERO
                      and -LIGHTGBM_ZERO_THRESHOLD < x <= LIGHTGBM_ZERO_THRESHOLD)


@njit(cache=True, inline="always")
def _satisfied(x, lower, upper, missing_branch, missing_mode):
    if _is_missing(x, missing_mode):
        return missing_branch != 0
    return lower <= x < upper


@register_jitable(error_model="numpy")
def _set_satisfied(x, lower, upper, missing_branch):
    """The rule of a ``CATEGORY_SET`` element: NaN goes the missing way, a number by
    its atom's bit in the set."""
    if x != x:
        return missing_branch != 0
    return _in_category_set(x, lower, upper)


@register_jitable(error_model="numpy")
def _path_coefficients(o, z, u, nodes, weights, prefix, coefficients):
    """c_i = (o_i - z_i) sum_q w_q prod_{j != i} (z_j + (o_j - z_j) t_q), the per-path
    quadrature form of ``_tree_numpy``."""
    q = (u + 1) // 2
    for i in range(u):
        coefficients[i] = 0.0
    for k in range(q):
        t = nodes[q, k]
        running = 1.0
        for j in range(u):
            prefix[j] = running
            running *= z[j] + (o[j] - z[j]) * t
        running = 1.0
        for j in range(u - 1, -1, -1):
            coefficients[j] += weights[q, k] * prefix[j] * running
            running *= z[j] + (o[j] - z[j]) * t
    for i in range(u):
        coefficients[i] *= o[i] - z[i]


@njit(cache=True, inline="always")
def _pattern_workspace(n_rows):
    """Scratch of ``_distinct_patterns`` for a block: row patterns, distinct keys, slots."""
    return (np.empty(n_rows, np.uint64), np.empty(n_rows, np.uint64),
            np.empty(n_rows, np.int64))


@njit(cache=True, inline="always")
def _mark_element(rows, e, paths, bit, satisfied, bits):
    """bits[r] |= bit for the rows r of ``rows`` whose test of element e is
    ``satisfied`` (True or False)."""
    f, low, high = paths.feature[e], paths.lower[e], paths.upper[e]
    branch, mode = paths.missing_branch[e], paths.missing_mode[e]
    if mode == CATEGORY_SET:  # decided per element, so interval loops stay as they were
        for r in range(rows.shape[0]):
            if _set_satisfied(rows[r, f], low, high, branch) == satisfied:
                bits[r] |= bit
        return
    for r in range(rows.shape[0]):
        if _satisfied(rows[r, f], low, high, branch, mode) == satisfied:
            bits[r] |= bit


@njit(cache=True, inline="always")
def _mark_satisfied(rows, start, u, paths, bits):
    """bits[r] = pattern of the path's elements (bit j: element start + j) that row r of
    ``rows`` satisfies; ``rows`` may be a transposed view (contiguous columns)."""
    one = np.uint64(1)
    for r in range(rows.shape[0]):
        bits[r] = 0
    for j in range(u):
        _mark_element(rows, start + j, paths, one << np.uint64(j), True, bits)


@njit(cache=True, inline="always")
def _mark_players(rows, p, paths, groups, bits):
    """bits[r] = pattern of path p's players (bit j: player j of ``groups``, a run of
    elements) that row r satisfies, i.e. every element of the run."""
    one = np.uint64(1)
    first_player = groups.player_ptr[p]
    n_players = groups.player_ptr[p + 1] - first_player
    for r in range(rows.shape[0]):
        bits[r] = 0
    for j in range(n_players):  # bit j set where some element of run j fails
        run = first_player + j
        for e in range(groups.first[run], groups.first[run] + groups.length[run]):
            _mark_element(rows, e, paths, one << np.uint64(j), False, bits)
    full = ~np.uint64(0) >> np.uint64(64 - n_players)
    for r in range(rows.shape[0]):
        bits[r] = ~bits[r] & full


@njit(cache=True, inline="always")
def _dedupe_patterns(row_bits, n_rows, keys, slot_of_row):
    """The distinct patterns of ``row_bits`` in order of first appearance (``keys``) and
    each row's slot among them. Returns the number of distinct patterns."""
    n_keys = 0
    for r in range(n_rows):
        xb = row_bits[r]
        slot = -1
        for i in range(n_keys):
            if keys[i] == xb:
                slot = i
                break
        if slot < 0:
            slot = n_keys
            keys[slot] = xb
            n_keys += 1
        slot_of_row[r] = slot
    return n_keys


@register_jitable(error_model="numpy")
def _distinct_patterns(X, row_start, n_rows, start, u, paths, row_bits, keys, slot_of_row):
    """Each row's pattern of satisfied splits along one path (bit j: element j), the
    block's distinct patterns in order of first appearance, and each row's slot among
    them. Returns the number of distinct patterns."""
    _mark_satisfied(X[row_start:row_start + n_rows], start, u, paths, row_bits)
    return _dedupe_patterns(row_bits, n_rows, keys, slot_of_row)


@register_jitable(error_model="numpy")
def _distinct_player_patterns(X, row_start, n_rows, p, paths, groups, row_bits, keys,
                              slot_of_row):
    """``_distinct_patterns`` of path p's players (``groups``). Returns the number of
    distinct patterns."""
    _mark_players(X[row_start:row_start + n_rows], p, paths, groups, row_bits)
    return _dedupe_patterns(row_bits, n_rows, keys, slot_of_row)


@njit(cache=True, inline="always")
def _pattern_coefficients(keys, n, start, u, zero_fraction, nodes, weights, o, prefix,
                          coefficients, running):
    """``_path_coefficients`` for the n distinct patterns ``keys`` at once, the patterns
    innermost so that the loops vectorise (same operations per pattern, same bits)."""
    one = np.uint64(1)
    for j in range(u):
        bit = one << np.uint64(j)
        for r in range(n):
            o[j, r] = 1.0 if keys[r] & bit else 0.0
            coefficients[j, r] = 0.0
    q = (u + 1) // 2
    for k in range(q):
        t = nodes[q, k]
        w = weights[q, k]
        for r in range(n):
            running[r] = 1.0
        for j in range(u):
            z = zero_fraction[start + j]
            for r in range(n):
                prefix[j, r] = running[r]
                running[r] *= z + (o[j, r] - z) * t
        for r in range(n):
            running[r] = 1.0
        for j in range(u - 1, -1, -1):
            z = zero_fraction[start + j]
            for r in range(n):
                coefficients[j, r] += w * prefix[j, r] * running[r]
                running[r] *= z + (o[j, r] - z) * t
    for j in range(u):
        z = zero_fraction[start + j]
        for r in range(n):
            coefficients[j, r] *= o[j, r] - z


@register_jitable(error_model="numpy")
def _shap_rows(X, row_start, row_stop, path_start, path_stop, paths, groups, max_u, out):
    # A row's coefficients along a path depend only on its pattern of satisfied splits,
    # and a block's rows share few patterns: the quadrature of _path_coefficients runs
    # once per distinct pattern, with the patterns innermost so that its loops vectorise
    # (same operations in the same order per pattern, so the same bits as one row at a
    # time; 6x faster on one thread for a depth-8 forest). ``groups`` None: the players
    # are the paths' elements; numba compiles that case without the grouped branches
    # (written out here: behind helper functions it ran 7% slower).
    nodes, weights = LEGENDRE_NODES, LEGENDRE_WEIGHTS
    one = np.uint64(1)
    n_rows = row_stop - row_start
    row_bits, keys, slot_of_row = _pattern_workspace(n_rows)
    o = np.empty((max_u, n_rows))
    prefix = np.empty((max_u, n_rows))
    coefficients = np.empty((max_u, n_rows))
    running = np.empty(n_rows)
    o_one, prefix_one, coefficients_one = np.empty(max_u), np.empty(max_u), np.empty(max_u)
    out_ptr, out_index, out_value = paths.out_ptr, paths.out_index, paths.out_value
    if groups is None:
        player_ptr, zero_fraction, column = paths.path_ptr, paths.zero_fraction, paths.feature
    else:
        player_ptr, zero_fraction, column = groups.player_ptr, groups.zero_fraction, groups.slot
    for p in range(path_start, path_stop):
        start = player_ptr[p]
        u = player_ptr[p + 1] - start
        if u == 0:
            continue
        if groups is None:
            n = _distinct_patterns(X, row_start, n_rows, start, u, paths, row_bits, keys,
                                   slot_of_row)
        else:
            n = _distinct_player_patterns(X, row_start, n_rows, p, paths, groups, row_bits,
                                          keys, slot_of_row)
        if n == 1:  # one pattern (one row, or rows alike): the scalar loops, same bits
            for j in range(u):
                o_one[j] = 1.0 if keys[0] & (one << np.uint64(j)) else 0.0
            _path_coefficients(o_one, zero_fraction[start:start + u], u, nodes, weights,
                               prefix_one, coefficients_one)
            for j in range(u):
                coefficients[j, 0] = coefficients_one[j]
        else:
            _pattern_coefficients(keys, n, start, u, zero_fraction, nodes, weights, o,
                                  prefix, coefficients, running)
        for k in range(out_ptr[p], out_ptr[p + 1]):
            g = out_index[k]
            v = out_value[k]
            for j in range(u):
                f = column[start + j]
                for r in range(n_rows):
                    out[row_start + r, g, f] += coefficients[j, slot_of_row[r]] * v


@register_jitable
def _part_range(part, by_rows, n_rows, n_paths):
    """(row_lo, row_hi, path_lo, path_hi) of part ``part`` of a parts kernel: row block
    ``part`` over every path, or path chunk ``part`` of every row. One call site of the
    row kernel follows it, so the row kernel is compiled once (a literal 0 for the first
    path would make numba compile a second specialisation)."""
    if by_rows:
        return part * ROW_BLOCK, min(n_rows, (part + 1) * ROW_BLOCK), 0, n_paths
    chunk = (n_paths + PATH_CHUNKS - 1) // PATH_CHUNKS
    return 0, n_rows, min(n_paths, part * chunk), min(n_paths, (part + 1) * chunk)


@njit(cache=True, nogil=True, error_model="numpy")
def _shap_parts(X, first, stop, by_rows, paths, groups, max_u, out, buffers):
    """Parts ``first .. stop - 1`` of ``tree_path_shap``: with ``by_rows`` part b is row
    block b (its rows of ``out``), else part c is path chunk c of every row
    (``buffers[c]``)."""
    n_rows = X.shape[0]
    n_paths = len(paths.path_ptr) - 1
    for part in range(first, stop):
        row_lo, row_hi, path_lo, path_hi = _part_range(part, by_rows, n_rows, n_paths)
        target = out if by_rows else buffers[part]
        for lo in range(row_lo, row_hi, ROW_BLOCK):  # row blocks bound the scratch
            _shap_rows(X, lo, min(row_hi, lo + ROW_BLOCK), path_lo, path_hi, paths, groups,
                       max_u, target)


@njit(cache=True)
def _max_length(path_ptr):
    """Longest path (at least 1), the size of the kernels' scratch: a loop, as NumPy's
    diff and max cost a few percent of a one-row call."""
    longest = 1
    for p in range(len(path_ptr) - 1):
        longest = max(longest, path_ptr[p + 1] - path_ptr[p])
    return longest


def _few_rows(n_rows):
    # A fixed cut (not a function of the thread count), so the summation order and hence
    # the bits of the result never depend on the machine.
    return n_rows < 16 * ROW_BLOCK


# Path chunks keep PATH_CHUNKS copies of the output; above this many bytes of them, row
# blocks run instead (a size rule, so the bits still do not depend on the machine). At
# 1,000 rows and 1,074 columns (a range of grouped paths widened by indicator columns)
# the copies were 137 MB and a tenth of the call.
PATH_CHUNK_MAX_BYTES = 32 * 2**20


def _in_parts(kernel, X, work, args, out, scratch=tuple):
    """Run a row kernel of the form ``kernel(X, first, stop, by_rows, *args, out,
    buffers, *scratch())`` over row blocks (many rows, or a wide output) or path chunks
    (few rows, one buffer each, added to ``out`` in chunk order); each range gets its
    own scratch."""
    by_rows = (not _few_rows(X.shape[0])
               or PATH_CHUNKS * out.nbytes > PATH_CHUNK_MAX_BYTES)
    if by_rows:
        n_parts = (X.shape[0] + ROW_BLOCK - 1) // ROW_BLOCK
        buffers = np.zeros((1,) * (out.ndim + 1))  # unused; fixes the kernel's types
    else:
        n_parts = PATH_CHUNKS
        buffers = np.zeros((PATH_CHUNKS,) + out.shape)

    def call(first, stop):
        kernel(X, first, stop, by_rows, *args, out, buffers, *scratch())

    run_parts(call, n_parts, work)
    if not by_rows:
        for c in range(PATH_CHUNKS):
            out += buffers[c]
    return out


def tree_path_shap(X, paths, out, cache=None):
    """Numba twin of ``_numpy.tree_path_shap`` (``cache`` unused on the CPU)."""
    args = (paths, None, _max_length(paths.path_ptr))
    return _in_parts(_shap_parts, X, X.shape[0] * len(paths.feature), args, out)


def tree_grouped_path_shap(X, paths, groups, out):
    """Numba twin of ``_numpy.tree_grouped_path_shap``."""
    args = (paths, groups, _max_length(groups.player_ptr))
    return _in_parts(_shap_parts, X, X.shape[0] * len(paths.feature), args, out)


@register_jitable(error_model="numpy")
def _interaction_rows(X, row_start, row_stop, path_start, path_stop, paths, groups, max_u,
                      out):
    # As in _numba_patterns._interventional_rows, a row's u x u block depends only on its pattern of
    # satisfied splits, so each distinct pattern of the block is worked out once.
    nodes, weights = LEGENDRE_NODES, LEGENDRE_WEIGHTS
    one = np.uint64(1)
    n_rows = row_stop - row_start
    row_bits, keys, slot_of_row = _pattern_workspace(n_rows)
    pairs = np.empty((n_rows, max_u, max_u))
    o = np.empty(max_u)
    a = np.empty(max_u)
    prefix = np.empty(max_u)
    phi = np.empty(max_u)
    out_ptr, out_index, out_value = paths.out_ptr, paths.out_index, paths.out_value
    if groups is None:  # as in _shap_rows
        player_ptr, zero_fraction, column = paths.path_ptr, paths.zero_fraction, paths.feature
    else:
        player_ptr, zero_fraction, column = groups.player_ptr, groups.zero_fraction, groups.slot
    for p in range(path_start, path_stop):
        start = player_ptr[p]
        u = player_ptr[p + 1] - start
        if u == 0:
            continue
        z = zero_fraction[start:start + u]
        q = (u + 1) // 2
        if groups is None:
            n_keys = _distinct_patterns(X, row_start, n_rows, start, u, paths, row_bits,
                                        keys, slot_of_row)
        else:
            n_keys = _distinct_player_patterns(X, row_start, n_rows, p, paths, groups,
                                               row_bits, keys, slot_of_row)
        for slot in range(n_keys):
            xb = keys[slot]
            for j in range(u):
                o[j] = 1.0 if xb & (one << np.uint64(j)) else 0.0
            _path_coefficients(o, z, u, nodes, weights, prefix, phi)
            pair = pairs[slot]
            for i in range(u):
                for j in range(u):
                    pair[i, j] = 0.0
            # For each conditioning element c: products over k not in {i, c} by prefix and
            # suffix products with a_c replaced by 1 (O(u^2 q) per pattern and path).
            for c in range(u):
                d_c = o[c] - z[c]
                if d_c == 0.0:
                    continue
                for kq in range(q):
                    t = nodes[q, kq]
                    for j in range(u):
                        a[j] = 1.0 if j == c else z[j] + (o[j] - z[j]) * t
                    running = 1.0
                    for j in range(u):
                        prefix[j] = running
                        running *= a[j]
                    running = 1.0
                    for j in range(u - 1, -1, -1):
                        if j != c:
                            pair[j, c] += weights[q, kq] * prefix[j] * running
                        running *= a[j]
                for i in range(u):
                    pair[i, c] *= 0.5 * (o[i] - z[i]) * d_c
            for i in range(u):
                total = 0.0
                for j in range(u):
                    if j != i:
                        total += pair[i, j]
                pair[i, i] = phi[i] - total
        for k in range(out_ptr[p], out_ptr[p + 1]):
            g = out_index[k]
            v = out_value[k]
            for r in range(n_rows):
                pair = pairs[slot_of_row[r]]
                for i in range(u):
                    fi = column[start + i]
                    for j in range(u):
                        out[row_start + r, g, fi, column[start + j]] += pair[i, j] * v


@njit(cache=True, nogil=True, error_model="numpy")
def _interaction_parts(X, first, stop, by_rows, paths, groups, max_u, out, buffers):
    """Parts of ``tree_path_interactions``, as in ``_shap_parts``."""
    n_rows = X.shape[0]
    n_paths = len(paths.path_ptr) - 1
    for part in range(first, stop):
        row_lo, row_hi, path_lo, path_hi = _part_range(part, by_rows, n_rows, n_paths)
        target = out if by_rows else buffers[part]
        for lo in range(row_lo, row_hi, ROW_BLOCK):  # row blocks bound the scratch
            _interaction_rows(X, lo, min(row_hi, lo + ROW_BLOCK), path_lo, path_hi, paths,
                              groups, max_u, target)


def tree_path_interactions(X, paths, out, cache=None):
    """Numba twin of ``_numpy.tree_path_interactions`` (``cache`` unused on the CPU)."""
    args = (paths, None, _max_length(paths.path_ptr))
    work = X.shape[0] * len(paths.feature) * _max_length(paths.path_ptr)
    return _in_parts(_interaction_parts, X, work, args, out)


def tree_grouped_path_interactions(X, paths, groups, out):
    """Numba twin of ``_numpy.tree_grouped_path_interactions``."""
    args = (paths, groups, _max_length(groups.player_ptr))
    work = X.shape[0] * len(paths.feature) * _max_length(groups.player_ptr)
    return _in_parts(_interaction_parts, X, work, args, out)
