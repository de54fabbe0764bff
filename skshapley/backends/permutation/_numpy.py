"""NumPy reference kernels of orderings: the oracle of the parity tests of ``_numba``,
``_numba_cuda`` and ``_cupy`` (same names and signatures), and the constants and host
steps of the counter-based orderings that the twins share.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends._array_common import popcount


def precedence_bits(orders, out):
    """Pack each ordering's pair-precedence bits [r_i < r_j], i < j, into uint64 words (the
    feature map of the Kendall and Mallows kernels, Mitchell et al. 2022, Sec. 3).

    Parameters
    ----------
    orders : int64 (n, d)
    out : uint64 (n, ceil(d (d - 1) / 2 / 64))
        Bit ``p % 64`` of word ``p // 64`` is pair p in row-major order (0, 1), (0, 2), ...,
        (1, 2), ...; padding bits are 0.

    Returns
    -------
    out : uint64 (n, n_words)
    """
    n, d = orders.shape
    ranks = np.empty_like(orders)
    np.put_along_axis(ranks, orders, np.arange(d)[None, :], axis=1)
    first, second = np.triu_indices(d, k=1)
    bits = (ranks[:, first] < ranks[:, second]).astype(np.uint64)
    out[...] = 0
    pair = np.arange(first.size)
    shifted = bits << (pair % 64).astype(np.uint64)
    for word in range(out.shape[1]):
        out[:, word] = np.bitwise_or.reduce(shifted[:, pair // 64 == word], axis=1)
    return out


def discordant_pairs(bits_a, bits_b, out):
    """n_dis between every ordering of A and of B: popcount of XORed precedence bits.

    Parameters
    ----------
    bits_a : uint64 (n_a, n_words)
    bits_b : uint64 (n_b, n_words)
    out : int64 (n_a, n_b)

    Returns
    -------
    out : int64 (n_a, n_b)
    """
    xor = bits_a[:, None, :] ^ bits_b[None, :, :]
    counts = np.bitwise_count(xor) if hasattr(np, "bitwise_count") else popcount(xor)
    out[...] = counts.sum(axis=2)
    return out


# Counter-based orderings (the bijective shuffle of Mitchell, Stokes, Frank & Holmes 2022,
# Sec. 3-4): a keyed Feistel/Philox bijection of [0, 2^b), compacted to the values below d.
# Constants of the VariablePhilox bijection and SplitMix64.
PHILOX_M0 = 0xD2B74407B1CE6E93
PHILOX_ROUNDS = 24
PHILOX_MIN_BITS = 8
SPLITMIX_GAMMA = 0x9E3779B97F4A7C15


def philox_bits(n_players):
    """Total bits b of the padded domain: max(8, bit_length(d - 1))."""
    return max(PHILOX_MIN_BITS, int(n_players - 1).bit_length())


def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def philox_keys(seed, indices, rounds=PHILOX_ROUNDS):
    """Round keys (len(indices), rounds): SplitMix64 outputs rounds j .. rounds j + rounds - 1
    from ``seed``."""
    with np.errstate(over="ignore"):
        counters = (np.asarray(indices, dtype=np.uint64)[:, None] * np.uint64(rounds)
                    + np.arange(1, rounds + 1, dtype=np.uint64)[None, :])
        return _mix64(np.uint64(seed) + counters * np.uint64(SPLITMIX_GAMMA)) & np.uint64(
            0xFFFFFFFF)


def philox_bijection(values, keys, n_bits):
    """Apply the keyed bijection to ``values`` (n, m) with keys (n, rounds): one Feistel
    round per key column (24 in the sampler; fewer only to test that they are needed)."""
    left_bits = n_bits // 2
    right_bits = n_bits - left_bits
    left_mask, right_mask = np.uint64((1 << left_bits) - 1), np.uint64((1 << right_bits) - 1)
    shift = np.uint64(right_bits - left_bits)
    left = values >> np.uint64(right_bits)
    right = values & right_mask
    with np.errstate(over="ignore"):
        for r in range(keys.shape[1]):
            product = np.uint64(PHILOX_M0) * left
            high, low = product >> np.uint64(32), product & np.uint64(0xFFFFFFFF)
            new_left = (high ^ keys[:, r : r + 1] ^ right) & left_mask
            right = (((low << shift) & np.uint64(0xFFFFFFFF)) | (right >> np.uint64(left_bits))) \
                & right_mask
            left = new_left
    return (left << np.uint64(right_bits)) | right


def philox_orders(seed, start, out, rounds=PHILOX_ROUNDS):
    """Orderings ``start .. start + n - 1`` of the counter-based stream of ``seed``.

    Parameters
    ----------
    seed : int
        uint64 stream key.
    start : int
        Index of the first ordering.
    out : int64 (n, d)
    rounds : int, default=24
        Feistel rounds; the sampler always uses 24 (tests show fewer are not uniform).

    Returns
    -------
    out : int64 (n, d)
    """
    n, d = out.shape
    n_bits = philox_bits(d)
    keys = philox_keys(seed, np.arange(start, start + n), rounds)
    domain = np.broadcast_to(np.arange(1 << n_bits, dtype=np.uint64), (n, 1 << n_bits))
    images = philox_bijection(domain, keys, n_bits)
    kept = images < np.uint64(d)
    # every row keeps exactly d values (a bijection hits each of 0..d-1 once), in i order
    out[...] = images[kept].reshape(n, d).astype(np.int64)
    return out
