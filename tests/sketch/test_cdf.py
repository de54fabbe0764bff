"""CDFSketch: exact batch summaries, polyline sums and thinning, lattice columns,
serialisation and refused merges (issue 31)."""

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sketch_columns import mixed_columns

from skshapley.metrics import rank_error
from skshapley.sketch import CDFSketch, MomentSketch
from skshapley.sketch._cdf_kernels import MAX_STEPS, N_SCAN, get_kernels, search_table
from skshapley.sketch._merge_kernels import _chord_deviation, simplify_polyline
from skshapley.sketch._polyline import (
    _combine,
    _evaluate,
    _invert,
    _lattice_to_line,
    _staircase,
)

P99 = np.linspace(0.01, 0.99, 99)


def _batch(rng, n):
    """Columns that exercise the kernel (``mixed_columns``) and weights, some zero."""
    X = mixed_columns(rng, n)
    w = rng.integers(0, 3, n).astype(float)
    return X, w


def _splitters(X, w, r=64):
    d = X.shape[1]
    S = np.full((d, r + MAX_STEPS), np.inf)
    n_split = np.zeros(d, dtype=np.int64)
    for j in range(d):
        kept = np.sort(X[::7, j][np.isfinite(X[::7, j]) & (w[::7] > 0)])
        values = np.unique(kept[np.linspace(0, kept.size - 1, r).astype(int)])
        S[j, :values.size] = values
        n_split[j] = values.size
    return S, n_split


def test_summarise_kernel_matches_the_numpy_twin(rng):
    X, w = _batch(rng, 20_000)
    S, n_split = _splitters(X, w)
    tables = search_table(S, n_split)
    d, r = X.shape[1], S.shape[1] - MAX_STEPS
    outs = []
    for backend in ("numpy", "numba"):
        summarise, _ = get_kernels(backend)
        out = [np.empty((d, N_SCAN)), np.empty((d, r + 1)), np.empty((d, r)),
               np.empty((d, r), dtype=np.int64)]
        summarise(X, X.view(np.uint64), w, S, n_split, *tables, *out)
        outs.append(out)
    for numpy_out, numba_out in zip(*outs, strict=True):
        # the same sums in the same (row) order: equal bits, not merely close
        np.testing.assert_array_equal(numba_out, numpy_out)
    stats = outs[0][0]
    assert stats[:, 7].sum() == 0 and list(stats[:, 8]) == [0, 0, 0, 0, 1]
    np.testing.assert_array_equal(stats[:, 0], np.isnan(X).sum(axis=0))


