"""Numba CPU kernels of exact TreeSHAP, twins of ``_tree_numpy.py`` (§8.6.2).

Layout: ``prange`` over blocks of 64 rows; inside a block every path streams once and is
applied to the block's rows, which only that block writes, so results are identical for
any thread count. With few rows (under 16 blocks, which would leave threads idle) the
paths are split into a fixed number of chunks instead, each with its own
output buffer, summed afterwards in chunk order (again thread-count independent).
Within a block, a row's values along a path depend only on its pattern of satisfied
splits, so each distinct pattern is worked out once (``_distinct_patterns``), and the
path-dependent quadrature runs with the patterns innermost so that it vectorises; the
operations per pattern are those of one row, so the bits do not change.
Float64 throughout, no fastmath.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

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


_in_category_set = njit(cache=True, inline="always")(category_set_contains)


@njit(cache=True, inline="always")
def _satisfied(x, lower, upper, missing_branch, missing_mode):
    if x != x:  # NaN
        return missing_branch != 0
    zero = -LIGHTGBM_ZERO_THRESHOLD < x <= LIGHTGBM_ZERO_THRESHOLD
    if missing_mode == MISSING_NAN_OR_ZERO and zero:
        return missing_branch != 0
    return lower <= x < upper


@njit(cache=True, inline="always")
def _set_satisfied(x, lower, upper, missing_branch):
    """The rule of a ``CATEGORY_SET`` element: NaN goes the missing way, a number by
    its atom's bit in the set."""
    if x != x:
        return missing_branch != 0
    return _in_category_set(x, lower, upper)


@njit(cache=True)
def _path_coefficients(o, z, u, nodes, weights, prefix, coefficients):
    """c_i = (o_i - z_i) sum_q w_q prod_{j != i} (z_j + (o_j - z_j) t_q) (§8.1.3)."""
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(parallel=True, cache=True)
def _shap_by_rows(X, path_ptr, feature, lower, upper, missing_branch, missing_mode,
                  zero_fraction, out_ptr, out_index, out_value, max_u, out):
    n_rows = X.shape[0]
    n_paths = len(path_ptr) - 1
    n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(n_blocks):
        _shap_rows(X, b * ROW_BLOCK, min(n_rows, (b + 1) * ROW_BLOCK), 0, n_paths, path_ptr,
                   feature, lower, upper, missing_branch, missing_mode, zero_fraction,
                   out_ptr, out_index, out_value, max_u, out)


@njit(parallel=True, cache=True)
def _shap_by_paths(X, path_ptr, feature, lower, upper, missing_branch, missing_mode,
                   zero_fraction, out_ptr, out_index, out_value, max_u, out):
    n_paths = len(path_ptr) - 1
    chunk = (n_paths + PATH_CHUNKS - 1) // PATH_CHUNKS
    buffers = np.zeros((PATH_CHUNKS,) + out.shape)
    for c in prange(PATH_CHUNKS):
        for lo in range(0, X.shape[0], ROW_BLOCK):  # row blocks bound the scratch
            _shap_rows(X, lo, min(X.shape[0], lo + ROW_BLOCK), min(n_paths, c * chunk),
                       min(n_paths, (c + 1) * chunk), path_ptr, feature, lower, upper,
                       missing_branch, missing_mode, zero_fraction, out_ptr, out_index,
                       out_value, max_u, buffers[c])
    for c in range(PATH_CHUNKS):
        out += buffers[c]


def _max_length(path_ptr):
    return max(1, int(np.max(np.diff(path_ptr)))) if len(path_ptr) > 1 else 1


def _few_rows(n_rows):
    # A fixed cut (not a function of the thread count), so the summation order and hence
    # the bits of the result never depend on the machine.
    return n_rows < 16 * ROW_BLOCK


def tree_path_shap(X, path_ptr, feature, lower, upper, missing_branch, missing_mode,
                   zero_fraction, out_ptr, out_index, out_value, out):
    kernel = _shap_by_paths if _few_rows(X.shape[0]) else _shap_by_rows
    kernel(X, path_ptr, feature, lower, upper, missing_branch, missing_mode, zero_fraction,
           out_ptr, out_index, out_value, _max_length(path_ptr), out)
    return out


tree_path_shap.__doc__ = "Numba twin of ``_tree_numpy.tree_path_shap``."


