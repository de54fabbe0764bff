"""``skshapley quantile``: fit a MomentQuantileTransformer on a CSV, streamed in chunks.

The CSV is read ``--chunksize`` rows at a time and each chunk goes into ``partial_fit``,
so a file larger than memory works; a second pass writes the transformed rows. A
uniform random sample of at most ``SAMPLE_ROWS`` rows is kept on the way, to compare
the sketch with the data's empirical CDF in the table and the PNG.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import tempfile
from pathlib import Path

SAMPLE_ROWS = 100_000
DEMO_ROWS = 200_000


def add_parser(commands, helpers):
    """Add the ``quantile`` sub-command to ``commands`` (an argparse subparsers object)."""
    quantile = commands.add_parser(
        "quantile", help="quantile-normalise or bin the columns of a CSV, streamed",
        description="Fit a MomentQuantileTransformer on the numeric columns of a CSV, "
                    "reading it in chunks (so the file may be larger than memory): a "
                    "sketch of a dozen numbers per column gives its quantiles. Prints, "
                    "per column, a few quantiles and how far the sketch's CDF is from the "
                    "data's; writes the transformed CSV (--transformed), the quantiles "
                    "(--quantiles) and a PNG of sketch vs empirical CDF (--plot). Without "
                    "--data it uses 200,000 rows of seeded synthetic data (a lognormal "
                    "'income', a normal 'age', a Poisson 'visits').",
        epilog="example: skshapley quantile --data my.csv --transformed my_uniform.csv "
               "--output-distribution normal",
    )
    helpers.add_data_arguments(quantile, target=False)
    quantile.add_argument("--columns", metavar="A,B,...",
                          help="comma-separated columns to transform (default: all)")
    quantile.add_argument("--output-distribution", choices=["uniform", "normal"],
                          default="uniform",
                          help="distribution of the transformed values (default uniform)")
    quantile.add_argument("--n-bins", type=helpers.int_at_least(2), default=None, metavar="N",
                          help="bin each column into N quantile bins (0..N-1) instead")
    quantile.add_argument("--n-moments", type=helpers.positive_int, default=10,
                          metavar="L", help="moments kept per column, 1-20 (default 10)")
    quantile.add_argument("--transformed", metavar="CSV",
                          help="write the transformed columns here (other columns are "
                               "copied unchanged; an existing file is overwritten)")
    quantile.add_argument("--quantiles", metavar="CSV",
                          help="write the estimated quantiles of every column here (an "
                               "existing file is overwritten)")
    quantile.add_argument("--probabilities", type=_probabilities,
                          default="0.01,0.05,0.1,0.25,0.5,0.75,0.9,0.95,0.99",
                          metavar="P,P,...",
                          help="probabilities of --quantiles and of the printed table "
                               "(default 0.01,0.05,...,0.95,0.99)")
    quantile.add_argument("--plot", default="skshapley_quantile.png", metavar="PNG",
                          help="sketch vs empirical CDF of --feature "
                               "(default skshapley_quantile.png; an existing file is "
                               "overwritten)")
    quantile.add_argument("--feature", metavar="COL",
                          help="column drawn in --plot (default: the first)")
    quantile.add_argument("--chunksize", type=helpers.positive_int, default=100_000,
                          metavar="ROWS", help="rows read at a time (default 100000)")
    quantile.add_argument("--random-state", type=helpers.seed, default=0,
                          help="seed of the synthetic data and the row sample (default 0)")
    quantile.add_argument("--progress", action="store_true",
                          help="show a progress bar over chunks")
    helpers.add_debug_argument(quantile)
    return quantile


def _probabilities(text):
    import numpy as np

    try:
        values = np.array([float(part) for part in text.split(",")])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers in [0, 1], got {text!r}") from None
    if values.size == 0 or not np.all((values >= 0) & (values <= 1)):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers in [0, 1], got {text!r}")
    return values


def _demo_frame(random_state):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(random_state)
    return pd.DataFrame({
        "income": rng.lognormal(10.0, 0.8, size=DEMO_ROWS),
        "age": np.clip(rng.normal(41.0, 13.0, size=DEMO_ROWS), 18.0, None),
        "visits": rng.poisson(3.0, size=DEMO_ROWS).astype(float),
    })


def _chunks(args, usage_error):
    """(iterator of DataFrame chunks, source name); the first chunk is read eagerly."""
    import pandas as pd

    if args.data is None:
        frame = _demo_frame(args.random_state)
        pieces = (frame.iloc[i:i + args.chunksize]
                  for i in range(0, len(frame), args.chunksize))
        return pieces, "synthetic (income, age, visits)"
    try:
        reader = pd.read_csv(args.data, chunksize=args.chunksize)
    except FileNotFoundError:
        raise usage_error(f"cannot read {args.data!r}: no such file") from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise usage_error(f"cannot read {args.data!r} as CSV: {reason}") from None
    check_header(args.data, usage_error)
    return _checked_reader(reader, args.data, usage_error), args.data


def check_header(path, usage_error):
    """Refuse a CSV header that names a column twice. pandas renames the second ``y`` to
    ``y.1``, so the header is read here: otherwise a copy of the target would become a
    feature."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            header = next(csv.reader(handle), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return  # pandas has read it; its message would be the one to give
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise usage_error(f"duplicate column names in {path!r}: {duplicates}; give every "
                          "column its own name")


