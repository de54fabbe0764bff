"""Numba CPU kernels of exact TreeSHAP, twins of ``_tree_numpy.py``.

Layout: blocks of 64 rows; inside a block every path streams once and is applied to the
block's rows, which only that block writes, so results are identical for any thread
count. With few rows (under 16 blocks, which would leave threads idle) the paths are
split into a fixed number of chunks instead, each with its own output buffer, summed
afterwards in chunk order (again thread-count independent). The kernels are serial
(``nogil``) functions of a range of such parts, and ``_numba_runtime.run_parts`` runs the
ranges on threads: one compiled kernel per game serves both layouts. Only the walk of a
few rows (``_walk_rows``) loops with ``prange``, where numba's parallel build ran faster
even on one thread: a prange kernel compiles for about twice as long (measured: the first
interventional explain of a 100-tree model compiled for 14 s of CPU when every kernel had
prange, 4 s now).
Within a block, a row's values along a path depend only on its pattern of satisfied
splits, so each distinct pattern is worked out once (``_distinct_patterns``), and the
path-dependent quadrature runs with the patterns innermost so that it vectorises; the
operations per pattern are those of one row, so the bits do not change.
Float64 throughout, no fastmath.
"""

from __future__ import annotations

import threading
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
from skshapley.backends._tree_numpy import (
    CATEGORY_SET,
    LEGENDRE_NODES,
    LEGENDRE_WEIGHTS,
    LIGHTGBM_ZERO_THRESHOLD,
    MISSING_NAN,
    MISSING_NAN_OR_ZERO,
    SHAPLEY_WEIGHTS,
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
def _mark_satisfied(rows, start, u, feature, lower, upper, missing_branch, missing_mode,
                    bits):
    """bits[r] = pattern of the path's elements (bit j: element start + j) that row r of
    ``rows`` satisfies; ``rows`` may be a transposed view (contiguous columns)."""
    one = np.uint64(1)
    for r in range(rows.shape[0]):
        bits[r] = 0
    for j in range(u):
        e = start + j
        f, low, high = feature[e], lower[e], upper[e]
        branch, mode = missing_branch[e], missing_mode[e]
        bit = one << np.uint64(j)
        if mode == CATEGORY_SET:  # decided per element, so interval loops stay as they were
            for r in range(rows.shape[0]):
                if _set_satisfied(rows[r, f], low, high, branch):
                    bits[r] |= bit
            continue
        for r in range(rows.shape[0]):
            if _satisfied(rows[r, f], low, high, branch, mode):
                bits[r] |= bit


@register_jitable(error_model="numpy")
def _distinct_patterns(X, row_start, n_rows, start, u, feature, lower, upper,
                       missing_branch, missing_mode, row_bits, keys, slot_of_row):
    """Each row's pattern of satisfied splits along one path (bit j: element j), the
    block's distinct patterns in order of first appearance, and each row's slot among
    them. Returns the number of distinct patterns."""
    _mark_satisfied(X[row_start:row_start + n_rows], start, u, feature, lower, upper,
                    missing_branch, missing_mode, row_bits)
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
def _shap_rows(X, row_start, row_stop, path_start, path_stop, path_ptr, feature, lower, upper,
               missing_branch, missing_mode, zero_fraction, out_ptr, out_index, out_value,
               max_u, out):
    # A row's coefficients along a path depend only on its pattern of satisfied splits,
    # and a block's rows share few patterns: the quadrature of _path_coefficients runs
    # once per distinct pattern, with the patterns innermost so that its loops vectorise
    # (same operations in the same order per pattern, so the same bits as one row at a
    # time; 6x faster on one thread for a depth-8 forest).
    nodes, weights = LEGENDRE_NODES, LEGENDRE_WEIGHTS
    one = np.uint64(1)
    n_rows = row_stop - row_start
    row_bits, keys, slot_of_row = _pattern_workspace(n_rows)
    o = np.empty((max_u, n_rows))
    prefix = np.empty((max_u, n_rows))
    coefficients = np.empty((max_u, n_rows))
    running = np.empty(n_rows)
    o_one, prefix_one, coefficients_one = np.empty(max_u), np.empty(max_u), np.empty(max_u)
    for p in range(path_start, path_stop):
        start = path_ptr[p]
        u = path_ptr[p + 1] - start
        if u == 0:
            continue
        n = _distinct_patterns(X, row_start, n_rows, start, u, feature, lower, upper,
                               missing_branch, missing_mode, row_bits, keys, slot_of_row)
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
                f = feature[start + j]
                for r in range(n_rows):
                    out[row_start + r, g, f] += coefficients[j, slot_of_row[r]] * v


@njit(cache=True, nogil=True, error_model="numpy")
def _shap_parts(X, first, stop, by_rows, path_ptr, feature, lower, upper, missing_branch,
                missing_mode, zero_fraction, out_ptr, out_index, out_value, max_u, out,
                buffers):
    """Parts ``first .. stop - 1`` of ``tree_path_shap``: with ``by_rows`` part b is row
    block b (its rows of ``out``), else part c is path chunk c of every row
    (``buffers[c]``)."""
    n_rows = X.shape[0]
    n_paths = len(path_ptr) - 1
    chunk = (n_paths + PATH_CHUNKS - 1) // PATH_CHUNKS
    for part in range(first, stop):
        # one call site, so the row kernel is compiled once (a literal 0 for the first
        # path would make numba compile a second specialisation)
        if by_rows:
            row_lo, row_hi = part * ROW_BLOCK, min(n_rows, (part + 1) * ROW_BLOCK)
            path_lo, path_hi = 0, n_paths
            target = out
        else:
            row_lo, row_hi = 0, n_rows
            path_lo = min(n_paths, part * chunk)
            path_hi = min(n_paths, (part + 1) * chunk)
            target = buffers[part]
        for lo in range(row_lo, row_hi, ROW_BLOCK):  # row blocks bound the scratch
            _shap_rows(X, lo, min(row_hi, lo + ROW_BLOCK), path_lo, path_hi, path_ptr,
                       feature, lower, upper, missing_branch, missing_mode, zero_fraction,
                       out_ptr, out_index, out_value, max_u, target)


def _max_length(path_ptr):
    return max(1, int(np.max(np.diff(path_ptr)))) if len(path_ptr) > 1 else 1


def _few_rows(n_rows):
    # A fixed cut (not a function of the thread count), so the summation order and hence
    # the bits of the result never depend on the machine.
    return n_rows < 16 * ROW_BLOCK


def _in_parts(kernel, X, work, args, out, scratch=tuple):
    """Run a row kernel of the form ``kernel(X, first, stop, by_rows, *args, out,
    buffers, *scratch())`` over row blocks (many rows) or path chunks (few rows, one
    buffer each, added to ``out`` in chunk order); each range gets its own scratch."""
    by_rows = not _few_rows(X.shape[0])
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


def tree_path_shap(X, path_ptr, feature, lower, upper, missing_branch, missing_mode,
                   zero_fraction, out_ptr, out_index, out_value, out):
    args = (path_ptr, feature, lower, upper, missing_branch, missing_mode, zero_fraction,
            out_ptr, out_index, out_value, _max_length(path_ptr))
    return _in_parts(_shap_parts, X, X.shape[0] * len(feature), args, out)


tree_path_shap.__doc__ = "Numba twin of ``_tree_numpy.tree_path_shap``."


@register_jitable(error_model="numpy")
def _interaction_rows(X, row_start, row_stop, path_start, path_stop, path_ptr, feature, lower,
                      upper, missing_branch, missing_mode, zero_fraction, out_ptr, out_index,
                      out_value, max_u, out):
    # As in _interventional_rows, a row's u x u block depends only on its pattern of
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
    for p in range(path_start, path_stop):
        start = path_ptr[p]
        u = path_ptr[p + 1] - start
        if u == 0:
            continue
        z = zero_fraction[start:start + u]
        q = (u + 1) // 2
        n_keys = _distinct_patterns(X, row_start, n_rows, start, u, feature, lower, upper,
                                    missing_branch, missing_mode, row_bits, keys,
                                    slot_of_row)
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
                    fi = feature[start + i]
                    for j in range(u):
                        out[row_start + r, g, fi, feature[start + j]] += pair[i, j] * v


@njit(cache=True, nogil=True, error_model="numpy")
def _interaction_parts(X, first, stop, by_rows, path_ptr, feature, lower, upper,
                       missing_branch, missing_mode, zero_fraction, out_ptr, out_index,
                       out_value, max_u, out, buffers):
    """Parts of ``tree_path_interactions``, as in ``_shap_parts``."""
    n_rows = X.shape[0]
    n_paths = len(path_ptr) - 1
    chunk = (n_paths + PATH_CHUNKS - 1) // PATH_CHUNKS
    for part in range(first, stop):
        # one call site, so the row kernel is compiled once (a literal 0 for the first
        # path would make numba compile a second specialisation)
        if by_rows:
            row_lo, row_hi = part * ROW_BLOCK, min(n_rows, (part + 1) * ROW_BLOCK)
            path_lo, path_hi = 0, n_paths
            target = out
        else:
            row_lo, row_hi = 0, n_rows
            path_lo = min(n_paths, part * chunk)
            path_hi = min(n_paths, (part + 1) * chunk)
            target = buffers[part]
        for lo in range(row_lo, row_hi, ROW_BLOCK):  # row blocks bound the scratch
            _interaction_rows(X, lo, min(row_hi, lo + ROW_BLOCK), path_lo, path_hi,
                              path_ptr, feature, lower, upper, missing_branch, missing_mode,
                              zero_fraction, out_ptr, out_index, out_value, max_u, target)


def tree_path_interactions(X, path_ptr, feature, lower, upper, missing_branch, missing_mode,
                           zero_fraction, out_ptr, out_index, out_value, out):
    args = (path_ptr, feature, lower, upper, missing_branch, missing_mode, zero_fraction,
            out_ptr, out_index, out_value, _max_length(path_ptr))
    work = X.shape[0] * len(feature) * _max_length(path_ptr)
    return _in_parts(_interaction_parts, X, work, args, out)


tree_path_interactions.__doc__ = "Numba twin of ``_tree_numpy.tree_path_interactions``."


@register_jitable(error_model="numpy")
def _required_elements(rows, start, u, feature, lower, upper, missing_branch, missing_mode,
                       row_bits):
    """The path's elements that no row of ``rows`` satisfies, as a bit pattern: a
    background row failing one of them adds nothing to any of these rows' values."""
    _mark_satisfied(rows, start, u, feature, lower, upper, missing_branch, missing_mode,
                    row_bits)
    some = np.uint64(0)
    for r in range(rows.shape[0]):
        some |= row_bits[r]
    one = np.uint64(1)
    return ((one << np.uint64(u)) - one) & ~some


@register_jitable(error_model="numpy")
def _element_satisfied(x, e, lower, upper, missing_branch, missing_mode):
    """Whether value ``x`` satisfies path element ``e`` (interval or category set)."""
    if missing_mode[e] == CATEGORY_SET:
        return _set_satisfied(x, lower[e], upper[e], missing_branch[e])
    return _satisfied(x, lower[e], upper[e], missing_branch[e], missing_mode[e])


@register_jitable(error_model="numpy")
def _lower_bound(values, n, key):
    """First index i < n with values[i] >= key (values ascending), else n. Branch-free
    halving (the comparison feeds an add, not a jump, so it is not mispredicted)."""
    base = 0
    size = n
    while size > 1:
        half = size // 2
        base += half * (values[base + half - 1] < key)
        size -= half
    if size == 1:
        base += values[base] < key
    return base


_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DE_BRUIJN_INDEX = np.zeros(64, np.int64)
for _bit in range(64):
    _DE_BRUIJN_INDEX[((1 << _bit) * 0x03F79D71B4CB0A89 % 2**64) >> 58] = _bit


@register_jitable(error_model="numpy")
def _lowest_bit(word):
    """Index of the lowest set bit of a non-zero uint64 (de Bruijn multiplication)."""
    low = word & (~word + np.uint64(1))
    return _DE_BRUIJN_INDEX[(low * _DE_BRUIJN) >> np.uint64(58)]


@register_jitable(error_model="numpy")
def _sorted_run(values, n, lower, upper):
    """Positions a <= b of the first n (ascending) ``values`` with lower <= v < upper are
    a:b. A split's side has one infinite bound: no search for it."""
    a = 0 if lower == -np.inf else _lower_bound(values, n, lower)
    b = n if upper == np.inf else max(a, _lower_bound(values, n, upper))
    return a, b


@njit(cache=True, inline="always")
def _indexed_patterns(background_t, sorted_t, prefix, nan_rows, n_valid, start, u, required,
                      feature, lower, upper, missing_branch, missing_mode, alive, bits):
    """Patterns of the background rows that satisfy every ``required`` element, packed
    into ``bits``; returns how many, or -1 when no required element is a plain interval.
    The rows satisfying a plain interval are a run of its column sorted (``sorted_t``:
    ``n_valid`` numbers first, NaN last), found by binary search; ``prefix[f, k]`` is the
    set (bit words) of the first k rows of column f in that order, so a run is two
    lookups, and the rows in every required run are one AND per word (``alive``). Only
    those rows, few on a deep path, are tested element by element."""
    one = np.uint64(1)
    n_words = alive.shape[0]
    for w in range(n_words):
        alive[w] = ~np.uint64(0)
    indexed = False
    for j in range(u):
        e = start + j
        if not required & (one << np.uint64(j)) or missing_mode[e] != MISSING_NAN:
            continue
        f = feature[e]
        lo, hi = _sorted_run(sorted_t[f], n_valid[f], lower[e], upper[e])
        nan = missing_branch[e] != 0  # NaN rows go the element's way
        any_alive = np.uint64(0)
        for w in range(n_words):
            run = prefix[f, hi, w] & ~prefix[f, lo, w]
            alive[w] &= run | nan_rows[f, w] if nan else run
            any_alive |= alive[w]
        indexed = True
        if not any_alive:
            return 0
    if not indexed:
        return -1
    kept = 0
    for w in range(n_words):
        word = alive[w]
        while word:
            r = w * 64 + _lowest_bit(word)
            word &= word - one
            kept = _keep_if_required(background_t, r, start, u, required, feature, lower,
                                     upper, missing_branch, missing_mode, bits, kept)
    return kept


@njit(cache=True, inline="always")
def _keep_if_required(background_t, r, start, u, required, feature, lower, upper,
                      missing_branch, missing_mode, bits, kept):
    """Append background row r's pattern to ``bits[kept]`` if it satisfies every
    ``required`` element; returns the new count."""
    one = np.uint64(1)
    b = np.uint64(0)
    for j in range(u):
        e = start + j
        bit = one << np.uint64(j)
        if _element_satisfied(background_t[feature[e], r], e, lower, upper, missing_branch,
                              missing_mode):
            b |= bit
        elif required & bit:
            return kept
    bits[kept] = b
    return kept + 1


@njit(cache=True, inline="always")
def _path_patterns(background_t, sorted_t, prefix, nan_rows, n_valid, rows, start, u,
                   feature, lower, upper, missing_branch, missing_mode, bits, row_bits,
                   alive, direct, table, used, patterns_row, counts_row):
    """Distinct background patterns of one path, ascending, with their counts; returns
    how many. With ``rows`` (not empty), background rows failing an element that every
    one of ``rows`` fails are left out (they add nothing to those rows' values; the
    all-satisfied pattern always stays): only the rows in the sorted runs of those
    elements are tested (``_indexed_patterns``). Otherwise each element is tested against
    a contiguous background column. Paths of
    few elements count patterns by value in ``direct`` (all 0 on entry and on exit);
    longer ones merge duplicates through an open-addressing table (``table``, all -1 on
    entry and on exit) and sort only the few distinct patterns, not every row's."""
    one = np.uint64(1)
    n_kept = -1
    if rows.shape[0] > 0:
        required = _required_elements(rows, start, u, feature, lower, upper,
                                      missing_branch, missing_mode, row_bits)
        if required:
            n_kept = _indexed_patterns(background_t, sorted_t, prefix, nan_rows, n_valid,
                                       start, u, required, feature, lower, upper,
                                       missing_branch, missing_mode, alive, bits)
    if n_kept < 0:
        n_kept = background_t.shape[1]
        _mark_satisfied(background_t.T, start, u, feature, lower, upper, missing_branch,
                        missing_mode, bits)
    m = 0
    if (1 << u) <= min(direct.size, 2 * n_kept):  # count by value: already in order
        for r in range(n_kept):
            direct[bits[r]] += 1.0
        for b in range(1 << u):
            if direct[b] > 0.0:
                patterns_row[m] = b
                counts_row[m] = direct[b]
                direct[b] = 0.0
                m += 1
        return m
    mask = np.uint64(table.size - 1)
    for r in range(n_kept):
        b = bits[r]
        slot = ((b * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)) & mask
        while table[slot] >= 0 and patterns_row[table[slot]] != b:
            slot = (slot + one) & mask
        if table[slot] < 0:
            table[slot] = m
            used[m] = slot
            patterns_row[m] = b
            counts_row[m] = 1.0
            m += 1
        else:
            counts_row[table[slot]] += 1.0
    for i in range(m):
        table[used[i]] = -1
    for i in range(1, m):  # insertion sort of the distinct patterns (counts follow)
        key, count = patterns_row[i], counts_row[i]
        k = i - 1
        while k >= 0 and patterns_row[k] > key:
            patterns_row[k + 1] = patterns_row[k]
            counts_row[k + 1] = counts_row[k]
            k -= 1
        patterns_row[k + 1] = key
        counts_row[k + 1] = count
    return m


@njit(cache=True, nogil=True, error_model="numpy")
def _background_patterns(first, stop, background_t, sorted_t, prefix, nan_rows, n_valid, rows,
                         path_ptr, feature, lower, upper, missing_branch, missing_mode,
                         patterns, counts, n_distinct, reached, bits, row_bits, alive, direct,
                         table, used):
    """Patterns of paths ``first .. stop - 1`` (each path is written apart); the scratch
    of ``_path_patterns`` comes from ``_pattern_scratch``."""
    for p in range(first, stop):
        u = path_ptr[p + 1] - path_ptr[p]
        m = _path_patterns(
            background_t, sorted_t, prefix, nan_rows, n_valid, rows, path_ptr[p], u,
            feature, lower, upper, missing_branch, missing_mode, bits, row_bits, alive,
            direct, table, used, patterns[p], counts[p])
        n_distinct[p] = m
        # the all-satisfied pattern sorts last: its count is the rows reaching the leaf
        full = ~np.uint64(0) if u >= 64 else (np.uint64(1) << np.uint64(u)) - np.uint64(1)
        reached[p] = counts[p, m - 1] if m > 0 and patterns[p, m - 1] == full else 0.0


# the sorted-run index of a background chunk (prefix row sets) may take this many bytes;
# past it, the patterns are built by testing every background row (same result)
INDEX_BYTES = 32 * 2**20


def _index_bytes(n_features, n_rows):
    """Bytes of the prefix row sets of ``_run_index`` for a chunk of n_rows."""
    return 8 * n_features * (n_rows + 1) * ((n_rows + 63) // 64)


def _pattern_scratch(n_background, n_rows, n_words):
    """Scratch of ``_background_patterns``: row patterns, the rows' patterns, alive rows,
    counts by value (zero), a hash table (-1; load factor at most 1/2) and its used
    slots. Allocated here, not in the kernel, which then compiles no allocators."""
    size = 2
    while size < 2 * n_background:
        size *= 2
    return (np.empty(n_background, np.uint64), np.empty(n_rows, np.uint64),
            np.empty(n_words, np.uint64), np.zeros(DIRECT_PATTERNS, np.float64),
            np.full(size, -1, np.int64), np.empty(n_background, np.int64))


def _run_index(background_t):
    """Each column sorted (NaN last), how many numbers it has, and per column the row sets
    (64-bit words) of its first k rows in sorted order and of its NaN rows."""
    n_features, n_background = background_t.shape
    n_words = (n_background + 63) // 64
    order = np.argsort(background_t, axis=1, kind="stable")
    sorted_t = np.take_along_axis(background_t, order, axis=1)
    n_valid = (~np.isnan(background_t)).sum(axis=1)
    single = np.zeros((n_features, n_background + 1, n_words), np.uint64)
    columns = np.arange(n_features)[:, None]
    single[columns, np.arange(1, n_background + 1)[None, :], order // 64] = (
        np.uint64(1) << (order % 64).astype(np.uint64))
    prefix = np.bitwise_or.accumulate(single, axis=1)
    nan_rows = prefix[np.arange(n_features), n_background] & ~prefix[
        np.arange(n_features), n_valid]
    return sorted_t, prefix, nan_rows, n_valid


def tree_background_patterns(background, path_ptr, feature, lower, upper, missing_branch,
                             missing_mode, patterns, counts, n_distinct, rows=None,
                             reached=None):
    background_t = np.ascontiguousarray(background.T)
    if reached is None:
        reached = np.empty(len(path_ptr) - 1)
    n_features, n_background = background_t.shape
    if rows is None or len(rows) == 0 or _index_bytes(n_features, n_background) > INDEX_BYTES:
        rows = np.empty((0, n_features))
        sorted_t, prefix = np.empty((0, 0)), np.empty((0, 0, 0), np.uint64)
        nan_rows, n_valid = np.empty((0, 0), np.uint64), np.empty(0, np.int64)
    else:
        sorted_t, prefix, nan_rows, n_valid = _run_index(background_t)
    rows = np.ascontiguousarray(rows, dtype=np.float64)

    def call(first, stop):  # each range (thread) has its own scratch
        _background_patterns(first, stop, background_t, sorted_t, prefix, nan_rows, n_valid,
                             rows, path_ptr, feature, lower, upper, missing_branch,
                             missing_mode, patterns, counts, n_distinct, reached,
                             *_pattern_scratch(n_background, rows.shape[0], prefix.shape[2]))

    run_parts(call, len(path_ptr) - 1, n_background * len(feature))
    return patterns, counts, n_distinct


tree_background_patterns.__doc__ = "Numba twin of ``_tree_numpy.tree_background_patterns``."


_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@register_jitable(error_model="numpy")
def _popcount(x):
    """Set bits of a uint64 in a fixed dozen operations (SWAR), not one per bit: the
    walk counts sets of up to 64 background rows at every leaf it reaches."""
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return int((x * _H01) >> np.uint64(56))


@register_jitable(error_model="numpy")
def _interventional_rows(X, row_start, row_stop, path_start, path_stop, patterns, counts,
                         n_distinct, n_background, path_ptr, feature, lower, upper,
                         missing_branch, missing_mode, out_ptr, out_index, out_value, out,
                         row_bits, keys, slot_of_row, contribution):
    # A row's contributions along a path depend only on its pattern of satisfied splits
    # (xb), and the rows of a block share few patterns: each distinct pattern is worked
    # out once per block (same operations, so the same bits as one per row). The scratch
    # (ROW_BLOCK rows) comes from tree_interventional_shap.
    weights = SHAPLEY_WEIGHTS
    one = np.uint64(1)
    n_rows = row_stop - row_start
    for p in range(path_start, path_stop):
        start = path_ptr[p]
        u = path_ptr[p + 1] - start
        if u == 0 or n_distinct[p] == 0:  # no background row reaches (see rows) or none
            continue
        full = (one << np.uint64(u)) - one
        n_keys = _distinct_patterns(X, row_start, n_rows, start, u, feature, lower, upper,
                                    missing_branch, missing_mode, row_bits, keys,
                                    slot_of_row)
        for slot in range(n_keys):
            xb = keys[slot]
            c = contribution[slot]
            for j in range(u):
                c[j] = 0.0
            for m in range(n_distinct[p]):
                rb = patterns[p, m]
                if full & ~(xb | rb):
                    continue
                a = xb & ~rb
                b = rb & ~xb
                s = _popcount(a)
                n = s + _popcount(b)
                if n == 0:
                    continue
                plus = counts[p, m] * weights[s - 1, n] if s > 0 else 0.0
                minus = counts[p, m] * weights[s, n] if s < n else 0.0
                for j in range(u):
                    bit = one << np.uint64(j)
                    if a & bit:
                        c[j] += plus
                    elif b & bit:
                        c[j] -= minus
        for k in range(out_ptr[p], out_ptr[p + 1]):
            g = out_index[k]
            v = out_value[k] / n_background
            for r in range(n_rows):
                c = contribution[slot_of_row[r]]
                for j in range(u):
                    out[row_start + r, g, feature[start + j]] += c[j] * v


@njit(cache=True, nogil=True, error_model="numpy")
def _interventional_parts(X, first, stop, by_rows, patterns, counts, n_distinct, n_background,
                          path_ptr, feature, lower, upper, missing_branch, missing_mode,
                          out_ptr, out_index, out_value, out, buffers, row_bits, keys,
                          slot_of_row, contribution):
    """Parts of ``tree_interventional_shap``, as in ``_shap_parts``."""
    n_rows = X.shape[0]
    n_paths = len(path_ptr) - 1
    chunk = (n_paths + PATH_CHUNKS - 1) // PATH_CHUNKS
    for part in range(first, stop):
        # one call site, so the row kernel is compiled once (a literal 0 for the first
        # path would make numba compile a second specialisation)
        if by_rows:
            row_lo, row_hi = part * ROW_BLOCK, min(n_rows, (part + 1) * ROW_BLOCK)
            path_lo, path_hi = 0, n_paths
            target = out
        else:
            row_lo, row_hi = 0, n_rows
            path_lo = min(n_paths, part * chunk)
            path_hi = min(n_paths, (part + 1) * chunk)
            target = buffers[part]
        for lo in range(row_lo, row_hi, ROW_BLOCK):  # row blocks bound the scratch
            _interventional_rows(X, lo, min(row_hi, lo + ROW_BLOCK), path_lo, path_hi,
                                 patterns, counts, n_distinct, n_background, path_ptr,
                                 feature, lower, upper, missing_branch, missing_mode,
                                 out_ptr, out_index, out_value, target, row_bits, keys,
                                 slot_of_row, contribution)


def tree_interventional_shap(X, patterns, counts, n_distinct, n_background, path_ptr, feature,
                             lower, upper, missing_branch, missing_mode, out_ptr, out_index,
                             out_value, out):
    args = (patterns, counts, n_distinct, n_background, path_ptr, feature, lower, upper,
            missing_branch, missing_mode, out_ptr, out_index, out_value)
    max_u = _max_length(path_ptr)

    def scratch():  # allocated here, so that the kernel compiles no allocators
        return (np.empty(ROW_BLOCK, np.uint64), np.empty(ROW_BLOCK, np.uint64),
                np.empty(ROW_BLOCK, np.int64), np.empty((ROW_BLOCK, max_u)))

    work = X.shape[0] * len(feature) * max(1, patterns.shape[1] // 8)
    return _in_parts(_interventional_parts, X, work, args, out, scratch)


tree_interventional_shap.__doc__ = "Numba twin of ``_tree_numpy.tree_interventional_shap``."


# -- interventional values by walking the trees (few rows) -------------------------------
# The row-set walk of ``_tree_numpy.tree_interventional_walk``: a state is a node, the sides
# of the features parted so far (``side_of``, restored from a trail when the depth-first
# walk backs up) and the set of background rows sharing them (bit words). The rows
# following each edge are worked out once per background from the sorted-run index
# (``_run_index``: a binary search or two and a few word operations, whatever the number
# of rows), so a state's edge test is one AND per word. Sides are kept per *player*
# (``player[f]`` of the column f a node tests): the column itself, or its group, so that
# the columns of a group part once and come from x or z together.
FROM_X = 1
FROM_Z = 2


@register_jitable(error_model="numpy")
def _edge_follows(x, node, edge_ptr, edge_lower, edge_upper, missing_branch, missing_mode):
    """Whether the number x follows the edge into ``node``."""
    if _is_missing(x, missing_mode[node]):
        return missing_branch[node] != 0
    for k in range(edge_ptr[node], edge_ptr[node + 1]):
        if edge_lower[k] <= x < edge_upper[k]:
            return True
    return False


@njit(cache=True, inline="always")
def _edge_rows(f, node, sorted_t, prefix, nan_rows, n_valid, zero_runs, edge_ptr, edge_lower,
               edge_upper, missing_branch, missing_mode, into):
    """into = the background rows whose value of feature f follows the edge into
    ``node``."""
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
def _all_edge_rows(first, stop, sorted_t, prefix, nan_rows, n_valid, zero_runs, feature,
                   edge_ptr, edge_lower, edge_upper, missing_branch, missing_mode, roots,
                   edge_rows):
    """edge_rows[i] = the background rows following the edge into node i (roots: none),
    for the nodes ``first .. stop - 1``. Worked out for every node at once: filling them
    as walks reach them was no faster (the background's own walk reaches most) and
    slowed the walk's inner loop."""
    for node in range(first, stop):
        if roots[node]:
            edge_rows[node, :] = 0
        else:
            _edge_rows(feature[node], node, sorted_t, prefix, nan_rows, n_valid, zero_runs,
                       edge_ptr, edge_lower, edge_upper, missing_branch, missing_mode,
                       edge_rows[node])


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
def _leaf_values(node, rows, n_x, n_z, level, n_background, value_ptr, value_index, value,
                 sums):
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
    for k in range(value_ptr[node], value_ptr[node + 1]):
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
def _walk_tree(x, root, n_rows, n_background, child_ptr, child, feature, edge_ptr,
               edge_lower, edge_upper, missing_branch, missing_mode, value_ptr, value_index,
               value, edge_rows, player, side_of, trail, sums, st_node, st_rows, st_counts,
               st_trail, st_feature, st_side, current, follow, out):
    """Add one tree's interventional values of row x (over the ``n_rows`` background rows
    indexed) to ``out`` (n_outputs, n_players); scratch arrays are the caller's (``sums``
    zero on entry, and again on return). ``st_feature`` and ``trail`` hold players."""
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
            _leaf_values(node, st_rows[top], n_x, n_z, trail_len, n_background, value_ptr,
                         value_index, value, sums)
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
            x_follows = _edge_follows(x[f], c, edge_ptr, edge_lower, edge_upper,
                                      missing_branch, missing_mode)
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
def _background_tree(root, n_rows, child_ptr, child, value_ptr, value_index, value, edge_rows,
                     st_node, st_rows, current, out):
    """Add the leaf values the ``n_rows`` background rows reach in one tree to ``out``
    (n_outputs,), walking the tree with sets of rows."""
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
def _walk_rows_source(X, tree_root, n_background, n_rows, child_ptr, child, feature, edge_ptr,
               edge_lower, edge_upper, missing_branch, missing_mode, value_ptr, value_index,
               value, max_depth, max_children, edge_rows, player, buffers):
    """Blocks of trees in parallel, each walking its trees for every row into
    ``buffers[block]``: the blocks are fixed in number, so the sums do not depend on the
    thread count."""
    n_rows_x = X.shape[0]
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
                _walk_tree(X[i], tree_root[t], n_rows, n_background, child_ptr, child,
                           feature, edge_ptr, edge_lower, edge_upper, missing_branch,
                           missing_mode, value_ptr, value_index, value, edge_rows, player,
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
def _background_sums(first, stop, tree_root, n_rows, child_ptr, child, value_ptr, value_index,
                     value, max_depth, max_children, edge_rows, sums):
    """sums[block] += the leaf values the background rows reach in the trees of blocks
    ``first .. stop - 1``."""
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
            _background_tree(tree_root[t], n_rows, child_ptr, child, value_ptr, value_index,
                             value, edge_rows, st_node, st_rows, current, sums[block])


def _zero_runs(sorted_t, n_valid):
    """Per column, the run of sorted positions holding LightGBM's zero (|x| <= 1e-35)."""
    runs = np.zeros((sorted_t.shape[0], 2), np.int64)
    low = np.nextafter(-LIGHTGBM_ZERO_THRESHOLD, np.inf)
    high = np.nextafter(LIGHTGBM_ZERO_THRESHOLD, np.inf)
    for f in range(sorted_t.shape[0]):
        runs[f] = np.searchsorted(sorted_t[f, :n_valid[f]], [low, high])
    return runs


def walk_chunk_rows(n_features, n_background):
    """Background rows per pass of the walk, so that the sorted-run index of a pass
    stays within ``INDEX_BYTES``; at least 64."""
    rows = n_background
    while rows > 64 and _index_bytes(n_features, rows) > INDEX_BYTES:
        rows = max(64, (rows + 1) // 2)
    return rows


@dataclass
class _PreparedBackground:
    """What the walk keeps of a background, for one ensemble's trees: per chunk of rows
    the rows following each edge, and the background's summed leaf values."""

    trees: tuple  # weak references to the trees' arrays
    background: np.ndarray
    chunks: list  # (rows in the chunk, edge_rows)
    sums: np.ndarray


# The last background each thread prepared: explaining one row at a time against the same
# background (a served model) then pays for its index, edge rows and leaf sums once, not
# per call. A hit needs the same tree arrays (alive) and an equal background.
_PREPARED = threading.local()


def forget_background():
    """Drop this thread's kept background (the next walk prepares it anew)."""
    _PREPARED.last = None


def _chunk_edge_rows(chunk, trees, roots, sums):
    """The rows of a background chunk (columns of ``chunk``) following each edge; adds
    the leaf values they reach to ``sums`` (one row per block of trees)."""
    (tree_root, child_ptr, child, feature, edge_ptr, edge_lower, edge_upper, missing_branch,
     missing_mode, value_ptr, value_index, value, max_depth, max_children) = trees
    sorted_t, prefix, nan_rows, n_valid = _run_index(chunk)
    edge_rows = np.empty((len(feature), prefix.shape[2]), np.uint64)
    zero_runs = _zero_runs(sorted_t, n_valid)
    work = len(feature) * prefix.shape[2]  # a few word operations per node and word

    def edges(first, stop):
        _all_edge_rows(first, stop, sorted_t, prefix, nan_rows, n_valid, zero_runs, feature,
                       edge_ptr, edge_lower, edge_upper, missing_branch, missing_mode, roots,
                       edge_rows)

    def leaves(first, stop):
        _background_sums(first, stop, tree_root, chunk.shape[1], child_ptr, child, value_ptr,
                         value_index, value, max_depth, max_children, edge_rows, sums)

    run_parts(edges, len(feature), work)
    run_parts(leaves, sums.shape[0], work)
    return edge_rows


def _prepare_background(background, trees, n_outputs):
    last = getattr(_PREPARED, "last", None)
    arrays = trees[:-2]  # the sizes follow from them
    if (last is not None and all(ref() is a for ref, a in zip(last.trees, arrays, strict=True))
            and last.background.shape == background.shape
            and np.array_equal(last.background, background, equal_nan=True)):
        return last
    tree_root, feature = trees[0], trees[3]
    roots = np.zeros(len(feature), np.bool_)
    roots[tree_root] = True
    n_blocks = max(1, min(len(tree_root), PATH_CHUNKS))
    sums = np.zeros((n_blocks, n_outputs))
    chunks = []
    step = walk_chunk_rows(background.shape[1], background.shape[0])
    for first in range(0, background.shape[0], step):  # the values are linear in the rows
        chunk = np.ascontiguousarray(background[first:first + step].T, dtype=np.float64)
        chunks.append((chunk.shape[1], _chunk_edge_rows(chunk, trees, roots, sums)))
    prepared = _PreparedBackground(
        trees=tuple(weakref.ref(a) for a in arrays),
        background=background.copy(), chunks=chunks, sums=sums.sum(axis=0))
    _PREPARED.last = prepared
    return prepared


def tree_interventional_walk(X, background, tree_root, child_ptr, child, feature, edge_ptr,
                             edge_lower, edge_upper, missing_branch, missing_mode, value_ptr,
                             value_index, value, max_depth, max_children, out, base,
                             player=None):
    trees = (tree_root, child_ptr, child, feature, edge_ptr, edge_lower, edge_upper,
             missing_branch, missing_mode, value_ptr, value_index, value, int(max_depth),
             int(max_children))
    n_background = background.shape[0]
    player = (np.arange(X.shape[1], dtype=np.int64) if player is None
              else np.ascontiguousarray(player, dtype=np.int64))
    prepared = _prepare_background(background, trees, base.shape[0])
    X = np.ascontiguousarray(X, dtype=np.float64)
    n_blocks = max(1, min(len(tree_root), PATH_CHUNKS))
    buffers = np.zeros((n_blocks,) + out.shape)
    # work in the unit of the path kernels (~30 ns): a node's edge test costs one word
    # operation per 64 background rows
    with threads_for(X.shape[0] * len(feature) * ((n_background + 63) // 64)):
        for n_rows, edge_rows in prepared.chunks:
            _walk_rows(X, tree_root, n_background, n_rows, *trees[1:], edge_rows, player,
                       buffers)
    for block in range(n_blocks):
        out += buffers[block]
    base += prepared.sums / n_background
    return out, base


tree_interventional_walk.__doc__ = "Numba twin of ``_tree_numpy.tree_interventional_walk``."
