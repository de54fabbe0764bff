"""Numba CPU kernels, twins of ``_numpy.py`` (same names, same signatures).

Outer loops run with ``prange``; each iteration writes only its own rows, so results are
bit-identical for any thread count, and the serial build (used for small arrays) gives
the same bits too. No ``fastmath``: games may return ``inf``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from skshapley.backends._numba_runtime import prange_usable, serial_copy
from skshapley.backends._numpy import (
    N_MOMENT_FIELDS,
    PHILOX_M0,
    PHILOX_ROUNDS,
    SPLITMIX_GAMMA,
    _shapley_weights,
    philox_bits,
)
from skshapley.backends._tree_numba import (  # noqa: F401  (kernels of this backend)
    tree_background_patterns,
    tree_interventional_shap,
    tree_interventional_walk,
    tree_path_interactions,
    tree_path_shap,
)
from skshapley.backends._tree_numpy import TREE_KERNELS

KERNELS = (
    "assemble_masked_batch",
    "prefix_coalitions",
    "accumulate_permutation_marginals",
    "exact_shapley_from_values",
    "precedence_bits",
    "discordant_pairs",
    "philox_orders",
    *TREE_KERNELS,
    "moment_chunk",
    "interp_columns",
    "arcsinh",
    "lsspa_chain_lifts_qr",
    "lsspa_chain_lifts_cholesky",
    "lsspa_subset_gains",
    "rkhs_subset_embeddings",
)

# Waking numba's thread pool costs about a millisecond, more than the whole kernel on the
# small arrays of one explained row (measured: prefix masks of 10 orderings took 4.6 ms
# with prange, 0.02 ms serially). Below this many output elements the serial build runs.
PARALLEL_MIN_ELEMENTS = 1 << 18


def _compile_twice(function, **options):
    """A serial and a prange-parallel build of the same kernel (results are identical:
    every iteration writes only its own rows).

    The serial build compiles a copy renamed by :func:`serial_copy`. The parallel one is
    called through a guard that runs the serial build in a forked child where ``prange``
    is unsafe (:func:`~skshapley.backends._numba_runtime.prange_usable`).
    """
    serial = njit(cache=True, nogil=True, **options)(serial_copy(function))
    parallel = njit(parallel=True, cache=True, **options)(function)

    def parallel_unless_forked(*args):
        # a forked child of a process whose OpenMP pool ran must not enter a prange loop
        return parallel(*args) if prange_usable() else serial(*args)

    return serial, parallel_unless_forked


def _assemble_masked_batch(x, background, coalitions, out):
    m, d = coalitions.shape
    n_rows = x.shape[0]
    n_background = background.shape[0]
    for k in prange(m):
        for i in range(n_rows):
            base = (k * n_rows + i) * n_background
            for r in range(n_background):
                for j in range(d):
                    out[base + r, j] = x[i, j] if coalitions[k, j] else background[r, j]
    return out


_assemble_serial, _assemble_parallel = _compile_twice(_assemble_masked_batch)


# The masked batch is a copy bound by memory bandwidth: serially 0.8 ms for one row's
# 1218 coalitions x 100 background rows x 20 features (2.4e6 elements), while the prange
# build took 12-15 ms on the 2-core CI machine under load (a parallel region waits for
# a time slice on each core) and gains at most 2x when it runs. It goes parallel only
# from this many elements (about 3 ms serially): at 16 rows (3.9e7) it took 14.5 ms
# against 29 ms.
ASSEMBLE_PARALLEL_MIN_ELEMENTS = 1 << 23


def assemble_masked_batch(x, background, coalitions, out):
    """Numba twin of :func:`skshapley.backends._numpy.assemble_masked_batch`."""
    kernel = (_assemble_parallel if out.size >= ASSEMBLE_PARALLEL_MIN_ELEMENTS
              else _assemble_serial)
    return kernel(x, background, coalitions, out)


def _prefix_coalitions(orders, out):
    n, d = orders.shape
    for p in prange(n):
        for t in range(d - 1):
            for j in range(d):
                out[p, t, j] = False
        for t in range(d - 1):
            # Prefix t holds players orders[p, 0..t]: player orders[p, s] is in every
            # prefix t >= s.
            player = orders[p, t]
            for u in range(t, d - 1):
                out[p, u, player] = True
    return out


_prefix_serial, _prefix_parallel = _compile_twice(_prefix_coalitions)


def prefix_coalitions(orders, out):
    """Numba twin of :func:`skshapley.backends._numpy.prefix_coalitions`."""
    if orders.shape[1] < 2:
        return out
    kernel = _prefix_parallel if out.size >= PARALLEL_MIN_ELEMENTS else _prefix_serial
    return kernel(orders, out)


def _accumulate_permutation_marginals(orders, path_values, out):
    n, d = orders.shape
    k = path_values.shape[2]
    for p in prange(n):
        for t in range(d):
            player = orders[p, t]
            for c in range(k):
                out[p, player, c] = path_values[p, t + 1, c] - path_values[p, t, c]
    return out


_accumulate_serial, _accumulate_parallel = _compile_twice(_accumulate_permutation_marginals)


def accumulate_permutation_marginals(orders, path_values, out):
    """Numba twin of :func:`skshapley.backends._numpy.accumulate_permutation_marginals`."""
    big = out.size >= PARALLEL_MIN_ELEMENTS
    kernel = _accumulate_parallel if big else _accumulate_serial
    return kernel(orders, path_values, out)


def _exact_shapley_from_values(values, weights, n_players, out):
    d = n_players
    k = values.shape[1]
    n_masks = 1 << d
    for j in prange(d):
        bit = 1 << j
        for c in range(k):
            out[j, c] = 0.0
        # Fixed summation order (increasing mask) makes the result thread-count invariant.
        for s in range(n_masks):
            if s & bit:
                continue
            size = 0
            rest = s
            while rest:
                rest &= rest - 1
                size += 1
            w = weights[size]
            for c in range(k):
                out[j, c] += w * (values[s | bit, c] - values[s, c])
    return out


_exact_serial, _exact_parallel = _compile_twice(_exact_shapley_from_values)


def exact_shapley_from_values(values, n_players, out):
    """Numba twin of :func:`skshapley.backends._numpy.exact_shapley_from_values`."""
    weights = np.asarray(_shapley_weights(n_players), dtype=np.float64)
    kernel = _exact_parallel if values.size >= PARALLEL_MIN_ELEMENTS else _exact_serial
    return kernel(values, weights, n_players, out)


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


_bits_serial, _bits_parallel = _compile_twice(_precedence_bits)


def precedence_bits(orders, out):
    """Numba twin of :func:`skshapley.backends._numpy.precedence_bits`."""
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


_dis_serial, _dis_parallel = _compile_twice(_discordant_pairs)


def discordant_pairs(bits_a, bits_b, out):
    """Numba twin of :func:`skshapley.backends._numpy.discordant_pairs`."""
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


_philox_serial, _philox_parallel = _compile_twice(_philox_orders)


def philox_orders(seed, start, out):
    """Numba twin of :func:`skshapley.backends._numpy.philox_orders`."""
    n_bits = philox_bits(out.shape[1])
    big = out.shape[0] << n_bits >= PARALLEL_MIN_ELEMENTS // 16
    kernel = _philox_parallel if big else _philox_serial
    return kernel(np.uint64(seed), np.int64(start), n_bits, out)


@njit(cache=True, nogil=True)
def _unit_exponent_scalar(low, high):
    half = high / 2 - low / 2
    if not half > 0 or not np.isfinite(half):
        return 0
    return math.frexp(half)[1] + 1


MOMENT_BLOCK = 512


def _moment_chunk(x, w, order, out):
    d, n = x.shape
    for j in prange(d):
        col = x[j]
        for f in range(out.shape[1]):
            out[j, f] = 0.0
        total = 0.0
        sum_wx = 0.0
        low = np.inf
        high = -np.inf
        n_nan = 0
        n_rows = 0
        # passes 1 and 2 are branch-free (selects, not ifs) so that they vectorise too
        for i in range(n):  # pass 1: weight, sum, range
            v = col[i]
            missing = v != v
            ok = (not missing) and w[i] > 0
            n_nan += missing
            wk = w[i] if ok else 0.0
            total += wk
            sum_wx += wk * (v if ok else 0.0)
            n_rows += ok
            low_candidate = v if ok else np.inf
            high_candidate = v if ok else -np.inf
            low = low_candidate if low_candidate < low else low
            high = high_candidate if high_candidate > high else high
        out[j, 8] = n_nan
        out[j, 9] = n_rows
        out[j, 3] = low
        out[j, 4] = high
        if n_rows == 0:
            continue
        mean = sum_wx / total
        correction = 0.0
        w_low = 0.0
        w_high = 0.0
        w_zero = 0.0
        for i in range(n):  # pass 2: mean refinement and atoms
            v = col[i]
            ok = w[i] > 0 and v == v
            wk = w[i] if ok else 0.0
            correction += wk * ((v if ok else mean) - mean)
            w_low += wk if v == low else 0.0
            w_high += wk if v == high else 0.0
            w_zero += wk if v == 0 else 0.0
        mean += correction / total
        mean = min(max(mean, low), high)
        e = _unit_exponent_scalar(low, high)
        scale = math.ldexp(1.0, -e)
        out[j, 0] = total
        out[j, 1] = mean
        out[j, 2] = e
        out[j, 5] = w_low
        out[j, 6] = w_high
        out[j, 7] = w_zero
        # pass 3: scaled central power sums, blocked so that the inner loops over a
        # block vectorise (order-of-summation changes only; parity is tested at 1e-12)
        dev = np.empty(MOMENT_BLOCK)
        power = np.empty(MOMENT_BLOCK)
        for start in range(0, n, MOMENT_BLOCK):
            m = min(MOMENT_BLOCK, n - start)
            for b in range(m):
                v = col[start + b]
                wb = w[start + b]
                if wb > 0 and not np.isnan(v):
                    dev[b] = (v - mean) * scale
                    power[b] = wb
                else:
                    dev[b] = 0.0
                    power[b] = 0.0
            # four powers per sweep of the block: a quarter of the loads and stores of
            # one sweep per power, four vectorised accumulators (1.5x at order 15)
            k = 1
            while k + 3 <= order:
                acc1 = 0.0
                acc2 = 0.0
                acc3 = 0.0
                acc4 = 0.0
                for b in range(m):
                    x1 = power[b] * dev[b]
                    x2 = x1 * dev[b]
                    x3 = x2 * dev[b]
                    x4 = x3 * dev[b]
                    acc1 += x1
                    acc2 += x2
                    acc3 += x3
                    acc4 += x4
                    power[b] = x4
                base = N_MOMENT_FIELDS + k - 1
                out[j, base] += acc1
                out[j, base + 1] += acc2
                out[j, base + 2] += acc3
                out[j, base + 3] += acc4
                k += 4
            while k <= order:
                acc = 0.0
                for b in range(m):
                    power[b] *= dev[b]
                    acc += power[b]
                out[j, N_MOMENT_FIELDS + k - 1] += acc
                k += 1
    return out


# fastmath: reassociation and contraction only, so the block sums of the moment kernel
# vectorise (measured: 2-3x faster at order 15); no nnan/ninf since NaN is tested explicitly.
MOMENT_FASTMATH = {"reassoc", "contract"}


_moment_serial, _moment_parallel = _compile_twice(_moment_chunk, fastmath=MOMENT_FASTMATH,
                                                  error_model="numpy")


def moment_chunk(x, w, order, out):
    """Numba twin of :func:`skshapley.backends._numpy.moment_chunk`."""
    kernel = _moment_parallel if x.size >= PARALLEL_MIN_ELEMENTS and x.shape[0] > 1 \
        else _moment_serial
    return kernel(x, w, np.int64(order), out)


INTERP_BUCKETS = 4096
INTERP_ROW_BLOCK = 4096


@njit(cache=True, nogil=True)
def _interp_buckets(xp, n_buckets, starts):
    """starts[j, b] = largest k with xp[j, k] <= left edge of bucket b (or 0)."""
    d, m = xp.shape
    for j in range(d):
        lo = xp[j, 0]
        width = (xp[j, m - 1] - lo) / n_buckets
        k = 0
        for b in range(n_buckets):
            edge = lo + b * width
            while k + 1 < m and xp[j, k + 1] <= edge:
                k += 1
            starts[j, b] = k


def _interp_columns(X, xp, fp, starts, out):
    n, d = X.shape
    m = xp.shape[1]
    n_buckets = starts.shape[1]
    n_blocks = (n + INTERP_ROW_BLOCK - 1) // INTERP_ROW_BLOCK
    for block in prange(n_blocks):
        for i in range(block * INTERP_ROW_BLOCK, min(n, (block + 1) * INTERP_ROW_BLOCK)):
            for j in range(d):
                v = X[i, j]
                lo = xp[j, 0]
                hi = xp[j, m - 1]
                if np.isnan(v):
                    out[i, j] = v
                elif v > hi:
                    out[i, j] = fp[m - 1]
                elif v < lo:
                    out[i, j] = fp[0]
                elif v == hi:
                    out[i, j] = fp[m - 1]
                else:
                    b = int((v - lo) / (hi - lo) * n_buckets)
                    if b >= n_buckets:
                        b = n_buckets - 1
                    k = starts[j, b]
                    while k + 1 < m and xp[j, k + 1] <= v:
                        k += 1
                    while k > 0 and xp[j, k] > v:
                        k -= 1
                    if k == m - 1 or xp[j, k] == v:
                        out[i, j] = fp[k]
                    else:
                        # np.interp's formula, operation for operation (no fastmath)
                        slope = (fp[k + 1] - fp[k]) / (xp[j, k + 1] - xp[j, k])
                        r = slope * (v - xp[j, k]) + fp[k]
                        if np.isnan(r):
                            r = slope * (v - xp[j, k + 1]) + fp[k + 1]
                            if np.isnan(r) and fp[k] == fp[k + 1]:
                                r = fp[k]
                        out[i, j] = r
    return out


_interp_serial, _interp_parallel = _compile_twice(_interp_columns)


def interp_columns(X, xp, fp, out):
    """Numba twin of :func:`skshapley.backends._numpy.interp_columns`: a bucket table
    (4096 buckets per column) replaces the binary search, same formula as np.interp."""
    starts = np.empty((xp.shape[0], INTERP_BUCKETS), dtype=np.int64)
    _interp_buckets(xp, INTERP_BUCKETS, starts)
    kernel = _interp_parallel if X.size >= PARALLEL_MIN_ELEMENTS else _interp_serial
    return kernel(X, xp, fp, starts, out)


# log(u) for u >= 1 without libm's scalar log, so the loops vectorise (numba's llvmlite
# has no vector math library): u = 2^k m with m in [sqrt(1/2), sqrt(2)) read from the bits,
# then fdlibm's e_log.c reduction log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f/(2 + f),
# with its minimax coefficients (error < 1 ulp). Inputs are clamped to 1e150 so a*a cannot
# overflow; larger values and NaN are fixed up by a scalar loop afterwards.
_LOG_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
           2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
           1.479819860511658591e-01)
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
_MANTISSA_BITS, _ONE_EXPONENT = 0x000FFFFFFFFFFFFF, 0x3FF0000000000000
# (bits >> 52) | 0x433... read as a double is 2^52 + the biased exponent: an exact
# int -> double conversion that AVX2 can vectorise
_EXPONENT_MAGIC_BITS, _EXPONENT_MAGIC = 0x4330000000000000, 4503599627370496.0 + 1023.0
_ASINH_CLAMP = 1e150
ARCSINH_BLOCK = 4096


def _arcsinh(x, out):
    flat = x.ravel()
    res = out.ravel()
    n = flat.size
    lg1, lg2, lg3, lg4, lg5, lg6, lg7 = _LOG_LG
    n_blocks = (n + ARCSINH_BLOCK - 1) // ARCSINH_BLOCK
    for block in prange(n_blocks):
        lo = block * ARCSINH_BLOCK
        k = min(ARCSINH_BLOCK, n - lo)
        v = np.empty(k)  # the inputs, kept so that x may be out (in place)
        z = np.empty(k)
        u = np.empty(k)
        mantissa = np.empty(k)
        exponent = np.empty(k)
        u_bits = u.view(np.int64)
        mantissa_bits = mantissa.view(np.int64)
        exponent_bits = exponent.view(np.int64)
        for b in range(k):  # asinh(a) = log1p(z), z = a + a^2 / (1 + sqrt(1 + a^2))
            v[b] = flat[lo + b]
            a = min(abs(v[b]), _ASINH_CLAMP)
            q = a * a
            z[b] = a + q / (1.0 + math.sqrt(1.0 + q))
            u[b] = 1.0 + z[b]
        for b in range(k):
            bits = u_bits[b]
            exponent_bits[b] = (bits >> 52) | _EXPONENT_MAGIC_BITS
            mantissa_bits[b] = (bits & _MANTISSA_BITS) | _ONE_EXPONENT
        for b in range(k):
            m = mantissa[b]
            e = exponent[b] - _EXPONENT_MAGIC
            high = m > 1.4142135623730951
            m = 0.5 * m if high else m
            e = e + 1.0 if high else e
            f = m - 1.0
            half_f2 = 0.5 * f * f
            s = f / (2.0 + f)
            s2 = s * s
            s4 = s2 * s2
            poly = s2 * (lg1 + s4 * (lg3 + s4 * (lg5 + s4 * lg7))) + \
                s4 * (lg2 + s4 * (lg4 + s4 * lg6))
            log_u = e * _LN2_HI - ((half_f2 - (s * (half_f2 + poly) + e * _LN2_LO)) - f)
            # log1p(z) = log(u) + (z - (u - 1)) / u undoes the rounding of u = 1 + z
            res[lo + b] = math.copysign(log_u + (z[b] - (u[b] - 1.0)) / u[b], v[b])
        for b in range(k):  # rare: NaN, and |v| > 1e150 where asinh = log(2|v|)
            if not abs(v[b]) <= _ASINH_CLAMP:
                res[lo + b] = v[b] if v[b] != v[b] else math.copysign(
                    math.log(abs(v[b])) + 0.6931471805599453, v[b])
    return out


# error_model="numpy": no zero-division checks, which would block vectorisation
_arcsinh_serial, _arcsinh_parallel = _compile_twice(_arcsinh, error_model="numpy",
                                                    fastmath={"contract"})


def arcsinh(x, out):
    """Numba twin of :func:`skshapley.backends._numpy.arcsinh` (within 2 ulp; vectorised
    log, about 3x libm's scalar one here)."""
    x = np.ascontiguousarray(x)
    kernel = _arcsinh_parallel if x.size >= PARALLEL_MIN_ELEMENTS else _arcsinh_serial
    kernel(x, out)
    return out


# -- LS-SPA (Bell, Devanathan & Boyd 2024, Sec. 3.3) ------------------------------------------
# Each chain is one prange iteration with its own workspace, so results do not depend on the
# thread count. Row-major storage keeps every inner loop a contiguous dot product or axpy.
# fastmath: only reassociation and contraction (FMA), so LLVM vectorises the dot products of
# the triangular factorisations and solves; measured 1.5-2.7x faster per chain at p = 50-200
# (benchmarks/results/lsspa.md), results within 1e-13 of the strict build. No nnan/ninf.
LSSPA_FASTMATH = {"reassoc", "contract"}


@njit(cache=True, nogil=True, fastmath=LSSPA_FASTMATH)
def _lsspa_test_drops(lower, z, test_factor, test_target, pi, scale, out_row, g, drops):
    """Lifts of one chain from L (lower, row-major) and z; g (p,) and drops (p,) are work."""
    m = test_factor.shape[0]
    p = pi.shape[0]
    for k in range(p):
        drops[k] = 0.0
    for r in range(m):
        residual = -test_target[r]  # prediction minus target before the next step
        for j in range(p):
            acc = test_factor[r, pi[j]]
            for i in range(j):
                acc -= lower[j, i] * g[i]
            g[j] = acc / lower[j, j]
            step = z[j] * g[j]
            drops[j] -= step * (2.0 * residual + step)
            residual += step
    for j in range(p):
        out_row[pi[j]] = drops[j] * scale


def _lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target, scale, out):
    n, p = orders.shape
    for c in prange(n):
        pi = orders[c]
        # Row i of w is column i of [R[:, pi] | ytilde]; Householder reflections then act on
        # contiguous rows, and the lower triangle of w[:p] ends as L = Rtilde^T.
        w = np.empty((p + 1, p))
        for i in range(p):
            for r in range(p):
                w[i, r] = factor[r, pi[i]]
        for r in range(p):
            w[p, r] = target[r]
        v = np.empty(p)
        for j in range(p):
            norm2 = 0.0
            for r in range(j, p):
                norm2 += w[j, r] * w[j, r]
            norm = math.sqrt(norm2)
            if norm == 0.0:
                continue
            alpha = -norm if w[j, j] >= 0.0 else norm
            v0 = w[j, j] - alpha
            vnorm2 = norm2 - w[j, j] * w[j, j] + v0 * v0
            if vnorm2 == 0.0:
                w[j, j] = alpha
                continue
            v[j] = v0
            for r in range(j + 1, p):
                v[r] = w[j, r]
            beta = 2.0 / vnorm2
            w[j, j] = alpha
            for r in range(j + 1, p):
                w[j, r] = 0.0
            for i in range(j + 1, p + 1):
                dot = 0.0
                for r in range(j, p):
                    dot += v[r] * w[i, r]
                dot *= beta
                for r in range(j, p):
                    w[i, r] -= dot * v[r]
        z = np.empty(p)
        for j in range(p):
            z[j] = w[p, j]
        _lsspa_test_drops(w, z, test_factor, test_target, pi, scale, out[c], np.empty(p),
                          np.empty(p))
    return out


