"""Weighted least squares with one exact linear constraint, and its sandwich variance
over sampled blocks.

The regression estimators of the KernelSHAP family all reduce to

    minimise  sum_i w_i (y_i - x_i' beta)^2   subject to   a' beta = c,

followed by a linear read-out phi = T beta. The constraint (efficiency) is imposed by
eliminating one coordinate, so it holds to round-off whatever the data; the reduced
normal equations are solved by Cholesky, never by an explicit inverse.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh

from skshapley.exceptions import BudgetWarning


class SingularDesign(LinAlgError):
    """The design cannot identify the regression's unknowns (raised instead of the
    minimum-norm fallback when the caller has a smaller model to fall back to)."""


def _solve_normal(hessian, rhs, *, singular="warn"):
    """Cholesky solve; a singular system (too few coalitions for the unknowns) falls back
    to the minimum-norm solution with a warning, or raises :class:`SingularDesign`
    (``singular="raise"``)."""
    try:
        factor = cho_factor(hessian, lower=True, check_finite=False)
        solution = cho_solve(factor, rhs, check_finite=False)
        inverse_apply = lambda b: cho_solve(factor, b, check_finite=False)  # noqa: E731
        if np.all(np.isfinite(solution)):
            return solution, inverse_apply, True
    except LinAlgError:
        pass
    if singular == "raise":
        raise SingularDesign(f"a design of rank below {hessian.shape[0] + 1}")
    eigenvalues, vectors = eigh(hessian)
    keep = eigenvalues > eigenvalues.max() * hessian.shape[0] * np.finfo(float).eps
    pinv = (vectors[:, keep] / eigenvalues[keep]) @ vectors[:, keep].T
    warnings.warn(
        f"the regression has {hessian.shape[0] + 1} unknowns but its design has rank "
        f"{int(keep.sum()) + 1}: the budget is too small for this estimator, so the "
        "minimum-norm solution is returned; increase the budget or use method='kernel'.",
        BudgetWarning, stacklevel=4,
    )
    return pinv @ rhs, (lambda b: pinv @ b), False


# Below this many rows x columns^2 the Gram matrix is one matrix product; above, the
# symmetric rank-k update (BLAS syrk) computes half of it: at d = 500 and 16,000 pairs
# the product took 0.4 of a one-row explanation's 4 s.
SYRK_MIN_FLOPS = 1e7


def _weighted_gram(rows, weights):
    """X' diag(w) X of ``rows`` X (n, p) and ``weights`` w (n,)."""
    n, p = rows.shape
    if n * p * p < SYRK_MIN_FLOPS or not (weights >= 0).all():
        return rows.T @ (rows * weights[:, None])
    from scipy.linalg.blas import dsyrk

    scaled = rows * np.sqrt(weights)[:, None]
    # scaled' scaled from the transposed view (Fortran order, no copy): the lower
    # triangle, mirrored
    lower = dsyrk(1.0, scaled.T, lower=1)
    return np.tril(lower) + np.tril(lower, -1).T


def constrained_wls(features, weights, targets, constraint, value, readout, *,
                    penalty=None, influence=True, singular="warn"):
    """Solve the constrained problem and return the read-out and what the variance needs.

    Parameters
    ----------
    features : float64 (n, p)
    weights : float64 (n,)
    targets : float64 (n, k)
    constraint : float64 (p,)
        The vector a of a' beta = c.
    value : float64 (k,)
        The right-hand side c, one per output.
    readout : float64 (d, p)
        T in phi = T beta.
    penalty : float64 (p,), optional
        Ridge penalty per coefficient (0 for the unpenalised ones).
    influence : bool, default=True
        Whether to compute the influence rows (skipped when only a fit is needed).
    singular : {"warn", "raise"}, default="warn"
        A design that cannot identify the unknowns: the minimum-norm solution with a
        ``BudgetWarning``, or :class:`SingularDesign`.

    Returns
    -------
    phi : float64 (d, k)
    beta : float64 (p, k)
    influence : Influence or None
        Each observation's first-order contribution to phi - E phi: the rows of the
        sandwich estimator, to be summed within blocks (factorised, so that k outputs
        do not hold n x d x k numbers at once).
    """
    features = np.asarray(features, dtype=np.float64)
    n, p = features.shape
    k = targets.shape[1]
    pivot = int(np.argmax(np.abs(constraint)))
    rest = np.delete(np.arange(p), pivot)
    scale = constraint[rest] / constraint[pivot]
    # beta_pivot = (c - a_rest' theta) / a_pivot: substitute into the residual.
    reduced = features[:, rest] - np.outer(features[:, pivot], scale)
    shifted = targets - np.outer(features[:, pivot], value / constraint[pivot])
    hessian = _weighted_gram(reduced, weights)
    if penalty is not None:
        hessian[np.diag_indices_from(hessian)] += penalty[rest]
    # Output by output (matrix-vector products): a matrix product over all outputs may
    # round an output differently with other outputs beside it, and stacked games (an
    # explainer's rows) must give each output the bits it gets alone, for any n_jobs.
    # Columns are copied contiguous first: BLAS rounds a strided vector (one output of
    # several) differently from a contiguous one (a single output).
    column = lambda a, j: np.ascontiguousarray(a[:, j])  # noqa: E731
    theta = np.empty((p - 1, k))
    theta[:, 0], apply_inverse, _ = _solve_normal(
        hessian, reduced.T @ (weights * column(shifted, 0)), singular=singular)
    for j in range(1, k):
        theta[:, j] = apply_inverse(reduced.T @ (weights * column(shifted, j)))
    beta = np.empty((p, k))
    beta[rest] = theta
    beta[pivot] = [(value[j] - constraint[rest] @ column(theta, j)) / constraint[pivot]
                   for j in range(k)]
    phi = np.stack([readout @ column(beta, j) for j in range(k)], axis=1)
    if not influence:
        return phi, beta, None
    # d phi / d theta = T_rest - T_pivot scale'  (through the eliminated coordinate).
    lift = readout[:, rest] - np.outer(readout[:, pivot], scale)  # (d, p-1)
    projected = reduced @ apply_inverse(lift.T)  # (n, d): row i is (lift H^-1 x_i)'
    residuals = np.stack([shifted[:, j] - reduced @ column(theta, j) for j in range(k)],
                         axis=1)
    return phi, beta, Influence(projected, weights[:, None] * residuals)


