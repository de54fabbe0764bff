"""``skshapley quantile``: streamed fit, the files it writes, and its errors."""

import re

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error as _one_line_error

from skshapley import MomentQuantileTransformer
from skshapley.cli import ExitCode, main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"




def _rows(out):
    """{column: (method, q01, q50, q99, gap)} from the printed table."""
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 6 and parts[1] in ("exact", "sketch"):
            table[parts[0]] = (parts[1], *map(float, parts[2:]))
    return table


@pytest.fixture
def frame(rng):
    n = 5000
    return pd.DataFrame({
        "id": [f"r{i}" for i in range(n)],
        "income": rng.lognormal(10.0, 0.8, size=n),
        "score": rng.normal(size=n),
        "kids": rng.integers(0, 4, size=n).astype(float),
    })


def test_default_run_sketches_the_synthetic_data(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["quantile"]) == ExitCode.OK
    captured = capsys.readouterr()
    assert captured.err == ""
    table = _rows(captured.out)
    assert list(table) == ["income", "age", "visits"]
    assert [row[0] for row in table.values()] == ["sketch", "sketch", "exact"]
    # lognormal(10, 0.8): median e^10 = 22026; the sketch is within 1 % of the CDF.
    assert table["income"][2] == pytest.approx(np.exp(10.0), rel=0.02)
    assert all(row[-1] < 0.01 for row in table.values())
    assert (tmp_path / "skshapley_quantile.png").read_bytes()[:8] == PNG_MAGIC
    assert "written to skshapley_quantile.png" in captured.out


def test_csv_streamed_in_chunks_matches_one_fit(tmp_path, frame, capsys):
    data, out_csv = tmp_path / "data.csv", tmp_path / "normal.csv"
    quantiles_csv, plot = tmp_path / "q.csv", tmp_path / "cdf.png"
    frame.to_csv(data, index=False)
    args = ["quantile", "--data", str(data), "--columns", "income,score,kids",
            "--chunksize", "700", "--output-distribution", "normal",
            "--transformed", str(out_csv), "--quantiles", str(quantiles_csv),
            "--probabilities", "0.1,0.5,0.9", "--plot", str(plot), "--feature", "score"]
    assert main(args) == ExitCode.OK
    out = capsys.readouterr().out
    assert "rows: 5000   columns: 3" in out
    columns = ["income", "score", "kids"]
    reference = MomentQuantileTransformer(output_distribution="normal")
    reference.fit(frame[columns].to_numpy())
    written = pd.read_csv(out_csv)
    assert list(written.columns) == list(frame.columns)
    assert written["id"].tolist() == frame["id"].tolist()  # other columns copied
    # partial_fit over 8 chunks equals one fit within the sketch's stated rank error
    # (compared as probabilities: the normal scores are far apart only in the tails)
    from scipy.stats import norm

    bound = 3 * float(np.max(reference.quantile_error_)) + 2e-3
    np.testing.assert_allclose(norm.cdf(written[columns].to_numpy()),
                               norm.cdf(reference.transform(frame[columns].to_numpy())),
                               atol=bound)
    q = pd.read_csv(quantiles_csv)
    assert q["probability"].tolist() == [0.1, 0.5, 0.9]
    for j, name in enumerate(columns):
        column = np.sort(frame[name].to_numpy())
        ranks = [np.searchsorted(column, v) / column.size
                 for v in (q[name].to_numpy(), reference.quantiles([0.1, 0.5, 0.9])[:, j])]
        np.testing.assert_allclose(ranks[0], ranks[1], atol=bound)
    assert plot.read_bytes()[:8] == PNG_MAGIC
    assert "sketch vs empirical CDF of 'score'" in out


def test_bins_are_integers_of_equal_mass(tmp_path, frame, capsys):
    data, out_csv = tmp_path / "data.csv", tmp_path / "bins.csv"
    frame.drop(columns="id").to_csv(data, index=False)
    assert main(["quantile", "--data", str(data), "--columns", "score", "--n-bins", "4",
                 "--transformed", str(out_csv), "--plot", str(tmp_path / "p.png")]) == 0
    bins = pd.read_csv(out_csv)["score"].to_numpy()
    counts = np.bincount(bins.astype(int), minlength=4)
    assert set(np.unique(bins)) == {0.0, 1.0, 2.0, 3.0}
    # Quartile bins of 5000 normal values: 1250 each, within 3 %.
    np.testing.assert_allclose(counts, 1250, rtol=0.03)


