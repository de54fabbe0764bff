"""CuPy kernels of orderings: :class:`PermutationArrays`, whole-array operations of the
NumPy API subset that CuPy implements, and on CuPy (:class:`CupyPermutations`) the
Philox bijection as one fused CUDA kernel (the 24 rounds in registers, then a device
compaction). Bound to NumPy the array code runs anywhere (``ArrayKernels`` of
``skshapley.backends._array_twins``), which is how the parity suite checks it without a
GPU; the CUDA C++ runs on the CPU in the tests' stand-in for ``cupy``.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends._array_common import ArrayBase, slices
from skshapley.backends._cupy_runtime import launch, on_cupy
from skshapley.backends.permutation import _numpy

SOURCE = r"""
extern "C" __global__ void philox_images(
    const unsigned long long* keys, long long n, int rounds, int n_bits,
    unsigned long long* images)
{
    // images[p, i] = the keyed Feistel bijection of i in [0, 2^n_bits), one
    // thread per (ordering, domain value): the whole cipher in registers, one pass
    long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (n << n_bits)) return;
    long long p = id >> n_bits;
    unsigned long long value = (unsigned long long)id & ((1ull << n_bits) - 1ull);
    int left_bits = n_bits / 2, right_bits = n_bits - left_bits;
    unsigned long long left_mask = (1ull << left_bits) - 1ull;
    unsigned long long right_mask = (1ull << right_bits) - 1ull;
    unsigned long long left = value >> right_bits, right = value & right_mask;
    for (int r = 0; r < rounds; ++r) {
        unsigned long long product = 0xD2B74407B1CE6E93ull * left;
        unsigned long long new_left = ((product >> 32) ^ keys[p * rounds + r] ^ right)
                                      & left_mask;
        right = ((((product & 0xFFFFFFFFull) << (right_bits - left_bits)) & 0xFFFFFFFFull)
                 | (right >> left_bits)) & right_mask;
        left = new_left;
    }
    images[id] = (left << right_bits) | right;
}
"""


class PermutationArrays(ArrayBase):
    """The kernels of orderings on the array library ``xp``; each method has the signature
    of the NumPy twin of the same name. The pass of the Philox bijection over the padded
    domain is a method of its own (``_philox_images``) that CuPy replaces by a fused
    kernel."""

    def precedence_bits(self, orders, out):
        xp = self.xp
        n, d = orders.shape
        n_words = out.shape[1]
        ranks = self._ranks(self._on(orders, dtype=xp.int64))
        first, second = (self._on(a) for a in np.triu_indices(d, k=1))
        n_pairs = first.size
        shifts = self._on(np.arange(n_words * 64, dtype=np.uint64) % np.uint64(64))
        padded = xp.zeros((n, n_words * 64), dtype=xp.uint64)
        padded[:, :n_pairs] = (ranks[:, first] < ranks[:, second]).astype(xp.uint64)
        # distinct powers of two: their sum is their bitwise or
        words = (padded << shifts[None, :]).reshape(n, n_words, 64).sum(axis=2,
                                                                        dtype=xp.uint64)
        return self._store(words, out)

    def discordant_pairs(self, bits_a, bits_b, out):
        bits_a, bits_b = self._on(bits_a), self._on(bits_b)
        n_a, n_words = bits_a.shape
        n_b = bits_b.shape[0]
        for lo, hi in slices(n_a, n_b * n_words):
            xor = bits_a[lo:hi, None, :] ^ bits_b[None, :, :]
            self._store(self._popcount(xor).sum(axis=2), out, slice(lo, hi))
        return out

    def philox_orders(self, seed, start, out, rounds=_numpy.PHILOX_ROUNDS):
        xp = self.xp
        n, d = out.shape
        n_bits = _numpy.philox_bits(d)
        for lo, hi in slices(n, 1 << n_bits):
            keys = self._on(_numpy.philox_keys(seed, np.arange(start + lo, start + hi), rounds))
            images = self._philox_images(keys, n_bits)
            # a bijection hits each of 0..d-1 exactly once per row: d values kept, in order
            kept = images[images < xp.uint64(d)].reshape(hi - lo, d).astype(xp.int64)
            self._store(kept, out, slice(lo, hi))
        return out

    def _philox_images(self, keys, n_bits):
        """images (n, 2**n_bits): the keyed bijection of every domain value, one ordering
        per row of ``keys`` (a few whole-array passes per Feistel round)."""
        domain = self.xp.arange(1 << n_bits, dtype=self.xp.uint64)
        return _numpy.philox_bijection(
            self.xp.broadcast_to(domain, (keys.shape[0], domain.size)), keys, n_bits)


class CupyPermutations(PermutationArrays):
    """:class:`PermutationArrays` on CuPy, the Philox bijection as the fused kernel
    ``philox_images`` of ``SOURCE`` (one pass, the cipher in registers)."""

    def _philox_images(self, keys, n_bits):
        cupy = self.xp
        n, rounds = keys.shape
        images = cupy.empty((n, 1 << n_bits), dtype=cupy.uint64)
        launch(SOURCE, "philox_images", images.size,
               cupy.ascontiguousarray(keys, dtype=cupy.uint64), np.int64(n), np.int32(rounds),
               np.int32(n_bits), images)
        return images


precedence_bits = on_cupy(CupyPermutations, "precedence_bits")
discordant_pairs = on_cupy(CupyPermutations, "discordant_pairs")
philox_orders = on_cupy(CupyPermutations, "philox_orders")
