"""The CDF sketch's column fast paths (``skshapley.sketch._cdf_fit`` and the kernels of
``_fit_kernels``) against brute force: ``np.unique`` / ``np.bincount`` for the exact
counting passes, masks for the point-mass copy, and the numpy backend's summaries (the
reference, which takes no fast path) for the sketch's update."""

import numpy as np
import pytest

from skshapley.sketch import CDFSketch, _cdf_fit
from skshapley.sketch._fit_kernels import distinct_values, integer_values, split_spike


def _unique(x, w=None):
    """What the sketch's exact summary counts: sorted distinct kept values, weights."""
    w = np.ones(x.size) if w is None else w
    keep = ~np.isnan(x) & (w > 0)
    values, inverse = np.unique(x[keep], return_inverse=True)
    return values, np.bincount(inverse, weights=w[keep], minlength=values.size)


def _nan(payload):
    return np.array([payload], dtype=np.uint64).view(np.float64)[0]


@pytest.mark.parametrize("n", [0, 1, 7, 2048, 2049, 10_000])
def test_distinct_values_matches_unique(n):
    rng = np.random.default_rng(n)
    x = rng.integers(-5, 20, n).astype(float) / 4
    x[::13] = np.nan
    # NaNs of other patterns, among them the table's empty-slot pattern
    x[5::97] = _nan(0x7FF4_0000_0000_0001)
    x[7::89] = _nan(0xFFF8_0000_0000_0000)
    values, weights, n_nan, n_kept = distinct_values(x, None, 64)
    ref_values, ref_weights = _unique(x)
    np.testing.assert_array_equal(values, ref_values)
    np.testing.assert_array_equal(weights, ref_weights)
    assert n_nan == np.isnan(x).sum() and n_kept == n - n_nan
    w = rng.random(n)
    w[::3] = 0.0  # zero weights: not kept, and a value seen only there is no value
    values, weights, n_nan, n_kept = distinct_values(x, w, 64)
    ref_values, ref_weights = _unique(x, w)
    np.testing.assert_array_equal(values, ref_values)
    np.testing.assert_array_equal(weights, ref_weights)  # summed in row order: same bits
    assert n_kept == np.count_nonzero(~np.isnan(x) & (w > 0))


def test_distinct_values_switches_over_past_the_limit():
    rng = np.random.default_rng(0)
    x = rng.permutation(np.repeat(np.arange(40.0), 50))
    values, weights, _, _ = distinct_values(x, None, 40)
    np.testing.assert_array_equal(values, np.arange(40.0))
    assert np.all(weights == 50)
    x[-1] = 0.5  # one value too many, in the last row
    values, (value, share), stop, _ = distinct_values(x, None, 40)
    assert values is None and stop == x.size - 1 and 0 < share < 0.1
    assert value in x[:stop]
    # a point mass among continuous values: the rows read before the switch show it
    z = np.where(rng.random(100_000) < 0.6, 0.0, rng.normal(size=100_000))
    values, (value, share), stop, _ = distinct_values(z, None, 512)
    assert values is None and value == 0.0 and 0.5 < share < 0.7 and stop < 3000
    # infinities and -0.0 are values of their own (the caller refuses or defers them)
    values, _, _, _ = distinct_values(np.array([1.0, np.inf, -0.0, 0.0, -np.inf]), None, 8)
    assert values.tolist() == [-np.inf, 0.0, 0.0, 1.0, np.inf]
    assert np.signbit(values[1:3]).sum() == 1


def test_integer_values_matches_unique_and_refuses_what_it_cannot_count():
    rng = np.random.default_rng(1)
    x = rng.poisson(3.0, 50_001).astype(float)
    x[::17] = np.nan
    values, counts, n_nan, n_kept = integer_values(x, -30.0, 64)
    ref_values, ref_counts = _unique(x)
    np.testing.assert_array_equal(values, ref_values)
    np.testing.assert_array_equal(counts, ref_counts)
    assert n_nan == np.isnan(x).sum() and n_kept == x.size - n_nan
    for bad in (34.0, -31.0, 2.5, np.inf, -0.0):  # outside the window, no integer, sign
        y = x.copy()
        y[-3] = bad
        assert integer_values(y, -30.0, 64) is None


