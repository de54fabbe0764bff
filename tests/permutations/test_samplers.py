"""Contract tests shared by every sampler, and each sampler's own properties (§2)."""

import math

import numpy as np
import pytest

from skshapley.approximators import exact_shapley, permutation_shapley
from skshapley.games import UnanimityGame
from skshapley.permutations import (
    SAMPLERS,
    Antithetic,
    KernelHerding,
    MonteCarlo,
    Orthogonal,
    Philox,
    SequentialBayesianQuadrature,
    SobolSphere,
    chi2_uniformity_test,
    discrepancy,
    kendall_kernel,
    mmd_uniformity_test,
)

ALL = sorted(SAMPLERS)
# Herding and SBQ choose orderings deterministically from candidates: their rows are
# not uniformly distributed, so the uniformity tests exclude them (as the issue says).
UNBIASED = ["mc", "antithetic", "orthogonal", "sobol", "argsort_sobol", "philox"]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("d", [1, 2, 3, 5, 12])
def test_rows_are_permutations_for_every_n(name, d):
    n_max = 5 if (name == "sbq" and d <= 3) else 13
    if name == "sbq":
        n_max = min(n_max, math.factorial(d))
    for n in range(n_max + 1):
        orders = SAMPLERS[name](d, rng=3).random(n)
        assert orders.shape == (n, d) and orders.dtype == np.int64
        np.testing.assert_array_equal(np.sort(orders, axis=1), np.tile(np.arange(d), (n, 1)))


@pytest.mark.parametrize("name", ALL)
def test_determinism_reset_and_chunking(name):
    d = 6
    whole = SAMPLERS[name](d, rng=11).random(9)
    sampler = SAMPLERS[name](d, rng=11)
    parts = np.vstack([sampler.random(2), sampler.random(0), sampler.random(3), sampler.random(4)])
    np.testing.assert_array_equal(parts, whole)
    assert sampler.num_generated == 9
    np.testing.assert_array_equal(sampler.reset().random(9), whole)
    assert not np.array_equal(SAMPLERS[name](d, rng=12).random(9), whole)


def _independent_rows(name, d, n, seed):
    """n independent, marginally uniform rows: one row per independent block, or the
    first row of independent replicates for a single dependent stream (QMC, §2.9)."""
    sampler = SAMPLERS[name](d, rng=seed)
    if sampler.block_size is None:
        return np.array([SAMPLERS[name](d, rng=seed + r).random(1)[0] for r in range(n)])
    return sampler.random(n * sampler.block_size)[:: sampler.block_size]


@pytest.mark.parametrize("name", UNBIASED)
def test_chi_square_uniformity_at_d5(name):
    result = chi2_uniformity_test(_independent_rows(name, 5, 120 * 20, seed=2026), alpha=1e-3)
    assert result.passed, result


@pytest.mark.parametrize("name", UNBIASED)
def test_mmd_uniformity_at_d20(name):
    result = mmd_uniformity_test(_independent_rows(name, 20, 2000, seed=7), alpha=1e-3)
    assert result.passed, result


def test_uniformity_tests_reject_biased_samples():
    # herding's picks are not uniform: consecutive rows are deliberately dissimilar
    assert not mmd_uniformity_test(KernelHerding(20, rng=0).random(400)).passed
    # an antithetic stream's consecutive rows are reverses: MMD sees the dependence
    antithetic = mmd_uniformity_test(Antithetic(100, rng=0).random(2000))
    assert not antithetic.passed and antithetic.statistic == pytest.approx(-0.0765, abs=2e-3)
    few = np.tile(np.arange(5), (600, 1))
    assert not chi2_uniformity_test(few).passed
    with pytest.raises(ValueError, match="at least 5 orderings per cell"):
        chi2_uniformity_test(MonteCarlo(5, rng=0).random(100))


