"""Stubs for kernel slots a test backend leaves empty."""

from skshapley.exceptions import BackendUnavailableError


def missing_kernel(backend, name):
    """A kernel slot ``backend`` does not fill: calling it says so; ``is_missing`` lets
    the policies (``skshapley.backends.has_kernel``) skip it without calling it."""

    def kernel(*args, **kwargs):
        raise BackendUnavailableError(
            f"Backend {backend!r} has no {name!r} kernel; use backend='numba' for it."
        )

    kernel.__name__ = name
    kernel.is_missing = True
    return kernel
