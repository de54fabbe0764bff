"""All-or-nothing updates of an object's attributes."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def restored_on_failure(*objects):
    """Put the attributes of ``objects`` back as they were if the block raises.

    Estimators use it so that a failed ``fit`` leaves a fitted estimator as it was
    (``validate_data`` sets ``n_features_in_`` before later checks can fail), and the
    moment sketches so that a rejected batch changes no state. The saved copies are
    shallow: the block must replace attributes, not mutate them in place.

    Examples
    --------
    >>> class Box:
    ...     pass
    >>> box = Box(); box.size = 1
    >>> try:
    ...     with restored_on_failure(box):
    ...         box.size = 2
    ...         raise ValueError("rejected")
    ... except ValueError:
    ...     pass
    >>> box.size
    1
    """
    saved = [dict(obj.__dict__) for obj in objects]
    try:
        yield
    except BaseException:
        for obj, state in zip(objects, saved, strict=True):
            obj.__dict__.clear()
            obj.__dict__.update(state)
        raise
