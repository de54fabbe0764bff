"""Plots of explanations with matplotlib: bar, beeswarm, waterfall, summary, convergence.

Every function takes an optional ``ax`` (a new figure is made when it is None), draws
error bars where the explanation has non-zero standard errors, and returns the Axes
(``summary`` returns the Figure). pyplot is imported only inside the functions, and
nothing here calls ``plt.show``.

``bar``, ``beeswarm`` and ``summary`` show the same rows in the same order: the
``max_display - 1`` features of largest mean |phi| (ties: lower index first), then, when
there are more features, one row for the rest ("N other features").
"""

from __future__ import annotations

import numpy as np

__all__ = ["bar", "beeswarm", "convergence", "summary", "waterfall"]

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
            f"The 'output' parameter must be an int in [0, {n_outputs - 1}] for an "
            f"explanation with {n_outputs} outputs; got {output!r}."
        )
    return n_outputs


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
    if np.ndim(explanation.values) != 3:
        return ""
    names = explanation.output_names
    return f" (output {names[output] if names else output})"


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


def bar(explanation, *, ax=None, max_display=20, output=0, color=_NEGATIVE_COLOR):
    """Horizontal bars of the mean |phi| of each feature, with 95 % error bars.

    Features are sorted by decreasing mean |phi| (``Explanation.mean_abs``; ties keep
    the lower feature index first). Each error bar is ±1.96 times
    ``Explanation.mean_abs_std_errors``; error bars are drawn only when some standard
    error is non-zero (exact values have none).

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
    output : int, default=0
        Which output of a multi-output explanation (its last axis).
    color : str, default="#1f77b4"
        Colour of the bars.

    Returns
    -------
    ax : matplotlib Axes

    See Also
    --------
    beeswarm : the values behind each bar, row by row.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley import Explanation
    >>> from skshapley.plotting import bar
    >>> e = Explanation(np.array([[1.0, -3.0]]), np.zeros(1), np.zeros((1, 2)), ["a", "b"])
    >>> [t.get_text() for t in bar(e).get_yticklabels()]
    ['b', 'a']
    """
    _check_max_display(max_display)
    _check_output(explanation, output)
    importance, order = _importance_order(explanation, output)
    spread = None
    if _has_errors(explanation.std_errors):
        spread = _Z95 * _pick(explanation.mean_abs_std_errors(), output)
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
        ax.set_title("error bars: 95 % (±1.96 SE)", fontsize="small", loc="right")
    ax.set_xlim(left=0)
    return ax


def _shades(column):
    """Colour positions in [0, 1]: the dense rank of each value among the rows.

    Ranks rather than min-max, so one outlier does not wash out a feature; dense ranks,
    so a binary feature is blue and red. NaN, and a constant column, get the middle.
    """
    shade = np.full(column.shape[0], 0.5)
    finite = np.isfinite(column)
    if finite.any():
        _, ranks = np.unique(column[finite], return_inverse=True)
        if ranks.max() > 0:
            shade[finite] = ranks / ranks.max()
    return shade


