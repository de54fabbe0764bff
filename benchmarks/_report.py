"""The opening every results file shares, and a logger that prints and keeps lines."""

from __future__ import annotations


def start_report(title, doc, script, argv):
    """Lines of a results file so far — title, the script's claim and protocol (its
    docstring without the first paragraph and the "Run:" note), machine and versions,
    command — and ``log(text)``, which prints a line and appends it."""
    import skshapley

    lines = [f"# {title}", "", doc.split("\n\n", 1)[1].rsplit("\n\nRun:", 1)[0], "",
             "## Machine and versions", "", skshapley.show_versions(as_markdown=True), "",
             "## Command", "", f"``python benchmarks/{script} {' '.join(argv or [])}``", ""]

    def log(text=""):
        print(text, flush=True)
        lines.append(text)

    return lines, log
