"""Piecewise-linear CDFs of a column, as the CDF sketch keeps them: a monotone polyline
through vertices ``(x_k, c_k)``, ``x`` non-decreasing values and ``c`` the cumulative
weight, from ``(min, 0)`` to ``(max, W)``. Two vertices at one value are a jump (a point
mass); between vertices the weight is spread evenly. On the integer lattice the weight
of the value ``k`` is spread over ``(k - 1, k]``, so the polyline is exact at the
integers.

Here: evaluating a polyline, the exact polyline of a sum of two CDFs, thinning (with its
rank-error estimate), the exact polylines of a batch's summaries, and inversion. These
numpy functions are the references of the bulk numba kernels in ``_merge_kernels``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["_combine", "_dedupe", "_evaluate", "_from_counts", "_invert", "_lattice_to_line",
           "_staircase", "_thin"]


def _evaluate(x, c, q, side):
    """The polyline's CDF at ``q``: right-continuous (``side="right"``, the weight at or
    below ``q``) or its left limit (``side="left"``, the weight below ``q``)."""
    q = np.asarray(q, dtype=np.float64)
    m = x.shape[0]
    if m == 0:
        return np.zeros(q.shape)
    i = np.searchsorted(x, q, side=side)
    out = np.where(i >= m, c[-1], 0.0)
    mid = (i > 0) & (i < m)
    j = i[mid]
    t = _fraction(x[j - 1], x[j], q[mid])
    out[mid] = c[j - 1] + (c[j] - c[j - 1]) * t
    return out


def _fraction(a, b, v):
    """``(v - a) / (b - a)`` clipped to [0, 1] (0 where ``a == b``), halving the terms
    where a difference overflows (values near +-1.8e308)."""
    with np.errstate(over="ignore", invalid="ignore"):
        span = b - a
        t = (v - a) / np.where(span > 0, span, 1.0)
        wide = ~np.isfinite(span) | ~np.isfinite(v - a)
        if np.any(wide):
            half = b / 2 - a / 2
            t = np.where(wide, (v / 2 - a / 2) / np.where(half > 0, half, 1.0), t)
    return np.clip(np.where(span > 0, t, 0.0), 0.0, 1.0)


def _between(a, b, t):
    """``a + t (b - a)`` without overflow."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = a + t * (b - a)
        wide = ~np.isfinite(out)
        if np.any(wide):
            out = np.where(wide, a * (1 - t) + b * t, out)
    return out


def _from_points(xs, left, right):
    """Vertices from the CDF's left limit and value at increasing distinct ``xs``: one
    vertex where they agree, a jump (two vertices) where they differ."""
    jump = right > left
    counts = np.where(jump, 2, 1)
    x = np.repeat(xs, counts)
    c = np.empty(x.shape[0])
    ends = np.cumsum(counts) - 1
    c[ends] = right
    c[ends[jump] - 1] = left[jump]
    return x, np.maximum.accumulate(c)


def _combine(a, b):
    """The polyline of the sum of two CDFs (both on the same footing: both on the
    integer lattice or neither). Exact: the sum of two piecewise-linear functions is
    piecewise linear on the union of their breakpoints."""
    (xa, ca), (xb, cb) = a, b
    if xa.size == 0:
        return xb, cb
    if xb.size == 0:
        return xa, ca
    xs = np.union1d(xa, xb)
    left = _evaluate(xa, ca, xs, "left") + _evaluate(xb, cb, xs, "left")
    right = _evaluate(xa, ca, xs, "right") + _evaluate(xb, cb, xs, "right")
    return _from_points(xs, left, right)


def _lattice_to_line(x, c):
    """A lattice polyline (the weight of ``k`` on ``(k - 1, k]``) as an ordinary one.

    Each segment ``(a, c_a) -> (b, c_b)`` holds ``u = (c_b - c_a) / (b - a)`` at each
    integer ``a + 1 .. b``: it becomes a ramp through the CDF's left limits at those
    integers and a jump of ``u`` at ``b`` (exact at one integer, within ``u`` of the
    staircase between them). Used when a column that was all integers meets a
    non-integer value.
    """
    if x.size < 2:
        return x.copy(), c.copy()
    a, b = x[:-1], x[1:]
    ca, cb = c[:-1], c[1:]
    steps = np.maximum(b - a, 1.0)
    u = (cb - ca) / steps
    # per segment: (a + 1, c_a), (b, c_b - u), (b, c_b)
    px = np.column_stack([a + 1, b, b]).ravel()
    pc = np.column_stack([ca, cb - u, cb]).ravel()
    px = np.concatenate([[x[0] + 1], px])
    pc = np.concatenate([[0.0], pc])
    return _dedupe(px, np.maximum.accumulate(pc))


