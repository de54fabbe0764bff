"""The explainer's device path (issue 11, §8.8): the model is called on device arrays,
masked batches are assembled and averaged where the background lives, and the values equal
the host path's. array_api_strict stands in for a GPU array library: a model that rejects
anything else proves there is no host round-trip per model call."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from skshapley import ShapleyExplainer
from skshapley.games import MarginalGame
from skshapley.utils._device import resolve_device, to_host

xp = pytest.importorskip("array_api_strict")


def _strict(X):
    assert type(X).__module__.startswith("array_api_strict"), type(X)
    return X


class DeviceOnlyRegressor(RegressorMixin, BaseEstimator):
    """f(X) = X w + sin(X_0 X_1): non-additive, accepts array_api_strict input only."""

    def fit(self, X, y=None):
        self.coef_ = np.linspace(-1.0, 2.0, np.shape(X)[1])
        return self

    def predict(self, X):
        if isinstance(X, np.ndarray):  # the host twin, for comparison
            return X @ self.coef_ + np.sin(X[:, 0] * X[:, 1])
        X = _strict(X)
        return X @ xp.asarray(self.coef_) + xp.sin(X[:, 0] * X[:, 1])


class DeviceOnlyClassifier(ClassifierMixin, BaseEstimator):
    """Three-class softmax of a fixed linear score; probabilities as device arrays."""

    def fit(self, X, y=None):
        d = np.shape(X)[1]
        self.classes_ = np.arange(3)
        self.weights_ = np.random.default_rng(0).normal(size=(d, 3))
        return self

    def predict_proba(self, X):
        lib = np if isinstance(X, np.ndarray) else xp
        scores = _strict(X) @ xp.asarray(self.weights_) if lib is xp else X @ self.weights_
        scores = lib.exp(scores - lib.max(scores, axis=1, keepdims=True))
        return scores / lib.sum(scores, axis=1, keepdims=True)


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    return rng.normal(size=(60, 6))


@pytest.mark.parametrize("method,max_evals", [("exact", 64), ("permutation", 42),
                                              ("auto", 40)])
def test_device_values_equal_host_values(data, method, max_evals):
    model = DeviceOnlyRegressor().fit(data)
    common = dict(prefit=True, method=method, max_evals=max_evals, background=20,
                  random_state=0)
    host = ShapleyExplainer(model, **common).fit(data).explain(data[:5])
    device = ShapleyExplainer(model, device="array_api_strict", **common).fit(data)
    on_device = device.explain(data[:5])
    np.testing.assert_allclose(on_device.values, host.values, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(on_device.base_values, host.base_values, rtol=1e-12)
    # efficiency against the model's own output
    total = on_device.base_values + on_device.values.sum(axis=1)
    np.testing.assert_allclose(total, model.predict(data[:5]), rtol=1e-10, atol=1e-10)


def test_device_log_odds_of_a_classifier_stay_on_the_device(data):
    model = DeviceOnlyClassifier().fit(data)
    common = dict(prefit=True, max_evals=64, background=15, random_state=0)
    host = ShapleyExplainer(model, **common).fit(data).transform(data[:3])
    device = ShapleyExplainer(model, device="array_api_strict", **common).fit(data)
    np.testing.assert_allclose(device.transform(data[:3]), host, rtol=1e-11, atol=1e-12)


def test_device_path_with_joblib_workers(data):
    model = DeviceOnlyRegressor().fit(data)
    common = dict(prefit=True, max_evals=64, background=10, random_state=0,
                  device="array_api_strict")
    one = ShapleyExplainer(model, n_jobs=1, **common).fit(data).transform(data[:6])
    two = ShapleyExplainer(model, n_jobs=2, **common).fit(data).transform(data[:6])
    np.testing.assert_array_equal(one, two)


def test_marginal_game_on_device_equals_host():
    w = np.array([1.0, -2.0, 0.5])
    background = np.random.default_rng(0).normal(size=(9, 3))
    coalitions = np.array([[0, 0, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1]], dtype=bool)
    rows = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    on_device = MarginalGame(lambda X: _strict(X) @ xp.asarray(w), rows, background,
                             device="array_api_strict", working_memory=1e-4)
    on_host = MarginalGame(lambda X: X @ w, rows, background)
    np.testing.assert_allclose(on_device.values(coalitions), on_host.values(coalitions),
                               rtol=1e-13)
    assert on_device.n_evaluations == 4


def test_bad_device_values():
    with pytest.raises(ValueError, match="'device' parameter names a module"):
        resolve_device("no_such_array_library")
    with pytest.raises(ValueError, match="not an array namespace"):
        resolve_device("json")
    with pytest.raises(ValueError, match="'device' parameter must be"):
        resolve_device(3)
    try:
        import cupy

        has_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        has_gpu = False
    if not has_gpu:
        with pytest.raises(ValueError, match="device='cuda' needs CuPy"):
            resolve_device("cuda")
    np.testing.assert_array_equal(to_host(xp.asarray([1.0, 2.0])), [1.0, 2.0])


def test_device_with_a_dataframe_model_is_refused(data):
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import LinearRegression

    frame = pd.DataFrame(data, columns=[f"x{j}" for j in range(data.shape[1])])
    model = LinearRegression().fit(frame, data[:, 0])
    explainer = ShapleyExplainer(model, prefit=True, device="array_api_strict")
    with pytest.raises(ValueError, match="fitted on a DataFrame"):
        explainer.fit(frame)
    assert not hasattr(explainer, "background_")


@pytest.mark.gpu
def test_xgboost_cuda_model_on_the_device_path(data):
    cupy = pytest.importorskip("cupy")
    xgboost = pytest.importorskip("xgboost")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception:
        pytest.skip("no CUDA device")
    y = data[:, 0] * data[:, 1] + data[:, 2]
    model = xgboost.XGBRegressor(n_estimators=20, max_depth=3, device="cuda").fit(data, y)
    common = dict(prefit=True, method="exact", max_evals=64, background=20, random_state=0)
    host = ShapleyExplainer(model, **common).fit(data).transform(data[:4])
    device = ShapleyExplainer(model, device="cuda", **common).fit(data).transform(data[:4])
    np.testing.assert_allclose(device, host, rtol=1e-5, atol=1e-5)
