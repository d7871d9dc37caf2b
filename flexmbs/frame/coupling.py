"""Floating-frame kernels: the generalized mass matrix and quadratic velocity vector of a
flexible body from its inertia invariants, in every coupling mode (FFRF.md §4, §5, §7, §9).

Pure functions of (invariants, M_ff, p, ξ, rates); cost O(n_m²) (plus O(n_m³) for the
dense (7+n)² products), never touching the FE nodes.

Quasi-velocities w = [v̄, ω̄, ξ̇] = C q̇ with C = blockdiag(Aᵀ, Ḡ, I). Body-frame mass
M̄(ξ) from the general invariant set (§9), with its ξξ block replaced by the body's modal
mass M_ff (identical when the mass description holds all inertia; otherwise the source's
M_ff keeps the frequencies right). q-form: M = Cᵀ M̄ C, Q_v = Cᵀ Q̄ (§5.2).
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

import numpy as np

from ..modal.invariants import InertiaInvariants
from .rotations import cross3, g_bar, rotation_matrix


class Coupling(str, Enum):
    """Rigid–elastic coupling modes (ARCHITECTURE.md §4, FFRF.md §7)."""

    TWO_WAY = "two-way"
    """Full coupled mass matrix and quadratic velocity vector; energy conserving."""
    ONE_WAY = "one-way"
    """Rigid rows (R, p) use the rigid-body terms at ξ = 0: they drop M_Rf, M_θf, the
    ξ-dependent parts of M_Rθ and M_θθ and every ξ, ξ̇ term of Q_v, so the rigid motion
    is that of the rigid body; the elastic rows keep all inertial excitation (M_ξR, M_ξp,
    Q_v,f). Joints see the markers at ξ = 0 and applied forces act on the rigid rows with
    undeformed lever arms (their ξ rows still excite the modes), as FFRF.md §7
    recommends. M is block lower-triangular, not symmetric; energy is not conserved."""
    RIGID = "rigid"
    """As one-way in the rigid rows; the elastic rows are decoupled: no inertial coupling,
    no gravity, joints and forces see the undeformed body (markers at ξ = 0, no ξ
    columns), and M_ff ξ̈ = −K_ff ξ − D_ff ξ̇ keeps ξ = 0 (initial ξ and ξ̇ are set to
    zero). The body moves exactly as a rigid body with the same mass properties."""
    NO_MRF = "no-Mrf"
    """The seed document's experiment: M_Rf and M_θf zeroed in both rows (M stays
    symmetric), Q_v unchanged; energy is not conserved (Q_v no longer derives from the
    reduced kinetic energy, FFRF.md §7)."""


class FlexibleState(NamedTuple):
    """Body-frame quantities shared by the mass and Q_v evaluations."""

    a: np.ndarray  # A(p)
    gb: np.ndarray  # Ḡ(p)
    mbar: np.ndarray  # M̄ (6+n)² (coupling mode applied)
    w: np.ndarray  # [v̄, ω̄, ξ̇]


def body_mass(inv: InertiaInvariants, m_ff: np.ndarray, xi, mode: Coupling) -> np.ndarray:
    """M̄ (6+n)x(6+n) in quasi-velocities for coupling ``mode`` (may be non-symmetric)."""
    n = inv.n_modes
    full = inv.blocks(xi).assemble()
    full[6:, 6:] = m_ff
    if mode is Coupling.TWO_WAY:
        return full
    out = full.copy()
    if mode is Coupling.NO_MRF:
        out[:6, 6:] = 0.0
        out[6:, :6] = 0.0
        return out
    rigid = inv.blocks(np.zeros(n)).assemble()
    out[:6, :6] = rigid[:6, :6]
    out[:6, 6:] = 0.0
    if mode is Coupling.RIGID:
        out[6:, :6] = 0.0
    return out


def generalized_mass(inv, m_ff, p, xi, mode: Coupling = Coupling.TWO_WAY) -> np.ndarray:
    """M(q) = Cᵀ M̄ C, shape (7+n)x(7+n) (FFRF.md §4); singular along [0; p; 0]."""
    n = inv.n_modes
    c = _c_matrix(p, n)
    return c.T @ body_mass(inv, m_ff, xi, mode) @ c


def _c_matrix(p, n):
    c = np.zeros((6 + n, 7 + n))
    c[:3, :3] = rotation_matrix(p).T
    c[3:6, 3:7] = g_bar(p)
    c[6:, 7:] = np.eye(n)
    return c


def _general_qbar(inv: InertiaInvariants, mbar: np.ndarray, w: np.ndarray, xi, xid):
    """Q̄ of FFRF.md §9 for the body-frame mass ``mbar`` at (ξ, ξ̇) and w."""
    n = inv.n_modes
    v, om = w[:3], w[3:6]
    h = mbar @ w
    n_xid = np.tensordot(xid, inv.N, axes=(0, 0)) if n else np.zeros((6, 3))  # Σ ξ̇_j N_j
    # Σ_i ξ_i (Q_ij + Q_ji) for each j: (n, 3, 3)
    qs = (np.einsum("i,ijab->jab", xi, inv.Q) + np.einsum("i,jiab->jab", xi, inv.Q)
          if n else np.zeros((0, 3, 3)))
    mdot_w = n_xid @ om
    mdot_w[3:6] += n_xid.T @ w + np.einsum("j,jab->ab", xid, qs) @ om if n else 0.0
    quad = np.zeros(6 + n)
    quad[:3] = cross3(om, h[:3])
    quad[3:6] = cross3(om, h[3:6]) + cross3(v, h[:3])
    if n:
        nw = np.einsum("jka,k->ja", inv.N, w)  # N_jᵀ w, (n, 3)
        quad[6:] = -0.5 * (2 * nw @ om + np.einsum("a,jab,b->j", om, qs, om))
    return -mdot_w - quad + mbar[:, :3] @ cross3(om, v)


def quadratic_velocity(inv, m_ff, p, xi, rd, pd, xid,
                       mode: Coupling = Coupling.TWO_WAY) -> np.ndarray:
    """Q_v = Cᵀ Q̄ (7+n), the closed-form quadratic velocity vector (FFRF.md §5.2, §9).

    p-rows are orthogonal to p (the multiplier-consistent form). In one-way and rigid
    modes the rigid rows use the ξ = 0 terms only (FFRF.md §7)."""
    n = inv.n_modes
    xi = np.asarray(xi, dtype=float)
    xid = np.asarray(xid, dtype=float)
    a = rotation_matrix(p)
    gb = g_bar(p)
    w = np.concatenate([a.T @ rd, gb @ pd, xid])
    if mode in (Coupling.TWO_WAY, Coupling.NO_MRF):
        # no-Mrf keeps the two-way Q_v unchanged (FFRF.md §7): use the full M̄
        qbar = _general_qbar(inv, body_mass(inv, m_ff, xi, Coupling.TWO_WAY), w, xi, xid)
    else:
        rigid = body_mass(inv, m_ff, np.zeros(n), Coupling.TWO_WAY)
        rigid[:6, 6:] = rigid[6:, :6] = 0.0
        wr = w.copy()
        wr[6:] = 0.0
        q_rigid = _general_qbar(inv, rigid, wr, np.zeros(n), np.zeros(n))
        qbar = np.zeros(6 + n)
        qbar[:6] = q_rigid[:6]
        if mode is Coupling.ONE_WAY:
            full = body_mass(inv, m_ff, xi, Coupling.TWO_WAY)
            qbar[6:] = _general_qbar(inv, full, w, xi, xid)[6:]
    out = np.empty(7 + n)
    out[:3] = a @ qbar[:3]
    out[3:7] = gb.T @ qbar[3:6]
    out[7:] = qbar[6:]
    return out