@given(st.integers(3, 300), st.integers(2, 40), st.integers(0, 2**32 - 1))
def test_simplify_kernel_matches_its_python_source(n, n_keep, seed):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.choice(rng.normal(size=n // 2 + 1), n))  # repeated x: jumps
    c = np.cumsum(rng.random(n))
    keep_py = np.empty(n, dtype=bool)
    keep_nb = np.empty(n, dtype=bool)
    worst_py = simplify_polyline(x, c, n_keep, keep_py)
    worst_nb = get_kernels("numba")[1](x, c, n_keep, keep_nb)
    np.testing.assert_array_equal(keep_nb, keep_py)
    assert worst_nb == worst_py
    assert keep_py.sum() == min(n, max(n_keep, 2)) and keep_py[0] and keep_py[-1]


def _thin_by_brute_force(x, c, n_keep):
    """The greedy thinning spelt out: every step recomputes the cost of every alive
    interior vertex (its chord's deviation over the original vertices) and drops the
    least, the lower index on a tie. Returns the kept mask and the largest cost paid."""
    alive = list(range(x.size))
    worst = 0.0
    while len(alive) > max(n_keep, 2):
        costs = [(_chord_deviation(x, c, alive[k - 1], alive[k + 1]), alive[k])
                 for k in range(1, len(alive) - 1)]
        cost, i = min(costs)
        worst = max(worst, cost)
        alive.remove(i)
    keep = np.zeros(x.size, dtype=bool)
    keep[alive] = True
    return keep, worst


@given(st.integers(3, 120), st.integers(2, 30), st.integers(0, 2**32 - 1),
       st.booleans())
def test_thinning_drops_the_least_costly_vertex_each_step(n, n_keep, seed, jumps):
    # the tournament tree must give the greedy order exactly, ties included: repeated
    # x values make vertical runs (costs of 0 at many vertices), and a lattice of c
    # makes equal costs elsewhere
    rng = np.random.default_rng(seed)
    if jumps:
        x = np.sort(rng.choice(rng.normal(size=n // 2 + 1), n))
        c = np.cumsum(rng.integers(1, 4, n)).astype(float)
    else:
        x = np.cumsum(rng.random(n))
        c = np.cumsum(rng.random(n))
    expected, worst = _thin_by_brute_force(x, c, n_keep)
    for simplify in (simplify_polyline, get_kernels("numba")[1]):
        keep = np.empty(n, dtype=bool)
        assert simplify(x, c, n_keep, keep) == worst
        np.testing.assert_array_equal(keep, expected)


def test_sum_of_exact_staircases_is_the_staircase_of_the_union(rng):
    a = rng.integers(0, 30, 200).astype(float) / 4
    b = rng.integers(10, 50, 300).astype(float) / 4
    for lattice in (False, True):
        va, wa = np.unique(a, return_counts=True)
        vb, wb = np.unique(b, return_counts=True)
        vu, wu = np.unique(np.concatenate([a, b]), return_counts=True)
        if lattice:  # integers only on the lattice
            va, vb, vu = va * 4, vb * 4, vu * 4
        combined = _combine(_staircase(va, wa.astype(float), lattice),
                            _staircase(vb, wb.astype(float), lattice))
        union = _staircase(vu, wu.astype(float), lattice)
        grid = np.linspace(vu[0] - 1, vu[-1] + 1, 997)
        for side in ("left", "right"):
            np.testing.assert_allclose(_evaluate(*combined, grid, side),
                                       _evaluate(*union, grid, side), rtol=0, atol=1e-9)


def test_lattice_quantiles_are_the_data_quantiles(rng):
    x = rng.poisson(40.0, size=50_000).astype(float)
    sketch = CDFSketch(exact_threshold=0, small_n=0).update(x)
    assert sketch.integral[0]
    p = np.linspace(0, 1, 201)
    # on the lattice the polyline is exact at the integers: the step quantiles of numpy
    np.testing.assert_array_equal(sketch.quantile(p)[:, 0],
                                  np.quantile(x, p, method="inverted_cdf"))
    assert rank_error(x, sketch.quantile(P99)[:, 0], P99) == 0.0
    # a non-integer turns the column into an ordinary one (within an atom's weight)
    sketch.update(np.array([40.5]))
    assert not sketch.integral[0]
    assert rank_error(x, sketch.quantile(P99)[:, 0], P99) < 0.01


def test_lattice_to_line_keeps_the_integer_cdf(rng):
    x = rng.integers(0, 12, 500).astype(float)
    values, counts = np.unique(x, return_counts=True)
    line = _lattice_to_line(*_staircase(values, counts.astype(float), True))
    # the CDF at each integer (right-continuous) and just below it is unchanged
    truth = np.cumsum(counts)
    np.testing.assert_allclose(_evaluate(*line, values, "right"), truth)
    np.testing.assert_allclose(_evaluate(*line, values, "left"), truth - counts)


@pytest.mark.parametrize("n_knots", [8, 60, 200])
def test_thinning_keeps_n_knots_and_counts_exact(rng, n_knots):
    x = rng.standard_t(3, size=(30_000, 1))
    sketch = CDFSketch(n_knots).update(x)
    kx, kc = sketch.knots[0]
    assert kx.size <= n_knots and kc[0] == 0 and kc[-1] == 30_000
    assert kx[0] == x.min() and kx[-1] == x.max()
    # every vertex sits at an exact count (sample splitters are data values)
    inner = (kx > kx[0]) & (kx < kx[-1])
    below = np.searchsorted(np.sort(x[:, 0]), kx[inner], "left")
    at_or_below = np.searchsorted(np.sort(x[:, 0]), kx[inner], "right")
    assert np.all((kc[inner] >= below - 1e-9) & (kc[inner] <= at_or_below + 1e-9))
    assert sketch.nbytes_per_feature() == 16 * n_knots + 64


def test_bytes_and_pickle_round_trip(rng):
    X = np.column_stack([rng.normal(size=20_000), rng.integers(0, 3, 20_000)])
    X[::50, 0] = np.nan
    sketch = CDFSketch().update(X[:9000]).update(X[9000:])
    for copy in (CDFSketch.from_bytes(sketch.to_bytes()), pickle.loads(pickle.dumps(sketch))):
        for name in ("weight", "n_nan", "n_rows", "integral", "error"):
            np.testing.assert_array_equal(getattr(copy, name), getattr(sketch, name))
        assert copy.exact == sketch.exact
        np.testing.assert_array_equal(copy.quantile(P99), sketch.quantile(P99))
    # one feature's state is at most nbytes_per_feature() (the exact table aside)
    one = CDFSketch(exact_threshold=0, small_n=0).update(X[:, :1])
    header = len(CDFSketch().to_bytes())
    assert len(one.to_bytes()) - header <= one.nbytes_per_feature() == 1024
    with pytest.raises(ValueError, match="not a CDFSketch serialisation"):
        CDFSketch.from_bytes(b"nonsense")
    assert CDFSketch.from_bytes(CDFSketch().to_bytes()).n_features is None


def test_merges_of_other_kinds_and_settings_are_refused_by_name(rng):
    X = rng.normal(size=(500, 2))
    sketch = CDFSketch().update(X)
    before = pickle.dumps(sketch)
    with pytest.raises(TypeError, match=r"can only merge a CDFSketch \(sketch='cdf'\), not "
                                        r"a MomentSketch \(sketch='moments'\)"):
        sketch.merge(MomentSketch().update(X))
    with pytest.raises(TypeError, match=r"can only merge a MomentSketch \(sketch='moments'\), "
                                        r"not a CDFSketch \(sketch='cdf'\)"):
        MomentSketch().update(X).merge(sketch)
    with pytest.raises(ValueError, match="n_knots=60 and n_knots=30"):
        sketch.merge(CDFSketch(30).update(X))
    with pytest.raises(ValueError, match="small_n=1000 and small_n=0"):
        sketch.merge(CDFSketch(small_n=0).update(X))
    with pytest.raises(ValueError, match="n_features=2 and n_features=3"):
        sketch.merge(CDFSketch().update(rng.normal(size=(5, 3))))
    assert pickle.dumps(sketch) == before


def test_bad_input_leaves_state_unchanged(rng):
    sketch = CDFSketch().update(rng.normal(size=(20_000, 2)))
    before = pickle.dumps(sketch)
    big = rng.normal(size=(20_000, 2))
    big[123, 1] = np.inf  # a large batch: found by the kernel's pass
    for bad in (big, big[100:200]):  # and a small one
        with pytest.raises(ValueError, match="infinity"):
            sketch.update(bad)
    with pytest.raises(ValueError, match="sample_weight must be finite"):
        sketch.update(big[:10, :] * 0, sample_weight=-np.ones(10))
    with pytest.raises(ValueError, match="X has 3 features"):
        sketch.update(rng.normal(size=(4, 3)))
    with pytest.raises(ValueError, match="outside bounds"):
        CDFSketch(bounds=[[0, 1]]).update(np.array([[2.0]]))
    assert pickle.dumps(sketch) == before


def test_huge_and_tiny_values_do_not_overflow(rng):
    for scale in (1.7e308, 1e-300):
        x = np.concatenate([rng.uniform(-1, 1, 20_000) * scale, [scale, -scale]])
        sketch = CDFSketch().update(x[:7000]).update(x[7000:])
        q = sketch.quantile(P99)[:, 0]
        assert np.all(np.isfinite(q))
        assert rank_error(x, q, P99) < 1e-3


def test_empty_constant_and_all_nan_columns():
    sketch = CDFSketch().update(np.column_stack([np.full(20_000, 7.0),
                                                 np.full(20_000, np.nan)]))
    assert sketch.n_nan.tolist() == [0, 20_000] and sketch.weight.tolist() == [20_000, 0]
    np.testing.assert_array_equal(sketch.quantile_feature(0, P99), 7.0)
    assert np.isnan(sketch.quantile_feature(1, P99)).all()
    assert sketch.min[1] == np.inf and sketch.max[1] == -np.inf
    with pytest.raises(ValueError, match="seen no finite values"):
        CDFSketch().update(np.full((3, 1), np.nan)).quantile(0.5)


def test_invert_returns_the_smallest_value_reaching_p():
    # a gap between 1 and 3 (flat CDF) and a point mass at 3
    x = np.array([0.0, 1.0, 3.0, 3.0, 4.0])
    c = np.array([0.0, 2.0, 2.0, 6.0, 8.0])
    q = _invert(x, c, np.array([0.0, 0.25, 0.3, 0.75, 1.0]), False)
    np.testing.assert_array_equal(q, [0.0, 1.0, 3.0, 3.0, 4.0])
