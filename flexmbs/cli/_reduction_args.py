"""Reduction options shared by ``flexmbs reduce`` and ``flexmbs beam``."""

from __future__ import annotations

import argparse

import numpy as np

from ..errors import ValidationError
from ..modal import clamped_modes, craig_bampton, free_free_modes, write_modal
from ..modal.node_selection import KINDS, parse_spec, with_node_sets
from ..modal.preparation import PointMass, add_point_masses, scale
from ..modal.stiffening import with_stiffening
from ..modal.stress import static_correction, with_stress
from ._common import emit_json, parse_nodes

#: Options whose value may be a geometric spec instead of labels or a set name, and the
#: name the selected set gets.
INLINE_SET_OPTIONS = (("clamp_nodes", "--clamp-nodes", "clamp"),
                      ("interface_nodes", "--interface-nodes", "interface"),
                      ("attach_nodes", "--attach-nodes", "attach"))


def add_reduction_args(p: argparse.ArgumentParser, default_clamp: str | None = None) -> None:
    prep = p.add_argument_group(
        "preparing the FE model (before the reduction)",
        "Applied in this order after the FE model is read: --node-set, the scale factors, "
        "--add-mass; each step is recorded in the modal data's metadata "
        "(docs/modal_front_end.md, 'Preparing the FE model').")
    prep.add_argument("--node-set", action="append", default=[], metavar="NAME=SPEC",
                      help="define node set NAME by geometry in the FE frame [m]: "
                           "'plane:x=0', 'plane:point=X,Y,Z;normal=NX,NY,NZ[;tol=T]', "
                           "'box:min=X,Y,Z;max=X,Y,Z[;tol=T]', 'cylinder:point=X,Y,Z;"
                           "axis=AX,AY,AZ;radius=R[;inner=R0][;tol=T]', 'nearest:X,Y,Z"
                           "[;count=K]'; usable by name in the node options and markers "
                           "(repeatable)")
    prep.add_argument("--scale-stiffness", metavar="FACTOR",
                      help="multiply the FE stiffness matrix by FACTOR > 0 (frequencies "
                           "scale by its square root)")
    prep.add_argument("--scale-mass", metavar="FACTOR",
                      help="multiply the FE mass matrix by FACTOR > 0 (before --add-mass)")
    prep.add_argument("--add-mass", action="append", default=[],
                      metavar="NODE=KG[,IXX,IYY,IZZ[,IXY,IXZ,IYZ]][@DX,DY,DZ]",
                      help="add a payload at node label NODE (or a one-node set such as "
                           "'tip'): mass [kg], optional rotary inertia about its centre "
                           "of mass along the FE axes [kg m^2] (three moments, or six with "
                           "the products as tensor entries, Ixy = -integral of x y dm), "
                           "optional offset of its centre of mass from the node [m]; "
                           "inertia and offset need 6 DOFs per node (repeatable; entries "
                           "on one node add up)")
    g = p.add_argument_group("reduction (pick one)")
    p.set_defaults(default_clamp=default_clamp)
    g.add_argument("--clamp-nodes",
                   help="clamped modes: node labels '1,5-9', a node-set name, or a "
                        "geometric spec as for --node-set (it becomes the set 'clamp'); "
                        "the frame is attached there"
                        + (f" (default when no reduction is chosen: {default_clamp!r})"
                           if default_clamp else ""))
    g.add_argument("--interface-nodes",
                   help="Craig–Bampton: interface node labels, set name or geometric "
                        "spec (the set 'interface'): static constraint modes")
    g.add_argument("--attach-nodes",
                   help="Craig–Bampton: nodes fixed to the body frame (attached frame; "
                        "labels, set name or geometric spec, the set 'attach'); omit for "
                        "mean axes")
    g.add_argument("--free", action="store_true",
                   help="free–free modes (rigid-body modes removed; mean axes)")
    p.add_argument("--modes", type=int, required=True,
                   help="number of eigenmodes (free/clamped) or fixed-interface normal "
                        "modes (Craig–Bampton)")
    p.add_argument("--keep", type=int,
                   help="Craig–Bampton: keep only the lowest KEEP orthonormalised modes")
    p.add_argument("--normalization", choices=["displacement", "mass"],
                   default="displacement",
                   help="mode scaling: peak translation 1 m (default) or unit modal mass")
    p.add_argument("--static-correction", metavar="NODES[:COMPONENTS]",
                   help="add static-correction modes: the static deflections under unit "
                        "loads at NODES (set name or labels '3,7-9') in COMPONENTS "
                        "(default 123: forces along x, y, z; 4-6 moments), so few modes "
                        "carry a concentrated load's stress (docs/stress.md)")
    p.add_argument("--stress", action="store_true",
                   help="store the stress modes (beam section forces and fibre stresses, "
                        "solid nodal stresses) for flexmbs stress (docs/stress.md)")
    p.add_argument("--modal-derivatives", action="store_true",
                   help="store the static modal derivatives of every pair of modes and "
                        "the nonlinear elastic tensors of the modes enriched with them, for "
                        "bodies with nonlinear = true (built-in beam and hexahedra, or "
                        "solid elements with --material; n modes give n(n+1)/2 "
                        "derivatives, tensors of (n + n(n+1)/2)^4 numbers: keep n small; "
                        "docs/theory_modal_derivatives.md)")


