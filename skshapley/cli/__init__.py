"""The ``skshapley`` command line (documented exit codes, one-line errors).

``skshapley explain`` fits a model on a CSV (or scikit-learn's bundled diabetes data),
explains some rows, prints a ranked table and writes a summary PNG (and the values,
``_values``); ``explain``, ``select`` and ``importance`` choose and build their model
alike (``_model``: the task rule, ``--model-params``, ``--model-file``). ``attribute``
splits a linear model's test R² among the features (LS-SPA), ``quantile`` fits a
MomentQuantileTransformer on a CSV in chunks, ``bench`` compares the estimators against
exact values in seconds, and ``importance`` ranks the columns by the Shapley values of a
fitted model's held-out score (SAGE).

Each command is a module (``_explain``, ``_attribute``, ``_select``, ``_importance``,
``_quantile``, ``_bench``) with ``add_parser(subparsers)`` and ``run(args) -> int``;
``_common`` holds the exit codes, :class:`UsageError`, the option types and the output
files, ``_data`` reads the data.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

from skshapley.cli import _attribute, _bench, _explain, _importance, _quantile, _select
from skshapley.cli._common import (
    ArgumentParser,
    ExitCode,
    UsageError,
    add_data_arguments,
    add_debug_argument,
    int_at_least,
)

__all__ = [
    "ExitCode",
    "UsageError",
    "add_data_arguments",
    "add_debug_argument",
    "build_parser",
    "console_main",
    "int_at_least",
    "main",
]

# The sub-commands by name, in the order `skshapley --help` lists them.
COMMANDS = {
    "explain": _explain,
    "attribute": _attribute,
    "select": _select,
    "importance": _importance,
    "quantile": _quantile,
    "bench": _bench,
}


def _version():
    from skshapley import __version__

    return __version__


def build_parser() -> ArgumentParser:
    """The argument parser of ``skshapley``; its errors raise :class:`UsageError`."""
    parser = ArgumentParser(
        prog="skshapley",
        description="Shapley values for scikit-learn models. Each command runs on a "
                    "bundled data set when given no --data, so you can try it at once; "
                    "`skshapley COMMAND --help` lists its options.",
        epilog="exit codes: 0 ok, 1 computation failed, 2 bad arguments or input, "
               "4 backend unavailable, 130 interrupted")
    add_debug_argument(parser)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND",
                                       parser_class=ArgumentParser)
    for command in COMMANDS.values():
        command.add_parser(subparsers)
    return parser


def main(argv=None) -> ExitCode:
    """Run the command line; returns an :class:`ExitCode` instead of exiting.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; ``sys.argv[1:]`` when None.

    Returns
    -------
    code : ExitCode
        OK (0), RUNTIME_ERROR (1), USAGE_ERROR (2: bad arguments or bad input data),
        BACKEND_UNAVAILABLE (4) or INTERRUPTED (130). Errors are one line on stderr,
        ``skshapley: error: ...``, with the traceback only under ``--debug``.

    Examples
    --------
    >>> from skshapley.cli import main
    >>> int(main(["explain", "--rows", "0"]))  # stderr: skshapley: error: argument --rows: ...
    2
    """
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv  # known even when parsing fails
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return ExitCode.USAGE_ERROR
        return ExitCode(COMMANDS[args.command].run(args))
    except SystemExit as exit_:  # --help and --version end parsing with code 0
        return ExitCode.OK if exit_.code in (0, None) else ExitCode.USAGE_ERROR
    except UsageError as err:
        _report(err, debug)
        return ExitCode.USAGE_ERROR
    except KeyboardInterrupt:
        print("skshapley: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        raise  # console_main's business: the reader of stdout went away
    except Exception as err:  # the CLI's last line of defence: one line, code by kind
        from skshapley.exceptions import BackendUnavailableError

        _report(err, debug)
        if isinstance(err, BackendUnavailableError):
            return ExitCode.BACKEND_UNAVAILABLE
        if isinstance(err, (ValueError, TypeError)):
            # skshapley and scikit-learn report bad input and bad parameters so.
            return ExitCode.USAGE_ERROR
        return ExitCode.RUNTIME_ERROR


def _report(err, debug):
    if debug:
        traceback.print_exception(err)
    message = " ".join(str(err).split()) or type(err).__name__
    print(f"skshapley: error: {message}", file=sys.stderr)


def _drop_current_directory():
    """Under ``python -m skshapley`` Python puts the current directory first on sys.path
    (unless -P or PYTHONSAFEPATH), so ``--model mymod:Class`` or a stray ``sklearn.py``
    there would be imported; the console script never looks there. Take it off, so both
    import the same modules."""
    if (not sys.flags.safe_path and sys.path and sys.argv
            and Path(sys.argv[0]).name == "__main__.py"
            and sys.path[0] in ("", os.getcwd())):
        del sys.path[0]


def console_main() -> int:
    """Entry point of the ``skshapley`` console script and of ``python -m skshapley``.

    Returns the exit code, which the caller passes to ``sys.exit`` (as pytest's
    ``console_main`` does).
    """
    _drop_current_directory()
    try:
        code = main()
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
        return int(code)
    except BrokenPipeError:
        # The reader went away (`skshapley explain | head -3`). Python flushes stdout
        # again at exit; point it at devnull so that flush cannot fail too (see "Note on
        # SIGPIPE" in the signal module's docs, which also exits with 1).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return int(ExitCode.RUNTIME_ERROR)
