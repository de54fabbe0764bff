"""The closed-form model of ``bench_width.py``, in a module of its own: the OddSHAP runner
(``_oddshap_runner.py``, another interpreter without skshapley) unpickles it too."""

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin


class ProductModel(RegressorMixin, BaseEstimator):
    """f(x) = x @ coef + sum over terms T of c_T prod_{i in T} x_i (already fitted).

    ``terms`` is a list of (indices (n_terms, k), coefficients (n_terms,)), one entry per
    order k.
    """

    def __init__(self, coef, terms):
        self.coef, self.terms = coef, terms
        self.fitted_ = True  # for check_is_fitted under prefit=True

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        X = np.asarray(X, dtype=np.float64)
        out = X @ self.coef
        # Blocks of 256 rows keep the gathered columns in cache: 3.5x faster than whole
        # arrays at d = 1000 (measured on 20000 rows).
        for start in range(0, X.shape[0], 256):
            block = X[start : start + 256]
            for indices, coefficients in self.terms:
                product = block[:, indices[:, 0]]
                for position in range(1, indices.shape[1]):
                    product *= block[:, indices[:, position]]
                out[start : start + 256] += product @ coefficients
        return out
