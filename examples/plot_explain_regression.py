"""
Explain a gradient-boosting regressor, with error bars
=======================================================

Fit a model on scikit-learn's diabetes data, explain 30 rows exactly and with a smaller
sampling budget, and compare: the sampled values carry standard errors, and
efficiency (base value + sum of the values = prediction) holds for both.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor

from skshapley import ShapleyExplainer

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = GradientBoostingRegressor(random_state=0).fit(X, y)

# All 2**10 coalitions per row: exact values.
exact = ShapleyExplainer(model, prefit=True, method="exact", random_state=0).fit(X)
exact_explanation = exact.explain(X.iloc[:30])

# 2 + 9 * 2 * 11 = 200 coalition evaluations per row: antithetic permutation sampling.
sampled = ShapleyExplainer(model, prefit=True, method="permutation", max_evals=200,
                           random_state=0).fit(X)
explanation = sampled.explain(X.iloc[:30])

error = explanation.values - exact_explanation.values
inside = np.abs(error) <= 1.96 * explanation.std_errors
print(f"evaluations per row: {explanation.n_evaluations[0]} (exact: 1024)")
print(f"RMSE against exact values: {np.sqrt(np.mean(error**2)):.3f}")
print(f"share of exact values inside the 95% error bars: {inside.mean():.2f}")
print("efficiency gap:", np.abs(explanation.predictions - model.predict(X.iloc[:30])).max())

fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
explanation.plot.bar(ax=axes[0])
axes[0].set_title("200 evaluations per row", loc="left")
exact_explanation.plot.bar(ax=axes[1])
axes[1].set_title("exact (1024 evaluations per row)", loc="left")
fig.tight_layout()
plt.show()
