"""A shap user's first hour: five everyday tasks in skshapley, shap and shapiq.

Claim: each of the five things a shap user does first takes no more code in skshapley
than in shap and shapiq, gives the same values where the values are exact, a smaller
error than the peers at the same budget where they are sampled (with error bars that
cover), and runs about as fast. Refuted, task by task, by more lines than a peer, a
value more than rounding (1e-6) from the reference on an exact task, a larger error at
500 evaluations per row, error bars that cover much less than 95 % of the errors, or
seconds well above a peer's.

The tasks. (1) An XGBoost classifier on breast_cancer, path-dependent TreeSHAP values
(shap's default game) of 100 rows. (2) A Pipeline of a ColumnTransformer (OneHotEncoder
on two text columns, StandardScaler on three numeric ones) and a LogisticRegression, on
a seeded synthetic frame of 1,000 rows; interventional values of 20 rows in the five
original columns, on 100 background rows, for the decision function. shap's maskers do
not take text, so its recipe masks category codes and rebuilds the frame in a wrapper;
a second shap recipe explains the encoded columns with ``LinearExplainer`` and sums them
per original column (exact for a linear model only). (3) Pairwise interaction values of
the model of task 1 (path-dependent), 100 rows: shap's ``shap_interaction_values``,
shapiq's ``TreeExplainer(index="SII", max_order=2)``. (4) A StandardScaler + SVC on the
first 12 columns of breast_cancer, its decision function explained at 500 evaluations
per row (each on the same 50 background rows) for 10 rows: ``ShapleyExplainer(max_evals=
500)`` with its standard errors, shap's ``PermutationExplainer`` (``max_evals=500``) and
``KernelExplainer`` (``nsamples=500``), shapiq's ``TabularExplainer`` (its default
approximator for Shapley values, KernelSHAP, ``budget=500``). (5) The top-k features in
a ``GridSearchCV`` over k in {3, 5, 10} (3 folds) of a Pipeline selector + XGBoost
classifier on breast_cancer: ``TopKShapleySelector``, and for shap the shortest honest
equivalent, a selector class that ranks by mean |TreeSHAP| of the model refit on the
fold. shapiq has no selector (and no error bars in task 4).

Code. Each recipe is a string that is both executed and counted: "lines" are its
non-blank lines, written one statement per line within 100 characters, after a shared
setup (imports of numpy, scikit-learn and the model's library, the data, the unfitted
model) that every recipe of the task gets. XGBoost runs with ``n_jobs=1``: its threads
spin against the other processes of this shared machine (a 5 x spread between repeats).

Times. Each recipe runs in fresh ``python -c`` processes with ``NUMBA_CACHE_DIR`` set to
a new empty folder: "first run" is the first process (numba compiles what it caches),
"cold" a second process on that folder, "warm" the recipe run again in the cold process
(the setup re-run untimed, so the model is fitted again). A time is the recipe alone:
the library's import, the fit and the explanation; the shared setup (imports of numpy,
pandas, scikit-learn, XGBoost and the data) is timed apart. One process each, so times
carry the noise of the machine's load (given at each cold run).

Values. Reference, task by task: (1, 3) shap's values (exact TreeSHAP; ours agree with
them to float32 rounding), with the spread over rows of sum(values) - margin, which is
0 for exact path-dependent values (efficiency: the base value is one number); shapiq's
SII of a pair is twice shap's entry (i, j) (shap splits a pair over (i, j) and (j, i)),
so its off-diagonal entries are compared halved; (2, 4) exact interventional values by
enumerating all 2^d coalitions on the background rows in this script (no library). In
task 4 the errors are max and root mean square over rows and features, and the error
bars' coverage is the share of |error| <= 1.96 standard errors. (5) The chosen k, the
mean CV accuracy, and how many of the chosen features are among the top k by mean
|TreeSHAP| of the model fitted on all rows.

Run: python benchmarks/bench_first_hour.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from math import factorial
from string import Template

import numpy as np
from _report import start_report

# The shared setup of each task: data, unfitted model; $-fields are sizes (--quick).
SETUPS = {
    "tree": """
        import numpy as np
        import xgboost
        from sklearn.datasets import load_breast_cancer
        X, y = load_breast_cancer(return_X_y=True)
        rows = X[:$n_rows]
        model = xgboost.XGBClassifier(n_estimators=100, max_depth=4, random_state=0, n_jobs=1)
    """,
    "pipeline": """
        import numpy as np
        import pandas as pd
        from sklearn.compose import make_column_transformer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OneHotEncoder, StandardScaler
        rng = np.random.default_rng(0)
        n = 1000
        X = pd.DataFrame({"age": rng.normal(40, 10, n).round(),
                          "income": rng.lognormal(10, 0.5, n),
                          "tenure": rng.exponential(5, n),
                          "plan": rng.choice(["basic", "plus", "pro"], n, p=[0.5, 0.3, 0.2]),
                          "region": rng.choice(["north", "south", "east", "west"], n)})
        logit = (0.05 * (X.age - 40) + 0.8 * np.log(X.income / 22000) - 0.2 * X.tenure
                 + X.plan.map({"basic": -1.0, "plus": 0.0, "pro": 1.5})
                 + 0.7 * (X.region == "south"))
        y = (logit + rng.logistic(size=n) > 0).astype(int)
        background, rows = X[:100], X[-$n_rows:]
        encoder = make_column_transformer((OneHotEncoder(), ["plan", "region"]),
                                          remainder=StandardScaler())
        model = make_pipeline(encoder, LogisticRegression())
    """,
    "svc": """
        import numpy as np
        from sklearn.datasets import load_breast_cancer
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import SVC
        X, y = load_breast_cancer(return_X_y=True)
        X = X[:, :12]
        background, rows = X[:50], X[-$n_rows:]
        model = make_pipeline(StandardScaler(), SVC())
    """,
    "select": """
        import numpy as np
        import xgboost
        from sklearn.datasets import load_breast_cancer
        from sklearn.model_selection import GridSearchCV
        from sklearn.pipeline import make_pipeline
        X, y = load_breast_cancer(return_X_y=True)
        model = xgboost.XGBClassifier(n_estimators=100, max_depth=3, random_state=0, n_jobs=1)
        grid = $grid
    """,
}

# shap's and shapiq's maskers take numbers: the frame's text columns as category codes,
# and a wrapper that rebuilds the frame for the pipeline.
_CODES_WRAPPER = """
        categorical = ["plan", "region"]
        categories = {c: X[c].astype("category").cat.categories for c in categorical}
        codes = X.assign(**{c: pd.Categorical(X[c], categories[c]).codes for c in categorical})
        def predict(a):
            frame = pd.DataFrame(a, columns=X.columns)
            for c in categorical:
                frame[c] = categories[c][frame[c].astype(int)]
            return model.decision_function(frame)
