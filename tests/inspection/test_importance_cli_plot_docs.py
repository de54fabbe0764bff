"""``skshapley importance``, ``plotting.importance_bar`` and the user-guide page."""

import pathlib
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.utils import Bunch

from skshapley.cli import ExitCode, main
from skshapley.inspection import shapley_importance
from skshapley.plotting import importance_bar

ROOT = pathlib.Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def csv_path(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    frame["target"] = 3 * X[:, 2] + X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=80)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _table(out):
    """(rank, feature, importance, error) of each table line."""
    rows = []
    for line in out.splitlines():
        match = re.match(r"\s*(\d+)\s+(\S+)\s+(-?\d+\.\d+)\s+(exact|\d+\.\d+|inf)$", line)
        if match:
            rank, name, value, error = match.groups()
            rows.append((int(rank), name, float(value), error))
    return rows


# -- command line -----------------------------------------------------------------------
def test_importance_prints_a_ranked_table_and_writes_a_png(tmp_path, csv_path, capsys):
    output = tmp_path / "importance.png"
    code = main(["importance", "--data", str(csv_path), "--target", "target",
                 "--model", "sklearn.linear_model:LinearRegression", "--background", "10",
                 "--output", str(output)])
    captured = capsys.readouterr()
    assert code == ExitCode.OK, captured.err
    rows = _table(captured.out)
    assert [r[1] for r in rows][0] == "c" and len(rows) == 4
    assert [r[0] for r in rows] == [1, 2, 3, 4]
    assert all(r[3] == "exact" for r in rows)  # 2^4 = 16 evaluations: enumerated
    values = [r[2] for r in rows]
    assert values == sorted(values, reverse=True)
    assert "scored 20 held-out rows against 10 background rows; 16 evaluations" \
        in captured.out
    full, empty = map(float, re.search(r"full model (\S+), every feature marginalised "
                                       r"(\S+);", captured.out).groups())
    assert sum(values) == pytest.approx(full - empty, abs=1e-3)  # 4 printed decimals
    assert output.read_bytes()[:8] == PNG_MAGIC


def test_importance_with_groups_and_sampling(tmp_path, csv_path, capsys):
    code = main(["importance", "--data", str(csv_path), "--target", "target",
                 "--model", "sklearn.tree:DecisionTreeRegressor", "--model-params",
                 '{"max_depth": 4}', "--groups", '{"ab": ["a", "b"], "c": ["c"], "d": ["d"]}',
                 "--max-evals", "7", "--background", "5",
                 "--scoring", "neg_mean_squared_error", "--output", str(tmp_path / "p.png")])
    captured = capsys.readouterr()
    assert code == ExitCode.OK, captured.err
    rows = _table(captured.out)
    assert sorted(r[1] for r in rows) == ["ab", "c", "d"]
    # 3 players: 2^3 = 8 > 7 evaluations, so orderings are sampled
    assert "(1 draws of orderings)" in captured.out
    assert "scoring: neg_mean_squared_error" in captured.out


@pytest.mark.parametrize(("arguments", "message"), [
    (["--groups", "{not json"], r"argument --groups: expected a JSON object"),
    (["--groups", '"a"'], r"argument --groups: .* \(a JSON str\)"),
    (["--groups", '{"g": ["a", "zz"], "h": ["b", "c", "d"]}'],
     r"unknown column 'zz' in group 'g'; X's columns are \['a', 'b', 'c', 'd'\]"),
    (["--groups", '{"g": ["a", "b"]}'], r"leaves the columns \['c', 'd'\] in no group"),
    (["--groups", '[["a", "b"], ["b", "c", "d"]]'],
     r"puts the column 'b' in group 0 and in group 1"),
    (["--max-evals", "3", "--groups", '[["a"], ["b"], ["c"], ["d"]]'],
     r"max_evals=3 is too small for 4 players"),
    (["--scoring", "no_such_score"], r"'scoring' parameter is not usable"),
    (["--tol", "-1"], r"--tol must be a positive number"),
    (["--rows", "0"], r"argument --rows: expected a positive integer"),
])
def test_bad_input_is_one_line_with_exit_code_2(tmp_path, csv_path, capsys, arguments,
                                                 message):
    code = main(["importance", "--data", str(csv_path), "--target", "target", "--model",
                 "sklearn.linear_model:LinearRegression", "--output",
                 str(tmp_path / "p.png"), *arguments])
    captured = capsys.readouterr()
    assert code == ExitCode.USAGE_ERROR
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skshapley: error:"), captured.err
    assert re.search(message, lines[0]), lines[0]
    assert not (tmp_path / "p.png").exists()


