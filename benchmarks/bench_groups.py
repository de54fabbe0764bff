"""Claim (grouped TreeSHAP issue): ``ShapleyExplainer(model, groups=..., method="tree")``
gives the exact Shapley values of groups of columns (the same values as enumerating the
2^g coalitions of groups), for both TreeSHAP games, and at d = 50 it is at least 5x
faster than summing per-column SHAP interaction values over the group blocks (which,
besides, is not the groups' Shapley value in general). And: ``shapley_importance``
(SAGE) costs about what its model calls cost, is at least as accurate as the
``sage-importance`` package at equal predicted rows, and its 95 % intervals cover.

Protocol, section 1 (grouped TreeSHAP). Data: seeded synthetic rows in correlated blocks
of 5 columns (each column 0.8 z_block + 0.6 noise), d = 10 and 50, a Friedman-1-like
target on columns spread over the blocks plus a cross-block product and a small linear
part; 5,000 training rows. Groups: g = 5 and 10 contiguous chunks of d / g columns
(at d = 10, g = 10 is one column a group). Models: HistGradientBoostingRegressor
(100 iterations, 31 leaves), RandomForestRegressor (100 trees, depth 8), XGBoost
(100 rounds, depth 6) when installed. Games: "tree_path_dependent" (the trees' cover-
weighted expectation) and "interventional" (100 background rows). Timed: ours on 1,000
rows; the per-column peers on ``--peer-rows`` rows; brute force and shap's model-calling
explainers on ``--bf-rows`` rows; time per row compared. Rows of the table:

- ours grouped TreeSHAP (``method="tree"``, ``groups=``).
- Sums of per-column SHAP interaction values over each group's block (ours
  ``explain(X, interactions=True)``, shap ``TreeExplainer.shap_interaction_values``;
  path-dependent only, as both compute interactions only there): the block sum
  sum_{i,j in G} Phi_ij, and the row sum sum_{i in G} sum_j Phi_ij = sum_{i in G} phi_i
  (the same numbers as summing per-column SHAP values, also timed without interactions).
  Neither is the group's Shapley value in general; their error shows how far off.
- Interventional: per-column values summed per group (ours; shap's TreeExplainer with
  the same background).
- shap's model-calling explainers on the same model, background and groups:
  ``ExactExplainer`` with a grouped masker (a masker of g inputs that takes a group's
  columns from the row; exact, 2^g coalitions x background rows a row), and
  ``PartitionExplainer`` with ``maskers.Partition(background, clustering=L)``, L a
  linkage that merges each group's columns first and then the groups in a balanced
  binary tree (Owen values: a group's total is exact only for a flat top level, so it
  is an approximation of the group Shapley values; ``max_evals`` 500 and 5,000).
- Brute force. Interventional: ours ``method="exact"`` with ``groups`` (2^g coalitions,
  the model called on the background) is the reference; shap's grouped ExactExplainer is
  a second, independent enumeration. Path-dependent: an independent NumPy enumeration of
  the 2^g coalitions of groups on the models' own trees (scikit-learn's
  ``tree_.weighted_n_node_samples``, HistGradientBoosting's node counts, XGBoost's
  ``Cover``), each coalition's value the trees' cover-weighted expectation.
Max abs difference to the reference over the brute-force rows (model output units; the
response's standard deviation is given for scale). Times: wall seconds, one thread
(numba, OpenMP, BLAS, XGBoost), best of 3 after a warm-up for calls under 3 s, else
one timed call after the warm-up (the machine is shared, 2 cores: times are noisy).

Protocol, section 2 (SAGE). Data: ``make_friedman1`` (2,000 x 8, noise 1, seed 0) split
75/25; model ``HistGradientBoostingRegressor(max_iter=100)``. The game: ``--sage-rows``
held-out rows, ``--sage-background`` training rows, squared error. Reference: exact
enumeration (2^8 = 256 coalitions) by ``shapley_importance(max_evals=256)``. The model is
wrapped in a counter of ``predict`` calls and predicted rows, so calls and rows are
measured, not inferred. ``shapley_importance`` at 4 and 16 antithetic pairs of orderings
(2 + 14 evaluations a pair); sage's ``PermutationEstimator`` (``MarginalImputer`` on the
same background, ``detect_convergence=False``) given as many (row, ordering) samples as
match our predicted rows ((d + 1) x background rows each); scikit-learn's
``permutation_importance`` with as many repeats as those rows buy (another quantity: only
time and ranking; ``--perm-seeds`` seeds). Over ``--sage-seeds`` seeds: RMSE to exact (mean), coverage of the
95 % intervals (ours: t with n_draws - 1 degrees of freedom; sage: +-1.96 std), Kendall's
tau, and the median time, ms per model call and us per predicted row.

Refuted if grouped TreeSHAP differs from brute force beyond rounding (float64 rounding;
float32 for XGBoost, whose predictions are float32 and whose dumped covers and leaf
values, read by the NumPy enumeration, are printed to float32 precision), or if it is not
at least 5x faster than the interaction sums at d = 50.

Run: ``python benchmarks/bench_groups.py`` (``--quick``: a smoke run, which writes to
``--output`` too). Section 3 compares hierarchical Owen values
(``ShapleyExplainer(groups=<linkage>)``) with shap's PartitionExplainer
(``--skip-groups --skip-sage`` for it alone, ``--skip-owen`` to leave it out).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import os
import pathlib
import sys
import time
import warnings

# One thread for every method (OpenMP in the models, BLAS, XGBoost; numba set below):
# the machine is shared, and shap's C++ TreeSHAP is single-threaded.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
from _report import start_report  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "groups.md"
BLOCK = 5  # columns of a correlated block


# --------------------------------------------------------------------------- timing
def measure(function, warm=None, repeats=3, long=3.0):
    """(seconds, result): best of ``repeats`` calls after a warm-up (``warm()``, or one
    call of ``function``) when a call takes under ``long`` seconds, else one call."""
    if warm is not None:
        warm()
    start = time.perf_counter()
    result = function()
    best = time.perf_counter() - start
    if warm is None:  # that call was the warm-up: time again
        start = time.perf_counter()
        result = function()
        best = time.perf_counter() - start
    if best < long:
        for _ in range(repeats - 1):
            start = time.perf_counter()
            function()
            best = min(best, time.perf_counter() - start)
    return best, result


# ------------------------------------------------------------------------ section 1
def make_blocks(n, d, seed=0):
    """Rows in correlated blocks of BLOCK columns and a Friedman-1-like target on
    columns spread over the blocks (so over the groups), with a cross-block product."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, -(-d // BLOCK)))
    X = 0.8 * Z[:, np.arange(d) // BLOCK] + 0.6 * rng.normal(size=(n, d))
    a, b, c, e, f, h, k = (int(p * d) for p in (0.0, 0.55, 0.25, 0.62, 0.85, 0.35, 0.95))
    y = (10 * np.sin(np.pi * X[:, a] * X[:, b]) + 20 * (0.5 * X[:, c] - 0.5) ** 2
         + 10 * X[:, e] + 5 * X[:, f] + 3 * X[:, h] * X[:, k]
         + X.sum(axis=1) / np.sqrt(d) + rng.normal(size=n))
    return X, y


def contiguous_groups(d, g):
    size = d // g
    return [list(range(start, start + size)) for start in range(0, d, size)]


def fit_models(X, y, threads, only=None):
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

    models = {
        "HistGradientBoosting (100 iter, 31 leaves)":
            HistGradientBoostingRegressor(max_iter=100, early_stopping=False, random_state=0),
        "RandomForest (100 trees, depth 8)":
            RandomForestRegressor(n_estimators=100, max_depth=8, n_jobs=threads,
                                  random_state=0),
    }
    try:
        import xgboost

        models["XGBoost (100 rounds, depth 6)"] = xgboost.XGBRegressor(
            n_estimators=100, max_depth=6, learning_rate=0.1, tree_method="hist",
            n_jobs=threads, random_state=0)
    except ImportError:
        pass
    if only is not None:
        models = {name: m for name, m in models.items()
                  if any(key.lower() in name.lower() for key in only)}
    return {name: model.fit(X, y) for name, model in models.items()}


def node_tables(model):
    """The model's trees as node tables: dicts of arrays feature, threshold, left,
    right (-1 at leaves), cover, value, and how a row goes left ("le": x <= t on float32
    rows as scikit-learn's trees; "le64": x <= t; "lt32": x < t on float32, XGBoost)."""
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

    tables = []
    if isinstance(model, RandomForestRegressor):
        scale = 1.0 / len(model.estimators_)
        for tree in model.estimators_:
            t = tree.tree_
            tables.append(dict(feature=t.feature.astype(np.int64), threshold=t.threshold,
                               left=t.children_left, right=t.children_right,
                               cover=t.weighted_n_node_samples.astype(float),
                               value=t.value[:, 0, 0] * scale, rule="le"))
        return tables
    if isinstance(model, HistGradientBoostingRegressor):
        for (predictor,) in model._predictors:
            nodes = predictor.nodes
            leaf = nodes["is_leaf"].astype(bool)
            tables.append(dict(feature=np.where(leaf, -2, nodes["feature_idx"].astype(np.int64)),
                               threshold=nodes["num_threshold"].astype(float),
                               left=np.where(leaf, -1, nodes["left"].astype(np.int64)),
                               right=np.where(leaf, -1, nodes["right"].astype(np.int64)),
                               cover=nodes["count"].astype(float),
                               value=nodes["value"].astype(float), rule="le64"))
        return tables
    frame = model.get_booster().trees_to_dataframe()
    for _, tree in frame.groupby("Tree", sort=True):
        tree = tree.sort_values("Node")
        n = int(tree["Node"].max()) + 1
        node_of = {id_: int(node) for id_, node in zip(tree["ID"], tree["Node"], strict=True)}
        feature = np.full(n, -2, np.int64)
        threshold = np.zeros(n)
        left = np.full(n, -1, np.int64)
        right = np.full(n, -1, np.int64)
        cover = np.zeros(n)
        value = np.zeros(n)
        for row in tree.itertuples():
            node = int(row.Node)
            cover[node] = row.Cover
            if row.Feature == "Leaf":
                value[node] = row.Gain
            else:
                feature[node] = int(str(row.Feature).lstrip("f"))
                threshold[node] = row.Split
                left[node], right[node] = node_of[row.Yes], node_of[row.No]
        tables.append(dict(feature=feature, threshold=threshold, left=left, right=right,
                           cover=cover, value=value, rule="lt32"))
    return tables


def path_dependent_game(tables, rows, column_group, g):
    """(2^g, n_rows) values of every coalition of groups (bit j: group j) of the
    path-dependent game: per tree, a column in the coalition sends the row its own
    way, any other column splits it by the children's covers."""
    masks = ((np.arange(2**g)[:, None] >> np.arange(g)) & 1).astype(bool)
    in_coalition = masks[:, column_group]  # (2^g, d)
    rows32 = rows.astype(np.float32)
    total = np.zeros((2**g, len(rows)))
    for t in tables:
        weight = {0: np.ones((2**g, len(rows)))}
        stack = [0]
        while stack:
            node = stack.pop()
            w = weight.pop(node)
            if t["left"][node] < 0:
                total += w * t["value"][node]
                continue
            f, threshold = t["feature"][node], t["threshold"][node]
            if t["rule"] == "le":
                goes_left = rows32[:, f] <= threshold
            elif t["rule"] == "le64":
                goes_left = rows[:, f] <= threshold
            else:
                goes_left = rows32[:, f] < np.float32(threshold)
            left, right = t["left"][node], t["right"][node]
            inside = in_coalition[:, f][:, None]
            share = t["cover"][left] / t["cover"][node]
            right_share = t["cover"][right] / t["cover"][node]
            weight[left] = w * np.where(inside, goes_left[None, :], share)
            weight[right] = w * np.where(inside, ~goes_left[None, :], right_share)
            stack += [left, right]
    return total


def shapley_from_game(v, g):
    """Shapley values (n_rows, g) of the games v (2^g, n_rows), bit j = player j."""
    from math import factorial

    size = np.array([bin(s).count("1") for s in range(2**g)])
    weight = np.array([factorial(s) * factorial(g - s - 1) / factorial(g)
                       for s in range(g)])
    phi = np.zeros((v.shape[1], g))
    for j in range(g):
        without = np.array([s for s in range(2**g) if not s >> j & 1])
        phi[:, j] = (weight[size[without]][:, None]
                     * (v[without | (1 << j)] - v[without])).sum(axis=0)
    return phi


class GroupMasker:
    """A shap masker whose g inputs are groups of columns: a masked input's group takes
    its columns from the background rows, a kept one from the explained row."""

    def __init__(self, background, groups):
        self.data = np.asarray(background, dtype=float)
        self.groups = groups
        self.column_group = np.empty(self.data.shape[1], dtype=np.int64)
        for k, columns in enumerate(groups):
            self.column_group[columns] = k
        self.shape = (len(self.data), len(groups))

    def __call__(self, mask, x):
        out = self.data.copy()
        kept = np.asarray(mask, dtype=bool)[self.column_group]
        out[:, kept] = np.asarray(x)[kept]
        return out

    def mask_shapes(self, *args):
        return [(len(self.groups),)]


def group_linkage(groups, d):
    """A linkage (scipy format) that merges each group's columns first (height 0.1),
    then the groups pairwise in a balanced binary tree (heights 1, 2, ...)."""
    merges, size, node, tops = [], {j: 1 for j in range(d)}, d, []
    for columns in groups:
        current = columns[0]
        for j in columns[1:]:
            merges.append([current, j, 0.1, size[current] + size[j]])
            size[node] = size[current] + size[j]
            current, node = node, node + 1
        tops.append(current)
    height = 1.0
    while len(tops) > 1:
        merged = []
        for i in range(0, len(tops) - 1, 2):
            a, b = tops[i], tops[i + 1]
            merges.append([a, b, height, size[a] + size[b]])
            size[node] = size[a] + size[b]
            merged.append(node)
            node += 1
        if len(tops) % 2:
            merged.append(tops[-1])
        tops, height = merged, height + 1
    return np.array(merges, dtype=float)


def _per_column(model, X_train, rows, peer, background):
    """The per-column work, which does not depend on the groups: (seconds, rows,
    values) of ours with interactions, ours per-column (both games) and shap's
    interaction values and interventional values."""
    import shap

    from skshapley import ShapleyExplainer

    out = {}
    columns = ShapleyExplainer(model, prefit=True, method="tree",
                               feature_perturbation="tree_path_dependent").fit(X_train[:200])
    seconds, explanation = measure(lambda: columns.explain(rows, interactions=True),
                                   warm=lambda: columns.explain(rows[:2], interactions=True))
    out["ours interactions"] = (seconds, len(rows), explanation.interactions)
    seconds, explanation = measure(lambda: columns.explain(rows),
                                   warm=lambda: columns.explain(rows[:2]))
    out["ours per-column, path-dependent"] = (seconds, len(rows), explanation.values)
    tree_explainer = shap.TreeExplainer(model)
    seconds, phi = measure(lambda: tree_explainer.shap_interaction_values(peer),
                           warm=lambda: tree_explainer.shap_interaction_values(peer[:2]))
    out["shap interactions"] = (seconds, len(peer), phi)
    columns = ShapleyExplainer(model, prefit=True, method="tree",
                               background=background).fit(X_train[:200])
    seconds, explanation = measure(lambda: columns.explain(rows),
                                   warm=lambda: columns.explain(rows[:2]))
    out["ours per-column, interventional"] = (seconds, len(rows), explanation.values)
    tree_explainer = shap.TreeExplainer(model, background,
                                        feature_perturbation="interventional")
    seconds, phi = measure(
        lambda: tree_explainer.shap_values(peer, check_additivity=False),
        warm=lambda: tree_explainer.shap_values(peer[:2], check_additivity=False))
    out["shap per-column, interventional"] = (seconds, len(peer), phi)
    return out


def grouped_section(args, log):
    import numba
    import shap

    from skshapley import ShapleyExplainer

    numba.set_num_threads(args.threads)
    dims = [10, 50]
    group_counts = [5] if args.quick else [5, 10]
    n_rows, peer_rows, bf_rows = args.rows, args.peer_rows, args.bf_rows
    partition_budgets = ((500, bf_rows), (5000, min(3, bf_rows)))
    log("## 1. Grouped TreeSHAP")
    log()
    log(f"{n_rows} rows for ours, {peer_rows} for shap's per-column TreeExplainer, "
        f"{bf_rows} (g = 5) and {max(2, bf_rows // 2)} (g = 10) for brute force and "
        f"shap's model-calling explainers ({partition_budgets[1][1]} for PartitionExplainer "
        f"at max_evals=5000); background {args.background} rows; {args.threads} thread(s). "
        "'x grouped' is the method's time per row over grouped TreeSHAP's on the same "
        "game (per-column methods do the same work whatever g); the error is the max abs "
        "difference to the brute-force reference on the brute-force rows.")
    log()
    headline = []
    for d in dims:
        X, y = make_blocks(5000 + n_rows, d, seed=d)
        X_train, y_train, X_test = X[:5000], y[:5000], X[5000:]
        background = X_train[:args.background]
        models = fit_models(X_train, y_train, args.threads, only=args.models)
        rows, peer = X_test[:n_rows], X_test[:peer_rows]
        for name, model in models.items():
            per_column = _per_column(model, X_train, rows, peer, background)
            tables = node_tables(model)
            for g in group_counts:
                groups = contiguous_groups(d, g)
                column_group = np.repeat(np.arange(g), d // g)
                G = np.zeros((d, g))
                G[np.arange(d), column_group] = 1.0
                n_bf = bf_rows if g <= 5 else max(2, bf_rows // 2)
                bf = X_test[:n_bf]
                log(f"### {name}, d = {d}, g = {g} ({d // g} columns a group)")
                log()
                log(f"Response sd {y_train.std():.2f}.")
                log()
                log("| game | method | rows | time (s) | ms / row | x grouped | "
                    "max abs diff to brute force |")
                log("|---|---|---|---|---|---|---|")

                # --- path-dependent
                game = "path-dependent"
                start = time.perf_counter()
                reference = shapley_from_game(path_dependent_game(tables, bf, column_group, g),
                                              g)
                bf_seconds = time.perf_counter() - start
                explainer = ShapleyExplainer(model, prefit=True, method="tree", groups=groups,
                                             feature_perturbation="tree_path_dependent").fit(
                    X_train[:200])
                seconds, _ = measure(lambda e=explainer, r=rows: e.explain(r),
                                     warm=lambda e=explainer, r=rows: e.explain(r[:2]))
                error = np.abs(explainer.explain(bf).values - reference).max()
                pd_rows = [(game, "**ours grouped TreeSHAP**", n_rows, seconds, error)]
                grouped_per_row = seconds / n_rows
                for key, label in (("ours interactions", "ours interactions"),
                                   ("shap interactions", "shap interactions")):
                    seconds, n, phi = per_column[key]
                    phi = phi[:n_bf]
                    pd_rows.append((game, f"{label}, block sum", n, seconds, np.abs(
                        np.einsum("nij,ig,jg->ng", phi, G, G) - reference).max()))
                    pd_rows.append((game, f"{label}, row sum (= summed phi_i)", n, seconds,
                                    np.abs(phi.sum(axis=2) @ G - reference).max()))
                seconds, n, phi = per_column["ours per-column, path-dependent"]
                pd_rows.append((game, "ours per-column TreeSHAP, summed", n, seconds,
                                np.abs(phi[:n_bf] @ G - reference).max()))
                pd_rows.append((game, "brute force (NumPy, 2^g coalitions on the trees)",
                                n_bf, bf_seconds, 0.0))
                ours_inter, shap_inter = per_column["ours interactions"], \
                    per_column["shap interactions"]
                headline.append((name, d, g,
                                 ours_inter[0] / ours_inter[1] / grouped_per_row,
                                 shap_inter[0] / shap_inter[1] / grouped_per_row,
                                 pd_rows[0][4]))

                # --- interventional
                game = "interventional"
                exact = ShapleyExplainer(model, prefit=True, method="exact", groups=groups,
                                         background=background).fit(X_train[:200])
                seconds, explanation = measure(lambda e=exact, r=bf: e.explain(r),
                                               warm=lambda e=exact, r=bf: e.explain(r[:1]))
                reference = explanation.values
                bf_row = (game, "brute force: ours method='exact', groups (reference)", n_bf,
                          seconds, 0.0)
                explainer = ShapleyExplainer(model, prefit=True, method="tree", groups=groups,
                                             background=background).fit(X_train[:200])
                seconds, _ = measure(lambda e=explainer, r=rows: e.explain(r),
                                     warm=lambda e=explainer, r=rows: e.explain(r[:2]))
                error = np.abs(explainer.explain(bf).values - reference).max()
                grouped_iv_per_row = seconds / n_rows
                iv_rows = [(game, "**ours grouped TreeSHAP**", n_rows, seconds, error)]
                for key, label in (("ours per-column, interventional",
                                    "ours per-column TreeSHAP, summed"),
                                   ("shap per-column, interventional",
                                    "shap TreeExplainer per column, summed")):
                    seconds, n, phi = per_column[key]
                    iv_rows.append((game, label, n, seconds,
                                    np.abs(phi[:n_bf] @ G - reference).max()))
                grouped_exact = shap.ExactExplainer(model.predict,
                                                    GroupMasker(background, groups))
                seconds, values = measure(lambda e=grouped_exact, r=bf: e(r).values,
                                          warm=lambda e=grouped_exact, r=bf: e(r[:1]))
                iv_rows.append((game, "shap ExactExplainer, grouped masker", n_bf, seconds,
                                np.abs(values - reference).max()))
                partition = shap.PartitionExplainer(
                    model.predict, shap.maskers.Partition(background,
                                                          clustering=group_linkage(groups, d)))
                for budget, n in partition_budgets:
                    n = min(n, n_bf)
                    seconds, values = measure(
                        lambda e=partition, b=budget, r=bf[:n]:
                            e(r, max_evals=b, silent=True).values,
                        warm=lambda e=partition, r=bf[:1]: e(r, max_evals=500, silent=True))
                    iv_rows.append((game, f"shap PartitionExplainer (group linkage, max_evals="
                                    f"{budget}), group totals", n, seconds,
                                    np.abs(values @ G - reference[:n]).max()))
                iv_rows.append(bf_row)
                for game_rows, per_row in ((pd_rows, grouped_per_row),
                                           (iv_rows, grouped_iv_per_row)):
                    for game_name, method, n, seconds, error in game_rows:
                        log(f"| {game_name} | {method} | {n} | {seconds:.3f} | "
                            f"{seconds / n * 1e3:.3f} | {seconds / n / per_row:.1f}x | "
                            f"{error:.1e} |")
                log()
    log("### Summary: grouped TreeSHAP vs the interaction sums (path-dependent)")
    log()
    log("| model | d | g | ours interactions / ours grouped (time a row) | "
        "shap interactions / ours grouped | grouped max abs diff to brute force |")
    log("|---|---|---|---|---|---|")
    for name, d, g, ours_ratio, shap_ratio, error in headline:
        log(f"| {name} | {d} | {g} | {ours_ratio:.1f}x | {shap_ratio:.1f}x | {error:.1e} |")
    log()
    at_50 = [r for r in headline if r[1] == 50]
    if at_50:
        low = min(r[3] for r in at_50)
        log(f"At d = 50 grouped TreeSHAP is {low:.1f}x to {max(r[3] for r in at_50):.1f}x "
            "faster than our interaction sums (goal: >= 5x): "
            + ("met." if low >= 5 else "NOT met for every model.")
            + f" Against shap's interaction values: {min(r[4] for r in at_50):.1f}x to "
            f"{max(r[4] for r in at_50):.1f}x.")
        log()


# ------------------------------------------------------------------------ section 2
def _counted_class():
    """A fitted regressor whose ``predict`` counts its calls and predicted rows, as a
    scikit-learn regressor (for the scorers, ``permutation_importance`` and sage)."""
    from sklearn.base import BaseEstimator, RegressorMixin

    class Counted(RegressorMixin, BaseEstimator):
        def __init__(self, model=None):
            self.model = model

        def fit(self, X, y=None):
            return self

        def predict(self, X):
            self.calls_ += 1
            self.rows_ += len(X)
            return self.model.predict(X)

        def reset(self):
            self.calls_ = self.rows_ = 0
            self.n_features_in_ = self.model.n_features_in_
            return self

    return Counted


def sage_section(args, log):
    from scipy.stats import kendalltau
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.inspection import permutation_importance
    from sklearn.model_selection import train_test_split

    from skshapley.inspection import shapley_importance

    log("## 2. Global importance (SAGE)")
    log()
    try:
        from importlib.metadata import version

        import sage

        has_sage = True
        log(f"sage-importance {version('sage-importance')} (import name ``sage``), in the "
            "same process.")
    except ImportError:
        has_sage = False
        log("sage-importance could not be imported (``pip install sage-importance``): its "
            "rows are left out.")
    log()
    d = 8
    X, y = make_friedman1(n_samples=2000, n_features=d, noise=1.0, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X_train, y_train)
    rng = np.random.RandomState(0)
    background = X_train[np.sort(rng.choice(len(X_train), args.sage_background,
                                            replace=False))]
    Xs, ys = X_test[:args.sage_rows], y_test[:args.sage_rows]
    n, m = len(Xs), len(background)
    counted = _counted_class()(model).reset()

    def ours(budget, seed):
        counted.reset()
        start = time.perf_counter()
        result = shapley_importance(counted, Xs, ys, scoring="neg_mean_squared_error",
                                    background=background, max_evals=budget,
                                    random_state=seed)
        return result, time.perf_counter() - start, counted.calls_, counted.rows_

    ours(2**d, 0)  # warm-up
    exact, exact_seconds, exact_calls, exact_rows = ours(2**d, 0)
    truth = exact.importances_mean
    batch = np.tile(Xs, (m, 1))
    model.predict(batch)
    start = time.perf_counter()
    model.predict(batch)
    model_per_row = (time.perf_counter() - start) / len(batch)
    log(f"make_friedman1, d = {d}; {n} held-out rows, {m} background rows. The model "
        f"predicts {model_per_row * 1e6:.2f} us a row in one batch of {len(batch)} rows.")
    log(f"Reference, exact enumeration: {exact.n_evaluations} evaluations, {exact_calls} "
        f"model calls, {exact_rows / 1e6:.2f} M rows, {exact_seconds:.2f} s "
        f"({exact_seconds / exact_rows * 1e6:.2f} us a predicted row, "
        f"{exact_seconds / exact_rows / model_per_row:.2f}x the model's own). Exact values: "
        + ", ".join(f"x{j} {v:.3f}" for j, v in enumerate(truth)) + ".")
    log()
    log(f"Over {args.sage_seeds} seeds (medians of time; means of RMSE, coverage and tau).")
    log()
    log("| method | model calls | rows predicted (M) | time (s) | ms / call | us / row | "
        "x model's own per row | RMSE vs exact | coverage of 95 % intervals | Kendall tau |")
    log("|---|---|---|---|---|---|---|---|---|---|")
    for n_pairs in args.sage_pairs:
        budget = 2 + 2 * (d - 1) * n_pairs
        runs = {"ours": [], "sage": [], "perm": []}
        for seed in range(args.sage_seeds):
            result, seconds, calls, rows = ours(budget, seed)
            runs["ours"].append((result.importances_mean, result.ci_low, result.ci_high,
                                 seconds, calls, rows))
            if has_sage:
                samples = max(1, round(rows / ((d + 1) * m)))
                loops = -(-samples // 512)
                size = -(-samples // loops)
                counted.reset()
                imputer = sage.MarginalImputer(counted, background)
                estimator = sage.PermutationEstimator(imputer, "mse", random_state=seed)
                start = time.perf_counter()
                with contextlib.redirect_stdout(io.StringIO()):
                    explanation = estimator(Xs, ys, batch_size=size, n_permutations=loops * size,
                                            detect_convergence=False, bar=False)
                seconds = time.perf_counter() - start
                half = 1.959963984540054 * explanation.std
                runs["sage"].append((explanation.values, explanation.values - half,
                                     explanation.values + half, seconds, counted.calls_,
                                     counted.rows_))
            repeats = max(1, round((rows - n) / (d * n)))
            if seed >= args.perm_seeds:
                continue
            counted.reset()
            start = time.perf_counter()
            perm = permutation_importance(counted, Xs, ys, scoring="neg_mean_squared_error",
                                          n_repeats=repeats, random_state=seed)
            seconds = time.perf_counter() - start
            runs["perm"].append((perm.importances_mean, None, None, seconds, counted.calls_,
                                 counted.rows_))
        labels = {"ours": f"ours shapley_importance, {n_pairs} pairs (max_evals={budget})",
                  "sage": "sage PermutationEstimator, equal rows",
                  "perm": f"sklearn permutation_importance ({repeats} repeats)"}
        for key, found in runs.items():
            if not found:
                continue
            values = np.array([f[0] for f in found])
            seconds = float(np.median([f[3] for f in found]))
            calls = int(np.median([f[4] for f in found]))
            rows = int(np.median([f[5] for f in found]))
            tau = np.mean([kendalltau(v, truth).statistic for v in values])
            if key == "perm":
                error, coverage = "(other quantity)", "-"
            else:
                rmse = np.sqrt(np.mean((values - truth) ** 2, axis=1)).mean()
                low, high = np.array([f[1] for f in found]), np.array([f[2] for f in found])
                inside = (low <= truth) & (truth <= high)
                error, coverage = f"{rmse:.4f}", f"{inside.mean():.0%}"
            log(f"| {labels[key]} | {calls} | {rows / 1e6:.3f} | {seconds:.3f} | "
                f"{seconds / calls * 1e3:.2f} | {seconds / rows * 1e6:.2f} | "
                f"{seconds / rows / model_per_row:.2f}x | {error} | {coverage} | {tau:.2f} |")
    log()
    log("Model calls and rows are counted by a wrapper around ``predict``. Coverage: share "
        "of (seed, feature) pairs whose interval holds the exact value.")
    log()


# ------------------------------------------------------------------------ section 3
def exact_owen_values(predict, rows, background, linkage_matrix):
    """Exact Owen values (n_rows, d) of the interventional game for the binary
    hierarchy of a scipy linkage: at each level of a leaf's path the sibling subtree is
    in or out with probability 1/2 (Shapley between two unions), so the value of leaf i
    is the mean over those 2^depth choices of v(S + i) - v(S). v over all 2^d coalitions
    (d <= 12 or so)."""
    d = rows.shape[1]
    masks = ((np.arange(2**d)[:, None] >> np.arange(d)) & 1).astype(bool)
    games = np.empty((len(rows), 2**d))
    for r, x in enumerate(rows):
        mixed = np.where(masks[:, None, :], x, background[None]).reshape(-1, d)
        games[r] = predict(mixed).reshape(2**d, len(background)).mean(axis=1)
    children = {d + k: (int(a), int(b)) for k, (a, b) in enumerate(linkage_matrix[:, :2])}
    parent = {c: p for p, pair in children.items() for c in pair}
    root = d + len(linkage_matrix) - 1

    def leaves(node):
        if node < d:
            return 1 << node
        a, b = children[node]
        return leaves(a) | leaves(b)

    phi = np.zeros((len(rows), d))
    for i in range(d):
        siblings, node = [], i
        while node != root:
            a, b = children[parent[node]]
            siblings.append(leaves(b if a == node else a))
            node = parent[node]
        for choice in itertools.product((0, 1), repeat=len(siblings)):
            S = 0
            for take, sibling in zip(choice, siblings, strict=True):
                S |= sibling if take else 0
            phi[:, i] += games[:, S | 1 << i] - games[:, S]
        phi[:, i] /= 2 ** len(siblings)
    return phi


def owen_section(args, log):
    """Hierarchical Owen values of ``ShapleyExplainer(groups=<linkage>)`` against shap's
    PartitionExplainer at equal evaluations.

    Run on its own with ``--skip-groups --skip-sage``.

    Protocol: d = 8 and 12 columns in correlated blocks, a RandomForest (50 trees,
    depth 8); the hierarchy: complete linkage of the correlation distance of the columns
    (scipy.cluster.hierarchy), and a balanced linkage (``group_linkage`` of pairs). The
    reference: exact Owen values by enumeration (``exact_owen_values``; checked equal to
    shap's PartitionExplainer to 1e-16 at d = 8). Ours with ``method="exact"`` (error
    should be rounding), and ``method="permutation"`` vs shap's PartitionExplainer at
    equal ``max_evals`` (shap's counts model calls on the background, as ours);
    max abs error over rows and columns, time per row.
    """
    import shap
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import pdist
    from sklearn.ensemble import RandomForestRegressor

    from skshapley import ShapleyExplainer

    log("## 3. Hierarchical Owen values vs shap PartitionExplainer")
    log()
    log("| d | linkage | method | max_evals | evaluations a row (ours, mean) | rows | "
        "ms / row | max abs error vs exact Owen | RMSE vs exact Owen |")
    log("|---|---|---|---|---|---|---|---|---|")
    n_rows = 5 if args.quick else 20
    for d in (8, 12):
        X, y = make_blocks(3000, d, seed=100 + d)
        model = RandomForestRegressor(n_estimators=50, max_depth=8, n_jobs=args.threads,
                                      random_state=0).fit(X[:2500], y[:2500])
        background, rows = X[:50], X[2500:2500 + n_rows]
        hierarchies = {
            "complete (correlation)": linkage(pdist(X.T, "correlation"), method="complete"),
            "balanced": group_linkage([[j] for j in range(d)], d),
        }
        for label, Z in hierarchies.items():
            exact = exact_owen_values(model.predict, rows, background, Z)
            # 2d (one pair of orderings, ours' least) to 16d: mostly under the
            # enumeration's cost, where sampling matters
            for method, budget in [("exact", "auto")] + [("permutation", k * d)
                                                         for k in (2, 4, 8, 16)]:
                explainer = ShapleyExplainer(model, prefit=True, groups=Z, method=method,
                                             max_evals=budget, background=background,
                                             random_state=0).fit(X[:2500])
                seconds, explanation = measure(
                    lambda e=explainer, r=rows: e.explain(r),
                    warm=lambda e=explainer, r=rows: e.explain(r[:1]))
                if getattr(explanation, "method", None) != "hierarchical":
                    log(f"<!-- ours d={d} {label} {method}: explanation.method is "
                        f"{getattr(explanation, 'method', None)!r}, not 'hierarchical' -->")
                diff = np.asarray(explanation.values) - exact
                evaluations = np.mean(getattr(explanation, "n_evaluations", np.nan))
                log(f"| {d} | {label} | ours {method} | {budget} | {evaluations:.0f} | "
                    f"{n_rows} | {seconds / n_rows * 1e3:.2f} | {np.abs(diff).max():.2e} | "
                    f"{np.sqrt(np.mean(diff ** 2)):.2e} |")
                if method == "permutation":
                    partition = shap.PartitionExplainer(
                        model.predict, shap.maskers.Partition(background, clustering=Z))
                    seconds, values = measure(
                        lambda e=partition, b=budget, r=rows: e(r, max_evals=b,
                                                                 silent=True).values,
                        warm=lambda e=partition, b=budget, r=rows: e(r[:1], max_evals=b,
                                                                      silent=True))
                    diff = values - exact
                    log(f"| {d} | {label} | shap PartitionExplainer | {budget} | - | "
                        f"{n_rows} | {seconds / n_rows * 1e3:.2f} | "
                        f"{np.abs(diff).max():.2e} | {np.sqrt(np.mean(diff ** 2)):.2e} |")
    log()


# ------------------------------------------------------------------------------ main
def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run of both sections")
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--peer-rows", type=int, default=100)
    parser.add_argument("--bf-rows", type=int, default=10,
                        help="brute-force rows at g = 5 (half at g = 10)")
    parser.add_argument("--background", type=int, default=100)
    parser.add_argument("--models", default=None,
                        help="comma-separated substrings of model names to keep")
    parser.add_argument("--sage-rows", type=int, default=100)
    parser.add_argument("--sage-background", type=int, default=25)
    parser.add_argument("--sage-seeds", type=int, default=20)
    parser.add_argument("--sage-pairs", default="4,16")
    parser.add_argument("--perm-seeds", type=int, default=5,
                        help="seeds of permutation_importance (time and ranking only)")
    parser.add_argument("--skip-groups", action="store_true")
    parser.add_argument("--skip-sage", action="store_true")
    parser.add_argument("--skip-owen", action="store_true",
                        help="skip the hierarchical Owen section")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.peer_rows, args.bf_rows = 200, 20, 4
        args.sage_seeds, args.sage_pairs = 3, "4"
        args.models = args.models or "forest,hist"
    args.sage_pairs = [int(p) for p in str(args.sage_pairs).split(",")]
    args.models = None if args.models is None else args.models.split(",")
    lines, log = start_report("Grouped TreeSHAP and global importance (SAGE)", __doc__,
                              "bench_groups.py", argv)
    started = time.perf_counter()
    if not args.skip_groups:
        grouped_section(args, log)
    if not args.skip_sage:
        sage_section(args, log)
    if not args.skip_owen:
        owen_section(args, log)
    log(f"Total wall time {time.perf_counter() - started:.0f} s.")
    path = pathlib.Path(args.output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    print(f"written to {path}")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        main(sys.argv[1:])
