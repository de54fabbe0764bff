"""Coalitions and the values on them: the masked model inputs of interventional games, the
prefix coalitions of orderings, the marginal contributions along orderings, and exact
Shapley values from the values of every coalition.

One module per backend (``_numpy``, the reference; ``_numba``; ``_numba_cuda``;
``_cupy``), each with every kernel of ``KERNELS`` under the same signature.
"""

KERNELS = (
    "assemble_masked_batch",
    "prefix_coalitions",
    "accumulate_permutation_marginals",
    "exact_shapley_from_values",
)
