"""Tree ensembles shared by the GPU kernel tests (simulator and CUDA C++ stand-in)."""

import numpy as np
import pytest

from skshapley.backends.tree._numpy import CATEGORY_SET
from skshapley.tree import read_model


def categorical_classifier(rng):
    """A 3-class LightGBM ensemble whose categorical splits are held as ``CATEGORY_SET``
    elements, and rows of codes that reach every kind of atom: codes, NaN, (-1, 0)
    (LightGBM's code 0), at most -1, fractional and beyond the set's codes."""
    lightgbm = pytest.importorskip("lightgbm")
    X = np.column_stack([rng.normal(size=600), rng.integers(0, 12, 600),
                         rng.integers(0, 5, 600), rng.normal(size=600)]).astype(float)
    X[::9, 1] = np.nan
    y = (np.isin(X[:, 1], [0, 4, 6, 9]).astype(int) + (X[:, 2] == 3) * (X[:, 0] > 0)
         + (X[:, 3] > 1))
    model = lightgbm.LGBMClassifier(n_estimators=4, num_leaves=8, min_data_per_group=5,
                                    cat_smooth=1.0, verbose=-1)
    ensemble = read_model(model.fit(X, y, categorical_feature=[1, 2]))
    assert np.any(ensemble.missing_mode == CATEGORY_SET)
    rows = X[:12].copy()
    rows[1:7, 1] = [-0.5, -1.0, -7.0, 2.5, 150.0, 103.0]
    rows[7, 2] = -0.25
    return rows, ensemble
