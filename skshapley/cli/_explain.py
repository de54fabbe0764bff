"""``skshapley explain``: fit a model on a CSV (or scikit-learn's bundled diabetes data),
explain some rows, print a ranked table and write a summary PNG (and, with
``--values``, the values as a CSV: ``_values``).
"""

from __future__ import annotations

import sys

from skshapley.cli import _model, _values
from skshapley.cli._common import (
    ExitCode,
    UsageError,
    add_data_arguments,
    add_debug_argument,
    add_n_jobs_argument,
    add_plot_argument,
    add_progress_argument,
    add_seed_argument,
    check_distinct,
    check_output_path,
    groups_json,
    max_evals,
    n_workers,
    positive_int,
    print_ranking,
    save_figure,
    show_progress,
    use_agg,
)
from skshapley.cli._data import data_or_diabetes, take_rows


def add_parser(subparsers):
    """Add the ``explain`` sub-command to ``subparsers`` (an argparse subparsers object)."""
    explain = subparsers.add_parser(
        "explain", help="explain a model's predictions",
        description="Fit a model, explain rows with Shapley values, print a ranked table "
                    "and write a summary PNG (and, with --values, the values as a CSV). "
                    "Without --data it uses scikit-learn's bundled diabetes data. The "
                    "default model is a HistGradientBoostingRegressor, or a "
                    "HistGradientBoostingClassifier for class labels (see --task), "
                    "which takes missing values (NaN) in the features; --model-file "
                    "explains a fitted model saved with skops instead.",
    )
    add_data_arguments(explain)
    _model.add_model_arguments(
        explain, "sklearn.ensemble:HistGradientBoostingRegressor, or "
                 "...Classifier for class labels, see --task", model_file=True)
    explain.add_argument("--rows", type=positive_int, default=20, metavar="N",
                         help="explain N rows, sampled at random (seeded by "
                              "--random-state; kept in the data's order) unless "
                              "--rows-from start (default 20)")
    explain.add_argument("--rows-from", choices=["sample", "start"], default="sample",
                         help="sample (default): N rows drawn at random, so sorted data "
                              "give more than one class; start: the first N rows")
    explain.add_argument("--method", default="auto",
                         help="auto (default), tree, linear, exact, permutation, kernel, "
                              "leverage, kadd, surrogate, svarm, adaptive, stratified, owen or "
                              "owen_halved (see ShapleyExplainer)")
    explain.add_argument("--max-evals", type=max_evals, default="auto",
                         help="coalition evaluations per row, or auto")
    explain.add_argument("--tol", type=float, default=None,
                         help="stop a row once its estimated error is below TOL")
    explain.add_argument("--background", type=positive_int, default=100,
                         help="background rows sampled from the data (default 100)")
    explain.add_argument("--groups", type=groups_json, default=None, metavar="JSON",
                         help="explain groups of columns, each one player: a JSON object "
                              "'{\"name\": [\"col\", ...], ...}' or a list of lists of "
                              "columns (named by their columns joined with +); every "
                              "column in exactly one group. 'correlation', or lists nested "
                              "three deep, give a hierarchy and Owen values per column")
    add_plot_argument(explain, "skshapley_summary.png", "summary plot",
                      note="PATH.png for a PATH without suffix")
    explain.add_argument("--values", metavar="CSV",
                         help="write the Shapley values here: one line per explained row "
                              "(column row: its position among the data rows, from 0), "
                              "one column per feature (FEATURE[OUTPUT] per feature and "
                              "output of a model with several outputs) and base_value; an "
                              "existing file is overwritten")
    explain.add_argument("--values-errors", action="store_true",
                         help="also write each value's standard error to --values: a "
                              "column NAME_se, after base_value, for each feature column "
                              "NAME (0 for exact methods)")
    add_seed_argument(explain, "the explained rows, the background sample, the sampling "
                               "and the model when it has a random_state")
    add_n_jobs_argument(explain, "parallel jobs over rows")
    explain.add_argument("--backend", default=None,
                         help="kernel backend: auto, numpy or numba (default: the "
                              "configured one)")
    add_progress_argument(explain, "rows")
    explain.add_argument("--top", type=positive_int, default=None, metavar="N",
                         help="print the N most important features (default: all up to "
                              "50 features, else 30)")
    add_debug_argument(explain)
    return explain


