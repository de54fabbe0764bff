"""Kernels of the CDF sketch's column fast paths (``_cdf_fit``): one pass that counts a
column's distinct values while they are few (by hashing, or by a histogram of a window
of integers), and one that takes a point mass out of a column.

``distinct_values`` counts the values of a contiguous column in an open-addressing hash
table keyed on their bits (Fibonacci hashing, Knuth 1973, Sec. 6.4; linear probing), and
stops as soon as one more distinct value than asked for turns up: on a continuous
column after a few hundred values, so the pass costs nothing where it does not apply.
Each block of values first has its slots computed in a loop that vectorises, then is
counted in a loop whose only branch (a miss: a new value, a probe or a NaN) is rarely
taken; unit weights are counted in ``LANES`` copies of the counters, taken in turn, so
that a repeated value does not wait on one counter.

``split_spike`` copies the values of a column that differ from one value (its point
mass) to a buffer, counting that value's rows, the rows below it and the NaNs.

All are serial ``nogil`` numba builds; their numpy references are in
``tests/sketch/test_cdf_column_paths.py`` (``np.unique``, boolean masks). The numpy
backend does not take these paths: its summaries are the reference.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends.sketch import SIGN, numba_build

__all__ = ["EMPTY", "distinct_values", "integer_values", "split_spike"]

# An empty slot of the hash table: a signalling-NaN pattern, never a kept value's key
# (NaN is never kept, and a NaN of this pattern is sent to the NaN slot, not hashed).
EMPTY = np.uint64(0x7FF4_0000_0000_0001)
# the NaN slot's key: the quiet NaN that numpy writes (np.nan), so that a column with
# many NaNs rarely takes the miss branch
QUIET_NAN = np.uint64(0x7FF8_0000_0000_0000)
MULTIPLIER = np.uint64(0x9E37_79B9_7F4A_7C15)  # 2^64 / golden ratio (Knuth 1973)
# Values per block: the slots of a block are computed first, in a loop that vectorises
# (its indices come from range alone, so numba adds no negative-index wraparound; the
# same loop over x[start + i] took 0.77 ms per 1e6 Poisson(3) values, 0.47 ms here).
BLOCK = 2048
# Copies of the unit-weight counters (a power of two): one copy took 0.85 ms per 1e6
# Poisson(3) values, four 0.75 ms (the counters of a repeated value are touched in turn).
LANES = 4


def table_size(limit):
    """Slots of the hash table for at most ``limit`` distinct values: a power of two of
    at least twice as many (linear probing stays short below half full)."""
    size = 16
    while size < 2 * limit + 2:
        size *= 2
    return size


# ------------------------------------------------------------------ loops (numba)
def _slots_unit(values, bits, shift, nan_slot, slots):
    """Each value's home slot (NaN: ``nan_slot``); returns the NaN count."""
    n_nan = 0
    for i in range(values.shape[0]):
        v = values[i]
        h = np.int64((bits[i] * MULTIPLIER) >> shift)
        slots[i] = h if v == v else nan_slot
        n_nan += np.int64(v != v)
    return n_nan


def _slots_weighted(values, bits, w, shift, nan_slot, slots):
    """As ``_slots_unit``; returns the NaN count and the count of kept values (not NaN,
    weight > 0)."""
    n_nan = 0
    n_kept = 0
    for i in range(values.shape[0]):
        v = values[i]
        h = np.int64((bits[i] * MULTIPLIER) >> shift)
        slots[i] = h if v == v else nan_slot
        n_nan += np.int64(v != v)
        n_kept += np.int64(v == v) & np.int64(w[i] > 0.0)
    return n_nan, n_kept


def _find(b, h, keys, mask, limit, used):
    """The slot of the key ``b`` from its home slot ``h`` (inserted if new): ``(slot,
    used)``, slot -1 when the table already holds ``limit`` keys and ``b`` is new."""
    while True:
        k = keys[h]
        if k == b:
            return h, used
        if k == EMPTY:
            if used == limit:
                return -1, used
            keys[h] = b
            return h, used + 1
        h = (h + 1) & mask


def _count_unit(values, bits, slots, keys, counts, mask, limit, used, state):
    """Count a block (unit weights) into ``counts[i % LANES]``; ``state`` receives
    ``(used, stop)``, ``stop`` the index of the first value past ``limit`` (or -1)."""
    for i in range(values.shape[0]):
        h = slots[i]
        b = bits[i]
        if keys[h] != b:  # a new value, a collision, or a NaN of another pattern
            v = values[i]
            if v != v:
                continue
            h, used = _find(b, h, keys, mask, limit, used)
            if h < 0:
                state[0] = used
                state[1] = i
                return
        counts[i & (LANES - 1), h] += 1.0
    state[0] = used
    state[1] = -1


