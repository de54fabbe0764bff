"""Regression estimators of Shapley values: paired KernelSHAP, leverage-score sampling,
k-additive KernelSHAP and an odd-Fourier surrogate (after Lundberg & Lee 2017, Covert & Lee
2021, Musco & Witter 2024 and Pelegrina et al. 2023).

All of them evaluate v(∅), v(N) and a paired coalition design (``_coalitions``) in one
call of the game, fit a surrogate by KernelSHAP's constrained weighted least squares
(``_wls``) and read the Shapley values off it; efficiency holds to round-off. Standard
errors come from the sandwich variance with complementary pairs as blocks, stratified by
coalition size, without replacement; enumerated sizes add no variance.

Two facts make the odd-Fourier surrogate work (Fourier basis chi_T(S) = prod_{i in T}
(+1 if i in S else -1)):

- a character of even order has Shapley value 0 for every player, one of odd order |T|
  gives 2 / |T| to each member of T; so the Shapley values depend only on the game's odd
  part;
- the difference v(S) - v(N \\ S) of a complementary pair is twice the odd part at S.

Fitting the pair differences with odd characters therefore spends no unknowns on the
even part, which pairing cancels anyway. With characters of order 1 only this *is*
paired KernelSHAP (the two problems have the same solution); adding the third-order
characters that the first fit leaves in its residuals is the surrogate of
``method="surrogate"``, in the spirit of OddSHAP.
"""

from __future__ import annotations

from math import comb
from numbers import Integral

import numpy as np

from skshapley.approximators._coalitions import (
    ALLOCATIONS,
    minimum_design_budget,
    paired_design,
)
from skshapley.approximators._common import as_matrix
from skshapley.approximators._constraints import BUDGET, GAME, QUANTILE_LEVEL, validate_game_params
from skshapley.approximators._exact import exact_shapley
from skshapley.approximators._records import MethodCost, MethodRecord
from skshapley.approximators._regression_features import (  # noqa: E402
    _hc1,
    _odd_fit,
    moebius_features,
    moebius_terms,
    odd_character_features,
    term_readout,
)
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._risk import (
    shared_squared_draws,
    small_sample_inflation,
    spectrum_error_quantile,
    spectrum_of_rows,
)
from skshapley.approximators._surrogate import (  # noqa: E402
    CV_FOLDS,
    KEPT_PAIR_PRODUCTS,
    MAX_SURROGATE_TERMS,
    _fit_surrogate,
    triple_pool_size,
)
from skshapley.approximators._wls import constrained_wls, stratified_factor
from skshapley.permutations import SAMPLERS, PermutationSampler
from skshapley.utils import (
    RANDOM_STATE,
    NumberInterval,
    StrOptions,
    as_generator,
    threadpool_limits,
)

REGRESSION_METHODS = ("kernel", "leverage", "kadd", "surrogate")


# -- the estimator ---------------------------------------------------------------------
def _too_small(method, budget, d):
    minimum = minimum_design_budget(d)
    return ValueError(
        f"budget={budget} is too small for method={method!r} with n_players={d}: the "
        f"regression needs v(∅), v(N) and every coalition of sizes 1 and {d - 1}, "
        f"{minimum} evaluations; increase budget to at least {minimum}."
    )


