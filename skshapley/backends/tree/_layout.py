"""Host-side layout of the GPU TreeSHAP kernels (as in GPUTreeShap, Mitchell, Frank & Holmes
2022, Sec. 3): paths packed into warps, and the device copy of a packed model.

Each path becomes a *group* of contiguous lanes: its root placeholder (feature -1, z = 1,
always satisfied) at rank 0, then its merged elements. Groups are packed into bins of 32
lanes (:func:`pack_paths`, BFD by default); a warp of the kernel handles one bin for a
block of rows. Paths with more than 31 distinct features cannot fit a warp and are
listed for the one-thread-per-(row, path) fallback kernel, never truncated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skshapley.backends.tree._numpy import LEGENDRE_NODES, LEGENDRE_WEIGHTS
from skshapley.backends.tree._packing import WARP_SIZE, pack_paths


@dataclass(frozen=True)
class WarpLayout:
    """Lane arrays sorted by (bin, path, feature), roots included.

    Attributes
    ----------
    bin_ptr : int64 (n_bins + 1,)
        Lanes of bin b are ``bin_ptr[b]:bin_ptr[b + 1]`` (at most 32).
    feature : int32 (n_lanes,)
        -1 on roots.
    lower, upper, zero_fraction : float64 (n_lanes,)
    missing_branch, missing_mode : uint8 (n_lanes,)
    path : int64 (n_lanes,)
        Path of the lane (indexes the IR's ``out_ptr``).
    group_start, group_length : int32 (n_lanes,)
        First lane (0..31, within the warp) and lane count of the lane's path.
    long_paths : int64
        Paths left to the fallback kernel (more than 31 distinct features).
    utilisation : float
    """

    bin_ptr: np.ndarray
    feature: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    zero_fraction: np.ndarray
    missing_branch: np.ndarray
    missing_mode: np.ndarray
    path: np.ndarray
    group_start: np.ndarray
    group_length: np.ndarray
    long_paths: np.ndarray
    utilisation: float

    @property
    def n_bins(self) -> int:
        return len(self.bin_ptr) - 1


def warp_layout(path_ptr, feature, lower, upper, missing_branch, missing_mode, zero_fraction,
                packing="bfd"):
    """Pack the IR's paths into warps; see :class:`WarpLayout`."""
    lengths = np.diff(path_ptr)
    fits = (lengths >= 1) & (lengths <= WARP_SIZE - 1)
    short = np.flatnonzero(fits)
    long_paths = np.flatnonzero(lengths > WARP_SIZE - 1)
    sizes = lengths[short] + 1
    packed = pack_paths(sizes, packing)
    order = np.lexsort((short, packed.bin_of_path))
    paths, bins, sizes = short[order], packed.bin_of_path[order], sizes[order]
    n_lanes = int(sizes.sum())
    group_first = np.r_[0, np.cumsum(sizes)[:-1]]  # first lane of each group, global
    bin_counts = np.bincount(bins, weights=sizes, minlength=packed.n_bins).astype(np.int64)
    bin_ptr = np.r_[0, np.cumsum(bin_counts)].astype(np.int64)
    lane_path = np.repeat(paths, sizes)
    rank = np.arange(n_lanes) - np.repeat(group_first, sizes)
    element = path_ptr[lane_path] + rank - 1  # rank 0 is the root
    root = rank == 0
    safe = np.where(root, 0, element)

    def take(values, root_value, dtype):
        if n_lanes == 0:
            return np.zeros(0, dtype)
        return np.where(root, root_value, np.asarray(values)[safe]).astype(dtype)

    return WarpLayout(
        bin_ptr=bin_ptr,
        feature=take(feature, -1, np.int32),
        lower=take(lower, -np.inf, np.float64),
        upper=take(upper, np.inf, np.float64),
        zero_fraction=take(zero_fraction, 1.0, np.float64),
        missing_branch=take(missing_branch, 1, np.uint8),
        missing_mode=take(missing_mode, 0, np.uint8),
        path=lane_path.astype(np.int64),
        group_start=(np.repeat(group_first, sizes) - bin_ptr[np.repeat(bins, sizes)]).astype(
            np.int32),
        group_length=np.repeat(sizes, sizes).astype(np.int32),
        long_paths=long_paths.astype(np.int64),
        utilisation=packed.utilisation,
    )


class LayoutCache:
    """Device arrays of the last few models, keyed by the identity of their path arrays.

    The cache holds a reference to the keyed arrays, so an id cannot be reused by a new
    array while its entry lives. Its owner is the caller of the GPU kernels (the tree
    API keeps one per backend); a kernel given none builds the layout for that call.

    Parameters
    ----------
    size : int, default=4
        Models kept.
    packing : str, default="bfd"
        How paths are packed into warps (``skshapley.tree.PACKINGS``).
    """

    def __init__(self, size=4, packing="bfd"):
        self.size = size
        self.packing = packing
        self.entries = []  # (key arrays, device dict)

    def get(self, xp, paths, packing=None):
        """The device arrays (``xp.asarray``) of ``paths`` (a ``PathArrays``) and of their
        warp layout."""
        packing = self.packing if packing is None else packing
        key = tuple(paths)
        for entry_key, device, entry_packing in self.entries:
            if entry_packing == packing and all(a is b for a, b in zip(entry_key, key,
                                                                       strict=True)):
                return device
        layout = warp_layout(paths.path_ptr, paths.feature, paths.lower, paths.upper,
                             paths.missing_branch, paths.missing_mode, paths.zero_fraction,
                             packing)
        to_device = xp.asarray
        device = {name: to_device(getattr(layout, name)) for name in (
            "bin_ptr", "feature", "lower", "upper", "zero_fraction", "missing_branch",
            "missing_mode", "path", "group_start", "group_length", "long_paths")}
        device.update(
            layout=layout, path_ptr=to_device(paths.path_ptr),
            ir_feature=to_device(paths.feature), ir_lower=to_device(paths.lower),
            ir_upper=to_device(paths.upper), ir_zero_fraction=to_device(paths.zero_fraction),
            ir_missing_branch=to_device(paths.missing_branch),
            ir_missing_mode=to_device(paths.missing_mode), out_ptr=to_device(paths.out_ptr),
            out_index=to_device(paths.out_index), out_value=to_device(paths.out_value),
            nodes=to_device(LEGENDRE_NODES), weights=to_device(LEGENDRE_WEIGHTS),
        )
        self.entries.insert(0, (key, device, packing))
        del self.entries[self.size:]
        return device
