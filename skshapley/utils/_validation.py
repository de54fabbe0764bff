"""Validation helpers and random-state plumbing."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skshapley._config import get_config
from skshapley.utils._sklearn_compat import (
    Interval,
    is_polars_df,
    is_pyarrow_data,
    validate_data,
)

# The constraint (see ``validate_params``) of a ``random_state`` that
# :func:`as_generator` takes: None, an int >= 0 (scikit-learn's Interval, which takes a
# bool as the int it is, as numpy's default_rng does), a RandomState, a SeedSequence or
# a Generator.
RANDOM_STATE = [None, Interval(Integral, 0, None, closed="left"), np.random.RandomState,
                np.random.SeedSequence, np.random.Generator]


def as_generator(random_state) -> np.random.Generator:
    """Turn None, an int, a ``RandomState``, a ``SeedSequence`` or a ``Generator`` into a
    ``numpy.random.Generator``.

    A ``Generator`` is returned as is (it is consumed); a ``RandomState`` seeds a new
    generator from one draw, so the caller's state advances as sklearn users expect.

    Examples
    --------
    >>> from skshapley.utils import as_generator
    >>> bool(as_generator(0).integers(10) == as_generator(0).integers(10))
    True
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (Integral, np.random.SeedSequence)):
        if isinstance(random_state, Integral) and not isinstance(random_state, bool):
            if random_state < 0:
                raise ValueError(
                    f"The 'random_state' parameter must be a non-negative integer; "
                    f"got {random_state}."
                )
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    raise ValueError(
        "The 'random_state' parameter must be None, an int, a numpy RandomState, "
        f"SeedSequence or Generator; got {random_state!r}."
    )


def spawn_seed(random_state) -> int:
    """Draw one 63-bit integer seed from ``random_state`` (used to fix a stream at fit)."""
    return int(as_generator(random_state).integers(np.iinfo(np.int64).max))


def check_budget(budget, name: str = "budget") -> int:
    """Check that a budget is an integer >= 1 and return it as ``int``."""
    if isinstance(budget, bool) or not isinstance(budget, Integral) or budget < 1:
        raise ValueError(
            f"The {name!r} parameter must be a positive integer number of coalition "
            f"evaluations; got {budget!r}."
        )
    return int(budget)


def get_working_memory(working_memory: float | None = None) -> float:
    """``working_memory`` MiB, defaulting to ``get_config()["working_memory"]``."""
    return get_config()["working_memory"] if working_memory is None else working_memory


