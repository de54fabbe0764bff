"""ShapleyExplainer(groups=...): every method plays the game whose players are groups of
columns; checked against enumeration of that game."""

import copy
import pathlib

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skshapley import ShapleyExplainer
from skshapley.approximators import METHOD_RECORDS
from skshapley.games import CallableGame, MarginalGame
from skshapley.permutations import PermutationSampler
from skshapley.utils._groups import check_groups

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _model(X):
    """Interactions inside groups and across them, and a column alone."""
    return (X[:, 0] * X[:, 1] + np.sin(X[:, 2]) * X[:, 5] + X[:, 3] ** 2 - X[:, 4]
            + 0.5 * X[:, 1] * X[:, 4])


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _frame(rng, n=60, d=6):
    X = rng.normal(size=(n, d))
    X[:, 1] = X[:, 0] + 0.2 * rng.normal(size=n)  # a correlated pair, grouped below
    return pd.DataFrame(X, columns=[f"c{j}" for j in range(d)])


GROUPS = {"pair": ["c0", "c1"], "mixed": ["c2", "c5"], "rest": ["c3", "c4"]}


def _group_game_values(model, x, background, column_group):
    """The game over groups, by masking columns: v(G) = mean_b f(x on the columns of G,
    b elsewhere), for a (m, n_groups) mask of groups."""
    def value(coalitions):
        out = []
        for mask in coalitions:
            rows = background.copy()
            columns = mask[column_group]
            rows[:, columns] = x[columns]
            out.append(model(rows).mean())
        return np.array(out)

    return value


def _enumerated(model, x, background, column_group, n_groups):
    """Shapley values of the game over groups by the subset formula."""
    from math import factorial

    value = _group_game_values(model, x, background, column_group)
    masks = np.array([[(s >> g) & 1 for g in range(n_groups)] for s in range(2**n_groups)],
                     dtype=bool)
    v = dict(zip(range(2**n_groups), value(masks), strict=True))
    phi = np.zeros(n_groups)
    for i in range(n_groups):
        for s in range(2**n_groups):
            if s >> i & 1:
                continue
            size = bin(s).count("1")
            weight = factorial(size) * factorial(n_groups - size - 1) / factorial(n_groups)
            phi[i] += weight * (v[s | 1 << i] - v[s])
    return phi


def test_exact_groups_equal_enumeration_of_the_group_game(rng):
    X = _frame(rng)
    explainer = ShapleyExplainer(lambda A: _model(np.asarray(A)), method="exact",
                                 groups=GROUPS, background=15, random_state=0).fit(X)
    explanation = explainer.explain(X.iloc[:3])
    _, column_group = check_groups(GROUPS, list(X.columns))
    for i in range(3):
        phi = _enumerated(_model, X.values[i], explainer.background_, column_group, 3)
        np.testing.assert_allclose(explanation.values[i], phi, rtol=0, atol=1e-12)
    assert explanation.feature_names == ["pair", "mixed", "rest"]
    np.testing.assert_array_equal(explanation.std_errors, 0.0)


# 14 columns in 7 groups: every sampling and regression method has a budget below the
# 2^7 = 128 coalitions (else it would enumerate), except stratified, which needs 156
@pytest.mark.parametrize("method", [m for m in METHOD_RECORDS if m not in ("exact",
                                                                           "stratified")])
