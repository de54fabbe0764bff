import threading

import pytest

import skshapley
from skshapley import config_context, get_config, set_config


def test_config_context_restores_previous_values():
    before = get_config()
    with config_context(backend="numpy", working_memory=8):
        assert get_config() == {"backend": "numpy", "working_memory": 8}
    assert get_config() == before


def test_config_context_restores_on_error():
    before = get_config()
    with pytest.raises(RuntimeError), config_context(backend="numpy"):
        raise RuntimeError("boom")
    assert get_config() == before


def test_config_is_thread_local():
    seen = {}

    def worker():
        seen["backend"] = get_config()["backend"]

    with config_context(backend="numpy"):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert get_config()["backend"] == "numpy"
    assert seen["backend"] == "auto"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"backend": "tpu"}, "'backend' parameter of set_config"),
        ({"working_memory": 0}, "'working_memory' parameter"),
        ({"working_memory": "big"}, "'working_memory' parameter"),
    ],
)
def test_set_config_rejects_bad_values(kwargs, match):
    before = get_config()
    with pytest.raises(ValueError, match=match):
        set_config(**kwargs)
    assert get_config() == before


def test_public_names():
    assert {"ShapleyExplainer", "Explanation", "config_context"} <= set(skshapley.__all__)


def test_failed_config_context_changes_nothing():
    # backend is valid and working_memory is not: the backend must not stay set
    before = get_config()
    with pytest.raises(ValueError, match="'working_memory' parameter"):
        with config_context(backend="numpy", working_memory=-5):
            pass  # pragma: no cover - never entered
    assert get_config() == before


def test_failed_set_config_changes_nothing():
    before = get_config()
    with pytest.raises(ValueError, match="'working_memory' parameter"):
        set_config(backend="numpy", working_memory=-5)
    assert get_config() == before


@pytest.mark.parametrize("working_memory", [float("inf"), float("nan"), 1e303])
def test_set_config_rejects_non_finite_working_memory(working_memory):
    # inf (and MiB values whose byte count overflows to inf) made every batch size NaN
    before = get_config()
    with pytest.raises(ValueError, match=r"'working_memory' parameter .* finite .* got "
                       + repr(working_memory).replace("+", r"\+")):
        set_config(working_memory=working_memory)
    with pytest.raises(ValueError, match="'working_memory' parameter"):
        with config_context(working_memory=working_memory):
            pass  # pragma: no cover - never entered
    assert get_config() == before


def test_large_finite_working_memory_is_kept():
    with config_context(working_memory=1e300):
        assert get_config()["working_memory"] == 1e300
