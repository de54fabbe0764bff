"""The model the CLI fits (issue 29): one task rule for explain and select (``--task``),
``--model-params``, and a fitted model loaded with skops (``--model-file``, ``--trust``)."""

import re
import sys

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error as _one_line_error
from cli_helpers import one_openmp_thread  # noqa: F401  (autouse fixture)

from skshapley.cli import ExitCode, main
from skshapley.cli import _model as _cli_model

FAST = ["--rows", "4", "--background", "10"]
# select's default k (5) is more than the 2 features of these files
_K = {"explain": [], "select": ["--k", "1"]}




def _labels_csv(tmp_path, labels, name="labels.csv", n=90):
    """Features a, b and a target ``label``: ``labels[k]`` where a falls in the k-th third."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    frame["label"] = np.asarray(labels)[np.digitize(frame["a"], [-0.43, 0.43])]
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


# -- the task rule --------------------------------------------------------------------


@pytest.mark.parametrize("y, is_classes", [
    (np.array([0, 1, 1, 0]), True),                     # cancer: 0/1 integers
    (np.array([0.0, 1.0, 2.0, 1.0]), True),             # wine written as floats
    (np.arange(20), True),                              # 20 distinct integers: the limit
    (np.arange(21), False),                             # 21: a count, regressed
    (np.array([151.0, 75.0, 141.0] * 10) + np.arange(30), False),  # diabetes-like
    (np.array([0.5, 1.0, 1.5]), False),                 # not all integers
    (np.array(["no", "yes", "no"], dtype=object), True),
    (np.array([True, False, True]), True),
])
def test_the_task_rule_reads_few_integers_text_and_booleans_as_classes(y, is_classes):
    assert _cli_model.is_classification(y, "auto") is is_classes
    # the flag overrides the rule either way
    assert _cli_model.is_classification(y, "classification") is True
    assert _cli_model.is_classification(y, "regression") is False


@pytest.mark.parametrize("labels, n_classes", [([0, 1, 1], 2), ([0, 1, 2], 3)])
def test_explain_fits_a_classifier_to_integer_labels(tmp_path, capsys, labels, n_classes):
    # issue 29: cancer's 0/1 and wine's 0/1/2 were regressed by explain
    path = _labels_csv(tmp_path, labels)
    assert main(["explain", "--data", str(path), "--target", "label", *FAST,
                 "--output", str(tmp_path / "p.png")]) == ExitCode.OK
    out = capsys.readouterr().out
    assert (f"model: HistGradientBoostingClassifier, classification (auto: target 'label' "
            f"holds {n_classes} distinct integer values; --task overrides)") in out
    if n_classes == 3:
        assert "outputs: 0, 1, 2 (table: mean over outputs" in out
    assert main(["explain", "--data", str(path), "--target", "label", *FAST, "--task",
                 "regression", "--output", str(tmp_path / "p.png")]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "model: HistGradientBoostingRegressor, regression (--task)" in out
    assert "outputs:" not in out


@pytest.mark.parametrize("command, classifier", [
    ("explain", "HistGradientBoostingClassifier"), ("select", "RandomForestClassifier")])
def test_explain_and_select_share_the_rule(tmp_path, capsys, command, classifier):
    # 0/1 written as floats ("0.0"): select read only integer dtypes as classes
    path = _labels_csv(tmp_path, [0.0, 1.0, 1.0])
    assert pd.read_csv(path)["label"].dtype == np.float64
    extra = ["--k", "1", "--max-evals", "20"] if command == "select" else FAST
    assert main([command, "--data", str(path), "--target", "label", *extra,
                 "--output", str(tmp_path / "p.png")]) == ExitCode.OK
    assert (f"model: {classifier}, classification (auto: target 'label' holds 2 distinct "
            "integer values; --task overrides)") in capsys.readouterr().out


@pytest.mark.parametrize("command", ["explain", "select"])
def test_help_states_the_rule(capsys, command):
    assert main([command, "--help"]) == ExitCode.OK
    text = " ".join(capsys.readouterr().out.split())
    assert "{auto,classification,regression}" in text
    assert "of at most 20 distinct values that are all integers" in text


@pytest.mark.parametrize("args, message", [
    (["--task", "classification", "--model", "sklearn.linear_model:LinearRegression"],
     "--task classification, but LinearRegression is a regressor"),
    (["--task", "regression", "--model", "sklearn.linear_model:LogisticRegression"],
     "--task regression, but LogisticRegression is a classifier"),
    (["--task", "classify"], "argument --task: invalid choice: 'classify'"),
])
@pytest.mark.parametrize("command", ["explain", "select"])
def test_a_task_against_the_model_is_refused(tmp_path, capsys, command, args, message):
    path = _labels_csv(tmp_path, [0, 1, 2])
    assert main([command, "--data", str(path), "--target", "label", *args, *_K[command],
                 "--output", str(tmp_path / "p.png")]) == ExitCode.USAGE_ERROR
    captured = capsys.readouterr()
    assert message in _one_line_error(captured.err) and captured.out == ""
    assert not (tmp_path / "p.png").exists()


def test_a_task_against_the_target_is_refused(tmp_path, capsys):
    frame = pd.read_csv(_labels_csv(tmp_path, ["lo", "mid", "hi"]))
    frame.to_csv(tmp_path / "text.csv", index=False)
    frame.assign(label=frame["a"] * 2).to_csv(tmp_path / "real.csv", index=False)
    common = ["--output", str(tmp_path / "p.png"), *FAST]
    assert main(["explain", "--data", str(tmp_path / "text.csv"), "--target", "label",
                 "--task", "regression", *common]) == ExitCode.USAGE_ERROR
    assert "--task regression needs a numeric target; column 'label' holds text" in \
        _one_line_error(capsys.readouterr().err)
    assert main(["explain", "--data", str(tmp_path / "real.csv"), "--target", "label",
                 "--task", "classification", *common]) == ExitCode.USAGE_ERROR
    assert "--task classification needs class labels; column 'label' holds numbers that " \
           "are not integers" in _one_line_error(capsys.readouterr().err)


def test_attribute_says_when_its_target_looks_like_classes(tmp_path, capsys):
    path = _labels_csv(tmp_path, [0, 1, 2])
    assert main(["attribute", "--data", str(path), "--target", "label",
                 "--output", str(tmp_path / "a.png")]) == ExitCode.OK
    assert ("note: target 'label' holds 3 distinct integer values, which explain and "
            "select read as class labels") in capsys.readouterr().out


# -- --model-params -------------------------------------------------------------------


def _regression_csv(tmp_path, name="d.csv", n=60):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    frame["y"] = 3 * frame["a"] - frame["b"]
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_model_params_reach_the_model(tmp_path, capsys):
    # a tree of depth 1 splits once, on a (3 a - b): b gets exactly 0 in every row
    path = _regression_csv(tmp_path)
    values = tmp_path / "v.csv"
    assert main(["explain", "--data", str(path), "--target", "y", *FAST,
                 "--model", "sklearn.tree:DecisionTreeRegressor",
                 "--model-params", '{"max_depth": 1}', "--values", str(values),
                 "--output", str(tmp_path / "p.png")]) == ExitCode.OK
    table = pd.read_csv(values)
    assert (table["b"] == 0).all() and (table["a"] != 0).all()
    capsys.readouterr()
    # the default model takes them too: one boosting iteration of one split
    assert main(["explain", "--data", str(path), "--target", "y", *FAST,
                 "--model-params", '{"max_iter": 1, "max_depth": 1, "random_state": 3}',
                 "--values", str(values), "--output", str(tmp_path / "p.png")]) == ExitCode.OK
    table = pd.read_csv(values)
    assert (table["b"] == 0).all() and (table["a"] != 0).all()


@pytest.mark.parametrize("params, message", [
    ('{"max_depth": 4', "argument --model-params: expected a JSON object such as "
                        "'{\"max_depth\": 4}', got '{\"max_depth\": 4' (Expecting ',' "
                        "delimiter at character 15)"),
    ("[4]", "argument --model-params: expected a JSON object such as '{\"max_depth\": 4}', "
            "got '[4]' (a JSON list)"),
    ('{"max_dept": 4, "colour": 1}', "--model-params: DecisionTreeRegressor has no "
                                     "parameters 'max_dept', 'colour'; its parameters are "
                                     "ccp_alpha, criterion,"),
    ('{"max_depth": "deep"}', "The 'max_depth' parameter of DecisionTreeRegressor must be"),
])
@pytest.mark.parametrize("command", ["explain", "select"])
def test_bad_model_params_are_one_line_exit_2(tmp_path, capsys, command, params, message):
    path = _regression_csv(tmp_path)
    assert main([command, "--data", str(path), "--target", "y", *_K[command],
                 "--model", "sklearn.tree:DecisionTreeRegressor", "--model-params", params,
                 "--output", str(tmp_path / "p.png")]) == ExitCode.USAGE_ERROR
    assert message in _one_line_error(capsys.readouterr().err)


# -- --model-file (skops) -------------------------------------------------------------


@pytest.fixture
def fitted(tmp_path):
    """A CSV, and a HistGradientBoostingRegressor fitted on it with its columns in
    another order, saved with skops."""
    sio = pytest.importorskip("skops.io")
    from sklearn.ensemble import HistGradientBoostingRegressor

    path = _regression_csv(tmp_path)
    frame = pd.read_csv(path)
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0)
    model.fit(frame[["b", "a"]], frame["y"])
    sio.dump(model, tmp_path / "model.skops")
    return path, tmp_path / "model.skops", model, frame


def test_a_saved_model_is_refused_until_its_types_are_trusted(fitted, tmp_path, capsys):
    path, model_file, model, frame = fitted
    values = tmp_path / "v.csv"
    common = ["explain", "--data", str(path), "--target", "y", "--model-file",
              str(model_file), "--values", str(values), "--output", str(tmp_path / "p.png"),
              *FAST]
    tree_type = "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor"
    assert main(common) == ExitCode.USAGE_ERROR
    line = _one_line_error(capsys.readouterr().err)
    assert (f"holds types that skops does not trust by default: ['{tree_type}']; if you "
            f"trust the file's source, name them: --trust {tree_type}") in line
    assert not values.exists()
    assert main([*common, "--trust", tree_type]) == ExitCode.OK
    out = capsys.readouterr().out
    assert f"model: HistGradientBoostingRegressor, fitted, from {model_file}" in out
    # the model as saved is explained (no refit): TreeSHAP's values add up to its
    # predictions on the explained rows, read in its own column order (b, a)
    table = pd.read_csv(values)
    assert list(table.columns) == ["row", "b", "a", "base_value"]
    rows = frame.iloc[table["row"]]
    predicted = model.predict(rows[["b", "a"]])
    np.testing.assert_allclose(table[["b", "a"]].sum(axis=1) + table["base_value"],
                               predicted, rtol=1e-9)


def test_a_saved_model_needs_no_target(tmp_path, capsys):
    sio = pytest.importorskip("skops.io")
    from sklearn.linear_model import LinearRegression

    frame = pd.read_csv(_regression_csv(tmp_path))
    model = LinearRegression().fit(frame[["a", "b"]], frame["y"])
    sio.dump(model, tmp_path / "linear.skops")  # nothing untrusted: loads at once
    frame[["a", "b"]].to_csv(tmp_path / "new_rows.csv", index=False)
    values = tmp_path / "v.csv"
    assert main(["explain", "--data", str(tmp_path / "new_rows.csv"), "--model-file",
                 str(tmp_path / "linear.skops"), "--values", str(values), *FAST,
                 "--output", str(tmp_path / "p.png")]) == ExitCode.OK
    table = pd.read_csv(values)
    # linear: phi_a = 3 (a - mean of the background's a), exactly
    assert np.allclose(table["a"] + table["b"] + table["base_value"],
                       model.predict(frame.loc[table["row"], ["a", "b"]]), rtol=1e-12)


@pytest.mark.parametrize("args, message", [
    (["--model-file", "{missing}"], "cannot read --model-file '{missing}': no such file"),
    (["--model-file", "{data}"], "cannot read --model-file '{data}' as a skops file "
                                 "(skops.io.dump): File is not a zip file"),
    (["--model-file", "{model}", "--model", "sklearn.linear_model:Ridge"],
     "--model-file loads a fitted model; --model builds one to fit"),
    (["--model-file", "{model}", "--model-params", "{{}}", "--task", "regression"],
     "--model-file loads a fitted model; --model-params and --task build one to fit"),
    (["--model-file", "{model}", "--trust", ","],
     "argument --trust: expected comma-separated type names"),
    (["--model-file", "{model}", "--values", "{model}"],
     "--values '{model}' is the same file as --model-file"),
    (["--trust", "sklearn.tree._tree.Tree"],
     "--trust names types of a --model-file; give --model-file"),
])
def test_model_file_errors_are_one_line_exit_2(fitted, tmp_path, capsys, args, message):
    path, model_file, _, _ = fitted
    names = {"missing": str(tmp_path / "none.skops"), "data": str(path),
             "model": str(model_file)}
    args = [arg.format(**names) for arg in args]
    before = model_file.read_bytes()
    assert main(["explain", "--data", str(path), "--target", "y", *args,
                 "--output", str(tmp_path / "p.png")]) == ExitCode.USAGE_ERROR
    assert message.format(**names) in _one_line_error(capsys.readouterr().err)
    assert model_file.read_bytes() == before


def test_a_saved_model_missing_a_column_is_refused(fitted, tmp_path, capsys):
    _, model_file, _, frame = fitted
    frame[["a", "y"]].to_csv(tmp_path / "only_a.csv", index=False)
    assert main(["explain", "--data", str(tmp_path / "only_a.csv"), "--target", "y",
                 "--model-file", str(model_file), "--trust",
                 "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
                 "--output", str(tmp_path / "p.png")]) == ExitCode.USAGE_ERROR
    assert "--model-file's model was fitted on columns ['b'], which" in \
        _one_line_error(capsys.readouterr().err)


def test_model_file_without_skops_says_how_to_install_it(fitted, tmp_path, capsys,
                                                         monkeypatch):
    path, model_file, _, _ = fitted
    # a None entry makes `import skops.io` raise ImportError, as a missing package does
    monkeypatch.setitem(sys.modules, "skops", None)
    monkeypatch.setitem(sys.modules, "skops.io", None)
    assert main(["explain", "--data", str(path), "--target", "y", "--model-file",
                 str(model_file), "--output", str(tmp_path / "p.png")]) == ExitCode.USAGE_ERROR
    line = _one_line_error(capsys.readouterr().err)
    assert re.search(r"--model-file needs skops .*pip install skops, or pip install "
                     r"'skshapley\[cli\]'", line)
