"""Small parity cases of the numba.cuda model-agnostic kernels against the NumPy twins.

Run only in numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1`` set before numba is
imported), through ``test_cuda_simulator.py``; sizes are small because the simulator runs
every GPU thread as a Python thread. On a machine with a GPU, ``test_parity.py`` runs the
same kernels at full size.
"""

import numpy as np
import pytest
from numba import cuda

from skshapley.backends._registry import compose_kernels
from skshapley.backends.sketch._numpy import N_MOMENT_FIELDS
from skshapley.backends.tree import PathArrays

CUDA = compose_kernels("_numba_cuda")
NUMPY = compose_kernels("_numpy")

pytestmark = pytest.mark.skipif(
    not cuda.is_available(), reason="needs numba's CUDA simulator or a GPU")


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def _orders(rng, n, d):
    return np.argsort(rng.random((n, d)), axis=1).astype(np.int64)


def test_masked_batch_prefixes_and_marginals(rng):
    x, background = rng.normal(size=(2, 5)), rng.normal(size=(3, 5))
    coalitions = rng.random((4, 5)) < 0.5
    shape = (4 * 2 * 3, 5)
    np.testing.assert_array_equal(
        CUDA.assemble_masked_batch(x, background, coalitions, np.empty(shape)),
        NUMPY.assemble_masked_batch(x, background, coalitions, np.empty(shape)))
    orders = _orders(rng, 6, 5)
    np.testing.assert_array_equal(
        CUDA.prefix_coalitions(orders, np.zeros((6, 4, 5), bool)),
        NUMPY.prefix_coalitions(orders, np.zeros((6, 4, 5), bool)))
    path = rng.normal(size=(6, 6, 2))
    path[0, 3, 1] = np.inf
    np.testing.assert_array_equal(
        CUDA.accumulate_permutation_marginals(orders, path, np.zeros((6, 5, 2))),
        NUMPY.accumulate_permutation_marginals(orders, path, np.zeros((6, 5, 2))))


def test_precedence_bits_and_discordant_pairs(rng):
    orders = _orders(rng, 5, 13)  # 78 pairs: two words, the second padded
    bits = CUDA.precedence_bits(orders, np.empty((5, 2), np.uint64))
    np.testing.assert_array_equal(bits, NUMPY.precedence_bits(orders, np.empty((5, 2),
                                                                                np.uint64)))
    np.testing.assert_array_equal(
        CUDA.discordant_pairs(bits, bits[:3], np.empty((5, 3), np.int64)),
        NUMPY.discordant_pairs(bits, bits[:3], np.empty((5, 3), np.int64)))


@pytest.mark.parametrize("n, d, start", [(1, 1, 0), (3, 10, 5), (2, 300, 7)])
def test_philox_orders(n, d, start):
    np.testing.assert_array_equal(CUDA.philox_orders(123, start, np.empty((n, d), np.int64)),
                                  NUMPY.philox_orders(123, start, np.empty((n, d), np.int64)))


def test_moment_chunk_and_arcsinh(rng):
    x = rng.normal(1000.0, 1.0, size=(2, 300))
    x[0, ::7] = np.nan
    x[1, 1::5] = 0.0
    w = rng.random(300)
    w[::11] = 0.0
    shape = (2, N_MOMENT_FIELDS + 6)
    got = CUDA.moment_chunk(x, w, 6, np.empty(shape))
    expected = NUMPY.moment_chunk(x, w, 6, np.empty(shape))
    np.testing.assert_array_equal(got[:, [2, 3, 4, 8, 9]], expected[:, [2, 3, 4, 8, 9]])
    np.testing.assert_allclose(got[:, :N_MOMENT_FIELDS], expected[:, :N_MOMENT_FIELDS],
                               rtol=1e-12)
    scale = np.maximum(expected[:, :1], 1)
    np.testing.assert_allclose(got[:, N_MOMENT_FIELDS:] / scale,
                               expected[:, N_MOMENT_FIELDS:] / scale, rtol=0, atol=1e-12)
    values = np.array([0.0, -0.0, 1e-300, -1e-20, 0.3, -2.0, 1e200, -1.7e308, np.nan])
    np.testing.assert_allclose(CUDA.arcsinh(values, np.empty_like(values)),
                               NUMPY.arcsinh(values, np.empty_like(values)), rtol=1e-15)


