"""Stepping a model from outside (docs/cosimulation.md): ``sim.step_to(t, inputs)``
advances the integrator to the communication point t with its own steps and returns the
named outputs there; ``get_state``/``set_state`` roll back to a saved point.

Outputs are the case's sensors (a sensor with several components gives ``name.x``,
``name.y`` … by its component names; a one-component sensor its own name) and, on
request, coordinates by name (``link1.x``, ``beam.xi1``). Sampled controllers
(:mod:`flexmbs.cosim.controllers`) run at their own sample times inside ``step_to``.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

from ..errors import FlexmbsError, ValidationError
from ..integrators.control import (
    LANDING_RTOL,
    ModelView,
    next_step,
    restart_after_held_jumps,
    sample_due,
)
from ..integrators.options import METHOD_OPTIONS, STEP_OPTIONS, apply_newton_preset
from .inputs import MODES, bind_inputs

#: The parameters of every method (a case's belong to its own method).
METHOD_PARAMETERS = frozenset().union(*METHOD_OPTIONS.values())


class Simulation(ModelView):
    """A model advanced from outside, one communication interval at a time.

    Parameters
    ----------
    case : path of a case file, a loaded Case, or a System
        The model and (for a case) its [solver] settings.
    inputs : dict, optional
        Input name → target (``forces.<name>.value``, ``forces.<name>.x|y|z``,
        ``drives.<name>.value``; :mod:`flexmbs.cosim.inputs`).
    outputs : sequence of str, optional
        Output names (default: every sensor component); coordinates by name too.
    input_mode : {"hold", "linear"}
        Inputs held over each interval, or interpolated linearly across it.
    controllers : sequence, optional
        Sampled controllers (:class:`~flexmbs.cosim.controllers.Controller`); a case's
        ``[[controllers]]`` entries are added to them.
    **solver
        Over the case's [solver] table: ``h``, ``method``, ``rho_inf``, ``engine`` …
    """

    def __init__(self, case, *, inputs=None, outputs=None, input_mode: str = "hold",
                 controllers=(), **solver):
        from ..assembly import System
        from ..cases import load_case
        from ..cases.case import Case
        from ..cases.run import case_system

        if input_mode not in MODES:
            raise ValidationError(f"input_mode must be one of {MODES}, got {input_mode!r}")
        self._angle_refs: dict[str, float] = {}
        case_controllers: list = []
        if isinstance(case, (str, Path)):
            case = load_case(case)
        if isinstance(case, Case):
            settings = dict(case.solver)
            if solver.get("method", settings.get("method")) != settings.get("method"):
                for key in METHOD_PARAMETERS:  # the case's belong to the case's method
                    settings.pop(key, None)
            settings.update(solver)
            model = case.model
            coupling, stiffening = settings.pop("coupling", None), settings.pop("stiffening",
                                                                                 None)
            case_controllers = list(getattr(case, "controllers", ()))
            self.case = case
        elif isinstance(case, System):
            settings = {"h": 1e-3, "method": "generalized-alpha", **solver}
            model = case.model
            coupling, stiffening = case.overrides["coupling"], case.overrides["stiffening"]
            self.case = None
        else:
            raise ValidationError(f"Simulation needs a case file, a Case or a System, got "
                                  f"{type(case).__name__}")
        wanted = dict(inputs or {})
        for ctrl in controllers:  # a controller's outputs are inputs of the model
            for name, target in ctrl.targets.items():
                if name in wanted and wanted[name] != target:
                    raise ValidationError(f"input {name!r} is bound twice: {wanted[name]!r} "
                                          f"and controller {ctrl.name!r}'s {target!r}")
                wanted[name] = target
        model, signals = bind_inputs(model, wanted, input_mode)
        # a case's [[controllers]] come with their inputs bound already
        self.signals = {**(getattr(self.case, "signals", None) or {}), **signals}
        controllers = [*controllers, *case_controllers]
        if self.case is not None:
            from dataclasses import replace

            self.system = case_system(replace(self.case, model=model), coupling, stiffening)
        else:
            self.system = System(model, coupling=coupling, stiffening=stiffening)
        self.controllers = controllers
        self.external = [n for n in self.signals if n not in
                         {k for c in controllers for k in c.targets}]
        self._start(settings)
        self.output_names = self._output_names(outputs)
        for ctrl in controllers:
            ctrl.start(self)

    # ------------------------------------------------------------------ setup
    def _start(self, settings: dict) -> None:
        from ..integrators import METHODS, AlphaIntegrator

        settings = dict(settings)
        for key in ("t_end", "output_every", "output_times", "range_limits"):
            settings.pop(key, None)
        method = settings.pop("method", "generalized-alpha")
        if method not in METHODS:
            raise ValidationError(f"method {method!r} is not one of {sorted(METHODS)}")
        method_keys = METHOD_OPTIONS[method]
        other = sorted((set(settings) & METHOD_PARAMETERS) - method_keys)
        if other:
            raise ValidationError(f"Simulation: key {other[0]!r} does not apply to method "
                                  f"{method!r} (its parameters: {sorted(method_keys)})")
        apply_newton_preset(settings)
        unknown = sorted(set(settings) - method_keys - STEP_OPTIONS - {"h"})
        if unknown:
            raise ValidationError(f"Simulation: unknown solver setting(s) {unknown}; it "
                                  f"takes h, method, newton, "
                                  f"{', '.join(sorted(method_keys | STEP_OPTIONS))}")
        params = METHODS[method](**{k: settings.pop(k) for k in list(settings)
                                    if k in method_keys})
        self.h = float(settings.pop("h"))
        if getattr(self.system.model, "initial", ()) and "q0" not in settings:
            from ..assembly.initial import initial_state

            settings["q0"], settings["qd0"] = initial_state(self.system, 0.0)
        try:
            self.integ = AlphaIntegrator(self.system, params, self.h, **settings)
        except TypeError as exc:
            raise ValidationError(f"Simulation: {exc}") from None

    def _output_names(self, outputs) -> list[str]:
        available = self.available_outputs()
        if outputs is None:
            return [n for n in available if n not in self.system.coord_names]
        names = [outputs] if isinstance(outputs, str) else list(outputs)  # (one name)
        unknown = [n for n in names if n not in available]
        if unknown:
            sensors = [n for n in available if n not in self.system.coord_names]
            raise ValidationError(f"unknown output(s) {unknown}; outputs are the sensor "
                                  f"components {sensors or '(none)'} and the coordinates "
                                  f"(e.g. {self.system.coord_names[0]!r})")
        return names

    def outputs(self, names=None) -> dict[str, float]:
        """The named outputs at the current time (default: those chosen at creation)."""
        return ModelView.outputs(self, self.output_names if names is None else names)

    def get_state(self) -> dict:
        """Everything a rollback needs (a deep copy): the integrator's restart point, its
        step statistics, the inputs' intervals, the controllers' and contacts' states."""
        integ = self.integ
        cp = copy.deepcopy(integ.checkpoint())
        # continue from the restored form too, so that a rollback repeats a step exactly
        steps = integ.stats.copy()
        integ.restore(cp, steps.copy())
        return {"checkpoint": cp, "steps": steps,
                "signals": {n: s.state() for n, s in self.signals.items()},
                "controllers": [c.get_state() for c in self.controllers],
                "contacts": [copy.deepcopy(c.state) for c in integ.contacts],
                "angles": dict(self.system.angle_memory), "angle_refs": dict(self._angle_refs)}

    def set_state(self, state: dict) -> None:
        """Return to a state of :meth:`get_state`."""
        try:
            cp = copy.deepcopy(state["checkpoint"])
            self.integ.restore(cp, state["steps"].copy())
            for name, value in state["signals"].items():
                self.signals[name].restore(value)
            for ctrl, value in zip(self.controllers, state["controllers"], strict=True):
                ctrl.set_state(value)
            for contact, value in zip(self.integ.contacts, state["contacts"], strict=True):
                contact.state = copy.deepcopy(value)
            self.system.angle_memory = state["angles"]
            self._angle_refs = dict(state["angle_refs"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValidationError(f"set_state: not a state of this simulation ({exc})"
                                  ) from None

    # ------------------------------------------------------------------ stepping
    def set_inputs(self, inputs: dict, t_end: float) -> None:
        """Set the external inputs for the interval [t, t_end]."""
        for name, value in (inputs or {}).items():
            if name not in self.signals:
                raise ValidationError(f"unknown input {name!r}; the inputs are "
                                      f"{self.external or '(none)'}")
            if name not in self.external:
                raise ValidationError(f"input {name!r} is a controller's output, not set "
                                      "from outside")
            self.signals[name].set(self.t, t_end, value)

    def step_to(self, t: float, inputs: dict | None = None) -> dict[str, float]:
        """Advance to time ``t`` [s] with ``inputs`` over the interval; the outputs at t.
        FlexmbsError (the state stays at the last accepted step) when a step fails."""
        t = float(t)
        if not np.isfinite(t):
            raise ValidationError(f"step_to: t = {t!r} s must be a finite time")
        if not t >= self.t:
            raise ValidationError(f"step_to: t = {t!r} s is before the current time "
                                  f"{self.t:g} s")
        self.set_inputs(inputs, t)
        integ = self.integ
        while t - integ.t > LANDING_RTOL * self.h:
            h, land = next_step(self.controllers, self, self.h, t)
            restart_after_held_jumps(self.signals, integ)
            integ.h = h
            ok, message = integ.step()
            if not ok:
                raise FlexmbsError(f"step_to: {message}")
            # land exactly, unless the step was cut short (Newton halving, a contact
            # onset, h_contact): then the loop takes the rest
            if land is not None and abs(integ.t - land) <= LANDING_RTOL * h:
                integ.t = float(land)
        sample_due(self.controllers, self)
        for servo in integ.servos:  # histories that grow per communication point
            servo.pin(integ.t)
        for signal in self.signals.values():
            signal.pin(integ.t)
        return self.outputs()
