"""RKHS-SHAP (Chau et al. 2022): the kernel mean embeddings of every feature subset, the
interventional RKHS game's table.

One module per backend (``_numpy``, the reference; ``_numba``; ``_numba_cuda``;
``_cupy``), each with every kernel of ``KERNELS`` under the same signature.
"""

KERNELS = ("rkhs_subset_embeddings",)
