"""``skshapley bench``: a seconds-long accuracy-and-speed comparison of the estimators.

Each method explains the same games at the same budgets (coalition evaluations per
row) and is scored by its relative error ||phi_hat - phi||_2 / ||phi||_2 against exact
Shapley values: enumeration of all 2^d coalitions for the model game, the closed form
for the synthetic one. The full, peer-reviewed comparisons are the scripts in
``benchmarks/``; this one is for a first look on your machine.
"""

from __future__ import annotations

import argparse
import sys

from skshapley.cli._common import (
    ExitCode,
    UsageError,
    add_debug_argument,
    add_plot_argument,
    add_seed_argument,
    check_distinct,
    check_writable,
    positive_int,
    save_figure,
    use_agg,
    written_atomically,
)

DEFAULT_METHODS = "permutation:antithetic,permutation:orthogonal,kernel,surrogate"
DEFAULT_PLAYERS = 12
# The diabetes game explains distinct rows of the 442 in scikit-learn's data set; the
# unanimity game draws its games, and a thousand of them already take minutes.
MAX_ROWS = {"diabetes": 442, "unanimity": 1000}
# Coalition evaluations per row: 10^5 at 30 players take about 35 s a row and 1.6 GB
# (the surrogate's design); 10^9 asked numpy for 48 GiB (issue 28). Past 2^d every
# method enumerates anyway.
MAX_BUDGET = 100_000


def add_parser(subparsers):
    """Add the ``bench`` sub-command to ``subparsers`` (an argparse subparsers object)."""
    bench = subparsers.add_parser(
        "bench", help="compare the estimators' accuracy and speed in a few seconds",
        description="Explain a few rows with each method at a few budgets (coalition "
                    "evaluations per row) and print, for each, the time per row and the "
                    "relative error against exact Shapley values. The default game is a "
                    "gradient-boosting model on scikit-learn's diabetes data (10 features, "
                    "exact values by enumerating all 1024 coalitions); --game unanimity "
                    "is a synthetic game with closed-form values. Writes the table as CSV "
                    "(--csv) and a plot of error against budget (--plot).",
        epilog="example: skshapley bench --budgets 100,400 --methods "
               "permutation:sobol,surrogate",
    )
    bench.add_argument("--game", choices=["diabetes", "unanimity"], default="diabetes",
                       help="diabetes (default): a fitted model's interventional game; "
                            "unanimity: a random sum of unanimity games")
    bench.add_argument("--players", type=positive_int, default=None, metavar="D",
                       help="players of --game unanimity (default 12); the diabetes game "
                            "has its 10 features and takes no --players")
    bench.add_argument("--methods", default=DEFAULT_METHODS, metavar="M,M,...",
                       help="comma-separated methods; permutation:SAMPLER picks the "
                            f"ordering sampler (default {DEFAULT_METHODS})")
    bench.add_argument("--budgets", type=_budgets, default="60,150,400", metavar="B,B,...",
                       help="coalition evaluations per row (default 60,150,400; each "
                            f"at most {MAX_BUDGET})")
    bench.add_argument("--rows", type=_rows, default=3,
                       help="explained rows (games) per cell; errors are averaged "
                            f"(default 3; at most {MAX_ROWS['diabetes']} for diabetes, "
                            f"{MAX_ROWS['unanimity']} for unanimity)")
    bench.add_argument("--csv", metavar="PATH", help="write the table as CSV here (an "
                                                     "existing file is overwritten)")
    add_plot_argument(bench, "skshapley_bench.png", "relative error against budget",
                      option="--plot", metavar="PNG")
    add_seed_argument(bench, "the model, the games and the sampling")
    bench.add_argument("--progress", action="store_true", help="show a progress bar")
    add_debug_argument(bench)
    return bench


def _rows(text):
    largest = max(MAX_ROWS.values())
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 1 <= value <= largest:
        raise argparse.ArgumentTypeError(f"expected an integer in [1, {largest}], got {text!r}")
    return value