@validate_game_params(
    {
        "game": GAME,
        "budget": BUDGET,
        "method": [StrOptions(set(REGRESSION_METHODS))],
        "order": [NumberInterval(Integral, 1, None, closed="left")],
        "max_terms": [NumberInterval(Integral, 0, None, closed="left"), None],
        "max_cv_terms": [NumberInterval(Integral, 0, None, closed="left"), None],
        "allocation": [StrOptions(set(ALLOCATIONS)), None],
        "coalition_sampler": [StrOptions({"random", *SAMPLERS}), PermutationSampler],
        "enumerate_sizes": [tuple, list],
        "quantile_level": QUANTILE_LEVEL,
        "random_state": RANDOM_STATE,
    },
)
def regression_shapley(game, budget: int, *, method: str = "kernel", order: int = 2,
                       max_terms: int | None = None, max_cv_terms: int | None = None,
                       allocation: str | None = None,
                       coalition_sampler="random", enumerate_sizes=(),
                       quantile_level: float = 0.95, random_state=None) -> ShapleyResult:
    """Shapley values by a regression on a paired coalition design (KernelSHAP, Lundberg &
    Lee 2017, with the pairing of Covert & Lee 2021).

    Parameters
    ----------
    game : Game
    budget : int
        Coalition evaluations, v(∅) and v(N) included; never exceeded. From 2^d on, the
        values are exact (every coalition is evaluated).
    method : {"kernel", "leverage", "kadd", "surrogate"}, default="kernel"
        "kernel": paired KernelSHAP with outside-in enumeration of coalition sizes;
        "leverage": the same regression with evaluations spread equally over sizes
        (leverage-score sampling, Musco & Witter 2024); "kadd": k-additive KernelSHAP
        (Pelegrina et al. 2023) with interactions up to ``order``; "surrogate": pair
        differences fitted with first- and third-order odd Fourier characters (see the
        module notes).
    order : int, default=2
        Largest interaction order of "kadd".
    max_terms : int, optional
        "surrogate": most third-order characters kept (default 600, and never more
        than the pairs minus d + 4), ranked by their correlation with the first-order
        residuals; how many of them are used is chosen by 3-fold cross-validation.
    max_cv_terms : int, optional
        "surrogate" without ``max_terms``: the most third-order characters the
        cross-validation considers (default 600); a smaller one bounds the solver's
        time (the explainer's ``method="auto"`` sets it from the model's speed).
        Triples are screened among all players up to 30 players, else among the
        players with the largest first-order values (64 triples per player).
    allocation : {"kernel", "leverage"}, optional
        How sampled evaluations are spread over coalition sizes; default "leverage" for
        "leverage" and "surrogate", else "kernel".
    coalition_sampler : "random", sampler name or PermutationSampler, default="random"
        Sampled coalitions uniform without replacement, or as prefixes of a permutation
        sampler's orderings (QMC designs).
    enumerate_sizes : tuple of int, default=()
        Sizes s <= d / 2 whose coalitions and complements all go in the design first
        (see :func:`~skshapley.approximators._coalitions.paired_design`).
    quantile_level : float, default=0.95
    random_state : None, int or Generator

    Returns
    -------
    ShapleyResult
        ``std_errors`` from the stratified sandwich variance (pairs as blocks);
        ``n_draws`` is the number of sampled pairs; ``risk_is_heuristic`` is True for
        QMC coalition designs, whose pairs are not independent.

    Examples
    --------
    >>> from skshapley.games import UnanimityGame
    >>> from skshapley.approximators._regression import regression_shapley
    >>> game = UnanimityGame([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 0]])
    >>> result = regression_shapley(game, budget=40, method="kadd", random_state=0)
    >>> bool(abs(result.values.sum() - 2.0) < 1e-12)
    True
    """
    budget = int(budget)
    d = game.n_players
    if d <= 2 or budget >= 2**d:
        if budget < 2**d:
            raise _too_small(method, budget, d)
        result = exact_shapley(game, max_players=max(d, 20))
        return _relabel(result, method)
    if budget < minimum_design_budget(d):
        raise _too_small(method, budget, d)
    (design_rng,) = as_generator(random_state).spawn(1)
    if allocation is None:
        # Measured (benchmarks/results/accuracy.md): the surrogate, whose third-order
        # terms live on the middle sizes too, does better with equal allocation.
        allocation = "leverage" if method in ("leverage", "surrogate") else "kernel"
    design = paired_design(d, budget - 2, allocation=allocation,
                           coalition_sampler=coalition_sampler, rng=design_rng,
                           enumerate_sizes=enumerate_sizes)
    start = game.n_evaluations
    endpoints = np.zeros((2, d), dtype=bool)
    endpoints[1] = True
    values = as_matrix(game.values(np.concatenate([endpoints, design.coalitions])))
    n_evaluations = game.n_evaluations - start
    empty, grand = values[0], values[1]
    delta = grand - empty
    # Many small factorisations: a BLAS thread pool only adds its hand-offs (10x slower
    # on 2 cores at d = 10, measured); the model calls above keep their threads. One
    # limit for the fit and its errors: setting one costs ~0.1 ms.
    with threadpool_limits(1, user_api="blas"):
        phi, influence, scale = fit_design(method, design, values[2:], empty, delta,
                                           order=order, max_terms=max_terms,
                                           max_cv_terms=max_cv_terms, rng=design_rng)
        n_draws = design.n_sampled_pairs
        inflation = small_sample_inflation(n_draws, quantile_level) if n_draws else 1.0
        k = phi.shape[1]
        std_errors, error = np.empty((d, k)), np.empty(k)
        _sandwich_errors(influence, design, scale, quantile_level, inflation,
                         shared_squared_draws(d), std_errors, error)
    return ShapleyResult.of_game(
        game, phi, std_errors, error, empty, grand,
        n_evaluations=n_evaluations, converged=None, method=method, n_draws=n_draws,
        quantile_level=quantile_level,
        risk_is_heuristic=not (isinstance(coalition_sampler, str)
                               and coalition_sampler == "random"))


