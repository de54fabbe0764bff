"""Plots with matplotlib: bar, beeswarm, waterfall, dependence, heatmap, decision, summary,
convergence, quantile sketches, R² attributions and global importances.

Every function takes an optional ``ax`` (a new figure is made when it is None), draws
95 % error bars where the explanation has non-zero standard errors (``bar``,
``waterfall``, ``dependence``, the bars beside ``heatmap``, ``decision`` of one row),
and returns the Axes (``summary`` returns the Figure). pyplot is imported only inside
the functions, and nothing here calls ``plt.show``. ``output`` picks one output of a
multi-output explanation by position or by name (``output="setosa"``).

``bar``, ``beeswarm``, ``summary``, ``heatmap`` and ``decision`` show the same features
in the same order: the
``max_display - 1`` features of largest mean |phi| (ties: lower index first), then, when
there are more features, one row for the rest ("N other features").
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "attribution_bar",
    "bar",
    "beeswarm",
    "cdf_gap",
    "convergence",
    "decision",
    "dependence",
    "heatmap",
    "importance_bar",
    "quantile_sketch",
    "summary",
    "topk",
    "waterfall",
]

# Two-sided 95 % normal quantile: error bars span values ± 1.96 standard errors.
_Z95 = 1.959963984540054
_POSITIVE_COLOR = "#d62728"  # pushes the output up (red, as in shap)
_NEGATIVE_COLOR = "#1f77b4"  # pushes the output down (blue)
_LUMP_COLOR = "#7f7f7f"


def _new_axes(ax, figsize):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


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


def _check_has_rows(explanation, caller):
    """A plot of no rows would be empty (or fail in matplotlib): say so."""
    if len(explanation.values) == 0:
        raise ValueError(
            f"The 'explanation' parameter of {caller} has no rows, so there is nothing to "
            f"plot (a selection such as e[mask] that matched none?)."
        )


def _check_max_display(max_display):
    if isinstance(max_display, bool) or not isinstance(max_display, (int, np.integer)) \
            or max_display < 1:
        raise ValueError(
            f"The 'max_display' parameter must be an int >= 1; got {max_display!r}."
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


def _display_rows(order, max_display):
    """(shown feature indices, lumped feature indices) for ``max_display`` rows."""
    if len(order) <= max_display:
        return order, order[:0]
    return order[: max_display - 1], order[max_display - 1 :]


def _set_rows(ax, labels):
    """Rows top to bottom at y = n-1, ..., 0, with the same limits in every plot.

    Fixed limits keep the rows of ``bar`` and ``beeswarm`` level in ``summary``.
    """
    positions = np.arange(len(labels))[::-1]
    ax.set_yticks(positions, labels)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    return positions


def _importance_order(explanation, output):
    importance = _pick(explanation.mean_abs(), output)
    # A stable sort on -importance: ties keep the lower feature index first.
    return importance, np.argsort(-importance, kind="stable")


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


def bar(explanation, *, ax=None, max_display=20, output=0, color=_NEGATIVE_COLOR):
    """Horizontal bars of the mean |phi| of each feature, with 95 % error bars.

    Features are sorted by decreasing mean |phi| (``Explanation.mean_abs``; ties keep
    the lower feature index first). Each error bar is ±1.96 times
    ``Explanation.mean_abs_std_errors`` (a t quantile instead where rows' errors rest on
    few draws, ``Explanation.error_multipliers``); error bars are drawn only when some standard
    error is non-zero (exact values have none). Each bar's value is written at its end,
    beyond the error bar.

    With ``output=None``, a multi-output explanation (a classifier's classes) is drawn
    as stacked bars, one colour per output, sorted by the sum over outputs; the error
    bar of a stack adds its parts' errors (a bound: the outputs' errors are not
    independent, as they come from the same draws).

    Parameters
    ----------
    explanation : Explanation
        The explained rows.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when None.
    max_display : int, default=20
        At most this many bars: with more features, the ``max_display - 1`` most
        important ones and one bar "N other features", the sum of the others' mean
        |phi| (its error bar adds their standard errors in quadrature).
    output : int, str or None, default=0
        Which output of a multi-output explanation (its last axis): a position, or a
        name in ``output_names`` (e.g. a class, ``output="setosa"``); None stacks them all.
    color : str, default="#1f77b4"
        Colour of the bars (of one output).

    Returns
    -------
    ax : matplotlib Axes
        Stacked bars carry a legend naming the outputs.

    See Also
    --------
    beeswarm : the values behind each bar, row by row.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley import Explanation
    >>> from skshapley.plotting import bar
    >>> e = Explanation(np.array([[1.0, -3.0]]), np.zeros(1), np.zeros((1, 2)), ["a", "b"])
    >>> ax = bar(e)
    >>> [t.get_text() for t in ax.get_yticklabels()], [t.get_text() for t in ax.texts]
    (['b', 'a'], ['3', '1'])
    """
    _check_max_display(max_display)
    _check_has_rows(explanation, "bar")
    output = _output_index(explanation, output, allow_all=True)
    if output is None:
        return _stacked_bar(explanation, ax, max_display)
    importance, order = _importance_order(explanation, output)
    spread = None
    if _has_errors(explanation.std_errors):
        # the widest row's multiplier: a mean over rows is no surer than its least sure
        spread = (_error_multipliers(explanation).max()
                  * _pick(explanation.mean_abs_std_errors(), output))
    shown, rest = _display_rows(order, max_display)
    labels = [explanation.feature_names[j] for j in shown]
    heights = importance[shown]
    spreads = None if spread is None else spread[shown]
    if rest.size:
        labels.append(f"{rest.size} other features")
        heights = np.append(heights, importance[rest].sum())
        if spreads is not None:
            spreads = np.append(spreads, np.sqrt((spread[rest] ** 2).sum()))
    ax = _new_axes(ax, (6.5, 0.35 * len(labels) + 1.5))
    positions = _set_rows(ax, labels)
    ax.barh(positions, heights, height=0.7, xerr=spreads, color=color, ecolor="black",
            capsize=3)
    ax.set_xlabel("mean |SHAP value|" + _output_label(explanation, output))
    if spreads is not None:
        ax.set_title("error bars: 95 %", fontsize="small", loc="right")
    _label_bar_ends(ax, heights, positions,
                    np.zeros_like(heights) if spreads is None else spreads)
    return ax


def _stacked_bar(explanation, ax, max_display):
    """``bar(output=None)``: mean |phi| of every output, stacked."""
    import matplotlib.pyplot as plt

    importance = np.asarray(explanation.mean_abs(), dtype=np.float64)
    if importance.ndim == 1:
        importance = importance[:, None]
    n_outputs = importance.shape[1]
    names = explanation.output_names or [f"output {c}" for c in range(n_outputs)]
    total = importance.sum(axis=1)
    order = np.argsort(-total, kind="stable")  # ties: lower feature index first
    shown, rest = _display_rows(order, max_display)
    labels = [explanation.feature_names[j] for j in shown]
    parts = importance[shown]
    if rest.size:
        labels.append(f"{rest.size} other features")
        parts = np.vstack([parts, importance[rest].sum(axis=0)])
    spreads = None
    if _has_errors(explanation.std_errors):
        errors = np.asarray(explanation.mean_abs_std_errors(), dtype=np.float64)
        errors = errors[:, None] if errors.ndim == 1 else errors
        # One feature's outputs share their draws: add their errors (the bound for any
        # correlation); features, as in bar, in quadrature.
        per_feature = _error_multipliers(explanation).max() * errors.sum(axis=1)
        spreads = per_feature[shown]
        if rest.size:
            spreads = np.append(spreads, np.sqrt((per_feature[rest] ** 2).sum()))
    ax = _new_axes(ax, (6.5, 0.35 * len(labels) + 1.8))
    positions = _set_rows(ax, labels)
    colours = plt.get_cmap("tab10")
    left = np.zeros(len(labels))
    for c in range(n_outputs):
        ax.barh(positions, parts[:, c], left=left, height=0.7, color=colours(c % 10),
                label=str(names[c]))
        left = left + parts[:, c]
    reach = np.zeros_like(left)
    if spreads is not None:
        ax.errorbar(left, positions, xerr=spreads, fmt="none", ecolor="black", capsize=3)
        reach = spreads
        ax.set_title("error bars: 95 %", fontsize="small", loc="right")
    ax.set_xlabel("mean |SHAP value| (stacked over outputs)")
    # outside, right of the axes: inside it would cover the short bars and their labels
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _label_bar_ends(ax, left, positions, reach)
    return ax


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
    :func:`dependence` orders them), else of first appearance."""
    shown = explanation.data if getattr(explanation, "display_data", None) is None \
        else explanation.display_data
    values = np.asarray(shown, dtype=object)[:, j]
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


