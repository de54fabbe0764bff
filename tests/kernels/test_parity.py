"""Every available backend against the NumPy twin (STYLE.md §5, "Parity tests")."""

from types import SimpleNamespace

import numpy as np
import pytest
from backend_helpers import missing_kernel

from skshapley.backends import KERNEL_NAMES, available_backends, get_backend
from skshapley.backends._array_twins import ArrayKernels
from skshapley.exceptions import BackendUnavailableError

NUMPY = get_backend("numpy")
OTHERS = [name for name in available_backends() if name != "numpy"]


def _orders(rng, n, d):
    return np.argsort(rng.random((n, d)), axis=1).astype(np.int64)


class _SkipMissingKernels:
    """A backend namespace whose kernels skip the test when the backend lacks them (the
    array twins have no TreeSHAP kernels; a registered backend may lack some)."""

    def __init__(self, namespace, name):
        self._namespace = namespace
        self.name = name

    def __getattr__(self, name):
        kernel = getattr(self._namespace, name)

        def call(*args, **kwargs):
            try:
                return kernel(*args, **kwargs)
            except BackendUnavailableError as err:
                pytest.skip(str(err))

        return call


def _array_twins_on_numpy():
    """The CuPy backend's model-agnostic code (:class:`ArrayKernels`) bound to NumPy, so
    this suite checks it on machines without a GPU; tree kernels are absent (skipped)."""
    twins = ArrayKernels(np)
    return SimpleNamespace(**{name: getattr(twins, name, None)
                              or missing_kernel("array twins", name) for name in KERNEL_NAMES})


@pytest.fixture(scope="module")
def cupy_stand_in():
    from cuda_cpp_emulator import compiler_available, cupy_sources, fake_cupy

    if not compiler_available():
        pytest.skip("no C++ compiler for the CuPy stand-in")
    return fake_cupy(cupy_sources())


@pytest.fixture(params=[*OTHERS, "array_twins", "cupy_emulated"])
def backend(request, monkeypatch):
    if request.param == "array_twins":
        return _SkipMissingKernels(_array_twins_on_numpy(), "array_twins")
    if request.param == "cupy_emulated":
        from cuda_cpp_emulator import use_stand_in

        # the CuPy backend with ``cupy`` replaced by the CPU stand-in (its CUDA C++
        # compiled by g++ and run thread by thread)
        stand_in = request.getfixturevalue("cupy_stand_in")
        return _SkipMissingKernels(use_stand_in(monkeypatch, stand_in), "cupy_emulated")
    return _SkipMissingKernels(get_backend(request.param), request.param)


def test_numba_is_available_exactly_when_it_is_installed(monkeypatch):
    import importlib.util

    installed = importlib.util.find_spec("numba") is not None
    assert ("numba" in available_backends()) == installed
    assert ("numba" in OTHERS) == installed  # the parity tests run on it whenever it can
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, package=None: None)
    assert "numba" not in available_backends()
    assert "pip install numba" in available_backends(verbose=True)["numba"]


def test_every_backend_provides_every_kernel(backend):
    # the backend's own namespace, not the wrapper (whose kernels are always callable)
    from skshapley.backends.tree import KERNELS as TREE_KERNELS

    namespace = backend._namespace
    missing = {name for name in KERNEL_NAMES
               if not callable(getattr(namespace, name, None))
               or getattr(getattr(namespace, name), "is_missing", False)}
    # the array twins have no TreeSHAP kernels (the CuPy backend runs CUDA ones there)
    allowed = set(TREE_KERNELS) if backend.name == "array_twins" else set()
    assert missing <= allowed, sorted(missing - allowed)


@pytest.mark.parametrize(
    "m, n_rows, n_background, d", [(1, 1, 1, 1), (7, 2, 3, 2), (40, 3, 11, 9), (300, 4, 30, 8)]
)
def test_assemble_masked_batch(backend, rng, m, n_rows, n_background, d):
    # the last case is above PARALLEL_MIN_ELEMENTS, so the prange build runs too
    x = rng.normal(size=(n_rows, d))
    background = rng.normal(size=(n_background, d))
    background[0, 0] = np.inf  # ±inf must pass through untouched
    coalitions = rng.random((m, d)) < 0.5
    size = (m * n_rows * n_background, d)
    expected = NUMPY.assemble_masked_batch(x, background, coalitions, np.empty(size))
    got = backend.assemble_masked_batch(x, background, coalitions, np.empty(size))
    np.testing.assert_array_equal(got, expected)
    # The reference itself: row (k*n_rows + i)*nb + r mixes x[i] and background[r].
    k, i, r = m - 1, n_rows - 1, n_background - 1
    np.testing.assert_array_equal(expected[(k * n_rows + i) * n_background + r],
                                  np.where(coalitions[k], x[i], background[r]))


