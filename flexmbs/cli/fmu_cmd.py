"""Export a case as a co-simulation FMU 2.0 (pythonfmu, optional extra ``fmu``):
``flexmbs fmu CASE -o arm.fmu --input tau1=forces.tau1.value --output shoulder``
(docs/cosimulation.md)."""

from __future__ import annotations

import argparse

from ..errors import ValidationError
from ._common import emit_json

HELP = "export a case as a co-simulation FMU (needs pip install 'flexmbs[fmu]')"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", help="case file (.toml)")
    p.add_argument("-o", dest="fmu_file", required=True, help="FMU file (.fmu)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=TARGET",
                   help="an input variable and the case key it drives: "
                        "forces.<name>.value (joint torque/force), forces.<name>.x|y|z "
                        "(point force/torque), drives.<name>.value (set-point); repeatable")
    p.add_argument("--output", dest="outputs", action="append", default=[],
                   metavar="NAMES",
                   help="output variables, comma-separated or repeated: sensor "
                        "components (e.g. hand.x) or coordinates (default: every sensor "
                        "component)")
    p.add_argument("--input-mode", choices=["hold"], default="hold",
                   help="inputs held over each communication step, the one mode: an FMI "
                        "2.0 master sets an input at the step's start, so a ramp towards "
                        "it would lag a step")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def parse_inputs(items) -> dict:
    out = {}
    for item in items:
        name, sep, target = item.partition("=")
        if not sep or not name.strip() or not target.strip():
            raise ValidationError(f"--input {item!r}: expected NAME=TARGET, e.g. "
                                  "tau1=forces.tau1.value")
        if name.strip() in out:
            raise ValidationError(f"--input {name.strip()!r} is given twice")
        out[name.strip()] = target.strip()
    return out


def run(args: argparse.Namespace) -> int:
    from ..cosim.fmu_export import export_fmu

    outputs = [v.strip() for item in args.outputs for v in item.split(",") if v.strip()]
    outputs = outputs or None
    path = export_fmu(args.case, args.fmu_file, parse_inputs(args.input), outputs)
    summary = {"case": args.case, "output": str(path), "inputs": parse_inputs(args.input),
               "outputs": outputs, "input_mode": "hold"}
    if args.json:
        emit_json(summary)
    else:
        print(f"flexmbs fmu: {path} (co-simulation FMU 2.0; inputs "
              f"{', '.join(summary['inputs']) or 'none'}; outputs "
              f"{', '.join(outputs) if outputs else 'every sensor component'})")
    return 0
