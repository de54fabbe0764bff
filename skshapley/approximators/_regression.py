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

import warnings
from itertools import combinations
from math import comb
from numbers import Integral, Real

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky, solve_triangular

from skshapley.approximators._coalitions import (
    ALLOCATIONS,
    minimum_design_budget,
    paired_design,
)
from skshapley.approximators._common import as_matrix, scalar_or_array, squeeze_outputs
from skshapley.approximators._exact import exact_shapley
from skshapley.approximators._records import MethodCost, MethodRecord
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._risk import (
    overall_error_quantile,
    small_sample_inflation,
    spectrum_of_rows,
)
from skshapley.approximators._wls import constrained_wls, stratified_factor
from skshapley.exceptions import BudgetWarning
from skshapley.permutations import SAMPLERS, PermutationSampler
from skshapley.utils import (
    RANDOM_STATE,
    HasMethods,
    NumberInterval,
    StrOptions,
    as_generator,
    threadpool_limits,
    validate_params,
)

REGRESSION_METHODS = ("kernel", "leverage", "kadd", "surrogate")


# -- feature maps ----------------------------------------------------------------------
def moebius_terms(n_players: int, order: int) -> list:
    """Coalitions T with 1 <= |T| <= order, by size then lexicographically."""
    return [t for size in range(1, order + 1) for t in combinations(range(n_players), size)]


def moebius_features(coalitions, terms):
    """x_T(S) = 1 if T is inside S (the k-additive model's basis)."""
    z = coalitions.astype(np.float64)
    columns = [np.prod(z[:, list(t)], axis=1) for t in terms]
    return np.column_stack(columns)


def term_readout(n_players, terms, share):
    """(d, p) matrix giving phi_j = sum_{T containing j} share(|T|) beta_T."""
    readout = np.zeros((n_players, len(terms)))
    for column, t in enumerate(terms):
        readout[list(t), column] = share(len(t))
    return readout


def odd_character_features(first, terms):
    """chi_T(S) = prod_{i in T} (+1 if i in S else -1), for the one side S of each pair."""
    signs = np.where(first, 1.0, -1.0)
    features = np.empty((first.shape[0], len(terms)))
    sizes = np.array([len(t) for t in terms])
    for size in np.unique(sizes):  # the terms of one size at once
        columns = np.flatnonzero(sizes == size)
        members = np.array([terms[c] for c in columns], dtype=np.int64).reshape(-1, size)
        features[:, columns] = np.prod(signs[:, members], axis=2)
    return features


# Third-order characters of a design are kept whole up to this many entries (32 MB),
# else built in chunks whenever they are scored.
KEPT_CHARACTERS = 2**22


