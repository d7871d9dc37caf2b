"""Ground and rigid bodies with absolute coordinates q = [R, p] (ARCHITECTURE.md §3).

The body interface (:class:`Body`) is what joints, forces and the System use; rigid and
flexible bodies implement the same methods, and every marker-level quantity is asked of
the body *with the marker*, so a flexible body can add its deformation at the marker's
node (FFRF.md §8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

from ..frame.rotations import cross3, d_rotated_batch, g_bar, g_global, rotation_matrix, skew
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

    @cached_property
    def inertia_origin(self) -> np.ndarray:
        """Inertia about the body-frame origin, I_c + m(cᵀc I − c cᵀ) [kg m²]."""
        c = self.com
        return self.inertia + self.mass * (c @ c * np.eye(3) - np.outer(c, c))

    @cached_property
    def _offset(self) -> bool:
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
        """[I, −A s̃ Ḡ]: p-rows orthogonal to p (multiplier-consistent, FFRF.md §6)."""
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
        """M = [[m I, −A S̃ Ḡ], [Ḡᵀ S̃ Aᵀ, Ḡᵀ I_O Ḡ]] with S = m c (FFRF.md §4 with no
        modes); diag(m I, Ḡᵀ J Ḡ) for a CoM frame. Singular along p."""
        gb = g_bar(q[3:7])
        out = np.zeros((7, 7))
        out[:3, :3] = self.mass * np.eye(3)
        out[3:, 3:] = gb.T @ self.inertia_origin @ gb
        if self._offset:
            m_rp = -rotation_matrix(q[3:7]) @ skew(self.mass * self.com) @ gb
            out[:3, 3:] = m_rp
            out[3:, :3] = m_rp.T
        return out

    def quadratic_velocity(self, q, qd):
        """Q_v = [A(−ω̄ × (ω̄ × S)); Ḡᵀ(−ω̄ × I_O ω̄)], S = m c (FFRF.md §5.1–5.2)."""
        p = q[3:7]
        gb = g_bar(p)
        w = gb @ qd[3:7]
        out = np.zeros(7)
        out[3:] = gb.T @ (-cross3(w, self.inertia_origin @ w))
        if self._offset:
            out[:3] = rotation_matrix(p) @ (-cross3(w, cross3(w, self.mass * self.com)))
        return out

    def generalized_forces(self, q, qd, t, gravity):
        """Q_v + gravity [N, N m]: [m g; Ḡᵀ(S × ḡ)] (FFRF.md §6)."""
        out = self.quadratic_velocity(q, qd)
        g = np.asarray(gravity, dtype=float)
        out[:3] += self.mass * g
        if self._offset and np.any(g):
            p = q[3:7]
            out[3:] += g_bar(p).T @ cross3(self.mass * self.com, rotation_matrix(p).T @ g)
        return out

    def kinetic_energy(self, q, qd):
        w = g_bar(q[3:7]) @ qd[3:7]
        coupling = self.mass * qd[:3] @ (rotation_matrix(q[3:7]) @ cross3(w, self.com))
        return (0.5 * self.mass * qd[:3] @ qd[:3] + coupling
                + 0.5 * w @ self.inertia_origin @ w)

    def potential_energy(self, q, gravity):
        return -self.mass * np.dot(gravity, q[:3] + rotation_matrix(q[3:7]) @ self.com)