"""

# (task number, setup, library, recipe, code); the code leaves `values` (task 5:
# `search`) and, where the library gives them, standard errors in `errors`.
RECIPES = [
    (1, "tree", "skshapley", "ShapleyExplainer (tree_path_dependent)", """
        from skshapley import ShapleyExplainer
        explainer = ShapleyExplainer(model, feature_perturbation="tree_path_dependent")
        values = explainer.fit(X, y).explain(rows).values
    """),
    (1, "tree", "shap", "TreeExplainer", """
        import shap
        model.fit(X, y)
        values = shap.TreeExplainer(model)(rows).values
    """),
    (1, "tree", "shapiq", "TreeExplainer (index='SV', max_order=1)", """
        import shapiq
        model.fit(X, y)
        explainer = shapiq.TreeExplainer(model, index="SV", max_order=1)
        values = np.array([e.get_n_order_values(1) for e in explainer.explain_X(rows)])
    """),
    (2, "pipeline", "skshapley", "ShapleyExplainer on the frame", """
        from skshapley import ShapleyExplainer
        explainer = ShapleyExplainer(model, background=background).fit(X, y)
        values = explainer.explain(rows).values
    """),
    (2, "pipeline", "shap", "Explainer on category codes + wrapper", """
        import shap
        model.fit(X, y)
    """ + _CODES_WRAPPER + """
        masker = shap.maskers.Independent(codes.loc[background.index])
        values = shap.Explainer(predict, masker)(codes.loc[rows.index]).values
    """),
    (2, "pipeline", "shap", "LinearExplainer on encoded columns, summed per column", """
        import shap
        model.fit(X, y)
        encode, names = model[0].transform, model[0].get_feature_names_out()
        encoded = shap.LinearExplainer(model[-1], encode(background))(encode(rows)).values
        owner = [next(c for c in X.columns if c in name) for name in names]
        values = pd.DataFrame(encoded, columns=owner).T.groupby(level=0).sum().T[X.columns]
    """),
    (2, "pipeline", "shapiq", "TabularExplainer on category codes + wrapper", """
        import shapiq
        model.fit(X, y)
    """ + _CODES_WRAPPER + """
        explainer = shapiq.TabularExplainer(predict, codes.loc[background.index].to_numpy(),
                                            index="SV", max_order=1)
        explanations = explainer.explain_X(codes.loc[rows.index].to_numpy(), budget=2**5)
        values = np.array([e.get_n_order_values(1) for e in explanations])
    """),
    (3, "tree", "skshapley", "explain(interactions=True)", """
        from skshapley import ShapleyExplainer
        explainer = ShapleyExplainer(model, feature_perturbation="tree_path_dependent")
        values = explainer.fit(X, y).explain(rows, interactions=True).interactions
    """),
    (3, "tree", "shap", "TreeExplainer.shap_interaction_values", """
        import shap
        model.fit(X, y)
        values = shap.TreeExplainer(model).shap_interaction_values(rows)
    """),
    (3, "tree", "shapiq", "TreeExplainer (index='SII', max_order=2)", """
        import shapiq
        model.fit(X, y)
        explainer = shapiq.TreeExplainer(model, index="SII", max_order=2)
        values = np.array([e.get_n_order_values(2) for e in explainer.explain_X(rows)])
    """),
    (4, "svc", "skshapley", "ShapleyExplainer(max_evals=500)", """
        from skshapley import ShapleyExplainer
        explainer = ShapleyExplainer(model, max_evals=500, background=background,
                                     random_state=0).fit(X, y)
        explanation = explainer.explain(rows)
        values, errors = explanation.values, explanation.std_errors
    """),
    (4, "svc", "shap", "PermutationExplainer(max_evals=500)", """
        import shap
        model.fit(X, y)
        masker = shap.maskers.Independent(background)
        explainer = shap.PermutationExplainer(model.decision_function, masker, seed=0)
        values = explainer(rows, max_evals=500).values
    """),
    # KernelExplainer has no seed (a `seed=` would vanish into its **kwargs): it draws
    # from numpy's global generator.
    (4, "svc", "shap", "KernelExplainer(nsamples=500)", """
        import shap
        model.fit(X, y)
        explainer = shap.KernelExplainer(model.decision_function, background)
        values = explainer.shap_values(rows, nsamples=500)
    """),
    (4, "svc", "shapiq", "TabularExplainer (KernelSHAP, budget=500)", """
        import shapiq
        model.fit(X, y)
        explainer = shapiq.TabularExplainer(model.decision_function, background, index="SV",
                                            max_order=1, random_state=0)
        values = np.array([e.get_n_order_values(1)
                           for e in explainer.explain_X(rows, budget=500)])
    """),
    (5, "select", "skshapley", "TopKShapleySelector in a Pipeline", """
        from skshapley import TopKShapleySelector
        pipe = make_pipeline(TopKShapleySelector(model, random_state=0), model)
        search = GridSearchCV(pipe, {"topkshapleyselector__k": grid}, cv=3).fit(X, y)
    """),
    (5, "select", "shap", "hand-written selector on mean abs TreeSHAP", """
        import shap
        from sklearn.base import BaseEstimator, clone
        from sklearn.feature_selection import SelectorMixin
        class ShapTopK(SelectorMixin, BaseEstimator):
            def __init__(self, estimator, k=5):
                self.estimator, self.k = estimator, k
            def fit(self, X, y):
                fitted = clone(self.estimator).fit(X, y)
                importance = np.abs(shap.TreeExplainer(fitted)(X).values).mean(axis=0)
                self.support_ = np.isin(np.arange(X.shape[1]), np.argsort(-importance)[: self.k])
                return self
            def _get_support_mask(self):
                return self.support_
        pipe = make_pipeline(ShapTopK(model), model)
        search = GridSearchCV(pipe, {"shaptopk__k": grid}, cv=3).fit(X, y)
    """),
]

NONE = {5: ("shapiq", "no selector (nor a ranking helper): the shap recipe's class with "
                      "shapiq's TreeExplainer would be the same code")}

# What the process sends back after the recipe's first run (not counted).
COLLECT = {
    "values": ("result = {'values': np.asarray(values, dtype=float), "
               "'errors': globals().get('errors'), "
               "'method': getattr(globals().get('explainer'), 'method_', None)}"),
    "search": ("result = {'k': list(search.best_params_.values())[0], "
               "'score': search.best_score_, "
               "'support': search.best_estimator_[0].get_support()}"),
}

CHILD = r"""
import json, pickle, sys, time
spec = json.load(open(sys.argv[1]))
start = time.perf_counter()
space = {"__name__": "recipe"}
exec(spec["setup"], space)
setup_seconds = time.perf_counter() - start
start = time.perf_counter()
exec(spec["code"], space)
cold = time.perf_counter() - start
exec(spec["collect"], space)
result = space["result"]
space = {"__name__": "recipe"}
exec(spec["setup"], space)
start = time.perf_counter()
exec(spec["code"], space)
warm = time.perf_counter() - start
with open(spec["out"], "wb") as handle:
    pickle.dump({"setup": setup_seconds, "cold": cold, "warm": warm, "result": result},
                handle)
