"""The only module that imports scikit-learn's private names."""

from sklearn.base import _fit_context as fit_context  # noqa: F401
from sklearn.utils._param_validation import (  # noqa: F401
    HasMethods,
    Hidden,
    Interval,
    StrOptions,
    validate_params,
)
from sklearn.utils._set_output import _get_output_config as get_output_config  # noqa: F401, E402
from sklearn.utils.validation import (  # noqa: F401, E402
    _check_feature_names_in as check_feature_names_in,
)
from sklearn.utils.validation import (  # noqa: F401, E402
    _check_method_params as check_method_params,
)
from sklearn.utils.validation import validate_data  # noqa: F401

try:  # scikit-learn >= 1.8 keeps its dataframe checks in a module of their own
    from sklearn.utils._dataframe import is_polars_df, is_pyarrow_data  # noqa: F401
except ImportError:  # scikit-learn 1.6 and 1.7
    from sklearn.utils.validation import _is_polars_df as is_polars_df  # noqa: F401

    def is_pyarrow_data(X):
        """True for a pyarrow Table, RecordBatch, Array or ChunkedArray, as scikit-learn's
        check (private in 1.7, missing in 1.6): pyarrow is looked up, never imported."""
        import sys

        pa = sys.modules.get("pyarrow")
        return pa is not None and isinstance(
            X, (pa.Table, pa.RecordBatch, pa.Array, pa.ChunkedArray))



class NumberInterval(Interval):
    """scikit-learn's ``Interval`` over numbers proper: a bool is refused.

    scikit-learn's ``Interval(Integral, 1, None, closed="left")`` takes ``True`` as the
    integer 1 (and ``Interval(Real, ...)`` as 1.0), since ``bool`` subclasses ``int``;
    here a flag passed for a count or a size is an error, as the hand-written checks
    ``isinstance(x, bool) or not isinstance(x, Integral)`` had it. (``numpy.bool_`` is no
    ``numbers.Integral`` or ``numbers.Real``, so both intervals refuse it already.)

    Examples
    --------
    >>> from numbers import Integral
    >>> from skshapley.utils import NumberInterval
    >>> NumberInterval(Integral, 1, None, closed="left").is_satisfied_by(True)
    False
    >>> NumberInterval(Integral, 1, None, closed="left").is_satisfied_by(3)
    True
    """

    def is_satisfied_by(self, val):
        return not isinstance(val, bool) and super().is_satisfied_by(val)


# threadpoolctl is scikit-learn's dependency, not a declared one of ours: taken through
# here, where scikit-learn's requirements are relied on. scikit-learn keeps one
# controller per process: a fresh threadpool_limits scans the loaded libraries each time
# (~12 ms a call, measured; a one-row explanation made two).
from sklearn.utils.fixes import _get_threadpool_controller  # noqa: E402


def threadpool_limits(limits, user_api=None):
    """``threadpoolctl.threadpool_limits`` through scikit-learn's cached controller."""
    return _get_threadpool_controller().limit(limits=limits, user_api=user_api)