def test_every_method_plays_the_game_over_groups(rng, method):
    # the explainer's values are those of the method run on the group game built by
    # hand, with the explainer's seed: the groups reach every method unchanged
    X = rng.normal(size=(40, 14))
    groups = [[2 * g, 2 * g + 1] for g in range(7)]

    def model(A):
        return _model(A[:, :6]) + A[:, 6:] @ np.arange(1.0, 9.0) + A[:, 7] * A[:, 12]

    explainer = ShapleyExplainer(model, method=method, max_evals=120, groups=groups,
                                 background=8, random_state=3).fit(X)
    explanation = explainer.explain(X[:2])
    plan = explainer.plan_
    column_group = np.repeat(np.arange(7), 2)
    for i in range(2):
        game = CallableGame(_group_game_values(model, X[i], explainer.background_,
                                               column_group), n_players=7)
        options = dict(plan.options)
        if plan.record.uses_sampler:
            options["sampler"] = (copy.deepcopy(plan.sampler).reset()
                                  if isinstance(plan.sampler, PermutationSampler)
                                  else plan.sampler)
        reference = plan.record.run(game, plan.budget, tol=None,
                                    random_state=explainer.random_seed_, **options)
        np.testing.assert_allclose(explanation.values[i], reference.values, rtol=1e-9,
                                   atol=1e-9)
        np.testing.assert_allclose(explanation.std_errors[i], reference.std_errors,
                                   rtol=1e-9, atol=1e-9)
    assert explanation.feature_names == [f"x{2 * g}+x{2 * g + 1}" for g in range(7)]
    if method in ("permutation", "kernel", "leverage"):  # efficient by construction
        np.testing.assert_allclose(
            explanation.values.sum(axis=1) + explanation.base_values, model(X[:2]),
            rtol=1e-9, atol=1e-9)


def test_permutation_with_tol_stops_early_with_error_bars_per_group(rng):
    X = rng.normal(size=(40, 14))
    groups = [[2 * g, 2 * g + 1] for g in range(7)]

    def model(A):
        return _model(A[:, :6]) + A[:, 6:] @ np.arange(1.0, 9.0)

    explainer = ShapleyExplainer(model, method="permutation", max_evals=5000, tol=0.5,
                                 groups=groups, background=10, random_state=0).fit(X)
    explanation = explainer.explain(X[:3])
    assert explanation.std_errors.shape == (3, 7)
    assert (explanation.n_evaluations < 5000).all()
    exact = ShapleyExplainer(model, method="exact", groups=groups, background=10,
                             random_state=0).fit(X).explain(X[:3])
    # tol bounds the 95 % quantile of ||phi_hat - phi||_2; 3 tol is far beyond it
    assert (np.linalg.norm(explanation.values - exact.values, axis=1) < 3 * 0.5).all()


@pytest.mark.parametrize("perturbation", ["interventional", "tree_path_dependent"])
def test_tree_groups_equal_the_exact_method_on_the_group_game(rng, perturbation):
    X = _frame(rng, n=200)
    y = _model(X.values)
    forest = RandomForestRegressor(n_estimators=8, max_depth=5, random_state=0).fit(X, y)
    tree = ShapleyExplainer(forest, prefit=True, groups=GROUPS, background=20,
                            feature_perturbation=perturbation, random_state=0).fit(X)
    assert tree.method_ == "tree"
    explanation = tree.explain(X.iloc[:4])
    assert explanation.values.shape == (4, 3)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               forest.predict(X.iloc[:4]), rtol=0, atol=1e-9)
    if perturbation == "interventional":
        _, column_group = check_groups(GROUPS, list(X.columns))
        for i in range(4):
            phi = _enumerated(lambda A: forest.predict(pd.DataFrame(A, columns=X.columns)),
                              X.values[i], tree.background_, column_group, 3)
            np.testing.assert_allclose(explanation.values[i], phi, rtol=0, atol=1e-9)
    else:
        pairs = tree.explain(X.iloc[:4], interactions=True).interactions
        assert pairs.shape == (4, 3, 3)
        np.testing.assert_allclose(pairs.sum(axis=2), explanation.values, atol=1e-12)


def test_linear_closed_form_on_groups_sums_its_columns(rng):
    X = _frame(rng)
    y = X.values @ np.arange(1.0, 7.0)
    model = make_pipeline(StandardScaler(), Ridge())
    linear = ShapleyExplainer(model, groups=GROUPS, background=20, random_state=0).fit(X, y)
    exact = ShapleyExplainer(model, method="exact", groups=GROUPS, background=20,
                             random_state=0).fit(X, y)
    assert linear.method_ == "linear"
    np.testing.assert_allclose(linear.transform(X.iloc[:5]), exact.transform(X.iloc[:5]),
                               rtol=1e-9, atol=1e-9)


