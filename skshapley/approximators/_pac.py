"""The PAC rule of top-k identification (Kolpaczki, Nielen & Hüllermeier, CMCS): the
Bonferroni z of the confidence intervals, the order of the players and whether the top k
are certified within epsilon."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


def bonferroni_z(delta, n_players):
    """z of two-sided intervals that hold for all players at once with probability
    about ``1 - delta`` (Bonferroni, as in SHAP@K, Kariyappa et al. 2024).

    Examples
    --------
    >>> from skshapley.approximators import bonferroni_z
    >>> round(bonferroni_z(0.05, 1), 2)
    1.96
    """
    return float(norm.ppf(1.0 - delta / (2 * n_players)))


def order_players(values):
    """Players by decreasing estimate, ties by lower index.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.approximators import order_players
    >>> order_players(np.array([0.1, 0.5, 0.1, 0.3])).tolist()
    [1, 3, 0, 2]
    """
    return np.argsort(-values, kind="stable")


def pac_rule_holds(values, lower, upper, k, epsilon, order=None):
    """SHAP@K's rule (Kariyappa et al. 2024): no outsider's upper bound exceeds the lowest
    lower bound among the chosen k by more than ``epsilon`` (always true when k is
    everyone).

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.approximators import pac_rule_holds
    >>> values = np.array([1.0, 0.2, 0.5])
    >>> pac_rule_holds(values, values - 0.1, values + 0.1, k=2, epsilon=0.0)
    True
    >>> pac_rule_holds(values, values - 0.2, values + 0.2, k=2, epsilon=0.0)
    False
    """
    if k == values.shape[0]:
        return True
    order = order_players(values) if order is None else order
    return bool(upper[order[k:]].max() - lower[order[:k]].min() <= epsilon)
