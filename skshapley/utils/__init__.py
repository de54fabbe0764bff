"""Small helpers shared by every layer: random generators, chunk sizes, checks."""

from skshapley.utils._state import restored_on_failure
from skshapley.utils._validation import (
    as_generator,
    check_budget,
    chunk_rows,
    finite_policy,
    missing_value_support,
    spawn_seed,
    takes_missing_values,
)

__all__ = ["as_generator", "check_budget", "chunk_rows", "finite_policy",
           "missing_value_support", "restored_on_failure", "spawn_seed", "takes_missing_values"]
