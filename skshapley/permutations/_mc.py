"""Monte Carlo and antithetic permutation samplers (Mitchell, Cooper, Frank & Holmes 2022,
Sec. 2.3-2.4)."""

from __future__ import annotations

import numpy as np

from skshapley.permutations._base import PermutationSampler


def _uniform_orders(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    # argsort of i.i.d. uniforms gives uniform orderings in one vectorised call
    # (ties have probability zero in float64).
    return np.argsort(rng.random((n, d)), axis=1, kind="stable").astype(np.int64)


class MonteCarlo(PermutationSampler):
    """Independent uniform orderings.

    Examples
    --------
    >>> from skshapley.permutations import MonteCarlo
    >>> orders = MonteCarlo(4, rng=0).random(3)
    >>> sorted(orders[0].tolist())
    [0, 1, 2, 3]
    """

    def _random(self, n):
        return _uniform_orders(self.rng, n, self.n_players)


class Antithetic(PermutationSampler):
    """Pairs (pi, reversed pi) with pi uniform, interleaved pi1, rev pi1, pi2, ...
    (Mitchell et al. 2022, Sec. 2.4).

    Each row is marginally uniform, so estimates stay unbiased, and a player's
    contributions in pi and its reverse are negatively correlated. Even prefixes of the
    stream are whole pairs; an odd request ends on a forward member whose reverse comes
    first in the next call.

    Examples
    --------
    >>> from skshapley.permutations import Antithetic
    >>> orders = Antithetic(3, rng=0).random(2)
    >>> bool((orders[1] == orders[0][::-1]).all())
    True
    """

    block_size = 2
    unit_size = 2

    def __init__(self, n_players, *, rng=None):
        super().__init__(n_players, rng=rng)
        self._pending = None

    def _reset_state(self):
        self._pending = None

    def _forward(self, n_pairs):
        """The first members of ``n_pairs`` pairs (uniform orderings)."""
        return _uniform_orders(self.rng, n_pairs, self.n_players)

    def _random(self, n):
        rows = []
        if n and self._pending is not None:
            rows.append(self._pending[None, :])
            self._pending = None
            n -= 1
        n_pairs = (n + 1) // 2
        if n_pairs:
            forward = self._forward(n_pairs)
            pairs = np.empty((2 * n_pairs, self.n_players), dtype=np.int64)
            pairs[0::2] = forward
            pairs[1::2] = forward[:, ::-1]
            if n % 2:
                self._pending = pairs[-1].copy()
                pairs = pairs[:-1]
            rows.append(pairs)
        if not rows:
            return np.empty((0, self.n_players), dtype=np.int64)
        return np.concatenate(rows, axis=0)
