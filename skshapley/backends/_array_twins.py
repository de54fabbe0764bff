"""The model-agnostic kernels written once against an array library, all domains in one
class.

:class:`ArrayKernels` gathers the array twins of the domains (``masking``,
``permutation``, ``sketch``, ``lsspa``, ``rkhs``; each ``<domain>/_cupy.py``): whole-array
operations of the NumPy API subset that CuPy implements (broadcasting, fancy indexing,
boolean masks, reductions along an axis, batched ``linalg``). Bound to CuPy they are the
CuPy backend: each kernel is a handful of device-wide launches instead of a loop over
rows, and the wrappers keep results on the device when ``out`` is a CuPy array (no host
round trip), or copy them into a host ``out``. Bound to NumPy they run anywhere, which is
how the parity suite checks the same code on a machine without a GPU.

Work arrays are bounded in slices of
:data:`~skshapley.backends._array_common.SLICE_ELEMENTS` elements so a large call does not
exhaust device memory.
"""

from __future__ import annotations

from skshapley.backends import lsspa, masking, permutation, rkhs, sketch
from skshapley.backends.lsspa._cupy import LsspaArrays
from skshapley.backends.masking._cupy import MaskingArrays
from skshapley.backends.permutation._cupy import PermutationArrays
from skshapley.backends.rkhs._cupy import RkhsArrays
from skshapley.backends.sketch._cupy import SketchArrays


class ArrayKernels(MaskingArrays, PermutationArrays, SketchArrays, LsspaArrays, RkhsArrays):
    """Model-agnostic kernels on the array library ``xp`` (CuPy, or NumPy for tests).

    Every method has the signature of the NumPy twin of the same name (the domains'
    ``_numpy`` modules); inputs may be host or ``xp`` arrays. The passes over the data of
    Philox orderings and moment sketches are methods of their own (``_philox_images``,
    ``_moment_*``) that the CuPy backend replaces by fused kernels.

    Parameters
    ----------
    xp : module
        ``cupy`` or ``numpy``.

    Examples
    --------
    >>> import numpy as np
    >>> kernels = ArrayKernels(np)
    >>> kernels.prefix_coalitions(np.array([[2, 0, 1]]), np.empty((1, 2, 3), bool))[0]
    array([[False, False,  True],
           [ True, False,  True]])
    """

    NAMES = (*masking.KERNELS, *permutation.KERNELS, *sketch.KERNELS, *lsspa.KERNELS,
             *rkhs.KERNELS)
