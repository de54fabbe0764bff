"""LS-SPA: Shapley attribution of a least-squares model's out-of-sample R² (Bell, Devanathan
and Boyd, "Efficient Shapley performance attribution for least-squares
regression", Statistics and Computing, 2024)."""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from skshapley.approximators import (
    SequentialEstimate,
    feature_error_quantiles,
    run_sequential,
    small_sample_inflation,
)
from skshapley.backends import get_backend
from skshapley.games import (
    LeastSquaresGame,
    check_alpha,
    check_center,
    check_positive_int,
    choose_solver,
    factor_rows,
    reduce_factors,
    subset_gains,
)
from skshapley.permutations import (
    ALIASES,
    SAMPLERS,
    PermutationSampler,
    PermutohedronNormal,  # noqa: F401 (skshapley.attribution.PermutohedronNormal)
    build_sampler,
)
from skshapley.utils import as_generator

METHODS = ("auto", "exact", "permutation")
# Subset enumeration stores 2^p values: 2^25 doubles are 256 MiB.
EXACT_MAX_FEATURES = 25


@dataclass(frozen=True)
class AttributionResult:
    """Shapley attribution of a model's out-of-sample R², as returned by
    :func:`~skshapley.attribution.lsspa`.

    Attributes
    ----------
    attribution : float64 (p,)
        Estimated Shapley values S_j of the features; they sum to ``r2`` (efficiency).
    r2 : float
        Full-model out-of-sample R² (baseline: the training mean of y), or the
        pooled cross-validated R² when ``cv`` was given.
    std_errors : float64 (p,)
        Standard error of each attribution (0 when exact).
    error_quantile : float
        Estimated ``quantile_level`` quantile of ||S_hat - S||_2 (sigma_hat of Bell,
        Devanathan & Boyd 2024, Sec. 3.6); 0 when exact.
    attribution_errors : float64 (p,)
        Per-feature error quantiles rho_hat_j (the paper's per-feature risk).
    n_samples : int
        Chains (orderings) evaluated; 0 when exact.
    converged : bool
        True when exact, or when ``error_quantile < tol``.
    theta : float64 (p,)
        Full-model coefficients in the original units (ridge when alpha > 0), as
        ``LinearRegression``/``Ridge(alpha)`` would fit.
    intercept : float
        ``y_mean - x_mean @ theta`` (0 when ``center=False``).
    history : float64 (n_checks, p) or None
        Running estimate after each check (with ``return_history=True``).
    error_history : tuple of float
        ``error_quantile`` after each check.
    samples_history : tuple of int
        Chains used at each check.
    method : str
        "exact" or "permutation".
    sampler : str or None
    n_draws : int
        Independent draws behind the error estimates (chains, antithetic pairs or RQMC
        replicates; see the user guide, "Budgets and error bars").
    alpha : float
        The ridge penalty used (sklearn convention; the paper's lambda is
        ``alpha / n_train``), the one chosen from ``alphas`` if given.
    alpha_scores : dict or None
        Cross-validated MSE of each candidate in ``alphas``.
    quantile_level : float
    risk_is_heuristic : bool
        True when the error estimates apply i.i.d. formulas to dependent draws (a single
        QMC stream or user-given orderings), whose error the sample covariance does not
        estimate.
    """

    attribution: np.ndarray
    r2: float
    std_errors: np.ndarray
    error_quantile: float
    attribution_errors: np.ndarray
    n_samples: int
    converged: bool
    theta: np.ndarray
    intercept: float = 0.0
    history: np.ndarray | None = None
    error_history: tuple = field(default_factory=tuple)
    samples_history: tuple = field(default_factory=tuple)
    method: str = "exact"
    sampler: str | None = None
    n_draws: int = 0
    alpha: float = 0.0
    alpha_scores: dict | None = None
    quantile_level: float = 0.95
    risk_is_heuristic: bool = False

    def __repr__(self):
        return (f"AttributionResult(method={self.method!r}, r2={self.r2:.6g}, "
                f"attribution={np.array2string(self.attribution, precision=4)}, "
                f"error_quantile={self.error_quantile:.3g}, n_samples={self.n_samples}, "
                f"converged={self.converged})")