def run(args) -> int:
    """Explain the rows, write the plot (and the values), print the table."""
    import numpy as np

    use_agg()

    from skshapley import ShapleyExplainer, config_context
    from skshapley.approximators import METHODS
    from skshapley.utils import finite_policy

    out = sys.stdout
    # ShapleyExplainer's methods: the approximators', TreeSHAP and linear models' closed form
    methods = ["auto", "tree", "linear", *(name for name in METHODS if name != "auto")]
    if args.method not in methods:
        raise UsageError(f"--method {args.method!r} is not one of {methods}")
    _model.check_model_file_options(args)
    prefit = args.model_file is not None
    args.output = check_output_path(args.output, args.data,
                                    inputs=[("--model-file", args.model_file)])
    if args.values is not None:
        _values.check_values_path(args.values)
        check_distinct([("--output", args.output), ("--values", args.values)],
                       [("--data", args.data), ("--model-file", args.model_file)])
    # The data are read before the default model is chosen (a classifier for class
    # labels), so NaN is let through first and refused below if that model rejects it.
    X, y, names, source = data_or_diabetes(args, text=True, allow_nan=True,
                                           target_required=not prefit)
    if prefit:
        model = _model.load_model_file(args.model_file, args.trust)
        X, names = _model.columns_for_model(model, X, names, source)
        about = f"{type(model).__name__}, fitted, from {args.model_file}"
    else:
        classes = _model.is_classification(y, args.task)
        model = _model.load_model(args.model, classes=classes, params=args.model_params)
        _model.check_model_task(model, args.task)
        _model.check_target(y, args.task, args.target or "target")
        about = type(model).__name__
        if args.model is None:
            about += f", {_model.describe_task(y, args.task, args.target or 'target')}"
    missing = [c for c in getattr(X, "columns", []) if X[c].isna().any()]
    if missing and finite_policy(model) != "allow-nan":
        raise UsageError(f"missing values (NaN) in columns {missing} of {args.data!r}, which "
                         f"{type(model).__name__} does not take; impute them, or choose a "
                         "--model that takes them (e.g. the default, "
                         "sklearn.ensemble:HistGradientBoostingRegressor)")
    if args.groups is not None and isinstance(X, np.ndarray):
        # the bundled data: named columns, so --groups can name them
        import pandas as pd

        X = pd.DataFrame(X, columns=names)
    if not prefit:
        _model.check_numeric_target(model, y, args.target)
        model, X = _model.with_text_encoded(_model.seeded(model, args.random_state), X)
    if args.values is not None and args.groups is None:
        # a feature named like a column of values is refused before the work
        _values.value_columns(names, None, args.values_errors)
    rows = _explained_rows(len(X), args.rows, args.rows_from, args.random_state)
    explainer = ShapleyExplainer(
        model, prefit=prefit, method=args.method, max_evals=args.max_evals, tol=args.tol,
        background=args.background, n_jobs=n_workers(args.n_jobs, len(rows)),
        random_state=args.random_state, groups=args.groups,
        # a bar on a terminal by default: explaining many columns takes a while
        progress=show_progress(args),
    )
    with config_context(backend=args.backend):
        explainer.fit(X, y)
        explanation = explainer.explain(take_rows(X, rows))
    if args.groups is None:
        explanation.feature_names = names
    title = f"SHAP summary: {type(model).__name__}, {len(explanation)} rows"
    if explanation.values.ndim == 3 and explanation.output_names:
        title += f", output {explanation.output_names[0]}"
    figure = explanation.plot.summary(title=title)
    # The plot and the values are saved before the table is printed, so a closed pipe on
    # stdout (`skshapley explain | head -3`) still leaves them.
    save_figure(figure, args.output, tight=False)
    if args.values is not None:
        _values.write_values(args.values, explanation, rows, args.values_errors)
    _print_table(explanation, explainer, out, top=args.top, model=about)
    print(f"summary plot written to {args.output}", file=out)
    if args.values is not None:
        print(f"values written to {args.values}", file=out)
    return ExitCode.OK


def _explained_rows(n_rows, n_wanted, rows_from, seed):
    """Positions of the explained rows, ascending: ``n_wanted`` drawn without replacement
    (seeded) from ``n_rows``, or the first ones with ``rows_from="start"``. The first rows
    of data sorted by the target are often one class."""
    import numpy as np

    if n_wanted >= n_rows or rows_from == "start":
        return np.arange(min(n_wanted, n_rows))
    return np.sort(np.random.default_rng(seed).choice(n_rows, size=n_wanted, replace=False))


def _print_table(explanation, explainer, out, top=None, model=None):
    import numpy as np

    importance = explanation.mean_abs()
    errors = explanation.mean_abs_std_errors()
    if errors is None:
        errors = np.full(importance.shape, np.nan)
    outputs = explanation.output_names
    if importance.ndim == 2:
        # Several outputs: rank by the mean over outputs. The outputs' errors come from
        # the same orderings, so they are not independent; the mean of their standard
        # errors bounds the standard error of their mean (triangle inequality).
        importance, errors = importance.mean(axis=1), errors.mean(axis=1)
    order = np.argsort(-importance, kind="stable")  # ties: lower feature index first
    if top is None and len(order) > 50:
        top = 30
    base = np.asarray(explainer.expected_value_)
    evaluations = explanation.n_evaluations
    exact = not explanation._is_estimated(slice(None), 0)
    if evaluations is None or not evaluations.any():
        # TreeSHAP and the linear closed form call no game: "0" read as "nothing done"
        spent = "none (exact, read off the model)" if exact else "none (read off the model)"
    else:
        spent = (f"{int(evaluations.min())}" if evaluations.min() == evaluations.max()
                 else f"{int(evaluations.min())}-{int(evaluations.max())}")
        if exact:
            spent += " (exact)"
    print(f"method: {explainer.method_}   evaluations per row: {spent}   "
          f"rows: {len(explanation)}   "
          f"base value: {np.array2string(base, precision=4)}", file=out)
    if model is not None:
        print(f"model: {model}", file=out)
    if np.ndim(explanation.values) == 2 and outputs:
        print(f"output: {outputs[0]}", file=out)
    if np.ndim(explanation.values) == 3:
        names = outputs if outputs else [str(k) for k in range(np.shape(explanation.values)[2])]
        print(f"outputs: {', '.join(map(str, names))} (table: mean over outputs; "
              f"plot: {names[0]})", file=out)
    shown = order if top is None else order[:top]
    print_ranking(out, explanation.feature_names, shown, [
        ("mean |SHAP|", 12, [f"{value:.4f}" for value in importance]),
        ("std. error", 10, ["exact" if exact else f"{error:.4f}" for error in errors])])
    if len(shown) < len(order):
        print(f"      ... {len(order) - len(shown)} more features (--top to show more)",
              file=out)
    for note in explanation.notes:
        print(f"note: {note}", file=out)
