"""Groups of columns as players: the ``groups`` parameter read into a column -> group map."""

from __future__ import annotations

from numbers import Integral

import numpy as np


def _column_index(column, names, has_names, where, caller):
    """Position of ``column`` (a name, or a position) among the columns ``names``."""
    if isinstance(column, (bool, np.bool_)):
        raise TypeError(
            f"The 'groups' parameter of {caller} names columns by name or position; got "
            f"the bool {column!r} in {where}."
        )
    if isinstance(column, Integral):
        if not 0 <= column < len(names):
            raise ValueError(
                f"The 'groups' parameter of {caller} has the column position {column} in "
                f"{where}, but X has {len(names)} columns (positions 0 to "
                f"{len(names) - 1})."
            )
        return int(column)
    if isinstance(column, str):
        if not has_names:
            raise ValueError(
                f"The 'groups' parameter of {caller} names the column {column!r} in "
                f"{where}, but X has no column names; give positions, or fit on a "
                "DataFrame."
            )
        if column not in names:
            raise ValueError(
                f"The 'groups' parameter of {caller} has the unknown column {column!r} in "
                f"{where}; X's columns are {list(names)}."
            )
        return names.index(column)
    raise TypeError(
        f"The 'groups' parameter of {caller} names columns by name (str) or position "
        f"(int); got {column!r} of type {type(column).__name__} in {where}."
    )


def check_groups(groups, names, *, has_names=True, caller="ShapleyExplainer"):
    """Read the ``groups`` parameter: the players made of columns.

    Parameters
    ----------
    groups : dict or list
        ``{name: columns}``, or ``[columns, ...]`` whose groups are named by their
        columns joined with "+". ``columns`` is a list of column names or positions, or
        one of them (a group of one column).
    names : list of str
        The columns' names (``x0, x1, ...`` for an array without names).
    has_names : bool, default=True
        Whether X has column names; without them columns are given by position only.
    caller : str, default="ShapleyExplainer"
        Named in the messages.

    Returns
    -------
    group_names : list of str (n_groups,)
    column_group : int64 ndarray (n_columns,)
        The group of each column: every column is in exactly one group.

    Raises
    ------
    ValueError
        Naming the unknown column, the column put in two groups, the empty group, or
        the columns left in no group.
    TypeError
        For ``groups`` that is neither a dict nor a list, or a column that is neither a
        name nor a position.

    Examples
    --------
    >>> from skshapley.utils._groups import check_groups
    >>> check_groups({"body": ["bmi", "bp"], "age": "age"}, ["age", "bmi", "bp"])
    (['body', 'age'], array([1, 0, 0]))
    >>> check_groups([[0], [1, 2]], ["age", "bmi", "bp"])[0]
    ['age', 'bmi+bp']
    """
    if isinstance(groups, dict):
        labelled = [(str(name), columns) for name, columns in groups.items()]
    elif isinstance(groups, (list, tuple)):
        labelled = [(None, columns) for columns in groups]
    else:
        raise TypeError(
            f"The 'groups' parameter of {caller} must be a dict (name -> columns), a list "
            f"of lists of columns or None; got {type(groups).__name__}."
        )
    if not labelled:
        raise ValueError(
            f"The 'groups' parameter of {caller} is empty; give at least one group, or "
            "None for one player per column."
        )
    names = [str(name) for name in names]
    column_group = np.full(len(names), -1, dtype=np.int64)
    owner = {}  # column -> where it was put, for the message of a second group
    group_names = []
    for k, (label, columns) in enumerate(labelled):
        where = f"group {label!r}" if label is not None else f"group {k}"
        if isinstance(columns, (str, Integral)) and not isinstance(columns, bool):
            columns = [columns]
        try:
            columns = list(columns)
        except TypeError:
            raise TypeError(
                f"The 'groups' parameter of {caller} needs a list of columns for each "
                f"group; {where} is {columns!r}."
            ) from None
        if not columns:
            raise ValueError(
                f"The 'groups' parameter of {caller} has an empty {where}; every group "
                "needs at least one column."
            )
        positions = []
        for column in columns:
            j = _column_index(column, names, has_names, where, caller)
            if j in owner:
                before = owner[j]
                said = "twice in" if before == where else f"in {before} and in"
                raise ValueError(
                    f"The 'groups' parameter of {caller} puts the column {names[j]!r} "
                    f"{said} {where}; each column belongs to one group."
                )
            owner[j] = where
            positions.append(j)
        column_group[positions] = k
        name = label if label is not None else "+".join(names[j] for j in positions)
        if name in group_names:
            raise ValueError(
                f"The 'groups' parameter of {caller} names two groups {name!r}; give the "
                "groups distinct names."
            )
        group_names.append(name)
    left_out = [names[j] for j in np.flatnonzero(column_group < 0)]
    if left_out:
        raise ValueError(
            f"The 'groups' parameter of {caller} leaves the columns {left_out} in no "
            "group; put each column in exactly one group (a group of its own is fine, "
            f"e.g. {{{left_out[0]!r}: [{left_out[0]!r}]}})."
        )
    return group_names, column_group


def group_matrix(column_group, n_groups):
    """float64 (n_columns, n_groups): 1 where a column belongs to a group; values of
    columns times it are their groups' sums."""
    matrix = np.zeros((len(column_group), n_groups))
    matrix[np.arange(len(column_group)), column_group] = 1.0
    return matrix
