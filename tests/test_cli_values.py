"""``skshapley explain`` as a shap user meets it (issue 29): ``--values`` writes the
values, ``--rows`` samples rows, and exact methods say "exact"."""

import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error as _one_line_error
from cli_helpers import one_openmp_thread  # noqa: F401  (autouse fixture)

from skshapley.cli import ExitCode, main

LINEAR = ["--model", "sklearn.linear_model:LinearRegression"]




@pytest.fixture
def data(tmp_path):
    """100 rows sorted by the target: the first half is class 0, the second class 1."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": np.sort(rng.normal(size=100)), "b": rng.normal(size=100),
                          "c": rng.normal(size=100)})
    frame["y"] = 3 * frame["a"] - frame["b"]
    frame["label"] = (frame["a"] > frame["a"].median()).astype(int)
    path = tmp_path / "sorted.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _explain(path, tmp_path, *args, target="y"):
    return main(["explain", "--data", str(path), "--target", target, "--background", "20",
                 "--output", str(tmp_path / "p.png"), *args])


# -- --values ---------------------------------------------------------------------------


def test_values_add_up_to_the_model_output(data, tmp_path, capsys):
    from sklearn.linear_model import LinearRegression

    path, frame = data
    values = tmp_path / "values.csv"
    assert _explain(path, tmp_path, *LINEAR, "--rows", "7", "--values", str(values)) \
        == ExitCode.OK
    out = capsys.readouterr().out
    assert out.rstrip().endswith(f"values written to {values}")
    table = pd.read_csv(values)
    assert list(table.columns) == ["row", "a", "b", "c", "label", "base_value"]
    assert len(table) == 7 and table["row"].is_monotonic_increasing
    # efficiency: base value + sum of the values is the model's prediction on that row,
    # exactly for a linear model (closed form)
    X = frame[["a", "b", "c", "label"]]
    model = LinearRegression().fit(X, frame["y"])
    np.testing.assert_allclose(
        table[["a", "b", "c", "label"]].sum(axis=1) + table["base_value"],
        model.predict(X.iloc[table["row"]]), rtol=1e-10)


def _wide_csv(tmp_path):
    """8 features, too many to enumerate in 60 evaluations: a tree's values are sampled."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.normal(size=(80, 8)), columns=[f"f{j}" for j in range(8)])
    frame["y"] = 3 * frame["f0"] * frame["f1"] - frame["f2"]
    frame.to_csv(tmp_path / "wide.csv", index=False)
    return tmp_path / "wide.csv"


SAMPLED = ["--model", "sklearn.tree:DecisionTreeRegressor", "--method", "permutation",
           "--max-evals", "60"]


def test_values_errors_are_extra_columns(data, tmp_path):
    values = tmp_path / "values.csv"
    assert _explain(_wide_csv(tmp_path), tmp_path, *SAMPLED, "--rows", "3",
                    "--values", str(values), "--values-errors") == ExitCode.OK
    table = pd.read_csv(values)
    features = [f"f{j}" for j in range(8)]
    assert list(table.columns) == ["row", *features, "base_value",
                                   *(f"{f}_se" for f in features)]
    # sampled values carry errors: y's features are estimated with some in every row
    assert (table[["f0_se", "f1_se", "f2_se"]].sum(axis=1) > 0).all()
    assert np.isfinite(table.to_numpy()).all()
    # exact: every error is 0
    path, _ = data
    assert _explain(path, tmp_path, *LINEAR, "--rows", "3", "--values", str(values),
                    "--values-errors") == ExitCode.OK
    table = pd.read_csv(values)
    assert list(table.columns)[-4:] == ["a_se", "b_se", "c_se", "label_se"]
    assert (table.filter(like="_se") == 0).all().all()


def test_values_of_several_outputs_have_a_column_per_feature_and_class(tmp_path, capsys):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(60, 2)), columns=["a", "b"])
    frame["kind"] = np.array(["lo", "mid", "hi"])[np.digitize(frame["a"], [-0.4, 0.4])]
    frame.to_csv(tmp_path / "three.csv", index=False)
    values = tmp_path / "v.csv"
    assert _explain(tmp_path / "three.csv", tmp_path, "--rows", "5", "--values", str(values),
                    "--values-errors", "--model", "sklearn.linear_model:LogisticRegression",
                    target="kind") == ExitCode.OK
    table = pd.read_csv(values)
    classes = ["hi", "lo", "mid"]
    assert list(table.columns) == [
        "row", *(f"{f}[{c}]" for f in ("a", "b") for c in classes),
        *(f"base_value[{c}]" for c in classes),
        *(f"{f}[{c}]_se" for f in ("a", "b") for c in classes)]
    assert len(table) == 5 and np.isfinite(table.to_numpy()).all()


def test_values_that_are_the_data_file_are_refused_before_the_work(data, tmp_path, capsys):
    path, _ = data
    before = path.read_bytes()
    link = tmp_path / "values.csv"
    os.link(path, link)
    assert _explain(path, tmp_path, *LINEAR, "--values", str(link)) == ExitCode.USAGE_ERROR
    captured = capsys.readouterr()
    assert f"--values {str(link)!r} is the same file as --data" in \
        _one_line_error(captured.err)
    assert path.read_bytes() == before and captured.out == ""
    assert not (tmp_path / "p.png").exists()
    assert _explain(path, tmp_path, *LINEAR, "--values", str(tmp_path / "p.png")) == \
        ExitCode.USAGE_ERROR
    assert "--values" in _one_line_error(capsys.readouterr().err)


