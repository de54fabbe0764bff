"""Claim: at equal coalition evaluations, ``method="auto"`` (the default of
``shapley_values`` and ``ShapleyExplainer``) has the lowest MSE of all estimators,
ours and the peers', at every budget of every game (ties within one standard error
count), is exact once the budget covers 2^d, and spends at most 1.2x the raw cost of
evaluating its coalitions.

Protocol (issue 4): XGBRegressor (100 trees, depth 6, learning rate 0.3, random_state 0,
one thread) on ``make_regression(1000, 10, noise=0.1, random_state=0)`` and on
scikit-learn's diabetes; XGBClassifier (same settings) on breast_cancer, explaining the
margin (d = 30). Background X[:100], explained rows X[100:110]; marginal (interventional)
game; exact reference from shap's interventional TreeExplainer. Budgets B = 10d, 50d,
200d, 1000d coalition evaluations per row, v(∅) and v(N) included; MSE over the 10 x d
matrix, mean ± standard error over seeds. For d = 10 every estimator reads v(S) from a
table of all 2^10 coalition values of each row (computed once with the model), so all
see the same game; for breast_cancer the game calls the model. Our estimators explain
the 10 rows as one multi-output game (one design, one model call), as ShapleyExplainer
does; the peers explain row by row, each row's game calling the model on that row only.
shapiq ≥ 1.5 (OddSHAP) needs Python ≥ 3.12: it runs in a separate interpreter
(``--oddshap-python``) on the same games and seeds, and its rows appear in the same table.

Peers at their best settings and equal threads: shap's KernelExplainer runs with
``l1_reg=False`` (its default, ``"num_features(10)"``, keeps only 10 features and biases
every estimate at d = 30); shapiq's KernelSHAP and kADDSHAP also run with the pairing
trick. Everything runs on one thread: XGBoost ``n_jobs=1``, numba
(``numba.set_num_threads(1)``) and BLAS (``threadpoolctl.threadpool_limits(1)``) for the
whole run, and the OddSHAP interpreter with ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS``/
``MKL_NUM_THREADS`` = 1 and the booster at ``nthread=1``.

Time: seconds per explained row, the fastest of the seeds' runs; "raw" is the time of one
game call on a design of the same size (what any estimator must pay), so "ours / raw" is
the overhead of the estimator itself. For d = 10 the accuracy runs read the precomputed
table, whose calls cost almost nothing, so their times are the estimators' own work; a
second timing table (``--no-model-timing`` skips it) reruns every method on seed 0, fastest
of 3 runs, on the same game with real model calls (the marginal game through XGBoost),
which is what a user pays.

Refuted if ``auto`` is beaten by more than one standard error at some budget.

Run: ``python benchmarks/bench_accuracy.py`` (``--quick``: 2 seeds, two budgets).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "accuracy.md"
OURS = ["auto", "kernel", "leverage", "kadd", "surrogate", "permutation"]
SHAPIQ = ["PermutationSamplingSV", "KernelSHAP", "KernelSHAP (paired)", "kADDSHAP",
          "kADDSHAP (paired)", "SVARM", "StratifiedSamplingSV", "OwenSamplingSV",
          "UnbiasedKernelSHAP"]
SHAP = ["PermutationExplainer", "KernelExplainer", "SamplingExplainer"]
EXACT_LEVEL = 1e-9  # MSE of two exact methods against the float32 TreeSHAP reference
ODDSHAP_SCRIPT = pathlib.Path(__file__).resolve().parent / "_oddshap_runner.py"


def load_data(name):
    import xgboost
    from sklearn.datasets import load_breast_cancer, load_diabetes, make_regression

    params = dict(n_estimators=100, max_depth=6, learning_rate=0.3, random_state=0, n_jobs=1)
    if name == "make_regression":
        X, y = make_regression(n_samples=1000, n_features=10, noise=0.1, random_state=0)
        model = xgboost.XGBRegressor(**params)
    elif name == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        model = xgboost.XGBRegressor(**params)
    else:
        X, y = load_breast_cancer(return_X_y=True)
        model = xgboost.XGBClassifier(**params)
    model.fit(X, y)
    if name == "breast_cancer":
        return X, lambda rows: model.predict(rows, output_margin=True), model
    return X, model.predict, model


def exact_values(model, X):
    import shap

    tree = shap.TreeExplainer(model, X[:100], feature_perturbation="interventional",
                              model_output="raw")
    return np.asarray(tree.shap_values(X[100:110]))  # (10, d)


class TableGame:
    """v(S) for the 10 rows from a table of all 2^d coalitions: (m, d) -> (m, 10)."""

    def __init__(self, predict, X):
        from skshapley.approximators import all_coalitions
        from skshapley.games import MarginalGame

        d = X.shape[1]
        self.table = MarginalGame(predict, X[100:110], X[:100]).values(all_coalitions(d))
        self.powers = 1 << np.arange(d)

    def __call__(self, coalitions):
        return self.table[np.atleast_2d(coalitions).astype(np.int64) @ self.powers]

    def row(self, row):
        """The game of explained row ``row`` alone: (m, d) -> (m,)."""
        return lambda coalitions: self(coalitions)[:, row]


class ModelGame:
    """v(S) for the 10 rows through the model: (m, d) -> (m, 10), one model call."""

    def __init__(self, predict, X):
        from skshapley.games import MarginalGame

        self.game = MarginalGame(predict, X[100:110], X[:100])
        self.rows = [MarginalGame(predict, X[100 + r:101 + r], X[:100]) for r in range(10)]

    def __call__(self, coalitions):
        return self.game.values(np.atleast_2d(coalitions))

    def row(self, row):
        """The game of explained row ``row`` alone, calling the model on that row only
        (a peer explaining row by row pays for one row, not ten)."""
        game = self.rows[row]
        # values has shape (m,) for a one-row game
        return lambda coalitions: np.ravel(game.values(np.atleast_2d(coalitions)))


class Counter:
    def __init__(self, function):
        self.function, self.count = function, 0

    def __call__(self, coalitions):
        coalitions = np.atleast_2d(coalitions)
        self.count += coalitions.shape[0]
        return self.function(coalitions)


def run_ours(name, game, d, budget, seed):
    """All 10 rows as one 10-output game, as ShapleyExplainer runs them."""
    from skshapley.approximators import shapley_values
    from skshapley.games import CallableGame

    wrapped = CallableGame(game, d)
    result = shapley_values(wrapped, method=name, budget=budget, random_state=seed)
    return np.asarray(result.values).T, result.n_evaluations, result.method


def run_shapiq(name, game, d, budget, seed):
    import shapiq.approximator as sa

    classes = {"PermutationSamplingSV": (sa.PermutationSamplingSV, {}),
               "KernelSHAP": (sa.KernelSHAP, {}),
               "KernelSHAP (paired)": (sa.KernelSHAP, {"pairing_trick": True}),
               "kADDSHAP": (sa.kADDSHAP, {"max_order": 2}),
               "kADDSHAP (paired)": (sa.kADDSHAP, {"max_order": 2, "pairing_trick": True}),
               "SVARM": (sa.SVARM, {}),
               "StratifiedSamplingSV": (sa.StratifiedSamplingSV, {}),
               "OwenSamplingSV": (sa.OwenSamplingSV, {}),
               "UnbiasedKernelSHAP": (sa.UnbiasedKernelSHAP, {})}
    cls, kwargs = classes[name]
    values, spent = [], 0
    for row in range(10):
        counter = Counter(game.row(row))
        result = cls(n=d, random_state=seed, **kwargs).approximate(budget=budget, game=counter)
        values.append([result[(j,)] for j in range(d)])
        spent = max(spent, counter.count)
    return np.array(values), spent, name


def run_shap(name, game, d, budget, seed):
    import shap

    values, spent = [], 0
    for row in range(10):
        counter = Counter(game.row(row))

        def model(rows, counter=counter):  # coalition indicators: background 0, row 1
            return counter(rows > 0.5)

        if name == "PermutationExplainer":
            explainer = shap.PermutationExplainer(model, np.zeros((1, d)), seed=seed)
            phi = explainer(np.ones((1, d)), max_evals=budget, silent=True).values[0]
        elif name == "KernelExplainer":
            np.random.seed(seed)  # noqa: NPY002 - shap samples with numpy's global state
            # l1_reg=False: the default "num_features(10)" keeps 10 features (biased at d = 30)
            phi = shap.KernelExplainer(model, np.zeros((1, d))).shap_values(
                np.ones(d), nsamples=budget - 2, l1_reg=False, silent=True)
        else:
            np.random.seed(seed)  # noqa: NPY002
            phi = shap.SamplingExplainer(model, np.zeros((1, d))).shap_values(
                np.ones(d), nsamples=budget, silent=True)
        values.append(np.asarray(phi).reshape(d))
        spent = max(spent, counter.count)
    return np.array(values), spent, name


def raw_seconds(game, d, budget, repeats=3):
    """Time of evaluating ``budget`` coalitions of the 10 rows in one call, per row."""
    rng = np.random.default_rng(0)
    coalitions = rng.random((budget, d)) < 0.5
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        game(coalitions)
        times.append(time.perf_counter() - start)
    return min(times) / 10


def oddshap_rows(python, game, model, X, budgets, seeds, exact, repeats=1):
    """Run shapiq's OddSHAP in another interpreter on the same game (the same table, or
    the same saved booster); {budget: (mse per seed, seconds per row, version)}."""
    if python is None:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        out, game_file = tmp / "oddshap.json", tmp / "game.npz"
        if isinstance(game, TableGame):
            np.savez(game_file, table=game.table)
        else:
            model.save_model(tmp / "model.json")
            np.savez(game_file, background=X[:100], rows=X[100:110],
                     model=str(tmp / "model.json"))
        command = [python, str(ODDSHAP_SCRIPT), str(game_file), json.dumps(budgets),
                   str(seeds), str(out), str(repeats)]
        one_thread = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                             "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
        done = subprocess.run(command, capture_output=True, text=True, timeout=7200,
                              env={**os.environ, **one_thread})
        if done.returncode != 0:
            print("OddSHAP failed:", done.stderr[-2000:], file=sys.stderr)
            return {}
        payload = json.loads(out.read_text())
    return {int(b): (np.array([np.mean((np.array(e) - exact) ** 2) for e in v["values"]]),
                     v["seconds"], v["version"]) for b, v in payload.items()}


def measure(game, d, budgets, seeds, exact, runners, dataset, repeats=1):
    """{(label, budget): (errors per seed, evaluations, seconds per row, raw, picked)};
    seconds: the fastest run (of the seeds, each repeated ``repeats`` times) per row."""
    rows = {}
    for budget in budgets:
        raw = raw_seconds(game, d, budget)
        for label, runner, name in runners:
            if d > 12 and budget >= 1000 * d and label.startswith("shap "):
                continue  # hours per run through the model, row by row; not run
            if d > 12 and budget >= 200 * d and name in ("KernelExplainer",
                                                         "UnbiasedKernelSHAP"):
                continue
            errors, spent, chosen, seconds = [], 0, set(), np.inf
            try:
                for seed in range(seeds):
                    for _ in range(repeats):
                        start = time.perf_counter()
                        values, count, picked = runner(name, game, d, budget, seed)
                        seconds = min(seconds, (time.perf_counter() - start) / 10)
                    errors.append(np.mean((values - exact) ** 2))
                    spent, _ = max(spent, count), chosen.add(picked)
            except Exception as err:  # a peer that refuses a budget is reported
                print(dataset, label, budget, "failed:", err, flush=True)
                continue
            rows[(label, budget)] = (np.array(errors), spent, seconds, raw,
                                     "/".join(sorted(chosen)))
            print(dataset, label, budget, f"{np.mean(errors):.3g}", spent,
                  f"{seconds:.4f}s", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--datasets", default="make_regression,diabetes,breast_cancer")
    parser.add_argument("--multipliers", default="10,50,200,1000",
                        help="budgets per player for d = 10 games")
    parser.add_argument("--wide-multipliers", default="10,50,200,1000",
                        help="budgets per player for breast_cancer (d = 30)")
    parser.add_argument("--methods", default=None,
                        help="regular expression: run only the methods whose label matches")
    parser.add_argument("--oddshap-python", default=None,
                        help="a Python >= 3.12 with shapiq >= 1.8 and xgboost")
    parser.add_argument("--no-model-timing", action="store_true",
                        help="skip the d = 10 timing rerun with real model calls")
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    import numba
    from threadpoolctl import threadpool_limits

    import skshapley

    header = skshapley.show_versions(as_markdown=True)
    load = "Load average at the start: {:.2f}, {:.2f}, {:.2f} (1, 5, 15 min).".format(
        *os.getloadavg())
    numba.set_num_threads(1)
    limits = threadpool_limits(1)  # BLAS and OpenMP on one thread for the whole run
    sections, verdicts = [], []
    for dataset in args.datasets.split(","):
        X, predict, model = load_data(dataset)
        d = X.shape[1]
        exact = exact_values(model, X)
        game = TableGame(predict, X) if d <= 12 else ModelGame(predict, X)
        chosen = args.multipliers if d <= 12 else args.wide_multipliers
        multipliers = tuple(int(m) for m in chosen.split(","))
        seeds = args.seeds
        if args.quick:
            multipliers, seeds = multipliers[:2], 2
        budgets = [m * d for m in multipliers]
        runners = ([(f"skshapley {n}", run_ours, n) for n in OURS]
                   + [(f"shapiq {n}", run_shapiq, n) for n in SHAPIQ]
                   + [(f"shap {n}", run_shap, n) for n in SHAP])
        if args.methods:
            import re

            runners = [r for r in runners if re.search(args.methods, r[0])]
        rows = measure(game, d, budgets, seeds, exact, runners, dataset)
        for budget, (errors, seconds, version) in oddshap_rows(
                args.oddshap_python, game, model, X, budgets, seeds, exact).items():
            rows[(f"shapiq {version} OddSHAP", budget)] = (errors, budget, seconds, None, "")
        model_rows = None
        if isinstance(game, TableGame) and not args.no_model_timing:
            model_game = ModelGame(predict, X)
            model_rows = measure(model_game, d, budgets, 1, exact, runners,
                                 f"{dataset} (model calls)", repeats=3)
            for budget, (errors, seconds, version) in oddshap_rows(
                    args.oddshap_python, model_game, model, X, budgets, 1, exact,
                    repeats=3).items():
                model_rows[(f"shapiq {version} OddSHAP", budget)] = (errors, budget,
                                                                     seconds, None, "")
        section, verdict = render(dataset, d, budgets, rows, model_rows)
        sections.append(section)
        verdicts.extend(verdict)
        write_report(args, argv, header, load, verdicts, sections)  # after every dataset
    limits.restore_original_limits()


def write_report(args, argv, header, load, verdicts, sections):
    command = "python benchmarks/bench_accuracy.py " + " ".join(argv or sys.argv[1:])
    text = f"""# Accuracy per model evaluation: regression estimators and peers

