import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from skshapley import cli
from skshapley.cli import ExitCode, _common, _model, main

FAST = ["--rows", "3", "--background", "10"]
# For tests where the model does not matter: fits in milliseconds.
LINEAR = ["--model", "sklearn.linear_model:LinearRegression"]
DIABETES = ["age", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6", "sex"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def one_openmp_thread():
    # HistGradientBoosting's OpenMP threads spin-wait; on a busy 2-core machine two of
    # them can make a one-second fit take a minute. The CLI's own results do not depend
    # on it.
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def _subprocess_env():
    return {**os.environ, "OMP_NUM_THREADS": "1"}


def _table(out):
    """(feature, mean |SHAP|, std. error) of each ranked line of the table."""
    rows = [line.split() for line in out.splitlines() if re.match(r"\s*\d+\s", line)]
    # an exact method's error column reads "exact": no error
    return [(row[1], float(row[-2]), 0.0 if row[-1] == "exact" else float(row[-1]))
            for row in rows]


def _one_line_error(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("skshapley: error: ")
    assert "Traceback" not in err
    return lines[0]


def _check_default_output(captured, tmp_path, n_rows):
    assert captured.err == ""
    header = captured.out.splitlines()[0]
    # 2**10 coalitions fit the default budget: exact values, no standard errors
    # the default model is a tree ensemble: "auto" explains it exactly with TreeSHAP,
    # without model calls per row
    assert re.match(rf"method: tree\s+evaluations per row: none \(exact, read off the "
                    rf"model\)\s+rows: {n_rows}\s+base value: \d+\.\d+$", header)
    table = _table(captured.out)
    assert sorted(name for name, _, _ in table) == DIABETES
    importance = [value for _, value, _ in table]
    assert importance == sorted(importance, reverse=True) and importance[-1] > 0
    assert all(error == 0.0 for _, _, error in table)
    png = tmp_path / "skshapley_summary.png"
    assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 10_000
    assert captured.out.rstrip().endswith("summary plot written to skshapley_summary.png")


def test_defaults_are_the_documented_ones():
    args = cli.build_parser().parse_args(["explain"])
    assert (args.data, args.target, args.model, args.rows, args.method, args.max_evals,
            args.background, args.output, args.random_state) == (
        None, None, None, 20, "auto", "auto", 100, "skshapley_summary.png", 0)
    assert (args.task, args.rows_from, args.values, args.model_params, args.model_file) == (
        "auto", "sample", None, None, None)
    model = _model.load_model(None)
    assert type(model).__name__ == "HistGradientBoostingRegressor"
    assert model.get_params()["random_state"] == 0


def test_default_run_prints_a_ranked_table_and_writes_the_png(tmp_path, monkeypatch, capsys):
    # The defaults, on fewer rows and background rows (the full run is the slow test below).
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "--rows", "5", "--background", "20"]) == ExitCode.OK
    _check_default_output(capsys.readouterr(), tmp_path, n_rows=5)


@pytest.mark.slow
def test_default_run_without_options(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["explain"]) == ExitCode.OK
    _check_default_output(capsys.readouterr(), tmp_path, n_rows=20)


