"""The ``skshapley`` command line (documented exit codes, one-line errors).

``skshapley explain`` fits a model on a CSV (or scikit-learn's bundled diabetes data),
explains some rows, prints a ranked table and writes a summary PNG (and the values,
``_cli_values``); ``explain`` and ``select`` choose and build their model alike
(``_cli_model``: the task rule, ``--model-params``, ``--model-file``). ``attribute`` splits
a linear model's test R² among the features (LS-SPA), ``quantile`` fits a
MomentQuantileTransformer on a CSV in chunks (``_cli_quantile``), ``bench`` compares
the estimators against exact values in seconds (``_cli_bench``), and ``importance``
ranks the columns by the Shapley values of a fitted model's held-out score (SAGE).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import traceback
from enum import IntEnum
from pathlib import Path
from types import SimpleNamespace

from skshapley import _cli_bench, _cli_model, _cli_quantile, _cli_values


class ExitCode(IntEnum):
    """Published exit codes; never renumbered."""

    OK = 0
    RUNTIME_ERROR = 1
    USAGE_ERROR = 2
    BACKEND_UNAVAILABLE = 4
    INTERRUPTED = 130


class UsageError(Exception):
    """Bad arguments or bad input data: exit code 2."""


class _ArgumentParser(argparse.ArgumentParser):
    # argparse prints usage and exits by itself; raising lets main() return the code.
    def error(self, message):
        raise UsageError(message)


def add_data_arguments(parser, target=True):
    """``--data CSV`` (and ``--target COL``), shared by the subcommands."""
    parser.add_argument("--data", metavar="CSV", help="CSV file with a header row")
    if target:
        parser.add_argument("--target", metavar="COL", help="target column of --data")


def add_debug_argument(parser):
    """``--debug``: show tracebacks instead of one-line errors."""
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")


def _argument_type(convert, accept, wanted, name):
    """An argparse ``type``: ``convert`` the text and ``accept`` the value, else a one-line
    "expected {wanted}, got ..." error."""

    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
        return value

    parse.__name__ = name
    return parse


def int_at_least(minimum):
    """An argparse ``type`` accepting integers >= ``minimum`` (one-line errors)."""
    wanted = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    return _argument_type(int, lambda value: value >= minimum, wanted,
                          "positive_int" if minimum == 1 else f"int_at_least_{minimum}")


_positive_int = int_at_least(1)
# A seed for NumPy and scikit-learn, which take integers in [0, 2**32 - 1].
_seed = _argument_type(int, lambda value: 0 <= value < 2**32, "an integer in [0, 2**32 - 1]",
                       "seed")
# joblib's n_jobs: N jobs, or -1 for all cores, -2 for all but one; 0 means nothing.
_n_jobs = _argument_type(int, lambda value: value != 0,
                         "a non-zero integer (N jobs; -1: all cores)", "n_jobs")


def _max_evals(text):
    return "auto" if text == "auto" else _positive_int(text)


def _version():
    from skshapley import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``skshapley``; its errors raise :class:`UsageError`."""
    parser = _ArgumentParser(
        prog="skshapley",
        description="Shapley values for scikit-learn models. Each command runs on a "
                    "bundled data set when given no --data, so you can try it at once; "
                    "`skshapley COMMAND --help` lists its options.",
        epilog="exit codes: 0 ok, 1 computation failed, 2 bad arguments or input, "
               "4 backend unavailable, 130 interrupted")
    add_debug_argument(parser)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND",
                                     parser_class=_ArgumentParser)
    explain = commands.add_parser(
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
    _cli_model.add_model_arguments(
        explain, "sklearn.ensemble:HistGradientBoostingRegressor, or "
                 "...Classifier for class labels, see --task", model_file=True)
    explain.add_argument("--rows", type=_positive_int, default=20, metavar="N",
                         help="explain N rows, sampled at random (seeded by "
                              "--random-state; kept in the data's order) unless "
                              "--rows-from start (default 20)")
    explain.add_argument("--rows-from", choices=["sample", "start"], default="sample",
                         help="sample (default): N rows drawn at random, so sorted data "
                              "give more than one class; start: the first N rows")
    explain.add_argument("--method", default="auto",
                         help="auto (default), tree, linear, exact, permutation, kernel, "
                              "leverage, kadd, surrogate, stratified, owen or owen_halved (see "
                              "ShapleyExplainer)")
    explain.add_argument("--max-evals", type=_max_evals, default="auto",
                         help="coalition evaluations per row, or auto")
    explain.add_argument("--tol", type=float, default=None,
                         help="stop a row once its estimated error is below TOL")
    explain.add_argument("--background", type=_positive_int, default=100,
                         help="background rows sampled from the data (default 100)")
    explain.add_argument("--groups", type=_groups_json, default=None, metavar="JSON",
                         help="explain groups of columns, each one player: a JSON object "
                              "'{\"name\": [\"col\", ...], ...}' or a list of lists of "
                              "columns (named by their columns joined with +); every "
                              "column in exactly one group")
    explain.add_argument("--output", default="skshapley_summary.png", metavar="PATH",
                         help="summary plot (default skshapley_summary.png; PATH.png "
                              "for a PATH without suffix; an existing file is "
                              "overwritten)")
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
    explain.add_argument("--random-state", type=_seed, default=0,
                         help="seed of the explained rows, the background sample, the "
                              "sampling and the model when it has a random_state "
                              "(default 0)")
    explain.add_argument("--n-jobs", type=_n_jobs, default=None,
                         help="parallel jobs over rows (default 1; -1: all cores)")
    explain.add_argument("--backend", default=None,
                         help="kernel backend: auto, numpy or numba (default: the "
                              "configured one)")
    explain.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="show a progress bar over rows (default: when stderr is a "
                              "terminal)")
    explain.add_argument("--top", type=_positive_int, default=None, metavar="N",
                         help="print the N most important features (default: all up to "
                              "50 features, else 30)")
    add_debug_argument(explain)
    _add_attribute_parser(commands)
    _add_select_parser(commands)
    _add_importance_parser(commands)
    helpers = SimpleNamespace(positive_int=_positive_int, int_at_least=int_at_least,
                              seed=_seed, n_jobs=_n_jobs,
                              add_data_arguments=add_data_arguments,
                              add_debug_argument=add_debug_argument)
    _cli_quantile.add_parser(commands, helpers)
    _cli_bench.add_parser(commands, helpers)
    return parser