{__doc__.split("Run:")[0].strip()}

## Machine and versions

{header}

## Command

`{command.strip()}`

{load}

## Verdict

{chr(10).join(verdicts)}

{chr(10).join(sections)}
"""
    if args.quick and args.output == RESULTS:
        print(text)
        return
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"written {args.output}")


def timing_table(rows, budgets):
    """Seconds per explained row of every method, ours with its multiple of raw."""
    labels = list(dict.fromkeys(label for label, _ in rows))
    lines = ["| method | " + " | ".join(f"B = {b}" for b in budgets) + " |",
             "|---|" + "---|" * len(budgets)]
    raw = {b: next((rows[(lab, b)][3] for lab in labels
                    if (lab, b) in rows and rows[(lab, b)][3] is not None), np.nan)
           for b in budgets}
    lines.append("| raw game evaluation | " + " | ".join(f"{raw[b]:.4f}" for b in budgets)
                 + " |")
    for label in labels:
        cells = []
        for b in budgets:
            if (label, b) not in rows:
                cells.append("—")
                continue
            seconds = rows[(label, b)][2]
            ratio = f" ({seconds / raw[b]:.2f}x raw)" if label.startswith("skshapley") else ""
            cells.append(f"{seconds:.4f}{ratio}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def render(dataset, d, budgets, rows, model_rows=None):
    labels = list(dict.fromkeys(label for label, _ in rows))
    lines = [f"## {dataset} (d = {d})", "",
             "MSE over the 10 x d matrix, mean ± standard error over seeds; **bold**: "
             "lowest mean at that budget.", "",
             "| method | " + " | ".join(f"B = {b}" for b in budgets) + " |",
             "|---|" + "---|" * len(budgets)]
    best = {b: min((rows[(lab, b)][0].mean(), lab) for lab in labels if (lab, b) in rows)
            for b in budgets}
    for label in labels:
        cells = []
        for b in budgets:
            if (label, b) not in rows:
                cells.append("—")
                continue
            errors = rows[(label, b)][0]
            se = errors.std(ddof=1) / np.sqrt(len(errors)) if len(errors) > 1 else 0.0
            text = f"{errors.mean():.2e} ± {se:.1e}"
            cells.append(f"**{text}**" if best[b][1] == label else text)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    game_kind = ("the precomputed table of all 2^d coalition values (no model calls)"
                 if d <= 12 else "real model calls")
    lines += ["", f"Seconds per explained row on {game_kind}, one thread, the fastest of "
              "the seeds' runs (ours: the 10 rows in one game); raw = one game call on a "
              "design of the same size, per row (fastest of 3).", ""]
    lines += timing_table(rows, budgets)
    picked = {b: rows[("skshapley auto", b)][4] for b in budgets if ("skshapley auto", b) in rows}
    lines += ["", "`auto` picked: " + ", ".join(f"B = {b}: {m}" for b, m in picked.items()), ""]
    if model_rows:
        lines += ["Seconds per explained row with real model calls (the same game through "
                  "XGBoost, one thread; each method on seed 0, fastest of 3 runs; peers call "
                  "the model on one row at a time, ours on the 10 rows at once); raw = one "
                  "model game call on a design of the same size, per row (fastest of 3).",
                  ""]
        lines += timing_table(model_rows, budgets)
        picked_model = {b: model_rows[("skshapley auto", b)][4] for b in budgets
                        if ("skshapley auto", b) in model_rows}
        lines += ["", "`auto` picked with model calls: " + ", ".join(
            f"B = {b}: {m}" for b, m in picked_model.items()), ""]
    verdict = []
    for b in budgets:
        if ("skshapley auto", b) not in rows:
            continue
        errors = rows[("skshapley auto", b)][0]
        mean = errors.mean()
        se = errors.std(ddof=1) / np.sqrt(len(errors)) if len(errors) > 1 else 0.0
        best_mean, best_label = best[b]
        # Exact methods agree to round-off against the TreeSHAP reference (~1e-11).
        tie = mean - best_mean <= se + _se(rows[(best_label, b)][0]) or mean < EXACT_LEVEL
        if best_label == "skshapley auto" or tie:
            verdict.append(f"- {dataset}, B = {b}: auto ({picked[b]}) is best or tied "
                           f"({mean:.2e}; best {best_label} {best_mean:.2e}).")
        else:
            verdict.append(f"- {dataset}, B = {b}: **auto ({picked[b]}) loses** to "
                           f"{best_label}: {mean:.2e} vs {best_mean:.2e} "
                           f"({mean / best_mean:.1f}x).")
    # the cost claim: at most 1.2x the raw cost of the model calls it makes
    timed_rows = model_rows if model_rows else (rows if d > 12 else None)
    for b in budgets if timed_rows else ():
        if ("skshapley auto", b) not in timed_rows:
            continue
        _, _, seconds, raw, _ = timed_rows[("skshapley auto", b)]
        ratio = seconds / raw
        verdict.append(f"- {dataset}, B = {b}: auto costs {ratio:.2f}x the raw model calls "
                       + ("(within 1.2x)." if ratio <= 1.2 else "(**above 1.2x**)."))
    return "\n".join(lines), verdict


def _se(errors):
    return errors.std(ddof=1) / np.sqrt(len(errors)) if len(errors) > 1 else 0.0


if __name__ == "__main__":
    main()
