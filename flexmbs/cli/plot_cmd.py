"""Plot a results file to PNG or SVG: energy balance, modal coordinates, tip deflection,
constraint violation, step size and Newton iterations, chosen coordinates, sensors by name
(``flexmbs plot RESULT sensor NAME...``); --fft plots the amplitude spectrum of one
coordinate instead."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ValidationError
from ._common import emit_json

HELP = "plot histories of a results file (PNG/SVG)"
KINDS = ("energy", "modal", "tip", "constraints", "steps", "coordinates", "sensor")


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results file (.res.h5)")
    p.add_argument("what", choices=KINDS, help="what to plot")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="sensor names (with 'sensor')")
    p.add_argument("-o", "--output", required=True, help="plot file (.png or .svg)")
    p.add_argument("--body", help="flexible body (modal, tip; default: the only one)")
    p.add_argument("--coords", help="comma-separated coordinate names (coordinates, fft)")
    p.add_argument("--fft", action="store_true",
                   help="amplitude spectrum of the (single) coordinate in --coords")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def _body(result, name, path=None):
    flexible = [k for k, v in result.bodies.items() if "phi" in v]
    if not flexible:
        where = f"{Path(path).name}: " if path is not None else ""
        raise ValidationError(f"{where}the results hold no flexible body, so there are no "
                              f"modal coordinates to plot (bodies: {sorted(result.bodies)})")
    if name is None:
        if len(flexible) != 1:
            raise ValidationError(f"name the flexible body with --body (flexible bodies: "
                                  f"{flexible})")
        return flexible[0]
    if name not in flexible:
        raise ValidationError(f"--body {name!r} is not a flexible body of the results "
                              f"({flexible})")
    return name


def run(args: argparse.Namespace) -> int:
    from ..post import plots
    from ..results import SimulationResult

    result = SimulationResult.load(args.results)
    coords = [c.strip() for c in (args.coords or "").split(",") if c.strip()]
    if args.names and args.what != "sensor":
        raise ValidationError(f"names after {args.what!r} apply to 'sensor' only; got "
                              f"{args.names}")
    if args.what == "sensor" and not args.names:
        raise ValidationError("'sensor' needs sensor names, e.g. flexmbs plot RESULT sensor "
                              f"theta; sensors: {sorted(result.sensors) or 'none'}")
    if args.fft and args.what != "coordinates":
        raise ValidationError("--fft applies to 'coordinates' (with one name in --coords)")
    if args.what == "coordinates" and not coords:
        raise ValidationError("'coordinates' needs --coords, e.g. --coords link1.x,beam.xi1")
    if args.fft:
        if len(coords) != 1 or coords[0] not in result.coord_names:
            raise ValidationError("--fft needs exactly one known coordinate in --coords, "
                                  f"got {args.coords!r}")
        fig = plots.spectrum(result.t, result.coordinate(coords[0]), label=coords[0])
    elif args.what == "energy":
        fig = plots.energy(result)
    elif args.what == "modal":
        fig = plots.modal(result, _body(result, args.body, args.results))
    elif args.what == "tip":
        fig = plots.tip_deflection(result, _body(result, args.body, args.results))
    elif args.what == "constraints":
        fig = plots.constraint_violation(result)
    elif args.what == "steps":
        fig = plots.step_size(result)
    elif args.what == "sensor":
        fig = plots.sensors(result, args.names)
    else:
        fig = plots.coordinates(result, coords)
    path = plots.save_figure(fig, args.output)
    labels = [ax.get_ylabel() for ax in fig.axes]
    if args.json:
        emit_json({"results": args.results, "output": str(path), "axes": labels})
    else:
        print(f"flexmbs plot: {args.what} written to {path} ({'; '.join(labels)})")
    return 0
