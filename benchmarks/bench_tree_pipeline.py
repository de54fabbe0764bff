"""Claim: a Pipeline of column-wise steps ending in a tree model is explained exactly by
TreeSHAP (``ShapleyExplainer`` picks ``method="tree"``), with the same values as the
exact enumeration of its interventional game and at a fraction of its time.

Before, such a pipeline was not a tree model to the explainer, which enumerated all 2^d
coalitions (d <= 10 here) or sampled. Peers in the same run, same game (interventional,
same background), values compared with the tree values: our exact enumeration
(``method="exact"``, what ``auto`` chose before) and shap's ``ExactExplainer`` with an
``Independent`` masker on the pipeline's ``predict`` (numeric data only: shap's masker
takes arrays). shap's ``TreeExplainer`` does not read Pipelines.

Pipelines: ``StandardScaler`` + GradientBoosting (100 trees) on scikit-learn's diabetes
data (d = 10); scikit-learn's recipe for categorical features (an OrdinalEncoder in a
ColumnTransformer, then HistGradientBoosting with ``categorical_features``) on seeded
synthetic houses (d = 4, two categorical columns). 100 background rows; 200 and 500
explained rows; best of 3 after a warm-up; one process.

    python benchmarks/bench_tree_pipeline.py --output benchmarks/results/tree_pipeline.md
"""

from __future__ import annotations

import argparse

import numpy as np
from _report import best_time


def scaled_boosting():
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_diabetes(return_X_y=True)
    model = make_pipeline(StandardScaler(),
                          GradientBoostingRegressor(n_estimators=100, random_state=0))
    return "StandardScaler + GradientBoosting (diabetes, d = 10)", model.fit(X, y), X, 200


def ordinal_recipe():
    import pandas as pd
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(4)
    n = 5000
    frame = pd.DataFrame({
        "area": rng.gamma(6.0, 15.0, n),
        "district": pd.Categorical(rng.choice(["north", "south", "east", "west"], n)),
        "age": rng.uniform(0, 80, n),
        "heating": pd.Categorical(rng.choice(["gas", "oil", "pump"], n)),
    })
    y = (2 * frame["area"] - 0.5 * frame["age"]
         + np.where(frame["district"] == "north", 40.0, 0.0)
         + np.where(frame["heating"] == "pump", 15.0, 0.0) + rng.normal(size=n))
    encoder = make_column_transformer(
        (OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan),
         make_column_selector(dtype_include="category")),
        remainder="passthrough", verbose_feature_names_out=False)
    model = make_pipeline(encoder, HistGradientBoostingRegressor(
        categorical_features=["district", "heating"], random_state=0))
    model.set_output(transform="pandas")
    return ("OrdinalEncoder recipe + HistGradientBoosting (houses, d = 4)",
            model.fit(frame, y), frame, 500)


def run(case, repeats):
    import shap

    from skshapley import ShapleyExplainer

    name, model, X, n_rows = case()
    take = X.iloc if hasattr(X, "iloc") else X
    rows, background = take[:n_rows], take[-100:]
    out = []
    tree = ShapleyExplainer(model, prefit=True, background=background).fit(X)
    assert tree.method_ == "tree", tree.method_
    values = tree.explain(rows).values
    seconds = best_time(lambda: tree.explain(rows), repeats)
    out.append((name, n_rows, "ours, method='tree' (now picked by auto)", seconds, 0.0))
    exact = ShapleyExplainer(model, prefit=True, method="exact", background=background).fit(X)
    seconds = best_time(lambda: exact.explain(rows), repeats)
    error = np.abs(exact.explain(rows).values - values).max()
    out.append((name, n_rows, "ours, method='exact' (auto's choice before)", seconds, error))
    if not hasattr(X, "iloc"):
        masker = shap.maskers.Independent(background, max_samples=len(background))
        peer = shap.explainers.Exact(model.predict, masker)
        seconds = best_time(lambda: peer(rows), repeats)
        error = np.abs(peer(rows).values - values).max()
        out.append((name, n_rows, "shap ExactExplainer (Independent masker)", seconds, error))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="benchmarks/results/tree_pipeline.md")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    import skshapley

    rows = run(scaled_boosting, args.repeats) + run(ordinal_recipe, args.repeats)
    lines = ["# TreeSHAP through Pipelines of column-wise steps", "",
             "## Machine and versions", "", skshapley.show_versions(as_markdown=True), "",
             "## Command", "", "    python benchmarks/bench_tree_pipeline.py", "",
             "Interventional game, 100 background rows; best of "
             f"{args.repeats} runs after a warm-up, seconds for all explained rows; "
             "difference: max |values - TreeSHAP values|.", "",
             "| pipeline | rows | implementation | seconds | speed-up of TreeSHAP | "
             "max difference |", "|---|---|---|---|---|---|"]
    tree_time = {}
    for name, n, implementation, seconds, error in rows:
        tree_time.setdefault(name, seconds)
        lines.append(f"| {name} | {n:,} | {implementation} | {seconds:.3f} | "
                     f"{seconds / tree_time[name]:.0f}x | {error:.1e} |")
    with open(args.output, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines[-len(rows) - 2:]))


if __name__ == "__main__":
    main()
