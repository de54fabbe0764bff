"""The model-agnostic kernels written once against an array library.

:class:`ArrayKernels` holds the registry's model-agnostic kernels as whole-array
operations of the NumPy API subset that CuPy implements (broadcasting, fancy indexing,
boolean masks, reductions along an axis, batched ``linalg``). Bound to CuPy it is the
CuPy backend: each kernel is a handful of device-wide launches instead of a loop over
rows, and the wrappers keep results on the device when ``out`` is a CuPy array (no host
round trip), or copy them into a host ``out``. Bound to NumPy it runs anywhere, which is
how the parity suite checks the same code on a machine without a GPU.

Work arrays are bounded in slices of :data:`SLICE_ELEMENTS` elements so a large call
does not exhaust device memory.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends import _numpy

SLICE_ELEMENTS = 2**24  # elements per work array (128 MiB of float64)

# SWAR popcount constants, for array libraries without ``bitwise_count``
_M1, _M2, _M4, _H01 = (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
                       0x0101010101010101)


def _slices(n, per_item):
    """Half-open index ranges over ``n`` items of ``per_item`` elements each."""
    step = max(1, SLICE_ELEMENTS // max(int(per_item), 1))
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


class ArrayKernels:
    """Model-agnostic kernels on the array library ``xp`` (CuPy, or NumPy for tests).

    Every method has the signature of the NumPy twin of the same name
    (:mod:`skshapley.backends._numpy`); inputs may be host or ``xp`` arrays. The passes
    over the data of Philox orderings and moment sketches are methods of their own
    (``_philox_images``, ``_moment_*``) that a backend may replace by fused kernels.

    Parameters
    ----------
    xp : module
        ``cupy`` or ``numpy``.

    Examples
    --------
    >>> import numpy as np
    >>> kernels = ArrayKernels(np)
    >>> kernels.prefix_coalitions(np.array([[2, 0, 1]]), np.empty((1, 2, 3), bool))[0]
    array([[False, False,  True],
           [ True, False,  True]])
    """

    NAMES = ("assemble_masked_batch", "prefix_coalitions", "accumulate_permutation_marginals",
             "exact_shapley_from_values", "precedence_bits", "discordant_pairs",
             "philox_orders", "moment_chunk", "interp_columns", "arcsinh",
             "lsspa_chain_lifts_qr", "lsspa_chain_lifts_cholesky", "lsspa_subset_gains",
             "rkhs_subset_embeddings")

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

    # -- games and samplers ---------------------------------------------------------------
    def assemble_masked_batch(self, x, background, coalitions, out):
        xp = self.xp
        m, d = coalitions.shape
        x, background = self._on(x), self._on(background)
        n_rows, n_background = x.shape[0], background.shape[0]
        per_coalition = n_rows * n_background
        for lo, hi in _slices(m, per_coalition * d):
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
            _numpy._popcount(masks)
        weights = _numpy._shapley_weights(d)
        result = xp.empty((d, values.shape[1]), dtype=xp.float64)
        for j in range(d):  # one matrix-vector product per player, as the twin
            bit = np.int64(1) << j
            without = masks[(masks & bit) == 0]
            diff = values[self._on(without | bit)] - values[self._on(without)]
            result[j] = self._on(weights[sizes[without]]) @ diff
        return self._store(result, out)

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
        for lo, hi in _slices(n_a, n_b * n_words):
            xor = bits_a[lo:hi, None, :] ^ bits_b[None, :, :]
            self._store(self._popcount(xor).sum(axis=2), out, slice(lo, hi))
        return out

    def philox_orders(self, seed, start, out, rounds=_numpy.PHILOX_ROUNDS):
        xp = self.xp
        n, d = out.shape
        n_bits = _numpy.philox_bits(d)
        for lo, hi in _slices(n, 1 << n_bits):
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

    # -- moment sketches and the quantile transform ---------------------------------------
    def moment_chunk(self, x, w, order, out):
        """Three passes over the chunk, each vectorised over columns; same fields and
        exponents as the twin."""
        xp = self.xp
        x = xp.ascontiguousarray(self._on(x, dtype=xp.float64))
        w = xp.ascontiguousarray(self._on(w, dtype=xp.float64))
        d = x.shape[0]
        result = xp.zeros((d, _numpy.N_MOMENT_FIELDS + order), dtype=xp.float64)
        n_nan, n_rows, total, sum_wx, low, high = self._moment_sums(x, w)
        filled = n_rows > 0
        safe_total = xp.where(filled, total, 1.0)
        mean = xp.where(filled, sum_wx / safe_total, 0.0)
        correction, w_low, w_high, w_zero = self._moment_refine(x, w, mean, low, high)
        mean = xp.where(filled, xp.minimum(xp.maximum(mean + correction / safe_total, low),
                                           high), 0.0)
        half = high / 2 - low / 2  # the twin's _unit_exponent, column-wise
        exponent = xp.where((half > 0) & xp.isfinite(half), xp.frexp(half)[1] + 1, 0)
        # a column without kept entries has zero weights, mean and exponent, and low, high
        # = inf, -inf, as in the twin
        result[:, :_numpy.N_MOMENT_FIELDS] = xp.stack(
            (total, mean, exponent.astype(xp.float64), low, high, w_low, w_high, w_zero,
             n_nan, n_rows), axis=1)
        if order:
            scale = xp.ldexp(xp.ones(d), -exponent)
            result[:, _numpy.N_MOMENT_FIELDS:] = self._moment_powers(x, w, mean, scale, order)
        return self._store(result, out)

    def _kept(self, x, w):
        """Entries that count: not NaN, positive weight."""
        return ~self.xp.isnan(x) & (w > 0)[None, :]

    def _moment_sums(self, x, w):
        """Per column: NaN count, kept rows, total weight, sum w x, min and max (inf and
        -inf for a column without kept rows)."""
        xp = self.xp
        keep = self._kept(x, w)
        weight = xp.where(keep, w[None, :], 0.0)
        return (xp.isnan(x).sum(axis=1).astype(xp.float64),
                keep.sum(axis=1).astype(xp.float64), weight.sum(axis=1),
                (weight * xp.where(keep, x, 0.0)).sum(axis=1),
                xp.where(keep, x, xp.inf).min(axis=1), xp.where(keep, x, -xp.inf).max(axis=1))

    def _moment_refine(self, x, w, mean, low, high):
        """Per column: sum w (x - mean), and the weights at the minimum, the maximum and 0."""
        xp = self.xp
        weight = xp.where(self._kept(x, w), w[None, :], 0.0)
        values = xp.where(weight > 0, x, 0.0)
        return ((weight * (values - mean[:, None])).sum(axis=1),
                xp.where(x == low[:, None], weight, 0.0).sum(axis=1),
                xp.where(x == high[:, None], weight, 0.0).sum(axis=1),
                xp.where(x == 0, weight, 0.0).sum(axis=1))

    def _moment_powers(self, x, w, mean, scale, order):
        """(d, order): sum w ((x - mean) scale)^k for k = 1..order over kept entries."""
        xp = self.xp
        weight = xp.where(self._kept(x, w), w[None, :], 0.0)
        dev = xp.where(weight > 0, (x - mean[:, None]) * scale[:, None], 0.0)
        sums = xp.empty((x.shape[0], order), dtype=xp.float64)
        power = weight
        for k in range(order):
            power = power * dev
            sums[:, k] = power.sum(axis=1)
        return sums

    def interp_columns(self, X, xp, fp, out):
        lib = self.xp  # ``xp`` is the twin's name for the knots here
        X, knots, fp = self._on(X, dtype=lib.float64), self._on(xp), self._on(fp)
        result = lib.empty(X.shape, dtype=lib.float64)
        for j in range(X.shape[1]):
            column = X[:, j]
            result[:, j] = lib.where(lib.isnan(column), lib.nan,
                                     lib.interp(column, knots[j], fp))
        return self._store(result, out)

    def arcsinh(self, x, out):
        if isinstance(out, self.xp.ndarray):
            self.xp.arcsinh(self._on(x), out=out)
            return out
        return self._store(self.xp.arcsinh(self._on(x)), out)

    # -- LS-SPA (Bell, Devanathan & Boyd 2024, Sec. 3.3) -----------------------------------
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
        for lo, hi in _slices(n, p * (p + 1 + test_factor.shape[0])):
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
        for lo, hi in _slices(n, p * (p + test_factor.shape[0])):
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
        for lo, hi in _slices(n_subsets - 1, p * (p + t_factor.shape[0])):
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

    def _host(self, array):
        return array if isinstance(array, np.ndarray) else self.xp.asnumpy(array)

    # -- RKHS-SHAP (Chau et al. 2022, Prop. 3) ---------------------------------------------
    def rkhs_subset_embeddings(self, training, background, length_scale, laplace, out):
        xp = self.xp
        result = xp.empty(out.shape, dtype=xp.float64)
        _numpy.subset_embeddings_into(xp, self._on(training, dtype=xp.float64),
                                      self._on(background, dtype=xp.float64),
                                      self._on(length_scale, dtype=xp.float64), laplace,
                                      result)
        return self._store(result, out)
