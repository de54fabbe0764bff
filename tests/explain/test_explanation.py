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


# --- shap's habits: selections and summaries (issue 29) -----------------------------------


@pytest.fixture
def multi(rng):
    """Four rows, three features, two outputs, with every per-row field."""
    return Explanation(rng.normal(size=(4, 3, 2)), rng.normal(size=(4, 2)),
                       rng.normal(size=(4, 3)), ["age", "sex", "bmi"],
                       std_errors=rng.uniform(0.1, 1.0, size=(4, 3, 2)),
                       output_names=["no", "yes"], n_evaluations=[8, 9, 10, 11],
                       n_draws=[3, 5, 0, 7], method="permutation",
                       interactions=rng.normal(size=(4, 3, 3, 2)),
                       display_data=np.arange(12).reshape(4, 3).astype(object))


def test_a_feature_by_name_drops_the_feature_axis(multi):
    bmi = multi[:, "bmi"]
    np.testing.assert_array_equal(bmi.values, multi.values[:, 2])  # (4, 2)
    np.testing.assert_array_equal(bmi.std_errors, multi.std_errors[:, 2])
    np.testing.assert_array_equal(bmi.data, multi.data[:, 2])
    np.testing.assert_array_equal(bmi.display_data, multi.display_data[:, 2])
    np.testing.assert_array_equal(bmi.base_values, multi.base_values)
    np.testing.assert_array_equal(bmi.n_evaluations, multi.n_evaluations)
    assert bmi.feature_names == ["bmi"] and bmi.output_names == ["no", "yes"]
    assert bmi.interactions is None and bmi.shape == (4, 2) and len(bmi) == 4
    # the same feature by position, negative too
    np.testing.assert_array_equal(multi[:, -1].values, bmi.values)


def test_lists_of_names_keep_their_order_on_every_field(multi):
    picked = multi[:, ["bmi", "age"]]
    assert picked.feature_names == ["bmi", "age"]
    np.testing.assert_array_equal(picked.values, multi.values[:, [2, 0]])
    np.testing.assert_array_equal(picked.data, multi.data[:, [2, 0]])
    # the interactions of the kept features with each other, on both axes
    np.testing.assert_array_equal(picked.interactions,
                                  multi.interactions[:, [2, 0]][:, :, [2, 0]])
    np.testing.assert_array_equal(multi[:, [True, False, True]].values,
                                  multi.values[:, [0, 2]])


def test_rows_by_int_slice_and_mask_with_a_feature(multi):
    mask = np.array([True, False, True, True])
    picked = multi[mask, "sex"]
    np.testing.assert_array_equal(picked.values, multi.values[mask, 1])
    np.testing.assert_array_equal(picked.base_values, multi.base_values[mask])
    np.testing.assert_array_equal(picked.n_draws, [3, 0, 7])
    assert multi[1:3].n_evaluations.tolist() == [9, 10]
    one = multi[2]  # an int row stays a one-row explanation
    assert one.shape == (1, 3, 2) and one.n_evaluations.tolist() == [10]
    np.testing.assert_array_equal(one.predictions, multi.predictions[2:3])


def test_an_output_by_name_is_a_single_output_explanation(multi):
    yes = multi[:, :, "yes"]
    np.testing.assert_array_equal(yes.values, multi.values[:, :, 1])
    np.testing.assert_array_equal(yes.base_values, multi.base_values[:, 1])
    np.testing.assert_array_equal(yes.interactions, multi.interactions[..., 1])
    assert yes.output_names == ["yes"]
    np.testing.assert_allclose(yes.predictions, multi.predictions[:, 1], rtol=1e-15)
    np.testing.assert_array_equal(multi[:, :, 1].values, yes.values)


def test_abs_mean_is_the_global_importance_with_its_errors(multi):
    summary = multi.abs.mean(0)
    np.testing.assert_allclose(summary.values, multi.mean_abs(), rtol=1e-15)
    np.testing.assert_allclose(summary.std_errors, multi.mean_abs_std_errors(), rtol=1e-15)
    assert summary.feature_names == ["age", "sex", "bmi"] and summary.shape == (3, 2)
    assert summary.data is None and summary.interactions is None
    assert int(summary.n_evaluations) == 38  # all rows' evaluations
    # error bars: the widest row's multiplier, t with 3 - 1 degrees of freedom (4.303),
    # as plotting.bar draws them
    np.testing.assert_allclose(summary.error_bars(), 4.302653 * summary.std_errors,
                               rtol=1e-6)
    np.testing.assert_allclose(multi.abs.values, np.abs(multi.values))
    np.testing.assert_array_equal(multi.abs.std_errors, multi.std_errors)


def test_sum_max_and_min_over_rows(multi):
    np.testing.assert_allclose(multi.sum(0).values, multi.values.sum(axis=0))
    np.testing.assert_allclose(multi.sum(0).std_errors,
                               np.sqrt((multi.std_errors**2).sum(axis=0)))
    np.testing.assert_array_equal(multi.abs.max(0).values, np.abs(multi.values).max(axis=0))
    np.testing.assert_array_equal(multi.min(0).values, multi.values.min(axis=0))
    assert multi.max(0).std_errors is None
    # one feature's mean |phi|, per output
    np.testing.assert_allclose(multi[:, "bmi"].abs.mean(0).values,
                               np.abs(multi.values[:, 2]).mean(axis=0))
    with pytest.raises(ValueError, match=r"mean\(\) summarises the rows .* axis=1"):
        multi.mean(1)


