"""``skshapley importance``: rank the columns by the Shapley values of a fitted model's
held-out score (SAGE), print them with 95 % intervals and write a bar chart.
"""

from __future__ import annotations

import math
import sys

from skshapley.cli import _model
from skshapley.cli._common import (
    ExitCode,
    UsageError,
    add_data_arguments,
    add_debug_argument,
    add_n_jobs_argument,
    add_plot_argument,
    add_seed_argument,
    check_output_path,
    fraction,
    groups_json,
    max_evals,
    n_workers,
    positive_int,
    print_ranking,
    save_figure,
    use_agg,
)
from skshapley.cli._data import data_or_diabetes, take_rows


def add_parser(subparsers):
    """Add the ``importance`` sub-command to ``subparsers`` (an argparse subparsers
    object)."""
    importance = subparsers.add_parser(
        "importance", help="rank features by the Shapley values of the model's score (SAGE)",
        description="Fit a model on a training split and rank the columns by how much "
                    "of its held-out score they carry: the Shapley values of the score of "
                    "the model with absent columns averaged over background rows (SAGE, "
                    "no refits). Prints a ranked table with 95 % intervals and writes a "
                    "bar chart. Without --data it uses scikit-learn's bundled diabetes "
                    "data.",
    )
    add_data_arguments(importance)
    _model.add_model_arguments(
        importance, "sklearn.ensemble:HistGradientBoostingRegressor, or ...Classifier "
                    "for class labels, see --task", model_file=True)
    importance.add_argument("--groups", type=groups_json, default=None, metavar="JSON",
                            help="players made of several columns: a JSON object "
                                 "'{\"name\": [\"col\", ...], ...}' or a list of lists "
                                 "of columns; every column in exactly one group")
    importance.add_argument("--scoring", default=None,
                            help="scikit-learn scorer name, e.g. neg_mean_squared_error "
                                 "or neg_log_loss (default: R² for regressors, accuracy "
                                 "for classifiers)")
    importance.add_argument("--max-evals", type=max_evals, default="auto",
                            help="most coalition evaluations, or auto (2^d up to 10 "
                                 "features: exact; else 32 antithetic pairs of orderings)")
    importance.add_argument("--tol", type=float, default=None,
                            help="stop once the estimated 95 %% error of the values is "
                                 "below TOL (score units)")
    importance.add_argument("--background", type=positive_int, default=50,
                            help="training rows that stand in for absent columns "
                                 "(default 50)")
    importance.add_argument("--test-size", type=fraction, default=0.25, metavar="F",
                            help="fraction of rows held out to score on (default 0.25; "
                                 "with --model-file all rows are held out)")
    importance.add_argument("--rows", type=positive_int, default=100, metavar="N",
                            help="score on at most N held-out rows, sampled at random "
                                 "(default 100): each evaluation predicts N x "
                                 "--background rows, so the time grows with both")
    add_plot_argument(importance, "skshapley_importance.png", "bar chart")
    add_seed_argument(importance, "the split, the rows, the background, the model and the "
                                  "orderings")
    add_n_jobs_argument(importance, "threads evaluating coalitions")
    add_debug_argument(importance)
    return importance


def run(args) -> int:
    """Fit, compute the importances, write the bar chart, print the table."""
    import numpy as np

    use_agg()
    from sklearn.model_selection import train_test_split

    from skshapley.inspection import shapley_importance
    from skshapley.plotting import importance_bar

    out = sys.stdout
    _model.check_model_file_options(args)
    prefit = args.model_file is not None
    if args.tol is not None and not (math.isfinite(args.tol) and args.tol > 0):
        raise UsageError(f"--tol must be a positive number; got {args.tol!r}")
    args.output = check_output_path(args.output, args.data,
                                    inputs=[("--model-file", args.model_file)])
    X, y, names, source = data_or_diabetes(args, text=True)
    if isinstance(X, np.ndarray):
        # the bundled data: named columns, so --groups can name them and the table does
        import pandas as pd

        X = pd.DataFrame(X, columns=names)
    rng = np.random.RandomState(args.random_state)
    if prefit:
        model = _model.load_model_file(args.model_file, args.trust)
        X, names = _model.columns_for_model(model, X, names, source)
        about = f"{type(model).__name__}, fitted, from {args.model_file}"
        X_test, y_test, X_train = X, y, X
    else:
        if len(X) < 4:
            raise UsageError(f"{source!r} has {len(X)} rows; the train/test split needs at "
                             "least 4")
        model = _model.load_model(args.model, classes=_model.is_classification(y, args.task),
                                  params=args.model_params)
        _model.check_model_task(model, args.task)
        _model.check_target(y, args.task, args.target or "target")
        _model.check_numeric_target(model, y, args.target)
        model, X = _model.with_text_encoded(_model.seeded(model, args.random_state), X)
        about = type(model).__name__
        if args.model is None:
            about += f", {_model.describe_task(y, args.task, args.target or 'target')}"
        train, test = train_test_split(np.arange(len(X)), test_size=args.test_size,
                                       random_state=args.random_state)
        X_train, X_test, y_test = take_rows(X, train), take_rows(X, test), y[test]
        model.fit(X_train, y[train])
    if len(y_test) > args.rows:
        keep = np.sort(rng.choice(len(y_test), args.rows, replace=False))
        X_test = take_rows(X_test, keep)
        y_test = y_test[keep]
    n_background = min(args.background, len(X_train))
    keep = np.sort(rng.choice(len(X_train), n_background, replace=False))
    background = take_rows(X_train, keep)
    result = shapley_importance(
        model, X_test, y_test, scoring=args.scoring, groups=args.groups,
        background=background, max_evals=args.max_evals, tol=args.tol,
        n_jobs=n_workers(args.n_jobs), random_state=args.random_state)
    ax = importance_bar(result)
    ax.figure.suptitle(f"Shapley importance (SAGE): {type(model).__name__}", x=0.02,
                       ha="left")
    save_figure(ax.figure, args.output, tight=True)
    if result.method == "exact":
        detail = "exact"
    else:
        detail = f"{result.n_draws} draws of orderings"
        if result.converged is not None:
            detail += ", tol reached" if result.converged else ", tol not reached"
    print(f"data: {source}   model: {about}   scoring: {result.scoring}", file=out)
    print(f"scored {len(y_test)} {'' if prefit else 'held-out '}rows against "
          f"{result.n_background} background rows; {result.n_evaluations} evaluations "
          f"({detail})", file=out)
    print(f"score: full model {result.full_score:.4f}, every feature marginalised "
          f"{result.baseline_score:.4f}; the importances add up to the difference", file=out)
    labels = [str(name) for name in result.feature_names]
    order = np.argsort(-result.importances_mean, kind="stable")  # ties: lower index first
    halves = (result.ci_high - result.ci_low) / 2
    print_ranking(out, labels, order, [
        ("importance", 10, [f"{value:.4f}" for value in result.importances_mean]),
        ("± 95 %", 8, ["exact" if result.method == "exact" else f"{half:.4f}"
                       for half in halves])])
    print(f"bar chart written to {args.output}", file=out)
    return ExitCode.OK
