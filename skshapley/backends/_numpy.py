"""NumPy reference kernels: the fallback backend and the oracle of every parity test.

Every function here has a twin of the same name and signature in each other backend.
Arguments are arrays, then scalars, then a preallocated ``out`` that the
kernel fills and returns.
"""

from __future__ import annotations

import numpy as np

from skshapley.backends._tree_numpy import (  # noqa: F401  (kernels of this backend)
    TREE_KERNELS,
    tree_background_patterns,
    tree_interventional_shap,
    tree_interventional_walk,
    tree_path_interactions,
    tree_path_shap,
)

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


def assemble_masked_batch(x, background, coalitions, out):
    """Fill the model input of interventional games, for one or several rows.

    Parameters
    ----------
    x : float64 (n_rows, d)
        Foreground rows (one game per row, all on the same coalitions).
    background : float64 (n_background, d)
        Background rows.
    coalitions : bool (m, d)
        Coalition masks; True takes the feature from the foreground row.
    out : float64 (m * n_rows * n_background, d)
        Row ``(k * n_rows + i) * n_background + r`` is
        ``where(coalitions[k], x[i], background[r])``.

    Returns
    -------
    out : float64 (m * n_rows * n_background, d)
    """
    m, d = coalitions.shape
    n_rows = x.shape[0]
    n_background = background.shape[0]
    view = out.reshape(m, n_rows, n_background, d)
    np.copyto(view, background[None, None, :, :])
    np.copyto(view, x[None, :, None, :], where=coalitions[:, None, None, :])
    return out


def prefix_coalitions(orders, out):
    """Masks of the proper non-empty prefixes of each ordering.

    Parameters
    ----------
    orders : int64 (n, d)
        Each row is an ordering of 0..d-1 (``orders[p, t]`` joins at step t).
    out : bool (n, d - 1, d)
        ``out[p, t]`` is the mask of ``{orders[p, 0], ..., orders[p, t]}``.

    Returns
    -------
    out : bool (n, d - 1, d)
    """
    n, d = orders.shape
    if d < 2:
        return out
    ranks = np.empty_like(orders)
    np.put_along_axis(ranks, orders, np.arange(d)[None, :], axis=1)
    steps = np.arange(d - 1)
    out[...] = ranks[:, None, :] <= steps[None, :, None]
    return out


def accumulate_permutation_marginals(orders, path_values, out):
    """Marginal contribution of every player along every ordering.

    Parameters
    ----------
    orders : int64 (n, d)
    path_values : float64 (n, d + 1, k)
        ``path_values[p, t]`` is v of the first t players of ordering p (t = 0..d).
    out : float64 (n, d, k)
        ``out[p, orders[p, t]] = path_values[p, t + 1] - path_values[p, t]``.

    Returns
    -------
    out : float64 (n, d, k)
    """
    with np.errstate(invalid="ignore"):  # inf - inf = nan, as in the compiled twins
        steps = path_values[:, 1:, :] - path_values[:, :-1, :]
    np.put_along_axis(out, orders[:, :, None], steps, axis=1)
    return out


def _shapley_weights(n_players):
    # w(s) = s! (d - s - 1)! / d! = 1 / (d * C(d - 1, s)), in floating point without overflow.
    from scipy.special import comb

    sizes = np.arange(n_players)
    return 1.0 / (n_players * comb(n_players - 1, sizes, exact=False))


def exact_shapley_from_values(values, n_players, out):
    """Exact Shapley values from the values of all 2^d coalitions.

    Parameters
    ----------
    values : float64 (2**d, k)
        ``values[s]`` is v of the coalition whose bitmask is ``s`` (bit j = player j).
    n_players : int
    out : float64 (d, k)

    Returns
    -------
    out : float64 (d, k)
    """
    d = n_players
    masks = np.arange(2**d, dtype=np.int64)
    sizes = np.bitwise_count(masks) if hasattr(np, "bitwise_count") else _popcount(masks)
    weights = _shapley_weights(d)
    for j in range(d):
        bit = np.int64(1) << j
        without = masks[(masks & bit) == 0]
        diff = values[without | bit] - values[without]
        out[j] = weights[sizes[without]] @ diff
    return out


def _popcount(masks):
    counts = np.zeros(masks.shape, dtype=np.int64)
    work = masks.copy()
    while np.any(work):
        counts += work & 1
        work >>= 1
    return counts


