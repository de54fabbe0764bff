"""The gallery: every examples/plot_*.py runs (slow); the two fastest run by default.

Each example runs in this process with matplotlib's Agg backend and ``plt.show``
replaced by a check that the figure it would show has drawn something.
"""

import pathlib
import runpy
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
# Measured with sphinx-gallery on 2 shared cores: 1.2 s and 2.2 s; the others take 3-8 s
# (tree interactions up to ~50 s when the machine is busy). The top-k selector's example
# (2.5 s here at a load of 10 on 2 cores) runs by default since it once took 95-145 s.
FAST = ["plot_pipeline_categorical.py", "plot_lsspa_linear.py", "plot_topk_selector.py"]
ALL = sorted(path.name for path in EXAMPLES.glob("plot_*.py"))


@pytest.fixture(autouse=True)
def one_openmp_thread():
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def _run(name, monkeypatch):
    shown = []

    def show(*args, **kwargs):
        figure = plt.gcf()
        assert figure.axes and any(ax.has_data() for ax in figure.axes), name
        shown.append(figure)

    monkeypatch.setattr(plt, "show", show)
    start = time.perf_counter()
    try:
        runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    finally:
        plt.close("all")
    assert shown, f"{name} never calls plt.show()"
    return time.perf_counter() - start


def test_every_example_is_in_the_list():
    assert set(FAST) <= set(ALL) and len(ALL) >= 8


@pytest.mark.parametrize("name", FAST)
def test_fast_examples_run(name, monkeypatch, capsys):
    _run(name, monkeypatch)
    assert capsys.readouterr().out  # each example prints what it found


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
def test_every_example_runs_in_under_30_seconds(name, monkeypatch):
    seconds = _run(name, monkeypatch)
    assert seconds < 30, f"{name} took {seconds:.1f} s"
