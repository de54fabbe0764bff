"""Numba CPU kernels of interventional TreeSHAP on paths, twins of ``_numpy.py``: the
distinct background bit patterns of each path, and the values from them. Laid out in
parts as the path-dependent kernels (``_numba_paths.py``); for few rows the patterns are
built through the background's sorted-run index (``_numba_index.py``), leaving out the
background rows that cannot add to those rows' values.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

from skshapley.backends._numba_runtime import run_parts
from skshapley.backends.tree._numba_index import (
    _popcount,
    _run_index,
    _sorted_run,
    index_fits,
)
from skshapley.backends.tree._numba_paths import (
    DIRECT_PATTERNS,
    ROW_BLOCK,
    _distinct_patterns,
    _in_parts,
    _mark_satisfied,
    _max_length,
    _part_range,
    _satisfied,
    _set_satisfied,
)
from skshapley.backends.tree._numpy import CATEGORY_SET, MISSING_NAN, SHAPLEY_WEIGHTS


@register_jitable(error_model="numpy")
def _required_elements(rows, start, u, paths, row_bits):
    """The path's elements that no row of ``rows`` satisfies, as a bit pattern: a
    background row failing one of them adds nothing to any of these rows' values."""
    _mark_satisfied(rows, start, u, paths, row_bits)
    some = np.uint64(0)
    for r in range(rows.shape[0]):
        some |= row_bits[r]
    one = np.uint64(1)
    return ((one << np.uint64(u)) - one) & ~some


@register_jitable(error_model="numpy")
def _element_satisfied(x, e, paths):
    """Whether value ``x`` satisfies path element ``e`` (interval or category set)."""
    if paths.missing_mode[e] == CATEGORY_SET:
        return _set_satisfied(x, paths.lower[e], paths.upper[e], paths.missing_branch[e])
    return _satisfied(x, paths.lower[e], paths.upper[e], paths.missing_branch[e],
                      paths.missing_mode[e])


_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DE_BRUIJN_INDEX = np.zeros(64, np.int64)
for _bit in range(64):
    _DE_BRUIJN_INDEX[((1 << _bit) * 0x03F79D71B4CB0A89 % 2**64) >> 58] = _bit


@register_jitable(error_model="numpy")
def _lowest_bit(word):
    """Index of the lowest set bit of a non-zero uint64 (de Bruijn multiplication)."""
    low = word & (~word + np.uint64(1))
    return _DE_BRUIJN_INDEX[(low * _DE_BRUIJN) >> np.uint64(58)]


@njit(cache=True, inline="always")
def _indexed_patterns(background_t, sorted_t, prefix, nan_rows, n_valid, start, u, required,
                      paths, alive, bits):
    """Patterns of the background rows that satisfy every ``required`` element, packed
    into ``bits``; returns how many, or -1 when no required element is a plain interval.
    The rows satisfying a plain interval are a run of its column sorted (``sorted_t``:
    ``n_valid`` numbers first, NaN last), found by binary search; ``prefix[f, k]`` is the
    set (bit words) of the first k rows of column f in that order, so a run is two
    lookups, and the rows in every required run are one AND per word (``alive``). Only
    those rows, few on a deep path, are tested element by element."""
    one = np.uint64(1)
    feature, lower, upper = paths.feature, paths.lower, paths.upper
    missing_branch, missing_mode = paths.missing_branch, paths.missing_mode
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
            kept = _keep_if_required(background_t, r, start, u, required, paths, bits,
                                     kept)
    return kept


@njit(cache=True, inline="always")
def _keep_if_required(background_t, r, start, u, required, paths, bits, kept):
    """Append background row r's pattern to ``bits[kept]`` if it satisfies every
    ``required`` element; returns the new count."""
    one = np.uint64(1)
    b = np.uint64(0)
    for j in range(u):
        e = start + j
        bit = one << np.uint64(j)
        if _element_satisfied(background_t[paths.feature[e], r], e, paths):
            b |= bit
        elif required & bit:
            return kept
    bits[kept] = b
    return kept + 1


