"""Preprocessing transformers built on mergeable sketches."""

from skshapley.preprocessing._dask import fit_dask
from skshapley.preprocessing._quantile import MomentQuantileTransformer

__all__ = ["MomentQuantileTransformer", "fit_dask"]
