import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from skshapley.cli import ExitCode, main

FAST = ["--rows", "3", "--background", "10"]


def test_default_run_prints_a_ranked_table_and_writes_the_png(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "--rows", "5", "--background", "20"]) == ExitCode.OK
    out = capsys.readouterr().out
    lines = [line.split() for line in out.splitlines() if line[:4].strip().isdigit()]
    features = [row[1] for row in lines]
    assert sorted(features) == ["age", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6", "sex"]
    importance = [float(row[2]) for row in lines]
    assert importance == sorted(importance, reverse=True)
    assert "method: exact" in out
    png = tmp_path / "skshapley_summary.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_csv_with_target_and_sampling_options(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(80, 12)), columns=[f"f{j}" for j in range(12)])
    frame["y"] = 3 * frame["f0"] - frame["f5"]
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    code = main(["explain", "--data", str(path), "--target", "y", "--model",
                 "sklearn.linear_model:LinearRegression", "--output", str(tmp_path / "p.png"),
                 "--max-evals", "100", *FAST])
    assert code == ExitCode.OK
    out = capsys.readouterr().out
    assert "method: permutation" in out and "evaluations per row: 90" in out
    ranked = [line.split()[1] for line in out.splitlines() if line[:4].strip().isdigit()]
    assert ranked[:2] == ["f0", "f5"]


@pytest.fixture
def csv_files(tmp_path):
    good = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [0.5, 0.1, 0.2, 0.3],
                         "y": [1.0, 0.0, 1.0, 2.0]})
    paths = {}
    paths["text"] = tmp_path / "text.csv"
    good.assign(c=["x", "y", "z", "w"]).to_csv(paths["text"], index=False)
    paths["nan"] = tmp_path / "nan.csv"
    good.assign(a=[1.0, np.nan, 3.0, 4.0]).to_csv(paths["nan"], index=False)
    paths["empty"] = tmp_path / "empty.csv"
    paths["empty"].write_text("")
    paths["header_only"] = tmp_path / "header.csv"
    paths["header_only"].write_text("a,b,y\n")
    paths["good"] = tmp_path / "good.csv"
    good.to_csv(paths["good"], index=False)
    paths["binary"] = tmp_path / "binary.csv"
    paths["binary"].write_bytes(b"\xff\xfe\x00\x01" * 50)
    return paths


@pytest.mark.parametrize(
    "args, message",
    [
        (["--data", "{missing}", "--target", "y"], "no such file"),
        (["--data", "{empty}", "--target", "y"], "cannot read"),
        (["--data", "{header_only}", "--target", "y"], "no data rows"),
        (["--data", "{binary}", "--target", "y"], "cannot read"),
        (["--data", "{good}", "--target", "nope"], "target column 'nope' is not in"),
        (["--data", "{good}"], "--data needs --target"),
        (["--data", "{text}", "--target", "y"], "non-numeric feature columns"),
        (["--data", "{nan}", "--target", "y"], r"missing values \(NaN\)"),
        (["--model", "sklearn.linear_model"], "module:Class"),
        (["--model", "sklearn.nothing_here:Ridge"], "cannot import module"),
        (["--model", "sklearn.linear_model:Nope"], "has no class 'Nope'"),
        (["--method", "kernel"], "not available yet"),
        (["--rows", "0"], "positive integer"),
        (["--max-evals", "3", "--method", "permutation"], "too small"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, csv_files, capsys, args, message):
    names = {**{k: str(v) for k, v in csv_files.items()}, "missing": str(tmp_path / "no.csv")}
    args = [a.format(**names) for a in args]
    code = main(["explain", *args, "--output", str(tmp_path / "p.png"), *FAST])
    captured = capsys.readouterr()
    assert code == ExitCode.USAGE_ERROR
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skshapley: error: ")
    assert pytest.importorskip("re").search(message, lines[0])
    assert "Traceback" not in captured.err


def test_unavailable_backend_exits_4(tmp_path, capsys):
    from skshapley.backends import available_backends

    if "cupy" in available_backends():
        pytest.skip("cupy works here")
    code = main(["explain", "--backend", "cupy", "--output", str(tmp_path / "p.png"), *FAST])
    assert code == ExitCode.BACKEND_UNAVAILABLE
    assert "Backend 'cupy' is unavailable" in capsys.readouterr().err


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == ExitCode.USAGE_ERROR
    assert "explain" in capsys.readouterr().err


def test_python_dash_m_runs(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "skshapley", "explain", *FAST, "--output", str(tmp_path / "p.png")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    assert "mean |SHAP|" in completed.stdout
    failed = subprocess.run([sys.executable, "-m", "skshapley", "explain", "--rows", "x"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert failed.returncode == 2 and "Traceback" not in failed.stderr
