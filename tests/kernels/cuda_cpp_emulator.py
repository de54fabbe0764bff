"""Run the CuPy backend's CUDA C++ on the CPU: a stand-in for ``cupy`` (§8.7 "Testing
without a GPU").

The kernel source is compiled by the host C++ compiler with a prelude that defines the
CUDA built-ins (``blockIdx``/``blockDim``/``threadIdx`` as thread-local globals,
``atomicAdd`` under a lock, ``__popcll``). A generated driver per kernel runs every
thread of the grid: one after another for kernels whose threads do not talk to each
other, and warp by warp, as 32 host threads, for kernels with shuffles. A shuffle on a
mask is a write of the lane's value, a barrier of the mask's lanes, a read of the source
lane's value and a second barrier, which is what ``__shfl_sync`` guarantees; lanes of
other groups in the warp go on independently, as under independent thread scheduling.

:func:`fake_cupy` returns a module that is NumPy plus ``asnumpy`` and a ``RawModule``
backed by the compiled library, so the backend's Python wrappers run unchanged. Each
launch checks every argument against the kernel's C++ parameter type (dtype of each
pointer, width of each scalar): a wrapper passing int64 where the kernel reads int32 is
caught here rather than as garbage on a device.
"""

import contextlib
import ctypes
import re
import shutil
import subprocess
import tempfile
import types
from pathlib import Path

import numpy as np

PRELUDE = r"""
#include <cmath>
#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>
using std::isnan; using std::min; using std::max; using std::fmin; using std::fmax;
struct Dim3 { long long x; };
static thread_local Dim3 blockIdx, blockDim, threadIdx;
#define __global__
#define __device__
#define __constant__ static const
#define __forceinline__ inline
static std::mutex atomic_mutex;
static inline double atomicAdd(double* a, double v) {
    std::lock_guard<std::mutex> lock(atomic_mutex);
    double old = *a; *a += v; return old;
}
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }

// Warps: 32 host threads; a shuffle with a mask is a write of the lane's value, a barrier
// of the mask's lanes, a read of the source lane's value, and a second barrier.
static thread_local int lane_id = -1;  // -1: not in a warp (one thread at a time)
static bool shuffled_outside_a_warp = false;
static std::mutex warp_mutex;
static std::condition_variable warp_changed;
static std::map<unsigned, std::pair<int, long>> barriers;  // mask -> (arrived, generation)
static double lane_values[32];
static void lanes_meet(unsigned mask) {
    std::unique_lock<std::mutex> lock(warp_mutex);
    auto& state = barriers[mask];
    long generation = state.second;
    if (++state.first == __builtin_popcount(mask)) {
        state.first = 0; state.second++; warp_changed.notify_all();
    } else {
        warp_changed.wait(lock, [&] { return state.second != generation; });
    }
}
template <class T> static T exchange(unsigned mask, T v, int source) {
    if (lane_id < 0) { shuffled_outside_a_warp = true; return v; }
    lane_values[lane_id] = (double)v;
    lanes_meet(mask);
    T result = (source >= 0 && source < 32) ? (T)lane_values[source] : v;
    lanes_meet(mask);
    return result;
}
template <class T> static T __shfl_sync(unsigned mask, T v, int source) {
    return exchange(mask, v, source);
}
template <class T> static T __shfl_up_sync(unsigned mask, T v, int delta) {
    return exchange(mask, v, lane_id - delta);  // below lane 0: the lane's own value
}
extern "C" int used_shuffles() {
    int s = shuffled_outside_a_warp; shuffled_outside_a_warp = false; return s;
}
"""

_POINTERS = {"double": np.float64, "int": np.int32, "long long": np.int64,
             "unsigned char": np.uint8, "unsigned long long": np.uint64}
_SCALARS = {"double": (np.float64, ctypes.c_double), "int": (np.int32, ctypes.c_int),
            "long long": (np.int64, ctypes.c_longlong)}
_KERNEL = re.compile(r'extern "C" __global__ void (\w+)\((.*?)\)\s*\{', re.S)


def _uses_shuffles(source, name):
    body = source.split(f'void {name}(', 1)[1].split('extern "C"', 1)[0]
    return "__shfl" in body


def compiler_available():
    return shutil.which("g++") is not None


def _parameters(text):
    """[(C type without const, is pointer, name)] of a kernel's parameter list."""
    parameters = []
    for declaration in " ".join(text.split()).split(","):
        declaration = declaration.replace("const ", "").strip()
        pointer = "*" in declaration
        base, name = declaration.replace("*", " ").rsplit(None, 1)
        parameters.append((" ".join(base.split()), pointer, name))
    return parameters


