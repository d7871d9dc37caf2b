"""The rigid-body motions of an FE model, and whether DOFs held fixed remove them
(docs/modal_front_end.md, "Reduction")."""

from __future__ import annotations

import numpy as np

from ..errors import ValidationError
from .femodel import FEModel


def rigid_body_basis(fe: FEModel) -> np.ndarray:
    """The six rigid-body motions of the FE DOFs (translations, then small rotations).

    Returns
    -------
    ndarray, shape (n_dof, 6)
        Column a < 3 translates by e_a [m]; column 3 + a rotates by 1 rad about axis a
        through the frame origin (translations ω × x; rotational DOFs equal ω).
    """
    basis = np.zeros((fe.n_dof, 6))
    dpn = fe.dofs_per_node
    for a in range(3):
        basis[a::dpn, a] = 1.0
        omega = np.zeros(3)
        omega[a] = 1.0
        basis[fe.translational_dofs, 3 + a] = np.cross(omega, fe.nodes).ravel()
        if dpn == 6:
            basis[3 + a::dpn, 3 + a] = 1.0
    return basis


def diag_ratio(fe: FEModel) -> float:
    """max K_ii / M_ii: an upper estimate of the stiffest eigenvalue [1/s²]."""
    k_diag = np.abs(fe.stiffness.diagonal())
    m_diag = np.abs(fe.mass.diagonal())
    ok = m_diag > 0
    return float(np.max(k_diag[ok] / m_diag[ok])) if np.any(ok) else 1.0


def check_restrains(fe: FEModel, dofs: np.ndarray, what: str) -> None:
    """Raise unless fixing ``dofs`` removes all six rigid-body motions.

    Geometric first, independent of the eigen solver: the rigid motions restricted to
    ``dofs`` (rotations scaled by the body size) must have rank 6. Two nodes of a solid
    leave the rotation about the line through them free; one node without rotational
    DOFs leaves all rotations free. Then the stiffness decides: rigid motions left free
    that move no mass, or that K resists (springs to ground, or springs along fixed
    axes: a K that is not rotation-invariant), are no mechanism.
    """
    size = max(float(np.max(np.ptp(fe.nodes, axis=0))), 1e-300)
    full = rigid_body_basis(fe)
    full[:, 3:] /= size
    basis = full[dofs]
    if dofs.size == 0:
        sv, vt = np.zeros(6), np.eye(6)
    else:
        _, sv, vt = np.linalg.svd(basis, full_matrices=True)
        sv = np.concatenate([sv, np.zeros(6 - sv.size)])
    free = np.flatnonzero(sv < 1e-9 * max(sv[0], 1.0))
    if free.size == 0:
        return
    motions = full @ vt[free].T  # (n_dof, f): the rigid motions the fixed DOFs leave free
    m_r = motions.T @ (fe.mass @ motions)
    k_r = motions.T @ (fe.stiffness @ motions)
    weight, vectors = np.linalg.eigh(0.5 * (m_r + m_r.T))
    moving = weight > 1e-12 * max(float(weight.max()), 1e-300)
    if not moving.any():
        return  # they move no mass
    span = vectors[:, moving] / np.sqrt(weight[moving])  # M-orthonormal combinations
    energy, combo = np.linalg.eigh(span.T @ k_r @ span)
    if energy[0] > 1e-10 * diag_ratio(fe):
        return  # the stiffness holds them
    motion = vt[free].T @ (span @ combo[:, 0])
    parts = []
    if np.linalg.norm(motion[:3]) > 1e-6 * np.linalg.norm(motion):
        parts.append("translation along " + np.array2string(
            motion[:3] / np.linalg.norm(motion), precision=3))
    if np.linalg.norm(motion[3:]) > 1e-6 * np.linalg.norm(motion):
        parts.append("rotation about " + np.array2string(
            motion[3:] / np.linalg.norm(motion[3:]), precision=3))
    n_free = int(np.sum(energy <= 1e-10 * diag_ratio(fe)))
    raise ValidationError(
        f"{what} does not remove all rigid motion: {n_free} rigid-body motion(s) "
        f"leave every fixed DOF at rest, e.g. {' + '.join(parts)}; fix more nodes (or "
        f"nodes with rotational DOFs)"
    )
