"""Fitting a :class:`~skshapley.MomentQuantileTransformer` on a dask array: one sketch
state per row block, merged pairwise up a tree."""

from __future__ import annotations

import numpy as np

from skshapley.preprocessing._quantile import MomentQuantileTransformer
from skshapley.preprocessing._quantile_state import SketchState

__all__ = ["fit_dask"]


def _block_state(block, params):
    est = MomentQuantileTransformer(**params)
    state = SketchState.begin(est, block.shape[1])
    return state.ingest(np.asarray(block, dtype=np.float64), None)


def _check_dask_shape(n_samples, n_features, shape):
    """Raise as ``validate_data`` does in ``fit`` when ``X`` has no rows or no columns."""
    for count, what in ((n_samples, "sample(s)"), (n_features, "feature(s)")):
        if count == 0:
            raise ValueError(f"Found array with 0 {what} (shape={shape}) while a minimum "
                             "of 1 is required by MomentQuantileTransformer.")


def fit_dask(transformer, X):
    """Fit ``transformer`` on a 2-D dask array: one sketch per row block, tree-merged.

    Infinite values raise ``ValueError`` (from the block that holds them). As in
    ``transformer.fit``, an ``X`` with no rows or no columns raises ``ValueError``; a
    failed call leaves ``transformer`` as it was.

    Parameters
    ----------
    transformer : MomentQuantileTransformer
    X : dask.array.Array of shape (n_samples, n_features)
        Only a dask array is accepted; wrap an in-memory array with
        ``dask.array.from_array(X, chunks=...)``, or call ``transformer.fit(X)``.

    Returns
    -------
    transformer : the fitted transformer (same object).
    """
    try:
        import dask
        import dask.array as da
    except ImportError as err:  # pragma: no cover - exercised only without dask
        raise ImportError("fit_dask needs dask: pip install 'skshapley[dask]'.") from err
    if not isinstance(transformer, MomentQuantileTransformer):
        raise TypeError(f"transformer must be a MomentQuantileTransformer; got "
                        f"{type(transformer).__name__}.")
    if not isinstance(X, da.Array):
        raise ValueError(f"X must be a 2-D dask array; got {type(X).__name__}. Wrap it with "
                         "dask.array.from_array(X, chunks=...), or call transformer.fit(X) "
                         "for an in-memory array.")
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array; got ndim={X.ndim}.")
    transformer._validate_params()
    transformer._check_settings()
    # the row count is nan when chunk sizes are unknown; it is checked again after compute
    _check_dask_shape(X.shape[0], X.shape[1], X.shape)
    X = X.rechunk({1: -1})
    params = transformer.get_params()
    states = [dask.delayed(_block_state)(block, params)
              for block in X.to_delayed().ravel()]
    while len(states) > 1:  # pairwise tree reduction
        states = [dask.delayed(SketchState.merged)(states[i], states[i + 1])
                  if i + 1 < len(states) else states[i] for i in range(0, len(states), 2)]
    state = dask.compute(states[0])[0]
    _check_dask_shape(int(state.n_rows), X.shape[1], (int(state.n_rows), X.shape[1]))
    with transformer._state_lock():  # as fit: not amid another thread's partial_fit
        transformer.n_features_in_ = X.shape[1]
        if hasattr(transformer, "feature_names_in_"):
            del transformer.feature_names_in_
        transformer._set_state(state)
    return transformer
