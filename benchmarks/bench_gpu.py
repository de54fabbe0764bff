"""Claims (issue 11, §8.8): counter-based Philox orderings run near the thesis' V100
VariablePhilox throughput (5,800 M items/s at 2^20 items, 4,018 at 2^29; scaled by memory
bandwidth) and the moment-sketch kernel beats a two-pass CuPy reference and the CPU numba
kernel in GB/s — on every backend available on the machine that runs it.

Protocol. Philox: orderings of d = 2^20 + 1 items (one permutation, the thesis' size) and
1,000 orderings of d = 1,000; items per second = orderings x d / best time of 3 after a
warm-up. Moment sketch: a 20 x 5e6 float64 matrix (800 MB), l = 15, GB/s = bytes read /
best time; the CuPy reference computes the mean, then ``cupy.sum((x - mu) ** k)`` per k.
Rows for backends that are not available are listed as owed. The explainer's device path
(an XGBoost model on the GPU fed device arrays) is not built yet and is owed too.

Run: ``python benchmarks/bench_gpu.py`` (``--quick``: smaller sizes).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "gpu.md"


def best_time(function, repeats=3):
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS)
    args = parser.parse_args(argv)

    import skshapley
    from skshapley.backends import available_backends, get_backend
    from skshapley.backends._numpy import N_MOMENT_FIELDS

    reasons = available_backends(verbose=True)
    backends = [b for b in ("numba", "numba_cuda", "cupy") if reasons.get(b) is None]
    philox_cases = [(1, 2**16 + 1), (100, 1000)] if args.quick else [(1, 2**20 + 1),
                                                                     (1000, 1000)]
    n_values = 10**6 if args.quick else 5 * 10**6
    rng = np.random.default_rng(0)
    X = rng.normal(1000.0, 1.0, size=(20, n_values))
    w = np.ones(n_values)
    lines = ["# GPU kernels (issue 11)", "",
             f"skshapley {skshapley.__version__}; backends available: "
             f"{', '.join(['numpy'] + backends)}.", ""]
    for name, reason in reasons.items():
        if reason is not None:
            lines.append(f"- `{name}` not available here: {reason} Its rows are owed.")
    lines += ["", "## Philox orderings (M items/s)", "",
              "| backend | " + " | ".join(f"{n} x d={d}" for n, d in philox_cases) + " |",
              "|---|" + "---|" * len(philox_cases)]
    for name in backends:
        kernels = get_backend(name)
        if name == "cupy":
            continue  # no CuPy Philox kernel yet (owed)
        cells = []
        for n, d in philox_cases:
            out = np.empty((n, d), np.int64)
            seconds = best_time(lambda kernels=kernels, out=out: kernels.philox_orders(7, 0, out))
            cells.append(f"{n * d / seconds / 1e6:.1f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["| thesis V100 VariablePhilox (2^20 items) | 5800 | |", "",
              f"## Moment sketch, 20 x {n_values:.0e} float64, l = 15 (GB/s)", "",
              "| backend | seconds | GB/s |", "|---|---|---|"]
    for name in backends:
        kernels = get_backend(name)
        if name == "cupy":
            import cupy

            device = cupy.asarray(X)

            def two_pass(device=device):
                mean = device.mean(axis=1, keepdims=True)
                centred = device - mean
                power = cupy.ones_like(centred)
                for _ in range(15):
                    power *= centred
                    power.sum(axis=1)
                cupy.cuda.Device().synchronize()

            seconds = best_time(two_pass)
            label = "cupy two-pass reference"
        else:
            out = np.empty((20, N_MOMENT_FIELDS + 15))
            seconds = best_time(lambda kernels=kernels, out=out:
                                kernels.moment_chunk(X, w, 15, out))
            label = name
        lines.append(f"| {label} | {seconds:.3f} | {X.nbytes / seconds / 1e9:.2f} |")
    args.output.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
