"""The backend registry: one frozen record per backend, kernels loaded lazily.

Callers use :func:`get_backend` and never import numba, numba.cuda or cupy themselves.
A backend that cannot run reports why and never breaks
``import skshapley``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType, SimpleNamespace

from skshapley._config import get_config
from skshapley.backends import _numpy
from skshapley.exceptions import BackendUnavailableError

KERNEL_NAMES = _numpy.KERNELS


@dataclass(frozen=True)
class Backend:
    """A named namespace of kernels.

    Attributes
    ----------
    name : str
    load : callable
        Returns the kernel namespace (a module or object with every name of
        ``KERNEL_NAMES``). Called only when the backend is available.
    unavailable_reason : callable
        Returns ``None`` when the backend can run here, else a sentence saying why not.
    extra : str or None
        The pip extra that installs what the backend needs.
    """

    name: str
    load: Callable[[], object]
    unavailable_reason: Callable[[], str | None]
    extra: str | None = None

    def is_available(self) -> bool:
        return self.unavailable_reason() is None


def _always_available() -> None:
    return None


def _numba_reason() -> str | None:
    if importlib.util.find_spec("numba") is None:
        return "numba is not installed (pip install numba)."
    return None


def _cuda_device_reason() -> str | None:
    if importlib.util.find_spec("numba") is None:
        return "numba is not installed."
    try:
        from numba import cuda

        if not cuda.is_available():
            return "no CUDA device or driver was found."
    except Exception as err:  # numba.cuda raises several driver errors; report, never break
        return f"numba.cuda failed to initialise ({type(err).__name__}: {err})."
    return None


def _numba_cuda_reason() -> str | None:
    reason = _cuda_device_reason()
    if reason is not None:
        return reason
    try:
        # numba-cuda registers its NumPy overloads on first compile; releases that still
        # overload np.row_stack fail on NumPy >= 2.5 (seen on the lent H100 with
        # numba-cuda of 2026-11 and NumPy 2.5.2). Say so instead of failing mid-call.
        importlib.import_module("numba.cuda.np.arrayobj")
    except ModuleNotFoundError:
        pass  # older numba.cuda layouts have no such module
    except Exception as err:
        return (f"numba-cuda cannot compile kernels with this NumPy ({type(err).__name__}: "
                f"{err}); upgrade numba-cuda.")
    return None


def _cupy_reason() -> str | None:
    if importlib.util.find_spec("cupy") is None:
        return "cupy is not installed (pip install 'skshapley[gpu]')."
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy found no CUDA device."
    except Exception as err:  # CuPy raises driver/runtime errors of several types
        return f"CuPy failed to initialise ({type(err).__name__}: {err})."
    return None


_REGISTRY: dict[str, Backend] = {}


def _add(backend: Backend) -> None:
    _REGISTRY[backend.name] = backend


_add(Backend("numpy", lambda: _numpy, _always_available))
_add(
    Backend(
        "numba",
        lambda: importlib.import_module("skshapley.backends._numba"),
        _numba_reason,
        extra=None,
    )
)
# Both GPU backends fill every kernel slot: TreeSHAP (issue 10) and the model-agnostic
# kernels (issue 11; numba.cuda kernels, and for CuPy whole-array operations in
# _array_twins.py). Background patterns are built on the CPU by both.
_add(Backend("numba_cuda", lambda: importlib.import_module("skshapley.backends._numba_cuda"),
             _numba_cuda_reason, extra="gpu"))
_add(Backend("cupy", lambda: importlib.import_module("skshapley.backends._cupy"),
             _cupy_reason, extra="gpu"))

# "auto" tries these in order, and a named backend that is missing raises instead of
# falling back. The model-agnostic kernels are called with host arrays, and where a GPU
# pays for the transfer has not been measured, so a GPU backend runs them only when asked
# for by name; tree_shap has its own measured GPU threshold (skshapley.tree, GPU_MIN_WORK).
_AUTO_ORDER = ("numba", "numpy")


def available_backends(verbose: bool = False):
    """Names of the backends that can run here.

    Parameters
    ----------
    verbose : bool, default=False
        If True, return a dict mapping every registered name to ``None`` (available) or
        the reason it is not.

    Returns
    -------
    names : list of str, or dict

    Examples
    --------
    >>> from skshapley.backends import available_backends
    >>> "numpy" in available_backends()
    True
    """
    if verbose:
        return {name: backend.unavailable_reason() for name, backend in _REGISTRY.items()}
    return [name for name, backend in _REGISTRY.items() if backend.is_available()]


def register_backend(name: str, module: ModuleType | object, *, extra: str | None = None):
    """Register a namespace of kernels under ``name``.

    Parameters
    ----------
    name : str
        New backend name, usable in ``config_context(backend=name)``.
    module : module or object
        Must provide every kernel of the NumPy reference backend
        (``skshapley.backends.KERNEL_NAMES``) with the same signatures.
    extra : str, optional
        The pip extra that installs its dependencies, for error messages.

    Examples
    --------
    >>> from skshapley.backends import register_backend, get_backend, KERNEL_NAMES
    >>> numpy_kernels = get_backend("numpy")
    >>> register_backend("mine", numpy_kernels)
    >>> get_backend("mine").prefix_coalitions is numpy_kernels.prefix_coalitions
    True
    """
    if not isinstance(name, str) or not name or name == "auto":
        raise ValueError(f"The 'name' parameter of register_backend must be a non-empty "
                         f"string other than 'auto'; got {name!r}.")
    missing = [kernel for kernel in KERNEL_NAMES if not callable(getattr(module, kernel, None))]
    if missing:
        raise ValueError(
            f"Backend {name!r} is missing the kernels {missing}; a backend must provide "
            f"every one of {list(KERNEL_NAMES)}."
        )
    _add(Backend(name, lambda: module, _always_available, extra=extra))


_LOADED: dict[str, object] = {}


def get_backend(name: str | None = None):
    """Return the kernel namespace of a backend.

    Parameters
    ----------
    name : str, optional
        Backend name; ``None`` uses the configured one (:func:`skshapley.get_config`),
        ``"auto"`` the fastest available.

    Returns
    -------
    kernels : namespace
        Has an attribute per kernel name and ``name``.

    Raises
    ------
    BackendUnavailableError
        If a backend asked for by name cannot run here (never a silent fallback).

    Examples
    --------
    >>> from skshapley.backends import get_backend
    >>> get_backend("numpy").name
    'numpy'
    """
    if name is None:
        name = get_config()["backend"]
    if name == "auto":
        name = next(n for n in _AUTO_ORDER if _REGISTRY[n].is_available())
    if name not in _REGISTRY:
        raise ValueError(
            f"Unknown backend {name!r}; registered backends are {sorted(_REGISTRY)} "
            "(or 'auto')."
        )
    backend = _REGISTRY[name]
    reason = backend.unavailable_reason()
    if reason is not None:
        hint = (f" Install it with pip install 'skshapley[{backend.extra}]'."
                if backend.extra else "")
        raise BackendUnavailableError(f"Backend {name!r} is unavailable: {reason}{hint}")
    if name not in _LOADED or _LOADED[name][0] is not backend:
        module = backend.load()
        namespace = SimpleNamespace(name=name, **{k: getattr(module, k) for k in KERNEL_NAMES})
        _LOADED[name] = (backend, namespace)
    return _LOADED[name][1]
