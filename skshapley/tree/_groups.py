"""Exact TreeSHAP of groups of columns, on the existing path kernels.

The players are groups of columns, and a coalition of groups is the union of their
columns. On one root-to-leaf path with leaf value v, each column j has TreeSHAP's one
fraction o_j (whether the row satisfies the path's interval on j) and zero fraction z_j
(the product of the cover ratios of the path's edges on j), and the path's game is
v prod_{j in S} o_j prod_{j not in S} z_j for path-dependent TreeSHAP (Lundberg et al.
2020, Sec. 4.1, Alg. 2; per path as in GPUTreeShap, Mitchell, Frank & Holmes 2022,
Sec. 3.1) and v prod_{j in S} o_j(x) prod_{j not in S} o_j(r) for the interventional
game of a background row r (Lundberg et al. 2020, Sec. 4.2). For a coalition of groups
both products factor by group: the path's game over groups has one fraction
o_g = prod_{j in g} o_j (the row satisfies every interval of the group on the path)
and zero fraction z_g = prod_{j in g} z_j. That is the path of a single feature per
group, TreeSHAP's "feature seen twice" case (Alg. 2 unwinds the earlier element and
extends once with the product of both fractions).

The path-dependent kernels take each path's elements sorted by group (``elements``)
and the runs of one group's elements as the path's players (``players``, a
``PathGroups``): a row satisfies a player where it satisfies every element of its run,
and the player's zero fraction is the product of theirs. The interventional kernels
read o_j from a column of X and the path's interval on it, one condition per element,
so for them a group whose path tests one of its columns keeps that element as it is,
while a group that a path tests on two or more of its columns (say x0 in [a, b) and
x1 in [c, d)) becomes one element on an *indicator column*: 1 where the row satisfies
all of the group's intervals on that path, tested by the interval [0.5, inf). The rows
(explained and background) are widened by these indicator columns, identical conditions
share one,
and the kernels' values of the widened columns are summed per group (each path gives
each group one element, so the sum picks that element). Paths are taken a range at a
time, each range widening the rows by its own indicator columns only, so the widened
rows stay small. Renaming the split features to their group's number instead would not
do: merging "x0 in [a, b)" and "x1 in [c, d)" into one interval on one column has no
meaning (the intervals are on different columns), and leaving them as two elements of
one player makes the kernels treat them as two players.

A few rows of the interventional game are explained by walking the model's own trees
instead (``tree_interventional_walk`` with ``player``): where x and a background row
first part on a column of a group, the whole group comes from one of them below, the
walk's form of the same one fraction o_g.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from numbers import Real

import numpy as np

from skshapley.backends import has_kernel
from skshapley.backends.tree import MISSING_NAN, PathArrays, PathGroups, elements_satisfied
from skshapley.tree import _cache
from skshapley.tree._api import (
    WALK_ROWS,
    TreeShapValues,
    _check_X,
    _resolve_backend,
    interventional_shap,
)
from skshapley.tree._ensemble import MAX_PATH_FEATURES, TreeEnsemble
from skshapley.utils import (
    NumberInterval,
    StrOptions,
    chunk_rows,
    get_working_memory,
    validate_params,
)


def _csr(counts):
    return np.r_[0, np.cumsum(counts)].astype(np.int64)


# Paths are explained a range at a time, each range's rows widened only by the indicator
# columns its paths use (at most this many): one set of widened rows for all paths made
# the kernels read rows of ~50,000 columns, 6x slower than the model's own columns on a
# forest of 73,000 paths; a range's rows stay in cache.
RANGE_INDICATORS = 1024


@dataclass(frozen=True)
class PathRange:
    """Some consecutive paths of the grouped IR, as an ensemble of their own.

    Attributes
    ----------
    ensemble : TreeEnsemble
        The paths over the model's columns and this range's indicator columns
        (``n_columns + n_indicators`` columns); its offset is 0, so the interventional
        base values of the ranges add up (the model's offset is added once).
    indicator_ptr : int64 (n_indicators + 1,)
    indicator_element : int64
        Indicator column k is 1 where a row satisfies every element
        ``indicator_element[indicator_ptr[k]:indicator_ptr[k + 1]]`` of the model's
        ensemble.
    condition : int64
        One element of the model's ensemble per distinct condition of
        ``indicator_element`` (paths repeat their splits' conditions).
    condition_of_element : int64
        The condition of each of ``indicator_element``.
    player : int64 (n_columns + n_indicators,)
        The group of each column of the widened rows.
    """

    ensemble: TreeEnsemble
    indicator_ptr: np.ndarray
    indicator_element: np.ndarray
    condition: np.ndarray
    condition_of_element: np.ndarray
    player: np.ndarray

    @property
    def n_indicators(self) -> int:
        return len(self.indicator_ptr) - 1

    def widen(self, X, source):
        """float64 (n_rows, n_columns + n_indicators): rows prepared by ``source`` (the
        model's ensemble) followed by their indicator columns."""
        if self.n_indicators == 0:
            return X
        condition = self.condition
        satisfied = elements_satisfied(X[:, source.feature[condition]],
                                       source.lower[condition], source.upper[condition],
                                       source.missing_branch[condition],
                                       source.missing_mode[condition])
        indicators = np.logical_and.reduceat(satisfied[:, self.condition_of_element],
                                             self.indicator_ptr[:-1], axis=1)
        out = np.empty((X.shape[0], X.shape[1] + self.n_indicators))
        out[:, :X.shape[1]] = X
        out[:, X.shape[1]:] = indicators
        return out

    def to_groups(self, values, n_groups):
        """Sum ``values`` (..., n_columns + n_indicators) over the widened columns of
        each group: (..., n_groups), by a product with the 0/1 column-to-group matrix
        (``np.add.at`` took a ninth of a 1,000-row interventional call)."""
        membership = np.zeros((len(self.player), n_groups))
        membership[np.arange(len(self.player)), self.player] = 1.0
        return values @ membership


@dataclass(frozen=True)
class GroupedPaths:
    """The paths of a tree ensemble with one element per group of columns.

    Attributes
    ----------
    ensemble : TreeEnsemble
        The grouped paths, over ``n_columns + n_indicators`` columns: the model's
        columns, then the indicator columns, numbered in the order of the paths that
        first use them (read as 0/1, input dtype float64, no encoder: rows are prepared
        by ``source`` and widened by :meth:`widen`).
    source : TreeEnsemble
        The model's paths.
    indicator_ptr : int64 (n_indicators + 1,)
    indicator_element : int64
        Indicator column k is 1 where a row satisfies every element
        ``indicator_element[indicator_ptr[k]:indicator_ptr[k + 1]]`` of ``source``.
    player : int64 (n_columns + n_indicators,)
        The group of each column of the widened rows.
    n_groups : int
    elements : PathArrays
        The model's paths with each path's elements sorted by group, then column.
    players : PathGroups
        Each path's players: the runs of ``elements`` on one group's columns (the
        path-dependent kernels read these, with no indicator columns).
    ranges : tuple of PathRange
        The paths of ``ensemble`` in ranges of at most ``RANGE_INDICATORS`` indicator
        columns, as the values are computed; one range holding them all when no path
        tests a group on two columns (it keeps the trees' nodes, for the kernel that
        walks them).
    """

    ensemble: TreeEnsemble
    source: TreeEnsemble
    indicator_ptr: np.ndarray
    indicator_element: np.ndarray
    player: np.ndarray
    n_groups: int
    elements: PathArrays
    players: PathGroups
    ranges: tuple = ()
    # the last background and its rows widened by each range: an explainer passes the
    # same background with every call (widening it took a fifth of one row's time)
    _widened_background: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def n_indicators(self) -> int:
        return len(self.indicator_ptr) - 1

    def widened_background(self, background):
        """The prepared ``background`` widened by each range, kept for the next call
        with an equal background."""
        last, widened = self._widened_background.get("last", (None, None))
        if last is None or last.shape != background.shape or not np.array_equal(
                last, background, equal_nan=True):
            widened = [part.widen(background, self.source) for part in self.ranges]
            # one assignment: a thread reading the cache sees a pair that belongs together
            self._widened_background["last"] = (background.copy(), widened)
        return widened


def group_paths(ensemble, column_group):
    """:class:`GroupedPaths` of ``ensemble`` for the groups ``column_group``.

    Parameters
    ----------
    ensemble : TreeEnsemble
    column_group : int array-like (n_features,)
        The group of each column of the ensemble (0..n_groups-1, none empty).

    Returns
    -------
    GroupedPaths
    """
    column_group = np.asarray(column_group, dtype=np.int64)
    if column_group.shape != (ensemble.n_features,):
        raise ValueError(
            f"column_group must give a group to each of the {ensemble.n_features} columns "
            f"of the model; got shape {column_group.shape}."
        )
    n_columns, n_paths = ensemble.n_features, ensemble.n_paths
    n_groups = int(column_group.max()) + 1 if n_columns else 0
    path_of = np.repeat(np.arange(n_paths), ensemble.path_lengths)
    group = column_group[ensemble.feature]
    # each path's elements by group, then column: a group's elements are one run
    order = np.lexsort((ensemble.feature, group, path_of))
    path_sorted, group_sorted = path_of[order], group[order]
    if len(order):
        starts = np.flatnonzero(np.r_[True, (np.diff(path_sorted) != 0)
                                      | (np.diff(group_sorted) != 0)])
    else:
        starts = np.zeros(0, np.int64)
    run_length = np.diff(np.r_[starts, len(order)])
    shared = np.flatnonzero(run_length > 1)  # runs of two or more columns of a group

    first = order[starts]  # a run of one element keeps it
    feature = ensemble.feature[first].astype(np.int64)
    lower, upper = ensemble.lower[first].copy(), ensemble.upper[first].copy()
    missing = ensemble.missing_branch[first].copy()
    mode = ensemble.missing_mode[first].copy()
    zero_fraction = (np.multiply.reduceat(ensemble.zero_fraction[order], starts)
                     if len(starts) else ensemble.zero_fraction[:0])

    indicator_ptr, indicator_element = np.zeros(1, np.int64), np.zeros(0, np.int64)
    indicator_group = np.zeros(0, np.int64)
    if shared.size:
        # Runs with the same conditions (column, interval, missing rule) share a column:
        # rows of the conditions padded to the longest run with column -1, compared as
        # bytes.
        longest = int(run_length[shared].max())
        conditions = np.column_stack([
            ensemble.feature.astype(np.float64), ensemble.lower, ensemble.upper,
            ensemble.missing_branch.astype(np.float64),
            ensemble.missing_mode.astype(np.float64)])
        padded = np.zeros((shared.size, longest, conditions.shape[1]))
        padded[:, :, 0] = -1.0
        slot = np.arange(longest)
        inside = slot[None, :] < run_length[shared][:, None]
        element = np.where(inside, starts[shared][:, None] + slot[None, :], 0)
        padded[inside] = conditions[order[element[inside]]]
        keys = np.ascontiguousarray(padded.reshape(shared.size, -1))
        keys = keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).ravel()
        _, representative, indicator_of_run = np.unique(keys, return_index=True,
                                                        return_inverse=True)
        # Numbered in the order of the paths that first use them (not by key), so that
        # the kernels, which walk the paths in order, read a range's indicator columns
        # roughly in order too.
        by_first_use = np.argsort(representative, kind="stable")
        renumber = np.empty_like(by_first_use)
        renumber[by_first_use] = np.arange(len(by_first_use))
        representative = representative[by_first_use]
        indicator_of_run = renumber[indicator_of_run.ravel()]
        kept = shared[representative]
        indicator_ptr = _csr(run_length[kept])
        indicator_element = np.concatenate(
            [order[s:s + n] for s, n in zip(starts[kept], run_length[kept], strict=True)])
        indicator_group = group_sorted[starts[kept]]
        feature[shared] = n_columns + indicator_of_run
        lower[shared], upper[shared] = 0.5, np.inf
        missing[shared], mode[shared] = 0, MISSING_NAN

    element_path = path_sorted[starts] if len(starts) else path_sorted
    # each path's elements sorted by column again, the order the IR keeps
    resorted = np.lexsort((feature, element_path))
    n_indicators = len(indicator_ptr) - 1
    grouped = dataclasses.replace(
        ensemble,
        path_ptr=_csr(np.bincount(element_path, minlength=n_paths)),
        feature=np.ascontiguousarray(feature[resorted], np.int32),
        lower=np.ascontiguousarray(lower[resorted]),
        upper=np.ascontiguousarray(upper[resorted]),
        missing_branch=np.ascontiguousarray(missing[resorted], np.uint8),
        missing_mode=np.ascontiguousarray(mode[resorted], np.uint8),
        zero_fraction=np.ascontiguousarray(zero_fraction[resorted]),
        n_features=n_columns + n_indicators,
        input_dtype=np.dtype(np.float64), input_encoder=None,
        # the trees node by node test the model's columns: right for the walking kernel
        # only when no path tests a group twice (then the groups' values are sums of
        # their columns')
        nodes=ensemble.nodes if n_indicators == 0 else None,
    )
    player = np.r_[column_group, indicator_group].astype(np.int64)
    source_paths = ensemble.path_arrays()
    elements = source_paths._replace(**{
        name: np.ascontiguousarray(getattr(source_paths, name)[order])
        for name in ("feature", "lower", "upper", "missing_branch", "missing_mode",
                     "zero_fraction")})
    players = PathGroups(
        player_ptr=_csr(np.bincount(element_path, minlength=n_paths)),
        first=starts.astype(np.int64), length=run_length.astype(np.int64),
        zero_fraction=np.ascontiguousarray(zero_fraction, np.float64),
        slot=np.ascontiguousarray(group_sorted[starts], np.int32))
    return GroupedPaths(ensemble=grouped, source=ensemble, indicator_ptr=indicator_ptr,
                        indicator_element=indicator_element, player=player,
                        n_groups=n_groups, elements=elements, players=players,
                        ranges=_ranges(ensemble, grouped, indicator_ptr,
                                       indicator_element, player))


def _path_range(source, grouped, first, stop, indicator_ptr, indicator_element, player):
    """:class:`PathRange` of the paths ``first:stop`` of the grouped IR ``grouped`` (of
    the model's ensemble ``source``), its indicator columns numbered from the model's
    columns on, in their order."""
    n_columns = len(player) - (len(indicator_ptr) - 1)
    e0, e1 = grouped.path_ptr[first], grouped.path_ptr[stop]
    o0, o1 = grouped.out_ptr[first], grouped.out_ptr[stop]
    feature = grouped.feature[e0:e1].astype(np.int64)
    used = np.unique(feature[feature >= n_columns]) - n_columns
    local = feature.copy()
    is_indicator = feature >= n_columns
    local[is_indicator] = n_columns + np.searchsorted(used, feature[is_indicator] - n_columns)
    counts = indicator_ptr[used + 1] - indicator_ptr[used]
    elements = (np.concatenate([indicator_element[indicator_ptr[k]:indicator_ptr[k + 1]]
                                for k in used]) if used.size else indicator_element[:0])
    if elements.size:
        # distinct (column, interval, missing rule) conditions, compared by value
        keys = np.column_stack([source.feature[elements].astype(np.float64),
                                source.lower[elements], source.upper[elements],
                                source.missing_branch[elements],
                                source.missing_mode[elements]])
        _, first_of, condition_of_element = np.unique(keys, axis=0,
                                                      return_index=True,
                                                      return_inverse=True)
        condition = elements[first_of]
        condition_of_element = condition_of_element.ravel()
    else:
        condition = condition_of_element = elements
    whole = first == 0 and stop == grouped.n_paths
    ensemble = dataclasses.replace(
        grouped,
        path_ptr=grouped.path_ptr[first:stop + 1] - e0,
        feature=np.ascontiguousarray(local, np.int32),
        lower=grouped.lower[e0:e1], upper=grouped.upper[e0:e1],
        missing_branch=grouped.missing_branch[e0:e1],
        missing_mode=grouped.missing_mode[e0:e1],
        zero_fraction=grouped.zero_fraction[e0:e1],
        out_ptr=grouped.out_ptr[first:stop + 1] - o0,
        out_index=grouped.out_index[o0:o1], out_value=grouped.out_value[o0:o1],
        offset=np.zeros_like(grouped.offset), n_features=n_columns + used.size,
        nodes=grouped.nodes if whole else None)
    return PathRange(ensemble=ensemble, indicator_ptr=_csr(counts),
                     indicator_element=elements, condition=condition,
                     condition_of_element=condition_of_element,
                     player=np.r_[player[:n_columns], player[n_columns + used]])


def _ranges(source, grouped, indicator_ptr, indicator_element, player):
    """The grouped paths in ranges of at most ``RANGE_INDICATORS`` indicator elements
    (so at most as many indicator columns); one range when there are none."""
    # indicator elements before each path (and after the last): a range [a, b) holds
    # before[b] - before[a] of them
    is_indicator = grouped.feature >= source.n_features
    before = np.r_[0, np.cumsum(is_indicator)][grouped.path_ptr]
    bounds = [0]
    while bounds[-1] < grouped.n_paths:
        a = bounds[-1]
        # the longest range from a within RANGE_INDICATORS, at least one path
        b = int(np.searchsorted(before, before[a] + RANGE_INDICATORS, side="right")) - 1
        bounds.append(min(grouped.n_paths, max(b, a + 1)))
    if len(bounds) == 1:
        bounds.append(0)  # no paths: one empty range
    return tuple(_path_range(source, grouped, a, b, indicator_ptr, indicator_element,
                             player)
                 for a, b in zip(bounds[:-1], bounds[1:], strict=True))


@validate_params(
    {
        "grouped": [GroupedPaths],
        "X": ["array-like"],
        "background": ["array-like", None],
        "feature_perturbation": [StrOptions({"tree_path_dependent", "interventional"})],
        "interactions": ["boolean"],
        "backend": [str, None],
        "working_memory": [NumberInterval(Real, 0, None, closed="neither"), None],
    },
    prefer_skip_nested_validation=True,
)
def grouped_tree_shap(grouped, X, *, background=None,
                      feature_perturbation="tree_path_dependent", interactions=False,
                      backend=None, working_memory=None):
    """Exact TreeSHAP values of groups of columns.

    Parameters
    ----------
    grouped : GroupedPaths
    X : array-like (n_rows, n_columns)
        Rows as the model takes them (``grouped.source.prepare`` reads them).
    background : array-like (n_background, n_columns), optional
        The interventional game's background rows.
    feature_perturbation : {"tree_path_dependent", "interventional"}
    interactions : bool, default=False
        Also the interaction values of the groups (path-dependent only).
    backend : str, optional
        As in :func:`skshapley.tree.tree_shap`.
    working_memory : float, optional
        MiB for the kernels' output of one chunk of rows (each row holds a value per
        widened column of a range of paths and output).

    Returns
    -------
    TreeShapValues
        ``values`` (n_rows, n_groups, n_outputs), ``interactions`` (n_rows, n_groups,
        n_groups, n_outputs) or None; ``ensemble`` is ``grouped.ensemble``.
    """
    source, n_groups = grouped.source, grouped.n_groups
    X = _check_X(X, source)
    interventional = feature_perturbation == "interventional"
    if interventional:
        if interactions:
            raise ValueError("interactions=True is available with "
                             "feature_perturbation='tree_path_dependent' only.")
        background = _check_X(background, source, "background")
        needed = ("tree_background_patterns", "tree_interventional_shap")
    else:
        needed = ("tree_grouped_path_shap",) + (("tree_grouped_path_interactions",)
                                                if interactions else ())
    # one backend for all the work
    kernels = _resolve_backend(backend, grouped.ensemble, X.shape[0], needed)
    if not interventional:
        return _path_dependent_players(grouped, X, kernels, interactions, working_memory)
    n_rows, k = X.shape[0], source.n_outputs
    if (n_rows < WALK_ROWS and source.nodes is not None
            and has_kernel(kernels, "tree_interventional_walk")):
        # few rows: the walk over the model's own trees, with a side per group
        out, base = np.zeros((n_rows, k, n_groups)), np.zeros(k)
        kernels.tree_interventional_walk(X, background, source.nodes.arrays(), out, base,
                                         player=grouped.player[:source.n_features],
                                         cache=_cache.walk_cache())
    else:
        # the background pattern kernels read one condition per element: rows widened
        # by the ranges' indicator columns
        out, base = np.zeros((n_rows, k, n_groups)), np.zeros(k)
        backgrounds = grouped.widened_background(background)
        for part, widened_background in zip(grouped.ranges, backgrounds, strict=True):
            ensemble = part.ensemble
            step = chunk_rows(8 * ensemble.n_features * (k + 1), working_memory)
            for start in range(0, n_rows, step):
                rows = part.widen(X[start:start + step], source)
                values, range_base = interventional_shap(ensemble, rows, widened_background,
                                                         kernels)
                if start == 0:  # the background's mean output, the same for every row
                    base += range_base[0]
                out[start:start + rows.shape[0]] += part.to_groups(values, n_groups)
    return TreeShapValues(
        values=np.moveaxis(out, 1, -1),
        base_values=np.broadcast_to(base + source.offset, (n_rows, k)).copy(),
        interactions=None, feature_perturbation=feature_perturbation,
        ensemble=grouped.ensemble)


def _path_dependent_players(grouped, X, kernels, interactions, working_memory):
    """Path-dependent grouped values (and interactions) from each path's runs of one
    group's elements (``grouped.players``): the kernels AND a run's satisfied splits
    into the player's one fraction, with no widened rows."""
    source, n_groups = grouped.source, grouped.n_groups
    most = int(np.diff(grouped.players.player_ptr).max(initial=0))
    if most > MAX_PATH_FEATURES:
        raise ValueError(
            f"A path of this model tests {most} groups; the grouped TreeSHAP kernels "
            f"take at most {MAX_PATH_FEATURES} a path (a row's pattern is one 64-bit word). "
            "Use fewer, larger groups."
        )
    n_rows, k = X.shape[0], source.n_outputs
    values = np.zeros((n_rows, k, n_groups))
    pairs = None
    if interactions:
        per_row = 8 * n_groups * n_groups * k
        if per_row > get_working_memory(working_memory) * 2**20:
            raise ValueError(
                f"Interaction values of these groups take {per_row / 2**20:,.0f} MiB per "
                "row, more than working_memory; raise working_memory "
                "(skshapley.set_config) or ask for values only."
            )
        pairs = np.zeros((n_rows, k, n_groups, n_groups))
        kernels.tree_grouped_path_interactions(X, grouped.elements, grouped.players, pairs)
    kernels.tree_grouped_path_shap(X, grouped.elements, grouped.players, values)
    base = np.broadcast_to(source.expected_value, (n_rows, k)).copy()
    return TreeShapValues(values=np.moveaxis(values, 1, -1), base_values=base,
                          interactions=None if pairs is None else np.moveaxis(pairs, 1, -1),
                          feature_perturbation="tree_path_dependent",
                          ensemble=grouped.ensemble)
