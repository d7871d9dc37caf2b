"""Sensor values over a run, from the recorded states (docs/sensors.md).

:func:`sensor_histories` evaluates every sensor of a model (:mod:`flexmbs.model.sensors`)
at every output time from t, q, q̇, q̈ and λ, after the run. The kinematics are those of
the bodies' marker frames (docs/theory_ffrf.md §8): a marker point r = R + A s(ξ) has
velocity J q̇ and acceleration J q̈ + J̇ q̇; its angular velocity is Ω q̇ with the
angular Jacobian Ω.

Joint reactions come from the multipliers: the joint's rows contribute −Φ_qᵀλ to the
generalized forces (the equations of motion are M q̈ + Φ_qᵀλ = Q, docs/multibody.md), and
on the body of marker j that generalized force is the virtual work of one force F at the
marker's point and one torque T, −Φ_q,jᵀλ = J_Fᵀ F + Ω_jᵀ T (J_F the force Jacobian of
the marker); (F, T) is its solution (least squares over the body's coordinates, exact
for a joint acting at the marker). When marker j is on the ground the reaction is taken
on body i and carried over: F_j = −F_i, T_j = −T_i + (r_j − r_i) × F_i. A drive's
sensor is the same load of its one row, resolved along marker i's z axis: the torque
(rotation drive) or force (translation drive) the drive applies to the body of marker j
along the coordinate it drives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.sensors import QUANTITIES, Sensor
from .marker_histories import (
    marker_history,
    relative_rotation_history,
    relative_translation_history,
)


@dataclass(frozen=True)
class SensorHistory:
    """The values of one sensor: ``values`` (n_t, n_components) in ``units`` at the
    results' output times, with the sensor's definition."""

    sensor: Sensor
    values: np.ndarray
    units: str
    components: tuple[str, ...]

    def extremes(self) -> dict:
        """{component: {"min", "max", "final"}} over the run (NaN-free values)."""
        out = {}
        for c, name in enumerate(self.components):
            col = self.values[:, c]
            finite = col[np.isfinite(col)]
            out[name] = ({"min": float(finite.min()), "max": float(finite.max()),
                          "final": float(col[-1])} if finite.size else
                         {"min": None, "max": None, "final": None})
        return out


def sensor_histories(system, t, q, qd, qdd, lam, contacts=None) -> dict[str, SensorHistory]:
    """Every sensor of ``system.model`` at the outputs (t (n_t,), q, q̇, q̈ (n_t, n_q),
    λ (n_t, n_c)); ``contacts``: the results' contact records (name → quantity → (n_t,))."""
    return {sensor.name: sensor_history(system, sensor, t, q, qd, qdd, lam, contacts)
            for sensor in getattr(system.model, "sensors", ())}


def sensor_history(system, sensor, t, q, qd, qdd, lam, contacts=None,
                   angle_refs=None, shared=None) -> SensorHistory:
    """One sensor's :class:`SensorHistory` (arguments as :func:`sensor_histories`);
    ``angle_refs`` ({force name: (n_t,) angle [rad]}, the run's angles at the outputs,
    :func:`flexmbs.integrators.output_angles.output_angles`) give a force sensor on a
    rotational spring or torque actuator the turns of its angle at every output.
    ``shared``: a dict kept over the sensors of one history, where a joint's coordinate
    and rate histories are computed once for its sensors and its servo's."""
    if sensor.kind == "force":
        values, units, comps = _force(system, sensor, t, q, qd, angle_refs or {}, shared)
    elif sensor.kind == "joint":
        values, units, comps = _joint(system, sensor, t, q, qd, qdd, lam, contacts,
                                      shared)
    else:
        values, units, comps = _EVALUATORS[sensor.kind](system, sensor, t, q, qd, qdd, lam,
                                                        contacts or {})
    values = np.asarray(values, dtype=float).reshape(len(t), -1)
    return SensorHistory(sensor, values, units, tuple(comps))


def _table(sensor):
    return QUANTITIES[sensor.kind][sensor.quantity]


