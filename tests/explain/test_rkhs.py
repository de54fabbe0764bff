"""RKHSShapRegressor and the RKHS value games against the oracles of §6.8."""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from skshapley import RKHSShapRegressor
from skshapley.approximators import all_coalitions, exact_shapley
from skshapley.games import RKHSValueGame
from skshapley.games._rkhs import product_kernel


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    X[:, 1] += 0.8 * X[:, 0]  # dependent features: ISV and OSV differ
    y = X[:, 0] + np.sin(X[:, 1]) + X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=50)
    return X, y


def model_function(X, alpha, scales, kernel="rbf"):
    return lambda rows: product_kernel(np.atleast_2d(rows), X, scales, kernel) @ alpha


@pytest.mark.parametrize("kernel", ["rbf", "laplace"])
def test_interventional_game_is_the_marginal_game_of_the_training_rows(data, kernel):
    X, _ = data
    rng = np.random.default_rng(1)
    alpha, scales, queries = rng.normal(size=len(X)), np.array([0.7, 1.3, 0.9, 2.0]), X[:3]
    f = model_function(X, alpha, scales, kernel)
    coalitions = all_coalitions(4)
    game = RKHSValueGame(X, alpha, queries, scales, kernel=kernel)
    brute = np.array([[f(np.where(z, q, X)).mean() for q in queries] for z in coalitions])
    np.testing.assert_allclose(game.values(coalitions), brute, rtol=1e-12, atol=1e-12)
    # Both paths are covered: all coalitions at once use the subset table of mean
    # embeddings, a few at a time (a fresh game, table not worth it) the direct formula
    assert game._embedding_table is not None
    few = RKHSValueGame(X, alpha, queries, scales, kernel=kernel)
    np.testing.assert_allclose(few.values(coalitions[5:7]), brute[5:7], rtol=1e-12,
                               atol=1e-12)
    assert few._embedding_table is None


def test_observational_game_is_the_beta_weighted_imputation(data):
    X, _ = data
    n, eta = len(X), 1e-3
    rng = np.random.default_rng(2)
    alpha, scales, queries = rng.normal(size=n), np.array([0.7, 1.3, 0.9, 2.0]), X[:2]
    f = model_function(X, alpha, scales)
    game = RKHSValueGame(X, alpha, queries, scales, value="observational",
                         cme_regularization=eta)
    for z in all_coalitions(4)[1:-1]:
        G_S = product_kernel(X[:, z], X[:, z], scales[z], "rbf")
        system = G_S + (n * eta + 1e-10 * np.mean(np.diag(G_S))) * np.eye(n)
        expected = []
        for q in queries:
            beta = np.linalg.solve(system, product_kernel(X[:, z], q[None, z], scales[z],
                                                          "rbf")[:, 0])
            expected.append(beta @ f(np.where(z, q, X)))
        np.testing.assert_allclose(game.values(z[None])[0], expected, rtol=1e-9)
    # The ends are phi_0 and f(x'), not the formula's shrunk values (§6.9).
    ends = game.values(all_coalitions(4)[[0, -1]])
    np.testing.assert_allclose(ends[0], f(X).mean())
    np.testing.assert_allclose(ends[1], f(queries))


@pytest.mark.parametrize("value", ["interventional", "observational"])
def test_efficiency_against_predict(data, value):
    X, y = data
    for max_evals in (2048, 10):  # exact, then estimated
        model = RKHSShapRegressor(alpha=0.1, value=value, max_evals=max_evals,
                                  fit_intercept=True, random_state=0).fit(X, y)
        phi = model.shapley_values(X[:6])
        np.testing.assert_allclose(phi.sum(axis=1) + model.expected_value_,
                                   model.predict(X[:6]), atol=1e-10)
    assert model.exact_ is False


