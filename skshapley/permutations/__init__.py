"""Permutation samplers for Shapley estimation (DESIGN.md §4.3, ALGORITHMS.md §2)."""

from skshapley.permutations._base import PermutationSampler
from skshapley.permutations._kernels import (
    discordant_pairs,
    discrepancy,
    kendall_kernel,
    kernel_expectation,
    mallows_expectation,
    mallows_kernel,
    precedence_bits,
    spearman_kernel,
)
from skshapley.permutations._mc import Antithetic, MonteCarlo

SAMPLERS = {"mc": MonteCarlo, "antithetic": Antithetic}

__all__ = [
    "SAMPLERS",
    "Antithetic",
    "MonteCarlo",
    "PermutationSampler",
    "discordant_pairs",
    "discrepancy",
    "kendall_kernel",
    "kernel_expectation",
    "mallows_expectation",
    "mallows_kernel",
    "precedence_bits",
    "spearman_kernel",
]
