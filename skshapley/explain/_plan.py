"""The explainer's plan: method, sampler and budget resolved once at ``fit``, run by the
row workers."""

from __future__ import annotations

import contextlib
import copy
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from sklearn import config_context as sklearn_config_context

from skshapley._config import config_context
from skshapley.approximators import (
    HIERARCHICAL,
    MAX_EXACT_EVALUATIONS,
    MAX_EXACT_PLAYERS,
    METHOD_RECORDS,
    check_budget_fits,
    choose_method,
    default_budget,
    exact_evaluations,
    make_sampler,
    resolve_sampler,
)
from skshapley.games import MarginalGame
from skshapley.permutations import PermutationSampler
from skshapley.utils import chunk_rows, get_working_memory

# Rows stacked into one game (one design, one model call per chunk): more only adds
# memory, since the solver's work grows with the rows anyway.
ROWS_PER_GAME = 16


class RowExplanation(NamedTuple):
    """One explained row: values and standard errors (d, k), base value (k,), the
    evaluations spent and the independent draws behind its errors."""

    values: np.ndarray
    std_errors: np.ndarray
    base_value: np.ndarray
    n_evaluations: int
    n_draws: int


@dataclass(frozen=True)
class ExplainPlan:
    """How every row of an explainer is explained, fixed at ``fit``.

    Attributes
    ----------
    method : str
        The approximator (a key of ``skshapley.approximators.METHOD_RECORDS``).
    budget : int
        Evaluations per row.
    sampler : str, PermutationSampler or None
        The ordering sampler of methods that take one.
    tol : float or None
    seed : int
        Every row's seed: its draws do not depend on its position or ``n_jobs``.
    n_outputs : int
        Model outputs per row.
    rows_per_game : int
        Rows stacked into one game (1 when rows cannot share coalitions).
    options : dict
        Further approximator options (e.g. the surrogate's ``max_cv_terms``).
    notes : tuple of str
        What the user should know about the plan (a budget capped to enumeration).
    reason : str
        Why ``method="auto"`` chose ``method``.
    column_player : int ndarray (n_features,) or None
        The group (player) of each column when the players are groups of columns
        (``ShapleyExplainer(groups=...)``); None: one player per column.
    """

    method: str
    budget: int
    sampler: object
    tol: float | None
    seed: int
    n_outputs: int
    rows_per_game: int = ROWS_PER_GAME
    options: dict = field(default_factory=dict)
    notes: tuple = ()
    reason: str = ""
    column_player: np.ndarray | None = None

    @property
    def record(self):
        return HIERARCHICAL if self.method == "hierarchical" else METHOD_RECORDS[self.method]

    def explain_rows(self, predict, X, background, config, device=None):
        """Explain the rows of ``X`` (a joblib worker's chunk) with the model output
        ``predict``; a list of :class:`RowExplanation`.

        Rows that can share coalitions are stacked into games of ``rows_per_game`` rows,
        one design and one model call per chunk of ``working_memory``; with ``tol`` each
        row stops on its own."""
        # the plan's settings were checked when it was made: the estimators' own
        # parameter checks (scikit-learn's validate_params binds a signature each call,
        # ~0.2 ms of a 2.5 ms one-row explanation) are skipped
        # config: the caller's skshapley settings, for a joblib worker; None in the
        # caller's own thread, which has them already
        outer = contextlib.nullcontext() if config is None else config_context(**config)
        with outer, sklearn_config_context(skip_parameter_validation=True):
            size = self.rows_per_game if self.tol is None else 1
            rows = []
            for start in range(0, X.shape[0], size):
                group = X[start : start + size]
                game = MarginalGame(predict, group, background, device=device,
                                    column_player=self.column_player)
                options = dict(self.options)
                if self.record.uses_sampler:
                    # an instance restarts its own stream for every game, like a seed
                    options["sampler"] = (copy.deepcopy(self.sampler).reset()
                                          if isinstance(self.sampler, PermutationSampler)
                                          else self.sampler)
                result = self.record.run(game, self.budget, tol=self.tol,
                                         random_state=self.seed, **options)
                rows.extend(_split_rows(result, game.n_players, group.shape[0],
                                        self.n_outputs))
        return rows


def _split_rows(result, n_features, n_rows, n_outputs):
    values = np.reshape(result.values, (n_features, n_rows, n_outputs))
    std_errors = np.reshape(result.std_errors, (n_features, n_rows, n_outputs))
    empty = np.reshape(result.empty_value, (n_rows, n_outputs))
    return [RowExplanation(values[:, i], std_errors[:, i], empty[i], result.n_evaluations,
                           result.n_draws) for i in range(n_rows)]


# Seconds to assemble one value of the model's input (a row of the background with the
# coalition's columns swapped in): the host kernel copies 0.30-0.44 ns a value on the
# 2-core CI machine (d = 20-500, measured in a one-row explanation), 10-30 % of an
# MLP's own time per row.
ASSEMBLY_SECONDS_PER_VALUE = 0.4e-9

