"""Claim: ``TopKShapleySelector`` with its defaults is cheap enough to tune ``k`` in a
grid search: a 5-value grid over ``k`` with ``cv=3`` on breast_cancer (569 x 30)
finishes in under a minute on 2 cores for the everyday models, and every fit says
whether its selection is certified.

Protocol. Pipeline: StandardScaler, ``TopKShapleySelector(model, random_state=0)``, then
the same model. ``GridSearchCV`` over ``select__k`` in {2, 4, 6, 8, 10}, ``cv=3``: 16
selector fits (15 folds and the refit). Reported: seconds of one selector fit on all
rows (``importance_`` and ``method_`` say what "auto" played, with its evaluations and
whether it is certified) and of the whole grid search, one process, wall seconds,
``n_jobs=None``. "before" is the previous default, ``importance="refit"`` with
``max_evals="auto"`` (60 (d + 1) = 1,860 refits): one fit only, of the models named
in ``--before`` (default LogisticRegression; a forest's 1,860 refits take many
minutes), and the grid is 16 times that. Refuted if a grid search over an everyday model (linear, trees) takes a minute.

Run: python benchmarks/bench_topk_cost.py [--before NAME,NAME]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

from _report import start_report


def _models():
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC

    return {
        "LogisticRegression": LogisticRegression(max_iter=1000),
        "RandomForestClassifier(100)": RandomForestClassifier(n_estimators=100,
                                                              random_state=0),
        "HistGradientBoostingClassifier": HistGradientBoostingClassifier(random_state=0),
        "SVC": SVC(),
        "KNeighborsClassifier": KNeighborsClassifier(),
    }


def _pipeline(model, **selector):
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from skshapley import TopKShapleySelector

    return Pipeline([("scale", StandardScaler()),
                     ("select", TopKShapleySelector(clone(model), random_state=0, **selector)),
                     ("model", clone(model))])


def main(argv=None):
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import GridSearchCV

    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="LogisticRegression",
                        help="models whose fit with the previous default is timed "
                             "(comma-separated; minutes each)")
    parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__),
                                                         "results", "topk_cost.md"))
    args = parser.parse_args(argv)
    lines, log = start_report("TopKShapleySelector: the cost of a fit and of a grid search",
                              __doc__, "bench_topk_cost.py", argv)
    log(f"Load average at start: {os.getloadavg()[0]:.1f} (2 cores)")
    log()
    X, y = load_breast_cancer(return_X_y=True)
    log("| model | importance_ (auto) | method_ | evaluations | certified | one fit (s) "
        "| grid 5 x cv=3 (s) | before: one fit (s) |")
    log("|---|---|---|---|---|---|---|---|")
    for name, model in _models().items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            pipe = _pipeline(model).fit(X, y)
            one = time.perf_counter() - start
            selector = pipe["select"]
            start = time.perf_counter()
            GridSearchCV(_pipeline(model), {"select__k": [2, 4, 6, 8, 10]}, cv=3).fit(X, y)
            grid = time.perf_counter() - start
            before = ""
            if name in args.before.split(","):
                start = time.perf_counter()
                _pipeline(model, importance="refit").fit(X, y)
                before = f"{time.perf_counter() - start:.1f}"
        log(f"| {name} | {selector.importance_} | {selector.method_} | "
            f"{selector.n_evaluations_} | {'yes' if selector.converged_ else 'no'} | "
            f"{one:.2f} | {grid:.1f} | {before} |")
    log()
    log(f"Load average at end: {os.getloadavg()[0]:.1f}")
    with open(args.output, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
