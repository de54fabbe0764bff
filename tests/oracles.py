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