class EmulatedModule:
    """Compiled kernels of a CUDA C++ source with the ``RawModule.get_function`` API."""

    def __init__(self, source):
        found = _KERNEL.findall(source)
        self.kernels = {name: _parameters(params) for name, params in found}
        drivers = []
        for name, declared in found:
            names = ", ".join(n for _, _, n in self.kernels[name])
            signature = (f'extern "C" void grid_{name}(long long n_threads, long long block, '
                         f"{' '.join(declared.split())})")
            set_thread = "blockDim.x = block; blockIdx.x = i / block; threadIdx.x = i % block;"
            if _uses_shuffles(source, name):  # warp by warp, its 32 lanes as host threads
                drivers.append(
                    f"{signature} {{ for (long long w = 0; w < (n_threads + 31) / 32; ++w) {{ "
                    f"std::vector<std::thread> lanes; for (int l = 0; l < 32; ++l) "
                    f"lanes.emplace_back([=] {{ long long i = w * 32 + l; lane_id = l; "
                    f"{set_thread} {name}({names}); }}); for (auto& t : lanes) t.join(); }} }}")
            else:
                drivers.append(f"{signature} {{ for (long long i = 0; i < n_threads; ++i) {{ "
                               f"{set_thread} {name}({names}); }} }}")
        self._directory = tempfile.TemporaryDirectory()
        path = Path(self._directory.name)
        (path / "kernels.cpp").write_text(PRELUDE + source + "\n".join(drivers))
        built = subprocess.run(["g++", "-O1", "-std=c++17", "-shared", "-fPIC", "-pthread", "-o",
                                str(path / "kernels.so"), str(path / "kernels.cpp")],
                               capture_output=True, text=True)
        if built.returncode:
            raise RuntimeError(f"g++ failed on the kernel source:\n{built.stderr}")
        self.library = ctypes.CDLL(str(path / "kernels.so"))

    def get_function(self, name):
        parameters = self.kernels[name]
        driver = getattr(self.library, f"grid_{name}")

        def launch(grid, block, args):
            assert len(args) == len(parameters), f"{name}: {len(args)} arguments"
            converted = []
            for (ctype, pointer, param), value in zip(parameters, args, strict=True):
                if pointer:
                    assert isinstance(value, np.ndarray), f"{name}.{param}: not an array"
                    assert value.dtype == _POINTERS[ctype], \
                        f"{name}.{param}: {value.dtype} passed for {ctype}*"
                    assert value.flags.c_contiguous, f"{name}.{param}: not contiguous"
                    converted.append(ctypes.c_void_p(value.ctypes.data))
                else:
                    dtype, c_type = _SCALARS[ctype]
                    assert isinstance(value, dtype), \
                        f"{name}.{param}: {type(value).__name__} passed for {ctype}"
                    converted.append(c_type(value))
            driver(ctypes.c_longlong(grid[0] * block[0]), ctypes.c_longlong(block[0]),
                   *converted)
            assert not self.library.used_shuffles(), f"{name} uses warp shuffles"

        return launch


def fake_cupy(source):
    """A stand-in ``cupy`` module: NumPy, ``asnumpy`` and a ``RawModule`` running
    ``source`` on the CPU (whatever code is passed to it, the compiled one is ``source``)."""
    module = EmulatedModule(source)
    fake = types.ModuleType("cupy")
    fake.__dict__.update({name: getattr(np, name) for name in dir(np) if not
                          name.startswith("__")})
    fake.asnumpy = np.asarray
    fake.RawModule = lambda code, options=(): module
    return fake


def cupy_sources():
    """The CUDA C++ of every domain's CuPy module (tree, permutation and sketch kernels),
    as one source: what a stand-in compiles."""
    from skshapley.backends.permutation import _cupy as permutation
    from skshapley.backends.sketch import _cupy as sketch
    from skshapley.backends.tree import _cupy as tree

    return "\n".join((tree.SOURCE, permutation.SOURCE, sketch.SOURCE))


def use_stand_in(monkeypatch, stand_in):
    """Point the CuPy backend's modules at ``stand_in`` for one test, with their compiled
    modules, twins and layout caches reset; returns the backend's kernel namespace."""
    import sys

    from skshapley.backends import _cupy_runtime
    from skshapley.backends._registry import compose_kernels
    from skshapley.tree import _cache

    monkeypatch.setitem(sys.modules, "cupy", stand_in)
    cupyx = types.ModuleType("cupyx")  # NumPy's linalg raises anyway
    cupyx.errstate = lambda **kwargs: contextlib.nullcontext()
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    monkeypatch.setattr(_cupy_runtime, "_MODULES", {})
    monkeypatch.setattr(_cupy_runtime, "_BOUND", {})
    monkeypatch.setattr(_cache, "_LAYOUTS", {})
    return compose_kernels("_cupy")
