"""The CuPy backend's TreeSHAP wrappers and their one-thread-per-(row, path) CUDA C++
kernels, run on the CPU by ``cuda_cpp_emulator`` (a stand-in ``cupy`` module), against the
NumPy twins (the model-agnostic kernels run in ``test_parity.py`` as "cupy_emulated").

The argument checks of the emulator also pin the ABI: every array a wrapper passes has
the dtype its kernel parameter reads."""

import numpy as np
import pytest
from cuda_cpp_emulator import compiler_available, cupy_sources, fake_cupy, use_stand_in

from skshapley.backends.tree import LayoutCache, PathArrays, _cupy
from skshapley.backends.tree import _numpy as NUMPY
from skshapley.tree import read_model
from skshapley.tree._api import interventional_shap, path_dependent_interactions

pytestmark = pytest.mark.skipif(not compiler_available(), reason="no C++ compiler")


@pytest.fixture(scope="module")
def stand_in():
    return fake_cupy(cupy_sources())


@pytest.fixture
def emulated(monkeypatch, stand_in):
    return use_stand_in(monkeypatch, stand_in)


def _classifier(rng):
    from sklearn.ensemble import HistGradientBoostingClassifier

    X = rng.normal(size=(200, 5))
    X[::9, 1] = np.nan  # missing values follow the model's routing
    y = (X[:, 0] > 0).astype(int) + (np.nan_to_num(X[:, 1]) * X[:, 2] > 0.3)
    model = HistGradientBoostingClassifier(max_iter=4, max_depth=4, random_state=0)
    return X, read_model(model.fit(X, y))  # three classes: three outputs


def test_interactions_kernel(emulated, rng):
    X, ensemble = _classifier(rng)
    rows = X[:7]
    expected = path_dependent_interactions(ensemble, rows, NUMPY)
    got = path_dependent_interactions(ensemble, rows, emulated)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)
    assert np.abs(expected).max() > 0.01  # not a trivial comparison
    # symmetric matrices (each pair is added in both orders)
    np.testing.assert_allclose(got, np.swapaxes(got, -1, -2), atol=1e-13)


@pytest.mark.parametrize("packing", ["bfd", "none"])
def test_warp_kernel(emulated, rng, packing, monkeypatch):
    # GPUTreeShap's lane program with real shuffles: each warp's 32 lanes are host
    # threads meeting at every shuffle of their group's mask
    from skshapley.tree._api import path_dependent_shap

    X, ensemble = _classifier(rng)
    rows = ensemble.prepare(X[:9])
    expected, _ = path_dependent_shap(ensemble, rows, NUMPY)
    # the tree API's cache for this backend (a namespace without a name), packing as asked
    monkeypatch.setattr("skshapley.tree._cache._LAYOUTS", {None: LayoutCache(packing=packing)})
    got, _ = path_dependent_shap(ensemble, rows, emulated)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)
    assert np.abs(expected).max() > 0.01


def test_long_path_kernel_on_every_path(emulated, rng):
    # the wrapper sends only paths of more than 31 features to this kernel; its quadrature
    # holds for any length, so run it on all paths of a model against the twin
    X, ensemble = _classifier(rng)
    rows = np.ascontiguousarray(X[:5])
    ir = PathArrays(ensemble.path_ptr, ensemble.feature, ensemble.lower, ensemble.upper,
                    ensemble.missing_branch, ensemble.missing_mode, ensemble.zero_fraction,
                    ensemble.out_ptr, ensemble.out_index, ensemble.out_value)
    expected = NUMPY.tree_path_shap(rows, ir, np.zeros((5, 3, 5)))
    device = LayoutCache().get(np, ir)
    paths = np.arange(ensemble.n_paths, dtype=np.int64)
    got = np.zeros((5, 3, 5))
    _cupy._module().get_function("tree_shap_long")(
        (-(-5 * len(paths) // 256),), (256,),
        (rows, np.int64(5), np.int32(5), paths, np.int64(len(paths)), device["path_ptr"],
         device["ir_feature"], device["ir_lower"], device["ir_upper"],
         device["ir_zero_fraction"], device["ir_missing_branch"], device["ir_missing_mode"],
         device["out_ptr"], device["out_index"], device["out_value"], np.int32(3),
         device["nodes"], device["weights"], got))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)
    assert np.abs(expected).max() > 0.01


def test_interventional_kernel(emulated, rng):
    from sklearn.ensemble import RandomForestRegressor

    X = rng.normal(size=(120, 6))
    X[::7, 2] = np.nan
    y = X[:, 0] * 2 + np.nan_to_num(X[:, 2]) - X[:, 3] ** 2
    model = RandomForestRegressor(n_estimators=4, max_depth=5, random_state=0).fit(X, y)
    ensemble = read_model(model)
    rows, background = X[:6], X[40:75]
    expected, base = interventional_shap(ensemble, rows, background, NUMPY)
    got, got_base = interventional_shap(ensemble, rows, background, emulated)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # efficiency against the forest's prediction
    np.testing.assert_allclose(got.sum(axis=2)[:, 0] + got_base[:, 0], model.predict(rows),
                               rtol=1e-10)


def test_category_set_elements(emulated, rng):
    # categorical splits held as one set element: every kernel reads x's atom the same
    from tree_cases import categorical_classifier

    from skshapley.tree._api import path_dependent_shap

    rows, ensemble = categorical_classifier(rng)
    expected, _ = path_dependent_shap(ensemble, rows, NUMPY)
    got, _ = path_dependent_shap(ensemble, rows, emulated)  # the warp kernel
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(expected.sum(axis=2) + ensemble.expected_value,
                               ensemble.predict_raw(rows), atol=1e-12)
    np.testing.assert_allclose(path_dependent_interactions(ensemble, rows, emulated),
                               path_dependent_interactions(ensemble, rows, NUMPY),
                               rtol=1e-12, atol=1e-13)
    expected, base = interventional_shap(ensemble, rows, rows[::-1], NUMPY)
    got, got_base = interventional_shap(ensemble, rows, rows[::-1], emulated)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_base, base, rtol=1e-12)


def test_emulator_rejects_a_wrong_dtype(emulated, stand_in):
    # the check the two tests above rely on: int64 where the kernel reads int32
    kernel = stand_in.RawModule(code="").get_function("tree_interactions")
    args = [np.zeros(1), np.int32(1)] + [None] * 16  # n_rows is a long long
    with pytest.raises(AssertionError, match="int32 passed for long long"):
        kernel((1,), (1,), args)
