"""Sampled control inside a run: what :func:`~flexmbs.integrators.simulate` (and the
stepping API, :class:`flexmbs.cosim.Simulation`) asks of a controller, the view of the
running model a controller is given, and the step that lands on the sample times
(docs/cosimulation.md).

A sampled controller acts as a digital controller does: at every sample time
t_k = k Δt it reads named outputs of the model at t_k and sets model inputs (joint
torques and forces, point loads, drive set-points), which hold over [t_k, t_k + Δt].
The driver calls, in this order:

1. ``controller.start(view)`` once, before the first step, at the start time;
2. before every step: ``controller.sample_if_due(view)`` (through :func:`next_step`),
   which samples when ``view.t`` is the controller's ``next_time``; the step is then
   shortened so as to land on the nearest ``next_time`` of all controllers;
3. at the end of a stepping call (:meth:`~flexmbs.cosim.Simulation.step_to`),
   :func:`sample_due` once more, so that a sample at the final time is taken.

The controllers of :mod:`flexmbs.cosim.controllers` (a Python law, a co-simulation FMU)
implement :class:`SampledController`; this stage never imports them.
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import FlexmbsError, ModelError, ValidationError

#: A sample or communication point closer than this fraction of the step to the end of a
#: step is that step's end (so k steps of h land on t = k h without a sliver step).
LANDING_RTOL = 1e-9


@runtime_checkable
class SampledController(Protocol):
    """What the driver asks of a sampled controller.

    Attributes
    ----------
    name : str
        Named in messages.
    next_time : float
        Its next sample time t_k [s] (read before every step).
    targets : dict
        Its outputs, ``"<controller>.<output>"`` → the model input target they drive
        (``forces.<name>.value``, ``drives.<name>.value`` …, :mod:`flexmbs.cosim.inputs`).
    """

    name: str
    targets: dict

    @property
    def next_time(self) -> float: ...

    def start(self, view: ModelView) -> None:
        """Called once before the first step, at ``view.t`` [s] (the start time): check
        the outputs it measures (``view.available_outputs()``) and set its first sample
        time to the first t_k ≥ ``view.t``."""

    def sample_if_due(self, view: ModelView) -> None:
        """Called before every step. When ``view.t`` is its sample time t_k: read
        ``view.outputs(names)`` (SI units, angles [rad]), compute its outputs and hold
        each over [t_k, t_{k+1}] with ``view.signals[name].set(t_k, t_{k+1}, value)``;
        then advance ``next_time``. Otherwise do nothing."""


class ModelView:
    """What a controller sees of a running model: the time, the named outputs (sensor
    components and coordinates) at the integrator's current state, and the model's
    input signals."""

    def __init__(self, system, integ, signals):
        self.system, self.integ, self.signals = system, integ, signals
        #: Last output of each joint-angle sensor [rad]: angles are unwrapped from it,
        #: so that they count turns as the sensors of a run do.
        self._angle_refs: dict[str, float] = {}

    @property
    def t(self) -> float:
        return self.integ.t

    def _sensor_values(self, units: dict | None = None) -> dict[str, float]:
        """Every sensor component's value at the current time (name, or name.component
        for sensors with several); their units go into ``units`` when given."""
        from ..assembly.sensors import sensor_history

        integ, out = self.integ, {}
        contacts = {c.name: c for c in integ.contacts} or None
        for sensor in getattr(self.system.model, "sensors", ()):
            hist = sensor_history(self.system, sensor, np.array([integ.t]), integ.q[None],
                                  integ.qd[None], integ.qdd[None], integ.lam[None],
                                  contacts)
            comps = list(hist.components)
            for k, comp in enumerate(comps):
                key = sensor.name if len(comps) == 1 else f"{sensor.name}.{comp}"
                value = float(hist.values[0, k])
                if sensor.kind == "joint" and sensor.quantity == "angle":
                    ref = self._angle_refs.get(key)
                    if ref is not None:  # the representative nearest the last output
                        value += 2 * np.pi * np.round((ref - value) / (2 * np.pi))
                    self._angle_refs[key] = value
                out[key] = value
                if units is not None:
                    units[key] = hist.units
        return out

    def sensor_units(self) -> dict[str, str]:
        """The units of every sensor output (name or name.component)."""
        units: dict[str, str] = {}
        self._sensor_values(units)
        return units

    def available_outputs(self) -> list[str]:
        """Every output name: the sensors' components, then the coordinates."""
        return [*self._sensor_values().keys(), *self.system.coord_names]

    def outputs(self, names) -> dict[str, float]:
        """The outputs ``names`` at the current time."""
        values = self._sensor_values()
        coords = dict(zip(self.system.coord_names, self.integ.q, strict=True))
        unknown = [n for n in names if n not in values and n not in coords]
        if unknown:
            raise ValidationError(f"unknown output(s) {unknown}")
        return {n: float(values[n] if n in values else coords[n]) for n in names}


