"""Plots of explanations with matplotlib: bar, beeswarm, waterfall, summary, convergence.

Every function takes an optional ``ax`` (a new figure is made when it is None), draws
with error bars where the explanation has standard errors, and returns the Axes
(``summary`` returns the Figure). Nothing here calls ``plt.show``.
"""

from __future__ import annotations

import numpy as np

# Two-sided 95 % normal quantile: error bars span values ± 1.96 standard errors.
_Z95 = 1.959963984540054


def _new_axes(ax, figsize):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def _select_output(explanation, output):
    """Values, std errors and base values of one output, as (n, d), (n, d), (n,)."""
    values = np.asarray(explanation.values)
    std_errors = None if explanation.std_errors is None else np.asarray(explanation.std_errors)
    base = np.asarray(explanation.base_values)
    if values.ndim == 3:
        n_outputs = values.shape[2]
        if not 0 <= output < n_outputs:
            raise ValueError(
                f"The 'output' parameter must be in [0, {n_outputs - 1}]; got {output!r}."
            )
        values = values[:, :, output]
        std_errors = None if std_errors is None else std_errors[:, :, output]
        base = base[:, output]
    return values, std_errors, base


def _output_label(explanation, output):
    names = explanation.output_names
    if np.ndim(explanation.values) == 3 and names:
        return f" (output {names[output]})"
    return ""


def feature_order(explanation, output=0):
    """Feature indices by decreasing mean |phi|; ties keep the lower index first."""
    values, _, _ = _select_output(explanation, output)
    return np.argsort(-np.abs(values).mean(axis=0), kind="stable")


def bar(explanation, *, ax=None, max_display=20, output=0, color="#1f77b4"):
    """Horizontal bars of mean |phi| per feature, with 95 % error bars.

    The error bar of a mean |phi| is 1.96 times ``Explanation.mean_abs_std_errors``
    (the rows' errors treated as independent); it is drawn only when some standard error
    is non-zero.

    Parameters
    ----------
    explanation : Explanation
    ax : matplotlib Axes, optional
    max_display : int, default=20
        Show the most important features only; the others are summed into one bar.
    output : int, default=0
        Which output of a multi-output explanation.
    color : str

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley import Explanation
    >>> from skshapley.plotting import bar
    >>> e = Explanation(np.array([[1.0, -3.0]]), np.zeros(1), np.zeros((1, 2)), ["a", "b"])
    >>> [t.get_text() for t in bar(e).get_yticklabels()]
    ['b', 'a']
    """
    values, std_errors, _ = _select_output(explanation, output)
    n_rows = values.shape[0]
    importance = np.abs(values).mean(axis=0)
    spread = None
    if std_errors is not None and np.any(std_errors > 0):
        spread = _Z95 * np.sqrt((std_errors**2).sum(axis=0)) / n_rows
    order = feature_order(explanation, output)
    labels = [explanation.feature_names[j] for j in order]
    heights = importance[order]
    spreads = None if spread is None else spread[order]
    if len(order) > max_display:
        rest = order[max_display - 1 :]
        labels = labels[: max_display - 1] + [f"{len(rest)} other features"]
        heights = np.append(heights[: max_display - 1], importance[rest].sum())
        if spreads is not None:
            spreads = np.append(spreads[: max_display - 1], np.sqrt((spread[rest] ** 2).sum()))
    ax = _new_axes(ax, (6.5, 0.35 * len(labels) + 1.5))
    positions = np.arange(len(labels))[::-1]
    ax.barh(positions, heights, xerr=spreads, color=color, ecolor="black", capsize=3)
    ax.set_yticks(positions, labels)
    ax.set_xlabel("mean |SHAP value|" + _output_label(explanation, output))
    if spreads is not None:
        ax.set_title("error bars: 95 % (±1.96 SE)", fontsize="small", loc="right")
    ax.set_xlim(left=0)
    return ax


