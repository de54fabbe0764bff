"""Preprocessing transformers built on mergeable sketches."""

from skshapley.preprocessing._quantile import MomentQuantileTransformer, fit_dask

__all__ = ["MomentQuantileTransformer", "fit_dask"]
