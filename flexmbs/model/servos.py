"""Joint servos with motors and gears (docs/servos.md).

A :class:`JointServo` drives a revolute joint's angle θ (the angle of x_j about z_i, as
the joint and the rotational spring–dampers measure it) towards a reference profile
θ_ref(t) with a PD law, an optional integral term and a torque limit, through an optional
:class:`Motor` (rotor inertia J_m, gear ratio n, efficiency η). The control law is in
:mod:`flexmbs.elements.joint_servo.reference`; the compiled kernels in
:mod:`flexmbs.elements.joint_servo.kernels` evaluate the same terms.

The rotor's reflected inertia n² J_m acts on the joint's angle: a torque −n² J_m θ̈ about
z_i. In the equations r = M q̈ + Φ_qᵀλ − Q it is a mass term n² J_m gᵀg (g = ∂θ̇/∂q̇,
:meth:`JointServo.mass_block`) plus the velocity part of θ̈ in Q. The rotor's spin is
taken relative to the joint's body i (the usual reflected-inertia model of robot drives);
the gyroscopic coupling of the rotor with body i's own rotation, of relative size 1/n, is
left out (docs/servos.md).

The integral term is a sampled one, as a digital controller's: ∫ e_m dt is accumulated at
each accepted step from the state at its end (rectangle rule) and acts from the next step
on; it does not grow while the torque saturates (anti-windup by clamping).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..elements.joint_servo.reference import joint_torque, motor_torque, torque_slopes
from ..elements.marker_pairs import (
    MarkerPair,
    apply_pair,
    apply_torque_pair,
    pair_load_tangent,
    relative_translation,
    rotation_partials,
    rotation_state,
    translation_partials,
)
from ..errors import ModelError
from .drives import Profile

__all__ = ["JointServo", "Motor"]


def _number(owner: str, key: str, value, *, positive=False, nonnegative=False,
            at_most_one=False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
        raise ModelError(f"{owner}: {key} must be a number, got {value!r}")
    out = float(value)
    if math.isnan(out) or (math.isinf(out) and key != "torque_limit"):
        raise ModelError(f"{owner}: {key} must be finite, got {value!r}")
    if positive and not out > 0:
        raise ModelError(f"{owner}: {key} must be > 0, got {value!r}")
    if nonnegative and out < 0:
        raise ModelError(f"{owner}: {key} must be ≥ 0, got {value!r}")
    if at_most_one and out > 1:
        raise ModelError(f"{owner}: {key} must be ≤ 1, got {value!r}")
    return out


@dataclass(frozen=True)
class Motor:
    """A motor rotor and gear between a servo and its joint.

    ``inertia`` J_m [kg m²]: the rotor's (and the gear input's) inertia about its spin
    axis; ``gear_ratio`` n [-]: motor angle / joint angle (the motor turns n times
    faster); ``efficiency`` η in (0, 1]: the joint receives η n τ_m (a constant-efficiency
    gear, whichever way the power flows)."""

    inertia: float = 0.0
    gear_ratio: float = 1.0
    efficiency: float = 1.0

    def __post_init__(self):
        _number("motor", "inertia", self.inertia, nonnegative=True)
        _number("motor", "gear_ratio", self.gear_ratio, positive=True)
        _number("motor", "efficiency", self.efficiency, positive=True, at_most_one=True)

    @property
    def reflected_inertia(self) -> float:
        """n² J_m [kg m²]: the rotor's inertia seen at the joint."""
        return float(self.gear_ratio) ** 2 * float(self.inertia)


