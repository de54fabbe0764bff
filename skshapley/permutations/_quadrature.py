"""Kernel herding and sequential Bayesian quadrature over orderings (Mitchell, Cooper, Frank
& Holmes, JMLR 2022, Sec. 3.1-3.2: Eqs. 6-7 and Algorithm 1)."""

from __future__ import annotations

import math

import numpy as np

from skshapley.permutations._base import PermutationSampler
from skshapley.permutations._kernels import (
    DEFAULT_LAMBDA,
    discordant_pairs_from_bits,
    n_pairs,
    precedence_bits,
)
from skshapley.permutations._mc import _uniform_orders

# Appendix B of Mitchell et al. 2022: 5-10 too few, 25 and 50 hardly differ.
DEFAULT_CANDIDATES = 25


def _check_candidates(n_candidates):
    if not isinstance(n_candidates, int) or isinstance(n_candidates, bool) or n_candidates < 1:
        raise ValueError(
            f"The 'n_candidates' parameter must be a positive integer; got {n_candidates!r}."
        )
    return n_candidates


class _GreedyMallowsSampler(PermutationSampler):
    """Shared state of the greedy samplers: selected orderings and their precedence bits."""

    block_size = None  # each ordering depends on all earlier ones

    def __init__(self, n_players, *, lam=DEFAULT_LAMBDA, n_candidates=DEFAULT_CANDIDATES,
                 rng=None):
        super().__init__(n_players, rng=rng)
        self.lam = float(lam)
        self.n_candidates = _check_candidates(n_candidates)
        self._reset_state()

    def _reset_state(self):
        words = max(1, -(-n_pairs(self.n_players) // 64))
        self._selected = np.empty((0, self.n_players), dtype=np.int64)
        self._bits = np.empty((0, words), dtype=np.uint64)

    def _kernel_to_selected(self, candidate_bits):
        """Mallows kernel (n_candidates, m) between candidates and the selected orderings."""
        if self._bits.shape[0] == 0:
            return np.zeros((candidate_bits.shape[0], 0))
        n_dis = discordant_pairs_from_bits(candidate_bits, self._bits)
        pairs = n_pairs(self.n_players)
        return np.exp(-self.lam * n_dis / pairs) if pairs else np.ones(n_dis.shape)

    def _append(self, order, bits):
        self._selected = np.vstack([self._selected, order[None, :]])
        self._bits = np.vstack([self._bits, bits[None, :]])


class KernelHerding(_GreedyMallowsSampler):
    """Kernel herding with the Mallows kernel: each new ordering is the candidate least
    similar, in total, to the orderings already chosen (Mitchell et al. 2022, Sec. 3.1,
    Eq. 6).

    ``n_candidates`` fresh uniform orderings compete at each step; ties go to the first
    drawn. The stream is sequential, so any prefix is the run of that length.

    Parameters
    ----------
    n_players : int
    lam : float, default=4.0
        Mallows bandwidth (λ = 4 as in the paper's Table 4).
    n_candidates : int, default=25
    rng : None, int or Generator

    Examples
    --------
    >>> from skshapley.permutations import KernelHerding
    >>> KernelHerding(6, rng=0).random(4).shape
    (4, 6)
    """

    def _random(self, n):
        rows = np.empty((n, self.n_players), dtype=np.int64)
        for k in range(n):
            candidates = _uniform_orders(self.rng, self.n_candidates, self.n_players)
            bits = precedence_bits(candidates)
            scores = self._kernel_to_selected(bits).sum(axis=1)
            best = int(np.argmin(scores))  # first candidate on ties (step 1: all equal)
            self._append(candidates[best], bits[best])
            rows[k] = candidates[best]
        return rows


class SequentialBayesianQuadrature(_GreedyMallowsSampler):
    """Sequential Bayesian quadrature with the Mallows kernel (Mitchell et al. 2022,
    Sec. 3.2, Algorithm 1).

    Each step keeps the candidate that most increases 1^T K^{-1} 1 (the same as most
    reducing the posterior variance, since the kernel mean is constant), through a
    Cholesky factor updated in O(m^2) per candidate. :attr:`weights` are
    K^{-1} 1 / (1^T K^{-1} 1) for the rows drawn so far: they sum to one, so efficiency
    holds, and they change with n.

    Parameters
    ----------
    n_players : int
    lam : float, default=4.0
    n_candidates : int, default=25
    rng : None, int or Generator

    Examples
    --------
    >>> from skshapley.permutations import SequentialBayesianQuadrature
    >>> sampler = SequentialBayesianQuadrature(5, rng=0)
    >>> orders = sampler.random(6)
    >>> round(float(sampler.weights.sum()), 12)
    1.0
    """

    is_weighted = True

    _MIN_SCHUR = 1e-12
    _MAX_ROUNDS = 100

    def _reset_state(self):
        super()._reset_state()
        self._cholesky = np.empty((0, 0))
        self._inverse_ones = np.empty(0)

    @property
    def weights(self):
        if self._inverse_ones.size == 0:
            return None
        return self._inverse_ones / self._inverse_ones.sum()

    def _random(self, n):
        d = self.n_players
        if self.num_generated + n > math.factorial(min(d, 20)) and d <= 20:
            raise ValueError(
                "SequentialBayesianQuadrature draws distinct orderings: "
                f"n={self.num_generated + n} "
                f"exceeds d! = {math.factorial(d)} for n_players={d}; enumerate exactly "
                "(method='exact') instead."
            )
        rows = np.empty((n, d), dtype=np.int64)
        for k in range(n):
            rows[k] = self._step()
        return rows

    def _step(self):
        from scipy.linalg import solve_triangular

        m = self._bits.shape[0]
        for _ in range(self._MAX_ROUNDS):
            candidates = _uniform_orders(self.rng, self.n_candidates, self.n_players)
            bits = precedence_bits(candidates)
            kernel = self._kernel_to_selected(bits)  # (T, m), K(x, x) = 1
            if m:
                u = solve_triangular(self._cholesky, kernel.T, lower=True).T  # (T, m)
                schur = 1.0 - np.einsum("ij,ij->i", u, u)
                gain_numerator = (1.0 - kernel @ self._inverse_ones) ** 2
            else:
                u = np.zeros((self.n_candidates, 0))
                schur = np.ones(self.n_candidates)
                gain_numerator = np.ones(self.n_candidates)
            valid = schur > self._MIN_SCHUR  # a repeat of a selected ordering is singular
            if valid.any():
                gain = np.where(valid, gain_numerator / np.where(valid, schur, 1.0), -np.inf)
                best = int(np.argmax(gain))
                self._extend(u[best], schur[best], kernel[best])
                self._append(candidates[best], bits[best])
                return candidates[best]
        raise RuntimeError(
            f"SequentialBayesianQuadrature found no new ordering in {self._MAX_ROUNDS} rounds "
            f"of {self.n_candidates} candidates."
        )

    def _extend(self, u, schur, kernel_row):
        """Append a point to the Cholesky factor L of K and update a = K^{-1} 1."""
        m = self._cholesky.shape[0]
        root = np.sqrt(schur)
        cholesky = np.zeros((m + 1, m + 1))
        cholesky[:m, :m] = self._cholesky
        cholesky[m, :m] = u
        cholesky[m, m] = root
        self._cholesky = cholesky
        # Block inverse: with c = 1 - k^T a (the new point's residual), the new a is
        # (a - (c / s) K^{-1} k, c / s).
        from scipy.linalg import cho_solve

        if m:
            k_solved = cho_solve((self._cholesky[:m, :m], True), kernel_row)
            residual = 1.0 - kernel_row @ self._inverse_ones
            self._inverse_ones = np.append(self._inverse_ones - residual / schur * k_solved,
                                           residual / schur)
        else:
            self._inverse_ones = np.array([1.0])
