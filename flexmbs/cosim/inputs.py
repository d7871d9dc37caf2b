"""Named inputs of a stepped model (docs/cosimulation.md): values set from outside at
communication points, bound to joint actuators, point loads and drives.

An input name maps to a target in the model:

* ``forces.<name>.value`` — the torque [N m] or force [N] of a joint actuator
  (``joint-torque`` / ``joint-force``);
* ``forces.<name>.x`` (``.y``, ``.z``) — one component of a point force [N] or torque
  [N m];
* ``drives.<name>.value`` — the set-point of a drive (angle [rad], displacement [m] or
  coordinate).

Over a communication interval [t_k, t_k+1] an input is either **held** at the value set
for it (zero-order hold; its rate is zero) or **interpolated** linearly from its value at
t_k to the value set for t_k+1 (first-order: a drive set-point then moves with constant
speed and no jump).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import replace

import numpy as np

from ..errors import ValidationError
from ..integrators.control import LANDING_RTOL
from ..model.drives import Profile

MODES = ("hold", "linear")


class InputSignal(Profile):
    """A drive profile whose value is set from outside, interval by interval. It keeps
    the intervals set, so that it can be evaluated at past times too: at the outputs of
    a run (the energy balance and the power after the run, the sensors of a force). At
    each output :meth:`pin` keeps those that the output's time reads and drops the
    earlier ones no output reads, so the intervals kept grow with the outputs, not with
    the samples of a controller."""

    def __init__(self, name: str, value: float = 0.0, mode: str = "hold"):
        if mode not in MODES:
            raise ValidationError(f"input {name!r}: mode must be one of {MODES}, got "
                                  f"{mode!r}")
        self.name, self.mode, self.initial = name, mode, float(value)
        self._t0: list[float] = []
        self._t1: list[float] = []
        self._u0: list[float] = []
        self._u1: list[float] = []
        self._pinned = 0  # intervals [0, pinned) are read at recorded outputs

    def set(self, t0: float, t1: float, value: float) -> None:
        """The value for the interval [t0, t1] (held, or reached at t1); intervals set
        before for later times (a rollback) are dropped."""
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValidationError(f"input {self.name!r} must be a number, got "
                                  f"{value!r}") from None
        if not np.isfinite(value):
            raise ValidationError(f"input {self.name!r} must be finite, got {value!r}")
        t0, t1 = float(t0), float(t1)
        start = self.value_at(t0)
        keep = bisect.bisect_left(self._t1, t0 + 1e-15 * max(1.0, abs(t0)))
        for values in (self._t0, self._t1, self._u0, self._u1):
            del values[keep:]
        self._pinned = min(self._pinned, keep)
        if t1 <= t0:  # an empty interval: the value from now on
            t1 = t0
        self._t0.append(t0)
        self._t1.append(t1)
        self._u0.append(start)
        self._u1.append(value)

    def pin(self, t: float) -> None:
        """An output was recorded at ``t`` [s]: keep the intervals that evaluating at t
        reads (the one holding t and the one before it, and one more for an output time
        a round-off away) and the later ones; drop the unpinned intervals before them."""
        first = bisect.bisect_left(self._t1, t) - 2  # the first interval t may read
        if first > self._pinned:
            for values in (self._t0, self._t1, self._u0, self._u1):
                del values[self._pinned:first]
        k = bisect.bisect_left(self._t1, t)
        self._pinned = max(self._pinned, min(len(self._t1), k + 1))

    def value_at(self, t: float) -> float:
        return self.eval(t)[0]

    def eval(self, t):
        if not self._t1:
            return self.initial, 0.0, 0.0
        k = bisect.bisect_left(self._t1, t)
        if k == len(self._t1):
            t0, t1 = self._t0[-1], self._t1[-1]
            if t - t1 > max(LANDING_RTOL * (t1 - t0), 4.0 * math.ulp(t1)):
                return self._u1[-1], 0.0, 0.0  # after the last interval: its value
            k -= 1  # a step that lands a round-off past the interval's end: its rate
        t0, t1, u0, u1 = self._t0[k], self._t1[k], self._u0[k], self._u1[k]
        if t <= t0:  # before the first interval
            return (self.initial if k == 0 else self._u1[k - 1]), 0.0, 0.0
        if self.mode == "hold" or t1 <= t0:
            return u1, 0.0, 0.0
        slope = (u1 - u0) / (t1 - t0)
        return u0 + slope * (t - t0), slope, 0.0

    def state(self) -> tuple:
        """A copy of the intervals set (what a rollback returns to)."""
        return (*(list(v) for v in (self._t0, self._t1, self._u0, self._u1)), self._pinned)

    def restore(self, state) -> None:
        self._t0, self._t1, self._u0, self._u1 = (list(v) for v in state[:4])
        self._pinned = min(int(state[4]) if len(state) > 4 else 0, len(self._t1))


class _VectorInput:
    """A point load's value [x, y, z] from three input signals (one per component)."""

    def __init__(self, base, signals):
        self.base, self.signals = np.asarray(base, dtype=float), signals

    def __call__(self, t, state=None):
        out = self.base.copy()
        for axis, signal in self.signals.items():
            out[axis] = signal.value_at(t)
        return out


