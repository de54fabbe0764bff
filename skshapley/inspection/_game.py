"""The SAGE game: the score of a fitted model whose absent columns are marginalised.

For a set S of players (columns, or groups of columns) the *marginalised model*
``f_S(x) = mean_r f(x_S, (b_r)_{not S})`` replaces the columns outside S by each of the
background rows b_1..b_m and averages the outputs; v(S) is the score of ``f_S`` on
(X, y). This is the value function of SAGE with marginal (interventional) imputation
(Covert, Lundberg & Lee 2020, Sec. 2 and 4: v(S) = -E[loss(f_S(X_S), Y)]), taken
over the rows given instead of a population, and generalised from a loss to any
scikit-learn scorer (greater is better).

Unlike :class:`~skshapley.games.PerformanceGame`, which scores every (row, background
row) pair and so averages the *scores* of imputed rows, this game averages the
*predictions* first and scores their mean: for the squared error the two differ by the
variance of the predictions over the background, which PerformanceGame counts as loss.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import is_classifier
from sklearn.utils import get_tags

from skshapley.backends import get_backend
from skshapley.games import Game
from skshapley.utils import chunk_rows, get_working_memory

# Share of working_memory for the model input of one chunk, as MarginalGame leaves the
# rest to the model's own temporaries.
BATCH_SHARE = 0.75
# Output methods the marginalised model offers (those scikit-learn's scorers call).
RESPONSE_METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function")


class MarginalisedModel:
    """A fitted model with the columns outside one coalition averaged over a background.

    A stand-in estimator for scikit-learn's scorers: it answers ``predict``,
    ``predict_proba``, ``predict_log_proba`` and ``decision_function`` (those the model
    has) for the rows of the game's X only, and reports the model's classes and tags,
    so ``scorer(marginalised, X, y)`` scores ``f_S``. The outputs of every coalition of a
    block are computed at the first request of a method, in one batched model call per
    chunk, and then served coalition by coalition (:attr:`position`).

    Outputs: the mean over the background of ``predict`` (regressors),
    ``predict_proba`` and ``decision_function``; ``predict_log_proba`` is the log of
    the mean probabilities; a classifier's ``predict`` is the class of largest mean
    probability (else of largest mean decision value, else the most frequent label
    over the background; ties: the first class). For S = N these are the model's own
    outputs on X (a classifier's labels: the class of largest probability, its
    ``predict`` for nearly every classifier), for S = ∅ one constant output, the mean
    over the background, for every row.
    """

    def __init__(self, game, block):
        self._game = game
        self._block = block
        self._outputs = {}
        self.position = 0

    # -- what scorers look at ----------------------------------------------------------
    def __sklearn_tags__(self):
        return get_tags(self._game.estimator)

    @property
    def classes_(self):
        return self._game.estimator.classes_

    def __getattr__(self, name):
        # only the methods the model itself has: scorers pick their response method by
        # hasattr (scikit-learn's _check_response_method), and read its __name__
        if name in RESPONSE_METHODS and hasattr(self._game.estimator, name):
            def method(X):
                return self._answer(name, X)

            method.__name__ = name
            return method
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def _answer(self, name, X):
        if X is not self._game.X_scored:
            raise ValueError(
                f"the 'scoring' parameter called the model's {name} on other rows than "
                "the X given; a scorer must call the estimator on the X it is given "
                "(the marginalised model answers for those rows only).")
        if name not in self._outputs:
            self._outputs[name] = self._game.block_outputs(name, self._block)
        return self._outputs[name][self.position]


class MarginalScoreGame(Game):
    """v(S): the score on (X, y) of the model with the players outside S marginalised.

    Parameters
    ----------
    estimator : fitted estimator
    X : float64 (n_rows, n_columns)
        The rows to score on, as numbers (codes for non-numeric columns).
    y : array-like (n_rows,)
    background : float64 (n_background, n_columns)
        Rows that stand in for absent columns.
    scorer : callable
        ``scorer(estimator, X, y) -> float``, greater is better.
    scoring : str, callable or None
        What ``scorer`` was made from, for messages.
    groups : list of int arrays, optional
        The players: each a set of column indices, together a partition of the columns;
        default one player per column.
    decode : callable, optional
        Float rows -> what the model takes (a DataFrame with the fitted column names,
        or the values the codes stand for).
    X_scored : object, optional
        What the scorer receives as X (default ``X``); the marginalised model answers
        only for this object.
    n_jobs : int, optional
        Threads that evaluate chunks of coalitions; values do not depend on it.
    working_memory : float, optional
        MiB for the model input of all threads together; default
        ``get_config()["working_memory"]``.
    cache : bool, default=False
    """

    def __init__(self, estimator, X, y, background, scorer, *, scoring=None, groups=None,
                 decode=None, X_scored=None, n_jobs=None, working_memory=None,
                 cache=False):
        n_columns = X.shape[1]
        groups = ([np.array([j]) for j in range(n_columns)] if groups is None
                  else [np.asarray(group, dtype=np.intp) for group in groups])
        super().__init__(len(groups), cache=cache)
        self.estimator = estimator
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = y
        self.background = np.ascontiguousarray(background, dtype=np.float64)
        self.scorer = scorer
        self.scoring = scoring
        self.groups = groups
        self.decode = decode
        self.X_scored = self.X if X_scored is None else X_scored
        self.n_jobs = n_jobs
        self.working_memory = working_memory
        # column j belongs to player _player_of_column[j]
        self._player_of_column = np.empty(n_columns, dtype=np.intp)
        for player, group in enumerate(groups):
            self._player_of_column[group] = player

    # -- the value function ------------------------------------------------------------
    def _values(self, coalitions):
        columns = coalitions[:, self._player_of_column]
        m = columns.shape[0]
        n_rows, n_background = self.X.shape[0], self.background.shape[0]
        n_threads = effective_n_jobs(self.n_jobs)
        memory = BATCH_SHARE * get_working_memory(self.working_memory) / n_threads
        self._batch_bytes = memory * 2**20  # one thread's model input at a time
        # resolved here: worker threads do not see the caller's thread-local config
        self._kernels = get_backend()
        per_block = chunk_rows(n_rows * n_background * self.X.shape[1] * 8, memory)
        if n_threads > 1:
            per_block = min(per_block, -(-m // n_threads))  # every thread gets a block
        blocks = [columns[start:start + per_block] for start in range(0, m, per_block)]
        if n_threads == 1 or len(blocks) == 1:
            parts = [self._block_scores(block) for block in blocks]
        else:
            # threads: the model and the scorer are shared read-only; each block writes
            # its own scores, joined in order, so the values do not depend on n_jobs
            parts = Parallel(n_jobs=n_threads, prefer="threads")(
                delayed(self._block_scores)(block) for block in blocks)
        return np.concatenate(parts)

    def _block_scores(self, block):
        model = MarginalisedModel(self, block)
        scores = np.empty(block.shape[0], dtype=np.float64)
        for k in range(block.shape[0]):
            model.position = k
            scores[k] = self._score(model)
        return scores

    def _score(self, model):
        try:
            score = self.scorer(model, self.X_scored, self.y)
        except Exception as err:  # a user scorer may fail in any way; name the parameter
            raise ValueError(
                f"The 'scoring' parameter {self.scoring!r} failed on the marginalised "
                f"{type(self.estimator).__name__}: {type(err).__name__}: {err}") from err
        if np.size(score) != 1:
            raise ValueError(
                f"The 'scoring' parameter {self.scoring!r} returned {np.size(score)} "
                "numbers; it must return one score (greater is better).")
        return float(np.asarray(score, dtype=np.float64).reshape(-1)[0])

    # -- outputs of the marginalised model ---------------------------------------------
    def _call(self, name, rows):
        rows = rows if self.decode is None else self.decode(rows)
        return np.asarray(getattr(self.estimator, name)(rows))

    def block_outputs(self, name, block):
        """Outputs ``name`` of the marginalised model for each coalition of ``block``
        (column masks, (c, n_columns)): an array (c, n_rows, ...)."""
        if name == "predict" and is_classifier(self.estimator):
            return self._labels(block)
        if name == "predict_log_proba":
            with np.errstate(divide="ignore"):
                return np.log(self.block_outputs("predict_proba", block))
        return self._averaged(name, block)

    def _averaged(self, name, block, transform=None):
        """Mean over the background of ``name`` (mapped by ``transform``), per coalition
        of ``block``.

        Every coalition's mean is the same sequence of additions over the background
        rows, whether its imputed rows were predicted (inner coalitions), or the model
        was called once on X (the full coalition: every imputed row is the row itself)
        or on the background (the empty one: every row gets the same rows). So two
        coalitions whose imputed rows get the same predictions get bitwise the same
        value, and a column the model ignores gets exactly 0.
        """
        c = block.shape[0]
        n_rows, n_background = self.X.shape[0], self.background.shape[0]

        def outputs_of(rows):
            outputs = self._call(name, rows)
            return outputs if transform is None else transform(outputs)

        full = block.all(axis=1)
        empty = ~block.any(axis=1)
        inner = np.flatnonzero(~(full | empty))
        parts = {}
        if full.any():
            own = np.asarray(outputs_of(self.X), dtype=np.float64)
            parts["full"] = _mean_of_copies(own, n_background)
        if empty.any():
            outputs = np.asarray(outputs_of(self.background), dtype=np.float64)
            parts["empty"] = _sequential_mean(outputs[None, None])[0, 0]
        if inner.size:
            parts["inner"] = self._inner_means(outputs_of, block[inner])
        tail = (parts["full"].shape[1:] if "full" in parts
                else parts["inner"].shape[2:] if "inner" in parts
                else parts["empty"].shape)
        out = np.empty((c, n_rows, *tail), dtype=np.float64)
        if "full" in parts:
            out[full] = parts["full"]
        if "empty" in parts:
            out[empty] = parts["empty"]
        if "inner" in parts:
            out[inner] = parts["inner"]
        return out

    def _inner_means(self, outputs_of, masks):
        """Background means of ``outputs_of`` the imputed rows of each coalition in
        ``masks``: (c, n_rows, ...). The rows of X go in slices when one coalition's
        imputed rows exceed the batch memory (a row's mean does not depend on them)."""
        c, d = masks.shape
        n_rows, n_background = self.X.shape[0], self.background.shape[0]
        limit = getattr(self, "_batch_bytes", np.inf)
        per_pass = int(max(1, min(n_rows, limit // max(c * n_background * d * 8, 1))))
        masks = np.ascontiguousarray(masks)
        means = []
        batch = np.empty((c * min(per_pass, n_rows) * n_background, d), dtype=np.float64)
        for start in range(0, n_rows, per_pass):
            rows = self.X[start:start + per_pass]
            part = batch[: c * rows.shape[0] * n_background]
            kernels = getattr(self, "_kernels", None) or get_backend()
            kernels.assemble_masked_batch(rows, self.background, masks, part)
            outputs = np.asarray(outputs_of(part), dtype=np.float64)
            means.append(_sequential_mean(
                outputs.reshape(c, rows.shape[0], n_background, *outputs.shape[1:])))
        return means[0] if len(means) == 1 else np.concatenate(means, axis=1)

    def _labels(self, block):
        """A classifier's labels: the class of largest mean probability, else of largest
        mean decision value, else the most frequent label over the background (ties:
        the first class)."""
        estimator = self.estimator
        classes = np.asarray(estimator.classes_)
        if hasattr(estimator, "predict_proba"):
            scores = self._averaged("predict_proba", block)
        elif hasattr(estimator, "decision_function"):
            scores = self._averaged("decision_function", block)
            if scores.ndim == 2:  # binary: one margin, positive for classes[1]
                scores = np.stack([-scores, scores], axis=-1)
        else:
            def one_hot(labels):
                codes = np.searchsorted(classes, labels)
                return (codes[..., None] == np.arange(classes.size)).astype(np.float64)

            scores = self._averaged("predict", block, transform=one_hot)
        return classes[np.argmax(scores, axis=-1)]  # argmax: ties go to the first class


def _sequential_mean(outputs):
    """Mean over axis 2 of (c, n_rows, n_background, ...) outputs, adding the background
    rows one after the other (NumPy's pairwise sums would depend on the layout)."""
    total = outputs[:, :, 0].copy()
    for r in range(1, outputs.shape[2]):
        total += outputs[:, :, r]
    return total / outputs.shape[2]


def _mean_of_copies(outputs, n_copies):
    """What :func:`_sequential_mean` gives for ``n_copies`` equal rows of ``outputs``."""
    total = outputs.copy()
    for _ in range(1, n_copies):
        total += outputs
    return total / n_copies
