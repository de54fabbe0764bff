"""The build files keep to STYLE.md §2: metadata in pyproject.toml, setup.cfg minimal."""

import configparser
import pathlib
import subprocess
import sys

import pytest
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_setup_cfg_has_no_forbidden_sections():
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    forbidden = {"metadata", "options", "tool:pytest"}
    assert not forbidden & set(parser.sections())


def test_pyproject_declares_runtime_dependencies_and_extras():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {dep.split(">")[0].split("=")[0].strip() for dep in project["dependencies"]}
    assert runtime == {"numpy", "scipy", "scikit-learn", "numba", "joblib", "matplotlib", "tqdm"}
    assert {"test", "bench", "docs", "gpu", "dask"} <= set(project["optional-dependencies"])
    assert project["scripts"]["skshapley"] == "skshapley.cli:console_main"


def test_ci_runs_the_readme_commands():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    blocks = [b.split("```")[0].strip() for b in readme.split("```bash")[1:3]]
    assert len(blocks) == 2
    for block in blocks:
        for command in block.splitlines():
            assert command.strip() in ci


def test_imports_respect_the_layers():
    # DESIGN.md §2: imports point down only; the contract is [tool.importlinter] in
    # pyproject.toml (cli > estimators > attribution > approximators, tree, sketch >
    # permutations, games > backends).
    pytest.importorskip("importlinter")
    command = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    done = subprocess.run([sys.executable, "-c", command], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "0 broken" in done.stdout
