import inspect
import types

import pytest

from skshapley import config_context
from skshapley.backends import available_backends, get_backend, register_backend
from skshapley.exceptions import BackendUnavailableError


def test_gpu_slots_report_why_they_are_unavailable():
    reasons = available_backends(verbose=True)
    assert reasons["numpy"] is None
    for name in ("numba_cuda", "cupy"):
        assert name in reasons
        if name not in available_backends():
            assert isinstance(reasons[name], str) and reasons[name]


def test_named_unavailable_backend_raises_naming_the_extra():
    if "cupy" in available_backends():
        pytest.skip("cupy backend is available here")
    with pytest.raises(BackendUnavailableError, match="cupy"):
        get_backend("cupy")


def test_auto_prefers_numba_and_config_selects(monkeypatch):
    from skshapley.backends import _registry

    # the first of CPU_ORDER that can run here: numba, else NumPy
    assert _registry.CPU_ORDER == ("numba", "numpy")
    expected = "numba" if "numba" in available_backends() else "numpy"
    assert get_backend("auto").name == expected
    without_numba = _registry.Backend("numba", _registry._REGISTRY["numba"].load,
                                      lambda: "numba is not installed.")
    monkeypatch.setitem(_registry._REGISTRY, "numba", without_numba)
    assert get_backend("auto").name == "numpy"
    assert _registry.choose_backend("auto", needed=("tree_path_shap",)) == "numpy"
    with config_context(backend="numpy"):
        assert get_backend().name == "numpy"


def test_unknown_backend():
    with pytest.raises(ValueError, match="Unknown backend 'nope'"):
        get_backend("nope")


def test_register_backend_checks_kernels():
    with pytest.raises(ValueError, match="missing the kernels"):
        register_backend("broken", types.SimpleNamespace())
    numpy_kernels = get_backend("numpy")
    register_backend("copy_of_numpy", numpy_kernels)
    assert "copy_of_numpy" in available_backends()
    with config_context(backend="copy_of_numpy"):
        assert get_backend().name == "copy_of_numpy"


@pytest.mark.parametrize("module", ["_cupy", "_numba_cuda"])
def test_gpu_backends_fill_every_kernel_slot(module):
    # importing a GPU backend module needs no GPU; each kernel is a real implementation
    from skshapley.backends import KERNEL_NAMES
    from skshapley.backends._registry import compose_kernels

    backend = compose_kernels(module)
    reference = compose_kernels("_numpy")
    for name in KERNEL_NAMES:
        kernel = getattr(backend, name)
        assert not getattr(kernel, "is_missing", False), name
        # it takes the NumPy twin's call: every argument the twin needs, by position
        needed = [p for p in inspect.signature(getattr(reference, name)).parameters.values()
                  if p.default is p.empty]
        inspect.signature(kernel).bind(*needed)