def test_explanation_names_data_and_output_columns_are_per_group(rng):
    X = _frame(rng)
    groups = {"pair": ["c0", "c1"], "c2": "c2", "rest": ["c3", "c4", "c5"]}
    explainer = ShapleyExplainer(lambda A: _model(np.asarray(A)), groups=groups,
                                 background=10, random_state=0).fit(X)
    explanation = explainer.explain(X.iloc[:4])
    assert explanation.feature_names == ["pair", "c2", "rest"]
    # a group of one column keeps its values; no one number stands for a larger group
    np.testing.assert_array_equal(explanation.data[:, 1], X["c2"].values[:4])
    assert np.isnan(explanation.data[:, [0, 2]]).all()
    assert explainer.groups_ == {"pair": ["c0", "c1"], "c2": ["c2"],
                                 "rest": ["c3", "c4", "c5"]}
    assert list(explainer.get_feature_names_out()) == ["pair_shap", "c2_shap", "rest_shap"]
    frame = explainer.set_output(transform="pandas").transform(X.iloc[:4])
    assert list(frame.columns) == ["pair_shap", "c2_shap", "rest_shap"]
    # the players are the groups: "auto" enumerates 2^3 coalitions
    assert explainer.method_ == "exact" and explainer.max_evals_ == 8


def test_groups_by_position_without_column_names(rng):
    X = _frame(rng).values
    explainer = ShapleyExplainer(lambda A: _model(A), groups=[[0, 1], [2, 5], [3, 4]],
                                 background=10, random_state=0).fit(X)
    assert explainer.explain(X[:2]).feature_names == ["x0+x1", "x2+x5", "x3+x4"]
    assert explainer.groups_ == {"x0+x1": [0, 1], "x2+x5": [2, 5], "x3+x4": [3, 4]}


@pytest.mark.parametrize("groups, message", [
    ({"a": ["c0", "c1", "nope"], "b": ["c2", "c3", "c4", "c5"]},
     "unknown column 'nope' in group 'a'"),
    ({"a": ["c0", "c1"], "b": ["c1", "c2", "c3", "c4", "c5"]},
     "puts the column 'c1' in group 'a' and in group 'b'"),
    ({"a": ["c0", "c1", "c2", "c3", "c4", "c5"], "b": []}, "has an empty group 'b'"),
    ({"a": ["c0", "c1"], "b": ["c2"]}, r"leaves the columns \['c3', 'c4', 'c5'\] in no group"),
    ([[0, 1, 2], [3, 4, 9]], "column position 9 in group 1"),
    ({"a": ["c0", "c0"], "b": ["c1", "c2", "c3", "c4", "c5"]},
     "puts the column 'c0' twice in group 'a'"),
])
def test_bad_groups_are_refused_naming_the_columns(rng, groups, message):
    X = _frame(rng)
    explainer = ShapleyExplainer(lambda A: _model(np.asarray(A)), groups=groups)
    with pytest.raises(ValueError, match=message):
        explainer.fit(X)


def test_column_names_need_a_dataframe(rng):
    with pytest.raises(ValueError, match="X has no column names; give positions"):
        ShapleyExplainer(lambda A: _model(A), groups=[["c0"]]).fit(_frame(rng).values)


def test_a_model_trees_cannot_read_falls_back_or_is_refused_as_without_groups(rng):
    X = _frame(rng)
    y = _model(X.values)
    model = KNeighborsRegressor().fit(X, y)
    auto = ShapleyExplainer(model, prefit=True, groups=GROUPS, background=10).fit(X)
    assert auto.method_ == "exact"  # 3 groups: 2^3 coalitions enumerated
    with pytest.raises(ValueError, match="method='tree' cannot explain this model"):
        ShapleyExplainer(model, prefit=True, method="tree", groups=GROUPS).fit(X)


