"""TreeSHAP's first call (numba compilation) and few-row calls, ours against shap.

Claim: explaining a tree model takes seconds on a fresh machine and little more than its
kernels afterwards. The first ``ShapleyExplainer.explain`` of a tree model, in a process
that finds numba's cache empty, takes at most 5 s; a second process loads the kernels
from the cache; and explaining one row costs at most 20 % more than the TreeSHAP kernels
themselves (validation, the efficiency check, packing).

Protocol. (1) First call. Each run is a fresh ``python`` process with
``NUMBA_CACHE_DIR`` set to a new empty folder ("cold") or to the folder a cold run just
filled ("warm"). It times ``import`` (numpy, the model's library, skshapley), building
and fitting (``ShapleyExplainer(model).fit(X, y)``, which fits the model too) and the
first ``explain(X[:5])``, on scikit-learn's diabetes data (442 x 10): a
``HistGradientBoostingRegressor(max_iter=100)`` with the explainer's defaults
(interventional, 100 background rows) and with ``feature_perturbation=
"tree_path_dependent"``, and an ``XGBRegressor(n_estimators=100, max_depth=6)``. The peer
is shap's first call in a fresh process: ``import shap``, fitting the model, building
``shap.TreeExplainer`` (on the same 100 background rows for interventional values) and
``shap_values(X[:5])``. ``skshapley explain`` (the CLI: the same HistGradientBoosting
model, 20 rows, a summary PNG) is timed from the outside, cold and warm. Each cell is the
fastest of ``--repeats`` runs: other processes share this machine's two cores, so the
process's CPU seconds (all its threads) are given too.

(2) Few rows, in one process after a warm-up call: one row (rows 0..``--repeats`` x 10
cycled), 10 rows, and building a new explainer on a prefitted model plus one row, for
both games, ours (``ShapleyExplainer(model, prefit=True, background=X[:100])``) against
``shap.TreeExplainer`` on the same background (``check_additivity=False``: shap's check
calls the model, which ours does only on the first explained rows and on calls of at
least 64 rows). Fastest of many calls. "kernels" is the time of the TreeSHAP
computation alone on the same rows (``skshapley.tree._api.path_dependent_shap`` /
``interventional_shap`` on the prepared rows), and "check + setup" the share of the
``explain`` call spent outside it.

Refuted if a cold first ``explain`` takes more than 5 s, a warm one more than a tenth of
the cold one, or check + setup more than 20 % of a one-row call.

Run: ``python benchmarks/bench_tree_first_call.py`` (``--quick``: fewer repeats;
``--baseline SRC`` also runs the first calls, the CLI and our few-row calls with
``PYTHONPATH=SRC``, e.g. an earlier checkout, as "before").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _report import start_report

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
start, start_cpu = time.perf_counter(), time.process_time()
import numpy as np
from sklearn.datasets import load_diabetes
kind, peer, perturbation = sys.argv[1], sys.argv[2], sys.argv[3]
if kind == "xgboost":
    import xgboost
    model = xgboost.XGBRegressor(n_estimators=100, max_depth=6, random_state=0, n_jobs=1)
else:
    from sklearn.ensemble import HistGradientBoostingRegressor
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0)
if peer == "shap":
    import shap
else:
    from skshapley import ShapleyExplainer
X, y = load_diabetes(return_X_y=True)
imported = time.perf_counter()
if peer == "shap":
    model.fit(X, y)
    if perturbation == "interventional":
        explainer = shap.TreeExplainer(model, data=X[:100],
                                       feature_perturbation="interventional")
    else:
        explainer = shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")
    fitted = time.perf_counter()
    fitted_cpu = time.process_time()
    explainer.shap_values(X[:5], check_additivity=False)
else:
    explainer = ShapleyExplainer(model, feature_perturbation=perturbation,
                                 random_state=0).fit(X, y)
    fitted = time.perf_counter()
    fitted_cpu = time.process_time()
    explainer.explain(X[:5])
done = time.perf_counter()
print(json.dumps({"import": imported - start, "fit": fitted - imported,
                  "explain": done - fitted, "explain_cpu": time.process_time() - fitted_cpu,
                  "total_cpu": time.process_time() - start_cpu}))
"""