def test_null_player_symmetry_and_one_feature(data):
    X, y = data
    scales = np.array([1.0, 1e12, 1.0, 1.0])  # feature 1 drops out of the kernel
    phi = RKHSShapRegressor(length_scale=scales).fit(X, y).shapley_values(X[:5])
    np.testing.assert_allclose(phi[:, 1], 0.0, atol=1e-15)  # round-off of the enumeration
    twins = np.column_stack([X[:, 0], X[:, 0], X[:, 2]])
    for value in ("interventional", "observational"):
        phi = RKHSShapRegressor(length_scale=1.0, value=value).fit(twins, y).shapley_values(
            twins[:5])
        np.testing.assert_allclose(phi[:, 0], phi[:, 1], rtol=1e-9)
    one = RKHSShapRegressor().fit(X[:, :1], y)
    np.testing.assert_allclose(one.shapley_values(X[:4, :1])[:, 0],
                               one.predict(X[:4, :1]) - one.expected_value_, atol=1e-12)


def test_linear_kernel_closed_forms(data):
    X, y = data
    n, d = X.shape
    model = RKHSShapRegressor(kernel="linear", alpha=0.5).fit(X, y)
    w = X.T @ model.dual_coef_
    np.testing.assert_allclose(model.shapley_values(X[:3]), w * (X[:3] - X.mean(axis=0)),
                               atol=1e-12)
    # ISV-REG with the linear kernel is a generalised ridge (§6.8 oracle 9).
    penalty, a = 2.0, 1
    regularised = RKHSShapRegressor(kernel="linear", alpha=0.5, shapley_penalty=penalty,
                                    penalized_features=a).fit(X, y)
    e = np.eye(d)[a]
    expected = np.linalg.solve(X.T @ X + 0.5 * np.eye(d)
                               + penalty * n * X[:, a].var() * np.outer(e, e), X.T @ y)
    np.testing.assert_allclose(X.T @ regularised.dual_coef_, expected, atol=1e-10)


def test_no_penalty_is_kernel_ridge(data):
    X, y = data
    model = RKHSShapRegressor(alpha=0.3).fit(X, y)
    scales = model.length_scale_
    reference = KernelRidge(alpha=0.3, kernel=lambda a, b: product_kernel(
        a[None], b[None], scales, "rbf")[0, 0]).fit(X, y)
    np.testing.assert_allclose(model.predict(X), reference.predict(X), rtol=1e-10,
                               atol=1e-10)


def _objective_parts(model, X, y):
    gram = product_kernel(X, X, model.length_scale_, model.kernel)
    alpha = model.dual_coef_
    fit = np.sum((y - gram @ alpha) ** 2) + model.alpha_ * alpha @ gram @ alpha
    return gram, fit


@pytest.mark.parametrize("value", ["interventional", "observational"])
def test_regulariser_trades_fit_for_smaller_penalised_values(data, value):
    X, y = data
    squared, fits = [], []
    for penalty in (0.0, 0.5, 5.0, 50.0):
        model = RKHSShapRegressor(alpha=0.1, shapley_penalty=penalty, penalized_features=[0],
                                  value=value).fit(X, y)
        squared.append(np.sum(model.shapley_values(X, value=value)[:, 0] ** 2))
        fits.append(_objective_parts(model, X, y)[1])
    assert all(b <= a * (1 + 1e-9) for a, b in zip(squared, squared[1:], strict=False))
    assert all(b >= a * (1 - 1e-9) for a, b in zip(fits, fits[1:], strict=False))
    assert squared[-1] < 0.05 * squared[0]


def test_gradient_of_the_regularised_objective_vanishes(data):
    X, y = data
    model = RKHSShapRegressor(alpha=0.1, shapley_penalty=3.0, penalized_features=[0, 2]).fit(
        X, y)
    gram, _ = _objective_parts(model, X, y)
    alpha = model.dual_coef_
    zetas = model._zetas(X, gram, model.length_scale_, model.penalized_features_,
                         np.random.default_rng(0))
    gradient = (-2 * gram @ (y - gram @ alpha) + 2 * model.alpha_ * gram @ alpha
                + 2 * 3.0 * sum(z @ (z.T @ alpha) for z in zetas))
    # phi at the training rows is zeta' alpha: the regulariser's definition
    phi = model.shapley_values(X)
    np.testing.assert_allclose(phi[:, 0], zetas[0].T @ alpha, atol=1e-10)
    assert np.linalg.norm(gradient) < 1e-6 * np.linalg.norm(2 * gram @ y)


