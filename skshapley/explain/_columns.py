"""Numbers for the non-numeric columns of a DataFrame, and the DataFrame back.

Coalitions are masked in one float array (one big batch per model call), but a Pipeline
that one-hot encodes text columns must be called on the text. ``ColumnCodec`` gives every
value of a non-numeric column a code (its position among the column's values), so a
masked batch of codes is assembled as usual, and rebuilds the DataFrame, with the
original values and dtypes, right before each model call.
"""

from __future__ import annotations

import numpy as np

from skshapley.games import NamedRows
from skshapley.utils import missing_value_support


def _is_plain_numeric(dtype) -> bool:
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    return is_numeric_dtype(dtype) and not is_bool_dtype(dtype)


class _BoolCodes:
    """Marks a bool column of a codec: coded 0 for False and 1 for True, as scikit-learn,
    XGBoost and shap read it, so that a tree model's own splits can be read off the codes
    (issue 28); NaN when missing."""

    def __repr__(self):
        return "bool"


def _bool_codes(column, name):
    """0.0/1.0 for the False/True values of ``column``, NaN for its missing ones."""
    import pandas as pd

    values = column.to_numpy(dtype=object)
    missing = np.asarray(pd.isna(values), dtype=bool)
    codes = np.full(len(values), np.nan)
    codes[~missing] = pd.Index([False, True], dtype=object).get_indexer(values[~missing])
    if (codes < 0).any():
        raise ValueError(f"column {name!r} holds {values[codes < 0][0]!r}, but the explainer "
                         "was fitted on it as a bool column; pass True, False or a missing "
                         "value.")
    return codes


def _same_categories(dtype, known) -> bool:
    """Whether ``dtype`` is the categorical ``known``, categories in the same order: the
    codes are positions among them, and pandas calls two unordered categoricals equal
    whatever the order of their categories."""
    import pandas as pd

    return (isinstance(dtype, pd.CategoricalDtype) and dtype.ordered == known.ordered
            and dtype.categories.equals(known.categories))


def _lookup_keys(values):
    """An object array with every missing marker (None, NaN, NA) replaced by NaN: one
    missing value per column, matched alike by every pandas version."""
    import pandas as pd

    keys = np.array(values, dtype=object)
    keys[pd.isna(keys)] = np.nan
    return keys


