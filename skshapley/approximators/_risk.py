"""Risk estimates for averages of random draws (after Bell, Devanathan & Boyd 2024,
Sec. 3.6): streaming covariance, standard errors, error quantiles and the stopping rule."""

from __future__ import annotations

import functools
from numbers import Integral, Real

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from skshapley.utils import NumberInterval, validate_params

# a probability of the error's distribution, ends included (the quantile of level 1 is
# the largest draw)
_QUANTILE_LEVEL = [NumberInterval(Real, 0, 1, closed="both")]
# Monte Carlo draws of an overall error quantile (see shared_normal_draws)
SHARED_DRAWS = 4096


def spectrum_of_rows(rows):
    """Eigenvalues of rows' rows (a p x p matrix) from the smaller of the two Gram
    matrices: both share their non-zero eigenvalues, so at most min(K, p) are returned."""
    if rows.shape[0] < rows.shape[1]:
        return np.linalg.eigvalsh(rows @ rows.T)
    return np.linalg.eigvalsh(rows.T @ rows)


class RunningCovariance:
    """Streaming mean and sum of outer products of deviations (the pairwise update of
    Chan, Golub & LeVeque 1979).

    While there are no more draws than features the draws themselves are kept (K x p
    numbers instead of p x p): at many features and few draws, the usual case of an
    explained row, this saves memory, and the covariance's spectrum comes from the
    K x K Gram matrix instead of a p x p eigendecomposition (at p = 1000 and K = 32,
    1,000 times fewer operations). From K > p on, the p x p sum is kept.

    Parameters
    ----------
    n_features : int
        Dimension p of each draw.

    Attributes
    ----------
    n : int
        Draws merged so far.
    mean : float64 (p,)
    m2 : float64 (p, p)
        Sum over draws of (x - mean)(x - mean)^T.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.approximators import RunningCovariance
    >>> draws = np.arange(12.0).reshape(6, 2) ** 2
    >>> acc = RunningCovariance(2)
    >>> acc.update(draws[:2]); acc.update(draws[2:])
    >>> np.allclose(acc.m2 / acc.n, np.cov(draws.T, bias=True))
    True
    """

    def __init__(self, n_features: int):
        self.n = 0
        self.mean = np.zeros(n_features)
        self._draws = []  # kept while n <= p
        self._m2 = None

    @property
    def m2(self) -> np.ndarray:
        if self._m2 is not None:
            return self._m2
        p = self.mean.shape[0]
        if self.n == 0:
            return np.zeros((p, p))
        centred = np.concatenate(self._draws) - self.mean
        return centred.T @ centred

    def update(self, draws) -> None:
        """Merge a batch of draws (K, p), accumulating in float64."""
        draws = np.asarray(draws, dtype=np.float64)
        n_batch = draws.shape[0]
        if n_batch == 0:
            return
        batch_mean = draws.mean(axis=0)
        n_total = self.n + n_batch
        delta = batch_mean - self.mean
        if self._m2 is None and n_total <= self.mean.shape[0]:
            self._draws.append(draws.copy())
            self.mean = self.mean + delta * (n_batch / n_total)
            self.n = n_total
            return
        if self._m2 is None:
            self._m2, self._draws = self.m2, []
        centred = draws - batch_mean
        batch_m2 = centred.T @ centred
        self.mean = self.mean + delta * (n_batch / n_total)
        self._m2 = self._m2 + batch_m2 + np.outer(delta, delta) * (self.n * n_batch / n_total)
        self.n = n_total

    def estimate_covariance(self) -> np.ndarray:
        """Covariance of the mean, C = Sigma_hat / K = M2 / (K (K - 1))."""
        if self.n < 2:
            return np.full((self.mean.shape[0],) * 2, np.inf)
        return self.m2 / (self.n * (self.n - 1))

    def covariance_eigenvalues(self) -> np.ndarray:
        """Eigenvalues of :meth:`estimate_covariance` (the non-zero ones when the draws
        are kept: those of the K x K Gram matrix of the centred draws)."""
        if self.n < 2:
            return np.full(self.mean.shape[0], np.inf)
        if self._m2 is not None:
            return np.linalg.eigvalsh(self.estimate_covariance())
        centred = np.concatenate(self._draws) - self.mean
        return spectrum_of_rows(centred) / (self.n * (self.n - 1))

    def std_errors(self) -> np.ndarray:
        """Per-feature standard errors sqrt(diag C)."""
        if self.n < 2:
            return np.full(self.mean.shape[0], np.inf)
        if self._m2 is not None:
            variances = np.diag(self._m2)
        else:
            centred = np.concatenate(self._draws) - self.mean
            variances = np.einsum("ij,ij->j", centred, centred)
        return np.sqrt(np.clip(variances / (self.n * (self.n - 1)), 0.0, None))


