"""Choosing the conditional mean embedding's regularisation eta by cross-validation
(Chau et al. 2022 select it by cross-validation without giving details): 5-fold CV over
eta in {1e-6, ..., 1} on the held-out CME loss, summed over a fixed set of coalitions;
one eta for all coalitions, as in the paper."""

from __future__ import annotations

from itertools import combinations

import numpy as np

ETA_GRID = 10.0 ** np.arange(-6, 1)


def cv_coalitions(n_players):
    """All proper coalitions when d <= 3, else every |S| = 1 and |S| = d - 1."""
    d = n_players
    if d <= 3:
        sizes = range(1, d)
        return [np.isin(np.arange(d), c) for s in sizes for c in combinations(range(d), s)]
    singles = [np.arange(d) == j for j in range(d)]
    return singles + [~mask for mask in singles]


def cme_cv_losses(diffs, *, eta_grid=ETA_GRID, n_folds=5, rng=None):
    """Held-out CME loss for every eta of the grid.

    Parameters
    ----------
    diffs : float64 (d, n, n)
        Per-feature kernel exponents of the sample (k_S = exp(-sum over S)).
    eta_grid : array of float
    n_folds : int
    rng : numpy Generator, optional
        Shuffles the rows before splitting into folds.

    Returns
    -------
    losses : float64 (len(eta_grid),)
        sum over folds, coalitions and held-out rows v of
        k_{S^c}(x_v, x_v) - 2 beta_v' G_{S^c}(tr, v) + beta_v' G_{S^c}(tr, tr) beta_v,
        with beta_v = (G_S(tr, tr) + n_tr eta I)^{-1} k_S(X_tr, x_v). One eigendecomposition
        of G_S(tr, tr) per fold and coalition serves every eta.
    """
    d, n, _ = diffs.shape
    n_folds = max(2, min(n_folds, n))
    order = np.arange(n) if rng is None else rng.permutation(n)
    folds = np.array_split(order, n_folds)
    losses = np.zeros(len(eta_grid))
    for held in folds:
        train = np.setdiff1d(order, held)
        n_train = len(train)
        for z in cv_coalitions(d):
            G_S = np.exp(-diffs[z][:, train][:, :, train].sum(axis=0))
            k_S = np.exp(-diffs[z][:, train][:, :, held].sum(axis=0))  # (tr, v)
            rest = ~z
            G_rest = np.exp(-diffs[rest][:, train][:, :, train].sum(axis=0))
            k_rest = np.exp(-diffs[rest][:, train][:, :, held].sum(axis=0))
            eigenvalues, vectors = np.linalg.eigh(G_S)
            projected = vectors.T @ k_S  # (tr, v)
            rest_rotated = vectors.T @ G_rest @ vectors
            cross = vectors.T @ k_rest  # (tr, v)
            for e, eta in enumerate(eta_grid):
                scaled = projected / (eigenvalues + n_train * eta)[:, None]  # Q' beta
                quadratic = np.einsum("iv,ij,jv->v", scaled, rest_rotated, scaled)
                linear = np.einsum("iv,iv->v", scaled, cross)
                # product kernels have k(x, x) = 1
                losses[e] += float(np.sum(1.0 - 2.0 * linear + quadratic))
    return losses