def _swarm_offsets(x, rng, n_bins=100, half_height=0.36):
    """Vertical offsets that stack points where they are dense, as shap's beeswarm.

    x is cut into ``n_bins`` bins over its range; within a bin the points take the
    layers 0, +1, -1, +2, -2, ... in a seeded random order (so no feature value is
    always on top), and the layers are scaled so the fullest bin spans
    ±``half_height``: dense bins are wide, a lone point sits on the row's line.
    """
    n = x.shape[0]
    if n == 0:
        return np.zeros(0)
    finite = np.isfinite(x)
    low = x[finite].min() if finite.any() else 0.0
    span = (x[finite].max() - low) if finite.any() else 0.0
    bins = np.zeros(n) if span == 0 else np.round(n_bins * (x - low) / span)
    bins = np.where(finite, bins, -1.0)  # non-finite values share a bin of their own
    order = np.lexsort((rng.permutation(n), bins))  # by bin, then the seeded order
    sorted_bins = bins[order]
    first = np.r_[True, sorted_bins[1:] != sorted_bins[:-1]]
    position = np.arange(n)
    layer = position - np.maximum.accumulate(np.where(first, position, 0))
    steps = np.ceil(layer / 2) * np.where(layer % 2 == 1, 1.0, -1.0)
    offsets = np.empty(n)
    offsets[order] = steps
    return offsets * half_height / (np.abs(offsets).max() + 1.0)


def _coloured_scatter(ax, x, y, column, colormap, **style):
    """Points coloured by the feature values ``column``: the colour scale spans its
    5th-95th percentiles (beyond: the end colours), missing values are grey."""
    from matplotlib.colors import Normalize

    low, high = _robust_limits(column)
    return ax.scatter(x, y, c=column, cmap=colormap.with_extremes(bad=_LUMP_COLOR),
                      norm=Normalize(low, high), plotnonfinite=True, **style)


def beeswarm(explanation, *, ax=None, max_display=20, output=0, cmap="coolwarm",
             random_state=0):
    """One row of points per feature: each explained row's phi, coloured by its value.

    Rows are those of :func:`bar`, in the same order. A point's x is the row's Shapley
    value. Points are stacked vertically where they are dense (a density swarm, as in
    shap: x is cut into 100 bins, and the points of a bin are spread up and down by
    their rank in it), so a wide row means many rows with that value. The order within a
    bin is drawn from ``random_state``, so the picture is reproducible.

    A point's colour is the feature's value, from blue (low) to red (high). Each
    feature's colour scale spans its own 5th-95th percentiles over the explained rows
    (values beyond take the end colours), so one outlier does not wash out the rest.
    Missing values, and nominal features (text, categories, dates: their codes have no
    order), are grey. With more than ``max_display`` features, the last row shows, in
    grey, each row's sum of the other features' values.

    Parameters
    ----------
    explanation : Explanation
        The explained rows; ``data`` gives the colours (``display_data`` says which
        features are nominal).
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when None.
    max_display : int, default=20
        At most this many rows of points (see :func:`bar`).
    output : int or str, default=0
        Which output of a multi-output explanation: a position or a name in
        ``output_names``.
    cmap : str or Colormap, default="coolwarm"
        Colours from low to high feature values.
    random_state : int, default=0
        Seed of the order of points within a bin.

    Returns
    -------
    ax : matplotlib Axes
        Its colour bar reads "low"/"high" ("feature value: each feature's 5th → 95th
        percentile"); where a single feature is coloured, it shows that feature's values.
        No colour bar when no feature is coloured.

    See Also
    --------
    bar : the mean |phi| of each row of points.
    heatmap : the same values, row by row, as a matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley import Explanation
    >>> from skshapley.plotting import beeswarm
    >>> e = Explanation(np.array([[1.0, -3.0], [2.0, 0.5]]), np.zeros(2), np.eye(2), ["a", "b"])
    >>> ax = beeswarm(e)
    >>> ax.collections[0].get_offsets()[:, 0].tolist()
    [-3.0, 0.5]
    """
    import matplotlib.pyplot as plt

    _check_max_display(max_display)
    _check_has_rows(explanation, "beeswarm")
    output = _output_index(explanation, output)
    values, _, _ = _select_output(explanation, output)
    _, order = _importance_order(explanation, output)
    shown, rest = _display_rows(order, max_display)
    labels = [explanation.feature_names[j] for j in shown]
    if rest.size:
        labels.append(f"{rest.size} other features")
    ax = _new_axes(ax, (7.0, 0.35 * len(labels) + 1.5))
    positions = _set_rows(ax, labels)
    rng = np.random.default_rng(random_state)
    colormap = plt.get_cmap(cmap)
    ax.axvline(0.0, color="grey", linewidth=0.8, zorder=0)
    style = {"s": 14, "alpha": 0.85, "linewidths": 0}
    coloured = []
    for position, j in zip(positions, shown, strict=False):
        x = values[:, j]
        y = position + _swarm_offsets(x, rng)
        column = _numeric_column(explanation, j)
        if column is None:
            ax.scatter(x, y, color=_LUMP_COLOR, **style)
        else:
            coloured.append((j, column, _coloured_scatter(ax, x, y, column, colormap, **style)))
    if rest.size:
        lumped = values[:, rest].sum(axis=1)
        ax.scatter(lumped, positions[-1] + _swarm_offsets(lumped, rng), color=_LUMP_COLOR,
                   **style)
    ax.set_xlabel("SHAP value" + _output_label(explanation, output))
    if len(coloured) == 1:  # one scale: show its values
        j, column, scatter = coloured[0]
        colorbar = ax.figure.colorbar(scatter, ax=ax, pad=0.02, aspect=30,
                                      extend=_extend(column, scatter.norm.vmin,
                                                     scatter.norm.vmax))
        colorbar.set_label(f"{explanation.feature_names[j]} (5th → 95th percentile)")
    elif coloured:
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import Normalize

        scale = ScalarMappable(norm=Normalize(0.0, 1.0), cmap=colormap)
        colorbar = ax.figure.colorbar(scale, ax=ax, pad=0.02, aspect=30, extend="both")
        colorbar.set_ticks([0, 1], labels=["low", "high"])
        colorbar.set_label("feature value: each feature's 5th → 95th percentile")
    return ax


def _format_value(value):
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError):
        return str(value)


