import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.container import BarContainer, ErrorbarContainer  # noqa: E402
from plot_helpers import Z95, close_figures, sample_explanation  # noqa: E402,F401
from plot_helpers import importance_order as _order  # noqa: E402

from skshapley import Explanation, plotting  # noqa: E402


@pytest.fixture
def explanation(rng):
    return sample_explanation(rng)


def _bars(ax):
    return next(c for c in ax.containers if isinstance(c, BarContainer))


def _error_bars(ax):
    """(centres, half-widths) of the first x-error bars on ax, top row first."""
    container = next(c for c in ax.containers if isinstance(c, ErrorbarContainer)
                     or (isinstance(c, BarContainer) and c.errorbar is not None))
    errorbar = container.errorbar if isinstance(container, BarContainer) else container
    segments = np.array(errorbar.lines[2][0].get_segments())  # (rows, 2 ends, xy)
    return segments[:, :, 0].mean(axis=1), (segments[:, 1, 0] - segments[:, 0, 0]) / 2


def _labels(ax):
    return [t.get_text() for t in ax.get_yticklabels()]


# --- bar ------------------------------------------------------------------------------


def test_bar_heights_are_mean_abs_sorted_with_95_percent_error_bars(explanation):
    ax = plotting.bar(explanation)
    order = _order(explanation)
    assert "".join(_labels(ax)) == "acebd"
    np.testing.assert_allclose([p.get_width() for p in ax.patches],
                               explanation.mean_abs()[order], rtol=1e-12)
    centres, half_widths = _error_bars(ax)
    np.testing.assert_allclose(centres, explanation.mean_abs()[order], rtol=1e-12)
    np.testing.assert_allclose(half_widths, Z95 * explanation.mean_abs_std_errors()[order],
                               rtol=1e-12)
    # the first label is the top row
    assert ax.get_yticks()[0] == max(ax.get_yticks())


def test_bar_ties_keep_the_lower_feature_index_first():
    values = np.array([[1.0, -2.0, 2.0, -1.0], [-1.0, 2.0, -2.0, 1.0]])
    tied = Explanation(values, np.zeros(2), np.zeros((2, 4)), ["w", "x", "y", "z"])
    assert _labels(plotting.bar(tied)) == ["x", "y", "w", "z"]


def test_bar_lumps_features_beyond_max_display(explanation):
    ax = plotting.bar(explanation, max_display=3)
    order = _order(explanation)
    heights = [p.get_width() for p in ax.patches]
    assert _labels(ax) == ["a", "c", "3 other features"]
    np.testing.assert_allclose(heights[2], explanation.mean_abs()[order[2:]].sum(), rtol=1e-12)
    # the lumped bar's error adds the others' errors in quadrature
    _, half_widths = _error_bars(ax)
    se = explanation.mean_abs_std_errors()
    np.testing.assert_allclose(half_widths[2], Z95 * np.sqrt((se[order[2:]] ** 2).sum()),
                               rtol=1e-12)
    # max_display equal to the number of features lumps nothing
    assert len(plotting.bar(explanation, max_display=5).patches) == 5


def test_bar_writes_each_value_beyond_its_error_bar(explanation):
    ax = plotting.bar(explanation, max_display=3)
    heights = np.array([p.get_width() for p in ax.patches])
    _, half_widths = _error_bars(ax)
    texts = ax.texts
    assert [t.get_text() for t in texts] == [f"{h:.3g}" for h in heights]
    np.testing.assert_allclose([t.xy[0] for t in texts], heights + half_widths, rtol=1e-12)
    np.testing.assert_array_equal([t.xy[1] for t in texts], ax.get_yticks())
    # the axis leaves room for the labels
    assert ax.get_xlim()[1] > (heights + half_widths).max()


@pytest.mark.parametrize("std_errors", [None, "zeros"])
def test_bar_has_no_error_bars_without_standard_errors(explanation, std_errors):
    exact = Explanation(explanation.values, explanation.base_values, explanation.data,
                        explanation.feature_names,
                        std_errors=None if std_errors is None else np.zeros((12, 5)))
    ax = plotting.bar(exact)
    assert _bars(ax).errorbar is None
    assert ax.get_title(loc="right") == ""