@njit(cache=True, inline="always")
def _path_patterns(background_t, sorted_t, prefix, nan_rows, n_valid, rows, start, u, paths,
                   bits, row_bits, alive, direct, table, used, patterns_row, counts_row):
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
        required = _required_elements(rows, start, u, paths, row_bits)
        if required:
            n_kept = _indexed_patterns(background_t, sorted_t, prefix, nan_rows, n_valid,
                                       start, u, required, paths, alive, bits)
    if n_kept < 0:
        n_kept = background_t.shape[1]
        _mark_satisfied(background_t.T, start, u, paths, bits)
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
                         paths, patterns, counts, n_distinct, reached, bits, row_bits, alive,
                         direct, table, used):
    """Patterns of paths ``first .. stop - 1`` (each path is written apart); the scratch
    of ``_path_patterns`` comes from ``_pattern_scratch``."""
    path_ptr = paths.path_ptr
    for p in range(first, stop):
        u = path_ptr[p + 1] - path_ptr[p]
        m = _path_patterns(
            background_t, sorted_t, prefix, nan_rows, n_valid, rows, path_ptr[p], u, paths,
            bits, row_bits, alive, direct, table, used, patterns[p], counts[p])
        n_distinct[p] = m
        # the all-satisfied pattern sorts last: its count is the rows reaching the leaf
        full = ~np.uint64(0) if u >= 64 else (np.uint64(1) << np.uint64(u)) - np.uint64(1)
        reached[p] = counts[p, m - 1] if m > 0 and patterns[p, m - 1] == full else 0.0


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


def tree_background_patterns(background, paths, patterns, counts, n_distinct, rows=None,
                             reached=None):
    """Numba twin of ``_numpy.tree_background_patterns``."""
    background_t = np.ascontiguousarray(background.T)
    if reached is None:
        reached = np.empty(len(paths.path_ptr) - 1)
    n_features, n_background = background_t.shape
    if rows is None or len(rows) == 0 or not index_fits(n_features, n_background):
        rows = np.empty((0, n_features))
        sorted_t, prefix = np.empty((0, 0)), np.empty((0, 0, 0), np.uint64)
        nan_rows, n_valid = np.empty((0, 0), np.uint64), np.empty(0, np.int64)
    else:
        sorted_t, prefix, nan_rows, n_valid = _run_index(background_t)
    rows = np.ascontiguousarray(rows, dtype=np.float64)

    def call(first, stop):  # each range (thread) has its own scratch
        _background_patterns(first, stop, background_t, sorted_t, prefix, nan_rows, n_valid,
                             rows, paths, patterns, counts, n_distinct, reached,
                             *_pattern_scratch(n_background, rows.shape[0], prefix.shape[2]))

    run_parts(call, len(paths.path_ptr) - 1, n_background * len(paths.feature))
    return patterns, counts, n_distinct


@register_jitable(error_model="numpy")
def _interventional_rows(X, row_start, row_stop, path_start, path_stop, patterns, counts,
                         n_distinct, n_background, paths, out, row_bits, keys, slot_of_row,
                         contribution):
    # A row's contributions along a path depend only on its pattern of satisfied splits
    # (xb), and the rows of a block share few patterns: each distinct pattern is worked
    # out once per block (same operations, so the same bits as one per row). The scratch
    # (ROW_BLOCK rows) comes from tree_interventional_shap.
    weights = SHAPLEY_WEIGHTS
    one = np.uint64(1)
    n_rows = row_stop - row_start
    path_ptr, feature = paths.path_ptr, paths.feature
    out_ptr, out_index, out_value = paths.out_ptr, paths.out_index, paths.out_value
    for p in range(path_start, path_stop):
        start = path_ptr[p]
        u = path_ptr[p + 1] - start
        if u == 0 or n_distinct[p] == 0:  # no background row reaches (see rows) or none
            continue
        full = (one << np.uint64(u)) - one
        n_keys = _distinct_patterns(X, row_start, n_rows, start, u, paths, row_bits, keys,
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
                          paths, out, buffers, row_bits, keys, slot_of_row, contribution):
    """Parts of ``tree_interventional_shap``, as in ``_numba_paths._shap_parts``."""
    n_rows = X.shape[0]
    n_paths = len(paths.path_ptr) - 1
    for part in range(first, stop):
        row_lo, row_hi, path_lo, path_hi = _part_range(part, by_rows, n_rows, n_paths)
        target = out if by_rows else buffers[part]
        for lo in range(row_lo, row_hi, ROW_BLOCK):  # row blocks bound the scratch
            _interventional_rows(X, lo, min(row_hi, lo + ROW_BLOCK), path_lo, path_hi,
                                 patterns, counts, n_distinct, n_background, paths, target,
                                 row_bits, keys, slot_of_row, contribution)


def tree_interventional_shap(X, patterns, counts, n_distinct, n_background, paths, out):
    """Numba twin of ``_numpy.tree_interventional_shap``."""
    args = (patterns, counts, n_distinct, n_background, paths)
    max_u = _max_length(paths.path_ptr)

    def scratch():  # allocated here, so that the kernel compiles no allocators
        return (np.empty(ROW_BLOCK, np.uint64), np.empty(ROW_BLOCK, np.uint64),
                np.empty(ROW_BLOCK, np.int64), np.empty((ROW_BLOCK, max_u)))

    work = X.shape[0] * len(paths.feature) * max(1, patterns.shape[1] // 8)
    return _in_parts(_interventional_parts, X, work, args, out, scratch)
