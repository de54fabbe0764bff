"""What the CuPy and numba.cuda backends share: launch geometry."""

from __future__ import annotations

THREADS_PER_BLOCK = 256  # 8 warps, as GPUTreeShap's reference code
ROWS_PER_WARP = 1024  # rows handled by one warp for plain SHAP values (GPUTreeShap's value)
