"""The documentation: the site builds without warnings (slow), the getting-started and
user-guide snippets run, and the user guide picks up new pages by itself."""

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = ROOT / "doc"


def _python_blocks(page):
    # A block's lines are indented past its directive's "..", which may sit in a cell of
    # a list-table (from_shap.rst shows shap's code and ours side by side).
    lines = page.read_text().splitlines()
    for number, line in enumerate(lines):
        if line.rstrip().endswith(".. code-block:: python"):
            column = line.index("..") + 3
            block = []
            for body in lines[number + 1:]:
                if body.strip() and len(body) - len(body.lstrip()) < column:
                    break
                block.append(body[column:])
            yield "\n".join(block).strip("\n") + "\n"


def test_user_guide_globs_its_folder():
    # Another page in doc/user_guide/ joins the toctree without editing user_guide.rst.
    text = (DOC / "user_guide.rst").read_text()
    assert re.search(r":glob:\n\s*\n\s*user_guide/\*", text)


def test_every_estimator_has_a_getting_started_page_with_code():
    pages = {p.stem for p in (DOC / "getting_started").glob("*.rst")}
    assert {"explainer", "tree", "rkhs", "lsspa", "quantile"} <= pages
    for name in ("explainer", "tree", "rkhs", "lsspa", "quantile"):
        assert list(_python_blocks(DOC / "getting_started" / f"{name}.rst")), name


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(
    str(p.relative_to(DOC)) for p in [*DOC.glob("getting_started/*.rst"),
                                      DOC / "user_guide" / "budgets.rst"]
    if list(_python_blocks(p))))
def test_snippets_run(page):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import xgboost
    from threadpoolctl import threadpool_limits

    # A page's blocks run in order, in one namespace: from_shap.rst's tasks build on a
    # setup block. One OpenMP thread, as tests/test_examples.py, and one XGBoost thread
    # (it sets its own): on a busy machine of 2 cores their threads spin, and the grid
    # searches of from_shap.rst took 113 s and 93 s instead of 1.4 s and 1.7 s.
    namespace = {}
    with threadpool_limits(limits=1, user_api="openmp"), xgboost.config_context(nthread=1):
        for code in _python_blocks(DOC / page):
            exec(compile(code, page, "exec"), namespace)
            plt.close("all")


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx_gallery")
    pytest.importorskip("numpydoc")
    pytest.importorskip("myst_parser")
    # A copy of doc/, so the test does not touch a developer's build; -W makes any
    # warning an error.
    source = tmp_path / "doc"
    shutil.copytree(DOC, source, ignore=shutil.ignore_patterns(
        "_build", "auto_examples", "generated", "benchmark_results",
        "sg_execution_times.rst"))
    # conf.py finds the package, the examples and the results relative to its folder.
    (tmp_path / "skshapley").symlink_to(ROOT / "skshapley")
    for name in ("examples", "benchmarks", "CHANGELOG.md"):
        (tmp_path / name).symlink_to(ROOT / name)
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", str(source),
         str(tmp_path / "html")], capture_output=True, text=True, cwd=source)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    html = tmp_path / "html"
    assert (html / "auto_examples" / "plot_tree_interactions.html").exists()
    assert (html / "benchmark_results" / "quantile.html").exists()
    assert "MomentQuantileTransformer" in (html / "api.html").read_text()


def test_no_references_to_internal_documents():
    # Readers cannot follow "§N" or the names of the developers' internal documents: cite
    # the paper (author, year, section) or a user-guide page instead (issue 29).
    generated = {"_build", "generated", "auto_examples"}
    files = [*(ROOT / "skshapley").rglob("*.py"),
             *(p for p in DOC.rglob("*.rst") if not generated & set(p.relative_to(DOC).parts)),
             *(ROOT / "examples").glob("*.py"), ROOT / "README.md"]
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in files
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if any(word in line for word in ("§", "DESIGN.md", "ALGORITHMS.md", "STYLE.md"))]
    assert not found, "\n".join(found)