def test_sampled_regulariser_is_seeded(data):
    X, y = data
    fit = lambda seed: RKHSShapRegressor(shapley_penalty=1.0, penalized_features=0,  # noqa: E731
                                         max_evals=8, random_state=seed).fit(X, y).dual_coef_
    np.testing.assert_array_equal(fit(0), fit(0))
    assert not np.allclose(fit(0), fit(1))


def test_explain_transform_and_names(data):
    import pandas as pd

    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = RKHSShapRegressor(shapley_penalty=1.0, penalized_features="b").fit(frame, y)
    assert model.penalized_features_.tolist() == [1]
    explanation = model.explain(frame.iloc[:3])
    assert explanation.feature_names == ["a", "b", "c", "d"]
    np.testing.assert_allclose(explanation.values, model.transform(frame.iloc[:3]))
    assert model.get_feature_names_out().tolist() == [f"shapley_{c}" for c in "abcd"]
    out = model.set_output(transform="pandas").transform(frame.iloc[:3])
    assert list(out.columns) == [f"shapley_{c}" for c in "abcd"]


def test_pipeline_and_grid_search(data):
    X, y = data
    search = GridSearchCV(make_pipeline(StandardScaler(), RKHSShapRegressor()),
                          {"rkhsshapregressor__alpha": [0.1, 1.0]}, cv=3).fit(X, y)
    assert search.best_params_["rkhsshapregressor__alpha"] in (0.1, 1.0)


