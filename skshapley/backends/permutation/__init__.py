"""Orderings of the players: counter-based orderings (the Philox bijective shuffle), and
the pair-precedence bits and discordant pairs of the Kendall and Mallows kernels over
orderings.

One module per backend (``_numpy``, the reference; ``_numba``; ``_numba_cuda``;
``_cupy``), each with every kernel of ``KERNELS`` under the same signature.
"""

KERNELS = ("precedence_bits", "discordant_pairs", "philox_orders")
