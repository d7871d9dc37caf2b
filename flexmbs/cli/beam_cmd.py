"""Build a straight beam with the built-in 3D beam element and reduce it to modal data
(clamped at the root by default; free–free or Craig–Bampton on request)."""

from __future__ import annotations

import argparse
from dataclasses import replace

from ..errors import ValidationError
from ..modal.fe.beam import BeamSection, Material, straight_beam
from ..modal.io import check_writable
from ._reduction_args import (
    add_reduction_args,
    finish_reduction,
    prepare_from_args,
    reduce_from_args,
    write_and_report,
)

HELP = "make modal data of a straight beam with the built-in beam FE"

MATERIALS = {"steel": Material.steel, "aluminium": Material.aluminium}


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--length", type=float, required=True, help="beam length [m]")
    p.add_argument("--elements", type=int, default=40, help="number of elements (default 40)")
    p.add_argument("--section", choices=["rectangle", "tube", "circle"], default="rectangle")
    p.add_argument("--width", type=float, help="rectangle: width along local y [m]")
    p.add_argument("--height", type=float, help="rectangle: height along local z [m]")
    p.add_argument("--diameter", type=float, help="tube/circle: outer diameter [m]")
    p.add_argument("--thickness", type=float, help="tube: wall thickness [m]")
    p.add_argument("--material", default="steel",
                   help="steel, aluminium, or 'E,nu,rho' in SI (e.g. 70e9,0.33,2700)")
    p.add_argument("--theory", choices=["euler-bernoulli", "timoshenko"],
                   default="euler-bernoulli")
    add_reduction_args(p, default_clamp="root")
    p.add_argument("--stiffening", action=argparse.BooleanOptionalAction, default=True,
                   help="compute the geometric-stiffening matrices of the unit load cases "
                        "(default on; free–free modes with inertia relief, "
                        "docs/theory_stiffening.md)")
    p.add_argument("-o", "--output", required=True, help="output modal data file (.fmd.h5)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def _section(args) -> BeamSection:
    if args.section == "rectangle":
        if args.width is None or args.height is None:
            raise ValidationError("--section rectangle needs --width and --height")
        return BeamSection.rectangle(args.width, args.height)
    if args.section == "tube":
        if args.diameter is None or args.thickness is None:
            raise ValidationError("--section tube needs --diameter and --thickness")
        return BeamSection.tube(args.diameter, args.thickness)
    if args.diameter is None:
        raise ValidationError("--section circle needs --diameter")
    return BeamSection.circle(args.diameter)


def _material(text: str) -> Material:
    if text in MATERIALS:
        return MATERIALS[text]()
    try:
        e_mod, nu, rho = (float(v) for v in text.split(","))
    except ValueError:
        raise ValidationError(f"--material {text!r}: use steel, aluminium or 'E,nu,rho'"
                              ) from None
    return Material(e_mod, nu, rho)


def run(args: argparse.Namespace) -> int:
    check_writable(args.output)  # fail before the reduction, not after
    fe = straight_beam(args.length, args.elements, _section(args), _material(args.material),
                       theory=args.theory)
    fe = prepare_from_args(fe, args)  # --node-set, --scale-*, --add-mass
    data = reduce_from_args(fe, args)
    if args.section in ("tube", "circle"):  # drawn and stressed on the real circle
        meta = {**data.metadata, "section_outline_m": {
            "shape": "circle", "diameter": args.diameter, "width_y": args.diameter,
            "height_z": args.diameter}}
        data = replace(data, metadata=meta, _invariants=data.invariants)
    data = finish_reduction(data, fe, args, stiffening=args.stiffening)
    return write_and_report(data, args)
