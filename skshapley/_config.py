"""Thread-local configuration, after ``sklearn/_config.py``.

Two keys: ``backend`` (which kernel namespace the hot loops use) and
``working_memory`` (MiB bound for every batch the library assembles).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from numbers import Real

_BACKENDS = ("auto", "numpy", "numba", "numba_cuda", "cupy")
_global_config = {"backend": "auto", "working_memory": 1024}
_threadlocal = threading.local()


def _get_threadlocal_config() -> dict:
    if not hasattr(_threadlocal, "global_config"):
        _threadlocal.global_config = _global_config.copy()
    return _threadlocal.global_config


def get_config() -> dict:
    """Return a copy of the current configuration.

    Returns
    -------
    config : dict
        Keys ``backend`` and ``working_memory``.

    Examples
    --------
    >>> import skshapley
    >>> sorted(skshapley.get_config())
    ['backend', 'working_memory']
    """
    return _get_threadlocal_config().copy()


def _check_backend_name(backend) -> None:
    # Names registered later with register_backend are accepted too.
    from skshapley.backends._registry import _REGISTRY

    if backend not in _BACKENDS and backend not in _REGISTRY:
        accepted = sorted(set(_BACKENDS) | set(_REGISTRY))
        raise ValueError(
            f"The 'backend' parameter of set_config must be one of {accepted}; got {backend!r}."
        )


def set_config(backend: str | None = None, working_memory: float | None = None) -> None:
    """Set the configuration of the current thread.

    Parameters
    ----------
    backend : {"auto", "numpy", "numba", "numba_cuda", "cupy"} or a registered name
        Kernel backend. ``"auto"`` picks the fastest one available.
    working_memory : float, default=1024
        Upper bound, in MiB, on the size of every batch the library builds
        (masked model inputs, kernel matrices).

    Examples
    --------
    >>> import skshapley
    >>> skshapley.set_config(working_memory=256)
    >>> skshapley.get_config()["working_memory"]
    256
    >>> skshapley.set_config(working_memory=1024)
    """
    config = _get_threadlocal_config()
    if backend is not None:
        _check_backend_name(backend)
        config["backend"] = backend
    if working_memory is not None:
        if (
            isinstance(working_memory, bool)
            or not isinstance(working_memory, Real)
            or not working_memory > 0
        ):
            raise ValueError(
                "The 'working_memory' parameter of set_config must be a positive number "
                f"of MiB; got {working_memory!r}."
            )
        config["working_memory"] = working_memory


@contextmanager
def config_context(*, backend: str | None = None, working_memory: float | None = None):
    """Temporarily change the configuration inside a ``with`` block.

    Parameters
    ----------
    backend, working_memory
        As in :func:`set_config`; ``None`` keeps the current value.

    Examples
    --------
    >>> import skshapley
    >>> with skshapley.config_context(backend="numpy"):
    ...     skshapley.get_config()["backend"]
    'numpy'
    """
    old_config = get_config()
    set_config(backend=backend, working_memory=working_memory)
    try:
        yield
    finally:
        set_config(**old_config)
