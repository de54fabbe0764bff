"""The odd-Fourier surrogate's third-order terms: the triples screened among the players
with large first-order values, ranked by their correlation with the first-order fit's
residuals, and chosen by cross-validation (``method="surrogate"``, in the spirit of
OddSHAP)."""

from __future__ import annotations

import warnings
from math import comb

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky, solve_triangular

from skshapley.approximators._coalitions import combinations_array
from skshapley.approximators._regression_features import (
    OutputInfluence,
    _first_order_residuals,
    _hc1,
    _odd_fit,
    odd_character_features,
    term_readout,
)
from skshapley.approximators._wls import SingularDesign, constrained_wls
from skshapley.exceptions import BudgetWarning

# The pairs' products s_i s_j that score the third-order characters are kept whole up to
# this many entries (32 MB), else rebuilt a block of design pairs at a time when scored.
KEPT_PAIR_PRODUCTS = 2**22


class _TripleCharacters:
    """The third-order characters chi_T = s_i s_j s_k (s = +-1: a player's side) of some
    pairs' first sides, for every triple T of a pool of players (in ``combinations``
    order), scored without building them.

    A triple's weighted correlation sum_n s_i s_j s_k r_n is entry ((i, j), k) of
    P' (S * r), with P the products of the pool's pairs (n x C(m, 2)) and S the pool's
    signs (n x m): one matrix product per scoring. It does three times the arithmetic
    of summing each triple's own column, but reads n x C(m, 2) numbers instead of
    n x C(m, 3), in BLAS's cache-blocked loops (measured at the default budget, one
    row: d = 50, 30 players pooled, 0.19 s instead of 0.85 s summing the 4,060 triples'
    columns, which were rebuilt in chunks every round; d = 100, 0.38 s instead of 2.5 s)."""

    def __init__(self, signs, pool, triples, flat_index, pooled=None, products=None):
        self.signs, self.pool, self.triples = signs, pool, triples
        self._flat_index = flat_index  # triple (a, b, c) -> pair (a, b) x m + c
        # the pool's signs, taken once: every screening round scores through them
        self._pooled = signs[:, pool] if pooled is None else pooled
        self._products = products
        if products is None and signs.shape[0] * comb(len(pool), 2) <= KEPT_PAIR_PRODUCTS:
            self._products = _pair_products(self._pooled)

    @classmethod
    def of(cls, first, pool=None):
        """Every triple of players in ``pool`` (default: all players)."""
        pool = np.arange(first.shape[1]) if pool is None else np.asarray(pool, np.int64)
        m = len(pool)
        local = combinations_array(m, 3).reshape(-1, 3)
        pair_index = np.zeros((m, m), dtype=np.int64)
        pair_index[np.triu_indices(m, 1)] = np.arange(comb(m, 2))  # _pair_products' order
        flat_index = pair_index[local[:, 0], local[:, 1]] * m + local[:, 2]
        return cls(np.where(first, 1.0, -1.0), pool, pool[local], flat_index)

    def rows(self, mask):
        """The same characters for the pairs in ``mask``."""
        products = None if self._products is None else self._products[mask]
        return _TripleCharacters(self.signs[mask], self.pool, self.triples,
                                 self._flat_index, self._pooled[mask], products)

    def columns(self, index):
        t = self.triples[index]
        return self.signs[:, t[:, 0]] * self.signs[:, t[:, 1]] * self.signs[:, t[:, 2]]

    def correlations(self, weighted):
        """chi_T' weighted for every triple T."""
        pooled = self._pooled
        scaled = pooled * weighted[:, None]
        if self._products is not None:
            scores = self._products.T @ scaled
        else:
            n, m = scaled.shape
            scores = np.zeros((comb(m, 2), m))
            chunk = max(1, KEPT_PAIR_PRODUCTS // comb(m, 2))
            for start in range(0, n, chunk):
                rows = slice(start, min(start + chunk, n))
                scores += _pair_products(pooled[rows]).T @ scaled[rows]
        return scores.ravel()[self._flat_index]


def _pair_products(pooled):
    """s_i s_j of every pair of ``pooled``'s columns (i < j, ``combinations`` order)."""
    first, second = np.triu_indices(pooled.shape[1], 1)
    return pooled[:, first] * pooled[:, second]


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
        terms, features, fit = _full_rank_fit(design, differences[:, outputs],
                                              delta[outputs], d, list(triples))
        phi[:, outputs], beta, group_influence = fit
        influence.set(outputs, group_influence)
        free = sum(len(t) % 2 for t in terms) - 1
        for column, j in enumerate(outputs):  # output by output: its bits, alone or not
            residuals = differences[:, j] - 2.0 * features @ beta[:, column]
            output_rss = np.sum(design.pair_weights * residuals**2)
            # the cross-validated loss was of the chosen triples, not of fewer
            cv_loss = chosen[j][1] if len(terms) == d + len(triples) else None
            scale[j] = _hc1(n_pairs, free)
            if cv_loss is not None and output_rss > 0:
                scale[j] = max(scale[j], cv_loss / output_rss)
    return phi, influence, scale


def _full_rank_fit(design, differences, delta, d, triples):
    """``(terms, features, _odd_fit(...))`` with the first-order terms and ``triples``,
    or, where the design cannot identify them all, with the first half of the triples
    (the earlier-chosen ones), and so on down to none. The selection's ridge keeps
    every candidate solvable, but the final fit has none: at 100 evaluations and d = 10
    one seed in 60 chose 9 triples that a design of 49 pairs could not separate, and
    its minimum-norm solution had 8x the median error."""
    while True:
        terms = [(i,) for i in range(d)] + triples
        features = odd_character_features(design.first, terms)
        try:
            return terms, features, _odd_fit(features, design, differences, delta, terms,
                                              d, singular="raise" if triples else "warn")
        except SingularDesign:
            triples = triples[: len(triples) // 2]


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
