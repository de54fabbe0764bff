"""LS-SPA (ALGORITHMS.md §5): exact values, closed forms, brute-force refits, streaming,
error-estimate calibration and bad input."""

import functools
import itertools
from pathlib import Path

import numpy as np
import pytest
from oracles import shapley_by_subsets
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.model_selection import KFold

from skshapley.attribution import AttributionResult, PermutohedronNormal, lsspa
from skshapley.backends import get_backend
from skshapley.games import LeastSquaresGame, reduce_least_squares
from skshapley.games._least_squares import chain_lifts

TOY = np.load(Path(__file__).parent / "data" / "lsspa_toy_data.npz")
TOY_ARGS = (TOY["X_train"], TOY["X_test"], TOY["y_train"], TOY["y_test"])

# §5.15, computed from the data unrounded (the paper rounds R² to 2 decimals first).
TOY_SHAPLEY = np.array([0.59671319, 0.47096035, -0.14387332])
TOY_R2 = 0.92380021
TOY_THETA = np.array([2.07083749, 1.36533802, 0.07234203])
TOY_SUBSET_R2 = {(0, 1, 2): 0.923800, (0, 1): 0.922200, (0, 2): 0.817259, (1, 2): 0.686396,
                 (0,): 0.814317, (1,): 0.693673, (2,): -0.431053, (): 0.0}
TOY_LIFTS = {(0, 1, 2): (0.814317, 0.107883, 0.001601), (0, 2, 1): (0.814317, 0.106542, 0.002942),
             (1, 0, 2): (0.228526, 0.693673, 0.001601), (1, 2, 0): (0.237404, 0.693673, -0.007277),
             (2, 0, 1): (1.248312, 0.106542, -0.431053), (2, 1, 0): (0.237404, 1.117450, -0.431053)}
# Ridge, in the paper's lambda (ls-spa's reg); sklearn's alpha = N * lambda with N = 50.
TOY_RIDGE = {0.1: ([0.60411584, 0.45007531, -0.13356817], 0.92062298),
             1.0: ([0.53387868, 0.33403968, -0.09386513], 0.77405322)}


def _data(rng, n=300, m=200, p=6, noise=1.0, correlated=True):
    X = rng.normal(size=(n + m, p))
    if correlated:
        X = X @ (np.eye(p) + 0.5 * rng.normal(size=(p, p)))
    X += rng.normal(size=p) * 3  # non-zero means: the centring matters
    theta = rng.normal(size=p)
    y = X @ theta + noise * rng.normal(size=n + m) + 4.0
    return X[:n], X[n:], y[:n], y[n:]


def _brute_force_r2(X_train, X_test, y_train, y_test, members, alpha=0.0):
    """R² with baseline mean(y_train) of a sklearn refit on the columns ``members``."""
    baseline = y_test - y_train.mean()
    if not members:
        return 0.0
    cols = list(members)
    model = Ridge(alpha=alpha) if alpha else LinearRegression()
    model.fit(X_train[:, cols], y_train)
    residual = y_test - model.predict(X_test[:, cols])
    return 1.0 - residual @ residual / (baseline @ baseline)


# -- the toy example (§5.15) ------------------------------------------------------------


@pytest.mark.parametrize("center", [True, False])
def test_toy_exact_values(center):
    result = lsspa(*TOY_ARGS, center=center)
    assert isinstance(result, AttributionResult) and result.method == "exact"
    np.testing.assert_allclose(result.attribution, TOY_SHAPLEY, atol=1e-8)
    np.testing.assert_allclose(result.r2, TOY_R2, atol=1e-8)
    np.testing.assert_allclose(result.theta, TOY_THETA, atol=1e-8)
    assert result.error_quantile == 0 and result.converged and result.n_samples == 0