def test_csv_with_target_and_sampling_options(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(80, 12)), columns=[f"f{j}" for j in range(12)])
    frame["y"] = 3 * frame["f0"] - frame["f5"]
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    common = ["explain", "--data", str(path), "--target", "y", "--output",
              str(tmp_path / "p.png"), "--max-evals", "100", *FAST]
    # A tree model is exact under "auto"; a k-NN model is not a tree, and 12 features
    # cannot be enumerated in 100 evaluations: "auto" picks the regression surrogate,
    # which spends them all.
    assert main([*common, "--model", "sklearn.tree:DecisionTreeRegressor"]) == ExitCode.OK
    assert "method: tree" in capsys.readouterr().out
    common += ["--method", "surrogate"]
    assert main([*common, "--model", "sklearn.tree:DecisionTreeRegressor"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "method: surrogate" in out and "evaluations per row: 100" in out
    table = _table(out)
    assert [name for name, _, _ in table][:2] == ["f0", "f5"]
    assert all(error > 0 for _, _, error in table[:2])  # sampled values carry errors
    assert (tmp_path / "p.png").read_bytes()[:8] == PNG_MAGIC
    # the model is seeded with --random-state: a second run prints the same table
    assert main([*common, "--model", "sklearn.tree:DecisionTreeRegressor"]) == ExitCode.OK
    assert capsys.readouterr().out == out
    # every ordering gives an additive model the same marginals: exact, zero errors
    assert main([*common, "--model", "sklearn.linear_model:LinearRegression"]) == ExitCode.OK
    table = _table(capsys.readouterr().out)
    assert [name for name, _, _ in table][:2] == ["f0", "f5"]
    assert all(error == 0 for _, _, error in table)


def test_classifiers_are_explained_on_their_default_response(tmp_path, capsys):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
    frame["label"] = np.where(frame["b"] > 0, "yes", "no")
    frame.to_csv(tmp_path / "binary.csv", index=False)
    frame["label"] = np.array(["low", "mid", "high"])[np.digitize(frame["c"], [-0.5, 0.5])]
    frame.to_csv(tmp_path / "three.csv", index=False)
    common = ["--model", "sklearn.linear_model:LogisticRegression", "--output",
              str(tmp_path / "p.png"), *FAST]
    assert main(["explain", "--data", str(tmp_path / "binary.csv"), "--target", "label",
                 *common]) == ExitCode.OK
    out = capsys.readouterr().out
    assert [name for name, _, _ in _table(out)][0] == "b"
    assert "outputs:" not in out
    assert main(["explain", "--data", str(tmp_path / "three.csv"), "--target", "label",
                 *common]) == ExitCode.OK
    out = capsys.readouterr().out
    assert [name for name, _, _ in _table(out)][0] == "c"
    assert "outputs: high, low, mid (table: mean over outputs; plot: high)" in out


@pytest.fixture
def csv_files(tmp_path):
    good = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [0.5, 0.1, 0.2, 0.3],
                         "y": [1.0, 0.0, 1.0, 2.0]})
    paths = {"missing": tmp_path / "no.csv", "dir": tmp_path}
    paths["text"] = tmp_path / "text.csv"
    good.assign(c=["x", "y", "z", "w"]).to_csv(paths["text"], index=False)
    paths["nan"] = tmp_path / "nan.csv"
    good.assign(a=[1.0, np.nan, 3.0, 4.0]).to_csv(paths["nan"], index=False)
    paths["inf"] = tmp_path / "inf.csv"
    good.assign(b=[1.0, np.inf, 3.0, 4.0]).to_csv(paths["inf"], index=False)
    paths["empty"] = tmp_path / "empty.csv"
    paths["empty"].write_text("")
    paths["header_only"] = tmp_path / "header.csv"
    paths["header_only"].write_text("a,b,y\n")
    paths["target_only"] = tmp_path / "target_only.csv"
    good[["y"]].to_csv(paths["target_only"], index=False)
    paths["text_target"] = tmp_path / "text_target.csv"
    good.assign(y=["neg", "pos", "neg", "pos"]).to_csv(paths["text_target"], index=False)
    paths["good"] = tmp_path / "good.csv"
    good.to_csv(paths["good"], index=False)
    paths["binary"] = tmp_path / "binary.csv"
    paths["binary"].write_bytes(b"\xff\xfe\x00\x01" * 50)
    return {name: str(path) for name, path in paths.items()}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--data", "{missing}", "--target", "y"], "no such file"),
        (["--data", "{dir}", "--target", "y"], "cannot read"),
        (["--data", "{empty}", "--target", "y"], "cannot read"),
        (["--data", "{header_only}", "--target", "y"], "no data rows"),
        (["--data", "{binary}", "--target", "y"], "cannot read"),
        (["--data", "{target_only}", "--target", "y"], "no feature columns"),
        (["--data", "{good}", "--target", "nope"], "target column 'nope' is not in"),
        (["--data", "{good}"], "--data needs --target"),
        (["--target", "y"], "--target needs --data"),
        (["--data", "{nan}", "--target", "y"],
         r"missing values \(NaN\) in columns \['a'\] .*which LinearRegression does not take"),
        (["--data", "{text_target}", "--target", "y"],
         r"target column 'y' is not numeric .*regressor; choose a classifier via --model"),
        (["--data", "{inf}", "--target", "y"], r"infinite values in columns \['b'\]"),
        (["--model", "sklearn.linear_model"], "module:Class"),
        (["--model", "sklearn.nothing_here:Ridge"], "cannot import module"),
        (["--model", "sklearn.linear_model:Nope"], "has no class 'Nope'"),
        (["--model", "sklearn.pipeline:Pipeline"], "cannot be built without arguments"),
        (["--model", "math:pi"], "has no class 'pi'"),
        (["--model", "collections:OrderedDict"], "not an estimator"),
        (["--method", "tree", "--model", "sklearn.linear_model:LinearRegression"],
         "cannot explain this model exactly"),
        (["--method", "foo"], r"--method 'foo' is not one of \['auto', 'tree', 'linear', 'exact'"),
        (["--n-jobs", "0"], r"argument --n-jobs: expected a non-zero integer .*got '0'"),
        (["--random-state", "-1"], r"argument --random-state: expected an integer in "
                                   r"\[0, 2\*\*32 - 1\], got '-1'"),
        (["--rows", "0"], "positive integer"),
        (["--rows", "x"], "positive integer"),
        (["--max-evals", "3", "--method", "permutation"], "too small"),
        (["--backend", "fastest"], "'backend' parameter"),
        (["--output", "{dir}"], "is a directory"),
        (["--output", "{missing}/sub/p.png"], "does not exist"),
        (["--output", "{dir}/p.txt"], r"cannot write \.txt files"),
        (["--no-such-option"], "unrecognized arguments"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, csv_files, capsys, args, message):
    args = [a.format(**csv_files) for a in args]
    output = [] if "--output" in args else ["--output", str(tmp_path / "p.png")]
    code = main(["explain", *FAST, *LINEAR, *output, *args])  # a later --model wins
    captured = capsys.readouterr()
    assert code == ExitCode.USAGE_ERROR
    assert re.search(message, _one_line_error(captured.err))
    assert captured.out == ""  # checks run before the work: no half-printed table
    assert not (tmp_path / "p.png").exists()


