"""``skshapley.plotting.topk``: estimates, intervals, the chosen set and the cut."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression

from skshapley import TopKShapleySelector
from skshapley.approximators import topk_shapley
from skshapley.games import UnanimityGame
from skshapley.plotting import topk

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_topk_plot_of_a_result_draws_cut_and_renders(tmp_path):
    carriers = np.vstack([np.eye(5, dtype=bool), [[True, False, False, True, False]]])
    game = UnanimityGame(carriers, [1.0, 0.2, 0.8, 0.1, 0.5, 0.3])
    result = topk_shapley(game, 2, method="cmcs", budget=600, pac_stop=False,
                          random_state=0)
    ax = topk(result, feature_names=list("abcde"))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    # Chosen first (largest estimate first), then the others.
    chosen = [list("abcde")[j] for j in result.top_k]
    assert labels[:2] == chosen
    # The cut is one dashed horizontal line between rows 2 and 3 (y = 4, 3, 2, ...).
    cuts = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(cuts) == 1 and cuts[0].get_ydata()[0] == 2.5
    path = tmp_path / "topk.png"
    ax.figure.savefig(path)
    plt.close(ax.figure)
    assert path.read_bytes()[:8] == PNG_MAGIC


def test_topk_plot_of_a_selector_uses_its_names(rng, tmp_path):
    import pandas as pd

    X = pd.DataFrame(rng.normal(size=(80, 4)), columns=["w", "x", "y", "z"])
    target = 2 * X["y"] + X["w"]
    selector = TopKShapleySelector(LinearRegression(), k=1, random_state=0).fit(X, target)
    ax = topk(selector, max_display=3)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["y", "w", "x"]
    assert "lsspa_exact" in ax.get_title(loc="left")
    plt.close(ax.figure)


def test_topk_plot_rejects_feature_names_of_the_wrong_length(rng):
    X = rng.normal(size=(40, 4))
    selector = TopKShapleySelector(LinearRegression(), k=1, random_state=0).fit(X, X[:, 2])
    with pytest.raises(ValueError, match=r"'feature_names' parameter of topk must have one "
                                         r"name per feature \(4\); got 2"):
        topk(selector, feature_names=["a", "b"])


def test_topk_plot_of_an_unfitted_selector_says_so():
    with pytest.raises(NotFittedError, match="TopKShapleySelector instance is not fitted"):
        topk(TopKShapleySelector(LinearRegression(), k=1))