def _run_child(kind, peer, perturbation, cache_dir, pythonpath=None):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    # run in the cache folder: ``python -c`` puts the working directory first on sys.path,
    # where a checkout's skshapley would shadow PYTHONPATH's
    out = subprocess.run([sys.executable, "-c", CHILD, kind, peer, perturbation], env=env,
                         capture_output=True, text=True, check=True, cwd=cache_dir)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fastest(runs):
    best = min(runs, key=lambda run: run["explain"])
    return {key: min(run[key] for run in runs) for key in best}


def first_calls(repeats, pythonpath=None):
    """{(model, game, peer): {"cold": timings, "warm": timings}}."""
    scenarios = [("HistGradientBoosting", "hist", "interventional"),
                 ("HistGradientBoosting", "hist", "tree_path_dependent"),
                 ("XGBoost", "xgboost", "interventional")]
    results = {}
    for name, kind, perturbation in scenarios:
        for peer in ("ours", "shap") if pythonpath is None else ("ours",):
            cold, warm = [], []
            for _ in range(repeats):
                cache = Path(tempfile.mkdtemp(prefix="numba-cache-"))
                try:
                    cold.append(_run_child(kind, peer, perturbation, cache, pythonpath))
                    warm.append(_run_child(kind, peer, perturbation, cache, pythonpath))
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
            results[name, perturbation, peer] = {"cold": _fastest(cold),
                                                 "warm": _fastest(warm)}
            print(name, perturbation, peer, results[name, perturbation, peer],
                  file=sys.stderr, flush=True)
    return results


def cli_calls(repeats, pythonpath=None):
    """Fastest wall seconds of ``skshapley explain`` (cold, warm)."""
    cold, warm = [], []
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    for _ in range(repeats):
        cache = Path(tempfile.mkdtemp(prefix="numba-cache-"))
        try:
            env["NUMBA_CACHE_DIR"] = str(cache)
            for times in (cold, warm):
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "skshapley", "explain", "--output",
                                str(cache / "summary.png")], env=env, check=True,
                               capture_output=True, cwd=cache)
                times.append(time.perf_counter() - start)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return min(cold), min(warm)


def _fastest_call(function, repeats):
    function()  # warm-up: compilation, the kept background
    best = float("inf")
    for i in range(repeats):
        start = time.perf_counter()
        function(i)
        best = min(best, time.perf_counter() - start)
    return best


