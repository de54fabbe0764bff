"""Counter-based orderings: ordering j is a pure function of (seed, j) (the bijective
shuffle of Mitchell, Stokes, Frank and Holmes, "Bandwidth-Optimal Random Shuffling for
GPUs", 2022, Sec. 3-4)."""

from __future__ import annotations

import numpy as np

from skshapley.backends import get_backend
from skshapley.permutations._base import PermutationSampler


class Philox(PermutationSampler):
    """Uniform orderings from a keyed 24-round Feistel (VariablePhilox) bijection of a
    padded domain [0, 2^b), compacted to the values below d.

    Ordering j depends only on the sampler's seed and j, so orderings can be made in any
    order and in parallel, bit-identically on every backend, and :meth:`fast_forward` is
    O(1). The round keys of ordering j are SplitMix64 outputs 24 j .. 24 j + 23.

    Examples
    --------
    >>> from skshapley.permutations import Philox
    >>> sampler = Philox(5, rng=0)
    >>> first = sampler.random(3)
    >>> bool((sampler.reset().fast_forward(2).random(1)[0] == first[2]).all())
    True
    """

    def __init__(self, n_players, *, rng=None):
        super().__init__(n_players, rng=rng)
        self.seed = int(self.rng.integers(np.iinfo(np.uint64).max, dtype=np.uint64,
                                          endpoint=True))

    def _random(self, n):
        out = np.empty((n, self.n_players), dtype=np.int64)
        return get_backend().philox_orders(self.seed, self.num_generated, out)

    def fast_forward(self, n):
        """Skip ``n`` orderings in O(1)."""
        self.num_generated += int(n)
        return self
