import sys
import types

import numpy as np
import pytest

from skshapley import Explanation


@pytest.fixture
def explanation():
    values = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]])
    return Explanation(values, np.array([0.5, 0.5]), np.arange(6.0).reshape(2, 3), ["a", "b", "c"],
                       std_errors=np.array([[0.1, 0.2, 0.0], [0.3, 0.0, 0.4]]),
                       n_evaluations=np.array([8, 8]), method="permutation")


def test_predictions_and_importance(explanation):
    np.testing.assert_allclose(explanation.predictions, [0.0, 2.5])
    np.testing.assert_allclose(explanation.mean_abs(), [2.0, 1.0, 0.75])
    np.testing.assert_allclose(explanation.mean_abs_std_errors(),
                               [np.sqrt(0.1**2 + 0.3**2) / 2, 0.1, 0.2])


def test_row_selection(explanation):
    row = explanation[1]
    assert len(row) == 1 and row.values.tolist() == [[3.0, 0.0, -1.0]]
    assert row.std_errors.tolist() == [[0.3, 0.0, 0.4]] and row.n_evaluations.tolist() == [8]


def test_feature_names_must_match():
    with pytest.raises(ValueError, match="values has 2 features but feature_names has 3"):
        Explanation(np.zeros((1, 2)), np.zeros(1), np.zeros((1, 2)), ["a", "b", "c"])


def test_to_shapiq(explanation):
    pytest.importorskip("shapiq")
    converted = explanation.to_shapiq(row=1)
    assert converted[(0,)] == 3.0 and converted[(2,)] == -1.0 and converted[()] == 0.5
    assert converted.estimated and converted.estimation_budget == 8


# --- input shapes -----------------------------------------------------------------------


def _explanation(**changes):
    """Two rows, three features; ``changes`` replace the arguments."""
    arguments = dict(values=np.ones((2, 3)), base_values=np.zeros(2), data=np.ones((2, 3)),
                     feature_names=list("abc"))
    arguments.update(changes)
    return Explanation(**arguments)


@pytest.mark.parametrize(("changes", "message"), [
    ({"values": np.ones(3)}, r"'values' parameter of Explanation must be 2-d \(n, d\) or "
                             r"3-d \(n, d, k\); got shape \(3,\)"),
    ({"base_values": np.zeros(3)}, r"'base_values' parameter .* \(2,\) for values of shape "
                                   r"\(2, 3\); got shape \(3,\)"),
    ({"std_errors": np.ones((2, 2))}, r"'std_errors' parameter .* got shape \(2, 2\)"),
    ({"data": np.ones((4, 7))}, r"'data' parameter .* \(n, d\): \(2, 3\) .* got shape \(4, 7\)"),
    ({"display_data": np.ones((2, 2))}, r"'display_data' parameter .* got shape \(2, 2\)"),
    ({"n_evaluations": [8]}, r"'n_evaluations' parameter .* \(2,\) .* got shape \(1,\)"),
    ({"n_draws": [5, 5, 5]}, r"'n_draws' parameter .* got shape \(3,\)"),
    ({"interactions": np.ones((2, 3, 2))}, r"'interactions' parameter .* \(2, 3, 3\)"),
    ({"output_names": ["no", "yes"]}, r"'output_names' parameter .* one name per output "
                                      r"\(1\); got 2"),
])
def test_inconsistent_shapes_name_the_parameter(changes, message):
    with pytest.raises(ValueError, match=message):
        _explanation(**changes)


def test_a_scalar_base_value_is_every_rows():
    e = _explanation(base_values=1.5)
    np.testing.assert_array_equal(e.base_values, [1.5, 1.5])
    np.testing.assert_array_equal(e[1].predictions, [4.5])  # 1.5 + 3 * 1
    multi = Explanation(np.ones((2, 3, 2)), 0.5, np.ones((2, 3)), list("abc"))
    np.testing.assert_array_equal(multi.predictions, [[3.5, 3.5], [3.5, 3.5]])


def test_column_selection_says_rows_only(explanation):
    with pytest.raises(ValueError, match=r"Explanation selects rows only .* e\.values\[:, j\]"):
        explanation[:, 0]


@pytest.mark.parametrize("method", ["mean_abs", "mean_abs_std_errors"])
def test_summaries_of_no_rows_say_so(explanation, method):
    empty = explanation[np.zeros(2, dtype=bool)]
    with pytest.raises(ValueError, match=r"needs at least one row; this explanation has no"):
        getattr(empty, method)()


# --- conversions ------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "std_errors", "estimated"), [
    ("tree", np.zeros((2, 3)), False),  # TreeSHAP is exact
    ("rkhs-interventional (exact)", np.zeros((2, 3)), False),
    ("exact", None, False),
    ("permutation", np.zeros((2, 3)), True),  # an estimator, even where no error shows
    ("rkhs-observational (kernel)", np.zeros((2, 3)), True),
    (None, np.zeros((2, 3)), False),
    (None, np.full((2, 3), 0.1), True),
    (None, None, True),  # nothing tells: shapiq's default
])
def test_to_shapiq_marks_only_estimates_as_estimated(method, std_errors, estimated):
    pytest.importorskip("shapiq")
    e = _explanation(method=method, std_errors=std_errors, n_evaluations=[0, 0])
    assert e.to_shapiq(1).estimated is estimated


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"row": 5}, r"'row' parameter of to_shapiq must be an int in \[-2, 1\] .* got 5"),
    ({"output": 2}, r"'output' parameter of to_shapiq must be an int in \[0, 1\] .* got 2"),
])
def test_to_shapiq_rejects_rows_and_outputs_out_of_range(kwargs, message):
    pytest.importorskip("shapiq")
    multi = Explanation(np.ones((2, 3, 2)), np.zeros((2, 2)), np.ones((2, 3)), list("abc"))
    with pytest.raises(ValueError, match=message):
        multi.to_shapiq(**kwargs)


def test_to_shap_passes_the_interactions_diagonal_as_main_effects(rng, monkeypatch):
    # shap.Explanation has no field for the whole matrix, only main_effects (its exact
    # explainer's diagonal). A stand-in records the fields and spares the import (~2 s).
    def explanation_fields(*, values, base_values, data, feature_names, output_names,
                           lower_bounds, upper_bounds, display_data, main_effects):
        return main_effects

    monkeypatch.setitem(sys.modules, "shap", types.SimpleNamespace(
        Explanation=explanation_fields))
    interactions = rng.normal(size=(2, 3, 3, 2))
    e = Explanation(interactions.sum(axis=2), np.zeros((2, 2)), np.ones((2, 3)), list("abc"),
                    interactions=interactions)
    # main_effects[i, j, o] = interactions[i, j, j, o]
    np.testing.assert_array_equal(e.to_shap(), np.einsum("ijjo->ijo", interactions))
    assert _explanation().to_shap() is None