_lsspa_qr_serial, _lsspa_qr_parallel = _compile_twice(_lsspa_chain_lifts_qr,
                                                   fastmath=LSSPA_FASTMATH)


def _lsspa_parallel(orders):
    p = orders.shape[1]
    return orders.shape[0] * p * p * p >= PARALLEL_MIN_ELEMENTS // 4 and orders.shape[0] > 1


def lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target, scale, out):
    """Numba twin of :func:`skshapley.backends._numpy.lsspa_chain_lifts_qr`."""
    kernel = _lsspa_qr_parallel if _lsspa_parallel(orders) else _lsspa_qr_serial
    return kernel(orders, factor, target, test_factor, test_target, float(scale), out)


def _lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor, test_target, scale, out,
                                status):
    n, p = orders.shape
    for c in prange(n):
        pi = orders[c]
        lower = np.empty((p, p))
        status[c] = 0
        for j in range(p):  # Cholesky-Banachiewicz, row by row
            for i in range(j + 1):
                acc = gram[pi[j], pi[i]]
                for k in range(i):
                    acc -= lower[j, k] * lower[i, k]
                if i < j:
                    lower[j, i] = acc / lower[i, i]
                elif acc > 0.0:
                    lower[j, j] = math.sqrt(acc)
                else:
                    status[c] = 1
                    break
            if status[c]:
                break
        if status[c]:
            continue
        z = np.empty(p)
        for j in range(p):
            acc = cross[pi[j]]
            for i in range(j):
                acc -= lower[j, i] * z[i]
            z[j] = acc / lower[j, j]
        _lsspa_test_drops(lower, z, test_factor, test_target, pi, scale, out[c], np.empty(p),
                          np.empty(p))
    return out