def test_toy_subset_values_and_lifts_of_every_chain():
    game = LeastSquaresGame(*TOY_ARGS)
    for members, r2 in TOY_SUBSET_R2.items():
        mask = np.zeros((1, 3), dtype=bool)
        mask[0, list(members)] = True
        np.testing.assert_allclose(game.values(mask)[0], r2, atol=5e-7)  # table: 6 decimals
    orders = np.array(list(TOY_LIFTS))
    for backend in ("numpy", "numba"):
        for solver in ("qr", "cholesky"):
            lifts = chain_lifts(game.reduced, orders, solver=solver,
                                kernels=get_backend(backend))
            for order, row in zip(orders, lifts, strict=True):
                # the table lists L(pi) in feature order (L_1, L_2, L_3)
                np.testing.assert_allclose(row, TOY_LIFTS[tuple(order)], atol=5e-7)
            np.testing.assert_allclose(lifts.mean(axis=0), TOY_SHAPLEY, atol=1e-8)


@pytest.mark.parametrize("lam", sorted(TOY_RIDGE))
def test_toy_ridge_matches_paper_lambda(lam):
    shapley, r2 = TOY_RIDGE[lam]
    result = lsspa(*TOY_ARGS, alpha=lam * TOY["X_train"].shape[0])
    np.testing.assert_allclose(result.attribution, shapley, atol=1e-8)
    np.testing.assert_allclose(result.r2, r2, atol=1e-8)


# -- closed form for uncorrelated features (§5.14) ---------------------------------------


def _orthogonal_columns(rng, n, p):
    q, _ = np.linalg.qr(np.column_stack([np.ones(n), rng.normal(size=(n, p))]))
    return q[:, 1:] * np.sqrt(n) * rng.uniform(1, 5, size=p)


@pytest.mark.parametrize("alpha", [0.0, 0.5 * 200])
def test_uncorrelated_closed_form(rng, alpha):
    n, m, p = 200, 150, 12
    X, X_test = _orthogonal_columns(rng, n, p), _orthogonal_columns(rng, m, p)
    beta = rng.normal(size=p)
    y = X @ beta + rng.normal(size=n) + 1.5
    y_test = X_test @ beta + rng.normal(size=m) + 1.5
    y_test_c = y_test - y.mean()  # centred with the training mean
    theta = (X.T @ y) / ((X * X).sum(axis=0) + alpha)
    closed = (2 * theta * (X_test.T @ y_test_c) - theta**2 * (X_test**2).sum(axis=0)) / (
        y_test_c @ y_test_c)
    game = LeastSquaresGame(X, X_test, y, y_test, alpha=alpha)
    orders = np.argsort(rng.random((20, p)), axis=1)
    for solver in ("qr", "cholesky"):
        lifts = chain_lifts(game.reduced, orders, solver=solver)
        np.testing.assert_allclose(lifts, np.tile(closed, (20, 1)), atol=1e-12)
    # Every chain has the same lift vector: zero covariance, sigma = 0, stop at the first
    # check with tol tiny.
    result = lsspa(X, X_test, y, y_test, alpha=alpha, method="permutation", sampler="mc",
                   tol=1e-12, random_state=0)
    np.testing.assert_allclose(result.attribution, closed, atol=1e-12)
    # sigma_hat is 0 up to round-off in the lifts (1e-16 of R²)
    assert result.error_quantile < 1e-14 and result.converged and result.n_samples == 256
    np.testing.assert_allclose(result.attribution.sum(), result.r2, atol=1e-12)


# -- exact enumeration vs brute-force sklearn refits -------------------------------------


@pytest.mark.parametrize("p, alpha", [(1, 0.0), (2, 0.0), (5, 0.0), (8, 0.0), (6, 3.0)])
def test_exact_matches_sklearn_refits(rng, p, alpha):
    data = _data(rng, p=p)
    value = functools.lru_cache(maxsize=None)(
        lambda members: _brute_force_r2(*data, tuple(sorted(members)), alpha=alpha))
    expected = shapley_by_subsets(value, p)
    result = lsspa(*data, alpha=alpha, method="exact")
    np.testing.assert_allclose(result.attribution, expected, atol=1e-10)
    np.testing.assert_allclose(result.r2, value(frozenset(range(p))), atol=1e-10)
    model = (Ridge(alpha=alpha) if alpha else LinearRegression()).fit(data[0], data[2])
    np.testing.assert_allclose(result.theta, model.coef_, rtol=1e-9)
    np.testing.assert_allclose(result.intercept, model.intercept_, rtol=1e-9)


