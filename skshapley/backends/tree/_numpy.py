"""NumPy reference kernels of exact TreeSHAP on merged paths (Lundberg et al. 2020; paths as
in GPUTreeShap, Mitchell, Frank & Holmes 2022, Sec. 3).

The ensemble's paths come as one :class:`~skshapley.backends.tree.PathArrays` (``paths``:
``path_ptr``, ``feature``, ``lower``, ``upper``, ``missing_branch``, ``missing_mode``,
``zero_fraction``, ``out_ptr``, ``out_index``, ``out_value`` of
``skshapley.tree.TreeEnsemble``), its trees as one
:class:`~skshapley.backends.tree.NodeArrays` (``nodes``). X is float64, already cast
through the model's comparison dtype. Kernels *add* into ``out`` (zero it first), so paths
can be processed in chunks.

Per path with u distinct features, zero fractions z and one fractions o (0/1) of a row,
the path's game is v * prod_{j in S} o_j * prod_{j not in S} z_j, whose Shapley values are

    phi_i = v (o_i - z_i) * integral_0^1 prod_{j != i} (z_j + (o_j - z_j) t) dt,

a polynomial of degree u - 1 in t: Gauss-Legendre with ceil(u / 2) nodes is exact (the
same identity underlies Linear TreeShap, Yu et al. 2022).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

# How an element decides that a value is missing: NaN only (XGBoost, sklearn,
# LightGBM "NaN"; LightGBM "None" is folded in by testing 0 against the interval), or NaN
# and -1e-35 < x <= 1e-35 (LightGBM "Zero").
MISSING_NAN = 0
MISSING_NAN_OR_ZERO = 1
LIGHTGBM_ZERO_THRESHOLD = 1e-35
# A categorical split's set of codes that is not one interval (as GPUTreeShap's
# bitset elements): NaN is missing, and any other x satisfies the element iff the
# "atom" of x is in a set of up to 106 atoms whose bits ``lower`` and ``upper`` hold as
# exact integers below 2**53 (SET_WORD_BITS each). Atoms: [k, k + 1) for the codes
# k < SET_CODES (atom k), [SET_CODES, inf) (atom SET_CODES), (-1, 0) (SET_CODES + 1) and
# (-inf, -1] (SET_CODES + 2): what the libraries' casts of x to a code tell apart.
CATEGORY_SET = 2
SET_WORD_BITS = 53
SET_CODES = 2 * SET_WORD_BITS - 3
MAX_QUADRATURE = 32  # nodes; exact for paths of up to 64 distinct features


def _legendre_tables():
    """nodes[q], weights[q] of the q-point Gauss-Legendre rule on [0, 1] (q = 1..32)."""
    nodes = np.zeros((MAX_QUADRATURE + 1, MAX_QUADRATURE))
    weights = np.zeros((MAX_QUADRATURE + 1, MAX_QUADRATURE))
    for q in range(1, MAX_QUADRATURE + 1):
        x, w = np.polynomial.legendre.leggauss(q)
        nodes[q, :q] = (x + 1.0) / 2.0
        weights[q, :q] = w / 2.0
    return nodes, weights


LEGENDRE_NODES, LEGENDRE_WEIGHTS = _legendre_tables()


def _shapley_weight_table(size=65):
    """W[s, n] = s! (n - s - 1)! / n! for 0 <= s < n <= size - 1 (the Shapley weights of
    interventional TreeSHAP)."""
    table = np.zeros((size, size))
    for n in range(1, size):
        s = np.arange(n)
        table[s, n] = np.exp(gammaln(s + 1) + gammaln(n - s) - gammaln(n + 1))
    return table


SHAPLEY_WEIGHTS = _shapley_weight_table()


def category_set_words(union):
    """``(lower, upper)`` holding the atoms of a union of half-open intervals as a
    ``CATEGORY_SET`` element, or None when its edges are not between atoms."""
    edges = np.r_[-np.inf, np.nextafter(-1.0, 0.0), np.arange(SET_CODES + 1.0), np.inf]
    atom_between = np.r_[SET_CODES + 2, SET_CODES + 1, np.arange(SET_CODES + 1)]
    bits = 0
    for lo, hi in union:
        a, b = np.searchsorted(edges, [lo, hi])
        if b >= len(edges) or edges[a] != lo or edges[b] != hi:
            return None
        for atom in atom_between[a:b]:
            bits |= 1 << int(atom)
    low_mask = (1 << SET_WORD_BITS) - 1
    return float(bits & low_mask), float(bits >> SET_WORD_BITS)


def category_set_contains(x, lower, upper):
    """Whether the atom of a scalar x (not NaN) is in the set that ``lower``/``upper``
    hold: the rule of ``CATEGORY_SET`` elements, compiled as it is by the numba kernels
    for the CPU and for CUDA."""
    if x >= SET_CODES:
        atom = SET_CODES
    elif x >= 0.0:
        atom = int(x)
    elif x > -1.0:
        atom = SET_CODES + 1
    else:
        atom = SET_CODES + 2
    word = np.uint64(lower) if atom < SET_WORD_BITS else np.uint64(upper)
    return (word >> np.uint64(atom % SET_WORD_BITS)) & np.uint64(1) != 0


def _in_category_set(x, lower, upper):
    """Vectorised membership test of ``CATEGORY_SET`` elements (x not NaN)."""
    atom = np.select([x >= SET_CODES, x >= 0, x > -1],
                     [SET_CODES, np.floor(np.clip(x, 0, SET_CODES)), SET_CODES + 1],
                     SET_CODES + 2).astype(np.uint64)
    word = np.where(atom < SET_WORD_BITS, lower, upper).astype(np.uint64)
    return ((word >> (atom % np.uint64(SET_WORD_BITS))) & np.uint64(1)).astype(bool)


def elements_satisfied(x, lower, upper, missing_branch, missing_mode):
    """bool (n_rows, u): elements satisfied by each row; x is (n_rows, u)."""
    missing = np.isnan(x)
    zero = missing_mode == MISSING_NAN_OR_ZERO
    missing = missing | (zero & (x > -LIGHTGBM_ZERO_THRESHOLD) & (x <= LIGHTGBM_ZERO_THRESHOLD))
    with np.errstate(invalid="ignore"):
        inside = (lower <= x) & (x < upper)
    sets = np.broadcast_to(missing_mode == CATEGORY_SET, inside.shape)
    if sets.any():
        lo, hi = np.broadcast_arrays(lower, upper, x)[:2]
        inside = inside.copy()
        inside[sets] = _in_category_set(x[sets], lo[sets], hi[sets])
    return np.where(missing, missing_branch.astype(bool), inside)


def _path_elements(X, p, paths):
    start, stop = paths.path_ptr[p], paths.path_ptr[p + 1]
    f = paths.feature[start:stop]
    o = elements_satisfied(X[:, f], paths.lower[start:stop], paths.upper[start:stop],
                           paths.missing_branch[start:stop], paths.missing_mode[start:stop])
    return f, o.astype(np.float64)


def _products_excluding_one(a):
    """(..., u) -> (..., u): product of all entries but one, without division."""
    prefix = np.cumprod(np.concatenate([np.ones_like(a[..., :1]), a[..., :-1]], axis=-1),
                        axis=-1)
    suffix = np.cumprod(np.concatenate([np.ones_like(a[..., :1]), a[..., :0:-1]], axis=-1),
                        axis=-1)[..., ::-1]
    return prefix * suffix


def _quadrature(o, z):
    """One-minus-zero fractions d = o - z (n_rows, u) of a path's players with one
    fractions o (n_rows, u) and zero fractions z (u,), the Gauss-Legendre weights w (q,)
    and the factors a_k(t) = z_k + d_k t at their nodes (n_rows, q, u) whose products
    integrate the path's Shapley weights exactly (q = ceil(u / 2) nodes for polynomials
    of degree u - 1)."""
    q = (o.shape[1] + 1) // 2
    t, w = LEGENDRE_NODES[q, :q], LEGENDRE_WEIGHTS[q, :q]
    a = z[None, :, None] + (o - z)[:, :, None] * t[None, None, :]  # (n, u, q)
    return o - z, w, np.moveaxis(a, 1, -1)


def _path_quadrature(X, p, paths, groups=None):
    """Path p's player columns f and ``_quadrature`` of its players: its elements, or,
    with ``groups`` (PathGroups), the runs of elements on one group's columns, each
    satisfied where all of the run is (Lundberg et al. 2020, Alg. 2, a feature seen
    more than once on a path)."""
    f, o = _path_elements(X, p, paths)
    if groups is None:
        z = paths.zero_fraction[paths.path_ptr[p]:paths.path_ptr[p + 1]]
        return (f,) + _quadrature(o, z)
    players = slice(groups.player_ptr[p], groups.player_ptr[p + 1])
    if len(f):
        o = np.logical_and.reduceat(o.astype(bool),
                                    groups.first[players] - paths.path_ptr[p],
                                    axis=1).astype(np.float64)
    return (groups.slot[players],) + _quadrature(o, groups.zero_fraction[players])


def tree_path_shap(X, paths, out, cache=None):
    """Path-dependent TreeSHAP in the per-path form above: add every path's contributions
    to ``out``.

    Parameters
    ----------
    X : float64 (n_rows, n_features)
    paths : PathArrays
        The ensemble's paths.
    out : float64 (n_rows, n_outputs, n_features)
    cache : LayoutCache, optional
        Unused on the CPU; the GPU twins keep their device copies of the paths in it.

    Returns
    -------
    out
    """
    return tree_grouped_path_shap(X, paths, None, out)


def tree_grouped_path_shap(X, paths, groups, out):
    """``tree_path_shap`` of the game whose players are groups of columns.

    Parameters
    ----------
    X : float64 (n_rows, n_features)
    paths : PathArrays
        The ensemble's paths, each path's elements sorted by group, then column.
    groups : PathGroups or None
        Each path's players (runs of elements on one group's columns); None: the
        elements themselves (``tree_path_shap``).
    out : float64 (n_rows, n_outputs, n_groups)

    Returns
    -------
    out
    """
    path_ptr = paths.path_ptr
    out_ptr, out_index, out_value = paths.out_ptr, paths.out_index, paths.out_value
    for p in range(len(path_ptr) - 1):
        f, d, w, a = _path_quadrature(X, p, paths, groups)
        if len(f) == 0:
            continue
        coefficients = d * np.einsum("q,nqu->nu", w, _products_excluding_one(a))
        for k in range(out_ptr[p], out_ptr[p + 1]):
            np.add.at(out, (slice(None), out_index[k], f), coefficients * out_value[k])
    return out


def tree_path_interactions(X, paths, out, cache=None):
    """Path-dependent SHAP interaction values (Lundberg et al. 2020; per path as in
    GPUTreeShap, Sec. 3.5), added to ``out``.

    ``paths`` : PathArrays. ``out`` : float64 (n_rows, n_outputs, n_features, n_features).
    Off-diagonal phi_ij = v/2 (o_i - z_i)(o_j - z_j) * integral prod_{k != i, j} a_k(t) dt;
    the diagonal gets phi_i - sum_{j != i} phi_ij, so rows sum to the SHAP values.
    ``cache`` as in :func:`tree_path_shap`.
    """
    return tree_grouped_path_interactions(X, paths, None, out)


def tree_grouped_path_interactions(X, paths, groups, out):
    """``tree_path_interactions`` of groups of columns (``groups`` as in
    ``tree_grouped_path_shap``); ``out`` : float64 (n_rows, n_outputs, n_groups,
    n_groups)."""
    path_ptr = paths.path_ptr
    out_ptr, out_index, out_value = paths.out_ptr, paths.out_index, paths.out_value
    n_rows = X.shape[0]
    for p in range(len(path_ptr) - 1):
        f, d, w, a = _path_quadrature(X, p, paths, groups)
        u = len(f)
        if u == 0:
            continue
        phi = d * np.einsum("q,nqu->nu", w, _products_excluding_one(a))
        pair = np.zeros((n_rows, u, u))
        for j in range(u):
            b = a.copy()
            b[..., j] = 1.0
            integral = np.einsum("q,nqu->nu", w, _products_excluding_one(b))
            pair[:, :, j] = 0.5 * d * d[:, j:j + 1] * integral
            pair[:, j, j] = 0.0
        diagonal = phi - pair.sum(axis=2)
        block = pair + np.einsum("ni,ij->nij", diagonal, np.eye(u))
        for k in range(out_ptr[p], out_ptr[p + 1]):
            index = np.ix_(np.arange(n_rows), [out_index[k]], f, f)
            np.add.at(out, index, block[:, None] * out_value[k])
    return out


def tree_background_patterns(background, paths, patterns, counts, n_distinct, rows=None,
                             reached=None):
    """Per path, the distinct bit patterns of satisfied elements over the background rows.

    Parameters
    ----------
    background : float64 (n_background, n_features)
    paths : PathArrays
        The ensemble's paths (their elements; zero fractions and leaf values are not
        read).
    patterns : uint64 (n_paths, n_background)
        Filled with the distinct patterns of each path first (sorted).
    counts : float64 (n_paths, n_background)
        How many background rows share each pattern.
    n_distinct : int64 (n_paths,)
    rows : float64 (n_rows, n_features), optional
        The rows whose values the patterns are for. A background row that fails an
        element every one of ``rows`` fails adds nothing to their values on that path
        (the pair satisfies neither side of the split), so it is left out of the patterns
        and counts; the all-satisfied pattern always stays, so the patterns still give
        the background's mean output. Saves most of the work when few rows are explained.
    reached : float64 (n_paths,), optional
        Filled with how many background rows satisfy every element of each path (reach
        its leaf): the count of the all-satisfied pattern, which sorts last.

    Returns
    -------
    patterns, counts, n_distinct
    """
    for p in range(len(paths.path_ptr) - 1):
        _, o = _path_elements(background, p, paths)
        if rows is not None and len(rows):
            _, x = _path_elements(rows, p, paths)
            required = ~x.any(axis=0)
            o = o[o[:, required].all(axis=1)]
        bits = (o.astype(np.uint64) << np.arange(o.shape[1], dtype=np.uint64)).sum(
            axis=1, dtype=np.uint64)
        values, multiplicity = np.unique(bits, return_counts=True)
        n_distinct[p] = len(values)
        patterns[p, : len(values)] = values
        counts[p, : len(values)] = multiplicity
        if reached is not None:
            reached[p] = o.all(axis=1).sum()
    return patterns, counts, n_distinct


def tree_interventional_shap(X, patterns, counts, n_distinct, n_background, paths, out):
    """Interventional TreeSHAP (Lundberg et al. 2020) from the background patterns, added
    to ``out``.

    For a row x and background row r on one path: A = elements x satisfies and r does not,
    B = the reverse; if some element is satisfied by neither, the pair contributes
    nothing; else with s = |A|, n = |A| + |B|, i in A gets +v W(s - 1, n) and i in B gets
    -v W(s, n). Averaged over the background (``n_background`` rows).

    ``paths`` : PathArrays (zero fractions are not read). ``out`` : float64 (n_rows,
    n_outputs, n_features).
    """
    weights = SHAPLEY_WEIGHTS
    path_ptr, out_ptr, out_index, out_value = (paths.path_ptr, paths.out_ptr,
                                               paths.out_index, paths.out_value)
    for p in range(len(path_ptr) - 1):
        f, o = _path_elements(X, p, paths)
        u = len(f)
        if u == 0:
            continue
        m = n_distinct[p]
        rb = ((patterns[p, :m, None] >> np.arange(u, dtype=np.uint64)) & np.uint64(1)).astype(bool)
        xb = o.astype(bool)
        x_only = xb[:, None, :] & ~rb[None, :, :]  # (n, m, u)
        r_only = rb[None, :, :] & ~xb[:, None, :]
        neither = ~(xb[:, None, :] | rb[None, :, :])
        valid = ~neither.any(axis=2)
        s = x_only.sum(axis=2)
        n = s + r_only.sum(axis=2)
        w_plus = np.where(valid & (s > 0), weights[np.maximum(s - 1, 0), n], 0.0)
        w_minus = np.where(valid & (s < n), weights[np.minimum(s, 64), n], 0.0)
        c = counts[p, :m][None, :, None]
        contribution = ((x_only * w_plus[:, :, None] - r_only * w_minus[:, :, None]) * c).sum(
            axis=1) / n_background
        for k in range(out_ptr[p], out_ptr[p + 1]):
            np.add.at(out, (slice(None), out_index[k], f), contribution * out_value[k])
    return out


def edges_followed(X, feature, edge_ptr, edge_lower, edge_upper, missing_branch,
                   missing_mode):
    """bool (n_rows, n_nodes): which rows of X follow the edge into each node of
    :class:`~skshapley.tree._ensemble.TreeNodes` (roots: meaningless). One batched
    ``elements_satisfied`` over every interval of every edge, OR-ed per edge (the missing
    rule is the edge's, the same for each of its intervals)."""
    n_nodes = len(feature)
    n_intervals = np.diff(edge_ptr)
    node_of = np.repeat(np.arange(n_nodes), n_intervals)
    followed = np.zeros((X.shape[0], n_nodes), bool)
    some = n_intervals > 0
    if some.any():
        by_interval = elements_satisfied(X[:, feature[node_of]], edge_lower, edge_upper,
                                         missing_branch[node_of], missing_mode[node_of])
        followed[:, some] = np.logical_or.reduceat(by_interval, edge_ptr[:-1][some], axis=1)
    if not some.all():  # no interval: only a missing value may follow (an empty one)
        none = ~some
        followed[:, none] = elements_satisfied(X[:, feature[none]], np.inf, np.inf,
                                               missing_branch[none], missing_mode[none])
    return followed


def tree_interventional_walk(X, background, nodes, out, base, player=None, cache=None):
    """Interventional TreeSHAP (Lundberg et al. 2020) by walking the trees, added to
    ``out``.

    The game of a row x and one background row z on a tree: a feature where x and z
    follow the same edges is irrelevant; where they part, the walk takes both ways, the
    feature then coming from x (A) or from z (B) further down. A leaf reached with
    s = |A| and n = |A| + |B| > 0 gives i in A +v W(s - 1, n) and i in B -v W(s, n), as
    in ``tree_interventional_shap``. The walk carries the set of background rows that
    share a state (its node and the sides of the features parted so far), so each state
    is visited once per explained row, not once per background row; which rows follow
    each edge is worked out once, for all edges. Values are averaged over the background.

    Parameters
    ----------
    X : float64 (n_rows, n_features)
    background : float64 (n_background, n_features)
    nodes : NodeArrays
        The ensemble's trees (``TreeNodes.arrays()``).
    out : float64 (n_rows, n_outputs, n_players)
        The values are added to it.
    base : float64 (n_outputs,)
        The background's mean output of the trees (without the ensemble's offset) is
        added to it.
    player : int64 (n_features,), optional
        The player of each column, for players that are groups of columns: a group's
        columns part once (the first split where x and z part decides where the whole
        group comes from below it), which is the game whose players are the groups.
        None: each column its own player (n_players = n_features).
    cache : object with a ``last`` attribute, optional
        Where a backend may keep what it prepared of the background for the next call
        with an equal background (owned by the caller; this twin keeps nothing).

    Returns
    -------
    out, base
    """
    (tree_root, child_ptr, child, feature, edge_ptr, edge_lower, edge_upper, missing_branch,
     missing_mode, value_ptr, value_index, value, _, _) = nodes
    n_background = len(background)
    weights = SHAPLEY_WEIGHTS
    player = np.arange(X.shape[1]) if player is None else np.asarray(player)
    edges = (feature, edge_ptr, edge_lower, edge_upper, missing_branch, missing_mode)
    followed = edges_followed(background, *edges)  # (n_background, n_nodes)
    everyone = np.ones(n_background, bool)
    for root in tree_root:  # the background's own leaves
        stack = [(root, everyone)]
        while stack:
            node, rows = stack.pop()
            for k in range(value_ptr[node], value_ptr[node + 1]):
                base[value_index[k]] += value[k] * rows.sum() / n_background
            for c in child[child_ptr[node]:child_ptr[node + 1]]:
                follow = rows & followed[:, c]
                if follow.any():
                    stack.append((c, follow))
    for i, x_followed in enumerate(edges_followed(X, *edges)):
        for root in tree_root:
            stack = [(root, everyone, {})]  # sides: player -> 1 (from x) or -1 (from z)
            while stack:
                node, rows, sides = stack.pop()
                children = child[child_ptr[node]:child_ptr[node + 1]]
                n = len(sides)
                if not len(children) and n:
                    s = sum(side > 0 for side in sides.values())
                    share = rows.sum() / n_background
                    plus = weights[s - 1, n] if s else 0.0
                    minus = weights[s, n] if s < n else 0.0
                    for k in range(value_ptr[node], value_ptr[node + 1]):
                        for f, side in sides.items():
                            amount = plus if side > 0 else -minus
                            out[i, value_index[k], f] += value[k] * share * amount
                for c in children:
                    f = player[feature[c]]
                    side = sides.get(f, 0)
                    x_follows = x_followed[c]
                    follow = rows & followed[:, c]
                    if side > 0:  # the feature comes from x: x's way, every row
                        if x_follows:
                            stack.append((c, rows, sides))
                    elif side < 0:  # from z: each row its own way
                        if follow.any():
                            stack.append((c, follow, sides))
                    elif x_follows:  # rows along with x, and rows parting from x here
                        parted = rows & ~follow
                        if follow.any():
                            stack.append((c, follow, sides))
                        if parted.any():
                            stack.append((c, parted, {**sides, f: 1}))
                    elif follow.any():  # rows going where x does not
                        stack.append((c, follow, {**sides, f: -1}))
    return out, base

