"""The least-squares game: out-of-sample R² of a linear model refit on each coalition of
features (Bell, Devanathan & Boyd 2024, Sec. 2), on data reduced once to p x p factors
(their Sec. 3.2, streamed as in Sec. 4.4).

Intercepts are handled by centring: training columns and target are centred with their
training means, and the test data with the same training means (their Sec. 2.1), which is
what ``LinearRegression()`` and ``Ridge(alpha)`` with ``fit_intercept=True`` do. The R² of a
coalition is ``1 - ||X_test theta_S - y_test||^2 / ||y_test||^2`` on the centred test data:
its baseline is the *training* mean of y, not the test mean of ``sklearn.metrics.r2_score``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from skshapley.backends import get_backend
from skshapley.games._base import Game
from skshapley.utils import NumberInterval, StrOptions, chunk_rows, validate_params

REDUCTIONS = ("tsqr", "gram")
SOLVERS = ("auto", "qr", "cholesky")
# Condition numbers of the training factor R above this are rank deficient in float64
# (every subset of full-rank columns is full rank, so one check covers all chains).
MAX_CONDITION = 1e12
# A rank-deficient training factor (rank_deficient="min_norm") is solved as ridge with
# alpha = MIN_NORM_RIDGE * ||R||_2^2. Exact ridge, sum_i s_i / (s_i^2 + alpha) (u_i'y) v_i,
# has no component in the null space, as the minimum-norm sum_{s_i > 0} (u_i'y) v_i / s_i;
# it differs on a singular value s by the relative alpha / s^2 (the bias: N <= p data,
# nearly interpolating subsets), while the roundoff of a collinear column leaves it a
# singular value ~1e-16 ||R|| that ridge turns into a coefficient ~1e-16 ||R|| |y| / alpha
# where lstsq gives 0 (the noise). 1e-12 balances the two: R² within ~1e-6 of lstsq in
# tests/attribution (1e-14: 1e-4 noise; 1e-10: 1e-4 bias at N = p = 100).
MIN_NORM_RIDGE = 1e-12
# |values| above this overflow float64 when squared and summed (R², Gram matrices).
MAX_ABS_VALUE = 1e150
# solver="auto" uses the Cholesky kernel while cond(R)^2 (the Gram's condition number)
# stays below this: lifts then keep about 8 of their 16 digits in the worst case and, in
# practice, agree with the QR kernel to ~1e-13 (tests/attribution).
CHOLESKY_MAX_GRAM_CONDITION = 1e8


def as_float_block(X, y, name, n_features=None):
    """Check one block of rows (X (n, p), y (n,)) and return float64 copies."""
    X = _as_dense(X, name, "X")
    y = _as_dense(y, name, "y")
    try:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as err:
        if "NAType" in str(err):  # pd.NA inside a NumPy object array
            raise ValueError(f"X_{name} or y_{name} contains missing values (pd.NA); "
                             "remove or impute them first.") from None
        raise ValueError(f"The {name!r} data must be numeric; got {err}.") from None
    if X.ndim != 2:
        raise ValueError(f"X_{name} must be a 2-D array (n_samples, n_features); got shape "
                         f"{X.shape}.")
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y_{name} must have one value per row of X_{name}: X_{name} has "
                         f"shape {X.shape}, y_{name} has shape {y.shape}.")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X_{name} has {X.shape[1]} columns but X_train has {n_features}; "
                         "train and test data must have the same features.")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        where = "X" if not np.isfinite(X).all() else "y"
        bad = np.argwhere(~np.isfinite(X)) if where == "X" else np.argwhere(~np.isfinite(y))
        raise ValueError(f"{where}_{name} contains NaN or infinite values (first at index "
                         f"{tuple(int(i) for i in bad[0])}); remove or impute them first.")
    for where, values in (("X", X), ("y", y)):
        huge = np.argwhere(np.abs(values) > MAX_ABS_VALUE)
        if huge.size:
            index = tuple(int(i) for i in huge[0])
            raise ValueError(
                f"{where}_{name} has a value too large for least squares: "
                f"{values[index]:.3g} at index {index}, above {MAX_ABS_VALUE:.0e} (its "
                "square overflows float64 in the sums of squares); rescale the data, e.g. "
                "with StandardScaler."
            )
    return X, y


def _as_dense(values, name, what):
    """Reject inputs that ``np.asarray`` would turn into object arrays with a misleading
    message: sparse matrices and pandas' missing value ``pd.NA``."""
    if hasattr(values, "toarray") or type(values).__module__.startswith("scipy.sparse"):
        raise ValueError(f"{what}_{name} is a sparse matrix ({type(values).__name__}); "
                         f"least squares reduces dense data: pass {what}_{name}.toarray(), "
                         "or an iterable of dense (X_block, y_block) pairs.")
    if hasattr(values, "isna") and hasattr(values, "to_numpy"):
        missing = np.argwhere(np.asarray(values.isna()).reshape(len(values), -1))
        if missing.size:
            index = tuple(int(i) for i in missing[0])
            if np.ndim(values) == 1:
                index = index[:1]
            raise ValueError(f"{what}_{name} contains missing values (pd.NA or NaN, first "
                             f"at index {index}); remove or impute them first.")
        return values.to_numpy()
    return values


