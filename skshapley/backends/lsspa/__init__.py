"""LS-SPA (Bell, Devanathan & Boyd 2024): the lifts of chains of features on the reduced
least-squares problem, by QR or by Cholesky factors of each permuted problem, and the
test-residual drop of every subset of features.

One module per backend (``_numpy``, the reference; ``_numba``; ``_numba_cuda``;
``_cupy``), each with every kernel of ``KERNELS`` under the same signature.
"""

KERNELS = ("lsspa_chain_lifts_qr", "lsspa_chain_lifts_cholesky", "lsspa_subset_gains")
