"""Ground and rigid bodies with absolute coordinates q = [R, p] (docs/multibody.md,
coordinates and conventions).

The body interface (:class:`Body`) is what joints, forces and the System use; rigid and
flexible bodies implement the same methods, and every marker-level quantity is asked of
the body *with the marker*, so a flexible body can add its deformation at the marker's
node (docs/theory_ffrf.md §8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

from ..frame.coupling import Coupling, FrameInertia, frame_tangents
from ..frame.rotations import (
    cross3,
    d_rotated,
    d_rotated_basis,
    d_rotated_batch,
    d_rotated_transpose,
    g_bar,
    g_bar_t_jac,
    g_global,
    g_global_t_jac,
    rotated_hessian,
    rotated_mixed,
    rotation_matrix,
    rotation_rate,
    skew,
)
from .markers import Marker


class Body(Protocol):
    """What every body provides (coordinates q_b of length ``n_coords``)."""

    name: str
    n_coords: int

    @property
    def coord_names(self) -> tuple[str, ...]: ...

    def marker_frame(self, q, marker: Marker, qd=None, jac: bool = True):
        """(r (3,), axes (3x3, columns x, y, z, global), J (4, 3, n) — Jacobians of r and
        of the three axes —, quad (4, 3) = (d/dt J) q̇ or None without ``qd``)."""

    def force_jac(self, q, marker: Marker) -> np.ndarray:
        """Virtual-work Jacobian (3, n) of a force at the marker (Q = Jᵀ F)."""

    def angular_jac(self, q, marker: Marker) -> np.ndarray:
        """(3, n) with ω_marker = J q̇ (global), also the torque Jacobian."""

    def mass_matrix(self, q) -> np.ndarray: ...

    def generalized_forces(self, q, qd, t: float, gravity) -> np.ndarray:
        """Body-internal forces: quadratic velocity vector, gravity, elastic, damping."""

    def kinetic_energy(self, q, qd) -> float: ...

    def potential_energy(self, q, gravity) -> float: ...

    # Newton tangents (flexmbs.assembly.tangents); all exact derivatives, (n, n) or (4, 3, n)
    def residual_tangents(self, q, qd, qdd, gravity):
        """(∂r_b/∂q, ∂r_b/∂q̇) of r_b = M q̈ − (body-internal forces)."""

    def marker_shapes(self, marker: Marker) -> tuple[np.ndarray, np.ndarray]:
        """(s (4, 3), U (4, 3, m)): body-frame point and axes of the marker at ξ = 0 and
        their ξ-derivatives (m = 0 when the marker does not move with ξ), so that
        v_0 = R + A (s_0 + U_0 ξ), v_k = A (s_k + U_k ξ) (:func:`marker_frames_kernel`)."""

    def jacobian_shapes(self, marker: Marker):
        """(Ψ (3, m), Φ (3, m)): the modal shapes of the marker's torque (angular) and
        force Jacobians, or (None, None) where the marker does not move with ξ."""

    def residual(self, q, qd, qdd, gravity) -> np.ndarray:
        """r_b = M(q) q̈ − (body-internal forces), one pass (Newton residual)."""

    def marker_hessian(self, q, marker: Marker, weights) -> np.ndarray:
        """∂²/∂q² Σ_k w_kᵀ v_k(q) over the marker's point and axes v (weights (4, 3))."""

    def marker_jac_rate(self, q, qd, marker: Marker) -> np.ndarray:
        """J̇ = ∂(J q̇)/∂q (4, 3, n) of the marker_frame Jacobians J."""

    def force_jac_tangent(self, q, marker: Marker, force) -> np.ndarray:
        """∂(force_jac(q)ᵀ F)/∂q for a fixed global F."""

    def angular_jac_tangent(self, q, marker: Marker, torque) -> np.ndarray:
        """∂(angular_jac(q)ᵀ T)/∂q for a fixed global T."""

    def angular_rate_jac(self, q, qd, marker: Marker) -> np.ndarray:
        """∂(angular_jac(q) q̇)/∂q (3, n)."""


# --------------------------------------------------------------------------- tangent kernels
# Shared by rigid and flexible bodies. A marker carries four vectors v_k (point, x, y, z
# axes) v_0 = R + A(p) s_0(ξ), v_k = A(p) s_k(ξ), with s_k(ξ) = vecs_k + U_k ξ linear in ξ
# (U = 0 on rigid bodies and in one-way/rigid coupling), docs/theory_ffrf.md §8.