"""


def lines_of(code):
    """Non-blank lines of a recipe as written."""
    return sum(1 for line in textwrap.dedent(code).splitlines() if line.strip())


def _run_child(setup, code, collect, cache_dir, folder, timeout):
    """(what the process sent back, or None, and the last line of its error)."""
    out = os.path.join(folder, f"out{time.perf_counter_ns()}.pkl")
    spec_path = out + ".json"
    with open(spec_path, "w") as handle:
        json.dump({"setup": setup, "code": code, "collect": collect, "out": out}, handle)
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONWARNINGS="ignore")
    try:
        process = subprocess.run([sys.executable, "-c", CHILD, spec_path], env=env,
                                 capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"over {timeout} s"
    if process.returncode != 0 or not os.path.exists(out):
        tail = (process.stderr.strip().splitlines() or ["no output"])[-1]
        return None, tail[:200]
    with open(out, "rb") as handle:
        return pickle.load(handle), ""


def run_recipes(sizes, first_runs, timeout, log):
    """Every recipe in fresh processes (``sizes``: each setup's $-fields; without
    ``first_runs`` no process on an empty numba cache): {index: record}."""
    records = {}
    with tempfile.TemporaryDirectory() as folder:
        for index, (task, setup_name, library, recipe, code) in enumerate(RECIPES):
            setup = Template(textwrap.dedent(SETUPS[setup_name])).substitute(
                sizes[setup_name])
            collect = COLLECT["search" if task == 5 else "values"]
            code = textwrap.dedent(code)
            cache_dir = tempfile.mkdtemp(dir=folder)
            first, error = (_run_child(setup, code, collect, cache_dir, folder, timeout)
                            if first_runs else (None, ""))
            load = os.getloadavg()[0]
            cold, cold_error = _run_child(setup, code, collect, cache_dir, folder, timeout)
            records[index] = {"first": None if first is None else first["cold"],
                              "cold": cold, "load": load, "error": error or cold_error}
            said = "failed: " + (error or cold_error) if cold is None else (
                f"cold {cold['cold']:.2f} s, warm {cold['warm']:.2f} s")
            log(f"task {task}, {library}, {recipe}: {said}")
    return records


def exact_interventional(predict, rows, background):
    """Shapley values of v(S) = mean over background rows b of predict(x_S, b_rest) for
    each row x, by enumerating all 2^d coalitions (float arrays; the oracle)."""
    n_features = rows.shape[1]
    masks = ((np.arange(2**n_features)[:, None] >> np.arange(n_features)) & 1).astype(bool)
    sizes = masks.sum(axis=1)
    weights = np.array([factorial(s) * factorial(n_features - s - 1)
                        for s in range(n_features)]) / factorial(n_features)
    values = np.zeros(rows.shape)
    for r, x in enumerate(rows):
        masked = np.where(masks[:, None, :], x, background[None])
        v = predict(masked.reshape(-1, n_features)).reshape(len(masks), -1).mean(axis=1)
        for j in range(n_features):
            without = np.flatnonzero(~masks[:, j])
            values[r, j] = np.sum(weights[sizes[without]] * (v[without + 2**j] - v[without]))
    return values


def _setup_space(name, sizes):
    space = {"__name__": "reference"}
    exec(Template(textwrap.dedent(SETUPS[name])).substitute(sizes), space)
    return space


def references(sizes):
    """What each task's values are compared with (beyond shap's own values), and the
    shapiq checks, computed here once (``sizes``: each setup's $-fields)."""
    warnings.filterwarnings("ignore", category=FutureWarning)  # shapiq's pandas use
    space = _setup_space("tree", sizes["tree"])
    model = space["model"].fit(space["X"], space["y"])
    margins = model.predict(space["rows"], output_margin=True).astype(float)
    refs = {"margins": margins}

    space = _setup_space("pipeline", sizes["pipeline"])
    exec(textwrap.dedent("model.fit(X, y)\n" + textwrap.dedent(_CODES_WRAPPER)), space)
    codes = space["codes"]
    refs[2] = exact_interventional(
        space["predict"], codes.loc[space["rows"].index].to_numpy(dtype=float),
        codes.loc[space["background"].index].to_numpy(dtype=float))

    space = _setup_space("svc", sizes["svc"])
    model = space["model"].fit(space["X"], space["y"])
    refs[4] = exact_interventional(model.decision_function, space["rows"],
                                   space["background"])

    space = _setup_space("select", sizes["select"])
    import shap

    model = space["model"].fit(space["X"], space["y"])
    importance = np.abs(shap.TreeExplainer(model)(space["X"]).values).mean(axis=0)
    refs["ranking"] = np.argsort(-importance, kind="stable")
    refs["shapiq"] = shapiq_checks()
    return refs


def shapiq_checks():
    """Is a shapiq difference on XGBoost its reading of the model? Its own prediction of
    the XGBoost model of tasks 1 and 3 against the model's margin (20 rows), and its
    values against shap's on a scikit-learn random forest (5 rows; P(class 1))."""
    import shap
    import shapiq
    import xgboost
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_breast_cancer(return_X_y=True)
    model = xgboost.XGBClassifier(n_estimators=100, max_depth=4, random_state=0,
                                  n_jobs=1).fit(X, y)
    explainer = shapiq.TreeExplainer(model, index="SV", max_order=1)
    predict_error = np.abs(explainer.predict(X[:20])
                           - model.predict(X[:20], output_margin=True)).max()
    forest = RandomForestClassifier(n_estimators=50, max_depth=4, random_state=0).fit(X, y)
    theirs = shap.TreeExplainer(forest)
    values = theirs(X[:5]).values[..., 1]
    ours = np.array([e.get_n_order_values(1) for e in shapiq.TreeExplainer(
        forest, index="SV", max_order=1).explain_X(X[:5])])
    pairs = theirs.shap_interaction_values(X[:5])[..., 1]
    sii = np.array([e.get_n_order_values(2) for e in shapiq.TreeExplainer(
        forest, index="SII", max_order=2).explain_X(X[:5])])
    off = ~np.eye(X.shape[1], dtype=bool)
    return {"predict": float(predict_error),
            "forest_sv": float(np.abs(ours - values).max()),
            "forest_sii": float(np.abs(sii[:, off] / 2 - pairs[:, off]).max())}


def _fmt(value, spec=".3g"):
    return "-" if value is None else format(value, spec)


def compare(task, library, result, shap_result, refs):
    """Cells after the times: (difference to the reference, the task's extra cells)."""
    if result is None:
        return ["-"] * {1: 2, 2: 1, 3: 2, 4: 4, 5: 3}[task]
    if task == 5:
        k, support = result["k"], np.flatnonzero(result["support"])
        agree = len(set(support) & set(refs["ranking"][:k]))
        return [str(k), f"{result['score']:.4f}", f"{agree} of {k}"]
    values = result["values"]
    if task in (1, 3):
        reference = shap_result["values"]
        if library == "shapiq" and task == 3:
            off = ~np.eye(values.shape[1], dtype=bool)
            difference = np.abs(values[:, off] / 2 - reference[:, off]).max()
            return [f"{difference:.1e} (pairs, halved)", "-"]
        difference = np.abs(values - reference).max()
        sums = values.sum(axis=(1, 2)) if task == 3 else values.sum(axis=1)
        spread = np.ptp(sums - refs["margins"])
        return ["reference" if library == "shap" else f"{difference:.1e}", f"{spread:.1e}"]
    error = values - refs[task]
    if task == 2:
        return [f"{np.abs(error).max():.1e}"]
    errors = result["errors"]
    coverage = ("none" if errors is None else
                f"{np.mean(np.abs(error) <= 1.96 * np.asarray(errors)):.0%}")
    mean_error = "none" if errors is None else f"{np.mean(errors):.2g}"
    return [f"{np.abs(error).max():.2g}", f"{np.sqrt(np.mean(error**2)):.2g}", mean_error,
            coverage]


HEADERS = {
    1: ("max abs difference to shap", "spread of sum - margin"),
    2: ("max abs difference to exact",),
    3: ("max abs difference to shap", "spread of sum - margin"),
    4: ("max abs error", "RMS error", "mean std. error", "95 % bars cover"),
    5: ("best k", "CV accuracy", "chosen among top k (all rows)"),
}
TITLES = {
    1: "Task 1: TreeSHAP values of an XGBoost classifier (breast_cancer, $n_tree rows)",
    2: "Task 2: a ColumnTransformer + LogisticRegression Pipeline, values in the original "
       "columns ($n_pipe rows, 100 background rows)",
    3: "Task 3: pairwise interaction values of the XGBoost classifier ($n_tree rows)",
    4: "Task 4: an SVC at 500 evaluations per row, with error bars ($n_svc rows, 12 "
       "features, 50 background rows)",
    5: "Task 5: top-k features in GridSearchCV (k in $grid, 3 folds)",
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="benchmarks/results/first_hour.md")
    parser.add_argument("--quick", action="store_true",
                        help="smoke size: fewer rows, a grid of two k, no first runs")
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds a recipe's process may take (default 300)")
    args = parser.parse_args(argv)
    lines, log = start_report("A shap user's first hour in skshapley, shap and shapiq",
                              __doc__, "bench_first_hour.py",
                              argv if argv is not None else sys.argv[1:])
    started, load_start = time.perf_counter(), os.getloadavg()
    log(f"Load average (1, 5, 15 min) at start: {load_start[0]:.1f}, {load_start[1]:.1f}, "
        f"{load_start[2]:.1f}")
    rows = {"tree": 10, "pipeline": 5, "svc": 3} if args.quick else \
        {"tree": 100, "pipeline": 20, "svc": 10}
    grid = [3, 5] if args.quick else [3, 5, 10]
    sizes = {"tree": {"n_rows": rows["tree"]}, "pipeline": {"n_rows": rows["pipeline"]},
             "svc": {"n_rows": rows["svc"]}, "select": {"grid": repr(grid)}}
    per_setup = {name: {"n_rows": 0, "grid": "[]", **sizes[name]} for name in SETUPS}

    records = run_recipes(per_setup, not args.quick, args.timeout, log)
    reference_start = time.perf_counter()
    refs = references(per_setup)
    log(f"References and shapiq checks: {time.perf_counter() - reference_start:.0f} s")
    load_end = os.getloadavg()
    log(f"Load average (1, 5, 15 min) at end: {load_end[0]:.1f}, {load_end[1]:.1f}, "
        f"{load_end[2]:.1f}; whole run {time.perf_counter() - started:.0f} s")

    lines += ["## Results", "",
              "Lines: non-blank lines of the recipe (below each table), after the shared "
              "setup. Seconds: the recipe alone (library import, fit, explanation) in a "
              "fresh process with an empty numba cache (first run), in a second fresh "
              "process (cold), and run again in that process (warm); load: the 1-minute "
              "load average of this 2-core machine when the cold process started.", ""]
    shap_results = {task: records[i]["cold"]["result"]
                    for i, (task, _, library, recipe, _) in enumerate(RECIPES)
                    if library == "shap" and records[i]["cold"] is not None
                    and task in (1, 3)}
    titles = {"n_tree": rows["tree"], "n_pipe": rows["pipeline"], "n_svc": rows["svc"],
              "grid": "{" + ", ".join(map(str, grid)) + "}"}
    for task in range(1, 6):
        entries = [(i, r) for i, r in enumerate(RECIPES) if r[0] == task]
        setup_name = entries[0][1][1]
        setup_seconds = [records[i]["cold"]["setup"] for i, _ in entries
                         if records[i]["cold"] is not None]
        lines += [f"### {Template(TITLES[task]).substitute(titles)}", "",
                  f"Shared setup: {lines_of(SETUPS[setup_name])} lines, "
                  f"{min(setup_seconds) if setup_seconds else float('nan'):.1f} s "
                  "(fastest of the cold processes).", "",
                  "| library | recipe | lines | first run (s) | cold (s) | warm (s) | load | "
                  + " | ".join(HEADERS[task]) + " |",
                  "|" + "---|" * (7 + len(HEADERS[task]))]
        for i, (_, _, library, recipe, code) in entries:
            record = records[i]
            cold = record["cold"]
            result = None if cold is None else cold["result"]
            cells = compare(task, library, result, shap_results.get(task), refs)
            if cold is None:
                cells[0] = f"failed: {record['error']}"
            if result is not None and result.get("method"):  # what "auto" chose
                recipe = f"{recipe}, method_={result['method']!r}"
            lines.append(
                f"| {library} | {recipe} | {lines_of(code)} | {_fmt(record['first'])} | "
                f"{_fmt(None if cold is None else cold['cold'])} | "
                f"{_fmt(None if cold is None else cold['warm'])} | {record['load']:.1f} | "
                + " | ".join(cells) + " |")
        if task in NONE:
            library, why = NONE[task]
            lines.append(f"| {library} | none: {why} | - | - | - | - | - | "
                         + " | ".join("-" for _ in HEADERS[task]) + " |")
        if task in (1, 3):
            checks = refs["shapiq"]
            lines += ["", f"shapiq checks: its TreeExplainer's own prediction of this XGBoost "
                      f"model is off the model's margin by up to {checks['predict']:.3g} "
                      "(20 rows); on a scikit-learn RandomForestClassifier (5 rows, "
                      f"P(class 1)) its values are {checks['forest_sv']:.1e} and its "
                      f"halved SII pairs {checks['forest_sii']:.1e} from shap's."]
        lines += ["", "Recipes:", ""]
        for _, (_, _, library, recipe, code) in entries:
            lines += [f"{library}, {recipe}:", "", "```python",
                      textwrap.dedent(code).strip("\n"), "```", ""]
    with open(args.output, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