def _count_weighted(values, bits, w, slots, keys, counts, mask, limit, used, state):
    """As ``_count_unit`` with weights, summed in row order (np.bincount's order) into
    ``counts[0]``; a value of weight 0 is not added to the table."""
    for i in range(values.shape[0]):
        h = slots[i]
        b = bits[i]
        if keys[h] != b:
            v = values[i]
            if v != v or not w[i] > 0.0:
                continue
            h, used = _find(b, h, keys, mask, limit, used)
            if h < 0:
                state[0] = used
                state[1] = i
                return
        counts[0, h] += w[i]
    state[0] = used
    state[1] = -1


def _distinct_loops(x, bits, w, weighted, shift, keys, counts, limit, out):
    """Count the distinct values of ``x`` into ``keys``/``counts`` (slot ``keys.size - 1``
    is the NaN slot) until more than ``limit`` turn up; ``out`` receives ``(stop,
    n_nan, n_kept)`` of the values read (``stop``: ``x.size`` or the index of the first
    value past ``limit``)."""
    n = x.shape[0]
    size = keys.shape[0] - 1
    mask = size - 1
    slots = np.empty(BLOCK, dtype=np.int64)
    state = np.zeros(2, dtype=np.int64)
    used = 0
    n_nan = 0
    n_kept = 0
    for start in range(0, n, BLOCK):
        stop = min(n, start + BLOCK)
        xb = x[start:stop]
        bb = bits[start:stop]
        if weighted:
            wb = w[start:stop]
            nan_b, kept_b = _slots_weighted(xb, bb, wb, shift, size, slots)
            _count_weighted(xb, bb, wb, slots, keys, counts, mask, limit, used, state)
        else:
            nan_b = _slots_unit(xb, bb, shift, size, slots)
            kept_b = stop - start - nan_b
            _count_unit(xb, bb, slots, keys, counts, mask, limit, used, state)
        used = state[0]
        if state[1] >= 0:  # past the limit: what was read is a sample of the column
            out[0] = start + state[1]
            out[1] = n_nan
            out[2] = n_kept
            return
        n_nan += nan_b
        n_kept += kept_b
    out[0] = n
    out[1] = n_nan
    out[2] = n_kept


def _codes(values, bits, lo, top, dump, codes):
    """Each value's integer offset ``v - lo`` in ``[0, dump)``, else ``dump`` (not an
    integer of the window, or NaN); returns the NaN and -0.0 counts. Vectorises."""
    n_nan = 0
    n_negative_zero = 0
    for i in range(values.shape[0]):
        v = values[i]
        t = v - lo
        c = t if t > 0.0 else 0.0
        c = c if c < top else top
        k = np.int32(c)
        codes[i] = k if np.float64(k) == t else dump
        n_nan += np.int64(v != v)
        n_negative_zero += np.int64(bits[i] == SIGN)
    return n_nan, n_negative_zero


def _tally(codes, m, hist):
    """Add ``codes[:m]`` to ``hist``, value ``i`` to row ``i % LANES`` (unrolled)."""
    q = m - m % LANES
    for i in range(0, q, LANES):
        for lane in range(LANES):
            hist[lane, codes[i + lane]] += 1
    for i in range(q, m):
        hist[0, codes[i]] += 1


def _window_loops(x, bits, lo, span, hist, out):
    """Histogram of the integers ``lo .. lo + span - 1`` of ``x`` (``hist`` is ``(LANES,
    span + 1)``; column ``span`` takes every other value and NaN); ``out`` receives the
    NaN and -0.0 counts."""
    n = x.shape[0]
    codes = np.empty(BLOCK, dtype=np.int32)
    top = np.float64(span) - 1.0
    dump = np.int32(span)
    n_nan = 0
    n_negative_zero = 0
    for start in range(0, n, BLOCK):
        stop = min(n, start + BLOCK)
        nan_b, zero_b = _codes(x[start:stop], bits[start:stop], lo, top, dump, codes)
        n_nan += nan_b
        n_negative_zero += zero_b
        _tally(codes, stop - start, hist)
    out[0] = n_nan
    out[1] = n_negative_zero


