"""MomentSketch: exact chunk summaries, Pébay merges, serialisation (ALGORITHMS.md §7.1-7.2)."""

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skshapley.sketch import MomentSketch
from skshapley.sketch._solvers import chebyshev_table, scaled_moments


def _direct_chebyshev(x, order):
    """Chebyshev moments computed directly from the data, in extended precision."""
    x = np.asarray(x, dtype=np.longdouble)
    lo, hi = x.min(), x.max()
    y = 2 * (x - lo) / (hi - lo) - 1
    mu = np.array([np.mean(y ** k) for k in range(order + 1)], dtype=np.float64)
    return chebyshev_table(order) @ mu


def _cheb(sketch):
    mu = sketch.chebyshev_moments()
    return mu @ chebyshev_table(sketch.order).T


@pytest.mark.parametrize("offset, spread", [(0.0, 1.0), (1000.0, 1.0), (0.0, 1e-150),
                                            (0.0, 1e150), (1e12, 1.0)])
def test_central_moments_match_direct_computation(rng, offset, spread):
    # §7.2 [proto]: within 3e-14 of direct computation for these spreads and offsets
    x = offset + spread * rng.normal(size=20_000)
    sketch = MomentSketch(order=15, small_n=0, exact_threshold=0)
    for part in np.array_split(x, 7):
        sketch.update(part)
    np.testing.assert_allclose(_cheb(sketch)[0], _direct_chebyshev(x, 15), rtol=0, atol=1e-11)


def test_naive_sums_fail_on_offset_data(rng):
    # §7.1: N(1000, 1) with raw power sums loses the Chebyshev moments by k ~ 6
    x = rng.normal(1000.0, 1.0, size=100_000)
    naive = MomentSketch(order=10, summation="naive", small_n=0, exact_threshold=0).update(x)
    central = MomentSketch(order=10, small_n=0, exact_threshold=0).update(x)
    direct = _direct_chebyshev(x, 10)
    assert np.abs(_cheb(central)[0] - direct).max() < 1e-12
    assert np.abs(_cheb(naive)[0] - direct)[8:].max() > 1e-3


@st.composite
def _splits(draw):
    n = draw(st.integers(2, 300))
    cuts = sorted(draw(st.lists(st.integers(1, n - 1), max_size=5, unique=True)))
    offset = draw(st.sampled_from([0.0, 1000.0, -1e6]))
    scale = draw(st.sampled_from([1e-3, 1.0, 1e5]))
    seed = draw(st.integers(0, 2**32 - 1))
    return n, cuts, offset, scale, seed


