"""What the CuPy and numba.cuda backends share: launch geometry, the device copy of a
packed model (cached per model), and stubs for kernels a GPU backend does not have."""

from __future__ import annotations

from skshapley.backends._gpu_layout import warp_layout
from skshapley.backends._tree_numpy import LEGENDRE_NODES, LEGENDRE_WEIGHTS
from skshapley.exceptions import BackendUnavailableError

THREADS_PER_BLOCK = 256  # 8 warps, as GPUTreeShap's reference code
ROWS_PER_WARP = 1024  # rows handled by one warp for plain SHAP values (GPUTreeShap's value)


class LayoutCache:
    """Device arrays of the last few models, keyed by the identity of their IR arrays.

    The cache holds a reference to the keyed arrays, so an id cannot be reused by a new
    array while its entry lives.
    """

    def __init__(self, size=4):
        self.size = size
        self.entries = []  # (key arrays, device dict)

    def get(self, xp, path_ptr, feature, lower, upper, missing_branch, missing_mode,
            zero_fraction, out_ptr, out_index, out_value, packing="bfd"):
        key = (path_ptr, feature, lower, upper, missing_branch, missing_mode, zero_fraction,
               out_ptr, out_index, out_value)
        for entry_key, device, entry_packing in self.entries:
            if entry_packing == packing and all(a is b for a, b in zip(entry_key, key,
                                                                       strict=True)):
                return device
        layout = warp_layout(path_ptr, feature, lower, upper, missing_branch, missing_mode,
                             zero_fraction, packing)
        to_device = xp.asarray
        device = {name: to_device(getattr(layout, name)) for name in (
            "bin_ptr", "feature", "lower", "upper", "zero_fraction", "missing_branch",
            "missing_mode", "path", "group_start", "group_length", "long_paths")}
        device.update(
            layout=layout, path_ptr=to_device(path_ptr), ir_feature=to_device(feature),
            ir_lower=to_device(lower), ir_upper=to_device(upper),
            ir_zero_fraction=to_device(zero_fraction),
            ir_missing_branch=to_device(missing_branch),
            ir_missing_mode=to_device(missing_mode), out_ptr=to_device(out_ptr),
            out_index=to_device(out_index), out_value=to_device(out_value),
            nodes=to_device(LEGENDRE_NODES), weights=to_device(LEGENDRE_WEIGHTS),
        )
        self.entries.insert(0, (key, device, packing))
        del self.entries[self.size:]
        return device


def missing_kernel(backend, name):
    """A kernel slot a GPU backend does not fill yet: calling it says so."""

    def kernel(*args, **kwargs):
        raise BackendUnavailableError(
            f"Backend {backend!r} has no {name!r} kernel yet; use backend='numba' for it."
        )

    kernel.__name__ = name
    kernel.is_missing = True  # lets policies skip a backend without calling the stub
    return kernel