@pytest.mark.parametrize("n, d", [(1, 1), (3, 2), (25, 8), (2000, 12)])
def test_prefix_coalitions(backend, rng, n, d):
    orders = _orders(rng, n, d)
    expected = NUMPY.prefix_coalitions(orders, np.empty((n, max(d - 1, 0), d), dtype=bool))
    got = backend.prefix_coalitions(orders, np.empty((n, max(d - 1, 0), d), dtype=bool))
    np.testing.assert_array_equal(got, expected)
    if d > 1:
        # Prefix t has t + 1 members, namely orders[:, :t + 1].
        np.testing.assert_array_equal(expected.sum(axis=2), np.tile(np.arange(1, d), (n, 1)))
        assert expected[0, 0, orders[0, 0]]


@pytest.mark.parametrize("n, d, k", [(1, 1, 1), (4, 2, 1), (30, 7, 3), (3000, 10, 9)])
def test_accumulate_permutation_marginals(backend, rng, n, d, k):
    orders = _orders(rng, n, d)
    path = rng.normal(size=(n, d + 1, k))
    expected = NUMPY.accumulate_permutation_marginals(orders, path, np.empty((n, d, k)))
    got = backend.accumulate_permutation_marginals(orders, path, np.empty((n, d, k)))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    # Contributions telescope: each ordering's row sums to v(N) - v(∅).
    np.testing.assert_allclose(expected.sum(axis=1), path[:, -1] - path[:, 0], rtol=1e-10)


def test_accumulate_with_infinite_values(backend):
    orders = np.array([[1, 0]], dtype=np.int64)
    path = np.array([[[0.0], [np.inf], [np.inf]]])
    got = backend.accumulate_permutation_marginals(orders, path, np.empty((1, 2, 1)))
    expected = NUMPY.accumulate_permutation_marginals(orders, path, np.empty((1, 2, 1)))
    np.testing.assert_array_equal(got, expected)  # inf - inf = nan in both


@pytest.mark.parametrize("d, k", [(1, 1), (2, 1), (6, 2), (10, 1), (14, 16)])
def test_exact_shapley_from_values(backend, rng, d, k):
    values = rng.normal(size=(2**d, k))
    expected = NUMPY.exact_shapley_from_values(values, d, np.empty((d, k)))
    got = backend.exact_shapley_from_values(values, d, np.empty((d, k)))
    # Sums of 2^(d-1) terms of size O(1) in different orders: round-off ~ 2^(d-1) eps.
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=2**d * np.finfo(float).eps)


def test_exact_shapley_constant_game(backend):
    values = np.full((2**4, 1), 3.5)
    got = backend.exact_shapley_from_values(values, 4, np.empty((4, 1)))
    np.testing.assert_array_equal(got, 0.0)


