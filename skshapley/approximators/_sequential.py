"""The sequential estimator shared by the permutation estimator and LS-SPA: draw a batch,
add it to the running mean and covariance, estimate the risk, stop at ``tol``.

The risk is the ``quantile_level`` quantile of the overall error ||phi_hat - phi||_2
under a Gaussian model of the mean of independent draws (Bell, Devanathan & Boyd 2024,
Sec. 3.6), widened by t_{K-1} / z for K draws.
"""

from __future__ import annotations

import numpy as np

from skshapley.approximators._risk import (
    ReplicateCovariance,
    RunningCovariance,
    shared_squared_draws,
    small_sample_inflation,
    spectrum_error_quantile,
)

# Gaussian draws behind each overall error quantile (D in Bell, Devanathan & Boyd 2024,
# Sec. 3.6; the authors' later scripts use 4096).


class SequentialEstimate:
    """Running mean and covariance of independent draws of a (d, k) estimate, and the
    overall error quantile of each of the k outputs.

    Parameters
    ----------
    n_features : int
    replicates : int, optional
        Randomised QMC: draws come in rounds of one per replicate, and the replicate
        means are the independent draws.
    quantile_level : float

    Examples
    --------
    >>> import numpy as np
    >>> from skshapley.approximators._sequential import SequentialEstimate
    >>> estimate = SequentialEstimate(3, quantile_level=0.95)
    >>> estimate.update(np.random.default_rng(1).normal(size=(50, 3, 1)))
    >>> estimate.n_draws, estimate.std_errors().shape
    (50, (3, 1))
    """

    def __init__(self, n_features, *, replicates=None, quantile_level=0.95):
        self.n_features = n_features
        self.replicates = replicates
        self.quantile_level = quantile_level
        self.trackers = None  # one per output, from the first draws
        self.error = None
        self._std_errors = None  # kept until the next update

    @property
    def n_draws(self) -> int:
        """Independent draws so far (the replicates for randomised QMC)."""
        if self.trackers is None:
            return 0
        return self.replicates or self.trackers[0].n

    @property
    def can_assess(self) -> bool:
        """Whether there are two independent draws to estimate a spread from."""
        return self.n_draws >= 2 and (not self.replicates or self.trackers[0].rounds >= 1)

    def update(self, draws) -> None:
        """Add draws (n, d, k), or rounds (n, replicates, d, k) with replicates."""
        if self.trackers is None:
            n_outputs, d = draws.shape[-1], self.n_features
            self.trackers = [ReplicateCovariance(d, self.replicates) if self.replicates
                             else RunningCovariance(d) for _ in range(n_outputs)]
            self.error = np.full(n_outputs, np.inf)
        self._std_errors = None
        for output, tracker in enumerate(self.trackers):
            tracker.update(draws[..., output])

    def assess(self) -> np.ndarray:
        """The overall error quantile of each output (k,) from the draws so far, widened
        for few draws; kept in :attr:`error`."""
        # The same Gaussian draws serve every output and every assessment (drawing
        # 4096 x d anew at each one took a fifth of a one-row explanation at 10 d
        # evaluations), so an output's error estimate does not depend on which other
        # outputs share the game.
        squares = shared_squared_draws(self.n_features)
        error = np.array([
            spectrum_error_quantile(tracker.covariance_eigenvalues(), self.quantile_level,
                                    squares)
            for tracker in self.trackers
        ])
        # Few draws: widen the Gaussian quantile by t_{K-1} / z, the small-sample
        # inflation (factor 1.42 at K = 5 pairs, 1.02 at K = 64).
        self.error = error * small_sample_inflation(self.n_draws, self.quantile_level)
        return self.error

    def std_errors(self) -> np.ndarray:
        """Standard errors of the mean (d, k) (computed once per update: the last
        check's record and the result both ask for them)."""
        if self._std_errors is None:
            self._std_errors = np.stack([tracker.std_errors() for tracker in self.trackers],
                                        axis=1)
        return self._std_errors


def run_sequential(draw, estimate, max_draws, check_interval, *, tol=None,
                   assess_every_check=True, on_check=None) -> tuple[int, bool | None]:
    """Draw batches until ``max_draws`` independent draws, or until the error quantile
    is below ``tol``.

    Parameters
    ----------
    draw : callable
        ``draw(n)`` -> the next ``n`` draws, shaped for ``estimate.update``.
    estimate : SequentialEstimate
    max_draws, check_interval : int
        Draws in all; draws per batch.
    tol : float, optional
    assess_every_check : bool, default=True
        Estimate the risk after every batch (for ``tol`` and convergence histories);
        False: only after the last.
    on_check : callable, optional
        ``on_check(n_draws, error)`` after every batch (error: None where no risk was
        estimated).

    Returns
    -------
    n_draws : int
    converged : bool or None
        None without ``tol``.
    """
    n_draws, converged = 0, (None if tol is None else False)
    while n_draws < max_draws:
        batch = min(check_interval, max_draws - n_draws)
        estimate.update(draw(batch))
        n_draws += batch
        last = n_draws >= max_draws
        error = None
        if estimate.can_assess and (assess_every_check or last):
            error = estimate.assess()
        if on_check is not None:
            on_check(n_draws, error)
        if tol is not None and error is not None and error.max() < tol:
            converged = True
            break
    return n_draws, converged