class ColumnCodec:
    """Codes for a DataFrame's non-numeric columns (text, categorical, bool, dates).

    Numeric columns pass as floats; a pandas categorical column as its category codes
    (NaN when missing); a bool column as 0 and 1 (NaN when missing); every other column's
    values are numbered in order of first appearance, a missing value being a value of
    its own (one per column: None, NaN and NA in one column all decode to the marker seen
    first). Codes are exact in float64, so a masked batch decodes to the values it was
    built from.

    Use :meth:`from_frame` to build one, :meth:`encode` for rows (values not seen before
    get new codes in a widened copy, the codec itself never changes) and :meth:`decode`
    inside the model call.

    Examples
    --------
    >>> import pandas as pd
    >>> from skshapley.explain import ColumnCodec
    >>> frame = pd.DataFrame({"size": [1.5, 2.0], "colour": ["red", "blue"]})
    >>> codec = ColumnCodec.from_frame(frame)
    >>> codec, codes = codec.encode(frame)
    >>> codes.tolist()
    [[1.5, 0.0], [2.0, 1.0]]
    >>> codec.decode(codes[::-1]).colour.tolist()
    ['blue', 'red']
    """

    def __init__(self, columns, dtypes, categories):
        self.columns = list(columns)
        self.dtypes = list(dtypes)
        # column index -> values as an object array, a CategoricalDtype or _BoolCodes
        self.categories = dict(categories)

    @classmethod
    def from_frame(cls, frame):
        """A codec for ``frame``'s columns, or None when every column is plain numeric."""
        if not hasattr(frame, "dtypes") or not hasattr(frame, "columns"):
            return None
        dtypes = list(frame.dtypes)
        if all(_is_plain_numeric(dtype) for dtype in dtypes):
            return None
        from pandas import CategoricalDtype
        from pandas.api.types import is_bool_dtype

        categories = {}
        for j, dtype in enumerate(dtypes):
            if _is_plain_numeric(dtype):
                continue
            if isinstance(dtype, CategoricalDtype):
                categories[j] = dtype
            elif is_bool_dtype(dtype):
                categories[j] = _BoolCodes()
            else:
                categories[j] = np.empty(0, dtype=object)
        return cls(frame.columns, dtypes, categories)

    @property
    def codes_are_numbers(self):
        """True when every coded column is a pandas categorical or bool: its numbers are
        the category codes or 0/1 (NaN when missing), as a tree model trained on it reads
        them."""
        import pandas as pd

        return all(isinstance(known, (pd.CategoricalDtype, _BoolCodes))
                   for known in self.categories.values())

    def missing_allowed_in(self, X):
        """Whether ``X`` (codes) has NaN only where a categorical column is missing."""
        plain = [j for j in range(X.shape[1]) if j not in self.categories]
        return not np.isnan(X[:, plain]).any()

    def checked(self, codes, finite, name="X", min_samples=1):
        """``codes`` as validated float64 rows: infinity never; NaN in a numeric column
        only if ``finite`` (``ensure_all_finite``) allows it. A missing category is NaN
        among the codes whatever the model takes: the model sees a missing category."""
        from sklearn.utils import check_array

        codes = check_array(codes, dtype=np.float64, ensure_all_finite="allow-nan",
                            ensure_min_samples=min_samples, input_name=name)
        if finite is True and not self.missing_allowed_in(codes):
            raise ValueError(f"Input {name} contains NaN in a numeric column, which "
                             "the estimator does not accept.")
        return codes

    def with_fitted_categories(self, frame, name="X"):
        """``frame`` with each categorical column cast to the fitted categorical dtype,
        for a frame converted from polars or pyarrow: their categoricals convert to pandas
        ones holding only the categories present in the rows, in order of appearance,
        so the rows of the fitted frame itself would come back with another dtype. A value
        that is not among the fitted categories is refused, naming the column."""
        import pandas as pd

        if list(frame.columns) != self.columns:
            return frame  # encode says which columns differ
        recoded = frame
        for j, known in self.categories.items():
            column = frame.iloc[:, j]
            if not isinstance(known, pd.CategoricalDtype) or _same_categories(column.dtype,
                                                                             known):
                continue
            values = pd.Index(column.dropna().unique())
            unseen = values[~values.isin(known.categories)]
            if len(unseen):
                raise ValueError(
                    f"{name} has the values {unseen.tolist()} in the categorical column "
                    f"{self.columns[j]!r}, which are not among the categories seen at fit "
                    f"{known.categories.tolist()}; fit on rows that hold them."
                )
            if recoded is frame:
                recoded = frame.copy()
            # by value: astype keeps the codes of an unordered categorical it calls equal
            recoded.isetitem(j, pd.Categorical(column, dtype=known))
        return recoded

    @property
    def encoded_columns(self):
        """Indices of the columns that are coded rather than passed as numbers."""
        return sorted(self.categories)

    def encode(self, frame):
        """Codes of ``frame``'s rows: ``(codec, float64 array)``, where ``codec`` is this
        one, or a widened copy when ``frame`` holds values this one has not seen."""
        import pandas as pd

        if list(frame.columns) != self.columns:
            raise ValueError(f"X has columns {list(frame.columns)}, but the explainer was "
                             f"fitted on {self.columns}.")
        out = np.empty(frame.shape, dtype=np.float64)
        widened = dict(self.categories)
        for j, name in enumerate(self.columns):
            column = frame.iloc[:, j]
            if j not in self.categories:
                out[:, j] = column.to_numpy(dtype=np.float64, na_value=np.nan)
                continue
            known = self.categories[j]
            if isinstance(known, _BoolCodes):
                out[:, j] = _bool_codes(column, name)
                continue
            if isinstance(known, pd.CategoricalDtype):
                if not _same_categories(column.dtype, known):
                    said = (f"the categories {column.cat.categories.tolist()}"
                            if isinstance(column.dtype, pd.CategoricalDtype)
                            else f"dtype {column.dtype}")
                    raise ValueError(
                        f"column {name!r} has {said}, but the explainer was fitted on the "
                        f"categories {known.categories.tolist()}, in this order; give it "
                        "that dtype (codes are positions among the categories).")
                codes = column.cat.codes.to_numpy()
                # the category codes themselves, NaN for a missing value: what XGBoost
                # sees, so that a tree model's own splits can be read off these numbers
                out[:, j] = np.where(codes < 0, np.nan, codes)
                continue
            values = column.to_numpy(dtype=object)
            keys = _lookup_keys(values)
            codes = pd.Index(_lookup_keys(known), dtype=object).get_indexer(keys)
            if (codes < 0).any():
                fresh, first_values = values[codes < 0], keys[codes < 0]
                found, _ = pd.factorize(first_values, use_na_sentinel=False)
                first = np.unique(found, return_index=True)[1]  # first row of each
                known = np.concatenate([known, fresh[first]])
                widened[j] = known
                codes = pd.Index(_lookup_keys(known), dtype=object).get_indexer(keys)
            out[:, j] = codes
        if any(widened[j] is not self.categories[j] for j in widened):
            return ColumnCodec(self.columns, self.dtypes, widened), out
        return self, out

    def decode(self, X):
        """The DataFrame, with the original values and dtypes, of an array of codes."""
        import pandas as pd

        X = np.asarray(X)
        data = {}
        for j, (name, dtype) in enumerate(zip(self.columns, self.dtypes, strict=True)):
            column = X[:, j]
            known = self.categories.get(j)
            if known is None:
                data[name] = column if dtype == np.float64 else pd.Series(column).astype(dtype)
            elif isinstance(known, pd.CategoricalDtype):
                missing = np.isnan(column) | (column >= len(known.categories))
                codes = np.where(missing, -1, np.nan_to_num(column)).astype(np.int64)
                data[name] = pd.Categorical.from_codes(codes, dtype=known)
            elif isinstance(known, _BoolCodes):
                values = column == 1.0
                if np.isnan(column).any():  # a nullable bool's missing values
                    values = values.astype(object)
                    values[np.isnan(column)] = None
                data[name] = pd.Series(values, dtype=dtype)
            else:
                data[name] = pd.Series(known.take(column.astype(np.int64)), dtype=dtype)
        return pd.DataFrame(data, columns=self.columns)

    def wrap(self, predict):
        """``predict`` called on the decoded DataFrame."""
        def predict_codes(X):
            return predict(self.decode(X))

        return predict_codes


