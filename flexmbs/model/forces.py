"""Applied forces: spring–damper–actuators, rotational spring–dampers, joint actuators
driven by user callables (controllers, co-simulation), point forces and torques.

Every force adds its generalized force Q = Jᵀ F into the global vector through the
bodies' virtual-work Jacobians (``force_jac`` for points, ``angular_jac`` for torques);
gravity is applied by the system. Callables receive ``(t, state)`` with a
:class:`ForceState`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .drives import Profile


@dataclass
class ForceState:
    """What a force callable sees: time [s], the full q and q̇, and (for joint forces)
    the joint coordinate ``value`` [rad or m] and its ``rate``."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    value: float | None = None
    rate: float | None = None


def _marker_ctx(system, marker_name, q, qd):
    body, marker, sl = system.marker_info(marker_name)
    qb, qdb = q[sl], qd[sl]
    return body, marker, sl, qb, qdb


def _add(Q, sl, vec):
    if sl is not None and vec.size:
        Q[sl] += vec


@dataclass(frozen=True, eq=False)
class SpringDamperActuator:
    """Translational spring–damper–actuator between markers i and j.

    Tension f = k (L − L0) + c L̇ + f_a(t, state) [N] pulls the markers together
    (f > 0); L = ‖r_j − r_i‖ [m]. ``actuator`` is a Profile (value used), a callable
    f(t, state) or None.
    """

    name: str
    marker_i: str
    marker_j: str
    stiffness: float = 0.0
    damping: float = 0.0
    free_length: float = 0.0
    actuator: Any = None

    def tension(self, system, q, qd, t):
        bi, mi, _sli, qi, qdi = _marker_ctx(system, self.marker_i, q, qd)
        bj, mj, _slj, qj, qdj = _marker_ctx(system, self.marker_j, q, qd)
        d = bj.point(qj, mj.position) - bi.point(qi, mi.position)
        length = float(np.linalg.norm(d))
        if length == 0.0:
            from ..errors import ModelError

            raise ModelError(f"force {self.name!r}: markers {self.marker_i} and "
                             f"{self.marker_j} coincide; the line of action is undefined")
        u = d / length
        v = bj.point_jac(qj, mj.position) @ qdj - bi.point_jac(qi, mi.position) @ qdi
        rate = float(u @ v)
        f = self.stiffness * (length - self.free_length) + self.damping * rate
        if isinstance(self.actuator, Profile):
            f += self.actuator.eval(t)[0]
        elif callable(self.actuator):
            f += float(self.actuator(t, ForceState(t, q, qd, length, rate)))
        return f, u, length, rate

    def apply(self, system, q, qd, t, Q):
        f, u, _, _ = self.tension(system, q, qd, t)
        bi, mi, sli, qi, _ = _marker_ctx(system, self.marker_i, q, qd)
        bj, mj, slj, qj, _ = _marker_ctx(system, self.marker_j, q, qd)
        _add(Q, sli, bi.force_jac(qi, mi.position).T @ (f * u))
        _add(Q, slj, bj.force_jac(qj, mj.position).T @ (-f * u))

    def potential(self, system, q):
        bi, mi, _, qi, _ = _marker_ctx(system, self.marker_i, q, q)
        bj, mj, _, qj, _ = _marker_ctx(system, self.marker_j, q, q)
        length = np.linalg.norm(bj.point(qj, mj.position) - bi.point(qi, mi.position))
        return 0.5 * self.stiffness * (length - self.free_length) ** 2


def relative_rotation(system, marker_i, marker_j, q, qd):
    """Angle of x_j about z_i (atan2, in (−π, π]) and its rate z_iᵀ(ω_j − ω_i)."""
    bi, mi, _, qi, qdi = _marker_ctx(system, marker_i, q, qd)
    bj, mj, _, qj, qdj = _marker_ctx(system, marker_j, q, qd)
    xi = bi.vector(qi, mi.orientation[:, 0])
    yi = bi.vector(qi, mi.orientation[:, 1])
    zi = bi.vector(qi, mi.orientation[:, 2])
    xj = bj.vector(qj, mj.orientation[:, 0])
    angle = float(np.arctan2(xj @ yi, xj @ xi))
    rate = float(zi @ (bj.angular_jac(qj) @ qdj - bi.angular_jac(qi) @ qdi))
    return angle, rate, zi