_lsspa_chol_serial, _lsspa_chol_parallel = _compile_twice(_lsspa_chain_lifts_cholesky,
                                                       fastmath=LSSPA_FASTMATH)


def lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor, test_target, scale, out,
                               status):
    """Numba twin of :func:`skshapley.backends._numpy.lsspa_chain_lifts_cholesky`."""
    kernel = _lsspa_chol_parallel if _lsspa_parallel(orders) else _lsspa_chol_serial
    return kernel(orders, gram, cross, test_factor, test_target, float(scale), out, status)


def _lsspa_subset_gains(factor, target, test_factor, test_target, out):
    # Depth-first over subsets in increasing feature order: the child S + {j} (j > max S)
    # extends its parent's orthonormal basis by one column (classical Gram-Schmidt applied
    # twice, as stable as Householder for this), so each subset costs O(p |S| + m |S|).
    # prange over the first feature: subtree j0 holds the 2^(p - 1 - j0) subsets whose
    # smallest member is j0; every subset is written by exactly one iteration.
    p = factor.shape[1]
    m = test_factor.shape[0]
    out[0] = 0.0
    for j0 in prange(p):
        basis = np.empty((p, p))  # row k: k-th orthonormal basis vector
        gcols = np.empty((p, m))  # row k: column k of T[:, S] Rtilde^{-1}
        pred = np.empty((p + 1, m))  # test prediction at each depth
        gain = np.empty(p + 1)
        masks = np.empty(p + 1, dtype=np.int64)
        nxt = np.empty(p + 1, dtype=np.int64)
        coef = np.empty(p)
        w = np.empty(p)
        for r in range(m):
            pred[0, r] = 0.0
        gain[0] = 0.0
        masks[0] = 0
        depth = 0
        nxt[0] = j0
        while depth >= 0:
            j = nxt[depth]
            if j >= p or (depth == 0 and j > j0):
                depth -= 1
                continue
            nxt[depth] = j + 1
            k = depth
            for r in range(p):
                w[r] = factor[r, j]
            for i in range(k):
                coef[i] = 0.0
            for _ in range(2):  # CGS2: project out the basis twice
                for i in range(k):
                    dot = 0.0
                    for r in range(p):
                        dot += basis[i, r] * w[r]
                    coef[i] += dot
                    for r in range(p):
                        w[r] -= dot * basis[i, r]
            norm2 = 0.0
            for r in range(p):
                norm2 += w[r] * w[r]
            d = math.sqrt(norm2)
            zk = 0.0
            for r in range(p):
                basis[k, r] = w[r] / d
                zk += basis[k, r] * target[r]
            drop = 0.0
            for r in range(m):
                acc = test_factor[r, j]
                for i in range(k):
                    acc -= gcols[i, r] * coef[i]
                gcols[k, r] = acc / d
                step = zk * gcols[k, r]
                residual = pred[k, r] - test_target[r]
                drop -= step * (2.0 * residual + step)
                pred[k + 1, r] = pred[k, r] + step
            gain[k + 1] = gain[k] + drop
            masks[k + 1] = masks[k] | (np.int64(1) << j)
            out[masks[k + 1]] = gain[k + 1]
            depth = k + 1
            nxt[depth] = j + 1
    return out


