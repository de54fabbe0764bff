"""A NumPy emulator of the GPU warp kernel's lane program (§8.2.4, §8.7 "Testing without a
GPU"): 32 lanes as arrays, ``shfl(x, s) = x[s]``, ``shfl_up`` returning the lane's own
value on the group's first lane (the kernel never uses it there). It runs on the real
packed layout, so it checks packing, group bookkeeping and the shuffle formulas."""

import numpy as np

from skshapley.backends.tree._layout import warp_layout
from skshapley.backends.tree._numpy import elements_satisfied


def _satisfied(x, layout, lanes):
    # padding lanes (feature -1) are always satisfied; real ones as the NumPy twin says
    f = layout.feature[lanes]
    o = np.ones(len(lanes))
    real = lanes[f >= 0]
    o[f >= 0] = elements_satisfied(x[layout.feature[real]], layout.lower[real],
                                   layout.upper[real], layout.missing_branch[real],
                                   layout.missing_mode[real])
    return o


def emulate_warp_shap(ensemble, X, packing="bfd"):
    X = ensemble.prepare(X)
    layout = warp_layout(ensemble.path_ptr, ensemble.feature, ensemble.lower, ensemble.upper,
                         ensemble.missing_branch, ensemble.missing_mode,
                         ensemble.zero_fraction, packing)
    assert len(layout.long_paths) == 0
    out = np.zeros((X.shape[0], ensemble.n_outputs, ensemble.n_features))
    for b in range(layout.n_bins):
        lanes = np.arange(layout.bin_ptr[b], layout.bin_ptr[b + 1])
        n = len(lanes)
        assert n <= 32
        start = layout.group_start[lanes]
        length = layout.group_length[lanes]
        rank = np.arange(n) - start
        z = layout.zero_fraction[lanes]
        for r in range(X.shape[0]):
            o = _satisfied(X[r], layout, lanes)
            w = (rank == 0).astype(float)
            for ud in range(1, length.max()):
                active = ud < length  # group-uniform trip counts, predicated per group
                src = start + ud
                z_new = np.where(active, z[np.minimum(src, n - 1)], 0.0)
                o_new = np.where(active, o[np.minimum(src, n - 1)], 0.0)
                left = np.where(rank > 0, np.roll(w, 1), 0.0)
                new = (w * z_new * np.maximum(ud - rank, 0) / (ud + 1)
                       + o_new * left * rank / (ud + 1))
                w = np.where(active, new, w)
            ud = length - 1
            nxt = w[start + ud]
            t = np.zeros(n)
            for i in range(length.max() - 2, -1, -1):
                active = i <= ud - 1
                wi = w[np.minimum(start + i, n - 1)]
                pre = (ud - i) * z / (ud + 1)
                q = nxt * (ud + 1) / (i + 1)
                t_new = t + q * o
                with np.errstate(divide="ignore", invalid="ignore"):
                    safe = np.where(pre > 0, pre, 1.0)
                    t_new = t_new + np.where(pre > 0, (1 - o) * wi / safe, 0.0)
                nxt = np.where(active, wi - q * pre, nxt)
                t = np.where(active, t_new, t)
            for lane in range(n):
                if rank[lane] == 0:
                    continue
                p = layout.path[lanes[lane]]
                for k in range(ensemble.out_ptr[p], ensemble.out_ptr[p + 1]):
                    out[r, ensemble.out_index[k], layout.feature[lanes[lane]]] += (
                        t[lane] * (o[lane] - z[lane]) * ensemble.out_value[k])
    return out