def fit_design(method, design, values, empty, delta, *, order=2, max_terms=None,
               max_cv_terms=None, rng=None):
    """Fit ``method``'s surrogate to the evaluated design and read off phi.

    Parameters
    ----------
    method : {"kernel", "leverage", "kadd", "surrogate"}
    design : CoalitionDesign
    values : float64 (n_coalitions, k)
        v at ``design.coalitions``.
    empty, delta : float64 (k,)
        v(∅) and v(N) - v(∅).

    Returns
    -------
    phi : float64 (d, k)
    influence : Influence or OutputInfluence
        Each pair's contribution to the sandwich variance (``of_output(j)``: the
        (n_pairs, d) rows of output j).
    variance_scale : float64 (k,)
        Factor for each output's sandwich covariance: residuals of a fit with p free odd
        coefficients on n pairs are shrunk by about (n - p) / n (HC1 undoes it); when
        the surrogate's terms were chosen from the same data they are shrunk further,
        so it is at least the ratio of the cross-validated to the in-sample residual
        sum of squares.
    """
    d = design.first.shape[1]
    pairs = design.n_pairs
    side, other = values[:pairs], values[pairs:]
    k = values.shape[1]

    if method == "kadd":
        terms = moebius_terms(d, min(order, d - 1))
        features = moebius_features(design.coalitions, terms)
        readout = term_readout(d, terms, lambda size: 1.0 / size)
        phi, _, influence = constrained_wls(
            features, design.weights, np.concatenate([side, other]) - empty,
            np.ones(len(terms)), delta, readout)
        influence.fold = pairs  # one block per pair
        # Only odd terms matter: pairing makes the even ones orthogonal to phi.
        free = sum(len(t) % 2 for t in terms) - 1
        return phi, influence, np.full(k, _hc1(pairs, free))
    differences = side - other  # twice the odd part at each pair's first side
    if method == "surrogate" and d >= 3:
        return _fit_surrogate(design, differences, delta, d, max_terms, rng, max_cv_terms)
    terms = [(j,) for j in range(d)]
    features = odd_character_features(design.first, terms)
    phi, _, influence = _odd_fit(features, design, differences, delta, terms, d)
    return phi, influence, np.full(k, _hc1(pairs, d - 1))


def _sandwich_errors(influence, design, scale, quantile_level, inflation, squares,
                     std_errors, error):
    """Fill each output's standard errors and error quantile from its stratified
    sandwich covariance, output by output (k covariances of d x d need not fit at
    once)."""
    sampled = design.blocks >= 0
    for j in range(std_errors.shape[1]):
        factor = stratified_factor(influence.of_output(j)[sampled], design.blocks[sampled],
                                   design.stratum_sizes)
        if factor is None:
            std_errors[:, j], error[j] = np.inf, np.inf
            continue
        factor *= np.sqrt(scale[j])
        std_errors[:, j] = np.sqrt(np.einsum("ij,ij->j", factor, factor))
        error[j] = factor_error_quantile(factor, quantile_level, squares) * inflation


# Above this many operations per output (p^2 n for the spectrum of an n x p factor), the
# overall error quantile uses the bound below instead of the spectrum; 2e8 is ~0.05 s.
RISK_SPECTRUM_FLOPS = 2e8
# The chi-square(1) tail bounds every mixture's from this quantile level on (Szekely &
# Bakirov 2003: P(sum a_i Z_i^2 >= x) <= P(Z^2 >= x) for sum a_i = 1 and x >= 1.5365,
# the 0.785 quantile of Z^2).
_BOUND_FROM_LEVEL = 0.79


def factor_error_quantile(factor, quantile_level, squared_draws):
    """The ``quantile_level`` quantile of ||Delta|| for Delta ~ N(0, A'A), A = ``factor``.

    From the spectrum of A'A when it is cheap; otherwise, at levels >= 0.79, the bound
    z_{(1+q)/2} sqrt(trace(A'A)), exact when the error lies along one direction and
    conservative otherwise (Szekely & Bakirov 2003), which costs one pass over A.
    ``squared_draws``: squared standard normals, e.g. ``shared_squared_draws(p)``."""
    n, p = factor.shape
    if quantile_level >= _BOUND_FROM_LEVEL and min(n, p) ** 2 * max(n, p) > RISK_SPECTRUM_FLOPS:
        from scipy.stats import norm

        trace = float(np.einsum("ij,ij->", factor, factor))
        return float(norm.ppf(0.5 + quantile_level / 2) * np.sqrt(trace))
    return spectrum_error_quantile(spectrum_of_rows(factor), quantile_level, squared_draws)


def _relabel(result, method):
    from dataclasses import replace

    return replace(result, method=method)


