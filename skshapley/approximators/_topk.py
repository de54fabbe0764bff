"""Top-k identification of the players with the largest Shapley values (Kolpaczki, Nielen
& Hüllermeier 2025, "Antithetic sampling for top-k Shapley identification").

CMCS (comparable marginal contributions sampling) draws one reference coalition S per
round and observes every selected player's extended marginal contribution against it,
reusing v(S) for all of them (Kolpaczki et al. 2025, Sec. 5.1, Alg. 1). Sharing S couples
the players' observations, which shrinks the variance of their *differences*, the
quantity that decides who is in the top k (Sec. 4, Thm. 4.1: this coupling across players
is the "antithetic" part; nothing is paired with a complement). Greedy CMCS spends rounds
on the players whose order is most in doubt, CMCS@K on the two players at the cut
(Sec. 5.2, Sec. 6.4). SamplingSHAP@K (Kariyappa et al. 2024) and ApproShapley (Castro,
Gómez & Tejada 2009) are the permutation-sampling baselines.

Budget accounting follows the authors' code: v(∅) and v(N) are evaluated once, counted
as 2, and free afterwards; every other request counts, repeats included (a caching game
may skip the model call, but the budget still counts the request, so runs compare with
the paper). The budget is never exceeded.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.special import ndtr

from skshapley.approximators._exact import all_coalitions
from skshapley.approximators._pac import bonferroni_z, order_players, pac_rule_holds
from skshapley.backends import get_backend
from skshapley.utils import as_generator

TOPK_METHODS = ("cmcs_at_k", "greedy_cmcs", "cmcs", "sampling_shap_at_k", "approshapley",
                "exact", "regression", "cmcs_independent", "cmcs_identical")
# Guards of the round loops (as in the authors' code): a round starts only when at least
# this many evaluations are left, so it can make at least one observation.
_GUARD = {"cmcs": 2, "greedy_cmcs": 2, "cmcs_at_k": 4, "sampling_shap_at_k": 4,
          "approshapley": 2, "cmcs_independent": 2, "cmcs_identical": 2}
# The warm-up of CMCS@K (Kolpaczki, Nielen & Hüllermeier 2025, "Antithetic sampling for
# top-k Shapley identification", Sec. 5.2 and 6.4): a player's interval is defined only
# after M_min observations (``min_samples`` of topk_shapley, this by default), so CMCS@K
# and SamplingSHAP@K start with this many full rounds, and Greedy CMCS runs full CMCS
# rounds until each pair at the cut has this many. Within the warm-up the adaptive
# methods are plain CMCS and cannot certify a set.
CMCS_WARM_UP_ROUNDS = 30


def cmcs_warm_up_evaluations(n_players):
    """Game evaluations of the CMCS warm-up: ``CMCS_WARM_UP_ROUNDS`` full CMCS rounds,
    each v(S) and the n_players coalitions with one player toggled (Kolpaczki et al.
    2025, Alg. 1).

    Examples
    --------
    >>> from skshapley.approximators import cmcs_warm_up_evaluations
    >>> cmcs_warm_up_evaluations(10)
    330
    """
    return CMCS_WARM_UP_ROUNDS * (n_players + 1)


@dataclass(frozen=True)
class TopKResult:
    """The outcome of a top-k identification run.

    Attributes
    ----------
    top_k : int64 (k,)
        The chosen players, largest estimate first. Ties are broken by the lower player
        index (a stable sort of the negated estimates).
    values : float64 (n_players,)
        Shapley estimates (signed: harmful players rank last).
    std_errors : float64 (n_players,)
        Standard error of each estimate from its own observations (``inf`` with fewer
        than two; 0 for exact values).
    confidence_intervals : float64 (n_players, 2)
        Simultaneous two-sided intervals at level ``1 - delta`` (Bonferroni over the
        players, as in SHAP@K); ``[-inf, inf]`` before a player has ``min_samples``
        observations.
    n_samples : int64 (n_players,)
        Observations (marginal contributions) behind each estimate.
    n_evaluations : int
        Evaluations of the game used (<= budget): v(∅) and v(N) count once, every other
        request counts, repeats included.
    pac_satisfied : bool
        Whether the PAC rule ``max UCB outside - min LCB inside <= epsilon`` held at the
        end (always True for exact values). With ``pac_stop=True`` the run stopped on it.
    method : str
    k : int
    delta, epsilon : float
    empty_value, grand_value : float
        v(∅) and v(N).
    """

    top_k: np.ndarray
    values: np.ndarray
    std_errors: np.ndarray
    confidence_intervals: np.ndarray
    n_samples: np.ndarray
    n_evaluations: int
    pac_satisfied: bool
    method: str
    k: int
    delta: float
    epsilon: float
    empty_value: float
    grand_value: float

    @property
    def support(self) -> np.ndarray:
        """Boolean mask of the chosen players."""
        mask = np.zeros(self.values.shape[0], dtype=bool)
        mask[self.top_k] = True
        return mask

    def __repr__(self):
        return (f"TopKResult(method={self.method!r}, top_k={self.top_k.tolist()}, "
                f"n_evaluations={self.n_evaluations}, pac_satisfied={self.pac_satisfied})")


class _BudgetExhausted(Exception):
    pass


class _Oracle:
    """Counts game evaluations (v(∅) and v(N) once, every other request, repeats
    included) and refuses to exceed the budget."""

    def __init__(self, game, budget):
        self.game = game
        self.n = game.n_players
        self.budget = budget
        ends = np.zeros((2, self.n), dtype=bool)
        ends[1] = True
        values = np.asarray(game.values(ends), dtype=np.float64)
        if values.ndim != 1:
            raise ValueError(
                "top-k identification needs a game with one output; got outputs of shape "
                f"{values.shape[1:]}."
            )
        self.empty_value, self.grand_value = float(values[0]), float(values[1])
        self.used = 2

    def remaining(self):
        return np.inf if self.budget is None else self.budget - self.used

    def _paid(self, masks):
        """Coalition sizes, and which masks cost an evaluation (not ∅, not N)."""
        sizes = masks.sum(axis=1)
        return sizes, (sizes > 0) & (sizes < self.n)

    def costs(self, masks):
        return self._paid(masks)[1].astype(np.int64)

    def affordable(self, costs):
        """How many of the requests, in order, may be made: request t is made only when
        the budget is not yet spent before it (a round stops as soon as the budget is
        used up, as in the authors' code)."""
        if self.budget is None:
            return costs.shape[0]
        before = self.used + np.concatenate(([0], np.cumsum(costs)[:-1]))
        return int(np.count_nonzero(before < self.budget))

    def values(self, masks):
        sizes, paid = self._paid(masks)
        out = np.where(sizes == self.n, self.grand_value, self.empty_value)
        n_paid = int(np.count_nonzero(paid))
        if self.budget is not None and self.used + n_paid > self.budget:
            raise _BudgetExhausted  # a bug if reached: callers truncate first
        if n_paid:
            out[paid] = self.game.values(masks[paid])
            self.used += n_paid
        return out


class _Stats:
    """Per-player running mean, count and sum of squares (float64)."""

    def __init__(self, n):
        self.mean = np.zeros(n)
        self.cnt = np.zeros(n, dtype=np.int64)
        self.sq = np.zeros(n)

    def update(self, players, observations):
        # Alg. 2, line 15, of Kolpaczki et al. 2025 divides by the count before
        # incrementing it (0 at the first sample): update the mean before the count.
        self.mean[players] = (self.cnt[players] * self.mean[players] + observations) / (
            self.cnt[players] + 1)
        self.cnt[players] += 1
        self.sq[players] += observations * observations

    def std(self):
        var = np.full(self.mean.shape, np.inf)
        np.divide(self.sq - self.cnt * self.mean**2, self.cnt - 1, out=var,
                  where=self.cnt > 1)
        return np.sqrt(np.maximum(var, 0.0))


def _bounds(stats, z, min_samples):
    width = z * stats.std() / np.sqrt(np.maximum(stats.cnt, 1))
    width[stats.cnt < max(min_samples, 2)] = np.inf
    return stats.mean - width, stats.mean + width


def _pac(stats, k, z, epsilon, min_samples, order=None, bounds=None):
    """SHAP@K's stopping rule on per-player intervals."""
    if stats.cnt.min() < min_samples:
        return False
    lower, upper = _bounds(stats, z, min_samples) if bounds is None else bounds
    return pac_rule_holds(stats.mean, lower, upper, k, epsilon, order)


def _reference(rng, n):
    """S with P(S) = 1 / ((n + 1) C(n, |S|)): a uniform size in 0..n, then a subset
    (Kolpaczki et al. 2025, Sec. 5.1)."""
    size = rng.integers(0, n + 1)
    mask = np.zeros(n, dtype=bool)
    mask[rng.permutation(n)[:size]] = True
    return mask


def _toggled(S, players):
    """Rows S with player p flipped, one row per p: S \\ {p} if p in S, else S ∪ {p}.
    ``S`` is one reference set or one per player."""
    rows = np.broadcast_to(S, (len(players), S.shape[-1])).copy()
    rows[np.arange(len(players)), players] = ~rows[np.arange(len(players)), players]
    return rows


def _cmcs_round(oracle, stats, rng, players):
    """One CMCS round on ``players`` (in order); returns the observations made
    (Kolpaczki et al. 2025, Alg. 1).

    v(S) comes first and counts once; the round stops at the first player the budget
    cannot pay for, keeping the observations already made.
    """
    S = _reference(rng, oracle.n)
    players = np.asarray(players, dtype=np.int64)
    toggled = _toggled(S, players)
    requests = np.concatenate([S[None, :], toggled])
    made = oracle.affordable(oracle.costs(requests))
    values = oracle.values(requests[:made])
    if made <= 1:
        return players[:0], np.empty(0)
    v_S, v_toggled = values[0], values[1:]
    done = players[: made - 1]
    inside = S[done]
    # Extended marginal contribution (Kolpaczki et al. 2025, Sec. 5.1):
    # v(S ∪ {i}) - v(S \ {i}).
    observations = np.where(inside, v_S - v_toggled, v_toggled - v_S)
    stats.update(done, observations)
    return done, observations


def _uncoupled_round(oracle, stats, rng, players, same_reference):
    """Ablation steps of Kolpaczki et al. 2025, Sec. 6.1 (Fig. 2): 2 evaluations per
    observation, v(S) not reused.

    ``same_reference=False`` is "Independent" (a fresh S per player), True is
    "Identical" (one S per round, evaluated again for every player).
    """
    n = oracle.n
    players = np.asarray(players, dtype=np.int64)
    if same_reference:
        S = np.repeat(_reference(rng, n)[None, :], len(players), axis=0)
    else:
        S = np.stack([_reference(rng, n) for _ in players])
    toggled = _toggled(S, players)
    requests = np.empty((2 * len(players), n), dtype=bool)
    requests[0::2], requests[1::2] = S, toggled
    made = oracle.affordable(oracle.costs(requests)) // 2 * 2
    values = oracle.values(requests[:made])
    done = players[: made // 2]
    v_S, v_toggled = values[0::2], values[1::2]
    inside = S[np.arange(len(done)), done]
    stats.update(done, np.where(inside, v_S - v_toggled, v_toggled - v_S))


def _permutation_round(oracle, stats, rng):
    """One ApproShapley ordering (Castro et al. 2009): each player's contribution to the
    players after it; the last request is the free v(∅), so an ordering costs n - 1."""
    n = oracle.n
    pi = rng.permutation(n)
    position = np.empty(n, dtype=np.int64)
    position[pi] = np.arange(n)
    # Row p is the set of players after position p.
    after = position[None, :] > np.arange(n)[:, None]
    made = oracle.affordable(oracle.costs(after))
    values = oracle.values(after[:made])
    previous = np.concatenate(([oracle.grand_value], values))[:made]
    stats.update(pi[:made], previous - values)


def _pair_round_permutation(oracle, stats, rng, pair):
    """SamplingSHAP@K's round (Kariyappa et al. 2024): one ordering shared by h and l, 2
    requests each."""
    n = oracle.n
    pi = rng.permutation(n)
    position = np.empty(n, dtype=np.int64)
    position[pi] = np.arange(n)
    at = position[np.asarray(pair, dtype=np.int64)][:, None]
    requests = np.empty((2 * len(pair), n), dtype=bool)
    requests[0::2] = position[None, :] >= at  # p and the players after it
    requests[1::2] = position[None, :] > at  # the players after it
    made = oracle.affordable(oracle.costs(requests)) // 2 * 2
    values = oracle.values(requests[:made])
    done = np.asarray(pair, dtype=np.int64)[: made // 2]
    stats.update(done, values[0::2] - values[1::2])


class _PairStats:
    """Joint-round sums of differences for Greedy CMCS (Kolpaczki et al. 2025, Alg. 2-3,
    App. A.3), float64."""

    def __init__(self, n):
        self.count = np.zeros((n, n))
        self.total = np.zeros((n, n))
        self.squares = np.zeros((n, n))

    def update(self, players, observations):
        diff = observations[:, None] - observations[None, :]
        index = np.ix_(players, players)
        self.count[index] += 1
        self.total[index] += diff
        self.squares[index] += diff * diff

    def select(self, order, k, min_samples, rng):
        """Players of the pairs drawn with weights by misordering probability (Alg. 3)."""
        n = order.shape[0]
        top, rest = order[:k], order[k:]
        index = np.ix_(top, rest)
        count = self.count[index]
        if rest.size == 0 or count.min() < min_samples:
            return np.arange(n)  # warm-up: full CMCS rounds
        total = self.total[index]
        # Clamped at 0: cancellation in Γ - Σ²/M can go slightly negative (the authors'
        # float32 code then gets NaN and selects no pair).
        var = np.maximum((self.squares[index] - total**2 / count) / (count - 1), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            # Pr(phi_i < phi_j) from the paired CLT; Alg. 3, line 6, of Kolpaczki et al.
            # 2025 lacks a division by M_ij, which the authors' code has.
            prob = ndtr(-total / np.sqrt(var * count))  # the normal CDF, without overhead
        prob[var == 0] = 0.0  # as the authors' code does
        low, high = prob.min(), prob.max()
        if low == high:
            return np.arange(n)
        chosen = rng.random(prob.shape) < (prob - low) / (high - low)
        # Selected players of the top-k first, then the others (the authors' order, which
        # decides who is served in a partial last round).
        return np.concatenate([np.sort(top[chosen.any(axis=1)]),
                               np.sort(rest[chosen.any(axis=0)])])


def _regression_topk(game, k, budget, z, delta, epsilon, rng):
    """Top k of the library's estimate of all values at a fixed budget (method
    "regression"): the same accounting (v(∅) and v(N) included), Bonferroni intervals
    from the estimator's standard errors, the PAC rule checked once at the end."""
    from skshapley.approximators._api import shapley_values

    result = shapley_values(game, budget=budget, random_state=rng)
    values = np.asarray(result.values, dtype=np.float64).reshape(game.n_players, -1)[:, 0]
    std = np.asarray(result.std_errors, dtype=np.float64).reshape(game.n_players, -1)[:, 0]
    std = np.where(np.isfinite(std), std, np.inf)
    lower, upper = values - z * std, values + z * std
    order = order_players(values)
    n = game.n_players
    pac = pac_rule_holds(values, lower, upper, k, epsilon, order)
    empty = float(np.ravel(result.empty_value)[0])
    grand = float(np.ravel(result.grand_value)[0])
    return TopKResult(
        top_k=order[:k].copy(), values=values, std_errors=std,
        confidence_intervals=np.column_stack([lower, upper]),
        n_samples=np.full(n, int(result.n_evaluations), dtype=np.int64),
        n_evaluations=int(result.n_evaluations), pac_satisfied=pac, method="regression",
        k=k, delta=delta, epsilon=epsilon, empty_value=empty, grand_value=grand)


def check_topk_arguments(n_players, k, method, budget, delta, epsilon, min_samples):
    """Validate the arguments of :func:`topk_shapley`; returns them normalised."""
    if isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= k <= n_players:
        raise ValueError(
            f"The 'k' parameter must be an integer in [1, n_players={n_players}]; got {k!r}."
        )
    if method not in TOPK_METHODS:
        raise ValueError(
            f"The 'method' parameter must be one of {list(TOPK_METHODS)}; got {method!r}."
        )
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, Integral)
                               or budget < 2):
        raise ValueError(f"The 'budget' parameter must be an integer >= 2 or None; got "
                         f"{budget!r}.")
    if isinstance(delta, bool) or not isinstance(delta, Real) or not 0.0 < delta < 1.0:
        raise ValueError(f"The 'delta' parameter must be in (0, 1); got {delta!r}.")
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real) or not epsilon >= 0.0:
        raise ValueError(f"The 'epsilon' parameter must be a number >= 0; got {epsilon!r}.")
    if isinstance(min_samples, bool) or not isinstance(min_samples, Integral) \
            or min_samples < 2:
        raise ValueError(f"The 'min_samples' parameter must be an integer >= 2; got "
                         f"{min_samples!r}.")
    if method == "exact" and budget is not None and budget < 2**n_players:
        raise ValueError(
            f"budget={budget} is too small for method='exact' with n_players={n_players}: "
            f"enumeration needs 2**{n_players} = {2**n_players} evaluations."
        )
    if method == "regression" and budget is not None:
        from skshapley.approximators._permutation import PERMUTATION

        smallest = min(2**n_players, PERMUTATION.minimum_budget(n_players, 2))
        if budget < smallest:
            raise ValueError(
                f"budget={budget} is too small for method='regression' with "
                f"n_players={n_players}: the estimator needs at least {smallest} "
                "evaluations; increase budget or use method='cmcs'."
            )
    return int(k), method, (None if budget is None else int(budget)), float(delta), \
        float(epsilon), int(min_samples)


def topk_shapley(game, k, *, method="cmcs_at_k", budget=None, pac_stop=True, delta=0.01,
                 epsilon=5e-4, min_samples=CMCS_WARM_UP_ROUNDS,
                 random_state=None) -> TopKResult:
    """Identify the ``k`` players with the largest Shapley values of ``game``.

    Implements CMCS, Greedy CMCS and CMCS@K of Kolpaczki, Nielen & Hüllermeier (2025),
    with SHAP@K's PAC stopping rule (Kariyappa et al. 2024).

    Parameters
    ----------
    game : Game
        A game with one output.
    k : int
        Size of the set to find, ``1 <= k <= n_players``.
    method : str, default="cmcs_at_k"
        "cmcs_at_k": CMCS warm-up, then rounds on the two players at the cut (the
        paper's recommended PAC method, Sec. 6.4). "greedy_cmcs": CMCS rounds on the
        players of the pairs most likely misordered (Alg. 2-3). "cmcs": plain CMCS
        (Alg. 1). "sampling_shap_at_k": SHAP@K's rule on permutation samples;
        "approshapley": permutation sampling (Castro et al. 2009). "exact": all 2^n
        coalitions. "regression": the whole budget on the library's own estimator of all
        values (:func:`~skshapley.approximators.shapley_values` with ``method="auto"``:
        exact when 2^n fits, else the regression estimators) and the top k of its
        estimates, intervals from its standard errors; the fixed-budget choice (it
        cannot stop early, and reports whether the PAC rule holds at the end; needs a
        ``budget``). "cmcs_independent" and
        "cmcs_identical": the uncoupled ablation steps of the paper's Fig. 2, for
        comparison only.
    budget : int, optional
        Most evaluations to use (v(∅) and v(N) count once, every other request counts,
        repeats included). None: no cap (only with ``pac_stop=True``; the run may then
        be long).
    pac_stop : bool, default=True
        Stop as soon as the PAC rule holds (capped by ``budget``); False spends the
        budget.
    delta : float, default=0.01
        Confidence parameter: the intervals hold simultaneously with probability about
        ``1 - delta``, and a PAC stop is correct within ``epsilon`` with that probability.
        "About": the intervals rest on the normal approximation of each player's mean
        marginal contribution. A contribution that is large but rare, seen in
        none of a player's samples, cannot be detected: a player whose samples are all
        equal gets an interval of zero width (measured: a game with one spike of +315 on
        a single coalition was certified wrongly in 77 of 77 certified runs). Raise
        ``min_samples`` where such contributions are plausible, e.g. an accuracy score on
        a small validation set, whose steps are often exactly 0.
    epsilon : float, default=5e-4
        Tolerance of the PAC rule, in the units of the game.
    min_samples : int, default=30
        Observations every player needs before its interval is defined (M_min):
        CMCS@K and SamplingSHAP@K begin with this many full rounds
        (``CMCS_WARM_UP_ROUNDS``).
    random_state : None, int, Generator or RandomState

    Returns
    -------
    TopKResult

    Examples
    --------
    >>> from skshapley.games import AdditiveGame
    >>> from skshapley.approximators import topk_shapley
    >>> game = AdditiveGame([0.1, 0.9, 0.5, 0.0, 0.7])
    >>> result = topk_shapley(game, 2, budget=5000, epsilon=0.01, random_state=0)
    >>> result.top_k.tolist(), result.pac_satisfied
    ([1, 4], True)
    """
    n = game.n_players
    k, method, budget, delta, epsilon, min_samples = check_topk_arguments(
        n, k, method, budget, delta, epsilon, min_samples)
    if budget is None and not pac_stop and method != "exact":
        raise ValueError("A fixed-budget run (pac_stop=False) needs a 'budget'.")
    if budget is None and method == "regression":
        raise ValueError("method='regression' spends a fixed budget: give a 'budget'.")
    rng = as_generator(random_state)
    z = bonferroni_z(delta, n)
    if method == "regression":
        return _regression_topk(game, k, budget, z, delta, epsilon, rng)
    oracle = _Oracle(game, budget)
    stats = _Stats(n)

    def finish():
        order = order_players(stats.mean)
        lower, upper = _bounds(stats, z, min_samples)
        if method == "exact" or n == 1:  # one player: v(N) - v(∅), exact
            std = np.zeros(n)
            lower = upper = stats.mean
            pac = True
        else:
            std = stats.std() / np.sqrt(np.maximum(stats.cnt, 1))
            pac = _pac(stats, k, z, epsilon, min_samples)
        return TopKResult(
            top_k=order[:k].copy(), values=stats.mean.copy(), std_errors=std,
            confidence_intervals=np.column_stack([lower, upper]), n_samples=stats.cnt.copy(),
            n_evaluations=int(oracle.used), pac_satisfied=bool(pac), method=method, k=k,
            delta=delta, epsilon=epsilon, empty_value=oracle.empty_value,
            grand_value=oracle.grand_value)

    if method == "exact" or n == 1:
        # One player: its value is v(N) - v(∅), already paid for (and no round could
        # ever spend the budget, every request being free).
        values = oracle.values(all_coalitions(n))
        phi = np.empty((n, 1))
        get_backend().exact_shapley_from_values(np.ascontiguousarray(values[:, None]), n, phi)
        stats.mean[:] = phi[:, 0]
        stats.cnt[:] = 2 ** (n - 1)
        return finish()

    guard = _GUARD[method]
    everyone = np.arange(n)

    def keep_going():
        # The partition and intervals of the round about to start (recomputed after
        # every round, tested before the next one).
        nonlocal order, bounds
        if budget is not None and oracle.used + guard > budget:
            return False
        order = order_players(stats.mean)
        bounds = _bounds(stats, z, min_samples)
        return not (pac_stop and _pac(stats, k, z, epsilon, min_samples, order, bounds))

    order = bounds = None

    pairs = _PairStats(n) if method == "greedy_cmcs" else None
    if method in ("cmcs_at_k", "sampling_shap_at_k"):
        # Explicit warm-up of min_samples full rounds (as SHAP@K does).
        for _ in range(min_samples):
            if oracle.remaining() < 1:
                return finish()
            if method == "cmcs_at_k":
                _cmcs_round(oracle, stats, rng, everyone)
            else:
                _permutation_round(oracle, stats, rng)
    while keep_going():
        if method == "cmcs":
            _cmcs_round(oracle, stats, rng, everyone)
        elif method == "greedy_cmcs":
            # Chosen from past rounds only, before S is drawn: choosing after seeing
            # v(S) would bias the estimates.
            players = pairs.select(order, k, min_samples, rng)
            done, observations = _cmcs_round(oracle, stats, rng, players)
            if done.shape[0] == players.shape[0]:  # a partial round updates no pairs
                pairs.update(done, observations)
        elif method == "approshapley":
            _permutation_round(oracle, stats, rng)
        elif method in ("cmcs_independent", "cmcs_identical"):
            _uncoupled_round(oracle, stats, rng, everyone, method == "cmcs_identical")
        else:
            if k == n:
                break
            lower, upper = bounds
            top, rest = order[:k], order[k:]
            # The weakest-looking member and the strongest-looking outsider.
            pair = [int(top[np.argmin(lower[top])]), int(rest[np.argmax(upper[rest])])]
            if method == "cmcs_at_k":
                _cmcs_round(oracle, stats, rng, pair)
            else:
                _pair_round_permutation(oracle, stats, rng, pair)
    return finish()
