"""``skshapley select``: choose the k most important features (top-k Shapley) with
CMCS@K, print them with their intervals and write a PNG of the estimates with the cut.
"""

from __future__ import annotations

import argparse
import math
import sys

from skshapley.approximators import CMCS_WARM_UP_ROUNDS, cmcs_warm_up_evaluations
from skshapley.cli import _model
from skshapley.cli._common import (
    ExitCode,
    UsageError,
    add_data_arguments,
    add_debug_argument,
    add_n_jobs_argument,
    add_plot_argument,
    add_progress_argument,
    add_seed_argument,
    check_output_path,
    fraction,
    max_evals,
    n_workers,
    non_negative,
    print_ranking,
    save_figure,
    show_progress,
    use_agg,
)
from skshapley.cli._data import data_or_diabetes

# TopKShapleySelector's fewest rows: its default 25 % validation split must leave two
# rows on each side (the selector's own check says so in library terms).
_SELECT_MIN_ROWS = 8


def add_parser(subparsers):
    """Add the ``select`` sub-command to ``subparsers`` (an argparse subparsers object)."""
    select = subparsers.add_parser(
        "select", help="choose the k most important features (top-k Shapley)",
        description="Find the k features with the largest Shapley values of a global game "
                    "(by default: the validation score of the model refit on each subset "
                    "of features) with CMCS@K, which stops once the chosen set is "
                    "certified. Prints the chosen features with their intervals and the "
                    "evaluations used, and writes a PNG of the estimates with the cut. "
                    "Without --data it uses scikit-learn's bundled diabetes data.",
    )
    add_data_arguments(select)
    select.add_argument("--k", type=_k_value, default=5,
                        help="features to keep, or a fraction in (0, 1) (default 5)")
    _model.add_model_arguments(
        select, "a random forest of 20 trees: sklearn.ensemble:RandomForestRegressor, or "
                "...Classifier for class labels, see --task")
    select.add_argument("--importance", default="auto",
                        help="auto (default: LS-SPA for linear least squares, mean |SHAP| "
                             "where the values have a closed form, else refits within "
                             "about 5 s), refit, performance or mean_abs_shap")
    select.add_argument("--method", default="cmcs_at_k",
                        help="cmcs_at_k (default), greedy_cmcs, cmcs, sampling_shap_at_k, "
                             "regression or exact")
    select.add_argument("--max-evals", type=max_evals, default="auto",
                        help="most game evaluations (model fits for refit), or auto")
    select.add_argument("--delta", type=fraction, default=0.01,
                        help="confidence parameter of the PAC rule (default 0.01)")
    select.add_argument("--epsilon", type=non_negative, default=5e-4,
                        help="tolerance of the PAC rule, in score units (default 0.0005)")
    select.add_argument("--scoring", default=None,
                        help="scikit-learn scorer name (default: the model's score)")
    add_plot_argument(select, "skshapley_topk.png", "plot of the estimates")
    add_seed_argument(select, "the split, the model and the sampling")
    add_n_jobs_argument(select, "parallel model fits")
    add_progress_argument(select, "evaluations")
    add_debug_argument(select)
    return select


