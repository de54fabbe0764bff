"""The model behind ``skshapley explain``, ``select`` and ``importance``: one rule for
classes or regression (``--task``), ``--model`` and ``--model-params``, a fitted model
loaded with skops (``--model-file``, ``--trust``), and the model made ready for the data
(text columns encoded, seeded).

A function that refuses its input raises :class:`~skshapley.cli.UsageError` (exit
code 2).
"""

from __future__ import annotations

import argparse
import importlib
import zipfile
from pathlib import Path

from skshapley.cli._common import UsageError, first_line, json_argument

# A numeric target with at most this many distinct values, all of them integers, is read
# as class labels (0/1, the wine data's 0/1/2, ratings 1-5); one with more is regressed.
MAX_CLASS_LABELS = 20

TASKS = ("auto", "classification", "regression")

TASK_RULE = (f"auto (the default) fits a classifier to a target of text or booleans, or "
             f"of at most {MAX_CLASS_LABELS} distinct values that are all integers "
             "(0/1, 0/1/2, ratings 1-5), and a regressor to any other numeric target; "
             "classification or regression overrides the rule")

# --model runs the code of the module it names, as any import does.
MODEL_IMPORT = ("MODULE is imported (its code runs) from the installed packages and "
                "PYTHONPATH, not from the current directory, also under python -m")

_PARAMS_EXAMPLE = '{"max_depth": 4}'


def _model_params(text):
    """An argparse ``type``: a JSON object of estimator parameters."""
    return json_argument(text, dict, f"a JSON object such as '{_PARAMS_EXAMPLE}'")


