"""Pipelines of column-wise transformers that end in a tree model.

When every step before the model maps each input column on its own to one output column
(scalers, imputers, quantile and power transforms, ordinal encoders and discretisers,
skshapley's ``MomentQuantileTransformer``, and ColumnTransformers and Pipelines of these,
which may reorder or drop columns), the pipeline's interventional game over its input columns is
the tree model's game over the transformed columns with the transformed background: a
coalition's columns are transformed one by one, whatever the other columns hold. TreeSHAP
of the model, fed the transformed rows, therefore gives the pipeline's values exactly:
the ensemble's paths are renamed to the input columns and it carries the steps as its
``input_encoder``. A dropped column gets no value (the model never sees it).

The same column maps serve models linear in the transformed columns
(``skshapley.explain._linear``), where an input column may also give several output
columns (one-hot encoders, one-hot bins, splines): :func:`column_of_outputs`.
"""

from __future__ import annotations

import dataclasses
from numbers import Integral

import numpy as np

from skshapley.tree._ensemble import PlacedColumns, with_columns_renamed
from skshapley.utils import NumberInterval, validate_params


def _columnwise_types():
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import (
        KBinsDiscretizer,
        MaxAbsScaler,
        MinMaxScaler,
        OrdinalEncoder,
        PowerTransformer,
        QuantileTransformer,
        RobustScaler,
        StandardScaler,
    )

    return (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, QuantileTransformer,
            PowerTransformer, SimpleImputer, OrdinalEncoder, KBinsDiscretizer)


def _columns_in_place(step):
    """Whether ``step`` outputs its input columns, in order, one each."""
    n_in = int(step.n_features_in_)
    names_in = getattr(step, "feature_names_in_", None)
    names_in = [f"x{j}" for j in range(n_in)] if names_in is None else list(names_in)
    return list(step.get_feature_names_out()) == names_in


def _widths(step):
    """Output columns of each input column of a step that encodes columns one by one into
    consecutive blocks (one-hot encoding, one-hot bins, splines), or None for other steps."""
    from sklearn.preprocessing import OneHotEncoder, SplineTransformer

    n_in = int(step.n_features_in_)
    if isinstance(step, OneHotEncoder):
        # a dropped category loses one column; infrequent ones share a single column
        dropped = step.drop_idx_ if step.drop_idx_ is not None else [None] * n_in
        rare = getattr(step, "infrequent_categories_", None) or [None] * n_in
        return [len(categories) - (drop is not None)
                - (0 if infrequent is None else len(infrequent) - 1)
                for categories, drop, infrequent in zip(step.categories_, dropped, rare,
                                                        strict=True)]
    if isinstance(step, SplineTransformer):
        return [int(step.n_features_out_) // n_in] * n_in  # the same knots count per column
    if str(getattr(step, "encode", "")).startswith("onehot") and hasattr(step, "n_bins_"):
        return [int(k) for k in step.n_bins_]  # KBinsDiscretizer, MomentQuantileTransformer
    return None


def _input_column_of_outputs(step, *, one_to_many=False):
    """Input column of each output column of a column-wise ``step``, or why it is not
    column-wise (a string). With ``one_to_many`` an input column may give several output
    columns (one-hot encoders, one-hot bins, splines); without, each gives one, in place."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    name = type(step).__name__
    if isinstance(step, Pipeline):  # e.g. an imputer then a scaler for some columns
        return _composed_columns(step.steps, int(step.n_features_in_),
                                 one_to_many=one_to_many)
    if isinstance(step, ColumnTransformer):
        inputs = []
        for part_name, part, _ in step.transformers_:
            if part == "drop":
                continue
            columns = np.asarray(step._transformer_to_input_indices[part_name], np.int64)
            if not columns.size:  # an empty selection is not fitted and outputs nothing
                continue
            if part != "passthrough":
                part_inputs = _input_column_of_outputs(part, one_to_many=one_to_many)
                if isinstance(part_inputs, str):
                    return part_inputs
                columns = columns[part_inputs]  # the part may reorder or widen its columns
            inputs += list(columns)
        if len(step.get_feature_names_out()) != len(inputs):
            return f"its step {name} does not output one column per kept input column"
        return np.asarray(inputs, np.int64)
    from sklearn.preprocessing import FunctionTransformer

    # a transformer of ours says so itself (this layer does not import preprocessing);
    # an identity FunctionTransformer is how a ColumnTransformer passes its remainder
    declared = getattr(step, "_skshapley_columnwise", False) or (
        isinstance(step, FunctionTransformer) and step.func is None)
    widths = _widths(step) if one_to_many else None
    if not (declared or isinstance(step, _columnwise_types()) or widths is not None):
        return f"its step {name} is not one of the column-wise transformers"
    if getattr(step, "add_indicator", False):
        return f"its step {name} adds indicator columns"
    if widths is not None:
        if sum(widths) != len(step.get_feature_names_out()):
            return f"its step {name} does not output the columns its encoding makes"
        return np.repeat(np.arange(int(step.n_features_in_)), widths)
    # same count and order of columns (an imputer drops all-missing columns; one-hot
    # bins add columns)
    if not _columns_in_place(step):
        return f"its step {name} does not keep the columns in place"
    return np.arange(int(step.n_features_in_))


def _composed_columns(steps, n_features, *, one_to_many=False):
    """Input column of each output column of column-wise ``steps`` run one after the
    other (None and "passthrough" skipped), or why they are not column-wise."""
    column_of = np.arange(n_features)  # position -> input column
    for _, step in steps:
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        inputs = _input_column_of_outputs(step, one_to_many=one_to_many)
        if isinstance(inputs, str):
            return inputs
        column_of = column_of[inputs]
    return column_of


@validate_params(
    {"steps": [list, tuple], "n_features": [NumberInterval(Integral, 0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def column_of_outputs(steps, n_features):
    """Input column (of ``n_features``) of each output column of Pipeline ``steps`` that
    each make every output column from one input column, or why they do not (a string).

    An input column may give several output columns (one-hot encoding, splines, one-hot
    bins) or none (dropped). A model linear in these outputs is additive over the input
    columns (skshapley.explain._linear); tree paths need one output per input column in
    place, which :func:`read_pipeline` asks for.
    """
    return _composed_columns(steps, n_features, one_to_many=True)


def read_pipeline(pipeline, read_model):
    """TreeEnsemble of a Pipeline of column-wise transformers ending in a tree model.

    Raises
    ------
    ValueError
        If a step is not column-wise, or the last step is not a readable tree model.
    """
    steps = [step for _, step in pipeline.steps[:-1] if step not in (None, "passthrough")]
    model = pipeline.steps[-1][1]
    if not steps:
        return read_model(model)
    column_of = _composed_columns(pipeline.steps[:-1], int(pipeline.n_features_in_))
    if isinstance(column_of, str):
        raise ValueError(f"method='tree' reads a Pipeline when every step before its "
                         f"model transforms columns one by one; {column_of}.")
    ensemble = read_model(model)
    encoder = PlacedColumns(pipeline[:-1], column_of, pipeline.n_features_in_,
                            ensemble.input_encoder)
    renamed = with_columns_renamed(ensemble, column_of, pipeline.n_features_in_, encoder)
    return dataclasses.replace(renamed, model_name=f"Pipeline ending in {ensemble.model_name}")
