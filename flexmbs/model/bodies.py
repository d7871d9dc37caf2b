"""Ground and rigid bodies with absolute coordinates q = [R, p] (ARCHITECTURE.md §3).

The rigid body frame is its centre-of-mass frame. Its kinematic primitives (points,
body-fixed vectors, their exact Jacobians and the velocity-quadratic acceleration terms)
are what joints and forces are written with; a flexible body (FFRF) provides the same
methods, so every joint and force works on both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..frame.rotations import d_rotated, d_rotated_batch, g_bar, g_global, rotation_matrix, skew


@dataclass(frozen=True, eq=False)
class Ground:
    """The fixed global frame. It has no coordinates."""

    name: str = "ground"
    n_coords: int = 0
    coord_names: tuple[str, ...] = ()

    # kinematics: points and vectors are global and fixed
    def point(self, q, s):
        return np.asarray(s, dtype=float)

    def point_jac(self, q, s):
        return np.zeros((3, 0))

    def point_quad(self, q, qd, s):
        return np.zeros(3)

    def vector(self, q, v):
        return np.asarray(v, dtype=float)

    vector_jac = point_jac
    vector_quad = point_quad
    force_jac = point_jac

    def angular_jac(self, q):
        return np.zeros((3, 0))

    def marker_frame(self, q, s, orientation, qd=None):
        """(r, axes 3x3, J (4, 3, 0), quad (4, 3) or None) of a fixed ground frame."""
        return (np.asarray(s, float), np.asarray(orientation, float), np.zeros((4, 3, 0)),
                None if qd is None else np.zeros((4, 3)))


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

    @property
    def coord_names(self) -> tuple[str, ...]:
        """Names of the 7 coordinates."""
        return tuple(f"{self.name}.{c}" for c in ("x", "y", "z", "e0", "e1", "e2", "e3"))

    # ----------------------------------------------------------- kinematic primitives
    def point(self, q, s):
        """Global position of body point ``s`` (body frame) [m]."""
        return q[:3] + rotation_matrix(q[3:7]) @ s

    def point_jac(self, q, s):
        """∂r/∂q (3x7), exact (homogeneous A)."""
        out = np.zeros((3, 7))
        out[:, :3] = np.eye(3)
        out[:, 3:] = d_rotated(q[3:7], s)
        return out

    def point_quad(self, q, qd, s):
        """(d/dt ∂r/∂q) q̇: the velocity-quadratic part of r̈."""
        return d_rotated(qd[3:7], s) @ qd[3:7]

    def vector(self, q, v):
        """Global components of body-fixed vector ``v``."""
        return rotation_matrix(q[3:7]) @ v

    def vector_jac(self, q, v):
        out = np.zeros((3, 7))
        out[:, 3:] = d_rotated(q[3:7], v)
        return out

    def vector_quad(self, q, qd, v):
        return d_rotated(qd[3:7], v) @ qd[3:7]

    def force_jac(self, q, s):
        """Virtual-work Jacobian of a point force: [I, −A s̃ Ḡ] (p-rows ⟂ p, FFRF §6)."""
        p = q[3:7]
        out = np.zeros((3, 7))
        out[:, :3] = np.eye(3)
        out[:, 3:] = -rotation_matrix(p) @ skew(s) @ g_bar(p)
        return out

    def angular_jac(self, q):
        """ω = [0, G(p)] q̇ (global angular velocity)."""
        out = np.zeros((3, 7))
        out[:, 3:] = g_global(q[3:7])
        return out

    def marker_frame(self, q, s, orientation, qd=None):
        """Everything a joint needs about a marker, in one pass.

        Returns r (3,), axes (3x3, columns x, y, z, global), J (4, 3, 7) — Jacobians of
        r and of the three axes — and, with ``qd``, quad (4, 3): their velocity-quadratic
        acceleration parts (d/dt J) q̇.
        """
        p = q[3:7]
        a = rotation_matrix(p)
        vectors = np.vstack([s, orientation.T])  # (4, 3): point, then x, y, z axes
        d = d_rotated_batch(p, vectors)
        jac = np.zeros((4, 3, 7))
        jac[0, :, :3] = np.eye(3)
        jac[:, :, 3:] = d
        quad = None
        if qd is not None:
            pd = qd[3:7]
            quad = d_rotated_batch(pd, vectors) @ pd
        return q[:3] + a @ s, a @ orientation, jac, quad

    # ----------------------------------------------------------- dynamics
    def mass_matrix(self, q):
        """M = diag(m I, Ḡᵀ J Ḡ) (7x7), singular along p (FFRF §4)."""
        gb = g_bar(q[3:7])
        out = np.zeros((7, 7))
        out[:3, :3] = self.mass * np.eye(3)
        out[3:, 3:] = gb.T @ self.inertia @ gb
        return out

    def quadratic_velocity(self, q, qd):
        """Q_v = [0, Ḡᵀ(−ω̄ × J ω̄)] (FFRF §5.2 with S_t = 0)."""
        gb = g_bar(q[3:7])
        w = gb @ qd[3:7]
        out = np.zeros(7)
        out[3:] = gb.T @ (-np.cross(w, self.inertia @ w))
        return out

    def gravity_force(self, q, g):
        out = np.zeros(7)
        out[:3] = self.mass * np.asarray(g)
        return out

    def kinetic_energy(self, q, qd):
        w = g_bar(q[3:7]) @ qd[3:7]
        return 0.5 * self.mass * qd[:3] @ qd[:3] + 0.5 * w @ self.inertia @ w

    def potential_energy(self, q, g):
        return -self.mass * np.dot(g, q[:3])
