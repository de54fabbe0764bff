"""Bin packing of paths into warps (§8.3) and the warp layout built on it."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skshapley.backends.tree._layout import warp_layout
from skshapley.tree import pack_paths, read_model

sizes_strategy = st.lists(st.integers(1, 32), min_size=0, max_size=300)


@given(sizes_strategy)
def test_packers_respect_capacity_and_bounds(sizes):
    sizes = np.asarray(sizes, np.int64)
    lower_bound = -(-int(sizes.sum()) // 32)
    results = {p: pack_paths(sizes, p) for p in ("none", "nf", "ffd", "bfd")}
    for packing in results.values():
        if len(sizes):
            loads = np.bincount(packing.bin_of_path, weights=sizes)
            assert loads.max() <= 32 and (loads > 0).all()
        assert packing.n_bins >= lower_bound
    # Next fit uses at most twice the volume bound (two consecutive bins hold more than
    # 32); FFD and BFD at most 11/9 OPT + 6/9 (Dósa 2007), and OPT <= next fit's count.
    assert results["nf"].n_bins <= max(1, 2 * lower_bound) or not len(sizes)
    for name in ("ffd", "bfd"):
        assert results[name].n_bins <= 11 / 9 * results["nf"].n_bins + 6 / 9 + 1e-9
    assert results["none"].n_bins == len(sizes)


def test_ffd_and_bfd_use_the_same_bins_on_tree_like_sizes():
    # Table 5: FFD and BFD reach identical utilisation on every model.
    rng = np.random.default_rng(0)
    for depth in (3, 8, 16):
        sizes = np.minimum(rng.binomial(depth, 0.8, size=5000) + 1, 32)
        ffd, bfd, nf = (pack_paths(sizes, p) for p in ("ffd", "bfd", "nf"))
        assert ffd.n_bins == bfd.n_bins
        assert bfd.utilisation >= nf.utilisation


def test_hand_example_and_errors():
    packed = pack_paths([20, 30, 12, 2], "bfd")
    assert packed.n_bins == 2 and packed.utilisation == 64 / 64
    assert pack_paths([20, 30, 12, 2], "nf").n_bins == 3
    with pytest.raises(ValueError, match="packing"):
        pack_paths([3], "best")
    with pytest.raises(ValueError, match=r"\[1, 32\]"):
        pack_paths([33], "bfd")


def test_warp_layout_groups_are_contiguous_and_complete():
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 40))
    model = RandomForestRegressor(n_estimators=3, max_depth=40, random_state=0).fit(
        X, X[:, :10].sum(axis=1))
    ensemble = read_model(model)
    layout = warp_layout(ensemble.path_ptr, ensemble.feature, ensemble.lower,
                         ensemble.upper, ensemble.missing_branch, ensemble.missing_mode,
                         ensemble.zero_fraction)
    lengths = ensemble.path_lengths
    assert set(layout.long_paths) == set(np.flatnonzero(lengths > 31))
    assert np.all(np.diff(layout.bin_ptr) <= 32)
    packed_paths = np.unique(layout.path)
    assert len(packed_paths) + len(layout.long_paths) == int((lengths > 0).sum())
    roots = layout.feature == -1
    assert roots.sum() == len(packed_paths)
    assert np.all(layout.group_start + layout.group_length <= 32)
