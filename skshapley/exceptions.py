"""Public warnings and errors of skshapley."""


class BackendUnavailableError(RuntimeError):
    """A backend that was asked for by name cannot run on this machine.

    The message names the backend, the reason and the extra to install.
    """


class SkshapleyWarning(UserWarning):
    """Base class of the warnings skshapley raises."""


class BudgetWarning(SkshapleyWarning):
    """The budget was adjusted (e.g. rounded down to whole permutations)."""


class ConvergenceWarning(SkshapleyWarning):
    """An estimate stopped before reaching the requested tolerance."""
