"""What the whole-array kernels share: work arrays bounded in slices, a popcount for
NumPy releases without ``bitwise_count``, and :class:`ArrayBase`, the transfers between
the host and an array library that the domains' array twins (``<domain>/_cupy.py``) build
on. Bound to CuPy they are the CuPy backend; bound to NumPy they run anywhere, which is how
the parity suite checks the same code on a machine without a GPU
(:class:`skshapley.backends._array_twins.ArrayKernels`).
"""

from __future__ import annotations

import numpy as np

SLICE_ELEMENTS = 2**24  # elements per work array (128 MiB of float64)

# SWAR popcount constants, for array libraries without ``bitwise_count``
_M1, _M2, _M4, _H01 = (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
                       0x0101010101010101)


def slices(n, per_item):
    """Half-open index ranges over ``n`` items of ``per_item`` elements each."""
    step = max(1, SLICE_ELEMENTS // max(int(per_item), 1))
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def popcount(masks):
    """Set bits of each entry of an integer array (NumPy without ``bitwise_count``)."""
    counts = np.zeros(masks.shape, dtype=np.int64)
    work = masks.copy()
    while np.any(work):
        counts += work & 1
        work >>= 1
    return counts


class ArrayBase:
    """Kernels on the array library ``xp`` (CuPy, or NumPy for tests): what every domain's
    array twins share. Inputs may be host or ``xp`` arrays; results are written into
    ``out`` where it lives.

    Parameters
    ----------
    xp : module
        ``cupy`` or ``numpy``.
    """

    def __init__(self, xp):
        self.xp = xp

    # -- transfers ------------------------------------------------------------------------
    def _on(self, array, dtype=None):
        return self.xp.asarray(array, dtype=dtype)

    def _store(self, result, out, where=...):
        """Write ``result`` into ``out[where]``, copying to the host if ``out`` lives there."""
        if isinstance(out, self.xp.ndarray):
            out[where] = result
        else:
            out[where] = self.xp.asnumpy(result)
        return out

    def _ranks(self, orders):
        """``ranks[p, orders[p, t]] = t`` (the position of each player in each ordering)."""
        xp = self.xp
        n, d = orders.shape
        ranks = xp.empty((n, d), dtype=xp.int64)
        ranks[xp.arange(n)[:, None], orders] = xp.arange(d)[None, :]
        return ranks

    def _popcount(self, words):
        xp = self.xp
        if hasattr(xp, "bitwise_count"):
            return xp.bitwise_count(words).astype(xp.int64)
        u = xp.uint64
        words = words - ((words >> u(1)) & u(_M1))
        words = (words & u(_M2)) + ((words >> u(2)) & u(_M2))
        words = (words + (words >> u(4))) & u(_M4)
        return ((words * u(_H01)) >> u(56)).astype(xp.int64)

    def _host(self, array):
        return array if isinstance(array, np.ndarray) else self.xp.asnumpy(array)