@pytest.mark.parametrize("d, k", [(1, 1), (4, 2), (9, 1)])
def test_exact_shapley_from_values(rng, d, k):
    values = rng.normal(size=(2**d, k))
    got = CUDA.exact_shapley_from_values(values, d, np.empty((d, k)))
    expected = NUMPY.exact_shapley_from_values(values, d, np.empty((d, k)))
    # sums of 2^(d-1) terms in another order: a few ulps of the largest partial sum
    scale = np.abs(values).max()
    np.testing.assert_allclose(got, expected, rtol=0, atol=2**d * 4e-16 * scale)


def test_interp_columns(rng):
    xp = np.sort(rng.normal(size=(3, 40)), axis=1)
    fp = np.linspace(0.0, 1.0, 40)
    X = rng.normal(scale=1.5, size=(25, 3))
    X[0] = xp[:, 0]  # on the first knot
    X[1] = xp[:, -1]  # on the last knot
    X[2] = xp[:, 17]  # on an inner knot
    X[3, 1] = np.nan
    X[4] = [-50.0, 50.0, 0.0]  # outside the knots
    got = CUDA.interp_columns(X, xp, fp, np.empty_like(X))
    expected = NUMPY.interp_columns(X, xp, fp, np.empty_like(X))
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=1e-16)
    assert np.isnan(got[3, 1])


def test_lsspa_chain_lifts_cholesky(rng):
    p, m = 5, 12
    A = rng.normal(size=(30, p))
    factor = np.linalg.qr(A, mode="r")
    target = rng.normal(size=p)
    test_factor, test_target = rng.normal(size=(m, p)), rng.normal(size=m)
    gram, cross = factor.T @ factor, factor.T @ target
    orders = _orders(rng, 7, p)
    got_status, expected_status = np.full(7, -1), np.full(7, -1)
    got = CUDA.lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor, test_target,
                                          0.5, np.zeros((7, p)), got_status)
    expected = NUMPY.lsspa_chain_lifts_cholesky(orders, gram, cross, test_factor,
                                                test_target, 0.5, np.zeros((7, p)),
                                                expected_status)
    np.testing.assert_array_equal(got_status, expected_status)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    # a singular Gram matrix is flagged, not answered
    singular = gram.copy()
    singular[:, 0] = singular[0, :] = 0.0
    CUDA.lsspa_chain_lifts_cholesky(orders[:2], singular, cross, test_factor, test_target,
                                    0.5, np.zeros((2, p)), got_status[:2])
    assert np.all(got_status[:2] == 1)


def test_category_set_elements(rng):
    # categorical splits held as one set element, read the same as the NumPy twin
    from tree_cases import categorical_classifier

    from skshapley.tree._api import interventional_shap

    rows, ensemble = categorical_classifier(rng)
    rows = rows[:6]
    arrays = PathArrays(ensemble.path_ptr, ensemble.feature, ensemble.lower, ensemble.upper,
                        ensemble.missing_branch, ensemble.missing_mode, ensemble.zero_fraction,
                        ensemble.out_ptr, ensemble.out_index, ensemble.out_value)
    shape = (len(rows), ensemble.n_outputs, 4, 4)
    np.testing.assert_allclose(CUDA.tree_path_interactions(rows, arrays, np.zeros(shape)),
                               NUMPY.tree_path_interactions(rows, arrays, np.zeros(shape)),
                               rtol=1e-12, atol=1e-12)
    expected, base = interventional_shap(ensemble, rows, rows[::-1], NUMPY)
    got, got_base = interventional_shap(ensemble, rows, rows[::-1], CUDA)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_base, base, rtol=1e-12)


def test_interventional_tree_shap(rng):
    from sklearn.ensemble import RandomForestRegressor

    from skshapley.tree import tree_shap

    X = rng.normal(size=(60, 5))
    X[::7, 2] = np.nan  # missing values follow the model's routing
    y = X[:, 0] * 2 + np.nan_to_num(X[:, 2]) - X[:, 3] ** 2
    model = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    rows, background = X[:4], X[10:22]
    expected = tree_shap(model, rows, background=background, backend="numpy")
    got = tree_shap(model, rows, background=background, backend="numba_cuda")
    np.testing.assert_allclose(got.values, expected.values, rtol=1e-12, atol=1e-12)
    # values are (rows, features, outputs): efficiency against the forest's prediction
    np.testing.assert_allclose(got.values.sum(axis=1)[:, 0] + got.base_values[:, 0],
                               model.predict(rows), rtol=1e-10)


