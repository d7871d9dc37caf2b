"""Sparse and dense generalized eigen solvers of the modal reductions.

K x = λ M x for the lowest eigenpairs: shift-invert Lanczos (``scipy.sparse.linalg.eigsh``)
for large models, dense LAPACK below :data:`DENSE_LIMIT` DOFs. DOFs without mass are
condensed statically in the dense solver, which is exact for the eigenproblem
(docs/modal_front_end.md).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import ConvergenceError, ValidationError

#: Below this many DOFs the dense LAPACK solver is faster and more robust than Lanczos.
DENSE_LIMIT = 600


def eigen(k_mat: sp.spmatrix, m_mat: sp.spmatrix, n_eig: int, sigma: float,
           what: str) -> tuple[np.ndarray, np.ndarray]:
    """Lowest ``n_eig`` eigenpairs of K x = λ M x nearest ``sigma`` (ascending λ)."""
    n_dof = k_mat.shape[0]
    if n_eig <= 0:
        return np.zeros(0), np.zeros((n_dof, 0))
    if n_eig > n_dof:
        raise ValidationError(f"{what}: asked for {n_eig} modes but only {n_dof} DOFs remain")
    if n_dof <= DENSE_LIMIT or n_eig >= n_dof - 1:
        lam, vec = dense_eigen(k_mat, m_mat, what)
        order = np.argsort(np.abs(lam - sigma))[:n_eig]
        order = order[np.argsort(lam[order])]
        return lam[order], vec[:, order]
    try:
        lam, vec = spla.eigsh(k_mat.tocsc(), k=n_eig, M=m_mat.tocsc(), sigma=sigma,
                              which="LM", mode="normal")
    except RuntimeError as exc:  # singular shift matrix
        raise ConvergenceError(
            f"{what}: shift-invert factorisation of K - σM failed at σ = {sigma:.3g} "
            f"({exc}); the stiffness may be singular (an unconstrained mechanism)"
        ) from exc
    except spla.ArpackNoConvergence as exc:
        raise ConvergenceError(f"{what}: Lanczos did not converge ({exc})") from exc
    order = np.argsort(lam)
    return lam[order], vec[:, order]


def dense_eigen(k_mat: sp.spmatrix, m_mat: sp.spmatrix, what: str
                 ) -> tuple[np.ndarray, np.ndarray]:
    """All eigenpairs of K x = λ M x, dense. DOFs without mass (rotations of a lumped
    beam mass, massless interface DOFs) are condensed statically first, which is exact
    for the eigenproblem: x₀ = −K₀₀⁻¹ K₀ₘ xₘ (their infinite eigenvalues are not
    returned)."""
    k = k_mat.toarray()
    m = m_mat.toarray()
    massless = np.flatnonzero(~np.any(m != 0.0, axis=1))
    if massless.size == 0:
        return _eigh(k, m, what, np.arange(k.shape[0]))
    massed = np.setdiff1d(np.arange(k.shape[0]), massless)
    k00 = k[np.ix_(massless, massless)]
    try:
        transfer = -sla.solve(k00, k[np.ix_(massless, massed)], assume_a="sym")
    except (sla.LinAlgError, ValueError) as exc:
        raise ValidationError(
            f"{what}: {massless.size} DOF(s) without mass have a singular stiffness among "
            f"themselves (e.g. DOF {int(massless[0])}): they can move without strain energy "
            f"or kinetic energy ({exc})") from None
    k_c = k[np.ix_(massed, massed)] + k[np.ix_(massed, massless)] @ transfer
    lam, vec_m = _eigh(0.5 * (k_c + k_c.T), m[np.ix_(massed, massed)], what, massed)
    vec = np.zeros((k.shape[0], lam.size))
    vec[massed] = vec_m
    vec[massless] = transfer @ vec_m
    return lam, vec


def _eigh(k: np.ndarray, m: np.ndarray, what: str, dofs: np.ndarray):
    """``scipy.linalg.eigh(k, m)``; a mass that is not positive definite (LAPACK's
    Cholesky stops at a leading minor) is refused naming the row where it stops
    (``dofs`` maps the rows of ``m`` to those of the eigenproblem given)."""
    try:
        return sla.eigh(k, m)
    except sla.LinAlgError as exc:
        order = [int(v) for v in str(exc).split() if v.isdigit()]
        row = (f" at row {int(dofs[order[0] - 1])} of the eigenproblem"
               if order and 0 < order[0] <= len(dofs) else "")
        raise ValidationError(
            f"{what}: the mass matrix is not positive definite on its DOFs with mass "
            f"(the Cholesky factorisation stops{row}): a mass entry is missing or wrong"
        ) from None