@njit(cache=True)
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
            # suffix products with a_c replaced by 1 (O(u^2 q) per pattern and path, §8.6.2).
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


@njit(parallel=True, cache=True)
def _interactions_by_rows(X, path_ptr, feature, lower, upper, missing_branch, missing_mode,
                          zero_fraction, out_ptr, out_index, out_value, max_u, out):
    n_rows = X.shape[0]
    n_paths = len(path_ptr) - 1
    n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(n_blocks):
        _interaction_rows(X, b * ROW_BLOCK, min(n_rows, (b + 1) * ROW_BLOCK), 0, n_paths,
                          path_ptr, feature, lower, upper, missing_branch, missing_mode,
                          zero_fraction, out_ptr, out_index, out_value, max_u, out)


@njit(parallel=True, cache=True)
def _interactions_by_paths(X, path_ptr, feature, lower, upper, missing_branch, missing_mode,
                           zero_fraction, out_ptr, out_index, out_value, max_u, out):
    n_paths = len(path_ptr) - 1
    chunk = (n_paths + PATH_CHUNKS - 1) // PATH_CHUNKS
    buffers = np.zeros((PATH_CHUNKS,) + out.shape)
    for c in prange(PATH_CHUNKS):
        for lo in range(0, X.shape[0], ROW_BLOCK):  # row blocks bound the scratch
            _interaction_rows(X, lo, min(X.shape[0], lo + ROW_BLOCK), min(n_paths, c * chunk),
                              min(n_paths, (c + 1) * chunk), path_ptr, feature, lower,
                              upper, missing_branch, missing_mode, zero_fraction, out_ptr,
                              out_index, out_value, max_u, buffers[c])
    for c in range(PATH_CHUNKS):
        out += buffers[c]


def tree_path_interactions(X, path_ptr, feature, lower, upper, missing_branch, missing_mode,
                           zero_fraction, out_ptr, out_index, out_value, out):
    kernel = _interactions_by_paths if _few_rows(X.shape[0]) else _interactions_by_rows
    kernel(X, path_ptr, feature, lower, upper, missing_branch, missing_mode, zero_fraction,
           out_ptr, out_index, out_value, _max_length(path_ptr), out)
    return out


tree_path_interactions.__doc__ = "Numba twin of ``_tree_numpy.tree_path_interactions``."


@njit(cache=True)
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


@njit(cache=True, inline="always")
def _element_satisfied(x, e, lower, upper, missing_branch, missing_mode):
    """Whether value ``x`` satisfies path element ``e`` (interval or category set)."""
    if missing_mode[e] == CATEGORY_SET:
        return _set_satisfied(x, lower[e], upper[e], missing_branch[e])
    return _satisfied(x, lower[e], upper[e], missing_branch[e], missing_mode[e])


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _lowest_bit(word):
    """Index of the lowest set bit of a non-zero uint64 (de Bruijn multiplication)."""
    low = word & (~word + np.uint64(1))
    return _DE_BRUIJN_INDEX[(low * _DE_BRUIJN) >> np.uint64(58)]


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
        n = n_valid[f]  # a split's side has one infinite bound: no search for it
        lo = 0 if lower[e] == -np.inf else _lower_bound(sorted_t[f], n, lower[e])
        hi = n if upper[e] == np.inf else max(lo, _lower_bound(sorted_t[f], n, upper[e]))
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


