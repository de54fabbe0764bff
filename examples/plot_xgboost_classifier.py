"""
Explain an XGBoost classifier: beeswarm, waterfall and dependence plots
=======================================================================

The plots a shap user reaches for first, on an ``XGBClassifier`` fitted to
scikit-learn's bundled breast-cancer data (569 tumours, 30 measurements each; class 1
is *benign*). ``ShapleyExplainer`` reads the boosted trees and computes the Shapley
values exactly (TreeSHAP), and ``Explanation.to_shap()`` hands them to shap's own plots
when shap is installed. :doc:`../getting_started/from_shap` maps the rest of shap's API.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from xgboost import XGBClassifier

from skshapley import ShapleyExplainer

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0,
                                                    stratify=y)
model = XGBClassifier(n_estimators=200, max_depth=3, learning_rate=0.1, n_jobs=1,
                      random_state=0).fit(X_train, y_train)
print(f"test accuracy: {model.score(X_test, y_test):.3f}")

# %%
# ``prefit=True`` explains the fitted model as it is; ``fit`` only draws the background,
# 100 training rows that stand in for the features a coalition leaves out (the
# interventional game, as ``shap.TreeExplainer(model, data=background)``; pass
# ``feature_perturbation="tree_path_dependent"`` for the game of
# ``shap.TreeExplainer(model)`` without data). ``method="auto"`` picks TreeSHAP for the
# trees, and for an XGBoost classifier explains its log-odds (the margin, as shap does):
# ``response_method_`` and ``output_names_`` say so.
explainer = ShapleyExplainer(model, prefit=True, random_state=0).fit(X_train)
explanation = explainer.explain(X_test)
print(explanation)
print("method:", explainer.method_, "| output:", explainer.response_method_,
      explainer.output_names_)

# Efficiency: each row's base value plus its Shapley values is the model's margin.
margin = model.predict(X_test, output_margin=True)
print(f"largest gap to the model's log-odds: {np.abs(explanation.predictions - margin).max():.1e}"
      " (XGBoost computes in float32)")

# %%
# Indexing works as in shap: ``explanation[:, "worst area"]`` is one feature's values
# (with its data), and ``explanation.abs.mean(0)`` the mean |SHAP value| per feature, the
# global importance that ``plot.bar()`` draws.
importance = explanation.abs.mean(0)
for j in np.argsort(-importance.values)[:5]:
    print(f"{explanation.feature_names[j]:>22}: mean |SHAP| {importance.values[j]:.3f}")
print("worst area, first 3 rows:", explanation[:, "worst area"].values[:3].round(3))

# %%
# The beeswarm: one point per explained tumour and feature, coloured by the feature's
# value. Large values of the "worst" (largest) cell measurements push the log-odds of
# *benign* down.
explanation.plot.beeswarm(max_display=12)
plt.tight_layout()
plt.show()

# %%
# The waterfall of one tumour: from the base value (the mean log-odds over the
# background) to this tumour's log-odds, feature by feature. TreeSHAP's values are exact,
# so the bars carry no error bars.
explanation.plot.waterfall(0, max_display=12)
plt.tight_layout()
plt.show()

# %%
# The dependence plot of "worst concave points": its Shapley value against its value,
# coloured by the feature that best explains the vertical spread (here chosen
# automatically, as shap's ``approximate_interactions``), over a histogram of the
# feature. The steep drop between 0.12 and 0.15 is where the trees split.
fig, ax = plt.subplots(figsize=(7, 5))
explanation.plot.dependence("worst concave points", ax=ax)
fig.tight_layout()
plt.show()

# %%
# shap's own plots take the same values: ``to_shap()`` returns a ``shap.Explanation``
# (our 95 % error bars go to its ``lower_bounds`` and ``upper_bounds``). shap is not a
# dependency of skshapley, so the conversion is guarded here.
try:
    import shap
except ImportError:
    print("shap is not installed: skipping shap.plots.waterfall")
else:
    shap_explanation = explanation.to_shap()
    print(type(shap_explanation).__module__, shap_explanation.shape)
    plt.figure()  # shap draws on the current figure
    shap.plots.waterfall(shap_explanation[0], max_display=12, show=False)
    plt.tight_layout()
    plt.show()
