"""Claim: a linear model is explained in closed form (``ShapleyExplainer`` picks
``method="linear"``), as fast as shap's ``LinearExplainer`` and with its values, where
our sampling path took seconds to hours for the same values (the game of a linear model
is additive, so every ordering gives its exact values: only the time differs).

Before, ``method="auto"`` sampled coalitions for a LogisticRegression with more than 10
features, calling the model on the background for each. Peers in the same run, same game
(interventional, the same 100 background rows), values compared with shap's: shap's
``LinearExplainer`` with an ``Independent`` masker on those rows
(``feature_perturbation="interventional"``), and our previous path,
``method="permutation"`` at its default budget (2 + 64 (d - 1) evaluations per row).
The claim is refuted if the linear values differ from shap's beyond rounding (1e-9), or
if it is not within a small factor of shap's time.

Models: LogisticRegression (binary, explained on its decision_function, as "auto" does)
on seeded synthetic Gaussian data, d = 30 and d = 1000 (2000 training rows). Explained:
1 row and 1000 rows. Times: median (and IQR) of 5 calls after a warm-up call; the
sampling path once (it is minutes long), after a one-row warm-up; at d = 1000 its 1000
rows (about 4.5 hours) are not run. One process.

Run: python benchmarks/bench_linear.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _report import start_report


def _times(function, repeats):
    """(median, IQR) seconds of ``repeats`` calls after a warm-up call."""
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    q1, median, q3 = np.percentile(times, [25, 50, 75])
    return float(median), float(q3 - q1)


def _once(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def _model(n_features, seed=0):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2000, n_features))
    margin = X @ rng.normal(size=n_features) / np.sqrt(n_features)
    y = (margin + rng.normal(size=2000) > 0).astype(int)
    return LogisticRegression(max_iter=1000).fit(X, y), X


def run(n_features, row_counts, repeats, sampled_rows, log):
    import shap

    from skshapley import ShapleyExplainer

    model, X = _model(n_features)
    background = X[-100:]
    start = time.perf_counter()
    ours = ShapleyExplainer(model, prefit=True, background=background).fit(X)
    ours_fit = time.perf_counter() - start
    assert ours.method_ == "linear", ours.method_
    start = time.perf_counter()
    peer = shap.LinearExplainer(model, shap.maskers.Independent(background, max_samples=100))
    peer_fit = time.perf_counter() - start
    sampling = ShapleyExplainer(model, prefit=True, method="permutation",
                                background=background, random_state=0).fit(X)
    table = []
    for n_rows in row_counts:
        rows = X[:n_rows]
        reference = peer(rows).values
        values = ours.explain(rows).values
        median, iqr = _times(lambda rows=rows: ours.explain(rows), repeats)
        table.append((n_features, n_rows, "ours, auto -> linear", "-", ours_fit, median, iqr,
                      np.abs(values - reference).max()))
        median, iqr = _times(lambda rows=rows: peer(rows), repeats)
        table.append((n_features, n_rows, "shap LinearExplainer (Independent)", "-",
                      peer_fit, median, iqr, 0.0))
        if n_rows <= sampled_rows:
            sampling.explain(rows[:1])  # warm-up
            explanation, seconds = _once(lambda rows=rows: sampling.explain(rows))
            table.append((n_features, n_rows, "ours, method='permutation' (before)",
                          f"{sampling.max_evals_:,}", 0.0, seconds, float("nan"),
                          np.abs(explanation.values - reference).max()))
        else:
            table.append((n_features, n_rows, "ours, method='permutation' (before)",
                          f"{sampling.max_evals_:,}", 0.0, float("nan"), float("nan"),
                          float("nan")))
        log(f"d = {n_features}, {n_rows} rows: done")
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="benchmarks/results/linear.md")
    parser.add_argument("--quick", action="store_true", help="smoke size: d = 30, 1 and 20 rows")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    lines, log = start_report("Closed-form values of linear models", __doc__,
                              "bench_linear.py", argv if argv is not None else sys.argv[1:])
    if args.quick:
        cases = [(30, (1, 20), 20)]
    else:
        cases = [(30, (1, 1000), 1000), (1000, (1, 1000), 1)]
    table = []
    for n_features, row_counts, sampled_rows in cases:
        table += run(n_features, row_counts, args.repeats, sampled_rows, log)
    lines += ["## Results", "",
              "Seconds for all explained rows (median and IQR of "
              f"{args.repeats} calls; the sampling path one call, no IQR); fit: the "
              "explainer's set-up (our plan and its checks on the background; shap's "
              "constructor). Difference: max |values - shap's values| over rows, features "
              "and outputs; \"not run\" where the sampling path would take hours.", "",
              "| d | rows | implementation | evaluations per row | fit (s) | time (s) | "
              "IQR (s) | max abs difference to shap |",
              "|---|---|---|---|---|---|---|---|"]

    def number(value, spec):
        return "not run" if np.isnan(value) else format(value, spec)

    for d, n_rows, name, budget, fit, median, iqr, error in table:
        iqr_text = "-" if np.isnan(iqr) else format(iqr, ".2g")
        fit_text = "-" if name.startswith("ours, method") else format(fit, ".3g")
        lines.append(f"| {d} | {n_rows:,} | {name} | {budget} | {fit_text} | "
                     f"{number(median, '.3g')} | {iqr_text} | {number(error, '.1e')} |")
    with open(args.output, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines[-len(table) - 2:]))


if __name__ == "__main__":
    main()
