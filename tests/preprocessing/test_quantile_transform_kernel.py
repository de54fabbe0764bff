"""MomentQuantileTransformer.transform by the numba kernel (issue 31, speed): sklearn's
QuantileTransformer._transform_col bit for bit on the same quantiles, point masses and
integer columns included, in any layout and however the parts are run."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.preprocessing import QuantileTransformer

from skshapley import MomentQuantileTransformer, config_context
from skshapley.preprocessing._transform_kernels import interp_table, transform_columns


def _columns(rng, n):
    """Columns whose quantiles repeat (point masses, integers, zero inflation) and ones
    whose quantiles do not (normal, heavy tails, an offset)."""
    return np.column_stack([
        rng.normal(size=n),
        rng.poisson(3.0, n).astype(float),
        np.where(rng.random(n) < 0.6, 0.0, rng.lognormal(1, 1, n)),
        rng.lognormal(0, 2, n),
        rng.integers(0, 200, n).astype(float),
        np.where(rng.random(n) < 0.3, rng.choice([1.0, 2.5, 7.0], n), rng.normal(3, 2, n)),
        rng.normal(1e9, 1.0, n),
        rng.standard_cauchy(n),
    ])


def _queries(rng, X):
    """The fitted values, values between and beyond them, and NaN."""
    Q = np.vstack([X, X + 1e-9, rng.normal(size=(300, X.shape[1])) * 30,
                   X[:50] * 1.5 - 1])
    Q[rng.random(Q.shape) < 0.02] = np.nan
    return Q


@pytest.mark.parametrize("output_distribution", ["uniform", "normal"])
@pytest.mark.parametrize("n_quantiles", [1000, 37])
def test_transform_is_sklearns_on_the_same_quantiles(rng, output_distribution,
                                                     n_quantiles):
    X = _columns(rng, 20_000)
    ours = MomentQuantileTransformer(n_quantiles=n_quantiles,
                                     output_distribution=output_distribution).fit(X)
    ref = QuantileTransformer(n_quantiles=n_quantiles,
                              output_distribution=output_distribution).fit(X)
    ref.quantiles_ = ours.quantiles_.copy()
    assert np.any(np.diff(ref.quantiles_, axis=0) == 0)  # repeated quantiles in there
    Q = _queries(rng, X)
    expected = ref.transform(Q)
    tied = np.any(np.diff(ours.quantiles_, axis=0) == 0, axis=0)
    for layout in ("C", "F"):
        got = ours.transform(np.asarray(Q, order=layout))
        # the columns' ranges are >= 1, where the normal output's bound rule is sklearn's;
        # sklearn averages the interpolations from both sides on every column, which the
        # kernel does where quantiles repeat (the same bits there) and np.interp does
        # alone elsewhere (equal to round-off)
        np.testing.assert_array_equal(got[:, tied], expected[:, tied])
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"sketch": "moments"}, {"output_distribution": "normal"}])
def test_kernel_equals_the_numpy_backend(rng, kw):
    X = _columns(rng, 30_000)
    X[rng.random(X.shape) < 0.03] = np.nan
    model = MomentQuantileTransformer(**kw).fit(X)
    Q = _queries(rng, X)
    with config_context(backend="numpy"):
        slow = model.transform(Q)  # np.interp, or sklearn's rule where quantiles repeat
    fast = model.transform(Q)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fast, slow)  # in fact the same bits


def test_columns_without_a_table_and_column_subsets(rng):
    X = rng.normal(size=(500, 4))
    X[:, 1] = np.nan  # no finite value at fit: NaN out, as sklearn
    model = MomentQuantileTransformer().fit(X)
    Q = rng.normal(size=(200, 4))
    with config_context(backend="numpy"):
        slow = model.transform(Q)
    np.testing.assert_array_equal(model.transform(Q), slow)
    assert np.all(np.isnan(model.transform(Q)[:, 1]))
    # a single row: one quantile per column (sklearn's rule, outside the kernel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        one = MomentQuantileTransformer().fit(X[:1, [0, 2]])
    with config_context(backend="numpy"):
        slow = one.transform(Q[:, [0, 2]])
    np.testing.assert_array_equal(one.transform(Q[:, [0, 2]]), slow)


def test_parts_in_any_order_give_the_same_bits(rng):
    X = _columns(rng, 5_000)
    model = MomentQuantileTransformer().fit(X)
    table = interp_table(model.quantiles_, model.references_)
    Q = _queries(rng, X)
    Q = np.vstack([Q] * 20)  # enough rows for several parts

    def reversed_parts(call, n_parts, work):
        assert n_parts > 1
        for part in reversed(range(n_parts)):
            call(part, part + 1)
    for layout in ("C", "F"):
        serial = transform_columns(np.array(Q, order=layout), table)
        parts = transform_columns(np.array(Q, order=layout), table, run=reversed_parts)
        np.testing.assert_array_equal(parts, serial)
        np.testing.assert_array_equal(serial, model.transform(Q))


def test_heavy_tails_match_np_interp(rng):
    x = rng.lognormal(0, 2, 50_000)
    q = np.quantile(x, np.linspace(0, 1, 1000))
    refs = np.linspace(0, 1, 1000)
    Q = np.concatenate([x, rng.lognormal(0, 3, 10_000), [0.0, 1e-300, 1e300]])
    out = transform_columns(Q[:, None].copy(), interp_table(q[:, None], refs))
    np.testing.assert_array_equal(out[:, 0], np.interp(Q, q, refs))


def test_the_cached_table_is_not_pickled(rng):
    X = _columns(rng, 5_000)
    model = MomentQuantileTransformer().fit(X)
    before = len(pickle.dumps(model))
    expected = model.transform(X)
    assert len(pickle.dumps(model)) == before
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.transform(X), expected)
    # the output distribution is read at transform time, as before
    model.set_params(output_distribution="normal")
    with config_context(backend="numpy"):
        slow = model.transform(X)
    np.testing.assert_array_equal(model.transform(X), slow)


@pytest.mark.parametrize("n_cells", [16, 4096])
def test_crowded_cells_and_table_sizes(rng, n_cells):
    # few cells: many quantiles share one, found by halves instead of a scan
    x = np.concatenate([rng.normal(size=5000), rng.integers(0, 30, 5000).astype(float)])
    q = np.quantile(x, np.linspace(0, 1, 500))
    refs = np.linspace(0, 1, 500)
    Q = np.concatenate([x, x + 0.25, [-1e300, 1e300, np.nan]])[:, None]
    ours = transform_columns(Q.copy(), interp_table(q[:, None], refs, n_cells=n_cells))
    ref = QuantileTransformer(n_quantiles=500).fit(x[:, None])
    ref.quantiles_ = q[:, None]
    np.testing.assert_array_equal(ours, ref.transform(Q))
    # the default size shrinks with the number of columns
    assert interp_table(np.tile(q[:, None], 2), refs)["first"].shape[1] == 65_537
    assert interp_table(np.tile(q[:, None], 1000), refs)["first"].shape[1] == 4097
