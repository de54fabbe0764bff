"""Value functions of a kernel ridge model in closed form (RKHS-SHAP, Chau et al. 2022,
Sec. 3, Prop. 3): interventional values by kernel mean embeddings, observational values by
conditional mean embeddings.

For a product kernel k = prod_j k_j and f = sum_i alpha_i k(x_i, .):

- interventional: v(S) = (alpha * m_{S^c})' K_S with m_{S^c} = G_{S^c} 1 / n, which is
  exactly (1/n) sum_j f(x'_S, x_{j,S^c}), the marginal game with the training rows as
  background, features averaged before f is evaluated;
- observational: v(S) = sum_i alpha_i K_S[i, l] [G_{S^c} beta_l]_i with
  beta_l = (G_S + n eta I)^{-1} K_S[:, l], i.e. a beta-weighted imputation; v(∅) and v(N)
  are set explicitly to phi_0 and f(x') (the authors' code returns the full Gram matrix
  for the empty coalition).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.spatial.distance import cdist

from skshapley._config import get_config
from skshapley.backends import get_backend
from skshapley.games._base import Game
from skshapley.utils import chunk_rows

KERNELS = ("rbf", "laplace", "linear")
VALUES = ("interventional", "observational")


def scaled_differences(A, B, length_scale, kernel):
    """(d, len(A), len(B)) per-feature exponents: (a - b)^2 / (2 l^2) for "rbf",
    |a - b| / l for "laplace"; k_S = exp(-sum_{j in S} of them)."""
    diff = (A.T[:, :, None] - B.T[:, None, :]) / np.asarray(length_scale)[:, None, None]
    return 0.5 * diff**2 if kernel == "rbf" else np.abs(diff)


def product_kernel(A, B, length_scale, kernel):
    """k(A, B) for the product kernels, or A B' for "linear".

    Distances of the length-scaled rows by ``scipy.spatial.distance.cdist`` (exact per
    pair, no (d, len(A), len(B)) temporary), in row chunks of ``working_memory``.
    """
    if kernel == "linear":
        return A @ B.T
    scale = np.asarray(length_scale, dtype=np.float64)
    A, B = np.asarray(A, np.float64) / scale, np.asarray(B, np.float64) / scale
    out = np.empty((A.shape[0], B.shape[0]))
    metric = "sqeuclidean" if kernel == "rbf" else "cityblock"
    factor = 0.5 if kernel == "rbf" else 1.0
    rows = chunk_rows(8.0 * max(B.shape[0], 1))
    for start in range(0, A.shape[0], rows):
        block = cdist(A[start : start + rows], B, metric)
        np.exp(-factor * block, out=out[start : start + rows])
    return out


def subset_embeddings(training, background, length_scale, kernel="rbf"):
    """Kernel mean embeddings m_T = G_T 1 / b of every feature subset T, as a (2^d, n)
    table indexed by T's bitmask (row 0, the empty subset, is all ones).

    m_T[i] = mean over background rows l of prod_{j in T} k_j(x_ij, x_lj), by the
    backend kernel ``rkhs_subset_embeddings`` (each subset's product from its parent's,
    so 2^d multiplications per pair instead of an exp and a d-term sum per subset). The
    table does not depend on the explained rows, so a fitted model keeps it after its
    first interventional explanation and the game then costs O(2^d n m) per m rows
    instead of O(2^d n b).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(10, 3))
    >>> table = subset_embeddings(X, X, np.ones(3))
    >>> table.shape, bool(np.allclose(table[0], 1.0))
    ((8, 10), True)
    """
    training = np.asarray(training, dtype=np.float64)
    background = np.asarray(background, dtype=np.float64)
    n, d = training.shape
    out = np.empty((2**d, n))
    scales = np.broadcast_to(np.asarray(length_scale, dtype=np.float64), (d,))
    return get_backend().rkhs_subset_embeddings(training, background, scales,
                                                kernel == "laplace", out)


def subset_table_fits(n_features, n_rows):
    """Whether a (2^d, n) float64 subset table fits ``working_memory`` (and d <= 20)."""
    return n_features <= 20 and 8.0 * 2**n_features * n_rows <= \
        2**20 * get_config()["working_memory"]


class RKHSValueGame(Game):
    """The RKHS-SHAP game of a kernel ridge model at the rows ``x`` (one output each).

    Parameters
    ----------
    training : float64 (n, d)
        The rows the model was fitted on (the x_i of f).
    dual_coef : float64 (n,)
        alpha of f = sum_i alpha_i k(x_i, .).
    x : float64 (m, d)
        The rows to explain; the game has m outputs.
    length_scale : float64 (d,)
    kernel : {"rbf", "laplace", "linear"}
    value : {"interventional", "observational"}
    cme_regularization : float
        eta > 0 of the conditional mean embedding's ridge penalty n eta.
    intercept : float
        Added to f (``fit_intercept``); it cancels in every Shapley value.
    background : float64 (B, d), optional
        The sample of the (conditional) mean embeddings; default the training rows.
        A subsample makes the game cheaper and changes phi_0 to its mean prediction.
    landmarks : float64 (b, d), optional
        Nyström landmarks: every proper coalition's kernel is replaced by
        its rank-b Nyström approximation on them, which turns the O(n^3) conditional
        mean embedding into O(b^3 + n b^2); v(∅) and v(N) stay exact.
    fourier_features : tuple (W, c), optional
        Random Fourier features (Rahimi & Recht 2007): W (b, d) drawn from the kernel's spectral
        density, c (b,) uniform on [0, 2 pi); phi_S(x) = sqrt(2 / b) cos(W_S x_S + c)
        approximates k_S for every coalition at once, used in the formulas of the
        Nyström case. Not with ``landmarks``.
    subset_embeddings : float64 (2^d, n), optional
        The table of :func:`subset_embeddings` for ``training`` and ``background``
        (interventional product-kernel games without an approximation): given, the game
        never forms the (d, n, b) training x background exponents.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.games import RKHSValueGame
    >>> X = np.random.default_rng(0).normal(size=(20, 3))
    >>> game = RKHSValueGame(X, np.ones(20), X[:2], np.ones(3))
    >>> game.values(np.array([[True, True, True]])).shape
    (1, 2)
    """

    def __init__(self, training, dual_coef, x, length_scale, *, kernel="rbf",
                 value="interventional", cme_regularization=1e-3, intercept=0.0,
                 background=None, landmarks=None, fourier_features=None,
                 subset_embeddings=None):
        training = np.asarray(training, dtype=np.float64)
        super().__init__(training.shape[1])
        if kernel not in KERNELS:
            raise ValueError(f"The 'kernel' parameter must be one of {list(KERNELS)}; "
                             f"got {kernel!r}.")
        if value not in VALUES:
            raise ValueError(f"The 'value' parameter must be one of {list(VALUES)}; "
                             f"got {value!r}.")
        if kernel == "linear" and value == "observational":
            raise ValueError("kernel='linear' supports only value='interventional': the "
                             "conditional mean embedding needs a product kernel.")
        background = training if background is None else np.asarray(background, np.float64)
        if landmarks is not None and kernel == "linear":
            raise ValueError("landmarks (Nyström) need a product kernel, not 'linear'.")
        self.landmarks = None if landmarks is None else np.asarray(landmarks, np.float64)
        if fourier_features is not None:
            if kernel == "linear" or landmarks is not None:
                raise ValueError("fourier_features need a product kernel and no landmarks.")
            weights, offsets = fourier_features
            fourier_features = (np.asarray(weights, np.float64),
                                np.asarray(offsets, np.float64))
        self.fourier_features = fourier_features
        self.training, self.background = training, background
        self.alpha = np.asarray(dual_coef, dtype=np.float64)
        self.x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        self.length_scale = np.broadcast_to(np.asarray(length_scale, dtype=np.float64),
                                            (self.n_players,))
        self.kernel, self.value = kernel, value
        self.eta = float(cme_regularization)
        self.intercept = float(intercept)
        # the closed-form interventional game, the one the subset table serves
        self._exact_interventional = (kernel != "linear" and value == "interventional"
                                      and landmarks is None and fourier_features is None)
        self._embedding_table = None
        if subset_embeddings is not None and self._exact_interventional:
            table = np.asarray(subset_embeddings, dtype=np.float64)
            if table.shape != (2**self.n_players, training.shape[0]):
                raise ValueError(f"subset_embeddings must have shape "
                                 f"({2**self.n_players}, {training.shape[0]}); got "
                                 f"{table.shape}.")
            self._embedding_table = table
        if kernel == "linear":
            self._mean = background.mean(axis=0)
        else:
            scales = self.length_scale
            # Per-feature exponents: training x background for the embeddings (unless the
            # subset table is given), training x queries for K_S; the CME also needs
            # background x background and x queries.
            if self._embedding_table is None:
                self._tb = scaled_differences(training, background, scales, kernel)
            self._test = scaled_differences(training, self.x, scales, kernel)
            if value == "observational":
                self._bb = scaled_differences(background, background, scales, kernel)
                self._bq = scaled_differences(background, self.x, scales, kernel)
        if kernel == "linear":
            empty_kernel = product_kernel(training, background, self.length_scale, kernel)
            empty_embedding = empty_kernel.mean(axis=1)
        elif self._embedding_table is not None:
            empty_embedding = self._embedding_table[-1]  # m_N: the full subset
        else:
            empty_embedding = np.exp(-self._tb.sum(axis=0)).mean(axis=1)  # reuse exponents
        self.empty_ = float(self.alpha @ empty_embedding) + self.intercept
        self.full_ = (self.alpha @ product_kernel(training, self.x, self.length_scale,
                                                  kernel)) + self.intercept

    def _values(self, coalitions):
        if self.kernel == "linear":
            # f(x'_S, mean of X_{S^c}) = sum_j w_j (x'_j on S, mean elsewhere): additive.
            w = self.training.T @ self.alpha
            mixed = np.where(coalitions[:, None, :], self.x[None, :, :], self._mean)
            return mixed @ w + self.intercept
        m = self.x.shape[0]
        out = np.empty((coalitions.shape[0], m))
        d = self.n_players
        n, b = self.training.shape[0], self.background.shape[0]
        table = None
        if self._exact_interventional:
            table = self._embeddings_by_subset(coalitions.shape[0])
        per = chunk_rows(8.0 * n * (m if table is not None else b + m) * 2)
        for start in range(0, coalitions.shape[0], per):
            Z = coalitions[start : start + per].astype(np.float64)
            if self.landmarks is not None or self.fourier_features is not None:
                for c, z in enumerate(coalitions[start : start + per]):
                    out[start + c] = self._nystroem(z)
            elif self.value == "interventional":
                K_S = np.exp(-np.tensordot(Z, self._test, axes=(1, 0)))  # (c, n, m)
                if table is not None:
                    rest = (~coalitions[start : start + per]) @ (1 << np.arange(d))
                    m_rest = table[rest]
                else:
                    m_rest = np.exp(-np.tensordot(1.0 - Z, self._tb,
                                                  axes=(1, 0))).mean(axis=2)
                out[start : start + Z.shape[0]] = np.einsum(
                    "ci,cim->cm", self.alpha[None, :] * m_rest, K_S)
            else:
                for c, z in enumerate(coalitions[start : start + per]):
                    out[start + c] = self._observational(z)
        out += self.intercept
        # v(∅) and v(N) are set explicitly: the formulas' values there are not phi_0 and
        # f(x') for the observational game, and using predict's numbers keeps efficiency
        # exact against predict.
        sizes = coalitions.sum(axis=1)
        out[sizes == 0] = self.empty_
        out[sizes == d] = self.full_
        return out

    def _embeddings_by_subset(self, n_requested):
        """The table of :func:`subset_embeddings`, or None when it does not pay: built
        here only when most of the 2^d coalitions are requested (exact enumeration),
        where it does 5-10x less work than the per-coalition formula."""
        if self._embedding_table is not None:
            return self._embedding_table
        d, n = self.n_players, self.training.shape[0]
        if 2**d > 4 * n_requested or not subset_table_fits(d, n):
            return None
        self._embedding_table = subset_embeddings(self.training, self.background,
                                                  self.length_scale, self.kernel)
        return self._embedding_table

    def _features(self, z, rows):
        """Nyström features Phi_S(rows) = K_S(rows, L) C_S^{-T}, K_S(L, L) + eps I = C C',
        or random Fourier features sqrt(2 / b) cos(rows_S W_S' + c)."""
        if self.fourier_features is not None:
            weights, offsets = self.fourier_features
            return np.sqrt(2.0 / len(offsets)) * np.cos(rows[:, z] @ weights[:, z].T + offsets)
        scales = self.length_scale[z]
        on_landmarks = product_kernel(self.landmarks[:, z], self.landmarks[:, z], scales,
                                      self.kernel)
        on_landmarks[np.diag_indices_from(on_landmarks)] += 1e-8 * np.mean(
            np.diag(on_landmarks))
        factor = np.linalg.cholesky(on_landmarks)
        cross = product_kernel(rows[:, z], self.landmarks[:, z], scales, self.kernel)
        return np.linalg.solve(factor, cross.T).T

    def _nystroem(self, z):
        if not z.any() or z.all():
            return np.zeros(self.x.shape[0])  # replaced by the caller
        b = self.background.shape[0]
        phi_train, phi_query = self._features(z, self.training), self._features(z, self.x)
        rest_train = self._features(~z, self.training)
        rest_background = self._features(~z, self.background)
        if self.value == "interventional":
            mean_rest = rest_train @ rest_background.mean(axis=0)  # (n,)
            return phi_query @ (phi_train.T @ (self.alpha * mean_rest))
        phi_background = self._features(z, self.background)
        if phi_background.shape[1] > b:
            # More features than background rows (typical of random Fourier features):
            # push-through identity Phi_B (Phi_B' Phi_B + b eta I)^{-1} = (Phi_B Phi_B' +
            # b eta I)^{-1} Phi_B, so only (b, b) systems are formed, never (b_L, b_L).
            system = phi_background @ phi_background.T
            system[np.diag_indices_from(system)] += b * self.eta
            beta = np.linalg.solve(system, phi_background @ phi_query.T)  # (b, m)
            weighted = (self.alpha[:, None] * (rest_train @ rest_background.T)) @ beta
            return np.einsum("im,im->m", phi_train @ phi_query.T, weighted)
        P = rest_train @ (rest_background.T @ phi_background)  # (n, b_L)
        gram = phi_background.T @ phi_background
        gram[np.diag_indices_from(gram)] += b * self.eta
        M = phi_train.T @ (self.alpha[:, None] * P)
        right = np.linalg.solve(gram, phi_query.T)  # H phi'_l, columns
        return np.einsum("lk,kj,jl->l", phi_query, M, right)

    def _observational(self, z):
        if not z.any() or z.all():
            return np.zeros(self.x.shape[0])  # replaced by the caller
        b = self._bb.shape[1]
        G_S = np.exp(-self._bb[z].sum(axis=0))  # (b, b) on the background
        G_rest = np.exp(-self._tb[~z].sum(axis=0))  # (n, b)
        K_S = np.exp(-self._test[z].sum(axis=0))  # (n, m)
        system = G_S + b * self.eta * np.eye(b)
        # A jitter of 1e-10 mean(diag) keeps the Cholesky factorisation stable when
        # b eta is tiny.
        system[np.diag_indices(b)] += 1e-10 * np.mean(np.diag(G_S))
        beta = cho_solve(cho_factor(system, lower=True),
                         np.exp(-self._bq[z].sum(axis=0)))  # (b, m)
        return np.einsum("i,im,im->m", self.alpha, K_S, G_rest @ beta)
