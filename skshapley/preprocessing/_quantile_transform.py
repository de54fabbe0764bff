"""How a fitted :class:`~skshapley.MomentQuantileTransformer` maps values: through its
quantiles exactly as scikit-learn's ``QuantileTransformer`` maps them through its
empirical ones (``_transform_col``: interpolation, its bound rules, the normal ppf and
clip), column by column in numpy or for every column at once by the numba kernel of
``_transform_kernels``; and to quantile bins and back.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from skshapley.backends import run_parts
from skshapley.preprocessing._transform_kernels import interp_table, transform_columns

__all__ = ["BOUNDS_THRESHOLD", "bin_codes", "bound_scale", "inverse_bins",
           "inverse_columns", "normal_output", "transform_numba", "transform_numpy"]

BOUNDS_THRESHOLD = 1e-7  # as sklearn.preprocessing._data


def bound_scale(lower_x, upper_x):
    """Scale of sklearn's absolute ``BOUNDS_THRESHOLD`` for columns tabulated on
    ``[lower_x, upper_x]``.

    sklearn maps a value within 1e-7 of the lowest (highest) quantile to the lowest
    (highest) reference before the normal ppf. An absolute 1e-7 swallows a whole column
    whose range is below it (``rng.normal(size=n) * 1e-9`` became a constant). Below a
    range of 1 the threshold therefore shrinks with the range, so such a column
    transforms like its rescaling to range 1. Ranges of 1 or more keep sklearn's
    absolute threshold (and its results), and so does a constant column (range 0), whose
    value still maps to the lowest reference.
    """
    span = np.asarray(upper_x, dtype=np.float64) - np.asarray(lower_x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where((span > 0) & (span < 1), span, 1.0)


def normal_output(u):
    """sklearn's normal output of the uniform values ``u`` (the bound rule already
    applied): the normal ppf, clipped to that of ``BOUNDS_THRESHOLD - eps`` and of one
    less it."""
    with np.errstate(invalid="ignore", divide="ignore"):
        clip_min = stats.norm.ppf(BOUNDS_THRESHOLD - np.spacing(1))
        clip_max = stats.norm.ppf(1 - (BOUNDS_THRESHOLD - np.spacing(1)))
        return np.clip(stats.norm.ppf(u), clip_min, clip_max)


def transform_col(col, quantiles, references, inverse, normal):
    """sklearn's QuantileTransformer._transform_col (ties: forward/backward mean)."""
    if not inverse:
        lower_x, upper_x, lower_y, upper_y = quantiles[0], quantiles[-1], 0.0, 1.0
    else:
        lower_x, upper_x, lower_y, upper_y = 0.0, 1.0, quantiles[0], quantiles[-1]
        if normal:
            with np.errstate(invalid="ignore"):
                col = stats.norm.cdf(col)
    with np.errstate(invalid="ignore"):
        if normal:
            threshold = BOUNDS_THRESHOLD * bound_scale(lower_x, upper_x)
            lower_idx = col - threshold < lower_x
            upper_idx = col + threshold > upper_x
        else:
            lower_idx = col == lower_x
            upper_idx = col == upper_x
    finite = ~np.isnan(col)
    values = col[finite]
    if not inverse:
        if np.all(np.diff(quantiles) > 0):
            # no repeated quantiles: forward and backward interpolation agree
            col[finite] = np.interp(values, quantiles, references)
        else:
            col[finite] = 0.5 * (np.interp(values, quantiles, references)
                                 - np.interp(-values, -quantiles[::-1], -references[::-1]))
    else:
        col[finite] = np.interp(values, references, quantiles)
    col[upper_idx] = upper_y
    col[lower_idx] = lower_y
    if not inverse and normal:
        col = normal_output(col)
    return col