@pytest.mark.parametrize("max_display", [0, -1, 2.5, "3", True])
def test_max_display_must_be_a_positive_int(explanation, max_display):
    for plot in (plotting.bar, plotting.beeswarm, plotting.waterfall, plotting.heatmap,
                 plotting.decision):
        with pytest.raises(ValueError, match="'max_display' parameter must be an int >= 1"):
            plot(explanation, max_display=max_display)


# --- beeswarm -------------------------------------------------------------------------


def test_beeswarm_x_positions_are_the_values_in_bar_order(explanation):
    ax = plotting.beeswarm(explanation)
    order = _order(explanation)
    assert _labels(ax) == _labels(plotting.bar(explanation))
    rows = ax.get_yticks()
    for collection, j, row in zip(ax.collections, order, rows, strict=True):
        offsets = collection.get_offsets()
        np.testing.assert_array_equal(offsets[:, 0], explanation.values[:, j])
        # the swarm stays within its row (rows are 1 apart)
        assert np.all(np.abs(offsets[:, 1] - row) < 0.4)
    assert [line.get_xdata()[0] for line in ax.get_lines()] == [0.0]  # the line at phi = 0


def test_beeswarm_stacks_points_where_they_are_dense():
    # Five rows share one value, one row is alone: the five take the layers
    # 0, +1, -1, +2, -2 of a step 0.36 / (2 + 1) (the fullest bin spans ±0.36 * 2/3),
    # the lone one sits on the row's line.
    values = np.array([[0.0], [0.0], [0.0], [0.0], [0.0], [10.0]])
    e = Explanation(values, np.zeros(6), np.arange(6.0)[:, None], ["a"])
    offsets = plotting.beeswarm(e).collections[0].get_offsets()[:, 1]
    np.testing.assert_allclose(np.sort(offsets[:5]), np.array([-2, -1, 0, 1, 2]) * 0.12,
                               rtol=1e-12)
    assert offsets[5] == 0.0
    # Values in different bins (100 bins over the range) do not stack.
    spread_out = Explanation(np.linspace(0, 1, 6)[:, None], np.zeros(6), np.zeros((6, 1)),
                             ["a"])
    np.testing.assert_array_equal(
        plotting.beeswarm(spread_out).collections[0].get_offsets()[:, 1], 0.0)


def test_beeswarm_order_within_a_bin_is_seeded():
    values = np.zeros((8, 1))
    e = Explanation(values, np.zeros(8), np.arange(8.0)[:, None], ["a"])
    first = plotting.beeswarm(e).collections[0].get_offsets()[:, 1]
    again = plotting.beeswarm(e).collections[0].get_offsets()[:, 1]
    other = plotting.beeswarm(e, random_state=1).collections[0].get_offsets()[:, 1]
    np.testing.assert_array_equal(first, again)
    # the same layers, taken by other rows
    np.testing.assert_array_equal(np.sort(first), np.sort(other))
    assert not np.array_equal(first, other)


def test_beeswarm_colours_are_feature_values_on_robust_limits(rng):
    n = 200
    data = rng.normal(size=(n, 3))
    data[0, 0] = 1e6  # one outlier: the scale still spans the bulk
    data[:, 1] = rng.random(n) < 0.5  # binary
    data[::10, 2] = np.nan  # missing values
    e = Explanation(rng.normal(size=(n, 3)) * [3.0, 2.0, 1.0], np.zeros(n), data,
                    ["cont", "binary", "gappy"])
    ax = plotting.beeswarm(e)
    cont, binary, gappy = ax.collections
    np.testing.assert_array_equal(cont.get_array(), data[:, 0])  # values, not ranks
    assert (cont.norm.vmin, cont.norm.vmax) == tuple(np.percentile(data[:, 0], [5, 95]))
    assert cont.norm.vmax < 3.0  # the outlier does not stretch the scale
    assert (binary.norm.vmin, binary.norm.vmax) == (0.0, 1.0)
    finite = data[~np.isnan(data[:, 2]), 2]
    assert (gappy.norm.vmin, gappy.norm.vmax) == tuple(np.percentile(finite, [5, 95]))
    # missing values are drawn (a point per row), in grey
    assert len(gappy.get_offsets()) == n
    assert np.ma.getmaskarray(gappy.get_array())[::10].all()
    np.testing.assert_allclose(gappy.cmap.get_bad(), to_rgba("#7f7f7f"))
    colorbar_axes = [a for a in ax.figure.axes if a is not ax]
    assert colorbar_axes[0].get_ylabel() == "feature value: each feature's 5th → 95th percentile"
    assert [t.get_text() for t in colorbar_axes[0].get_yticklabels()] == ["low", "high"]
    assert cont.get_cmap().name.startswith("coolwarm")