_fraction = _argument_type(float, lambda value: 0.0 < value < 1.0, "a number in (0, 1)",
                           "fraction")
_non_negative = _argument_type(float, lambda value: value >= 0.0, "a number >= 0",
                               "non_negative")


def _add_attribute_parser(commands):
    attribute = commands.add_parser(
        "attribute", help="attribute a linear model's test R² to its features (LS-SPA)",
        description="Split the rows into training and test sets, fit a least-squares (or "
                    "ridge) model with intercept, and attribute its out-of-sample R² to the "
                    "features by Shapley values (LS-SPA): prints each feature's share with "
                    "its 95 % error bar and writes a bar chart. Without --data it uses "
                    "scikit-learn's bundled diabetes data.",
    )
    add_data_arguments(attribute)
    attribute.add_argument("--test-size", type=_fraction, default=0.25, metavar="F",
                           help="fraction of rows held out for the test R² (default 0.25)")
    attribute.add_argument("--alpha", type=_non_negative, default=0.0,
                           help="ridge penalty, scikit-learn's Ridge convention (default 0)")
    attribute.add_argument("--method", default="auto",
                           help="auto (default), exact or permutation")
    attribute.add_argument("--sampler", default="argsort",
                           help="argsort (default), permutohedron, sobol_sphere or mc")
    attribute.add_argument("--max-samples", type=_positive_int, default=2**13,
                           help="maximum number of sampled orderings (default 8192)")
    attribute.add_argument("--tol", type=float, default=1e-2,
                           help="stop once the estimated 95 %% error is below TOL "
                                "(default 0.01)")
    attribute.add_argument("--output", default="skshapley_attribution.png", metavar="PATH",
                           help="bar chart (default skshapley_attribution.png; an "
                                "existing file is overwritten)")
    attribute.add_argument("--random-state", type=_seed, default=0,
                           help="seed of the train/test split and the sampling (default 0)")
    add_debug_argument(attribute)


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


