"""The angles of the forces that continue an angle (rotational spring–dampers, torque
joint actuators: ``System.unwrap``) at the outputs of a run, for the quantities computed
after it: potential energies and force sensors (docs/compiled.md, "Adding a joint kind or
a force kind").

An angle from atan2 is known only up to whole turns; during the run each force continues
its angle from its last evaluation. After the run, outputs may be many steps apart
(``output_every``, output times), so continuing from output to output would lose turns
when a force turns by more than π between them. The run records its angle memory with
every output instead, and these references pick the right turn at each output.
"""

from __future__ import annotations

import numpy as np


def angle_forces(system) -> list:
    """The forces of ``system`` whose angle is needed after the run, in model order: the
    rotational spring–dampers (their potential), the joint servos (their torque's power)
    and the torque joint actuators that a
    force sensor reads (the angle the actuator's function is given). The compiled
    kernels keep no angle for actuators, so an actuator nobody reads would cost a
    NumPy evaluation per output for nothing."""
    from ..model.forces import JointActuator, RotationalSpringDamper
    from ..model.servos import JointServo

    read = {s.target for s in getattr(system.model, "sensors", ()) if s.kind == "force"}
    return [f for f in system.model.forces
            if isinstance(f, RotationalSpringDamper)
            or (isinstance(f, JointServo) and f.kind == "torque")
            or (isinstance(f, JointActuator) and f.kind == "torque" and f.name in read)]


def output_angles(system, t, q, qd, memory) -> dict[str, np.ndarray]:
    """{force name: (n_t,) angle [rad]} at every output: the run's own angle memory where
    it was recorded with the output (``memory[k]``: the System's memory then, or None),
    else continued from the previous output by the trapezoidal rule of the rate, as the
    joint-angle sensors do (the outputs of a run continued from a restart point, before
    it); an output with neither starts in (−π, π]."""
    from ..model.forces import relative_rotation

    out = {}
    n = len(t)
    for force in angle_forces(system):
        values = np.array([np.nan if m is None else m.get(force.name, np.nan)
                           for m in memory], dtype=float)
        if np.all(np.isfinite(values)):
            out[force.name] = values
            continue
        raw, rate = np.empty(n), np.empty(n)
        for k in range(n):
            raw[k], rate[k], _ = relative_rotation(system, force.marker_i, force.marker_j,
                                                   q[k], qd[k])
        for k in range(n):
            if np.isfinite(values[k]):
                continue
            values[k] = raw[k]
            if k and np.isfinite(values[k - 1]):
                guess = values[k - 1] + 0.5 * (rate[k] + rate[k - 1]) * (t[k] - t[k - 1])
                values[k] += 2 * np.pi * np.round((guess - raw[k]) / (2 * np.pi))
        out[force.name] = values
    return out


def angle_snapshots(before: dict, rows, names, wanted) -> tuple[list[dict], np.ndarray | None]:
    """The angle memory after each step of a batch, as the per-step path keeps it with
    each output: ``before`` (the memory the batch starts from) updated by each step's
    angles ``rows`` ((count, n) [rad] in ``names`` order: the kernels' ``torsion_names``;
    NaN where a step left none). Also the (count, n) references the outputs after the run
    would give the kernels for those rows (:func:`output_angles`: the memory for the
    forces in ``wanted``, the names of :func:`angle_forces`; NaN for the others), or None
    where one of them is not in the memory (such rows are left to after the run)."""
    names = list(names)
    rows = np.asarray(rows, dtype=float).reshape(len(rows), len(names))
    count, width = rows.shape
    stack = np.vstack([[before.get(name, np.nan) for name in names], rows])
    seen = stack == stack  # (NaN: no memory)
    last = np.where(seen, np.arange(count + 1)[:, None], 0)
    np.maximum.accumulate(last, axis=0, out=last)
    filled = stack[last, np.arange(width)][1:]         # each name's latest angle
    present = (np.cumsum(seen, axis=0) > 0)[1:] | np.array([n in before for n in names])
    base, values = dict(before), filled.tolist()
    snapshots = []
    for k in range(count):
        if present[k].all():
            snapshots.append({**base, **dict(zip(names, values[k], strict=True))})
        else:
            snapshots.append({**base, **{name: values[k][i] for i, name in enumerate(names)
                                         if present[k, i]}})
    wanted_cols = np.array([name in wanted for name in names], dtype=bool)
    refs = np.where(present & wanted_cols, filled, np.nan)
    if not np.all(np.isfinite(refs[:, wanted_cols])):
        return snapshots, None
    return snapshots, refs
