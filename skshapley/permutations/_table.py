"""The samplers by name: one table for every estimator that takes a ``sampler``."""

from __future__ import annotations

from skshapley.permutations._base import PermutationSampler
from skshapley.permutations._mc import Antithetic, MonteCarlo
from skshapley.permutations._philox import Philox
from skshapley.permutations._quadrature import KernelHerding, SequentialBayesianQuadrature
from skshapley.permutations._sphere import (
    ArgsortSobol,
    Orthogonal,
    PermutohedronNormal,
    SobolSphere,
)

SAMPLERS = {
    "mc": MonteCarlo,
    "antithetic": Antithetic,
    "orthogonal": Orthogonal,
    "sobol": SobolSphere,
    "argsort_sobol": ArgsortSobol,
    "permutohedron": PermutohedronNormal,
    "philox": Philox,
    "herding": KernelHerding,
    "sbq": SequentialBayesianQuadrature,
}
# The names of the ls-spa package (Bell, Devanathan & Boyd 2024), which ``lsspa`` keeps
# accepting for its users.
ALIASES = {"argsort": "argsort_sobol", "sobol_sphere": "sobol"}
# The randomised QMC samplers: ``replicates`` independent scramblings read round-robin.
REPLICATED = frozenset({"sobol", "argsort_sobol", "permutohedron"})


def build_sampler(sampler, n_players: int, *, rng=None, replicates=None,
                  caller="the estimator") -> PermutationSampler:
    """The sampler named ``sampler`` (or an alias) for ``n_players``, or a checked
    instance.

    Parameters
    ----------
    sampler : str or PermutationSampler
    n_players : int
    rng : seed of the sampler's generator
    replicates : int, optional
        Independent scramblings of a randomised QMC sampler (``REPLICATED``); ignored by
        the others.
    caller : str
        Named in the messages.

    Examples
    --------
    >>> from skshapley.permutations import build_sampler
    >>> build_sampler("argsort", 5, rng=0, replicates=4).replicates
    4
    """
    if isinstance(sampler, PermutationSampler):
        if sampler.n_players != n_players:
            raise ValueError(
                f"sampler {sampler!r} draws orderings of {sampler.n_players} players; "
                f"{caller} has {n_players}."
            )
        return sampler
    name = ALIASES.get(sampler, sampler) if isinstance(sampler, str) else sampler
    if name not in SAMPLERS:
        raise ValueError(
            f"The 'sampler' parameter must be one of {sorted(SAMPLERS)} (or ls-spa's "
            f"names {sorted(ALIASES)}) or a PermutationSampler instance; got {sampler!r}."
        )
    if name in REPLICATED:
        return SAMPLERS[name](n_players, rng=rng, replicates=replicates)
    return SAMPLERS[name](n_players, rng=rng)