def _add_select_parser(commands):
    select = commands.add_parser(
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
    _cli_model.add_model_arguments(
        select, "a random forest of 20 trees: sklearn.ensemble:RandomForestRegressor, or "
                "...Classifier for class labels, see --task")
    select.add_argument("--importance", default="auto",
                        help="auto (default: LS-SPA for linear least squares, mean |SHAP| "
                             "where the values have a closed form, else refits within "
                             "about 5 s), refit, performance or mean_abs_shap")
    select.add_argument("--method", default="cmcs_at_k",
                        help="cmcs_at_k (default), greedy_cmcs, cmcs, sampling_shap_at_k, "
                             "regression or exact")
    select.add_argument("--max-evals", type=_max_evals, default="auto",
                        help="most game evaluations (model fits for refit), or auto")
    select.add_argument("--delta", type=_fraction, default=0.01,
                        help="confidence parameter of the PAC rule (default 0.01)")
    select.add_argument("--epsilon", type=_non_negative, default=5e-4,
                        help="tolerance of the PAC rule, in score units (default 0.0005)")
    select.add_argument("--scoring", default=None,
                        help="scikit-learn scorer name (default: the model's score)")
    select.add_argument("--output", default="skshapley_topk.png", metavar="PATH",
                        help="plot of the estimates (default skshapley_topk.png; an "
                             "existing file is overwritten)")
    select.add_argument("--random-state", type=_seed, default=0,
                        help="seed of the split, the model and the sampling (default 0)")
    select.add_argument("--n-jobs", type=_n_jobs, default=None,
                        help="parallel model fits (default 1; -1: all cores)")
    select.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar over evaluations (default: when stderr "
                             "is a terminal)")
    add_debug_argument(select)


def _load_data(path, target, text=False, allow_nan=False, target_required=True):
    """(X, y, feature names) read from a CSV file; pandas parses it. X is a float array,
    or with ``text`` a DataFrame that may keep text columns. With ``allow_nan``, for a
    model that takes missing values, the feature columns may hold NaN (never the target,
    which the model is fitted on). Without ``target_required`` (a fitted model, nothing
    to fit), ``target`` may be None, and then y is None."""
    import numpy as np

    if target is None and target_required:
        raise UsageError("--data needs --target COL, the column to predict")
    try:
        import pandas as pd
        from pandas.api.types import is_numeric_dtype
    except ImportError:
        raise UsageError("--data needs pandas to read CSV files (pip install pandas)") from None
    try:
        frame = pd.read_csv(path)
    except FileNotFoundError:
        raise UsageError(f"cannot read {path!r}: no such file") from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UsageError(f"cannot read {path!r} as CSV: {reason}") from None
    if frame.shape[0] == 0:
        raise UsageError(f"{path!r} has no data rows")
    _cli_quantile.check_header(path, UsageError)
    if frame.shape[0] < 2:
        raise UsageError(f"{path!r} has 1 data row; fitting a model and checking it needs "
                         "at least 2")
    if target is not None and target not in frame.columns:
        raise UsageError(
            f"target column {target!r} is not in {path!r}; its columns are {list(frame.columns)}"
        )
    _check_typos(frame, path)
    y = None if target is None else frame.pop(target)
    if frame.shape[1] == 0:
        raise UsageError(f"{path!r} has no feature columns besides the target {target!r}")
    # said here, not by a model that takes NaN: HistGradientBoosting's binning failed on
    # such a column with numpy's "window shape cannot be larger than input array shape"
    empty = [c for c in frame.columns if frame[c].isna().all()]
    if empty:
        raise UsageError(f"feature columns {empty} of {path!r} have no values (every cell "
                         "is missing); drop them")
    text_columns = [c for c in frame.columns if not is_numeric_dtype(frame[c])]
    if text_columns and not text:
        raise UsageError(
            f"non-numeric feature columns in {path!r}: {text_columns}; encode them first "
            "(skshapley explain and select take them as they are)"
        )
    missing = [c for c in ([] if allow_nan else list(frame.columns))
               + ([] if y is None else [target])
               if (frame[c] if c != target else y).isna().any()]
    if missing:
        raise UsageError(f"missing values (NaN) in columns {missing} of {path!r}")
    if y is not None and y.nunique() < 2:
        # Nothing to explain: every feature's value is 0, and a selector "certifies" any
        # choice; a classifier cannot be fitted on one class.
        raise UsageError(f"target column {target!r} of {path!r} has one value "
                         f"({y.tolist()[0]!r}) in all {len(y)} rows; a model needs a target "
                         "that varies (a classifier: at least two classes)")
    infinite = [c for c in frame.columns if c not in text_columns
                and np.isinf(frame[c].to_numpy(dtype=float)).any()]
    if infinite:
        raise UsageError(f"infinite values in columns {infinite} of {path!r}")
    names = [str(c) for c in frame.columns]
    y = None if y is None else y.to_numpy()
    if text:
        return frame.set_axis(names, axis=1), y, names
    return frame.to_numpy(dtype=float), y, names


def _check_typos(frame, path):
    """Refuse a column of numbers with a few text cells: pandas reads it as text, which
    explain and select would encode as categories. A few: at most 3 cells or 10 % of
    the non-missing ones, and fewer than the numbers."""
    import pandas as pd
    from pandas.api.types import is_numeric_dtype

    for column in frame.columns:
        if is_numeric_dtype(frame[column]):
            continue
        cells = frame[column].dropna()
        is_text = pd.to_numeric(cells, errors="coerce").isna()
        n_text = int(is_text.sum())
        if 0 < n_text <= max(3, 0.1 * len(cells)) and n_text < len(cells) - n_text:
            row = cells.index[is_text.to_numpy()][0]
            position = frame.index.get_loc(row)
            raise UsageError(
                f"column {column!r} of {path!r} holds numbers except for {n_text} "
                f"cell{'s' if n_text > 1 else ''}, the first {cells[row]!r} in data row "
                f"{position + 1} (line {position + 2}); correct {'them' if n_text > 1 else 'it'}, "
                "or leave the cell empty for a missing value")


def _default_explain_model(classification):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    cls = HistGradientBoostingClassifier if classification else HistGradientBoostingRegressor
    return cls(random_state=0)


def _load_model(spec, classes=False, params=None):
    """The estimator of ``--model`` with ``--model-params``; by default a
    HistGradientBoosting regressor, or its classifier with ``classes``."""
    return _cli_model.build_model(spec, params, lambda: _default_explain_model(classes),
                                  UsageError)


def _is_text(y):
    """Whether the target ``y`` holds labels that are not numbers (text or booleans)."""
    return getattr(y, "dtype", None) is not None and y.dtype.kind in "OSUb"


def _check_numeric_target(model, y, target):
    """A regressor cannot be fitted on text labels: say so before the fit does."""
    from sklearn.base import is_regressor

    if _is_text(y) and y.dtype.kind != "b" and is_regressor(model):
        raise UsageError(
            f"target column {target!r} is not numeric (e.g. {str(y[0])!r}) and "
            f"{type(model).__name__} is a regressor; choose a classifier via --model "
            "(e.g. sklearn.ensemble:HistGradientBoostingClassifier)")


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
    names_shown = [explanation.feature_names[j] for j in (order if top is None
                                                          else order[:top])]
    width = max(len("feature"), *(len(name) for name in names_shown))
    print(f"{'rank':>4}  {'feature':<{width}}  {'mean |SHAP|':>12}  {'std. error':>10}", file=out)
    shown = order if top is None else order[:top]
    for rank, j in enumerate(shown, start=1):
        error = f"{'exact':>10}" if exact else f"{errors[j]:>10.4f}"
        print(f"{rank:>4}  {explanation.feature_names[j]:<{width}}  {importance[j]:>12.4f}  "
              f"{error}", file=out)
    if len(shown) < len(order):
        print(f"      ... {len(order) - len(shown)} more features (--top to show more)",
              file=out)
    for note in explanation.notes:
        print(f"note: {note}", file=out)


def _with_text_encoded(model, X):
    """``(model, X)`` for X's text columns, if it has any: pandas categoricals that
    HistGradientBoosting encodes itself (its trees stay readable by method="tree"), or,
    for any other model, a one-hot encoder in front of it. Both take any subset of the
    columns (TopKShapleySelector refits on subsets); the explainer and the selector still
    treat each text column as one feature."""
    if not hasattr(X, "columns"):
        return model, X
    from pandas.api.types import is_numeric_dtype

    text = [c for c in X.columns if not is_numeric_dtype(X[c])]
    if not text:
        return model, X
    if "categorical_features" in model.get_params():
        X = X.astype({c: "category" for c in text})
        return model.set_params(categorical_features="from_dtype"), X
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
    return make_pipeline(make_column_transformer(
        (encoder, make_column_selector(dtype_exclude="number")), remainder="passthrough"),
        model), X


def _seeded(model, seed):
    """A model built without arguments is seeded too, so runs repeat exactly."""
    if getattr(model, "get_params", dict)().get("random_state", 0) is None:
        model.set_params(random_state=seed)
    return model


def _check_output_path(path, data=None, inputs=()):
    """Fail before the work if the plot cannot be written where asked, or would overwrite
    the ``--data`` file (or another of ``inputs``, (option, path) pairs). Returns the
    name written: matplotlib writes ``PATH.png`` for a PATH without suffix (a device such
    as /dev/null is written as it is)."""
    from matplotlib.backend_bases import FigureCanvasBase

    target = Path(path)
    if target.is_dir():
        raise UsageError(f"--output {path!r} is a directory; give a file name such as "
                         f"{str(target / 'skshapley_summary.png')!r}")
    if not target.parent.is_dir():
        raise UsageError(f"--output {path!r}: directory {str(target.parent)!r} does not exist")
    suffix = target.suffix.lower().lstrip(".")
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in formats:
        raise UsageError(f"--output {path!r}: matplotlib cannot write .{suffix} files; "
                         f"use one of {sorted(formats)} (e.g. .png)")
    if not suffix and not _cli_quantile._is_special(path):
        path = f"{path}.png"
    _cli_quantile.check_distinct([("--output", path)], [("--data", data), *inputs],
                                 UsageError)
    return path


def _explain(args, out) -> ExitCode:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")

    from skshapley import ShapleyExplainer, config_context
    from skshapley.approximators import METHODS
    from skshapley.utils import finite_policy

    # ShapleyExplainer's methods: the approximators', TreeSHAP and linear models' closed form
    methods = ["auto", "tree", "linear", *(name for name in METHODS if name != "auto")]
    if args.method not in methods:
        raise UsageError(f"--method {args.method!r} is not one of {methods}")
    _cli_model.check_model_file_options(args, UsageError)
    prefit = args.model_file is not None
    args.output = _check_output_path(args.output, args.data,
                                     inputs=[("--model-file", args.model_file)])
    if args.values is not None:
        _cli_values.check_values_path(args.values, UsageError)
        _cli_quantile.check_distinct([("--output", args.output), ("--values", args.values)],
                                     [("--data", args.data), ("--model-file", args.model_file)],
                                     UsageError)
    # The data are read before the default model is chosen (a classifier for class
    # labels), so NaN is let through first and refused below if that model rejects it.
    X, y, names, source = _data_or_diabetes(args, text=True, allow_nan=True,
                                            target_required=not prefit)
    if prefit:
        model = _cli_model.load_model_file(args.model_file, args.trust, UsageError)
        X, names = _cli_model.columns_for_model(model, X, names, source, UsageError)
        about = f"{type(model).__name__}, fitted, from {args.model_file}"
    else:
        classes = _cli_model.is_classification(y, args.task)
        model = _load_model(args.model, classes=classes, params=args.model_params)
        _cli_model.check_model_task(model, args.task, UsageError)
        _cli_model.check_target(y, args.task, args.target or "target", UsageError)
        about = type(model).__name__
        if args.model is None:
            about += f", {_cli_model.describe_task(y, args.task, args.target or 'target')}"
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
        _check_numeric_target(model, y, args.target)
        model, X = _with_text_encoded(_seeded(model, args.random_state), X)
    if args.values is not None and args.groups is None:
        # a feature named like a column of values is refused before the work
        _cli_values.value_columns(names, None, args.values_errors, UsageError)
    rows = _explained_rows(len(X), args.rows, args.rows_from, args.random_state)
    explainer = ShapleyExplainer(
        model, prefit=prefit, method=args.method, max_evals=args.max_evals, tol=args.tol,
        background=args.background, n_jobs=_n_workers(args.n_jobs, len(rows)),
        random_state=args.random_state, groups=args.groups,
        # a bar on a terminal by default: explaining many columns takes a while
        progress=args.progress if args.progress is not None else sys.stderr.isatty(),
    )
    with config_context(backend=args.backend):
        explainer.fit(X, y)
        explanation = explainer.explain(X[rows] if isinstance(X, np.ndarray)
                                        else X.iloc[rows])
    if args.groups is None:
        explanation.feature_names = names
    title = f"SHAP summary: {type(model).__name__}, {len(explanation)} rows"
    if explanation.values.ndim == 3 and explanation.output_names:
        title += f", output {explanation.output_names[0]}"
    figure = explanation.plot.summary(title=title)
    # The plot and the values are saved before the table is printed, so a closed pipe on
    # stdout (`skshapley explain | head -3`) still leaves them.
    _save_figure(figure, args.output, tight=False)
    if args.values is not None:
        _cli_values.write_values(args.values, explanation, rows, args.values_errors,
                                 UsageError)
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


def _data_or_diabetes(args, text=False, allow_nan=False, target_required=True):
    """(X, y, feature names, source name) from ``--data``/``--target``, or scikit-learn's
    diabetes data; X and y are NumPy arrays (so only ``--data`` needs pandas), except a
    CSV read with ``text``, which stays a DataFrame."""
    if args.data is not None:
        return (*_load_data(args.data, args.target, text, allow_nan, target_required),
                args.data)
    if args.target is not None:
        raise UsageError("--target needs --data CSV")
    from sklearn.datasets import load_diabetes

    data = load_diabetes()
    return data.data, data.target, list(data.feature_names), "diabetes (scikit-learn)"


def _n_workers(n_jobs, n_tasks=None):
    """``n_jobs`` capped at the cores and the tasks: ``--n-jobs 1000`` on 4 rows started
    about 170 processes. joblib's negative values count back from the cores (-1: all)."""
    if n_jobs is None:
        return None
    cores = os.cpu_count() or 1
    wanted = n_jobs if n_jobs > 0 else max(1, cores + 1 + n_jobs)
    return max(1, min(wanted, cores, n_tasks if n_tasks is not None else wanted))


def _save_figure(figure, path, *, tight=True):
    """Write ``figure`` to ``path`` (a name from :func:`_check_output_path`) through a
    temporary file, and close it; an unwritable path is a usage error."""
    import matplotlib.pyplot as plt

    suffix = Path(path).suffix.lower().lstrip(".") or "png"
    try:
        with _cli_quantile.written_atomically(path, "--output", UsageError) as temporary:
            figure.savefig(temporary, dpi=120, format=suffix,
                           **({"bbox_inches": "tight"} if tight else {}))
    finally:
        plt.close(figure)


def _attribute(args, out) -> ExitCode:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    from sklearn.model_selection import train_test_split

    from skshapley.attribution import lsspa
    from skshapley.plotting import attribution_bar

    X, y, names, source = _data_or_diabetes(args)
    if len(X) < 4:
        raise UsageError(f"{source!r} has {len(X)} rows; the train/test split needs at least 4")
    args.output = _check_output_path(args.output, args.data)
    X_train, X_test, y_train, y_test = train_test_split(
        X, _as_float_target(y), test_size=args.test_size,
        random_state=args.random_state)
    result = lsspa(X_train, X_test, y_train, y_test, alpha=args.alpha, method=args.method,
                   sampler=args.sampler, max_samples=args.max_samples, tol=args.tol,
                   random_state=args.random_state)
    ax = attribution_bar(result, feature_names=names)
    ax.set_title(f"LS-SPA: test R² = {result.r2:.4f}", loc="left")
    figure = ax.figure
    _save_figure(figure, args.output, tight=True)
    detail = ("exact" if result.method == "exact" else
              f"{result.n_samples} orderings ({result.sampler}), estimated 95 % error "
              f"{result.error_quantile:.2g}{'' if result.converged else ', tol not reached'}")
    print(f"data: {source}   train rows: {len(y_train)}   test rows: {len(y_test)}   "
          f"alpha: {result.alpha:g}", file=out)
    print(f"test R²: {result.r2:.4f} (baseline: training mean)   method: {detail}", file=out)
    is_classes, reason = _cli_model.target_kind(y)
    if is_classes:
        # the task rule of explain and select, said here: LS-SPA splits a regression's R²
        print(f"note: target {args.target!r} holds {reason}, which explain and select "
              "read as class labels; attribute fits a least-squares regression all the "
              "same", file=out)
    order = np.argsort(-result.attribution, kind="stable")
    width = max(len("feature"), *(len(name) for name in names))
    print(f"{'rank':>4}  {'feature':<{width}}  {'share of R²':>12}  {'± 95 %':>8}", file=out)
    for rank, j in enumerate(order, start=1):
        print(f"{rank:>4}  {names[j]:<{width}}  {result.attribution[j]:>12.4f}  "
              f"{result.attribution_errors[j]:>8.4f}", file=out)
    print(f"bar chart written to {args.output}", file=out)
    return ExitCode.OK


def _as_float_target(y):
    import numpy as np

    try:
        return np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise UsageError("the target column must be numeric for a regression") from None


def _select_model(spec, y, task="auto", params=None):
    def default():
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

        # The global games of the top-k paper (Kolpaczki, Nielen & Hüllermeier 2025,
        # Sec. 6) use forests of 20 trees.
        classes = _cli_model.is_classification(y, task)
        cls = RandomForestClassifier if classes else RandomForestRegressor
        return cls(n_estimators=20, random_state=0)

    return _cli_model.build_model(spec, params, default, UsageError)


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
            f"(v(∅), v(N) and one round of {n_features + 1}); finite intervals need 30 "
            f"rounds (about {30 * (n_features + 1) + 2}), and auto picks "
            f"{60 * (n_features + 1)}")


