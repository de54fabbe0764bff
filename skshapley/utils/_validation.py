"""Validation helpers and random-state plumbing."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skshapley._config import get_config


def as_generator(random_state) -> np.random.Generator:
    """Turn None, an int, a ``RandomState``, a ``SeedSequence`` or a ``Generator`` into a
    ``numpy.random.Generator``.

    A ``Generator`` is returned as is (it is consumed); a ``RandomState`` seeds a new
    generator from one draw, so the caller's state advances as sklearn users expect.

    Examples
    --------
    >>> from skshapley.utils import as_generator
    >>> bool(as_generator(0).integers(10) == as_generator(0).integers(10))
    True
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (Integral, np.random.SeedSequence)):
        if isinstance(random_state, Integral) and not isinstance(random_state, bool):
            if random_state < 0:
                raise ValueError(
                    f"The 'random_state' parameter must be a non-negative integer; "
                    f"got {random_state}."
                )
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    raise ValueError(
        "The 'random_state' parameter must be None, an int, a numpy RandomState, "
        f"SeedSequence or Generator; got {random_state!r}."
    )


def spawn_seed(random_state) -> int:
    """Draw one 63-bit integer seed from ``random_state`` (used to fix a stream at fit)."""
    return int(as_generator(random_state).integers(np.iinfo(np.int64).max))


def check_budget(budget, name: str = "budget") -> int:
    """Check that a budget is an integer >= 1 and return it as ``int``."""
    if isinstance(budget, bool) or not isinstance(budget, Integral) or budget < 1:
        raise ValueError(
            f"The {name!r} parameter must be a positive integer number of coalition "
            f"evaluations; got {budget!r}."
        )
    return int(budget)


def chunk_rows(bytes_per_row: float, working_memory: float | None = None) -> int:
    """How many rows of ``bytes_per_row`` bytes fit in ``working_memory`` MiB (at least 1)."""
    if working_memory is None:
        working_memory = get_config()["working_memory"]
    return max(1, int(working_memory * 2**20 // max(bytes_per_row, 1)))


def finite_policy(estimator):
    """``ensure_all_finite`` for the rows given to ``estimator``: NaN passes when the model
    takes missing values itself (scikit-learn's ``allow_nan`` tag, which a Pipeline does
    not forward, so its first step, the one that sees the raw columns, is asked);
    infinity never does.

    Examples
    --------
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from sklearn.linear_model import Ridge
    >>> from skshapley.utils import finite_policy
    >>> finite_policy(HistGradientBoostingRegressor()), finite_policy(Ridge())
    ('allow-nan', True)
    """
    from sklearn.pipeline import Pipeline
    from sklearn.utils import get_tags

    while isinstance(estimator, Pipeline):
        steps = [step for _, step in estimator.steps if step not in (None, "passthrough")]
        if not steps:
            return True
        estimator = steps[0]
    try:
        allow_nan = get_tags(estimator).input_tags.allow_nan
    except (AttributeError, TypeError, ValueError):  # an object without sklearn tags
        allow_nan = False
    return "allow-nan" if allow_nan else True
