"""``RKHSShapRegressor``: kernel ridge regression that explains itself in closed form and
can be trained with the Shapley regulariser (Chau, Hu, González & Sejdinovic, "RKHS-SHAP:
Shapley values for kernel methods", NeurIPS 2022)."""

from __future__ import annotations

import warnings
from math import factorial
from numbers import Integral, Real

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigh, lstsq
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from skshapley.approximators import all_coalitions, shapley_values
from skshapley.exceptions import SkshapleyWarning
from skshapley.explain._explanation import Explanation
from skshapley.games import (
    ETA_GRID,
    KERNELS,
    VALUES,
    RKHSValueGame,
    cme_cv_losses,
    product_kernel,
    scaled_differences,
    subset_embeddings,
    subset_table_fits,
)
from skshapley.utils import (
    RANDOM_STATE,
    NumberInterval,
    StrOptions,
    as_generator,
    check_feature_names_in,
    chunk_rows,
    fit_context,
    restored_on_failure,
    validate_numeric_data,
)

MEDIAN_SAMPLE = 1000  # rows used by the median heuristic


def median_length_scales(X, rng):
    """l_j = median |x_ij - x_kj| over pairs i < k (on at most 1000 rows); a feature whose
    median is 0 gets the mean nonzero difference, or 1.0 if it is constant."""
    if X.shape[0] > MEDIAN_SAMPLE:
        X = X[rng.choice(X.shape[0], MEDIAN_SAMPLE, replace=False)]
    i, k = np.triu_indices(X.shape[0], k=1)
    scales = np.ones(X.shape[1])
    for j in range(X.shape[1]):
        diffs = np.abs(X[i, j] - X[k, j])
        median = np.median(diffs) if diffs.size else 0.0
        if median > 0:
            scales[j] = median
        elif np.any(diffs > 0):
            scales[j] = diffs[diffs > 0].mean()
            warnings.warn(f"feature {j}: median pairwise distance is 0; its length scale is "
                          "the mean nonzero distance.", SkshapleyWarning, stacklevel=3)
        else:
            warnings.warn(f"feature {j} is constant; its length scale is 1.0.",
                          SkshapleyWarning, stacklevel=3)
    return scales


def shapley_weights(n_players):
    """w_s = s! (d - s - 1)! / d! for s = 0..d-1."""
    d = n_players
    return np.array([factorial(s) * factorial(d - s - 1) / factorial(d) for s in range(d)])


