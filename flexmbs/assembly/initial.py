"""The initial state from conditions in joint coordinates (docs/multibody.md, "Initial
conditions in joint coordinates").

Each condition "joint coordinate s of joint J is s₀ with rate ṡ₀" is imposed as a drive
of the same kind on the joint's markers (a rotation drive: the angle of x_j about z_i,
the coordinate the revolute joint turns about; a translation drive: z_iᵀ(r_j − r_i)),
added to the model's constraints for the assembly only. Positions: the joint coordinates
are carried from their values at the bodies' given poses to the targets in
:data:`STEPS` equal steps (fewer for small angles: :func:`continuation_steps`), each
a least-change Newton projection (:meth:`System.assemble`) from the last, so a chain
may start from any guess (all bodies at the origin) and a large angle is not taken on
its other branch. Velocities: the
least-change projection of the bodies' given velocities onto the velocity constraints
with the prescribed rates (the drives s(t) = s₀ + ṡ₀ (t − t₀)); a condition without a
rate leaves that rate free.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ConvergenceError
from ..model.drives import Polynomial, Profile

#: Continuation steps from the joint coordinates at the given poses to the targets (at
#: most: conditions on angles alone take as many as keep each step within ANGLE_STEP).
STEPS = 8

#: The largest change of a joint angle per continuation step [rad] when every condition
#: is an angle: a small fraction of the π between the two branches of a rotation drive's
#: equation, so each step's Newton projection stays on the branch it starts from.
ANGLE_STEP = np.pi / 8


def continuation_steps(conditions, start, targets) -> int:
    """The continuation steps from ``start`` to ``targets`` (the conditions' values):
    :data:`STEPS`, or fewer where every condition is an angle and the largest change
    fits in fewer steps of at most :data:`ANGLE_STEP` (a 30° elbow: 2 steps)."""
    if any(item.quantity != "angle" for item in conditions):
        return STEPS
    largest = max((abs(v - s) for s, v in zip(start, targets, strict=True)), default=0.0)
    return int(min(STEPS, max(1, np.ceil(largest / ANGLE_STEP))))


class _Target(Profile):
    """s(t) = ``value`` [rad or m], moved by the continuation from one step to the next
    (one System serves every step)."""

    def __init__(self, value: float):
        self.value = float(value)

    def eval(self, t):
        return self.value, 0.0, 0.0


def _drive(item, spec, value, rate, t0, profile=None):
    from ..model.builder import DriveSpec

    kind = "rotation" if item.quantity == "angle" else "translation"
    return DriveSpec(f"@initial:{item.joint}:{item.quantity}", kind,
                     profile or Polynomial((value - rate * t0, rate)), spec.marker_i,
                     spec.marker_j)


def _joint_value(system, item, spec, q) -> float:
    from ..elements.marker_pairs import relative_rotation, relative_translation

    qd = np.zeros_like(q)
    if item.quantity == "angle":
        return relative_rotation(system, spec.marker_i, spec.marker_j, q, qd)[0]
    return relative_translation(system, spec.marker_i, spec.marker_j, q, qd)[0]


def _with_drives(system, drives):
    from .system import System

    model = replace(system.model, drives=system.model.drives + tuple(drives), initial=(),
                    sensors=())
    return System(model, **system.overrides)


def initial_state(system, t0: float = 0.0) -> tuple[np.ndarray, np.ndarray] | None:
    """(q0, q̇0) meeting the model's joint-coordinate initial conditions and all its
    constraints at ``t0``, or None when the model has none. Raises ConvergenceError
    naming the conditions when the assembly fails."""
    conditions = getattr(system.model, "initial", ())
    if not conditions:
        return None
    specs = {j.name: j for j in system.model.joints}
    q = system.q0.copy()
    start = [_joint_value(system, item, specs[item.joint], q) for item in conditions]
    targets = [item.value for item in conditions]
    goals = [_Target(s) for s in start]
    steering = _with_drives(system, [
        _drive(item, specs[item.joint], 0.0, 0.0, t0, goal)
        for item, goal in zip(conditions, goals, strict=True)])
    steps = continuation_steps(conditions, start, targets)
    try:
        for k in range(1, steps + 1):
            frac = k / steps
            for goal, s, v in zip(goals, start, targets, strict=True):
                goal.value = s + frac * (v - s)
            q = steering.assemble(q, t=t0)
    except ConvergenceError as exc:
        names = ", ".join(f"{c.joint} {c.quantity} = {c.value:g}" for c in conditions)
        raise ConvergenceError(f"the initial conditions in joint coordinates ({names}) "
                               f"could not be assembled: {exc}") from None
    rated = [item for item in conditions if item.rate is not None]
    moving = _with_drives(system, [_drive(item, specs[item.joint], item.value, item.rate,
                                          t0) for item in rated]) if rated else system
    qd = moving.project_velocity(q, system.qd0, t0)  # (no rate given: the model's rows)
    return q, qd
