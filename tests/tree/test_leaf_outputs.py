"""The compiled walk of the trees (the raw outputs that check every TreeSHAP call)
against its NumPy twin and the path walk, on models with missing values and
categorical splits."""

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

from skshapley import ShapleyExplainer
from skshapley.backends.tree._numba_walk import tree_leaf_outputs
from skshapley.explain._tree import _outputs_by_nodes, _outputs_by_paths


def _ensembles():
    X, y = load_diabetes(return_X_y=True)
    X = X.copy()
    X[::7, 2] = np.nan  # missing values go their learned way
    yield HistGradientBoostingRegressor(max_iter=30).fit(X, y), X
    X_filled = np.nan_to_num(X)
    yield RandomForestRegressor(n_estimators=10, max_depth=6,
                                random_state=0).fit(X_filled, y), X_filled
    lightgbm = pytest.importorskip("lightgbm")
    categories = np.random.default_rng(0).integers(0, 6, size=len(y)).astype(float)
    X_cat = np.column_stack([X_filled, categories])
    model = lightgbm.LGBMRegressor(n_estimators=20, num_leaves=8, min_data_per_group=5,
                                   verbose=-1).fit(X_cat, y + 10 * (categories == 3),
                                                   categorical_feature=[10])
    yield model, X_cat


def test_the_compiled_walk_equals_the_numpy_walks():
    for model, X in _ensembles():
        explainer = ShapleyExplainer(model, prefit=True, method="tree",
                                     feature_perturbation="tree_path_dependent").fit(X)
        ensemble = explainer.tree_ensemble_
        rows = np.ascontiguousarray(ensemble.prepare(X[:60]), dtype=np.float64)
        out = np.zeros((rows.shape[0], ensemble.n_outputs))
        tree_leaf_outputs(rows, ensemble.nodes.arrays(), out)
        np.testing.assert_array_equal(
            out, _outputs_by_nodes(ensemble.nodes, rows, ensemble.n_outputs))
        np.testing.assert_allclose(out + ensemble.offset, _outputs_by_paths(ensemble, rows),
                                   rtol=1e-12, atol=1e-9)
