"""Preprocessing transformers built on mergeable sketches (DESIGN.md §4.8)."""

from skshapley.preprocessing._quantile import MomentQuantileTransformer, fit_dask

__all__ = ["MomentQuantileTransformer", "fit_dask"]