def test_predictions_only_where_the_values_add_up(multi):
    # mean and sum keep efficiency: the mean (sum) prediction
    np.testing.assert_allclose(multi.mean(0).predictions, multi.predictions.mean(axis=0))
    np.testing.assert_allclose(multi.sum(0).predictions, multi.predictions.sum(axis=0))
    # all features in another order still add up
    np.testing.assert_allclose(multi[:, ["bmi", "sex", "age"]].predictions, multi.predictions)
    for part, what in [(multi[:, ["age", "bmi"]], "those of some features"),
                       (multi.abs, r"absolute values \(e\.abs\)"),
                       (multi.max(0), "the max over rows")]:
        with pytest.raises(ValueError, match=f"values of this explanation are {what}"):
            _ = part.predictions


@pytest.mark.parametrize(("key", "error", "message"), [
    ((slice(None), "weight"), ValueError,
     r"'weight' is not one of the features of this explanation, \['age', 'sex', 'bmi'\]"),
    ((slice(None), 3), IndexError, r"Index 3 is out of range for the 3 features"),
    ((slice(None), slice(None), "maybe"), ValueError, r"'maybe' is not one of the outputs"),
    ((0, 0, 0, 0), IndexError, r"at most 3 indices, one per axis \(rows, features, outputs\)"),
    ("age", ValueError, r"rows of this explanation have no names"),
    ((slice(None), 1.5), TypeError, r"features of an explanation are selected by ints, names"),
])
def test_bad_selections_say_what_is_selectable(multi, key, error, message):
    with pytest.raises(error, match=message):
        multi[key]


def test_a_summary_has_no_rows_to_plot_or_count(multi):
    summary = multi.abs.mean(0)
    with pytest.raises(TypeError, match=r"has no rows: it is the mean over 4 rows of "
                                        r"\|values\|"):
        len(summary)
    with pytest.raises(ValueError, match=r"The plots draw rows of features"):
        _ = summary.plot
    with pytest.raises(ValueError, match=r"mean\(0\) needs rows"):
        summary.mean(0)
    with pytest.raises(ValueError, match=r"to_shapiq converts a row of features"):
        summary.to_shapiq()


def test_selections_and_summaries_agree_with_shap(multi):
    shap = pytest.importorskip("shap")
    theirs = shap.Explanation(multi.values, multi.base_values, multi.data,
                              feature_names=multi.feature_names)
    mask = np.array([True, False, True, True])
    for ours, reference in [
        (multi[:, "bmi"], theirs[:, "bmi"]),
        (multi[:, ["bmi", "age"]], theirs[:, ["bmi", "age"]]),
        (multi[mask, "sex"], theirs[mask, "sex"]),
        (multi[1:3, :, 1], theirs[1:3, :, 1]),
        (multi.abs.mean(0), theirs.abs.mean(0)),
        (multi.abs.max(0), theirs.abs.max(0)),
        (multi.sum(0), theirs.sum(0)),
    ]:
        np.testing.assert_array_equal(ours.values, reference.values)
        np.testing.assert_array_equal(ours.base_values, reference.base_values)
    assert multi[:, "bmi"].to_shap().feature_names == "bmi"


def test_repr_names_shape_outputs_method_and_base_value():
    e = Explanation(np.ones((4, 3, 2)), np.tile([0.25, 0.75], (4, 1)), np.ones((4, 3)),
                    ["age", "sex", "bmi"], output_names=["no", "yes"], method="tree")
    assert repr(e) == ("<Explanation: 4 rows x 3 features x 2 outputs; outputs ['no', 'yes']; "
                       "method='tree'; base value [0.25, 0.75]>")
    assert repr(e[:, "bmi", "yes"]) == ("<Explanation: 4 rows x feature 'bmi'; output 'yes'; "
                                        "method='tree'; base value 0.75>")
    assert repr(e.abs.mean(0)) == ("<Explanation: 3 features x 2 outputs, the mean over 4 "
                                   "rows of |values|; outputs ['no', 'yes']; method='tree'; "
                                   "base value [0.25, 0.75]>")
    varied = Explanation(np.ones((2, 1)), np.array([1.0, 3.0]), np.ones((2, 1)), ["a"])
    assert repr(varied) == "<Explanation: 2 rows x 1 feature; method=None; base values 1 to 3>"


def test_html_repr_is_a_table_of_the_first_rows_and_features(rng):
    values = rng.normal(size=(7, 10))
    e = Explanation(values, np.zeros(7), np.zeros((7, 10)), [f"f{j}" for j in range(10)],
                    std_errors=np.full((7, 10), 0.25))
    html = e._repr_html_()
    assert html.count("<tr>") == 1 + 5 + 1  # header, 5 rows, "... (2 more)"
    assert "<th>f7</th><th>... (2 more)</th></tr>" in html and "<th>f8</th>" not in html
    assert f"<td>{values[0, 0]:.4g} &plusmn; 0.25</td>" in html
    assert "&lt;Explanation: 7 rows x 10 features" in html
    summary = e.abs.mean(0)._repr_html_()
    assert f"<td>{np.abs(values[:, 0]).mean():.4g} &plusmn; " in summary


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


def test_to_shap_of_one_named_output_slices_rows_as_shap_does():
    # A binary classifier's one output, named: shap read a list of names as an outputs
    # axis and left converted[0].base_values (n,), so shap.plots.waterfall failed.
    pytest.importorskip("shap")
    e = Explanation(np.array([[1.0, -2.0], [3.0, 0.0]]), np.array([0.5, 0.25]),
                    np.zeros((2, 2)), ["age", "bmi"], output_names=["log-odds(1)"])
    row = e.to_shap()[1]
    assert float(row.base_values) == 0.25
    np.testing.assert_array_equal(row.values, [3.0, 0.0])
