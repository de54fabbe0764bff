"""``Explanation``: Shapley values of several rows, with what is needed to read them."""

from __future__ import annotations

import numpy as np

from skshapley.explain._explanation_views import (
    _FEATURES,
    _OUTPUTS,
    _ROWS,
    _format_names,
    _PlotAccessor,
    check_row_output,
    is_estimated,
    repr_html,
    repr_text,
    to_shap,
    to_shapiq,
)


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
    clustering : float64 (d - 1, 4), optional
        The binary hierarchy of Owen values (``ShapleyExplainer(groups="correlation")``)
        as a scipy linkage matrix over the features; :meth:`to_shap` passes it on, for
        shap's bar plot to draw it. Dropped by a selection of features.

    Notes
    -----
    As in shap, an explanation is indexed like its ``values``, one index per axis (rows,
    features, outputs), and every field follows: ``e[mask]``, ``e[:10]``, ``e[:, "bmi"]``,
    ``e[:, ["age", "bmi"]]``, ``e[:, :, "yes"]`` (an output by name or position). A
    feature or an output given by name or int drops its axis (``e[:, "bmi"].values`` is
    (n,)); a row given by int stays a one-row explanation, unlike shap, so that its
    plots, :meth:`to_shapiq` and :attr:`predictions` still work. :attr:`abs` and the
    summaries over rows :meth:`mean`, :meth:`sum`, :meth:`max` and :meth:`min` (axis
    0 only) are explanations too: ``e.abs.mean(0)`` holds the mean ``|phi|`` per feature,
    with the standard errors of :meth:`mean_abs_std_errors`.

    Selections of some features, ``abs``, ``max`` and ``min`` no longer add up to the
    model's output, so their :attr:`predictions` (and waterfall plot) raise a
    ``ValueError``; summaries over rows have no ``data`` and no plots.

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.explain import Explanation
    >>> e = Explanation(np.array([[1.0, -2.0], [3.0, 0.0]]), np.array([0.5, 0.5]),
    ...                 np.zeros((2, 2)), ["age", "bmi"])
    >>> e.predictions
    array([-0.5,  3.5])
    >>> e[:, "bmi"].values  # one feature's values, as in shap
    array([-2.,  0.])
    >>> e.abs.mean(0).values  # mean |phi| per feature: the global importance
    array([2., 1.])
    """

    # The axes of ``values`` (rows, features, outputs), fewer after a selection or a
    # summary drops one; and why the values no longer add up to the explained output
    # (None while they do), for the messages of what needs them to.
    _axes = (_ROWS, _FEATURES)
    _not_additive = None
    _description = None

    def __init__(self, values, base_values, data, feature_names, *, std_errors=None,
                 output_names=None, n_evaluations=None, method=None, interactions=None,
                 display_data=None, n_draws=None, notes=(), clustering=None):
        self.values = np.asarray(values)
        self.notes = tuple(notes)
        self.clustering = None if clustering is None else np.asarray(clustering)
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
        self._axes = (_ROWS, _FEATURES) + ((_OUTPUTS,) if self.values.ndim == 3 else ())

    @property
    def plot(self) -> _PlotAccessor:
        """Plots: ``bar()``, ``beeswarm()``, ``waterfall(row)``, ``summary()``,
        ``dependence(feature)``, ``heatmap()``, ``decision(rows)``."""
        if self._axes[:2] != (_ROWS, _FEATURES):
            raise ValueError(
                f"The plots draw rows of features; this explanation is "
                f"{self._shape_text()}. Plot the explanation it was taken from (the plots "
                f"summarise rows themselves: plot.bar() draws the mean |phi|)."
            )
        return _PlotAccessor(self)

    @property
    def shape(self) -> tuple:
        """The shape of ``values``: (n, d), (n, d, k), or fewer axes after a selection or
        a summary."""
        return self.values.shape

    @property
    def predictions(self) -> np.ndarray:
        """The explained outputs, base value plus the sum of the Shapley values.

        Raises a ``ValueError`` for values that do not add up to the output: a selection
        of some features, :attr:`abs`, :meth:`max` and :meth:`min`.
        """
        if self._not_additive is not None:
            raise ValueError(
                f"predictions are the base value plus the sum of the values, but the "
                f"values of this explanation are {self._not_additive}, which do not add up "
                f"to the model's output; take predictions from the explanation they were "
                f"taken from."
            )
        if _FEATURES not in self._axes:  # the one feature of all
            return self.base_values + self.values
        return self.base_values + self.values.sum(axis=self._axes.index(_FEATURES))

    @property
    def abs(self) -> Explanation:
        """|values|, with the same standard errors (those of |phi_hat| to first order
        away from zero), as ``shap.Explanation.abs``; ``e.abs.mean(0)`` is the global
        importance.

        Examples
        --------
        >>> import numpy as np
        >>> from skshapley.explain import Explanation
        >>> e = Explanation(np.array([[1.0, -2.0]]), np.zeros(1), np.zeros((1, 2)), ["a", "b"])
        >>> e.abs.values
        array([[1., 2.]])
        """
        fields = self._fields()
        # |phi| of an interaction matrix no longer sums to |phi| of the values
        fields.update(values=np.abs(self.values), interactions=None)
        return self._derived(fields, self._axes, "absolute values (e.abs)",
                             f"|{self._description or 'values'}|")

    def mean(self, axis=0) -> Explanation:
        """The mean over rows (``axis=0``): values (d,) or (d, k), as ``shap``'s
        ``e.mean(0)``.

        Base values are averaged too, so base value plus the sum of the values is the
        mean prediction. Standard errors treat rows' errors as independent,
        sqrt(sum SE^2) / n (:meth:`mean_abs_std_errors`); :meth:`error_bars` use the
        widest row's multiplier. ``data``, ``display_data`` and ``interactions`` are
        dropped (None), ``n_evaluations`` is the total over rows.

        Examples
        --------
        >>> import numpy as np
        >>> from skshapley.explain import Explanation
        >>> e = Explanation(np.array([[1.0, -2.0], [3.0, 0.0]]), np.zeros(2),
        ...                 np.zeros((2, 2)), ["a", "b"], std_errors=np.ones((2, 2)))
        >>> summary = e.abs.mean(0)
        >>> summary.values, summary.std_errors.round(3)
        (array([2., 1.]), array([0.707, 0.707]))
        """
        return self._summary("mean", axis)

    def sum(self, axis=0) -> Explanation:
        """The sum over rows (``axis=0``); standard errors sqrt(sum SE^2). See
        :meth:`mean`."""
        return self._summary("sum", axis)

    def max(self, axis=0) -> Explanation:
        """The largest value over rows (``axis=0``), per feature (and output);
        ``e.abs.max(0)`` finds features with rare large effects. No standard errors.
        See :meth:`mean`."""
        return self._summary("max", axis)

    def min(self, axis=0) -> Explanation:
        """The smallest value over rows (``axis=0``); no standard errors. See
        :meth:`mean`."""
        return self._summary("min", axis)

    def __len__(self) -> int:
        if _ROWS not in self._axes:
            raise TypeError(
                f"This explanation has no rows: it is {self._description}. Its shape is "
                f"e.shape, {self.shape}."
            )
        return self.values.shape[0]

    def __getitem__(self, key) -> Explanation:
        """Select rows, features and outputs, one index per axis, as ``shap.Explanation``.

        Rows: an int (kept as a one-row explanation), a slice, a boolean mask or
        indices. Features: a name or an int (the axis goes: values (n,) or (n, k), and
        ``feature_names`` is the list of that one name), or a list of names or ints, a
        slice, a mask. Outputs (third index): the same, by
        ``output_names`` or position. Every field follows (standard errors, data, base
        values, evaluations); ``interactions`` keep the selected features on both axes,
        and go with the feature axis.

        Examples
        --------
        >>> import numpy as np
        >>> from skshapley.explain import Explanation
        >>> e = Explanation(np.arange(6.0).reshape(2, 3), np.zeros(2), np.ones((2, 3)),
        ...                 ["age", "sex", "bmi"])
        >>> e[:, ["bmi", "age"]].values
        array([[2., 0.],
               [5., 3.]])
        >>> e[e.data[:, 0] > 0, "bmi"].values
        array([2., 5.])
        """
        keys = key if isinstance(key, tuple) else (key,)
        if len(keys) > len(self._axes) or any(k is None or k is Ellipsis for k in keys):
            raise IndexError(
                f"This explanation takes at most {len(self._axes)} indices, one per axis "
                f"({', '.join(self._axes)}), each an int, a name, a slice, a mask or a "
                f"list; got {len(keys)} ({', '.join(type(k).__name__ for k in keys)})."
            )
        fields = self._fields()
        axes = list(self._axes)
        not_additive = self._not_additive
        for axis, index in zip(self._axes, keys, strict=False):
            if isinstance(index, slice) and index == slice(None):
                continue
            positions = self._positions(axis, index)
            drops = np.ndim(positions) == 0
            self._take(fields, axes, axis, positions)
            if axis == _FEATURES and not_additive is None and sorted(
                    np.atleast_1d(positions).tolist()) != list(range(self.values.shape[1])):
                not_additive = "those of some features"
            if drops:
                axes.remove(axis)
        return self._derived(fields, tuple(axes), not_additive, self._description)

    def _positions(self, axis, index):
        """The positions ``index`` selects on ``axis``: an int where the axis goes, else
        an array (a row's int gives a one-row array)."""
        size = self.values.shape[self._axes.index(axis)]
        names = {_FEATURES: self.feature_names, _OUTPUTS: self.output_names}.get(axis)
        if isinstance(index, (str, np.str_, int, np.integer)) and not isinstance(index, bool):
            position = self._position(axis, index, names, size)
            return np.array([position]) if axis == _ROWS else position
        if isinstance(index, slice):
            return np.arange(size)[index]
        array = np.asarray(index)
        if array.dtype.kind in "USO":
            array = np.array([self._position(axis, name, names, size)
                              for name in array.ravel()], dtype=np.intp)
        elif array.size == 0:
            array = array.astype(np.intp)
        elif array.dtype.kind not in "biu":
            raise TypeError(
                f"The {axis} of an explanation are selected by ints, names, slices or "
                f"boolean masks; got {type(index).__name__} of dtype {array.dtype}."
            )
        return np.arange(size)[array]

    def _position(self, axis, index, names, size):
        if isinstance(index, (str, np.str_)):
            if names is None:
                raise ValueError(
                    f"The {axis} of this explanation have no names; select them by "
                    f"position, not {index!r}."
                )
            if index not in names:
                raise ValueError(
                    f"{index!r} is not one of the {axis} of this explanation, "
                    f"{_format_names(names, limit=20)}."
                )
            return list(names).index(index)
        if not -size <= index < size:
            raise IndexError(
                f"Index {index} is out of range for the {size} {axis} of this explanation."
            )
        return int(index) % size

    def _fields(self) -> dict:
        return {
            "values": self.values, "base_values": self.base_values, "data": self.data,
            "feature_names": self.feature_names, "std_errors": self.std_errors,
            "output_names": self.output_names, "n_evaluations": self.n_evaluations,
            "interactions": self.interactions, "display_data": self.display_data,
            "n_draws": self.n_draws,
        }

    @staticmethod
    def _take(fields, axes, axis, positions):
        """Select ``positions`` on ``axis`` of every field, in place (``axes``: the axes
        of ``values`` before the selection)."""
        layouts = {
            "values": axes, "std_errors": axes,
            "base_values": [a for a in axes if a != _FEATURES],
            "data": [a for a in axes if a != _OUTPUTS],
            "display_data": [a for a in axes if a != _OUTPUTS],
            "n_evaluations": [a for a in axes if a == _ROWS],
            "n_draws": [a for a in axes if a == _ROWS],
        }
        for name, layout in layouts.items():
            if fields[name] is not None and axis in layout:
                fields[name] = np.take(fields[name], positions, axis=layout.index(axis))
        names = {_FEATURES: "feature_names", _OUTPUTS: "output_names"}.get(axis)
        if names is not None and fields[names] is not None:
            fields[names] = [fields[names][p] for p in np.atleast_1d(positions)]
        interactions = fields["interactions"]
        if interactions is not None:  # (n, d, d[, k])
            if axis == _ROWS:
                interactions = np.take(interactions, positions, axis=0)
            elif axis == _OUTPUTS:
                interactions = np.take(interactions, positions, axis=3)
            elif np.ndim(positions) == 0:  # one feature's row of the matrix: no field
                interactions = None
            else:
                interactions = np.take(np.take(interactions, positions, axis=1),
                                       positions, axis=2)
            fields["interactions"] = interactions

    def _kept_clustering(self, fields):
        """The clustering, while the features are still all of them in their order."""
        clustering = getattr(self, "clustering", None)
        if clustering is None or list(fields["feature_names"]) != self.feature_names:
            return None
        return clustering

    def _derived(self, fields, axes, not_additive, description) -> Explanation:
        """An explanation of ``fields`` with ``axes``; one with rows and features is
        checked by the constructor, a summary or a single feature is built as it is."""
        if axes[:2] == (_ROWS, _FEATURES):
            result = Explanation(
                fields["values"], fields["base_values"], fields["data"],
                fields["feature_names"], std_errors=fields["std_errors"],
                output_names=fields["output_names"], n_evaluations=fields["n_evaluations"],
                method=self.method, interactions=fields["interactions"],
                display_data=fields["display_data"], n_draws=fields["n_draws"],
                notes=self.notes, clustering=self._kept_clustering(fields))
        else:
            result = object.__new__(Explanation)
            result.__dict__.update(fields, method=self.method, notes=self.notes,
                                   clustering=self._kept_clustering(fields))
        result._axes = tuple(axes)
        result._not_additive = not_additive
        result._description = description
        return result

    def _summary(self, name, axis) -> Explanation:
        if isinstance(axis, bool) or axis != 0:
            raise ValueError(
                f"{name}() summarises the rows of an explanation, axis=0; got "
                f"axis={axis!r}. For other axes use e.values.{name}(axis=...)."
            )
        self._check_has_rows(f"{name}(0)")
        n_rows = len(self)
        reduce = getattr(np, name)
        linear = name in ("mean", "sum")
        fields = self._fields()
        std_errors = n_draws = None
        if linear and self.std_errors is not None:
            std_errors = np.sqrt((self.std_errors**2).sum(axis=0))
            std_errors = std_errors / n_rows if name == "mean" else std_errors
        if linear and self.n_draws is not None:
            # The draws behind the widest row's interval (as plotting.bar): the fewest
            # from 2 on, whose t quantile is the largest, else a normal row's. Welch-
            # Satterthwaite's degrees of freedom of a sum are at least the fewest rows'.
            t_rows = self.n_draws[self.n_draws >= 2]
            n_draws = (t_rows if t_rows.size else self.n_draws).min()
        fields.update(
            values=reduce(self.values, axis=0), base_values=reduce(self.base_values, axis=0),
            std_errors=std_errors, n_draws=n_draws, data=None, display_data=None,
            interactions=None,
            n_evaluations=None if self.n_evaluations is None else self.n_evaluations.sum())
        not_additive = self._not_additive if linear else f"the {name} over rows"
        return self._derived(fields, self._axes[1:], not_additive,
                             f"the {name} over {n_rows} rows of "
                             f"{self._description or 'values'}")

    def _shape_text(self) -> str:
        """``"4 rows x 13 features x 3 outputs"``, ``"feature 'bmi'"``, ..."""
        sizes = dict(zip(self._axes, self.values.shape, strict=True))
        parts = []
        if _ROWS in sizes:
            parts.append(f"{sizes[_ROWS]} row{'s' * (sizes[_ROWS] != 1)}")
        parts.append(f"{sizes[_FEATURES]} feature{'s' * (sizes[_FEATURES] != 1)}"
                     if _FEATURES in sizes else f"feature {self.feature_names[0]!r}")
        if _OUTPUTS in sizes:
            parts.append(f"{sizes[_OUTPUTS]} outputs")
        text = " x ".join(parts)
        return text if self._description is None else f"{text}, {self._description}"

    def _check_has_rows(self, what):
        if _ROWS not in self._axes:
            raise ValueError(
                f"{what} needs rows; this explanation is {self._shape_text()}."
            )
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
        draws = self.n_draws
        if draws is None:
            draws = np.zeros(len(self) if _ROWS in self._axes else (), dtype=np.int64)
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
        if _ROWS not in self._axes:  # a summary's one multiplier
            return multipliers * self.std_errors
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
        return to_shap(self)

    def _is_estimated(self, row, output) -> bool:
        return is_estimated(self, row, output)

    def _check_row_output(self, row, output, caller):
        check_row_output(self, row, output, caller)

    def to_shapiq(self, row=0, output=0):
        """Convert one row to first-order ``shapiq.InteractionValues`` (needs shapiq).

        ``estimated`` is True where the values are estimates: some standard error of the
        row is non-zero, or ``method`` is a sampler or regression estimator. Exact values
        (``"exact"``, ``"tree"``, RKHS values computed ``"(exact)"``) are not.
        ``estimation_budget`` is the row's ``n_evaluations`` (None when unknown).
        """
        return to_shapiq(self, row, output)

    def __repr__(self):
        """Shape, outputs, method and base value, e.g.
        ``<Explanation: 4 rows x 3 features; method='tree'; base value 0.5>``."""
        return repr_text(self)

    def _repr_html_(self):
        """The repr above a table of the first rows and features, value +- standard
        error, of the first output (Jupyter's display)."""
        return repr_html(self)