def precedence_bits(orders, out):
    """Pack each ordering's pair-precedence bits [r_i < r_j], i < j, into uint64 words (the
    feature map of the Kendall and Mallows kernels, Mitchell et al. 2022, Sec. 3).

    Parameters
    ----------
    orders : int64 (n, d)
    out : uint64 (n, ceil(d (d - 1) / 2 / 64))
        Bit ``p % 64`` of word ``p // 64`` is pair p in row-major order (0, 1), (0, 2), ...,
        (1, 2), ...; padding bits are 0.

    Returns
    -------
    out : uint64 (n, n_words)
    """
    n, d = orders.shape
    ranks = np.empty_like(orders)
    np.put_along_axis(ranks, orders, np.arange(d)[None, :], axis=1)
    first, second = np.triu_indices(d, k=1)
    bits = (ranks[:, first] < ranks[:, second]).astype(np.uint64)
    out[...] = 0
    pair = np.arange(first.size)
    shifted = bits << (pair % 64).astype(np.uint64)
    for word in range(out.shape[1]):
        out[:, word] = np.bitwise_or.reduce(shifted[:, pair // 64 == word], axis=1)
    return out


def discordant_pairs(bits_a, bits_b, out):
    """n_dis between every ordering of A and of B: popcount of XORed precedence bits.

    Parameters
    ----------
    bits_a : uint64 (n_a, n_words)
    bits_b : uint64 (n_b, n_words)
    out : int64 (n_a, n_b)

    Returns
    -------
    out : int64 (n_a, n_b)
    """
    xor = bits_a[:, None, :] ^ bits_b[None, :, :]
    counts = np.bitwise_count(xor) if hasattr(np, "bitwise_count") else _popcount(xor)
    out[...] = counts.sum(axis=2)
    return out


# Counter-based orderings (the bijective shuffle of Mitchell, Stokes, Frank & Holmes 2022,
# Sec. 3-4): a keyed Feistel/Philox bijection of [0, 2^b), compacted to the values below d.
# Constants of the VariablePhilox bijection and SplitMix64.
PHILOX_M0 = 0xD2B74407B1CE6E93
PHILOX_ROUNDS = 24
PHILOX_MIN_BITS = 8
SPLITMIX_GAMMA = 0x9E3779B97F4A7C15


def philox_bits(n_players):
    """Total bits b of the padded domain: max(8, bit_length(d - 1))."""
    return max(PHILOX_MIN_BITS, int(n_players - 1).bit_length())


def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def philox_keys(seed, indices, rounds=PHILOX_ROUNDS):
    """Round keys (len(indices), rounds): SplitMix64 outputs rounds j .. rounds j + rounds - 1
    from ``seed``."""
    with np.errstate(over="ignore"):
        counters = (np.asarray(indices, dtype=np.uint64)[:, None] * np.uint64(rounds)
                    + np.arange(1, rounds + 1, dtype=np.uint64)[None, :])
        return _mix64(np.uint64(seed) + counters * np.uint64(SPLITMIX_GAMMA)) & np.uint64(
            0xFFFFFFFF)


def philox_bijection(values, keys, n_bits):
    """Apply the keyed bijection to ``values`` (n, m) with keys (n, rounds): one Feistel
    round per key column (24 in the sampler; fewer only to test that they are needed)."""
    left_bits = n_bits // 2
    right_bits = n_bits - left_bits
    left_mask, right_mask = np.uint64((1 << left_bits) - 1), np.uint64((1 << right_bits) - 1)
    shift = np.uint64(right_bits - left_bits)
    left = values >> np.uint64(right_bits)
    right = values & right_mask
    with np.errstate(over="ignore"):
        for r in range(keys.shape[1]):
            product = np.uint64(PHILOX_M0) * left
            high, low = product >> np.uint64(32), product & np.uint64(0xFFFFFFFF)
            new_left = (high ^ keys[:, r : r + 1] ^ right) & left_mask
            right = (((low << shift) & np.uint64(0xFFFFFFFF)) | (right >> np.uint64(left_bits))) \
                & right_mask
            left = new_left
    return (left << np.uint64(right_bits)) | right


def philox_orders(seed, start, out, rounds=PHILOX_ROUNDS):
    """Orderings ``start .. start + n - 1`` of the counter-based stream of ``seed``.

    Parameters
    ----------
    seed : int
        uint64 stream key.
    start : int
        Index of the first ordering.
    out : int64 (n, d)
    rounds : int, default=24
        Feistel rounds; the sampler always uses 24 (tests show fewer are not uniform).

    Returns
    -------
    out : int64 (n, d)
    """
    n, d = out.shape
    n_bits = philox_bits(d)
    keys = philox_keys(seed, np.arange(start, start + n), rounds)
    domain = np.broadcast_to(np.arange(1 << n_bits, dtype=np.uint64), (n, 1 << n_bits))
    images = philox_bijection(domain, keys, n_bits)
    kept = images < np.uint64(d)
    # every row keeps exactly d values (a bijection hits each of 0..d-1 once), in i order
    out[...] = images[kept].reshape(n, d).astype(np.int64)
    return out


# Fields of one row of ``moment_chunk``'s output (the moment sketch of Mitchell, Frank &
# Holmes 2021, Sec. 3, with the central sums of Pébay et al. 2016).
MOMENT_FIELDS = ("weight", "mean", "exp2", "min", "max", "w_at_min", "w_at_max", "w_zero",
                 "n_nan", "n_rows")
N_MOMENT_FIELDS = len(MOMENT_FIELDS)


def _unit_exponent(low, high):
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
        e = _unit_exponent(low, high)
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


# -- LS-SPA (Bell, Devanathan & Boyd 2024, Sec. 3.2-3.3) -------------------------------------
# The reduced least-squares problem (Sec. 3.2): a p x p upper-triangular training factor R with
# target ytilde (||X theta - y||^2 = ||R theta - ytilde||^2 + const) and an m x p test factor
# T with target ttilde. A chain's lift of feature pi_k is the drop of the test residual when
# pi_k joins; with L = Rtilde^T lower triangular (Rtilde the R factor of R[:, pi], or the
# Cholesky factor of the permuted Gram) and z = L^{-1} (R^T ytilde)[pi], the test prediction of
# model k is sum_{i <= k} z_i g_i with g_i column i of G = T[:, pi] L^{-T} (Sec. 3.3, the cumsum
# formulation). Each increment is computed as delta (2 e + delta), e the residual before it,
# not as a difference of residual norms, so small lifts keep their relative accuracy.


def _chain_lifts_from_factor(lower, z, test_factor, test_target, pi, scale, out_row):
    """Lifts of one chain from its lower-triangular factor and rotated target."""
    from scipy.linalg import solve_triangular

    g = solve_triangular(lower, test_factor[:, pi].T, lower=True).T  # (m, p) = T_pi L^{-T}
    steps = g * z[None, :]
    before = np.cumsum(steps, axis=1) - steps - test_target[:, None]  # residual before step k
    drops = -(steps * (2.0 * before + steps)).sum(axis=0)
    out_row[pi] = drops * scale


def lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target, scale, out):
    """Lift vectors of chains from the R factor of each permuted training factor.

    Parameters
    ----------
    orders : int64 (n, p)
        Row c is a chain: ``orders[c, k]`` joins at step k.
    factor : float64 (p, p)
        Upper-triangular training factor R of the reduced problem.
    target : float64 (p,)
        Reduced training target ytilde.
    test_factor : float64 (m, p)
        Reduced test factor T.
    test_target : float64 (m,)
        Reduced test target.
    scale : float
        Multiplies every lift (1 / ||y_test||^2 gives R^2 lifts).
    out : float64 (n, p)
        ``out[c, j]`` is the lift of feature j in chain c (original feature order).

    Returns
    -------
    out : float64 (n, p)
        Each row sums to ``scale * (||ttilde||^2 - ||T theta_full - ttilde||^2)``.
    """
    n, p = orders.shape
    for c in range(n):
        pi = orders[c]
        stacked = np.empty((p, p + 1))
        stacked[:, :p] = factor[:, pi]
        stacked[:, p] = target
        r = np.linalg.qr(stacked, mode="r")
        _chain_lifts_from_factor(np.ascontiguousarray(r[:, :p].T), r[:, p], test_factor,
                                 test_target, pi, scale, out[c])
    return out


def lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor, test_target, scale, out,
                               status):
    """Lift vectors of chains from the Cholesky factor of each permuted Gram matrix.

    Faster than :func:`lsspa_chain_lifts_qr` (p^3/3 instead of 4p^3/3 flops per chain) but
    squares the condition number.

    Parameters
    ----------
    orders : int64 (n, p)
    gram : float64 (p, p)
        R^T R (ridge included).
    cross : float64 (p,)
        R^T ytilde.
    test_factor, test_target, scale
        As in :func:`lsspa_chain_lifts_qr`.
    out : float64 (n, p)
    status : int64 (n,)
        Set to 0 for chains whose factorisation succeeded and 1 where a pivot was not
        positive (their ``out`` row is then undefined; recompute them with the QR kernel).

    Returns
    -------
    out : float64 (n, p)
    """
    from scipy.linalg import solve_triangular

    n, p = orders.shape
    for c in range(n):
        pi = orders[c]
        try:
            lower = np.linalg.cholesky(gram[np.ix_(pi, pi)])
        except np.linalg.LinAlgError:
            status[c] = 1
            continue
        if not np.all(np.diag(lower) > 0):
            status[c] = 1
            continue
        status[c] = 0
        z = solve_triangular(lower, cross[pi], lower=True)
        _chain_lifts_from_factor(lower, z, test_factor, test_target, pi, scale, out[c])
    return out