def relative_translation(system, marker_i, marker_j, q, qd):
    """Displacement z_iᵀ(r_j − r_i) and its rate along z_i."""
    bi, mi, _, qi, qdi = _marker_ctx(system, marker_i, q, qd)
    bj, mj, _, qj, qdj = _marker_ctx(system, marker_j, q, qd)
    zi = bi.vector(qi, mi.orientation[:, 2])
    d = bj.point(qj, mj.position) - bi.point(qi, mi.position)
    v = bj.point_jac(qj, mj.position) @ qdj - bi.point_jac(qi, mi.position) @ qdi
    return float(zi @ d), float(zi @ v), zi


def _apply_torque(system, marker_i, marker_j, torque, q, Q):
    bi, _, sli, qi, _ = _marker_ctx(system, marker_i, q, q)
    bj, _, slj, qj, _ = _marker_ctx(system, marker_j, q, q)
    _add(Q, slj, bj.angular_jac(qj).T @ torque)
    _add(Q, sli, bi.angular_jac(qi).T @ (-torque))


def _apply_axial_force(system, marker_i, marker_j, force, q, Q):
    bi, mi, sli, qi, _ = _marker_ctx(system, marker_i, q, q)
    bj, mj, slj, qj, _ = _marker_ctx(system, marker_j, q, q)
    _add(Q, slj, bj.force_jac(qj, mj.position).T @ force)
    _add(Q, sli, bi.force_jac(qi, mi.position).T @ (-force))


@dataclass(frozen=True, eq=False)
class RotationalSpringDamper:
    """Torque T = −k (θ − θ0) − c θ̇ about z_i acting on j (reaction on i) [N m];
    θ is the angle of x_j about z_i (as in a revolute joint with these markers)."""

    name: str
    marker_i: str
    marker_j: str
    stiffness: float = 0.0
    damping: float = 0.0
    angle0: float = 0.0

    def apply(self, system, q, qd, t, Q):
        angle, rate, zi = relative_rotation(system, self.marker_i, self.marker_j, q, qd)
        torque = -self.stiffness * (angle - self.angle0) - self.damping * rate
        _apply_torque(system, self.marker_i, self.marker_j, torque * zi, q, Q)

    def potential(self, system, q):
        angle, _, _ = relative_rotation(system, self.marker_i, self.marker_j, q, q * 0)
        return 0.5 * self.stiffness * (angle - self.angle0) ** 2


@dataclass(frozen=True, eq=False)
class JointActuator:
    """Joint torque (about z_i, ``kind="torque"``) or force (along z_i, ``"force"``) on
    j with reaction on i, from ``function(t, state)`` — the hook for controllers and
    co-simulation; ``state.value``/``state.rate`` hold the joint angle or displacement."""

    name: str
    marker_i: str
    marker_j: str
    function: Callable[[float, ForceState], float]
    kind: str = "torque"

    def apply(self, system, q, qd, t, Q):
        if self.kind == "torque":
            value, rate, zi = relative_rotation(system, self.marker_i, self.marker_j, q, qd)
            u = float(self.function(t, ForceState(t, q, qd, value, rate)))
            _apply_torque(system, self.marker_i, self.marker_j, u * zi, q, Q)
        else:
            value, rate, zi = relative_translation(system, self.marker_i, self.marker_j, q,
                                                   qd)
            u = float(self.function(t, ForceState(t, q, qd, value, rate)))
            _apply_axial_force(system, self.marker_i, self.marker_j, u * zi, q, Q)


@dataclass(frozen=True, eq=False)
class PointLoad:
    """Force [N] or torque [N m] on a marker: a constant 3-vector or f(t, state);
    ``frame="global"`` or ``"body"`` (marker axes)."""

    name: str
    marker: str
    value: Any
    kind: str = "force"
    frame: str = "global"

    def apply(self, system, q, qd, t, Q):
        body, marker, sl, qb, _ = _marker_ctx(system, self.marker, q, qd)
        vec = (np.asarray(self.value(t, ForceState(t, q, qd)), dtype=float)
               if callable(self.value) else np.asarray(self.value, dtype=float))
        if self.frame == "body":
            axes = np.column_stack([body.vector(qb, marker.orientation[:, k])
                                    for k in range(3)])
            vec = axes @ vec
        if self.kind == "force":
            _add(Q, sl, body.force_jac(qb, marker.position).T @ vec)
        else:
            _add(Q, sl, body.angular_jac(qb).T @ vec)
