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
    zero = NEGATIVE_RTOL * _stiffness_scale(k_mat, m_mat)  # |λ| below: a zero
    if n_dof <= DENSE_LIMIT or n_eig >= n_dof - 1:
        lam, vec = dense_eigen(k_mat, m_mat, what)
        _refuse_negative(lam, zero, what)
        order = np.argsort(np.abs(lam - sigma))[:n_eig]
        order = order[np.argsort(lam[order])]
        return lam[order], vec[:, order]
    sigma = min(sigma, -zero)  # (below the round-off of zero eigenvalues: the inertia)
    shifted, below = _shifted_factor(k_mat, m_mat, sigma)
    try:
        lam, vec = spla.eigsh(k_mat.tocsc(), k=n_eig, M=m_mat.tocsc(), sigma=sigma,
                              which="LM", mode="normal", OPinv=shifted)
    except RuntimeError as exc:  # singular shift matrix
        raise ConvergenceError(
            f"{what}: shift-invert factorisation of K - σM failed at σ = {sigma:.3g} "
            f"({exc}); the stiffness may be singular (an unconstrained mechanism)"
        ) from exc
    except spla.ArpackNoConvergence as exc:
        raise ConvergenceError(f"{what}: Lanczos did not converge ({exc})") from exc
    order = np.argsort(lam)
    _refuse_negative(lam[order], zero, what, below_shift=below)
    return lam[order], vec[:, order]


#: An eigenvalue below −NEGATIVE_RTOL max(K_ii/M_ii) is negative, not the round-off of a
#: zero (rigid-body) eigenvalue (about 1e-16 of it; the reductions call |λ| below 1e-12
#: of it a zero).
NEGATIVE_RTOL = 1e-12
#: Below this fraction of the stiffest K_ii/M_ii a negative eigenvalue may be the round-off
#: of an ill-conditioned model's zero, and the message says that it cannot tell.
ILL_CONDITIONED_RTOL = 1e-8


def _stiffness_scale(k_mat, m_mat) -> float:
    """max K_ii/M_ii over the DOFs with mass: the order of the largest eigenvalue."""
    k, m = k_mat.diagonal(), m_mat.diagonal()
    massed = m > 0
    return float(np.max(np.abs(k[massed]) / m[massed])) if np.any(massed) else 0.0


def _refuse_negative(found: np.ndarray, zero: float, what: str,
                     below_shift: int = 0) -> None:
    """ValidationError when K is not positive semidefinite: an eigenvalue found below
    −``zero``, or ``below_shift`` eigenvalues below the (negative) shift that the Lanczos
    run cannot see (a stiffness with an unstable mode: its frequency would be imaginary,
    and dropping the mode left plausible-looking frequencies)."""
    if found.size and found[0] < -zero:
        detail = (f"eigenvalue λ = {found[0]:.4g} (an unstable mode, "
                  f"{np.sqrt(-found[0]) / (2 * np.pi):.4g}i Hz)")
        if -found[0] < ILL_CONDITIONED_RTOL * zero / NEGATIVE_RTOL:
            raise ValidationError(
                f"{what}: the stiffness is not positive semidefinite, or the model too "
                f"ill-conditioned to tell: eigenvalue λ = {found[0]:.4g} is only "
                f"{-found[0] / (zero / NEGATIVE_RTOL):.2g} of the stiffest K_ii/M_ii "
                f"({zero / NEGATIVE_RTOL:.3g}), where the round-off of a rigid-body (zero) "
                "mode of elements far stiffer than their mass (very short or thick "
                "elements, a tiny rotary inertia) can lie; check the mesh, and the "
                "stiffness's signs and units")
    elif below_shift:
        detail = (f"{below_shift} eigenvalue(s) of K x = λ M x lie below zero, beyond the "
                  "modes computed")
    else:
        return
    raise ValidationError(f"{what}: the stiffness is not positive semidefinite: {detail}; "
                          "an FE stiffness must have no negative eigenvalue (a stiffness "
                          "with stress stiffening under compression, or wrong signs or "
                          "units in the export?)")


def _shifted_factor(k_mat, m_mat, sigma: float):
    """((K − σM)⁻¹ for the shift-invert Lanczos run, the number of eigenvalues below σ
    where known, else 0). Factored symmetrically without pivoting where it can be
    (SuperLU, a symmetric ordering): then the signs of U's diagonal are those of the LDLᵀ
    pivots, and their negatives count the eigenvalues below σ (Sylvester's law of
    inertia), which a negative σ has none of for a semidefinite K. (None, 0) when the
    factorization fails (eigsh then factors, and says why)."""
    try:
        lu = spla.splu((k_mat - sigma * m_mat).tocsc(), permc_spec="MMD_AT_PLUS_A",
                       diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    except RuntimeError:
        return None, 0
    below = 0
    if sigma < 0.0 and np.array_equal(lu.perm_r, lu.perm_c):  # no pivoting: inertia
        below = int(np.sum(lu.U.diagonal() < 0.0))
    return spla.LinearOperator(k_mat.shape, matvec=lu.solve, dtype=float), below


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