def test_importance_of_a_saved_model_scores_every_row(tmp_path, csv_path, capsys):
    sio = pytest.importorskip("skops.io")
    frame = pd.read_csv(csv_path)
    model = LinearRegression().fit(frame[["a", "b", "c", "d"]], frame["target"])
    path = tmp_path / "model.skops"
    sio.dump(model, path)
    code = main(["importance", "--data", str(csv_path), "--target", "target",
                 "--model-file", str(path), "--rows", "1000", "--background", "5",
                 "--output", str(tmp_path / "p.png")])
    captured = capsys.readouterr()
    assert code == ExitCode.OK, captured.err
    assert "scored 80 rows against 5 background rows" in captured.out
    assert "fitted, from" in captured.out


# -- the plot ---------------------------------------------------------------------------
def test_importance_bar_draws_the_intervals(rng):
    from sklearn.tree import DecisionTreeRegressor

    X = rng.normal(size=(60, 6))
    y = X @ [3.0, 2.0, 1.0, 0.5, 0.2, 0.0] + X[:, 0] * X[:, 1]
    model = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
    # 60 < 2^6 evaluations: sampled, with error bars
    result = shapley_importance(model, X, y, max_evals=60, background=10, random_state=0)
    assert result.method == "permutation" and np.all(result.std_errors[:2] > 0)
    ax = importance_bar(result, max_display=3)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    order = np.argsort(-result.importances_mean, kind="stable")
    assert labels == [result.feature_names[order[0]], result.feature_names[order[1]],
                      "4 other features"]
    bars = ax.patches
    assert [b.get_width() for b in bars][:2] == pytest.approx(result.importances_mean[order[:2]])
    assert bars[2].get_width() == pytest.approx(result.importances_mean[order[2:]].sum())
    # the error bars span the 95 % intervals of the features shown
    segments = ax.collections[0].get_segments()
    for segment, j in zip(segments[:2], order[:2], strict=True):
        (low, _), (high, _) = segment
        assert (low, high) == pytest.approx((result.ci_low[j], result.ci_high[j]))
    assert "permutation, " in ax.get_title(loc="right")
    assert ax.get_xlabel() == "gain in r2 (Shapley value)"


def test_importance_bar_without_errors_when_exact():
    result = Bunch(importances_mean=np.array([0.2, -0.1]), ci_low=np.array([0.2, -0.1]),
                   ci_high=np.array([0.2, -0.1]), feature_names=np.array(["a", "b"]),
                   method="exact", n_evaluations=4)
    ax = importance_bar(result)
    assert not ax.collections  # no error bars
    assert ax.get_title(loc="right") == "exact, 4 evaluations"
    with pytest.raises(ValueError, match="max_display"):
        importance_bar(result, max_display=0)


# -- the user guide -----------------------------------------------------------------------
def test_user_guide_page_runs():
    import matplotlib

    matplotlib.use("Agg")
    page = ROOT / "doc" / "user_guide" / "importance.rst"
    text = page.read_text()
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", text)
    assert blocks
    namespace = {}
    for block in blocks:
        code = "\n".join(line[3:] for line in block.splitlines())
        exec(compile(code, str(page), "exec"), namespace)
