"""The numba twins of ``_polyline_kernels`` give the numpy references' bits."""

import numpy as np
import pytest

from skshapley.sketch import CDFSketch
from skshapley.sketch._count_kernels import MAX_DROPPED_SHARE, count_plan
from skshapley.sketch._polyline import _from_counts, _invert
from skshapley.sketch._polyline_kernels import cell_plan, from_counts, invert_columns

pytest.importorskip("numba")


def _columns():
    rng = np.random.default_rng(0)
    n = 20_000
    k = rng.choice(3, n)
    return {
        "normal": rng.normal(size=n),
        "lognormal": rng.lognormal(0, 2, n),
        "mixture": rng.normal(np.array([-20.0, 0.0, 30.0])[k], np.array([2.0, 0.05, 5.0])[k]),
        "ties": np.round(rng.normal(size=n), 2),
        "negative zeros": np.where(rng.random(n) < 0.3, -0.0, rng.normal(size=n)),
        "integers": rng.integers(-5, 5, n).astype(float),
        "offset": 1e6 + rng.normal(size=n),
    }


def _same(a, b):
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", list(_columns()))
def test_cell_plan_matches_count_plan(name):
    x = np.sort(_columns()[name][::3])
    picks = np.linspace(0, x.size - 1, 512).round().astype(np.int64)
    values, drawn = np.unique(x[picks], return_counts=True)
    for n_cells in (1024, 4096, 8192, 1 << 16):
        ref = count_plan(values, drawn, n_cells)
        got, dropped = cell_plan(values, drawn, n_cells, MAX_DROPPED_SHARE)
        assert (ref is None) == (got is None)
        if ref is None:
            continue
        assert _same(ref[0], got[0]) and _same(ref[1], got[1])
        assert [int(v) for v in ref[2:]] == [int(v) for v in got[2:]]
        assert dropped == (not ref[0].all())


@pytest.mark.parametrize("name", list(_columns()))
@pytest.mark.parametrize("integral", [False, True])
def test_from_counts_matches_reference(name, integral):
    x = np.sort(_columns()[name])
    ranks = np.linspace(0, x.size - 1, 300).round().astype(np.int64)
    values = np.unique(x[ranks])
    lt = np.searchsorted(x, values, side="left")
    le = np.searchsorted(x, values, side="right")
    equal = (le - lt).astype(np.float64)
    below = np.concatenate([[0.0], (lt[1:] - le[:-1]).astype(np.float64), [0.0]])
    stats = np.zeros(9)
    stats[1] = stats[2] = x.size
    stats[3], stats[4] = x[0], x[-1]
    stats[5], stats[6] = equal[0], equal[-1]
    # the splitters as they are, and without the extremes (then added as jumps)
    for cut in (slice(None), slice(3, -3)):
        v, e, n_equal = values[cut], equal[cut], (le - lt)[cut]
        b = np.concatenate([below[cut][:v.size], [7.0]])
        for counts in (n_equal, e):  # integer row counts, or the float ones
            ref = _from_counts(v, b, e, counts, stats, integral)
            got = from_counts(v, b, e, counts, stats, integral)
            assert _same(ref[0], got[0]) and _same(ref[1], got[1])


@pytest.mark.parametrize("name", list(_columns()))
def test_invert_columns_matches_invert(name):
    sketch = CDFSketch(60).update(_columns()[name][:, None])
    x, c = sketch.knots[0]
    p = np.concatenate([np.linspace(0, 1, 1001), [1e-12, 0.5, 1 - 1e-12]])
    knots = [(x, c), (np.zeros(0), np.zeros(0)), (x[:2], c[:2])]
    for integral in (False, True):
        got = invert_columns(knots, [integral, False, integral], p)
        assert _same(got[:, 0], _invert(x, c, p, integral))
        assert np.all(np.isnan(got[:, 1]))
        assert _same(got[:, 2], _invert(x[:2], c[:2], p, integral))


def test_quantile_matches_numpy_backend():
    columns = _columns()
    X = np.column_stack([columns[name] for name in ("normal", "ties", "integers")])
    X[::7, 0] = np.nan
    p = np.linspace(0, 1, 101)
    fast = CDFSketch().update(X)
    ref = CDFSketch(backend="numpy").update(X)
    assert _same(fast.quantile(p), ref.quantile(p))
    assert _same(fast.quantile(p, "inverted_cdf"), ref.quantile(p, "inverted_cdf"))