def _checked_reader(reader, path, usage_error):
    import pandas as pd

    try:
        yield from reader
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise usage_error(f"cannot read {path!r} as CSV: {reason}") from None


def _select_columns(frame, args, source, usage_error):
    from pandas.api.types import is_numeric_dtype

    if args.columns is None:
        columns = list(frame.columns)
    else:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
        unknown = [c for c in columns if c not in frame.columns]
        if unknown or not columns:
            raise usage_error(f"--columns {unknown or args.columns!r}: not in {source!r}; "
                              f"its columns are {list(frame.columns)}")
    text = [c for c in columns if not is_numeric_dtype(frame[c])]
    if text:
        raise usage_error(f"non-numeric columns in {source!r}: {text}; pick numeric ones "
                          "with --columns")
    return columns


def _check_chunk(chunk, columns, source, usage_error):
    import numpy as np
    from pandas.api.types import is_numeric_dtype

    text = [c for c in columns if not is_numeric_dtype(chunk[c])]
    if text:
        raise usage_error(f"non-numeric values in columns {text} of {source!r}")
    values = chunk[columns].to_numpy(dtype=np.float64)
    infinite = [c for c, bad in zip(columns, np.isinf(values).any(axis=0), strict=True)
                if bad]
    if infinite:
        raise usage_error(f"infinite values in columns {infinite} of {source!r}")
    return values


class _Sample:
    """A uniform random sample of at most ``size`` rows of a stream (smallest keys)."""

    def __init__(self, size, rng):
        self.size, self.rng = size, rng
        self.rows = self.keys = None

    def add(self, rows):
        import numpy as np

        keys = self.rng.random(rows.shape[0])
        if self.rows is not None:
            rows, keys = np.vstack([self.rows, rows]), np.concatenate([self.keys, keys])
        if keys.size > self.size:
            keep = np.argpartition(keys, self.size - 1)[: self.size]
            rows, keys = rows[keep], keys[keep]
        self.rows, self.keys = rows, keys


