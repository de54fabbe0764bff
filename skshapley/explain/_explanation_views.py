"""How an ``Explanation`` is shown and converted: its repr and HTML table, its plot
accessor, and ``shap.Explanation`` / ``shapiq.InteractionValues`` conversions. Kept
apart from the class, which holds the values and their selections."""

from __future__ import annotations

import numpy as np

from skshapley.approximators import METHOD_RECORDS

# Values of these methods are exact (the approximators' records say which of theirs are;
# the explainer's tree and linear methods read the model); RKHSShapRegressor's
# "rkhs-... (exact)" too. The other approximators' values are estimates even where a
# standard error happens to be 0.
_EXACT_METHODS = frozenset({"tree", "linear",
                            *(name for name, r in METHOD_RECORDS.items() if r.exact)})
_ESTIMATING_METHODS = frozenset(name for name, r in METHOD_RECORDS.items() if not r.exact)

_ROWS, _FEATURES, _OUTPUTS = "rows", "features", "outputs"
# At most this many rows and features in the table of ``_repr_html_``.
_HTML_ROWS, _HTML_FEATURES = 5, 8


def _format_numbers(array, limit=6):
    """``1.5`` or ``[1.5, 2, ...]``: 4 significant digits, at most ``limit`` numbers."""
    array = np.asarray(array, dtype=np.float64)
    if array.ndim == 0:
        return f"{float(array):.4g}"
    shown = ", ".join(f"{x:.4g}" for x in array.ravel()[:limit])
    return f"[{shown}{', ...' if array.size > limit else ''}]"


def _format_names(names, limit=6):
    shown = ", ".join(repr(name) for name in names[:limit])
    return f"[{shown}{', ...' if len(names) > limit else ''}]"


class _PlotAccessor:
    """``explanation.plot.bar()``, ``.beeswarm()``, ``.waterfall(i)``, ``.summary()``,
    ``.dependence(feature)``, ``.heatmap()``, ``.decision(rows)``."""

    def __init__(self, explanation):
        self._explanation = explanation

    def bar(self, **kwargs):
        from skshapley import plotting

        return plotting.bar(self._explanation, **kwargs)

    def beeswarm(self, **kwargs):
        from skshapley import plotting

        return plotting.beeswarm(self._explanation, **kwargs)

    def waterfall(self, row=0, **kwargs):
        from skshapley import plotting

        return plotting.waterfall(self._explanation, row, **kwargs)

    def summary(self, **kwargs):
        from skshapley import plotting

        return plotting.summary(self._explanation, **kwargs)

    def dependence(self, feature, **kwargs):
        from skshapley import plotting

        return plotting.dependence(self._explanation, feature, **kwargs)

    def heatmap(self, **kwargs):
        from skshapley import plotting

        return plotting.heatmap(self._explanation, **kwargs)

    def decision(self, rows=None, **kwargs):
        from skshapley import plotting

        return plotting.decision(self._explanation, rows, **kwargs)


def to_shap(explanation):
    """The ``shap.Explanation`` of ``explanation``: see :meth:`Explanation.to_shap`."""
    try:
        import shap
    except ImportError as err:
        raise ImportError("to_shap() needs shap: pip install shap") from err
    lower = upper = None
    if explanation.std_errors is not None:
        lower = explanation.values - explanation.error_bars()
        upper = explanation.values + explanation.error_bars()
    main_effects = None
    if explanation.interactions is not None:
        # np.diagonal puts the diagonal last: (n, [k,] d) -> (n, d[, k]), as values
        main_effects = np.moveaxis(
            np.diagonal(explanation.interactions, axis1=1, axis2=2), -1, 1)
    # shap names the one feature of a selection that dropped the feature axis
    feature_names = (explanation.feature_names if _FEATURES in explanation._axes
                     else explanation.feature_names[0])
    # Likewise its one output's name (a binary classifier's "log-odds(1)"): shap reads
    # a list of output names as an outputs axis to slice, and then left the base
    # values of converted[0] unsliced (shap.plots.waterfall failed on them).
    output_names = explanation.output_names
    if output_names is not None and _OUTPUTS not in explanation._axes:
        output_names = output_names[0]
    return shap.Explanation(
        values=explanation.values, base_values=explanation.base_values, data=explanation.data,
        feature_names=feature_names, output_names=output_names,
        lower_bounds=lower, upper_bounds=upper, display_data=explanation.display_data,
        main_effects=main_effects,
        **({} if getattr(explanation, "clustering", None) is None
           else {"clustering": explanation.clustering}),
    )


def is_estimated(explanation, row, output):
    """Whether the values of ``row`` (and ``output``) are estimates: any non-zero
    standard error (NaN and inf included), or a sampling or regression ``method``.
    Zero errors with an exact or unknown method are exact; with neither standard
    errors nor a known method nothing tells, and they count as estimates."""
    if explanation.std_errors is not None:
        errors = explanation.std_errors[row]
        if errors.ndim == 2:
            errors = errors[:, output]
        if np.any(errors != 0):
            return True
    method = explanation.method
    if isinstance(method, str) and method.endswith(")") and "(" in method:
        # RKHSShapRegressor writes "rkhs-<value> (<method of its game>)"
        method = method[method.rindex("(") + 1 : -1]
    if method in _EXACT_METHODS:
        return False
    if method in _ESTIMATING_METHODS:
        return True
    return explanation.std_errors is None


