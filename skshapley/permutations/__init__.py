"""Permutation samplers for Shapley estimation (Mitchell, Cooper, Frank & Holmes,
"Sampling permutations for Shapley value estimation", JMLR 2022)."""

from skshapley.permutations._base import PermutationSampler
from skshapley.permutations._hierarchy import HierarchicalOrderings
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
from skshapley.permutations._philox import Philox
from skshapley.permutations._quadrature import KernelHerding, SequentialBayesianQuadrature
from skshapley.permutations._sphere import (
    ArgsortSobol,
    Orthogonal,
    PermutohedronNormal,
    SobolSphere,
)
from skshapley.permutations._table import ALIASES, REPLICATED, SAMPLERS, build_sampler
from skshapley.permutations._uniformity import (
    UniformityTestResult,
    chi2_uniformity_test,
    mmd_uniformity_test,
)

__all__ = [
    "ALIASES",
    "REPLICATED",
    "SAMPLERS",
    "build_sampler",
    "PermutohedronNormal",
    "Antithetic",
    "ArgsortSobol",
    "KernelHerding",
    "MonteCarlo",
    "Orthogonal",
    "Philox",
    "SequentialBayesianQuadrature",
    "SobolSphere",
    "UniformityTestResult",
    "chi2_uniformity_test",
    "mmd_uniformity_test",
    "PermutationSampler",
    "discordant_pairs",
    "discrepancy",
    "kendall_kernel",
    "kernel_expectation",
    "mallows_expectation",
    "mallows_kernel",
    "precedence_bits",
    "spearman_kernel",
    "HierarchicalOrderings",
]
