"""``skshapley attribute``: split a linear model's test R² among the features (LS-SPA),
print each feature's share with its 95 % error bar and write a bar chart.
"""

from __future__ import annotations

import sys

from skshapley.cli import _model
from skshapley.cli._common import (
    ExitCode,
    UsageError,
    add_data_arguments,
    add_debug_argument,
    add_plot_argument,
    add_seed_argument,
    check_output_path,
    fraction,
    non_negative,
    positive_int,
    print_ranking,
    save_figure,
    use_agg,
)
from skshapley.cli._data import data_or_diabetes


def add_parser(subparsers):
    """Add the ``attribute`` sub-command to ``subparsers`` (an argparse subparsers
    object)."""
    attribute = subparsers.add_parser(
        "attribute", help="attribute a linear model's test R² to its features (LS-SPA)",
        description="Split the rows into training and test sets, fit a least-squares (or "
                    "ridge) model with intercept, and attribute its out-of-sample R² to the "
                    "features by Shapley values (LS-SPA): prints each feature's share with "
                    "its 95 % error bar and writes a bar chart. Without --data it uses "
                    "scikit-learn's bundled diabetes data.",
    )
    add_data_arguments(attribute)
    attribute.add_argument("--test-size", type=fraction, default=0.25, metavar="F",
                           help="fraction of rows held out for the test R² (default 0.25)")
    attribute.add_argument("--alpha", type=non_negative, default=0.0,
                           help="ridge penalty, scikit-learn's Ridge convention (default 0)")
    attribute.add_argument("--method", default="auto",
                           help="auto (default), exact or permutation")
    attribute.add_argument("--sampler", default="argsort",
                           help="argsort (default; = argsort_sobol), permutohedron, "
                                "sobol_sphere (= sobol), mc or any sampler of explain")
    attribute.add_argument("--max-samples", type=positive_int, default=2**13,
                           help="maximum number of sampled orderings (default 8192)")
    attribute.add_argument("--tol", type=float, default=1e-2,
                           help="stop once the estimated 95 %% error is below TOL "
                                "(default 0.01)")
    add_plot_argument(attribute, "skshapley_attribution.png", "bar chart")
    add_seed_argument(attribute, "the train/test split and the sampling")
    add_debug_argument(attribute)
    return attribute


def run(args) -> int:
    """Fit, attribute the test R², write the bar chart, print the table."""
    import numpy as np

    use_agg()
    from sklearn.model_selection import train_test_split

    from skshapley.attribution import lsspa
    from skshapley.plotting import attribution_bar

    out = sys.stdout
    X, y, names, source = data_or_diabetes(args)
    if len(X) < 4:
        raise UsageError(f"{source!r} has {len(X)} rows; the train/test split needs at least 4")
    args.output = check_output_path(args.output, args.data)
    X_train, X_test, y_train, y_test = train_test_split(
        X, _as_float_target(y), test_size=args.test_size,
        random_state=args.random_state)
    result = lsspa(X_train, X_test, y_train, y_test, alpha=args.alpha, method=args.method,
                   sampler=args.sampler, max_samples=args.max_samples, tol=args.tol,
                   random_state=args.random_state)
    ax = attribution_bar(result, feature_names=names)
    ax.set_title(f"LS-SPA: test R² = {result.r2:.4f}", loc="left")
    save_figure(ax.figure, args.output, tight=True)
    detail = ("exact" if result.method == "exact" else
              f"{result.n_samples} orderings ({result.sampler}), estimated 95 % error "
              f"{result.error_quantile:.2g}{'' if result.converged else ', tol not reached'}")
    print(f"data: {source}   train rows: {len(y_train)}   test rows: {len(y_test)}   "
          f"alpha: {result.alpha:g}", file=out)
    print(f"test R²: {result.r2:.4f} (baseline: training mean)   method: {detail}", file=out)
    is_classes, reason = _model.target_kind(y)
    if is_classes:
        # the task rule of explain and select, said here: LS-SPA splits a regression's R²
        print(f"note: target {args.target!r} holds {reason}, which explain and select "
              "read as class labels; attribute fits a least-squares regression all the "
              "same", file=out)
    order = np.argsort(-result.attribution, kind="stable")
    print_ranking(out, names, order, [
        ("share of R²", 12, [f"{share:.4f}" for share in result.attribution]),
        ("± 95 %", 8, [f"{error:.4f}" for error in result.attribution_errors])])
    print(f"bar chart written to {args.output}", file=out)
    return ExitCode.OK


def _as_float_target(y):
    import numpy as np

    try:
        return np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise UsageError("the target column must be numeric for a regression") from None