@pytest.mark.parametrize(("params", "match"), [
    ({"kernel": "matern"}, "'kernel' parameter"),
    ({"alpha": 0.0}, "'alpha' parameter"),
    ({"shapley_penalty": -1.0}, "'shapley_penalty' parameter"),
    ({"shapley_penalty": 1.0}, "needs penalized_features"),
    ({"shapley_penalty": 1.0, "penalized_features": 7}, "not a feature index"),
    ({"shapley_penalty": 1.0, "penalized_features": "zz"}, "unknown feature 'zz'"),
    ({"cme_regularization": 0}, "'cme_regularization' parameter"),
    ({"kernel": "linear", "value": "observational"}, "only value='interventional'"),
    ({"length_scale": -1.0}, "'length_scale' parameter"),
    ({"alpha": "mll"}, "requires length_scale='mll'"),
    # non-finite numbers, a string among the scales and a truthy string used to reach
    # scipy ("array must not contain infs"), numpy, or pass as True
    ({"alpha": np.inf}, r"'alpha' parameter .*\(0\.0, inf\).* Got inf instead"),
    ({"cme_regularization": np.inf, "value": "observational"},
     r"'cme_regularization' parameter .*\(0\.0, inf\).* Got inf instead"),
    ({"length_scale": [1, "a", 2, 1]}, r"'length_scale' parameter .*got \[1, 'a', 2, 1\]"),
    ({"length_scale": np.inf}, r"'length_scale' parameter .*\(0\.0, inf\).* Got inf instead"),
    ({"fit_intercept": "no"}, r"'fit_intercept' parameter .*'bool'.* Got 'no' instead"),
])
def test_bad_parameters_are_named(data, params, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        RKHSShapRegressor(**params).fit(X, y)


def test_failed_fit_leaves_the_fitted_model_as_it_was(data):
    X, y = data
    model = RKHSShapRegressor(alpha=0.1).fit(X, y)
    before = model.predict(X[:3])
    model.set_params(shapley_penalty=1.0, penalized_features=["nope"])
    with pytest.raises(ValueError, match="unknown feature 'nope'"):
        model.fit(X[:, :3], y)  # validate_data had already recorded 3 features
    assert model.n_features_in_ == 4
    np.testing.assert_array_equal(model.predict(X[:3]), before)


def test_feature_names_out_checks_input_features(data):
    import pandas as pd

    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = RKHSShapRegressor().fit(frame, y)
    assert model.get_feature_names_out(["a", "b", "c", "d"]).tolist() == [
        f"shapley_{c}" for c in "abcd"]
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        model.get_feature_names_out(["w", "x", "y", "z"])
    unnamed = RKHSShapRegressor().fit(X, y)
    assert unnamed.get_feature_names_out().tolist() == [f"shapley_x{j}" for j in range(4)]
    with pytest.raises(ValueError, match="input_features should have length equal to"):
        unnamed.get_feature_names_out(["q"])


def test_nan_is_rejected(data):
    X, y = data
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RKHSShapRegressor().fit(bad, y)


@parametrize_with_checks([RKHSShapRegressor(max_evals=64)])
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_exact_game_values_through_the_approximator(data):
    # The estimator's values are the exact Shapley values of its game (oracle 3).
    X, y = data
    model = RKHSShapRegressor(alpha=0.2).fit(X, y)
    game = RKHSValueGame(X, model.dual_coef_, X[:2], model.length_scale_)
    np.testing.assert_allclose(model.shapley_values(X[:2]), exact_shapley(game).values.T,
                               atol=1e-12)


@pytest.mark.parametrize("value", ["interventional", "observational"])
def test_background_subsample(data, value):
    X, y = data
    model = RKHSShapRegressor(alpha=0.1, value=value, background_size=20,
                              random_state=0).fit(X, y)
    background = model.background_
    assert background.shape == (20, 4)
    np.testing.assert_allclose(model.expected_value_, model.predict(background).mean())
    phi = model.shapley_values(X[:4])
    np.testing.assert_allclose(phi.sum(axis=1) + model.expected_value_, model.predict(X[:4]),
                               atol=1e-10)
    if value == "interventional":  # the marginal game with those 20 rows as background
        f = model.predict
        game = lambda S: np.array([[f(np.where(z, q, background)).mean()  # noqa: E731
                                    for q in X[:4]] for z in S])
        from skshapley.games import CallableGame

        exact = exact_shapley(CallableGame(game, 4)).values.T
        np.testing.assert_allclose(phi, exact, atol=1e-10)
    full = RKHSShapRegressor(alpha=0.1, value=value).fit(X, y)
    np.testing.assert_allclose(model.predict(X), full.predict(X))  # the fit is unchanged


@pytest.mark.parametrize("value", ["interventional", "observational"])
def test_nystroem_with_every_row_as_landmark_is_exact(data, value):
    # §6.8 oracle 14: landmarks = the background and a vanishing jitter give exact mode.
    X, y = data
    exact = RKHSShapRegressor(alpha=0.1, value=value).fit(X, y)
    approx = RKHSShapRegressor(alpha=0.1, value=value, approximation="nystroem",
                               n_components=len(X)).fit(X, y)
    scale = np.abs(exact.shapley_values(X[:4])).max()
    np.testing.assert_allclose(approx.shapley_values(X[:4]), exact.shapley_values(X[:4]),
                               atol=1e-3 * scale)
    coarse = RKHSShapRegressor(alpha=0.1, value=value, approximation="nystroem",
                               n_components=10, random_state=0).fit(X, y)
    phi = coarse.shapley_values(X[:4])  # approximate, but still efficient
    np.testing.assert_allclose(phi.sum(axis=1) + coarse.expected_value_, coarse.predict(X[:4]),
                               atol=1e-10)
    assert coarse.landmarks_.shape == (10, 4)


def test_interventional_values_are_lipschitz_in_the_rkhs_norm(data):
    # §6.5 (Theorem 6 in its Cauchy-Schwarz form): with a unit-amplitude product RBF,
    # |phi_i(x) - phi_i(x')| <= 2 ||f||_H sqrt(1 - k(x, x')) in exact mode.
    X, y = data
    model = RKHSShapRegressor(alpha=0.1).fit(X, y)
    gram = product_kernel(X, X, model.length_scale_, "rbf")
    norm = np.sqrt(model.dual_coef_ @ gram @ model.dual_coef_)
    rng = np.random.default_rng(3)
    first = X[rng.integers(len(X), size=20)]
    second = first + rng.normal(scale=rng.choice([0.05, 0.5, 2.0], size=(20, 1)), size=(20, 4))
    gap = np.abs(model.shapley_values(first) - model.shapley_values(second)).max(axis=1)
    k = np.exp(-0.5 * (((first - second) / model.length_scale_) ** 2).sum(axis=1))
    bound = 2 * norm * np.sqrt(1 - k)
    assert np.all(gap <= bound * (1 + 1e-9))
    assert gap.max() > 0.05 * bound.max()  # not vacuous: the bound is within 20x


def test_observational_values_obey_the_cme_robustness_bound(data):
    # §6.5, OSV analogue: the ISV bound times sqrt(2 M_Gamma), with
    # M_Gamma = max(1, max_S tr(H_S G_{S^c} H_S G_S)), H_S = (G_S + n eta I)^{-1}.
    X, y = data
    model = RKHSShapRegressor(alpha=0.1, value="observational").fit(X, y)
    n, d = X.shape
    gram = product_kernel(X, X, model.length_scale_, "rbf")
    norm = np.sqrt(model.dual_coef_ @ gram @ model.dual_coef_)
    m_gamma = 1.0
    for s in range(1, 2**d - 1):
        z = np.array([s >> j & 1 for j in range(d)], bool)
        G_S = product_kernel(X[:, z], X[:, z], model.length_scale_[z], "rbf")
        G_rest = product_kernel(X[:, ~z], X[:, ~z], model.length_scale_[~z], "rbf")
        H = np.linalg.inv(G_S + n * model.cme_regularization_ * np.eye(n))
        m_gamma = max(m_gamma, np.trace(H @ G_rest @ H @ G_S))
    rng = np.random.default_rng(4)
    first = X[rng.integers(len(X), size=20)]
    second = first + rng.normal(scale=rng.choice([0.05, 0.5, 2.0], size=(20, 1)), size=(20, 4))
    gap = np.abs(model.shapley_values(first) - model.shapley_values(second)).max(axis=1)
    k = np.exp(-0.5 * (((first - second) / model.length_scale_) ** 2).sum(axis=1))
    bound = 2 * norm * np.sqrt(1 - k) * np.sqrt(2 * m_gamma)
    assert np.all(gap <= bound * (1 + 1e-9))
    # loose (the spec measured worst ratios near 0.06), but not infinitely so
    assert (gap / bound).max() > 1e-3


def test_marginal_likelihood_hyperparameters_give_the_gp_mean(data):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    X, y = data
    model = RKHSShapRegressor(length_scale="mll", alpha="mll", fit_intercept=True,
                              random_state=0).fit(X, y)
    assert model.length_scale_.shape == (4,) and model.alpha_ > 0
    kernel = ConstantKernel(1.0) * RBF(model.length_scale_) + WhiteKernel(model.alpha_)
    gp = GaussianProcessRegressor(kernel, optimizer=None, alpha=1e-12, normalize_y=True)
    np.testing.assert_allclose(model.predict(X[:5]), gp.fit(X, y).predict(X[:5]), rtol=1e-6)
    phi = model.shapley_values(X[:3])
    np.testing.assert_allclose(phi.sum(axis=1) + model.expected_value_, model.predict(X[:3]),
                               atol=1e-9)


def test_random_fourier_features_approach_the_exact_values():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] + np.sin(2 * X[:, 1])
    for value in ("interventional", "observational"):
        exact = RKHSShapRegressor(alpha=0.1, value=value, length_scale=1.0).fit(X, y)
        errors = []
        for b in (200, 20000):
            rff = RKHSShapRegressor(alpha=0.1, value=value, length_scale=1.0,
                                    approximation="rff", n_components=b,
                                    random_state=0).fit(X, y)
            phi = rff.shapley_values(X[:5])
            # efficiency stays exact: v(N) and v(∅) are never approximated
            np.testing.assert_allclose(phi.sum(axis=1) + rff.expected_value_,
                                       rff.predict(X[:5]), atol=1e-9)
            errors.append(np.abs(phi - exact.shapley_values(X[:5])).max())
        assert errors[1] < 0.05 * np.abs(exact.shapley_values(X[:5])).max()
        assert errors[1] < errors[0]
    again = RKHSShapRegressor(alpha=0.1, approximation="rff", random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.fourier_features_[0],
                                  RKHSShapRegressor(alpha=0.1, approximation="rff",
                                                    random_state=0).fit(X, y)
                                  .fourier_features_[0])
    with pytest.raises(ValueError, match="approximation='rff' needs a product kernel"):
        RKHSShapRegressor(kernel="linear", approximation="rff").fit(X, y)