def beeswarm(explanation, *, ax=None, max_display=20, output=0, cmap="coolwarm",
             random_state=0):
    """One row of points per feature: each explained row's phi, coloured by its value.

    Rows are in the order of :func:`bar`. Points are jittered vertically (seeded, so the
    picture is reproducible); colour is the feature value's rank within the explained
    rows, from low (blue) to high (red).

    Parameters
    ----------
    explanation : Explanation
    ax : matplotlib Axes, optional
    max_display : int, default=20
    output : int, default=0
    cmap : str, default="coolwarm"
    random_state : int, default=0
        Seed of the vertical jitter.

    Returns
    -------
    ax : matplotlib Axes

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
    from scipy.stats import rankdata

    values, _, _ = _select_output(explanation, output)
    data = np.asarray(explanation.data, dtype=np.float64)
    n_rows = values.shape[0]
    order = feature_order(explanation, output)[:max_display]
    ax = _new_axes(ax, (7.0, 0.35 * len(order) + 1.5))
    rng = np.random.default_rng(random_state)
    colormap = plt.get_cmap(cmap)
    scatter = None
    for position, j in zip(range(len(order) - 1, -1, -1), order, strict=True):
        column = data[:, j]
        finite = np.isfinite(column)
        shade = np.full(n_rows, 0.5)
        if finite.sum() > 1:
            ranks = rankdata(column[finite])
            shade[finite] = (ranks - 1) / max(ranks.max() - 1, 1)
        jitter = rng.uniform(-0.3, 0.3, size=n_rows) if n_rows > 1 else np.zeros(1)
        scatter = ax.scatter(values[:, j], position + jitter, c=shade, cmap=colormap,
                             vmin=0, vmax=1, s=14, alpha=0.85, linewidths=0)
    ax.axvline(0.0, color="grey", linewidth=0.8, zorder=0)
    ax.set_yticks(np.arange(len(order))[::-1], [explanation.feature_names[j] for j in order])
    ax.set_xlabel("SHAP value" + _output_label(explanation, output))
    if scatter is not None:
        colorbar = ax.figure.colorbar(scatter, ax=ax, pad=0.02, aspect=30)
        colorbar.set_label("feature value (low → high)")
        colorbar.set_ticks([0, 1], labels=["low", "high"])
    return ax


def waterfall(explanation, row=0, *, ax=None, max_display=10, output=0):
    """How one row's prediction is built: base value, then each feature's phi.

    Features are sorted by |phi|; beyond ``max_display`` the rest are lumped into one
    step, so the last bar always ends at the prediction = base + sum(phi).

    Parameters
    ----------
    explanation : Explanation
    row : int, default=0
    ax : matplotlib Axes, optional
    max_display : int, default=10
    output : int, default=0

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
    values, std_errors, base = _select_output(explanation, output)
    n_rows = values.shape[0]
    if not -n_rows <= row < n_rows:
        raise ValueError(f"The 'row' parameter must be in [0, {n_rows - 1}]; got {row!r}.")
    phi = values[row]
    errors = None if std_errors is None else std_errors[row]
    order = np.argsort(-np.abs(phi), kind="stable")
    data = np.asarray(explanation.data)[row]
    labels = [f"{explanation.feature_names[j]} = {data[j]:.3g}" for j in order]
    steps = phi[order]
    step_errors = None if errors is None else errors[order]
    if len(order) > max_display:
        rest = order[max_display - 1 :]
        labels = labels[: max_display - 1] + [f"{len(rest)} other features"]
        steps = np.append(steps[: max_display - 1], phi[rest].sum())
        if step_errors is not None:
            step_errors = np.append(step_errors[: max_display - 1],
                                    np.sqrt((errors[rest] ** 2).sum()))
    ax = _new_axes(ax, (7.0, 0.4 * len(labels) + 1.5))
    starts = base[row] + np.concatenate([[0.0], np.cumsum(steps)[:-1]])
    positions = np.arange(len(labels))[::-1]
    colors = np.where(steps >= 0, "#d62728", "#1f77b4")
    show_errors = step_errors is not None and np.any(step_errors > 0)
    ax.barh(positions, steps, left=starts, color=colors,
            xerr=_Z95 * step_errors if show_errors else None, ecolor="black", capsize=3)
    prediction = base[row] + phi.sum()
    ax.axvline(base[row], color="grey", linestyle="--", linewidth=0.8)
    ax.axvline(prediction, color="black", linewidth=0.8)
    ax.set_yticks(positions, labels)
    ax.set_xlabel(
        f"model output{_output_label(explanation, output)}: base {base[row]:.3g} → "
        f"prediction {prediction:.3g}"
    )
    return ax


def summary(explanation, *, max_display=20, output=0, title=None):
    """A figure with :func:`bar` (left) and :func:`beeswarm` (right).

    Returns
    -------
    fig : matplotlib Figure

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley import Explanation
    >>> from skshapley.plotting import summary
    >>> e = Explanation(np.array([[1.0, -3.0]]), np.zeros(1), np.zeros((1, 2)), ["a", "b"])
    >>> len(summary(e).axes) >= 2
    True
    """
    import matplotlib.pyplot as plt

    n_shown = min(max_display, len(explanation.feature_names))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 0.38 * n_shown + 2.2),
                                      width_ratios=[1, 1.35])
    bar(explanation, ax=left, max_display=max_display, output=output)
    beeswarm(explanation, ax=right, max_display=max_display, output=output)
    right.set_yticklabels([])
    fig.suptitle(title or f"SHAP summary of {len(explanation)} rows")
    fig.tight_layout()
    return fig


def convergence(history, *, ax=None, label=None):
    """The estimated error after each check of the stopping rule, on a log scale.

    Parameters
    ----------
    history : sequence of float
        E.g. ``ShapleyResult.history``.
    ax : matplotlib Axes, optional
    label : str, optional

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
    ax = _new_axes(ax, (5.5, 3.5))
    ax.plot(np.arange(1, history.size + 1), history, marker="o", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("check")
    ax.set_ylabel("estimated error (95 % quantile)")
    if label is not None:
        ax.legend()
    return ax
