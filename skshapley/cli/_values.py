"""``skshapley explain --values``: the Shapley values of the explained rows as a CSV.

One line per explained row: ``row`` (its position among the data rows, from 0), one
column per feature (``FEATURE[OUTPUT]`` per feature and output when the model has
several outputs), then ``base_value`` (``base_value[OUTPUT]``). ``--values-errors`` adds
a column ``NAME_se`` after them for each column ``NAME`` of values: the standard errors
(0 for exact methods). Written with the csv module, so the bundled data need no pandas;
floats are written as ``repr`` writes them, which reads back to the same number.
"""

from __future__ import annotations

import csv
from pathlib import Path

from skshapley.cli._common import UsageError, written_atomically


def check_values_path(path):
    """Fail before the work if ``--values`` cannot be written where asked."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"--values {path!r} is a directory; give a file name such as "
                         f"{str(target / 'values.csv')!r}")
    if not target.parent.is_dir():
        raise UsageError(f"--values {path!r}: directory {str(target.parent)!r} does not "
                         "exist")


def value_columns(feature_names, output_names, with_errors):
    """The header of ``--values``; ``output_names`` is None for a model of one output.
    Refuses a header that names a column twice (a feature called ``row``)."""
    def named(name):
        if output_names is None:
            return [name]
        return [f"{name}[{output}]" for output in output_names]

    values = [column for name in [*feature_names, "base_value"] for column in named(name)]
    # standard errors of the Shapley values; the base value is a mean, not an estimate
    errors = [f"{column}_se" for name in feature_names for column in named(name)] \
        if with_errors else []
    header = ["row", *values, *errors]
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise UsageError(f"--values: the columns {duplicates} would be written twice (a "
                         "feature is named like a column of values); rename the feature")
    return header


def write_values(path, explanation, rows, with_errors):
    """Write ``explanation`` (of the data rows at positions ``rows``) to ``path``,
    through a temporary file renamed onto it."""
    import numpy as np

    values = explanation.values
    outputs = None
    if values.ndim == 3:
        outputs = explanation.output_names or [str(k) for k in range(values.shape[2])]
    header = value_columns(explanation.feature_names, outputs, with_errors)
    n_rows = values.shape[0]
    # (n, d) or (n, d, k) -> (n, d * k), feature-major as the header
    parts = [values.reshape(n_rows, -1),
             np.asarray(explanation.base_values, dtype=np.float64).reshape(n_rows, -1)]
    if with_errors:
        errors = explanation.std_errors
        if errors is None:
            # no method leaves them out today; NaN says "not known" rather than "exact"
            errors = np.full(values.shape, np.nan)
        parts.append(np.asarray(errors, dtype=np.float64).reshape(n_rows, -1))
    numbers = np.hstack(parts)
    with written_atomically(path, "--values") as temporary, \
            open(temporary, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row, line in zip(rows, numbers.tolist(), strict=True):
            writer.writerow([int(row), *line])