class RKHSShapRegressor(TransformerMixin, RegressorMixin, BaseEstimator):
    r"""Kernel ridge regression with closed-form Shapley values and an optional Shapley
    regulariser.

    The model is :math:`f(x) = \sum_i \alpha_i k(x_i, x)` with a product kernel. Its
    interventional Shapley values come from kernel mean embeddings and its observational
    ones from conditional mean embeddings (Chau et al. 2022, Sec. 3, Prop. 3), without
    calling f on imputed rows. With ``shapley_penalty`` > 0 it minimises

    .. math::

        \|y - G\alpha\|^2 + \lambda_f \, \alpha^\top G \alpha
        + \lambda_s \sum_a \sum_i \phi_{x_i, a}^2,

    with :math:`\lambda_f` = ``alpha`` and :math:`\lambda_s` = ``shapley_penalty``, over
    the penalised features a, so the fitted model relies less on them (ISV-REG for
    ``value="interventional"``, OSV-REG for "observational"; Chau et al. 2022, Sec. 4,
    Prop. 7). The penalty sums over training rows: the paper's :math:`\lambda_S` equals
    ``n_samples * shapley_penalty``.

    Parameters
    ----------
    kernel : {"rbf", "laplace", "linear"}, default="rbf"
        Product kernel exp(-(a - b)^2 / (2 l^2)) or exp(-|a - b| / l) per feature, or the
        linear kernel (interventional values only).
    length_scale : float, array (n_features,), "median" or "mll", default="median"
        "median": the median pairwise distance per feature; "mll": maximise the Gaussian
        process marginal likelihood (``sklearn.gaussian_process``).
    alpha : float or "mll", default=1.0
        Ridge penalty lambda_f, as in ``KernelRidge``; "mll" takes the noise-to-signal
        ratio of the GP fit (requires ``length_scale="mll"``).
    shapley_penalty : float, default=0.0
        lambda_s >= 0.
    penalized_features : int, str, list of them or bool mask, optional
        Required when ``shapley_penalty`` > 0.
    value : {"interventional", "observational"}, default="interventional"
        Value function of the regulariser and the default of :meth:`shapley_values`.
    cme_regularization : float or "cv", default=1e-3
        eta > 0 of the conditional mean embedding (penalty n eta). "cv": 5-fold
        cross-validation of the held-out embedding loss over eta in {1e-6, ..., 1},
        summed over the coalitions of size 1 and d - 1 (all proper ones for d <= 3),
        one eigendecomposition per fold and coalition; the choice is
        ``cme_regularization_``.
    max_evals : int, default=2048
        Coalitions per explained row (and per penalised feature in the regulariser):
        exact when 2^d fits, else estimated (regression estimator; Monte Carlo over the
        Shapley distribution of coalitions for the regulariser).
    approximation : None, "nystroem" or "rff", default=None
        Explanations only: replace each coalition's kernel by its Nyström approximation on
        ``n_components`` k-means landmarks of the background, or by ``n_components``
        random Fourier features drawn once for all coalitions ("rff", Rahimi & Recht
        2007) (O(b^3 + n b^2) per coalition instead of O(n^3) for observational values). The
        fit is exact.
    n_components : int, default=100
        Landmarks of ``approximation="nystroem"`` (all background rows if fewer), or
        Fourier features of ``"rff"``.
    background_size : int, optional
        Explain with B random training rows as the embeddings' sample instead of all n
        (faster: O(n B) instead of O(n^2) per coalition; the fit still uses every row).
        phi_0 becomes the mean prediction over those rows.
    fit_intercept : bool, default=False
        Centre y and add its mean back; Shapley values are unchanged.
    random_state : None, int or Generator

    Attributes
    ----------
    X_fit_ : ndarray (n_samples, n_features)
    background_ : ndarray (B, n_features)
        The embeddings' sample (``X_fit_`` unless ``background_size`` is set).
    dual_coef_ : ndarray (n_samples,)
    length_scale_ : ndarray (n_features,)
    alpha_ : float
    intercept_ : float
    expected_value_ : float
        phi_0: the mean prediction over ``background_``.
    penalized_features_ : ndarray of int
    exact_ : bool
        Whether Shapley values are computed by enumeration.
    cme_regularization_ : float
        The eta used (chosen by CV when ``cme_regularization="cv"``).
    cme_cv_losses_ : ndarray (7,) or None
        Held-out CME losses over eta = 1e-6, ..., 1 when chosen by CV.
    landmarks_, fourier_features_ : ndarray or tuple or None
        The Nyström landmarks, or the random Fourier features (W, c).

    Notes
    -----
    Exact interventional values need the mean embedding of every feature subset over
    the background, O(2^d n B) work that does not depend on the explained rows. The
    first such explanation builds this (2^d, n) table and the model keeps it, so later
    explanations cost O(2^d n m) for m rows (at n = 5000, d = 5: about a second once,
    then milliseconds per call).

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.explain import RKHSShapRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); y = X[:, 0] + np.sin(X[:, 1])
    >>> model = RKHSShapRegressor(alpha=0.1).fit(X, y)
    >>> phi = model.shapley_values(X[:2])
    >>> bool(np.allclose(phi.sum(axis=1) + model.expected_value_, model.predict(X[:2])))
    True
    """

    def __init__(self, *, kernel="rbf", length_scale="median", alpha=1.0,
                 shapley_penalty=0.0, penalized_features=None, value="interventional",
                 cme_regularization=1e-3, max_evals=2048, approximation=None,
                 n_components=100, background_size=None, fit_intercept=False,
                 random_state=None):
        self.kernel = kernel
        self.length_scale = length_scale
        self.alpha = alpha
        self.shapley_penalty = shapley_penalty
        self.penalized_features = penalized_features
        self.value = value
        self.cme_regularization = cme_regularization
        self.max_evals = max_evals
        self.approximation = approximation
        self.n_components = n_components
        self.background_size = background_size
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    # Each parameter alone (NumberInterval refuses bools; with an open end at inf it
    # refuses inf and nan too); the combinations are _check_combinations'.
    _parameter_constraints = {
        "kernel": [StrOptions(set(KERNELS))],
        # an array's length and entries are checked against the data at fit
        "length_scale": [NumberInterval(Real, 0, None, closed="neither"), "array-like",
                         StrOptions({"median", "mll"})],
        "alpha": [NumberInterval(Real, 0, None, closed="neither"), StrOptions({"mll"})],
        "shapley_penalty": [NumberInterval(Real, 0, None, closed="left")],
        # indices and names are checked against the data at fit
        "penalized_features": [Integral, str, "array-like", None],
        "value": [StrOptions(set(VALUES))],
        "cme_regularization": [NumberInterval(Real, 0, None, closed="neither"),
                               StrOptions({"cv"})],
        "max_evals": [NumberInterval(Integral, 2, None, closed="left")],
        "approximation": [StrOptions({"nystroem", "rff"}), None],
        "n_components": [NumberInterval(Integral, 1, None, closed="left")],
        "background_size": [NumberInterval(Integral, 1, None, closed="left"), None],
        # a string such as "no" is truthy: it would silently mean True
        "fit_intercept": ["boolean"],
        "random_state": RANDOM_STATE,
    }

    # -- checks ---------------------------------------------------------------------------
    def _check_combinations(self):
        """The parameters that exclude one another (each alone is checked by
        ``_parameter_constraints``)."""
        if self.kernel == "linear" and self.value == "observational":
            raise ValueError("kernel='linear' supports only value='interventional'.")
        if self.alpha == "mll" and not (isinstance(self.length_scale, str)
                                        and self.length_scale == "mll"):
            raise ValueError("alpha='mll' requires length_scale='mll'.")
        if self.approximation is not None and self.kernel == "linear":
            raise ValueError(f"approximation={self.approximation!r} needs a product kernel, "
                             "not 'linear'.")

    def _resolve_penalized(self, d):
        spec = self.penalized_features
        if spec is None:
            if self.shapley_penalty > 0:
                raise ValueError("shapley_penalty > 0 needs penalized_features: the features "
                                 "whose Shapley values are penalised.")
            return np.array([], dtype=np.int64)
        items = np.asarray(spec)
        if items.dtype == bool:
            if items.shape != (d,):
                raise ValueError(f"penalized_features as a mask must have {d} entries; got "
                                 f"shape {items.shape}.")
            return np.flatnonzero(items)
        names = getattr(self, "feature_names_in_", None)
        out = []
        for item in np.atleast_1d(items).tolist():
            if isinstance(item, str):
                if names is None or item not in list(names):
                    raise ValueError(f"penalized_features: unknown feature {item!r}"
                                     + ("" if names is None else f"; known: {list(names)}"))
                out.append(list(names).index(item))
            elif isinstance(item, Integral) and -d <= item < d:
                out.append(int(item) % d)
            else:
                raise ValueError(f"penalized_features: {item!r} is not a feature index in "
                                 f"[0, {d}) or a feature name.")
        return np.unique(np.array(out, dtype=np.int64))

    # -- fitting --------------------------------------------------------------------------
    def _length_scales(self, X, y, rng):
        d = X.shape[1]
        spec = self.length_scale
        # "median", "mll" or a positive number (_parameter_constraints), or an array
        # whose length and entries are checked here
        rule = (f"The 'length_scale' parameter of RKHSShapRegressor must be a finite positive "
                f"number, {d} of them, 'median' or 'mll'; got {spec!r}.")
        if isinstance(spec, str):
            if spec == "median":
                return median_length_scales(X, rng), None
            return self._mll(X, y, rng)
        try:
            scales = np.asarray(spec, dtype=np.float64)
        except (TypeError, ValueError) as err:  # e.g. [1, "a", 2]
            raise ValueError(rule) from err
        if scales.ndim == 0:  # a number, or a 0-d array
            scales = np.full(d, float(scales))
        if scales.shape != (d,) or not np.all(np.isfinite(scales) & (scales > 0)):
            raise ValueError(rule)
        return scales, None

    def _mll(self, X, y, rng):
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

        d = X.shape[1]
        kernel = (ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.ones(d), (1e-3, 1e3))
                  + WhiteKernel(0.1, (1e-6, 1e1)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # bound warnings of the optimiser
            gp = GaussianProcessRegressor(kernel, n_restarts_optimizer=5, normalize_y=True,
                                          random_state=int(rng.integers(2**31))).fit(X, y)
        fitted = gp.kernel_
        signal = fitted.k1.k1.constant_value
        scales = np.broadcast_to(fitted.k1.k2.length_scale, (d,)).astype(float)
        return scales, fitted.k2.noise_level / signal

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the (regularised) kernel ridge model.

        A failed fit leaves the estimator as it was (a fitted model stays fitted on its
        old data).

        Returns
        -------
        self
        """
        # validate_data sets n_features_in_ (and feature_names_in_) before the later
        # checks (penalized_features, length_scale) can fail
        with restored_on_failure(self):
            return self._fit(X, y)

    def _fit(self, X, y):
        self._check_combinations()
        X, y = validate_numeric_data(self, X, y, dtype=np.float64, y_numeric=True)
        n, d = X.shape
        penalized = self._resolve_penalized(d)
        rng = as_generator(self.random_state)
        scales, mll_alpha = (np.ones(d), None) if self.kernel == "linear" else \
            self._length_scales(X, y, rng)
        alpha = mll_alpha if self.alpha == "mll" else float(self.alpha)
        eta, self.cme_cv_losses_ = float(ETA_GRID[0]), None
        if isinstance(self.cme_regularization, str):  # "cv"
            if self.kernel != "linear" and d > 1:
                losses = cme_cv_losses(scaled_differences(X, X, scales, self.kernel),
                                       rng=rng)
                eta, self.cme_cv_losses_ = float(ETA_GRID[np.argmin(losses)]), losses
        else:
            eta = float(self.cme_regularization)
        self.cme_regularization_ = eta
        intercept = float(y.mean()) if self.fit_intercept else 0.0
        target = y - intercept
        gram = product_kernel(X, X, scales, self.kernel)
        if self.shapley_penalty == 0 or penalized.size == 0:
            system = gram + alpha * np.eye(n)
            dual = cho_solve(cho_factor(system, lower=True), target)
        else:
            zetas = self._zetas(X, gram, scales, penalized, rng)
            # Stack [G; sqrt(lambda_f) Lambda^1/2 U'; sqrt(lambda_s) zeta_a'] alpha = [y; 0]
            # and solve by QR: the normal matrix would square cond(G).
            eigenvalues, vectors = eigh(gram)
            root = (np.sqrt(np.clip(eigenvalues, 0, None))[:, None] * vectors.T)
            blocks = [gram, np.sqrt(alpha) * root]
            blocks += [np.sqrt(self.shapley_penalty) * zeta.T for zeta in zetas]
            rhs = np.concatenate([target, np.zeros(n * (len(blocks) - 1))])
            dual = lstsq(np.vstack(blocks), rhs, lapack_driver="gelsd")[0]
        self.X_fit_ = X
        if self.background_size is None or self.background_size >= n:
            self.background_ = X
        else:
            self.background_ = X[np.sort(rng.choice(n, self.background_size, replace=False))]
        self.landmarks_ = None
        self.fourier_features_ = None
        if self.approximation == "rff":
            # Spectral densities of the per-feature kernels: Gaussian for exp(-t^2 / 2l^2),
            # Cauchy for exp(-|t| / l); one draw serves every coalition.
            shape = (self.n_components, d)
            weights = (rng.standard_normal(shape) if self.kernel == "rbf"
                       else rng.standard_cauchy(shape)) / scales
            self.fourier_features_ = (weights, rng.uniform(0, 2 * np.pi, self.n_components))
        if self.approximation == "nystroem":
            if self.n_components >= len(self.background_):
                self.landmarks_ = self.background_
            else:
                from sklearn.cluster import KMeans

                self.landmarks_ = KMeans(self.n_components, n_init=1,
                                         random_state=int(rng.integers(2**31))).fit(
                    self.background_).cluster_centers_
        self.dual_coef_ = dual
        self.length_scale_ = scales
        self.alpha_ = alpha
        self.intercept_ = intercept
        self.penalized_features_ = penalized
        self.exact_ = 2**d <= self.max_evals
        # The interventional game's mean embeddings of all 2^d subsets do not depend on
        # the explained rows: the first exact interventional explanation builds them and
        # later ones reuse them (O(2^d n m) per m rows instead of O(2^d n B)). The
        # holder is created here, filled on demand; its content never changes a result.
        self._embedding_cache = {}
        self.expected_value_ = float(
            product_kernel(self.background_, X, scales, self.kernel).mean(axis=0) @ dual
        ) + intercept
        return self

    def _value_matrix(self, z, X, gram, diffs):
        """The n x n matrix K_S whose column l, weighted by alpha, gives v_{x_l}(S) (Chau
        et al. 2022, Prop. 5)."""
        n = X.shape[0]
        if not z.any():
            return np.repeat(gram.mean(axis=1, keepdims=True), n, axis=1)  # m_D 1'
        if z.all():
            return gram
        if self.kernel == "linear":
            mean = X.mean(axis=0)
            # v_{x_l}(S) = sum_i alpha_i (x_{i,S}.x_{l,S} + x_{i,S^c}.mean_{S^c})
            return X[:, z] @ X[:, z].T + (X[:, ~z] @ mean[~z])[:, None]
        G_S = np.exp(-diffs[z].sum(axis=0))
        G_rest = np.exp(-diffs[~z].sum(axis=0))
        if self.value == "interventional":
            return G_rest.mean(axis=1)[:, None] * G_S
        system = G_S + n * self.cme_regularization_ * np.eye(n)
        system[np.diag_indices(n)] += 1e-10 * np.mean(np.diag(G_S))
        return G_S * (G_rest @ cho_solve(cho_factor(system, lower=True), G_S))

    def _zetas(self, X, gram, scales, penalized, rng):
        """zeta_a = sum_{S not containing a} w_|S| (K_{S+a} - K_S), exactly over all
        coalitions when 2^d fits ``max_evals``, else a Monte Carlo mean over S drawn from
        the Shapley distribution (size uniform, then a uniform subset)."""
        n, d = X.shape
        diffs = None if self.kernel == "linear" else \
            np.stack([0.5 * ((X[:, j, None] - X[None, :, j]) / scales[j]) ** 2
                      if self.kernel == "rbf" else np.abs(X[:, j, None] - X[None, :, j])
                      / scales[j] for j in range(d)])
        zetas = [np.zeros((n, n)) for _ in penalized]
        if 2**d <= self.max_evals:
            weights = shapley_weights(d)
            for z in all_coalitions(d):
                matrix = self._value_matrix(z, X, gram, diffs)
                size = int(z.sum())
                for zeta, a in zip(zetas, penalized, strict=True):
                    if z[a]:
                        zeta += weights[size - 1] * matrix
                    else:
                        zeta -= weights[size] * matrix
            return zetas
        draws = max(1, (self.max_evals - 2) // 2)
        for zeta, a in zip(zetas, penalized, strict=True):
            others = np.delete(np.arange(d), a)
            for _ in range(draws):
                size = int(rng.integers(d))
                z = np.zeros(d, dtype=bool)
                z[rng.choice(others, size, replace=False)] = True
                with_a = z.copy()
                with_a[a] = True
                zeta += (self._value_matrix(with_a, X, gram, diffs)
                         - self._value_matrix(z, X, gram, diffs)) / draws
        return zetas

    # -- prediction and explanation -----------------------------------------------------
    def predict(self, X):
        check_is_fitted(self)
        X = validate_numeric_data(self, X, dtype=np.float64, reset=False)
        # rows in chunks of working_memory: the (n, n_fit) kernel is never formed whole
        out = np.empty(X.shape[0])
        rows = chunk_rows(8.0 * max(self.X_fit_.shape[0], 1))
        for start in range(0, X.shape[0], rows):
            out[start : start + rows] = product_kernel(
                X[start : start + rows], self.X_fit_, self.length_scale_, self.kernel
            ) @ self.dual_coef_
        return out + self.intercept_

    def _result(self, X, value):
        check_is_fitted(self)
        X = validate_numeric_data(self, X, dtype=np.float64, reset=False)
        value = self.value if value is None else value
        table = None
        if (value == "interventional" and self.kernel != "linear"
                and self.approximation is None and self.exact_
                and subset_table_fits(X.shape[1], self.X_fit_.shape[0])):
            cache = getattr(self, "_embedding_cache", {})
            table = cache.get("table")
            if table is None:
                table = cache["table"] = subset_embeddings(
                    self.X_fit_, self.background_, self.length_scale_, self.kernel)
        game = RKHSValueGame(self.X_fit_, self.dual_coef_, X, self.length_scale_,
                             kernel=self.kernel, value=value,
                             cme_regularization=self.cme_regularization_,
                             intercept=self.intercept_, background=self.background_,
                             landmarks=self.landmarks_,
                             fourier_features=self.fourier_features_,
                             subset_embeddings=table)
        result = shapley_values(game, budget=max(self.max_evals, 2),
                                random_state=self.random_state)
        return X, np.asarray(result.values).reshape(X.shape[1], X.shape[0]).T, result

    def shapley_values(self, X, value=None):
        """Shapley values (n_samples, n_features) of the fitted model at ``X``.

        Parameters
        ----------
        X : array-like (n_samples, n_features)
        value : {"interventional", "observational"}, optional
            Defaults to the ``value`` parameter.
        """
        return self._result(X, value)[1]

    def explain(self, X, value=None):
        """Shapley values of ``X`` as an :class:`Explanation` (with standard errors when
        they are estimated rather than enumerated)."""
        X, values, result = self._result(X, value)
        std = np.asarray(result.std_errors).reshape(X.shape[1], X.shape[0]).T
        names = getattr(self, "feature_names_in_", None)
        names = list(names) if names is not None else [f"x{j}" for j in range(X.shape[1])]
        return Explanation(values, np.full(X.shape[0], self.expected_value_), X, names,
                           std_errors=std,
                           n_evaluations=np.full(X.shape[0], result.n_evaluations),
                           n_draws=np.full(X.shape[0], result.n_draws),
                           method=f"rkhs-{value or self.value} ({result.method})")

    def transform(self, X):
        """Same as :meth:`shapley_values`."""
        return self.shapley_values(X)

    def get_feature_names_out(self, input_features=None):
        """``"shapley_<feature>"`` per feature.

        Parameters
        ----------
        input_features : array-like of str, optional
            Checked as in scikit-learn: it must equal ``feature_names_in_`` when that is
            defined, else have ``n_features_in_`` entries; None means ``feature_names_in_``
            or ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : ndarray of str
        """
        check_is_fitted(self)
        names = check_feature_names_in(self, input_features)
        return np.array([f"shapley_{name}" for name in names], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