def _block_rows(X, y, n_features):
    rows = chunk_rows(8.0 * (n_features + 2) * 3)
    for start in range(0, X.shape[0], rows):
        yield X[start:start + rows], y[start:start + rows]


class RowFactor:
    """Streaming upper-triangular factor F of [1 X y], F^T F = [1 X y]^T [1 X y] (Bell,
    Devanathan & Boyd 2024, Sec. 4.4).

    ``reduction="tsqr"``: F is the R factor of the stacked rows, updated block by block (the
    QR of the previous F stacked on the new block; stable, mergeable). ``"gram"``: counts,
    means and centred cross-products merged by Chan's formulas in float64, factored once by
    Cholesky (faster, but squares the condition number). Memory is O(p^2) beyond one block.

    Parameters
    ----------
    reduction : {"tsqr", "gram"}
    """

    def __init__(self, reduction="tsqr"):
        self.reduction = reduction
        self.n_rows = 0
        self.n_features = None
        self._factor = None
        self._mean = None
        self._m2 = None

    def update(self, X, y):
        """Add a block of rows (already checked float64).

        The block is consumed in slices of ``max(4096, 8 (p + 2))`` rows, so the work
        arrays (a slice with the ones column, stacked under the factor) stay O(p^2 + slice)
        whatever the block size.
        """
        n, p = X.shape
        if self.n_features is None:
            self.n_features = p
        rows = max(4096, 8 * (p + 2))
        for start in range(0, n, rows):
            self._update(X[start:start + rows], y[start:start + rows])
        return self

    def _update(self, X, y):
        n, p = X.shape
        if n == 0:
            return self
        if self.reduction == "tsqr":
            block = np.empty((n, p + 2))
            block[:, 0] = 1.0
            block[:, 1:p + 1] = X
            block[:, p + 1] = y
            if self._factor is not None:
                block = np.concatenate([self._factor, block], axis=0)
            self._factor = np.linalg.qr(block, mode="r")
        else:
            data = np.column_stack([X, y])
            mean = data.mean(axis=0)
            centred = data - mean
            m2 = centred.T @ centred
            if self._mean is None:
                self._mean, self._m2 = mean, m2
            else:
                total = self.n_rows + n
                delta = mean - self._mean
                self._mean = self._mean + delta * (n / total)
                self._m2 = self._m2 + m2 + np.outer(delta, delta) * (self.n_rows * n / total)
        self.n_rows += n
        return self

    def factor(self):
        """F, shape (k, p + 2) with k <= p + 2 rows."""
        if self.reduction == "tsqr":
            return self._factor
        p = self.n_features
        lower = _psd_factor(self._m2)
        top = np.sqrt(self.n_rows) * np.concatenate([[1.0], self._mean])
        return np.vstack([top[None, :], np.column_stack([np.zeros(lower.shape[0]), lower])])[
            :, : p + 2]

    def means(self):
        """Column means of X and the mean of y, from F's first row."""
        factor = self.factor()
        return factor[0, 1:] / factor[0, 0]


def _psd_factor(gram):
    """Upper F with F^T F = gram: Cholesky, or from eigh when gram is singular."""
    try:
        return np.linalg.cholesky(gram).T
    except np.linalg.LinAlgError:
        eigenvalues, vectors = np.linalg.eigh(gram)
        return np.sqrt(np.clip(eigenvalues, 0.0, None))[:, None] * vectors.T


