"""Claim: at equal coalition evaluations, skshapley's samplers reproduce the accuracy
ranking of Mitchell et al. (JMLR 2022, Figs. 9-10) and our default beats
``shap.PermutationExplainer``, ``shap.KernelExplainer`` and the best ``shapiq``
approximator on at least 3 of 4 budgets per dataset.

Protocol (§2.11): XGBoost defaults (100 trees, depth 6, ``tree_method="exact"``) on
``make_regression(1000, 10, noise=0.1, random_state=47)``, scikit-learn's diabetes
(d = 10) and breast_cancer (d = 30, log-odds); explained rows X[:10], background X[:100];
interventional game. For d = 10 every method reads v(S) from a table of all 2^10
coalition values of each row (computed once with the model; exact values by
enumeration), so peers and we see the very same game; shap's explainers get it through a
model of coalition indicators (background = zeros, explained x = ones). For breast_cancer
the game calls the model and the reference is shap's interventional TreeExplainer on
float32-rounded data (it agrees with enumeration to ~4e-5 there, see explainer.md).
Budgets are coalition evaluations per row (B = 10d, 50d, 200d, 1000d; breast_cancer stops
at 200d); the error is the RMSE over the 10 x d matrix, averaged over repeats.

Refuted if our default loses to the best peer on two or more budgets of a dataset.

Run: ``python benchmarks/bench_samplers.py`` (``--quick``: 3 repeats, two budgets).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings

import numpy as np

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "samplers.md"
OURS = ["mc", "antithetic", "orthogonal", "sobol", "argsort_sobol", "philox", "herding", "sbq"]
OURS_OTHER = ["stratified", "owen", "owen_halved"]
SBQ_MAX_ORDERS = 200  # as in the paper: SBQ costs O(n^3)


def load(name):
    import xgboost
    from sklearn.datasets import load_breast_cancer, load_diabetes, make_regression

    if name == "make_regression":
        X, y = make_regression(n_samples=1000, n_features=10, noise=0.1, random_state=47)
        model = xgboost.XGBRegressor(n_estimators=100, max_depth=6, tree_method="exact",
                                     random_state=0, n_jobs=2)
    elif name == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        model = xgboost.XGBRegressor(n_estimators=100, max_depth=6, tree_method="exact",
                                     random_state=0, n_jobs=2)
    else:
        X, y = load_breast_cancer(return_X_y=True)
        X = X.astype(np.float32).astype(np.float64)  # see the float32 note in the docstring
        model = xgboost.XGBClassifier(n_estimators=100, max_depth=6, tree_method="exact",
                                      random_state=0, n_jobs=2)
    return X, model.fit(X, y)


def table_games(model, X):
    """All 2^d coalition values of each explained row, and the exact values."""
    from skshapley.approximators import all_coalitions, exact_shapley
    from skshapley.games import CallableGame, MarginalGame

    d = X.shape[1]
    masks = all_coalitions(d)
    tables = MarginalGame(model, X[:10], X[:100]).values(masks)  # (2^d, 10)
    weights = 1 << np.arange(d)

    def make(row):
        table = tables[:, row]
        return lambda S: table[np.atleast_2d(S).astype(np.int64) @ weights]

    games = [make(row) for row in range(10)]
    exact = np.array([exact_shapley(CallableGame(g, d)).values for g in games])
    return games, exact


def model_games(model, X):
    import shap

    from skshapley.games import MarginalGame

    games = []
    for row in range(10):
        game = MarginalGame(model, X[row], X[:100])
        games.append(lambda S, g=game: g.values(np.atleast_2d(S)))
    tree = shap.TreeExplainer(model, X[:100], feature_perturbation="interventional")
    return games, np.asarray(tree.shap_values(X[:10]))


class Counter:
    def __init__(self, function):
        self.function, self.count = function, 0

    def __call__(self, S):
        S = np.atleast_2d(S)
        self.count += S.shape[0]
        return self.function(S)


def run_ours(name, game, d, budget, seed):
    from skshapley.approximators import permutation_shapley, shapley_values
    from skshapley.games import CallableGame

    wrapped = CallableGame(game, d)
    if name in OURS:
        result = permutation_shapley(wrapped, budget, sampler=name, random_state=seed)
    else:
        result = shapley_values(wrapped, method=name, budget=budget, random_state=seed)
    return result.values, result.n_evaluations


def run_default(name, game, d, budget, seed):
    """What a user gets: ``shapley_values(method="auto")`` (also ShapleyExplainer's
    default): enumeration when 2^d fits the budget, else the "auto" sampler."""
    from skshapley.approximators import shapley_values
    from skshapley.games import CallableGame

    result = shapley_values(CallableGame(game, d), budget=budget, random_state=seed)
    return result.values, result.n_evaluations


def run_shapiq(name, game, d, budget, seed):
    from shapiq.approximator import (
        SVARM,
        KernelSHAP,
        PermutationSamplingSV,
        StratifiedSamplingSV,
        kADDSHAP,
    )

    classes = {"PermutationSamplingSV": (PermutationSamplingSV, {}),
               "KernelSHAP": (KernelSHAP, {}),
               "KernelSHAP (paired)": (KernelSHAP, {"pairing_trick": True}),
               "SVARM": (SVARM, {}),
               "StratifiedSamplingSV": (StratifiedSamplingSV, {}),
               "kADDSHAP (paired)": (kADDSHAP, {"pairing_trick": True})}
    cls, kwargs = classes[name]
    counter = Counter(game)
    values = cls(n=d, random_state=seed, **kwargs).approximate(budget=budget, game=counter)
    return np.array([values[(j,)] for j in range(d)]), counter.count


def run_shap(name, game, d, budget, seed):
    import shap

    counter = Counter(game)

    def model(rows):  # rows are coalition indicators: background 0, explained row 1
        return counter(rows > 0.5)

    if name == "PermutationExplainer":
        explainer = shap.PermutationExplainer(model, np.zeros((1, d)), seed=seed)
        values = explainer(np.ones((1, d)), max_evals=budget, silent=True).values[0]
    else:
        np.random.seed(seed)  # noqa: NPY002 -- KernelExplainer samples with numpy's global state
        explainer = shap.KernelExplainer(model, np.zeros((1, d)))
        values = explainer.shap_values(np.ones(d), nsamples=budget - 2, silent=True)
    return np.asarray(values).reshape(d), counter.count


PEERS = {
    "skshapley auto (default)": run_default,
    **{f"skshapley {name}": run_ours for name in OURS + OURS_OTHER},
    **{f"shapiq {name}": run_shapiq for name in
       ["PermutationSamplingSV", "KernelSHAP", "KernelSHAP (paired)", "SVARM",
        "StratifiedSamplingSV", "kADDSHAP (paired)"]},
    **{f"shap {name}": run_shap for name in ["PermutationExplainer", "KernelExplainer"]},
}


def minimum(method, d):
    from skshapley.approximators import METHOD_RECORDS

    short = method.split(" ", 1)[1]
    if method == "skshapley auto (default)":
        return 2 + 2 * (d - 1)
    if short in OURS_OTHER:
        return METHOD_RECORDS[short].minimum_budget(d, 2)
    if method == "shap PermutationExplainer":
        return 2 * d + 1
    return 2 + 2 * (d - 1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS)
    parser.add_argument("--datasets", default="make_regression,diabetes,breast_cancer",
                        help="comma-separated subset of the three datasets")
    parser.add_argument("--methods", default=None,
                        help="comma-separated substrings: run only the matching methods")
    args = parser.parse_args(argv)
    datasets = args.datasets.split(",")
    unknown = set(datasets) - {"make_regression", "diabetes", "breast_cancer"}
    if unknown:
        parser.error(f"unknown datasets {sorted(unknown)}")
    wanted = None if args.methods is None else args.methods.split(",")
    warnings.filterwarnings("ignore")
    import skshapley

    header = skshapley.show_versions(as_markdown=True)
    sections = []
    for dataset in datasets:
        X, model = load(dataset)
        d = X.shape[1]
        if d <= 12:
            games, exact = table_games(model, X)
            multipliers, repeats = (10, 50, 200, 1000), args.repeats
        else:
            games, exact = model_games(model, X)
            multipliers, repeats = (10, 50, 200), max(3, args.repeats // 5)
        if args.quick:
            multipliers, repeats = multipliers[:2], 3
        budgets = [m * d for m in multipliers]
        if dataset == "make_regression" and not args.quick:
            budgets.append(3602)  # the paper's 2200 marginal evaluations (§2.11)
        rows = {}
        for method, runner in PEERS.items():
            if wanted is not None and not any(w in method for w in wanted):
                continue
            short = method.split(" ", 1)[1]
            for budget in budgets:
                if budget < minimum(method, d):
                    continue
                if short == "sbq" and (budget - 2) // (d - 1) > SBQ_MAX_ORDERS:
                    continue
                if method == "shap KernelExplainer" and d > 12 and budget > 50 * d:
                    continue  # minutes per row through the model; not run
                errors, spent, start = [], [], time.perf_counter()
                for seed in range(repeats):
                    estimates = []
                    for game in games:
                        values, count = runner(short, game, d, budget, seed)
                        estimates.append(values)
                        spent.append(count)
                    errors.append(np.sqrt(np.mean((np.array(estimates) - exact) ** 2)))
                seconds = (time.perf_counter() - start) / (repeats * len(games))
                rows[(method, budget)] = (np.mean(errors), np.std(errors), max(spent), seconds)
                print(dataset, method, budget, f"{np.mean(errors):.4g}", max(spent), flush=True)
        sections.append(render(dataset, d, budgets, rows, repeats))
    command = "python benchmarks/bench_samplers.py " + " ".join(argv or sys.argv[1:])
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(f"""# Permutation samplers and peers at equal coalition evaluations