def _make_sampler(sampler, p, rng, replicates):
    """(sampler, its replicates, the name results report) from the one sampler table."""
    if replicates is not None and replicates < 2:
        replicates = None  # a single stream: i.i.d. formulas, flagged heuristic
    instance = build_sampler(sampler, p, rng=rng, replicates=replicates, caller="the data")
    name = (type(sampler).__name__ if isinstance(sampler, PermutationSampler)
            else sampler)
    return instance, instance.replicates, name


class _FixedOrders(PermutationSampler):
    """User-given orderings, served in order (as ``ls-spa``'s ``perms=array``)."""

    def __init__(self, orders):
        super().__init__(orders.shape[1], rng=0)
        self._orders = orders

    def _random(self, n):
        start = self.num_generated
        return self._orders[start:start + n]


def _check_orders(orders, p):
    orders = np.asarray(orders)
    if orders.ndim != 2 or orders.shape[1] != p or not np.issubdtype(orders.dtype, np.integer):
        raise ValueError(f"An array 'sampler' must hold integer orderings of shape (n, {p}); "
                         f"got shape {orders.shape} and dtype {orders.dtype}.")
    if not (np.sort(orders, axis=1) == np.arange(p)).all():
        raise ValueError(f"Every row of the 'sampler' array must be a permutation of 0..{p - 1}.")
    return np.ascontiguousarray(orders, dtype=np.int64)


class _Problem:
    """One or several reduced problems (CV folds) scored together: lifts and values are
    sums of test-residual drops over the problems divided by the summed ||y||^2 (the
    cross-validation metric of Bell, Devanathan & Boyd 2024, Sec. 4.1)."""

    def __init__(self, reduced_list, solver):
        self.reduced = reduced_list
        self.denominator = float(sum(r.test_norm2 for r in reduced_list))
        self.solvers = [choose_solver(r, solver) for r in reduced_list]
        self.games = [LeastSquaresGame(reduced=r, solver=s)
                      for r, s in zip(reduced_list, self.solvers, strict=True)]
        self.kernels = get_backend()

    @property
    def n_features(self):
        return self.reduced[0].n_features

    def lifts(self, orders):
        total = None
        for game in self.games:
            part = game.chain_lifts(orders, scale=1.0 / self.denominator)
            total = part if total is None else total + part
        return total

    def full_r2(self):
        return sum(r.full_gain() for r in self.reduced) / self.denominator

    def all_values(self):
        total = sum(subset_gains(r, self.kernels) for r in self.reduced)
        return total / self.denominator


def _check_cv_folds(cv, name):
    """An integer ``cv`` must ask for at least 2 folds (sklearn's own message names
    ``n_splits``, not the parameter given here)."""
    if isinstance(cv, Integral) and not isinstance(cv, bool) and cv < 2:
        raise ValueError(f"The {name!r} parameter must be at least 2 folds (an int), a "
                         f"cross-validation generator or an iterable of splits; got "
                         f"{cv!r}.")
    return cv


def _cv_reductions(X, y, cv, alpha, center, reduction):
    from sklearn.model_selection import check_cv

    from skshapley.games import as_float_block

    X, y = as_float_block(X, y, "train")
    splitter = check_cv(_check_cv_folds(cv, "cv"))
    reduced = []
    for train_rows, valid_rows in splitter.split(X, y):
        train = factor_rows((X[train_rows], y[train_rows]), "train", reduction)
        valid = factor_rows((X[valid_rows], y[valid_rows]), "test", reduction,
                            n_features=X.shape[1])
        reduced.append(reduce_factors(train, valid, alpha=alpha, center=center,
                                      rank_deficient="min_norm"))
    if len(reduced) < 2:
        raise ValueError(f"The 'cv' parameter must give at least 2 folds; got {cv!r}.")
    return reduced


