"""The ``[[controllers]]`` table of case files (docs/case_files.md, docs/cosimulation.md):
control FMUs as sampled controllers, their outputs bound to the model's inputs.
Importing this module registers its reader with :mod:`flexmbs.cases.tables` (the cases
stage does not import co-simulation)."""

from __future__ import annotations

from pathlib import Path

from ..cases.tables import register_table
from ..errors import ValidationError
from .controllers import FmuController
from .inputs import bind_inputs


def controllers_from_case(path: Path, entries) -> list:
    """The ``[[controllers]]`` entries of a case file as controllers (docs/case_files.md):
    ``name``, ``fmu`` (path relative to the case), ``period`` [s], ``inputs`` {FMU
    input: model output}, ``outputs`` {FMU output: model input target}, ``parameters``."""
    out = []
    for k, entry in enumerate(entries or ()):
        where = f"{path.name}: [[controllers]] #{k}"
        if not isinstance(entry, dict):
            raise ValidationError(f"{where} must be a table")
        allowed = {"name", "fmu", "period", "inputs", "outputs", "parameters"}
        extra = sorted(set(entry) - allowed)
        if extra:
            raise ValidationError(f"{where}: unknown key(s) {extra}; known: {sorted(allowed)}")
        for key in ("name", "fmu", "period", "outputs"):
            if key not in entry:
                raise ValidationError(f"{where}: key {key!r} is required")
        name = entry["name"]
        for key in ("inputs", "outputs", "parameters"):
            if not isinstance(entry.get(key, {}), dict):
                raise ValidationError(f"{where} ({name!r}): {key} must be a table")
        try:
            out.append(FmuController(name, (path.parent / entry["fmu"]).resolve(),
                                     entry.get("inputs", {}), entry["outputs"],
                                     entry["period"], entry.get("parameters")))
        except ValidationError as exc:
            raise ValidationError(f"{where}: {exc}") from None
    return out


def read_controllers(path: Path, entries, case) -> None:
    """[[controllers]] of the case file ``path`` into the loaded ``case``: its
    ``controllers``, its model with their outputs bound as inputs, its ``signals`` (those
    inputs) and the FMU files among its ``inputs``."""
    controllers = controllers_from_case(path, entries)
    targets = {k: v for c in controllers for k, v in c.targets.items()}
    case.model, case.signals = bind_inputs(case.model, targets)
    case.controllers = controllers
    case.inputs.extend(c.path for c in controllers)


register_table("controllers", read_controllers)
