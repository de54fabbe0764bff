"""What the CuPy modules of the domains share: each CUDA C++ source compiled once into a
``RawModule``, each domain's array twins bound to CuPy once, and module-level kernels that
forward to them. Nothing here imports CuPy before a kernel runs.

Without a GPU, the tests compile the sources with g++ and run them on the CPU through a
stand-in for ``cupy`` (``tests/kernels/cuda_cpp_emulator.py``), after emptying the
memos below.
"""

from __future__ import annotations

from skshapley.backends._gpu_common import THREADS_PER_BLOCK

_MODULES = {}  # CUDA C++ source -> cupy.RawModule
_BOUND = {}  # array-twins class -> its instance on cupy


def raw_module(source):
    """``source`` compiled by NVRTC, once per process."""
    module = _MODULES.get(source)
    if module is None:
        import cupy

        module = _MODULES[source] = cupy.RawModule(code=source, options=("-std=c++17",))
    return module


def launch(source, name, n_threads, *args):
    """Run kernel ``name`` of ``source`` on ``n_threads`` threads (blocks of
    ``THREADS_PER_BLOCK``)."""
    raw_module(source).get_function(name)((-(-n_threads // THREADS_PER_BLOCK),),
                                          (THREADS_PER_BLOCK,), args)


def bound(cls):
    """The instance of the array-twins class ``cls`` on CuPy, made once."""
    kernels = _BOUND.get(cls)
    if kernels is None:
        import cupy

        kernels = _BOUND[cls] = cls(cupy)
    return kernels


def on_cupy(cls, name):
    """Module-level kernel ``name`` running the method of ``cls`` bound to CuPy."""

    def kernel(*args, **kwargs):
        return getattr(bound(cls), name)(*args, **kwargs)

    kernel.__name__ = name
    kernel.__doc__ = (f"CuPy twin of the NumPy ``{name}``: :class:`{cls.__name__}` on CuPy "
                      "(host or CuPy inputs; a CuPy ``out`` stays on the device).")
    return kernel