def test_beeswarm_colour_bar_of_one_feature_shows_its_values():
    data = np.arange(20.0)[:, None]
    e = Explanation(np.linspace(-1, 1, 20)[:, None], np.zeros(20), data, ["age"])
    ax = plotting.beeswarm(e)
    (colorbar_axes,) = [a for a in ax.figure.axes if a is not ax]
    assert colorbar_axes.get_ylabel() == "age (5th → 95th percentile)"
    np.testing.assert_allclose(colorbar_axes.get_ylim(), np.percentile(data, [5, 95]))
    assert ax.collections[0].colorbar.extend == "both"  # 0 and 19 lie beyond the scale


def test_beeswarm_draws_nominal_features_in_grey():
    codes = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 3.0], [0.0, 4.0]])
    display = np.array([["red", 1.0], ["green", 2.0], ["blue", 3.0], ["red", 4.0]],
                       dtype=object)
    e = Explanation(np.array([[3.0, 0.1], [-2.0, 0.2], [1.0, 0.3], [2.0, 0.4]]),
                    np.zeros(4), codes, ["colour", "size"], display_data=display)
    ax = plotting.beeswarm(e)
    colour, size = ax.collections
    assert colour.get_array() is None  # no colour scale: codes have no order
    np.testing.assert_allclose(colour.get_facecolors()[:, :3], [to_rgba("#7f7f7f")[:3]])
    np.testing.assert_array_equal(size.get_array(), [1.0, 2.0, 3.0, 4.0])
    # the one coloured feature gets the colour bar
    assert ax.figure.axes[-1].get_ylabel() == "size (5th → 95th percentile)"


def test_beeswarm_lumps_the_rest_into_one_row_of_sums(explanation):
    ax = plotting.beeswarm(explanation, max_display=2)
    order = _order(explanation)
    assert _labels(ax) == ["a", "4 other features"]
    np.testing.assert_allclose(ax.collections[1].get_offsets()[:, 0],
                               explanation.values[:, order[1:]].sum(axis=1), rtol=1e-12)


# --- waterfall ------------------------------------------------------------------------


def test_waterfall_walks_from_base_to_prediction(explanation):
    row = 3
    ax = plotting.waterfall(explanation, row)
    phi = explanation.values[row]
    order = np.argsort(-np.abs(phi), kind="stable")
    widths = np.array([p.get_width() for p in ax.patches])
    starts = np.array([p.get_x() for p in ax.patches])
    np.testing.assert_allclose(widths, phi[order], rtol=1e-12)
    assert starts[0] == 7.0  # the base value
    np.testing.assert_allclose(starts[1:], 7.0 + np.cumsum(phi[order])[:-1], rtol=1e-12)
    np.testing.assert_allclose(starts[-1] + widths[-1], explanation.predictions[row],
                               rtol=1e-12)
    # error bars of ±1.96 SE at each bar's end
    centres, half_widths = _error_bars(ax)
    np.testing.assert_allclose(centres, starts + widths, rtol=1e-12)
    np.testing.assert_allclose(half_widths, Z95 * explanation.std_errors[row, order],
                               rtol=1e-12)
    # the axis shows the base line and every error bar
    low, high = ax.get_xlim()
    assert low < min(7.0, (centres - half_widths).min())
    assert high > (centres + half_widths).max()


