"""The feature maps and fits the regression estimators share: Moebius terms (k-additive
KernelSHAP), odd Fourier characters chi_T(S) = prod_{i in T} (+1 if i in S else -1) and
the constrained weighted least squares on complementary pair differences that reads the
Shapley values off them (see ``_regression``), with each pair's influence for the
sandwich variance."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from skshapley.approximators._wls import constrained_wls


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


def _hc1(n_pairs, free):
    """HC1's factor n / (n - p) for p free coefficients fitted on n pairs."""
    return n_pairs / max(n_pairs - free, 1)


def _first_order_residuals(first, weights, differences, delta, d, with_values=False):
    terms = [(j,) for j in range(d)]
    features = odd_character_features(first, terms)
    shell = _Design(first, weights)
    phi, _, _ = _odd_fit(features, shell, differences, delta, terms, d, influence=False)
    residuals = differences - features @ phi  # with order 1 only, 2 f_j = phi_j
    return (residuals, phi) if with_values else residuals


class _Design:
    """The two fields of a CoalitionDesign that ``_odd_fit`` reads, for a subset."""

    def __init__(self, first, pair_weights):
        self.first, self.pair_weights = first, pair_weights


def _odd_fit(features, design, differences, delta, terms, d, influence=True,
             singular="warn"):
    """Fit pair differences D = 2 sum_T f_T chi_T with sum_T 2 f_T = v(N) - v(∅); read
    off phi_j = sum_{T containing j} 2 f_T / |T| (``singular``: as ``constrained_wls``)."""
    readout = term_readout(d, terms, lambda size: 2.0 / size)
    return constrained_wls(2.0 * features, design.pair_weights, differences,
                           2.0 * np.ones(len(terms)), delta, readout, influence=influence,
                           singular=singular)
