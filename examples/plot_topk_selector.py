"""
Choose the k most important features inside GridSearchCV
=========================================================

``TopKShapleySelector`` ranks the columns by their Shapley value in a global game and
keeps the top k. For ``LinearRegression`` and ``Ridge`` the game is the validation R²
of the model refit on each subset of columns, and its Shapley values (LS-SPA) split the
R² of all the columns among them, exactly and without refits: a column's value is the
share of R² it earns, in R² units whatever the column's units.

``SelectFromModel`` ranks by the fitted model's own ``coef_`` (or a forest's
``feature_importances_``). A coefficient measures the change in the prediction per
*unit* of its column, with the other columns held fixed. Here are two ways that
misleads, planted in seeded synthetic data of 10 columns:

* **units.** x0-x4 carry the signal (effects 1.0, 0.8, 0.7, 0.6 and 0.5 per standard
  deviation) and x7-x9 are noise, but each column is recorded in its own unit (from
  0.01 to 1000 per standard deviation). A column in small units gets a large
  coefficient: noise in x7 and x9 outranks the signal in x0 and x3.
* **cancelling pair.** x5 and x6 read almost the same quantity (correlation 0.97), and
  the target depends on their small difference, 1.5 (x5 - x6). Their coefficients are
  the largest even on standardised columns, yet together they explain less than x4
  does alone (the difference has a variance of 0.14, against x4's 0.25).

We compare three selectors, each tuned over k by ``GridSearchCV`` in front of the same
``LinearRegression``: Shapley values, raw coefficients, and coefficients of the
standardised columns (the usual fix for units).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.feature_selection import SelectFromModel
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from skshapley import TopKShapleySelector
from skshapley.plotting import topk

rng = np.random.default_rng(0)
n = 1000
Z = rng.normal(size=(n, 10))  # standardised columns
Z[:, 6] = 0.97 * Z[:, 5] + np.sqrt(1 - 0.97**2) * Z[:, 6]  # x6 reads nearly x5
effects = np.array([1.0, 0.8, 0.7, 0.6, 0.5, 1.5, -1.5, 0.0, 0.0, 0.0])
y = Z @ effects + rng.normal(size=n)
units = np.array([100.0, 0.1, 10.0, 1000.0, 1.0, 1.0, 1.0, 0.01, 0.1, 0.01])
X = Z * units  # what was recorded
names = [f"x{j}" for j in range(10)]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

# One search per selector, over the same k and the same 5 folds. The Shapley values of a
# linear model's R² need no refits (LS-SPA enumerates the 2^10 subsets' least squares),
# so all 35 fits of each search take well under a second.
grid = [1, 2, 3, 4, 5, 6, 7]
selectors = {
    "Shapley value of R² (TopKShapleySelector)":
        ("k", TopKShapleySelector(LinearRegression(), random_state=0)),
    "|coef| (SelectFromModel)":
        ("max_features", SelectFromModel(LinearRegression(), threshold=-np.inf)),
    "|coef| of standardised columns (SelectFromModel)":
        ("max_features", SelectFromModel(
            make_pipeline(StandardScaler(), LinearRegression()), threshold=-np.inf,
            importance_getter="named_steps.linearregression.coef_")),
}
searches = {}
for label, (parameter, selector) in selectors.items():
    pipeline = Pipeline([("select", selector), ("model", LinearRegression())])
    searches[label] = GridSearchCV(pipeline, {f"select__{parameter}": grid}, cv=5)
    searches[label].fit(X_train, y_train)

for label, search in searches.items():
    chosen = np.flatnonzero(search.best_estimator_["select"].get_support())
    print(f"{label}:\n  CV R² by k = {np.round(search.cv_results_['mean_test_score'], 2)}; "
          f"best k = {len(chosen)}, columns {[names[j] for j in chosen]}, "
          f"test R² = {search.score(X_test, y_test):.3f}")

# %%
# Shapley values pick x0, x1, x2, ... in order of the R² each earns, whatever its unit,
# and add the pair x5, x6 last. Raw coefficients start with the columns in the smallest
# units, noise included; standardised coefficients start with the pair, which is worth
# little on its own. Each selector's best k is 7 (CV R² still grows there), and at k = 7
# the standardised coefficients and the Shapley values keep the same seven columns: the
# pair's difference does earn its place once the five signal columns are in.
#
# Where neither trap is set (columns of one scale, no correlated columns whose effects
# cancel), coefficients and Shapley values rank alike, and ``SelectFromModel`` is the
# cheaper tool. And Shapley values share credit among correlated columns, so the top k
# by Shapley value is not the best subset of size k: two redundant columns are both kept
# or both dropped (see :doc:`../user_guide/topk`).
fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
for (label, search), marker in zip(searches.items(), "os^", strict=True):
    axes[0].plot(grid, search.cv_results_["mean_test_score"], marker=marker, label=label)
axes[0].set_xlabel("k (columns kept)")
axes[0].set_ylabel("cross-validated R²")
axes[0].legend(fontsize="small", loc="lower right")
axes[0].set_title("the same LinearRegression after each selection", fontsize="medium")

# %%
# The Shapley values behind the selection at k = 3, refit on the whole training split:
# LS-SPA enumerates every subset here, so they are exact (no interval) and the choice is
# certified. They are shares of the validation R², and sum to it.
best = TopKShapleySelector(LinearRegression(), k=3, random_state=0).fit(X_train, y_train)
print(f"k = 3: method {best.method_}, certified: {best.converged_}, values sum to "
      f"{best.shapley_values_.sum():.3f} (validation R² of all 10 columns)")
topk(best, feature_names=names, ax=axes[1])
fig.tight_layout()
plt.show()
