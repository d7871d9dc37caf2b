"""Reduce FE mass and stiffness matrices (Matrix Market, Abaqus text .mtx, Nastran OP4 or
Ansys MAPDL .full / HBMAT) to modal data: free–free modes, clamped modes or Craig–Bampton,
written in the native format."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ..errors import FlexmbsError, ValidationError
from ..modal.io import check_writable
from ._reduction_args import (
    add_reduction_args,
    finish_reduction,
    prepare_from_args,
    reduce_from_args,
    write_and_report,
)

HELP = "reduce FE mass/stiffness matrices to a modal data file"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mass", required=True,
                   help="FE mass matrix file (.mtx), FILE.op4:NAME (Nastran MGG/MAA), an "
                        "Ansys .full or an HBMAT Harwell-Boeing file")
    p.add_argument("--stiffness", required=True,
                   help="FE stiffness matrix file (.mtx), FILE.op4:NAME (Nastran "
                        "KGG/KAA), an Ansys .full (the same as --mass) or an HBMAT file")
    p.add_argument("--nodes", required=True,
                   help="node coordinates: CSV 'id,x,y,z', an Abaqus .inp (*NODE, *NSET "
                        "and the solid *ELEMENT blocks as the mesh), or a Nastran bulk "
                        "data file (.bdf/.dat/.nas: GRID, CORD2R/C, SPC/SPC1 as node sets "
                        "'spc', elements as the mesh), or an Ansys archive (.cdb: nodes, "
                        "elements, node components, MP)")
    p.add_argument("--input-format",
                   choices=["matrix-market", "abaqus", "nastran", "ansys", "hbmat"],
                   help="matrix file flavour: Matrix Market, Abaqus *MATRIX GENERATE or "
                        "*MATRIX OUTPUT text, or Nastran OP4 with a bulk data file "
                        "(default: nastran for .op4 matrices, abaqus when the mass file's first "
                        "entry has Abaqus's 5 fields, else matrix-market; Nastran "
                        "needs pip install 'flexmbs[nastran]'), Ansys MAPDL .full with a "
                        "'.cdb' (default for .full matrices; pip install 'flexmbs[ansys]') "
                        "or HBMAT exports with their Fname.mapping files")
    p.add_argument("--units", help="unit system of the inputs (default SI; e.g. mm-t-s)")
    p.add_argument("--dofs-per-node", type=int, choices=[3, 6],
                   help="DOFs per node (default: inferred from the sizes)")
    p.add_argument("--material", metavar="E=...,nu=...",
                   help="isotropic material of the solid or shell elements, in the units "
                        "of the inputs (with --units mm-t-s, E in MPa; default: a Nastran "
                        "bulk file's single MAT1, an Ansys archive's MP)")
    p.add_argument("--thickness", type=float, metavar="T",
                   help="thickness of the shell elements (quadrilaterals and triangles of "
                        "a 6-DOF model) where the mesh file gives none, "
                        "in the length unit of the inputs (default: a Nastran bulk file's "
                        "PSHELL thickness; docs/theory_shells.md)")
    p.add_argument("--stiffening", action="store_true",
                   help="compute the geometric-stiffening matrices of the twelve unit load "
                        "cases from the elements of the --nodes mesh (solids: C3D4, C3D8, "
                        "20-node bricks; shells: quadrilaterals and triangles) and "
                        "their material (docs/theory_stiffening.md)")
    add_reduction_args(p)
    p.add_argument("--substructures", type=int, default=1, metavar="K",
                   help="cut a solid or shell part (the --nodes mesh's elements, "
                        "--material with rho) into K parts at the node layers nearest to equal "
                        "stations from the root set (--attach-nodes, default 'root') to the "
                        "tip set (--interface-nodes, default 'tip'), each reduced by "
                        "Craig-Bampton with rigid cut surfaces (--modes fixed-interface "
                        "modes each); writes OUTPUT's stem .1 ... .K files and a "
                        ".substructures.json (docs/flexible_bodies.md)")
    p.add_argument("--cuts", choices=["rigid", "tied"], default="rigid",
                   help="with --substructures: 'rigid' cut surfaces (six constraint modes "
                        "each, a fixed joint) or 'tied' ones (constraint modes at every cut "
                        "node, a spherical joint per node: no section held rigid)")
    p.add_argument("-o", "--output", required=True, help="output modal data file (.fmd.h5)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def parse_material(text: str | None) -> dict | None:
    """``"E=210e9,nu=0.3"`` → ``{"E": 2.1e11, "nu": 0.3}``; ValidationError naming
    --material and the bad part."""
    if text is None:
        return None
    out = {}
    for part in (p.strip() for p in text.split(",")):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in ("E", "nu", "rho") or key in out:
            raise ValidationError(f"--material: cannot read {part!r} in {text!r}; expected "
                                  f"E=<modulus>,nu=<Poisson ratio>[,rho=<density>]")
        try:
            out[key] = float(value)
        except ValueError:
            raise ValidationError(f"--material: {key} must be a number; got "
                                  f"{value.strip()!r}") from None
    missing = [k for k in ("E", "nu") if k not in out]
    if missing:
        raise ValidationError(f"--material {text!r} lacks {' and '.join(missing)}")
    return out


def input_format(mass: str, stiffness: str) -> str:
    """``nastran`` when both matrices are OP4 files (``FILE.op4[:NAME]``), ``ansys`` when
    both are MAPDL ``.full`` files, ``abaqus`` when the mass file's first entry reads as
    an Abaqus matrix entry (row node, DOF, column node, DOF, value: a later bad line is
    then reported by the Abaqus reader, by line), else the Matrix Market default."""
    from ..modal.io.nastran import split_spec

    if all(split_spec(v)[0].suffix.lower() == ".op4" for v in (mass, stiffness)):
        return "nastran"
    if all(str(v).lower().endswith(".full") for v in (mass, stiffness)):
        return "ansys"
    if _first_entry_is_abaqus(mass):
        return "abaqus"
    return "matrix-market"


def _first_entry_is_abaqus(path) -> bool:
    """Whether the first line of ``path`` that is not a heading or comment (``*``, ``%``)
    has the five fields of an Abaqus matrix entry."""
    from ..modal.io.abaqus import parse_abaqus_line

    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                text = line.strip()
                if not text or text.startswith(("*", "%")):
                    continue
                try:
                    parse_abaqus_line(Path(path), lineno, text)
                except FlexmbsError:
                    return False
                return True
    except OSError:
        return False
    return False


def with_thickness(fe, thickness: float | None, units: str | None):
    """``fe`` with its shells' thickness ``--thickness`` (in the inputs' length unit) as
    ``metadata["shell_thickness"]`` [m]; ``fe`` itself without one."""
    if thickness is None:
        return fe
    from dataclasses import replace

    from ..modal.units import get_units

    if not (np.isfinite(thickness) and thickness > 0):
        raise ValidationError(f"--thickness must be a positive length; got {thickness!r}")
    if not {"quad", "triangle"} & set(fe.cells) or fe.dofs_per_node != 6:
        raise ValidationError(f"--thickness applies to shell elements (quadrilateral or "
                              f"triangular cells of a 6-DOF model); the --nodes mesh has "
                              f"{sorted(fe.cells) or 'no cells'} with {fe.dofs_per_node} "
                              f"DOFs per node")
    if fe.metadata.get("shell_thickness") is not None:
        raise ValidationError("--thickness: the mesh file gives its shells' thickness "
                              "(PSHELL or *SHELL SECTION); --thickness is for files "
                              "without it")
    length = get_units(units).length
    return replace(fe, metadata={**fe.metadata, "shell_thickness": thickness * length})


def run(args: argparse.Namespace) -> int:
    check_writable(args.output)  # fail before the reduction, not after

    material = parse_material(args.material)
    kind = args.input_format or input_format(args.mass, args.stiffness)
    if args.stiffening and material is None and kind not in ("ansys", "hbmat", "nastran"):
        raise ValidationError("--stiffening needs the elements' material: --material "
                              "E=...,nu=... (and the *ELEMENT blocks in the --nodes .inp)")
    if kind in ("ansys", "hbmat"):
        from ..modal.io import ansys

        fe = ansys.read_ansys(args.mass, args.stiffness, args.nodes, units=args.units,
                              material=material)
        if args.stiffening and "material" not in fe.metadata:
            why = fe.metadata.get("archive_material_not_used", "no material")
            raise ValidationError(f"--stiffening needs the elements' material; the archive's "
                                  f"is not used ({why}): give --material E=...,nu=...")
    elif kind == "nastran":
        from ..modal.io import nastran

        fe = nastran.read_nastran(args.mass, args.stiffness, args.nodes, units=args.units,
                                  material=material)
    elif kind == "abaqus":
        from ..modal.io.abaqus import read_abaqus

        fe = read_abaqus(args.mass, args.stiffness, args.nodes, units=args.units,
                         material=material)
    else:
        from ..modal.io.matrix_market import read_matrix_market

        fe = read_matrix_market(args.mass, args.stiffness, args.nodes, units=args.units,
                                dofs_per_node=args.dofs_per_node, material=material)
    fe = with_thickness(fe, args.thickness, args.units)
    fe = prepare_from_args(fe, args)  # --node-set, --scale-*, --add-mass
    if args.cuts != "rigid" and args.substructures == 1:
        raise ValidationError("--cuts applies with --substructures K (K >= 2)")
    if args.substructures != 1:
        from ._substructures import run_parts

        if args.substructures < 1:
            raise ValidationError(f"--substructures must be >= 1, got {args.substructures}")
        if fe.dofs_per_node != 3 and not {"quad", "triangle"} & set(fe.cells):
            raise ValidationError("--substructures: flexmbs reduce splits solid parts (3 "
                                  "DOFs per node) and shell parts (6, with shell "
                                  "elements); a beam is split by flexmbs beam "
                                  "--substructures")
        stray = [opt for opt, on in (("--free", args.free),
                                     ("--modal-derivatives", args.modal_derivatives)) if on]
        if stray:
            raise ValidationError(f"--substructures: {', '.join(stray)} do not apply to the "
                                  f"parts of a solid: every part is reduced by Craig–Bampton "
                                  f"at its cut surfaces, and the joined parts are linear "
                                  f"(their relative motion carries the large deflection)")
        return run_parts(fe, args)
    if kind == "ansys" and "constrained" in fe.node_sets and not (
            args.clamp_nodes or args.interface_nodes or args.free):
        # MAPDL's own constraints, with no other choice: the modes MAPDL computes
        args.default_clamp = "constrained"
        if not args.json:
            print("flexmbs reduce: no reduction chosen; clamping the DOFs MAPDL "
                  "constrained (node set 'constrained'), as MAPDL's modal analysis does")
    try:
        data = reduce_from_args(fe, args)
    except FlexmbsError as exc:  # the matrices' files named, as a reader's errors do
        exc.args = (f"{args.mass} / {args.stiffness}: {exc}", *exc.args[1:])
        raise
    data = finish_reduction(data, fe, args, stiffening=args.stiffening)
    return write_and_report(data, args)
