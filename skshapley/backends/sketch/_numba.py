"""Numba CPU kernels of the moment sketches and the quantile transform, twins of
``_numpy.py`` (same names, same signatures).

Outer loops run with ``prange``; each iteration writes only its own rows, so results are
bit-identical for any thread count, and the serial build (used for small arrays) gives
the same bits too.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from skshapley.backends._numba_runtime import PARALLEL_MIN_ELEMENTS, compile_twice
from skshapley.backends.sketch._numpy import N_MOMENT_FIELDS


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


_moment_serial, _moment_parallel = compile_twice(_moment_chunk, fastmath=MOMENT_FASTMATH,
                                                  error_model="numpy")


def moment_chunk(x, w, order, out):
    """Numba twin of ``_numpy.moment_chunk``."""
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


_interp_serial, _interp_parallel = compile_twice(_interp_columns)


def interp_columns(X, xp, fp, out):
    """Numba twin of ``_numpy.interp_columns``: a bucket table
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
_arcsinh_serial, _arcsinh_parallel = compile_twice(_arcsinh, error_model="numpy",
                                                    fastmath={"contract"})


def arcsinh(x, out):
    """Numba twin of ``_numpy.arcsinh`` (within 2 ulp; vectorised
    log, about 3x libm's scalar one here)."""
    x = np.ascontiguousarray(x)
    kernel = _arcsinh_parallel if x.size >= PARALLEL_MIN_ELEMENTS else _arcsinh_serial
    kernel(x, out)
    return out