def test_cme_regularization_by_cross_validation():
    from skshapley.games._cme import ETA_GRID, cme_cv_losses
    from skshapley.games._rkhs import scaled_differences

    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 3))
    X[:, 2] = X[:, 0] + 0.1 * rng.normal(size=40)
    y = X[:, 0] - X[:, 1]
    model = RKHSShapRegressor(alpha=0.1, value="observational", cme_regularization="cv",
                              length_scale=1.0, random_state=0).fit(X, y)
    assert model.cme_regularization_ == ETA_GRID[np.argmin(model.cme_cv_losses_)]
    phi = model.shapley_values(X[:3])
    np.testing.assert_allclose(phi.sum(axis=1) + model.expected_value_, model.predict(X[:3]),
                               atol=1e-9)
    # the eigendecomposition path equals a direct solve of one fold, coalition and eta
    diffs = scaled_differences(X, X, np.ones(3), "rbf")
    losses = cme_cv_losses(diffs, eta_grid=[1e-2], n_folds=2)
    order = np.arange(40)
    direct = 0.0
    for held in np.array_split(order, 2):
        train = np.setdiff1d(order, held)
        for z in (np.array([1, 0, 0], bool), np.array([0, 1, 0], bool),
                  np.array([0, 0, 1], bool), np.array([1, 1, 0], bool),
                  np.array([1, 0, 1], bool), np.array([0, 1, 1], bool)):
            def gram(mask, a, b):
                return np.exp(-diffs[mask][:, a][:, :, b].sum(axis=0))

            beta = np.linalg.solve(gram(z, train, train) + len(train) * 1e-2 * np.eye(len(train)),
                                   gram(z, train, held))
            rest = ~z
            direct += np.sum(1 - 2 * np.sum(beta * gram(rest, train, held), axis=0)
                             + np.sum(beta * (gram(rest, train, train) @ beta), axis=0))
    np.testing.assert_allclose(losses[0], direct, rtol=1e-9)
    with pytest.raises(ValueError, match=r"'cme_regularization' parameter .*\{'cv'\}\. Got "
                                         r"'auto' instead"):
        RKHSShapRegressor(cme_regularization="auto").fit(X, y)


