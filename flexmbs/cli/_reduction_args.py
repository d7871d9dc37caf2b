"""Reduction options shared by ``flexmbs reduce`` and ``flexmbs beam``."""

from __future__ import annotations

import argparse

from ..errors import ValidationError
from ..modal import clamped_modes, craig_bampton, free_free_modes, write_modal
from ._common import emit_json, parse_nodes


def add_reduction_args(p: argparse.ArgumentParser, default_clamp: str | None = None) -> None:
    g = p.add_argument_group("reduction (pick one)")
    p.set_defaults(default_clamp=default_clamp)
    g.add_argument("--clamp-nodes",
                   help="clamped modes: node labels '1,5-9' or a node-set name; the frame "
                        "is attached there"
                        + (f" (default when no reduction is chosen: {default_clamp!r})"
                           if default_clamp else ""))
    g.add_argument("--interface-nodes",
                   help="Craig–Bampton: interface node labels or set name (static "
                        "constraint modes)")
    g.add_argument("--attach-nodes",
                   help="Craig–Bampton: nodes fixed to the body frame (attached frame); "
                        "omit for mean axes")
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
    """Static correction (first: it adds modes), then stiffening and stress modes."""
    if args.static_correction:
        nodes, _, comps = args.static_correction.partition(":")
        data = data.with_static_correction(
            fe, parse_nodes(nodes, "--static-correction"), comps or "123")
    if stiffening:
        data = data.with_stiffening(fe)
    if args.stress:
        data = data.with_stress(fe)
    return data


def write_and_report(data, args: argparse.Namespace) -> int:
    """Write the reduced data to ``args.output`` and print the summary (or JSON)."""
    from .modes_cmd import format_summary

    path = write_modal(data, args.output)
    if args.json:
        emit_json({**data.summary(), "output": str(path)})
    else:
        print(format_summary(data, str(path)))
        print(f"\nwritten {path}")
    return 0