def sample_due(controllers, view) -> None:
    """Let every controller whose sample time has come sample the model. A controller
    that fails is named (with its FMU file, if it has one): ModelError, from the
    controller's own exception; flexmbs's own errors, which name it, pass as they are."""
    for ctrl in controllers:
        try:
            ctrl.sample_if_due(view)
        except FlexmbsError:
            raise
        except Exception as exc:
            path = getattr(ctrl, "path", None)
            where = f" ({path.name})" if path is not None else ""
            raise ModelError(f"controller {ctrl.name!r}{where} failed: "
                             f"{type(exc).__name__}: {exc}") from exc


def next_step(controllers, view, h: float, target: float) -> tuple[float, float | None]:
    """Sample the due controllers; then (the step to take towards ``target`` and the next
    sample time, [s]: h, shortened to land on the nearer of the two, and the time to land
    on exactly (None when the step ends before it)."""
    sample_due(controllers, view)
    stop = min([target, *(c.next_time for c in controllers)])
    remaining = stop - view.t
    if remaining >= h * (1.0 - LANDING_RTOL):
        return h, (stop if remaining <= h * (1.0 + LANDING_RTOL) else None)
    return remaining, stop


def restart_after_held_jumps(signals, integ) -> bool:
    """Restart the integrator where a held input jumps at its time t (a controller's new
    sample, or a value set from outside; docs/cosimulation.md, "Inputs and outputs").

    A held input takes its new value on (t_k, t_k+1]; the accelerations q̈ and the
    generalized-α acceleration a at t_k were those of the old value. The next step would
    carry the old load for about half a step, an error of first order in h after every
    sample. As at a contact's switch, q̈ and λ take the jump's response and a = q̈
    (the signals evaluated a rounding step after t: :func:`_jump_response`). True when
    it restarted."""
    t = integ.t
    after = math.nextafter(t, math.inf)
    if not any(getattr(s, "mode", "") == "hold" and s.value_at(after) != s.value_at(t)
               for s in signals.values()):
        return False
    d_qdd, d_lam = _jump_response(integ, t, after)
    integ.qdd, integ.lam = integ.qdd + d_qdd, integ.lam + d_lam
    integ.a = integ.qdd.copy()
    return True


def _jump_response(integ, t: float, after: float):
    """(Δq̈, Δλ) = [M Φ_qᵀ; Φ_q 0]⁻¹ [Q(after) − Q(t); 0] at the integrator's (q, q̇):
    what a jump of the applied loads between t and ``after`` does to the accelerations
    and multipliers (γ does not jump with a held load). From the step kernel's matrix
    and residual where its matrix is dense and nothing is called back (microseconds:
    a sampled loop restarts at every sample), else from the NumPy evaluation."""
    from .reference import _dense, _solve_dense

    system, q, qd = integ.system, integ.q, integ.qd
    n_q, n_c = system.n_q, system.n_c
    compiled = integ.compiled
    if compiled is not None and not compiled.sparse and not compiled.callbacks:
        zeros_q, zeros_c = np.zeros(n_q), np.zeros(n_c)
        before = compiled.residual(q, qd, zeros_q, zeros_c, t)[0]  # −Q(t)
        kkt = compiled.iteration_matrix(q, qd, zeros_q, zeros_c, after, np.inf, 0.0)
        jump = before - compiled.work.r  # Q(after) − Q(t)
    else:
        m, jac = _dense(system.mass_matrix(q)), _dense(system.jacobian(q, after))
        kkt = np.block([[m, jac.T], [jac, np.zeros((n_c, n_c))]])
        jump = system.forces(q, qd, after) - system.forces(q, qd, t)
    sol = _solve_dense(kkt, np.concatenate([jump, np.zeros(n_c)]))
    return sol[:n_q], sol[n_q:]