{__doc__.split("Run:")[0].strip()}

## Machine and versions

{header}

## Command

`{command.strip()}`

{chr(10).join(sections)}
{skipped_note(datasets)}""")
    print(f"written {args.output}")


def skipped_note(datasets):
    missing = [d for d in ("make_regression", "diabetes", "breast_cancer") if d not in datasets]
    if not missing:
        return ""
    return (f"\nNot in this run (`--datasets`): {', '.join(missing)}. For breast_cancer "
            "(d = 30, through the model), the same-run comparison of the default against "
            "the peers is in `accuracy_breast_cancer.md` and "
            "`accuracy_breast_cancer_200d.md`.\n")


def render(dataset, d, budgets, rows, repeats):
    methods = sorted({m for m, _ in rows}, key=lambda m: list(PEERS).index(m))
    head = "| method | " + " | ".join(f"B = {b}" for b in budgets) + " |"
    lines = [head, "|---|" + "---|" * len(budgets)]
    best_peer = {}
    for budget in budgets:
        peers = [rows[(m, budget)][0] for m in methods
                 if not m.startswith("skshapley") and (m, budget) in rows]
        best_peer[budget] = min(peers) if peers else np.nan
    for method in methods:
        cells = []
        for budget in budgets:
            if (method, budget) not in rows:
                cells.append("—")
                continue
            mean, std, spent, seconds = rows[(method, budget)]
            cells.append(f"{mean:.4g} ± {std:.2g} ({spent}; {seconds * 1e3:.1f} ms)")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    wins = {name: sum(rows.get((f"skshapley {name}", b), (np.inf,))[0] < best_peer[b]
                      for b in budgets) for name in ["auto (default)"] + OURS + OURS_OTHER}
    verdict = ", ".join(f"{name} {count}/{len(budgets)}" for name, count in wins.items())
    return (f"## {dataset} (d = {d}, {repeats} repeats)\n\nRMSE over 10 rows × {d} features, "
            "mean ± std over repeats (most coalition evaluations any row used; wall time per "
            f"explained row).\n\n" + "\n".join(lines)
            + f"\n\nBudgets where each of our methods beats the best peer: {verdict}.\n")


if __name__ == "__main__":
    main()