def bind_inputs(model, inputs: dict, mode: str = "hold"):
    """(model with the targets bound to input signals, {input name: InputSignal}).

    ``inputs``: {input name: target} as in the module docstring. ValidationError naming
    an input whose target the model does not have, or cannot take an input."""
    from ..model.builder import ProfileValue
    from ..model.forces import JointActuator, PointLoad

    if not isinstance(inputs, dict):
        raise ValidationError(f"inputs must be a dict name -> target, got {inputs!r}")
    forces = {f.name: f for f in model.forces}
    drives = {d.name: d for d in model.drives}
    signals: dict[str, InputSignal] = {}
    new_forces, new_drives = dict(forces), dict(drives)
    vectors: dict[str, dict] = {}
    for name, target in inputs.items():
        parts = str(target).split(".")
        if len(parts) != 3 or parts[0] not in ("forces", "drives"):
            raise ValidationError(f"input {name!r}: target {target!r} must read "
                                  "forces.<name>.value, forces.<name>.x|y|z or "
                                  "drives.<name>.value")
        group, element, field = parts
        table = forces if group == "forces" else drives
        if element not in table:
            known = ", ".join(sorted(table)) or "none"
            raise ValidationError(f"input {name!r}: the case has no {group[:-1]} "
                                  f"{element!r} (it has: {known})")
        item = table[element]
        if group == "drives":
            if field != "value":
                raise ValidationError(f"input {name!r}: a drive takes its set-point as "
                                      f"drives.{element}.value, not {field!r}")
            start = float(item.profile.eval(0.0)[0]) if hasattr(item.profile, "eval") else 0.0
            signal = InputSignal(name, start, mode)
            new_drives[element] = replace(item, profile=signal)
        elif isinstance(item, JointActuator):
            if field != "value":
                raise ValidationError(f"input {name!r}: joint actuator {element!r} takes "
                                      f"forces.{element}.value, not {field!r}")
            start = item.profile.eval(0.0)[0] if item.profile is not None else 0.0
            signal = InputSignal(name, start, mode)
            new_forces[element] = replace(item, profile=signal,
                                          function=ProfileValue(signal))
        elif isinstance(item, PointLoad):
            if field not in ("x", "y", "z"):
                raise ValidationError(f"input {name!r}: point load {element!r} takes one "
                                      f"component, forces.{element}.x|y|z, not {field!r}")
            if callable(item.value) and element not in vectors:
                raise ValidationError(f"input {name!r}: point load {element!r} has a "
                                      "callable value already")
            base = np.asarray(item.value if not callable(item.value) else [0, 0, 0], float)
            signal = InputSignal(name, float(base["xyz".index(field)]), mode)
            vectors.setdefault(element, {})["xyz".index(field)] = signal
            new_forces[element] = replace(item, value=_VectorInput(base, vectors[element]))
        else:
            raise ValidationError(f"input {name!r}: force {element!r} "
                                  f"({type(item).__name__}) cannot take an input; inputs "
                                  "go to joint-torque, joint-force, point-force, "
                                  "point-torque and drives")
        if name in signals:
            raise ValidationError(f"input {name!r} is given twice")
        signals[name] = signal
    bound = replace(model, forces=tuple(new_forces[f.name] for f in model.forces),
                    drives=tuple(new_drives[d.name] for d in model.drives))
    return bound, signals

