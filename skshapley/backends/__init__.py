"""Registry of kernel backends (numpy reference, numba CPU, GPU slots).

Kernels are pure functions on arrays with a NumPy twin each, grouped by what they compute
(``masking``, ``permutation``, ``tree``, ``sketch``, ``lsspa``, ``rkhs``), each domain with
one module per backend. The user guide page "When the GPU pays off" says how a backend is
chosen.
"""

from skshapley.backends._numba_runtime import run_parts
from skshapley.backends._registry import (
    KERNEL_NAMES,
    Backend,
    available_backends,
    choose_backend,
    get_backend,
    has_kernel,
    register_backend,
)

__all__ = ["KERNEL_NAMES", "Backend", "available_backends", "get_backend", "register_backend",
    "run_parts",
    "choose_backend",
    "has_kernel",
]
