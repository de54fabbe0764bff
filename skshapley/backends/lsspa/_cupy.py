"""CuPy kernels of LS-SPA: :class:`LsspaArrays`, batched factorisations and solves of the
NumPy API subset that CuPy implements, bound to CuPy (:class:`CupyLsspa`, where cuSOLVER
is asked to raise on a failed factor). Bound to NumPy the same code runs anywhere
(``ArrayKernels`` of ``skshapley.backends._array_twins``), which is how the parity suite
checks it without a GPU.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends._array_common import ArrayBase, slices
from skshapley.backends._cupy_runtime import on_cupy
from skshapley.backends.lsspa import _numpy


class LsspaArrays(ArrayBase):
    """The LS-SPA kernels on the array library ``xp``; each method has the signature of the
    NumPy twin of the same name."""

    def _chain_drops(self, lower, z, test_factor, test_target, orders):
        """Lifts of a slice of chains from their lower factors (c, p, p) and rotated
        targets (c, p): the batched form of ``_numpy._chain_lifts_from_factor``."""
        xp = self.xp
        permuted_test = xp.transpose(test_factor[:, orders], (1, 2, 0))  # (c, p, m): T_pi^T
        g = xp.transpose(xp.linalg.solve(lower, permuted_test), (0, 2, 1))  # T_pi L^{-T}
        steps = g * z[:, None, :]
        before = xp.cumsum(steps, axis=2) - steps - test_target[None, :, None]
        return -(steps * (2.0 * before + steps)).sum(axis=1)

    def _store_lifts(self, drops, orders, scale, out, lo, hi):
        xp = self.xp
        lifts = xp.empty(drops.shape, dtype=xp.float64)
        lifts[xp.arange(drops.shape[0])[:, None], orders] = drops * scale
        self._store(lifts, out, slice(lo, hi))

    def lsspa_chain_lifts_qr(self, orders, factor, target, test_factor, test_target, scale,
                             out):
        xp = self.xp
        n, p = orders.shape
        if not n or not p:
            return out
        factor, target = self._on(factor, dtype=xp.float64), self._on(target, dtype=xp.float64)
        test_factor = self._on(test_factor, dtype=xp.float64)
        test_target = self._on(test_target, dtype=xp.float64)
        for lo, hi in slices(n, p * (p + 1 + test_factor.shape[0])):
            chunk = self._on(orders[lo:hi], dtype=xp.int64)
            stacked = xp.empty((hi - lo, p, p + 1), dtype=xp.float64)
            stacked[:, :, :p] = xp.transpose(factor[:, chunk], (1, 0, 2))
            stacked[:, :, p] = target[None, :]
            r = xp.linalg.qr(stacked, mode="r")
            # signs of R's rows differ between libraries; each step g_k z_k does not
            lower = xp.transpose(r[:, :, :p], (0, 2, 1))
            drops = self._chain_drops(lower, r[:, :, p], test_factor, test_target, chunk)
            self._store_lifts(drops, chunk, scale, out, lo, hi)
        return out

    def _cholesky(self, matrices, min_pivot=0.0):
        """Batched Cholesky factors and a flag per matrix: True where every squared pivot
        exceeds ``min_pivot`` times its diagonal entry (0: positive pivots). A batch with a
        failure raises (NumPy always, CuPy under the backend's ``errstate``) and is then
        factorised one matrix at a time; failed factors are replaced by the identity."""
        xp = self.xp
        try:
            lower = xp.linalg.cholesky(matrices)
        except np.linalg.LinAlgError:
            lower = xp.full(matrices.shape, xp.nan)
            for i in range(matrices.shape[0]):
                try:
                    lower[i] = xp.linalg.cholesky(matrices[i])
                except np.linalg.LinAlgError:
                    pass
        diagonal = xp.diagonal(lower, axis1=1, axis2=2)
        pivots_ok = (diagonal > 0) & (diagonal * diagonal > min_pivot * xp.diagonal(
            matrices, axis1=1, axis2=2))
        ok = xp.all(xp.isfinite(lower), axis=(1, 2)) & xp.all(pivots_ok, axis=1)
        return xp.where(ok[:, None, None], lower, xp.eye(matrices.shape[1])[None]), ok

    def lsspa_chain_lifts_cholesky(self, orders, gram, cross, test_factor, test_target, scale,
                                   out, status):
        xp = self.xp
        n, p = orders.shape
        if not n or not p:
            status[:] = 0
            return out
        gram, cross = self._on(gram, dtype=xp.float64), self._on(cross, dtype=xp.float64)
        test_factor = self._on(test_factor, dtype=xp.float64)
        test_target = self._on(test_target, dtype=xp.float64)
        for lo, hi in slices(n, p * (p + test_factor.shape[0])):
            chunk = self._on(orders[lo:hi], dtype=xp.int64)
            lower, ok = self._cholesky(gram[chunk[:, :, None], chunk[:, None, :]])
            z = xp.linalg.solve(lower, cross[chunk][:, :, None])[:, :, 0]
            drops = self._chain_drops(lower, z, test_factor, test_target, chunk)
            self._store_lifts(drops, chunk, scale, out, lo, hi)
            self._store((~ok).astype(xp.int64), status, slice(lo, hi))
        return out

    def lsspa_subset_gains(self, factor, target, test_factor, test_target, out):
        """All subsets by batched Cholesky on the Gram form (normal equations, so
        agreement with the twin's least squares degrades with cond(R_S)^2); a subset whose
        factorisation fails is solved on the host by least squares, as the twin does."""
        xp = self.xp
        p = factor.shape[1]
        out[0] = 0.0
        n_subsets = 1 << p
        if n_subsets == 1:
            return out
        gram = self._on(factor.T @ factor)
        cross = self._on(factor.T @ target)
        t_factor, t_target = self._on(test_factor), self._on(test_target)
        bits = xp.uint64(1) << xp.arange(p, dtype=xp.uint64)
        eye = xp.eye(p)
        for lo, hi in slices(n_subsets - 1, p * (p + t_factor.shape[0])):
            subsets = xp.arange(lo + 1, hi + 1, dtype=xp.uint64)
            members = (subsets[:, None] & bits[None, :]) != 0  # (c, p)
            both = members[:, :, None] & members[:, None, :]
            # non-members get an identity block and a zero right-hand side: theta_j = 0
            # a pivot at or below 1e-12 of its diagonal is a dependent column, as in the
            # numba.cuda twin: least squares on the host for those subsets
            lower, ok = self._cholesky(xp.where(both, gram[None], eye[None]), 1e-12)
            rhs = xp.where(members, cross[None, :], 0.0)[:, :, None]
            z = xp.linalg.solve(lower, rhs)
            theta = xp.linalg.solve(xp.transpose(lower, (0, 2, 1)), z)[:, :, 0]
            residual = theta @ t_factor.T - t_target[None, :]
            gains = t_target @ t_target - (residual * residual).sum(axis=1)
            self._store(gains, out, slice(lo + 1, hi + 1))
            for i in np.flatnonzero(~self._host(ok)):
                out[lo + 1 + int(i)] = _numpy.subset_gain_lstsq(
                    factor, target, test_factor, test_target, lo + 1 + int(i))
        return out


class CupyLsspa(LsspaArrays):
    """:class:`LsspaArrays` on CuPy."""

    def _cholesky(self, matrices, min_pivot=0.0):
        import cupyx

        # cuSOLVER leaves a failed factor as finite garbage unless asked to raise; raising
        # sends the batch to the one-matrix-at-a-time path, which flags the failures
        with cupyx.errstate(linalg="raise"):
            return super()._cholesky(matrices, min_pivot)


lsspa_chain_lifts_qr = on_cupy(CupyLsspa, "lsspa_chain_lifts_qr")
lsspa_chain_lifts_cholesky = on_cupy(CupyLsspa, "lsspa_chain_lifts_cholesky")
lsspa_subset_gains = on_cupy(CupyLsspa, "lsspa_subset_gains")