def test_game_values_match_sklearn_refits(rng):
    data = _data(rng, p=5)
    game = LeastSquaresGame(*data)
    masks = ((np.arange(32)[:, None] >> np.arange(5)) & 1).astype(bool)
    values = game.values(masks)
    expected = [_brute_force_r2(*data, tuple(np.flatnonzero(m))) for m in masks]
    np.testing.assert_allclose(values, expected, atol=1e-10)
    assert game.n_evaluations == 32
    np.testing.assert_allclose(game.full_r2, values[-1], atol=1e-12)


@pytest.mark.parametrize("sampler", ["argsort", "permutohedron", "sobol_sphere", "mc"])
@pytest.mark.parametrize("antithetic", [False, True])
def test_sampled_attribution_is_efficient_and_close_to_exact(rng, sampler, antithetic):
    data = _data(rng, p=9)
    exact = lsspa(*data, method="exact")
    result = lsspa(*data, method="permutation", sampler=sampler, antithetic=antithetic,
                   max_samples=1024, tol=None, random_state=1)
    assert result.n_samples == 1024 and result.method == "permutation"
    np.testing.assert_allclose(result.attribution.sum(), exact.r2, atol=1e-12)  # efficiency
    # Five overall 95 % error quantiles: fails with negligible probability if calibrated.
    assert np.linalg.norm(result.attribution - exact.attribution) < 5 * result.error_quantile
    assert not result.risk_is_heuristic


def test_auto_picks_exact_by_budget(rng):
    data = _data(rng, p=10)
    assert lsspa(*data).method == "exact"  # 2^10 <= 8192 * 10
    assert lsspa(*data, max_samples=64).method == "permutation"  # 2^10 > 640


def test_exact_refuses_large_p(rng):
    data = _data(rng, n=60, m=30, p=26, correlated=False)
    with pytest.raises(ValueError, match=r"method='exact' enumerates 2\*\*26 subsets"):
        lsspa(*data, method="exact")


# -- solvers, reductions, streaming ------------------------------------------------------


