"""What the commands share: the exit codes and :class:`UsageError`, the argument parser,
its option types and the options several commands take, the ranked tables they print,
and the files they write (checked before the work, written through a temporary file).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
import tempfile
from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """Published exit codes; never renumbered."""

    OK = 0
    RUNTIME_ERROR = 1
    USAGE_ERROR = 2
    BACKEND_UNAVAILABLE = 4
    INTERRUPTED = 130


class UsageError(Exception):
    """Bad arguments or bad input data: exit code 2."""


class ArgumentParser(argparse.ArgumentParser):
    """An argument parser whose errors raise :class:`UsageError`."""

    # argparse prints usage and exits by itself; raising lets main() return the code.
    def error(self, message):
        raise UsageError(message)


# --- Options -------------------------------------------------------------------------


def add_data_arguments(parser, target=True):
    """``--data CSV`` (and ``--target COL``), shared by the subcommands."""
    parser.add_argument("--data", metavar="CSV", help="CSV file with a header row")
    if target:
        parser.add_argument("--target", metavar="COL", help="target column of --data")


def add_debug_argument(parser):
    """``--debug``: show tracebacks instead of one-line errors."""
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")


def add_seed_argument(parser, what):
    """``--random-state``: the seed of ``what`` (default 0)."""
    parser.add_argument("--random-state", type=seed, default=0,
                        help=f"seed of {what} (default 0)")


def add_n_jobs_argument(parser, what):
    """``--n-jobs``: ``what`` runs in parallel (default 1; -1: all cores)."""
    parser.add_argument("--n-jobs", type=n_jobs, default=None,
                        help=f"{what} (default 1; -1: all cores)")


def add_plot_argument(parser, default, what, *, option="--output", metavar="PATH",
                      note=None):
    """The option naming the plot a command writes: ``what`` it shows, its ``default``
    file and a ``note`` on the name, if any."""
    note = f"{note}; " if note else ""
    parser.add_argument(option, default=default, metavar=metavar,
                        help=f"{what} (default {default}; {note}an existing file is "
                             "overwritten)")


def add_progress_argument(parser, over):
    """``--progress/--no-progress``: a progress bar ``over`` what the command runs;
    default: when stderr is a terminal (:func:`show_progress`)."""
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help=f"show a progress bar over {over} (default: when stderr is "
                             "a terminal)")


def show_progress(args):
    """``--progress`` as given, else a bar on a terminal only: the work takes a while, and
    a bar in a log file or a pipe is noise."""
    return args.progress if args.progress is not None else sys.stderr.isatty()


def _argument_type(convert, accept, wanted, name):
    """An argparse ``type``: ``convert`` the text and ``accept`` the value, else a one-line
    "expected {wanted}, got ..." error."""

    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
        return value

    parse.__name__ = name
    return parse


def int_at_least(minimum):
    """An argparse ``type`` accepting integers >= ``minimum`` (one-line errors)."""
    wanted = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    return _argument_type(int, lambda value: value >= minimum, wanted,
                          "positive_int" if minimum == 1 else f"int_at_least_{minimum}")


positive_int = int_at_least(1)
# A seed for NumPy and scikit-learn, which take integers in [0, 2**32 - 1].
seed = _argument_type(int, lambda value: 0 <= value < 2**32, "an integer in [0, 2**32 - 1]",
                      "seed")
# joblib's n_jobs: N jobs, or -1 for all cores, -2 for all but one; 0 means nothing.
n_jobs = _argument_type(int, lambda value: value != 0,
                        "a non-zero integer (N jobs; -1: all cores)", "n_jobs")
fraction = _argument_type(float, lambda value: 0.0 < value < 1.0, "a number in (0, 1)",
                          "fraction")
non_negative = _argument_type(float, lambda value: value >= 0.0, "a number >= 0",
                              "non_negative")


def max_evals(text):
    """An argparse ``type``: ``auto`` or a positive integer."""
    return "auto" if text == "auto" else positive_int(text)


def json_argument(text, kinds, wanted):
    """The JSON value of an option's ``text`` when it is one of ``kinds`` (Python types),
    else a one-line "expected {wanted}, got ..." error saying what is wrong."""
    import json

    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(
            f"expected {wanted}, got {text!r} ({err.msg} at character {err.pos})") from None
    if not isinstance(value, kinds):
        raise argparse.ArgumentTypeError(
            f"expected {wanted}, got {text!r} (a JSON {type(value).__name__})")
    return value


def groups_json(text):
    """An argparse ``type``: ``--groups`` as a JSON object (name -> columns), a list of
    lists of columns, lists nested three deep (a hierarchy: Owen values), or the word
    ``correlation`` (a hierarchy clustered from the columns' correlations)."""
    if text.strip() == "correlation":
        return "correlation"
    example = '{"body": ["bmi", "bp"], "age": ["age"]}'
    return json_argument(text, (dict, list), f"a JSON object such as '{example}' or a list "
                                             "of lists of columns")


def first_line(err):
    """The first line of an exception's message, or its type's name when it has none."""
    return str(err).splitlines()[0] if str(err) else type(err).__name__


def n_workers(n_jobs, n_tasks=None):
    """``n_jobs`` capped at the cores and the tasks: ``--n-jobs 1000`` on 4 rows started
    about 170 processes. joblib's negative values count back from the cores (-1: all)."""
    if n_jobs is None:
        return None
    cores = os.cpu_count() or 1
    wanted = n_jobs if n_jobs > 0 else max(1, cores + 1 + n_jobs)
    return max(1, min(wanted, cores, n_tasks if n_tasks is not None else wanted))


# --- Printed tables --------------------------------------------------------------------


def print_ranking(out, labels, order, columns):
    """One line per feature of ``order`` (best first): its rank, its label and a cell of
    each of ``columns``, (header, width, cells) with the cells as strings by feature
    index, right-aligned under their headers."""
    width = max(len("feature"), *(len(labels[j]) for j in order))
    print(f"{'rank':>4}  {'feature':<{width}}"
          + "".join(f"  {header:>{cell_width}}" for header, cell_width, _ in columns),
          file=out)
    for rank, j in enumerate(order, start=1):
        print(f"{rank:>4}  {labels[j]:<{width}}"
              + "".join(f"  {cells[j]:>{cell_width}}" for _, cell_width, cells in columns),
              file=out)


def use_agg():
    """Draw with matplotlib's Agg backend: the commands write image files and must run
    without a display (a server, CI)."""
    import matplotlib

    matplotlib.use("Agg")


# --- Output files ----------------------------------------------------------------------


def is_special(path):
    """Whether ``path`` exists and is no regular file (a device or a pipe: /dev/null)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def same_file(path, other):
    """Whether two paths name one regular file: the same file when both exist
    (``os.path.samefile``: hard links, symbolic links), else the same resolved path."""
    if is_special(path) or is_special(other):
        return False  # /dev/null twice is two writes that overwrite nothing
    try:
        return os.path.samefile(path, other)
    except OSError:
        return Path(path).resolve() == Path(other).resolve()


def check_distinct(outputs, inputs):
    """Refuse an output that is an input or another output: ``--transformed a.csv`` of
    ``--data a.csv`` would truncate the file being read. Both are (option, path) pairs;
    a path may be None (not given)."""
    seen = [(option, path) for option, path in inputs if path is not None]
    for option, path in outputs:
        if path is None:
            continue
        for other_option, other in seen:
            if same_file(path, other):
                raise UsageError(f"{option} {path!r} is the same file as {other_option} "
                                 f"{other!r}; write it elsewhere")
        seen.append((option, path))


def check_writable(option, path, suffixes):
    """Fail before the work if ``option``'s ``path`` is a directory, lies in one that does
    not exist, or does not end in one of ``suffixes``."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {path!r} is a directory; give a file name")
    if not target.parent.is_dir():
        raise UsageError(f"{option} {path!r}: directory {str(target.parent)!r} does not exist")
    if suffixes and target.suffix.lower() not in suffixes:
        raise UsageError(f"{option} {path!r}: expected a {' or '.join(suffixes)} file")