def test_predict_in_chunks_equals_one_block(data):
    # working_memory bounds the kernel block: tiny chunks give the same predictions
    from skshapley import config_context

    X, y = data
    model = RKHSShapRegressor(alpha=0.1).fit(X, y)
    whole = model.predict(X)
    with config_context(working_memory=1e-4):
        chunked = model.predict(X)
    np.testing.assert_allclose(chunked, whole, rtol=1e-13, atol=1e-13)


def test_kept_subset_table_gives_the_same_values_without_training_exponents(data):
    X, y = data
    model = RKHSShapRegressor(alpha=0.1).fit(X, y)
    keys = set(model.__dict__)
    phi = model.shapley_values(X[:4])  # builds the table and keeps it
    table = model._embedding_cache["table"]
    assert table.shape == (2**X.shape[1], len(X)) and set(model.__dict__) == keys
    np.testing.assert_allclose(phi.sum(axis=1) + model.expected_value_, model.predict(X[:4]),
                               rtol=1e-10)
    np.testing.assert_array_equal(model.shapley_values(X[:4]), phi)  # reused: same bits
    assert model._embedding_cache["table"] is table
    kwargs = dict(kernel="rbf", intercept=model.intercept_)
    with_table = RKHSValueGame(X, model.dual_coef_, X[:4], model.length_scale_,
                               subset_embeddings=table, **kwargs)
    without = RKHSValueGame(X, model.dual_coef_, X[:4], model.length_scale_, **kwargs)
    assert not hasattr(with_table, "_tb")  # the O(d n B) exponents are never formed
    coalitions = all_coalitions(X.shape[1])
    np.testing.assert_allclose(with_table.values(coalitions), without.values(coalitions),
                               rtol=1e-12, atol=1e-12)
    assert with_table.empty_ == pytest.approx(model.expected_value_, rel=1e-12)
    with pytest.raises(ValueError, match="subset_embeddings must have shape"):
        RKHSValueGame(X, model.dual_coef_, X[:4], model.length_scale_,
                      subset_embeddings=table[:3])


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("kernel", ["rbf", "laplace"])
def test_subset_embeddings_kernel_is_the_brute_force_mean(backend, kernel):
    from skshapley.backends import get_backend

    rng = np.random.default_rng(3)
    X, background, scales = rng.normal(size=(7, 3)), rng.normal(size=(5, 3)), \
        np.array([0.5, 1.0, 2.0])
    table = get_backend(backend).rkhs_subset_embeddings(X, background, scales,
                                                        kernel == "laplace",
                                                        np.empty((8, 7)))
    for mask in range(8):
        z = np.array([bool(mask >> j & 1) for j in range(3)])
        expected = product_kernel(X[:, z], background[:, z], scales[z], kernel).mean(axis=1) \
            if z.any() else np.ones(7)
        np.testing.assert_allclose(table[mask], expected, rtol=1e-13)