def test_nan_is_ignored_by_the_fit_and_kept_in_the_output(tmp_path, capsys):
    data, out_csv = tmp_path / "nan.csv", tmp_path / "out.csv"
    values = np.arange(2000, dtype=float)
    values[::10] = np.nan
    pd.DataFrame({"x": values}).to_csv(data, index=False)
    assert main(["quantile", "--data", str(data), "--transformed", str(out_csv),
                 "--plot", str(tmp_path / "p.png")]) == ExitCode.OK
    written = pd.read_csv(out_csv)["x"].to_numpy()
    np.testing.assert_array_equal(np.isnan(written), np.isnan(values))
    assert 0.0 <= np.nanmin(written) and np.nanmax(written) <= 1.0


@pytest.fixture
def bad_files(tmp_path, frame):
    paths = {"missing": tmp_path / "no.csv", "dir": tmp_path}
    paths["empty"] = tmp_path / "empty.csv"
    paths["empty"].write_text("")
    paths["header_only"] = tmp_path / "header.csv"
    paths["header_only"].write_text("a,b\n")
    paths["good"] = tmp_path / "good.csv"
    frame.head(50).to_csv(paths["good"], index=False)
    paths["inf"] = tmp_path / "inf.csv"
    frame.head(50).assign(score=np.inf).to_csv(paths["inf"], index=False)
    paths["all_nan"] = tmp_path / "all_nan.csv"
    frame.head(50).assign(score=np.nan).to_csv(paths["all_nan"], index=False)
    paths["duplicate"] = tmp_path / "duplicate.csv"
    paths["duplicate"].write_text("x,score,x\n1,2,3\n4,5,6\n")
    return {name: str(path) for name, path in paths.items()}


@pytest.mark.parametrize("args, message", [
    (["--data", "{missing}"], "no such file"),
    (["--data", "{dir}"], "cannot read"),
    (["--data", "{empty}"], "cannot read"),
    (["--data", "{header_only}"], "has no data rows"),
    (["--data", "{good}"], r"non-numeric columns .*\['id'\]"),
    (["--data", "{good}", "--columns", "score,nope"], r"--columns \['nope'\]: not in"),
    (["--data", "{inf}", "--columns", "score"], r"infinite values in columns \['score'\]"),
    (["--data", "{all_nan}", "--columns", "score"], r"\['score'\] .* no finite values"),
    (["--data", "{good}", "--columns", "score", "--feature", "kids"],
     "--feature 'kids' is not among"),
    (["--n-bins", "1"], "expected an integer >= 2"),
    (["--n-moments", "30"], "at most 20 moments"),
    (["--probabilities", "0.5,1.5"], r"numbers in \[0, 1\]"),
    (["--chunksize", "0"], "positive integer"),
    # numpy's own message names no option: "expected non-negative integer"
    (["--random-state", "-1"], r"argument --random-state: expected an integer in "
                               r"\[0, 2\*\*32 - 1\], got '-1'"),
    (["--output-distribution", "cauchy"], "invalid choice"),
    (["--plot", "{dir}"], "is a directory"),
    (["--plot", "{missing}/sub/p.png"], "does not exist"),
    (["--plot", "{dir}/p.txt"], r"expected a \.png or \.pdf or \.svg file"),
    (["--transformed", "{dir}/out.txt"], r"expected a \.csv file"),
    # pandas renamed the second x to x.1 (issue 28)
    (["--data", "{duplicate}"], r"duplicate column names in .*: \['x'\]"),
    # 1e9 bins of 50 rows: the bin edges took 7.45 GiB (issue 28)
    (["--data", "{good}", "--columns", "score", "--n-bins", "1000000000"],
     r"--n-bins 1000000000 is more than the 50 rows of .*; use at most 50 bins"),
])
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, bad_files, capsys, args, message):
    args = [a.format(**bad_files) for a in args]
    plot = [] if "--plot" in args else ["--plot", str(tmp_path / "p.png")]
    assert main(["quantile", *plot, *args]) == ExitCode.USAGE_ERROR
    captured = capsys.readouterr()
    assert re.search(message, _one_line_error(captured.err))
    assert captured.out == ""
    assert not (tmp_path / "p.png").exists()


