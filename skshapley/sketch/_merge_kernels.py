"""Kernels of the CDF sketch's updates and merges: thinning one polyline
(``simplify_polyline``, a greedy bottom-up simplification in plain loops that numba
compiles) and, by ``combine_thin``, the sum of two polylines thinned back to ``n_knots``
vertices for every column in one numba call (its references are ``_polyline._combine``
and ``_polyline._thin``). All serial and deterministic.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends.sketch import numba_build

__all__ = ["combine_thin", "get_combine_kernel", "simplify_kernel", "simplify_polyline"]


# ------------------------------------------------------------------ thinning
def _chord_deviation(x, c, p, q):
    """Largest distance of the original vertices strictly between ``p`` and ``q`` from the
    chord ``p -> q``, in the rank (``c``) direction.

    A vertex on a vertical run at the chord's left end is compared with the chord's
    value there (``c[p]``), one at its right end with ``c[q]``; on a vertical chord every
    vertex lies on it (distance 0).
    """
    xp, xq, cp, cq = x[p], x[q], c[p], c[q]
    worst = 0.0
    if xq == xp:
        return worst
    # halved differences: no overflow for values near +-1.8e308
    span = xq / 2 - xp / 2
    for k in range(p + 1, q):
        xk = x[k]
        if xk <= xp:
            dev = c[k] - cp
        elif xk >= xq:
            dev = cq - c[k]
        else:
            dev = abs(c[k] - (cp + (cq - cp) * ((xk / 2 - xp / 2) / span)))
        if dev > worst:
            worst = dev
    return worst


def _pull(key, item, node):
    """Node ``node`` of the tournament tree takes the smaller of its two children's
    ``(key, item)``; on a tie the left child, whose items are the lower indices."""
    left = 2 * node
    right = left + 1
    if key[right] < key[left]:
        key[node] = key[right]
        item[node] = item[right]
    else:
        key[node] = key[left]
        item[node] = item[left]


def _set_leaf(key, item, leaf, value):
    """Set the key of leaf ``leaf`` (a position in the tree) and replay its matches up
    to the root."""
    key[leaf] = value
    node = leaf >> 1
    while node >= 1:
        _pull(key, item, node)
        node >>= 1


def _simplify_loops(x, c, n_keep, keep):
    """Greedy bottom-up thinning (plain loops: the numba build compiles this source).

    Repeatedly drops the interior vertex whose removal moves the polyline least, measured
    against the *original* vertices (ties: lower index first), until ``n_keep`` remain.
    The end points always stay. Writes ``keep`` (bool) and returns the largest cost paid.

    The costs wait in a tournament tree (a complete binary tree whose leaves are the
    interior vertices in order, each node holding the smaller ``(cost, index)`` of its
    children) rather than a binary heap: a removal and its two neighbours' new costs
    replay three root paths of fixed length, with no data-dependent branches to
    mispredict. Thinning the 514-vertex summaries of columns of 10,000 values (normal,
    lognormal and two-mode) to 60 vertices took 64 us a column with the heap (about 140
    ns a removal), 36 us with the tree (one thread, numba). The order of removals, hence
    the result, is the heap's: both take the least ``(cost, index)`` (the same kept
    vertices on 3,000 random polylines with ties).
    """
    n = x.shape[0]
    for i in range(n):
        keep[i] = True
    if n <= n_keep or n <= 2:
        return 0.0
    prev = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    for i in range(n):
        prev[i] = i - 1
        nxt[i] = i + 1
    m = n - 2
    size = 1
    while size < m:
        size *= 2
    # node k's children are 2k and 2k + 1; leaf size + i - 1 is interior vertex i, and
    # the padding leaves and removed vertices hold +inf
    key = np.empty(2 * size)
    item = np.empty(2 * size, dtype=np.int64)
    for leaf in range(size):
        i = leaf + 1
        item[size + leaf] = i
        key[size + leaf] = _chord_deviation(x, c, i - 1, i + 1) if leaf < m else np.inf
    for node in range(size - 1, 0, -1):
        _pull(key, item, node)
    alive = n
    worst = 0.0
    while alive > n_keep and alive > 2:  # the end points stay
        i = item[1]
        if key[1] > worst:
            worst = key[1]
        _set_leaf(key, item, size + i - 1, np.inf)
        keep[i] = False
        alive -= 1
        p, q = prev[i], nxt[i]
        nxt[p] = q
        prev[q] = p
        for j in (p, q):
            if j <= 0 or j >= n - 1:
                continue
            _set_leaf(key, item, size + j - 1, _chord_deviation(x, c, prev[j], nxt[j]))
    return worst


def simplify_polyline(x, c, n_keep, keep):
    """Keep ``n_keep`` vertices of the polyline ``(x, c)`` (see ``_simplify_loops``)."""
    return _simplify_loops(x, c, n_keep, keep)


# ------------------------------------------------------------ polyline sums in bulk
# numba twins of _polyline's _combine, _dedupe and _thin, for every column in one call
# (merge and update spent 150 us per column in numpy calls on arrays of 60 to 1,000
# vertices). The arithmetic is numpy's, operation for operation, so the vertices are the
# same bits; the thinning error is summed in order rather than pairwise (equal to
# round-off).


def _fraction_at(a, b, v):
    """_polyline._fraction for one value."""
    span = b - a
    t = (v - a) / (span if span > 0 else 1.0)
    if not (np.isfinite(span) and np.isfinite(v - a)):
        half = b / 2 - a / 2
        t = (v / 2 - a / 2) / (half if half > 0 else 1.0)
    if not span > 0:
        t = 0.0
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    return t


def _evaluate_at(x, c, m, q, right):
    """_polyline._evaluate of the polyline ``x[:m], c[:m]`` at one value: the weight below
    ``q`` (``right`` false) or at or below it."""
    lo = 0
    hi = m
    while lo < hi:  # searchsorted, side "left" or "right"
        mid = (lo + hi) >> 1
        if x[mid] < q or (right and x[mid] == q):
            lo = mid + 1
        else:
            hi = mid
    if lo >= m:
        return c[m - 1]
    if lo == 0:
        return 0.0
    return c[lo - 1] + (c[lo] - c[lo - 1]) * _fraction_at(x[lo - 1], x[lo], q)


def _dedupe_into(x, c, m):
    """_polyline._dedupe in place on ``x[:m], c[:m]``; returns the new length."""
    if m < 2:
        return m
    k = 1
    for i in range(1, m):
        if not (x[i] == x[k - 1] and c[i] == c[k - 1]):
            x[k] = x[i]
            c[k] = c[i]
            k += 1
    if k < 3:
        return k
    # inner vertices of vertical runs, flagged on the whole array first
    inner = np.zeros(k, dtype=np.bool_)
    for i in range(1, k - 1):
        inner[i] = x[i] == x[i - 1] and x[i] == x[i + 1]
    m = 0
    for i in range(k):
        if not inner[i]:
            x[m] = x[i]
            c[m] = c[i]
            m += 1
    return m


def _combine_thin_loops(xa, ca, na, xb, cb, nb, n_keep, out_x, out_c, out_n, out_err):
    """For each row ``j``: the sum of the polylines ``(xa[j, :na[j]], ca[j, :na[j]])`` and
    ``(xb[j, :nb[j]], cb[j, :nb[j]])`` (``_polyline._combine``) thinned to ``n_keep``
    vertices (``_polyline._thin``) into ``out_x[j], out_c[j]``, with its length ``out_n[j]``
    and thinning error ``out_err[j]``."""
    d = xa.shape[0]
    for j in range(d):
        ma = na[j]
        mb = nb[j]
        room = 2 * (ma + mb) + 2
        x = np.empty(room)
        c = np.empty(room)
        m = 0
        if ma == 0 or mb == 0:
            src_x = xb[j] if ma == 0 else xa[j]
            src_c = cb[j] if ma == 0 else ca[j]
            m = mb if ma == 0 else ma
            for i in range(m):
                x[i] = src_x[i]
                c[i] = src_c[i]
        else:
            ia = 0
            ib = 0
            have = False
            last = 0.0
            running = -np.inf
            while ia < ma or ib < mb:
                # the next distinct value of the union (np.union1d)
                if ib >= mb or (ia < ma and xa[j, ia] <= xb[j, ib]):
                    v = xa[j, ia]
                    ia += 1
                else:
                    v = xb[j, ib]
                    ib += 1
                if have and v == last:
                    continue
                have = True
                last = v
                left = _evaluate_at(xa[j], ca[j], ma, v, False) + \
                    _evaluate_at(xb[j], cb[j], mb, v, False)
                right = _evaluate_at(xa[j], ca[j], ma, v, True) + \
                    _evaluate_at(xb[j], cb[j], mb, v, True)
                # _from_points, with the running maximum of np.maximum.accumulate
                if right > left:
                    x[m] = v
                    running = max(running, left)
                    c[m] = running
                    m += 1
                x[m] = v
                running = max(running, right)
                c[m] = running
                m += 1
        m = _dedupe_into(x, c, m)
        error = 0.0
        if m > n_keep:
            keep = np.empty(m, dtype=np.bool_)
            _simplify_loops(x[:m], c[:m], n_keep, keep)
            fx = np.empty(n_keep)
            fc = np.empty(n_keep)
            k = 0
            for i in range(m):
                if keep[i]:
                    fx[k] = x[i]
                    fc[k] = c[i]
                    k += 1
            total = c[m - 1]
            acc = 0.0
            for i in range(m):
                if keep[i]:
                    continue
                low = _evaluate_at(fx, fc, k, x[i], False)
                high = _evaluate_at(fx, fc, k, x[i], True)
                dev = max(0.0, max(low - c[i], c[i] - high))
                before = c[i - 1] if i > 0 else c[0]
                after = c[i + 1] if i < m - 1 else c[m - 1]
                acc += dev * (0.5 * (after - before))
            error = acc / total if total > 0 else 0.0
            for i in range(k):
                out_x[j, i] = fx[i]
                out_c[j, i] = fc[i]
            out_n[j] = k
        else:
            for i in range(m):
                out_x[j, i] = x[i]
                out_c[j, i] = c[i]
            out_n[j] = m
        out_err[j] = error


def combine_thin(pairs_a, pairs_b, n_keep):
    """``_polyline._thin(*_combine(a, b), n_keep)`` for lists of polylines ``a`` and ``b``
    (pairs of arrays), by the numba build in one call: returns a list of ``(x, c)`` and
    the thinning errors."""
    d = len(pairs_a)
    width_a = max([x.size for x, _ in pairs_a] + [1])
    width_b = max([x.size for x, _ in pairs_b] + [1])
    xa, ca = np.zeros((d, width_a)), np.zeros((d, width_a))
    xb, cb = np.zeros((d, width_b)), np.zeros((d, width_b))
    na = np.zeros(d, dtype=np.int64)
    nb = np.zeros(d, dtype=np.int64)
    for j in range(d):
        for (x, c), X, C, n in ((pairs_a[j], xa, ca, na), (pairs_b[j], xb, cb, nb)):
            X[j, :x.size] = x
            C[j, :x.size] = c
            n[j] = x.size
    width = max(n_keep, int((na + nb).max(initial=0)) * 2 + 2)
    out_x = np.empty((d, width))
    out_c = np.empty((d, width))
    out_n = np.zeros(d, dtype=np.int64)
    out_err = np.zeros(d)
    get_combine_kernel()(xa, ca, na, xb, cb, nb, n_keep, out_x, out_c, out_n, out_err)
    return [(out_x[j, :out_n[j]].copy(), out_c[j, :out_n[j]].copy()) for j in range(d)], \
        out_err


_NUMBA = {}


def simplify_kernel(backend_name):
    """``simplify_polyline`` for ``"numpy"``, its numba build for any other backend."""
    if backend_name == "numpy":
        return simplify_polyline
    if "simplify" not in _NUMBA:
        # the loops call their helpers by global name: rebind them to the builds
        tree = dict(_set_leaf.__globals__)
        tree.update(_pull=numba_build(_pull))
        namespace = dict(_simplify_loops.__globals__)
        namespace.update(_chord_deviation=numba_build(_chord_deviation),
                         _pull=tree["_pull"], _set_leaf=numba_build(_set_leaf, tree))
        _NUMBA["simplify"] = numba_build(_simplify_loops, namespace)
    return _NUMBA["simplify"]


def get_combine_kernel():
    """The numba build of ``_combine_thin_loops`` (with the thinning's build)."""
    if "combine" not in _NUMBA:
        namespace = dict(_combine_thin_loops.__globals__)
        namespace.update(_fraction_at=numba_build(_fraction_at))
        namespace["_evaluate_at"] = numba_build(_evaluate_at, dict(namespace))
        namespace.update(_dedupe_into=numba_build(_dedupe_into),
                         _simplify_loops=simplify_kernel("numba"))
        _NUMBA["combine"] = numba_build(_combine_thin_loops, namespace)
    return _NUMBA["combine"]
