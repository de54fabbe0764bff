"""CDFSketch's fast paths (issue 31, speed): the unit-weight counting pass of large
batches against its numpy twin, its splitter plan and exact tables, and the bulk
polyline sum and thinning of merge and update against the numpy reference."""

import numpy as np
import pytest
from sketch_columns import mixed_columns

from skshapley.backends.sketch import cells_for, order_keys
from skshapley.metrics import rank_error
from skshapley.sketch import CDFSketch, _cdf_fit
from skshapley.sketch._cdf_kernels import MAX_STEPS, N_SCAN, get_kernels
from skshapley.sketch._count_kernels import count_columns, count_plan, count_tables
from skshapley.sketch._merge_kernels import combine_thin
from skshapley.sketch._polyline import _combine, _lattice_to_line, _staircase, _thin

P99 = np.linspace(0.01, 0.99, 99)


@pytest.fixture
def counted(monkeypatch):
    """Batches of more than 20,000 rows take the counting path (not only > 65,536), and
    no column takes a column fast path in front of it (those summarise few distinct
    values exactly, where the numpy reference counts; tested in
    ``test_cdf_column_paths.py``)."""
    monkeypatch.setattr(_cdf_fit, "COUNT_ROWS", 20_000)
    monkeypatch.setattr(_cdf_fit, "_fast_part", lambda *args: None)


def _columns(rng, n):
    """Ties, -0.0 and 0.0, NaN, spikes, offsets, integers, heavy tails, a narrow mode."""
    return mixed_columns(rng, n, more=True)


def _plan(X, k=128):
    """Splitters and tables of the counting pass from every 7th row."""
    d = X.shape[1]
    rows, cells, plans = [], [], []
    for j in range(d):
        col = X[::7, j]
        kept = np.sort(col[np.isfinite(col)])
        values, drawn = np.unique(kept[np.linspace(0, kept.size - 1, k).round().astype(int)],
                                  return_counts=True)
        plan = count_plan(values, drawn)
        assert plan is not None
        keep, cell, *mapping = plan
        rows.append(values[keep])
        cells.append(cell[keep])
        plans.append(mapping)
    width = max(r.size for r in rows)
    S = np.full((d, width + MAX_STEPS), np.inf)
    n_split = np.array([r.size for r in rows])
    cells_of = np.zeros((d, width), dtype=np.int64)
    for j, (r, c) in enumerate(zip(rows, cells, strict=True)):
        S[j, :r.size], cells_of[j, :r.size] = r, c
    plan_arrays = tuple(np.array([p[i] for p in plans], dtype=np.uint64) for i in range(3)) \
        + (np.array([p[3] for p in plans], dtype=np.int64),)
    return S, n_split, plan_arrays, count_tables(S, n_split, cells_of)


@pytest.mark.parametrize("layout", ["C", "F", "one column"])
def test_counting_pass_matches_the_numpy_twin(rng, layout):
    # columns 3 and 7 (clouds 1e-9 and 0.01 wide) crowd the plan: the sketch sorts them
    # (tested below)
    X = _columns(rng, 150_000)[:, [0, 1, 2, 4, 5, 6]]
    if layout == "one column":
        X = X[:, 5:6].copy()
    X = np.asarray(X, order="F" if layout == "F" else "C")
    S, n_split, plans, first = _plan(X)
    d, r = X.shape[1], S.shape[1] - MAX_STEPS
    ref = [np.empty((d, N_SCAN)), np.empty((d, r + 1)), np.empty((d, r)),
           np.empty((d, r), dtype=np.int64)]
    summarise, _ = get_kernels("numpy")
    Xc = np.ascontiguousarray(X)
    summarise(Xc, Xc.view(np.uint64), np.ones(X.shape[0]), S, n_split, *([None] * 5), *ref)

    def threads(call, n_parts, work):  # the parts in any order, as threads run them
        assert n_parts > 1
        for part in reversed(range(n_parts)):
            call(part, part + 1)
    for run in (None, threads):
        stats, below, equal, spills = count_columns(
            X, np.ascontiguousarray(S[:, :r + 2]), n_split, plans, first,
            np.ones(d, dtype=bool), run=run)
        # integer counts: the same numbers, whatever the order of the parts
        np.testing.assert_array_equal(stats, ref[0])
        np.testing.assert_array_equal(below, ref[1])
        np.testing.assert_array_equal(equal, ref[2])
        for j in range(d):
            # the spilled values are the kept values equal to no splitter
            col = X[:, j][np.isfinite(X[:, j])]
            missed = np.sort(col[~np.isin(col, S[j, :n_split[j]])])
            if spills[j] is None:
                assert missed.size > 4096
            else:
                np.testing.assert_array_equal(np.sort(spills[j]), missed)


