"""Build a straight beam with the built-in 3D beam element and reduce it to modal data
(clamped at the root by default; free–free or Craig–Bampton on request)."""

from __future__ import annotations

import argparse

from ..errors import ValidationError
from ..modal.fe.beam import BeamSection, Material, straight_beam
from ..modal.fe.section_tables import section_from_spec
from ..modal.io import check_writable
from ._reduction_args import (
    add_reduction_args,
    finish_reduction,
    prepare_from_args,
    reduce_from_args,
    write_and_report,
)

HELP = "make modal data of a straight beam with the built-in beam FE"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--length", type=float, required=True, help="beam length [m]")
    p.add_argument("--elements", type=int, default=40, help="number of elements (default 40)")
    p.add_argument("--section", type=str.lower, default="rectangle",
                   choices=["rectangle", "box", "tube", "circle", "i", "channel", "c",
                            "general"],
                   help="section kind (docs/beam_sections.md): rectangle (--width "
                        "--height), box = hollow rectangle (--width --height --thickness), "
                        "tube (--diameter --thickness), circle (--diameter), i = I/H beam "
                        "and channel = C (--width --height --flange-thickness "
                        "--web-thickness, or --thickness for both), general (--constants "
                        "--outline)")
    p.add_argument("--width", type=float, help="width along local y [m] (rectangle, box; "
                                               "flange width of i/channel)")
    p.add_argument("--height", type=float, help="height along local z [m] (rectangle, box, "
                                                "i, channel)")
    p.add_argument("--diameter", type=float, help="tube/circle: outer diameter [m]")
    p.add_argument("--thickness", type=float,
                   help="box/tube: wall thickness [m]; i/channel: flange and web thickness")
    p.add_argument("--flange-thickness", type=float, help="i/channel: flange thickness [m]")
    p.add_argument("--web-thickness", type=float, help="i/channel: web thickness [m]")
    p.add_argument("--constants", metavar="A,IY,IZ,J",
                   help="general: area [m²], second moments about y and z [m⁴] and torsion "
                        "constant [m⁴] of the section in its principal centroidal axes")
    p.add_argument("--outline", metavar="FILE",
                   help="general: the section's outline, one 'y, z' point [m] per line "
                        "about the centroid; a blank line starts the next loop (outer "
                        "boundary first, then holes)")
    p.add_argument("--material", default="steel",
                   help="steel, aluminium, or 'E,nu,rho' in SI (e.g. 70e9,0.33,2700)")
    p.add_argument("--theory", choices=["euler-bernoulli", "timoshenko"],
                   default="euler-bernoulli",
                   help="bending theory (timoshenko: with shear deformation)")
    p.add_argument("--rotary-inertia", action="store_true",
                   help="add the sections' bending rotary inertia ρI to the element mass "
                        "(Timoshenko's full theory with --theory timoshenko, Rayleigh's "
                        "with euler-bernoulli; off by default, as the case files' "
                        "rotary_inertia)")
    add_reduction_args(p, default_clamp="root")
    p.add_argument("--stiffening", action=argparse.BooleanOptionalAction, default=True,
                   help="compute the geometric-stiffening matrices of the unit load cases "
                        "(default on; free–free modes with inertia relief, "
                        "docs/theory_stiffening.md)")
    p.add_argument("--substructures", type=int, default=1, metavar="K",
                   help="cut the beam into K parts of equal length (at the nodes nearest; "
                        "16 elements in 3 parts: 5, 6 and 5), each reduced by "
                        "Craig–Bampton (frame at its root end, --modes fixed-interface "
                        "modes); writes OUTPUT's stem .1 … .K files and a .substructures.json "
                        "that says how to join them (docs/flexible_bodies.md)")
    p.add_argument("-o", "--output", required=True, help="output modal data file (.fmd.h5)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


#: The options each section kind needs (spec key, option).
SECTION_OPTIONS = {
    "rectangle": (("width", "--width"), ("height", "--height")),
    "box": (("width", "--width"), ("height", "--height"), ("wall", "--thickness")),
    "tube": (("diameter", "--diameter"), ("wall", "--thickness")),
    "circle": (("diameter", "--diameter"),),
    "i": (("width", "--width"), ("height", "--height"),
          ("flange", "--flange-thickness"), ("web", "--web-thickness")),
}
SECTION_OPTIONS["channel"] = SECTION_OPTIONS["i"]
ALL_SECTION_OPTIONS = ("--width", "--height", "--diameter", "--thickness",
                       "--flange-thickness", "--web-thickness")


def _outline(text: str) -> list:
    """Loops of (y, z) points [m] from an outline file (module docstring of --outline)."""
    from pathlib import Path

    path = Path(text)
    if not path.is_file():
        raise ValidationError(f"--outline {text!r}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(f"--outline {path.name}: cannot be read as text ({exc})"
                              ) from None
    loops, loop = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            if loop:
                loops.append(loop)
            loop = []
            continue
        try:
            y, z = (float(v) for v in line.replace(",", " ").split())
        except ValueError:
            raise ValidationError(f"--outline {path.name}, line {number}: {line!r} is not "
                                  f"a 'y, z' pair of numbers") from None
        loop.append((y, z))
    if loop:
        loops.append(loop)
    if not loops:
        raise ValidationError(f"--outline {path.name}: no points")
    return loops[0] if len(loops) == 1 else loops


def _general(args) -> BeamSection:
    if args.constants is None or args.outline is None:
        raise ValidationError("--section general needs --constants A,IY,IZ,J and --outline "
                              "FILE")
    try:
        area, iy, iz, torsion = (float(v) for v in args.constants.split(","))
    except ValueError:
        raise ValidationError(f"--constants {args.constants!r}: expected four numbers "
                              f"A,IY,IZ,J") from None
    spec = {"kind": "general", "A": area, "Iy": iy, "Iz": iz, "J": torsion,
            "outline": _outline(args.outline)}
    return section_from_spec(spec, "--section general")


def _section(args) -> BeamSection:
    if args.section == "general":
        return _general(args)
    given = [flag for flag, value in (("--constants", args.constants),
                                      ("--outline", args.outline)) if value is not None]
    if given:
        raise ValidationError(f"{' and '.join(given)} apply to --section general, not to "
                              f"--section {args.section}")
    kind = "channel" if args.section == "c" else args.section
    takes = {opt for _, opt in SECTION_OPTIONS[kind]} | (
        {"--thickness"} if kind in ("i", "channel") else set())
    extra = [opt for opt in ALL_SECTION_OPTIONS if opt not in takes
             and getattr(args, opt[2:].replace("-", "_")) is not None]
    if extra:  # (a tube's --thickness given to a circle made it solid, silently)
        raise ValidationError(f"{', '.join(extra)} {'does' if len(extra) == 1 else 'do'} "
                              f"not apply to --section {args.section}, which takes "
                              f"{', '.join(sorted(takes))}")
    spec = {"kind": kind}
    for key, option in SECTION_OPTIONS[kind]:
        value = getattr(args, option[2:].replace("-", "_"))
        if value is None and key in ("flange", "web"):
            value = args.thickness
        if value is not None:
            spec[key] = value
    missing = [opt for key, opt in SECTION_OPTIONS[kind] if key not in spec]
    if missing:
        needs = [opt for _, opt in SECTION_OPTIONS[kind]]
        raise ValidationError(f"--section {kind} needs {', '.join(needs[:-1])}"
                              f"{' and ' if len(needs) > 1 else ''}{needs[-1]}"
                              + (" (or --thickness for both thicknesses)"
                                 if kind in ("i", "channel") else "")
                              + f"; missing {', '.join(missing)}")
    return section_from_spec(spec, f"--section {kind}")


def _material(text: str) -> Material:
    from ..model.nonlinear_beam import beam_material

    try:
        return beam_material(text)
    except ValidationError as exc:  # E, nu or rho out of range: Material says which
        raise ValidationError(f"--material {text!r}: {exc}") from None
    except ValueError:
        raise ValidationError(f"--material {text!r}: use steel, aluminium or 'E,nu,rho'"
                              ) from None


def run(args: argparse.Namespace) -> int:
    check_writable(args.output)  # fail before the reduction, not after
    fe = straight_beam(args.length, args.elements, _section(args), _material(args.material),
                       theory=args.theory, rotary_inertia=args.rotary_inertia)
    fe = prepare_from_args(fe, args)  # --node-set, --scale-*, --add-mass
    if args.substructures != 1:
        from ._substructures import run_parts

        if args.substructures < 1:
            raise ValidationError(f"--substructures must be >= 1, got {args.substructures}")
        return run_parts(fe, args)
    data = reduce_from_args(fe, args)
    data = finish_reduction(data, fe, args, stiffening=args.stiffening)
    return write_and_report(data, args)
