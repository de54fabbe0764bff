"""What the plots share: colours, the checks of their arguments, one output of an
explanation, its feature rows (the ``max_display - 1`` largest, then one row for the
rest) and the colour scales of feature values.

pyplot is imported only inside the functions.
"""

from __future__ import annotations

import numpy as np

# Two-sided 95 % normal quantile: error bars span values ± 1.96 standard errors.
_Z95 = 1.959963984540054
_POSITIVE_COLOR = "#d62728"  # pushes the output up (red, as in shap)
_NEGATIVE_COLOR = "#1f77b4"  # pushes the output down (blue)
_LUMP_COLOR = "#7f7f7f"


# --- Axes and rows ---------------------------------------------------------------------


def _new_axes(ax, figsize):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def _set_rows(ax, labels):
    """Rows top to bottom at y = n-1, ..., 0, with the same limits in every plot.

    Fixed limits keep the rows of ``bar`` and ``beeswarm`` level in ``summary``.
    """
    positions = np.arange(len(labels))[::-1]
    ax.set_yticks(positions, labels)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    return positions


def _rows_axes(ax, labels, width=6.5, row_height=0.35, margin=1.5):
    """(Axes, row positions) of a plot with one row per label: ``ax``, or a new figure
    ``width`` wide and ``row_height`` per row plus ``margin`` high."""
    ax = _new_axes(ax, (width, row_height * len(labels) + margin))
    return ax, _set_rows(ax, labels)


def _display_rows(order, max_display):
    """(shown feature indices, lumped feature indices) for ``max_display`` rows."""
    if len(order) <= max_display:
        return order, order[:0]
    return order[: max_display - 1], order[max_display - 1 :]


def _feature_rows(names, order, max_display):
    """(shown, lumped, labels): the features of ``order`` shown in at most
    ``max_display`` rows, and the rows' labels, the last "N other features" when some are
    lumped."""
    shown, rest = _display_rows(order, max_display)
    labels = [names[j] for j in shown]
    if rest.size:
        labels.append(f"{rest.size} other features")
    return shown, rest, labels


def _lumped(values, shown, rest, *, axis=-1, errors=False):
    """``values`` of the ``shown`` features (along ``axis``) and, when some are lumped,
    one more entry for the ``rest``: the sum of their values, or with ``errors`` their
    root sum of squares (the standard error of a sum of independent estimates)."""
    # plain indexing, not np.take: its layout (hence the sums' rounding) is the one the
    # plots have always drawn
    where = [slice(None)] * np.ndim(values)
    where[axis] = shown
    part = values[tuple(where)]
    if not rest.size:
        return part
    where[axis] = rest
    other = values[tuple(where)]
    lump = np.sqrt((other**2).sum(axis=axis)) if errors else other.sum(axis=axis)
    return np.concatenate([part, np.expand_dims(lump, axis)], axis=axis)


def _note_error_bars(ax):
    """Say above the axes what the error bars are."""
    ax.set_title("error bars: 95 %", fontsize="small", loc="right")


def _label_bar_ends(ax, ends, positions, reach):
    """Each bar's value, written beyond its end and its error bar."""
    # an infinite error (one draw: no spread to estimate) has no end to write beyond
    reach = np.where(np.isfinite(reach), reach, 0.0)
    for end, half_width, y in zip(ends, reach, positions, strict=True):
        ax.annotate(f"{end:.3g}", (end + half_width, y), xytext=(4, 0),
                    textcoords="offset points", ha="left", va="center", fontsize="small")
    # Bars stick to x = 0, which defeats ax.margins; leave room for the labels by hand.
    high = float(np.max(ends + reach)) if len(ends) else 0.0
    ax.set_xlim(0.0, 1.18 * high if high > 0 else 1.0)


def _signed_bars(ax, positions, heights, xerr):
    """Bars blue where positive and red where negative, with black error bars, on a
    line at 0."""
    ax.barh(positions, heights, height=0.7, xerr=xerr,
            color=np.where(heights >= 0, _NEGATIVE_COLOR, _POSITIVE_COLOR),
            ecolor="black", capsize=3)
    ax.axvline(0.0, color="black", linewidth=0.8)


# --- Arguments -------------------------------------------------------------------------


def _feature_names(names, n_features, caller=None):
    """The given feature names as strings, or ``x0, x1, ...``.

    With ``caller``, names are the ``feature_names`` parameter of that function, which
    must give one name per feature.
    """
    if names is None:
        return [f"x{j}" for j in range(n_features)]
    names = [str(name) for name in names]
    if caller is not None and len(names) != n_features:
        raise ValueError(
            f"The 'feature_names' parameter of {caller} must have one name per feature "
            f"({n_features}); got {len(names)}."
        )
    return names