class ReplicateCovariance:
    """Covariance of the mean of R independent randomised-QMC replicates.

    Rows arrive in rounds of R, one row per replicate; the draws of the risk estimate
    are the R replicate means, so C = cov(replicate means) / R, whatever the dependence
    between the rows of one replicate.

    Parameters
    ----------
    n_features : int
    n_replicates : int
        R >= 2.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.approximators._risk import ReplicateCovariance
    >>> acc = ReplicateCovariance(1, 2)
    >>> acc.update(np.array([[[1.0], [3.0]], [[3.0], [5.0]]]))  # two rounds of 2
    >>> acc.estimate_covariance()  # replicate means 2 and 4
    array([[1.]])
    """

    def __init__(self, n_features: int, n_replicates: int):
        self.n = n_replicates  # the number of draws (K = R)
        self.rounds = 0
        self.sums = np.zeros((n_replicates, n_features))

    def update(self, rounds) -> None:
        """Add rounds (n_rounds, R, p): row r of each round belongs to replicate r."""
        rounds = np.asarray(rounds, dtype=np.float64)
        self.sums += rounds.sum(axis=0)
        self.rounds += rounds.shape[0]

    def estimate_covariance(self) -> np.ndarray:
        if self.rounds == 0:
            return np.full((self.sums.shape[1],) * 2, np.inf)
        means = self.sums / self.rounds
        return np.cov(means.T, ddof=1).reshape(self.sums.shape[1], -1) / self.n

    def covariance_eigenvalues(self) -> np.ndarray:
        """The non-zero spectrum of :meth:`estimate_covariance`, from the R x R Gram
        matrix of the centred replicate means."""
        if self.rounds == 0:
            return np.full(self.sums.shape[1], np.inf)
        centred = self.sums / self.rounds
        return spectrum_of_rows(centred - centred.mean(axis=0)) / ((self.n - 1) * self.n)

    def std_errors(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.estimate_covariance()), 0.0, None))