def _select_alpha(X, y, alphas, cv, center, reduction):
    """Candidate with the lowest pooled CV validation MSE of the full model (Bell,
    Devanathan & Boyd 2024, Sec. 4.3): one SVD of each fold's reduced factor serves every
    candidate."""
    from sklearn.model_selection import check_cv

    from skshapley.games import as_float_block

    try:
        candidates = [check_alpha(a) for a in alphas]
    except TypeError:
        raise ValueError(f"The 'alphas' parameter must be a list of numbers >= 0; got "
                         f"{alphas!r}.") from None
    if not candidates:
        raise ValueError("The 'alphas' parameter must not be empty.")
    X, y = as_float_block(X, y, "train")
    errors = np.zeros(len(candidates))
    for train_rows, valid_rows in check_cv(_check_cv_folds(5 if cv is None else cv,
                                                          "cv")).split(X, y):
        train = factor_rows((X[train_rows], y[train_rows]), "train", reduction)
        valid = factor_rows((X[valid_rows], y[valid_rows]), "test", reduction,
                            n_features=X.shape[1])
        base = reduce_factors(train, valid, alpha=0.0, center=center, check_rank=False)
        u, s, vt = np.linalg.svd(base.factor)
        projected = u.T @ base.target
        # singular values lstsq treats as zero: alpha = 0 is then the minimum-norm fit
        kept = s > s[0] * np.finfo(float).eps * max(base.factor.shape)
        for i, a in enumerate(candidates):
            with np.errstate(divide="ignore", invalid="ignore"):
                shrink = np.where(kept, s / (s * s + a), 0.0)
            theta = vt.T @ (shrink * projected)
            residual = base.test_factor @ theta - base.test_target
            errors[i] += residual @ residual + (base.test_norm2 - base.test_target
                                                @ base.test_target)
    best = int(np.argmin(errors))
    return candidates[best], dict(zip(candidates, (errors / X.shape[0]).tolist(),
                                      strict=True))


def _check_finite(attribution, r2, theta, std_errors=None):
    """Refuse non-finite results (an overflow in the sums of squares or a degenerate
    fit), naming the quantity and the features, rather than return NaN as exact."""
    checks = [("the R² of the full model", np.atleast_1d(r2)),
              ("the full-model coefficients", theta), ("the attribution", attribution)]
    if std_errors is not None:
        checks.append(("the standard errors", std_errors))
    for what, values in checks:
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            where = "" if what.startswith("the R²") else f" of features {bad.tolist()}"
            raise ValueError(
                f"lsspa: {what}{where} is not finite ({values[bad[0]]}): the least-squares "
                "sums overflowed or the fit is degenerate; rescale X and y (e.g. with "
                "StandardScaler) or set alpha > 0."
            )