def _feature_index(feature, names, parameter="feature"):
    """Column index of ``feature`` (an int, or a name in ``names``)."""
    if isinstance(feature, str):
        if names is None or feature not in list(names):
            raise ValueError(
                f"The {parameter!r} parameter {feature!r} is not a feature name; the names "
                f"are {list(names) if names is not None else 'not known'}."
            )
        return list(names).index(feature)
    n_features = len(names)
    if isinstance(feature, bool) or not isinstance(feature, (int, np.integer)) \
            or not -n_features <= feature < n_features:
        raise ValueError(
            f"The {parameter!r} parameter must be a feature name or an int in "
            f"[{-n_features}, {n_features - 1}]; got {feature!r}."
        )
    return int(feature) % n_features


def _check_max_display(max_display):
    if isinstance(max_display, bool) or not isinstance(max_display, (int, np.integer)) \
            or max_display < 1:
        raise ValueError(
            f"The 'max_display' parameter must be an int >= 1; got {max_display!r}."
        )


def _check_has_rows(explanation, caller):
    """A plot of no rows would be empty (or fail in matplotlib): say so."""
    if len(explanation.values) == 0:
        raise ValueError(
            f"The 'explanation' parameter of {caller} has no rows, so there is nothing to "
            f"plot (a selection such as e[mask] that matched none?)."
        )


def _check_output(explanation, output):
    """Number of outputs k (1 for a single-output explanation), after checking output."""
    if np.ndim(explanation.values) != 3:
        if isinstance(output, bool) or output != 0:
            raise ValueError(
                f"The 'output' parameter must be 0 for a single-output explanation; "
                f"got {output!r}."
            )
        return 1
    n_outputs = np.shape(explanation.values)[2]
    if isinstance(output, bool) or not isinstance(output, (int, np.integer)) \
            or not 0 <= output < n_outputs:
        raise ValueError(
            f"The 'output' parameter must be an int in [0, {n_outputs - 1}] or an output "
            f"name for an explanation with {n_outputs} outputs; got {output!r}."
        )
    return n_outputs


def _output_index(explanation, output, *, allow_all=False):
    """Position of ``output`` among the explanation's outputs: an int is one, a str is
    looked up in ``output_names`` (a class, e.g. ``"setosa"``). With ``allow_all``, None
    (every output) stays None."""
    if output is None and allow_all:
        return None
    if isinstance(output, str):
        names = list(explanation.output_names or [])
        if output not in names:
            raise ValueError(
                f"The 'output' parameter {output!r} is not an output name; the names are "
                f"{names if names else 'not known (pass an int)'}."
            )
        return names.index(output)
    if output is None:
        raise ValueError(
            "The 'output' parameter must be an int or an output name here; None (every "
            "output) is taken only by bar."
        )
    _check_output(explanation, output)
    return int(output)


def _checked_output(explanation, caller, output, *, allow_all=False):
    """The position of ``output``, once the explanation is known to have rows to plot."""
    _check_has_rows(explanation, caller)
    return _output_index(explanation, output, allow_all=allow_all)


# --- One output of an explanation ------------------------------------------------------


def _select_output(explanation, output):
    """Values, std errors and base values of one output, as (n, d), (n, d), (n,)."""
    values = np.asarray(explanation.values, dtype=np.float64)
    std_errors = explanation.std_errors
    std_errors = None if std_errors is None else np.asarray(std_errors, dtype=np.float64)
    base = np.asarray(explanation.base_values, dtype=np.float64)
    _check_output(explanation, output)
    if values.ndim == 3:
        values = values[:, :, output]
        std_errors = None if std_errors is None else std_errors[:, :, output]
        base = base[:, output]
    return values, std_errors, base


def _pick(array, output):
    """Column ``output`` of a (d, k) summary; a (d,) summary as it is."""
    if array is None:
        return None
    array = np.asarray(array, dtype=np.float64)
    return array[:, output] if array.ndim == 2 else array


def _output_label(explanation, output):
    names = explanation.output_names
    if np.ndim(explanation.values) != 3:
        return f" ({names[0]})" if names else ""
    return f" (output {names[output] if names else output})"


def _error_multipliers(explanation):
    """Standard errors per 95 % half-width, per row (1.96, or a t quantile where a row's
    errors rest on few draws); an explanation without ``n_draws`` gets 1.96."""
    multipliers = getattr(explanation, "error_multipliers", None)
    return (np.full(len(explanation.values), _Z95) if multipliers is None
            else multipliers(0.95))


def _has_errors(std_errors):
    return std_errors is not None and bool(np.any(std_errors > 0))


def _importance_order(explanation, output):
    importance = _pick(explanation.mean_abs(), output)
    # A stable sort on -importance: ties keep the lower feature index first.
    return importance, np.argsort(-importance, kind="stable")