def test_reference_thresholds():
    """§2.9: CLT threshold 1.342e-3 at d = 5 and chi-square critical value 145.46."""
    mc = MonteCarlo(5, rng=0).random(100_000)
    assert mmd_uniformity_test(mc).threshold == pytest.approx(1.342e-3, rel=1e-3)
    assert chi2_uniformity_test(mc).threshold == pytest.approx(145.46, rel=1e-4)


def test_orthogonal_frame_is_orthonormal_and_sum_free():
    frame = Orthogonal(9, rng=0).frame()
    np.testing.assert_allclose(frame @ frame.T, np.eye(8), atol=1e-10)
    assert np.abs(frame.sum(axis=1)).max() < 1e-12
    orders = Orthogonal(9, rng=0).random(16)
    np.testing.assert_array_equal(kendall_kernel(orders[0::2], orders[1::2]).diagonal(), -1.0)


def test_sobol_d3_is_balanced():
    for seed in range(20):
        orders = SobolSphere(3, rng=seed).random(256)
        _, counts = np.unique(orders @ [1, 3, 9], return_counts=True)
        assert counts.size == 6 and np.abs(counts - 256 / 6).max() <= 2


def test_sobol_d2_alternates():
    orders = SobolSphere(2, rng=1).random(4)
    np.testing.assert_array_equal(orders[0], orders[1][::-1])
    np.testing.assert_array_equal(orders[0], orders[2])


def test_greedy_samplers_lower_the_discrepancy():
    """§2.7 at d = 10, n = 100: herding 0.0590, SBQ 0.0558, antithetic 0.0838 (published)."""
    herding = KernelHerding(10, rng=0).random(100)
    sbq = SequentialBayesianQuadrature(10, rng=0)
    sbq_orders = sbq.random(100)
    antithetic = Antithetic(10, rng=0).random(100)
    assert discrepancy(herding) == pytest.approx(0.059, abs=0.003)
    assert discrepancy(sbq_orders, sbq.weights) == pytest.approx(0.0558, abs=0.003)
    assert discrepancy(sbq_orders, sbq.weights) < discrepancy(herding) < discrepancy(antithetic)


def test_sbq_weights_solve_the_kernel_system():
    from skshapley.permutations import mallows_kernel

    sampler = SequentialBayesianQuadrature(7, rng=2)
    orders = sampler.random(15)
    solved = np.linalg.solve(mallows_kernel(orders), np.ones(15))
    np.testing.assert_allclose(sampler.weights, solved / solved.sum(), rtol=1e-8)
    with pytest.raises(ValueError, match="exceeds d! = 6"):
        SequentialBayesianQuadrature(3, rng=0).random(7)


@pytest.mark.parametrize("name", ALL)
def test_every_sampler_is_efficient_gives_dummies_zero_and_converges(name):
    carriers = np.array([[1, 1, 0, 0, 0, 0], [0, 1, 1, 1, 0, 0], [0, 0, 0, 1, 1, 0]], dtype=bool)
    game = UnanimityGame(carriers, [3.0, -2.0, 1.5])  # player 5 is a dummy
    exact = exact_shapley(UnanimityGame(carriers, [3.0, -2.0, 1.5])).values
    budget = 2 + 5 * 120
    result = permutation_shapley(game, budget, sampler=name, random_state=0)
    assert result.n_evaluations <= budget
    assert result.values.sum() == pytest.approx(2.5, abs=1e-12)
    assert result.values[5] == 0.0
    assert np.abs(result.values - exact).max() < 0.35
    assert result.risk_is_heuristic == (name not in ("mc", "antithetic", "orthogonal", "philox"))


