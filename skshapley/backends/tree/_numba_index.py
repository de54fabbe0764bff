"""The sorted-run index of a background, shared by the numba pattern tables
(``_numba_patterns.py``) and the walk (``_numba_walk.py``): each column sorted, and the
row sets (64-bit words) of its first k rows in that order, so that the background rows
satisfying an interval are two binary searches and a few word operations.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

# the sorted-run index of a background chunk (prefix row sets) may take this many bytes;
# past it, the patterns are built by testing every background row (same result), and the
# walk takes the background in chunks of rows whose index fits
INDEX_BYTES = 32 * 2**20


def _index_bytes(n_features, n_rows):
    """Bytes of the prefix row sets of ``_run_index`` for a chunk of n_rows."""
    return 8 * n_features * (n_rows + 1) * ((n_rows + 63) // 64)


def index_fits(n_features, n_rows):
    """Whether the index of ``n_rows`` background rows fits ``INDEX_BYTES``."""
    return _index_bytes(n_features, n_rows) <= INDEX_BYTES


def walk_chunk_rows(n_features, n_background):
    """Background rows per pass of the walk, so that the sorted-run index of a pass
    stays within ``INDEX_BYTES``; at least 64."""
    rows = n_background
    while rows > 64 and _index_bytes(n_features, rows) > INDEX_BYTES:
        rows = max(64, (rows + 1) // 2)
    return rows


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


@register_jitable(error_model="numpy")
def _sorted_run(values, n, lower, upper):
    """Positions a <= b of the first n (ascending) ``values`` with lower <= v < upper are
    a:b. A split's side has one infinite bound: no search for it."""
    a = 0 if lower == -np.inf else _lower_bound(values, n, lower)
    b = n if upper == np.inf else max(a, _lower_bound(values, n, upper))
    return a, b


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