# TopKShapleySelector's fewest rows: its default 25 % validation split must leave two
# rows on each side (the selector's own check says so in library terms).
_SELECT_MIN_ROWS = 8


def _select(args, out) -> ExitCode:
    import matplotlib

    matplotlib.use("Agg")

    from skshapley import TopKShapleySelector
    from skshapley.plotting import topk

    X, y, names, source = _data_or_diabetes(args, text=True)
    if len(X) < _SELECT_MIN_ROWS:
        raise UsageError(f"{source!r} has {len(X)} rows; select scores each subset on "
                         f"held-out rows and needs at least {_SELECT_MIN_ROWS} (2 to "
                         "validate on and 2 to train on, after the 25 % split)")
    if isinstance(args.k, int) and args.k > X.shape[1]:
        raise UsageError(f"--k {args.k} is more than the {X.shape[1]} features of {source!r}")
    model = _select_model(args.model, y, args.task, args.model_params)
    _cli_model.check_model_task(model, args.task, UsageError)
    _cli_model.check_target(y, args.task, args.target or "target", UsageError)
    model, X = _with_text_encoded(_seeded(model, args.random_state), X)
    _check_budget(args, X.shape[1])
    args.output = _check_output_path(args.output, args.data)
    selector = TopKShapleySelector(
        model, k=args.k, importance=args.importance, method=args.method,
        max_evals=args.max_evals, delta=args.delta, epsilon=args.epsilon,
        scoring=args.scoring, n_jobs=_n_workers(args.n_jobs),
        random_state=args.random_state,
        # a bar on a terminal by default: hundreds of model fits take minutes
        progress=args.progress if args.progress is not None else sys.stderr.isatty(),
    )
    selector.fit(X, y)
    ax = topk(selector, feature_names=names)
    figure = ax.figure
    _save_figure(figure, args.output, tight=True)
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
        f", {_cli_model.describe_task(y, args.task, args.target or 'target')}"
    print(f"data: {source}   model: {type(model).__name__}{task}   importance: "
          f"{args.importance}   method: {selector.method_}", file=out)
    print(f"kept {selector.k_} of {len(names)} features with {selector.n_evaluations_} "
          f"evaluations; {status}", file=out)
    level = f"{100 * (1 - args.delta):g} %"
    width = max(len("feature"), *(len(name) for name in names))
    print(f"{'rank':>4}  {'feature':<{width}}  {'kept':>4}  {'estimate':>10}  "
          f"{level + ' interval':>24}", file=out)
    for j in sorted(range(len(names)), key=lambda j: selector.ranking_[j]):
        low, high = selector.confidence_intervals_[j]
        print(f"{selector.ranking_[j]:>4}  {names[j]:<{width}}  "
              f"{'yes' if selector.support_[j] else '':>4}  "
              f"{selector.shapley_values_[j]:>10.4f}  [{low:>10.4f}, {high:>10.4f}]", file=out)
    print(f"plot written to {args.output}", file=out)
    return ExitCode.OK