def check_row_output(explanation, row, output, caller):
    if explanation._axes[:2] != (_ROWS, _FEATURES):
        raise ValueError(
            f"{caller} converts a row of features; this explanation is "
            f"{explanation._shape_text()}."
        )
    n_rows = len(explanation)
    if isinstance(row, bool) or not isinstance(row, (int, np.integer)) \
            or not -n_rows <= row < n_rows:
        raise ValueError(
            f"The 'row' parameter of {caller} must be an int in [{-n_rows}, "
            f"{n_rows - 1}] for an explanation of {n_rows} rows; got {row!r}."
        )
    n_outputs = 1 if explanation.values.ndim == 2 else explanation.values.shape[2]
    if isinstance(output, bool) or not isinstance(output, (int, np.integer)) \
            or not 0 <= output < n_outputs:
        raise ValueError(
            f"The 'output' parameter of {caller} must be an int in [0, "
            f"{n_outputs - 1}] for an explanation with {n_outputs} output(s); got "
            f"{output!r}."
        )


def to_shapiq(explanation, row=0, output=0):
    """Convert one row to first-order ``shapiq.InteractionValues`` (needs shapiq).

    ``estimated`` is True where the values are estimates: some standard error of the
    row is non-zero, or ``method`` is a sampler or regression estimator. Exact values
    (``"exact"``, ``"tree"``, RKHS values computed ``"(exact)"``) are not.
    ``estimation_budget`` is the row's ``n_evaluations`` (None when unknown).
    """
    try:
        from shapiq import InteractionValues
    except ImportError as err:
        raise ImportError("to_shapiq() needs shapiq: pip install shapiq") from err
    check_row_output(explanation, row, output, "to_shapiq")
    values = explanation.values[row]
    base = explanation.base_values[row]
    if values.ndim == 2:
        values, base = values[:, output], base[output]
    d = values.shape[0]
    lookup = {(): 0, **{(j,): j + 1 for j in range(d)}}
    return InteractionValues(
        values=np.concatenate([[float(base)], values]), index="SV", max_order=1,
        min_order=0, n_players=d, interaction_lookup=lookup,
        estimated=is_estimated(explanation, row, output),
        estimation_budget=(None if explanation.n_evaluations is None
                           else int(explanation.n_evaluations[row])),
        baseline_value=float(base),
    )


def repr_text(explanation):
    """Shape, outputs, method and base value, e.g.
    ``<Explanation: 4 rows x 3 features; method='tree'; base value 0.5>``."""
    parts = [explanation._shape_text()]
    if explanation.output_names is not None:
        parts.append(f"output {explanation.output_names[0]!r}" if len(explanation.output_names) == 1
                     else f"outputs {_format_names(explanation.output_names)}")
    parts.append(f"method={explanation.method!r}")
    base = np.asarray(explanation.base_values, dtype=np.float64)
    if _ROWS not in explanation._axes:
        parts.append(f"base value {_format_numbers(base)}")
    elif base.shape[0] == 0:
        pass
    elif (base == base[:1]).all():
        parts.append(f"base value {_format_numbers(base[0])}")
    else:
        parts.append(f"base values {base.min():.4g} to {base.max():.4g}")
    return f"<Explanation: {'; '.join(parts)}>"


def repr_html(explanation):
    """The repr above a table of the first rows and features, value +- standard
    error, of the first output (Jupyter's display)."""
    from html import escape

    values = np.asarray(explanation.values, dtype=np.float64)
    errors = (None if explanation.std_errors is None
              else np.asarray(explanation.std_errors, dtype=np.float64))
    caption = "value &plusmn; standard error" if errors is not None else "value"
    if _OUTPUTS in explanation._axes:
        values = values[..., 0]
        errors = None if errors is None else errors[..., 0]
        name = 0 if explanation.output_names is None else explanation.output_names[0]
        caption += (f"; output {escape(repr(name))} of {explanation.values.shape[-1]} "
                    f"(e[:, :, name] selects another)")
    # as a table of rows x features
    if _FEATURES not in explanation._axes:
        values = values[..., np.newaxis]
        errors = None if errors is None else errors[..., np.newaxis]
    if _ROWS not in explanation._axes:
        values, errors = values[np.newaxis], None if errors is None else errors[np.newaxis]
        row_labels = [explanation._description or "values"]
    else:
        row_labels = [str(i) for i in range(min(len(explanation), _HTML_ROWS))]
    n_rows, n_features = values.shape
    columns = explanation.feature_names[:_HTML_FEATURES]
    header = "".join(f"<th>{escape(str(name))}</th>" for name in columns)
    if n_features > _HTML_FEATURES:
        header += f"<th>... ({n_features - _HTML_FEATURES} more)</th>"
    lines = [f"<p>{escape(repr(explanation))}</p>", "<table>",
             f"<caption>{caption}</caption>", f"<tr><th></th>{header}</tr>"]
    for i, label in enumerate(row_labels):
        cells = []
        for j in range(len(columns)):
            cell = f"{values[i, j]:.4g}"
            if errors is not None and errors[i, j] != 0:
                cell += f" &plusmn; {errors[i, j]:.2g}"
            cells.append(f"<td>{cell}</td>")
        if n_features > _HTML_FEATURES:
            cells.append("<td>...</td>")
        lines.append(f"<tr><th>{escape(label)}</th>{''.join(cells)}</tr>")
    if n_rows > len(row_labels):
        lines.append(f"<tr><th>... ({n_rows - len(row_labels)} more)</th></tr>")
    lines.append("</table>")
    return "\n".join(lines)