def test_unavailable_backend_exits_4(tmp_path, capsys):
    from skshapley.backends import available_backends

    if "cupy" in available_backends():
        pytest.skip("cupy works here")
    code = main(["explain", "--backend", "cupy", "--output", str(tmp_path / "p.png"), *FAST,
                 *LINEAR])
    assert code == ExitCode.BACKEND_UNAVAILABLE
    assert "Backend 'cupy' is unavailable" in _one_line_error(capsys.readouterr().err)


@pytest.fixture
def broken_model(tmp_path, monkeypatch):
    """A module ``broken_model`` whose estimator fits but fails to predict."""
    (tmp_path / "broken_model.py").write_text(
        "from sklearn.base import BaseEstimator, RegressorMixin\n"
        "class Broken(RegressorMixin, BaseEstimator):\n"
        "    def fit(self, X, y):\n"
        "        self.n_features_in_ = X.shape[1]\n"
        "        return self\n"
        "    def predict(self, X):\n"
        "        raise RuntimeError('the model broke\\non two lines')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return ["--model", "broken_model:Broken", "--output", str(tmp_path / "p.png"), *FAST]


def test_a_failing_computation_exits_1_with_one_line(broken_model, capsys):
    assert main(["explain", *broken_model]) == ExitCode.RUNTIME_ERROR
    line = _one_line_error(capsys.readouterr().err)
    assert line == "skshapley: error: the model broke on two lines"


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(broken_model, capsys, where):
    argv = ["--debug", "explain", *broken_model] if where == "before" \
        else ["explain", *broken_model, "--debug"]
    assert main(argv) == ExitCode.RUNTIME_ERROR
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: the model broke" in err
    assert err.rstrip().endswith("skshapley: error: the model broke on two lines")


def test_ctrl_c_exits_130(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli._explain, "run", interrupted)
    assert main(["explain"]) == ExitCode.INTERRUPTED
    assert capsys.readouterr().err == "skshapley: interrupted\n"


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == ExitCode.USAGE_ERROR
    assert "explain" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--help"], ["explain", "--help"], ["--version"]])
def test_help_and_version_exit_0(capsys, argv):
    assert main(argv) == ExitCode.OK
    out = capsys.readouterr().out
    assert ("usage: skshapley" in out) or re.fullmatch(r"skshapley \S+\n", out)


def test_exit_codes_are_published_numbers():
    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0, "RUNTIME_ERROR": 1, "USAGE_ERROR": 2, "BACKEND_UNAVAILABLE": 4,
        "INTERRUPTED": 130,
    }