@given(_splits())
def test_chunk_invariance_and_merge_trees(case):
    n, cuts, offset, scale, seed = case
    rng = np.random.default_rng(seed)
    x = offset + scale * rng.standard_t(4, size=(n, 2))
    w = rng.random(n)
    whole = MomentSketch(order=8, exact_threshold=4, small_n=30).update(x, w)
    parts = [MomentSketch(order=8, exact_threshold=4, small_n=30).update(x[a:b], w[a:b])
             for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    left = parts[0].copy()
    for p in parts[1:]:
        left = left + p
    right = parts[-1].copy()
    for p in parts[-2::-1]:
        right = p + right
    for merged in (left, right):
        np.testing.assert_allclose(merged.weight, whole.weight, rtol=1e-13)
        np.testing.assert_allclose(merged.mean, whole.mean, rtol=1e-12,
                                   atol=1e-12 * scale)
        np.testing.assert_array_equal(merged.min, whole.min)
        np.testing.assert_array_equal(merged.max, whole.max)
        np.testing.assert_allclose(merged.w_at_min, whole.w_at_min, rtol=1e-13)
        # chebyshev moments, which the solver sees, to 1e-11
        np.testing.assert_allclose(_cheb(merged), _cheb(whole), rtol=0, atol=1e-11)
        assert merged.exact == [None if t is None else pytest.approx(t)
                                for t in whole.exact]


def test_exact_table_keeps_few_distinct_values_and_drops_for_good(rng):
    x = rng.integers(0, 10, size=5000).astype(float)
    sketch = MomentSketch(order=5, exact_threshold=10, small_n=0).update(x)
    assert sketch.exact[0] == {float(v): float((x == v).sum()) for v in range(10)}
    sketch.update(np.array([10.5]))  # 11 distinct values, more than small_n rows
    assert sketch.exact[0] is None
    sketch.update(np.array([1.0]))
    assert sketch.exact[0] is None


def test_atoms_and_nan(rng):
    x = np.concatenate([np.zeros(30), rng.lognormal(size=70), [np.nan] * 5])
    sketch = MomentSketch(order=4, exact_threshold=0, small_n=0).update(x)
    assert sketch.w_at_min[0] == 30 and sketch.w_zero[0] == 30 and sketch.w_at_max[0] == 1
    assert sketch.n_nan[0] == 5 and sketch.weight[0] == 100


def test_bytes_and_pickle_round_trip(rng):
    x = rng.normal(size=(1000, 3))
    x[:, 2] = rng.integers(0, 3, size=1000)
    sketch = MomentSketch(order=12, small_n=10).update(x)
    for clone in (MomentSketch.from_bytes(sketch.to_bytes()),
                  pickle.loads(pickle.dumps(sketch))):
        for name in ("weight", "mean", "exp2", "m_hat", "min", "max", "w_at_min", "n_nan"):
            np.testing.assert_array_equal(getattr(clone, name), getattr(sketch, name))
        assert clone.exact == sketch.exact
        np.testing.assert_array_equal(clone.quantile([0.1, 0.5]), sketch.quantile([0.1, 0.5]))
    # moment state: order + 7 doubles per feature; to_bytes adds the exact tables, the
    # two counters (n_nan, n_rows) and a 61-byte header
    assert MomentSketch(order=10).nbytes_per_feature() == 136
    one = MomentSketch(order=10, exact_threshold=0, small_n=0).update(rng.normal(size=99))
    assert len(one.to_bytes()) == 61 + 136 + 16 + 8


def test_merge_errors_name_the_mismatch(rng):
    a = MomentSketch(order=5).update(rng.normal(size=10))
    with pytest.raises(ValueError, match="order=5 and order=6"):
        a.merge(MomentSketch(order=6).update(rng.normal(size=10)))
    with pytest.raises(ValueError, match="transform='none' and transform='arcsinh'"):
        a.merge(MomentSketch(order=5, transform="arcsinh").update(rng.normal(size=10)))
    with pytest.raises(ValueError, match="n_features=1 and n_features=2"):
        a.merge(MomentSketch(order=5).update(rng.normal(size=(10, 2))))


def test_bad_input_leaves_state_unchanged(rng, monkeypatch):
    sketch = MomentSketch(order=5).update(rng.normal(size=(50, 2)))
    before = sketch.to_bytes()
    with pytest.raises(ValueError, match="infinity"):
        sketch.update(np.array([[1.0, np.inf]]))
    with pytest.raises(ValueError, match="3 features, but this sketch has n_features=2"):
        sketch.update(np.ones((4, 3)))
    with pytest.raises(ValueError, match="order=0 is invalid"):
        MomentSketch(order=0)
    assert sketch.to_bytes() == before
    # an infinity in the last of several chunks: the earlier chunks must not merge either
    monkeypatch.setattr("skshapley.sketch._moments.CHUNK_ROWS", 16)
    monkeypatch.setattr("skshapley.sketch._moments.CHUNK_VALUES", 16)
    for transform in ("none", "arcsinh"):
        long = MomentSketch(order=5, transform=transform).update(rng.normal(size=(50, 2)))
        before = long.to_bytes()
        X = rng.normal(size=(100, 2))  # 7 chunks
        X[-1, 1] = -np.inf
        with pytest.raises(ValueError, match="infinity"):
            long.update(X)
        assert long.to_bytes() == before
        fresh = MomentSketch(order=5, transform=transform)
        with pytest.raises(ValueError, match="infinity"):
            fresh.update(X)
        assert fresh.n_features is None and fresh.is_empty
        with pytest.raises(ValueError, match="infinity"):  # a zero weight hides nothing
            fresh.update(X, sample_weight=np.r_[np.ones(len(X) - 1), 0.0])


def test_huge_values_do_not_overflow():
    x = np.array([-1.5e308, 1.5e308, 0.0, 1e307])
    sketch = MomentSketch(order=15, exact_threshold=0, small_n=0).update(x)
    mu = scaled_moments(sketch.weight, sketch.mean, sketch.exp2, sketch.m_hat, sketch.min,
                        sketch.max)
    assert np.all(np.isfinite(mu)) and np.all(np.abs(mu) <= 1 + 1e-12)


def test_all_nan_column_is_empty_not_infinite(rng):
    X = np.column_stack([rng.normal(size=40), np.full(40, np.nan)])
    for transform in ("none", "arcsinh"):
        sketch = MomentSketch(order=4, transform=transform).update(X)
        assert sketch.n_rows.tolist() == [40, 0] and sketch.n_nan.tolist() == [0, 40]
