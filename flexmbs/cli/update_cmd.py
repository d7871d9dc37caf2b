"""Update a built-in beam of a case against a modal test: least squares on the relative
frequency errors and 1 − MAC of the test modes, each paired with the model mode of
largest MAC at the measured DOFs, over parameters of the beam's table (section
dimensions, material, payloads), with the Jacobian from the modal data's derivatives
(Nelson's method; docs/gradients.md, "Model updating against a modal test"). The test
file is CSV, one line per measured DOF of a mode: mode, frequency [Hz], node (FE label),
direction (x, y, z, rx, ry, rz in the body axes), value; a mode given by its frequency
alone leaves the last three empty. Parameters are case keys as for --set
(bodies.arm.beam.material.E, bodies.arm.beam.point_masses[0].mass); KEY=START sets the
start, --bounds KEY=LOW:HIGH limits one (default: non-negative)."""

from __future__ import annotations

import argparse
import math

from ._common import emit_json
from .fit_cmd import _bounds

HELP = "update a built-in beam's parameters against a modal test (frequencies, MAC)"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", help="case file (.toml)")
    p.add_argument("--modal-data", required=True, metavar="CSV",
                   help="the modal test: mode, frequency [Hz], node, direction, value")
    p.add_argument("--param", action="append", default=[], metavar="KEY[=START]",
                   required=True, help="a key of the beam's table to update (repeatable)")
    p.add_argument("--bounds", action="append", default=[], metavar="KEY=LOW:HIGH",
                   help="bounds of a parameter (repeatable; default 0:inf)")
    p.add_argument("--frequency-weight", type=float, default=1.0, metavar="W",
                   help="weight of the relative frequency errors (default 1)")
    p.add_argument("--mac-weight", type=float, default=1.0, metavar="W",
                   help="weight of 1 − MAC (default 1)")
    p.add_argument("--max-evaluations", type=int, default=50, metavar="N",
                   help="evaluations at most (default 50)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a case key (repeatable)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def _pairs(pairs) -> list[str]:
    out = []
    for p in pairs:
        mac = "-" if math.isnan(p["mac"]) else f"{p['mac']:.4f}"
        out.append(f"    test {p['test']:<6} {p['frequency_test']:>11.5g} Hz  ↔  mode "
                   f"{p['model_mode']:<3} {p['frequency_model']:>11.5g} Hz  MAC {mac}")
    return out


def run(args: argparse.Namespace) -> int:
    from ..gradients.update import update
    from .study_cmd import parse_overrides

    result = update(args.case, args.modal_data, args.param, bounds=_bounds(args.bounds),
                    frequency_weight=args.frequency_weight, mac_weight=args.mac_weight,
                    max_evaluations=args.max_evaluations,
                    overrides=parse_overrides(args.set))
    if args.json:
        emit_json({"case": str(args.case), "modal_data": str(args.modal_data),
                   **result.to_dict()})
        return 0 if result.success else 1
    print(f"flexmbs update: {args.case} ({result.body}) to {args.modal_data}")
    print(f"  rms residual {result.rms_initial:.6g} → {result.rms_final:.6g} in "
          f"{result.evaluations} evaluations ({result.message})")
    print(f"  {'parameter':<44} {'start':>13} {'updated':>15} {'std. error':>12}")
    for key, value in result.values.items():
        print(f"  {key:<44} {result.initial[key]:>13.6g} {value:>15.8g} "
              f"{result.standard_errors[key]:>12.3g}")
    print("  pairs before:")
    print("\n".join(_pairs(result.pairs_initial)))
    print("  pairs after:")
    print("\n".join(_pairs(result.pairs)))
    return 0 if result.success else 1