def test_python_dash_m_runs(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "skshapley", "explain", "--rows", "3", "--output",
         str(tmp_path / "p.png")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=_subprocess_env(),
    )
    assert completed.returncode == 0, completed.stderr
    assert sorted(name for name, _, _ in _table(completed.stdout)) == DIABETES
    assert (tmp_path / "p.png").read_bytes()[:8] == PNG_MAGIC
    failed = subprocess.run([sys.executable, "-m", "skshapley", "explain", "--rows", "x"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert failed.returncode == 2
    _one_line_error(failed.stderr)


# pandas is a test extra, not a runtime dependency: `pip install . && skshapley explain`
# (the README's first command) must work without it, and --data says it needs it. A
# `pandas` package that fails to import, first on the path, stands for a missing one.
def _run_without_pandas(tmp_path, args):
    shadow = tmp_path / "no_pandas" / "pandas"
    shadow.mkdir(parents=True, exist_ok=True)
    (shadow / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'pandas'\")")
    env = {**_subprocess_env(), "PYTHONPATH": str(shadow.parent)}
    return subprocess.run([sys.executable, "-m", "skshapley", *args], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env=env)


def test_bundled_data_runs_without_pandas_and_csv_names_it(tmp_path):
    for command in ("explain", "attribute", "select"):
        completed = _run_without_pandas(tmp_path, [
            command, *([] if command == "attribute" else LINEAR),
            *(["--rows", "3"] if command == "explain" else []),
            *(["--max-evals", "60"] if command == "select" else []),
            "--output", str(tmp_path / f"{command}.png")])
        assert completed.returncode == 0, completed.stderr
        assert all(name in completed.stdout for name in DIABETES)
        assert (tmp_path / f"{command}.png").read_bytes()[:8] == PNG_MAGIC
    csv = tmp_path / "d.csv"
    csv.write_text("a,y\n1,2\n3,4\n")
    failed = _run_without_pandas(tmp_path, ["explain", "--data", str(csv), "--target", "y"])
    assert failed.returncode == 2
    assert "needs pandas" in _one_line_error(failed.stderr)


def test_a_closed_stdout_pipe_is_no_traceback(tmp_path):
    # The reader leaves before the table is written (`skshapley explain | head -0`).
    process = subprocess.Popen(
        [sys.executable, "-m", "skshapley", "explain", *FAST, *LINEAR, "--output",
         str(tmp_path / "p.png")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=_subprocess_env(),
    )
    process.stdout.close()
    _, err = process.communicate(timeout=300)
    assert process.returncode == ExitCode.RUNTIME_ERROR, err
    assert err == b""
    assert (tmp_path / "p.png").read_bytes()[:8] == PNG_MAGIC  # saved before the table


# -- skshapley attribute (LS-SPA) ---------------------------------------------------------


def _attribution_table(out):
    rows = [line.split() for line in out.splitlines() if re.match(r"\s*\d+\s", line)]
    return [(row[1], float(row[2]), float(row[3])) for row in rows]


def test_attribute_default_run_is_exact_and_sums_to_r2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["attribute"]) == ExitCode.OK
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "method: exact" in captured.out
    r2 = float(re.search(r"test R²: (-?\d+\.\d+)", captured.out).group(1))
    table = _attribution_table(captured.out)
    assert sorted(name for name, _, _ in table) == DIABETES
    assert abs(sum(value for _, value, _ in table) - r2) < 6e-4  # 11 rounded numbers
    assert all(error == 0.0 for _, _, error in table)
    png = tmp_path / "skshapley_attribution.png"
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_attribute_csv_sampled_with_error_bars(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(400, 14)), columns=[f"f{j}" for j in range(14)])
    frame["y"] = 3 * frame["f0"] - frame["f5"] + rng.normal(size=400)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    assert main(["attribute", "--data", str(path), "--target", "y", "--test-size", "0.3",
                 "--method", "permutation", "--max-samples", "512", "--alpha", "1",
                 "--output", str(tmp_path / "a.png")]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "train rows: 280   test rows: 120   alpha: 1" in out
    table = _attribution_table(out)
    assert [name for name, _, _ in table][:2] == ["f0", "f5"]
    assert all(error > 0 for _, _, error in table)


@pytest.mark.parametrize("args, message", [
    # bundled data: 10 features, so "auto" enumerates and never used the sampler
    (["--sampler", "foo"], "The 'sampler' parameter must be one of ['antithetic', "),
    (["--random-state", "-1"], "argument --random-state: expected an integer in"),
    (["--test-size", "1.5"], "argument --test-size: expected a number in (0, 1)"),
    (["--alpha", "-1"], "argument --alpha: expected a number >= 0"),
    (["--method", "fast"], "The 'method' parameter must be one of"),
    (["--target", "y"], "--target needs --data CSV"),
])
def test_attribute_bad_input_exits_2(tmp_path, capsys, args, message):
    assert main(["attribute", "--output", str(tmp_path / "a.png"), *args]) == \
        ExitCode.USAGE_ERROR
    assert message in _one_line_error(capsys.readouterr().err)


def test_attribute_refuses_text_columns(tmp_path, csv_files, capsys):
    # least-squares attribution needs numbers; the explainer and selector take text
    assert main(["attribute", "--data", str(csv_files["text"]), "--target", "y",
                 "--output", str(tmp_path / "a.png")]) == ExitCode.USAGE_ERROR
    assert re.search(r"non-numeric feature columns .*\['c'\]; encode them first",
                     _one_line_error(capsys.readouterr().err))


def _houses(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"area": rng.gamma(6.0, 15.0, 200),
                          "district": rng.choice(["north", "south", "east"], 200),
                          "noise": rng.normal(size=200),
                          "kind": rng.choice(["flat", "house"], 200)})
    frame["price"] = (2 * frame["area"] + np.where(frame["district"] == "north", 40.0, 0.0)
                      + np.where(frame["kind"] == "house", 25.0, 0.0))
    frame.to_csv(tmp_path / "houses.csv", index=False)
    return tmp_path / "houses.csv"


@pytest.mark.parametrize("model", [None, "sklearn.linear_model:Ridge"])
def test_select_takes_text_columns_as_they_are(tmp_path, capsys, model):
    args = ["select", "--data", str(_houses(tmp_path)), "--target", "price", "--k", "3",
            "--max-evals", "100", "--output", str(tmp_path / "s.png")]
    assert main(args + (["--model", model] if model else [])) == ExitCode.OK
    out = capsys.readouterr().out
    kept = [line.split()[1] for line in out.splitlines() if " yes " in line]
    assert sorted(kept) == ["area", "district", "kind"]


@pytest.mark.parametrize("model", [None, "sklearn.linear_model:Ridge"])
def test_explain_takes_text_columns_as_they_are(tmp_path, capsys, model):
    # a text column is one feature, encoded for the model (the default
    # HistGradientBoosting's own categorical features, explained exactly by TreeSHAP;
    # one-hot for others) and explained as itself
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"area": rng.gamma(6.0, 15.0, 200),
                          "district": rng.choice(["north", "south", "east"], 200),
                          "kind": rng.choice(["flat", "house"], 200)})
    frame["price"] = (2 * frame["area"] + np.where(frame["district"] == "north", 40.0, 0.0)
                      + np.where(frame["kind"] == "house", 25.0, 0.0))
    frame.to_csv(tmp_path / "houses.csv", index=False)
    args = ["explain", "--data", str(tmp_path / "houses.csv"), "--target", "price",
            "--rows", "6", "--output", str(tmp_path / "h.png")]
    assert main(args + (["--model", model] if model else [])) == ExitCode.OK
    out = capsys.readouterr().out
    table = _table(out)
    assert sorted(name for name, _, _ in table) == ["area", "district", "kind"]
    assert f"method: {'linear' if model else 'tree'}" in out
    assert all(value > 0 for _, value, _ in table)