def test_qr_and_cholesky_solvers_agree(rng):
    data = _data(rng, n=500, m=300, p=30)
    game = LeastSquaresGame(*data)
    orders = np.argsort(rng.random((64, 30)), axis=1)
    qr = chain_lifts(game.reduced, orders, solver="qr")
    cholesky = chain_lifts(game.reduced, orders, solver="cholesky")
    np.testing.assert_allclose(cholesky, qr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(qr.sum(axis=1), game.full_r2, atol=1e-12)


def _blocks(X, y, size):
    for start in range(0, X.shape[0], size):
        yield X[start:start + size], y[start:start + size]


@pytest.mark.parametrize("reduction", ["tsqr", "gram"])
def test_streaming_equals_in_memory(rng, reduction):
    X, X_test, y, y_test = _data(rng, n=1000, m=300, p=7)
    in_memory = lsspa(X, X_test, y, y_test, method="exact")
    streamed = lsspa(_blocks(X, y, 97), _blocks(X_test, y_test, 64), method="exact",
                     reduction=reduction)
    np.testing.assert_allclose(streamed.attribution, in_memory.attribution, atol=1e-10)
    np.testing.assert_allclose(streamed.r2, in_memory.r2, atol=1e-10)
    np.testing.assert_allclose(streamed.theta, in_memory.theta, rtol=1e-10)
    sampled = [lsspa(*args, method="permutation", max_samples=512, tol=None, random_state=3,
                     reduction=reduction)
               for args in [(X, X_test, y, y_test),
                            (_blocks(X, y, 33), _blocks(X_test, y_test, 1000))]]
    np.testing.assert_allclose(sampled[1].attribution, sampled[0].attribution, atol=1e-10)


def test_reduction_keeps_test_sets_smaller_than_p(rng):
    X, X_test, y, y_test = _data(rng, n=100, m=4, p=6)
    reduced = reduce_least_squares(X, X_test, y, y_test)
    assert reduced.test_factor.shape == (4, 6)
    value = functools.partial(_brute_force_r2, X, X_test, y, y_test)
    result = lsspa(X, X_test, y, y_test)
    np.testing.assert_allclose(result.r2, value(tuple(range(6))), atol=1e-10)


# -- cross-validated metric and alpha selection (§5.10, §5.11) --------------------------


def test_cv_metric_matches_brute_force(rng):
    X, _, y, _ = _data(rng, n=120, p=4)
    folds = list(KFold(4).split(X))

    @functools.cache
    def value(members):
        if not members:
            return 0.0
        sse = total = 0.0
        for train, valid in folds:
            cols = sorted(members)
            model = LinearRegression().fit(X[train][:, cols], y[train])
            residual = y[valid] - model.predict(X[valid][:, cols])
            sse += residual @ residual
            total += np.sum((y[valid] - y[train].mean()) ** 2)
        return 1.0 - sse / total

    result = lsspa(X, None, y, None, cv=4)
    np.testing.assert_allclose(result.attribution, shapley_by_subsets(value, 4), atol=1e-10)
    np.testing.assert_allclose(result.r2, value(frozenset(range(4))), atol=1e-10)
    sampled = lsspa(X, None, y, None, cv=4, method="permutation", max_samples=512, tol=None,
                    random_state=0)
    np.testing.assert_allclose(sampled.attribution.sum(), result.r2, atol=1e-12)


def test_alphas_selects_lowest_cv_error(rng):
    X, X_test, y, y_test = _data(rng, n=80, p=6, noise=5.0)
    alphas = [1e-3, 1.0, 30.0, 1e4]
    result = lsspa(X, X_test, y, y_test, alphas=alphas)  # 5 unshuffled folds by default
    sse = []
    for a in alphas:
        total = 0.0
        for train, valid in KFold(5).split(X):
            residual = y[valid] - Ridge(alpha=a).fit(X[train], y[train]).predict(X[valid])
            total += residual @ residual
        sse.append(total / X.shape[0])
    np.testing.assert_allclose([result.alpha_scores[a] for a in alphas], sse, rtol=1e-9)
    assert result.alpha == alphas[int(np.argmin(sse))]
    fixed = lsspa(X, X_test, y, y_test, alpha=result.alpha)
    np.testing.assert_allclose(result.attribution, fixed.attribution, atol=1e-12)


# -- error estimates and stopping ----------------------------------------------------------


@pytest.mark.parametrize("sampler, replicates", [("mc", None), ("argsort", 8)])
def test_error_quantile_coverage(rng, sampler, replicates):
    data = _data(rng, n=300, m=200, p=10, noise=2.0)
    exact = lsspa(*data, method="exact").attribution
    game = LeastSquaresGame(*data)
    n_runs = 60
    covered = 0
    for seed in range(n_runs):
        result = lsspa(*data, method="permutation", sampler=sampler, replicates=replicates,
                       max_samples=128, tol=None, random_state=seed)
        covered += np.linalg.norm(result.attribution - exact) <= result.error_quantile
    assert game.n_players == 10
    # Nominal 95 %: a binomial(60, 0.95) is below 51 with probability < 1 %.
    assert covered >= 51, covered


def test_early_stopping_and_history(rng):
    data = _data(rng, p=12, noise=0.5)
    result = lsspa(*data, method="permutation", sampler="mc", tol=0.5, random_state=0,
                   return_history=True)
    assert result.converged and result.n_samples == 256 and len(result.error_history) == 1
    assert result.history.shape == (1, 12)
    long = lsspa(*data, method="permutation", sampler="mc", tol=1e-9, max_samples=1024,
                 random_state=0, return_history=True)
    assert not long.converged and long.n_samples == 1024
    assert long.samples_history == (256, 512, 768, 1024)
    np.testing.assert_allclose(long.history[-1], long.attribution)
    assert long.error_history[-1] < long.error_history[0]


def test_rqmc_replicates_are_the_draws(rng):
    data = _data(rng, p=12)
    result = lsspa(*data, method="permutation", sampler="argsort", replicates=16,
                   antithetic=False, max_samples=1000, tol=None, random_state=0)
    assert result.n_draws == 16 and result.n_samples == 992  # whole rounds of 16
    single = lsspa(*data, method="permutation", sampler="argsort", replicates=None,
                   antithetic=False, max_samples=1024, tol=None, random_state=0)
    assert single.risk_is_heuristic and single.n_draws == 1024


def test_deterministic_for_a_seed(rng):
    data = _data(rng, p=12)
    a, b, c = (lsspa(*data, method="permutation", max_samples=512, tol=None, random_state=s)
               for s in (5, 5, 6))
    np.testing.assert_array_equal(a.attribution, b.attribution)
    assert not np.array_equal(a.attribution, c.attribution)


def test_given_orderings_are_used_as_is(rng):
    data = _data(rng, p=5)
    orders = np.array(list(itertools.permutations(range(5))))
    result = lsspa(*data, method="permutation", sampler=orders, antithetic=False, tol=None)
    np.testing.assert_allclose(result.attribution, lsspa(*data).attribution, atol=1e-12)
    assert result.n_samples == 120 and result.sampler == "array"


def test_permutohedron_normal_rows_are_permutations():
    orders = PermutohedronNormal(7, rng=0, replicates=4).random(64)
    np.testing.assert_array_equal(np.sort(orders, axis=1), np.tile(np.arange(7), (64, 1)))
    # each position is uniform: feature 0 comes first in about 1/7 of rows (loose check)
    assert 0 < (orders[:, 0] == 0).sum() < 25


# -- bad input ---------------------------------------------------------------------------


def test_mismatched_columns(rng):
    X, X_test, y, y_test = _data(rng, p=4)
    with pytest.raises(ValueError, match="X_test has 3 columns but X_train has 4"):
        lsspa(X, X_test[:, :3], y, y_test)
    with pytest.raises(ValueError, match=r"y_train must have one value per row"):
        lsspa(X, X_test, y[:-1], y_test)


def _min_norm_shapley(X, X_test, y, y_test):
    """Exact Shapley values of R² with LinearRegression (lstsq: the minimum-norm fit)."""
    value = functools.partial(_brute_force_r2, X, X_test, y, y_test)
    return shapley_by_subsets(lambda members: value(tuple(sorted(members))), X.shape[1])


# R² of the minimum-norm fit: ridge 1e-12 ||X||^2 agrees with lstsq to ~1e-6 here
# (games/_least_squares.py, MIN_NORM_RIDGE: bias alpha / s^2, roundoff 1e-16 ||X||^2 /
# alpha), so 1e-5 leaves a decade.
MIN_NORM_ATOL = 1e-5


def test_more_features_than_rows(rng):
    X, X_test, y, y_test = _data(rng, n=7, p=8, correlated=False)
    # rank deficient: every subset gets its minimum-norm fit, as LinearRegression
    result = lsspa(X, X_test, y, y_test)
    expected = _min_norm_shapley(X, X_test, y, y_test)
    # R² of interpolating fits reach -10: the bias alpha / s^2 is relative
    np.testing.assert_allclose(result.attribution, expected,
                               atol=MIN_NORM_ATOL * np.abs(expected).max())
    assert lsspa(X, X_test, y, y_test, alpha=1.0).method == "exact"  # ridge is fine


def test_constant_column_is_a_null_player(rng):
    X, X_test, y, y_test = _data(rng, p=4)
    X[:, 2] = 7.0
    result = lsspa(X, X_test, y, y_test)
    assert abs(result.attribution[2]) < 1e-12 and result.alpha == 0.0
    np.testing.assert_allclose(result.attribution, _min_norm_shapley(X, X_test, y, y_test),
                               atol=MIN_NORM_ATOL)
    result = lsspa(X, X_test, y, y_test, alpha=1.0)
    assert abs(result.attribution[2]) < 1e-12  # a null player under ridge


@pytest.mark.parametrize("method", ["exact", "permutation"])
def test_collinear_columns_get_the_minimum_norm_fit(rng, method):
    X, X_test, y, y_test = _data(rng, p=5)
    X[:, 3] = X[:, 0] - 2 * X[:, 1]  # the test rows do not keep the relation
    # all 120 orderings: the chain kernel gives the exact values too
    orders = np.array(list(itertools.permutations(range(5))))
    result = lsspa(X, X_test, y, y_test, method=method, tol=None, antithetic=False,
                   sampler=orders if method == "permutation" else "argsort")
    np.testing.assert_allclose(result.attribution, _min_norm_shapley(X, X_test, y, y_test),
                               atol=MIN_NORM_ATOL)
    model = LinearRegression().fit(X, y)
    np.testing.assert_allclose(result.theta, model.coef_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("where", ["X_train", "y_test"])
def test_nan(rng, where):
    X, X_test, y, y_test = _data(rng, p=3)
    (X if where == "X_train" else y_test)[(1, 2) if where == "X_train" else 4] = np.nan
    with pytest.raises(ValueError, match=rf"{where} contains NaN or infinite values"):
        lsspa(X, X_test, y, y_test)


@pytest.mark.parametrize("kwargs, message", [
    ({"alpha": -1.0}, "'alpha' parameter must be a finite number >= 0"),
    ({"method": "fast"}, "'method' parameter must be one of"),
    ({"sampler": "sobl"}, "'sampler' parameter must be one of"),
    ({"tol": 0.0}, "'tol' parameter must be a positive number"),
    ({"max_samples": 1}, "'max_samples' parameter must be an integer >= 2"),
    ({"solver": "lu"}, "'solver' parameter must be one of"),
    ({"reduction": "svd"}, "'reduction' parameter must be one of"),
    ({"cv": 3}, "X_test and y_test must be None when 'cv' is set"),
])
def test_bad_options(rng, kwargs, message):
    data = _data(rng, p=3)
    with pytest.raises(ValueError, match=message):
        lsspa(*data, **{"method": "permutation", **kwargs})


@pytest.mark.parametrize("method", ["auto", "exact"])
def test_unknown_sampler_is_rejected_even_when_no_orderings_are_drawn(rng, method):
    # p=3: "auto" resolves to exact enumeration, which never uses the sampler.
    data = _data(rng, p=3)
    with pytest.raises(ValueError, match=r"'sampler' parameter must be one of \[.*"
                                         r"'argsort_sobol'.*got 'no_such_sampler'"):
        lsspa(*data, method=method, sampler="no_such_sampler")


def test_constant_test_target(rng):
    X, X_test, y, _ = _data(rng, p=3)
    with pytest.raises(ValueError, match="y_test is constant"):
        lsspa(X, X_test, y, np.full(X_test.shape[0], y.mean()))


# -- the reference package, when installed ---------------------------------------------


def test_matches_ls_spa_on_toy_and_same_chains(rng):
    ls_spa = pytest.importorskip("ls_spa")
    reference = ls_spa.ls_spa(*TOY_ARGS)
    ours = lsspa(*TOY_ARGS, center=False)
    np.testing.assert_allclose(ours.attribution, reference.attribution, atol=1e-8)
    np.testing.assert_allclose(ours.r2, reference.r_squared, atol=1e-8)
    X, X_test, y, y_test = _data(rng, n=400, m=300, p=20)
    reduced = ls_spa.reduce_data(X, X_test, y, y_test, 0.0)
    norm = y_test @ y_test
    orders = np.argsort(rng.random((8, 20)), axis=1)
    expected = np.array([ls_spa.square_shapley(*reduced, norm, order) for order in orders])
    game = LeastSquaresGame(X, X_test, y, y_test, center=False)
    np.testing.assert_allclose(game.chain_lifts(orders), expected, atol=1e-10)


def test_game_serves_the_generic_approximators(rng):
    from skshapley.approximators import exact_shapley, permutation_shapley

    data = _data(rng, p=6)
    game = LeastSquaresGame(*data)
    np.testing.assert_allclose(exact_shapley(game).values, lsspa(*data).attribution,
                               atol=1e-12)
    sampled = permutation_shapley(LeastSquaresGame(*data), budget=2 + 5 * 200,
                                  random_state=0)
    np.testing.assert_allclose(sampled.values.sum(), game.full_r2, atol=1e-12)