_EYE3 = np.eye(3)  # read-only identity (the R columns of marker point Jacobians)
_EYE3.flags.writeable = False


def marker_frames_kernel(q, base, shapes, n: int, jac: bool = True):
    """Global points and axes of k markers of one body and their exact Jacobians.

    With s = base + shapes ξ (body frame, (k, 4, 3): point, x, y, z axes),
    v_0 = R + A(p) s_0 and v_a = A(p) s_a; ∂v/∂p = d_rotated(p, s) (linear in s, one
    shared basis), ∂v/∂ξ = A U (docs/theory_ffrf.md §8). Returns V (k, 4, 3) and J (k, 4, 3, n)
    (the ``marker_frame`` values and Jacobians of every marker at once; J None without
    ``jac``).
    """
    k = base.shape[0]
    p = q[3:7]
    a = rotation_matrix(p)
    m = shapes.shape[3]
    s = base + shapes @ q[7:7 + m] if m else base
    vecs = s @ a.T
    vecs[:, 0] += q[:3]
    if not jac:
        return vecs, None
    jac = np.zeros((k, 4, 3, n))
    jac[:, 0, :, :3] = _EYE3
    jac[..., 3:7] = (s.reshape(-1, 3) @ d_rotated_basis(p)).reshape(k, 4, 3, 4)
    if m:
        jac[..., 7:7 + m] = a @ shapes
    return vecs, jac


def marker_hessian_kernel(n, p, vecs, shapes, weights) -> np.ndarray:
    """∂²/∂q² Σ_k w_kᵀ v_k: pp block from A quadratic in p, pξ blocks from ∂A/∂p linear in
    s; R enters linearly and ξ–ξ terms vanish (docs/theory_ffrf.md §1, §8)."""
    out = np.zeros((n, n))
    out[3:7, 3:7] = rotated_hessian(vecs, weights)
    if shapes.shape[2]:
        mixed = rotated_mixed(p, shapes, weights)
        out[3:7, 7:] = mixed
        out[7:, 3:7] = mixed.T
    return out


def marker_jac_rate_kernel(n, p, pd, xid, vecs, shapes) -> np.ndarray:
    """J̇ (4, 3, n): p columns d_rotated(ṗ, s) + d_rotated(p, U ξ̇), ξ columns Ȧ U."""
    out = np.zeros((4, 3, n))
    out[:, :, 3:7] = d_rotated_batch(pd, vecs)
    if shapes.shape[2]:
        out[:, :, 3:7] += d_rotated_batch(p, shapes @ xid)
        out[:, :, 7:] = rotation_rate(p, pd) @ shapes
    return out


def force_jac_tangent_kernel(n, p, arm, force, phi=None, arm_shapes=None) -> np.ndarray:
    """∂/∂q of [F; Ḡᵀ(ū × F̄); Φᵀ F̄], F̄ = AᵀF (docs/theory_ffrf.md §7): the p rows vary with Ḡ and
    F̄, and with ξ through ū = ū0 + ``arm_shapes`` ξ; the ξ rows (``phi``) with F̄."""
    out = np.zeros((n, n))
    f_bar = rotation_matrix(p).T @ force
    df = d_rotated_transpose(p, force)
    gb = g_bar(p)
    out[3:7, 3:7] = g_bar_t_jac(cross3(arm, f_bar)) + gb.T @ (skew(arm) @ df)
    if phi is not None:
        out[7:, 3:7] = phi.T @ df
    if arm_shapes is not None:
        out[3:7, 7:] = gb.T @ (-skew(f_bar) @ arm_shapes)
    return out


def angular_jac_tangent_kernel(n, p, torque, psi=None) -> np.ndarray:
    """∂/∂q of [0; Gᵀ T; Ψᵀ Aᵀ T] (docs/theory_ffrf.md §7)."""
    out = np.zeros((n, n))
    out[3:7, 3:7] = g_global_t_jac(torque)
    if psi is not None:
        out[7:, 3:7] = psi.T @ d_rotated_transpose(p, torque)
    return out


