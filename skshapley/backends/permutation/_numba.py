"""Numba CPU kernels of orderings, twins of ``_numpy.py`` (same names, same signatures).

Outer loops run with ``prange``; each iteration writes only its own rows, so results are
bit-identical for any thread count, and the serial build (used for small arrays) gives
the same bits too.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from skshapley.backends._numba_runtime import PARALLEL_MIN_ELEMENTS, compile_twice
from skshapley.backends.permutation._numpy import (
    PHILOX_M0,
    PHILOX_ROUNDS,
    SPLITMIX_GAMMA,
    philox_bits,
)


def _precedence_bits(orders, out):
    n, d = orders.shape
    n_words = out.shape[1]
    for p in prange(n):
        ranks = np.empty(d, dtype=np.int64)
        for t in range(d):
            ranks[orders[p, t]] = t
        for w in range(n_words):
            out[p, w] = 0
        pair = 0
        for i in range(d):
            for j in range(i + 1, d):
                if ranks[i] < ranks[j]:
                    out[p, pair >> 6] |= np.uint64(1) << np.uint64(pair & 63)
                pair += 1
    return out


_bits_serial, _bits_parallel = compile_twice(_precedence_bits)


def precedence_bits(orders, out):
    """Numba twin of ``_numpy.precedence_bits``."""
    work = orders.shape[0] * orders.shape[1] ** 2
    return (_bits_parallel if work >= PARALLEL_MIN_ELEMENTS else _bits_serial)(orders, out)


def _discordant_pairs(bits_a, bits_b, out):
    n_a, n_words = bits_a.shape
    n_b = bits_b.shape[0]
    m1 = np.uint64(0x5555555555555555)
    m2 = np.uint64(0x3333333333333333)
    m4 = np.uint64(0x0F0F0F0F0F0F0F0F)
    h01 = np.uint64(0x0101010101010101)
    for a in prange(n_a):
        for b in range(n_b):
            total = 0
            for w in range(n_words):
                # SWAR popcount of one 64-bit word.
                x = bits_a[a, w] ^ bits_b[b, w]
                x = x - ((x >> np.uint64(1)) & m1)
                x = (x & m2) + ((x >> np.uint64(2)) & m2)
                x = (x + (x >> np.uint64(4))) & m4
                total += np.int64((x * h01) >> np.uint64(56))
            out[a, b] = total
    return out


_dis_serial, _dis_parallel = compile_twice(_discordant_pairs)


def discordant_pairs(bits_a, bits_b, out):
    """Numba twin of ``_numpy.discordant_pairs``."""
    work = bits_a.shape[0] * bits_b.shape[0] * bits_a.shape[1]
    return (_dis_parallel if work >= PARALLEL_MIN_ELEMENTS else _dis_serial)(bits_a, bits_b, out)


@njit(cache=True, nogil=True)
def _mix64_scalar(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _philox_orders(seed, start, n_bits, out):
    n, d = out.shape
    left_bits = n_bits // 2
    right_bits = n_bits - left_bits
    left_mask = np.uint64((1 << left_bits) - 1)
    right_mask = np.uint64((1 << right_bits) - 1)
    shift = np.uint64(right_bits - left_bits)
    m0 = np.uint64(PHILOX_M0)
    low32 = np.uint64(0xFFFFFFFF)
    for p in prange(n):
        keys = np.empty(PHILOX_ROUNDS, dtype=np.uint64)
        counter = np.uint64(start + p) * np.uint64(PHILOX_ROUNDS)
        for r in range(PHILOX_ROUNDS):
            z = np.uint64(seed) + (counter + np.uint64(r + 1)) * np.uint64(SPLITMIX_GAMMA)
            keys[r] = _mix64_scalar(z) & low32
        t = 0
        for i in range(1 << n_bits):
            x = np.uint64(i)
            left = x >> np.uint64(right_bits)
            right = x & right_mask
            for r in range(PHILOX_ROUNDS):
                product = m0 * left
                new_left = ((product >> np.uint64(32)) ^ keys[r] ^ right) & left_mask
                right = ((((product & low32) << shift) & low32)
                         | (right >> np.uint64(left_bits))) & right_mask
                left = new_left
            value = (left << np.uint64(right_bits)) | right
            if value < np.uint64(d):  # compaction: keep in-range values in i order
                out[p, t] = np.int64(value)
                t += 1
    return out


_philox_serial, _philox_parallel = compile_twice(_philox_orders)


def philox_orders(seed, start, out):
    """Numba twin of ``_numpy.philox_orders``."""
    n_bits = philox_bits(out.shape[1])
    big = out.shape[0] << n_bits >= PARALLEL_MIN_ELEMENTS // 16
    kernel = _philox_parallel if big else _philox_serial
    return kernel(np.uint64(seed), np.int64(start), n_bits, out)
