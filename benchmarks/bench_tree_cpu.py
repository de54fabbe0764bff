"""CPU TreeSHAP benchmark (§8.6.2 goals): ours (numba) vs XGBoost and shap, same threads.

- XGBoost ``hist`` models, thesis small/med variants (§8.5: 10/100 rounds × depth 3/8,
  learning rate 0.01) on synthetic data of the cal_housing (20,640 × 8) and adult
  (48,842 × 14) shapes: XGBoost's ``pred_contribs`` vs our kernel, 10,000 rows.
- scikit-learn random forests (100 trees, depth 8 and 12) on the cal_housing shape:
  shap's C++ ``TreeExplainer`` (path-dependent, 10,000 rows) and its interventional mode
  (100 background rows; 1,000, 100 and 10 rows) vs ours.
- An XGBoost model with categorical (partition) splits, 200 rounds × depth 6, on two
  numeric and two categorical columns (20 and 12 levels; ``--categorical-only`` runs
  just this row): XGBoost's ``pred_contribs`` vs ours, 10,000 rows.
All with ``--threads`` threads (default: the machine's cores) (XGBoost ``nthread``,
numba's pool; shap's C++ path-dependent code is single-threaded, its interventional one
too). Medians of 3 runs after a warm-up (1 run for 1,000 interventional rows, at least 5
for 100 and 10). Accuracy: max |ours − peer|.

    python benchmarks/bench_tree_cpu.py --output benchmarks/results/tree_cpu.md
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from bench_tree_gpu import make_data


def timed(function, repeats):
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def write_table(path, rows_out, threads, repeats, complete=False):
    """Write the results so far (the run is long; a cut-off run still leaves its rows)."""
    import skshapley

    lines = ["# CPU TreeSHAP", "", "## Machine and versions", "",
             skshapley.show_versions(as_markdown=True), "",
             f"{threads} thread(s) for XGBoost and numba (shap's C++ code is single-threaded). "
             "Synthetic data of the thesis datasets' shapes (no downloads). Median seconds "
             f"of {repeats} runs after a warm-up (interventional: 1 run for 1,000 rows, at least "
             "5 for 100 and 10).", "",
             "| model | peer | rows | peer (s) | ours numba (s) | ours/peer speed-up | "
             "max abs difference |", "|---|---|---|---|---|---|---|"]
    for name, peer_name, n, peer, ours, error in rows_out:
        lines.append(f"| {name} | {peer_name} | {n:,} | {peer:.3f} | {ours:.3f} | "
                     f"{peer / ours:.2f}× | {error:.1e} |")
    if not complete:
        lines += ["", "_Partial: the run is still going or was stopped._"]
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print(lines[-1], flush=True)


def path_dependent_versus(peer_values, ensemble, rows, kernels, repeats):
    """(peer seconds, our seconds, max |ours - peer|) for path-dependent SHAP values of
    ``rows``; ``peer_values()`` computes the peer's (n_rows, n_features) values."""
    from skshapley.tree import tree_shap
    from skshapley.tree._api import path_dependent_shap

    prepared = ensemble.prepare(rows)
    peer = timed(peer_values, repeats)
    ours = timed(lambda: path_dependent_shap(ensemble, prepared, kernels), repeats)
    error = np.abs(tree_shap(ensemble, rows).values[..., 0] - peer_values()).max()
    return peer, ours, error


