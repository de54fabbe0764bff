"""Shapley axioms as hypothesis properties (STYLE.md §7) on games with 1–8 players."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from skshapley.approximators import exact_shapley, permutation_shapley
from skshapley.games import CallableGame


@st.composite
def table_games(draw, min_players=1, max_players=8):
    d = draw(st.integers(min_players, max_players))
    seed = draw(st.integers(0, 2**32 - 1))
    table = np.random.default_rng(seed).normal(scale=draw(st.sampled_from([1e-3, 1.0, 1e4])),
                                               size=2**d)
    return d, table


def _game(d, table, dummy=None):
    weights = 1 << np.arange(d)

    def value(S):
        index = S.astype(np.int64) @ weights
        if dummy is not None:  # the dummy's membership is ignored
            index = index & ~(1 << dummy)
        return table[index]

    return CallableGame(value, d)


methods = st.sampled_from(["exact", "mc", "antithetic"])


def _estimate(game, method, seed, budget=None):
    if method == "exact":
        return exact_shapley(game)
    d = game.n_players
    return permutation_shapley(game, budget or 2 + 6 * max(d - 1, 1), sampler=method,
                               random_state=seed)


@given(table_games(), methods, st.integers(0, 1000))
def test_efficiency(game_spec, method, seed):
    d, table = game_spec
    result = _estimate(_game(d, table), method, seed)
    scale = np.abs(table).max()
    assert abs(result.values.sum() - (table[-1] - table[0])) <= 1e-9 * max(scale, 1.0)
    assert result.empty_value == table[0] and result.grand_value == table[-1]


@given(table_games(min_players=2), methods, st.integers(0, 1000), st.data())
def test_dummy_player_gets_exactly_zero(game_spec, method, seed, data):
    d, table = game_spec
    dummy = data.draw(st.integers(0, d - 1))
    result = _estimate(_game(d, table, dummy=dummy), method, seed)
    assert result.values[dummy] == 0.0


@given(table_games(min_players=2, max_players=7), st.integers(0, 1000))
def test_symmetry_exact(game_spec, seed):
    d, table = game_spec
    # Make players 0 and 1 interchangeable: the value depends on how many of them are in S.
    weights = 1 << np.arange(d)
    def value(S):
        both = S[:, 0].astype(np.int64) + S[:, 1]
        rest = S[:, 2:].astype(np.int64) @ weights[2:]
        return table[rest + np.minimum(both, 1) + (both == 2) * 2]
    values = exact_shapley(CallableGame(value, d)).values
    np.testing.assert_allclose(values[0], values[1], rtol=1e-9, atol=1e-9 * np.abs(table).max())


@given(table_games(max_players=6), table_games(max_players=6), methods, st.integers(0, 1000))
def test_linearity_with_common_random_numbers(spec_v, spec_w, method, seed):
    d, table_v = spec_v
    table_w = np.resize(spec_w[1], table_v.shape)
    phi_v = _estimate(_game(d, table_v), method, seed).values
    phi_w = _estimate(_game(d, table_w), method, seed).values
    phi_sum = _estimate(_game(d, table_v + table_w), method, seed).values
    scale = np.abs(table_v).max() + np.abs(table_w).max()
    np.testing.assert_allclose(phi_sum, phi_v + phi_w, rtol=0, atol=1e-9 * scale)
