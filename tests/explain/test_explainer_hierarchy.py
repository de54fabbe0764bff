"""ShapleyExplainer with a hierarchy in ``groups``: Owen values of the interventional
game, checked against the definition (the mean marginal contribution over the orderings
that keep every cluster together), computed here by brute force."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.cluster.hierarchy import linkage
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge

from skshapley import ShapleyExplainer
from skshapley.utils._hierarchy import from_linkage, from_nested


def _model(X):
    X = np.asarray(X, dtype=np.float64)
    return X[:, 0] * X[:, 1] + np.sin(X[:, 2]) * X[:, 4] + X[:, 3] ** 2 - X[:, 4]


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 5))
    X[:, 1] = X[:, 0] + 0.1 * rng.normal(size=80)  # a correlated pair
    X[:, 4] = -X[:, 3] + 0.3 * rng.normal(size=80)  # an anti-correlated pair
    return pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])


def _orders(h, node=None):
    node = h.root if node is None else node
    if node < h.n_leaves:
        return [[node]]
    out = []
    for kids in itertools.permutations(h.kids(node)):
        for parts in itertools.product(*(_orders(h, kid) for kid in kids)):
            out.append(sum(parts, []))
    return out


def _owen_by_definition(model, x, background, h):
    p = h.n_leaves
    phi = np.zeros(p)
    orders = _orders(h)
    for order in orders:
        rows = background.copy()
        before = model(rows).mean()
        for player in order:
            rows[:, player] = x[player]
            after = model(rows).mean()
            phi[player] += after - before
            before = after
    return phi / len(orders)


@pytest.mark.parametrize("kind", ["correlation", "linkage", "nested"])
def test_owen_values_equal_the_definition(frame, kind):
    names = list(frame.columns)
    groups = {"correlation": "correlation",
              "linkage": linkage(frame.to_numpy().T, method="complete"),
              "nested": [[["a", "b"], "c"], ["d", "e"]]}[kind]
    explainer = ShapleyExplainer(_model, groups=groups, background=12,
                                 random_state=0).fit(frame)
    explanation = explainer.explain(frame.iloc[:3])
    assert explainer.method_ == "hierarchical" and explanation.method == "hierarchical"
    h = (from_nested(explainer.hierarchy_, names) if kind != "linkage"
         else from_linkage(groups, 5))
    for i in range(3):
        expected = _owen_by_definition(_model, frame.to_numpy()[i], explainer.background_, h)
        np.testing.assert_allclose(explanation.values[i], expected, atol=1e-12)
    np.testing.assert_array_equal(explanation.std_errors, 0.0)  # enumerated
    assert explanation.feature_names == names
    assert any("Owen values" in note for note in explanation.notes)


def test_correlation_clusters_the_correlated_columns_first(frame):
    explainer = ShapleyExplainer(_model, groups="correlation", background=10).fit(frame)

    def pairs(node):
        if not isinstance(node, list):
            return []
        own = [set(node)] if all(not isinstance(x, list) for x in node) else []
        return own + [p for x in node for p in pairs(x)]

    assert {"a", "b"} in pairs(explainer.hierarchy_)
    assert {"d", "e"} in pairs(explainer.hierarchy_)  # |r|: anti-correlated too
    explanation = explainer.explain(frame.iloc[:2])
    assert explanation.clustering.shape == (4, 4)
    assert explanation[:, ["a", "b"]].clustering is None  # a selection drops it
    shap = pytest.importorskip("shap")
    assert isinstance(explanation.to_shap(), shap.Explanation)
    np.testing.assert_array_equal(explanation.to_shap().clustering, explanation.clustering)


def test_sampled_owen_values_have_error_bars_that_hold(frame):
    # four more columns the model ignores, in a chain: enumeration needs 2^9 coalitions
    wide = frame.assign(**{f"z{j}": np.arange(len(frame)) % (j + 2) for j in range(4)})
    chain = [[[[[[[["a", "b"], "c"], "d"], "e"], "z0"], "z1"], "z2"], "z3"]

    def model(X):
        # three-way terms: an antithetic pair of orderings (every cluster flipped) then
        # does not see all the contexts that matter, and the pairs vary
        X = np.asarray(X, dtype=np.float64)
        return _model(X) + X[:, 0] * X[:, 2] * X[:, 4] + X[:, 1] * X[:, 3] * X[:, 2]

    exact = ShapleyExplainer(model, groups=chain, background=12, random_state=0,
                             method="exact").fit(wide).explain(wide.iloc[:4])
    sampled = ShapleyExplainer(model, groups=chain, background=12, random_state=0,
                               method="permutation", max_evals=2 + 8 * 40).fit(wide)
    assert not sampled.plan_.options["exact"]
    explanation = sampled.explain(wide.iloc[:4])
    # (d and e meet one cluster that matters each, which a pair sees both ways: exact)
    assert (explanation.std_errors[:, :3] > 0).all()
    np.testing.assert_array_equal(explanation.values[:, 5:], 0.0)  # null players
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               model(wide.iloc[:4]), atol=1e-10)
    bars = explanation.error_bars()
    # 20 values at 95 %: a wrong centre or a too narrow bar fails
    inside = np.abs(explanation.values - exact.values)[:, :5] <= bars[:, :5] + 1e-12
    assert inside.mean() >= 0.8
    with_tol = ShapleyExplainer(model, groups=chain, background=12, random_state=0,
                                max_evals=500, tol=1.0).fit(wide).explain(wide.iloc[:4])
    assert (with_tol.n_evaluations < 500).all()
    # each row stopped at an estimated 95 % quantile of ||phi_hat - phi||_2 below tol
    np.testing.assert_array_less(np.linalg.norm(with_tol.values - exact.values, axis=1), 1.0)


def test_a_flat_hierarchy_gives_shapley_values(frame):
    flat = [[["a"], ["b"], ["c"], ["d"], ["e"]]]
    owen = ShapleyExplainer(_model, groups=flat, background=10, random_state=0).fit(frame)
    shapley = ShapleyExplainer(_model, method="exact", background=10,
                               random_state=0).fit(frame)
    np.testing.assert_allclose(owen.explain(frame.iloc[:3]).values,
                               shapley.explain(frame.iloc[:3]).values, atol=1e-12)


def test_models_with_closed_forms_are_explained_by_sampling_not_refused(frame):
    y = _model(frame)
    for model in (Ridge().fit(frame, y), RandomForestRegressor(n_estimators=5,
                                                               random_state=0).fit(frame, y)):
        explainer = ShapleyExplainer(model, prefit=True, groups="correlation",
                                     background=10).fit(frame)
        assert explainer.method_ == "hierarchical"
        explanation = explainer.explain(frame.iloc[:2])
        np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                                   model.predict(frame.iloc[:2]), atol=1e-9)


@pytest.mark.parametrize("params, message", [
    ({"method": "kernel"}, "method must be one of"),
    ({"method": "tree"}, "computes Shapley values"),
    ({"sampler": "orthogonal"}, "leave sampler='auto'"),
    ({"method": "exact", "max_evals": 10}, "max_evals=10 is too small for method='exact'"),
    ({"groups": np.zeros((2, 4))}, r"shape \(2, 4\)"),
    ({"groups": [[["a", "b"]], [["c", "zz"]]]}, "unknown column 'zz'"),
    ({"groups": [[["a", "b"]], [["c", "d"]]]}, r"leaves the columns \['e'\]"),
])
def test_bad_hierarchies_and_methods_are_refused_by_name(frame, params, message):
    params = {"groups": "correlation", **params}
    with pytest.raises(ValueError, match=message):
        ShapleyExplainer(_model, background=10, **params).fit(frame)


def test_an_unknown_string_is_refused(frame):
    with pytest.raises(ValueError, match="correlation"):
        ShapleyExplainer(_model, groups="clusters").fit(frame)


def test_a_failed_fit_leaves_the_fitted_explainer_unchanged(frame):
    explainer = ShapleyExplainer(_model, groups="correlation", background=10).fit(frame)
    before = explainer.hierarchy_
    explainer.set_params(groups=[[["a", "b"]], [["c", "zz"]]])
    with pytest.raises(ValueError):
        explainer.fit(frame)
    assert explainer.hierarchy_ == before and explainer.method_ == "hierarchical"


def test_the_values_of_shaps_partition_explainer_at_its_full_budget(frame):
    # shap's PartitionExplainer computes Owen values over a binary clustering; given
    # budget enough for every node it must agree with our enumeration
    shap = pytest.importorskip("shap")
    Z = linkage(frame.to_numpy().T, method="complete")
    background = frame.to_numpy()[:15]
    ours = ShapleyExplainer(_model, groups=Z, background=background,
                            method="exact").fit(frame).explain(frame.iloc[:3])
    explainer = shap.PartitionExplainer(_model, shap.maskers.Partition(background,
                                                                       clustering=Z))
    theirs = explainer(frame.to_numpy()[:3], max_evals=10_000)
    np.testing.assert_allclose(ours.values, theirs.values, atol=1e-10)


def test_cli_explain_with_a_correlation_hierarchy(tmp_path, capsys):
    from skshapley.cli import ExitCode, main

    # the bundled data (diabetes) and a linear model, whose closed form gives Shapley
    # values: with a hierarchy the Owen values are enumerated instead
    code = main(["explain", "--rows", "3", "--background", "20", "--groups", "correlation",
                 "--model", "sklearn.linear_model:Ridge",
                 "--output", str(tmp_path / "plot.png")])
    out = capsys.readouterr().out
    assert code == ExitCode.OK
    assert "method: hierarchical" in out