def test_marginal_game_over_a_column_to_player_map_widens_the_masks(rng):
    X = rng.normal(size=(5, 6))
    background = rng.normal(size=(7, 6))
    column_player = np.array([0, 1, 1, 2, 2, 0])
    grouped = MarginalGame(_model, X[:2], background, column_player=column_player)
    columns = MarginalGame(_model, X[:2], background)
    masks = rng.random((9, 3)) < 0.5
    assert grouped.n_players == 3
    np.testing.assert_array_equal(grouped.values(masks), columns.values(masks[:, column_player]))
    with pytest.raises(ValueError, match=r"no column to the players \[1\]"):
        MarginalGame(_model, X[0], background, column_player=[0, 2, 2, 0, 0, 0])


def test_the_user_guide_page_runs():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    text = (ROOT / "doc" / "user_guide" / "groups.rst").read_text()
    blocks = text.split(".. code-block:: python")[1:]
    namespace = {}
    for block in blocks:
        lines = []
        for line in block.splitlines()[1:]:
            if line.strip() and not line.startswith("   "):
                break
            lines.append(line[3:])
        exec(compile("\n".join(lines), "groups.rst", "exec"), namespace)
        plt.close("all")
    assert namespace["explanation"].feature_names[0] == "size"


def test_cli_explain_groups_named_in_the_table_and_the_values(tmp_path, capsys):
    from skshapley.cli import ExitCode, main

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"area": rng.gamma(6.0, 15.0, 200),
                          "district": rng.choice(["north", "south", "east"], 200),
                          "kind": rng.choice(["flat", "house"], 200)})
    frame["price"] = (2 * frame["area"] + np.where(frame["district"] == "north", 40.0, 0.0)
                      + np.where(frame["kind"] == "house", 25.0, 0.0))
    frame.to_csv(tmp_path / "houses.csv", index=False)
    args = ["explain", "--data", str(tmp_path / "houses.csv"), "--target", "price",
            "--rows", "6", "--output", str(tmp_path / "h.png"),
            "--values", str(tmp_path / "v.csv")]
    # text columns grouped: HistGradientBoosting's own categories, TreeSHAP on groups
    assert main([*args, "--groups", '{"place": ["district", "kind"], "area": "area"}']) \
        == ExitCode.OK
    out = capsys.readouterr().out
    assert "method: tree" in out
    assert [line.split()[1] for line in out.splitlines()
            if line.strip()[:1].isdigit()] == ["area", "place"]
    values = pd.read_csv(tmp_path / "v.csv")
    assert list(values.columns) == ["row", "place", "area", "base_value"]
    assert main([*args, "--groups", '[["district", "kind"]]']) == ExitCode.USAGE_ERROR
    assert "leaves the columns ['area'] in no group" in capsys.readouterr().err
    assert main([*args, "--groups", '{"a": "area"']) == ExitCode.USAGE_ERROR
    assert "--groups" in capsys.readouterr().err


def test_cli_explain_groups_of_the_bundled_data_by_name(tmp_path, capsys):
    from skshapley.cli import ExitCode, main

    groups = ('{"body": ["bmi", "bp"], "serum": ["s1", "s2", "s3", "s4", "s5", "s6"], '
              '"age": "age", "sex": "sex"}')
    assert main(["explain", "--rows", "4", "--groups", groups,
                 "--output", str(tmp_path / "d.png")]) == ExitCode.OK
    names = {line.split()[1] for line in capsys.readouterr().out.splitlines()
             if line.strip()[:1].isdigit()}
    assert names == {"body", "serum", "age", "sex"}


def test_groups_in_parallel_workers_give_the_same_values(rng):
    X = rng.normal(size=(30, 14))
    groups = [[2 * g, 2 * g + 1] for g in range(7)]

    def model(A):
        return _model(A[:, :6]) + A[:, 6:] @ np.arange(1.0, 9.0)

    values = [ShapleyExplainer(model, method="permutation", max_evals=100, groups=groups,
                               background=8, random_state=0, n_jobs=n_jobs)
              .fit(X).transform(X[:6]) for n_jobs in (1, 2)]
    np.testing.assert_array_equal(values[0], values[1])
