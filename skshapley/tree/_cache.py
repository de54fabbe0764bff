"""What the tree kernels keep between calls, owned here by the tree API rather than by the
kernel modules, which only fill what they are handed: the walk's last background, and
the GPU backends' device copies of the paths (``layout_cache``).

The walk of few rows (``tree_interventional_walk``) keeps, per thread, the last
background it prepared (its index, the rows following each edge, its summed leaf
values): explaining one row at a time against the same background (a served model) then
pays for them once, not per call. A hit needs the same tree arrays (alive) and an equal
background; anything else replaces it.
"""

from __future__ import annotations

import threading

from skshapley.backends.tree import LayoutCache


class _LastBackground(threading.local):
    """One slot per thread: ``last`` is what the walk last prepared (None at first)."""

    last = None


_PREPARED = _LastBackground()


def walk_cache():
    """This thread's slot, passed to ``tree_interventional_walk`` as ``cache``."""
    return _PREPARED


def forget_background():
    """Drop this thread's kept background (the next walk prepares it anew)."""
    _PREPARED.last = None


# The GPU backends' device copies of the last few models' paths (a model explained chunk
# after chunk is copied once), one cache per backend: one library's device arrays are
# not another's.
_LAYOUTS = {}
_LAYOUTS_LOCK = threading.Lock()


def layout_cache(kernels):
    """The :class:`LayoutCache` of the backend whose kernel namespace is ``kernels``,
    passed to its path kernels as ``cache`` (the CPU kernels ignore it)."""
    name = getattr(kernels, "name", None)
    with _LAYOUTS_LOCK:
        if name not in _LAYOUTS:
            _LAYOUTS[name] = LayoutCache()
        return _LAYOUTS[name]
