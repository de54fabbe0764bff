"""``tree_shap``: exact SHAP values of tree ensembles on any backend."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skshapley.backends import choose_backend, get_backend, has_kernel
from skshapley.backends.tree import PathArrays
from skshapley.tree import _cache
from skshapley.tree._ensemble import MAX_PATH_FEATURES, MAX_PATTERN_FEATURES, TreeEnsemble
from skshapley.tree._readers import read_model
from skshapley.utils import StrOptions, chunk_rows, validate_params

FEATURE_PERTURBATIONS = ("auto", "tree_path_dependent", "interventional")


@dataclass(frozen=True)
class TreeShapValues:
    """Exact SHAP values of a tree ensemble.

    Attributes
    ----------
    values : float64 (n_rows, n_features, n_outputs)
    base_values : float64 (n_rows, n_outputs)
        ``values.sum(axis=1) + base_values`` is the ensemble's raw output.
    interactions : float64 (n_rows, n_features, n_features, n_outputs) or None
    feature_perturbation : str
    ensemble : TreeEnsemble
    """

    values: np.ndarray
    base_values: np.ndarray
    interactions: np.ndarray | None
    feature_perturbation: str
    ensemble: TreeEnsemble


def _check_X(X, ensemble, name="X"):
    if ensemble.input_encoder is None and hasattr(X, "dtypes"):
        categorical = [str(c) for c, dtype in zip(X.columns, X.dtypes, strict=True)
                       if str(dtype) == "category"]
        if categorical:  # np.asarray would give the values, not the codes the trees read
            raise ValueError(
                f"{name} has the pandas categorical columns {categorical}; the trees of "
                f"{ensemble.model_name or 'this model'} read category codes: pass "
                "Series.cat.codes (NaN for missing) as numbers, or explain with "
                "ShapleyExplainer, which converts them.")
    shape = np.shape(X)
    if len(shape) != 2 or shape[1] != ensemble.n_features:
        raise ValueError(
            f"{name} must be a 2-D array with {ensemble.n_features} columns (the model's "
            f"features); got shape {shape}."
        )
    try:
        X = ensemble.prepare(X)
    except (TypeError, ValueError) as err:
        what = ("numeric" if ensemble.input_encoder is None
                else f"what {ensemble.model_name} takes")
        raise ValueError(f"{name} must be {what}: {err}") from None
    if np.isinf(X).any():
        raise ValueError(f"{name} contains infinite values; tree models cannot route them "
                         "as the library does, so they are refused.")
    return X


def _resolve_backend(backend, ensemble, n_rows, needed):
    # backend="auto" may move a large call to a GPU: the registry's one policy decides
    # (skshapley.backends._registry.choose_backend), from rows x total path length
    work = float(n_rows) * float(len(ensemble.feature))
    return get_backend(choose_backend(backend, work, ensemble.max_path_length, needed))


def _check_path_lengths(ensemble):
    if ensemble.max_path_length > MAX_PATH_FEATURES:
        raise ValueError(
            f"feature_perturbation='tree_path_dependent' supports paths of up to "
            f"{MAX_PATH_FEATURES} distinct features; this model has a path with "
            f"{ensemble.max_path_length}. Explain it by sampling (ShapleyExplainer with "
            "method='permutation') or limit the trees' depth."
        )


def path_dependent_shap(ensemble, X, kernels):
    _check_path_lengths(ensemble)
    n_rows = X.shape[0]
    out = np.zeros((n_rows, ensemble.n_outputs, ensemble.n_features))
    kernels.tree_path_shap(X, ensemble.path_arrays(), out, cache=_cache.layout_cache(kernels))
    base = np.broadcast_to(ensemble.expected_value, (n_rows, ensemble.n_outputs)).copy()
    return out, base


def path_dependent_interactions(ensemble, X, kernels):
    _check_path_lengths(ensemble)
    n_rows, d = X.shape[0], ensemble.n_features
    out = np.zeros((n_rows, ensemble.n_outputs, d, d))
    kernels.tree_path_interactions(X, ensemble.path_arrays(), out,
                                   cache=_cache.layout_cache(kernels))
    return out


PATTERN_BYTES = 16  # a background pattern (uint64) and its count (float64)
# Pattern tables are built and used a range of paths at a time, so that a few rows are
# not charged for first touching tables of every path (122,215 paths x 100 background
# rows are 196 MB, 0.1 s of page faults; one small set of tables stays in cache); a range
# has at least MIN_PATH_RANGE paths.
PATTERN_TABLE_BYTES = 8 * 2**20
MIN_PATH_RANGE = 4096
# Rows under this fraction of the background rows get patterns built for them alone
# (measured on 100-tree forests, 100 background rows: 1.3-1.7x faster at 5 rows, even
# from 25 to 99 rows, where few background rows can be ruled out for all of them).
FEW_ROWS = 0.25
# Fewer rows than this are explained by walking the trees with sets of background rows
# (tree_interventional_walk): its cost grows with the states a row reaches, the tables'
# with the paths, whatever the rows. Measured on 100-tree forests of depth 8 and 12 with
# 100 background rows, one thread: the walk was 1.3-2.9x faster than the tables at 1 to 3
# rows, about even at 5, even to 1.4x slower at 10 (benchmarks/results/tree_cpu.md has
# both against shap).
WALK_ROWS = 4


def background_chunk_rows(n_paths, n_background, working_memory=None):
    """Background rows per pass of the interventional kernels, so that the pattern tables
    (n_paths x rows x PATTERN_BYTES) stay within ``working_memory`` MiB; at least one."""
    return min(n_background, chunk_rows(PATTERN_BYTES * max(n_paths, 1), working_memory))


def path_range_size(n_paths, n_background):
    """Paths per range of the interventional pass (see PATTERN_TABLE_BYTES)."""
    fit = PATTERN_TABLE_BYTES // (PATTERN_BYTES * max(n_background, 1))
    return max(1, min(n_paths, max(MIN_PATH_RANGE, fit)))


def _path_range(ensemble, first, stop):
    """The ``PathArrays`` of paths ``first:stop``, pointers rebased to 0."""
    e0, e1 = ensemble.path_ptr[first], ensemble.path_ptr[stop]
    o0, o1 = ensemble.out_ptr[first], ensemble.out_ptr[stop]
    return PathArrays(
        ensemble.path_ptr[first:stop + 1] - e0, ensemble.feature[e0:e1],
        ensemble.lower[e0:e1], ensemble.upper[e0:e1], ensemble.missing_branch[e0:e1],
        ensemble.missing_mode[e0:e1], ensemble.zero_fraction[e0:e1],
        ensemble.out_ptr[first:stop + 1] - o0, ensemble.out_index[o0:o1],
        ensemble.out_value[o0:o1])


def interventional_shap(ensemble, X, background, kernels):
    if ensemble.max_path_length > MAX_PATTERN_FEATURES:
        raise ValueError(
            f"feature_perturbation='interventional' supports paths of up to "
            f"{MAX_PATTERN_FEATURES} distinct features; this model has a path with "
            f"{ensemble.max_path_length}. Use feature_perturbation='tree_path_dependent'."
        )
    n_background = background.shape[0]
    out = np.zeros((X.shape[0], ensemble.n_outputs, ensemble.n_features))
    if (X.shape[0] < WALK_ROWS and ensemble.nodes is not None
            and has_kernel(kernels, "tree_interventional_walk")):
        base = np.zeros(ensemble.n_outputs)
        kernels.tree_interventional_walk(X, background, ensemble.nodes.arrays(), out, base,
                                         cache=_cache.walk_cache())
        base += ensemble.offset
        return out, np.broadcast_to(base, (X.shape[0], ensemble.n_outputs)).copy()
    reached = 0.0
    # Few rows: the patterns are built for these rows only, leaving out the background
    # rows that cannot add to their values (most, on deep paths; see
    # tree_background_patterns). More rows would rarely rule any out.
    rows = X if X.shape[0] < FEW_ROWS * n_background else None
    leaf_values = ensemble.leaf_values()
    paths = path_range_size(ensemble.n_paths, n_background)
    # The values are a mean over background rows, so a large background is taken in
    # chunks whose pattern tables fit working_memory; each chunk adds its share (the
    # kernels divide by the whole background's size).
    step = background_chunk_rows(paths, n_background)
    # one set of tables, reused by every range and chunk: the kernels read only the first
    # n_distinct entries of a path's row, so stale entries past them are never seen
    pattern_buffer = np.empty(paths * step, np.uint64)
    count_buffer = np.empty(paths * step)
    for first_path in range(0, ensemble.n_paths, paths):
        stop = min(ensemble.n_paths, first_path + paths)
        paths_in_range = _path_range(ensemble, first_path, stop)
        for first in range(0, n_background, step):
            chunk = background[first:first + step]
            shape = (stop - first_path, chunk.shape[0])
            patterns = pattern_buffer[:shape[0] * shape[1]].reshape(shape)
            counts = count_buffer[:shape[0] * shape[1]].reshape(shape)
            n_distinct = np.zeros(shape[0], np.int64)
            # rows reaching each leaf, read off the patterns: the base value needs no
            # prediction pass over the background (most of the cost at a few rows)
            leaf_reached = np.zeros(shape[0])
            kernels.tree_background_patterns(chunk, paths_in_range, patterns, counts,
                                             n_distinct, rows=rows, reached=leaf_reached)
            kernels.tree_interventional_shap(X, patterns, counts, n_distinct, n_background,
                                             paths_in_range, out)
            reached = reached + leaf_reached @ leaf_values[first_path:stop]
    base_value = reached / n_background + ensemble.offset
    return out, np.broadcast_to(base_value, (X.shape[0], ensemble.n_outputs)).copy()


@validate_params(
    {
        "model": "no_validation",  # read_model names what it cannot read
        "X": ["array-like"],
        "background": ["array-like", None],
        "feature_perturbation": [StrOptions(set(FEATURE_PERTURBATIONS))],
        "interactions": ["boolean"],
        "backend": [str, None],
    },
    prefer_skip_nested_validation=True,
)
def tree_shap(model, X, *, background=None, feature_perturbation="auto", interactions=False,
              backend=None):
    """Exact SHAP values of a tree ensemble's raw output.

    Path-dependent and interventional TreeSHAP (Lundberg et al. 2020), computed per
    root-to-leaf path as in GPUTreeShap (Mitchell, Frank & Holmes 2022, Sec. 3).

    Parameters
    ----------
    model : fitted tree model or TreeEnsemble
        scikit-learn trees, forests, (Hist)GradientBoosting; XGBoost; LightGBM; or a
        Pipeline of column-wise steps (scalers, imputers, ...) ending in one.
    X : array-like (n_rows, n_features)
        Rows to explain; NaN is a missing value, routed as the model routes it.
    background : array-like (n_background, n_features), optional
        Background rows of the interventional game. Its pattern tables take
        16 bytes per path and background row; a background beyond ``working_memory``
        (:func:`skshapley.set_config`) is taken in chunks. Fewer than ``WALK_ROWS`` (4)
        rows walk the trees with sets of background rows instead, and the numba backend
        keeps the last background's sets of rows per edge for the next call with an
        equal background (explaining one row at a time).
    feature_perturbation : {"auto", "tree_path_dependent", "interventional"}, default="auto"
        "tree_path_dependent": the cover-weighted conditional expectation of TreeSHAP
        (Lundberg et al. 2020); "interventional": the marginal game over ``background``.
        "auto": interventional when a background is given.
    interactions : bool, default=False
        Also compute SHAP interaction values (path-dependent only; Lundberg et al.
        2020).
    backend : str, optional
        Kernel backend (see :func:`skshapley.backends.available_backends`); None uses the
        configured one. Under "auto" a GPU backend (CuPy, then numba.cuda) runs the call
        when rows x total path length is at least ``GPU_MIN_WORK`` (1e8, measured; the
        policy is ``skshapley.backends._registry.choose_backend``) and the backend has the
        kernels the call needs; otherwise numba.

    Returns
    -------
    TreeShapValues

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from skshapley.tree import tree_shap
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    >>> result = tree_shap(model, X[:5])
    >>> total = result.values.sum(axis=1) + result.base_values
    >>> bool(abs(total[:, 0] - model.predict(X[:5])).max() < 1e-9)
    True
    """
    ensemble = model if isinstance(model, TreeEnsemble) else read_model(model)
    X = _check_X(X, ensemble)
    if feature_perturbation == "auto":
        feature_perturbation = ("interventional" if background is not None
                                else "tree_path_dependent")
    if feature_perturbation == "interventional":
        needed = ("tree_background_patterns", "tree_interventional_shap")
    else:
        needed = ("tree_path_shap",) + (("tree_path_interactions",) if interactions else ())
    kernels = _resolve_backend(backend, ensemble, X.shape[0], needed)
    interaction_values = None
    if feature_perturbation == "interventional":
        if background is None:
            raise ValueError("feature_perturbation='interventional' needs a background set; "
                             "pass background=.")
        if interactions:
            raise ValueError("interactions=True is available with "
                             "feature_perturbation='tree_path_dependent' only.")
        background = _check_X(background, ensemble, "background")
        if background.shape[0] == 0:
            raise ValueError("background has no rows.")
        values, base = interventional_shap(ensemble, X, background, kernels)
    else:
        values, base = path_dependent_shap(ensemble, X, kernels)
        if interactions:
            interaction_values = np.moveaxis(path_dependent_interactions(ensemble, X, kernels),
                                             1, -1)
    return TreeShapValues(values=np.moveaxis(values, 1, -1), base_values=base,
                          interactions=interaction_values,
                          feature_perturbation=feature_perturbation, ensemble=ensemble)
