"""Claims (issue 11, §8.8): counter-based Philox orderings run near the thesis' V100
VariablePhilox throughput (5,800 M items/s at 2^20 items, 4,018 at 2^29; scaled by memory
bandwidth); the moment-sketch kernel beats a two-pass CuPy reference and the CPU numba
kernel in GB/s; and ``ShapleyExplainer(device="cuda")`` on a model that predicts on the
GPU explains at least 5 times as many rows per second as the host path, and more than
``shap.PermutationExplainer`` at the same budget — on every backend available on the
machine that runs it.

Protocol. Philox: orderings of d = 2^20 + 1 items (one permutation, the thesis' size) and
1,000 orderings of d = 1,000; items per second = orderings x d / best time of 3 after a
warm-up; the CuPy backend twice, writing a host ``out`` (the copy back included) and a
device ``out``. Moment sketch: a 20 x 5e6 float64 matrix (800 MB), l = 15, GB/s = bytes
read / best time; the CuPy rows read a device copy of the matrix (our ``moment_chunk``,
and the reference that computes the mean, then ``cupy.sum((x - mu) ** k)`` per k).
Explainer: an XGBoost regressor (200 trees, depth 6; ``device="cuda"`` when CuPy sees a
GPU) on ``make_regression(n_samples=2000, n_features=10, random_state=0)``, background
X[:100], 100 rows explained (20 with ``--quick``), antithetic permutations at B = 50d
coalition evaluations per row; shap's ``PermutationExplainer`` gets ``max_evals = B`` (the
conversion of ``bench_explainer.py``); rows/s = rows / best time of 2 after a warm-up.
Rows for backends or devices that are not available are listed as owed.

Run: ``python benchmarks/bench_gpu.py`` (``--quick``: smaller sizes).
"""

from __future__ import annotations

import argparse
import pathlib

import numpy as np
from _report import best_time

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "gpu.md"


def _synchronized(function):
    """``function`` followed by a device synchronisation, so device work is timed."""
    import cupy

    def run():
        function()
        cupy.cuda.Device().synchronize()

    return run


def philox_rows(backends, cases):
    from skshapley.backends import get_backend

    rows = []
    for name in backends:
        kernels = get_backend(name)
        targets = [(name, lambda n, d: np.empty((n, d), np.int64), lambda f: f)]
        if name == "cupy":
            import cupy

            targets.append(("cupy, device out", lambda n, d: cupy.empty((n, d), cupy.int64),
                            _synchronized))
        for label, allocate, wrap in targets:
            cells = []
            for n, d in cases:
                out = allocate(n, d)
                seconds = best_time(wrap(lambda kernels=kernels, out=out:
                                         kernels.philox_orders(7, 0, out)))
                cells.append(f"{n * d / seconds / 1e6:.1f}")
            rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return rows


def moment_rows(backends, X, w, order=15):
    from skshapley.backends import get_backend
    from skshapley.backends.sketch._numpy import N_MOMENT_FIELDS

    rows = []
    shape = (X.shape[0], N_MOMENT_FIELDS + order)
    for name in backends:
        kernels = get_backend(name)
        if name == "cupy":
            rows += _cupy_moment_rows(kernels, X, w, order, shape)
            continue
        out = np.empty(shape)
        seconds = best_time(lambda kernels=kernels, out=out:
                            kernels.moment_chunk(X, w, order, out))
        rows.append(f"| {name} | {seconds:.3f} | {X.nbytes / seconds / 1e9:.2f} |")
    return rows


def _cupy_moment_rows(kernels, X, w, order, shape):
    import cupy

    device, device_w, out = cupy.asarray(X), cupy.asarray(w), cupy.empty(shape)

    def two_pass():
        mean = device.mean(axis=1, keepdims=True)
        centred = device - mean
        power = cupy.ones_like(centred)
        for _ in range(order):
            power *= centred
            power.sum(axis=1)

    rows = []
    for label, function in (
            ("cupy (ours, device input)",
             lambda: kernels.moment_chunk(device, device_w, order, out)),
            ("cupy two-pass reference", two_pass)):
        seconds = best_time(_synchronized(function))
        rows.append(f"| {label} | {seconds:.3f} | {X.nbytes / seconds / 1e9:.2f} |")
    return rows