def waterfall(explanation, row=0, *, ax=None, max_display=20, output=0):
    """How one row's prediction is built: base value, then each feature's phi.

    The first bar starts at the base value (the mean output over the background); each
    bar adds one feature's Shapley value, largest |phi| first (ties: lower index first),
    red when it pushes the output up and blue when down. With more than
    ``max_display`` features the smallest are lumped into one bar, so the last bar always
    ends at the prediction, base + sum(phi). 95 % error bars (``Explanation.error_bars``:
    ±1.96 standard errors, or a t quantile's with few draws) sit at each bar's end when
    the explanation has non-zero standard errors.

    Parameters
    ----------
    explanation : Explanation
        The explained rows.
    row : int, default=0
        Which row (negative values count from the end).
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when None.
    max_display : int, default=20
        At most this many bars: the ``max_display - 1`` largest |phi| and one bar
        "N other features" with the sum of the rest (errors added in quadrature).
    output : int or str, default=0
        Which output of a multi-output explanation: a position or a name in
        ``output_names`` (e.g. a class).

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley import Explanation
    >>> from skshapley.plotting import waterfall
    >>> e = Explanation(np.array([[1.0, -3.0]]), np.array([10.0]), np.ones((1, 2)), ["a", "b"])
    >>> patches = waterfall(e).patches
    >>> float(patches[-1].get_x() + patches[-1].get_width())  # ends at 10 - 3 + 1 = 8
    8.0
    """
    _check_max_display(max_display)
    _check_has_rows(explanation, "waterfall")
    output = _output_index(explanation, output)
    values, std_errors, base = _select_output(explanation, output)
    n_rows = values.shape[0]
    if isinstance(row, bool) or not isinstance(row, (int, np.integer)) \
            or not -n_rows <= row < n_rows:
        raise ValueError(
            f"The 'row' parameter must be an int in [{-n_rows}, {n_rows - 1}] for an "
            f"explanation of {n_rows} rows; got {row!r}."
        )
    phi = values[row]
    errors = None if std_errors is None else std_errors[row]
    order = np.argsort(-np.abs(phi), kind="stable")
    shown, rest = _display_rows(order, max_display)
    shown_data = explanation.data if getattr(explanation, "display_data", None) is None \
        else explanation.display_data
    data = np.asarray(shown_data)[row]
    labels = [f"{explanation.feature_names[j]} = {_format_value(data[j])}" for j in shown]
    steps = phi[shown]
    step_errors = None if errors is None else errors[shown]
    if rest.size:
        labels.append(f"{rest.size} other features")
        steps = np.append(steps, phi[rest].sum())
        if step_errors is not None:
            step_errors = np.append(step_errors, np.sqrt((errors[rest] ** 2).sum()))
    ax = _new_axes(ax, (7.0, 0.4 * len(labels) + 1.5))
    positions = _set_rows(ax, labels)
    starts = base[row] + np.concatenate([[0.0], np.cumsum(steps)[:-1]])
    colors = np.where(steps >= 0, _POSITIVE_COLOR, _NEGATIVE_COLOR)
    ends = starts + steps
    ax.barh(positions, steps, left=starts, height=0.7, color=colors)
    reach = np.zeros_like(steps)
    if _has_errors(step_errors):
        # At the bar's end, where the running total stands after this feature: the
        # uncertain quantity is the bar's length.
        reach = _error_multipliers(explanation)[row] * step_errors
        ax.errorbar(ends, positions, xerr=reach, fmt="none", ecolor="black", capsize=3)
    # Each bar's phi, written beyond its end and its error bar.
    for end, step, half_width, y in zip(ends, steps, reach, positions, strict=True):
        outward = 1.0 if step >= 0 else -1.0
        ax.annotate(f"{step:+.3g}", (end + outward * half_width, y),
                    xytext=(outward * 4, 0), textcoords="offset points",
                    ha="left" if step >= 0 else "right", va="center", fontsize="small")
    prediction = base[row] + phi.sum()
    ax.axvline(base[row], color="grey", linestyle="--", linewidth=0.8)
    ax.axvline(prediction, color="black", linewidth=0.8)
    # Bars stick to their left edge, which defeats ax.margins; pad by hand so the base
    # line, the error bars and the labels stay inside.
    low = min(np.min(np.minimum(starts, ends) - reach), base[row])
    high = max(np.max(np.maximum(starts, ends) + reach), base[row])
    pad = 0.15 * (high - low) if high > low else max(abs(high), 1.0) * 0.1
    ax.set_xlim(low - pad, high + pad)
    ax.set_xlabel(
        f"model output{_output_label(explanation, output)}: base {base[row]:.4g} → "
        f"prediction {prediction:.4g}"
    )
    return ax


def summary(explanation, *, max_display=20, output=0, title=None):
    """A figure with :func:`bar` (left) and :func:`beeswarm` (right), rows level.

    This is the figure ``skshapley explain`` writes.

    Parameters
    ----------
    explanation : Explanation
        The explained rows.
    max_display : int, default=20
        At most this many rows in each panel.
    output : int or str, default=0
        Which output of a multi-output explanation: a position or a name in
        ``output_names`` (e.g. a class).
    title : str, optional
        The figure's title; by default "SHAP summary of N rows".

    Returns
    -------
    fig : matplotlib Figure
        Its axes are the bar chart, the beeswarm and the beeswarm's colour bar.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley import Explanation
    >>> from skshapley.plotting import summary
    >>> e = Explanation(np.array([[1.0, -3.0]]), np.zeros(1), np.zeros((1, 2)), ["a", "b"])
    >>> len(summary(e).axes)
    3
    """
    import matplotlib.pyplot as plt

    _check_max_display(max_display)
    _check_has_rows(explanation, "summary")
    output = _output_index(explanation, output)
    n_rows_shown = min(max_display, len(explanation.feature_names))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 0.38 * n_rows_shown + 2.2),
                                      width_ratios=[1, 1.35])
    bar(explanation, ax=left, max_display=max_display, output=output)
    beeswarm(explanation, ax=right, max_display=max_display, output=output)
    right.tick_params(axis="y", labelleft=False)  # the bar chart's labels name both rows
    fig.suptitle(title or f"SHAP summary of {len(explanation)} rows")
    fig.tight_layout()
    return fig


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


def _is_coded(explanation, j):
    """Whether column j's data are numbers standing for text (``display_data``)."""
    display = getattr(explanation, "display_data", None)
    if display is None:
        return False
    return not all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                   for v in display[:, j])


def _label_coded_axis(ax, explanation, j, codes):
    """Ticks named by value when column j's data are numbers standing for text (or
    text)."""
    if not (_is_coded(explanation, j) or _numeric_column(explanation, j) is None):
        return
    shown = (explanation.data if explanation.display_data is None
             else explanation.display_data)[:, j]
    ticks = {}
    for code, value in zip(codes, shown, strict=True):
        if np.isfinite(code):  # a missing category has no place on the axis
            ticks.setdefault(code, value)
    positions = sorted(ticks)
    ax.set_xticks(positions, [str(ticks[p]) for p in positions])


def _missing_slot(present, coded):
    """(x, half-width) of the column of rows with a missing value, left of the
    ``present`` values: one category's slot for codes, a tenth of the range else."""
    if present.size == 0:
        return 0.0, 0.4
    low, high = float(present.min()), float(present.max())
    if coded:  # categories sit at 0, 1, ...: one more slot to their left
        return low - 1.0, 0.4
    gap = 0.1 * (high - low) if high > low else max(0.1 * abs(low), 1.0)
    return low - gap, gap / 3


def _binned_correlation(y, others, bin_size):
    """Sum over consecutive bins of ``bin_size`` rows of |corr(y, column)|, for each
    column of ``others`` (n, m); a bin where y or the column is constant adds 0."""
    n = y.shape[0]
    starts = np.arange(0, n, bin_size)
    counts = np.diff(np.r_[starts, n])

    def centred(a):
        means = np.add.reduceat(a, starts, axis=0) / counts.reshape((-1,) + (1,) * (a.ndim - 1))
        return a - np.repeat(means, counts, axis=0)

    # max > min, not a variance above a tolerance: a constant bin adds exactly 0
    y_varies = np.maximum.reduceat(y, starts) > np.minimum.reduceat(y, starts)
    others_vary = (np.maximum.reduceat(others, starts, axis=0)
                   > np.minimum.reduceat(others, starts, axis=0))
    y_centred, others_centred = centred(y), centred(others)
    covariance = np.add.reduceat(y_centred[:, None] * others_centred, starts, axis=0)
    variance_y = np.add.reduceat(y_centred**2, starts)
    variance_others = np.add.reduceat(others_centred**2, starts, axis=0)
    valid = y_varies[:, None] & others_vary
    denominator = np.sqrt(np.where(valid, variance_y[:, None] * variance_others, 1.0))
    return np.abs(np.where(valid, covariance / denominator, 0.0)).sum(axis=0)


