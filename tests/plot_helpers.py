"""What the plotting tests share: the Agg backend, a figure cleanup, a test explanation
whose importance order is known, and the normal quantile of 95 % bars."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from skshapley import Explanation  # noqa: E402

Z95 = 1.959963984540054  # two-sided 95 % normal quantile


@pytest.fixture(autouse=True)
def close_figures():
    """Close every figure after each test. Autouse in every module that imports it."""
    yield
    plt.close("all")


def sample_explanation(rng):
    """12 rows of 5 features whose scales make the importance order clear: a, c, e, b,
    d; base value 7, standard errors about 0.1."""
    values = rng.normal(size=(12, 5)) * [5.0, 1.0, 3.0, 0.5, 2.0]
    return Explanation(values, np.full(12, 7.0), rng.normal(size=(12, 5)), list("abcde"),
                       std_errors=np.abs(rng.normal(size=(12, 5))) * 0.1, method="permutation")


def importance_order(explanation):
    """Feature positions by decreasing mean |value| (ties by position)."""
    return np.argsort(-explanation.mean_abs(), kind="stable")
