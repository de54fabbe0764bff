"""The opening every results file shares, a logger that prints and keeps lines, and the
repeat timer."""

from __future__ import annotations

import time

from sklearn.base import BaseEstimator, RegressorMixin


def timed(function, repeats=3, statistic=min):
    """``statistic`` (min: the best; or a median) of the seconds of ``repeats`` calls of
    ``function`` after one warm-up call (JIT, caches)."""
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(statistic(times))


def best_time(function, repeats=3):
    """Fastest of ``repeats`` calls of ``function`` after a warm-up call."""
    return timed(function, repeats)


def start_report(title, doc, script, argv):
    """Lines of a results file so far — title, the script's claim and protocol (its
    docstring without the first paragraph and the "Run:" note), machine and versions,
    command — and ``log(text)``, which prints a line and appends it."""
    import skshapley

    lines = [f"# {title}", "", doc.split("\n\n", 1)[1].rsplit("\n\nRun:", 1)[0], "",
             "## Machine and versions", "", skshapley.show_versions(as_markdown=True), "",
             "## Command", "", f"``python benchmarks/{script} {' '.join(argv or [])}``", ""]

    def log(text=""):
        print(text, flush=True)
        lines.append(text)

    return lines, log


class CountingModel(RegressorMixin, BaseEstimator):
    """A fitted regressor whose ``predict`` counts the rows it is asked for."""

    def __init__(self, model):
        self.model = model
        self.rows = 0
        self.fitted_ = True  # for check_is_fitted under prefit=True

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        self.rows += len(X)
        return self.model.predict(X)

    __call__ = predict
