"""Regression estimators of Shapley values: paired KernelSHAP, leverage-score sampling,
k-additive KernelSHAP and an odd-Fourier surrogate (§9).

All of them evaluate v(∅), v(N) and a paired coalition design (``_coalitions``) in one
call of the game, fit a surrogate by the constrained weighted least squares of §9.1
(``_wls``) and read the Shapley values off it; efficiency holds to round-off. Standard
errors come from the sandwich variance with complementary pairs as blocks, stratified by
coalition size, without replacement (§9.4); enumerated sizes add no variance.

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

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from skshapley.approximators._coalitions import minimum_design_budget, paired_design
from skshapley.approximators._common import as_matrix, scalar_or_array, squeeze_outputs
from skshapley.approximators._exact import exact_shapley
from skshapley.approximators._result import ShapleyResult
from skshapley.approximators._risk import overall_error_quantile, small_sample_inflation
from skshapley.approximators._wls import constrained_wls, stratified_covariance
from skshapley.exceptions import BudgetWarning
from skshapley.utils import as_generator, check_budget

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
    return np.column_stack([np.prod(signs[:, list(t)], axis=1) for t in terms])


def _triple_scores(signs, triples, weighted, scale, n_rows):
    scores = np.empty(len(triples))
    chunk = max(1, 2**22 // max(n_rows, 1))
    for start in range(0, len(triples), chunk):
        t = triples[start : start + chunk]
        chars = signs[:, t[:, 0]] * signs[:, t[:, 1]] * signs[:, t[:, 2]]  # (n, c)
        scores[start : start + chunk] = ((chars.T @ weighted / scale) ** 2).sum(axis=1)
    return scores


SCREEN_ROUNDS = 8


def _third_order_screen(first, weights, residuals, n_keep, rounds=SCREEN_ROUNDS):
    """Rank ``n_keep`` triples by forward selection in ``rounds`` blocks: each block takes
    the characters most correlated (weighted, summed over outputs) with what the triples
    chosen so far leave of the first-order residuals. Re-fitting between blocks stops
    correlated copies of one interaction from crowding out the others (measured on
    breast_cancer, 30 players, 50 evaluations per player: 8 rounds give 8x lower MSE
    than a single screen, 4 rounds 6x, 16 no better than 8)."""
    d = first.shape[1]
    signs = np.where(first, 1.0, -1.0)
    triples = np.array(list(combinations(range(d), 3)), dtype=np.int64)
    root = np.sqrt(weights)[:, None]
    chosen, left = [], residuals
    per_round = max(1, -(-n_keep // rounds))
    while len(chosen) < n_keep:
        weighted = left * weights[:, None]
        scale = np.sqrt((left**2 * weights[:, None]).sum(axis=0)) + 1e-300
        scores = _triple_scores(signs, triples, weighted, scale, first.shape[0])
        scores[chosen] = -np.inf
        take = np.argsort(-scores, kind="stable")[: min(per_round, n_keep - len(chosen))]
        chosen.extend(int(j) for j in take)
        features = odd_character_features(first, [tuple(triples[j]) for j in chosen])
        scaled = features * root
        # Normal equations with a tiny ridge: screening needs the residuals, not exact
        # coefficients, and Cholesky is ~10x faster than an SVD least squares here.
        hessian = scaled.T @ scaled
        hessian[np.diag_indices_from(hessian)] += 1e-9 * np.trace(hessian) / len(chosen)
        coefficients = cho_solve(cho_factor(hessian, lower=True), scaled.T @ (residuals * root))
        left = residuals - features @ coefficients
    return [tuple(int(i) for i in triples[j]) for j in chosen]


# -- the estimator ---------------------------------------------------------------------
def _check_common(game, budget, quantile_level):
    budget = check_budget(budget)
    if not 0.0 < quantile_level < 1.0:
        raise ValueError(
            f"The 'quantile_level' parameter must be in (0, 1); got {quantile_level!r}."
        )
    return budget


def _too_small(method, budget, d):
    minimum = minimum_design_budget(d)
    return ValueError(
        f"budget={budget} is too small for method={method!r} with n_players={d}: the "
        f"regression needs v(∅), v(N) and every coalition of sizes 1 and {d - 1}, "
        f"{minimum} evaluations; increase budget to at least {minimum}."
    )


def regression_shapley(game, budget: int, *, method: str = "kernel", order: int = 2,
                       max_terms: int | None = None, allocation: str | None = None,
                       coalition_sampler="random",
                       quantile_level: float = 0.95, random_state=None) -> ShapleyResult:
    """Shapley values by a regression on a paired coalition design (§9).

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
    allocation : {"kernel", "leverage"}, optional
        How sampled evaluations are spread over coalition sizes; default "leverage" for
        "leverage" and "surrogate", else "kernel".
    coalition_sampler : "random", sampler name or PermutationSampler, default="random"
        Sampled coalitions uniform without replacement, or as prefixes of a permutation
        sampler's orderings (QMC designs).
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
    budget = _check_common(game, budget, quantile_level)
    if method not in REGRESSION_METHODS:
        raise ValueError(
            f"The 'method' parameter must be one of {list(REGRESSION_METHODS)}; got {method!r}."
        )
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(f"The 'order' parameter must be an integer >= 1; got {order!r}.")
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
                           coalition_sampler=coalition_sampler, rng=design_rng)
    start = game.n_evaluations
    endpoints = np.zeros((2, d), dtype=bool)
    endpoints[1] = True
    values = as_matrix(game.values(np.concatenate([endpoints, design.coalitions])))
    n_evaluations = game.n_evaluations - start
    empty, grand = values[0], values[1]
    delta = grand - empty
    phi, influence, terms, scale = fit_design(method, design, values[2:], empty, delta,
                                              order=order, max_terms=max_terms,
                                              rng=design_rng)

    sampled = design.blocks >= 0
    covariance = stratified_covariance(influence[sampled], design.blocks[sampled],
                                       design.stratum_sizes)
    covariance *= scale
    std_errors = np.sqrt(np.clip(np.diagonal(covariance, axis1=1, axis2=2), 0, None)).T
    n_draws = design.n_sampled_pairs
    inflation = small_sample_inflation(n_draws, quantile_level) if n_draws else 1.0
    normal = risk_rng.standard_normal((4096, d))
    error = np.array([overall_error_quantile(c, quantile_level, normal_draws=normal)
                      for c in covariance]) * inflation
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


