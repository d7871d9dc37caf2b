"""Sampled controllers (docs/cosimulation.md): at every sample time t_k = k Δt the
controller reads named outputs of the model (sensors, coordinates), computes its
outputs, and the model holds them as its inputs (joint torques and forces, point loads,
drive set-points) over [t_k, t_k + Δt].

* :class:`Controller` — a Python law ``law(t, measured) -> {output: value}``;
* :class:`FmuController` — a co-simulation FMU (FMI 2) run with FMPy (optional extra
  ``fmu``): its inputs set from the measured values, ``doStep(t_k, Δt)``, its outputs
  read back. A case file declares one as ``[[controllers]]``
  (:mod:`flexmbs.cosim.case_tables`).

Both see the model at t_k and act over the next interval, as a digital controller does;
the same law in both forms gives the same run.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path

import numpy as np

from ..errors import FlexmbsError, ValidationError
from ..integrators.control import LANDING_RTOL, next_step, sample_due

__all__ = ["LANDING_RTOL", "Controller", "FmuController", "next_step", "sample_due"]

MISSING_FMPY = ("control FMUs are run with FMPy, an optional extra: "
                "pip install 'flexmbs[fmu]'")


class Controller:
    """A sampled Python control law (a
    :class:`~flexmbs.integrators.control.SampledController`).

    Parameters
    ----------
    name : str
    law : callable
        ``law(t, measured) -> {output name: value}``, ``measured`` the dict of the
        ``measure`` outputs at t.
    measure : sequence of str
        Model outputs it reads (sensor components or coordinates).
    targets : dict
        Its outputs → model input targets (``forces.tau1.value`` …,
        :mod:`flexmbs.cosim.inputs`).
    period : float
        Sample time Δt [s].
    """

    def __init__(self, name: str, law, measure, targets: dict, period: float):
        if not callable(law):
            raise ValidationError(f"controller {name!r}: law must be callable")
        if not (isinstance(period, (int, float)) and np.isfinite(period) and period > 0):
            raise ValidationError(f"controller {name!r}: period must be a positive time "
                                  f"[s], got {period!r}")
        self.name, self.law, self.period = name, law, float(period)
        self.measure = list(measure)
        self.targets = {f"{name}.{k}": v for k, v in dict(targets).items()}
        self.k = 0

    @property
    def next_time(self) -> float:
        return self.k * self.period

    def start(self, sim) -> None:
        unknown = [m for m in self.measure if m not in sim.available_outputs()]
        if unknown:
            raise ValidationError(f"controller {self.name!r} measures unknown output(s) "
                                  f"{unknown}; outputs: {sim.available_outputs()}")
        self.k = int(np.floor(sim.t / self.period + 1e-9))
        if self.k * self.period < sim.t - 1e-12:
            self.k += 1

    def sample_if_due(self, sim) -> None:
        """At a sample time: compute the outputs and hold them until the next one."""
        if abs(sim.t - self.next_time) > 1e-9 * self.period:
            return
        measured = sim.outputs(self.measure)
        values = self.compute(sim.t, measured)
        t_next = (self.k + 1) * self.period
        for key, value in values.items():
            name = f"{self.name}.{key}"
            if name not in self.targets:
                raise ValidationError(f"controller {self.name!r} returned output {key!r}, "
                                      f"which is not bound; bound: "
                                      f"{[k.split('.', 1)[1] for k in self.targets]}")
            sim.signals[name].set(sim.t, t_next, value)
        self.k += 1

    def compute(self, t: float, measured: dict) -> dict:
        values = self.law(t, measured)
        if not isinstance(values, dict):
            raise ValidationError(f"controller {self.name!r}: law must return a dict "
                                  f"output -> value, got {type(values).__name__}")
        return values

    def get_state(self):
        return self.k

    def set_state(self, state) -> None:
        self.k = int(state)


class FmuController(Controller):
    """A co-simulation FMU (FMI 2.0) as a sampled controller, run with FMPy.

    ``inputs``: FMU input variable → model output it reads; ``outputs``: FMU output
    variable → model input target. The FMU is instantiated once, initialised at the
    model's start time, and stepped from sample to sample."""

    def __init__(self, name: str, path, inputs: dict, outputs: dict, period: float,
                 parameters: dict | None = None):
        try:
            import fmpy  # noqa: F401
        except ImportError:
            raise FlexmbsError(MISSING_FMPY) from None
        super().__init__(name, self._step_law, list(inputs.values()), outputs, period)
        self.path = Path(path)
        self.fmu_inputs, self.fmu_outputs = dict(inputs), dict(outputs)
        self.parameters = dict(parameters or {})
        self._open()

    def _open(self) -> None:
        from fmpy import extract, read_model_description

        if not self.path.is_file():
            raise ValidationError(f"controller {self.name!r}: FMU file "
                                  f"{str(self.path)!r} not found")
        try:
            md = read_model_description(str(self.path))
        except Exception as exc:  # not a zip, no modelDescription.xml, bad XML
            raise ValidationError(f"controller {self.name!r}: {str(self.path)!r} is not an "
                                  f"FMU: {exc}") from None
        if md.coSimulation is None:
            raise ValidationError(f"controller {self.name!r}: {self.path.name} is not a "
                                  "co-simulation FMU")
        variables = {v.name: v for v in md.modelVariables}
        for role, names, causality in (("input", self.fmu_inputs, "input"),
                                       ("output", self.fmu_outputs, "output"),
                                       ("parameter", self.parameters, None)):
            for var in names:
                if var not in variables:
                    known = sorted(v.name for v in md.modelVariables
                                   if causality is None or v.causality == causality)
                    raise ValidationError(f"controller {self.name!r}: {self.path.name} has "
                                          f"no {role} variable {var!r} (it has: {known})")
                v = variables[var]
                if causality is not None and v.causality != causality:
                    raise ValidationError(f"controller {self.name!r}: {self.path.name} "
                                          f"variable {var!r} is an {v.causality}, not an "
                                          f"{role}")
                if v.type != "Real":
                    raise ValidationError(f"controller {self.name!r}: {self.path.name} "
                                          f"variable {var!r} is {v.type}; flexmbs exchanges "
                                          "Real variables only")
        self._md, self._refs = md, {n: v.valueReference for n, v in variables.items()}
        self._dir = tempfile.mkdtemp(prefix="flexmbs-fmu-")
        # the unpacked FMU goes when this controller does
        weakref.finalize(self, shutil.rmtree, self._dir, True)
        extract(str(self.path), self._dir)
        self._fmu = None

    def start(self, sim) -> None:
        from fmpy.fmi2 import FMU2Slave

        super().start(sim)
        self._free()  # a new run starts a new instance
        md = self._md
        self._fmu = FMU2Slave(guid=md.guid, unzipDirectory=self._dir,
                              modelIdentifier=md.coSimulation.modelIdentifier,
                              instanceName=self.name)
        self._fmu.instantiate()
        self._fmu.setupExperiment(startTime=sim.t)
        self._fmu.enterInitializationMode()
        for var, value in self.parameters.items():
            self._fmu.setReal([self._refs[var]], [float(value)])
        self._fmu.exitInitializationMode()

    def _step_law(self, t, measured):
        fmu = self._fmu
        for var, source in self.fmu_inputs.items():
            fmu.setReal([self._refs[var]], [measured[source]])
        fmu.doStep(currentCommunicationPoint=t, communicationStepSize=self.period)
        return {var: fmu.getReal([self._refs[var]])[0] for var in self.fmu_outputs}

    def _free(self) -> None:
        if self._fmu is not None:
            try:
                self._fmu.terminate()
                self._fmu.freeInstance()
            finally:
                self._fmu = None

    def close(self) -> None:
        """Free the FMU instance and remove its unpacked files."""
        self._free()
        shutil.rmtree(self._dir, ignore_errors=True)

    def get_state(self):
        raise FlexmbsError(f"controller {self.name!r}: an FMU controller cannot be rolled "
                           "back (its FMU state is not saved)")
