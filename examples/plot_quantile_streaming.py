"""
Streaming quantile normalisation with MomentQuantileTransformer
===============================================================

scikit-learn's ``QuantileTransformer`` needs each column in memory (it subsamples
large ones) and cannot be updated or combined. :class:`~skshapley.MomentQuantileTransformer`
keeps a small sketch per column instead (by default a CDF of at most 60 vertices, 1 KiB;
merged sketches agree with one fit within the sketch's own rank error,
``quantile_error_``), so it can

- learn from a stream of chunks (``partial_fit``),
- merge transformers fitted on different workers (``merge``), and
- still transform, invert and bin like the scikit-learn transformers.

The data: two skewed columns of 400,000 seeded rows, seen in chunks of 50,000.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import QuantileTransformer

from skshapley import MomentQuantileTransformer
from skshapley.plotting import quantile_sketch

rng = np.random.default_rng(0)
X = np.column_stack([rng.lognormal(3.0, 1.0, size=400_000),
                     rng.gamma(0.7, 2.0, size=400_000)])

# %%
# Two "workers" each stream half of the rows in chunks; merging their transformers
# gives the quantiles of one pass over all rows, within the sketch's rank error.
worker_a, worker_b = MomentQuantileTransformer(), MomentQuantileTransformer()
for start in range(0, 200_000, 50_000):
    worker_a.partial_fit(X[start:start + 50_000])
    worker_b.partial_fit(X[200_000 + start:200_000 + start + 50_000])
merged = worker_a.merge(worker_b)
one_pass = MomentQuantileTransformer().fit(X)
p = [0.01, 0.5, 0.99]
print("quantiles, merged:  ", merged.quantiles(p)[:, 0].round(3),
      " estimated rank error:", merged.quantile_error_.round(4))
print("quantiles, one fit: ", one_pass.quantiles(p)[:, 0].round(3))
print("quantiles, exact:   ", np.quantile(X[:, 0], p).round(3))

# %%
# Against scikit-learn's QuantileTransformer on the same data: the uniform outputs
# agree to within about a percent.
sklearn_u = QuantileTransformer(random_state=0).fit(X).transform(X[:5000])
sketch_u = merged.transform(X[:5000])
print(f"largest |difference| from QuantileTransformer: "
      f"{np.abs(sklearn_u - sketch_u).max():.4f}")

# %%
# Binning in a pipeline: with ``n_bins`` the transformer is a quantile binner (like
# ``KBinsDiscretizer(strategy="quantile")``), here one-hot encoded for a linear model
# of a non-monotone target.
target = (np.abs(np.log(X[:, 0]) - 3.0) < 0.6).astype(int)
binned = make_pipeline(MomentQuantileTransformer(n_bins=8, encode="onehot-dense"),
                       LogisticRegression(max_iter=500))
raw = LogisticRegression(max_iter=500)
train, test = slice(0, 50_000), slice(50_000, 100_000)
for name, model in (("binned", binned), ("raw", raw)):
    accuracy = model.fit(X[train], target[train]).score(X[test], target[test])
    print(f"logistic regression on {name} features: accuracy {accuracy:.3f}")

# %%
# How close is the sketch to the data? Its CDF against the empirical one, per column.
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
quantile_sketch(merged, X, feature=0, ax=axes[0])
quantile_sketch(merged, X, feature=1, ax=axes[1])
fig.tight_layout()
plt.show()
