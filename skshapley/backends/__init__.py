"""Registry of kernel backends (numpy reference, numba CPU, GPU slots).

See DESIGN.md §4.1. Kernels are pure functions on arrays with a NumPy twin each.
"""

from skshapley.backends._registry import (
    KERNEL_NAMES,
    Backend,
    available_backends,
    get_backend,
    register_backend,
)

__all__ = ["KERNEL_NAMES", "Backend", "available_backends", "get_backend", "register_backend"]
