"""How an estimate settles as coalition evaluations are spent: :func:`convergence` of
a :class:`~skshapley.approximators.ShapleyResult` or of a sequence of error estimates."""

from __future__ import annotations

import numpy as np

from skshapley.plotting._common import (
    _Z95,
    _check_max_display,
    _feature_index,
    _feature_names,
    _new_axes,
)


def _error_line(ax, x, errors, xlabel, label, **style):
    """Estimated errors against ``x``, on a log scale."""
    ax = _new_axes(ax, (5.5, 3.5))
    ax.plot(x, errors, marker="o", label=label, **style)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("estimated error (95 % quantile)")
    if label is not None:
        ax.legend()
    return ax


def _convergence_errors(history, ax, label):
    """The old form: error estimates after each check, on a log scale."""
    history = np.asarray(history, dtype=np.float64)
    if history.ndim != 1:
        raise ValueError(
            f"The 'history' parameter must be a 1-d sequence of floats or a ShapleyResult; "
            f"got shape {history.shape}."
        )
    return _error_line(ax, np.arange(1, history.size + 1), history, "check", label)


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
    return _error_line(ax, evaluations, np.asarray(history.history, dtype=np.float64),
                       "coalition evaluations", label, markersize=3)


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