def test_path_dependent_interactions(rng):
    # the kernel itself (tree_shap would also run the warp kernel, which needs shuffles)
    from sklearn.ensemble import HistGradientBoostingRegressor

    from skshapley.backends.tree._numpy import tree_path_shap
    from skshapley.tree import read_model

    X = rng.normal(size=(80, 4))
    X[::9, 1] = np.nan
    y = X[:, 0] * np.nan_to_num(X[:, 1]) + X[:, 2]
    model = HistGradientBoostingRegressor(max_iter=3, max_depth=3, random_state=0).fit(X, y)
    ensemble = read_model(model)
    arrays = PathArrays(ensemble.path_ptr, ensemble.feature, ensemble.lower, ensemble.upper,
                        ensemble.missing_branch, ensemble.missing_mode, ensemble.zero_fraction,
                        ensemble.out_ptr, ensemble.out_index, ensemble.out_value)
    rows = X[:3]
    shape = (3, ensemble.n_outputs, 4, 4)
    expected = NUMPY.tree_path_interactions(rows, arrays, np.zeros(shape))
    got = CUDA.tree_path_interactions(rows, arrays, np.zeros(shape))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # rows of the interaction matrix sum to the SHAP values
    values = tree_path_shap(rows, arrays, np.zeros((3, ensemble.n_outputs, 4)))
    np.testing.assert_allclose(got.sum(axis=-1), values, atol=1e-12)


def test_lsspa_subset_gains(rng):
    p, m = 4, 9
    factor = np.triu(rng.normal(size=(p, p))) + 3 * np.eye(p)  # well conditioned
    target, test_factor, test_target = rng.normal(size=p), rng.normal(size=(m, p)), \
        rng.normal(size=m)
    expected = NUMPY.lsspa_subset_gains(factor, target, test_factor, test_target,
                                        np.empty(2**p))
    got = CUDA.lsspa_subset_gains(factor, target, test_factor, test_target, np.empty(2**p))
    # normal equations: round-off ~ cond(R_S)^2 eps, a few units of 1e-14 here
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    # a dependent column: its subsets are flagged and solved on the host like the twin
    dependent = factor.copy()
    dependent[:, 3] = dependent[:, 0]
    expected = NUMPY.lsspa_subset_gains(dependent, target, test_factor, test_target,
                                        np.empty(2**p))
    got = CUDA.lsspa_subset_gains(dependent, target, test_factor, test_target,
                                  np.empty(2**p))
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10)


def test_lsspa_chain_lifts_qr(rng):
    p, m = 5, 11
    factor = np.linalg.qr(rng.normal(size=(30, p)), mode="r")
    target, test_factor, test_target = rng.normal(size=p), rng.normal(size=(m, p)), \
        rng.normal(size=m)
    orders = _orders(rng, 6, p)
    got = CUDA.lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target, 0.5,
                                    np.zeros((6, p)))
    expected = NUMPY.lsspa_chain_lifts_qr(orders, factor, target, test_factor, test_target,
                                          0.5, np.zeros((6, p)))
    # Householder on both sides (row signs may differ; each lift does not)
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-13)
    # efficiency: every chain's lifts sum to the full model's scaled test gain
    np.testing.assert_allclose(got.sum(axis=1), expected.sum(axis=1)[0], rtol=1e-12)


@pytest.mark.parametrize("laplace", [False, True])
def test_rkhs_subset_embeddings(rng, laplace):
    training, background = rng.normal(size=(6, 3)), rng.normal(size=(5, 3))
    scales = np.array([0.7, 1.0, 1.8])
    got = CUDA.rkhs_subset_embeddings(training, background, scales, laplace, np.empty((8, 6)))
    expected = NUMPY.rkhs_subset_embeddings(training, background, scales, laplace,
                                            np.empty((8, 6)))
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-15)