def _type_names(text):
    """An argparse ``type``: comma-separated fully qualified type names."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated type names such as sklearn.tree._tree.Tree, got "
            f"{text!r}")
    return names


def add_model_arguments(parser, default, model_file=False):
    """``--model``, ``--model-params`` and ``--task`` (with ``model_file``, also
    ``--model-file`` and ``--trust``); ``default`` says which model is fitted without
    ``--model``."""
    parser.add_argument("--model", metavar="MODULE:CLASS",
                        help=f"scikit-learn estimator class, built with no arguments "
                             f"and then given --model-params (default {default}). "
                             + MODEL_IMPORT)
    parser.add_argument("--model-params", type=_model_params, default=None, metavar="JSON",
                        help="parameters of the model class, as a JSON object (e.g. "
                             f"'{_PARAMS_EXAMPLE}'); also for the default model")
    parser.add_argument("--task", choices=TASKS, default="auto",
                        help="fit a classifier or a regressor: " + TASK_RULE)
    if model_file:
        parser.add_argument("--model-file", metavar="SKOPS",
                            help="explain this fitted model, saved with skops.io.dump "
                                 "(needs skops), instead of fitting one; --target is then "
                                 "optional (the column is dropped). Types skops does not "
                                 "trust by default are refused unless named in --trust")
        parser.add_argument("--trust", type=_type_names, default=[], metavar="TYPE,...",
                            help="types of --model-file to trust besides skops's defaults "
                                 "(the refusal names them); only for a file whose source "
                                 "you trust")


def target_kind(y):
    """How the task rule reads the target ``y``: (is classes, reason), the reason a phrase
    such as "2 distinct integer values"."""
    import numpy as np

    y = np.asarray(y)
    if y.dtype.kind == "b":
        return True, "booleans"
    if y.dtype.kind in "OSU":
        return True, "text"
    distinct = np.unique(y)
    if y.dtype.kind in "iu" or bool(np.all(np.isfinite(distinct)
                                           & (distinct == np.round(distinct)))):
        if distinct.size <= MAX_CLASS_LABELS:
            return True, f"{distinct.size} distinct integer values"
        return False, f"{distinct.size} distinct integer values, more than {MAX_CLASS_LABELS}"
    return False, "numbers that are not all integers"


def is_classification(y, task):
    """Whether the model fitted to ``y`` is a classifier: ``task`` "classification" or
    "regression" says so; "auto" applies the rule (:data:`TASK_RULE`)."""
    if task != "auto":
        return task == "classification"
    return target_kind(y)[0]


def describe_task(y, task, target):
    """The task and why, for the output: "classification (auto: target 'y' holds ...)"."""
    classes = is_classification(y, task)
    name = "classification" if classes else "regression"
    if task != "auto":
        return f"{name} (--task)"
    return f"{name} (auto: target {target!r} holds {target_kind(y)[1]}; --task overrides)"


def check_target(y, task, target):
    """Refuse a target the task cannot take: text for a regression, numbers that are not
    all integers for a classification."""
    import numpy as np

    y = np.asarray(y)
    if task == "regression" and y.dtype.kind in "OSU":
        raise UsageError(f"--task regression needs a numeric target; column {target!r} "
                         f"holds text (e.g. {str(y[0])!r})")
    if task == "classification" and y.dtype.kind == "f":
        fractional = y[y != np.round(y)]
        if fractional.size:
            raise UsageError(
                f"--task classification needs class labels; column {target!r} holds "
                f"numbers that are not integers (e.g. {fractional[0]!r}); use --task "
                "regression, or bin the target first")


def check_model_task(model, task):
    """Refuse a ``--task`` that contradicts the kind of the model given."""
    from sklearn.base import is_classifier, is_regressor

    if task == "classification" and is_regressor(model) and not is_classifier(model):
        raise UsageError(f"--task classification, but {type(model).__name__} is a "
                         "regressor; give a classifier via --model, or drop --task")
    if task == "regression" and is_classifier(model) and not is_regressor(model):
        raise UsageError(f"--task regression, but {type(model).__name__} is a "
                         "classifier; give a regressor via --model, or drop --task")


def build_model(spec, params, default):
    """The estimator of ``--model`` (``spec``, "module:Class", built without arguments)
    or ``default()``, with ``params`` (``--model-params``) set on it."""
    model = default() if spec is None else _model_from_spec(spec)
    if type(model).__module__.partition(".")[0] == "lightgbm":
        # LightGBM logs every fit to stdout (the selector refits hundreds of times) unless
        # told not to; verbose=-1 is its own switch, kept by clone(). --model-params may
        # set it back.
        model.set_params(verbose=-1)
    if params:
        valid = model.get_params(deep=True)  # "step__param" names of a Pipeline too
        unknown = [name for name in params if name not in valid]
        if unknown:
            own = sorted(model.get_params(deep=False))
            raise UsageError(
                f"--model-params: {type(model).__name__} has no parameter"
                f"{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; its "
                f"parameters are {', '.join(own)}")
        model.set_params(**params)
    return model


def _model_from_spec(spec):
    module_name, _, class_name = spec.partition(":")
    if not module_name or not class_name:
        raise UsageError(f"--model must look like module:Class (e.g. "
                         f"sklearn.linear_model:Ridge); got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise UsageError(f"--model: cannot import module {module_name!r} ({err})") from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        # Only a class is called: `os:getcwd` or `builtins:exit` ran before.
        kind = "" if cls is None else f" ({class_name} is a {type(cls).__name__})"
        raise UsageError(f"--model: module {module_name!r} has no class {class_name!r}{kind}")
    from sklearn.base import BaseEstimator

    if not (issubclass(cls, BaseEstimator)
            or (hasattr(cls, "fit") and hasattr(cls, "get_params"))):
        raise UsageError(f"--model: {spec} is not an estimator: give a scikit-learn "
                         "estimator class (a subclass of sklearn.base.BaseEstimator, or a "
                         "class with fit and get_params)")
    try:
        model = cls()
    except TypeError as err:
        raise UsageError(f"--model: {spec} cannot be built without arguments ({err})") from None
    if not hasattr(model, "fit"):
        raise UsageError(f"--model: {spec} is not an estimator (it has no fit method)")
    return model


def check_model_file_options(args):
    """``--model-file`` gives a fitted model: refuse the options that build one."""
    if args.model_file is None:
        if args.trust:
            raise UsageError("--trust names types of a --model-file; give --model-file")
        return
    given = [option for option, value in (("--model", args.model),
                                          ("--model-params", args.model_params))
             if value is not None]
    if args.task != "auto":
        given.append("--task")
    if given:
        raise UsageError(f"--model-file loads a fitted model; {' and '.join(given)} "
                         f"build{'s' if len(given) == 1 else ''} one to fit: give one or "
                         "the other")


def load_model_file(path, trusted):
    """The fitted model saved with ``skops.io.dump`` at ``path``. skops rebuilds only the
    types it trusts by default and those named in ``trusted`` (``--trust``); a file with
    other types is refused, naming them."""
    try:
        import skops.io as sio
    except ImportError:
        raise UsageError("--model-file needs skops to load the model (pip install skops, "
                         "or pip install 'skshapley[cli]')") from None
    if Path(path).is_dir():
        raise UsageError(f"--model-file {path!r} is a directory; give a .skops file")
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except FileNotFoundError:
        raise UsageError(f"cannot read --model-file {path!r}: no such file") from None
    except (OSError, zipfile.BadZipFile, KeyError, ValueError) as err:
        # a file that is no zip archive, or a zip archive without skops's schema.json
        raise UsageError(f"cannot read --model-file {path!r} as a skops file "
                         f"(skops.io.dump): {first_line(err)}") from None
    remaining = [name for name in untrusted if name not in trusted]
    if remaining:
        raise UsageError(
            f"--model-file {path!r} holds types that skops does not trust by default: "
            f"{remaining}; if you trust the file's source, name them: --trust "
            f"{','.join(remaining)}")
    try:
        # exactly the types named in --trust that the file holds, no others
        model = sio.load(path, trusted=list(untrusted))
    except (OSError, zipfile.BadZipFile, KeyError, ValueError, TypeError) as err:
        raise UsageError(f"cannot load --model-file {path!r}: {first_line(err)}") from None
    if not (hasattr(model, "fit") and hasattr(model, "get_params")):
        raise UsageError(f"--model-file {path!r} holds a {type(model).__name__}, not a "
                         "scikit-learn model")
    return model


def columns_for_model(model, X, names, source):
    """(X, names) as a fitted ``model`` reads them: the columns it was fitted on
    (``feature_names_in_``), in its order, or as many columns as it expects; refused
    otherwise, naming what is missing."""
    fitted = getattr(model, "feature_names_in_", None)
    if fitted is not None:
        fitted = [str(name) for name in fitted]
        missing = [name for name in fitted if name not in names]
        if missing:
            raise UsageError(f"--model-file's model was fitted on columns {missing}, which "
                             f"{source!r} lacks; its columns are {names}")
        if fitted != names:
            if hasattr(X, "columns"):
                X = X[fitted]
            else:
                X = X[:, [names.index(name) for name in fitted]]
        return X, fitted
    expected = getattr(model, "n_features_in_", None)
    if expected is not None and expected != len(names):
        raise UsageError(f"--model-file's model was fitted on {expected} columns, but "
                         f"{source!r} has {len(names)} feature columns ({names})")
    return X, names


def _default_explain_model(classification):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    cls = HistGradientBoostingClassifier if classification else HistGradientBoostingRegressor
    return cls(random_state=0)


def load_model(spec, classes=False, params=None):
    """The estimator of ``--model`` with ``--model-params``; by default (explain and
    importance) a HistGradientBoosting regressor, or its classifier with ``classes``."""
    return build_model(spec, params, lambda: _default_explain_model(classes))


def _is_text(y):
    """Whether the target ``y`` holds labels that are not numbers (text or booleans)."""
    return getattr(y, "dtype", None) is not None and y.dtype.kind in "OSUb"


def check_numeric_target(model, y, target):
    """A regressor cannot be fitted on text labels: say so before the fit does."""
    from sklearn.base import is_regressor

    if _is_text(y) and y.dtype.kind != "b" and is_regressor(model):
        raise UsageError(
            f"target column {target!r} is not numeric (e.g. {str(y[0])!r}) and "
            f"{type(model).__name__} is a regressor; choose a classifier via --model "
            "(e.g. sklearn.ensemble:HistGradientBoostingClassifier)")


def with_text_encoded(model, X):
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


def seeded(model, seed):
    """A model built without arguments is seeded too, so runs repeat exactly."""
    if getattr(model, "get_params", dict)().get("random_state", 0) is None:
        model.set_params(random_state=seed)
    return model
