"""Paired coalition designs for the regression estimators.

A design is a set of coalitions with one weight each, built so that the constrained
weighted least-squares problem of KernelSHAP (Lundberg & Lee 2017) estimates the Shapley
kernel's objective:

- coalition sizes are grouped in *size pairs* (s, d - s), because every coalition comes
  with its complement (pairing, Covert & Lee 2021);
- size pairs are enumerated from the outside in (s = 1 first) while the budget a size pair
  would receive under the allocation covers all its coalitions (the rule of shap's
  KernelExplainer);
- the remaining budget is split over the remaining size pairs in proportion to the
  allocation (kernel mass for KernelSHAP, equal per size for leverage-score sampling,
  Musco & Witter 2024), and within a size coalitions are drawn without replacement;
- every size keeps its exact kernel mass: an enumerated coalition carries its kernel
  weight, a sampled one its size's mass divided by the number sampled. The estimate is
  therefore stratified by size, and the sampling design only decides where the
  evaluations go.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from skshapley.games import coalition_keys
from skshapley.permutations import SAMPLERS, PermutationSampler

ALLOCATIONS = ("kernel", "leverage")
# Below this many coalitions a size is drawn from its full list; above, by rejection.
_LISTED_MAX = 200_000
# A size is listed (rather than drawn by rejection) when at least 1 / _DENSE_SHARE of
# its pairs are wanted; otherwise rejection redraws few duplicates. (Sizes of up to
# 20,000 pairs used to be listed whatever was wanted: listing C(50, 3) = 19,600 to keep
# 6 took 0.45 ms of a 10 ms one-row explanation.)
_DENSE_SHARE = 4


@dataclass(frozen=True)
class CoalitionDesign:
    """Complementary pairs of coalitions, with weights and the blocks that carry their
    sampling variance.

    The design's coalitions are ``first`` followed by its complements ``~first``; both
    members of a pair carry the same weight (the Shapley kernel is symmetric in s and
    d - s).

    Attributes
    ----------
    first : bool (n_pairs, d)
        One side of each pair; never ∅ or N.
    pair_weights : float64 (n_pairs,)
        Weight of each coalition of the pair: its kernel weight when its size pair is
        enumerated, else its size's kernel mass over the coalitions of that size drawn.
    blocks : int64 (n_pairs,)
        -1 for pairs of enumerated sizes (no sampling variance), else the size pair s
        the pair was drawn from (its stratum).
    stratum_sizes : dict
        Pairs in the population of each sampled size pair, {s: count}.
    enumerated_sizes : tuple of int
        Size pairs s evaluated completely.
    """

    first: np.ndarray
    pair_weights: np.ndarray
    blocks: np.ndarray
    stratum_sizes: dict
    enumerated_sizes: tuple

    @property
    def coalitions(self) -> np.ndarray:
        return np.concatenate([self.first, ~self.first])

    @property
    def weights(self) -> np.ndarray:
        return np.concatenate([self.pair_weights, self.pair_weights])

    @property
    def n_pairs(self) -> int:
        return self.first.shape[0]

    @property
    def n_coalitions(self) -> int:
        return 2 * self.first.shape[0]

    @property
    def n_sampled_pairs(self) -> int:
        return int(np.count_nonzero(self.blocks >= 0))

    @property
    def is_complete(self) -> bool:
        """True when every coalition of sizes 1..d-1 is in the design."""
        d = self.first.shape[1]
        return self.n_sampled_pairs == 0 and self.n_coalitions == 2**d - 2


def size_mass(n_players: int) -> np.ndarray:
    """Shapley kernel mass of each size s = 0..d: C(d,s) * mu(s) = (d-1) / (s (d-s)) for
    0 < s < d and 0 at the ends."""
    d = n_players
    s = np.arange(d + 1, dtype=np.float64)
    mass = np.zeros(d + 1)
    inner = (s > 0) & (s < d)
    mass[inner] = (d - 1) / (s[inner] * (d - s[inner]))
    return mass


def _pair_counts(d):
    """For s = 1..d//2: the number of coalitions in sizes {s, d - s}."""
    return {s: comb(d, s) * (1 if 2 * s == d else 2) for s in range(1, d // 2 + 1)}


def _allocation_weights(d, allocation):
    mass = size_mass(d)
    weights = {}
    for s in range(1, d // 2 + 1):
        middle = 2 * s == d
        if allocation == "kernel":
            weights[s] = mass[s] * (1 if middle else 2)
        else:  # leverage scores are equal across sizes (Musco & Witter 2024, Lemma 3.3)
            weights[s] = 1.0 if middle else 2.0
    return weights


def _canonical(masks):
    """One representative of each {S, N \\ S}: the one that holds player 0."""
    out = masks.copy()
    flip = ~out[:, 0]
    out[flip] = ~out[flip]
    return out


def combinations_array(d, s):
    """int64 (C(d, s), s): the s-subsets of range(d) in lexicographic order (the order
    of ``itertools.combinations``), built a position at a time by NumPy: each prefix is
    followed by every larger element that leaves room for the rest. A tuple per subset
    took 4.6 ms of a 36 ms one-row explanation at d = 20 (the sizes listed there hold
    ~21,000 subsets)."""
    if s == 0:
        return np.zeros((1, 0), dtype=np.int64)
    listed = np.arange(d - s + 1, dtype=np.int64)[:, None]
    for k in range(1, s):
        last = listed[:, -1]
        counts = d - s + k - last  # choices last + 1 .. d - s + k
        first_of = np.cumsum(counts) - counts
        offsets = np.arange(int(counts.sum())) - np.repeat(first_of, counts)
        listed = np.column_stack([np.repeat(listed, counts, axis=0),
                                  np.repeat(last + 1, counts) + offsets])
    return listed


def _all_of_size(d, s):
    """One side of every complementary pair with a side of size s (for the middle size
    d = 2s, the side that holds player 0)."""
    listed = combinations_array(d, s)
    masks = np.zeros((listed.shape[0], d), dtype=bool)
    np.put_along_axis(masks, listed, True, axis=1)
    return masks[masks[:, 0]] if 2 * s == d else masks


class _PrefixSource:
    """Coalitions of a given size as prefixes of a permutation sampler's orderings: a
    prefix of a uniform ordering is a uniform subset of its size."""

    def __init__(self, sampler):
        self.sampler = sampler

    def draw(self, size, n):
        orders = self.sampler.random(max(n, 1))
        masks = np.zeros((orders.shape[0], self.sampler.n_players), dtype=bool)
        np.put_along_axis(masks, orders[:, :size], True, axis=1)
        return masks


class _RandomSource:
    def __init__(self, n_players, rng):
        self.n_players, self.rng = n_players, rng

    def draw(self, size, n):
        keys = self.rng.random((n, self.n_players))
        ranks = np.argsort(np.argsort(keys, axis=1), axis=1)
        return ranks < size


def _listed(d, s, n_pairs, source):
    """Whether :func:`_sample_size_pair` draws size ``s`` from its full list."""
    population = comb(d, s) // (2 if 2 * s == d else 1)
    # Listing a size costs its whole population (C(20, 10) / 2 = 92,378 rows, ~0.3 s);
    # drawing with rejection costs what is drawn: list only when much of it is wanted.
    dense = n_pairs * _DENSE_SHARE >= population
    return population <= _LISTED_MAX and (n_pairs == population
                                          or (dense and not isinstance(source, _PrefixSource)))


def _sample_size_pair(d, s, n_pairs, source, rng):
    """``n_pairs`` distinct complementary pairs with one side of size s: one side each."""
    if _listed(d, s, n_pairs, source):
        masks = _all_of_size(d, s)
        return masks[np.sort(rng.choice(masks.shape[0], n_pairs, replace=False))]
    return _drawn_pairs(d, s, n_pairs, source, [], set())


def _drawn_pairs(d, s, n_pairs, source, chosen, seen):
    """Draws of size ``s`` by rejection until ``chosen`` (sides kept so far, their keys in
    ``seen``) holds ``n_pairs`` distinct pairs."""
    middle = 2 * s == d
    while len(chosen) < n_pairs:
        masks = source.draw(s, 2 * (n_pairs - len(chosen)))
        keys = coalition_keys(_canonical(masks) if middle else masks)
        for mask, key in zip(masks, keys, strict=True):
            if key not in seen:
                seen.add(key)
                chosen.append(mask)
                if len(chosen) == n_pairs:
                    break
    return np.array(chosen)


def _random_size_pairs(d, sizes, n_pairs, rng):
    """:func:`_sample_size_pair` for a run of sizes drawn by rejection from uniform
    subsets (``_RandomSource``), all first draws at once: the same uniforms in the same
    order, and the same sides, as size after size (a subset of size s is the s smallest
    keys of a row, found here by one sort rather than two argsorts). A size whose first
    2 n draws hold fewer than n distinct pairs draws the rest after the run. A Python
    pass per size took a millisecond of a one-row explanation at d = 50."""
    sizes = np.asarray(sizes, dtype=np.int64)
    wanted = np.asarray(n_pairs, dtype=np.int64)
    drawn = 2 * wanted
    row_size = np.repeat(sizes, drawn)
    keys = rng.random((int(drawn.sum()), d))
    threshold = np.sort(keys, axis=1)[np.arange(keys.shape[0]), row_size - 1]
    masks = keys <= threshold[:, None]
    canonical = np.where((2 * row_size == d)[:, None] & ~masks[:, :1], ~masks, masks)
    packed = np.packbits(canonical, axis=1)
    rows = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
    # sizes never collide, so one pass finds each row's first occurrence
    _, first_index = np.unique(rows, return_index=True)
    first = np.zeros(rows.shape[0], dtype=bool)
    first[first_index] = True
    block_start = np.repeat(np.cumsum(drawn) - drawn, drawn)
    counted = np.cumsum(first)
    before = np.concatenate([[0], counted])[block_start]
    keep = first & (counted - before <= np.repeat(wanted, drawn))
    ends = np.concatenate([[0], np.cumsum(drawn)]).tolist()
    out = [masks[lo:hi][keep[lo:hi]] for lo, hi in zip(ends[:-1], ends[1:], strict=True)]
    short = [b for b, side in enumerate(out) if side.shape[0] < wanted[b]]
    for b in short:  # many repeats: a small population left to rejection
        s = int(sizes[b])
        chosen = list(out[b])
        seen = set(coalition_keys(_canonical(out[b]) if 2 * s == d else out[b]))
        out[b] = _drawn_pairs(d, s, int(wanted[b]), _RandomSource(d, rng), chosen, seen)
    return out


def make_coalition_source(coalition_sampler, n_players, rng):
    """``"random"`` (uniform without replacement) or a permutation sampler's prefixes."""
    if isinstance(coalition_sampler, str) and coalition_sampler == "random":
        return _RandomSource(n_players, rng)
    if isinstance(coalition_sampler, PermutationSampler):
        return _PrefixSource(coalition_sampler)
    if coalition_sampler in SAMPLERS:
        return _PrefixSource(SAMPLERS[coalition_sampler](n_players, rng=rng))
    raise ValueError(
        f"The 'coalition_sampler' parameter must be 'random', one of {sorted(SAMPLERS)} or "
        f"a PermutationSampler instance; got {coalition_sampler!r}."
    )


def minimum_design_budget(n_players: int) -> int:
    """Evaluations needed to enumerate sizes 1 and d - 1 (plus ∅ and N): below it the
    regression is not identified in general."""
    return 2 + _pair_counts(n_players)[1] if n_players > 1 else 2


def paired_design(n_players: int, n_coalitions: int, *, allocation: str = "kernel",
                  coalition_sampler="random", rng=None,
                  enumerate_sizes=()) -> CoalitionDesign:
    """Choose at most ``n_coalitions`` coalitions (∅ and N not counted) for the KernelSHAP
    regression.

    Parameters
    ----------
    n_players : int
        d >= 2.
    n_coalitions : int
        Evaluations available for coalitions of sizes 1..d-1.
    allocation : {"kernel", "leverage"}
        How evaluations are split over sizes: in proportion to the Shapley kernel mass,
        or equally per size (leverage scores).
    coalition_sampler : "random", sampler name or PermutationSampler
        Source of sampled coalitions: uniform draws, or prefixes of a permutation
        sampler's orderings (QMC designs).
    rng : numpy.random.Generator
    enumerate_sizes : tuple of int, optional
        Sizes s <= d / 2 whose coalitions (and complements) are all in the design,
        before the others share what is left (e.g. ``(1,)``: every singleton and its
        complement, the coalitions whose values the adaptive estimator has already
        read); a size that does not fit in ``n_coalitions`` is left to the shares.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.approximators._coalitions import paired_design
    >>> design = paired_design(5, 20, rng=np.random.default_rng(0))
    >>> design.enumerated_sizes, design.n_coalitions, design.n_sampled_pairs
    ((1,), 20, 5)
    """
    d = n_players
    if allocation not in ALLOCATIONS:
        raise ValueError(
            f"The 'allocation' parameter must be one of {list(ALLOCATIONS)}; got {allocation!r}."
        )
    rng = np.random.default_rng() if rng is None else rng
    counts = _pair_counts(d)
    share = _allocation_weights(d, allocation)
    mass = size_mass(d)
    left = int(n_coalitions)
    remaining = list(counts)
    enumerated = []
    for s in sorted(set(enumerate_sizes)):
        if s in remaining and counts[s] <= left:
            enumerated.append(s)
            left -= counts[s]
            remaining.remove(s)
    while remaining:
        s = remaining[0]
        total = sum(share[t] for t in remaining)
        if left * share[s] / total + 1e-9 >= counts[s]:
            enumerated.append(s)
            left -= counts[s]
            remaining.pop(0)
        else:
            break

    masks, weights, blocks = [], [], []
    for s in enumerated:
        one_side = _all_of_size(d, s)
        masks.append(one_side)
        weights.append(np.full(one_side.shape[0], mass[s] / comb(d, s)))
        blocks.append(np.full(one_side.shape[0], -1, dtype=np.int64))

    # Sampled size pairs: whole complementary pairs (2 evaluations each), allocated in
    # proportion to ``share`` by largest remainders, capped at the population.
    n_pairs_left = left // 2
    allocated = dict.fromkeys(remaining, 0)
    active = list(remaining)
    while n_pairs_left > 0 and active:
        total = sum(share[s] for s in active)
        ideal = {s: n_pairs_left * share[s] / total for s in active}
        grant = {s: min(int(ideal[s]), counts[s] // 2 - allocated[s]) for s in active}
        if sum(grant.values()) == 0:
            # Hand out single pairs by largest remainder.
            for s in sorted(active, key=lambda t: -(ideal[t] - int(ideal[t]))):
                if n_pairs_left == 0:
                    break
                if allocated[s] < counts[s] // 2:
                    allocated[s] += 1
                    n_pairs_left -= 1
            break
        for s, g in grant.items():
            allocated[s] += g
            n_pairs_left -= g
        active = [s for s in active if allocated[s] < counts[s] // 2]

    source = make_coalition_source(coalition_sampler, d, rng)
    sampled = [s for s in remaining if allocated[s] > 0]
    sides = {}
    run = []
    for s in sampled + [None]:
        # runs of sizes drawn by rejection from uniform subsets are drawn together
        if s is not None and isinstance(source, _RandomSource) and not _listed(
                d, s, allocated[s], source):
            run.append(s)
            continue
        if run:
            sides.update(zip(run, _random_size_pairs(d, run, [allocated[t] for t in run],
                                                     rng), strict=True))
            run = []
        if s is not None:
            sides[s] = _sample_size_pair(d, s, allocated[s], source, rng)
    stratum_sizes = {}
    for s in sampled:
        n_pairs = allocated[s]
        one_side = sides[s]
        # Each sampled coalition carries its size's mass over the coalitions of that
        # size drawn; a middle size draws two per pair.
        per_size = n_pairs * (2 if 2 * s == d else 1)
        masks.append(one_side)
        weights.append(np.full(n_pairs, mass[s] / per_size))
        if n_pairs == counts[s] // 2:  # the whole size pair: no sampling variance
            blocks.append(np.full(n_pairs, -1, dtype=np.int64))
            continue
        blocks.append(np.full(n_pairs, s, dtype=np.int64))
        stratum_sizes[s] = counts[s] // 2
    if not masks:
        return CoalitionDesign(np.zeros((0, d), bool), np.zeros(0), np.zeros(0, np.int64),
                               {}, tuple(enumerated))
    return CoalitionDesign(
        first=np.concatenate(masks),
        pair_weights=np.concatenate(weights),
        blocks=np.concatenate(blocks),
        stratum_sizes=stratum_sizes,
        enumerated_sizes=tuple(enumerated),
    )
