"""Error measures of skshapley.metrics: values on small hand-checked inputs and the
refusal of parameters outside their domain."""

import numpy as np
import pytest

from skshapley.metrics import niae, precision_at_k, quantile_niae, rank_error, shapley_mse

REFERENCE = [3.0, 2.0, 1.0]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_precision_at_k_is_one_for_a_perfect_estimate(k):
    assert precision_at_k(REFERENCE, REFERENCE, k=k) == 1.0


@pytest.mark.parametrize("k", [-1, 0, 4, 5])
def test_precision_at_k_refuses_k_outside_one_to_n_players(k):
    # k=5 scored a perfect estimate 0.6, k=-1 scored -2.0, k=0 divided by zero
    # k < 1 by the parameter constraint, k > n_players by the check against the data
    with pytest.raises(ValueError, match=rf"'k' parameter of precision_at_k must be .*"
                       rf"(\[1, inf\)\. Got {k} instead|\[1, n_players=3\]; got k={k})\."):
        precision_at_k(REFERENCE, REFERENCE, k=k)


@pytest.mark.parametrize("k", [2.0, True, "2"])
def test_precision_at_k_refuses_a_non_integer_k(k):
    with pytest.raises(TypeError, match="'k' parameter of precision_at_k must be an int"):
        precision_at_k(REFERENCE, REFERENCE, k=k)


def test_precision_at_k_scores_two_dimensional_input_row_by_row():
    # used to fail with "unhashable type: 'list'"; row 0 agrees on its top 1 (index 0),
    # row 1 does not (index 2 against index 0): the mean share is 0.5
    estimate = np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]])
    reference = np.array([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0]])
    assert precision_at_k(estimate, reference, k=1) == 0.5
    # and each row equals the 1-D score of that row
    assert precision_at_k(estimate, reference, k=2) == np.mean(
        [precision_at_k(e, r, k=2) for e, r in zip(estimate, reference, strict=True)])


@pytest.mark.parametrize("metric", [precision_at_k, niae])
def test_row_metrics_refuse_more_than_two_dimensions(metric):
    values = np.ones((2, 2, 2))
    kwargs = {"k": 1} if metric is precision_at_k else {}
    with pytest.raises(ValueError, match=r"1-D \(n_players,\) or 2-D .* shape \(2, 2, 2\)"):
        metric(values, values, **kwargs)


@pytest.mark.parametrize("metric", [shapley_mse, niae, precision_at_k])
def test_metrics_refuse_empty_input(metric):
    # the mean over no entries is NaN, which would read as a score
    kwargs = {"k": 1} if metric is precision_at_k else {}
    with pytest.raises(ValueError, match=rf"{metric.__name__} needs at least one value"):
        metric([], [], **kwargs)


@pytest.mark.parametrize("metric", [quantile_niae, rank_error])
@pytest.mark.parametrize("bad", [-0.05, 1.5, np.nan])
def test_quantile_metrics_refuse_probabilities_outside_zero_one(metric, bad):
    # quantile_niae(x, [10, 10], p=[-0.05, 1]) scored 0: floor(11 * -0.05) = -1 wrapped to
    # the largest element, 10
    x = np.arange(11.0)
    with pytest.raises(ValueError, match=rf"'p' parameter of {metric.__name__} must hold "
                       rf"probabilities in \[0, 1\]; got {bad!r} at index 0\."):
        metric(x, [10.0, 10.0], p=[bad, 1.0])


@pytest.mark.parametrize("metric", [quantile_niae, rank_error])
def test_quantile_metrics_refuse_empty_p_and_two_dimensional_x(metric):
    with pytest.raises(ValueError, match=rf"'p' parameter of {metric.__name__} must be a "
                       r"non-empty 1-D array"):
        metric(np.arange(11.0), [], p=[])
    with pytest.raises(ValueError, match=r"x must be a 1-D sample .* shape \(3, 2\)"):
        metric(np.ones((3, 2)), [1.0], p=[0.5])


def test_quantile_niae_at_the_ends_of_zero_one():
    # p = 0 and p = 1 are the minimum and maximum of x; estimating both exactly scores 0,
    # estimating both at the midpoint scores (5 + 5) / 2 / span 10 = 0.5
    x = np.arange(11.0)
    assert quantile_niae(x, [0.0, 10.0], p=[0.0, 1.0]) == 0.0
    assert quantile_niae(x, [5.0, 5.0], p=[0.0, 1.0]) == 0.5