def _dedupe(x, c):
    """Drop repeated vertices and the inner vertices of vertical runs."""
    if x.size < 2:
        return x, c
    same = (x[1:] == x[:-1]) & (c[1:] == c[:-1])
    keep = np.concatenate([[True], ~same])
    x, c = x[keep], c[keep]
    if x.size < 3:
        return x, c
    inner = (x[1:-1] == x[:-2]) & (x[1:-1] == x[2:])
    keep = np.concatenate([[True], ~inner, [True]])
    return x[keep], c[keep]


def _deviation(x, c, fx, fc):
    """Rank distance of each vertex ``(x, c)`` from the polyline ``(fx, fc)``: 0 inside
    its vertical range at ``x`` (``[F(x-), F(x)]``), else the gap to it."""
    low = _evaluate(fx, fc, x, "left")
    high = _evaluate(fx, fc, x, "right")
    return np.maximum(0.0, np.maximum(low - c, c - high))


def _thin(x, c, n_keep, simplify):
    """Thin to ``n_keep`` vertices; returns ``(x, c, error)`` with ``error`` the mean rank
    distance (weight units) of the dropped vertices from the result, weighted by the rank
    they stand for: an estimate of what the thinning adds to a quantile's rank error."""
    x, c = _dedupe(x, c)
    if x.size <= n_keep:
        return x, c, 0.0
    keep = np.empty(x.size, dtype=bool)
    simplify(x, c, n_keep, keep)
    fx, fc = x[keep], c[keep]
    dropped = ~keep
    dev = _deviation(x[dropped], c[dropped], fx, fc)
    padded = np.concatenate([[c[0]], c, [c[-1]]])
    share = 0.5 * (padded[2:] - padded[:-2])
    total = c[-1]
    error = float(np.sum(dev * share[dropped]) / total) if total > 0 else 0.0
    return fx, fc, error


def _staircase(values, weights, integral):
    """The exact polyline of distinct sorted ``values`` with ``weights``."""
    cum = np.cumsum(weights)
    before = cum - weights
    if integral:
        x = np.column_stack([values - 1, values]).ravel()
    else:
        x = np.repeat(values, 2)
    c = np.column_stack([before, cum]).ravel()
    return _dedupe(x, c)


def _from_counts(splitters, below, equal, n_equal, stats, integral):
    """A batch column's polyline from ``summarise_columns``' counts (exact at the
    splitters, the minimum and the maximum; linear in between)."""
    total, low, high, w_low, w_high = stats[2], stats[3], stats[4], stats[5], stats[6]
    r = splitters.shape[0]
    lt = np.cumsum(below[:r] + np.concatenate([[0.0], equal[:-1]])) if r else np.zeros(0)
    values, lower, upper = [splitters], [lt], [lt + equal]
    # a value seen once is one vertex at its mid-rank, a repeated one a jump; the
    # minimum and maximum are always jumps, so the polyline runs from 0 to W
    single = [(n_equal == 1) & (splitters != low) & (splitters != high)]
    if not (r and splitters[0] == low):
        values.insert(0, [low])
        lower.insert(0, [0.0])
        upper.insert(0, [w_low])
        single.insert(0, [False])
    if not (r and splitters[-1] == high):
        values.append([high])
        lower.append([total - w_high])
        upper.append([total])
        single.append([False])
    values, lower, upper = (np.concatenate(v).astype(np.float64)
                            for v in (values, lower, upper))
    single = np.concatenate(single).astype(bool)
    if integral:
        x = np.column_stack([values - 1, values]).ravel()
        c = np.column_stack([lower, upper]).ravel()
    else:
        mid = 0.5 * (lower + upper)
        x = np.repeat(values, 2)
        c = np.column_stack([np.where(single, mid, lower),
                             np.where(single, mid, upper)]).ravel()
    return _dedupe(x, np.maximum.accumulate(c))


def _invert(x, c, p, integral):
    """Quantiles ``inf{x : F(x) >= p W}`` of a polyline (integers on the lattice)."""
    p = np.asarray(p, dtype=np.float64)
    total = c[-1]
    target = p * total
    i = np.clip(np.searchsorted(c, target, side="left"), 1, c.size - 1)
    lo, hi = c[i - 1], c[i]
    frac = np.where(hi > lo, (target - lo) / np.where(hi > lo, hi - lo, 1.0), 1.0)
    frac = np.clip(frac, 0.0, 1.0)
    if integral:
        span = x[i] - x[i - 1]
        # the answer is x[i - 1] plus a whole number of steps; rounding the step count
        # (not x) keeps large integers such as timestamps exact
        steps = np.ceil(frac * span - 1e-9 * np.maximum(span, 1.0))
        q = x[i - 1] + np.maximum(steps, 0.0)
        low = x[0] + 1
    else:
        q = _between(x[i - 1], x[i], frac)
        low = x[0]
    q = np.clip(q, low, x[-1])
    return np.where(p <= 0, low, np.where(p >= 1, x[-1], q))