def factor_rows(data, name, reduction="tsqr", n_features=None):
    """RowFactor of in-memory data ``(X, y)`` or of an iterable of ``(X_block, y_block)``."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"The 'reduction' parameter must be one of {list(REDUCTIONS)}; got "
                         f"{reduction!r}.")
    accumulator = RowFactor(reduction)
    if isinstance(data, tuple) and len(data) == 2 and not isinstance(data[0], tuple):
        X, y = as_float_block(*data, name, n_features)
        blocks = _block_rows(X, y, X.shape[1])
        first = True
    else:
        if not isinstance(data, Iterable):
            raise ValueError(f"X_{name} must be an array, or an iterable of (X_block, y_block) "
                             f"pairs when y_{name} is None; got {type(data).__name__}.")
        blocks = data
        first = False
    for block in blocks:
        if not first:
            try:
                X_block, y_block = block
            except (TypeError, ValueError):
                raise ValueError(f"each block of X_{name} must be a pair (X_block, y_block); "
                                 f"got {type(block).__name__}.") from None
            X_block, y_block = as_float_block(X_block, y_block, name,
                                               accumulator.n_features or n_features)
        else:
            X_block, y_block = block
        accumulator.update(X_block, y_block)
    if accumulator.n_rows == 0:
        raise ValueError(f"X_{name} has no rows.")
    return accumulator


@dataclass(frozen=True)
class ReducedLeastSquares:
    """A least-squares problem reduced to p x p factors (Bell, Devanathan & Boyd 2024,
    Sec. 3.2; ridge as in Sec. 4.2).

    ``||X theta - y||^2 + alpha ||theta||^2 = ||factor theta - target||^2 + const`` on the
    centred training data and ``||X_test theta - y_test||^2 = ||test_factor theta -
    test_target||^2 + const`` on the test data (centred with the training means).

    Attributes
    ----------
    factor : float64 (p, p)
        Upper triangular; ridge rows sqrt(alpha) I folded in.
    target : float64 (p,)
    test_factor : float64 (m, p), m <= p
    test_target : float64 (m,)
    test_norm2 : float
        ||y_test||^2 of the centred test target: the denominator of R².
    x_mean, y_mean : float64 (p,), float
        Training means used for centring (zeros when ``center=False``).
    n_train, n_test : int
    alpha : float
        sklearn's Ridge penalty; the paper's lambda is ``alpha / n_train``.
    """

    factor: np.ndarray
    target: np.ndarray
    test_factor: np.ndarray
    test_target: np.ndarray
    test_norm2: float
    x_mean: np.ndarray
    y_mean: float
    n_train: int
    n_test: int
    alpha: float

    @property
    def n_features(self):
        return self.factor.shape[1]

    def coefficients(self):
        """Full-model coefficients theta (p,) of the centred problem."""
        from scipy.linalg import solve_triangular

        return solve_triangular(self.factor, self.target)

    def full_gain(self):
        """||ttilde||^2 - ||T theta - ttilde||^2: the test residual drop of the full model."""
        residual = self.test_factor @ self.coefficients() - self.test_target
        return float(self.test_target @ self.test_target - residual @ residual)

    def condition_number(self):
        singular = np.linalg.svd(self.factor, compute_uv=False)
        return np.inf if singular[-1] == 0 else float(singular[0] / singular[-1])


def _shifted_factor(accumulator, shift):
    """Upper factor U (k, p + 1) of [X - shift_x, y - shift_y] from F of [1 X y]."""
    factor = accumulator.factor()
    p = factor.shape[1] - 2
    selector = np.zeros((p + 2, p + 1))
    selector[0] = -shift
    selector[1:] = np.eye(p + 1)
    return np.linalg.qr(factor @ selector, mode="r")


def reduce_factors(train, test, *, alpha=0.0, center=True, check_rank=True,
                   rank_deficient="raise"):
    """Reduce two RowFactors (training, test) to a :class:`ReducedLeastSquares`.

    ``rank_deficient="min_norm"``: with ``alpha=0``, a rank-deficient training factor
    (fewer rows than features, constant or collinear columns) gives every subset its
    minimum-norm least-squares solution, as ``LinearRegression`` and ``ls-spa``
    (``lstsq``) do, through ridge with alpha = ``MIN_NORM_RIDGE * ||R||_2^2`` (see
    there); the returned ``alpha`` is that penalty. ``"raise"``: refuse such data.
    """
    p = train.n_features
    n_train = train.n_rows
    shift = train.means() if center else np.zeros(p + 1)
    upper = _shifted_factor(train, shift)
    if alpha == 0 and rank_deficient == "min_norm" and _is_rank_deficient(upper, p):
        # constant columns (zero after centring, up to roundoff) get exactly zero
        # coefficients in every subset: null players, as with lstsq
        norms = np.linalg.norm(upper[:, :p], axis=0)
        upper = upper.copy()
        upper[:, np.flatnonzero(norms <= 1e-12 * max(norms.max(), np.finfo(float).tiny))] = 0.0
        largest = float(np.linalg.norm(upper[:, :p], 2))
        # all columns constant: every coefficient is 0 (any alpha > 0 gives that)
        alpha = max(MIN_NORM_RIDGE * largest**2, np.finfo(float).tiny) if largest > 0 else 1.0
    if alpha > 0:
        ridge = np.zeros((p, p + 1))
        ridge[:, :p] = np.sqrt(alpha) * np.eye(p)
        upper = np.linalg.qr(np.vstack([upper, ridge]), mode="r")
    if check_rank:
        needed = p + 1 if center else p
        if alpha == 0 and n_train < needed:
            raise ValueError(
                f"X_train has {n_train} rows for {p} features: least squares needs at least "
                f"{needed} rows{' (one more for the centring)' if center else ''}; add rows, "
                "drop features or set alpha > 0."
            )
    if upper.shape[0] < p:  # fewer rows than features (ridge catches this case above)
        upper = np.vstack([upper, np.zeros((p - upper.shape[0], p + 1))])
    factor = np.triu(upper[:p, :p])
    target = upper[:p, p].copy()
    if check_rank and alpha == 0:
        norms = np.linalg.norm(factor, axis=0)
        scale = max(norms.max(), np.finfo(float).tiny)
        constant = np.flatnonzero(norms <= 1e-12 * scale)
        if constant.size:
            raise ValueError(
                f"column {int(constant[0])} of X_train is constant"
                f"{' (zero after centring)' if center else ' (all zeros)'}: its coefficient "
                "is not identifiable; drop it or set alpha > 0."
            )
        singular = np.linalg.svd(factor, compute_uv=False)
        cond = np.inf if singular[-1] == 0 else singular[0] / singular[-1]
        if not cond < MAX_CONDITION:
            raise ValueError(
                f"X_train is rank deficient (condition number {cond:.3g} of the training "
                f"factor, above {MAX_CONDITION:.0e}): some columns are collinear; drop them "
                "or set alpha > 0."
            )
    test_upper = _shifted_factor(test, shift)
    if test_upper.shape[0] > p:
        test_factor, test_target = test_upper[:p, :p], test_upper[:p, p]
    else:
        test_factor, test_target = test_upper[:, :p], test_upper[:, p]
    test_norm2 = float(np.sum(test_upper[:, p] ** 2))
    train_scale = float(np.sum(upper[:, p] ** 2)) / n_train + shift[p] ** 2
    if check_rank and not test_norm2 > 1e-24 * test.n_rows * max(train_scale, 1e-300):
        raise ValueError("y_test is constant (zero after centring with the training mean): R² "
                         "is undefined; use a test set with varying targets.")
    return ReducedLeastSquares(
        factor=factor, target=target, test_factor=np.ascontiguousarray(test_factor),
        test_target=np.ascontiguousarray(test_target), test_norm2=test_norm2,
        x_mean=shift[:p].copy(), y_mean=float(shift[p]), n_train=int(n_train),
        n_test=int(test.n_rows), alpha=float(alpha),
    )


def _is_rank_deficient(upper, p):
    """Whether the centred training factor (k, p + 1) has rank below p in float64: fewer
    rows than features, or a condition number of at least MAX_CONDITION."""
    if upper.shape[0] < p:
        return True
    singular = np.linalg.svd(upper[:p, :p], compute_uv=False)
    return not singular[-1] * MAX_CONDITION > singular[0]


def check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not (
            np.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"The 'alpha' parameter must be a finite number >= 0 (sklearn's Ridge "
                         f"penalty); got {alpha!r}.")
    return float(alpha)


@validate_params(
    {
        "X_train": ["array-like", Iterable],
        "X_test": ["array-like", Iterable],
        "y_train": ["array-like", None],
        "y_test": ["array-like", None],
        "alpha": [NumberInterval(Real, 0, None, closed="left")],  # finite: inf is open
        "center": ["boolean"],
        "reduction": [StrOptions(set(REDUCTIONS))],
    },
    prefer_skip_nested_validation=True,
)
def reduce_least_squares(X_train, X_test, y_train=None, y_test=None, *, alpha=0.0,
                         center=True, reduction="tsqr"):
    """Reduce training and test data once (Bell, Devanathan & Boyd 2024, Sec. 3.2 and
    4.4).

    Parameters
    ----------
    X_train, X_test : array-like (n, p), or an iterable of (X_block, y_block) pairs
        Iterables (with ``y_train``/``y_test`` None) are consumed once, block by block, in
        O(p^2) memory beyond the block.
    y_train, y_test : array-like (n,) or None
    alpha : float, default=0
        sklearn's Ridge penalty on the centred data (the paper's lambda is alpha / n_train).
    center : bool, default=True
        Centre with the training means (intercept); False reproduces ``ls-spa``.
    reduction : {"tsqr", "gram"}

    Returns
    -------
    ReducedLeastSquares
    """
    alpha = float(alpha)
    train = factor_rows(X_train if y_train is None else (X_train, y_train), "train",
                        reduction)
    test = factor_rows(X_test if y_test is None else (X_test, y_test), "test", reduction,
                       n_features=train.n_features)
    return reduce_factors(train, test, alpha=alpha, center=center)


def choose_solver(reduced, solver="auto"):
    """The chain kernel for a reduced problem: "cholesky" when the Gram is well conditioned."""
    if solver not in SOLVERS:
        raise ValueError(f"The 'solver' parameter must be one of {list(SOLVERS)}; got "
                         f"{solver!r}.")
    if solver != "auto":
        return solver
    return "cholesky" if reduced.condition_number() ** 2 <= CHOLESKY_MAX_GRAM_CONDITION else "qr"


def chain_lifts(reduced, orders, *, solver="auto", scale=None, kernels=None):
    """Lift vectors L(pi) (n, p) of chains ``orders`` (n, p) on a reduced problem (Bell,
    Devanathan & Boyd 2024, Sec. 3.3).

    ``scale`` multiplies the test-residual drops (default 1 / test_norm2: R² lifts).
    """
    kernels = get_backend() if kernels is None else kernels
    orders = np.ascontiguousarray(orders, dtype=np.int64)
    scale = 1.0 / reduced.test_norm2 if scale is None else float(scale)
    out = np.empty(orders.shape, dtype=np.float64)
    solver = choose_solver(reduced, solver)
    if orders.shape[0] == 0:
        return out
    if solver == "cholesky":
        gram, cross = _gram(reduced)
        status = np.zeros(orders.shape[0], dtype=np.int64)
        kernels.lsspa_chain_lifts_cholesky(orders, gram, cross, reduced.test_factor,
                                           reduced.test_target, scale, out, status)
        failed = np.flatnonzero(status)
        if failed.size == 0:
            return out
        # A non-positive pivot (round-off on a nearly singular Gram): redo those by QR.
        orders, rows = np.ascontiguousarray(orders[failed]), failed
    else:
        rows = slice(None)
    redo = np.empty(orders.shape, dtype=np.float64)
    kernels.lsspa_chain_lifts_qr(orders, np.ascontiguousarray(reduced.factor), reduced.target,
                                 reduced.test_factor, reduced.test_target, scale, redo)
    out[rows] = redo
    return out


def _gram(reduced):
    cached = getattr(reduced, "_gram_cache", None)
    if cached is None:
        gram = reduced.factor.T @ reduced.factor
        cached = (np.ascontiguousarray(gram), reduced.factor.T @ reduced.target)
        object.__setattr__(reduced, "_gram_cache", cached)
    return cached


def subset_gains(reduced, kernels=None):
    """Test-residual drop of the fit on every subset, indexed by bitmask."""
    kernels = get_backend() if kernels is None else kernels
    p = reduced.n_features
    out = np.empty(1 << p, dtype=np.float64)
    return kernels.lsspa_subset_gains(np.ascontiguousarray(reduced.factor), reduced.target,
                                      reduced.test_factor, reduced.test_target, out)


class LeastSquaresGame(Game):
    """Out-of-sample R² of a least-squares (or ridge) model refit on each coalition.

    ``v(S) = (||y_test||^2 - ||X_test theta_S - y_test||^2) / ||y_test||^2`` where theta_S
    is the least-squares fit on the columns in S (ridge with sklearn's ``alpha`` if > 0),
    after centring with training means (so the model has an intercept, as
    ``LinearRegression()``/``Ridge(alpha)``; Bell, Devanathan & Boyd 2024, Sec. 2).
    ``v(∅) = 0``. The data are reduced once to p x p factors (their Sec. 3.2); a batch of
    coalitions then costs O(|S|^3) each, independent of the number of rows, and
    :meth:`chain_lifts` gives the marginal contributions of whole orderings in O(p^3)
    (their Sec. 3.3). This is the ``importance="refit"`` game of a linear
    ``TopKShapleySelector`` and the game behind :func:`skshapley.attribution.lsspa`.

    Parameters
    ----------
    X_train, X_test : array-like (n, p), or iterables of (X_block, y_block) pairs
    y_train, y_test : array-like (n,), or None with iterables
    alpha : float, default=0
        sklearn's Ridge penalty (the paper's lambda = alpha / n_train).
    center : bool, default=True
    reduction : {"tsqr", "gram"}, default="tsqr"
    solver : {"auto", "qr", "cholesky"}, default="auto"
        Kernel of :meth:`chain_lifts`.
    reduced : ReducedLeastSquares, optional
        Use an existing reduction instead of data (then pass None for the data).

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.games import LeastSquaresGame
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3)); y = X @ [1.0, 0.0, 2.0] + rng.normal(size=40)
    >>> game = LeastSquaresGame(X[:30], X[30:], y[:30], y[30:])
    >>> game.values(np.array([[False, False, False], [True, True, True]])).round(3)
    array([0.   , 0.644])
    """

    def __init__(self, X_train=None, X_test=None, y_train=None, y_test=None, *, alpha=0.0,
                 center=True, reduction="tsqr", solver="auto", reduced=None, cache=False):
        if reduced is None:
            reduced = reduce_least_squares(X_train, X_test, y_train, y_test, alpha=alpha,
                                           center=center, reduction=reduction)
        super().__init__(reduced.n_features, cache=cache)
        self.reduced = reduced
        self.solver = choose_solver(reduced, solver)

    def _values(self, coalitions):
        return self.gains(coalitions) / self.reduced.test_norm2

    def gains(self, coalitions):
        """Test-residual drops ||ttilde||^2 - ||T theta_S - ttilde||^2, batched by size."""
        reduced = self.reduced
        sizes = coalitions.sum(axis=1)
        out = np.zeros(coalitions.shape[0])
        base = reduced.test_target @ reduced.test_target
        for size in np.unique(sizes):
            if size == 0:
                continue
            rows = np.flatnonzero(sizes == size)
            members = np.nonzero(coalitions[rows])[1].reshape(rows.size, size)
            columns = np.moveaxis(reduced.factor[:, members], 1, 0)  # (g, p, k)
            q, r = np.linalg.qr(columns)
            theta = np.linalg.solve(r, np.einsum("gpk,p->gk", q, reduced.target)[..., None])
            predicted = np.einsum("mgk,gk->gm", reduced.test_factor[:, members], theta[..., 0])
            residual = predicted - reduced.test_target
            out[rows] = base - np.einsum("gm,gm->g", residual, residual)
        return out

    def chain_lifts(self, orders, *, scale=None):
        """Marginal contributions (n, p) of whole orderings in O(p^3) each."""
        return chain_lifts(self.reduced, orders, solver=self.solver, scale=scale)

    @property
    def full_r2(self):
        """v(N), from the full-model coefficients (not counted as an evaluation)."""
        return self.reduced.full_gain() / self.reduced.test_norm2


def check_center(center):
    if not isinstance(center, (bool, np.bool_)):
        raise ValueError(f"The 'center' parameter must be True or False; got {center!r}.")
    return bool(center)


def check_positive_int(value, name, minimum=1):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"The {name!r} parameter must be an integer >= {minimum}; got "
                         f"{value!r}.")
    return int(value)