def lsspa(X_train, X_test=None, y_train=None, y_test=None, *, alpha=0.0, method="auto",
          sampler="argsort", replicates=8, antithetic=True, max_samples=2**13, tol=1e-2,
          batch_size=256, quantile_level=0.95, cv=None, alphas=None, center=True,
          reduction="tsqr", solver="auto", random_state=None, return_history=False):
    """Shapley attribution of a least-squares model's out-of-sample R² (LS-SPA).

    The players are the features, and the value of a set S of features is the test R² of
    the model refit on S alone (Sec. 2 of [1]_). The data are reduced once to p x p
    factors (Sec. 3.2 of [1]_, streamed for large data as in Sec. 4.4); each sampled
    chain then costs one O(p^3) factorisation that yields all p lifts at once
    (Sec. 3.3), in batches on the configured backend. Small p is enumerated exactly over
    the 2^p subsets.

    Parameters
    ----------
    X_train : array-like (N, p), or an iterable of (X_block, y_block) pairs
        Training data. An iterable (with ``y_train=None``) is read once, block by block,
        in O(p^2) memory beyond the block (float64 accumulation).
    X_test : array-like (M, p), or an iterable of (X_block, y_block) pairs
        Test data (``M < p`` is allowed). None with ``cv``.
    y_train, y_test : array-like (N,), (M,), or None with iterables
    alpha : float, default=0
        Ridge penalty in scikit-learn's convention: the model minimises
        ``||X theta - y||^2 + alpha ||theta||^2`` on the centred data, as
        ``Ridge(alpha=alpha)``. The paper's (and ``ls-spa``'s ``reg``) lambda minimises
        ``(1/N) ||X theta - y||^2 + lambda ||theta||^2``, so ``alpha = N * lambda``
        (Sec. 4.2 of [1]_). The test metric is unregularised.
    method : {"auto", "exact", "permutation"}, default="auto"
        "exact" enumerates all 2^p subsets (p <= 25); "auto" does so when
        ``2**p <= max_samples * p`` (enumeration then costs less than the sampling
        budget), else samples chains.
    sampler : str, PermutationSampler or int array (n, p), default="argsort"
        A name of ``skshapley.permutations.SAMPLERS`` (the samplers of
        ``shapley_values`` and ``ShapleyExplainer``), or one of ls-spa's names:
        "argsort" (= "argsort_sobol"): argsort of scrambled Sobol points (the QMC of
        Sec. 3.5 of [1]_); "permutohedron": the authors' code's permutohedron QMC
        (normal QMC on the sphere, Helmert basis); "sobol_sphere" (= "sobol"): the
        area-preserving construction of Mitchell et al.
        (:class:`skshapley.permutations.SobolSphere`); "mc": i.i.d. uniform orderings.
        An array gives the chains to use (``max_samples`` becomes its length).
    replicates : int or None, default=8
        Independent randomisations R of a randomised QMC sampler ("argsort_sobol",
        "sobol", "permutohedron"; ignored by the others). Their means are the draws of the
        error estimate, so the error bars are honest; None (or 1) uses one stream
        and i.i.d. formulas (``risk_is_heuristic=True``, as ``ls-spa`` does). Fewer
        replicates keep longer, better balanced Sobol' streams: at equal chains the
        default's error is 1.1-1.4x that of ``ls-spa``'s single antithetic stream,
        against 1.5-3.3x with 16 replicates and no antithetic pairs (issue 28), while
        the standard errors cover the truth about 95 % of the time (with t_{R-1}).
    antithetic : bool, default=True
        Pair every chain with its reverse and average the two lift vectors (one draw, or
        one point of a QMC replicate), as ``ls-spa`` does by default.
    max_samples : int, default=8192
        Maximum number of chains (an antithetic pair counts two).
    tol : float or None, default=0.01
        Stop once the estimated ``quantile_level`` quantile of ||S_hat - S||_2 is below
        ``tol`` (checked every ``batch_size`` chains; R² units). None: use all samples.
    batch_size : int, default=256
        Chains between two checks of the stopping rule (RQMC: rounded up to whole rounds
        of ``replicates`` times a power of two points, keeping each replicate's Sobol
        prefix balanced).
    quantile_level : float, default=0.95
    cv : int, cross-validation generator or iterable, optional
        Attribute the pooled cross-validated R² on the training data instead of the test
        R² (Sec. 4.1 of [1]_):
        ``1 - sum_f ||X_f theta^(-f) - y_f||^2 / sum_f ||y_f||^2`` with each
        fold centred by its training complement's means. ``X_test``/``y_test`` must be None.
    alphas : sequence of float, optional
        Ridge candidates; the one with the lowest cross-validated MSE of the full model
        (``cv`` folds, default 5) is used for every subset (Sec. 4.3 of [1]_, never
        re-tuned per subset). Reported as ``result.alpha``.
    center : bool, default=True
        Centre with the training means (a model with intercept). False reproduces
        ``ls-spa``, which fits no intercept and centres nothing.
    reduction : {"tsqr", "gram"}, default="tsqr"
        Reduction of the data: streaming Householder QR (stable) or Gram matrix + Cholesky
        (faster, squares the condition number).
    solver : {"auto", "qr", "cholesky"}, default="auto"
        Per-chain factorisation (Sec. 3.3 of [1]_): Householder QR of the permuted
        factor (4p^3/3 flops) or Cholesky of the permuted Gram (p^3/3); "auto" uses
        Cholesky while the Gram's condition number is below 1e8.
    random_state : None, int, Generator or RandomState
        Seeds the orderings (the error estimate's Gaussian draws are fixed and shared).
    return_history : bool, default=False
        Keep the running estimate after each check in ``result.history``.

    Returns
    -------
    AttributionResult

    Raises
    ------
    ValueError
        Mismatched columns, NaN, pd.NA or infinite values, values above 1e150 in
        magnitude (whose squares overflow), sparse input, a constant ``y_test``, fewer
        than 2 ``cv`` folds, unknown option values, or results that are not finite.

    See Also
    --------
    skshapley.games.LeastSquaresGame : the value function, for other approximators.

    Notes
    -----
    The R² baseline is the prediction ``mean(y_train)``, not ``mean(y_test)`` as in
    ``sklearn.metrics.r2_score``; ``v(empty) = 0`` and ``attribution.sum() == r2``.

    With ``alpha=0`` and rank-deficient training data (constant or collinear columns,
    fewer rows than features; e.g. the redundant columns of ``make_classification``)
    each subset is fitted by its minimum-norm least-squares solution, as
    ``LinearRegression`` and ``ls-spa`` do: a constant column is a null player. It is
    computed as ridge with a penalty 1e-12 ||X||_2^2, which agrees with ``lstsq`` to
    about 1e-6 in R² unless some subset is nearly singular (``result.alpha`` stays 0).

    References
    ----------
    .. [1] L. Bell, N. Devanathan and S. Boyd, "Efficient Shapley performance attribution
       for least-squares regression", Statistics and Computing 34, 2024 (Algorithm 3.1).

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.attribution import lsspa
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = X @ [2.0, 1.0, 0.0] + rng.normal(size=200)
    >>> result = lsspa(X[:150], X[150:], y[:150], y[150:])
    >>> bool(np.isclose(result.attribution.sum(), result.r2)), result.method
    (True, 'exact')
    """
    alpha = check_alpha(alpha)
    center = check_center(center)
    if method not in METHODS:
        raise ValueError(f"The 'method' parameter must be one of {list(METHODS)}; got "
                         f"{method!r}.")
    if isinstance(sampler, str) and sampler not in SAMPLERS and sampler not in ALIASES:
        # Checked whatever the method: "auto" may resolve to "exact", which draws no
        # orderings, and a misspelt name must not pass silently there.
        raise ValueError(f"The 'sampler' parameter must be one of {sorted(SAMPLERS)} (or "
                         f"ls-spa's names {sorted(ALIASES)}), a PermutationSampler or an "
                         f"int array of orderings (n, p); got {sampler!r}.")
    max_samples = check_positive_int(max_samples, "max_samples", 2)
    batch_size = check_positive_int(batch_size, "batch_size", 1)
    if tol is not None and (isinstance(tol, bool) or not isinstance(tol, Real)
                            or not (np.isfinite(tol) and tol > 0)):
        raise ValueError(f"The 'tol' parameter must be a positive number or None; got {tol!r}.")
    if not isinstance(quantile_level, Real) or not 0.0 < quantile_level < 1.0:
        raise ValueError(f"The 'quantile_level' parameter must be in (0, 1); got "
                         f"{quantile_level!r}.")
    if replicates is not None:
        replicates = check_positive_int(replicates, "replicates", 1)
    if not isinstance(antithetic, (bool, np.bool_)):
        raise ValueError(f"The 'antithetic' parameter must be True or False; got "
                         f"{antithetic!r}.")

    streaming = y_train is None
    alpha_scores = None
    if alphas is not None:
        if streaming:
            raise ValueError("The 'alphas' parameter needs in-memory training data (its "
                             "cross-validation splits rows); got an iterable X_train.")
        alpha, alpha_scores = _select_alpha(X_train, y_train, alphas, cv, center, reduction)
    if cv is not None:
        if streaming:
            raise ValueError("The 'cv' parameter needs in-memory training data; got an "
                             "iterable X_train.")
        if X_test is not None or y_test is not None:
            raise ValueError("X_test and y_test must be None when 'cv' is set: the "
                             "cross-validated metric scores the training folds.")
        reductions = _cv_reductions(X_train, y_train, cv, alpha, center, reduction)
        full = reduce_factors(factor_rows((X_train, y_train), "train", reduction),
                              factor_rows((X_train, y_train), "test", reduction),
                              alpha=alpha, center=center, rank_deficient="min_norm")
    else:
        if X_test is None:
            raise ValueError("X_test is required unless 'cv' is set.")
        if (y_test is None) != streaming:
            raise ValueError("y_train and y_test must both be arrays, or both None with "
                             "iterables of (X_block, y_block) pairs as X_train and X_test.")
        train = factor_rows(X_train if streaming else (X_train, y_train), "train", reduction)
        test = factor_rows(X_test if streaming else (X_test, y_test), "test", reduction,
                           n_features=train.n_features)
        full = reduce_factors(train, test, alpha=alpha, center=center,
                              rank_deficient="min_norm")
        reductions = [full]
    problem = _Problem(reductions, solver)
    p = problem.n_features
    theta = full.coefficients()
    intercept = float(full.y_mean - full.x_mean @ theta)
    r2 = float(problem.full_r2())
    common = dict(theta=theta, intercept=intercept, alpha=alpha, alpha_scores=alpha_scores,
                  quantile_level=float(quantile_level))

    orders_given = not isinstance(sampler, (str, PermutationSampler))
    if method == "auto":
        exact = (not orders_given and p <= EXACT_MAX_FEATURES
                 and 2.0**p <= float(max_samples) * p)
        method = "exact" if exact else "permutation"
    if method == "exact":
        if p > EXACT_MAX_FEATURES:
            raise ValueError(f"method='exact' enumerates 2**{p} subsets for p={p} features, "
                             f"above the limit of {EXACT_MAX_FEATURES}; use "
                             "method='permutation'.")
        values = problem.all_values()
        phi = np.empty((p, 1))
        problem.kernels.exact_shapley_from_values(np.ascontiguousarray(values[:, None]), p, phi)
        _check_finite(phi[:, 0], float(values[-1]), theta)
        zeros = np.zeros(p)
        return AttributionResult(
            attribution=phi[:, 0], r2=float(values[-1]), std_errors=zeros,
            error_quantile=0.0, attribution_errors=zeros.copy(), n_samples=0,
            converged=True, method="exact", **common)

    (sampler_rng,) = as_generator(random_state).spawn(1)
    if orders_given:
        orders = _check_orders(sampler, p)
        max_samples = orders.shape[0] * (2 if antithetic else 1)
        stream, reps, sampler_name = _FixedOrders(orders), None, "array"
    else:
        stream, reps, sampler_name = _make_sampler(sampler, p, sampler_rng, replicates)
    unit = 2 if antithetic else 1
    points_max = max_samples // unit
    if reps:
        # Whole rounds of one point per replicate, checked at powers-of-two multiples.
        block = 1 << max(0, int(np.ceil(np.log2(max(1, batch_size // (unit * reps))))))
        points_per_check = reps * block
        points_max = points_max // reps * reps
        if points_max < reps:
            raise ValueError(f"max_samples={max_samples} buys fewer chains than the "
                             f"{reps} replicates of the sampler; increase max_samples to at "
                             f"least {reps * unit} or lower replicates.")
    else:
        points_per_check = max(1, batch_size // unit)
    risk_is_heuristic = reps is None and (orders_given or sampler_name != "mc"
                                          and stream.block_size is None)

    total = np.zeros(p)
    history, error_history, samples_history = [], [], []
    estimate = SequentialEstimate(p, replicates=reps, quantile_level=quantile_level)
    # one draw of the sequential estimate: a chain (or antithetic pair), or with
    # replicates a round of one chain per replicate
    per_draw = reps or 1

    def draw(n_draws):
        nonlocal total
        n_points = n_draws * per_draw
        orders = stream.random(n_points)
        if antithetic:
            chains = np.empty((2 * n_points, p), dtype=np.int64)
            chains[0::2] = orders
            chains[1::2] = orders[:, ::-1]
            draws = problem.lifts(chains).reshape(n_points, 2, p).mean(axis=1)
        else:
            draws = problem.lifts(orders)
        total = total + draws.sum(axis=0)
        return draws.reshape(n_draws, reps, p, 1) if reps else draws[:, :, None]

    def record(n_draws, error):
        points = n_draws * per_draw
        if return_history:
            history.append(total / points)
        error_history.append(float(np.inf if estimate.error is None
                                   else estimate.error[0]))
        samples_history.append(points * unit)

    n_draws, converged = run_sequential(
        draw, estimate, points_max // per_draw, points_per_check // per_draw, tol=tol,
        on_check=record)
    converged = bool(converged)
    points_done = n_draws * per_draw
    error = np.inf if estimate.error is None else float(estimate.error[0])
    attribution = total / points_done
    std_errors = estimate.std_errors()[:, 0]
    _check_finite(attribution, r2, theta, std_errors)
    n_draws = estimate.n_draws
    attribution_errors = feature_error_quantiles(std_errors, quantile_level) * (
        small_sample_inflation(n_draws, quantile_level) if n_draws >= 2 else np.inf)
    return AttributionResult(
        attribution=attribution, r2=r2, std_errors=std_errors, error_quantile=float(error),
        attribution_errors=attribution_errors, n_samples=points_done * unit,
        converged=converged, history=np.array(history) if return_history else None,
        error_history=tuple(error_history), samples_history=tuple(samples_history),
        method="permutation", sampler=sampler_name, n_draws=int(n_draws),
        risk_is_heuristic=bool(risk_is_heuristic), **common)
