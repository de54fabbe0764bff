"""Runs shapiq's OddSHAP for ``bench_accuracy.py`` in an interpreter that has it (shapiq
>= 1.5 needs Python >= 3.12); not part of the package, imports nothing from it.

Usage: python _oddshap_runner.py GAME.npz BUDGETS_JSON SEEDS OUT.json [REPEATS]
GAME.npz holds either ``table`` (2^d, 10) of coalition values, or ``background``,
``rows`` and ``model`` (the path of an XGBoost model saved as JSON, explained by margin).
"seconds" is per explained row, the fastest run over the seeds, each run REPEATS times
(default 1), as ``bench_accuracy.py`` times the other methods.

For ``bench_width.py``: python _oddshap_runner.py width MODEL.pkl DATA.npz BUDGET SEED
OUT.json explains each row of DATA.npz's ``rows`` over its ``background`` with the
pickled scikit-learn model (the same version in both interpreters) at one budget and
seed; "seconds" is the whole call (imports and loading excluded) and "model_rows" the
rows the model predicted, as ``bench_width.py`` measures the other methods.
"""

import json
import sys
import time
import warnings

import numpy as np


def width(model_path, data_path, budget, seed, out):
    """One ``bench_width.py`` run: OddSHAP on every row of the data, row by row."""
    import pickle

    import shapiq
    from shapiq.approximator import OddSHAP

    warnings.filterwarnings("ignore")
    with open(model_path, "rb") as handle:
        model = pickle.load(handle)  # noqa: S301 - written by bench_width.py in this run
    data = np.load(data_path, allow_pickle=False)
    background, rows = data["background"], data["rows"]
    n_background, d = background.shape
    # coalitions per predict: masked batches of at most 2^23 floats (64 MiB), as ours chunks
    chunk = max(1, 2**23 // (n_background * d))
    counted = [0]

    def game_row(coalitions, row):
        coalitions = np.atleast_2d(coalitions).astype(bool)
        values = np.empty(len(coalitions))
        for start in range(0, len(coalitions), chunk):
            part = coalitions[start : start + chunk]
            stacked = np.where(part[:, None, :], row, background[None, :, :]).reshape(-1, d)
            counted[0] += len(stacked)
            values[start : start + chunk] = model.predict(stacked).reshape(
                len(part), n_background).mean(axis=1)
        return values

    start = time.perf_counter()
    values = []
    for row in rows:
        iv = OddSHAP(n=d, random_state=seed).approximate(
            budget, lambda coalitions, row=row: game_row(coalitions, row))
        values.append([iv[(j,)] for j in range(d)])
    seconds = time.perf_counter() - start
    with open(out, "w") as handle:
        json.dump({"values": values, "seconds": seconds, "model_rows": counted[0],
                   "version": shapiq.__version__}, handle)


def main():
    if sys.argv[1] == "width":
        width(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
        return
    path, budgets, seeds, out = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    repeats = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    warnings.filterwarnings("ignore")
    import shapiq
    from shapiq.approximator import OddSHAP

    data = np.load(path, allow_pickle=False)
    if "table" in data:
        table = data["table"]
        d = int(np.log2(table.shape[0]))
        powers = 1 << np.arange(d)

        def game_row(coalitions, r):
            return table[np.atleast_2d(coalitions).astype(np.int64) @ powers, r]
    else:
        import xgboost

        booster = xgboost.Booster()
        booster.load_model(str(data["model"]))
        booster.set_param({"nthread": 1})  # one thread, as the model in bench_accuracy.py
        background, rows = data["background"], data["rows"]
        d = background.shape[1]

        def game_row(coalitions, r):
            # the model on row r only: OddSHAP explains row by row, like the other peers
            coalitions = np.atleast_2d(coalitions).astype(bool)
            stacked = np.where(coalitions[:, None, :], rows[r], background[None, :, :])
            margin = booster.predict(xgboost.DMatrix(stacked.reshape(-1, d)),
                                     output_margin=True)
            return margin.reshape(coalitions.shape[0], -1).mean(axis=1)

    result = {}
    for budget in budgets:
        estimates, seconds = [], float("inf")
        for seed in range(seeds):
            for _ in range(repeats):
                start = time.perf_counter()
                values = []
                for r in range(10):
                    approximator = OddSHAP(n=d, random_state=seed)
                    iv = approximator.approximate(budget, lambda S, r=r: game_row(S, r))
                    values.append([iv[(j,)] for j in range(d)])
                seconds = min(seconds, (time.perf_counter() - start) / 10)
            estimates.append(values)
        result[budget] = {"values": estimates, "seconds": seconds,
                          "version": shapiq.__version__}
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