class Influence:
    """Influence rows of a weighted least-squares fit, kept as two factors: row i of
    output j is ``projected[i] * weighted_residuals[i, j]``.

    Parameters
    ----------
    projected : float64 (n, d)
    weighted_residuals : float64 (n, k)
    fold : int, optional
        Sum rows i and i + fold (the two sides of a complementary pair, one block).
    """

    def __init__(self, projected, weighted_residuals, fold=None):
        self.projected, self.weighted_residuals, self.fold = (projected, weighted_residuals,
                                                              fold)

    def of_output(self, j) -> np.ndarray:
        """The (n_blocks, d) influence rows of output ``j``."""
        rows = self.projected * self.weighted_residuals[:, j, None]
        return rows if self.fold is None else rows[: self.fold] + rows[self.fold :]


def stratified_factor(block_influence, strata, population):
    """A factor A of the covariance A'A of a sum over sampled blocks, stratified, without
    replacement.

    Parameters
    ----------
    block_influence : float64 (n_blocks, d)
        Summed influence of each sampled block, for one output.
    strata : int64 (n_blocks,)
        Stratum of each block.
    population : dict
        Blocks in the population of each stratum (for the finite-population correction).

    Returns
    -------
    factor : float64 (n_blocks, d) or None
        Rows centred within their stratum and scaled by its finite-population and
        degrees-of-freedom factors; None when a stratum cannot estimate its variance
        (infinite variance). Strata with a single sampled block are pooled with their
        neighbour (collapsed strata), which can only overstate the variance.
    """
    n_blocks, d = block_influence.shape
    if n_blocks == 0:
        return np.zeros((0, d))
    labels, label_of_block, counts = np.unique(strata, return_inverse=True,
                                               return_counts=True)
    # consecutive labels pooled until a group holds two blocks; a single-block tail
    # joins the last group
    group_of_label = np.empty(labels.shape[0], dtype=np.int64)
    group, held = 0, 0
    for i, count in enumerate(counts.tolist()):
        group_of_label[i] = group
        held += count
        if held >= 2:
            group, held = group + 1, 0
    if held and group:
        group_of_label[group_of_label == group] = group - 1
    n_groups = int(group_of_label.max()) + 1
    # one pass per array instead of two np.isin per group (they took half of a one-row
    # explanation's error estimate at d = 50)
    group_of_block = group_of_label[label_of_block]
    m = np.bincount(group_of_block, minlength=n_groups)
    if (m < 2).any():
        return None
    total = np.bincount(group_of_label, weights=np.array(
        [population[label] for label in labels.tolist()], dtype=np.float64),
        minlength=n_groups)
    fpc = np.maximum(0.0, 1.0 - m / total)
    # group sums by reduceat over the rows in group order (np.add.at took 22 ms an
    # output at 7,500 blocks x 500 players); designs list their strata in order already
    if (np.diff(group_of_block) >= 0).all():
        ordered = block_influence
        starts = np.searchsorted(group_of_block, np.arange(n_groups))
    else:
        order = np.argsort(group_of_block, kind="stable")
        ordered = block_influence[order]
        starts = np.searchsorted(group_of_block[order], np.arange(n_groups))
    sums = np.add.reduceat(ordered, starts, axis=0)
    centred = block_influence - (sums / m[:, None])[group_of_block]
    return centred * np.sqrt(fpc * m / (m - 1))[group_of_block, None]