# Model rows per timed call: a call of the background alone is dominated by the model's
# per-call overhead (input checks, ~0.1-1 ms for scikit-learn), while games call it on
# chunks of many coalitions at once; 4,096 rows measure its throughput instead.
TIMED_ROWS = 4096


def time_evaluation(predict, background, first_seconds):
    """Seconds of one coalition evaluation of one row (the model on the background
    rows), measured as the games call the model: on a batch of about ``TIMED_ROWS``
    rows (the background repeated), the fastest of three calls (the first call of a
    batch this size can take 2-3x as long: an MLP at d = 20 measured 27 us an
    evaluation cold and 10-11 warm, which sent "auto" to a regression that then took
    1.7x the model's time). A model slow enough that the background alone took
    ``first_seconds`` >= 0.1 s is not called again."""
    n = background.shape[0]
    if first_seconds >= 0.1:
        return first_seconds
    # within a quarter of working_memory
    repeats = max(1, min(TIMED_ROWS // n, chunk_rows(4 * background.nbytes)))
    batch = np.tile(background, (repeats, 1))
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        predict(batch)
        best = min(best, time.perf_counter() - start)
    return min(first_seconds, best / repeats)


def make_plan(method, sampler, max_evals, tol, *, n_features, n_outputs, n_background,
              seed, evaluation_seconds=None, working_memory=None,
              column_player=None, hierarchy=None) -> ExplainPlan:
    """Resolve the explainer's parameters into a plan, or raise a ``ValueError`` naming
    the parameter that cannot run (before any allocation).

    Parameters
    ----------
    method, sampler, max_evals, tol
        As given to ``ShapleyExplainer`` (``max_evals`` may be "auto").
    n_features, n_outputs, n_background : int
    seed : int
    evaluation_seconds : float or callable, optional
        Seconds of one coalition evaluation of one row, or a function returning it
        (called only when ``method="auto"`` must weigh estimators).
    working_memory : float, optional
    column_player : int ndarray (n_features,), optional
        The group of each column: the players are then the groups (budgets, methods
        and exactness are for ``max(column_player) + 1`` players).
    hierarchy : skshapley.utils._hierarchy.Hierarchy, optional
        A tree over the columns: the plan then computes Owen values over it
        (``method="hierarchical"``), exactly when enumeration fits the budget.
    """
    n_columns = n_features
    if column_player is not None:
        column_player = np.asarray(column_player, dtype=np.int64)
        n_features = int(column_player.max()) + 1
    d = n_features
    players = "features" if column_player is None else "groups"
    working_memory = get_working_memory(working_memory)
    # one coalition of one row: the background with the row's features swapped in
    batch = n_background * n_columns * 8
    if batch > working_memory * 2**20:
        needed = int(np.ceil(batch / 2**20))
        raise ValueError(
            f"working_memory={working_memory:g} MiB is too small for one model call: one "
            f"coalition of one row is {n_background} background rows x {n_columns} features "
            f"({batch / 2**20:,.1f} MiB); set working_memory to at least {needed} "
            "(skshapley.set_config) or use a smaller background."
        )
    if hierarchy is not None:
        return _hierarchical_plan(method, sampler, max_evals, tol, hierarchy,
                                  n_outputs=n_outputs, seed=seed,
                                  working_memory=working_memory)
    budget = default_budget(d) if max_evals == "auto" else int(max_evals)
    notes = ()
    if d > MAX_EXACT_PLAYERS and d < 64 and budget > 2**d:
        # Past 2^d evaluations sampling gains nothing over enumeration, which is itself
        # out of reach above 20 features: such a budget is a mistake, not a wish.
        raise ValueError(
            f"max_evals={budget} is more than the 2^{d} = {2**d} coalitions of {d} "
            f"{players}, and could not run in any reasonable time; use max_evals <= "
            f"{2**d} (the default, 'auto', is {default_budget(d)})."
        )
    if method not in ("auto", "exact") and d <= MAX_EXACT_PLAYERS and budget > 2**d:
        notes = (f"max_evals={budget} is more than the 2^{d} = {2**d} coalitions: every "
                 "coalition was evaluated once, so the values are exact.",)
        method, budget = "exact", 2**d
    # Chosen for a one-row call: rows stacked into one game share the design and its
    # fit, which a single row pays alone (whose time must stay within 1.5x its
    # evaluations too)
    context = {"n_outputs": n_outputs, "working_memory": working_memory}
    if method == "auto" and evaluation_seconds is not None:
        context["evaluation_seconds"] = evaluation_seconds
        context["overhead_seconds"] = (ASSEMBLY_SECONDS_PER_VALUE * n_background
                                       * n_columns)
    choice = choose_method(method, d, budget, tol, **context)
    record = METHOD_RECORDS[choice.method]
    if tol is not None and not (record.takes_tol or record.exact):
        raise ValueError(
            f"tol={tol!r} stops sampled orderings early and is only supported by "
            f"method='permutation' (or 'auto'); got method={choice.method!r}."
        )
    sampler = resolve_sampler(sampler, d, budget) if record.uses_sampler else None
    unit = 1 if sampler is None else make_sampler(sampler, d, rng=0).unit_size
    minimum = record.minimum_budget(d, unit)
    if budget < minimum:
        if record.exact:
            raise ValueError(
                f"max_evals={budget} is too small for method='exact' with {d} {players}: "
                f"enumeration needs 2**{d} = {2**d} evaluations per row; increase "
                "max_evals or use method='permutation'."
            )
        raise ValueError(
            f"max_evals={budget} is too small for method={choice.method!r} with {d} "
            f"{players}: it needs at least {minimum} evaluations per row; increase "
            "max_evals."
        )
    if record.exact and d > MAX_EXACT_PLAYERS:
        raise ValueError(
            f"method='exact' needs 2**{d} = {2**d} evaluations per row with {d} {players}, "
            f"above the limit of {MAX_EXACT_PLAYERS} {players}; use method='auto'."
        )
    check_budget_fits(choice.method, d, budget, n_outputs, working_memory=working_memory,
                      name="max_evals")
    rows_per_game = 1
    if record.shares_game:
        per_row = record.cost(d, budget, n_outputs).memory_bytes
        rows_per_game = max(1, min(ROWS_PER_GAME, chunk_rows(per_row, working_memory)))
    return ExplainPlan(method=choice.method, budget=budget, sampler=sampler, tol=tol,
                       seed=seed, n_outputs=n_outputs, rows_per_game=rows_per_game,
                       options=choice.options, notes=notes, reason=choice.reason,
                       column_player=column_player)


HIERARCHICAL_METHODS = ("auto", "exact", "permutation")


def _hierarchical_plan(method, sampler, max_evals, tol, hierarchy, *, n_outputs, seed,
                       working_memory) -> ExplainPlan:
    """The plan of Owen values over ``hierarchy``: enumeration when it fits the budget
    (always with ``method="exact"``), else orderings consistent with the hierarchy."""
    d = hierarchy.n_leaves
    if method not in HIERARCHICAL_METHODS:
        raise ValueError(
            f"A hierarchy in 'groups' asks for Owen values, which are enumerated or "
            f"sampled over orderings that keep every cluster together: method must be one "
            f"of {list(HIERARCHICAL_METHODS)}; got method={method!r}."
        )
    if not (isinstance(sampler, str) and sampler == "auto"):
        raise ValueError(
            f"A hierarchy in 'groups' samples its own orderings (those that keep every "
            f"cluster together, in antithetic pairs); leave sampler='auto', got "
            f"sampler={sampler!r}."
        )
    # each distinct coalition is evaluated once: never more than 2^d, which the default
    # budget buys up to d = 10
    need = exact_evaluations(hierarchy)
    budget = default_budget(d) if max_evals == "auto" else int(max_evals)
    notes = ("Owen values over the hierarchy of 'groups' (Owen 1977; Winter 1989): each "
             "cluster shares credit among its own columns first; they differ from "
             "Shapley values unless the hierarchy is flat.",)
    if method == "exact":
        if need > MAX_EXACT_EVALUATIONS:
            raise ValueError(
                f"method='exact' needs {need} coalition evaluations per row for Owen "
                f"values over this hierarchy, above the limit of {MAX_EXACT_EVALUATIONS}; "
                "use method='auto' to sample them."
            )
        if max_evals != "auto" and budget < need:
            raise ValueError(
                f"max_evals={budget} is too small for method='exact': Owen values over "
                f"this hierarchy enumerate {need} coalitions per row; increase max_evals "
                "or use method='auto'."
            )
        exact = True
    else:
        exact = need <= budget
        if exact and method == "permutation":
            notes += (f"max_evals={budget} is at least the {need} coalitions that exact "
                      "Owen values over the hierarchy need: they were enumerated.",)
    if exact:
        budget = need
    else:
        minimum = HIERARCHICAL.minimum_budget(d, 2)
        if budget < minimum:
            raise ValueError(
                f"max_evals={budget} is too small for Owen values over {d} features: "
                f"sampling needs at least {minimum} evaluations per row (one pair of "
                f"orderings) and enumeration {need}; increase max_evals."
            )
    per_row = HIERARCHICAL.cost(d, budget, n_outputs).memory_bytes
    rows_per_game = 1 if tol is not None else max(1, min(ROWS_PER_GAME,
                                                        chunk_rows(per_row, working_memory)))
    return ExplainPlan(method="hierarchical", budget=budget, sampler=None, tol=tol,
                       seed=seed, n_outputs=n_outputs, rows_per_game=rows_per_game,
                       options={"hierarchy": hierarchy, "exact": exact}, notes=notes,
                       reason="Owen values over the hierarchy given in 'groups'")