def chunk_rows(bytes_per_row: float, working_memory: float | None = None) -> int:
    """How many rows of ``bytes_per_row`` bytes fit in ``working_memory`` MiB (at least 1)."""
    working_memory = get_working_memory(working_memory)
    return max(1, int(working_memory * 2**20 // max(bytes_per_row, 1)))


def as_pandas_frame(X, name="X"):
    """``X`` as a pandas DataFrame when it is a polars DataFrame or a pyarrow Table or
    RecordBatch (found by scikit-learn's own checks); any other ``X`` as it is.

    The estimators that read a DataFrame column by column (codes for its text columns,
    rows and column subsets for refits) read pandas; the converted frame keeps the
    column names, so ``feature_names_in_`` are the frame's columns, and its dtypes
    (polars and arrow categoricals become pandas categoricals). Polars converts through
    pyarrow, so this needs pandas and pyarrow.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.utils._validation import as_pandas_frame
    >>> X = np.ones((2, 3))
    >>> as_pandas_frame(X) is X
    True
    """
    if not (is_polars_df(X) or (is_pyarrow_data(X) and hasattr(X, "column_names"))):
        return X
    try:
        return X.to_pandas()
    except ImportError as err:  # ModuleNotFoundError is one
        raise ImportError(
            f"{name} is a {type(X).__module__.split('.')[0]} {type(X).__name__}, which "
            "is read as the pandas DataFrame it converts to; that needs pandas and "
            "pyarrow (pip install pandas pyarrow)."
        ) from err


def validate_numeric_data(estimator, X, *args, **kwargs):
    """scikit-learn's ``validate_data`` for estimators that take numbers only, whose
    refusal of text or categories names the column (by name in a DataFrame, else by
    position) and the value: scikit-learn's own message names the value only ("could
    not convert string to float: 'blue'").

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skshapley.utils._validation import validate_numeric_data
    >>> X = pd.DataFrame({"area": [1.0, 2.0], "colour": ["red", "blue"]})
    >>> validate_numeric_data(StandardScaler(), X, dtype="float64")
    Traceback (most recent call last):
    ...
    ValueError: X has the value 'red' in the column 'colour', which is not a number; ...
    """
    try:
        return validate_data(estimator, X, *args, **kwargs)
    except ValueError as err:
        found = _first_non_numeric(X)
        if found is None:
            raise
        column, value = found
        raise ValueError(
            f"X has the value {value!r} in the column {column}, which is not a number; "
            f"{type(estimator).__name__} takes numeric features only: encode the column "
            "first (e.g. with a OneHotEncoder in a Pipeline) or drop it."
        ) from err


def _first_non_numeric(X):
    """(column, value) of the first text value of ``X`` that does not read as a number,
    the column as its quoted name in a DataFrame or as its index otherwise; None when
    there is none (other values that are no numbers, complex ones say, are left to
    scikit-learn's own messages)."""
    try:
        X = as_pandas_frame(X)
    except ImportError:
        return None
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        columns = ((repr(name), X.iloc[:, j]) for j, name in enumerate(X.columns))
        columns = ((name, column.to_numpy(dtype=object)) for name, column in columns
                   if not (is_numeric_dtype(column.dtype) or is_bool_dtype(column.dtype)))
    else:
        dtype = getattr(X, "dtype", None)
        if dtype is not None and dtype.kind in "biufc":
            return None
        try:
            array = np.asarray(X, dtype=object)
        except (TypeError, ValueError):
            return None
        if array.ndim != 2:
            return None
        columns = ((f"at index {j}", array[:, j]) for j in range(array.shape[1]))
    for column, values in columns:
        for value in values:
            if not isinstance(value, (str, bytes)):
                continue
            try:
                float(value)
            except ValueError:
                return column, value.item() if isinstance(value, np.generic) else value
    return None


def finite_policy(estimator):
    """``ensure_all_finite`` for the rows given to ``estimator``: NaN passes unless the
    model surely refuses it (:func:`missing_value_support` is "no"; where it depends on
    which columns hold NaN, the model itself decides); infinity never does.

    Examples
    --------
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from sklearn.linear_model import Ridge
    >>> from skshapley.utils import finite_policy
    >>> finite_policy(HistGradientBoostingRegressor()), finite_policy(Ridge())
    ('allow-nan', True)
    """
    return True if missing_value_support(estimator) == "no" else "allow-nan"


def takes_missing_values(estimator):
    """Whether ``estimator`` takes NaN in any column (:func:`missing_value_support` is
    "yes"), what scikit-learn's ``allow_nan`` tag promises.

    Examples
    --------
    >>> from sklearn.impute import SimpleImputer
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skshapley.utils import takes_missing_values
    >>> takes_missing_values(make_pipeline(SimpleImputer(), Ridge()))
    True
    >>> takes_missing_values(make_pipeline(StandardScaler(), Ridge()))  # scaled NaN is NaN
    False
    """
    return missing_value_support(estimator) == "yes"


# Steps whose output has no NaN whatever their input: they fill missing values in, or
# turn them into columns of their own.
_FILLS_MISSING = ("SimpleImputer", "KNNImputer", "IterativeImputer", "MissingIndicator",
                  "OneHotEncoder")
_SUPPORT = ("no", "maybe", "yes")  # worst first
_LEAK = ("none", "some", "all")


def missing_value_support(estimator):
    """Whether ``estimator`` takes rows with NaN: "yes" in any column, "no" in none,
    "maybe" where it depends on the column (a ColumnTransformer imputes some columns and
    passes others on to a model that refuses NaN).

    scikit-learn's ``allow_nan`` tag, followed through Pipelines (each step that can
    still see NaN must take it; an imputer or one-hot encoder stops it, a scaler passes
    it on), ColumnTransformers (each part sees its own columns) and FeatureUnions (each
    part sees them all), which do not set the tag from their steps.

    Examples
    --------
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.impute import SimpleImputer
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> from skshapley.utils import missing_value_support
    >>> imputes_a = make_column_transformer((SimpleImputer(), ["a"]), remainder="passthrough")
    >>> missing_value_support(make_pipeline(imputes_a, Ridge()))  # NaN in "a" only is fine
    'maybe'
    """
    return _missing_value_flow(estimator)[0]


def _missing_value_flow(estimator):
    """(support, leak) of a step: whether it takes NaN ("yes", "maybe", "no") and whether
    NaN in its input can reach its output ("none", "some" columns', "all")."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.utils import get_tags

    if estimator is None or (isinstance(estimator, str) and estimator == "passthrough"):
        return "yes", "all"
    if isinstance(estimator, str):  # "drop"
        return "yes", "none"
    if isinstance(estimator, Pipeline):
        support, leak = "yes", "all"  # NaN may be in any input column
        for _, step in estimator.steps:
            if leak == "none":
                break
            step_support, step_leak = _missing_value_flow(step)
            if step_support != "yes" and leak == "some":
                step_support = "maybe"  # only some columns still carry NaN here
            support = min(support, step_support, key=_SUPPORT.index)
            leak = step_leak if leak == "all" else ("none" if step_leak == "none" else "some")
        return support, leak
    if isinstance(estimator, (ColumnTransformer, FeatureUnion)):
        if isinstance(estimator, ColumnTransformer):
            parts = [part for _, part, _ in estimator.transformers] + [estimator.remainder]
        else:
            parts = [part for _, part in estimator.transformer_list]
        flows = [_missing_value_flow(part) for part in parts] or [("yes", "none")]
        supports = {support for support, _ in flows}
        leaks = {leak for _, leak in flows}
        if isinstance(estimator, FeatureUnion):  # every part sees every column
            return (min(supports, key=_SUPPORT.index), max(leaks, key=_LEAK.index))
        support = supports.pop() if len(supports) == 1 else "maybe"
        leak = leaks.pop() if len(leaks) == 1 else "some"
        return support, leak
    try:
        allow_nan = get_tags(estimator).input_tags.allow_nan
    except (AttributeError, TypeError, ValueError):  # an object without sklearn tags
        allow_nan = False
    if not allow_nan:
        return "no", "all"
    return "yes", "none" if type(estimator).__name__ in _FILLS_MISSING else "all"