def _mean_abs_rows(explanation, output, max_display):
    """The rows of :func:`~skshapley.plotting.bar` for one output: (shown, lumped,
    labels, mean |phi| per row, 95 % half-widths per row or None).

    A half-width is the widest row's multiplier (a mean over rows is no surer than its
    least sure) times the mean |phi|'s standard error; the lumped row's adds its parts'
    in quadrature. None when no standard error is non-zero (exact values).
    """
    importance, order = _importance_order(explanation, output)
    shown, rest, labels = _feature_rows(explanation.feature_names, order, max_display)
    spreads = None
    if _has_errors(explanation.std_errors):
        spread = (_error_multipliers(explanation).max()
                  * _pick(explanation.mean_abs_std_errors(), output))
        spreads = _lumped(spread, shown, rest, errors=True)
    return shown, rest, labels, _lumped(importance, shown, rest), spreads


# --- Feature values and their colours --------------------------------------------------


def _shown_data(explanation):
    """The feature values as shown: ``display_data`` (text for coded columns) when the
    explanation has it, else ``data``."""
    display = getattr(explanation, "display_data", None)
    return explanation.data if display is None else display


def _is_missing_value(value):
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, NaT
    except TypeError:  # pandas.NA: its comparisons are NA
        return True


def _numeric_column(explanation, j):
    """Column j's values as float64 (NaN where missing), or None when the feature is
    nominal: text, categories or dates, whose numbers (``display_data``) only name them.
    A bool column is numeric (0 and 1)."""
    display = getattr(explanation, "display_data", None)
    if display is not None and not all(
            isinstance(v, (bool, int, float, np.bool_, np.number))
            for v in display[:, j] if not _is_missing_value(v)):
        return None
    try:
        return np.asarray(explanation.data[:, j], dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _category_codes(explanation, j):
    """(codes 0..m-1 with NaN where missing, the m category names) of column j: in the
    order of the codec's codes where ``data`` holds them (as the axis of
    :func:`~skshapley.plotting.dependence` orders them), else of first appearance."""
    values = np.asarray(_shown_data(explanation), dtype=object)[:, j]
    try:
        keys = np.asarray(explanation.data[:, j], dtype=np.float64)
    except (TypeError, ValueError):
        keys = None
    if keys is not None:
        missing = ~np.isfinite(keys)
        unique, codes = np.unique(keys[~missing], return_inverse=True)
        names = {}
        for code, value in zip(codes, values[~missing], strict=True):
            names.setdefault(code, str(value))
        out = np.full(values.shape[0], np.nan)
        out[~missing] = codes
        return out, [names[c] for c in range(unique.size)]
    missing = np.array([_is_missing_value(v) for v in values], dtype=bool)
    names = {}
    for v in values[~missing]:
        names.setdefault(str(v), len(names))
    out = np.full(values.shape[0], np.nan)
    out[~missing] = [names[str(v)] for v in values[~missing]]
    return out, list(names)


def _robust_limits(column):
    """Colour limits of a column: its 5th and 95th percentiles, so one outlier does not
    wash out the rest; the 1st and 99th, then the extremes, where those coincide (a
    binary feature with few ones); a band around a constant."""
    finite = column[np.isfinite(column)]
    if finite.size == 0:
        return 0.0, 1.0
    for low_percent, high_percent in ((5, 95), (1, 99), (0, 100)):
        low, high = np.percentile(finite, [low_percent, high_percent])
        if high > low:
            return float(low), float(high)
    pad = 0.5 * max(abs(float(low)), 1.0)
    return float(low) - pad, float(low) + pad


def _extend(column, low, high):
    """The colour bar's arrows: which ends clip some values."""
    finite = column[np.isfinite(column)]
    below, above = bool((finite < low).any()), bool((finite > high).any())
    return {(False, False): "neither", (True, False): "min", (False, True): "max",
            (True, True): "both"}[(below, above)]


def _coloured_scatter(ax, x, y, column, colormap, **style):
    """Points coloured by the feature values ``column``: the colour scale spans its
    5th-95th percentiles (beyond: the end colours), missing values are grey."""
    from matplotlib.colors import Normalize

    low, high = _robust_limits(column)
    return ax.scatter(x, y, c=column, cmap=colormap.with_extremes(bad=_LUMP_COLOR),
                      norm=Normalize(low, high), plotnonfinite=True, **style)


def _value_colorbar(figure, points, column, **options):
    """The colour bar of points drawn by :func:`_coloured_scatter`, with arrows at the
    ends that clip values."""
    return figure.colorbar(points, extend=_extend(column, points.norm.vmin,
                                                  points.norm.vmax), **options)
