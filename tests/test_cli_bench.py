"""``skshapley bench``: a seconds-long comparison against exact values."""

import re

import pandas as pd
import pytest

from skshapley.cli import ExitCode, main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _table(out):
    """[(method, budget, ms or None, rel. error or None)] of the printed table."""
    rows = []
    for line in out.splitlines():
        match = re.match(r"(\S+)\s+(\d+)\s+(\S+)\s+(\S+)", line)
        if match and match.group(1) not in ("method",):
            ms, error = match.group(3), match.group(4)
            rows.append((match.group(1), int(match.group(2)),
                         None if ms == "-" else float(ms),
                         None if error == "-" else float(error)))
    return rows


def test_enough_budget_is_exact_and_too_little_is_reported(tmp_path, capsys):
    # 6 players: 2^6 = 64 evaluations enumerate every coalition, so every estimator is
    # exact; 8 evaluations are too few for the regression.
    csv, png = tmp_path / "bench.csv", tmp_path / "bench.png"
    args = ["bench", "--game", "unanimity", "--players", "6", "--rows", "2",
            "--budgets", "8,64", "--methods", "kernel,permutation:antithetic",
            "--csv", str(csv), "--plot", str(png)]
    assert main(args) == ExitCode.OK
    captured = capsys.readouterr()
    assert captured.err == ""
    table = _table(captured.out)
    assert [(m, b) for m, b, _, _ in table] == [
        ("kernel", 8), ("kernel", 64), ("permutation:antithetic", 8),
        ("permutation:antithetic", 64)]
    assert table[0][3] is None and "(budget too small)" in captured.out
    assert table[1][3] == 0.0  # printed to 4 decimals; the CSV has the digits
    # a budget of 2^6 enumerates whatever the method (sampling past it gains nothing)
    assert table[3][3] == 0.0
    written = pd.read_csv(csv)
    assert written["relative_error"].iloc[1] < 1e-12
    assert written["relative_error"].iloc[3] < 1e-12
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_model_game_errors_are_small_and_shrink(tmp_path, capsys):
    args = ["bench", "--rows", "2", "--budgets", "60,400", "--methods", "kernel",
            "--plot", str(tmp_path / "b.png")]
    assert main(args) == ExitCode.OK
    out = capsys.readouterr().out
    assert "exact values by enumeration: 1024 evaluations" in out
    (_, _, _, coarse), (_, _, _, fine) = _table(out)
    assert fine < coarse < 0.1


@pytest.mark.parametrize("args, message", [
    (["--methods", "nope"], "unknown method 'nope'"),
    (["--methods", "exact"], "unknown method 'exact'"),
    (["--methods", "kernel:mc"], "only permutation takes a :SAMPLER"),
    (["--methods", "permutation:zzz"], "unknown sampler 'zzz'"),
    (["--budgets", "2"], r"integers in \[4, 100000\]"),
    (["--budgets", "a,b"], r"integers in \[4, 100000\]"),
    # no bound: 10^9 evaluations per row asked numpy for 48 GiB and exited 1 (issue 28)
    (["--budgets", "60,1000000000"], r"argument --budgets: expected comma-separated "
                                     r"integers in \[4, 100000\], got '60,1000000000'"),
    (["--game", "unanimity", "--players", "1"], "use 2 to 30 players"),
    (["--game", "chess"], "invalid choice"),
    # the diabetes game has its 10 features; --players used to be ignored silently
    (["--players", "8"], "--players 8 applies only to --game unanimity"),
    (["--random-state", "-1"], "argument --random-state: expected an integer in"),
    (["--csv", "{tmp}/missing/b.csv"], "does not exist"),
    (["--plot", "{tmp}/b.txt"], r"expected a \.png"),
    # no bound: a billion rows were accepted and ran for days (issue 28)
    (["--rows", "1e9"], r"argument --rows: expected an integer in \[1, 1000\], got '1e9'"),
    (["--rows", "1000000000"], r"argument --rows: expected an integer in \[1, 1000\]"),
    # the diabetes game explains distinct rows of its 442
    (["--rows", "443"], "--rows 443: the diabetes game takes at most 442 rows"),
])
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, capsys, args, message):
    args = [a.format(tmp=tmp_path) for a in args]
    plot = [] if "--plot" in args else ["--plot", str(tmp_path / "p.png")]
    assert main(["bench", *plot, *args]) == ExitCode.USAGE_ERROR
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skshapley: error: ")
    assert re.search(message, lines[0])
    assert captured.out == "" and not (tmp_path / "p.png").exists()


def test_help_explains_the_command(capsys):
    assert main(["bench", "--help"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "relative error against exact Shapley values" in " ".join(out.split())


def test_help_bounds_rows_and_says_outputs_are_overwritten(capsys):
    assert main(["bench", "--help"]) == ExitCode.OK
    text = " ".join(capsys.readouterr().out.split())
    assert "at most 442 for diabetes, 1000 for unanimity" in text
    assert "each at most 100000" in text
    assert text.count("an existing file is overwritten") == 2  # --csv and --plot