def run(args) -> int:
    """Select the features, write the plot, print the table."""
    use_agg()

    from skshapley import TopKShapleySelector
    from skshapley.plotting import topk

    out = sys.stdout
    X, y, names, source = data_or_diabetes(args, text=True)
    if len(X) < _SELECT_MIN_ROWS:
        raise UsageError(f"{source!r} has {len(X)} rows; select scores each subset on "
                         f"held-out rows and needs at least {_SELECT_MIN_ROWS} (2 to "
                         "validate on and 2 to train on, after the 25 % split)")
    if isinstance(args.k, int) and args.k > X.shape[1]:
        raise UsageError(f"--k {args.k} is more than the {X.shape[1]} features of {source!r}")
    model = _select_model(args.model, y, args.task, args.model_params)
    _model.check_model_task(model, args.task)
    _model.check_target(y, args.task, args.target or "target")
    model, X = _model.with_text_encoded(_model.seeded(model, args.random_state), X)
    _check_budget(args, X.shape[1])
    args.output = check_output_path(args.output, args.data)
    selector = TopKShapleySelector(
        model, k=args.k, importance=args.importance, method=args.method,
        max_evals=args.max_evals, delta=args.delta, epsilon=args.epsilon,
        scoring=args.scoring, n_jobs=n_workers(args.n_jobs),
        random_state=args.random_state,
        # a bar on a terminal by default: hundreds of model fits take minutes
        progress=show_progress(args),
    )
    selector.fit(X, y)
    ax = topk(selector, feature_names=names)
    save_figure(ax.figure, args.output, tight=True)
    if args.importance == "mean_abs_shap":
        # Not one game's Shapley values, so there is nothing to certify
        # (doc/user_guide/topk.rst); the intervals are the spread over the explained rows.
        status = ("no certificate: the PAC rule does not apply to mean |SHAP| (intervals: "
                  "spread over the explained validation rows)")
    elif selector.converged_:
        status = "the PAC rule holds"
    elif selector.method_.startswith("lsspa"):
        # LS-SPA's values come without model fits, so --max-evals does not limit them.
        status = "the PAC rule does not hold (raise --epsilon)"
    else:
        status = "the PAC rule does not hold yet (raise --max-evals or --epsilon)"
    task = "" if args.model is not None else \
        f", {_model.describe_task(y, args.task, args.target or 'target')}"
    print(f"data: {source}   model: {type(model).__name__}{task}   importance: "
          f"{args.importance}   method: {selector.method_}", file=out)
    print(f"kept {selector.k_} of {len(names)} features with {selector.n_evaluations_} "
          f"evaluations; {status}", file=out)
    level = f"{100 * (1 - args.delta):g} %"
    order = sorted(range(len(names)), key=lambda j: selector.ranking_[j])  # ranks 1 .. d
    print_ranking(out, names, order, [
        ("kept", 4, ["yes" if kept else "" for kept in selector.support_]),
        ("estimate", 10, [f"{value:.4f}" for value in selector.shapley_values_]),
        (f"{level} interval", 24, [f"[{low:>10.4f}, {high:>10.4f}]"
                                   for low, high in selector.confidence_intervals_])])
    print(f"plot written to {args.output}", file=out)
    return ExitCode.OK


def _k_value(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer or a fraction in (0, 1), got {text!r}") from None
    if not math.isfinite(value):  # int(inf) raises OverflowError
        raise argparse.ArgumentTypeError(
            f"expected a positive integer or a fraction in (0, 1), got {text!r}")
    if value >= 1 and value == int(value):
        return int(value)
    if 0 < value < 1:
        return value
    raise argparse.ArgumentTypeError(
        f"expected a positive integer or a fraction in (0, 1), got {text!r}")


def _select_model(spec, y, task="auto", params=None):
    def default():
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

        # The global games of the top-k paper (Kolpaczki, Nielen & Hüllermeier 2025,
        # Sec. 6) use forests of 20 trees.
        classes = _model.is_classification(y, task)
        cls = RandomForestClassifier if classes else RandomForestRegressor
        return cls(n_estimators=20, random_state=0)

    return _model.build_model(spec, params, default)


def _check_budget(args, n_features):
    """Refuse a --max-evals too small to sample every feature once: the selector would
    report all estimates 0 with infinite intervals and keep the first columns."""
    if args.max_evals == "auto" or args.importance == "mean_abs_shap" \
            or args.method == "exact":
        return  # "auto" fits; mean_abs_shap spends no budget; exact checks its own
    # v(∅), v(N) and one round of n_features + 1 evaluations (a reference set and each
    # feature added to it, CMCS) sample every feature once; from 2**n_features on, the
    # selector enumerates all subsets instead.
    smallest = min(n_features + 3, 2**n_features)
    if args.max_evals < smallest:
        raise UsageError(
            f"--max-evals {args.max_evals} is too small for {n_features} features: at "
            f"least {smallest} evaluations are needed to sample every feature once "
            f"(v(∅), v(N) and one round of {n_features + 1}); finite intervals need "
            f"{CMCS_WARM_UP_ROUNDS} rounds (about {cmcs_warm_up_evaluations(n_features) + 2}"
            f"), and auto picks {2 * cmcs_warm_up_evaluations(n_features)}")
