"""The dependence plot of an :class:`~skshapley.Explanation`: one feature's Shapley
values against its values, coloured by the feature it interacts with most."""

from __future__ import annotations

import numpy as np

from skshapley.plotting._common import (
    _LUMP_COLOR,
    _NEGATIVE_COLOR,
    _category_codes,
    _checked_output,
    _coloured_scatter,
    _error_multipliers,
    _feature_index,
    _has_errors,
    _new_axes,
    _note_error_bars,
    _numeric_column,
    _output_label,
    _select_output,
    _shown_data,
    _value_colorbar,
)


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
    shown = _shown_data(explanation)[:, j]
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
        colorbar = _value_colorbar(figure, points, column, cax=colorbar_axes)
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

    output = _checked_output(explanation, "dependence", output)
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
        _note_error_bars(ax)
    return ax
