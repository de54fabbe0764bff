"""skshapley: Shapley values for scikit-learn users."""

__version__ = "0.1.0.dev0"

from skshapley._config import config_context, get_config, set_config
from skshapley._show_versions import show_versions
from skshapley.explain import Explanation, RKHSShapRegressor, ShapleyExplainer
from skshapley.preprocessing import MomentQuantileTransformer
from skshapley.selection import TopKShapleySelector
from skshapley.sketch import MomentSketch

__all__ = [
    "Explanation",
    "MomentQuantileTransformer",
    "MomentSketch",
    "RKHSShapRegressor",
    "ShapleyExplainer",
    "TopKShapleySelector",
    "__version__",
    "config_context",
    "get_config",
    "set_config",
    "show_versions",
]