def test_waterfall_lumps_and_still_ends_at_the_prediction(explanation):
    ax = plotting.waterfall(explanation, -1, max_display=3)
    phi = explanation.values[-1]
    order = np.argsort(-np.abs(phi), kind="stable")
    assert len(ax.patches) == 3 and _labels(ax)[2] == "3 other features"
    np.testing.assert_allclose(ax.patches[2].get_width(), phi[order[2:]].sum(), rtol=1e-12)
    last = ax.patches[-1]
    np.testing.assert_allclose(last.get_x() + last.get_width(), explanation.predictions[-1],
                               rtol=1e-12)
    _, half_widths = _error_bars(ax)
    np.testing.assert_allclose(
        half_widths[2], Z95 * np.sqrt((explanation.std_errors[-1, order[2:]] ** 2).sum()),
        rtol=1e-12)


@pytest.mark.parametrize("row", [12, -13, 1.0])
def test_waterfall_rejects_a_bad_row(explanation, row):
    with pytest.raises(ValueError, match=r"'row' parameter must be an int in \[-12, 11\]"):
        plotting.waterfall(explanation, row)


# --- several outputs ------------------------------------------------------------------


@pytest.fixture
def multi(rng):
    values = rng.normal(size=(6, 3, 2)) * np.array([[1.0, 1.0], [3.0, 0.1], [0.1, 3.0]])
    return Explanation(values, np.array([[1.0, -1.0]] * 6), rng.normal(size=(6, 3)),
                       list("xyz"), std_errors=np.abs(rng.normal(size=(6, 3, 2))) * 0.1,
                       output_names=["no", "yes"])


def test_output_selects_the_column(multi):
    column = multi.values[:, :, 1]
    order = np.argsort(-np.abs(column).mean(axis=0), kind="stable")
    assert list(order[:1]) == [2]  # z matters for "yes", y for "no"
    ax = plotting.bar(multi, output=1)
    np.testing.assert_allclose([p.get_width() for p in ax.patches],
                               np.abs(column).mean(axis=0)[order], rtol=1e-12)
    _, half_widths = _error_bars(ax)
    np.testing.assert_allclose(half_widths, Z95 * multi.mean_abs_std_errors()[order, 1],
                               rtol=1e-12)
    assert "output yes" in ax.get_xlabel()
    swarm = plotting.beeswarm(multi, output=1)
    np.testing.assert_array_equal(swarm.collections[0].get_offsets()[:, 0], column[:, 2])
    fall = plotting.waterfall(multi, 2, output=1)
    last = fall.patches[-1]
    np.testing.assert_allclose(last.get_x() + last.get_width(), -1.0 + column[2].sum(),
                               rtol=1e-12)
    assert _labels(plotting.bar(multi, output=0))[0] == "y"


def test_output_is_chosen_by_name(multi):
    by_name = plotting.bar(multi, output="yes")
    by_index = plotting.bar(multi, output=1)
    assert [p.get_width() for p in by_name.patches] == [p.get_width() for p in by_index.patches]
    np.testing.assert_array_equal(
        plotting.beeswarm(multi, output="yes").collections[0].get_offsets(),
        plotting.beeswarm(multi, output=1).collections[0].get_offsets())
    assert "output yes" in plotting.waterfall(multi, 0, output="yes").get_xlabel()
    assert "output no" in plotting.dependence(multi, "x", output="no").get_ylabel()
    with pytest.raises(ValueError, match=r"'output' parameter 'maybe' is not an output "
                                         r"name; the names are \['no', 'yes'\]"):
        plotting.bar(multi, output="maybe")
    with pytest.raises(ValueError, match="None .every output. is taken only by bar"):
        plotting.beeswarm(multi, output=None)


