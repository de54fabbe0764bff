"""Slow but obviously correct references for the fast paths."""

from __future__ import annotations

import itertools
import math

import numpy as np


def shapley_by_orderings(value_of_set, n_players):
    """Average marginal contributions over all d! orderings (d <= 7)."""
    phi = np.zeros(n_players)
    orders = list(itertools.permutations(range(n_players)))
    for order in orders:
        members = set()
        before = value_of_set(frozenset(members))
        for player in order:
            members.add(player)
            after = value_of_set(frozenset(members))
            phi[player] += after - before
            before = after
    return phi / len(orders)


def shapley_by_subsets(value_of_set, n_players):
    """The subset formula of §1.1 with exact integer weights."""
    phi = np.zeros(n_players)
    for i in range(n_players):
        others = [j for j in range(n_players) if j != i]
        for size in range(n_players):
            weight = (math.factorial(size) * math.factorial(n_players - size - 1)
                      / math.factorial(n_players))
            for subset in itertools.combinations(others, size):
                s = frozenset(subset)
                phi[i] += weight * (value_of_set(s | {i}) - value_of_set(s))
    return phi


def set_function(game):
    """Wrap a Game as a function of a frozenset (one coalition per call)."""

    def value(players):
        mask = np.zeros((1, game.n_players), dtype=bool)
        mask[0, list(players)] = True
        return float(np.asarray(game.values(mask)).reshape(-1)[0])

    return value


# A model with closed-form interventional Shapley values at any width: a linear part plus
# products of pairs and triples of features; each product's values come from its own 2-
# or 3-player game over the background.
def product_model(n_features, rng, n_pairs=None, n_triples=None):
    """(f, terms): f(X) = X a + sum_T c_T prod_{i in T} X_i over d pairs and d triples."""
    d = n_features
    linear = rng.normal(size=d)
    terms = [tuple(rng.choice(d, size=size, replace=False))
             for size, count in ((2, n_pairs or d), (3, n_triples or d))
             for _ in range(count)]
    coefficients = rng.normal(size=len(terms))

    def model(X):
        out = X @ linear
        for members, c in zip(terms, coefficients, strict=True):
            out = out + c * np.prod(X[:, list(members)], axis=1)
        return out

    return model, (linear, terms, coefficients)


def interventional_values(x, background, truth_of):
    """Exact interventional Shapley values of ``x`` for :func:`product_model`'s model."""
    linear, terms, coefficients = truth_of
    phi = linear * (x - background.mean(axis=0))
    for members, c in zip(terms, coefficients, strict=True):
        members = list(members)
        m = len(members)
        value = {}
        for inside in itertools.product((False, True), repeat=m):
            columns = np.where(inside, x[members][None, :], background[:, members])
            value[inside] = c * np.prod(columns, axis=1).mean()
        for t in range(m):
            for inside in value:
                if inside[t]:
                    continue
                s = sum(inside)
                weight = math.factorial(s) * math.factorial(m - s - 1) / math.factorial(m)
                added = tuple(True if u == t else inside[u] for u in range(m))
                phi[members[t]] += weight * (value[added] - value[inside])
    return phi