def _budgets(text):
    wanted = f"expected comma-separated integers in [4, {MAX_BUDGET}], got {text!r}"
    try:
        values = sorted({int(part) for part in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(wanted) from None
    if not values or values[0] < 4 or values[-1] > MAX_BUDGET:
        raise argparse.ArgumentTypeError(wanted)
    return values


def _parse_methods(text):
    from skshapley.approximators import METHODS
    from skshapley.permutations import SAMPLERS

    methods = []
    for item in (part.strip() for part in text.split(",")):
        name, _, sampler = item.partition(":")
        if name not in METHODS or name in ("auto", "exact"):
            accepted = [m for m in METHODS if m not in ("auto", "exact")]
            raise UsageError(f"--methods: unknown method {name!r}; use some of {accepted}")
        if sampler and name != "permutation":
            raise UsageError(f"--methods: {item!r}: only permutation takes a :SAMPLER")
        if sampler and sampler not in SAMPLERS:
            raise UsageError(f"--methods: unknown sampler {sampler!r}; use one of "
                             f"{sorted(SAMPLERS)}")
        methods.append((name, sampler or None))
    return methods


def _games(args):
    """(name, list of (make_game, exact values), seconds to compute the exact values)."""
    import time

    import numpy as np

    from skshapley.approximators import exact_shapley
    from skshapley.games import MarginalGame, UnanimityGame

    rng = np.random.default_rng(args.random_state)
    if args.game == "unanimity":
        d = args.players
        games = []
        for _ in range(args.rows):
            carriers = rng.random((3 * d, d)) < 3.0 / d
            carriers[~carriers.any(axis=1), 0] = True
            coefficients = rng.normal(size=3 * d)
            game = UnanimityGame(carriers, coefficients)
            games.append((lambda c=carriers, w=coefficients: UnanimityGame(c, w),
                          game.exact_values()))
        return f"unanimity ({d} players, {3 * d} random carriers)", games, 0.0
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = load_diabetes(return_X_y=True)
    # Not the histogram booster: its OpenMP prediction dominates small calls on a busy
    # machine, and the bench should time the estimators, not thread start-up.
    model = GradientBoostingRegressor(n_estimators=100, random_state=args.random_state)
    model.fit(X, y)
    background = X[rng.choice(X.shape[0], 50, replace=False)]
    rows = rng.choice(X.shape[0], args.rows, replace=False)
    games, start = [], time.perf_counter()
    for row in rows:
        exact = exact_shapley(MarginalGame(model, X[row], background), 2**10).values
        games.append((lambda r=row: MarginalGame(model, X[r], background), exact))
    exact_seconds = (time.perf_counter() - start) / len(rows)
    return "diabetes, GradientBoostingRegressor, 50 background rows", games, exact_seconds


def run(args) -> int:
    """Run every (method, budget) cell, print the table, write the CSV and the plot."""
    import time

    use_agg()
    import numpy as np
    from tqdm.auto import tqdm

    from skshapley.approximators import shapley_values

    out = sys.stdout
    methods = _parse_methods(args.methods)
    for option, path, suffixes in (("--csv", args.csv, (".csv",)),
                                   ("--plot", args.plot, (".png", ".pdf", ".svg"))):
        if path is not None:
            check_writable(option, path, suffixes)
    check_distinct([("--csv", args.csv), ("--plot", args.plot)], [])
    if args.rows > MAX_ROWS[args.game]:
        raise UsageError(f"--rows {args.rows}: the {args.game} game takes at most "
                         f"{MAX_ROWS[args.game]} rows")
    if args.game != "unanimity" and args.players is not None:
        raise UsageError(f"--players {args.players} applies only to --game unanimity; the "
                         f"{args.game} game has one player per feature (10)")
    if args.players is None:
        args.players = DEFAULT_PLAYERS
    if args.game == "unanimity" and not 2 <= args.players <= 30:
        raise UsageError(f"--players {args.players}: use 2 to 30 players")
    title, games, exact_seconds = _games(args)
    d = len(games[0][1])
    records = []
    cells = [(m, b) for m in methods for b in args.budgets]
    for (name, sampler), budget in tqdm(cells, desc="bench", disable=not args.progress,
                                        leave=False):
        label = name if sampler is None else f"{name}:{sampler}"
        options = {} if sampler is None else {"sampler": sampler}
        errors, seconds = [], []
        try:
            for k, (make_game, exact) in enumerate(games):
                game = make_game()
                start = time.perf_counter()
                result = shapley_values(game, method=name, budget=budget,
                                        random_state=args.random_state + k, **options)
                seconds.append(time.perf_counter() - start)
                errors.append(np.linalg.norm(result.values - exact) / np.linalg.norm(exact))
        except ValueError as err:
            if "too small" not in str(err):
                raise
            # The method cannot spend this budget (e.g. one frame of orderings costs
            # more): a row of the table says so instead of failing the whole run.
            records.append((label, budget, np.nan, np.nan, "budget too small"))
            continue
        records.append((label, budget, float(np.median(seconds)), float(np.mean(errors)), ""))
    _print_table(out, title, d, len(games), exact_seconds, records)
    if args.csv is not None:
        import pandas as pd

        table = pd.DataFrame(records, columns=["method", "budget", "seconds_per_row",
                                               "relative_error", "note"])
        with written_atomically(args.csv, "--csv") as temporary:
            table.to_csv(temporary, index=False)
        print(f"table written to {args.csv}", file=out)
    if args.plot is not None:
        save_figure(_plot(records, title), args.plot, option="--plot", tight=True)
        print(f"plot written to {args.plot}", file=out)
    return ExitCode.OK


def _print_table(out, title, d, n_rows, exact_seconds, records):
    print(f"game: {title}   players: {d}   rows: {n_rows}", file=out)
    if exact_seconds:
        print(f"exact values by enumeration: {2**d} evaluations, "
              f"{exact_seconds * 1e3:.1f} ms per row", file=out)
    width = max(len("method"), *(len(r[0]) for r in records))
    print(f"{'method':<{width}}  {'budget':>6}  {'ms per row':>10}  {'rel. error':>10}",
          file=out)
    for label, budget, seconds, error, note in records:
        if note:
            print(f"{label:<{width}}  {budget:>6}  {'-':>10}  {'-':>10}  ({note})", file=out)
        else:
            print(f"{label:<{width}}  {budget:>6}  {seconds * 1e3:>10.1f}  {error:>10.4f}",
                  file=out)
    print("rel. error: ||phi_hat - phi|| / ||phi||, mean over rows; budget: coalition "
          "evaluations per row", file=out)


def _plot(records, title):
    import matplotlib.pyplot as plt
    import numpy as np

    figure, ax = plt.subplots(figsize=(6.0, 4.0))
    for label in dict.fromkeys(r[0] for r in records):
        rows = [r for r in records if r[0] == label and np.isfinite(r[3])]
        if rows:
            ax.plot([r[1] for r in rows], [r[3] for r in rows], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    budgets = sorted({r[1] for r in records})
    ax.set_xticks(budgets, labels=[str(b) for b in budgets])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_xlabel("coalition evaluations per row")
    ax.set_ylabel("relative error")
    ax.set_title(title, fontsize="small")
    ax.legend(fontsize="small")
    return figure
