"""Games whose Shapley values are known in closed form: test oracles and benchmarks."""

from __future__ import annotations

import numpy as np

from skshapley.games._base import Game


class AdditiveGame(Game):
    """v(S) = intercept + sum_{j in S} weights[j]; its Shapley values are the weights.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.games import AdditiveGame
    >>> AdditiveGame([1.0, -2.0]).exact_values()
    array([ 1., -2.])
    """

    def __init__(self, weights, intercept=0.0, *, cache=False):
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim != 1:
            raise ValueError(f"weights must be 1-D; got shape {weights.shape}.")
        super().__init__(weights.shape[0], cache=cache)
        self.weights = weights
        self.intercept = float(intercept)

    def _values(self, coalitions):
        return self.intercept + coalitions @ self.weights

    def exact_values(self):
        """Closed-form Shapley values (the weights)."""
        return self.weights.copy()


class UnanimityGame(Game):
    r"""A sum of unanimity games, :math:`v(S) = \sum_T c_T \, 1[T \subseteq S]`.

    Its Shapley values are :math:`\phi_i = \sum_{T \ni i} c_T / |T|` (Shapley 1953).

    Parameters
    ----------
    carriers : bool array-like (n_terms, n_players)
        Row t is the mask of carrier T_t (non-empty).
    coefficients : array-like (n_terms,), optional
        c_T; ones by default.

    Examples
    --------
    >>> from skshapley.games import UnanimityGame
    >>> UnanimityGame([[True, True, False]]).exact_values()
    array([0.5, 0.5, 0. ])
    """

    def __init__(self, carriers, coefficients=None, *, cache=False):
        carriers = np.atleast_2d(np.asarray(carriers, dtype=bool))
        if not carriers.any(axis=1).all():
            raise ValueError("every carrier must contain at least one player.")
        super().__init__(carriers.shape[1], cache=cache)
        if coefficients is None:
            coefficients = np.ones(carriers.shape[0])
        self.carriers = carriers
        self.coefficients = np.asarray(coefficients, dtype=np.float64)

    def _values(self, coalitions):
        # T ⊆ S  <=>  no player of T is missing from S.
        contains = ~((~coalitions[:, None, :]) & self.carriers[None, :, :]).any(axis=2)
        return contains.astype(np.float64) @ self.coefficients

    def exact_values(self):
        """Closed-form Shapley values sum_{T ∋ i} c_T / |T|."""
        sizes = self.carriers.sum(axis=1)
        return (self.carriers * (self.coefficients / sizes)[:, None]).sum(axis=0)
