"""plotting.heatmap and plotting.decision: what they draw, read back from the artists."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.container import ErrorbarContainer  # noqa: E402
from plot_helpers import Z95, close_figures, sample_explanation  # noqa: E402,F401
from plot_helpers import importance_order as _order  # noqa: E402

from skshapley import Explanation, plotting  # noqa: E402


@pytest.fixture
def explanation(rng):
    return sample_explanation(rng)


def _labels(ax):
    return [t.get_text() for t in ax.get_yticklabels()]


def _axes_sharing(ax, axis):
    shared = ax.get_shared_x_axes() if axis == "x" else ax.get_shared_y_axes()
    return [a for a in ax.figure.axes if a is not ax and shared.joined(a, ax)]


# --- heatmap ------------------------------------------------------------------------------


def test_heatmap_by_prediction_is_the_value_matrix_with_f_of_x_on_top(explanation):
    ax = plotting.heatmap(explanation, order="prediction", max_display=3)
    features = _order(explanation)
    rows = np.argsort(explanation.predictions, kind="stable")
    image = np.asarray(ax.images[0].get_array())
    assert _labels(ax) == ["a", "c", "3 other features"]
    expected = np.vstack([explanation.values[rows][:, features[:2]].T,
                          explanation.values[rows][:, features[2:]].sum(axis=1)])
    np.testing.assert_allclose(image, expected, rtol=1e-12)
    (top,) = _axes_sharing(ax, "x")
    f_of_x, base_line = top.get_lines()
    np.testing.assert_array_equal(f_of_x.get_xdata(), np.arange(12))
    np.testing.assert_allclose(f_of_x.get_ydata(), explanation.predictions[rows], rtol=1e-12)
    assert np.all(np.diff(f_of_x.get_ydata()) >= 0)
    assert base_line.get_ydata()[0] == 7.0  # the base value, dashed
    assert "by prediction" in ax.get_xlabel()


def test_heatmap_colours_are_symmetric_around_zero(explanation):
    ax = plotting.heatmap(explanation)
    low, high = ax.images[0].get_clim()
    shown = np.asarray(ax.images[0].get_array())
    assert low == -high == -np.percentile(np.abs(shown), 99)
    colorbar_axes = ax.figure.axes[-1]
    assert colorbar_axes.get_ylabel() == "SHAP value"
    assert ax.images[0].colorbar.extend == "both"  # the top 1 % of |phi| is clipped


def test_heatmap_bars_are_mean_abs_with_95_percent_error_bars(explanation):
    ax = plotting.heatmap(explanation)
    (side,) = _axes_sharing(ax, "y")
    order = _order(explanation)
    np.testing.assert_allclose([p.get_width() for p in side.patches],
                               explanation.mean_abs()[order], rtol=1e-12)
    np.testing.assert_array_equal([p.get_y() + p.get_height() / 2 for p in side.patches],
                                  ax.get_yticks())
    errorbar = next(c for c in side.containers if isinstance(c, ErrorbarContainer))
    segments = np.array(errorbar.lines[2][0].get_segments())
    np.testing.assert_allclose((segments[:, 1, 0] - segments[:, 0, 0]) / 2,
                               Z95 * explanation.mean_abs_std_errors()[order], rtol=1e-12)


def test_heatmap_clustering_puts_rows_explained_alike_together(rng):
    # Two groups of rows with opposite values, interleaved: clustering separates them.
    signs = np.tile([1.0, -1.0], 10)
    values = signs[:, None] * [3.0, 1.0] + 0.01 * rng.normal(size=(20, 2))
    e = Explanation(values, np.zeros(20), np.zeros((20, 2)), ["a", "b"])
    ax = plotting.heatmap(e)
    first_row = np.asarray(ax.images[0].get_array())[0]
    assert np.count_nonzero(np.diff(np.sign(first_row))) == 1  # one group, then the other
    assert sorted(np.round(first_row).tolist()) == sorted(np.round(values[:, 0]).tolist())
    again = np.asarray(plotting.heatmap(e).images[0].get_array())
    np.testing.assert_array_equal(again[0], first_row)  # deterministic


def test_heatmap_takes_row_indices_and_rejects_bad_orders(explanation):
    ax = plotting.heatmap(explanation, order=[3, 0, 5])
    np.testing.assert_allclose(np.asarray(ax.images[0].get_array())[0],
                               explanation.values[[3, 0, 5], _order(explanation)[0]])
    with pytest.raises(ValueError, match="'order' parameter of heatmap must be 'clustering'"):
        plotting.heatmap(explanation, order="size")
    with pytest.raises(ValueError, match=r"'rows' parameter of heatmap must be .* row "
                                         r"indices in \[-12, 11\]; got \[12\]"):
        plotting.heatmap(explanation, order=[12])


# --- decision -----------------------------------------------------------------------------


def test_decision_lines_walk_from_base_to_prediction(explanation):
    ax = plotting.decision(explanation, max_display=3)
    order = _order(explanation)
    assert _labels(ax) == ["a", "c", "3 other features"]
    (lines,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    paths = lines.get_segments()
    assert len(paths) == 12
    for row, path in enumerate(paths):
        phi = explanation.values[row]
        # bottom to top: the lumped rest, then c, then a
        steps = [phi[order[2:]].sum(), phi[order[1]], phi[order[0]]]
        np.testing.assert_allclose(path[:, 0], 7.0 + np.cumsum([0.0, *steps]), rtol=1e-12)
        np.testing.assert_array_equal(path[:, 1], [-0.5, 0.5, 1.5, 2.5])
        assert path[-1, 0] == pytest.approx(explanation.predictions[row], rel=1e-12)
    # coloured by prediction, with a colour bar
    np.testing.assert_allclose(lines.get_array(), explanation.predictions, rtol=1e-12)
    assert ax.figure.axes[-1].get_ylabel() == "prediction"
    assert [line.get_xdata()[0] for line in ax.get_lines()] == [7.0]  # the base value


def test_decision_of_one_row_draws_95_percent_error_bars_on_each_step(explanation):
    ax = plotting.decision(explanation, rows=4)
    order = _order(explanation)[::-1]  # walked from the least important up
    (path,) = [c for c in ax.collections if isinstance(c, LineCollection)][0].get_segments()
    segments = np.array(ax.containers[0].lines[2][0].get_segments())
    np.testing.assert_allclose(segments[:, :, 0].mean(axis=1), path[1:, 0], rtol=1e-12)
    np.testing.assert_allclose((segments[:, 1, 0] - segments[:, 0, 0]) / 2,
                               Z95 * explanation.std_errors[4, order], rtol=1e-12)
    assert len(ax.figure.axes) == 1  # one line: no colour bar
    low, high = ax.get_xlim()
    assert low < (segments[:, 0, 0]).min() and high > (segments[:, 1, 0]).max()


def test_decision_selects_rows(explanation):
    masked = plotting.decision(explanation, rows=explanation.predictions > 7.0)
    assert len(masked.collections[0].get_segments()) == int((explanation.predictions > 7).sum())
    sliced = plotting.decision(explanation, rows=slice(2, 5))
    np.testing.assert_allclose([p[-1, 0] for p in sliced.collections[0].get_segments()],
                               explanation.predictions[2:5], rtol=1e-12)
    with pytest.raises(ValueError, match="'rows' parameter of decision must be"):
        plotting.decision(explanation, rows=[0.5])


def test_decision_and_heatmap_choose_an_output_by_name(rng):
    values = rng.normal(size=(6, 3, 2))
    multi = Explanation(values, np.zeros((6, 2)), rng.normal(size=(6, 3)), list("xyz"),
                        output_names=["setosa", "virginica"])
    paths = plotting.decision(multi, output="virginica").collections[0].get_segments()
    np.testing.assert_allclose([p[-1, 0] for p in paths], values[:, :, 1].sum(axis=1),
                               rtol=1e-12)
    ax = plotting.heatmap(multi, output="virginica", order="prediction")
    assert ax.figure.axes[-1].get_ylabel() == "SHAP value (output virginica)"


def test_the_plot_accessor_draws_heatmap_and_decision(explanation):
    assert explanation.plot.heatmap().images
    assert len(explanation.plot.decision(rows=[0, 1]).collections[0].get_segments()) == 2
