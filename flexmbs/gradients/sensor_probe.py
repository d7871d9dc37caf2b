"""One component of one sensor as a function of a step's state, with its derivatives
(docs/gradients.md, "Objectives").

Values come from :func:`flexmbs.assembly.sensors.sensor_history`, the code that fills
the results' sensor histories, one state at a time (joint angles continued from step to
step). The gradient with respect to (q, q̇, q̈, λ) is exact for the kinematic kinds —
marker position, velocity and angular velocity, joint angles, displacements and their
rates, modal coordinates, node motion in body axes — from the bodies' marker Jacobians;
the other kinds (accelerations of markers, reactions, drive loads, forces, energies)
take central differences over the coordinates and multipliers they read (O(ε²) ≈ 1e-10
relative). A sensor that depends on a parameter directly (a spring's tension on its
stiffness, a body's energy on its mass or on gravity) adds ∂s/∂p from the Systems at
p ± δ.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ValidationError
from ..model.sensors import QUANTITIES, Sensor

#: Relative step of the central differences of sensors without an exact gradient.
FD_STEP = 1e-6


def find_sensor(model, sensor) -> Sensor:
    """The :class:`~flexmbs.model.sensors.Sensor` named ``sensor`` in ``model`` (or given),
    or one written "kind:quantity:target[:frame]" (e.g. "joint:angle:pivot"), checked
    against the model as the model's own sensors are (kind, quantity, frame, a target
    that exists and has the quantity): ValidationError naming the spec and what there is
    (:func:`inline_problems`)."""
    if isinstance(sensor, Sensor):
        return sensor
    known = {s.name: s for s in getattr(model, "sensors", ())}
    if sensor in known:
        return known[sensor]
    parts = str(sensor).split(":")
    if len(parts) in (3, 4):
        if parts[0] == "node":
            raise ValidationError(f"sensor {sensor!r}: declare node sensors in the model "
                                  f"(they need a node)")
        frame = parts[3] if len(parts) == 4 else None
        if frame is None and parts[0] == "reaction":
            frame = "joint"
        spec = Sensor(str(sensor), parts[0], parts[1], parts[2], frame=frame)
        problems = inline_problems(model, spec)
        if problems:
            raise ValidationError("; ".join(problems))
        return spec
    raise ValidationError(f"unknown sensor {sensor!r}; the model's sensors: "
                          f"{sorted(known)} (or write one as kind:quantity:target, e.g. "
                          f"joint:angle:pivot)")


def inline_problems(model, spec: Sensor) -> list[str]:
    """What is wrong with the inline sensor ``spec`` on ``model``: its kind (with the
    kinds there are), quantity (with the kind's quantities), frame, and its target (with
    the model's joints, markers, bodies, drives or forces of that kind)."""
    from ..model.declarations import sensor_target_problems
    from ..model.sensors import sensor_problems

    who = f"sensor {spec.name!r}"
    if spec.kind not in QUANTITIES or spec.kind == "node":
        kinds = sorted(k for k in QUANTITIES if k != "node")
        return [f"{who}: unknown sensor kind {spec.kind!r}; write kind:quantity:target "
                f"with a kind of {kinds} (node sensors: declare them in the model)"]
    problems = list(sensor_problems(spec))
    if not problems:  # (a target's checks read the quantity)
        sensor_target_problems([spec], dict(getattr(model, "markers", {})),
                               dict(getattr(model, "bodies", {})),
                               getattr(model, "joints", ()), getattr(model, "forces", ()),
                               problems, drives=getattr(model, "drives", ()))
    if problems:
        problems.append(_existing(model, spec.kind))
    return problems


def _existing(model, kind: str) -> str:
    """What the model has that a sensor of ``kind`` could name."""
    names = {
        "marker": ("markers", sorted(getattr(model, "markers", {}))),
        "joint": ("joints", [j.name for j in getattr(model, "joints", ())]),
        "reaction": ("joints", [j.name for j in getattr(model, "joints", ())]),
        "drive": ("drives", [d.name for d in getattr(model, "drives", ())]),
        "force": ("forces", [f.name for f in getattr(model, "forces", ())]),
        "contact": ("forces", [f.name for f in getattr(model, "forces", ())]),
    }
    bodies = [b for b in getattr(model, "bodies", {}) if b != "ground"]
    if kind == "modal":
        names["modal"] = ("flexible bodies", [b for b in bodies if hasattr(
            model.bodies[b], "data")])
    label, items = names.get(kind, ("bodies", bodies))
    quantities = sorted(QUANTITIES[kind])
    return (f"{kind} sensors measure {quantities}; the model's {label}: "
            f"{items if items else 'none'}")


class SensorProbe:
    """Component ``component`` (a name such as "y" or an index; default: the only one) of
    ``sensor`` on ``system``."""

    def __init__(self, system, sensor, component=None):
        from ..assembly.sensors import sensor_history

        self.system = system
        self.sensor = find_sensor(system.model, sensor)
        self._history = sensor_history
        probe = sensor_history(system, self.sensor, np.zeros(1), system.q0[None],
                               np.zeros((1, system.n_q)), np.zeros((1, system.n_q)),
                               np.zeros((1, system.n_c)))
        comps = probe.components
        self.units = probe.units
        if component is None:
            if len(comps) != 1:
                raise ValidationError(f"sensor {self.sensor.name!r} has components "
                                      f"{list(comps)}: name one")
            self.index = 0
        elif isinstance(component, int) or str(component).isdigit():
            self.index = int(component)
            if not 0 <= self.index < len(comps):
                raise ValidationError(f"sensor {self.sensor.name!r}: component "
                                      f"{component!r} out of range ({list(comps)})")
        elif component in comps:
            self.index = comps.index(component)
        else:
            raise ValidationError(f"sensor {self.sensor.name!r} has components "
                                  f"{list(comps)}, not {component!r}")
        self.component = comps[self.index]
        self._last = None
        self._unwrap = self.sensor.kind == "joint" and self.sensor.quantity == "angle"
        self._cols, self._rows = self._reads()

    @property
    def label(self) -> str:
        return f"{self.sensor.name}.{self.component}"

    # ------------------------------------------------------------------ values
    def evaluate(self, system, state) -> float:
        """The raw value at ``state`` on ``system`` (no continuation of angles)."""
        if self.sensor.kind == "force":
            for force in system.model.forces:  # the sensor's angle: the force's own
                if force.name == self.sensor.target and force.name in system.angle_memory:
                    system.angle_memory[f"@sensor:{force.name}"] = \
                        system.angle_memory[force.name]
        hist = self._history(system, self.sensor, np.array([state.t]), state.q[None],
                             state.qd[None], state.qdd[None], state.lam[None])
        return float(hist.values[0, self.index])

    def value(self, state) -> float:
        """The value at ``state``; joint angles continued from the previous call."""
        out = self.evaluate(self.system, state)
        if self._unwrap:
            if self._last is not None:
                out += 2 * math.pi * round((self._last - out) / (2 * math.pi))
            self._last = out
        return out

    # ------------------------------------------------------------------ gradient
    def _reads(self):
        """(coordinates, multiplier rows) the sensor reads."""
        system, s = self.system, self.sensor
        names = []
        if s.kind in ("marker",):
            names = [s.target]
        elif s.kind == "node":
            names = [f"{s.target}.@{s.name}"]
        elif s.kind in ("joint", "reaction"):
            spec = next(j for j in system.model.joints if j.name == s.target)
            names = [spec.marker_i, spec.marker_j]
        elif s.kind == "drive":
            spec = next(d for d in system.model.drives if d.name == s.target)
            names = [m for m in (spec.marker_i, spec.marker_j) if m]
        elif s.kind == "force":
            force = next(f for f in system.model.forces if f.name == s.target)
            names = [getattr(force, k) for k in ("marker_i", "marker_j", "marker")
                     if getattr(force, k, None)]
        cols = [np.arange(sl.start, sl.stop) for sl in
                (system.marker_info(m)[2] for m in names)]
        bodies = []
        if s.kind in ("energy", "modal"):
            bodies = [s.target]
        elif s.kind == "drive" and not names:  # a coordinate drive: its body
            spec = next(d for d in system.model.drives if d.name == s.target)
            bodies = [spec.coordinate.split(".", 1)[0]]
        for body in bodies:
            sl = system.require_body(body)
            cols.append(np.arange(sl.start, sl.stop))
        cols = np.unique(np.concatenate(cols)) if cols else np.zeros(0, dtype=np.int64)
        rows = np.zeros(0, dtype=np.int64)
        if s.kind in ("reaction", "drive"):
            row = next(r for r in system.constraint_rows if r.name == s.target)
            rows = np.arange(row.rows.start, row.rows.stop)
        return cols, rows

    @property
    def constant(self) -> bool:
        """Whether :meth:`gradient` is the same at every state: the sensor is linear in
        the coordinates (a modal coordinate; a node's motion in its body's axes)."""
        s = self.sensor
        return s.kind == "modal" or (s.kind == "node" and (s.frame or "body") == "body")

    def gradient(self, state):
        """(∂s/∂q, ∂s/∂q̇, ∂s/∂q̈ (n_q,), ∂s/∂λ (n_c,)) at ``state``."""
        exact = self._exact_gradient(state)
        return exact if exact is not None else self._difference_gradient(state)

    def _exact_gradient(self, state):
        from ..elements.marker_pairs import (
            MarkerPair,
            angle_partial,
            rotation_partials,
            translation_partials,
        )

        system, s, c = self.system, self.sensor, self.index
        n = system.n_q
        gq, gqd, gqdd = np.zeros(n), np.zeros(n), np.zeros(n)
        glam = np.zeros(system.n_c)
        if s.kind == "marker" and s.quantity in ("position", "velocity",
                                                 "angular_velocity"):
            body, marker, sl = system.marker_info(s.target)
            if sl.stop == sl.start:
                return gq, gqd, gqdd, glam
            qb, qdb = state.q[sl], state.qd[sl]
            if s.quantity == "position":
                gq[sl] = body.marker_frame(qb, marker)[2][0][c]
            elif s.quantity == "velocity":
                gqd[sl] = body.marker_frame(qb, marker)[2][0][c]
                gq[sl] = body.marker_jac_rate(qb, qdb, marker)[0][c]
            else:
                gqd[sl] = body.angular_jac(qb, marker)[c]
                gq[sl] = body.angular_rate_jac(qb, qdb, marker)[c]
            return gq, gqd, gqdd, glam
        if s.kind == "joint":
            spec = next(j for j in system.model.joints if j.name == s.target)
            pair = MarkerPair(system, spec.marker_i, spec.marker_j, state.q, state.qd)
            if s.quantity == "angle":  # the angle alone: no rate partials
                np.add.at(gq, pair.idx, angle_partial(pair))
                return gq, gqd, gqdd, glam
            if s.quantity.startswith("angle"):
                parts = rotation_partials(system, pair, "@probe")
            else:
                parts = translation_partials(pair)
            _, _, _, value_dq, rate_dq, rate_dqd, _ = parts
            if s.quantity.endswith("rate"):
                np.add.at(gq, pair.idx, rate_dq)
                np.add.at(gqd, pair.idx, rate_dqd)
            else:
                np.add.at(gq, pair.idx, value_dq)
            return gq, gqd, gqdd, glam
        if s.kind == "modal":
            sl = system.require_body(s.target)
            gq[sl.start + 7 + c] = 1.0
            return gq, gqd, gqdd, glam
        if s.kind == "node" and (s.frame or "body") == "body":
            body, marker, sl = system.marker_info(f"{s.target}.@{s.name}")
            shapes = body.jacobian_shapes(marker)[1]  # Φ of the node (None: rigid)
            shape = 0.0 if shapes is None else shapes[c]
            target = {"displacement": gq, "velocity": gqd, "acceleration": gqdd}[s.quantity]
            target[sl.start + 7:sl.stop] = shape
            return gq, gqd, gqdd, glam
        return None

    def _difference_gradient(self, state):
        system = self.system
        n = system.n_q
        out = [np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(system.n_c)]
        memory = dict(system.angle_memory)
        arrays = [state.q, state.qd, state.qdd, state.lam]
        for part, cols in ((0, self._cols), (1, self._cols), (2, self._cols),
                           (3, self._rows)):
            for col in cols:
                base = arrays[part]
                step = FD_STEP * max(1.0, abs(base[col]))
                values = []
                for sign in (1.0, -1.0):
                    moved = list(arrays)
                    moved[part] = base.copy()
                    moved[part][col] += sign * step
                    system.angle_memory = dict(memory)
                    values.append(self.evaluate(system, type(state)(state.t, *moved)))
                out[part][col] = (values[0] - values[1]) / (2 * step)
        system.angle_memory = memory
        return tuple(out)

    def directional(self, state, dq, dqd, dqdd, dlam) -> float:
        """ds along (dq, dq̇, dq̈, dλ) (one direction)."""
        gq, gqd, gqdd, glam = self.gradient(state)
        return float(gq @ dq + gqd @ dqd + gqdd @ dqdd + glam @ dlam)

    # ------------------------------------------------------------------ parameters
    def depends_on(self, tangent: dict) -> bool:
        """Whether the sensor reads a model field the parameter moves (beyond the state):
        a force sensor its force's fields, an energy sensor its body's or gravity, a drive
        sensor its drive's profile, any sensor the markers it reads, and any sensor when a
        flexible body's modes change (its markers and nodes move with them; not its
        modal stiffness or damping alone)."""
        s = self.sensor
        for path in tangent:
            if path[0] == "markers":
                return True
            if (path[0] == "bodies" and len(path) > 2 and path[2] in ("data",
                                                                      "marker_modes")
                    and path[3:4] not in (("K_ff",), ("D_ff",))):
                return True  # a flexible body's modes: its markers and nodes move
            if s.kind == "force" and path[:2] == ("forces", s.target):
                return True
            if s.kind == "energy" and (path[:2] == ("bodies", s.target)
                                       or path[0] == "gravity"):
                return True
            if s.kind == "drive" and path[:2] == ("drives", s.target):
                return True
        return False

    def parameter_derivative(self, state, plus_system, minus_system, span) -> float:
        """∂s/∂p at fixed state: the sensor on the Systems at p ± δ."""
        values = []
        for other in (plus_system, minus_system):
            other.angle_memory = dict(self.system.angle_memory)
            values.append(self.evaluate(other, state))
        return (values[0] - values[1]) / span
