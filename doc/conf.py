"""Sphinx configuration of the skshapley documentation (``make -C doc html``)."""

import os
import pathlib
import re
import sys
import warnings

DOC = pathlib.Path(__file__).resolve().parent
ROOT = DOC.parent
# Document this checkout, not whatever skshapley happens to be installed.
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

import skshapley  # noqa: E402

project = "skshapley"
author = "skshapley developers"
copyright = "skshapley developers"  # noqa: A001
version = release = skshapley.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "sg_execution_times.rst"]
templates_path = ["_templates"]

# API reference: one page per public object, from the docstrings.
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

intersphinx_mapping = {}  # nothing is fetched at build time (the build runs offline)

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
suppress_warnings = ["myst.header", "myst.xref_missing"]

# The example gallery: every examples/plot_*.py is run and its figures kept.
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "reference_url": {"skshapley": None},
    "show_memory": False,
    "abort_on_example_error": True,
    "min_reported_time": 1,
}
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")

try:
    import pydata_sphinx_theme  # noqa: F401
except ImportError:  # the docs extra installs it; alabaster ships with Sphinx
    html_theme = "alabaster"
else:
    html_theme = "pydata_sphinx_theme"
    html_theme_options = {
        "navigation_with_keys": False,
        "show_toc_level": 2,
        "header_links_before_dropdown": 6,
    }
html_title = f"skshapley {release}"
html_static_path = []


def _write_benchmark_pages(app):
    """One page per ``benchmarks/results/*.md`` file, so new results join by themselves."""
    source = ROOT / "benchmarks" / "results"
    target = DOC / "benchmark_results"
    target.mkdir(exist_ok=True)
    wanted = set()
    for path in sorted(source.glob("*.md")):
        page = target / f"{path.stem}.rst"
        wanted.add(page.name)
        relative = os.path.relpath(path, target)
        text = (f".. include:: {relative}\n   :parser: myst_parser.sphinx_\n")
        if not page.exists() or page.read_text() != text:
            page.write_text(text)
    for stale in target.glob("*.rst"):
        if stale.name not in wanted:
            stale.unlink()


# Docstrings write absolute values as |x|, which reStructuredText reads as a
# substitution. Escape the bars outside inline literals, roles and doctest lines.
_LITERAL = re.compile(r"(``.*?``|:\w+:`[^`]*`|`[^`]*`)")


def _escape_bars(line):
    stripped = line.lstrip()
    if "|" not in line or stripped.startswith((">>>", "...")):
        return line
    parts = _LITERAL.split(line)
    return "".join(part if k % 2 else part.replace("|", "\\|")
                   for k, part in enumerate(parts))


def _escape_docstring_bars(app, what, name, obj, options, lines):
    in_literal_block = False
    for k, line in enumerate(lines):
        if line.rstrip().endswith("::"):
            in_literal_block = True
            continue
        if in_literal_block and line.strip() and not line.startswith((" ", "\t")):
            in_literal_block = False
        if not in_literal_block:
            lines[k] = _escape_bars(line)


def _skip_generated_members(app, what, name, obj, skip, options):
    # scikit-learn's metadata-routing setters (set_fit_request, ...) are generated per
    # class and document scikit-learn's glossary, which this site does not have.
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("builder-inited", _write_benchmark_pages)
    app.connect("autodoc-process-docstring", _escape_docstring_bars)
    app.connect("autodoc-skip-member", _skip_generated_members)