def _n_words(d):
    return max(1, -(-(d * (d - 1) // 2) // 64))


@pytest.mark.parametrize("n, d", [(1, 1), (3, 2), (20, 12), (40, 50), (600, 30)])
def test_precedence_bits_and_discordant_pairs(backend, rng, n, d):
    orders = _orders(rng, n, d)
    words = _n_words(d)
    expected = NUMPY.precedence_bits(orders, np.empty((n, words), dtype=np.uint64))
    got = backend.precedence_bits(orders, np.empty((n, words), dtype=np.uint64))
    np.testing.assert_array_equal(got, expected)
    other = _orders(rng, 7, d)
    other_bits = NUMPY.precedence_bits(other, np.empty((7, words), dtype=np.uint64))
    n_dis = NUMPY.discordant_pairs(expected, other_bits, np.empty((n, 7), dtype=np.int64))
    got_dis = backend.discordant_pairs(expected, other_bits, np.empty((n, 7), dtype=np.int64))
    np.testing.assert_array_equal(got_dis, n_dis)
    # the O(d^2) definition on rank vectors, for one pair
    r, s = np.argsort(orders[0]), np.argsort(other[0])
    brute = sum((r[i] < r[j]) != (s[i] < s[j]) for i in range(d) for j in range(i + 1, d))
    assert n_dis[0, 0] == brute


@pytest.mark.parametrize("n, d, start", [(1, 1, 0), (5, 2, 3), (40, 10, 100), (300, 257, 7)])
def test_philox_orders(backend, n, d, start):
    expected = NUMPY.philox_orders(2**63 + 12345, start, np.empty((n, d), dtype=np.int64))
    got = backend.philox_orders(2**63 + 12345, start, np.empty((n, d), dtype=np.int64))
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(np.sort(expected, axis=1), np.tile(np.arange(d), (n, 1)))


@pytest.mark.parametrize("d, n, order", [(1, 1, 2), (3, 257, 10), (20, 20_000, 15)])
def test_moment_chunk(backend, rng, d, n, order):
    # the last case is above PARALLEL_MIN_ELEMENTS, so the prange build runs too
    from skshapley.backends.sketch._numpy import N_MOMENT_FIELDS

    x = rng.normal(1000.0, 1.0, size=(d, n))
    x[0, :: 7] = np.nan  # NaN skipped and counted
    x[-1, 1::5] = 0.0  # atoms at zero
    w = rng.random(n)
    w[::11] = 0.0  # zero weights do not touch min/max
    shape = (d, N_MOMENT_FIELDS + order)
    expected = NUMPY.moment_chunk(x, w, order, np.empty(shape))
    got = backend.moment_chunk(x, w, order, np.empty(shape))
    # counts, exponents, min, max and atom weights exactly; sums to rtol 1e-12 of the
    # scale W (each |M_hat_k| <= W because scaled deviations are at most 1)
    for f in (2, 3, 4, 8, 9):
        np.testing.assert_array_equal(got[:, f], expected[:, f])
    np.testing.assert_allclose(got[:, [0, 5, 6, 7]], expected[:, [0, 5, 6, 7]], rtol=1e-12)
    np.testing.assert_allclose(got[:, 1], expected[:, 1], rtol=1e-12)
    scale = expected[:, :1]
    np.testing.assert_allclose(got[:, N_MOMENT_FIELDS:] / np.maximum(scale, 1),
                               expected[:, N_MOMENT_FIELDS:] / np.maximum(scale, 1),
                               rtol=0, atol=1e-12)
    # the reference itself: weighted central sums against a direct two-pass computation
    keep = ~np.isnan(x[1]) & (w > 0) if d > 1 else ~np.isnan(x[0]) & (w > 0)
    row = 1 if d > 1 else 0
    v, wv = x[row][keep], w[keep]
    if v.size:
        mean = np.sum(wv * v) / wv.sum()
        e = expected[row, 2]
        m2 = np.sum(wv * (v - mean) ** 2) / 2.0 ** (2 * e)
        if order >= 2:
            np.testing.assert_allclose(expected[row, N_MOMENT_FIELDS + 1], m2, rtol=1e-9,
                                       atol=1e-12 * wv.sum())


@pytest.mark.parametrize("n, d, m", [(1, 1, 2), (500, 3, 7), (70_000, 4, 1000)])
def test_interp_columns(backend, rng, n, d, m):
    # bit-identical to np.interp: same bracket, same formula (no fastmath)
    xp = np.sort(rng.normal(size=(d, m)), axis=1)
    fp = np.linspace(0.0, 1.0, m)
    X = rng.normal(scale=1.5, size=(n, d))
    X[0, 0] = np.nan
    if n > 3:
        X[1, :] = xp[:, 0]  # exactly on knots and on the ends
        X[2, :] = xp[:, -1]
        X[3, :] = xp[:, m // 2]
    expected = NUMPY.interp_columns(X, xp, fp, np.empty((n, d)))
    got = backend.interp_columns(X, xp, fp, np.empty((n, d)))
    if backend.name in ("numba_cuda", "cupy"):
        # GPU compilers contract slope * (x - xp_j) + fp_j into a fused multiply-add:
        # the product is not rounded (0.5 ulp of a value below max|fp|), and the sum's
        # rounding may then differ (0.5 ulp): at most 2 eps max|fp| apart
        np.testing.assert_allclose(got, expected, rtol=0,
                                   atol=2 * np.finfo(float).eps * np.abs(fp).max())
    else:
        np.testing.assert_array_equal(got, expected)


def test_arcsinh(backend, rng):
    x = np.concatenate([rng.normal(size=1000), rng.standard_cauchy(1000) * 1e6,
                        [0.0, -0.0, 1e-300, -1e-20, 1e200, -1.7e308, np.nan]])
    expected = NUMPY.arcsinh(x, np.empty_like(x))
    got = backend.arcsinh(x, np.empty_like(x))
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0)
    assert np.isnan(got[-1])
    assert np.signbit(got[x.size - 6])  # asinh(-0.0) = -0.0
    # in place (the sketches transform their transposed chunk), across block edges
    wide = np.concatenate([x, rng.standard_cauchy(9000) * 1e3, x])
    expected = NUMPY.arcsinh(wide, np.empty_like(wide))
    in_place = wide.copy()
    backend.arcsinh(in_place, in_place)
    np.testing.assert_allclose(in_place, expected, rtol=1e-15, atol=0)
    assert np.isnan(in_place[x.size - 1]) and np.isnan(in_place[-1])


def _reduced_problem(rng, p, m):
    """A random reduced LS-SPA problem (§5.3): upper-triangular factor, test factor."""
    factor = np.triu(rng.normal(size=(p, p))) + 3 * np.eye(p)
    return (factor, rng.normal(size=p), rng.normal(size=(m, p)), rng.normal(size=m))


@pytest.mark.parametrize("n, p, m", [(1, 1, 1), (5, 2, 3), (40, 9, 9), (300, 12, 5), (64, 30, 30)])
def test_lsspa_chain_lifts(backend, rng, n, p, m):
    # (300, 12) and (64, 30) are above the parallel threshold, so the prange build runs too
    factor, target, test_factor, test_target = _reduced_problem(rng, p, m)
    orders = _orders(rng, n, p)
    expected = NUMPY.lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target,
                                          0.5, np.empty((n, p)))
    got = backend.lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target, 0.5,
                                       np.empty((n, p)))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    gram, cross = factor.T @ factor, factor.T @ target
    for kernels in (NUMPY, backend):
        status = np.full(n, -1, dtype=np.int64)
        lifts = kernels.lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor,
                                                   test_target, 0.5, np.empty((n, p)), status)
        np.testing.assert_array_equal(status, 0)
        np.testing.assert_allclose(lifts, expected, rtol=1e-10, atol=1e-12)
    # Lifts telescope: every row sums to half the test-residual drop of the full fit.
    theta = np.linalg.solve(factor, target)
    residual = test_factor @ theta - test_target
    drop = test_target @ test_target - residual @ residual
    np.testing.assert_allclose(expected.sum(axis=1), 0.5 * drop, rtol=1e-10)


