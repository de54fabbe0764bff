"""Thread-local configuration, after ``sklearn/_config.py``.

Two keys: ``backend`` (which kernel namespace the hot loops use) and
``working_memory`` (MiB bound for every batch the library assembles).
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from numbers import Real

_BACKENDS = ("auto", "numpy", "numba", "numba_cuda", "cupy")
# Names registered later (skshapley.backends.register_backend tells this module through
# _accept_backend_name); nothing here imports the backends.
_REGISTERED_BACKENDS: set = set()
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


def _accept_backend_name(name: str) -> None:
    """Let ``set_config`` accept the backend ``name`` (called by the backend registry)."""
    _REGISTERED_BACKENDS.add(name)


def _check_backend_name(backend) -> None:
    # Names registered later with register_backend are accepted too.
    if backend not in _BACKENDS and backend not in _REGISTERED_BACKENDS:
        accepted = sorted(set(_BACKENDS) | _REGISTERED_BACKENDS)
        raise ValueError(
            f"The 'backend' parameter of set_config must be one of {accepted}; got {backend!r}."
        )


def _check_working_memory(working_memory) -> None:
    # inf passes "> 0" but makes chunk_rows compute inf // bytes = nan, so every batch
    # fails later; the byte count (MiB * 2**20) must be finite too, or it overflows to inf.
    if (
        isinstance(working_memory, bool)
        or not isinstance(working_memory, Real)
        or not working_memory > 0
        or not math.isfinite(float(working_memory) * 2**20)
    ):
        raise ValueError(
            "The 'working_memory' parameter of set_config must be a finite positive number "
            f"of MiB; got {working_memory!r}."
        )


def set_config(backend: str | None = None, working_memory: float | None = None) -> None:
    """Set the configuration of the current thread.

    Parameters
    ----------
    backend : {"auto", "numpy", "numba", "numba_cuda", "cupy"} or a registered name
        Kernel backend. ``"auto"`` picks the fastest one available.
    working_memory : float, default=1024
        Upper bound, in MiB, on the size of every batch the library builds
        (masked model inputs, kernel matrices). Must be finite and positive.

    Raises
    ------
    ValueError
        If either value is invalid. All values are checked before any is set,
        so a rejected call leaves the configuration unchanged.

    Examples
    --------
    >>> import skshapley
    >>> skshapley.set_config(working_memory=256)
    >>> skshapley.get_config()["working_memory"]
    256
    >>> skshapley.set_config(working_memory=1024)
    """
    # Validate every value before setting any, so that a rejected call changes nothing.
    if backend is not None:
        _check_backend_name(backend)
    if working_memory is not None:
        _check_working_memory(working_memory)
    config = _get_threadlocal_config()
    if backend is not None:
        config["backend"] = backend
    if working_memory is not None:
        config["working_memory"] = working_memory


@contextmanager
def config_context(*, backend: str | None = None, working_memory: float | None = None):
    """Temporarily change the configuration inside a ``with`` block.

    Parameters
    ----------
    backend, working_memory
        As in :func:`set_config`; ``None`` keeps the current value. If a value is
        rejected, the configuration is left as it was before the call.

    Examples
    --------
    >>> import skshapley
    >>> with skshapley.config_context(backend="numpy"):
    ...     skshapley.get_config()["backend"]
    'numpy'
    """
    old_config = get_config()
    try:
        set_config(backend=backend, working_memory=working_memory)
        yield
    finally:
        # Restore directly rather than through set_config: the restore must not fail,
        # and it must also run when set_config itself rejected the new values.
        config = _get_threadlocal_config()
        config.clear()
        config.update(old_config)
