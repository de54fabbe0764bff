"""
Error bars and early stopping with ``tol``
==========================================

Sampling estimates come with a standard error per value. With ``tol``, each row stops
as soon as the estimated 95 % quantile of its overall error ``||phi_hat - phi||_2``
falls below ``tol``: rows where the model is nearly additive stop early, rows with
strong interactions spend up to ``max_evals``. This example explains 40 rows of a
gradient-boosting model that way, checks the error bars against exact values (10
features: all 1024 coalitions can be enumerated), and shows how one row's estimate
settles.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor

from skshapley import ShapleyExplainer
from skshapley.approximators import shapley_values
from skshapley.games import MarginalGame
from skshapley.plotting import convergence

X, y = load_diabetes(return_X_y=True)
model = GradientBoostingRegressor(random_state=0).fit(X, y)
rows = X[:40]

# %%
# Up to 2 + 9 * 2 * 55 = 992 evaluations per row (55 antithetic pairs of orderings),
# stopping once the error quantile is below 1 (predictions range over about 250). A budget
# of 2^10 = 1024 or more would enumerate every coalition, exactly, instead of sampling.
explainer = ShapleyExplainer(model, prefit=True, method="permutation",
                             sampler="antithetic", max_evals=992, tol=1.0,
                             background=50, random_state=0).fit(X)
explanation = explainer.explain(rows)
spent = explanation.n_evaluations
print(f"evaluations per row: min {spent.min()}, median {int(np.median(spent))}, "
      f"max {spent.max()} (budget {explainer.max_evals_}; exact would take 1024)")

# %%
# Exact values of the same game (the same background) tell how far each early-stopped
# value is from the truth: about 95 % of them should lie inside their 95 % error bars,
# and each row's overall error should be below ``tol`` about 95 % of the time.
exact = ShapleyExplainer(model, prefit=True, method="exact", background=50,
                         random_state=0).fit(X)
truth = exact.transform(rows)
error = explanation.values - truth
inside = np.abs(error) <= explanation.error_bars()  # t intervals on each row's draws
row_error = np.linalg.norm(error, axis=1)
print(f"values inside their 95 % error bars: {inside.mean():.1%}")
print(f"rows with overall error below tol: {(row_error < 1.0).mean():.1%} "
      f"(largest {row_error.max():.2f})")

# %%
# One row in detail: the functional core, :func:`skshapley.approximators.shapley_values`,
# keeps the estimate and its standard errors at every check of the stopping rule (here
# every 2 pairs of orderings), and :func:`skshapley.plotting.convergence` draws them
# against the evaluations spent.
names = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
game = MarginalGame(model, rows[0], exact.background_)
result = shapley_values(game, method="permutation", budget=992, tol=0.5,
                        sampler="antithetic", check_interval=2, random_state=0)
print(f"row 0 stopped after {result.n_evaluations} evaluations, "
      f"converged={result.converged}")
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
convergence(result, ax=axes[0], max_display=4, feature_names=names)
axes[0].set_title("row 0: running estimate ± 1.96 SE", fontsize="medium")
convergence(result, kind="error", ax=axes[1], label="row 0")
axes[1].axhline(0.5, color="black", linestyle="--", linewidth=0.8)
axes[1].set_title("estimated error quantile, and tol = 0.5", fontsize="medium")
fig.tight_layout()
plt.show()