@njit(parallel=True, cache=True)
def _background_patterns(background_t, sorted_t, prefix, nan_rows, n_valid, rows, path_ptr,
                         feature, lower, upper, missing_branch, missing_mode, patterns,
                         counts, n_distinct, reached):
    n_background = background_t.shape[1]
    n_paths = len(path_ptr) - 1
    size = 2
    while size < 2 * n_background:  # load factor at most 1/2
        size *= 2
    chunk = (n_paths + PATH_CHUNKS - 1) // PATH_CHUNKS
    for c in prange(PATH_CHUNKS):
        bits = np.empty(n_background, np.uint64)
        row_bits = np.empty(rows.shape[0], np.uint64)
        alive = np.empty(prefix.shape[2], np.uint64)
        direct = np.zeros(DIRECT_PATTERNS, np.float64)
        table = np.full(size, -1, np.int64)
        used = np.empty(n_background, np.int64)
        for p in range(c * chunk, min(n_paths, (c + 1) * chunk)):
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
    index_bytes = 8 * n_features * (n_background + 1) * ((n_background + 63) // 64)
    if rows is None or len(rows) == 0 or index_bytes > INDEX_BYTES:
        rows = np.empty((0, n_features))
        sorted_t, prefix = np.empty((0, 0)), np.empty((0, 0, 0), np.uint64)
        nan_rows, n_valid = np.empty((0, 0), np.uint64), np.empty(0, np.int64)
    else:
        sorted_t, prefix, nan_rows, n_valid = _run_index(background_t)
    _background_patterns(background_t, sorted_t, prefix, nan_rows, n_valid,
                         np.ascontiguousarray(rows, dtype=np.float64), path_ptr, feature,
                         lower, upper, missing_branch, missing_mode, patterns, counts,
                         n_distinct, reached)
    return patterns, counts, n_distinct


tree_background_patterns.__doc__ = "Numba twin of ``_tree_numpy.tree_background_patterns``."


@njit(cache=True, inline="always")
def _popcount(x):
    count = 0
    while x:
        x &= x - np.uint64(1)
        count += 1
    return count


@njit(cache=True)
def _interventional_rows(X, row_start, row_stop, path_start, path_stop, patterns, counts,
                         n_distinct, n_background, path_ptr, feature, lower, upper,
                         missing_branch, missing_mode, out_ptr, out_index, out_value, max_u,
                         out):
    # A row's contributions along a path depend only on its pattern of satisfied splits
    # (xb), and the rows of a block share few patterns: each distinct pattern is worked
    # out once per block (same operations, so the same bits as one per row).
    weights = SHAPLEY_WEIGHTS
    one = np.uint64(1)
    n_rows = row_stop - row_start
    row_bits, keys, slot_of_row = _pattern_workspace(n_rows)
    contribution = np.empty((n_rows, max_u))
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


@njit(parallel=True, cache=True)
def _interventional_by_rows(X, patterns, counts, n_distinct, n_background, path_ptr, feature,
                            lower, upper, missing_branch, missing_mode, out_ptr, out_index,
                            out_value, max_u, out):
    n_rows = X.shape[0]
    n_paths = len(path_ptr) - 1
    n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(n_blocks):
        _interventional_rows(X, b * ROW_BLOCK, min(n_rows, (b + 1) * ROW_BLOCK), 0, n_paths,
                             patterns, counts, n_distinct, n_background, path_ptr, feature,
                             lower, upper, missing_branch, missing_mode, out_ptr, out_index,
                             out_value, max_u, out)


@njit(parallel=True, cache=True)
def _interventional_by_paths(X, patterns, counts, n_distinct, n_background, path_ptr,
                             feature, lower, upper, missing_branch, missing_mode, out_ptr,
                             out_index, out_value, max_u, out):
    n_paths = len(path_ptr) - 1
    chunk = (n_paths + PATH_CHUNKS - 1) // PATH_CHUNKS
    buffers = np.zeros((PATH_CHUNKS,) + out.shape)
    for c in prange(PATH_CHUNKS):
        for lo in range(0, X.shape[0], ROW_BLOCK):  # row blocks bound the scratch
            _interventional_rows(X, lo, min(X.shape[0], lo + ROW_BLOCK),
                                 min(n_paths, c * chunk), min(n_paths, (c + 1) * chunk),
                                 patterns, counts, n_distinct, n_background, path_ptr,
                                 feature, lower, upper, missing_branch, missing_mode,
                                 out_ptr, out_index, out_value, max_u, buffers[c])
    for c in range(PATH_CHUNKS):
        out += buffers[c]


def tree_interventional_shap(X, patterns, counts, n_distinct, n_background, path_ptr, feature,
                             lower, upper, missing_branch, missing_mode, out_ptr, out_index,
                             out_value, out):
    kernel = _interventional_by_paths if _few_rows(X.shape[0]) else _interventional_by_rows
    kernel(X, patterns, counts, n_distinct, n_background, path_ptr, feature, lower, upper,
           missing_branch, missing_mode, out_ptr, out_index, out_value, _max_length(path_ptr),
           out)
    return out


tree_interventional_shap.__doc__ = "Numba twin of ``_tree_numpy.tree_interventional_shap``."
