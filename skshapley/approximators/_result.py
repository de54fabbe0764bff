"""The value every approximator returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ShapleyResult:
    """Shapley estimates of one game, with their error estimates.

    Attributes
    ----------
    values : float64 (n_players,) or (n_players, n_outputs)
        Estimated Shapley values.
    std_errors : float64, same shape as ``values``
        Standard error of each estimate (0 for exact methods, ``inf`` when fewer than two
        independent draws were made).
    error_quantile : float or float64 (n_outputs,)
        Estimated ``quantile_level`` quantile of the overall error ||phi_hat - phi||_2
        under a Gaussian model (Bell, Devanathan & Boyd 2024, Sec. 3.6), widened by
        t_{K-1}/z for K draws; 0 for exact methods.
    n_evaluations : int
        Coalition evaluations actually made (including v(∅) and v(N)).
    converged : bool or None
        Whether ``error_quantile < tol``; None when no ``tol`` was given.
    method : str
        Name of the method that produced the values.
    empty_value, grand_value : float or float64 (n_outputs,)
        v(∅) and v(N); ``values.sum(axis=0) == grand_value - empty_value`` (efficiency)
        for every method but the Owen and stratified comparison methods.
    n_permutations : int
        Orderings used (0 for non-sampling methods).
    n_draws : int
        Independent draws behind the standard errors (orderings, or antithetic pairs);
        an interval of ``t_{n_draws - 1}`` standard errors has the nominal coverage.
    quantile_level : float
        The level q of ``error_quantile``.
    history : tuple of float
        ``error_quantile`` (max over outputs) after each check of the stopping rule.
    history_evaluations : tuple of int
        Coalition evaluations spent at each check (same length as ``history``).
    history_values : tuple of ndarray
        The running estimate at each check, each shaped like ``values``.
    history_std_errors : tuple of ndarray
        The standard errors of the running estimate at each check.
    risk_is_heuristic : bool
        True when the error estimates rest on the i.i.d. formulas applied to dependent
        draws (see the user guide, "Budgets and error bars").
    """

    values: np.ndarray
    std_errors: np.ndarray
    error_quantile: float | np.ndarray
    n_evaluations: int
    converged: bool | None
    method: str
    empty_value: float | np.ndarray
    grand_value: float | np.ndarray
    n_permutations: int = 0
    n_draws: int = 0
    quantile_level: float = 0.95
    history: tuple = field(default_factory=tuple)
    risk_is_heuristic: bool = False
    history_evaluations: tuple = field(default_factory=tuple)
    history_values: tuple = field(default_factory=tuple)
    history_std_errors: tuple = field(default_factory=tuple)

    @classmethod
    def of_game(cls, game, values, std_errors, error_quantile, empty, grand, **fields):
        """A result in the game's shape: the (d, k) arrays and (k,) quantities of the
        estimators as (d,) arrays and floats for a scalar game; ``fields`` as the
        dataclass's (``n_evaluations``, ``method``, ``converged`` ...)."""
        from skshapley.approximators._common import scalar_or_array, squeeze_outputs

        return cls(values=squeeze_outputs(values, game),
                   std_errors=squeeze_outputs(std_errors, game),
                   error_quantile=scalar_or_array(error_quantile, game),
                   empty_value=scalar_or_array(empty, game),
                   grand_value=scalar_or_array(grand, game), **fields)

    def __repr__(self):
        return (
            f"ShapleyResult(method={self.method!r}, "
            f"values={np.array2string(self.values, precision=4)}, "
            f"n_evaluations={self.n_evaluations}, converged={self.converged})"
        )
