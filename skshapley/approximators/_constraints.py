"""The parameter constraints (scikit-learn's ``validate_params``) that the approximators
share, and the decorator of the functions that play a game."""

from __future__ import annotations

from numbers import Integral, Real

from skshapley.utils import HasMethods, NumberInterval, validate_params

GAME = [HasMethods(["values"])]
BUDGET = [NumberInterval(Integral, 1, None, closed="left")]
TOL = [NumberInterval(Real, 0, None, closed="neither"), None]
QUANTILE_LEVEL = [NumberInterval(Real, 0, 1, closed="neither")]


def validate_game_params(constraints):
    """``validate_params(constraints)`` for a function that plays a game: nested
    validation stays on, because the game may fit the user's estimators (``RefitGame``)
    and their own checks must still run."""
    return validate_params(constraints, prefer_skip_nested_validation=False)
