"""How ``ShapleyExplainer.explain`` computes the values of rows: TreeSHAP, the linear
closed form, or the plan's estimator run over chunks of rows (in joblib workers)."""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed
from sklearn import config_context as sklearn_config_context
from tqdm.auto import tqdm

from skshapley._config import config_context, get_config
from skshapley.explain._columns import check_missing_values_taken, model_rows
from skshapley.explain._linear import explain_linear
from skshapley.explain._tree import check_tree_efficiency, explain_with_trees
from skshapley.games import make_response_function
from skshapley.utils import finite_policy, group_matrix


def model_response(estimator, response_method, feature_names, codec):
    """The explained output as a function of float rows: called on the DataFrame the
    codes stand for when there is a codec, else (with feature names) on a DataFrame."""
    predict = make_response_function(estimator, response_method,
                                     feature_names=None if codec else feature_names)
    return predict if codec is None else codec.wrap(predict)


def explain_chunk(plan, estimator, X, background, response, config, device):
    """Explain the rows of ``X`` by ``plan``; runs inside a joblib worker, which builds
    the model's response function itself (closures do not travel to processes).
    ``response`` is (response_method, feature_names, codec)."""
    with config_context(**config):
        predict = model_response(estimator, *response)
        return plan.explain_rows(predict, X, background, config, device)


def checked_rows(explainer, X):
    """(codec, float64 rows) of ``X`` for ``explain``. A float64 array that validate_data
    would pass as it is (the fitted width, all finite, the explainer fitted without
    column names or codes) skips it: its checks took a fifth of a one-row TreeSHAP call
    and 0.09 of 2.7 ms of a one-row sampled one."""
    if (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
            and X.shape[0] > 0 and X.shape[1] == explainer.n_features_in_
            and getattr(explainer, "codec_", None) is None
            and not hasattr(explainer, "feature_names_in_") and np.isfinite(X).all()):
        return None, X
    # this call's codec: the fitted one, widened by values it has not seen
    return explainer._checked_rows(X, finite_policy(explainer.estimator_), reset=False)


def _run_plan(explainer, X):
    """(per-row results, checked rows): the plan's estimator on the rows of ``X``, in
    chunks (joblib workers with ``n_jobs``), with a progress bar."""
    codec, X = checked_rows(explainer, X)
    response = (explainer.response_method,
                getattr(explainer.estimator_, "feature_names_in_", None), codec)
    with sklearn_config_context(skip_parameter_validation=True):  # checked by fit
        predict = model_response(explainer.estimator_, *response)
    check_missing_values_taken(explainer.estimator_, predict, X, "X")
    n_rows = X.shape[0]
    plan = explainer.plan_
    n_jobs = 1 if explainer.n_jobs is None else explainer.n_jobs
    if n_jobs == 1:
        # rows share games of up to rows_per_game; the bar moves about ten times
        chunk = 1 if plan.tol is not None else max(1, min(plan.rows_per_game,
                                                          n_rows // 10))
    else:
        from joblib import effective_n_jobs

        chunk = max(1, -(-n_rows // (4 * effective_n_jobs(n_jobs))))
    config = get_config()
    if n_rows <= chunk and not explainer.progress:
        # one task: no workers to hand it to, so no joblib or bar (0.1 ms of a 2.7 ms
        # one-row call)
        return plan.explain_rows(predict, X, explainer.background_, None,
                                 explainer.device), X
    tasks = (
        delayed(explain_chunk)(plan, explainer.estimator_, X[s : s + chunk], explainer.background_,
                                response, config, explainer.device)
        for s in range(0, n_rows, chunk)
    )
    results = []
    with tqdm(total=n_rows, disable=not explainer.progress, desc="Explaining rows",
              unit="row") as bar:
        for chunk_results in Parallel(n_jobs=explainer.n_jobs, return_as="generator")(tasks):
            results.extend(chunk_results)
            bar.update(len(chunk_results))
    return results, X


def sampled_values(explainer, X, d, k):
    """(rows, values, base values, standard errors, evaluations, draws) of the plan."""
    rows, X = _run_plan(explainer, X)
    values = np.array([row.values for row in rows]).reshape(-1, d, k)
    std_errors = np.array([row.std_errors for row in rows]).reshape(-1, d, k)
    base = np.array([row.base_value for row in rows]).reshape(-1, k)
    n_evaluations = np.array([row.n_evaluations for row in rows], dtype=np.int64)
    n_draws = np.array([row.n_draws for row in rows], dtype=np.int64)
    return X, values, base, std_errors, n_evaluations, n_draws


def tree_values(explainer, X, interactions):
    """(rows, values, base values, interactions) by TreeSHAP, checked for efficiency."""
    codec, X = checked_rows(explainer, X)
    feature_names = getattr(explainer.estimator_, "feature_names_in_", None)
    values, base, inter = explain_with_trees(
        explainer.tree_ensemble_, explainer._tree_output_map, X, explainer.background_,
        explainer.feature_perturbation, model_rows(feature_names, codec),
        interactions=interactions, groups=getattr(explainer, "_tree_groups", None))
    check_tree_efficiency(
        values, base, X, explainer.tree_ensemble_, explainer._tree_output_map,
        model_rows(feature_names, codec), explainer.estimator_,
        lambda: explainer._outputs(model_response(explainer.estimator_,
                                                  explainer.response_method,
                                                  feature_names, codec), X))
    return X, values, base, inter


def linear_values(explainer, X, column_group, d):
    """(rows, values, base values) of the linear closed form; per group with groups."""
    codec, X = checked_rows(explainer, X)
    feature_names = getattr(explainer.estimator_, "feature_names_in_", None)
    check_missing_values_taken(explainer.estimator_, model_response(
        explainer.estimator_, explainer.response_method, feature_names, codec), X, "X")
    values, base = explain_linear(explainer._linear_plan, X, model_rows(feature_names, codec))
    if column_group is not None:
        # the model is additive in the columns, so a group's value is the sum of its
        # columns' (the game over groups is additive too)
        values = np.moveaxis(np.moveaxis(values, 1, -1) @ group_matrix(column_group, d),
                             -1, 1)
    return X, values, base