# -- what the rest of the library reads (see _records) -------------------------------
def _design_pairs(budget):
    return max((budget - 2) // 2, 1)


def _regression_cost(n_players, budget, n_outputs, *, terms=0):
    """Memory and operations of a paired design of ``budget`` evaluations fitted with d
    first-order and ``terms`` further terms per output."""
    d, n, k = n_players, _design_pairs(budget), n_outputs
    p = d + terms
    # design masks, features, the reduced and weighted copies, the projected rows and
    # one output's influence rows
    memory = n * (2 * d + 8.0 * (4 * p + d))
    # Seconds measured on the 2-core CI machine under one BLAS thread (issue 27, re-
    # measured after the design, stratification and error-quantile speed-ups: paired
    # KernelSHAP at d = 10-500, 5 d to 64 d evaluations, 1 and 16 outputs, fitted by
    # non-negative least squares on relative error; predictions 0.77-1.16x the
    # measurements): 0.52 ms a game, 0.12 ms an output, 7.2e-11 s per n p^2 (the Gram
    # matrix and projections, in BLAS), 2.3e-8 s per n p (features and their copies),
    # 5.2e-9 s per n d an output (influence rows, strata) and the error quantile's
    # spectrum where it is taken; counted in operations at OPERATIONS_PER_SECOND. The
    # earlier constants (6.7 ms a game, 3 operations per n p^2) overstated 5-16x.
    low, high = min(n, d), max(n, d)
    spectrum = 0.28 * low**3 + 0.012 * low**2 * high \
        if low**2 * high <= RISK_SPECTRUM_FLOPS else 0.0
    flops = 7.9e5 + 0.11 * n * p * p + 34.0 * n * p + k * (1.8e5 + 7.7 * n * d + spectrum)
    return MethodCost(memory_bytes=memory, flops=flops)


def surrogate_cost(n_players, budget, n_outputs, max_cv_terms=MAX_SURROGATE_TERMS):
    """The surrogate's cost when cross-validation may choose up to ``max_cv_terms``
    third-order characters (of its screened pool)."""
    d = n_players
    if d < 3:
        return _regression_cost(d, budget, n_outputs)
    pool = triple_pool_size(d)
    n, k = _design_pairs(budget), n_outputs
    n_train = n * (CV_FOLDS - 1) // CV_FOLDS
    screened = comb(pool, 3)
    cv_terms = max(0, min(max_cv_terms, screened, n_train - d - 4))
    p = d + cv_terms // 2
    # the regression's arrays with the chosen terms, and the pool's pair products kept
    memory = (_regression_cost(d, budget, k, terms=cv_terms // 2).memory_bytes
              + 8.0 * n * min(comb(pool, 2), KEPT_PAIR_PRODUCTS / max(n, 1)))
    # Seconds measured as _regression_cost's (d = 8-100, 5 d to 64 d evaluations, CV
    # ceilings 40-600; predictions 0.52-1.86x the measurements): 1.3 ms a game, 0.72 ms
    # an output, 1.1e-10 s per n p^2, 4.1e-7 s per n d and 3.4e-7 s per n d an output
    # (per-player screening work), 1.9e-10 s per n (CV terms)^2 an output, and 2.7e-9 s
    # per pair and screened triple an output: the triples are scored through their
    # pairs' products, one matrix product a round (measured at the default budget,
    # d = 20 / 50 / 100 / 200, CV ceilings 600 and 40: 35 / 190 / 383 / 1,204 ms and
    # 11 / 50 / 126 / 534 ms, predicted 0.95-2.35x that; before, each triple's column was
    # summed, kept whole or rebuilt in chunks: at d = 20 / 50 / 100, 39 / 855 / 2,475 ms
    # and 18 / 681 / 1,928 ms).
    per_triple = 4.0
    flops = 1.9e6 + 0.17 * n * p * p + 610.0 * n * d + k * (
        1.1e6 + 510.0 * n * d + per_triple * n * screened + 0.29 * n * cv_terms**2)
    return MethodCost(memory_bytes=memory, flops=flops)


def _kadd_cost(n_players, budget, n_outputs, order=2):
    terms = sum(comb(n_players, size) for size in range(2, min(order, n_players - 1) + 1))
    cost = _regression_cost(n_players, budget, n_outputs, terms=terms)
    # it fits both sides of every pair
    return MethodCost(2 * cost.memory_bytes, 2 * cost.flops)


def _regression_record(name, cost):
    return MethodRecord(
        name=name,
        run=lambda game, budget, *, tol=None, random_state=None, **options: (
            regression_shapley(game, budget, method=name, random_state=random_state,
                               **options)),
        minimum_budget=lambda n_players, unit=1: min(minimum_design_budget(n_players),
                                                     2**n_players),
        cost=cost,
    )


KERNEL = _regression_record("kernel", _regression_cost)
LEVERAGE = _regression_record("leverage", _regression_cost)
KADD = _regression_record("kadd", _kadd_cost)
SURROGATE = _regression_record("surrogate", surrogate_cost)
