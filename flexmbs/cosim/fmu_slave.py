"""The co-simulation slave inside a flexmbs FMU (built by :mod:`flexmbs.cosim.fmu_export`
with pythonfmu; it needs flexmbs installed in the Python that runs the FMU).

The FMU's resources hold ``flexmbs_case/``: the case file with its modal data and
``fmu.json`` (inputs → case targets with start values and units, outputs with units,
the input mode). Each ``doStep(t, Δt)`` is ``Simulation.step_to(t + Δt, inputs)``.
"""

import json
from pathlib import Path

from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real


class FlexmbsFmu(Fmi2Slave):
    author = "flexmbs"
    description = "flexmbs model (floating frame of reference) as a co-simulation FMU"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        folder = Path(self.resources) / "flexmbs_case"
        self._folder = folder
        self._config = json.loads((folder / "fmu.json").read_text(encoding="utf-8"))
        self._inputs = {v["name"]: float(v["start"]) for v in self._config["inputs"]}
        self._outputs = {v["name"]: float(v["start"]) for v in self._config["outputs"]}
        self._sim = None
        for var in self._config["inputs"]:
            self.register_variable(Real(
                var["name"], causality=Fmi2Causality.input,
                variability=Fmi2Variability.continuous, start=float(var["start"]),
                description=var["description"],
                getter=lambda n=var["name"]: self._inputs[n],
                setter=lambda value, n=var["name"]: self._inputs.__setitem__(n,
                                                                             float(value))))
        for var in self._config["outputs"]:
            self.register_variable(Real(
                var["name"], causality=Fmi2Causality.output,
                variability=Fmi2Variability.continuous, description=var["description"],
                getter=lambda n=var["name"]: self._outputs[n]))

    def _simulation(self):
        if self._sim is None:
            from flexmbs.cosim import Simulation

            config = self._config
            self._sim = Simulation(self._folder / config["case"],
                                   inputs={v["name"]: v["target"] for v in config["inputs"]},
                                   outputs=[v["name"] for v in config["outputs"]],
                                   input_mode=config["input_mode"], **config["solver"])
            self._outputs.update(self._sim.outputs())
        return self._sim

    def exit_initialization_mode(self):
        self._simulation()

    def do_step(self, current_time, step_size):
        sim = self._simulation()
        try:
            self._outputs.update(sim.step_to(current_time + step_size, dict(self._inputs)))
        except Exception as exc:  # the FMU reports a failed step, the master decides
            self.log(f"flexmbs: step from t = {current_time} failed: {exc}")
            return False
        return True

    def _get_fmu_state(self):
        return {"simulation": self._simulation().get_state(),
                "inputs": dict(self._inputs), "outputs": dict(self._outputs)}

    def _set_fmu_state(self, state):
        self._simulation().set_state(state["simulation"])
        self._inputs.update(state["inputs"])
        self._outputs.update(state["outputs"])
