"""A 2-D view of high-dimensional queries and keys (a real head has d_k = 32).

``pca_2d(q, k)`` projects the queries and keys onto the same two orthonormal directions: the two that
keep the most of their squared length (the top right-singular vectors of the stacked rows [Q; K]).
The rows are *not* centred: the origin stays the origin, so an arrow from 0 is still the vector's
projection and q₂·k₂ = q·P·Pᵀ·k is the dot product of the projections — close to q·k when the two
directions carry most of the energy (``explained`` says how much).  Signs are fixed (the largest
loading of each direction is positive) so a head's picture does not flip between runs.
"""

from __future__ import annotations

import numpy as np


def pca_basis(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The d×2 orthonormal basis and the fraction of Σ‖row‖² each direction keeps (2 numbers)."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1]:
        raise ValueError(f"q and k must be tables with the same width, not {q.shape} and {k.shape}")
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(k))):
        raise ValueError("q and k must hold finite numbers")
    d = q.shape[1]
    rows = np.concatenate([q, k], axis=0)
    total = float(np.sum(rows * rows))
    if d == 1:
        basis = np.array([[1.0, 0.0]])
        explained = np.array([1.0 if total > 0 else 0.0, 0.0])
        return basis, explained
    _, s, vt = np.linalg.svd(rows, full_matrices=False)
    basis = np.zeros((d, 2))
    m = min(2, vt.shape[0])
    basis[:, :m] = vt[:m].T
    if m < 2:  # a single row: any unit vector orthogonal to the first will do
        e = np.zeros(d)
        e[int(np.argmin(np.abs(basis[:, 0])))] = 1.0
        e -= basis[:, 0] * (basis[:, 0] @ e)
        basis[:, 1] = e / np.linalg.norm(e)
    for j in range(2):
        if basis[int(np.argmax(np.abs(basis[:, j]))), j] < 0:
            basis[:, j] = -basis[:, j]
    energy = np.zeros(2)
    energy[:m] = s[:m] ** 2
    explained = energy / total if total > 0 else np.zeros(2)
    return basis, explained


def pca_2d(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries and keys in the same 2-D projection: ``(q2, k2, explained)``.

    ``q2`` is n×2, ``k2`` m×2 and ``explained`` the fraction of the rows' total squared length each of
    the two axes keeps (so ``explained.sum()`` ≤ 1 says how faithful the picture is).  See the module
    notes: not centred, so the origin and dot products keep their meaning.
    """
    basis, explained = pca_basis(q, k)
    return np.asarray(q, dtype=np.float64) @ basis, np.asarray(k, dtype=np.float64) @ basis, explained
