"""Checks of the CuPy backend that need CuPy installed but no GPU: the CUDA C++ compiles
with NVRTC, and the array twins call only functions CuPy has. Skipped without CuPy; on a
machine with the ``gpu`` extra (no device needed) they run."""

import ast
import inspect
import re
import textwrap

import pytest
from cuda_cpp_emulator import cupy_sources

from skshapley.backends import _array_twins
from skshapley.backends.rkhs import _numpy

cupy = pytest.importorskip("cupy")


def _nvrtc_or_skip():
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except Exception as err:  # no NVRTC library: nothing to compile with
        pytest.skip(f"NVRTC unavailable ({type(err).__name__}: {err})")
    return nvrtc


def _oldest_arch(nvrtc):
    """The oldest virtual architecture from Volta (70) on that this NVRTC compiles for:
    CUDA 13 dropped compute_70 ("invalid value for --gpu-architecture" on the lent H100)."""
    try:
        return min(arch for arch in nvrtc.getSupportedArchs() if arch >= 70)
    except (AttributeError, RuntimeError, ValueError):  # no query (before CUDA 11.2)
        return 70


def test_cuda_sources_compile():
    nvrtc = _nvrtc_or_skip()
    program = nvrtc.createProgram(cupy_sources(), "skshapley.cu", [], [])
    try:
        nvrtc.compileProgram(program, [f"-arch=compute_{_oldest_arch(nvrtc)}", "-std=c++17"])
    except nvrtc.NVRTCError:
        pytest.fail(nvrtc.getProgramLog(program))
    ptx = nvrtc.getPTX(program).decode()
    kernels = re.findall(r'extern "C" __global__ void (\w+)\(', cupy_sources())
    assert {"tree_shap_warp", "tree_interactions", "philox_images", "moment_powers"} <= set(
        kernels)
    for kernel in kernels:
        assert f".entry {kernel}(" in ptx


def _namespace_calls(function, names):
    """Attributes looked up on the variables ``names`` inside ``function``'s source."""
    source = textwrap.dedent(inspect.getsource(function)).replace("self.xp.", "xp.")
    tree = ast.parse(source)
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in names:
            used.add(node.attr)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id in names:
            used.add(f"{node.value.attr}.{node.attr}")
    return used


def test_array_twins_use_only_what_cupy_has():
    used = set()
    for _, method in inspect.getmembers(_array_twins.ArrayKernels, inspect.isfunction):
        used |= _namespace_calls(method, {"xp", "lib"})
    used |= _namespace_calls(_numpy.subset_embeddings_into, {"xp"})
    assert {"where", "linalg.qr", "linalg.cholesky", "asnumpy"} <= used  # the walk works
    missing = []
    for name in sorted(used):
        target = cupy
        for part in name.split("."):
            target = getattr(target, part, None)
        if target is None:
            missing.append(name)
    assert not missing, f"CuPy has no {missing}"
