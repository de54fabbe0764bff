"""CuPy kernels of the moment sketches and the quantile transform: :class:`SketchArrays`,
whole-array operations of the NumPy API subset that CuPy implements, and on CuPy
(:class:`CupySketch`) the three passes of a moment chunk as fused CUDA kernels (each
thread folding a strided slice of a column, partials reduced on the device). Bound to
NumPy the array code runs anywhere (``ArrayKernels`` of
``skshapley.backends._array_twins``), which is how the parity suite checks it without a
GPU; the CUDA C++ runs on the CPU in the tests' stand-in for ``cupy``.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends._array_common import ArrayBase
from skshapley.backends._cupy_runtime import launch, on_cupy
from skshapley.backends.sketch import _numpy

SOURCE = r"""
extern "C" __global__ void moment_sums(
    const double* x, const double* w, long long d, long long n, long long n_part,
    double* partial)
{
    // Thread t of column j folds entries t, t + n_part, ... (adjacent threads read
    // adjacent entries) into (NaN count, kept rows, weight, sum w x, min, max); the
    // partials (d, n_part, 6) are reduced on the device afterwards
    long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= d * n_part) return;
    long long j = id / n_part;
    double n_nan = 0.0, rows = 0.0, total = 0.0, sum_wx = 0.0, low = 0.0, high = 0.0;
    for (long long i = id % n_part; i < n; i += n_part) {
        double v = x[j * n + i], wi = w[i];
        if (isnan(v)) { n_nan += 1.0; continue; }
        if (!(wi > 0.0)) continue;
        if (rows == 0.0) { low = v; high = v; }
        rows += 1.0; total += wi; sum_wx += wi * v;
        low = fmin(low, v); high = fmax(high, v);
    }
    double* out = partial + id * 6;
    out[0] = n_nan; out[1] = rows; out[2] = total; out[3] = sum_wx; out[4] = low;
    out[5] = high;
}

extern "C" __global__ void moment_refine(
    const double* x, const double* w, long long d, long long n, long long n_part,
    const double* mean, const double* low, const double* high, double* partial)
{
    // partials (d, n_part, 4): sum w (x - mean), weight at the minimum, maximum, zero
    long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= d * n_part) return;
    long long j = id / n_part;
    double correction = 0.0, w_low = 0.0, w_high = 0.0, w_zero = 0.0;
    for (long long i = id % n_part; i < n; i += n_part) {
        double v = x[j * n + i], wi = w[i];
        if (isnan(v) || !(wi > 0.0)) continue;
        correction += wi * (v - mean[j]);
        if (v == low[j]) w_low += wi;
        if (v == high[j]) w_high += wi;
        if (v == 0.0) w_zero += wi;
    }
    double* out = partial + id * 4;
    out[0] = correction; out[1] = w_low; out[2] = w_high; out[3] = w_zero;
}

extern "C" __global__ void moment_powers(
    const double* x, const double* w, long long d, long long n, long long n_part,
    const double* mean, const double* scale, int order, double* partial)
{
    // partials (d, n_part, order): sum w ((x - mean) scale)^k, k = 1..order, in registers
    long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= d * n_part) return;
    long long j = id / n_part;
    double sums[32];
    for (int k = 0; k < order; ++k) sums[k] = 0.0;
    for (long long i = id % n_part; i < n; i += n_part) {
        double v = x[j * n + i], wi = w[i];
        if (isnan(v) || !(wi > 0.0)) continue;
        double dev = (v - mean[j]) * scale[j], power = wi;
        for (int k = 0; k < order; ++k) {
            power *= dev;
            sums[k] += power;
        }
    }
    for (int k = 0; k < order; ++k) partial[id * order + k] = sums[k];
}
"""

MAX_MOMENT_ORDER = 32  # the register array of ``moment_powers``
MOMENT_THREADS = 2**17  # threads over all columns of a chunk (partials: 32 MiB at most)


class SketchArrays(ArrayBase):
    """The kernels of the moment sketches and the quantile transform on the array library
    ``xp``; each method has the signature of the NumPy twin of the same name. The passes
    of a moment chunk over the data are methods of their own (``_moment_*``) that CuPy
    replaces by fused kernels."""

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
        half = high / 2 - low / 2  # the twin's unit_exponent, column-wise
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
        # cupy.interp refuses a strided x (NotImplementedError, CuPy 14 on the lent H100),
        # so the columns are read from one contiguous transposed copy
        columns = lib.ascontiguousarray(X.T)
        result = lib.empty(columns.shape, dtype=lib.float64)
        for j, column in enumerate(columns):
            result[j] = lib.where(lib.isnan(column), lib.nan,
                                  lib.interp(column, knots[j], fp))
        return self._store(result.T, out)

    def arcsinh(self, x, out):
        if isinstance(out, self.xp.ndarray):
            self.xp.arcsinh(self._on(x), out=out)
            return out
        return self._store(self.xp.arcsinh(self._on(x)), out)


class CupySketch(SketchArrays):
    """:class:`SketchArrays` on CuPy, with the passes of a moment chunk as the fused
    kernels of ``SOURCE`` (one read of the data per pass)."""

    def moment_chunk(self, x, w, order, out):
        if order > MAX_MOMENT_ORDER:
            raise ValueError(f"order must be at most {MAX_MOMENT_ORDER} on the GPU; got "
                             f"{order}.")
        return super().moment_chunk(x, w, order, out)

    def _moment_partials(self, name, x, w, fields, *args):
        """Launch a moment pass with enough threads per column to fill the device; its
        (d, n_part, fields) partials."""
        d, n = x.shape
        n_part = max(1, min(-(-n // 32), MOMENT_THREADS // max(d, 1)))
        partial = self.xp.empty((d, n_part, fields), dtype=self.xp.float64)
        if d:
            launch(SOURCE, name, d * n_part, x, w, np.int64(d), np.int64(n), np.int64(n_part),
                   *args, partial)
        return partial

    def _moment_sums(self, x, w):
        cupy = self.xp
        partial = self._moment_partials("moment_sums", x, w, 6)
        n_nan, rows, total, sum_wx = (partial[:, :, f].sum(axis=1) for f in range(4))
        has = partial[:, :, 1] > 0
        return (n_nan, rows, total, sum_wx,
                cupy.where(has, partial[:, :, 4], cupy.inf).min(axis=1),
                cupy.where(has, partial[:, :, 5], -cupy.inf).max(axis=1))

    def _moment_refine(self, x, w, mean, low, high):
        partial = self._moment_partials("moment_refine", x, w, 4, mean, low, high)
        return tuple(partial[:, :, f].sum(axis=1) for f in range(4))

    def _moment_powers(self, x, w, mean, scale, order):
        cupy = self.xp
        partial = self._moment_partials("moment_powers", x, w, order,
                                        cupy.ascontiguousarray(mean),
                                        cupy.ascontiguousarray(scale), np.int32(order))
        return partial.sum(axis=1)


moment_chunk = on_cupy(CupySketch, "moment_chunk")
interp_columns = on_cupy(CupySketch, "interp_columns")
arcsinh = on_cupy(CupySketch, "arcsinh")
