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
