"""``show_versions``: the machine and library versions, for bug reports and benchmark headers."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess

_PACKAGES = ("numpy", "scipy", "scikit-learn", "numba", "joblib", "cupy", "shap", "shapiq",
             "xgboost", "pandas")


def _git_sha() -> str | None:
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        out = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        return None
    return None


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def versions() -> dict:
    """Machine and package versions as a dict (None for packages not installed)."""
    from skshapley import __version__
    from skshapley.backends import available_backends

    info = {
        "python": platform.python_version(),
        "os": platform.platform(),
        "cpu": _cpu_name(),
        "cores": os.cpu_count(),
        "memory_gib": None if _memory_gib() is None else round(_memory_gib(), 1),
        "skshapley": __version__ + (f"+{_git_sha()}" if _git_sha() else ""),
        "backends": ", ".join(available_backends()),
    }
    for package in _PACKAGES:
        try:
            info[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            info[package] = None
    return info


def show_versions(as_markdown: bool = False) -> str:
    """Print (and return) the machine and library versions.

    Parameters
    ----------
    as_markdown : bool, default=False
        Format as a markdown bullet list (the header of benchmark results).

    Returns
    -------
    text : str
    """
    lines = [
        f"- {key}: {value}" if as_markdown else f"{key:>12}: {value}"
        for key, value in versions().items()
        if value is not None
    ]
    text = "\n".join(lines)
    print(text)
    return text
