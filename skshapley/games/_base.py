"""The game protocol: a value function on boolean coalition masks, with a counter."""

from __future__ import annotations

from numbers import Integral

import numpy as np


def coalition_keys(coalitions):
    """One ``bytes`` key per row of the bool masks ``coalitions`` (their packed bits),
    for sets and dicts of coalitions: one conversion of the packed rows (a ``tobytes``
    call per row took 3x as long on 500 rows)."""
    packed = np.ascontiguousarray(np.packbits(coalitions, axis=1))
    return packed.view(np.dtype((np.void, packed.shape[1]))).ravel().tolist()


class Game:
    r"""Base class of cooperative games :math:`v: 2^N \to \mathbb{R}` or :math:`\mathbb{R}^k`.

    Subclasses implement ``_values(coalitions)``; the public :meth:`values` validates the
    masks, counts evaluations, consults the optional cache and checks the output.

    Parameters
    ----------
    n_players : int
        Number of players d; players are 0..d-1.
    cache : bool, default=False
        Remember values by coalition, so a repeated coalition costs nothing and is not
        counted again. Worth it only when coalitions repeat (small d, exact methods).

    Attributes
    ----------
    n_evaluations : int
        Distinct coalition evaluations made so far (the budget unit; see the user guide,
        "Budgets and error bars").
    output_shape : tuple or None
        ``()`` for a scalar game, ``(k,)`` for k outputs; ``None`` until the first call.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.games import CallableGame
    >>> game = CallableGame(lambda S: S.sum(axis=1).astype(float), n_players=3)
    >>> game.values(np.array([[True, False, True]]))
    array([2.])
    >>> game.n_evaluations
    1
    """

    def __init__(self, n_players: int, *, cache: bool = False):
        if isinstance(n_players, bool) or not isinstance(n_players, Integral) or n_players < 1:
            raise ValueError(
                f"The 'n_players' parameter must be an integer >= 1; got {n_players!r}."
            )
        self.n_players = int(n_players)
        self.cache = bool(cache)
        self.n_evaluations = 0
        self.output_shape = None
        self._cache: dict[bytes, np.ndarray] = {}

    # -- to implement -------------------------------------------------------------------
    def _values(self, coalitions: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # -- public -------------------------------------------------------------------------
    def values(self, coalitions) -> np.ndarray:
        """Evaluate the game on a batch of coalitions.

        Parameters
        ----------
        coalitions : bool array-like (m, n_players)
            Row k is the membership mask of coalition k.

        Returns
        -------
        values : float64 (m,) or (m, k)
        """
        coalitions = self._check_coalitions(coalitions)
        if coalitions.shape[0] == 0:
            return np.empty((0,) + (self.output_shape or ()), dtype=np.float64)
        if not self.cache:
            result = self._evaluate(coalitions)
            self.n_evaluations += coalitions.shape[0]
            return result
        keys = coalition_keys(coalitions)
        missing = {}
        for row, key in enumerate(keys):
            if key not in self._cache and key not in missing:
                missing[key] = row
        if missing:
            rows = np.fromiter(missing.values(), dtype=np.int64, count=len(missing))
            fresh = self._evaluate(coalitions[rows])
            for key, value in zip(missing, fresh, strict=True):
                self._cache[key] = value
            self.n_evaluations += len(rows)
        return np.stack([self._cache[key] for key in keys])

    def reset_counter(self) -> None:
        """Set :attr:`n_evaluations` back to zero (the cache is kept)."""
        self.n_evaluations = 0

    @property
    def n_outputs(self) -> int | None:
        """Number of outputs k (1 for a scalar game), or None before the first call."""
        if self.output_shape is None:
            return None
        return int(np.prod(self.output_shape, dtype=int))

    @property
    def n_outputs_hint(self) -> int:
        """Outputs expected before the first call (for sizing work arrays): the known
        count, else 1 (a subclass that stacks rows knows more)."""
        return self.n_outputs or 1

    @property
    def empty_value(self):
        """v(∅), evaluated (and counted) once."""
        if not hasattr(self, "_empty_value"):
            self._empty_value = self.values(np.zeros((1, self.n_players), dtype=bool))[0]
        return self._empty_value

    @property
    def grand_value(self):
        """v(N), evaluated (and counted) once."""
        if not hasattr(self, "_grand_value"):
            self._grand_value = self.values(np.ones((1, self.n_players), dtype=bool))[0]
        return self._grand_value

    def __call__(self, coalitions):
        return self.values(coalitions)

    # -- helpers --------------------------------------------------------------------------
    def _check_coalitions(self, coalitions) -> np.ndarray:
        coalitions = np.asarray(coalitions)
        if coalitions.ndim != 2 or coalitions.shape[1] != self.n_players:
            raise ValueError(
                f"coalitions must be a boolean array of shape (m, {self.n_players}); "
                f"got shape {coalitions.shape}."
            )
        if coalitions.dtype != bool:
            if not np.issubdtype(coalitions.dtype, np.integer) or np.any(
                (coalitions != 0) & (coalitions != 1)
            ):
                raise ValueError(
                    f"coalitions must be boolean (or 0/1 integers); got dtype {coalitions.dtype}."
                )
            coalitions = coalitions.astype(bool)
        return np.ascontiguousarray(coalitions)

    def _evaluate(self, coalitions: np.ndarray) -> np.ndarray:
        result = np.asarray(self._values(coalitions), dtype=np.float64)
        m = coalitions.shape[0]
        if result.ndim == 2 and result.shape[1] == 1 and self.output_shape == ():
            result = result[:, 0]
        if result.ndim not in (1, 2) or result.shape[0] != m:
            raise ValueError(
                f"{type(self).__name__} returned values of shape {result.shape} for {m} "
                "coalitions; expected (m,) or (m, k)."
            )
        shape = result.shape[1:]
        if self.output_shape is None:
            self.output_shape = shape
        elif shape != self.output_shape:
            raise ValueError(
                f"{type(self).__name__} returned outputs of shape {shape} after "
                f"{self.output_shape}."
            )
        # ±inf is refused like NaN: a marginal contribution inf - inf is NaN and
        # inf - x is inf, so no approximator could return a finite value or error.
        bad = np.flatnonzero(~np.isfinite(result.reshape(m, -1)).all(axis=1))
        if bad.size:
            row = int(bad[0])
            members = np.flatnonzero(coalitions[row]).tolist()
            found = result.reshape(m, -1)[row]
            what = "NaN" if np.isnan(found).any() else str(found[~np.isfinite(found)][0])
            raise ValueError(
                f"{type(self).__name__} returned {what} for coalition row {row} "
                f"(players {members}); a game must return finite values: clip or rescale "
                "the model's output (for classifiers, explain response_method="
                "'predict_log_odds', which clips probabilities, or 'decision_function')."
            )
        return result


class CallableGame(Game):
    """A game defined by any Python function.

    Parameters
    ----------
    function : callable
        With ``vectorized=True`` (default): ``function(coalitions)`` takes a bool array
        (m, n_players) and returns (m,) or (m, k) values. With ``vectorized=False``:
        ``function(players)`` takes a ``frozenset`` of player indices and returns a
        number or a (k,) array.
    n_players : int
    vectorized : bool, default=True
    cache : bool, default=False

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.games import CallableGame
    >>> glove = CallableGame(lambda S: float(min(len(S & {0}), len(S & {1, 2}))),
    ...                      n_players=3, vectorized=False)
    >>> glove.values(np.array([[True, True, False], [False, True, True]]))
    array([1., 0.])
    """

    def __init__(self, function, n_players: int, *, vectorized: bool = True, cache: bool = False):
        if not callable(function):
            raise ValueError(f"The 'function' parameter must be callable; got {function!r}.")
        super().__init__(n_players, cache=cache)
        self.function = function
        self.vectorized = vectorized

    def _values(self, coalitions):
        if self.vectorized:
            return self.function(coalitions)
        return np.array(
            [self.function(frozenset(np.flatnonzero(row).tolist())) for row in coalitions],
            dtype=np.float64,
        )