def _is_special(path):
    """Whether ``path`` exists and is no regular file (a device or a pipe: /dev/null)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def same_file(path, other):
    """Whether two paths name one regular file: the same file when both exist
    (``os.path.samefile``: hard links, symbolic links), else the same resolved path."""
    if _is_special(path) or _is_special(other):
        return False  # /dev/null twice is two writes that overwrite nothing
    try:
        return os.path.samefile(path, other)
    except OSError:
        return Path(path).resolve() == Path(other).resolve()


def check_distinct(outputs, inputs, usage_error):
    """Refuse an output that is an input or another output: ``--transformed a.csv`` of
    ``--data a.csv`` would truncate the file being read. Both are (option, path) pairs;
    a path may be None (not given)."""
    seen = [(option, path) for option, path in inputs if path is not None]
    for option, path in outputs:
        if path is None:
            continue
        for other_option, other in seen:
            if same_file(path, other):
                raise usage_error(f"{option} {path!r} is the same file as {other_option} "
                                  f"{other!r}; write it elsewhere")
        seen.append((option, path))


@contextlib.contextmanager
def written_atomically(path, option, usage_error):
    """Yield a temporary path beside ``path``, renamed onto it (``os.replace``) once the
    block ends, so Ctrl-C or a full disk leaves no partial file and the old one stays;
    an ``OSError`` becomes a one-line ``usage_error`` naming ``option``. A device or a
    pipe (/dev/null, /dev/stdout) is written in place: a rename would replace it."""
    if _is_special(path):
        try:
            yield path
        except OSError as err:
            raise usage_error(f"cannot write {option} {path!r}: {err.strerror or err}") from None
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
        raise usage_error(f"cannot write {option} {path!r}: {err.strerror or err}") from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _check_writable(option, path, usage_error, suffixes):
    target = Path(path)
    if target.is_dir():
        raise usage_error(f"{option} {path!r} is a directory; give a file name")
    if not target.parent.is_dir():
        raise usage_error(f"{option} {path!r}: directory {str(target.parent)!r} does not exist")
    if suffixes and target.suffix.lower() not in suffixes:
        raise usage_error(f"{option} {path!r}: expected a {' or '.join(suffixes)} file")


def run(args, out, usage_error) -> None:
    """Fit, print the table, write the requested files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from tqdm.auto import tqdm

    from skshapley import MomentQuantileTransformer
    from skshapley.plotting import quantile_sketch

    if args.n_moments > 20:
        raise usage_error(f"--n-moments {args.n_moments}: at most 20 moments are supported")
    for option, path, suffixes in (("--transformed", args.transformed, (".csv",)),
                                   ("--quantiles", args.quantiles, (".csv",)),
                                   ("--plot", args.plot, (".png", ".pdf", ".svg"))):
        if path is not None:
            _check_writable(option, path, usage_error, suffixes)
    check_distinct([("--transformed", args.transformed), ("--quantiles", args.quantiles),
                    ("--plot", args.plot)], [("--data", args.data)], usage_error)
    chunks, source = _chunks(args, usage_error)
    first = next(chunks, None)
    if first is None or len(first) == 0:
        raise usage_error(f"{source!r} has no data rows")
    columns = _select_columns(first, args, source, usage_error)
    if args.feature is not None and args.feature not in columns:
        raise usage_error(f"--feature {args.feature!r} is not among the transformed columns "
                          f"{columns}")
    transformer = MomentQuantileTransformer(
        output_distribution=args.output_distribution, n_moments=args.n_moments,
        n_bins=args.n_bins)
    sample = _Sample(SAMPLE_ROWS, np.random.default_rng(args.random_state))
    n_rows = 0
    bar = tqdm(desc="sketching", unit="rows", disable=not args.progress, leave=False)
    try:
        for chunk in _prepend(first, chunks):
            values = _check_chunk(chunk, columns, source, usage_error)
            transformer.partial_fit(values)
            sample.add(values)
            n_rows += values.shape[0]
            bar.update(values.shape[0])
    finally:
        bar.close()
    if np.any(transformer.n_samples_seen_ == 0):
        empty = [c for c, n in zip(columns, transformer.n_samples_seen_, strict=True)
                 if n == 0]
        raise usage_error(f"columns {empty} of {source!r} have no finite values")
    if args.n_bins is not None and args.n_bins > n_rows:
        # The bin edges take n_bins + 1 numbers per column: --n-bins 1000000000 asked
        # for 7.45 GiB. More bins than rows leaves bins empty anyway.
        raise usage_error(f"--n-bins {args.n_bins} is more than the {n_rows} rows of "
                          f"{source!r}; use at most {n_rows} bins")
    # the default 1,000 quantiles cannot exceed the rows (the library warns, as
    # QuantileTransformer does; here there is no option to set)
    transformer.set_params(n_quantiles=min(transformer.n_quantiles, n_rows))
    probabilities = args.probabilities
    estimated = transformer.quantiles(probabilities)
    gaps = _cdf_gaps(transformer, sample.rows)
    _print_table(out, source, n_rows, columns, transformer, probabilities, estimated, gaps,
                 sample.rows.shape[0])
    if args.quantiles is not None:
        import pandas as pd

        frame = pd.DataFrame(estimated, columns=columns)
        frame.insert(0, "probability", probabilities)
        with written_atomically(args.quantiles, "--quantiles", usage_error) as temporary:
            frame.to_csv(temporary, index=False)
        print(f"quantiles written to {args.quantiles}", file=out)
    if args.transformed is not None:
        _write_transformed(args, transformer, columns, source, usage_error, n_rows)
        print(f"transformed rows written to {args.transformed}", file=out)
    if args.plot is not None:
        feature = columns.index(args.feature) if args.feature is not None else 0
        ax = quantile_sketch(transformer, sample.rows, feature=feature)
        ax.set_xlabel(columns[feature] + (" (log scale)" if ax.get_xscale() == "log" else ""))
        if sample.rows.shape[0] < n_rows:
            ax.legend(loc="lower right", fontsize="small", title=f"data: a sample of "
                      f"{sample.rows.shape[0]} of {n_rows} rows", title_fontsize="small")
        try:
            with written_atomically(args.plot, "--plot", usage_error) as temporary:
                ax.figure.savefig(temporary, dpi=120, bbox_inches="tight")
        finally:
            plt.close(ax.figure)
        print(f"sketch vs empirical CDF of {columns[feature]!r} written to {args.plot}",
              file=out)