def _groups_json(text):
    """An argparse ``type``: ``--groups`` as a JSON object (name -> columns) or a list of
    lists of columns."""
    import json

    example = '{"body": ["bmi", "bp"], "age": ["age"]}'
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(
            f"expected a JSON object such as '{example}' or a list of lists of columns, "
            f"got {text!r} ({err.msg} at character {err.pos})") from None
    if not isinstance(value, (dict, list)):
        raise argparse.ArgumentTypeError(
            f"expected a JSON object such as '{example}' or a list of lists of columns, "
            f"got {text!r} (a JSON {type(value).__name__})")
    return value


def _add_importance_parser(commands):
    importance = commands.add_parser(
        "importance", help="rank features by the Shapley values of the model's score (SAGE)",
        description="Fit a model on a training split and rank the columns by how much "
                    "of its held-out score they carry: the Shapley values of the score of "
                    "the model with absent columns averaged over background rows (SAGE, "
                    "no refits). Prints a ranked table with 95 % intervals and writes a "
                    "bar chart. Without --data it uses scikit-learn's bundled diabetes "
                    "data.",
    )
    add_data_arguments(importance)
    _cli_model.add_model_arguments(
        importance, "sklearn.ensemble:HistGradientBoostingRegressor, or ...Classifier "
                    "for class labels, see --task", model_file=True)
    importance.add_argument("--groups", type=_groups_json, default=None, metavar="JSON",
                            help="players made of several columns: a JSON object "
                                 "'{\"name\": [\"col\", ...], ...}' or a list of lists "
                                 "of columns; every column in exactly one group")
    importance.add_argument("--scoring", default=None,
                            help="scikit-learn scorer name, e.g. neg_mean_squared_error "
                                 "or neg_log_loss (default: R² for regressors, accuracy "
                                 "for classifiers)")
    importance.add_argument("--max-evals", type=_max_evals, default="auto",
                            help="most coalition evaluations, or auto (2^d up to 10 "
                                 "features: exact; else 32 antithetic pairs of orderings)")
    importance.add_argument("--tol", type=float, default=None,
                            help="stop once the estimated 95 %% error of the values is "
                                 "below TOL (score units)")
    importance.add_argument("--background", type=_positive_int, default=50,
                            help="training rows that stand in for absent columns "
                                 "(default 50)")
    importance.add_argument("--test-size", type=_fraction, default=0.25, metavar="F",
                            help="fraction of rows held out to score on (default 0.25; "
                                 "with --model-file all rows are held out)")
    importance.add_argument("--rows", type=_positive_int, default=100, metavar="N",
                            help="score on at most N held-out rows, sampled at random "
                                 "(default 100): each evaluation predicts N x "
                                 "--background rows, so the time grows with both")
    importance.add_argument("--output", default="skshapley_importance.png", metavar="PATH",
                            help="bar chart (default skshapley_importance.png; an existing "
                                 "file is overwritten)")
    importance.add_argument("--random-state", type=_seed, default=0,
                            help="seed of the split, the rows, the background, the model "
                                 "and the orderings (default 0)")
    importance.add_argument("--n-jobs", type=_n_jobs, default=None,
                            help="threads evaluating coalitions (default 1; -1: all cores)")
    add_debug_argument(importance)


