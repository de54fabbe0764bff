"""Permutation samplers for Shapley estimation (DESIGN.md §4.3, ALGORITHMS.md §2)."""

from skshapley.permutations._base import PermutationSampler
from skshapley.permutations._mc import Antithetic, MonteCarlo

SAMPLERS = {"mc": MonteCarlo, "antithetic": Antithetic}

__all__ = ["SAMPLERS", "Antithetic", "MonteCarlo", "PermutationSampler"]