def angular_rate_jac_kernel(n, p, pd, xid=None, psi=None) -> np.ndarray:
    """∂/∂q of ω = G(p) ṗ + A Ψ ξ̇: −G(ṗ) (G(p)ṗ = −G(ṗ)p) and ∂(A Ψ ξ̇)/∂p."""
    out = np.zeros((3, n))
    out[:, 3:7] = -g_global(pd)
    if psi is not None:
        out[:, 3:7] += d_rotated(p, psi @ xid)
    return out


@dataclass(frozen=True, eq=False)
class Ground:
    """The fixed global frame. It has no coordinates."""

    name: str = "ground"
    n_coords: int = 0
    coord_names: tuple[str, ...] = ()
    fixed: tuple[int, ...] = ()

    def marker_frame(self, q, marker, qd=None, jac=True):
        return (np.asarray(marker.position, float), np.asarray(marker.orientation, float),
                np.zeros((4, 3, 0)), None if qd is None else np.zeros((4, 3)))

    def marker_shapes(self, marker):
        """The marker's fixed point and axes (no coordinates)."""
        return (np.vstack([marker.position, np.asarray(marker.orientation).T]),
                np.zeros((4, 3, 0)))

    def jacobian_shapes(self, marker):
        """(None, None): ground markers do not move."""
        return None, None

    def marker_hessian(self, q, marker, weights):
        return np.zeros((0, 0))

    def marker_jac_rate(self, q, qd, marker):
        return np.zeros((4, 3, 0))

    def force_jac_tangent(self, q, marker, force):
        return np.zeros((0, 0))

    def angular_jac_tangent(self, q, marker, torque):
        return np.zeros((0, 0))

    def angular_rate_jac(self, q, qd, marker):
        return np.zeros((3, 0))

    def force_jac(self, q, marker):
        return np.zeros((3, 0))

    def angular_jac(self, q, marker):
        return np.zeros((3, 0))


