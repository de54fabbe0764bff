"""Forked workers after numba's thread pool ran (joblib's ``"multiprocessing"`` backend).

numba's OpenMP threading layer terminates a forked child at its first ``prange`` call,
and the parent then waits forever; the kernels must run their serial builds there. The
case runs in a subprocess with a timeout, so a regression fails instead of hanging.
"""

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import joblib
    import numpy as np
    from numba.np.ufunc import parallel
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Ridge

    from skshapley import ShapleyExplainer

    X, y = load_diabetes(return_X_y=True)
    model = Ridge().fit(X, y)
    explainer = ShapleyExplainer(model, prefit=True, background=X[:100],
                                 method="permutation", max_evals=2000, random_state=0)
    explainer.fit(X)
    in_parent = explainer.explain(X[:40]).values
    # a prange build in the parent (the explainer's model chunks are small enough for
    # the serial ones): 4096 orderings of 10 players' prefixes, above the parallel cut
    from skshapley.backends import get_backend

    orders = np.tile(np.arange(10), (4096, 1))
    get_backend("numba").prefix_coalitions(orders, np.empty((4096, 9, 10), dtype=bool))
    assert parallel._is_initialized, "the parent never started numba's pool"

    def explain(rows):
        return explainer.explain(X[rows]).values

    with joblib.parallel_backend("multiprocessing"):
        parts = joblib.Parallel(n_jobs=2)(
            joblib.delayed(explain)(slice(i, i + 20)) for i in (0, 20))
    np.testing.assert_array_equal(np.concatenate(parts), in_parent)
    print("ok")
""")


@pytest.mark.skipif(sys.platform != "linux", reason="fork is the default start only on Linux")
def test_forked_workers_after_a_parallel_kernel_finish_with_the_same_values(tmp_path):
    script = tmp_path / "fork_case.py"
    script.write_text(SCRIPT)
    try:
        done = subprocess.run([sys.executable, str(script)], capture_output=True,
                              text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("joblib's forked workers hung after a numba prange kernel ran")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")
