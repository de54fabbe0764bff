"""CPU TreeSHAP benchmark (§8.6.2 goals): ours (numba) vs XGBoost and shap, same threads.

- XGBoost ``hist`` models, thesis small/med variants (§8.5: 10/100 rounds × depth 3/8,
  learning rate 0.01) on synthetic data of the cal_housing (20,640 × 8) and adult
  (48,842 × 14) shapes: XGBoost's ``pred_contribs`` vs our kernel, 10,000 rows.
- scikit-learn random forests (100 trees, depth 8 and 12) on the cal_housing shape:
  shap's C++ ``TreeExplainer`` (path-dependent, 10,000, 10 and 1 rows) and its
  interventional mode (100 background rows; 1,000, 100, 10, 3 and 1 rows) vs ours; rows
  that walk the trees (under ``WALK_ROWS``) are timed again on a new background each call.
- Models with categorical splits, 200 rounds × depth 6 (LightGBM: 64 leaves), on two
  numeric and two categorical columns (20 and 12 levels; ``--categorical-only`` runs
  just these rows), 10,000 rows: XGBoost's ``pred_contribs`` and LightGBM's
  ``pred_contrib`` vs ours, and shap's ``TreeExplainer`` on HistGradientBoosting (it
  misreads categorical splits: the row gives both efficiency errors).
All with ``--threads`` threads (default: the machine's cores) (XGBoost ``nthread``,
numba's pool; shap's C++ path-dependent code is single-threaded, its interventional one
too). Medians of 3 runs after a warm-up (1 run for 1,000 interventional rows, at least 5
for 100 rows and fewer). Accuracy: max |ours − peer|.

    python benchmarks/bench_tree_cpu.py --output benchmarks/results/tree_cpu.md
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _report import timed as repeat_time
from bench_tree_gpu import make_data


def timed(function, repeats):
    """Median seconds of ``repeats`` calls after a warm-up."""
    return repeat_time(function, repeats, statistic=np.median)


def write_table(path, rows_out, threads, repeats, complete=False):
    """Write the results so far (the run is long; a cut-off run still leaves its rows)."""
    import skshapley

    lines = ["# CPU TreeSHAP", "", "## Machine and versions", "",
             skshapley.show_versions(as_markdown=True), "",
             f"{threads} thread(s) for XGBoost and numba (shap's C++ code is single-threaded). "
             "Synthetic data of the thesis datasets' shapes (no downloads). Median seconds "
             f"of {repeats} runs after a warm-up (interventional: 1 run for 1,000 rows; at least "
             "5 for 100 rows and fewer).", "",
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


def _categorical_data(n=20_000):
    """Two numeric and two categorical columns (20 and 12 levels), as a DataFrame of
    pandas categoricals and as codes, and a target with interactions."""
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                          "c": pd.Categorical(rng.integers(0, 20, n)),
                          "d": pd.Categorical(rng.integers(0, 12, n))})
    codes = np.column_stack([frame["a"], frame["b"], frame["c"].cat.codes,
                             frame["d"].cat.codes]).astype(float)
    y = (codes[:, 0] * codes[:, 1] + np.sin(codes[:, 2]) + np.cos(codes[:, 3]) * codes[:, 0]
         + 0.1 * rng.normal(size=n))
    return frame, codes, y, rng


def _read_timed(model):
    from skshapley.tree import read_model

    start = time.perf_counter()
    ensemble = read_model(model)
    return ensemble, time.perf_counter() - start


def categorical_rows(n_rows, threads, repeats):
    """Models with categorical splits, 200 rounds of depth 6 (64 leaves for LightGBM):
    XGBoost's pred_contribs and LightGBM's pred_contrib on category codes, and shap's
    TreeExplainer on HistGradientBoosting (whose categorical splits it misreads: its
    efficiency error is reported), against ours."""
    import lightgbm
    import numba
    import shap
    import xgboost
    from sklearn.ensemble import HistGradientBoostingRegressor

    from skshapley.backends import get_backend
    from skshapley.tree import tree_shap
    from skshapley.tree._api import path_dependent_shap

    numba.set_num_threads(threads)
    kernels = get_backend("numba")
    frame, codes, y, rng = _categorical_data()
    pick = rng.integers(0, len(y), n_rows)
    rows = codes[pick]
    out = []

    model = xgboost.XGBRegressor(n_estimators=200, max_depth=6, enable_categorical=True,
                                 tree_method="hist", max_cat_to_onehot=1, n_jobs=threads,
                                 random_state=0).fit(frame, y)
    booster = model.get_booster()
    ensemble, read = _read_timed(model)
    matrix = xgboost.DMatrix(rows, feature_names=booster.feature_names,
                             feature_types=booster.feature_types, enable_categorical=True)
    peer, ours, error = path_dependent_versus(
        lambda: booster.predict(matrix, pred_contribs=True)[:, :-1], ensemble, rows,
        kernels, repeats)
    leaves = int((booster.trees_to_dataframe()["Feature"] == "Leaf").sum())
    out.append((f"XGBoost categorical 200 × depth 6 ({leaves:,} leaves, {ensemble.n_paths:,} "
                f"paths; read {read:.1f} s)", "XGBoost pred_contribs", n_rows, peer, ours,
                error))

    model = lightgbm.LGBMRegressor(n_estimators=200, num_leaves=64, n_jobs=threads,
                                   verbose=-1, random_state=0).fit(frame, y)
    ensemble, read = _read_timed(model)
    peer, ours, error = path_dependent_versus(
        lambda: model.booster_.predict(rows, pred_contrib=True, num_threads=threads)[:, :-1],
        ensemble, rows, kernels, repeats)
    leaves = sum(info["num_leaves"] for info in model.booster_.dump_model()["tree_info"])
    out.append((f"LightGBM categorical 200 × 64 leaves ({leaves:,} leaves, "
                f"{ensemble.n_paths:,} paths; read {read:.1f} s)", "LightGBM pred_contrib",
                n_rows, peer, ours, error))

    model = HistGradientBoostingRegressor(max_iter=200, max_depth=6, max_leaf_nodes=None,
                                          early_stopping=False, random_state=0).fit(frame, y)
    ensemble, read = _read_timed(model)
    explained = frame.iloc[pick]
    tree_space = ensemble.prepare(explained)
    explainer = shap.TreeExplainer(model)
    peer = timed(lambda: explainer.shap_values(explained, check_additivity=False), repeats)
    ours = timed(lambda: path_dependent_shap(ensemble, tree_space, kernels), repeats)
    shap_values = explainer.shap_values(explained, check_additivity=False)
    ours_values = tree_shap(ensemble, explained).values[..., 0]
    prediction = model.predict(explained)
    shap_off = np.abs(shap_values.sum(axis=1) + explainer.expected_value - prediction).max()
    ours_off = np.abs(ours_values.sum(axis=1) + ensemble.expected_value[0] - prediction).max()
    leaves = sum(int(p[0].nodes["is_leaf"].sum()) for p in model._predictors)
    out.append((f"HistGradientBoosting categorical 200 × depth 6 ({leaves:,} leaves, "
                f"{ensemble.n_paths:,} paths; read {read:.1f} s; efficiency error: shap "
                f"{shap_off:.2g}, ours {ours_off:.1g})", "shap TreeExplainer", n_rows, peer,
                ours, np.abs(shap_values - ours_values).max()))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="benchmarks/results/tree_cpu.md")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="threads for XGBoost and numba (1 keeps a shared machine fair)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--interventional-only", action="store_true",
                        help="only the forests' interventional rows and their path-dependent "
                             "values of 10 and 1 rows (minutes instead of an hour)")
    parser.add_argument("--categorical-only", action="store_true",
                        help="only the rows of models with categorical splits")
    args = parser.parse_args(argv)
    if args.categorical_only:
        rows_out = categorical_rows(args.rows, args.threads, args.repeats)
        write_table(args.output, rows_out, args.threads, args.repeats, complete=True)
        return

    import numba
    import shap
    import xgboost
    from sklearn.ensemble import RandomForestRegressor

    from skshapley.backends import get_backend
    from skshapley.tree import _cache, read_model, tree_shap
    from skshapley.tree._api import WALK_ROWS, interventional_shap

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
        explainer = shap.TreeExplainer(forest)
        # all rows, then few rows, where per-call and per-path costs weigh most
        sizes = ((10, 1) if args.interventional_only else (args.rows, 10, 1))
        for n_rows in sizes:
            few = rows[:n_rows]
            peer, ours, error = path_dependent_versus(
                lambda e=explainer, r=few: e.shap_values(r, check_additivity=False),
                ensemble, few, kernels, args.repeats if n_rows > 10 else max(args.repeats, 5))
            rows_out.append((name, "shap TreeExplainer (path-dependent)", n_rows, peer,
                             ours, error))
        background = X[:100]
        interventional = shap.TreeExplainer(forest, background,
                                            feature_perturbation="interventional")
        prepared_background = ensemble.prepare(background)
        # 1,000 rows, and few rows, where the per-background work weighs most
        few_repeats = max(args.repeats, 5)
        for n_few, repeats in ((1000, 1), (100, few_repeats), (10, few_repeats),
                               (3, few_repeats), (1, few_repeats)):
            few = rows[:n_few]
            prepared_few = ensemble.prepare(few)
            peer = timed(lambda e=interventional, r=few:
                         e.shap_values(r, check_additivity=False), repeats=repeats)
            # as shap's explainer holds its background, the walk of few rows keeps the
            # last background's row sets: timed warm, and below on a new background
            ours = timed(lambda e=ensemble, x=prepared_few, b=prepared_background:
                         interventional_shap(e, x, b, kernels), repeats=repeats)
            error = np.abs(interventional.shap_values(few, check_additivity=False)
                           - tree_shap(ensemble, few, background=background).values[..., 0]
                           ).max()
            peer_name = "shap TreeExplainer (interventional, 100 background)"
            rows_out.append((name, peer_name, n_few, peer, ours, error))
            if n_few < WALK_ROWS:
                def cold(e=ensemble, x=prepared_few, b=prepared_background):
                    _cache.forget_background()
                    return interventional_shap(e, x, b, kernels)

                rows_out.append((name, peer_name + "; ours on a new background", n_few, peer,
                                 timed(cold, repeats=repeats), error))
        write_table(args.output, rows_out, threads, args.repeats)

    if not args.interventional_only:
        rows_out += categorical_rows(args.rows, threads, args.repeats)
    write_table(args.output, rows_out, threads, args.repeats, complete=True)

if __name__ == "__main__":
    main()
