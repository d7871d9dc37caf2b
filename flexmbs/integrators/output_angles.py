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
    it was recorded with the output (``memory``: the run's :class:`AngleLog`), else
    continued from the previous output by the trapezoidal rule of the rate, as the
    joint-angle sensors do (the outputs of a run continued from a restart point, before
    it); an output with neither starts in (−π, π]."""
    from ..model.forces import relative_rotation

    out = {}
    n = len(t)
    for force in angle_forces(system):
        values = memory.column(force.name)
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


def batch_angles(before: dict, rows, names, wanted):
    """The angle memory after each step of a batch, as the per-step path keeps it with
    each output: ``before`` (the memory the batch starts from) updated by each step's
    angles ``rows`` ((count, n) [rad] in ``names`` order: the kernels' ``torsion_names``;
    NaN where a step left none). Returns (filled (count, n): each name's latest angle,
    present (count, n): whether it has one, refs): refs are the (count, n) references
    the outputs after the run would give the kernels for those rows (:func:`output_angles`:
    the memory for the forces in ``wanted``, the names of :func:`angle_forces`; NaN for
    the others), or None where one of them is not in the memory (such rows are left to
    after the run)."""
    names = list(names)
    rows = np.asarray(rows, dtype=float).reshape(len(rows), len(names))
    wanted_cols = np.array([name in wanted for name in names], dtype=bool)
    if np.isfinite(rows).all():  # every step left every angle (the usual batch; a copy:
        filled = rows.copy()       # the rows may be a buffer the next batch writes)
        return filled, np.ones(rows.shape, dtype=bool), np.where(wanted_cols, filled, np.nan)
    count, width = rows.shape
    stack = np.vstack([[before.get(name, np.nan) for name in names], rows])
    seen = stack == stack  # (NaN: no memory)
    last = np.where(seen, np.arange(count + 1)[:, None], 0)
    np.maximum.accumulate(last, axis=0, out=last)
    filled = stack[last, np.arange(width)][1:]         # each name's latest angle
    present = (np.cumsum(seen, axis=0) > 0)[1:] | np.array([n in before for n in names],
                                                           dtype=bool)
    refs = np.where(present & wanted_cols, filled, np.nan)
    if not np.all(np.isfinite(refs[:, wanted_cols])):
        return filled, present, None
    return filled, present, refs


class AngleLog:
    """The System's angle memory (``System.unwrap``: {force name: rad}) at each output of
    a run, kept by columns: one memory at a time (:meth:`add`), a batch's at once from
    :func:`batch_angles`'s arrays (:meth:`add_batch`, no dictionary per output), or
    outputs whose memory is not known (:meth:`add_unknown`). :meth:`column` gives one
    name's angles at every output, NaN where it had none."""

    def __init__(self):
        self._parts: list = []  # ("each", [memory, …]) | ("batch", before, names,
        self._count = 0         # filled, present) | ("unknown", count)

    def __len__(self) -> int:
        return self._count

    def add(self, memory: dict) -> None:
        """One output's memory (a copy is kept)."""
        if not self._parts or self._parts[-1][0] != "each":
            self._parts.append(("each", []))
        self._parts[-1][1].append(dict(memory))
        self._count += 1

    def add_unknown(self, count: int) -> None:
        """``count`` outputs whose memory is not known (a restart's history)."""
        self._parts.append(("unknown", int(count)))
        self._count += int(count)

    def add_batch(self, before: dict, names, filled, present) -> None:
        """A batch's outputs: ``before`` updated by each row of ``filled`` where
        ``present`` (:func:`batch_angles`)."""
        self._parts.append(("batch", dict(before), list(names), filled, present))
        self._count += len(filled)

    def column(self, name: str) -> np.ndarray:
        """(len,) angles [rad] of ``name`` at every output, NaN where none."""
        pieces = []
        for part in self._parts:
            kind = part[0]
            if kind == "unknown":
                pieces.append(np.full(part[1], np.nan))
            elif kind == "each":
                pieces.append(np.array([m.get(name, np.nan) for m in part[1]], dtype=float))
            else:
                _, before, names, filled, present = part
                if name in names:
                    i = names.index(name)
                    pieces.append(np.where(present[:, i], filled[:, i], np.nan))
                else:
                    pieces.append(np.full(len(filled), before.get(name, np.nan)))
        return np.concatenate(pieces) if pieces else np.zeros(0)