def test_count_plan_keeps_point_masses_and_refuses_crowds():
    # 20 values within one cell's width of 1.0 plus a spread: at most one per cell
    values = np.concatenate([1.0 + np.arange(20) * 1e-13, np.linspace(2, 50, 400)])
    drawn = np.ones(values.size, dtype=np.int64)
    drawn[7] = 9  # drawn nine times: a point mass, kept among its crowd
    keep, cells, *_ = count_plan(values, drawn)
    assert keep[7] and keep[:20].sum() == 1 and keep[20:].all()
    assert np.all(np.diff(cells[keep]) > 0)
    # two point masses in one cell, or too many values lost: refused (sorted instead)
    drawn[8] = 2
    assert count_plan(values, drawn) is None
    crowd = np.concatenate([1.0 + np.arange(100) * 1e-13, np.linspace(2, 50, 400)])
    assert count_plan(crowd, np.ones(crowd.size, dtype=np.int64)) is None
    # -0.0 and 0.0 share a cell: both zeros count as equal to the splitter
    keep, cells, low, width, origin, shift = count_plan(np.array([-1.0, 0.0, 1.0]),
                                                        np.ones(3, dtype=np.int64))
    keys = order_keys(np.array([-0.0, 0.0]))
    assert np.all((keys > low) & (keys <= low + width))


def _assert_same_sketch(fast, ref):
    """The numba and numpy backends' sketches of the same rows: the same vertices,
    tables, weights and counts; the thinning error to round-off (the numba thinning sums
    it in order, the numpy one pairwise)."""
    for j in range(fast.n_features):
        np.testing.assert_array_equal(fast.knots[j][0], ref.knots[j][0])
        np.testing.assert_array_equal(fast.knots[j][1], ref.knots[j][1])
        assert fast.exact[j] == ref.exact[j]
    for name in ("weight", "n_nan", "n_rows", "integral"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(ref, name))
    np.testing.assert_allclose(fast.error, ref.error, rtol=1e-12, atol=0)


def test_counted_sketch_is_the_same_for_both_backends(rng, counted):
    X = _columns(rng, 60_000)
    for layout in ("C", "F"):
        Xl = np.asarray(X, order=layout)
        a = CDFSketch(backend="numba").update(Xl)
        _assert_same_sketch(a, CDFSketch(backend="numpy").update(Xl))
        np.testing.assert_array_equal(a.n_rows, np.isfinite(X).sum(axis=0))
        np.testing.assert_array_equal(a.n_nan, np.isnan(X).sum(axis=0))
        np.testing.assert_array_equal(a.integral, [0, 0, 0, 0, 1, 1, 0, 0])


@pytest.mark.parametrize("case", ["poisson", "nan", "half", "negative zero", "outlier",
                                  "constant", "offset", "wide"])
def test_integer_columns_count_as_the_reference(rng, counted, monkeypatch, case):
    # contiguous columns whose sample holds only integers close together are counted
    # with a histogram: the numpy reference's sketch, bit for bit, whether the column
    # holds only such integers or (found in the pass) another value
    n = 140_001  # the sample takes every second row: row 12,345 is not in it
    x = rng.poisson(3.0, n).astype(float)
    if case == "nan":
        x[rng.random(n) < 0.1] = np.nan
    elif case == "half":
        x[12_345] = 2.5
    elif case == "negative zero":
        x[x == 0] = -0.0
    elif case == "outlier":
        x[12_345] = 1e6
    elif case == "constant":
        x[:] = 7.0
    elif case == "offset":
        x = x - 1e12
    elif case == "wide":
        x = rng.integers(-500, 500, n).astype(float)
    used = []
    count_integers = _cdf_fit.count_integers

    def spy(*args):
        counted = count_integers(*args)
        used.append(counted is not None)
        return counted
    monkeypatch.setattr(_cdf_fit, "count_integers", spy)
    for X in (x[:, None], np.asfortranarray(np.column_stack([x, rng.normal(size=n)]))):
        _assert_same_sketch(CDFSketch(backend="numba").update(X),
                            CDFSketch(backend="numpy").update(X))
    assert used == [case not in ("half", "negative zero", "outlier")] * 2


def test_counted_sketch_is_accurate_and_keeps_exact_tables(rng, counted):
    X = _columns(rng, 100_000)
    sketch = CDFSketch().update(X)
    q = sketch.quantile(P99)
    for j in range(X.shape[1]):
        x = X[:, j][~np.isnan(X[:, j])]
        assert rank_error(x, q[:, j], P99) < 6e-4, j
    # Poisson: few values, so an exact table, read off the counts and the spilled values
    x = X[:, 5][~np.isnan(X[:, 5])]
    values, counts = np.unique(x, return_counts=True)
    assert sketch.exact[5] == dict(zip(values.tolist(), counts.astype(float).tolist(),
                                       strict=True))
    # the spikes and the integers keep their exact values as quantiles
    np.testing.assert_array_equal(q[:, 4], np.round(q[:, 4]))
    assert np.sum(q[:, 1] == 3.0) > 10


