"""Value functions v(S) on boolean coalition masks."""

from skshapley.games._base import CallableGame, Game
from skshapley.games._least_squares import (
    LeastSquaresGame,
    ReducedLeastSquares,
    reduce_least_squares,
)
from skshapley.games._marginal import BaselineGame, MarginalGame
from skshapley.games._performance import PerformanceGame, RefitGame
from skshapley.games._response import (
    RESPONSE_METHODS,
    make_response_function,
    resolve_response_method,
)
from skshapley.games._rkhs import RKHSValueGame
from skshapley.games._synthetic import AdditiveGame, UnanimityGame

__all__ = [
    "AdditiveGame",
    "BaselineGame",
    "CallableGame",
    "Game",
    "LeastSquaresGame",
    "MarginalGame",
    "PerformanceGame",
    "RESPONSE_METHODS",
    "RKHSValueGame",
    "ReducedLeastSquares",
    "RefitGame",
    "UnanimityGame",
    "make_response_function",
    "reduce_least_squares",
    "resolve_response_method",
]