@validate_params(
    {
        "covariance": ["array-like", None],
        "quantile_level": _QUANTILE_LEVEL,
        "n_draws": [NumberInterval(Integral, 1, None, closed="left")],
        "rng": [np.random.Generator, np.random.RandomState, None],
        "normal_draws": ["array-like", None],
        "eigenvalues": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def overall_error_quantile(covariance=None, quantile_level=0.95, *, n_draws=SHARED_DRAWS,
                           rng=None, normal_draws=None, eigenvalues=None):
    """The q-quantile of ||Delta||_2 for Delta ~ N(0, C): the overall error estimate of
    Bell, Devanathan & Boyd (2024, Sec. 3.6), from the spectrum of C.

    ||Delta||^2 = sum_i lambda_i Z_i^2 with lambda the eigenvalues of C (clipped at 0,
    since C is singular: every draw has the same sum), so only the spectrum is
    needed. Never factorises C by Cholesky.

    Parameters
    ----------
    covariance : float64 (p, p)
        Covariance of the estimate C.
    quantile_level : float, default=0.95
    n_draws : int, default=4096
        Monte Carlo draws of the chi-square mixture.
    rng : numpy.random.Generator
        Dedicated generator, so stop decisions are reproducible and independent of the
        permutation stream.
    normal_draws : float64 (n_draws, p), optional
        Standard normal draws to use instead of drawing from ``rng``; passing the same
        draws for several outputs makes each output's estimate independent of the others.
        Only the first as many columns as there are eigenvalues are used.
    eigenvalues : float64 (r,), optional
        The spectrum of C instead of C (e.g. from a low-rank factor); zeros may be left
        out.

    Returns
    -------
    error : float
    """
    if eigenvalues is None:
        if not np.all(np.isfinite(covariance)):
            return np.inf
        eigenvalues = np.linalg.eigvalsh(covariance)
    elif not np.all(np.isfinite(eigenvalues)):
        return np.inf
    eigenvalues = np.clip(eigenvalues, 0.0, None)
    if not eigenvalues.any():
        return 0.0
    if normal_draws is None:
        rng = np.random.default_rng(0) if rng is None else rng
        normal_draws = rng.standard_normal((n_draws, eigenvalues.shape[0]))
    z = np.asarray(normal_draws)[:, : eigenvalues.shape[0]]
    return _mixture_quantile(z * z, eigenvalues, quantile_level)


def spectrum_error_quantile(eigenvalues, quantile_level, squared_draws):
    """:func:`overall_error_quantile` of the spectrum ``eigenvalues`` with the squared
    normal draws ``squared_draws`` (at least as many columns; e.g.
    :func:`shared_squared_draws`): the same number, without its parameter checks and
    squares, for the estimators' inner loops (it took 0.23 of a 2.7 ms one-row
    explanation at 10 d evaluations)."""
    if not np.all(np.isfinite(eigenvalues)):
        return np.inf
    eigenvalues = np.clip(eigenvalues, 0.0, None)
    if not eigenvalues.any():
        return 0.0
    return _mixture_quantile(squared_draws[:, : eigenvalues.shape[0]], eigenvalues,
                             quantile_level)


def _mixture_quantile(squares, eigenvalues, quantile_level):
    """np.quantile(sqrt(squares @ eigenvalues), quantile_level) ("linear"), from the
    two order statistics it interpolates (the same bits: numpy's interpolation formula;
    np.quantile's own checks cost more than finding them)."""
    norms = np.sqrt(squares @ eigenvalues)
    position = quantile_level * (norms.shape[0] - 1)
    low = int(np.floor(position))
    high = min(low + 1, norms.shape[0] - 1)
    # a sort, not np.partition: inside an explanation, right after a model call, the
    # partition of 4,096 norms took 40-45 us and the sort 16-18 (alone, hot in cache,
    # 5 against 11)
    ends = np.sort(norms)
    a, b = ends[low], ends[high]
    t = position - low
    diff = b - a
    # numpy's _lerp: from the nearer end, so the result stays within [a, b]
    return float(b - diff * (1 - t) if t >= 0.5 else a + diff * t)


# Monte Carlo draws for the overall error quantile of one-shot estimators (regression,
# SVARM): the same standard normals serve every call, drawn once in blocks of columns
# from fixed seeds, so column j never depends on which widths came first. Fresh 4096 x d
# draws per game took 1.8 ms at d = 20, half of a one-row explanation at 10 d
# evaluations of a cheap model; the quantile's Monte Carlo error (about 1 % at 4096
# draws) is then shared by the rows instead of drawn anew.
_DRAW_BLOCK = 64
_DRAW_SEED = 20240611
_shared_draws = np.empty((SHARED_DRAWS, 0))


def shared_normal_draws(n_columns):
    """Read-only float64 (SHARED_DRAWS, n_columns) standard normal draws, the same at
    every call (``normal_draws`` of :func:`overall_error_quantile`)."""
    global _shared_draws
    draws = _shared_draws
    if draws.shape[1] < n_columns:
        blocks = [draws] + [
            np.random.default_rng([_DRAW_SEED, b]).standard_normal((SHARED_DRAWS, _DRAW_BLOCK))
            for b in range(draws.shape[1] // _DRAW_BLOCK, -(-n_columns // _DRAW_BLOCK))]
        # column-major: the first r columns, all an estimate reads, lie together in
        # memory (a row-major slice read whole cache lines of every row: 23 against 13
        # us a quantile at r = 5, with the draws out of cache after a model call)
        draws = np.asfortranarray(np.concatenate(blocks, axis=1))
        draws.flags.writeable = False
        _shared_draws = draws  # one assignment: a reader sees an old or a new array whole
    return draws[:, :n_columns]


_shared_squares = np.empty((SHARED_DRAWS, 0))


def shared_squared_draws(n_columns):
    """The squares of :func:`shared_normal_draws` (read-only, kept like them)."""
    global _shared_squares
    squares = _shared_squares
    if squares.shape[1] < n_columns:
        draws = shared_normal_draws(n_columns)
        squares = np.multiply(draws, draws, order="F")
        squares.flags.writeable = False
        _shared_squares = squares
    return squares[:, :n_columns]


@validate_params({"std_errors": ["array-like", Real], "quantile_level": _QUANTILE_LEVEL},
                 prefer_skip_nested_validation=True)
def feature_error_quantiles(std_errors, quantile_level=0.95):
    """Per-feature error quantile rho_j = z_{(1+q)/2} * SE_j (exact under the Gaussian
    model, where Bell, Devanathan & Boyd 2024 sample it)."""
    return norm.ppf((1.0 + quantile_level) / 2.0) * np.asarray(std_errors)


def small_sample_inflation(n_draws, quantile_level=0.95):
    """t_{K-1,(1+q)/2} / z_{(1+q)/2}: widens Gaussian error quantiles computed from K draws
    (a heuristic small-sample correction; 1 in the limit of many draws)."""
    if n_draws < 2:
        return np.inf
    return _t_over_z(int(n_draws), float(quantile_level))


@functools.lru_cache(maxsize=256)
def _t_over_z(n_draws, quantile_level):
    # kept: scipy's ppf costs ~0.1 ms a call, a twentieth of a one-row explanation at
    # 10 d evaluations, and a budget asks for the same few draw counts again and again
    level = (1.0 + quantile_level) / 2.0
    return float(student_t.ppf(level, n_draws - 1) / norm.ppf(level))


def satterthwaite_draws(total, weighted_squares, fallback):
    """1 + the smallest Welch-Satterthwaite degrees of freedom nu = (sum_u a_u)^2 /
    sum_u (a_u^2 / df_u) of sums of variance terms a_u (``total`` = sum a_u and
    ``weighted_squares`` = sum a_u^2 / df_u, per player and output), so that
    ``t_{n_draws - 1}`` intervals hold (conservatively) for every one. Sums with no
    variance are exact and skipped; ``fallback`` where all are."""
    positive = weighted_squares > 0
    if not positive.any():
        return int(fallback)
    return 1 + int(np.floor((total[positive] ** 2 / weighted_squares[positive]).min() + 1e-9))
