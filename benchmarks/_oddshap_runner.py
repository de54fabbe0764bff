"""Runs shapiq's OddSHAP for ``bench_accuracy.py`` in an interpreter that has it (shapiq
>= 1.5 needs Python >= 3.12); not part of the package, imports nothing from it.

Usage: python _oddshap_runner.py GAME.npz BUDGETS_JSON SEEDS OUT.json
GAME.npz holds either ``table`` (2^d, 10) of coalition values, or ``background``,
``rows`` and ``model`` (the path of an XGBoost model saved as JSON, explained by margin).
"""

import json
import sys
import time
import warnings

import numpy as np


def main():
    path, budgets, seeds, out = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    warnings.filterwarnings("ignore")
    import shapiq
    from shapiq.approximator import OddSHAP

    data = np.load(path, allow_pickle=False)
    if "table" in data:
        table = data["table"]
        d = int(np.log2(table.shape[0]))
        powers = 1 << np.arange(d)

        def game_rows(coalitions):
            return table[np.atleast_2d(coalitions).astype(np.int64) @ powers]
    else:
        import xgboost

        booster = xgboost.Booster()
        booster.load_model(str(data["model"]))
        background, rows = data["background"], data["rows"]
        d = background.shape[1]

        def game_rows(coalitions):
            coalitions = np.atleast_2d(coalitions).astype(bool)
            out = np.empty((coalitions.shape[0], rows.shape[0]))
            for r, x in enumerate(rows):
                stacked = np.where(coalitions[:, None, :], x, background[None, :, :])
                margin = booster.predict(xgboost.DMatrix(stacked.reshape(-1, d)),
                                         output_margin=True)
                out[:, r] = margin.reshape(coalitions.shape[0], -1).mean(axis=1)
            return out

    result = {}
    for budget in budgets:
        estimates, start = [], time.perf_counter()
        for seed in range(seeds):
            values = []
            for r in range(10):
                approximator = OddSHAP(n=d, random_state=seed)
                iv = approximator.approximate(budget, lambda S, r=r: game_rows(S)[:, r])
                values.append([iv[(j,)] for j in range(d)])
            estimates.append(values)
        result[budget] = {"values": estimates,
                          "seconds": (time.perf_counter() - start) / (seeds * 10),
                          "version": shapiq.__version__}
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