class _TripleCharacters:
    """The third-order characters chi_T of some pairs' first sides, for every triple T
    (in ``combinations`` order)."""

    def __init__(self, signs, triples, full=None):
        self.signs, self.triples, self.full = signs, triples, full
        if full is None and signs.shape[0] * len(triples) <= KEPT_CHARACTERS:
            self.full = self.columns(np.arange(len(triples)))

    @classmethod
    def of(cls, first, pool=None):
        """Every triple of players in ``pool`` (default: all players)."""
        pool = range(first.shape[1]) if pool is None else pool
        triples = np.array(list(combinations(pool, 3)), dtype=np.int64).reshape(-1, 3)
        return cls(np.where(first, 1.0, -1.0), triples)

    def rows(self, mask):
        """The same characters for the pairs in ``mask``."""
        full = None if self.full is None else self.full[mask]
        return _TripleCharacters(self.signs[mask], self.triples, full)

    def columns(self, index):
        if self.full is not None:
            return self.full[:, index]
        t = self.triples[index]
        return self.signs[:, t[:, 0]] * self.signs[:, t[:, 1]] * self.signs[:, t[:, 2]]

    def correlations(self, weighted):
        """chi_T' weighted for every triple T."""
        if self.full is not None:
            return self.full.T @ weighted
        out = np.empty(len(self.triples))
        chunk = max(1, KEPT_CHARACTERS // max(self.signs.shape[0], 1))
        for start in range(0, len(self.triples), chunk):
            index = np.arange(start, min(start + chunk, len(self.triples)))
            out[index] = self.columns(index).T @ weighted
        return out


SCREEN_ROUNDS = 8


def _third_order_screen(characters, weights, residuals, n_keep, rounds=SCREEN_ROUNDS):
    """Rank ``n_keep`` triples for one output by forward selection in ``rounds`` blocks:
    each block takes the characters most correlated (weighted) with what the triples
    chosen so far leave of the first-order ``residuals``. Re-fitting between blocks stops
    correlated copies of one interaction from crowding out the others (measured on
    breast_cancer, 30 players, 50 evaluations per player: 8 rounds give 8x lower MSE
    than a single screen, 4 rounds 6x, 16 no better than 8). Returns indices into
    ``characters.triples``."""
    n = residuals.shape[0]
    chosen = np.empty(0, dtype=np.int64)
    features = np.empty((n, 0))
    factor = np.empty((0, 0))  # Cholesky factor of the chosen characters' normal matrix
    rhs = np.empty(0)
    # A tiny ridge: screening needs the residuals, not exact coefficients. Every character
    # is +-1, so each diagonal entry of the normal matrix is sum(weights).
    ridge = 1e-9 * weights.sum()
    left = residuals
    per_round = max(1, -(-n_keep // rounds))
    while len(chosen) < n_keep:
        scores = characters.correlations(left * weights) ** 2
        scores[chosen] = -np.inf
        take = np.argsort(-scores, kind="stable")[: min(per_round, n_keep - len(chosen))]
        new = characters.columns(take)
        weighted = new * weights[:, None]
        block = new.T @ weighted
        block[np.diag_indices_from(block)] += ridge
        # The factor grows by a block row: the chosen characters' factor is unchanged.
        coupling = solve_triangular(factor, features.T @ weighted, lower=True,
                                    check_finite=False)
        corner = cholesky(block - coupling.T @ coupling, lower=True, check_finite=False)
        m, b = len(chosen), len(take)
        grown = np.zeros((m + b, m + b))
        grown[:m, :m], grown[m:, :m], grown[m:, m:] = factor, coupling.T, corner
        factor = grown
        rhs = np.concatenate([rhs, weighted.T @ residuals])
        features = np.hstack([features, new])
        chosen = np.concatenate([chosen, take])
        left = residuals - features @ cho_solve((factor, True), rhs, check_finite=False)
    return chosen


# -- the estimator ---------------------------------------------------------------------
def _too_small(method, budget, d):
    minimum = minimum_design_budget(d)
    return ValueError(
        f"budget={budget} is too small for method={method!r} with n_players={d}: the "
        f"regression needs v(∅), v(N) and every coalition of sizes 1 and {d - 1}, "
        f"{minimum} evaluations; increase budget to at least {minimum}."
    )


@validate_params(
    {
        "game": [HasMethods(["values"])],
        "budget": [NumberInterval(Integral, 1, None, closed="left")],
        "method": [StrOptions(set(REGRESSION_METHODS))],
        "order": [NumberInterval(Integral, 1, None, closed="left")],
        "max_terms": [NumberInterval(Integral, 0, None, closed="left"), None],
        "max_cv_terms": [NumberInterval(Integral, 0, None, closed="left"), None],
        "allocation": [StrOptions(set(ALLOCATIONS)), None],
        "coalition_sampler": [StrOptions({"random", *SAMPLERS}), PermutationSampler],
        "enumerate_sizes": [tuple, list],
        "quantile_level": [NumberInterval(Real, 0, 1, closed="neither")],
        "random_state": RANDOM_STATE,
    },
    # the game may fit the user's estimators (RefitGame): their checks stay on
    prefer_skip_nested_validation=False,
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
    design_rng, risk_rng = as_generator(random_state).spawn(2)
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
    # on 2 cores at d = 10, measured); the model calls above keep their threads.
    with threadpool_limits(1, user_api="blas"):
        phi, influence, scale = fit_design(method, design, values[2:], empty, delta,
                                           order=order, max_terms=max_terms,
                                           max_cv_terms=max_cv_terms, rng=design_rng)

    n_draws = design.n_sampled_pairs
    inflation = small_sample_inflation(n_draws, quantile_level) if n_draws else 1.0
    normal = risk_rng.standard_normal((4096, d))
    k = phi.shape[1]
    std_errors, error = np.empty((d, k)), np.empty(k)
    with threadpool_limits(1, user_api="blas"):
        _sandwich_errors(influence, design, scale, quantile_level, inflation, normal,
                         std_errors, error)
    return ShapleyResult(
        values=squeeze_outputs(phi, game),
        std_errors=squeeze_outputs(std_errors, game),
        error_quantile=scalar_or_array(error, game),
        n_evaluations=n_evaluations,
        converged=None,
        method=method,
        empty_value=scalar_or_array(empty, game),
        grand_value=scalar_or_array(grand, game),
        n_draws=n_draws,
        quantile_level=quantile_level,
        risk_is_heuristic=not (isinstance(coalition_sampler, str)
                               and coalition_sampler == "random"),
    )


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


def _sandwich_errors(influence, design, scale, quantile_level, inflation, normal,
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
        error[j] = factor_error_quantile(factor, quantile_level, normal) * inflation


class OutputInfluence:
    """The influence rows of outputs fitted in groups (the surrogate fits the outputs
    that chose the same terms together): output j's rows come from its group's fit."""

    def __init__(self, n_outputs):
        self._parts = [None] * n_outputs

    def set(self, outputs, influence):
        for column, j in enumerate(outputs):
            self._parts[j] = (influence, column)

    def of_output(self, j):
        influence, column = self._parts[j]
        return influence.of_output(column)


# Above this many operations per output (p^2 n for the spectrum of an n x p factor), the
# overall error quantile uses the bound below instead of the spectrum; 2e8 is ~0.05 s.
RISK_SPECTRUM_FLOPS = 2e8
# The chi-square(1) tail bounds every mixture's from this quantile level on (Szekely &
# Bakirov 2003: P(sum a_i Z_i^2 >= x) <= P(Z^2 >= x) for sum a_i = 1 and x >= 1.5365,
# the 0.785 quantile of Z^2).
_BOUND_FROM_LEVEL = 0.79


def factor_error_quantile(factor, quantile_level, normal_draws):
    """The ``quantile_level`` quantile of ||Delta|| for Delta ~ N(0, A'A), A = ``factor``.

    From the spectrum of A'A when it is cheap; otherwise, at levels >= 0.79, the bound
    z_{(1+q)/2} sqrt(trace(A'A)), exact when the error lies along one direction and
    conservative otherwise (Szekely & Bakirov 2003), which costs one pass over A."""
    n, p = factor.shape
    if quantile_level >= _BOUND_FROM_LEVEL and min(n, p) ** 2 * max(n, p) > RISK_SPECTRUM_FLOPS:
        from scipy.stats import norm

        trace = float(np.einsum("ij,ij->", factor, factor))
        return float(norm.ppf(0.5 + quantile_level / 2) * np.sqrt(trace))
    return overall_error_quantile(quantile_level=quantile_level, normal_draws=normal_draws,
                                  eigenvalues=spectrum_of_rows(factor))


def _hc1(n_pairs, free):
    """HC1's factor n / (n - p) for p free coefficients fitted on n pairs."""
    return n_pairs / max(n_pairs - free, 1)


def _fit_surrogate(design, differences, delta, d, max_terms, rng, max_cv_terms=None):
    """The surrogate's fit, each output with the third-order terms chosen for it alone
    (``_select_third_order``): stacked games, such as the rows an explainer evaluates
    together, then give every output the values it would get on its own. Outputs that
    chose the same terms are fitted together. Returns phi, influence, variance scale."""
    n_pairs, k = differences.shape
    # One split into folds for every output, so an output's choice does not depend on
    # its position among the others.
    folds = rng.permutation(n_pairs) % CV_FOLDS
    chosen = _select_third_order(design, differences, delta, d, max_terms, folds,
                                 max_cv_terms)
    phi = np.empty((d, k))
    influence = OutputInfluence(k)
    scale = np.empty(k)
    groups = {}
    for j, (triples, _) in enumerate(chosen):
        groups.setdefault(tuple(triples), []).append(j)
    for triples, outputs in groups.items():
        terms = [(i,) for i in range(d)] + list(triples)
        features = odd_character_features(design.first, terms)
        phi[:, outputs], beta, group_influence = _odd_fit(
            features, design, differences[:, outputs], delta[outputs], terms, d)
        influence.set(outputs, group_influence)
        free = sum(len(t) % 2 for t in terms) - 1
        for column, j in enumerate(outputs):  # output by output: its bits, alone or not
            residuals = differences[:, j] - 2.0 * features @ beta[:, column]
            output_rss = np.sum(design.pair_weights * residuals**2)
            cv_loss = chosen[j][1]
            scale[j] = _hc1(n_pairs, free)
            if cv_loss is not None and output_rss > 0:
                scale[j] = max(scale[j], cv_loss / output_rss)
    return phi, influence, scale


def _first_order_residuals(first, weights, differences, delta, d, with_values=False):
    terms = [(j,) for j in range(d)]
    features = odd_character_features(first, terms)
    shell = _Design(first, weights)
    phi, _, _ = _odd_fit(features, shell, differences, delta, terms, d, influence=False)
    residuals = differences - features @ phi  # with order 1 only, 2 f_j = phi_j
    return (residuals, phi) if with_values else residuals


# Triples screened per output: every triple up to C(30, 3) = 4,060 (30 players: the games
# of benchmarks/results/accuracy*.md keep their full screen), else 64 per player, so a
# screen costs O(d * budget) instead of O(d^3 * budget) (d = 200: 12,800 triples instead of
# 1.3 million, one pass 137 s -> ~1 s).
SCREEN_ALL_TRIPLES = 4096
SCREENED_TRIPLES_PER_PLAYER = 64


def triple_pool_size(n_players):
    """Players whose triples the surrogate screens: all of them while C(d, 3) is within
    ``max(SCREEN_ALL_TRIPLES, 64 d)``, else the largest m with C(m, 3) within it."""
    limit = max(SCREEN_ALL_TRIPLES, SCREENED_TRIPLES_PER_PLAYER * n_players)
    m = min(n_players, 3)
    while m < n_players and comb(m + 1, 3) <= limit:
        m += 1
    return m


def _triple_pools(phi, pool_size):
    """Per output, the ``pool_size`` players of largest |first-order value| (sorted;
    ties by index), or None for all players. Interactions are looked for among the
    players with large main effects (the heredity principle of interaction screening,
    e.g. Hamada & Wu 1992), which keeps the screen within O(d) triples."""
    d, k = phi.shape
    if pool_size >= d:
        return [None] * k
    pools = []
    for j in range(k):
        top = np.argsort(-np.abs(phi[:, j]), kind="stable")[:pool_size]
        pools.append(tuple(int(i) for i in np.sort(top)))
    return pools


class _Design:
    """The two fields of a CoalitionDesign that ``_odd_fit`` reads, for a subset."""

    def __init__(self, first, pair_weights):
        self.first, self.pair_weights = first, pair_weights


CV_FOLDS = 3
# Most third-order characters the surrogate fits: the fit costs n_pairs * terms^2.
MAX_SURROGATE_TERMS = 600


def _select_third_order(design, differences, delta, d, max_terms, folds, max_cv_terms=None):
    """Third-order characters for each output of the surrogate: screened by their
    correlation with the first-order residuals, their number chosen by cross-validation
    over the pairs (``folds``: each pair's fold), including none, which is paired
    KernelSHAP, so the surrogate only grows where it predicts held-out pair differences
    better. Returns, per output, the triples and the chosen candidate's cross-validated
    residual sum of squares (None without CV)."""
    n_pairs, k = differences.shape
    pool_size = triple_pool_size(d)
    # Up to every triple while a few pairs remain for the residuals; CV picks the size.
    ceiling = max_terms if max_terms is not None else (
        MAX_SURROGATE_TERMS if max_cv_terms is None else max_cv_terms)
    # The largest candidate must still be identified on a training fold.
    n_train = n_pairs * (CV_FOLDS - 1) // CV_FOLDS
    ceiling = min(int(ceiling), comb(pool_size, 3), max(0, n_train - d - 4))
    if ceiling <= 0:
        return [([], None)] * k
    if max_terms is not None:
        candidates = [ceiling]
    else:
        candidates = sorted({0, *(max(1, ceiling // 2**j) for j in range(4))})
    first, weights = design.first, design.pair_weights
    residuals, phi = _first_order_residuals(first, weights, differences, delta, d,
                                            with_values=True)
    chosen = [None] * k
    groups = {}
    for j, pool in enumerate(_triple_pools(phi, pool_size)):
        groups.setdefault(pool, []).append(j)
    for pool, outputs in groups.items():
        picked = _select_in_pool(_TripleCharacters.of(first, pool), design,
                                 differences[:, outputs], delta[outputs], residuals[:, outputs],
                                 d, candidates, folds)
        for j, choice in zip(outputs, picked, strict=True):
            chosen[j] = choice
    return chosen


def _select_in_pool(characters, design, differences, delta, residuals, d, candidates,
                    folds):
    """``_select_third_order`` for the outputs sharing one pool of triples
    (``characters``); ``residuals`` are their first-order residuals on all pairs."""
    k = differences.shape[1]
    first, weights = design.first, design.pair_weights
    if len(candidates) > 1:
        losses = np.zeros((k, len(candidates)))
        for fold in range(CV_FOLDS):
            train, test = folds != fold, folds == fold
            # the first-order fit is the same for every output: all at once
            fold_residuals = _first_order_residuals(first[train], weights[train],
                                                    differences[train], delta, d)
            fitted, held_out = characters.rows(train), characters.rows(test)
            for j in range(k):
                ranked = _third_order_screen(fitted, weights[train], fold_residuals[:, j],
                                             max(candidates))
                losses[j] += _candidate_losses(
                    fitted, held_out, ranked, candidates, weights[train],
                    differences[train, j], weights[test], differences[test, j], delta[j])
        best_index = np.argmin(losses, axis=1)
        cv_losses = losses[np.arange(k), best_index]
    else:
        best_index, cv_losses = np.zeros(k, dtype=np.int64), [None] * k
    chosen = []
    for j in range(k):
        best = candidates[best_index[j]]
        loss = None if cv_losses[j] is None else float(cv_losses[j])
        if best == 0:
            chosen.append(([], loss))
            continue
        ranked = _third_order_screen(characters, weights, residuals[:, j], best)
        chosen.append(([tuple(int(i) for i in t) for t in characters.triples[ranked]], loss))
    return chosen


def _candidate_losses(fitted, held_out, ranked, candidates, weights, differences,
                      test_weights, test_differences, delta):
    """Held-out weighted squared error of the surrogate with the first ``m`` ranked
    triples, for each ``m`` in ``candidates``, fitted on one fold's training pairs.

    The candidates' terms are prefixes of one list, so one Cholesky factor L of the
    largest normal matrix H serves them all: H's leading blocks are factored by L's.
    With the constraint a'beta = delta (efficiency), beta = H^-1 (b - lambda a) where
    lambda = (a'H^-1 b - delta) / (a'H^-1 a); the forward solves u = L^-1 b and
    v = L^-1 a of the largest candidate contain every prefix's."""
    d = fitted.signs.shape[1]
    largest = max(candidates)
    features = 2.0 * np.hstack([fitted.signs, fitted.columns(ranked[:largest])])
    test_features = 2.0 * np.hstack([held_out.signs, held_out.columns(ranked[:largest])])
    weighted = features * weights[:, None]
    losses = np.empty(len(candidates))
    try:
        factor = cholesky(features.T @ weighted, lower=True, check_finite=False)
        u = solve_triangular(factor, weighted.T @ differences, lower=True, check_finite=False)
        v = solve_triangular(factor, np.full(features.shape[1], 2.0), lower=True,
                             check_finite=False)
        for c, m in enumerate(candidates):
            p = d + m
            multiplier = (v[:p] @ u[:p] - delta) / (v[:p] @ v[:p])
            beta = solve_triangular(factor[:p, :p], u[:p] - multiplier * v[:p], lower=True,
                                    trans="T", check_finite=False)
            predicted = test_features[:, :p] @ beta
            losses[c] = np.sum(test_weights * (test_differences - predicted) ** 2)
        if np.all(np.isfinite(losses)):
            return losses
    except LinAlgError:
        pass
    # A (numerically) singular system: each candidate's minimum-norm fit instead.
    terms = [(i,) for i in range(d)] + [tuple(t) for t in fitted.triples[ranked[:largest]]]
    for c, m in enumerate(candidates):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BudgetWarning)
            _, beta, _ = constrained_wls(features[:, :d + m], weights, differences[:, None],
                                         np.full(d + m, 2.0), np.array([delta]),
                                         term_readout(d, terms[:d + m], lambda size: 2.0 / size),
                                         influence=False)
        predicted = test_features[:, :d + m] @ beta[:, 0]
        losses[c] = np.sum(test_weights * (test_differences - predicted) ** 2)
    return losses


def _odd_fit(features, design, differences, delta, terms, d, influence=True):
    """Fit pair differences D = 2 sum_T f_T chi_T with sum_T 2 f_T = v(N) - v(∅); read
    off phi_j = sum_{T containing j} 2 f_T / |T|."""
    readout = term_readout(d, terms, lambda size: 2.0 / size)
    return constrained_wls(2.0 * features, design.pair_weights, differences,
                           2.0 * np.ones(len(terms)), delta, readout, influence=influence)


def _relabel(result, method):
    from dataclasses import replace

    return replace(result, method=method)


# -- what the rest of the library reads (see _records) -------------------------------
def _design_pairs(budget):
    return max((budget - 2) // 2, 1)


def _regression_cost(n_players, budget, n_outputs, *, terms=0, screened=0, cv_terms=0):
    """Memory and operations of a paired design of ``budget`` evaluations fitted with d
    first-order and ``terms`` further terms per output (the surrogate also screens
    ``screened`` triples and cross-validates up to ``cv_terms`` of them)."""
    d, n, k = n_players, _design_pairs(budget), n_outputs
    p = d + terms
    risk = min(min(n, d) ** 2 * max(n, d), RISK_SPECTRUM_FLOPS)
    # design masks, features, the reduced and weighted copies, the projected rows and
    # one output's influence rows
    memory = n * (2 * d + 8.0 * (4 * p + d))
    # Python's own work (design lists, factorisations' calls, per-output loops) counted as
    # operations at ~1.5e9 a second. Re-measured (issue 27, 2 cores under load, cheap
    # games of d = 20-100 at 10 d to 60 d evaluations, 1 and 16 outputs): the paired
    # regression took 7-8 ms a game plus 0.6-1.2 ms an output (the constants here are
    # 6.7 ms and 0.8 ms); the surrogate's screening and cross-validation 40-56 operations
    # per design pair and screened triple an output, whatever its 40-600 CV terms (the
    # earlier constants, 0.02 s a game and 0.008 s an output, and a CV cost in the
    # square of its width, overstated both 4-18x, so that "auto" gave cheap models
    # orderings where a regression was more accurate in the same time).
    flops = 1.0e7 + 3.0 * n * p * p + k * (1.2e6 + 6.0 * n * d + risk)
    if screened:
        cv_width = d + cv_terms
        flops += k * (3.0e6 + 60.0 * n * screened + 3.0 * n * cv_width)
        memory += 8.0 * n * min(screened, KEPT_CHARACTERS / max(n, 1))
    return MethodCost(memory_bytes=memory, flops=flops)


def surrogate_cost(n_players, budget, n_outputs, max_cv_terms=MAX_SURROGATE_TERMS):
    """The surrogate's cost when cross-validation may choose up to ``max_cv_terms``
    third-order characters (of its screened pool)."""
    d = n_players
    if d < 3:
        return _regression_cost(d, budget, n_outputs)
    pool = triple_pool_size(d)
    n_train = _design_pairs(budget) * (CV_FOLDS - 1) // CV_FOLDS
    cv_terms = max(0, min(max_cv_terms, comb(pool, 3), n_train - d - 4))
    return _regression_cost(d, budget, n_outputs, terms=cv_terms // 2,
                            screened=comb(pool, 3), cv_terms=cv_terms)


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