@dataclass(frozen=True, eq=False)
class RigidBody:
    """A rigid body; body frame at the centre of mass.

    Attributes
    ----------
    name : str
    mass : float
        [kg], positive.
    inertia : ndarray, shape (3, 3)
        Inertia tensor about the centre of mass in body-frame axes [kg m²], symmetric
        positive definite.
    q0 : ndarray, shape (7,)
        Initial [R, p]: centre-of-mass position [m], Euler parameters.
    qd0 : ndarray, shape (7,)
        Initial [Ṙ, ṗ].
    fixed : tuple of int
        Local coordinate indices the user wants held during assembly (0..6).
    """

    name: str
    mass: float
    inertia: np.ndarray
    q0: np.ndarray
    qd0: np.ndarray = field(default_factory=lambda: np.zeros(7))
    fixed: tuple[int, ...] = ()
    n_coords: int = 7
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    """Centre of mass in the body frame [m] (zero: the body frame is the CoM frame);
    ``inertia`` stays about the centre of mass."""
    shape: object = None
    """Drawing geometry (:class:`~flexmbs.model.shapes.SurfaceShape`, body frame), or
    None: drawn as its inertia-equivalent box. Never enters the dynamics."""

    @cached_property
    def inertia_origin(self) -> np.ndarray:
        """Inertia about the body-frame origin, I_c + m(cᵀc I − c cᵀ) [kg m²]."""
        c = self.com
        return self.inertia + self.mass * (c @ c * np.eye(3) - np.outer(c, c))

    @cached_property
    def com_offset(self) -> bool:
        """True when the centre of mass lies off the body-frame origin."""
        return bool(np.any(self.com))


    @property
    def coord_names(self) -> tuple[str, ...]:
        """Names of the 7 coordinates."""
        return tuple(f"{self.name}.{c}" for c in ("x", "y", "z", "e0", "e1", "e2", "e3"))

    # ----------------------------------------------------------- kinematics
    def marker_frame(self, q, marker, qd=None, jac=True):
        """Marker origin, axes, their exact Jacobians (homogeneous A) and quadratic parts
        (``jac=False``: origin and axes only, J and quad None).

        r = R + A s, a_k = A o_k; ∂(A v)/∂p is linear in p (``d_rotated``), so the
        quadratic acceleration part is ``d_rotated(ṗ, v) ṗ``.
        """
        p = q[3:7]
        a = rotation_matrix(p)
        s, o = marker.position, marker.orientation
        if not jac:
            return q[:3] + a @ s, a @ o, None, None
        vectors = np.vstack([s, o.T])  # (4, 3): point, then x, y, z axes
        jac = np.zeros((4, 3, 7))
        jac[0, :, :3] = np.eye(3)
        jac[:, :, 3:] = d_rotated_batch(p, vectors)
        quad = None
        if qd is not None:
            pd = qd[3:7]
            quad = d_rotated_batch(pd, vectors) @ pd
        return q[:3] + a @ s, a @ o, jac, quad

    def force_jac(self, q, marker):
        """[I, −A s̃ Ḡ]: p-rows orthogonal to p (multiplier-consistent, docs/theory_ffrf.md §7)."""
        p = q[3:7]
        out = np.zeros((3, 7))
        out[:, :3] = np.eye(3)
        out[:, 3:] = -rotation_matrix(p) @ skew(marker.position) @ g_bar(p)
        return out

    def angular_jac(self, q, marker=None):
        """ω = [0, G(p)] q̇ (global angular velocity of the body and its markers)."""
        out = np.zeros((3, 7))
        out[:, 3:] = g_global(q[3:7])
        return out

    # ----------------------------------------------------------- dynamics
    def mass_matrix(self, q):
        """M = [[m I, −A S̃ Ḡ], [Ḡᵀ S̃ Aᵀ, Ḡᵀ I_O Ḡ]] with S = m c (docs/theory_ffrf.md §5 with no
        modes); diag(m I, Ḡᵀ J Ḡ) for a CoM frame. Singular along p."""
        gb = g_bar(q[3:7])
        out = np.zeros((7, 7))
        out[:3, :3] = self.mass * np.eye(3)
        out[3:, 3:] = gb.T @ self.inertia_origin @ gb
        if self.com_offset:
            m_rp = -rotation_matrix(q[3:7]) @ skew(self.mass * self.com) @ gb
            out[:3, 3:] = m_rp
            out[3:, :3] = m_rp.T
        return out

    def quadratic_velocity(self, q, qd):
        """Q_v = [A(−ω̄ × (ω̄ × S)); Ḡᵀ(−ω̄ × I_O ω̄)], S = m c (docs/theory_ffrf.md §6)."""
        p = q[3:7]
        gb = g_bar(p)
        w = gb @ qd[3:7]
        out = np.zeros(7)
        out[3:] = gb.T @ (-cross3(w, self.inertia_origin @ w))
        if self.com_offset:
            out[:3] = rotation_matrix(p) @ (-cross3(w, cross3(w, self.mass * self.com)))
        return out

    def generalized_forces(self, q, qd, t, gravity):
        """Q_v + gravity [N, N m]: [m g; Ḡᵀ(S × ḡ)] (docs/theory_ffrf.md §7)."""
        out = self.quadratic_velocity(q, qd)
        g = np.asarray(gravity, dtype=float)
        out[:3] += self.mass * g
        if self.com_offset and np.any(g):
            p = q[3:7]
            out[3:] += g_bar(p).T @ cross3(self.mass * self.com, rotation_matrix(p).T @ g)
        return out

    def residual(self, q, qd, qdd, gravity):
        """r_b = M q̈ − Q_v − Q_g with one Ḡ(p) (and A(p) for a CoM offset), without
        forming M (the same terms as :meth:`mass_matrix`, :meth:`generalized_forces`):

            r_R = m (R̈ − g) + A(ω̄ × (ω̄ × S) − S × Ḡp̈)
            r_p = Ḡᵀ(I_O Ḡp̈ + ω̄ × I_O ω̄ + S × Aᵀ(R̈ − g)),    ω̄ = Ḡṗ, S = m c.
        """
        gb = g_bar(q[3:7])
        w = gb @ qd[3:7]
        alpha = gb @ qdd[3:7]
        i_o = self.inertia_origin
        acc = qdd[:3] - np.asarray(gravity, dtype=float)
        moment = i_o @ alpha + cross3(w, i_o @ w)
        out = np.empty(7)
        out[:3] = self.mass * acc
        if self.com_offset:
            a = rotation_matrix(q[3:7])
            s = self.mass * self.com
            out[:3] += a @ (cross3(w, cross3(w, s)) - cross3(s, alpha))
            moment += cross3(s, a.T @ acc)
        out[3:] = gb.T @ moment
        return out

    # ----------------------------------------------------------- Newton tangents
    @cached_property
    def frame_inertia(self) -> FrameInertia:
        """M̄ = [[m I, −S̃], [S̃, I_O]] (S = m c) as the n = 0 case of the flexible kernel."""
        mbar = np.zeros((6, 6))
        mbar[:3, :3] = self.mass * np.eye(3)
        mbar[:3, 3:] = -skew(self.mass * self.com)
        mbar[3:, :3] = skew(self.mass * self.com)
        mbar[3:, 3:] = self.inertia_origin
        return FrameInertia(mbar, mbar, mbar, mbar[:, :3].copy(), np.zeros((0, 6, 3)),
                            np.zeros((0, 0, 3, 3)), Coupling.TWO_WAY)

    def residual_tangents(self, q, qd, qdd, gravity):
        """(K, C) = ∂/∂(q, q̇) of M(q) q̈ − Q_v − Q_g (docs/theory_ffrf.md §5–7 with no modes): the
        C-form kernel :func:`~flexmbs.frame.coupling.frame_tangents`. Its Q̄ (§9 form) equals
        the closed form of :meth:`quadratic_velocity` (Jacobi identity).

        One difference from the C-form: this body uses M_RR = m I and the gravity force
        m g directly, where the kernel has A (m I) Aᵀ (equal on ‖p‖ = 1 only), so the
        kernel's m ∂(A Aᵀ x)/∂p, x = R̈ − g, is taken out of the R rows."""
        p = q[3:7]
        k, c = frame_tangents(self.frame_inertia, p, np.zeros(0), qd[:3], qd[3:7],
                              np.zeros(0), qdd, gravity)
        x = qdd[:3] - np.asarray(gravity, dtype=float)
        a = rotation_matrix(p)
        k[:3, 3:7] -= self.mass * (d_rotated(p, a.T @ x) + a @ d_rotated_transpose(p, x))
        return k, c

    def _marker_vectors(self, marker):
        vecs = np.vstack([marker.position, np.asarray(marker.orientation).T])
        return vecs, np.zeros((4, 3, 0))

    def marker_shapes(self, marker):
        """(s (4, 3), U (4, 3, 0)): the marker's point and axes in the body frame."""
        return self._marker_vectors(marker)

    def jacobian_shapes(self, marker):
        """(None, None): a rigid body has no modal coordinates."""
        return None, None

    def marker_hessian(self, q, marker, weights):
        """∂²/∂q² Σ_k w_kᵀ v_k, v = (R + A s, A x, A y, A z) of the marker (7x7)."""
        vecs, shapes = self._marker_vectors(marker)
        return marker_hessian_kernel(7, q[3:7], vecs, shapes, weights)

    def marker_jac_rate(self, q, qd, marker):
        """∂(J q̇)/∂q = [0, d_rotated(ṗ, s)] for the point and axes (4, 3, 7)."""
        vecs, shapes = self._marker_vectors(marker)
        return marker_jac_rate_kernel(7, q[3:7], qd[3:7], np.zeros(0), vecs, shapes)

    def force_jac_tangent(self, q, marker, force):
        """∂([I, −A s̃ Ḡ]ᵀ F)/∂q for a fixed global force F (7x7)."""
        return force_jac_tangent_kernel(7, q[3:7], np.asarray(marker.position, float),
                                        np.asarray(force, float))

    def angular_jac_tangent(self, q, marker, torque):
        """∂([0, G]ᵀ T)/∂q for a fixed global torque T (7x7)."""
        return angular_jac_tangent_kernel(7, q[3:7], np.asarray(torque, float))

    def angular_rate_jac(self, q, qd, marker=None):
        """∂(G(p) ṗ)/∂q = [0, −G(ṗ)] (3x7)."""
        return angular_rate_jac_kernel(7, q[3:7], qd[3:7])

    def kinetic_energy(self, q, qd):
        w = g_bar(q[3:7]) @ qd[3:7]
        coupling = self.mass * qd[:3] @ (rotation_matrix(q[3:7]) @ cross3(w, self.com))
        return (0.5 * self.mass * qd[:3] @ qd[:3] + coupling
                + 0.5 * w @ self.inertia_origin @ w)

    def potential_energy(self, q, gravity):
        return -self.mass * np.dot(gravity, q[:3] + rotation_matrix(q[3:7]) @ self.com)
