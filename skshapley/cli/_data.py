"""The data of the commands: a CSV file read with pandas (``--data``, ``--target``),
refused with a one-line :class:`~skshapley.cli.UsageError` where a model could not be
fitted on it, or scikit-learn's bundled diabetes data.
"""

from __future__ import annotations

from skshapley.cli._common import UsageError, first_line


def data_or_diabetes(args, text=False, allow_nan=False, target_required=True):
    """(X, y, feature names, source name) from ``--data``/``--target``, or scikit-learn's
    diabetes data; X and y are NumPy arrays (so only ``--data`` needs pandas), except a
    CSV read with ``text``, which stays a DataFrame."""
    if args.data is not None:
        return (*load_data(args.data, args.target, text, allow_nan, target_required),
                args.data)
    if args.target is not None:
        raise UsageError("--target needs --data CSV")
    from sklearn.datasets import load_diabetes

    data = load_diabetes()
    return data.data, data.target, list(data.feature_names), "diabetes (scikit-learn)"


def take_rows(X, index):
    """The rows ``index`` (positions) of a NumPy array or a DataFrame, as the same kind."""
    return X.iloc[index] if hasattr(X, "iloc") else X[index]


def load_data(path, target, text=False, allow_nan=False, target_required=True):
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
        raise UsageError(f"cannot read {path!r} as CSV: {first_line(err)}") from None
    if frame.shape[0] == 0:
        raise UsageError(f"{path!r} has no data rows")
    check_header(path)
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


def check_header(path):
    """Refuse a CSV header that names a column twice. pandas renames the second ``y`` to
    ``y.1``, so the header is read here: otherwise a copy of the target would become a
    feature."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            header = next(csv.reader(handle), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return  # pandas has read it; its message would be the one to give
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise UsageError(f"duplicate column names in {path!r}: {duplicates}; give every "
                         "column its own name")


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