def beeswarm(explanation, *, ax=None, max_display=20, output=0, cmap="coolwarm",
             random_state=0):
    """One row of points per feature: each explained row's phi, coloured by its value.

    Rows are those of :func:`bar`, in the same order. A point's x is the row's Shapley
    value; its y is jittered (seeded by ``random_state``, so the picture is
    reproducible); its colour is the rank of the feature value among the explained
    rows, from low (blue) to high (red). With more than ``max_display`` features, the
    last row shows, in grey, each row's sum of the other features' values.

    Parameters
    ----------
    explanation : Explanation
        The explained rows; ``data`` gives the colours.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when None.
    max_display : int, default=20
        At most this many rows of points (see :func:`bar`).
    output : int, default=0
        Which output of a multi-output explanation.
    cmap : str or Colormap, default="coolwarm"
    random_state : int, default=0
        Seed of the vertical jitter.

    Returns
    -------
    ax : matplotlib Axes
        Its colour bar is labelled "feature value (low → high)".

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
    values, _, _ = _select_output(explanation, output)
    data = np.asarray(explanation.data, dtype=np.float64)
    n_rows = values.shape[0]
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
    scatter = None
    for position, j in zip(positions, shown, strict=False):
        jitter = rng.uniform(-0.3, 0.3, size=n_rows) if n_rows > 1 else np.zeros(1)
        scatter = ax.scatter(values[:, j], position + jitter, c=_shades(data[:, j]),
                             cmap=colormap, vmin=0, vmax=1, s=14, alpha=0.85, linewidths=0)
    if rest.size:
        jitter = rng.uniform(-0.3, 0.3, size=n_rows) if n_rows > 1 else np.zeros(1)
        ax.scatter(values[:, rest].sum(axis=1), positions[-1] + jitter, color=_LUMP_COLOR,
                   s=14, alpha=0.85, linewidths=0)
    ax.set_xlabel("SHAP value" + _output_label(explanation, output))
    if scatter is not None:
        colorbar = ax.figure.colorbar(scatter, ax=ax, pad=0.02, aspect=30)
        colorbar.set_label("feature value (low → high)")
        colorbar.set_ticks([0, 1], labels=["low", "high"])
    return ax


def _format_value(value):
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
    ends at the prediction, base + sum(phi). Error bars of ±1.96 standard errors sit at
    each bar's end when the explanation has non-zero standard errors.

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
    output : int, default=0
        Which output of a multi-output explanation.

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
    data = np.asarray(explanation.data)[row]
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
        reach = _Z95 * step_errors
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
    output : int, default=0
        Which output of a multi-output explanation.
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
    n_rows_shown = min(max_display, len(explanation.feature_names))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 0.38 * n_rows_shown + 2.2),
                                      width_ratios=[1, 1.35])
    bar(explanation, ax=left, max_display=max_display, output=output)
    beeswarm(explanation, ax=right, max_display=max_display, output=output)
    right.tick_params(axis="y", labelleft=False)  # the bar chart's labels name both rows
    fig.suptitle(title or f"SHAP summary of {len(explanation)} rows")
    fig.tight_layout()
    return fig


def convergence(history, *, ax=None, label=None):
    """The estimated error after each check of the stopping rule, on a log scale.

    Parameters
    ----------
    history : sequence of float
        Error estimates in the order they were made (e.g. ``ShapleyResult.history``);
        the x axis is the check index, 1, 2, ...
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when None. Several calls on one Axes
        compare runs.
    label : str, optional
        Legend entry of this line.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from skshapley.plotting import convergence
    >>> convergence([1.0, 0.5, 0.25]).get_lines()[0].get_ydata().tolist()
    [1.0, 0.5, 0.25]
    """
    history = np.asarray(history, dtype=np.float64)
    if history.ndim != 1:
        raise ValueError(
            f"The 'history' parameter must be a 1-d sequence of floats; got shape "
            f"{history.shape}."
        )
    ax = _new_axes(ax, (5.5, 3.5))
    ax.plot(np.arange(1, history.size + 1), history, marker="o", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("check")
    ax.set_ylabel("estimated error (95 % quantile)")
    if label is not None:
        ax.legend()
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
    names = (list(feature_names) if feature_names is not None
             else [f"x{j}" for j in range(values.size)])
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
    names = (list(map(str, feature_names)) if feature_names is not None
             else [f"x{j}" for j in range(values.size)])
    # Chosen features first (largest estimate first, ties: lower index), then the rest.
    order = np.concatenate([np.flatnonzero(chosen)[np.argsort(-values[chosen], kind="stable")],
                            np.flatnonzero(~chosen)[np.argsort(-values[~chosen],
                                                               kind="stable")]])
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


__all__.append("topk")  # appended here, next to the function, to keep merges simple
