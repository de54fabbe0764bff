"""The plots of an :class:`~skshapley.Explanation`'s values per feature: :func:`bar`,
:func:`beeswarm`, :func:`waterfall` of one row and :func:`summary` (bar and beeswarm side
by side)."""

from __future__ import annotations

import numpy as np

from skshapley.plotting._common import (
    _LUMP_COLOR,
    _NEGATIVE_COLOR,
    _POSITIVE_COLOR,
    _check_max_display,
    _checked_output,
    _coloured_scatter,
    _error_multipliers,
    _feature_rows,
    _has_errors,
    _importance_order,
    _label_bar_ends,
    _lumped,
    _mean_abs_rows,
    _note_error_bars,
    _numeric_column,
    _output_label,
    _rows_axes,
    _select_output,
    _shown_data,
    _value_colorbar,
)


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
    output = _checked_output(explanation, "bar", output, allow_all=True)
    if output is None:
        return _stacked_bar(explanation, ax, max_display)
    _, _, labels, heights, spreads = _mean_abs_rows(explanation, output, max_display)
    ax, positions = _rows_axes(ax, labels)
    ax.barh(positions, heights, height=0.7, xerr=spreads, color=color, ecolor="black",
            capsize=3)
    ax.set_xlabel("mean |SHAP value|" + _output_label(explanation, output))
    if spreads is not None:
        _note_error_bars(ax)
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
    shown, rest, labels = _feature_rows(explanation.feature_names, order, max_display)
    parts = _lumped(importance, shown, rest, axis=0)
    spreads = None
    if _has_errors(explanation.std_errors):
        errors = np.asarray(explanation.mean_abs_std_errors(), dtype=np.float64)
        errors = errors[:, None] if errors.ndim == 1 else errors
        # One feature's outputs share their draws: add their errors (the bound for any
        # correlation); features, as in bar, in quadrature.
        per_feature = _error_multipliers(explanation).max() * errors.sum(axis=1)
        spreads = _lumped(per_feature, shown, rest, errors=True)
    ax, positions = _rows_axes(ax, labels, margin=1.8)
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
        _note_error_bars(ax)
    ax.set_xlabel("mean |SHAP value| (stacked over outputs)")
    # outside, right of the axes: inside it would cover the short bars and their labels
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _label_bar_ends(ax, left, positions, reach)
    return ax


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
    output = _checked_output(explanation, "beeswarm", output)
    values, _, _ = _select_output(explanation, output)
    _, order = _importance_order(explanation, output)
    shown, rest, labels = _feature_rows(explanation.feature_names, order, max_display)
    ax, positions = _rows_axes(ax, labels, width=7.0)
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
        colorbar = _value_colorbar(ax.figure, scatter, column, ax=ax, pad=0.02,
                                   aspect=30)
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
    output = _checked_output(explanation, "waterfall", output)
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
    data = np.asarray(_shown_data(explanation))[row]
    names = [f"{name} = {_format_value(data[j])}"
             for j, name in enumerate(explanation.feature_names)]
    shown, rest, labels = _feature_rows(names, order, max_display)
    steps = _lumped(phi, shown, rest)
    step_errors = None if errors is None else _lumped(errors, shown, rest, errors=True)
    ax, positions = _rows_axes(ax, labels, width=7.0, row_height=0.4)
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
    output = _checked_output(explanation, "summary", output)
    n_rows_shown = min(max_display, len(explanation.feature_names))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 0.38 * n_rows_shown + 2.2),
                                      width_ratios=[1, 1.35])
    bar(explanation, ax=left, max_display=max_display, output=output)
    beeswarm(explanation, ax=right, max_display=max_display, output=output)
    right.tick_params(axis="y", labelleft=False)  # the bar chart's labels name both rows
    fig.suptitle(title or f"SHAP summary of {len(explanation)} rows")
    fig.tight_layout()
    return fig