def _prepend(first, rest):
    yield first
    yield from rest


def _cdf_gaps(transformer, rows):
    """Largest |F_sketch - F_data| per column, on the sample, at 2049 probabilities."""
    import numpy as np

    from skshapley.plotting import cdf_gap

    grid = np.linspace(0.0, 1.0, 2049)
    quantiles = transformer.quantiles(grid)
    gaps = []
    for j in range(rows.shape[1]):
        column = np.sort(rows[:, j][np.isfinite(rows[:, j])])
        gaps.append(cdf_gap(column, quantiles[:, j], grid))
    return gaps


def _print_table(out, source, n_rows, columns, transformer, probabilities, estimated, gaps,
                 n_sample):
    exact = [bool(table) for table in transformer.sketch_.exact]
    shown = [k for k, p in enumerate(probabilities) if p in (0.01, 0.5, 0.99)]
    if not shown:
        shown = list(range(min(3, len(probabilities))))
    if getattr(transformer, "sketch_used_", "moments") == "moments":
        summary = f"moments per column: {transformer.n_moments}"
    else:
        summary = f"sketch: CDF, at most {transformer.n_knots} knots per column"
    print(f"data: {source}   rows: {n_rows}   columns: {len(columns)}   {summary}",
          file=out)
    width = max(len("column"), *(len(str(c)) for c in columns))
    heads = "".join(f"  {'q(' + format(probabilities[k], 'g') + ')':>11}" for k in shown)
    print(f"{'column':<{width}}  {'method':<6}{heads}  {'max |F_sketch - F_data|':>23}",
          file=out)
    for j, column in enumerate(columns):
        cells = "".join(f"  {estimated[k, j]:>11.4g}" for k in shown)
        method = "exact" if exact[j] else "sketch"
        print(f"{str(column):<{width}}  {method:<6}{cells}  {gaps[j]:>23.4f}", file=out)
    note = "" if n_sample == n_rows else f" (on a random sample of {n_sample} rows)"
    print(f"exact: few distinct values or rows, kept as a value table; sketch: quantiles "
          f"solved from the moments{note}", file=out)


def _write_transformed(args, transformer, columns, source, usage_error, n_rows):
    from tqdm.auto import tqdm

    chunks, _ = _chunks(args, usage_error)
    header = True
    with written_atomically(args.transformed, "--transformed", usage_error) as temporary, \
            open(temporary, "w", newline="") as handle, \
            tqdm(total=n_rows, desc="transforming", unit="rows", disable=not args.progress,
                 leave=False) as bar:
        for chunk in chunks:
            chunk = chunk.copy()
            values = _check_chunk(chunk, columns, source, usage_error)
            chunk[columns] = transformer.transform(values)
            chunk.to_csv(handle, index=False, header=header)
            header = False
            bar.update(len(chunk))
