"""Top-k identification: :func:`topk` draws the estimates with their intervals and the
cut after the k chosen features."""

from __future__ import annotations

import numpy as np

from skshapley.plotting._common import (
    _LUMP_COLOR,
    _POSITIVE_COLOR,
    _check_max_display,
    _feature_names,
    _rows_axes,
)


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
    ax, positions = _rows_axes(ax, [names[j] for j in shown], margin=1.6)
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