def _importance(args, out) -> ExitCode:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    from sklearn.model_selection import train_test_split

    from skshapley.inspection import shapley_importance
    from skshapley.plotting import importance_bar

    _cli_model.check_model_file_options(args, UsageError)
    prefit = args.model_file is not None
    if args.tol is not None and not (math.isfinite(args.tol) and args.tol > 0):
        raise UsageError(f"--tol must be a positive number; got {args.tol!r}")
    args.output = _check_output_path(args.output, args.data,
                                     inputs=[("--model-file", args.model_file)])
    X, y, names, source = _data_or_diabetes(args, text=True)
    if isinstance(X, np.ndarray):
        # the bundled data: named columns, so --groups can name them and the table does
        import pandas as pd

        X = pd.DataFrame(X, columns=names)
    rng = np.random.RandomState(args.random_state)
    if prefit:
        model = _cli_model.load_model_file(args.model_file, args.trust, UsageError)
        X, names = _cli_model.columns_for_model(model, X, names, source, UsageError)
        about = f"{type(model).__name__}, fitted, from {args.model_file}"
        X_test, y_test, X_train = X, y, X
    else:
        if len(X) < 4:
            raise UsageError(f"{source!r} has {len(X)} rows; the train/test split needs at "
                             "least 4")
        model = _load_model(args.model, classes=_cli_model.is_classification(y, args.task),
                            params=args.model_params)
        _cli_model.check_model_task(model, args.task, UsageError)
        _cli_model.check_target(y, args.task, args.target or "target", UsageError)
        _check_numeric_target(model, y, args.target)
        model, X = _with_text_encoded(_seeded(model, args.random_state), X)
        about = type(model).__name__
        if args.model is None:
            about += f", {_cli_model.describe_task(y, args.task, args.target or 'target')}"
        train, test = train_test_split(np.arange(len(X)), test_size=args.test_size,
                                       random_state=args.random_state)
        rows = (lambda index: X.iloc[index]) if hasattr(X, "iloc") else (lambda index: X[index])
        X_train, X_test, y_test = rows(train), rows(test), y[test]
        model.fit(X_train, y[train])
    if len(y_test) > args.rows:
        keep = np.sort(rng.choice(len(y_test), args.rows, replace=False))
        X_test = X_test.iloc[keep] if hasattr(X_test, "iloc") else X_test[keep]
        y_test = y_test[keep]
    n_background = min(args.background, len(X_train))
    keep = np.sort(rng.choice(len(X_train), n_background, replace=False))
    background = X_train.iloc[keep] if hasattr(X_train, "iloc") else X_train[keep]
    result = shapley_importance(
        model, X_test, y_test, scoring=args.scoring, groups=args.groups,
        background=background, max_evals=args.max_evals, tol=args.tol,
        n_jobs=_n_workers(args.n_jobs), random_state=args.random_state)
    ax = importance_bar(result)
    ax.figure.suptitle(f"Shapley importance (SAGE): {type(model).__name__}", x=0.02,
                       ha="left")
    _save_figure(ax.figure, args.output, tight=True)
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
    width = max(len("feature"), *(len(name) for name in labels))
    print(f"{'rank':>4}  {'feature':<{width}}  {'importance':>10}  {'± 95 %':>8}", file=out)
    order = np.argsort(-result.importances_mean, kind="stable")  # ties: lower index first
    for rank, j in enumerate(order, start=1):
        half = (result.ci_high[j] - result.ci_low[j]) / 2
        error = "exact" if result.method == "exact" else f"{half:.4f}"
        print(f"{rank:>4}  {labels[j]:<{width}}  {result.importances_mean[j]:>10.4f}  "
              f"{error:>8}", file=out)
    print(f"bar chart written to {args.output}", file=out)
    return ExitCode.OK


