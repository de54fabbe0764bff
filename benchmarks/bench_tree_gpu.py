"""GPU TreeSHAP benchmark (thesis ch. 4, Tables 5 and 6 protocol; ALGORITHMS.md §8.5).

Run on a machine with a CUDA device (the lent H100 here). Models are XGBoost ``hist``
ensembles with learning rate 0.01 in the thesis' small/med/large variants
(10/100/1000 rounds × depth 3/8/16) trained on synthetic data of the shape of the
thesis' datasets (no downloads here): cal_housing (20,640 × 8, regression), adult
(48,842 × 14, binary) and covtype (581,012 × 54, 8 classes; trained on 100,000 rows);
``--datasets categorical`` adds a model with categorical (partition) splits.
Reported per model: paths, average merged path length, the bin-packing table (our four
packers), and seconds for SHAP values of 10,000 rows sampled with replacement (seed 432)
— XGBoost CPU ``pred_contribs`` on all cores, our numba CPU kernel on all cores, our
numba.cuda and CuPy warp kernels (medians of up to ``--repeats`` calls after a warm-up
call, fewer once 5 s have been timed; XGBoost's CPU path compiles nothing and has no
warm-up; the GPU timings include copying X to the device and the result back; the
warm-up's time is reported as the first call), and XGBoost's CUDA ``pred_contribs``
(GPUTreeShap itself) when its XGBoost build has CUDA. Large models use 1,000 rows. For
the med models, a second table times the interaction values (1,000 rows; XGBoost
``pred_interactions`` on the CPU and, with CUDA, the GPU) and the interventional values
(1,000 rows, 100 background rows) on every backend.

    python benchmarks/bench_tree_gpu.py --output benchmarks/results/tree_gpu.md
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

VARIANTS = {"small": (10, 3), "med": (100, 8), "large": (1000, 16)}
DATASETS = {
    "cal_housing": dict(n=20640, d=8, classes=0),
    "adult": dict(n=48842, d=14, classes=2),
    "covtype": dict(n=581012, d=54, classes=8, train=100_000),
    # two numeric and two categorical columns (20 and 12 levels): partition splits, held
    # as set elements by our kernels (as GPUTreeShap's bitsets)
    "categorical": dict(n=20_000, d=4, classes=0, levels={2: 20, 3: 12}),
}


def feature_types(name):
    """XGBoost feature types of a dataset (None: all numeric)."""
    levels = DATASETS[name].get("levels")
    if not levels:
        return None
    return ["c" if j in levels else "q" for j in range(DATASETS[name]["d"])]


def dmatrix(xgboost, name, X, label=None):
    types = feature_types(name)
    return xgboost.DMatrix(X, label=label, feature_types=types,
                           enable_categorical=types is not None)


def make_data(name, seed=0):
    spec = DATASETS[name]
    rng = np.random.default_rng(seed)
    n = spec.get("train", spec["n"])
    X = rng.normal(size=(n, spec["d"]))
    if spec.get("levels"):
        for j, levels in spec["levels"].items():
            X[:, j] = rng.integers(0, levels, n)
        y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + np.cos(X[:, 3]) * X[:, 0]
        return X, y + 0.1 * rng.normal(size=n), "reg:squarederror", 1
    X[:, ::3] = np.round(X[:, ::3] * 4)  # some discrete columns, as in the real data
    signal = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * np.abs(X[:, 3 % spec["d"]])
    signal += 0.3 * X[:, 4 % spec["d"]:].sum(axis=1) / np.sqrt(spec["d"])
    if spec["classes"] == 0:
        return X, signal + 0.1 * rng.normal(size=n), "reg:squarederror", 1
    cuts = np.quantile(signal, np.linspace(0, 1, spec["classes"] + 1)[1:-1])
    y = np.digitize(signal + 0.3 * rng.normal(size=n), cuts)
    if spec["classes"] == 2:
        return X, y, "binary:logistic", 1
    return X, y, "multi:softmax", spec["classes"]


def timed(function, repeats=5, budget=5.0, warm=True):
    """(median, IQR, first-call seconds, last result) of ``function``.

    A warm-up call comes first when ``warm`` (JIT, NVRTC, caches); its time is the first
    call's. Repeats stop early once ``budget`` seconds have been timed, with at least one
    timed call: the large CPU cells take tens of seconds each, and a device lease is
    15 minutes in all."""
    first = None
    if warm:
        start = time.perf_counter()
        result = function()
        first = time.perf_counter() - start
    times = []
    while len(times) < repeats and (not times or sum(times) < budget):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    if first is None:
        first = times[0]
    return (float(np.median(times)), float(np.subtract(*np.percentile(times, [75, 25]))),
            first, result)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="benchmarks/results/tree_gpu.md")
    parser.add_argument("--datasets", default="cal_housing,adult,covtype")
    parser.add_argument("--variants", default="small,med,large")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    import xgboost

    from skshapley.backends import available_backends, get_backend
    from skshapley.tree import pack_paths, read_model
    from skshapley.tree._api import path_dependent_shap

    gpu_backends = [b for b in ("numba_cuda", "cupy") if b in available_backends()]
    xgb_cuda = _xgboost_has_cuda(xgboost)
    n_threads = os.cpu_count()
    packing_rows, timing_rows, other_rows = [], [], []
    for dataset in args.datasets.split(","):
        X, y, objective, n_class = make_data(dataset)
        for variant in args.variants.split(","):
            if dataset == "covtype" and variant == "large":
                continue
            rounds, depth = VARIANTS[variant]
            params = dict(tree_method="hist", learning_rate=0.01, max_depth=depth,
                          objective=objective, nthread=n_threads)
            if xgb_cuda:
                params["device"] = "cuda"  # training is not what is measured
            if n_class > 1:
                params["num_class"] = n_class
            if feature_types(dataset):
                params["max_cat_to_onehot"] = 1  # partition splits
            start = time.perf_counter()
            booster = xgboost.train(params, dmatrix(xgboost, dataset, X, y), rounds)
            booster.set_param({"device": "cpu"})
            train_seconds = time.perf_counter() - start
            start = time.perf_counter()
            ensemble = read_model(booster)
            read_seconds = time.perf_counter() - start
            name = f"{dataset}-{variant}"
            sizes = ensemble.path_lengths[ensemble.path_lengths > 0] + 1
            for packing in ("none", "nf", "ffd", "bfd"):
                pack_paths(sizes[:10], packing)  # compile
                packed = pack_paths(sizes, packing)
                packing_rows.append((name, packing, packed.seconds, packed.utilisation,
                                     packed.n_bins))
            n_rows = 1000 if variant == "large" else 10_000
            rng = np.random.default_rng(432)
            rows = X[rng.integers(0, X.shape[0], n_rows)]
            prepared = ensemble.prepare(rows)
            matrix = dmatrix(xgboost, dataset, rows)
            booster.set_param({"nthread": n_threads})
            # XGBoost's CPU path compiles nothing: its first call is a timed one
            xgb_time = timed(lambda b=booster, m=matrix: b.predict(m, pred_contribs=True),
                             args.repeats, warm=False)
            if xgb_cuda:
                # the rows start on the host, as ours do: the DMatrix copy is timed
                booster.set_param({"device": "cuda"})
                xgb_gpu_time = timed(lambda b=booster, r=rows, d=dataset: b.predict(
                    dmatrix(xgboost, d, r), pred_contribs=True), args.repeats)
                booster.set_param({"device": "cpu"})
            numba_kernels = get_backend("numba")
            cpu_time = timed(lambda e=ensemble, x=prepared, k=numba_kernels:
                             path_dependent_shap(e, x, k), args.repeats)
            reference = np.moveaxis(cpu_time[-1][0], 1, 2)  # (rows, features, outputs)
            row = dict(model=name, paths=ensemble.n_paths,
                       avg_length=float(ensemble.path_lengths.mean()), rows=n_rows,
                       work=float(n_rows) * float(sizes.sum()),
                       train=train_seconds, read=read_seconds, xgb_cpu=xgb_time,
                       ours_cpu=cpu_time,
                       xgb_error=_max_difference(xgb_time[-1], reference))
            if xgb_cuda:
                row["xgb_gpu"] = xgb_gpu_time
                row["xgb_gpu_error"] = _max_difference(xgb_gpu_time[-1], reference)
            for backend in gpu_backends:
                kernels = get_backend(backend)
                row[backend] = timed(lambda k=kernels, e=ensemble, x=prepared:
                                     path_dependent_shap(e, x, k), args.repeats)
                values = np.moveaxis(np.asarray(row[backend][-1][0]), 1, 2)
                row[backend + "_error"] = float(np.abs(values - reference).max())
            timing_rows.append(row)
            print({k: (v[:3] if isinstance(v, tuple) else v) for k, v in row.items()},
                  flush=True)
            if variant == "med":
                other_rows += other_kernels(dataset, name, booster, ensemble, X, gpu_backends,
                                            xgb_cuda, args.repeats)
            write_report(args.output, packing_rows, timing_rows, other_rows, gpu_backends,
                         xgb_cuda, n_threads)


def write_report(output, packing_rows, timing_rows, other_rows, gpu_backends, xgb_cuda,
                 n_threads):
    """Write the tables so far (after each model: a device call can end at its limit)."""
    import numba
    import xgboost

    lines = ["# GPU TreeSHAP (thesis ch. 4 protocol, §8.5)", "",
             f"Machine: {platform.node()}, {n_threads} CPU cores; GPU: {_gpu_name()}. "
             f"Python {platform.python_version()}, numpy {np.__version__}, numba "
             f"{numba.__version__}, xgboost {xgboost.__version__}, cupy {_version('cupy')}.",
             "", "Synthetic data of the thesis datasets' shapes (no downloads here), so leaf "
             "counts differ from the thesis' Table 3. "
             + ("XGBoost has CUDA: its GPU `pred_contribs` is GPUTreeShap." if xgb_cuda else
                "XGBoost here has no CUDA: its GPU `pred_contribs` (GPUTreeShap) could not "
                "be measured — **owed**."), "",
             "## Bin packing (Table 5 protocol): seconds / utilisation / bins", "",
             "| model | none | nf | ffd | bfd |", "|---|---|---|---|---|"]
    by_model = {}
    for name, packing, seconds, utilisation, bins in packing_rows:
        by_model.setdefault(name, {})[packing] = f"{seconds:.4f} / {utilisation:.4f} / {bins:,}"
    for name, cells in by_model.items():
        lines.append(f"| {name} | " + " | ".join(cells[p] for p in ("none", "nf", "ffd", "bfd"))
                     + " |")
    header = ["model", "paths", "avg u", "rows", "work", "XGBoost CPU (s)",
              "ours numba CPU (s)"]
    header += [f"ours {b} (s)" for b in gpu_backends]
    header += ["XGBoost GPU (s)"] if xgb_cuda else []
    header += [f"speedup {b} vs XGBoost CPU" for b in gpu_backends]
    header += [f"{b} / XGBoost GPU time" for b in gpu_backends if xgb_cuda]
    header += [f"first call {b} (s)" for b in gpu_backends]
    header += ["max |ours − XGBoost|"] + [f"max |{b} − numba|" for b in gpu_backends]
    header += ["max |XGBoost GPU − ours|"] if xgb_cuda else []
    lines += ["", "## SHAP values (Table 6 protocol): median (IQR) seconds", "",
              "Work: rows x the ensemble's total path length (what `GPU_MIN_WORK` "
              "thresholds). First call: the warm-up call, compilation included. Timed calls "
              "stop after 5 s of them (at least one).", "",
              "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in timing_rows:
        cells = [row["model"], f"{row['paths']:,}", f"{row['avg_length']:.2f}",
                 f"{row['rows']:,}", f"{row['work']:.1e}", _fmt(row["xgb_cpu"]),
                 _fmt(row["ours_cpu"])]
        cells += [_fmt(row[b]) for b in gpu_backends]
        cells += [_fmt(row["xgb_gpu"])] if xgb_cuda else []
        cells += [f"{row['xgb_cpu'][0] / row[b][0]:.2f}" for b in gpu_backends]
        cells += [f"{row[b][0] / row['xgb_gpu'][0]:.2f}" for b in gpu_backends if xgb_cuda]
        cells += [f"{row[b][2]:.2f}" for b in gpu_backends]
        cells += [f"{row['xgb_error']:.2e}"] + [f"{row[b + '_error']:.2e}" for b in gpu_backends]
        cells += [f"{row['xgb_gpu_error']:.2e}"] if xgb_cuda else []
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Interaction and interventional values, med models: median (IQR) seconds",
              "", "Interactions: 1,000 rows; interventional: 1,000 rows, 100 background rows. "
              "Differences against our numba CPU kernel.", "",
              "| model | values | implementation | seconds | max abs difference |",
              "|---|---|---|---|---|"]
    for model, kind, implementation, timing, error in other_rows:
        lines.append(f"| {model} | {kind} | {implementation} | {_fmt(timing)} | "
                     f"{error:.2e} |")
    with open(output, "w") as handle:
        handle.write("\n".join(lines) + "\n")


def other_kernels(dataset, name, booster, ensemble, X, gpu_backends, xgb_cuda, repeats):
    """(model, values, implementation, timing, max difference) rows for the interaction
    and interventional kernels of one model."""
    import xgboost

    from skshapley.backends import get_backend
    from skshapley.tree._api import interventional_shap, path_dependent_interactions

    rng = np.random.default_rng(433)
    rows = X[rng.integers(0, X.shape[0], 1000)]
    background = X[rng.integers(0, X.shape[0], 100)]
    x, b = ensemble.prepare(rows), ensemble.prepare(background)
    out = []
    numba_kernels = get_backend("numba")
    cpu_interactions = timed(lambda: path_dependent_interactions(ensemble, x, numba_kernels),
                             repeats)
    reference = cpu_interactions[-1]
    devices = ["cpu", "cuda"] if xgb_cuda else ["cpu"]
    for device in devices:
        booster.set_param({"device": device})
        timing = timed(lambda r=rows: booster.predict(dmatrix(xgboost, dataset, r),
                                                      pred_interactions=True), repeats,
                       warm=device == "cuda")
        theirs = timing[-1]
        theirs = theirs[:, None] if theirs.ndim == 3 else theirs  # (n, outputs, d+1, d+1)
        error = float(np.abs(theirs[..., :-1, :-1] - reference).max())
        out.append((name, "interactions", f"XGBoost {device.upper()} pred_interactions",
                    timing, error))
    booster.set_param({"device": "cpu"})
    out.append((name, "interactions", "ours numba", cpu_interactions, 0.0))
    for backend in gpu_backends:
        kernels = get_backend(backend)
        timing = timed(lambda k=kernels: path_dependent_interactions(ensemble, x, k), repeats)
        error = float(np.abs(np.asarray(timing[-1]) - reference).max())
        out.append((name, "interactions", f"ours {backend}", timing, error))
    cpu_interventional = timed(lambda: interventional_shap(ensemble, x, b, numba_kernels),
                               repeats)
    reference = cpu_interventional[-1][0]
    out.append((name, "interventional", "ours numba", cpu_interventional, 0.0))
    for backend in gpu_backends:
        kernels = get_backend(backend)
        timing = timed(lambda k=kernels: interventional_shap(ensemble, x, b, k), repeats)
        error = float(np.abs(np.asarray(timing[-1][0]) - reference).max())
        out.append((name, "interventional", f"ours {backend}", timing, error))
    for row in out:
        print(row[:3], row[3][:3], row[4], flush=True)
    return out


def _max_difference(contribs, reference):
    """Largest |XGBoost's ``pred_contribs`` - ``reference``|: its (rows, features + 1) or
    (rows, outputs, features + 1), bias column dropped, against (rows, features,
    outputs)."""
    values = contribs[..., :-1]
    values = np.moveaxis(values, 1, 2) if values.ndim == 3 else values[..., None]
    return float(np.abs(values - reference).max())


def _xgboost_has_cuda(xgboost):
    """True when this XGBoost build has CUDA and a device is there to use it."""
    if not xgboost.build_info().get("USE_CUDA", False):
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy or no driver: XGBoost's GPU path cannot be timed either
        return False


def _fmt(timing):
    return f"{timing[0]:.4f} ({timing[1]:.4f})"


def _gpu_name():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception:
        return "none"


def _version(module):
    try:
        return __import__(module).__version__
    except ImportError:
        return "not installed"


if __name__ == "__main__":
    main()
