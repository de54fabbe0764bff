"""``ShapleyExplainer``: Shapley values of any fitted model as a scikit-learn transformer."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils import check_random_state, get_tags
from sklearn.utils.validation import check_is_fitted

from skshapley.approximators import METHOD_RECORDS, check_sampler
from skshapley.explain._columns import (
    ColumnCodec,
    check_missing_values_taken,
    model_rows,
)
from skshapley.explain._explainer_inputs import (
    as_frame,
    checked_groups,
    checked_hierarchy,
    checked_prefit,
    closed_form_plans,
    column_names,
    output_names,
    per_group,
    select_background,
)
from skshapley.explain._explainer_rows import (
    linear_values,
    model_response,
    sampled_values,
    tree_values,
)
from skshapley.explain._explanation import Explanation
from skshapley.explain._function import as_model
from skshapley.explain._plan import make_plan, time_evaluation
from skshapley.games import RESPONSE_METHODS, resolve_response_method
from skshapley.permutations import PermutationSampler
from skshapley.utils import (
    HasMethods,
    Interval,
    StrOptions,
    as_pandas_frame,
    check_feature_names_in,
    finite_policy,
    fit_context,
    resolve_device,
    restored_on_failure,
    takes_missing_values,
    to_host,
    validate_data,
)

# The explainer's methods: TreeSHAP and linear models' closed form read the model, the
# approximators' (their records) play its games.
_METHODS = ("auto", "tree", "linear", *METHOD_RECORDS)


class ShapleyExplainer(TransformerMixin, BaseEstimator):
    """Explain any model's predictions with Shapley values, with error bars.

    The interventional game of each explained row x (see the user guide,
    "Interventional or observational values") is
    :math:`v_x(S) = \\frac{1}{m} \\sum_{b} f(x_S, b_{N \\setminus S})`, the mean over the
    m background rows b. Its Shapley values are computed exactly when 2^d evaluations
    fit in ``max_evals``, and otherwise estimated from antithetic permutation samples
    (Mitchell, Cooper, Frank & Holmes 2022, Sec. 2.4) with per-feature standard errors
    (see the user guide, "Budgets and error bars").

    Parameters
    ----------
    estimator : estimator object or callable
        The model to explain (a Pipeline explains in its original feature space), or a
        plain function ``f(X) -> (n,) or (n, k)`` of NumPy rows (nothing to fit:
        ``prefit`` is implied, and ``response_method`` must be "auto" or "predict").
    prefit : bool, default=False
        If True, ``estimator`` is already fitted and ``fit`` only sets up the background;
        otherwise a clone is fitted on ``fit``'s (X, y).
    response_method : {"auto", "predict", "predict_proba", "decision_function", \
            "predict_log_odds", "score_samples"} or callable, default="auto"
        Output to explain. "auto": ``predict`` for regressors; for XGBoost and LightGBM
        classifiers their log-odds ("predict_log_odds": margins, centred over the
        classes for several classes; a LightGBM random forest's averaged over its
        trees); for other classifiers ``decision_function`` when they have one, else
        ``predict_proba`` (P(class 1) for two classes) for scikit-learn's trees, forests
        and nearest neighbours, whose probabilities are shares of votes (forests are
        then explained exactly by TreeSHAP), and "predict_log_odds" for the rest
        (log-odds of ``predict_proba``, clipped to [1e-15, 1]). Clusterers and outlier
        detectors have no score to explain by default: give one ("score_samples" or
        "decision_function"). A callable is called as ``f(estimator, X)``.
    method : {"auto", "tree", "linear", "exact", "permutation", "stratified", "owen", \
            "owen_halved", "kernel", "leverage", "kadd", "surrogate"}, default="auto"
        "tree": exact TreeSHAP (Lundberg et al. 2020) for scikit-learn, XGBoost and
        LightGBM tree ensembles, and Pipelines of column-wise steps (scalers, imputers,
        and so on) ending in one, when the explained output is linear in the leaves
        (regression values, forest probabilities, boosted margins and log-odds); no model
        is called per row.
        "linear": the closed form phi_j(x) = sum of w_k (Z(x)_k - mean_b Z(b)_k) over
        the columns k of Z made from column j, for a model with ``coef_`` w and
        ``intercept_`` (LinearRegression, Ridge, LogisticRegression, LinearSVC, SGD...)
        after column-wise steps Z (scalers, imputers, one-hot, spline and quantile
        encoders, ColumnTransformers of these), explained on its linear output:
        ``predict`` of a regressor, ``decision_function`` of a classifier, and
        "predict_log_odds" where it equals the margins (binary and multinomial
        LogisticRegression); no model is called per coalition.
        "auto" picks "tree", then "linear", whenever it applies. Otherwise "auto"
        enumerates all coalitions when 2^d <= max_evals; otherwise, with ``tol``,
        samples orderings (the estimator that stops early), and without it takes the
        most accurate estimator per evaluation whose own cost fits: the odd-Fourier
        surrogate, then paired KernelSHAP with leverage allocation, then antithetic
        orderings. ``fit`` times the model once on the background, and an estimator
        fits when its design is within ``working_memory`` and its arithmetic costs at
        most half the time of the budget's model calls (see
        ``skshapley.approximators.choose_method``), so a fast model at many features is
        not drowned by the solver. "kernel" is paired KernelSHAP, "kadd" k-additive
        KernelSHAP. "stratified" and the Owen methods are the comparison methods of
        Mitchell et al. (2022, Section 5). A ``max_evals`` above 2^d with any sampling
        method enumerates exactly (said in ``Explanation.notes``).
    sampler : {"auto", "antithetic", "mc", "orthogonal", "sobol", "argsort_sobol", \
            "herding", "sbq"} or PermutationSampler, default="auto"
        Ordering sampler of ``method="permutation"``. "auto": orthogonal frames when
        ``max_evals`` buys at least two frames of 2(d - 1) orderings, else antithetic
        pairs (see ``skshapley.approximators.resolve_sampler``). An instance is used with
        its own seed, restarted for every row.
    max_evals : int or "auto", default="auto"
        Coalition evaluations per explained row, v(∅) and v(N) included (each costs
        one model call on ``background`` rows). "auto": 2^d for d <= 10 (exact), else
        2 + 64 (d - 1) (the budget of 32 antithetic pairs of orderings).
    tol : float, optional
        Stop a row early once the 95 % quantile of its estimated overall error
        ||phi_hat - phi||_2 is below ``tol`` (see the user guide, "Budgets and error
        bars").
    background : int or array-like (n_background, n_features), default=100
        The background rows, or how many rows of ``fit``'s X to sample for it.
    feature_perturbation : {"interventional", "tree_path_dependent"}, \
            default="interventional"
        The game: features outside a coalition take background values
        ("interventional", every method), or, for ``method="tree"`` only, TreeSHAP's
        cover-weighted conditional expectation ("tree_path_dependent"), which
        needs no background and gives interaction values.
    groups : dict or list of lists, optional
        Explain groups of columns instead of single columns: every group is one player,
        and a coalition of groups takes the union of their columns from the explained
        row, the other columns from the background (the game whose players are the
        groups, Jullum, Redelmeier & Aas 2021, Sec. 2). ``{"name": [columns], ...}``, or
        ``[[columns], ...]`` whose groups are named by their columns joined with "+"; a
        column is a name (X a DataFrame) or a position, and a group of one column may be
        given as that column. Every column must be in exactly one group: an unknown
        column, a column in two groups, an empty group or a column in no group raises a
        ``ValueError`` naming it. Every method works on groups (budgets, ``tol`` and
        standard errors are per group; ``method="exact"`` enumerates 2^(number of
        groups) coalitions), and ``method="tree"`` stays exact and calls no model: the
        paths test a group as one feature (see ``skshapley.tree._groups``; interaction
        values are then between groups). The values and ``get_feature_names_out`` are
        per group, in the order given; see ``explain`` for ``Explanation.data``.

        A hierarchy instead gives **Owen values** (Owen 1977; Winter 1989 for nested
        levels; the quantity of shap's PartitionExplainer): "correlation" (average
        linkage of 1 - |Pearson r| between the columns of ``fit``'s X), a scipy linkage
        matrix over the columns ((n_features - 1, 4), e.g.
        ``scipy.cluster.hierarchy.linkage``), or lists nested three deep whose leaves
        are columns (``[[["a", "b"], "c"], ["d", "e"]]``; for one level of clusters,
        wrap each once more: ``[[["a", "b"]], [["c", "d"]]]``). Values stay per column,
        but each column's value averages its marginal contributions over the orderings
        that keep every cluster together: correlated columns clustered together share
        their credit first. They add up to the prediction like Shapley values and equal
        them only for a flat hierarchy. ``method="auto"`` enumerates them exactly when
        that fits ``max_evals`` (about d^2 coalitions for a balanced tree), else samples
        such orderings in antithetic pairs, with standard errors and ``tol``;
        ``method="exact"`` always enumerates and ``"permutation"`` samples. The tree,
        linear and other estimators compute Shapley values and are refused.
        None: one player per column.
    n_jobs : int, optional
        Rows are explained in parallel chunks with joblib; results do not depend on it.
    random_state : None, int or RandomState
        Seeds the background sample and the orderings.
    progress : bool, default=False
        Show a tqdm progress bar over rows.
    device : None, "cpu", "cuda" or str, default=None
        Where the model is called. None or "cpu": on NumPy arrays. "cuda": on CuPy
        arrays, for a model that accepts them (XGBoost with ``device="cuda"``, a CuPy
        predictor): the background is copied to the GPU once, every masked batch is
        assembled and averaged over the background there, and only the values come back
        (no host round-trip per model call; ``gpu`` extra). Any other string names an
        array-API namespace module (e.g. ``"array_api_strict"``) used the same way. Not
        used by ``method="tree"``, which has its own kernels, nor by ``method="linear"``,
        which calls the model once per ``explain`` (on the host) to check its values.

    Attributes
    ----------
    estimator_ : estimator
        The fitted model.
    background_ : ndarray (n_background, n_features)
        As float64; the columns of ``codec_`` hold codes.
    codec_ : ColumnCodec or None
        When ``fit``'s X is a DataFrame with non-numeric columns (text, categorical,
        bool, dates): the numbers that stand for their values. Coalitions are masked on
        the numbers, and the model is called on the DataFrame they stand for, so a
        Pipeline that encodes text sees text. A pandas categorical column's numbers are
        its category codes (NaN when missing), which XGBoost's and LightGBM's trees split
        on; HistGradientBoosting's trees read its own codes of the values, so
        ``method="tree"`` takes its text columns too.
        ``Explanation.data`` holds the numbers, ``Explanation.display_data`` the values.
    expected_value_ : float or ndarray (n_outputs,)
        Mean model output over the background, v(∅) of every row.
    n_outputs_ : int
    output_names_ : list of str or None
        The classes of several outputs; for one output of a binary classifier, the
        explained quantity of its second class, e.g. "P(yes)", "log-odds(yes)" or
        "decision(yes)".
    method_ : str
        The method "auto" resolved to.
    response_method_ : str or callable
        The explained output ``response_method="auto"`` resolved to: "predict",
        "predict_proba", "decision_function", "predict_log_odds" or "score_samples"
        (a callable ``response_method`` as given).
    tree_ensemble_ : skshapley.tree.TreeEnsemble or None
        The model's merged paths when ``method_ == "tree"``.
    sampler_ : str, PermutationSampler or None
        The sampler "auto" resolved to (None for methods that sample no orderings).
    max_evals_ : int
        The budget per row actually used (0 for "tree" and "linear").
    plan_ : ExplainPlan or None
        Method, sampler, budget, seed and rows per game resolved at ``fit``, with the
        reason ``"auto"`` chose the method; None for "tree" and "linear".
    random_seed_ : int
        Seed drawn at fit; every transform call uses it, so repeated calls agree.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.
    groups_ : dict or None
        With ``groups``: each group's name -> its columns, as names when X has them,
        else as positions, in the order of the values; None without ``groups`` and with
        a hierarchy.
    hierarchy_ : list or None
        With a hierarchy in ``groups``: the tree as nested lists of columns (names
        when X has them, else positions); None otherwise.

    See Also
    --------
    skshapley.approximators.shapley_values : the functional core.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import LinearRegression
    >>> from skshapley import ShapleyExplainer
    >>> X, y = load_diabetes(return_X_y=True)
    >>> explainer = ShapleyExplainer(LinearRegression(), background=50, random_state=0)
    >>> phi = explainer.fit(X, y).transform(X[:3])
    >>> phi.shape
    (3, 10)
    >>> explainer.response_method_
    'predict'
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"]), HasMethods(["predict"]),
                      HasMethods(["predict_proba"]), callable],
        "prefit": ["boolean"],
        "response_method": [StrOptions(set(RESPONSE_METHODS)), callable],
        "method": [str],
        "sampler": [str, PermutationSampler],
        "max_evals": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "tol": [Interval(Real, 0, None, closed="neither"), None],
        "background": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "feature_perturbation": [StrOptions({"interventional", "tree_path_dependent"})],
        "groups": [dict, list, tuple, StrOptions({"correlation"}), np.ndarray, None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        "device": [None, str],
    }

    def __init__(self, estimator, *, prefit=False, response_method="auto", method="auto",
                 sampler="auto", max_evals="auto", tol=None, background=100,
                 feature_perturbation="interventional", groups=None, n_jobs=None,
                 random_state=None, progress=False, device=None):
        self.estimator = estimator
        self.prefit = prefit
        self.response_method = response_method
        self.method = method
        self.sampler = sampler
        self.max_evals = max_evals
        self.tol = tol
        self.background = background
        self.feature_perturbation = feature_perturbation
        self.groups = groups
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress
        self.device = device

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Shapley values are float64 whatever the input dtype.
        tags.transformer_tags.preserves_dtype = []
        model, prefit = as_model(self.estimator)
        tags.input_tags.allow_nan = takes_missing_values(model)
        if not (prefit or self.prefit):
            tags.target_tags.required = get_tags(model).target_tags.required
        return tags

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, **fit_params):
        """Fit the model (unless ``prefit``) and fix the background and the budget.

        Parameters
        ----------
        X : array-like or DataFrame (n_samples, n_features)
            A DataFrame may have text, categorical, bool and date columns (see
            ``codec_``; ``method="tree"`` takes numeric, bool and pandas categorical
            columns, and text columns that HistGradientBoosting encodes itself). A polars
            DataFrame or pyarrow Table is read as the pandas DataFrame it converts to.
            May hold NaN when the estimator
            takes missing values (scikit-learn's
            ``allow_nan`` tag: HistGradientBoosting, trees, XGBoost, LightGBM, or a
            Pipeline whose first step does, such as an imputer); never infinity.
        y : array-like (n_samples,) or (n_samples, n_targets), optional
        **fit_params
            Passed to the estimator's ``fit``.

        Returns
        -------
        self : ShapleyExplainer
        """
        # A failed fit leaves a fitted explainer as it was (validate_data sets
        # n_features_in_ before the later checks can fail).
        with restored_on_failure(self):
            return self._fit(X, y, **fit_params)

    def _fit(self, X, y, **fit_params):
        # what the constraints cannot say: True is an Integral, 0 jobs an int
        if isinstance(self.background, bool):
            raise ValueError(
                "The 'background' parameter of ShapleyExplainer must be an int >= 1 (rows "
                f"sampled from X) or an array of rows; got {self.background!r}."
            )
        if self.n_jobs == 0 or isinstance(self.n_jobs, bool):
            raise ValueError(
                "The 'n_jobs' parameter of ShapleyExplainer must be a non-zero int (-1: "
                f"all cores) or None; got {self.n_jobs!r}."
            )
        model, prefit = as_model(self.estimator)
        prefit = self.prefit if prefit is None else prefit
        finite = finite_policy(model)
        # a polars or pyarrow frame is read, fitted on and explained as pandas
        X = as_pandas_frame(X)
        codec, X_checked = self._checked_rows(X, finite, reset=True)
        n_features = X_checked.shape[1]
        if self.method not in _METHODS:
            raise ValueError(
                f"The 'method' parameter of ShapleyExplainer must be one of "
                f"{list(_METHODS)}; got {self.method!r}."
            )
        check_sampler(self.sampler, n_features)
        names = getattr(self, "feature_names_in_", None)
        group_names, column_group = checked_groups(self.groups, n_features, names)
        hierarchy = checked_hierarchy(self.groups, X_checked, names)
        if hierarchy is not None and self.method in ("tree", "linear"):
            raise ValueError(
                f"method={self.method!r} computes Shapley values; a hierarchy in 'groups' "
                "asks for Owen values, which are enumerated or sampled: use method='auto', "
                "'exact' or 'permutation'."
            )
        if prefit:
            estimator = checked_prefit(model, getattr(self, "feature_names_in_", None))
        else:
            if y is None and get_tags(model).target_tags.required:
                raise ValueError(
                    f"{type(model).__name__} requires y to be passed, but the "
                    "target y is None; pass y to fit, or fit the estimator yourself and "
                    "use prefit=True."
                )
            estimator = clone(model).fit(X, y, **fit_params)

        rng = check_random_state(self.random_state)
        background, codec = select_background(self.background, X_checked, rng, finite, codec,
                                              getattr(self, "feature_names_in_", None))
        method = self.method
        feature_names = getattr(estimator, "feature_names_in_", None)
        predict = model_response(estimator, self.response_method, feature_names, codec)
        if resolve_device(self.device) is not None and (feature_names is not None
                                                        or codec is not None):
            raise ValueError(
                f"device={self.device!r} calls the model on device arrays, but "
                f"{type(estimator).__name__} was fitted on a DataFrame and is called "
                "with DataFrames; fit it on arrays or use device=None."
            )
        check_missing_values_taken(estimator, predict, background, "background")
        started = time.perf_counter()
        outputs = self._outputs(predict, background)
        first_call_seconds = time.perf_counter() - started
        if outputs.ndim > 2 or outputs.shape[0] != background.shape[0]:
            raise ValueError(
                f"The model output for {background.shape[0]} rows has shape {outputs.shape}; "
                "expected (n,) or (n, n_outputs)."
            )
        tree_plan, linear_plan, method = closed_form_plans(
            self.method, estimator, self.response_method, background, outputs,
            model_rows(feature_names, codec), codec, column_group, hierarchy)
        if self.feature_perturbation == "tree_path_dependent" and tree_plan is None:
            raise ValueError(
                "feature_perturbation='tree_path_dependent' is defined for tree ensembles "
                f"explained with method='tree'; got method={self.method!r} on "
                f"{type(estimator).__name__}."
            )
        random_seed = int(rng.randint(np.iinfo(np.int32).max))
        plan = None
        if tree_plan is None and linear_plan is None:
            n_outputs = 1 if outputs.ndim == 1 else outputs.shape[1]
            plan = make_plan(
                self.method, self.sampler, self.max_evals, self.tol,
                n_features=n_features, n_outputs=n_outputs,
                n_background=background.shape[0], seed=random_seed,
                evaluation_seconds=lambda: time_evaluation(
                    lambda rows: self._outputs(predict, rows), background,
                    first_call_seconds), column_player=column_group, hierarchy=hierarchy)
            method = plan.method
        self.estimator_ = estimator
        self.background_ = background
        self.codec_ = codec
        self.plan_ = plan
        self.tree_ensemble_ = None if tree_plan is None else tree_plan[0]
        self._tree_output_map = None if tree_plan is None else tree_plan[1]
        self._tree_groups = None if tree_plan is None or column_group is None else tree_plan[2]
        self._column_group = column_group
        self._group_names = group_names
        self._hierarchy = hierarchy
        columns = column_names(getattr(self, "feature_names_in_", None), n_features)
        self.hierarchy_ = None if hierarchy is None else hierarchy.nested(columns)
        self.groups_ = (None if column_group is None else
                        {name: [columns[j] for j in np.flatnonzero(column_group == g)]
                         for g, name in enumerate(group_names)})
        self._linear_plan = linear_plan
        self.n_outputs_ = 1 if outputs.ndim == 1 else outputs.shape[1]
        expected = outputs.mean(axis=0)
        if linear_plan is not None:  # the base value of its Explanations
            expected = linear_plan.base.reshape(expected.shape)
        if tree_plan is not None and self.feature_perturbation == "tree_path_dependent":
            expected = (tree_plan[1] @ tree_plan[0].expected_value).reshape(expected.shape)
        self.expected_value_ = float(expected) if outputs.ndim == 1 else expected
        self.output_names_ = output_names(estimator, outputs, self.response_method)
        self.method_ = method
        self.response_method_ = (self.response_method if callable(self.response_method)
                                 else resolve_response_method(estimator,
                                                              self.response_method))
        self.sampler_ = None if plan is None else plan.sampler
        self.max_evals_ = 0 if plan is None else plan.budget
        self.random_seed_ = random_seed
        return self

    def _checked_rows(self, X, finite, *, reset):
        """(codec, float64 rows) of ``X``: a DataFrame with non-numeric columns becomes
        codes (:class:`ColumnCodec`; the codec of this call, widened by values ``fit``
        did not see), any other X is validated as numbers."""
        codec = ColumnCodec.from_frame(X) if reset else getattr(self, "codec_", None)
        if codec is None:
            return None, validate_data(self, X, dtype=np.float64, ensure_all_finite=finite,
                                       reset=reset)
        if not hasattr(X, "columns"):
            raise ValueError(
                f"X is a {type(X).__name__}, but the explainer was fitted on a DataFrame "
                f"with non-numeric columns; pass a DataFrame with the columns "
                f"{codec.columns}."
            )
        validate_data(self, X, skip_check_array=True, reset=reset)  # names and count only
        codec, codes = codec.encode(X)
        return codec, codec.checked(codes, finite, "X")

    def explain(self, X, interactions=False) -> Explanation:
        """Shapley values of the rows of ``X`` with their standard errors.

        Parameters
        ----------
        X : array-like (n_samples, n_features)
        interactions : bool, default=False
            Also compute SHAP interaction values (``method_ == "tree"`` with
            ``feature_perturbation="tree_path_dependent"``), stored in
            ``Explanation.interactions`` as (n, d, d) or (n, d, d, n_outputs); between
            groups with ``groups``.

        Returns
        -------
        Explanation
            With ``groups``, d is the number of groups: ``values`` (and ``interactions``)
            are per group, ``feature_names`` are the groups' names, and ``data`` holds
            each group's column for a group of one column and NaN for a group of several
            (no one number stands for them; plots draw NaN as missing, e.g. grey in the
            beeswarm), as does ``display_data`` (None there). The explained rows
            themselves are the ``X`` given.
        """
        if getattr(self, "method_", None) is None:
            # scikit-learn's check (and its error) only when fit's attribute is missing:
            # it reads the estimator tags, which ask whether the model takes missing
            # values, a tenth of a one-row TreeSHAP call
            check_is_fitted(self)
        X = as_frame(X, getattr(self, "codec_", None))
        column_group = getattr(self, "_column_group", None)
        # the players: the columns, or the groups of columns
        d = self.n_features_in_ if column_group is None else len(self._group_names)
        k = self.n_outputs_
        inter = None
        # the rows as given, for plots, when the explained numbers stand for text
        display = (X.to_numpy(dtype=object) if getattr(self, "codec_", None) is not None
                   and hasattr(X, "to_numpy") else None)
        if interactions and (getattr(self, "method_", None) != "tree"
                             or self.feature_perturbation != "tree_path_dependent"):
            raise ValueError(
                "interactions=True needs method='tree' with "
                "feature_perturbation='tree_path_dependent'."
            )
        method = getattr(self, "method_", None)
        if method == "tree":
            X, values, base, inter = tree_values(self, X, interactions)
        elif method == "linear":
            X, values, base = linear_values(self, X, column_group, d)
        else:
            X, values, base, std_errors, n_evaluations, n_draws = sampled_values(self, X, d, k)
        if method in ("tree", "linear"):  # exact: no errors, no evaluations
            std_errors = np.zeros_like(values)
            n_evaluations = np.zeros(X.shape[0], dtype=np.int64)
            n_draws = np.zeros(X.shape[0], dtype=np.int64)
        if k == 1:
            values, std_errors, base = values[:, :, 0], std_errors[:, :, 0], base[:, 0]
            inter = None if inter is None else inter[..., 0]
        if column_group is not None:
            feature_names = list(self._group_names)
            X, display = per_group(X, display, self._column_group, self._group_names)
        else:
            feature_names = (list(self.feature_names_in_)
                             if hasattr(self, "feature_names_in_")
                             else [f"x{j}" for j in range(d)])
        return Explanation(
            values, base, X, feature_names, std_errors=std_errors,
            output_names=self.output_names_,
            n_evaluations=n_evaluations, method=self.method_, interactions=inter,
            display_data=display, n_draws=n_draws,
            notes=() if getattr(self, "plan_", None) is None else self.plan_.notes,
            clustering=(None if getattr(self, "_hierarchy", None) is None
                        else self._hierarchy.to_linkage()),
        )

    def _outputs(self, predict, rows):
        """The explained output of float ``rows`` on the host, the model called on the
        explainer's device."""
        namespace = resolve_device(self.device)
        if namespace is None:
            return np.asarray(predict(rows), dtype=np.float64)
        return to_host(predict(namespace.asarray(rows)))

    def transform(self, X):
        """Shapley values of the rows of ``X``.

        ``X`` must hold ``fit``'s columns in ``fit``'s order: a DataFrame's columns are
        checked by name, an array is read by position (with scikit-learn's warning when
        ``fit`` saw names).

        Returns
        -------
        values : ndarray (n_samples, n_features * n_outputs)
            One column per name of :meth:`get_feature_names_out` (per group with
            ``groups``, n_groups * n_outputs columns): with several outputs
            (a multiclass classifier) feature-major, column ``j * n_outputs + o`` the
            value of feature j for output o, ``explain(X).values.reshape(n_samples, -1)``
            (``explain`` keeps the (n_samples, n_features, n_outputs) array). With
            ``set_output(transform="pandas")`` (or ``"polars"``) a DataFrame with these
            columns.
        """
        values = self.explain(X).values
        return values.reshape(values.shape[0], -1)

    def get_feature_names_out(self, input_features=None):
        """``"<feature>_shap"`` per feature (``"<feature>_shap_<output>"`` when several
        outputs are explained); with ``groups``, ``"<group>_shap"`` per group.

        Returns
        -------
        feature_names_out : ndarray of str
        """
        check_is_fitted(self)
        names = check_feature_names_in(self, input_features)
        if getattr(self, "_column_group", None) is not None:
            names = self._group_names
        if self.n_outputs_ == 1:
            return np.asarray([f"{name}_shap" for name in names], dtype=object)
        return np.asarray(
            [f"{name}_shap_{out}" for name in names for out in self.output_names_], dtype=object
        )
