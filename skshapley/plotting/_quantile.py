"""Quantile sketches against the data: :func:`quantile_sketch` draws both CDFs, and
:func:`cdf_gap` measures the largest gap between them."""

from __future__ import annotations

import numpy as np

from skshapley.plotting._common import (
    _POSITIVE_COLOR,
    _feature_index,
    _feature_names,
    _new_axes,
)


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