def test_philox_matches_the_reference_vectors():
    """§2.8 test vectors (b_min = 8, 24 rounds)."""
    from skshapley.backends.permutation import _numpy as reference

    keys = reference.philox_keys(0, [0])
    assert [int(k) for k in keys[0, :3]] == [0x7B1DCDAF, 0xA1B965F4, 0x8009454F]
    assert [int(k) for k in reference.philox_keys(12345, [1])[0, :3]] == [
        0x8AD9F8DB, 0xC0049EB3, 0xFEF6AAB3]
    images = reference.philox_bijection(np.arange(12, dtype=np.uint64)[None], keys, 8)
    assert images.tolist() == [[83, 137, 176, 14, 200, 8, 11, 201, 248, 216, 247, 126]]
    expected = {3: [[0, 1, 2], [2, 1, 0], [0, 2, 1]],
                5: [[0, 1, 4, 3, 2], [2, 1, 4, 0, 3], [3, 0, 2, 4, 1]],
                10: [[0, 7, 8, 5, 1, 9, 4, 3, 6, 2], [7, 2, 1, 4, 0, 5, 8, 6, 9, 3],
                     [7, 5, 9, 3, 0, 2, 4, 8, 6, 1]]}
    for d, rows in expected.items():
        sampler = Philox(d)
        sampler.seed = 12345
        assert sampler.random(3).tolist() == rows


@pytest.mark.parametrize("n_bits", range(1, 17))
def test_philox_is_a_bijection_of_the_padded_domain(n_bits):
    from skshapley.backends.permutation import _numpy as reference

    domain = np.arange(1 << n_bits, dtype=np.uint64)[None]
    images = reference.philox_bijection(domain, reference.philox_keys(99, [3]), n_bits)
    np.testing.assert_array_equal(np.sort(images[0]), domain[0])


def test_philox_random_access():
    sampler = Philox(12, rng=4)
    stream = sampler.random(10)
    np.testing.assert_array_equal(sampler.reset().fast_forward(7).random(3), stream[7:])


def test_philox_needs_its_rounds():
    # Why 24 rounds (§2.8): with 4 the keyed bijection is far from uniform on d = 5 (the
    # chi-square test rejects by a factor of 20), with 24 it passes on the same stream.
    from skshapley.backends.permutation._numpy import philox_orders
    from skshapley.permutations import chi2_uniformity_test

    out = np.empty((60_000, 5), dtype=np.int64)
    weak = chi2_uniformity_test(philox_orders(12345, 0, out.copy(), rounds=4))
    full = chi2_uniformity_test(philox_orders(12345, 0, out.copy()))
    assert not weak.passed and weak.statistic > 10 * weak.threshold
    assert full.passed


def test_tabulated_polar_inverse_cdf_matches_the_incomplete_beta_inverse():
    # §2.6: F_m^{-1}(u) = arcsin(sqrt(I^{-1}((m + 1) / 2, 1/2, 2u))) below 1/2, mirrored
    # above; the cached quintic-Hermite table must agree everywhere, tails included.
    from scipy.special import betaincinv

    from skshapley.permutations._sphere import inverse_polar_cdf

    rng = np.random.default_rng(0)
    m = np.arange(1, 301)
    u = rng.random((200, m.size))
    u[:20] = 10.0 ** -rng.uniform(1, 30, size=(20, m.size))  # far tails use the formula
    u[20:40] = 1 - u[:20]
    u[40], u[41], u[42] = 0.5, 0.0, 1.0
    w = np.minimum(u, 1 - u)
    low = np.arcsin(np.sqrt(betaincinv((m + 1) / 2, 0.5, 2 * w)))
    expected = np.where(u <= 0.5, low, np.pi - low)
    got = inverse_polar_cdf(u, m)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)
    # relative accuracy near the poles, where the angle itself is tiny
    near = np.minimum(expected, np.pi - expected) > 0
    pole_distance = np.minimum(expected, np.pi - expected)[near]
    assert np.all(np.abs(got - expected)[near] <= 1e-9 * pole_distance + 1e-15)
    # the sine-law density m = 1 has the closed form arccos(1 - 2u) = 2 arcsin(sqrt(u))
    lower = u[:, :1] <= 0.5
    closed = np.where(lower, 2 * np.arcsin(np.sqrt(np.where(lower, u[:, :1], 0.0))),
                      np.pi - 2 * np.arcsin(np.sqrt(np.where(lower, 0.0, 1 - u[:, :1]))))
    np.testing.assert_allclose(inverse_polar_cdf(u[:, :1], 1), closed, rtol=1e-9, atol=1e-15)