def categorical_row(n_rows, threads, repeats):
    """XGBoost with categorical splits: pred_contribs vs ours on category codes."""
    import numba
    import pandas as pd
    import xgboost

    from skshapley.backends import get_backend
    from skshapley.tree import read_model

    numba.set_num_threads(threads)
    rng = np.random.default_rng(0)
    n = 20_000
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                          "c": pd.Categorical(rng.integers(0, 20, n)),
                          "d": pd.Categorical(rng.integers(0, 12, n))})
    codes = np.column_stack([frame["a"], frame["b"], frame["c"].cat.codes,
                             frame["d"].cat.codes]).astype(float)
    y = (codes[:, 0] * codes[:, 1] + np.sin(codes[:, 2]) + np.cos(codes[:, 3]) * codes[:, 0]
         + 0.1 * rng.normal(size=n))
    model = xgboost.XGBRegressor(n_estimators=200, max_depth=6, enable_categorical=True,
                                 tree_method="hist", max_cat_to_onehot=1, n_jobs=threads,
                                 random_state=0).fit(frame, y)
    booster = model.get_booster()
    start = time.perf_counter()
    ensemble = read_model(model)
    read_seconds = time.perf_counter() - start
    rows = codes[rng.integers(0, n, n_rows)]
    matrix = xgboost.DMatrix(rows, feature_names=booster.feature_names,
                             feature_types=booster.feature_types, enable_categorical=True)
    peer, ours, error = path_dependent_versus(
        lambda: booster.predict(matrix, pred_contribs=True)[:, :-1], ensemble, rows,
        get_backend("numba"), repeats)
    leaves = int((booster.trees_to_dataframe()["Feature"] == "Leaf").sum())
    name = (f"XGBoost categorical 200 × depth 6 ({leaves:,} leaves → {ensemble.n_paths:,} "
            f"paths; read {read_seconds:.1f} s)")
    return name, "XGBoost pred_contribs", n_rows, peer, ours, error


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="benchmarks/results/tree_cpu.md")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="threads for XGBoost and numba (1 keeps a shared machine fair)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--interventional-only", action="store_true",
                        help="only the interventional rows (minutes instead of an hour)")
    parser.add_argument("--categorical-only", action="store_true",
                        help="only the XGBoost categorical row")
    args = parser.parse_args(argv)
    if args.categorical_only:
        rows_out = [categorical_row(args.rows, args.threads, args.repeats)]
        write_table(args.output, rows_out, args.threads, args.repeats, complete=True)
        return

    import numba
    import shap
    import xgboost
    from sklearn.ensemble import RandomForestRegressor

    from skshapley.backends import get_backend
    from skshapley.tree import read_model, tree_shap
    from skshapley.tree._api import interventional_shap

    threads = args.threads
    numba.set_num_threads(threads)
    kernels = get_backend("numba")
    rows_out = []
    rng = np.random.default_rng(432)
    for dataset in () if args.interventional_only else ("cal_housing", "adult"):
        X, y, objective, _ = make_data(dataset)
        for variant, (rounds, depth) in (("small", (10, 3)), ("med", (100, 8))):
            booster = xgboost.train(dict(tree_method="hist", learning_rate=0.01,
                                         max_depth=depth, objective=objective,
                                         nthread=threads),
                                    xgboost.DMatrix(X, label=y), rounds)
            rows = X[rng.integers(0, len(X), args.rows)]
            ensemble = read_model(booster)
            dmatrix = xgboost.DMatrix(rows)
            peer, ours, error = path_dependent_versus(
                lambda b=booster, m=dmatrix: b.predict(m, pred_contribs=True)[:, :-1],
                ensemble, rows, kernels, args.repeats)
            rows_out.append((f"{dataset}-{variant} (XGBoost, {ensemble.n_paths:,} paths)",
                             "XGBoost pred_contribs", args.rows, peer, ours, error))
            write_table(args.output, rows_out, threads, args.repeats)
    X, y, _, _ = make_data("cal_housing")
    for depth in (8, 12):
        forest = RandomForestRegressor(n_estimators=100, max_depth=depth, n_jobs=threads,
                                       random_state=0).fit(X, y)
        ensemble = read_model(forest)
        rows = X[rng.integers(0, len(X), args.rows)]
        name = f"RandomForest 100 × depth {depth} ({ensemble.n_paths:,} paths)"
        if not args.interventional_only:
            explainer = shap.TreeExplainer(forest)
            peer, ours, error = path_dependent_versus(
                lambda e=explainer, r=rows: e.shap_values(r, check_additivity=False),
                ensemble, rows, kernels, args.repeats)
            rows_out.append((name, "shap TreeExplainer (path-dependent)", args.rows, peer,
                             ours, error))
        background = X[:100]
        interventional = shap.TreeExplainer(forest, background,
                                            feature_perturbation="interventional")
        prepared_background = ensemble.prepare(background)
        # 1,000 rows, and few rows, where the per-background work weighs most
        for n_few, repeats in ((1000, 1), (100, max(args.repeats, 5)), (10, max(args.repeats, 5))):
            few = rows[:n_few]
            prepared_few = ensemble.prepare(few)
            peer = timed(lambda e=interventional, r=few:
                         e.shap_values(r, check_additivity=False), repeats=repeats)
            ours = timed(lambda e=ensemble, x=prepared_few, b=prepared_background:
                         interventional_shap(e, x, b, kernels), repeats=repeats)
            error = np.abs(interventional.shap_values(few, check_additivity=False)
                           - tree_shap(ensemble, few, background=background).values[..., 0]
                           ).max()
            rows_out.append((name, "shap TreeExplainer (interventional, 100 background)",
                             n_few, peer, ours, error))
        write_table(args.output, rows_out, threads, args.repeats)

    write_table(args.output, rows_out, threads, args.repeats, complete=True)

if __name__ == "__main__":
    main()
