"""Games built from a model, a foreground row and a background set."""

from __future__ import annotations

import numpy as np

from skshapley.backends import get_backend
from skshapley.games._base import Game
from skshapley.games._response import make_response_function
from skshapley.utils import chunk_rows, get_working_memory, resolve_device, to_host

# Share of working_memory for one chunk of model input (measured at d = 1000, one row,
# default budget: the whole call peaked at 1.2x the chunk before this share).
BATCH_SHARE = 0.75
# Most model-input rows and bytes in one host chunk: scikit-learn models predict fastest
# per row on batches that stay in cache. Measured, one thread, ns per row at 2^10 ..
# 2^17 rows: an MLP (64 hidden units) at d = 20 took 125 at 2^14 rows and 226 at 2^17
# (its hidden activations leave the cache); HistGradientBoosting at d = 100 took 4,700
# at 2^13 and 10,900 at 2^15 (6 MiB against 25 MiB of input); ridge and random forests
# lose under 20 % at 2^14 against their best. Per-call overhead (~0.1 ms) is then a few
# percent of a chunk.
MODEL_BATCH_ROWS = 2**14
MODEL_BATCH_BYTES = 8 * 2**20


class MarginalGame(Game):
    r"""Interventional value function of a model at a row x.

    :math:`v_x(S) = \frac{1}{m} \sum_{r=1}^{m} f(x_S, (b_r)_{N \setminus S})`: the features
    in S come from x and the others from each of the m background rows (Janzing, Minorics
    & Blöbaum 2020; see the user guide, "Interventional or observational values").

    One :meth:`values` call assembles every coalition's masked copy of the background into
    one array and calls the model once per chunk of at most ``working_memory`` MiB.

    Parameters
    ----------
    model : fitted estimator or callable
        The model; a callable is used as ``f(X)``.
    x : array-like (n_features,) or (n_rows, n_features)
        The explained row. Several rows stack several games on the same coalitions, so
        one model call serves them all: the outputs are then the rows' outputs side by
        side, shape (m, n_rows * k), row-major.
    background : array-like (n_background, n_features)
        Rows that stand in for absent features.
    response_method : str or callable, default="auto"
        Which output to explain; see ``skshapley.games.make_response_function``.
    feature_names : array-like of str, optional
        Call the model on DataFrames with these columns.
    working_memory : float, optional
        MiB per chunk; defaults to ``get_config()["working_memory"]``.
    cache : bool, default=False
    device : None, "cpu", "cuda" or str, default=None
        Where the model's inputs live (``skshapley.utils.resolve_device``): with
        a device namespace the rows and background are copied there once, each batch is
        assembled there, the model is called on device arrays and averaged over the
        background there; only the (coalitions, outputs) values come back to the host.
    column_player : int array-like (n_features,), optional
        The player of each column, for players that are groups of columns: players
        ``0..max(column_player)``, each with at least one column. A coalition of players
        takes the union of their columns from x, the other columns from the background
        (the game whose players are the groups: Owen's 1977 quotient game, as in
        groupShapley, Jullum, Redelmeier & Aas 2021, Sec. 2; see the user guide, "Groups
        of features"). Each call widens the (m, n_players) masks to (m, n_features) with
        one gather before the batch is assembled. None: one player per column.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.games import MarginalGame
    >>> game = MarginalGame(lambda X: X.sum(axis=1), x=[1.0, 2.0], background=[[0.0, 0.0]])
    >>> game.values(np.array([[True, False], [True, True]]))
    array([1., 3.])
    >>> grouped = MarginalGame(lambda X: X.sum(axis=1), x=[1.0, 2.0, 4.0],
    ...                        background=[[0.0, 0.0, 0.0]], column_player=[0, 0, 1])
    >>> grouped.values(np.array([[True, False]]))
    array([3.])
    """

    def __init__(self, model, x, background, *, response_method="auto", feature_names=None,
                 working_memory=None, cache=False, device=None, column_player=None):
        rows = np.asarray(x, dtype=np.float64)
        if rows.ndim not in (1, 2) or rows.size == 0:
            raise ValueError(
                f"x must be a row (n_features,) or rows (n_rows, n_features); got shape "
                f"{rows.shape}."
            )
        background = np.asarray(background, dtype=np.float64)
        if background.ndim != 2 or background.shape[0] == 0:
            raise ValueError(
                "background must be a non-empty 2-D array (n_background, n_features); got "
                f"shape {background.shape}."
            )
        if background.shape[1] != rows.shape[-1]:
            raise ValueError(
                f"x has {rows.shape[-1]} features but background has {background.shape[1]}."
            )
        self.column_player = _check_column_player(column_player, rows.shape[-1])
        n_players = (rows.shape[-1] if self.column_player is None
                     else int(self.column_player.max()) + 1)
        super().__init__(n_players, cache=cache)
        self.x = rows
        self._rows = np.ascontiguousarray(np.atleast_2d(rows))
        self.background = np.ascontiguousarray(background)
        self.predict = make_response_function(model, response_method, feature_names=feature_names)
        self.working_memory = working_memory
        self.device = device
        self._xp = resolve_device(device)
        if self._xp is not None:
            self._device_rows = self._xp.asarray(self._rows)
            self._device_background = self._xp.asarray(self.background)

    @property
    def n_outputs_hint(self) -> int:
        return self.n_outputs or self._rows.shape[0]

    def _values(self, coalitions):
        if self.column_player is not None:
            # a player's mask is each of its columns' mask
            coalitions = np.ascontiguousarray(coalitions[:, self.column_player])
        m, d = coalitions.shape
        n_rows = self._rows.shape[0]
        n_background = self.background.shape[0]
        per_coalition = chunk_rows(n_rows * n_background * d * 8, self._batch_memory())
        if self._xp is None:  # batches the model predicts fastest (a device takes all)
            cached = min(MODEL_BATCH_ROWS, MODEL_BATCH_BYTES // (8 * d))
            per_coalition = min(per_coalition, max(1, cached // (n_rows * n_background)))
        assemble = self._batch_assembler(min(per_coalition, m), d)
        outputs = []
        for start in range(0, m, per_coalition):
            block = coalitions[start : start + per_coalition]
            predictions = self.predict(assemble(block))
            outputs.append(self._background_means(predictions, block.shape[0]))
        values = np.concatenate(outputs, axis=0)
        return values[:, 0] if values.shape[1] == 1 else values

    # What differs between host and device batches: the memory one chunk may take, where
    # and how it is assembled, and where the background mean is taken.
    def _batch_memory(self):
        """MiB for one chunk of model input. On the host it gets BATCH_SHARE of
        working_memory: the rest is left for the model's own temporaries and the
        estimator's arrays, so a call stays within it. On a device, all of it (None:
        the configured working_memory)."""
        if self._xp is None:
            return BATCH_SHARE * get_working_memory(self.working_memory)
        return self.working_memory

    def _batch_assembler(self, max_coalitions, d):
        """A function from a block of at most ``max_coalitions`` coalitions to the model's
        input: one row per (coalition, row, background row), in that order."""
        n_rows = self._rows.shape[0]
        n_background = self.background.shape[0]
        if self._xp is None:
            kernels = get_backend()
            # one buffer for every chunk: a new one per chunk would hold two chunks at
            # once (the next allocated before the last released), twice working_memory
            buffer = np.empty((max_coalitions * n_rows * n_background, d), dtype=np.float64)

            def assemble(block):
                batch = buffer[: block.shape[0] * n_rows * n_background]
                kernels.assemble_masked_batch(self._rows, self.background, block, batch)
                return batch

            return assemble
        xp = self._xp

        def assemble(block):
            # the batch of assemble_masked_batch, built with broadcasting where the
            # arrays live
            block = xp.asarray(np.ascontiguousarray(block))
            batch = xp.where(block[:, None, None, :], self._device_rows[None, :, None, :],
                             self._device_background[None, None, :, :])
            return xp.reshape(batch, (block.shape[0] * n_rows * n_background, d))

        return assemble

    def _background_means(self, predictions, n_coalitions):
        """The model's outputs for a block of coalitions averaged over the background,
        (n_coalitions, n_rows * n_outputs) float64 on the host: from a device, one
        transfer of the averaged values."""
        shape = (n_coalitions, self._rows.shape[0], self.background.shape[0], -1)
        if self._xp is None:
            predictions = np.asarray(predictions, dtype=np.float64)
            # np.mean's own bits (a sum, then one division) without its wrapper
            return (np.add.reduce(predictions.reshape(shape), axis=2)
                    / shape[2]).reshape(n_coalitions, -1)
        xp = self._xp
        # a model may answer on the host (e.g. XGBoost's predict on CuPy input)
        averaged = xp.mean(xp.reshape(xp.asarray(predictions), shape), axis=2)
        return to_host(averaged).reshape(n_coalitions, -1)


def _check_column_player(column_player, n_features):
    """``column_player`` as int64 (n_features,), or None; every player 0..max has a
    column."""
    if column_player is None:
        return None
    players = np.asarray(column_player)
    if (players.shape != (n_features,) or not np.issubdtype(players.dtype, np.integer)
            or players.min(initial=0) < 0):
        raise ValueError(
            f"column_player must hold a player number >= 0 for each of the {n_features} "
            f"columns; got {np.asarray(column_player)!r}."
        )
    players = players.astype(np.int64)
    empty = np.setdiff1d(np.arange(players.max() + 1), players)
    if empty.size:
        raise ValueError(
            f"column_player gives no column to the players {empty.tolist()}; number the "
            "players 0, 1, ... without gaps."
        )
    return players


class BaselineGame(MarginalGame):
    """Baseline value function: absent features take the values of one reference row.

    Parameters
    ----------
    model : fitted estimator or callable
    x : array-like (n_features,)
    reference : array-like (n_features,)
    response_method, feature_names, working_memory, cache, device
        As in :class:`MarginalGame`.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.games import BaselineGame
    >>> game = BaselineGame(lambda X: X[:, 0] * X[:, 1], x=[2.0, 3.0], reference=[1.0, 1.0])
    >>> game.values(np.array([[False, False], [True, False]]))
    array([1., 2.])
    """

    def __init__(self, model, x, reference, *, response_method="auto", feature_names=None,
                 working_memory=None, cache=False, device=None):
        reference = np.asarray(reference, dtype=np.float64)
        if reference.ndim != 1:
            raise ValueError(
                f"reference must be one row of shape (n_features,); got shape {reference.shape}."
            )
        super().__init__(model, x, reference[None, :], response_method=response_method,
                         feature_names=feature_names, working_memory=working_memory,
                         cache=cache, device=device)
        self.reference = reference