def lsspa_subset_gains(factor, target, test_factor, test_target, out):
    """Test-residual drop of the least-squares fit on every subset of features.

    Parameters
    ----------
    factor, target, test_factor, test_target
        The reduced problem, as in :func:`lsspa_chain_lifts_qr`.
    out : float64 (2**p,)
        ``out[s] = ||ttilde||^2 - ||T theta_S - ttilde||^2`` for the subset S with bitmask
        ``s`` (bit j = feature j); ``out[0] = 0``.

    Returns
    -------
    out : float64 (2**p,)
    """
    out[0] = 0.0
    for s in range(1, 1 << factor.shape[1]):
        out[s] = subset_gain_lstsq(factor, target, test_factor, test_target, s)
    return out


def subset_gain_lstsq(factor, target, test_factor, test_target, subset):
    """The test-residual drop of one subset (bitmask ``subset``) by least squares; also the
    GPU twins' fallback for subsets their Gram-form solve flags."""
    members = [j for j in range(factor.shape[1]) if subset >> j & 1]
    theta, *_ = np.linalg.lstsq(factor[:, members], target, rcond=None)
    residual = test_factor[:, members] @ theta - test_target
    return test_target @ test_target - residual @ residual


# -- RKHS-SHAP (Chau et al. 2022, Prop. 3) ----------------------------------------------------
def rkhs_subset_embeddings(training, background, length_scale, laplace, out):
    """Kernel mean embeddings of every feature subset, the interventional RKHS game's table.

    Parameters
    ----------
    training : float64 (n, d)
    background : float64 (b, d)
    length_scale : float64 (d,)
    laplace : bool
        Per-feature kernel exp(-|t|) if True, else exp(-t^2 / 2), t = (a - c) / l.
    out : float64 (2^d, n)
        out[T, i] = mean over background rows l of prod_{j in T} k_j(training[i, j],
        background[l, j]), T a bitmask (row 0 is all ones).

    A depth-first walk over subsets forms each subset's product from its parent's (the
    subset without its highest feature) times one per-feature kernel matrix, over row
    blocks of the training set small enough to stay in cache.
    """
    return subset_embeddings_into(np, training, background, length_scale, laplace, out)


def subset_embeddings_into(xp, training, background, length_scale, laplace, out):
    """The body of :func:`rkhs_subset_embeddings` on the array library ``xp`` (NumPy here,
    CuPy in the CuPy backend); every argument is an ``xp`` array."""
    n, d = training.shape
    b = background.shape[0]
    rows = max(1, 2**19 // max(b, 1))
    out[0] = 1.0
    for lo in range(0, n, rows):
        diff = (training[lo:lo + rows].T[:, :, None] - background.T[:, None, :]) \
            / xp.asarray(length_scale)[:, None, None]
        factors = xp.exp(-xp.abs(diff)) if laplace else xp.exp(-(0.5 * diff**2))
        # (feature to add, parent's mask, parent's product); a child's product is formed
        # when it is popped, so at most one product per depth is alive
        stack = [(j, 0, None) for j in range(d)]
        while stack:
            j, parent, product = stack.pop()
            product = factors[j] if product is None else product * factors[j]
            mask = parent | (1 << j)
            out[mask, lo:lo + rows] = product.sum(axis=1) / b
            stack.extend((k, mask, product) for k in range(j + 1, d))
    return out
