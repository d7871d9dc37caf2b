"""Print the modal summary of a modal data file: frequencies, modal masses, total mass,
centre of mass, inertia tensor, reference frame, damping and mode bookkeeping."""

from __future__ import annotations

import argparse

import numpy as np

from ..modal import read_modal
from ..modal.provenance import format_provenance, provenance
from ._common import emit_json

HELP = "show the frequency table and mass properties of a modal data file"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="modal data file (.fmd.h5, .h5, .vtu, .fem, ...)")
    p.add_argument("--format", help="file format name when the extension does not tell")
    p.add_argument("--units", help="unit system of the file when it does not store one "
                                   "(e.g. mm-t-s); converted to SI")
    p.add_argument("--geometry", help="Nastran bulk data (.bdf) of an .op2 file's modes")
    p.add_argument("--mass", metavar="FILE.op4:NAME",
                   help="Nastran mass matrix for an .op2 file's inertia invariants "
                        "(default: lumped from the bulk data's elements)")
    p.add_argument("--matrices", metavar="FILE.op4",
                   help="OP4 matrices (KAA, MAA) of a Nastran superelement punch (.pch), or "
                        "of the superelement whose USET table an .op2 file holds; default "
                        "for a punch: its stem .op4 beside it, or its DMIG entries")
    p.add_argument("--frame", choices=["mean-axis", "attached"],
                   help="reference frame of a Nastran superelement (attached: to every "
                        "boundary grid)")
    p.add_argument("--modes", type=int, help="show only the first N modes (truncate)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--animate", type=int, metavar="N",
                   help="render mode N as a movie (with -o mode.gif|.mp4) or as its image "
                        "at the peak of the period (-o mode.png), titled with the mode's "
                        "number, frequency and deformation scale")
    p.add_argument("-o", "--output", help="file for --animate (.gif, .mp4 or .png)")
    p.add_argument("--frames", type=int, default=24, help="frames per period (--animate)")
    p.add_argument("--fps", type=float, default=12.0, help="frames per second (--animate)")
    p.add_argument("--scale", type=float, help="deformation scale (--animate; default: "
                                              "largest displacement = 10 %% of the body)")
    p.add_argument("--camera", default="iso",
                   help="view (--animate): iso (default), xy, xz, yz or "
                        "'px,py,pz;fx,fy,fz;ux,uy,uz' (body frame)")
    p.add_argument("--size", default="800x600", help="image size WIDTHxHEIGHT (--animate)")


def run(args: argparse.Namespace) -> int:
    options = {}
    if args.units:
        options["units"] = args.units
    for key in ("geometry", "mass", "matrices"):  # the Nastran OP2 / superelement options
        if getattr(args, key):
            options[key] = getattr(args, key)
    if args.frame:
        options["reference_frame"] = args.frame
    try:
        data = read_modal(args.file, format=args.format, **options)
    except TypeError as exc:  # an option this file's format does not take
        from ..errors import ValidationError

        raise ValidationError(f"{args.file}: {sorted(options)} do not apply to this "
                              f"format ({exc})") from None
    if args.modes is not None:
        data = data.truncate(args.modes)
    if args.animate is not None:
        from ..errors import ValidationError
        from ..post.mode_movie import animate_mode

        if not args.output:
            raise ValidationError("--animate needs an output file: -o mode.gif (or .mp4, "
                                  ".png)")
        import sys

        from ._common import ProgressBar
        from .animate_cmd import _size

        bar = ProgressBar(not args.json and sys.stderr.isatty())
        path = animate_mode(data, args.animate, args.output, frames=args.frames,
                            fps=args.fps, scale=args.scale, camera=args.camera,
                            window_size=_size(args.size),
                            progress=lambda d, n: bar(d, n, f"frame {d}/{n}"))
        if args.json:
            emit_json({"file": args.file, "mode": args.animate, "output": str(path),
                       "frequency_hz": float(data.frequencies[args.animate - 1])})
        else:
            print(f"flexmbs modes: mode {args.animate} of {args.file} "
                  f"({data.frequencies[args.animate - 1]:.5g} Hz) written to {path}")
        return 0
    summary = data.summary()
    summary["file"] = args.file
    summary["provenance"] = provenance(data)
    if args.json:
        emit_json(summary)
        return 0
    print(format_summary(data, args.file))
    return 0


def format_summary(data, title: str) -> str:
    """The human-readable table printed by ``flexmbs modes``."""
    s = data.summary()
    lines = [f"flexmbs modal data: {title}",
             f"  nodes {s['n_nodes']}, modes {s['n_modes']}, source units {s['units_source']}"
             f" (shown in SI)",
             f"  reference frame: {s['reference_frame']}"
             + (f" (attached to node set {s['attach_set']!r})" if s["attach_set"] else
                f" (max rigid-body content {max(s['rigid_content'] or [0]):.2e})"),
             f"  mass description: {s['mass_description']}"
             f" ({'isotropic' if s['isotropic_mass'] else 'general'} invariant set)"
             f"; rotational shapes: {'yes' if s['rotational_shapes'] else 'no'}",
             f"  damping: {s['damping']}",
             "  geometric stiffening: " + (f"{len(s['stiffening'])} unit load cases"
                                           if s["stiffening"] else "none"),
             "  modal derivatives: " + (f"{s['modal_derivatives']} (mode pairs; "
                                        f"nonlinear = true bodies)"
                                        if s["modal_derivatives"] else "none"),
             "",
             "  mode   kind         f [Hz]        modal mass      modal stiffness  constr."]
    freq = data.coordinate_frequencies
    for j in range(data.n_modes):
        lines.append(f"  {j + 1:4d}   {s['mode_kinds'][j]:<10s} {freq[j]:12.5g}  "
                     f"{s['modal_mass'][j]:14.6g}  {s['modal_stiffness'][j]:16.6g}  "
                     f"{s['constraint_fraction'][j]:6.2f}")
    if not s["diagonal"]:
        lines.append("  (M_ff/K_ff are coupled: the frequencies above are per coordinate; "
                     "eigenfrequencies: "
                     + ", ".join(f"{f:.5g}" for f in s["frequencies_hz"]) + " Hz)")
    c = np.array(s["center_of_mass_m"])
    inertia = np.array(s["inertia_cm_kgm2"])
    lines += ["",
              f"  total mass      {s['total_mass_kg']:.6g} kg",
              f"  centre of mass  [{c[0]:.6g}, {c[1]:.6g}, {c[2]:.6g}] m (body frame)",
              "  inertia about the centre of mass [kg m^2]:"]
    lines += ["    [" + ", ".join(f"{v:12.6g}" for v in row) + "]" for row in inertia]
    if s["mass_mismatch"] > 1e-6:
        lines.append(f"  M_ff vs phi^T M phi of the mass description: "
                     f"{100 * s['mass_mismatch']:.3g} % (rotary inertia not in the invariants)")
    if s["node_sets"]:
        lines.append("  node sets: " + ", ".join(f"{k} ({v})" for k, v in s["node_sets"].items()))
    lines += ["", *format_provenance(provenance(data))]
    return "\n".join(lines)