def transform_numpy(X, solved, normal, kernels):
    """``transform`` of ``X`` in place by numpy and the backend's ``interp_columns``."""
    quantiles, references = solved.quantiles, solved.references
    # Strictly increasing quantiles: forward and backward interpolation agree and the
    # bound fix-ups are no-ops, so one np.interp per column gives sklearn's result;
    # the backend kernel does it for all such columns in one pass over X.
    fast = np.all(np.diff(quantiles, axis=0) > 0, axis=0) & (len(references) > 1)
    if fast.any():
        cols = np.nonzero(fast)[0]
        out = np.empty((X.shape[0], len(cols)))
        sub = X if len(cols) == X.shape[1] else np.ascontiguousarray(X[:, cols])
        kernels.interp_columns(sub, np.ascontiguousarray(quantiles[:, cols].T),
                               references, out)
        if normal:
            lower_x, upper_x = quantiles[0, cols], quantiles[-1, cols]
            threshold = BOUNDS_THRESHOLD * bound_scale(lower_x, upper_x)
            with np.errstate(invalid="ignore"):
                # sklearn's bound rule for normal output (upper first, so the lower
                # bound wins where both hold, as in _transform_col), then its ppf and clip
                out[sub + threshold > upper_x] = 1.0
                out[sub - threshold < lower_x] = 0.0
            out = normal_output(out)
        X[:, cols] = out
    for j in np.nonzero(~fast)[0]:
        if np.isnan(quantiles[0, j]):
            X[:, j] = np.nan  # no finite value at fit: no CDF (sklearn gives NaN too)
            continue
        X[:, j] = transform_col(X[:, j], quantiles[:, j], references, False, normal)
    return X


def transform_numba(X, solved, normal):
    """``transform`` of ``X`` in place by the numba kernel of ``_transform_kernels``:
    sklearn's ``_transform_col`` (both interpolations where quantiles repeat, the bound
    rules) for every column in one pass, read off a lookup table on the values' order
    keys (built once per solved state, in ``solved.tables``)."""
    quantiles, references = solved.quantiles, solved.references
    d = X.shape[1]
    usable = ~np.isnan(quantiles[0]) if len(references) > 1 else np.zeros(d, bool)
    for j in np.flatnonzero(~usable):
        if np.isnan(quantiles[0, j]):
            X[:, j] = np.nan  # no finite value at fit: no CDF (sklearn gives NaN too)
        else:  # a single quantile
            X[:, j] = transform_col(X[:, j], quantiles[:, j], references, False, normal)
    cols = np.flatnonzero(usable)
    if cols.size == 0:
        return X
    table = solved.tables.get(normal)
    if table is None:
        q = quantiles[:, cols]
        threshold = BOUNDS_THRESHOLD * bound_scale(q[0], q[-1]) if normal else None
        table = solved.tables[normal] = interp_table(q, references, threshold)
    whole = cols.size == d and (X.flags.c_contiguous or X.flags.f_contiguous)
    sub = X if whole else np.ascontiguousarray(X[:, cols])
    transform_columns(sub, table, run=run_parts)
    if normal:
        sub[...] = normal_output(sub)  # the bound rule ran in the kernel
    if not whole:
        X[:, cols] = sub
    return X


def inverse_columns(X, solved, normal):
    """``inverse_transform`` of ``X`` in place (no bins)."""
    for j in range(X.shape[1]):
        if np.isnan(solved.quantiles[0, j]):
            X[:, j] = np.nan  # as transform: no quantile function to invert
            continue
        X[:, j] = transform_col(X[:, j], solved.quantiles[:, j], solved.references, True,
                                normal)
    return X


def bin_codes(X, solved, encode):
    """Each value's quantile bin: ordinal codes, or one-hot blocks (NaN stays NaN)."""
    d = X.shape[1]
    codes = np.empty_like(X)
    for j in range(d):
        edges = solved.bin_edges[j]
        with np.errstate(invalid="ignore"):
            c = np.searchsorted(edges[1:-1], X[:, j], side="right").astype(np.float64)
        c[np.isnan(X[:, j])] = np.nan
        codes[:, j] = c
    if encode == "ordinal":
        return codes
    blocks = []
    for j in range(d):
        k = int(solved.n_bins[j])
        block = np.zeros((X.shape[0], k))
        ok = ~np.isnan(codes[:, j])
        block[np.nonzero(ok)[0], codes[ok, j].astype(np.int64)] = 1.0
        block[~ok] = np.nan
        blocks.append(block)
    return np.hstack(blocks)


def inverse_bins(codes, solved):
    """Bin centres of ordinal ``codes`` (NaN stays NaN)."""
    out = np.empty_like(codes)
    for j in range(codes.shape[1]):
        edges = solved.bin_edges[j]
        centres = 0.5 * (edges[1:] + edges[:-1])
        column = codes[:, j]
        ok = ~np.isnan(column)
        out[:, j] = np.nan
        out[ok, j] = centres[np.clip(column[ok].astype(np.int64), 0, len(centres) - 1)]
    return out
