"""Every plot renders to a non-empty PNG, and the new plots draw the numbers they claim."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from scipy import stats  # noqa: E402

from skshapley import Explanation, MomentQuantileTransformer, plotting  # noqa: E402
from skshapley.approximators import permutation_shapley  # noqa: E402
from skshapley.attribution import lsspa  # noqa: E402
from skshapley.games import UnanimityGame  # noqa: E402
from skshapley.plotting import _dependence  # noqa: E402
from skshapley.sketch import MomentSketch  # noqa: E402

Z95 = 1.959963984540054


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture
def explanation(rng):
    data = rng.normal(size=(40, 4))
    values = data * [3.0, -1.0, 0.5, 2.0] + 0.3 * data[:, [1]] * data[:, [0]]
    return Explanation(values, np.full(40, 1.5), data, ["age", "bmi", "bp", "s5"],
                       std_errors=np.full((40, 4), 0.05), method="permutation")


@pytest.fixture(scope="module")
def sampled_result():
    game = UnanimityGame([[1, 1, 0, 0, 0], [0, 1, 1, 1, 0], [0, 0, 0, 1, 1]],
                         [1.0, 2.0, -1.5])
    return permutation_shapley(game, budget=2 + 4 * 400, sampler="mc", check_interval=20,
                               random_state=0)


def assert_png_is_a_picture(figure, path):
    """Saved, readable, and not one flat colour."""
    figure.savefig(path, dpi=80)
    image = mpimg.imread(path)
    assert image.shape[0] > 100 and image.shape[1] > 100
    assert image[..., :3].std() > 0.05  # a blank canvas has std 0
    # Some pixels are coloured (lines, bars), not only black text on white.
    rgb = image[..., :3]
    assert (rgb.max(axis=-1) - rgb.min(axis=-1) > 0.2).mean() > 0.001


def test_every_plot_renders_to_a_non_empty_png(explanation, sampled_result, tmp_path, rng):
    X = rng.lognormal(size=(3000, 2))
    transformer = MomentQuantileTransformer(small_n=0).fit(X)
    X_train, X_test = rng.normal(size=(200, 3)), rng.normal(size=(100, 3))
    y_train = X_train @ [1.0, 0.5, 0.0] + rng.normal(size=200)
    y_test = X_test @ [1.0, 0.5, 0.0] + rng.normal(size=100)
    attribution = lsspa(X_train, X_test, y_train, y_test)
    multi_output = Explanation(rng.normal(size=(30, 4, 3)), np.zeros((30, 3)),
                               rng.normal(size=(30, 4)), list("abcd"),
                               std_errors=np.full((30, 4, 3), 0.05),
                               output_names=["setosa", "versicolor", "virginica"])
    drawings = {
        "bar": lambda: plotting.bar(explanation).figure,
        "beeswarm": lambda: plotting.beeswarm(explanation).figure,
        "waterfall": lambda: plotting.waterfall(explanation, 3).figure,
        "summary": lambda: plotting.summary(explanation),
        "dependence": lambda: plotting.dependence(explanation, "age", color_by="bmi").figure,
        "dependence_auto": lambda: plotting.dependence(explanation, "age").figure,
        "heatmap": lambda: plotting.heatmap(explanation).figure,
        "decision": lambda: plotting.decision(explanation).figure,
        "decision_one_row": lambda: plotting.decision(explanation, 2).figure,
        "bar_stacked": lambda: plotting.bar(multi_output, output=None).figure,
        "convergence_values": lambda: plotting.convergence(sampled_result).figure,
        "convergence_error": lambda: plotting.convergence(sampled_result, kind="error",
                                                          label="mc").figure,
        "quantile_sketch": lambda: plotting.quantile_sketch(transformer, X, feature=1).figure,
        "attribution_bar": lambda: plotting.attribution_bar(attribution).figure,
    }
    for name, draw in drawings.items():
        assert_png_is_a_picture(draw(), tmp_path / f"{name}.png")


def test_a_blank_figure_fails_the_png_check(tmp_path):
    figure = plt.figure()
    with pytest.raises(AssertionError):
        assert_png_is_a_picture(figure, tmp_path / "blank.png")


# --- dependence -----------------------------------------------------------------------
def _histogram_axes(ax):
    (below,) = [a for a in ax.figure.axes
                if a is not ax and a.get_shared_x_axes().joined(a, ax)]
    return below


def test_dependence_points_are_value_against_phi_with_95_percent_bars(explanation):
    ax = plotting.dependence(explanation, 3)
    offsets = ax.collections[-1].get_offsets()
    np.testing.assert_array_equal(offsets[:, 0], explanation.data[:, 3])
    np.testing.assert_array_equal(offsets[:, 1], explanation.values[:, 3])
    segments = np.array(ax.containers[0].lines[2][0].get_segments())  # (rows, 2, xy)
    np.testing.assert_allclose((segments[:, 1, 1] - segments[:, 0, 1]) / 2, Z95 * 0.05)
    # the x axis is labelled under the histogram
    assert _histogram_axes(ax).get_xlabel() == "s5" and ax.get_ylabel() == "SHAP value of s5"


def test_dependence_draws_a_histogram_of_the_feature_underneath(explanation):
    ax = plotting.dependence(explanation, "age", color_by=None)
    below = _histogram_axes(ax)
    assert len(ax.figure.axes) == 2  # the scatter and the histogram, no colour bar
    heights = [p.get_height() for p in below.patches]
    assert sum(heights) == 40  # every row counted once
    edges = sorted({p.get_x() for p in below.patches})
    assert edges[0] == explanation.data[:, 0].min()
    np.testing.assert_allclose(below.patches[0].get_facecolor(), to_rgba("lightgrey"))
    # below the scatter, smaller, and the scatter's x tick labels are left to it
    ax.figure.canvas.draw()  # the divider places the axes when drawing
    assert below.get_position().y1 <= ax.get_position().y0
    assert below.get_position().height < ax.get_position().height / 3
    assert not any(t.get_visible() and t.get_text() for t in ax.get_xticklabels())
    no_histogram = plotting.dependence(explanation, "age", color_by=None, histogram=False)
    assert len(no_histogram.figure.axes) == 1 and no_histogram.get_xlabel() == "age"


def test_dependence_histogram_counts_rows_with_a_missing_value_at_their_slot(explanation):
    data = explanation.data.copy()
    data[::4, 0] = np.nan
    e = Explanation(explanation.values, explanation.base_values, data,
                    explanation.feature_names)
    below = _histogram_axes(plotting.dependence(e, "age", color_by=None))
    missing_bar = below.patches[-1]
    assert missing_bar.get_height() == 10
    slot = plotting.dependence(e, "age", color_by=None).collections[-1].get_offsets()[0, 0]
    assert missing_bar.get_x() + missing_bar.get_width() / 2 == pytest.approx(slot)
    assert sum(p.get_height() for p in below.patches) == 40


def test_dependence_colours_by_the_values_of_another_feature(explanation):
    ax = plotting.dependence(explanation, "age", color_by="bmi")
    points = ax.collections[-1]
    np.testing.assert_array_equal(points.get_array(), explanation.data[:, 1])
    assert (points.norm.vmin, points.norm.vmax) == tuple(
        np.percentile(explanation.data[:, 1], [5, 95]))
    colorbar_axes = ax.figure.axes[-1]
    assert colorbar_axes.get_ylabel() == "bmi"
    np.testing.assert_allclose(colorbar_axes.get_ylim(),
                               np.percentile(explanation.data[:, 1], [5, 95]))
    assert points.colorbar.extend == "both"


def test_dependence_colours_by_the_strongest_interaction_by_default(rng):
    # phi_0 = x0 (1 + 2 x2): at equal x0, x2 explains the spread; x1 is noise.
    data = rng.normal(size=(300, 4))
    values = np.column_stack([data[:, 0] * (1 + 2 * data[:, 2]), data[:, 1],
                              0.5 * data[:, 2], 0.1 * data[:, 3]])
    e = Explanation(values, np.zeros(300), data, ["a", "b", "c", "d"])
    ax = plotting.dependence(e, "a")
    assert ax.figure.axes[-1].get_ylabel() == "c"
    np.testing.assert_array_equal(ax.collections[-1].get_array(), data[:, 2])
    # SHAP interaction values, where the explanation has them, decide instead
    interactions = np.zeros((300, 4, 4))
    interactions[:, 0, 3] = interactions[:, 3, 0] = 0.7
    with_interactions = Explanation(values, np.zeros(300), data, ["a", "b", "c", "d"],
                                    interactions=interactions)
    assert plotting.dependence(with_interactions, "a").figure.axes[-1].get_ylabel() == "d"
    # color_by=None: one colour, no colour bar
    plain = plotting.dependence(e, "a", color_by=None)
    assert plain.collections[-1].get_array() is None and len(plain.figure.axes) == 2


def test_the_interaction_heuristic_picks_what_shap_picks(rng):
    shap = pytest.importorskip("shap")
    data = rng.normal(size=(500, 5))
    values = data * [1.0, 0.5, 0.2, 0.3, 0.1]
    values[:, 0] += 0.8 * data[:, 0] * data[:, 3] + 0.3 * data[:, 0] * data[:, 1]
    values[:, 2] += data[:, 2] * data[:, 4]
    e = Explanation(values, np.zeros(500), data, list("abcde"))
    for j in range(5):
        expected = shap.utils.approximate_interactions(j, values, data)[0]
        ours = _dependence._strongest_interaction(e, values, j, 0)
        assert ours == expected, j


def test_dependence_colours_a_nominal_feature_by_category():
    codes = np.array([[0.1, 0.0], [0.2, 1.0], [0.3, 2.0], [0.4, 0.0], [0.5, np.nan]])
    display = np.array([[0.1, "red"], [0.2, "green"], [0.3, "blue"], [0.4, "red"],
                        [0.5, None]], dtype=object)
    e = Explanation(np.arange(10.0).reshape(5, 2), np.zeros(5), codes, ["size", "colour"],
                    display_data=display)
    ax = plotting.dependence(e, "size", color_by="colour")
    points = ax.collections[-1]
    # categories in order of appearance; the missing one masked (grey)
    np.testing.assert_array_equal(points.get_array().filled(-1), [0, 1, 2, 0, -1])
    colorbar_axes = ax.figure.axes[-1]
    assert [t.get_text() for t in colorbar_axes.get_yticklabels()] == ["red", "green", "blue"]
    assert colorbar_axes.get_ylabel() == "colour"


def test_dependence_without_errors_draws_no_error_bars(explanation):
    exact = Explanation(explanation.values, explanation.base_values, explanation.data,
                        explanation.feature_names)
    assert not plotting.dependence(exact, 0).containers


def test_dependence_draws_rows_with_a_missing_value_left_of_the_others(explanation):
    # Every 4th row has no value of "age"; its phi (4.0) is the largest: dropping those
    # rows would hide the biggest effect.
    data = explanation.data.copy()
    data[::4, 0] = np.nan
    values = explanation.values.copy()
    values[::4, 0] = 4.0
    e = Explanation(values, explanation.base_values, data, explanation.feature_names,
                    std_errors=explanation.std_errors)
    ax = plotting.dependence(e, "age")
    offsets = np.asarray(ax.collections[-1].get_offsets())
    assert offsets.shape == (40, 2) and np.isfinite(offsets).all()  # a point per row
    np.testing.assert_array_equal(offsets[:, 1], values[:, 0])
    present = data[~np.isnan(data[:, 0]), 0]
    # a tenth of the present values' range left of the smallest
    slot = present.min() - 0.1 * (present.max() - present.min())
    np.testing.assert_allclose(offsets[::4, 0], slot, rtol=1e-12)
    np.testing.assert_array_equal(offsets[1::4, 0], data[1::4, 0])
    (labels,) = ax.child_axes
    assert [t.get_text() for t in labels.get_xticklabels()] == ["missing (10)"]
    np.testing.assert_allclose(labels.get_xticks(), [slot], rtol=1e-12)


def test_dependence_puts_a_missing_category_one_slot_left_of_the_codes():
    codes = np.array([[0.0], [1.0], [np.nan], [2.0]])
    e = Explanation(np.array([[0.1], [0.2], [0.9], [0.3]]), np.zeros(4), codes, ["colour"],
                    display_data=np.array([["red"], ["green"], ["violet"], ["blue"]],
                                          dtype=object))
    ax = plotting.dependence(e, 0)
    np.testing.assert_array_equal(ax.collections[-1].get_offsets()[:, 0], [0, 1, -1, 2])
    below = _histogram_axes(ax)
    assert [t.get_text() for t in below.get_xticklabels()] == ["red", "green", "blue"]
    assert [p.get_height() for p in below.patches] == [1, 1, 1, 1]  # and 1 missing
    assert [t.get_text() for t in ax.child_axes[0].get_xticklabels()] == ["missing (1)"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"feature": "weight"}, "'feature' parameter 'weight' is not a feature name"),
    ({"feature": 4}, r"'feature' parameter must be a feature name or an int in \[-4, 3\]"),
    ({"feature": 0, "color_by": True}, "'color_by' parameter must be"),
])
def test_dependence_rejects_unknown_features(explanation, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plotting.dependence(explanation, **kwargs)


# --- convergence ----------------------------------------------------------------------
def test_permutation_results_keep_estimate_and_errors_at_each_check(sampled_result):
    evaluations = np.asarray(sampled_result.history_evaluations)
    # 20 orderings of 4 evaluations per check, plus v(∅) and v(N) once.
    np.testing.assert_array_equal(evaluations, 2 + 80 * np.arange(1, 21))
    assert evaluations[-1] == sampled_result.n_evaluations
    np.testing.assert_allclose(sampled_result.history_values[-1], sampled_result.values,
                               rtol=1e-12)
    np.testing.assert_allclose(sampled_result.history_std_errors[-1],
                               sampled_result.std_errors, rtol=1e-12)
    # The standard errors shrink like 1/sqrt(n): 20 times the orderings, ~4.5x smaller.
    ratio = sampled_result.history_std_errors[0] / sampled_result.history_std_errors[-1]
    assert np.all((ratio > 2.5) & (ratio < 8.0))


def test_convergence_values_draws_estimates_in_bands(sampled_result):
    ax = plotting.convergence(sampled_result, max_display=2, feature_names=list("abcde"))
    lines = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
    # The two largest final values: player 1 (1 + 2/3) then player 2 (2/3)... by |phi|.
    final = np.abs(sampled_result.values)
    expected = np.argsort(-final, kind="stable")[:2]
    assert [line.get_label() for line in lines] == [list("abcde")[j] for j in expected]
    history = np.asarray(sampled_result.history_values)
    errors = np.asarray(sampled_result.history_std_errors)
    np.testing.assert_array_equal(lines[0].get_ydata(), history[:, expected[0]])
    band = ax.collections[0].get_paths()[0].vertices
    top = history[:, expected[0]] + Z95 * errors[:, expected[0]]
    np.testing.assert_allclose(band[:, 1].max(), top.max())


def test_convergence_error_kind_is_against_evaluations(sampled_result):
    ax = plotting.convergence(sampled_result, kind="error", label="mc")
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(),
                                  sampled_result.history_evaluations)
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), sampled_result.history)
    assert ax.get_yscale() == "log" and ax.get_xlabel() == "coalition evaluations"


@pytest.mark.parametrize(("kwargs", "message"), [
    # 5 players: one name is too few, and the error names feature_names, not players
    ({"feature_names": ["a"]},
     r"'feature_names' parameter of convergence must have one name per feature \(5\); got 1"),
    ({"output": 1}, "'output' parameter of convergence must be 0 for a single-output"),
])
def test_convergence_rejects_names_and_outputs_the_result_lacks(sampled_result, kwargs,
                                                                message):
    with pytest.raises(ValueError, match=message):
        plotting.convergence(sampled_result, **kwargs)


def test_attribution_bar_rejects_feature_names_of_the_wrong_length():
    from types import SimpleNamespace

    result = SimpleNamespace(attribution=np.array([0.1, 0.5, 0.2]),
                             attribution_errors=np.zeros(3))
    with pytest.raises(ValueError, match=r"'feature_names' parameter of attribution_bar "
                                         r"must have one name per feature \(3\); got 2"):
        plotting.attribution_bar(result, feature_names=["a", "b"])


def test_convergence_of_an_exact_result_says_there_is_no_history():
    from skshapley.approximators import exact_shapley

    result = exact_shapley(UnanimityGame([[1, 1, 0]]), budget=8)
    with pytest.raises(ValueError, match="has no convergence history"):
        plotting.convergence(result)
    with pytest.raises(ValueError, match="'kind' parameter must be"):
        plotting.convergence([0.1, 0.2], kind="both")


# --- quantile sketch --------------------------------------------------------------------
def test_quantile_sketch_reports_the_ks_distance(rng):
    X = rng.exponential(size=(4000, 2))
    transformer = MomentQuantileTransformer(small_n=0).fit(X)
    ax = plotting.quantile_sketch(transformer, X, feature=1, n_points=2001)
    sketch_line = ax.get_lines()[1]
    p = np.linspace(0, 1, 2001)
    np.testing.assert_allclose(sketch_line.get_xdata(), transformer.quantiles(p)[:, 1])
    column = np.sort(X[:, 1])
    sketch_cdf = np.interp(column, transformer.quantiles(p)[:, 1], p)
    ks = stats.kstest(column, lambda x: np.interp(x, column, sketch_cdf)).statistic
    gap = float(ax.get_title().split("= ")[1])
    assert gap == pytest.approx(ks, abs=1e-4)
    assert 0 < gap < 0.02  # an exponential column is sketched within 2 % of its CDF


def test_quantile_sketch_accepts_a_sketch_and_dataframe_names(rng):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": rng.normal(size=3000), "b": rng.normal(size=3000)})
    sketch = MomentSketch(order=10, small_n=0).update(frame.to_numpy())
    ax = plotting.quantile_sketch(sketch, frame, feature="b")
    assert ax.get_xlabel() == "b"
    with pytest.raises(TypeError, match="must be a fitted MomentQuantileTransformer"):
        plotting.quantile_sketch(object(), frame)
    with pytest.raises(ValueError, match="'feature' parameter 'c' is not a feature name"):
        plotting.quantile_sketch(sketch, frame, feature="c")


def test_the_plot_accessor_draws_dependence(explanation):
    ax = explanation.plot.dependence("bmi", color_by="age")
    np.testing.assert_array_equal(ax.collections[-1].get_offsets()[:, 1],
                                  explanation.values[:, 1])