def _strongest_interaction(explanation, values, j, output):
    """The feature whose values best explain the spread of feature j's Shapley values at
    a given value of feature j, or None when none does (or j is the only feature).

    With SHAP interaction values in the explanation, the feature of largest mean
    |phi_jk|. Otherwise the heuristic of shap's ``approximate_interactions``: sort the
    rows by feature j's value, cut them into bins of ``clip(n // 10, 1, 50)`` rows, and
    sum over bins |corr(phi_j, x_k)|; a feature's missing values count through the
    larger of this sum for its values (missing ones set to its mean) and for its
    missingness. Ties: the lower feature index.
    """
    n_rows, n_features = values.shape
    if n_features < 2:
        return None
    if explanation.interactions is not None:
        interactions = np.asarray(explanation.interactions, dtype=np.float64)
        if interactions.ndim == 4:
            interactions = interactions[..., output]
        scores = np.abs(interactions[:, j, :]).mean(axis=0)
    else:
        columns = []
        for k in range(n_features):
            column = _numeric_column(explanation, k)
            columns.append(_category_codes(explanation, k)[0] if column is None else column)
        data = np.column_stack(columns)
        order = np.argsort(data[:, j], kind="stable")  # NaN last: missing rows bin together
        data = data[order]
        missing = ~np.isfinite(data)
        with np.errstate(invalid="ignore"):
            means = np.array([data[~missing[:, k], k].mean() if (~missing[:, k]).any()
                              else 0.0 for k in range(n_features)])
        filled = np.where(missing, means, data)
        bin_size = max(min(n_rows // 10, 50), 1)
        y = values[order, j]
        scores = np.maximum(_binned_correlation(y, filled, bin_size),
                            _binned_correlation(y, missing.astype(np.float64), bin_size))
    scores[j] = -np.inf
    k = int(np.argmax(scores))  # the first maximum: ties go to the lower index
    return k if scores[k] > 0 else None


def _color_by_feature(ax, x, y, explanation, k, colormap, colorbar_axes):
    """Points coloured by feature k: its values (5th-95th percentile scale, missing grey)
    or, for a nominal feature, its categories (one colour each, named on the bar)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import BoundaryNorm, ListedColormap

    name = explanation.feature_names[k]
    style = {"s": 16, "linewidths": 0, "zorder": 2}
    column = _numeric_column(explanation, k)
    figure = ax.figure
    if column is not None:
        points = _coloured_scatter(ax, x, y, column, colormap, **style)
        colorbar = figure.colorbar(points, cax=colorbar_axes,
                                   extend=_extend(column, points.norm.vmin, points.norm.vmax))
        colorbar.set_label(name)
        return points
    codes, categories = _category_codes(explanation, k)
    n_categories = max(len(categories), 1)
    palette = plt.get_cmap("tab10" if n_categories <= 10 else "tab20")
    colours = ListedColormap([palette(c % palette.N) for c in range(n_categories)])
    points = ax.scatter(x, y, c=codes, cmap=colours.with_extremes(bad=_LUMP_COLOR),
                        norm=BoundaryNorm(np.arange(n_categories + 1) - 0.5, n_categories),
                        plotnonfinite=True, **style)
    colorbar = figure.colorbar(points, cax=colorbar_axes)
    if n_categories <= 20:
        colorbar.set_ticks(np.arange(len(categories)), labels=categories)
    colorbar.set_label(name)
    return points


def _draw_histogram(axes, x, missing, position, half_width, coded):
    """Light grey counts of the feature's values under the scatter; rows with a missing
    value as one bar at their slot."""
    present = x[~missing]
    if present.size:
        unique = np.unique(present)
        if coded or unique.size <= 20:  # one bar per value
            gaps = np.diff(unique)
            width = 0.8 * (gaps.min() if gaps.size else 1.0)
            axes.bar(unique, [np.count_nonzero(present == u) for u in unique], width=width,
                     color="lightgrey", linewidth=0)
        else:
            edges = np.histogram_bin_edges(present, bins="auto")
            if edges.size > 51:
                edges = np.linspace(present.min(), present.max(), 51)
            axes.hist(present, bins=edges, color="lightgrey", linewidth=0)
    if missing.any():
        axes.bar([position], [int(missing.sum())], width=2 * half_width, color="darkgrey",
                 linewidth=0)
    axes.set_yticks([])
    axes.set_ylabel("rows", fontsize="small")
    for side in ("top", "right", "left"):
        axes.spines[side].set_visible(False)


def dependence(explanation, feature, *, color_by="auto", ax=None, output=0,
               cmap="coolwarm", histogram=True):
    """Each row's Shapley value of one feature against the feature's value.

    A point per explained row: x is the feature's value, y its Shapley value, with a
    vertical 95 % error bar (``Explanation.error_bars``) when the explanation has non-zero
    standard errors. Vertical spread at one x shows interactions: the points are
    coloured by a second feature, by default the one that best explains that spread
    (``color_by="auto"``, as shap's ``approximate_interactions``). A light grey
    histogram of the feature's values sits underneath, on an axis of its own sharing x.

    Rows whose value is missing (NaN, or a category the explainer's codec does not
    know) have no place on the x axis; as in shap, they are drawn left of the others,
    in a grey band named "missing (count)" above the plot, since their Shapley values
    are often large.

    Parameters
    ----------
    explanation : Explanation
        The explained rows; ``data`` gives the x positions.
    feature : int or str
        The feature to show, by index or name.
    color_by : "auto", int, str or None, default="auto"
        Colour the points by this feature's value (blue low, red high; the scale spans
        its 5th-95th percentiles, missing values are grey; a nominal feature gets one
        colour per category). "auto" picks the feature that best explains the spread of
        ``feature``'s Shapley values at equal values of ``feature``: with interaction
        values in the explanation, the largest mean |phi_jk|; otherwise the sum over bins
        of rows sorted by ``feature`` of |corr(phi_j, x_k)|. None draws one colour.
        (A feature named "auto" is chosen by its index.)
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when None.
    output : int or str, default=0
        Which output of a multi-output explanation: a position or a name in
        ``output_names`` (e.g. a class).
    cmap : str or Colormap, default="coolwarm"
        Colours from low to high values of the ``color_by`` feature.
    histogram : bool, default=True
        Draw the histogram of the feature under the plot; it then carries the x axis's
        label and tick labels.

    Returns
    -------
    ax : matplotlib Axes
        The scatter. Its figure also holds the histogram (the Axes below it, sharing x)
        and the colour bar (last), when drawn.

    See Also
    --------
    beeswarm : every feature at once, coloured by its own value.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley import Explanation
    >>> from skshapley.plotting import dependence
    >>> e = Explanation(np.array([[1.0, -3.0], [2.0, 0.5]]), np.zeros(2),
    ...                 np.array([[10.0, 0.0], [20.0, 1.0]]), ["a", "b"])
    >>> ax = dependence(e, "a", color_by="b")
    >>> ax.collections[0].get_offsets().tolist(), ax.figure.axes[-1].get_ylabel()
    ([[10.0, 1.0], [20.0, 2.0]], 'b')
    """
    import matplotlib.pyplot as plt

    _check_has_rows(explanation, "dependence")
    output = _output_index(explanation, output)
    values, std_errors, _ = _select_output(explanation, output)
    names = list(explanation.feature_names)
    j = _feature_index(feature, names)
    if isinstance(color_by, str) and color_by == "auto":
        k = _strongest_interaction(explanation, values, j, output)
    else:
        k = None if color_by is None else _feature_index(color_by, names, "color_by")
    try:  # the codec's codes, where data holds numbers standing for text
        x = np.asarray(explanation.data[:, j], dtype=np.float64)
    except (TypeError, ValueError):  # text itself: number its values
        x = _category_codes(explanation, j)[0]
    coded = _is_coded(explanation, j) or _numeric_column(explanation, j) is None
    codes = x
    ax = _new_axes(ax, (6.0, 4.6 if histogram else 4.0))
    divider = None
    if histogram or k is not None:
        from mpl_toolkits.axes_grid1 import make_axes_locatable

        divider = make_axes_locatable(ax)
    y = values[:, j]
    missing = ~np.isfinite(x)
    position, half_width = 0.0, 0.4
    if missing.any():
        position, half_width = _missing_slot(x[~missing], coded)
        x = np.where(missing, position, x)
    if _has_errors(std_errors):
        ax.errorbar(x, y, yerr=_error_multipliers(explanation) * std_errors[:, j], fmt="none",
                    ecolor="grey",
                    elinewidth=0.8, alpha=0.6, zorder=1)
    bottom = ax
    if histogram:
        bottom = divider.append_axes("bottom", size="22%", pad=0.08, sharex=ax)
        _draw_histogram(bottom, x, missing, position, half_width, coded)
        ax.tick_params(axis="x", labelbottom=False)
    if k is None:
        ax.scatter(x, y, s=16, color=_NEGATIVE_COLOR, linewidths=0, zorder=2)
    else:
        colorbar_axes = divider.append_axes("right", size="3%", pad=0.1)
        _color_by_feature(ax, x, y, explanation, k, plt.get_cmap(cmap), colorbar_axes)
    ax.axhline(0.0, color="grey", linewidth=0.8, zorder=0)
    _label_coded_axis(bottom, explanation, j, codes)
    if missing.any():
        ax.axvspan(position - half_width, position + half_width, color=_LUMP_COLOR,
                   alpha=0.15, linewidth=0, zorder=0)
        # named on a top axis of its own, so the x axis keeps its automatic ticks
        label_axis = ax.secondary_xaxis("top")
        label_axis.set_xticks([position], [f"missing ({int(missing.sum())})"])
        label_axis.tick_params(labelsize="small", colors="dimgrey")
    bottom.set_xlabel(names[j])
    ax.set_ylabel(f"SHAP value of {names[j]}" + _output_label(explanation, output))
    if _has_errors(std_errors):
        ax.set_title("error bars: 95 %", fontsize="small", loc="right")
    return ax


def _rows_of(explanation, rows, caller):
    """Row indices of ``rows``: None (all), an int, a slice, a bool mask or indices."""
    n_rows = len(explanation)
    if rows is None:
        return np.arange(n_rows)
    if isinstance(rows, slice):
        return np.arange(n_rows)[rows]
    index = np.atleast_1d(np.asarray(rows))
    if index.dtype == bool and index.shape == (n_rows,):
        return np.flatnonzero(index)
    if index.ndim != 1 or not np.issubdtype(index.dtype, np.integer) or index.size == 0 \
            or index.min() < -n_rows or index.max() >= n_rows:
        raise ValueError(
            f"The 'rows' parameter of {caller} must be an int, a slice, a bool mask of "
            f"{n_rows} rows or row indices in [{-n_rows}, {n_rows - 1}]; got {rows!r}."
        )
    return index % n_rows


def _cluster_order(values):
    """Rows in the leaf order of a hierarchical clustering of their Shapley values
    (complete linkage, Euclidean distance)."""
    from scipy.cluster.hierarchy import leaves_list, linkage

    if values.shape[0] < 3:
        return np.arange(values.shape[0])
    # The optimal leaf order costs O(n^3) time (1000 rows: 3 s); past 500 rows, scipy's
    # plain order, whose clusters are as contiguous but not ordered among themselves.
    return leaves_list(linkage(values, method="complete", metric="euclidean",
                               optimal_ordering=values.shape[0] <= 500))


def heatmap(explanation, *, order="clustering", ax=None, max_display=10, output=0,
            cmap="coolwarm"):
    """Shapley values as a matrix: a column per explained row, a row per feature.

    Features are the rows of :func:`bar` (largest mean |phi| on top; with more than
    ``max_display``, the last row sums the rest). The explained rows are ordered by a
    hierarchical clustering of their Shapley values (``order="clustering"``, so rows
    explained alike sit together, as in shap's heatmap), by prediction, or as given.
    The colour scale is symmetric around 0 and spans the 99th percentile of |phi|
    (beyond: the end colours). Above the matrix, on an axis of its own, the model
    output f(x) = base + sum(phi) of each row, with the base value dashed; right of it,
    the mean |phi| of each feature, with 95 % error bars as in :func:`bar` when the
    explanation has non-zero standard errors.

    Parameters
    ----------
    explanation : Explanation
        The explained rows.
    order : {"clustering", "prediction"} or array of int, default="clustering"
        Order of the explained rows: the leaf order of a complete-linkage clustering
        of the rows' Shapley values (Euclidean; O(n^2) memory; leaves ordered so that
        neighbours are close up to 500 rows), increasing prediction (ties: lower row
        first), or row indices (a subset is allowed).
    ax : matplotlib Axes, optional
        Where to draw the matrix; a new figure is made when None.
    max_display : int, default=10
        At most this many feature rows.
    output : int or str, default=0
        Which output of a multi-output explanation: a position or a name in
        ``output_names`` (e.g. a class).
    cmap : str or Colormap, default="coolwarm"
        Colours from negative to positive Shapley values.

    Returns
    -------
    ax : matplotlib Axes
        The matrix (its image is ``ax.images[0]``). Its figure also holds the f(x)
        axis above, the bar axis to the right and the colour bar (last).

    See Also
    --------
    beeswarm : the same values, one row of points per feature.
    decision : each row's path from the base value to its prediction.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley import Explanation
    >>> from skshapley.plotting import heatmap
    >>> e = Explanation(np.array([[1.0, -3.0], [2.0, 0.5]]), np.zeros(2), np.eye(2), ["a", "b"])
    >>> ax = heatmap(e, order="prediction")
    >>> ax.images[0].get_array().tolist()  # rows b, a; columns: predictions -2, 2.5
    [[-3.0, 0.5], [1.0, 2.0]]
    """
    from mpl_toolkits.axes_grid1 import make_axes_locatable

    _check_max_display(max_display)
    _check_has_rows(explanation, "heatmap")
    output = _output_index(explanation, output)
    values, _, base = _select_output(explanation, output)
    predictions = base + values.sum(axis=1)
    if isinstance(order, str) and order == "clustering":
        row_order = _cluster_order(values)
        how = "clustered by their Shapley values"
    elif isinstance(order, str) and order == "prediction":
        row_order = np.argsort(predictions, kind="stable")
        how = "by prediction"
    elif isinstance(order, str):
        raise ValueError(
            f"The 'order' parameter of heatmap must be 'clustering', 'prediction' or row "
            f"indices; got {order!r}."
        )
    else:
        row_order = _rows_of(explanation, order, "heatmap")
        how = "as given"
    importance, feature_order = _importance_order(explanation, output)
    shown, rest = _display_rows(feature_order, max_display)
    labels = [explanation.feature_names[j] for j in shown]
    matrix = values[:, shown]
    heights = importance[shown]
    spread = None
    if _has_errors(explanation.std_errors):
        spread = (_error_multipliers(explanation).max()
                  * _pick(explanation.mean_abs_std_errors(), output))
    spreads = None if spread is None else spread[shown]
    if rest.size:
        labels.append(f"{rest.size} other features")
        matrix = np.column_stack([matrix, values[:, rest].sum(axis=1)])
        heights = np.append(heights, importance[rest].sum())
        if spreads is not None:
            spreads = np.append(spreads, np.sqrt((spread[rest] ** 2).sum()))
    image = matrix[row_order].T  # (features, rows)
    limit = float(np.percentile(np.abs(image), 99))
    if limit == 0.0:
        limit = float(np.abs(image).max()) or 1.0
    ax = _new_axes(ax, (8.0, 0.45 * len(labels) + 2.8))
    n_shown = row_order.size
    picture = ax.imshow(image, aspect="auto", interpolation="nearest", cmap=cmap,
                        vmin=-limit, vmax=limit)
    ax.set_yticks(np.arange(len(labels)), labels)
    ax.set_xlabel(f"explained rows ({n_shown}, {how})")
    divider = make_axes_locatable(ax)
    top = divider.append_axes("top", size="25%", pad=0.1, sharex=ax)
    top.plot(np.arange(n_shown), predictions[row_order], color="black", linewidth=1.0)
    if np.all(base == base[0]):
        top.axhline(base[0], color="grey", linestyle="--", linewidth=0.8)
    top.set_ylabel("f(x)", fontsize="small")  # the output is named on the colour bar
    top.tick_params(axis="x", labelbottom=False)
    side = divider.append_axes("right", size="15%", pad=0.1, sharey=ax)
    side.barh(np.arange(len(labels)), heights, height=0.7, xerr=spreads,
              color=_NEGATIVE_COLOR, ecolor="black", capsize=2)
    side.tick_params(axis="y", labelleft=False)
    side.set_xlabel("mean |SHAP|", fontsize="small")
    side.set_xlim(left=0)
    colorbar_axes = divider.append_axes("right", size="2%", pad=0.1)
    clipped = bool((np.abs(image) > limit).any())
    colorbar = ax.figure.colorbar(picture, cax=colorbar_axes,
                                  extend="both" if clipped else "neither")
    colorbar.set_label("SHAP value" + _output_label(explanation, output))
    return ax


def decision(explanation, rows=None, *, ax=None, max_display=20, output=0,
             cmap="coolwarm"):
    """Each row's path from the base value to its prediction, one feature at a time.

    The features are the rows of :func:`bar` (largest mean |phi| on top; with more than
    ``max_display``, the bottom row sums the rest). Each explained row is a line that
    starts at its base value at the bottom and, crossing each feature's row, moves by
    that feature's Shapley value, so it ends at the top at its prediction,
    base + sum(phi) (as shap's decision plot). Lines are coloured by the prediction.
    For a single row with non-zero standard errors, each step carries its 95 % error bar
    (``Explanation.error_bars``) at its end, as in :func:`waterfall`.

    Parameters
    ----------
    explanation : Explanation
        The explained rows.
    rows : int, slice, bool mask or array of int, optional
        Which rows to draw; all when None.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when None.
    max_display : int, default=20
        At most this many feature rows.
    output : int or str, default=0
        Which output of a multi-output explanation: a position or a name in
        ``output_names`` (e.g. a class).
    cmap : str or Colormap, default="coolwarm"
        Colours of the lines, from low to high prediction.

    Returns
    -------
    ax : matplotlib Axes
        The lines are ``ax.collections[0]`` (a LineCollection, one segment list per
        row); a colour bar of the predictions is drawn for more than one row.

    See Also
    --------
    waterfall : one row's steps as bars.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley import Explanation
    >>> from skshapley.plotting import decision
    >>> e = Explanation(np.array([[1.0, -3.0]]), np.array([10.0]), np.ones((1, 2)), ["a", "b"])
    >>> decision(e).collections[0].get_segments()[0][:, 0].tolist()  # a, then b on top
    [10.0, 11.0, 8.0]
    """
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize

    _check_max_display(max_display)
    _check_has_rows(explanation, "decision")
    output = _output_index(explanation, output)
    values, std_errors, base = _select_output(explanation, output)
    selected = _rows_of(explanation, rows, "decision")
    _, order = _importance_order(explanation, output)
    shown, rest = _display_rows(order, max_display)
    labels = [explanation.feature_names[j] for j in shown]
    steps = values[selected][:, shown]
    step_errors = None if std_errors is None else std_errors[selected][:, shown]
    if rest.size:
        labels.append(f"{rest.size} other features")
        steps = np.column_stack([steps, values[selected][:, rest].sum(axis=1)])
        if step_errors is not None:
            lumped = np.sqrt((std_errors[selected][:, rest] ** 2).sum(axis=1))
            step_errors = np.column_stack([step_errors, lumped])
    # Walk from the bottom row (the last label) up to the top one.
    steps = steps[:, ::-1]
    step_errors = None if step_errors is None else step_errors[:, ::-1]
    path = base[selected, None] + np.concatenate(
        [np.zeros((selected.size, 1)), np.cumsum(steps, axis=1)], axis=1)
    heights = np.arange(len(labels) + 1) - 0.5  # row edges, bottom to top
    ax = _new_axes(ax, (7.0, 0.4 * len(labels) + 1.5))
    _set_rows(ax, labels)
    predictions = path[:, -1]
    low, high = float(predictions.min()), float(predictions.max())
    lines = LineCollection([np.column_stack([p, heights]) for p in path],
                           cmap=plt.get_cmap(cmap),
                           norm=Normalize(low, high if high > low else low + 1.0),
                           linewidths=1.2, alpha=0.9 if selected.size == 1 else 0.7)
    lines.set_array(predictions)
    ax.add_collection(lines)
    for base_value in np.unique(base[selected]):
        ax.axvline(base_value, color="grey", linestyle="--", linewidth=0.8, zorder=0)
    reach = np.zeros_like(path)
    if selected.size == 1 and _has_errors(step_errors):
        multiplier = _error_multipliers(explanation)[selected[0]]
        reach[0, 1:] = multiplier * step_errors[0]
        ax.errorbar(path[0, 1:], heights[1:], xerr=reach[0, 1:], fmt="none",
                    ecolor="black", capsize=3)
        ax.set_title("error bars: 95 %", fontsize="small", loc="right")
    left, right = float((path - reach).min()), float((path + reach).max())
    pad = 0.08 * (right - left) if right > left else max(abs(right), 1.0) * 0.1
    ax.set_xlim(left - pad, right + pad)
    ax.grid(axis="y", color="lightgrey", linewidth=0.5)
    ax.set_xlabel("model output" + _output_label(explanation, output))
    if selected.size > 1:
        colorbar = ax.figure.colorbar(lines, ax=ax, pad=0.02, aspect=30)
        colorbar.set_label("prediction")
    return ax


def _convergence_errors(history, ax, label):
    """The old form: error estimates after each check, on a log scale."""
    history = np.asarray(history, dtype=np.float64)
    if history.ndim != 1:
        raise ValueError(
            f"The 'history' parameter must be a 1-d sequence of floats or a ShapleyResult; "
            f"got shape {history.shape}."
        )
    ax = _new_axes(ax, (5.5, 3.5))
    ax.plot(np.arange(1, history.size + 1), history, marker="o", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("check")
    ax.set_ylabel("estimated error (95 % quantile)")
    if label is not None:
        ax.legend()
    return ax


def convergence(history, *, kind="auto", players=None, max_display=5, feature_names=None,
                output=0, ax=None, label=None):
    """How an estimate settles as coalition evaluations are spent.

    Given a :class:`~skshapley.approximators.ShapleyResult` from a run that checked its
    error more than once (``tol`` or ``check_interval`` set), ``kind="values"`` draws
    the running estimate of some players against the evaluations spent, each in a band
    of ±1.96 standard errors, with the final values as dotted lines; ``kind="error"``
    draws the estimated 95 % quantile of the overall error ||phi_hat - phi||_2 against
    the evaluations, on a log scale (several calls on one Axes compare runs). A plain
    sequence of error estimates is drawn against the check index.

    Parameters
    ----------
    history : ShapleyResult or sequence of float
        A result with ``history_evaluations`` (``permutation_shapley`` and
        ``shapley_values(..., method="permutation")``), or error estimates in the order
        they were made.
    kind : {"auto", "values", "error"}, default="auto"
        "auto" is "values" for a result and "error" for a sequence.
    players : sequence of int, optional
        Players to draw with ``kind="values"``; by default the ``max_display`` of
        largest final |value| (ties: lower index first).
    max_display : int, default=5
    feature_names : sequence of str, optional
        Legend names of the players (default "x0", "x1", ...).
    output : int, default=0
        Which output of a multi-output result.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when None.
    label : str, optional
        Legend entry of the line with ``kind="error"``.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from skshapley.games import UnanimityGame
    >>> from skshapley.approximators import permutation_shapley
    >>> from skshapley.plotting import convergence
    >>> game = UnanimityGame([[1, 1, 0], [0, 1, 1]])
    >>> result = permutation_shapley(game, budget=82, sampler="mc", check_interval=8,
    ...                              random_state=0)
    >>> convergence(result, kind="error").get_lines()[0].get_xdata().tolist()
    [18, 34, 50, 66, 82]
    >>> convergence([1.0, 0.5]).get_lines()[0].get_ydata().tolist()
    [1.0, 0.5]
    """
    if kind not in ("auto", "values", "error"):
        raise ValueError(
            f"The 'kind' parameter must be 'auto', 'values' or 'error'; got {kind!r}."
        )
    evaluations = getattr(history, "history_evaluations", None)
    if evaluations is None:
        if kind == "values":
            raise ValueError("kind='values' needs a ShapleyResult, not a sequence of errors.")
        return _convergence_errors(history, ax, label)
    if len(evaluations) == 0:
        raise ValueError(
            f"This {history.method!r} result has no convergence history: it was not "
            "computed by sampling orderings with more than one check. Use "
            "method='permutation' with tol=... or check_interval=...."
        )
    _check_max_display(max_display)
    evaluations = np.asarray(evaluations)
    if kind in ("auto", "values"):
        return _convergence_values(history, evaluations, players, max_display,
                                   feature_names, output, ax)
    ax = _new_axes(ax, (5.5, 3.5))
    ax.plot(evaluations, np.asarray(history.history, dtype=np.float64), marker="o",
            markersize=3, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("coalition evaluations")
    ax.set_ylabel("estimated error (95 % quantile)")
    if label is not None:
        ax.legend()
    return ax


def _convergence_values(result, evaluations, players, max_display, feature_names, output,
                        ax):
    estimates = np.asarray(result.history_values, dtype=np.float64)
    errors = np.asarray(result.history_std_errors, dtype=np.float64)
    if estimates.ndim == 3:  # (checks, players, outputs)
        n_outputs = estimates.shape[2]
        if isinstance(output, bool) or not isinstance(output, (int, np.integer)) \
                or not 0 <= output < n_outputs:
            raise ValueError(f"The 'output' parameter must be an int in [0, {n_outputs - 1}]"
                             f"; got {output!r}.")
        estimates, errors = estimates[:, :, output], errors[:, :, output]
    elif isinstance(output, bool) or output != 0:
        raise ValueError(
            f"The 'output' parameter of convergence must be 0 for a single-output result; "
            f"got {output!r}."
        )
    n_players = estimates.shape[1]
    names = _feature_names(feature_names, n_players, "convergence")
    if players is None:
        final = np.abs(estimates[-1])
        players = np.argsort(-final, kind="stable")[:max_display]
    players = [_feature_index(j, names, "players") for j in players]
    ax = _new_axes(ax, (6.5, 4.0))
    # inf standard errors (one draw) would blow the band up; leave those checks unbanded.
    errors = np.where(np.isfinite(errors), errors, np.nan)
    for j in players:
        (line,) = ax.plot(evaluations, estimates[:, j], marker="o", markersize=3,
                          label=names[j])
        ax.fill_between(evaluations, estimates[:, j] - _Z95 * errors[:, j],
                        estimates[:, j] + _Z95 * errors[:, j], color=line.get_color(),
                        alpha=0.2, linewidth=0)
        ax.axhline(estimates[-1, j], color=line.get_color(), linestyle=":", linewidth=0.8)
    ax.set_xlabel("coalition evaluations")
    ax.set_ylabel("estimate ± 1.96 SE")
    ax.legend(fontsize="small")
    return ax


def _quantile_function_cdf(x, quantiles, probabilities, side):
    """CDF at ``x`` of a piecewise-linear quantile function (``side="right"``: F(x),
    ``"left"``: F(x-)). Flat stretches of ``quantiles`` are atoms: F jumps there."""
    position = np.searchsorted(quantiles, x, side=side) - 1
    below, above = position < 0, position >= quantiles.size - 1
    position = np.clip(position, 0, quantiles.size - 2)
    low, high = quantiles[position], quantiles[position + 1]
    step = np.where(high > low, (x - low) / np.where(high > low, high - low, 1.0), 0.0)
    cdf = probabilities[position] + np.clip(step, 0.0, 1.0) * (
        probabilities[position + 1] - probabilities[position])
    return np.where(below, 0.0, np.where(above, 1.0, cdf))


def cdf_gap(sorted_values, quantiles, probabilities):
    """Kolmogorov-Smirnov distance between data and a quantile function.

    The largest |F_q(x) - F_data(x)| over the data's values x, checked on both sides of
    every jump, where F_q inverts the piecewise-linear quantile function through the
    points ``(probabilities, quantiles)`` (flat stretches are atoms).

    Parameters
    ----------
    sorted_values : ndarray (n,)
        The data, sorted, without NaN.
    quantiles, probabilities : ndarray (m,)
        Non-decreasing quantiles at increasing probabilities from 0 to 1.

    Returns
    -------
    gap : float

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.plotting import cdf_gap
    >>> p = np.linspace(0, 1, 5)
    >>> cdf_gap(np.array([0.0, 0.0, 1.0, 1.0]), np.array([0.0, 0.0, 0.0, 1.0, 1.0]), p)
    0.25
    """
    values = np.unique(sorted_values)
    n = sorted_values.size
    empirical_right = np.searchsorted(sorted_values, values, side="right") / n
    empirical_left = np.searchsorted(sorted_values, values, side="left") / n
    right = _quantile_function_cdf(values, quantiles, probabilities, "right")
    left = _quantile_function_cdf(values, quantiles, probabilities, "left")
    return float(max(np.max(np.abs(right - empirical_right)),
                     np.max(np.abs(left - empirical_left))))


def quantile_sketch(transformer_or_sketch, X, *, feature=0, ax=None, n_points=512,
                    xscale="auto"):
    """A feature's CDF as the moment sketch estimates it, over the data's empirical CDF.

    The sketch's CDF is drawn from its quantiles at ``n_points`` probabilities; the
    empirical CDF of the column of ``X`` is a step line. The title gives the largest
    vertical gap between the two (the Kolmogorov-Smirnov distance, measured at the
    data points), the error a quantile transform of this column inherits.

    Parameters
    ----------
    transformer_or_sketch : MomentQuantileTransformer or MomentSketch
        Fitted transformer, or a sketch that has seen data.
    X : array-like of shape (n_samples, n_features)
        Data to compare with (usually what the sketch was fitted on).
    feature : int or str, default=0
        Column, by index or, for a transformer fitted on a DataFrame, by name.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when None.
    n_points : int, default=512
        Probabilities at which the sketch's quantiles are drawn.
    xscale : {"auto", "linear", "log"}, default="auto"
        "auto" is "log" for positive data whose upper tail (median to 99th percentile)
        is more than three times as long as its lower tail (1st percentile to median),
        such as incomes or counts of events, so the bulk is not squeezed to the left.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.preprocessing import MomentQuantileTransformer
    >>> from skshapley.plotting import quantile_sketch
    >>> X = np.random.default_rng(0).exponential(size=(5000, 1))
    >>> ax = quantile_sketch(MomentQuantileTransformer(small_n=0).fit(X), X)
    >>> ax.get_title().startswith("max |F_sketch - F_data| = 0.00")
    True
    """
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) \
            or n_points < 2:
        raise ValueError(f"The 'n_points' parameter must be an int >= 2; got {n_points!r}.")
    names = getattr(transformer_or_sketch, "feature_names_in_", None)
    if hasattr(X, "columns"):
        names = [str(c) for c in X.columns] if names is None else list(names)
    data = np.asarray(X, dtype=np.float64)
    if data.ndim == 1:
        data = data[:, None]
    if data.ndim != 2:
        raise ValueError(f"X must be 2-d (n_samples, n_features); got shape {data.shape}.")
    names = _feature_names(names, data.shape[1])
    j = _feature_index(feature, list(names))
    column = data[:, j]
    column = np.sort(column[np.isfinite(column)])
    if column.size == 0:
        raise ValueError(f"Feature {names[j]!r} of X has no finite values.")
    probabilities = np.linspace(0.0, 1.0, n_points)
    if hasattr(transformer_or_sketch, "quantiles"):
        sketch_quantiles = transformer_or_sketch.quantiles(probabilities)[:, j]
    elif hasattr(transformer_or_sketch, "quantile"):
        sketch_quantiles = transformer_or_sketch.quantile(probabilities)[:, j]
    else:
        raise TypeError(
            "The 'transformer_or_sketch' parameter must be a fitted MomentQuantileTransformer "
            f"or a MomentSketch; got {type(transformer_or_sketch).__name__}."
        )
    if xscale not in ("auto", "linear", "log"):
        raise ValueError(f"The 'xscale' parameter must be 'auto', 'linear' or 'log'; got "
                         f"{xscale!r}.")
    if xscale == "auto":
        low, middle, high = np.quantile(column, [0.01, 0.5, 0.99])
        long_right_tail = column[0] > 0 and high - middle > 3.0 * (middle - low)
        xscale = "log" if long_right_tail else "linear"
    gap = cdf_gap(column, sketch_quantiles, probabilities)
    empirical = np.arange(1, column.size + 1) / column.size
    ax = _new_axes(ax, (6.0, 4.0))
    ax.step(column, empirical, where="post", color="black", linewidth=1.0,
            label=f"empirical CDF ({column.size} values)")
    ax.plot(sketch_quantiles, probabilities, color=_POSITIVE_COLOR, linewidth=1.5,
            linestyle="--", label="moment sketch")
    if xscale == "log":
        if column[0] <= 0:
            raise ValueError(f"xscale='log' needs positive values; feature {names[j]!r} "
                             f"has minimum {column[0]:.4g}.")
        ax.set_xscale("log")
    ax.set_xlabel(str(names[j]) + (" (log scale)" if xscale == "log" else ""))
    ax.set_ylabel("P(X <= x)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"max |F_sketch - F_data| = {gap:.4f}")
    ax.legend(loc="lower right", fontsize="small")
    return ax


def attribution_bar(result, *, feature_names=None, ax=None, max_display=20):
    """Horizontal bars of an R² attribution (:func:`skshapley.attribution.lsspa`), largest
    first, with the per-feature 95 % error quantiles as error bars (none when exact).

    Parameters
    ----------
    result : AttributionResult
    feature_names : list of str, optional
    ax : matplotlib Axes, optional
    max_display : int, default=20
        At most this many bars; the rest are summed into one "N other features" bar.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from skshapley.plotting import attribution_bar
    >>> r = SimpleNamespace(attribution=np.array([0.1, 0.5]), attribution_errors=np.zeros(2))
    >>> [t.get_text() for t in attribution_bar(r, feature_names=["a", "b"]).get_yticklabels()]
    ['b', 'a']
    """
    _check_max_display(max_display)
    values = np.asarray(result.attribution, dtype=float)
    errors = np.asarray(result.attribution_errors, dtype=float)
    names = _feature_names(feature_names, values.size, "attribution_bar")
    order = np.argsort(-values, kind="stable")
    shown, rest = _display_rows(order, max_display)
    labels = [names[j] for j in shown]
    heights, spreads = values[shown], errors[shown]
    if rest.size:
        labels.append(f"{rest.size} other features")
        heights = np.append(heights, values[rest].sum())
        spreads = np.append(spreads, np.sqrt((errors[rest] ** 2).sum()))
    has_errors = bool(np.any(spreads > 0))
    ax = _new_axes(ax, (6.5, 0.35 * len(labels) + 1.5))
    positions = _set_rows(ax, labels)
    ax.barh(positions, heights, height=0.7, xerr=spreads if has_errors else None,
            color=np.where(heights >= 0, _NEGATIVE_COLOR, "#d62728"), ecolor="black",
            capsize=3)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_xlabel("share of test R² (Shapley value)")
    if has_errors:
        ax.set_title("error bars: 95 %", fontsize="small", loc="right")
    return ax


def importance_bar(result, *, ax=None, max_display=20):
    """Horizontal bars of global importances (:func:`skshapley.inspection.shapley_importance`),
    largest first, with their 95 % intervals as error bars (none when exact).

    Parameters
    ----------
    result : Bunch
        From :func:`~skshapley.inspection.shapley_importance`: its ``importances_mean``,
        ``ci_low``, ``ci_high`` and ``feature_names`` (``method``, ``n_evaluations``
        and ``scoring``, when present, go into the title and the axis label).
    ax : matplotlib Axes, optional
    max_display : int, default=20
        At most this many bars; the rest are summed into one "N other features" bar,
        drawn without an error bar (the estimates share their orderings, so their
        errors do not add in quadrature).

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.utils import Bunch
    >>> from skshapley.plotting import importance_bar
    >>> r = Bunch(importances_mean=np.array([0.1, 0.5]), ci_low=np.array([0.0, 0.4]),
    ...           ci_high=np.array([0.2, 0.6]), feature_names=np.array(["a", "b"]))
    >>> [t.get_text() for t in importance_bar(r).get_yticklabels()]
    ['b', 'a']
    """
    _check_max_display(max_display)
    values = np.asarray(result.importances_mean, dtype=float)
    low = np.asarray(result.ci_low, dtype=float)
    high = np.asarray(result.ci_high, dtype=float)
    names = _feature_names(result.get("feature_names"), values.size, "importance_bar")
    order = np.argsort(-values, kind="stable")  # ties: lower index first
    shown, rest = _display_rows(order, max_display)
    labels = [names[j] for j in shown]
    heights = values[shown]
    # an infinite interval (one draw) has no bar to draw; its row says so in the title
    below = np.where(np.isfinite(low[shown]), heights - low[shown], 0.0)
    above = np.where(np.isfinite(high[shown]), high[shown] - heights, 0.0)
    n_unbounded = int(np.sum(~np.isfinite(low[shown]) | ~np.isfinite(high[shown])))
    if rest.size:
        labels.append(f"{rest.size} other features")
        heights = np.append(heights, values[rest].sum())
        below, above = np.append(below, 0.0), np.append(above, 0.0)
    has_errors = bool(np.any(below > 0) or np.any(above > 0))
    ax = _new_axes(ax, (6.5, 0.35 * len(labels) + 1.5))
    positions = _set_rows(ax, labels)
    ax.barh(positions, heights, height=0.7,
            xerr=np.vstack([below, above]) if has_errors else None,
            color=np.where(heights >= 0, _NEGATIVE_COLOR, _POSITIVE_COLOR),
            ecolor="black", capsize=3)
    ax.axvline(0.0, color="black", linewidth=0.8)
    scoring = result.get("scoring")
    ax.set_xlabel(f"gain in {scoring} (Shapley value)" if scoring
                  else "gain in score (Shapley value)")
    detail = []
    if result.get("method") is not None:
        detail.append(f"{result.method}, {result.get('n_evaluations', '?')} evaluations")
    if has_errors:
        detail.append("error bars: 95 %")
    if n_unbounded:
        detail.append(f"{n_unbounded} without error bar (one draw)")
    if detail:
        ax.set_title("; ".join(detail), fontsize="small", loc="right")
    return ax


def topk(result, *, feature_names=None, ax=None, max_display=20):
    """Top-k identification: estimates with their confidence intervals, the chosen
    features highlighted and the cut drawn between the k-th and the (k+1)-th.

    Parameters
    ----------
    result : TopKResult or fitted TopKShapleySelector
        From :func:`skshapley.approximators.topk_shapley`, or a selector (its
        ``shapley_values_``, ``confidence_intervals_`` and ``support_``).
    feature_names : list of str, optional
        Defaults to the selector's ``feature_names_in_``, else ``x0, x1, ...``.
    ax : matplotlib Axes, optional
    max_display : int, default=20
        Show at most this many features, largest estimate first (the cut is always
        shown when it falls inside them).

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from skshapley.games import AdditiveGame
    >>> from skshapley.approximators import topk_shapley
    >>> from skshapley.plotting import topk
    >>> result = topk_shapley(AdditiveGame([0.2, 0.9, 0.5]), 1, budget=500, random_state=0)
    >>> [t.get_text() for t in topk(result).get_yticklabels()]
    ['x1', 'x2', 'x0']
    """
    _check_max_display(max_display)
    if hasattr(result, "fit"):  # a selector: NotFittedError rather than AttributeError
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(result)
    if hasattr(result, "shapley_values_"):  # a fitted selector
        values = np.asarray(result.shapley_values_, dtype=float)
        intervals = np.asarray(result.confidence_intervals_, dtype=float)
        chosen = np.asarray(result.support_, dtype=bool)
        if feature_names is None:
            feature_names = getattr(result, "feature_names_in_", None)
        detail = f"{result.method_}, {result.n_evaluations_} evaluations"
        certified = result.converged_
    else:
        values = np.asarray(result.values, dtype=float)
        intervals = np.asarray(result.confidence_intervals, dtype=float)
        chosen = np.zeros(values.shape[0], dtype=bool)
        chosen[np.asarray(result.top_k)] = True
        detail = f"{result.method}, {result.n_evaluations} evaluations"
        certified = result.pac_satisfied
    names = _feature_names(feature_names, values.size, "topk")
    # Chosen features first (largest estimate first, ties: lower index), then the rest
    # (lexsort is stable; its last key is the primary one).
    order = np.lexsort((-values, ~chosen))
    shown = order[:max_display]
    n_chosen = int(chosen.sum())
    ax = _new_axes(ax, (6.5, 0.35 * len(shown) + 1.6))
    positions = _set_rows(ax, [names[j] for j in shown])
    low, high = intervals[shown, 0], intervals[shown, 1]
    finite = np.isfinite(low) & np.isfinite(high)
    centre = values[shown]
    colors = np.where(chosen[shown], _POSITIVE_COLOR, _LUMP_COLOR)
    for color in (_POSITIVE_COLOR, _LUMP_COLOR):
        rows = finite & (colors == color)
        if rows.any():
            ax.errorbar(centre[rows], positions[rows],
                        xerr=np.vstack([centre - low, high - centre])[:, rows], fmt="none",
                        ecolor=color, capsize=3, linewidth=1.2)
    ax.scatter(centre, positions, c=colors.tolist(), zorder=3, s=28)
    if 0 < n_chosen < len(shown):
        cut = (positions[n_chosen - 1] + positions[n_chosen]) / 2
        ax.axhline(cut, color="black", linestyle="--", linewidth=1.0)
        ax.annotate(f"top {n_chosen}", xy=(1.0, cut), xycoords=("axes fraction", "data"),
                    xytext=(-4, 3), textcoords="offset points", ha="right",
                    fontsize="small")
    ax.axvline(0.0, color="black", linewidth=0.6, alpha=0.5)
    ax.set_xlabel("Shapley value estimate (interval: simultaneous 1 - delta)")
    status = "PAC rule met" if certified else "PAC rule not met"
    ax.set_title(f"{detail}; {status}", fontsize="small", loc="left")
    return ax