def test_counted_exact_table_with_many_unseen_values(rng, counted):
    # 20 common values and 40 rare ones, most of them missed by the sample: the table
    # is still exact (the rare ones are spilled, or the column is sorted)
    common = rng.integers(0, 20, 60_000).astype(float)
    rare = np.repeat(np.arange(100.0, 140.0), 3)
    x = np.concatenate([common, rare])[rng.permutation(60_000 + rare.size)]
    sketch = CDFSketch().update(x[:, None])
    values, counts = np.unique(x, return_counts=True)
    assert sketch.exact[0] == dict(zip(values.tolist(), counts.astype(float).tolist(),
                                       strict=True))


def test_counted_batch_with_infinity_changes_nothing(rng, counted):
    X = rng.normal(size=(30_000, 3))
    sketch = CDFSketch().update(X)
    before = sketch.to_bytes()
    bad = X.copy()
    bad[12_345, 1] = -np.inf
    with pytest.raises(ValueError, match="infinity"):
        sketch.update(bad)
    assert sketch.to_bytes() == before


def _polylines(rng, n, lattice=False):
    """Random CDF polylines with jumps (and on the integer lattice)."""
    out = []
    for _ in range(n):
        m = int(rng.integers(1, 90))
        values = np.sort(rng.choice(rng.normal(size=m) * 10.0 ** rng.integers(-3, 300),
                                    size=m))
        if lattice:
            values = np.unique(np.round(values / 10 ** max(0, np.log10(
                np.abs(values).max() + 1) - 3)))
        weights = rng.integers(1, 5, values.size).astype(float)
        out.append(_staircase(values, weights, lattice))
    return out


@pytest.mark.parametrize("n_keep", [4, 60, 300])
def test_bulk_sum_and_thinning_equal_the_numpy_reference(rng, n_keep):
    a = _polylines(rng, 40) + [(np.zeros(0), np.zeros(0))] + _polylines(rng, 1)
    b = _polylines(rng, 40) + _polylines(rng, 1) + [(np.zeros(0), np.zeros(0))]
    lat_a, lat_b = _polylines(rng, 10, True), _polylines(rng, 10, True)
    a += lat_a + [_lattice_to_line(*p) for p in lat_a]
    b += lat_b + lat_b
    _, simplify = get_kernels("numba")
    knots, errors = combine_thin(a, b, n_keep)
    for (x, c), error, pa, pb in zip(knots, errors, a, b, strict=True):
        rx, rc, rerror = _thin(*_combine(pa, pb), n_keep, simplify)
        np.testing.assert_array_equal(x, rx)
        np.testing.assert_array_equal(c, rc)
        # the error is summed in order rather than pairwise: equal to round-off
        np.testing.assert_allclose(error, rerror, rtol=1e-12, atol=0)


def test_merge_and_stream_equal_the_numpy_reference(rng, counted):
    X = _columns(rng, 45_000)
    Y = _columns(rng, 9_000)
    Y[:, 4] += 0.5  # the integer column meets non-integers: lattice to line
    Y[:, 2] = np.nan  # a column empty on one side
    for n_knots in (8, 60):
        sketches = {}
        for backend in ("numba", "numpy"):
            a = CDFSketch(n_knots, backend=backend).update(X)
            merged = a.copy().merge(CDFSketch(n_knots, backend=backend).update(Y))
            stream = CDFSketch(n_knots, backend=backend)
            # parts above EXACT_ROWS: the numpy reference thins in Python loops, slowly
            # on the staircases of small exact batches
            for part in np.array_split(np.vstack([X, Y]), 3):
                stream.update(part)
            sketches[backend] = (merged, stream)
        for fast, ref in zip(sketches["numba"], sketches["numpy"], strict=True):
            _assert_same_sketch(fast, ref)


def test_many_columns_use_smaller_tables(rng, counted):
    assert cells_for(1) == 65_536 and cells_for(5000) == 4096
    X = rng.normal(size=(25_000, 300))
    X[:, ::7] = rng.integers(0, 9, (25_000, X[:, ::7].shape[1]))
    a = CDFSketch(backend="numba").update(X)
    b = CDFSketch(backend="numpy").update(X)
    for j in range(0, 300, 13):
        np.testing.assert_array_equal(a.knots[j][0], b.knots[j][0])
        np.testing.assert_array_equal(a.knots[j][1], b.knots[j][1])
        assert a.exact[j] == b.exact[j]