def _spike_loops(x, spike, rest, out):
    """Copy the values of ``x`` other than ``spike`` (NaN included) to ``rest``, in
    order; ``out`` receives ``(copied, rows at spike, rows below spike)``.

    The copy is one loop without branches: each value is written and the write position
    advances when it is kept (0.28 ms per 1e6 values; skipping NaN in it as well, or
    counting in it, 0.55 ms; a branch per value, 3.7 ms). The count below runs apart,
    in a loop that vectorises (0.09 ms).
    """
    m = 0
    for i in range(x.shape[0]):
        v = x[i]
        rest[m] = v
        m += np.int64(v != spike)
    n_below = 0
    for i in range(x.shape[0]):
        n_below += np.int64(x[i] < spike)
    out[0] = m
    out[1] = x.shape[0] - m
    out[2] = n_below


_BUILDS = {}


def _kernels():
    if not _BUILDS:
        namespace = dict(_distinct_loops.__globals__)
        for f in (_slots_unit, _slots_weighted, _find, _codes, _tally):
            namespace[f.__name__] = numba_build(f, namespace, inline="always")
        for f in (_count_unit, _count_weighted):
            namespace[f.__name__] = numba_build(f, namespace)
        _BUILDS["distinct"] = numba_build(_distinct_loops, namespace)
        _BUILDS["spike"] = numba_build(_spike_loops, namespace)
        _BUILDS["window"] = numba_build(_window_loops, namespace)
    return _BUILDS


# ------------------------------------------------------------------ entry points
def distinct_values(x, w, limit):
    """The distinct values of the contiguous float64 column ``x`` (NaN and, with weights
    ``w``, zero weights skipped) while there are at most ``limit`` of them.

    Returns ``(values, weights, n_nan, n_kept)``: ``values`` sorted (as ``np.unique``),
    ``weights`` their weight (unit weights: counts; weights: summed in row order, the
    bits of ``np.bincount``), or ``(None, (value, share), stop, None)`` when more than
    ``limit`` distinct values turn up, ``value`` the most frequent value among the first
    ``stop`` rows and ``share`` its share of their kept rows (a hint of a point mass).
    ``values`` may hold infinities (the caller refuses them) and holds -0.0 as a value
    apart from 0.0.
    """
    size = table_size(limit)
    keys = np.full(size + 1, EMPTY, dtype=np.uint64)
    keys[size] = QUIET_NAN
    weighted = w is not None
    # float64 counters either way (one build; counts are exact integers below 2^53)
    counts = np.zeros((1 if weighted else LANES, size + 1))
    out = np.zeros(3, dtype=np.int64)
    shift = np.uint64(64 - (size.bit_length() - 1))
    _kernels()["distinct"](x, x.view(np.uint64), w if weighted else x, weighted, shift,
                           keys, counts, limit, out)
    stop, n_nan, n_kept = (int(v) for v in out)
    if stop < x.shape[0]:
        # the hint straight from the slots (an empty one weighs 0): the listing below
        # took half of this call's 22 us on a continuous column
        weights = counts[0, :size] if weighted else counts[:, :size].sum(axis=0)
        top = int(np.argmax(weights))
        return None, (float(keys[top:top + 1].view(np.float64)[0]),
                      float(weights[top] / max(weights.sum(), 1e-300))), stop, None
    present = np.flatnonzero(keys[:size] != EMPTY)
    found = keys[present].view(np.float64)
    weights = counts[0, present] if weighted else counts[:, present].sum(axis=0)
    order = np.argsort(found)
    return found[order], weights[order], n_nan, n_kept


def integer_values(x, lo, span):
    """The distinct values of the contiguous float64 column ``x`` and their counts (as
    :func:`distinct_values` with unit weights) when every value but NaN is one of the
    integers ``lo .. lo + span - 1`` and none is -0.0 (whose sign a histogram loses):
    ``(values, counts, n_nan, n_kept)``; else ``None``."""
    hist = np.zeros((LANES, span + 1), dtype=np.int64)
    out = np.zeros(2, dtype=np.int64)
    _kernels()["window"](x, x.view(np.uint64), float(lo), span, hist, out)
    n_nan, n_negative_zero = int(out[0]), int(out[1])
    counts = hist.sum(axis=0)
    if n_negative_zero or counts[span] != n_nan:
        return None
    present = np.flatnonzero(counts[:span])
    return (float(lo) + present.astype(np.float64), counts[present].astype(np.float64),
            n_nan, x.shape[0] - n_nan)


def split_spike(x, spike):
    """The values of the contiguous column ``x`` other than ``spike`` (NaN included; a
    new array, in order) and ``(rows at spike, rows below spike)``."""
    rest = np.empty(x.shape[0])
    out = np.zeros(3, dtype=np.int64)
    _kernels()["spike"](x, float(spike), rest, out)
    return rest[:int(out[0])], (int(out[1]), int(out[2]))
