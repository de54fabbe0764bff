"""CuPy kernel of RKHS-SHAP: :class:`RkhsArrays`, the NumPy twin's body
(:func:`~skshapley.backends.rkhs._numpy.subset_embeddings_into`) on CuPy. Bound to NumPy
it runs anywhere (``ArrayKernels`` of ``skshapley.backends._array_twins``), which is how
the parity suite checks it without a GPU.
"""

from __future__ import annotations

from skshapley.backends._array_common import ArrayBase
from skshapley.backends._cupy_runtime import on_cupy
from skshapley.backends.rkhs import _numpy


class RkhsArrays(ArrayBase):
    """The RKHS-SHAP kernel on the array library ``xp``, with the signature of the NumPy
    twin."""

    def rkhs_subset_embeddings(self, training, background, length_scale, laplace, out):
        xp = self.xp
        result = xp.empty(out.shape, dtype=xp.float64)
        _numpy.subset_embeddings_into(xp, self._on(training, dtype=xp.float64),
                                      self._on(background, dtype=xp.float64),
                                      self._on(length_scale, dtype=xp.float64), laplace,
                                      result)
        return self._store(result, out)


rkhs_subset_embeddings = on_cupy(RkhsArrays, "rkhs_subset_embeddings")
