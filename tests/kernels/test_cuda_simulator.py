"""The numba.cuda kernels run in numba's CUDA simulator on machines without a GPU (CI):
the simulator must be switched on before numba is imported, hence a subprocess."""

import os
import pathlib
import subprocess
import sys

import pytest

CASES = pathlib.Path(__file__).with_name("cudasim_cases.py")


def test_numba_cuda_kernels_in_the_simulator():
    pytest.importorskip("numba.cuda")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p",
                           "no:cacheprovider", "-o", "addopts=", str(CASES)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout, done.stdout[-2000:]
    # a case may skip for a missing optional peer (the LightGBM model), never because the
    # simulator did not start
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert all("could not import" in line for line in skips), done.stdout[-2000:]
