"""Pipelines of column-wise transformers that end in a tree model.

When every step before the model maps each input column on its own to the output column
at the same place (scalers, imputers, quantile and power transforms, ordinal encoders and
discretisers, skshapley's ``MomentQuantileTransformer``), the pipeline's interventional
game over its input columns is the tree model's game over the transformed columns with
the transformed background: a coalition's columns are transformed one by one, whatever
the other columns hold. TreeSHAP of the model, fed the transformed rows, therefore gives
the pipeline's values exactly; the ensemble carries the steps as its ``input_encoder``.
"""

from __future__ import annotations

import dataclasses

import numpy as np


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


class PipelineInput:
    """The steps before a pipeline's tree model, as the ensemble's ``input_encoder``."""

    def __init__(self, steps):
        self.steps = steps

    def __call__(self, X):
        return np.asarray(self.steps.transform(X), dtype=np.float64)


def _why_not_columnwise(step):
    """None if ``step`` maps each column on its own to the same place, else why not."""
    name = type(step).__name__
    # a transformer of ours says so itself (this layer does not import preprocessing)
    declared = getattr(step, "_skshapley_columnwise", False)
    if not (declared or isinstance(step, _columnwise_types())):
        return f"its step {name} is not one of the column-wise transformers"
    if getattr(step, "add_indicator", False):
        return f"its step {name} adds indicator columns"
    n_in = int(step.n_features_in_)
    names_in = getattr(step, "feature_names_in_", None)
    names_in = [f"x{j}" for j in range(n_in)] if names_in is None else list(names_in)
    # same count and order of columns (an imputer drops all-missing columns; one-hot
    # bins add columns)
    if list(step.get_feature_names_out()) != names_in:
        return f"its step {name} does not keep the columns in place"
    return None


def read_pipeline(pipeline, read_model):
    """TreeEnsemble of a Pipeline of column-wise transformers ending in a tree model.

    Raises
    ------
    ValueError
        If a step is not column-wise, or the last step is not a readable tree model.
    """
    steps = [step for _, step in pipeline.steps[:-1] if step not in (None, "passthrough")]
    for step in steps:
        reason = _why_not_columnwise(step)
        if reason is not None:
            raise ValueError(f"method='tree' reads a Pipeline when every step before its "
                             f"model transforms columns one by one; {reason}.")
    model = pipeline.steps[-1][1]
    ensemble = read_model(model)
    if not steps:
        return ensemble
    if ensemble.input_encoder is not None:
        raise ValueError(f"method='tree' cannot read a Pipeline whose model "
                         f"({type(model).__name__}) encodes its own input.")
    return dataclasses.replace(ensemble, input_encoder=PipelineInput(pipeline[:-1]),
                               model_name=f"Pipeline ending in {ensemble.model_name}")
