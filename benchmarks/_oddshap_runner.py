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

# coalitions per predict: masked batches of at most 2^23 floats (64 MiB), as ours chunks
MAX_BATCH_FLOATS = 2**23


def masked_values(predict, background, row, coalitions):
    """The model's mean over the background rows with each coalition's columns taken from
    ``row``, per coalition, predicted in batches of at most ``MAX_BATCH_FLOATS``."""
    coalitions = np.atleast_2d(coalitions).astype(bool)
    n_background, d = background.shape
    chunk = max(1, MAX_BATCH_FLOATS // (n_background * d))
    values = np.empty(len(coalitions))
    for start in range(0, len(coalitions), chunk):
        part = coalitions[start : start + chunk]
        stacked = np.where(part[:, None, :], row, background[None, :, :]).reshape(-1, d)
        values[start : start + chunk] = predict(stacked).reshape(
            len(part), n_background).mean(axis=1)
    return values


def oddshap_values(game_row, n_rows, d, budget, seed):
    """OddSHAP's values of each row's game, row by row like the other peers;
    ``game_row(coalitions, r)`` is the game of row ``r``."""
    from shapiq.approximator import OddSHAP

    values = []
    for r in range(n_rows):
        iv = OddSHAP(n=d, random_state=seed).approximate(
            budget, lambda coalitions, r=r: game_row(coalitions, r))
        values.append([iv[(j,)] for j in range(d)])
    return values


def width(model_path, data_path, budget, seed, out):
    """One ``bench_width.py`` run: OddSHAP on every row of the data."""
    import pickle

    import shapiq

    warnings.filterwarnings("ignore")
    with open(model_path, "rb") as handle:
        model = pickle.load(handle)  # noqa: S301 - written by bench_width.py in this run
    data = np.load(data_path, allow_pickle=False)
    background, rows = data["background"], data["rows"]
    counted = [0]

    def predict(stacked):
        counted[0] += len(stacked)
        return model.predict(stacked)

    start = time.perf_counter()
    values = oddshap_values(lambda coalitions, r: masked_values(predict, background, rows[r],
                                                                coalitions),
                            len(rows), background.shape[1], budget, seed)
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

        def margin(stacked):
            return booster.predict(xgboost.DMatrix(stacked), output_margin=True)

        def game_row(coalitions, r):
            return masked_values(margin, background, rows[r], coalitions)

    result = {}
    for budget in budgets:
        estimates, seconds = [], float("inf")
        for seed in range(seeds):
            for _ in range(repeats):
                start = time.perf_counter()
                values = oddshap_values(game_row, 10, d, budget, seed)
                seconds = min(seconds, (time.perf_counter() - start) / 10)
            estimates.append(values)
        result[budget] = {"values": estimates, "seconds": seconds,
                          "version": shapiq.__version__}
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
