"""Helpers shared by the approximators: outputs as 2-D, results back in the game's shape."""

from __future__ import annotations

import numpy as np


def as_matrix(values: np.ndarray) -> np.ndarray:
    """(m,) -> (m, 1); (m, k) unchanged."""
    return values[:, None] if values.ndim == 1 else values


def squeeze_outputs(array: np.ndarray, game) -> np.ndarray:
    """Drop the trailing output axis again for scalar games."""
    if game.output_shape == () and array.ndim >= 1 and array.shape[-1] == 1:
        return array[..., 0]
    return array


def endpoint_values(game):
    """Evaluate v(∅) and v(N) in one call; returns two (k,) arrays."""
    d = game.n_players
    coalitions = np.zeros((2, d), dtype=bool)
    coalitions[1] = True
    values = as_matrix(game.values(coalitions))
    return values[0], values[1]


def scalar_or_array(value, game):
    value = np.asarray(value, dtype=np.float64)
    if game.output_shape == ():
        return float(value.reshape(-1)[0])
    return value
