"""The plots of every explained row at once: :func:`heatmap` (the values as a matrix)
and :func:`decision` (each row's path from the base value to its prediction)."""

from __future__ import annotations

import numpy as np

from skshapley.plotting._common import (
    _NEGATIVE_COLOR,
    _check_max_display,
    _checked_output,
    _error_multipliers,
    _feature_rows,
    _has_errors,
    _importance_order,
    _lumped,
    _mean_abs_rows,
    _new_axes,
    _note_error_bars,
    _output_label,
    _rows_axes,
    _select_output,
)


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
    output = _checked_output(explanation, "heatmap", output)
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
    # the feature rows of bar, with its bars beside the matrix
    shown, rest, labels, heights, spreads = _mean_abs_rows(explanation, output, max_display)
    image = _lumped(values, shown, rest)[row_order].T  # (features, rows)
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
    output = _checked_output(explanation, "decision", output)
    values, std_errors, base = _select_output(explanation, output)
    selected = _rows_of(explanation, rows, "decision")
    _, order = _importance_order(explanation, output)
    shown, rest, labels = _feature_rows(explanation.feature_names, order, max_display)
    steps = _lumped(values[selected], shown, rest)
    step_errors = None if std_errors is None else _lumped(std_errors[selected], shown, rest,
                                                          errors=True)
    # Walk from the bottom row (the last label) up to the top one.
    steps = steps[:, ::-1]
    step_errors = None if step_errors is None else step_errors[:, ::-1]
    path = base[selected, None] + np.concatenate(
        [np.zeros((selected.size, 1)), np.cumsum(steps, axis=1)], axis=1)
    heights = np.arange(len(labels) + 1) - 0.5  # row edges, bottom to top
    ax, _ = _rows_axes(ax, labels, width=7.0, row_height=0.4)
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
        _note_error_bars(ax)
    left, right = float((path - reach).min()), float((path + reach).max())
    pad = 0.08 * (right - left) if right > left else max(abs(right), 1.0) * 0.1
    ax.set_xlim(left - pad, right + pad)
    ax.grid(axis="y", color="lightgrey", linewidth=0.5)
    ax.set_xlabel("model output" + _output_label(explanation, output))
    if selected.size > 1:
        colorbar = ax.figure.colorbar(lines, ax=ax, pad=0.02, aspect=30)
        colorbar.set_label("prediction")
    return ax
