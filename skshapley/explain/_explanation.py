"""``Explanation``: Shapley values of several rows, with what is needed to read them."""

from __future__ import annotations

import numpy as np


class _PlotAccessor:
    """``explanation.plot.bar()``, ``.beeswarm()``, ``.waterfall(i)``, ``.summary()``,
    ``.dependence(feature)``."""

    def __init__(self, explanation):
        self._explanation = explanation

    def bar(self, **kwargs):
        from skshapley import plotting

        return plotting.bar(self._explanation, **kwargs)

    def beeswarm(self, **kwargs):
        from skshapley import plotting

        return plotting.beeswarm(self._explanation, **kwargs)

    def waterfall(self, row=0, **kwargs):
        from skshapley import plotting

        return plotting.waterfall(self._explanation, row, **kwargs)

    def summary(self, **kwargs):
        from skshapley import plotting

        return plotting.summary(self._explanation, **kwargs)

    def dependence(self, feature, **kwargs):
        from skshapley import plotting

        return plotting.dependence(self._explanation, feature, **kwargs)


class Explanation:
    """Shapley values of ``n`` rows, with error bars and the data they explain.

    Parameters
    ----------
    values : float64 (n, d) or (n, d, k)
        Shapley values; ``values[i].sum(axis=0) + base_values[i]`` is the explained
        model output of row i (efficiency).
    base_values : float64 (n,) or (n, k)
        v(∅) of each row: the mean model output over the background.
    data : float64 (n, d)
        The explained rows.
    feature_names : list of str (d,)
    std_errors : float64, same shape as ``values``, optional
        Standard errors (0 for exact methods).
    output_names : list of str (k,), optional
    n_evaluations : int64 (n,), optional
        Coalition evaluations spent on each row.
    n_draws : int64 (n,), optional
        Independent draws behind each row's standard errors (orderings, antithetic pairs,
        coalition pairs); from 2 on, :meth:`error_bars` are t intervals with
        ``n_draws - 1`` degrees of freedom, else normal ones.
    method : str, optional
    display_data : object array (n, d), optional
        The explained rows as given, where ``data`` holds numbers standing for them (the
        text values of a DataFrame's non-numeric columns, see ``ShapleyExplainer.codec_``);
        plots label rows and axes with it.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.explain import Explanation
    >>> e = Explanation(np.array([[1.0, -2.0]]), np.array([0.5]), np.zeros((1, 2)), ["a", "b"])
    >>> e.predictions
    array([-0.5])
    """

    def __init__(self, values, base_values, data, feature_names, *, std_errors=None,
                 output_names=None, n_evaluations=None, method=None, interactions=None,
                 display_data=None, n_draws=None):
        self.values = np.asarray(values)
        self.base_values = np.asarray(base_values)
        self.data = np.asarray(data)
        self.feature_names = list(feature_names)
        self.std_errors = None if std_errors is None else np.asarray(std_errors)
        self.output_names = None if output_names is None else list(output_names)
        self.n_evaluations = None if n_evaluations is None else np.asarray(n_evaluations)
        self.n_draws = None if n_draws is None else np.asarray(n_draws, dtype=np.int64)
        self.method = method
        self.interactions = None if interactions is None else np.asarray(interactions)
        self.display_data = (None if display_data is None
                             else np.asarray(display_data, dtype=object))
        if self.values.shape[1] != len(self.feature_names):
            raise ValueError(
                f"values has {self.values.shape[1]} features but feature_names has "
                f"{len(self.feature_names)}."
            )

    @property
    def plot(self) -> _PlotAccessor:
        """Plots: ``bar()``, ``beeswarm()``, ``waterfall(row)``, ``summary()``."""
        return _PlotAccessor(self)

    @property
    def predictions(self) -> np.ndarray:
        """The explained outputs, base value plus the sum of the Shapley values."""
        return self.base_values + self.values.sum(axis=1)

    def __len__(self) -> int:
        return self.values.shape[0]

    def __getitem__(self, rows) -> Explanation:
        """Select rows (an int keeps a one-row explanation)."""
        if isinstance(rows, (int, np.integer)):
            rows = [rows]

        def pick(array):
            return None if array is None else array[rows]

        return Explanation(
            self.values[rows], self.base_values[rows], self.data[rows], self.feature_names,
            std_errors=pick(self.std_errors), output_names=self.output_names,
            n_evaluations=pick(self.n_evaluations), method=self.method,
            interactions=pick(self.interactions), display_data=pick(self.display_data),
            n_draws=pick(self.n_draws),
        )

    def mean_abs(self) -> np.ndarray:
        """Mean |phi| over rows: (d,) or (d, k), the global importance."""
        return np.abs(self.values).mean(axis=0)

    def mean_abs_std_errors(self) -> np.ndarray | None:
        """Standard errors of :meth:`mean_abs`, treating rows' errors as independent.

        |phi_hat| has the standard error of phi_hat to first order away from zero, so the
        mean over n rows has sqrt(sum SE^2) / n.
        """
        if self.std_errors is None:
            return None
        return np.sqrt((self.std_errors**2).sum(axis=0)) / self.values.shape[0]

    def error_multipliers(self, level=0.95) -> np.ndarray:
        """Standard errors per half-width of each row's two-sided ``level`` interval:
        the t quantile with ``n_draws - 1`` degrees of freedom where a row's errors rest
        on 2 or more draws (1.96 SE from 2 draws would cover 70 %, not 95 %), else the
        normal quantile (1.96 at 95 %)."""
        from scipy.stats import norm
        from scipy.stats import t as student_t

        if not 0.0 < level < 1.0:
            raise ValueError(f"The 'level' parameter must be in (0, 1); got {level!r}.")
        tail = (1.0 + level) / 2.0
        draws = (np.zeros(len(self), dtype=np.int64) if self.n_draws is None
                 else self.n_draws)
        with np.errstate(invalid="ignore"):
            t_quantiles = student_t.ppf(tail, np.maximum(draws - 1, 1))
        return np.where(draws >= 2, t_quantiles, norm.ppf(tail))

    def error_bars(self, level=0.95) -> np.ndarray | None:
        """Half-widths of the two-sided ``level`` intervals of ``values`` (same shape):
        :meth:`error_multipliers` times ``std_errors``; None without standard errors.

        Examples
        --------
        >>> import numpy as np
        >>> from skshapley.explain import Explanation
        >>> e = Explanation(np.ones((1, 2)), np.zeros(1), np.zeros((1, 2)), ["a", "b"],
        ...                 std_errors=np.ones((1, 2)), n_draws=[5])
        >>> e.error_bars().round(3)  # t with 4 degrees of freedom
        array([[2.776, 2.776]])
        """
        if self.std_errors is None:
            return None
        multipliers = self.error_multipliers(level)
        return multipliers.reshape((-1,) + (1,) * (self.std_errors.ndim - 1)) * self.std_errors

    def to_shap(self):
        """Convert to ``shap.Explanation`` (needs shap).

        Our 95 % intervals (:meth:`error_bars`) go to ``lower_bounds``/``upper_bounds``,
        so shap's plots can draw them.
        """
        try:
            import shap
        except ImportError as err:
            raise ImportError("to_shap() needs shap: pip install shap") from err
        lower = upper = None
        if self.std_errors is not None:
            lower = self.values - self.error_bars()
            upper = self.values + self.error_bars()
        return shap.Explanation(
            values=self.values, base_values=self.base_values, data=self.data,
            feature_names=self.feature_names, output_names=self.output_names,
            lower_bounds=lower, upper_bounds=upper, display_data=self.display_data,
        )

    def to_shapiq(self, row=0, output=0):
        """Convert one row to first-order ``shapiq.InteractionValues`` (needs shapiq)."""
        try:
            from shapiq import InteractionValues
        except ImportError as err:
            raise ImportError("to_shapiq() needs shapiq: pip install shapiq") from err
        values = self.values[row]
        base = self.base_values[row]
        if values.ndim == 2:
            values, base = values[:, output], base[output]
        d = values.shape[0]
        lookup = {(): 0, **{(j,): j + 1 for j in range(d)}}
        return InteractionValues(
            values=np.concatenate([[float(base)], values]), index="SV", max_order=1,
            min_order=0, n_players=d, interaction_lookup=lookup,
            estimated=self.method != "exact",
            estimation_budget=(None if self.n_evaluations is None
                               else int(self.n_evaluations[row])),
            baseline_value=float(base),
        )

    def __repr__(self):
        return (
            f"Explanation(n_rows={len(self)}, n_features={len(self.feature_names)}, "
            f"method={self.method!r})"
        )
