"""Permutation kernels and the discrepancy (§2.3, §2.5) against brute force."""

import itertools

import numpy as np
import pytest

from skshapley.permutations import (
    Antithetic,
    MonteCarlo,
    discordant_pairs,
    discrepancy,
    kendall_kernel,
    kernel_expectation,
    mallows_expectation,
    mallows_kernel,
    spearman_kernel,
)

# §2.3 reference table (measured there; brute force for d <= 6).
E4 = {2: 0.5091578, 3: 0.2807461, 4: 0.2142918, 5: 0.1873287, 6: 0.1734260, 10: 0.1530353,
      50: 0.1379374, 200: 0.1359487, 1000: 0.1354561}
E5 = {2: 0.5033690, 3: 0.2426395, 4: 0.1655126, 5: 0.1355107, 6: 0.1205451, 10: 0.0994183,
      50: 0.0845642, 200: 0.0826671, 1000: 0.0821995}


def _all_orders(d):
    return np.array(list(itertools.permutations(range(d))), dtype=np.int64)


@pytest.mark.parametrize("d", sorted(E4))
def test_mallows_expectation_matches_the_reference_table(d):
    assert mallows_expectation(d, 4.0) == pytest.approx(E4[d], abs=5e-8)
    assert mallows_expectation(d, 5.0) == pytest.approx(E5[d], abs=5e-8)


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("kernel", ["mallows", "kendall", "spearman"])
def test_uniform_expectations_equal_the_mean_over_all_orderings(d, kernel):
    every = _all_orders(d)
    gram = {"mallows": mallows_kernel, "kendall": kendall_kernel,
            "spearman": spearman_kernel}[kernel](every)
    # right invariance: every row has the same mean, and it is the closed form
    np.testing.assert_allclose(gram.mean(axis=1), kernel_expectation(kernel, d), rtol=1e-12,
                               atol=1e-14)


def test_kernels_compare_rank_vectors_not_positions(rng):
    d = 7
    a, b = (np.argsort(rng.random((1, d)), axis=1) for _ in range(2))
    ranks_a, ranks_b = np.argsort(a[0]), np.argsort(b[0])
    brute = sum((ranks_a[i] < ranks_a[j]) != (ranks_b[i] < ranks_b[j])
                for i in range(d) for j in range(i + 1, d))
    assert discordant_pairs(a, b)[0, 0] == brute
    reverse = a[:, ::-1]
    assert kendall_kernel(a, reverse)[0, 0] == -1.0
    assert mallows_kernel(a, reverse, lam=4.0)[0, 0] == pytest.approx(np.exp(-4.0))
    assert spearman_kernel(a, reverse)[0, 0] == d * (d + 1) * (d + 2) / 6


def test_discrepancy_equals_brute_force_with_explicit_means(rng):
    d = 5
    every = _all_orders(d)
    sample = every[rng.choice(len(every), size=9)]
    weights = rng.random(9)
    full = mallows_kernel(every)
    mean_all = full.mean()
    cross = mallows_kernel(sample, every).mean(axis=1)
    brute = mean_all - 2 * weights @ cross + weights @ mallows_kernel(sample) @ weights
    assert discrepancy(sample, weights) == pytest.approx(np.sqrt(brute), rel=1e-10)
    # invariant to the order of the sample and to relabelling the players
    perm = rng.permutation(9)
    assert discrepancy(sample[perm], weights[perm]) == pytest.approx(discrepancy(sample, weights))
    relabel = rng.permutation(d)
    assert discrepancy(relabel[sample], weights) == pytest.approx(discrepancy(sample, weights))


@pytest.mark.parametrize("sampler, closed_form", [
    (MonteCarlo, lambda E, lam, n: (1 - E) / n),
    (Antithetic, lambda E, lam, n: (1 + np.exp(-lam) - 2 * E) / n),
])
def test_expected_squared_discrepancy_closed_forms(sampler, closed_form):
    """§2.5: E[D^2] = (1 - E_d)/n for MC and (1 + e^-lam - 2 E_d)/n for antithetic;
    the mean over 300 seeds must be within 5 standard errors."""
    d, n, lam = 10, 10, 4.0
    squared = np.array([discrepancy(sampler(d, rng=seed).random(n)) ** 2 for seed in range(300)])
    expected = closed_form(mallows_expectation(d, lam), lam, n)
    assert abs(squared.mean() - expected) < 5 * squared.std(ddof=1) / np.sqrt(squared.size)


def test_bad_orders_are_rejected():
    with pytest.raises(ValueError, match="permutation of 0..2"):
        discrepancy([[0, 0, 1]])
    with pytest.raises(ValueError, match="'kernel' parameter"):
        discrepancy([[0, 1]], kernel="gauss")
