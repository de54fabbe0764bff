"""Plots with matplotlib: bar, beeswarm, waterfall, dependence, heatmap, decision, summary,
convergence, quantile sketches, R² attributions and global importances.

Every function takes an optional ``ax`` (a new figure is made when it is None), draws
95 % error bars where the explanation has non-zero standard errors (``bar``,
``waterfall``, ``dependence``, the bars beside ``heatmap``, ``decision`` of one row),
and returns the Axes (``summary`` returns the Figure). pyplot is imported only inside
the functions, and nothing here calls ``plt.show``. ``output`` picks one output of a
multi-output explanation by position or by name (``output="setosa"``).

``bar``, ``beeswarm``, ``summary``, ``heatmap`` and ``decision`` show the same features
in the same order: the
``max_display - 1`` features of largest mean |phi| (ties: lower index first), then, when
there are more features, one row for the rest ("N other features").

The plots live by what they draw: an :class:`~skshapley.Explanation`'s values per
feature (``_explanation``: bar, beeswarm, waterfall, summary), one feature against its
values (``_dependence``), every row at once (``_heatmap_decision``), a run's convergence
(``_convergence``), quantile sketches (``_quantile``), global attributions and
importances (``_importance``) and top-k identification (``_topk``); ``_common`` holds
what they share (argument checks, the feature rows and their lumped rest, colours).
"""

from skshapley.plotting._convergence import convergence
from skshapley.plotting._dependence import dependence
from skshapley.plotting._explanation import bar, beeswarm, summary, waterfall
from skshapley.plotting._heatmap_decision import decision, heatmap
from skshapley.plotting._importance import attribution_bar, importance_bar
from skshapley.plotting._quantile import cdf_gap, quantile_sketch
from skshapley.plotting._topk import topk

__all__ = [
    "attribution_bar",
    "bar",
    "beeswarm",
    "cdf_gap",
    "convergence",
    "decision",
    "dependence",
    "heatmap",
    "importance_bar",
    "quantile_sketch",
    "summary",
    "topk",
    "waterfall",
]
