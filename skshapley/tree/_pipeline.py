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
"""

from __future__ import annotations

import dataclasses

import numpy as np

from skshapley.tree._ensemble import PlacedColumns, with_columns_renamed


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


def _input_column_of_outputs(step):
    """Input column of each output column of a column-wise ``step``, or why it is not
    column-wise (a string)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    name = type(step).__name__
    if isinstance(step, Pipeline):  # e.g. an imputer then a scaler for some columns
        return _composed_columns(step.steps, int(step.n_features_in_))
    if isinstance(step, ColumnTransformer):
        inputs = []
        for part_name, part, _ in step.transformers_:
            if part == "drop":
                continue
            columns = list(step._transformer_to_input_indices[part_name])
            if part != "passthrough":
                reason = _input_column_of_outputs(part)
                if isinstance(reason, str):
                    return reason
            inputs += columns
        if len(step.get_feature_names_out()) != len(inputs):
            return f"its step {name} does not output one column per kept input column"
        return np.asarray(inputs, np.int64)
    from sklearn.preprocessing import FunctionTransformer

    # a transformer of ours says so itself (this layer does not import preprocessing);
    # an identity FunctionTransformer is how a ColumnTransformer passes its remainder
    declared = getattr(step, "_skshapley_columnwise", False) or (
        isinstance(step, FunctionTransformer) and step.func is None)
    if not (declared or isinstance(step, _columnwise_types())):
        return f"its step {name} is not one of the column-wise transformers"
    if getattr(step, "add_indicator", False):
        return f"its step {name} adds indicator columns"
    # same count and order of columns (an imputer drops all-missing columns; one-hot
    # bins add columns)
    if not _columns_in_place(step):
        return f"its step {name} does not keep the columns in place"
    return np.arange(int(step.n_features_in_))


def _composed_columns(steps, n_features):
    """Input column of each output column of column-wise ``steps`` run one after the
    other (None and "passthrough" skipped), or why they are not column-wise."""
    column_of = np.arange(n_features)  # position -> input column
    for _, step in steps:
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        inputs = _input_column_of_outputs(step)
        if isinstance(inputs, str):
            return inputs
        column_of = column_of[inputs]
    return column_of


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