def test_attribute_constant_column_is_a_null_player(tmp_path, capsys):
    # a constant column carries no information: the minimum-norm least squares (as
    # ls-spa and LinearRegression fit it) gives it exactly 0 (it used to be refused)
    frame = pd.DataFrame({"a": np.arange(20.0), "b": np.ones(20), "y": np.arange(20.0) ** 2})
    frame.to_csv(tmp_path / "c.csv", index=False)
    assert main(["attribute", "--data", str(tmp_path / "c.csv"), "--target", "y",
                 "--output", str(tmp_path / "a.png")]) == ExitCode.OK
    out = capsys.readouterr().out
    line = next(row for row in out.splitlines() if re.match(r"\s*\d+\s+b\s", row))
    assert float(line.split()[2]) == 0.0


def test_attribute_help_prints_percent_signs_once(capsys):
    # the description is not %-formatted by argparse, the option help is
    assert main(["attribute", "--help"]) == ExitCode.OK
    text = " ".join(capsys.readouterr().out.split())
    assert "%%" not in text
    assert "its 95 % error bar" in text and "estimated 95 % error is below TOL" in text


def _csv_driven_by_a(tmp_path, target):
    """80 rows of features a (NaN in every tenth row) and b, and a target driven by a:
    numbers ("y") or text labels ("label")."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    frame["y"] = 3 * frame["a"] + 0.1 * rng.normal(size=80)
    frame["label"] = np.where(frame["a"] > 0, "pos", "neg")
    frame.loc[::10, "a"] = np.nan
    path = tmp_path / f"{target}.csv"
    frame.drop(columns=[c for c in ("y", "label") if c != target]).to_csv(path, index=False)
    return str(path)


def test_explain_lets_nan_through_to_a_model_that_takes_it(tmp_path, capsys):
    # the default HistGradientBoostingRegressor handles NaN itself (allow_nan tag)
    args = ["explain", "--data", _csv_driven_by_a(tmp_path, "y"), "--target", "y",
            "--rows", "20", "--output", str(tmp_path / "p.png")]
    assert main([*args, "--model", "sklearn.linear_model:Ridge"]) == ExitCode.USAGE_ERROR
    assert "missing values (NaN) in columns ['a']" in _one_line_error(capsys.readouterr().err)
    assert main(args) == ExitCode.OK  # rows 0 and 10 hold NaN
    captured = capsys.readouterr()
    assert captured.err == "" and "method: tree" in captured.out
    table = dict((name, value) for name, value, _ in _table(captured.out))
    assert table["a"] > 10 * table["b"] > 0  # y is 3 a plus noise: a dominates


def test_explain_still_refuses_infinity_for_a_model_that_takes_nan(csv_files, tmp_path,
                                                                      capsys):
    assert main(["explain", "--data", csv_files["inf"], "--target", "y",
                 "--output", str(tmp_path / "p.png")]) == ExitCode.USAGE_ERROR
    assert "infinite values in columns ['b']" in _one_line_error(capsys.readouterr().err)


def test_explain_fits_a_classifier_to_a_text_target(tmp_path, capsys):
    # as select does: the default model becomes HistGradientBoostingClassifier
    path = _csv_driven_by_a(tmp_path, "label")
    assert main(["explain", "--data", path, "--target", "label", "--rows", "5",
                 "--output", str(tmp_path / "p.png")]) == ExitCode.OK
    out = capsys.readouterr().out
    # one output, the log-odds of "pos"; the label is the sign of a, which b does not
    # predict (the booster still fits some noise on 80 rows)
    assert "method: tree" in out and "outputs:" not in out
    (first, a_value, _), (second, b_value, _) = _table(out)
    assert (first, second) == ("a", "b") and a_value > 3 * b_value


def test_lightgbm_models_are_silenced(tmp_path, capfd):
    pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    frame["y"] = frame["a"] - frame["b"]
    frame.to_csv(tmp_path / "d.csv", index=False)
    assert main(["explain", "--data", str(tmp_path / "d.csv"), "--target", "y",
                 "--model", "lightgbm:LGBMRegressor", "--rows", "2",
                 "--output", str(tmp_path / "p.png")]) == ExitCode.OK
    captured = capfd.readouterr()
    assert "[LightGBM]" not in captured.out + captured.err  # 100+ lines before verbose=-1
    assert "method: tree" in captured.out


def test_getting_started_names_every_command():
    text = (pathlib.Path(__file__).resolve().parents[1] / "doc" / "getting_started"
            / "index.rst").read_text()
    commands = cli.build_parser()._subparsers._group_actions[0].choices
    assert set(commands) == {"explain", "select", "importance", "attribute", "quantile",
                             "bench"}
    sentence = " ".join(text[text.index("Every capability is also a command"):].split())
    assert all(re.search(rf"``(skshapley )?{name}``", sentence[:200]) for name in commands)


# Issue 28: outputs, duplicate headers, typos, degenerate targets, workers, --model.

def _regression_csv(tmp_path, n=20, name="d.csv"):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    frame["y"] = 2 * frame["a"] - frame["b"]
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_an_output_that_is_the_data_file_is_refused_and_the_data_kept(tmp_path, capsys):
    data = _regression_csv(tmp_path)
    before = data.read_bytes()
    link = tmp_path / "plot.png"
    os.link(data, link)  # another name of the same file: os.path.samefile sees through it
    for command in ("explain", "select", "attribute"):
        code = main([command, "--data", str(data), "--target", "y",
                     *(["--k", "1"] if command == "select" else []), "--output", str(link)])
        assert code == ExitCode.USAGE_ERROR, command
        line = _one_line_error(capsys.readouterr().err)
        assert f"--output {str(link)!r} is the same file as --data" in line
        assert data.read_bytes() == before


def test_an_output_without_suffix_is_reported_by_the_name_written(tmp_path, capsys):
    data = _regression_csv(tmp_path)
    assert main(["explain", "--data", str(data), "--target", "y", *LINEAR, *FAST,
                 "--output", str(tmp_path / "plotfile")]) == ExitCode.OK
    out = capsys.readouterr().out
    # matplotlib appends .png to a name without suffix; the message said "plotfile"
    assert out.rstrip().endswith(f"summary plot written to {tmp_path / 'plotfile.png'}")
    assert (tmp_path / "plotfile.png").read_bytes()[:8] == PNG_MAGIC
    assert not (tmp_path / "plotfile").exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_an_error_not_success(tmp_path, capsys):
    # /dev/full fails every write with ENOSPC; the plot used to go to /dev/full.png
    stray = pathlib.Path("/dev/full.png")
    before = stray.stat().st_mtime_ns if stray.exists() else None
    assert main(["explain", *LINEAR, *FAST, "--output", "/dev/full"]) == ExitCode.USAGE_ERROR
    line = _one_line_error(capsys.readouterr().err)
    assert "cannot write --output '/dev/full'" in line
    assert (stray.stat().st_mtime_ns if stray.exists() else None) == before


def test_a_failed_plot_write_keeps_the_old_file_and_leaves_no_partial_one(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = tmp_path / "p.png"
    path.write_bytes(b"old plot")
    figure = plt.figure()

    def half_written(name, **kwargs):
        pathlib.Path(name).write_bytes(PNG_MAGIC)
        raise OSError(28, "No space left on device")

    figure.savefig = half_written
    with pytest.raises(cli.UsageError, match=r"cannot write --output .*No space left"):
        _common.save_figure(figure, str(path))
    assert path.read_bytes() == b"old plot"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.png"]  # no temporary file


@pytest.mark.parametrize("command", ["explain", "select", "attribute"])
def test_duplicate_column_names_are_refused(tmp_path, capsys, command):
    # pandas renames the second y to y.1, which became a feature: the target leaked
    path = tmp_path / "dup.csv"
    rows = [f"{a},{a + 1},{2 * a},{2 * a}" for a in range(20)]
    path.write_text("a,b,y,y\n" + "\n".join(rows) + "\n")
    code = main([command, "--data", str(path), "--target", "y",
                 "--output", str(tmp_path / "p.png")])
    assert code == ExitCode.USAGE_ERROR
    assert re.search(r"duplicate column names in .*dup\.csv'?: \['y'\]",
                     _one_line_error(capsys.readouterr().err))


@pytest.mark.parametrize("command", ["explain", "select"])
def test_a_typo_in_a_numeric_column_is_refused_with_its_row(tmp_path, capsys, command):
    frame = pd.read_csv(_regression_csv(tmp_path, n=20))
    frame["a"] = frame["a"].astype(object)
    frame.loc[6, "a"] = "oops"  # the column became text, encoded as 20 categories
    frame.to_csv(tmp_path / "typo.csv", index=False)
    code = main([command, "--data", str(tmp_path / "typo.csv"), "--target", "y",
                 "--output", str(tmp_path / "p.png")])
    assert code == ExitCode.USAGE_ERROR
    line = _one_line_error(capsys.readouterr().err)
    assert "column 'a' of" in line and "except for 1 cell, the first 'oops' in data row 7 " \
                                      "(line 8)" in line


def test_a_text_column_with_some_numbers_stays_text(tmp_path, capsys):
    # a genuine text column is not a typo: four labels, one of them a number
    frame = pd.read_csv(_regression_csv(tmp_path, n=20))
    frame["kind"] = ["x", "y", "z", "3"] * 5
    frame.to_csv(tmp_path / "kinds.csv", index=False)
    assert main(["explain", "--data", str(tmp_path / "kinds.csv"), "--target", "y",
                 *LINEAR, *FAST, "--output", str(tmp_path / "p.png")]) == ExitCode.OK
    assert "kind" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["explain", "select", "attribute"])
def test_a_constant_target_is_refused(tmp_path, capsys, command):
    # select used to report "the PAC rule holds" and keep two columns
    frame = pd.read_csv(_regression_csv(tmp_path, n=20)).assign(y=5.0)
    frame.to_csv(tmp_path / "const.csv", index=False)
    code = main([command, "--data", str(tmp_path / "const.csv"), "--target", "y",
                 "--output", str(tmp_path / "p.png")])
    assert code == ExitCode.USAGE_ERROR
    assert "target column 'y' of" in (line := _one_line_error(capsys.readouterr().err))
    assert "has one value (5.0) in all 20 rows" in line


def test_a_single_class_target_is_refused_for_a_classifier(tmp_path, capsys):
    frame = pd.read_csv(_regression_csv(tmp_path, n=20)).assign(y="yes")
    frame.to_csv(tmp_path / "one_class.csv", index=False)
    code = main(["explain", "--data", str(tmp_path / "one_class.csv"), "--target", "y",
                 "--output", str(tmp_path / "p.png")])
    assert code == ExitCode.USAGE_ERROR
    assert "has one value ('yes')" in _one_line_error(capsys.readouterr().err)


def test_too_few_rows_are_refused(tmp_path, capsys):
    path = tmp_path / "one.csv"
    path.write_text("a,b,y\n1,2,3\n")
    assert main(["explain", "--data", str(path), "--target", "y",
                 "--output", str(tmp_path / "p.png")]) == ExitCode.USAGE_ERROR
    assert "has 1 data row; fitting a model" in _one_line_error(capsys.readouterr().err)
    _regression_csv(tmp_path, n=7, name="seven.csv")
    assert main(["select", "--data", str(tmp_path / "seven.csv"), "--target", "y", "--k", "1",
                 "--output", str(tmp_path / "p.png")]) == ExitCode.USAGE_ERROR
    line = _one_line_error(capsys.readouterr().err)
    assert "has 7 rows; select scores each subset on held-out rows and needs at least 8" \
        in line


def test_workers_are_capped_at_the_rows_and_the_cores(tmp_path, monkeypatch, capsys):
    import skshapley

    seen = []

    class Recording(skshapley.ShapleyExplainer):
        def fit(self, X, y):
            seen.append(self.n_jobs)
            return super().fit(X, y)

    monkeypatch.setattr(skshapley, "ShapleyExplainer", Recording)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    data = _regression_csv(tmp_path, n=20)
    common = ["explain", "--data", str(data), "--target", "y", *LINEAR, "--background", "5",
              "--output", str(tmp_path / "p.png")]
    assert main([*common, "--rows", "4", "--n-jobs", "1000"]) == ExitCode.OK
    assert main([*common, "--rows", "20", "--n-jobs", "1000"]) == ExitCode.OK
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert main([*common, "--rows", "20", "--n-jobs", "-1"]) == ExitCode.OK
    assert main([*common, "--rows", "20"]) == ExitCode.OK
    assert seen == [4, 20, 2, None]  # 1000 jobs on 4 rows started ~170 processes
    assert _common.n_workers(-2, 100) == 1  # all cores but one, of 2


@pytest.mark.parametrize("spec, message", [
    ("os:getcwd", "has no class 'getcwd' (getcwd is a builtin_function_or_method)"),
    ("builtins:exit", "has no class 'exit'"),
    ("pathlib:Path", "is not an estimator: give a scikit-learn estimator class"),
])
def test_model_accepts_only_estimator_classes(tmp_path, capsys, spec, message):
    assert main(["explain", *FAST, "--model", spec,
                 "--output", str(tmp_path / "p.png")]) == ExitCode.USAGE_ERROR
    assert message in _one_line_error(capsys.readouterr().err)


def test_model_callables_that_are_no_estimator_class_are_not_called(tmp_path, monkeypatch,
                                                                     capsys):
    (tmp_path / "side_effects.py").write_text(
        "import pathlib\n"
        "def make():\n"
        f"    pathlib.Path({str(tmp_path / 'called')!r}).write_text('ran')\n"
        "class Plain:\n"
        "    def __init__(self):\n"
        f"        pathlib.Path({str(tmp_path / 'built')!r}).write_text('ran')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for spec in ("side_effects:make", "side_effects:Plain"):
        assert main(["explain", *FAST, "--model", spec,
                     "--output", str(tmp_path / "p.png")]) == ExitCode.USAGE_ERROR
        _one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "called").exists() and not (tmp_path / "built").exists()


def test_python_dash_m_does_not_import_models_from_the_current_directory(tmp_path):
    (tmp_path / "local_model.py").write_text(
        "import pathlib\n"
        "pathlib.Path('imported').write_text('ran')\n"
        "from sklearn.linear_model import LinearRegression as Model\n")
    completed = subprocess.run(
        [sys.executable, "-m", "skshapley", "explain", *FAST, "--model", "local_model:Model",
         "--output", str(tmp_path / "p.png")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=_subprocess_env())
    assert completed.returncode == 2
    assert "cannot import module 'local_model'" in _one_line_error(completed.stderr)
    assert not (tmp_path / "imported").exists()


@pytest.mark.parametrize("command", ["explain", "select"])
def test_help_says_what_model_imports_and_that_outputs_are_overwritten(capsys, command):
    assert main([command, "--help"]) == ExitCode.OK
    text = " ".join(capsys.readouterr().out.split())
    assert "MODULE is imported (its code runs)" in text
    assert "not from the current directory" in text
    assert "an existing file is overwritten" in text


@pytest.mark.parametrize("command", ["explain", "select", "attribute"])
def test_an_all_missing_column_is_refused_by_name(tmp_path, capsys, command):
    # issue 28: explain's default model (HistGradientBoosting, which takes NaN) failed
    # on it with numpy's "window shape cannot be larger than input array shape"
    frame = pd.read_csv(_regression_csv(tmp_path, n=20)).assign(empty=np.nan)
    frame.to_csv(tmp_path / "empty.csv", index=False)
    code = main([command, "--data", str(tmp_path / "empty.csv"), "--target", "y",
                 "--output", str(tmp_path / "p.png")])
    assert code == ExitCode.USAGE_ERROR
    line = _one_line_error(capsys.readouterr().err)
    assert re.search(r"feature columns \['empty'\] of '.*empty\.csv' have no values "
                     r"\(every cell is missing\); drop them$", line)
    assert not (tmp_path / "p.png").exists()