class IntegralHistory:
    """The sampled integral ∫e_m dt [rad s] after accepted steps, by the step's end time
    [s] (ascending). The value acting at time t is the last one committed before t.

    It grows with the outputs, not with the steps: at each output :meth:`pin` keeps the
    value acting at the output's time and drops the steps' values between it and the
    previous output's, which nothing reads any more (the run reads the newest, the
    quantities after the run those at the outputs)."""

    __slots__ = ("pinned", "times", "values")

    def __init__(self):
        self.times: list[float] = []
        self.values: list[float] = []
        self.pinned = 0  # entries [0, pinned) are read at recorded outputs

    def add(self, t: float, value: float) -> None:
        self.times.append(float(t))
        self.values.append(float(value))

    def clear(self) -> None:
        self.times.clear()
        self.values.clear()
        self.pinned = 0

    def drop_from(self, t: float) -> None:
        """Forget the values at times >= t (a step redone after a rollback)."""
        times = self.times
        while times and times[-1] >= t:
            times.pop()
            self.values.pop()
        self.pinned = min(self.pinned, len(times))

    def acting_at(self, t: float) -> float:
        """The integral acting at t: the last one committed before it (0 before any)."""
        k = bisect_left(self.times, t - _tolerance(t)) - 1
        return self.values[k] if k >= 0 else 0.0

    def pin(self, t: float) -> None:
        """Keep the entry acting at the output time ``t`` and the later ones; drop the
        unpinned entries before it."""
        k = bisect_left(self.times, t - _tolerance(t)) - 1
        if k >= self.pinned:
            del self.times[self.pinned:k]
            del self.values[self.pinned:k]
            self.pinned += 1


def _tolerance(t: float) -> float:
    """The time tolerance [s] of "before t" (an output landing on a step's end)."""
    return 1e-12 * max(1.0, abs(t))


