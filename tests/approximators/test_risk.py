"""The risk estimates of §3 (tests of §3.8)."""

import numpy as np
from scipy.stats import binom

from skshapley.approximators import (
    RunningCovariance,
    feature_error_quantiles,
    overall_error_quantile,
)


def test_merge_matches_numpy_mean_and_biased_covariance():
    draws = np.random.default_rng(128).normal(size=(500, 100))
    acc = RunningCovariance(100)
    acc.update(draws[:200])
    acc.update(draws[200:])
    np.testing.assert_allclose(acc.mean, draws.mean(axis=0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(acc.m2 / acc.n, np.cov(draws.T, bias=True), rtol=1e-12, atol=1e-14)


def test_merge_in_many_batches_equals_one_batch(rng):
    draws = rng.normal(loc=5.0, size=(97, 4))
    one, many = RunningCovariance(4), RunningCovariance(4)
    one.update(draws)
    for start in range(0, 97, 10):
        many.update(draws[start : start + 10])
    np.testing.assert_allclose(many.m2, one.m2, rtol=1e-12)
    np.testing.assert_allclose(many.std_errors(), np.sqrt(np.diag(np.cov(draws.T)) / 97),
                               rtol=1e-12)


def test_per_feature_closed_form_agrees_with_gaussian_sampling(rng):
    covariance = np.diag([1.0, 4.0, 0.25])
    closed = feature_error_quantiles(np.sqrt(np.diag(covariance)))
    samples = np.abs(rng.multivariate_normal(np.zeros(3), covariance, size=10**6))
    np.testing.assert_allclose(closed, np.quantile(samples, 0.95, axis=0), rtol=0.01)


def test_overall_quantile_on_a_singular_covariance_covers_at_95_percent():
    """§3.8 item 3: p = 10, sum-zero constraint, K = 256 draws, repeated."""
    p, n_draws, n_reps = 10, 256, 600
    rng = np.random.default_rng(3)
    basis = rng.normal(size=(p, p))
    basis -= basis.mean(axis=0)  # every draw sums to the same constant: singular covariance
    truth = np.linspace(-1, 1, p)
    hits = 0
    for _ in range(n_reps):
        draws = truth + rng.normal(size=(n_draws, p)) @ basis
        acc = RunningCovariance(p)
        acc.update(draws)
        sigma = overall_error_quantile(acc.estimate_covariance(), rng=rng)
        hits += np.linalg.norm(acc.mean - truth) <= sigma
    low, high = binom.ppf([1e-4, 1 - 1e-4], n_reps, 0.95) / n_reps
    assert low <= hits / n_reps <= high


def test_zero_covariance_gives_zero_error_and_one_draw_gives_inf():
    acc = RunningCovariance(3)
    acc.update(np.ones((5, 3)))
    assert overall_error_quantile(acc.estimate_covariance()) == 0.0
    single = RunningCovariance(3)
    single.update(np.ones((1, 3)))
    assert np.isinf(single.std_errors()).all()
    assert overall_error_quantile(single.estimate_covariance()) == np.inf


def test_shared_normal_draws_do_not_depend_on_the_widths_asked_before(monkeypatch):
    from skshapley.approximators import _risk

    narrow_first = _risk.shared_normal_draws(20).copy()
    wide = _risk.shared_normal_draws(150).copy()
    np.testing.assert_array_equal(wide[:, :20], narrow_first)
    monkeypatch.setattr(_risk, "_shared_draws", np.empty((_risk.SHARED_DRAWS, 0)))
    np.testing.assert_array_equal(_risk.shared_normal_draws(150), wide)  # wide first
    assert not _risk.shared_normal_draws(3).flags.writeable
    # standard normal: the chi-square(150) mean of the squared row norms, to 4 sigma
    squares = (wide ** 2).sum(axis=1)
    assert abs(squares.mean() - 150) < 4 * np.sqrt(2 * 150 / len(squares))