def main(argv=None) -> ExitCode:
    """Run the command line; returns an :class:`ExitCode` instead of exiting.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; ``sys.argv[1:]`` when None.

    Returns
    -------
    code : ExitCode
        OK (0), RUNTIME_ERROR (1), USAGE_ERROR (2: bad arguments or bad input data),
        BACKEND_UNAVAILABLE (4) or INTERRUPTED (130). Errors are one line on stderr,
        ``skshapley: error: ...``, with the traceback only under ``--debug``.

    Examples
    --------
    >>> from skshapley.cli import main
    >>> int(main(["explain", "--rows", "0"]))  # stderr: skshapley: error: argument --rows: ...
    2
    """
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv  # known even when parsing fails
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return ExitCode.USAGE_ERROR
        if args.command == "attribute":
            return _attribute(args, sys.stdout)
        if args.command == "select":
            return _select(args, sys.stdout)
        if args.command == "importance":
            return _importance(args, sys.stdout)
        if args.command == "quantile":
            _cli_quantile.run(args, sys.stdout, UsageError)
            return ExitCode.OK
        if args.command == "bench":
            _cli_bench.run(args, sys.stdout, UsageError)
            return ExitCode.OK
        return _explain(args, sys.stdout)
    except SystemExit as exit_:  # --help and --version end parsing with code 0
        return ExitCode.OK if exit_.code in (0, None) else ExitCode.USAGE_ERROR
    except UsageError as err:
        _report(err, debug)
        return ExitCode.USAGE_ERROR
    except KeyboardInterrupt:
        print("skshapley: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        raise  # console_main's business: the reader of stdout went away
    except Exception as err:  # the CLI's last line of defence: one line, code by kind
        from skshapley.exceptions import BackendUnavailableError

        _report(err, debug)
        if isinstance(err, BackendUnavailableError):
            return ExitCode.BACKEND_UNAVAILABLE
        if isinstance(err, (ValueError, TypeError)):
            # skshapley and scikit-learn report bad input and bad parameters so.
            return ExitCode.USAGE_ERROR
        return ExitCode.RUNTIME_ERROR


def _report(err, debug):
    if debug:
        traceback.print_exception(err)
    message = " ".join(str(err).split()) or type(err).__name__
    print(f"skshapley: error: {message}", file=sys.stderr)


def _drop_current_directory():
    """Under ``python -m skshapley`` Python puts the current directory first on sys.path
    (unless -P or PYTHONSAFEPATH), so ``--model mymod:Class`` or a stray ``sklearn.py``
    there would be imported; the console script never looks there. Take it off, so both
    import the same modules."""
    if (not sys.flags.safe_path and sys.path and sys.argv
            and Path(sys.argv[0]).name == "__main__.py"
            and sys.path[0] in ("", os.getcwd())):
        del sys.path[0]


def console_main() -> int:
    """Entry point of the ``skshapley`` console script and of ``python -m skshapley``.

    Returns the exit code, which the caller passes to ``sys.exit`` (as pytest's
    ``console_main`` does).
    """
    _drop_current_directory()
    try:
        code = main()
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
        return int(code)
    except BrokenPipeError:
        # The reader went away (`skshapley explain | head -3`). Python flushes stdout
        # again at exit; point it at devnull so that flush cannot fail too (see "Note on
        # SIGPIPE" in the signal module's docs, which also exits with 1).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return int(ExitCode.RUNTIME_ERROR)