def test_split_spike_matches_masks():
    rng = np.random.default_rng(2)
    x = np.where(rng.random(10_001) < 0.5, 1.5, rng.normal(size=10_001))
    x[::19] = np.nan
    rest, (n_spike, n_below) = split_spike(x, 1.5)
    np.testing.assert_array_equal(rest, x[x != 1.5])  # NaN kept, in order
    assert n_spike == np.count_nonzero(x == 1.5) and n_below == np.count_nonzero(x < 1.5)


def _columns():
    rng = np.random.default_rng(3)
    n = 300_000
    return {
        "poisson": rng.poisson(3.0, n).astype(float),
        "quarters": rng.integers(0, 40, n) / 4.0,
        "binary with NaN": np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 2, n)),
        "zero-inflated": np.where(rng.random(n) < 0.6, 0.0, rng.lognormal(1, 1, n)),
        "spike inside": np.where(rng.random(n) < 0.5, 0.25, rng.normal(size=n)),
        "integer spike inside": np.where(rng.random(n) < 0.5, 7.0,
                                         rng.integers(0, 5000, n).astype(float)),
    }


@pytest.mark.parametrize("name", list(_columns()))
@pytest.mark.parametrize("rows", [5_000, 50_000, 300_000])
def test_fast_summary_is_exact_at_its_vertices(name, rows):
    x = _columns()[name][:rows]
    fast, slow = CDFSketch(), CDFSketch(backend="numpy")
    fast.update(x)
    slow.update(x)
    for field in ("weight", "n_nan", "n_rows", "integral"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(slow, field))
    assert fast.exact == slow.exact  # the same table (or none) on every path
    assert fast.min[0] == np.nanmin(x) and fast.max[0] == np.nanmax(x)
    kept = np.sort(x[~np.isnan(x)])
    # before thinning, the polyline's counts are exact; after it, every vertex is
    # still within the thinning error of the exact CDF
    kx, kc = fast.knots[0]
    at = kx + 1 if fast.integral[0] else kx
    exact = np.searchsorted(kept, at, side="right")
    below = np.searchsorted(kept, at, side="left")
    gap = np.maximum(0, np.maximum(below - kc, kc - exact)) / kept.size
    assert gap.max() <= max(20 * fast.quantile_error()[0], 1e-12)
    assert fast.quantile_error()[0] <= 2 * slow.quantile_error()[0] + 1e-4


def test_spike_and_exact_paths_are_taken(monkeypatch):
    cols = _columns()
    seen = []
    original = _cdf_fit._spike_part

    def spy(*args):
        seen.append(args[3])
        return original(*args)
    monkeypatch.setattr(_cdf_fit, "_spike_part", spy)
    sketch = CDFSketch()
    X = np.column_stack([cols["zero-inflated"], cols["poisson"]])
    sketch.update(np.asfortranarray(X))
    assert seen == [0.0]  # the zeros of column 0 only
    assert sketch.exact[0] is None
    values, counts = _unique(cols["poisson"])
    assert sketch.exact[1] == dict(zip(values.tolist(), counts.tolist(), strict=True))


def test_numpy_backend_takes_no_fast_path(monkeypatch):
    def refuse(*args):
        raise AssertionError("the numpy backend took a fast path")
    monkeypatch.setattr(_cdf_fit, "_fast_part", refuse)
    x = _columns()["poisson"][:50_000]
    sketch = CDFSketch(backend="numpy").update(x)
    values, counts = _unique(x)
    assert sketch.exact[0] == dict(zip(values.tolist(), counts.tolist(), strict=True))
