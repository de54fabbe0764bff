import matplotlib.pyplot as plt
import numpy as np
import pytest

from skshapley import Explanation
from skshapley import plotting


@pytest.fixture
def explanation(rng):
    values = rng.normal(size=(12, 5)) * [5.0, 1.0, 3.0, 0.5, 2.0]
    return Explanation(values, np.full(12, 7.0), rng.normal(size=(12, 5)), list("abcde"),
                       std_errors=np.abs(rng.normal(size=(12, 5))) * 0.1, method="permutation")


def _bars(ax):
    from matplotlib.container import BarContainer

    return next(c for c in ax.containers if isinstance(c, BarContainer))


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_bar_heights_order_and_error_bars(explanation):
    ax = plotting.bar(explanation)
    order = np.argsort(-explanation.mean_abs(), kind="stable")
    heights = [patch.get_width() for patch in ax.patches]
    np.testing.assert_allclose(heights, explanation.mean_abs()[order])
    assert [t.get_text() for t in ax.get_yticklabels()] == [explanation.feature_names[j] for j in order]
    # the error bar's segments span height ± 1.96 * SE of the mean |phi|
    segments = _bars(ax).errorbar.lines[2][0].get_segments()
    half_widths = [(seg[1][0] - seg[0][0]) / 2 for seg in segments]
    np.testing.assert_allclose(half_widths, 1.959964 * explanation.mean_abs_std_errors()[order],
                               rtol=1e-6)


def test_bar_lumps_features_beyond_max_display(explanation):
    ax = plotting.bar(explanation, max_display=3)
    order = np.argsort(-explanation.mean_abs(), kind="stable")
    heights = [patch.get_width() for patch in ax.patches]
    assert len(heights) == 3
    np.testing.assert_allclose(heights[2], explanation.mean_abs()[order[2:]].sum())
    assert ax.get_yticklabels()[2].get_text() == "3 other features"


def test_bar_without_error_bars_for_exact_values(explanation):
    exact = Explanation(explanation.values, explanation.base_values, explanation.data,
                        explanation.feature_names, std_errors=np.zeros((12, 5)))
    ax = plotting.bar(exact)
    assert _bars(ax).errorbar is None


def test_beeswarm_positions_are_the_values(explanation):
    ax = plotting.beeswarm(explanation)
    order = np.argsort(-explanation.mean_abs(), kind="stable")
    for collection, j in zip(ax.collections, order):
        offsets = collection.get_offsets()
        np.testing.assert_allclose(offsets[:, 0], explanation.values[:, j])
    # colours follow the feature value: the row with the largest value gets shade 1
    shades = ax.collections[0].get_array()
    assert shades[np.argmax(explanation.data[:, order[0]])] == 1.0


def test_waterfall_ends_at_the_prediction_and_lumps(explanation):
    ax = plotting.waterfall(explanation, 3, max_display=3)
    last = ax.patches[-1]
    end = last.get_x() + last.get_width()
    np.testing.assert_allclose(end, explanation.predictions[3])
    assert len(ax.patches) == 3
    np.testing.assert_allclose(ax.patches[0].get_x(), 7.0)  # starts at the base value
    with pytest.raises(ValueError, match="'row' parameter must be in"):
        plotting.waterfall(explanation, 12)


def test_multi_output_selects_the_column(rng):
    values = rng.normal(size=(6, 3, 2))
    multi = Explanation(values, np.zeros((6, 2)), rng.normal(size=(6, 3)), list("xyz"),
                        output_names=["no", "yes"])
    ax = plotting.bar(multi, output=1)
    order = np.argsort(-np.abs(values[:, :, 1]).mean(axis=0), kind="stable")
    np.testing.assert_allclose([p.get_width() for p in ax.patches],
                               np.abs(values[:, :, 1]).mean(axis=0)[order])
    assert "output yes" in ax.get_xlabel()
    with pytest.raises(ValueError, match="'output' parameter must be in"):
        plotting.bar(multi, output=2)


def test_summary_and_accessor(explanation, tmp_path):
    figure = explanation.plot.summary()
    assert len(figure.axes) == 3  # bar, beeswarm and its colour bar
    figure.savefig(tmp_path / "s.png")
    assert (tmp_path / "s.png").stat().st_size > 5000
    assert explanation.plot.waterfall(0).get_xlabel().startswith("model output")


def test_convergence_plot():
    ax = plotting.convergence([0.4, 0.2, 0.1], label="antithetic")
    assert ax.get_yscale() == "log"
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [0.4, 0.2, 0.1])