def test_bar_stacks_every_output_with_summed_error_bars(multi):
    ax = plotting.bar(multi, output=None)
    importance = multi.mean_abs()  # (3 features, 2 outputs)
    order = np.argsort(-importance.sum(axis=1), kind="stable")
    assert _labels(ax) == [list("xyz")[j] for j in order]
    patches = ax.patches
    assert len(patches) == 3 * 2  # a bar per feature and output
    widths = np.array([p.get_width() for p in patches]).reshape(2, 3)  # output-major
    lefts = np.array([p.get_x() for p in patches]).reshape(2, 3)
    np.testing.assert_allclose(widths, importance[order].T, rtol=1e-12)
    np.testing.assert_array_equal(lefts[0], 0.0)
    np.testing.assert_allclose(lefts[1], widths[0], rtol=1e-12)  # stacked
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["no", "yes"]
    assert patches[0].get_facecolor() != patches[3].get_facecolor()  # a colour per output
    centres, half_widths = _error_bars(ax)
    totals = importance[order].sum(axis=1)
    np.testing.assert_allclose(centres, totals, rtol=1e-12)
    # the outputs' errors add (they share draws); Z95 without n_draws
    np.testing.assert_allclose(half_widths,
                               Z95 * multi.mean_abs_std_errors()[order].sum(axis=1),
                               rtol=1e-12)
    assert [t.get_text() for t in ax.texts] == [f"{v:.3g}" for v in totals]


def test_stacked_bar_lumps_the_rest_per_output(multi):
    ax = plotting.bar(multi, output=None, max_display=2)
    importance = multi.mean_abs()
    order = np.argsort(-importance.sum(axis=1), kind="stable")
    assert _labels(ax)[-1] == "2 other features"
    widths = np.array([p.get_width() for p in ax.patches]).reshape(2, 2)
    np.testing.assert_allclose(widths[:, 1], importance[order[1:]].sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("output", [2, -1, 0.5])
def test_output_out_of_range(multi, explanation, output):
    with pytest.raises(ValueError, match=r"'output' parameter must be an int in \[0, 1\]"):
        plotting.bar(multi, output=output)
    with pytest.raises(ValueError, match="'output' parameter must be 0 for a single-output"):
        plotting.beeswarm(explanation, output=output)


# --- summary and convergence ----------------------------------------------------------


def test_summary_puts_bar_and_beeswarm_rows_level(explanation, tmp_path):
    figure = plotting.summary(explanation, max_display=4, title="my title")
    left, right, colorbar = figure.axes
    assert figure._suptitle.get_text() == "my title"
    assert _labels(left) == ["a", "c", "e", "2 other features"]
    np.testing.assert_array_equal(left.get_yticks(), right.get_yticks())
    assert left.get_ylim() == right.get_ylim()
    # the figure places both panels at the same height, so the rows line up on the page
    assert left.get_position().y0 == pytest.approx(right.get_position().y0)
    assert left.get_position().y1 == pytest.approx(right.get_position().y1)
    assert colorbar.get_ylabel() == "feature value: each feature's 5th → 95th percentile"
    figure.savefig(tmp_path / "s.png")
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"


def test_plot_accessor_calls_the_plotting_functions(explanation):
    assert _labels(explanation.plot.bar()) == _labels(plotting.bar(explanation))
    assert explanation.plot.waterfall(0).get_xlabel().startswith("model output: base 7")
    assert len(explanation.plot.summary().axes) == 3


def test_convergence_plot():
    ax = plotting.convergence([0.4, 0.2, 0.1], label="antithetic")
    assert ax.get_yscale() == "log"
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [1, 2, 3])
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [0.4, 0.2, 0.1])
    assert ax.get_legend().get_texts()[0].get_text() == "antithetic"
    plotting.convergence([0.3, 0.1], ax=ax, label="orthogonal")
    assert len(ax.get_lines()) == 2
    with pytest.raises(ValueError, match="'history' parameter must be a 1-d sequence"):
        plotting.convergence([[0.1, 0.2]])


# --- an explanation of no rows ----------------------------------------------------------


@pytest.mark.parametrize("plot", ["bar", "beeswarm", "summary", "waterfall", "dependence",
                                  "heatmap", "decision"])
def test_plots_of_no_rows_say_so(explanation, plot):
    empty = explanation[explanation.data[:, 0] > np.inf]
    assert len(empty) == 0
    arguments = (0,) if plot == "dependence" else ()
    with pytest.raises(ValueError, match=f"'explanation' parameter of {plot} has no rows"):
        getattr(plotting, plot)(empty, *arguments)
