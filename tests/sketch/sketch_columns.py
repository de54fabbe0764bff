"""Columns shared by the CDF sketch's kernel tests (imported by name, as ``cli_helpers``)."""

import numpy as np


def mixed_columns(rng, n, more=False):
    """Columns that exercise the kernels: ties, -0.0 and 0.0, NaN, a spike, big offsets,
    integers; with ``more`` also Poisson counts, heavy tails and a narrow mode."""
    columns = [
        rng.normal(size=n),
        np.where(rng.random(n) < 0.5, rng.choice([-0.0, 0.0, 3.0], n), rng.normal(size=n)),
        1e6 + rng.exponential(size=n),
        np.where(rng.random(n) < 0.3, 5 + 1e-9 * rng.normal(size=n), rng.normal(size=n)),
        rng.integers(-50, 50, n).astype(float),
    ]
    if more:
        columns += [
            rng.poisson(3.0, n).astype(float),
            rng.standard_cauchy(n),
            np.where(rng.random(n) < 0.5, rng.normal(4, 0.01, n), rng.normal(size=n)),
        ]
    X = np.column_stack(columns)
    X[rng.random(X.shape) < 0.05] = np.nan
    return X
