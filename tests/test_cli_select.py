"""``skshapley select`` (DESIGN.md §4.9): table, PNG, one-line errors with exit code 2."""

import re

import numpy as np
import pandas as pd
import pytest

from skshapley.cli import ExitCode, main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def csv_path(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6))
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(6)])
    frame["target"] = 3 * X[:, 4] + 2 * X[:, 1] + 0.1 * rng.normal(size=200)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _rows(out):
    """(rank, feature, kept, estimate, low, high) of each table line."""
    rows = []
    for line in out.splitlines():
        match = re.match(r"\s*(\d+)\s+(\S+)\s+(yes)?\s+(\S+)\s+\[\s*(\S+),\s*(\S+)\]", line)
        if match:
            rank, name, kept, est, low, high = match.groups()
            rows.append((int(rank), name, kept == "yes", float(est), float(low), float(high)))
    return rows


def test_select_on_csv_prints_chosen_features_and_writes_png(tmp_path, csv_path, capsys):
    output = tmp_path / "topk.png"
    code = main(["select", "--data", str(csv_path), "--target", "target", "--k", "2",
                 "--model", "sklearn.linear_model:LinearRegression", "--output",
                 str(output)])
    captured = capsys.readouterr()
    assert code == ExitCode.OK, captured.err
    rows = _rows(captured.out)
    assert [(r[1], r[2]) for r in rows[:2]] == [("c4", True), ("c1", True)]
    assert not any(r[2] for r in rows[2:]) and len(rows) == 6
    assert all(low <= est <= high for *_, est, low, high in rows)
    assert "kept 2 of 6 features with 64 evaluations" in captured.out
    assert output.read_bytes()[:8] == PNG_MAGIC


def test_select_with_refits_and_a_budget(tmp_path, csv_path, capsys):
    code = main(["select", "--data", str(csv_path), "--target", "target", "--k", "0.34",
                 "--model", "sklearn.tree:DecisionTreeRegressor", "--method", "greedy_cmcs",
                 "--max-evals", "40", "--output", str(tmp_path / "p.png")])
    captured = capsys.readouterr()
    assert code == ExitCode.OK, captured.err
    assert "method: greedy_cmcs" in captured.out
    evaluations = int(re.search(r"with (\d+) evaluations", captured.out).group(1))
    assert evaluations <= 40
    assert sum(r[2] for r in _rows(captured.out)) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--k", "0"], "argument --k: expected a positive integer"),
     (["--k", "9"], "--k 9 is more than the 6 features"),
     (["--importance", "gain"], "'importance' parameter"),
     (["--method", "magic"], "'method' parameter"),
     (["--max-evals", "x"], "argument --max-evals"),
     (["--target", "nope"], "target column 'nope' is not in")],
)
def test_select_bad_input_is_one_line_and_exit_code_2(tmp_path, csv_path, capsys, args,
                                                       message):
    argv = ["select", "--data", str(csv_path), "--target", "target", "--k", "2",
            "--model", "sklearn.linear_model:LinearRegression",
            "--output", str(tmp_path / "p.png")]
    # Later options win in argparse: the bad value replaces the good one.
    code = main(argv + args)
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE_ERROR
    assert len(err.strip().splitlines()) == 1 and message in err, err