def _marker(system, sensor, t, q, qd, qdd, lam, contacts, name=None):
    """Marker position, orientation (x, y, z axes), velocity and angular velocity from
    the whole run's marker frames at once (:func:`marker_history`); the acceleration
    output by output (its velocity-quadratic part from the body's ``marker_frame``)."""
    name = name or sensor.target
    units, comps = _table(sensor)
    quantity = sensor.quantity
    if quantity != "acceleration":
        rates = quantity in ("velocity", "angular_velocity")
        history = marker_history(system, name, q, qd if rates else None)
        values = {"position": lambda: history.points,
                  # x axis, then y, then z (global components)
                  "orientation": lambda: history.axes.transpose(0, 2, 1).reshape(-1, 9),
                  "velocity": lambda: history.velocities,
                  "angular_velocity": lambda: history.angular_velocities}[quantity]()
        return values, units, comps
    body, marker, sl = system.marker_info(name)
    rows = []
    for k in range(len(t)):
        if sl.stop == sl.start:  # a ground marker does not move
            rows.append(np.zeros(3))
            continue
        qb, qdb, qddb = q[k, sl], qd[k, sl], qdd[k, sl]
        _, _, jac, quad = body.marker_frame(qb, marker, qdb)
        rows.append(jac[0] @ qddb + quad[0])
    return np.array(rows), units, comps


def _node(system, sensor, t, q, qd, qdd, lam, contacts):
    """Elastic displacement, velocity, acceleration of the node: body frame Φ_n ξ (and
    its rates); global frame A Φ_n ξ and the absolute velocity and acceleration."""
    name = f"{sensor.target}.@{sensor.name}"
    body, marker, sl = system.marker_info(name)
    units, comps = _table(sensor)
    shapes = body._modes(marker).phi  # (3, n_m), body axes
    start = sl.start + 7
    xi = {"displacement": q, "velocity": qd, "acceleration": qdd}[sensor.quantity]
    elastic = xi[:, start:start + body.n_modes] @ shapes.T  # (n_t, 3) body axes
    if sensor.frame == "body":
        return elastic, units, comps
    if sensor.quantity == "displacement":
        from ..frame.rotations import rotation_matrices

        return (np.einsum("tij,tj->ti", rotation_matrices(q[:, sl][:, 3:7]), elastic),
                units, comps)
    return _marker(system, _as_marker_sensor(sensor), t, q, qd, qdd, lam, contacts, name)


def _as_marker_sensor(sensor):
    """The marker sensor of the same quantity (node velocity and acceleration, global)."""
    return Sensor(sensor.name, "marker", sensor.quantity, sensor.target)


def _joint(system, sensor, t, q, qd, qdd, lam, contacts, shared=None):
    """Joint coordinate and rate from the markers' frames over the run
    (:func:`marker_history`): the angle of x_j about z_i and z_iᵀ(ω_j − ω_i), or the
    displacement z_iᵀ(r_j − r_i) and its rate. Angles are unwrapped along the run with
    the rate: each output's angle is the representative nearest to the previous one
    advanced by the trapezoidal rule of the rates (so changes of more than π between
    outputs count). ``shared``: see :func:`sensor_history`."""
    spec = _joint_spec(system, sensor.target)
    units, comps = _table(sensor)
    angular = sensor.quantity.startswith("angle")
    key = ("joint", spec.name, angular)
    if shared is not None and key in shared:
        values, rates = shared[key]
        return (rates if sensor.quantity.endswith("rate") else values), units, comps
    values, rates = _relative(system, angular, spec.marker_i, spec.marker_j, q, qd, shared)
    if angular:
        values = _unwrapped(values, rates, np.asarray(t, dtype=float))
    if shared is not None:
        shared[key] = (values, rates)
    return (rates if sensor.quantity.endswith("rate") else values), units, comps


def _relative(system, angular: bool, marker_i: str, marker_j: str, q, qd, shared):
    """(coordinate, rate) histories of marker j relative to marker i: the angle about
    z_i in (−π, π] (:func:`relative_rotation_history`) or the displacement along z_i
    (:func:`relative_translation_history`), once per pair in ``shared`` (a joint's
    sensors and its servo's)."""
    key = ("relative", angular, marker_i, marker_j)
    if shared is not None and key in shared:
        return shared[key]
    history = relative_rotation_history if angular else relative_translation_history
    out = history(system, marker_i, marker_j, q, qd)
    if shared is not None:
        shared[key] = out
    return out


