"""Value functions v(S) on boolean coalition masks.

Beside the games, the helpers that the estimators built on them share: the kernels and
subset embeddings of :class:`RKHSValueGame` and the choice of its conditional-mean
regularisation (``RKHSShapRegressor``), and :class:`NamedRows`, which calls a model on
DataFrames.
"""

from skshapley.games._base import CallableGame, Game, coalition_keys
from skshapley.games._cme import ETA_GRID, cme_cv_losses
from skshapley.games._least_squares import (
    LeastSquaresGame,
    ReducedLeastSquares,
    as_float_block,
    check_alpha,
    check_center,
    check_positive_int,
    choose_solver,
    factor_rows,
    reduce_factors,
    reduce_least_squares,
    subset_gains,
)
from skshapley.games._marginal import BaselineGame, MarginalGame
from skshapley.games._performance import PerformanceGame, RefitGame
from skshapley.games._response import (
    RESPONSE_METHODS,
    NamedRows,
    make_response_function,
    resolve_response_method,
)
from skshapley.games._rkhs import (
    KERNELS,
    VALUES,
    RKHSValueGame,
    product_kernel,
    scaled_differences,
    subset_embeddings,
    subset_table_fits,
)
from skshapley.games._synthetic import AdditiveGame, UnanimityGame

__all__ = [
    "AdditiveGame",
    "BaselineGame",
    "CallableGame",
    "ETA_GRID",
    "Game",
    "KERNELS",
    "LeastSquaresGame",
    "MarginalGame",
    "NamedRows",
    "PerformanceGame",
    "RESPONSE_METHODS",
    "RKHSValueGame",
    "ReducedLeastSquares",
    "RefitGame",
    "UnanimityGame",
    "VALUES",
    "as_float_block",
    "cme_cv_losses",
    "coalition_keys",
    "make_response_function",
    "product_kernel",
    "reduce_least_squares",
    "resolve_response_method",
    "scaled_differences",
    "subset_embeddings",
    "subset_table_fits",
    "check_alpha",
    "check_center",
    "check_positive_int",
    "choose_solver",
    "factor_rows",
    "reduce_factors",
    "subset_gains",
]
