"""Claim (issue 30): ``skshapley.inspection.shapley_importance`` computes SAGE (Covert,
Lundberg & Lee 2020) with error bars that cover: at equal model work its estimates are
at least as close to the exact SAGE values as those of the ``sage-importance``
package's permutation estimator, its 95 % intervals cover the exact values about 95 %
of the time, and it costs about what the model's predictions cost.

Protocol. Data: scikit-learn's diabetes (442 x 10), split 75/25 with seed 0; model:
``HistGradientBoostingRegressor(max_iter=100, random_state=0)`` fitted on the training
rows. The game: ``--rows`` held-out rows (X, y), ``--background`` training rows, loss
the squared error (``scoring="neg_mean_squared_error"``; sage: ``loss="mse"``), so the
SAGE values of both packages estimate the same numbers. Reference: exact enumeration
(2^10 = 1,024 coalitions) by ``shapley_importance(max_evals=1024)``.

The unit of work is a predicted row. ``shapley_importance`` with ``max_evals=B`` (2 + 18
per antithetic pair of orderings) predicts ``(B - 2) * rows * background + rows +
background`` rows. sage's ``PermutationEstimator`` (``MarginalImputer`` on the same
background rows, ``detect_convergence=False``) predicts ``(d + 1) * background`` rows
per sampled (row, ordering) pair; it is given as many pairs as that buys, drawn from the
same held-out rows. Error: RMSE over the features of the estimate against the exact
values, averaged over ``--seeds`` seeds; coverage: share of (seed, feature) whose 95 %
interval holds the exact value (ours: t with n_draws - 1 degrees of freedom; sage:
+-1.96 of its standard deviation). Kendall's tau of the ranking against the exact one.
scikit-learn's ``permutation_importance`` (same scoring) runs with as many repeats as
the rows buy (``rows * d`` a repeat): it measures another quantity (the drop when one
column is shuffled, all others kept), so only its time and its ranking are reported.
Times are wall seconds, one process, one thread (OpenMP and BLAS), the median over the
seeds; the machine is shared (2 cores, other jobs running), so times are noisy.

Refuted if our RMSE is above sage's at equal rows, if our intervals cover less than
85 %, or if our time per predicted row is more than twice the model's own.

Run: ``python benchmarks/bench_importance.py`` (``--quick``: 2 seeds, two budgets).
sage-importance is not a dependency; install it to compare (``pip install
sage-importance``); without it its rows are left out.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import pathlib
import sys
import time
import warnings

# One thread for every method (OpenMP in the model, BLAS): the machine is shared, and
# OpenMP's barriers under oversubscription made single predict calls 10x slower.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
from _report import start_report  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "importance.md"
PAIR = 18  # evaluations per antithetic pair of orderings at d = 10: 2 (d - 1)


def _setup(n_rows, n_background):
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.model_selection import train_test_split

    data = load_diabetes()
    X_train, X_test, y_train, y_test = train_test_split(
        data.data, data.target, test_size=0.25, random_state=0)
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X_train, y_train)
    rng = np.random.RandomState(0)
    background = X_train[np.sort(rng.choice(len(X_train), n_background, replace=False))]
    return model, X_test[:n_rows], y_test[:n_rows], background, list(data.feature_names)


def _kendall(estimate, exact):
    from scipy.stats import kendalltau

    return float(kendalltau(estimate, exact).statistic)


def _ours(model, X, y, background, budget, seed):
    from skshapley.inspection import shapley_importance

    start = time.perf_counter()
    result = shapley_importance(model, X, y, scoring="neg_mean_squared_error",
                                background=background, max_evals=budget, random_state=seed)
    seconds = time.perf_counter() - start
    return result.importances_mean, result.ci_low, result.ci_high, seconds, result


def _sage(model, X, y, background, n_pairs, seed):
    import sage

    imputer = sage.MarginalImputer(model, background)
    estimator = sage.PermutationEstimator(imputer, "mse", random_state=seed)
    loops = -(-n_pairs // 512)
    batch = -(-n_pairs // loops)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        explanation = estimator(X, y, batch_size=batch, n_permutations=loops * batch,
                                detect_convergence=False, bar=False)
    seconds = time.perf_counter() - start
    half = 1.959963984540054 * explanation.std
    return (explanation.values, explanation.values - half, explanation.values + half,
            seconds, loops * batch, loops)


def _permutation_importance(model, X, y, n_repeats, seed):
    from sklearn.inspection import permutation_importance

    start = time.perf_counter()
    result = permutation_importance(model, X, y, scoring="neg_mean_squared_error",
                                    n_repeats=n_repeats, random_state=seed)
    return result.importances_mean, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--background", type=int, default=25)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--pairs", default="2,6,16,32",
                        help="antithetic pairs of orderings per run of ours")
    parser.add_argument("--coverage-seeds", type=int, default=100,
                        help="seeds of the coverage check of our intervals")
    parser.add_argument("--coverage-pairs", default="2,6",
                        help="antithetic pairs in the coverage check")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.pairs, args.coverage_seeds = 2, "2,6", 5
    pairs = [int(p) for p in args.pairs.split(",")]
    lines, log = start_report("SAGE: shapley_importance against sage-importance and "
                              "permutation_importance", __doc__, "bench_importance.py", argv)
    try:
        import sage  # noqa: F401

        has_sage = True
        from importlib.metadata import version

        log(f"sage-importance {version('sage-importance')} in the same process.")
    except ImportError:
        has_sage = False
        log("sage-importance is not installed: its rows are left out.")
    log()
    model, X, y, background, names = _setup(args.rows, args.background)
    n, m, d = len(X), len(background), X.shape[1]

    # the model's own speed: one batch as large as a run's
    batch = np.tile(X, (m, 1))
    model.predict(batch)
    start = time.perf_counter()
    model.predict(batch)
    per_row = (time.perf_counter() - start) / len(batch)

    start = time.perf_counter()
    exact = _ours(model, X, y, background, 2**d, 0)
    exact_seconds = time.perf_counter() - start
    exact_values, exact_result = exact[0], exact[4]
    exact_rows = (2**d - 2) * n * m + n + m
    gain = exact_result.full_score - exact_result.baseline_score
    log("## Setup and exact values")
    log()
    log(f"{n} held-out rows, {m} background rows, d = {d}; the model predicts "
        f"{per_row * 1e6:.2f} us a row in one batch of {len(batch)} rows.")
    log(f"Exact enumeration: {exact_result.n_evaluations} evaluations, "
        f"{exact_rows / 1e6:.2f} M rows, {exact_seconds:.1f} s "
        f"({exact_seconds / exact_result.n_evaluations * 1e3:.1f} ms an evaluation, "
        f"{exact_seconds / exact_rows * 1e6:.2f} us a predicted row: "
        f"{exact_seconds / exact_rows / per_row:.2f}x the model's own time).")
    log(f"MSE of the model {-exact_result.full_score:.1f}, of the mean prediction "
        f"{-exact_result.baseline_score:.1f}; the values add up to "
        f"{exact_values.sum():.4f} = {gain:.4f} (efficiency).")
    log()
    log("| feature | exact SAGE value (MSE units) |")
    log("|---|---|")
    for j in np.argsort(-exact_values, kind="stable"):
        log(f"| {names[j]} | {exact_values[j]:.2f} |")
    log()

    log("## Equal predicted rows")
    log()
    log("| method | rows predicted (M) | calls | time (s) | ms / call | us / row "
        "| RMSE vs exact | coverage of 95 % intervals | Kendall tau |")
    log("|---|---|---|---|---|---|---|---|---|")
    for n_pairs in pairs:
        budget = 2 + PAIR * n_pairs
        rows = (budget - 2) * n * m + n + m
        runs = {"ours": [], "sage": [], "permutation_importance": []}
        for seed in range(args.seeds):
            values, low, high, seconds, result = _ours(model, X, y, background, budget, seed)
            runs["ours"].append((values, low, high, seconds, rows, result.n_evaluations))
            if has_sage:
                sage_pairs = max(1, round(rows / ((d + 1) * m)))
                values, low, high, seconds, used, loops = _sage(model, X, y, background,
                                                                sage_pairs, seed)
                runs["sage"].append((values, low, high, seconds, used * (d + 1) * m,
                                     loops * (d + 1)))
            repeats = max(1, round((rows - n) / (d * n)))
            values, seconds = _permutation_importance(model, X, y, repeats, seed)
            runs["permutation_importance"].append((values, None, None, seconds,
                                                   n + repeats * d * n, 1 + repeats * d))
        for name, found in runs.items():
            if not found:
                continue
            values = np.array([f[0] for f in found])
            seconds = float(np.median([f[3] for f in found]))
            used = found[0][4]
            label = {"ours": f"ours, {n_pairs} pairs (max_evals={budget})",
                     "sage": "sage PermutationEstimator",
                     "permutation_importance": "sklearn permutation_importance "
                                               f"({max(1, round((rows - n) / (d * n)))} "
                                               "repeats)"}[name]
            if name == "permutation_importance":
                error, coverage = "(other quantity)", "-"
            else:
                rmse = np.sqrt(np.mean((values - exact_values) ** 2, axis=1)).mean()
                low = np.array([f[1] for f in found])
                high = np.array([f[2] for f in found])
                inside = (low <= exact_values) & (exact_values <= high)
                error, coverage = f"{rmse:.3f}", f"{inside.mean():.0%}"
            tau = np.mean([_kendall(v, exact_values) for v in values])
            calls = found[0][5]
            log(f"| {label} | {used / 1e6:.3f} | {calls} | {seconds:.2f} | "
                f"{seconds / calls * 1e3:.2f} | {seconds / used * 1e6:.2f} | {error} | "
                f"{coverage} | {tau:.2f} |")
    log()
    log("calls: coalition evaluations (ours; the model is called once per chunk of "
        "them), model calls (sage: d + 1 per batch of at most 512 pairs; "
        "permutation_importance: 1 + repeats x d).")
    log()
    log("## Coverage of our intervals over more seeds")
    log()
    log(f"{args.coverage_seeds} seeds (1000 onwards) x {d} features; the t interval with "
        "n_draws - 1 degrees of freedom.")
    log()
    log("| pairs (draws) | coverage | lowest feature's coverage | sd of (estimate - exact) "
        "/ std_error |")
    log("|---|---|---|---|")
    for n_pairs in [int(p) for p in args.coverage_pairs.split(",")]:
        inside, z = [], []
        for seed in range(1000, 1000 + args.coverage_seeds):
            values, low, high, _, result = _ours(model, X, y, background,
                                                 2 + PAIR * n_pairs, seed)
            inside.append((low <= exact_values) & (exact_values <= high))
            z.append((values - exact_values) / result.std_errors)
        inside, z = np.array(inside), np.array(z)
        t_sd = np.sqrt((n_pairs - 1) / (n_pairs - 3)) if n_pairs > 3 else float("inf")
        log(f"| {n_pairs} | {inside.mean():.1%} | {inside.mean(axis=0).min():.0%} | "
            f"{z.std():.2f} (t_{n_pairs - 1}: {t_sd:.2f}) |")
    RESULTS.write_text("\n".join(lines) + "\n")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        main(sys.argv[1:])
