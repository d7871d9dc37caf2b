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

from ..elements.floating_frame_reference import FrameInertia, frame_tangents
from ..elements.marker_kinematics import (
    angular_jac_tangent_kernel,
    angular_rate_jac_kernel,
    force_jac_tangent_kernel,
    marker_hessian_kernel,
    marker_jac_rate_kernel,
)
from ..elements.rigid_body import reference as rigid_reference
from ..frame.coupling import Coupling
from ..frame.rotations import (
    cross3,
    d_rotated,
    d_rotated_batch,
    d_rotated_transpose,
    g_bar,
    g_global,
    rotation_matrix,
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

    @property
    def first_moment(self):
        """S = m c [kg m], or None when the centre of mass is the body-frame origin."""
        return self.mass * np.asarray(self.com, dtype=float) if self.com_offset else None

    def quadratic_velocity(self, q, qd):
        """Q_v (:func:`flexmbs.elements.rigid_body.reference.quadratic_velocity`)."""
        return rigid_reference.quadratic_velocity(q, qd, self.inertia_origin,
                                                  self.first_moment)

    def generalized_forces(self, q, qd, t, gravity):
        """Q_v + gravity [N, N m]: [m g; Ḡᵀ(S × ḡ)] (docs/theory_ffrf.md §7)."""
        return (self.quadratic_velocity(q, qd)
                + rigid_reference.gravity_force(q, self.mass, self.first_moment, gravity))

    def residual(self, q, qd, qdd, gravity):
        """r_b = M q̈ − Q_v − Q_g without forming M
        (:func:`flexmbs.elements.rigid_body.reference.residual`)."""
        return rigid_reference.residual(q, qd, qdd, gravity, self.mass, self.inertia_origin,
                                        self.first_moment)

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
        """(K, C) = ∂/∂(q, q̇) of M(q) q̈ − Q_v − Q_g (docs/theory_ffrf.md §5–7 with no
        modes): the C-form kernel
        :func:`~flexmbs.elements.floating_frame_reference.frame_tangents`. Its Q̄ (§9
        form) equals the closed form of :meth:`quadratic_velocity` (Jacobi identity).

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