def test_subset_table_is_kept_only_for_exact_interventional_product_kernels(data):
    X, y = data
    for model in (RKHSShapRegressor(max_evals=8), RKHSShapRegressor(kernel="linear"),
                  RKHSShapRegressor(approximation="rff", random_state=0)):
        model.fit(X, y).shapley_values(X[:2])
        assert "table" not in getattr(model, "_embedding_cache", {})
    model = RKHSShapRegressor().fit(X, y)
    model.shapley_values(X[:2], value="observational")
    assert "table" not in model._embedding_cache


def _with_text_column(X, as_category=False):
    import pandas as pd

    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    frame["c"] = np.where(X[:, 2] > 0, "high", "low").astype(object)
    if as_category:
        frame["c"] = frame["c"].astype("category")
    return frame


@pytest.mark.parametrize("kind", ["object", "category", "array"])
def test_text_columns_are_refused_naming_the_column_and_value(data, kind):
    # issue 28: the message named the value only ("could not convert string to float")
    X, y = data
    frame = _with_text_column(X, as_category=kind == "category")
    given = frame.to_numpy(dtype=object) if kind == "array" else frame
    column = "at index 2" if kind == "array" else "'c'"
    value = frame["c"].iloc[0]
    with pytest.raises(ValueError, match=rf"X has the value '{value}' in the column "
                                         rf"{column}, which is not a number; "
                                         "RKHSShapRegressor takes numeric features only"):
        RKHSShapRegressor().fit(given, y)
