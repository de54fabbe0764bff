"""CuPy kernels of coalitions and their values: :class:`MaskingArrays`, whole-array
operations of the NumPy API subset that CuPy implements, bound to CuPy (a handful of
device-wide launches per call instead of a loop over rows). Bound to NumPy the same code
runs anywhere (``ArrayKernels`` of ``skshapley.backends._array_twins``), which is how the
parity suite checks it without a GPU.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends._array_common import ArrayBase, popcount, slices
from skshapley.backends._cupy_runtime import on_cupy
from skshapley.backends.masking import _numpy


class MaskingArrays(ArrayBase):
    """The kernels of coalitions and their values on the array library ``xp``; each
    method has the signature of the NumPy twin of the same name."""

    def assemble_masked_batch(self, x, background, coalitions, out):
        xp = self.xp
        m, d = coalitions.shape
        x, background = self._on(x), self._on(background)
        n_rows, n_background = x.shape[0], background.shape[0]
        per_coalition = n_rows * n_background
        for lo, hi in slices(m, per_coalition * d):
            block = self._on(coalitions[lo:hi], dtype=bool)
            batch = xp.where(block[:, None, None, :], x[None, :, None, :],
                             background[None, None, :, :])
            self._store(batch.reshape(-1, d), out,
                        slice(lo * per_coalition, hi * per_coalition))
        return out

    def prefix_coalitions(self, orders, out):
        xp = self.xp
        n, d = orders.shape
        if d < 2 or not n:
            return out
        ranks = self._ranks(self._on(orders, dtype=xp.int64))
        steps = xp.arange(d - 1)
        return self._store(ranks[:, None, :] <= steps[None, :, None], out)

    def accumulate_permutation_marginals(self, orders, path_values, out):
        xp = self.xp
        n, d = orders.shape
        orders = self._on(orders, dtype=xp.int64)
        path_values = self._on(path_values)
        with np.errstate(invalid="ignore"):  # inf - inf = nan, as in the other twins
            steps = path_values[:, 1:, :] - path_values[:, :-1, :]
        result = xp.empty(steps.shape, dtype=xp.float64)
        result[xp.arange(n)[:, None], orders] = steps
        return self._store(result, out)

    def exact_shapley_from_values(self, values, n_players, out):
        xp = self.xp
        d = n_players
        values = self._on(values, dtype=xp.float64)
        masks = np.arange(2**d, dtype=np.int64)
        sizes = np.bitwise_count(masks) if hasattr(np, "bitwise_count") else \
            popcount(masks)
        weights = _numpy._shapley_weights(d)
        result = xp.empty((d, values.shape[1]), dtype=xp.float64)
        for j in range(d):  # one matrix-vector product per player, as the twin
            bit = np.int64(1) << j
            without = masks[(masks & bit) == 0]
            diff = values[self._on(without | bit)] - values[self._on(without)]
            result[j] = self._on(weights[sizes[without]]) @ diff
        return self._store(result, out)


assemble_masked_batch = on_cupy(MaskingArrays, "assemble_masked_batch")
prefix_coalitions = on_cupy(MaskingArrays, "prefix_coalitions")
accumulate_permutation_marginals = on_cupy(MaskingArrays, "accumulate_permutation_marginals")
exact_shapley_from_values = on_cupy(MaskingArrays, "exact_shapley_from_values")