@pytest.mark.parametrize("where, message", [
    ("{tmp}", "--values '{tmp}' is a directory"),
    ("{tmp}/no/v.csv", "--values '{tmp}/no/v.csv': directory '{tmp}/no' does not exist"),
])
def test_unwritable_values_are_refused_before_the_work(data, tmp_path, capsys, where,
                                                       message):
    path, _ = data
    where, message = (s.format(tmp=tmp_path) for s in (where, message))
    assert _explain(path, tmp_path, *LINEAR, "--values", where) == ExitCode.USAGE_ERROR
    assert message in _one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "p.png").exists()


def test_a_failed_values_write_keeps_the_old_file(data, tmp_path, capsys, monkeypatch):
    from skshapley.cli import _values as _cli_values

    path, _ = data
    values = tmp_path / "v.csv"
    values.write_text("old values\n")

    def failing_writer(handle):
        handle.write("row,a\n")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_cli_values.csv, "writer", failing_writer)
    assert _explain(path, tmp_path, *LINEAR, "--rows", "3", "--values", str(values)) == \
        ExitCode.USAGE_ERROR
    assert f"cannot write --values {str(values)!r}: No space left on device" in \
        _one_line_error(capsys.readouterr().err)
    assert values.read_text() == "old values\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.png", "sorted.csv", "v.csv"]


def test_a_feature_named_like_a_values_column_is_refused(tmp_path, capsys):
    frame = pd.DataFrame({"row": np.arange(10.0), "b": np.ones(10) % 3, "y": np.arange(10.0)})
    frame.to_csv(tmp_path / "d.csv", index=False)
    assert _explain(tmp_path / "d.csv", tmp_path, *LINEAR, "--values",
                    str(tmp_path / "v.csv")) == ExitCode.USAGE_ERROR
    assert "--values: the columns ['row'] would be written twice" in \
        _one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "p.png").exists()


def test_values_of_the_bundled_data_need_no_pandas(tmp_path):
    # as the bundled data's plot and table: pandas is a test extra, not a dependency
    shadow = tmp_path / "no_pandas" / "pandas"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'pandas'\")")
    completed = subprocess.run(
        [sys.executable, "-m", "skshapley", "explain", *LINEAR, "--rows", "2", "--values",
         str(tmp_path / "v.csv"), "--output", str(tmp_path / "p.png")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(shadow.parent)})
    assert completed.returncode == 0, completed.stderr
    lines = (tmp_path / "v.csv").read_text().splitlines()
    assert lines[0] == "row,age,sex,bmi,bp,s1,s2,s3,s4,s5,s6,base_value" and len(lines) == 3


# -- --rows samples ---------------------------------------------------------------------


def test_rows_are_sampled_seeded_and_kept_in_order(data, tmp_path, capsys):
    path, _ = data
    values = tmp_path / "v.csv"

    def explained_rows(*args):
        assert _explain(path, tmp_path, *LINEAR, "--rows", "10", "--values", str(values),
                        *args) == ExitCode.OK
        return pd.read_csv(values)["row"].tolist()

    rows = explained_rows()
    # sorted data: the first 10 rows are all class 0; a sample holds both halves
    assert rows == sorted(rows) and len(set(rows)) == 10
    assert min(rows) < 50 <= max(rows)
    assert explained_rows() == rows  # seeded by --random-state (default 0)
    assert explained_rows("--random-state", "1") != rows
    assert explained_rows("--rows-from", "start") == list(range(10))


def test_a_classifier_on_sorted_data_sees_both_classes(data, tmp_path, capsys):
    path, _ = data
    values = tmp_path / "v.csv"
    assert _explain(path, tmp_path, "--rows", "10", "--values", str(values),
                    target="label") == ExitCode.OK
    table = pd.read_csv(values)
    # log-odds of class 1: the explained rows' predictions fall on both sides of 0
    margins = table[["a", "b", "c", "y"]].sum(axis=1) + table["base_value"]
    assert (margins < 0).any() and (margins > 0).any()


def test_more_rows_than_the_data_explains_them_all(data, tmp_path, capsys):
    path, _ = data
    values = tmp_path / "v.csv"
    assert _explain(path, tmp_path, *LINEAR, "--rows", "500", "--values", str(values)) == \
        ExitCode.OK
    assert pd.read_csv(values)["row"].tolist() == list(range(100))
    assert "rows: 100" in capsys.readouterr().out


# -- "exact" ----------------------------------------------------------------------------


@pytest.mark.parametrize("args, evaluations, error", [
    (["--method", "linear"], r"none \(exact, read off the model\)", "exact"),
    (["--method", "exact"], r"16 \(exact\)", "exact"),
    (["--model", "sklearn.tree:DecisionTreeRegressor"],
     r"none \(exact, read off the model\)", "exact"),
    (SAMPLED, r"\d+", r"\d+\.\d{4}"),
])
def test_exact_methods_say_exact(data, tmp_path, capsys, args, evaluations, error):
    # "evaluations per row: 0" and "std. error 0.0000" read as nothing done and no error
    path = data[0] if args is not SAMPLED else _wide_csv(tmp_path)
    assert _explain(path, tmp_path, *LINEAR, "--rows", "3", *args) == ExitCode.OK
    out = capsys.readouterr().out
    assert re.search(rf"evaluations per row: {evaluations}   rows: 3", out)
    assert "evaluations per row: 0" not in out
    ranked = [line.split() for line in out.splitlines() if re.match(r"\s*\d+\s", line)]
    assert len(ranked) in (4, 8) and all(re.fullmatch(error, row[-1]) for row in ranked)
