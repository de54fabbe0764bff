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
                 "--importance", "refit", "--max-evals", "40",
                 "--output", str(tmp_path / "p.png")])
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
     # 3 evaluations sample no feature: all estimates were 0 with [-inf, inf] intervals
     (["--max-evals", "8"], "--max-evals 8 is too small for 6 features: at least 9 "
                            "evaluations"),
     (["--n-jobs", "0"], "argument --n-jobs: expected a non-zero integer"),
     (["--random-state", "-1"], "argument --random-state: expected an integer in"),
     (["--target", "nope"], "target column 'nope' is not in"),
     # int(inf) raised OverflowError: exit 1 with a message naming no option (issue 28)
     (["--k", "inf"], "argument --k: expected a positive integer or a fraction"),
     (["--k", "nan"], "argument --k: expected a positive integer or a fraction")],
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


def test_select_samples_every_feature_at_the_smallest_budget(tmp_path, csv_path, capsys):
    # 6 features: v(∅), v(N) and one CMCS round of 7 evaluations
    code = main(["select", "--data", str(csv_path), "--target", "target", "--k", "2",
                 "--model", "sklearn.tree:DecisionTreeRegressor", "--max-evals", "9",
                 "--importance", "refit", "--output", str(tmp_path / "p.png")])
    captured = capsys.readouterr()
    assert code == ExitCode.OK, captured.err
    assert "with 9 evaluations" in captured.out
    assert all(est != 0.0 for *_, est, _, _ in _rows(captured.out))


def test_mean_abs_shap_reports_no_certificate(tmp_path, csv_path, capsys):
    # mean |SHAP| is not one game's Shapley value: no PAC rule, and --max-evals is not
    # what it would take (it used to advise raising it)
    code = main(["select", "--data", str(csv_path), "--target", "target", "--k", "2",
                 "--model", "sklearn.linear_model:LinearRegression",
                 "--importance", "mean_abs_shap", "--output", str(tmp_path / "p.png")])
    captured = capsys.readouterr()
    assert code == ExitCode.OK, captured.err
    assert "no certificate: the PAC rule does not apply to mean |SHAP|" in captured.out
    assert "--max-evals" not in captured.out
    assert [(r[1], r[2]) for r in _rows(captured.out)[:2]] == [("c4", True), ("c1", True)]


def test_select_help_lists_every_method(capsys):
    assert main(["select", "--help"]) == ExitCode.OK
    text = " ".join(capsys.readouterr().out.split())
    # the help of --method, after the usage lines
    help_of_method = text[text.index("--method METHOD cmcs"):text.index("--max-evals MAX_EVALS m")]
    assert help_of_method.split(maxsplit=2)[2] == (
        "cmcs_at_k (default), greedy_cmcs, cmcs, sampling_shap_at_k, regression or exact ")


@pytest.fixture
def recorded_progress(monkeypatch):
    """The ``progress`` each TopKShapleySelector of the CLI is built with."""
    import skshapley

    seen = []

    class Recording(skshapley.TopKShapleySelector):
        def fit(self, X, y):
            seen.append(self.progress)
            return super().fit(X, y)

    monkeypatch.setattr(skshapley, "TopKShapleySelector", Recording)
    return seen


@pytest.mark.parametrize("is_terminal", [True, False])
def test_select_shows_progress_by_default_on_a_terminal(tmp_path, csv_path, monkeypatch,
                                                         recorded_progress, is_terminal):
    # as explain does: hundreds of refits took minutes without a sign of life
    monkeypatch.setattr("sys.stderr.isatty", lambda: is_terminal)
    argv = ["select", "--data", str(csv_path), "--target", "target", "--k", "2",
            "--model", "sklearn.linear_model:LinearRegression", "--importance",
            "performance", "--output", str(tmp_path / "p.png")]
    assert main(argv) == ExitCode.OK
    assert main([*argv, "--no-progress"]) == ExitCode.OK
    assert main([*argv, "--progress"]) == ExitCode.OK
    assert recorded_progress == [is_terminal, False, True]