@dataclass(frozen=True, eq=False)
class JointServo:
    """PD(+I) servo on a joint's coordinate θ, with velocity feed-forward from the
    reference's rate and a torque limit: the angle of x_j about z_i (``kind="torque"``, a
    revolute joint's markers i, j) or the displacement z_iᵀ(r_j − r_i) along z_i
    (``kind="force"``, a prismatic joint's).

    Parameters
    ----------
    name, marker_i, marker_j : str
        The servo's name and the joint's markers ("body.marker"); the torque (force) acts
        about (along) z_i on j, its reaction on i.
    kp, kd : float
        Gains [N m/rad], [N m s/rad] on the motor angle and rate (on the joint's when
        there is no motor: [N/m], [N s/m] for a displacement).
    reference : Profile
        θ_ref(t) [rad or m] of the joint (its value and rate are used).
    ki : float
        Integral gain [N m/(rad s)] (sampled integral, module docstring).
    torque_limit : float
        |τ_m| ≤ torque_limit [N m] on the motor torque (inf: none).
    motor : Motor, optional
        Rotor inertia and gear (for a displacement, ``gear_ratio`` is the motor angle per
        metre [rad/m], 2π / lead of a screw); None: the servo acts on the joint directly.
    kind : str
        "torque" (an angle) or "force" (a displacement).
    """

    name: str
    marker_i: str
    marker_j: str
    kp: float
    kd: float
    reference: Profile
    ki: float = 0.0
    torque_limit: float = math.inf
    motor: Motor | None = None
    kind: str = "torque"
    #: the sampled integral's history: accepted step end times [s] and ∫e_m dt [rad s],
    #: thinned at the outputs (:meth:`pin`)
    _history: IntegralHistory = field(default_factory=lambda: IntegralHistory(),
                                      repr=False, compare=False)

    element_kind: ClassVar[str] = "joint_servo"

    def __post_init__(self):
        owner = f"joint servo {self.name!r}"
        for key in ("kp", "kd", "ki"):
            _number(owner, key, getattr(self, key), nonnegative=True)
        _number(owner, "torque_limit", self.torque_limit, positive=True)
        if not hasattr(self.reference, "eval"):
            raise ModelError(f"{owner}: reference must be a profile (an object with "
                             f"eval(t)), got {type(self.reference).__name__}")
        if self.kind not in ("torque", "force"):
            raise ModelError(f"{owner}: kind must be 'torque' or 'force', got {self.kind!r}")
        if self.motor is not None and not isinstance(self.motor, Motor):
            raise ModelError(f"{owner}: motor must be a Motor, got "
                             f"{type(self.motor).__name__}")

    # ------------------------------------------------------------ parameters
    @property
    def ratio(self) -> float:
        return 1.0 if self.motor is None else float(self.motor.gear_ratio)

    @property
    def efficiency(self) -> float:
        return 1.0 if self.motor is None else float(self.motor.efficiency)

    @property
    def reflected_inertia(self) -> float:
        """n² J_m [kg m²] (0 without a motor)."""
        return 0.0 if self.motor is None else self.motor.reflected_inertia

    @property
    def limit(self) -> float:
        return float(self.torque_limit)

    def reference_values(self, t: float) -> tuple[float, float]:
        """(θ_ref [rad], θ̇_ref [rad/s]) at t; ModelError naming the servo if the profile
        fails or is not finite."""
        try:
            ref, rate, _ = self.reference.eval(t)
        except Exception as exc:
            raise ModelError(f"joint servo {self.name!r}: its reference failed at t = "
                             f"{t:g}: {type(exc).__name__}: {exc}") from exc
        if not (math.isfinite(ref) and math.isfinite(rate)):
            raise ModelError(f"joint servo {self.name!r}: its reference returned "
                             f"({ref}, {rate}) at t = {t:g}")
        return float(ref), float(rate)

    # ------------------------------------------------------------ the coordinate
    def coordinate(self, system, q, qd, key=None):
        """(θ [rad or m], θ̇, z_i, apply(load, Q)): the joint's coordinate and rate (an
        angle continued for ``key``), z_i, and the function adding a load vector on j
        with its reaction on i to Q."""
        if self.kind == "torque":
            angle, rate, zi, om_i, om_j = rotation_state(system, self.marker_i,
                                                          self.marker_j, q, qd, key=key)
            return angle, rate, zi, lambda load, Q: apply_torque_pair(
                system, self.marker_i, self.marker_j, load, om_i, om_j, Q)
        value, rate, zi = relative_translation(system, self.marker_i, self.marker_j, q, qd)
        return value, rate, zi, lambda load, Q: apply_pair(
            system, self.marker_i, self.marker_j, load, q, Q, "force")

    def _partials(self, system, pair):
        """(θ, θ̇, z_i, ∂θ/∂q, ∂θ̇/∂q, ∂θ̇/∂q̇, ∂z_i/∂q) over the pair's columns."""
        if self.kind == "torque":
            return rotation_partials(system, pair, self.name)
        return translation_partials(pair)

    # ------------------------------------------------------------ the integral
    def offset(self, t: float) -> float:
        """b = ki ∫ e_m dt [N m]: the integral term acting at time t (the integral of the
        last accepted step that ended before t)."""
        if not self.ki:
            return 0.0
        return self.ki * self._history.acting_at(t)

    def offsets(self, t) -> np.ndarray:
        """:meth:`offset` at each of the times ``t`` (n,) at once (the outputs)."""
        t = np.asarray(t, dtype=float)
        if not self.ki or not self._history.times:
            return np.zeros(t.shape)
        times, values = (np.asarray(v, dtype=float) for v in (self._history.times,
                                                               self._history.values))
        k = np.searchsorted(times, t - 1e-12 * np.maximum(1.0, np.abs(t)), side="left") - 1
        return self.ki * np.where(k >= 0, values[np.maximum(k, 0)], 0.0)

    def commit(self, system, t: float, q, qd, h: float) -> None:
        """Accumulate the integral over an accepted step of size h ending at t, from the
        state (q, q̇) there; held while the torque saturates."""
        if not self.ki:
            return
        history = self._history
        history.drop_from(t)  # a step redone after a rollback
        values = history.values
        angle, rate, _, _ = self.coordinate(system, q, qd, key=f"@servo:{self.name}")
        ref, ref_rate = self.reference_values(t)
        last = values[-1] if values else 0.0
        _, saturated = motor_torque(angle, rate, ref, ref_rate, self.kp, self.kd,
                                    self.ki * last, self.limit, self.ratio)
        history.add(t, last if saturated else last + h * self.ratio * (ref - angle))
        system.angle_memory[self.integral_key] = values[-1]  # a restart point keeps it

    @property
    def integral_key(self) -> str:
        """The key of the integral [rad s] in ``System.angle_memory`` (restart points)."""
        return f"@integral:{self.name}"

    def restart(self, t: float, integral: float = 0.0) -> None:
        """Forget the history after t (a run continued from there) and start from
        ``integral`` [rad s]."""
        self._history.clear()
        if integral:
            self._history.add(t, integral)

    def pin(self, t: float) -> None:
        """An output was recorded at ``t`` [s]: keep the integral acting there for the
        quantities computed at the outputs after the run (:meth:`offsets`), and forget
        the steps' values since the previous output (:meth:`IntegralHistory.pin`)."""
        self._history.pin(t)

    # ------------------------------------------------------------ the torque
    def _control(self, t, angle, rate):
        ref, ref_rate = self.reference_values(t)
        return motor_torque(angle, rate, ref, ref_rate, self.kp, self.kd, self.offset(t),
                            self.limit, self.ratio)

    def apply(self, system, q, qd, t, Q):
        """Q += the controller's torque (force) η n τ_m about (along) z_i on j (reaction on
        i), and the velocity part −n² J_m ((∂θ̇/∂q) q̇) gᵀ of the rotor's inertia force
        −n² J_m θ̈ gᵀ (g = ∂θ̇/∂q̇; the part −n² J_m (g q̈) gᵀ is the mass term,
        :meth:`mass_block`)."""
        angle, rate, zi, add = self.coordinate(system, q, qd, key=self.name)
        tau_m, _ = self._control(t, angle, rate)
        add(joint_torque(tau_m, 0.0, self.ratio, self.efficiency, 0.0) * zi, Q)
        if self.reflected_inertia:  # −n² J_m ((∂θ̇/∂q) q̇) gᵀ, g = ∂θ̇/∂q̇
            pair = MarkerPair(system, self.marker_i, self.marker_j, q, qd)
            _, _, _, _, rate_dq, g, _ = self._partials(system, pair)
            Q[pair.idx] -= self.reflected_inertia * float(rate_dq @ qd[pair.idx]) * g

    def mass_block(self, system, q):
        """(idx, n² J_m gᵀg) on the joint's coordinates (g = ∂θ̇/∂q̇), or None without a
        rotor inertia."""
        if not self.reflected_inertia:
            return None
        pair = MarkerPair(system, self.marker_i, self.marker_j, q, np.zeros_like(q))
        g = self._partials(system, pair)[5]
        return pair.idx, self.reflected_inertia * np.outer(g, g)

    def kinetic_energy(self, system, q, qd) -> float:
        """½ n² J_m θ̇² [J]: the rotor's."""
        if not self.reflected_inertia:
            return 0.0
        _, rate, _, _ = self.coordinate(system, q, qd)
        return 0.5 * self.reflected_inertia * rate * rate

    def tangents(self, system, q, qd, t):
        """−∂Q/∂(q, q̇) of :meth:`apply`: the controller's torque exactly (zero slopes when
        saturated), the rotor's velocity part through q̇ only (2 n² J_m gᵀ ∂θ̇/∂q; its
        q-derivative, of third order in the marker kinematics, is left out, as is that of
        the mass term: the iteration matrix only steers Newton)."""
        pair = MarkerPair(system, self.marker_i, self.marker_j, q, qd)
        angle, rate, zi, angle_dq, rate_dq, rate_dqd, dz = self._partials(system, pair)
        tau_m, saturated = self._control(t, angle, rate)
        torque = joint_torque(tau_m, 0.0, self.ratio, self.efficiency, 0.0)
        d_angle, d_rate = torque_slopes(saturated, self.kp, self.kd, self.ratio,
                                        self.efficiency)
        t_dq = d_angle * angle_dq + d_rate * rate_dq
        k, c = pair_load_tangent(pair, torque * zi, np.outer(zi, t_dq) + torque * dz,
                                 np.outer(zi, d_rate * rate_dqd), self.kind)
        if self.reflected_inertia:  # the rotor's velocity part, through q̇
            c += 2.0 * self.reflected_inertia * np.outer(rate_dqd, rate_dq)
        return pair.idx, k, c

    def measured_value(self, system, q, qd, t) -> tuple[float, str]:
        """(the controller's torque [N m] or force [N] on the joint η n τ_m, its units):
        what a force sensor records (without the rotor's inertia torque)."""
        angle, rate, _, _ = self.coordinate(system, q, qd, key=f"@sensor:{self.name}")
        tau_m, _ = self._control(t, angle, rate)
        return (joint_torque(tau_m, 0.0, self.ratio, self.efficiency, 0.0),
                "N m" if self.kind == "torque" else "N")

    def nonconservative(self):
        """The controller's part (the rotor inertia is kinetic energy)."""
        return _ControllerPart(self)