def fit_design(method, design, values, empty, delta, *, order=2, max_terms=None, rng=None):
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
    influence : float64 (n_pairs, d, k)
        Each pair's contribution to the sandwich variance.
    terms : list of tuple
        The surrogate's terms.
    variance_scale : float
        Factor for the sandwich covariance: residuals of a fit with p free odd
        coefficients on n pairs are shrunk by about (n - p) / n (HC1 undoes it); when
        the surrogate's terms were chosen from the same data they are shrunk further,
        so it is at least the ratio of the cross-validated to the in-sample residual
        sum of squares.
    """
    d = design.first.shape[1]
    pairs = design.n_pairs
    side, other = values[:pairs], values[pairs:]

    if method == "kadd":
        terms = moebius_terms(d, min(order, d - 1))
        coalitions = design.coalitions
        features = moebius_features(coalitions, terms)
        cv_loss = None
        readout = term_readout(d, terms, lambda size: 1.0 / size)
        phi, _, influence = constrained_wls(
            features, design.weights, np.concatenate([side, other]) - empty,
            np.ones(len(terms)), delta, readout)
        influence = influence[:pairs] + influence[pairs:]  # one block per pair
    else:
        differences = side - other  # twice the odd part at each pair's first side
        terms, cv_loss = [(j,) for j in range(d)], None
        if method == "surrogate" and d >= 3:
            triples, cv_loss = _select_third_order(design, differences, delta, d,
                                                   max_terms, rng)
            terms = terms + triples
        features = odd_character_features(design.first, terms)
        phi, beta, influence = _odd_fit(features, design, differences, delta, terms, d)
        if cv_loss is not None:
            fitted = 2.0 * features @ beta
            rss = np.sum(design.pair_weights[:, None] * (differences - fitted) ** 2)
    # Only odd terms matter: pairing makes the even ones of "kadd" orthogonal to phi.
    free = sum(len(t) % 2 for t in terms) - 1
    scale = design.n_pairs / max(design.n_pairs - free, 1)
    if method != "kadd" and cv_loss is not None and rss > 0:
        scale = max(scale, cv_loss / rss)
    return phi, influence, terms, scale


def _first_order_residuals(first, weights, differences, delta, d):
    terms = [(j,) for j in range(d)]
    features = odd_character_features(first, terms)
    shell = _Design(first, weights)
    phi, _, _ = _odd_fit(features, shell, differences, delta, terms, d, influence=False)
    return differences - features @ phi  # with order 1 only, 2 f_j = phi_j


class _Design:
    """The two fields of a CoalitionDesign that ``_odd_fit`` reads, for a subset."""

    def __init__(self, first, pair_weights):
        self.first, self.pair_weights = first, pair_weights


CV_FOLDS = 3
# Most third-order characters the surrogate fits: the fit costs n_pairs * terms^2.
MAX_SURROGATE_TERMS = 600


def _select_third_order(design, differences, delta, d, max_terms, rng):
    """Third-order characters for the surrogate: screened by their correlation with the
    first-order residuals, their number chosen by cross-validation over the pairs
    (including none, which is paired KernelSHAP), so the surrogate only grows where it
    predicts held-out pair differences better. Returns the triples and the chosen
    candidate's cross-validated residual sum of squares (None without CV)."""
    n_pairs = design.n_pairs
    # Up to every triple while a few pairs remain for the residuals; CV picks the size.
    ceiling = max_terms if max_terms is not None else MAX_SURROGATE_TERMS
    # The largest candidate must still be identified on a training fold.
    n_train = n_pairs * (CV_FOLDS - 1) // CV_FOLDS
    ceiling = min(int(ceiling), comb(d, 3), max(0, n_train - d - 4))
    if ceiling <= 0:
        return [], None
    if max_terms is not None:
        candidates = [ceiling]
    else:
        candidates = sorted({0, *(max(1, ceiling // 2**k) for k in range(4))})
    first, weights = design.first, design.pair_weights
    if len(candidates) > 1:
        folds = rng.permutation(n_pairs) % CV_FOLDS
        losses = np.zeros(len(candidates))
        for fold in range(CV_FOLDS):
            train, test = folds != fold, folds == fold
            residuals = _first_order_residuals(first[train], weights[train],
                                               differences[train], delta, d)
            ranked = _third_order_screen(first[train], weights[train], residuals,
                                         max(candidates))
            for c, n_terms in enumerate(candidates):
                terms = [(j,) for j in range(d)] + ranked[:n_terms]
                features = odd_character_features(first[train], terms)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", BudgetWarning)
                    _, beta, _ = _odd_fit(features, _Design(first[train], weights[train]),
                                          differences[train], delta, terms, d,
                                          influence=False)
                predicted = 2.0 * odd_character_features(first[test], terms) @ beta
                losses[c] += np.sum(weights[test, None] * (differences[test] - predicted) ** 2)
        best_index = int(np.argmin(losses))
        best, cv_loss = candidates[best_index], float(losses[best_index])
    else:
        best, cv_loss = candidates[0], None
    if best == 0:
        return [], cv_loss
    residuals = _first_order_residuals(first, weights, differences, delta, d)
    return _third_order_screen(first, weights, residuals, best), cv_loss


def _odd_fit(features, design, differences, delta, terms, d, influence=True):
    """Fit pair differences D = 2 sum_T f_T chi_T with sum_T 2 f_T = v(N) - v(∅); read
    off phi_j = sum_{T containing j} 2 f_T / |T|."""
    readout = term_readout(d, terms, lambda size: 2.0 / size)
    return constrained_wls(2.0 * features, design.pair_weights, differences,
                           2.0 * np.ones(len(terms)), delta, readout, influence=influence)


def _relabel(result, method):
    from dataclasses import replace

    return replace(result, method=method)
