"""scikit-learn's estimator checks (STYLE.md §4, "Common checks")."""

from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

from skshapley import ShapleyExplainer


@parametrize_with_checks(
    [
        ShapleyExplainer(LinearRegression()),
        ShapleyExplainer(DecisionTreeRegressor(max_depth=3, random_state=0), method="permutation",
                         max_evals=40, background=20),
    ]
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
