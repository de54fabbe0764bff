"""What the CuPy and numba.cuda backends share: launch geometry, and stubs for kernels a GPU
backend does not have."""

from __future__ import annotations

from skshapley.exceptions import BackendUnavailableError

THREADS_PER_BLOCK = 256  # 8 warps, as GPUTreeShap's reference code
ROWS_PER_WARP = 1024  # rows handled by one warp for plain SHAP values (GPUTreeShap's value)


def missing_kernel(backend, name):
    """A kernel slot a GPU backend does not fill yet: calling it says so."""

    def kernel(*args, **kwargs):
        raise BackendUnavailableError(
            f"Backend {backend!r} has no {name!r} kernel yet; use backend='numba' for it."
        )

    kernel.__name__ = name
    kernel.is_missing = True  # lets policies skip a backend without calling the stub
    return kernel