@dataclass(frozen=True, eq=False)
class _ControllerPart:
    """The servo's controller torque alone (its power enters the energy balance)."""

    servo: JointServo

    @property
    def name(self):
        return self.servo.name

    def apply(self, system, q, qd, t, Q):
        s = self.servo
        angle, rate, zi, add = s.coordinate(system, q, qd, key=s.name)
        tau_m, _ = s._control(t, angle, rate)
        add(joint_torque(tau_m, 0.0, s.ratio, s.efficiency, 0.0) * zi, Q)



#: The coordinates a servo can drive, by joint kind (the first one by default).
SERVO_JOINTS = {"revolute": ("angle",), "prismatic": ("displacement",),
                "cylindrical": ("angle", "displacement")}


def servo_for_joint(name, joints, joint, *, kp, kd, reference, ki=0.0,
                    torque_limit=math.inf, motor=None, coordinate=None) -> JointServo:
    """A :class:`JointServo` on the joint named ``joint`` among ``joints`` (JointSpecs
    declared so far): its markers, a number or a Profile as ``reference`` (a number:
    held), ``motor`` as a :class:`Motor` or a mapping of its fields, and ``coordinate``
    "angle" or "displacement" (default: the joint's, the angle of a cylindrical joint).
    ModelError naming the servo and what is wrong."""
    from .drives import Constant

    who = f"joint servo {name!r}"
    spec = next((j for j in joints if j.name == joint), None)
    if spec is None:
        raise ModelError(f"{who}: joint {joint!r} is not declared (before the servo); "
                         f"joints: {[j.name for j in joints]}")
    if spec.kind not in SERVO_JOINTS:
        raise ModelError(f"{who}: joint {joint!r} is {spec.kind}; a servo drives the "
                         f"coordinate of a {', '.join(SERVO_JOINTS)} joint")
    allowed = SERVO_JOINTS[spec.kind]
    coordinate = allowed[0] if coordinate is None else coordinate
    if coordinate not in allowed:
        raise ModelError(f"{who}: coordinate must be {' or '.join(allowed)} for the "
                         f"{spec.kind} joint {joint!r}, got {coordinate!r}")
    if isinstance(reference, (int, float)) and not isinstance(reference, bool):
        reference = Constant(float(reference))
    if isinstance(motor, dict):
        unknown = sorted(set(motor) - {"inertia", "gear_ratio", "efficiency"})
        if unknown:
            raise ModelError(f"{who}: motor has unknown key {unknown[0]!r} (known: inertia, "
                             f"gear_ratio, efficiency)")
        try:
            motor = Motor(**motor)
        except ModelError as exc:
            raise ModelError(f"{who}: {exc}") from None
    return JointServo(name, spec.marker_i, spec.marker_j, kp, kd, reference, ki,
                      math.inf if torque_limit is None else torque_limit, motor,
                      "torque" if coordinate == "angle" else "force")