def _number(text: str, option: str, entry: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValidationError(f"{option} {entry!r}: {text.strip()!r} is not a number"
                              ) from None


def parse_add_mass(text: str) -> PointMass:
    """``"21=0.5,1e-3,1e-3,2e-3"`` → PointMass(21, 0.5, (1e-3, 1e-3, 2e-3)); six inertia
    values add the products (Ixy, Ixz, Iyz); ``"@DX,DY,DZ"`` at the end gives the offset
    of the centre of mass [m]; ``"tip=0.5"`` names a one-node set. ValidationError
    naming --add-mass and the entry."""
    syntax = "NODE=KG[,IXX,IYY,IZZ[,IXY,IXZ,IYZ]][@DX,DY,DZ] (kg, kg m^2, m)"
    node, sep, values = text.partition("=")
    node = node.strip()
    values, at, where = values.partition("@")
    parts = [v.strip() for v in values.split(",")]
    offset_parts = [v.strip() for v in where.split(",")] if at else []
    if not sep or not node or len(parts) not in (1, 4, 7) or not all(parts) or (
            at and (len(offset_parts) != 3 or not all(offset_parts))):
        raise ValidationError(f"--add-mass {text!r}: expected {syntax}")
    if node.lstrip("+-").isdigit():
        label: int | str = int(node)
    elif node[:1].isdigit() or node[:1] in "+-.":
        raise ValidationError(f"--add-mass {text!r}: node {node!r} is neither an integer "
                              f"label nor a set name")
    else:
        label = node
    numbers = [_number(v, "--add-mass", text) for v in parts]
    offset = [_number(v, "--add-mass", text) for v in offset_parts] or None
    if not all(np.isfinite([*numbers, *(offset or [])])):
        raise ValidationError(f"--add-mass {text!r}: values must be finite")
    if numbers[0] < 0:
        raise ValidationError(f"--add-mass {text!r}: mass {numbers[0]:g} kg is negative")
    if any(v < 0 for v in numbers[1:4]):
        raise ValidationError(f"--add-mass {text!r}: rotary inertias must not be negative")
    return PointMass(label, numbers[0], tuple(numbers[1:]) if len(numbers) > 1 else None,
                     None if offset is None else tuple(offset))


def parse_node_set(text: str) -> tuple[str, dict]:
    """``"root=plane:x=0"`` → ("root", spec dict); ValidationError naming --node-set."""
    name, sep, spec = text.partition("=")
    name = name.strip()
    if not sep or not name or not spec.strip():
        raise ValidationError(f"--node-set {text!r}: expected NAME=KIND:key=value;... "
                              f"(KIND one of {sorted(KINDS)})")
    if name[:1].isdigit() or not all(ch.isalnum() or ch in "_-." for ch in name):
        raise ValidationError(f"--node-set {text!r}: the name {name!r} must be a word "
                              f"(letters, digits, _ - .) that does not start with a digit")
    return name, parse_spec(spec.strip(), f"--node-set {name}")


def _inline_spec(value) -> bool:
    return isinstance(value, str) and value.partition(":")[0].strip() in KINDS


def prepare_from_args(fe, args: argparse.Namespace):
    """The FE model after --node-set, --scale-stiffness/--scale-mass and --add-mass;
    a geometric spec given directly to --clamp-nodes, --interface-nodes or
    --attach-nodes becomes the node set 'clamp', 'interface' or 'attach'."""
    sets: dict[str, dict] = {}
    for text in args.node_set:
        name, spec = parse_node_set(text)
        if name in sets:
            raise ValidationError(f"--node-set {name!r} is given twice")
        sets[name] = spec
    inline = []
    for attr, option, set_name in INLINE_SET_OPTIONS:
        value = getattr(args, attr, None)
        if _inline_spec(value):
            if set_name in sets:
                raise ValidationError(f"{option} {value!r}: the set it defines, "
                                      f"{set_name!r}, is also given by --node-set")
            inline.append((option, set_name, parse_spec(value, option)))
            setattr(args, attr, set_name)
    factors = {}
    for option, attr in (("--scale-stiffness", "scale_stiffness"),
                         ("--scale-mass", "scale_mass")):
        text = getattr(args, attr, None)
        if text is None:
            factors[attr] = 1.0
            continue
        value = _number(text, option, text)
        if not (np.isfinite(value) and value > 0):
            raise ValidationError(f"{option} {text!r}: the factor must be a positive "
                                  f"finite number")
        factors[attr] = value
    masses = [parse_add_mass(text) for text in args.add_mass]
    if sets:
        fe = with_node_sets(fe, sets, what="--node-set")
    for option, set_name, spec in inline:
        fe = with_node_sets(fe, {set_name: spec}, what=option)
    fe = scale(fe, factors["scale_stiffness"], factors["scale_mass"],
               what="--scale-stiffness/--scale-mass")
    return add_point_masses(fe, masses, what="--add-mass")


def reduce_from_args(fe, args: argparse.Namespace):
    """Dispatch to free/clamped/Craig–Bampton from the parsed options."""
    chosen = [name for name, flag in (("--free", args.free),
                                      ("--interface-nodes", args.interface_nodes),
                                      ("--clamp-nodes", args.clamp_nodes))
              if flag]
    if not chosen and getattr(args, "default_clamp", None):
        args.clamp_nodes = args.default_clamp
        chosen = ["--clamp-nodes"]
    if len(chosen) == 1 and chosen[0] != "--interface-nodes":
        stray = [opt for opt, value in (("--attach-nodes", args.attach_nodes),
                                        ("--keep", args.keep)) if value is not None]
        if stray:
            raise ValidationError(f"{', '.join(stray)} only apply to Craig–Bampton "
                                  f"(--interface-nodes), not to {chosen[0]}")
    if len(chosen) != 1:
        raise ValidationError("choose exactly one reduction: --clamp-nodes, "
                              "--interface-nodes (Craig–Bampton) or --free; got "
                              + (", ".join(chosen) or "none"))
    kind = chosen[0]
    if kind == "--free":
        return free_free_modes(fe, args.modes, normalization=args.normalization)
    if kind == "--clamp-nodes":
        return clamped_modes(fe, parse_nodes(args.clamp_nodes, "--clamp-nodes"), args.modes,
                             normalization=args.normalization)
    return craig_bampton(fe, parse_nodes(args.interface_nodes, "--interface-nodes"),
                         args.modes, attach=parse_nodes(args.attach_nodes, "--attach-nodes"),
                         n_modes=args.keep, normalization=args.normalization)


def finish_reduction(data, fe, args: argparse.Namespace, *, stiffening: bool):
    """Static correction (first: it adds modes), then stiffening, modal derivatives and
    stress modes."""
    if args.static_correction:
        nodes, _, comps = args.static_correction.partition(":")
        data = static_correction(data,
            fe, parse_nodes(nodes, "--static-correction"), comps or "123")
    if stiffening:
        data = with_stiffening(data, fe)
    if getattr(args, "modal_derivatives", False):
        from ..modal.derivatives import with_modal_derivatives

        data = with_modal_derivatives(data, fe)
    if args.stress:
        data = with_stress(data, fe)
    return data


def write_and_report(data, args: argparse.Namespace) -> int:
    """Write the reduced data to ``args.output`` and print the summary (or JSON)."""
    from ..modal.provenance import provenance
    from .modes_cmd import format_summary

    path = write_modal(data, args.output)
    source = data.metadata.get("source")
    preparation = source.get("preparation", []) if isinstance(source, dict) else []
    if args.json:
        emit_json({**data.summary(), "preparation": preparation,
                   "provenance": provenance(data), "output": str(path)})
    else:
        print(format_summary(data, str(path)))  # its provenance lists the preparation
        print(f"\nwritten {path}")
    return 0
