"""NumPy reference kernels of the moment sketches and the quantile transform: the oracle
of the parity tests of ``_numba``, ``_numba_cuda`` and ``_cupy`` (same names and
signatures), and the fields of a moment summary that the twins share.
"""

from __future__ import annotations

import numpy as np

# Holmes 2021, Sec. 3, with the central sums of Pébay et al. 2016).
MOMENT_FIELDS = ("weight", "mean", "exp2", "min", "max", "w_at_min", "w_at_max", "w_zero",
                 "n_nan", "n_rows")
N_MOMENT_FIELDS = len(MOMENT_FIELDS)


def unit_exponent(low, high):
    """Exponent e with (high - low) / 2**e in [0.5, 1), 0 for an empty or constant range.

    The range is taken as 2 * (high/2 - low/2) so that it cannot overflow near 1e308.
    """
    half = high / 2 - low / 2
    if not half > 0 or not np.isfinite(half):
        return 0
    return int(np.frexp(half)[1]) + 1


def moment_chunk(x, w, order, out):
    """Central moment summary of one chunk per column (batch update).

    ``x`` is ``(d, n)`` float64, one contiguous row per feature; ``w`` is ``(n,)``.
    NaN values and zero weights are skipped (NaNs are counted). Row ``j`` of ``out``
    (``(d, N_MOMENT_FIELDS + order)``) receives ``MOMENT_FIELDS`` then
    ``M_hat_k = sum w (x - mean)^k / 2^(e k)`` for k = 1..order, where the mean is
    computed in two passes (mean, then one refinement). ``M_hat_1`` is the residual of
    the rounded float64 mean; keeping it makes offsets such as 1e12 exact (assuming it
    is 0 loses the moments when ulp(mean) is comparable to the spread).
    """
    d = x.shape[0]
    out[...] = 0.0
    for j in range(d):
        col = x[j]
        nan = np.isnan(col)
        keep = ~nan & (w > 0)
        v = col[keep]
        wv = w[keep]
        row = out[j]
        row[8] = float(nan.sum())
        row[9] = float(v.size)
        if v.size == 0:
            row[3], row[4] = np.inf, -np.inf
            continue
        total = wv.sum()
        low, high = v.min(), v.max()
        mean = (wv * v).sum() / total
        mean += (wv * (v - mean)).sum() / total
        mean = min(max(mean, low), high)
        e = unit_exponent(low, high)
        dev = (v - mean) * np.ldexp(1.0, -e)
        row[0], row[1], row[2], row[3], row[4] = total, mean, e, low, high
        row[5] = wv[v == low].sum()
        row[6] = wv[v == high].sum()
        row[7] = wv[v == 0].sum()
        power = wv
        for k in range(1, order + 1):
            power = power * dev
            row[N_MOMENT_FIELDS + k - 1] = power.sum()
    return out


def interp_columns(X, xp, fp, out):
    """``out[:, j] = np.interp(X[:, j], xp[j], fp)`` for every column (NaN stays NaN).

    ``X`` and ``out`` are ``(n, d)``; ``xp`` is ``(d, m)``, each row strictly increasing;
    ``fp`` is ``(m,)``.
    """
    for j in range(X.shape[1]):
        out[:, j] = np.interp(X[:, j], xp[j], fp)
    return out


def arcsinh(x, out):
    """``out[...] = np.arcsinh(x)`` (the sketches' heavy-tail transform)."""
    np.arcsinh(x, out=out)
    return out
