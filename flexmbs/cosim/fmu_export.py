"""A case as a co-simulation FMU 2.0, built with pythonfmu (optional extra ``fmu``;
``flexmbs fmu``, docs/cosimulation.md).

The FMU embeds the case file and every file it reads (modal data, geometry) with their
relative layout, and a description of its variables: the named inputs (Real, causality
input, start = the case's value, with units) and outputs (the sensors' components or
coordinates, with units). Its slave (:mod:`flexmbs.cosim.fmu_slave`) runs the model with
:class:`~flexmbs.cosim.Simulation` in the Python that loads the FMU, which needs flexmbs
installed. It can get and set its state (FMI rollback).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from .._files import atomic_path
from ..errors import FlexmbsError, ValidationError, WriteError

MISSING = "FMU export needs pythonfmu, an optional extra: pip install 'flexmbs[fmu]'"

#: Units of input targets by force or drive kind (FMI unit names).
_INPUT_UNITS = {"torque": "N.m", "force": "N", "rotation": "rad", "translation": "m"}


def _input_unit(model, target: str) -> str:
    group, element, field = target.split(".")
    if group == "drives":
        drive = next(d for d in model.drives if d.name == element)
        return _INPUT_UNITS.get(drive.kind, "")
    force = next(f for f in model.forces if f.name == element)
    kind = getattr(force, "kind", "")
    return _INPUT_UNITS.get(kind, "N" if field in "xyz" else "")


def _fmi_unit(units: str) -> str:
    """A sensor's units as an FMI unit name ("N m" → "N.m", "-" → "")."""
    units = str(units or "").strip()
    return "" if units in ("-", "") else units.replace(" ", ".")


def export_fmu(case_path, output, inputs: dict | None = None, outputs=None,
               input_mode: str = "hold", **solver) -> Path:
    """Write the case ``case_path`` as the co-simulation FMU ``output`` (.fmu) with the
    named ``inputs`` (name → target, :mod:`flexmbs.cosim.inputs`) and ``outputs``
    (sensor components or coordinates; default every sensor component).

    The FMU holds its inputs over each communication step (``input_mode`` "hold", the
    only one it takes): an FMI 2.0 master sets an input to its value at the step's start
    t_c before ``doStep(t_c, Δt)``, so a ramp towards that value over [t_c, t_c + Δt]
    would act one communication step late (docs/cosimulation.md)."""
    if input_mode != "hold":
        raise ValidationError(f"input_mode = {input_mode!r}: an FMU holds its inputs over "
                              "each communication step; FMI 2.0 masters set an input's "
                              "value at the step's start, so a linear ramp towards it would "
                              "lag one communication step")
    try:
        from pythonfmu.builder import FmuBuilder
    except ImportError:
        raise FlexmbsError(MISSING) from None
    from ..cases import load_case
    from .simulation import Simulation

    output = Path(output)
    if output.suffix.lower() != ".fmu":
        raise WriteError(f"cannot write {str(output)!r}: an FMU file name ends in .fmu")
    if not output.parent.is_dir():
        raise WriteError(f"cannot write {str(output)!r}: folder {str(output.parent)!r} does "
                         "not exist")
    case = load_case(case_path)
    if case.controllers:
        raise ValidationError(f"{case.path.name}: a case with [[controllers]] cannot be "
                              "exported as an FMU; connect the controller FMU in the "
                              "master instead")
    inputs = dict(inputs or {})
    sim = Simulation(case, inputs=inputs, outputs=outputs, input_mode=input_mode, **solver)
    clash = sorted(set(inputs) & set(sim.output_names))
    if clash:
        raise ValidationError(f"{case.path.name}: input name(s) {clash} are also output "
                              "names; an FMU's variable names must be unique: rename the "
                              "input(s) or leave those outputs out with --output")
    units = {key: _fmi_unit(u) for key, u in sim.sensor_units().items()}
    if not sim.output_names and not inputs:
        raise ValidationError(f"{case.path.name}: no sensors and no --output/--input: the "
                              "FMU would have no variables (FMI 2.0 needs at least one); add "
                              "[[sensors]] to the case or name --output coordinates")
    start_outputs = sim.outputs()
    config = {
        "case": None, "input_mode": input_mode,
        "solver": {k: v for k, v in solver.items()},
        "inputs": [{"name": n, "target": target, "start": sim.signals[n].value_at(0.0),
                    "unit": _input_unit(case.model, target),
                    "description": f"input to {target}"} for n, target in inputs.items()],
        "outputs": [{"name": n, "start": start_outputs[n], "unit": units.get(n, ""),
                     "description": ("sensor component" if n in units else "coordinate")}
                    for n in sim.output_names],
    }
    with tempfile.TemporaryDirectory(prefix="flexmbs-fmu-") as work:
        work = Path(work)
        folder = work / "flexmbs_case"
        folder.mkdir()
        files = [Path(p).resolve() for p in case.inputs]
        base = Path(os.path.commonpath([str(p.parent) for p in files]))
        for file in files:
            dest = folder / file.relative_to(base)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(file, dest)
        config["case"] = str(case.path.resolve().relative_to(base))
        (folder / "fmu.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
        script = Path(__file__).with_name("fmu_slave.py")
        try:
            built = FmuBuilder.build_FMU(script, dest=work, project_files=[folder],
                                         canGetAndSetFMUstate=True)
        except Exception as exc:
            raise FlexmbsError(f"pythonfmu could not build the FMU: {exc}") from None
        _add_units_and_experiment(Path(built), config, float(case.solver.get("t_end", 1.0)),
                                  float(solver.get("h", case.solver["h"])))
        with atomic_path(output, "FMU") as tmp:
            shutil.copyfile(built, tmp)
    return output


def _add_units_and_experiment(fmu: Path, config: dict, stop: float, step: float) -> None:
    """Write the variables' units (and a UnitDefinitions block) and a DefaultExperiment
    into the FMU's modelDescription.xml (pythonfmu writes neither)."""
    with zipfile.ZipFile(fmu) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    root = ElementTree.fromstring(entries["modelDescription.xml"])
    unit_of = {v["name"]: v["unit"] for v in [*config["inputs"], *config["outputs"]]}
    names = sorted({u for u in unit_of.values() if u})
    for var in root.iter("ScalarVariable"):
        real = var.find("Real")
        if real is not None and unit_of.get(var.get("name")):
            real.set("unit", unit_of[var.get("name")])
    children = list(root)
    at = next((k + 1 for k, c in enumerate(children) if c.tag == "CoSimulation"), 0)
    extra = []
    if names:
        block = ElementTree.Element("UnitDefinitions")
        for name in names:
            ElementTree.SubElement(block, "Unit", name=name)
        extra.append(block)
    for k, element in enumerate(extra):
        root.insert(at + k, element)
    if root.find("DefaultExperiment") is None:
        children = list(root)
        at = next((k for k, c in enumerate(children)
                   if c.tag in ("VendorAnnotations", "ModelVariables")), len(children))
        root.insert(at, ElementTree.Element("DefaultExperiment", startTime="0.0",
                                            stopTime=repr(stop), stepSize=repr(step)))
    entries["modelDescription.xml"] = ElementTree.tostring(root, encoding="utf-8",
                                                           xml_declaration=True)
    with zipfile.ZipFile(fmu, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