def _unwrapped(angles, rates, t):
    """``angles`` (in (−π, π]) moved by whole turns so that each is the representative
    nearest to the previous one advanced by the trapezoidal rule of ``rates`` over t:
    the turns added up along the run (a non-finite step leaves the rest non-finite)."""
    turn = 2 * math.pi
    if angles.size < 2:
        return angles
    step = angles[:-1] + 0.5 * (rates[1:] + rates[:-1]) * np.diff(t) - angles[1:]
    turns = np.concatenate([[0.0], np.cumsum(np.round(step / turn))])
    return angles + turn * turns


def _joint_spec(system, name):
    return next(j for j in system.model.joints if j.name == name)


def _load_on_j(system, spec, rows, qk, tk, lam_k):
    """(F, T, axes_i): the load that the constraint rows ``rows`` of ``spec`` (a joint or
    a drive between markers i and j) apply to the body of marker j, a force F at marker
    j's point and a torque T (global components), and marker i's axes (columns)."""
    bi, mi, sli = system.marker_info(spec.marker_i)
    bj, mj, slj = system.marker_info(spec.marker_j)
    on_i = slj.stop == slj.start  # marker j on the ground: take it on body i
    body, marker, sl = (bi, mi, sli) if on_i else (bj, mj, slj)
    jac = system.jacobian(qk, tk, sparse=False)
    generalized = -(jac[rows, sl].T @ lam_k[rows])
    basis = np.vstack([body.force_jac(qk[sl], marker), body.angular_jac(qk[sl], marker)]).T
    sol = np.linalg.lstsq(basis, generalized, rcond=None)[0]  # basis (n_b, 6)
    force, torque = sol[:3], sol[3:]
    ri, axes_i = bi.marker_frame(qk[sli], mi, jac=False)[:2]
    if on_i:  # the reaction on j, about j's point
        rj = bj.marker_frame(qk[slj], mj, jac=False)[0]
        force, torque = -force, -torque + np.cross(rj - ri, force)
    return force, torque, axes_i


def _reaction(system, sensor, t, q, qd, qdd, lam, contacts):
    spec = _joint_spec(system, sensor.target)
    rows = next(r.rows for r in system._rows if r.kind == "joint" and r.name == spec.name)
    units, comps = _table(sensor)
    out = []
    for k in range(len(t)):
        force, torque, axes = _load_on_j(system, spec, rows, q[k], float(t[k]), lam[k])
        vec = force if sensor.quantity == "force" else torque
        out.append(axes.T @ vec if sensor.frame == "joint" else vec)
    return np.array(out), units, comps


def _drive(system, sensor, t, q, qd, qdd, lam, contacts):
    """The generalized force a drive applies along the coordinate it drives, from its
    multiplier: the torque about marker i's z axis (rotation drive) or the force along it
    (translation drive) on the body of marker j, i.e. T·z_i or F·z_i of that body's
    constraint load (:func:`_load_on_j`); for a coordinate drive of x, y or z, the force
    −λ along that global axis on the body (Φ = q_k − s(t))."""
    spec = next(d for d in system.model.drives if d.name == sensor.target)
    row = next(r for r in system._rows
               if r.name == spec.name and r.kind in ("drive", "coordinate"))
    units, comps = _table(sensor)
    if row.kind == "coordinate":
        return -lam[:, row.rows], units, comps
    out = np.empty((len(t), 1))
    for k in range(len(t)):
        force, torque, axes = _load_on_j(system, spec, row.rows, q[k], float(t[k]), lam[k])
        out[k, 0] = (torque if spec.kind == "rotation" else force) @ axes[:, 2]
    return out, units, comps