def check_output_path(path, data=None, inputs=()):
    """Fail before the work if the plot cannot be written where asked, or would overwrite
    the ``--data`` file (or another of ``inputs``, (option, path) pairs). Returns the
    name written: matplotlib writes ``PATH.png`` for a PATH without suffix (a device such
    as /dev/null is written as it is)."""
    from matplotlib.backend_bases import FigureCanvasBase

    target = Path(path)
    if target.is_dir():
        raise UsageError(f"--output {path!r} is a directory; give a file name such as "
                         f"{str(target / 'skshapley_summary.png')!r}")
    if not target.parent.is_dir():
        raise UsageError(f"--output {path!r}: directory {str(target.parent)!r} does not exist")
    suffix = target.suffix.lower().lstrip(".")
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in formats:
        raise UsageError(f"--output {path!r}: matplotlib cannot write .{suffix} files; "
                         f"use one of {sorted(formats)} (e.g. .png)")
    if not suffix and not is_special(path):
        path = f"{path}.png"
    check_distinct([("--output", path)], [("--data", data), *inputs])
    return path


@contextlib.contextmanager
def written_atomically(path, option):
    """Yield a temporary path beside ``path``, renamed onto it (``os.replace``) once the
    block ends, so Ctrl-C or a full disk leaves no partial file and the old one stays;
    an ``OSError`` becomes a one-line :class:`UsageError` naming ``option``. A device or
    a pipe (/dev/null, /dev/stdout) is written in place: a rename would replace it."""
    if is_special(path):
        try:
            yield path
        except OSError as err:
            raise UsageError(f"cannot write {option} {path!r}: {err.strerror or err}") from None
        return
    target = Path(os.path.realpath(path))  # through a symbolic link, as open() writes
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix,
                                             dir=target.parent)
        os.close(handle)
        # mkstemp's file is private (0600); give the output the mode open() would
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode) if target.exists()
                 else 0o666 & ~umask)
        yield temporary
        os.replace(temporary, target)
        temporary = None
    except OSError as err:
        raise UsageError(f"cannot write {option} {path!r}: {err.strerror or err}") from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def save_figure(figure, path, *, option="--output", tight=True):
    """Write ``figure`` to ``path`` (for ``--output``, a name from
    :func:`check_output_path`) through a temporary file, and close it; an unwritable path
    is a usage error naming ``option``."""
    import matplotlib.pyplot as plt

    suffix = Path(path).suffix.lower().lstrip(".") or "png"
    try:
        with written_atomically(path, option) as temporary:
            figure.savefig(temporary, dpi=120, format=suffix,
                           **({"bbox_inches": "tight"} if tight else {}))
    finally:
        plt.close(figure)
