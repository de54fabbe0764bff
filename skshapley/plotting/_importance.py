"""Bars of global attributions: :func:`attribution_bar` (an R² split by LS-SPA) and
:func:`importance_bar` (SAGE importances of a model's score)."""

from __future__ import annotations

import numpy as np

from skshapley.plotting._common import (
    _check_max_display,
    _feature_names,
    _feature_rows,
    _lumped,
    _note_error_bars,
    _rows_axes,
    _signed_bars,
)


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
    shown, rest, labels = _feature_rows(names, order, max_display)
    heights = _lumped(values, shown, rest)
    spreads = _lumped(errors, shown, rest, errors=True)
    has_errors = bool(np.any(spreads > 0))
    ax, positions = _rows_axes(ax, labels)
    _signed_bars(ax, positions, heights, spreads if has_errors else None)
    ax.set_xlabel("share of test R² (Shapley value)")
    if has_errors:
        _note_error_bars(ax)
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
    shown, rest, labels = _feature_rows(names, order, max_display)
    heights = values[shown]
    # an infinite interval (one draw) has no bar to draw; its row says so in the title
    below = np.where(np.isfinite(low[shown]), heights - low[shown], 0.0)
    above = np.where(np.isfinite(high[shown]), high[shown] - heights, 0.0)
    n_unbounded = int(np.sum(~np.isfinite(low[shown]) | ~np.isfinite(high[shown])))
    if rest.size:
        # no error bar: the estimates share their orderings, so their errors do not add
        heights = _lumped(values, shown, rest)
        below, above = np.append(below, 0.0), np.append(above, 0.0)
    has_errors = bool(np.any(below > 0) or np.any(above > 0))
    ax, positions = _rows_axes(ax, labels)
    _signed_bars(ax, positions, heights, np.vstack([below, above]) if has_errors else None)
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