def _force(system, sensor, t, q, qd, refs, shared=None):
    """A force's ``value``, or the ``force``/``torque`` components of a bushing (its
    ``measured_value`` for that quantity); a joint servo's over the whole run at once
    (:func:`_servo_values`; ``shared`` as for :func:`sensor_history`)."""
    from ..model.servos import JointServo

    force = next(f for f in system.model.forces if f.name == sensor.target)
    turns = refs.get(force.name)
    if (isinstance(force, JointServo) and sensor.quantity == "value"
            and (turns is not None or force.kind != "torque")):
        units = "N m" if force.kind == "torque" else "N"
        return (_servo_values(system, force, t, q, qd, turns, shared), units,
                _table(sensor)[1])
    values, units = [], "-"
    extra = {} if sensor.quantity == "value" else {"quantity": sensor.quantity}
    for k in range(len(t)):
        if turns is not None:  # the sensor's own angle memory, set to the run's angle
            system.angle_memory[f"@sensor:{force.name}"] = float(turns[k])
        value, units = force.measured_value(system, q[k], qd[k], float(t[k]), **extra)
        values.append(value)
    return np.array(values), units, _table(sensor)[1]


def _servo_values(system, servo, t, q, qd, turns, shared=None):
    """A joint servo's ``measured_value`` (the controller's joint torque or force η n τ_m)
    at every output: the joint coordinate and rate over the run
    (:func:`relative_rotation_history`), each angle the representative nearest to the
    run's own angle at that output (``turns``, as the per-output sensor memory gives),
    the reference, the integral term acting at each output (``offsets``) and the
    clipped PD law of ``motor_torque``."""
    t = np.asarray(t, dtype=float)
    values, rates = _relative(system, servo.kind == "torque", servo.marker_i,
                              servo.marker_j, q, qd, shared)
    if servo.kind == "torque":
        turns = np.asarray(turns, dtype=float)
        known = np.isfinite(turns)  # a non-finite memory is none
        values = values + np.where(
            known, 2 * np.pi * np.round((np.where(known, turns, 0.0) - values) / (2 * np.pi)),
            0.0)
        if values.size:
            system.angle_memory[f"@sensor:{servo.name}"] = float(values[-1])
    reference = _servo_references(servo, t)
    tau = (servo.kp * servo.ratio * (reference[:, 0] - values)
           + servo.kd * servo.ratio * (reference[:, 1] - rates) + servo.offsets(t))
    tau = np.clip(tau, -servo.limit, servo.limit)
    return servo.efficiency * servo.ratio * tau


def _servo_references(servo, t: np.ndarray) -> np.ndarray:
    """(n, 2) the servo's (θ_ref, θ̇_ref) at the times ``t``: its profile over the array
    at once (``eval_many``); where that fails or gives a non-finite value, time by time,
    which raises the ModelError naming the servo."""
    many = getattr(servo.reference, "eval_many", None)
    if many is not None:
        try:
            out = np.asarray(many(t), dtype=float).reshape(t.size, -1)[:, :2]
            if np.isfinite(out).all():
                return out
        except Exception:  # said time by time below, by name
            pass
    return np.array([servo.reference_values(float(tk)) for tk in t]).reshape(-1, 2)


def _energy(system, sensor, t, q, qd, qdd, lam, contacts):
    k_body = system._body_index[sensor.target]
    body, sl = system.bodies[k_body], system.slices[k_body]
    units, comps = _table(sensor)
    if sensor.quantity == "kinetic":
        values = [body.kinetic_energy(q[k, sl], qd[k, sl]) for k in range(len(t))]
    else:
        g = system.model.gravity
        values = [body.potential_energy(q[k, sl], g) for k in range(len(t))]
    return np.array(values), units, comps


def _modal(system, sensor, t, q, qd, qdd, lam, contacts):
    k_body = system._body_index[sensor.target]
    body, sl = system.bodies[k_body], system.slices[k_body]
    comps = tuple(f"xi{j + 1}" for j in range(body.n_modes))
    return q[:, sl.start + 7:sl.start + 7 + body.n_modes], "-", comps


def _contact(system, sensor, t, q, qd, qdd, lam, contacts):
    units, comps = _table(sensor)
    record = contacts.get(sensor.target, {})
    values = np.asarray(record.get(sensor.quantity, np.full(len(t), np.nan)), dtype=float)
    return values.reshape(len(t), -1)[:, :1], units, comps


_EVALUATORS = {"marker": _marker, "node": _node, "joint": _joint, "reaction": _reaction,
               "drive": _drive, "energy": _energy, "modal": _modal,
               "contact": _contact}  # force: _force
