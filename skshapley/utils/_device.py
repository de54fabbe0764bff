"""Where a model's inputs live: host NumPy arrays or a device array library.

A model that accepts device arrays (XGBoost with ``device="cuda"`` on CuPy input, a CuPy or
PyTorch predictor) can be explained without a host round-trip per model call: the masked
batch is assembled where the background lives, the model is called on it, the background
average is taken there, and only the small (coalitions, outputs) result comes back.

The namespace is named by a string (``"cuda"`` for CuPy, or an importable module name of
an array-API namespace such as ``"array_api_strict"``), so that it pickles into joblib
workers.
"""

from __future__ import annotations

import importlib

import numpy as np

_REQUIRED = ("asarray", "where", "reshape", "mean")


def resolve_device(device):
    """The array namespace module for ``device``, or None for host NumPy arrays.

    Parameters
    ----------
    device : None, "cpu", "cuda" or str
        None or "cpu": NumPy on the host. "cuda": CuPy on the current GPU. Any other
        string: the import name of an array-API namespace (e.g. ``"array_api_strict"``).

    Returns
    -------
    module or None

    Examples
    --------
    >>> resolve_device(None) is None
    True
    >>> resolve_device("array_api_strict").__name__
    'array_api_strict'
    """
    if device is None or device == "cpu":
        return None
    if not isinstance(device, str):
        raise ValueError(f"The 'device' parameter must be None, 'cpu', 'cuda' or the import "
                         f"name of an array-API namespace; got {device!r}.")
    if device == "cuda":
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise RuntimeError("no CUDA device")
        except Exception as error:  # ImportError, CUDA driver errors
            raise ValueError(f"device='cuda' needs CuPy and a CUDA device ({error}); install "
                             "the 'gpu' extra, or use device=None.") from None
        return cupy
    try:
        namespace = importlib.import_module(device)
    except ImportError:
        raise ValueError(f"The 'device' parameter names a module that cannot be imported: "
                         f"{device!r}.") from None
    missing = [name for name in _REQUIRED if not hasattr(namespace, name)]
    if missing:
        raise ValueError(f"device={device!r} is not an array namespace: it has no "
                         f"{', '.join(missing)}.")
    return namespace


def to_host(array):
    """A float64 NumPy copy of a NumPy, CuPy or array-API array.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> to_host(xp.asarray([1.0, 2.0]))
    array([1., 2.])
    """
    if isinstance(array, np.ndarray):
        return array.astype(np.float64, copy=False)
    if hasattr(array, "get") and type(array).__module__.startswith("cupy"):
        return np.asarray(array.get(), dtype=np.float64)
    try:
        return np.asarray(np.from_dlpack(array), dtype=np.float64)
    except (TypeError, AttributeError, RuntimeError, BufferError):
        return np.asarray(array, dtype=np.float64)


def namespace_of(array):
    """The array namespace of ``array`` (NumPy for anything without one)."""
    if isinstance(array, np.ndarray) or not hasattr(array, "__array_namespace__"):
        return np
    return array.__array_namespace__()
