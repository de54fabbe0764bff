"""From sketch moments to densities and quantiles (Mitchell, Frank & Holmes 2021, "An
empirical study of moment estimators for quantile approximation", Sec. 3-5).

Solvers: maximum entropy on Chebyshev moments (damped Newton with Cholesky and Armijo
backtracking on Clenshaw-Curtis quadrature, order reduction and a fallback chain), the
one-pass Legendre series, and the cosine series on fixed bounds. Quantiles come from the
tabulated CDF, inverted by ``searchsorted`` and interpolation, then polished by a
bracketed root search on the exact CDF of the tabulated density. Features whose exact
value table survived use numpy's linear percentile rule on the weighted multiset.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.fft import dct
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh

from skshapley.sketch._moments import binomial_table

__all__ = ["chebyshev_table", "exact_quantiles", "maxent", "scaled_moments",
           "solve_quantiles"]

SOLVERS = ("maxent", "legendre", "cosine")
MAX_GRID = 16_384
_ARMIJO_ALPHA, _ARMIJO_BETA, _MIN_STEP = 0.3, 0.25, 1e-3
_EXP_CLIP = 700.0
_MAX_STALLS = 3
# Ridge on theta_1..theta_k (not the normaliser theta_0) added to the dual. Its Hessian,
# the density's covariance of the Chebyshev polynomials, is numerically singular near the
# edge of the moment space (a few dozen rows, peaked densities): there Newton cannot
# find the flat directions, and two chunkings of 29 rows stopped 0.04 apart in the dual
# and 3e-3 of the range apart in the quantiles, both "converged". The ridge makes the
# minimiser unique and the Hessian's condition at most (order + 1) / _RIDGE; elsewhere
# it moves theta by about 1e-9 |theta|. Measured (benchmarks/results/quantile.md):
# bundled mean NIAE unchanged, its 4 continuous columns 0.00360 -> 0.00329 at l = 15
# (0.00361 -> 0.00387 at l = 10), the sketch-only and input_transform="none" rows
# better (synthetic, none, l = 15: 0.00706 -> 0.00054), the slowest default solve
# 10 ms instead of 34-44.
_RIDGE = 1e-9


@lru_cache(maxsize=64)
def chebyshev_table(n):
    """C with T_k(y) = sum_j C[k, j] y^j, k, j <= n (integer recurrence, exact)."""
    table = np.zeros((n + 1, n + 1))
    table[0, 0] = 1.0
    if n >= 1:
        table[1, 1] = 1.0
    for k in range(2, n + 1):
        table[k, 1:] = 2 * table[k - 1, :-1]
        table[k] -= table[k - 2]
    return table


def _half_range(low, high):
    return high / 2 - low / 2


def scaled_moments(weight, mean, exp2, m_hat, low, high):
    """mu[:, k] = E[y^k], y in [-1, 1], from the central state, vectorised."""
    weight = np.atleast_1d(weight)
    d = weight.shape[0]
    order = m_hat.shape[1]
    half = _half_range(low, high)
    ok = half > 0
    safe_half = np.where(ok, half, 1.0)
    g = 1.0 / np.ldexp(safe_half, -exp2)  # half / 2^e is in [0.25, 0.5): no overflow
    delta = np.clip((mean / 2 - low / 2) / safe_half * 2 - 1, -1.0, 1.0)
    m = np.ones((d, order + 1))
    safe_w = np.where(weight > 0, weight, 1.0)
    m[:, 1:] = m_hat / safe_w[:, None]
    binom = binomial_table(order)
    mu = np.zeros((d, order + 1))
    g_pow = g[:, None] ** np.arange(order + 1)[None, :]
    gm = g_pow * m
    for k in range(order + 1):
        i = np.arange(k + 1)
        mu[:, k] = (binom[k, :k + 1][None, :] * gm[:, :k + 1]
                    * delta[:, None] ** (k - i)[None, :]).sum(axis=1)
    mu[~ok] = np.nan
    return mu


def scaled_moments_naive(power_sums, low, high):
    """Eqs. 3-4 of Mitchell, Frank & Holmes 2021 from raw power sums (unstable for offset
    data)."""
    d, order1 = power_sums.shape
    order = order1 - 1
    n = np.where(power_sums[:, 0] > 0, power_sums[:, 0], 1.0)
    with np.errstate(all="ignore"):
        mu_raw = power_sums / n[:, None]
        s = 2.0 / (high - low)
        c = s * (high + low) / 2
        hat = mu_raw * s[:, None] ** np.arange(order + 1)[None, :]
        binom = binomial_table(order)
        mu = np.zeros((d, order + 1))
        for k in range(order + 1):
            i = np.arange(k + 1)
            mu[:, k] = (binom[k, :k + 1][None, :] * hat[:, :k + 1]
                        * (-c[:, None]) ** (k - i)[None, :]).sum(axis=1)
    mu[~(high > low)] = np.nan
    return mu


# ------------------------------------------------------------- quadrature
@lru_cache(maxsize=16)
def _clenshaw_curtis(n):
    """Ascending Chebyshev-Lobatto nodes y_j = -cos(j pi / n) and their CC weights."""
    theta = np.arange(n + 1) * np.pi / n
    y = -np.cos(theta)
    half = n // 2
    # inner_j = sum_{k=1}^{n/2-1} 2 cos(2 k theta_j) / (4k^2 - 1): a DCT-I of length
    # n/2 + 1 (O(n log n); the direct double sum took seconds at n = 16384)
    b = np.zeros(half + 1)
    k = np.arange(1, half)
    b[1:half] = 1.0 / (4 * k ** 2 - 1)
    inner_half = dct(b, type=1)
    inner = np.concatenate([inner_half, inner_half[-2::-1]])
    w = (2.0 / n) * (1 - inner - np.cos(n * theta) / (n ** 2 - 1))
    w[0] = w[n] = 1.0 / (n ** 2 - 1)
    y[0], y[n] = -1.0, 1.0
    if n % 2 == 0:
        y[n // 2] = 0.0
    return y, w


@lru_cache(maxsize=64)
def _cheb_on_nodes(n, kmax):
    y, _ = _clenshaw_curtis(n)
    theta = np.arccos(np.clip(y, -1, 1))
    return np.cos(np.outer(np.arange(kmax + 1), theta))


def _objective(theta, c, n):
    """L (with the ridge ``_RIDGE``), gradient, Hessian and the density on the nodes
    (Eqs. 6-8 of Mitchell, Frank & Holmes 2021, in Chebyshev moments)."""
    order = len(theta) - 1
    _, w = _clenshaw_curtis(n)
    table = _cheb_on_nodes(n, 2 * order)
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.exp(np.minimum(theta @ table[:order + 1], _EXP_CLIP))
    mu = table @ (w * f)
    value = mu[0] - theta @ c + 0.5 * _RIDGE * (theta[1:] @ theta[1:])
    grad = mu[:order + 1] - c
    grad[1:] += _RIDGE * theta[1:]
    a = np.arange(order + 1)
    hess = 0.5 * (mu[a[:, None] + a[None, :]] + mu[np.abs(a[:, None] - a[None, :])])
    hess[a[1:], a[1:]] += _RIDGE
    return value, grad, hess, f, mu


def _newton_step(hess, grad):
    try:
        return cho_solve(cho_factor(hess), -grad)
    except (LinAlgError, ValueError):
        vals, vecs = eigh(hess)
        keep = vals > 1e-12 * max(vals.max(), 0.0)
        if not keep.any():
            raise
        return vecs[:, keep] @ ((vecs[:, keep].T @ -grad) / vals[keep])


def maxent(c, *, n_grid=1024, tol=1e-9, max_iter=100, theta0=None):
    """Maximum-entropy density exp(sum theta_k T_k(y)) matching Chebyshev moments ``c``.

    Returns ``(theta, converged, n_iter, n_grid_used)``.
    """
    order = len(c) - 1
    theta = np.zeros(order + 1)
    theta[0] = -np.log(2.0)
    if theta0 is not None:
        m = min(len(theta0), order + 1)
        theta[:m] = theta0[:m]
    n = n_grid
    with np.errstate(over="ignore", invalid="ignore"):
        return _maxent_loop(theta, c, n, tol, max_iter)


def _maxent_loop(theta, c, n, tol, max_iter):
    order = len(c) - 1
    n_iter = 0
    stalls = 0
    while True:
        converged = False
        value, grad, hess, _, _ = _objective(theta, c, n)
        while n_iter < max_iter:
            if not (np.isfinite(value) and np.all(np.isfinite(grad))
                    and np.all(np.isfinite(hess))):
                return theta, False, n_iter, n
            small = np.sqrt(np.mean(grad ** 2)) < tol
            try:
                step = _newton_step(hess, grad)
            except (LinAlgError, ValueError):  # no positive curvature left (see _RIDGE)
                return theta, False, n_iter, n
            slope = grad @ step
            # Converged when the gradient is small *and* so is the Newton decrement
            # (-slope, twice the predicted decrease of the dual): near the edge of the
            # moment space the Hessian is so flat that a gradient of 1e-9 can sit 0.05
            # above the minimum, and stopping there made the quantiles depend on
            # round-off in the moments (1e-3 of the range between two chunkings).
            if small and -slope < tol:
                converged = True
                break
            n_iter += 1
            t = 1.0
            if slope ** 2 > tol ** 2:
                while True:
                    trial = _objective(theta + t * step, c, n)
                    if np.isfinite(trial[0]) and trial[0] <= value + _ARMIJO_ALPHA * t * slope:
                        stalls = 0
                        break
                    if t < _MIN_STEP:
                        # Moments on (or numerically beyond) the boundary of the moment
                        # space, e.g. a few-valued column: Newton creeps at the minimum
                        # step and never converges. Give up after a few such steps so
                        # the fallback chain runs in milliseconds, not seconds.
                        stalls += 1
                        break
                    t *= _ARMIJO_BETA
                if stalls >= _MAX_STALLS:
                    return theta + t * step, False, n_iter, n
                theta = theta + t * step
                value, grad, hess = trial[:3]
            else:
                theta = theta + step
                value, grad, hess, _, _ = _objective(theta, c, n)
        if not converged:
            return theta, False, n_iter, n
        # resolution check on the nested half grid
        if n >= MAX_GRID:
            return theta, True, n_iter, n
        _, _, _, f, mu = _objective(theta, c, n)
        _, w_half = _clenshaw_curtis(n // 2)
        table = _cheb_on_nodes(n, order)
        mu_half = table[:, ::2] @ (w_half * f[::2])
        if np.max(np.abs(mu_half - mu[:order + 1])) <= 1e-6:
            return theta, True, n_iter, n
        n *= 2


def _valid_order(c, order):
    """Cap the order before the first |c_k| > 1 + 1e-8 or non-finite moment."""
    for k in range(1, order + 1):
        if not np.isfinite(c[k]) or abs(c[k]) > 1 + 1e-8:
            return k - 1
    return order


# ------------------------------------------------------------ CDF tables
def _maxent_table(mu, options):
    order = len(mu) - 1
    c = chebyshev_table(order) @ mu
    k_max = _valid_order(c, order)
    theta = None
    # The whole chain shares a budget of 2 max_iter Newton iterations, so a column
    # whose moments admit no density at any order (a point mass left after removing
    # atoms, say) reaches the Legendre fallback in milliseconds.
    budget = 2 * options["max_iter"]
    for k in range(k_max, 0, -1):
        if budget <= 0:
            break
        theta, converged, n_iter, n = maxent(c[:k + 1], n_grid=options["n_grid"],
                                             tol=options["tol"],
                                             max_iter=min(options["max_iter"], budget),
                                             theta0=theta)
        budget -= max(n_iter, 1)
        if converged:
            y, _ = _clenshaw_curtis(n)
            table = _cheb_on_nodes(n, k)
            f = np.exp(np.minimum(theta @ table, _EXP_CLIP))
            info = {"solver": "maxent", "order": k, "converged": True, "n_iter": n_iter}
            return y, _cumulative(y, f), info
        # restart from the uniform density: the truncated theta of a diverged run is
        # usually a worse start (measured on t(3): no order converged from it)
        theta = None
    return None


def _cumulative(y, f):
    F = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(y))])
    if not F[-1] > 0 or not np.isfinite(F[-1]):
        return None
    return F / F[-1]


def _legendre_cdf_coef(mu):
    """Coefficients of F(y) in the Legendre basis, from mu_k = E[y^k] (Mitchell, Frank &
    Holmes 2021, Sec. 5)."""
    order = len(mu) - 1
    binom = binomial_table(2 * order + 2)
    coef = np.zeros(order + 2)
    coef[0] += 0.5
    coef[1] += 0.5
    for n in range(1, order + 1):
        lam = 0.0
        for k in range(n // 2 + 1):
            lam += (-1) ** k * binom[n, k] * binom[2 * n - 2 * k, n] * mu[n - 2 * k]
        lam *= 2.0 ** -n
        a_n = (2 * n + 1) / 2 * lam
        coef[n + 1] += a_n / (2 * n + 1)
        coef[n - 1] -= a_n / (2 * n + 1)
    return coef


def _legendre_table(mu, options):
    coef = _legendre_cdf_coef(mu)
    if not np.all(np.isfinite(coef)):
        return None
    y = np.linspace(-1.0, 1.0, 8193)
    F = np.polynomial.legendre.legval(y, coef)
    F = np.maximum.accumulate(np.clip(F, 0.0, 1.0))
    F[0], F[-1] = 0.0, 1.0
    exact = lambda t: np.polynomial.legendre.legval(t, coef)  # noqa: E731
    info = {"solver": "legendre", "order": len(mu) - 1, "converged": True, "n_iter": 0}
    return y, F, info, exact


def _cosine_table(a, order):
    u = np.linspace(0.0, np.pi, 8193)
    k = np.arange(1, order + 1)
    coef = a[:order] / k
    F = u / np.pi + (2 / np.pi) * (np.sin(np.outer(u, k)) @ coef)
    F = np.maximum.accumulate(np.clip(F, 0.0, 1.0))
    F[0], F[-1] = 0.0, 1.0
    exact = lambda t: t / np.pi + (2 / np.pi) * (np.sin(np.outer(t, k)) @ coef)  # noqa: E731
    return u, F, exact


def _invert(x, F, p, exact=None):
    """q(p) = inf{x : F(x) >= p} on a tabulated non-decreasing F."""
    j = np.clip(np.searchsorted(F, p, side="left"), 1, len(F) - 1)
    lo, hi = F[j - 1], F[j]
    span = hi - lo
    t = np.where(span > 0, (p - lo) / np.where(span > 0, span, 1.0), 1.0)
    q = x[j - 1] + np.clip(t, 0.0, 1.0) * (x[j] - x[j - 1])
    q = np.where(p <= F[0], x[0], q)
    if exact is not None:
        # bracketed polish on the exact CDF where it brackets p (vectorised bisection)
        a, b = x[j - 1].copy(), x[j].copy()
        fa, fb = exact(a) - p, exact(b) - p
        ok = (fa < 0) & (fb >= 0) & (p > 0) & (p < 1)
        if ok.any():
            a, b = a[ok], b[ok]
            pk = p[ok]
            for _ in range(30):
                mid = 0.5 * (a + b)
                below = exact(mid) < pk
                a = np.where(below, mid, a)
                b = np.where(below, b, mid)
            q[ok] = 0.5 * (a + b)
    return q


# ---------------------------------------------------------------- exact
def exact_quantiles(table, p, method="linear"):
    """Quantiles of a weighted multiset by numpy's ``"linear"`` or ``"inverted_cdf"`` rule.

    With unit weights ``"linear"`` is bit for bit ``np.nanpercentile(x, 100 * p)`` of
    the expanded data (and so sklearn's ``QuantileTransformer``): the same
    ``100 p / 100`` round trip, virtual index ``(n - 1) p`` and two-sided ``lerp``.
    ``"inverted_cdf"`` is the smallest value whose cumulative weight reaches ``p W``
    (the step quantile function, as KLL's ``get_quantiles`` returns).
    """
    if method not in ("linear", "inverted_cdf"):
        raise ValueError(f"method={method!r} is invalid: use 'linear' or 'inverted_cdf'.")
    values = np.array(sorted(table))
    weights = np.array([table[v] for v in values])
    cum = np.cumsum(weights)
    total = cum[-1]
    if method == "inverted_cdf":
        index = np.searchsorted(cum, np.asarray(p, dtype=np.float64) * total, side="left")
        return values[np.clip(index, 0, len(values) - 1)]
    p = np.true_divide(np.asarray(p, dtype=np.float64) * 100, 100)
    virtual = p * max(total - 1, 0.0)
    lower = np.floor(virtual)
    gamma = virtual - lower
    i0 = np.minimum(np.searchsorted(cum, lower, side="right"), len(values) - 1)
    i1 = np.minimum(np.searchsorted(cum, lower + 1, side="right"), len(values) - 1)
    a, b = values[i0], values[i1]
    diff = b - a
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)


# ------------------------------------------------------------ main entry
def solve_quantiles(sketch, j, p, *, solver="maxent", n_grid=1024, tol=1e-9, max_iter=100,
                    track_atoms=True, use_exact=True, method="linear", max_order=None):
    """Quantiles of feature ``j`` of ``sketch`` at probabilities ``p``.

    Returns ``(q, info)``; ``info`` has ``solver``, ``order``, ``converged`` and
    ``n_iter`` (and, for solved features, ``order_valid``: the order before the first
    invalid Chebyshev moment). ``method`` is the rule of the exact path
    (:func:`exact_quantiles`). ``max_order`` solves with the first moments only (the
    sketch's order when ``None``). Quantiles are in the original units (``sinh`` undoes
    ``arcsinh``).
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver={solver!r} is invalid: use one of {SOLVERS}.")
    p = np.asarray(p, dtype=np.float64)
    options = {"n_grid": n_grid, "tol": tol, "max_iter": max_iter}
    low, high = sketch.min[j], sketch.max[j]
    back = np.sinh if sketch.transform == "arcsinh" else (lambda v: v)
    table = sketch.exact[j] if use_exact else None
    if table:
        info = {"solver": "exact", "order": 0, "converged": True, "n_iter": 0}
        return back(exact_quantiles(table, p, method)), info
    if not high > low:
        info = {"solver": "constant", "order": 0, "converged": True, "n_iter": 0}
        return back(np.full(p.shape, low)), info
    half = _half_range(low, high)
    to_x = lambda y: np.clip(low + (y + 1) * half, low, high)  # noqa: E731
    if solver == "cosine":
        if sketch.cos_sums is None:
            raise ValueError("solver='cosine' needs a sketch built with bounds=...")
        blo, bhi = sketch.bounds[j]
        u, F, exact = _cosine_table(sketch.cos_sums[j] / sketch.weight[j], sketch.order)
        uq = _invert(u, F, p, exact)
        q = np.clip(blo + uq / np.pi * (bhi - blo), low, high)
        q = np.where(p <= 0, low, np.where(p >= 1, high, q))
        info = {"solver": "cosine", "order": sketch.order, "converged": True, "n_iter": 0}
        return back(q), info
    if sketch.summation == "naive":
        from skshapley.sketch._solvers import scaled_moments_naive

        mu = scaled_moments_naive(sketch.power_sums[j:j + 1], sketch.min[j:j + 1],
                                  sketch.max[j:j + 1])[0]
    else:
        mu = scaled_moments(sketch.weight[j:j + 1], sketch.mean[j:j + 1],
                            sketch.exp2[j:j + 1], sketch.m_hat[j:j + 1],
                            sketch.min[j:j + 1], sketch.max[j:j + 1])[0]
    if max_order is not None:
        mu = mu[:max(1, int(max_order)) + 1]
    weight = sketch.weight[j]
    # atoms at min, max and 0, removed from the moments in the scaled domain
    atoms = []
    if track_atoms and sketch.summation == "central":
        atoms = [(-1.0, sketch.w_at_min[j]), (1.0, sketch.w_at_max[j])]
        if low < 0 < high and sketch.w_zero[j] > 0:
            atoms.append((float(np.clip((0 / 2 - low / 2) / half * 2 - 1, -1, 1)),
                          sketch.w_zero[j]))
        atoms = [(y, w) for y, w in atoms if w > 0]
    w_atoms = sum(w for _, w in atoms)
    w_cont = weight - w_atoms
    k = np.arange(len(mu))
    if atoms and w_cont > 1e-6 * weight:
        mu_c = (weight * mu - sum(w * y ** k for y, w in atoms)) / w_cont
        mu_c[0] = 1.0
        if len(mu_c) > 2 and mu_c[2] - mu_c[1] ** 2 < 1e-12:
            # the rest is (numerically) one more point mass: no density to solve for
            atoms.append((float(np.clip(mu_c[1], -1, 1)), w_cont))
            w_cont = 0.0
    else:
        mu_c = mu
    result = None
    if atoms and w_cont <= 1e-6 * weight:
        w_cont = 0.0
        y_tab, F_tab, exact = np.array([-1.0, 1.0]), np.array([0.0, 1.0]), None
        info = {"solver": "atoms", "order": 0, "converged": True, "n_iter": 0}
        result = True
    if result is None and solver == "maxent":
        found = _maxent_table(mu_c, options)
        if found is not None and found[1] is not None:
            y_tab, F_tab, info = found
            exact = None
            result = True
    if result is None:
        found = _legendre_table(mu_c, options)
        if found is not None:
            y_tab, F_tab, info, exact = found
            result = True
    if result is None:
        y_tab, F_tab, exact = np.array([-1.0, 1.0]), np.array([0.0, 1.0]), None
        info = {"solver": "uniform", "order": 0, "converged": False, "n_iter": 0}
    with np.errstate(all="ignore"):
        info["order_valid"] = _valid_order(chebyshev_table(len(mu_c) - 1) @ mu_c,
                                           len(mu_c) - 1)
    if atoms:
        y_tab, F_tab = _mix_atoms(y_tab, F_tab, atoms, w_cont, weight)
        exact = None
    yq = _invert(y_tab, F_tab, p, exact)
    q = to_x(yq)
    q = np.where(p <= 0, low, np.where(p >= 1, high, q))
    return back(q), info


def _mix_atoms(y, F, atoms, w_cont, weight):
    """Tabulate F(y) = [sum_{v<=y} w_v + W_c F_c(y)] / W with the jumps as duplicates."""
    positions = np.array([a for a, _ in atoms])
    xs = np.union1d(y, positions)
    Fc = np.interp(xs, y, F)
    left = w_cont * Fc
    right = w_cont * Fc
    for a, w in atoms:
        left = left + w * (a < xs)
        right = right + w * (a <= xs)
    left, right = left / weight, right / weight
    jump = right > left
    x_out = np.repeat(xs, np.where(jump, 2, 1))
    F_out = np.empty(x_out.shape)
    pos = 0
    for i in range(len(xs)):
        if jump[i]:
            F_out[pos], F_out[pos + 1] = left[i], right[i]
            pos += 2
        else:
            F_out[pos] = right[i]
            pos += 1
    F_out = np.maximum.accumulate(F_out)
    F_out[-1] = 1.0
    return x_out, F_out
