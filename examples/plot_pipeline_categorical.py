"""
Explain a pipeline with categorical features, in the original feature space
===========================================================================

A model usually sees its data through preprocessing: here one-hot encoding of two
categorical columns and scaling of the numeric ones. Explaining the final estimator
would give one value per one-hot column (``district_harbour``, ``heating_gas``, ...),
which no one asked about. Put the whole ``Pipeline`` in
:class:`~skshapley.ShapleyExplainer` instead: the players are then the original columns,
and a categorical feature gets one Shapley value, whatever the number of its levels.

The data are synthetic and seeded: house prices that depend on floor area, age, a
district (5 names) and the heating type (3 names), the last two as text.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skshapley import ShapleyExplainer

rng = np.random.default_rng(0)
n = 1500
districts = ["centre", "harbour", "hills", "mill", "station"]
district_premium = pd.Series([0.0, 40.0, 80.0, -30.0, 10.0], index=districts)
heating_premium = pd.Series([0.0, 15.0, -10.0], index=["gas", "heat pump", "oil"])
X = pd.DataFrame({
    "area": rng.gamma(6.0, 15.0, size=n),
    "age": rng.uniform(0, 80, size=n),
    "district": rng.choice(districts, size=n),
    "heating": rng.choice(heating_premium.index, size=n),
})
y = (2.0 * X["area"] - 0.8 * X["age"] + district_premium[X["district"]].to_numpy()
     + heating_premium[X["heating"]].to_numpy() + rng.normal(scale=10.0, size=n))

# %%
# The pipeline one-hot encodes the text columns and scales the numeric ones. The
# explainer masks features in one numeric array, so it numbers each text column's values
# (``explainer.codec_``) and hands the model the DataFrame those numbers stand for: the
# pipeline sees text, as it did in ``fit``.
preprocess = ColumnTransformer([
    ("categorical", OneHotEncoder(handle_unknown="ignore"), ["district", "heating"]),
    ("numeric", StandardScaler(), ["area", "age"]),
])
pipeline = make_pipeline(preprocess, GradientBoostingRegressor(random_state=0))
n_encoded = len(preprocess.fit(X).get_feature_names_out())
print(f"the final estimator sees {n_encoded} columns; the explainer explains {X.shape[1]}")

# %%
# With 4 features, 2^4 = 16 coalitions per row: ``method="auto"`` enumerates them all, so
# the values are exact (no error bars) and each row's values add up to its prediction
# minus the mean prediction over the background.
explainer = ShapleyExplainer(pipeline, background=100, random_state=0).fit(X, y)
explanation = explainer.explain(X.iloc[:200])
print("method:", explainer.method_)
for name, importance in zip(explanation.feature_names, explanation.mean_abs(), strict=True):
    print(f"mean |SHAP| of {name:>8}: {importance:5.1f}")
gap = np.abs(explanation.predictions - explainer.estimator_.predict(X.iloc[:200])).max()
print(f"efficiency: |base + sum(phi) - prediction| <= {gap:.1e}")

# %%
# The district's Shapley value recovers its premium, less the background's mean premium
# (about 20) and a little shrinkage by the model: each level's rows sit at one height.
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
explanation.plot.bar(ax=axes[0])
for position, name in enumerate(districts):
    rows = X["district"].iloc[:200].to_numpy() == name
    values = explanation.values[rows, 2]
    axes[1].scatter(np.full(rows.sum(), position), values, s=12)
    print(f"district {name:>8}: premium {district_premium[name]:+5.0f}, "
          f"mean SHAP {values.mean():+6.1f}")
axes[1].set_xlabel("district")
axes[1].set_ylabel("SHAP value of district")
axes[1].set_xticks(range(5), districts)
fig.tight_layout()
plt.show()

# %%
# A model that encodes text columns itself needs no pipeline: HistGradientBoosting with
# ``categorical_features`` splits on sets of districts. ``method="auto"`` then reads its
# trees through the model's own encoder and computes the values exactly with TreeSHAP
# (``method_ == "tree"``): the same game over the same background, without calling the
# model per row.
boosted = HistGradientBoostingRegressor(categorical_features=["district", "heating"],
                                        random_state=0)
tree_explainer = ShapleyExplainer(boosted, background=100, random_state=0).fit(X, y)
tree_explanation = tree_explainer.explain(X.iloc[:200])
print("method:", tree_explainer.method_)
for name, importance in zip(tree_explanation.feature_names, tree_explanation.mean_abs(),
                            strict=True):
    print(f"mean |SHAP| of {name:>8}: {importance:5.1f}")