def explainer_rows(n_rows, gpu):
    """Rows/s of the device path, the host path and shap at equal budget (B = 50 d)."""
    import shap
    import xgboost
    from sklearn.datasets import make_regression

    from skshapley import ShapleyExplainer

    X, y = make_regression(n_samples=2000, n_features=10, random_state=0)
    d = X.shape[1]
    budget = 50 * d
    model = xgboost.XGBRegressor(n_estimators=200, max_depth=6, random_state=0,
                                 device="cuda" if gpu else "cpu").fit(X, y)
    background, rows = X[:100], X[100:100 + n_rows]
    lines = []
    paths = [("skshapley, device path (device='cuda')", "cuda")] if gpu else []
    paths.append(("skshapley, host path", None))
    for label, device in paths:
        explainer = ShapleyExplainer(model, prefit=True, method="permutation",
                                     sampler="antithetic", max_evals=budget,
                                     background=background, random_state=0, device=device)
        explainer.fit(background)
        seconds = best_time(lambda explainer=explainer: explainer.transform(rows), repeats=2)
        lines.append(f"| {label} | {n_rows / seconds:.1f} |")
    if not gpu:
        lines.append("| skshapley, device path (device='cuda') | owed (no GPU) |")
    masker = shap.maskers.Independent(background, max_samples=100)
    shap_explainer = shap.PermutationExplainer(model.predict, masker, seed=0)
    seconds = best_time(lambda: shap_explainer(rows, max_evals=budget, silent=True),
                        repeats=2)
    lines.append(f"| shap PermutationExplainer (max_evals = {budget}) | "
                 f"{n_rows / seconds:.1f} |")
    return lines


def _has_gpu(reasons):
    return reasons.get("cupy") is None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS)
    args = parser.parse_args(argv)

    from _report import start_report

    from skshapley.backends import available_backends

    reasons = available_backends(verbose=True)
    backends = [b for b in ("numba", "numba_cuda", "cupy") if reasons.get(b) is None]
    philox_cases = [(1, 2**16 + 1), (100, 1000)] if args.quick else [(1, 2**20 + 1),
                                                                     (1000, 1000)]
    n_values = 10**6 if args.quick else 5 * 10**6
    rng = np.random.default_rng(0)
    X = rng.normal(1000.0, 1.0, size=(20, n_values))
    w = np.ones(n_values)
    lines, log = start_report("GPU kernels and the explainer's device path (issue 11)",
                              __doc__, "bench_gpu.py", argv)
    log(f"Backends available: {', '.join(['numpy'] + backends)}.")
    log()
    for name, reason in reasons.items():
        if reason is not None:
            log(f"- `{name}` not available here: {reason} Its rows are owed.")
    sections = [
        lambda: ["", "## Philox orderings (M items/s)", "",
                 "| backend | " + " | ".join(f"{n} x d={d}" for n, d in philox_cases) + " |",
                 "|---|" + "---|" * len(philox_cases),
                 *philox_rows(backends, philox_cases),
                 "| thesis V100 VariablePhilox (2^20 items) | 5800 | |"],
        lambda: ["", f"## Moment sketch, 20 x {n_values:.0e} float64, l = 15 (GB/s)", "",
                 "| backend | seconds | GB/s |", "|---|---|---|",
                 *moment_rows(backends, X, w)],
        lambda: ["", "## Explainer rows/s, XGBoost regressor, d = 10, B = 50d", "",
                 "| path | rows/s |", "|---|---|",
                 *explainer_rows(20 if args.quick else 100, _has_gpu(reasons))]]
    for section in sections:  # written after each: a device call can end at its limit
        for line in section():
            log(line)
        args.output.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
