"""The sampled integrals of joint servos with ki > 0 as states of the discrete run
(docs/gradients.md, "Servo integrals").

A servo's integral term acts through b = ki I_{n} in the step from t_n to t_{n+1}, and
after the step is accepted its integral moves on,

    I_{n+1} = I_n + h n (θ_ref(t_{n+1}) − θ(q_{n+1}))      (I_{n+1} = I_n when saturated)

(:meth:`~flexmbs.model.servos.JointServo.commit`; n the gear ratio). So I is one more
state of the step map, and the adjoint carries its cotangent Ī beside ỹ:

    q̄_{n+1} += Ī_{n+1} ∂I_{n+1}/∂q_{n+1}      before the step's solve
    Ī_n      = Ī_{n+1} − μ_{n+1}ᵀ ∂F_{n+1}/∂I_n
    dJ/dp   += Ī_{n+1} ∂I_{n+1}/∂p             (explicit: the reference, the gear)

and the forward sensitivities carry dI/dp. ∂F/∂I_n is the servo's load per unit b
times ki (:func:`~flexmbs.gradients.residual_terms.servo_load_change`), and the explicit
∂I_{n+1}/∂p is differenced between the Systems at p ± δ (the same state, the same I_n).
Each evaluation at a step holds I_n in the servos' histories of every System it reads
(:meth:`ServoIntegrals.hold`), taken from the angle memory the forward run kept with
each state (``@integral:<servo>``), so segments run again and the Systems at p ± δ
agree with the forward run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..elements.joint_servo.reference import motor_torque
from ..elements.marker_pairs import MarkerPair
from ..errors import ValidationError
from .residual_terms import servo_load_change


@dataclass
class StepTerms:
    """What one step adds for the integrals: ``load`` (n_s, size) ∂F/∂I_n in the step
    Jacobian's rows, ``d_q`` (n_s, n_q) ∂I_{n+1}/∂q_{n+1} and ``d_p`` (n_s, n_p) the
    explicit ∂I_{n+1}/∂p."""

    load: np.ndarray
    d_q: np.ndarray
    d_p: np.ndarray


def _servos(system) -> dict:
    return {f.name: f for f in system.model.forces
            if getattr(f, "element_kind", None) == "joint_servo"}


class ServoIntegrals:
    """The integrals of ``system``'s servos with ki > 0 for a gradient over ``prepared``
    parameters (:class:`~flexmbs.gradients.prepared.PreparedParameter`) of the sensor of
    ``probe``; false when there are none (then nothing changes)."""

    def __init__(self, system, probe, prepared):
        self.system, self.prepared = system, prepared
        self.servos = [s for s in _servos(system).values() if s.ki]
        names = {s.name for s in self.servos}
        sensor = probe.sensor
        if sensor.kind == "force" and sensor.target in names:
            raise ValidationError(
                f"gradients of sensor {sensor.name!r} cannot follow the integral term of "
                f"joint servo {sensor.target!r} it reads yet; take a sensor of the motion "
                f"(a joint angle, a marker) or set ki = 0")
        self._ends = None

    def __bool__(self) -> bool:
        return bool(self.servos)

    def _pm_servos(self) -> list:
        """Per parameter: (the servos at p + δ, at p − δ), in this object's order."""
        if self._ends is None:
            self._ends = []
            for prep in self.prepared:
                ends = [_servos(s) for s in prep.systems()]
                self._ends.append(tuple([e[s.name] for s in self.servos] for e in ends))
        return self._ends

    def acting(self, angles: dict) -> np.ndarray:
        """(n_s,) the integrals [rad s] after the step that left the angle memory
        ``angles`` (0 before the first)."""
        return np.array([float(angles.get(s.integral_key, 0.0)) for s in self.servos])

    def hold(self, t_prev: float, values) -> None:
        """Make ``values`` (n_s,) the integrals acting after ``t_prev`` [s] in every
        System the step's equations are read from (this run's, and those at p ± δ)."""
        for servo, value in zip(self.servos, values, strict=True):
            servo.restart(t_prev, float(value))
        for plus, minus in self._pm_servos():
            for servo, value in zip([*plus, *minus], [*values, *values], strict=True):
                servo.restart(t_prev, float(value))

    def step(self, state, h: float, acting, size: int) -> StepTerms:
        """The :class:`StepTerms` of the step of size ``h`` [s] that ended at ``state``
        with the integrals ``acting`` (n_s,) held (:meth:`hold`); ``size`` the step
        Jacobian's order."""
        system = self.system
        n = system.n_q
        n_s, n_p = len(self.servos), len(self.prepared)
        load, d_q, d_p = np.zeros((n_s, size)), np.zeros((n_s, n)), np.zeros((n_s, n_p))
        for k, servo in enumerate(self.servos):
            idx, d_load = servo_load_change(system, servo, state, d_offset=servo.ki)
            np.add.at(load[k], idx, -d_load)  # r = … − Q
            if _next_integral(system, servo, state, h, acting[k])[1]:
                continue  # saturated: I_{n+1} = I_n
            pair = MarkerPair(system, servo.marker_i, servo.marker_j, state.q, state.qd)
            angle_dq = servo._partials(system, pair)[3]
            np.add.at(d_q[k], pair.idx, -h * servo.ratio * angle_dq)
        for j, (plus, minus) in enumerate(self._pm_servos()):
            systems = self.prepared[j].systems()
            for other in systems:  # the same state: the same continued angles
                other.angle_memory = dict(system.angle_memory)
            for k in range(n_s):
                ends = [_next_integral(s, ends_k, state, h, acting[k])[0]
                        for s, ends_k in zip(systems, (plus[k], minus[k]), strict=True)]
                d_p[k, j] = (ends[0] - ends[1]) / self.prepared[j].span
        return StepTerms(load, d_q, d_p)


def _next_integral(system, servo, state, h: float, acting: float) -> tuple[float, bool]:
    """(I_{n+1}, saturated) of ``servo`` on ``system`` after the step of size ``h``
    that ended at ``state``, from I_n = ``acting``: what
    :meth:`~flexmbs.model.servos.JointServo.commit` adds. The System's angle memory is
    read (the continued angle), not changed."""
    memory = system.angle_memory
    system.angle_memory = dict(memory)
    try:
        angle, rate, _, _ = servo.coordinate(system, state.q, state.qd,
                                             key=f"@servo:{servo.name}")
    finally:
        system.angle_memory = memory
    ref, ref_rate = servo.reference_values(state.t)
    _, saturated = motor_torque(angle, rate, ref, ref_rate, servo.kp, servo.kd,
                                servo.ki * acting, servo.limit, servo.ratio)
    if saturated:
        return acting, True
    return acting + h * servo.ratio * (ref - angle), False
