"""``skshapley quantile``: fit a MomentQuantileTransformer on a CSV, streamed in chunks.

The CSV is read ``--chunksize`` rows at a time and each chunk goes into ``partial_fit``,
so a file larger than memory works; a second pass writes the transformed rows. A
uniform random sample of at most ``SAMPLE_ROWS`` rows is kept on the way, to compare
the sketch with the data's empirical CDF in the table and the PNG.
"""

from __future__ import annotations

import argparse
import sys

from skshapley.cli._common import (
    ExitCode,
    UsageError,
    add_data_arguments,
    add_debug_argument,
    add_plot_argument,
    add_seed_argument,
    check_distinct,
    check_writable,
    first_line,
    int_at_least,
    positive_int,
    save_figure,
    use_agg,
    written_atomically,
)
from skshapley.cli._data import check_header

SAMPLE_ROWS = 100_000
DEMO_ROWS = 200_000


def add_parser(subparsers):
    """Add the ``quantile`` sub-command to ``subparsers`` (an argparse subparsers
    object)."""
    quantile = subparsers.add_parser(
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
    add_data_arguments(quantile, target=False)
    quantile.add_argument("--columns", metavar="A,B,...",
                          help="comma-separated columns to transform (default: all)")
    quantile.add_argument("--output-distribution", choices=["uniform", "normal"],
                          default="uniform",
                          help="distribution of the transformed values (default uniform)")
    quantile.add_argument("--n-bins", type=int_at_least(2), default=None, metavar="N",
                          help="bin each column into N quantile bins (0..N-1) instead")
    quantile.add_argument("--n-moments", type=positive_int, default=10,
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
    add_plot_argument(quantile, "skshapley_quantile.png", "sketch vs empirical CDF of "
                      "--feature", option="--plot", metavar="PNG")
    quantile.add_argument("--feature", metavar="COL",
                          help="column drawn in --plot (default: the first)")
    quantile.add_argument("--chunksize", type=positive_int, default=100_000,
                          metavar="ROWS", help="rows read at a time (default 100000)")
    add_seed_argument(quantile, "the synthetic data and the row sample")
    quantile.add_argument("--progress", action="store_true",
                          help="show a progress bar over chunks")
    add_debug_argument(quantile)
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


def _chunks(args):
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
        raise UsageError(f"cannot read {args.data!r}: no such file") from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as err:
        raise UsageError(f"cannot read {args.data!r} as CSV: {first_line(err)}") from None
    check_header(args.data)
    return _checked_reader(reader, args.data), args.data


def _checked_reader(reader, path):
    import pandas as pd

    try:
        yield from reader
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as err:
        raise UsageError(f"cannot read {path!r} as CSV: {first_line(err)}") from None


def _select_columns(frame, args, source):
    from pandas.api.types import is_numeric_dtype

    if args.columns is None:
        columns = list(frame.columns)
    else:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
        unknown = [c for c in columns if c not in frame.columns]
        if unknown or not columns:
            raise UsageError(f"--columns {unknown or args.columns!r}: not in {source!r}; "
                             f"its columns are {list(frame.columns)}")
    text = [c for c in columns if not is_numeric_dtype(frame[c])]
    if text:
        raise UsageError(f"non-numeric columns in {source!r}: {text}; pick numeric ones "
                         "with --columns")
    return columns


def _check_chunk(chunk, columns, source):
    import numpy as np
    from pandas.api.types import is_numeric_dtype

    text = [c for c in columns if not is_numeric_dtype(chunk[c])]
    if text:
        raise UsageError(f"non-numeric values in columns {text} of {source!r}")
    values = chunk[columns].to_numpy(dtype=np.float64)
    infinite = [c for c, bad in zip(columns, np.isinf(values).any(axis=0), strict=True)
                if bad]
    if infinite:
        raise UsageError(f"infinite values in columns {infinite} of {source!r}")
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


def run(args) -> int:
    """Fit, print the table, write the requested files."""
    use_agg()
    import numpy as np
    from tqdm.auto import tqdm

    from skshapley import MomentQuantileTransformer
    from skshapley.plotting import quantile_sketch

    out = sys.stdout
    if args.n_moments > 20:
        raise UsageError(f"--n-moments {args.n_moments}: at most 20 moments are supported")
    for option, path, suffixes in (("--transformed", args.transformed, (".csv",)),
                                   ("--quantiles", args.quantiles, (".csv",)),
                                   ("--plot", args.plot, (".png", ".pdf", ".svg"))):
        if path is not None:
            check_writable(option, path, suffixes)
    check_distinct([("--transformed", args.transformed), ("--quantiles", args.quantiles),
                    ("--plot", args.plot)], [("--data", args.data)])
    chunks, source = _chunks(args)
    first = next(chunks, None)
    if first is None or len(first) == 0:
        raise UsageError(f"{source!r} has no data rows")
    columns = _select_columns(first, args, source)
    if args.feature is not None and args.feature not in columns:
        raise UsageError(f"--feature {args.feature!r} is not among the transformed columns "
                         f"{columns}")
    transformer = MomentQuantileTransformer(
        output_distribution=args.output_distribution, n_moments=args.n_moments,
        n_bins=args.n_bins)
    sample = _Sample(SAMPLE_ROWS, np.random.default_rng(args.random_state))
    n_rows = 0
    bar = tqdm(desc="sketching", unit="rows", disable=not args.progress, leave=False)
    try:
        for chunk in _prepend(first, chunks):
            values = _check_chunk(chunk, columns, source)
            transformer.partial_fit(values)
            sample.add(values)
            n_rows += values.shape[0]
            bar.update(values.shape[0])
    finally:
        bar.close()
    if np.any(transformer.n_samples_seen_ == 0):
        empty = [c for c, n in zip(columns, transformer.n_samples_seen_, strict=True)
                 if n == 0]
        raise UsageError(f"columns {empty} of {source!r} have no finite values")
    if args.n_bins is not None and args.n_bins > n_rows:
        # The bin edges take n_bins + 1 numbers per column: --n-bins 1000000000 asked
        # for 7.45 GiB. More bins than rows leaves bins empty anyway.
        raise UsageError(f"--n-bins {args.n_bins} is more than the {n_rows} rows of "
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
        with written_atomically(args.quantiles, "--quantiles") as temporary:
            frame.to_csv(temporary, index=False)
        print(f"quantiles written to {args.quantiles}", file=out)
    if args.transformed is not None:
        _write_transformed(args, transformer, columns, source, n_rows)
        print(f"transformed rows written to {args.transformed}", file=out)
    if args.plot is not None:
        feature = columns.index(args.feature) if args.feature is not None else 0
        ax = quantile_sketch(transformer, sample.rows, feature=feature)
        ax.set_xlabel(columns[feature] + (" (log scale)" if ax.get_xscale() == "log" else ""))
        if sample.rows.shape[0] < n_rows:
            ax.legend(loc="lower right", fontsize="small", title=f"data: a sample of "
                      f"{sample.rows.shape[0]} of {n_rows} rows", title_fontsize="small")
        save_figure(ax.figure, args.plot, option="--plot", tight=True)
        print(f"sketch vs empirical CDF of {columns[feature]!r} written to {args.plot}",
              file=out)
    return ExitCode.OK


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


def _write_transformed(args, transformer, columns, source, n_rows):
    from tqdm.auto import tqdm

    chunks, _ = _chunks(args)
    header = True
    with written_atomically(args.transformed, "--transformed") as temporary, \
            open(temporary, "w", newline="") as handle, \
            tqdm(total=n_rows, desc="transforming", unit="rows", disable=not args.progress,
                 leave=False) as bar:
        for chunk in chunks:
            chunk = chunk.copy()
            values = _check_chunk(chunk, columns, source)
            chunk[columns] = transformer.transform(values)
            chunk.to_csv(handle, index=False, header=header)
            header = False
            bar.update(len(chunk))