def few_rows(repeats):
    """Rows of the few-rows table: (model, game, case, ours, shap, kernels)."""
    import shap
    import xgboost
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import HistGradientBoostingRegressor

    from skshapley import ShapleyExplainer
    from skshapley.backends import get_backend
    from skshapley.tree._api import interventional_shap, path_dependent_shap

    X, y = load_diabetes(return_X_y=True)
    background = X[:100]
    models = {
        "HistGradientBoosting": HistGradientBoostingRegressor(max_iter=100,
                                                              random_state=0).fit(X, y),
        "XGBoost": xgboost.XGBRegressor(n_estimators=100, max_depth=6, random_state=0,
                                        n_jobs=1).fit(X, y),
    }
    kernels = get_backend("numba")
    rows = []
    for name, model in models.items():
        for game in ("tree_path_dependent", "interventional"):
            ours = ShapleyExplainer(model, prefit=True, feature_perturbation=game,
                                    background=background).fit(X)
            data = {"data": background, "feature_perturbation": game} \
                if game == "interventional" else {"feature_perturbation": game}
            peer = shap.TreeExplainer(model, **data)
            ensemble = ours.tree_ensemble_
            prepared_background = ensemble.prepare(background)

            def kernel(rows_, ensemble=ensemble, game=game, bg=prepared_background):
                prepared = ensemble.prepare(rows_)
                if game == "interventional":
                    return interventional_shap(ensemble, prepared, bg, kernels)
                return path_dependent_shap(ensemble, prepared, kernels)

            for case, n_rows in (("1 row", 1), ("10 rows", 10)):
                def pick(i=0, n_rows=n_rows):
                    first = (i * n_rows) % (X.shape[0] - n_rows)
                    return X[first:first + n_rows]

                t_ours = _fastest_call(
                    lambda i=0, pick=pick, ours=ours: ours.explain(pick(i)), repeats)
                t_peer = _fastest_call(
                    lambda i=0, pick=pick, peer=peer: peer.shap_values(
                        pick(i), check_additivity=False), repeats)
                t_kernel = _fastest_call(lambda i=0, pick=pick: kernel(pick(i)), repeats)
                rows.append((name, game, case, t_ours, t_peer, t_kernel))

            def new_ours(i=0, model=model, game=game):
                return ShapleyExplainer(model, prefit=True, feature_perturbation=game,
                                        background=background).fit(X).explain(X[i:i + 1])

            def new_peer(i=0, model=model, data=data):
                return shap.TreeExplainer(model, **data).shap_values(
                    X[i:i + 1], check_additivity=False)

            small = max(3, repeats // 10)
            rows.append((name, game, "new explainer + 1 row", _fastest_call(new_ours, small),
                         _fastest_call(new_peer, small), None))
            print(rows[-3:], file=sys.stderr, flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3,
                        help="processes per first-call cell (default 3)")
    parser.add_argument("--calls", type=int, default=300,
                        help="calls per few-rows cell (default 300)")
    parser.add_argument("--baseline", default=None, metavar="SRC",
                        help="also time the first calls with PYTHONPATH=SRC ('before')")
    parser.add_argument("--quick", action="store_true", help="1 process and 30 calls a cell")
    parser.add_argument("--output", default=str(HERE / "results" / "tree_first_call.md"))
    parser.add_argument("--emit-few-rows", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.calls = 1, 30
    if args.emit_few_rows:  # the baseline's few-rows table, in its own process
        print(json.dumps(few_rows(args.calls)))
        return
    lines, log = start_report("TreeSHAP: the first call and few rows", __doc__,
                              "bench_tree_first_call.py", argv or sys.argv[1:])

    results = first_calls(args.repeats)
    before = first_calls(args.repeats, args.baseline) if args.baseline else {}
    cli = cli_calls(args.repeats)
    cli_before = cli_calls(args.repeats, args.baseline) if args.baseline else None
    log("## First call (fresh process; seconds, fastest of "
        f"{args.repeats} processes)")
    log()
    log("| model | game | who | cache | import | fit | first explain (5 rows) | total | "
        "explain, CPU s | total, CPU s |")
    log("|---|---|---|---|---|---|---|---|---|---|")
    for (name, game, peer), by_cache in results.items():
        entries = [("skshapley" if peer == "ours" else "shap", by_cache)]
        if peer == "ours" and (name, game, peer) in before:
            entries.insert(0, ("skshapley, before", before[name, game, peer]))
        for who, cells in entries:
            for cache in ("cold", "warm"):
                t = cells[cache]
                log(f"| {name} | {game} | {who} | {cache} | {t['import']:.2f} | "
                    f"{t['fit']:.2f} | {t['explain']:.2f} | "
                    f"{t['import'] + t['fit'] + t['explain']:.2f} | "
                    f"{t['explain_cpu']:.2f} | {t['total_cpu']:.2f} |")
    log()
    log("`skshapley explain` (CLI, whole process, wall seconds): "
        + (f"before {cli_before[0]:.1f} cold, {cli_before[1]:.1f} warm; " if cli_before
           else "") + f"now {cli[0]:.1f} cold, {cli[1]:.1f} warm.")
    log()

    table = few_rows(args.calls)
    before_rows = {}
    if args.baseline:
        env = dict(os.environ, PYTHONPATH=args.baseline + os.pathsep
                   + os.environ.get("PYTHONPATH", ""))
        out = subprocess.run([sys.executable, str(Path(__file__).resolve()),
                              "--emit-few-rows", "--calls", str(args.calls)], env=env,
                             capture_output=True, text=True, check=True,
                             cwd=tempfile.gettempdir())
        before_rows = {tuple(row[:3]): row[3] for row in
                       json.loads(out.stdout.strip().splitlines()[-1])}
    log(f"## Few rows (seconds, fastest of {args.calls} calls; ratio = shap / ours, "
        "above 1 is ours faster)")
    log()
    log("| model | game | case | " + ("ours before (s) | " if before_rows else "")
        + "ours (s) | shap (s) | ratio | kernels (s) | check + setup |")
    log("|---|---|---|" + ("---|" if before_rows else "") + "---|---|---|---|---|")
    for name, game, case, t_ours, t_peer, t_kernel in table:
        share = "" if t_kernel is None else f"{max(0.0, 1 - t_kernel / t_ours):.0%}"
        kernel = "" if t_kernel is None else f"{t_kernel:.5f}"
        before_cell = (f"{before_rows[name, game, case]:.5f} | " if before_rows else "")
        log(f"| {name} | {game} | {case} | {before_cell}{t_ours:.5f} | {t_peer:.5f} | "
            f"{t_peer / t_ours:.2f} | {kernel} | {share} |")
    Path(args.output).write_text("\n".join(lines) + "\n")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