def in_fitted_order(estimator, names):
    """X's column ``names`` in the order of ``estimator.feature_names_in_``, or None when
    one of those names is not X's.

    Names are matched as the estimator records them: LightGBM replaces every space by
    "_" (its ``Dataset::set_feature_names``), so the frame it was fitted on matches
    (issue 28).
    """
    fitted = [str(name) for name in estimator.feature_names_in_]
    as_recorded = [str(name) for name in names]
    if type(estimator).__module__.split(".")[0] == "lightgbm":
        as_recorded = [name.replace(" ", "_") for name in as_recorded]
    position = {name: j for j, name in reversed(list(enumerate(as_recorded)))}
    if any(name not in position for name in fitted):
        return None
    return [names[position[name]] for name in fitted]


def model_rows(feature_names, codec):
    """Float rows -> the input the model takes: the DataFrame the codes stand for (with a
    codec), a DataFrame with the fitted names, or the rows themselves."""
    if codec is not None:
        return codec.decode
    if feature_names is not None:
        return NamedRows(feature_names)
    return lambda rows: rows


def check_missing_values_taken(estimator, predict, rows, name):
    """Where it depends on the columns whether ``estimator`` takes NaN (a ColumnTransformer
    imputes some columns only), call ``predict`` (float rows -> outputs) on one row with
    NaN wherever ``rows`` have some: a refusal is said here, naming the columns, not from
    inside a batch of masked rows or as a failed score."""
    columns = np.flatnonzero(np.isnan(rows).any(axis=0))
    if not columns.size or missing_value_support(estimator) != "maybe":
        return
    probe = rows[:1].copy()
    probe[0, columns] = np.nan  # NaN wherever some row has it
    try:
        predict(probe)
    except ValueError as err:
        said = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(
            f"{name} has NaN in the columns at positions {columns.tolist()}, and "
            f"{type(estimator).__name__} does not take NaN in all of them ({said}); impute "
            "them in the model's pipeline."
        ) from err
