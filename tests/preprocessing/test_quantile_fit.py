"""``MomentQuantileTransformer.fit`` through the CDF sketch's column fast paths (tested
themselves in ``tests/sketch/test_cdf_column_paths.py``): infinities refused with the
state kept, and ``partial_fit`` and sample weights giving the exact tables of one fit."""

import pickle

import numpy as np
import pytest

from skshapley import MomentQuantileTransformer
from skshapley.sketch import CDFSketch


def _unique(x, w=None):
    """Sorted distinct kept values and their weights."""
    w = np.ones(x.size) if w is None else w
    keep = ~np.isnan(x) & (w > 0)
    values, inverse = np.unique(x[keep], return_inverse=True)
    return values, np.bincount(inverse, weights=w[keep], minlength=values.size)


@pytest.mark.parametrize("rows", [500, 20_000, 400_000])
def test_fit_refuses_infinity_and_keeps_its_state(rows):
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.poisson(3.0, rows), rng.normal(size=rows),
                         np.where(rng.random(rows) < 0.6, 0.0, rng.random(rows))])
    mqt = MomentQuantileTransformer().fit(X)
    before = pickle.dumps(mqt.sketch_)
    for j in range(3):
        for order in ("C", "F"):
            bad = np.array(X, order=order)
            bad[-2, j] = -np.inf if j else np.inf
            with pytest.raises(ValueError, match="infinity"):
                mqt.partial_fit(bad)
            with pytest.raises(ValueError, match="infinity"):
                MomentQuantileTransformer().fit(bad)
    assert pickle.dumps(mqt.sketch_) == before


def test_partial_fit_and_weights_on_the_fast_paths():
    rng = np.random.default_rng(5)
    x = rng.poisson(3.0, 100_000).astype(float)
    x[::11] = np.nan
    X = np.asfortranarray(np.column_stack([x, rng.integers(0, 7, x.size) / 2]))
    whole = MomentQuantileTransformer().fit(X)
    parts = MomentQuantileTransformer().fit(X[:30_000]).partial_fit(X[30_000:])
    assert whole.sketch_.exact == parts.sketch_.exact
    np.testing.assert_array_equal(whole.quantiles_, parts.quantiles_)
    np.testing.assert_array_equal(whole.transform(X), parts.transform(X))
    w = rng.random(x.size)
    w[::5] = 0.0
    weighted = MomentQuantileTransformer().fit(X, sample_weight=w)
    for j in range(2):
        values, weights = _unique(X[:, j], w)
        table = dict(zip(values.tolist(), weights.tolist(), strict=True))
        assert weighted.sketch_.exact[j] == table
    with_numpy = CDFSketch(backend="numpy").update(X)  # the reference, no fast path
    assert with_numpy.exact == whole.sketch_.exact


def test_checks_skipped_for_known_values_still_refuse_and_record():
    """fit skips scikit-learn's parameter checks for a set of plain values that passed
    them, and validate_data for a plain float64 array: both must still refuse what they
    refuse and record what they record."""
    pd = pytest.importorskip("pandas")
    from sklearn.utils._param_validation import InvalidParameterError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    model = MomentQuantileTransformer().fit(X)
    assert model.n_features_in_ == 3 and not hasattr(model, "feature_names_in_")
    for bad in ({"n_quantiles": 0}, {"n_quantiles": 10.0}, {"n_knots": True},
                {"output_distribution": "cauchy"}):
        with pytest.raises(InvalidParameterError):
            MomentQuantileTransformer(**bad).fit(X)
    # names recorded from a frame, then dropped by a fit on an array
    model.fit(pd.DataFrame(X, columns=["a", "b", "c"]))
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    model.fit(X[:, :2])
    assert model.n_features_in_ == 2 and not hasattr(model, "feature_names_in_")
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X)
    assert model.n_features_in_ == 2
    # other dtypes, layouts and empty arrays take scikit-learn's path
    for other in (X.astype(np.float32), np.asfortranarray(X), X[:, ::2]):
        assert MomentQuantileTransformer().fit(other).n_features_in_ == other.shape[1]
    with pytest.raises(ValueError):
        MomentQuantileTransformer().fit(X[:0])
    with pytest.raises(ValueError):
        MomentQuantileTransformer().fit(np.zeros((5, 0)))
    # the same quantiles either way
    ref = MomentQuantileTransformer().fit(X.tolist())
    assert np.array_equal(MomentQuantileTransformer().fit(X).quantiles_, ref.quantiles_)
