"""The backend registry: one frozen record per backend, kernels loaded lazily, and the one
policy of ``backend="auto"`` (:func:`choose_backend`).

Kernels live by what they compute, in the domains of :data:`DOMAINS`
(``skshapley.backends.<domain>``), each with one module per backend: ``_numpy`` (the
reference), ``_numba``, ``_numba_cuda`` and ``_cupy``. A backend's namespace gathers its
module's kernels from every domain (:func:`compose_kernels`). Callers use
:func:`get_backend` and never import numba, numba.cuda or cupy themselves. A backend that
cannot run reports why and never breaks ``import skshapley``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType, SimpleNamespace

from skshapley._config import _accept_backend_name, get_config
from skshapley.backends import lsspa, masking, permutation, rkhs, sketch, tree
from skshapley.exceptions import BackendUnavailableError

# Each domain package lists its kernels (KERNELS); every backend provides all of them.
DOMAINS = {"masking": masking, "permutation": permutation, "tree": tree, "sketch": sketch,
           "lsspa": lsspa, "rkhs": rkhs}
KERNEL_NAMES = tuple(name for package in DOMAINS.values() for name in package.KERNELS)
DOMAIN_OF = {name: domain for domain, package in DOMAINS.items() for name in package.KERNELS}


def compose_kernels(module):
    """The kernels of every domain's ``module`` in one namespace.

    Parameters
    ----------
    module : {"_numpy", "_numba", "_numba_cuda", "_cupy"}
        The module of a backend in each domain package. Importing the GPU modules needs
        no GPU (nothing is compiled or copied before a kernel runs).

    Returns
    -------
    kernels : SimpleNamespace
        An attribute per name of ``KERNEL_NAMES``.
    """
    kernels = {}
    for package in DOMAINS.values():
        source = importlib.import_module(f"{package.__name__}.{module}")
        kernels.update((name, getattr(source, name)) for name in package.KERNELS)
    return SimpleNamespace(**kernels)


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
    _accept_backend_name(backend.name)  # config_context(backend=...) accepts it from now on


_add(Backend("numpy", lambda: compose_kernels("_numpy"), _always_available))
_add(Backend("numba", lambda: compose_kernels("_numba"), _numba_reason, extra=None))
# Both GPU backends fill every kernel slot: TreeSHAP (issue 10) and the model-agnostic
# kernels (issue 11; numba.cuda kernels, and for CuPy whole-array operations, each
# domain's array twins). Background patterns are built on the CPU by both.
_add(Backend("numba_cuda", lambda: compose_kernels("_numba_cuda"), _numba_cuda_reason,
             extra="gpu"))
_add(Backend("cupy", lambda: compose_kernels("_cupy"), _cupy_reason, extra="gpu"))

# -- backend="auto" ---------------------------------------------------------------------
# The one policy: a call runs on the CPU, on the first of CPU_ORDER that can run here,
# unless every kernel it needs is of a domain with a measured GPU threshold
# (GPU_MIN_WORK_BY_DOMAIN) and the call's work reaches it; then on the first GPU backend of
# GPU_ORDER that has those kernels. A backend named explicitly is used as it is, and one
# that is missing raises instead of falling back. The model-agnostic kernels are called
# with host arrays, and where a GPU pays for the transfer has not been measured, so a GPU
# backend runs them only when asked for by name.
CPU_ORDER = ("numba", "numpy")
GPU_ORDER = ("cupy", "numba_cuda")
# TreeSHAP moves to a GPU when the work is large enough to repay the copy and the first
# call's compilation. Measured on the lent H100 against our numba kernel on its 16 cores
# (benchmarks/results/tree_gpu.md, 10,000 rows, 2026-11-27): at 1.6e7 row x path elements
# the CPU is 2.3x faster than CuPy; at 9.6e8 CuPy is 6.3x faster than the CPU. The speed
# ratio crosses 1 near 6e7, and a GPU's first call (NVRTC or numba JIT) costs about a
# second more, so the threshold is 1e8.
GPU_MIN_WORK = 1e8  # rows x the ensemble's total path length
GPU_MAX_PATH = 64  # the GPU tree kernels' longest supported path
GPU_MIN_WORK_BY_DOMAIN = {"tree": GPU_MIN_WORK}


def has_kernel(namespace, name):
    """Whether ``namespace`` has kernel ``name``: a backend given to
    ``register_backend`` may fill a slot it lacks with a stub marked ``is_missing =
    True``, which policies then skip without calling it."""
    kernel = getattr(namespace, name, None)
    return kernel is not None and not getattr(kernel, "is_missing", False)


def choose_backend(requested, work=0.0, max_path=0, needed=(), available=None):
    """The backend a call runs on, under the one policy of ``backend="auto"``.

    Parameters
    ----------
    requested : str or None
        The call's ``backend`` argument; None uses the configured one.
    work : float, default=0.0
        The call's work, in the unit of its domain's threshold (TreeSHAP: rows times the
        ensemble's total path length).
    max_path : int, default=0
        Longest path (distinct features) of a TreeSHAP call.
    needed : tuple of str, default=()
        Kernels the call uses; their domains (``DOMAIN_OF``) decide whether a GPU may
        run it.
    available : dict, optional
        Name -> kernel namespace of the GPU backends to consider. None: the registered
        GPU backends that can run here, loaded only when the work reaches the threshold.

    Returns
    -------
    name : str
        ``requested`` unless it is "auto"; for "auto", the concrete backend it picks: the
        first GPU backend of ``GPU_ORDER`` that has every needed kernel when every needed
        kernel's domain has a GPU threshold that ``work`` reaches (and paths are at most
        ``GPU_MAX_PATH``), else the first of ``CPU_ORDER`` that can run here.

    Examples
    --------
    >>> from skshapley.backends._registry import CPU_ORDER, choose_backend
    >>> choose_backend("numpy", work=1e12, needed=("tree_path_shap",))
    'numpy'
    >>> choose_backend("auto", work=10.0, needed=("tree_path_shap",)) in CPU_ORDER
    True
    """
    if requested is None:
        requested = get_config()["backend"]
    if requested != "auto":
        return requested
    gpu = _gpu_backend(work, max_path, needed, available) if needed else None
    return gpu if gpu is not None else _cpu_backend()


def _cpu_backend():
    """The first of ``CPU_ORDER`` that can run here (NumPy always can); one that has
    loaded already is taken without re-checking its imports."""
    return next(name for name in CPU_ORDER
                if _loaded(name) is not None or _REGISTRY[name].is_available())


def _gpu_backend(work, max_path, needed, available):
    """The first of ``GPU_ORDER`` with every kernel of ``needed``, when the GPU
    thresholds of their domains allow a GPU; else None (see :func:`choose_backend`)."""
    if max_path > GPU_MAX_PATH:
        return None
    thresholds = [GPU_MIN_WORK_BY_DOMAIN.get(DOMAIN_OF.get(name)) for name in needed]
    if None in thresholds or work < max(thresholds):
        return None
    if available is None:
        available = {name: get_backend(name) for name in GPU_ORDER
                     if name in _REGISTRY and _REGISTRY[name].is_available()}
    for name in GPU_ORDER:
        namespace = available.get(name)
        if namespace is not None and all(has_kernel(namespace, k) for k in needed):
            return name
    return None


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


def _loaded(name):
    """The kernel namespace of backend ``name`` if it has loaded (and was not registered
    anew since), else None. A backend that loaded once stays usable, so its imports are
    not checked again: that cost ~3 us a lookup, and a sketch's fit looks kernels up ~15
    times."""
    loaded = _LOADED.get(name)
    if loaded is not None and loaded[0] is _REGISTRY.get(name):
        return loaded[1]
    return None


def get_backend(name: str | None = None):
    """Return the kernel namespace of a backend.

    Parameters
    ----------
    name : str, optional
        Backend name; ``None`` uses the configured one (:func:`skshapley.get_config`),
        ``"auto"`` the first of ``CPU_ORDER`` that can run here (a call whose work may
        move to a GPU asks :func:`choose_backend` first).

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
        name = _cpu_backend()
    namespace = _loaded(name)
    if namespace is not None:
        return namespace
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