def test_lsspa_cholesky_flags_non_positive_pivots(backend):
    gram = np.array([[1.0, 1.0], [1.0, 1.0]])  # singular: the second pivot is 0
    orders = np.array([[0, 1], [1, 0]], dtype=np.int64)
    for kernels in (NUMPY, backend):
        status = np.full(2, -1, dtype=np.int64)
        kernels.lsspa_chain_lifts_cholesky(orders, gram, np.ones(2), np.eye(2), np.ones(2),
                                           1.0, np.empty((2, 2)), status)
        np.testing.assert_array_equal(status, 1)


@pytest.mark.parametrize("p, m", [(1, 1), (3, 2), (8, 8), (11, 4)])
def test_lsspa_subset_gains(backend, rng, p, m):
    factor, target, test_factor, test_target = _reduced_problem(rng, p, m)
    expected = NUMPY.lsspa_subset_gains(factor, target, test_factor, test_target,
                                        np.empty(1 << p))
    got = backend.lsspa_subset_gains(factor, target, test_factor, test_target,
                                     np.empty(1 << p))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert expected[0] == 0.0


@pytest.mark.parametrize("laplace", [False, True])
@pytest.mark.parametrize("d", [1, 4])
def test_rkhs_subset_embeddings(backend, rng, laplace, d):
    training, background = rng.normal(size=(37, d)), rng.normal(size=(300, d))
    scales = rng.uniform(0.5, 2.0, d)
    size = (2**d, 37)
    expected = NUMPY.rkhs_subset_embeddings(training, background, scales, laplace,
                                            np.empty(size))
    got = backend.rkhs_subset_embeddings(training, background, scales, laplace,
                                         np.empty(size))
    # the same products; sums over 300 background rows in another order
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)


def test_array_twins_popcount_without_bitwise_count(rng):
    # the SWAR fallback for array libraries that lack bitwise_count (older CuPy)
    plain = SimpleNamespace(uint64=np.uint64, int64=np.int64)
    words = rng.integers(0, 2**64, size=2000, dtype=np.uint64, endpoint=False)
    words[:3] = [0, 2**64 - 1, 2**63]
    np.testing.assert_array_equal(ArrayKernels(plain)._popcount(words),
                                  np.bitwise_count(words))


def test_array_twins_interp_columns_pass_contiguous_columns(rng):
    # CuPy 14's interp refuses a strided x (NotImplementedError on the lent H100): the
    # twins must hand it contiguous columns of a C-ordered X
    def contiguous_interp(x, knots, values):
        if not x.flags.c_contiguous:
            raise NotImplementedError("Non-C-contiguous x is currently not supported")
        return np.interp(x, knots, values)

    strict = SimpleNamespace(**{name: getattr(np, name) for name in dir(np)
                                if not name.startswith("__")})
    strict.interp = contiguous_interp
    knots = np.sort(rng.normal(size=(3, 9)), axis=1)
    fp = np.linspace(0.0, 1.0, 9)
    X = rng.normal(size=(50, 3))
    X[4, 1] = np.nan
    np.testing.assert_array_equal(
        ArrayKernels(strict).interp_columns(X, knots, fp, np.empty((50, 3))),
        NUMPY.interp_columns(X, knots, fp, np.empty((50, 3))))
