import numpy as np
import pytest

from skshapley import Explanation


@pytest.fixture
def explanation():
    values = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]])
    return Explanation(values, np.array([0.5, 0.5]), np.arange(6.0).reshape(2, 3), ["a", "b", "c"],
                       std_errors=np.array([[0.1, 0.2, 0.0], [0.3, 0.0, 0.4]]),
                       n_evaluations=np.array([8, 8]), method="permutation")


def test_predictions_and_importance(explanation):
    np.testing.assert_allclose(explanation.predictions, [0.0, 2.5])
    np.testing.assert_allclose(explanation.mean_abs(), [2.0, 1.0, 0.75])
    np.testing.assert_allclose(explanation.mean_abs_std_errors(),
                               [np.sqrt(0.1**2 + 0.3**2) / 2, 0.1, 0.2])


def test_row_selection(explanation):
    row = explanation[1]
    assert len(row) == 1 and row.values.tolist() == [[3.0, 0.0, -1.0]]
    assert row.std_errors.tolist() == [[0.3, 0.0, 0.4]] and row.n_evaluations.tolist() == [8]


def test_feature_names_must_match():
    with pytest.raises(ValueError, match="values has 2 features but feature_names has 3"):
        Explanation(np.zeros((1, 2)), np.zeros(1), np.zeros((1, 2)), ["a", "b", "c"])


def test_to_shapiq(explanation):
    pytest.importorskip("shapiq")
    converted = explanation.to_shapiq(row=1)
    assert converted[(0,)] == 3.0 and converted[(2,)] == -1.0 and converted[()] == 0.5
    assert converted.estimated and converted.estimation_budget == 8