def test_help_explains_the_command(capsys):
    assert main(["quantile", "--help"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "larger than memory" in out and "--transformed CSV" in out


def test_progress_bars_go_to_stderr_and_leave_stdout_clean(tmp_path, frame, capsys):
    data = tmp_path / "data.csv"
    frame.drop(columns="id").to_csv(data, index=False)
    assert main(["quantile", "--data", str(data), "--chunksize", "1000", "--progress",
                 "--transformed", str(tmp_path / "t.csv"),
                 "--plot", str(tmp_path / "p.png")]) == ExitCode.OK
    captured = capsys.readouterr()
    assert "sketching" in captured.err and "transforming" in captured.err
    assert "sketching" not in captured.out and "rows: 5000" in captured.out


@pytest.mark.parametrize("option", ["--transformed", "--quantiles", "--plot"])
def test_an_output_that_is_the_input_is_refused_and_the_input_kept(tmp_path, frame, capsys,
                                                                  option):
    # `--transformed a.csv` of `--data a.csv` truncated the file being read, then exited 0
    data = tmp_path / ("a.png" if option == "--plot" else "a.csv")
    frame.drop(columns="id").head(100).to_csv(data, index=False)
    before = data.read_bytes()
    plot = [] if option == "--plot" else ["--plot", str(tmp_path / "p.png")]
    assert main(["quantile", "--data", str(data), *plot, option, str(data)]) \
        == ExitCode.USAGE_ERROR
    captured = capsys.readouterr()
    assert f"{option} {str(data)!r} is the same file as --data" in \
        _one_line_error(captured.err)
    assert captured.out == "" and data.read_bytes() == before


def test_two_outputs_naming_one_file_are_refused(tmp_path, frame, capsys):
    data = tmp_path / "a.csv"
    frame.drop(columns="id").head(100).to_csv(data, index=False)
    out = str(tmp_path / "out.csv")
    assert main(["quantile", "--data", str(data), "--plot", str(tmp_path / "p.png"),
                 "--transformed", out, "--quantiles", out]) == ExitCode.USAGE_ERROR
    assert f"--quantiles {out!r} is the same file as --transformed" in \
        _one_line_error(capsys.readouterr().err)


def test_an_interrupted_write_leaves_the_old_file_and_no_partial_one(tmp_path, frame,
                                                                     monkeypatch, capsys):
    data, out_csv = tmp_path / "data.csv", tmp_path / "out.csv"
    frame.drop(columns="id").to_csv(data, index=False)
    out_csv.write_text("old\n")
    calls = []
    transform = MomentQuantileTransformer.transform

    def interrupted_on_the_third_chunk(self, X):
        calls.append(len(X))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return transform(self, X)

    monkeypatch.setattr(MomentQuantileTransformer, "transform", interrupted_on_the_third_chunk)
    assert main(["quantile", "--data", str(data), "--chunksize", "1000", "--transformed",
                 str(out_csv), "--plot", str(tmp_path / "p.png")]) == ExitCode.INTERRUPTED
    assert out_csv.read_text() == "old\n"  # two chunks had been written over it
    # no temporary file left (the plot comes after)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "out.csv"]


def test_outputs_get_the_permissions_open_would_give(tmp_path, frame, capsys):
    import os
    import stat

    data = tmp_path / "data.csv"
    frame.drop(columns="id").head(100).to_csv(data, index=False)
    umask = os.umask(0o022)
    try:
        assert main(["quantile", "--data", str(data), "--plot", str(tmp_path / "p.png"),
                     "--quantiles", str(tmp_path / "q.csv")]) == ExitCode.OK
    finally:
        os.umask(umask)
    # not mkstemp's private 0600
    assert stat.S_IMODE((tmp_path / "q.csv").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "p.png").stat().st_mode) == 0o644


def test_help_says_outputs_are_overwritten(capsys):
    assert main(["quantile", "--help"]) == ExitCode.OK
    text = " ".join(capsys.readouterr().out.split())
    # --transformed, --quantiles and --plot
    assert text.count("an existing file is overwritten") == 3
