"""``Explanation``: Shapley values of several rows, with what is needed to read them."""

from __future__ import annotations

import numpy as np

from skshapley.approximators import METHOD_RECORDS

# Values of these methods are exact (the approximators' records say which of theirs are;
# the explainer's tree and linear methods read the model); RKHSShapRegressor's
# "rkhs-... (exact)" too. The other approximators' values are estimates even where a
# standard error happens to be 0.
_EXACT_METHODS = frozenset({"tree", "linear",
                            *(name for name, r in METHOD_RECORDS.items() if r.exact)})
_ESTIMATING_METHODS = frozenset(name for name, r in METHOD_RECORDS.items() if not r.exact)


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
    base_values : float64 (n,) or (n, k), or a scalar
        v(∅) of each row: the mean model output over the background. A scalar (as shap
        allows) is every row's.
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
        How the values were computed; ``"exact"``, ``"tree"`` and RKHS values computed
        ``"(exact)"`` are exact (see :meth:`to_shapiq`).
    interactions : float64 (n, d, d) or (n, d, d, k), optional
        SHAP interaction values (``ShapleyExplainer.explain(X, interactions=True)``).
    display_data : object array (n, d), optional
        The explained rows as given, where ``data`` holds numbers standing for them (the
        text values of a DataFrame's non-numeric columns, see ``ShapleyExplainer.codec_``);
        plots label rows and axes with it.
    notes : tuple of str, optional
        What the reader should know about how the values were computed (e.g. a budget
        past 2^d enumerated exactly).

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
                 display_data=None, n_draws=None, notes=()):
        self.values = np.asarray(values)
        self.notes = tuple(notes)
        if self.values.ndim not in (2, 3):
            raise ValueError(
                f"The 'values' parameter of Explanation must be 2-d (n, d) or 3-d (n, d, k); "
                f"got shape {self.values.shape}. For one row, pass values[np.newaxis]."
            )
        n_rows, n_features = self.values.shape[:2]
        # (n,) or (n, k): what each row's values add up to, less the base value
        row_shape = self.values.shape[:1] + self.values.shape[2:]
        self.base_values = np.asarray(base_values)
        if self.base_values.ndim == 0:  # one base value for every row, as shap allows
            self.base_values = np.full(row_shape, self.base_values, dtype=np.float64)
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
        if n_features != len(self.feature_names):
            raise ValueError(
                f"values has {n_features} features but feature_names has "
                f"{len(self.feature_names)}."
            )
        expected = {
            "base_values": (self.base_values, row_shape, "of shape (n,) or (n, k), or a scalar"),
            "std_errors": (self.std_errors, self.values.shape, "of the shape of values"),
            "data": (self.data, (n_rows, n_features), "of shape (n, d)"),
            "display_data": (self.display_data, (n_rows, n_features), "of the shape of data"),
            "n_evaluations": (self.n_evaluations, (n_rows,), "of shape (n,)"),
            "n_draws": (self.n_draws, (n_rows,), "of shape (n,)"),
            "interactions": (self.interactions,
                             (n_rows, n_features) + self.values.shape[1:],
                             "of shape (n, d, d) or (n, d, d, k)"),
        }
        for name, (array, shape, rule) in expected.items():
            if array is not None and array.shape != shape:
                raise ValueError(
                    f"The {name!r} parameter of Explanation must be {rule}: "
                    f"{shape} for values of shape {self.values.shape}; got shape "
                    f"{array.shape}."
                )
        n_outputs = 1 if self.values.ndim == 2 else self.values.shape[2]
        if self.output_names is not None and len(self.output_names) != n_outputs:
            raise ValueError(
                f"The 'output_names' parameter of Explanation must have one name per "
                f"output ({n_outputs}); got {len(self.output_names)}."
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
        """Select rows (an int keeps a one-row explanation).

        Only rows: shap's ``e[:, j]`` would keep the base values but drop the other
        features' values, so the rows would no longer add up to their predictions.
        """
        if isinstance(rows, tuple):
            raise ValueError(
                f"Explanation selects rows only (an int, a slice, a mask or indices); got "
                f"the tuple {rows!r}. For one feature's values use e.values[:, j], or "
                f"plotting.dependence(e, j) to plot them."
            )
        if isinstance(rows, (int, np.integer)):
            rows = [rows]

        def pick(array):
            return None if array is None else array[rows]

        return Explanation(
            self.values[rows], self.base_values[rows], self.data[rows], self.feature_names,
            std_errors=pick(self.std_errors), output_names=self.output_names,
            n_evaluations=pick(self.n_evaluations), method=self.method,
            interactions=pick(self.interactions), display_data=pick(self.display_data),
            n_draws=pick(self.n_draws), notes=self.notes,
        )

    def _check_has_rows(self, what):
        if len(self) == 0:
            raise ValueError(
                f"{what} needs at least one row; this explanation has no rows (a "
                f"selection such as e[mask] that matched none?)."
            )

    def mean_abs(self) -> np.ndarray:
        """Mean |phi| over rows: (d,) or (d, k), the global importance.

        Raises a ``ValueError`` when the explanation has no rows.
        """
        self._check_has_rows("mean_abs()")
        return np.abs(self.values).mean(axis=0)

    def mean_abs_std_errors(self) -> np.ndarray | None:
        """Standard errors of :meth:`mean_abs`, treating rows' errors as independent.

        |phi_hat| has the standard error of phi_hat to first order away from zero, so the
        mean over n rows has sqrt(sum SE^2) / n.
        """
        self._check_has_rows("mean_abs_std_errors()")
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
        so shap's plots can draw them. ``shap.Explanation`` has no field for a full
        interaction matrix (shap returns one *as* the values, from
        ``TreeExplainer(model)(X, interactions=True)``); it gets the matrix's diagonal,
        the main effects, as ``main_effects``. For shap's form, pass ``interactions`` as
        the values: ``shap.Explanation(e.interactions, e.base_values, e.data, ...)``.
        """
        try:
            import shap
        except ImportError as err:
            raise ImportError("to_shap() needs shap: pip install shap") from err
        lower = upper = None
        if self.std_errors is not None:
            lower = self.values - self.error_bars()
            upper = self.values + self.error_bars()
        main_effects = None
        if self.interactions is not None:
            # np.diagonal puts the diagonal last: (n, [k,] d) -> (n, d[, k]), as values
            main_effects = np.moveaxis(
                np.diagonal(self.interactions, axis1=1, axis2=2), -1, 1)
        return shap.Explanation(
            values=self.values, base_values=self.base_values, data=self.data,
            feature_names=self.feature_names, output_names=self.output_names,
            lower_bounds=lower, upper_bounds=upper, display_data=self.display_data,
            main_effects=main_effects,
        )

    def _is_estimated(self, row, output) -> bool:
        """Whether the values of ``row`` (and ``output``) are estimates: any non-zero
        standard error (NaN and inf included), or a sampling or regression ``method``.
        Zero errors with an exact or unknown method are exact; with neither standard
        errors nor a known method nothing tells, and they count as estimates."""
        if self.std_errors is not None:
            errors = self.std_errors[row]
            if errors.ndim == 2:
                errors = errors[:, output]
            if np.any(errors != 0):
                return True
        method = self.method
        if isinstance(method, str) and method.endswith(")") and "(" in method:
            # RKHSShapRegressor writes "rkhs-<value> (<method of its game>)"
            method = method[method.rindex("(") + 1 : -1]
        if method in _EXACT_METHODS:
            return False
        if method in _ESTIMATING_METHODS:
            return True
        return self.std_errors is None

    def _check_row_output(self, row, output, caller):
        n_rows = len(self)
        if isinstance(row, bool) or not isinstance(row, (int, np.integer)) \
                or not -n_rows <= row < n_rows:
            raise ValueError(
                f"The 'row' parameter of {caller} must be an int in [{-n_rows}, "
                f"{n_rows - 1}] for an explanation of {n_rows} rows; got {row!r}."
            )
        n_outputs = 1 if self.values.ndim == 2 else self.values.shape[2]
        if isinstance(output, bool) or not isinstance(output, (int, np.integer)) \
                or not 0 <= output < n_outputs:
            raise ValueError(
                f"The 'output' parameter of {caller} must be an int in [0, "
                f"{n_outputs - 1}] for an explanation with {n_outputs} output(s); got "
                f"{output!r}."
            )

    def to_shapiq(self, row=0, output=0):
        """Convert one row to first-order ``shapiq.InteractionValues`` (needs shapiq).

        ``estimated`` is True where the values are estimates: some standard error of the
        row is non-zero, or ``method`` is a sampler or regression estimator. Exact values
        (``"exact"``, ``"tree"``, RKHS values computed ``"(exact)"``) are not.
        ``estimation_budget`` is the row's ``n_evaluations`` (None when unknown).
        """
        try:
            from shapiq import InteractionValues
        except ImportError as err:
            raise ImportError("to_shapiq() needs shapiq: pip install shapiq") from err
        self._check_row_output(row, output, "to_shapiq")
        values = self.values[row]
        base = self.base_values[row]
        if values.ndim == 2:
            values, base = values[:, output], base[output]
        d = values.shape[0]
        lookup = {(): 0, **{(j,): j + 1 for j in range(d)}}
        return InteractionValues(
            values=np.concatenate([[float(base)], values]), index="SV", max_order=1,
            min_order=0, n_players=d, interaction_lookup=lookup,
            estimated=self._is_estimated(row, output),
            estimation_budget=(None if self.n_evaluations is None
                               else int(self.n_evaluations[row])),
            baseline_value=float(base),
        )

    def __repr__(self):
        return (
            f"Explanation(n_rows={len(self)}, n_features={len(self.feature_names)}, "
            f"method={self.method!r})"
        )
