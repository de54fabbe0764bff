"""
Groups, hierarchies and global importance
=========================================

Three questions about one model, answered with the same machinery:

1. **Groups.** The model reads one-hot columns built by a ``ColumnTransformer``; we want
   one value per original column. ``groups=`` makes each original column's one-hot
   columns one player, and TreeSHAP stays exact on them (no model call).
2. **Hierarchies.** Two columns nearly copy each other (floor area and number of
   rooms). Owen values over a hierarchy (``groups="correlation"``) let the pair share
   its credit first, as shap's PartitionExplainer does.
3. **Global importance.** How much of the model's R² each original column carries:
   :func:`~skshapley.inspection.shapley_importance` (SAGE) with 95 % intervals.

The data are synthetic and seeded: house prices from the floor area, the number of rooms
(which follows the area), the age, a district (5 names), the heating type (3 names), the
distance to the centre, the floor, a garden, and three columns the price does not
depend on.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.preprocessing import OneHotEncoder

from skshapley import ShapleyExplainer
from skshapley.inspection import shapley_importance
from skshapley.plotting import bar, importance_bar

rng = np.random.default_rng(0)
n = 2000
districts = ["centre", "harbour", "hills", "mill", "station"]
district_premium = pd.Series([0.0, 40.0, 80.0, -30.0, 10.0], index=districts)
heating_premium = pd.Series([0.0, 15.0, -10.0], index=["gas", "heat pump", "oil"])
area = rng.gamma(6.0, 15.0, size=n)
X = pd.DataFrame({
    "area": area,
    "rooms": np.round(area / 25.0 + rng.normal(scale=0.4, size=n)),  # follows the area
    "age": rng.uniform(0, 80, size=n),
    "district": rng.choice(districts, size=n),
    "heating": rng.choice(heating_premium.index, size=n),
    "distance": rng.uniform(0, 15, size=n),
    "floor": rng.integers(0, 8, size=n).astype(float),
    "garden": rng.integers(0, 2, size=n).astype(float),
    **{f"noise{j}": rng.normal(size=n) for j in range(3)},
})
y = (1.5 * X["area"] + 12.0 * X["rooms"] - 0.8 * X["age"] - 3.0 * X["distance"]
     + 1.0 * X["floor"] + 8.0 * X["garden"]
     + district_premium[X["district"]].to_numpy()
     + heating_premium[X["heating"]].to_numpy() + rng.normal(scale=10.0, size=n))

# %%
# One-hot groups
# --------------
# The model is fitted on the encoded matrix (8 one-hot columns and 9 others), as
# when the encoding is done once for several models. Its columns are named
# ``district_harbour``, ``heating_oil``, ...: each original column's group is the
# encoded columns that came from it.
encoder = ColumnTransformer(
    [("onehot", OneHotEncoder(sparse_output=False), ["district", "heating"])],
    remainder="passthrough", verbose_feature_names_out=False,
).set_output(transform="pandas")
X_encoded = encoder.fit_transform(X)
model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X_encoded, y)

groups = {column: [name for name in X_encoded.columns
                   if name == column or name.startswith(column + "_")]
          for column in X.columns}
print({name: len(columns) for name, columns in groups.items()})

explainer = ShapleyExplainer(model, prefit=True, groups=groups, random_state=0)
explanation = explainer.fit(X_encoded).explain(X_encoded.iloc[:300])
assert len(groups) == 11
print("method:", explainer.method_, "| values per row:", explanation.values.shape[1])
# exact: each row's group values add up to its prediction
gap = explanation.values.sum(axis=1) + explanation.base_values \
    - model.predict(X_encoded.iloc[:300])
print(f"largest efficiency gap: {np.abs(gap).max():.1e}")

# %%
# A group's value is the Shapley value of the game whose players are the groups, not the
# sum of its one-hot columns' values (they agree here only because the model has no
# interactions within a group that the sum would split differently). shap users can take
# the grouped values along: ``explanation.to_shap()`` is a ``shap.Explanation`` with
# the group names as features, for ``shap.plots.beeswarm`` and the rest.
try:
    import shap
except ImportError:  # shap is optional
    shap = None
if shap is not None:
    converted = explanation.to_shap()
    print("shap.Explanation with features", converted.feature_names)

fig, ax = plt.subplots(figsize=(6, 3))
bar(explanation, ax=ax)
ax.set_title("mean |value| per original column (groups of one-hot columns)")
fig.tight_layout()

# %%
# A correlated pair: Shapley values and Owen values
# -------------------------------------------------
# ``area`` and ``rooms`` carry much the same information. With ``groups="correlation"``
# the explainer clusters the columns by |correlation| and computes Owen values: the
# orderings keep area and rooms together, so the pair enters as one unit and then shares
# its credit. On a term of two columns both rules split the credit in halves; they
# differ on terms of three or more columns across clusters. Here the price also has a
# term in area x rooms x age: Shapley values give each of the three a third of it, Owen
# values give age half (against the pair as a unit) and area and rooms a quarter each.
# With 3 columns both are exact (``method="auto"`` enumerates).
numeric = ["area", "rooms", "age"]
centred = X[numeric] - X[numeric].mean()
y_numeric = y + 0.02 * centred["area"] * centred["rooms"] * centred["age"]
numeric_model = HistGradientBoostingRegressor(max_iter=100, random_state=0)
numeric_model.fit(X[numeric], y_numeric)
shapley = ShapleyExplainer(numeric_model, prefit=True, background=50, random_state=0,
                           method="exact").fit(X[numeric])
owen = ShapleyExplainer(numeric_model, prefit=True, background=50, random_state=0,
                        groups="correlation").fit(X[numeric])
print("hierarchy:", owen.hierarchy_)
rows = X[numeric].iloc[:200]
by_shapley, by_owen = shapley.explain(rows), owen.explain(rows)
for name, a, b in zip(numeric, by_shapley.abs.mean(0).values, by_owen.abs.mean(0).values,
                      strict=True):
    print(f"{name:>6}: mean |Shapley| {a:6.2f}   mean |Owen| {b:6.2f}")

# %%
# Global importance with intervals
# --------------------------------
# The Shapley values of the model's R² on held-out rows, per original column (the same
# groups), with 95 % intervals. No refits: absent columns are averaged over background
# rows. The values add up to the R² of the model less that of the mean prediction. With
# 11 groups the orderings are sampled (20 antithetic pairs here), hence the intervals.
# They measure the sampling of orderings only: the values are those of these 200 rows
# and this background. The small values of the floor, the garden and the noise columns
# (|value| < 0.005, some below 0) are what the model's use of them does on these rows,
# not sampling error; a larger held-out set or ``cv`` in ``TopKShapleySelector`` is the
# tool for that question.
importance = shapley_importance(model, X_encoded.iloc[1800:], y.iloc[1800:],
                                groups=groups, background=20, max_evals=2 + 40 * 10,
                                random_state=0)
for name, mean, low, high in zip(importance.feature_names, importance.importances_mean,
                                 importance.ci_low, importance.ci_high, strict=True):
    print(f"{name:>8}: {mean:7.4f}  [{low:7.4f}, {high:7.4f}]")
fig, ax = plt.subplots(figsize=(6, 3))
importance_bar(importance, ax=ax)
ax.set_title("Shapley importance of R² (SAGE), 95 % intervals")
fig.tight_layout()
plt.show()