_lsspa_subsets_serial, _lsspa_subsets_parallel = _compile_twice(_lsspa_subset_gains,
                                                             fastmath=LSSPA_FASTMATH)


def lsspa_subset_gains(factor, target, test_factor, test_target, out):
    """Numba twin of :func:`skshapley.backends._numpy.lsspa_subset_gains`."""
    big = factor.shape[1] >= 10
    kernel = _lsspa_subsets_parallel if big else _lsspa_subsets_serial
    return kernel(factor, target, test_factor, test_target, out)


def _rkhs_subset_embeddings(training, background, length_scale, laplace, block, out):
    n, d = training.shape
    b = background.shape[0]
    n_subsets = 1 << d
    for i in prange(n):
        factors = np.empty((d, block))
        product = np.empty((n_subsets, block))
        total = np.zeros(n_subsets)
        for start in range(0, b, block):
            m = min(block, b - start)
            for j in range(d):
                a = training[i, j]
                scale = length_scale[j]
                for k in range(m):
                    t = (a - background[start + k, j]) / scale
                    factors[j, k] = math.exp(-abs(t)) if laplace else math.exp(-(0.5 * t * t))
            for k in range(m):
                product[0, k] = 1.0
            high = 0
            for mask in range(1, n_subsets):
                if mask == 1 << (high + 1):
                    high += 1
                # parent = mask without its highest feature: the numpy twin's order of
                # multiplication (increasing feature index), so the same bits per product
                parent = mask ^ (1 << high)
                acc = 0.0
                for k in range(m):
                    product[mask, k] = product[parent, k] * factors[high, k]
                    acc += product[mask, k]
                total[mask] += acc
        out[0, i] = 1.0
        for mask in range(1, n_subsets):
            out[mask, i] = total[mask] / b
    return out


_rkhs_embeddings_serial, _rkhs_embeddings_parallel = _compile_twice(
    _rkhs_subset_embeddings, error_model="numpy")


def rkhs_subset_embeddings(training, background, length_scale, laplace, out):
    """Numba twin of :func:`skshapley.backends._numpy.rkhs_subset_embeddings`: one
    training row per iteration, background in blocks, all subset products of a block
    from their parents (same products, sums in a different order: within round-off)."""
    d = training.shape[1]
    block = int(max(1, min(256, 2**16 >> d)))  # the (2^d, block) products stay in cache
    return _rkhs_embeddings_parallel(np.ascontiguousarray(training, dtype=np.float64),
                                     np.ascontiguousarray(background, dtype=np.float64),
                                     np.ascontiguousarray(length_scale, dtype=np.float64),
                                     bool(laplace), block, out)
